//! `jility serve`: the REST API under `/api/v1` and MCP at `/mcp`, on PostgreSQL, for the
//! workspaces of the database.
//!
//! Before anything else a request with more than one `Host` is refused and OAuth's
//! discovery paths answer that the server takes bearer tokens
//! ([`mcp_common::http::before_auth`]), and a REST path refuses a foreign `Origin`
//! ([`middleware::origin`]). Every request then passes through [`middleware::guard`] (but
//! the public OpenAPI document): the bearer token is authenticated ([`crate::auth::Tokens::authenticate`], on a
//! blocking thread) and the request counted against the token's rate limit
//! ([`crate::ratelimit`]); the [`Principal`] then rides in the request's extensions. Every
//! operation of [`jility_core::ops`] has its route, served by one handler
//! ([`operations::execute`]): the scope is checked, then the operation runs on the tracker of
//! the principal's workspace only ([`Workspaces`]), through the same
//! [`jility_core::tracker::Tracker`] as local mode: only the store differs. The MCP tools at `/mcp`
//! (the binary's adapter over [`ApiState`] as a [`jility_core::Backend`], mounted as the router
//! that [`serve`] is handed) call the same `execute`.
//!
//! Answers are JSON: on success the data the MCP tools put in `structuredContent`'s `data`
//! (a paged list with the `page` object beside its own members, as `jility … --json`
//! prints it); on failure `{"error": envelope}` with the status of the error's class, also
//! for what axum refuses before a handler runs ([`rejections`]: a path that cannot be
//! decoded, a wrong method, a body it cannot read), and `Retry-After` when the error says
//! when to retry (`database_unavailable`: 503).
//!
//! Every write, answered or refused after authentication, and every authentication failure
//! is recorded in the audit log ([`crate::audit`]; authentication failures past a few a
//! minute per client address, or per expired or revoked token, as one summary entry:
//! [`refusals`]); every done write is published as an event ([`crate::events`],
//! `GET /events`).
//!
//! This module does not import rmcp: it serves the domain over plain HTTP and mounts the
//! MCP endpoint the kit builds.

mod audit;
mod body;
mod events;
mod idempotency;
mod middleware;
mod openapi;
mod operations;
pub(crate) mod principals;
mod refusals;
mod rejections;
mod stall;
mod step_up;
mod text;
mod tokens;
pub mod webhooks;
mod whoami;

// What the operator sets and sees, mounted here (and named here, for the floors above).
pub use jility_operator::{metrics, probes, tls, traces};

use std::collections::HashMap;
use std::io::Write as _;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::serve::ListenerExt as _;
use mcp_common::{CursorKey, Cursors, ToolError};
use tokio_util::sync::CancellationToken;

use crate::audit::{Audit, NewEntry};
use crate::auth::{Principal, Tokens};
use crate::events::Events;
use crate::ratelimit::RateLimiter;
use crate::store::{PgDatabase, PgStore};
use jility_core::errors;
use jility_core::for_each_operation;
use jility_core::ops::{self, Operation as _};
use jility_core::service::Service;
use jility_core::tracker::Tracker;

/// Where the API lives.
pub use jility_core::ops::API_PREFIX;

/// The API's OpenAPI document (no token needed).
pub const OPENAPI_PATH: &str = "/api/v1/openapi.json";

/// Largest request body accepted (beyond: 400 `invalid_input`, saying so).
pub const MAX_BODY_BYTES: usize = mcp_common::http::MAX_BODY_BYTES;

/// The project a workspace gets on its first request, as local mode's server does.
const DEFAULT_PROJECT_KEY: &str = "TASK";
pub const DEFAULT_PROJECT_NAME: &str = "Default Project";

/// The context string of the API's cursor keys (blake3 `derive_key`).
const CURSOR_CONTEXT: &str = "jility 2026-11 api cursors v1";

/// The context string of the audit log's cursor keys (one per workspace, like the tickets').
const AUDIT_CURSOR_CONTEXT: &str = "jility 2026-11 audit cursors v1";

/// A workspace has no project directory on the server, so no project templates: the
/// tracker is given a root that holds none (only the built-in templates exist).
pub const NO_TEMPLATES_ROOT: &str = "/nonexistent/jility-cloud";

