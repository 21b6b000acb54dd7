//! Executed coverage over MCP, from the LCOV report `cargo tarpaulin` writes for the fixture
//! crate tests/fixtures/rust-coverage (measured once per run, in a copy of the crate; the
//! report's absolute paths name that copy, so the tests read it there).
//!
//! `cargo tarpaulin` is found on PATH or as `DUVET_TARPAULIN` (scripts/test installs it);
//! without it these tests say so and pass, unless `DUVET_REQUIRE_COVERAGE_TOOLS` is set, as
//! scripts/test sets it.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stderr
)]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use duvet::errors;
use serde_json::{Value, json};

use crate::support::{Project, identifier, start_over};
use mcp_testkit::Wire;

/// The measured copy of the fixture crate, with `coverage/lcov.info` (read only: tests that
/// run a command which writes in the project run it in a copy).
pub(crate) fn measured() -> Option<&'static Path> {
    static DIR: OnceLock<Option<PathBuf>> = OnceLock::new();
    DIR.get_or_init(|| crate::support::tarpaulin_measured(&[]))
        .as_deref()
}

#[tokio::test]
async fn unexecuted_requirements_are_those_whose_cited_code_did_not_all_run() {
    let Some(dir) = measured() else { return };
    let mcp = start_over(
        Wire::Stdio,
        dir,
        &["--coverage-report", "coverage/lcov.info"],
    )
    .await;
    let tools: Vec<String> = mcp
        .tools()
        .await
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    assert!(tools.contains(&"list_unexecuted_requirements".to_string()));
    let (items, page) = mcp
        .call_paged::<Vec<Value>>("list_unexecuted_requirements", json!({}))
        .await;
    let states: Vec<(String, String)> = items
        .iter()
        .map(|r| {
            (
                r["text"].as_str().unwrap().to_string(),
                r["state"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        states,
        [
            (
                "A server MAY close the connection after refusing a ping.".to_string(),
                "not_executed".to_string()
            ),
            (
                "A server MUST stop answering once it is shut down.".to_string(),
                "partly_executed".to_string()
            ),
        ],
        "{items:?}"
    );
    assert_eq!(page.total, 2);
    // The citation that did not run comes first, with its place.
    let shutdown = &items[1]["citations"];
    assert_eq!(shutdown[0]["status"], "not_executed");
    assert!(
        shutdown[0]["id"]
            .as_str()
            .unwrap()
            .starts_with("src/lib.rs:")
    );
    assert_eq!(shutdown[1]["status"], "executed");

    // get_requirement_status carries the same state.
    let pong = identifier(&mcp, "A server MUST answer every ping with a pong.").await;
    let status: Value = mcp
        .call_ok("get_requirement_status", json!({"req_identifier": pong}))
        .await;
    assert_eq!(status["execution"]["state"], "executed", "{status}");
    let may = identifier(
        &mcp,
        "A server MAY close the connection after refusing a ping.",
    )
    .await;
    let status: Value = mcp
        .call_ok("get_requirement_status", json!({"req_identifier": may}))
        .await;
    assert_eq!(status["execution"]["state"], "not_executed", "{status}");
}

#[tokio::test]
async fn without_a_report_the_coverage_tool_is_not_offered_and_statuses_say_nothing_of_it() {
    let Some(dir) = measured() else { return };
    let mcp = start_over(Wire::Stdio, dir, &[]).await;
    let tools: Vec<String> = mcp
        .tools()
        .await
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    assert!(!tools.contains(&"list_unexecuted_requirements".to_string()));
    let pong = identifier(&mcp, "A server MUST answer every ping with a pong.").await;
    let status: Value = mcp
        .call_ok("get_requirement_status", json!({"req_identifier": pong}))
        .await;
    assert!(status.get("execution").is_none(), "{status}");
}

#[tokio::test]
async fn a_missing_or_broken_report_is_a_structured_error_and_statuses_still_answer() {
    let Some(dir) = measured() else { return };
    let mcp = start_over(
        Wire::Stdio,
        dir,
        &["--coverage-report", "coverage/none.info"],
    )
    .await;
    let err = mcp
        .call_err("list_unexecuted_requirements", json!({}))
        .await;
    assert_eq!(err.code, errors::NO_COVERAGE);
    assert!(
        err.message
            .contains("no coverage report matches 'coverage/none.info'")
    );
    assert!(!err.retryable && err.hint.contains("tarpaulin"));

    // A report that is not LCOV (as one half written can be): retryable, and the status
    // of a requirement still answers, saying why its execution is unknown.
    let broken = Project::new();
    broken.write("broken.info", "SF:src/lib.rs\nDA:12,1\nDA:13");
    let path = broken.path("broken.info");
    let mcp = start_over(
        Wire::Stdio,
        dir,
        &[
            "--coverage-report",
            path.to_str().unwrap(),
            "--coverage-format",
            "lcov",
        ],
    )
    .await;
    let err = mcp
        .call_err("list_unexecuted_requirements", json!({}))
        .await;
    assert_eq!(err.code, errors::COVERAGE_UNREADABLE);
    assert!(err.retryable, "{err:?}");
    assert!(
        err.message
            .contains("line 3: the execution count is not a number"),
        "{err:?}"
    );
    let pong = identifier(&mcp, "A server MUST answer every ping with a pong.").await;
    let status: Value = mcp
        .call_ok("get_requirement_status", json!({"req_identifier": pong}))
        .await;
    assert_eq!(status["execution"]["state"], "unknown");
    assert!(
        status["execution"]["error"]
            .as_str()
            .unwrap()
            .contains("line 3")
    );
}

#[tokio::test]
async fn the_listing_with_the_coverage_toolset_keeps_within_the_budget() {
    mcp_testkit::protocol::check_listing_budget(
        crate::support::BIN,
        &["mcp", "--coverage-report", "coverage/lcov.info"],
    )
    .await;
}
