//! The project's Duvet configuration: `.duvet/config.toml` (Duvet 0.4 and later) or the legacy
//! command-line flags of Duvet 0.1–0.3 (`--source-pattern`, `--spec-pattern`, `--spec-path`).
//!
//! A config file looks like this (as `duvet init` writes it, plus a few entries):
//!
//! ```toml
//! '$schema' = "https://awslabs.github.io/duvet/config/v0.4.0.json"
//!
//! [[source]]
//! pattern = "src/**/*.c"
//! comment-style = { meta = "*=", content = "*#" }
//!
//! [[source]]
//! pattern = "tests/**/*.rs"
//! type = "test"
//!
//! [[requirement]]
//! pattern = "compliance/**/*.toml"
//!
//! [[specification]]
//! source = "https://www.rfc-editor.org/rfc/rfc9000"
//! format = "ietf"
//!
//! [report.html]
//! enabled = true
//! ```
//!
//! Facts from Duvet's `config/schema/v0_4_0.rs` and `config.rs`, and how they are used here:
//!
//! * `[[source]]`: `pattern` (required), `comment-style = { meta, content }` (each defaulting to
//!   `//=` and `//#`), `type` (default `implementation`), `blob-link` (the link the reports
//!   give these files' annotations; a `${{ VAR || 'default' }}` template).
//! * `[[requirement]]`: `pattern`. The patterns `.duvet/requirements/**/*.toml`,
//!   `.duvet/todos/**/*.toml` and `.duvet/exceptions/**/*.toml` are always included.
//! * `[[specification]]`: `source` (URL or path) and `format` (`ietf`/`IETF`, `markdown`/`md`).
//! * Downloaded specifications live in `specifications/` next to the config file, i.e.
//!   `.duvet/specifications/<host>/<path>.txt` for the default config.
//! * Other top-level keys (`$schema`, `[report.*]`, `[duplicates.*]`, ...) are accepted and
//!   ignored. Unknown keys inside the tables above are ignored with a warning (newer Duvet
//!   versions add keys; Duvet itself rejects unknown keys).
//! * Legacy projects: `--source-pattern '(*=,*#)src/**/*.c'` names a source pattern with its
//!   comment style, `--spec-pattern` a pattern of requirement TOML files, and `--spec-path DIR`
//!   the directory *containing* the `specs/` download directory (Duvet's documented meaning:
//!   "The collection of spec files are stored in a folder called `specs`. The `specs` folder is
//!   stored in the current directory by default."), so the cache is `<DIR>/specs`, by default
//!   `<root>/specs`, holding e.g. `specs/www.rfc-editor.org/rfc/rfc9000.txt`.
//! * As in Duvet, flag patterns are added to those of a config file when both are present.

use std::path::{Component, Path, PathBuf};

use toml::Spanned;
use toml::de::{DeTable, DeValue};

use crate::annotation::{AnnotationType, CommentStyle};
use crate::spec::Format;

/// Requirement patterns Duvet always includes for config projects.
pub const DEFAULT_REQUIREMENT_PATTERNS: [&str; 3] = [
    ".duvet/requirements/**/*.toml",
    ".duvet/todos/**/*.toml",
    ".duvet/exceptions/**/*.toml",
];

/// A group of source files to scan for annotations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceSpec {
    /// Glob pattern relative to the project root, e.g. `src/**/*.rs`.
    pub pattern: String,
    /// The comment prefixes annotations use in these files.
    pub style: CommentStyle,
    /// The type of annotations without `type=`.
    pub default_type: AnnotationType,
    /// `blob-link`: where the reports link these files' annotations to (instead of the run's
    /// `--blob-link`/`[report.html] blob-link`), as written: its `${{ VAR || 'default' }}`
    /// templates are filled by the report ([`crate::report::settings::SourceLinks`]). Only a
    /// config file's `[[source]]` has one.
    pub blob_link: Option<String>,
}

/// A specification the project declares (`[[specification]]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecSpec {
    /// URL or path relative to the project root, as written.
    pub source: String,
    /// The declared format; `None` means detect it (see [`Format::detect`]).
    pub format: Option<Format>,
}

/// Everything needed to find a project's annotations, requirements and specifications.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectConfig {
    /// The project root (absolute); patterns are relative to it.
    pub root: PathBuf,
    /// The config file read, if any (absolute).
    pub config_file: Option<PathBuf>,
    /// Source patterns: the config's `[[source]]` entries, then `--source-pattern` flags.
    pub sources: Vec<SourceSpec>,
    /// The config's `[[specification]]` entries (none for flag projects).
    pub specifications: Vec<SpecSpec>,
    /// Glob patterns of requirement TOML files: for config projects Duvet's defaults, the
    /// config's `[[requirement]]` entries, then `--spec-pattern` flags; for flag projects the
    /// `--spec-pattern` flags.
    pub requirement_patterns: Vec<String>,
    /// Where downloaded specifications are cached (absolute): `specifications/` beside the
    /// config file (`<root>/.duvet/specifications`), or for flag projects
    /// `<root>/<spec-path>/specs` (`<root>/specs` without `--spec-path`). See [`cache_path`].
    pub spec_cache_dir: PathBuf,
}

