//! duvet 0.4.3's reading of a specification's text into sections ([`sections`], the one
//! reader of specification text: the model's sections, [`crate::spec::Section`], and the
//! reports are made from it too), and requirement extraction exactly as 0.4.3 does it:
//! `duvet extract`, and what `duvet report` writes into `.duvet/requirements` before it reads
//! the project.
//!
//! 0.4.3's requirement files are an input of every report (each `[[spec]]` quote is a
//! requirement the report counts), so they must hold 0.4.3's text byte for byte: the
//! sections are read with 0.4.3's rules ([`ietf`], [`markdown`]), and a requirement is the
//! text around an RFC 2119 keyword out to the nearest sentence ends ([`features`]). This is
//! not the model's notion of a requirement sentence ([`crate::spec::requirements`]), which
//! splits lists and abbreviations better; the report counts what the files say.
//!
//! * **Keywords**: `MUST`, `MUST NOT`, `SHALL`, `SHALL NOT`, `REQUIRED` (level MUST),
//!   `SHOULD`, `SHOULD NOT`, `RECOMMENDED`, `NOT RECOMMENDED` (SHOULD), `MAY`, `OPTIONAL`
//!   (MAY), as whole words; one followed by `"` is a definition and ignored.
//! * **Extent**: backwards to just after the last `.` followed by a space, a tab or the end of
//!   its line (looking at earlier lines up to a blank line or a break), forwards to the first
//!   such `.` (looking at later lines likewise); lines are trimmed.
//! * **Duplicates** (the same text, whitespace aside) in a section count once, at their
//!   first place, with the strongest level; requirements are ordered by where they start.

mod annotations;
pub mod format;
mod ietf;
mod markdown;
mod patterns;

pub use annotations::toml_annotations;

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::fmt::Write as _;
use std::ops::Range;
use std::path::{Component, Path, PathBuf};
use std::sync::LazyLock;

pub use format::Format;
use format::offset_in;

/// A section as 0.4.3 reads it for extraction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section<'a> {
    pub id: String,
    pub title: String,
    /// The heading's text as written (the first line of a requirement file's comment).
    pub full_title: &'a str,
    /// Where `full_title` starts in the document (sections are ordered by it).
    pub title_at: usize,
    pub lines: Vec<Line<'a>>,
    /// The indexes of the blank lines of `lines` that stand where page furniture was
    /// dropped (IETF): 0.4.3 reads them as any blank line, the model may rejoin the
    /// paragraph around one ([`crate::spec::Section`]).
    pub page_breaks: Vec<usize>,
}

/// A [`Section`] kept apart from its document: its text as byte ranges of it (a parsed
/// specification keeps its text and these, [`crate::spec::parsed::ParsedSpec`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kept {
    pub id: String,
    pub title: String,
    pub full_title: Range<usize>,
    pub title_at: usize,
    /// Each line's bytes, `None` for a break.
    pub lines: Vec<Option<Range<usize>>>,
    pub page_breaks: Vec<usize>,
}

impl Kept {
    /// `section`, a section of `doc`, kept.
    pub fn of(doc: &str, section: &Section<'_>) -> Self {
        let range = |part: &str| {
            let at = offset_in(doc, part);
            at..at + part.len()
        };
        Self {
            id: section.id.clone(),
            title: section.title.clone(),
            full_title: range(section.full_title),
            title_at: section.title_at,
            lines: section
                .lines
                .iter()
                .map(|line| match line {
                    Line::Str(text) => Some(range(text)),
                    Line::Break => None,
                })
                .collect(),
            page_breaks: section.page_breaks.clone(),
        }
    }

    /// The section again, in `doc` (the document it was kept from).
    pub fn section<'a>(&self, doc: &'a str) -> Section<'a> {
        let text = |range: &Range<usize>| doc.get(range.clone()).unwrap_or_default();
        Section {
            id: self.id.clone(),
            title: self.title.clone(),
            full_title: text(&self.full_title),
            title_at: self.title_at,
            lines: self
                .lines
                .iter()
                .map(|line| match line {
                    Some(range) => Line::Str(text(range)),
                    None => Line::Break,
                })
                .collect(),
            page_breaks: self.page_breaks.clone(),
        }
    }
}

/// A line of a section: text as written, or a break between list items (Markdown).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Line<'a> {
    Str(&'a str),
    Break,
}

impl Line<'_> {
    fn is_blank(&self) -> bool {
        match self {
            Line::Str(s) => s.trim().is_empty(),
            Line::Break => true,
        }
    }
}

