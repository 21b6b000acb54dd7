//! `POST /oauth/register`: dynamic client registration (RFC 7591) as HTTP — what is
//! registered and the limits are `jility-identity`'s (`clients`).

use std::net::{IpAddr, SocketAddr};

use axum::Json;
use axum::extract::rejection::BytesRejection;
use axum::extract::{ConnectInfo, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::{Extension, body::Bytes};

use super::Registration;
use super::errors::{OAuthError, OAuthResponse as _};

/// Whether `headers` say the body is JSON, or say nothing of its type.
fn json_or_untyped(headers: &HeaderMap) -> bool {
    let Some(value) = headers.get(header::CONTENT_TYPE) else {
        return true;
    };
    let essence = value
        .to_str()
        .unwrap_or_default()
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    essence == "application/json"
        || (essence.starts_with("application/") && essence.ends_with("+json"))
}

/// `POST /oauth/register`: a JSON registration; `201` and the client's information. Every
/// refusal is RFC 7591 JSON: a body over [`super::BODY_BYTES`] (`413`), unreadable, of
/// another content type than JSON, or not the JSON object asked for (`400`,
/// `invalid_client_metadata`).
pub async fn register(
    State(state): State<super::State>,
    connect: Option<Extension<ConnectInfo<SocketAddr>>>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let body = match body {
        Ok(body) => body,
        Err(rejection) => {
            return super::errors::body("invalid_client_metadata", &rejection).into_response();
        }
    };
    if !json_or_untyped(&headers) {
        return OAuthError::invalid_client_metadata(
            "A registration is sent as JSON (Content-Type: application/json)",
        )
        .into_response();
    }
    let registration: Registration = match serde_json::from_slice(&body) {
        Ok(r) => r,
        Err(err) => {
            return OAuthError::invalid_client_metadata(format!(
                "The registration is not the JSON object RFC 7591 describes: {}",
                mcp_common::text::clip(&err.to_string(), 200)
            ))
            .into_response();
        }
    };
    let from = connect.map_or(IpAddr::from([0, 0, 0, 0]), |Extension(ConnectInfo(a))| {
        a.ip()
    });
    let oauth = state.oauth.clone();
    let made = tokio::task::spawn_blocking(move || oauth.register(&registration, from)).await;
    match made {
        Ok(Ok(client)) => {
            // RFC 7591 §3.2.1: members without a value are left out (never `null`).
            let mut body = serde_json::json!({
                "client_id": client.client_id,
                "client_id_issued_at": chrono::Utc::now().timestamp(),
                "client_name": client.client_name,
                "redirect_uris": client.redirect_uris,
                "token_endpoint_auth_method": "none",
                "grant_types": ["authorization_code", "refresh_token"],
                "response_types": ["code"],
            });
            if let Some(uri) = &client.client_uri {
                body["client_uri"] = serde_json::Value::String(uri.clone());
            }
            (StatusCode::CREATED, Json(body)).into_response()
        }
        Ok(Err(err)) => err.into_response(),
        Err(err) => OAuthError::from(mcp_common::ToolError::internal(format!(
            "The registration failed: {err}"
        )))
        .into_response(),
    }
}