/// Most threads doing blocking (database) work at once, per CPU. The work is mostly
/// PostgreSQL's, on the same CPUs as often as not: more threads than that only take turns
/// (measured on 2 CPUs with 32 clients: 512 threads 2,720 requests/s and p99 24 ms, 32
/// threads 21.8 ms, 8 threads 3,050/s and 17 ms; `docs/benchmarks.md`).
const BLOCKING_THREADS_PER_CPU: usize = 4;
const MIN_BLOCKING_THREADS: usize = 8;

/// How `jility serve` runs.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    pub listen: SocketAddr,
    pub database_url: String,
    /// Requests per minute per token.
    pub rate_limit: u32,
    /// The most connections the process opens to the database ([`jility_pg::store::Budget`]).
    pub pool_size: u32,
    /// The PEM certificate chain and private key to terminate TLS with, if any.
    pub tls: Option<(PathBuf, PathBuf)>,
    /// A second listener serving `/metrics` (and the probes) without credentials.
    pub metrics_listen: Option<SocketAddr>,
    /// Standbys callers' reads may go to (`--read-replica`), and how far behind one may be.
    pub read_replicas: Vec<String>,
    pub replica_max_lag: std::time::Duration,
}

/// What every request shares: one handle (every layer and handler of every request clones
/// it, so a clone is one reference count, not one per part).
#[derive(Clone)]
pub struct ApiState(Arc<Shared>);

impl std::ops::Deref for ApiState {
    type Target = Shared;

    fn deref(&self) -> &Shared {
        &self.0
    }
}

/// The parts of [`ApiState`].
pub struct Shared {
    pub db: PgDatabase,
    pub tokens: Tokens,
    pub limiter: RateLimiter,
    pub workspaces: Workspaces,
    pub audit: Audit,
    pub events: Events,
    /// Recently authenticated tokens.
    pub(crate) principals: principals::Principals,
    /// The refusals of the current minute, per source: how many get audit entries.
    refusals: refusals::Refusals,
    /// Cancelled when the server stops: open event streams end.
    pub shutdown: CancellationToken,
    /// The server terminates TLS (its public URLs are https).
    pub tls: bool,
    /// What `/readyz` found last, and whether the server is stopping.
    pub readiness: Arc<probes::Readiness>,
    /// What a scrape of `/metrics` reads, and the token it asks for.
    pub metrics: Arc<metrics::Metrics>,
}

impl ApiState {
    /// Token `token_id` was revoked (here, or in another process whose event was heard):
    /// neither its principal nor its leased requests are used again by this process.
    pub fn forget_token(&self, token_id: i64) {
        self.principals.forget_token(token_id);
        self.limiter.forget_token(token_id);
    }

    /// The state of a server on `db`; `tls` when it terminates TLS.
    pub fn new(db: &PgDatabase, rate_limit: u32, tls: bool) -> Result<Self, ToolError> {
        let counters = db.counters();
        let state = Self(Arc::new(Shared {
            db: db.clone(),
            tokens: Tokens::new(db),
            limiter: RateLimiter::new(counters.clone(), rate_limit),
            workspaces: Workspaces::new(db)?,
            audit: Audit::new(db),
            events: {
                // A server watches whether its database answers (`crate::reach`).
                db.watch();
                Events::start(db)
            },
            principals: principals::Principals::default(),
            refusals: refusals::Refusals::with_writer(Audit::new(db)),
            shutdown: CancellationToken::new(),
            tls,
            readiness: Arc::new(probes::Readiness::new(db)),
            metrics: Arc::new(metrics::Metrics::new(db, &counters)),
        }));
        state.hear_revocations();
        Ok(state)
    }

