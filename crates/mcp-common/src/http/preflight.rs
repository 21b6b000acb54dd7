//! What an HTTP server of the workspace answers before it looks at a token, shared by the
//! `--http` edge of the servers ([`super::serve_on`]) and any server that mounts the kit behind
//! authentication of its own:
//!
//! - a request with more than one `Host` header is refused (`400`, `invalid_request`): a
//!   server that checks the first against its allowed names could otherwise be reached by a
//!   DNS-rebinding page whose proxy or client adds a second;
//! - the paths an OAuth client probes after a `401` (the MCP authorization spec's discovery
//!   of RFC 9728 protected-resource metadata, RFC 8414 and OpenID Connect authorization-server
//!   metadata, with or without a path suffix, and dynamic client registration at
//!   `/register`, with the older `/authorize` and `/token` defaults) answer `404` with the
//!   error envelope saying the server takes bearer tokens and does not do OAuth, without a
//!   token: a client that sees that stops its OAuth attempt instead of reporting a failed
//!   registration.
//!
//! Every answer here is the JSON error envelope (`{"error": {"code", "message", "hint",
//! "retryable"}}`), as are the bearer check's ([`unauthenticated`]) and an unknown path's
//! ([`not_found`]).

use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use mcp_common_core::{ErrorClass, ErrorCode, ToolError, codes};

/// The code of a request refused for its form at the HTTP level (a duplicate `Host`).
pub const INVALID_REQUEST: ErrorCode =
    ErrorCode::new("invalid_request", ErrorClass::InvalidArguments);

/// The prefixes of the well-known metadata documents OAuth clients look for (each also with a
/// path suffix, e.g. `/.well-known/oauth-protected-resource/mcp`).
const WELL_KNOWN: [&str; 3] = [
    "/.well-known/oauth-protected-resource",
    "/.well-known/oauth-authorization-server",
    "/.well-known/openid-configuration",
];

/// The endpoints a client falls back to without metadata (2025-03-26's defaults).
const OAUTH_ENDPOINTS: [&str; 3] = ["/register", "/authorize", "/token"];

/// Whether `path` is one an OAuth client probes: a well-known metadata document (with or
/// without a suffix, or appended to a path as OpenID Connect discovery does), or a default
/// OAuth endpoint.
pub fn is_oauth_path(path: &str) -> bool {
    let path = path.trim_end_matches('/');
    WELL_KNOWN.iter().any(|prefix| {
        path == *prefix
            || path
                .strip_prefix(prefix)
                .is_some_and(|rest| rest.starts_with('/'))
    }) || path.ends_with("/.well-known/openid-configuration")
        || path.ends_with("/.well-known/oauth-authorization-server")
        || OAUTH_ENDPOINTS.contains(&path)
}

/// `{"error": envelope}` with `status`.
pub fn envelope(status: StatusCode, error: &ToolError) -> Response {
    let body = serde_json::json!({ "error": error });
    (status, axum::Json(body)).into_response()
}

/// `err` as its class's status and the envelope.
pub fn error_response(err: &ToolError) -> Response {
    let status = StatusCode::from_u16(err.class().http_status())
        .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    envelope(status, err)
}

/// The answer on an OAuth path: `404`, the server takes bearer tokens.
pub fn no_oauth() -> Response {
    error_response(
        &ToolError::not_found(
            "This server does not do OAuth: it takes a bearer token, and has no OAuth metadata, authorization or registration endpoint",
        )
        .with_hint(
            "Configure the client with the header `Authorization: Bearer <token>` (a static token, no sign-in flow) and connect again.",
        ),
    )
}

/// The answer to a request without the right bearer token: `401`, `unauthenticated`, with
/// `WWW-Authenticate: Bearer` and `message` and `hint`.
pub fn unauthenticated(message: &str, hint: &str) -> Response {
    let mut response =
        error_response(&ToolError::new(codes::UNAUTHENTICATED, message).with_hint(hint));
    response
        .headers_mut()
        .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    response
}

/// The answer on a path the server does not serve: `404`, `not_found`, with `hint`.
pub fn not_found(hint: &str) -> Response {
    error_response(&ToolError::not_found("There is no such endpoint").with_hint(hint))
}

/// The refusal of a request with `count` `Host` headers (more than one).
fn duplicate_host(count: usize) -> Response {
    error_response(
        &ToolError::new(
            INVALID_REQUEST,
            format!("The request has {count} Host headers; one is allowed"),
        )
        .with_hint(
            "Send exactly one Host header naming this server (a second one comes from a misconfigured proxy or a DNS-rebinding attempt).",
        ),
    )
}

/// The checks before authentication (a middleware): more than one `Host` is refused, an
/// OAuth path answered [`no_oauth`]; anything else goes on.
pub async fn before_auth(request: Request, next: Next) -> Response {
    if is_oauth_path(request.uri().path()) && several_hosts(&request).is_none() {
        return no_oauth();
    }
    single_host(request, next).await
}

/// More than one `Host` is refused (a middleware, for a server that does OAuth itself).
pub async fn single_host(request: Request, next: Next) -> Response {
    if let Some(hosts) = several_hosts(&request) {
        tracing::info!(hosts, "refused a request with several Host headers");
        return duplicate_host(hosts);
    }
    next.run(request).await
}

fn several_hosts(request: &Request) -> Option<usize> {
    let hosts = request.headers().get_all(header::HOST).iter().count();
    (hosts > 1).then_some(hosts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oauth_paths_are_recognised() {
        for path in [
            "/.well-known/oauth-protected-resource",
            "/.well-known/oauth-protected-resource/mcp",
            "/.well-known/oauth-protected-resource/api/v1/",
            "/.well-known/oauth-authorization-server",
            "/.well-known/oauth-authorization-server/mcp",
            "/.well-known/openid-configuration",
            "/.well-known/openid-configuration/mcp",
            "/mcp/.well-known/openid-configuration",
            "/register",
            "/register/",
            "/authorize",
            "/token",
        ] {
            assert!(is_oauth_path(path), "{path}");
        }
        for path in [
            "/mcp",
            "/api/v1/tokens",
            "/.well-known/oauth-protected-resources",
            "/registers",
            "/.well-known",
        ] {
            assert!(!is_oauth_path(path), "{path}");
        }
    }
}
