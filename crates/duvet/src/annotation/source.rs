//! Annotations written as comments in source files.
//!
//! Duvet marks an annotation with two comment prefixes (a [`CommentStyle`]): *meta* lines
//! (default `//=`) name the target and optional `key=value` fields, and the *content* lines
//! that follow (default `//#`) quote the specification:
//!
//! ```text
//! //= https://www.rfc-editor.org/rfc/rfc9000#section-4.5
//! //= type=test
//! //# An endpoint that receives a STREAM frame with a final size that
//! //# differs from the established final size MUST respond with an error.
//! ```
//!
//! The rules follow Duvet's comment tokenizer and parser (`duvet/src/comment/`):
//!
//! * A line is a meta line when, after its leading whitespace, it starts with `style.meta`, and a
//!   content line when it starts with `style.content`. Prefixes match literally (`#=`/`##`,
//!   `*=`/`*#`, `;;=`/`;;#`, `# //=`/`# //#` all work). Should both match, the longer prefix
//!   wins; an empty prefix never matches.
//! * An annotation is a run of consecutive meta and content lines. It ends at the first line that
//!   is neither (a blank line, code, an ordinary comment) and, as in Duvet, where a meta line
//!   follows quoted text: that meta line starts the next annotation.
//! * A meta line holds either the target (`https://…#section` or a path such as
//!   `spec/foo.md#bar`) or `key=value`. Keys, as in Duvet: `type`, `level`, `format`, `reason`,
//!   `feature`, `tracking-issue`, and `source` (another way to give the target). Keys are
//!   matched case-insensitively and `tracking_issue` is accepted too. Only text made of ASCII
//!   letters, digits, `-` and `_` before the first `=` counts as a key, so a target whose URL
//!   holds `=` (a query string) is still a target.
//! * As in Duvet the target may come on any meta line of the annotation, not only the first;
//!   an annotation whose meta lines never name one is malformed.
//! * `reason=` may repeat: the lines are joined with single spaces into one reason (Duvet's
//!   multi-line reason). Every other key may appear once.
//! * The quote is the text of the content lines, each trimmed, empty ones skipped, joined with
//!   single spaces.
//! * The quote is optional for every type, as in current Duvet, where an annotation without a
//!   quote references its section as a whole. An annotation with neither a quote nor a
//!   `#section` in its target cannot reference anything and is malformed.
//! * Content lines with no meta line before them are handed on as [`Malformed`] with their
//!   quote ([`Malformed::orphan_quote`]); the model reports them only when that text is a
//!   specification's (Duvet skips them silently, and many are ordinary comments, such as a
//!   commented-out `//#[traced_test]`).
//! * A line whose text after the prefix is only the prefix's last character repeated
//!   (`//=======`, `//#####`, `##########` with content `##`) is a decorative banner, not part
//!   of an annotation.
//!
//! An annotation with any problem is reported only as [`Malformed`] entries (one per problem),
//! never also as an [`Annotation`].

use std::path::Path;

use super::{Annotation, AnnotationType, CommentStyle, Level, Malformed};

/// The keys a meta line may set, as listed in error messages.
const KNOWN_KEYS: &str = "type, level, format, reason, feature, tracking-issue, source";

/// Extract the annotations in `text`, the contents of the source file `file`, whose comments use
/// `style`. Annotations without a `type=` get `default_type` (the `[[source]]` entry's `type`).
///
/// Returns the annotations in file order and every malformed annotation found, also in file
/// order. Never panics, whatever the input.
pub fn extract(
    text: &str,
    file: &Path,
    style: &CommentStyle,
    default_type: AnnotationType,
) -> (Vec<Annotation>, Vec<Malformed>) {
    let mut out = Output {
        file,
        default_type,
        style,
        annotations: Vec::new(),
        malformed: Vec::new(),
    };
    let mut block: Option<Block> = None;
    let mut orphan: Option<Orphan> = None;

    for (index, raw) in text.lines().enumerate() {
        let line_no = index + 1;
        // A byte-order mark would hide the prefix of the first line.
        let raw = if index == 0 {
            raw.strip_prefix('\u{feff}').unwrap_or(raw)
        } else {
            raw
        };
        let written = raw.trim();

        match classify(raw, style) {
            LineKind::Meta(rest) => {
                if let Some(run) = orphan.take() {
                    out.orphan(run);
                }
                // As in Duvet, a meta line after quoted text starts the next annotation.
                if block.as_ref().is_some_and(|open| !open.quote.is_empty())
                    && let Some(done) = block.take()
                {
                    out.finish(done);
                }
                let open = block.get_or_insert_with(|| Block::new(line_no));
                open.lines.push(written.to_string());
                open.meta(rest, line_no, written);
            }
            LineKind::Content(rest) => {
                let quoted = rest.trim();
                if let Some(open) = block.as_mut() {
                    open.lines.push(written.to_string());
                    if !quoted.is_empty() {
                        open.quote.push(quoted.to_string());
                    }
                } else {
                    let run = orphan.get_or_insert_with(|| Orphan {
                        line: line_no,
                        lines: Vec::new(),
                        quote: Vec::new(),
                    });
                    run.lines.push(written.to_string());
                    if !quoted.is_empty() {
                        run.quote.push(quoted.to_string());
                    }
                }
            }
            LineKind::Other => {
                if let Some(done) = block.take() {
                    out.finish(done);
                }
                if let Some(run) = orphan.take() {
                    out.orphan(run);
                }
            }
        }
    }
    if let Some(done) = block.take() {
        out.finish(done);
    }
    if let Some(run) = orphan.take() {
        out.orphan(run);
    }

    // Problems are found per annotation; report them in file order.
    out.malformed.sort_by_key(|problem| problem.line);
    (out.annotations, out.malformed)
}

