//! Reading a project from disk into [`Model`] inputs, with a cache of parsed files so that a
//! rebuild after a change re-reads only the files that changed.

use std::{
    collections::{BTreeMap, HashMap, HashSet},
    fs,
    path::{Component, Path, PathBuf},
    sync::{Arc, Mutex},
    time::SystemTime,
};

use globset::{Glob, GlobBuilder, GlobMatcher};

use crate::par::par_map;
use crate::{
    annotation::{self, Annotation, AnnotationType, CommentStyle, Malformed},
    config::{self, ProjectConfig},
    model::{Inputs, Model, ParsedSpec, Scope, SpecInput, source_key, split_target},
    spec::Format,
};

/// The identity of a file version: size, modification and change times, inode. (The change
/// time catches edits that restore the modification time, such as `cp -p` or `tar x`.)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    len: u64,
    modified: Option<SystemTime>,
    changed: (i64, i64),
    inode: u64,
}

impl Stamp {
    /// No version: what a single-use cache keeps its parses under.
    const NONE: Self = Self {
        len: 0,
        modified: None,
        changed: (0, 0),
        inode: 0,
    };

    fn of(path: &Path) -> Option<Self> {
        use std::os::unix::fs::MetadataExt;
        let meta = fs::metadata(path).ok()?;
        Some(Self {
            len: meta.len(),
            modified: meta.modified().ok(),
            changed: (meta.ctime(), meta.ctime_nsec()),
            inode: meta.ino(),
        })
    }
}

type Parsed = Arc<(Vec<Annotation>, Vec<Malformed>)>;
/// A cache of parsed files by key, each with the file version it was parsed from.
type Cache<K, V> = Mutex<HashMap<K, (Stamp, V)>>;

/// Parsed files, kept while they are unchanged.
#[derive(Default)]
pub struct FileCache {
    sources: Cache<(PathBuf, CommentStyle, AnnotationType), Parsed>,
    requirement_files: Cache<PathBuf, Parsed>,
    specs: Cache<(PathBuf, Option<Format>), Arc<ParsedSpec>>,
    /// Requirement files known without reading them (the extraction that precedes a report
    /// just wrote or compared them), by path: each taken once from here.
    known: Mutex<HashMap<PathBuf, Known>>,
    /// Requirement files about to be written (paths relative to the root), which a walk of
    /// the project finds as if they were there ([`FileCache::expect_requirement_files`]).
    expected: Mutex<Vec<PathBuf>>,
    /// Read once and dropped (a report): no file's version is asked for, nothing is kept.
    single_use: bool,
}

/// What a requirement file is known to hold.
#[derive(Debug)]
pub(crate) enum Known {
    /// Its annotations, as parsing it gives them.
    Read(Vec<Annotation>),
    Text(String),
}

/// A compiled glob with the directory to walk for it.
pub(crate) struct Pattern {
    base: PathBuf,
    matcher: GlobMatcher,
}

impl Pattern {
    pub(crate) fn new(pattern: &str) -> Result<Self, String> {
        let pattern = pattern.trim().trim_start_matches("./");
        // Duvet compiles patterns with globset's defaults, where `*` also matches `/`.
        let glob: Glob = GlobBuilder::new(pattern)
            .build()
            .map_err(|err| format!("invalid pattern '{pattern}': {err}"))?;
        // Walk only below the pattern's literal directory prefix.
        let mut base = PathBuf::new();
        let parts: Vec<&str> = pattern.split('/').collect();
        for part in &parts[..parts.len().saturating_sub(1)] {
            if part.contains(['*', '?', '[', '{']) {
                break;
            }
            base.push(part);
        }
        Ok(Self {
            base,
            matcher: glob.compile_matcher(),
        })
    }
}

/// Files below `root` matching `pattern`, as paths relative to `root`, sorted. `.git`
/// directories are not entered; symbolic links are not followed.
pub(crate) fn matching_files(root: &Path, pattern: &Pattern) -> Vec<PathBuf> {
    let start = root.join(&pattern.base);
    let mut files: Vec<PathBuf> = walkdir::WalkDir::new(&start)
        .into_iter()
        .filter_entry(|e| e.file_name() != ".git")
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .filter_map(|e| e.path().strip_prefix(root).ok().map(Path::to_path_buf))
        .filter(|rel| pattern.matcher.is_match(rel))
        .collect();
    files.sort();
    files
}

