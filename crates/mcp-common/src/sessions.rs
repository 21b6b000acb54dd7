//! The sessions of the Streamable HTTP endpoint ([`crate::http`]): who owns each one, how
//! many each caller may keep, and which idle ones end to make room.
//!
//! [`crate::http`]'s message check marks each POSTed request with its id (`RequestId`)
//! and an `initialize` with `Initialize` before `own_sessions` sees it.
//!
//! - **Owners.** A session answers only to the credentials that opened it (a hash of the
//!   `Authorization` header of its `initialize`, or the [`SessionOwner`] the server names):
//!   anyone else who learns its id is told the session does not exist.
//! - **Fair shares.** Sessions are counted per server, per tenant and per token, each with
//!   a limit ([`SessionLimits`]). The tenant is what the server that authenticates its
//!   callers says it is (a [`SessionTenant`] extension on the request: a multi-tenant server
//!   puts the caller's tenant there); without one, the credentials are the tenant. A new
//!   session past the server's limit is `503`; past its tenant's or token's share, `429`;
//!   both with `Retry-After` and a JSON-RPC error body with the `initialize`'s id.
//!   Initializes in flight count, so a burst cannot pass a limit together.
//! - **Pressure.** When the table is at least 3/4 full, a new `initialize` first closes the
//!   sessions idle for longer than [`SessionLimits::idle_under_pressure`] (nothing in
//!   flight, no stream open); otherwise sessions live until rmcp's keep-alive (5 minutes
//!   idle) ends them.
//! - **Memory.** What a session holds is bounded by rmcp's [`SessionConfig`] as
//!   `manager` sets it: [`CHANNEL_CAPACITY`] messages queued per channel, and the caches
//!   of finished requests (for resumption) kept [`COMPLETED_CACHE_TTL`].
//!
//! Settings (environment):
//! - `MCP_HTTP_MAX_SESSIONS`: the most sessions kept at once (default 4096).
//! - `MCP_HTTP_MAX_SESSIONS_PER_TENANT`: the most one tenant keeps (default: half the
//!   server's on a server that names tenants, so that one tenant always leaves room for
//!   others; all of it otherwise, where the one credential is the only tenant).
//! - `MCP_HTTP_MAX_SESSIONS_PER_TOKEN`: the most one token keeps (default: a quarter of the
//!   server's on a server that names tenants, so that a tenant's share is not one token's;
//!   all of it otherwise).
//! - `MCP_HTTP_IDLE_UNDER_PRESSURE_SECS`: how long a session may be idle before it is closed
//!   to make room under pressure (default 60).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::SessionManager as _;
use rmcp::transport::streamable_http_server::session::local::{LocalSessionManager, SessionConfig};

/// The session header of Streamable HTTP.
const SESSION_HEADER: &str = "mcp-session-id";
/// The JSON-RPC code of "session not found" (as the TypeScript SDK's servers answer it).
pub(crate) const SESSION_NOT_FOUND: i64 = -32001;
/// The JSON-RPC code of a request refused because the server is at a limit for now.
const SERVER_BUSY: i64 = -32000;

/// Marks a POST whose message is an `initialize` (its id), for `own_sessions`.
#[derive(Clone)]
pub(crate) struct Initialize(pub(crate) serde_json::Value);

/// The id of a POSTed request, for `own_sessions`.
#[derive(Clone)]
pub(crate) struct RequestId(pub(crate) serde_json::Value);

