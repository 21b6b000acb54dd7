//! Parsing of IETF plain-text documents (RFCs and Internet-Drafts as published by the RFC
//! Editor and the datatracker) into sections.
//!
//! The rules follow Duvet's IETF tokenizer:
//!
//! * **Page furniture** is dropped: form feeds, page footers (an unindented line ending with
//!   ` [Page N]`, or starting with `[Page N]`), running headers (an unindented line starting
//!   with `RFC N  ` or `Internet-Draft  `, and the first unindented line after a form feed when
//!   it is laid out in columns, which covers drafts' headers). The blank lines around furniture
//!   go with it: a page break in the middle of a paragraph joins the paragraph back together,
//!   and one blank line is kept only when the text before the break ends a sentence or a
//!   clause (`.`, `:`, `!`, `?`). Duvet keeps a break there; joining keeps the sentences
//!   that straddle a page whole. Other runs of blank lines are collapsed into one.
//! * **Numbered headings** start at column 0: an id of digits and dots, optionally prefixed by
//!   an appendix letter and a dot (`4.`, `4.5.`, `10.1.2`, `A.1.`), an optional `:`, whitespace
//!   and the title. The trailing dot is optional, as in Duvet. The id becomes `section-4.5`, or
//!   `appendix-A.1` when it starts with a letter. A line holding only an id is a heading with an
//!   empty title.
//! * **Appendix headings** are `Appendix A.  Title` (also `APPENDIX`, `Annex`, and the
//!   separators `:`, ` :`, ` -`, ` --` or none) and become `appendix-A`; `Appendix A.1.  Title`
//!   becomes `appendix-A.1`.
//! * A heading candidate is rejected when its title looks like a table-of-contents entry
//!   (`.....`, `. . .`), is odd (starts with `;`, ends with `{`, `[`, `(` or `;`, or has a run of
//!   five spaces), or its id is malformed (a part above 199, a first part of 0, a letter after
//!   the first part). A candidate right after a blank line is a heading; otherwise (or when the
//!   title contains a `|`, as table rows do) its id must follow the previous heading's id: the
//!   same prefix with one part incremented (`4.1` → `4.2`, `4.2` → `5`, `12` → `A`, `A` → `B`),
//!   a child (`4` → `4.1`), or, with no previous heading, `1`.
//! * **Named sections**: an unnumbered, unindented line between blank lines that is exactly one
//!   of Duvet's titles (`Abstract`, `Status of This Memo`, `Copyright Notice`, `Table of
//!   Contents`, `Acknowledgments`, `Contributors`, `Authors' Addresses`, `Index`, `References`,
//!   ...) starts a section with id `name-` and the slug of the title (`name-abstract`,
//!   `name-status-of-this-memo`, `name-authors-addresses`), as Duvet names them and as the RFC
//!   Editor's HTML anchors them.
//! * A title wrapped onto the next line (indented to the title's column, no blank line between)
//!   is joined into the title.
//! * Text before the first heading (the document header) belongs to no section.
//!
//! Section lines have trailing whitespace removed and the section's common indentation
//! stripped (normally the RFC's 3 spaces), so relative indentation of lists and figures is kept.
//! Ids are reported as found; a document that repeats a heading yields two sections with the
//! same id.

use super::Section;

/// Parse an IETF plain-text document into its sections, in document order.
pub fn parse(text: &str) -> Vec<Section> {
    let raw = raw_lines(text);
    let items = clean(&raw);
    build_sections(&items, text)
}

/// What a physical line of the document is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Empty or whitespace only.
    Blank,
    /// A form feed.
    PageBreak,
    /// A page header or footer.
    Furniture,
    /// Anything else.
    Text,
}

/// A physical line and its kind.
#[derive(Debug, Clone, Copy)]
struct Raw<'a> {
    text: &'a str,
    kind: Kind,
}

/// A line of the document once page furniture is gone.
#[derive(Debug, Clone, Copy)]
enum Item<'a> {
    /// A blank line (a run of them, or a page break between paragraphs).
    Blank,
    /// A line of text.
    Text {
        text: &'a str,
        /// Whether blank lines or page furniture came right before this line.
        after_break: bool,
    },
}

