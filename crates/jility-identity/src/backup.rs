//! Backups of a cloud database, whole or some of its workspaces: `jility admin backup` and
//! `restore` (README, "Backups").
//!
//! **Format** (`jility-backup`, version [`FORMAT_VERSION`]): JSON Lines. The first line is
//! the [`Header`] (format, its version, the schema version the rows are of, when, which
//! workspaces); then one line per row, `{"table":"tickets","row":{…}}`, the row as
//! PostgreSQL's `row_to_json` writes it, tables in [`TABLES`]' order; the last line is the
//! trailer, `{"end":{"rows":{"tickets":N,…},"blake3":"…"}}`: how many rows of each table
//! and the BLAKE3 hash of every byte before it, so a truncated or damaged file is refused
//! whole.
//!
//! **What is kept**: workspaces, their projects, tickets with their history (changes),
//! comments, commits, dependencies, assignees, labels, sprints, saved views, inboxes and
//! watches, webhook subscriptions (their secrets too: a restored one signs as before), API tokens (as
//! the hashes the database keeps; OAuth's tokens are not: people sign in again), members
//! and their people (with their password hashes), invites and the audit log. Not kept:
//! what is derived (search words, kept ticket contexts: rebuilt on restore and on first
//! read), what is short-lived (sessions, OAuth grants and codes, idempotency keys, rate-limit
//! counts, password-reset links, webhook deliveries and their outbox) and the server's secrets (cursors handed out before the
//! restore are refused; clients start their listings again).
//!
//! **Consistency**: the rows are read in one `REPEATABLE READ` read-only transaction, a
//! snapshot of one moment however many writes go on. A restore writes everything in one
//! transaction into a database with no workspace and no person (made for it, then migrated
//! as a server would), checks the counts and the hash, and commits only then: a restore
//! that fails leaves the database as it was.

use std::collections::BTreeMap;
use std::io::{BufRead, Write};

use jility_core::errors;
use jility_core::store::StoreError;
use jility_pg::store::{MIGRATIONS, PgDatabase};
use mcp_common_core::ToolError;
use postgres::fallible_iterator::FallibleIterator as _;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The format's name, in every header.
pub const FORMAT: &str = "jility-backup";
/// The format's version; a restore reads this one and those before it.
pub const FORMAT_VERSION: u32 = 1;

/// Rows inserted by one statement on restore.
const BATCH: usize = 500;

/// A backup's first line.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Header {
    pub format: String,
    pub format_version: u32,
    /// The schema version of the database the rows were read from.
    pub schema: u32,
    /// When the snapshot was taken (RFC 3339, UTC).
    pub created_at: String,
    /// The workspaces it holds, by name.
    pub workspaces: Vec<String>,
    /// Whether it is the whole database (every person, also those in no workspace).
    pub whole: bool,
}

/// What a backup or a restore moved: rows per table, in [`TABLES`]' order.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Summary {
    pub schema: u32,
    pub workspaces: Vec<String>,
    pub rows: BTreeMap<String, u64>,
    /// Bytes written or read.
    pub bytes: u64,
}

impl Summary {
    /// Rows of `table`.
    pub fn count(&self, table: &str) -> u64 {
        self.rows.get(table).copied().unwrap_or(0)
    }
}

/// The tables kept, in the order a restore inserts them (each after those it refers to),
/// with the rows of the workspaces `$1` (an array of ids) each holds; `$2` is whether the
/// backup is of the whole database.
pub const TABLES: &[(&str, &str)] = &[
    ("workspaces", "id = ANY($1)"),
    (
        "users",
        "$2 OR id IN (SELECT user_id FROM memberships WHERE workspace_id = ANY($1) \
         UNION SELECT created_by_user FROM api_tokens WHERE workspace_id = ANY($1) AND oauth_grant_id IS NULL \
         UNION SELECT created_by FROM invites WHERE workspace_id = ANY($1) \
         UNION SELECT accepted_by FROM invites WHERE workspace_id = ANY($1))",
    ),
    ("memberships", "workspace_id = ANY($1)"),
    ("projects", "workspace_id = ANY($1)"),
    ("sprints", "workspace_id = ANY($1)"),
    ("tickets", "workspace_id = ANY($1)"),
    ("ticket_changes", "workspace_id = ANY($1)"),
    ("comments", "workspace_id = ANY($1)"),
    ("commit_links", "workspace_id = ANY($1)"),
    ("dependencies", "workspace_id = ANY($1)"),
    ("ticket_assignees", "workspace_id = ANY($1)"),
    ("ticket_labels", "workspace_id = ANY($1)"),
    ("sprint_tickets", "workspace_id = ANY($1)"),
    ("sprint_kept", "workspace_id = ANY($1)"),
    ("sprint_days", "workspace_id = ANY($1)"),
    ("views", "workspace_id = ANY($1)"),
    ("watches", "workspace_id = ANY($1)"),
    ("notifications", "workspace_id = ANY($1)"),
    ("webhooks", "workspace_id = ANY($1)"),
    (
        "api_tokens",
        "workspace_id = ANY($1) AND oauth_grant_id IS NULL",
    ),
    ("invites", "workspace_id = ANY($1)"),
    ("audit_log", "workspace_id = ANY($1)"),
];

