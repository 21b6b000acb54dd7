//! Storage: the primitive reads and writes the domain needs, behind a trait so that a
//! second database (PostgreSQL for the cloud server) serves the same domain
//! ([`crate::tracker`]) with its own SQL. `jility-sqlite` has the embedded implementation;
//! `jility-pg` serves many workspaces from one PostgreSQL database (the cloud mode), each
//! of its stores bound to one workspace.

use mcp_common_core::ToolError;

use crate::errors;

use crate::model::{Change, Comment, CommitLink, Kind, Status, TicketRef, TicketSummary};

mod find;
mod inbox;
mod planning;
mod related;
mod views;

pub use find::*;
pub use inbox::*;
pub use planning::*;
pub use related::*;
pub use views::*;

/// A storage failure. The domain turns it into an `internal` error (or a clear, retryable
/// "database is busy" or "database cannot be reached" one) at its boundary. Each cause of a
/// retryable refusal has its own variant, so the caller is told what happened: a writer
/// holding the lock ([`Self::Busy`]), a moment of contention the database resolved by
/// refusing ([`Self::Overloaded`]), a database that cannot be reached
/// ([`Self::Unavailable`]) or that stopped answering ([`Self::Unresponsive`]).
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("the database is busy: another writer held a lock this needs for too long")]
    Busy,
    /// Contention, not an outage: every connection of the server's pool in use, the
    /// database refusing more connections, a serialization failure or deadlock, a
    /// cancelled statement. The text says which, for people (it names no value).
    #[error("the database is busy: {0}")]
    Overloaded(String),
    #[error("the database is not initialized (no project)")]
    NoProject,
    #[error(
        "the database was made by a newer jility (schema version {found}; this one knows up to {known})"
    )]
    TooNew { found: u32, known: u32 },
    /// The database server cannot be reached: connection refused or reset, the server shut
    /// down (`57P01`, `57P02`, `57P03`), a connection exception (`08…`), no connection within
    /// the pool's checkout timeout. The text is the driver's, for the server's log only: the
    /// caller gets [`errors::DATABASE_UNAVAILABLE`] without it.
    #[error("the database cannot be reached: {0}")]
    Unavailable(String),
    /// The database holds its connections open but answers nothing (a frozen or wedged
    /// server): the request gave up waiting. Anything it had begun is rolled back, or, for a
    /// commit already sent, its outcome is unknown (`commit_sent`).
    #[error("the database stopped answering")]
    Unresponsive { commit_sent: bool },
    /// The database answers, but did not finish the request's work in the time a request
    /// may wait (locks held elsewhere, load); handled like `Unresponsive`, as busy.
    #[error("the database is busy: it did not finish in time")]
    TooSlow { commit_sent: bool },
    /// Any other failure of the database. The text is for the server's log only (it may
    /// quote the database's own wording): the caller gets a reference to it.
    #[error("database error: {0}")]
    Database(String),
}

/// Seconds a client is told to wait before retrying when the database cannot be reached
/// (`Retry-After`, `retry_after_secs`): about what a restart of PostgreSQL takes.
pub const UNAVAILABLE_RETRY_AFTER_SECS: u64 = 2;

/// Seconds a client is told to wait before retrying when the database is busy.
pub const BUSY_RETRY_AFTER_SECS: u64 = 1;

