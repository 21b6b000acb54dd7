//! Specifications: parsing IETF plain text and Markdown into sections, and extracting the
//! requirement sentences (RFC 2119 keywords) of a section; `parsed` keeps a parsed text.

pub mod ietf;
pub mod markdown;
pub mod parsed;
pub mod requirements;

use serde::{Deserialize, Serialize};

/// The text formats Duvet reads specifications in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    Ietf,
    Markdown,
}

impl Format {
    /// The format of a specification without an explicit `format`: Markdown for `.md` and
    /// `.markdown` paths, IETF plain text otherwise (as Duvet's `auto`).
    pub fn detect(path_or_url: &str) -> Self {
        let lower = path_or_url.to_ascii_lowercase();
        if lower.ends_with(".md") || lower.ends_with(".markdown") {
            Self::Markdown
        } else {
            Self::Ietf
        }
    }

    /// duvet 0.4.3's automatic format, which reads the text too: Markdown for `.md` and
    /// `.markdown` files and for texts starting with a heading (`#`) or a `[//]:` comment,
    /// IETF plain text otherwise.
    pub fn auto(path_or_url: &str, text: &str) -> Self {
        let lead = text.trim();
        if lead.starts_with('#') || lead.starts_with("[//]:") {
            Self::Markdown
        } else {
            Self::detect(path_or_url)
        }
    }
}

/// One section of a specification.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// The section id as Duvet names it: `section-4.5`, `appendix-A.1`, `name-abstract` (named IETF sections), or for
    /// Markdown the explicit `{#id}` or the slug of the title (duplicates suffixed `-1`, `-2`).
    pub id: String,
    /// The heading text without its number, e.g. `Stream Concurrency`.
    pub title: String,
    /// The body lines of the section (not including the heading), with the page furniture of
    /// IETF documents (headers, footers, form feeds) removed. Leading/trailing blank lines are
    /// trimmed; inner blank lines separate paragraphs.
    pub lines: Vec<String>,
    /// The byte offset in the document of each of `lines` (of its first byte as kept; for a
    /// blank line, of a line near it), so that a report can name the document's lines.
    pub at: Vec<usize>,
    /// The byte offset in the document of the heading's first line.
    pub title_at: usize,
}

impl Section {
    /// The full text of the section: its lines joined with `\n`.
    pub fn content(&self) -> String {
        self.lines.join("\n")
    }
}

/// The byte offset of `part`, a slice of `doc`, in `doc` (the parsers keep slices of the
/// document; a part from elsewhere counts as its end).
pub(crate) fn offset_in(doc: &str, part: &str) -> usize {
    let (start, at) = (doc.as_ptr() as usize, part.as_ptr() as usize);
    if at < start || at > start + doc.len() {
        return doc.len();
    }
    at - start
}

/// Parse a specification's text in `format` into its sections, in document order.
pub fn parse(text: &str, format: Format) -> Vec<Section> {
    match format {
        Format::Ietf => ietf::parse(text),
        Format::Markdown => markdown::parse(text),
    }
}

/// A title's most lines and characters (a wrapped title has two or three lines).
const TITLE_LINES: usize = 6;
const TITLE_MAX: usize = 300;

/// The document's title: the first `# ` heading of Markdown; for IETF text, the first group of
/// lines after the header block (the lines up to the first blank one), its lines joined (a
/// title may wrap), without a draft name line (`draft-ietf-…-07`), unless that group is
/// already the document's body (`Abstract`, `Status of This Memo`, a numbered section).
pub fn title(text: &str, format: Format) -> String {
    match format {
        Format::Markdown => text
            .trim_start_matches('\u{feff}')
            .lines()
            .find_map(|l| l.strip_prefix("# "))
            .map(|t| mcp_common::clip(t.trim(), TITLE_MAX))
            .unwrap_or_default(),
        Format::Ietf => {
            // Only the document's first lines are read: the header block, then the title.
            let mut lines = text
                .lines()
                .map(|l| l.trim_matches(|c: char| c.is_whitespace() || c == '\u{feff}'))
                .skip_while(|l| l.is_empty());
            if lines.by_ref().take_while(|l| !l.is_empty()).count() == 0 {
                return String::new();
            }
            let title: Vec<&str> = lines
                .skip_while(|l| l.is_empty())
                .take_while(|l| !l.is_empty())
                .take(TITLE_LINES)
                .collect();
            let body = |line: &str| {
                let lower = line.to_ascii_lowercase();
                lower.starts_with("abstract")
                    || lower.starts_with("status of this memo")
                    || lower.starts_with("table of contents")
                    || line.starts_with(|c: char| c.is_ascii_digit())
            };
            if title.first().is_none_or(|l| body(l)) {
                return String::new();
            }
            let joined = title
                .iter()
                .filter(|l| !l.to_ascii_lowercase().starts_with("draft-"))
                .copied()
                .collect::<Vec<_>>()
                .join(" ");
            mcp_common::clip(&joined, TITLE_MAX)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ietf_titles_indented_little_or_wrapped_are_found() {
        let rfc5869 = "Internet Engineering Task Force (IETF)                       H. Krawczyk\nRequest for Comments: 5869                                  IBM Research\nCategory: Informational                                        P. Eronen\nISSN: 2070-1721                                                    Nokia\n                                                                May 2010\n\n\n       HMAC-based Extract-and-Expand Key Derivation Function (HKDF)\n\nAbstract\n\n   This document specifies a simple HKDF.\n";
        assert_eq!(
            title(rfc5869, Format::Ietf),
            "HMAC-based Extract-and-Expand Key Derivation Function (HKDF)"
        );
        let rfc8446 = "\u{feff}Internet Engineering Task Force (IETF)                       E. Rescorla\nRequest for Comments: 8446                                       Mozilla\n                                                             August 2018\n\n\n          The Transport Layer Security (TLS) Protocol Version 1.3\n\nAbstract\n";
        assert_eq!(
            title(rfc8446, Format::Ietf),
            "The Transport Layer Security (TLS) Protocol Version 1.3"
        );
        let wrapped = "Network Working Group                                         A. Author\nInternet-Draft                                                   Example\nIntended status: Standards Track                          March 1, 2024\n\n               A Rather Long Title for a Protocol That Needs\n                          Two Lines to Say It\n                      draft-ietf-example-long-title-07\n\nAbstract\n";
        assert_eq!(
            title(wrapped, Format::Ietf),
            "A Rather Long Title for a Protocol That Needs Two Lines to Say It"
        );
    }

    #[test]
    fn a_document_without_a_title_has_none() {
        assert_eq!(title("", Format::Ietf), "");
        assert_eq!(
            title("Header line\n\nAbstract\n\n   Text.\n", Format::Ietf),
            ""
        );
        assert_eq!(title("Header\n\n1.  Introduction\n", Format::Ietf), "");
        assert_eq!(title("# Coffee\n\nText.\n", Format::Markdown), "Coffee");
        assert_eq!(
            title("\u{feff}# Coffee\r\n\r\nText.\r\n", Format::Markdown),
            "Coffee"
        );
    }
}