/// Split the document into classified lines; form feeds become lines of their own.
fn raw_lines(text: &str) -> Vec<Raw<'_>> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut raw = Vec::new();
    for line in text.split('\n') {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.contains('\u{c}') {
            let mut first = true;
            for part in line.split('\u{c}') {
                if !first {
                    raw.push(Raw {
                        text: "",
                        kind: Kind::PageBreak,
                    });
                }
                first = false;
                if !part.trim().is_empty() {
                    raw.push(classify(part));
                }
            }
        } else {
            raw.push(classify(line));
        }
    }
    // The first line after a form feed is the running header when it is unindented and laid
    // out in columns (`Internet-Draft        HTTP/3        June 2021`).
    let mut i = 0;
    while i < raw.len() {
        if raw.get(i).is_some_and(|r| r.kind == Kind::PageBreak) {
            let mut j = i + 1;
            while raw.get(j).is_some_and(|r| r.kind == Kind::Blank) {
                j += 1;
            }
            if let Some(next) = raw.get_mut(j)
                && next.kind == Kind::Text
                && !starts_with_whitespace(next.text)
                && next.text.trim().contains("   ")
            {
                next.kind = Kind::Furniture;
            }
        }
        i += 1;
    }
    raw
}

/// Classify a line that holds no form feed.
fn classify(line: &str) -> Raw<'_> {
    let kind = if line.trim().is_empty() {
        Kind::Blank
    } else if !starts_with_whitespace(line) && is_furniture(line) {
        Kind::Furniture
    } else {
        Kind::Text
    };
    Raw { text: line, kind }
}

/// Whether the line starts with whitespace (is indented).
fn starts_with_whitespace(line: &str) -> bool {
    line.starts_with(char::is_whitespace)
}

/// Whether an unindented line is a page header or footer.
fn is_furniture(line: &str) -> bool {
    let line = line.trim_end();
    // `RFC 9114                         HTTP/3                        June 2022`
    if let Some(rest) = line.strip_prefix("RFC ") {
        let digits = rest.chars().take_while(char::is_ascii_digit).count();
        if digits > 0
            && !rest.starts_with('0')
            && rest.get(digits..).is_some_and(|r| r.starts_with("  "))
        {
            return true;
        }
    }
    // `Internet-Draft                   HTTP/3                        June 2021`
    if line.starts_with("Internet-Draft  ") || line.starts_with("INTERNET-DRAFT  ") {
        return true;
    }
    // `Bishop                       Standards Track                   [Page 12]`
    if let Some(rest) = line.strip_suffix(']')
        && let Some(at) = rest.rfind("[Page ")
        && is_page_number(rest.get(at + "[Page ".len()..).unwrap_or(""))
        && (at == 0 || rest.get(..at).is_some_and(|before| before.ends_with(' ')))
    {
        return true;
    }
    // `[Page 12]` at the start of a line.
    if let Some(rest) = line.strip_prefix("[Page ")
        && let Some(close) = rest.find(']')
        && is_page_number(rest.get(..close).unwrap_or(""))
    {
        return true;
    }
    false
}

/// Whether `s` is a page number (digits, not starting with 0).
fn is_page_number(s: &str) -> bool {
    !s.is_empty() && !s.starts_with('0') && s.chars().all(|c| c.is_ascii_digit())
}

/// Drop page furniture and the blank lines around it, and collapse runs of blank lines.
fn clean<'a>(raw: &[Raw<'a>]) -> Vec<Item<'a>> {
    let mut items: Vec<Item<'a>> = Vec::new();
    let mut i = 0;
    let mut after_break = true;
    while let Some(line) = raw.get(i) {
        if line.kind == Kind::Text {
            items.push(Item::Text {
                text: line.text,
                after_break,
            });
            after_break = false;
            i += 1;
            continue;
        }
        // A run of blank lines and furniture.
        let start = i;
        while raw.get(i).is_some_and(|r| r.kind != Kind::Text) {
            i += 1;
        }
        let furniture = raw
            .get(start..i)
            .unwrap_or(&[])
            .iter()
            .any(|r| r.kind != Kind::Blank);
        let at_end = i >= raw.len();
        let blank = match items.last() {
            None | Some(Item::Blank) => false,
            Some(Item::Text { .. }) if at_end => false,
            Some(Item::Text { text, .. }) => {
                !furniture || text.trim_end().ends_with(['.', ':', '!', '?'])
            }
        };
        if blank {
            items.push(Item::Blank);
        }
        after_break = true;
    }
    items
}

/// One part of a section id: a number or an appendix letter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    Num(u8),
    Letter(char),
}

