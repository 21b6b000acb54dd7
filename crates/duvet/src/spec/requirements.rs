//! Requirement sentences: the sentences of a section that contain an RFC 2119 keyword.
//!
//! This follows what `duvet extract` produces, with a few deliberate refinements:
//!
//! * **Keywords** are matched case-sensitively as whole words (`\b` boundaries, as Duvet's
//!   regexes): `MUST`, `MUST NOT`, `SHALL`, `SHALL NOT`, `REQUIRED` are [`Level::Must`];
//!   `SHOULD`, `SHOULD NOT`, `RECOMMENDED`, `NOT RECOMMENDED` are [`Level::Should`]; `MAY`,
//!   `OPTIONAL` are [`Level::May`].
//! * **Quoted keywords do not count.** Like Duvet, a keyword directly followed by a double quote
//!   (`"MUST"`, `"MUST NOT"`, also the typographic `”`) is a definition, not a requirement. So the
//!   BCP 14 boilerplate (`The key words "MUST", "MUST NOT", ... are to be interpreted as
//!   described in ...`) is not a requirement, exactly as in Duvet's extraction of RFC 9000.
//! * **Level.** A sentence's level is its strongest unquoted keyword (MUST > SHOULD > MAY), as
//!   Duvet merges the levels of the keywords of one quote (`The data ... MUST NOT change ...; an
//!   endpoint MAY treat ...` is a MUST).
//! * **Sentences.** A paragraph (lines up to a blank line) is split where `.`, `!` or `?` —
//!   possibly followed by closing quotes or brackets — is followed by whitespace or the end of
//!   the paragraph. Duvet splits only on `.`; we also split on `!`/`?`, and we do not split
//!   after common abbreviations (`e.g.`, `i.e.`, `cf.`, `vs.`, `viz.`, `Fig.`, `Sec.`, ...;
//!   `etc.` and `et al.` only end a sentence when the next word is capitalized). A dot inside a
//!   number or a section reference (`Section 10.2 says`) never ends a sentence because it is not
//!   followed by whitespace; `see Section 10.2.` followed by a new sentence does end one.
//! * **Lists.** A line starting with a bullet (`*`, `-`, `+`, `o`, `•` followed by whitespace)
//!   starts a new sentence, and so does a numbered item (`1.`, `2)`, `(a)`) at the start of a
//!   paragraph, after a line ending with `:`, or aligned with an earlier item of the same
//!   paragraph. The marker itself is not part of the sentence, so `*  An endpoint MUST ...`
//!   yields `An endpoint MUST ...` (Duvet keeps the marker; the text without it still occurs in
//!   the section, which is what quote matching needs). An item's wrapped lines belong to it.
//! * **Code fences** (```` ``` ````/`~~~`, Markdown) are not prose: their delimiter lines are
//!   dropped and each line inside is taken on its own.
//! * The text of every sentence is [`normalize`]d and is a substring of the normalized section
//!   content. Sentences that repeat within a section are reported once (at the first
//!   occurrence, with the strongest level), as Duvet deduplicates quotes per section.

use std::collections::HashMap;

use super::Section;
use crate::annotation::Level;

/// Collapse every run of whitespace (spaces, tabs, newlines, form feeds, ...) into one space and
/// trim both ends.
pub fn normalize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    normalize_into(&mut out, text);
    out
}

/// The lines of a text normalized as [`normalize`] of the lines joined by line breaks.
pub fn normalize_lines<'a>(lines: impl IntoIterator<Item = &'a str>) -> String {
    let mut out = String::new();
    for line in lines {
        normalize_into(&mut out, line);
    }
    out
}

