//! Whether the database can be reached, and how long anything waits to find out.
//!
//! A failure to reach PostgreSQL is [`StoreError::Unavailable`] (the caller's
//! `database_unavailable`, HTTP 503 with `Retry-After`, retryable), told apart from the
//! database's other errors by [`is_unreachable`]: connection refused or reset, a connection
//! the server closed, the server shutting down or starting up (`57P01` admin shutdown,
//! `57P02` crash shutdown, `57P03` cannot connect now), a connection exception (`08…`), a
//! connect timeout. Serialization failures, deadlocks and lock timeouts are not: they are
//! [`StoreError::Busy`].
//!
//! **Bounded waits.** A new connection gives up after [`CONNECT_TIMEOUT`] (unless the
//! database URL sets `connect_timeout`); a checkout from the pool after
//! [`CHECKOUT_TIMEOUT`] (then `database_busy`: every connection in use). A checkout waits
//! in slices of [`CHECKOUT_SLICE`] and gives up after the first slice that ends with the
//! last attempt to connect failed ([`Health`]): a request during an outage is answered in
//! a few hundred milliseconds, while the pool keeps trying to connect in the background
//! (every [`CHECKOUT_TIMEOUT`]`/2` at most), so requests succeed again within about a
//! second and a half of PostgreSQL's return. Idle connections are probed by TCP keepalives
//! ([`KEEPALIVE_IDLE`]), so a peer that vanished without a word is noticed. These are
//! constants, not settings; the connect timeout and keepalives follow the database URL
//! when it sets them.
//!
//! **A database that stops answering** (frozen by `SIGSTOP`, a wedged host: connections
//! stay open, nothing comes back). A watch thread of `jility serve`
//! ([`crate::store::PgDatabase::watch`]) asks the database `SELECT 1` on a connection of its
//! own every [`PROBE_INTERVAL`]; a probe (or its reconnection) unanswered for [`STALL`]
//! marks the database *unresponsive* ([`Health::unresponsive`]) until one is answered.
//! While it is, a checkout fails at once, and every request waiting on the database is
//! answered `database_unavailable` (retryable, `Retry-After`) within a polling interval
//! ([`bounded`], used around each operation and, in `jility-api`, around every request's
//! answer): so every answer comes within about [`STALL`] + [`PROBE_INTERVAL`] of the freeze.
//! The blocking work such a request left behind cannot be interrupted (the driver has no
//! client-side statement timeout) and finishes when the database answers again; it was
//! marked *abandoned* ([`Fate`]), so it takes no new connection and never sends its
//! `COMMIT`: a write that was not acknowledged is rolled back. Only a `COMMIT` already sent
//! when the database froze may land after its answer, which then says the outcome is
//! unknown (`commit_sent`), and its idempotency record, written in the same transaction,
//! tells a retry with the same key what happened.
//!
//! **One cause per refusal** ([`StoreError`]): a refused or lost connection is
//! `Unavailable`; a database that stopped answering `Unresponsive`
//! (`database_unavailable` both, `Retry-After: 2`); a lock held past `lock_timeout` by
//! another writer `Busy`; every connection of the pool in use, PostgreSQL's
//! `max_connections`, a serialization failure or deadlock `Overloaded`, saying which
//! (`database_busy` all, `Retry-After: 1`).

use std::cell::RefCell;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use postgres::error::SqlState;

use jility_core::store::StoreError;

/// How long opening a connection may take (TCP and the startup exchange), unless the
/// database URL says (`connect_timeout=N`).
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

/// How long a request waits for a connection of the pool before it is answered
/// `database_unavailable` (all connections failing) or `database_busy` (all in use).
pub const CHECKOUT_TIMEOUT: Duration = Duration::from_secs(3);

/// A checkout waits in slices this long, and stops after one that ends with the database
/// unreachable.
pub const CHECKOUT_SLICE: Duration = Duration::from_millis(100);

/// Idle time before TCP keepalive probes start on a connection (then every
/// [`KEEPALIVE_INTERVAL`], [`KEEPALIVE_RETRIES`] times).
pub const KEEPALIVE_IDLE: Duration = Duration::from_secs(30);
pub const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(5);
pub const KEEPALIVE_RETRIES: u32 = 3;