fn db_error(err: postgres::Error) -> ToolError {
    jility_pg::store::db(err).into()
}

fn io_error(what: &str, err: &std::io::Error) -> ToolError {
    ToolError::new(errors::INVALID_INPUT, format!("Cannot {what}: {err}"))
        .with_hint("Check the path, its directory and the space left on its disk.")
}

/// Write a backup of `workspaces` (by name; `None`: the whole database) to `out`, from one
/// snapshot of the database.
pub fn backup(
    db: &PgDatabase,
    workspaces: Option<&[String]>,
    out: &mut dyn Write,
) -> Result<Summary, ToolError> {
    let mut client = db.dedicated().map_err(ToolError::from)?;
    let mut tx = client.transaction().map_err(db_error)?;
    tx.batch_execute(
        "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY; SET LOCAL statement_timeout = 0",
    )
    .map_err(db_error)?;
    let schema = schema_of(&mut tx)?;
    let found: Vec<(i64, String)> = tx
        .query("SELECT id, name FROM workspaces ORDER BY id", &[])
        .map_err(db_error)?
        .iter()
        .map(|row| (row.get(0), row.get(1)))
        .collect();
    let chosen: Vec<(i64, String)> = match workspaces {
        None => found,
        Some(names) => {
            let mut chosen = Vec::new();
            for name in names {
                let Some(hit) = found.iter().find(|(_, n)| n == name.trim()) else {
                    return Err(ToolError::new(
                        errors::NOT_FOUND,
                        format!("No workspace is named {:?}", mcp_common_core::text::clip(name, 80)),
                    )
                    .with_hint("Name an existing workspace with --workspace, or leave it out to back up the whole database. Nothing was written."));
                };
                if !chosen.contains(hit) {
                    chosen.push(hit.clone());
                }
            }
            chosen
        }
    };
    let whole = workspaces.is_none();
    let ids: Vec<i64> = chosen.iter().map(|(id, _)| *id).collect();
    let header = Header {
        format: FORMAT.to_string(),
        format_version: FORMAT_VERSION,
        schema,
        created_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        workspaces: chosen.into_iter().map(|(_, name)| name).collect(),
        whole,
    };
    let mut writer = Hashing::new(out);
    let line = serde_json::to_string(&header)
        .map_err(|e| ToolError::internal(format!("Cannot write the header: {e}")))?;
    writer.line(&line)?;
    let mut summary = Summary {
        schema,
        workspaces: header.workspaces.clone(),
        ..Summary::default()
    };
    for (table, condition) in TABLES {
        let order = if has_id(&mut tx, table)? {
            " ORDER BY t.id"
        } else {
            ""
        };
        // Every statement takes both parameters (`$2` is only the people's business).
        let sql = format!(
            "SELECT row_to_json(t)::text FROM {table} t WHERE ({condition}) AND $2::bool IS NOT NULL{order}"
        );
        let mut rows = tx
            .query_raw(&sql, [&ids as &(dyn postgres::types::ToSql + Sync), &whole])
            .map_err(db_error)?;
        let mut count = 0u64;
        while let Some(row) = rows.next().map_err(db_error)? {
            let json: &str = row.get(0);
            writer.line(&format!("{{\"table\":\"{table}\",\"row\":{json}}}"))?;
            count += 1;
        }
        summary.rows.insert((*table).to_string(), count);
    }
    tx.commit().map_err(db_error)?;
    let trailer = serde_json::json!({ "end": { "rows": summary.rows, "blake3": writer.hash() } });
    writer.line(&trailer.to_string())?;
    summary.bytes = writer.bytes;
    writer
        .out
        .flush()
        .map_err(|e| io_error("write the backup", &e))?;
    Ok(summary)
}

