//! The planning page: the backlog (tickets in no open sprint, todo and backlog) beside a
//! planned or active sprint, with its capacity meter (red past capacity). A ticket goes into
//! the sprint by its "Add" button (a form: it works without script) or by dragging it onto
//! the sprint; "Propose" shows what `jility_plan_sprint` would take, and one button adds it
//! all. Every change runs through the operations table as the person.

use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State};
use axum::http::HeaderMap;
use axum::response::Response;
use jility_core::model::TicketSummary;
use jility_core::ops;
use jility_core::params::{
    AddToSprint, ListSprints, ListTickets, RemoveFromSprint, SprintName, StatusName,
};
use jility_core::tracker::{Sprint, SprintPlan, TicketPage};
use maud::{Markup, html};

use super::parts::ticket_href;
use super::sprints::{capacity, sprint_href};
use super::{answer_form, back_to, fields, form, missing, respond, run, viewer, write};
use crate::errors::WebError;
use crate::layout::{self, Section};
use crate::site::{Site, Viewer};

/// Backlog tickets the page lists.
const BACKLOG_SHOWN: i64 = 100;
/// Tickets of the sprint it lists.
const SPRINT_SHOWN: i64 = 200;

/// `/w/{workspace}/plan?sprint=…`.
fn plan_href(viewer: &Viewer, sprint: i64) -> String {
    format!("{}/plan?sprint={sprint}", layout::base(&viewer.workspace))
}

fn query(raw: Option<&str>, name: &str) -> Option<String> {
    form_urlencoded::parse(raw.unwrap_or_default().as_bytes())
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.trim().to_string())
        .filter(|v| !v.is_empty())
}

/// `GET /w/{workspace}/plan`: the sprint `?sprint=` names, else the first planned one, else
/// the active one; `&propose=1` adds the planner's proposal.
pub async fn page<S: Site>(
    State(site): State<S>,
    Path(workspace): Path<String>,
    RawQuery(raw): RawQuery,
    headers: HeaderMap,
) -> Response {
    let viewer = match viewer(&site, &headers, &workspace).await {
        Ok(v) => v,
        Err(refusal) => return refusal,
    };
    let result = async {
        let sprints = run::<S, ops::ListSprints>(
            &site,
            &viewer,
            ListSprints {
                state: vec!["planned".into(), "active".into()],
                limit: Some(200),
                cursor: None,
            },
        )
        .await?
        .data
        .sprints;
        let wanted = query(raw.as_deref(), "sprint");
        let chosen = match &wanted {
            Some(name) => Some(
                run::<S, ops::SprintStats>(
                    &site,
                    &viewer,
                    SprintName {
                        sprint: name.clone(),
                    },
                )
                .await?
                .sprint,
            ),
            None => sprints
                .iter()
                .find(|s| s.state == "planned")
                .or_else(|| sprints.first())
                .cloned(),
        };
        let Some(sprint) = chosen else {
            return Ok((sprints, None));
        };
        let backlog = run::<S, ops::ListTickets>(
            &site,
            &viewer,
            ListTickets {
                status: vec![StatusName("todo".into()), StatusName("backlog".into())],
                sprint: Some("none".into()),
                limit: Some(BACKLOG_SHOWN),
                ..Default::default()
            },
        )
        .await?
        .data;
        let members = run::<S, ops::ListTickets>(
            &site,
            &viewer,
            ListTickets {
                sprint: Some(sprint.number.to_string()),
                limit: Some(SPRINT_SHOWN),
                ..Default::default()
            },
        )
        .await?
        .data;
        let proposal = if query(raw.as_deref(), "propose").is_some() {
            Some(
                run::<S, ops::PlanSprint>(
                    &site,
                    &viewer,
                    SprintName {
                        sprint: sprint.number.to_string(),
                    },
                )
                .await?,
            )
        } else {
            None
        };
        Ok::<_, WebError>((sprints, Some((sprint, backlog, members, proposal))))
    }
    .await;
    let main = match result {
        Ok((sprints, chosen)) => render(&viewer, &sprints, chosen.as_ref()),
        Err(err) => return err.answer(&headers),
    };
    respond(&site, &viewer, &headers, Section::Plan, "Planning", main)
}

