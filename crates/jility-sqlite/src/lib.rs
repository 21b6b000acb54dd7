//! `jility-sqlite`: jility's local mode — the embedded SQLite store ([`store::SqlitePool`],
//! a handle that gives each caller a connection of its own, with the schema's migrations)
//! and finding or creating a project's `.jility/data.db` ([`local`]).

pub mod local;
pub mod store;

pub use local::{LocalTracker, Location, open};
pub use store::{MIGRATIONS, SqlitePool};
