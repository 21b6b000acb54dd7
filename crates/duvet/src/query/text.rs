//! The results of a query as duvet 0.4.3 prints them (`query/result.rs`): the notes 0.4.3
//! prints while it runs the coverage checks (as its progress lines), then per check its
//! verdict, its counts and a diagnostic for each finding (with `--verbose`, also for what
//! passes), then the overall verdict. The coverage check's are in [`super::coverage`].

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::annotation::{AnnotationType, CommentStyle};
use crate::model::path_text;

use super::diagnostic::{Diagnostic, Renderer, Severity, Snippet};
use super::{Covered, Duplicates, Implementation, Outcome, Query, Tests};

/// The texts of the files the annotations are in, with each annotation's place.
pub(super) struct Files<'q> {
    query: &'q Query<'q>,
    texts: HashMap<PathBuf, String>,
    names: Vec<String>,
    spans: Vec<std::ops::Range<usize>>,
}

impl<'q> Files<'q> {
    fn read(query: &'q Query<'q>, root: &Path, styles: &[CommentStyle]) -> Self {
        let mut texts: HashMap<PathBuf, String> = HashMap::new();
        for a in &query.annotations {
            texts.entry(a.file.clone()).or_insert_with(|| {
                std::fs::read(root.join(&a.file))
                    .map(|bytes| crate::project::text_of(&bytes).into_owned())
                    .unwrap_or_default()
            });
        }
        // Each file's lines found once, for all its annotations.
        let lines: HashMap<&PathBuf, Vec<(usize, &str)>> = texts
            .iter()
            .map(|(file, text)| (file, super::spans::lines(text)))
            .collect();
        let spans = query
            .annotations
            .iter()
            .map(|a| {
                let len = texts.get(&a.file).map_or(0, String::len);
                let lines = lines.get(&a.file).map_or(&[][..], Vec::as_slice);
                super::spans::span_in(a, lines, len, styles)
            })
            .collect();
        Self {
            query,
            texts,
            names: query
                .annotations
                .iter()
                .map(|a| path_text(&a.file))
                .collect(),
            spans,
        }
    }

    /// Annotation `i` marked with `label`.
    pub(super) fn snippet<'a>(&'a self, i: usize, label: &'a str) -> Snippet<'a> {
        let a = self.query.annotations[i];
        Snippet {
            file: &self.names[i],
            text: self.texts.get(&a.file).map_or("", String::as_str),
            span: self.spans[i].clone(),
            label,
        }
    }

    /// Line `line` (1-based) of annotation `i`'s file, all of it (as `str::lines` cuts it),
    /// marked with `label`; none when the file has no such line.
    pub(super) fn line<'a>(&'a self, i: usize, line: usize, label: &'a str) -> Option<Snippet<'a>> {
        let a = self.query.annotations[i];
        let text = self.texts.get(&a.file).map_or("", String::as_str);
        let base = text.as_ptr() as usize;
        let found = text.lines().nth(line.checked_sub(1)?)?;
        let start = found.as_ptr() as usize - base;
        Some(Snippet {
            file: &self.names[i],
            text,
            span: start..start + found.len(),
            label,
        })
    }
}

/// The results of `query`, as 0.4.3 prints them. `root` is the project's root (the annotations'
/// files are relative to it), `styles` its comment styles.
pub fn write(
    query: &Query<'_>,
    root: &Path,
    styles: &[CommentStyle],
    renderer: &Renderer,
) -> String {
    let files = Files::read(query, root, styles);
    let mut out = String::new();
    for note in &query.notes {
        out.push_str(&renderer.progress(note));
        out.push('\n');
    }
    let w = Writer {
        files: &files,
        renderer,
        verbose: query.verbose,
    };
    for outcome in &query.outcomes {
        let status = renderer.verdict(outcome.passed());
        match outcome {
            Outcome::Implementation(r) => w.implementation(r, &status, &mut out),
            Outcome::Tests(r) => w.tests(r, &status, &mut out),
            Outcome::Duplicates(r) => w.duplicates(r, &status, &mut out),
            Outcome::Coverage(r) => w.coverage(r, &status, &mut out),
        }
    }
    let _ = write!(out, "\nOverall: {}\n", renderer.verdict(query.passed()));
    out
}

/// `//= target`, `//= type=KIND`, `//# quote`: the annotation a finding asks for.
fn missing(target: &str, kind: &str, quote: &str) -> String {
    format!("\n//= {target}\n//= type={kind}\n//# {quote}\n")
}

pub(super) struct Writer<'w> {
    pub(super) files: &'w Files<'w>,
    renderer: &'w Renderer,
    pub(super) verbose: bool,
}

