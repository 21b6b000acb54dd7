//! `duvet query`: duvet 0.4.3's checks of a project's annotations, their verdicts and their
//! words, answered from the model `duvet mcp` answers from.
//!
//! Five checks (`--check`, several at once, run in the order given):
//!
//! - `implementation`: every requirement (a `spec` annotation: an entry of a requirement file,
//!   which 0.4.3 writes for every declared specification before it reads the project) must be
//!   quoted entirely by implementation, implication and exception annotations of the same
//!   target. It fails on a requirement nothing quotes, one quoted in part, one a TODO quotes,
//!   and one quoted both by those and by TODOs ("mixed").
//! - `test`: every implementation annotation must be quoted entirely by test annotations of the
//!   same target; implications, exceptions and TODOs need no test, and a test without an
//!   implementation is fine.
//! - `coverage`: every test annotation must have run, and run the implementation, implication
//!   and exception annotations that quote it, in one same coverage report; a test none of them
//!   quotes fails too ([`coverage`], which says how reports are found, read and matched).
//! - `executed-coverage`: `coverage` for the tests that ran (a test that did not run in any
//!   report is passed over; one whose line the reports cannot tell still fails).
//! - `duplicates`: no annotation may be quoted entirely by others of the same type and target.
//!
//! Coverage is 0.4.3's: quotes are compared in the section's text as duvet reads it, after
//! whitespace normalization ([`crate::coverage::normalize`]), exactly; a requirement is placed
//! at the first occurrence of its quote, each covering quote at the occurrence that overlaps
//! it most, then lies nearest ([`crate::checks`] shares that search with the MCP tools). Targets
//! are compared as written, so `…#section-4.2` and `…#4.2` are two targets here (the MCP
//! tools, on purpose, call them one section), and a reference without a quote is a duplicate
//! of nothing, as in 0.4.3 (the MCP tool `list_duplicate_citations` leaves it out).
//!
//! `--section` keeps the annotations whose target is one of the paths given (any section) or
//! `path#section`; `--quote` those whose quote holds one of the texts, in any case. They narrow
//! what is checked (the requirements, the implementations tested, the tests correlated, the
//! duplicates looked for), never what covers it, so a filter cannot turn a covered
//! requirement into a miss.
//!
//! Where 0.4.3 stops, so does a query (exit 1): a project it cannot read (the errors of
//! `duvet report`, [`crate::report::Report::errors`]), a quote it does not find exactly in
//! its section once whitespace is normalized — one duvet's report matches within one edit, a
//! typo — which 0.4.3 reports with an error of its own ([`Unmatched`]), and, for the coverage
//! checks, a report pattern that is not one, a report that cannot be read, and a report entry
//! that names two source files or a file two entries name.
//!
//! Differences from 0.4.3, decided (none turns a passing run red):
//!
//! - those errors are told one line each (`error: file:line: …`, `error: REPORT: …`), not as
//!   0.4.3's nested diagnostics, and every such quote is named (0.4.3's `duplicates` check
//!   names those of one annotation type); ambiguities and pattern errors are in 0.4.3's
//!   words after the report's name (or `--coverage-report PATTERN:`), a report it cannot read
//!   in ours, naming the line or element (0.4.3: "Coverage error: …");
//! - the progress lines 0.4.3 writes before the results (and their timings) are not written,
//!   nor the padding its progress line puts before the first verdict; the coverage checks'
//!   "Coverage model: …" lines are (a file the Java classifier refused, always; with
//!   `--verbose` the models used), as 0.4.3 writes them, before the results;
//! - on a terminal (`NO_COLOR` unset) the verdicts are green or red too; text is wrapped at
//!   the terminal's width or 80 columns and drawn in Unicode, as 0.4.3 draws it;
//! - `--coverage-format lcov` reads LCOV tracefiles (0.4.3 lists the format as future and
//!   refuses it, exit 2); it is left out of the help printed without a check, which is
//!   0.4.3's;
//! - a `--coverage-report` pattern that matches no file is read as 0.4.3 reads it, as no
//!   report (so `coverage` fails every test as not executed, and `executed-coverage` passes
//!   over them all), but a warning line says so before the results;
//! - a source file two `[[source]]` entries match (two comment styles) is one file, where
//!   0.4.3 holds it twice and calls a report entry naming it ambiguous (an error); files that
//!   are not UTF-8 are read as the rest of duvet reads them (invalid sequences replaced),
//!   where 0.4.3 stops;
//! - `duvet query --help` describes the checks in its own words (the help printed without a
//!   check is 0.4.3's);
//! - a JaCoCo report cut inside a `<package>` is an error, on which 0.4.3 loops forever (one
//!   cut after its last package, its summary counters lost, is read as 0.4.3 reads it).

mod classify;
pub mod coverage;
mod diagnostic;
pub mod glob;
mod spans;
mod text;

use std::collections::BTreeSet;