impl From<StoreError> for ToolError {
    fn from(err: StoreError) -> Self {
        match err {
            StoreError::Busy => ToolError::new(errors::DATABASE_BUSY, err.to_string())
                .with_hint("Retry in a moment: another writer holds the lock.")
                .with_retry_after(BUSY_RETRY_AFTER_SECS),
            StoreError::Overloaded(_) => ToolError::new(errors::DATABASE_BUSY, err.to_string())
                .with_hint("Retry in a moment: nothing was written.")
                .with_retry_after(BUSY_RETRY_AFTER_SECS),
            StoreError::NoProject => ToolError::new(errors::INTERNAL, err.to_string())
                .with_hint("Run `jility init` to create the first project."),
            StoreError::TooNew { .. } => ToolError::new(errors::INTERNAL, err.to_string())
                .with_hint("Upgrade jility to use this database; it was left untouched."),
            StoreError::Unavailable(detail) => {
                // The driver's wording stays in the server's log (it names no password:
                // neither the driver's errors nor the pool's carry the connection string).
                tracing::warn!(detail = %detail, "the database cannot be reached");
                ToolError::new(
                    errors::DATABASE_UNAVAILABLE,
                    "The database cannot be reached",
                )
                .with_hint("Retry in a few seconds: the server answers again as soon as its database is back.")
                .with_retry_after(UNAVAILABLE_RETRY_AFTER_SECS)
            }
            StoreError::Unresponsive { commit_sent: false } => ToolError::new(
                errors::DATABASE_UNAVAILABLE,
                "The database stopped answering; nothing was written",
            )
            .with_hint("Retry in a few seconds: the server answers again as soon as its database does.")
            .with_retry_after(UNAVAILABLE_RETRY_AFTER_SECS),
            StoreError::Unresponsive { commit_sent: true } => ToolError::new(
                errors::DATABASE_UNAVAILABLE,
                "The database stopped answering while this write was being committed: it may or may not have been written",
            )
            .with_hint("Retry with the same Idempotency-Key to learn the outcome (the first answer comes back if it was written); without a key, look before you write again.")
            .with_retry_after(UNAVAILABLE_RETRY_AFTER_SECS),
            StoreError::TooSlow { commit_sent: false } => ToolError::new(
                errors::DATABASE_BUSY,
                "The database did not finish this request in time; nothing was written",
            )
            .with_hint("Retry in a moment: the database answers, but slowly (a long lock or heavy load).")
            .with_retry_after(BUSY_RETRY_AFTER_SECS),
            StoreError::TooSlow { commit_sent: true } => ToolError::new(
                errors::DATABASE_BUSY,
                "The database did not finish this request in time: a write it made may or may not have been kept",
            )
            .with_hint("Retry with the same Idempotency-Key to learn the outcome (the first answer comes back if it was written); without a key, look before you write again.")
            .with_retry_after(BUSY_RETRY_AFTER_SECS),
            StoreError::Database(detail) => {
                // The database's own wording (which may quote a value) stays in the log,
                // under a reference the answer gives.
                let reference = reference();
                tracing::warn!(reference = %reference, detail = %detail, "a database operation failed");
                ToolError::internal(format!(
                    "A database operation failed (reference {reference})"
                ))
                .with_hint("This is a bug or damaged data, not something to retry: the server's log has the details under this reference.")
            }
        }
    }
}

/// A short reference for a failure in the log: the clock's nanoseconds mixed with a
/// counter, as 8 hex digits (unique enough to find one line among a day's).
fn reference() -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| {
            d.subsec_nanos() ^ (d.as_secs() as u32).rotate_left(13)
        });
    let n = COUNTER
        .fetch_add(1, Ordering::Relaxed)
        .wrapping_mul(0x9e37_79b9);
    format!("{:08x}", nanos ^ n)
}

pub type StoreResult<T> = Result<T, StoreError>;

/// Listings (tickets, the audit log) count what matches exactly up to this many, then say
/// "more than" (`total_exact: false`): counting further costs more than it tells.
pub const COUNT_CAP: usize = 10_000;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Project {
    pub id: i64,
    pub key: String,
    pub name: String,
}

/// A ticket row as stored, with its project's key.
#[derive(Debug, Clone)]
pub struct TicketRow {
    pub id: i64,
    pub uuid: String,
    pub project_key: String,
    pub number: i64,
    pub title: String,
    pub description: String,
    pub status: Status,
    pub story_points: Option<u8>,
    pub parent_id: Option<i64>,
    pub epic_id: Option<i64>,
    pub created_by: String,
    pub created_at: String,
    pub updated_by: String,
    pub updated_at: String,
    pub deleted_at: Option<String>,
    pub kind: Kind,
    /// The sprint it is in, and that sprint's name.
    pub sprint_id: Option<i64>,
    pub sprint: Option<String>,
}

