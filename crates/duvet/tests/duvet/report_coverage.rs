//! `duvet report --coverage-report GLOB [--coverage-format lcov|jacoco-xml]`: each
//! requirement's executed state in the JSON reports (`execution`, additive, only when asked)
//! and on the HTML page, the same as `duvet mcp` answers (`get_requirement_status`'s
//! `execution`) and as `duvet query --check coverage -v` marks the implementations (executed
//! or not) for the same project:
//!
//! * the Rust fixture measured by `cargo tarpaulin` (tests/duvet/coverage.rs's report, read in
//!   a copy), and the Java fixture's JaCoCo report (`DUVET_JACOCO_XML`); without them those
//!   tests say so and pass, unless `DUVET_REQUIRE_COVERAGE_TOOLS` is set;
//! * tests/fixtures/upstream with a hand-written LCOV report, always: every state, the v2
//!   report, what the flag leaves as it was (the JSON reports but for `execution`, `--ci`),
//!   and the reports that cannot be read, which stop the report before it writes anything.
#![allow(clippy::print_stderr)] // the notes when a tool is absent

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Command, Output};

use mcp_testkit::Wire;
use serde_json::{Value, json};

use crate::query::query;
use crate::report::{fixture, stderr};
use crate::support::{BIN, Project, identifier, measured_copy, start_over};

fn report(p: &Project, args: &[&str]) -> Output {
    Command::new(BIN)
        .arg("report")
        .args(args)
        .current_dir(p.root())
        .env_remove("CI")
        .output()
        .unwrap()
}

fn read_json(p: &Project, rel: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p.path(rel)).unwrap()).unwrap()
}

/// The `execution` of each requirement (`SPEC` annotation) of a v1 JSON report, by its text
/// (whitespace collapsed).
fn v1_executions(v1: &Value) -> BTreeMap<String, Value> {
    v1["annotations"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["type"] == "SPEC")
        .filter_map(|a| {
            let text = a["comment"]
                .as_str()?
                .split_whitespace()
                .collect::<Vec<_>>();
            Some((text.join(" "), a.get("execution")?.clone()))
        })
        .collect()
}

/// The `execution` of each requirement of a v2 report by where it is written (file, line),
/// and of each `SPEC` annotation of the v1 report written at the same place.
fn v1_and_v2(v1: &Value, v2: &Value) -> Vec<(Option<Value>, Option<Value>)> {
    let linked = &v2["sources"]["https://awslabs.github.io/duvet/v2/sources.json#linked"];
    let v1_at: BTreeMap<(String, u64), Option<Value>> = v1["annotations"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["type"] == "SPEC")
        .map(|a| {
            (
                (
                    a["source"].as_str().unwrap().to_string(),
                    a["line"].as_u64().unwrap_or(0),
                ),
                a.get("execution").cloned(),
            )
        })
        .collect();
    v2["annotations"]["https://awslabs.github.io/duvet/v2/annotations.json#requirement"]
        .as_object()
        .unwrap()
        .values()
        .map(|r| {
            let file = linked[r["source"]["src"].as_str().unwrap()]["file_name"]
                .as_str()
                .unwrap()
                .to_string();
            let line = r["source"]["line"].as_u64().unwrap_or(0);
            (
                v1_at.get(&(file, line)).cloned().flatten(),
                r.get("execution").cloned(),
            )
        })
        .collect()
}