/// What one line of a source file is, as far as annotations go.
enum LineKind<'a> {
    /// A meta line; the text after the prefix.
    Meta(&'a str),
    /// A content line; the text after the prefix.
    Content(&'a str),
    /// Anything else: code, blank lines, other comments, banners.
    Other,
}

/// Classify `raw` by the comment prefixes of `style`.
fn classify<'a>(raw: &'a str, style: &CommentStyle) -> LineKind<'a> {
    let line = raw.trim_start();
    let meta = strip(line, &style.meta);
    let content = strip(line, &style.content);
    let kind = match (meta, content) {
        (Some(meta), Some(content)) => {
            if style.meta.len() >= style.content.len() {
                LineKind::Meta(meta)
            } else {
                LineKind::Content(content)
            }
        }
        (Some(meta), None) => LineKind::Meta(meta),
        (None, Some(content)) => LineKind::Content(content),
        (None, None) => LineKind::Other,
    };
    match kind {
        LineKind::Meta(rest) if is_banner(rest, &style.meta) => LineKind::Other,
        LineKind::Content(rest) if is_banner(rest, &style.content) => LineKind::Other,
        other => other,
    }
}

/// `line` without `prefix`, if it starts with it; an empty prefix never matches.
fn strip<'a>(line: &'a str, prefix: &str) -> Option<&'a str> {
    if prefix.is_empty() {
        None
    } else {
        line.strip_prefix(prefix)
    }
}

/// Whether `rest` (the text after `prefix`) is a decorative run of the prefix's last character,
/// as in `//=========` or `##########`.
fn is_banner(rest: &str, prefix: &str) -> bool {
    let rest = rest.trim();
    match prefix.chars().last() {
        Some(last) => !rest.is_empty() && rest.chars().all(|c| c == last),
        None => false,
    }
}

/// What a meta line says.
enum Meta<'a> {
    /// A target (URL or path, possibly with `#section`).
    Target(&'a str),
    /// `key=value`, both trimmed.
    Field { key: &'a str, value: &'a str },
    /// Nothing after the prefix.
    Empty,
}

/// Split the text after a meta prefix into a target or a `key=value` field.
fn parse_meta(rest: &str) -> Meta<'_> {
    let rest = rest.trim();
    if rest.is_empty() {
        return Meta::Empty;
    }
    if let Some((key, value)) = rest.split_once('=') {
        let key = key.trim();
        let is_key = !key.is_empty()
            && key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if is_key {
            return Meta::Field {
                key,
                value: value.trim(),
            };
        }
    }
    Meta::Target(rest)
}

/// Whether `value` is a `format=` Duvet accepts (`auto`, `ietf`, `markdown`, `md`).
fn is_known_format(value: &str) -> bool {
    matches!(
        value.to_ascii_lowercase().as_str(),
        "auto" | "ietf" | "markdown" | "md"
    )
}

/// A value set by a meta line, with the line that set it.
struct Set<T> {
    value: T,
    line: usize,
}

/// An annotation being read.
struct Block {
    /// Line of the first meta line.
    first_line: usize,
    /// Every line of the annotation, trimmed.
    lines: Vec<String>,
    target: Option<Set<String>>,
    kind: Option<Set<AnnotationType>>,
    /// `None` inside for `level=auto`.
    level: Option<Set<Option<Level>>>,
    format: Option<Set<String>>,
    /// The parts of a (possibly multi-line) reason.
    reason: Vec<String>,
    feature: Option<Set<String>>,
    tracking_issue: Option<Set<String>>,
    /// The non-empty content lines, trimmed.
    quote: Vec<String>,
    /// Problems found so far, each with its line and reason.
    problems: Vec<(usize, String, String)>,
}