/// A refusal answered with `status` and its JSON-RPC error.
fn refused(status: StatusCode, refusal: &crate::edge::Refusal) -> Response {
    tracing::debug!(code = refusal.code, message = %refusal.message, "refused a session's request");
    let mut response = (status, refusal.frame().to_string()).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// Most sessions one server keeps at once by default (each holds a handler and its channels,
/// ~50 KB); past it, new sessions are refused with `503` until some end.
pub const MAX_SESSIONS: usize = 4096;
/// The environment variable that sets the most sessions kept at once.
pub const MAX_SESSIONS_VAR: &str = "MCP_HTTP_MAX_SESSIONS";
/// The environment variable that sets the most sessions one tenant keeps.
pub const PER_TENANT_VAR: &str = "MCP_HTTP_MAX_SESSIONS_PER_TENANT";
/// The environment variable that sets the most sessions one token keeps.
pub const PER_TOKEN_VAR: &str = "MCP_HTTP_MAX_SESSIONS_PER_TOKEN";
/// The environment variable that sets how long an idle session lives under pressure.
pub const IDLE_VAR: &str = "MCP_HTTP_IDLE_UNDER_PRESSURE_SECS";
/// How long an idle session lives when the table is 3/4 full, by default.
pub const IDLE_UNDER_PRESSURE: Duration = Duration::from_secs(60);
/// Messages queued at most per channel of a session (rmcp's default, made explicit).
pub const CHANNEL_CAPACITY: usize = 16;
/// How long the messages of a finished request are kept for a client resuming its stream
/// (rmcp's default is 60 s).
pub const COMPLETED_CACHE_TTL: Duration = Duration::from_secs(15);
/// How long a session may wait for its `initialize` (rmcp's default is 60 s).
const INIT_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a refused caller is told to wait.
const RETRY_AFTER_SECS: u64 = 30;

/// The tenant a request's session counts for, as the server that authenticated the caller
/// names it (an extension it puts on the request before the MCP endpoint, e.g. the
/// caller's account or workspace). Without it, the credentials are the tenant.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SessionTenant(pub String);

/// Who owns a session, as the server that authenticated the caller names it (an extension
/// it puts on the request before the MCP endpoint): for credentials that change while the
/// caller stays the same — an OAuth client's access token, refreshed every hour — the
/// grant they belong to. Without it, the owner is the `Authorization` header.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SessionOwner(pub String);

/// How many sessions are kept at once: by the server, per tenant, per token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionLimits {
    pub total: usize,
    pub per_tenant: usize,
    pub per_token: usize,
    /// How long a session may be idle before it is closed when the table is 3/4 full.
    pub idle_under_pressure: Duration,
}

impl SessionLimits {
    /// The limits from the environment. `shared`: the server names tenants (its callers are
    /// many), so a tenant's default share is half the server's and a token's a quarter;
    /// otherwise the shares default to the whole server.
    pub fn from_env(shared: bool) -> Self {
        let total = number_var(MAX_SESSIONS_VAR, MAX_SESSIONS);
        let (tenant, token) = if shared {
            ((total / 2).max(1), (total / 4).max(1))
        } else {
            (total, total)
        };
        Self {
            total,
            per_tenant: number_var(PER_TENANT_VAR, tenant).min(total),
            per_token: number_var(PER_TOKEN_VAR, token).min(total),
            idle_under_pressure: Duration::from_secs(number_var(
                IDLE_VAR,
                IDLE_UNDER_PRESSURE.as_secs() as usize,
            ) as u64),
        }
    }

    /// The table is under pressure at 3/4 full.
    fn pressure(&self) -> usize {
        (self.total * 3).div_ceil(4)
    }
}

/// `name` (1 to 1,000,000), else `default`.
fn number_var(name: &str, default: usize) -> usize {
    let Ok(value) = std::env::var(name) else {
        return default;
    };
    match value.trim().parse::<usize>() {
        Ok(n @ 1..=1_000_000) => n,
        _ => {
            tracing::warn!("{name} must be a number from 1 to 1000000; using {default}");
            default
        }
    }
}

/// rmcp's session manager with this kit's bounds on what a session holds.
pub(crate) fn manager() -> Arc<LocalSessionManager> {
    let mut config = SessionConfig::default();
    config.channel_capacity = CHANNEL_CAPACITY;
    config.completed_cache_ttl = COMPLETED_CACHE_TTL;
    config.init_timeout = Some(INIT_TIMEOUT);
    let mut manager = LocalSessionManager::default();
    manager.session_config = config;
    Arc::new(manager)
}

/// Who opened each session, and the counts the limits are checked against.
#[derive(Clone)]
pub(crate) struct SessionOwners {
    owners: Arc<std::sync::Mutex<Owners>>,
    manager: Arc<LocalSessionManager>,
    limits: SessionLimits,
    /// Sessions being opened (counted against the server's limit until rmcp has made them).
    opening: Arc<AtomicUsize>,
}

struct Entry {
    token: blake3::Hash,
    tenant: blake3::Hash,
    /// When a request of the session last started or ended.
    last_seen: Instant,
    /// Requests (and streams) of the session being answered.
    busy: usize,
}

#[derive(Default)]
struct Owners {
    by_session: HashMap<String, Entry>,
    /// The ids of the requests of each session whose answers are still being sent: rmcp
    /// answers only the last of several requests with one id, so the others would wait (and
    /// hold their connections) until the session ends.
    in_flight: HashSet<(String, String)>,
    /// Sessions being opened, per tenant and per token.
    opening_tenant: HashMap<blake3::Hash, usize>,
    opening_token: HashMap<blake3::Hash, usize>,
}

