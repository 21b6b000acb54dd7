//! `duvet report --json-v2` and `duvet merge` against duvet 0.4.3: the v2 reports of the
//! fixture project (tests/fixtures/upstream) byte for byte, as two packages (A: the fixture
//! with a blob link and an issue link; B: the fixture without its tests, with [`EXTRA_RS`] and
//! [`EXTRA_TODO`], and another blob link), their merge, metadata drift, conflicts and
//! malformed inputs. 0.4.3's outputs are recorded in tests/fixtures/upstream-0.4.3
//! (`report.v2.json`, `report.v2.a.json`, `report.v2.b.json`, `merged.v2.json`,
//! `merged-drift.v2.json`: 0.4.3's `duvet report --json-v2` on those projects and `duvet
//! merge` of them), and compared live where 0.4.3 is installed
//! ([`crate::upstream::duvet043`]).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::report::{fixture, recorded, stderr};
use crate::support::{BIN, Project};

const BLOB_A: &str = "https://github.com/example/a/blob/main";
const ISSUES_A: &str = "https://github.com/example/a/issues";
const BLOB_B: &str = "https://github.com/example/b/blob/v1";

/// Package B's code: an exception with a reason, a TODO with a feature and an issue, an
/// implication with a level over two lines, a reference to a whole Markdown section.
const EXTRA_RS: &str = "\
// Package B: an exception, a TODO with a feature and an issue, an implication, a level.
//= specs/proto.md#halves
//= type=exception
//= reason=Logging is the host's job.
//# The server SHOULD rotate logs daily.
fn no_rotation() {}

//= specs/proto.md#todo
//= type=todo
//= feature=warming
//= tracking-issue=42
//# The pot MUST be warmed.
fn warm_later() {}

//= specs/rfc5869.txt#section-2.2
//= type=implication
//= level=MAY
//# The
//# info string MAY be empty.
fn info() {}

//= specs/proto.md#notes
fn notes() {}
";

/// Package B's TODO file, with tags.
const EXTRA_TODO: &str = "\
target = \"specs/proto.md#accept\"

[[TODO]]
quote = \"A server MUST reject PUT requests.\"
feature = \"strict\"
tracking-issue = \"7\"
tags = [\"b-tag\", \"a-tag\"]
";

fn package_a() -> Project {
    fixture()
}

fn package_b() -> Project {
    let p = fixture();
    std::fs::remove_file(p.path("tests/t.rs")).unwrap();
    p.write("src/extra.rs", EXTRA_RS);
    p.write(".duvet/todos/accept.toml", EXTRA_TODO);
    p
}

const ARGS_A: [&str; 4] = ["--blob-link", BLOB_A, "--issue-link", ISSUES_A];
const ARGS_B: [&str; 2] = ["--blob-link", BLOB_B];

fn report(bin: &Path, p: &Project, args: &[&str]) -> String {
    let out = Command::new(bin)
        .args(["report", "--json-v2", "out/report.v2.json"])
        .args(args)
        .current_dir(p.root())
        .env_remove("CI")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    std::fs::read_to_string(p.path("out/report.v2.json")).unwrap()
}

fn merge(bin: &Path, dir: &Path, inputs: &[&Path], output: &str) -> Output {
    let mut cmd = Command::new(bin);
    cmd.arg("merge").current_dir(dir);
    for input in inputs {
        cmd.arg("--input").arg(input);
    }
    cmd.arg("--output").arg(output).output().unwrap()
}

/// A directory holding the given files.
fn inputs(files: &[(&str, &str)]) -> (tempfile::TempDir, Vec<PathBuf>) {
    let dir = tempfile::tempdir().unwrap();
    let paths = files
        .iter()
        .map(|(name, text)| {
            let path = dir.path().join(name);
            std::fs::write(&path, text).unwrap();
            path
        })
        .collect();
    (dir, paths)
}

/// The one error line of a failed run of ours.
fn error_line(out: &Output) -> String {
    assert_eq!(out.status.code(), Some(1), "{}", stderr(out));
    let text = stderr(out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1, "{text}");
    lines[0].strip_prefix("error: ").unwrap().to_string()
}

/// 0.4.3's error, its wrapped lines (`× …`, `│ …`) made one line again.
fn their_error(out: &Output) -> String {
    assert_eq!(out.status.code(), Some(1), "{}", stderr(out));
    stderr(out)
        .lines()
        .filter(|l| !l.starts_with("warning: "))
        .map(|l| l.trim().trim_start_matches(['×', '│']).trim())
        .collect::<Vec<_>>()
        .join(" ")
        .replace("/ ", "/")
        .trim()
        .to_string()
}

#[test]
fn the_v2_report_is_the_one_0_4_3_writes_byte_for_byte() {
    let upstream = crate::upstream::duvet043();
    for (name, project, args) in [
        ("report.v2.json", fixture as fn() -> Project, &[][..]),
        ("report.v2.a.json", package_a, &ARGS_A[..]),
        ("report.v2.b.json", package_b, &ARGS_B[..]),
    ] {
        let ours = report(Path::new(BIN), &project(), args);
        assert_eq!(ours, recorded(name), "{name}");
        if let Some(upstream) = &upstream {
            assert_eq!(ours, report(upstream, &project(), args), "{name} (live)");
        }
    }
}

#[test]
fn two_packages_merge_as_0_4_3_merges_them_in_any_order() {
    let a = recorded("report.v2.a.json");
    let b = recorded("report.v2.b.json");
    let (dir, paths) = inputs(&[("a.json", &a), ("b.json", &b)]);
    let expected = recorded("merged.v2.json");
    for (order, output) in [([0, 1], "ab.json"), ([1, 0], "out/ba.json")] {
        let ins = [paths[order[0]].as_path(), paths[order[1]].as_path()];
        let out = merge(Path::new(BIN), dir.path(), &ins, output);
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(stderr(&out), "", "a clean merge says nothing");
        let merged = std::fs::read_to_string(dir.path().join(output)).unwrap();
        assert_eq!(merged, expected, "{order:?}");
    }
    // A merged report merges again: with one of its inputs, it is unchanged.
    let merged = dir.path().join("ab.json");
    let out = merge(
        Path::new(BIN),
        dir.path(),
        &[&merged, &paths[1]],
        "again.json",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("again.json")).unwrap(),
        expected
    );
    if let Some(upstream) = crate::upstream::duvet043() {
        let out = merge(
            &upstream,
            dir.path(),
            &[&paths[1], &paths[0]],
            "theirs.json",
        );
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(
            std::fs::read_to_string(dir.path().join("theirs.json")).unwrap(),
            expected
        );
    }
}

