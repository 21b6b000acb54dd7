//! Client ID Metadata Documents: a client whose `client_id` is an HTTPS URL is described by
//! the JSON document at that URL (`client_id`, `client_name`, `redirect_uris`, …), which
//! this server fetches when the client first comes to the authorization page and keeps for
//! [`CACHE_SECS`].
//!
//! The fetch is a request this server makes on a stranger's behalf, so it is fenced in:
//! `https` only; the host's addresses are resolved first and every one must be public (no
//! loopback, private, link-local, shared, multicast or unspecified address — and an IPv6
//! address that carries an IPv4 one, mapped, translated, compatible, NAT64, 6to4 or Teredo,
//! is judged by that IPv4 address), and the request connects to the address that was checked (no second
//! lookup for a rebinding DNS to change); no redirects; [`FETCH_SECS`] in all; at most
//! [`MAX_DOCUMENT_BYTES`]. An operator who runs clients on their own network may allow
//! private addresses and plain `http` with `JILITY_OAUTH_ALLOW_PRIVATE_CLIENTS=1`, and trust
//! its certificate authority with `JILITY_OAUTH_CLIENT_CA=file.pem`.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::Duration;

use chrono::TimeDelta;
use serde::Deserialize;
use url::Url;

use super::clients::{Client, check_redirect_uri};
use super::{OAuth, OAuthError};
use crate::accounts::{now, time_text};

/// How long a fetched document is kept before it is fetched again (1 hour).
pub const CACHE_SECS: i64 = 60 * 60;
/// The whole fetch, connection included.
pub const FETCH_SECS: u64 = 5;
/// The largest document taken.
pub const MAX_DOCUMENT_BYTES: usize = 64 * 1024;

/// Whether `client_id` names a metadata document (rather than a registered client).
pub fn is_document_id(client_id: &str) -> bool {
    client_id.starts_with("https://") || client_id.starts_with("http://")
}

/// Private addresses and `http` allowed (`JILITY_OAUTH_ALLOW_PRIVATE_CLIENTS=1`).
pub fn private_allowed() -> bool {
    std::env::var("JILITY_OAUTH_ALLOW_PRIVATE_CLIENTS").is_ok_and(|v| v.trim() == "1")
}

/// An address a fetch may go to: a public one (unless private ones are allowed). An IPv6
/// address that carries an IPv4 one ([`embedded_ipv4`]) is judged by that IPv4 address.
fn public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => public_v4(v4),
        IpAddr::V6(v6) => match embedded_ipv4(v6) {
            Some(v4) => public_v4(v4),
            None => public_v6(v6),
        },
    }
}

fn public_v4(v4: Ipv4Addr) -> bool {
    let [a, b, ..] = v4.octets();
    !(v4.is_loopback()
        || v4.is_private()
        || v4.is_link_local()
        || v4.is_unspecified()
        || v4.is_broadcast()
        || v4.is_multicast()
        || v4.is_documentation()
        || a == 0
        || (a == 100 && (64..128).contains(&b)) // shared address space (RFC 6598)
        || (a == 198 && (18..20).contains(&b)) // benchmarking (RFC 2544)
        || a >= 240)
}

fn public_v6(v6: Ipv6Addr) -> bool {
    let s = v6.segments();
    !(v6.is_loopback()
        || v6.is_unspecified()
        || v6.is_multicast()
        || (s[0] & 0xfe00) == 0xfc00 // unique local
        || (s[0] & 0xffc0) == 0xfe80 // link-local
        || (s[0] & 0xffc0) == 0xfec0 // site-local (deprecated)
        || (s[0] == 0x0064 && s[1] == 0xff9b && s[2] == 0x0001) // local-use NAT64 (RFC 8215)
        || (s[0] == 0x0100 && s[1..4] == [0, 0, 0]) // discard-only (RFC 6666)
        || (s[0] == 0x2001 && s[1] == 0x0002 && s[2] == 0) // benchmarking (RFC 5180)
        || (s[0] == 0x2001 && s[1] == 0x0db8)) // documentation
}

/// The IPv4 address an IPv6 address stands for, in the forms that carry one:
/// IPv4-mapped `::ffff:a.b.c.d`, IPv4-translated `::ffff:0:a.b.c.d`, IPv4-compatible
/// `::a.b.c.d` (not `::` or `::1`), NAT64's well-known prefix `64:ff9b::/96` (RFC 6052, the
/// last 32 bits), 6to4 `2002::/16` (bits 16 to 48) and Teredo `2001::/32` (the client's
/// address: the last 32 bits inverted). The local-use NAT64 prefix `64:ff9b:1::/48`
/// (RFC 8215) places the IPv4 address where its operator's prefix length says, so it is
/// refused whole ([`public_v6`]).
fn embedded_ipv4(v6: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = v6.segments();
    let [.., a, b, c, d] = v6.octets();
    let low = u32::from_be_bytes([a, b, c, d]);
    let tail = Ipv4Addr::from(low);
    match s {
        [0, 0, 0, 0, 0, 0xffff, _, _] | [0, 0, 0, 0, 0xffff, 0, _, _] => Some(tail),
        [0, 0, 0, 0, 0, 0, _, _] if low > 1 => Some(tail),
        [0x0064, 0xff9b, 0, 0, 0, 0, _, _] => Some(tail),
        [0x2002, hi, lo, ..] => Some(Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo))),
        [0x2001, 0, ..] => Some(Ipv4Addr::from(!low)),
        _ => None,
    }
}

