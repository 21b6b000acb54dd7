//! What the store measures, through the `metrics` facade (nothing is recorded until a
//! server installs a recorder; `jility-api` exports them as Prometheus metrics): how long
//! statements take, how long a request waits for a pooled connection, and why it got none.

use std::time::Instant;

/// A statement's run time (seconds), by where it ran: `pool` (a blocking connection of a
/// transaction) or `reader` (the async whole-ticket reads).
pub const STATEMENT_SECONDS: &str = "jility_db_statement_duration_seconds";
/// How long a checkout waited for a connection of a pool (seconds), by pool.
pub const POOL_WAIT_SECONDS: &str = "jility_db_pool_wait_duration_seconds";
/// Checkouts that got no connection, by pool and cause (`unreachable`, `unresponsive`,
/// `refused`: PostgreSQL's connection limit, `exhausted`: every connection in use).
pub const POOL_FAILURES: &str = "jility_db_pool_checkout_failures_total";

/// Reads a standby answered, by standby (its place among `--read-replica`, from 0).
pub const STANDBY_READS: &str = "jility_db_standby_reads_total";
/// Reads that failed on a standby and were answered by the primary, by standby and cause.
pub const STANDBY_FALLBACKS: &str = "jility_db_standby_fallbacks_total";

/// Describe the store's metrics to the installed recorder (their `# HELP` lines).
pub fn describe() {
    metrics::describe_histogram!(
        STATEMENT_SECONDS,
        metrics::Unit::Seconds,
        "Time a database statement took, by where it ran (pool: a transaction's connection; reader: the async whole-ticket reads)."
    );
    metrics::describe_histogram!(
        POOL_WAIT_SECONDS,
        metrics::Unit::Seconds,
        "Time a request waited for a pooled database connection, by pool."
    );
    metrics::describe_counter!(
        STANDBY_READS,
        "Reads answered by a standby (--read-replica), by standby."
    );
    metrics::describe_counter!(
        STANDBY_FALLBACKS,
        "Reads that failed on a standby and were answered by the primary, by standby and cause."
    );
    metrics::describe_counter!(
        POOL_FAILURES,
        "Requests that got no database connection, by pool and cause."
    );
}

/// Time one statement from now; recorded when dropped.
pub(crate) struct Statement {
    via: &'static str,
    started: Instant,
}

impl Statement {
    pub(crate) fn on(via: &'static str) -> Self {
        Self {
            via,
            started: Instant::now(),
        }
    }
}

impl Drop for Statement {
    fn drop(&mut self) {
        metrics::histogram!(STATEMENT_SECONDS, "via" => self.via)
            .record(self.started.elapsed().as_secs_f64());
    }
}
