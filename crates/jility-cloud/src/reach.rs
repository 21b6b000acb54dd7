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
//! when it sets them. A server that keeps its connections open but stops answering (e.g.
//! SIGSTOP) is not bounded here.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

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

/// Whether the last attempt to open a connection to the database failed, shared by every
/// pool of one database.
#[derive(Clone, Default)]
pub(crate) struct Health {
    down: Arc<AtomicBool>,
}

impl Health {
    /// Record the outcome of an attempt to connect.
    pub(crate) fn record(&self, result: &Result<(), &postgres::Error>) {
        let down = match result {
            Ok(()) => false,
            Err(err) => is_unreachable(err),
        };
        let was = self.down.swap(down, Ordering::Relaxed);
        if was != down {
            if down {
                tracing::warn!("the database cannot be reached");
            } else {
                tracing::info!("the database can be reached again");
            }
        }
    }

    pub(crate) fn down(&self) -> bool {
        self.down.load(Ordering::Relaxed)
    }

    /// A checkout that timed out: unreachable if connecting fails, else every connection
    /// is in use (busy, retryable too).
    pub(crate) fn no_connection(&self, err: &r2d2::Error) -> StoreError {
        if self.down() {
            StoreError::Unavailable(format!("no database connection: {err}"))
        } else {
            StoreError::Busy
        }
    }
}

/// A failure to open the database when a command starts: one that cannot be reached names
/// where it was looked for (host, port and database of `url`, never its password) and what
/// to check, rather than telling to retry as a request is told.
pub fn at_start(url: &str, err: StoreError) -> mcp_common::ToolError {
    if !matches!(err, StoreError::Unavailable(_)) {
        return err.into();
    }
    let place = endpoint(url);
    // The driver's reason is logged here (the conversion's own warning is not wanted twice).
    if let StoreError::Unavailable(detail) = &err {
        tracing::debug!(detail = %detail, "cannot open the database");
    }
    mcp_common::ToolError::new(
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
