//! `--check coverage` and `--check executed-coverage`: whether each test annotation ran, and
//! ran the implementations it tests, by the coverage reports (duvet 0.4.3's
//! `execute_coverage_check`, its verdicts and its words).
//!
//! * **Reports.** The `--coverage-report` patterns are expanded as 0.4.3 expands them
//!   ([`super::glob`]), each match read in `--coverage-format` ([`crate::execution::reports`];
//!   a JaCoCo report cut after its last package read as 0.4.3 reads it),
//!   and each report's entries matched to **every** source file of the project, annotated or
//!   not ([`crate::execution::source_files`]; ambiguities are errors in 0.4.3's words). Each
//!   file's model stamps the lines of all its annotations ([`crate::execution::Execution`]).
//! * **Pairs.** The test annotations in scope (`--section`, `--quote`) are the targets; the
//!   implementation, implication and exception annotations of the same target, never
//!   filtered, cover them, as in the `test` check. A test nothing covers has no correlated
//!   implementation (a failure). A test that ran in some reports (its *witnesses*) passes when
//!   each covering annotation ran in at least one of those witnesses: a test that ran in one
//!   report and an implementation that ran only in another do not correlate. A test that ran
//!   in none fails with its own status folded over all reports (executed in any wins, then
//!   unknown, then structural or not executed).
//! * **`executed-coverage`** passes over the tests that did not run (`NotExecuted` over all
//!   reports), with or without implementations; unknown and structural tests still fail.
//! * **Counts.** Executed tests are the correlated tests that ran; executed implementations
//!   are the covering annotations (all of them, in scope or not) that ran in any report.

use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::annotation::{Annotation, AnnotationType};
use crate::execution::{CoverageFormat, Execution, ExecutionStatus, Span, reports};

use super::classify::Classified;
use super::diagnostic::{Diagnostic, Severity};
use super::text::Writer;

/// A test annotation (an index into [`super::Query::annotations`]) and what the reports say
/// of it and of the annotations that cover it.
#[derive(Debug, Clone)]
pub struct Correlation {
    pub test: usize,
    /// Executed when some report is a witness; else its status folded over all reports.
    pub status: ExecutionStatus,
    /// The covering annotations that ran in a witness.
    pub executed: Vec<usize>,
    /// Those that did not, with their status folded over the witnesses.
    pub not_executed: Vec<(usize, ExecutionStatus)>,
}

/// The result of `--check coverage` or `--check executed-coverage`.
#[derive(Debug, Clone)]
pub struct Correlations {
    /// How many reports were read (a file two patterns match counts twice, as in 0.4.3).
    pub reports: usize,
    /// The correlated tests that ran, in annotation order.
    pub executed_tests: Vec<usize>,
    /// The covering annotations that ran in any report, in annotation order.
    pub executed_implementations: Vec<usize>,
    pub successful: Vec<Correlation>,
    pub failed: Vec<Correlation>,
    /// Tests that no implementation, implication or exception covers.
    pub missing: Vec<usize>,
}

impl Correlations {
    pub fn passed(&self) -> bool {
        self.failed.is_empty() && self.missing.is_empty()
    }
}

/// The coverage reports of a run, read and matched to the project's files.
#[derive(Debug, Default)]
pub struct Measured {
    /// One per report file matched, in 0.4.3's order.
    pub executions: Vec<Execution>,
    /// The report files, as the patterns found them (relative to the working directory
    /// unless absolute), in the same order.
    pub reports: Vec<PathBuf>,
    /// The patterns that matched no file (0.4.3 reads them as no report).
    pub unmatched: Vec<String>,
}

/// How a coverage report is read.
pub type ReadReport = fn(&Path, CoverageFormat) -> Result<reports::Report, String>;

/// The lines of annotation `a` in its file, as 0.4.3 counts them.
fn span(a: &Annotation) -> Span {
    Span {
        start: a.line,
        end: a.line + a.comment_text.lines().count().max(1) - 1,
    }
}

