//! Precise edits of a ticket's markdown description.
//!
//! Line numbers are 1-indexed and count `\n`-terminated lines (a final line
//! without `\n` counts too). Sections are found by parsing the markdown, so a
//! `#` line inside a code block is never mistaken for a heading.

use std::borrow::Cow;

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
use similar::{ChangeTag, TextDiff};

mod sections;
pub use sections::{Section, sections};

/// Headings listed in hints at most.
const MAX_LISTED_HEADINGS: usize = 20;

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum EditOperation {
    /// Replace the whole description with `content`.
    ReplaceAll,
    /// Add `content` at the end (on a new line).
    Append,
    /// Add `content` at the beginning.
    Prepend,
    /// Replace lines `start_line..=end_line` (1-indexed, inclusive) with `content`.
    ReplaceLines,
    /// Replace the body of the section under `section_header` with `content`.
    ReplaceSection,
}

impl EditOperation {
    pub fn as_str(self) -> &'static str {
        match self {
            EditOperation::ReplaceAll => "replace_all",
            EditOperation::Append => "append",
            EditOperation::Prepend => "prepend",
            EditOperation::ReplaceLines => "replace_lines",
            EditOperation::ReplaceSection => "replace_section",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Edit<'a> {
    pub operation: EditOperation,
    pub content: &'a str,
    pub start_line: Option<usize>,
    pub end_line: Option<usize>,
    pub section_header: Option<&'a str>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    /// The new description.
    pub text: String,
    /// What changed, e.g. "replace_lines (lines 8-10)".
    pub summary: String,
}

/// One heading matched by an ambiguous `section_header`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SectionMatch {
    /// The heading as "## Title".
    pub heading: String,
    /// First line of the section (the heading line), 1-indexed.
    pub start_line: usize,
    /// Last line of the section, 1-indexed, inclusive.
    pub end_line: usize,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EditError {
    /// `replace_lines` without `start_line` and/or `end_line`.
    #[error("replace_lines requires {argument} (1-indexed, inclusive)")]
    MissingLineArgument {
        argument: &'static str,
        line_count: usize,
    },
    #[error("{}", range_message(*.start, *.end, *.line_count))]
    LineRangeOutOfBounds {
        start: usize,
        end: usize,
        line_count: usize,
    },
    #[error("replace_section requires section_header (e.g. \"## Acceptance Criteria\")")]
    MissingSectionHeader { headings: Vec<String> },
    #[error("section_header {header:?} does not name a heading (e.g. \"## Acceptance Criteria\")")]
    EmptySectionHeader {
        header: String,
        headings: Vec<String>,
    },
    #[error("no heading in the description matches section_header {header:?}")]
    SectionNotFound {
        header: String,
        headings: Vec<String>,
    },
    #[error(
        "section_header {header:?} is ambiguous: it matches {} headings, at lines {}",
        .matches.len(),
        join(.matches.iter().map(|m| m.start_line.to_string()), ", ")
    )]
    AmbiguousSection {
        header: String,
        matches: Vec<SectionMatch>,
    },
}

impl EditError {
    /// What the caller should do next.
    pub fn hint(&self) -> String {
        match self {
            EditError::MissingLineArgument { line_count, .. }
            | EditError::LineRangeOutOfBounds { line_count, .. } => line_hint(*line_count),
            EditError::MissingSectionHeader { headings }
            | EditError::EmptySectionHeader { headings, .. }
            | EditError::SectionNotFound { headings, .. } => headings_hint(headings),
            EditError::AmbiguousSection { matches, .. } => {
                let ranges = join(
                    matches
                        .iter()
                        .map(|m| format!("{:?} lines {}-{}", m.heading, m.start_line, m.end_line)),
                    "; ",
                );
                let levels_differ = matches
                    .windows(2)
                    .any(|w| heading_level(&w[0].heading) != heading_level(&w[1].heading));
                if levels_differ {
                    let example = matches.first().map_or("## Title", |m| m.heading.as_str());
                    format!(
                        "Give the level with #'s (e.g. {example:?}), or use replace_lines with \
                         the line range of the section you mean: {ranges}."
                    )
                } else {
                    format!(
                        "The headings are identical; use replace_lines with the line range of \
                         the section you mean: {ranges}."
                    )
                }
            }
        }
    }
}

fn range_message(start: usize, end: usize, line_count: usize) -> String {
    let has = if line_count == 0 {
        "the description is empty (0 lines)".to_string()
    } else {
        format!("the description has {}", plural(line_count, "line"))
    };
    if start == 0 {
        format!("line range {start}-{end} is out of bounds: lines are numbered from 1 and {has}")
    } else if end < start {
        format!("line range {start}-{end} is invalid: end_line must be >= start_line ({has})")
    } else {
        format!("line range {start}-{end} is out of bounds: {has}")
    }
}

fn line_hint(line_count: usize) -> String {
    if line_count == 0 {
        "The description is empty; use append or replace_all to add text.".to_string()
    } else {
        format!(
            "The description has {}; use start_line and end_line between 1 and {line_count} \
             (read it with jility_get_ticket).",
            plural(line_count, "line")
        )
    }
}

