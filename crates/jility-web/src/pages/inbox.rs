//! The inbox page: what needs the viewer — mentions, assignments, handoffs, done blockers,
//! changes to what they watch — newest first; opening an entry marks it read and goes to
//! its ticket; "Mark all read"; the header's count (`/inbox/count`, which the live script
//! asks for after each change); and watching or unwatching a ticket from its page.

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use jility_core::ops;
use jility_core::params::{ListNotifications, MarkNotificationsRead, TicketId, WatchTicket};
use jility_core::tracker::{Notification, NotificationPage, Watched};
use maud::{Markup, html};
use serde::Deserialize;

use super::parts::ticket_href;
use super::{answer_form, back_to, field, form, missing, respond, run, viewer, when};
use crate::errors::WebError;
use crate::layout::{self, Section};
use crate::site::{Site, Viewer};

/// The inbox's query string.
#[derive(Debug, Default, Deserialize)]
pub struct InboxQuery {
    #[serde(default)]
    unread: Option<String>,
    #[serde(default)]
    cursor: Option<String>,
}

fn inbox_href(viewer: &Viewer) -> String {
    format!("{}/inbox", layout::base(&viewer.workspace))
}

/// `GET /w/{workspace}/inbox`.
pub async fn page<S: Site>(
    State(site): State<S>,
    Path(workspace): Path<String>,
    Query(query): Query<InboxQuery>,
    headers: HeaderMap,
) -> Response {
    let viewer = match viewer(&site, &headers, &workspace).await {
        Ok(v) => v,
        Err(refusal) => return refusal,
    };
    let unread_only = query.unread.as_deref().is_some_and(|u| u == "1");
    let listed = run::<S, ops::ListNotifications>(
        &site,
        &viewer,
        ListNotifications {
            unread_only,
            limit: Some(50),
            cursor: query.cursor.filter(|c| !c.is_empty()),
        },
    )
    .await;
    let listed = match listed {
        Ok(listed) => listed,
        Err(err) => return err.answer(&headers),
    };
    let main = render(
        &viewer,
        &listed.data,
        listed.page.next_cursor.as_deref(),
        unread_only,
    );
    let title = match listed.data.unread {
        0 => "Inbox".to_string(),
        n => format!("Inbox ({n})"),
    };
    respond(&site, &viewer, &headers, Section::Inbox, &title, main)
}

fn render(
    viewer: &Viewer,
    page: &NotificationPage,
    next: Option<&str>,
    unread_only: bool,
) -> Markup {
    let here = inbox_href(viewer);
    html! {
        main id="main" class="inbox-page" data-page="inbox" {
            div id="notice" {}
            header class="page-head" {
                h1 { "Inbox" }
                p class="lede" {
                    @match page.unread {
                        0 => { "Nothing unread." }
                        1 => { "1 unread." }
                        n => { (n) " unread." }
                    }
                    " Mentions, assignments, handoffs, blockers done and changes to the tickets you watch."
                }
                nav class="filters" aria-label="Inbox filter" {
                    a href=(here) aria-current=[(!unread_only).then_some("page")] { "All" }
                    a href=(format!("{here}?unread=1")) aria-current=[unread_only.then_some("page")] { "Unread" }
                }
                @if page.unread > 0 {
                    form method="post" action=(format!("{here}/read")) class="inline" {
                        input type="hidden" name="_csrf" value=(viewer.csrf);
                        button type="submit" { "Mark all read" }
                    }
                }
            }
            @if page.notifications.is_empty() {
                p class="empty" { @if unread_only { "Nothing unread." } @else { "Your inbox is empty." } }
            } @else {
                ol class="inbox" {
                    @for n in &page.notifications { (entry(viewer, n)) }
                }
            }
            @if let Some(next) = next {
                p class="more" {
                    a href=(format!("{here}?cursor={}{}", layout::segment(next), if unread_only { "&unread=1" } else { "" })) { "Older entries" }
                }
            }
        }
    }
}

fn kind_label(kind: &str) -> &'static str {
    match kind {
        "mentioned" => "Mention",
        "assigned" => "Assigned",
        "handoff" => "Handoff",
        "blocker_done" => "Unblocked",
        "webhook_disabled" => "Webhook",
        _ => "Watching",
    }
}

fn entry(viewer: &Viewer, n: &Notification) -> Markup {
    let state = if n.read { "entry" } else { "entry unread" };
    html! {
        li class=(state) data-id=(n.id) {
            span class=(format!("kind k-{}", n.kind)) { (kind_label(&n.kind)) }
            form method="post" action=(format!("{}/open", inbox_href(viewer))) class="open" {
                input type="hidden" name="_csrf" value=(viewer.csrf);
                input type="hidden" name="id" value=(n.id);
                button type="submit" class="link" {
                    @if let Some(ticket) = &n.ticket { span class="key" { (ticket) } " " }
                    (n.title.as_deref().unwrap_or("About the workspace"))
                    @if !n.read { span class="visually-hidden" { " (unread)" } }
                }
            }
            p class="summary" { (n.summary) }
            time datetime=(n.created_at) { (when(&n.created_at)) }
        }
    }
}

