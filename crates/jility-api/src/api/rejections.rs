//! The error envelope for what axum answers before a handler runs, in one place: a path that
//! cannot be decoded (`%FF`, bad percent-encoding), a method the route does not take (`405`,
//! its `Allow` header kept), a body over the limit or of the wrong type, and whatever else an
//! extractor refuses in plain text. Every such answer of a REST path becomes
//! `{"error": envelope}` with the same status, a message saying what was refused (axum's own
//! words, clipped, after ours) and a hint; answers that are JSON already (the handlers', the
//! guard's, the fallback's) pass unchanged. `/mcp` keeps the JSON-RPC bodies the MCP endpoint
//! gives its refusals.

use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;
use mcp_common::{ErrorClass, ErrorCode, ToolError, codes};

use jility_core::errors::{self, clip};

/// The code of a method a path does not take (`405`; the `Allow` header lists those it does).
pub const METHOD_NOT_ALLOWED: ErrorCode =
    ErrorCode::new("method_not_allowed", ErrorClass::InvalidArguments);

/// How much of a plain-text refusal is read to quote it.
const MOST_QUOTED: usize = 4096;

/// Where the API's paths are described, for the hints.
const DESCRIBED: &str = "the paths, methods and bodies are in /api/v1/openapi.json";

/// Whether `path` is the MCP endpoint's (whose refusals are JSON-RPC).
fn is_mcp(path: &str) -> bool {
    let mcp = mcp_common::http::MCP_PATH;
    path == mcp
        || path
            .strip_prefix(mcp)
            .is_some_and(|rest| rest.starts_with('/'))
}

fn is_json(response: &Response) -> bool {
    response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"))
}

/// Give every error answer of a REST path that is not JSON the envelope (a middleware).
pub async fn as_envelope(request: Request, next: Next) -> Response {
    if is_mcp(request.uri().path()) {
        return next.run(request).await;
    }
    let method = request.method().clone();
    let path = clip(request.uri().path());
    let response = next.run(request).await;
    let status = response.status();
    if !(status.is_client_error() || status.is_server_error()) || is_json(&response) {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let text = axum::body::to_bytes(body, MOST_QUOTED)
        .await
        .unwrap_or_default();
    let text = String::from_utf8_lossy(&text);
    let error = describe(status, text.trim(), &method, &path);
    if status.is_server_error() {
        tracing::warn!(%status, code = %error.code, message = %error.message, "request failed before its handler");
    }
    let body = serde_json::json!({ "error": error }).to_string();
    parts.headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(body))
}

/// The envelope of a refusal with `status` and axum's `text`, for `method` on `path`.
fn describe(status: StatusCode, text: &str, method: &Method, path: &str) -> ToolError {
    let quoted = |ours: &str| {
        if text.is_empty() {
            ours.to_string()
        } else {
            format!("{ours}: {}", clip(text))
        }
    };
    match status {
        StatusCode::BAD_REQUEST if text.starts_with("Invalid URL") => ToolError::new(
            errors::INVALID_INPUT,
            quoted("The request's path cannot be decoded"),
        )
        .with_hint(format!(
            "Percent-encode each path segment as UTF-8 (ticket numbers such as TASK-1 need no encoding); {DESCRIBED}."
        )),
        // The method router adds its `Allow` header outside this middleware: the hint
        // points at it rather than repeat it.
        StatusCode::METHOD_NOT_ALLOWED => ToolError::new(
            METHOD_NOT_ALLOWED,
            format!("{path} does not take {method}"),
        )
        .with_hint(format!(
            "Use a method the answer's `Allow` header lists; {DESCRIBED}."
        )),
        StatusCode::PAYLOAD_TOO_LARGE => ToolError::new(
            errors::INVALID_INPUT,
            format!(
                "The request body is larger than {} bytes",
                super::MAX_BODY_BYTES
            ),
        )
        .with_hint("Send a smaller JSON body (split a large batch into several)."),
        StatusCode::UNSUPPORTED_MEDIA_TYPE => ToolError::new(
            errors::INVALID_INPUT,
            quoted("The request body's content type is not accepted"),
        )
        .with_hint(format!(
            "Send the body as JSON with `Content-Type: application/json`; {DESCRIBED}."
        )),
        StatusCode::NOT_FOUND => ToolError::not_found(quoted("There is no such endpoint"))
            .with_hint(format!("{DESCRIBED}; MCP is at /mcp.")),
        StatusCode::UNAUTHORIZED => {
            ToolError::new(codes::UNAUTHENTICATED, quoted("The request is not authenticated"))
                .with_hint("Send the token as `Authorization: Bearer jil_live_…`.")
        }
        StatusCode::FORBIDDEN => {
            ToolError::new(codes::PERMISSION_DENIED, quoted("The request is refused"))
        }
        StatusCode::SERVICE_UNAVAILABLE => {
            ToolError::new(codes::UNAVAILABLE, quoted("The server cannot answer now"))
                .with_hint("Try again in a few seconds.")
        }
        s if s.is_server_error() => {
            ToolError::internal(quoted("The server failed to read the request"))
        }
        _ => ToolError::new(errors::INVALID_INPUT, quoted("The request cannot be read"))
            .with_hint(format!("Check the request: {DESCRIBED}.")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_are_described() {
        let path = describe(
            StatusCode::BAD_REQUEST,
            "Invalid URL: Invalid UTF-8 in `ticket_id`",
            &Method::GET,
            "/api/v1/tickets/%FF",
        );
        assert_eq!(path.code, errors::INVALID_INPUT);
        assert!(path.message.contains("path"), "{}", path.message);
        let method = describe(
            StatusCode::METHOD_NOT_ALLOWED,
            "",
            &Method::PATCH,
            "/api/v1/tickets",
        );
        assert_eq!(method.code, METHOD_NOT_ALLOWED);
        assert!(method.message.contains("PATCH"), "{}", method.message);
        assert!(is_mcp("/mcp") && is_mcp("/mcp/x") && !is_mcp("/mcpx"));
    }
}