/// The legacy command-line flags (and `--config`), as given to `duvet mcp`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Flags {
    /// `--spec-pattern`: glob patterns of requirement TOML files.
    pub spec_patterns: Vec<String>,
    /// `--source-pattern`: source globs, optionally prefixed with `(META,CONTENT)`.
    pub source_patterns: Vec<String>,
    /// `--spec-path`: the directory holding the `specs/` download cache.
    pub spec_path: Option<PathBuf>,
    /// `--config`: a config file to read instead of `<root>/.duvet/config.toml`.
    pub config: Option<PathBuf>,
}

/// Why a project's configuration could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// No config file and no flags.
    #[error(
        "no Duvet configuration: {} does not exist and no --source-pattern or --spec-pattern \
         flags were given; start duvet mcp in the project's root or point at it with --root DIR \
         (or at the file with --config FILE), create the file (with [[source]] and \
         [[specification]] entries, as upstream Duvet 0.4's init command writes it), or \
         describe the project with the flags",
        path.display()
    )]
    NoConfig {
        /// The config file looked for.
        path: PathBuf,
    },
    /// The file named by `--config` does not exist.
    #[error("config file {} (from --config) does not exist or is not a file", path.display())]
    NotFound {
        /// The file named.
        path: PathBuf,
    },
    /// The config file exists but cannot be read.
    #[error("cannot read config file {}: {source}", path.display())]
    Read {
        /// The config file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The config file is not valid TOML or does not fit Duvet's schema.
    #[error("invalid config file {}: {message}", path.display())]
    Invalid {
        /// The config file.
        path: PathBuf,
        /// The problem, with its line.
        message: String,
    },
    /// A `--source-pattern` or `--spec-pattern` flag cannot be used.
    #[error("invalid {flag} `{value}`: {message}")]
    Flag {
        /// The flag, e.g. `--source-pattern`.
        flag: &'static str,
        /// The value given.
        value: String,
        /// The problem.
        message: String,
    },
}

/// Load the configuration of the project at `root`.
///
/// Reads `flags.config` (relative to `root` unless absolute; it must exist) or else
/// `<root>/.duvet/config.toml` if it exists, then adds the flag patterns. Without a config
/// file the flags alone describe the project; with neither, the error says how to create a
/// config. Paths in the result are absolute when `root` can be made absolute.
pub fn load(root: &Path, flags: &Flags) -> Result<ProjectConfig, ConfigError> {
    let root = std::path::absolute(root).unwrap_or_else(|_| root.to_path_buf());
    let default_config = root.join(".duvet").join("config.toml");
    let config_file = match &flags.config {
        Some(path) => {
            let path = root.join(path);
            if !path.is_file() {
                return Err(ConfigError::NotFound { path });
            }
            Some(path)
        }
        None => default_config.is_file().then(|| default_config.clone()),
    };

    let mut flag_sources = Vec::with_capacity(flags.source_patterns.len());
    for flag in &flags.source_patterns {
        let source = parse_source_pattern(flag).map_err(|message| ConfigError::Flag {
            flag: "--source-pattern",
            value: flag.clone(),
            message,
        })?;
        flag_sources.push(source);
    }
    let mut flag_requirements = Vec::with_capacity(flags.spec_patterns.len());
    for flag in &flags.spec_patterns {
        let pattern = check_glob(flag).map_err(|message| ConfigError::Flag {
            flag: "--spec-pattern",
            value: flag.clone(),
            message,
        })?;
        flag_requirements.push(pattern);
    }

    let mut config = match config_file {
        Some(path) => {
            let text =
                crate::output::read_to_string(&path).map_err(|source| ConfigError::Read {
                    path: path.clone(),
                    source,
                })?;
            let file = parse_config(&text).map_err(|message| ConfigError::Invalid {
                path: path.clone(),
                message,
            })?;
            let cache_base = path
                .parent()
                .map_or_else(|| root.join(".duvet"), Path::to_path_buf);
            ProjectConfig {
                root,
                config_file: Some(path),
                sources: file.sources,
                specifications: file.specifications,
                requirement_patterns: DEFAULT_REQUIREMENT_PATTERNS
                    .iter()
                    .map(|pattern| (*pattern).to_string())
                    .chain(file.requirements)
                    .collect(),
                spec_cache_dir: cache_base.join("specifications"),
            }
        }
        None => {
            if flag_sources.is_empty() && flag_requirements.is_empty() {
                return Err(ConfigError::NoConfig {
                    path: default_config,
                });
            }
            // The issue's contract: `--spec-path DIR` is where the cached texts live (default
            // `specs`). Duvet 0.1–0.3 appended `specs` to its spec path; the loader also looks
            // in `DIR/specs` so that `--spec-path .` projects keep working.
            let spec_cache_dir = match &flags.spec_path {
                Some(dir) => root.join(dir),
                None => root.join("specs"),
            };
            ProjectConfig {
                root,
                config_file: None,
                sources: Vec::new(),
                specifications: Vec::new(),
                requirement_patterns: Vec::new(),
                spec_cache_dir,
            }
        }
    };

    for source in flag_sources {
        if !config.sources.contains(&source) {
            config.sources.push(source);
        }
    }
    for pattern in flag_requirements {
        if !config.requirement_patterns.contains(&pattern) {
            config.requirement_patterns.push(pattern);
        }
    }
    Ok(config)
}

