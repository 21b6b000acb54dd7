//! One project (tests/fixtures/upstream) through `duvet mcp` and, where it is installed, the
//! published duvet 0.4.3 (`cargo install duvet --version 0.4.3`; found through
//! `DUVET_043_BIN`, which scripts/test sets after installing it into
//! `~/.cache/duvet-0.4.3`, or in `$CARGO_HOME/bin` when cargo recorded that version): statuses as
//! `duvet report` computes them, the checks of `duvet query`, and what 0.4.3 does not show
//! (citations that quote no requirement, quote lines without a target). The answers 0.4.3
//! gave on this fixture are also written down here, so the tests hold where it is absent.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // assertions in tests

use crate::support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use mcp_testkit::McpProcess;
use serde_json::{Value, json};
use support::*;

const ACCEPT: &str = "A server MUST accept BREW and POST.";
const REJECT: &str = "A server MUST reject PUT requests.";
const LOG: &str = "The server MUST log each request.";
const ROTATE: &str = "The server SHOULD rotate logs daily.";
const GREETING: &str = "The client MUST send a greeting first.";
const WARM: &str = "The pot MUST be warmed.";
const SALT: &str = "The salt MUST be a non-secret random value, and applications SHOULD use a salt whose length is the hash length.";
const OUTPUT: &str = "The output length MUST NOT exceed 255 times the hash length.";
const INFO: &str = "The info string MAY be empty.";

/// What `duvet report --json` of duvet 0.4.3 says of the fixture (`incomplete` of `spec`
/// bytes: none → fully, all → not started).
const STATUSES: [(&str, &str); 9] = [
    (ACCEPT, "partially_implemented"), // the space between two quotes: 1 of 35 bytes
    (REJECT, "fully_implemented"),     // quoted line by line: the line break is no byte
    (LOG, "partially_implemented"),    // implementation + test, one space apart
    (ROTATE, "not_started"),           // only a slip quotes it
    (GREETING, "fully_implemented"),   // a test alone covers it
    (WARM, "not_started"),             // a TODO covers nothing
    (SALT, "fully_implemented"),       // a test of an IETF section, over two lines
    (OUTPUT, "fully_implemented"),
    (INFO, "not_started"),
];

fn fixture() -> Project {
    let p = Project::new();
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/upstream");
    for file in [
        ".duvet/config.toml",
        "specs/proto.md",
        "specs/rfc5869.txt",
        "src/lib.rs",
        "tests/t.rs",
    ] {
        p.write(file, &std::fs::read_to_string(from.join(file)).unwrap());
    }
    p
}

/// duvet 0.4.3, where it is installed.
pub(crate) fn duvet043() -> Option<PathBuf> {
    if let Some(bin) = std::env::var_os("DUVET_043_BIN").filter(|b| !b.is_empty()) {
        return Some(PathBuf::from(bin));
    }
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))?;
    let crates = std::fs::read_to_string(home.join(".crates.toml")).ok()?;
    let bin = home.join("bin/duvet");
    (crates.contains("\"duvet 0.4.3 (registry") && bin.exists()).then_some(bin)
}

