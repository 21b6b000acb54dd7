//! Where an annotation lies in its file, as duvet 0.4.3 marks it in a diagnostic: a comment
//! from the value of its first meta line (the target, or the value of `key=value`) to the end
//! of its last quote line; an entry of a requirement file by its `[[…]]` header.

use std::ops::Range;

use crate::annotation::{Annotation, CommentStyle};

/// The byte range of `annotation` in `text` (its file's contents), read with one of `styles`
/// (the project's comment styles); the first line of the annotation, trimmed, when it cannot
/// be read as one.
#[cfg(test)]
pub(super) fn span(annotation: &Annotation, text: &str, styles: &[CommentStyle]) -> Range<usize> {
    span_in(annotation, &lines(text), text.len(), styles)
}

/// Each line of a text (as `str::lines` gives them) with the offset it starts at: made once
/// a file for [`span_in`] (a file of thousands of annotations is not read again from its
/// start for each).
pub(super) fn lines(text: &str) -> Vec<(usize, &str)> {
    line_starts(text).collect()
}

/// [`span`], with the text's [`lines`] and length.
pub(super) fn span_in(
    annotation: &Annotation,
    all: &[(usize, &str)],
    len: usize,
    styles: &[CommentStyle],
) -> Range<usize> {
    let count = annotation.comment_text.lines().count().max(1);
    let from = annotation.line.saturating_sub(1).min(all.len());
    let lines = &all[from..(from + count).min(all.len())];
    let Some(&(at, first)) = lines.first() else {
        return len..len;
    };
    let whole = trimmed(first, at);
    let head = first.trim_start();
    if head.starts_with('[') || head.starts_with('{') {
        // A requirement-file entry: its header.
        let end = match head.strip_prefix("[[") {
            Some(rest) => rest.find("]]").map(|i| i + 4),
            None if head.starts_with('[') => head.find(']').map(|i| i + 1),
            None => None,
        };
        return match end {
            Some(end) => whole.start..whole.start + end,
            None => whole,
        };
    }
    let Some(style) = styles
        .iter()
        .filter(|s| !s.meta.is_empty() && head.starts_with(s.meta.as_str()))
        .max_by_key(|s| s.meta.len())
    else {
        return whole;
    };
    let mut span: Option<Range<usize>> = None;
    for &(at, line) in lines {
        let content = line.trim_start();
        let offset = at + (line.len() - content.len());
        let part = if let Some(rest) = content.strip_prefix(style.meta.as_str()) {
            if span.is_some() {
                continue;
            }
            // The value of the meta line: after `=` when it has one, else all of it.
            let rest_at = offset + style.meta.len();
            let value = rest.trim_start();
            let value_at = rest_at + (rest.len() - value.len());
            match value.split_once('=') {
                Some((key, v)) => {
                    let v_trimmed = trimmed(v, value_at + key.len() + 1);
                    Some(v_trimmed)
                }
                None => Some(value_at..value_at + value.trim_end().len()),
            }
        } else if !style.content.is_empty()
            && let Some(rest) = content.strip_prefix(style.content.as_str())
        {
            let quoted = trimmed(rest, offset + style.content.len());
            (!quoted.is_empty()).then_some(quoted)
        } else {
            None
        };
        if let Some(part) = part {
            span = Some(match span {
                Some(s) => s.start.min(part.start)..s.end.max(part.end),
                None => part,
            });
        }
    }
    span.unwrap_or(whole)
}

/// The range of `s` (which starts at byte `at`) without its surrounding whitespace.
fn trimmed(s: &str, at: usize) -> Range<usize> {
    let start = at + (s.len() - s.trim_start().len());
    start..start + s.trim().len()
}

/// Each line of `text` (as `str::lines` gives them) with the offset it starts at.
fn line_starts(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let base = text.as_ptr() as usize;
    text.lines()
        .map(move |line| (line.as_ptr() as usize - base, line))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::annotation::AnnotationType;
    use std::path::PathBuf;

    fn annotation(line: usize, comment_text: &str) -> Annotation {
        Annotation {
            file: PathBuf::from("a.rs"),
            line,
            target: String::new(),
            quote: String::new(),
            kind: AnnotationType::Implementation,
            level: None,
            format: None,
            reason: None,
            feature: None,
            tracking_issue: None,
            comment_text: comment_text.to_string(),
            comment: String::new(),
            tags: Vec::new(),
        }
    }

    #[test]
    fn a_comment_runs_from_its_target_to_the_end_of_its_quote() {
        let text = "fn a() {}\n    //= spec.md#s\n    //= type=test\n    //# The text  \n";
        let a = annotation(2, "//= spec.md#s\n//= type=test\n//# The text");
        let found = span(&a, text, &[CommentStyle::default()]);
        assert_eq!(
            &text[found],
            "spec.md#s\n    //= type=test\n    //# The text"
        );
    }

    #[test]
    fn a_reference_without_a_quote_is_its_target() {
        let text = "//= spec.md#s\nfn a() {}\n";
        let a = annotation(1, "//= spec.md#s");
        assert_eq!(
            &text[span(&a, text, &[CommentStyle::default()])],
            "spec.md#s"
        );
    }

    #[test]
    fn a_requirement_file_entry_is_its_header() {
        let text = "target = \"spec.md#s\"\n\n[[spec]]\nlevel = \"MUST\"\nquote = '''\nx\n'''\n";
        let a = annotation(3, "[[spec]]\nlevel = \"MUST\"");
        assert_eq!(&text[span(&a, text, &[])], "[[spec]]");
    }
}