    /// Every revocation, whichever process made it, reaches this process's principals and
    /// rate limiter as soon as its event is heard ([`crate::events`]: it is published in
    /// the transaction that revokes): the token's kept principal and leased requests are
    /// dropped, so its next request asks the database, which refuses it. That is what lets
    /// the limiter lease a quiet token's requests for longer than a second
    /// ([`RateLimiter::hear_revocations`]). When events may have been missed (the listener
    /// reconnected, or this thread fell behind), every lease is cut back to
    /// [`crate::ratelimit::LEASE_TTL`]; when they can no longer be heard, leases stay that
    /// short.
    ///
    /// On a thread of its own (a state may be made outside a runtime), holding the state
    /// weakly: it ends at the first event after the state is dropped.
    fn hear_revocations(&self) {
        use tokio::sync::broadcast::error::RecvError;
        let mut events = self.events.subscribe();
        let shared = Arc::downgrade(&self.0);
        // Subscribed first: no event from here on is missed.
        self.limiter.hear_revocations(true);
        let spawned = std::thread::Builder::new()
            .name("jility-revocations".into())
            .spawn(move || {
                loop {
                    let received = events.blocking_recv();
                    let Some(shared) = shared.upgrade() else {
                        return;
                    };
                    match received {
                        Ok(crate::events::Event::Change(change)) => {
                            if let Some(token_id) = change.revoked_token {
                                shared.principals.forget_token(token_id);
                                shared.limiter.forget_token(token_id);
                            }
                        }
                        Ok(crate::events::Event::Reset) | Err(RecvError::Lagged(_)) => {
                            shared.limiter.revocations_missed();
                        }
                        Err(RecvError::Closed) => {
                            shared.limiter.hear_revocations(false);
                            return;
                        }
                    }
                }
            });
        if let Err(err) = spawned {
            self.limiter.hear_revocations(false);
            tracing::warn!(error = %err, "cannot start the thread that hears revocations; rate-limit leases stay at a second");
        }
    }
}

/// One tracker per workspace, made on the workspace's first request and kept: each is
/// bound to its workspace ([`PgStore`]), so no statement it runs can reach another.
#[derive(Clone)]
pub struct Workspaces {
    db: PgDatabase,
    /// Shared by every process on the database (kept in it); each workspace's cursor key is
    /// derived from it and the workspace's id, so a cursor of one workspace is refused by
    /// another, and honoured by every process.
    cursor_secret: [u8; 32],
    open: Arc<Mutex<HashMap<i64, Service<PgStore>>>>,
}

impl Workspaces {
    fn new(db: &PgDatabase) -> Result<Self, ToolError> {
        let mut fresh = [0u8; 32];
        getrandom::fill(&mut fresh).map_err(|e| {
            ToolError::internal(format!("Cannot draw a random cursor key from the OS: {e}"))
        })?;
        let cursor_secret = db.shared_secret("cursor_key", fresh)?;
        Ok(Self {
            db: db.clone(),
            cursor_secret,
            open: Arc::new(Mutex::new(HashMap::new())),
        })
    }

    /// The tracker of `principal`'s workspace.
    pub async fn service(&self, principal: &Principal) -> Result<Service<PgStore>, ToolError> {
        let workspace_id = principal.workspace_id;
        if let Some(service) = self.cached(workspace_id) {
            return Ok(service);
        }
        let db = self.db.clone();
        let mut material = self.cursor_secret.to_vec();
        material.extend_from_slice(&workspace_id.to_le_bytes());
        let opened = tokio::task::spawn_blocking(move || -> Result<_, ToolError> {
            let store = PgStore::open(&db, workspace_id)?;
            let mut tracker = Tracker::new(
                store,
                PathBuf::from(NO_TEMPLATES_ROOT),
                CursorKey::derive(CURSOR_CONTEXT, &material),
            );
            // Idempotent: a workspace that has its project keeps it.
            tracker.init(DEFAULT_PROJECT_KEY, DEFAULT_PROJECT_NAME, false)?;
            Ok(Service::new(tracker))
        })
        .await
        .map_err(|e| ToolError::internal(format!("Opening the workspace failed: {e}")))??;
        let mut open = self
            .open
            .lock()
            .map_err(|_| ToolError::internal("The workspace cache is poisoned"))?;
        Ok(open.entry(workspace_id).or_insert(opened).clone())
    }

    /// The cursors of `workspace_id`'s audit log: sealed with a key of that workspace, so
    /// another workspace's cursor is refused.
    pub fn audit_cursors(&self, workspace_id: i64) -> Cursors {
        let mut material = self.cursor_secret.to_vec();
        material.extend_from_slice(&workspace_id.to_le_bytes());
        CursorKey::derive(AUDIT_CURSOR_CONTEXT, &material).bind("audit", &workspace_id)
    }

    fn cached(&self, workspace_id: i64) -> Option<Service<PgStore>> {
        self.open
            .lock()
            .ok()
            .and_then(|open| open.get(&workspace_id).cloned())
    }
}

