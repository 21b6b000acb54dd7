//! The embedded store: one SQLite file per project (`.jility/data.db`), WAL mode so readers
//! never wait for writers, a busy timeout so concurrent writers queue instead of failing,
//! and versioned migrations embedded in the binary.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use mcp_common_core::ToolError;
use rusqlite::{Connection, OpenFlags, OptionalExtension, TransactionBehavior, params};

use crate::rows::*;

use jility_core::model::{Change, Comment, CommitLink, Status, TicketSummary};
use jility_core::store::{
    COUNT_CAP, Filter, FoundPage, ListFilter, ListPage, NewChange, NewTicket, Position, Project,
    SearchPage, SearchTerms, Sort, Store, StoreError, StoreResult, StoreTx, TicketRow,
    TicketUpdate,
};

/// The schema, one migration per version; `PRAGMA user_version` records how many ran.
pub const MIGRATIONS: &[&str] = &[
    include_str!("migrations/0001_initial.sql"),
    include_str!("migrations/0002_search.sql"),
    include_str!("migrations/0003_list_indexes.sql"),
    include_str!("migrations/0004_copy_status_on_insert.sql"),
    include_str!("migrations/0005_planning.sql"),
    include_str!("migrations/0006_kept_sprints.sql"),
    include_str!("migrations/0007_views.sql"),
    include_str!("migrations/0008_inbox.sql"),
];

/// How long a writer waits for another process's write lock before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

pub struct SqliteStore {
    conn: Connection,
}

impl SqliteStore {
    /// Open (creating when `create` is set) the database at `path` and bring its schema up
    /// to date. Returns the store and the schema version it had before.
    pub fn open(path: &Path, create: bool) -> StoreResult<(Self, u32)> {
        let mut flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        if create {
            flags |= OpenFlags::SQLITE_OPEN_CREATE;
        }
        let conn = Connection::open_with_flags(path, flags).map_err(db)?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(db)?;
        // Refuse a database from a newer jility before anything writes to it (switching
        // the journal mode is a write).
        let version: u32 = conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .map_err(db)?;
        if version as usize > MIGRATIONS.len() {
            return Err(StoreError::TooNew {
                found: version,
                known: MIGRATIONS.len() as u32,
            });
        }
        // WAL: readers and one writer work at once across processes. NORMAL sync in WAL
        // mode never corrupts the database; a power cut may lose the last commits.
        set_wal(&conn)?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(db)?;
        conn.pragma_update(None, "foreign_keys", "ON").map_err(db)?;
        let mut store = Self { conn };
        let before = store.migrate()?;
        Ok((store, before))
    }

    /// Apply the migrations this database lacks, each in its own write transaction (the
    /// version is re-read under the lock, so two processes never apply one twice).
    fn migrate(&mut self) -> StoreResult<u32> {
        let before = self.version()?;
        loop {
            let tx = self
                .conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(db)?;
            let version: u32 = tx
                .pragma_query_value(None, "user_version", |r| r.get(0))
                .map_err(db)?;
            let Some(sql) = MIGRATIONS.get(version as usize) else {
                tx.commit().map_err(db)?;
                break;
            };
            tx.execute_batch(sql).map_err(db)?;
            tx.pragma_update(None, "user_version", version + 1)
                .map_err(db)?;
            tx.commit().map_err(db)?;
            tracing::info!(version = version + 1, "applied schema migration");
        }
        Ok(before)
    }

    /// Another connection to a database [`Self::open`] already brought up to date: no
    /// migration and no journal-mode switch, so it never waits for the write lock (WAL mode
    /// is a property of the file). A database a newer jility migrated since is refused.
    pub fn connect(path: &Path) -> StoreResult<Self> {
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags).map_err(db)?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(db)?;
        let version: u32 = conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .map_err(db)?;
        if version as usize > MIGRATIONS.len() {
            return Err(StoreError::TooNew {
                found: version,
                known: MIGRATIONS.len() as u32,
            });
        }
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(db)?;
        conn.pragma_update(None, "foreign_keys", "ON").map_err(db)?;
        let mut store = Self { conn };
        if (version as usize) < MIGRATIONS.len() {
            store.migrate()?;
        }
        Ok(store)
    }

    pub fn version(&self) -> StoreResult<u32> {
        self.conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .map_err(db)
    }
}

