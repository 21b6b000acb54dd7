//! The integration tests of duvet mcp, one module a file, built as one test binary:
//! one link instead of one a file keeps the test build small (cargo links each file directly
//! under `tests/` into a binary of its own). They run on threads of one process, so a test
//! must not set the process's environment or working directory: give them to the child
//! processes it starts instead. Run one file's tests with
//! `cargo test -p duvet --test duvet <module>::`.
// Assertions and the fixtures of support/ fail the test by panicking.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

mod ci;
mod coverage;
mod coverage_arguments;
mod current;
mod download;
mod edge;
mod extract;
mod hostile;
mod hostile_cli;
mod hostile_download;
mod html;
mod http;
mod identifiers;
mod init;
mod java_coverage;
mod json_v2;
mod mcp;
mod query;
mod query_coverage;
mod report;
mod report_coverage;
mod source_links;
mod subscriptions;
mod surface;
mod upstream;