/// `POST /w/{workspace}/inbox/open`: `id` — marked read, then to its ticket.
pub async fn open<S: Site>(
    State(site): State<S>,
    Path(workspace): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let (viewer, pairs) = match form(&site, &headers, &workspace, &body).await {
        Ok(v) => v,
        Err(refusal) => return refusal,
    };
    let mut back = inbox_href(&viewer);
    let result = async {
        let id: i64 = field(&pairs, "id")
            .and_then(|id| id.parse().ok())
            .ok_or_else(|| missing("id"))?;
        run::<S, ops::MarkNotificationsRead>(
            &site,
            &viewer,
            MarkNotificationsRead {
                ids: vec![id],
                all: false,
            },
        )
        .await?;
        // Where it points: the entry, as the inbox lists it (looked for among the newest
        // 2,000; an older one goes back to the inbox).
        let mut cursor = None;
        for _ in 0..20 {
            let page = run::<S, ops::ListNotifications>(
                &site,
                &viewer,
                ListNotifications {
                    unread_only: false,
                    limit: Some(100),
                    cursor: cursor.clone(),
                },
            )
            .await?;
            if let Some(found) = page.data.notifications.iter().find(|n| n.id == id) {
                if let Some(ticket) = &found.ticket {
                    back = ticket_href(&viewer, ticket);
                }
                break;
            }
            match (page.page.next_cursor, page.data.notifications.last()) {
                (Some(next), Some(last)) if last.id > id => cursor = Some(next),
                _ => break,
            }
        }
        Ok::<_, WebError>(serde_json::json!({"marked": id}))
    }
    .await;
    answer_form(&headers, result, back)
}

/// `POST /w/{workspace}/inbox/read`: every entry read.
pub async fn read_all<S: Site>(
    State(site): State<S>,
    Path(workspace): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let (viewer, _) = match form(&site, &headers, &workspace, &body).await {
        Ok(v) => v,
        Err(refusal) => return refusal,
    };
    let back = inbox_href(&viewer);
    let result = run::<S, ops::MarkNotificationsRead>(
        &site,
        &viewer,
        MarkNotificationsRead {
            ids: Vec::new(),
            all: true,
        },
    )
    .await
    .map(|m| serde_json::json!({"marked": m.marked, "unread": m.unread}));
    answer_form(&headers, result, back)
}

/// `GET /w/{workspace}/inbox/count`: `{"unread": N}` for the header's count.
pub async fn count<S: Site>(
    State(site): State<S>,
    Path(workspace): Path<String>,
    headers: HeaderMap,
) -> Response {
    match viewer(&site, &headers, &workspace).await {
        Ok(viewer) => Json(serde_json::json!({"unread": viewer.unread})).into_response(),
        Err(refusal) => refusal,
    }
}

/// Whether the viewer watches ticket `number`, and who does (for its page).
pub async fn watching<S: Site>(site: &S, viewer: &Viewer, number: &str) -> Option<Watched> {
    run::<S, ops::TicketWatchers>(
        site,
        viewer,
        TicketId {
            ticket_id: number.to_string(),
        },
    )
    .await
    .ok()
}

/// The watch button of a ticket's page.
pub fn watch_form(viewer: &Viewer, number: &str, watched: &Watched) -> Markup {
    html! {
        form method="post" action=(format!("{}/watch", ticket_href(viewer, number))) class="watch" {
            input type="hidden" name="_csrf" value=(viewer.csrf);
            input type="hidden" name="watching" value=(if watched.watching { "0" } else { "1" });
            button type="submit" aria-pressed=(if watched.watching { "true" } else { "false" }) {
                @if watched.watching { "Unwatch" } @else { "Watch" }
            }
            span class="watchers" {
                @match watched.watchers.len() {
                    0 => { "No one watches it" }
                    1 => { "1 watcher" }
                    n => { (n) " watchers" }
                }
            }
        }
    }
}

/// `POST /w/{workspace}/tickets/{number}/watch`: `watching` (1 or 0).
pub async fn watch<S: Site>(
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
        let watching = match field(&pairs, "watching") {
            Some("1") => true,
            Some("0") => false,
            _ => return Err(missing("watching")),
        };
        let out = run::<S, ops::WatchTicket>(
            &site,
            &viewer,
            WatchTicket {
                ticket_id: number.clone(),
                watching,
            },
        )
        .await?;
        Ok(serde_json::json!({"number": out.number, "watching": out.watching}))
    }
    .await;
    answer_form(&headers, result, back)
}
