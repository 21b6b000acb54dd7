//! The integration tests of twig-mcp, one module a file, built as one test binary:
//! one link instead of one a file keeps the test build small (cargo links each file directly
//! under `tests/` into a binary of its own). They run on threads of one process, so a test
//! must not set the process's environment or working directory: give them to the child
//! processes it starts instead. Run one file's tests with
//! `cargo test -p twig-mcp --test twig-mcp <module>::`.
// network_tools' realistic payloads are large `json!` literals.
#![recursion_limit = "256"]
// Assertions and the fixtures of support/ fail the test by panicking.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

mod bounds;
mod cascade;
mod current;
mod edge;
mod health;
mod health_remote;
mod http;
mod local_tools;
mod network_tools;
mod orphans;
mod protocol;
mod surface;
