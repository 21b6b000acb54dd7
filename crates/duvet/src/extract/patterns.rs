//! duvet 0.4.3's regular expressions for reading a specification, matched by hand: the
//! same matches and captures (the tests hold them against the expressions themselves), with
//! nothing compiled. Compiling them (Unicode `\b` and `\s` make large automata) was a sixth of
//! a small project's report.
//!
//! `\s` is Unicode's White_Space, which `char::is_whitespace` is too; `\b` is a Unicode word
//! boundary, whose word characters are ASCII's `[0-9A-Za-z_]` and, beyond ASCII, those of the
//! `regex` crate's `\w` (asked of it, compiled only if such a character borders a keyword).

use std::ops::Range;
use std::sync::LazyLock;

use regex::Regex;

use super::Level;

/// The forms of an appendix heading after its prefix (`Appendix `, …), in 0.4.3's order:
/// `^([A-Z])$`, `^([A-Z])\.$`, then `^([A-Z])SEP\s+(.*)` for the separators `.`, `:`, ` :`,
/// ` -`, ` --` and none. Each match: (the letter, the title trimmed).
pub(super) fn appendix_forms(candidate: &str) -> Vec<(&str, &str)> {
    let mut forms = Vec::new();
    if !candidate.starts_with(|c: char| c.is_ascii_uppercase()) {
        return forms;
    }
    let (id, after) = candidate.split_at(1);
    // Without a title, the title is the empty text after the letter (as the expressions'
    // absent capture is taken).
    let none = &candidate[1..1];
    if after.is_empty() || after == "." {
        forms.push((id, none));
    }
    for separator in [".", ":", " :", " -", " --", ""] {
        if let Some(rest) = after.strip_prefix(separator)
            && rest.starts_with(char::is_whitespace)
        {
            forms.push((id, rest.trim_start().trim_end()));
        }
    }
    forms
}

/// `^(([A-Z]\.?)?[0-9\.]+):?\s+(.*)`: (the id, the title trimmed).
pub(super) fn numbered(candidate: &str) -> Option<(&str, &str)> {
    let bytes = candidate.as_bytes();
    let start = usize::from(bytes.first().is_some_and(u8::is_ascii_uppercase));
    let run = bytes
        .get(start..)?
        .iter()
        .take_while(|b| b.is_ascii_digit() || **b == b'.')
        .count();
    if run == 0 {
        return None;
    }
    let (id, mut rest) = candidate.split_at(start + run);
    match rest.strip_prefix(':') {
        Some(after) if after.starts_with(char::is_whitespace) => rest = after,
        _ if rest.starts_with(char::is_whitespace) => {}
        _ => return None,
    }
    Some((id, rest.trim_start().trim_end()))
}

/// `^(([A-Z]\.)?[0-9\.]+)$`.
pub(super) fn id_only(candidate: &str) -> bool {
    let digits = |s: &[u8]| !s.is_empty() && s.iter().all(|b| b.is_ascii_digit() || *b == b'.');
    let bytes = candidate.as_bytes();
    digits(bytes)
        || (bytes.first().is_some_and(u8::is_ascii_uppercase)
            && bytes.get(1) == Some(&b'.')
            && digits(bytes.get(2..).unwrap_or_default()))
}

/// The length of the number `[1-9][0-9]*` starting `text` (0 when there is none).
fn number(text: &[u8]) -> usize {
    match text.first() {
        Some(b'1'..=b'9') => text.iter().take_while(|b| b.is_ascii_digit()).count(),
        _ => 0,
    }
}

/// `^RFC [1-9][0-9]*  ` or `^\[Page [1-9][0-9]*\]`: a page header's start.
pub(super) fn header_start(line: &str) -> bool {
    let followed = |rest: &str, by: &str| {
        let n = number(rest.as_bytes());
        n > 0 && rest.get(n..).is_some_and(|after| after.starts_with(by))
    };
    line.strip_prefix("RFC ")
        .is_some_and(|rest| followed(rest, "  "))
        || line
            .strip_prefix("[Page ")
            .is_some_and(|rest| followed(rest, "]"))
}

