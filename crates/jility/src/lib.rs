//! `jility`: an AI-native ticket tracker on an embedded SQLite database, with a CLI and an
//! MCP server (`jility --mcp-server`, over stdio or `--http ADDR`).
//!
//! The library is what the binaries share:
//! - [`tracker`]: the domain — every operation, validation, the workflow, the change log —
//!   written against [`store::Store`]; [`model`], [`params`] (inputs), [`description`]
//!   (precise edits), [`templates`], [`errors`] (the error codes).
//! - [`store`]: storage behind a trait; [`store::sqlite`] is the embedded database, with
//!   [`store::sqlite::SqlitePool`] for concurrent callers; [`store::postgres`] the cloud
//!   server's, one workspace per store.
//! - [`auth`]: the cloud server's workspaces and API tokens (hashed at rest, scoped);
//!   [`ratelimit`]: requests per minute per token, shared through the database; [`audit`]:
//!   the log of every API write and authentication failure.
//! - [`local`]: finding and opening a project's `.jility/data.db`, and its cursor key.
//! - [`service`]: the tracker for async code — operations on blocking threads.
//! - [`render`]: the markdown of every answer (MCP text and CLI output).
//! - [`api`]: the REST API of `jility serve` (`/api/v1`, bearer tokens, rate limits), on
//!   PostgreSQL; [`client`]: the command line's blocking client of that API (`jility auth`).
//! - [`ops`]: the table of operations (tool name, scope, REST route, cache time, tracker
//!   call) that the MCP tools, the REST API and the bridge all read.
//! - [`events`]: change events across every `jility serve` process (PostgreSQL NOTIFY).
//! - [`bridge`]: the cloud bridge (`JILITY_MODE=cloud jility --mcp-server`): the tools
//!   through the API, with a cache kept fresh by the API's event stream.
//! - [`server`]: the MCP tools, on any backend (local, bridge, `/mcp` of `jility serve`);
//!   [`cli`]: the command line, and [`cli::main`], the whole program behind `main.rs`.

pub mod api;
pub mod audit;
pub mod auth;
pub mod bridge;
pub mod cli;
pub mod client;
pub mod description;
pub mod errors;
pub mod events;
pub mod local;
pub mod model;
pub mod ops;
pub mod params;
pub mod ratelimit;
pub mod render;
pub mod server;
pub mod service;
pub mod store;
pub mod templates;
pub mod tracker;