fn normalize(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Requirement text → status, as `duvet mcp` answers.
async fn our_statuses(mcp: &McpProcess) -> BTreeMap<String, String> {
    let texts: Value = mcp.read_resource_json("duvet:///requirements").await;
    let by_id: BTreeMap<&str, &str> = texts
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["identifier"].as_str().unwrap(),
                r["text"].as_str().unwrap(),
            )
        })
        .collect();
    let prioritized: Value = mcp
        .call_ok("get_prioritized_requirements", json!({"limit": 1000}))
        .await;
    prioritized
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                by_id[r["identifier"].as_str().unwrap()].to_string(),
                r["status"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// Requirement text → status, as duvet 0.4.3's JSON report computes it.
fn their_statuses(bin: &Path, root: &Path) -> BTreeMap<String, String> {
    let out = root.join("duvet-report.json");
    let run = Command::new(bin)
        .args(["report", "--json"])
        .arg(&out)
        .current_dir(root)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    report["statuses"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(id, status)| {
            let annotation = &report["annotations"][id.parse::<usize>().unwrap()];
            let spec = status["spec"].as_u64().unwrap_or(0);
            let incomplete = status["incomplete"].as_u64().unwrap_or(0);
            let kind = if incomplete == 0 {
                "fully_implemented"
            } else if incomplete >= spec {
                "not_started"
            } else {
                "partially_implemented"
            };
            (
                normalize(annotation["comment"].as_str().unwrap()),
                kind.to_string(),
            )
        })
        .collect()
}

/// What `duvet query --check CHECK` of duvet 0.4.3 reports: each finding's heading (`Missing
/// test`, `Incomplete test:`, `Duplicate implementation annotations`) with the `file:line` it
/// points at.
fn their_findings(bin: &Path, root: &Path, check: &str) -> Vec<(String, String)> {
    let run = Command::new(bin)
        .args(["query", "--check", check])
        .current_dir(root)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
    let mut findings = Vec::new();
    let mut heading: Option<String> = None;
    for line in text.lines() {
        if let Some(h) = line.trim().strip_prefix("× ") {
            heading = Some(h.trim_end_matches(':').to_string());
        } else if let Some((_, at)) = line.split_once("─[")
            && let Some(h) = heading.take()
        {
            let place = at.trim_end_matches(']');
            let (file_line, _column) = place.rsplit_once(':').unwrap();
            findings.push((h, file_line.to_string()));
        }
    }
    findings.sort();
    findings
}

#[tokio::test]
async fn statuses_are_those_of_duvet_report() {
    let p = fixture();
    let mcp = p.start(&[]).await;
    let ours = our_statuses(&mcp).await;
    let expected: BTreeMap<String, String> = STATUSES
        .iter()
        .map(|(t, s)| (t.to_string(), s.to_string()))
        .collect();
    assert_eq!(ours, expected);
    match duvet043() {
        // In a copy: `duvet report` writes the requirements it extracts into .duvet/.
        Some(bin) => assert_eq!(
            their_statuses(&bin, fixture().root()),
            ours,
            "duvet 0.4.3 disagrees"
        ),
        None => eprintln!("duvet 0.4.3 is not installed: compared with its recorded answers"),
    }

    // Covered by a test alone: complete, but not cited, so listed as uncited. ROTATE, which
    // only a slip quotes, is cited: it shares its line with LOG, which an implementation
    // quotes, and duvet's CI check counts lines (crates/duvet/tests/duvet/ci.rs).
    let uncited: Value = mcp.call_ok("list_uncited_requirements", json!({})).await;
    let uncited: Vec<&str> = uncited
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["text"].as_str().unwrap())
        .collect();
    assert_eq!(uncited, [GREETING, WARM, SALT, INFO]);
    let search: Value = mcp
        .call_ok("search_requirements", json!({"query": "greeting"}))
        .await;
    let id = search[0]["identifier"].as_str().unwrap();
    let status: Value = mcp
        .call_ok("get_requirement_status", json!({"req_identifier": id}))
        .await;
    assert_eq!(status["status"], "fully_implemented");
    assert_eq!(status["cited"], false);
    assert_eq!(status["tested"], true);

    // A TODO alone: not started, not cited, listed as uncited (above), its TODO counted.
    let search: Value = mcp
        .call_ok("search_requirements", json!({"query": "warmed"}))
        .await;
    let id = search[0]["identifier"].as_str().unwrap();
    let status: Value = mcp
        .call_ok("get_requirement_status", json!({"req_identifier": id}))
        .await;
    assert_eq!(
        (&status["status"], &status["cited"], &status["todo_count"]),
        (&json!("not_started"), &json!(false), &json!(1))
    );
    mcp.shutdown().await;
}