fn headings_hint(headings: &[String]) -> String {
    let Some(first) = headings.first() else {
        return "The description has no markdown headings; use append to add a section \
                (e.g. \"\\n## Notes\\n\\n...\"), or replace_lines / replace_all."
            .to_string();
    };
    let mut listed = join(
        headings
            .iter()
            .take(MAX_LISTED_HEADINGS)
            .map(|h| format!("{h:?}")),
        ", ",
    );
    if headings.len() > MAX_LISTED_HEADINGS {
        listed.push_str(&format!(
            " and {} more",
            headings.len() - MAX_LISTED_HEADINGS
        ));
    }
    format!(
        "Available headings: {listed}. Pass one of them as section_header (e.g. {first:?}), \
         or use append to add a new section."
    )
}

fn heading_level(display: &str) -> usize {
    display.bytes().take_while(|&b| b == b'#').count()
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("{n} {word}")
    } else {
        format!("{n} {word}s")
    }
}

fn join<I: Iterator<Item = String>>(items: I, sep: &str) -> String {
    items.collect::<Vec<_>>().join(sep)
}

/// Apply one edit to `original`.
pub fn apply(original: &str, edit: &Edit<'_>) -> Result<Applied, EditError> {
    let content = edit.content;
    let (text, summary) = match edit.operation {
        EditOperation::ReplaceAll => (content.to_string(), "replace_all".to_string()),
        EditOperation::Append => (append(original, content), "append".to_string()),
        EditOperation::Prepend => (prepend(original, content), "prepend".to_string()),
        EditOperation::ReplaceLines => {
            replace_lines(original, content, edit.start_line, edit.end_line)?
        }
        EditOperation::ReplaceSection => replace_section(original, content, edit.section_header)?,
    };
    Ok(Applied { text, summary })
}

/// Number of lines as numbered by `replace_lines`.
pub fn line_count(text: &str) -> usize {
    let newlines = text.bytes().filter(|&b| b == b'\n').count();
    if text.is_empty() || text.ends_with('\n') {
        newlines
    } else {
        newlines + 1
    }
}

/// True when every line break in `text` is `\r\n` (and there is at least one).
/// Inserted text then uses `\r\n` too, so the description stays consistent.
fn is_crlf(text: &str) -> bool {
    let newlines = text.bytes().filter(|&b| b == b'\n').count();
    newlines > 0 && text.matches("\r\n").count() == newlines
}

fn eol(crlf: bool) -> &'static str {
    if crlf { "\r\n" } else { "\n" }
}

/// Convert bare `\n` to `\r\n` when the description uses CRLF.
fn with_eol(content: &str, crlf: bool) -> Cow<'_, str> {
    if !crlf || !content.contains('\n') {
        return Cow::Borrowed(content);
    }
    let mut out = String::with_capacity(content.len() + 16);
    let mut prev = '\0';
    for c in content.chars() {
        if c == '\n' && prev != '\r' {
            out.push('\r');
        }
        out.push(c);
        prev = c;
    }
    Cow::Owned(out)
}

fn append(original: &str, content: &str) -> String {
    if content.is_empty() {
        return original.to_string();
    }
    let crlf = is_crlf(original);
    let content = with_eol(content, crlf);
    let mut out = String::with_capacity(original.len() + content.len() + 2);
    out.push_str(original);
    if !original.is_empty() && !original.ends_with('\n') {
        out.push_str(eol(crlf));
    }
    out.push_str(&content);
    out
}

fn prepend(original: &str, content: &str) -> String {
    let crlf = is_crlf(original);
    let content = with_eol(content, crlf);
    let mut out = String::with_capacity(original.len() + content.len() + 2);
    out.push_str(&content);
    if !content.is_empty() && !content.ends_with('\n') && !original.is_empty() {
        out.push_str(eol(crlf));
    }
    out.push_str(original);
    out
}

/// Lines of `text` without their terminators, and whether it ended with `\n`.
/// With `strip_cr`, the `\r` of each `\r\n` is removed as well.
fn split_lines(text: &str, strip_cr: bool) -> (Vec<&str>, bool) {
    if text.is_empty() {
        return (Vec::new(), false);
    }
    let trailing = text.ends_with('\n');
    let body = text.strip_suffix('\n').unwrap_or(text);
    let mut lines: Vec<&str> = body.split('\n').collect();
    if strip_cr {
        let terminated = if trailing {
            lines.len()
        } else {
            lines.len().saturating_sub(1)
        };
        for line in lines.iter_mut().take(terminated) {
            *line = line.strip_suffix('\r').unwrap_or(line);
        }
    }
    (lines, trailing)
}

fn join_lines(lines: &[&str], trailing: bool, crlf: bool) -> String {
    let eol = eol(crlf);
    let mut out = lines.join(eol);
    if trailing && !lines.is_empty() {
        out.push_str(eol);
    }
    out
}

fn is_blank(line: &str) -> bool {
    line.trim().is_empty()
}