/// How often the watch thread probes the database.
pub const PROBE_INTERVAL: Duration = Duration::from_millis(500);

/// A probe unanswered this long marks the database unresponsive.
pub const STALL: Duration = Duration::from_secs(2);

/// How often a request waiting on the database looks at whether it became unresponsive.
pub const STALL_POLL: Duration = Duration::from_millis(100);

/// How long an operation may wait for a blocking thread to start it: past this, every
/// thread is held by slow database work and the operation is refused as busy instead of
/// queueing (nothing of it ran).
pub const QUEUE_WAIT: Duration = Duration::from_secs(3);

/// How long a request may wait on a database that answers, but slowly (locks, load),
/// before it is answered busy.
pub const DEADLINE: Duration = Duration::from_secs(15);

/// How much longer the outermost layer waits than an operation's own bound, so that the
/// operation's answer — which knows whether it wrote — comes first.
pub const OUTER_GRACE: Duration = Duration::from_millis(400);

/// Whether the database can be reached and answers, shared by every pool of one database:
/// the outcome of the last attempt to connect, and the probe in flight
/// ([`crate::store::PgDatabase::watch`]).
#[derive(Clone)]
pub struct Health {
    /// What the log calls it: `the database`, or a standby.
    name: Arc<str>,
    down: Arc<AtomicBool>,
    /// The last attempt to connect was refused for want of connections (`53300`: the
    /// server's `max_connections`, or the role's or database's connection limit).
    full: Arc<AtomicBool>,
    /// When the probe in flight was sent, in milliseconds since `epoch` plus one (0: none
    /// in flight).
    probing_since: Arc<AtomicU64>,
    epoch: Instant,
}

impl Default for Health {
    fn default() -> Self {
        Self {
            name: Arc::from("the database"),
            down: Arc::default(),
            full: Arc::default(),
            probing_since: Arc::default(),
            epoch: Instant::now(),
        }
    }
}

impl Health {
    /// The health of what the log calls `name` (a standby).
    pub(crate) fn named(name: &str) -> Self {
        Self {
            name: Arc::from(name),
            ..Self::default()
        }
    }

    /// Record the outcome of an attempt to connect.
    pub(crate) fn record(&self, result: &Result<(), &postgres::Error>) {
        let down = match result {
            Ok(()) => false,
            Err(err) => is_unreachable(err),
        };
        let full =
            matches!(result, Err(err) if err.code() == Some(&SqlState::TOO_MANY_CONNECTIONS));
        if self.full.swap(full, Ordering::Relaxed) != full {
            if full {
                tracing::warn!(
                    "PostgreSQL refuses more connections (its max_connections, or a connection limit, is reached): \
                     lower --db-pool-size or raise max_connections"
                );
            } else {
                tracing::info!("PostgreSQL takes new connections again");
            }
        }
        let was = self.down.swap(down, Ordering::Relaxed);
        if was != down {
            if down {
                tracing::warn!("{} cannot be reached", self.name);
            } else {
                tracing::info!("{} can be reached again", self.name);
            }
        }
    }

    pub(crate) fn down(&self) -> bool {
        self.down.load(Ordering::Relaxed)
    }

    /// Whether the last attempt to connect was refused for want of connections.
    pub fn full(&self) -> bool {
        self.full.load(Ordering::Relaxed)
    }

