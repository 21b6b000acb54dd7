//! Streamable HTTP serving: MCP at `/mcp`, both protocol generations (sessions for
//! 2025-11-25 clients, stateless requests for 2026-07-28 clients, as rmcp negotiates them),
//! guarded against DNS rebinding, oversized bodies and, off loopback, callers without the
//! bearer token.
//!
//! Settings come from the environment so that secrets stay off the command line (and out of
//! `ps`):
//! - `MCP_HTTP_TOKEN`: the bearer token. Required to bind anything but loopback; when set,
//!   required on loopback too. Compared in constant time; never logged.
//! - `MCP_HTTP_ALLOWED_ORIGINS`: extra browser origins (comma-separated, e.g.
//!   `http://localhost:6274`) besides the server's own.
//! - `MCP_HTTP_ALLOWED_HOSTS`: the `Host` names to accept off loopback (comma-separated);
//!   without it a token-guarded server accepts any `Host`.
//! - `MCP_HTTP_READ_TIMEOUT_SECS`: how long a client has to send a request's headers, and
//!   then its body (default 30; [`crate::connections`]).
//! - `MCP_HTTP_MAX_SESSIONS` and the shares of a tenant and a token: [`crate::sessions`].
//!
//! A session answers only to the credentials that opened it, and counts against its
//! tenant's and token's shares ([`crate::sessions`]); every refusal of the MCP
//! transport has a JSON-RPC error body. What is answered before MCP is reached (a missing or
//! wrong token, `401 unauthenticated`; more than one `Host`; OAuth's discovery paths, `404`
//! without a token; another path than `/mcp`, `404` behind the token) is the JSON error
//! envelope ([`before_auth`], [`unauthenticated`], [`not_found`]).

use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::serve::ListenerExt as _;
use rmcp::ServerHandler;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

/// The environment variable holding the bearer token.
pub use crate::start::TOKEN_VAR;
pub const ORIGINS_VAR: &str = "MCP_HTTP_ALLOWED_ORIGINS";
pub const HOSTS_VAR: &str = "MCP_HTTP_ALLOWED_HOSTS";
/// The path MCP is served at.
pub const MCP_PATH: &str = "/mcp";
/// Largest request body accepted (413 beyond).
pub const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;
/// After SIGTERM: how long requests in flight have before sessions (and their streams) close.
const DRAIN_GRACE: Duration = Duration::from_secs(3);
/// After SIGTERM: when the process stops whatever is still open.
const DRAIN_DEADLINE: Duration = Duration::from_secs(10);

pub use crate::start::StartError;

mod preflight;
use crate::sessions::{Initialize, RequestId, SESSION_NOT_FOUND, SessionOwners, own_sessions};
pub use crate::sessions::{
    MAX_SESSIONS, MAX_SESSIONS_VAR, SessionLimits, SessionOwner, SessionTenant,
};
pub use preflight::{
    INVALID_REQUEST, before_auth, envelope, error_response, is_oauth_path, no_oauth, not_found,
    single_host, unauthenticated,
};

/// Where and how to serve over HTTP.
#[derive(Clone)]
pub struct HttpConfig {
    pub addr: SocketAddr,
    /// Required bearer token, if any.
    token: Option<Arc<blake3::Hash>>,
    pub allowed_origins: Vec<String>,
    /// `None`: accept any `Host` (only off loopback, behind the token).
    pub allowed_hosts: Option<Vec<String>>,
    pub max_body_bytes: usize,
    /// How many sessions are kept at once, in all and per tenant and token
    /// ([`crate::sessions`]).
    pub sessions: SessionLimits,
}

impl std::fmt::Debug for HttpConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpConfig")
            .field("addr", &self.addr)
            .field("token", &self.token.as_ref().map(|_| "<set>"))
            .field("allowed_origins", &self.allowed_origins)
            .field("allowed_hosts", &self.allowed_hosts)
            .finish()
    }
}

fn list_var(name: &str) -> Vec<String> {
    std::env::var(name)
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}

