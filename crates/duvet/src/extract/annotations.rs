//! The annotations of a requirement file as the extraction writes it, made from what it
//! writes: reading the project after the extraction (`duvet report`) then need not parse the
//! TOML it just wrote, which was a tenth of a small project's report.
//!
//! They are the annotations [`crate::annotation::toml_file::parse`] reads from the text
//! [`super::render`] makes (the tests hold the two together); when that text holds what TOML
//! reads otherwise than as written — a control character, a `"` or `\` in the target, `'''`
//! in a quote — none are made, and the text is parsed.

use std::path::Path;

use super::{Feature, Line, Section};
use crate::annotation::{Annotation, AnnotationType, Level};

/// The annotations of the requirement file `file` (its path relative to the root) that
/// [`super::render`] writes for `section` of the specification `target` with `features`
/// (TOML); `None` when only parsing the text tells them.
pub fn toml_annotations(
    file: &Path,
    target: &str,
    section: &Section<'_>,
    features: &[Feature<'_>],
) -> Option<Vec<Annotation>> {
    let written = format!("{target}#{}", section.id);
    let plain = |text: &str| !text.chars().any(|c| c.is_control() && c != '\t');
    let body: Vec<&str> = section
        .lines
        .iter()
        .filter_map(|line| match line {
            Line::Str(text) => Some(*text),
            Line::Break => None,
        })
        .collect();
    let quotes_plain = features
        .iter()
        .all(|f| f.quote.iter().all(|l| plain(l) && !l.contains("'''")));
    if !plain(&written)
        || written.contains(['"', '\\'])
        || !plain(section.full_title)
        || !body.iter().all(|l| plain(l))
        || !quotes_plain
    {
        return None;
    }
    let target = written.trim();
    // `target`, a blank line, the title, `#`, the body, a blank line: then the entries, each
    // its header, `level`, `quote = '''`, its lines, `'''` and a blank line.
    let mut line = body.len() + 6;
    features
        .iter()
        .map(|feature| {
            let level = feature.level.name();
            let raw: String = feature.quote.iter().map(|l| format!("{l}\n")).collect();
            let annotation = Annotation {
                file: file.to_path_buf(),
                line,
                target: target.to_string(),
                quote: normalize(&raw),
                kind: AnnotationType::Spec,
                level: Some(Level::parse(level)?),
                format: None,
                reason: None,
                feature: None,
                tracking_issue: None,
                comment_text: format!("[[spec]]\nlevel = \"{level}\"\nquote = '''\n{raw}'''"),
                comment: raw,
                tags: Vec::new(),
            };
            line += feature.quote.len() + 5;
            Some(annotation)
        })
        .collect()
}

/// A requirement file's quote as it is read: lines trimmed, empty ones dropped, the rest
/// joined with single spaces.
fn normalize(value: &str) -> String {
    value
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::super::{Extension, features, render, sections};
    use super::*;
    use crate::annotation::toml_file;
    use crate::extract::Format;

    /// Every section's annotations, made and parsed from the text; how many were made.
    fn check(doc: &str, format: Format, target: &str) -> usize {
        let mut made = 0;
        for section in sections(doc, format) {
            let features = features(&section);
            if features.is_empty() {
                continue;
            }
            let file = Path::new(".duvet/requirements/spec").join(format!("{}.toml", section.id));
            let text = render(Extension::Toml, target, &section, &features);
            let Some(ours) = toml_annotations(&file, target, &section, &features) else {
                continue;
            };
            made += 1;
            assert_eq!(Ok(ours), toml_file::parse(&text, &file), "{text}");
        }
        made
    }

    fn fixture(path: &str) -> String {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/upstream");
        std::fs::read_to_string(root.join(path)).unwrap()
    }

    #[test]
    fn the_annotations_are_those_parsed_from_the_file() {
        assert!(
            check(
                &fixture("specs/proto.md"),
                Format::Markdown,
                "specs/proto.md"
            ) > 0
        );
        assert!(
            check(
                &fixture("specs/rfc5869.txt"),
                Format::Ietf,
                "https://www.rfc-editor.org/rfc/rfc5869"
            ) > 0
        );
        let doc = "# Odd 'quotes'\n\nA client MUST send it's ''data''.\n\n\
                   * one item MUST\n  wrap\n* and \"another\" MAY {x} \\ y.\n\n\
                   ## Tabs\tand é\n\nThe\tserver SHOULD NOT reply. Twice:\n\n\
                   The\tserver SHOULD NOT reply.\n";
        assert!(check(doc, Format::Markdown, "specs/odd spec.md") >= 2);
    }

    #[test]
    fn what_toml_reads_otherwise_is_parsed() {
        let cases = [
            ("# A\n\nIt MUST say '''x'''.\n", "a.md"),
            ("# A\n\nIt MUST \u{7}ring.\n", "a.md"),
            ("# A\n\nIt MUST be.\n", "a\"b.md"),
            ("# A\n\nIt MUST be.\n", "a\\b.md"),
            ("Title\nline two\n===\n\nIt MUST be.\n", "a.md"),
        ];
        for (doc, target) in cases {
            let section = &sections(doc, Format::Markdown)[0];
            let features = features(section);
            assert!(!features.is_empty(), "{doc:?}");
            assert_eq!(
                toml_annotations(Path::new("x.toml"), target, section, &features),
                None,
                "{doc:?} {target}"
            );
        }
    }
}
