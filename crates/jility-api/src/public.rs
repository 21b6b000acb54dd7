//! Where this server is, as its users reach it: the base of the links it hands out (invites,
//! resets) and of its OAuth metadata (the issuer, the resource `…/mcp`).
//!
//! `JILITY_PUBLIC_URL` when set (a server behind a proxy sets it: the `Host` it sees may
//! not be the one people type); else the request's own `Host`, over https when the server
//! terminates TLS. A link made from the `Host` is shown only to the person whose request
//! carried it, and an OAuth token is bound to the resource URL it was issued for, so a
//! forged `Host` gains its sender nothing.
//!
//! And how a client that has no token finds where to get one (the MCP authorization spec):
//! the `WWW-Authenticate` challenges that point to the protected-resource metadata.

use axum::http::{HeaderMap, header};

/// The server's base URL (no trailing `/`).
pub fn base(headers: &HeaderMap, tls: bool) -> String {
    if let Ok(url) = std::env::var("JILITY_PUBLIC_URL")
        && !url.trim().is_empty()
    {
        return url.trim().trim_end_matches('/').to_string();
    }
    let host = headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .filter(|h| !h.is_empty() && h.bytes().all(|b| b.is_ascii_graphic()))
        .unwrap_or("localhost");
    let scheme = if tls { "https" } else { "http" };
    format!("{scheme}://{host}")
}

/// The MCP endpoint as a resource (RFC 8707): what OAuth access tokens are bound to.
pub fn resource(headers: &HeaderMap, tls: bool) -> String {
    format!("{}{}", base(headers, tls), mcp_common::http::MCP_PATH)
}

/// The protected resource metadata of `/mcp` (RFC 9728's path for a resource with a path).
pub const RESOURCE_METADATA_PATH: &str = "/.well-known/oauth-protected-resource/mcp";

/// The paths of the authorization server (here, so that the API's layers, which answer
/// them in their shape, need nothing of `oauth/`).
pub const AUTHORIZE_PATH: &str = "/oauth/authorize";
pub const TOKEN_PATH: &str = "/oauth/token";
pub const REGISTER_PATH: &str = "/oauth/register";
pub const REVOKE_PATH: &str = "/oauth/revoke";

/// The scopes OAuth grants (never `full_access`), in the order they are shown.
pub use jility_identity::oauth::SCOPES;

/// `WWW-Authenticate` of a request to `/mcp` without a usable token: where the resource's
/// metadata is, and the scopes a client may ask for.
pub fn challenge(headers: &HeaderMap, tls: bool) -> String {
    format!(
        "Bearer resource_metadata=\"{}{RESOURCE_METADATA_PATH}\", scope=\"{}\"",
        crate::public::base(headers, tls),
        SCOPES.join(" ")
    )
}

/// `WWW-Authenticate` of a request whose token lacks `scope` (so the client can ask for it).
pub fn insufficient_scope(headers: &HeaderMap, tls: bool, scopes: &[&str]) -> String {
    format!(
        "Bearer error=\"insufficient_scope\", scope=\"{}\", resource_metadata=\"{}{RESOURCE_METADATA_PATH}\", error_description=\"The token lacks a scope this request needs\"",
        scopes.join(" "),
        crate::public::base(headers, tls),
    )
}