/// Certificates to trust beside the system's for documents on the operator's own network
/// (`JILITY_OAUTH_CLIENT_CA`: a PEM file of one or more).
fn extra_roots() -> Result<Vec<reqwest::Certificate>, OAuthError> {
    let Some(path) = std::env::var_os("JILITY_OAUTH_CLIENT_CA").filter(|p| !p.is_empty()) else {
        return Ok(Vec::new());
    };
    let pem = std::fs::read(&path).map_err(|e| {
        OAuthError::from(mcp_common::ToolError::internal(format!(
            "Cannot read JILITY_OAUTH_CLIENT_CA ({}): {e}",
            std::path::Path::new(&path).display()
        )))
    })?;
    reqwest::Certificate::from_pem_bundle(&pem).map_err(|e| {
        OAuthError::from(mcp_common::ToolError::internal(format!(
            "JILITY_OAUTH_CLIENT_CA holds no usable certificate: {e}"
        )))
    })
}

/// The document as published (members beyond these are ignored).
#[derive(Debug, Deserialize)]
struct Document {
    client_id: String,
    client_name: Option<String>,
    client_uri: Option<String>,
    #[serde(default)]
    redirect_uris: Vec<String>,
    token_endpoint_auth_method: Option<String>,
}

fn refuse(what: impl Into<String>) -> OAuthError {
    OAuthError::invalid_client(what)
}

/// Fetch and check the document at `client_id`: the client it describes.
async fn fetch(
    client_id: &str,
    allow_private: bool,
) -> Result<(String, Option<String>, Vec<String>), OAuthError> {
    let url = Url::parse(client_id).map_err(|_| refuse("The client_id is not a URL"))?;
    let secure = url.scheme() == "https";
    if !(secure || (allow_private && url.scheme() == "http")) {
        return Err(refuse("A client_id URL must be https"));
    }
    if url.fragment().is_some() || !url.username().is_empty() || url.password().is_some() {
        return Err(refuse("A client_id URL has no fragment or credentials"));
    }
    if url.path() == "/" || url.path().is_empty() {
        return Err(refuse("A client_id URL names a document (it has a path)"));
    }
    let host = url
        .host_str()
        .ok_or_else(|| refuse("The client_id URL has no host"))?
        .to_string();
    let port = url.port_or_known_default().unwrap_or(443);
    let lookup = tokio::time::timeout(
        Duration::from_secs(FETCH_SECS),
        tokio::net::lookup_host((host.trim_start_matches('[').trim_end_matches(']'), port)),
    )
    .await
    .map_err(|_| refuse("The client_id's host did not resolve in time"))?
    .map_err(|_| refuse("The client_id's host does not resolve"))?;
    let addrs: Vec<SocketAddr> = lookup.collect();
    let Some(first) = addrs.first().copied() else {
        return Err(refuse("The client_id's host does not resolve"));
    };
    if !allow_private && addrs.iter().any(|a| !public(a.ip())) {
        tracing::warn!(host = %host, "refused a client document on a private address");
        return Err(refuse(
            "The client_id's host is on a private, loopback or link-local address: its document is not fetched",
        ));
    }
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut builder = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(FETCH_SECS))
        .resolve(&host, first)
        .user_agent("jility-oauth/1");
    for cert in extra_roots()? {
        builder = builder.add_root_certificate(cert);
    }
    let http = builder.build().map_err(|e| {
        OAuthError::from(mcp_common::ToolError::internal(format!(
            "no HTTP client: {e}"
        )))
    })?;
    let mut response = http
        .get(url.clone())
        .header("accept", "application/json")
        .send()
        .await
        .map_err(|e| {
            let mut cause = e.to_string();
            let mut source = std::error::Error::source(&e);
            while let Some(inner) = source {
                cause = inner.to_string();
                source = inner.source();
            }
            tracing::info!(client_id, cause = %cause, "cannot fetch a client's metadata document");
            // The cause stays in the log: the answer says only what kind of failure it was,
            // so that the fetch cannot be used to map the server's outbound network.
            let kind = if e.is_timeout() {
                "it did not answer in time"
            } else if e.is_connect() {
                "no connection could be made"
            } else {
                "the exchange failed"
            };
            refuse(format!(
                "The client's metadata document could not be fetched: {kind}"
            ))
        })?;
    if !response.status().is_success() {
        return Err(refuse(format!(
            "The client's metadata document answered {}",
            response.status().as_u16()
        )));
    }
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|_| refuse("The client's metadata document could not be read"))?
    {
        body.extend_from_slice(&chunk);
        if body.len() > MAX_DOCUMENT_BYTES {
            return Err(refuse("The client's metadata document is too large"));
        }
    }
    let document: Document = serde_json::from_slice(&body)
        .map_err(|_| refuse("The client's metadata document is not the JSON it should be"))?;
    if document.client_id != client_id {
        return Err(refuse(
            "The client's metadata document names another client_id than its own URL",
        ));
    }
    // What is kept of it must be text PostgreSQL can hold (the name drops control
    // characters below).
    if document
        .redirect_uris
        .iter()
        .chain(document.client_uri.iter())
        .any(|text| text.contains('\0'))
    {
        return Err(refuse(
            "The client's metadata document holds a NUL character",
        ));
    }
    if document
        .token_endpoint_auth_method
        .as_deref()
        .is_some_and(|m| m != "none")
    {
        return Err(refuse(
            "Only public clients are taken (token_endpoint_auth_method none)",
        ));
    }
    if document.redirect_uris.is_empty() || document.redirect_uris.len() > 10 {
        return Err(refuse(
            "The client's metadata document lists 1 to 10 redirect_uris",
        ));
    }
    let uris = document
        .redirect_uris
        .iter()
        .map(|u| check_redirect_uri(u))
        .collect::<Result<Vec<_>, _>>()?;
    let name = document
        .client_name
        .as_deref()
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .map(|n| n.chars().filter(|c| !c.is_control()).take(100).collect())
        .unwrap_or_else(|| host.clone());
    let client_uri = document
        .client_uri
        .filter(|u| u.starts_with("https://") && u.len() <= 500);
    Ok((name, client_uri, uris))
}

