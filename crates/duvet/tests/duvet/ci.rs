//! "Cited" as `duvet report --ci --require-citations` (0.4.3, `report/ci.rs`) counts it: per
//! line of the specification, an implementation, implication or exception touching a line
//! cites it, a test or TODO does not, and a requirement is cited when every line of its text
//! is. Each case is a project of its own, because duvet's CI check answers only pass or fail
//! for a whole project: where duvet 0.4.3 is installed (`DUVET_043_BIN`, as in upstream.rs),
//! it runs on the same tree and must pass exactly when our uncited list is empty. The answers
//! it gave are written down here, so the tests hold where it is absent.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // assertions in tests

use crate::support::*;
use crate::upstream::duvet043;

use std::path::Path;
use std::process::Command;

use mcp_testkit::McpProcess;
use serde_json::{Value, json};

const CONFIG: &str = r#"'$schema' = "https://awslabs.github.io/duvet/config/v0.4.0.json"

[[source]]
pattern = "src/**/*.rs"

[[specification]]
source = "specs/spec.md"
format = "markdown"

[report.html]
enabled = false
"#;

/// One requirement on one line.
const ONE_LINE: &str = "The server MUST log each request.";
/// One requirement over two lines of the file.
const TWO_LINES: &str = "The server MUST close idle\nconnections after one minute.";
/// Two requirements on one line.
const SHARED_LINE: &str = "The server MUST log each request. The client MUST retry twice.";

/// Three requirements over three lines, the third starting at the end of the second line.
const FRAGMENT: &str = "A frame can only be sent by the server.  Servers MUST\nNOT send a frame before the handshake.  A\nserver MUST treat receipt of a frame as an error.";

/// A case: the section's text, the annotations of `src/lib.rs`, and what is uncited.
struct Case {
    name: &'static str,
    section: &'static str,
    annotations: &'static str,
    /// Our uncited requirements, which duvet 0.4.3's CI check agrees with: it passes exactly
    /// when this is empty.
    uncited: &'static [&'static str],
}

const CASES: &[Case] = &[
    Case {
        name: "implementation",
        section: ONE_LINE,
        annotations: "//= specs/spec.md#rules\n//# The server MUST log each request.\n",
        uncited: &[],
    },
    Case {
        name: "exception only",
        section: ONE_LINE,
        annotations: "//= specs/spec.md#rules\n//= type=exception\n//= reason=A proxy logs for us.\n//# The server MUST log each request.\n",
        uncited: &[],
    },
    Case {
        name: "implication only",
        section: ONE_LINE,
        annotations: "//= specs/spec.md#rules\n//= type=implication\n//# The server MUST log each request.\n",
        uncited: &[],
    },
    Case {
        name: "test only",
        section: ONE_LINE,
        annotations: "//= specs/spec.md#rules\n//= type=test\n//# The server MUST log each request.\n",
        uncited: &["The server MUST log each request."],
    },
    Case {
        name: "TODO only",
        section: ONE_LINE,
        annotations: "//= specs/spec.md#rules\n//= type=todo\n//# The server MUST log each request.\n",
        uncited: &["The server MUST log each request."],
    },
    Case {
        name: "nothing",
        section: ONE_LINE,
        annotations: "fn nothing() {}\n",
        uncited: &["The server MUST log each request."],
    },
    Case {
        name: "part of its only line",
        section: ONE_LINE,
        annotations: "//= specs/spec.md#rules\n//# MUST log\n",
        uncited: &[],
    },
    Case {
        name: "its first line of two",
        section: TWO_LINES,
        annotations: "//= specs/spec.md#rules\n//# The server MUST close idle\n",
        uncited: &["The server MUST close idle connections after one minute."],
    },
    Case {
        name: "a word of each of its two lines",
        section: TWO_LINES,
        annotations: "//= specs/spec.md#rules\n//# idle connections\n",
        uncited: &[],
    },
    Case {
        name: "one line implemented, the other excepted",
        section: TWO_LINES,
        annotations: "//= specs/spec.md#rules\n//# The server MUST close idle\n\n//= specs/spec.md#rules\n//= type=exception\n//= reason=The OS does.\n//# connections after one minute.\n",
        uncited: &[],
    },
    Case {
        name: "another requirement of the same line",
        section: SHARED_LINE,
        annotations: "//= specs/spec.md#rules\n//# The server MUST log each request.\n",
        uncited: &[],
    },
    Case {
        name: "an exception of another requirement of the same line",
        section: SHARED_LINE,
        annotations: "//= specs/spec.md#rules\n//= type=exception\n//= reason=Clients are not ours.\n//# The client MUST retry twice.\n",
        uncited: &[],
    },
    Case {
        name: "a test of the same line",
        section: SHARED_LINE,
        annotations: "//= specs/spec.md#rules\n//= type=test\n//# The server MUST log each request.\n",
        uncited: &[
            "The server MUST log each request.",
            "The client MUST retry twice.",
        ],
    },
    Case {
        // The quote of the third requirement touches the second line with one letter ("A"):
        // duvet places that part as an empty slice, on that line, so the line is cited, and
        // with it the second requirement (its JSON report shows no such reference).
        name: "a one-letter part of another quote",
        section: FRAGMENT,
        annotations: "//= specs/spec.md#rules\n//# A frame can only be sent by the server.\n\n//= specs/spec.md#rules\n//# A server MUST treat receipt of a frame as an error.\n",
        uncited: &[],
    },
    Case {
        name: "without that quote",
        section: FRAGMENT,
        annotations: "//= specs/spec.md#rules\n//# A frame can only be sent by the server.\n",
        uncited: &[
            "Servers MUST NOT send a frame before the handshake.",
            "A server MUST treat receipt of a frame as an error.",
        ],
    },
];

