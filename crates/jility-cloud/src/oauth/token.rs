//! `POST /oauth/token` (grant types `authorization_code` and `refresh_token`) and
//! `POST /oauth/revoke` (RFC 7009), form-encoded as RFC 6749 says. Public clients: the
//! `client_id` is in the form, and PKCE (at the code's exchange) or the rotating refresh
//! token is what proves the client. Answers are never cached. Both are limited per client
//! address, and the token endpoint per `client_id` too ([`super::limits`]: `429`); a body
//! axum cannot take is RFC 6749 JSON too (`413` over [`super::BODY_BYTES`]).

use std::net::{IpAddr, SocketAddr};

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{ConnectInfo, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use jility_web::pages::{field, form_pairs};

use super::errors::{OAuthError, OAuthResponse as _};
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

/// The client's address (unspecified when the connection's is unknown).
fn address(connect: Option<Extension<ConnectInfo<SocketAddr>>>) -> IpAddr {
    connect.map_or(IpAddr::from([0, 0, 0, 0]), |Extension(ConnectInfo(a))| {
        a.ip()
    })
}

/// `POST /oauth/token`.
pub async fn token(
    State(state): State<super::State>,
    connect: Option<Extension<ConnectInfo<SocketAddr>>>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let body = match body {
        Ok(body) => body,
        Err(rejection) => {
            return no_store(super::errors::body("invalid_request", &rejection).into_response());
        }
    };
    let pairs = form_pairs(&body);
    let oauth = state.oauth.clone();
    let from = address(connect);
    let answer = tokio::task::spawn_blocking(move || -> Result<Issued, OAuthError> {
        super::limits::admit(&oauth.db, from, field(&pairs, "client_id"))?;
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
pub async fn revoke(
    State(state): State<super::State>,
    connect: Option<Extension<ConnectInfo<SocketAddr>>>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let body = match body {
        Ok(body) => body,
        Err(rejection) => {
            return super::errors::body("invalid_request", &rejection).into_response();
        }
    };
    let pairs = form_pairs(&body);
    let Some(token) = field(&pairs, "token").map(str::to_string) else {
        return OAuthError::invalid_request("The request has no `token`").into_response();
    };
    let oauth = state.oauth.clone();
    let from = address(connect);
    let revoked = tokio::task::spawn_blocking(move || {
        super::limits::admit(&oauth.db, from, None)?;
        oauth.revoke_token(&token).map_err(OAuthError::from)
    })
    .await;
    match revoked {
        Ok(Ok(())) => no_store(StatusCode::OK.into_response()),
        Ok(Err(err)) => err.into_response(),
        Err(err) => OAuthError::from(mcp_common::ToolError::internal(format!(
            "The revocation failed: {err}"
        )))
        .into_response(),
    }
}
