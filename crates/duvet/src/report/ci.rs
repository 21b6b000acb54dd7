//! The checks of `duvet report --ci` and the snapshot report, as duvet 0.4.3 makes them.
//!
//! `--ci` (without a configured snapshot) compares, per specification, the lines its
//! annotations touch: every line a requirement or any annotation touches must be cited
//! (citation, implication or exception) with `--require-citations` (the default), and every
//! cited line must be tested (test, implication or exception) with `--require-tests` (the
//! default). The first failure ends the check with 0.4.3's message.
//!
//! The snapshot (`[report.snapshot]`, `.duvet/snapshot.txt` by default) lists, per
//! specification and section, each line's annotated text with what covers it; with CI on
//! (`--ci`, or the `CI` environment variable when a snapshot is configured) the file must
//! hold exactly that.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use super::{Kind, Ref, Report, Target, json::pieces, level_name};

/// Why `--ci` fails, or `None`.
pub fn check(
    report: &Report,
    require_citations: bool,
    require_tests: bool,
) -> Option<&'static str> {
    report
        .targets
        .iter()
        .find_map(|target| check_target(target, require_citations, require_tests))
}

fn check_target(
    target: &Target,
    require_citations: bool,
    require_tests: bool,
) -> Option<&'static str> {
    let mut cited = HashSet::new();
    let mut tested = HashSet::new();
    let mut significant = HashSet::new();
    for r in &target.refs {
        significant.insert(r.line);
        match r.kind {
            Kind::Test => {
                tested.insert(r.line);
            }
            Kind::Citation => {
                cited.insert(r.line);
            }
            Kind::Exception | Kind::Implication => {
                tested.insert(r.line);
                cited.insert(r.line);
            }
            Kind::Spec | Kind::Todo => {}
        }
    }
    if require_citations {
        if significant.difference(&cited).next().is_some() {
            return Some("Specification requirements missing citation.");
        }
        if cited.difference(&significant).next().is_some() {
            return Some("Citation for non-existing specification.");
        }
    }
    if require_tests && cited.difference(&tested).next().is_some() {
        return Some("Citation missing test.");
    }
    None
}

/// The snapshot's text.
pub fn snapshot(report: &Report) -> String {
    let mut out = String::new();
    for (i, target) in report.targets.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        snapshot_target(target, &mut out);
    }
    out
}

fn snapshot_target(target: &Target, out: &mut String) {
    let mut by_line: HashMap<usize, Vec<&Ref>> = HashMap::new();
    for r in &target.refs {
        by_line.entry(r.line).or_default().push(r);
    }
    let mut titled = false;
    let mut previous_section = false;
    for section in &target.sections {
        let mut section_shown = false;
        for line in &section.lines {
            let Some(refs) = by_line.get(&line.number) else {
                continue;
            };
            if !std::mem::replace(&mut titled, true) {
                let _ = match &target.title {
                    Some(title) => writeln!(out, "SPECIFICATION: [{title}]({})", target.key),
                    None => writeln!(out, "SPECIFICATION: {}", target.key),
                };
            }
            if !std::mem::replace(&mut section_shown, true) {
                if std::mem::replace(&mut previous_section, true) {
                    out.push('\n');
                }
                let _ = writeln!(out, "  SECTION: [{}](#{})", section.title, section.id);
            }
            snapshot_line(target, line.bytes.start, line.bytes.end, refs, out);
        }
    }
}

/// What covers a piece of a line, as the snapshot writes it: `!LEVEL` then the types.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Cover {
    level: u8,
    implementation: bool,
    implication: bool,
    test: bool,
    exception: bool,
    todo: bool,
}

impl Cover {
    fn of(kinds: &std::collections::BTreeSet<Kind>, level: u8) -> Self {
        Self {
            level,
            implementation: kinds.contains(&Kind::Citation),
            implication: kinds.contains(&Kind::Implication),
            test: kinds.contains(&Kind::Test),
            exception: kinds.contains(&Kind::Exception),
            todo: kinds.contains(&Kind::Todo),
        }
    }

    fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    fn text(&self) -> String {
        let mut parts = Vec::new();
        if self.level > 0 {
            parts.push(format!("!{}", level_name(self.level)));
        }
        for (on, name) in [
            (self.implementation, "implementation"),
            (self.implication, "implication"),
            (self.test, "test"),
            (self.exception, "exception"),
            (self.todo, "todo"),
        ] {
            if on {
                parts.push(name.to_string());
            }
        }
        parts.join(",")
    }
}

/// The `TEXT[…]` lines of one line of the specification: runs of pieces with the same cover
/// joined; an uncovered run is not written.
fn snapshot_line(target: &Target, start: usize, end: usize, refs: &[&Ref], out: &mut String) {
    let line = target.slice(&(start..end));
    if line.is_empty() {
        return;
    }
    // (start, end, cover) relative to the line, as 0.4.3's buffer keeps them.
    let mut run: (usize, usize, Cover) = (0, 0, Cover::default());
    let flush = |run: &mut (usize, usize, Cover), out: &mut String| -> Option<usize> {
        let (s, e, cover) = std::mem::take(run);
        if e == s {
            return None;
        }
        let text = line.get(s..e).unwrap_or_default().trim_end();
        if text.is_empty() {
            return (s == 0).then_some(s);
        }
        if !cover.is_empty() {
            let _ = writeln!(out, "    TEXT[{}]: {text}", cover.text());
        }
        None
    };
    for piece in pieces(start, end, refs) {
        let cover = Cover::of(&piece.kinds, piece.level);
        let (s, e) = (piece.start - start, piece.end - start);
        if run.2 == cover {
            run.1 = run.1.max(e);
            continue;
        }
        let preferred = flush(&mut run, out);
        run = (preferred.unwrap_or(s), e, cover);
    }
    flush(&mut run, out);
}
