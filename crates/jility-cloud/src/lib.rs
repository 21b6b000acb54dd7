//! `jility-cloud`: jility's cloud mode, composed — a team's tracker on PostgreSQL, served by
//! `jility serve`. It is the top of four crates, one per floor, whose boundaries the
//! compiler keeps; this one adds the pages for people and re-exports the floors below under
//! the paths they had when they were one crate (the binary and its tests name them so):
//!
//! - [`store`], [`reach`], [`events`] (`jility-pg`): the PostgreSQL store, one workspace
//!   per [`store::PgStore`], with its migrations; whether the database can be reached;
//!   changes published with PostgreSQL `NOTIFY` to every server process.
//! - [`auth`], [`ratelimit`], [`audit`], [`accounts`] (`jility-identity`): API tokens at
//!   rest, requests per minute per token, the audit log, people (users, roles, sessions,
//!   invites, resets), and what OAuth keeps — no HTTP.
//! - [`api`], [`public`] (`jility-api`): the REST API under `/api/v1` on axum, its OpenAPI
//!   document and TLS; it mounts the MCP endpoint it is handed (built by the binary) behind
//!   the same authentication, and [`api::ApiState`] is the backend of those MCP tools
//!   ([`jility_core::Backend`]).
//! - Here: [`web`], the web board for people at `/` (the pages of `jility-web` on
//!   [`web::CloudSite`], signed in with a session cookie), with the sign-in, invite, reset
//!   and settings pages; [`oauth`]: OAuth 2.1's endpoints and pages for MCP clients
//!   (metadata, registration, consent, tokens, connected clients); [`people`] mounts both.

pub mod oauth;
pub mod web;

// The floors below, by the paths they had when they were modules of this crate.
pub use jility_api::{api, public};
pub use jility_identity::{accounts, audit, auth, backup, ratelimit};
pub use jility_pg::{events, reach, store};

pub use api::{ApiState, ServeConfig};
pub use store::{PgDatabase, PgStore};

/// What `jility serve` serves people at `/` (handed to [`api::serve`] as its `people`): the
/// web board and its sign-in, invite and settings pages ([`web::routes`]), and OAuth's
/// metadata, registration, consent and token endpoints with Settings → Connected clients
/// ([`oauth::routes`]); `tls`: cookies are `Secure`.
pub fn people(state: &ApiState, tls: bool) -> axum::Router {
    web::routes(state, tls).merge(oauth::routes(&web::CloudSite::new(state, tls)))
}
