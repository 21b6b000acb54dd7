//! git-mile: issues and milestones stored in git refs (`refs/git-mile/<kind>/<id>`), one
//! event per commit, with a CLI (`git mile …`) and an MCP server (`git mile mcp-server`).

pub mod catalog;
pub mod cli;
pub mod errors;
pub mod event;
pub mod listing;
pub mod model;
pub mod ops;
pub mod query;
pub mod quote;
pub mod replay;
pub mod schema;
pub mod server;
pub mod store;
pub mod sync;
pub mod tracking;
pub mod views;
pub mod writes;