/// The directories whose changes can change the model: the pattern bases (recursive), and
/// the directories of specification files and of the config (non-recursive).
pub fn watch_roots(config: &ProjectConfig) -> Vec<(PathBuf, bool)> {
    let mut roots: BTreeMap<PathBuf, bool> = BTreeMap::new();
    let mut add = |path: PathBuf, recursive: bool| {
        let entry = roots.entry(path).or_insert(recursive);
        *entry |= recursive;
    };
    for pattern in config
        .sources
        .iter()
        .map(|s| s.pattern.as_str())
        .chain(config.requirement_patterns.iter().map(String::as_str))
    {
        if let Ok(p) = Pattern::new(pattern) {
            add(config.root.join(p.base), true);
        }
    }
    add(config.spec_cache_dir.clone(), true);
    add(config.root.join(".duvet"), true);
    add(config.root.clone(), false);
    roots.into_iter().collect()
}

/// Whether `rel` stays inside the root (no absolute path, no `..`).
fn confined(rel: &Path) -> bool {
    rel.components()
        .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
}

impl FileCache {
    /// A cache for one reading of the project, which keeps nothing.
    pub fn single_use() -> Self {
        Self {
            single_use: true,
            ..Self::default()
        }
    }

    /// The version of `path` to key its parse by; `None` when nothing is kept.
    fn stamp(&self, path: &Path) -> Option<Stamp> {
        if self.single_use {
            None
        } else {
            Stamp::of(path)
        }
    }

    fn source(
        &self,
        root: &Path,
        rel: &Path,
        style: &CommentStyle,
        kind: AnnotationType,
    ) -> Parsed {
        let path = root.join(rel);
        let key = (rel.to_path_buf(), style.clone(), kind);
        let stamp = self.stamp(&path);
        if let (Some(stamp), Ok(cache)) = (stamp, self.sources.lock())
            && let Some((cached, parsed)) = cache.get(&key)
            && *cached == stamp
        {
            return parsed.clone();
        }
        // Read into this thread's buffer, kept from file to file: a fresh buffer a file made
        // the kernel hand over (and zero) new memory for every one.
        let parsed: Parsed = READ_BUFFER.with_borrow_mut(|bytes| {
            let parsed = Arc::new(match crate::output::read_into(&path, bytes) {
                // A file without either prefix has no annotation and no quote line: most
                // source files of a project, passed over at memchr speed.
                Ok(()) if !mentions(bytes, style) => (Vec::new(), Vec::new()),
                Ok(()) => annotation::source::extract(&text_of(bytes), rel, style, kind),
                Err(_) => (Vec::new(), Vec::new()),
            });
            // A very large file's memory is not kept for the thread's life (a server's).
            if bytes.capacity() > READ_BUFFER_KEPT {
                *bytes = Vec::new();
            }
            parsed
        });
        if let (Some(stamp), Ok(mut cache)) = (stamp, self.sources.lock()) {
            cache.insert(key, (stamp, parsed.clone()));
        }
        parsed
    }

    /// What the requirement files `files` (paths relative to the root) hold: reading the
    /// project takes it from here ([`FileCache::requirement_file`]).
    pub(crate) fn know_requirement_files(&self, files: impl IntoIterator<Item = (PathBuf, Known)>) {
        if let Ok(mut known) = self.known.lock() {
            known.extend(files);
        }
    }

    /// Requirement files (paths relative to the root, in directories reached without a link)
    /// that are being written: reading the project counts them among the files its patterns
    /// match, as once they are written.
    pub(crate) fn expect_requirement_files(&self, files: impl IntoIterator<Item = PathBuf>) {
        if let Ok(mut expected) = self.expected.lock() {
            expected.extend(files);
        }
    }

    /// [`matching_files`], with the requirement files expected to be there.
    fn matching_requirement_files(&self, root: &Path, pattern: &Pattern) -> Vec<PathBuf> {
        let mut files = matching_files(root, pattern);
        let expected = self.expected.lock().map(|e| e.clone()).unwrap_or_default();
        let before = files.len();
        files.extend(expected.into_iter().filter(|rel| {
            !rel.components().any(|c| c.as_os_str() == ".git") && pattern.matcher.is_match(rel)
        }));
        if files.len() > before {
            files.sort();
            files.dedup();
        }
        files
    }

