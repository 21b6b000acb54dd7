//! Specifications: parsing IETF plain text and Markdown into sections, and extracting the
//! requirement sentences (RFC 2119 keywords) of a section.

pub mod ietf;
pub mod markdown;
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
}

impl Section {
    /// The full text of the section: its lines joined with `\n`.
    pub fn content(&self) -> String {
        self.lines.join("\n")
    }
}

/// Parse a specification's text in `format` into its sections, in document order.
pub fn parse(text: &str, format: Format) -> Vec<Section> {
    match format {
        Format::Ietf => ietf::parse(text),
        Format::Markdown => markdown::parse(text),
    }
}