fn replace_lines(
    original: &str,
    content: &str,
    start: Option<usize>,
    end: Option<usize>,
) -> Result<(String, String), EditError> {
    let line_count = line_count(original);
    let (start, end) = match (start, end) {
        (Some(start), Some(end)) => (start, end),
        (None, None) => {
            return Err(EditError::MissingLineArgument {
                argument: "start_line and end_line",
                line_count,
            });
        }
        (None, Some(_)) => {
            return Err(EditError::MissingLineArgument {
                argument: "start_line",
                line_count,
            });
        }
        (Some(_), None) => {
            return Err(EditError::MissingLineArgument {
                argument: "end_line",
                line_count,
            });
        }
    };
    if start == 0 || end < start || end > line_count {
        return Err(EditError::LineRangeOutOfBounds {
            start,
            end,
            line_count,
        });
    }
    let crlf = is_crlf(original);
    let (lines, trailing) = split_lines(original, crlf);
    let (new_lines, _) = split_lines(content, crlf);
    let mut out: Vec<&str> = Vec::with_capacity(lines.len() + new_lines.len());
    out.extend(lines.iter().take(start - 1));
    out.extend(new_lines);
    out.extend(lines.iter().skip(end));
    let summary = if start == end {
        format!("replace_lines (line {start})")
    } else {
        format!("replace_lines (lines {start}-{end})")
    };
    Ok((join_lines(&out, trailing, crlf), summary))
}

/// A top-level markdown heading, with 0-indexed line numbers.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Heading {
    level: usize,
    /// Inline markup rendered as plain text, whitespace collapsed.
    text: String,
    first_line: usize,
    last_line: usize,
}

impl Heading {
    fn display(&self) -> String {
        format!("{} {}", "#".repeat(self.level), self.text)
    }
}

fn parser_options() -> Options {
    Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS
}

/// Headings that are not nested in another block (block quote, list, ...).
fn find_headings(text: &str) -> Vec<Heading> {
    let newlines: Vec<usize> = text
        .bytes()
        .enumerate()
        .filter(|&(_, b)| b == b'\n')
        .map(|(i, _)| i)
        .collect();
    // A `\n` belongs to the line it terminates.
    let line_of = |offset: usize| newlines.partition_point(|&p| p < offset);

    let mut headings = Vec::new();
    let mut depth = 0usize;
    let mut current: Option<(usize, std::ops::Range<usize>, String)> = None;
    for (event, range) in Parser::new_ext(text, parser_options()).into_offset_iter() {
        match event {
            Event::Start(Tag::Heading { level, .. }) => {
                if depth == 0 {
                    current = Some((level as usize, range, String::new()));
                }
                depth += 1;
            }
            Event::End(TagEnd::Heading(_)) => {
                depth = depth.saturating_sub(1);
                if depth == 0
                    && let Some((level, range, raw)) = current.take()
                {
                    let last = if range.end > range.start {
                        range.end - 1
                    } else {
                        range.start
                    };
                    headings.push(Heading {
                        level,
                        text: raw.split_whitespace().collect::<Vec<_>>().join(" "),
                        first_line: line_of(range.start),
                        last_line: line_of(last),
                    });
                }
            }
            Event::Start(_) => depth += 1,
            Event::End(_) => depth = depth.saturating_sub(1),
            Event::Text(t) | Event::Code(t) => {
                if let Some((_, _, raw)) = current.as_mut() {
                    raw.push_str(&t);
                }
            }
            Event::SoftBreak | Event::HardBreak => {
                if let Some((_, _, raw)) = current.as_mut() {
                    raw.push(' ');
                }
            }
            _ => {}
        }
    }
    headings
}

/// A parsed `section_header`: optional level and normalized text.
fn parse_query(header: &str) -> Option<(Option<usize>, String)> {
    let trimmed = header.trim();
    let hashes = trimmed.bytes().take_while(|&b| b == b'#').count();
    let (level, rest) = if (1..=6).contains(&hashes) {
        (Some(hashes), &trimmed[hashes..])
    } else {
        (None, trimmed)
    };
    let rest = rest.replace(['\r', '\n'], " ");
    let rest = rest.trim();
    // Render the text like a heading so markup and closing #'s compare equal.
    let rendered = find_headings(&format!("# {rest}"))
        .into_iter()
        .next()
        .map(|h| h.text)
        .filter(|t| !t.is_empty());
    let text = match rendered {
        Some(text) => text,
        None => rest.trim_end_matches('#').trim().to_string(),
    };
    if text.is_empty() {
        return None;
    }
    Some((level, normalize(&text)))
}

