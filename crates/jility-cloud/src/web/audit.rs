//! `GET /w/{ws}/settings/audit?cursor=` (owners and admins): the workspace's audit log,
//! newest first, [`PAGE`] entries a page, with the same sealed cursors as
//! `GET /api/v1/audit` (another workspace's cursor, or a forged one, is refused).

use axum::extract::{Path, RawQuery, State};
use axum::http::HeaderMap;
use axum::response::Response;
use jility_web::WebError;
use jility_web::layout::{self, Section};
use jility_web::pages::{field, form_pairs, respond, when};
use maud::{Markup, html};
use mcp_common::ToolError;

use super::settings::{manager, tabs};
use super::site::{CloudSite, Person};
use crate::audit::AuditPage;

/// Entries a page.
const PAGE: usize = 50;

fn render(person: &Person, page: &AuditPage, next: Option<String>) -> Markup {
    let viewer = &person.viewer;
    let base = format!("{}/settings/audit", layout::base(&viewer.workspace));
    html! {
        main id="main" data-page="settings" data-settings="audit" {
            h1 { "Audit log of " (viewer.workspace) }
            (tabs(viewer, "audit"))
            p class="help" {
                (page.total) @if !page.total_exact { "+" } " entries: every write through the API, MCP or these pages, and every refused sign-in of a token."
            }
            @if page.entries.is_empty() {
                p class="empty" { "Nothing recorded yet." }
            } @else {
                div class="table-scroll" tabindex="0" role="region" aria-label="Audit log" {
                    table class="plain audit" {
                        thead { tr { th { "When" } th { "Who" } th { "Token" } th { "Operation" } th { "Ticket" } th { "Status" } th { "Detail" } } }
                        tbody {
                            @for entry in &page.entries {
                                tr data-entry=(entry.id) {
                                    td { (when(&entry.at)) }
                                    td { (entry.actor.as_deref().unwrap_or("—")) }
                                    td { @if let Some(id) = entry.token_id { (id) } @else { "—" } }
                                    td { (entry.operation) }
                                    td { (entry.ticket.as_deref().unwrap_or("")) }
                                    td { (entry.status) }
                                    td { (entry.detail.as_deref().unwrap_or("")) }
                                }
                            }
                        }
                    }
                }
            }
            @if let Some(cursor) = next {
                p { a class="more" rel="next" href=(format!("{base}?cursor={}", layout::segment(&cursor))) { "Older entries" } }
            }
        }
    }
}

/// `GET /w/{ws}/settings/audit?cursor=`.
pub async fn page(
    State(site): State<CloudSite>,
    Path(workspace): Path<String>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Response {
    let person = match manager(&site, &headers, &workspace).await {
        Ok(person) => person,
        Err(refused) => return refused,
    };
    let pairs = form_pairs(query.unwrap_or_default().as_bytes());
    let cursor = field(&pairs, "cursor").map(str::to_string);
    let workspace_id = person.workspace_id;
    let cursors = site.api().workspaces.audit_cursors(workspace_id);
    let listed = async {
        let before: Option<i64> = cursors.start(cursor.as_deref())?;
        let audit = site.api().audit.clone();
        tokio::task::spawn_blocking(move || audit.list(workspace_id, PAGE, before))
            .await
            .map_err(|e| ToolError::internal(format!("Reading the audit log failed: {e}")))?
    }
    .await;
    match listed {
        Ok(page) => {
            let next = page
                .more
                .then(|| page.entries.last().map(|last| cursors.encode(&last.id)))
                .flatten();
            let main = render(&person, &page, next);
            respond(
                &site,
                &person.viewer,
                &headers,
                Section::Settings,
                "Audit log",
                main,
            )
        }
        Err(err) => WebError::Tool(err).answer(&headers),
    }
}
