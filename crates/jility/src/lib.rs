//! `jility`: the binary of the AI-native ticket tracker — its command line and its MCP
//! adapter. The domain is `jility-core`; local mode's store `jility-sqlite`; cloud mode's
//! server `jility-cloud` and its bridge `jility-bridge` (both behind the default `cloud`
//! feature: `--no-default-features` builds local mode alone).
//!
//! - [`server`]: the MCP tools, one handler generic over where operations run
//!   ([`jility_core::Backend`]);
//! - `confirm`: deleting a ticket and bulk edits confirmed with the user through the
//!   client (MRTR), for clients that can be asked;
//! - [`app`]: the composition root, the only module that names the adapter and a backend;
//! - [`cli`]: the command line, and [`cli::main`], the whole program behind `main.rs`.

pub mod app;
pub mod cli;
mod confirm;
pub mod server;
