//! The cloud bridge: `JILITY_MODE=cloud jility --mcp-server` serves the same tools as local
//! mode, each call becoming its operation's request to the API at `JILITY_API_URL`
//! ([`jility_core::ops::request_of`]), with the token of `JILITY_API_TOKEN` (else the one
//! `jility auth login` stored). The answers are decoded into the tracker's own types, so
//! the markdown and `structuredContent` are local mode's.
//!
//! Reads are cached: a ticket, its graph and history 30 s, lists 10 s, search and
//! templates 60 s ([`Operation::CACHE_SECS`]). An entry is dropped when
//! - this bridge writes: everything the write touched (every ticket its answer names) and
//!   every list and search;
//! - the API's event stream (`GET /api/v1/events`, followed in the background) reports
//!   another agent's write, the same way; a `reset` drops everything.
//!
//! The cache answers only while the event stream is followed: when it is down (the API
//! restarts, the network drops) or silent for [`HEARTBEATS_MISSED`] heartbeats (the server
//! hangs with the connection open; `ready` announces the interval), the cache is dropped and
//! every read goes to the API, within [`UNVERIFIED_READ_TIMEOUT`]: past it the read is a
//! retryable `network_error`, never a cached answer. The cache answers again once the
//! stream is back (reconnected, its `ready` seen). A read that was in flight while a write
//! was reported is not cached.
//!
//! The tools listed are those the token's scopes allow, as at `/mcp`: the scopes are asked
//! of the API (`GET /whoami`) at start, or, when it cannot be reached then, once the event
//! stream is ready; until they are known every tool is listed (the API refuses what the
//! token may not do). A call of a tool the scopes do not allow is `permission_denied`,
//! naming the scope, as at `/mcp`.
//!
//! Every write is sent with a fresh `Idempotency-Key`; when its answer is lost (the
//! connection reset or closed, a timeout, a gateway's 502/503/504), it is sent once more
//! with the same key, and the server answers a write it already did with its first answer:
//! a tool call writes at most once.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use futures::StreamExt as _;
use jility_core::backend::{Backend, Caller};
use jility_core::ops::Described;
use jility_core::token::ScopeSet;
use mcp_common_core::ToolError;
use reqwest::Method;
use serde_json::Value;

use crate::client::{self, CONNECT_TIMEOUT, REQUEST_TIMEOUT};
use jility_core::errors;
use jility_core::ops::{self, Operation, Touches as _, Verb};
use jility_core::token::PlainToken;

use crate::credential::Credential;

/// Most cached answers; beyond, the expired ones go, then all.
const MAX_ENTRIES: usize = 10_000;
/// Silence after which the event stream counts as dead when the server announces no
/// heartbeat (one that predates them sends a keep-alive comment every 15 s).
const STREAM_IDLE: Duration = Duration::from_secs(40);
/// Heartbeats missed after which the event stream counts as dead (a server hung with the
/// connection open): the deadline is this many of the intervals `ready` announces.
pub const HEARTBEATS_MISSED: u32 = 3;
/// How long a read may take while the event stream is not followed (nothing vouches for
/// the cache, and the server may be hung): past it, a retryable error.
pub const UNVERIFIED_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// Waits between attempts to follow the event stream.
const FIRST_RETRY: Duration = Duration::from_millis(250);
const LAST_RETRY: Duration = Duration::from_secs(30);

/// How long a write whose answer was lost waits before it is sent again (once).
const RETRY_WAIT: Duration = Duration::from_millis(500);

/// A request that failed, and whether its answer was lost (no answer, a cut-off one, or a
/// gateway's 502/503/504): whether it may have been done all the same.
struct Failure {
    err: ToolError,
    lost: bool,
}

impl Failure {
    fn answered(err: ToolError) -> Self {
        Self { err, lost: false }
    }
}

/// A cached answer.
struct Entry {
    value: Value,
    until: Instant,
    /// Every ticket number the answer names.
    tickets: Vec<String>,
    /// A list or a search: any write may change it.
    collection: bool,
}

#[derive(Default)]
struct Cache {
    entries: HashMap<String, Entry>,
    /// Counts invalidations: an answer fetched across one is not stored.
    generation: u64,
}

