//! Keeping the webhook tables small and quick: the outbox and the pending deliveries are
//! queues (every row written, then deleted or settled moments later), so without a vacuum
//! their dead rows pile up in front of every claim and fan-out — and a database may run
//! with autovacuum off. Every process vacuums them after churn (skipping a table another
//! process is vacuuming), and removes settled deliveries older than the log keeps
//! (`JILITY_WEBHOOKS_KEEP_DAYS`, default 30).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use jility_pg::store::{PgDatabase, db};
use mcp_common_core::ToolError;
use tokio_util::sync::CancellationToken;

/// How often the tables are looked after.
const EVERY: Duration = Duration::from_secs(10);
/// The deliveries table (the log) is vacuumed at most this often.
const DELIVERIES_EVERY: Duration = Duration::from_secs(60);
/// Settled deliveries are removed at the first pass and then at most this often, this
/// many a statement.
const PRUNE_EVERY: Duration = Duration::from_secs(3600);
const PRUNE_BATCH: i64 = 10_000;

/// Days a settled delivery stays in the log (`JILITY_WEBHOOKS_KEEP_DAYS`, 1–3650, default
/// 30).
pub fn keep_days() -> i32 {
    std::env::var("JILITY_WEBHOOKS_KEEP_DAYS")
        .ok()
        .and_then(|v| v.trim().parse::<i32>().ok())
        .filter(|d| (1..=3650).contains(d))
        .unwrap_or(30)
}

/// Rows written or settled since the tables were last vacuumed, counted by the dispatcher.
#[derive(Default)]
pub struct Churn {
    outbox: AtomicU64,
    deliveries: AtomicU64,
}

impl Churn {
    pub fn fanned(&self, changes: usize, deliveries: usize) {
        self.outbox.fetch_add(changes as u64, Ordering::Relaxed);
        self.deliveries
            .fetch_add(deliveries as u64, Ordering::Relaxed);
    }

    pub fn settled(&self, deliveries: usize) {
        self.deliveries
            .fetch_add(deliveries as u64, Ordering::Relaxed);
    }
}

/// Look after the tables until `shutdown`.
pub fn start(db: &PgDatabase, churn: Arc<Churn>, shutdown: CancellationToken) {
    let db = db.clone();
    tokio::spawn(async move {
        let mut deliveries_vacuumed = Instant::now();
        // The first prune at the first pass after the start, then every hour.
        let mut pruned: Option<Instant> = None;
        loop {
            tokio::select! {
                () = shutdown.cancelled() => return,
                () = tokio::time::sleep(EVERY) => {}
            }
            let mut tables = Vec::new();
            if churn.outbox.swap(0, Ordering::Relaxed) > 0 {
                tables.push("webhook_outbox");
            }
            if deliveries_vacuumed.elapsed() >= DELIVERIES_EVERY
                && churn.deliveries.swap(0, Ordering::Relaxed) > 0
            {
                deliveries_vacuumed = Instant::now();
                tables.push("webhook_deliveries");
            }
            let prune = pruned.is_none_or(|at| at.elapsed() >= PRUNE_EVERY);
            if prune {
                pruned = Some(Instant::now());
            }
            if tables.is_empty() && !prune {
                continue;
            }
            let db = db.clone();
            let done = tokio::task::spawn_blocking(move || tidy(&db, &tables, prune)).await;
            match done {
                Ok(Ok(removed)) if removed > 0 => {
                    tracing::info!(
                        removed,
                        "removed settled webhook deliveries past the log's keeping"
                    );
                }
                Ok(Ok(_)) => {}
                Ok(Err(err)) => {
                    tracing::warn!(error = %err.message, "could not tidy the webhook tables; trying again later");
                }
                Err(err) => tracing::warn!(error = %err, "tidying the webhook tables stopped"),
            }
        }
    });
}

/// Vacuum `tables` (each skipped when another process holds it), and when `prune`, remove
/// settled deliveries past [`keep_days`]: how many were removed.
fn tidy(database: &PgDatabase, tables: &[&str], prune: bool) -> Result<u64, ToolError> {
    database.with_client(|client| -> Result<u64, ToolError> {
        let mut removed = 0;
        if prune {
            loop {
                let gone = client
                    .execute(
                        "DELETE FROM webhook_deliveries WHERE id IN ( \
                           SELECT id FROM webhook_deliveries \
                           WHERE state <> 'pending' \
                             AND created_at < now() - make_interval(days => $1::int) \
                           ORDER BY id LIMIT $2)",
                        &[&keep_days(), &PRUNE_BATCH],
                    )
                    .map_err(db)?;
                removed += gone;
                if gone < PRUNE_BATCH as u64 {
                    break;
                }
            }
        }
        // Removed rows leave dead ones too.
        let mut tables: Vec<&str> = tables.to_vec();
        if removed > 0 && !tables.contains(&"webhook_deliveries") {
            tables.push("webhook_deliveries");
        }
        for table in tables {
            // Outside any transaction, as VACUUM must be; the names are this module's own.
            client
                .batch_execute(&format!("VACUUM (SKIP_LOCKED, ANALYZE) {table}"))
                .map_err(db)?;
        }
        Ok(removed)
    })
}
