//! Sprints: their history (every sprint with its dates, points and state, and the velocity
//! of the completed ones as a chart with its table) and a sprint's page — its figures
//! (committed, completed, added, removed, remaining, days left, the forecast), its capacity
//! meter, its burndown beside the ideal line and its tickets by status. Read through the
//! operations table (`jility_list_sprints`, `jility_sprint_stats`, `jility_list_tickets`) and
//! live like every page.

use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::Response;
use jility_core::model::Status;
use jility_core::ops;
use jility_core::params::{ListSprints, ListTickets, SprintName};
use jility_core::render::points;
use jility_core::tracker::{Sprint, SprintList, SprintStats, TicketPage};
use maud::{Markup, html};

use super::charts::{self, Day};
use super::parts::ticket_href;
use super::{respond, run, viewer};
use crate::layout::{self, Section};
use crate::site::{Site, Viewer};

/// Sprints the history shows (a project rarely has more; the CLI pages through any number).
const SPRINTS_SHOWN: i64 = 200;
/// Completed sprints the velocity chart shows, newest last.
const VELOCITY_BARS: usize = 12;
/// Tickets a sprint's page lists.
const TICKETS_SHOWN: i64 = 200;

/// `/w/{workspace}/sprints/{number}`.
pub fn sprint_href(viewer: &Viewer, number: i64) -> String {
    format!("{}/sprints/{number}", layout::base(&viewer.workspace))
}

/// `GET /w/{workspace}/sprints`.
pub async fn list<S: Site>(
    State(site): State<S>,
    Path(workspace): Path<String>,
    headers: HeaderMap,
) -> Response {
    let viewer = match viewer(&site, &headers, &workspace).await {
        Ok(v) => v,
        Err(refusal) => return refusal,
    };
    let paged = match run::<S, ops::ListSprints>(
        &site,
        &viewer,
        ListSprints {
            state: Vec::new(),
            limit: Some(SPRINTS_SHOWN),
            cursor: None,
        },
    )
    .await
    {
        Ok(paged) => paged,
        Err(err) => return err.answer(&headers),
    };
    let main = render_list(&viewer, &paged.data, paged.page.total);
    respond(&site, &viewer, &headers, Section::Sprints, "Sprints", main)
}

/// `GET /w/{workspace}/sprints/{number}` (the sprint's number or name).
pub async fn page<S: Site>(
    State(site): State<S>,
    Path((workspace, sprint)): Path<(String, String)>,
    headers: HeaderMap,
) -> Response {
    let viewer = match viewer(&site, &headers, &workspace).await {
        Ok(v) => v,
        Err(refusal) => return refusal,
    };
    let stats = match run::<S, ops::SprintStats>(&site, &viewer, SprintName { sprint }).await {
        Ok(stats) => stats,
        Err(err) => return err.answer(&headers),
    };
    let tickets = match run::<S, ops::ListTickets>(
        &site,
        &viewer,
        ListTickets {
            sprint: Some(stats.sprint.number.to_string()),
            limit: Some(TICKETS_SHOWN),
            ..Default::default()
        },
    )
    .await
    {
        Ok(paged) => paged.data,
        Err(err) => return err.answer(&headers),
    };
    let title = stats.sprint.name.clone();
    let main = render_sprint(&viewer, &stats, &tickets);
    respond(&site, &viewer, &headers, Section::Sprints, &title, main)
}

fn state(s: &Sprint) -> Markup {
    html! { span class=(format!("sprint-state st-{}", s.state)) { (s.state) } }
}

/// Points against capacity: a `<meter>` named by the text beside it, marked over capacity.
pub(super) fn capacity(s: &Sprint) -> Markup {
    match s.capacity_points {
        None => html! { "no capacity set (planning uses the velocity)" },
        Some(c) => {
            let over = s.points > c.max(0) as u64;
            let id = format!("capacity-{}", s.number);
            html! {
                span class=(if over { "capacity over" } else { "capacity" }) data-over=(over) {
                    meter id=(id) min="0" max=(c) high=(c) value=(s.points.min(c.max(0) as u64 * 2))
                        aria-describedby=(format!("{id}-text")) {}
                    span id=(format!("{id}-text")) { (s.points) " of " (c) " points" @if over { " — over capacity" } }
                }
            }
        }
    }
}