impl Block {
    fn new(first_line: usize) -> Self {
        Self {
            first_line,
            lines: Vec::new(),
            target: None,
            kind: None,
            level: None,
            format: None,
            reason: Vec::new(),
            feature: None,
            tracking_issue: None,
            quote: Vec::new(),
            problems: Vec::new(),
        }
    }

    /// Record a problem with the meta line `line_no`, written as `written`.
    fn problem(&mut self, line_no: usize, written: &str, reason: String) {
        self.problems.push((line_no, written.to_string(), reason));
    }

    /// Apply the meta line `line_no` (text after the prefix: `rest`; the whole line trimmed:
    /// `written`).
    fn meta(&mut self, rest: &str, line_no: usize, written: &str) {
        match parse_meta(rest) {
            Meta::Empty => self.problem(
                line_no,
                written,
                "empty meta line: expected a target or `key=value`".to_string(),
            ),
            Meta::Target(target) => self.set_target(target, line_no, written),
            Meta::Field { key, value } => self.field(key, value, line_no, written),
        }
    }

    fn set_target(&mut self, target: &str, line_no: usize, written: &str) {
        if let Some(previous) = &self.target {
            let reason = format!(
                "a second target `{target}` in one annotation (the first, `{}`, is on line {}); \
                 each target needs its own quote before the next target",
                previous.value, previous.line
            );
            self.problem(line_no, written, reason);
        } else {
            self.target = Some(Set {
                value: target.to_string(),
                line: line_no,
            });
        }
    }

    fn field(&mut self, key: &str, value: &str, line_no: usize, written: &str) {
        let name = key.to_ascii_lowercase();
        let name = if name == "tracking_issue" {
            "tracking-issue".to_string()
        } else {
            name
        };
        if name == "source" {
            if value.is_empty() {
                self.problem(line_no, written, "`source` has no value".to_string());
            } else {
                self.set_target(value, line_no, written);
            }
            return;
        }
        if name == "reason" {
            // Duvet joins the lines of a multi-line reason with spaces.
            if !value.is_empty() {
                self.reason.push(value.to_string());
            }
            return;
        }
        if !matches!(
            name.as_str(),
            "type" | "level" | "format" | "feature" | "tracking-issue"
        ) {
            let reason = format!("unknown key `{key}`; expected one of: {KNOWN_KEYS}");
            self.problem(line_no, written, reason);
            return;
        }
        if value.is_empty() {
            self.problem(line_no, written, format!("`{name}` has no value"));
            return;
        }
        let previous = match name.as_str() {
            "type" => self.kind.as_ref().map(|set| set.line),
            "level" => self.level.as_ref().map(|set| set.line),
            "format" => self.format.as_ref().map(|set| set.line),
            "feature" => self.feature.as_ref().map(|set| set.line),
            _ => self.tracking_issue.as_ref().map(|set| set.line),
        };
        if let Some(first) = previous {
            let reason = format!("`{name}` is given twice (first on line {first})");
            self.problem(line_no, written, reason);
            return;
        }
        match name.as_str() {
            "type" => match AnnotationType::parse(value) {
                Some(kind) => {
                    self.kind = Some(Set {
                        value: kind,
                        line: line_no,
                    })
                }
                None => {
                    let reason = format!(
                        "unknown annotation type `{value}`; expected one of: implementation \
                         (or citation), test, todo, exception, implication, spec"
                    );
                    self.problem(line_no, written, reason);
                }
            },
            "level" => {
                let level = if value.eq_ignore_ascii_case("auto") {
                    Some(None)
                } else {
                    Level::parse(value).map(Some)
                };
                match level {
                    Some(level) => {
                        self.level = Some(Set {
                            value: level,
                            line: line_no,
                        })
                    }
                    None => {
                        let reason =
                            format!("unknown level `{value}`; expected MUST, SHOULD or MAY");
                        self.problem(line_no, written, reason);
                    }
                }
            }
            "format" => {
                if is_known_format(value) {
                    self.format = Some(Set {
                        value: value.to_string(),
                        line: line_no,
                    });
                } else {
                    let reason = format!(
                        "unknown format `{value}`; expected ietf or markdown (or md, or auto)"
                    );
                    self.problem(line_no, written, reason);
                }
            }
            "feature" => {
                self.feature = Some(Set {
                    value: value.to_string(),
                    line: line_no,
                })
            }
            _ => {
                self.tracking_issue = Some(Set {
                    value: value.to_string(),
                    line: line_no,
                })
            }
        }
    }
}

/// Content lines with no meta line before them.
struct Orphan {
    line: usize,
    lines: Vec<String>,
    /// The text the lines quote, each trimmed (a lone `//#` quotes nothing).
    quote: Vec<String>,
}