impl Part {
    /// Parse one part: a number up to 199 (RFCs go no higher) or one uppercase letter.
    fn parse(s: &str) -> Option<Self> {
        if !s.is_empty() && s.chars().all(|c| c.is_ascii_digit()) {
            let value: u16 = s.parse().ok()?;
            return (value <= 199).then_some(Self::Num(u8::try_from(value).ok()?));
        }
        let mut chars = s.chars();
        match (chars.next(), chars.next()) {
            (Some(c), None) if c.is_ascii_uppercase() => Some(Self::Letter(c)),
            _ => None,
        }
    }

    /// Whether `next` directly follows `self` (`3` → `4`, `B` → `C`, and `12` → `A`: the
    /// appendices follow the last section).
    fn is_next(self, next: Self) -> bool {
        match (self, next) {
            (Self::Num(a), Self::Num(b)) => u16::from(a) + 1 == u16::from(b),
            (Self::Num(_), Self::Letter(b)) => b == 'A',
            (Self::Letter(_), Self::Num(_)) => false,
            (Self::Letter(a), Self::Letter(b)) => u32::from(a) + 1 == u32::from(b),
        }
    }
}

/// The parts of a section id (`A.1.2` → `A`, `1`, `2`), if it is well formed: the first part
/// is a number above 0 or a letter, the others are numbers.
fn parse_id(id: &str) -> Option<Vec<Part>> {
    let mut parts = Vec::new();
    for (index, piece) in id.split('.').enumerate() {
        let part = Part::parse(piece)?;
        match (index, part) {
            (0, Part::Num(0)) => return None,
            (0, _) | (_, Part::Num(_)) => parts.push(part),
            _ => return None,
        }
    }
    Some(parts)
}

/// Whether `current` can follow `prev`: one part incremented after an equal prefix, or a
/// deeper (or shallower) id with an equal prefix.
fn follows(prev: &[Part], current: &[Part]) -> bool {
    if prev == current {
        return false;
    }
    for (p, c) in prev.iter().zip(current) {
        if p.is_next(*c) {
            return true;
        }
        if p != c {
            return false;
        }
    }
    true
}

/// Whether a title looks like a table-of-contents entry.
fn is_toc_entry(title: &str) -> bool {
    title.contains(".....") || title.contains(". . .") || title.contains(" . . ")
}

/// Whether a title is implausible for a heading.
fn is_odd_title(title: &str) -> bool {
    title.starts_with(';')
        || title.ends_with(['{', '[', '(', ';'])
        || title.trim().contains("     ")
}

/// The kind of a heading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum HeadingKind {
    Section,
    Appendix,
}

/// A numbered or appendix heading found on a line.
#[derive(Debug, Clone)]
struct Heading<'a> {
    kind: HeadingKind,
    /// The id as written, without a trailing dot (`4.5`, `A.1`, `A`).
    id: &'a str,
    parts: Vec<Part>,
    title: &'a str,
    /// Byte offset of the title in the line (the line's length when there is no title).
    title_offset: usize,
}

/// Tracks the previous heading to decide whether a candidate is a heading.
struct HeadingRules {
    prev: Option<Vec<Part>>,
}

impl HeadingRules {
    /// Whether a candidate with this id and title is accepted as a heading.
    fn accepts(&self, parts: &[Part], title: &str, after_break: bool) -> bool {
        if is_toc_entry(title) || is_odd_title(title) {
            return false;
        }
        // Table rows contain `|`; they must pass the ordering check even after a blank line.
        let check_order = title.trim_end_matches('|').contains('|');
        if after_break && !check_order {
            return true;
        }
        match &self.prev {
            None => matches!(parts, [Part::Num(1)] | [Part::Num(1), Part::Num(0)]),
            Some(prev) => follows(prev, parts),
        }
    }