#[test]
fn metadata_drift_is_reconciled_with_a_warning() {
    let b = recorded("report.v2.b.json");
    let drifted = b.replace("Logging is the host's job.", "Logging is a job for others.");
    assert_ne!(b, drifted);
    let (dir, paths) = inputs(&[("b.json", &b), ("drifted.json", &drifted)]);
    let warning = "warning: input #1 has cite annotation 'cite-18ffac20e90cf347' with metadata \
                   drift from previously seen (comment); reconciling deterministically (lex-min \
                   for strings, sorted union for tags)\n";
    let expected = recorded("merged-drift.v2.json");
    for ins in [[&paths[0], &paths[1]], [&paths[1], &paths[0]]] {
        let out = merge(Path::new(BIN), dir.path(), &[ins[0], ins[1]], "m.json");
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(stderr(&out), warning);
        assert_eq!(
            std::fs::read_to_string(dir.path().join("m.json")).unwrap(),
            expected
        );
    }
    if let Some(upstream) = crate::upstream::duvet043() {
        let out = merge(&upstream, dir.path(), &[&paths[0], &paths[1]], "t.json");
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(stderr(&out), warning);
        assert_eq!(
            std::fs::read_to_string(dir.path().join("t.json")).unwrap(),
            expected
        );
    }
}

/// `text` with the first `from` after `after` replaced by `to`.
fn edit(text: &str, after: &str, from: &str, to: &str) -> String {
    let at = text.find(after).unwrap() + after.len();
    let (head, tail) = text.split_at(at);
    format!("{head}{}", tail.replacen(from, to, 1))
}

#[test]
fn conflicting_inputs_get_0_4_3_s_verdict() {
    let plain = recorded("report.v2.json");
    let a = recorded("report.v2.a.json");
    let b = recorded("report.v2.b.json");
    let level = edit(&b, "\"req-0187740e7a4eaba0\"", "\"MUST\"", "\"SHOULD\"");
    let kind = edit(&b, "\"cite-10927d73fc5ae9a0\"", "\"CITATION\"", "\"TEST\"");
    let cases: [(&[(&str, &str)], &str); 3] = [
        (
            &[("b.json", &b), ("level.json", &level)],
            "input #1 has requirement annotation 'req-0187740e7a4eaba0' with level Should \
             conflicting with previously seen Must",
        ),
        (
            &[("a.json", &a), ("b.json", &b), ("kind.json", &kind)],
            "input #2 has cite annotation 'cite-10927d73fc5ae9a0' with type Test conflicting \
             with previously seen Citation",
        ),
        // Without a blob link, two reports name the same files: 0.4.3 refuses even a report
        // merged with itself.
        (
            &[("plain.json", &plain), ("again.json", &plain)],
            "linked source 'lnk-2d044406fb8c4b3a' (file '.duvet/requirements/specs/rfc5869/\
             section-2.2.toml') without a repository appears in inputs #0 and #1; merging \
             would silently consolidate it across reports — add a blob-link to disambiguate \
             (see [[source]] blob-link in your duvet config)",
        ),
    ];
    let upstream = crate::upstream::duvet043();
    for (files, message) in cases {
        let (dir, paths) = inputs(files);
        let ins: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
        let out = merge(Path::new(BIN), dir.path(), &ins, "out.json");
        assert_eq!(error_line(&out), message);
        assert!(!dir.path().join("out.json").exists(), "nothing is written");
        if let Some(upstream) = &upstream {
            let theirs = merge(upstream, dir.path(), &ins, "out.json");
            assert_eq!(their_error(&theirs), message);
        }
    }
}

