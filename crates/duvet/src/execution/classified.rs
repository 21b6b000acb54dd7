//! duvet 0.4.3's classified execution model (its `duvet-coverage` crate), for files a
//! language classifier reads ([`super::java`]): a scope tree from the brace stream, each
//! annotation's target line, and the lines known to have run.
//!
//! * **Refusals** (a *defeated* file): the classifier's parse errors, or a brace stream that
//!   closes more than it opened (the line of that close) or leaves scopes open (the line of
//!   the last open). Every annotation of such a file is unknown at its first issue.
//! * **Scopes** pair each close with the latest unclosed open, in stream order; pairs with
//!   the same lines are kept once; a file without braces is one scope over all its lines.
//! * **Annotation lines** then become exactly `{Annotation}` (after the scope tree, which a
//!   brace-ending annotation cannot unbalance).
//! * **A target** is the first line after the annotation that is not pure `Whitespace`,
//!   not pure `Comment` and not an annotation; a line that only closes a scope, or the end of
//!   the file, means none.
//! * **Lines that ran** are the hit lines, and, walking back from each hit line inside a
//!   scope that has no `NonLinearControl` line, the lines up to the first unclassified line,
//!   `Statement` or `ScopeClose` (excluded) or `ScopeOpen` (included), never before that
//!   scope's first line.
//! * **A status**: no target, structural; an unclassified or non-linear target, unknown at
//!   the target; a target that ran, executed; a `Statement`, not executed; a `Declaration`
//!   whose innermost scope (the smallest; the first such pair on a tie) holds no
//!   `Statement`, structural; anything else, not executed. A report listing a line 0 or a
//!   line past the file's end makes every annotation of the file unknown at its first line.
//!
//! Everything is computed once per file, in time linear in its lines and braces (a sweep
//! over the lines keeps the scopes open at each), so no input makes it quadratic.

use std::collections::{BTreeSet, HashSet};

use super::java::{Classified as Lines, LineClass, Outcome, Property, ScopeEvent};
use super::{ExecutionStatus, FileCoverage, Hit, Issue, IssueKind, Span};

/// The classified model of one file in one report.
#[derive(Debug, Clone)]
pub struct Classified {
    /// Per line (index = line - 1), after the annotation lines were stamped.
    lines: Vec<Option<LineClass>>,
    /// Whether the report's lines are all lines of the file (0.4.3's precondition).
    in_bounds: bool,
    /// Per line: in the set of lines that ran.
    ran: Vec<bool>,
    /// Per line: whether its innermost scope exists and holds no `Statement`.
    bare_scope: Vec<bool>,
}

/// What the model makes of a file: a model, or the issues that defeat it.
#[derive(Debug, Clone)]
pub enum Built {
    Model(Classified),
    Defeated(Vec<Issue>),
}

/// Build the model of a Java file with `text`, whose annotations span `spans`, covered as
/// `coverage` says.
pub fn build(text: &str, spans: &[Span], coverage: &FileCoverage) -> Built {
    let Lines { mut lines, events } = match super::java::classify(text) {
        Outcome::Classified(lines) => lines,
        Outcome::ParseErrors(errors) => {
            return Built::Defeated(
                errors
                    .into_iter()
                    .map(|line| Issue {
                        kind: IssueKind::ParseError,
                        line,
                    })
                    .collect(),
            );
        }
    };
    if let Some(line) = imbalance_site(&events) {
        return Built::Defeated(vec![Issue {
            kind: IssueKind::UnbalancedScopes,
            line,
        }]);
    }
    let scopes = scope_tree(&events, lines.len());
    for span in spans {
        for line in span.start.max(1)..=span.end.min(lines.len()) {
            lines[line - 1] = Some(LineClass::of(&[Property::Annotation]));
        }
    }
    let n = lines.len();
    let in_bounds = coverage.lines().all(|(line, _)| line >= 1 && line <= n);
    let (ran, bare_scope) = if in_bounds {
        let hits: Vec<usize> = coverage
            .lines()
            .filter(|(_, hit)| *hit == Hit::Hit)
            .map(|(line, _)| line)
            .collect();
        execution(&lines, &scopes, &hits)
    } else {
        (Vec::new(), Vec::new())
    };
    Built::Model(Classified {
        lines,
        in_bounds,
        ran,
        bare_scope,
    })
}

impl Classified {
    /// The annotation's target line: `None` at the end of the file or on a line that only
    /// closes a scope.
    pub fn target(&self, span: Span) -> Option<usize> {
        let mut line = span.end.checked_add(1)?;
        while let Some(class) = self.lines.get(line.checked_sub(1)?) {
            let Some(class) = class else {
                return Some(line);
            };
            if skippable(*class) {
                line += 1;
                continue;
            }
            let only_closes = class.contains(Property::ScopeClose)
                && !class.contains(Property::Statement)
                && !class.contains(Property::Declaration)
                && !class.contains(Property::ScopeOpen);
            return if only_closes { None } else { Some(line) };
        }
        None
    }

    /// The status of the annotation spanning `span`.
    pub fn status(&self, span: Span) -> ExecutionStatus {
        if !self.in_bounds || span.end == usize::MAX {
            return ExecutionStatus::Unknown { line: span.start };
        }
        let Some(target) = self.target(span) else {
            return ExecutionStatus::Structural;
        };
        let index = target - 1;
        let Some(Some(class)) = self.lines.get(index).copied() else {
            return ExecutionStatus::Unknown { line: target };
        };
        if class.contains(Property::NonLinearControl) {
            ExecutionStatus::Unknown { line: target }
        } else if self.ran.get(index).copied().unwrap_or(false) {
            ExecutionStatus::Executed
        } else if class.contains(Property::Statement) {
            ExecutionStatus::NotExecuted
        } else if class.contains(Property::Declaration)
            && self.bare_scope.get(index).copied().unwrap_or(false)
        {
            ExecutionStatus::Structural
        } else {
            ExecutionStatus::NotExecuted
        }
    }
}