/// Parse a `--source-pattern` value: `(META,CONTENT)PATTERN` or a bare `PATTERN` (default
/// style `//=`/`//#`), e.g. `(*=,*#)src/**/*.c` → meta `*=`, content `*#`, pattern
/// `src/**/*.c`.
///
/// As in Duvet the style ends at the first `)` and empty parts between commas are skipped;
/// here each prefix is also trimmed, exactly two must remain and they must differ, and the
/// pattern must be a valid glob. Annotations default to `implementation`.
pub fn parse_source_pattern(flag: &str) -> Result<SourceSpec, String> {
    let flag = flag.trim();
    let Some(rest) = flag.strip_prefix('(') else {
        return Ok(SourceSpec {
            pattern: check_glob(flag)?,
            style: CommentStyle::default(),
            default_type: AnnotationType::Implementation,
            blob_link: None,
        });
    };
    let Some((style, pattern)) = rest.split_once(')') else {
        return Err(
            "the comment style opened by `(` is not closed; expected `(META,CONTENT)PATTERN`, \
             e.g. `(*=,*#)src/**/*.c`"
                .to_string(),
        );
    };
    let prefixes: Vec<&str> = style
        .split(',')
        .map(str::trim)
        .filter(|prefix| !prefix.is_empty())
        .collect();
    let [meta, content] = prefixes.as_slice() else {
        return Err(format!(
            "the comment style `({style})` must name two prefixes, META and CONTENT, separated \
             by a comma, e.g. `(*=,*#)`"
        ));
    };
    let style = comment_style(meta, content)?;
    Ok(SourceSpec {
        pattern: check_glob(pattern)?,
        style,
        default_type: AnnotationType::Implementation,
        blob_link: None,
    })
}

/// The file a downloaded specification is cached in, as Duvet names it: `cache_dir`, the
/// URL's host, its path segments, and the extension replaced by (or set to) `txt`.
///
/// * `https://www.rfc-editor.org/rfc/rfc9114` → `cache_dir/www.rfc-editor.org/rfc/rfc9114.txt`
/// * RFC links at `www.rfc-editor.org`, `tools.ietf.org` and `datatracker.ietf.org/doc/html`
///   (http or https, with `.txt`, `.html`, `.xml`, `.pdf` or a trailing `/`) are first rewritten
///   to `https://www.rfc-editor.org/rfc/rfcN.txt`, as current Duvet does, so they share one
///   file. (Duvet 0.1–0.3 did not rewrite when naming the file: its cache held e.g.
///   `specs/tools.ietf.org/rfc/rfc9000.txt`.)
/// * Other URLs keep their path; an existing extension is *replaced*
///   (`…/keyring-interface.md` → `…/keyring-interface.txt`), a trailing `/` is dropped, and the
///   query and fragment are ignored. This is `PathBuf::set_extension("txt")`, exactly what
///   Duvet does.
///
/// Returns `None` when `url` is not a URL with a host (relative paths, `file:` URLs), or when a
/// path segment could leave `cache_dir`.
pub fn cache_path(cache_dir: &Path, url: &str) -> Option<PathBuf> {
    let (spec, _) = target_parts(url.trim());
    if !spec.contains("://") {
        return None;
    }
    let canonical = canonical_url(&spec);
    let parsed = url::Url::parse(&canonical).ok()?;
    let host = parsed.host_str()?;
    if !is_plain_component(host) {
        return None;
    }
    let mut path = cache_dir.to_path_buf();
    path.push(host);
    for segment in parsed.path_segments()? {
        // An empty segment (`a//b`, trailing `/`) adds nothing, as in Duvet.
        if !segment.is_empty() && !is_plain_component(segment) {
            return None;
        }
        path.push(segment);
    }
    path.set_extension("txt");
    path.starts_with(cache_dir).then_some(path)
}

/// Split a target `URL#section` (or `path#section`) at its first `#` into the specification
/// part and the section id (without `#`; `None` when absent or empty).
pub fn target_parts(target: &str) -> (String, Option<String>) {
    match target.split_once('#') {
        Some((spec, section)) => (
            spec.to_string(),
            (!section.is_empty()).then(|| section.to_string()),
        ),
        None => (target.to_string(), None),
    }
}

/// Rewrite IETF RFC links to the canonical `https://www.rfc-editor.org/rfc/rfcN.txt`, as
/// Duvet's `TargetPath::canonical_url`.
pub(crate) fn canonical_url(url: &str) -> String {
    const PATTERNS: [&str; 6] = [
        "https://www.rfc-editor.org/rfc/rfc",
        "http://www.rfc-editor.org/rfc/rfc",
        "https://tools.ietf.org/rfc/rfc",
        "http://tools.ietf.org/rfc/rfc",
        "https://datatracker.ietf.org/doc/html/rfc",
        "http://datatracker.ietf.org/doc/html/rfc",
    ];
    for pattern in PATTERNS {
        if let Some(rfc) = url.strip_prefix(pattern) {
            let rfc = rfc
                .trim_end_matches('/')
                .trim_end_matches(".txt")
                .trim_end_matches(".html")
                .trim_end_matches(".xml")
                .trim_end_matches(".pdf");
            return format!("{}{rfc}.txt", PATTERNS[0]);
        }
    }
    url.to_string()
}