impl Cache {
    /// Drop what a write of `tickets` may have changed (everything when it names none).
    fn invalidate(&mut self, tickets: &[String]) {
        self.generation += 1;
        if tickets.is_empty() {
            self.entries.clear();
            return;
        }
        self.entries.retain(|_, entry| {
            !entry.collection && !entry.tickets.iter().any(|t| tickets.contains(t))
        });
    }

    fn clear(&mut self) {
        self.generation += 1;
        self.entries.clear();
    }
}

/// The bridge: the API's address, the token, the HTTP clients and the cache.
pub struct Bridge {
    base: String,
    credential: Credential,
    http: reqwest::Client,
    /// Without a request timeout: the event stream lasts.
    stream_http: reqwest::Client,
    cache: Mutex<Cache>,
    /// Whether the event stream is followed (its `ready` seen and the connection alive).
    following: AtomicBool,
    /// The silence, in milliseconds, after which the event stream counts as dead.
    stream_deadline_ms: Arc<AtomicU64>,
    /// The token's scopes as the API reported them (`GET /whoami`); `None` until known.
    scopes: RwLock<Option<ScopeSet>>,
}

impl Bridge {
    /// The API's base URL (`…/api/v1`).
    pub fn base(&self) -> &str {
        &self.base
    }

    /// A bridge to the API at `base` (`…/api/v1`, checked by [`client::api_base`]).
    pub fn new(base: String, credential: Credential) -> Result<Arc<Self>, ToolError> {
        // reqwest is built without a bundled crypto provider: install ring as the process
        // default (harmless when one is installed already).
        let _ = rustls::crypto::ring::default_provider().install_default();
        let build = |timeout: Option<Duration>| {
            let mut builder = reqwest::Client::builder()
                .user_agent(concat!("jility-bridge/", env!("CARGO_PKG_VERSION")))
                .connect_timeout(CONNECT_TIMEOUT)
                .tcp_nodelay(true);
            if let Some(timeout) = timeout {
                builder = builder.timeout(timeout);
            }
            builder
                .build()
                .map_err(|e| ToolError::internal(format!("Cannot build the HTTP client: {e}")))
        };
        Ok(Arc::new(Self {
            http: build(Some(REQUEST_TIMEOUT))?,
            stream_http: build(None)?,
            base,
            credential,
            cache: Mutex::new(Cache::default()),
            following: AtomicBool::new(false),
            stream_deadline_ms: Arc::new(AtomicU64::new(millis(STREAM_IDLE))),
            scopes: RwLock::new(None),
        }))
    }