    /// Whether the database could not be reached at the last attempt to connect.
    pub fn unreachable(&self) -> bool {
        self.down()
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX - 1) + 1
    }

    /// A probe is sent now.
    pub(crate) fn probe_sent(&self) {
        self.probing_since.store(self.now_ms(), Ordering::Relaxed);
    }

    /// The probe in flight was answered (or failed: the database answered, or is down).
    pub(crate) fn probe_done(&self) {
        let was = self.probing_since.swap(0, Ordering::Relaxed);
        if was != 0 && self.now_ms().saturating_sub(was) > STALL.as_millis() as u64 {
            tracing::info!("the database answers again");
        }
    }

    /// Whether the database holds a probe unanswered for longer than [`STALL`].
    pub fn unresponsive(&self) -> bool {
        let since = self.probing_since.load(Ordering::Relaxed);
        since != 0 && self.now_ms().saturating_sub(since) > STALL.as_millis() as u64
    }

    /// A checkout that timed out: unreachable if connecting fails, unresponsive if the
    /// database stopped answering, else every connection is in use (busy, retryable too).
    pub(crate) fn no_connection(&self, err: &r2d2::Error, size: u32) -> StoreError {
        if self.down() {
            StoreError::Unavailable(format!("no database connection: {err}"))
        } else if self.unresponsive() {
            StoreError::Unresponsive { commit_sent: false }
        } else if self.full() {
            StoreError::Overloaded(TOO_MANY_CONNECTIONS.to_string())
        } else {
            StoreError::Overloaded(format!(
                "all {size} of this server's connections to it are in use"
            ))
        }
    }
}

/// What became of a request's database work: the request may give up on it
/// ([`Self::abandon`]) while it still runs on a blocking thread, which then takes no new
/// connection and sends no `COMMIT` ([`check_abandoned`], [`committing`]).
#[derive(Debug)]
pub struct Fate {
    abandoned: AtomicBool,
    commit_sent: AtomicBool,
    /// A blocking thread began the work.
    started: AtomicBool,
    /// When the request began waiting for it.
    began: Instant,
}

tokio::task_local! {
    /// When the request being served arrived (set by the outermost layer, `api::stall`).
    pub static REQUEST_BEGAN: Instant;
}

impl Default for Fate {
    /// The fate of work for the request this task serves: its waits count from the
    /// request's arrival (else from now).
    fn default() -> Self {
        Self {
            abandoned: AtomicBool::new(false),
            commit_sent: AtomicBool::new(false),
            started: AtomicBool::new(false),
            began: REQUEST_BEGAN
                .try_with(|began| *began)
                .unwrap_or_else(|_| Instant::now()),
        }
    }
}

impl Fate {
    /// The request answered without waiting for its work any longer.
    pub fn abandon(&self) {
        self.abandoned.store(true, Ordering::SeqCst);
    }

    /// Whether a `COMMIT` of the work was sent before it was abandoned.
    pub fn commit_sent(&self) -> bool {
        self.commit_sent.load(Ordering::SeqCst)
    }
}

thread_local! {
    static FATE: RefCell<Option<Arc<Fate>>> = const { RefCell::new(None) };
}

/// Run `f` (on a blocking thread) as the work whose fate is `fate`.
pub fn with_fate<R>(fate: Arc<Fate>, f: impl FnOnce() -> R) -> R {
    struct Reset;
    impl Drop for Reset {
        fn drop(&mut self) {
            FATE.with(|cell| cell.borrow_mut().take());
        }
    }
    fate.started.store(true, Ordering::SeqCst);
    FATE.with(|cell| *cell.borrow_mut() = Some(fate));
    let _reset = Reset;
    f()
}

/// How long this thread's work may wait for a lock, when its request has already waited
/// (for a blocking thread) part of `full`: what is left of `full`, at least a tenth of a
/// second; `None` when it has waited too little to matter (the connection's own
/// `lock_timeout` holds). So a request queued behind slow work is answered about `full`
/// after it came, not `full` after a thread took it up.
pub(crate) fn lock_budget(full: Duration) -> Option<Duration> {
    let waited = FATE.with(|cell| cell.borrow().as_ref().map(|fate| fate.began.elapsed()))?;
    (waited >= Duration::from_millis(100))
        .then(|| full.saturating_sub(waited).max(Duration::from_millis(100)))
}

/// Refused when the work of this thread was abandoned by its request.
pub(crate) fn check_abandoned() -> Result<(), StoreError> {
    let abandoned = FATE.with(|cell| {
        cell.borrow()
            .as_ref()
            .is_some_and(|fate| fate.abandoned.load(Ordering::SeqCst))
    });
    if abandoned {
        tracing::info!("work abandoned by its request is rolled back");
        return Err(StoreError::Unresponsive { commit_sent: false });
    }
    Ok(())
}