/// The API's routes and `/mcp`, with authentication and rate limiting in front of every one;
/// before them, more than one `Host` is refused ([`mcp_common::http::single_host`]; OAuth's
/// paths are the people's routes', `jility_cloud::oauth`), a REST path refuses a
/// foreign `Origin` ([`middleware::origin`]); every refusal of a REST path is the envelope
/// ([`rejections`]); before all of them, a request holding a NUL where the server decodes
/// text is refused in its path's shape ([`text`]). `local` is the bound address (its own origins). `people` (the web
/// board, `jility_cloud::web::routes`, handed in as `mcp` is) answers every other path, with a
/// person's 404 page for those it does not take.
pub fn router(state: ApiState, mcp: Router, people: Router, local: SocketAddr) -> Router {
    let mut api = Router::new();
    macro_rules! add {
        ($op:ident) => {
            api = api.route(ops::$op::PATH, operations::route::<ops::$op>());
        };
    }
    for_each_operation!(add);
    let api = api
        .route("/events", axum::routing::get(events::stream))
        .route(
            "/tokens",
            axum::routing::post(tokens::create)
                .get(tokens::list)
                .delete(tokens::revoke_by_body),
        )
        .route("/tokens/{token}", axum::routing::delete(tokens::revoke))
        .route("/audit", axum::routing::get(audit::list))
        .route(
            "/webhooks",
            axum::routing::post(webhooks::create).get(webhooks::list),
        )
        .route(
            "/webhooks/{id}",
            axum::routing::get(webhooks::get)
                .patch(webhooks::update)
                .delete(webhooks::delete),
        )
        .route(
            "/webhooks/{id}/rotate-secret",
            axum::routing::post(webhooks::rotate),
        )
        .route("/webhooks/{id}/test", axum::routing::post(webhooks::test))
        .route(
            "/webhooks/{id}/deliveries",
            axum::routing::get(webhooks::deliveries),
        )
        .route(
            "/webhooks/{id}/deliveries/{delivery}/redeliver",
            axum::routing::post(webhooks::redeliver),
        )
        .route("/whoami", axum::routing::get(whoami::whoami))
        .route(
            OPENAPI_PATH.trim_start_matches(API_PREFIX),
            axum::routing::get(openapi_document),
        )
        .fallback(not_found)
        .with_state(state.clone());
    // A path under `/api/` that no route takes is the API's JSON 404, behind the same
    // guard as the API (`/mcp/…` is the MCP router's).
    let machines = Router::new()
        .nest(API_PREFIX, api)
        .merge(mcp)
        .route("/api", axum::routing::any(not_found))
        .route("/api/{*rest}", axum::routing::any(not_found))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            middleware::guard,
        ))
        .layer(axum::middleware::from_fn_with_state(
            middleware::Origins::of(local),
            middleware::origin,
        ))
        .layer(axum::middleware::from_fn(rejections::as_envelope));
    // The probes and the metrics: no API token (`/metrics` asks for its own).
    let operators = Router::new()
        .route("/healthz", axum::routing::get(probes::healthz))
        .route("/readyz", axum::routing::get(probes::readyz))
        .with_state(state.readiness.clone())
        .merge(
            Router::new()
                .route("/metrics", axum::routing::get(metrics::scrape_behind_token))
                .with_state(state.metrics.clone()),
        );
    // People's pages at `/` (signed in with a session cookie, not a token): every other
    // path, a person's 404 page for those no page takes.
    Router::new()
        .merge(operators)
        .merge(machines)
        .merge(people)
        .fallback_service(
            axum::routing::any(jility_web::not_found)
                .layer(axum::middleware::from_fn(jility_web::security::headers)),
        )
        // No NUL reaches a handler (PostgreSQL's text cannot hold one): [`text`].
        .layer(axum::middleware::from_fn(text::refuse_nul))
        .layer(axum::middleware::from_fn(mcp_common::http::single_host))
        .layer(axum::middleware::from_fn_with_state(
            state.tls,
            strict_transport,
        ))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
}

/// Over TLS, every answer tells browsers to come back over HTTPS only (a year, HSTS).
async fn strict_transport(
    axum::extract::State(tls): axum::extract::State<bool>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let mut response = next.run(request).await;
    if tls {
        response.headers_mut().insert(
            axum::http::header::STRICT_TRANSPORT_SECURITY,
            axum::http::HeaderValue::from_static("max-age=31536000"),
        );
    }
    response
}

