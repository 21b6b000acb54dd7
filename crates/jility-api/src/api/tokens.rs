//! The token endpoints: mint, list and revoke the API tokens of the caller's workspace. Each
//! needs `full_access` and reaches the caller's workspace only ([`crate::auth::Tokens`]
//! binds every statement to it). A token's plaintext appears once, in the answer that mints
//! it; no answer carries a hash.

use axum::Extension;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Json, Response};
use mcp_common::ToolError;
use serde::{Deserialize, Serialize};

use super::body::{invalid, json_body};
use super::{ApiError, ApiState, audited, status_of};
use crate::auth::{
    NewToken, PlainToken, Principal, Scope, ScopeSet, TOKEN_PREFIX, TokenRecord, TokenRef,
};

type Answer = Result<Response, ApiError>;

const REVOKE_SHAPE: &str = "Send `{\"token\": \"jil_live_…\"}` or `{\"id\": 7}`.";
const MINT_SHAPE: &str = "Send `{\"name\": \"…\", \"scopes\": [\"tickets:read\"], \"expires_in_days\": 30}` (expires_in_days optional).";

/// The longest expiry a token may be given, in days (ten years).
pub const MAX_EXPIRES_IN_DAYS: i64 = 3650;

/// The body of `POST /api/v1/tokens`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CreateToken {
    name: String,
    scopes: Vec<String>,
    #[serde(default)]
    expires_in_days: Option<i64>,
}

/// The body of `DELETE /api/v1/tokens`: the token to revoke, given by itself (so that it
/// need not travel in a URL) or by its id.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RevokeToken {
    #[serde(default)]
    token: Option<String>,
    #[serde(default)]
    id: Option<i64>,
}

/// A token as the API shows it: never its hash nor its plaintext.
#[derive(Debug, Serialize)]
pub struct TokenView {
    pub id: i64,
    pub name: String,
    pub scopes: ScopeSet,
    /// `jil_live_AbCd`: the first characters of the token.
    pub prefix: String,
    pub created_by: String,
    pub created_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub revoked_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_used_at: Option<String>,
}

impl From<TokenRecord> for TokenView {
    fn from(record: TokenRecord) -> Self {
        Self {
            id: record.id,
            name: record.name,
            scopes: record.scopes,
            prefix: record.display_prefix,
            created_by: record.created_by,
            created_at: record.created_at,
            expires_at: record.expires_at,
            revoked_at: record.revoked_at,
            last_used_at: record.last_used_at,
        }
    }
}

/// A token just minted: its record and, this once, its plaintext.
#[derive(Serialize)]
struct Minted {
    #[serde(flatten)]
    view: TokenView,
    token: String,
}

#[derive(Serialize)]
struct Listing {
    tokens: Vec<TokenView>,
}

/// `POST /api/v1/tokens` (`full_access`): `{"name", "scopes": […], "expires_in_days"?}`;
/// 201 with the token's record and its plaintext (`token`), shown only here; 409
/// `too_many_tokens` when the workspace has as many live tokens as it may
/// ([`crate::auth::Tokens::create_limited`]).
pub async fn create(
    State(state): State<ApiState>,
    Extension(principal): Extension<Principal>,
    body: Result<Bytes, BytesRejection>,
) -> Answer {
    let mut detail = None;
    let answer = async { mint(&state, &principal, body, &mut detail).await }.await;
    audited(
        &state,
        &principal,
        "tokens.create",
        None,
        detail,
        status_of(&answer),
    )
    .await;
    answer
}

async fn mint(
    state: &ApiState,
    principal: &Principal,
    body: Result<Bytes, BytesRejection>,
    detail: &mut Option<String>,
) -> Answer {
    principal.require(Scope::FullAccess)?;
    let CreateToken {
        name,
        scopes,
        expires_in_days,
    } = json_body(body, MINT_SHAPE)?;
    let scopes = ScopeSet::new(
        scopes
            .iter()
            .map(|s| s.parse::<Scope>())
            .collect::<Result<Vec<_>, _>>()?,
    )?;
    let expires_at = match expires_in_days {
        None => None,
        Some(days) if (1..=MAX_EXPIRES_IN_DAYS).contains(&days) => {
            Some(chrono::Utc::now() + chrono::TimeDelta::days(days))
        }
        Some(days) => {
            return Err(invalid(
                format!("`expires_in_days` must be 1 to {MAX_EXPIRES_IN_DAYS}, not {days}"),
                "Give a whole number of days, or leave `expires_in_days` out for a token that does not expire.",
            ));
        }
    };
    let new = NewToken {
        name,
        scopes,
        expires_at,
        created_by: format!("token:{}", principal.token_id),
    };
    let tokens = state.tokens.clone();
    let workspace_id = principal.workspace_id;
    let most = crate::auth::max_live_tokens();
    let minted = blocking(move || tokens.create_limited(workspace_id, &new, most)).await?;
    *detail = Some(format!(
        "token {} ({})",
        minted.record.id, minted.record.name
    ));
    let answer = Minted {
        view: minted.record.into(),
        token: minted.token.into_string(),
    };
    Ok((StatusCode::CREATED, Json(answer)).into_response())
}

