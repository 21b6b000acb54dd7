//! git-mile: issues and milestones stored in git refs (`refs/git-mile/<kind>/<id>`), one
//! event per commit, with a CLI (`git mile …`) and an MCP server (`git mile mcp-server`);
//! upstream git-mile's tasks (`refs/git-mile/tasks/<id>`) are read too ([`task`]).

pub mod catalog;
pub mod cli;
pub mod confirm;
pub mod errors;
pub mod event;
pub mod listing;
pub mod log;
pub mod model;
pub mod ops;
pub mod query;
pub mod quote;
pub mod ref_watch;
pub mod replay;
pub mod schema;
pub mod server;
pub mod store;
pub mod sync;
pub mod task;
pub mod task_write;
pub mod tracking;
pub mod views;
pub mod writes;
