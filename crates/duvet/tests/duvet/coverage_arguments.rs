//! `list_unexecuted_requirements` checks its arguments before it reads the coverage reports:
//! a bad argument is the caller's mistake (`invalid_params`) whatever the reports' state,
//! even when none of the configured reports exists (`no_coverage` otherwise).

use duvet::errors;
use serde_json::json;

use crate::support::{coffee_project, start_over};
use mcp_testkit::Wire;

#[tokio::test]
async fn bad_arguments_are_invalid_params_before_the_reports_are_read() {
    let p = coffee_project();
    let mcp = start_over(
        Wire::Stdio,
        p.root(),
        &["--coverage-report", "coverage/none.info"],
    )
    .await;
    for (args, says) in [
        (json!({"limit": 0}), "limit 0 is out of range"),
        (json!({"limit": 5000}), "limit 5000 is out of range"),
        (
            json!({"spec": "rfc1234"}),
            "'rfc1234' is not a specification of this project",
        ),
        (
            json!({"section": "section-9.9"}),
            "Section 'section-9.9' not found",
        ),
        (json!({"cursor": "not-a-cursor"}), "cursor"),
    ] {
        let err = mcp
            .call_err("list_unexecuted_requirements", args.clone())
            .await;
        assert_eq!(err.code, errors::INVALID_PARAMS, "{args}: {err:?}");
        assert!(err.message.contains(says), "{args}: {err:?}");
    }
    // Good arguments reach the reports, which are missing.
    for args in [json!({}), json!({"spec": "rfc2324", "limit": 5})] {
        let err = mcp
            .call_err("list_unexecuted_requirements", args.clone())
            .await;
        assert_eq!(err.code, errors::NO_COVERAGE, "{args}: {err:?}");
    }
}