/// Switch to WAL. SQLite answers `SQLITE_BUSY` at once (without the busy timeout) when
/// another connection is switching a new database at the same moment, so retry until the
/// timeout.
fn set_wal(conn: &Connection) -> StoreResult<()> {
    let deadline = Instant::now() + BUSY_TIMEOUT;
    loop {
        match conn.pragma_update(None, "journal_mode", "WAL") {
            Ok(()) => return Ok(()),
            Err(err) => {
                let err = db(err);
                if !matches!(err, StoreError::Busy) || Instant::now() >= deadline {
                    return Err(err);
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        }
    }
}

impl Store for SqliteStore {
    fn read<R>(
        &mut self,
        f: impl Fn(&mut dyn StoreTx) -> Result<R, ToolError>,
    ) -> Result<R, ToolError> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Deferred)
            .map_err(db)?;
        let mut inner = Tx { tx: &tx };
        let result = f(&mut inner);
        // A read transaction has nothing to keep; rolling back just ends it.
        drop(tx);
        result
    }

    fn write<R>(
        &mut self,
        f: impl FnOnce(&mut dyn StoreTx) -> Result<R, ToolError>,
    ) -> Result<R, ToolError> {
        // IMMEDIATE takes the write lock up front, so the busy timeout applies (a deferred
        // transaction that upgrades later fails at once instead of waiting).
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(db)?;
        let mut inner = Tx { tx: &tx };
        let result = f(&mut inner)?;
        tx.commit().map_err(db)?;
        Ok(result)
    }
}

/// Most idle connections a pool keeps; more are opened while calls overlap, and closed after.
const MAX_IDLE: usize = 8;

/// Connections to one database file, shared by every clone: each transaction takes an idle
/// connection (or opens one), runs on it and gives it back. The pool's lock is held only to
/// take or return a connection, never while SQLite works or waits, so a transaction stuck
/// on another process's write lock holds up nothing but itself: reads proceed on other
/// connections (WAL), other writes queue in SQLite's busy handler.
#[derive(Clone)]
pub struct SqlitePool {
    inner: Arc<PoolInner>,
}

struct PoolInner {
    path: PathBuf,
    idle: Mutex<Vec<SqliteStore>>,
}

impl SqlitePool {
    /// Open (creating when `create` is set) and migrate the database at `path`, as
    /// [`SqliteStore::open`]; returns the pool and the schema version the file had before.
    pub fn open(path: &Path, create: bool) -> StoreResult<(Self, u32)> {
        let (first, before) = SqliteStore::open(path, create)?;
        let pool = Self {
            inner: Arc::new(PoolInner {
                path: path.to_path_buf(),
                idle: Mutex::new(vec![first]),
            }),
        };
        Ok((pool, before))
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    fn take(&self) -> StoreResult<SqliteStore> {
        let idle = self
            .inner
            .idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        match idle {
            Some(store) => Ok(store),
            None => SqliteStore::connect(&self.inner.path),
        }
    }

    fn give_back(&self, store: SqliteStore) {
        let mut idle = self
            .inner
            .idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if idle.len() < MAX_IDLE {
            idle.push(store);
        }
    }
}

impl Store for SqlitePool {
    fn read<R>(
        &mut self,
        f: impl Fn(&mut dyn StoreTx) -> Result<R, ToolError>,
    ) -> Result<R, ToolError> {
        let mut store = self.take()?;
        let result = store.read(f);
        self.give_back(store);
        result
    }

    fn write<R>(
        &mut self,
        f: impl FnOnce(&mut dyn StoreTx) -> Result<R, ToolError>,
    ) -> Result<R, ToolError> {
        let mut store = self.take()?;
        let result = store.write(f);
        self.give_back(store);
        result
    }
}

impl StoreTx for Tx<'_> {
    fn default_project(&mut self) -> StoreResult<Project> {
        self.tx
            .query_row(
                "SELECT id, key, name FROM projects ORDER BY id LIMIT 1",
                [],
                |r| {
                    Ok(Project {
                        id: r.get(0)?,
                        key: r.get(1)?,
                        name: r.get(2)?,
                    })
                },
            )
            .optional()
            .map_err(db)?
            .ok_or(StoreError::NoProject)
    }