/// Read the reports `patterns` match (relative to `root`, the working directory) in
/// `format`, and match each to the project's `files` (every source file, relative to
/// `root`), whose annotations are `annotations`. Errors are one line each: a pattern that is
/// not one, a report that cannot be read, a report entry or file that is ambiguous. `read`
/// reads one report: `duvet query` reads as 0.4.3 does ([`reports::read_as_0_4_3_query`]),
/// the reports strictly ([`reports::read`]).
pub fn measure(
    root: &Path,
    patterns: &[String],
    (format, read): (CoverageFormat, ReadReport),
    files: &[PathBuf],
    annotations: &[Annotation],
) -> Result<Measured, String> {
    let mut measured = Measured::default();
    let mut paths = Vec::new();
    for pattern in patterns {
        let found = super::glob::expand(root, pattern)
            .map_err(|e| format!("--coverage-report {}: {e}", clip(pattern)))?;
        if found.is_empty() {
            measured.unmatched.push(pattern.clone());
        }
        paths.extend(found);
    }
    let mut loaded = Vec::with_capacity(paths.len());
    for path in &paths {
        let full = root.join(path);
        let report = read(&full, format).map_err(|e| {
            // Named as the pattern found it, not as joined to the working directory.
            match e.strip_prefix(&format!("{}: ", full.display())) {
                Some(reason) => format!("{}: {reason}", path.display()),
                None => e,
            }
        })?;
        loaded.push(report);
    }
    let mut spans: HashMap<PathBuf, Vec<Span>> = HashMap::new();
    for a in annotations {
        spans.entry(a.file.clone()).or_default().push(span(a));
    }
    // Each file a report covers is read once for all reports.
    let texts: RefCell<HashMap<PathBuf, Option<String>>> = RefCell::default();
    let read = |file: &Path| -> Option<String> {
        if let Some(text) = texts.borrow().get(file) {
            return text.clone();
        }
        let text = std::fs::read(root.join(file))
            .ok()
            .map(|b| crate::project::text_of(&b).into_owned());
        texts.borrow_mut().insert(file.to_path_buf(), text.clone());
        text
    };
    for (path, report) in paths.iter().zip(&loaded) {
        let execution = Execution::new(root, files, &spans, report, read)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        measured.executions.push(execution);
    }
    measured.reports = paths;
    Ok(measured)
}

/// At most 200 characters of a pattern, for a message.
fn clip(text: &str) -> String {
    mcp_common::clip(text, 200)
}

/// Annotation `a`'s status in one report: requirements and TODOs never run.
fn status(a: &Annotation, execution: &Execution) -> ExecutionStatus {
    if matches!(a.kind, AnnotationType::Spec | AnnotationType::Todo) {
        ExecutionStatus::NotExecuted
    } else {
        execution.status(&a.file, span(a))
    }
}

/// Correlate the tests `classified` sorts (the tests in scope, by the `coverers`: every
/// implementation, implication and exception) in `executions`, one per report.
pub(super) fn correlate(
    annotations: &[&Annotation],
    executions: &[Execution],
    classified: Classified,
    coverers: &[usize],
    executed_only: bool,
) -> Correlations {
    // Each annotation's status in each report, computed once.
    let mut statuses: HashMap<usize, Vec<ExecutionStatus>> = HashMap::new();
    let mut of = |i: usize| -> Vec<ExecutionStatus> {
        statuses
            .entry(i)
            .or_insert_with(|| {
                executions
                    .iter()
                    .map(|e| status(annotations[i], e))
                    .collect()
            })
            .clone()
    };
    let all = |s: &[ExecutionStatus]| ExecutionStatus::fold(s.iter().copied());
    let not_run = |s: ExecutionStatus| executed_only && s == ExecutionStatus::NotExecuted;

    let mut missing = Vec::new();
    for &test in &classified.none {
        if !not_run(all(&of(test))) {
            missing.push(test);
        }
    }
    let mut successful = Vec::new();
    let mut failed = Vec::new();
    for covered in classified.complete.iter().chain(&classified.incomplete) {
        let test = of(covered.target);
        let witnesses: Vec<usize> = (0..executions.len())
            .filter(|&r| test[r] == ExecutionStatus::Executed)
            .collect();
        if witnesses.is_empty() {
            let folded = all(&test);
            if not_run(folded) {
                continue;
            }
            failed.push(Correlation {
                test: covered.target,
                status: folded,
                executed: Vec::new(),
                not_executed: Vec::new(),
            });
            continue;
        }
        let mut executed = Vec::new();
        let mut not_executed = Vec::new();
        for &c in &covered.by {
            let s = of(c);
            match ExecutionStatus::fold(witnesses.iter().map(|&r| s[r])) {
                ExecutionStatus::Executed => executed.push(c),
                other => not_executed.push((c, other)),
            }
        }
        let correlation = Correlation {
            test: covered.target,
            status: ExecutionStatus::Executed,
            executed,
            not_executed,
        };
        if correlation.not_executed.is_empty() {
            successful.push(correlation);
        } else {
            failed.push(correlation);
        }
    }
    let mut executed_tests: Vec<usize> = successful
        .iter()
        .chain(&failed)
        .filter(|c| c.status == ExecutionStatus::Executed)
        .map(|c| c.test)
        .collect();
    executed_tests.sort_unstable();
    executed_tests.dedup();
    let executed_implementations = coverers
        .iter()
        .copied()
        .filter(|&c| of(c).contains(&ExecutionStatus::Executed))
        .collect();
    Correlations {
        reports: executions.len(),
        executed_tests,
        executed_implementations,
        successful,
        failed,
        missing,
    }
}

