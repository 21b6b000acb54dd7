//! The cloud store: one PostgreSQL database holds many workspaces, and a [`PgStore`] is
//! bound to one of them. Every statement it runs names its workspace — by-id and by-uuid
//! lookups, comments, dependencies, changes, listings, search and numbering alike — and
//! every reference between rows is a composite foreign key on `(workspace_id, id)`, so even
//! a wrong id handed to the store cannot reach or link another workspace's rows.
//!
//! **Connections.** [`PgDatabase`] is a small pool (r2d2) of blocking `postgres` clients,
//! shared by every clone and every store made from it. The domain's trait is blocking and
//! runs on blocking threads ([`jility_core::service`]), so the synchronous client fits; a pool
//! (rather than one client per store) lets each transaction take a connection of its own,
//! so a call that waits on the database holds up nothing but itself, as
//! `jility_sqlite::SqlitePool` does in local mode. Each connection keeps its prepared
//! statements, so a repeated query costs one round trip. Every wait on the network is
//! bounded ([`crate::reach`]): connecting, checking a connection out of the pool (3 s, at
//! once while the database is known to be down), keepalives on idle connections; a database
//! that cannot be reached is [`StoreError::Unavailable`] (`database_unavailable`, retryable).
//!
//! **Transactions.** Reads run in `REPEATABLE READ READ ONLY` (one consistent snapshot).
//! Writes run in `READ COMMITTED` and first take a transaction-scoped advisory lock on
//! their workspace: the writers of one workspace run one at a time, across every process on
//! the database, exactly like local mode's single SQLite writer, so the domain's
//! read-check-write sequences (workflow, cycles, versions) never interleave, while other
//! workspaces write in parallel. Ticket numbers come from `UPDATE … RETURNING` on the
//! project's counter inside that transaction. Waits are bounded by `lock_timeout` (3 s;
//! a writer holds the lock for about a millisecond); a timeout, a serialization failure or a deadlock is
//! [`StoreError::Busy`] (retryable for the caller). [`Store::write`] takes an `FnOnce`, so
//! the store cannot rerun a transaction whose body already ran: it retries only what
//! comes before the body (checking out a connection and `BEGIN`), e.g. after a connection
//! the server dropped. A handle may hold the commit of its next write
//! ([`PgStore::hold_next_write`]) so that the API records an idempotency key and the answer
//! in the same transaction ([`PgStore::commit_held`]).
//!
//! **Schema.** Migrations are embedded (`pg_migrations/NNNN_name.sql`), recorded in
//! `jility_schema_migrations`, and applied at [`PgDatabase::connect`] in one transaction
//! holding an advisory lock, so processes starting together apply each once. A database
//! migrated by a newer jility is refused ([`StoreError::TooNew`]) before anything is written.
//!
//! **Search.** A ticket's words as a `tsvector` (title weight A, description B, comments C),
//! kept by a trigger in a narrow table of their own (`ticket_search`, live tickets only)
//! with a GIN index, in the `jility` configuration: English stems with no stop words (and accents
//! folded when `unaccent` is available), like local mode's porter tokenizer. Every term must
//! match; a phrase is `phraseto_tsquery` (adjacent words); hits are ranked by `ts_rank`
//! with weights 1.0 / 0.4 / 0.1 (local mode's bm25 weights 10 / 4 / 1) and get a
//! `ts_headline` snippet with `**` markers. Up to 1,000 matches are all ranked and counted
//! exactly. When more match, only the 1,000 newest are ranked (they come first), the older
//! ones follow newest first, and the total is a lower bound above 1,000 (`total_exact:
//! false` once the domain can carry it). A query common among the newest tickets reads
//! them newest first (index on `(workspace_id, ticket_id)`) until 1,001 match, so its
//! first page costs about the same whether 2,000 or 60,000 tickets match; any other goes
//! through the GIN index, which finds, ranks and counts every match, as before (see
//! `store/search.rs`). The statement is planned for its workspace every time.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_common_core::ToolError;
use postgres::error::SqlState;
use postgres::types::ToSql;
use postgres::{Client, Config, NoTls, Row, Statement};

mod connect;
mod contexts;
mod find;
mod inbox;
mod many;
mod planning;
mod reader;
mod related;
mod replicas;
mod rows;
mod schema;
mod search;
mod statements;
mod tx;
mod views;
mod whole;

