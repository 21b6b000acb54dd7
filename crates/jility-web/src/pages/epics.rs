//! Epics: the list, each epic with its progress (a bar with its numbers beside it, readable
//! without the bar), and an epic's page — its progress, the critical path through its
//! unfinished tickets with what each step waits on, and its tickets by status. Both read
//! through the operations table (`jility_list_epics`, `jility_get_epic`) and follow the
//! workspace live, as every page does.

use axum::extract::{Path, RawQuery, State};
use axum::http::HeaderMap;
use axum::response::Response;
use jility_core::model::Status;
use jility_core::ops;
use jility_core::params::{GetEpic, ListEpics};
use jility_core::tracker::{EpicDetail, EpicList, EpicProgress};
use maud::{Markup, html};
use mcp_common_core::Page;

use super::parts::ticket_href;
use super::{respond, run, viewer, when};
use crate::layout::{self, Section};
use crate::site::{Site, Viewer};

/// Epics a page of the list shows.
const EPICS_PAGE: i64 = 50;
/// Tickets a page of an epic shows.
const TICKETS_PAGE: i64 = 100;

/// The `cursor` of a page's query string, if any.
fn cursor_of(raw: Option<&str>) -> Option<String> {
    form_urlencoded::parse(raw.unwrap_or_default().as_bytes())
        .find(|(k, _)| k == "cursor")
        .map(|(_, v)| v.into_owned())
        .filter(|v| !v.is_empty())
}

/// `GET /w/{workspace}/epics`.
pub async fn list<S: Site>(
    State(site): State<S>,
    Path(workspace): Path<String>,
    RawQuery(raw): RawQuery,
    headers: HeaderMap,
) -> Response {
    let viewer = match viewer(&site, &headers, &workspace).await {
        Ok(v) => v,
        Err(refusal) => return refusal,
    };
    let cursor = cursor_of(raw.as_deref());
    let paged = match run::<S, ops::ListEpics>(
        &site,
        &viewer,
        ListEpics {
            status: Vec::new(),
            limit: Some(EPICS_PAGE),
            cursor: cursor.clone(),
        },
    )
    .await
    {
        Ok(paged) => paged,
        Err(err) => return err.answer(&headers),
    };
    let main = render_list(&viewer, &paged.data, &paged.page, cursor.is_some());
    respond(&site, &viewer, &headers, Section::Epics, "Epics", main)
}

/// `GET /w/{workspace}/epics/{number}`.
pub async fn page<S: Site>(
    State(site): State<S>,
    Path((workspace, number)): Path<(String, String)>,
    RawQuery(raw): RawQuery,
    headers: HeaderMap,
) -> Response {
    let viewer = match viewer(&site, &headers, &workspace).await {
        Ok(v) => v,
        Err(refusal) => return refusal,
    };
    let cursor = cursor_of(raw.as_deref());
    let paged = match run::<S, ops::GetEpic>(
        &site,
        &viewer,
        GetEpic {
            epic_id: number,
            limit: Some(TICKETS_PAGE),
            cursor: cursor.clone(),
        },
    )
    .await
    {
        Ok(paged) => paged,
        Err(err) => return err.answer(&headers),
    };
    let title = format!("{} {}", paged.data.epic.number, paged.data.epic.title);
    let main = render_epic(&viewer, &paged.data, &paged.page, cursor.is_some());
    respond(&site, &viewer, &headers, Section::Epics, &title, main)
}

/// A progress bar with its numbers: the `<progress>` element is named by the text beside it.
fn bar(id: &str, progress: &EpicProgress) -> Markup {
    let label = format!("{id}-progress");
    html! {
        span class="progress" {
            progress id=(label) max="100" value=(progress.percent_done_points)
                aria-describedby=(format!("{label}-text")) { (progress.percent_done_points) "%" }
            span id=(format!("{label}-text")) class="progress-text" {
                (progress.percent_done_points) "% of points"
            }
        }
    }
}