impl SessionOwners {
    pub(crate) fn new(manager: Arc<LocalSessionManager>, limits: SessionLimits) -> Self {
        Self {
            owners: Arc::new(std::sync::Mutex::new(Owners::default())),
            manager,
            limits,
            opening: Arc::new(AtomicUsize::new(0)),
        }
    }

    fn owners(&self) -> std::sync::MutexGuard<'_, Owners> {
        // The map stays consistent whatever panicked while holding it.
        self.owners
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Forget the sessions rmcp no longer has (they end without telling: idle timeout,
    /// shutdown), and answer how many it has.
    async fn prune(&self) -> usize {
        let sessions = self.manager.sessions.read().await;
        let live = sessions.len();
        let mut owners = self.owners();
        owners
            .by_session
            .retain(|id, _| sessions.contains_key(id.as_str()));
        live
    }

    /// Close the sessions idle for longer than the limits allow under pressure; answer how
    /// many were closed.
    async fn evict_idle(&self) -> usize {
        let idle: Vec<String> = {
            let mut owners = self.owners();
            let now = Instant::now();
            let idle: Vec<String> = owners
                .by_session
                .iter()
                .filter(|(_, e)| {
                    e.busy == 0 && now.duration_since(e.last_seen) > self.limits.idle_under_pressure
                })
                .map(|(id, _)| id.clone())
                .collect();
            for id in &idle {
                owners.by_session.remove(id);
            }
            idle
        };
        for id in &idle {
            if let Err(err) = self.manager.close_session(&Arc::from(id.as_str())).await {
                tracing::debug!("closing an idle session failed: {err}");
            }
        }
        if !idle.is_empty() {
            tracing::info!(
                closed = idle.len(),
                "the session table is 3/4 full: idle sessions closed to make room"
            );
        }
        idle.len()
    }

    fn remove(&self, session: &str) {
        self.owners().by_session.remove(session);
    }
}

/// The credentials a request comes with, as the session owner is recorded: a hash of its
/// `Authorization` header with the scheme's case and the spacing normalised (`bearer  x` is
/// `Bearer x`, as the token checks read it); the credentials themselves byte for byte.
fn credentials(request: &Request) -> blake3::Hash {
    if let Some(SessionOwner(name)) = request.extensions().get::<SessionOwner>() {
        let mut hasher = blake3::Hasher::new();
        hasher.update(b"owner:");
        hasher.update(name.as_bytes());
        return hasher.finalize();
    }
    let value = request
        .headers()
        .get(header::AUTHORIZATION)
        .map(HeaderValue::as_bytes)
        .unwrap_or_default()
        .trim_ascii();
    // The scheme, case-folded, and the credentials after the spaces that follow it, as sent.
    let split = value
        .iter()
        .position(u8::is_ascii_whitespace)
        .unwrap_or(value.len());
    let (scheme, rest) = value.split_at(split);
    let mut hasher = blake3::Hasher::new();
    hasher.update(&scheme.to_ascii_lowercase());
    hasher.update(b" ");
    hasher.update(rest.trim_ascii());
    hasher.finalize()
}

/// The tenant of a request: the one the server named, else its credentials.
fn tenant(request: &Request, credentials: blake3::Hash) -> blake3::Hash {
    match request.extensions().get::<SessionTenant>() {
        Some(SessionTenant(name)) => {
            let mut hasher = blake3::Hasher::new();
            hasher.update(b"tenant:");
            hasher.update(name.as_bytes());
            hasher.finalize()
        }
        None => credentials,
    }
}

/// A refusal of a new session: `status` with `Retry-After` and a JSON-RPC error (the
/// `initialize`'s id) whose data has a hint and says that retrying later helps.
fn busy(
    status: StatusCode,
    id: Option<serde_json::Value>,
    message: String,
    hint: &str,
) -> Response {
    tracing::debug!(%status, "{message}");
    let frame = serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {
            "code": SERVER_BUSY,
            "message": message,
            "data": {
                "code": if status == StatusCode::TOO_MANY_REQUESTS { "too_many_sessions" } else { "server_full" },
                "hint": hint,
                "retryable": true,
                "retry_after_secs": RETRY_AFTER_SECS,
            },
        },
    });
    let mut response = (status, frame.to_string()).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(RETRY_AFTER_SECS));
    response
}