use connect::*;
pub use connect::{
    Budget, Connections, MIN_POOL_SIZE, PgDatabase, Prepared, READS_APPLICATION, Workspace,
};
use contexts::Refresher;
use reader::{Lookup, Reader};
pub use replicas::{DEFAULT_MAX_LAG, StandbyState, as_caller, as_caller_async};
use replicas::{Replica, Replicas};
use rows::*;
use schema::*;
pub use schema::{ROLLING_FROM, SchemaStatus, breaks_rolling_upgrade};
use tx::*;

use crate::reach::{self, Health};
use jility_core::model::{Change, Comment, CommitLink, Kind, Status, TicketRef, TicketSummary};
use jility_core::store::{
    COUNT_CAP, Filter, FoundPage, ListFilter, ListPage, NewChange, NewTicket, Position, Project,
    SearchPage, SearchTerms, Sort, Store, StoreError, StoreResult, StoreTx, TicketLookup,
    TicketRow, TicketUpdate, WHOLE_CHANGES, WHOLE_COMMENTS, WholeTicket, WholeTickets,
};

/// One version of the schema: its file's name (`NNNN_what`) and its statements.
#[derive(Debug, Clone, Copy)]
pub struct Migration {
    pub name: &'static str,
    pub sql: &'static str,
}

macro_rules! migrations {
    ($($name:literal),* $(,)?) => {
        &[$(Migration {
            name: $name,
            sql: include_str!(concat!("../pg_migrations/", $name, ".sql")),
        }),*]
    };
}

/// The schema, one migration per version (version = position + 1);
/// `jility_schema_migrations` records which ran. From [`ROLLING_FROM`] on, each is
/// additive (README, "Upgrades"): a server of the version before keeps working beside it.
pub const MIGRATIONS: &[Migration] = migrations![
    "0001_initial",
    "0002_tokens",
    "0003_rate_limits",
    "0004_server_secrets",
    "0005_audit",
    "0006_ticket_lookups",
    "0007_unlogged_rate_limits",
    "0008_search_table",
    "0009_idempotency",
    "0010_sliding_rate_limits",
    "0011_accounts",
    "0012_oauth",
    "0013_rate_leases",
    "0014_search_rank",
    "0015_ticket_contexts",
    "0016_context_versions",
    "0017_listing_indexes",
    "0018_search_by_workspace",
    "0019_context_probes",
    "0020_planning",
    "0021_kept_sprints",
    "0022_plan_candidates",
    "0023_views",
    "0024_ticket_titles",
    "0025_read_positions",
    "0026_webhooks",
    "0027_inbox",
];

/// How long a statement waits for a lock (another writer of the workspace, a migration)
/// before the transaction fails as busy: short enough that a request is answered within a
/// few seconds (a writer holds the lock for a millisecond or so), long enough for a batch.
const LOCK_TIMEOUT: Duration = Duration::from_secs(3);

/// The longest any statement of the pool may run (PostgreSQL's `statement_timeout`): past
/// it the statement is cancelled (`Overloaded`, busy). Longer than a request waits
/// ([`crate::reach::DEADLINE`]): a backstop for runaway statements, not a request's bound.
const STATEMENT_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a starting process waits for another one's migrations.
const MIGRATION_LOCK_TIMEOUT: Duration = Duration::from_secs(120);

/// Default number of connections a [`PgDatabase`] opens at most, all its uses together
/// ([`Budget`]): four `jility serve` processes and the admin commands beside them within a
/// stock PostgreSQL's `max_connections = 100`.
pub const DEFAULT_POOL_SIZE: u32 = 20;

/// Most prepared statements a connection keeps (listing filters make a few shapes each).
const MAX_STATEMENTS: usize = 256;

/// Advisory lock keys: one bigint for migrations; (class, workspace) pairs for writers.
/// PostgreSQL keeps the one-key and two-key forms apart, so they never collide.
const MIGRATION_LOCK: i64 = 0x6a69_6c69_7479; // "jility"
const WRITER_LOCK_CLASS: i32 = 0x006a_696c;

