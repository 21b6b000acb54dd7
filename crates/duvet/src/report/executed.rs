//! Executed coverage in `duvet report` (`--coverage-report GLOB`, `--coverage-format`), which
//! duvet 0.4.3's reports lack: each requirement's executed state, shown on the HTML page and
//! added to the JSON reports, never read by `--ci`.
//!
//! * **Reading** is `duvet query`'s ([`crate::query::measure`]): the patterns expanded as
//!   0.4.3 expands them (relative to the working directory), each report read in its format
//!   and matched to every source file of the project, ambiguities refused in 0.4.3's words.
//!   Unlike `duvet query`, which (as 0.4.3) reads a pattern that matches no file as no report,
//!   a report is not made from no data: such a pattern is an error, as in `duvet mcp`.
//! * **States** are `duvet mcp`'s ([`Coverage`], [`ExecutedState`]): a requirement's
//!   implementation citations (the model's: those whose quote overlaps it) each executed,
//!   not executed, structural or unknown, folded over the reports; the requirement
//!   `executed` when all ran, `partly_executed` when some did, `not_executed` when none did,
//!   `unknown` when no report has data for any of their lines, `uncited` without one.
//! * **Requirements** of the reports are the `SPEC` annotations; each is the model's
//!   requirement of its section with its normalized text ([`requirement_of`]). Its
//!   `execution` in the JSON reports is the object `get_requirement_status` answers (`state`,
//!   `citations` with those that did not run first), every citation listed.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::annotation::{Annotation, AnnotationType};
use crate::config::ProjectConfig;
use crate::execution::view::{Coverage, Executed, ExecutedState};
use crate::execution::{self, CoverageFormat, ExecutionStatus};
use crate::model::Model;

use super::json_v2::ReportV2;
use super::{Report, Sources};

/// What `--coverage-report` and `--coverage-format` ask for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wanted {
    pub patterns: Vec<String>,
    pub format: CoverageFormat,
}

/// The executed state of a report's requirements and implementation citations.
#[derive(Debug, Clone)]
pub struct Executions {
    pub format: CoverageFormat,
    /// The report files read, as the patterns found them.
    pub reports: Vec<PathBuf>,
    /// Per entry of the report ([`Report::entries`]): a requirement's executed state.
    requirements: Vec<Option<Executed>>,
    /// Per entry: an implementation citation's status.
    citations: Vec<Option<ExecutionStatus>>,
}

impl Executions {
    /// Read the coverage reports `wanted` names for `report`, made from `sources` and `model`
    /// (a model of [`crate::model::Scope::Full`]) of the project `config` describes, whose
    /// files are relative to `root`, the working directory. Errors are one line each, as
    /// `duvet query` says them.
    pub fn load(
        root: &Path,
        config: &ProjectConfig,
        sources: &Sources,
        model: &Model,
        report: &Report,
        wanted: &Wanted,
    ) -> Result<Self, String> {
        let files = execution::source_files(config);
        let measured = crate::query::measure(
            root,
            &wanted.patterns,
            (wanted.format, crate::execution::reports::read),
            &files,
            &sources.annotations,
        )?;
        if let Some(pattern) = measured.unmatched.first() {
            return Err(format!(
                "no coverage report matches --coverage-report '{}' (run the tests with \
                 coverage first, or fix the path; paths and globs are relative to the working \
                 directory)",
                mcp_common::clip(pattern, 200)
            ));
        }
        let reports: Vec<PathBuf> = measured
            .reports
            .iter()
            .map(|p| p.strip_prefix(".").unwrap_or(p).to_path_buf())
            .collect();
        let coverage = Coverage::of_executions(model, reports.clone(), &measured.executions);
        Ok(Self::of(report, model, &coverage, wanted.format, reports))
    }

    /// The states of `report`'s entries by `coverage` of `model`.
    pub fn of(
        report: &Report,
        model: &Model,
        coverage: &Coverage,
        format: CoverageFormat,
        reports: Vec<PathBuf>,
    ) -> Self {
        let by_place: HashMap<(&Path, usize), usize> = model
            .citations
            .iter()
            .enumerate()
            .map(|(i, c)| ((c.file.as_path(), c.line), i))
            .collect();
        let mut requirements = Vec::with_capacity(report.entries.len());
        let mut citations = Vec::with_capacity(report.entries.len());
        for entry in &report.entries {
            let a = &entry.annotation;
            requirements.push(match a.kind {
                AnnotationType::Spec => {
                    requirement_of(model, a).map(|r| execution(model, coverage, r))
                }
                _ => None,
            });
            citations.push(match a.kind {
                AnnotationType::Implementation => by_place
                    .get(&(a.file.as_path(), a.line))
                    .map(|&c| coverage.citation(c)),
                _ => None,
            });
        }
        Self {
            format,
            reports,
            requirements,
            citations,
        }
    }