/// The client a metadata-document `client_id` describes: kept, or fetched now (and
/// kept [`CACHE_SECS`]).
pub async fn document_client(oauth: &OAuth, client_id: &str) -> Result<Client, OAuthError> {
    let keeper = oauth.clone();
    let id = client_id.to_string();
    let fresh_after = time_text(now() - TimeDelta::seconds(CACHE_SECS));
    let kept = tokio::task::spawn_blocking(move || keeper.kept_document(&id, &fresh_after))
        .await
        .map_err(|e| OAuthError::from(mcp_common::ToolError::internal(format!("{e}"))))??;
    if let Some(client) = kept {
        return Ok(client);
    }
    let (name, client_uri, uris) = fetch(client_id, private_allowed()).await?;
    let keeper = oauth.clone();
    let id = client_id.to_string();
    tokio::task::spawn_blocking(move || {
        keeper.keep_document(&id, &name, client_uri.as_deref(), &uris)
    })
    .await
    .map_err(|e| OAuthError::from(mcp_common::ToolError::internal(format!("{e}"))))?
    .map_err(OAuthError::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_public_addresses_are_fetched() {
        for private in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "::1",
            "fe80::1",
            "fd00::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "::ffff:0:127.0.0.1",
            "::127.0.0.1",
            "::10.0.0.1",
            "::169.254.169.254",
            "64:ff9b::127.0.0.1",
            "64:ff9b::10.1.2.3",
            "64:ff9b::169.254.169.254",
            "64:ff9b:1::1.1.1.1",
            "64:ff9b:1:7f00:1::",
            "2002:7f00:1::1",
            "2002:a9fe:a9fe::",
            "2002:c0a8:101:1:2:3:4:5",
            "2001:0:4136:e378:8000:63bf:80ff:fffe", // Teredo: client 127.0.0.1
            "2001:0:4136:e378:8000:63bf:f5ff:fffe", // Teredo: client 10.0.0.1
            "2001:0:4136:e378:8000:63bf:5601:5601", // Teredo: client 169.254.169.254
            "100::1",
            "2001:2::1",
            "224.0.0.1",
            "255.255.255.255",
        ] {
            assert!(!public(private.parse().unwrap()), "{private}");
        }
        for open in [
            "93.184.216.34",
            "2606:2800:220:1:248:1893:25c8:1946",
            "1.1.1.1",
            "::ffff:1.1.1.1",
            "::1.1.1.1",
            "64:ff9b::1.1.1.1",
            "2002:101:101::1",
            "2001:0:4136:e378:8000:63bf:fefe:fefe", // Teredo: client 1.1.1.1
        ] {
            assert!(public(open.parse().unwrap()), "{open}");
        }
    }

    #[test]
    fn the_ipv4_inside_an_ipv6_address_is_found() {
        let cases = [
            ("::ffff:10.0.0.1", Some("10.0.0.1")),
            ("::ffff:0:10.0.0.1", Some("10.0.0.1")),
            ("::10.0.0.1", Some("10.0.0.1")),
            ("::1", None),
            ("::", None),
            ("64:ff9b::a9fe:a9fe", Some("169.254.169.254")),
            ("2002:a00:1::", Some("10.0.0.1")),
            ("2001:0:4136:e378:8000:63bf:f5ff:fffe", Some("10.0.0.1")),
            ("2001:db8::1", None),
            ("2606:4700::1111", None),
        ];
        for (v6, v4) in cases {
            let found = embedded_ipv4(v6.parse().unwrap()).map(|a| a.to_string());
            assert_eq!(found.as_deref(), v4, "{v6}");
        }
    }
}