    /// The numbered or appendix heading on `line`, if any.
    fn heading<'a>(&self, line: &'a str, after_break: bool) -> Option<Heading<'a>> {
        let mut candidate = line;
        let mut force_appendix = false;
        for prefix in ["Appendix ", "APPENDIX ", "Annex "] {
            if let Some(rest) = line.strip_prefix(prefix) {
                candidate = rest;
                force_appendix = true;
                break;
            }
        }
        let base = line.len() - candidate.len();

        if force_appendix && let Some(heading) = self.appendix_letter(candidate, base, after_break)
        {
            return Some(heading);
        }

        let (raw_id, title_offset) = numbered(candidate)?;
        let id = raw_id.trim_end_matches('.');
        let title = candidate.get(title_offset..).unwrap_or("").trim();
        let parts = parse_id(id)?;
        if !self.accepts(&parts, title, after_break) {
            return None;
        }
        let kind = if !force_appendix && id.starts_with(|c: char| c.is_ascii_digit()) {
            HeadingKind::Section
        } else {
            HeadingKind::Appendix
        };
        Some(Heading {
            kind,
            id,
            parts,
            title,
            title_offset: base + title_offset,
        })
    }

    /// `A`, `A.`, `A.  Title`, `A:  Title`, `A :  Title`, `A -  Title`, `A --  Title` or
    /// `A  Title` after an appendix prefix; the first form whose title passes the checks wins.
    fn appendix_letter<'a>(
        &self,
        candidate: &'a str,
        base: usize,
        after_break: bool,
    ) -> Option<Heading<'a>> {
        let letter = candidate.chars().next().filter(char::is_ascii_uppercase)?;
        let id = candidate.get(..1)?;
        let after = candidate.get(1..)?;
        let parts = vec![Part::Letter(letter)];
        if after.is_empty() || after == "." {
            return self.accepts(&parts, "", after_break).then(|| Heading {
                kind: HeadingKind::Appendix,
                id,
                parts: parts.clone(),
                title: "",
                title_offset: base + candidate.len(),
            });
        }
        for separator in [".", ":", " :", " -", " --", ""] {
            let Some(rest) = after.strip_prefix(separator) else {
                continue;
            };
            if !rest.starts_with(char::is_whitespace) {
                continue;
            }
            let title = rest.trim();
            if !self.accepts(&parts, title, after_break) {
                continue;
            }
            let title_offset = base + candidate.len() - rest.trim_start().len();
            return Some(Heading {
                kind: HeadingKind::Appendix,
                id,
                parts,
                title,
                title_offset,
            });
        }
        None
    }
}

/// Match `(([A-Z]\.)?[0-9.]+):?\s+(.*)` or `(([A-Z]\.)?[0-9.]+)` at the start of `s`: the raw
/// id and the byte offset of the title (`s.len()` when there is none).
fn numbered(s: &str) -> Option<(&str, usize)> {
    let bytes = s.as_bytes();
    let mut i = 0;
    if bytes.first().is_some_and(u8::is_ascii_uppercase) && bytes.get(1) == Some(&b'.') {
        i = 2;
    }
    let digits_start = i;
    while bytes
        .get(i)
        .is_some_and(|b| b.is_ascii_digit() || *b == b'.')
    {
        i += 1;
    }
    if i == digits_start {
        return None;
    }
    let id = s.get(..i)?;
    let rest = s.get(i..)?;
    if rest.is_empty() {
        return Some((id, s.len()));
    }
    let rest = rest.strip_prefix(':').unwrap_or(rest);
    if !rest.starts_with(char::is_whitespace) {
        return None;
    }
    let title = rest.trim_start();
    Some((id, s.len() - title.len()))
}

/// The unnumbered section titles Duvet recognizes (plus a few spelling variants).
const NAMED_SECTIONS: &[&str] = &[
    "Abstract",
    "Status of this Memo",
    "Status of This Memo",
    "Copyright Notice",
    "Table of Contents",
    "Acknowledgments",
    "Acknowledgment",
    "Acknowledgement",
    "Acknowledgements",
    "Contributors",
    "Index",
    "Author's Address",
    "Authors' Addresses",
    "Author's Addresses",
    "AUTHORS' ADDRESSES",
    "Editor's Address",
    "Editors' Addresses",
    "Normative References",
    "Informative References",
    "References",
    "REFERENCES",
    "Full Copyright Statement",
    "Security Considerations",
    "IANA Considerations",
    "Intellectual Property",
    "Intellectual Property Statement",
    "Working Group Information",
    "Appendix",
];

/// A section being collected.
struct Builder {
    id: String,
    title: String,
    lines: Vec<String>,
    /// Where each line starts in the document.
    at: Vec<usize>,
    title_at: usize,
}