/// Bind each new session to its caller's credentials and tenant, and refuse a session's
/// requests from anyone else as rmcp refuses an unknown session (404). An `initialize`
/// inside a live session is refused (`-32600`), the session going on unchanged; in an unknown
/// one, it is `404` as any request there. New sessions past a limit are refused.
pub(crate) async fn own_sessions(
    State(owners): State<SessionOwners>,
    request: Request,
    next: Next,
) -> Response {
    use crate::edge::{INVALID_REQUEST, Refusal};

    let caller = credentials(&request);
    let initialize = request.extensions().get::<Initialize>().cloned();
    let session = request
        .headers()
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let not_found = || {
        refused(
            StatusCode::NOT_FOUND,
            &Refusal::new(None, SESSION_NOT_FOUND, "session not found"),
        )
    };
    let Some(session) = session else {
        let Some(Initialize(id)) = initialize else {
            // Stateless requests (2026-07-28) and what rmcp refuses itself.
            return next.run(request).await;
        };
        let tenant = tenant(&request, caller);
        let opening = match open(&owners, caller, tenant, id).await {
            Ok(opening) => opening,
            Err(refusal) => return refusal,
        };
        let response = next.run(request).await;
        let made = response
            .headers()
            .get(SESSION_HEADER)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        opening.made(made);
        return response;
    };
    // Under one lock: the owner's check, the session marked busy, then the request's id
    // taken for as long as its answer is being sent (one answer per id at a time in a
    // session), unless it is taken.
    let in_flight = {
        let mut held = owners.owners();
        // blake3::Hash compares in constant time.
        if held
            .by_session
            .get(&session)
            .is_some_and(|entry| entry.token != caller)
        {
            tracing::debug!("a session was used with other credentials than opened it");
            return not_found();
        }
        let in_flight = match request.extensions().get::<RequestId>() {
            None => None,
            Some(RequestId(id)) => {
                let key = (session.clone(), id.to_string());
                if !held.in_flight.insert(key.clone()) {
                    return refused(
                        StatusCode::BAD_REQUEST,
                        &Refusal::new(
                            Some(id.clone()),
                            INVALID_REQUEST,
                            "a request with this id is in flight in this session already: give each request its own id",
                        ),
                    );
                }
                Some(InFlight {
                    owners: owners.clone(),
                    key,
                })
            }
        };
        if let Some(entry) = held.by_session.get_mut(&session) {
            entry.busy += 1;
            entry.last_seen = Instant::now();
        }
        in_flight
    };
    let activity = Activity {
        owners: owners.clone(),
        session: session.clone(),
    };
    let ends = request.method() == axum::http::Method::DELETE;
    if ends || initialize.is_some() {
        // rmcp answers the end of a session it does not know with 202, as if it had ended it,
        // and a second initialize by replacing the session's client.
        if !owners
            .manager
            .sessions
            .read()
            .await
            .contains_key(session.as_str())
        {
            return not_found();
        }
        if let Some(Initialize(id)) = initialize {
            return refused(
                StatusCode::BAD_REQUEST,
                &Refusal::new(
                    Some(id),
                    INVALID_REQUEST,
                    "the session is initialized already: a second initialize is refused, and the session goes on as it was",
                ),
            );
        }
    }
    let response = next.run(request).await;
    if ends && response.status().is_success() {
        owners.remove(&session);
    }
    // The request is in flight (and the session busy) until its answer is sent or the
    // client went away.
    response.map(|body| {
        axum::body::Body::new(Guarded {
            body,
            _in_flight: in_flight,
            _activity: activity,
        })
    })
}

/// Count a new session of `token` in `tenant` against the limits (closing idle sessions
/// first when the table is under pressure): its reservation, or the refusal.
async fn open(
    owners: &SessionOwners,
    token: blake3::Hash,
    tenant: blake3::Hash,
    id: serde_json::Value,
) -> Result<Opening, Response> {
    let limits = owners.limits;
    // Counted before rmcp makes it, so that initializes sent together cannot pass the
    // limits together.
    let opening = Opening::new(owners.clone(), token, tenant);
    let mut open = owners.prune().await;
    if open + opening.ahead >= limits.pressure() {
        let closed = owners.evict_idle().await;
        open = open.saturating_sub(closed);
    }
    if open + opening.ahead >= limits.total {
        return Err(busy(
            StatusCode::SERVICE_UNAVAILABLE,
            Some(id),
            format!(
                "the server keeps {} sessions already: try again later",
                limits.total
            ),
            "Retry after the time in Retry-After; sessions end when their clients close them or after they stay idle.",
        ));
    }
    let (by_tenant, by_token) = {
        let held = owners.owners();
        let count =
            |key: &dyn Fn(&Entry) -> bool| held.by_session.values().filter(|e| key(e)).count();
        (
            count(&|e| e.tenant == tenant) + opening.tenant_ahead + 1,
            count(&|e| e.token == token) + opening.token_ahead + 1,
        )
    };
    // The counts hold the sessions made, the reservations taken before this one (as the
    // server's count above: those after it are not its concern) and this one; a session is
    // counted once, its reservation ending in the same step as it is recorded
    // ([`Opening::made`]).
    if by_tenant > limits.per_tenant {
        return Err(busy(
            StatusCode::TOO_MANY_REQUESTS,
            Some(id),
            format!(
                "this tenant keeps {} sessions already, its share of the server's {}",
                limits.per_tenant, limits.total
            ),
            "End the sessions you no longer use (DELETE /mcp with their Mcp-Session-Id), or retry after the time in Retry-After.",
        ));
    }
    if by_token > limits.per_token {
        return Err(busy(
            StatusCode::TOO_MANY_REQUESTS,
            Some(id),
            format!(
                "this token keeps {} sessions already, its share of the server's {}",
                limits.per_token, limits.total
            ),
            "End the sessions you no longer use (DELETE /mcp with their Mcp-Session-Id), or retry after the time in Retry-After.",
        ));
    }
    Ok(opening)
}