    fn cache(&self) -> std::sync::MutexGuard<'_, Cache> {
        // A panic while holding the lock cannot leave the map inconsistent for our uses.
        self.cache
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Run `O` through the API (or answer it from the cache).
    pub async fn exec<O: Operation>(&self, params: O::Params) -> Result<O::Output, ToolError> {
        let request = ops::request_of::<O>(&params)?;
        let key = (O::CACHE_SECS > 0).then(|| format!("{}?{}", request.path, request.query));
        let generation = {
            let cache = self.cache();
            if let Some(key) = &key
                && self.following.load(Ordering::Acquire)
                && let Some(entry) = cache.entries.get(key)
                && entry.until > Instant::now()
            {
                return O::decode(entry.value.clone());
            }
            cache.generation
        };
        if O::writes() {
            let output = match self.send_write(&request).await {
                Ok(value) => O::decode(value),
                Err(err) => Err(err),
            };
            // Drop what the write touched, as its answer declares; when it failed (an error
            // may come after the write), what the request named.
            // A preview or a saved view: nothing cached changed.
            if matches!(&output, Ok(done) if !done.changed_tickets()) {
                return output;
            }
            let tickets = match &output {
                Ok(output) => output.touched(),
                Err(_) => {
                    let mut named: Vec<String> = Vec::new();
                    if let Some(body) = &request.body {
                        ops::ticket_numbers(body, &mut named);
                    }
                    for segment in request.path.split('/') {
                        if ops::is_ticket_number(segment) && !named.iter().any(|t| t == segment) {
                            named.push(segment.to_string());
                        }
                    }
                    named
                }
            };
            // A write that names no ticket number (by UUID) may have touched anything.
            self.cache().invalidate(&tickets);
            return output;
        }
        let value = if self.following.load(Ordering::Acquire) {
            self.send(&request, None).await.map_err(|f| f.err)?
        } else {
            // Nothing vouches for the server (its stream is down or silent): it may be hung,
            // so the read gets a shorter deadline than usual, and a retryable error past it.
            tokio::time::timeout(UNVERIFIED_READ_TIMEOUT, self.send(&request, None))
                .await
                .map_err(|_| {
                    ToolError::new(
                        errors::NETWORK_ERROR,
                        format!(
                            "The jility API at {} did not answer within {} s, and its event stream is down or silent",
                            self.base,
                            UNVERIFIED_READ_TIMEOUT.as_secs()
                        ),
                    )
                    .with_hint("The server may be hung or overloaded; nothing cached is served meanwhile. Retry in a few seconds.")
                })?
                .map_err(|f| f.err)?
        };
        if let Some(key) = key {
            let mut cache = self.cache();
            if cache.generation == generation && self.following.load(Ordering::Acquire) {
                let mut tickets = Vec::new();
                ops::ticket_numbers(&value, &mut tickets);
                if cache.entries.len() >= MAX_ENTRIES {
                    let now = Instant::now();
                    cache.entries.retain(|_, e| e.until > now);
                    if cache.entries.len() >= MAX_ENTRIES {
                        cache.entries.clear();
                    }
                }
                cache.entries.insert(
                    key,
                    Entry {
                        value: value.clone(),
                        until: Instant::now() + Duration::from_secs(O::CACHE_SECS),
                        tickets,
                        collection: !O::PATH.contains("{ticket_id}"),
                    },
                );
            }
        }
        O::decode(value)
    }

    /// A write: sent with a fresh `Idempotency-Key`, and sent once more with the same key
    /// when its answer was lost ([`Failure::lost`]), after [`RETRY_WAIT`]: the server
    /// answers the retry with the first answer when the write was done, so it is done once.
    async fn send_write(&self, request: &ops::Request) -> Result<Value, ToolError> {
        let key = client::idempotency_key()?;
        match self.send(request, Some(&key)).await {
            Err(failure) if failure.lost => {
                tracing::info!(path = %request.path, error = %failure.err.message, "the answer to a write was lost; sending it again with the same idempotency key");
                tokio::time::sleep(RETRY_WAIT).await;
                self.send(request, Some(&key)).await.map_err(|f| f.err)
            }
            answered => answered.map_err(|f| f.err),
        }
    }

    /// One request to the API (with `key` as its `Idempotency-Key`): its JSON answer, or the
    /// API's error, or `network_error`.
    async fn send(&self, request: &ops::Request, key: Option<&str>) -> Result<Value, Failure> {
        let token = self.credential.token().await.map_err(Failure::answered)?;
        match self.send_with(request, key, &token).await {
            // A signed-in bridge's token refused: refreshed once, then sent again (a refused
            // request did nothing, so a write is not repeated).
            Err(failure)
                if failure.err.code == mcp_common_core::codes::UNAUTHENTICATED
                    && self.credential.refresh_after_refusal(&token).await =>
            {
                let token = self.credential.token().await.map_err(Failure::answered)?;
                self.send_with(request, key, &token).await
            }
            answer => answer,
        }
    }