impl HttpConfig {
    /// The configuration for `--http ADDR`, with the settings of the environment.
    pub fn from_env(addr: &str) -> Result<Self, StartError> {
        let token = std::env::var(TOKEN_VAR)
            .ok()
            .map(|t| t.trim().to_string())
            .filter(|t| !t.is_empty());
        Self::new(addr, token, list_var(ORIGINS_VAR), list_var(HOSTS_VAR))
    }

    pub fn new(
        addr: &str,
        token: Option<String>,
        extra_origins: Vec<String>,
        hosts: Vec<String>,
    ) -> Result<Self, StartError> {
        let addr = addr
            .to_socket_addrs()
            .ok()
            .and_then(|mut addrs| addrs.next())
            .ok_or_else(|| StartError::BadAddress(addr.chars().take(200).collect()))?;
        let loopback = addr.ip().is_loopback();
        if !loopback && token.is_none() {
            return Err(StartError::TokenRequired(addr));
        }
        let allowed_hosts = if loopback {
            Some(vec![
                "localhost".to_string(),
                "127.0.0.1".to_string(),
                "::1".to_string(),
            ])
        } else if hosts.is_empty() {
            None
        } else {
            Some(hosts)
        };
        Ok(Self {
            addr,
            token: token.map(|t| Arc::new(blake3::hash(t.as_bytes()))),
            allowed_origins: extra_origins,
            allowed_hosts,
            max_body_bytes: MAX_BODY_BYTES,
            sessions: SessionLimits::from_env(false),
        })
    }

    /// The configuration of a server that authenticates its callers itself (with
    /// [`mcp_endpoint`]): no kit token; on loopback only loopback `Host` names, elsewhere any.
    pub fn behind_auth(addr: SocketAddr) -> Self {
        let allowed_hosts = addr.ip().is_loopback().then(|| {
            vec![
                "localhost".to_string(),
                "127.0.0.1".to_string(),
                "::1".to_string(),
            ]
        });
        Self {
            addr,
            token: None,
            allowed_origins: Vec::new(),
            allowed_hosts,
            max_body_bytes: MAX_BODY_BYTES,
            sessions: SessionLimits::from_env(true),
        }
    }

    /// The origins a browser page may call from: the server's own (on its port), and the
    /// extra ones configured (a server with REST paths of its own may check them against the
    /// same list).
    pub fn origins(&self, port: u16) -> Vec<String> {
        let mut origins: Vec<String> = ["localhost", "127.0.0.1", "[::1]"]
            .iter()
            .map(|host| format!("http://{host}:{port}"))
            .collect();
        if !self.addr.ip().is_loopback() && !self.addr.ip().is_unspecified() {
            let host = match self.addr {
                SocketAddr::V4(a) => a.ip().to_string(),
                SocketAddr::V6(a) => format!("[{}]", a.ip()),
            };
            origins.push(format!("http://{host}:{port}"));
        }
        origins.extend(self.allowed_origins.iter().cloned());
        origins
    }
}

/// Serve handlers made by `factory` (one per session, or per request when stateless) at
/// `http://ADDR/mcp` until SIGINT or SIGTERM. Writes the address it listens on to stderr.
pub async fn serve<H, F>(config: HttpConfig, name: &str, factory: F) -> anyhow::Result<()>
where
    H: ServerHandler + Send + 'static,
    F: Fn() -> H + Send + Sync + 'static,
{
    let listener = bind(&config).await?;
    let local = listener.local_addr()?;
    announce(name, local, config.token.is_some());
    serve_on(listener, &config, factory, crate::signal::termination()).await
}

/// Listen on the configured address.
pub async fn bind(config: &HttpConfig) -> Result<tokio::net::TcpListener, StartError> {
    tokio::net::TcpListener::bind(config.addr)
        .await
        .map_err(|source| StartError::Bind {
            addr: config.addr,
            source,
        })
}