    fn requirement_file(&self, root: &Path, rel: &Path) -> Parsed {
        let path = root.join(rel);
        let stamp = self.stamp(&path);
        if let (Some(stamp), Ok(cache)) = (stamp, self.requirement_files.lock())
            && let Some((cached, parsed)) = cache.get(rel)
            && *cached == stamp
        {
            return parsed.clone();
        }
        let known = self
            .known
            .lock()
            .ok()
            .and_then(|mut known| known.remove(rel));
        let text = match known {
            Some(Known::Read(annotations)) => {
                let parsed: Parsed = Arc::new((annotations, Vec::new()));
                if let (Some(stamp), Ok(mut cache)) = (stamp, self.requirement_files.lock()) {
                    cache.insert(rel.to_path_buf(), (stamp, parsed.clone()));
                }
                return parsed;
            }
            Some(Known::Text(text)) => Ok(text),
            None => fs::read_to_string(&path),
        };
        let parsed: Parsed = match text {
            Ok(text) => match annotation::toml_file::parse(&text, rel) {
                Ok(annotations) => Arc::new((annotations, Vec::new())),
                Err(reason) => Arc::new((
                    Vec::new(),
                    vec![Malformed {
                        file: rel.to_path_buf(),
                        line: 1,
                        text: text.lines().next().unwrap_or_default().to_string(),
                        reason,
                        orphan_quote: None,
                    }],
                )),
            },
            Err(err) => Arc::new((
                Vec::new(),
                vec![Malformed {
                    file: rel.to_path_buf(),
                    line: 1,
                    text: String::new(),
                    reason: format!("cannot read the requirement file: {err}"),
                    orphan_quote: None,
                }],
            )),
        };
        if let (Some(stamp), Ok(mut cache)) = (stamp, self.requirement_files.lock()) {
            cache.insert(rel.to_path_buf(), (stamp, parsed.clone()));
        }
        parsed
    }

    /// A specification's text parsed in `format`, or in the format [`Format::auto`] finds:
    /// with `model` true, everything the model reads made too ([`ParsedSpec::parse`]), else
    /// only duvet 0.4.3's reading ([`ParsedSpec::read`]; the rest is made when asked for).
    /// A single-use cache keeps each parse for the rest of its one reading (the extraction
    /// before a report and the report share it).
    pub(crate) fn spec(
        &self,
        file: &Path,
        source: &str,
        format: Option<Format>,
        model: bool,
    ) -> Result<Arc<ParsedSpec>, std::io::Error> {
        let key = (file.to_path_buf(), format);
        let stamp = self.stamp(file);
        let cached = self.specs.lock().ok().and_then(|cache| {
            let (cached, parsed) = cache.get(&key)?;
            (self.single_use || Some(*cached) == stamp).then(|| parsed.clone())
        });
        if let Some(parsed) = cached {
            if model {
                parsed.views();
                parsed.normalized();
            }
            return Ok(parsed);
        }
        let bytes = crate::output::read(file)?;
        let text: Arc<str> = Arc::from(text_of(&bytes));
        drop(bytes);
        let format = format.unwrap_or_else(|| Format::auto(source, &text));
        let parsed = Arc::new(if model {
            ParsedSpec::parse(text, format)
        } else {
            ParsedSpec::read(text, format)
        });
        let stamp = match (stamp, self.single_use) {
            (Some(stamp), _) => Some(stamp),
            // Kept without a version: a single-use cache never compares it.
            (None, true) => Some(Stamp::NONE),
            (None, false) => None,
        };
        if let (Some(stamp), Ok(mut cache)) = (stamp, self.specs.lock()) {
            cache.insert(key, (stamp, parsed.clone()));
        }
        Ok(parsed)
    }
}

/// The most memory a thread's [`READ_BUFFER`] keeps between files.
const READ_BUFFER_KEPT: usize = 4 << 20;