    async fn send_with(
        &self,
        request: &ops::Request,
        key: Option<&str>,
        token: &PlainToken,
    ) -> Result<Value, Failure> {
        let mut url = format!("{}{}", self.base, request.path);
        if !request.query.is_empty() {
            url.push('?');
            url.push_str(&request.query);
        }
        let method = match request.verb {
            Verb::Get => Method::GET,
            Verb::Post => Method::POST,
            Verb::Delete => Method::DELETE,
        };
        let mut http = self.http.request(method, &url).bearer_auth(token.expose());
        if let Some(body) = &request.body {
            http = http.json(body);
        }
        if let Some(key) = key {
            http = http.header(client::IDEMPOTENCY_KEY, key);
        }
        let lost = |e: reqwest::Error| Failure {
            err: client::unreachable(&self.base, token, &e),
            lost: true,
        };
        let response = http.send().await.map_err(lost)?;
        let status = response.status();
        let retry_after = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok());
        let text = response.text().await.map_err(lost)?;
        if status.is_success() {
            return serde_json::from_str(&text).map_err(|e| {
                Failure::answered(ToolError::internal(format!(
                    "The API at {} answered {status} with something that is not JSON: {e}",
                    self.base
                )))
            });
        }
        let mut err = client::api_error(status.as_u16(), &text, &self.base);
        // Whatever the server (or something posing as it) says, the token is not passed on.
        let secret = token.expose();
        if !secret.is_empty() {
            err.message = err.message.replace(secret, "jil_live_…");
            err.hint = err.hint.map(|h| h.replace(secret, "jil_live_…"));
        }
        if err.code == errors::RATE_LIMIT && err.retry_after_secs.is_none() {
            err.retry_after_secs = retry_after;
        }
        Err(Failure {
            err,
            // A gateway's (or a stopping server's) answer: the request may or may not have
            // been done.
            lost: matches!(status.as_u16(), 502..=504),
        })
    }

    /// Follow the API's event stream in the background, for as long as the process runs,
    /// reconnecting (with growing waits) when it drops.
    pub fn follow_events(self: &Arc<Self>) {
        let bridge = Arc::downgrade(self);
        tokio::spawn(async move {
            let mut wait = FIRST_RETRY;
            loop {
                let Some(this) = bridge.upgrade() else {
                    return;
                };
                let followed = this.follow_once().await;
                this.following.store(false, Ordering::Release);
                this.cache().clear();
                match followed {
                    // It was up and ended (the server's stream has a lifetime): reconnect now.
                    Ok(true) => wait = FIRST_RETRY,
                    Ok(false) => {}
                    Err(err) => tracing::debug!(error = %err, "the event stream is down"),
                }
                drop(this);
                tokio::time::sleep(wait).await;
                wait = (wait * 2).min(LAST_RETRY);
            }
        });
    }

    /// Follow the stream until it ends: `Ok(true)` when it had been ready.
    async fn follow_once(&self) -> Result<bool, ToolError> {
        let url = format!("{}/events", self.base);
        let token = self.credential.token().await?;
        let head = self
            .stream_http
            .get(&url)
            .bearer_auth(token.expose())
            .header(reqwest::header::ACCEPT, "text/event-stream")
            .send();
        // A hung server accepts the connection and never answers: bounded like a read.
        let response = tokio::time::timeout(UNVERIFIED_READ_TIMEOUT, head)
            .await
            .map_err(|_| {
                ToolError::new(
                    errors::NETWORK_ERROR,
                    format!("The jility API at {} did not answer", self.base),
                )
            })?
            .map_err(|e| client::unreachable(&self.base, &token, &e))?;
        let status = response.status();
        if !status.is_success() {
            let text = response.text().await.unwrap_or_default();
            return Err(client::api_error(status.as_u16(), &text, &self.base));
        }
        // The server sends a heartbeat whenever it has been silent for the interval its
        // `ready` announces: a stream silent for HEARTBEATS_MISSED intervals (STREAM_IDLE
        // until `ready`, or from a server without heartbeats) is a dead connection or a
        // hung server.
        self.stream_deadline_ms
            .store(millis(STREAM_IDLE), Ordering::Release);
        let bytes = Box::pin(response.bytes_stream());
        let deadline = self.stream_deadline_ms.clone();
        let guarded = futures::stream::unfold(bytes, move |mut bytes| {
            let silence = Duration::from_millis(deadline.load(Ordering::Acquire));
            async move {
                match tokio::time::timeout(silence, bytes.next()).await {
                    Ok(Some(chunk)) => Some((chunk, bytes)),
                    Ok(None) => None,
                    Err(_) => {
                        tracing::warn!(
                            silent_ms = millis(silence),
                            "the event stream is silent: the cache is dropped until it is back"
                        );
                        None
                    }
                }
            }
        });
        let mut events = Box::pin(sse_stream::SseStream::from_bytes_stream(guarded));
        let mut ready = false;
        while let Some(event) = events.next().await {
            let Ok(event) = event else {
                break;
            };
            match event.event.as_deref() {
                Some("ready") => {
                    let heartbeat = event
                        .data
                        .as_deref()
                        .and_then(|d| serde_json::from_str::<Value>(d).ok())
                        .and_then(|v| v.get("heartbeat_secs")?.as_u64())
                        .filter(|secs| *secs > 0);
                    if let Some(secs) = heartbeat {
                        let deadline = Duration::from_secs(secs) * HEARTBEATS_MISSED;
                        self.stream_deadline_ms
                            .store(millis(deadline), Ordering::Release);
                    }
                    if !self.scopes_known() {
                        self.identify().await;
                    }
                    // From here on every write is reported: the cache may answer.
                    self.cache().clear();
                    self.following.store(true, Ordering::Release);
                    ready = true;
                }
                Some("change") => {
                    let tickets = event
                        .data
                        .as_deref()
                        .and_then(|d| serde_json::from_str::<Value>(d).ok())
                        .and_then(|v| {
                            v.get("tickets")?.as_array().map(|items| {
                                items
                                    .iter()
                                    .filter_map(|t| t.as_str().map(str::to_string))
                                    .collect::<Vec<_>>()
                            })
                        })
                        .unwrap_or_default();
                    self.cache().invalidate(&tickets);
                }
                Some("reset") => self.cache().clear(),
                _ => {}
            }
        }
        Ok(ready)
    }
}

