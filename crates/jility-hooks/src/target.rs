//! Where a subscription may send: its URL's rules, and the address a delivery connects to.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use jility_core::errors::INVALID_INPUT;
use mcp_common_core::{ToolError, text::clip};
use url::Url;

use crate::fence::{self, Refusal};

/// Longest URL kept, in bytes.
pub const MAX_URL_BYTES: usize = 2_000;

/// How long resolving a host may take.
pub const RESOLVE_SECS: u64 = 5;

/// What the operator allows (`JILITY_WEBHOOKS_ALLOW_PRIVATE=1`): targets on private,
/// loopback and link-local addresses, and plain `http` to loopback.
pub fn private_allowed() -> bool {
    std::env::var("JILITY_WEBHOOKS_ALLOW_PRIVATE").is_ok_and(|v| v.trim() == "1")
}

fn refused(message: impl Into<String>, hint: &str) -> ToolError {
    ToolError::new(INVALID_INPUT, message).with_hint(hint)
}

const PRIVATE_HINT: &str = "Webhooks go to public https addresses; an operator who runs receivers on their own network may allow private ones with JILITY_WEBHOOKS_ALLOW_PRIVATE=1.";

/// `text` as a subscription's URL: `https` (plain `http` only to a loopback address, and
/// only when private targets are allowed), no credentials or fragment, at most
/// [`MAX_URL_BYTES`].
pub fn parse(text: &str, allow_private: bool) -> Result<Url, ToolError> {
    let text = text.trim();
    if text.len() > MAX_URL_BYTES {
        return Err(refused(
            format!("The URL is longer than {MAX_URL_BYTES} bytes"),
            "Give the receiver's address.",
        ));
    }
    let url = Url::parse(text).map_err(|e| {
        refused(
            format!("'{}' is not a URL: {e}", clip(text, 80)),
            "Give an absolute URL such as https://hooks.example.com/jility.",
        )
    })?;
    if !url.username().is_empty() || url.password().is_some() || url.fragment().is_some() {
        return Err(refused(
            "A webhook URL has no credentials or fragment",
            "Authenticate deliveries with their signature (webhook-signature), not the URL.",
        ));
    }
    let Some(host) = url.host_str().filter(|h| !h.is_empty()) else {
        return Err(refused(
            "The URL has no host",
            "Give the receiver's address.",
        ));
    };
    match url.scheme() {
        "https" => {}
        "http" if allow_private && loopback_literal_or_localhost(host) => {}
        "http" => {
            return Err(refused(
                "A webhook URL must be https",
                "Use https; plain http is taken only for a receiver on this machine (127.0.0.1, ::1, localhost), and only with JILITY_WEBHOOKS_ALLOW_PRIVATE=1.",
            ));
        }
        other => {
            return Err(refused(
                format!("A webhook URL must be https, not {}", clip(other, 20)),
                "Give an https URL.",
            ));
        }
    }
    Ok(url)
}

fn loopback_literal_or_localhost(host: &str) -> bool {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    bare.eq_ignore_ascii_case("localhost")
        || bare.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// The address a request to `url` connects to: its host resolved and checked
/// ([`fence::resolve_checked`]); a plain-`http` URL must also resolve to loopback.
pub async fn address(url: &Url, allow_private: bool) -> Result<SocketAddr, ToolError> {
    let host = url.host_str().unwrap_or_default();
    let port = url.port_or_known_default().unwrap_or(443);
    let addr = fence::resolve_checked(host, port, Duration::from_secs(RESOLVE_SECS), allow_private)
        .await
        .map_err(|refusal| match refusal {
            Refusal::Unresolved => ToolError::new(
                jility_core::errors::NETWORK_ERROR,
                format!("The host {} does not resolve", clip(host, 80)),
            )
            .with_hint("Check the name; a host that resolves later is tried again."),
            Refusal::Private(_) => refused(
                format!(
                    "The host {} is on a private, loopback or link-local address",
                    clip(host, 80)
                ),
                PRIVATE_HINT,
            ),
        })?;
    if url.scheme() == "http" && !addr.ip().is_loopback() {
        return Err(refused(
            "A plain http webhook must be on this machine's loopback address",
            "Use https.",
        ));
    }
    Ok(addr)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_held_to_their_rules() {
        assert!(parse("https://hooks.example.com/x", false).is_ok());
        for bad in [
            "http://hooks.example.com/x",
            "http://127.0.0.1:9/x",
            "ftp://example.com/",
            "https://user:pw@example.com/",
            "https://example.com/#frag",
            "not a url",
        ] {
            assert!(parse(bad, false).is_err(), "{bad}");
        }
        assert!(parse("http://127.0.0.1:9/x", true).is_ok());
        assert!(parse("http://[::1]:9/x", true).is_ok());
        assert!(parse("http://10.0.0.1/x", true).is_err());
        assert!(parse(&format!("https://e.com/{}", "a".repeat(3000)), false).is_err());
    }
}