/// The sections of a document in `format`, in document order.
pub fn sections(doc: &str, format: Format) -> Vec<Section<'_>> {
    match format {
        Format::Ietf => ietf::sections(doc),
        Format::Markdown => markdown::sections(doc),
    }
}

/// The levels in 0.4.3's order (a quote found at two levels keeps the higher).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    May,
    Should,
    Must,
}

impl Level {
    pub fn name(self) -> &'static str {
        match self {
            Level::May => "MAY",
            Level::Should => "SHOULD",
            Level::Must => "MUST",
        }
    }
}

/// An extracted requirement: where it starts (line, byte), its level and its trimmed lines.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Feature<'a> {
    pub at: (usize, usize),
    pub level: Level,
    pub quote: Vec<&'a str>,
}

/// Quick test for a keyword before the expressions are matched: three capitals in a row
/// (every keyword has them; most lines have none), then one of the words.
fn may_hold_keyword(line: &str) -> bool {
    static WORDS: LazyLock<[memchr::memmem::Finder<'static>; 7]> = LazyLock::new(|| {
        [
            "MUST",
            "SHALL",
            "REQUIRED",
            "SHOULD",
            "RECOMMENDED",
            "MAY",
            "OPTIONAL",
        ]
        .map(memchr::memmem::Finder::new)
    });
    let mut run = 0;
    let capitals = line.bytes().any(|b| {
        run = if b.is_ascii_uppercase() { run + 1 } else { 0 };
        run >= 3
    });
    capitals && WORDS.iter().any(|w| w.find(line.as_bytes()).is_some())
}

/// The requirements of a section, ordered by where they start.
pub fn features<'a>(section: &Section<'a>) -> Vec<Feature<'a>> {
    let lines = &section.lines[..];
    let mut quotes: HashMap<String, Feature<'a>> = HashMap::new();
    for (n, line) in lines.iter().enumerate() {
        let Line::Str(text) = line else { continue };
        if !may_hold_keyword(text) {
            continue;
        }
        for (word, level) in &patterns::KEY_WORDS {
            for found in word.find_iter(text) {
                if text.get(found.clone()).is_some_and(|m| m.ends_with('"')) {
                    continue;
                }
                let start = find_open(lines, n, found.start);
                let end = find_close(lines, n, found.end);
                let quote = quote_of(lines, start, end);
                let key = key_of(&quote);
                match quotes.entry(key) {
                    Entry::Occupied(mut entry) => {
                        let feature = entry.get_mut();
                        feature.level = feature.level.max(*level);
                    }
                    Entry::Vacant(entry) => {
                        entry.insert(Feature {
                            at: start,
                            level: *level,
                            quote,
                        });
                    }
                }
            }
        }
    }
    let mut features: Vec<Feature<'a>> = quotes.into_values().collect();
    features.sort();
    features
}

/// The text two quotes of a section share when they are one requirement, as 0.4.3 compares
/// them: letters and digits kept, a run of whitespace kept as its first character when a
/// letter or digit follows it, whitespace before or after punctuation dropped.
fn key_of(quote: &[&str]) -> String {
    let mut out = String::new();
    // The pending separator: (is whitespace, the character).
    let mut pending: Option<(bool, char)> = None;
    for (i, line) in quote.iter().enumerate() {
        let chars = (i > 0).then_some('\n').into_iter().chain(line.chars());
        for c in chars {
            if c.is_alphanumeric() {
                if let Some((_, p)) = pending.take() {
                    out.push(p);
                }
                out.push(c);
            } else if c.is_whitespace() {
                if pending.is_none() && !out.is_empty() {
                    pending = Some((true, c));
                }
            } else {
                if let Some((false, p)) = pending {
                    out.push(p);
                }
                pending = Some((false, c));
            }
        }
    }
    if let Some((false, p)) = pending {
        out.push(p);
    }
    out
}

fn quote_of<'a>(lines: &[Line<'a>], start: (usize, usize), end: (usize, usize)) -> Vec<&'a str> {
    let mut quote = Vec::new();
    for (i, line) in lines.iter().enumerate().take(end.0 + 1).skip(start.0) {
        let Line::Str(mut text) = *line else { continue };
        if i == end.0 {
            text = text.get(..end.1).unwrap_or(text);
        }
        if i == start.0 {
            text = text.get(start.1..).unwrap_or_default();
        }
        let text = text.trim();
        if !text.is_empty() {
            quote.push(text);
        }
    }
    quote
}

