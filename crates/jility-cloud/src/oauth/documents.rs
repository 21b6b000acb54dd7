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

use std::net::SocketAddr;
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
    if !allow_private && addrs.iter().any(|a| !jility_hooks::fence::public(a.ip())) {
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
