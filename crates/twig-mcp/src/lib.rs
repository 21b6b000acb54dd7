//! twig-mcp: a read-only MCP server over the branch-stack data of the `twig` CLI, the git
//! repository, GitHub pull requests and Jira issues.
//!
//! Modules by concern: `server` (the MCP surface), `tools` (tool logic), `prompts`,
//! `resources`, `subscriptions` and `include` (what `--disable` leaves out); `errors` (the
//! error codes); `state`, `git`, `history`, `reflog`, `graph` and `health` (the domain: twig's
//! files, the repository, its commit graph, what its reflogs say of a branch's own work, the
//! branch tree, the stack's health); `remote` (GitHub
//! and Jira clients); `types` (responses).

pub mod context;
pub mod errors;
pub mod git;
pub mod graph;
pub mod health;
pub mod history;
pub mod include;
pub mod prompts;
pub mod reflog;
pub mod remote;
pub mod resources;
pub mod server;
pub mod state;
pub mod subscriptions;
pub mod tools;
pub mod types;
