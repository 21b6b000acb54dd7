//! A small blocking client of the REST API of `jility serve`, for the command line
//! (`jility auth …`, `jility audit`): where the API is (`JILITY_API_URL`), which token to send
//! (`JILITY_API_TOKEN`, else the one `jility auth login` stored), and the API's answers and
//! errors as [`ToolError`]s.
//!
//! The token never appears in an error or a log line: it travels only in the
//! `Authorization` header. An unreachable API is [`errors::NETWORK_ERROR`] (retryable), naming the
//! URL.

use std::path::PathBuf;

use mcp_common_core::{ErrorCode, ToolError, WireError, codes};
use reqwest::Method;
use serde_json::Value;

use jility_core::errors;
use jility_core::ops::API_PREFIX;
use jility_core::token::{PlainToken, TOKEN_PREFIX, is_well_formed};

pub(crate) use crate::config::{CONNECT_TIMEOUT, REQUEST_TIMEOUT};
pub use crate::config::{URL_VAR, token_file, write_private};

/// The token to send; when unset, the one `jility auth login` stored.
pub const TOKEN_VAR: &str = "JILITY_API_TOKEN";

/// The header that makes a write idempotent (`jility serve` keeps its keys 24 hours).
pub const IDEMPOTENCY_KEY: &str = "Idempotency-Key";

/// A fresh idempotency key: 128 random bits, in hex.
pub fn idempotency_key() -> Result<String, ToolError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes)
        .map_err(|e| ToolError::internal(format!("The system's random generator failed: {e}")))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Store `token` in [`token_file`]: the directory made with mode 0700, the file written
/// with mode 0600 to a temporary name, then renamed over the old one (atomic). The format
/// is checked first; the token is never echoed.
pub fn store_token(token: &PlainToken) -> Result<PathBuf, ToolError> {
    if !is_well_formed(token.expose()) {
        return Err(ToolError::new(errors::INVALID_INPUT, "The token is malformed").with_hint(
            format!(
                "A jility token is `{TOKEN_PREFIX}` followed by at least 32 letters and digits; check for a typo or a cut-off copy. Nothing was stored."
            ),
        ));
    }
    let path = token_file()?;
    let mut text = token.expose().as_bytes().to_vec();
    text.push(b'\n');
    write_private(&path, &text)?;
    Ok(path)
}

/// The API's root (`https://host`): [`api_base`] without `/api/v1`.
pub fn api_root() -> Result<String, ToolError> {
    let base = api_base()?;
    Ok(base.strip_suffix(API_PREFIX).unwrap_or(&base).to_string())
}

/// A token the environment gives: `JILITY_API_TOKEN`, else the one `jility auth login
/// --token` stored; `None` when there is neither (then a sign-in's credentials may serve).
pub fn static_token() -> Result<Option<PlainToken>, ToolError> {
    match api_token_only() {
        Ok(token) => Ok(Some(token)),
        Err(err) if err.code == codes::UNAUTHENTICATED => Ok(None),
        Err(err) => Err(err),
    }
}

/// The token to send: `JILITY_API_TOKEN`, else the stored one, else the access token of a
/// sign-in to this API (`jility auth login`), refreshed first when it is about to expire.
pub fn api_token() -> Result<PlainToken, ToolError> {
    if let Some(token) = static_token()? {
        return Ok(token);
    }
    let root = api_root()?;
    match crate::signin::load(&root)? {
        Some(stored) if stored.fresh() => Ok(PlainToken::new(stored.access_token)),
        Some(stored) => Ok(PlainToken::new(
            crate::signin::refresh(&stored)?.access_token,
        )),
        None => api_token_only(),
    }
}