thread_local! {
    /// The bytes of the source file a thread reads now ([`FileCache::source`]).
    static READ_BUFFER: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// A file's text: as is when it is UTF-8 (checked by the fast validation), else with
/// invalid sequences replaced.
pub(crate) fn text_of(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(text) => std::borrow::Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

/// Whether a meta or content prefix of `style` occurs anywhere in `bytes` (else no line can
/// be an annotation or a quote line).
fn mentions(bytes: &[u8], style: &CommentStyle) -> bool {
    [&style.meta, &style.content]
        .into_iter()
        .any(|prefix| prefix.is_empty() || memchr::memmem::find(bytes, prefix.as_bytes()).is_some())
}

/// Read the project described by `config` and build its model.
pub fn build(config: &ProjectConfig, cache: &FileCache) -> Model {
    Model::build(inputs(config, cache))
}

/// Read the project described by `config`: what its model is built from.
pub fn inputs(config: &ProjectConfig, cache: &FileCache) -> Inputs {
    inputs_for(config, cache, Scope::Full)
}

/// Read the project described by `config` for a model of `scope` (a report's model needs no
/// requirement sentences made ahead).
pub fn inputs_for(config: &ProjectConfig, cache: &FileCache, scope: Scope) -> Inputs {
    inputs_with(config, cache, scope, None)
}

/// The files of some of a project's patterns, walked and parsed ahead of the others
/// ([`read_ahead`]), by the pattern's place in [`patterns_of`]; and the others, compiled.
pub struct ReadAhead {
    read: Vec<(usize, Option<usize>, PatternFiles)>,
    rest: Vec<(usize, Option<usize>, Result<Pattern, String>)>,
}

impl ReadAhead {
    /// Whether reading the rest of the project while the requirement files `pending` (paths
    /// relative to the root) are written could find something a reading after their writing
    /// would not, or miss something it would find: a temporary file of theirs, or one of
    /// them a pattern of sources matches (the requirement patterns count them as written,
    /// [`FileCache::expect_requirement_files`]).
    pub fn sees_writes(&self, pending: &[&Path]) -> bool {
        self.rest.iter().any(|(_, source, pattern)| {
            let Ok(pattern) = pattern else {
                return false;
            };
            pending.iter().any(|rel| {
                pattern.matcher.is_match(crate::output::temp_for(rel))
                    || (source.is_some() && pattern.matcher.is_match(rel))
            })
        })
    }
}

/// A pattern's files, each with its parse, in the order walked; or why the pattern is invalid.
type PatternFiles = Result<Vec<(PathBuf, Parsed)>, String>;

/// The patterns whose files the project holds, each with the index of its source: of source
/// files, then of requirement files (no source).
fn patterns_of(config: &ProjectConfig) -> impl Iterator<Item = (usize, Option<usize>, &str)> {
    let sources = config
        .sources
        .iter()
        .enumerate()
        .map(|(i, source)| (Some(i), source.pattern.as_str()));
    let requirements = config
        .requirement_patterns
        .iter()
        .map(|pattern| (None, pattern.as_str()));
    sources
        .chain(requirements)
        .enumerate()
        .map(|(i, (source, pattern))| (i, source, pattern))
}

/// A pattern compiled: an invalid one of source files is malformed, one of requirement files
/// is skipped.
fn compiled(source: Option<usize>, pattern: &str) -> Option<Result<Pattern, String>> {
    match source {
        Some(_) => Some(Pattern::new(pattern)),
        None => Pattern::new(pattern).ok().map(Ok),
    }
}

/// Walk and parse the files of the patterns whose directories lie clear of `written` (the
/// directories something writes meanwhile: the requirement files a report extracts, the
/// specifications it downloads), links resolved: their files can be read while those are
/// written, and [`inputs_with`] reads the rest.
pub fn read_ahead(config: &ProjectConfig, cache: &FileCache, written: &[PathBuf]) -> ReadAhead {
    let written: Vec<PathBuf> = written.iter().map(|dir| resolved(dir)).collect();
    let clear = |pattern: &Pattern| {
        let base = resolved(&config.root.join(&pattern.base));
        written
            .iter()
            .all(|dir| !base.starts_with(dir) && !dir.starts_with(&base))
    };
    let (patterns, rest) = patterns_of(config)
        .filter_map(|(i, source, pattern)| Some((i, source, compiled(source, pattern)?)))
        .partition(|(_, _, pattern)| pattern.as_ref().is_ok_and(clear));
    ReadAhead {
        read: read_patterns(config, cache, patterns),
        rest,
    }
}

/// `path` with its links resolved as far as it exists, the rest appended as written.
fn resolved(path: &Path) -> PathBuf {
    let mut rest = Vec::new();
    let mut existing = path;
    loop {
        if let Ok(real) = fs::canonicalize(existing) {
            return rest
                .into_iter()
                .rev()
                .fold(real, |dir, name| dir.join(name));
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name);
                existing = parent;
            }
            _ => return path.to_path_buf(),
        }
    }
}