/// `value` without any `execution` key, anywhere.
fn without_execution(mut value: Value) -> Value {
    fn strip(v: &mut Value) {
        match v {
            Value::Object(map) => {
                map.remove("execution");
                map.values_mut().for_each(strip);
            }
            Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    strip(&mut value);
    value
}

/// Every requirement's `execution` in the report is the one `get_requirement_status`
/// answers, for `duvet mcp ARGS` in the same project.
async fn assert_mcp_agrees(p: &Project, executions: &BTreeMap<String, Value>, args: &[&str]) {
    let mcp = start_over(Wire::Stdio, p.root(), args).await;
    for (text, execution) in executions {
        let id = identifier(&mcp, text).await;
        let status: Value = mcp
            .call_ok("get_requirement_status", json!({"req_identifier": id}))
            .await;
        assert_eq!(&status["execution"], execution, "{text}");
    }
}

/// The places (`file:line`) `duvet query -c coverage -v` marks "Executed implementation": the
/// implementations (implications and exceptions too; the fixtures have none that quote a
/// requirement) whose code ran in any report.
fn query_executed(p: &Project, args: &[&str]) -> BTreeSet<String> {
    let all = [&["-c", "coverage", "-v"][..], args].concat();
    let out = query(Path::new(BIN), p, &all);
    let text = stderr(&out);
    let executed: BTreeSet<String> = crate::query_coverage::labels(&text)
        .into_iter()
        .filter_map(|label| {
            let (place, label) = label.split_once(' ')?;
            (label == "Executed implementation").then(|| place.to_string())
        })
        .collect();
    assert!(!executed.is_empty(), "{text}");
    executed
}

/// The implementation citations (`file:line`) of the report's requirements whose code ran.
fn report_executed(executions: &BTreeMap<String, Value>) -> BTreeSet<String> {
    executions
        .values()
        .flat_map(|e| e["citations"].as_array().unwrap().clone())
        .filter(|c| c["status"] == "executed")
        .map(|c| c["id"].as_str().unwrap().to_string())
        .collect()
}

/// The upstream fixture with an LCOV report of src/lib.rs: of the implementations of "A
/// server MUST accept BREW and POST." two ran and one did not, those of "A server MUST reject
/// PUT requests." ran, that of "The server MUST log each request." did not, and the line
/// under that of section 2.2 has no data.
fn upstream() -> Project {
    let p = fixture();
    p.write(
        "coverage/lcov.info",
        "SF:src/lib.rs\nDA:4,1\nDA:8,0\nDA:13,3\nDA:17,1\nDA:22,0\nDA:45,1\nend_of_record\n",
    );
    p
}

#[tokio::test]
async fn each_requirement_has_the_state_duvet_mcp_answers_in_both_json_reports() {
    let p = upstream();
    let out = report(
        &p,
        &[
            "--json",
            "out/v1.json",
            "--json-v2",
            "out/v2.json",
            "--html",
            "out/report.html",
            "--coverage-report",
            "coverage/*.info",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("Read 1 coverage report (lcov)"),
        "{}",
        stderr(&out)
    );
    let v1 = read_json(&p, "out/v1.json");
    let executions = v1_executions(&v1);
    let states: BTreeMap<&str, &str> = executions
        .iter()
        .map(|(text, e)| (text.as_str(), e["state"].as_str().unwrap()))
        .collect();
    assert_eq!(
        states,
        BTreeMap::from([
            ("A server MUST accept BREW and POST.", "partly_executed"),
            ("A server MUST reject PUT requests.", "executed"),
            ("The server MUST log each request.", "not_executed"),
            ("The server SHOULD rotate logs daily.", "uncited"),
            ("The client MUST send a greeting first.", "uncited"),
            ("The pot MUST be warmed.", "uncited"),
            (
                "The salt MUST be a non-secret random value, and applications SHOULD use a \
                 salt whose length is the hash length.",
                "uncited"
            ),
            (
                "The output length MUST NOT exceed 255 times the hash length.",
                "unknown"
            ),
            ("The info string MAY be empty.", "uncited"),
        ])
    );
    // The citation that did not run first, each with its place and status; an unknown one
    // with the line that has no data.
    assert_eq!(
        executions["A server MUST accept BREW and POST."]["citations"],
        json!([
            {"id": "src/lib.rs:6", "status": "not_executed"},
            {"id": "src/lib.rs:2", "status": "executed"},
            {"id": "src/lib.rs:43", "status": "executed"},
        ])
    );
    assert_eq!(
        executions["The output length MUST NOT exceed 255 times the hash length."]["citations"],
        json!([{"id": "src/lib.rs:51", "status": "unknown", "line": 53}])
    );
    // The v2 report gives each requirement the same, where it is written.
    let v2 = read_json(&p, "out/v2.json");
    let pairs = v1_and_v2(&v1, &v2);
    assert_eq!(pairs.len(), executions.len());
    for (v1, v2) in pairs {
        assert!(v1.is_some());
        assert_eq!(v1, v2);
    }
    // The page says the same.
    let html = std::fs::read_to_string(p.path("out/report.html")).unwrap();
    assert!(html.contains("by the LCOV coverage report <code>coverage/lcov.info</code>."));
    let mut on_page: BTreeMap<&str, usize> = BTreeMap::new();
    for (at, _) in html.match_indices("<li class=\"req ") {
        let class = &html[at + "<li class=\"".len()..];
        let class = &class[..class.find('"').unwrap()];
        let state = class.split(' ').find_map(|c| c.strip_prefix("e-")).unwrap();
        *on_page.entry(state).or_default() += 1;
        // The "Not executed" filter keeps those whose code did not all run.
        let kept = class.split(' ').any(|c| c == "xr");
        assert_eq!(
            kept,
            ["partly-executed", "not-executed", "unknown"].contains(&state),
            "{class}"
        );
    }
    assert_eq!(
        on_page,
        BTreeMap::from([
            ("executed", 1),
            ("not-executed", 1),
            ("partly-executed", 1),
            ("uncited", 5),
            ("unknown", 1),
        ])
    );
    // duvet mcp answers the same for each requirement.
    assert_mcp_agrees(
        &p,
        &executions,
        &["--coverage-report", "coverage/lcov.info"],
    )
    .await;
    // duvet query marks the same implementations executed.
    assert_eq!(
        report_executed(&executions),
        query_executed(&p, &["-r", "coverage/lcov.info", "-f", "lcov"])
    );
}

#[test]
fn without_the_flag_nothing_changes_and_ci_never_reads_coverage() {
    let p = upstream();
    let plain = report(
        &p,
        &["--json", "plain/v1.json", "--json-v2", "plain/v2.json"],
    );
    assert!(plain.status.success(), "{}", stderr(&plain));
    let with = report(
        &p,
        &[
            "--json",
            "with/v1.json",
            "--json-v2",
            "with/v2.json",
            "-r",
            "coverage/lcov.info",
            "-f",
            "lcov",
        ],
    );
    assert!(with.status.success(), "{}", stderr(&with));
    for file in ["v1.json", "v2.json"] {
        let plain_text = std::fs::read_to_string(p.path(&format!("plain/{file}"))).unwrap();
        assert!(!plain_text.contains("\"execution\""), "{file}");
        let with_json = read_json(&p, &format!("with/{file}"));
        assert_ne!(with_json, read_json(&p, &format!("plain/{file}")));
        assert_eq!(
            without_execution(with_json),
            read_json(&p, &format!("plain/{file}")),
            "{file}: only the execution fields are added"
        );
    }
    // --ci fails as it fails without coverage (the fixture's requirements are not all cited),
    // with the same words; with every requirement's code not run, it passes as it passes.
    let ci = |args: &[&str]| {
        let out = report(&p, &[&["--ci"][..], args].concat());
        let lines: Vec<String> = stderr(&out)
            .lines()
            .filter(|l| !l.starts_with("Read "))
            .map(str::to_string)
            .collect();
        (out.status.code(), lines)
    };
    let without = ci(&[]);
    assert_eq!(without.0, Some(1));
    assert_eq!(ci(&["-r", "coverage/lcov.info"]), without);
    let relaxed = ["--require-citations", "false", "--require-tests", "false"];
    let none_ran = Project::new();
    none_ran.write(
        "none.info",
        "SF:src/lib.rs\nDA:4,0\nDA:8,0\nend_of_record\n",
    );
    let path = none_ran.path("none.info");
    let passes = ci(&relaxed);
    assert_eq!(passes.0, Some(0));
    assert_eq!(
        ci(&[&relaxed[..], &["-r", path.to_str().unwrap()]].concat()),
        passes
    );
}

#[test]
fn a_report_that_cannot_be_read_stops_the_report_before_it_writes_anything() {
    let p = upstream();
    let outputs = [
        "--json",
        "out/v1.json",
        "--json-v2",
        "out/v2.json",
        "--html",
        "out/report.html",
        "--lcov",
        "out/lcov",
    ];
    // No report where the pattern says.
    let out = report(
        &p,
        &[&outputs[..], &["--coverage-report", "coverage/none.info"]].concat(),
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out).lines().last().unwrap(),
        "error: no coverage report matches --coverage-report 'coverage/none.info' (run the \
         tests with coverage first, or fix the path; paths and globs are relative to the \
         working directory)"
    );
    assert!(!p.path("out").exists(), "nothing is written");
    // A report cut short: the error duvet query gives for it, with its exit code.
    p.write("coverage/broken.info", "SF:src/lib.rs\nDA:12,1\nDA:13");
    let args = ["-r", "coverage/broken.info", "-f", "lcov"];
    let out = report(&p, &[&outputs[..], &args[..]].concat());
    assert_eq!(out.status.code(), Some(1));
    let ours = stderr(&out);
    let error = ours.lines().last().unwrap();
    assert!(
        error.starts_with("error: coverage/broken.info: line 3: "),
        "{ours}"
    );
    let q = query(
        Path::new(BIN),
        &p,
        &[&["-c", "coverage"][..], &args[..]].concat(),
    );
    assert_eq!(q.status.code(), out.status.code());
    assert_eq!(stderr(&q).lines().last(), Some(error));
    assert!(!p.path("out").exists(), "nothing is written");
    // An LCOV tracefile read as JaCoCo XML: an error here (every line would be unmeasured),
    // while `duvet query` reads it as 0.4.3 does, as a report of nothing.
    p.write(
        "coverage/lcov.info",
        "SF:src/lib.rs\nDA:12,1\nend_of_record\n",
    );
    let args = ["-r", "coverage/lcov.info", "-f", "jacoco-xml"];
    let out = report(&p, &[&outputs[..], &args[..]].concat());
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("coverage/lcov.info: not a JaCoCo XML report"),
        "{}",
        stderr(&out)
    );
    assert!(!p.path("out").exists(), "nothing is written");
    // --coverage-format alone is a usage error.
    let out = report(&p, &["--coverage-format", "lcov"]);
    assert_eq!(out.status.code(), Some(2));
}

#[tokio::test]
async fn a_tarpaulin_report_gives_the_states_of_duvet_mcp_and_duvet_query() {
    let Some(dir) = crate::coverage::measured() else {
        return;
    };
    let p = measured_copy(dir);
    let out = report(
        &p,
        &[
            "--json",
            "out/v1.json",
            "--json-v2",
            "out/v2.json",
            "--coverage-report",
            "coverage/lcov.info",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let v1 = read_json(&p, "out/v1.json");
    let executions = v1_executions(&v1);
    let states: BTreeMap<&str, &str> = executions
        .iter()
        .map(|(text, e)| (text.as_str(), e["state"].as_str().unwrap()))
        .collect();
    // As coverage.rs finds them over MCP.
    assert_eq!(
        states,
        BTreeMap::from([
            ("A server MUST answer every ping with a pong.", "executed"),
            ("A server SHOULD log each ping it answers.", "executed"),
            (
                "A server MUST refuse a ping larger than 64 bytes.",
                "executed"
            ),
            (
                "A server MAY close the connection after refusing a ping.",
                "not_executed"
            ),
            (
                "A server MUST stop answering once it is shut down.",
                "partly_executed"
            ),
        ])
    );
    for (v1, v2) in v1_and_v2(&v1, &read_json(&p, "out/v2.json")) {
        assert_eq!(v1, v2);
    }
    assert_mcp_agrees(
        &p,
        &executions,
        &["--coverage-report", "coverage/lcov.info"],
    )
    .await;
    assert_eq!(
        report_executed(&executions),
        query_executed(&p, &["-r", "coverage/lcov.info", "-f", "lcov"])
    );
}

#[tokio::test]
async fn the_java_fixture_s_jacoco_report_gives_the_states_of_duvet_mcp_and_duvet_query() {
    let xml = match std::env::var("DUVET_JACOCO_XML")
        .ok()
        .filter(|v| !v.is_empty())
    {
        Some(xml) => xml,
        None if std::env::var_os("DUVET_REQUIRE_COVERAGE_TOOLS").is_some() => {
            panic!("DUVET_JACOCO_XML is not set, and DUVET_REQUIRE_COVERAGE_TOOLS requires it")
        }
        None => {
            eprintln!("DUVET_JACOCO_XML is not set: the Java report coverage test is skipped");
            return;
        }
    };
    let p = Project::new();
    p.copy_from(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/java-coverage"));
    let args = [
        "--coverage-report",
        xml.as_str(),
        "--coverage-format",
        "jacoco-xml",
    ];
    let out = report(
        &p,
        &[
            &["--json", "out/v1.json", "--json-v2", "out/v2.json"][..],
            &args[..],
        ]
        .concat(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let v1 = read_json(&p, "out/v1.json");
    let executions = v1_executions(&v1);
    let states: BTreeSet<&str> = executions
        .values()
        .map(|e| e["state"].as_str().unwrap())
        .collect();
    assert!(
        states.contains("executed") && states.len() > 1,
        "{executions:?}"
    );
    for (v1, v2) in v1_and_v2(&v1, &read_json(&p, "out/v2.json")) {
        assert_eq!(v1, v2);
    }
    assert_mcp_agrees(&p, &executions, &args).await;
    assert_eq!(
        report_executed(&executions),
        query_executed(&p, &["-r", xml.as_str(), "-f", "jacoco-xml"])
    );
}