use crate::annotation::{Annotation, AnnotationType};
use crate::execution::{Execution, defeated_messages, model_summary};
use crate::model::Model;

use classify::{Classified, Items, Pool};

pub use coverage::{Correlation, Correlations, Measured, measure};
pub use diagnostic::Renderer;
pub use text::write;

/// A check of `duvet query --check`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    Implementation,
    Test,
    Duplicates,
    /// Every test ran, and ran what it tests, by the coverage reports.
    Coverage,
    /// `Coverage`, for the tests that ran.
    ExecutedCoverage,
}

/// What `--section` and `--quote` keep (0.4.3's requirement mode): annotations whose target
/// is one of `targets` (a path, any section; or a path and a section) and whose quote holds
/// one of `quotes` (in lower case); either list empty keeps all.
#[derive(Debug, Clone, Default)]
pub struct Scope {
    targets: Vec<(String, Option<String>)>,
    quotes: Vec<String>,
}

impl Scope {
    pub fn new(sections: &[String], quotes: &[String]) -> Self {
        Self {
            targets: sections
                .iter()
                .map(|s| match s.split_once('#') {
                    Some((path, section)) => (path.to_string(), Some(section.to_string())),
                    None => (s.clone(), None),
                })
                .collect(),
            quotes: quotes.iter().map(|q| q.to_lowercase()).collect(),
        }
    }

    fn contains(&self, a: &Annotation) -> bool {
        let (path, section) = match a.target.split_once('#') {
            Some((path, section)) => (path, Some(section)),
            None => (a.target.as_str(), None),
        };
        let target = self.targets.is_empty()
            || self
                .targets
                .iter()
                .any(|(p, s)| p == path && s.as_deref().is_none_or(|s| Some(s) == section));
        target && {
            let lower = a.quote.to_lowercase();
            self.quotes.is_empty() || self.quotes.iter().any(|q| lower.contains(q.as_str()))
        }
    }
}

/// An annotation (an index into [`Query::annotations`]) and those that cover it.
#[derive(Debug, Clone)]
pub struct Covered {
    pub target: usize,
    /// Whether all of its quote is covered (by the annotations that resolve it: TODOs that
    /// also cover it do not count).
    pub fully: bool,
    pub by: Vec<usize>,
}

/// The result of `--check implementation`.
#[derive(Debug, Clone)]
pub struct Implementation {
    pub total: usize,
    pub fully: Vec<Covered>,
    pub mixed: Vec<Covered>,
    pub incomplete: Vec<Covered>,
    pub todo: Vec<Covered>,
    pub missing: Vec<usize>,
}

/// The result of `--check test`.
#[derive(Debug, Clone)]
pub struct Tests {
    pub total: usize,
    pub fully: Vec<Covered>,
    pub incomplete: Vec<Covered>,
    pub missing: Vec<usize>,
}

/// The duplicates of one annotation type.
#[derive(Debug, Clone, Default)]
pub struct Category {
    pub duplicates: Vec<Covered>,
    pub overlap: Vec<Covered>,
    pub unique: Vec<usize>,
}

/// The result of `--check duplicates`: by type, in 0.4.3's order.
#[derive(Debug, Clone)]
pub struct Duplicates {
    pub categories: Vec<(&'static str, Category)>,
}

#[derive(Debug, Clone)]
pub enum Outcome {
    Implementation(Implementation),
    Tests(Tests),
    Duplicates(Duplicates),
    Coverage(Correlations),
}

impl Outcome {
    pub fn passed(&self) -> bool {
        match self {
            Self::Implementation(r) => {
                r.mixed.is_empty()
                    && r.incomplete.is_empty()
                    && r.todo.is_empty()
                    && r.missing.is_empty()
            }
            Self::Tests(r) => r.incomplete.is_empty() && r.missing.is_empty(),
            Self::Duplicates(r) => r.categories.iter().all(|(_, c)| c.duplicates.is_empty()),
            Self::Coverage(r) => r.passed(),
        }
    }
}

/// A run of `duvet query`: the project's annotations in duvet's order (by file, then line,
/// each once) and the outcome of each check.
#[derive(Debug)]
pub struct Query<'a> {
    pub annotations: Vec<&'a Annotation>,
    pub outcomes: Vec<Outcome>,
    pub verbose: bool,
    /// What 0.4.3 says while it runs the coverage checks (its "Coverage model:" lines),
    /// printed before the results.
    pub notes: Vec<String>,
}

impl Query<'_> {
    pub fn passed(&self) -> bool {
        self.outcomes.iter().all(Outcome::passed)
    }
}

/// An annotation whose quote 0.4.3's query does not find exactly in its section (after
/// whitespace normalization), where it stops with "Exactly matchable quote not found in
/// section".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unmatched<'a> {
    pub annotation: &'a Annotation,
}

