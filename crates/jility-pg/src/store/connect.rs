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
    /// How many connections the process may open, and for what.
    pub(super) budget: Budget,
    /// What the pool is for, as metrics name it: `requests` or `counters`.
    pub(super) role: &'static str,
    /// The standbys callers' reads may go to (`--read-replica`).
    pub(super) replicas: Option<Arc<Replicas>>,
}

/// The fewest connections `--db-pool-size` takes: the counters' pool, one reader, the watch
/// and the event listener need one each, and the request pool two (a request and the
/// readiness probe, or two requests).
pub const MIN_POOL_SIZE: u32 = 6;

/// How a process's connections (`--db-pool-size`) are shared: two held for as long as the
/// server runs (the watch's probe, [`PgDatabase::watch`], and the event listener,
/// [`crate::events`]); async readers, a fifth up to four ([`Reader`]); the counters' pool
/// ([`PgDatabase::counters`], rate limits, one statement per block of requests), an eighth
/// up to four; the request pool all the others (a request holds one on a blocking thread,
/// and a server runs four such threads per CPU). 20 (the default): 12 for requests, 4
/// readers, 2 for counters, 2 held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    pub pool: u32,
    pub readers: u32,
    pub counters: u32,
}

impl Budget {
    /// Connections held by the watch and the event listener.
    pub const HELD: u32 = 2;

    pub fn of(total: u32) -> Self {
        let readers = (total / 5).clamp(1, super::reader::CONNECTIONS as u32);
        let counters = (total / 8).clamp(1, 4);
        let pool = total.saturating_sub(Self::HELD + readers + counters).max(1);
        Self {
            pool,
            readers,
            counters,
        }
    }

    /// Every connection the process may open.
    pub fn total(&self) -> u32 {
        self.pool + self.readers + self.counters + Self::HELD
    }
}

impl PgDatabase {
    /// Connect to `url` (`postgres://user@host:port/db`, no TLS), bring the schema up to
    /// date, and open up to [`DEFAULT_POOL_SIZE`] connections.
    pub fn connect(url: &str) -> StoreResult<Self> {
        Self::connect_with(url, DEFAULT_POOL_SIZE)
    }

    /// [`Self::connect`], opening up to `max_connections` connections in all (shared as
    /// [`Budget`] says; at least [`MIN_POOL_SIZE`] are needed to keep to it).
    pub fn connect_with(url: &str, max_connections: u32) -> StoreResult<Self> {
        Self::connect_with_standbys(url, max_connections, &[], replicas::DEFAULT_MAX_LAG)
    }

