//! A small Java project (tests/fixtures/java-coverage: Maven's layout, a `main`-based test
//! driver) covered by JaCoCo, and each annotation's executed status as duvet 0.4.3's
//! `query --check coverage` decides it for Java (its classified model).
//!
//! The JaCoCo XML report comes from the real tools: scripts/test runs the fixture's
//! make-report.sh (javac, the program under JaCoCo's agent, org.jacoco.report's
//! XMLFormatter) and names the report in `DUVET_JACOCO_XML`; without it these tests say so
//! and pass, unless `DUVET_REQUIRE_COVERAGE_TOOLS` is set. What 0.4.3 said of that report is
//! recorded in tests/fixtures/upstream-0.4.3/java-coverage-query.txt (`duvet query --check
//! coverage --coverage-report report.xml --coverage-format jacoco-xml -v`, run in a copy of
//! the fixture); where 0.4.3 is installed (`DUVET_043_BIN`), it is also run on the same
//! report. Its verdicts name each annotation by file and first line: executed, not executed,
//! structural, or unknown with the line it could not read.
#![allow(clippy::print_stderr)] // the note when the report is absent

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;

use duvet::annotation::AnnotationType;
use duvet::config::{self, Flags};
use duvet::execution::{
    CoverageFormat, Execution, ExecutionStatus, FileModel, Span, defeated_messages, model_summary,
    reports,
};
use duvet::project::{self, FileCache};

use crate::support::Project;

/// An annotation: file and first line.
type Key = (String, usize);

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/java-coverage")
}

fn recorded() -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/upstream-0.4.3/java-coverage-query.txt"),
    )
    .unwrap()
}

/// The report scripts/test made, or `None` (with a note) when these tests run without it
/// (a failure when `DUVET_REQUIRE_COVERAGE_TOOLS` is set, as scripts/test sets it).
fn report_xml() -> Option<PathBuf> {
    match std::env::var_os("DUVET_JACOCO_XML").filter(|v| !v.is_empty()) {
        Some(path) => Some(PathBuf::from(path)),
        None if std::env::var_os("DUVET_REQUIRE_COVERAGE_TOOLS").is_some() => {
            panic!("DUVET_JACOCO_XML is not set, and DUVET_REQUIRE_COVERAGE_TOOLS requires it")
        }
        None => {
            eprintln!(
                "DUVET_JACOCO_XML is not set: the Java coverage tests are skipped (scripts/test \
                 makes the report with tests/fixtures/java-coverage/make-report.sh and sets it)"
            );
            None
        }
    }
}

/// The verdicts `duvet query --check coverage -v` printed, by annotation. Every mention of an
/// annotation must agree; an unknown takes the line of the "Problematic line" block after
/// it (0 when none follows).
fn verdicts(output: &str) -> BTreeMap<Key, ExecutionStatus> {
    let mut found: BTreeMap<Key, ExecutionStatus> = BTreeMap::new();
    let mut block: Option<Key> = None;
    let mut pending: Option<Key> = None;
    for line in output.lines() {
        if let Some(at) = line.find("╭─[") {
            let place = &line[at + "╭─[".len()..line.rfind(']').unwrap()];
            let mut parts = place.rsplitn(3, ':');
            let (_col, row, path) = (parts.next(), parts.next(), parts.next());
            block = Some((path.unwrap().to_string(), row.unwrap().parse().unwrap()));
            continue;
        }
        let Some(label) = line
            .split_once("╰──── ")
            .or_else(|| line.split_once("╰── "))
        else {
            continue;
        };
        let message = label.1.trim();
        let key = block.clone().unwrap();
        let status = match message {
            "Executed test" | "Executed implementation" | "Test annotation" => {
                ExecutionStatus::Executed
            }
            "Not executed test" | "Not executed implementation" => ExecutionStatus::NotExecuted,
            "Test target is purely declarative; no executable code to verify"
            | "Structural implementation target — no executable code to verify" => {
                ExecutionStatus::Structural
            }
            "Not executed because of an unknown not executable line." => {
                pending = Some(key.clone());
                ExecutionStatus::Unknown { line: 0 }
            }
            "Problematic line" => {
                let annotation = pending.take().unwrap();
                found.insert(annotation, ExecutionStatus::Unknown { line: key.1 });
                continue;
            }
            other => panic!("an unexpected label {other:?}"),
        };
        if !matches!(status, ExecutionStatus::Unknown { .. }) {
            pending = None;
        }
        match found.get(&key) {
            Some(ExecutionStatus::Unknown { .. })
                if matches!(status, ExecutionStatus::Unknown { .. }) => {}
            Some(earlier) => assert_eq!(*earlier, status, "{key:?} is given two statuses"),
            None => {
                found.insert(key, status);
            }
        }
    }
    found
}

/// The "Coverage model:" lines 0.4.3 printed.
fn model_lines(output: &str) -> Vec<String> {
    output
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("Coverage model:") || l.starts_with("degraded (no classifier"))
        .map(String::from)
        .collect()
}

