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
//! project's counter inside that transaction. Waits are bounded by `lock_timeout` (30 s,
//! like SQLite's busy timeout); a timeout, a serialization failure or a deadlock is
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

use mcp_common::ToolError;
use postgres::error::SqlState;
use postgres::types::ToSql;
use postgres::{Client, Config, NoTls, Row, Statement};

mod contexts;
mod prefetch;
mod search;

use contexts::Refresher;
pub use prefetch::read_prefetched;
use prefetch::{Lookup, Prefetch, Reader};

use crate::reach::{self, Health};
use jility_core::model::{Change, Comment, CommitLink, Status, TicketRef, TicketSummary};
use jility_core::store::{
    COUNT_CAP, ListFilter, ListPage, NewChange, NewTicket, Project, SearchPage, SearchTerms, Store,
    StoreError, StoreResult, StoreTx, TicketRow, TicketUpdate,
};

/// The schema, one migration per version; `jility_schema_migrations` records which ran.
pub const MIGRATIONS: &[&str] = &[
    include_str!("../pg_migrations/0001_initial.sql"),
    include_str!("../pg_migrations/0002_tokens.sql"),
    include_str!("../pg_migrations/0003_rate_limits.sql"),
    include_str!("../pg_migrations/0004_server_secrets.sql"),
    include_str!("../pg_migrations/0005_audit.sql"),
    include_str!("../pg_migrations/0006_ticket_lookups.sql"),
    include_str!("../pg_migrations/0007_unlogged_rate_limits.sql"),
    include_str!("../pg_migrations/0008_search_table.sql"),
    include_str!("../pg_migrations/0009_idempotency.sql"),
    include_str!("../pg_migrations/0010_sliding_rate_limits.sql"),
    include_str!("../pg_migrations/0011_accounts.sql"),
    include_str!("../pg_migrations/0012_oauth.sql"),
    include_str!("../pg_migrations/0013_rate_leases.sql"),
    include_str!("../pg_migrations/0014_search_rank.sql"),
    include_str!("../pg_migrations/0015_ticket_contexts.sql"),
    include_str!("../pg_migrations/0016_context_versions.sql"),
];

/// How long a statement waits for a lock (another writer of the workspace, a migration)
/// before the transaction fails as busy.
const LOCK_TIMEOUT: Duration = Duration::from_secs(30);

/// Default number of connections a [`PgDatabase`] opens at most.
pub const DEFAULT_POOL_SIZE: u32 = 16;

/// Most prepared statements a connection keeps (listing filters make a few shapes each).
const MAX_STATEMENTS: usize = 256;

/// Advisory lock keys: one bigint for migrations; (class, workspace) pairs for writers.
/// PostgreSQL keeps the one-key and two-key forms apart, so they never collide.
const MIGRATION_LOCK: i64 = 0x6a69_6c69_7479; // "jility"
const WRITER_LOCK_CLASS: i32 = 0x006a_696c;