/// A sprint form's sender and fields, where it goes back to, and its tickets (`ticket`, one
/// or several) — or the answer that refuses it.
async fn sprint_form<S: Site>(
    site: &S,
    headers: &HeaderMap,
    workspace: &str,
    body: &[u8],
) -> Result<(Viewer, String, Result<Vec<String>, WebError>), Response> {
    let (viewer, pairs) = form(site, headers, workspace, body).await?;
    let back = back_to(
        &viewer,
        super::field(&pairs, "back"),
        format!("{}/plan", layout::base(&viewer.workspace)),
    );
    let tickets: Vec<String> = fields(&pairs, "ticket")
        .into_iter()
        .map(str::to_string)
        .collect();
    let tickets = if tickets.is_empty() {
        Err(missing("ticket"))
    } else {
        Ok(tickets)
    };
    Ok((viewer, back, tickets))
}

/// `POST /w/{workspace}/sprints/{sprint}/tickets`: `ticket` (one or several).
pub async fn add<S: Site>(
    State(site): State<S>,
    Path((workspace, sprint)): Path<(String, String)>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let (viewer, back, tickets) = match sprint_form(&site, &headers, &workspace, &body).await {
        Ok(v) => v,
        Err(refusal) => return refusal,
    };
    let result = async {
        let params = AddToSprint {
            sprint,
            tickets: tickets?,
            move_tickets: false,
        };
        let out = write::<S, ops::AddToSprint>(&site, &viewer, params).await?;
        Ok(serde_json::json!({
            "added": out.added.iter().map(|t| t.number.clone()).collect::<Vec<_>>(),
            "points": out.sprint.points,
            "over_capacity": out.over_capacity,
        }))
    }
    .await;
    answer_form(&headers, result, back)
}

/// `POST /w/{workspace}/sprints/{sprint}/remove`: `ticket` (one or several).
pub async fn remove<S: Site>(
    State(site): State<S>,
    Path((workspace, sprint)): Path<(String, String)>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let (viewer, back, tickets) = match sprint_form(&site, &headers, &workspace, &body).await {
        Ok(v) => v,
        Err(refusal) => return refusal,
    };
    let result = async {
        let params = RemoveFromSprint {
            sprint,
            tickets: tickets?,
        };
        let out = write::<S, ops::RemoveFromSprint>(&site, &viewer, params).await?;
        Ok(serde_json::json!({
            "removed": out.removed.iter().map(|t| t.number.clone()).collect::<Vec<_>>(),
        }))
    }
    .await;
    answer_form(&headers, result, back)
}

type Chosen = (Sprint, TicketPage, TicketPage, Option<SprintPlan>);

