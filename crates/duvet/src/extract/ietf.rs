//! An IETF text's sections as duvet 0.4.3 reads them: every physical line
//! kept as written (indentation included), blank lines as empty lines, page furniture
//! dropped, and each section's lines cut where 0.4.3 cuts them.
//!
//! This is the one reading of an IETF text: extraction, the reports and the model
//! ([`crate::spec::Section`], which strips the common indentation and rejoins paragraphs cut
//! by a page) all start from it. The rules:
//!
//! * lines are split as `str::lines` does (a byte order mark is dropped from the first); a
//!   line that is a lone form feed is a page break, an empty or whitespace-only line a line
//!   break;
//! * a heading is a line of an id (`4.`, `4.5`, `A.1.`, an optional `:`) and a title, or
//!   `Appendix A.  Title` (also `APPENDIX`, `Annex`, the separators `:`, ` :`, ` -`, ` --`),
//!   or a line holding only an id; a candidate is refused when its title looks like a table
//!   of contents (`.....`, `. . .`), is odd (starts with `;`, ends with `{`, `[`, `(`, `;`,
//!   holds five spaces in a row), or its id is malformed (a part above 199, a leading 0, a
//!   letter after the first part); after a line break it is a heading, otherwise (or when
//!   its title holds a `|` before the last ones) its id must follow the previous heading's
//!   (the first must be `1`);
//! * an unindented line starting `RFC N  ` or `[Page N]`, or ending ` [Page N]` without
//!   trailing whitespace, is a page header or footer, and the line after a page break is
//!   dropped (it is the next page's header);
//! * a line that is exactly one of 0.4.3's section names (`Abstract`, `References`, …)
//!   between two line breaks starts a section `name-<slug>`;
//! * consecutive breaks count once; a section's leading and trailing blank lines are
//!   dropped; a repeated id keeps the later section (0.4.3 keys sections by id);
//! * a blank line kept where page furniture was dropped is noted ([`Section::page_breaks`]):
//!   0.4.3 ignores it, the model rejoins the paragraph a page cut.

use std::collections::HashMap;

use super::{Line, Section, patterns, slugify};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Break {
    Line,
    Page,
}

#[derive(Debug, Clone, Copy)]
enum Token<'a> {
    Section {
        id: &'a str,
        title: &'a str,
        appendix: bool,
    },
    Named(&'a str),
    /// A break, with the (empty) start of its line.
    Break(Break, &'a str),
    Content(&'a str),
    Header,
}

/// The names that start an unnumbered section (0.4.3's list, exactly).
const NAMED: [&str; 25] = [
    "Acknowledgments",
    "Acknowledgement",
    "Acknowledgements",
    "Index",
    "Author's Address",
    "Authors' Addresses",
    "Normative References",
    "Informative References",
    "References",
    "REFERENCES",
    "AUTHORS' ADDRESSES",
    "Full Copyright Statement",
    "Security Considerations",
    "Intellectual Property",
    "Intellectual Property Statement",
    "Working Group Information",
    "Contributors",
    "Editors' Addresses",
    "IANA Considerations",
    "Abstract",
    "Status of this Memo",
    "Status of This Memo",
    "Copyright Notice",
    "Table of Contents",
    "Appendix",
];

/// The sections of `doc`, in document order.
pub fn sections(doc: &str) -> Vec<Section<'_>> {
    let tokens = lines(doc);
    let tokens = headings(tokens);
    let tokens = headers(tokens);
    let tokens = named(tokens);
    let tokens = filter_breaks(tokens);
    build(doc, tokens)
}

fn lines(doc: &str) -> Vec<Token<'_>> {
    // Sized once: a specification has thousands of lines.
    let mut tokens = Vec::with_capacity(memchr::memchr_iter(b'\n', doc.as_bytes()).count() + 1);
    tokens.extend(doc.lines().enumerate().map(|(n, line)| {
        let line = if n == 0 {
            line.trim_start_matches('\u{feff}')
        } else {
            line
        };
        if line == "\u{c}" {
            Token::Break(Break::Page, &line[..0])
        } else if line.trim().is_empty() {
            Token::Break(Break::Line, &line[..0])
        } else {
            Token::Content(line)
        }
    }));
    tokens
}

