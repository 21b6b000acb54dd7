//! A ticket's fields on its page, each with the form that changes it: status, assignees
//! ("Assign to me" too), labels, story points, parent, epic, dependencies (with the blocked
//! state) and what it blocks. Fields change through the `EditTicket` operation, assignees
//! through `AssignTicket` (its handoff comment), dependencies through `AddDependency` and
//! `RemoveDependency`.

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::Response;
use jility_core::model::{MAX_STORY_POINTS, Status, Ticket};
use jility_core::ops;
use jility_core::params::{AssignTicket, Dependency, EditTicket, TicketId};
use jility_core::tracker::TicketDetail;
use maud::{Markup, html};
use mcp_common_core::ToolError;

use super::parts::{ticket_href, who};
use super::{answer_form, field, form, missing, run, write};
use crate::errors::WebError;
use crate::site::{Site, Viewer};

/// The fields' column of the ticket page.
pub fn render(viewer: &Viewer, detail: &TicketDetail, people: &[String]) -> Markup {
    let t = &detail.ticket;
    let here = ticket_href(viewer, &t.number);
    let blocked_by: Vec<_> = detail
        .dependencies
        .iter()
        .filter(|d| d.status != Status::Done)
        .collect();
    html! {
        aside class="fields" aria-label="Fields" {
            (status_form(viewer, t.status, &here))
            @if !blocked_by.is_empty() {
                p class="blocked" data-blocked="true" {
                    strong { "Blocked" } " by "
                    @for (i, d) in blocked_by.iter().enumerate() {
                        @if i > 0 { ", " }
                        a href=(ticket_href(viewer, &d.number)) { (d.number) }
                    }
                }
            }
            h2 { "Assignees" }
            @if t.assignees.is_empty() { p class="empty" { "Nobody" } }
            ul class="people" {
                @for name in &t.assignees { li { (who(name, people)) } }
            }
            @if viewer.can_write {
                (text_form(viewer, &here, "assignees", "Assignees (comma-separated names)",
                    &t.assignees.join(", "), "Save assignees"))
                @if !t.assignees.contains(&viewer.name) {
                    form method="post" action=(format!("{here}/fields")) {
                        input type="hidden" name="_csrf" value=(viewer.csrf);
                        input type="hidden" name="assign_me" value="1";
                        button type="submit" { "Assign to me" }
                    }
                }
            }
            h2 { "Labels" }
            @if t.labels.is_empty() { p class="empty" { "None" } }
            ul class="labels" { @for l in &t.labels { li class="label" { (l) } } }
            @if viewer.can_write {
                (text_form(viewer, &here, "labels", "Labels (comma-separated)",
                    &t.labels.join(", "), "Save labels"))
            }
            h2 { "Story points" }
            @if viewer.can_write {
                (points_form(viewer, &here, t.story_points))
            } @else {
                p { (t.story_points.map_or("None".to_string(), |p| p.to_string())) }
            }
            (link_field(viewer, &here, t, "parent", "Parent"))
            (link_field(viewer, &here, t, "epic", "Epic"))
            (dependencies(viewer, &here, detail))
            @if !detail.dependents.is_empty() {
                h2 { "Blocks" }
                ul class="dependents" { @for d in &detail.dependents {
                    li { a href=(ticket_href(viewer, &d.number)) { (d.number) } " " (d.title) " "
                        span class=(format!("status s-{}", d.status.as_str())) { (d.status.label()) } }
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

/// A one-field form posted to `/fields`.
fn text_form(
    viewer: &Viewer,
    here: &str,
    name: &str,
    label: &str,
    value: &str,
    button: &str,
) -> Markup {
    let id = format!("field-{name}");
    html! {
        form class="field-form" method="post" action=(format!("{here}/fields")) {
            input type="hidden" name="_csrf" value=(viewer.csrf);
            label for=(id) { (label) }
            input id=(id) name=(name) type="text" value=(value);
            button type="submit" { (button) }
        }
    }
}

fn points_form(viewer: &Viewer, here: &str, points: Option<u8>) -> Markup {
    html! {
        form class="field-form" method="post" action=(format!("{here}/fields")) {
            input type="hidden" name="_csrf" value=(viewer.csrf);
            label for="field-story_points" { "Story points" }
            select id="field-story_points" name="story_points" {
                option value="" selected[points.is_none()] { "None" }
                @for p in 1..=MAX_STORY_POINTS {
                    option value=(p) selected[points == Some(p)] { (p) }
                }
            }
            button type="submit" { "Save story points" }
        }
    }
}

/// The parent or the epic: a link to it, and the form that sets or clears it.
fn link_field(viewer: &Viewer, here: &str, t: &Ticket, name: &str, title: &str) -> Markup {
    let current = if name == "parent" { &t.parent } else { &t.epic };
    html! {
        h2 { (title) }
        @match current {
            Some(n) => p { a href=(ticket_href(viewer, n)) { (n) } },
            None => p class="empty" { "None" },
        }
        @if viewer.can_write {
            (text_form(viewer, here, name, &format!("{title} (a ticket such as KEY-1; empty for none)"),
                current.as_deref().unwrap_or_default(), &format!("Save {}", name)))
        }
    }
}

fn dependencies(viewer: &Viewer, here: &str, detail: &TicketDetail) -> Markup {
    html! {
        h2 { "Depends on" }
        @if detail.dependencies.is_empty() { p class="empty" { "Nothing" } }
        ul class="dependencies" {
            @for d in &detail.dependencies {
                li data-dependency=(d.number) {
                    a href=(ticket_href(viewer, &d.number)) { (d.number) } " " (d.title) " "
                    span class=(format!("status s-{}", d.status.as_str())) { (d.status.label()) }
                    @if viewer.can_write {
                        form class="inline" method="post" action=(format!("{here}/dependencies/remove")) {
                            input type="hidden" name="_csrf" value=(viewer.csrf);
                            input type="hidden" name="depends_on" value=(d.number);
                            button type="submit" { "Remove " span class="visually-hidden" { "the dependency on " (d.number) } }
                        }
                    }
                }
            }
        }
        @if viewer.can_write {
            form class="field-form" method="post" action=(format!("{here}/dependencies")) {
                input type="hidden" name="_csrf" value=(viewer.csrf);
                label for="field-depends_on" { "Add a dependency (a ticket such as KEY-1)" }
                input id="field-depends_on" name="depends_on" type="text" required;
                button type="submit" { "Add dependency" }
            }
        }
    }
}

/// Names from a comma-separated list, trimmed, empty ones dropped.
pub fn comma_list(text: &str) -> Vec<String> {
    text.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// A link field of the form: absent → unchanged, empty → cleared.
fn link_value(pairs: &[(String, String)], name: &str) -> Option<Option<String>> {
    field(pairs, name).map(|v| Some(v.trim().to_string()).filter(|v| !v.is_empty()))
}

fn invalid(message: String, hint: &str) -> WebError {
    WebError::Tool(ToolError::new(jility_core::errors::INVALID_INPUT, message).with_hint(hint))
}

/// `POST /w/{workspace}/tickets/{number}/fields`: any of `title`, `story_points`, `labels`,
/// `parent`, `epic`, `assignees` (`assign_me=1` adds the viewer), `message`; a field left
/// out stays, an empty one is cleared.
pub async fn edit<S: Site>(
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
        let story_points = match field(&pairs, "story_points").map(str::trim) {
            None => None,
            Some("") => Some(None),
            Some(p) => Some(Some(p.parse::<i64>().map_err(|_| {
                invalid(
                    format!("Story points must be a number, got {p:?}"),
                    "Choose 1 to 13, or None.",
                )
            })?)),
        };
        let message = field(&pairs, "message")
            .map(str::trim)
            .filter(|m| !m.is_empty())
            .map(str::to_string);
        let fields = EditTicket {
            ticket_id: number.clone(),
            title: field(&pairs, "title").map(|t| t.trim().to_string()),
            description: None,
            story_points,
            labels: field(&pairs, "labels").map(comma_list),
            parent_id: link_value(&pairs, "parent"),
            epic_id: link_value(&pairs, "epic"),
            kind: None,
            message: message.clone(),
            description_edit: None,
        };
        let mut changed = Vec::new();
        let has_fields = fields.title.is_some()
            || fields.story_points.is_some()
            || fields.labels.is_some()
            || fields.parent_id.is_some()
            || fields.epic_id.is_some();
        if has_fields {
            let out = write::<S, ops::EditTicket>(&site, &viewer, fields).await?;
            changed.extend(out.changed);
        }
        let wanted = field(&pairs, "assignees").map(comma_list);
        let assign_me = field(&pairs, "assign_me").is_some();
        if wanted.is_some() || assign_me {
            let now = run::<S, ops::GetTicket>(
                &site,
                &viewer,
                TicketId {
                    ticket_id: number.clone(),
                },
            )
            .await?
            .ticket
            .assignees;
            let mut assignees = wanted.unwrap_or_else(|| now.clone());
            if assign_me && !assignees.contains(&viewer.name) {
                assignees.push(viewer.name.clone());
            }
            let (mut a, mut b) = (assignees.clone(), now);
            a.sort();
            b.sort();
            if a != b {
                write::<S, ops::AssignTicket>(
                    &site,
                    &viewer,
                    AssignTicket {
                        ticket_id: number.clone(),
                        assignees,
                        message,
                    },
                )
                .await?;
                changed.push("assignees".to_string());
            }
        }
        Ok(serde_json::json!({ "number": number, "changed": changed }))
    }
    .await;
    answer_form(&headers, result, here)
}

/// `POST /w/{workspace}/tickets/{number}/dependencies`: `depends_on`.
pub async fn add_dependency<S: Site>(
    State(site): State<S>,
    Path((workspace, number)): Path<(String, String)>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    dependency::<S>(site, workspace, number, headers, body, true).await
}

/// `POST /w/{workspace}/tickets/{number}/dependencies/remove`: `depends_on`.
pub async fn remove_dependency<S: Site>(
    State(site): State<S>,
    Path((workspace, number)): Path<(String, String)>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    dependency::<S>(site, workspace, number, headers, body, false).await
}

async fn dependency<S: Site>(
    site: S,
    workspace: String,
    number: String,
    headers: HeaderMap,
    body: Bytes,
    add: bool,
) -> Response {
    let (viewer, pairs) = match form(&site, &headers, &workspace, &body).await {
        Ok(v) => v,
        Err(refusal) => return refusal,
    };
    let here = ticket_href(&viewer, &number);
    let result = async {
        let depends_on = field(&pairs, "depends_on")
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .ok_or_else(|| missing("depends_on"))?;
        let params = Dependency {
            ticket_id: number.clone(),
            depends_on: depends_on.to_string(),
        };
        if add {
            let out = write::<S, ops::AddDependency>(&site, &viewer, params).await?;
            Ok(serde_json::json!({ "number": out.ticket.number, "blocked": out.is_blocked }))
        } else {
            let out = write::<S, ops::RemoveDependency>(&site, &viewer, params).await?;
            Ok(serde_json::json!({ "number": out.ticket.number }))
        }
    }
    .await;
    answer_form(&headers, result, here)
}

/// The title's editor (a disclosure under the heading).
pub fn title_form(viewer: &Viewer, number: &str, title: &str) -> Markup {
    let here = ticket_href(viewer, number);
    html! {
        details class="edit-title" {
            summary { "Edit the title" }
            (text_form(viewer, &here, "title", "Title", title, "Save the title"))
        }
    }
}
