//! Bulk edits on the list page: rows selected (or "all N matching" the list), a change
//! chosen, its preview (a dry run: what would change, what would be refused), then confirm.
//! The forms are plain posts (no script needed); the preview is a page of its own whose
//! confirm form carries the same tickets or query, the change, and the count it previewed
//! (`expected_count`), so a list that grew in between changes nothing.

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Redirect, Response};
use jility_core::ops;
use jility_core::params::{BulkSet, BulkUpdate, StatusName};
use jility_core::tracker::BulkUpdated;
use maud::{Markup, html};

use super::{back_to, field, fields, form, respond, write};
use crate::errors::WebError;
use crate::layout::{self, Section};
use crate::site::{Site, Viewer};

/// The change under the list's table (`status`, `add_label`, `remove_label`,
/// `add_assignee`, `sprint`), for the rows ticked or all `total` the list's `query` matches.
pub fn change_fieldset(total: u64, query: &str, back: &str) -> Markup {
    html! {
        fieldset class="bulk" data-bulk {
            input type="hidden" name="expected" value=(total);
            input type="hidden" name="back" value=(back);
            legend { "Change the selected tickets" }
            span class="check" {
                input id="b-all" type="checkbox" name="all" value="1";
                label for="b-all" { "All " (total) " matching this list" }
            }
            input type="hidden" name="query" value=(query);
            div {
                label for="b-status" { "Status" }
                select id="b-status" name="status" {
                    option value="" { "(keep)" }
                    @for s in jility_core::model::Status::ALL {
                        option value=(s.as_str()) { (s.label()) }
                    }
                }
            }
            div {
                label for="b-add-label" { "Add label" }
                input id="b-add-label" type="text" name="add_label";
            }
            div {
                label for="b-remove-label" { "Remove label" }
                input id="b-remove-label" type="text" name="remove_label";
            }
            div {
                label for="b-add-assignee" { "Add assignee" }
                input id="b-add-assignee" type="text" name="add_assignee";
            }
            div {
                label for="b-sprint" { "Sprint" }
                input id="b-sprint" type="text" name="sprint" placeholder="active, a name, or none";
            }
            button type="submit" name="step" value="preview" { "Preview" }
        }
    }
}

/// A posted bulk edit: the tickets (or the query), the change, the count previewed.
struct Posted {
    tickets: Vec<String>,
    query: Option<String>,
    set: BulkSet,
    expected: Option<u64>,
    back: String,
}

fn posted(viewer: &Viewer, pairs: &[(String, String)]) -> Posted {
    let text = |name: &str| {
        field(pairs, name)
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(str::to_string)
    };
    let all = field(pairs, "all").is_some_and(|v| v == "1");
    let list = |name: &str| text(name).into_iter().collect::<Vec<_>>();
    Posted {
        tickets: if all {
            Vec::new()
        } else {
            fields(pairs, "ticket")
                .into_iter()
                .map(str::to_string)
                .collect()
        },
        // "All matching": the list's query (an empty one needs the previewed count).
        query: all.then(|| field(pairs, "query").unwrap_or_default().to_string()),
        set: BulkSet {
            status: text("status").map(StatusName),
            add_labels: list("add_label"),
            remove_labels: list("remove_label"),
            add_assignees: list("add_assignee"),
            sprint: text("sprint"),
            ..BulkSet::default()
        },
        expected: text("expected").and_then(|n| n.parse().ok()),
        back: back_to(
            viewer,
            field(pairs, "back"),
            format!("{}/list", layout::base(&viewer.workspace)),
        ),
    }
}

