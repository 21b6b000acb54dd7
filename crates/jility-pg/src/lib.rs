//! `jility-pg`: jility's cloud store — one PostgreSQL database holding many workspaces.
//!
//! - [`store`]: the store, one workspace per [`store::PgStore`] (every statement binds it),
//!   the pool ([`store::PgDatabase`]) and the migrations (`pg_migrations/`).
//! - [`reach`]: whether the database can be reached, and how long anything waits to find
//!   out (`database_unavailable` within seconds; work its request gave up on writes nothing).
//! - [`measure`]: statement times, pool waits and failures, through the `metrics` facade.
//! - [`events`]: changes published with PostgreSQL `NOTIFY`, heard by every server process.
//!
//! No HTTP, no people, no MCP: the floors above (`jility-identity`, `jility-api`,
//! `jility-cloud`) run their own statements over [`store::PgDatabase`].

pub mod events;
pub mod measure;
pub mod reach;
pub mod store;

pub use store::{PgDatabase, PgStore};