/// A `COMMIT` is about to be sent: refused if the work was abandoned, else recorded, so
/// that a request giving up after this point says the outcome is unknown.
pub(crate) fn committing() -> Result<(), StoreError> {
    FATE.with(|cell| match cell.borrow().as_ref() {
        None => Ok(()),
        Some(fate) => {
            // Marked first, then checked: a request abandoning in between sees it sent.
            fate.commit_sent.store(true, Ordering::SeqCst);
            if fate.abandoned.load(Ordering::SeqCst) {
                fate.commit_sent.store(false, Ordering::SeqCst);
                tracing::info!("a write abandoned by its request is rolled back");
                return Err(StoreError::Unresponsive { commit_sent: false });
            }
            Ok(())
        }
    })
}

/// `work` unless the database stops answering first, or `work` (with its `fate`) waits
/// [`QUEUE_WAIT`] for a blocking thread, or [`DEADLINE`] in all: then its `fate` (if any) is
/// abandoned and the request told why — `Unresponsive`, `Overloaded` or `TooSlow`, with
/// whether a commit had been sent.
pub async fn bounded<T>(
    health: &Health,
    fate: Option<&Fate>,
    work: impl Future<Output = T>,
) -> Result<T, StoreError> {
    tokio::select! {
        // The work first: one ready at once never arms the timer.
        biased;
        done = work => Ok(done),
        why = gave_up(health, fate, Duration::ZERO, DEADLINE) => {
            let commit_sent = fate.is_some_and(|fate| {
                fate.abandon();
                fate.commit_sent()
            });
            let why = match why {
                StoreError::Unresponsive { .. } => StoreError::Unresponsive { commit_sent },
                StoreError::TooSlow { .. } => StoreError::TooSlow { commit_sent },
                other => other,
            };
            tracing::warn!(commit_sent, reason = %why, "a request gave up waiting on the database");
            Err(why)
        }
    }
}

/// The outermost layer's [`bounded`]: the database unresponsive only (a request may wait
/// on its client's body, which is no database's fault), and a little later than an
/// operation's own bound; it knows nothing of what the request did, so a request that may
/// change something (`writes`) is told its outcome is unknown.
pub async fn bounded_request<T>(
    health: &Health,
    writes: bool,
    work: impl Future<Output = T>,
) -> Result<T, StoreError> {
    tokio::select! {
        biased;
        done = work => Ok(done),
        why = gave_up(health, None, OUTER_GRACE, Duration::MAX) => Err(match why {
            StoreError::Unresponsive { .. } => StoreError::Unresponsive { commit_sent: writes },
            StoreError::TooSlow { .. } => StoreError::TooSlow { commit_sent: writes },
            other => other,
        }),
    }
}

/// Resolves with why a request waiting on the database should stop waiting: the database
/// unresponsive (for `grace` more), `fate`'s work not started within [`QUEUE_WAIT`], or
/// `deadline` passed.
async fn gave_up(
    health: &Health,
    fate: Option<&Fate>,
    grace: Duration,
    deadline: Duration,
) -> StoreError {
    let began = fate.map_or_else(Instant::now, |fate| fate.began);
    loop {
        tokio::time::sleep(STALL_POLL).await;
        if health.unresponsive() {
            tokio::time::sleep(grace).await;
            return StoreError::Unresponsive { commit_sent: false };
        }
        let waited = began.elapsed();
        if waited >= QUEUE_WAIT && fate.is_some_and(|fate| !fate.started.load(Ordering::SeqCst)) {
            return StoreError::Overloaded(format!(
                "every worker of this server has been waiting on it for over {} s",
                QUEUE_WAIT.as_secs()
            ));
        }
        if waited >= deadline {
            return StoreError::TooSlow { commit_sent: false };
        }
    }
}