/// The schema version of the database `tx` reads.
fn schema_of(tx: &mut postgres::Transaction<'_>) -> Result<u32, ToolError> {
    let version: i32 = tx
        .query_one(
            "SELECT coalesce(max(version), 0) FROM jility_schema_migrations",
            &[],
        )
        .map_err(db_error)?
        .get(0);
    Ok(u32::try_from(version).unwrap_or(0))
}

fn has_id(tx: &mut postgres::Transaction<'_>, table: &str) -> Result<bool, ToolError> {
    Ok(tx
        .query_one(
            "SELECT EXISTS (SELECT 1 FROM information_schema.columns \
             WHERE table_schema = current_schema() AND table_name = $1 AND column_name = 'id')",
            &[&table],
        )
        .map_err(db_error)?
        .get(0))
}

/// Lines written, hashed as they go.
struct Hashing<'a> {
    out: &'a mut dyn Write,
    hasher: blake3::Hasher,
    bytes: u64,
}

impl<'a> Hashing<'a> {
    fn new(out: &'a mut dyn Write) -> Self {
        Self {
            out,
            hasher: blake3::Hasher::new(),
            bytes: 0,
        }
    }

    fn line(&mut self, line: &str) -> Result<(), ToolError> {
        self.hasher.update(line.as_bytes());
        self.hasher.update(b"\n");
        self.bytes += line.len() as u64 + 1;
        self.out
            .write_all(line.as_bytes())
            .and_then(|()| self.out.write_all(b"\n"))
            .map_err(|e| io_error("write the backup", &e))
    }

    fn hash(&self) -> String {
        self.hasher.finalize().to_hex().to_string()
    }
}

/// Read a backup's header (its first line) and check that this jility can restore it.
pub fn read_header(first: &str) -> Result<Header, ToolError> {
    let damaged = || {
        ToolError::new(errors::INVALID_INPUT, "This is not a jility backup")
            .with_hint("Give a file written by `jility admin backup`. Nothing was changed.")
    };
    let header: Header = serde_json::from_str(first).map_err(|_| damaged())?;
    if header.format != FORMAT {
        return Err(damaged());
    }
    if header.format_version > FORMAT_VERSION {
        return Err(ToolError::new(
            errors::INVALID_INPUT,
            format!(
                "The backup is in format version {}; this jility reads up to {FORMAT_VERSION}",
                header.format_version
            ),
        )
        .with_hint(
            "Restore it with the jility that wrote it, or a newer one. Nothing was changed.",
        ));
    }
    let known = MIGRATIONS.len() as u32;
    if header.schema > known {
        return Err(ToolError::new(
            errors::INVALID_INPUT,
            format!(
                "The backup was made by a newer jility (schema version {}; this one knows up to {known})",
                header.schema
            ),
        )
        .with_hint("Restore it with the jility that made it, or a newer one. Nothing was changed."));
    }
    Ok(header)
}

#[derive(Deserialize)]
struct RowLine {
    table: String,
    row: Value,
}

#[derive(Deserialize)]
struct Trailer {
    end: End,
}

#[derive(Deserialize)]
struct End {
    rows: BTreeMap<String, u64>,
    blake3: String,
}

