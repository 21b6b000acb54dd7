//! A ticket's page: its description rendered from markdown (sanitised; checklists tickable),
//! status, people, labels, points, relations, commits, comments and change log, with the
//! forms that change them.

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::Response;
use jility_core::model::Status;
use jility_core::ops;
use jility_core::params::{AddComment, StatusName, TicketId, UpdateStatus};
use jility_core::tracker::TicketDetail;
use maud::{Markup, html};

use super::{answer_form, back_to, field, form_pairs, missing, respond, run, viewer, when, write};
use crate::layout::{self, Section};
use crate::markdown;
use crate::security::check_form;
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
    let people = site.people(&viewer).await;
    let title = format!("{} {}", detail.ticket.number, detail.ticket.title);
    let main = render(&viewer, &detail, &people);
    respond(&site, &viewer, &headers, Section::Ticket, &title, main)
}

/// The ticket's page address.
pub fn href(viewer: &Viewer, number: &str) -> String {
    format!(
        "{}/tickets/{}",
        layout::base(&viewer.workspace),
        layout::segment(number)
    )
}

fn render(viewer: &Viewer, detail: &TicketDetail, people: &[String]) -> Markup {
    let t = &detail.ticket;
    let here = href(viewer, &t.number);
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
            }
            div class="ticket-body" {
                section class="description" aria-labelledby="h-desc" {
                    h2 id="h-desc" { "Description" }
                    @if t.description.trim().is_empty() {
                        p class="empty" { "No description yet." }
                    } @else {
                        div class="markdown" data-tasks=(viewer.can_write) {
                            (layout::trusted(markdown::render(&t.description, viewer.can_write)))
                        }
                    }
                }
                aside class="fields" aria-label="Fields" {
                    (status_form(viewer, t.status, &here))
                    h2 { "Assignees" }
                    @if t.assignees.is_empty() { p class="empty" { "Nobody" } }
                    ul class="people" {
                        @for who in &t.assignees {
                            @let person = people.iter().any(|p| p == who);
                            li class=(if person { "who person" } else { "who agent" }) {
                                @if person { "👤 " } @else { "🤖 " } (who)
                            }
                        }
                    }
                    h2 { "Labels" }
                    @if t.labels.is_empty() { p class="empty" { "None" } }
                    ul class="labels" { @for l in &t.labels { li class="label" { (l) } } }
                    @if !detail.dependencies.is_empty() {
                        h2 { "Depends on" }
                        ul { @for d in &detail.dependencies {
                            li { a href=(href(viewer, &d.number)) { (d.number) } " " (d.title)
                                " " span class=(format!("status s-{}", d.status.as_str())) { (d.status.label()) } }
                        } }
                    }
                    @if !detail.dependents.is_empty() {
                        h2 { "Blocks" }
                        ul { @for d in &detail.dependents {
                            li { a href=(href(viewer, &d.number)) { (d.number) } " " (d.title) }
                        } }
                    }
                    @if !detail.linked_commits.is_empty() {
                        h2 { "Commits" }
                        ul class="commits" { @for c in &detail.linked_commits {
                            li { code { (c.hash.chars().take(10).collect::<String>()) }
                                @if let Some(m) = &c.message { " " (m) } }
                        } }
                    }
                }
            }
            section class="comments" aria-labelledby="h-comments" {
                h2 id="h-comments" { "Comments (" (detail.comment_count) ")" }
                ol {
                    @for c in &detail.comments {
                        li class="comment" {
                            p class="by" { strong { (c.author) } " · " time { (when(&c.created_at)) } }
                            div class="markdown" { (layout::trusted(markdown::render(&c.content, false))) }
                        }
                    }
                }
                @if viewer.can_write {
                    form class="comment-form" method="post" action=(format!("{here}/comments")) {
                        input type="hidden" name="_csrf" value=(viewer.csrf);
                        label for="comment" { "Add a comment (markdown)" }
                        textarea id="comment" name="content" rows="4" required {}
                        button type="submit" { "Comment" }
                    }
                }
            }
            section class="changes" aria-labelledby="h-changes" {
                h2 id="h-changes" { "Recent changes" }
                ol {
                    @for c in &detail.recent_changes {
                        li {
                            time { (when(&c.changed_at)) } " · " strong { (c.changed_by) } " · "
                            (c.change_type.replace('_', " "))
                            @if let Some(v) = &c.new_value { " → " span class="value" { (v) } }
                        }
                    }
                }
            }
        }
    }
}

fn status_form(viewer: &Viewer, status: Status, here: &str) -> Markup {
    html! {
        h2 { "Status" }
        @if viewer.can_write {
            form class="status-form" method="post" action=(format!("{here}/status")) {
                input type="hidden" name="_csrf" value=(viewer.csrf);
                input type="hidden" name="back" value=(here);
                label for="status" class="visually-hidden" { "Status" }
                select id="status" name="status" {
                    option value=(status.as_str()) selected { (status.label()) " (now)" }
                    @for to in status.transitions() {
                        option value=(to.as_str()) { (to.label()) }
                    }
                }
                button type="submit" { "Move" }
            }
        } @else {
            p { (status.label()) }
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
    let viewer = match viewer(&site, &headers, &workspace).await {
        Ok(v) => v,
        Err(refusal) => return refusal,
    };
    let pairs = form_pairs(&body);
    let back = back_to(&viewer, field(&pairs, "back"), href(&viewer, &number));
    let result = async {
        check_form(&viewer, &headers, field(&pairs, "_csrf"))?;
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
    let viewer = match viewer(&site, &headers, &workspace).await {
        Ok(v) => v,
        Err(refusal) => return refusal,
    };
    let pairs = form_pairs(&body);
    let here = href(&viewer, &number);
    let result = async {
        check_form(&viewer, &headers, field(&pairs, "_csrf"))?;
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