/// Append the words of `text` to `out`, each after a space unless `out` is empty.
fn normalize_into(out: &mut String, text: &str) {
    if text.is_ascii() {
        // The whitespace `split_whitespace` knows in ASCII; each word copied at once.
        let space = |b: &u8| matches!(b, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r');
        let bytes = text.as_bytes();
        let mut at = 0;
        while at < bytes.len() {
            let rest = bytes.get(at..).unwrap_or_default();
            let start = at + rest.iter().position(|b| !space(b)).unwrap_or(rest.len());
            let rest = bytes.get(start..).unwrap_or_default();
            let end = start + rest.iter().position(space).unwrap_or(rest.len());
            if start < end {
                if !out.is_empty() {
                    out.push(' ');
                }
                // ASCII throughout: any byte is a character boundary.
                out.push_str(text.get(start..end).unwrap_or_default());
            }
            at = end;
        }
        return;
    }
    for word in text.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
}

/// The hash of a requirement text: the lowercase hex BLAKE3 hash of its [`normalize`]d form,
/// so texts differing only in whitespace share it. This was a requirement's identifier before
/// the same sentence in two sections needed two; identifiers now hash the place too
/// ([`crate::model::requirement_identifier`]), and this form is still accepted in lookups.
pub fn identifier(text: &str) -> String {
    blake3::hash(normalize(text).as_bytes())
        .to_hex()
        .to_string()
}

/// A sentence of a section that states a requirement.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RequirementSentence {
    /// The sentence, [`normalize`]d, without a leading list marker.
    pub text: String,
    /// The strongest RFC 2119 keyword of the sentence.
    pub level: Level,
}

impl RequirementSentence {
    /// The hash of the sentence's text ([`identifier`]).
    pub fn identifier(&self) -> String {
        identifier(&self.text)
    }
}

/// The requirement sentences of a section, in document order (see the module documentation
/// for how sentences are delimited and which keywords count).
pub fn extract(section: &Section) -> Vec<RequirementSentence> {
    let mut found: Vec<RequirementSentence> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    for unit in units(&section.lines) {
        for sentence in sentences(&unit) {
            let Some(level) = strongest_level(sentence) else {
                continue;
            };
            match index.get(sentence) {
                Some(&i) => {
                    if let Some(existing) = found.get_mut(i) {
                        existing.level = stronger(existing.level, level);
                    }
                }
                None => {
                    index.insert(sentence.to_string(), found.len());
                    found.push(RequirementSentence {
                        text: sentence.to_string(),
                        level,
                    });
                }
            }
        }
    }
    found
}

/// The strongest RFC 2119 keyword in `text` that is not a quoted definition, if any.
///
/// The same rules as [`extract`] apply: whole words, case-sensitive, a keyword directly
/// followed by `"` (or `”`) is ignored.
pub fn strongest_level(text: &str) -> Option<Level> {
    keyword_levels(text).into_iter().reduce(stronger)
}

/// How strong a level is: MUST > SHOULD > MAY.
fn strength(level: Level) -> u8 {
    match level {
        Level::Must => 3,
        Level::Should => 2,
        Level::May => 1,
    }
}

/// The stronger of two levels.
fn stronger(a: Level, b: Level) -> Level {
    if strength(b) > strength(a) { b } else { a }
}

