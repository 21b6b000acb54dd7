//! The integration tests of git mile (CLI and MCP server), one module a file, built as one test binary:
//! one link instead of one a file keeps the test build small (cargo links each file directly
//! under `tests/` into a binary of its own). They run on threads of one process, so a test
//! must not set the process's environment or working directory: give them to the child
//! processes it starts instead. Run one file's tests with
//! `cargo test -p git-mile --test git-mile <module>::`.
// Assertions and the fixtures of support/ fail the test by panicking.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

mod cli;
mod confirmations;
mod current;
mod edge;
mod faults;
mod hostile;
mod http;
mod log;
mod mcp;
mod session;
mod task_sync;
mod task_writes;
mod tasks;
mod upstream_tasks;
mod vocabulary;
mod writes;