/// Restore the backup `input` into `db`, which must hold no workspace and no person: all
/// of it in one transaction, committed only once its counts and hash are checked.
pub fn restore(db: &PgDatabase, input: &mut dyn BufRead) -> Result<Summary, ToolError> {
    let damaged = |why: &str| {
        ToolError::new(
            errors::INVALID_INPUT,
            format!("The backup is damaged or incomplete: {why}"),
        )
        .with_hint("Restore from a whole copy of the file. Nothing was restored.")
    };
    let mut lines = input.lines();
    let first = match lines.next() {
        Some(line) => line.map_err(|e| io_error("read the backup", &e))?,
        None => return Err(damaged("it is empty")),
    };
    let header = read_header(&first)?;
    let mut hasher = blake3::Hasher::new();
    hasher.update(first.as_bytes());
    hasher.update(b"\n");
    let mut bytes = first.len() as u64 + 1;
    let mut client = db.dedicated().map_err(ToolError::from)?;
    let mut tx = client.transaction().map_err(db_error)?;
    tx.batch_execute("SET LOCAL statement_timeout = 0; SET LOCAL lock_timeout = 0")
        .map_err(db_error)?;
    let occupied: bool = tx
        .query_one(
            "SELECT EXISTS (SELECT 1 FROM workspaces) OR EXISTS (SELECT 1 FROM users)",
            &[],
        )
        .map_err(db_error)?
        .get(0);
    if occupied {
        return Err(ToolError::new(
            errors::ALREADY_EXISTS,
            "The database already holds workspaces or people",
        )
        .with_hint("Restore into an empty database: create one (createdb), then run `jility admin restore` with its URL. Nothing was restored."));
    }
    let mut restorer = Restorer::new(&mut tx);
    let mut trailer = None;
    for line in lines {
        let line = line.map_err(|e| io_error("read the backup", &e))?;
        if trailer.is_some() {
            return Err(damaged("there is more after its end"));
        }
        if line.starts_with("{\"end\"") {
            bytes += line.len() as u64 + 1;
            trailer = Some(
                serde_json::from_str::<Trailer>(&line)
                    .map_err(|_| damaged("its last line does not parse"))?,
            );
            continue;
        }
        hasher.update(line.as_bytes());
        hasher.update(b"\n");
        bytes += line.len() as u64 + 1;
        let row: RowLine =
            serde_json::from_str(&line).map_err(|_| damaged("a line does not parse"))?;
        restorer.add(row)?;
    }
    let Some(Trailer { end }) = trailer else {
        return Err(damaged("its end is missing (a truncated file)"));
    };
    let counted = restorer.finish()?;
    if end.blake3 != hasher.finalize().to_hex().as_str() {
        return Err(damaged("its contents do not match its hash"));
    }
    for (table, expected) in &end.rows {
        if counted.get(table).copied().unwrap_or(0) != *expected {
            return Err(damaged(&format!(
                "{table} has a row count other than its end says"
            )));
        }
    }
    tx.commit().map_err(db_error)?;
    Ok(Summary {
        schema: header.schema,
        workspaces: header.workspaces,
        rows: counted,
        bytes,
    })
}

/// Rows going into the database, a batch per table and statement.
struct Restorer<'t, 'c> {
    tx: &'t mut postgres::Transaction<'c>,
    /// The table being filled, and its rows not inserted yet.
    table: Option<String>,
    batch: Vec<Value>,
    /// The statement inserting the table's batches (its columns read once per table).
    insert: Option<String>,
    /// The tables done, in order (a table may not come back after another began).
    done: Vec<String>,
    counted: BTreeMap<String, u64>,
    /// Tickets' parents and epics, set once every ticket is there.
    links: Vec<Value>,
}

impl<'t, 'c> Restorer<'t, 'c> {
    fn new(tx: &'t mut postgres::Transaction<'c>) -> Self {
        Self {
            tx,
            table: None,
            batch: Vec::new(),
            insert: None,
            done: Vec::new(),
            counted: BTreeMap::new(),
            links: Vec::new(),
        }
    }

    fn add(&mut self, line: RowLine) -> Result<(), ToolError> {
        let Some(position) = TABLES.iter().position(|(t, _)| *t == line.table) else {
            return Err(ToolError::new(
                errors::INVALID_INPUT,
                format!(
                    "The backup holds rows of {:?}, which this jility does not restore",
                    mcp_common_core::text::clip(&line.table, 40)
                ),
            )
            .with_hint("Restore it with the jility that made it. Nothing was restored."));
        };
        if self.table.as_deref() != Some(line.table.as_str()) {
            self.flush()?;
            let order_ok = self
                .done
                .last()
                .and_then(|last| TABLES.iter().position(|(t, _)| t == last))
                .is_none_or(|last| last < position);
            if !order_ok {
                return Err(ToolError::new(
                    errors::INVALID_INPUT,
                    "The backup's tables are out of order",
                )
                .with_hint(
                    "Restore from a file written by `jility admin backup`. Nothing was restored.",
                ));
            }
            self.table = Some(line.table.clone());
            self.insert = None;
            self.done.push(line.table.clone());
        }
        let mut row = line.row;
        if line.table == "tickets" {
            // Parents and epics may be tickets not inserted yet: set afterwards. The comments'
            // words are added back by their trigger as each comment is inserted.
            let parent = row.get("parent_id").cloned().unwrap_or(Value::Null);
            let epic = row.get("epic_id").cloned().unwrap_or(Value::Null);
            if !parent.is_null() || !epic.is_null() {
                self.links.push(serde_json::json!({
                    "id": row.get("id").cloned().unwrap_or(Value::Null),
                    "parent_id": parent,
                    "epic_id": epic,
                }));
            }
            if let Some(object) = row.as_object_mut() {
                object.insert("parent_id".into(), Value::Null);
                object.insert("epic_id".into(), Value::Null);
                object.insert("comments_search".into(), Value::String(String::new()));
            }
        }
        *self.counted.entry(line.table).or_default() += 1;
        self.batch.push(row);
        if self.batch.len() >= BATCH {
            self.flush()?;
        }
        Ok(())
    }

