//! The executed state of a project's citations, and of its requirements through their
//! implementation citations, in the coverage reports a user names (`--coverage-report GLOB`,
//! `--coverage-format lcov|jacoco-xml`): what `duvet mcp` and `duvet query` answer from.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use globset::GlobBuilder;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{CoverageFormat, Execution, ExecutionStatus, Report, Span, reports};
use crate::annotation::AnnotationType;
use crate::model::Model;

/// The coverage reports to read: glob patterns (relative to the project's root unless
/// absolute; `*` stays within a directory, `**` crosses them) and their format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoverageSettings {
    pub patterns: Vec<String>,
    pub format: CoverageFormat,
}

/// The most report files a pattern may match (a pattern matching a whole build directory is
/// a mistake, not a request to read it all).
const MAX_REPORTS: usize = 1000;

impl CoverageSettings {
    /// The report files the patterns match, sorted, each once. A pattern that matches
    /// nothing is an error.
    pub fn files(&self, root: &Path) -> Result<Vec<PathBuf>, String> {
        let mut found = BTreeSet::new();
        for pattern in &self.patterns {
            let matched = expand(root, pattern)?;
            if matched.is_empty() {
                return Err(format!(
                    "no coverage report matches '{}'",
                    mcp_common::clip(pattern, 200)
                ));
            }
            found.extend(matched);
            if found.len() > MAX_REPORTS {
                return Err(format!(
                    "'{}' matches more than {MAX_REPORTS} files; name the coverage reports more precisely",
                    mcp_common::clip(pattern, 200)
                ));
            }
        }
        Ok(found.into_iter().collect())
    }

    /// Read every report the patterns match.
    pub fn load(&self, root: &Path) -> Result<Vec<(PathBuf, Report)>, String> {
        self.files(root)?
            .into_iter()
            .map(|file| reports::read(&file, self.format).map(|report| (file, report)))
            .collect()
    }
}

/// The files `pattern` matches (absolute paths).
fn expand(root: &Path, pattern: &str) -> Result<Vec<PathBuf>, String> {
    let full = root.join(pattern.trim());
    let text = full.to_string_lossy().into_owned();
    if !text.contains(['*', '?', '[', '{']) {
        return Ok(if full.is_file() {
            vec![full]
        } else {
            Vec::new()
        });
    }
    let glob = GlobBuilder::new(&text)
        .literal_separator(true)
        .build()
        .map_err(|e| {
            format!(
                "invalid coverage report pattern '{}': {e}",
                mcp_common::clip(pattern, 200)
            )
        })?
        .compile_matcher();
    // Walk from the pattern's literal directory prefix.
    let mut base = PathBuf::new();
    for part in full.components() {
        if part
            .as_os_str()
            .to_string_lossy()
            .contains(['*', '?', '[', '{'])
        {
            break;
        }
        base.push(part);
    }
    let mut files: Vec<PathBuf> = walkdir::WalkDir::new(&base)
        .into_iter()
        .filter_entry(|e| e.file_name() != ".git")
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file() && glob.is_match(e.path()))
        .map(walkdir::DirEntry::into_path)
        .take(MAX_REPORTS + 1)
        .collect();
    files.sort();
    Ok(files)
}

/// The state of a requirement's implementation in the coverage reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ExecutedState {
    /// Every implementation citation's code ran.
    Executed,
    /// Some ran, some did not (or could not be told).
    PartlyExecuted,
    /// None of them ran.
    NotExecuted,
    /// No report has data for the lines they stand on.
    Unknown,
    /// No implementation cites it.
    Uncited,
}

/// A citation's code in the coverage reports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CitationRun {
    /// `file:line`
    pub id: String,
    /// executed, not_executed, structural or unknown
    pub status: String,
    /// Line lacking data (unknown)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
}