#[tokio::test]
async fn checks_are_those_of_duvet_query() {
    let p = fixture();
    let mcp = p.start(&[]).await;

    let untested: Value = mcp.call_ok("list_untested_citations", json!({})).await;
    let mut ours: Vec<(String, String)> = untested
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let heading = match c["tested"].as_str().unwrap() {
                "none" => "Missing test",
                "partial" => "Incomplete test",
                other => panic!("{other}"),
            };
            (heading.to_string(), c["id"].as_str().unwrap().to_string())
        })
        .collect();
    ours.sort();
    let missing = |line: u32| ("Missing test".to_string(), format!("src/lib.rs:{line}"));
    let expected = vec![
        ("Incomplete test".to_string(), "src/lib.rs:20".to_string()),
        missing(11),
        missing(15),
        missing(2),
        missing(30),
        missing(43),
        missing(6),
    ];
    assert_eq!(ours, expected);
    let partial = untested
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["tested"] == "partial")
        .unwrap();
    assert_eq!(partial["tests"], json!(["tests/t.rs:11"]));
    assert_eq!(partial["target"], "specs/proto.md#halves");
    assert_eq!(partial["quote"], "The server MUST log each");

    let duplicates: Value = mcp.call_ok("list_duplicate_citations", json!({})).await;
    let dup: Vec<(&str, &Value)> = duplicates
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["id"].as_str().unwrap(), &c["duplicates"]))
        .collect();
    assert_eq!(
        dup,
        [
            ("src/lib.rs:2", &json!(["src/lib.rs:43"])),
            ("src/lib.rs:43", &json!(["src/lib.rs:2"]))
        ]
    );

    if let Some(bin) = duvet043() {
        let copy = fixture();
        assert_eq!(
            their_findings(&bin, copy.root(), "test"),
            ours,
            "--check test"
        );
        // 0.4.3 also calls a reference without a quote (src/lib.rs:48) a duplicate of nothing;
        // it duplicates no other annotation, so it is not listed here.
        let theirs: Vec<String> = their_findings(&bin, copy.root(), "duplicates")
            .into_iter()
            .map(|(_, at)| at)
            .filter(|at| at != "src/lib.rs:48")
            .collect();
        assert_eq!(
            theirs,
            ["src/lib.rs:2", "src/lib.rs:43"],
            "--check duplicates"
        );
    }

    // Filters narrow the checks as --section and --quote do.
    let narrowed: Value = mcp
        .call_ok(
            "list_untested_citations",
            json!({"section": "specs/proto.md#halves", "quote": "LOG EACH"}),
        )
        .await;
    assert_eq!(narrowed.as_array().unwrap().len(), 1);
    assert_eq!(narrowed[0]["id"], "src/lib.rs:20");
    mcp.shutdown().await;
}

#[tokio::test]
async fn citations_that_quote_no_requirement_are_listed_with_why() {
    let p = fixture();
    let mcp = p.start(&[]).await;
    let unattached: Value = mcp.call_ok("list_unattached_citations", json!({})).await;
    let items = unattached.as_array().unwrap();
    assert_eq!(items.len(), 2, "{unattached}");
    assert_eq!(items[0]["id"], "src/lib.rs:30");
    assert_eq!(items[0]["quote"], "Pots are round.");
    assert!(
        items[0]["why"]
            .as_str()
            .unwrap()
            .contains("has no requirements"),
        "{}",
        items[0]["why"]
    );
    assert_eq!(items[1]["id"], "src/lib.rs:48");
    assert_eq!(items[1]["target"], "specs/rfc5869.txt#section-1");
    assert!(items[1]["why"].as_str().unwrap().contains("quotes no text"));

    // duvet:///citations lists them after the attached ones, under their section.
    let all = mcp.read_resource_json("duvet:///citations").await;
    let unattached_paths: Vec<&str> = all
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c.get("why").is_some())
        .map(|c| c["full_path"].as_str().unwrap())
        .collect();
    assert_eq!(
        unattached_paths,
        [
            "/specifications/proto/sections/notes/citations/src/lib.rs:30",
            "/specifications/rfc5869/sections/section-1/citations/src/lib.rs:48",
        ]
    );
    // ... and that path reads.
    let one = mcp
        .read_resource_json(&format!("duvet://{}", unattached_paths[0]))
        .await;
    assert_eq!(one["line_number"], 30);
    assert!(one["why"].as_str().unwrap().contains("has no requirements"));
    assert!(
        one["context_lines"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l.as_str().unwrap().contains("fn round()"))
    );
    // A section's citations: attached and not.
    let accept = mcp
        .read_resource_json("duvet:///specifications/proto/sections/accept/citations")
        .await;
    assert_eq!(accept.as_array().unwrap().len(), 5);
    assert!(
        accept
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["requirements"].as_array().unwrap().len() == 1)
    );
    let missing = mcp
        .read_resource("duvet:///specifications/proto/sections/accept/citations/src/lib.rs:30")
        .await
        .unwrap_err();
    assert!(missing.contains("not found"), "{missing}");
    mcp.shutdown().await;
}