/// A failure to open the database when a command starts: one that cannot be reached names
/// where it was looked for (host, port and database of `url`, never its password) and what
/// to check, rather than telling to retry as a request is told.
pub fn at_start(url: &str, err: StoreError) -> mcp_common_core::ToolError {
    // The operator's own command: what went wrong is shown (a URL that does not parse, a
    // damaged schema), not only a reference to the log as a request's answer gives.
    if let StoreError::Database(detail) = &err {
        return mcp_common_core::ToolError::internal(format!(
            "Cannot open the database at {}: {detail}",
            endpoint(url)
        ))
        .with_hint("Check --database-url (or DATABASE_URL) and that the database is jility's.");
    }
    if !matches!(err, StoreError::Unavailable(_)) {
        return err.into();
    }
    let place = endpoint(url);
    // The driver's reason is logged here (the conversion's own warning is not wanted twice).
    if let StoreError::Unavailable(detail) = &err {
        tracing::debug!(detail = %detail, "cannot open the database");
    }
    mcp_common_core::ToolError::new(
        jility_core::errors::DATABASE_UNAVAILABLE,
        format!("Cannot reach the database at {place}"),
    )
    .with_hint(
        "Check that PostgreSQL is running there and takes connections, and that --database-url \
         (or DATABASE_URL) names it. Nothing was changed.",
    )
}

/// Where `url` points: `host:port/database`, without user or password.
fn endpoint(url: &str) -> String {
    let Ok(config) = url.parse::<postgres::Config>() else {
        return "the given URL".to_string();
    };
    let hosts: Vec<String> = config
        .get_hosts()
        .iter()
        .map(|host| match host {
            postgres::config::Host::Tcp(name) => name.clone(),
            postgres::config::Host::Unix(path) => path.display().to_string(),
        })
        .collect();
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let host = if hosts.is_empty() {
        "localhost".to_string()
    } else {
        hosts.join(",")
    };
    match config.get_dbname() {
        Some(db) => format!("{host}:{port}/{db}"),
        None => format!("{host}:{port}"),
    }
}

/// What a caller is told when PostgreSQL refuses more connections.
pub(crate) const TOO_MANY_CONNECTIONS: &str =
    "PostgreSQL refuses more connections (max_connections is reached)";

/// Whether `err` says the database cannot be reached (rather than refusing a statement).
pub fn is_unreachable(err: &postgres::Error) -> bool {
    if let Some(code) = err.code() {
        let admin = [
            SqlState::ADMIN_SHUTDOWN,
            SqlState::CRASH_SHUTDOWN,
            SqlState::CANNOT_CONNECT_NOW,
        ];
        return admin.contains(code) || code.code().starts_with("08");
    }
    // Without a SQLSTATE: the socket failed (refused, reset, timed out), the connection is
    // closed, or the server did not answer in time.
    err.is_closed()
        || std::error::Error::source(err).is_some_and(|s| s.is::<std::io::Error>())
        || err.to_string() == "timeout waiting for server"
}

/// Bound the waits of a connection `config` does not bound itself.
pub(crate) fn bound(config: &mut tokio_postgres::Config) {
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(CONNECT_TIMEOUT);
    }
    // Unless the URL tuned them: libpq's defaults leave a dead peer unnoticed for hours.
    if config.get_keepalives() && config.get_keepalives_idle() == Duration::from_secs(2 * 3600) {
        config.keepalives_idle(KEEPALIVE_IDLE);
        config.keepalives_interval(KEEPALIVE_INTERVAL);
        config.keepalives_retries(KEEPALIVE_RETRIES);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_connection_is_unreachable() {
        // Port 1 on loopback: nothing listens there.
        let mut config: tokio_postgres::Config = match "postgres://u@127.0.0.1:1/db".parse() {
            Ok(config) => config,
            Err(err) => panic!("{err}"),
        };
        bound(&mut config);
        let config = postgres::Config::from(config);
        let Err(err) = config.connect(postgres::NoTls) else {
            panic!("connected to port 1");
        };
        assert!(is_unreachable(&err), "{err:?}");
        let health = Health::default();
        health.record(&Err(&err));
        assert!(health.down());
        health.record(&Ok(()));
        assert!(!health.down());
    }
}
