//! Connections: the pool of blocking clients with their prepared statements, the async
//! readers and the context refresher beside it ([`PgDatabase`]), workspaces, migrations.

use super::*;

/// A connection of the pool and the statements prepared on it.
pub(super) struct PgConnection {
    pub(super) client: Client,
    pub(super) statements: HashMap<String, Statement>,
}

/// Opens the pool's connections, and records whether the database could be reached.
pub(super) struct Manager {
    pub(super) config: Config,
    pub(super) health: Health,
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

/// The application name of the connections whole-ticket reads are batched on
/// ([`super::whole`]) in `pg_stat_activity`, when the database URL names none.
pub const READS_APPLICATION: &str = "jility reads";

pub(super) type Pool = r2d2::Pool<Manager>;
pub(super) type Pooled = r2d2::PooledConnection<Manager>;

/// `config` with the server setting `setting` (`name=value`) for each of its sessions.
fn with_option(mut config: Config, setting: &str) -> Config {
    let options = format!("{} -c {setting}", config.get_options().unwrap_or_default());
    config.options(options.trim());
    config
}

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
    pub(super) pool: Pool,
    /// How to connect, for connections outside the pool ([`PgDatabase::dedicated`]).
    pub(super) config: Config,
    /// Whether the database can be reached, shared with [`PgDatabase::counters`].
    pub(super) health: Health,
    /// Async connections for whole-ticket reads ([`super::whole`]).
    pub(super) reader: Arc<Reader>,
    /// Refreshes the kept contexts of the tickets writes touched ([`contexts`]).
    pub(super) refresher: Arc<Refresher>,
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
        // Locks wait `LOCK_TIMEOUT`; a statement runs `STATEMENT_TIMEOUT` at most, so no
        // runaway statement holds a connection (and a thread) for ever (migrations and the
        // context refresher lift it for their own statements).
        let timeout = format!(
            "-c lock_timeout={} -c statement_timeout={}",
            LOCK_TIMEOUT.as_millis(),
            STATEMENT_TIMEOUT.as_millis()
        );
        let options = match config.get_options() {
            Some(existing) if !existing.trim().is_empty() => format!("{existing} {timeout}"),
            _ => timeout,
        };
        config.options(&options);
        // Named in `pg_stat_activity`: "jility", its async reads "jility reads" (unless the
        // URL names the application).
        let named = config.get_application_name().is_some();
        if !named {
            config.application_name("jility");
        }
        reach::bound(&mut config);
        let mut reads = config.clone();
        if !named {
            reads.application_name(READS_APPLICATION);
        }
        // Their statements read by index whatever the values; a batch's plan made for its
        // array's length each time cost more than the reads (PostgreSQL keeps planning
        // anew when a plan for the values looks cheaper than the generic one).
        let options = format!(
            "{} -c plan_cache_mode=force_generic_plan -c enable_seqscan=off -c jit=off",
            reads.get_options().unwrap_or_default()
        );
        reads.options(options.trim());
        let reader = Arc::new(Reader::new(reads));
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
        drop(conn);
        // The request path's statements are written so that the plan meant is the only
        // sensible one whatever the statistics (none yet after a bulk import, or tenants of
        // very different sizes; tested in `tests/jility/plans.rs`), and are planned once
        // per connection for every workspace (a generic plan): a plan made for one
        // workspace's values from skewed statistics walked the whole table's newest rows
        // looking for that workspace's. Requests never read a whole table: every statement
        // names its workspace and has an index to read it by, so a full scan, which
        // PostgreSQL may find cheaper while a table is tiny or unanalysed, is left to it
        // only where no index applies. Search plans for its values in its own transaction
        // (`PgStore::search`). No JIT: a disabled plan node costs 10^10, past
        // `jit_above_cost`, and compiling a statement costs far more than running it (a
        // search took 1.5–2 s instead of 4 ms).
        let config = [
            "enable_seqscan=off",
            "jit=off",
            "plan_cache_mode=force_generic_plan",
        ]
        .into_iter()
        .fold(config, with_option);
        let pool = pool(
            max_connections,
            Manager {
                config: config.clone(),
                health: health.clone(),
            },
        );
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
    /// Work its request abandoned takes none ([`reach::Fate`]), and none is handed out while
    /// the database does not answer ([`reach::Health::unresponsive`]).
    pub(super) fn checkout(&self) -> StoreResult<Pooled> {
        reach::check_abandoned()?;
        if self.health.unresponsive() {
            return Err(StoreError::Unresponsive { commit_sent: false });
        }
        let deadline = std::time::Instant::now() + reach::CHECKOUT_TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match self.pool.get_timeout(reach::CHECKOUT_SLICE.min(left)) {
                Ok(conn) => return Ok(conn),
                Err(err) if self.health.down() || self.health.unresponsive() || left.is_zero() => {
                    return Err(self.health.no_connection(&err, self.pool.max_size()));
                }
                Err(_) => reach::check_abandoned()?,
            }
        }
    }

    /// Whether the database can be reached and answers.
    pub fn health(&self) -> &Health {
        &self.health
    }

    /// Start watching whether the database answers ([`reach`]): a thread probing it on a
    /// connection of its own until this database's last handle is dropped. For a server;
    /// a command that runs a few statements has no use for it.
    pub fn watch(&self) {
        let weak = Arc::downgrade(&self.0);
        let config = self.config.clone();
        let health = self.health.clone();
        let spawned = std::thread::Builder::new()
            .name("jility db watch".into())
            .spawn(move || probe_until_dropped(&weak, &config, &health));
        if let Err(err) = spawned {
            tracing::warn!(error = %err, "cannot start watching the database");
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

/// The watch thread's loop ([`PgDatabase::watch`]): `SELECT 1` every
/// [`reach::PROBE_INTERVAL`], each probe (and each attempt to reconnect) marked in flight in
/// `health` while it waits, until `database` is gone.
fn probe_until_dropped(database: &std::sync::Weak<Connections>, config: &Config, health: &Health) {
    let mut client: Option<Client> = None;
    while database.strong_count() > 0 {
        health.probe_sent();
        let answered = match client.as_mut() {
            Some(c) => c.simple_query("SELECT 1").map(|_| ()),
            None => config.connect(NoTls).map(|c| {
                client = Some(c);
            }),
        };
        health.probe_done();
        if let Err(err) = answered {
            if client.is_none() {
                health.record(&Err(&err));
            }
            tracing::debug!(error = %err, "the database watch's probe failed");
            client = None;
        }
        std::thread::sleep(reach::PROBE_INTERVAL);
    }
}

/// A pool of up to `max_size` connections opened by `manager`, none kept idle, whose
/// background attempts to connect retry every [`reach::CHECKOUT_TIMEOUT`]`/2` at most.
pub(super) fn pool(max_size: u32, manager: Manager) -> Pool {
    r2d2::Pool::builder()
        .max_size(max_size.max(1))
        .min_idle(Some(0))
        .test_on_check_out(false)
        .connection_timeout(reach::CHECKOUT_TIMEOUT)
        // Not a line per failed attempt: [`Health`] logs when the database goes and returns.
        .error_handler(Box::new(r2d2::NopErrorHandler))
        .build_unchecked(manager)
}

pub(super) fn workspace_row(row: &Row) -> StoreResult<Workspace> {
    Ok(Workspace {
        id: row.try_get(0).map_err(crate::store::db)?,
        name: row.try_get(1).map_err(crate::store::db)?,
        created_at: row.try_get(2).map_err(crate::store::db)?,
    })
}

pub(super) fn schema_version(client: &mut Client) -> StoreResult<u32> {
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
pub(super) fn migrate(client: &mut Client) -> StoreResult<u32> {
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
    // Another process applying the migrations holds the lock for as long as they take: a
    // start waits for it longer than a request waits for a writer.
    tx.batch_execute(&format!(
        "SET LOCAL lock_timeout = {}; SET LOCAL statement_timeout = 0",
        MIGRATION_LOCK_TIMEOUT.as_millis()
    ))
    .map_err(crate::store::db)?;
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
