//! `POST /oauth/token` (grant types `authorization_code` and `refresh_token`) and
//! `POST /oauth/revoke` (RFC 7009), form-encoded as RFC 6749 says. Public clients: the
//! `client_id` is in the form, and PKCE (at the code's exchange) or the rotating refresh
//! token is what proves the client. Answers are never cached.

use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use jility_web::pages::{field, form_pairs};

use super::OAuthError;
use super::grants::Issued;

fn no_store(mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(header::PRAGMA, HeaderValue::from_static("no-cache"));
    response
}

fn required<'a>(pairs: &'a [(String, String)], name: &str) -> Result<&'a str, OAuthError> {
    field(pairs, name)
        .filter(|v| !v.is_empty())
        .ok_or_else(|| OAuthError::invalid_request(format!("The request has no `{name}`")))
}

/// `POST /oauth/token`.
pub async fn token(State(state): State<super::State>, body: Bytes) -> Response {
    let pairs = form_pairs(&body);
    let oauth = state.oauth.clone();
    let answer = tokio::task::spawn_blocking(move || -> Result<Issued, OAuthError> {
        let grant_type = required(&pairs, "grant_type")?;
        let client_id = required(&pairs, "client_id")?;
        let resource = field(&pairs, "resource").filter(|r| !r.is_empty());
        match grant_type {
            "authorization_code" => oauth.exchange_code(
                required(&pairs, "code")?,
                client_id,
                required(&pairs, "redirect_uri")?,
                required(&pairs, "code_verifier")?,
                resource,
            ),
            "refresh_token" => oauth.refresh(
                required(&pairs, "refresh_token")?,
                client_id,
                field(&pairs, "scope"),
                resource,
            ),
            other => Err(OAuthError::unsupported_grant_type(format!(
                "The grant type `{}` is not offered (authorization_code and refresh_token are)",
                mcp_common::text::clip(other, 40)
            ))),
        }
    })
    .await;
    let issued = match answer {
        Ok(Ok(issued)) => issued,
        Ok(Err(err)) => return err.into_response(),
        Err(err) => {
            return OAuthError::from(mcp_common::ToolError::internal(format!(
                "The token request failed: {err}"
            )))
            .into_response();
        }
    };
    no_store(
        (
            StatusCode::OK,
            Json(serde_json::json!({
                "access_token": issued.access_token.expose(),
                "token_type": "Bearer",
                "expires_in": issued.expires_in,
                "refresh_token": issued.refresh_token,
                "scope": issued.scope,
            })),
        )
            .into_response(),
    )
}

/// `POST /oauth/revoke`: `token` (access or refresh); the grant it belongs to ends. `200`
/// whether or not the token was known (RFC 7009 §2.2).
pub async fn revoke(State(state): State<super::State>, body: Bytes) -> Response {
    let pairs = form_pairs(&body);
    let Some(token) = field(&pairs, "token").map(str::to_string) else {
        return OAuthError::invalid_request("The request has no `token`").into_response();
    };
    let oauth = state.oauth.clone();
    match tokio::task::spawn_blocking(move || oauth.revoke_token(&token)).await {
        Ok(Ok(())) => no_store(StatusCode::OK.into_response()),
        Ok(Err(err)) => OAuthError::from(err).into_response(),
        Err(err) => OAuthError::from(mcp_common::ToolError::internal(format!(
            "The revocation failed: {err}"
        )))
        .into_response(),
    }
}