fn normalize(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

fn replace_section(
    original: &str,
    content: &str,
    header: Option<&str>,
) -> Result<(String, String), EditError> {
    let headings = find_headings(original);
    let listing = || headings.iter().map(Heading::display).collect::<Vec<_>>();
    let Some(header) = header else {
        return Err(EditError::MissingSectionHeader {
            headings: listing(),
        });
    };
    let Some((level, text)) = parse_query(header) else {
        return Err(EditError::EmptySectionHeader {
            header: header.to_string(),
            headings: listing(),
        });
    };

    let crlf = is_crlf(original);
    let (lines, trailing) = split_lines(original, crlf);
    // Exclusive 0-indexed end of the section starting at heading `i`.
    let section_end = |i: usize| {
        let own = headings.get(i).map_or(0, |h| h.level);
        headings
            .iter()
            .skip(i + 1)
            .find(|h| h.level <= own)
            .map_or(lines.len(), |h| h.first_line)
    };

    let matches: Vec<usize> = headings
        .iter()
        .enumerate()
        .filter(|(_, h)| level.is_none_or(|l| l == h.level) && normalize(&h.text) == text)
        .map(|(i, _)| i)
        .collect();
    let index = match matches.as_slice() {
        [] => {
            return Err(EditError::SectionNotFound {
                header: crate::errors::clip(header),
                headings: listing(),
            });
        }
        [index] => *index,
        several => {
            let matches = several
                .iter()
                .filter_map(|&i| {
                    headings.get(i).map(|h| SectionMatch {
                        heading: h.display(),
                        start_line: h.first_line + 1,
                        end_line: section_end(i),
                    })
                })
                .collect();
            return Err(EditError::AmbiguousSection {
                header: header.to_string(),
                matches,
            });
        }
    };
    let Some(heading) = headings.get(index) else {
        return Err(EditError::SectionNotFound {
            header: crate::errors::clip(header),
            headings: listing(),
        });
    };

    let body_end = section_end(index).min(lines.len());
    let body_start = (heading.last_line + 1).min(body_end);
    let body = lines.get(body_start..body_end).unwrap_or_default();
    let has_next = body_end < lines.len();

    let (content_lines, _) = split_lines(content, crlf);
    let content_starts_blank = content_lines.first().is_some_and(|l| is_blank(l));
    let first = content_lines.iter().position(|l| !is_blank(l));
    let last = content_lines.iter().rposition(|l| !is_blank(l));
    let new_body = match (first, last) {
        (Some(first), Some(last)) => content_lines.get(first..=last).unwrap_or_default(),
        _ => &[],
    };
    let blank_after_heading = body.first().is_some_and(|l| is_blank(l)) || content_starts_blank;

    let mut out: Vec<&str> = Vec::with_capacity(lines.len() + new_body.len() + 2);
    out.extend(lines.iter().take(body_start));
    if !new_body.is_empty() {
        if blank_after_heading {
            out.push("");
        }
        out.extend(new_body);
    }
    if has_next {
        // Also keeps the content from merging into a setext heading below.
        out.push("");
    }
    out.extend(lines.iter().skip(body_end));

    let summary = format!(
        "replace_section ({}, lines {}-{})",
        heading.display(),
        heading.first_line + 1,
        body_end.max(heading.first_line + 1)
    );
    Ok((join_lines(&out, trailing, crlf), summary))
}

#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
pub struct DiffStats {
    /// Lines added.
    pub added: usize,
    /// Lines removed.
    pub removed: usize,
}

/// Unified diff (3 lines of context) from `old` to `new`; empty when equal.
pub fn diff(old: &str, new: &str, old_label: &str, new_label: &str) -> (String, DiffStats) {
    if old == new {
        return (String::new(), DiffStats::default());
    }
    let text_diff = TextDiff::from_lines(old, new);
    let mut stats = DiffStats::default();
    for change in text_diff.iter_all_changes() {
        match change.tag() {
            ChangeTag::Insert => stats.added += 1,
            ChangeTag::Delete => stats.removed += 1,
            ChangeTag::Equal => {}
        }
    }
    let unified = text_diff
        .unified_diff()
        .context_radius(3)
        .header(old_label, new_label)
        .to_string();
    (unified, stats)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit(operation: EditOperation, content: &str) -> Edit<'_> {
        Edit {
            operation,
            content,
            start_line: None,
            end_line: None,
            section_header: None,
        }
    }

    fn lines<'a>(content: &'a str, start: Option<usize>, end: Option<usize>) -> Edit<'a> {
        Edit {
            start_line: start,
            end_line: end,
            ..edit(EditOperation::ReplaceLines, content)
        }
    }

    fn section<'a>(header: &'a str, content: &'a str) -> Edit<'a> {
        Edit {
            section_header: Some(header),
            ..edit(EditOperation::ReplaceSection, content)
        }
    }

    fn ok(original: &str, e: &Edit<'_>) -> String {
        apply(original, e).unwrap().text
    }

    const DOC: &str = "# Title\n\
                       \n\
                       Intro text.\n\
                       \n\
                       ## Context\n\
                       \n\
                       Some context.\n\
                       \n\
                       ### Details\n\
                       \n\
                       Deep details.\n\
                       \n\
                       ## Acceptance Criteria\n\
                       \n\
                       - [ ] one\n\
                       - [ ] two\n\
                       \n\
                       ## Notes\n\
                       Last note.\n";

    #[test]
    fn operation_names() {
        for (op, name) in [
            (EditOperation::ReplaceAll, "replace_all"),
            (EditOperation::Append, "append"),
            (EditOperation::Prepend, "prepend"),
            (EditOperation::ReplaceLines, "replace_lines"),
            (EditOperation::ReplaceSection, "replace_section"),
        ] {
            assert_eq!(op.as_str(), name);
            assert_eq!(serde_json::to_string(&op).unwrap(), format!("\"{name}\""));
            let back: EditOperation = serde_json::from_str(&format!("\"{name}\"")).unwrap();
            assert_eq!(back, op);
        }
    }

    #[test]
    fn counts_lines() {
        assert_eq!(line_count(""), 0);
        assert_eq!(line_count("a"), 1);
        assert_eq!(line_count("a\n"), 1);
        assert_eq!(line_count("a\nb"), 2);
        assert_eq!(line_count("\n"), 1);
        assert_eq!(line_count("a\n\n"), 2);
        assert_eq!(line_count("a\r\nb\r\n"), 2);
    }

    #[test]
    fn replace_all() {
        let applied = apply("old", &edit(EditOperation::ReplaceAll, "new\n")).unwrap();
        assert_eq!(applied.text, "new\n");
        assert_eq!(applied.summary, "replace_all");
        assert_eq!(ok("old", &edit(EditOperation::ReplaceAll, "")), "");
    }

    #[test]
    fn append() {
        let e = edit(
            EditOperation::Append,
            "\n## Update\n\n- Added error handling",
        );
        assert_eq!(
            ok("Text\n", &e),
            "Text\n\n## Update\n\n- Added error handling"
        );
        assert_eq!(
            ok("Text", &e),
            "Text\n\n## Update\n\n- Added error handling"
        );
        assert_eq!(ok("", &edit(EditOperation::Append, "x")), "x");
        assert_eq!(ok("a", &edit(EditOperation::Append, "b\n")), "a\nb\n");
        assert_eq!(ok("a", &edit(EditOperation::Append, "")), "a");
        assert_eq!(apply("a", &e).unwrap().summary, "append");
    }

    #[test]
    fn prepend() {
        assert_eq!(
            ok("body\n", &edit(EditOperation::Prepend, "top")),
            "top\nbody\n"
        );
        assert_eq!(
            ok("body", &edit(EditOperation::Prepend, "top\n")),
            "top\nbody"
        );
        assert_eq!(ok("", &edit(EditOperation::Prepend, "top")), "top");
        assert_eq!(ok("body", &edit(EditOperation::Prepend, "")), "body");
        assert_eq!(
            apply("x", &edit(EditOperation::Prepend, "y"))
                .unwrap()
                .summary,
            "prepend"
        );
    }

    #[test]
    fn append_prepend_keep_crlf() {
        assert_eq!(
            ok("a\r\nb", &edit(EditOperation::Append, "c\nd\n")),
            "a\r\nb\r\nc\r\nd\r\n"
        );
        assert_eq!(
            ok("a\r\n", &edit(EditOperation::Prepend, "top")),
            "top\r\na\r\n"
        );
        // Already-CRLF content is not doubled.
        assert_eq!(
            ok("a\r\n", &edit(EditOperation::Append, "b\r\n")),
            "a\r\nb\r\n"
        );
    }

    #[test]
    fn replace_lines_middle() {
        let applied = apply("1\n2\n3\n4\n", &lines("two\nthree\n", Some(2), Some(3))).unwrap();
        assert_eq!(applied.text, "1\ntwo\nthree\n4\n");
        assert_eq!(applied.summary, "replace_lines (lines 2-3)");
        let applied = apply("1\n2\n3\n4\n", &lines("x", Some(2), Some(2))).unwrap();
        assert_eq!(applied.text, "1\nx\n3\n4\n");
        assert_eq!(applied.summary, "replace_lines (line 2)");
    }

    #[test]
    fn replace_lines_more_or_fewer_lines() {
        assert_eq!(
            ok("1\n2\n3\n", &lines("a\nb\nc\nd", Some(2), Some(2))),
            "1\na\nb\nc\nd\n3\n"
        );
        assert_eq!(ok("1\n2\n3\n", &lines("", Some(1), Some(2))), "3\n");
        assert_eq!(ok("1\n2\n3\n", &lines("", Some(1), Some(3))), "");
        // A blank line is expressed as "\n".
        assert_eq!(ok("1\n2\n3\n", &lines("\n", Some(2), Some(2))), "1\n\n3\n");
    }

    #[test]
    fn replace_lines_preserves_trailing_newline() {
        assert_eq!(ok("1\n2", &lines("x\n", Some(2), Some(2))), "1\nx");
        assert_eq!(ok("1\n2\n", &lines("x", Some(2), Some(2))), "1\nx\n");
        assert_eq!(ok("only", &lines("new", Some(1), Some(1))), "new");
        assert_eq!(ok("1\n2", &lines("", Some(2), Some(2))), "1");
    }

    #[test]
    fn replace_lines_crlf() {
        assert_eq!(
            ok("a\r\nb\r\nc\r\n", &lines("x\ny", Some(2), Some(2))),
            "a\r\nx\r\ny\r\nc\r\n"
        );
        assert_eq!(ok("a\r\nb", &lines("x\r\n", Some(2), Some(2))), "a\r\nx");
        // Mixed endings: '\r' stays part of the line.
        assert_eq!(
            ok("a\r\nb\nc\n", &lines("x\n", Some(1), Some(1))),
            "x\nb\nc\n"
        );
    }

    #[test]
    fn replace_lines_errors() {
        let doc = "1\n2\n3\n";
        let err = apply(doc, &lines("x", None, Some(2))).unwrap_err();
        assert_eq!(
            err,
            EditError::MissingLineArgument {
                argument: "start_line",
                line_count: 3
            }
        );
        assert!(err.to_string().contains("start_line"));
        assert_eq!(
            err.hint(),
            "The description has 3 lines; use start_line and end_line between 1 and 3 \
             (read it with jility_get_ticket)."
        );
        let err = apply(doc, &lines("x", Some(1), None)).unwrap_err();
        assert!(err.to_string().contains("end_line"));
        let err = apply(doc, &lines("x", None, None)).unwrap_err();
        assert!(err.to_string().contains("start_line and end_line"));

        for (s, e) in [(0, 1), (2, 1), (1, 4), (4, 4), (usize::MAX, usize::MAX)] {
            let err = apply(doc, &lines("x", Some(s), Some(e))).unwrap_err();
            assert!(
                matches!(err, EditError::LineRangeOutOfBounds { line_count: 3, .. }),
                "{s}-{e}: {err:?}"
            );
            assert!(err.to_string().contains("3 lines"), "{err}");
        }
        let err = apply(doc, &lines("x", Some(2), Some(9))).unwrap_err();
        assert_eq!(
            err.to_string(),
            "line range 2-9 is out of bounds: the description has 3 lines"
        );

        let err = apply("", &lines("x", Some(1), Some(1))).unwrap_err();
        assert!(err.to_string().contains("empty"), "{err}");
        assert!(err.hint().contains("append"));
    }

    #[test]
    fn replace_section_middle() {
        let applied = apply(DOC, &section("## Acceptance Criteria", "- [ ] new\n")).unwrap();
        assert_eq!(
            applied.text,
            DOC.replace("- [ ] one\n- [ ] two\n", "- [ ] new\n")
        );
        assert_eq!(
            applied.summary,
            "replace_section (## Acceptance Criteria, lines 13-17)"
        );
    }

    #[test]
    fn replace_section_includes_nested_headings() {
        let applied = apply(DOC, &section("Context", "New context.")).unwrap();
        assert_eq!(
            applied.text,
            "# Title\n\nIntro text.\n\n## Context\n\nNew context.\n\n## Acceptance Criteria\n\n\
             - [ ] one\n- [ ] two\n\n## Notes\nLast note.\n"
        );
        assert_eq!(applied.summary, "replace_section (## Context, lines 5-12)");
        // The sub-section alone.
        let text = ok(DOC, &section("### details", "More."));
        assert!(text.contains("### Details\n\nMore.\n\n## Acceptance Criteria"));
        // The top heading owns everything.
        assert_eq!(ok(DOC, &section("# Title", "All.")), "# Title\n\nAll.\n");
    }

    #[test]
    fn replace_section_at_end() {
        let applied = apply(DOC, &section("notes", "New note.\n\n")).unwrap();
        assert_eq!(applied.text, DOC.replace("Last note.\n", "New note.\n"));
        assert_eq!(applied.summary, "replace_section (## Notes, lines 18-19)");
        // No trailing newline, heading on the last line.
        assert_eq!(
            ok("## A\ntext\n## B", &section("B", "x")),
            "## A\ntext\n## B\nx"
        );
        assert_eq!(ok("## B", &section("## B", "x\n")), "## B\nx");
        assert_eq!(ok("## B\n", &section("## B", "x")), "## B\nx\n");
        assert_eq!(ok("## B\n\nold", &section("## B", "x")), "## B\n\nx");
    }

    #[test]
    fn replace_section_tidy_blank_lines() {
        // Body without leading blank line: none added.
        assert_eq!(
            ok("## A\nold\n## B\nb\n", &section("A", "new")),
            "## A\nnew\n\n## B\nb\n"
        );
        // Content's own surrounding blank lines are normalized.
        assert_eq!(
            ok("## A\n\nold\n\n\n## B\n", &section("A", "\n\n\nnew\n\n\n")),
            "## A\n\nnew\n\n## B\n"
        );
        // Empty content clears the section.
        assert_eq!(
            ok("## A\n\nold\n\n## B\n", &section("A", "")),
            "## A\n\n## B\n"
        );
        assert_eq!(ok("## A\n\nold\n", &section("A", "")), "## A\n");
        // Content that could become a setext heading is kept apart.
        assert_eq!(
            ok("## A\nold\n\nB\n-\n", &section("A", "new")),
            "## A\nnew\n\nB\n-\n"
        );
    }

    #[test]
    fn ignores_headings_in_code_blocks() {
        let doc = "## Steps\n\n```sh\n# not a heading\n## Notes\n```\n\n~~~\n## Notes\n~~~\n\n    ## indented code\n\n<div>\n## html\n</div>\n\n## Notes\n\nreal\n";
        let applied = apply(doc, &section("## Notes", "changed")).unwrap();
        assert_eq!(applied.text, doc.replace("\nreal\n", "\nchanged\n"));
        assert_eq!(applied.summary, "replace_section (## Notes, lines 18-20)");
        // Replacing Steps must keep the code blocks inside it.
        let text = ok(doc, &section("Steps", "new steps"));
        assert_eq!(text, "## Steps\n\nnew steps\n\n## Notes\n\nreal\n");
        let err = apply(doc, &section("not a heading", "x")).unwrap_err();
        assert!(matches!(err, EditError::SectionNotFound { .. }));
        assert!(
            err.hint().contains("\"## Steps\", \"## Notes\""),
            "{}",
            err.hint()
        );
    }

    #[test]
    fn setext_headings() {
        let doc =
            "Title\n=====\n\nintro\n\nPart one\n--------\nbody one\n\nPart two\n---\nbody two\n";
        let applied = apply(doc, &section("part one", "new")).unwrap();
        assert_eq!(
            applied.text,
            "Title\n=====\n\nintro\n\nPart one\n--------\nnew\n\nPart two\n---\nbody two\n"
        );
        assert_eq!(applied.summary, "replace_section (## Part one, lines 6-9)");
        assert_eq!(ok(doc, &section("# Title", "x")), "Title\n=====\n\nx\n");
    }

    #[test]
    fn heading_text_matching() {
        let doc = "## `API` changes ##\n\nold\n\n## *Done* when\nx\n";
        assert!(ok(doc, &section("API changes", "new")).contains("## `API` changes ##\n\nnew\n\n"));
        assert!(ok(doc, &section("##   api   CHANGES  ", "new")).contains("\n\nnew\n\n"));
        assert!(ok(doc, &section("## `API` changes", "new")).contains("\n\nnew\n\n"));
        assert!(ok(doc, &section("## API changes ##", "new")).contains("\n\nnew\n\n"));
        assert!(ok(doc, &section("done when", "y")).ends_with("## *Done* when\ny\n"));
        // Wrong level does not match.
        let err = apply(doc, &section("### API changes", "new")).unwrap_err();
        assert!(matches!(err, EditError::SectionNotFound { .. }));
        assert_eq!(
            err.to_string(),
            "no heading in the description matches section_header \"### API changes\""
        );
        // Headings in block quotes and lists are not sections.
        let err = apply("> ## Quoted\n\n- ## Item\n", &section("Quoted", "x")).unwrap_err();
        assert!(
            err.hint().contains("no markdown headings"),
            "{}",
            err.hint()
        );
    }

    #[test]
    fn ambiguous_sections() {
        let doc = "## Notes\na\n\n### Notes\nb\n\n## Other\n";
        let err = apply(doc, &section("Notes", "x")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "section_header \"Notes\" is ambiguous: it matches 2 headings, at lines 1, 4"
        );
        let hint = err.hint();
        assert!(hint.contains("#'s"), "{hint}");
        assert!(hint.contains("\"## Notes\" lines 1-6"), "{hint}");
        assert!(hint.contains("\"### Notes\" lines 4-6"), "{hint}");
        // The level disambiguates.
        assert_eq!(
            ok(doc, &section("### Notes", "x")),
            "## Notes\na\n\n### Notes\nx\n\n## Other\n"
        );

        let doc = "## Notes\na\n## Notes\nb\n";
        let err = apply(doc, &section("## Notes", "x")).unwrap_err();
        assert!(err.hint().contains("replace_lines"));
        assert!(!err.hint().contains("#'s"));
    }

    #[test]
    fn section_header_errors() {
        let err = apply(DOC, &edit(EditOperation::ReplaceSection, "x")).unwrap_err();
        assert!(matches!(err, EditError::MissingSectionHeader { .. }));
        assert!(
            err.hint()
                .starts_with("Available headings: \"# Title\", \"## Context\"")
        );
        for header in ["", "  ", "##", "## ", "####### "] {
            let err = apply(DOC, &section(header, "x")).unwrap_err();
            assert!(
                matches!(err, EditError::EmptySectionHeader { .. }),
                "{header:?}: {err:?}"
            );
        }
        let err = apply("", &section("Context", "x")).unwrap_err();
        assert!(matches!(err, EditError::SectionNotFound { .. }));
        assert!(err.hint().contains("no markdown headings"));

        let many: String = (1..=30).map(|i| format!("## H{i}\n")).collect();
        let hint = apply(&many, &section("nope", "x")).unwrap_err().hint();
        assert!(hint.contains("\"## H20\" and 10 more"), "{hint}");
        assert!(!hint.contains("H21"));
    }

    #[test]
    fn crlf_sections() {
        let doc = "## A\r\n\r\nold\r\n\r\n## B\r\nb\r\n";
        assert_eq!(
            ok(doc, &section("A", "new\nlines")),
            "## A\r\n\r\nnew\r\nlines\r\n\r\n## B\r\nb\r\n"
        );
        assert_eq!(
            ok(doc, &section("B", "x")),
            "## A\r\n\r\nold\r\n\r\n## B\r\nx\r\n"
        );
        let setext = "T\r\n=\r\nbody\r\n";
        assert_eq!(ok(setext, &section("T", "x")), "T\r\n=\r\nx\r\n");
    }

    #[test]
    fn unicode() {
        let doc = "## Überblick ✅\n\nalt — text\n\n## Fin\n";
        assert_eq!(
            ok(doc, &section("überblick ✅", "neu")),
            "## Überblick ✅\n\nneu\n\n## Fin\n"
        );
        assert_eq!(
            ok(doc, &lines("ß", Some(3), Some(3))),
            "## Überblick ✅\n\nß\n\n## Fin\n"
        );
    }

    #[test]
    fn ignores_unused_arguments() {
        let e = Edit {
            start_line: Some(99),
            end_line: Some(1),
            section_header: Some("nope"),
            ..edit(EditOperation::Append, "x")
        };
        assert_eq!(ok("a\n", &e), "a\nx");
        let e = Edit {
            section_header: Some("nope"),
            ..lines("x", Some(1), Some(1))
        };
        assert_eq!(ok("a\n", &e), "x\n");
    }

    #[test]
    fn never_panics() {
        let docs = [
            "",
            "\n",
            "\n\n\n",
            "#",
            "# ",
            "##",
            "#\n#\n",
            "\r",
            "\r\n",
            "a\r",
            "\u{feff}# BOM\n",
            "## x\n```\n## y",
            "~~~\n",
            "```\n## a\n",
            "Title\n===",
            "===\n---\n",
            "> # q\n>\n> ## r\n## r\n",
            "- # a\n  ## b\n",
            "<!--\n## c\n-->\n## c",
            "| a |\n|---|\n| # |\n",
            "## é\u{301}\n\u{0}\n",
            "# a\r\n## b\rc\n",
            "    # code\n# real",
            "[x]: <\n# y",
            DOC,
        ];
        let contents = ["", "\n", "x", "x\n", "\r\n", "\n\n## new\n", "é"];
        let headers = [
            "", "#", "a", "# a", "## b", "r", "c", "y", "é", "real", "Title", "###### x", "`",
        ];
        let ranges = [None, Some(0), Some(1), Some(2), Some(3), Some(usize::MAX)];
        for doc in docs {
            for content in contents {
                for op in [
                    EditOperation::ReplaceAll,
                    EditOperation::Append,
                    EditOperation::Prepend,
                ] {
                    let _ = apply(doc, &edit(op, content));
                }
                for start in ranges {
                    for end in ranges {
                        if let Err(e) = apply(doc, &lines(content, start, end)) {
                            let _ = (e.to_string(), e.hint());
                        }
                    }
                }
                for header in headers {
                    match apply(doc, &section(header, content)) {
                        Ok(applied) => {
                            let _ = diff(doc, &applied.text, "a", "b");
                        }
                        Err(e) => {
                            let _ = (e.to_string(), e.hint());
                        }
                    }
                }
            }
        }
        // Byte soup including multi-byte characters and markdown punctuation.
        let alphabet = [
            '#', '\n', '\r', ' ', '`', '~', '=', '-', 'é', '>', '*', 'a', '<',
        ];
        let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..2000 {
            let mut doc = String::new();
            for _ in 0..(seed % 40) {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                doc.push(alphabet[(seed % alphabet.len() as u64) as usize]);
            }
            for header in ["a", "#", "## a", "é"] {
                let _ = apply(&doc, &section(header, "x\n"));
            }
            let n = line_count(&doc);
            if n > 0 {
                let applied = apply(&doc, &lines("y", Some(1), Some(n))).unwrap();
                assert_eq!(line_count(&applied.text), 1);
            }
        }
    }

    #[test]
    fn diff_output_and_stats() {
        let (text, stats) = diff("a\nb\nc\n", "a\nb\nc\n", "old", "new");
        assert_eq!(text, "");
        assert_eq!(stats, DiffStats::default());

        let old = "1\n2\n3\n4\n5\n6\n7\n8\n9\n";
        let new = "1\n2\n3\n4\nfive\n6\n7\n8\n9\nten\n";
        let (text, stats) = diff(old, new, "description (before)", "description (after)");
        assert_eq!(
            stats,
            DiffStats {
                added: 2,
                removed: 1
            }
        );
        assert_eq!(
            text,
            "--- description (before)\n+++ description (after)\n@@ -2,8 +2,9 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n 9\n+ten\n"
        );

        let (text, stats) = diff("", "x\n", "a", "b");
        assert_eq!(
            stats,
            DiffStats {
                added: 1,
                removed: 0
            }
        );
        assert!(text.contains("+x"));

        let (text, stats) = diff("x", "x\n", "a", "b");
        assert_eq!(
            stats,
            DiffStats {
                added: 1,
                removed: 1
            }
        );
        assert!(text.contains("No newline"), "{text}");

        assert_eq!(
            serde_json::to_value(DiffStats {
                added: 1,
                removed: 2
            })
            .unwrap(),
            serde_json::json!({"added": 1, "removed": 2})
        );
    }
}
