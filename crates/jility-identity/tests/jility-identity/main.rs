//! jility-identity's integration tests, one test binary: accounts, API tokens and rate
//! limits against a real PostgreSQL, each test on a database of its own
//! ([`jility_testkit`]). Run one file's tests with
//! `cargo test -p jility-identity --test jility-identity tokens::`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stderr
)] // assertions in tests; a database left behind is reported on stderr

use jility_testkit as pg;

mod accounts;
mod rate_limit;
mod tokens;