/// `GET /api/v1/tokens` (`full_access`): `{"tokens": […]}`, the workspace's tokens oldest
/// first, revoked and expired ones included.
pub async fn list(
    State(state): State<ApiState>,
    Extension(principal): Extension<Principal>,
) -> Answer {
    principal.require(Scope::FullAccess)?;
    let tokens = state.tokens.clone();
    let workspace_id = principal.workspace_id;
    let records = blocking(move || tokens.list(workspace_id)).await?;
    let listing = Listing {
        tokens: records.into_iter().map(TokenView::from).collect(),
    };
    Ok(Json(listing).into_response())
}

/// `DELETE /api/v1/tokens/{id_or_token}` (`full_access`): revoke a token of the workspace,
/// by id (or by the token itself); the record answers. Another workspace's token is not
/// found. The calling token may revoke itself.
pub async fn revoke(
    State(state): State<ApiState>,
    Extension(principal): Extension<Principal>,
    Path(which): Path<String>,
) -> Answer {
    let mut detail = None;
    let answer = async {
        principal.require(Scope::FullAccess)?;
        let which: TokenRef = which.parse()?;
        revoke_ref(&state, &principal, which, &mut detail).await
    }
    .await;
    audited(
        &state,
        &principal,
        "tokens.revoke",
        None,
        detail,
        status_of(&answer),
    )
    .await;
    answer
}

/// `DELETE /api/v1/tokens` (`full_access`) with `{"token": "jil_live_…"}` or `{"id": N}`:
/// the same, with the token in the body rather than the URL.
pub async fn revoke_by_body(
    State(state): State<ApiState>,
    Extension(principal): Extension<Principal>,
    body: Result<Bytes, BytesRejection>,
) -> Answer {
    let mut detail = None;
    let answer = async {
        let which = revoke_body(&principal, body)?;
        revoke_ref(&state, &principal, which, &mut detail).await
    }
    .await;
    audited(
        &state,
        &principal,
        "tokens.revoke",
        None,
        detail,
        status_of(&answer),
    )
    .await;
    answer
}

fn revoke_body(
    principal: &Principal,
    body: Result<Bytes, BytesRejection>,
) -> Result<TokenRef, ApiError> {
    principal.require(Scope::FullAccess)?;
    let which = match json_body::<RevokeToken>(body, REVOKE_SHAPE)? {
        RevokeToken {
            token: Some(token),
            id: None,
        } if token.trim().starts_with(TOKEN_PREFIX) => TokenRef::Token(PlainToken::new(token)),
        RevokeToken {
            token: None,
            id: Some(id),
        } => TokenRef::Id(id),
        _ => {
            return Err(invalid(
                "Give the token to revoke as `token` (jil_live_…) or `id`, one of the two",
                "Send `{\"token\": \"jil_live_…\"}` or `{\"id\": 12}`; list the ids with GET /api/v1/tokens.",
            ));
        }
    };
    Ok(which)
}

/// Revoke `which`; `detail` names the token revoked (by id, never by the token).
async fn revoke_ref(
    state: &ApiState,
    principal: &Principal,
    which: TokenRef,
    detail: &mut Option<String>,
) -> Answer {
    if let TokenRef::Id(id) = &which {
        *detail = Some(format!("token {id}"));
    }
    let tokens = state.tokens.clone();
    let workspace_id = principal.workspace_id;
    let record = blocking(move || tokens.revoke(workspace_id, &which)).await?;
    *detail = Some(format!("token {} ({})", record.id, record.name));
    // This process refuses it at once, the others within a second (their next lease of
    // its requests says it was revoked); its event streams end on the event
    // `Tokens::revoke` published.
    state.forget_token(record.id);
    tracing::info!(
        workspace_id,
        token_id = record.id,
        by = principal.token_id,
        "revoked an API token"
    );
    Ok(Json(TokenView::from(record)).into_response())
}

/// Run a database call off the async threads.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ToolError> + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ToolError::internal(format!("The token operation failed: {e}")))?
        .map_err(ApiError)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn views_carry_no_secret() {
        let view = TokenView::from(TokenRecord {
            id: 3,
            workspace_id: 1,
            name: "ci".into(),
            scopes: ScopeSet::full_access(),
            display_prefix: "jil_live_AbCd".into(),
            created_by: "token:1".into(),
            created_at: "2026-01-01T00:00:00.000Z".into(),
            expires_at: None,
            revoked_at: None,
            last_used_at: None,
        });
        let json = serde_json::to_value(&view).unwrap_or_default();
        assert_eq!(json["prefix"], "jil_live_AbCd");
        assert_eq!(json["scopes"], serde_json::json!(["full_access"]));
        assert!(json.get("expires_at").is_none());
        assert!(json.get("workspace_id").is_none());
    }
}