/// Tokens rewritten in place: each pass writes what it keeps over what it has read, never
/// ahead of it (no pass makes more tokens than it reads), so a pass allocates nothing.
struct InPlace<'a> {
    tokens: Vec<Token<'a>>,
    kept: usize,
}

impl<'a> InPlace<'a> {
    fn new(tokens: Vec<Token<'a>>) -> Self {
        Self { tokens, kept: 0 }
    }

    /// The token at `i` (read before anything is written over it).
    fn get(&self, i: usize) -> Option<Token<'a>> {
        self.tokens.get(i).copied()
    }

    fn push(&mut self, token: Token<'a>) {
        if let Some(slot) = self.tokens.get_mut(self.kept) {
            *slot = token;
            self.kept += 1;
        }
    }

    fn last_mut(&mut self) -> Option<&mut Token<'a>> {
        let last = self.kept.checked_sub(1)?;
        self.tokens.get_mut(last)
    }

    fn finish(mut self) -> Vec<Token<'a>> {
        self.tokens.truncate(self.kept);
        self.tokens
    }
}

/// The heading state: whether the previous token was a break, and the previous heading's id.
#[derive(Default)]
struct Headings<'a> {
    was_break: bool,
    previous: Option<&'a str>,
}

fn headings(tokens: Vec<Token<'_>>) -> Vec<Token<'_>> {
    let mut state = Headings::default();
    tokens
        .into_iter()
        .map(|token| {
            let token = match token {
                Token::Content(line) => state.classify(line),
                other => other,
            };
            state.was_break = matches!(token, Token::Break(..));
            if let Token::Section { id, .. } = token {
                state.previous = Some(id);
            }
            token
        })
        .collect()
}

impl<'a> Headings<'a> {
    fn classify(&self, line: &'a str) -> Token<'a> {
        let prefixed = ["Appendix ", "APPENDIX ", "Annex "]
            .iter()
            .find_map(|p| line.strip_prefix(p));
        let candidate = prefixed.unwrap_or(line);
        let appendix = prefixed.is_some();
        if appendix {
            for (id, title) in patterns::appendix_forms(candidate) {
                if self.accepts(id, title) {
                    return section(id, title, true);
                }
            }
        }
        // Both patterns below start with a capital, a digit or a dot: most lines (indented
        // body text) are passed over without running them.
        if !candidate
            .starts_with(|c: char| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '.')
        {
            return Token::Content(line);
        }
        if let Some((id, title)) = patterns::numbered(candidate) {
            let id = id.trim_end_matches('.');
            if self.accepts(id, title) {
                return section(id, title, appendix);
            }
        }
        if patterns::id_only(candidate) {
            let id = candidate.trim_end_matches('.');
            if self.accepts(id, "") {
                return section(id, &id[id.len()..], appendix);
            }
        }
        Token::Content(line)
    }

    fn accepts(&self, id: &str, title: &str) -> bool {
        let toc = title.contains(".....") || title.contains(". . .") || title.contains(" . . ");
        let odd = title.starts_with(';')
            || title.ends_with(['{', '[', '(', ';'])
            || title.trim().contains("     ");
        if toc || odd {
            return false;
        }
        let check_order = title.trim_end_matches('|').contains('|');
        if parts(id).iter().any(Option::is_none) {
            return false;
        }
        if self.was_break && !check_order {
            return true;
        }
        match self.previous {
            None => ["1", "1.0"].contains(&id),
            Some(previous) => follows(previous, id),
        }
    }
}

fn section<'a>(id: &'a str, title: &'a str, force_appendix: bool) -> Token<'a> {
    Token::Section {
        id,
        title,
        appendix: force_appendix || !id.starts_with(char::is_numeric),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    Num(u8),
    Letter(char),
}

impl Part {
    fn parse(s: &str) -> Option<Self> {
        if let Ok(n) = s.parse::<u8>() {
            return (n <= 199).then_some(Self::Num(n));
        }
        let mut chars = s.chars();
        match (chars.next(), chars.next()) {
            (Some(c), None) if c.is_ascii_uppercase() && s.len() == 1 => Some(Self::Letter(c)),
            _ => None,
        }
    }

    fn is_next(self, other: Self) -> bool {
        match (self, other) {
            (Self::Num(a), Self::Num(b)) => a as usize + 1 == b as usize,
            (Self::Num(_), Self::Letter(b)) => b == 'A',
            (Self::Letter(_), Self::Num(_)) => false,
            (Self::Letter(a), Self::Letter(b)) => a as u32 + 1 == b as u32,
        }
    }
}

/// An id's parts (`None` for a malformed one): an optional letter prefix, then the numbers
/// between dots; the first part may not be 0, the later ones must be numbers.
fn parts(id: &str) -> Vec<Option<Part>> {
    let digit = id
        .char_indices()
        .find(|(_, c)| c.is_ascii_digit())
        .map_or(0, |(i, _)| i);
    let (prefix, digits) = id.split_at(digit);
    let prefix = (!prefix.is_empty()).then(|| Part::parse(prefix.trim_end_matches('.')));
    prefix
        .into_iter()
        .chain(digits.split('.').map(Part::parse))
        .enumerate()
        .map(|(i, part)| {
            let part = part?;
            match (i, part) {
                (0, Part::Num(0)) => None,
                (1.., Part::Letter(_)) => None,
                _ => Some(part),
            }
        })
        .collect()
}

/// Whether heading `current` may follow heading `previous` (0.4.3's order check).
fn follows(previous: &str, current: &str) -> bool {
    if previous == current {
        return false;
    }
    for (i, (p, c)) in parts(previous).into_iter().zip(parts(current)).enumerate() {
        let (Some(p), Some(c)) = (p, c) else {
            return false;
        };
        if i > 0 && !matches!(c, Part::Num(_)) {
            return false;
        }
        if p.is_next(c) {
            break;
        }
        if p != c {
            return false;
        }
    }
    true
}

fn headers(tokens: Vec<Token<'_>>) -> Vec<Token<'_>> {
    tokens
        .into_iter()
        .map(|token| match token {
            Token::Content(line) => {
                let unindented = line.trim_start().len() == line.len();
                if unindented && patterns::header_start(line) {
                    return Token::Header;
                }
                let untrailed = line.trim_end().len() == line.len();
                if untrailed && patterns::footer_end(line) {
                    return Token::Header;
                }
                token
            }
            other => other,
        })
        .collect()
}

/// Named sections: a line of [`NAMED`] between two line breaks.
fn named(tokens: Vec<Token<'_>>) -> Vec<Token<'_>> {
    enum State<'a> {
        Init,
        AfterBreak(Token<'a>),
        Name(Token<'a>, &'a str),
    }
    let is_line_break = |t: &Token<'_>| matches!(t, Token::Break(Break::Line, _));
    let mut out = InPlace::new(tokens);
    let mut state = State::Init;
    let mut i = 0;
    while let Some(token) = out.get(i) {
        i += 1;
        state = match (state, token) {
            (State::Init, token) if is_line_break(&token) => State::AfterBreak(token),
            (State::Init, token) => {
                out.push(token);
                State::Init
            }
            (State::AfterBreak(b), Token::Content(line)) if NAMED.contains(&line) => {
                State::Name(b, line)
            }
            (State::AfterBreak(b), token) if is_line_break(&token) => {
                out.push(b);
                State::AfterBreak(token)
            }
            (State::AfterBreak(b), token) => {
                out.push(b);
                out.push(token);
                State::Init
            }
            (State::Name(b, name), token) => {
                out.push(b);
                out.push(if is_line_break(&token) {
                    Token::Named(name)
                } else {
                    Token::Content(name)
                });
                out.push(token);
                State::Init
            }
        };
    }
    match state {
        State::Init => {}
        State::AfterBreak(b) => out.push(b),
        State::Name(b, name) => {
            out.push(b);
            out.push(Token::Content(name));
        }
    }
    out.finish()
}

/// Count a run of breaks once, drop headers and the line after a page break. A break kept
/// before page furniture stands for the page break (its kind becomes [`Break::Page`]): the
/// model rejoins a paragraph a page cut ([`crate::spec::Section`]).
fn filter_breaks(tokens: Vec<Token<'_>>) -> Vec<Token<'_>> {
    let mut last: Option<Break> = None;
    let mut out = InPlace::new(tokens);
    // Marks the break just kept, if the last token kept is one, as a page break.
    let page = |out: &mut InPlace<'_>| {
        if let Some(Token::Break(kind, _)) = out.last_mut() {
            *kind = Break::Page;
        }
    };
    let mut i = 0;
    while let Some(token) = out.get(i) {
        i += 1;
        let previous = last.take();
        let keep = match token {
            Token::Section { .. } | Token::Named(_) => true,
            Token::Break(kind, _) => {
                last = Some(kind);
                if previous.is_some() && kind == Break::Page {
                    page(&mut out);
                }
                previous.is_none()
            }
            Token::Content(_) => {
                if previous == Some(Break::Page) {
                    last = Some(Break::Line);
                    page(&mut out);
                    false
                } else {
                    true
                }
            }
            Token::Header => {
                last = Some(Break::Line);
                page(&mut out);
                false
            }
        };
        if keep {
            out.push(token);
        }
    }
    out.finish()
}

fn build<'a>(doc: &'a str, tokens: Vec<Token<'a>>) -> Vec<Section<'a>> {
    let mut sections: Vec<Section<'a>> = Vec::new();
    let mut open: Option<Section<'a>> = None;
    let close = |open: &mut Option<Section<'a>>, sections: &mut Vec<Section<'a>>| {
        if let Some(mut section) = open.take() {
            while section.lines.last().is_some_and(Line::is_blank) {
                section.lines.pop();
            }
            let len = section.lines.len();
            section.page_breaks.retain(|&i| i < len);
            sections.push(section);
        }
    };
    for token in tokens {
        let (id, title) = match token {
            Token::Section {
                id,
                title,
                appendix,
            } => {
                let kind = if appendix { "appendix" } else { "section" };
                (format!("{kind}-{id}"), title)
            }
            Token::Named(title) => (format!("name-{}", slugify(title)), title),
            Token::Break(kind, start) => {
                if let Some(section) = open.as_mut()
                    && !section.lines.is_empty()
                {
                    if kind == Break::Page {
                        section.page_breaks.push(section.lines.len());
                    }
                    section.lines.push(Line::Str(start));
                }
                continue;
            }
            Token::Content(line) => {
                if let Some(section) = open.as_mut() {
                    section.lines.push(Line::Str(line));
                }
                continue;
            }
            Token::Header => continue,
        };
        close(&mut open, &mut sections);
        open = Some(Section {
            id,
            title: title.to_string(),
            full_title: title,
            title_at: super::format::offset_in(doc, title),
            lines: Vec::new(),
            page_breaks: Vec::new(),
        });
    }
    close(&mut open, &mut sections);
    // 0.4.3 keys sections by id: a repeated id keeps the later section.
    let mut last: HashMap<&str, usize> = HashMap::new();
    for (i, section) in sections.iter().enumerate() {
        last.insert(section.id.as_str(), i);
    }
    let keep: Vec<bool> = (0..sections.len())
        .map(|i| last.get(sections[i].id.as_str()) == Some(&i))
        .collect();
    let mut i = 0;
    sections.retain(|_| {
        i += 1;
        keep[i - 1]
    });
    sections
}