/// Where finished annotations and problems go.
struct Output<'a> {
    file: &'a Path,
    default_type: AnnotationType,
    style: &'a CommentStyle,
    annotations: Vec<Annotation>,
    malformed: Vec<Malformed>,
}

impl Output<'_> {
    fn malformed(&mut self, line: usize, text: String, reason: String) {
        self.malformed.push(Malformed {
            file: self.file.to_path_buf(),
            line,
            text,
            reason,
            orphan_quote: None,
        });
    }

    /// Quote lines without a target line: reported only if the model finds their text in a
    /// specification (see [`Malformed::orphan_quote`]).
    fn orphan(&mut self, run: Orphan) {
        if !run.quote.is_empty() {
            self.malformed.push(Malformed {
                file: self.file.to_path_buf(),
                line: run.line,
                text: run.lines.join("\n"),
                reason: format!(
                    "quote lines (`{}`) without a meta line (`{}` and the target) before them",
                    self.style.content, self.style.meta
                ),
                orphan_quote: Some(run.quote.join(" ")),
            });
        }
    }

    fn finish(&mut self, block: Block) {
        let comment_text = block.lines.join("\n");
        let mut problems = block.problems;

        match &block.target {
            None => problems.push((
                block.first_line,
                comment_text.clone(),
                format!(
                    "annotation without a target: its meta lines only set `key=value` fields; \
                     start it with the specification and section, e.g. \
                     `{} https://www.rfc-editor.org/rfc/rfc9000#section-4.5`",
                    self.style.meta
                ),
            )),
            Some(target) => {
                let has_section = target
                    .value
                    .split_once('#')
                    .is_some_and(|(_, section)| !section.is_empty());
                if block.quote.is_empty() && !has_section {
                    problems.push((
                        block.first_line,
                        comment_text.clone(),
                        format!(
                            "annotation quotes nothing and its target `{}` names no section: add \
                             `#section` to the target or quote the text on `{}` lines",
                            target.value, self.style.content
                        ),
                    ));
                }
            }
        }

        if !problems.is_empty() {
            for (line, text, reason) in problems {
                self.malformed(line, text, reason);
            }
            return;
        }
        let Some(target) = block.target else {
            return;
        };
        let reason = block.reason.join(" ");
        self.annotations.push(Annotation {
            file: self.file.to_path_buf(),
            line: block.first_line,
            target: target.value,
            quote: block.quote.join(" "),
            kind: block.kind.map_or(self.default_type, |set| set.value),
            level: block.level.and_then(|set| set.value),
            format: block.format.map(|set| set.value),
            comment: reason.clone(),
            reason: (!reason.is_empty()).then_some(reason),
            feature: block.feature.map(|set| set.value),
            tracking_issue: block.tracking_issue.map(|set| set.value),
            comment_text,
            tags: Vec::new(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn style(meta: &str, content: &str) -> CommentStyle {
        CommentStyle {
            meta: meta.to_string(),
            content: content.to_string(),
        }
    }

    fn run(text: &str) -> (Vec<Annotation>, Vec<Malformed>) {
        extract(
            text,
            Path::new("src/stream.rs"),
            &CommentStyle::default(),
            AnnotationType::Implementation,
        )
    }

    fn only(text: &str) -> Annotation {
        let (annotations, malformed) = run(text);
        assert!(malformed.is_empty(), "unexpected problems: {malformed:#?}");
        assert_eq!(annotations.len(), 1, "{annotations:#?}");
        annotations.into_iter().next().unwrap()
    }

    #[test]
    fn rust_citation_with_multi_line_quote() {
        let text = "\
use core::fmt;

impl Stream {
    //= https://www.rfc-editor.org/rfc/rfc9000#section-4.5
    //# An endpoint that receives a STREAM frame with a final size that
    //#   differs from the established final size MUST respond with
    //# a FINAL_SIZE_ERROR error.
    fn on_final_size(&mut self) {}
}
";
        let annotation = only(text);
        assert_eq!(
            annotation,
            Annotation {
                file: PathBuf::from("src/stream.rs"),
                line: 4,
                target: "https://www.rfc-editor.org/rfc/rfc9000#section-4.5".to_string(),
                quote: "An endpoint that receives a STREAM frame with a final size that \
                        differs from the established final size MUST respond with \
                        a FINAL_SIZE_ERROR error."
                    .to_string(),
                kind: AnnotationType::Implementation,
                level: None,
                format: None,
                reason: None,
                feature: None,
                tracking_issue: None,
                comment_text: "//= https://www.rfc-editor.org/rfc/rfc9000#section-4.5\n\
                               //# An endpoint that receives a STREAM frame with a final size that\n\
                               //#   differs from the established final size MUST respond with\n\
                               //# a FINAL_SIZE_ERROR error."
                    .to_string(),
                comment: String::new(),
                tags: Vec::new(),
            }
        );
    }

    #[test]
    fn all_keys_are_read() {
        let annotation = only(
            "//= https://example.com/spec.md#handshake\n\
             //= type=todo\n\
             //= level=SHOULD\n\
             //= format=markdown\n\
             //= feature=cool-things\n\
             //= tracking-issue=123\n\
             //# Here is my citation\n",
        );
        assert_eq!(annotation.kind, AnnotationType::Todo);
        assert_eq!(annotation.level, Some(Level::Should));
        assert_eq!(annotation.format.as_deref(), Some("markdown"));
        assert_eq!(annotation.feature.as_deref(), Some("cool-things"));
        assert_eq!(annotation.tracking_issue.as_deref(), Some("123"));
        assert_eq!(annotation.quote, "Here is my citation");
        assert_eq!(annotation.line, 1);
    }

    #[test]
    fn types_and_default_type() {
        for (value, kind) in [
            ("citation", AnnotationType::Implementation),
            ("implementation", AnnotationType::Implementation),
            ("test", AnnotationType::Test),
            ("TEST", AnnotationType::Test),
            ("exception", AnnotationType::Exception),
            ("implication", AnnotationType::Implication),
            ("spec", AnnotationType::Spec),
            ("todo", AnnotationType::Todo),
        ] {
            let text = format!("//= https://example.com/spec.txt#s\n//= type={value}\n//# q\n");
            assert_eq!(only(&text).kind, kind, "type={value}");
        }
        let (annotations, _) = extract(
            "//= https://example.com/spec.txt#s\n//# q\n",
            Path::new("tests/t.rs"),
            &CommentStyle::default(),
            AnnotationType::Test,
        );
        assert_eq!(
            annotations.first().map(|a| a.kind),
            Some(AnnotationType::Test)
        );
    }

    #[test]
    fn multi_line_reason_is_joined_and_allowed_on_any_type() {
        let annotation = only(
            "    //= https://example.com/spec.txt#section-2\n\
             \x20   //= type=exception\n\
             \x20   //= reason=Step 2 (serialize header) comes before\n\
             \x20   //= reason=step 3 (encrypt body), so this ordering is guaranteed.\n\
             \x20   //# Before encrypting input plaintext,\n",
        );
        assert_eq!(annotation.kind, AnnotationType::Exception);
        assert_eq!(
            annotation.reason.as_deref(),
            Some(
                "Step 2 (serialize header) comes before step 3 (encrypt body), so this \
                 ordering is guaranteed."
            )
        );
        let citation = only(
            "//= https://example.com/spec.txt#s\n\
             //= reason=This is why the code does the feature\n\
             //# Here is my citation\n",
        );
        assert_eq!(citation.kind, AnnotationType::Implementation);
        assert_eq!(
            citation.reason.as_deref(),
            Some("This is why the code does the feature")
        );
    }

    #[test]
    fn levels() {
        for (value, level) in [
            ("MUST", Some(Level::Must)),
            ("must", Some(Level::Must)),
            ("SHALL", Some(Level::Must)),
            ("SHOULD", Some(Level::Should)),
            ("MAY", Some(Level::May)),
            ("AUTO", None),
        ] {
            let text = format!("//= https://example.com/spec.txt#s\n//= level={value}\n//# q\n");
            assert_eq!(only(&text).level, level, "level={value}");
        }
    }

    #[test]
    fn spaces_around_equals_and_case_of_keys() {
        let annotation = only(
            "//= https://example.com/spec.txt#s\n//=   Type = test \n//= TRACKING_ISSUE = 7\n//# q\n",
        );
        assert_eq!(annotation.kind, AnnotationType::Test);
        assert_eq!(annotation.tracking_issue.as_deref(), Some("7"));
    }

    #[test]
    fn target_may_follow_fields_and_may_be_given_as_source() {
        let annotation = only("//= type=test\n//= https://example.com/spec.txt#s\n//# q\n");
        assert_eq!(annotation.target, "https://example.com/spec.txt#s");
        assert_eq!(annotation.kind, AnnotationType::Test);
        assert_eq!(annotation.line, 1);
        let annotation = only("//= source=spec/foo.md#bar\n//# q\n");
        assert_eq!(annotation.target, "spec/foo.md#bar");
    }

    #[test]
    fn target_with_query_string_is_not_a_field() {
        let annotation = only("//= https://example.com/doc?id=7&v=2#intro\n//# q\n");
        assert_eq!(annotation.target, "https://example.com/doc?id=7&v=2#intro");
    }

    #[test]
    fn relative_path_targets() {
        let annotation = only("//= spec/foo.md#bar\n//# The client MUST retry.\n");
        assert_eq!(annotation.target, "spec/foo.md#bar");
        assert_eq!(annotation.quote, "The client MUST retry.");
    }

    #[test]
    fn c_block_comment_style() {
        let text = "\
/*
 *= https://www.rfc-editor.org/rfc/rfc9000#section-4.5
 *= type=test
 *# An endpoint MUST NOT send data on a stream at or beyond the final
 *# size.
 */
int check(void);
";
        let (annotations, malformed) = extract(
            text,
            Path::new("tests/check.c"),
            &style("*=", "*#"),
            AnnotationType::Implementation,
        );
        assert!(malformed.is_empty(), "{malformed:#?}");
        assert_eq!(annotations.len(), 1);
        let annotation = &annotations[0];
        assert_eq!(annotation.line, 2);
        assert_eq!(annotation.kind, AnnotationType::Test);
        assert_eq!(
            annotation.quote,
            "An endpoint MUST NOT send data on a stream at or beyond the final size."
        );
        assert_eq!(
            annotation.comment_text,
            "*= https://www.rfc-editor.org/rfc/rfc9000#section-4.5\n*= type=test\n\
             *# An endpoint MUST NOT send data on a stream at or beyond the final\n*# size."
        );
    }

    #[test]
    fn hash_and_lisp_styles() {
        let python = "\
def close(self):
    #= https://www.rfc-editor.org/rfc/rfc9114#section-5.2
    ## Once GOAWAY is sent, the server MUST reject requests
    ## sent on streams with an identifier greater than or equal to the
    ## indicated identifier.
    pass
";
        let (annotations, malformed) = extract(
            python,
            Path::new("src/h3.py"),
            &style("#=", "##"),
            AnnotationType::Implementation,
        );
        assert!(malformed.is_empty(), "{malformed:#?}");
        assert_eq!(annotations.len(), 1);
        assert_eq!(annotations[0].line, 2);
        assert!(annotations[0].quote.ends_with("the indicated identifier."));

        let lisp = ";;= https://example.com/spec.md#eval\n;;# Forms MUST be evaluated left to right.\n(defun f ())\n";
        let (annotations, malformed) = extract(
            lisp,
            Path::new("src/eval.lisp"),
            &style(";;=", ";;#"),
            AnnotationType::Implementation,
        );
        assert!(malformed.is_empty());
        assert_eq!(annotations.len(), 1);
        assert_eq!(
            annotations[0].quote,
            "Forms MUST be evaluated left to right."
        );
    }

    #[test]
    fn duvet_python_style_and_prefixed_yaml_style() {
        let text = "##= https://example.com/spec.md#retry\n##% Clients SHOULD retry.\n";
        let (annotations, malformed) = extract(
            text,
            Path::new("src/a.py"),
            &style("##=", "##%"),
            AnnotationType::Implementation,
        );
        assert!(malformed.is_empty());
        assert_eq!(annotations.len(), 1);

        let yaml =
            "jobs:\n  # //= https://example.com/ci.md#checks\n  # //# CI MUST run duvet.\n  x: 1\n";
        let (annotations, malformed) = extract(
            yaml,
            Path::new(".github/workflows/duvet.yaml"),
            &style("# //=", "# //#"),
            AnnotationType::Implementation,
        );
        assert!(malformed.is_empty());
        assert_eq!(annotations.len(), 1);
        assert_eq!(annotations[0].quote, "CI MUST run duvet.");
    }

    #[test]
    fn overlapping_prefixes_prefer_the_longer() {
        // Content `//` is a prefix of meta `//=`.
        let (annotations, malformed) = extract(
            "//= https://example.com/s.txt#a\n// quoted text\n",
            Path::new("a.rs"),
            &style("//=", "//"),
            AnnotationType::Implementation,
        );
        assert!(malformed.is_empty());
        assert_eq!(annotations.len(), 1);
        assert_eq!(annotations[0].quote, "quoted text");
    }

    #[test]
    fn consecutive_annotations_split_at_meta_after_quote() {
        let (annotations, malformed) = run("\
//= https://example.com/spec.txt#section-1
//# first quote
//= https://example.com/spec.txt#section-2
//= type=test
//# second quote
//# continues
");
        assert!(malformed.is_empty(), "{malformed:#?}");
        assert_eq!(annotations.len(), 2);
        assert_eq!(annotations[0].line, 1);
        assert_eq!(annotations[0].quote, "first quote");
        assert_eq!(annotations[0].kind, AnnotationType::Implementation);
        assert_eq!(annotations[1].line, 3);
        assert_eq!(annotations[1].quote, "second quote continues");
        assert_eq!(annotations[1].kind, AnnotationType::Test);
        assert_eq!(
            annotations[1].comment_text,
            "//= https://example.com/spec.txt#section-2\n//= type=test\n//# second quote\n//# continues"
        );
    }

    #[test]
    fn blank_or_code_line_ends_an_annotation() {
        let (annotations, malformed) = run("\
//= https://example.com/spec.txt#a
//# quote a

//# stray quote after a blank line
let x = 1;
//= https://example.com/spec.txt#b
//# quote b
let y = 2;
//# stray after code
");
        assert_eq!(annotations.len(), 2);
        assert_eq!(annotations[0].quote, "quote a");
        assert_eq!(annotations[1].quote, "quote b");
        assert_eq!(malformed.len(), 2, "{malformed:#?}");
        assert_eq!(malformed[0].line, 4);
        assert_eq!(malformed[0].text, "//# stray quote after a blank line");
        assert!(malformed[0].reason.contains("without a meta line"));
        assert_eq!(malformed[1].line, 9);
    }

    #[test]
    fn empty_content_lines_continue_the_annotation() {
        let annotation = only(
            "//= https://example.com/spec.txt#s\n//# first paragraph\n//#\n//# second paragraph\n",
        );
        assert_eq!(annotation.quote, "first paragraph second paragraph");
        assert_eq!(annotation.comment_text.lines().count(), 4);
    }

    #[test]
    fn quote_is_optional_when_the_target_names_a_section() {
        let annotation = only("//= https://example.com/spec.txt#section-3\n//= type=todo\n");
        assert_eq!(annotation.quote, "");
        assert_eq!(annotation.kind, AnnotationType::Todo);
    }

    #[test]
    fn malformed_no_quote_and_no_section() {
        let (annotations, malformed) =
            run("fn a() {}\n//= https://example.com/spec.txt\nfn b() {}\n");
        assert!(annotations.is_empty());
        assert_eq!(malformed.len(), 1);
        assert_eq!(malformed[0].line, 2);
        assert_eq!(malformed[0].text, "//= https://example.com/spec.txt");
        assert!(
            malformed[0].reason.contains("names no section"),
            "{}",
            malformed[0].reason
        );
        // An empty fragment names no section either.
        let (annotations, malformed) = run("//= https://example.com/spec.txt#\n");
        assert!(annotations.is_empty());
        assert_eq!(malformed.len(), 1);
    }

    #[test]
    fn malformed_unknown_key() {
        let (annotations, malformed) =
            run("//= https://example.com/spec.txt#s\n//= priority=high\n//# Here is my citation\n");
        assert!(annotations.is_empty());
        assert_eq!(malformed.len(), 1);
        let problem = &malformed[0];
        assert_eq!(problem.file, PathBuf::from("src/stream.rs"));
        assert_eq!(problem.line, 2);
        assert_eq!(problem.text, "//= priority=high");
        assert!(
            problem.reason.contains("unknown key `priority`"),
            "{}",
            problem.reason
        );
    }

    #[test]
    fn malformed_unknown_type_level_and_format() {
        let (annotations, malformed) = run("\
//= https://example.com/spec.txt#s
//= type=implements
//= level=MUSTN'T
//= format=html
//# q
");
        assert!(annotations.is_empty());
        let lines: Vec<_> = malformed.iter().map(|m| m.line).collect();
        assert_eq!(lines, [2, 3, 4]);
        assert!(
            malformed[0]
                .reason
                .contains("unknown annotation type `implements`")
        );
        assert!(malformed[1].reason.contains("unknown level `MUSTN'T`"));
        assert!(malformed[2].reason.contains("unknown format `html`"));
    }

    #[test]
    fn malformed_fields_before_any_target() {
        let (annotations, malformed) = run("//= type=todo\n");
        assert!(annotations.is_empty());
        assert_eq!(malformed.len(), 1);
        assert_eq!(malformed[0].line, 1);
        assert_eq!(malformed[0].text, "//= type=todo");
        assert!(malformed[0].reason.contains("without a target"));

        let (annotations, malformed) =
            run("    //= type=test\n    //= level=MUST\n    //# quote\n");
        assert!(annotations.is_empty());
        assert_eq!(malformed.len(), 1);
        assert_eq!(
            malformed[0].text,
            "//= type=test\n//= level=MUST\n//# quote"
        );
    }

    #[test]
    fn malformed_content_without_meta() {
        let (annotations, malformed) = run("    //# This is some content without meta\n");
        assert!(annotations.is_empty());
        assert_eq!(malformed.len(), 1);
        assert_eq!(malformed[0].line, 1);
        assert_eq!(malformed[0].text, "//# This is some content without meta");
    }

    #[test]
    fn malformed_duplicates_and_empty_values() {
        let (annotations, malformed) = run("\
//= https://example.com/spec.txt#a
//= https://example.com/spec.txt#b
//= type=test
//= type=implementation
//= feature=
//=
//# q
");
        assert!(annotations.is_empty());
        let lines: Vec<_> = malformed.iter().map(|m| m.line).collect();
        assert_eq!(lines, [2, 4, 5, 6], "{malformed:#?}");
        assert!(malformed[0].reason.contains("second target"));
        assert!(
            malformed[1]
                .reason
                .contains("given twice (first on line 3)")
        );
        assert!(malformed[2].reason.contains("`feature` has no value"));
        assert!(malformed[3].reason.contains("empty meta line"));
    }

    #[test]
    fn one_bad_annotation_does_not_hide_the_next() {
        let (annotations, malformed) = run("\
//= https://example.com/spec.txt#a
//= kind=test
//# a
//= https://example.com/spec.txt#b
//# b
");
        assert_eq!(annotations.len(), 1);
        assert_eq!(annotations[0].target, "https://example.com/spec.txt#b");
        assert_eq!(malformed.len(), 1);
        assert_eq!(malformed[0].line, 2);
    }

    #[test]
    fn banners_are_not_annotations() {
        let (annotations, malformed) =
            run("//=========================\n// Section\n//#########\n");
        assert!(annotations.is_empty());
        assert!(malformed.is_empty(), "{malformed:#?}");
        let (annotations, malformed) = extract(
            "##########\n## just a comment heading? no: content style\n",
            Path::new("a.py"),
            &style("#=", "##"),
            AnnotationType::Implementation,
        );
        assert!(annotations.is_empty());
        // A `##` comment with text is content without meta; the banner line is not.
        assert_eq!(malformed.len(), 1);
        assert_eq!(malformed[0].line, 2);
    }

    #[test]
    fn missing_final_newline_crlf_and_bom() {
        let annotation = only("//= https://example.com/spec.txt#s\n//# Here is my citation");
        assert_eq!(annotation.quote, "Here is my citation");
        let annotation = only("\u{feff}//= https://example.com/spec.txt#s\r\n//# crlf quote\r\n");
        assert_eq!(annotation.target, "https://example.com/spec.txt#s");
        assert_eq!(annotation.quote, "crlf quote");
        assert_eq!(
            annotation.comment_text,
            "//= https://example.com/spec.txt#s\n//# crlf quote"
        );
    }

    #[test]
    fn unicode_text_is_safe() {
        let annotation = only(
            "\t//= https://example.com/spëc.md#größe\n\t//#   Ein Endpunkt MUSS „Grüße“ senden. 🎉  \n",
        );
        assert_eq!(annotation.target, "https://example.com/spëc.md#größe");
        assert_eq!(annotation.quote, "Ein Endpunkt MUSS „Grüße“ senden. 🎉");
        // Multi-byte characters right after a prefix, and where a key would be.
        let (annotations, malformed) = run("//=é\n//#é\n//=ü=1\n//=\u{0301}=x\n");
        assert_eq!(annotations.len(), 1);
        assert_eq!(annotations[0].target, "é");
        assert_eq!(annotations[0].quote, "é");
        // `ü=1` is a target (not an ASCII key); the next line is a second target, and the
        // annotation has neither quote nor section.
        let lines: Vec<_> = malformed.iter().map(|m| m.line).collect();
        assert_eq!(lines, [3, 4], "{malformed:#?}");
    }

    #[test]
    fn empty_prefixes_never_match() {
        let (annotations, malformed) = extract(
            "anything\n//= https://example.com/s#a\n//# q\n",
            Path::new("a.rs"),
            &style("", ""),
            AnnotationType::Implementation,
        );
        assert!(annotations.is_empty());
        assert!(malformed.is_empty());
    }

    #[test]
    fn arbitrary_input_does_not_panic() {
        let inputs = [
            "",
            "\n\n\n",
            "//=",
            "//#",
            "//= =",
            "//= ==",
            "//= a=",
            "//= #",
            "//= #section",
            "\u{feff}",
            "//=\u{feff}x",
            "//= \u{10ffff}=\u{0}",
            "\r\r\n//=\r",
            "//= https://x#s\n//= reason=\n//#\n",
        ];
        for input in inputs {
            let _ = run(input);
            let _ = extract(
                input,
                Path::new("x"),
                &style("=", "#"),
                AnnotationType::Spec,
            );
            let _ = extract(
                input,
                Path::new("x"),
                &style("é", "ü"),
                AnnotationType::Spec,
            );
        }
    }
}