/// `GET /api/v1/openapi.json`: the API's description, generated from the operations table
/// once per process.
async fn openapi_document() -> Response {
    static DOCUMENT: std::sync::LazyLock<String> =
        std::sync::LazyLock::new(|| openapi::document().to_string());
    (
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        DOCUMENT.as_str(),
    )
        .into_response()
}

async fn not_found() -> Response {
    ApiError(
        ToolError::not_found("There is no such endpoint")
            .with_hint(format!("The API lives under {API_PREFIX} (its OpenAPI document: {API_PREFIX}/openapi.json); MCP is at /mcp.")),
    )
    .into_response()
}

/// After SIGTERM: how long requests in flight have before MCP sessions and event streams
/// close; and when the process stops whatever is still open.
const DRAIN_GRACE: std::time::Duration = std::time::Duration::from_secs(3);
const DRAIN_DEADLINE: std::time::Duration = std::time::Duration::from_secs(10);

/// `jility serve`: connect (migrating the database), bind, announce the address on stderr,
/// and serve the API and MCP (over TLS when configured) until SIGINT or SIGTERM, answering
/// the requests in flight before stopping. `mcp` makes the MCP endpoint once the address is
/// bound: from the state its tools run on, the bound address (for its Host checks) and the
/// token cancelled when the server stops (its sessions end). `people` makes the web board
/// for people at `/` (`jility_cloud::web::routes`) from the same state, and whether the server
/// terminates TLS (its cookies are then `Secure`).
pub fn serve<M, P>(config: ServeConfig, mcp: M, people: P) -> Result<(), ToolError>
where
    M: FnOnce(ApiState, SocketAddr, CancellationToken) -> (Router, metrics::SessionCount)
        + Send
        + 'static,
    P: FnOnce(&ApiState, bool) -> Router + Send + 'static,
{
    let acceptor = match &config.tls {
        Some((cert, key)) => Some(tls::acceptor(cert, key)?),
        None => None,
    };
    // Installed before anything is measured (the connection's statements among them).
    metrics::exporter();
    let db = PgDatabase::connect_with_standbys(
        &config.database_url,
        config.pool_size,
        &config.read_replicas,
        config.replica_max_lag,
    )
    .map_err(|err| crate::reach::at_start(&config.database_url, err))?;
    let state = ApiState::new(&db, config.rate_limit, acceptor.is_some())?;
    // Database work runs on blocking threads: past a few per CPU, more threads only share
    // the CPUs unfairly; queued in the runtime instead, requests are served in order.
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .max_blocking_threads((cpus * BLOCKING_THREADS_PER_CPU).max(MIN_BLOCKING_THREADS))
        .enable_all()
        .build()
        .map_err(|e| ToolError::internal(format!("Cannot start the async runtime: {e}")))?;
    // The database's connections (sync clients, each with a runtime of its own) must be
    // closed outside this runtime: these handles outlive it and are dropped last.
    let keep = (db, state.clone());
    let served = runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(config.listen)
            .await
            .map_err(|e| {
                ToolError::new(
                    errors::INVALID_INPUT,
                    format!("Cannot listen on {}: {e}", config.listen),
                )
                .with_hint(
                    "Choose another address with --listen HOST:PORT (port 0 picks a free one).",
                )
            })?;
        let local = listener
            .local_addr()
            .map_err(|e| ToolError::internal(format!("Cannot read the bound address: {e}")))?;
        let metrics_listener = match config.metrics_listen {
            Some(addr) => Some(tokio::net::TcpListener::bind(addr).await.map_err(|e| {
                ToolError::new(
                    errors::INVALID_INPUT,
                    format!("Cannot listen on {addr} for metrics: {e}"),
                )
                .with_hint("Choose another address with --metrics-listen HOST:PORT (port 0 picks a free one).")
            })?),
            None => None,
        };
        // Webhooks: this process's share of the deliveries, until it stops.
        jility_hooks::dispatcher::start(&state.db, &state.events, state.shutdown.child_token());
        let sessions = state.shutdown.child_token();
        let (mcp, live) = mcp(state.clone(), local, sessions);
        state.metrics.count_sessions(live);
        let people = people(&state, acceptor.is_some());
        // Outermost: every request is answered while the database stops answering; then
        // every answer is counted, the stall's too.
        let app = router(state.clone(), mcp, people, local)
            .layer(axum::middleware::from_fn_with_state(
                state.clone(),
                stall::answer_while_the_database_answers,
            ))
            .layer(axum::middleware::from_fn(metrics::record));
        let scheme = if acceptor.is_some() { "https" } else { "http" };
        let metrics_server = match metrics_listener {
            Some(listener) => Some(serve_metrics(listener, state.clone())?),
            None => None,
        };
        announce(scheme, local);
        tracing::info!(%local, rate_limit = config.rate_limit, tls = acceptor.is_some(), "serving the API");
        let stopping = CancellationToken::new();
        let trigger = stopping.clone();
        let stopping_state = state.clone();
        let stop = async move {
            mcp_common::serve::termination().await;
            tracing::info!("stopping: no new connections; answering the requests in flight");
            stopping_state
                .readiness
                .stopping
                .store(true, std::sync::atomic::Ordering::Relaxed);
            trigger.cancel();
        };
        // The refusals suppressed in a minute are recorded when it ends, and at the end.
        let summaries = tokio::spawn(refusals::record_at_window_ends(
            state.refusals.clone(),
            state.audit.clone(),
        ));
        let (refused, audit) = (state.refusals.clone(), state.audit.clone());
        let shutdown = state.shutdown.clone();
        let closer = async move {
            stopping.cancelled().await;
            tokio::time::sleep(DRAIN_GRACE).await;
            shutdown.cancel();
            tokio::time::sleep(DRAIN_DEADLINE.saturating_sub(DRAIN_GRACE)).await;
        };
        // Read deadlines for headers and bodies (MCP_HTTP_READ_TIMEOUT_SECS), as for every
        // HTTP server of the workspace; handlers see the client's address (`ConnectInfo`).
        let read_timeout = mcp_common::connections::read_timeout();
        // A URI longer than hyper reads is answered in its path's shape ([`text`]).
        let overlong: mcp_common::connections::OverlongUri = Arc::new(text::overlong_uri);
        let served = async move {
            match acceptor {
                Some(acceptor) => {
                    let listener = tls::TlsListener::new(listener, acceptor);
                    mcp_common::connections::serve_app_with(listener, app, read_timeout, stop, Some(overlong)).await;
                }
                None => {
                    let listener = listener.tap_io(|tcp| {
                        if let Err(err) = tcp.set_nodelay(true) {
                            tracing::debug!("cannot set TCP_NODELAY: {err}");
                        }
                    });
                    mcp_common::connections::serve_app_with(listener, app, read_timeout, stop, Some(overlong)).await;
                }
            }
        };
        let result = tokio::select! {
            () = served => Ok(()),
            () = closer => {
                tracing::warn!("connections still open at the shutdown deadline; stopping anyway");
                Ok(())
            }
        };
        summaries.abort();
        if let Some(metrics_server) = metrics_server {
            metrics_server.abort();
        }
        // The refusals handed to their writer are written first (in their order).
        let flushing = refused.clone();
        let flushed = tokio::task::spawn_blocking(move || flushing.flush(DRAIN_GRACE)).await;
        if !matches!(flushed, Ok(true)) {
            tracing::warn!("could not record every refused request in time");
        }
        let pending = refused.drain();
        if !pending.is_empty() {
            let written = tokio::task::spawn_blocking(move || {
                refusals::write_summaries(&audit, &pending);
            });
            if tokio::time::timeout(DRAIN_GRACE, written).await.is_err() {
                tracing::warn!("could not record the refusals suppressed this minute in time");
            }
        }
        result
    });
    drop(runtime);
    drop(keep);
    served
}