struct Ours {
    statuses: BTreeMap<Key, ExecutionStatus>,
    messages: Vec<String>,
}

/// Our statuses of the fixture's source annotations in the report at `xml`.
fn ours(xml: &Path) -> Ours {
    let root = fixture_dir();
    let config = config::load(&root, &Flags::default()).unwrap();
    let model = project::build(&config, &FileCache::default());
    let span = |line: usize, text: &str| Span {
        start: line,
        end: line + text.lines().count().max(1) - 1,
    };
    let mut spans: HashMap<PathBuf, Vec<Span>> = HashMap::new();
    for c in &model.citations {
        spans
            .entry(c.file.clone())
            .or_default()
            .push(span(c.line, &c.comment_text));
    }
    let mut files: Vec<PathBuf> = spans.keys().cloned().collect();
    files.sort();
    let report = reports::read(xml, CoverageFormat::JacocoXml).unwrap();
    let read = |file: &Path| std::fs::read_to_string(root.join(file)).ok();
    let execution = Execution::new(&root, &files, &spans, &report, read).unwrap();
    // Java files are never decided by the degraded model.
    assert!(execution.models().all(|(path, model)| {
        path.extension().is_none_or(|e| e != "java") || !matches!(model, FileModel::Degraded(_))
    }));
    let statuses = model
        .citations
        .iter()
        .filter(|c| {
            matches!(
                c.kind,
                AnnotationType::Implementation | AnnotationType::Test
            )
        })
        .map(|c| {
            let key = (c.file.to_string_lossy().into_owned(), c.line);
            (
                key,
                execution.status(&c.file, span(c.line, &c.comment_text)),
            )
        })
        .collect();
    let mut messages = defeated_messages(std::slice::from_ref(&execution));
    messages.extend(model_summary(std::slice::from_ref(&execution)));
    Ours { statuses, messages }
}

/// Every verdict of 0.4.3's in `output` is ours, and so are its model lines.
fn assert_agree(ours: &Ours, output: &str) {
    let theirs = verdicts(output);
    let mut differ = Vec::new();
    for (key, status) in &theirs {
        match ours.statuses.get(key) {
            Some(ours) if ours == status => {}
            Some(ours) => differ.push(format!(
                "{}:{}: 0.4.3 {status:?}, ours {ours:?}",
                key.0, key.1
            )),
            None => differ.push(format!("{}:{}: no such annotation of ours", key.0, key.1)),
        }
    }
    assert!(differ.is_empty(), "{}", differ.join("\n"));
    // The fixture is made so that 0.4.3 shows a verdict for every annotation (each quote has
    // a test that ran, so the implementations' verdicts are shown with it).
    let unseen: Vec<&Key> = ours
        .statuses
        .keys()
        .filter(|k| !theirs.contains_key(*k))
        .collect();
    assert!(unseen.is_empty(), "0.4.3 shows no verdict for {unseen:?}");
    let messages: Vec<&str> = ours.messages.iter().map(|m| m.trim()).collect();
    assert_eq!(messages, model_lines(output));
}

#[test]
fn our_statuses_are_0_4_3s_recorded_verdicts() {
    let Some(xml) = report_xml() else { return };
    let ours = ours(&xml);
    let recorded = recorded();
    assert_agree(&ours, &recorded);
    // The fixture shows every kind of verdict, and a file 0.4.3 refuses.
    let kinds: Vec<&str> = ours.statuses.values().map(|s| s.name()).collect();
    for kind in ["executed", "not_executed", "structural", "unknown"] {
        assert!(kinds.contains(&kind), "no {kind} status: {kinds:?}");
    }
    assert!(ours.messages[0].starts_with(
        "Coverage model: src/main/java/com/example/Escapes.java — the selected classifier could not produce a trustworthy classification (parse error(s) at line(s) 11)."
    ));
}

#[test]
fn our_statuses_are_0_4_3s_live_verdicts() {
    let Some(xml) = report_xml() else { return };
    let Some(bin) = crate::upstream::duvet043() else {
        eprintln!("duvet 0.4.3 is not installed: compared with its recorded verdicts only");
        return;
    };
    // 0.4.3 writes the requirements it extracts into the project: run it in a copy.
    let copy = Project::new();
    let from = fixture_dir();
    for entry in walk(&from) {
        let rel = entry
            .strip_prefix(&from)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        copy.write(&rel, &std::fs::read_to_string(&entry).unwrap());
    }
    let out = Command::new(bin)
        .args([
            "query",
            "--check",
            "coverage",
            "--coverage-format",
            "jacoco-xml",
            "-v",
        ])
        .arg("--coverage-report")
        .arg(&xml)
        .current_dir(copy.root())
        .output()
        .unwrap();
    let output = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_agree(&ours(&xml), &output);
    assert_eq!(verdicts(&output), verdicts(&recorded()));
}

/// The files under `dir`, recursively.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}