impl Builder {
    /// The finished section: blank lines trimmed at both ends, common indentation removed.
    fn finish(self) -> Section {
        let mut lines = self.lines;
        let mut at = self.at;
        while lines.last().is_some_and(|l| l.trim().is_empty()) {
            lines.pop();
            at.pop();
        }
        let leading = lines.iter().take_while(|l| l.trim().is_empty()).count();
        lines.drain(..leading);
        at.drain(..leading);
        let indent = lines
            .iter()
            .filter(|l| !l.trim().is_empty())
            .map(|l| indentation(l))
            .min()
            .unwrap_or(0);
        let lines = lines
            .into_iter()
            .zip(at.iter_mut())
            .map(|(mut l, at)| {
                if l.trim().is_empty() {
                    String::new()
                } else {
                    // The first `indent` characters, whitespace, dropped in place.
                    let cut = l.char_indices().nth(indent).map_or(l.len(), |(at, _)| at);
                    l.drain(..cut);
                    *at += cut;
                    l
                }
            })
            .collect();
        Section {
            id: self.id,
            title: self.title,
            lines,
            at,
            title_at: self.title_at,
        }
    }
}

/// The number of leading whitespace characters.
fn indentation(line: &str) -> usize {
    line.chars().take_while(|c| c.is_whitespace()).count()
}

