//! Step-up for OAuth clients at `/mcp` (the MCP authorization spec's scope challenge): a
//! `tools/call` of a tool whose scope the client's grant lacks is answered `403` with
//! `WWW-Authenticate: Bearer error="insufficient_scope", scope="…"` before MCP sees it, so
//! the client can send the person back to approve more. API tokens, which cannot ask for
//! more, keep the tool's own `permission_denied` answer.

use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use jility_core::errors;
use mcp_common::ToolError;
use serde_json::Value;

use super::ApiError;
use crate::auth::Principal;

/// The scopes the JSON-RPC message(s) in `body` need beyond `principal`'s (tool calls only).
fn missing(principal: &Principal, body: &[u8]) -> Vec<&'static str> {
    let Ok(message) = serde_json::from_slice::<Value>(body) else {
        return Vec::new();
    };
    let messages = match &message {
        Value::Array(batch) => batch.iter().collect(),
        one => vec![one],
    };
    let mut out: Vec<&'static str> = Vec::new();
    for message in messages {
        if message["method"] != "tools/call" {
            continue;
        }
        let Some(op) = message["params"]["name"]
            .as_str()
            .and_then(jility_core::ops::describe_tool)
        else {
            continue;
        };
        if !principal.allows(op.scope) && !out.contains(&op.scope.as_str()) {
            out.push(op.scope.as_str());
        }
    }
    out
}

/// `request` as it came (its body read and put back), or the `403` that asks for more.
pub async fn check(
    principal: &Principal,
    request: Request,
    tls: bool,
) -> Result<Request, Response> {
    let at_mcp = request.uri().path() == mcp_common::http::MCP_PATH;
    if principal.grant_id.is_none() || request.method() != axum::http::Method::POST || !at_mcp {
        return Ok(request);
    }
    let (parts, body) = request.into_parts();
    let bytes = match axum::body::to_bytes(body, super::MAX_BODY_BYTES).await {
        Ok(bytes) => bytes,
        Err(_) => {
            return Err(ApiError(
                ToolError::new(errors::INVALID_INPUT, "The request body could not be read")
                    .with_hint(format!("Send at most {} bytes.", super::MAX_BODY_BYTES)),
            )
            .into_response());
        }
    };
    let needed = missing(principal, &bytes);
    if needed.is_empty() {
        return Ok(Request::from_parts(parts, Body::from(bytes)));
    }
    tracing::info!(scopes = ?needed, "asked an OAuth client to step up");
    let mut response = ApiError(
        ToolError::new(
            errors::PERMISSION_DENIED,
            format!("This client was not granted {}", needed.join(", ")),
        )
        .with_hint("Sign in again and approve the scope asked for, or ask a person with a role that allows it."),
    )
    .into_response();
    if let Ok(value) = HeaderValue::from_str(&crate::public::insufficient_scope(
        &parts.headers,
        tls,
        &needed,
    )) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    Err(response)
}