/// Walk `patterns` (each with its place and its source) and parse their files: each
/// pattern's walk on a core, then every file read and parsed on every core (a source file
/// once per comment style and default type, a requirement file once; a file an earlier
/// pattern here has is left to it).
fn read_patterns(
    config: &ProjectConfig,
    cache: &FileCache,
    patterns: Vec<(usize, Option<usize>, Result<Pattern, String>)>,
) -> Vec<(usize, Option<usize>, PatternFiles)> {
    let root = &config.root;
    let walked = par_map(patterns, |(i, source, pattern)| {
        let files = pattern.map(|pattern| match source {
            Some(_) => matching_files(root, &pattern),
            None => cache.matching_requirement_files(root, &pattern),
        });
        (i, source, files)
    });
    let mut seen = Seen::default();
    let mut files: Vec<(Option<usize>, PathBuf)> = Vec::new();
    let mut parts = Vec::new();
    for (i, source, found) in walked {
        let found = found.map(|found| {
            let start = files.len();
            files.extend(
                found
                    .into_iter()
                    .filter(|rel| seen.first(config, source, rel))
                    .map(|rel| (source, rel)),
            );
            start..files.len()
        });
        parts.push((i, source, found));
    }
    if files.len() >= crate::memory::LARGE_FILES {
        crate::memory::huge_pages(true);
    }
    let parsed = par_map(files, |(source, rel)| {
        let parsed = match source {
            Some(i) => {
                let s = &config.sources[i];
                cache.source(root, &rel, &s.style, s.default_type)
            }
            None => cache.requirement_file(root, &rel),
        };
        (rel, parsed)
    });
    let mut parsed = parsed.into_iter();
    parts
        .into_iter()
        .map(|(i, source, range)| {
            let files = range.map(|range| parsed.by_ref().take(range.len()).collect());
            (i, source, files)
        })
        .collect()
}

/// The files placed so far: a source file once per comment style and default type, a
/// requirement file once.
#[derive(Default)]
struct Seen {
    sources: HashSet<(PathBuf, CommentStyle, AnnotationType)>,
    requirements: HashSet<PathBuf>,
}

impl Seen {
    /// Whether `rel`, found by a pattern of `source` (none: a requirement pattern), is new.
    fn first(&mut self, config: &ProjectConfig, source: Option<usize>, rel: &Path) -> bool {
        match source {
            Some(i) => {
                let s = &config.sources[i];
                self.sources
                    .insert((rel.to_path_buf(), s.style.clone(), s.default_type))
            }
            None => self.requirements.insert(rel.to_path_buf()),
        }
    }
}