/// Whether the target walk steps over a line: pure whitespace, pure comment, or an
/// annotation.
fn skippable(class: LineClass) -> bool {
    class.is_only(Property::Whitespace)
        || class.is_only(Property::Comment)
        || class.contains(Property::Annotation)
}

/// Where a brace stream is unbalanced: the first close with no open scope, else (scopes
/// left open) the line of the last open; `None` when balanced.
pub fn imbalance_site(events: &[ScopeEvent]) -> Option<usize> {
    let mut depth = 0usize;
    let mut last_open = 0;
    for event in events {
        if event.opens {
            last_open = event.line;
            depth += 1;
        } else if depth == 0 {
            return Some(event.line);
        } else {
            depth -= 1;
        }
    }
    (depth > 0).then_some(last_open)
}

/// The scopes of a brace stream as (first line, last line), in the order they close, each
/// extent once; one scope over the whole file when there are no pairs.
pub fn scope_tree(events: &[ScopeEvent], file_length: usize) -> Vec<(usize, usize)> {
    let mut stack = Vec::new();
    let mut seen = HashSet::new();
    let mut pairs = Vec::new();
    for event in events {
        if event.opens {
            stack.push(event.line);
        } else if let Some(open) = stack.pop()
            && seen.insert((open, event.line))
        {
            pairs.push((open, event.line));
        }
    }
    if pairs.is_empty() && file_length >= 1 {
        pairs.push((1, file_length));
    }
    pairs
}

/// Per line (index = line - 1): whether it ran, and whether its innermost scope holds no
/// `Statement`. `hits` are the report's hit lines, all within the file.
fn execution(
    lines: &[Option<LineClass>],
    scopes: &[(usize, usize)],
    hits: &[usize],
) -> (Vec<bool>, Vec<bool>) {
    let n = lines.len();
    let has = |line: usize, p: Property| {
        lines
            .get(line.wrapping_sub(1))
            .and_then(|c| *c)
            .is_some_and(|c| c.contains(p))
    };
    // Prefix counts (index = line) of non-linear and statement lines.
    let prefix = |p: Property| {
        let mut counts = vec![0usize; n + 1];
        for line in 1..=n {
            counts[line] = counts[line - 1] + usize::from(has(line, p));
        }
        counts
    };
    let non_linear = prefix(Property::NonLinearControl);
    let statements = prefix(Property::Statement);
    let count_in = |counts: &[usize], open: usize, close: usize| {
        let close = close.min(n);
        if open > close {
            0
        } else {
            counts[close] - counts[open - 1]
        }
    };

    // Sweep the lines with the scopes open at each: the innermost (smallest, first on a
    // tie) and the outermost without a non-linear line.
    let mut opening: Vec<Vec<usize>> = vec![Vec::new(); n + 1];
    let mut closing: Vec<Vec<usize>> = vec![Vec::new(); n + 1];
    for (index, &(open, close)) in scopes.iter().enumerate() {
        if open >= 1 && open <= close && open <= n {
            opening[open].push(index);
            if close <= n {
                closing[close].push(index);
            }
        }
    }
    let mut by_size = BTreeSet::new();
    let mut linear_by_open = BTreeSet::new();
    let mut bare_scope = vec![false; n];
    let mut linear_from = vec![None; n + 1];
    for line in 1..=n {
        for &index in &opening[line] {
            let (open, close) = scopes[index];
            by_size.insert((close - open, index));
            if count_in(&non_linear, open, close) == 0 {
                linear_by_open.insert((open, index));
            }
        }
        if let Some(&(_, index)) = by_size.first() {
            let (open, close) = scopes[index];
            bare_scope[line - 1] = count_in(&statements, open, close) == 0;
        }
        linear_from[line] = linear_by_open.first().map(|&(open, _)| open);
        for &index in &closing[line] {
            let (open, close) = scopes[index];
            by_size.remove(&(close - open, index));
            linear_by_open.remove(&(open, index));
        }
    }

    // The walk back from a hit includes a line that is classified and neither a statement
    // nor a scope's close, and goes on past it unless it opens a scope: `lowest[line]` is
    // where a walk that includes `line` ends.
    let passes = |line: usize| {
        lines
            .get(line.wrapping_sub(1))
            .and_then(|c| *c)
            .is_some_and(|c| !c.contains(Property::ScopeClose) && !c.contains(Property::Statement))
    };
    let mut lowest = vec![0usize; n + 1];
    for line in 1..=n {
        lowest[line] = if line == 1 || has(line, Property::ScopeOpen) || !passes(line - 1) {
            line
        } else {
            lowest[line - 1]
        };
    }
    let mut ran = vec![false; n];
    let mut delta = vec![0isize; n + 2];
    for &hit in hits {
        if hit == 0 || hit > n {
            continue;
        }
        ran[hit - 1] = true;
        let above = hit - 1;
        if above == 0 || !passes(above) {
            continue;
        }
        if let Some(open) = linear_from[hit] {
            let from = lowest[above].max(open);
            if from <= above {
                delta[from] += 1;
                delta[above + 1] -= 1;
            }
        }
    }
    let mut depth = 0isize;
    for line in 1..=n {
        depth += delta[line];
        if depth > 0 {
            ran[line - 1] = true;
        }
    }
    (ran, bare_scope)
}

#[cfg(test)]
#[path = "classified_tests.rs"]
mod tests;
