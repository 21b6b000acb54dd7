//! Requirement files: the TOML files `duvet extract` writes under `.duvet/requirements/` (and
//! the hand-written ones under `.duvet/todos/` and `.duvet/exceptions/`), e.g.
//!
//! ```toml
//! target = "https://www.rfc-editor.org/rfc/rfc9000#section-4.5"
//!
//! # 4.5.  Stream Final Size
//! #
//! # When a sender ...
//!
//! [[spec]]
//! level = "MUST"
//! quote = '''
//! An endpoint MUST NOT send data on a stream at or beyond the final
//! size.
//! '''
//!
//! [[exception]]
//! quote = '''
//! An endpoint SHOULD ...
//! '''
//! reason = '''
//! Not applicable to this implementation.
//! '''
//!
//! [[TODO]]
//! quote = "..."
//! feature = "flow-control"
//! tracking-issue = "123"
//! ```
//!
//! The schema follows Duvet's reader (`duvet/src/source/toml.rs`):
//!
//! * top level: `target` (a string) and arrays of tables `spec` (alias `specs`), `exception`
//!   (alias `exceptions`) and `TODO` (aliases `todo`, `todos`); table names are matched
//!   case-insensitively here. Any other top-level key is an error, as in Duvet.
//! * every entry may carry its own `target`, which overrides the top-level one; an entry with
//!   neither is an error.
//! * `[[spec]]`: `quote` (required), `level` (`MUST`/`SHOULD`/`MAY`, their RFC 2119 synonyms,
//!   or `AUTO` for none), `format`.
//! * `[[exception]]`: `quote` and `reason`, both required.
//! * `[[TODO]]`: `quote` (required), `feature`, `tracking-issue` (or `tracking_issue`), `reason`,
//!   and `tags` (an array of strings, kept for the reports).
//! * Unknown keys in an entry are errors, as in Duvet. A single `[spec]` table (instead of an
//!   array of tables) is accepted as one entry.
//!
//! Each quote is normalised as Duvet does: lines trimmed, empty lines dropped, the rest joined
//! with single spaces. An entry's [`Annotation::line`] is the 1-based line of its `[[...]]`
//! header (of the `{` for an inline table), and its [`Annotation::comment_text`] is the entry's
//! own TOML text, from the header to the end of its last value, each line trimmed; the
//! top-level `target` line is not repeated in it.

use std::ops::Range;
use std::path::Path;

use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::{Annotation, AnnotationType, Level};

/// Parse the requirement file `file`, whose contents are `text`, into its annotations, ordered
/// by line.
///
/// Returns `Err` with a message naming the file, the line and the problem when the text is not
/// TOML, when an entry has no target (neither its own nor a top-level `target`), when a file has
/// no `target` and no entries, or when a table, key or value does not fit the schema above.
pub fn parse(text: &str, file: &Path) -> Result<Vec<Annotation>, String> {
    // The TOML parser rejects a byte-order mark; drop it (line numbers are unaffected).
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let fail = |offset: usize, message: String| -> String {
        format!(
            "{}: line {}: {message}",
            file.display(),
            line_of(text, offset)
        )
    };

    let document = DeTable::parse(text).map_err(|error| {
        let offset = error.span().map_or(0, |span| span.start);
        let (line, column) = line_and_column(text, offset);
        format!(
            "{}: invalid TOML at line {line}, column {column}: {}",
            file.display(),
            error.message().trim()
        )
    })?;

    let mut top_target: Option<String> = None;
    let mut entries: Vec<Entry<'_, '_>> = Vec::new();
    for (key, value) in document.get_ref().iter() {
        let name = key.get_ref().as_ref();
        let kind = match name.to_ascii_lowercase().as_str() {
            "target" => {
                match value.get_ref().as_str() {
                    Some(target) if !target.trim().is_empty() => {
                        top_target = Some(target.trim().to_string());
                    }
                    Some(_) => return Err(fail(value.span().start, "`target` is empty".into())),
                    None => {
                        return Err(fail(
                            value.span().start,
                            "`target` must be a string such as \"https://www.rfc-editor.org/rfc/rfc9000#section-4.5\"".into(),
                        ));
                    }
                }
                continue;
            }
            "spec" | "specs" => AnnotationType::Spec,
            "exception" | "exceptions" => AnnotationType::Exception,
            "todo" | "todos" => AnnotationType::Todo,
            _ => {
                return Err(fail(
                    key.span().start,
                    format!(
                        "unknown key `{name}`; expected `target`, `[[spec]]`, `[[exception]]` \
                         or `[[TODO]]`"
                    ),
                ));
            }
        };
        match value.get_ref() {
            DeValue::Array(items) => {
                for item in items.iter() {
                    match item.get_ref().as_table() {
                        Some(table) => entries.push(Entry {
                            kind,
                            name,
                            table,
                            span: item.span(),
                        }),
                        None => {
                            return Err(fail(
                                item.span().start,
                                format!("`{name}` must hold tables, written `[[{name}]]`"),
                            ));
                        }
                    }
                }
            }
            DeValue::Table(table) => entries.push(Entry {
                kind,
                name,
                table,
                span: value.span(),
            }),
            _ => {
                return Err(fail(
                    value.span().start,
                    format!("`{name}` must be an array of tables, written `[[{name}]]`"),
                ));
            }
        }
    }

    if top_target.is_none() && entries.is_empty() {
        return Err(format!(
            "{}: missing `target` (the specification section the requirements belong to)",
            file.display()
        ));
    }

    entries.sort_by_key(|entry| entry.span.start);
    let mut annotations = Vec::with_capacity(entries.len());
    // The entries in order: each one's line counted on from the one before (a file of
    // thousands of requirements is not read again from its start for each).
    let mut lines = Lines::new(text);
    for entry in &entries {
        let line = lines.at(entry.span.start);
        annotations.push(entry.annotation(text, file, top_target.as_deref(), line)?);
    }
    Ok(annotations)
}

