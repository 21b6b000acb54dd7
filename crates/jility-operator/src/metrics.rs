//! `GET /metrics`: `jility serve` in the Prometheus text format, through the `metrics`
//! facade and its Prometheus exporter (installed once per process).
//!
//! What is measured: requests by route template (never a raw path), method and status,
//! with latency histograms; MCP tool calls by tool and outcome; the database pools (in use,
//! idle, most, waits, failed checkouts) and statement times ([`jility_pg::measure`]);
//! rate-limit refusals; live MCP sessions and event subscribers; whether the database
//! answers; build information. No label carries a token, an email, a workspace's name or
//! a ticket's text: every label value comes from a fixed set or the route table.
//!
//! Where it is served: on the main listener behind `Authorization: Bearer
//! $JILITY_METRICS_TOKEN` (404 while that is unset), and without credentials on
//! `--metrics-listen ADDR` (an address the operator keeps private).

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

use jility_pg::store::PgDatabase;

pub const HTTP_REQUESTS: &str = "jility_http_requests_total";
pub const HTTP_SECONDS: &str = "jility_http_request_duration_seconds";
pub const TOOL_CALLS: &str = "jility_mcp_tool_calls_total";
pub const TOOL_SECONDS: &str = "jility_mcp_tool_call_duration_seconds";
pub const RATE_LIMITED: &str = "jility_rate_limit_refusals_total";
pub const POOL_CONNECTIONS: &str = "jility_db_pool_connections";
pub const POOL_MAX: &str = "jility_db_pool_max_connections";
pub const DATABASE_UP: &str = "jility_database_up";
pub const DATABASE_FULL: &str = "jility_database_refusing_connections";
pub const SESSIONS: &str = "jility_mcp_sessions";
pub const SUBSCRIBERS: &str = "jility_event_subscribers";
pub const BUILD_INFO: &str = "jility_build_info";
pub const STANDBY_IN_USE: &str = "jility_db_standby_in_use";
pub const STANDBY_LAG: &str = "jility_db_standby_lag_seconds";

/// The variable holding the bearer token `GET /metrics` asks for on the main listener.
pub const TOKEN_VAR: &str = "JILITY_METRICS_TOKEN";

/// Seconds: from a cached read (well under a millisecond) to the longest a request waits.
const BUCKETS: &[f64] = &[
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
];

/// The process's exporter: installed on first use; `None` when a recorder of another kind
/// was installed first (then nothing is exported).
pub fn exporter() -> Option<&'static PrometheusHandle> {
    static HANDLE: OnceLock<Option<PrometheusHandle>> = OnceLock::new();
    HANDLE
        .get_or_init(|| {
            let builder = PrometheusBuilder::new()
                .set_buckets_for_metric(Matcher::Suffix("_seconds".into()), BUCKETS)
                .map_err(|err| tracing::warn!(error = %err, "cannot set the metrics' buckets"))
                .ok()?;
            let handle = builder
                .install_recorder()
                .map_err(|err| tracing::warn!(error = %err, "cannot install the metrics recorder"))
                .ok()?;
            describe();
            Some(handle)
        })
        .as_ref()
}

fn describe() {
    use metrics::{Unit, describe_counter, describe_gauge, describe_histogram};
    describe_counter!(
        HTTP_REQUESTS,
        "HTTP requests answered, by method, route template and status."
    );
    describe_histogram!(
        HTTP_SECONDS,
        Unit::Seconds,
        "Time to answer an HTTP request (to its headers), by method and route template."
    );
    describe_counter!(
        TOOL_CALLS,
        "MCP tool calls at /mcp, by tool and outcome (ok, error)."
    );
    describe_histogram!(
        TOOL_SECONDS,
        Unit::Seconds,
        "Time an MCP tool call took, by tool."
    );
    describe_counter!(
        RATE_LIMITED,
        "Requests refused by a rate limit, by limit (token, workspace)."
    );
    describe_gauge!(
        POOL_CONNECTIONS,
        "Open database connections of a pool, by pool and state (in_use, idle)."
    );
    describe_gauge!(POOL_MAX, "The most connections a pool opens.");
    describe_gauge!(
        DATABASE_UP,
        "1 while the database can be reached and answers, else 0."
    );
    describe_gauge!(
        DATABASE_FULL,
        "1 while PostgreSQL refuses new connections (max_connections or a connection limit reached), else 0."
    );
    describe_gauge!(SESSIONS, "Live MCP sessions at /mcp.");
    describe_gauge!(
        SUBSCRIBERS,
        "Open event streams, by kind (api: /api/v1/events, web: live board pages)."
    );
    describe_gauge!(BUILD_INFO, "Always 1; its labels say which jility runs.");
    describe_gauge!(
        STANDBY_IN_USE,
        "1 while a standby (--read-replica, by place from 0) takes reads, else 0."
    );
    describe_gauge!(
        STANDBY_LAG,
        "How far behind the primary a standby was at its watch's last answer."
    );
    jility_pg::measure::describe();
}