/// ` \[Page [1-9][0-9]*\]$`: a page footer's end.
pub(super) fn footer_end(line: &str) -> bool {
    let Some(rest) = line.strip_suffix(']') else {
        return false;
    };
    let digits = rest.bytes().rev().take_while(u8::is_ascii_digit).count();
    let (before, number_text) = rest.split_at(rest.len() - digits);
    number(number_text.as_bytes()) == digits && digits > 0 && before.ends_with(" [Page ")
}

/// The keywords in 0.4.3's order, each `\bWORD\b"?` with its optional part.
pub(super) const KEY_WORDS: [(Keyword, Level); 7] = [
    (Keyword::NotAfter("MUST"), Level::Must),
    (Keyword::NotAfter("SHALL"), Level::Must),
    (Keyword::Plain("REQUIRED"), Level::Must),
    (Keyword::NotAfter("SHOULD"), Level::Should),
    (Keyword::NotBefore("RECOMMENDED"), Level::Should),
    (Keyword::Plain("MAY"), Level::May),
    (Keyword::Plain("OPTIONAL"), Level::May),
];

/// A keyword's expression.
#[derive(Debug, Clone, Copy)]
pub(super) enum Keyword {
    /// `\bWORD\b"?`
    Plain(&'static str),
    /// `\bWORD( NOT)?\b"?`
    NotAfter(&'static str),
    /// `\b(NOT )?WORD\b"?`
    NotBefore(&'static str),
}

/// Whether `c` is a word character of the `regex` crate's Unicode `\w`.
fn is_word(c: char) -> bool {
    static WORD: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"^\w$").ok());
    if c.is_ascii() {
        return c.is_ascii_alphanumeric() || c == '_';
    }
    let mut buf = [0; 4];
    WORD.as_ref()
        .is_some_and(|word| word.is_match(c.encode_utf8(&mut buf)))
}

/// Whether a word character at `at` starts a word (no word character before it).
fn starts_word(text: &str, at: usize) -> bool {
    !text
        .get(..at)
        .and_then(|before| before.chars().next_back())
        .is_some_and(is_word)
}

/// Whether a word character before `at` ends a word (no word character at it).
fn ends_word(text: &str, at: usize) -> bool {
    !text
        .get(at..)
        .and_then(|after| after.chars().next())
        .is_some_and(is_word)
}

impl Keyword {
    /// The matches of the keyword's expression in `text`, left to right, none overlapping
    /// (as `Regex::find_iter`).
    pub(super) fn find_iter(self, text: &str) -> Vec<Range<usize>> {
        let word = match self {
            Self::Plain(word) | Self::NotAfter(word) | Self::NotBefore(word) => word,
        };
        let mut found = Vec::new();
        let mut from = 0;
        while let Some(at) = text.get(from..).and_then(|rest| rest.find(word)) {
            let start = from + at;
            let end = start + word.len();
            let range = match self {
                Self::Plain(_) => {
                    (starts_word(text, start) && ends_word(text, end)).then_some(start..end)
                }
                Self::NotAfter(_) => {
                    let not = end + " NOT".len();
                    if !starts_word(text, start) {
                        None
                    } else if text.get(end..).is_some_and(|r| r.starts_with(" NOT"))
                        && ends_word(text, not)
                    {
                        Some(start..not)
                    } else {
                        ends_word(text, end).then_some(start..end)
                    }
                }
                Self::NotBefore(_) => {
                    let not = start.checked_sub("NOT ".len()).filter(|&not| {
                        not >= from
                            && text.get(not..start) == Some("NOT ")
                            && starts_word(text, not)
                    });
                    if !ends_word(text, end) {
                        None
                    } else if let Some(not) = not {
                        Some(not..end)
                    } else {
                        starts_word(text, start).then_some(start..end)
                    }
                }
            };
            match range {
                Some(range) => {
                    let quoted =
                        usize::from(text.get(range.end..).is_some_and(|r| r.starts_with('"')));
                    found.push(range.start..range.end + quoted);
                    from = range.end + quoted;
                }
                // The words start with an ASCII letter: the next byte starts a character.
                None => from = start + 1,
            }
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The expressions as 0.4.3 writes them.
    fn regexes() -> (Vec<Regex>, Regex, Regex, Vec<Regex>, Regex, Vec<Regex>) {
        let re = |p: &str| Regex::new(p).unwrap();
        (
            [
                r"^([A-Z])$",
                r"^([A-Z])\.$",
                r"^([A-Z])\.\s+(.*)",
                r"^([A-Z]):\s+(.*)",
                r"^([A-Z]) :\s+(.*)",
                r"^([A-Z]) -\s+(.*)",
                r"^([A-Z]) --\s+(.*)",
                r"^([A-Z])\s+(.*)",
            ]
            .map(re)
            .to_vec(),
            re(r"^(([A-Z]\.?)?[0-9\.]+):?\s+(.*)"),
            re(r"^(([A-Z]\.)?[0-9\.]+)$"),
            [r"^RFC [1-9][0-9]*  ", r"^\[Page [1-9][0-9]*\]"]
                .map(re)
                .to_vec(),
            re(r" \[Page [1-9][0-9]*\]$"),
            [
                "MUST( NOT)?",
                "SHALL( NOT)?",
                "REQUIRED",
                "SHOULD( NOT)?",
                "(NOT )?RECOMMENDED",
                "MAY",
                "OPTIONAL",
            ]
            .map(|w| re(&format!("\\b{w}\\b\"?")))
            .to_vec(),
        )
    }

    /// Lines to hold the two against: hand-picked, and many made of the pieces that matter.
    fn lines() -> Vec<String> {
        let mut lines: Vec<String> = [
            "",
            "A",
            "A.",
            "A..",
            "A.1",
            "A.1.",
            "A. Title",
            "A.  Title  ",
            "A:  T",
            "A:T",
            "A :  T",
            "A -  T",
            "A --  T",
            "A --T",
            "A  T",
            "A\tT",
            "A\u{a0}T",
            "A\u{3000}全角",
            "a. x",
            "AB. x",
            "1",
            "1.",
            "1.2.3",
            "1.2.3.  Title",
            "1:  T",
            "1: ",
            "1:",
            "1 ",
            "1  ",
            ". x",
            ".",
            "..",
            "A1 x",
            "A.1:  x",
            "A.:  x",
            "A.: x",
            "Z9.9 y",
            "9a b",
            "RFC 9114  HTTP/3",
            "RFC 0114  x",
            "RFC 9114 x",
            "RFC   x",
            "RFC 1  ",
            "RFC 12",
            "[Page 1]",
            "[Page 01]",
            "[Page 12] x",
            "[Page ]",
            "[Page 1",
            "x [Page 4]",
            "x [Page 04]",
            "x[Page 4]",
            "x [Page 4] ",
            "x  [Page 45]",
            " [Page 9]",
            "[Page 9]",
            "MUST",
            "MUST NOT",
            "MUST NOTE",
            "MUSTNOT",
            "xMUST",
            "_MUST",
            "MUST_",
            "MUST\"",
            "MUST NOT\"",
            "\"MUST\"",
            "MUST \"x\"",
            "éMUST",
            "MUSTé",
            "MUST NOTé",
            "MUST\u{301}",
            "\u{301}MUST",
            "MUST ² x",
            "²MUST",
            "MUST‿",
            "MUST\u{200d}",
            "NOT RECOMMENDED",
            "CANNOT RECOMMENDED",
            "NOT RECOMMENDEDx",
            "NOTRECOMMENDED",
            "xNOT RECOMMENDED",
            "NOT NOT RECOMMENDED",
            "RECOMMENDED NOT RECOMMENDED\"",
            "MAY MAY MAYBE MAY",
            "SHALL NOT, SHOULD NOT; REQUIRED. OPTIONAL",
            "MUST NOT NOT",
            "MUSTMUST MUST",
            "The MUST (NOT) x",
            "SHOULD NOT\" y SHOULD",
            "NOT RECOMMENDED NOT RECOMMENDED",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let pieces = [
            "A",
            "Z",
            "a",
            "1",
            "0",
            "9",
            ".",
            ":",
            " ",
            "  ",
            "\t",
            "-",
            "--",
            "]",
            "[Page ",
            "RFC ",
            "MUST",
            "NOT",
            " NOT",
            "NOT ",
            "RECOMMENDED",
            "MAY",
            "\"",
            "é",
            "_",
            "\u{301}",
            "x",
        ];
        // Page headers and footers, right and nearly right.
        for start in ["RFC ", "[Page ", "x [Page ", " [Page ", "x[Page ", "RFC  "] {
            for number in ["", "0", "1", "12", "07", "9x", "٣"] {
                for end in ["", "]", "  ", " ", "] ", "]x", "  x", "]]"] {
                    lines.push(format!("{start}{number}{end}"));
                }
            }
        }
        // Lines of up to five pieces from a deterministic walk.
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..20_000 {
            let mut line = String::new();
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let count = 1 + (state % 5) as usize;
            let mut s = state;
            for _ in 0..count {
                line.push_str(pieces[(s % pieces.len() as u64) as usize]);
                s /= pieces.len() as u64;
            }
            lines.push(line);
        }
        lines
    }

    #[test]
    fn the_matchers_agree_with_0_4_3_s_expressions() {
        let (appendix, numbered_re, id_only_re, header, footer, keywords) = regexes();
        // How many lines each expression matches: the lines must try every one.
        let mut matched = [0usize; 6];
        for line in lines() {
            let line = line.as_str();
            let expected: Vec<(&str, &str)> = appendix
                .iter()
                .filter_map(|p| {
                    let caps = p.captures(line)?;
                    let id = caps.get(1)?.as_str();
                    let title = caps.get(2).map_or("", |t| t.as_str().trim());
                    Some((id, title))
                })
                .collect();
            assert_eq!(appendix_forms(line), expected, "{line:?}");
            matched[0] += usize::from(!expected.is_empty());
            matched[1] += usize::from(numbered_re.is_match(line));
            matched[2] += usize::from(id_only_re.is_match(line));
            matched[3] += usize::from(header.iter().any(|p| p.is_match(line)));
            matched[4] += usize::from(footer.is_match(line));
            matched[5] += usize::from(keywords.iter().any(|p| p.is_match(line)));
            let expected = numbered_re
                .captures(line)
                .and_then(|caps| Some((caps.get(1)?.as_str(), caps.get(3)?.as_str().trim())));
            assert_eq!(numbered(line), expected, "{line:?}");
            if let (Some((id, title)), Some(caps)) = (numbered(line), numbered_re.captures(line)) {
                // The same slices of the line (a title's place names its line).
                assert_eq!(id.as_ptr(), caps.get(1).unwrap().as_str().as_ptr());
                assert_eq!(
                    title.as_ptr(),
                    caps.get(3).unwrap().as_str().trim().as_ptr(),
                    "{line:?}"
                );
            }
            assert_eq!(id_only(line), id_only_re.is_match(line), "{line:?}");
            assert_eq!(
                header_start(line),
                header.iter().any(|p| p.is_match(line)),
                "{line:?}"
            );
            assert_eq!(footer_end(line), footer.is_match(line), "{line:?}");
            for ((keyword, _), re) in KEY_WORDS.iter().zip(&keywords) {
                let expected: Vec<Range<usize>> = re.find_iter(line).map(|m| m.range()).collect();
                assert_eq!(keyword.find_iter(line), expected, "{keyword:?} in {line:?}");
            }
        }
        assert!(matched.iter().all(|&n| n >= 5), "{matched:?}");
    }

    #[test]
    fn appendix_titles_are_the_same_slices_as_the_captures() {
        let (appendix, ..) = regexes();
        for line in ["A", "A.", "A.  Title  ", "A --   ", "B  x"] {
            let expected: Vec<*const u8> = appendix
                .iter()
                .filter_map(|p| {
                    let caps = p.captures(line)?;
                    let id = caps.get(1)?.as_str();
                    Some(
                        caps.get(2)
                            .map_or(id[id.len()..].as_ptr(), |t| t.as_str().trim().as_ptr()),
                    )
                })
                .collect();
            let ours: Vec<*const u8> = appendix_forms(line)
                .iter()
                .map(|(_, t)| t.as_ptr())
                .collect();
            assert_eq!(ours, expected, "{line:?}");
        }
    }
}
