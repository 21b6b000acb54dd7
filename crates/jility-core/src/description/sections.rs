//! The sections of a description as `replace_section` names them (the web's section
//! editors list them).

use super::{Heading, find_headings, is_blank, is_crlf, normalize, split_lines};

/// A section of a description, as `replace_section` names and replaces it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// The heading as "## Title" (a `section_header` that finds it when not `ambiguous`).
    pub heading: String,
    pub level: usize,
    /// The heading's first line, 1-indexed.
    pub start_line: usize,
    /// Its body: the lines under the heading up to the next heading of the same or higher
    /// level (nested sections included), without blank lines around.
    pub body: String,
    /// Whether another heading of the same level reads the same (`replace_section` then
    /// refuses the header).
    pub ambiguous: bool,
}

/// Every section of `text` whose heading is not nested in another block, in order.
pub fn sections(text: &str) -> Vec<Section> {
    let headings = find_headings(text);
    let (lines, _) = split_lines(text, is_crlf(text));
    headings
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let end = headings
                .iter()
                .skip(i + 1)
                .find(|next| next.level <= h.level)
                .map_or(lines.len(), |next| next.first_line)
                .min(lines.len());
            let start = (h.last_line + 1).min(end);
            let body = lines.get(start..end).unwrap_or_default();
            let first = body.iter().position(|l| !is_blank(l));
            let last = body.iter().rposition(|l| !is_blank(l));
            let body = match (first, last) {
                (Some(first), Some(last)) => body.get(first..=last).unwrap_or_default().join("\n"),
                _ => String::new(),
            };
            let same = |other: &Heading| {
                other.level == h.level && normalize(&other.text) == normalize(&h.text)
            };
            Section {
                heading: h.display(),
                level: h.level,
                start_line: h.first_line + 1,
                body,
                ambiguous: headings.iter().filter(|o| same(o)).count() > 1,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::description::{Edit, EditOperation, apply};

    #[test]
    fn sections_list_bodies_and_ambiguity() {
        let text = "# T\n\n## A\n\none\n\n### A1\nsub\n\n## B\ntwo\n\n```\n## not\n```\n## B\n";
        let all = sections(text);
        let names: Vec<_> = all.iter().map(|s| s.heading.as_str()).collect();
        assert_eq!(names, ["# T", "## A", "### A1", "## B", "## B"]);
        assert_eq!(all[1].body, "one\n\n### A1\nsub");
        assert_eq!(all[1].start_line, 3);
        assert_eq!(all[2].body, "sub");
        assert_eq!(all[3].body, "two\n\n```\n## not\n```");
        assert!(all[3].ambiguous && all[4].ambiguous && !all[1].ambiguous);
        assert_eq!(all[4].body, "");
        let edited = apply(
            text,
            &Edit {
                operation: EditOperation::ReplaceSection,
                content: "uno",
                start_line: None,
                end_line: None,
                section_header: Some("## A"),
            },
        )
        .unwrap()
        .text;
        assert_eq!(sections(&edited)[1].body, "uno");
    }
}