    /// The executed state of the requirement that is entry `anno` of the report.
    pub fn requirement(&self, anno: usize) -> Option<&Executed> {
        self.requirements.get(anno).and_then(Option::as_ref)
    }

    /// The status of the implementation citation that is entry `anno`.
    pub fn citation(&self, anno: usize) -> Option<ExecutionStatus> {
        self.citations.get(anno).copied().flatten()
    }

    /// `,"execution":{…}` for entry `anno` of the JSON report, when it is a requirement.
    pub fn json_field(&self, anno: usize, out: &mut Vec<u8>) {
        if let Some(executed) = self.requirement(anno) {
            out.extend_from_slice(b",\"execution\":");
            // Writing into a vector cannot fail.
            let _ = serde_json::to_writer(&mut *out, executed);
        }
    }

    /// Give each requirement of the v2 report `v2`, made from `report`, its `execution`:
    /// the requirement written at the same file and line.
    pub fn annotate_v2(&self, report: &Report, v2: &mut ReportV2) {
        let mut by_place: HashMap<(&str, usize), usize> = HashMap::new();
        for (anno, entry) in report.entries.iter().enumerate() {
            if entry.annotation.kind == AnnotationType::Spec {
                by_place
                    .entry((entry.source.as_str(), entry.annotation.line))
                    .or_insert(anno);
            }
        }
        let linked = &v2.sources.linked;
        for requirement in v2.annotations.requirement.values_mut() {
            let executed = linked
                .get(&requirement.source.src)
                .and_then(|file| {
                    by_place.get(&(
                        file.file_name.as_str(),
                        requirement.source.line.unwrap_or(0),
                    ))
                })
                .and_then(|&anno| self.requirement(anno));
            requirement.execution = executed.and_then(|e| serde_json::to_value(e).ok());
        }
    }
}

/// The model's requirement that the `SPEC` annotation `a` lists: the one of its section with
/// its normalized text (a reference to a whole section lists none).
pub fn requirement_of(model: &Model, a: &Annotation) -> Option<usize> {
    let (spec, section) = model.resolve_target(&a.target).ok()?;
    let text = crate::spec::requirements::normalize(&a.quote);
    if text.is_empty() {
        return None;
    }
    model
        .specs
        .get(spec)?
        .sections
        .get(section)?
        .requirements
        .iter()
        .copied()
        .find(|&r| model.requirements[r].text == text)
}

/// Requirement `r`'s executed state with every implementation citation, those that did not
/// run first (`duvet mcp`'s `execution`, not cut short).
fn execution(model: &Model, coverage: &Coverage, r: usize) -> Executed {
    let (state, mut cites) = coverage.requirement(r);
    cites.sort_by_key(|&c| (coverage.citation(c) == ExecutionStatus::Executed, c));
    Executed {
        state,
        citations: cites
            .iter()
            .map(|&c| crate::executed::run(model, coverage, c))
            .collect(),
        error: None,
    }
}

/// The states in the order the page lists them.
pub const STATES: [ExecutedState; 5] = [
    ExecutedState::Executed,
    ExecutedState::PartlyExecuted,
    ExecutedState::NotExecuted,
    ExecutedState::Unknown,
    ExecutedState::Uncited,
];

/// Whether a requirement in `state` is one whose implementation code did not all run (what
/// `list_unexecuted_requirements` lists, and the page's "Not executed" filter shows).
pub fn unexecuted(state: ExecutedState) -> bool {
    !matches!(state, ExecutedState::Executed | ExecutedState::Uncited)
}

/// A state's name in the JSON reports and `duvet mcp`'s answers.
pub fn state_name(state: ExecutedState) -> &'static str {
    match state {
        ExecutedState::Executed => "executed",
        ExecutedState::PartlyExecuted => "partly_executed",
        ExecutedState::NotExecuted => "not_executed",
        ExecutedState::Unknown => "unknown",
        ExecutedState::Uncited => "uncited",
    }
}

/// The index of a state in [`STATES`].
pub fn state_index(state: ExecutedState) -> usize {
    match state {
        ExecutedState::Executed => 0,
        ExecutedState::PartlyExecuted => 1,
        ExecutedState::NotExecuted => 2,
        ExecutedState::Unknown => 3,
        ExecutedState::Uncited => 4,
    }
}
