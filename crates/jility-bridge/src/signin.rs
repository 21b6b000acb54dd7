//! Signing in to a team's `jility serve` as a native app (OAuth 2.1, RFC 8252), for the
//! bridge and `jility auth login`: the server's metadata is discovered from its `/mcp`
//! resource (RFC 9728, RFC 8414), the bridge registers itself (RFC 7591) with a loopback
//! redirect, the person is sent to the authorization page (the URL printed, and a browser
//! opened where there is a desktop), the redirect is received on a port of 127.0.0.1, and
//! the code is exchanged with PKCE (S256). The tokens are kept in [`oauth_file`] (mode
//! 0600) and the access token is refreshed before it expires ([`refresh`]; the refresh
//! token rotates).
//!
//! Everything here blocks (the bridge runs it on a blocking thread). No token or code is
//! ever printed or logged.

use std::io::{BufRead as _, BufReader, Write as _};
use std::net::TcpListener;
use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use mcp_common_core::{ToolError, codes};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use jility_core::errors;

use crate::config::{self, CONNECT_TIMEOUT, REQUEST_TIMEOUT};

/// How long the person has to sign in and approve.
pub const SIGN_IN_WAIT: Duration = Duration::from_secs(10 * 60);
/// An access token this close to its expiry is refreshed first.
pub const REFRESH_MARGIN_SECS: u64 = 60;
/// The scopes the bridge asks for (the person approves some or all).
const SCOPES: &str = "tickets:read tickets:write tickets:delete comments:write";

/// What a sign-in leaves: where to refresh, as which client, for which resource, and the
/// tokens.
#[derive(Clone, Serialize, Deserialize)]
pub struct Stored {
    /// The API's root (`https://host`), which these credentials are for.
    pub root: String,
    pub issuer: String,
    pub token_endpoint: String,
    pub client_id: String,
    pub resource: String,
    pub access_token: String,
    pub refresh_token: String,
    /// Unix seconds.
    pub expires_at: u64,
    pub scope: String,
}

impl std::fmt::Debug for Stored {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stored")
            .field("root", &self.root)
            .field("client_id", &self.client_id)
            .field("scope", &self.scope)
            .field("expires_at", &self.expires_at)
            .finish_non_exhaustive()
    }
}

impl Stored {
    /// Whether the access token is still good for a while.
    pub fn fresh(&self) -> bool {
        unix_now() + REFRESH_MARGIN_SECS < self.expires_at
    }
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The file the credentials of a sign-in are kept in: beside the stored token,
/// `…/jility/oauth.json`.
pub fn oauth_file() -> Result<PathBuf, ToolError> {
    Ok(config::token_file()?.with_file_name("oauth.json"))
}

/// The credentials kept for the API at `root`, if any.
pub fn load(root: &str) -> Result<Option<Stored>, ToolError> {
    let path = oauth_file()?;
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(ToolError::new(
                errors::INVALID_INPUT,
                format!("Cannot read {}: {e}", path.display()),
            )
            .with_hint("Fix its permissions, or sign in again with `jility auth login`."));
        }
    };
    let stored: Stored = serde_json::from_str(&text).map_err(|_| {
        ToolError::new(
            errors::INVALID_INPUT,
            format!("{} is damaged", path.display()),
        )
        .with_hint("Sign in again with `jility auth login`.")
    })?;
    Ok((stored.root == root).then_some(stored))
}

/// Keep `stored` in [`oauth_file`] (mode 0600, written whole then renamed).
pub fn save(stored: &Stored) -> Result<PathBuf, ToolError> {
    let path = oauth_file()?;
    let text = serde_json::to_vec_pretty(stored)
        .map_err(|e| ToolError::internal(format!("Cannot encode the credentials: {e}")))?;
    config::write_private(&path, &text)?;
    Ok(path)
}

fn http() -> Result<reqwest::blocking::Client, ToolError> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::blocking::Client::builder()
        .user_agent(concat!("jility-bridge/", env!("CARGO_PKG_VERSION")))
        .connect_timeout(CONNECT_TIMEOUT)
        .timeout(REQUEST_TIMEOUT)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| ToolError::internal(format!("Cannot build the HTTP client: {e}")))
}

fn failed(what: &str, root: &str) -> ToolError {
    ToolError::new(
        codes::UNAUTHENTICATED,
        format!("Signing in to {root} failed: {what}"),
    )
    .with_hint("Try `jility auth login` again, or use a token (JILITY_API_TOKEN) instead.")
}

/// GET `url` as JSON.
fn get_json(http: &reqwest::blocking::Client, url: &str, root: &str) -> Result<Value, ToolError> {
    let response = http
        .get(url)
        .send()
        .map_err(|_| config::network_error(root))?;
    if !response.status().is_success() {
        return Err(failed(
            &format!("{url} answered {}", response.status().as_u16()),
            root,
        ));
    }
    response
        .json()
        .map_err(|_| failed(&format!("{url} is not JSON"), root))
}