/// Serve on `listener` until `stop` resolves, then close every session.
pub async fn serve_on<H, F>(
    listener: tokio::net::TcpListener,
    config: &HttpConfig,
    factory: F,
    stop: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()>
where
    H: ServerHandler + Send + 'static,
    F: Fn() -> H + Send + Sync + 'static,
{
    let local = listener.local_addr()?;
    let sessions = CancellationToken::new();
    // Unknown paths are `not_found` behind the token; duplicate `Host` headers and OAuth's
    // paths are answered before it ([`preflight`]).
    let app = mcp_endpoint(config, local.port(), sessions.child_token(), factory)
        .fallback(unknown_path)
        .layer(middleware::from_fn_with_state(config.token.clone(), bearer))
        .layer(middleware::from_fn(preflight::before_auth));
    let stopping = CancellationToken::new();
    let trigger = stopping.clone();
    // Without TCP_NODELAY, the last chunk of an SSE answer waits for the client's delayed ACK
    // (40 ms on Linux) behind Nagle's algorithm, for every client that reads to the end.
    let listener = listener.tap_io(|tcp| {
        if let Err(err) = tcp.set_nodelay(true) {
            tracing::debug!("cannot set TCP_NODELAY: {err}");
        }
    });
    let read_timeout = crate::connections::read_timeout();
    let server = crate::connections::serve_app(listener, app, read_timeout, async move {
        stop.await;
        tracing::info!("stopping: no new connections; answering the requests in flight");
        trigger.cancel();
    });
    // Requests in flight are answered before their sessions close (a write the client is
    // told failed must not have been saved); open streams close with the sessions after
    // the grace period; connections still open at the deadline (a client that never
    // finishes its request) do not keep the process alive.
    let closer = async move {
        stopping.cancelled().await;
        tokio::time::sleep(DRAIN_GRACE).await;
        tracing::info!("closing sessions");
        sessions.cancel();
        tokio::time::sleep(DRAIN_DEADLINE.saturating_sub(DRAIN_GRACE)).await;
    };
    tokio::select! {
        () = server => {}
        () = closer => tracing::warn!("connections still open at the shutdown deadline; stopping anyway"),
    }
    Ok(())
}

/// The MCP endpoint alone (at [`MCP_PATH`]), for a server that serves more than MCP and
/// authenticates callers itself: rmcp's Streamable HTTP service with this kit's settings
/// (origins and hosts checked, body limit, a lone answer as JSON). Its sessions close when
/// `sessions` is cancelled. The configuration's token is not checked here.
pub fn mcp_endpoint<H, F>(
    config: &HttpConfig,
    port: u16,
    sessions: CancellationToken,
    factory: F,
) -> axum::Router
where
    H: ServerHandler + Send + 'static,
    F: Fn() -> H + Send + Sync + 'static,
{
    mcp_endpoint_counted(config, port, sessions, factory).0
}

/// The live sessions of an MCP endpoint ([`mcp_endpoint_counted`]), for a server's metrics.
#[derive(Clone)]
pub struct LiveSessions(
    Arc<rmcp::transport::streamable_http_server::session::local::LocalSessionManager>,
);

impl LiveSessions {
    /// How many sessions are open now.
    pub async fn count(&self) -> usize {
        self.0.sessions.read().await.len()
    }
}

/// [`mcp_endpoint`], and a handle that counts its live sessions.
pub fn mcp_endpoint_counted<H, F>(
    config: &HttpConfig,
    port: u16,
    sessions: CancellationToken,
    factory: F,
) -> (axum::Router, LiveSessions)
where
    H: ServerHandler + Send + 'static,
    F: Fn() -> H + Send + Sync + 'static,
{
    let mut rmcp_config = StreamableHttpServerConfig::default()
        .with_cancellation_token(sessions)
        .with_max_request_body_bytes(config.max_body_bytes)
        // Stateless (2026-07-28) answers as plain JSON where nothing else is sent first.
        .with_json_response(true)
        .with_allowed_origins(config.origins(port))
        .enforce_origin_validation();
    rmcp_config = match &config.allowed_hosts {
        Some(hosts) => rmcp_config.with_allowed_hosts(hosts.clone()),
        None => rmcp_config.disable_allowed_hosts(),
    };
    let manager = crate::sessions::manager();
    let live = LiveSessions(manager.clone());
    let service = StreamableHttpService::new(move || Ok(factory()), manager.clone(), rmcp_config);
    let router = axum::Router::new()
        .nest_service(MCP_PATH, service)
        .layer(middleware::from_fn_with_state(
            SessionOwners::new(manager, config.sessions),
            own_sessions,
        ))
        .layer(middleware::from_fn(answer_as_json))
        .layer(middleware::from_fn_with_state(
            config.max_body_bytes,
            check_message,
        ))
        .layer(middleware::from_fn(errors_as_json));
    (router, live)
}

/// Give every refusal of the MCP endpoint a JSON-RPC error body (`"id": null`). rmcp answers
/// transport-level refusals (no session id, unknown session, unacceptable `Accept`, wrong
/// content type, origin or host refused) in plain text; clients parse JSON.
async fn errors_as_json(request: Request, next: Next) -> Response {
    use crate::edge::{INVALID_REQUEST, Refusal, excerpt};

    let response = next.run(request).await;
    let status = response.status();
    let json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if !(status.is_client_error() || status.is_server_error()) || json {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let text = axum::body::to_bytes(body, 4096).await.unwrap_or_default();
    let text = String::from_utf8_lossy(&text);
    let text = text.trim();
    let message = if text.is_empty() {
        status.canonical_reason().unwrap_or("refused").to_string()
    } else {
        excerpt(text)
    };
    let code = match status {
        StatusCode::NOT_FOUND => SESSION_NOT_FOUND,
        s if s.is_server_error() => -32603,
        _ => INVALID_REQUEST,
    };
    let frame = Refusal::new(None, code, message).frame().to_string();
    parts.headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, axum::body::Body::from(frame))
}

/// The protocol edge over HTTP ([`crate::edge`]): a POSTed message reaches rmcp only when it
/// decodes. One that does not is answered here, `400` with the JSON-RPC error (its id, or
/// `"id": null` when it cannot be read; a notification gets `202` and nothing); a body that
/// is too large is `413` (with the id read from its start, when it can be), one that arrives
/// too late `408`. An `initialize` is marked for [`own_sessions`].
async fn check_message(State(limit): State<usize>, request: Request, next: Next) -> Response {
    use crate::connections::caused_by;
    use crate::edge::{INVALID_REQUEST, Refusal, decode};
    use rmcp::model::{ClientRequest, JsonRpcMessage};

    // Every POST, whatever its content type says: rmcp reads content types its own way
    // (`Application/JSON` passed it by a check of this kind), and refuses the wrong ones after.
    if request.method() != axum::http::Method::POST {
        // rmcp answers other methods.
        return next.run(request).await;
    }
    let (mut parts, body) = request.into_parts();
    // An over-long body is answered with the id at its start, when it can be read there.
    let (id, failure) = match crate::body::read(body, limit).await {
        crate::body::Body::Whole(bytes) => (None, Ok(bytes)),
        crate::body::Body::TooLong(id) => (
            id,
            Err((
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("invalid request: a message longer than {limit} bytes"),
            )),
        ),
        crate::body::Body::Failed(err) if caused_by::<crate::connections::BodyTimedOut>(&err) => (
            None,
            Err((
                StatusCode::REQUEST_TIMEOUT,
                format!("invalid request: {}", crate::connections::BodyTimedOut),
            )),
        ),
        crate::body::Body::Failed(_) => (
            None,
            Err((
                StatusCode::BAD_REQUEST,
                "invalid request: the body could not be read".to_string(),
            )),
        ),
    };
    let bytes = match failure {
        Ok(bytes) => bytes,
        Err((status, message)) => {
            // The rest of the body may be unread (past the drain, a timeout, a broken body):
            // the connection cannot carry another request.
            let mut response = refused(status, &Refusal::new(id, INVALID_REQUEST, message));
            response
                .headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
            return response;
        }
    };
    match decode(&bytes) {
        Err(refusal) if refusal.quiet => StatusCode::ACCEPTED.into_response(),
        Err(refusal) => refused(StatusCode::BAD_REQUEST, &refusal),
        Ok(message) => {
            if let JsonRpcMessage::Request(request) = &message {
                // For `own_sessions`, which knows the session.
                let id = serde_json::to_value(&request.id).unwrap_or(serde_json::Value::Null);
                if matches!(request.request, ClientRequest::InitializeRequest(_)) {
                    parts.extensions.insert(Initialize(id.clone()));
                }
                parts.extensions.insert(RequestId(id));
            }
            next.run(Request::from_parts(parts, axum::body::Body::from(bytes)))
                .await
        }
    }
}

fn refused(status: StatusCode, refusal: &crate::edge::Refusal) -> Response {
    tracing::debug!(code = refusal.code, message = %refusal.message, "refused at the edge");
    let mut response = (status, refusal.frame().to_string()).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// Tell whoever started the server where it listens (the port may have been chosen by the
/// system with `:0`). stdout is not the protocol channel here, but stderr keeps it with the
/// logs, as for stdio servers.
fn announce(name: &str, local: SocketAddr, token: bool) {
    use std::io::Write as _;
    let auth = if token {
        " (bearer token required)"
    } else {
        ""
    };
    // One write of the whole line, so that a reader never sees half of it.
    let line = format!("{name}: serving MCP over HTTP at http://{local}{MCP_PATH}{auth}\n");
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}

/// How long an answer may take before its stream is passed on as it is (so that the stream's
/// keep-alive comments reach the client) instead of waiting for a plain JSON answer.
const JSON_WAIT: Duration = Duration::from_secs(10);

/// Send a session's answer as `application/json` when it is a single JSON-RPC response.
///
/// rmcp answers every POST of a session with an event stream that ends after the response.
/// Clients that stop reading at the response (rmcp's own client does) cannot reuse the
/// connection: each call then pays a new TCP connection. The protocol lets a server answer a
/// request with either content type (clients must accept both), so when the first message
/// on the stream is the response, it is sent alone as JSON. A stream whose first message is a
/// notification or a request (progress, sampling) is passed on unchanged, as is one that
/// takes longer than [`JSON_WAIT`].
async fn answer_as_json(request: Request, next: Next) -> Response {
    use futures::{FutureExt as _, StreamExt as _};
    use http_body_util::BodyExt as _;

    let is_post = request.method() == axum::http::Method::POST;
    let response = next.run(request).await;
    let is_stream = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    if !is_post || !is_stream || response.status() != StatusCode::OK {
        return response;
    }
    let (mut parts, mut body) = response.into_parts();
    let deadline = tokio::time::Instant::now() + JSON_WAIT;
    // What has been read, to pass on unchanged if the answer is not a lone response; and the
    // same bytes parsed as events.
    let mut seen: Vec<bytes::Bytes> = Vec::new();
    let (feed, fed) =
        tokio::sync::mpsc::unbounded_channel::<Result<bytes::Bytes, std::convert::Infallible>>();
    let mut events = sse_stream::SseStream::from_bytes_stream(
        tokio_stream::wrappers::UnboundedReceiverStream::new(fed),
    );
    let passed_on = |parts: axum::http::response::Parts, seen: Vec<bytes::Bytes>, rest| {
        let replay = futures::stream::iter(seen.into_iter().map(Ok::<_, axum::Error>));
        Response::from_parts(
            parts,
            axum::body::Body::from_stream(replay.chain(axum::body::Body::into_data_stream(rest))),
        )
    };
    loop {
        let frame = match tokio::time::timeout_at(deadline, body.frame()).await {
            Ok(Some(Ok(frame))) => frame,
            // The stream ended or failed, or is slow: pass on what there is.
            Ok(None | Some(Err(_))) | Err(_) => return passed_on(parts, seen, body),
        };
        let Ok(data) = frame.into_data() else {
            continue;
        };
        seen.push(data.clone());
        let _ = feed.send(Ok(data));
        while let Some(Some(event)) = events.next().now_or_never() {
            let Ok(event) = event else {
                return passed_on(parts, seen, body);
            };
            // Events without data prime the client for resumption; they carry no message.
            let Some(message) = event.data.filter(|d| !d.trim().is_empty()) else {
                continue;
            };
            if !is_response(&message) {
                return passed_on(parts, seen, body);
            }
            parts.headers.insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            parts.headers.remove(header::CACHE_CONTROL);
            return Response::from_parts(parts, axum::body::Body::from(message));
        }
    }
}

/// Whether `message` is a JSON-RPC response (a result or an error), not a request or a
/// notification.
fn is_response(message: &str) -> bool {
    use serde::de::IgnoredAny;
    #[derive(serde::Deserialize)]
    struct Probe {
        method: Option<IgnoredAny>,
        result: Option<IgnoredAny>,
        error: Option<IgnoredAny>,
    }
    serde_json::from_str::<Probe>(message)
        .is_ok_and(|p| p.method.is_none() && (p.result.is_some() || p.error.is_some()))
}

/// Refuse requests without the bearer token (when one is configured) with 401 and the
/// `unauthenticated` envelope, the name every server gives a missing or wrong token.
async fn bearer(
    State(token): State<Option<Arc<blake3::Hash>>>,
    headers: HeaderMap,
    request: Request,
    next: Next,
) -> Response {
    let Some(expected) = token else {
        return next.run(request).await;
    };
    let given = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            // The scheme is case-insensitive (RFC 7235).
            let (scheme, token) = v.trim().split_once(' ')?;
            scheme.eq_ignore_ascii_case("bearer").then_some(token)
        })
        .map(|t| blake3::hash(t.trim().as_bytes()));
    // blake3::Hash compares in constant time; hashing first makes the lengths equal.
    if given.as_ref() == Some(expected.as_ref()) {
        return next.run(request).await;
    }
    let message = if given.is_some() {
        "the bearer token is wrong"
    } else {
        "a bearer token is required"
    };
    let hint = format!(
        "Send `Authorization: Bearer <token>` with the token the server was started with ({TOKEN_VAR})."
    );
    let mut response = preflight::unauthenticated(message, &hint);
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static("Bearer realm=\"mcp\""),
    );
    response
}