impl TicketRow {
    /// `KEY-N`.
    pub fn display_number(&self) -> String {
        format!("{}-{}", self.project_key, self.number)
    }

    pub fn as_ref(&self) -> TicketRef {
        TicketRef {
            number: self.display_number(),
            title: self.title.clone(),
            status: self.status,
        }
    }
}

/// How a whole-ticket read names its ticket: by number in a project (`key: None`, the
/// default project), or by UUID (hyphenated, lower case).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum TicketLookup {
    Number { key: Option<String>, number: i64 },
    Uuid(String),
}

/// How many of a ticket's newest comments, and of its newest changes, a whole-ticket read
/// shows ([`WholeTicket`]).
pub const WHOLE_COMMENTS: usize = 50;
pub const WHOLE_CHANGES: usize = 20;

/// What [`Store::whole_tickets`] answers: the tickets, once read.
pub type WholeTickets = std::pin::Pin<
    Box<dyn Future<Output = Result<Vec<Option<WholeTicket>>, ToolError>> + Send + 'static>,
>;

/// Wait for `future` on this thread: how blocking code (the domain's operations on a
/// blocking thread, the CLI) takes a store's answer. A store that reads at once answers a
/// ready future; one on a runtime's async connections is driven by the runtime's threads
/// while this one waits.
pub fn wait<T>(future: impl Future<Output = T>) -> T {
    futures::executor::block_on(future)
}

/// A ticket with everything a whole-ticket read shows beside it, as of one snapshot.
#[derive(Debug, Clone)]
pub struct WholeTicket {
    pub row: TicketRow,
    pub assignees: Vec<String>,
    pub labels: Vec<String>,
    pub parent: Option<TicketRef>,
    pub epic: Option<TicketRef>,
    /// The newest [`WHOLE_COMMENTS`] comments, oldest first, and how many there are in all.
    pub comments: Vec<Comment>,
    pub comment_count: usize,
    /// The live tickets it depends on, and the live tickets that depend on it.
    pub dependencies: Vec<TicketRef>,
    pub dependents: Vec<TicketRef>,
    pub commits: Vec<CommitLink>,
    /// The newest [`WHOLE_CHANGES`] changes, newest first.
    pub changes: Vec<Change>,
}

/// The ticket `lookup` names, whole, read with `tx`'s primitives (`None`: there is none;
/// a deleted one is returned, its `deleted_at` set): how a store without a faster way
/// answers [`Store::whole_tickets`], inside its read transaction.
pub fn whole_ticket(
    tx: &mut dyn StoreTx,
    lookup: &TicketLookup,
) -> Result<Option<WholeTicket>, ToolError> {
    let row = match lookup {
        TicketLookup::Uuid(uuid) => tx.ticket_by_uuid(uuid)?,
        TicketLookup::Number { key, number } => {
            let key = match key {
                Some(key) => key.clone(),
                None => tx.default_project()?.key,
            };
            tx.ticket_by_number(&key, *number)?
        }
    };
    let Some(row) = row else {
        return Ok(None);
    };
    let named = [row.parent_id, row.epic_id];
    let dependency_ids = tx.dependency_ids(row.id)?;
    let dependent_ids = tx.dependent_ids(row.id)?;
    let ids: Vec<i64> = named
        .iter()
        .flatten()
        .chain(&dependency_ids)
        .chain(&dependent_ids)
        .copied()
        .collect();
    let mut refs = Vec::with_capacity(ids.len());
    for (found, id) in tx.ticket_refs(&ids)?.into_iter().zip(&ids) {
        refs.push(found.ok_or_else(|| ToolError::internal(format!("ticket row {id} vanished")))?);
    }
    let mut refs = refs.into_iter();
    let parent = row.parent_id.and_then(|_| refs.next());
    let epic = row.epic_id.and_then(|_| refs.next());
    let dependencies: Vec<TicketRef> = refs.by_ref().take(dependency_ids.len()).collect();
    let dependents: Vec<TicketRef> = refs.collect();
    let (comments, comment_count) = tx.comments(row.id, WHOLE_COMMENTS)?;
    Ok(Some(WholeTicket {
        assignees: tx.assignees(row.id)?,
        labels: tx.labels(row.id)?,
        parent,
        epic,
        comments,
        comment_count,
        dependencies,
        dependents,
        commits: tx.commits(row.id)?,
        changes: tx.changes(row.id, WHOLE_CHANGES)?,
        row,
    }))
}

