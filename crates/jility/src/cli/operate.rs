//! `jility admin migrate`: the schema for operators who migrate before they roll out a new
//! version (README, "Operating jility serve").

use std::io::Write;

use clap::Args;
use mcp_common::ToolError;
use serde::Serialize;

use jility_cloud::store::{PgDatabase, ROLLING_FROM, SchemaStatus, breaks_rolling_upgrade};

use super::people::{DatabaseArg, database_url};

#[derive(Debug, Args)]
pub struct MigrateArgs {
    /// Say which migrations would run, and whether servers of the version before can keep
    /// running beside them; change nothing.
    #[arg(long)]
    pub check: bool,
    #[command(flatten)]
    pub database: DatabaseArg,
}

/// What `jility admin migrate --json` prints.
#[derive(Serialize)]
struct Migrated<'a> {
    /// The schema version the database had.
    before: u32,
    /// The version it has now (`--check`: would have).
    after: u32,
    /// The migrations applied (`--check`: that would be), oldest first.
    migrations: &'a [&'static str],
    /// Whether this was `--check` (nothing was changed).
    checked_only: bool,
    /// Whether servers of the schema before keep working beside these migrations.
    rolling: bool,
}

/// `jility admin migrate [--check]`.
pub fn migrate(json: bool, args: MigrateArgs) -> Result<(), ToolError> {
    let url = database_url(&args.database)?;
    let status = if args.check {
        PgDatabase::schema_status(url)
    } else {
        PgDatabase::migrate_only(url)
    }
    .map_err(|err| jility_cloud::reach::at_start(url, err))?;
    if status.too_new() {
        return Err(jility_core::store::StoreError::TooNew {
            found: status.found,
            known: status.known,
        }
        .into());
    }
    let rolling = rolling(&status);
    let out = if json {
        serde_json::to_string(&Migrated {
            before: status.found,
            after: status.known,
            migrations: &status.pending,
            checked_only: args.check,
            rolling,
        })
        .map_err(|e| ToolError::internal(format!("Cannot print JSON: {e}")))?
    } else {
        text(&status, args.check, rolling)
    };
    let _ = writeln!(std::io::stdout().lock(), "{out}");
    Ok(())
}

/// Whether every migration in `status.pending` leaves servers of the schema before working.
fn rolling(status: &SchemaStatus) -> bool {
    status.pending.iter().enumerate().all(|(at, _)| {
        let version = status.found + at as u32 + 1;
        version >= ROLLING_FROM
            && jility_cloud::store::MIGRATIONS
                .get(version as usize - 1)
                .is_some_and(|m| breaks_rolling_upgrade(m.sql).is_empty())
    })
}

fn text(status: &SchemaStatus, check: bool, rolling: bool) -> String {
    if status.pending.is_empty() {
        return format!(
            "✅ The database's schema is current (version {}): nothing to do.",
            status.known
        );
    }
    let list = status
        .pending
        .iter()
        .map(|name| format!("    {name}"))
        .collect::<Vec<_>>()
        .join("\n");
    let count = status.pending.len();
    let plural = if count == 1 { "" } else { "s" };
    let beside = if status.found == 0 {
        "The database is new: nothing runs on it yet.".to_string()
    } else if rolling {
        "Servers of the schema before keep working beside them: roll the new version out one process at a time.".to_string()
    } else {
        "Servers older than this version may not work beside them: stop the old servers, migrate, then start the new ones.".to_string()
    };
    if check {
        format!(
            "The database is at schema version {}; this jility would apply {count} migration{plural} (to version {}):\n\n{list}\n\n{beside}\nNothing was changed: run `jility admin migrate` to apply them.",
            status.found, status.known
        )
    } else {
        format!(
            "✅ Migrated the database from schema version {} to {} ({count} migration{plural}):\n\n{list}\n\n{beside}",
            status.found, status.known
        )
    }
}