/// Whether `part` is a single ordinary path component (not `.`, `..`, a root, or anything with
/// a separator).
fn is_plain_component(part: &str) -> bool {
    if part.contains(['/', '\\', '\0']) {
        return false;
    }
    let mut components = Path::new(part).components();
    matches!(
        (components.next(), components.next()),
        (Some(Component::Normal(_)), None)
    )
}

/// `pattern` trimmed, if it is a non-empty valid glob.
fn check_glob(pattern: &str) -> Result<String, String> {
    let pattern = pattern.trim();
    if pattern.is_empty() {
        return Err("the pattern is empty".to_string());
    }
    globset::Glob::new(pattern).map_err(|error| format!("invalid glob `{pattern}`: {error}"))?;
    Ok(pattern.to_string())
}

/// A comment style from its two prefixes (trimmed), which must be non-empty and differ.
fn comment_style(meta: &str, content: &str) -> Result<CommentStyle, String> {
    let (meta, content) = (meta.trim(), content.trim());
    if meta.is_empty() || content.is_empty() {
        return Err("comment-style prefixes must not be empty".to_string());
    }
    if meta == content {
        return Err(format!(
            "the meta and content prefixes are both `{meta}`; they must differ"
        ));
    }
    Ok(CommentStyle {
        meta: meta.to_string(),
        content: content.to_string(),
    })
}

/// What a config file declares.
struct ConfigFile {
    sources: Vec<SourceSpec>,
    requirements: Vec<String>,
    specifications: Vec<SpecSpec>,
}

/// Parse the text of a config file; errors name the line.
fn parse_config(text: &str) -> Result<ConfigFile, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let document = DeTable::parse(text).map_err(|error| {
        let offset = error.span().map_or(0, |span| span.start);
        format!(
            "line {}: invalid TOML: {}",
            line_of(text, offset),
            error.message().trim()
        )
    })?;
    let at = |offset: usize, message: String| format!("line {}: {message}", line_of(text, offset));

    let mut config = ConfigFile {
        sources: Vec::new(),
        requirements: Vec::new(),
        specifications: Vec::new(),
    };
    // Entries in file order, whatever the map's order.
    let mut entries: Vec<(&str, &DeTable<'_>, usize)> = Vec::new();
    for (key, value) in document.get_ref().iter() {
        let name = key.get_ref().as_ref();
        if !matches!(name, "source" | "requirement" | "specification") {
            tracing::debug!(key = name, "config: ignoring top-level key");
            continue;
        }
        match value.get_ref() {
            DeValue::Array(items) => {
                for item in items.iter() {
                    let Some(table) = item.get_ref().as_table() else {
                        return Err(at(
                            item.span().start,
                            format!("`{name}` must hold tables, written `[[{name}]]`"),
                        ));
                    };
                    entries.push((name, table, item.span().start));
                }
            }
            DeValue::Table(table) => entries.push((name, table, value.span().start)),
            _ => {
                return Err(at(
                    value.span().start,
                    format!("`{name}` must be an array of tables, written `[[{name}]]`"),
                ));
            }
        }
    }
    entries.sort_by_key(|(_, _, offset)| *offset);

    for (name, table, offset) in entries {
        let entry = EntryReader {
            text,
            name,
            table,
            offset,
        };
        match name {
            "source" => config.sources.push(entry.source()?),
            "requirement" => config.requirements.push(entry.requirement()?),
            _ => config.specifications.push(entry.specification()?),
        }
    }
    Ok(config)
}

/// Reads one `[[source]]`, `[[requirement]]` or `[[specification]]` table.
struct EntryReader<'a, 'i> {
    text: &'a str,
    name: &'a str,
    table: &'a DeTable<'i>,
    /// Offset of the table's header.
    offset: usize,
}

impl EntryReader<'_, '_> {
    /// An error about this entry, at `offset` (or the header).
    fn error(&self, offset: Option<usize>, message: String) -> String {
        format!(
            "line {}: [[{}]]: {message}",
            line_of(self.text, offset.unwrap_or(self.offset)),
            self.name
        )
    }

    /// Warn about keys other than `known` (newer Duvet versions add keys; Duvet itself rejects
    /// unknown ones).
    fn warn_unknown(&self, table: &DeTable<'_>, known: &[&str]) {
        for key in table.keys() {
            let key_name = key.get_ref().as_ref();
            if !known.contains(&key_name) {
                tracing::warn!(
                    line = line_of(self.text, key.span().start),
                    table = self.name,
                    key = key_name,
                    "config: ignoring unknown key"
                );
            }
        }
    }

    /// The string at `key` of `table`, if present; an error if it is not a string.
    fn string<'t>(&self, table: &'t DeTable<'_>, key: &str) -> Result<Option<&'t str>, String> {
        match table.get(key) {
            None => Ok(None),
            Some(value) => match value.get_ref().as_str() {
                Some(string) => Ok(Some(string)),
                None => Err(self.error(
                    Some(value.span().start),
                    format!("`{key}` must be a string"),
                )),
            },
        }
    }

    /// The required string at `key`, trimmed and non-empty.
    fn required(&self, key: &str) -> Result<String, String> {
        match self.string(self.table, key)? {
            Some(value) if !value.trim().is_empty() => Ok(value.trim().to_string()),
            Some(_) => Err(self.error(self.span_of(key), format!("`{key}` is empty"))),
            None => Err(self.error(None, format!("missing `{key}`"))),
        }
    }