/// Whether `c` belongs to a word, as the regex `\w` (letters, digits, underscore).
fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The words of `text` with their byte ranges.
fn words(text: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices() {
        match (is_word_char(c), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                spans.push((s, i));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        spans.push((s, text.len()));
    }
    spans
}

/// The levels of the unquoted keywords of `text`, in order.
fn keyword_levels(text: &str) -> Vec<Level> {
    let spans = words(text);
    let word = |i: usize| {
        spans
            .get(i)
            .and_then(|&(s, e)| text.get(s..e))
            .unwrap_or("")
    };
    // Whether word `i + 1` is `expected` and only whitespace separates it from word `i`.
    let followed_by = |i: usize, expected: &str| {
        let (Some(&(_, end)), Some(&(next_start, _))) = (spans.get(i), spans.get(i + 1)) else {
            return false;
        };
        let gap = text.get(end..next_start).unwrap_or("");
        !gap.is_empty() && gap.chars().all(char::is_whitespace) && word(i + 1) == expected
    };

    let mut levels = Vec::new();
    let mut i = 0;
    while i < spans.len() {
        let (level, consumed) = match word(i) {
            "MUST" | "SHALL" if followed_by(i, "NOT") => (Some(Level::Must), 2),
            "MUST" | "SHALL" | "REQUIRED" => (Some(Level::Must), 1),
            "SHOULD" if followed_by(i, "NOT") => (Some(Level::Should), 2),
            "SHOULD" | "RECOMMENDED" => (Some(Level::Should), 1),
            "NOT" if followed_by(i, "RECOMMENDED") => (Some(Level::Should), 2),
            "MAY" | "OPTIONAL" => (Some(Level::May), 1),
            _ => (None, 1),
        };
        if let Some(level) = level {
            let end = spans.get(i + consumed - 1).map_or(text.len(), |&(_, e)| e);
            let quoted = text
                .get(end..)
                .is_some_and(|rest| rest.starts_with(['"', '\u{201d}']));
            if !quoted {
                levels.push(level);
            }
        }
        i += consumed;
    }
    levels
}

/// Split a section's lines into units of prose — paragraphs and list items — each normalized.
fn units(lines: &[String]) -> Vec<String> {
    let mut units = Units::default();
    let mut fence: Option<(char, usize)> = None;
    for line in lines {
        if let Some((fence_char, fence_len)) = fence {
            if is_closing_fence(line, fence_char, fence_len) {
                fence = None;
            } else {
                units.flush();
                units.push_text(line);
                units.flush();
            }
            continue;
        }
        if let Some(open) = opening_fence(line) {
            units.flush();
            units.list_indent = None;
            fence = Some(open);
            continue;
        }
        let trimmed = line.trim_start();
        if trimmed.is_empty() {
            units.flush();
            units.list_indent = None;
            continue;
        }
        let indent = line.chars().count() - trimmed.chars().count();
        let ordered_ok = units.current.is_empty()
            || units.current.ends_with(':')
            || units.list_indent.is_some_and(|li| indent <= li);
        if let Some(rest) = strip_list_marker(trimmed, ordered_ok) {
            units.flush();
            units.list_indent = Some(indent);
            units.push_text(rest);
        } else {
            units.push_text(trimmed);
        }
    }
    units.flush();
    units.done
}

/// The units of prose collected so far and the one being collected.
#[derive(Default)]
struct Units {
    done: Vec<String>,
    current: String,
    /// Indentation of the marker of the latest list item of the current paragraph.
    list_indent: Option<usize>,
}

impl Units {
    /// Append text to the current unit, normalizing whitespace.
    fn push_text(&mut self, text: &str) {
        for word in text.split_whitespace() {
            if !self.current.is_empty() {
                self.current.push(' ');
            }
            self.current.push_str(word);
        }
    }

    /// End the current unit.
    fn flush(&mut self) {
        if !self.current.is_empty() {
            self.done.push(std::mem::take(&mut self.current));
        }
    }
}

/// The fence character and length when `line` opens a fenced code block.
fn opening_fence(line: &str) -> Option<(char, usize)> {
    let trimmed = line.trim_start();
    let c = trimmed.chars().next()?;
    if c != '`' && c != '~' {
        return None;
    }
    let len = trimmed.chars().take_while(|&x| x == c).count();
    (len >= 3).then_some((c, len))
}

/// Whether `line` closes a fenced code block opened with `len` times `c`.
fn is_closing_fence(line: &str, c: char, len: usize) -> bool {
    let trimmed = line.trim();
    let run = trimmed.chars().take_while(|&x| x == c).count();
    run >= len && trimmed.chars().all(|x| x == c)
}

/// The text after a list marker at the start of `text` (already trimmed at the start).
///
/// Bullets (`*`, `-`, `+`, `o`, `•`) are always markers; numbered markers (`1.`, `1)`, `(a)`,
/// `(iv)`) only when `ordered_ok`, since a wrapped line may start with a number. A marker must
/// be followed by whitespace and some text.
fn strip_list_marker(text: &str, ordered_ok: bool) -> Option<&str> {
    let first = text.chars().next()?;
    let marker_len = match first {
        '*' | '-' | '+' | 'o' | '\u{2022}' => first.len_utf8(),
        '0'..='9' if ordered_ok => {
            let digits = text.chars().take_while(char::is_ascii_digit).count();
            let after = text.get(digits..)?;
            if digits <= 3 && after.starts_with(['.', ')']) {
                digits + 1
            } else {
                return None;
            }
        }
        '(' if ordered_ok => {
            let inner = text
                .get(1..)?
                .chars()
                .take_while(char::is_ascii_alphanumeric)
                .count();
            let after = text.get(1 + inner..)?;
            if (1..=4).contains(&inner) && after.starts_with(')') {
                inner + 2
            } else {
                return None;
            }
        }
        _ => return None,
    };
    let rest = text.get(marker_len..)?;
    if !rest.starts_with(char::is_whitespace) {
        return None;
    }
    let rest = rest.trim_start();
    (!rest.is_empty()).then_some(rest)
}

/// Characters that may follow a sentence's final punctuation and still belong to it.
fn is_closer(c: char) -> bool {
    matches!(
        c,
        '"' | '\'' | ')' | ']' | '}' | '\u{201d}' | '\u{2019}' | '*' | '_'
    )
}

/// Characters that may precede a word (opening quotes and brackets, emphasis).
fn is_opener(c: char) -> bool {
    matches!(
        c,
        '"' | '\'' | '(' | '[' | '{' | '\u{201c}' | '\u{2018}' | '*' | '_'
    )
}

/// Abbreviations that never end a sentence.
const ABBREVIATIONS: &[&str] = &[
    "e.g.", "i.e.", "cf.", "vs.", "viz.", "fig.", "figs.", "sec.", "secs.", "eq.", "approx.",
    "resp.", "mr.", "mrs.", "ms.", "dr.", "prof.", "esp.", "incl.",
];

/// Abbreviations that end a sentence only when the next word is capitalized.
const SOFT_ABBREVIATIONS: &[&str] = &["etc.", "al."];

/// Whether the `.` ending at `end` (exclusive, after any closers) ends an abbreviation rather
/// than the sentence that started at `start`.
fn is_abbreviation(unit: &str, start: usize, end: usize) -> bool {
    let before = unit.get(start..end).unwrap_or("");
    let token = before
        .rsplit(char::is_whitespace)
        .next()
        .unwrap_or("")
        .trim_start_matches(is_opener)
        .trim_end_matches(is_closer)
        .to_lowercase();
    if ABBREVIATIONS.contains(&token.as_str()) {
        return true;
    }
    if SOFT_ABBREVIATIONS.contains(&token.as_str()) {
        let next = unit
            .get(end..)
            .unwrap_or("")
            .trim_start()
            .trim_start_matches(is_opener)
            .chars()
            .next();
        return !next.is_some_and(char::is_uppercase);
    }
    false
}

/// Split a normalized unit of prose into sentences (see the module documentation).
fn sentences(unit: &str) -> Vec<&str> {
    let chars: Vec<(usize, char)> = unit.char_indices().collect();
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while let Some(&(_, c)) = chars.get(i) {
        if !matches!(c, '.' | '!' | '?') {
            i += 1;
            continue;
        }
        // The run of terminators (`...`, `?!`), then closing quotes and brackets.
        let mut j = i + 1;
        while chars
            .get(j)
            .is_some_and(|&(_, x)| matches!(x, '.' | '!' | '?'))
        {
            j += 1;
        }
        let single_dot = c == '.' && j == i + 1;
        while chars.get(j).is_some_and(|&(_, x)| is_closer(x)) {
            j += 1;
        }
        let end = chars.get(j).map_or(unit.len(), |&(p, _)| p);
        let boundary = chars.get(j).is_none_or(|&(_, x)| x.is_whitespace());
        if boundary && !(single_dot && is_abbreviation(unit, start, end)) {
            if let Some(sentence) = unit.get(start..end).map(str::trim)
                && !sentence.is_empty()
            {
                out.push(sentence);
            }
            start = end;
        }
        i = j;
    }
    if let Some(rest) = unit.get(start..).map(str::trim)
        && !rest.is_empty()
    {
        out.push(rest);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn section(text: &str) -> Section {
        Section {
            id: "section-1".to_string(),
            title: "Test".to_string(),
            lines: text.lines().map(str::to_string).collect(),
            at: text
                .lines()
                .map(|l| super::super::offset_in(text, l))
                .collect(),
            title_at: 0,
        }
    }

    fn texts(section: &Section) -> Vec<(String, Level)> {
        extract(section)
            .into_iter()
            .map(|r| (r.text, r.level))
            .collect()
    }

    #[test]
    fn normalize_collapses_whitespace() {
        assert_eq!(normalize("  a\tb \n\n c\u{c} d  "), "a b c d");
        assert_eq!(normalize(""), "");
        assert_eq!(normalize(" \n\t "), "");
        assert_eq!(normalize("héllo\u{a0}wörld"), "héllo wörld");
        // The ASCII path and the general one agree on every ASCII whitespace.
        let general = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
        for text in [
            "\x0bvertical\x0btab\x0c feed\r\nend\x0b",
            " a  b\t\tc\x1fd\x00e ",
            "x",
            "\r\r",
        ] {
            assert_eq!(normalize(text), general(text), "{text:?}");
        }
        // Lines normalized one by one are the text they make normalized.
        let lines = ["  a b ", "", " \t", "c", "é\u{a0}f  ", "g"];
        assert_eq!(normalize_lines(lines), normalize(&lines.join("\n")));
        assert_eq!(normalize_lines(lines), "a b c é f g");
        assert_eq!(normalize_lines(["", " "]), "");
    }

    #[test]
    fn identifier_is_blake3_of_normalized_text() {
        let id = identifier("An endpoint\n   MUST NOT  reuse a stream ID.");
        assert_eq!(id, identifier("An endpoint MUST NOT reuse a stream ID."));
        assert_eq!(id.len(), 64);
        assert!(
            id.chars()
                .all(|c| c.is_ascii_hexdigit() && !c.is_uppercase())
        );
        assert_eq!(
            identifier(""),
            "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"
        );
        assert_ne!(id, identifier("An endpoint MUST reuse a stream ID."));
        let sentence = RequirementSentence {
            text: "An endpoint MUST NOT reuse a stream ID.".to_string(),
            level: Level::Must,
        };
        assert_eq!(sentence.identifier(), id);
    }

    #[test]
    fn keywords_and_levels() {
        assert_eq!(strongest_level("A MUST B."), Some(Level::Must));
        assert_eq!(strongest_level("A MUST NOT B."), Some(Level::Must));
        assert_eq!(strongest_level("A SHALL B."), Some(Level::Must));
        assert_eq!(strongest_level("A SHALL NOT B."), Some(Level::Must));
        assert_eq!(strongest_level("A is REQUIRED."), Some(Level::Must));
        assert_eq!(strongest_level("A SHOULD B."), Some(Level::Should));
        assert_eq!(strongest_level("A SHOULD NOT B."), Some(Level::Should));
        assert_eq!(strongest_level("A is RECOMMENDED."), Some(Level::Should));
        assert_eq!(
            strongest_level("A is NOT RECOMMENDED."),
            Some(Level::Should)
        );
        assert_eq!(strongest_level("A MAY B."), Some(Level::May));
        assert_eq!(strongest_level("A is OPTIONAL."), Some(Level::May));
        // Case-sensitive, whole words.
        assert_eq!(strongest_level("You must and may and should."), None);
        assert_eq!(strongest_level("MAYBE MUSTARD SHOULDER NOTED."), None);
        assert_eq!(strongest_level("MUST_NOT is a constant."), None);
        assert_eq!(strongest_level("NOT alone is nothing."), None);
        // Strongest wins, whatever the order.
        assert_eq!(
            strongest_level("It MAY do a; it SHOULD do b; it MUST do c."),
            Some(Level::Must)
        );
        assert_eq!(
            strongest_level("It MAY do a or SHOULD b."),
            Some(Level::Should)
        );
        // Emphasis and punctuation around keywords are fine.
        assert_eq!(
            strongest_level("It **MUST** do (MAY) it."),
            Some(Level::Must)
        );
    }

    #[test]
    fn quoted_keywords_are_definitions() {
        assert_eq!(strongest_level(r#"The word "MUST" means."#), None);
        assert_eq!(
            strongest_level(r#"The words "MUST NOT" and "NOT RECOMMENDED"."#),
            None
        );
        assert_eq!(strongest_level("Typographic “SHOULD” too."), None);
        // An unquoted keyword next to quoted ones still counts.
        assert_eq!(
            strongest_level(r#"A "MAY" clause MUST be honoured."#),
            Some(Level::Must)
        );
    }

    #[test]
    fn bcp14_boilerplate_is_not_a_requirement() {
        let s = section(
            r#"   The key words "MUST", "MUST NOT", "REQUIRED", "SHALL", "SHALL NOT",
   "SHOULD", "SHOULD NOT", "RECOMMENDED", "NOT RECOMMENDED", "MAY", and
   "OPTIONAL" in this document are to be interpreted as described in
   BCP 14 [RFC2119] [RFC8174] when, and only when, they appear in all
   capitals, as shown here.

   This document uses the variable-length integer encoding from
   [QUIC-TRANSPORT]."#,
        );
        assert!(extract(&s).is_empty());
    }

    #[test]
    fn rfc9000_stream_sentences() {
        // RFC 9000, Section 2.2 (as Duvet extracts it).
        let s = section(
            "   Endpoints MUST be able to deliver stream data to an application as an
   ordered byte stream.  Delivering an ordered byte stream requires that
   an endpoint buffer any data that is received out of order, up to the
   advertised flow control limit.

   QUIC makes no specific allowances for delivery of stream data out of
   order.  However, implementations MAY choose to offer the ability to
   deliver data out of order to a receiving application.

   An endpoint could receive data for a stream at the same stream offset
   multiple times.  Data that has already been received can be
   discarded.  The data at a given offset MUST NOT change if it is sent
   multiple times; an endpoint MAY treat receipt of different data at
   the same offset within a stream as a connection error of type
   PROTOCOL_VIOLATION.",
        );
        assert_eq!(
            texts(&s),
            vec![
                (
                    "Endpoints MUST be able to deliver stream data to an application as an ordered byte stream."
                        .to_string(),
                    Level::Must
                ),
                (
                    "However, implementations MAY choose to offer the ability to deliver data out of order to a receiving application."
                        .to_string(),
                    Level::May
                ),
                (
                    "The data at a given offset MUST NOT change if it is sent multiple times; an endpoint MAY treat receipt of different data at the same offset within a stream as a connection error of type PROTOCOL_VIOLATION."
                        .to_string(),
                    Level::Must
                ),
            ]
        );
    }

    #[test]
    fn paragraph_end_ends_a_sentence() {
        // RFC 9000, Section 7: the requirement ends with a colon and a list follows.
        let s = section(
            "   The cryptographic handshake MUST
   provide the following properties:

   *  authenticated key exchange, where

      -  a server is always authenticated,",
        );
        assert_eq!(
            texts(&s),
            vec![(
                "The cryptographic handshake MUST provide the following properties:".to_string(),
                Level::Must
            )]
        );
    }

    #[test]
    fn section_numbers_and_abbreviations() {
        let s = section(
            "   If either is received, the connection MUST be closed
   immediately with a connection error of type TRANSPORT_PARAMETER_ERROR
   if the offending value was received in a transport parameter or of
   type FRAME_ENCODING_ERROR if it was received in a frame; see
   Section 10.2.  Endpoints MUST NOT exceed the limit set by their peer.
   Senders MAY use any encoding, e.g. the one in Section 4.5, i.e. the
   default.  Clients SHOULD support RSA, ECDSA, etc. where possible.
   Servers MAY cache keys, etc. Clients MUST NOT.  Is this a question?  It
   MUST be!  Done.",
        );
        assert_eq!(
            texts(&s),
            vec![
                (
                    "If either is received, the connection MUST be closed immediately with a connection error of type TRANSPORT_PARAMETER_ERROR if the offending value was received in a transport parameter or of type FRAME_ENCODING_ERROR if it was received in a frame; see Section 10.2."
                        .to_string(),
                    Level::Must
                ),
                (
                    "Endpoints MUST NOT exceed the limit set by their peer.".to_string(),
                    Level::Must
                ),
                (
                    "Senders MAY use any encoding, e.g. the one in Section 4.5, i.e. the default."
                        .to_string(),
                    Level::May
                ),
                (
                    "Clients SHOULD support RSA, ECDSA, etc. where possible.".to_string(),
                    Level::Should
                ),
                ("Servers MAY cache keys, etc.".to_string(), Level::May),
                ("Clients MUST NOT.".to_string(), Level::Must),
                ("It MUST be!".to_string(), Level::Must),
            ]
        );
    }

    #[test]
    fn closing_quotes_and_parentheses_stay_with_the_sentence() {
        let s = section(
            r#"   A sender MUST NOT send any of these frames from a terminal state
   ("Data Recvd" or "Reset Recvd").  A receiver MAY send STOP_SENDING (see
   Section 3.5.)  Then it "MUST stop." Next one."#,
        );
        assert_eq!(
            texts(&s),
            vec![
                (
                    r#"A sender MUST NOT send any of these frames from a terminal state ("Data Recvd" or "Reset Recvd")."#
                        .to_string(),
                    Level::Must
                ),
                (
                    "A receiver MAY send STOP_SENDING (see Section 3.5.)".to_string(),
                    Level::May
                ),
                (r#"Then it "MUST stop.""#.to_string(), Level::Must),
            ]
        );
    }

    #[test]
    fn rfc_bullets_are_their_own_sentences() {
        let s = section(
            "   An endpoint MUST treat the following as a connection error of type
   TRANSPORT_PARAMETER_ERROR or PROTOCOL_VIOLATION:

   *  absence of the retry_source_connection_id transport parameter from
      the server after receiving a Retry packet,

   *  presence of the retry_source_connection_id transport parameter
      when no Retry packet was received, or

   o  A client MUST NOT send this
      parameter.
   o  A server MAY send it.  It SHOULD be short.
   -  Nothing here",
        );
        assert_eq!(
            texts(&s),
            vec![
                (
                    "An endpoint MUST treat the following as a connection error of type TRANSPORT_PARAMETER_ERROR or PROTOCOL_VIOLATION:"
                        .to_string(),
                    Level::Must
                ),
                ("A client MUST NOT send this parameter.".to_string(), Level::Must),
                ("A server MAY send it.".to_string(), Level::May),
                ("It SHOULD be short.".to_string(), Level::Should),
            ]
        );
    }

    #[test]
    fn numbered_items() {
        let s = section(
            "The client does the following:
1. It MUST send a hello.
2. It SHOULD wait for
   the reply
3. It MAY retry.

   (a)  The server MUST answer.

   as defined in Section
   4. Servers MAY stop.",
        );
        assert_eq!(
            texts(&s),
            vec![
                ("It MUST send a hello.".to_string(), Level::Must),
                ("It SHOULD wait for the reply".to_string(), Level::Should),
                ("It MAY retry.".to_string(), Level::May),
                ("The server MUST answer.".to_string(), Level::Must),
                // A wrapped number in running text is not a list marker.
                ("Servers MAY stop.".to_string(), Level::May),
            ]
        );
    }

    #[test]
    fn markdown_lists_and_code_fences() {
        let s = section(
            "Implementations:

- MUST validate input
- SHOULD log
  failures.
* MAY retry

```rust
// The caller MUST check this. It MAY panic.
let x = 1;
```

~~~
# MUST in a comment
~~~
After the fence, a sentence MUST count.",
        );
        assert_eq!(
            texts(&s),
            vec![
                ("MUST validate input".to_string(), Level::Must),
                ("SHOULD log failures.".to_string(), Level::Should),
                ("MAY retry".to_string(), Level::May),
                ("// The caller MUST check this.".to_string(), Level::Must),
                ("It MAY panic.".to_string(), Level::May),
                ("# MUST in a comment".to_string(), Level::Must),
                (
                    "After the fence, a sentence MUST count.".to_string(),
                    Level::Must
                ),
            ]
        );
    }

    #[test]
    fn duplicates_are_reported_once_with_the_strongest_level() {
        let s = section(
            "   Clients MAY retry.  Clients MAY retry.

   Clients   MAY
   retry.",
        );
        assert_eq!(
            texts(&s),
            vec![("Clients MAY retry.".to_string(), Level::May)]
        );
    }

    #[test]
    fn sentences_occur_in_the_normalized_content() {
        let s = section(
            "   *  (1)  A \"MUST\" here, and a MUST there.  e.g. etc. al.
   o  The client MUST NOT?! The server SHOULD…
   1) Three MAY. ...
   ```
   inside MUST
   ```
   tail MUST",
        );
        let content = normalize(&s.content());
        let found = extract(&s);
        assert!(!found.is_empty());
        for r in found {
            assert!(content.contains(&r.text), "{:?} not in {content:?}", r.text);
        }
    }

    #[test]
    fn no_panic_on_odd_input() {
        let odd = [
            "",
            ".",
            "...",
            "MUST",
            "MUST.",
            "\"MUST",
            "MUST\"",
            "NOT",
            "o",
            "o ",
            "*",
            "1.",
            "(",
            "(a",
            "()",
            "(é) MUST",
            "é. MUST ü.",
            "```",
            "~~~~\nMUST\n~~",
            "MUST NOT",
            "SHALL\u{a0}NOT",
            "日本語。MUST。",
            "e.g.",
            "etc.",
            "etc. MUST",
            "x.\u{201d} MUST",
        ];
        for text in odd {
            let s = section(text);
            let _ = extract(&s);
            let _ = strongest_level(text);
            let _ = sentences(&normalize(text));
        }
        // `etc.` before a capitalized word ends the sentence.
        assert_eq!(
            texts(&section("etc. MUST")),
            vec![("MUST".to_string(), Level::Must)]
        );
        assert_eq!(
            strongest_level("SHALL\u{a0}NOT"),
            Some(Level::Must),
            "non-breaking space between SHALL and NOT"
        );
    }
}
