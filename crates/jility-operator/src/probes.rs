//! The probes a load balancer or Kubernetes points at, without credentials and saying
//! nothing else about the server: `GET /healthz` (the process answers) and `GET /readyz`
//! (it can serve: the database answered within a second, its schema is this version's or
//! newer, and the server is not stopping; 503 otherwise, saying which check failed).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use jility_pg::store::PgDatabase;

/// How long `/readyz` waits for the database.
const DATABASE_BOUND: Duration = Duration::from_secs(1);
/// How long a verdict answers the probes that follow it (several balancers probing each
/// process cost the database one statement per interval).
const REUSE: Duration = Duration::from_millis(250);

/// `GET /healthz`: 200 while the process answers requests.
pub async fn healthz() -> Response {
    no_store((StatusCode::OK, Json(serde_json::json!({ "status": "ok" }))).into_response())
}

/// What `/readyz` found.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Verdict {
    /// `ready` or `not_ready`.
    pub status: &'static str,
    pub checks: Checks,
    /// Why not, for a person reading the probe's answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<&'static str>,
    /// The standbys (`--read-replica`) and whether each takes reads now: whether the
    /// server is ready does not depend on them (the primary answers what they cannot).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub standbys: Option<Vec<jility_pg::store::StandbyState>>,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Checks {
    /// `ok`, `unreachable`, `unresponsive`, `refusing_connections`, `slow` (no answer within
    /// a second) or `failing`.
    pub database: &'static str,
    /// `ok`, `behind` (older than this server: `jility admin migrate`), or `unknown`.
    pub schema: &'static str,
    /// `serving`, or `stopping` (SIGTERM received: requests in flight are being answered).
    pub server: &'static str,
}

/// What `/readyz` looks at (the database), the last verdict and whether a check is running
/// on a blocking thread (one at a time: probes of a database that does not answer do not
/// pile threads up).
pub struct Readiness {
    db: PgDatabase,
    last: std::sync::Mutex<Option<(Instant, Verdict)>>,
    /// Held by the probe checking the database: the others wait for its verdict.
    checking: tokio::sync::Mutex<()>,
    running: Arc<AtomicBool>,
    /// Set when the server begins to stop.
    pub stopping: AtomicBool,
}

impl Readiness {
    pub fn new(db: &PgDatabase) -> Self {
        Self {
            db: db.clone(),
            last: std::sync::Mutex::default(),
            checking: tokio::sync::Mutex::new(()),
            running: Arc::default(),
            stopping: AtomicBool::new(false),
        }
    }

    /// The last verdict, while it is fresh.
    fn reused(&self) -> Option<Verdict> {
        let last = self.last.lock().ok()?;
        let (at, verdict) = last.as_ref()?;
        (at.elapsed() < REUSE).then(|| verdict.clone())
    }

    async fn verdict(&self) -> Verdict {
        if let Some(verdict) = self.reused() {
            return verdict;
        }
        // One probe checks; those that come meanwhile wait (a second at most) for its verdict.
        let checking = tokio::time::timeout(DATABASE_BOUND, self.checking.lock()).await;
        if checking.is_ok()
            && let Some(verdict) = self.reused()
        {
            return verdict;
        }
        let server = if self.stopping.load(Ordering::Relaxed) {
            "stopping"
        } else {
            "serving"
        };
        let (database, schema) = match &checking {
            Ok(_) => self.database().await,
            Err(_) => ("slow", "unknown"),
        };
        let reason = if database != "ok" {
            Some(match database {
                "unreachable" => "the database cannot be reached",
                "unresponsive" => "the database holds its connections but answers nothing",
                "refusing_connections" => {
                    "PostgreSQL refuses more connections (max_connections or a connection limit is reached)"
                }
                "slow" => "the database did not answer within a second",
                _ => "the database answered with an error (the server's log says which)",
            })
        } else if schema != "ok" {
            Some("the database's schema is older than this server's: run `jility admin migrate`")
        } else if server != "serving" {
            Some("the server is stopping")
        } else {
            None
        };
        let verdict = Verdict {
            status: if reason.is_none() {
                "ready"
            } else {
                "not_ready"
            },
            checks: Checks {
                database,
                schema,
                server,
            },
            reason,
            standbys: self.db.standbys(),
        };
        if let Ok(mut last) = self.last.lock() {
            *last = Some((Instant::now(), verdict.clone()));
        }
        verdict
    }

    /// The database's check and the schema's.
    async fn database(&self) -> (&'static str, &'static str) {
        let health = self.db.health();
        if let Some(state) = Self::known_bad(health) {
            return (state, "unknown");
        }
        if self.running.swap(true, Ordering::AcqRel) {
            // The last check has not come back within its second.
            return ("slow", "unknown");
        }
        let db = self.db.clone();
        let running = self.running.clone();
        let check = tokio::task::spawn_blocking(move || {
            // Refused before: whether a new connection is still refused (the flag is the
            // last attempt's, and idle connections may have served since).
            if db.health().full() {
                drop(db.dedicated());
            }
            let version = db.version();
            running.store(false, Ordering::Release);
            version
        });
        match tokio::time::timeout(DATABASE_BOUND, check).await {
            Ok(Ok(Ok(_))) if health.full() => ("refusing_connections", "unknown"),
            Ok(Ok(Ok(version))) => {
                let known = jility_pg::store::MIGRATIONS.len() as u32;
                ("ok", if version >= known { "ok" } else { "behind" })
            }
            Ok(Ok(Err(err))) => {
                tracing::debug!(error = %err, "the readiness check's statement failed");
                let state = match Self::known_bad(health) {
                    Some(state) => state,
                    None if health.full() => "refusing_connections",
                    None => "failing",
                };
                (state, "unknown")
            }
            Ok(Err(_)) => ("failing", "unknown"),
            Err(_) => ("slow", "unknown"),
        }
    }

    /// What the database's watch already knows is wrong.
    fn known_bad(health: &jility_pg::reach::Health) -> Option<&'static str> {
        if health.unreachable() {
            Some("unreachable")
        } else if health.unresponsive() {
            Some("unresponsive")
        } else {
            None
        }
    }
}

/// `GET /readyz`: 200 `{"status":"ready",…}` or 503 `{"status":"not_ready",…,"reason"}`.
pub async fn readyz(State(readiness): State<Arc<Readiness>>) -> Response {
    let verdict = readiness.verdict().await;
    let status = if verdict.reason.is_none() {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    no_store((status, Json(verdict)).into_response())
}

fn no_store(mut response: Response) -> Response {
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}
