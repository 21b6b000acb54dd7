//! A ticket's description history: every version with who made it, when, how and why, its
//! diff against the one before (lines coloured added/removed), and a "Restore this version"
//! form on each but the current one (a revert is itself a new version).

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::Response;
use jility_core::ops;
use jility_core::params::{RevertDescription, TicketId};
use jility_core::tracker::History;
use maud::{Markup, html};

use super::parts::{ticket_href, who};
use super::{answer_form, field, form, missing, respond, run, viewer, when, write};
use crate::layout::Section;
use crate::site::{Site, Viewer};

/// The history page's address.
pub fn href(viewer: &Viewer, number: &str) -> String {
    format!("{}/history", ticket_href(viewer, number))
}

/// `GET /w/{workspace}/tickets/{number}/history`.
pub async fn page<S: Site>(
    State(site): State<S>,
    Path((workspace, number)): Path<(String, String)>,
    headers: HeaderMap,
) -> Response {
    let viewer = match viewer(&site, &headers, &workspace).await {
        Ok(v) => v,
        Err(refusal) => return refusal,
    };
    let history = match run::<S, ops::History>(
        &site,
        &viewer,
        TicketId {
            ticket_id: number.clone(),
        },
    )
    .await
    {
        Ok(history) => history,
        Err(err) => return err.answer(&headers),
    };
    let people = site.people(&viewer).await;
    let title = format!("History of {} {}", history.number, history.title);
    let main = render(&viewer, &history, &people);
    respond(&site, &viewer, &headers, Section::Ticket, &title, main)
}

fn render(viewer: &Viewer, h: &History, people: &[String]) -> Markup {
    let ticket = ticket_href(viewer, &h.number);
    html! {
        main id="main" class="history-page" data-page="history" data-ticket=(h.number) {
            div id="notice" {}
            p { a href=(ticket) { "← Back to " (h.number) } }
            h1 { "History of " (h.number) " " (h.title) }
            p { (h.versions.len()) " versions; the current one is version " (h.current_version) "." }
            ol class="versions" reversed {
                @for v in h.versions.iter().rev() {
                    li class="version" data-version=(v.version) {
                        h2 {
                            "Version " (v.version)
                            @if v.version == h.current_version { " (current)" }
                        }
                        p class="by" {
                            (who(&v.changed_by, people)) " · " time { (when(&v.changed_at)) }
                            @if let Some(op) = &v.operation { " · " span class="operation" { (op) } }
                            " · " span class="stats" {
                                span class="added" { "+" (v.added) }
                                " " span class="removed" { "−" (v.removed) }
                                span class="visually-hidden" { " lines" }
                            }
                        }
                        @if let Some(m) = &v.message { p class="message" { (m) } }
                        @if v.diff.is_empty() {
                            p class="empty" { "No change to the text." }
                        } @else {
                            (super::diff::render(&v.diff))
                        }
                        @if viewer.can_write && v.version != h.current_version {
                            form method="post" action=(format!("{ticket}/revert")) {
                                input type="hidden" name="_csrf" value=(viewer.csrf);
                                input type="hidden" name="version" value=(v.version);
                                button type="submit" { "Restore this version"
                                    span class="visually-hidden" { " (" (v.version) ")" } }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// `POST /w/{workspace}/tickets/{number}/revert`: `version`.
pub async fn revert<S: Site>(
    State(site): State<S>,
    Path((workspace, number)): Path<(String, String)>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let (viewer, pairs) = match form(&site, &headers, &workspace, &body).await {
        Ok(v) => v,
        Err(refusal) => return refusal,
    };
    let back = href(&viewer, &number);
    let result = async {
        let version: i64 = field(&pairs, "version")
            .and_then(|v| v.trim().parse().ok())
            .ok_or_else(|| missing("version"))?;
        let out = write::<S, ops::RevertDescription>(
            &site,
            &viewer,
            RevertDescription {
                ticket_id: number.clone(),
                version,
            },
        )
        .await?;
        Ok(serde_json::json!({ "number": out.number, "version": out.version }))
    }
    .await;
    answer_form(&headers, result, back)
}