/// `POST /w/{workspace}/bulk`: `step=preview` answers the preview page; `step=apply` makes
/// the change and goes back to the list, saying how many changed.
pub async fn post<S: Site>(
    State(site): State<S>,
    Path(workspace): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let (viewer, pairs) = match form(&site, &headers, &workspace, &body).await {
        Ok(v) => v,
        Err(refusal) => return refusal,
    };
    let apply = field(&pairs, "step") == Some("apply");
    let p = posted(&viewer, &pairs);
    if p.query.is_none() && p.tickets.is_empty() {
        return WebError::Tool(
            mcp_common_core::ToolError::new(
                jility_core::errors::INVALID_INPUT,
                "No ticket is selected",
            )
            .with_hint("Tick the tickets to change, or \"All matching this list\"."),
        )
        .answer(&headers);
    }
    let params = BulkUpdate {
        query: p.query.clone(),
        tickets: p.tickets.clone(),
        set: p.set.clone(),
        // "All N matching" promises N; the confirmation, the count it previewed: a list
        // that changed in between changes nothing.
        expected_count: if apply || p.query.is_some() {
            p.expected
        } else {
            None
        },
        dry_run: !apply,
        message: None,
    };
    match write::<S, ops::BulkUpdate>(&site, &viewer, params).await {
        Ok(done) if apply => {
            let sep = if p.back.contains('?') { '&' } else { '?' };
            Redirect::to(&format!("{}{sep}changed={}", p.back, done.changed)).into_response()
        }
        Ok(preview) => {
            let main = preview_page(&viewer, &p, &preview);
            respond(
                &site,
                &viewer,
                &headers,
                Section::List,
                "Preview the change",
                main,
            )
        }
        Err(err) => err.answer(&headers),
    }
}

fn preview_page(viewer: &Viewer, p: &Posted, b: &BulkUpdated) -> Markup {
    let base = layout::base(&viewer.workspace);
    html! {
        main id="main" class="bulk-page" data-page="bulk-preview" {
            h1 { "Preview the change" }
            p class="count" data-matched=(b.matched) data-changed=(b.changed) {
                (b.changed) " of " (b.matched) " tickets would change"
                @if b.matched > b.changed + b.refused_total { " (the others are already as asked)" }
                "."
            }
            @if !b.tickets.is_empty() {
                div class="table-scroll" {
                    table class="tickets" {
                        thead { tr { th scope="col" { "Ticket" } th scope="col" { "Title" } th scope="col" { "Change" } } }
                        tbody {
                            @for t in &b.tickets {
                                tr data-ticket=(t.number) {
                                    td { a class="key" href=(format!("{base}/tickets/{}", layout::segment(&t.number))) { (t.number) } }
                                    td { (t.title) }
                                    td { (t.changes.join("; ")) }
                                }
                            }
                        }
                    }
                }
                @if b.changed > b.tickets.len() { p class="help" { "… and " (b.changed - b.tickets.len()) " more." } }
            }
            @if b.refused_total > 0 {
                div class="notice error" role="alert" data-refused=(b.refused_total) {
                    p { (b.refused_total) " cannot change, so the change cannot be made as it is:" }
                    ul {
                        @for r in &b.refused { li { strong { (r.number) } ": " (r.reason) } }
                    }
                    p class="hint" { "Go back and leave them out (narrow the list or untick them)." }
                }
            } @else if b.changed > 0 {
                form method="post" action=(format!("{base}/bulk")) data-native data-confirm-bulk {
                    input type="hidden" name="_csrf" value=(viewer.csrf);
                    input type="hidden" name="step" value="apply";
                    input type="hidden" name="back" value=(p.back);
                    input type="hidden" name="expected" value=(b.matched);
                    @if let Some(q) = &p.query {
                        input type="hidden" name="all" value="1";
                        input type="hidden" name="query" value=(q);
                    }
                    @for t in &p.tickets { input type="hidden" name="ticket" value=(t); }
                    @if let Some(s) = &p.set.status { input type="hidden" name="status" value=(s.0); }
                    @for l in &p.set.add_labels { input type="hidden" name="add_label" value=(l); }
                    @for l in &p.set.remove_labels { input type="hidden" name="remove_label" value=(l); }
                    @for a in &p.set.add_assignees { input type="hidden" name="add_assignee" value=(a); }
                    @if let Some(s) = &p.set.sprint { input type="hidden" name="sprint" value=(s); }
                    button type="submit" { "Change " (b.changed) " tickets" }
                }
            }
            p { a href=(p.back) { "Back to the list" } }
        }
    }
}