/// The outermost layer of every route: the request counted and timed by its route's
/// template (`unmatched` for a path no route takes; the probes and `/metrics` are left out),
/// in a span of its own when traces are exported ([`super::traces`]).
pub async fn record(request: Request, next: Next) -> Response {
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or("unmatched", MatchedPath::as_str)
        .to_string();
    if matches!(route.as_str(), "/healthz" | "/readyz" | "/metrics") {
        return next.run(request).await;
    }
    let method = method_label(request.method());
    let started = Instant::now();
    let response = match crate::traces::request(method, &route, request.headers()) {
        Some(span) => {
            use tracing::Instrument as _;
            let response = next.run(request).instrument(span.clone()).await;
            crate::traces::answered(&span, response.status().as_u16());
            response
        }
        None => next.run(request).await,
    };
    let status = response.status().as_u16().to_string();
    metrics::counter!(HTTP_REQUESTS, "method" => method, "route" => route.clone(), "status" => status)
        .increment(1);
    metrics::histogram!(HTTP_SECONDS, "method" => method, "route" => route)
        .record(started.elapsed().as_secs_f64());
    response
}

fn method_label(method: &axum::http::Method) -> &'static str {
    use axum::http::Method;
    match *method {
        Method::GET => "GET",
        Method::HEAD => "HEAD",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::PATCH => "PATCH",
        Method::DELETE => "DELETE",
        Method::OPTIONS => "OPTIONS",
        _ => "other",
    }
}

/// One MCP tool call, recorded when it ends.
pub fn tool_call(tool: &'static str, started: Instant, ok: bool) {
    let outcome = if ok { "ok" } else { "error" };
    metrics::counter!(TOOL_CALLS, "tool" => tool, "outcome" => outcome).increment(1);
    metrics::histogram!(TOOL_SECONDS, "tool" => tool).record(started.elapsed().as_secs_f64());
}

/// A request refused by the rate limit of `scope` (`token`, `workspace`).
pub fn rate_limited(scope: &'static str) {
    metrics::counter!(RATE_LIMITED, "limit" => scope).increment(1);
}

/// Open event streams by kind, counted while a [`Subscribed`] lives.
static API_STREAMS: AtomicI64 = AtomicI64::new(0);
static WEB_STREAMS: AtomicI64 = AtomicI64::new(0);

