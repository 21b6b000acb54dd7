//! Executed coverage: whether the code an annotation stands on ran, from coverage reports
//! (LCOV as `cargo llvm-cov`, grcov and `cargo tarpaulin` write it; JaCoCo XML), as duvet
//! 0.4.3's `query --check coverage` decides it.
//!
//! * **Reports** ([`reports`]) give each file's lines as hit or missed: a line is hit when
//!   it ran (LCOV `DA` count above 0, JaCoCo covered instructions) or one of its branches
//!   was taken; JaCoCo lines with branches count by their branches only, as 0.4.3 reads them.
//!   Several records of one file are merged, a hit winning.
//! * **Files** are matched to a report's entries by 0.4.3's rule: the entry's path is a
//!   suffix of the file's absolute path at a `/` boundary (`com/example/Foo.java`,
//!   `src/lib.rs`, `/abs/path/src/lib.rs`); a file matching two entries, or an entry two
//!   files match, is an error, never a guess.
//! * **An annotation's target** is the first line after it that is not blank and not part
//!   of an annotation (0.4.3's degraded model, which it uses for every language but Java):
//!   hit means executed, missed means not executed, a line the report does not list (a
//!   comment, a declaration, past the end) means unknown, with that line. Requirement-file
//!   annotations and TODOs never execute.
//! * **Java** (`.java`) is decided by 0.4.3's classified model instead ([`java`] reads each
//!   line's role from tree-sitter-java's tree, [`classified`] resolves targets within scopes
//!   and carries execution back from hit lines); a Java file its parser rejects is
//!   *defeated*: its annotations are unknown at the first error, and [`defeated_messages`]
//!   says so in 0.4.3's words.
//! * **Several reports** fold per annotation: executed in any wins, then unknown, then not
//!   executed.

pub mod classified;
pub mod java;
mod model;
pub mod reports;
pub mod view;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

pub use model::{
    Degraded, FileModel, Issue, IssueKind, defeated_message, defeated_messages, model_summary,
};
pub use reports::{CoverageFormat, FileCoverage, Hit, Report};

/// Whether an annotation's code ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ExecutionStatus {
    Executed,
    NotExecuted,
    /// Its target is structure only (no code to run).
    Structural,
    /// Its target line has no coverage data (0 when it has no target line).
    Unknown {
        line: usize,
    },
}

impl ExecutionStatus {
    pub fn name(self) -> &'static str {
        match self {
            Self::Executed => "executed",
            Self::NotExecuted => "not_executed",
            Self::Structural => "structural",
            Self::Unknown { .. } => "unknown",
        }
    }

    /// Fold the statuses of one annotation in several reports (0.4.3's rule).
    pub fn fold(statuses: impl IntoIterator<Item = Self>) -> Self {
        let mut folded = Self::NotExecuted;
        for status in statuses {
            match status {
                Self::Executed => return Self::Executed,
                Self::Unknown { .. } => folded = status,
                _ if folded == Self::NotExecuted => folded = status,
                _ => {}
            }
        }
        folded
    }
}

/// An annotation's lines in its file, 1-based and inclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

/// Whether `entry`, a path as a coverage report names a file, names the file at
/// `absolute`: a suffix of it that starts at a `/` boundary.
pub fn path_matches(absolute: &str, entry: &str) -> bool {
    let entry = entry.replace('\\', "/");
    let absolute = absolute.replace('\\', "/");
    if entry.is_empty() || !absolute.ends_with(&entry) {
        return false;
    }
    let prefix = absolute.len() - entry.len();
    prefix == 0 || absolute.as_bytes()[prefix - 1] == b'/'
}

