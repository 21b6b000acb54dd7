//! `jility-identity`: who may do what in jility's cloud mode, kept in its PostgreSQL
//! database ([`jility_pg`]), without HTTP.
//!
//! - [`auth`]: workspaces' API tokens at rest (hashed, scoped, expiring, revocable);
//!   [`ratelimit`]: requests per minute per token, shared through the database;
//!   [`audit`]: the log of every API write and authentication failure.
//! - [`accounts`]: people — users (Argon2id passwords), roles in workspaces, web
//!   sessions, invite and password-reset links, sign-in limits.
//! - [`backup`]: a database's workspaces, people and history to a file and back
//!   (`jility admin backup` / `restore`): one snapshot, a versioned format.
//! - [`oauth`]: what OAuth 2.1 keeps for MCP clients — registered clients, codes, grants
//!   and refresh tokens (PKCE S256), the token endpoints' limits, and RFC 6749's errors.

pub mod accounts;
pub mod audit;
pub mod auth;
pub mod backup;
pub mod oauth;
pub mod ratelimit;