fn project(case: &Case) -> Project {
    let p = Project::new();
    p.write(".duvet/config.toml", CONFIG);
    p.write(
        "specs/spec.md",
        &format!("# Spec\n\n## Rules\n\n{}\n", case.section),
    );
    p.write("src/lib.rs", case.annotations);
    p
}

async fn texts(mcp: &McpProcess, args: Value) -> Vec<String> {
    let list: Value = mcp.call_ok("list_uncited_requirements", args).await;
    list.as_array()
        .unwrap()
        .iter()
        .map(|r| r["text"].as_str().unwrap().to_string())
        .collect()
}

/// Whether `duvet report --ci --require-citations` of duvet 0.4.3 passes on `root`, and what
/// it said; `require_tests` as given (0.4.3 requires tests unless told not to).
fn their_ci(bin: &Path, root: &Path, require_tests: bool) -> (bool, String) {
    let run = Command::new(bin)
        .args(["report", "--ci", "--require-citations"])
        .arg(format!("--require-tests={require_tests}"))
        .current_dir(root)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
    (run.status.success(), said)
}

#[tokio::test]
async fn uncited_is_what_duvet_ci_fails() {
    let bin = duvet043();
    if bin.is_none() {
        eprintln!("duvet 0.4.3 is not installed: compared with its recorded answers");
    }
    for case in CASES {
        let p = project(case);
        let mcp = p.start(&[]).await;
        let ours = texts(&mcp, json!({})).await;
        assert_eq!(ours, case.uncited, "{}: our uncited list", case.name);
        // `cited` in the status says the same.
        let all: Value = mcp
            .call_ok("search_requirements", json!({"query": "MUST"}))
            .await;
        for r in all.as_array().unwrap() {
            let status: Value = mcp
                .call_ok(
                    "get_requirement_status",
                    json!({"req_identifier": r["identifier"]}),
                )
                .await;
            let text = r["text"].as_str().unwrap();
            assert_eq!(
                status["cited"],
                !case.uncited.contains(&text),
                "{}: cited of {text}",
                case.name
            );
        }
        mcp.shutdown().await;
        if let Some(bin) = &bin {
            // In a copy: `duvet report` writes the requirements it extracts into .duvet/.
            let (passed, said) = their_ci(bin, project(case).root(), false);
            assert_eq!(
                passed,
                case.uncited.is_empty(),
                "{}: duvet 0.4.3 disagrees: {said}",
                case.name
            );
            if !passed {
                assert!(
                    said.contains("Specification requirements missing citation"),
                    "{}: {said}",
                    case.name
                );
            }
        }
    }
}

