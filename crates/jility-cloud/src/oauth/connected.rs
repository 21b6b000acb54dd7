//! `GET /w/{ws}/settings/clients`: the MCP clients connected through OAuth — for every
//! member their own, for owners and admins everyone's in the workspace — with what each was
//! granted, when, and a Revoke button (`POST /w/{ws}/settings/clients/revoke`, `grant`: its
//! id). Revoking ends the grant's access and refresh tokens at once; it is audited.

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::Response;
use jility_web::WebError;
use jility_web::layout::{self, Section};
use jility_web::pages::{answer_form, field, form_pairs, respond, when};
use maud::{Markup, html};
use mcp_common::ToolError;

use super::grants::{Grant, OAuth};
use crate::web::cookies;
use crate::web::settings::{number, tabs};
use crate::web::site::{CloudSite, Person};

fn render(person: &Person, grants: &[Grant]) -> Markup {
    let viewer = &person.viewer;
    let action = format!(
        "{}/settings/clients/revoke",
        layout::base(&viewer.workspace)
    );
    let everyone = person.role.manages_members();
    html! {
        main id="main" data-page="settings" data-settings="clients" {
            h1 { "Connected clients" }
            (tabs(viewer, "clients"))
            div id="notice" {}
            p class="help" {
                @if everyone { "The applications members of " (viewer.workspace) " allowed in through sign-in (OAuth), and what each may do." }
                @else { "The applications you allowed in " (viewer.workspace) " through sign-in (OAuth), and what each may do." }
            }
            @if grants.is_empty() {
                p class="empty" { "No application is connected." }
            } @else {
                div class="table-scroll" tabindex="0" role="region" aria-label="Connected clients" {
                    table class="plain clients" {
                        thead { tr {
                            th { "Application" }
                            @if everyone { th { "Person" } }
                            th { "May" } th { "Since" } th { "Last used" }
                            th { span class="visually-hidden" { "Revoke" } }
                        } }
                        tbody {
                            @for grant in grants {
                                tr data-grant=(grant.id) {
                                    td { (grant.client_name) br; span class="help" { "returns to " (grant.redirect_host) } }
                                    @if everyone { td { (grant.user_email) } }
                                    td { (grant.scopes.join(", ")) }
                                    td { (when(&grant.created_at)) }
                                    td { (when(&grant.last_used_at)) }
                                    td {
                                        form method="post" action=(action) {
                                            input type="hidden" name="_csrf" value=(viewer.csrf);
                                            input type="hidden" name="grant" value=(grant.id);
                                            button type="submit" class="danger" { "Revoke" }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The grants `person` sees: all of the workspace's for a manager, else their own.
fn scope_of(person: &Person) -> Option<i64> {
    (!person.role.manages_members()).then_some(person.session.user.id)
}

/// `GET /w/{ws}/settings/clients`.
pub async fn page(
    State(site): State<CloudSite>,
    Path(workspace): Path<String>,
    headers: HeaderMap,
) -> Response {
    let person = match site.person(&headers, &workspace).await {
        Ok(person) => person,
        Err(err) => return err.answer(&headers),
    };
    let oauth = OAuth::new(&site.api().db);
    let (workspace_id, only) = (person.workspace_id, scope_of(&person));
    match tokio::task::spawn_blocking(move || oauth.grants(workspace_id, only)).await {
        Ok(Ok(grants)) => respond(
            &site,
            &person.viewer,
            &headers,
            Section::Settings,
            "Connected clients",
            render(&person, &grants),
        ),
        Ok(Err(err)) => WebError::Tool(err).answer(&headers),
        Err(err) => WebError::Tool(ToolError::internal(format!(
            "Listing the clients failed: {err}"
        )))
        .answer(&headers),
    }
}

/// `POST /w/{ws}/settings/clients/revoke`: `grant` (its id).
pub async fn revoke(
    State(site): State<CloudSite>,
    Path(workspace): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let person = match site.person(&headers, &workspace).await {
        Ok(person) => person,
        Err(err) => return err.answer(&headers),
    };
    let pairs = form_pairs(&body);
    if let Err(err) = cookies::check_session_form(&person.session, &headers, field(&pairs, "_csrf"))
    {
        return err.answer(&headers);
    }
    let back = format!("{}/settings/clients", layout::base(&workspace));
    let result: Result<serde_json::Value, WebError> = async {
        let id = number(&pairs, "grant")?;
        let oauth = OAuth::new(&site.api().db);
        let (workspace_id, only) = (person.workspace_id, scope_of(&person));
        let by = person.session.user.actor().to_string();
        let revoked =
            tokio::task::spawn_blocking(move || oauth.revoke_grant(workspace_id, id, &by, only))
                .await
                .map_err(|e| WebError::Tool(ToolError::internal(format!("Revoking failed: {e}"))))?
                .map_err(WebError::Tool)?;
        if !revoked {
            return Err(WebError::NotFound);
        }
        Ok(serde_json::json!({ "revoked": id }))
    }
    .await;
    answer_form(&headers, result, back)
}
