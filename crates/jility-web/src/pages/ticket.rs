//! A ticket's page: its description rendered from markdown (sanitised; checklists tickable),
//! status, people, labels, points, relations, commits, comments and change log, with the
//! forms that change them.

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::Response;
use jility_core::ops;
use jility_core::params::{AddComment, StatusName, TicketId, UpdateStatus};
use jility_core::tracker::TicketDetail;
use maud::{Markup, html};

use super::parts::{nest_headings, ticket_href, who};
use super::{answer_form, back_to, field, form, missing, respond, run, viewer, write};
use super::{changes, edit, fields, history, when};
use crate::layout::{self, Section};
use crate::markdown;
use crate::site::{Site, Viewer};

/// `GET /w/{workspace}/tickets/{number}`.
pub async fn page<S: Site>(
    State(site): State<S>,
    Path((workspace, number)): Path<(String, String)>,
    headers: HeaderMap,
) -> Response {
    let viewer = match viewer(&site, &headers, &workspace).await {
        Ok(v) => v,
        Err(refusal) => return refusal,
    };
    let detail = match run::<S, ops::GetTicket>(
        &site,
        &viewer,
        TicketId {
            ticket_id: number.clone(),
        },
    )
    .await
    {
        Ok(detail) => detail,
        Err(err) => return err.answer(&headers),
    };
    // How many versions the description has (the link to its history says it).
    let versions = run::<S, ops::History>(
        &site,
        &viewer,
        TicketId {
            ticket_id: detail.ticket.number.clone(),
        },
    )
    .await
    .map(|h| h.versions.len())
    .unwrap_or_default();
    let people = site.people(&viewer).await;
    let watched = super::inbox::watching(&site, &viewer, &detail.ticket.number).await;
    let title = format!("{} {}", detail.ticket.number, detail.ticket.title);
    let main = render(&viewer, &detail, &people, versions, watched.as_ref());
    respond(&site, &viewer, &headers, Section::Ticket, &title, main)
}

fn render(
    viewer: &Viewer,
    detail: &TicketDetail,
    people: &[String],
    versions: usize,
    watched: Option<&jility_core::tracker::Watched>,
) -> Markup {
    let t = &detail.ticket;
    let here = ticket_href(viewer, &t.number);
    // Who a mention may name here: the workspace's people, and those on this ticket.
    let mut known: Vec<String> = people.to_vec();
    known.extend(t.assignees.iter().cloned());
    known.push(t.created_by.clone());
    known.extend(detail.comments.iter().map(|c| c.author.clone()));
    let list = format!("{}/list", layout::base(&viewer.workspace));
    let person = move |name: &str| {
        known
            .iter()
            .find(|k| k.eq_ignore_ascii_case(name))
            .map(|k| format!("{list}?q={}", layout::segment(&format!("assignee:{k}"))))
    };
    html! {
        main id="main" class="ticket-page" data-page="ticket" data-ticket=(t.number) {
            div id="notice" {}
            header class="ticket-head" {
                p class="key" { (t.number) }
                h1 { (t.title) }
                p class="status-line" {
                    span class=(format!("status s-{}", t.status.as_str())) { (t.status.label()) }
                    @if let Some(points) = t.story_points { " · " (points) " story points" }
                }
                @if viewer.can_write { (fields::title_form(viewer, &t.number, &t.title)) }
                @if let Some(watched) = watched { (super::inbox::watch_form(viewer, &t.number, watched)) }
            }
            div class="ticket-body" {
                section class="description" aria-labelledby="h-desc" {
                    h2 id="h-desc" { "Description" }
                    @if t.description.trim().is_empty() {
                        p class="empty" { "No description yet." }
                    } @else {
                        div class="markdown" data-tasks=(viewer.can_write) {
                            (layout::trusted(nest_headings(&markdown::render_with(&t.description, viewer.can_write, &person), 3)))
                        }
                    }
                    p class="history-link" {
                        a href=(history::href(viewer, &t.number)) {
                            "History (" (versions) @if versions == 1 { " version)" } @else { " versions)" }
                        }
                    }
                    @if viewer.can_write { (edit::editors(viewer, &t.number, &t.description)) }
                }
                (fields::render(viewer, detail, people))
            }
            section class="comments" aria-labelledby="h-comments" {
                h2 id="h-comments" { "Comments (" (detail.comment_count) ")" }
                ol {
                    @for c in &detail.comments {
                        li class="comment" {
                            p class="by" { (who(&c.author, people)) " · " time { (when(&c.created_at)) } }
                            div class="markdown" { (layout::trusted(nest_headings(&markdown::render_with(&c.content, false, &person), 3))) }
                        }
                    }
                }
                @if viewer.can_write {
                    form class="comment-form" method="post" action=(format!("{here}/comments")) {
                        input type="hidden" name="_csrf" value=(viewer.csrf);
                        label for="comment" { "Add a comment (markdown)" }
                        textarea id="comment" name="content" rows="4" required {}
                        button type="submit" { "Add comment" }
                    }
                }
            }
            section class="changes" aria-labelledby="h-changes" {
                h2 id="h-changes" { "Recent changes" }
                (changes::render(&detail.recent_changes, people))
            }
        }
    }
}

/// `POST /w/{workspace}/tickets/{number}/status`: `status` (and `message`), from the board
/// or the ticket page.
pub async fn move_status<S: Site>(
    State(site): State<S>,
    Path((workspace, number)): Path<(String, String)>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let (viewer, pairs) = match form(&site, &headers, &workspace, &body).await {
        Ok(v) => v,
        Err(refusal) => return refusal,
    };
    let back = back_to(
        &viewer,
        field(&pairs, "back"),
        ticket_href(&viewer, &number),
    );
    let result = async {
        let status = field(&pairs, "status").ok_or_else(|| missing("status"))?;
        let out = write::<S, ops::UpdateStatus>(
            &site,
            &viewer,
            UpdateStatus {
                ticket_id: number.clone(),
                status: StatusName(status.to_string()),
                message: field(&pairs, "message")
                    .filter(|m| !m.trim().is_empty())
                    .map(str::to_string),
            },
        )
        .await?;
        Ok(serde_json::json!({
            "number": out.number,
            "previous": out.previous.as_str(),
            "current": out.current.as_str(),
        }))
    }
    .await;
    answer_form(&headers, result, back)
}

/// `POST /w/{workspace}/tickets/{number}/comments`: `content`.
pub async fn comment<S: Site>(
    State(site): State<S>,
    Path((workspace, number)): Path<(String, String)>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let (viewer, pairs) = match form(&site, &headers, &workspace, &body).await {
        Ok(v) => v,
        Err(refusal) => return refusal,
    };
    let here = ticket_href(&viewer, &number);
    let result = async {
        let content = field(&pairs, "content").ok_or_else(|| missing("content"))?;
        let out = write::<S, ops::AddComment>(
            &site,
            &viewer,
            AddComment {
                ticket_id: number.clone(),
                content: content.to_string(),
            },
        )
        .await?;
        Ok(serde_json::json!({ "number": out.number, "comment": out.comment.id }))
    }
    .await;
    answer_form(&headers, result, format!("{here}#h-comments"))
}
