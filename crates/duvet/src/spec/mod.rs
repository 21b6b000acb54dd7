//! Specifications: their sections as the model holds them, made from duvet 0.4.3's reading
//! of the text ([`crate::extract::sections`], the one reader of specification text), the
//! document's title, and the requirement sentences (RFC 2119 keywords) of a section;
//! `parsed` keeps a parsed text.

pub mod parsed;
pub mod requirements;

pub use crate::extract::format::Format;
pub(crate) use crate::extract::format::offset_in;

/// One section of a specification, as the model holds it: duvet 0.4.3's section
/// ([`crate::extract::Section`]) with its lines made for reading ([`Section::of`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// The section id as Duvet names it: `section-4.5`, `appendix-A.1`, `name-abstract` (named IETF sections), or for
    /// Markdown the explicit `{#id}` or the slug of the title (duplicates suffixed `-1`, `-2`).
    pub id: String,
    /// The heading text without its number, e.g. `Stream Concurrency`, as 0.4.3 reads it
    /// (an IETF title's first line, a Markdown title from its first text on).
    pub title: String,
    /// The body lines of the section (not including the heading), with the page furniture of
    /// IETF documents (headers, footers, form feeds) removed, trailing whitespace removed, and
    /// in IETF text the section's common indentation. Leading/trailing blank lines are
    /// trimmed; inner blank lines separate paragraphs (not the one a page break leaves in a
    /// paragraph, which is rejoined).
    pub lines: Vec<String>,
    /// The byte offset in the document of each of `lines` (of its first byte as kept; for a
    /// blank line, of the blank line), so that a report can name the document's lines.
    pub at: Vec<usize>,
    /// The byte offset in the document of the heading's title.
    pub title_at: usize,
}

impl Section {
    /// The full text of the section: its lines joined with `\n`.
    pub fn content(&self) -> String {
        self.lines.join("\n")
    }

    /// The model's section of `read`, a section of `doc` in `format`: its text lines (a
    /// Markdown list break is no line), trailing whitespace removed; a blank line a page
    /// break left inside a sentence (the text before it does not end with `.`, `:`, `!` or
    /// `?`) dropped, so the paragraph reads on; in IETF text, the indentation the lines share
    /// (normally the RFC's 3 spaces) removed, so relative indentation of lists and figures is
    /// kept.
    pub fn of(doc: &str, read: &crate::extract::Section<'_>, format: Format) -> Self {
        let mut lines: Vec<&str> = Vec::with_capacity(read.lines.len());
        let mut last = "";
        for (i, line) in read.lines.iter().enumerate() {
            let crate::extract::Line::Str(line) = *line else {
                continue;
            };
            let line = line.trim_end();
            if line.is_empty() {
                if read.page_breaks.contains(&i) && !last.ends_with(['.', ':', '!', '?']) {
                    continue;
                }
            } else {
                last = line;
            }
            lines.push(line);
        }
        while lines.last().is_some_and(|l| l.is_empty()) {
            lines.pop();
        }
        let leading = lines.iter().take_while(|l| l.is_empty()).count();
        let lines = lines.get(leading..).unwrap_or_default();
        let indent = match format {
            Format::Ietf => lines
                .iter()
                .filter(|l| !l.is_empty())
                .map(|l| l.chars().take_while(|c| c.is_whitespace()).count())
                .min()
                .unwrap_or(0),
            Format::Markdown => 0,
        };
        let (lines, at) = lines
            .iter()
            .map(|&line| {
                let cut = line
                    .char_indices()
                    .nth(indent)
                    .map_or(line.len(), |(at, _)| at);
                let kept = line.get(cut..).unwrap_or_default();
                (kept.to_string(), offset_in(doc, line) + cut)
            })
            .unzip();
        Self {
            id: read.id.clone(),
            title: read.title.clone(),
            lines,
            at,
            title_at: read.title_at,
        }
    }
}

/// The model's sections of `doc` in `format`, in document order.
pub fn sections(doc: &str, format: Format) -> Vec<Section> {
    crate::extract::sections(doc, format)
        .iter()
        .map(|read| Section::of(doc, read, format))
        .collect()
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
mod tests;