pub struct NewTicket<'a> {
    pub uuid: &'a str,
    pub project_id: i64,
    pub number: i64,
    pub title: &'a str,
    pub description: &'a str,
    pub status: Status,
    pub story_points: Option<u8>,
    pub parent_id: Option<i64>,
    pub epic_id: Option<i64>,
    pub kind: Kind,
    pub actor: &'a str,
    pub at: &'a str,
}

/// Fields to change on a ticket; `None` leaves a field as it is.
#[derive(Debug, Default, Clone)]
pub struct TicketUpdate {
    pub title: Option<String>,
    pub description: Option<String>,
    pub status: Option<Status>,
    pub story_points: Option<Option<u8>>,
    pub parent_id: Option<Option<i64>>,
    pub epic_id: Option<Option<i64>>,
    pub kind: Option<Kind>,
    pub sprint_id: Option<Option<i64>>,
    pub deleted: bool,
}

pub struct NewChange<'a> {
    pub change_type: &'a str,
    pub old_value: Option<&'a str>,
    pub new_value: Option<&'a str>,
    pub detail: Option<&'a str>,
    pub message: Option<&'a str>,
    pub actor: &'a str,
    pub at: &'a str,
}

/// The filters of a listing; all given filters must hold.
#[derive(Debug, Default, Clone)]
pub struct ListFilter {
    pub statuses: Vec<Status>,
    pub assignee: Option<String>,
    /// Tickets carrying every one of these labels.
    pub labels: Vec<String>,
    pub parent_id: Option<i64>,
    pub epic_id: Option<i64>,
    pub unassigned: bool,
    /// Tickets of this sprint (`Some(Some(id))`) or of no open sprint, the backlog
    /// (`Some(None)`).
    pub sprint: Option<Option<i64>>,
}

pub struct ListPage {
    pub items: Vec<TicketSummary>,
    /// How many tickets match, counted up to a cap.
    pub total: usize,
    /// False when more than `total` match (the count stopped at its cap).
    pub total_exact: bool,
    /// The storage position of the last item, when more items follow.
    pub next_after: Option<i64>,
}

/// A search query as terms: each term is a phrase of one or more words, all of which must
/// match. Each store writes them in its own full-text dialect.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SearchTerms(pub Vec<Vec<String>>);

pub struct SearchHit {
    pub ticket: TicketSummary,
    pub snippet: String,
}

/// One page of search hits.
pub struct SearchPage {
    /// The hits of the page, best first.
    pub hits: Vec<SearchHit>,
    /// How many tickets match; a lower bound when `total_exact` is false (the store then
    /// stopped counting where counting would cost more than the page), never below what
    /// paging reaches.
    pub total: usize,
    pub total_exact: bool,
}

/// One transaction's worth of storage operations (planning's are [`PlanningTx`]'s, saved
/// views' [`ViewsTx`]'s).
pub trait StoreTx: PlanningTx + ViewsTx + RelatedTx + InboxTx {
    fn default_project(&mut self) -> StoreResult<Project>;
    fn projects(&mut self) -> StoreResult<Vec<Project>>;
    fn create_project(&mut self, key: &str, name: &str, at: &str) -> StoreResult<Project>;
    /// Give a project that never had a ticket another key; `false` when it has had one.
    fn rekey_project(&mut self, project_id: i64, key: &str) -> StoreResult<bool>;
    /// The next ticket number of the project, taken inside this write transaction.
    fn allocate_number(&mut self, project_id: i64) -> StoreResult<i64>;