/// One `[[spec]]`, `[[exception]]` or `[[TODO]]` table.
struct Entry<'d, 'i> {
    kind: AnnotationType,
    /// The table name as written.
    name: &'d str,
    table: &'d DeTable<'i>,
    /// Span of the header (array of tables) or of the inline table.
    span: Range<usize>,
}

impl Entry<'_, '_> {
    /// The keys this kind of entry accepts.
    fn allowed_keys(&self) -> &'static [&'static str] {
        match self.kind {
            AnnotationType::Spec => &["target", "quote", "level", "format"],
            AnnotationType::Exception => &["target", "quote", "reason"],
            _ => &[
                "target",
                "quote",
                "feature",
                "tracking-issue",
                "tracking_issue",
                "reason",
                "tags",
            ],
        }
    }

    /// Build the annotation, checking the entry against the schema.
    fn annotation(
        &self,
        text: &str,
        file: &Path,
        top_target: Option<&str>,
        line: usize,
    ) -> Result<Annotation, String> {
        let fail = |offset: usize, message: String| -> String {
            format!(
                "{}: line {}: `[[{}]]` entry: {message}",
                file.display(),
                line_of(text, offset),
                self.name
            )
        };

        let mut end = self.span.end;
        for (key, value) in self.table.iter() {
            end = end.max(key.span().end).max(value.span().end);
            let name = key.get_ref().as_ref();
            if !self.allowed_keys().contains(&name) {
                return Err(fail(
                    key.span().start,
                    format!(
                        "unknown key `{name}`; expected one of: {}",
                        self.allowed_keys().join(", ")
                    ),
                ));
            }
            if name == "tags" {
                let is_strings = value
                    .get_ref()
                    .as_array()
                    .is_some_and(|tags| tags.iter().all(|tag| tag.get_ref().is_str()));
                if !is_strings {
                    return Err(fail(
                        value.span().start,
                        "`tags` must be an array of strings".into(),
                    ));
                }
            } else if !value.get_ref().is_str() {
                return Err(fail(
                    value.span().start,
                    format!("`{name}` must be a string"),
                ));
            }
        }

        let string = |key: &str| -> Option<(&str, usize)> {
            self.table
                .get(key)
                .and_then(|value: &Spanned<DeValue<'_>>| {
                    value.get_ref().as_str().map(|s| (s, value.span().start))
                })
        };

        let target = match string("target") {
            Some((own, _)) if !own.trim().is_empty() => own.trim().to_string(),
            Some((_, offset)) => return Err(fail(offset, "`target` is empty".into())),
            None => match top_target {
                Some(target) => target.to_string(),
                None => {
                    return Err(fail(
                        self.span.start,
                        "missing `target`: the file has no top-level `target` and the entry \
                         gives none"
                            .into(),
                    ));
                }
            },
        };

        let Some((quote, _)) = string("quote") else {
            return Err(fail(self.span.start, "missing `quote`".into()));
        };

        let level = match string("level") {
            None => None,
            Some((value, _)) if value.trim().eq_ignore_ascii_case("auto") => None,
            Some((value, offset)) => match Level::parse(value) {
                Some(level) => Some(level),
                None => {
                    return Err(fail(
                        offset,
                        format!("unknown level `{value}`; expected MUST, SHOULD or MAY"),
                    ));
                }
            },
        };

        let format = match string("format") {
            None => None,
            Some((value, offset)) => {
                let known = matches!(
                    value.trim().to_ascii_lowercase().as_str(),
                    "auto" | "ietf" | "markdown" | "md"
                );
                if !known {
                    return Err(fail(
                        offset,
                        format!("unknown format `{value}`; expected ietf or markdown"),
                    ));
                }
                Some(value.trim().to_string())
            }
        };

        let raw_reason = string("reason").map(|(value, _)| value.to_string());
        let reason = raw_reason.as_deref().map(normalize);
        if self.kind == AnnotationType::Exception && reason.as_deref().is_none_or(str::is_empty) {
            return Err(fail(
                self.span.start,
                "missing `reason`: an exception must say why the requirement does not apply".into(),
            ));
        }

        let tracking_issue = string("tracking-issue")
            .or_else(|| string("tracking_issue"))
            .map(|(value, _)| value.trim().to_string())
            .filter(|value| !value.is_empty());
        let feature = string("feature")
            .map(|(value, _)| value.trim().to_string())
            .filter(|value| !value.is_empty());

        let written = text.get(self.span.start..end).unwrap_or_default();
        let comment_text = written
            .lines()
            .map(str::trim)
            .collect::<Vec<_>>()
            .join("\n");

        let comment = match self.kind {
            AnnotationType::Spec => quote.to_string(),
            _ => raw_reason.unwrap_or_default(),
        };
        let mut tags: Vec<String> = self
            .table
            .get("tags")
            .and_then(|value| value.get_ref().as_array())
            .map(|tags| {
                tags.iter()
                    .filter_map(|tag| tag.get_ref().as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        tags.sort();
        tags.dedup();
        Ok(Annotation {
            file: file.to_path_buf(),
            line,
            target,
            comment,
            tags,
            quote: normalize(quote),
            kind: self.kind,
            level,
            format,
            reason: reason.filter(|value| !value.is_empty()),
            feature,
            tracking_issue,
            comment_text,
        })
    }
}

/// Duvet's quote normalisation: trim each line, drop empty ones, join with single spaces.
fn normalize(value: &str) -> String {
    value
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Lines of increasing offsets in one text, counted on from the last offset asked.
struct Lines<'t> {
    text: &'t [u8],
    offset: usize,
    line: usize,
}

impl<'t> Lines<'t> {
    fn new(text: &'t str) -> Self {
        Self {
            text: text.as_bytes(),
            offset: 0,
            line: 1,
        }
    }

    /// The 1-based line of byte `offset` (as [`line_of`]); an offset before the last one
    /// asked is counted from the start.
    fn at(&mut self, offset: usize) -> usize {
        let offset = offset.min(self.text.len());
        if offset < self.offset {
            (self.offset, self.line) = (0, 1);
        }
        let between = self.text.get(self.offset..offset).unwrap_or_default();
        self.line += memchr::memchr_iter(b'\n', between).count();
        self.offset = offset;
        self.line
    }
}

/// The 1-based line of byte `offset` in `text` (offsets past the end count as the last line).
fn line_of(text: &str, offset: usize) -> usize {
    line_and_column(text, offset).0
}

/// The 1-based line and column (in characters) of byte `offset` in `text`.
fn line_and_column(text: &str, offset: usize) -> (usize, usize) {
    let bytes = text.as_bytes();
    let offset = offset.min(bytes.len());
    let before = bytes.get(..offset).unwrap_or_default();
    let line = before.iter().filter(|&&byte| byte == b'\n').count() + 1;
    let line_start = before
        .iter()
        .rposition(|&byte| byte == b'\n')
        .map_or(0, |newline| newline + 1);
    // Count characters, not bytes; an offset inside a character counts that character.
    let column = bytes.get(line_start..offset).map_or(0, |segment| {
        segment
            .iter()
            .filter(|&&byte| (byte & 0xC0) != 0x80)
            .count()
    }) + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    const FILE: &str = ".duvet/requirements/www.rfc-editor.org/rfc/rfc9000/section-4.5.toml";

    fn parse_ok(text: &str) -> Vec<Annotation> {
        match parse(text, Path::new(FILE)) {
            Ok(annotations) => annotations,
            Err(message) => panic!("unexpected error: {message}"),
        }
    }

    fn parse_err(text: &str) -> String {
        match parse(text, Path::new(FILE)) {
            Ok(annotations) => panic!("expected an error, got {annotations:#?}"),
            Err(message) => message,
        }
    }

    /// A file as `duvet extract` writes it.
    const EXTRACTED: &str = r#"target = "https://www.rfc-editor.org/rfc/rfc9000#section-4.5"

# 4.5.  Stream Final Size
#
# When a sender sends all data for a stream, it reports the final size.
# An endpoint MUST NOT send data on a stream at or beyond the final
# size.

[[spec]]
level = "MUST"
quote = '''
An endpoint MUST NOT send data on a stream at or beyond the final
size.
'''

[[spec]]
level = "SHOULD"
quote = '''
If a RESET_STREAM or STREAM frame is received indicating a change in
the final size for the stream, an endpoint SHOULD respond with an
error of type FINAL_SIZE_ERROR; see Section 11 for details on error
handling.
'''

"#;

    #[test]
    fn extracted_requirements() {
        let annotations = parse_ok(EXTRACTED);
        assert_eq!(annotations.len(), 2);
        assert_eq!(
            annotations[0],
            Annotation {
                file: PathBuf::from(FILE),
                line: 9,
                target: "https://www.rfc-editor.org/rfc/rfc9000#section-4.5".to_string(),
                quote: "An endpoint MUST NOT send data on a stream at or beyond the final size."
                    .to_string(),
                kind: AnnotationType::Spec,
                level: Some(Level::Must),
                format: None,
                reason: None,
                feature: None,
                tracking_issue: None,
                comment_text: "[[spec]]\nlevel = \"MUST\"\nquote = '''\nAn endpoint MUST NOT send \
                               data on a stream at or beyond the final\nsize.\n'''"
                    .to_string(),
                comment:
                    "An endpoint MUST NOT send data on a stream at or beyond the final\nsize.\n"
                        .to_string(),
                tags: Vec::new(),
            }
        );
        assert_eq!(annotations[1].line, 16);
        assert_eq!(annotations[1].level, Some(Level::Should));
        assert_eq!(
            annotations[1].quote,
            "If a RESET_STREAM or STREAM frame is received indicating a change in the final \
             size for the stream, an endpoint SHOULD respond with an error of type \
             FINAL_SIZE_ERROR; see Section 11 for details on error handling."
        );
    }

    #[test]
    fn exceptions_and_todos() {
        let text = r#"target = "https://www.rfc-editor.org/rfc/rfc9000#section-8.1"

[[exception]]
quote = '''
Servers MAY provide clients with an address validation token
'''
reason = '''
This implementation never issues tokens;
see the design doc.
'''

[[TODO]]
quote = "Clients MUST NOT use the same token twice."
feature = "address-validation"
tracking-issue = "https://github.com/example/quic/issues/42"
tags = ["v2"]

[[todo]]
target = "https://www.rfc-editor.org/rfc/rfc9000#section-8.2"
quote = "Path validation MUST be performed."
tracking_issue = "43"
reason = "needs migration"
"#;
        let annotations = parse_ok(text);
        assert_eq!(annotations.len(), 3);

        let exception = &annotations[0];
        assert_eq!(exception.kind, AnnotationType::Exception);
        assert_eq!(exception.line, 3);
        assert_eq!(
            exception.quote,
            "Servers MAY provide clients with an address validation token"
        );
        assert_eq!(
            exception.reason.as_deref(),
            Some("This implementation never issues tokens; see the design doc.")
        );
        assert_eq!(
            exception.target,
            "https://www.rfc-editor.org/rfc/rfc9000#section-8.1"
        );

        let todo = &annotations[1];
        assert_eq!(todo.kind, AnnotationType::Todo);
        assert_eq!(todo.line, 12);
        assert_eq!(todo.feature.as_deref(), Some("address-validation"));
        assert_eq!(
            todo.tracking_issue.as_deref(),
            Some("https://github.com/example/quic/issues/42")
        );
        assert_eq!(
            todo.comment_text,
            "[[TODO]]\nquote = \"Clients MUST NOT use the same token twice.\"\n\
             feature = \"address-validation\"\n\
             tracking-issue = \"https://github.com/example/quic/issues/42\"\ntags = [\"v2\"]"
        );

        let own_target = &annotations[2];
        assert_eq!(own_target.line, 18);
        assert_eq!(
            own_target.target,
            "https://www.rfc-editor.org/rfc/rfc9000#section-8.2"
        );
        assert_eq!(own_target.tracking_issue.as_deref(), Some("43"));
        assert_eq!(own_target.reason.as_deref(), Some("needs migration"));
    }

    #[test]
    fn entries_are_in_file_order_whatever_the_table_names() {
        let text = "target = \"spec.md#a\"\n[[TODO]]\nquote = \"t\"\n[[spec]]\nquote = \"s\"\n[[exception]]\nquote = \"e\"\nreason = \"r\"\n[[spec]]\nquote = \"s2\"\n";
        let annotations = parse_ok(text);
        let order: Vec<_> = annotations
            .iter()
            .map(|a| (a.line, a.quote.as_str()))
            .collect();
        assert_eq!(order, [(2, "t"), (4, "s"), (6, "e"), (9, "s2")]);
    }

    #[test]
    fn header_text_inside_a_quote_does_not_confuse_lines() {
        let text = "target = \"https://example.com/s.md#x\"\n\n[[spec]]\nquote = '''\n[[spec]]\nlooks like a header\n'''\n\n[[spec]] # second\nlevel = \"may\"\nquote = \"q\"\n";
        let annotations = parse_ok(text);
        assert_eq!(annotations.len(), 2);
        assert_eq!(annotations[0].line, 3);
        assert_eq!(annotations[0].quote, "[[spec]] looks like a header");
        assert_eq!(annotations[1].line, 9);
        assert_eq!(annotations[1].level, Some(Level::May));
    }

    #[test]
    fn levels_and_formats() {
        let text = "target = \"a.md#s\"\n[[spec]]\nlevel = \"AUTO\"\nformat = \"markdown\"\nquote = \"x\"\n[[spec]]\nlevel = \"SHALL\"\nquote = \"y\"\n";
        let annotations = parse_ok(text);
        assert_eq!(annotations[0].level, None);
        assert_eq!(annotations[0].format.as_deref(), Some("markdown"));
        assert_eq!(annotations[1].level, Some(Level::Must));
    }

    #[test]
    fn inline_and_single_tables_and_empty_files() {
        let annotations = parse_ok(
            "target = \"a.md#s\"\nspec = [\n  { quote = \"one\" },\n  { quote = \"two\", level = \"MAY\" },\n]\n",
        );
        assert_eq!(annotations.len(), 2);
        assert_eq!(annotations[0].line, 3);
        assert_eq!(annotations[0].comment_text, "{ quote = \"one\" }");
        assert_eq!(annotations[1].line, 4);

        let annotations = parse_ok("target = \"a.md#s\"\n[spec]\nquote = \"single\"\n");
        assert_eq!(annotations.len(), 1);
        assert_eq!(annotations[0].line, 2);

        assert!(parse_ok("target = \"a.md#s\"\n# no requirements here\n").is_empty());
        // An empty quote is allowed (it references the whole section).
        assert_eq!(
            parse_ok("target = \"a.md#s\"\n[[spec]]\nquote = \"\"\n")[0].quote,
            ""
        );
    }

    #[test]
    fn invalid_toml() {
        let message = parse_err("target = \"a.md#s\"\n\n[[spec]\nquote = \"x\"\n");
        assert!(message.starts_with(FILE), "{message}");
        assert!(message.contains("invalid TOML at line 3"), "{message}");
        let message = parse_err("target = https://example.com\n");
        assert!(
            message.contains("invalid TOML at line 1, column 10"),
            "{message}"
        );
    }

    #[test]
    fn missing_target() {
        let message = parse_err("[[spec]]\nlevel = \"MUST\"\nquote = \"x\"\n");
        assert!(message.contains("line 1"), "{message}");
        assert!(message.contains("missing `target`"), "{message}");
        let message = parse_err("");
        assert!(message.contains("missing `target`"), "{message}");
        let message = parse_err("# only comments\n");
        assert!(message.contains("missing `target`"), "{message}");
        let message = parse_err("target = 5\n[[spec]]\nquote = \"x\"\n");
        assert!(message.contains("`target` must be a string"), "{message}");
        let message = parse_err("target = \"  \"\n");
        assert!(message.contains("`target` is empty"), "{message}");
    }

    #[test]
    fn schema_errors() {
        let cases = [
            (
                "target = \"a#s\"\n[[spec]]\nlevel = \"MUST\"\n",
                "line 2: `[[spec]]` entry: missing `quote`",
            ),
            (
                "target = \"a#s\"\n[[exception]]\nquote = \"q\"\n",
                "missing `reason`",
            ),
            (
                "target = \"a#s\"\n[[spec]]\nquote = \"q\"\nlevel = \"SOMETIMES\"\n",
                "line 4: `[[spec]]` entry: unknown level `SOMETIMES`",
            ),
            (
                "target = \"a#s\"\n[[spec]]\nquote = \"q\"\nformat = \"html\"\n",
                "unknown format `html`",
            ),
            (
                "target = \"a#s\"\n[[spec]]\nquote = \"q\"\nreason = \"r\"\n",
                "line 4: `[[spec]]` entry: unknown key `reason`",
            ),
            (
                "target = \"a#s\"\n[[spec]]\nquote = 3\n",
                "`quote` must be a string",
            ),
            (
                "target = \"a#s\"\n[[TODO]]\nquote = \"q\"\ntags = [1]\n",
                "`tags` must be an array of strings",
            ),
            (
                "target = \"a#s\"\n[[requirement]]\nquote = \"q\"\n",
                "line 2: unknown key `requirement`",
            ),
            (
                "target = \"a#s\"\nspec = \"q\"\n",
                "must be an array of tables",
            ),
            ("target = \"a#s\"\nspec = [1]\n", "must hold tables"),
        ];
        for (text, expected) in cases {
            let message = parse_err(text);
            assert!(message.contains(expected), "{message:?} lacks {expected:?}");
            assert!(message.starts_with(FILE), "{message}");
        }
    }

    #[test]
    fn byte_order_mark_and_crlf() {
        let text = "\u{feff}target = \"a.md#s\"\r\n[[spec]]\r\nquote = '''\r\nline one\r\nline two\r\n'''\r\n";
        let annotations = parse_ok(text);
        assert_eq!(annotations[0].line, 2);
        assert_eq!(annotations[0].quote, "line one line two");
    }

    #[test]
    fn lines_count_on_as_line_of_counts() {
        let text = "a\nbb\n\nccc\n";
        let mut lines = Lines::new(text);
        for offset in [0, 1, 2, 5, 6, 7, 99, 3, 0] {
            assert_eq!(lines.at(offset), line_of(text, offset), "{offset}");
        }
    }

    #[test]
    fn line_and_column_count_characters() {
        assert_eq!(line_and_column("", 0), (1, 1));
        assert_eq!(line_and_column("ab\ncd", 4), (2, 2));
        assert_eq!(line_and_column("é=\n", 2), (1, 2));
        assert_eq!(line_and_column("é", 1), (1, 2));
        assert_eq!(line_and_column("ab", 99), (1, 3));
    }

    #[test]
    fn arbitrary_input_does_not_panic() {
        for text in [
            "\u{0}",
            "[[",
            "target = '''",
            "ü = \"ß\"",
            "target=\"é#ü\"\n[[spec]]\nquote=\"\u{10ffff}\"",
            "[[spec]]\n[[spec]]\n",
            "target = \"x\"\n[spec.nested]\nquote = \"q\"\n",
        ] {
            let _ = parse(text, Path::new("x.toml"));
        }
    }
}
