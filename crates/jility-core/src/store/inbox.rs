//! Storage for the inbox: people's notifications (mentions, assignments, handoffs, done
//! blockers, changes to what they watch) and what they chose to watch or not.

use super::StoreResult;

/// A notification to keep. One per recipient, ticket and moment: a second for the same
/// (an operation that changes several things) is kept only when of higher `priority`.
pub struct NewNotification<'a> {
    pub recipient: &'a str,
    /// `mentioned`, `assigned`, `handoff`, `blocker_done` or `watching`.
    pub kind: &'a str,
    pub priority: i32,
    pub ticket_id: i64,
    pub actor: &'a str,
    pub summary: &'a str,
    pub at: &'a str,
}

/// A notification as stored, with its ticket's number and title.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotificationRow {
    pub id: i64,
    pub kind: String,
    /// `KEY-N` (empty for a notification about no ticket).
    pub ticket: String,
    pub title: String,
    pub actor: String,
    pub summary: String,
    pub created_at: String,
    pub read_at: Option<String>,
}

/// The inbox's reads and writes.
pub trait InboxTx {
    /// Keep `n` (or raise the one kept for the same recipient, ticket and moment).
    fn notify(&mut self, n: &NewNotification<'_>) -> StoreResult<()>;
    /// `recipient`'s notifications, newest first, older than `before` (an id), at most
    /// `limit`.
    fn notifications(
        &mut self,
        recipient: &str,
        unread_only: bool,
        before: Option<i64>,
        limit: usize,
    ) -> StoreResult<Vec<NotificationRow>>;
    /// How many notifications `recipient` has (only unread ones: `unread_only`).
    fn count_notifications(&mut self, recipient: &str, unread_only: bool) -> StoreResult<u64>;
    /// Mark `recipient`'s notifications `ids` (`None`: all) read at `at`: how many were
    /// unread.
    fn mark_read(&mut self, recipient: &str, ids: Option<&[i64]>, at: &str) -> StoreResult<u64>;
    /// Who watches ticket `id`: its creator, assignees and commenters and who chose to
    /// watch it, less who chose not to; each once, by name.
    fn watchers(&mut self, id: i64) -> StoreResult<Vec<String>>;
    fn set_watch(&mut self, id: i64, person: &str, watching: bool, at: &str) -> StoreResult<()>;
    /// The live tickets that depend on ticket `id`.
    fn dependents_of(&mut self, id: i64) -> StoreResult<Vec<i64>>;
    /// Which of `names` the workspace knows — an assignee of a ticket, or who made a change
    /// — each as it is known (matched without regard to case).
    fn known_names(&mut self, names: &[String]) -> StoreResult<Vec<String>>;
}