/// The token endpoint's answer to `form`, as credentials (beside `base`).
fn token_request(
    http: &reqwest::blocking::Client,
    base: &Stored,
    form: &[(&str, &str)],
) -> Result<Stored, ToolError> {
    let body = form_urlencoded::Serializer::new(String::new())
        .extend_pairs(form)
        .finish();
    let response = http
        .post(&base.token_endpoint)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body)
        .send()
        .map_err(|_| config::network_error(&base.root))?;
    let status = response.status();
    let body: Value = response.json().unwrap_or(Value::Null);
    if !status.is_success() {
        let error = body["error"].as_str().unwrap_or("an error");
        let text = body["error_description"].as_str().unwrap_or("");
        let retryable = status.as_u16() == 503 || status.as_u16() == 429;
        let mut err = failed(&format!("{error}: {text}"), &base.root);
        if retryable {
            err.code = errors::NETWORK_ERROR;
        }
        return Err(err);
    }
    let text = |name: &str| body[name].as_str().map(str::to_string);
    Ok(Stored {
        access_token: text("access_token")
            .ok_or_else(|| failed("the answer has no access_token", &base.root))?,
        refresh_token: text("refresh_token").unwrap_or_else(|| base.refresh_token.clone()),
        expires_at: unix_now() + body["expires_in"].as_u64().unwrap_or(3600),
        scope: text("scope").unwrap_or_else(|| base.scope.clone()),
        ..base.clone()
    })
}

/// New tokens for `stored` (its refresh token is used up: the new one replaces it), kept.
pub fn refresh(stored: &Stored) -> Result<Stored, ToolError> {
    let http = http()?;
    let renewed = token_request(
        &http,
        stored,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", &stored.refresh_token),
            ("client_id", &stored.client_id),
            ("resource", &stored.resource),
        ],
    )?;
    save(&renewed)?;
    Ok(renewed)
}

fn random(chars: usize) -> Result<String, ToolError> {
    let mut bytes = vec![0u8; chars];
    getrandom::fill(&mut bytes)
        .map_err(|e| ToolError::internal(format!("The system's random generator failed: {e}")))?;
    Ok(URL_SAFE_NO_PAD.encode(bytes).chars().take(chars).collect())
}

/// Sign in to the API at `root` (`https://host`, no `/api/v1`): `show` is handed the URL the
/// person must open (it prints it, and may open a browser). Blocks until the person has
/// decided (at most [`SIGN_IN_WAIT`]); the credentials are kept.
pub fn sign_in(root: &str, show: &dyn Fn(&str)) -> Result<Stored, ToolError> {
    let http = http()?;
    let resource_meta = get_json(
        &http,
        &format!("{root}/.well-known/oauth-protected-resource/mcp"),
        root,
    )?;
    let resource = resource_meta["resource"]
        .as_str()
        .ok_or_else(|| failed("the server names no resource", root))?
        .to_string();
    let issuer = resource_meta["authorization_servers"][0]
        .as_str()
        .ok_or_else(|| failed("the server names no authorization server", root))?
        .trim_end_matches('/')
        .to_string();
    let meta = get_json(
        &http,
        &format!("{issuer}/.well-known/oauth-authorization-server"),
        root,
    )?;
    let endpoint = |name: &str| {
        meta[name]
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| failed(&format!("the server's metadata has no {name}"), root))
    };
    let (authorize, token_endpoint, register) = (
        endpoint("authorization_endpoint")?,
        endpoint("token_endpoint")?,
        endpoint("registration_endpoint")?,
    );

    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| {
        ToolError::internal(format!("Cannot listen on 127.0.0.1 for the sign-in: {e}"))
    })?;
    let port = listener
        .local_addr()
        .map_err(|e| ToolError::internal(format!("No local address: {e}")))?
        .port();
    let redirect = format!("http://127.0.0.1:{port}/callback");
    let host = std::env::var("HOSTNAME").unwrap_or_default();
    let name = if host.trim().is_empty() {
        "jility bridge".to_string()
    } else {
        format!("jility bridge on {}", host.trim().replace('@', " at "))
    };
    let registered = http
        .post(&register)
        .json(&serde_json::json!({
            "client_name": name,
            "redirect_uris": [redirect],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
        }))
        .send()
        .map_err(|_| config::network_error(root))?;
    if !registered.status().is_success() {
        return Err(failed(
            &format!("registration answered {}", registered.status().as_u16()),
            root,
        ));
    }
    let registered: Value = registered
        .json()
        .map_err(|_| failed("the registration's answer is not JSON", root))?;
    let client_id = registered["client_id"]
        .as_str()
        .ok_or_else(|| failed("the registration gave no client_id", root))?
        .to_string();

    let verifier = random(64)?;
    let challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
    let state = random(32)?;
    let query = form_urlencoded::Serializer::new(String::new())
        .append_pair("response_type", "code")
        .append_pair("client_id", &client_id)
        .append_pair("redirect_uri", &redirect)
        .append_pair("code_challenge", &challenge)
        .append_pair("code_challenge_method", "S256")
        .append_pair("state", &state)
        .append_pair("scope", SCOPES)
        .append_pair("resource", &resource)
        .finish();
    show(&format!("{authorize}?{query}"));

    let answer = receive(&listener, root)?;
    let param = |name: &str| {
        answer
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    if param("state") != Some(state.as_str()) {
        return Err(failed("the answer's state is not the request's", root));
    }
    if let Some(iss) = param("iss")
        && iss.trim_end_matches('/') != issuer
    {
        return Err(failed("the answer comes from another issuer", root));
    }
    if let Some(error) = param("error") {
        return Err(failed(
            &format!("{error}: {}", param("error_description").unwrap_or("")),
            root,
        ));
    }
    let code = param("code").ok_or_else(|| failed("the answer has no code", root))?;
    let base = Stored {
        root: root.to_string(),
        issuer,
        token_endpoint,
        client_id: client_id.clone(),
        resource: resource.clone(),
        access_token: String::new(),
        refresh_token: String::new(),
        expires_at: 0,
        scope: String::new(),
    };
    let stored = token_request(
        &http,
        &base,
        &[
            ("grant_type", "authorization_code"),
            ("code", code),
            ("client_id", &client_id),
            ("redirect_uri", &redirect),
            ("code_verifier", &verifier),
            ("resource", &resource),
        ],
    )?;
    save(&stored)?;
    Ok(stored)
}