#[tokio::test]
async fn exception_only_requirements_are_cited_and_listed_apart() {
    let case = CASES.iter().find(|c| c.name == "exception only").unwrap();
    let p = project(case);
    let mcp = p.start(&[]).await;
    assert!(texts(&mcp, json!({})).await.is_empty());
    let excepted: Value = mcp
        .call_ok("list_uncited_requirements", json!({"excepted": true}))
        .await;
    assert_eq!(
        excepted,
        json!([{
            "identifier": excepted[0]["identifier"],
            "full_path": excepted[0]["full_path"],
            "text": ONE_LINE,
            "exception": "A proxy logs for us.",
        }])
    );
    let status: Value = mcp
        .call_ok(
            "get_requirement_status",
            json!({"req_identifier": excepted[0]["identifier"]}),
        )
        .await;
    assert_eq!(
        (&status["cited"], &status["exception"], &status["status"]),
        (
            &json!(true),
            &json!("A proxy logs for us."),
            &json!("fully_implemented")
        )
    );
    // Filters apply to the excepted list too; its cursors are not the uncited list's.
    assert!(
        texts(&mcp, json!({"excepted": true, "quote": "retry"}))
            .await
            .is_empty()
    );
    let (_, page) = mcp
        .call_paged::<Vec<Value>>(
            "list_uncited_requirements",
            json!({"excepted": true, "limit": 1}),
        )
        .await;
    assert_eq!(page.total, 1);
    mcp.shutdown().await;

    // Implemented in part, excepted for the rest: cited, and listed as excepted (without the
    // exception it would not be cited).
    let mixed = CASES
        .iter()
        .find(|c| c.name == "one line implemented, the other excepted")
        .unwrap();
    let p = project(mixed);
    let mcp = p.start(&[]).await;
    assert_eq!(
        texts(&mcp, json!({"excepted": true})).await,
        ["The server MUST close idle connections after one minute."]
    );
    mcp.shutdown().await;

    // An exception of the other requirement of its line cites this one too, and that
    // exception's reason is the one it is listed with (every excepted item says why).
    let shared = CASES
        .iter()
        .find(|c| c.name == "an exception of another requirement of the same line")
        .unwrap();
    let p = project(shared);
    let mcp = p.start(&[]).await;
    let excepted: Value = mcp
        .call_ok("list_uncited_requirements", json!({"excepted": true}))
        .await;
    let listed: Vec<(&str, &Value)> = excepted
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["text"].as_str().unwrap(), &r["exception"]))
        .collect();
    assert_eq!(
        listed,
        [
            (
                "The server MUST log each request.",
                &json!("Clients are not ours.")
            ),
            (
                "The client MUST retry twice.",
                &json!("Clients are not ours.")
            ),
        ]
    );
    let status: Value = mcp
        .call_ok(
            "get_requirement_status",
            json!({"req_identifier": excepted[0]["identifier"]}),
        )
        .await;
    assert_eq!(
        (&status["cited"], &status["exception"], &status["status"]),
        (
            &json!(true),
            &json!("Clients are not ours."),
            &json!("not_started")
        )
    );
    mcp.shutdown().await;

    // Implemented: not in the excepted list.
    let implemented = CASES.iter().find(|c| c.name == "implementation").unwrap();
    let p = project(implemented);
    let mcp = p.start(&[]).await;
    assert!(texts(&mcp, json!({"excepted": true})).await.is_empty());
    mcp.shutdown().await;
}

/// `--require-tests` (on unless turned off) is another check: lines an implementation touches
/// that no test, implication or exception touches. It does not change what is cited; those
/// implementations are what `list_untested_citations` lists.
#[tokio::test]
async fn require_tests_is_a_separate_check() {
    let case = CASES.iter().find(|c| c.name == "implementation").unwrap();
    let p = project(case);
    let mcp = p.start(&[]).await;
    assert!(texts(&mcp, json!({})).await.is_empty());
    let untested: Value = mcp.call_ok("list_untested_citations", json!({})).await;
    assert_eq!(untested.as_array().unwrap().len(), 1, "{untested}");
    assert_eq!(untested[0]["id"], "src/lib.rs:1");
    mcp.shutdown().await;
    if let Some(bin) = duvet043() {
        let (passed, said) = their_ci(&bin, project(case).root(), true);
        assert!(!passed, "{said}");
        assert!(said.contains("Citation missing test"), "{said}");
        // An exception needs no test.
        let excepted = CASES.iter().find(|c| c.name == "exception only").unwrap();
        let (passed, said) = their_ci(&bin, project(excepted).root(), true);
        assert!(passed, "{said}");
    }
}