/// A driver error as the domain's [`StoreError`]: a database that cannot be reached is
/// [`StoreError::Unavailable`] ([`crate::reach`]); serialization failures, deadlocks, lock
/// and statement timeouts, too many connections are [`StoreError::Busy`].
pub(crate) fn db(err: postgres::Error) -> StoreError {
    {
        let busy = [
            SqlState::T_R_SERIALIZATION_FAILURE,
            SqlState::T_R_DEADLOCK_DETECTED,
            SqlState::LOCK_NOT_AVAILABLE,
            SqlState::QUERY_CANCELED,
            SqlState::TOO_MANY_CONNECTIONS,
        ];
        if err.code().is_some_and(|code| busy.contains(code)) {
            return StoreError::Busy;
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

/// A connection of the pool and the statements prepared on it.
struct PgConnection {
    client: Client,
    statements: HashMap<String, Statement>,
}

/// Opens the pool's connections, and records whether the database could be reached.
struct Manager {
    config: Config,
    health: Health,
}

impl r2d2::ManageConnection for Manager {
    type Connection = PgConnection;
    type Error = postgres::Error;

    fn connect(&self) -> Result<PgConnection, postgres::Error> {
        let client = self.config.connect(NoTls);
        self.health.record(&client.as_ref().map(|_| ()));
        Ok(PgConnection {
            client: client?,
            statements: HashMap::new(),
        })
    }

    fn is_valid(&self, conn: &mut PgConnection) -> Result<(), postgres::Error> {
        conn.client.batch_execute("")
    }

    fn has_broken(&self, conn: &mut PgConnection) -> bool {
        conn.client.is_closed()
    }
}

type Pool = r2d2::Pool<Manager>;
type Pooled = r2d2::PooledConnection<Manager>;

/// A tenant of the database.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Workspace {
    pub id: i64,
    pub name: String,
    pub created_at: String,
}

/// A PostgreSQL database of many workspaces: a pool of connections, shared by every clone
/// (one handle: every request clones the server's handles, which hold one each).
#[derive(Clone)]
pub struct PgDatabase(Arc<Connections>);

impl std::ops::Deref for PgDatabase {
    type Target = Connections;

    fn deref(&self) -> &Connections {
        &self.0
    }
}

/// The parts of a [`PgDatabase`].
pub struct Connections {
    pool: Pool,
    /// How to connect, for connections outside the pool ([`PgDatabase::dedicated`]).
    config: Config,
    /// Whether the database can be reached, shared with [`PgDatabase::counters`].
    health: Health,
    /// Async connections for whole-ticket reads ([`read_prefetched`]).
    reader: Arc<Reader>,
    /// Refreshes the kept contexts of the tickets writes touched ([`contexts`]).
    refresher: Arc<Refresher>,
}

impl PgDatabase {
    /// Connect to `url` (`postgres://user@host:port/db`, no TLS), bring the schema up to
    /// date, and keep a pool of up to [`DEFAULT_POOL_SIZE`] connections.
    pub fn connect(url: &str) -> StoreResult<Self> {
        Self::connect_with(url, DEFAULT_POOL_SIZE)
    }

    /// [`Self::connect`] with a pool of up to `max_connections` connections.
    pub fn connect_with(url: &str, max_connections: u32) -> StoreResult<Self> {
        let mut config: tokio_postgres::Config = url
            .parse()
            .map_err(|e| StoreError::Database(format!("invalid database URL: {e}")))?;
        let timeout = format!("-c lock_timeout={}", LOCK_TIMEOUT.as_millis());
        let options = match config.get_options() {
            Some(existing) if !existing.trim().is_empty() => format!("{existing} {timeout}"),
            _ => timeout,
        };
        config.options(&options);
        if config.get_application_name().is_none() {
            config.application_name("jility");
        }
        reach::bound(&mut config);
        let reader = Arc::new(Reader::new(config.clone()));
        let config = Config::from(config);
        let health = Health::default();
        // Connect once directly: a wrong URL or a refused login fails now with its own
        // message (the pool would retry until its timeout), and the migrations run on it.
        let first = Manager {
            config: config.clone(),
            health: health.clone(),
        };
        let mut conn = r2d2::ManageConnection::connect(&first).map_err(crate::store::db)?;
        migrate(&mut conn.client)?;
        let pool = pool(max_connections, first);
        let refresher = Arc::new(Refresher::start(pool.clone()));
        Ok(Self(Arc::new(Connections {
            pool,
            config,
            health,
            reader,
            refresher,
        })))
    }

    /// A connection of the pool, within the checkout timeout ([`crate::reach`]).
    /// Waits in slices: the pool does not wake its waiters when an attempt to connect
    /// fails, so each slice asks whether the database went down meanwhile.
    fn checkout(&self) -> StoreResult<Pooled> {
        let deadline = std::time::Instant::now() + reach::CHECKOUT_TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match self.pool.get_timeout(reach::CHECKOUT_SLICE.min(left)) {
                Ok(conn) => return Ok(conn),
                Err(err) if self.health.down() || left.is_zero() => {
                    return Err(self.health.no_connection(&err));
                }
                Err(_) => continue,
            }
        }
    }

    /// A second pool on the same database whose commits do not wait for the disk
    /// (`synchronous_commit = off`): for counters that may lose their last fraction of a
    /// second in a crash (rate-limit windows), never for tickets, tokens or the audit log.
    /// Saves a WAL flush per request.
    pub fn counters(&self) -> Self {
        let mut config = Config::clone(&self.config);
        let options = format!(
            "{} -c synchronous_commit=off",
            config.get_options().unwrap_or_default()
        );
        config.options(options.trim());
        let pool = pool(
            self.pool.max_size(),
            Manager {
                config: config.clone(),
                health: self.health.clone(),
            },
        );
        Self(Arc::new(Connections {
            pool,
            config,
            health: self.health.clone(),
            reader: self.reader.clone(),
            refresher: self.refresher.clone(),
        }))
    }

    /// A connection of its own, outside the pool: for a session that waits on the server
    /// for long (`LISTEN`, [`crate::events`]) and must not hold a pooled one.
    pub fn dedicated(&self) -> StoreResult<Client> {
        let client = self.config.connect(NoTls);
        self.health.record(&client.as_ref().map(|_| ()));
        client.map_err(crate::store::db)
    }

    /// Run `f` on a connection of the pool, outside any transaction (`f` may begin one;
    /// a `postgres::Transaction` dropped unfinished rolls back). For modules that keep
    /// tables of their own beside the store's, such as [`crate::auth`]'s tokens.
    pub fn with_client<R, E: From<StoreError>>(
        &self,
        f: impl FnOnce(&mut Client) -> Result<R, E>,
    ) -> Result<R, E> {
        let mut conn = self.checkout()?;
        f(&mut conn.client)
    }

    /// Run `f` with the statement `sql` prepared on a connection of the pool, outside any
    /// transaction: prepared once per connection and kept (like the store's own), so a
    /// statement run on every request (the rate limit's) costs one round trip, not two.
    pub fn with_prepared<R, E: From<StoreError>>(
        &self,
        sql: &str,
        f: impl FnOnce(&mut Client, &Statement) -> Result<R, E>,
    ) -> Result<R, E> {
        let mut conn = self.checkout()?;
        let PgConnection { client, statements } = &mut *conn;
        let statement = match statements.get(sql) {
            Some(statement) => statement.clone(),
            None => {
                let statement = client.prepare(sql).map_err(crate::store::db)?;
                if statements.len() >= MAX_STATEMENTS {
                    statements.clear();
                }
                statements.insert(sql.to_string(), statement.clone());
                statement
            }
        };
        f(client, &statement)
    }

    /// The 32-byte secret `name` shared by every process on this database: the one stored,
    /// or `fresh` stored now when there is none yet (two processes racing agree on the first).
    pub fn shared_secret(&self, name: &str, fresh: [u8; 32]) -> StoreResult<[u8; 32]> {
        let mut conn = self.checkout()?;
        let row = conn
            .client
            .query_one(
                "WITH put AS (INSERT INTO server_secrets (name, secret) VALUES ($1, $2) \
             ON CONFLICT (name) DO NOTHING RETURNING secret) \
             SELECT secret FROM put UNION ALL \
             SELECT secret FROM server_secrets WHERE name = $1 LIMIT 1",
                &[&name, &fresh.as_slice()],
            )
            .map_err(crate::store::db)?;
        let secret: Vec<u8> = row.try_get(0).map_err(crate::store::db)?;
        secret
            .try_into()
            .map_err(|_| StoreError::Database(format!("the server secret {name} is damaged")))
    }

    /// Wait until the kept ticket contexts that writes and reads asked to refresh so far
    /// are refreshed, at most `timeout`; whether they are. Reads never need this (a context
    /// not refreshed yet is not used); tests and benchmarks that look at the kept rows do.
    pub fn settle_contexts(&self, timeout: Duration) -> bool {
        self.refresher.settle(timeout)
    }

    /// The schema version of the database.
    pub fn version(&self) -> StoreResult<u32> {
        let mut conn = self.checkout()?;
        schema_version(&mut conn.client)
    }

    /// Create the workspace `name`; a name already taken is an error.
    pub fn create_workspace(&self, name: &str) -> StoreResult<Workspace> {
        let name = name.trim();
        if name.is_empty() {
            return Err(StoreError::Database(
                "a workspace needs a non-empty name".into(),
            ));
        }
        let at = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
        let mut conn = self.checkout()?;
        let row = conn
            .client
            .query_one(
                "INSERT INTO workspaces (name, created_at) VALUES ($1, $2) RETURNING id",
                &[&name, &at],
            )
            .map_err(crate::store::db)?;
        Ok(Workspace {
            id: row.try_get(0).map_err(crate::store::db)?,
            name: name.to_string(),
            created_at: at,
        })
    }

    /// The workspace named `name`.
    pub fn workspace_by_name(&self, name: &str) -> StoreResult<Option<Workspace>> {
        let mut conn = self.checkout()?;
        conn.client
            .query_opt(
                "SELECT id, name, created_at FROM workspaces WHERE name = $1",
                &[&name.trim()],
            )
            .map_err(crate::store::db)?
            .map(|row| workspace_row(&row))
            .transpose()
    }

    /// The workspace with this id.
    pub fn workspace(&self, id: i64) -> StoreResult<Option<Workspace>> {
        let mut conn = self.checkout()?;
        conn.client
            .query_opt(
                "SELECT id, name, created_at FROM workspaces WHERE id = $1",
                &[&id],
            )
            .map_err(crate::store::db)?
            .map(|row| workspace_row(&row))
            .transpose()
    }

    /// Every workspace, oldest first.
    pub fn workspaces(&self) -> StoreResult<Vec<Workspace>> {
        let mut conn = self.checkout()?;
        conn.client
            .query(
                "SELECT id, name, created_at FROM workspaces ORDER BY id",
                &[],
            )
            .map_err(crate::store::db)?
            .iter()
            .map(workspace_row)
            .collect()
    }
}

/// A pool of up to `max_size` connections opened by `manager`, none kept idle, whose
/// background attempts to connect retry every [`reach::CHECKOUT_TIMEOUT`]`/2` at most.
fn pool(max_size: u32, manager: Manager) -> Pool {
    r2d2::Pool::builder()
        .max_size(max_size.max(1))
        .min_idle(Some(0))
        .test_on_check_out(false)
        .connection_timeout(reach::CHECKOUT_TIMEOUT)
        // Not a line per failed attempt: [`Health`] logs when the database goes and returns.
        .error_handler(Box::new(r2d2::NopErrorHandler))
        .build_unchecked(manager)
}

fn workspace_row(row: &Row) -> StoreResult<Workspace> {
    Ok(Workspace {
        id: row.try_get(0).map_err(crate::store::db)?,
        name: row.try_get(1).map_err(crate::store::db)?,
        created_at: row.try_get(2).map_err(crate::store::db)?,
    })
}

fn schema_version(client: &mut Client) -> StoreResult<u32> {
    let exists: bool = client
        .query_one(
            "SELECT to_regclass('jility_schema_migrations') IS NOT NULL",
            &[],
        )
        .map_err(crate::store::db)?
        .try_get(0)
        .map_err(crate::store::db)?;
    if !exists {
        return Ok(0);
    }
    let version: i32 = client
        .query_one(
            "SELECT coalesce(max(version), 0) FROM jility_schema_migrations",
            &[],
        )
        .map_err(crate::store::db)?
        .try_get(0)
        .map_err(crate::store::db)?;
    Ok(u32::try_from(version).unwrap_or(0))
}

/// Apply the migrations the database lacks, all in one transaction under an advisory
/// lock: a second process starting at the same moment waits, then finds nothing to do.
/// Returns the version the database had before.
fn migrate(client: &mut Client) -> StoreResult<u32> {
    let known = MIGRATIONS.len() as u32;
    // Fast path without the lock: up to date (or too new) is read, not written.
    let found = schema_version(client)?;
    if found > known {
        return Err(StoreError::TooNew { found, known });
    }
    if found == known {
        return Ok(found);
    }
    let mut tx = client.transaction().map_err(crate::store::db)?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .map_err(crate::store::db)?;
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS jility_schema_migrations (
             version    INTEGER PRIMARY KEY,
             applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
         )",
    )
    .map_err(crate::store::db)?;
    let version: i32 = tx
        .query_one(
            "SELECT coalesce(max(version), 0) FROM jility_schema_migrations",
            &[],
        )
        .map_err(crate::store::db)?
        .try_get(0)
        .map_err(crate::store::db)?;
    let before = u32::try_from(version).unwrap_or(0);
    if before > known {
        tx.rollback().map_err(crate::store::db)?;
        return Err(StoreError::TooNew {
            found: before,
            known,
        });
    }
    for (index, sql) in MIGRATIONS.iter().enumerate().skip(before as usize) {
        let version = i32::try_from(index + 1).unwrap_or(i32::MAX);
        tx.batch_execute(sql).map_err(crate::store::db)?;
        tx.execute(
            "INSERT INTO jility_schema_migrations (version) VALUES ($1)",
            &[&version],
        )
        .map_err(crate::store::db)?;
        tracing::info!(version, "applied PostgreSQL schema migration");
    }
    tx.commit().map_err(crate::store::db)?;
    Ok(before)
}