/// A path other than [`MCP_PATH`] (with the token, or on a server without one).
async fn unknown_path() -> Response {
    preflight::not_found(&format!("MCP is served at {MCP_PATH}."))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_needs_no_token_and_others_do() {
        let local = HttpConfig::new("127.0.0.1:0", None, vec![], vec![]).unwrap();
        assert!(local.token.is_none());
        assert!(local.allowed_hosts.is_some());
        let err = HttpConfig::new("0.0.0.0:8808", None, vec![], vec![]).unwrap_err();
        assert!(err.to_string().contains(TOKEN_VAR), "{err}");
        let public =
            HttpConfig::new("0.0.0.0:8808", Some("s3cret".into()), vec![], vec![]).unwrap();
        assert!(public.allowed_hosts.is_none());
        assert!(!format!("{public:?}").contains("s3cret"));
        assert!(matches!(
            HttpConfig::new("nonsense", None, vec![], vec![]),
            Err(StartError::BadAddress(_))
        ));
    }

    #[test]
    fn own_origins_are_allowed() {
        let config = HttpConfig::new(
            "127.0.0.1:0",
            None,
            vec!["http://localhost:6274".into()],
            vec![],
        )
        .unwrap();
        let origins = config.origins(8808);
        assert!(origins.contains(&"http://127.0.0.1:8808".to_string()));
        assert!(origins.contains(&"http://localhost:8808".to_string()));
        assert!(origins.contains(&"http://localhost:6274".to_string()));
        assert!(!origins.iter().any(|o| o.contains("evil")));
    }
}
