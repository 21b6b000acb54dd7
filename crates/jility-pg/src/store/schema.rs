//! The schema: which version a database has, the migrations it lacks, applying them
//! (serialised across processes), and what an operator asks before (`jility admin migrate
//! --check`).

use super::*;

/// The first version written for rolling upgrades: from it on a migration only adds
/// (tables, columns that may be null or have a default, indexes, functions a server of the
/// version before does not call), so a server of the version before keeps working beside
/// the new schema; a removal comes a release after the code stopped using what it removes,
/// in a migration that says so (`-- removes:`). Checked by this module's tests.
pub const ROLLING_FROM: u32 = 25;

/// Where a database's schema stands against this binary's migrations.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SchemaStatus {
    /// The database's version (0: a new database).
    pub found: u32,
    /// The newest version this binary knows.
    pub known: u32,
    /// The migrations it would apply, oldest first.
    pub pending: Vec<&'static str>,
}

impl SchemaStatus {
    fn of(found: u32) -> Self {
        let known = MIGRATIONS.len() as u32;
        Self {
            found,
            known,
            pending: MIGRATIONS
                .iter()
                .skip(found as usize)
                .map(|m| m.name)
                .collect(),
        }
    }

    /// Whether the database was migrated by a newer binary.
    pub fn too_new(&self) -> bool {
        self.found > self.known
    }
}

impl PgDatabase {
    /// The schema of the database at `url`, read on one connection; nothing is changed.
    pub fn schema_status(url: &str) -> StoreResult<SchemaStatus> {
        let mut client = one_connection(url)?;
        Ok(SchemaStatus::of(schema_version(&mut client)?))
    }

    /// Apply the migrations the database at `url` lacks (as a starting server does, on one
    /// connection and nothing else): its status before. A newer schema is refused.
    pub fn migrate_only(url: &str) -> StoreResult<SchemaStatus> {
        let mut client = one_connection(url)?;
        let before = migrate(&mut client)?;
        Ok(SchemaStatus::of(before))
    }
}

/// One connection to `url`, bounded as the pool's are.
fn one_connection(url: &str) -> StoreResult<Client> {
    let mut config: tokio_postgres::Config = url
        .parse()
        .map_err(|e| StoreError::Database(format!("invalid database URL: {e}")))?;
    if config.get_application_name().is_none() {
        config.application_name("jility admin");
    }
    reach::bound(&mut config);
    Config::from(config)
        .connect(NoTls)
        .map_err(crate::store::db)
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
    recorded(client)
}

/// The newest version `jility_schema_migrations` records (the table exists).
fn recorded(client: &mut impl postgres::GenericClient) -> StoreResult<u32> {
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
    let before = recorded(&mut tx)?;
    if before > known {
        tx.rollback().map_err(crate::store::db)?;
        return Err(StoreError::TooNew {
            found: before,
            known,
        });
    }
    for (index, migration) in MIGRATIONS.iter().enumerate().skip(before as usize) {
        let version = i32::try_from(index + 1).unwrap_or(i32::MAX);
        tx.batch_execute(migration.sql).map_err(crate::store::db)?;
        tx.execute(
            "INSERT INTO jility_schema_migrations (version) VALUES ($1)",
            &[&version],
        )
        .map_err(crate::store::db)?;
        tracing::info!(
            version,
            name = migration.name,
            "applied PostgreSQL schema migration"
        );
    }
    tx.commit().map_err(crate::store::db)?;
    Ok(before)
}

/// What in `sql` (one migration) a server of the schema before could trip on: removals,
/// renames, changed types, new constraints or required columns. Empty for an additive
/// migration, and for one that declares its removals (`-- removes: …`).
pub fn breaks_rolling_upgrade(sql: &str) -> Vec<String> {
    if sql
        .lines()
        .any(|line| line.trim_start().starts_with("-- removes:"))
    {
        return Vec::new();
    }
    let code: String = sql
        .lines()
        .map(|line| line.split("--").next().unwrap_or_default())
        .collect::<Vec<_>>()
        .join(" ");
    let mut found = Vec::new();
    for statement in code.split(';') {
        let words: Vec<String> = statement
            .split_whitespace()
            .map(str::to_ascii_uppercase)
            .collect();
        let text = words.join(" ");
        let has = |phrase: &str| {
            words
                .windows(phrase.split(' ').count())
                .any(|w| w.join(" ") == phrase)
        };
        let breaking = [
            "DROP TABLE",
            "DROP COLUMN",
            "DROP FUNCTION",
            "DROP TRIGGER",
            "DROP VIEW",
            "DROP TYPE",
            "RENAME",
            "SET NOT NULL",
            "SET DATA TYPE",
            "ADD CONSTRAINT",
        ];
        for phrase in breaking {
            if has(phrase) {
                found.push(format!(
                    "{phrase}: {}",
                    mcp_common_core::text::clip(&text, 120)
                ));
            }
        }
        if has("ALTER COLUMN") && has("TYPE") {
            found.push(format!(
                "a column's type: {}",
                mcp_common_core::text::clip(&text, 120)
            ));
        }
        if has("ADD COLUMN") && has("NOT NULL") && !has("DEFAULT") {
            found.push(format!(
                "a required column without a default: {}",
                mcp_common_core::text::clip(&text, 120)
            ));
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrations_from_the_rolling_floor_on_only_add() {
        for (index, migration) in MIGRATIONS.iter().enumerate() {
            if index as u32 + 1 >= ROLLING_FROM {
                let breaks = breaks_rolling_upgrade(migration.sql);
                assert!(breaks.is_empty(), "{}: {breaks:?}", migration.name);
            }
        }
    }

    #[test]
    fn what_breaks_a_rolling_upgrade_is_found() {
        for sql in [
            "ALTER TABLE tickets DROP COLUMN title;",
            "DROP TABLE views;",
            "ALTER TABLE tickets RENAME COLUMN title TO name;",
            "ALTER TABLE tickets ALTER COLUMN points TYPE bigint;",
            "ALTER TABLE tickets ALTER COLUMN title SET NOT NULL;",
            "ALTER TABLE tickets ADD COLUMN risk TEXT NOT NULL;",
            "alter table tickets\n  add constraint short check (length(title) < 9);",
            "CREATE TABLE x (a int); -- fine\nDROP FUNCTION f();",
        ] {
            assert!(!breaks_rolling_upgrade(sql).is_empty(), "{sql}");
        }
        for sql in [
            "CREATE TABLE x (a INT NOT NULL);",
            "ALTER TABLE tickets ADD COLUMN risk TEXT;",
            "ALTER TABLE tickets ADD COLUMN risk TEXT NOT NULL DEFAULT 'low';",
            "CREATE INDEX tickets_risk ON tickets (risk); DROP INDEX tickets_old;",
            "CREATE TABLE x (a int); -- DROP TABLE y in a comment",
            "-- the old column, unused since 0.9:\n-- removes: tickets.legacy\nALTER TABLE tickets DROP COLUMN legacy;",
        ] {
            assert!(
                breaks_rolling_upgrade(sql).is_empty(),
                "{sql}: {:?}",
                breaks_rolling_upgrade(sql)
            );
        }
    }
}