/// Serve `/metrics`, `/healthz` and `/readyz` on `listener`, without credentials, until the
/// task is aborted; its address is announced on stderr.
fn serve_metrics(
    listener: tokio::net::TcpListener,
    state: ApiState,
) -> Result<tokio::task::JoinHandle<()>, ToolError> {
    let local = listener
        .local_addr()
        .map_err(|e| ToolError::internal(format!("Cannot read the metrics address: {e}")))?;
    let app = Router::new()
        .route("/metrics", axum::routing::get(metrics::scrape))
        .with_state(state.metrics.clone())
        .merge(
            Router::new()
                .route("/healthz", axum::routing::get(probes::healthz))
                .route("/readyz", axum::routing::get(probes::readyz))
                .with_state(state.readiness.clone()),
        );
    let line = format!("jility: serving metrics at http://{local}/metrics\n");
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
    Ok(tokio::spawn(async move {
        if let Err(err) = axum::serve(listener, app).await {
            tracing::warn!(error = %err, "the metrics listener failed");
        }
    }))
}

/// Tell whoever started the server where it listens (the port may be the system's choice).
fn announce(scheme: &str, local: SocketAddr) {
    // One write of the whole line, so that a reader never sees half of it.
    let line = format!(
        "jility: serving the API at {scheme}://{local}{API_PREFIX} and MCP at {scheme}://{local}/mcp\n"
    );
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}