/// A driver error as the domain's [`StoreError`]: a database that cannot be reached is
/// [`StoreError::Unavailable`] ([`crate::reach`]); a lock timeout is [`StoreError::Busy`]
/// (another writer held the workspace's lock); serialization failures, deadlocks,
/// cancelled statements and too many connections are [`StoreError::Overloaded`], each
/// saying which.
pub fn db(err: postgres::Error) -> StoreError {
    {
        if let Some(code) = err.code() {
            if *code == SqlState::LOCK_NOT_AVAILABLE {
                return StoreError::Busy;
            }
            let overloaded = if *code == SqlState::T_R_SERIALIZATION_FAILURE
                || *code == SqlState::T_R_DEADLOCK_DETECTED
            {
                Some("the write collided with another one at the same moment")
            } else if *code == SqlState::QUERY_CANCELED {
                Some("a statement was cancelled before it finished")
            } else if *code == SqlState::TOO_MANY_CONNECTIONS {
                Some(crate::reach::TOO_MANY_CONNECTIONS)
            } else {
                None
            };
            if let Some(cause) = overloaded {
                return StoreError::Overloaded(cause.to_string());
            }
        }
        let unreachable = crate::reach::is_unreachable(&err);
        let detail = match err.as_db_error() {
            Some(db) => format!(
                "{} ({}){}",
                db.message(),
                db.code().code(),
                db.detail().map(|d| format!(": {d}")).unwrap_or_default()
            ),
            None => match std::error::Error::source(&err) {
                Some(source) => format!("{err}: {source}"),
                None => err.to_string(),
            },
        };
        if unreachable {
            StoreError::Unavailable(detail)
        } else {
            StoreError::Database(detail)
        }
    }
}

/// The store of one workspace: every transaction it runs sees and changes that workspace
/// only. Cheap to clone (a handle on the pool); a clone starts with no held write
/// ([`PgStore::hold_next_write`]).
pub struct PgStore {
    db: PgDatabase,
    workspace: i64,
    /// The commit of this handle's next write, when held (an idempotent request).
    hold: Arc<Mutex<Hold>>,
}

impl Clone for PgStore {
    fn clone(&self) -> Self {
        Self {
            db: self.db.clone(),
            workspace: self.workspace,
            hold: Arc::default(),
        }
    }
}

/// Whether this handle's next write commits at once, or waits for [`PgStore::commit_held`].
#[derive(Default)]
enum Hold {
    #[default]
    Off,
    Armed,
    Held(Box<Open>),
}

impl PgStore {
    /// The store of workspace `workspace_id`; an unknown workspace is an error.
    pub fn open(db: &PgDatabase, workspace_id: i64) -> StoreResult<Self> {
        match db.workspace(workspace_id)? {
            Some(_) => Ok(Self {
                db: db.clone(),
                workspace: workspace_id,
                hold: Arc::default(),
            }),
            None => Err(StoreError::Database(format!(
                "there is no workspace {workspace_id}"
            ))),
        }
    }

    /// The workspace this store is bound to.
    pub fn workspace_id(&self) -> i64 {
        self.workspace
    }

    /// The database it runs on.
    pub fn database(&self) -> &PgDatabase {
        &self.db
    }

    /// Hold the commit of this handle's next write: when its body succeeds, the transaction
    /// stays open (with the workspace's writer lock) until [`Self::commit_held`] adds to it
    /// and commits, or [`Self::release_held`] (or dropping the handle) rolls it back. This is
    /// how an idempotency key is recorded atomically with the write it answers. Only one
    /// write may be held: a second write on this handle meanwhile fails.
    pub fn hold_next_write(&self) {
        if let Ok(mut hold) = self.hold.lock() {
            *hold = Hold::Armed;
        }
    }

    /// Run `f` in the held write's transaction, then commit it when `f` answers `(_, true)`,
    /// else roll it back; `None` when no write is held (none ran). The hold ends either way.
    pub fn commit_held<R>(
        &self,
        f: impl FnOnce(&mut Client, i64) -> StoreResult<(R, bool)>,
    ) -> Option<StoreResult<R>> {
        let held = match self.hold.lock() {
            Ok(mut hold) => std::mem::take(&mut *hold),
            Err(_) => {
                return Some(Err(StoreError::Database(
                    "the write hold is poisoned".into(),
                )));
            }
        };
        let Hold::Held(mut open) = held else {
            return None;
        };
        let done = match open.conn.as_mut() {
            Some(conn) => f(&mut conn.client, self.workspace),
            None => Err(StoreError::Database("no connection".into())),
        };
        Some(match done {
            Ok((value, true)) => open.commit().map(|()| value),
            Ok((value, false)) => {
                open.rollback();
                Ok(value)
            }
            Err(err) => {
                open.rollback();
                Err(err)
            }
        })
    }