fn render(viewer: &Viewer, sprints: &[Sprint], chosen: Option<&Chosen>) -> Markup {
    let base = layout::base(&viewer.workspace);
    html! {
        main id="main" class="plan-page" data-page="plan" {
            h1 { "Planning" }
            @if sprints.len() > 1 {
                nav class="sprint-choice" aria-label="Sprints to plan" {
                    @for s in sprints {
                        a href=(plan_href(viewer, s.number))
                            aria-current=[chosen.filter(|c| c.0.number == s.number).map(|_| "page")] {
                            (s.name) " (" (s.state) ")"
                        }
                    }
                }
            }
            div id="notice" {}
            @match chosen {
                None => {
                    p class="empty" {
                        "No planned or active sprint. Make one with " code { "jility sprint create" }
                        " or the tool jility_create_sprint, then plan it here."
                    }
                }
                Some((sprint, backlog, members, proposal)) => {
                    div class="plan" {
                        section class="plan-backlog" aria-labelledby="backlog-heading" {
                            h2 id="backlog-heading" { "Backlog (" (backlog.tickets.len()) ")" }
                            @if backlog.tickets.is_empty() {
                                p class="empty" { "Nothing waits in the backlog." }
                            }
                            ul class="plan-list" {
                                @for t in &backlog.tickets {
                                    (card(viewer, sprint, t, true))
                                }
                            }
                        }
                        section class="plan-sprint plan-drop" aria-labelledby="sprint-heading"
                            data-add-url=(format!("{base}/sprints/{}/tickets", sprint.number)) {
                            h2 id="sprint-heading" {
                                a href=(sprint_href(viewer, sprint.number)) { (sprint.name) }
                                " (" (sprint.state) ")"
                            }
                            p data-meter { (capacity(sprint)) }
                            @if viewer.can_write {
                                p class="help" { "Drag a ticket here, or use its Add button." }
                            }
                            ul class="plan-list" {
                                @for t in &members.tickets {
                                    (card(viewer, sprint, t, false))
                                }
                            }
                            @if viewer.can_write {
                                @match proposal {
                                    None => {
                                        a class="button" href=(format!("{}&propose=1", plan_href(viewer, sprint.number))) data-propose {
                                            "Propose tickets up to the capacity"
                                        }
                                    }
                                    Some(plan) => { (proposal_markup(viewer, sprint, plan)) }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

fn card(viewer: &Viewer, sprint: &Sprint, t: &TicketSummary, in_backlog: bool) -> Markup {
    let draggable = if in_backlog && viewer.can_write {
        "true"
    } else {
        "false"
    };
    let (action, label) = if in_backlog {
        ("tickets", format!("Add {} to {}", t.number, sprint.name))
    } else {
        (
            "remove",
            format!("Remove {} from {}", t.number, sprint.name),
        )
    };
    html! {
        li class="plan-card" draggable=(draggable) data-ticket=(t.number) data-points=[t.story_points] {
            a href=(ticket_href(viewer, &t.number)) { span class="key" { (t.number) } " " (t.title) }
            " " span class="muted" {
                (t.status.label())
                @if let Some(p) = t.story_points { " · " (p) " pts" } @else { " · not estimated" }
            }
            @if viewer.can_write {
                form method="post" action=(format!("{}/sprints/{}/{action}", layout::base(&viewer.workspace), sprint.number)) {
                    input type="hidden" name="_csrf" value=(viewer.csrf);
                    input type="hidden" name="ticket" value=(t.number);
                    input type="hidden" name="back" value=(plan_href(viewer, sprint.number));
                    button type="submit" aria-label=(label) { @if in_backlog { "Add" } @else { "Remove" } }
                }
            }
        }
    }
}

fn proposal_markup(viewer: &Viewer, sprint: &Sprint, plan: &SprintPlan) -> Markup {
    html! {
        section class="proposal" aria-labelledby="proposal-heading" data-proposal {
            h3 id="proposal-heading" {
                "Proposal: " (plan.proposed_points) " of " (plan.capacity_points.saturating_sub(plan.planned_points))
                " points (capacity from the " (plan.capacity_source) ")"
            }
            @if plan.proposed.is_empty() {
                p class="empty" { "Nothing fits." }
            } @else {
                ol {
                    @for p in &plan.proposed {
                        li data-ticket=(p.number) { span class="key" { (p.number) } " " (p.title) " · " (p.story_points) " pts — " (p.reason) }
                    }
                }
                form method="post" action=(format!("{}/sprints/{}/tickets", layout::base(&viewer.workspace), sprint.number)) {
                    input type="hidden" name="_csrf" value=(viewer.csrf);
                    @for t in &plan.tickets { input type="hidden" name="ticket" value=(t); }
                    input type="hidden" name="back" value=(plan_href(viewer, sprint.number));
                    button type="submit" data-apply { "Add these " (plan.tickets.len()) " tickets" }
                }
            }
            @if plan.left_out_total > 0 {
                details {
                    summary { "Left out (" (plan.left_out_label()) ")" }
                    ul {
                        @for l in &plan.left_out {
                            li { span class="key" { (l.number) } " " (l.title) " — " (l.reason) }
                        }
                    }
                    @if let Some(rest) = plan.left_out_rest() { p class="help" { (rest) } }
                }
            }
        }
    }
}
