//! Which model decides a file's annotations, as duvet 0.4.3 routes them: Java files (the
//! `.java` extension) by the classified model ([`super::classified`]), or, when the
//! classifier cannot be trusted with the file, by none (a *defeated* file, every annotation
//! unknown at its first issue, and a message saying so); every other file by the degraded
//! model ([`Degraded`]).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::classified::{self, Built, Classified};
use super::{Execution, ExecutionStatus, FileCoverage, Hit, Span};

/// What decides the statuses of one file's annotations in one report.
#[derive(Debug, Clone)]
pub enum FileModel {
    /// No classifier for the language: the first line after the annotation that is not
    /// blank and not part of an annotation, read directly in the report.
    Degraded(Degraded),
    /// Java: the classified model.
    Classified(Classified),
    /// Java the classifier could not read: why, never empty.
    Defeated(Vec<Issue>),
}

/// Why a classifier's reading of a file was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum IssueKind {
    /// The parser found a syntax error (the file may not be Java, or the grammar has a gap).
    ParseError,
    /// The braces do not pair up.
    UnbalancedScopes,
}

/// One located reason a file's classification was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Issue {
    pub kind: IssueKind,
    /// 1-based.
    pub line: usize,
}

impl FileModel {
    /// The model of the file at `path` (its extension chooses), with `text`, whose
    /// annotations (every one in the file) span `spans`, covered as `coverage` says.
    pub fn new(path: &Path, text: &str, spans: &[Span], coverage: &FileCoverage) -> Self {
        if path.extension().is_some_and(|e| e == "java") {
            match classified::build(text, spans, coverage) {
                Built::Model(model) => Self::Classified(model),
                Built::Defeated(issues) => Self::Defeated(issues),
            }
        } else {
            Self::Degraded(Degraded::new(text, spans, coverage))
        }
    }

    /// The annotation's target line (none for a defeated file).
    pub fn target(&self, span: Span) -> Option<usize> {
        match self {
            Self::Degraded(model) => model.target(span),
            Self::Classified(model) => model.target(span),
            Self::Defeated(_) => None,
        }
    }

    /// The status of the annotation spanning `span`.
    pub fn status(&self, span: Span) -> ExecutionStatus {
        match self {
            Self::Degraded(model) => model.status(span),
            Self::Classified(model) => model.status(span),
            Self::Defeated(issues) => ExecutionStatus::Unknown {
                line: issues.first().map_or(0, |issue| issue.line),
            },
        }
    }

    /// Why the file's classification was refused (empty unless defeated).
    pub fn issues(&self) -> &[Issue] {
        match self {
            Self::Defeated(issues) => issues,
            _ => &[],
        }
    }
}

/// 0.4.3's degraded model of a file.
#[derive(Debug, Clone)]
pub struct Degraded {
    /// Per line (index = line - 1): whether the annotation target walk skips it (blank, or
    /// part of an annotation).
    skippable: Vec<bool>,
    coverage: BTreeMap<usize, Hit>,
}

impl Degraded {
    pub fn new(text: &str, spans: &[Span], coverage: &FileCoverage) -> Self {
        let mut skippable: Vec<bool> = text.lines().map(|l| l.trim().is_empty()).collect();
        for span in spans {
            for line in span.start.max(1)..=span.end.min(skippable.len()) {
                skippable[line - 1] = true;
            }
        }
        Self {
            skippable,
            coverage: coverage.lines().collect(),
        }
    }

    /// The first line after `span` the walk does not skip.
    pub fn target(&self, span: Span) -> Option<usize> {
        let from = span.end.checked_add(1)?;
        (from..=self.skippable.len()).find(|line| !self.skippable[line - 1])
    }

    /// The status of the annotation spanning `span`.
    pub fn status(&self, span: Span) -> ExecutionStatus {
        if span.end == usize::MAX {
            return ExecutionStatus::Unknown { line: span.start };
        }
        match self.target(span) {
            None => ExecutionStatus::Unknown { line: 0 },
            Some(line) => match self.coverage.get(&line) {
                Some(Hit::Hit) => ExecutionStatus::Executed,
                Some(Hit::Miss) => ExecutionStatus::NotExecuted,
                None => ExecutionStatus::Unknown { line },
            },
        }
    }
}

/// 0.4.3's message for a defeated file: its issues over every report, in report order.
pub fn defeated_message(path: &Path, issues: &[Issue]) -> String {
    let join = |kind: IssueKind| {
        let lines: Vec<String> = issues
            .iter()
            .filter(|i| i.kind == kind)
            .map(|i| i.line.to_string())
            .collect();
        lines.join(", ")
    };
    let mut detail = Vec::new();
    let parse = join(IssueKind::ParseError);
    if !parse.is_empty() {
        detail.push(format!("parse error(s) at line(s) {parse}"));
    }
    let unbalanced = join(IssueKind::UnbalancedScopes);
    if !unbalanced.is_empty() {
        detail.push(format!("unbalanced scope stream near line(s) {unbalanced}"));
    }
    format!(
        "Coverage model: {} — the selected classifier could not produce a trustworthy classification ({}). The file may not be this language, or the classifier has a gap. Its annotations are reported Unknown; report the file or the classifier gap.",
        path.display(),
        detail.join("; ")
    )
}

/// 0.4.3's messages for the defeated files of a run over `executions` (one per report): one
/// per file, by path, always printed.
pub fn defeated_messages(executions: &[Execution]) -> Vec<String> {
    let mut defeated: BTreeMap<&Path, Vec<Issue>> = BTreeMap::new();
    for execution in executions {
        for (path, model) in execution.models() {
            if let FileModel::Defeated(issues) = model {
                defeated.entry(path).or_default().extend(issues);
            }
        }
    }
    defeated
        .into_iter()
        .map(|(path, issues)| defeated_message(path, &issues))
        .collect()
}

/// 0.4.3's verbose lines on the models of a run over `executions`: how many files each
/// model decided (defeated files in neither), then each degraded file.
pub fn model_summary(executions: &[Execution]) -> Vec<String> {
    let mut classified = BTreeSet::new();
    let mut degraded = BTreeSet::new();
    for execution in executions {
        for (path, model) in execution.models() {
            match model {
                FileModel::Classified(_) => classified.insert(path),
                FileModel::Degraded(_) => degraded.insert(path),
                FileModel::Defeated(_) => false,
            };
        }
    }
    let mut lines = vec![format!(
        "Coverage model: {} file(s) language-aware (verified), {} file(s) degraded — no classifier (verified)",
        classified.len(),
        degraded.len()
    )];
    lines.extend(
        degraded
            .iter()
            .map(|path| format!("  degraded (no classifier, verified): {}", path.display())),
    );
    lines
}