/// Wait on `listener` for the browser's request of `/callback`: its query's pairs. Other
/// requests (a favicon) are answered 404 and waited past.
fn receive(listener: &TcpListener, root: &str) -> Result<Vec<(String, String)>, ToolError> {
    let until = Instant::now() + SIGN_IN_WAIT;
    listener
        .set_nonblocking(true)
        .map_err(|e| ToolError::internal(format!("Cannot wait for the sign-in: {e}")))?;
    loop {
        if Instant::now() >= until {
            return Err(ToolError::new(
                codes::UNAUTHENTICATED,
                format!(
                    "Nobody signed in to {root} within {} minutes",
                    SIGN_IN_WAIT.as_secs() / 60
                ),
            )
            .with_hint("Run `jility auth login` again and open the link it prints."));
        }
        let (stream, _) = match listener.accept() {
            Ok(accepted) => accepted,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(50));
                continue;
            }
            Err(e) => {
                return Err(ToolError::internal(format!(
                    "The sign-in's listener failed: {e}"
                )));
            }
        };
        let _ = stream.set_nonblocking(false);
        let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
        let mut reader = BufReader::new(&stream);
        let mut line = String::new();
        if reader.read_line(&mut line).is_err() || line.len() > 8192 {
            continue;
        }
        let target = line.split_whitespace().nth(1).unwrap_or("");
        let (path, query) = target.split_once('?').unwrap_or((target, ""));
        let mut out = &stream;
        if path != "/callback" {
            let _ = out.write_all(
                b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
            );
            continue;
        }
        let pairs: Vec<(String, String)> = form_urlencoded::parse(query.as_bytes())
            .into_owned()
            .collect();
        let ok = pairs.iter().any(|(k, _)| k == "code");
        let page = if ok {
            "<!doctype html><title>Signed in</title><p>Signed in: you may close this window and go back to the terminal.</p>"
        } else {
            "<!doctype html><title>Not signed in</title><p>The sign-in did not complete: see the terminal.</p>"
        };
        let _ = write!(
            out,
            "HTTP/1.1 200 OK\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\ncache-control: no-store\r\nconnection: close\r\n\r\n{page}",
            page.len()
        );
        return Ok(pairs);
    }
}

/// Open `url` in the desktop's browser where there is a desktop (`xdg-open` with a
/// `DISPLAY` or `WAYLAND_DISPLAY`, `open` on macOS); quietly nothing otherwise.
pub fn open_browser(url: &str) {
    let opener = if cfg!(target_os = "macos") {
        Some("open")
    } else if std::env::var_os("DISPLAY").is_some() || std::env::var_os("WAYLAND_DISPLAY").is_some()
    {
        Some("xdg-open")
    } else {
        None
    };
    if let Some(opener) = opener {
        let _ = std::process::Command::new(opener)
            .arg(url)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn();
    }
}
