//! `jility-sqlite`: jility's local mode — the embedded SQLite store ([`store::SqlitePool`],
//! a handle that gives each caller a connection of its own, with the schema's migrations),
//! finding or creating a project's `.jility/data.db` ([`local`]), and hearing that the
//! database changed, whoever changed it ([`watch`]).

mod find;
mod inbox;
pub mod local;
mod planning;
mod related;
mod rows;
pub mod store;
mod views;
pub mod watch;

pub use local::{LocalTracker, Location, open};
pub use store::{MIGRATIONS, SqlitePool};
