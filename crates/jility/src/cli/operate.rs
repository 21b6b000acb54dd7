//! The operator's commands (README, "Operating jility serve"): `jility admin migrate` for
//! those who migrate before they roll out a new version, `backup` and `restore`.

use std::io::{BufRead as _, Read as _, Write};
use std::path::PathBuf;

use clap::Args;
use mcp_common::ToolError;
use serde::Serialize;

use jility_cloud::backup;
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

#[derive(Debug, Args)]
pub struct BackupArgs {
    /// Back up this workspace (repeat for more); without it, the whole database.
    #[arg(long = "workspace", value_name = "NAME")]
    pub workspaces: Vec<String>,
    /// Where to write the backup (`-`: stdout); written whole, then renamed into place.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: PathBuf,
    #[command(flatten)]
    pub database: DatabaseArg,
}

#[derive(Debug, Args)]
pub struct RestoreArgs {
    /// The backup to restore (`-`: stdin).
    #[arg(value_name = "FILE")]
    pub input: PathBuf,
    #[command(flatten)]
    pub database: DatabaseArg,
}

/// `jility admin backup`: one snapshot of the database (or of some workspaces) to a file.
pub fn backup(json: bool, args: BackupArgs) -> Result<(), ToolError> {
    let url = database_url(&args.database)?;
    let db = PgDatabase::connect_with(url, jility_cloud::store::MIN_POOL_SIZE)
        .map_err(|err| jility_cloud::reach::at_start(url, err))?;
    let chosen = (!args.workspaces.is_empty()).then_some(args.workspaces.as_slice());
    let to_stdout = args.output.as_os_str() == "-";
    let summary = if to_stdout {
        let stdout = std::io::stdout();
        let mut out = std::io::BufWriter::new(stdout.lock());
        backup::backup(&db, chosen, &mut out)?
    } else {
        let partial = partial_path(&args.output);
        let written = (|| {
            let file = std::fs::File::create(&partial)
                .map_err(|e| cannot(&format!("create {}", partial.display()), &e))?;
            let mut out = std::io::BufWriter::new(file);
            let summary = backup::backup(&db, chosen, &mut out)?;
            let file = out
                .into_inner()
                .map_err(|e| cannot("write the backup", e.error()))?;
            file.sync_all()
                .map_err(|e| cannot("write the backup to disk", &e))?;
            std::fs::rename(&partial, &args.output).map_err(|e| {
                cannot(&format!("move the backup to {}", args.output.display()), &e)
            })?;
            Ok::<_, ToolError>(summary)
        })();
        if written.is_err() {
            let _ = std::fs::remove_file(&partial);
        }
        written?
    };
    let place = if to_stdout {
        "stdout".to_string()
    } else {
        args.output.display().to_string()
    };
    report(
        json,
        &summary,
        &format!("Backed up {} to {place}", scope(&summary)),
        to_stdout,
    )
}

/// `jility admin restore`: a backup into an empty database.
pub fn restore(json: bool, args: RestoreArgs) -> Result<(), ToolError> {
    let url = database_url(&args.database)?;
    let mut input: Box<dyn std::io::BufRead> = if args.input.as_os_str() == "-" {
        Box::new(std::io::BufReader::new(std::io::stdin().lock()))
    } else {
        let file = std::fs::File::open(&args.input)
            .map_err(|e| cannot(&format!("open {}", args.input.display()), &e))?;
        Box::new(std::io::BufReader::new(file))
    };
    // The header first: a backup this jility cannot restore changes nothing, not even the
    // schema of the database.
    let mut first = String::new();
    input
        .read_line(&mut first)
        .map_err(|e| cannot("read the backup", &e))?;
    backup::read_header(first.trim_end_matches('\n'))?;
    let db = PgDatabase::connect_with(url, jility_cloud::store::MIN_POOL_SIZE)
        .map_err(|err| jility_cloud::reach::at_start(url, err))?;
    let mut whole = std::io::Cursor::new(first.into_bytes()).chain(input);
    let summary = backup::restore(&db, &mut whole)?;
    report(
        json,
        &summary,
        &format!("Restored {}", scope(&summary)),
        false,
    )
}

fn partial_path(path: &std::path::Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".partial");
    path.with_file_name(name)
}

fn cannot(what: &str, err: &std::io::Error) -> ToolError {
    ToolError::new(
        jility_core::errors::INVALID_INPUT,
        format!("Cannot {what}: {err}"),
    )
    .with_hint("Check the path, its directory's permissions and the space left on its disk.")
}

fn scope(summary: &backup::Summary) -> String {
    match summary.workspaces.len() {
        1 => format!("the workspace {}", summary.workspaces[0]),
        n => format!("{n} workspaces"),
    }
}

/// The summary: JSON, or lines for a person (on stderr when stdout carries the backup).
fn report(
    json: bool,
    summary: &backup::Summary,
    headline: &str,
    to_stderr: bool,
) -> Result<(), ToolError> {
    let out = if json {
        serde_json::to_string(summary)
            .map_err(|e| ToolError::internal(format!("Cannot print JSON: {e}")))?
    } else {
        let count = |table: &str, one: &str, many: &str| {
            let n = summary.count(table);
            format!("{n} {}", if n == 1 { one } else { many })
        };
        format!(
            "✅ {headline} (schema version {}, {}):\n    {}, {}, {}\n    {}, {}, {}",
            summary.schema,
            size(summary.bytes),
            count("tickets", "ticket", "tickets"),
            count("ticket_changes", "change", "changes"),
            count("comments", "comment", "comments"),
            count("users", "person", "people"),
            count("api_tokens", "API token", "API tokens"),
            count("audit_log", "audit entry", "audit entries"),
        )
    };
    if to_stderr {
        let _ = writeln!(std::io::stderr().lock(), "{out}");
    } else {
        let _ = writeln!(std::io::stdout().lock(), "{out}");
    }
    Ok(())
}

/// `bytes` for a person: bytes, KB, MB or GB.
fn size(bytes: u64) -> String {
    const KB: f64 = 1024.0;
    let b = bytes as f64;
    if b < KB {
        format!("{bytes} bytes")
    } else if b < KB * KB {
        format!("{:.1} KB", b / KB)
    } else if b < KB * KB * KB {
        format!("{:.1} MB", b / (KB * KB))
    } else {
        format!("{:.2} GB", b / (KB * KB * KB))
    }
}