#[test]
fn malformed_inputs_fail_with_one_short_line_naming_the_file() {
    let good = recorded("report.v2.a.json");
    let huge = "x".repeat(1 << 20);
    let cases: Vec<(String, &str)> = vec![
        (
            "not json".into(),
            "failed to parse JSON: expected ident at line 1 column 2",
        ),
        (
            String::new(),
            "failed to parse JSON: EOF while parsing a value at line 1 column 0",
        ),
        (
            good.replacen("\"2.0\"", "\"1.0\"", 1),
            "unsupported report version '1.0', expected '2.0'",
        ),
        (
            good.replacen("\"version\"", "\"extra\": 1, \"version\"", 1),
            "failed to parse JSON: unknown field `extra`",
        ),
        (
            good.replacen("\"start\": 0", "\"start\": -1", 1),
            "failed to parse JSON: invalid value: integer `-1`, expected usize",
        ),
        (
            good.replacen("\"line\": 2", &format!("\"line\": \"{huge}\""), 1),
            "failed to parse JSON: invalid type: string \"xxxx",
        ),
        (
            good.replacen("\"2.0\"", &format!("\"{huge}\""), 1),
            "unsupported report version 'xxxx",
        ),
        (
            format!(
                "{{\"version\":\"2.0\",\"sources\":{{\"https://x#y\":{}{}}},\"annotations\":{{}}}}",
                "[".repeat(100_000),
                "]".repeat(100_000)
            ),
            "failed to parse JSON: recursion limit exceeded",
        ),
        (
            "{\"version\":\"2.0\"}".into(),
            "failed to parse JSON: missing field `sources`",
        ),
        (
            "{\"version\":\"2.0\",\"sources\":[],\"annotations\":{}}".into(),
            "failed to parse JSON: invalid type: sequence, expected",
        ),
    ];
    for (text, message) in cases {
        let (dir, paths) = inputs(&[("good.json", &good), ("bad.json", &text)]);
        let out = merge(
            Path::new(BIN),
            dir.path(),
            &[&paths[0], &paths[1]],
            "out.json",
        );
        let line = error_line(&out);
        let prefix = format!("failed to read report from '{}': ", paths[1].display());
        assert!(line.starts_with(&prefix), "{line}");
        assert!(line.contains(message), "{message:?} in {line}");
        assert!(line.len() < prefix.len() + 300, "{} bytes", line.len());
        assert!(!dir.path().join("out.json").exists());
    }
    let (dir, _) = inputs(&[]);
    let out = merge(
        Path::new(BIN),
        dir.path(),
        &[Path::new("missing.json")],
        "o.json",
    );
    assert!(
        error_line(&out).starts_with("failed to open file 'missing.json': "),
        "{}",
        stderr(&out)
    );
    // No input at all is a usage error, as 0.4.3's.
    let out = Command::new(BIN)
        .args(["merge", "--output", "o.json"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn unknown_buckets_are_kept_and_a_single_input_is_rewritten_as_read() {
    let text = "{\"version\":\"2.0\",\"issue_links\":[\"z\",\"a\",\"a\"],\"sources\":{\"https://x/s#v\":\
                {\"b\":1,\"a\":[1e2,-0,1.5]}},\"annotations\":{\"https://x/a#r\":{\"k\":\"\\u00e9\"}}}";
    let (dir, paths) = inputs(&[("e.json", text)]);
    let out = merge(Path::new(BIN), dir.path(), &[&paths[0]], "o.json");
    assert!(out.status.success(), "{}", stderr(&out));
    let merged = std::fs::read_to_string(dir.path().join("o.json")).unwrap();
    // As 0.4.3 writes it: known buckets present, unknown ones after them, keys sorted, one
    // input's issue links left as they were.
    let expected = r#"{
  "version": "2.0",
  "issue_links": [
    "z",
    "a",
    "a"
  ],
  "sources": {
    "https://awslabs.github.io/duvet/v2/sources.json#inline": {},
    "https://awslabs.github.io/duvet/v2/sources.json#linked": {},
    "https://x/s#v": {
      "a": [
        100.0,
        -0.0,
        1.5
      ],
      "b": 1
    }
  },
  "annotations": {
    "https://awslabs.github.io/duvet/v2/annotations.json#specification": {},
    "https://awslabs.github.io/duvet/v2/annotations.json#section": {},
    "https://awslabs.github.io/duvet/v2/annotations.json#requirement": {},
    "https://awslabs.github.io/duvet/v2/annotations.json#cite": {},
    "https://x/a#r": {
      "k": "é"
    }
  }
}"#;
    assert_eq!(merged, expected);
    if let Some(upstream) = crate::upstream::duvet043() {
        let out = merge(&upstream, dir.path(), &[&paths[0]], "t.json");
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(
            std::fs::read_to_string(dir.path().join("t.json")).unwrap(),
            expected
        );
    }
}