fn render_list(viewer: &Viewer, list: &EpicList, page: &Page, paged_on: bool) -> Markup {
    let base = layout::base(&viewer.workspace);
    html! {
        main id="main" class="epics-page" data-page="epics" {
            h1 { "Epics" }
            p class="count" data-total=(page.total) {
                (page.total) @if page.total == 1 { " epic" } @else { " epics" }
                @if paged_on { " · " a href=(format!("{base}/epics")) { "First page" } }
            }
            @if list.epics.is_empty() {
                p class="empty" {
                    "No epics yet. An epic is a ticket of kind epic"
                    @if viewer.can_write {
                        ": make one from " a href=(format!("{base}/new")) { "New ticket" }
                        " or with " code { "jility ticket create --kind epic" }
                    }
                    "."
                }
            } @else {
                div class="table-scroll" {
                    table class="tickets epics" {
                        caption class="visually-hidden" { "Epics and their progress" }
                        thead { tr {
                            th scope="col" { "Epic" }
                            th scope="col" { "Title" }
                            th scope="col" { "Status" }
                            th scope="col" { "Progress" }
                            th scope="col" { "Points done" }
                            th scope="col" { "Tickets done" }
                            th scope="col" { "Blocked" }
                            th scope="col" { "Last activity" }
                        } }
                        tbody {
                            @for e in &list.epics {
                                tr data-epic=(e.number) {
                                    td class="key" { a href=(epic_href(viewer, &e.number)) { (e.number) } }
                                    td { a href=(epic_href(viewer, &e.number)) { (e.title) } }
                                    td { span class=(format!("status s-{}", e.status.as_str())) { (e.status.label()) } }
                                    td { (bar(&e.number, &e.progress)) }
                                    td data-points { (e.progress.points_done) " of " (e.progress.points_total) }
                                    td data-count { (e.progress.tickets_done) " of " (e.progress.tickets) }
                                    td data-blocked { (e.progress.blocked) }
                                    td { @if let Some(at) = &e.progress.last_activity { (when(at)) } }
                                }
                            }
                        }
                    }
                }
            }
            @if let Some(next) = &page.next_cursor {
                nav class="pager" aria-label="Pages" {
                    a class="next" rel="next" href=(format!("{base}/epics?cursor={}", layout::segment(next))) { "Next page" }
                }
            }
        }
    }
}

/// `/w/{workspace}/epics/{number}`.
pub fn epic_href(viewer: &Viewer, number: &str) -> String {
    format!(
        "{}/epics/{}",
        layout::base(&viewer.workspace),
        layout::segment(number)
    )
}

fn render_epic(viewer: &Viewer, d: &EpicDetail, page: &Page, paged_on: bool) -> Markup {
    let e = &d.epic;
    let g = &d.progress;
    let here = epic_href(viewer, &e.number);
    html! {
        main id="main" class="epic-page" data-page="epic" data-epic=(e.number) {
            p class="crumbs" { a href=(format!("{}/epics", layout::base(&viewer.workspace))) { "Epics" } }
            h1 { span class="key" { (e.number) } " " (e.title) }
            dl class="facts" {
                dt { "Status" } dd { span class=(format!("status s-{}", e.status.as_str())) { (e.status.label()) } }
                dt { "Progress" } dd data-progress=(g.percent_done_points) { (bar(&e.number, g)) }
                dt { "Points" } dd data-points { (g.points_done) " of " (g.points_total) " done" }
                dt { "Tickets" } dd data-count { (g.tickets_done) " of " (g.tickets) " done (" (g.percent_done_count) "%)" }
                dt { "Blocked" } dd data-blocked { (g.blocked) }
                dt { "Ticket page" } dd { a href=(ticket_href(viewer, &e.number)) { "Edit the epic itself" } }
            }
            @if !g.by_status.is_empty() {
                table class="plain by-status" {
                    caption { "Tickets by status" }
                    thead { tr { th scope="col" { "Status" } th scope="col" { "Tickets" } th scope="col" { "Points" } } }
                    tbody {
                        @for c in &g.by_status {
                            tr { th scope="row" { (c.status.label()) } td { (c.tickets) } td { (c.points) } }
                        }
                    }
                }
            }
            section aria-labelledby="path-heading" {
                h2 id="path-heading" { "Critical path" }
                @if d.critical_path.steps.is_empty() {
                    p class="empty" { "Nothing left to do in order." }
                } @else {
                    p class="help" { (d.critical_path.points) " points left on the longest chain of dependencies, first step first." }
                    ol class="critical-path" {
                        @for s in &d.critical_path.steps {
                            li data-ticket=(s.number) {
                                a href=(ticket_href(viewer, &s.number)) { span class="key" { (s.number) } " " (s.title) }
                                " · " (s.status.label())
                                @if let Some(p) = s.story_points { " · " (p) " pts" }
                                @if !s.blocked_by.is_empty() {
                                    " · waits on "
                                    @for (i, b) in s.blocked_by.iter().enumerate() {
                                        @if i > 0 { ", " }
                                        a href=(ticket_href(viewer, &b.number)) { (b.number) } " (" (b.status.label()) ")"
                                    }
                                }
                            }
                        }
                    }
                }
            }
            section aria-labelledby="tickets-heading" {
                h2 id="tickets-heading" { "Tickets (" (page.total) ")" }
                @if paged_on { p { a href=(here.clone()) { "First page" } } }
                @for status in Status::GROUP_ORDER {
                    @let group: Vec<_> = d.tickets.iter().filter(|t| t.status == status).collect();
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
                @if let Some(next) = &page.next_cursor {
                    nav class="pager" aria-label="Pages" {
                        a class="next" rel="next" href=(format!("{here}?cursor={}", layout::segment(next))) { "Next page" }
                    }
                }
            }
        }
    }
}