/// The type names of `--check duplicates`, in 0.4.3's order.
const CATEGORIES: [(&str, AnnotationType); 6] = [
    ("Spec", AnnotationType::Spec),
    ("Implementation", AnnotationType::Implementation),
    ("Test", AnnotationType::Test),
    ("Exception", AnnotationType::Exception),
    ("Todo", AnnotationType::Todo),
    ("Implication", AnnotationType::Implication),
];

/// Run `checks` on `annotations` (the project's, as read: the model's inputs), finding their
/// quotes in the sections of `model`; the coverage checks read `executions` (one per coverage
/// report, [`measure`]). Fails as 0.4.3 does on a quote it cannot find exactly.
pub fn run<'a>(
    model: &'a Model,
    annotations: &'a [Annotation],
    checks: &[Check],
    scope: &Scope,
    verbose: bool,
    executions: &[Execution],
) -> Result<Query<'a>, Vec<Unmatched<'a>>> {
    let mut sorted: Vec<&Annotation> = annotations.iter().collect();
    sorted.sort_by(|a, b| {
        (&a.file, a.line, &a.target, &a.quote).cmp(&(&b.file, b.line, &b.target, &b.quote))
    });
    // The same annotation read twice (a file two `[[source]]` entries match) is one, as in
    // 0.4.3's set.
    sorted.dedup_by(|a, b| {
        (
            &a.file,
            a.line,
            a.kind,
            &a.target,
            &a.quote,
            &a.comment_text,
        ) == (
            &b.file,
            b.line,
            b.kind,
            &b.target,
            &b.quote,
            &b.comment_text,
        )
    });
    let items = Items::new(model, &sorted);
    let of = |kinds: &[AnnotationType]| -> Vec<usize> {
        (0..sorted.len())
            .filter(|&i| kinds.contains(&sorted[i].kind))
            .collect()
    };
    let in_scope = |list: Vec<usize>| -> Vec<usize> {
        list.into_iter()
            .filter(|&i| scope.contains(sorted[i]))
            .collect()
    };
    let mut unmatched = BTreeSet::new();
    let mut outcomes = Vec::new();
    let mut notes = Vec::new();
    for check in checks {
        let outcome = match check {
            Check::Implementation => {
                let requirements = in_scope(of(&[AnnotationType::Spec]));
                let resolving = Pool::new(
                    &items,
                    of(&[
                        AnnotationType::Implementation,
                        AnnotationType::Implication,
                        AnnotationType::Exception,
                    ]),
                );
                let todos = Pool::new(&items, of(&[AnnotationType::Todo]));
                let c = items.classify(&requirements, &resolving, &todos, &mut unmatched);
                Outcome::Implementation(Implementation {
                    total: requirements.len(),
                    fully: c.complete,
                    mixed: c.mixed,
                    incomplete: c.incomplete,
                    todo: c.pending,
                    missing: c.none,
                })
            }
            Check::Test => {
                let implementations = in_scope(of(&[AnnotationType::Implementation]));
                let tests = Pool::new(&items, of(&[AnnotationType::Test]));
                let none = Pool::new(&items, Vec::new());
                let c = items.classify(&implementations, &tests, &none, &mut unmatched);
                Outcome::Tests(Tests {
                    total: implementations.len(),
                    fully: c.complete,
                    incomplete: c.incomplete,
                    missing: c.none,
                })
            }
            Check::Duplicates => {
                let none = Pool::new(&items, Vec::new());
                let categories = CATEGORIES
                    .iter()
                    .map(|&(name, kind)| {
                        let members = in_scope(of(&[kind]));
                        let pool = Pool::new(&items, members.clone());
                        let Classified {
                            complete,
                            incomplete,
                            none: unique,
                            ..
                        } = items.classify(&members, &pool, &none, &mut unmatched);
                        let category = Category {
                            duplicates: complete,
                            overlap: incomplete,
                            unique,
                        };
                        (name, category)
                    })
                    .collect();
                Outcome::Duplicates(Duplicates { categories })
            }
            Check::Coverage | Check::ExecutedCoverage => {
                // Files the classifier refused, always; the models used, with --verbose.
                notes.extend(defeated_messages(executions));
                if verbose {
                    notes.extend(model_summary(executions));
                }
                let tests = in_scope(of(&[AnnotationType::Test]));
                let coverers = of(&[
                    AnnotationType::Implementation,
                    AnnotationType::Implication,
                    AnnotationType::Exception,
                ]);
                let pool = Pool::new(&items, coverers.clone());
                let none = Pool::new(&items, Vec::new());
                let classified = items.classify(&tests, &pool, &none, &mut unmatched);
                Outcome::Coverage(coverage::correlate(
                    &sorted,
                    executions,
                    classified,
                    &coverers,
                    *check == Check::ExecutedCoverage,
                ))
            }
        };
        outcomes.push(outcome);
    }
    if !unmatched.is_empty() {
        return Err(unmatched
            .into_iter()
            .map(|i| Unmatched {
                annotation: sorted[i],
            })
            .collect());
    }
    Ok(Query {
        annotations: sorted,
        outcomes,
        verbose,
        notes,
    })
}
