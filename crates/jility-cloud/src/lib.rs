//! `jility-cloud`: jility's cloud mode — a team's tracker on PostgreSQL, served by
//! `jility serve`.
//!
//! - [`store`]: the PostgreSQL store, one workspace per [`store::PgStore`] (every statement
//!   binds it), with its migrations.
//! - [`auth`]: workspaces' API tokens at rest (hashed, scoped, expiring, revocable);
//!   [`ratelimit`]: requests per minute per token, shared through the database;
//!   [`audit`]: the log of every API write and authentication failure;
//!   [`events`]: changes published with PostgreSQL `NOTIFY` to every server process.
//! - [`accounts`]: people — users (Argon2id passwords), roles in workspaces, web
//!   sessions, invite and password-reset links, sign-in limits.
//! - [`api`]: the REST API under `/api/v1` on axum, its OpenAPI document and TLS; it mounts
//!   the MCP endpoint it is handed (built by the binary) behind the same authentication, and
//!   [`api::ApiState`] is the backend of those MCP tools ([`jility_core::Backend`]).
//! - [`web`]: the web board for people at `/` (the pages of `jility-web` on
//!   [`web::CloudSite`], signed in with a session cookie), with the sign-in, invite,
//!   reset and settings pages; [`oauth`]: OAuth 2.1 for MCP clients (metadata, registration,
//!   consent, tokens, connected clients); [`public`]: where the server is as its users reach
//!   it, and the challenges that send a client without a token to OAuth; [`people`] mounts
//!   both.

pub mod accounts;
pub mod api;
pub mod audit;
pub mod auth;
pub mod events;
pub mod oauth;
pub mod public;
pub mod ratelimit;
pub mod reach;
pub mod store;
pub mod web;

pub use api::{ApiState, ServeConfig};
pub use store::{PgDatabase, PgStore};

/// What `jility serve` serves people at `/` (handed to [`api::serve`] as its `people`): the
/// web board and its sign-in, invite and settings pages ([`web::routes`]), and OAuth's
/// metadata, registration, consent and token endpoints with Settings → Connected clients
/// ([`oauth::routes`]); `tls`: cookies are `Secure`.
pub fn people(state: &ApiState, tls: bool) -> axum::Router {
    web::routes(state, tls).merge(oauth::routes(&web::CloudSite::new(state, tls)))
}