/// The store of one workspace: every transaction it runs sees and changes that workspace
/// only. Cheap to clone (a handle on the pool); a clone starts with no held write
/// ([`PgStore::hold_next_write`]).
pub struct PgStore {
    db: PgDatabase,
    workspace: i64,
    /// The commit of this handle's next write, when held (an idempotent request).
    hold: Arc<Mutex<Hold>>,
    /// Whether this handle's reads run with a connection ([`read_prefetched`]).
    prefetch: Arc<Mutex<Prefetch>>,
}

impl Clone for PgStore {
    fn clone(&self) -> Self {
        Self {
            db: self.db.clone(),
            workspace: self.workspace,
            hold: Arc::default(),
            prefetch: Arc::default(),
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
                prefetch: Arc::default(),
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

    /// Whether this handle runs without a connection now (a prefetched read's runs): then
    /// anything but a read of one statement ends the attempt.
    fn offline(&self) -> bool {
        let Ok(mut state) = self.prefetch.lock() else {
            return true;
        };
        if matches!(*state, Prefetch::Off) {
            return false;
        }
        *state = Prefetch::Missed;
        true
    }

    /// A read of one statement during a prefetched read ([`read_prefetched`]): `f` run
    /// without a connection, to note its statement or to answer from its row. `None` when
    /// this handle reads with a connection.
    fn read_offline<R>(
        &self,
        f: &impl Fn(&mut dyn StoreTx) -> Result<R, ToolError>,
    ) -> Option<Result<R, ToolError>> {
        let mut state = self.prefetch.lock().ok()?;
        let link = match std::mem::take(&mut *state) {
            Prefetch::Off => return None,
            Prefetch::Armed => Link::Plan(None),
            Prefetch::Replay(row) => Link::Replay(Some(row)),
            Prefetch::Planned(_) | Prefetch::Done | Prefetch::Missed => {
                *state = Prefetch::Missed;
                return Some(Err(offline().into()));
            }
        };
        let mut tx = Tx::new(link, self.workspace, true, Single::Unused);
        let result = f(&mut tx);
        *state = match (tx.single, tx.link) {
            (Single::Exceeded, _) => Prefetch::Missed,
            (_, Link::Plan(Some(lookup))) => Prefetch::Planned(lookup),
            // Answered without a statement (a reference that is none), or from its row.
            (Single::Unused, Link::Plan(None)) | (_, Link::Replay(None)) => Prefetch::Done,
            _ => Prefetch::Missed,
        };
        Some(match *state {
            Prefetch::Done => result,
            _ => Err(offline().into()),
        })
    }

    /// Roll back the held write, if any, and end the hold.
    pub fn release_held(&self) {
        let held = self.hold.lock().map(|mut hold| std::mem::take(&mut *hold));
        if let Ok(Hold::Held(open)) = held {
            open.rollback();
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
            let started = if write {
                // Workspace ids beyond 31 bits share a lock with another workspace:
                // harmless, they only queue together. Both numbers are ours, so they are
                // written into the text: BEGIN and the lock are one round trip.
                let key = (self.workspace & 0x7fff_ffff) as i32;
                conn.client.batch_execute(&format!(
                    "BEGIN ISOLATION LEVEL READ COMMITTED, READ WRITE; \
                     SELECT pg_advisory_xact_lock({WRITER_LOCK_CLASS}, {key})"
                ))
            } else {
                conn.client
                    .batch_execute("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            };
            match started {
                Ok(()) => {
                    return Ok(Open {
                        conn: Some(conn),
                        failed: false,
                        workspace: self.workspace,
                        touched: Vec::new(),
                        refresher: self.db.refresher.clone(),
                    });
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

    fn run<R>(
        &mut self,
        write: bool,
        f: impl FnOnce(&mut dyn StoreTx) -> Result<R, ToolError>,
    ) -> Result<R, ToolError> {
        if self.offline() {
            return Err(offline().into());
        }
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
            let PgConnection { client, statements } = &mut **conn;
            let link = Link::Live { client, statements };
            let mut tx = Tx::new(link, self.workspace, !write, Single::InTransaction);
            let result = f(&mut tx);
            open.failed = tx.failed;
            open.touched = tx.touched;
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
    /// The tickets a write touched (their versions are bumped as it commits, and their
    /// contexts refreshed after), or whose kept contexts a read found stale.
    touched: Vec<i64>,
    refresher: Arc<Refresher>,
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
        // COMMIT; their contexts are refreshed after it, off the writer lock.
        let sql = if self.touched.is_empty() {
            "COMMIT".to_string()
        } else {
            self.touched.sort_unstable();
            self.touched.dedup();
            format!(
                "{}; COMMIT",
                contexts::bump_sql(self.workspace, &self.touched)
            )
        };
        if let Err(err) = conn.client.batch_execute(&sql) {
            // A bump that failed left the transaction aborted, its COMMIT unsent.
            let _ = conn.client.batch_execute("ROLLBACK");
            return Err(crate::store::db(err));
        }
        drop(conn);
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
        f: impl FnOnce(&mut dyn StoreTx) -> Result<R, ToolError>,
    ) -> Result<R, ToolError> {
        self.run(false, f)
    }

    fn write<R>(
        &mut self,
        f: impl FnOnce(&mut dyn StoreTx) -> Result<R, ToolError>,
    ) -> Result<R, ToolError> {
        self.run(true, f)
    }

    /// `f` with no transaction around it (no `BEGIN`, no `ROLLBACK`: one round trip for a
    /// ticket read whole) as long as it runs one statement, which sees one snapshot on its
    /// own; when it asks for a second, it is stopped there and run again in a read
    /// transaction.
    fn read_single<R>(
        &mut self,
        f: impl Fn(&mut dyn StoreTx) -> Result<R, ToolError>,
    ) -> Result<R, ToolError> {
        if let Some(outcome) = self.read_offline(&f) {
            return outcome;
        }
        let mut attempt = 0;
        loop {
            attempt += 1;
            let mut conn = self.db.checkout()?;
            let PgConnection { client, statements } = &mut *conn;
            let link = Link::Live { client, statements };
            let mut tx = Tx::new(link, self.workspace, true, Single::Unused);
            let result = f(&mut tx);
            let (single, closed, stale) = (tx.single, tx.closed(), tx.touched);
            // The connection goes back to the pool before any rerun takes one: a read never
            // holds two.
            drop(conn);
            self.db.refresher.ask(self.workspace, &stale);
            match single {
                Single::Exceeded => return self.run(false, f),
                // A connection the server dropped before the statement was answered:
                // nothing was read, so the read starts again once on a fresh one.
                _ if result.is_err() && closed && attempt < 2 => {
                    tracing::warn!("database connection lost; reconnecting");
                    continue;
                }
                _ => return result,
            }
        }
    }
}

type Param = Box<dyn ToSql + Sync>;

struct Tx<'a> {
    link: Link<'a>,
    /// The workspace: `$1` of every statement.
    ws: i64,
    failed: bool,
    /// A read transaction (one snapshot): what it fetched cannot change under it.
    read_only: bool,
    /// In a read transaction, the context of the ticket it looked up by number or uuid,
    /// fetched in the same statement as the ticket ([`Tx::ticket_in_context`]), so that
    /// reading a whole ticket is one round trip instead of a dozen.
    context: Option<Context>,
    /// Outside a transaction ([`Store::read_single`]): whether its one statement ran.
    single: Single,
    /// The tickets this write changed what a whole-ticket read shows of, or whose kept
    /// contexts this read found stale ([`Open::touched`]).
    touched: Vec<i64>,
}

/// What a [`Tx`] runs its statements on.
enum Link<'a> {
    /// A connection, and the statements prepared on it.
    Live {
        client: &'a mut Client,
        statements: &'a mut HashMap<String, Statement>,
    },
    /// None: a prefetched read's first run notes its one statement here ([`prefetch`]).
    Plan(Option<Lookup>),
    /// None: a prefetched read's second run takes its one statement's row (`Some(None)`:
    /// the statement found no ticket).
    Replay(Option<Option<Row>>),
}

/// What a statement asked of a [`Tx`] without a connection fails with (the read then runs
/// on one).
fn offline() -> StoreError {
    StoreError::Database("a prefetched read asked for another statement".into())
}

/// A read outside a transaction may run one statement ([`Store::read_single`]).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Single {
    /// Inside a transaction: any number of statements.
    InTransaction,
    Unused,
    Used,
    /// A second statement was asked for: the read must run again in a transaction.
    Exceeded,
}

/// What a read needs beside a ticket's row to show it whole: its assignees, labels,
/// newest comments and changes, commits, dependencies and the neighbours it names.
struct Context {
    id: i64,
    assignees: Vec<String>,
    labels: Vec<String>,
    comment_count: i64,
    dependency_ids: Vec<i64>,
    dependent_ids: Vec<i64>,
    /// The newest comments, newest first: at most [`PREFETCH_COMMENTS`].
    comments: Vec<Comment>,
    commits: Vec<CommitLink>,
    /// The newest changes, newest first: at most [`PREFETCH_CHANGES`].
    changes: Vec<Change>,
    /// Parent, epic, dependencies and dependents by id.
    refs: HashMap<i64, TicketRef>,
}

/// How many of a ticket's newest comments and changes a whole-ticket read fetches with it
/// (what `get_ticket` shows; the `LIMIT`s of `jility_ticket_contexts`, migration 15); a
/// read asking for more queries them.
const PREFETCH_COMMENTS: usize = 50;
const PREFETCH_CHANGES: usize = 20;

// The parts of a ticket's context one by one, for a write's transaction (which reads what
// it wrote, not the kept context): each as `jility_ticket_contexts` computes it.

/// A ticket's assignees, in the order `assignees` gives them.
const ASSIGNEES_SQL: &str = "SELECT assignee FROM ticket_assignees \
     WHERE workspace_id = $1 AND ticket_id = $2 \
     ORDER BY assigned_at COLLATE \"C\", assignee COLLATE \"C\"";
const LABELS_SQL: &str = "SELECT label FROM ticket_labels \
     WHERE workspace_id = $1 AND ticket_id = $2 ORDER BY label COLLATE \"C\"";
const COMMENT_COUNT_SQL: &str =
    "SELECT count(*) FROM comments WHERE workspace_id = $1 AND ticket_id = $2";
const DEPENDENCY_IDS_SQL: &str = "SELECT d.depends_on_id FROM dependencies d \
     JOIN tickets o ON o.workspace_id = d.workspace_id AND o.id = d.depends_on_id \
     WHERE d.workspace_id = $1 AND d.ticket_id = $2 AND o.deleted_at IS NULL \
     ORDER BY o.project_id, o.number";
const DEPENDENT_IDS_SQL: &str = "SELECT d.ticket_id FROM dependencies d \
     JOIN tickets o ON o.workspace_id = d.workspace_id AND o.id = d.ticket_id \
     WHERE d.workspace_id = $1 AND d.depends_on_id = $2 AND o.deleted_at IS NULL \
     ORDER BY o.project_id, o.number";

impl<'a> Tx<'a> {
    fn new(link: Link<'a>, ws: i64, read_only: bool, single: Single) -> Self {
        Self {
            link,
            ws,
            failed: false,
            read_only,
            context: None,
            single,
            touched: Vec::new(),
        }
    }

    /// Outside a transaction, let one statement run and stop a second
    /// ([`Store::read_single`]).
    fn count_statement(&mut self) -> StoreResult<()> {
        match self.single {
            Single::InTransaction => {}
            Single::Unused => self.single = Single::Used,
            Single::Used | Single::Exceeded => {
                self.single = Single::Exceeded;
                return Err(StoreError::Database(
                    "a second statement outside a transaction".into(),
                ));
            }
        }
        Ok(())
    }

    /// The connection; without one, the read must run again on one.
    fn client(&mut self) -> StoreResult<&mut Client> {
        match &mut self.link {
            Link::Live { client, .. } => Ok(client),
            Link::Plan(_) | Link::Replay(_) => {
                self.single = Single::Exceeded;
                Err(offline())
            }
        }
    }

    /// Whether the connection was closed under the read.
    fn closed(&self) -> bool {
        matches!(&self.link, Link::Live { client, .. } if client.is_closed())
    }

    fn statement(&mut self, sql: &str) -> StoreResult<Statement> {
        self.count_statement()?;
        let Link::Live { client, statements } = &mut self.link else {
            self.single = Single::Exceeded;
            return Err(offline());
        };
        if let Some(statement) = statements.get(sql) {
            return Ok(statement.clone());
        }
        let statement = match client.prepare(sql) {
            Ok(statement) => statement,
            Err(err) => {
                self.failed = true;
                return Err(crate::store::db(err));
            }
        };
        if statements.len() >= MAX_STATEMENTS {
            statements.clear();
        }
        statements.insert(sql.to_string(), statement.clone());
        Ok(statement)
    }

    fn query(&mut self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> StoreResult<Vec<Row>> {
        let statement = self.statement(sql)?;
        let rows = self.client()?.query(&statement, params);
        rows.inspect_err(|_| self.failed = true)
            .map_err(crate::store::db)
    }

    fn query_opt(&mut self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> StoreResult<Option<Row>> {
        let statement = self.statement(sql)?;
        let row = self.client()?.query_opt(&statement, params);
        row.inspect_err(|_| self.failed = true)
            .map_err(crate::store::db)
    }

    fn query_one(&mut self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> StoreResult<Row> {
        self.query_opt(sql, params)?
            .ok_or_else(|| StoreError::Database("the query returned no row".into()))
    }

    /// `sql` sent unprepared (an unnamed statement: parsed, planned with these values and
    /// run in one round trip), for a statement whose best plan depends on its values.
    fn query_typed(
        &mut self,
        sql: &str,
        params: &[(&(dyn ToSql + Sync), postgres::types::Type)],
    ) -> StoreResult<Vec<Row>> {
        self.count_statement()?;
        let rows = self.client()?.query_typed(sql, params);
        rows.inspect_err(|_| self.failed = true)
            .map_err(crate::store::db)
    }

    fn execute(&mut self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> StoreResult<u64> {
        let statement = self.statement(sql)?;
        let changed = self.client()?.execute(&statement, params);
        changed
            .inspect_err(|_| self.failed = true)
            .map_err(crate::store::db)
    }

    /// The ticket `lookup` finds; in a read with its whole [`Context`] fetched in the same
    /// statement and kept for the calls that follow. Without a connection, the statement
    /// is noted ([`Link::Plan`]) or its row taken ([`Link::Replay`]).
    fn ticket_in_context(&mut self, lookup: Lookup) -> StoreResult<Option<TicketRow>> {
        let row = match &mut self.link {
            Link::Live { .. } => {
                let ws = self.ws;
                let params = lookup.params(&ws);
                if self.read_only {
                    self.query_opt(whole_ticket_sql(&lookup), &params)?
                } else {
                    let sql = format!(
                        "SELECT {TICKET_COLUMNS} FROM tickets t \
                         JOIN projects p ON p.workspace_id = t.workspace_id \
                         AND p.id = t.project_id WHERE t.workspace_id = $1 AND {}",
                        lookup.condition()
                    );
                    self.query_opt(&sql, &params)?
                }
            }
            Link::Plan(noted) => {
                if noted.is_none() && self.single == Single::Unused {
                    *noted = Some(lookup);
                }
                self.count_statement()?;
                return Err(offline());
            }
            Link::Replay(row) => {
                let row = row.take();
                self.count_statement()?;
                row.ok_or_else(offline)?
            }
        };
        let Some(row) = row else {
            return Ok(None);
        };
        let ticket = ticket_row(&row)?;
        if !self.read_only {
            return Ok(Some(ticket));
        }
        if row
            .try_get::<_, Option<i64>>(TICKET_COLUMN_COUNT)
            .map_err(crate::store::db)?
            .is_none()
        {
            // No kept context at the ticket's version: its parts are read one by one, and
            // a refresh asked for.
            self.touched.push(ticket.id);
            return Ok(Some(ticket));
        }
        let at = TICKET_COLUMN_COUNT + 1;
        let refs: Vec<(i64, String, String, String, bool)> = json_column(&row, at + 8)?;
        // The kept lists name deleted neighbours too: only live ones are shown.
        let live = |ids: Vec<i64>| -> Vec<i64> {
            ids.into_iter()
                .filter(|id| refs.iter().any(|r| r.0 == *id && r.4))
                .collect()
        };
        let dependency_ids = live(row.try_get(at + 3).map_err(crate::store::db)?);
        let dependent_ids = live(row.try_get(at + 4).map_err(crate::store::db)?);
        let mut context = Context {
            id: ticket.id,
            assignees: row.try_get(at).map_err(crate::store::db)?,
            labels: row.try_get(at + 1).map_err(crate::store::db)?,
            comment_count: row.try_get(at + 2).map_err(crate::store::db)?,
            dependency_ids,
            dependent_ids,
            comments: json_column(&row, at + 5)?,
            commits: json_column(&row, at + 6)?,
            changes: json_column(&row, at + 7)?,
            refs: HashMap::with_capacity(refs.len()),
        };
        for (id, number, title, status, _) in refs {
            let status = status_of(&status)?;
            context.refs.insert(
                id,
                TicketRef {
                    number,
                    title,
                    status,
                },
            );
        }
        self.context = Some(context);
        Ok(Some(ticket))
    }

    /// The fetched context of ticket `id`, if this read transaction has it.
    fn cached(&self, id: i64) -> Option<&Context> {
        self.context
            .as_ref()
            .filter(|c| self.read_only && c.id == id)
    }

    fn ids(&mut self, sql: &str, id: i64) -> StoreResult<Vec<i64>> {
        let ws = self.ws;
        self.query(sql, &[&ws, &id])?
            .iter()
            .map(|r| r.try_get(0).map_err(crate::store::db))
            .collect()
    }

    fn strings(&mut self, sql: &str, id: i64) -> StoreResult<Vec<String>> {
        let ws = self.ws;
        self.query(sql, &[&ws, &id])?
            .iter()
            .map(|r| r.try_get(0).map_err(crate::store::db))
            .collect()
    }

    fn ticket(
        &mut self,
        condition: &str,
        value: &(dyn ToSql + Sync),
    ) -> StoreResult<Option<TicketRow>> {
        let sql = format!(
            "SELECT {TICKET_COLUMNS} FROM tickets t \
             JOIN projects p ON p.workspace_id = t.workspace_id AND p.id = t.project_id \
             WHERE t.workspace_id = $1 AND {condition}"
        );
        let ws = self.ws;
        self.query_opt(&sql, &[&ws, value])?
            .map(|r| ticket_row(&r))
            .transpose()
    }

    /// A write that must touch a ticket of this workspace.
    fn expect_ticket(&mut self, changed: u64, id: i64) -> StoreResult<()> {
        if changed == 0 {
            self.failed = true;
            return Err(StoreError::Database(format!(
                "there is no ticket {id} in this workspace"
            )));
        }
        Ok(())
    }
}

const TICKET_COLUMNS: &str = "t.id, t.uuid, p.key, t.number, t.title, t.description, t.status, \
     t.story_points, t.parent_id, t.epic_id, t.created_by, t.created_at, t.updated_by, \
     t.updated_at, t.deleted_at";
const TICKET_COLUMN_COUNT: usize = 15;

/// The columns of a [`Context`] of the ticket `t`, after its [`TICKET_COLUMNS`]: its kept
/// context `c` ([`CONTEXT_JOIN`]; all NULL when it has none), and the neighbours it names
/// by id, read live (number, title, status, whether live) as JSON, when it names any.
const CONTEXT_COLUMNS: &str = "c.ticket_id, c.assignees, c.labels, c.comment_count, \
     c.dependency_ids, c.dependent_ids, c.comments, c.commits, c.changes, \
     CASE WHEN t.parent_id IS NULL AND t.epic_id IS NULL \
        AND cardinality(c.dependency_ids) = 0 AND cardinality(c.dependent_ids) = 0 THEN NULL \
     ELSE (SELECT json_agg(json_build_array(r.id, rp.key || '-' || r.number, r.title, \
        r.status, r.deleted_at IS NULL))::text FROM tickets r JOIN projects rp \
        ON rp.workspace_id = r.workspace_id AND rp.id = r.project_id \
        WHERE r.workspace_id = $1 \
        AND r.id = ANY(ARRAY[t.parent_id, t.epic_id] || c.dependency_ids || c.dependent_ids)) \
     END";

/// The kept context of `t` when it is current ([`contexts`]: refreshed after every write
/// that touches the ticket). A ticket without one is read part by part.
const CONTEXT_JOIN: &str = "LEFT JOIN ticket_contexts c ON c.workspace_id = $1 \
     AND c.ticket_id = t.id AND c.version = t.context_version";

/// The statement of a whole-ticket read: the ticket `lookup` finds, with its context.
fn whole_ticket_sql(lookup: &Lookup) -> &'static str {
    static SQL: std::sync::LazyLock<[String; 2]> = std::sync::LazyLock::new(|| {
        let of = |condition: &str| {
            format!(
                "SELECT {TICKET_COLUMNS}, {CONTEXT_COLUMNS} FROM tickets t \
                 JOIN projects p ON p.workspace_id = t.workspace_id AND p.id = t.project_id \
                 {CONTEXT_JOIN} WHERE t.workspace_id = $1 AND {condition}"
            )
        };
        [of(prefetch::BY_UUID), of(prefetch::BY_NUMBER)]
    });
    match lookup {
        Lookup::Uuid(_) => &SQL[0],
        Lookup::Number { .. } => &SQL[1],
    }
}

/// A JSON text column decoded (NULL: the empty value).
fn json_column<T: serde::de::DeserializeOwned + Default>(row: &Row, at: usize) -> StoreResult<T> {
    match row
        .try_get::<_, Option<String>>(at)
        .map_err(crate::store::db)?
    {
        Some(text) => serde_json::from_str(&text)
            .map_err(|e| StoreError::Database(format!("a ticket's context did not decode: {e}"))),
        None => Ok(T::default()),
    }
}

fn status_of(text: &str) -> StoreResult<Status> {
    Status::parse(text).ok_or_else(|| StoreError::Database(format!("unknown status {text:?}")))
}

fn points_of(points: Option<i16>) -> Option<u8> {
    points.and_then(|p| u8::try_from(p).ok())
}

fn ticket_row(row: &Row) -> StoreResult<TicketRow> {
    let status: String = row.try_get(6).map_err(crate::store::db)?;
    Ok(TicketRow {
        id: row.try_get(0).map_err(crate::store::db)?,
        uuid: row.try_get(1).map_err(crate::store::db)?,
        project_key: row.try_get(2).map_err(crate::store::db)?,
        number: row.try_get(3).map_err(crate::store::db)?,
        title: row.try_get(4).map_err(crate::store::db)?,
        description: row.try_get(5).map_err(crate::store::db)?,
        status: status_of(&status)?,
        story_points: points_of(row.try_get(7).map_err(crate::store::db)?),
        parent_id: row.try_get(8).map_err(crate::store::db)?,
        epic_id: row.try_get(9).map_err(crate::store::db)?,
        created_by: row.try_get(10).map_err(crate::store::db)?,
        created_at: row.try_get(11).map_err(crate::store::db)?,
        updated_by: row.try_get(12).map_err(crate::store::db)?,
        updated_at: row.try_get(13).map_err(crate::store::db)?,
        deleted_at: row.try_get(14).map_err(crate::store::db)?,
    })
}

/// Columns of a summary of `t`: number, title, status, points, assignees and labels (in
/// byte order, as local mode sorts them), updated_at.
const SUMMARY_COLUMNS: &str = "p.key || '-' || t.number, t.title, t.status, t.story_points, \
     ARRAY(SELECT a.assignee FROM ticket_assignees a \
           WHERE a.workspace_id = t.workspace_id AND a.ticket_id = t.id \
           ORDER BY a.assignee COLLATE \"C\"), \
     ARRAY(SELECT l.label FROM ticket_labels l \
           WHERE l.workspace_id = t.workspace_id AND l.ticket_id = t.id \
           ORDER BY l.label COLLATE \"C\"), \
     t.updated_at";

fn summary_row(row: &Row, offset: usize) -> StoreResult<TicketSummary> {
    let status: String = row.try_get(offset + 2).map_err(crate::store::db)?;
    Ok(TicketSummary {
        number: row.try_get(offset).map_err(crate::store::db)?,
        title: row.try_get(offset + 1).map_err(crate::store::db)?,
        status: status_of(&status)?,
        story_points: points_of(row.try_get(offset + 3).map_err(crate::store::db)?),
        assignees: row.try_get(offset + 4).map_err(crate::store::db)?,
        labels: row.try_get(offset + 5).map_err(crate::store::db)?,
        updated_at: row.try_get(offset + 6).map_err(crate::store::db)?,
    })
}

const CHANGE_COLUMNS: &str =
    "change_type, old_value, new_value, detail, message, changed_by, changed_at";

fn change_row(row: &Row) -> StoreResult<Change> {
    Ok(Change {
        change_type: row.try_get(0).map_err(crate::store::db)?,
        old_value: row.try_get(1).map_err(crate::store::db)?,
        new_value: row.try_get(2).map_err(crate::store::db)?,
        detail: row.try_get(3).map_err(crate::store::db)?,
        message: row.try_get(4).map_err(crate::store::db)?,
        changed_by: row.try_get(5).map_err(crate::store::db)?,
        changed_at: row.try_get(6).map_err(crate::store::db)?,
    })
}

fn project_row(row: &Row) -> StoreResult<Project> {
    Ok(Project {
        id: row.try_get(0).map_err(crate::store::db)?,
        key: row.try_get(1).map_err(crate::store::db)?,
        name: row.try_get(2).map_err(crate::store::db)?,
    })
}

fn count(value: i64) -> usize {
    usize::try_from(value).unwrap_or(0)
}

fn refs(values: &[Param]) -> Vec<&(dyn ToSql + Sync)> {
    values
        .iter()
        .map(|v| v.as_ref() as &(dyn ToSql + Sync))
        .collect()
}

impl StoreTx for Tx<'_> {
    fn default_project(&mut self) -> StoreResult<Project> {
        let ws = self.ws;
        match self.query_opt(
            "SELECT id, key, name FROM projects WHERE workspace_id = $1 ORDER BY id LIMIT 1",
            &[&ws],
        )? {
            Some(row) => project_row(&row),
            None => Err(StoreError::NoProject),
        }
    }

    fn projects(&mut self) -> StoreResult<Vec<Project>> {
        let ws = self.ws;
        self.query(
            "SELECT id, key, name FROM projects WHERE workspace_id = $1 ORDER BY id",
            &[&ws],
        )?
        .iter()
        .map(project_row)
        .collect()
    }

    fn create_project(&mut self, key: &str, name: &str, at: &str) -> StoreResult<Project> {
        let ws = self.ws;
        let row = self.query_one(
            "INSERT INTO projects (workspace_id, key, name, created_at) VALUES ($1, $2, $3, $4) \
             RETURNING id",
            &[&ws, &key, &name, &at],
        )?;
        Ok(Project {
            id: row.try_get(0).map_err(crate::store::db)?,
            key: key.to_string(),
            name: name.to_string(),
        })
    }

    fn rekey_project(&mut self, project_id: i64, key: &str) -> StoreResult<bool> {
        let ws = self.ws;
        let changed = self.execute(
            "UPDATE projects SET key = $3 WHERE workspace_id = $1 AND id = $2 AND next_number = 1",
            &[&ws, &project_id, &key],
        )?;
        Ok(changed > 0)
    }

    fn allocate_number(&mut self, project_id: i64) -> StoreResult<i64> {
        // The row lock this UPDATE takes is held to the end of the transaction: a
        // concurrent writer (any process) waits for it, then reads the committed counter.
        let ws = self.ws;
        match self.query_opt(
            "UPDATE projects SET next_number = next_number + 1 \
             WHERE workspace_id = $1 AND id = $2 RETURNING next_number - 1",
            &[&ws, &project_id],
        )? {
            Some(row) => Ok(row.try_get(0).map_err(crate::store::db)?),
            None => {
                self.failed = true;
                Err(StoreError::Database(format!(
                    "there is no project {project_id} in this workspace"
                )))
            }
        }
    }

    fn insert_ticket(&mut self, t: &NewTicket<'_>) -> StoreResult<i64> {
        let ws = self.ws;
        let points = t.story_points.map(i16::from);
        let row = self.query_one(
            "INSERT INTO tickets (workspace_id, uuid, project_id, number, title, description, \
             status, story_points, parent_id, epic_id, created_by, created_at, updated_by, \
             updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $11, $12) \
             RETURNING id",
            &[
                &ws,
                &t.uuid,
                &t.project_id,
                &t.number,
                &t.title,
                &t.description,
                &t.status.as_str(),
                &points,
                &t.parent_id,
                &t.epic_id,
                &t.actor,
                &t.at,
            ],
        )?;
        let id = row.try_get(0).map_err(crate::store::db)?;
        self.touched.push(id);
        Ok(id)
    }

    fn ticket_by_number(
        &mut self,
        project_key: &str,
        number: i64,
    ) -> StoreResult<Option<TicketRow>> {
        self.ticket_in_context(Lookup::Number {
            key: project_key.to_string(),
            number,
        })
    }

    fn ticket_by_uuid(&mut self, uuid: &str) -> StoreResult<Option<TicketRow>> {
        self.ticket_in_context(Lookup::Uuid(uuid.to_string()))
    }

    fn ticket_by_id(&mut self, id: i64) -> StoreResult<Option<TicketRow>> {
        self.ticket("t.id = $2", &id)
    }

    fn ticket_refs(&mut self, ids: &[i64]) -> StoreResult<Vec<Option<TicketRef>>> {
        // A read of a whole ticket names its neighbours: they came with it.
        if self.read_only
            && let Some(context) = &self.context
            && ids.iter().all(|id| context.refs.contains_key(id))
        {
            return Ok(ids.iter().map(|id| context.refs.get(id).cloned()).collect());
        }
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let ws = self.ws;
        let mut found = HashMap::with_capacity(ids.len());
        for row in self.query(
            "SELECT t.id, p.key || '-' || t.number, t.title, t.status FROM tickets t \
             JOIN projects p ON p.workspace_id = t.workspace_id AND p.id = t.project_id \
             WHERE t.workspace_id = $1 AND t.id = ANY($2)",
            &[&ws, &ids],
        )? {
            let status: String = row.try_get(3).map_err(crate::store::db)?;
            found.insert(
                row.try_get::<_, i64>(0).map_err(crate::store::db)?,
                TicketRef {
                    number: row.try_get(1).map_err(crate::store::db)?,
                    title: row.try_get(2).map_err(crate::store::db)?,
                    status: status_of(&status)?,
                },
            );
        }
        Ok(ids.iter().map(|id| found.get(id).cloned()).collect())
    }

    fn update_ticket(
        &mut self,
        id: i64,
        u: &TicketUpdate,
        actor: &str,
        at: &str,
    ) -> StoreResult<()> {
        let mut values: Vec<Param> = vec![
            Box::new(self.ws),
            Box::new(id),
            Box::new(actor.to_string()),
            Box::new(at.to_string()),
        ];
        let mut sets = vec!["updated_by = $3".to_string(), "updated_at = $4".to_string()];
        let mut push = |column: &str, value: Param| {
            values.push(value);
            sets.push(format!("{column} = ${}", values.len()));
        };
        if let Some(title) = &u.title {
            push("title", Box::new(title.clone()));
        }
        if let Some(description) = &u.description {
            push("description", Box::new(description.clone()));
        }
        if let Some(status) = u.status {
            push("status", Box::new(status.as_str()));
        }
        if let Some(points) = u.story_points {
            push("story_points", Box::new(points.map(i16::from)));
        }
        if let Some(parent) = u.parent_id {
            push("parent_id", Box::new(parent));
        }
        if let Some(epic) = u.epic_id {
            push("epic_id", Box::new(epic));
        }
        if u.deleted {
            push("deleted_by", Box::new(actor.to_string()));
            push("deleted_at", Box::new(at.to_string()));
        }
        let sql = format!(
            "UPDATE tickets SET {} WHERE workspace_id = $1 AND id = $2",
            sets.join(", ")
        );
        let changed = self.execute(&sql, &refs(&values))?;
        self.expect_ticket(changed, id)
    }

    fn assignees(&mut self, id: i64) -> StoreResult<Vec<String>> {
        if let Some(context) = self.cached(id) {
            return Ok(context.assignees.clone());
        }
        self.strings(ASSIGNEES_SQL, id)
    }

    fn set_assignees(
        &mut self,
        id: i64,
        assignees: &[String],
        actor: &str,
        at: &str,
    ) -> StoreResult<()> {
        let ws = self.ws;
        self.touched.push(id);
        let current = self.assignees(id)?;
        for gone in current.iter().filter(|a| !assignees.contains(a)) {
            self.execute(
                "DELETE FROM ticket_assignees \
                 WHERE workspace_id = $1 AND ticket_id = $2 AND assignee = $3",
                &[&ws, &id, gone],
            )?;
        }
        for new in assignees.iter().filter(|a| !current.contains(a)) {
            // The composite foreign key refuses a ticket of another workspace.
            self.execute(
                "INSERT INTO ticket_assignees \
                 (workspace_id, ticket_id, assignee, assigned_by, assigned_at) \
                 VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
                &[&ws, &id, new, &actor, &at],
            )?;
        }
        Ok(())
    }

    fn labels(&mut self, id: i64) -> StoreResult<Vec<String>> {
        if let Some(context) = self.cached(id) {
            return Ok(context.labels.clone());
        }
        self.strings(LABELS_SQL, id)
    }

    fn set_labels(&mut self, id: i64, labels: &[String]) -> StoreResult<()> {
        let ws = self.ws;
        self.touched.push(id);
        self.execute(
            "DELETE FROM ticket_labels WHERE workspace_id = $1 AND ticket_id = $2",
            &[&ws, &id],
        )?;
        for label in labels {
            self.execute(
                "INSERT INTO ticket_labels (workspace_id, ticket_id, label) VALUES ($1, $2, $3) \
                 ON CONFLICT DO NOTHING",
                &[&ws, &id, label],
            )?;
        }
        Ok(())
    }

    fn insert_comment(
        &mut self,
        id: i64,
        author: &str,
        content: &str,
        at: &str,
    ) -> StoreResult<Comment> {
        let ws = self.ws;
        self.touched.push(id);
        let uuid = uuid::Uuid::new_v4().to_string();
        self.execute(
            "INSERT INTO comments (workspace_id, uuid, ticket_id, author, content, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6)",
            &[&ws, &uuid, &id, &author, &content, &at],
        )?;
        Ok(Comment {
            id: uuid,
            author: author.to_string(),
            content: content.to_string(),
            created_at: at.to_string(),
        })
    }

    fn comments(&mut self, id: i64, limit: usize) -> StoreResult<(Vec<Comment>, usize)> {
        let ws = self.ws;
        if let Some(context) = self.cached(id)
            && (limit <= PREFETCH_COMMENTS || context.comments.len() < PREFETCH_COMMENTS)
        {
            let mut comments: Vec<Comment> = context.comments.iter().take(limit).cloned().collect();
            comments.reverse();
            return Ok((comments, count(context.comment_count)));
        }
        let total: i64 = self
            .query_one(COMMENT_COUNT_SQL, &[&ws, &id])?
            .try_get(0)
            .map_err(crate::store::db)?;
        let limit = limit as i64;
        let mut comments = self
            .query(
                "SELECT uuid, author, content, created_at FROM comments \
                 WHERE workspace_id = $1 AND ticket_id = $2 ORDER BY id DESC LIMIT $3",
                &[&ws, &id, &limit],
            )?
            .iter()
            .map(|r| {
                Ok(Comment {
                    id: r.try_get(0).map_err(crate::store::db)?,
                    author: r.try_get(1).map_err(crate::store::db)?,
                    content: r.try_get(2).map_err(crate::store::db)?,
                    created_at: r.try_get(3).map_err(crate::store::db)?,
                })
            })
            .collect::<StoreResult<Vec<_>>>()?;
        comments.reverse();
        Ok((comments, count(total)))
    }

    fn add_dependency(&mut self, id: i64, on: i64, actor: &str, at: &str) -> StoreResult<bool> {
        let ws = self.ws;
        self.touched.extend([id, on]);
        // Both ends are checked against the workspace by the composite foreign keys.
        let inserted = self.execute(
            "INSERT INTO dependencies (workspace_id, ticket_id, depends_on_id, created_by, \
             created_at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
            &[&ws, &id, &on, &actor, &at],
        )?;
        Ok(inserted > 0)
    }

    fn remove_dependency(&mut self, id: i64, on: i64) -> StoreResult<bool> {
        let ws = self.ws;
        self.touched.extend([id, on]);
        let removed = self.execute(
            "DELETE FROM dependencies \
             WHERE workspace_id = $1 AND ticket_id = $2 AND depends_on_id = $3",
            &[&ws, &id, &on],
        )?;
        Ok(removed > 0)
    }

    fn dependency_ids(&mut self, id: i64) -> StoreResult<Vec<i64>> {
        if let Some(context) = self.cached(id) {
            return Ok(context.dependency_ids.clone());
        }
        self.ids(DEPENDENCY_IDS_SQL, id)
    }

    fn dependent_ids(&mut self, id: i64) -> StoreResult<Vec<i64>> {
        if let Some(context) = self.cached(id) {
            return Ok(context.dependent_ids.clone());
        }
        self.ids(DEPENDENT_IDS_SQL, id)
    }

    fn link_commit(
        &mut self,
        id: i64,
        hash: &str,
        message: Option<&str>,
        actor: &str,
        at: &str,
    ) -> StoreResult<bool> {
        let ws = self.ws;
        self.touched.push(id);
        let inserted = self.execute(
            "INSERT INTO commit_links (workspace_id, ticket_id, commit_hash, commit_message, \
             linked_by, linked_at) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING",
            &[&ws, &id, &hash, &message, &actor, &at],
        )?;
        Ok(inserted > 0)
    }

    fn commits(&mut self, id: i64) -> StoreResult<Vec<CommitLink>> {
        if let Some(context) = self.cached(id) {
            return Ok(context.commits.clone());
        }
        let ws = self.ws;
        self.query(
            "SELECT commit_hash, commit_message, linked_at, linked_by FROM commit_links \
             WHERE workspace_id = $1 AND ticket_id = $2 ORDER BY id",
            &[&ws, &id],
        )?
        .iter()
        .map(|r| {
            Ok(CommitLink {
                hash: r.try_get(0).map_err(crate::store::db)?,
                message: r.try_get(1).map_err(crate::store::db)?,
                linked_at: r.try_get(2).map_err(crate::store::db)?,
                linked_by: r.try_get(3).map_err(crate::store::db)?,
            })
        })
        .collect()
    }

    fn record_change(&mut self, id: i64, c: &NewChange<'_>) -> StoreResult<()> {
        let ws = self.ws;
        self.touched.push(id);
        self.execute(
            "INSERT INTO ticket_changes (workspace_id, ticket_id, change_type, old_value, \
             new_value, detail, message, changed_by, changed_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
            &[
                &ws,
                &id,
                &c.change_type,
                &c.old_value,
                &c.new_value,
                &c.detail,
                &c.message,
                &c.actor,
                &c.at,
            ],
        )?;
        Ok(())
    }

    fn changes(&mut self, id: i64, limit: usize) -> StoreResult<Vec<Change>> {
        if let Some(context) = self.cached(id)
            && (limit <= PREFETCH_CHANGES || context.changes.len() < PREFETCH_CHANGES)
        {
            return Ok(context.changes.iter().take(limit).cloned().collect());
        }
        let ws = self.ws;
        let limit = limit as i64;
        let sql = format!(
            "SELECT {CHANGE_COLUMNS} FROM ticket_changes \
             WHERE workspace_id = $1 AND ticket_id = $2 ORDER BY id DESC LIMIT $3"
        );
        self.query(&sql, &[&ws, &id, &limit])?
            .iter()
            .map(change_row)
            .collect()
    }

    fn description_versions(&mut self, id: i64) -> StoreResult<Vec<Change>> {
        let ws = self.ws;
        let sql = format!(
            "SELECT {CHANGE_COLUMNS} FROM ticket_changes \
             WHERE workspace_id = $1 AND ticket_id = $2 AND change_type = 'description_changed' \
             ORDER BY id"
        );
        self.query(&sql, &[&ws, &id])?
            .iter()
            .map(change_row)
            .collect()
    }

    fn list(
        &mut self,
        filter: &ListFilter,
        after: Option<i64>,
        limit: usize,
    ) -> StoreResult<ListPage> {
        let mut values: Vec<Param> = vec![Box::new(self.ws)];
        let mut bind = |value: Param| {
            values.push(value);
            format!("${}", values.len())
        };
        let mut conditions = vec![
            "t.workspace_id = $1".to_string(),
            "t.deleted_at IS NULL".to_string(),
        ];
        for label in &filter.labels {
            let mark = bind(Box::new(label.clone()));
            conditions.push(format!(
                "EXISTS (SELECT 1 FROM ticket_labels l WHERE l.workspace_id = $1 \
                 AND l.ticket_id = t.id AND l.label = {mark})"
            ));
        }
        if let Some(assignee) = &filter.assignee {
            let mark = bind(Box::new(assignee.clone()));
            conditions.push(format!(
                "EXISTS (SELECT 1 FROM ticket_assignees a WHERE a.workspace_id = $1 \
                 AND a.ticket_id = t.id AND a.assignee = {mark})"
            ));
        }
        for (column, value) in [("parent_id", filter.parent_id), ("epic_id", filter.epic_id)] {
            let Some(value) = value else { continue };
            let mark = bind(Box::new(value));
            conditions.push(format!("t.{column} = {mark}"));
        }
        if filter.unassigned {
            conditions.push(
                "NOT EXISTS (SELECT 1 FROM ticket_assignees a WHERE a.workspace_id = $1 \
                 AND a.ticket_id = t.id)"
                    .to_string(),
            );
        }
        let statuses: Vec<Status> = if filter.statuses.is_empty() {
            Status::ALL.to_vec()
        } else {
            filter.statuses.clone()
        };
        let status_marks: Vec<String> = statuses
            .iter()
            .map(|s| bind(Box::new(s.as_str())))
            .collect();
        let filter_sql = conditions.join(" AND ");
        let all_statuses = status_marks.join(", ");

        let count_cap = bind(Box::new((COUNT_CAP + 1) as i64));
        let total: i64 = {
            let sql = format!(
                "SELECT count(*) FROM (SELECT 1 FROM tickets t WHERE {filter_sql} \
                 AND t.status IN ({all_statuses}) LIMIT {count_cap}) c"
            );
            self.query_one(&sql, &refs(&values))?
                .try_get(0)
                .map_err(crate::store::db)?
        };
        // The count's cap is not a parameter of the page query.
        values.pop();
        let mut bind = |value: Param| {
            values.push(value);
            format!("${}", values.len())
        };
        let after_sql = after
            .map(|after| format!(" AND t.id < {}", bind(Box::new(after))))
            .unwrap_or_default();
        let page_limit = bind(Box::new((limit + 1) as i64));
        // Newest first. One index range per status (workspace, status, id), each read in
        // ticket order and cut at the page size, then merged: no sort of every match.
        let branches: Vec<String> = status_marks
            .iter()
            .map(|mark| {
                format!(
                    "(SELECT t.id FROM tickets t WHERE {filter_sql} AND t.status = {mark}\
                     {after_sql} ORDER BY t.id DESC LIMIT {page_limit})"
                )
            })
            .collect();
        let sql = format!(
            "SELECT t.id, {SUMMARY_COLUMNS} FROM \
             (SELECT id FROM ({}) ids ORDER BY id DESC LIMIT {page_limit}) page \
             JOIN tickets t ON t.workspace_id = $1 AND t.id = page.id \
             JOIN projects p ON p.workspace_id = t.workspace_id AND p.id = t.project_id \
             ORDER BY t.id DESC",
            branches.join(" UNION ALL ")
        );
        let mut rows = self
            .query(&sql, &refs(&values))?
            .iter()
            .map(|r| {
                Ok((
                    r.try_get::<_, i64>(0).map_err(crate::store::db)?,
                    summary_row(r, 1)?,
                ))
            })
            .collect::<StoreResult<Vec<_>>>()?;
        let next_after = if rows.len() > limit {
            rows.truncate(limit);
            rows.last().map(|(id, _)| *id)
        } else {
            None
        };
        let total = count(total);
        Ok(ListPage {
            items: rows.into_iter().map(|(_, s)| s).collect(),
            total: total.min(COUNT_CAP),
            total_exact: total <= COUNT_CAP,
            next_after,
        })
    }

    fn search(
        &mut self,
        terms: &SearchTerms,
        offset: usize,
        limit: usize,
    ) -> StoreResult<SearchPage> {
        search::search(self, terms, offset, limit)
    }
}