/// 0.4.3's help for a test without implementation.
const NO_IMPLEMENTATION: &str = "This test cites a specification section that no \
    implementation/citation annotation references. Add an implementation annotation for the \
    same section, or fix the test's target.";

fn test_label(status: ExecutionStatus) -> &'static str {
    match status {
        ExecutionStatus::Executed => "Executed test",
        ExecutionStatus::NotExecuted => "Not executed test",
        ExecutionStatus::Structural => {
            "Test target is purely declarative; no executable code to verify"
        }
        ExecutionStatus::Unknown { .. } => {
            "Not executed because of an unknown not executable line."
        }
    }
}

fn implementation_label(status: ExecutionStatus) -> &'static str {
    match status {
        // Never among those that did not run (0.4.3 has no words for it).
        ExecutionStatus::Executed => "Executed implementation",
        ExecutionStatus::NotExecuted => "Not executed implementation",
        ExecutionStatus::Structural => {
            "Structural implementation target — no executable code to verify"
        }
        ExecutionStatus::Unknown { .. } => {
            "Not executed because of an unknown not executable line."
        }
    }
}

impl Writer<'_> {
    /// The line an unknown status names, in annotation `i`'s file, when it has one.
    fn problematic<'a>(&'a self, i: usize, status: ExecutionStatus, d: &mut Diagnostic<'a>) {
        if let ExecutionStatus::Unknown { line } = status
            && let Some(snippet) = self.files.line(i, line, "Problematic line")
        {
            d.related.push(snippet);
        }
    }

    pub(super) fn coverage(&self, r: &Correlations, status: &str, out: &mut String) {
        let _ = write!(out, "\nCoverage: {status}\n\n");
        for (name, count) in [
            ("Coverage reports checked", r.reports),
            ("Executed tests", r.executed_tests.len()),
            ("Executed implementations", r.executed_implementations.len()),
            ("Successful correlations", r.successful.len()),
            ("Failed correlations", r.failed.len()),
            ("Tests with no implementation", r.missing.len()),
        ] {
            let _ = writeln!(out, "  {name}: {count}");
        }
        out.push('\n');
        if !r.missing.is_empty() {
            for &test in &r.missing {
                let mut d = Diagnostic::new(
                    Severity::Error,
                    "Test has no correlated implementation".to_string(),
                );
                d.snippet = Some(self.files.snippet(test, "Test annotation"));
                d.help = Some(NO_IMPLEMENTATION.to_string());
                self.emit(&d, out);
            }
            out.push('\n');
        }
        if !r.failed.is_empty() {
            for c in &r.failed {
                let mut d = Diagnostic::new(Severity::Error, "Failed correlation".to_string());
                d.snippet = Some(self.files.snippet(c.test, test_label(c.status)));
                self.problematic(c.test, c.status, &mut d);
                for &i in &c.executed {
                    d.related
                        .push(self.files.snippet(i, "Executed implementation"));
                }
                for &(i, status) in &c.not_executed {
                    d.related
                        .push(self.files.snippet(i, implementation_label(status)));
                    self.problematic(i, status, &mut d);
                }
                self.emit(&d, out);
            }
            out.push('\n');
        }
        if self.verbose {
            for c in &r.successful {
                let mut d = Diagnostic::new(Severity::Advice, "Successful correlation".to_string());
                d.snippet = Some(self.files.snippet(c.test, "Test annotation"));
                d.related = c
                    .executed
                    .iter()
                    .map(|&i| self.files.snippet(i, "Executed implementation"))
                    .collect();
                self.emit(&d, out);
            }
            let mut d = Diagnostic::new(Severity::Advice, "Executed annotations".to_string());
            d.related = r
                .executed_tests
                .iter()
                .map(|&i| self.files.snippet(i, "Executed test"))
                .chain(
                    r.executed_implementations
                        .iter()
                        .map(|&i| self.files.snippet(i, "Executed implementation")),
                )
                .collect();
            self.emit(&d, out);
            out.push('\n');
        }
    }
}