/// The report entry of each project file (relative paths under `root`) that a report
/// covers. Ambiguities are errors, in 0.4.3's words.
pub fn match_files<'r>(
    root: &Path,
    files: &[PathBuf],
    report: &'r Report,
) -> Result<HashMap<PathBuf, &'r FileCoverage>, String> {
    let mut matched: HashMap<PathBuf, &FileCoverage> = HashMap::new();
    let mut claimed: HashMap<&str, Vec<&Path>> = HashMap::new();
    for file in files {
        let absolute = root.join(file).to_string_lossy().into_owned();
        let mut entries: Vec<(&str, &FileCoverage)> = report
            .files
            .iter()
            .filter(|(entry, _)| path_matches(&absolute, entry))
            .map(|(entry, coverage)| (entry.as_str(), coverage))
            .collect();
        if entries.len() > 1 {
            entries.sort_by_key(|(entry, _)| *entry);
            let names: Vec<&str> = entries.iter().map(|(entry, _)| *entry).collect();
            return Err(format!(
                "coverage is ambiguous for {}: its path matches multiple report entries ({}). duvet cannot tell which entry refers to this file.",
                file.display(),
                names.join(", ")
            ));
        }
        if let Some((entry, coverage)) = entries.pop() {
            claimed.entry(entry).or_default().push(file);
            matched.insert(file.clone(), coverage);
        }
    }
    let mut clashes: Vec<(&str, Vec<&Path>)> =
        claimed.into_iter().filter(|(_, f)| f.len() > 1).collect();
    clashes.sort();
    if let Some((entry, mut files)) = clashes.into_iter().next() {
        files.sort();
        let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
        return Err(format!(
            "coverage report entry '{entry}' is ambiguous: it matches multiple source files ({}). duvet cannot tell which file the report refers to.",
            names.join(", ")
        ));
    }
    Ok(matched)
}

/// Every source file of the project (its `[[source]]` patterns, each file once), relative to
/// its root, sorted: the files 0.4.3 matches a coverage report's entries against, annotated
/// or not. The patterns are read as the project reads them to find annotations
/// ([`crate::project::matching_files`]); a pattern that does not compile matches nothing
/// here (the project reports it).
pub fn source_files(config: &crate::config::ProjectConfig) -> Vec<PathBuf> {
    let mut files = std::collections::BTreeSet::new();
    for source in &config.sources {
        if let Ok(pattern) = crate::project::Pattern::new(&source.pattern) {
            files.extend(crate::project::matching_files(&config.root, &pattern));
        }
    }
    files.into_iter().collect()
}

/// The statuses of a project's annotations in one report: the models of the files it
/// covers.
#[derive(Debug, Clone, Default)]
pub struct Execution {
    files: HashMap<PathBuf, FileModel>,
}

impl Execution {
    /// Build the models of the project's `files` (relative to `root`) that `report` covers;
    /// `spans` lists each file's annotations, `read` gives a file's text.
    pub fn new(
        root: &Path,
        files: &[PathBuf],
        spans: &HashMap<PathBuf, Vec<Span>>,
        report: &Report,
        read: impl Fn(&Path) -> Option<String>,
    ) -> Result<Self, String> {
        let matched = match_files(root, files, report)?;
        let mut models = HashMap::with_capacity(matched.len());
        for (file, coverage) in matched {
            let Some(text) = read(&file) else { continue };
            let file_spans = spans.get(&file).map_or(&[][..], Vec::as_slice);
            let model = FileModel::new(&file, &text, file_spans, coverage);
            models.insert(file, model);
        }
        Ok(Self { files: models })
    }

    /// The status of the annotation at `span` of `file`: not executed when the report does
    /// not cover the file.
    pub fn status(&self, file: &Path, span: Span) -> ExecutionStatus {
        self.files
            .get(file)
            .map_or(ExecutionStatus::NotExecuted, |model| model.status(span))
    }

    /// How many of the project's files the report covers.
    pub fn files(&self) -> usize {
        self.files.len()
    }

    /// Whether the report covers `file`.
    pub fn covers(&self, file: &Path) -> bool {
        self.files.contains_key(file)
    }

    /// The model of each file the report covers, by path.
    pub fn models(&self) -> impl Iterator<Item = (&Path, &FileModel)> {
        self.files
            .iter()
            .map(|(path, model)| (path.as_path(), model))
    }
}

#[cfg(test)]
mod tests;
