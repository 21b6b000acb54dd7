//! The tracker for async code (the MCP server, an HTTP API): every operation runs on a
//! blocking thread (`tokio::task::spawn_blocking`), because storage blocks — SQLite waits
//! up to its busy timeout for another process's write lock. No lock is held across that
//! work: each call runs on its own clone of the tracker, whose store hands it a connection
//! of its own (as `jility_sqlite::SqlitePool` does), so a call stuck on the database holds
//! up nothing but itself — `ping`, other sessions and other reads carry on.

use mcp_common_core::ToolError;

use crate::store::Store;
use crate::tracker::Tracker;

/// A tracker shared by async tasks: clone it freely (a clone is a handle).
#[derive(Clone)]
pub struct Service<S> {
    tracker: Tracker<S>,
}

impl<S> Service<S>
where
    S: Store + Clone + Send + 'static,
{
    pub fn new(tracker: Tracker<S>) -> Self {
        Self { tracker }
    }

    /// A handle on the tracker, for work that does not block ([`Self::run`] for the rest).
    pub fn tracker(&self) -> Tracker<S> {
        self.tracker.clone()
    }

    /// Run `op` on the tracker on a blocking thread and wait for it without blocking the
    /// runtime. A panic inside `op` is answered as an `internal` error.
    pub async fn run<T, F>(&self, op: F) -> Result<T, ToolError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Tracker<S>) -> Result<T, ToolError> + Send + 'static,
    {
        let mut tracker = self.tracker.clone();
        match tokio::task::spawn_blocking(move || op(&mut tracker)).await {
            Ok(result) => result,
            Err(err) => {
                tracing::error!(error = %err, "a tracker operation failed");
                Err(ToolError::internal(format!("The operation failed: {err}")))
            }
        }
    }
}