fn find_open(lines: &[Line<'_>], n: usize, start: usize) -> (usize, usize) {
    if let Some(Line::Str(text)) = lines.get(n)
        && let Some(at) = text.get(..start).and_then(open_in)
    {
        return (n, at);
    }
    if n == 0 {
        return (n, 0);
    }
    let before = &lines[..n];
    let mut open = (before.len() - 1, 0);
    for (i, line) in before.iter().enumerate().rev() {
        let text = match line {
            Line::Str(text) if !text.is_empty() => text,
            _ => return open,
        };
        if let Some(at) = open_in(text) {
            return (i, at);
        }
        open = (i, 0);
    }
    open
}

/// Where a sentence starts in `line`: after its last `.` followed by a space, a tab or the
/// end; when the last `.` is followed by something else, after the first `.` of the text
/// before it that is followed by whitespace (0.4.3's rule).
fn open_in(line: &str) -> Option<usize> {
    let end = line.rfind('.')? + 1;
    match line[end..].chars().next() {
        Some(' ' | '\t') | None => Some(end),
        Some(_) => close_in(&line[..end - 1]),
    }
}

fn find_close(lines: &[Line<'_>], n: usize, end: usize) -> (usize, usize) {
    if let Some(Line::Str(text)) = lines.get(n)
        && let Some(at) = text.get(end..).and_then(close_in)
    {
        return (n, end + at);
    }
    let after = lines.get(n + 1..).unwrap_or_default();
    let mut close = (0, 0);
    for (i, line) in after.iter().enumerate() {
        let text = match line {
            Line::Str(text) if !text.is_empty() => text,
            _ => return (n + 1 + i, 0),
        };
        if let Some(at) = close_in(text) {
            return (n + 1 + i, at);
        }
        close = (i, text.len());
    }
    (n + 1 + close.0, close.1)
}

/// Where a sentence ends in `line`: after its first `.` followed by a space, a tab or the end.
fn close_in(line: &str) -> Option<usize> {
    let mut base = 0;
    let mut rest = line;
    loop {
        let end = rest.find('.')? + 1;
        match rest[end..].chars().next() {
            Some(' ' | '\t') | None => return Some(base + end),
            Some(c) => {
                base += end + c.len_utf8();
                rest = &rest[end + c.len_utf8()..];
            }
        }
    }
}

/// The slug of a title, as 0.4.3 makes Markdown ids and names IETF's unnumbered sections
/// (`name-<slug>`): ASCII letters lowercased, digits kept, Latin-1 accented letters folded
/// (`é` → `e`, `ß` → `ss`), other letters and digits kept lowercased, every other run of
/// characters a single `-`, none at either end (`What's New?` → `what-s-new`).
pub(crate) fn slugify(title: &str) -> String {
    let mut slug = String::with_capacity(title.len());
    let mut dash = true;
    for c in title.chars() {
        if let Some(folded) = fold_latin1(c) {
            slug.push_str(folded);
            dash = false;
        } else if c.is_alphanumeric() {
            slug.extend(c.to_lowercase());
            dash = false;
        } else if !dash {
            slug.push('-');
            dash = true;
        }
    }
    if slug.ends_with('-') {
        slug.pop();
    }
    slug
}

/// The ASCII spelling of a Latin-1 letter (`é` → `e`), as transliteration gives it.
fn fold_latin1(c: char) -> Option<&'static str> {
    Some(match c {
        'À'..='Å' | 'à'..='å' => "a",
        'Æ' | 'æ' => "ae",
        'Ç' | 'ç' => "c",
        'È'..='Ë' | 'è'..='ë' => "e",
        'Ì'..='Ï' | 'ì'..='ï' => "i",
        'Ð' | 'ð' => "d",
        'Ñ' | 'ñ' => "n",
        'Ò'..='Ö' | 'Ø' | 'ò'..='ö' | 'ø' => "o",
        'Ù'..='Ü' | 'ù'..='ü' => "u",
        'Ý' | 'ý' | 'ÿ' => "y",
        'Þ' | 'þ' => "th",
        'ß' => "ss",
        _ => return None,
    })
}

/// The file format `duvet extract` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Extension {
    Toml,
    Rust,
}

impl Extension {
    pub fn parse(ext: &str) -> Option<Self> {
        match ext {
            "toml" => Some(Self::Toml),
            "rs" => Some(Self::Rust),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Toml => "toml",
            Self::Rust => "rs",
        }
    }
}

