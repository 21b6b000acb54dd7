//! The local database of a project: where it is (`.jility/data.db`, found like git finds
//! `.git`), opening it, and the key that seals its cursors.

use std::path::{Path, PathBuf};

use mcp_common_core::{CursorKey, ToolError};

use crate::store::{MIGRATIONS, SqlitePool};
use jility_core::store::StoreError;
use jility_core::tracker::Tracker;

/// The tracker on a local SQLite database.
pub type LocalTracker = Tracker<SqlitePool>;

/// The context string of jility's cursor keys (blake3 `derive_key`).
const CURSOR_CONTEXT: &str = "jility 2026-11 list cursors v1";

/// Where the database is and which directory is the project root.
#[derive(Debug, Clone)]
pub struct Location {
    pub db: PathBuf,
    pub root: PathBuf,
}

/// The project root of a database path: the directory holding `.jility/`, else the file's
/// own directory.
fn root_of(db: &Path) -> PathBuf {
    let dir = db.parent().unwrap_or(Path::new(".")).to_path_buf();
    if dir.file_name().is_some_and(|n| n == ".jility") {
        dir.parent().map(Path::to_path_buf).unwrap_or(dir)
    } else {
        dir
    }
}

impl Location {
    pub fn explicit(db: PathBuf) -> Self {
        Self {
            root: root_of(&db),
            db,
        }
    }

    /// The nearest `.jility/data.db` from `start` upwards.
    pub fn find(start: &Path) -> Option<Self> {
        start.ancestors().find_map(|dir| {
            let db = dir.join(".jility").join("data.db");
            db.is_file().then(|| Self {
                db,
                root: dir.to_path_buf(),
            })
        })
    }

    pub fn in_dir(dir: &Path) -> Self {
        Self {
            db: dir.join(".jility").join("data.db"),
            root: dir.to_path_buf(),
        }
    }
}

/// The key that seals the cursors of the database at `db`, from a secret beside it
/// (`.jility/data.cursor-key`, owner-only): the CLI and every server process on the same
/// database (also after a restart) accept each other's cursors, a cursor of another database
/// is refused, and nobody who cannot read the file can forge one.
pub fn cursor_key(db: &Path) -> CursorKey {
    CursorKey::stored(CURSOR_CONTEXT, &db.with_extension("cursor-key"))
}

/// Open the database (creating the file and its directory when `create`), ready for use.
pub fn open(location: &Location, create: bool) -> Result<LocalTracker, ToolError> {
    if create && let Some(dir) = location.db.parent() {
        std::fs::create_dir_all(dir).map_err(|e| {
            ToolError::internal(format!("Cannot create {}: {e}", dir.display()))
                .with_hint("Check that the directory is writable, or pass --db.")
        })?;
    }
    if !create && !location.db.is_file() {
        return Err(no_database(&location.db));
    }
    let (pool, before) = SqlitePool::open(&location.db, create).map_err(|e| {
        // A local file is the user's own: what SQLite said about it is shown (a server's
        // database errors are only logged, `StoreError::Database`).
        let detail = match &e {
            StoreError::Database(detail) => Some(detail.clone()),
            _ => None,
        };
        let err = ToolError::from(e);
        let (message, hint) = match detail {
            Some(detail) => (
                detail,
                Some(
                    "Check that the file is a Jility database and is readable and writable.".into(),
                ),
            ),
            None => (err.message.clone(), err.hint.clone()),
        };
        ToolError {
            message: format!(
                "Cannot open the database {}: {message}",
                location.db.display(),
            ),
            hint,
            ..err
        }
    })?;
    if before > 0 && (before as usize) < MIGRATIONS.len() {
        tracing::info!(from = before, "upgraded the database schema");
    }
    Ok(Tracker::new(
        pool,
        location.root.clone(),
        cursor_key(&location.db),
    ))
}

pub fn no_database(path: &Path) -> ToolError {
    ToolError::not_found(format!("No Jility database at {}", path.display()))
        .with_hint("Run `jility init` in the project's root, or pass --db PATH / set JILITY_DB.")
}