    fn span_of(&self, key: &str) -> Option<usize> {
        self.table
            .get(key)
            .map(|value: &Spanned<DeValue<'_>>| value.span().start)
    }

    fn pattern(&self) -> Result<String, String> {
        let pattern = self.required("pattern")?;
        check_glob(&pattern).map_err(|message| self.error(self.span_of("pattern"), message))
    }

    fn source(&self) -> Result<SourceSpec, String> {
        self.warn_unknown(
            self.table,
            &["pattern", "comment-style", "type", "blob-link"],
        );
        let pattern = self.pattern()?;
        let style = match self.table.get("comment-style") {
            None => CommentStyle::default(),
            Some(value) => {
                let Some(style) = value.get_ref().as_table() else {
                    return Err(self.error(
                        Some(value.span().start),
                        "`comment-style` must be a table such as { meta = \"*=\", content = \"*#\" }"
                            .to_string(),
                    ));
                };
                self.warn_unknown(style, &["meta", "content"]);
                let defaults = CommentStyle::default();
                let meta = self.string(style, "meta")?.unwrap_or(&defaults.meta);
                let content = self.string(style, "content")?.unwrap_or(&defaults.content);
                comment_style(meta, content)
                    .map_err(|message| self.error(Some(value.span().start), message))?
            }
        };
        let default_type = match self.string(self.table, "type")? {
            None => AnnotationType::Implementation,
            Some(value) => AnnotationType::parse(value).ok_or_else(|| {
                self.error(
                    self.span_of("type"),
                    format!(
                        "unknown type `{value}`; expected implementation, spec, test, \
                         exception, todo or implication"
                    ),
                )
            })?,
        };
        let blob_link = self.string(self.table, "blob-link")?.map(str::to_string);
        Ok(SourceSpec {
            pattern,
            style,
            default_type,
            blob_link,
        })
    }

    fn requirement(&self) -> Result<String, String> {
        self.warn_unknown(self.table, &["pattern"]);
        self.pattern()
    }

    fn specification(&self) -> Result<SpecSpec, String> {
        self.warn_unknown(self.table, &["source", "format"]);
        let source = self.required("source")?;
        let format = match self.string(self.table, "format")? {
            None => None,
            Some(value) => match value.trim().to_ascii_lowercase().as_str() {
                "ietf" => Some(Format::Ietf),
                "markdown" | "md" => Some(Format::Markdown),
                _ => {
                    return Err(self.error(
                        self.span_of("format"),
                        format!("unknown format `{value}`; expected ietf or markdown (or md)"),
                    ));
                }
            },
        };
        Ok(SpecSpec { source, format })
    }
}

/// The 1-based line of byte `offset` in `text`.
fn line_of(text: &str, offset: usize) -> usize {
    let bytes = text.as_bytes();
    bytes
        .get(..offset.min(bytes.len()))
        .unwrap_or_default()
        .iter()
        .filter(|&&byte| byte == b'\n')
        .count()
        + 1
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    /// A temporary project directory, removed on drop.
    struct Project(tempfile::TempDir);

    impl Project {
        fn new() -> Self {
            Self(tempfile::tempdir().unwrap())
        }

        fn root(&self) -> &Path {
            self.0.path()
        }

        fn write(&self, rel: &str, text: &str) -> PathBuf {
            let path = self.root().join(rel);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(&path, text).unwrap();
            path
        }
    }

    fn style(meta: &str, content: &str) -> CommentStyle {
        CommentStyle {
            meta: meta.to_string(),
            content: content.to_string(),
        }
    }

    /// The config `duvet init --lang-c --lang-rust --specification ...` writes.
    const INIT_CONFIG: &str = r#"'$schema' = "https://awslabs.github.io/duvet/config/v0.4.0.json"

[[source]]
pattern = "src/**/*.c"
comment-style = { meta = "*=", content = "*#" }

[[source]]
pattern = "src/**/*.rs"

[[specification]]
source = "https://www.rfc-editor.org/rfc/rfc9000"
[report.html]
enabled = true

# Enable snapshots to prevent requirement coverage regressions
[report.snapshot]
enabled = true

# Duplicate policy for `duvet query --check duplicates`
# [duplicates.claims]
# test = 1
"#;

    #[test]
    fn config_project_from_duvet_init() {
        let project = Project::new();
        let config_path = project.write(".duvet/config.toml", INIT_CONFIG);
        let config = load(project.root(), &Flags::default()).unwrap();
        assert_eq!(config.root, project.root());
        assert_eq!(config.config_file.as_deref(), Some(config_path.as_path()));
        assert_eq!(
            config.sources,
            [
                SourceSpec {
                    pattern: "src/**/*.c".to_string(),
                    style: style("*=", "*#"),
                    default_type: AnnotationType::Implementation,
                    blob_link: None,
                },
                SourceSpec {
                    pattern: "src/**/*.rs".to_string(),
                    style: CommentStyle::default(),
                    default_type: AnnotationType::Implementation,
                    blob_link: None,
                },
            ]
        );
        assert_eq!(
            config.specifications,
            [SpecSpec {
                source: "https://www.rfc-editor.org/rfc/rfc9000".to_string(),
                format: None,
            }]
        );
        assert_eq!(config.requirement_patterns, DEFAULT_REQUIREMENT_PATTERNS);
        assert_eq!(
            config.spec_cache_dir,
            project.root().join(".duvet").join("specifications")
        );
    }

    #[test]
    fn full_config_with_every_table() {
        let project = Project::new();
        project.write(
            ".duvet/config.toml",
            r###""$schema" = "https://awslabs.github.io/duvet/config/v0.4.json"

[[source]]
pattern = "tests/**/*.rs"
type = "test"

[[source]]
pattern = "src/**/*.py"
type = "implementation"
comment-style = { meta = "##=", content = "##%" }
blob-link = "https://github.com/example/py/blob/${{ GITHUB_SHA || 'main' }}"

[[source]]
pattern = "lib/**/*.el"
comment-style = { meta = ";;=" }

[[requirement]]
pattern = "compliance/**/*.toml"

[[specification]]
source = "https://www.rfc-editor.org/rfc/rfc9000"
format = "IETF"

[[specification]]
source = "specs/client.md"
format = "md"

[[specification]]
source = "https://example.com/spec/protocol.md"
format = "markdown"

[report.html]
enabled = true
blob-link = "https://github.com/example/repo/blob/${{ GITHUB_SHA || 'main' }}"
issue-link = "https://github.com/example/repo/issues"

[report.json]
enabled = true
path = ".duvet/reports/report.json"

[duplicates.claims]
test = 2
"###,
        );
        let config = load(project.root(), &Flags::default()).unwrap();
        let kinds: Vec<_> = config.sources.iter().map(|s| s.default_type).collect();
        assert_eq!(
            kinds,
            [
                AnnotationType::Test,
                AnnotationType::Implementation,
                AnnotationType::Implementation
            ]
        );
        assert_eq!(config.sources[1].style, style("##=", "##%"));
        // A source's blob link is kept as written: the report fills its templates.
        assert_eq!(
            config.sources[1].blob_link.as_deref(),
            Some("https://github.com/example/py/blob/${{ GITHUB_SHA || 'main' }}")
        );
        assert_eq!(config.sources[0].blob_link, None);
        // A missing prefix takes its default.
        assert_eq!(config.sources[2].style, style(";;=", "//#"));
        assert_eq!(
            config.requirement_patterns,
            [
                ".duvet/requirements/**/*.toml",
                ".duvet/todos/**/*.toml",
                ".duvet/exceptions/**/*.toml",
                "compliance/**/*.toml",
            ]
        );
        let formats: Vec<_> = config.specifications.iter().map(|s| s.format).collect();
        assert_eq!(
            formats,
            [
                Some(Format::Ietf),
                Some(Format::Markdown),
                Some(Format::Markdown)
            ]
        );
        assert_eq!(config.specifications[1].source, "specs/client.md");
    }

    #[test]
    fn flags_add_to_a_config() {
        let project = Project::new();
        project.write(
            ".duvet/config.toml",
            "[[source]]\npattern = \"src/**/*.rs\"\n[[requirement]]\npattern = \"compliance/**/*.toml\"\n",
        );
        let flags = Flags {
            spec_patterns: vec!["compliance/**/*.toml".into(), "extra/**/*.toml".into()],
            source_patterns: vec!["(*=,*#)src/**/*.c".into(), "src/**/*.rs".into()],
            spec_path: Some("ignored".into()),
            config: None,
        };
        let config = load(project.root(), &flags).unwrap();
        let patterns: Vec<_> = config.sources.iter().map(|s| s.pattern.as_str()).collect();
        // The duplicate `src/**/*.rs` (same style and type) is kept once.
        assert_eq!(patterns, ["src/**/*.rs", "src/**/*.c"]);
        assert_eq!(config.sources[1].style, style("*=", "*#"));
        assert_eq!(
            config.requirement_patterns[3..],
            ["compliance/**/*.toml", "extra/**/*.toml"]
        );
        assert_eq!(
            config.spec_cache_dir,
            project.root().join(".duvet/specifications")
        );
    }

    #[test]
    fn explicit_config_file() {
        let project = Project::new();
        let path = project.write("ci/duvet.toml", "[[source]]\npattern = \"src/**/*.go\"\n");
        let flags = Flags {
            config: Some("ci/duvet.toml".into()),
            ..Flags::default()
        };
        let config = load(project.root(), &flags).unwrap();
        assert_eq!(config.config_file.as_deref(), Some(path.as_path()));
        // Downloads live beside the config file, as in Duvet.
        assert_eq!(
            config.spec_cache_dir,
            project.root().join("ci/specifications")
        );
        assert_eq!(config.requirement_patterns, DEFAULT_REQUIREMENT_PATTERNS);

        let flags = Flags {
            config: Some("missing.toml".into()),
            ..Flags::default()
        };
        let error = load(project.root(), &flags).unwrap_err();
        assert!(matches!(error, ConfigError::NotFound { .. }));
        assert!(error.to_string().contains("missing.toml"), "{error}");
    }

    #[test]
    fn flag_project() {
        let project = Project::new();
        let flags = Flags {
            spec_patterns: vec!["specs/**/*.toml".into()],
            source_patterns: vec![
                "(*=,*#)src/**/*.c".into(),
                "(# //=,# //#).github/workflows/duvet.yaml".into(),
                "compliance_exceptions/**/*.txt".into(),
            ],
            spec_path: None,
            config: None,
        };
        let config = load(project.root(), &flags).unwrap();
        assert_eq!(config.config_file, None);
        assert_eq!(config.sources.len(), 3);
        assert_eq!(config.sources[1].style, style("# //=", "# //#"));
        assert_eq!(config.sources[1].pattern, ".github/workflows/duvet.yaml");
        assert_eq!(config.sources[2].style, CommentStyle::default());
        assert_eq!(config.requirement_patterns, ["specs/**/*.toml"]);
        assert!(config.specifications.is_empty());
        assert_eq!(config.spec_cache_dir, project.root().join("specs"));

        let flags = Flags {
            spec_path: Some("third_party".into()),
            ..flags
        };
        let config = load(project.root(), &flags).unwrap();
        assert_eq!(config.spec_cache_dir, project.root().join("third_party"));
    }

    #[test]
    fn nothing_to_load() {
        let project = Project::new();
        let error = load(project.root(), &Flags::default()).unwrap_err();
        let message = error.to_string();
        assert!(matches!(error, ConfigError::NoConfig { .. }));
        assert!(message.contains(".duvet/config.toml"), "{message}");
        assert!(message.contains("--root"), "{message}");
        // This binary has no `init` command: the message does not send anyone to one.
        assert!(!message.contains("duvet init"), "{message}");
        assert!(message.contains("--source-pattern"), "{message}");
        // `--spec-path` alone names no files.
        let flags = Flags {
            spec_path: Some("specs".into()),
            ..Flags::default()
        };
        assert!(matches!(
            load(project.root(), &flags),
            Err(ConfigError::NoConfig { .. })
        ));
    }

    #[test]
    fn invalid_config_files() {
        let cases = [
            ("[[source]\npattern = \"x\"\n", "line 1: invalid TOML"),
            (
                "[[source]]\ntype = \"test\"\n",
                "line 1: [[source]]: missing `pattern`",
            ),
            (
                "[[source]]\npattern = \"src/**/*.rs\"\n\n[[source]]\npattern = \"src/{a\"\n",
                "line 5: [[source]]: invalid glob `src/{a`",
            ),
            (
                "[[source]]\npattern = \"a\"\ntype = \"tests\"\n",
                "line 3: [[source]]: unknown type `tests`",
            ),
            (
                "[[source]]\npattern = \"a\"\ncomment-style = { meta = \"#\", content = \"#\" }\n",
                "must differ",
            ),
            (
                "[[source]]\npattern = \"a\"\ncomment-style = { meta = \"\" }\n",
                "must not be empty",
            ),
            (
                "[[source]]\npattern = \"a\"\ncomment-style = \"*=\"\n",
                "must be a table",
            ),
            ("[[source]]\npattern = 1\n", "`pattern` must be a string"),
            (
                "[[source]]\npattern = \"a\"\nblob-link = true\n",
                "line 3: [[source]]: `blob-link` must be a string",
            ),
            ("source = \"src/**\"\n", "must be an array of tables"),
            ("[[specification]]\nformat = \"ietf\"\n", "missing `source`"),
            (
                "[[specification]]\nsource = \"a.txt\"\nformat = \"html\"\n",
                "line 3: [[specification]]: unknown format `html`",
            ),
            ("[[requirement]]\npattern = \"\"\n", "`pattern` is empty"),
        ];
        for (text, expected) in cases {
            let project = Project::new();
            project.write(".duvet/config.toml", text);
            let error = load(project.root(), &Flags::default()).unwrap_err();
            let message = error.to_string();
            assert!(matches!(error, ConfigError::Invalid { .. }), "{message}");
            assert!(message.contains("config.toml"), "{message}");
            assert!(message.contains(expected), "{message:?} lacks {expected:?}");
        }
    }

    #[test]
    fn unknown_keys_in_entries_are_ignored() {
        let project = Project::new();
        project.write(
            ".duvet/config.toml",
            "[[source]]\npattern = \"src/**/*.rs\"\nnewer-key = \"x\"\ncomment-style = { meta = \"//=\", content = \"//#\", extra = 1 }\n",
        );
        let config = load(project.root(), &Flags::default()).unwrap();
        assert_eq!(config.sources.len(), 1);
    }

    #[test]
    fn unreadable_config() {
        let project = Project::new();
        project.write(".duvet/config.toml", "");
        fs::write(
            project.root().join(".duvet/config.toml"),
            [0xff, 0xfe, 0x00],
        )
        .unwrap();
        let error = load(project.root(), &Flags::default()).unwrap_err();
        assert!(matches!(error, ConfigError::Read { .. }), "{error}");
    }

    #[test]
    fn bad_flags() {
        let project = Project::new();
        for (flags, expected) in [
            (
                Flags {
                    source_patterns: vec!["(*=,*#src/**/*.c".into()],
                    ..Flags::default()
                },
                "--source-pattern",
            ),
            (
                Flags {
                    spec_patterns: vec!["specs/[".into()],
                    ..Flags::default()
                },
                "--spec-pattern",
            ),
        ] {
            let error = load(project.root(), &flags).unwrap_err();
            assert!(matches!(error, ConfigError::Flag { .. }));
            assert!(error.to_string().contains(expected), "{error}");
        }
    }

    #[test]
    fn source_patterns() {
        assert_eq!(
            parse_source_pattern("(*=,*#)src/**/*.c").unwrap(),
            SourceSpec {
                pattern: "src/**/*.c".to_string(),
                style: style("*=", "*#"),
                default_type: AnnotationType::Implementation,
                blob_link: None,
            }
        );
        assert_eq!(
            parse_source_pattern("src/**/*.rs").unwrap(),
            SourceSpec {
                pattern: "src/**/*.rs".to_string(),
                style: CommentStyle::default(),
                default_type: AnnotationType::Implementation,
                blob_link: None,
            }
        );
        assert_eq!(
            parse_source_pattern("(;;=, ;;#)lisp/*.el").unwrap().style,
            style(";;=", ";;#")
        );
        assert_eq!(
            parse_source_pattern("(,#=,,##,)scripts/*.sh")
                .unwrap()
                .style,
            style("#=", "##")
        );
        for bad in [
            "(*=,*#src/**/*.c",
            "(*=)src/*.c",
            "(*=,*#,*%)src/*.c",
            "()src/*.c",
            "(*=,*=)src/*.c",
            "(*=,*#)",
            "",
            "src/[",
        ] {
            assert!(parse_source_pattern(bad).is_err(), "{bad:?} should fail");
        }
    }

    #[test]
    fn cache_paths() {
        let dir = Path::new("/p/.duvet/specifications");
        let cases = [
            (
                "https://www.rfc-editor.org/rfc/rfc9114",
                Some("/p/.duvet/specifications/www.rfc-editor.org/rfc/rfc9114.txt"),
            ),
            (
                "https://www.rfc-editor.org/rfc/rfc9000.txt",
                Some("/p/.duvet/specifications/www.rfc-editor.org/rfc/rfc9000.txt"),
            ),
            (
                "https://www.rfc-editor.org/rfc/rfc9000.html#section-4.5",
                Some("/p/.duvet/specifications/www.rfc-editor.org/rfc/rfc9000.txt"),
            ),
            (
                "https://datatracker.ietf.org/doc/html/rfc9000",
                Some("/p/.duvet/specifications/www.rfc-editor.org/rfc/rfc9000.txt"),
            ),
            (
                "http://tools.ietf.org/rfc/rfc9000.txt",
                Some("/p/.duvet/specifications/www.rfc-editor.org/rfc/rfc9000.txt"),
            ),
            (
                "https://www.rfc-editor.org/rfc/rfc9000/",
                Some("/p/.duvet/specifications/www.rfc-editor.org/rfc/rfc9000.txt"),
            ),
            (
                "https://raw.githubusercontent.com/awslabs/spec/main/framework/keyring.md",
                Some(
                    "/p/.duvet/specifications/raw.githubusercontent.com/awslabs/spec/main/framework/keyring.txt",
                ),
            ),
            (
                "https://example.com/docs/spec/?version=2#intro",
                Some("/p/.duvet/specifications/example.com/docs/spec.txt"),
            ),
            (
                "https://example.com/a%20b/c.html",
                Some("/p/.duvet/specifications/example.com/a%20b/c.txt"),
            ),
            (
                "https://example.com/x/../../../etc/passwd",
                Some("/p/.duvet/specifications/example.com/etc/passwd.txt"),
            ),
            (
                "https://example.com/x/%2e%2e/%2E%2E/y",
                Some("/p/.duvet/specifications/example.com/y.txt"),
            ),
            ("spec/foo.md", None),
            ("file:///etc/passwd", None),
            ("https://", None),
            ("not a url://", None),
            ("", None),
        ];
        for (url, expected) in cases {
            assert_eq!(
                cache_path(dir, url),
                expected.map(PathBuf::from),
                "cache_path({url:?})"
            );
        }
    }

    #[test]
    fn cache_path_never_leaves_the_cache_dir() {
        let dir = Path::new("/cache");
        for url in [
            "https://example.com/a\\..\\..\\b",
            "https://example.com/%5C..%5C..%5Cb",
            "foo://host/..%2F..%2Fb",
            "foo://host/a\\b",
            "https://example.com/%00",
            "https://[::1]/x",
            "https://例え.jp/仕様",
        ] {
            if let Some(path) = cache_path(dir, url) {
                assert!(path.starts_with(dir), "{url}: {}", path.display());
                assert!(
                    path.components()
                        .all(|c| !matches!(c, Component::ParentDir)),
                    "{url}: {}",
                    path.display()
                );
            }
        }
    }

    #[test]
    fn target_parts_split_at_the_first_hash() {
        assert_eq!(
            target_parts("https://www.rfc-editor.org/rfc/rfc9000#section-4.5"),
            (
                "https://www.rfc-editor.org/rfc/rfc9000".to_string(),
                Some("section-4.5".to_string())
            )
        );
        assert_eq!(
            target_parts("spec/foo.md#bar#baz"),
            ("spec/foo.md".to_string(), Some("bar#baz".to_string()))
        );
        assert_eq!(
            target_parts("spec/foo.md#"),
            ("spec/foo.md".to_string(), None)
        );
        assert_eq!(
            target_parts("spec/foo.md"),
            ("spec/foo.md".to_string(), None)
        );
        assert_eq!(target_parts(""), (String::new(), None));
    }
}