#[tokio::test]
async fn quote_lines_without_a_target_are_a_slip_only_when_they_quote_a_specification() {
    let p = fixture();
    let mcp = p.start(&[]).await;
    let invalid: Value = mcp.call_ok("list_invalid_citations", json!({})).await;
    let items = invalid.as_array().unwrap();
    // The slip is reported with the section it quotes; the commented-out attribute is not.
    assert_eq!(items.len(), 1, "{invalid}");
    assert_eq!(items[0]["line_number"], 39);
    assert_eq!(
        items[0]["comment_text"],
        "//# The server SHOULD rotate logs daily."
    );
    let error = items[0]["error"].as_str().unwrap();
    assert!(error.contains("without a meta line"), "{error}");
    assert!(error.contains("specs/proto.md#halves"), "{error}");
    mcp.shutdown().await;
}

#[tokio::test]
async fn every_requirement_list_filters_by_spec_section_and_quote() {
    let p = fixture();
    let mcp = p.start(&[]).await;
    let texts = |v: &Value| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|r| r["text"].as_str().unwrap().to_string())
            .collect()
    };
    let uncited: Value = mcp
        .call_ok("list_uncited_requirements", json!({"spec": "rfc5869"}))
        .await;
    assert_eq!(texts(&uncited), [SALT, INFO]);
    let uncited: Value = mcp
        .call_ok(
            "list_uncited_requirements",
            json!({"spec": "specs/rfc5869.txt", "section": "2.2"}),
        )
        .await;
    assert_eq!(texts(&uncited), [INFO]);
    let uncited: Value = mcp
        .call_ok(
            "list_uncited_requirements",
            json!({"quote": "the POT must"}),
        )
        .await;
    assert_eq!(texts(&uncited), [WARM]);

    let (prioritized, page) = mcp
        .call_paged::<Vec<Value>>(
            "get_prioritized_requirements",
            json!({"section": "accept", "limit": 1}),
        )
        .await;
    assert_eq!(prioritized[0]["status"], "partially_implemented");
    assert_eq!(page.total, 2);
    // The cursor is bound to the filter.
    let cursor = page.next_cursor.unwrap();
    let err = mcp
        .call_err(
            "get_prioritized_requirements",
            json!({"section": "halves", "cursor": cursor}),
        )
        .await;
    assert_eq!(err.code, duvet::errors::INVALID_PARAMS);
    let (rest, _) = mcp
        .call_paged::<Vec<Value>>(
            "get_prioritized_requirements",
            json!({"section": "accept", "cursor": cursor}),
        )
        .await;
    assert_eq!(rest.len(), 1);

    let found: Value = mcp
        .call_ok(
            "search_requirements",
            json!({"query": "MUST", "spec": "proto", "section": "halves"}),
        )
        .await;
    assert_eq!(texts(&found), [LOG]);

    // Unknown names are invalid params that say what exists.
    for (args, says) in [
        (json!({"spec": "rfc9999"}), "ids: proto, rfc5869"),
        (json!({"section": "section-9"}), "not found"),
        (
            json!({"spec": "proto", "section": "rfc5869#section-1"}),
            "not a section of",
        ),
    ] {
        let err = mcp
            .call_err("list_uncited_requirements", args.clone())
            .await;
        assert_eq!(err.code, duvet::errors::INVALID_PARAMS, "{args}");
        let text = format!("{} {}", err.message, err.hint);
        assert!(text.contains(says), "{args}: {text}");
    }
    mcp.shutdown().await;
}

#[tokio::test]
async fn the_title_of_an_rfc_indented_by_seven_is_read() {
    let p = fixture();
    let mcp = p.start(&[]).await;
    let specs = mcp.read_resource_json("duvet:///specifications").await;
    assert_eq!(
        specs[1]["description"],
        "HMAC-based Extract-and-Expand Key Derivation Function (HKDF)"
    );
    mcp.shutdown().await;
}