/// One session being opened, counted in the totals while it lives.
struct Opening {
    owners: SessionOwners,
    token: blake3::Hash,
    tenant: blake3::Hash,
    /// How many were being opened before this one: in all, of its tenant, of its token.
    ahead: usize,
    tenant_ahead: usize,
    token_ahead: usize,
    /// Taken out of the counts already ([`Opening::made`]).
    released: bool,
}

impl Opening {
    fn new(owners: SessionOwners, token: blake3::Hash, tenant: blake3::Hash) -> Self {
        let ahead = owners.opening.fetch_add(1, Ordering::SeqCst);
        let (tenant_ahead, token_ahead) = {
            let mut held = owners.owners();
            let by_tenant = held.opening_tenant.entry(tenant).or_default();
            let tenant_ahead = *by_tenant;
            *by_tenant += 1;
            let by_token = held.opening_token.entry(token).or_default();
            let token_ahead = *by_token;
            *by_token += 1;
            (tenant_ahead, token_ahead)
        };
        Self {
            owners,
            token,
            tenant,
            ahead,
            tenant_ahead,
            token_ahead,
            released: false,
        }
    }

    /// The session rmcp made (if it made one) recorded for its owner, and this reservation
    /// ended, under one lock: a count of the tenant's or token's sessions never sees it
    /// twice (recorded and still opening) nor not at all.
    fn made(mut self, session: Option<String>) {
        let mut held = self.owners.owners();
        if let Some(session) = session {
            held.by_session.insert(
                session,
                Entry {
                    token: self.token,
                    tenant: self.tenant,
                    last_seen: Instant::now(),
                    busy: 0,
                },
            );
        }
        self.release(&mut held);
        self.released = true;
    }

    /// This reservation taken out of the counts (`held` is the owners' lock).
    fn release(&self, held: &mut Owners) {
        self.owners.opening.fetch_sub(1, Ordering::SeqCst);
        for (map, key) in [
            (&mut held.opening_tenant, self.tenant),
            (&mut held.opening_token, self.token),
        ] {
            if let Some(n) = map.get_mut(&key) {
                *n = n.saturating_sub(1);
                if *n == 0 {
                    map.remove(&key);
                }
            }
        }
    }
}

/// A reservation whose request ended without [`Opening::made`] (refused, cancelled) ends
/// here.
impl Drop for Opening {
    fn drop(&mut self) {
        if !self.released {
            let owners = self.owners.clone();
            let mut held = owners.owners();
            self.release(&mut held);
        }
    }
}

/// A request id in flight in a session; freed when dropped.
struct InFlight {
    owners: SessionOwners,
    key: (String, String),
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.owners.owners().in_flight.remove(&self.key);
    }
}

/// A request (or stream) of a session being answered: the session is not idle meanwhile.
struct Activity {
    owners: SessionOwners,
    session: String,
}

impl Drop for Activity {
    fn drop(&mut self) {
        if let Some(entry) = self.owners.owners().by_session.get_mut(&self.session) {
            entry.busy = entry.busy.saturating_sub(1);
            entry.last_seen = Instant::now();
        }
    }
}

/// An answer's body that holds its request's [`InFlight`] and [`Activity`] until it is
/// sent or dropped.
struct Guarded {
    body: axum::body::Body,
    _in_flight: Option<InFlight>,
    _activity: Activity,
}

impl http_body::Body for Guarded {
    type Data = bytes::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<bytes::Bytes>, axum::Error>>> {
        std::pin::Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}