fn api_token_only() -> Result<PlainToken, ToolError> {
    if let Some(token) = std::env::var(TOKEN_VAR)
        .ok()
        .filter(|t| !t.trim().is_empty())
    {
        return Ok(PlainToken::new(token));
    }
    let none = || {
        ToolError::new(codes::UNAUTHENTICATED, "No API token").with_hint(format!(
            "Sign in with `jility auth login` (a browser opens), set {TOKEN_VAR}, or store a token with `jility auth login --token jil_live_…`."
        ))
    };
    let path = token_file().map_err(|_| none())?;
    match std::fs::read_to_string(&path) {
        Ok(text) if !text.trim().is_empty() => Ok(PlainToken::new(text)),
        Ok(_) => Err(none()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(none()),
        Err(e) => Err(ToolError::new(
            errors::INVALID_INPUT,
            format!("Cannot read the stored token {}: {e}", path.display()),
        )
        .with_hint(format!("Fix its permissions, or set {TOKEN_VAR} instead."))),
    }
}

/// The API's base, `…/api/v1`, from `JILITY_API_URL` (a trailing `/api/v1` is accepted).
pub fn api_base() -> Result<String, ToolError> {
    let url = std::env::var(URL_VAR)
        .ok()
        .map(|u| u.trim().to_string())
        .filter(|u| !u.is_empty())
        .ok_or_else(|| {
            ToolError::new(errors::INVALID_INPUT, format!("{URL_VAR} is not set")).with_hint(
                format!("Set {URL_VAR} to the API server, e.g. http://127.0.0.1:3900."),
            )
        })?;
    let parsed = reqwest::Url::parse(&url).map_err(|e| {
        ToolError::new(
            errors::INVALID_INPUT,
            format!("{URL_VAR} is not a URL ({e})"),
        )
        .with_hint(format!(
            "Set {URL_VAR} to the API server, e.g. http://127.0.0.1:3900."
        ))
    })?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(ToolError::new(
            errors::INVALID_INPUT,
            format!("{URL_VAR} must be an http:// or https:// URL"),
        )
        .with_hint(format!(
            "Set {URL_VAR} to the API server, e.g. https://jility.example.com."
        )));
    }
    // The token travels with every request: in clear only to this machine.
    let host = parsed.host_str().unwrap_or_default();
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let loopback = host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    if parsed.scheme() == "http" && !loopback {
        return Err(ToolError::new(
            errors::INVALID_INPUT,
            format!("{URL_VAR} must use https:// for a server other than this machine (HTTPS only)"),
        )
        .with_hint("Use the server's https:// address (a TLS proxy in front of `jility serve`); plain http:// is accepted for 127.0.0.1, ::1 and localhost."));
    }
    let trimmed = url.trim_end_matches('/');
    let trimmed = trimmed.strip_suffix(API_PREFIX).unwrap_or(trimmed);
    Ok(format!("{trimmed}{API_PREFIX}"))
}

/// A client of one API server with one token.
pub struct ApiClient {
    http: reqwest::blocking::Client,
    base: String,
    token: PlainToken,
}

impl ApiClient {
    /// The client the environment describes ([`api_base`], [`api_token`]).
    pub fn from_env() -> Result<Self, ToolError> {
        let base = api_base()?;
        let token = api_token()?;
        Self::new(base, token)
    }

    /// A client of the API at `base` (`…/api/v1`).
    pub fn new(base: String, token: PlainToken) -> Result<Self, ToolError> {
        // reqwest is built without a bundled crypto provider: install ring as the process
        // default (harmless when one is installed already).
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::blocking::Client::builder()
            .user_agent(concat!("jility/", env!("CARGO_PKG_VERSION")))
            .connect_timeout(CONNECT_TIMEOUT)
            .timeout(REQUEST_TIMEOUT)
            .build()
            .map_err(|e| ToolError::internal(format!("Cannot build the HTTP client: {e}")))?;
        Ok(Self { http, base, token })
    }

    /// `method` on `path` (under `/api/v1`) with an optional JSON body: the answer's JSON, or
    /// the API's error (its code, message and hint), or [`errors::NETWORK_ERROR`].
    pub fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<Value, ToolError> {
        let url = format!("{}{path}", self.base);
        let mut request = self
            .http
            .request(method, &url)
            .bearer_auth(self.token.expose());
        if let Some(body) = body {
            request = request.json(body);
        }
        let response = request.send().map_err(|e| self.unreachable(&e))?;
        let status = response.status();
        let text = response.text().map_err(|e| self.unreachable(&e))?;
        if status.is_success() {
            return serde_json::from_str(&text).map_err(|e| {
                ToolError::internal(format!(
                    "The API at {} answered {status} with something that is not JSON: {e}",
                    self.base
                ))
            });
        }
        Err(api_error(status.as_u16(), &text, &self.base))
    }

