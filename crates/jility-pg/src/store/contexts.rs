//! Kept ticket contexts, current by version (migrations 15 and 16). A write bumps the
//! `context_version` of every ticket it touched (but those it created) in the round trip of
//! its `COMMIT`, and once committed hands them all to the [`Refresher`]: one thread per
//! database that recomputes the contexts asked for since its last run
//! (`jility_refresh_contexts`, one statement per workspace and [`BATCH`] tickets), each
//! stored with the version its snapshot saw. A read uses a kept context only when its
//! version is the ticket's, in the read's own snapshot; otherwise it reads the parts one by
//! one and asks for a refresh too. So a context is never served stale, a write pays one
//! `UPDATE` for it on its path (a refresh in the write cost a 2-CPU machine 0.8 ms a create,
//! even off the writer lock; in the refresher's batches far less a ticket), the reads that
//! follow a write — a bulk import read at once — find the contexts kept, and a refresh that
//! is lost (a crash, the database down) costs speed until the next read asks again, never a
//! wrong answer.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::Pool;
use crate::reach;

/// Most tickets one refresh statement recomputes.
const BATCH: usize = 500;

/// The tickets a write touched: the `UPDATE`s that bump their versions, run before its
/// `COMMIT` in the same round trip. One per ticket, by its whole key: a plan for
/// `id = ANY(…)` made without statistics read the workspace's every ticket. Every value is a
/// number of ours, written into the text.
pub(super) fn bump_sql(workspace: i64, ids: &[i64]) -> String {
    ids.iter()
        .map(|id| {
            format!(
                "UPDATE tickets SET context_version = context_version + 1 \
                 WHERE workspace_id = {workspace} AND id = {id}"
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

fn joined(ids: &[i64]) -> String {
    ids.iter().map(i64::to_string).collect::<Vec<_>>().join(",")
}

/// The tickets whose contexts are to be refreshed, by workspace.
#[derive(Default)]
struct Pending {
    asked: BTreeMap<i64, BTreeSet<i64>>,
    /// A refresh is running (what it took is no longer in `asked`).
    running: bool,
    /// The database handle is gone: the thread refreshes what is asked and ends.
    closed: bool,
}

struct Queue {
    pending: Mutex<Pending>,
    /// Wakes the thread when something is asked, and [`Refresher::settle`] when a run ends.
    changed: Condvar,
}

impl Queue {
    fn lock(&self) -> MutexGuard<'_, Pending> {
        self.pending
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Refreshes kept contexts on a thread of its own, with a connection of the pool.
pub(crate) struct Refresher {
    queue: Arc<Queue>,
}

impl Refresher {
    /// Start the thread; it ends when the refresher is dropped and nothing is pending.
    pub(super) fn start(pool: Pool) -> Self {
        let queue = Arc::new(Queue {
            pending: Mutex::new(Pending::default()),
            changed: Condvar::new(),
        });
        let worker = queue.clone();
        let spawned = std::thread::Builder::new()
            .name("jility-contexts".into())
            .spawn(move || run(&worker, &pool));
        if let Err(err) = spawned {
            // Reads stay right without it: every context then reads part by part.
            tracing::warn!(error = %err, "could not start the context refresher");
        }
        Self { queue }
    }

    /// Refresh the contexts of tickets `ids` of workspace `workspace` soon.
    pub(super) fn ask(&self, workspace: i64, ids: &[i64]) {
        if ids.is_empty() {
            return;
        }
        let mut pending = self.queue.lock();
        pending
            .asked
            .entry(workspace)
            .or_default()
            .extend(ids.iter().copied());
        self.queue.changed.notify_all();
    }

    /// Wait until every refresh asked for so far has run, at most `timeout`; whether it has.
    pub(super) fn settle(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut pending = self.queue.lock();
        while pending.running || !pending.asked.is_empty() {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            pending = match self.queue.changed.wait_timeout(pending, left) {
                Ok((guard, _)) => guard,
                Err(poisoned) => poisoned.into_inner().0,
            };
        }
        true
    }
}

impl Drop for Refresher {
    fn drop(&mut self) {
        self.queue.lock().closed = true;
        self.queue.changed.notify_all();
    }
}

/// The thread: take what is asked, refresh it, until closed with nothing left.
fn run(queue: &Queue, pool: &Pool) {
    loop {
        let asked = {
            let mut pending = queue.lock();
            pending.running = false;
            queue.changed.notify_all();
            while pending.asked.is_empty() && !pending.closed {
                pending = queue
                    .changed
                    .wait(pending)
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
            }
            if pending.asked.is_empty() {
                return;
            }
            pending.running = true;
            std::mem::take(&mut pending.asked)
        };
        refresh(pool, asked);
    }
}

/// One statement per workspace and [`BATCH`] tickets. A failure is logged and dropped: the
/// contexts stay at their old versions, which reads do not use.
fn refresh(pool: &Pool, asked: BTreeMap<i64, BTreeSet<i64>>) {
    let mut conn = match pool.get_timeout(reach::CHECKOUT_TIMEOUT) {
        Ok(conn) => conn,
        Err(err) => {
            tracing::debug!(error = %err, "no connection to refresh ticket contexts");
            return;
        }
    };
    for (workspace, ids) in asked {
        let ids: Vec<i64> = ids.into_iter().collect();
        for chunk in ids.chunks(BATCH) {
            // Derived rows: their commit need not wait for the disk. One lost in a crash
            // is older than its ticket's version (whose bump committed before the refresh
            // began, durably), so it is not used, and the next read asks again.
            let sql = format!(
                "BEGIN; SET LOCAL synchronous_commit = off; SET LOCAL statement_timeout = 0; \
                 SELECT jility_refresh_contexts({workspace}, '{{{}}}'::bigint[]); COMMIT",
                joined(chunk)
            );
            if let Err(err) = conn.client.batch_execute(&sql) {
                let _ = conn.client.batch_execute("ROLLBACK");
                tracing::debug!(error = %err, workspace, "a ticket context refresh failed");
                if conn.client.is_closed() {
                    return;
                }
            }
        }
    }
}