    /// `f` on a connection of the pool with no transaction around it (no `BEGIN`, no
    /// `ROLLBACK`): for reads of one statement, which sees one snapshot on its own. A
    /// connection the server dropped before answering is replaced and `f` run again once
    /// (nothing was read).
    fn outside<R>(&self, f: impl Fn(&mut Tx<'_>) -> StoreResult<R>) -> StoreResult<R> {
        if let Some(replica) = self.standby_for_read()
            && let Some(replicas) = self.db.replicas.as_ref()
        {
            match replica.checkout() {
                Some(mut conn) => {
                    let mut tx = Tx::new(&mut conn, self.workspace);
                    let result = f(&mut tx);
                    if result.is_ok() || !(tx.failed || tx.closed()) {
                        Replicas::used(&replica);
                        return result;
                    }
                    replicas.failed(&replica, "read_failed");
                }
                None => replicas.failed(&replica, "no_connection"),
            }
        }
        let mut attempt = 0;
        loop {
            attempt += 1;
            let mut conn = self.db.checkout()?;
            let mut tx = Tx::new(&mut conn, self.workspace);
            let result = f(&mut tx);
            if result.is_err() && tx.closed() && attempt < 2 {
                tracing::warn!("database connection lost; reconnecting");
                continue;
            }
            return result;
        }
    }

    /// Roll back the held write, if any, and end the hold.
    pub fn release_held(&self) {
        let held = self.hold.lock().map(|mut hold| std::mem::take(&mut *hold));
        if let Ok(Hold::Held(open)) = held {
            open.rollback();
        }
    }

    /// `conn`, a transaction begun on it, as this store's; a write's commit records the
    /// position of caller `position`.
    fn opened(&self, conn: Pooled, position: Option<i64>) -> Open {
        Open {
            conn: Some(conn),
            failed: false,
            workspace: self.workspace,
            touched: Vec::new(),
            created: Vec::new(),
            refresher: self.db.refresher.clone(),
            position,
        }
    }

    /// A connection with a transaction begun on it (and, for a writer, the workspace's
    /// writer lock held). Nothing of the caller's has run yet, so a connection that turns
    /// out to be dead is replaced and the start retried once.
    fn begin(&self, write: bool) -> StoreResult<Open> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let mut conn = self.db.checkout()?;
            // A request that waited for its thread waits for locks only what is left of
            // the lock timeout (in the same round trip as BEGIN).
            let budget = reach::lock_budget(LOCK_TIMEOUT)
                .map(|left| format!("SET LOCAL lock_timeout = {}; ", left.as_millis()))
                .unwrap_or_default();
            let started = if write {
                // Workspace ids beyond 31 bits share a lock with another workspace:
                // harmless, they only queue together. Both numbers are ours, so they are
                // written into the text: BEGIN and the lock are one round trip.
                let key = (self.workspace & 0x7fff_ffff) as i32;
                conn.client.batch_execute(&format!(
                    "BEGIN ISOLATION LEVEL READ COMMITTED, READ WRITE; {budget}\
                     SELECT pg_advisory_xact_lock({WRITER_LOCK_CLASS}, {key})"
                ))
            } else if budget.is_empty() {
                conn.client
                    .batch_execute("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            } else {
                conn.client.batch_execute(&format!(
                    "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY; {budget}"
                ))
            };
            match started {
                Ok(()) => {
                    let position = (write && self.db.replicas.is_some())
                        .then(replicas::caller)
                        .flatten();
                    return Ok(self.opened(conn, position));
                }
                Err(err) if conn.client.is_closed() && attempt < 2 => {
                    tracing::warn!(error = %err, "database connection lost; reconnecting");
                    continue;
                }
                Err(err) => {
                    // Leave the connection clean for its next user.
                    let _ = conn.client.batch_execute("ROLLBACK");
                    return Err(db(err));
                }
            }
        }
    }

    /// A standby that may answer a read of the caller this thread or task works for
    /// ([`replicas`]); `None`: the primary answers (no standbys, no caller, none in use, or
    /// none has replayed the caller's last write).
    fn standby_for_read(&self) -> Option<Arc<Replica>> {
        let replicas = self.db.replicas.as_ref()?;
        let key = replicas::caller()?;
        if !replicas.any_in_use() {
            return None;
        }
        let needed = self.db.position(key).ok()?;
        replicas.choose(needed)
    }