    /// Insert the rows gathered: the columns they have that the table has (columns the
    /// backup's older schema lacked take their defaults).
    fn flush(&mut self) -> Result<(), ToolError> {
        let (Some(table), false) = (self.table.as_deref(), self.batch.is_empty()) else {
            return Ok(());
        };
        let sql = match self.insert.take() {
            Some(sql) => sql,
            None => {
                let columns: Vec<String> = self
                    .tx
                    .query(
                        "SELECT column_name::text FROM information_schema.columns \
                         WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position",
                        &[&table],
                    )
                    .map_err(db_error)?
                    .iter()
                    .map(|row| row.get::<_, String>(0))
                    .filter(|column| {
                        self.batch
                            .first()
                            .and_then(Value::as_object)
                            .is_some_and(|row| row.contains_key(column))
                    })
                    .collect();
                let list = columns
                    .iter()
                    .map(|c| format!("\"{c}\""))
                    .collect::<Vec<_>>()
                    .join(", ");
                format!(
                    "INSERT INTO {table} ({list}) OVERRIDING SYSTEM VALUE SELECT {list} FROM json_populate_recordset(NULL::{table}, $1::text::json)"
                )
            }
        };
        let rows = serde_json::to_string(&self.batch)
            .map_err(|e| ToolError::internal(format!("Cannot encode rows: {e}")))?;
        self.tx.execute(&sql, &[&rows]).map_err(|err| {
            tracing::warn!(table, error = %err, "restoring a batch of rows failed");
            ToolError::new(
                errors::INVALID_INPUT,
                format!(
                    "The backup's {table} rows cannot be restored: {}",
                    db_detail(&err)
                ),
            )
            .with_hint("The file may be damaged, or edited by hand. Nothing was restored.")
        })?;
        self.batch.clear();
        self.insert = Some(sql);
        Ok(())
    }

    /// The last rows, the tickets' parents and epics, and every sequence past the ids
    /// restored: what was counted per table.
    fn finish(mut self) -> Result<BTreeMap<String, u64>, ToolError> {
        self.flush()?;
        if !self.links.is_empty() {
            let links = serde_json::to_string(&self.links)
                .map_err(|e| ToolError::internal(format!("Cannot encode rows: {e}")))?;
            self.tx
                .execute(
                    "UPDATE tickets t SET parent_id = l.parent_id, epic_id = l.epic_id \
                     FROM json_to_recordset($1::text::json) AS l(id bigint, parent_id bigint, epic_id bigint) \
                     WHERE t.id = l.id",
                    &[&links],
                )
                .map_err(|err| {
                    ToolError::new(
                        errors::INVALID_INPUT,
                        format!("The backup's tickets cannot be linked to their parents and epics: {}", db_detail(&err)),
                    )
                    .with_hint("The file may be damaged, or edited by hand. Nothing was restored.")
                })?;
        }
        for (table, _) in TABLES {
            if !has_id(self.tx, table)? {
                continue;
            }
            self.tx
                .execute(
                    &format!(
                        "SELECT setval(s, coalesce((SELECT max(id) FROM {table}), 0) + 1, false) \
                         FROM pg_get_serial_sequence('{table}', 'id') AS s WHERE s IS NOT NULL"
                    ),
                    &[],
                )
                .map_err(db_error)?;
        }
        for (table, _) in TABLES {
            self.counted.entry((*table).to_string()).or_insert(0);
        }
        Ok(self.counted)
    }
}

/// Why PostgreSQL refused a batch, in our words (its own, which may quote a value, stay in
/// the log): the constraint it broke, or the kind of value it could not take.
fn db_detail(err: &postgres::Error) -> String {
    let Some(db) = err.as_db_error() else {
        return "the database refused them".to_string();
    };
    if let Some(constraint) = db.constraint() {
        return format!("they break the constraint {constraint}");
    }
    match db.code().code() {
        "22P05" | "22021" => {
            "a value holds a character the database cannot store (such as NUL)".to_string()
        }
        code if code.starts_with("22") => {
            format!("a value does not fit its column (SQLSTATE {code})")
        }
        code => format!("the database refused them (SQLSTATE {code})"),
    }
}

/// Whether a restore's target can be reached and migrated: [`PgDatabase::connect`] with
/// the errors an operator reads at the start of a command.
pub fn restoring_into(url: &str) -> Result<PgDatabase, ToolError> {
    PgDatabase::connect_with(url, jility_pg::store::MIN_POOL_SIZE)
        .map_err(|err: StoreError| jility_pg::reach::at_start(url, err))
}