    fn projects(&mut self) -> StoreResult<Vec<Project>> {
        let mut stmt = self
            .tx
            .prepare_cached("SELECT id, key, name FROM projects ORDER BY id")
            .map_err(db)?;
        let rows = stmt
            .query_map([], |r| {
                Ok(Project {
                    id: r.get(0)?,
                    key: r.get(1)?,
                    name: r.get(2)?,
                })
            })
            .map_err(db)?;
        rows.collect::<Result<_, _>>().map_err(db)
    }

    fn create_project(&mut self, key: &str, name: &str, at: &str) -> StoreResult<Project> {
        self.tx
            .execute(
                "INSERT INTO projects (key, name, created_at) VALUES (?1, ?2, ?3)",
                params![key, name, at],
            )
            .map_err(db)?;
        Ok(Project {
            id: self.tx.last_insert_rowid(),
            key: key.to_string(),
            name: name.to_string(),
        })
    }

    fn rekey_project(&mut self, project_id: i64, key: &str) -> StoreResult<bool> {
        let changed = self
            .tx
            .execute(
                "UPDATE projects SET key = ?2 WHERE id = ?1 AND next_number = 1",
                params![project_id, key],
            )
            .map_err(db)?;
        Ok(changed > 0)
    }

    fn allocate_number(&mut self, project_id: i64) -> StoreResult<i64> {
        self.tx
            .prepare_cached(
                "UPDATE projects SET next_number = next_number + 1 WHERE id = ?1 \
                 RETURNING next_number - 1",
            )
            .map_err(db)?
            .query_row([project_id], |r| r.get(0))
            .map_err(db)
    }

    fn insert_ticket(&mut self, t: &NewTicket<'_>) -> StoreResult<i64> {
        self.tx
            .prepare_cached(
                "INSERT INTO tickets (uuid, project_id, number, title, description, status, \
                 story_points, parent_id, epic_id, created_by, created_at, updated_by, updated_at, \
                 kind) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?10, ?11, ?12)",
            )
            .map_err(db)?
            .execute(params![
                t.uuid,
                t.project_id,
                t.number,
                t.title,
                t.description,
                t.status.as_str(),
                t.story_points,
                t.parent_id,
                t.epic_id,
                t.actor,
                t.at,
                t.kind.as_str()
            ])
            .map_err(db)?;
        Ok(self.tx.last_insert_rowid())
    }

    fn ticket_by_number(
        &mut self,
        project_key: &str,
        number: i64,
    ) -> StoreResult<Option<TicketRow>> {
        let sql = format!(
            "SELECT {TICKET_COLUMNS} FROM tickets t JOIN projects p ON p.id = t.project_id \
             WHERE p.key = ?1 AND t.number = ?2"
        );
        self.tx
            .prepare_cached(&sql)
            .map_err(db)?
            .query_row(params![project_key, number], ticket_row)
            .optional()
            .map_err(db)
    }

    fn ticket_by_uuid(&mut self, uuid: &str) -> StoreResult<Option<TicketRow>> {
        let sql = format!(
            "SELECT {TICKET_COLUMNS} FROM tickets t JOIN projects p ON p.id = t.project_id \
             WHERE t.uuid = ?1"
        );
        self.tx
            .prepare_cached(&sql)
            .map_err(db)?
            .query_row([uuid], ticket_row)
            .optional()
            .map_err(db)
    }

    fn ticket_by_id(&mut self, id: i64) -> StoreResult<Option<TicketRow>> {
        let sql = format!(
            "SELECT {TICKET_COLUMNS} FROM tickets t JOIN projects p ON p.id = t.project_id \
             WHERE t.id = ?1"
        );
        self.tx
            .prepare_cached(&sql)
            .map_err(db)?
            .query_row([id], ticket_row)
            .optional()
            .map_err(db)
    }