/// Find the headings among the cleaned lines and collect each section's lines.
fn build_sections(items: &[Item<'_>], doc: &str) -> Vec<Section> {
    let mut sections = Vec::new();
    // Where the last line read starts (a blank line is placed there).
    let mut last_at = 0;
    let mut current: Option<Builder> = None;
    let mut rules = HeadingRules { prev: None };
    let mut i = 0;
    while let Some(item) = items.get(i) {
        i += 1;
        let (text, after_break) = match *item {
            Item::Blank => {
                if let Some(builder) = current.as_mut() {
                    builder.lines.push(String::new());
                    builder.at.push(last_at);
                }
                continue;
            }
            Item::Text { text, after_break } => (text.trim_end(), after_break),
        };
        let at = super::offset_in(doc, text);
        last_at = at;
        let followed_by_break = match items.get(i) {
            Some(Item::Blank) => true,
            Some(Item::Text { after_break, .. }) => *after_break,
            None => false,
        };

        let heading = if starts_with_whitespace(text) {
            None
        } else if let Some(heading) = rules.heading(text, after_break) {
            let mut title = heading.title.to_string();
            // A title wrapped onto the next line, indented to the title's column.
            let column = text
                .get(..heading.title_offset)
                .map_or(0, |p| p.chars().count());
            if !title.is_empty()
                && column > 0
                && let Some(Item::Text {
                    text: next,
                    after_break: false,
                }) = items.get(i)
                && indentation(next) == column
            {
                title.push(' ');
                title.push_str(next.trim());
                i += 1;
            }
            let prefix = match heading.kind {
                HeadingKind::Section => "section",
                HeadingKind::Appendix => "appendix",
            };
            rules.prev = Some(heading.parts);
            Some((format!("{prefix}-{}", heading.id), title))
        } else if after_break && followed_by_break && NAMED_SECTIONS.contains(&text) {
            Some((
                format!("name-{}", super::markdown::slugify(text)),
                text.to_string(),
            ))
        } else {
            None
        };

        match heading {
            Some((id, title)) => {
                if let Some(done) = current.take() {
                    sections.push(done.finish());
                }
                current = Some(Builder {
                    id,
                    title,
                    lines: Vec::new(),
                    at: Vec::new(),
                    title_at: at,
                });
            }
            None => {
                if let Some(builder) = current.as_mut() {
                    builder.lines.push(text.to_string());
                    builder.at.push(at);
                }
            }
        }
    }
    if let Some(done) = current.take() {
        sections.push(done.finish());
    }
    sections
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A condensed RFC 9114 in the RFC Editor's layout: document header, named sections, a
    /// table of contents, page breaks (one in the middle of a paragraph), numbered sections,
    /// appendices and the authors' addresses.
    const RFC: &str = "\
Internet Engineering Task Force (IETF)                     M. Bishop, Ed.
Request for Comments: 9114                                        Akamai
Category: Standards Track                                      June 2022
ISSN: 2070-1721


                                 HTTP/3

Abstract

   The QUIC transport protocol has several features that are desirable
   in a transport for HTTP.

Status of This Memo

   This is an Internet Standards Track document.

Table of Contents

   1.  Introduction  . . . . . . . . . . . . . . . . . . . . . . . .   4
     1.1.  Prior Versions of HTTP  . . . . . . . . . . . . . . . . .   4
   2.  HTTP/3 Protocol Overview  . . . . . . . . . . . . . . . . . .   5
   Appendix A.  Considerations for Transitioning from HTTP/2 . . . .  47
   Authors' Addresses  . . . . . . . . . . . . . . . . . . . . . . .  58

1.  Introduction

   HTTP semantics ([HTTP]) are used for a broad range of services on the
   Internet.

1.1.  Prior Versions of HTTP

   HTTP/1.1 ([HTTP/1.1]) uses whitespace-delimited text fields to convey
   HTTP messages.



Bishop                       Standards Track                    [Page 4]
\u{c}
RFC 9114                         HTTP/3                        June 2022


2.  HTTP/3 Protocol Overview

   HTTP/3 provides a transport for HTTP semantics using the QUIC
   transport protocol and an internal framing layer similar to HTTP/2.

   Once a client knows that an HTTP/3 server exists at a certain
   endpoint, it opens a QUIC connection.  Clients SHOULD support the
   most recent version and MUST

Bishop                       Standards Track                    [Page 5]
\u{c}
RFC 9114                         HTTP/3                        June 2022


   NOT use a version the server does not support.

   *  an item
      that wraps

2.1.  Document Organization

   The following sections provide a detailed overview.

Appendix A.  Considerations for Transitioning from HTTP/2

   HTTP/3 is strongly informed by HTTP/2.

A.1.  Streams

   HTTP/3 permits use of a larger number of streams (2^62-1) than
   HTTP/2.

      +-------+-------+
      | Frame | Value |
      +-------+-------+

Acknowledgments

   Robbie Shade and Mike Warres were the authors of draft-shade-quic-
   http2-mapping.

Index

   A C D

Author's Address

   Mike Bishop (editor)
   Akamai

   Email: mbishop@evequefou.be
";

    fn ids(sections: &[Section]) -> Vec<&str> {
        sections.iter().map(|s| s.id.as_str()).collect()
    }

    fn get<'a>(sections: &'a [Section], id: &str) -> &'a Section {
        sections
            .iter()
            .find(|s| s.id == id)
            .unwrap_or_else(|| unreachable!("no section {id}"))
    }

    #[test]
    fn sections_of_an_rfc() {
        let sections = parse(RFC);
        assert_eq!(
            ids(&sections),
            vec![
                "name-abstract",
                "name-status-of-this-memo",
                "name-table-of-contents",
                "section-1",
                "section-1.1",
                "section-2",
                "section-2.1",
                "appendix-A",
                "appendix-A.1",
                "name-acknowledgments",
                "name-index",
                "name-author-s-address",
            ]
        );
        let titles: Vec<&str> = sections.iter().map(|s| s.title.as_str()).collect();
        assert_eq!(
            titles,
            vec![
                "Abstract",
                "Status of This Memo",
                "Table of Contents",
                "Introduction",
                "Prior Versions of HTTP",
                "HTTP/3 Protocol Overview",
                "Document Organization",
                "Considerations for Transitioning from HTTP/2",
                "Streams",
                "Acknowledgments",
                "Index",
                "Author's Address",
            ]
        );
    }

    #[test]
    fn body_lines_are_dedented_and_trimmed() {
        let sections = parse(RFC);
        assert_eq!(
            get(&sections, "name-abstract").lines,
            vec![
                "The QUIC transport protocol has several features that are desirable",
                "in a transport for HTTP.",
            ]
        );
        assert_eq!(
            get(&sections, "appendix-A.1").lines,
            vec![
                "HTTP/3 permits use of a larger number of streams (2^62-1) than",
                "HTTP/2.",
                "",
                "   +-------+-------+",
                "   | Frame | Value |",
                "   +-------+-------+",
            ]
        );
        assert_eq!(
            get(&sections, "name-author-s-address").content(),
            "Mike Bishop (editor)\nAkamai\n\nEmail: mbishop@evequefou.be"
        );
    }

    #[test]
    fn table_of_contents_is_not_headings() {
        let sections = parse(RFC);
        let toc = get(&sections, "name-table-of-contents");
        assert_eq!(toc.lines.len(), 5);
        assert!(toc.lines[0].starts_with("1.  Introduction  . . ."));
        assert_eq!(sections.iter().filter(|s| s.id == "section-1").count(), 1);
    }

    #[test]
    fn page_furniture_is_removed() {
        let sections = parse(RFC);
        for section in &sections {
            for line in &section.lines {
                assert!(!line.contains("[Page"), "{line:?}");
                assert!(!line.starts_with("RFC 9114"), "{line:?}");
                assert!(!line.contains('\u{c}'), "{line:?}");
            }
        }
        // A page break between paragraphs: the section ends cleanly.
        assert_eq!(
            get(&sections, "section-1.1").lines,
            vec![
                "HTTP/1.1 ([HTTP/1.1]) uses whitespace-delimited text fields to convey",
                "HTTP messages.",
            ]
        );
        // A page break inside a sentence joins the paragraph back together.
        assert_eq!(
            get(&sections, "section-2").lines,
            vec![
                "HTTP/3 provides a transport for HTTP semantics using the QUIC",
                "transport protocol and an internal framing layer similar to HTTP/2.",
                "",
                "Once a client knows that an HTTP/3 server exists at a certain",
                "endpoint, it opens a QUIC connection.  Clients SHOULD support the",
                "most recent version and MUST",
                "NOT use a version the server does not support.",
                "",
                "*  an item",
                "   that wraps",
            ]
        );
    }

    #[test]
    fn page_break_after_a_sentence_keeps_a_paragraph_break() {
        let text = "\
1.  Intro

   First paragraph ends here.

Doe                          Standards Track                    [Page 1]
\u{c}
RFC 9999                     Example                           June 2024


   Second paragraph.
";
        let sections = parse(text);
        assert_eq!(
            sections[0].lines,
            vec!["First paragraph ends here.", "", "Second paragraph."]
        );
    }

    #[test]
    fn draft_headers_and_inline_form_feeds() {
        let text = "\
Network Working Group                                          A. Author
Internet-Draft                                                   Example
Intended status: Standards Track                            3 March 2024

1.  Introduction

   Text before the break that continues

Author                  Expires 4 September 2024                [Page 2]
\u{c}Internet-Draft                  Example Protocol              March 2024


   after the break.

2.  Next

   Done.
";
        let sections = parse(text);
        assert_eq!(ids(&sections), vec!["section-1", "section-2"]);
        assert_eq!(
            sections[0].lines,
            vec!["Text before the break that continues", "after the break."]
        );
        assert_eq!(sections[1].lines, vec!["Done."]);
    }

    #[test]
    fn header_after_form_feed_without_known_prefix() {
        let text = "\
1.  Intro

   Some text.
\u{c}
Draft                           Foo Protocol                    May 2020

   More text.
";
        let sections = parse(text);
        assert_eq!(sections[0].lines, vec!["Some text.", "", "More text."]);
    }

    #[test]
    fn heading_forms() {
        let text = "\
1.  One

2  Two without a dot

2.1 Single space

2.1.1.  Deep

3:  Colon

4.

   id only

10.1.2.  Not monotonic but after a blank line

Appendix A.  Letter with dot

Appendix B: Colon

APPENDIX C - Dash

Annex D

Appendix E.1.  Numbered in appendix

F.1.  Bare appendix subsection
";
        let sections = parse(text);
        let found: Vec<(&str, &str)> = sections
            .iter()
            .map(|s| (s.id.as_str(), s.title.as_str()))
            .collect();
        assert_eq!(
            found,
            vec![
                ("section-1", "One"),
                ("section-2", "Two without a dot"),
                ("section-2.1", "Single space"),
                ("section-2.1.1", "Deep"),
                ("section-3", "Colon"),
                ("section-4", ""),
                ("section-10.1.2", "Not monotonic but after a blank line"),
                ("appendix-A", "Letter with dot"),
                ("appendix-B", "Colon"),
                ("appendix-C", "Dash"),
                ("appendix-D", ""),
                ("appendix-E.1", "Numbered in appendix"),
                ("appendix-F.1", "Bare appendix subsection"),
            ]
        );
        assert_eq!(get(&sections, "section-4").lines, vec!["id only"]);
    }

    #[test]
    fn headings_without_a_blank_line_must_follow_the_previous_one() {
        let text = "\
1.  Introduction
   Text.
2.  Next follows 1
   More text.
7.  Does not follow 2
5000 is not a section
0.  Zero is not a section
2.1.A  Letters only first
";
        let sections = parse(text);
        assert_eq!(ids(&sections), vec!["section-1", "section-2"]);
        assert_eq!(
            sections[1].lines,
            vec![
                "   More text.",
                "7.  Does not follow 2",
                "5000 is not a section",
                "0.  Zero is not a section",
                "2.1.A  Letters only first",
            ]
        );

        // Without a previous heading, only `1` may start without a blank line.
        let sections = parse("header\n3.  Three\n   x\n");
        assert!(sections.is_empty());
        let sections = parse("header\n1.  One\n   x\n2.  Two\n");
        assert_eq!(ids(&sections), vec!["section-1", "section-2"]);
    }

    #[test]
    fn rejected_titles() {
        let text = "\
1.  Intro

2.  Entry ........................................ 4

2.  Entry . . . . . . . . . . . . . . . . . . . . 4

2.  ;semicolon

2.  ends with brace {

2.  too     much spacing

5.  | table | row |

2.  Real
";
        let sections = parse(text);
        assert_eq!(ids(&sections), vec!["section-1", "section-2"]);
        assert_eq!(sections[1].title, "Real");
    }

    #[test]
    fn table_rows_must_follow_in_order() {
        let text = "\
1.  Intro

2.  Good

7   | not | a heading |

3  | still | ok |
";
        let sections = parse(text);
        assert_eq!(ids(&sections), vec!["section-1", "section-2", "section-3"]);
        assert_eq!(sections[1].lines, vec!["7   | not | a heading |"]);
    }

    #[test]
    fn named_sections_need_blank_lines_around_them() {
        let text = "\
1.  Intro

   Text.
Abstract
   Not a heading.

   Abstract

Security Considerations

   None.

Acknowledgements

   Thanks.
";
        let sections = parse(text);
        assert_eq!(
            ids(&sections),
            vec![
                "section-1",
                "name-security-considerations",
                "name-acknowledgements"
            ]
        );
        assert_eq!(
            sections[0].lines,
            vec![
                "   Text.",
                "Abstract",
                "   Not a heading.",
                "",
                "   Abstract"
            ]
        );
    }

    #[test]
    fn wrapped_titles_are_joined() {
        let text = "\
1.  Intro

4.  A Very Long Section Title That Wraps Onto
    The Next Line

   Body.

Appendix A.  Another Long Title
             Continued

   Body.
";
        let sections = parse(text);
        assert_eq!(
            sections[1].title,
            "A Very Long Section Title That Wraps Onto The Next Line"
        );
        assert_eq!(sections[1].lines, vec!["Body."]);
        assert_eq!(sections[2].title, "Another Long Title Continued");
    }

    #[test]
    fn text_before_the_first_heading_is_no_section() {
        assert!(parse("Just a title\n\n   Some text.\n").is_empty());
        assert!(parse("").is_empty());
    }

    #[test]
    fn crlf_and_bom() {
        let text = "\u{feff}1.  Intro\r\n\r\n   Text.\r\n\r\n2.  Next\r\n   More.\r\n";
        let sections = parse(text);
        assert_eq!(ids(&sections), vec!["section-1", "section-2"]);
        assert_eq!(sections[0].lines, vec!["Text."]);
        assert_eq!(sections[1].lines, vec!["More."]);
    }

    #[test]
    fn blank_runs_collapse() {
        let sections = parse("1.  A\n\n\n   x\n\n\n\n   y\n   \n\t\n   z\n\n\n");
        assert_eq!(sections[0].lines, vec!["x", "", "y", "", "z"]);
    }

    #[test]
    fn slugs() {
        let slugify = super::super::markdown::slugify;
        assert_eq!(slugify("Authors' Addresses"), "authors-addresses");
        assert_eq!(slugify("Status of This Memo"), "status-of-this-memo");
        assert_eq!(slugify("  --test_-_cool"), "test-cool");
        assert_eq!(slugify("My Test String!!!1!1"), "my-test-string-1-1");
    }

    #[test]
    fn no_panic_on_odd_input() {
        let odd = [
            "\u{c}",
            "\u{c}\u{c}\u{c}",
            "\u{c}é",
            "é\u{c}",
            "1",
            "1.",
            "1:",
            "A.",
            "A.1",
            "Appendix",
            "Appendix ",
            "Appendix é",
            "Appendix É. Title",
            "Appendix A",
            "Appendix A.",
            "Annex 1",
            "1.é",
            "1. é",
            "1.\u{3000}全角",
            "[Page ]",
            "[Page 1",
            "x [Page é]",
            "RFC ",
            "RFC 1",
            "RFC é  x",
            "999999999999999999999.  Big",
            "1..2.  Empty part",
            ".1  Leading dot",
            "\r",
            "\n\n\n",
            "Abstract",
            "\nAbstract\n",
            "1.  T\n\u{c}\n",
            "1.  T\n    é\n",
        ];
        for text in odd {
            let _ = parse(text);
        }
        let sections = parse("Annex 1  One\n");
        assert_eq!(ids(&sections), vec!["appendix-1"]);
        let sections = parse("\nAbstract\n\n   x\n");
        assert_eq!(ids(&sections), vec!["name-abstract"]);
    }
}