/// [`inputs_for`], with the files of some patterns already read ([`read_ahead`]).
pub fn inputs_with(
    config: &ProjectConfig,
    cache: &FileCache,
    scope: Scope,
    ahead: Option<ReadAhead>,
) -> Inputs {
    let root = &config.root;
    let mut inputs = Inputs {
        extract_requirements: config.config_file.is_some(),
        ..Inputs::default()
    };
    let config_file = || {
        config
            .config_file
            .as_deref()
            .and_then(|f| f.strip_prefix(root).ok())
            .map(Path::to_path_buf)
            .unwrap_or_default()
    };
    let (mut done, rest) = match ahead {
        Some(ahead) => (ahead.read, ahead.rest),
        None => (
            Vec::new(),
            patterns_of(config)
                .filter_map(|(i, source, pattern)| Some((i, source, compiled(source, pattern)?)))
                .collect(),
        ),
    };
    done.extend(read_patterns(config, cache, rest));
    done.sort_unstable_by_key(|(i, _, _)| *i);
    // Taken in the order of the patterns and their files, each file where it is first found;
    // its results moved out when nothing else holds them (a single-use cache keeps none),
    // else copied.
    let mut seen = Seen::default();
    for (_, source, files) in done {
        match files {
            Ok(files) => {
                for (rel, parsed) in files {
                    if !seen.first(config, source, &rel) {
                        continue;
                    }
                    match Arc::try_unwrap(parsed) {
                        Ok((annotations, malformed)) => {
                            inputs.annotations.extend(annotations);
                            inputs.malformed.extend(malformed);
                        }
                        Err(shared) => {
                            inputs.annotations.extend(shared.0.iter().cloned());
                            inputs.malformed.extend(shared.1.iter().cloned());
                        }
                    }
                }
            }
            Err(reason) => {
                let source = source.unwrap_or_default();
                inputs.malformed.push(Malformed {
                    file: config_file(),
                    line: 0,
                    text: config.sources[source].pattern.clone(),
                    reason,
                    orphan_quote: None,
                })
            }
        }
    }

    // Specifications: those configured, then those the annotations cite; each spelling once
    // (annotations repeat their target thousands of times), then each specification once.
    let configured = config
        .specifications
        .iter()
        .map(|s| (s.source.as_str(), s.format, None));
    let cited = inputs.annotations.iter().filter_map(|annotation| {
        let (spec, _) = split_target(&annotation.target);
        (!spec.is_empty()).then_some((spec, None, Some(annotation)))
    });
    let mut spellings: HashSet<&str> = HashSet::new();
    let mut keys = HashSet::new();
    let mut unique: Vec<(String, Option<Format>, bool)> = Vec::new();
    for (source, format, annotation) in configured.chain(cited) {
        if spellings.insert(source) && keys.insert(source_key(source)) {
            // A cited one's format is its first annotation's.
            let format = match annotation {
                Some(annotation) => annotation.format.as_deref().and_then(parse_format),
                None => format,
            };
            unique.push((source.to_string(), format, annotation.is_none()));
        }
    }
    // The specifications whose requirements no requirement file lists: every section's
    // sentences will be requirements, so they are extracted here, on every core, with the
    // parse. (Those of the others, only for the sections no file covers, in the model.)
    let listed: HashSet<&str> = inputs
        .annotations
        .iter()
        .filter(|a| a.kind == AnnotationType::Spec)
        .map(|a| split_target(&a.target).0)
        .collect();
    let listed: HashSet<String> = listed.into_iter().map(source_key).collect();
    // (With fewer specifications than cores, the model's build extracts them a section a
    // task instead, which keeps every core busy.)
    let cores = crate::par::cores();
    let extract = scope == Scope::Full && inputs.extract_requirements && unique.len() >= cores;
    // A report reads the model's sections only to tell whether a quote without a target line
    // quotes a specification (by their normalized text): made with the parse when there is
    // such a quote.
    let orphans =
        scope == Scope::Specifications && crate::orphan_rule::worth_looking(&inputs.malformed);
    inputs.specs = par_map(unique, |(source, format, declared)| {
        let input = load_spec(
            config,
            cache,
            &source,
            format,
            declared,
            scope == Scope::Full,
        );
        if let Ok(parsed) = &input.parsed {
            if declared && extract && !listed.contains(&source_key(&source)) {
                for c in 0..parsed.sections().len() {
                    parsed.sentences(c);
                }
            }
            if orphans {
                parsed.normalized();
            }
        }
        input
    });
    inputs
}

fn parse_format(value: &str) -> Option<Format> {
    match value.trim().to_ascii_lowercase().as_str() {
        "ietf" => Some(Format::Ietf),
        "markdown" | "md" => Some(Format::Markdown),
        _ => None,
    }
}