/// A requirement file's text for one section, as 0.4.3 writes it (`target` is the
/// specification as written: a URL or a path).
pub fn render(
    ext: Extension,
    target: &str,
    section: &Section<'_>,
    features: &[Feature<'_>],
) -> String {
    let mut out = String::new();
    let body = section.lines.iter().filter_map(|l| match l {
        Line::Str(s) => Some(*s),
        Line::Break => None,
    });
    let id = &section.id;
    match ext {
        Extension::Toml => {
            let _ = write!(
                out,
                "target = \"{target}#{id}\"\n\n# {}\n#\n",
                section.full_title
            );
            for line in body {
                let _ = writeln!(out, "# {line}");
            }
            out.push('\n');
            for feature in features {
                let _ = write!(
                    out,
                    "[[spec]]\nlevel = \"{}\"\nquote = '''\n",
                    feature.level.name()
                );
                for line in &feature.quote {
                    let _ = writeln!(out, "{line}");
                }
                out.push_str("'''\n\n");
            }
        }
        Extension::Rust => {
            let _ = write!(
                out,
                "//! {target}#{id}\n//!\n//! {}\n//!\n",
                section.full_title
            );
            for line in body {
                let _ = writeln!(out, "//! {line}");
            }
            out.push('\n');
            for feature in features {
                let _ = write!(
                    out,
                    "//= {target}#{id}\n//= type=spec\n//= level={}\n",
                    feature.level.name()
                );
                for line in &feature.quote {
                    let _ = writeln!(out, "//# {line}");
                }
                out.push('\n');
            }
        }
    }
    out
}

/// The requirement files of a document: (file name, text) for every section with a
/// requirement, and the number of requirements.
pub fn files(
    doc: &str,
    format: Format,
    target: &str,
    ext: Extension,
) -> (Vec<(String, String)>, usize) {
    files_of(&sections(doc, format), target, ext)
}

/// The requirement files of a document read into `sections` ([`files`]).
pub fn files_of(
    sections: &[Section<'_>],
    target: &str,
    ext: Extension,
) -> (Vec<(String, String)>, usize) {
    let made = requirement_files(sections, target, ext, None);
    let total = made.iter().map(|file| file.requirements).sum();
    let files = made
        .into_iter()
        .map(|file| (file.name, file.text))
        .collect();
    (files, total)
}

/// A requirement file of a section.
#[derive(Debug)]
pub struct RequirementFile {
    /// `<section id>.<extension>`.
    pub name: String,
    pub text: String,
    /// How many requirements it lists.
    pub requirements: usize,
    /// Its annotations as the project's reading would parse them ([`toml_annotations`]),
    /// when asked for and known without parsing.
    pub annotations: Option<Vec<crate::annotation::Annotation>>,
}

/// The requirement files of the sections with requirements; with `dir` (where they go,
/// relative to the root), a TOML file's annotations too.
pub fn requirement_files(
    sections: &[Section<'_>],
    target: &str,
    ext: Extension,
    dir: Option<&Path>,
) -> Vec<RequirementFile> {
    sections
        .iter()
        .filter_map(|section| {
            let features = features(section);
            if features.is_empty() {
                return None;
            }
            let name = format!("{}.{}", section.id, ext.as_str());
            let annotations = match (ext, dir) {
                (Extension::Toml, Some(dir)) => {
                    toml_annotations(&dir.join(&name), target, section, &features)
                }
                _ => None,
            };
            Some(RequirementFile {
                text: render(ext, target, section, &features),
                requirements: features.len(),
                name,
                annotations,
            })
        })
        .collect()
}

/// The directory 0.4.3 writes a specification's requirement files into: `local` (the
/// specification's file: its path, or its place in the download cache) under `out` with its
/// extension removed — kept as it is when already inside `out`, otherwise relative to `base`
/// (the download cache) when inside it, and with `..`, `.` and root components dropped so it
/// never leaves `out`.
pub fn out_dir(out: &Path, base: Option<&Path>, local: &Path) -> PathBuf {
    let mut dir = match local.strip_prefix(out) {
        Ok(rest) => out.join(rest),
        Err(_) => {
            let rel = base
                .and_then(|b| local.strip_prefix(b).ok())
                .unwrap_or(local);
            let clean: PathBuf = rel
                .components()
                .filter_map(|c| match c {
                    Component::Normal(name) => Some(name),
                    _ => None,
                })
                .collect();
            out.join(clean)
        }
    };
    dir.set_extension("");
    dir
}

#[cfg(test)]
mod tests;
