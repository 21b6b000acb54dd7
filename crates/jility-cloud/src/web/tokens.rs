//! `GET /w/{ws}/settings/tokens` (owners and admins): the workspace's API tokens — name,
//! prefix, scopes, who minted them, expiry, last use — with a form to mint one (name,
//! scopes, expiry in days; the token shown once) and a Revoke button per live token.
//! A token minted here records the person who minted it
//! ([`crate::auth::Tokens::create_for_user`]); mints and revocations are audited under the
//! person's name, as through the API.

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::Response;
use jility_web::WebError;
use jility_web::layout::{self, Section};
use jility_web::pages::{answer_form, field, fields, respond, when};
use maud::{Markup, html};
use mcp_common::ToolError;

use super::settings::{created, manager, manager_form, number, tabs};
use super::site::{CloudSite, Person};
use crate::auth::{NewToken, Scope, ScopeSet, TokenRecord, TokenRef};
use jility_core::errors;

/// Longest expiry offered, in days (as the API's).
const MAX_DAYS: i64 = 3650;

fn render(person: &Person, tokens: &[TokenRecord], minted: Option<(&str, &str)>) -> Markup {
    let viewer = &person.viewer;
    let base = format!("{}/settings/tokens", layout::base(&viewer.workspace));
    let now = chrono::Utc::now();
    html! {
        main id="main" data-page="settings" data-settings="tokens" {
            h1 { "Tokens of " (viewer.workspace) }
            (tabs(viewer, "tokens"))
            div id="notice" {
                @if let Some((name, token)) = minted {
                    (layout::notice("ok", &format!("Token “{name}” made: copy it now — it is shown only this once."), None))
                    p {
                        label for="new-token" { "The token" } br;
                        input id="new-token" type="text" readonly value=(token) size="60";
                    }
                }
            }
            h2 { "Make a token" }
            form method="post" action=(base) data-native class="mint" {
                input type="hidden" name="_csrf" value=(viewer.csrf);
                p {
                    label for="token-name" { "Name" } br;
                    input id="token-name" type="text" name="name" required maxlength="100" placeholder="ci-bot";
                }
                fieldset {
                    legend { "Scopes" }
                    @for scope in Scope::ALL {
                        @let id = format!("scope-{}", scope.as_str().replace(':', "-"));
                        span class="check" {
                            input id=(id) type="checkbox" name="scope" value=(scope.as_str()) checked[scope == Scope::TicketsRead];
                            " "
                            label for=(id) { (scope.as_str()) }
                        }
                        " "
                    }
                    p class="help" { "full_access allows everything, tokens and the audit log included: give it only to what must manage the workspace." }
                }
                p {
                    label for="token-days" { "Expires after (days; empty: never)" } br;
                    input id="token-days" type="number" name="expires_in_days" min="1" max=(MAX_DAYS) value="90";
                }
                p { button type="submit" { "Make the token" } }
            }
            h2 { "Tokens" }
            @if tokens.is_empty() {
                p class="empty" { "No tokens yet." }
            } @else {
                div class="table-scroll" tabindex="0" role="region" aria-label="Tokens" {
                    table class="plain tokens" {
                        thead { tr { th { "Name" } th { "Prefix" } th { "Scopes" } th { "Minted by" } th { "Expires" } th { "Last used" } th { "State" } } }
                        tbody {
                            @for token in tokens {
                                tr data-token=(token.id) {
                                    td { (token.name) }
                                    td { code { (token.display_prefix) "…" } }
                                    td { (token.scopes.names().join(", ")) }
                                    td { (token.created_by) }
                                    td { (token.expires_at.as_deref().map_or_else(|| "never".to_string(), when)) }
                                    td { (token.last_used_at.as_deref().map_or_else(|| "never".to_string(), when)) }
                                    td {
                                        @if token.revoked_at.is_some() {
                                            "revoked"
                                        } @else if !token.is_active(now) {
                                            "expired"
                                        } @else {
                                            form method="post" action=(format!("{base}/revoke")) {
                                                input type="hidden" name="_csrf" value=(viewer.csrf);
                                                input type="hidden" name="token" value=(token.id);
                                                button type="submit" class="secondary" { "Revoke " span class="visually-hidden" { (token.name) } }
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
}

async fn show(
    site: &CloudSite,
    headers: &HeaderMap,
    person: &Person,
    minted: Option<(&str, &str)>,
) -> Response {
    let tokens = site.api().tokens.clone();
    let workspace_id = person.workspace_id;
    let listed = tokio::task::spawn_blocking(move || tokens.list(workspace_id)).await;
    match listed {
        Ok(Ok(records)) => {
            let main = render(person, &records, minted);
            respond(
                site,
                &person.viewer,
                headers,
                Section::Settings,
                "Tokens",
                main,
            )
        }
        Ok(Err(err)) => WebError::Tool(err).answer(headers),
        Err(err) => WebError::Tool(ToolError::internal(format!(
            "Listing the tokens failed: {err}"
        )))
        .answer(headers),
    }
}

/// `GET /w/{ws}/settings/tokens`.
pub async fn page(
    State(site): State<CloudSite>,
    Path(workspace): Path<String>,
    headers: HeaderMap,
) -> Response {
    match manager(&site, &headers, &workspace).await {
        Ok(person) => show(&site, &headers, &person, None).await,
        Err(refused) => refused,
    }
}

fn invalid(message: String, hint: &str) -> WebError {
    WebError::Tool(ToolError::new(errors::INVALID_INPUT, message).with_hint(hint))
}

/// What the mint form asks for.
fn new_token(pairs: &[(String, String)], person: &Person) -> Result<NewToken, WebError> {
    let name = field(pairs, "name").unwrap_or_default().trim().to_string();
    let scopes = fields(pairs, "scope")
        .into_iter()
        .map(str::parse::<Scope>)
        .collect::<Result<Vec<_>, _>>()?;
    if scopes.is_empty() {
        return Err(invalid(
            "Choose at least one scope".into(),
            "Tick the scopes the token needs (tickets:read to read).",
        ));
    }
    let scopes = ScopeSet::new(scopes)?;
    let expires_at = match field(pairs, "expires_in_days").map(str::trim) {
        None | Some("") => None,
        Some(days) => match days.parse::<i64>() {
            Ok(days) if (1..=MAX_DAYS).contains(&days) => {
                Some(chrono::Utc::now() + chrono::TimeDelta::days(days))
            }
            _ => {
                return Err(invalid(
                    format!("The expiry must be 1 to {MAX_DAYS} days"),
                    "Give a whole number of days, or leave it empty for a token that does not expire.",
                ));
            }
        },
    };
    Ok(NewToken {
        name,
        scopes,
        expires_at,
        created_by: person.session.user.actor().to_string(),
    })
}

/// `POST /w/{ws}/settings/tokens`: name, scope…, expires_in_days → the token, shown once.
pub async fn create(
    State(site): State<CloudSite>,
    Path(workspace): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let (person, pairs) = match manager_form(&site, &headers, &workspace, &body).await {
        Ok(checked) => checked,
        Err(refused) => return refused,
    };
    let Some(principal) = person.viewer.caller.principal.clone() else {
        return WebError::NotFound.answer(&headers);
    };
    let minted = async {
        let new = new_token(&pairs, &person)?;
        let tokens = site.api().tokens.clone();
        let (workspace_id, user_id) = (person.workspace_id, person.session.user.id);
        let most = crate::auth::max_live_tokens();
        tokio::task::spawn_blocking(move || {
            tokens.create_for_user(workspace_id, user_id, &new, most)
        })
        .await
        .map_err(|e| WebError::Tool(ToolError::internal(format!("Minting failed: {e}"))))?
        .map_err(WebError::Tool)
    }
    .await;
    let (status, detail) = match &minted {
        Ok(minted) => (
            201,
            Some(format!(
                "token {} ({})",
                minted.record.id, minted.record.name
            )),
        ),
        Err(err) => (err.status().as_u16(), None),
    };
    crate::api::audited(
        site.api(),
        &principal,
        "tokens.create",
        None,
        detail,
        status,
    )
    .await;
    match minted {
        Ok(minted) => {
            let name = minted.record.name.clone();
            let token = minted.token.into_string();
            created(show(&site, &headers, &person, Some((&name, &token))).await)
        }
        Err(err) => err.answer(&headers),
    }
}

/// `POST /w/{ws}/settings/tokens/revoke`: `token` (its id).
pub async fn revoke(
    State(site): State<CloudSite>,
    Path(workspace): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let (person, pairs) = match manager_form(&site, &headers, &workspace, &body).await {
        Ok(checked) => checked,
        Err(refused) => return refused,
    };
    let Some(principal) = person.viewer.caller.principal.clone() else {
        return WebError::NotFound.answer(&headers);
    };
    let back = format!("{}/settings/tokens", layout::base(&workspace));
    let mut detail = None;
    let result: Result<serde_json::Value, WebError> = async {
        let id = number(&pairs, "token")?;
        detail = Some(format!("token {id}"));
        let tokens = site.api().tokens.clone();
        let workspace_id = person.workspace_id;
        let record =
            tokio::task::spawn_blocking(move || tokens.revoke(workspace_id, &TokenRef::Id(id)))
                .await
                .map_err(|e| WebError::Tool(ToolError::internal(format!("Revoking failed: {e}"))))?
                .map_err(WebError::Tool)?;
        site.api().forget_token(record.id);
        detail = Some(format!("token {} ({})", record.id, record.name));
        Ok(serde_json::json!({ "revoked": record.id }))
    }
    .await;
    let status = match &result {
        Ok(_) => 200,
        Err(err) => err.status().as_u16(),
    };
    crate::api::audited(
        site.api(),
        &principal,
        "tokens.revoke",
        None,
        detail,
        status,
    )
    .await;
    answer_form(&headers, result, back)
}