    fn update_ticket(
        &mut self,
        id: i64,
        u: &TicketUpdate,
        actor: &str,
        at: &str,
    ) -> StoreResult<()> {
        let mut sets = vec!["updated_by = ?1", "updated_at = ?2"];
        let mut values: Vec<rusqlite::types::Value> =
            vec![actor.to_string().into(), at.to_string().into()];
        let mut push = |column: &'static str, value: rusqlite::types::Value| {
            values.push(value);
            sets.push(column);
        };
        if let Some(title) = &u.title {
            push("title", title.clone().into());
        }
        if let Some(description) = &u.description {
            push("description", description.clone().into());
        }
        if let Some(status) = u.status {
            push("status", status.as_str().to_string().into());
        }
        if let Some(points) = u.story_points {
            push("story_points", points.map(i64::from).into());
        }
        if let Some(parent) = u.parent_id {
            push("parent_id", parent.into());
        }
        if let Some(epic) = u.epic_id {
            push("epic_id", epic.into());
        }
        if let Some(kind) = u.kind {
            push("kind", kind.as_str().to_string().into());
        }
        if let Some(sprint) = u.sprint_id {
            push("sprint_id", sprint.into());
        }
        if u.deleted {
            push("deleted_by", actor.to_string().into());
            push("deleted_at", at.to_string().into());
        }
        let assignments = sets
            .iter()
            .enumerate()
            .map(|(i, column)| {
                if i < 2 {
                    column.to_string()
                } else {
                    format!("{column} = ?{}", i + 1)
                }
            })
            .collect::<Vec<_>>()
            .join(", ");
        values.push(id.into());
        let sql = format!(
            "UPDATE tickets SET {assignments} WHERE id = ?{}",
            values.len()
        );
        self.tx
            .prepare_cached(&sql)
            .map_err(db)?
            .execute(rusqlite::params_from_iter(values))
            .map_err(db)?;
        Ok(())
    }

    fn assignees(&mut self, id: i64) -> StoreResult<Vec<String>> {
        let mut stmt = self.tx.prepare_cached(
            "SELECT assignee FROM ticket_assignees WHERE ticket_id = ?1 ORDER BY assigned_at, assignee",
        ).map_err(db)?;
        let rows = stmt.query_map([id], |r| r.get(0)).map_err(db)?;
        rows.collect::<Result<_, _>>().map_err(db)
    }

    fn set_assignees(
        &mut self,
        id: i64,
        assignees: &[String],
        actor: &str,
        at: &str,
    ) -> StoreResult<()> {
        let current = self.assignees(id)?;
        for gone in current.iter().filter(|a| !assignees.contains(a)) {
            self.tx
                .prepare_cached(
                    "DELETE FROM ticket_assignees WHERE ticket_id = ?1 AND assignee = ?2",
                )
                .map_err(db)?
                .execute(params![id, gone])
                .map_err(db)?;
        }
        for new in assignees.iter().filter(|a| !current.contains(a)) {
            self.tx
                .prepare_cached(
                    "INSERT OR IGNORE INTO ticket_assignees \
                     (ticket_id, assignee, assigned_by, assigned_at, status, live) \
                     SELECT ?1, ?2, ?3, ?4, status, deleted_at IS NULL FROM tickets WHERE id = ?1",
                )
                .map_err(db)?
                .execute(params![id, new, actor, at])
                .map_err(db)?;
        }
        Ok(())
    }

    fn labels(&mut self, id: i64) -> StoreResult<Vec<String>> {
        let mut stmt = self
            .tx
            .prepare_cached("SELECT label FROM ticket_labels WHERE ticket_id = ?1 ORDER BY label")
            .map_err(db)?;
        let rows = stmt.query_map([id], |r| r.get(0)).map_err(db)?;
        rows.collect::<Result<_, _>>().map_err(db)
    }

    fn set_labels(&mut self, id: i64, labels: &[String]) -> StoreResult<()> {
        self.tx
            .prepare_cached("DELETE FROM ticket_labels WHERE ticket_id = ?1")
            .map_err(db)?
            .execute([id])
            .map_err(db)?;
        for label in labels {
            self.tx
                .prepare_cached(
                    "INSERT OR IGNORE INTO ticket_labels (ticket_id, label, status, live) \
                     SELECT ?1, ?2, status, deleted_at IS NULL FROM tickets WHERE id = ?1",
                )
                .map_err(db)?
                .execute(params![id, label])
                .map_err(db)?;
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
        let uuid = uuid::Uuid::new_v4().to_string();
        self.tx
            .prepare_cached(
                "INSERT INTO comments (uuid, ticket_id, author, content, created_at) \
                 VALUES (?1, ?2, ?3, ?4, ?5)",
            )
            .map_err(db)?
            .execute(params![uuid, id, author, content, at])
            .map_err(db)?;
        Ok(Comment {
            id: uuid,
            author: author.to_string(),
            content: content.to_string(),
            created_at: at.to_string(),
        })
    }

    fn comments(&mut self, id: i64, limit: usize) -> StoreResult<(Vec<Comment>, usize)> {
        let total: i64 = self
            .tx
            .prepare_cached("SELECT count(*) FROM comments WHERE ticket_id = ?1")
            .map_err(db)?
            .query_row([id], |r| r.get(0))
            .map_err(db)?;
        let mut stmt = self
            .tx
            .prepare_cached(
                "SELECT uuid, author, content, created_at FROM comments WHERE ticket_id = ?1 \
             ORDER BY id DESC LIMIT ?2",
            )
            .map_err(db)?;
        let rows = stmt
            .query_map(params![id, limit as i64], |r| {
                Ok(Comment {
                    id: r.get(0)?,
                    author: r.get(1)?,
                    content: r.get(2)?,
                    created_at: r.get(3)?,
                })
            })
            .map_err(db)?;
        let mut comments: Vec<Comment> = rows.collect::<Result<_, _>>().map_err(db)?;
        comments.reverse();
        Ok((comments, usize::try_from(total).unwrap_or(0)))
    }

    fn add_dependency(&mut self, id: i64, on: i64, actor: &str, at: &str) -> StoreResult<bool> {
        let inserted = self
            .tx
            .prepare_cached(
                "INSERT OR IGNORE INTO dependencies (ticket_id, depends_on_id, created_by, created_at) \
                 VALUES (?1, ?2, ?3, ?4)",
            ).map_err(db)?
            .execute(params![id, on, actor, at]).map_err(db)?;
        Ok(inserted > 0)
    }

    fn remove_dependency(&mut self, id: i64, on: i64) -> StoreResult<bool> {
        let removed = self
            .tx
            .prepare_cached("DELETE FROM dependencies WHERE ticket_id = ?1 AND depends_on_id = ?2")
            .map_err(db)?
            .execute(params![id, on])
            .map_err(db)?;
        Ok(removed > 0)
    }

    fn dependency_ids(&mut self, id: i64) -> StoreResult<Vec<i64>> {
        let mut stmt = self.tx.prepare_cached(
            "SELECT d.depends_on_id FROM dependencies d JOIN tickets t ON t.id = d.depends_on_id \
             WHERE d.ticket_id = ?1 AND t.deleted_at IS NULL ORDER BY t.project_id, t.number",
        ).map_err(db)?;
        let rows = stmt.query_map([id], |r| r.get(0)).map_err(db)?;
        rows.collect::<Result<_, _>>().map_err(db)
    }

    fn dependent_ids(&mut self, id: i64) -> StoreResult<Vec<i64>> {
        let mut stmt = self
            .tx
            .prepare_cached(
                "SELECT d.ticket_id FROM dependencies d JOIN tickets t ON t.id = d.ticket_id \
             WHERE d.depends_on_id = ?1 AND t.deleted_at IS NULL ORDER BY t.project_id, t.number",
            )
            .map_err(db)?;
        let rows = stmt.query_map([id], |r| r.get(0)).map_err(db)?;
        rows.collect::<Result<_, _>>().map_err(db)
    }

    fn link_commit(
        &mut self,
        id: i64,
        hash: &str,
        message: Option<&str>,
        actor: &str,
        at: &str,
    ) -> StoreResult<bool> {
        let inserted = self
            .tx
            .prepare_cached(
                "INSERT OR IGNORE INTO commit_links (ticket_id, commit_hash, commit_message, linked_by, linked_at) \
                 VALUES (?1, ?2, ?3, ?4, ?5)",
            ).map_err(db)?
            .execute(params![id, hash, message, actor, at]).map_err(db)?;
        Ok(inserted > 0)
    }

    fn commits(&mut self, id: i64) -> StoreResult<Vec<CommitLink>> {
        let mut stmt = self
            .tx
            .prepare_cached(
                "SELECT commit_hash, commit_message, linked_at, linked_by FROM commit_links \
             WHERE ticket_id = ?1 ORDER BY id",
            )
            .map_err(db)?;
        let rows = stmt
            .query_map([id], |r| {
                Ok(CommitLink {
                    hash: r.get(0)?,
                    message: r.get(1)?,
                    linked_at: r.get(2)?,
                    linked_by: r.get(3)?,
                })
            })
            .map_err(db)?;
        rows.collect::<Result<_, _>>().map_err(db)
    }

    fn record_change(&mut self, id: i64, c: &NewChange<'_>) -> StoreResult<()> {
        self.tx
            .prepare_cached(
                "INSERT INTO ticket_changes (ticket_id, change_type, old_value, new_value, detail, \
                 message, changed_by, changed_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            )
            .map_err(db)?
            .execute(params![
                id,
                c.change_type,
                c.old_value,
                c.new_value,
                c.detail,
                c.message,
                c.actor,
                c.at
            ])
            .map_err(db)?;
        Ok(())
    }

    fn changes(&mut self, id: i64, limit: usize) -> StoreResult<Vec<Change>> {
        let sql = format!(
            "SELECT {CHANGE_COLUMNS} FROM ticket_changes WHERE ticket_id = ?1 ORDER BY id DESC LIMIT ?2"
        );
        let mut stmt = self.tx.prepare_cached(&sql).map_err(db)?;
        let rows = stmt
            .query_map(params![id, limit as i64], change_row)
            .map_err(db)?;
        rows.collect::<Result<_, _>>().map_err(db)
    }

    fn description_versions(&mut self, id: i64) -> StoreResult<Vec<Change>> {
        let sql = format!(
            "SELECT {CHANGE_COLUMNS} FROM ticket_changes \
             WHERE ticket_id = ?1 AND change_type = 'description_changed' ORDER BY id"
        );
        let mut stmt = self.tx.prepare_cached(&sql).map_err(db)?;
        let rows = stmt.query_map([id], change_row).map_err(db)?;
        rows.collect::<Result<_, _>>().map_err(db)
    }

    fn list(
        &mut self,
        filter: &ListFilter,
        after: Option<i64>,
        limit: usize,
    ) -> StoreResult<ListPage> {
        let mut values: Vec<rusqlite::types::Value> = Vec::new();
        let mut bind = |value: rusqlite::types::Value| {
            values.push(value);
            format!("?{}", values.len())
        };
        // The driving table: the narrowest index the filters allow. Labels and assignees
        // carry their ticket's status and liveness (schema version 3), so the driver's own
        // index answers the status filter too.
        let (table, id, mut conditions) = if let Some(label) = filter.labels.first() {
            let mark = bind(label.clone().into());
            (
                "ticket_labels d",
                "d.ticket_id",
                vec![format!("d.label = {mark}"), "d.live = 1".to_string()],
            )
        } else if let Some(assignee) = &filter.assignee {
            let mark = bind(assignee.clone().into());
            (
                "ticket_assignees d",
                "d.ticket_id",
                vec![format!("d.assignee = {mark}"), "d.live = 1".to_string()],
            )
        } else {
            (
                "tickets d",
                "d.id",
                vec!["d.deleted_at IS NULL".to_string()],
            )
        };
        for label in filter.labels.iter().skip(1) {
            let mark = bind(label.clone().into());
            conditions.push(format!(
                "EXISTS (SELECT 1 FROM ticket_labels l WHERE l.ticket_id = {id} AND l.label = {mark})"
            ));
        }
        if let Some(assignee) = filter
            .assignee
            .as_ref()
            .filter(|_| !filter.labels.is_empty())
        {
            let mark = bind(assignee.clone().into());
            conditions.push(format!(
                "EXISTS (SELECT 1 FROM ticket_assignees a WHERE a.ticket_id = {id} AND a.assignee = {mark})"
            ));
        }
        // Parent and epic are selective: with the tickets table as driver, their own
        // indexes lead and the statuses are a filter.
        let sprint_id = filter.sprint.flatten();
        let by_relation = table == "tickets d"
            && (filter.parent_id.is_some() || filter.epic_id.is_some() || sprint_id.is_some());
        for (column, value) in [
            ("parent_id", filter.parent_id),
            ("epic_id", filter.epic_id),
            ("sprint_id", sprint_id),
        ] {
            let Some(value) = value else { continue };
            let mark = bind(value.into());
            if table == "tickets d" {
                conditions.push(format!("d.{column} = {mark}"));
            } else {
                conditions.push(format!(
                    "EXISTS (SELECT 1 FROM tickets x WHERE x.id = {id} AND x.{column} = {mark})"
                ));
            }
        }
        if filter.unassigned {
            conditions.push(format!(
                "NOT EXISTS (SELECT 1 FROM ticket_assignees a WHERE a.ticket_id = {id})"
            ));
        }
        if filter.sprint == Some(None) {
            // The backlog: in no open sprint, and not done in a completed one.
            conditions.push(format!(
                "NOT EXISTS (SELECT 1 FROM tickets x JOIN sprints s ON s.id = x.sprint_id \
                 WHERE x.id = {id} AND (s.state <> 'completed' OR x.status = 'done'))"
            ));
        }
        let statuses: Vec<Status> = if filter.statuses.is_empty() {
            Status::ALL.to_vec()
        } else {
            filter.statuses.clone()
        };
        let status_marks: Vec<String> = statuses
            .iter()
            .map(|s| bind(s.as_str().to_string().into()))
            .collect();
        let after_condition = after.map(|after| format!(" AND {id} < {}", bind(after.into())));
        let page_limit = bind(((limit + 1) as i64).into());
        let count_cap = bind(((COUNT_CAP + 1) as i64).into());
        let filter_sql = conditions.join(" AND ");
        let all_statuses = status_marks.join(", ");

        let total: i64 = self
            .tx
            .prepare_cached(&format!(
                "SELECT count(*) FROM (SELECT 1 FROM {table} WHERE {filter_sql} \
                 AND d.status IN ({all_statuses}) LIMIT {count_cap})"
            ))
            .map_err(db)?
            .query_row(rusqlite::params_from_iter(values.iter()), |r| r.get(0))
            .map_err(db)?;

        let after_sql = after_condition.unwrap_or_default();
        // Newest first. One index range per status, each read in ticket order and cut at
        // the page size, then merged: no sort of every matching ticket.
        let ids_sql = if by_relation {
            format!(
                "SELECT {id} AS id FROM {table} WHERE {filter_sql} AND d.status IN ({all_statuses}){after_sql} \
                 ORDER BY {id} DESC LIMIT {page_limit}"
            )
        } else {
            let branches: Vec<String> = status_marks
                .iter()
                .map(|mark| {
                    format!(
                        "SELECT id FROM (SELECT {id} AS id FROM {table} WHERE {filter_sql} \
                         AND d.status = {mark}{after_sql} ORDER BY {id} DESC LIMIT {page_limit})"
                    )
                })
                .collect();
            format!(
                "{} ORDER BY id DESC LIMIT {page_limit}",
                branches.join(" UNION ALL ")
            )
        };
        let sql = format!(
            "SELECT t.id, {SUMMARY_COLUMNS} FROM ({ids_sql}) page \
             JOIN tickets t ON t.id = page.id JOIN projects p ON p.id = t.project_id \
             ORDER BY t.id DESC"
        );
        let mut stmt = self.tx.prepare_cached(&sql).map_err(db)?;
        // The count's cap, bound last, is not a parameter of the page query.
        let page_values = &values[..values.len() - 1];
        let rows = stmt
            .query_map(rusqlite::params_from_iter(page_values.iter()), |r| {
                Ok((r.get::<_, i64>(0)?, summary_row(r, 1)?))
            })
            .map_err(db)?;
        let mut rows: Vec<(i64, TicketSummary)> = rows.collect::<Result<_, _>>().map_err(db)?;
        let next_after = if rows.len() > limit {
            rows.truncate(limit);
            rows.last().map(|(id, _)| *id)
        } else {
            None
        };
        let total = usize::try_from(total).unwrap_or(0);
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
        filter: &Filter,
        offset: usize,
        limit: usize,
    ) -> StoreResult<SearchPage> {
        crate::find::search(self, terms, filter, offset, limit)
    }

    fn find(
        &mut self,
        filter: &Filter,
        sort: Sort,
        after: Option<&Position>,
        limit: usize,
    ) -> StoreResult<FoundPage> {
        crate::find::find(self, filter, sort, after, limit)
    }

    fn find_rows(&mut self, filter: &Filter, limit: usize) -> StoreResult<Vec<TicketRow>> {
        crate::find::find_rows(self, filter, limit)
    }
}