/// An open event stream, counted until dropped.
pub struct Subscribed(&'static AtomicI64);

impl Subscribed {
    /// A stream of `/api/v1/events`.
    pub fn api() -> Self {
        API_STREAMS.fetch_add(1, Ordering::Relaxed);
        Self(&API_STREAMS)
    }

    /// A live page of the web board.
    pub fn web() -> Self {
        WEB_STREAMS.fetch_add(1, Ordering::Relaxed);
        Self(&WEB_STREAMS)
    }
}

impl Drop for Subscribed {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// The live MCP sessions, as the endpoint counts them.
pub type SessionCount = mcp_common::http::LiveSessions;

/// What a scrape reads besides what was recorded: the database's pools and health, the MCP
/// endpoint's sessions; and the token `/metrics` asks for on the main listener.
pub struct Metrics {
    /// The request pool (with the standbys') and the counters' pool.
    pools: Vec<PgDatabase>,
    sessions: OnceLock<SessionCount>,
    /// The hash of `JILITY_METRICS_TOKEN`, when set (never kept in the clear).
    token: Option<blake3::Hash>,
}

impl Metrics {
    /// The metrics of a server on `db` whose rate limits count through `counters`.
    pub fn new(db: &PgDatabase, counters: &PgDatabase) -> Self {
        Self {
            pools: vec![db.clone(), counters.clone()],
            sessions: OnceLock::new(),
            token: token(),
        }
    }

    /// The MCP endpoint's live sessions, once it is made.
    pub fn count_sessions(&self, sessions: SessionCount) {
        let _ = self.sessions.set(sessions);
    }
}

/// The hash of `JILITY_METRICS_TOKEN`, when set.
fn token() -> Option<blake3::Hash> {
    let token = std::env::var(TOKEN_VAR).ok()?;
    let token = token.trim();
    if token.is_empty() {
        return None;
    }
    if token.len() < 16 {
        tracing::warn!(
            "{TOKEN_VAR} is shorter than 16 characters: anyone who guesses it reads the server's metrics"
        );
    }
    Some(blake3::hash(token.as_bytes()))
}

/// The text of a scrape: the gauges read now, then everything recorded.
async fn render(state: &Metrics) -> Option<String> {
    let handle = exporter()?;
    for db in &state.pools {
        let (open, idle, most) = db.pool_state();
        let pool = db.role();
        metrics::gauge!(POOL_CONNECTIONS, "pool" => pool, "state" => "in_use")
            .set(f64::from(open.saturating_sub(idle)));
        metrics::gauge!(POOL_CONNECTIONS, "pool" => pool, "state" => "idle").set(f64::from(idle));
        metrics::gauge!(POOL_MAX, "pool" => pool).set(f64::from(most));
    }
    let db = state.pools.first()?;
    for (standby, open, idle, most) in db.standby_pools() {
        let pool = format!("standby{standby}");
        metrics::gauge!(POOL_CONNECTIONS, "pool" => pool.clone(), "state" => "in_use")
            .set(f64::from(open.saturating_sub(idle)));
        metrics::gauge!(POOL_CONNECTIONS, "pool" => pool.clone(), "state" => "idle")
            .set(f64::from(idle));
        metrics::gauge!(POOL_MAX, "pool" => pool).set(f64::from(most));
    }
    for standby in db.standbys().unwrap_or_default() {
        let index = standby.standby.to_string();
        let in_use = if standby.state == "in_use" { 1.0 } else { 0.0 };
        metrics::gauge!(STANDBY_IN_USE, "standby" => index.clone()).set(in_use);
        if let Some(lag) = standby.lag_ms {
            metrics::gauge!(STANDBY_LAG, "standby" => index).set(lag as f64 / 1000.0);
        }
    }
    let health = db.health();
    let up = !health.unreachable() && !health.unresponsive();
    metrics::gauge!(DATABASE_UP).set(if up { 1.0 } else { 0.0 });
    metrics::gauge!(DATABASE_FULL).set(if health.full() { 1.0 } else { 0.0 });
    if let Some(sessions) = state.sessions.get() {
        metrics::gauge!(SESSIONS).set(sessions.count().await as f64);
    }
    metrics::gauge!(SUBSCRIBERS, "kind" => "api").set(API_STREAMS.load(Ordering::Relaxed) as f64);
    metrics::gauge!(SUBSCRIBERS, "kind" => "web").set(WEB_STREAMS.load(Ordering::Relaxed) as f64);
    metrics::gauge!(BUILD_INFO, "version" => env!("CARGO_PKG_VERSION")).set(1.0);
    Some(handle.render())
}

/// `GET /metrics` on the main listener: behind `JILITY_METRICS_TOKEN`.
pub async fn scrape_behind_token(
    State(state): State<Arc<Metrics>>,
    headers: HeaderMap,
) -> Response {
    let Some(expected) = state.token.as_ref() else {
        return refusal(
            StatusCode::NOT_FOUND,
            "metrics are not served here: set JILITY_METRICS_TOKEN (then send it as a bearer token), or serve them on --metrics-listen",
        );
    };
    let given = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            let (scheme, token) = v.trim().split_once(' ')?;
            scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
        });
    // Compared as hashes: the time taken says nothing of how much of the token matched.
    let matches = given.is_some_and(|given| blake3::hash(given.as_bytes()) == *expected);
    if !matches {
        let mut refused = refusal(
            StatusCode::UNAUTHORIZED,
            "send the metrics token: Authorization: Bearer $JILITY_METRICS_TOKEN",
        );
        refused.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            axum::http::HeaderValue::from_static("Bearer realm=\"metrics\""),
        );
        return refused;
    }
    scrape(State(state)).await
}

/// `GET /metrics` on `--metrics-listen`: no credentials (the operator keeps it private).
pub async fn scrape(State(state): State<Arc<Metrics>>) -> Response {
    match render(&state).await {
        Some(text) => (
            [(
                header::CONTENT_TYPE,
                "text/plain; version=0.0.4; charset=utf-8",
            )],
            text,
        )
            .into_response(),
        None => refusal(
            StatusCode::SERVICE_UNAVAILABLE,
            "the metrics recorder could not be installed in this process",
        ),
    }
}

fn refusal(status: StatusCode, text: &'static str) -> Response {
    let mut response = (status, format!("{text}\n")).into_response();
    response.headers_mut().insert(
        header::CACHE_CONTROL,
        axum::http::HeaderValue::from_static("no-store"),
    );
    response
}