    /// `GET /audit`: one page of the workspace's audit log, newest first
    /// (`{"entries": […], "page": {…}}`); needs a `full_access` token.
    pub fn audit(&self, limit: Option<u64>, cursor: Option<&str>) -> Result<Value, ToolError> {
        let mut query = form_urlencoded::Serializer::new(String::new());
        if let Some(limit) = limit {
            query.append_pair("limit", &limit.to_string());
        }
        if let Some(cursor) = cursor {
            query.append_pair("cursor", cursor);
        }
        let query = query.finish();
        let path = if query.is_empty() {
            "/audit".to_string()
        } else {
            format!("/audit?{query}")
        };
        self.call(Method::GET, &path, None)
    }

    fn unreachable(&self, err: &reqwest::Error) -> ToolError {
        unreachable(&self.base, &self.token, err)
    }
}

/// [`errors::NETWORK_ERROR`] for a request to the API at `base` that got no answer: naming
/// the URL and why (refused, timed out, TLS…), never the token.
pub(crate) fn unreachable(base: &str, token: &PlainToken, err: &reqwest::Error) -> ToolError {
    // reqwest's message names the URL only (the token is in a header), and the chain of
    // causes says why.
    let mut cause = String::new();
    let mut source: Option<&dyn std::error::Error> = std::error::Error::source(err);
    while let Some(e) = source {
        cause = e.to_string();
        source = e.source();
    }
    let why = if err.is_timeout() {
        "timed out".to_string()
    } else if cause.is_empty() {
        "no answer".to_string()
    } else {
        cause
    };
    let message = format!("Cannot reach the jility API at {base} ({why})");
    // Belt and braces: whatever the causes say, the token is not in the message.
    let message = message.replace(token.expose(), "jil_live_…");
    ToolError::new(errors::NETWORK_ERROR, message).with_hint(format!(
        "Check that `jility serve` runs there and that {URL_VAR} is right; then retry."
    ))
}

/// The API's error envelope (`{"error": {code, message, hint, …}}`) as a [`ToolError`]: the
/// code's class from jility's codes, else from the HTTP status.
pub(crate) fn api_error(status: u16, text: &str, base: &str) -> ToolError {
    let wire = serde_json::from_str::<Value>(text)
        .ok()
        .and_then(|v| serde_json::from_value::<WireError>(v.get("error")?.clone()).ok());
    let Some(wire) = wire else {
        return ToolError::new(
            code_for_status(status),
            format!("The API at {base} answered HTTP {status}"),
        );
    };
    let known = errors::ALL
        .into_iter()
        .chain([codes::CONFLICT, codes::UNAVAILABLE]);
    let code = known
        .into_iter()
        .find(|code| wire.is(*code))
        .unwrap_or_else(|| code_for_status(status));
    let mut err = ToolError::new(code, wire.message).with_hint(wire.hint);
    err.retry_after_secs = wire.retry_after_secs;
    err
}

fn code_for_status(status: u16) -> ErrorCode {
    match status {
        400 | 422 => errors::INVALID_INPUT,
        401 => codes::UNAUTHENTICATED,
        403 => codes::PERMISSION_DENIED,
        404 => codes::NOT_FOUND,
        409 => codes::CONFLICT,
        429 => errors::RATE_LIMIT,
        502..=504 => codes::UNAVAILABLE,
        _ => codes::INTERNAL,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_errors_keep_code_message_and_hint() {
        let err = api_error(
            401,
            r#"{"error":{"code":"unauthenticated","message":"The API token was revoked at X","hint":"ask","retryable":false}}"#,
            "http://h/api/v1",
        );
        assert_eq!(err.code, codes::UNAUTHENTICATED);
        assert_eq!(err.message, "The API token was revoked at X");
        assert_eq!(err.hint_text(), "ask");
        // A database the API cannot reach keeps its code (and stays retryable).
        let err = api_error(
            503,
            r#"{"error":{"code":"database_unavailable","message":"The database cannot be reached","hint":"retry","retryable":true,"retry_after_secs":2}}"#,
            "http://h/api/v1",
        );
        assert_eq!(err.code, errors::DATABASE_UNAVAILABLE);
        assert!(err.retryable());
        assert_eq!(err.retry_after_secs, Some(2));
        let err = api_error(502, "<html>bad gateway</html>", "http://h/api/v1");
        assert_eq!(err.code, codes::UNAVAILABLE);
        assert!(err.message.contains("502"));
    }
}
