//! Editing a ticket's description from its page: ticking a checklist's box, editing one
//! section (each `##`/`###` heading has its "Edit" disclosure) or the whole text. Every edit
//! is an `UpdateDescription` (a new version in the history, with its message).

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::Response;
use jility_core::description::{self, EditOperation};
use jility_core::ops;
use jility_core::params::{TicketId, UpdateDescription};
use maud::{Markup, html};

use super::parts::{stale, ticket_href};
use super::{answer_form, field, form, missing, run, write};
use crate::markdown;
use crate::site::{Site, Viewer};

/// The longest task text a history message quotes.
const QUOTED_CHARS: usize = 80;

/// The editors under the description: the whole text, then each `##`/`###` section that a
/// header names unambiguously.
pub fn editors(viewer: &Viewer, number: &str, text: &str) -> Markup {
    let action = format!("{}/description", ticket_href(viewer, number));
    let sections: Vec<description::Section> = description::sections(text)
        .into_iter()
        .filter(|s| (2..=3).contains(&s.level) && !s.ambiguous)
        .collect();
    html! {
        div class="editors" {
            @for (i, section) in sections.iter().enumerate() {
                @let title = section.heading.trim_start_matches('#').trim();
                details class="edit-section" data-section=(section.heading) {
                    summary { "Edit " span class="visually-hidden" { "the section " } "“" (title) "”" }
                    form method="post" action=(action) {
                        input type="hidden" name="_csrf" value=(viewer.csrf);
                        input type="hidden" name="section_header" value=(section.heading);
                        label for=(format!("section-{i}")) { "Text of “" (title) "” (markdown)" }
                        textarea id=(format!("section-{i}")) name="content" rows="8" { (section.body) }
                        label for=(format!("section-{i}-message")) { "Why (optional, kept in the history)" }
                        input id=(format!("section-{i}-message")) name="message" type="text";
                        button type="submit" { "Save “" (title) "”" }
                    }
                }
            }
            details class="edit-all" {
                summary { "Edit the whole description" }
                form method="post" action=(action) {
                    input type="hidden" name="_csrf" value=(viewer.csrf);
                    input type="hidden" name="operation" value="replace_all";
                    label for="description-all" { "Description (markdown)" }
                    textarea id="description-all" name="content" rows="14" { (text) }
                    label for="description-all-message" { "Why (optional, kept in the history)" }
                    input id="description-all-message" name="message" type="text";
                    button type="submit" { "Save the description" }
                }
            }
        }
    }
}

/// `POST /w/{workspace}/tickets/{number}/tasks`: `task` (N, from 0) and `done` (the box's
/// new state). Refused as stale when the N-th box of the description as it is now is not
/// in the state the person saw.
pub async fn tick<S: Site>(
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
        let task: usize = field(&pairs, "task")
            .and_then(|t| t.trim().parse().ok())
            .ok_or_else(|| missing("task"))?;
        let done = match field(&pairs, "done") {
            Some("true") => true,
            Some("false") => false,
            _ => return Err(missing("done")),
        };
        let detail = run::<S, ops::GetTicket>(
            &site,
            &viewer,
            TicketId {
                ticket_id: number.clone(),
            },
        )
        .await?;
        let text = &detail.ticket.description;
        let (line, was) = markdown::task_lines(text)
            .get(task)
            .copied()
            .ok_or_else(|| stale("that box is gone"))?;
        if was == done {
            return Err(stale("that box is already in that state"));
        }
        let current = text
            .split('\n')
            .nth(line.saturating_sub(1))
            .map(|l| l.strip_suffix('\r').unwrap_or(l))
            .ok_or_else(|| stale("that line is gone"))?;
        let flipped = markdown::toggle_task(current, was).ok_or_else(|| stale("no box there"))?;
        let what: String = flipped
            .split_once(']')
            .map_or(flipped.as_str(), |(_, rest)| rest)
            .trim()
            .chars()
            .take(QUOTED_CHARS)
            .collect();
        let out = write::<S, ops::UpdateDescription>(
            &site,
            &viewer,
            UpdateDescription {
                ticket_id: number.clone(),
                operation: EditOperation::ReplaceLines,
                content: flipped.clone(),
                start_line: i64::try_from(line).ok(),
                end_line: i64::try_from(line).ok(),
                section_header: None,
                message: Some(format!(
                    "{} “{what}”",
                    if done { "ticked" } else { "unticked" }
                )),
            },
        )
        .await?;
        Ok(serde_json::json!({ "number": out.number, "version": out.version, "done": done }))
    }
    .await;
    answer_form(&headers, result, here)
}

/// `POST /w/{workspace}/tickets/{number}/description`: `section_header` and `content`
/// (`replace_section`), or `operation=replace_all` and `content`; `message` optional.
pub async fn describe<S: Site>(
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
        // Browsers send a textarea's lines as CRLF; the description keeps its own ends.
        let content = content.replace("\r\n", "\n");
        let (operation, section_header) = match field(&pairs, "operation") {
            Some("replace_all") => (EditOperation::ReplaceAll, None),
            None | Some("replace_section") => {
                let header =
                    field(&pairs, "section_header").ok_or_else(|| missing("section_header"))?;
                (EditOperation::ReplaceSection, Some(header.to_string()))
            }
            Some(_) => return Err(missing("operation")),
        };
        let out = write::<S, ops::UpdateDescription>(
            &site,
            &viewer,
            UpdateDescription {
                ticket_id: number.clone(),
                operation,
                content,
                start_line: None,
                end_line: None,
                section_header,
                message: field(&pairs, "message")
                    .map(str::trim)
                    .filter(|m| !m.is_empty())
                    .map(str::to_string),
            },
        )
        .await?;
        Ok(serde_json::json!({ "number": out.number, "version": out.version }))
    }
    .await;
    answer_form(&headers, result, format!("{here}#h-desc"))
}
