//! jility-pg's integration tests, one test binary: the PostgreSQL store against a real
//! server, each test on a database of its own ([`jility_testkit`]). Run one file's tests
//! with `cargo test -p jility-pg --test jility-pg search_scale::`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stderr
)] // assertions in tests; a database left behind is reported on stderr

use jility_testkit as pg;

mod postgres_store;
mod query_probe;
mod search_scale;
