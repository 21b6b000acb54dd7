//! Annotations: citations in source comments and entries of requirement TOML files, which
//! Duvet treats alike.

pub mod source;
pub mod toml_file;

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// What an annotation says about the quoted text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AnnotationType {
    /// Code implementing the text (`citation` is an alias). The default.
    Implementation,
    /// A test of the text.
    Test,
    /// Work still to do.
    Todo,
    /// The text is deliberately not implemented, with a reason.
    Exception,
    /// The text is implied by other code (counts as implemented).
    Implication,
    /// The text is a requirement (requirement files and `type=spec`).
    Spec,
}

impl AnnotationType {
    /// Parse a `type=` value; `citation` is an alias of `implementation`.
    pub fn parse(value: &str) -> Option<Self> {
        Some(match value.trim().to_ascii_lowercase().as_str() {
            "implementation" | "citation" => Self::Implementation,
            "test" => Self::Test,
            "todo" => Self::Todo,
            "exception" => Self::Exception,
            "implication" => Self::Implication,
            "spec" => Self::Spec,
            _ => return None,
        })
    }
}

/// A requirement level (RFC 2119).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
pub enum Level {
    #[serde(rename = "MUST")]
    Must,
    #[serde(rename = "SHOULD")]
    Should,
    #[serde(rename = "MAY")]
    May,
}

impl Level {
    /// Parse `MUST`/`SHOULD`/`MAY` (any case) and their synonyms (`SHALL`, `REQUIRED`,
    /// `RECOMMENDED`, `OPTIONAL`, with or without `NOT`).
    pub fn parse(value: &str) -> Option<Self> {
        let upper = value.trim().to_ascii_uppercase();
        let word = upper.strip_suffix(" NOT").unwrap_or(&upper);
        let word = word.strip_prefix("NOT ").unwrap_or(word);
        Some(match word {
            "MUST" | "SHALL" | "REQUIRED" => Self::Must,
            "SHOULD" | "RECOMMENDED" => Self::Should,
            "MAY" | "OPTIONAL" => Self::May,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Must => "MUST",
            Self::Should => "SHOULD",
            Self::May => "MAY",
        }
    }
}

/// One annotation, from a source comment or a requirement file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Annotation {
    /// The file it was read from, relative to the project root.
    pub file: PathBuf,
    /// 1-based line of the annotation's first meta line (source) or of its table header or
    /// `target` line (TOML).
    pub line: usize,
    /// The target as written: `URL#section` or `path#section` (the fragment may be absent).
    pub target: String,
    /// The quoted text: content lines joined by single spaces (may be empty).
    pub quote: String,
    pub kind: AnnotationType,
    pub level: Option<Level>,
    /// `format=` as written, if any.
    pub format: Option<String>,
    pub reason: Option<String>,
    pub feature: Option<String>,
    pub tracking_issue: Option<String>,
    /// The annotation as written: its lines, trimmed, joined with `\n`.
    pub comment_text: String,
    /// What duvet's reports call its comment: a requirement file's quote as written, an
    /// exception's or TODO's reason as written, a source annotation's reasons joined.
    pub comment: String,
    /// The tags of a requirement file's TODO, sorted, each once.
    pub tags: Vec<String>,
}

/// A comment that looks like an annotation but cannot be one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Malformed {
    pub file: PathBuf,
    pub line: usize,
    /// The offending text as written.
    pub text: String,
    /// Why it is not a valid annotation, for a person to read.
    pub reason: String,
    /// For quote lines with no target line before them: the text they quote (lines trimmed,
    /// joined by single spaces). Such a run is a slip only when that text is a
    /// specification's (decided by the model); otherwise it is an ordinary comment that
    /// happens to start like a quote line, such as a commented-out `//#[attribute]`.
    pub orphan_quote: Option<String>,
}

/// The comment prefixes that mark annotations in a source file.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CommentStyle {
    /// Prefix of meta lines (target and `key=value`), default `//=`.
    pub meta: String,
    /// Prefix of content lines (the quote), default `//#`.
    pub content: String,
}

impl Default for CommentStyle {
    fn default() -> Self {
        Self {
            meta: "//=".to_string(),
            content: "//#".to_string(),
        }
    }
}