impl Bridge {
    /// Ask the API which scopes the token has (`GET /whoami`), so that only the tools they
    /// allow are listed; when it cannot say (unreachable, an old server), they stay unknown
    /// and are asked again when the event stream is ready.
    pub async fn identify(&self) {
        let request = ops::Request {
            verb: Verb::Get,
            path: "/whoami".to_string(),
            query: String::new(),
            body: None,
        };
        let answer = tokio::time::timeout(UNVERIFIED_READ_TIMEOUT, self.send(&request, None)).await;
        let scopes = match answer {
            Ok(Ok(value)) => value
                .get("scopes")
                .and_then(Value::as_array)
                .map(|items| {
                    items
                        .iter()
                        .filter_map(Value::as_str)
                        .collect::<Vec<_>>()
                        .join(",")
                })
                .and_then(|names| ScopeSet::parse(&names).ok()),
            Ok(Err(failure)) => {
                let err = failure.err;
                tracing::warn!(code = %err.code, error = %err.message, "cannot ask the API for the token's scopes; every tool is listed until it answers");
                None
            }
            Err(_) => {
                tracing::warn!(
                    "the API did not say the token's scopes in time; every tool is listed until it answers"
                );
                None
            }
        };
        if let Some(scopes) = scopes {
            tracing::info!(scopes = %scopes, "the token's scopes");
            *self
                .scopes
                .write()
                .unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(scopes);
        }
    }

    fn scopes_known(&self) -> bool {
        self.scopes.read().map(|s| s.is_some()).unwrap_or(false)
    }

    /// The token's scopes' verdict on `op`: `None` while they are unknown.
    fn scope_check(&self, op: Described) -> Option<Result<(), ToolError>> {
        let scopes = self
            .scopes
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        scopes.as_ref().map(|scopes| scopes.require(op.scope))
    }
}

/// `duration` in whole milliseconds (saturating).
fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// The bridge as the backend of the MCP tools (`JILITY_MODE=cloud jility --mcp-server`):
/// every call is its operation's request, as the token's owner.
#[derive(Clone)]
pub struct BridgeBackend(pub Arc<Bridge>);

impl Backend for BridgeBackend {
    async fn exec<O: Operation>(
        &self,
        _caller: &Caller,
        params: Result<O::Params, ToolError>,
    ) -> Result<O::Output, ToolError> {
        self.0.exec::<O>(params?).await
    }

    /// What the token's scopes allow, as `/mcp` lists it (every tool while they are unknown).
    fn allows(&self, _caller: &Caller, op: Described) -> bool {
        self.0.scope_check(op).is_none_or(|verdict| verdict.is_ok())
    }

    /// `permission_denied` naming the scope, as `/mcp` answers (the API would refuse it too).
    async fn refuse(
        &self,
        _caller: &Caller,
        op: Described,
        _ticket: Option<String>,
    ) -> Option<ToolError> {
        self.0.scope_check(op)?.err()
    }
}
