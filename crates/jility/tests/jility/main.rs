//! jility's integration tests, one test binary (one link, one file on disk instead of 36):
//! each file is a module, the fixtures (`support`, `cloud`, `pg`, `lossy`, `web`, `browser`)
//! are shared. Run one file's tests with `cargo test -p jility --test jility cli_cloud::`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stderr
)] // assertions in tests; servers' logs passed on to stderr

mod browser;
mod cloud;
mod lossy;
mod support;
mod web;
// A PostgreSQL database of its own for each test, as jility-pg's and jility-identity's tests.
use jility_testkit as pg;

mod accounts_cli;
mod api;
mod api_endpoints;
mod async_reads;
mod audit;
mod backup;
mod bridge;
mod bridge_signin;
mod bridge_staleness;
mod bulk;
mod cli;
mod cli_cloud;
mod cli_hostile;
mod cli_terminal;
mod confirmations;
mod current;
mod edge;
mod envelope;
mod fair_share;
mod faults;
mod frozen;
mod http;
mod idempotency;
mod inbox;
mod local_only;
mod mcp;
mod nul_sweep;
mod oauth;
mod oauth_redirects;
mod operations;
mod outage;
mod paging;
mod planning;
mod planning_input;
mod plans;
mod probes;
mod query;
mod related;
mod remote_mcp;
mod standbys;
mod storage;
mod stream_expiry;
mod tls;
mod token_api;
mod tokens_cli;
mod web_attack;
mod web_cloud;
mod web_list;
mod web_local;
mod web_ticket;
mod web_webhooks;
mod webhooks;