fn render_list(viewer: &Viewer, list: &SprintList, total: u64) -> Markup {
    let mut done: Vec<&Sprint> = list
        .sprints
        .iter()
        .filter(|s| s.state == "completed")
        .collect();
    done.sort_by(|a, b| (&a.completed_at, a.number).cmp(&(&b.completed_at, b.number)));
    let bars: Vec<(String, i64)> = done
        .iter()
        .rev()
        .take(VELOCITY_BARS)
        .rev()
        .map(|s| (s.name.clone(), s.completed_points.unwrap_or(0)))
        .collect();
    html! {
        main id="main" class="sprints-page" data-page="sprints" {
            h1 { "Sprints" }
            p class="count" data-total=(total) { (total) @if total == 1 { " sprint" } @else { " sprints" } }
            @if list.sprints.is_empty() {
                p class="empty" {
                    "No sprints yet. Make one with " code { "jility sprint create" }
                    " or the tool jility_create_sprint."
                }
            } @else {
                div class="table-scroll" {
                    table class="tickets sprints" {
                        caption class="visually-hidden" { "Sprints, by number" }
                        thead { tr {
                            th scope="col" { "#" }
                            th scope="col" { "Sprint" }
                            th scope="col" { "State" }
                            th scope="col" { "Dates" }
                            th scope="col" { "Tickets" }
                            th scope="col" { "Points done" }
                            th scope="col" { "Capacity" }
                        } }
                        tbody {
                            @for s in &list.sprints {
                                tr data-sprint=(s.number) {
                                    td { (s.number) }
                                    td { a href=(sprint_href(viewer, s.number)) { (s.name) } }
                                    td { (state(s)) }
                                    td { (s.starts_on) " → " (s.ends_on) }
                                    td { (s.tickets) }
                                    td data-points { (s.points_done) " of " (s.points) }
                                    td { @if let Some(c) = s.capacity_points { (c) } }
                                }
                            }
                        }
                    }
                }
            }
            section aria-labelledby="velocity-heading" {
                h2 id="velocity-heading" { "Velocity" }
                @if bars.is_empty() {
                    p class="empty" { "No completed sprint yet." }
                } @else {
                    (charts::velocity(&bars, "Points completed by each sprint, oldest first."))
                }
            }
        }
    }
}

fn render_sprint(viewer: &Viewer, st: &SprintStats, tickets: &TicketPage) -> Markup {
    let s = &st.sprint;
    let days: Vec<Day<'_>> = st
        .burndown
        .iter()
        .map(|d| Day {
            date: &d.date,
            remaining: d.remaining,
            ideal: d.ideal,
        })
        .collect();
    // The chart's width is the whole sprint: the days so far and the days left.
    let length = days.len() + usize::try_from(st.days_left).unwrap_or(0);
    html! {
        main id="main" class="sprint-page" data-page="sprint" data-sprint=(s.number) {
            p class="crumbs" { a href=(format!("{}/sprints", layout::base(&viewer.workspace))) { "Sprints" } }
            h1 { (s.name) " " span class="muted" { "#" (s.number) } }
            @if let Some(goal) = &s.goal { p class="goal" { (goal) } }
            p { a href=(format!("{}/board?sprint={}", layout::base(&viewer.workspace), s.number)) data-sprint-board { "The sprint's board" } }
            dl class="facts" {
                dt { "State" } dd { (state(s)) }
                dt { "Dates" } dd { (s.starts_on) " → " (s.ends_on) }
                dt { "Capacity" } dd data-capacity { (capacity(s)) }
                dt { "Committed" } dd data-committed { (points(st.committed_points as f64)) }
                dt { "Completed" } dd data-completed { (points(st.completed_points as f64)) }
                dt { "Added after the start" } dd data-added { (points(st.added_points as f64)) }
                dt { "Removed after the start" } dd data-removed { (points(st.removed_points as f64)) }
                dt { "Remaining" } dd data-remaining { (points(st.remaining_points as f64)) }
                @if s.state != "completed" { dt { "Days left" } dd data-days-left { (st.days_left) } }
                @if let Some(f) = &st.forecast {
                    dt { "Forecast" }
                    dd data-forecast {
                        @match &f.ends_on {
                            Some(end) => { "done by " (end) " at " (points(f.pace)) " a day" },
                            None => { "no pace yet" },
                        }
                        @if f.on_track { " — on track" } @else { " — behind" }
                    }
                }
                dt { "Velocity" }
                dd {
                    @match st.velocity.mean {
                        Some(mean) => { (mean) " points a sprint (the last " (st.velocity.sprints.len()) ")" },
                        None => { "no completed sprint yet" },
                    }
                }
            }
            section aria-labelledby="burndown-heading" {
                h2 id="burndown-heading" { "Burndown" }
                @if days.is_empty() {
                    p class="empty" { "The burndown starts with the sprint." }
                } @else {
                    (charts::burndown(&days, length, &s.ends_on, "Remaining points at the end of each day."))
                }
            }
            section aria-labelledby="tickets-heading" {
                h2 id="tickets-heading" { "Tickets (" (tickets.tickets.len()) ")" }
                @if tickets.tickets.is_empty() {
                    p class="empty" { "No tickets in this sprint." }
                }
                @for status in Status::GROUP_ORDER {
                    @let group: Vec<_> = tickets.tickets.iter().filter(|t| t.status == status).collect();
                    @if !group.is_empty() {
                        h3 { (status.label()) " (" (group.len()) ")" }
                        ul class="epic-tickets" {
                            @for t in group {
                                li data-ticket=(t.number) {
                                    a href=(ticket_href(viewer, &t.number)) { span class="key" { (t.number) } " " (t.title) }
                                    @if let Some(p) = t.story_points { " · " (p) " pts" }
                                }
                            }
                        }
                    }
                }
                @if !st.carry_over.is_empty() && s.state == "completed" {
                    p data-carried { "Carried over: " (st.carry_over.join(", ")) " (" (st.carry_over_points) " points)" }
                }
            }
        }
    }
}