/// Whether its implementation citations' code ran (with --coverage-report)
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Executed {
    pub state: ExecutedState,
    pub citations: Vec<CitationRun>,
    /// Why the reports could not be read
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The executed state of every citation of a model, folded over the reports.
#[derive(Debug, Clone, Default)]
pub struct Coverage {
    /// The report files read.
    pub reports: Vec<PathBuf>,
    /// Per citation of the model, its status.
    citations: Vec<ExecutionStatus>,
    /// How many annotated files the reports cover.
    pub files: usize,
    /// Per requirement of the model, its implementation citations.
    implementations: HashMap<usize, Vec<usize>>,
}

impl Coverage {
    /// The statuses of `model`'s citations (files relative to `root`) in `reports`.
    pub fn build(
        model: &Model,
        root: &Path,
        reports: &[(PathBuf, Report)],
    ) -> Result<Self, String> {
        let mut spans: HashMap<PathBuf, Vec<Span>> = HashMap::new();
        for c in &model.citations {
            spans
                .entry(c.file.clone())
                .or_default()
                .push(span(c.line, &c.comment_text));
        }
        for invalid in &model.invalid {
            spans
                .entry(PathBuf::from(&invalid.file_path))
                .or_default()
                .push(span(invalid.line_number, &invalid.comment_text));
        }
        let files: Vec<PathBuf> = {
            let mut files: Vec<PathBuf> = spans.keys().cloned().collect();
            files.sort();
            files
        };
        let read = |file: &Path| {
            std::fs::read(root.join(file))
                .ok()
                .map(|b| crate::project::text_of(&b).into_owned())
        };
        let executions: Vec<Execution> = reports
            .iter()
            .map(|(path, report)| {
                Execution::new(root, &files, &spans, report, read)
                    .map_err(|e| format!("{}: {e}", path.display()))
            })
            .collect::<Result<_, _>>()?;
        let paths = reports.iter().map(|(p, _)| p.clone()).collect();
        Ok(Self::of_executions(model, paths, &executions))
    }

    /// The statuses of `model`'s citations in `executions`, one per report (the files
    /// `reports`), however they were read and matched: `duvet mcp` reads them as
    /// [`Self::build`] does, `duvet report` as `duvet query` does ([`crate::query::measure`]).
    pub fn of_executions(model: &Model, reports: Vec<PathBuf>, executions: &[Execution]) -> Self {
        let annotated: BTreeSet<&Path> = model
            .citations
            .iter()
            .map(|c| c.file.as_path())
            .chain(model.invalid.iter().map(|i| Path::new(&i.file_path)))
            .collect();
        let covered = annotated
            .iter()
            .filter(|f| executions.iter().any(|e| e.covers(f)))
            .count();
        let citations = model
            .citations
            .iter()
            .map(|c| {
                if matches!(c.kind, AnnotationType::Spec | AnnotationType::Todo) {
                    return ExecutionStatus::NotExecuted;
                }
                let span = span(c.line, &c.comment_text);
                ExecutionStatus::fold(executions.iter().map(|e| e.status(&c.file, span)))
            })
            .collect();
        let mut implementations: HashMap<usize, Vec<usize>> = HashMap::new();
        for (i, c) in model.citations.iter().enumerate() {
            if c.kind == AnnotationType::Implementation {
                for &r in &c.requirements {
                    implementations.entry(r).or_default().push(i);
                }
            }
        }
        Self {
            reports,
            citations,
            files: covered,
            implementations,
        }
    }

    /// The status of citation `c` of the model.
    pub fn citation(&self, c: usize) -> ExecutionStatus {
        self.citations
            .get(c)
            .copied()
            .unwrap_or(ExecutionStatus::NotExecuted)
    }

    /// Requirement `r`'s implementation citations (indexes into the model's) and their state.
    pub fn requirement(&self, r: usize) -> (ExecutedState, Vec<usize>) {
        let cites: Vec<usize> = self.implementations.get(&r).cloned().unwrap_or_default();
        let statuses: Vec<ExecutionStatus> = cites.iter().map(|&c| self.citation(c)).collect();
        let ran = statuses
            .iter()
            .filter(|s| **s == ExecutionStatus::Executed)
            .count();
        let unknown = statuses
            .iter()
            .filter(|s| matches!(s, ExecutionStatus::Unknown { .. }))
            .count();
        let state = if cites.is_empty() {
            ExecutedState::Uncited
        } else if ran == cites.len() {
            ExecutedState::Executed
        } else if ran > 0 {
            ExecutedState::PartlyExecuted
        } else if unknown == cites.len() {
            ExecutedState::Unknown
        } else {
            ExecutedState::NotExecuted
        };
        (state, cites)
    }
}

/// The lines of an annotation starting at `line` whose text is `comment_text`.
fn span(line: usize, comment_text: &str) -> Span {
    let lines = comment_text.lines().count().max(1);
    Span {
        start: line,
        end: line + lines - 1,
    }
}
