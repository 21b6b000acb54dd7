//! Where this server is, as its users reach it: the base of the links it hands out (invites,
//! resets) and of its OAuth metadata (the issuer, the resource `…/mcp`).
//!
//! `JILITY_PUBLIC_URL` when set (a server behind a proxy sets it: the `Host` it sees may
//! not be the one people type); else the request's own `Host`, over https when the server
//! terminates TLS. A link made from the `Host` is shown only to the person whose request
//! carried it, and an OAuth token is bound to the resource URL it was issued for, so a
//! forged `Host` gains its sender nothing.

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