    /// [`Self::connect_with`], with the callers' reads also going to the standbys at
    /// `standbys` while they are at most `max_lag` behind ([`replicas`]); each standby
    /// gets pools of the same sizes as the primary's.
    pub fn connect_with_standbys(
        url: &str,
        max_connections: u32,
        standbys: &[String],
        max_lag: Duration,
    ) -> StoreResult<Self> {
        let budget = Budget::of(max_connections);
        let (base, reads) = session_configs(url)?;
        let reader = Arc::new(Reader::new(reads, budget.readers as usize));
        let health = Health::default();
        // Connect once directly: a wrong URL or a refused login fails now with its own
        // message (the pool would retry until its timeout), and the migrations run on it.
        let first = Manager {
            config: base.clone(),
            health: health.clone(),
        };
        let mut conn = r2d2::ManageConnection::connect(&first).map_err(crate::store::db)?;
        migrate(&mut conn.client)?;
        drop(conn);
        let config = pool_config(base.clone());
        let pool = pool(
            budget.pool,
            Manager {
                config: config.clone(),
                health: health.clone(),
            },
        );
        let replicas = if standbys.is_empty() {
            None
        } else {
            Some(Replicas::new(standbys, max_lag, budget, &base, |url| {
                let (base, reads) = session_configs(url).map_err(|_| {
                    StoreError::Database("a --read-replica URL does not parse".into())
                })?;
                // Nothing is ever written there: said to the standby too.
                let config = with_option(pool_config(base), "default_transaction_read_only=on");
                Ok((config, reads))
            })?)
        };
        let refresher = Arc::new(Refresher::start(pool.clone()));
        Ok(Self(Arc::new(Connections {
            pool,
            config,
            health,
            reader,
            refresher,
            budget,
            role: "requests",
            replicas,
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
            self.failed_checkout("unresponsive");
            return Err(StoreError::Unresponsive { commit_sent: false });
        }
        let started = std::time::Instant::now();
        let deadline = started + reach::CHECKOUT_TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match self.pool.get_timeout(reach::CHECKOUT_SLICE.min(left)) {
                Ok(conn) => {
                    metrics::histogram!(crate::measure::POOL_WAIT_SECONDS, "pool" => self.role)
                        .record(started.elapsed().as_secs_f64());
                    return Ok(conn);
                }
                Err(err)
                    if self.health.down()
                        || self.health.unresponsive()
                        || self.health.full()
                        || left.is_zero() =>
                {
                    let cause = if self.health.down() {
                        "unreachable"
                    } else if self.health.unresponsive() {
                        "unresponsive"
                    } else if self.health.full() {
                        "refused"
                    } else {
                        "exhausted"
                    };
                    self.failed_checkout(cause);
                    return Err(self.health.no_connection(&err, self.pool.max_size()));
                }
                Err(_) => reach::check_abandoned()?,
            }
        }
    }

    fn failed_checkout(&self, cause: &'static str) {
        metrics::counter!(crate::measure::POOL_FAILURES, "pool" => self.role, "cause" => cause)
            .increment(1);
    }

    /// The connections of this handle's pool: (open, idle, most).
    pub fn pool_state(&self) -> (u32, u32, u32) {
        let state = self.pool.state();
        (
            state.connections,
            state.idle_connections,
            self.pool.max_size(),
        )
    }

    /// Where caller `key`'s last write ended in the WAL, if it wrote since positions are
    /// kept; read on the primary.
    pub(super) fn position(&self, key: i64) -> StoreResult<Option<u64>> {
        self.with_prepared(replicas::POSITION_SQL, |client, statement| {
            let row = client
                .query_opt(statement, &[&key])
                .map_err(crate::store::db)?;
            Ok(row
                .and_then(|row| row.try_get::<_, String>(0).ok())
                .and_then(|text| replicas::parse_lsn(&text)))
        })
    }

    /// The standbys' states (`--read-replica`), when there are any.
    pub fn standbys(&self) -> Option<Vec<StandbyState>> {
        self.replicas.as_ref().map(|r| r.states())
    }

    /// The connections of each standby's pool: (standby, open, idle, most).
    pub fn standby_pools(&self) -> Vec<(usize, u32, u32, u32)> {
        self.replicas
            .as_ref()
            .map(|r| r.pool_states())
            .unwrap_or_default()
    }

    /// What this handle's pool is for: `requests`, or `counters` ([`Self::counters`]).
    pub fn role(&self) -> &'static str {
        self.role
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
            self.budget.counters,
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
            budget: self.budget,
            role: "counters",
            replicas: None,
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
        self.with_cached(|client, cache| {
            let statement = cache.get(client, sql)?;
            f(client, &statement)
        })
    }

    /// Run `f` with a connection of the pool and its kept prepared statements, for work
    /// of several statements in a transaction of its own: each statement is prepared once
    /// per connection ([`Prepared::get`]), so it costs one round trip and no planning of
    /// its text again.
    pub fn with_cached<R, E: From<StoreError>>(
        &self,
        f: impl FnOnce(&mut Client, &mut Prepared<'_>) -> Result<R, E>,
    ) -> Result<R, E> {
        let mut conn = self.checkout()?;
        let PgConnection { client, statements } = &mut *conn;
        f(client, &mut Prepared { statements })
    }

    /// The 32-byte secret `name` shared by every process on this database: the one stored,
    /// or `fresh` stored now when there is none yet (two processes racing agree on the first).
    pub fn shared_secret(&self, name: &str, fresh: [u8; 32]) -> StoreResult<[u8; 32]> {
        let mut conn = self.checkout()?;
        // A process whose insert waited for another's, which committed meanwhile, inserts
        // nothing and cannot see the other's row in its statement's snapshot (taken before
        // that commit): the next statement, with a snapshot of its own, sees it.
        let mut row = None;
        for _ in 0..3 {
            row = conn
                .client
                .query_opt(
                    "WITH put AS (INSERT INTO server_secrets (name, secret) VALUES ($1, $2) \
                 ON CONFLICT (name) DO NOTHING RETURNING secret) \
                 SELECT secret FROM put UNION ALL \
                 SELECT secret FROM server_secrets WHERE name = $1 LIMIT 1",
                    &[&name, &fresh.as_slice()],
                )
                .map_err(crate::store::db)?;
            if row.is_some() {
                break;
            }
        }
        let row = row.ok_or_else(|| {
            StoreError::Database(format!(
                "the server secret {name} could not be stored or read"
            ))
        })?;
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

/// The settings of every session on `url`, and of its async readers: timeouts, names in
/// `pg_stat_activity`, bounded waits ([`reach::bound`]).
fn session_configs(url: &str) -> StoreResult<(Config, tokio_postgres::Config)> {
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
    Ok((Config::from(config), reads))
}

/// The settings of a pool's sessions on top of `base`'s.
///
/// The request path's statements are written so that the plan meant is the only sensible
/// one whatever the statistics (none yet after a bulk import, or tenants of very different
/// sizes; tested in `tests/jility/plans.rs`), and are planned once per connection for
/// every workspace (a generic plan): a plan made for one workspace's values from skewed
/// statistics walked the whole table's newest rows looking for that workspace's. Requests
/// never read a whole table: every statement names its workspace and has an index to read
/// it by, so a full scan, which PostgreSQL may find cheaper while a table is tiny or
/// unanalysed, is left to it only where no index applies. Search plans for its values in
/// its own transaction (`PgStore::search`). No JIT: a disabled plan node costs 10^10, past
/// `jit_above_cost`, and compiling a statement costs far more than running it (a search
/// took 1.5–2 s instead of 4 ms).
fn pool_config(base: Config) -> Config {
    [
        "enable_seqscan=off",
        "jit=off",
        "plan_cache_mode=force_generic_plan",
    ]
    .into_iter()
    .fold(base, with_option)
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

/// A connection's kept prepared statements ([`PgDatabase::with_cached`]).
pub struct Prepared<'a> {
    statements: &'a mut HashMap<String, Statement>,
}

impl Prepared<'_> {
    /// `sql` prepared on the connection `client` runs on (a transaction of it), once.
    pub fn get(
        &mut self,
        client: &mut impl postgres::GenericClient,
        sql: &str,
    ) -> StoreResult<Statement> {
        if let Some(statement) = self.statements.get(sql) {
            return Ok(statement.clone());
        }
        let statement = client.prepare(sql).map_err(crate::store::db)?;
        if self.statements.len() >= super::MAX_STATEMENTS {
            self.statements.clear();
        }
        self.statements.insert(sql.to_string(), statement.clone());
        Ok(statement)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_keeps_to_its_total_from_the_least_an_operator_may_give() {
        for total in MIN_POOL_SIZE..200 {
            let budget = Budget::of(total);
            assert!(budget.total() <= total, "{total}: {budget:?}");
            assert!(budget.pool >= 2 && budget.readers >= 1 && budget.counters >= 1);
        }
        assert_eq!(
            Budget::of(DEFAULT_POOL_SIZE),
            Budget {
                pool: 12,
                readers: 4,
                counters: 2
            }
        );
        // Tests and benchmarks ask for a single pooled connection.
        assert_eq!(Budget::of(1).pool, 1);
    }
}