impl Writer<'_> {
    fn annotation(&self, i: usize) -> &crate::annotation::Annotation {
        self.files.query.annotations[i]
    }

    /// `d`, drawn, and an empty line.
    pub(super) fn emit(&self, d: &Diagnostic<'_>, out: &mut String) {
        self.renderer.render(d, out);
        out.push('\n');
    }

    /// `message` about the first of `covered`'s annotations, the others related, all
    /// labelled `label`; about `covered`'s target when nothing covers it.
    fn covered<'a>(
        &'a self,
        severity: Severity,
        message: String,
        covered: &Covered,
        label: &'a str,
    ) -> Diagnostic<'a> {
        let mut d = Diagnostic::new(severity, message);
        match covered.by.split_first() {
            Some((&first, rest)) => {
                d.snippet = Some(self.files.snippet(first, label));
                d.related = rest.iter().map(|&i| self.files.snippet(i, label)).collect();
            }
            None => d.snippet = Some(self.files.snippet(covered.target, label)),
        }
        d
    }

    fn implementation(&self, r: &Implementation, status: &str, out: &mut String) {
        let _ = write!(out, "\nImplementation: {status}\n\n");
        for (name, count) in [
            ("Total requirements", r.total),
            ("Fully implemented", r.fully.len()),
            ("Incomplete implementation", r.incomplete.len()),
            ("Mixed implementation", r.mixed.len()),
            ("TODO", r.todo.len()),
            ("Not implemented", r.missing.len()),
        ] {
            let _ = writeln!(out, "  {name}: {count}");
        }
        if !r.missing.is_empty() {
            out.push('\n');
            for &i in &r.missing {
                let a = self.annotation(i);
                let mut d = Diagnostic::new(Severity::Error, "Missing annotation".to_string());
                d.help = Some(missing(&a.target, "implementation", &a.quote));
                self.emit(&d, out);
            }
        }
        if !r.incomplete.is_empty() {
            out.push('\n');
            for c in &r.incomplete {
                let message = format!(
                    "Incomplete annotation:\n {}",
                    self.annotation(c.target).quote
                );
                let d = self.covered(Severity::Error, message, c, "Incomplete");
                self.emit(&d, out);
            }
        }
        if !r.mixed.is_empty() {
            out.push('\n');
            for c in &r.mixed {
                let (done, todo) = if c.fully {
                    ("Implemented", "Duplicate todo?")
                } else {
                    ("Incomplete", "Implement this")
                };
                let message = format!(
                    "Mixed implementation and TODO:\n {}",
                    self.annotation(c.target).quote
                );
                let mut d = Diagnostic::new(Severity::Error, message);
                if let Some((&first, rest)) = c.by.split_first() {
                    d.snippet = Some(self.files.snippet(first, done));
                    let (todos, others): (Vec<usize>, Vec<usize>) = rest
                        .iter()
                        .partition(|&&i| self.annotation(i).kind == AnnotationType::Todo);
                    d.related = others
                        .iter()
                        .map(|&i| self.files.snippet(i, done))
                        .chain(todos.iter().map(|&i| self.files.snippet(i, todo)))
                        .collect();
                }
                self.emit(&d, out);
            }
        }
        if !r.todo.is_empty() {
            out.push('\n');
            for c in &r.todo {
                let d = self.covered(
                    Severity::Error,
                    "Todo annotations".to_string(),
                    c,
                    "Implement this",
                );
                self.emit(&d, out);
            }
        }
        if self.verbose && !r.fully.is_empty() {
            out.push('\n');
            for c in &r.fully {
                let d = self.covered(
                    Severity::Advice,
                    "Fully Implemented".to_string(),
                    c,
                    "Implemented",
                );
                self.emit(&d, out);
            }
        }
    }

    fn tests(&self, r: &Tests, status: &str, out: &mut String) {
        let _ = write!(out, "\nTests: {status}\n\n");
        for (name, count) in [
            ("Total requirements", r.total),
            ("Fully tested", r.fully.len()),
            ("Incomplete tests", r.incomplete.len()),
            ("Not tested", r.missing.len()),
        ] {
            let _ = writeln!(out, "  {name}: {count}");
        }
        out.push('\n');
        if !r.missing.is_empty() {
            for &i in &r.missing {
                let a = self.annotation(i);
                let mut d = Diagnostic::new(Severity::Error, "Missing test".to_string());
                d.snippet = Some(self.files.snippet(i, "Implementation"));
                d.help = Some(missing(&a.target, "test", &a.quote));
                self.emit(&d, out);
            }
            out.push('\n');
        }
        if !r.incomplete.is_empty() {
            for c in &r.incomplete {
                let message = format!("Incomplete test:\n {}", self.annotation(c.target).quote);
                let mut d = Diagnostic::new(Severity::Error, message);
                d.snippet = Some(self.files.snippet(c.target, "Implementation"));
                d.related =
                    c.by.iter()
                        .map(|&i| self.files.snippet(i, "Incomplete test"))
                        .collect();
                self.emit(&d, out);
            }
            out.push('\n');
        }
        if self.verbose && !r.fully.is_empty() {
            for c in &r.fully {
                let d = self.covered(Severity::Advice, "Fully tested".to_string(), c, "Test");
                self.emit(&d, out);
            }
            out.push('\n');
        }
    }

    fn duplicates(&self, r: &Duplicates, status: &str, out: &mut String) {
        let _ = write!(out, "\nDuplicates: {status}\n\n");
        for (name, category) in &r.categories {
            for c in &category.duplicates {
                let message = format!("Duplicate {} annotations", name.to_lowercase());
                let mut d = Diagnostic::new(Severity::Error, message);
                d.snippet = Some(self.files.snippet(c.target, "Duplicate"));
                d.related =
                    c.by.iter()
                        .map(|&i| self.files.snippet(i, "Duplicate"))
                        .collect();
                self.emit(&d, out);
            }
        }
        if !self.verbose {
            return;
        }
        for (name, category) in &r.categories {
            for c in &category.overlap {
                let message = format!("{name} annotations with some overlap");
                let d = self.covered(Severity::Advice, message, c, "Some overlap");
                self.emit(&d, out);
            }
            if !category.unique.is_empty() {
                let message = format!("Unique {} annotations", name.to_lowercase());
                let mut d = Diagnostic::new(Severity::Advice, message);
                d.related = category
                    .unique
                    .iter()
                    .map(|&i| self.files.snippet(i, "Unique"))
                    .collect();
                self.emit(&d, out);
            }
        }
    }
}
