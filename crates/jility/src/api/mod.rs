//! The REST API of `jility serve`, under `/api/v1`: the tracker's operations over HTTP, on
//! PostgreSQL, for the workspaces of the database.
//!
//! Every request passes through [`middleware::guard`] first: the bearer token is
//! authenticated ([`crate::auth::Tokens::authenticate`], on a blocking thread) and the
//! request counted against the token's rate limit ([`crate::ratelimit`]); the
//! [`Principal`] then rides in the request's extensions. Each endpoint checks its scope and
//! runs its operation on the tracker of the principal's workspace only ([`Workspaces`]),
//! through the same [`crate::tracker::Tracker`] as local mode: only the store differs.
//!
//! Answers are JSON: on success the data the MCP tools put in `structuredContent`'s `data`
//! (a paged list with the `page` object beside its own members, as `jility … --json`
//! prints it); on failure `{"error": envelope}` with the status of the error's class.
//!
//! Every write (tickets created, commented, deleted; tokens created, revoked), answered or
//! refused after authentication, and every authentication failure is recorded in the audit
//! log ([`crate::audit`]); `GET /audit` reads the caller's workspace's entries.
//!
//! This module does not speak MCP (no rmcp): it serves the domain over plain HTTP.

mod audit;
mod body;
mod middleware;
mod tickets;
mod tokens;

use std::collections::HashMap;
use std::io::Write as _;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use mcp_common::{CursorKey, Cursors, Page, Paged, ToolError};
use serde::Serialize;

use crate::audit::{Audit, NewEntry};
use crate::auth::{Principal, Tokens};
use crate::errors;
use crate::ratelimit::RateLimiter;
use crate::service::Service;
use crate::store::postgres::{PgDatabase, PgStore};
use crate::tracker::Tracker;

/// Where the API lives.
pub const API_PREFIX: &str = "/api/v1";

/// Largest request body accepted (beyond: 400 `invalid_input`, saying so).
pub const MAX_BODY_BYTES: usize = mcp_common::http::MAX_BODY_BYTES;

/// The project a workspace gets on its first request, as local mode's server does.
const DEFAULT_PROJECT_KEY: &str = "TASK";
const DEFAULT_PROJECT_NAME: &str = "Default Project";

/// The context string of the API's cursor keys (blake3 `derive_key`).
const CURSOR_CONTEXT: &str = "jility 2026-11 api cursors v1";

/// The context string of the audit log's cursor keys (one per workspace, like the tickets').
const AUDIT_CURSOR_CONTEXT: &str = "jility 2026-11 audit cursors v1";

/// A workspace has no project directory on the server, so no project templates: the
/// tracker is given a root that holds none (only the built-in templates exist).
const NO_TEMPLATES_ROOT: &str = "/nonexistent/jility-cloud";

/// How `jility serve` runs.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    pub listen: SocketAddr,
    pub database_url: String,
    /// Requests per minute per token.
    pub rate_limit: u32,
}

/// What every request shares.
#[derive(Clone)]
pub struct ApiState {
    tokens: Tokens,
    limiter: RateLimiter,
    workspaces: Workspaces,
    audit: Audit,
}

impl ApiState {
    pub fn new(db: &PgDatabase, rate_limit: u32) -> Result<Self, ToolError> {
        Ok(Self {
            tokens: Tokens::new(db),
            limiter: RateLimiter::new(db.clone(), rate_limit),
            workspaces: Workspaces::new(db)?,
            audit: Audit::new(db),
        })
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
    fn audit_cursors(&self, workspace_id: i64) -> Cursors {
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

/// The API's routes, with authentication and rate limiting in front of every one.
pub fn router(state: ApiState) -> Router {
    let api = Router::new()
        .route(
            "/tickets",
            axum::routing::post(tickets::create).get(tickets::list),
        )
        .route(
            "/tickets/{ticket}",
            axum::routing::get(tickets::get).delete(tickets::delete),
        )
        .route(
            "/tickets/{ticket}/comments",
            axum::routing::post(tickets::comment),
        )
        .route("/search", axum::routing::get(tickets::search))
        .route(
            "/tokens",
            axum::routing::post(tokens::create)
                .get(tokens::list)
                .delete(tokens::revoke_by_body),
        )
        .route("/tokens/{token}", axum::routing::delete(tokens::revoke))
        .route("/audit", axum::routing::get(audit::list))
        .fallback(not_found)
        .with_state(state.clone());
    Router::new()
        .nest(API_PREFIX, api)
        .fallback(not_found)
        .layer(axum::middleware::from_fn_with_state(
            state,
            middleware::guard,
        ))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
}

async fn not_found() -> Response {
    ApiError(
        ToolError::not_found("There is no such endpoint")
            .with_hint(format!("The API lives under {API_PREFIX}: /tickets, /tickets/{{KEY-N}}, /tickets/{{KEY-N}}/comments, /search, /tokens, /tokens/{{id}}, /audit.")),
    )
    .into_response()
}

/// `jility serve`: connect (migrating the database), bind, announce the address on stderr,
/// and serve until SIGINT or SIGTERM, answering the requests in flight before stopping.
pub fn serve(config: ServeConfig) -> Result<(), ToolError> {
    let db = PgDatabase::connect(&config.database_url)?;
    let state = ApiState::new(&db, config.rate_limit)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| ToolError::internal(format!("Cannot start the async runtime: {e}")))?;
    runtime.block_on(async move {
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
        announce(local);
        tracing::info!(%local, rate_limit = config.rate_limit, "serving the API");
        axum::serve(listener, router(state))
            .with_graceful_shutdown(async {
                mcp_common::serve::termination().await;
                tracing::info!("stopping: no new connections; answering the requests in flight");
            })
            .await
            .map_err(|e| ToolError::internal(format!("The server failed: {e}")))
    })
}

/// Tell whoever started the server where it listens (the port may be the system's choice).
fn announce(local: SocketAddr) {
    // One write of the whole line, so that a reader never sees half of it.
    let line = format!("jility: serving the API at http://{local}{API_PREFIX}\n");
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
        (status, axum::Json(body)).into_response()
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
pub(crate) async fn audited(
    state: &ApiState,
    principal: &Principal,
    operation: &'static str,
    ticket: Option<String>,
    detail: Option<String>,
    status: u16,
) {
    let audit = state.audit.clone();
    let workspace_id = principal.workspace_id;
    let token_id = principal.token_id;
    let actor = principal.token_name.clone();
    let done = tokio::task::spawn_blocking(move || {
        audit.record(&NewEntry {
            workspace_id: Some(workspace_id),
            token_id: Some(token_id),
            actor: Some(&actor),
            operation,
            ticket: ticket.as_deref(),
            status,
            detail: detail.as_deref(),
        });
    })
    .await;
    if let Err(err) = done {
        tracing::warn!(operation, error = %err, "could not write an audit entry");
    }
}

/// A paged list as the API answers it: the data's members and `page` beside them.
pub(crate) fn paged_json<T: Serialize>(paged: Paged<T>) -> Result<serde_json::Value, ToolError> {
    let Paged { data, page } = paged;
    let cannot = |e: serde_json::Error| ToolError::internal(format!("Cannot encode JSON: {e}"));
    let mut value = serde_json::to_value(&data).map_err(cannot)?;
    let page: serde_json::Value = serde_json::to_value::<&Page>(&page).map_err(cannot)?;
    match &mut value {
        serde_json::Value::Object(members) => {
            members.insert("page".to_string(), page);
        }
        _ => value = serde_json::json!({"data": value, "page": page}),
    }
    Ok(value)
}