    fn insert_ticket(&mut self, ticket: &NewTicket<'_>) -> StoreResult<i64>;
    fn ticket_by_number(
        &mut self,
        project_key: &str,
        number: i64,
    ) -> StoreResult<Option<TicketRow>>;
    fn ticket_by_uuid(&mut self, uuid: &str) -> StoreResult<Option<TicketRow>>;
    fn ticket_by_id(&mut self, id: i64) -> StoreResult<Option<TicketRow>>;
    /// The number, title and status of each ticket of `ids`, in their order (`None` for an
    /// id with no row, deleted tickets included). A store may answer from what it fetched
    /// with the ticket whose neighbours these are, or in one query.
    fn ticket_refs(&mut self, ids: &[i64]) -> StoreResult<Vec<Option<TicketRef>>> {
        ids.iter()
            .map(|id| Ok(self.ticket_by_id(*id)?.map(|row| row.as_ref())))
            .collect()
    }
    fn update_ticket(
        &mut self,
        id: i64,
        update: &TicketUpdate,
        actor: &str,
        at: &str,
    ) -> StoreResult<()>;

    fn assignees(&mut self, id: i64) -> StoreResult<Vec<String>>;
    fn set_assignees(
        &mut self,
        id: i64,
        assignees: &[String],
        actor: &str,
        at: &str,
    ) -> StoreResult<()>;
    fn labels(&mut self, id: i64) -> StoreResult<Vec<String>>;
    fn set_labels(&mut self, id: i64, labels: &[String]) -> StoreResult<()>;

    fn insert_comment(
        &mut self,
        id: i64,
        author: &str,
        content: &str,
        at: &str,
    ) -> StoreResult<Comment>;
    /// The newest `limit` comments, oldest first, and how many there are in all.
    fn comments(&mut self, id: i64, limit: usize) -> StoreResult<(Vec<Comment>, usize)>;

    fn add_dependency(&mut self, id: i64, on: i64, actor: &str, at: &str) -> StoreResult<bool>;
    fn remove_dependency(&mut self, id: i64, on: i64) -> StoreResult<bool>;
    /// The live tickets `id` depends on.
    fn dependency_ids(&mut self, id: i64) -> StoreResult<Vec<i64>>;
    /// The live tickets that depend on `id`.
    fn dependent_ids(&mut self, id: i64) -> StoreResult<Vec<i64>>;

    fn link_commit(
        &mut self,
        id: i64,
        hash: &str,
        message: Option<&str>,
        actor: &str,
        at: &str,
    ) -> StoreResult<bool>;
    fn commits(&mut self, id: i64) -> StoreResult<Vec<CommitLink>>;

    fn record_change(&mut self, id: i64, change: &NewChange<'_>) -> StoreResult<()>;
    /// The newest `limit` changes, newest first.
    fn changes(&mut self, id: i64, limit: usize) -> StoreResult<Vec<Change>>;
    /// Every description change, oldest first: version 1 is the original description.
    fn description_versions(&mut self, id: i64) -> StoreResult<Vec<Change>>;

    fn list(
        &mut self,
        filter: &ListFilter,
        after: Option<i64>,
        limit: usize,
    ) -> StoreResult<ListPage>;
    /// The hits of `terms` ranked `offset..offset + limit`, best first, among the tickets
    /// `filter` keeps, and how many match in all.
    fn search(
        &mut self,
        terms: &SearchTerms,
        filter: &Filter,
        offset: usize,
        limit: usize,
    ) -> StoreResult<SearchPage>;
    /// The live tickets `filter` keeps, in `sort`'s order, the page after `after` (up to
    /// `limit`), and how many match, counted up to [`COUNT_CAP`].
    fn find(
        &mut self,
        filter: &Filter,
        sort: Sort,
        after: Option<&Position>,
        limit: usize,
    ) -> StoreResult<FoundPage>;
    /// The live tickets `filter` keeps, oldest first, at most `limit`: rows without their
    /// descriptions (`""`), as a bulk edit reads them.
    fn find_rows(&mut self, filter: &Filter, limit: usize) -> StoreResult<Vec<TicketRow>>;

    // Many tickets at once (a bulk edit): each as the one-ticket primitive does it, which
    // is how a store without a faster way answers; a store whose every statement is a round
    // trip does each in a few statements.

    /// The labels and the assignees of each ticket of `ids`, in their order.
    fn names_of(&mut self, ids: &[i64]) -> StoreResult<Vec<(Vec<String>, Vec<String>)>> {
        ids.iter()
            .map(|id| Ok((self.labels(*id)?, self.assignees(*id)?)))
            .collect()
    }
    /// [`Self::update_ticket`] of each ticket of `ids`, with the same update.
    fn update_tickets(
        &mut self,
        ids: &[i64],
        update: &TicketUpdate,
        actor: &str,
        at: &str,
    ) -> StoreResult<()> {
        for id in ids {
            self.update_ticket(*id, update, actor, at)?;
        }
        Ok(())
    }
    /// [`Self::set_labels`] of each ticket.
    fn set_labels_of(&mut self, labels: &[(i64, Vec<String>)]) -> StoreResult<()> {
        for (id, labels) in labels {
            self.set_labels(*id, labels)?;
        }
        Ok(())
    }
    /// [`Self::set_assignees`] of each ticket.
    fn set_assignees_of(
        &mut self,
        assignees: &[(i64, Vec<String>)],
        actor: &str,
        at: &str,
    ) -> StoreResult<()> {
        for (id, names) in assignees {
            self.set_assignees(*id, names, actor, at)?;
        }
        Ok(())
    }
    /// [`Self::record_change`] of each ticket's change, in order.
    fn record_changes(&mut self, changes: &[(i64, NewChange<'_>)]) -> StoreResult<()> {
        for (id, change) in changes {
            self.record_change(*id, change)?;
        }
        Ok(())
    }
}

/// A database the domain runs transactions on.
///
/// Its methods block (they wait for the database, up to its busy timeout): async code runs
/// them on a blocking thread, see [`crate::service`].
pub trait Store {
    /// Run `f` in a read transaction (a consistent snapshot).
    fn read<R>(
        &mut self,
        f: impl Fn(&mut dyn StoreTx) -> Result<R, ToolError>,
    ) -> Result<R, ToolError>;
    /// Run `f` in a write transaction: committed when `f` returns `Ok`, rolled back
    /// (nothing written) when it returns `Err`.
    fn write<R>(
        &mut self,
        f: impl FnOnce(&mut dyn StoreTx) -> Result<R, ToolError>,
    ) -> Result<R, ToolError>;

    /// The tickets `lookups` name, in their order, each whole and each as of one
    /// consistent snapshot (`None` where there is none; a deleted ticket is returned with its
    /// `deleted_at` set). The one way the domain reads a whole ticket.
    ///
    /// The answer is a future, so that a store whose reads wait on the network can wait
    /// without holding a thread: the cloud store reads each ticket in one statement on its
    /// async connections (batched with other requests' reads), and an async caller awaits it
    /// on its own task; a blocking caller waits for it with [`wait`]. By default the store
    /// reads at once, in a read transaction with the primitives ([`whole_ticket`]), and the
    /// future is ready.
    fn whole_tickets(&mut self, lookups: &[TicketLookup]) -> WholeTickets {
        Box::pin(std::future::ready(self.read(|tx| {
            lookups
                .iter()
                .map(|lookup| whole_ticket(tx, lookup))
                .collect()
        })))
    }

    /// [`StoreTx::search`] on its own: a store whose search is one statement needs no
    /// transaction around it.
    fn search(
        &mut self,
        terms: &SearchTerms,
        filter: &Filter,
        offset: usize,
        limit: usize,
    ) -> Result<SearchPage, ToolError> {
        self.read(|tx| Ok(tx.search(terms, filter, offset, limit)?))
    }
}