/// The file holding a specification's text: the download cache's for URLs (the server never
/// touches the network), the project's for relative paths. A path that is not inside the
/// project, or a link to a file outside the project and the cache, is an error (with the file
/// when there is one).
pub(crate) fn spec_file(
    config: &ProjectConfig,
    source: &str,
) -> Result<PathBuf, (PathBuf, String)> {
    let is_url = source.starts_with("https://") || source.starts_with("http://");
    let file = if is_url {
        config::cache_path(&config.spec_cache_dir, source).map(|file| {
            if config.config_file.is_some() || file.exists() {
                return file;
            }
            // Duvet 0.1–0.3 kept its cache in `<spec-path>/specs` and named files by the URL
            // as written (`tools.ietf.org/rfc/rfc9000.txt`, not the canonical rfc-editor one).
            let legacy_dir = config.spec_cache_dir.join("specs");
            [
                as_written_cache_path(&config.spec_cache_dir, source),
                config::cache_path(&legacy_dir, source),
                as_written_cache_path(&legacy_dir, source),
            ]
            .into_iter()
            .flatten()
            .find(|candidate| candidate.exists())
            .unwrap_or(file)
        })
    } else {
        let rel = Path::new(source.trim());
        confined(rel).then(|| config.root.join(rel))
    };
    let Some(file) = file else {
        return Err((
            PathBuf::new(),
            format!("'{source}' is not a URL or a path inside the project"),
        ));
    };
    // A link in a (cloned, untrusted) project must not hand a file from elsewhere to the
    // assistant: the text read is the project's or the download cache's.
    if let Ok(real) = std::fs::canonicalize(&file) {
        let inside = |dir: &Path| {
            std::fs::canonicalize(dir)
                .map(|dir| real.starts_with(dir))
                .unwrap_or(false)
        };
        if !inside(&config.root) && !inside(&config.spec_cache_dir) {
            let shown = shown(config, &file);
            return Err((
                file,
                format!(
                    "{shown} links to a file outside the project; duvet mcp reads specifications inside it only"
                ),
            ));
        }
    }
    Ok(file)
}

/// A file as messages name it: relative to the project's root when inside it.
pub(crate) fn shown(config: &ProjectConfig, file: &Path) -> String {
    file.strip_prefix(&config.root)
        .map(crate::model::path_text)
        .unwrap_or_else(|_| file.display().to_string())
}

/// A specification's text, parsed (see [`spec_file`] for where it is read); with `model`,
/// everything the model reads made too ([`FileCache::spec`]).
fn load_spec(
    config: &ProjectConfig,
    cache: &FileCache,
    source: &str,
    format: Option<Format>,
    declared: bool,
    model: bool,
) -> SpecInput {
    let is_url = source.starts_with("https://") || source.starts_with("http://");
    let file = match spec_file(config, source) {
        Ok(file) => file,
        Err((file, message)) => {
            return SpecInput {
                source: source.to_string(),
                file,
                parsed: Err(message),
                declared,
            };
        }
    };
    let shown = shown(config, &file);
    let parsed = cache.spec(&file, source, format, model).map_err(|err| {
        if is_url {
            format!(
                "{source} is not in the download cache: expected {shown} ({err}); duvet mcp works offline, so download it first (upstream Duvet 0.4's report command does, or save the text there yourself)"
            )
        } else {
            format!("cannot read {shown}: {err}")
        }
    });
    SpecInput {
        source: source.to_string(),
        file,
        parsed,
        declared,
    }
}

/// `cache_dir/<host>/<path>.txt` from the URL as written (older Duvet's naming).
fn as_written_cache_path(cache_dir: &Path, url: &str) -> Option<PathBuf> {
    let (spec, _) = split_target(url);
    let parsed = url::Url::parse(spec.trim()).ok()?;
    let mut path = cache_dir.join(parsed.host_str()?);
    for segment in parsed.path_segments()?.filter(|s| !s.is_empty()) {
        let segment = Path::new(segment);
        if !confined(segment) {
            return None;
        }
        path.push(segment);
    }
    path.set_extension("txt");
    Some(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_walk_only_their_literal_prefix() {
        let p = Pattern::new("src/**/*.rs").unwrap();
        assert_eq!(p.base, PathBuf::from("src"));
        assert!(p.matcher.is_match("src/a/b.rs"));
        assert!(!p.matcher.is_match("tests/b.rs"));
        let p = Pattern::new("*.c").unwrap();
        assert_eq!(p.base, PathBuf::new());
        assert!(p.matcher.is_match("main.c"));
        assert!(
            p.matcher.is_match("sub/main.c"),
            "as in Duvet (globset defaults), `*` crosses directories"
        );
        let p = Pattern::new("./lib/{a,b}/*.py").unwrap();
        assert_eq!(p.base, PathBuf::from("lib"));
    }

    #[test]
    fn confinement() {
        assert!(confined(Path::new("specs/a.md")));
        assert!(!confined(Path::new("../outside.md")));
        assert!(!confined(Path::new("/etc/passwd")));
        assert!(!confined(Path::new("specs/../../x")));
    }
}