    /// `f` in a read transaction on `replica`: `Some` with its answer (a domain error
    /// included), `None` when the standby failed it (the primary then answers).
    fn read_on<R>(
        &self,
        replica: &Replica,
        f: &impl Fn(&mut dyn StoreTx) -> Result<R, ToolError>,
    ) -> Option<Result<R, ToolError>> {
        let replicas = self.db.replicas.as_ref()?;
        let Some(mut conn) = replica.checkout() else {
            replicas.failed(replica, "no_connection");
            return None;
        };
        if let Err(err) = conn
            .client
            .batch_execute("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        {
            tracing::debug!(error = %err, "a standby did not begin a read");
            replicas.failed(replica, "begin_failed");
            return None;
        }
        let mut open = self.opened(conn, None);
        let (result, broken) = {
            let conn = open.conn.as_mut()?;
            let mut tx = Tx::new(conn, self.workspace);
            let result = f(&mut tx);
            let broken = tx.failed || tx.closed();
            open.touched = std::mem::take(&mut tx.touched);
            (result, broken)
        };
        match result {
            Err(_) if broken => {
                open.rollback();
                replicas.failed(replica, "read_failed");
                None
            }
            answer => {
                open.end_read();
                Replicas::used(replica);
                Some(answer)
            }
        }
    }

    /// A read: on a standby when one may answer it, else (or when it failed there) on the
    /// primary.
    fn run_read<R>(
        &mut self,
        f: impl Fn(&mut dyn StoreTx) -> Result<R, ToolError>,
    ) -> Result<R, ToolError> {
        if let Some(replica) = self.standby_for_read()
            && let Some(answer) = self.read_on(&replica, &f)
        {
            return answer;
        }
        self.run(false, f)
    }

    fn run<R>(
        &mut self,
        write: bool,
        f: impl FnOnce(&mut dyn StoreTx) -> Result<R, ToolError>,
    ) -> Result<R, ToolError> {
        if write && matches!(self.hold.lock().as_deref(), Ok(Hold::Held(_))) {
            // Its writer lock is held by the pending transaction: waiting would deadlock.
            return Err(StoreError::Database(
                "a second write while the first one's commit is held".into(),
            )
            .into());
        }
        let mut open = self.begin(write)?;
        let result = {
            let Some(conn) = open.conn.as_mut() else {
                return Err(StoreError::Database("no connection".into()).into());
            };
            let mut tx = Tx::new(conn, self.workspace);
            let result = f(&mut tx);
            open.failed = tx.failed;
            open.touched = tx.touched;
            open.created = tx.created;
            result
        };
        match result {
            Ok(value) if write => {
                if let Ok(mut hold) = self.hold.lock()
                    && matches!(*hold, Hold::Armed)
                {
                    *hold = Hold::Held(Box::new(open));
                    return Ok(value);
                }
                open.commit()?;
                Ok(value)
            }
            Ok(value) => {
                open.end_read();
                Ok(value)
            }
            Err(err) => {
                open.rollback();
                Err(err)
            }
        }
    }
}

/// A connection inside a transaction; rolled back if dropped unfinished (an early return
/// or a panic in the caller's code), so no connection goes back to the pool mid-transaction.
struct Open {
    conn: Option<Pooled>,
    /// A statement failed: PostgreSQL aborted the transaction, and COMMIT would silently
    /// roll it back.
    failed: bool,
    workspace: i64,
    /// The tickets a write touched (their versions are bumped as it commits), or whose kept
    /// contexts a read found stale (refreshed after it).
    touched: Vec<i64>,
    /// The tickets the write created: their versions need no bump (no context can have been
    /// computed before they exist; the first one is computed at version 0).
    created: Vec<i64>,
    refresher: Arc<Refresher>,
    /// The caller whose position a write records once committed, when standbys take reads.
    position: Option<i64>,
}