/// A failure as the API answers it: the status of its class and `{"error": envelope}`.
#[derive(Debug)]
pub struct ApiError(pub ToolError);

impl From<ToolError> for ApiError {
    fn from(err: ToolError) -> Self {
        Self(err)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = StatusCode::from_u16(self.0.class().http_status())
            .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        if status.is_server_error() {
            tracing::warn!(code = %self.0.code, message = %self.0.message, "request failed");
        }
        let body = serde_json::json!({ "error": self.0 });
        let mut response = (status, axum::Json(body)).into_response();
        // A retryable failure that says when (a database that cannot be reached, a rate
        // limit) tells HTTP clients too.
        if let Some(secs) = self.0.retry_after_secs.filter(|_| self.0.retryable())
            && let Ok(value) = axum::http::HeaderValue::from_str(&secs.to_string())
        {
            response
                .headers_mut()
                .insert(axum::http::header::RETRY_AFTER, value);
        }
        response
    }
}

/// The HTTP status `answer` has or will have.
pub(crate) fn status_of(answer: &Result<Response, ApiError>) -> u16 {
    match answer {
        Ok(response) => response.status().as_u16(),
        Err(err) => err.0.class().http_status(),
    }
}

/// Record a write by `principal` in the audit log, with the `status` answered, on a
/// blocking thread (awaited, so that the entry is there once the answer is); a failure to
/// record is logged and does not change the answer.
pub async fn audited(
    state: &ApiState,
    principal: &Principal,
    operation: &'static str,
    ticket: Option<String>,
    detail: Option<String>,
    status: u16,
) {
    audited_then(state, principal, operation, ticket, detail, status, None).await;
}

/// [`audited`], then publish `change` (a done write) to every server process, in the same
/// trip to a blocking thread: both are in place before the caller is answered.
pub(crate) async fn audited_then(
    state: &ApiState,
    principal: &Principal,
    operation: &'static str,
    ticket: Option<String>,
    detail: Option<String>,
    status: u16,
    change: Option<crate::events::Change>,
) {
    let audit = state.audit.clone();
    let db = state.db.clone();
    let workspace_id = principal.workspace_id;
    // A person on the web holds no token: their entry has none, their email as the actor
    // and says it came from the web (`accounts::Session::principal_token_id`).
    let person = crate::accounts::session_of_token_id(principal.token_id).is_some();
    let token_id = (!person).then_some(principal.token_id);
    let detail = detail.or_else(|| person.then(|| "a person, on the web".to_string()));
    let actor = principal.token_name.clone();
    let health = state.db.health().clone();
    let done = tokio::task::spawn_blocking(move || {
        audit.record(&NewEntry {
            workspace_id: Some(workspace_id),
            token_id,
            actor: Some(&actor),
            operation,
            ticket: ticket.as_deref(),
            status,
            detail: detail.as_deref(),
        });
        if let Some(change) = change {
            crate::events::publish(&db, &change);
        }
    });
    // Not waited for once the database stops answering: the entry is written when it
    // answers again (or its failure logged).
    match crate::reach::bounded(&health, None, done).await {
        Ok(Ok(())) => {}
        Ok(Err(err)) => {
            tracing::warn!(operation, error = %err, "could not write an audit entry or an event");
        }
        Err(_) => {
            tracing::warn!(
                operation,
                "answering before the audit entry is written: the database stopped answering"
            );
        }
    }
}