impl Open {
    fn commit(mut self) -> StoreResult<()> {
        let Some(mut conn) = self.conn.take() else {
            return Err(StoreError::Database("no connection".into()));
        };
        if self.failed {
            let _ = conn.client.batch_execute("ROLLBACK");
            return Err(StoreError::Database(
                "a statement of the transaction failed; nothing was written".into(),
            ));
        }
        // The touched tickets' context versions are bumped in the round trip of the
        // COMMIT, which leaves their kept contexts unused until a read asks for them anew.
        self.touched.sort_unstable();
        self.touched.dedup();
        let bumped: Vec<i64> = self
            .touched
            .iter()
            .copied()
            .filter(|id| !self.created.contains(id))
            .collect();
        let sql = if bumped.is_empty() {
            "COMMIT".to_string()
        } else {
            format!("{}; COMMIT", contexts::bump_sql(self.workspace, &bumped))
        };
        // A write its request gave up on is rolled back, never committed late.
        if let Err(err) = reach::committing() {
            let _ = conn.client.batch_execute("ROLLBACK");
            return Err(err);
        }
        if let Err(err) = conn.client.batch_execute(&sql) {
            // A bump that failed left the transaction aborted, its COMMIT unsent.
            let _ = conn.client.batch_execute("ROLLBACK");
            return Err(crate::store::db(err));
        }
        // Where the caller's write ended, for reads from standbys: after the commit, so the
        // position is past it. A failure here does not undo the write (it is committed):
        // it is logged, and the caller's reads may meanwhile find a standby that has not
        // replayed it.
        if let Some(key) = self.position {
            let recorded = conn.client.batch_execute(&format!(
                "BEGIN; SET LOCAL synchronous_commit = off; \
                 INSERT INTO read_positions (token_id, lsn) VALUES ({key}, pg_current_wal_insert_lsn()) \
                 ON CONFLICT (token_id) DO UPDATE SET lsn = greatest(read_positions.lsn, EXCLUDED.lsn), at = now(); \
                 COMMIT"
            ));
            if let Err(err) = recorded {
                let _ = conn.client.batch_execute("ROLLBACK");
                tracing::warn!(error = %err, "could not record a write's position for reads from standbys");
            }
        }
        // Their contexts are computed now, off the request, so that the reads that follow
        // a write (a bulk import read at once) find them kept.
        self.refresher.ask(self.workspace, &self.touched);
        Ok(())
    }

    /// End a read transaction; ask for the contexts it found stale.
    fn end_read(mut self) {
        if let Some(mut conn) = self.conn.take() {
            let _ = conn.client.batch_execute("ROLLBACK");
        }
        self.refresher.ask(self.workspace, &self.touched);
    }

    fn rollback(mut self) {
        if let Some(mut conn) = self.conn.take() {
            let _ = conn.client.batch_execute("ROLLBACK");
        }
    }
}

impl Drop for Open {
    fn drop(&mut self) {
        if let Some(mut conn) = self.conn.take() {
            let _ = conn.client.batch_execute("ROLLBACK");
        }
    }
}

impl Store for PgStore {
    fn read<R>(
        &mut self,
        f: impl Fn(&mut dyn StoreTx) -> Result<R, ToolError>,
    ) -> Result<R, ToolError> {
        self.run_read(f)
    }

    fn write<R>(
        &mut self,
        f: impl FnOnce(&mut dyn StoreTx) -> Result<R, ToolError>,
    ) -> Result<R, ToolError> {
        self.run(true, f)
    }

    /// Each ticket in one statement, with its kept context ([`whole`]); a ticket whose
    /// context is not kept at its version is read part by part in a read transaction, and
    /// its context refreshed soon after.
    fn whole_tickets(&mut self, lookups: &[TicketLookup]) -> WholeTickets {
        whole::read(self, lookups)
    }

    /// One statement ([`search::search`]), planned for its workspace and words (a custom
    /// plan: how many match decides how to find them) with sorting disabled: its parts read
    /// the workspace's newest tickets in index order and stop early, which PostgreSQL,
    /// without statistics, may replace with reading all of them and sorting. Without JIT:
    /// before PostgreSQL 18 a disabled sort still in the plan (the page's own order) costs
    /// 10^10, past `jit_above_cost`, and compiling the statement took 1.5–2 s a search
    /// (found by `jility_core::suite`: 4 ms without).
    fn search(
        &mut self,
        terms: &SearchTerms,
        filter: &Filter,
        offset: usize,
        limit: usize,
    ) -> Result<SearchPage, ToolError> {
        Ok(self.outside(|tx| {
            tx.client
                .batch_execute(
                    "BEGIN READ ONLY; SET LOCAL enable_sort = off; SET LOCAL jit = off; \
                     SET LOCAL plan_cache_mode = force_custom_plan",
                )
                .map_err(db)?;
            let found = search::search(tx, terms, filter, offset, limit);
            let ended = tx.client.batch_execute("ROLLBACK").map_err(db);
            let found = found?;
            ended.map(|()| found)
        })?)
    }
}
