//! The bodies of the fuzz targets, one function per parser, shared by the libFuzzer binaries
//! (`fuzz_targets/*.rs`, nightly: `cargo +nightly fuzz run <target>`) and by the stable replay
//! of the committed corpora (`cargo test --manifest-path fuzz/Cargo.toml`, the tests below).
//!
//! Every function takes arbitrary bytes, calls the real parsing function of a crate of the
//! workspace, and panics only when an invariant fails (the parser itself must never panic).
//! Inputs that a caller could never hand the parser (non-UTF-8 text where the parser takes
//! `&str`) are skipped.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::Path;
use std::sync::OnceLock;

use chrono::{DateTime, TimeZone, Utc};

/// Every target: its name (the corpus directory `corpus/<name>/`) and its body.
pub const TARGETS: &[(&str, fn(&[u8]))] = &[
    ("jsonrpc_line", jsonrpc_line),
    ("gitmile_filter", gitmile_filter),
    ("gitmile_cursor", gitmile_cursor),
    ("duvet_ietf", duvet_ietf),
    ("duvet_markdown", duvet_markdown),
    ("duvet_annotation", duvet_annotation),
    ("duvet_toml", duvet_toml),
    ("duvet_config", duvet_config),
    ("jility_replace_lines", jility_replace_lines),
    ("jility_replace_section", jility_replace_section),
    ("jility_front_matter", jility_front_matter),
    ("jility_query", jility_query),
    ("twig_state", twig_state),
    ("twig_netrc", twig_netrc),
];

// ---------------------------------------------------------------------------------------------
// mcp-common: the protocol edge (one stdio line / one HTTP body).

const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const METHOD_NOT_FOUND: i64 = -32601;

/// `mcp_common::edge::decode` and `recover_id` on one line.
pub fn jsonrpc_line(data: &[u8]) {
    let recovered = mcp_common::edge::recover_id(data);
    // A recovered id is one JSON-RPC allows: a string or an integer.
    if let Some(id) = &recovered {
        assert!(id.is_string() || id.is_i64(), "recovered id {id}");
    }
    match mcp_common::edge::decode(data) {
        Ok(message) => {
            // What the edge accepts, written out again, is accepted again. (rmcp writes a
            // request of an unknown method without params as `"params": null`, which the
            // edge refuses by design: that member is dropped first.)
            let mut again = serde_json::to_value(&message).expect("a decoded message serialises");
            if let Some(object) = again.as_object_mut()
                && object.get("params").is_some_and(serde_json::Value::is_null)
            {
                object.remove("params");
            }
            let again = serde_json::to_vec(&again).expect("a value serialises");
            assert!(
                mcp_common::edge::decode(&again).is_ok(),
                "re-encoded message refused: {}",
                String::from_utf8_lossy(&again)
            );
        }
        Err(refusal) => {
            assert!(
                [PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND].contains(&refusal.code),
                "code {}",
                refusal.code
            );
            let parsed = serde_json::from_slice::<serde_json::Value>(data);
            if refusal.code == PARSE_ERROR {
                assert!(parsed.is_err(), "parse error on JSON");
                assert_eq!(
                    refusal.id, recovered,
                    "parse errors answer the recovered id"
                );
            } else {
                let value = parsed.expect("only parse errors come from JSON that does not parse");
                // The id of a readable message is answered whenever it is a valid one.
                if let Some(id) = value.get("id").filter(|id| id.is_string() || id.is_i64()) {
                    assert_eq!(refusal.id.as_ref(), Some(id), "refusal lost the id");
                }
                assert_eq!(
                    refusal.quiet,
                    value.get("method").is_some() && value.get("id").is_none(),
                    "quiet only for notifications"
                );
            }
            if let Some(id) = &refusal.id {
                assert!(id.is_string() || id.is_i64(), "refusal id {id}");
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// git-mile: the filter language, sort keys, cursors.

use git_mile::query::{Field, Fields, Filter, SortSpec, Value};

/// A fixed entity for evaluating parsed filters.
struct Entity {
    id: &'static str,
    title: &'static str,
    status: &'static str,
    labels: BTreeSet<String>,
    milestone: Option<(&'static str, &'static str)>,
    created: DateTime<Utc>,
    comments: Option<u64>,
}

impl Fields for Entity {
    fn value(&self, field: Field) -> Value<'_> {
        match field {
            Field::Id => Value::Text(self.id),
            Field::Title => Value::Text(self.title),
            Field::Description => Value::Text("Steps:\n1. run `git mile list`\n2. ünïcode"),
            Field::Status => Value::Text(self.status),
            Field::Labels => Value::Labels(&self.labels),
            Field::Milestone => Value::Milestone {
                id: self.milestone.map(|m| m.0),
                title: self.milestone.map(|m| m.1),
            },
            Field::Author => Value::Text("Ada <ada@example.com>"),
            Field::Created | Field::Updated => Value::Date(self.created),
            Field::CommentCount => Value::Number(self.comments),
            Field::OpenIssues => Value::Number(None),
            Field::HasComments => Value::Bool(self.comments.is_some_and(|n| n > 0)),
            Field::HasMilestone => Value::Bool(self.milestone.is_some()),
            // Tasks' fields (upstream git-mile's), as an issue answers them.
            Field::State | Field::StateKind => Value::Text(""),
            Field::Assignees | Field::Parents | Field::Children => Value::Labels(no_names()),
        }
    }
}

fn no_names() -> &'static BTreeSet<String> {
    static NONE: OnceLock<BTreeSet<String>> = OnceLock::new();
    NONE.get_or_init(BTreeSet::new)
}

fn entities() -> &'static [Entity] {
    static ENTITIES: OnceLock<Vec<Entity>> = OnceLock::new();
    ENTITIES.get_or_init(|| {
        vec![
            Entity {
                id: "a1b2c3d",
                title: "Crash on empty filter",
                status: "open",
                labels: ["bug".to_string(), "p1".to_string()].into(),
                milestone: Some(("m0001", "v1.0")),
                created: Utc.with_ymd_and_hms(2026, 1, 31, 12, 0, 0).unwrap(),
                comments: Some(3),
            },
            Entity {
                id: "ffff000",
                title: "",
                status: "closed",
                labels: BTreeSet::new(),
                milestone: None,
                created: DateTime::<Utc>::MIN_UTC,
                comments: None,
            },
        ]
    })
}

/// `Filter::parse` (and `SortSpec::parse` of the same text split at commas).
pub fn gitmile_filter(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match Filter::parse(text) {
        Ok(filter) => {
            let results: Vec<bool> = entities().iter().map(|e| filter.matches(e)).collect();
            for field in Field::ALL {
                let _ = filter.mentions(field);
            }
            // `not (F)` is the negation of F wherever both parse.
            if let Ok(negated) = Filter::parse(&format!("not ({text})")) {
                for (entity, result) in entities().iter().zip(results) {
                    assert_eq!(negated.matches(entity), !result, "not ({text})");
                }
            }
        }
        Err(error) => {
            assert!(error.column >= 1, "column {}", error.column);
            assert!(
                error.column
                    <= text
                        .chars()
                        .count()
                        .max(git_mile::query::filter::MAX_INPUT_CHARS)
                        + 1,
                "column {} past the end",
                error.column
            );
            let _ = error.to_string();
        }
    }
    let items: Vec<&str> = if text.is_empty() {
        Vec::new()
    } else {
        text.split(',').collect()
    };
    if let Ok(spec) = SortSpec::parse(&items) {
        // The canonical form parses back to itself.
        let canonical = spec.canonical();
        let parts: Vec<&str> = canonical.split(',').collect();
        let again = SortSpec::parse(&parts).expect("canonical sort parses");
        assert_eq!(again.canonical(), canonical);
    }
}

/// `Cursors::decode::<Position>` under git-mile's `Shape`, and the position format.
pub fn gitmile_cursor(data: &[u8]) {
    use git_mile::query::cursor::{Position, Shape};
    use mcp_common::page::{CursorError, CursorKey};

    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    static KEY: OnceLock<CursorKey> = OnceLock::new();
    let key = KEY.get_or_init(|| CursorKey::derive("git-mile fuzz", b"fuzz"));
    let shape = |filter| Shape {
        entity: "issue",
        filter,
        sort: "updated:desc,id:asc",
        include_closed: false,
    };
    let cursors = shape("status == \"open\"").cursors(key);

    // A sealed position decodes back, under this query only. (This target found that
    // cursors longer than 4096 characters were issued and then refused as forged; the limit is
    // now the edge's MAX_LINE, and `long_position_over_max_cursor_len` in the corpus keeps it.)
    let round_trips = |cursors: &mcp_common::page::Cursors, position: Position| {
        let cursor = cursors.encode(&position);
        assert!(cursor.len() <= mcp_common::page::MAX_CURSOR_LEN);
        assert_eq!(
            cursors.decode::<Position>(&cursor),
            Ok(position),
            "cursor {}",
            mcp_common::edge::excerpt(&cursor)
        );
        cursor
    };
    // The text as a cursor a client sent.
    if let Ok(position) = cursors.decode::<Position>(text) {
        round_trips(&cursors, position);
    }
    // The text as the body of a sealed cursor: what a cursor carries round-trips, under this
    // query only, and any altered character is refused.
    if let Ok(position) = serde_json::from_str::<Position>(text) {
        let cursor = round_trips(&cursors, position);
        let other = shape("").cursors(key).decode::<Position>(&cursor);
        assert_eq!(other, Err(CursorError::OtherQuery));
        let mut altered = cursor.clone().into_bytes();
        let at = text.len() % altered.len();
        altered[at] = if altered[at] == b'A' { b'B' } else { b'A' };
        let altered = String::from_utf8(altered).expect("base64 is ASCII");
        assert!(
            cursors.decode::<Position>(&altered).is_err(),
            "altered cursor accepted"
        );
    }
    // The text as the filter a cursor is bound to.
    let bound = shape(text).cursors(key);
    round_trips(
        &bound,
        vec![git_mile::query::SortValue::Text(text.to_string())],
    );
}

// ---------------------------------------------------------------------------------------------
// duvet: specifications, annotations, requirement files.

fn check_sections(sections: &[duvet::spec::Section]) {
    for section in sections {
        let _ = duvet::spec::requirements::extract(section);
        // Leading and trailing blank lines are trimmed.
        if let (Some(first), Some(last)) = (section.lines.first(), section.lines.last()) {
            assert!(
                !first.trim().is_empty(),
                "leading blank line in {}",
                section.id
            );
            assert!(
                !last.trim().is_empty(),
                "trailing blank line in {}",
                section.id
            );
        }
    }
}

/// `duvet::spec::sections` of an IETF text (duvet 0.4.3's reading, then the model's
/// sections) and the requirement sentences of every section.
pub fn duvet_ietf(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    check_sections(&duvet::spec::sections(text, duvet::spec::Format::Ietf));
}

/// `duvet::spec::sections` of a Markdown text (and the requirement sentences of every
/// section).
pub fn duvet_markdown(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let sections = duvet::spec::sections(text, duvet::spec::Format::Markdown);
    check_sections(&sections);
    // Markdown ids are unique (duplicates get -1, -2 …).
    let mut ids = HashSet::new();
    for section in &sections {
        assert!(
            ids.insert(section.id.as_str()),
            "duplicate id {}",
            section.id
        );
    }
}

/// `duvet::annotation::source::extract` with the default style and a `#` style.
pub fn duvet_annotation(data: &[u8]) {
    use duvet::annotation::{AnnotationType, CommentStyle};
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let lines = text.lines().count();
    let style = |meta: &str, content: &str| CommentStyle {
        meta: meta.into(),
        content: content.into(),
    };
    // The default, the styles of the crate's tests, and overlapping prefixes.
    let styles = [
        (CommentStyle::default(), AnnotationType::Implementation),
        (style("#=", "##"), AnnotationType::Test),
        (style("*=", "*#"), AnnotationType::Implementation),
        (style(";;=", ";;#"), AnnotationType::Todo),
        (style("# //=", "# //#"), AnnotationType::Implementation),
        (style("//=", "//"), AnnotationType::Spec),
    ];
    for (style, kind) in &styles {
        let (style, kind) = (style, *kind);
        let (annotations, malformed) =
            duvet::annotation::source::extract(text, Path::new("src/lib.rs"), style, kind);
        for annotation in &annotations {
            assert!(
                annotation.line >= 1 && annotation.line <= lines,
                "line {}",
                annotation.line
            );
            assert!(!annotation.target.is_empty(), "annotation without a target");
        }
        assert!(
            annotations.windows(2).all(|w| w[0].line <= w[1].line),
            "annotations out of order"
        );
        for problem in &malformed {
            assert!(
                problem.line >= 1 && problem.line <= lines,
                "line {}",
                problem.line
            );
        }
        assert!(
            malformed.windows(2).all(|w| w[0].line <= w[1].line),
            "problems out of order"
        );
    }
}

/// duvet's project configuration: the text as `.duvet/config.toml` (`config::load`), as a
/// `--source-pattern` flag, and as a specification URL whose cached copy must stay inside the
/// cache directory (`config::cache_path`: a path from a config file never leaves it).
pub fn duvet_config(data: &[u8]) {
    use duvet::config::{Flags, cache_path, load, parse_source_pattern};
    use std::path::Component;

    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let inside = |cache: &Path, url: &str| {
        if let Some(path) = cache_path(cache, url) {
            assert!(
                path.starts_with(cache),
                "{} leaves {}",
                path.display(),
                cache.display()
            );
            let below = path.strip_prefix(cache).expect("starts with the cache");
            assert!(
                below
                    .components()
                    .all(|c| matches!(c, Component::Normal(_))),
                "{} climbs out",
                path.display()
            );
        }
    };
    inside(Path::new("/cache/specs"), text);
    if let Ok(source) = parse_source_pattern(text) {
        assert!(!source.pattern.trim().is_empty(), "empty pattern accepted");
    }

    // One project directory per process, its config rewritten for every input.
    static ROOT: OnceLock<std::path::PathBuf> = OnceLock::new();
    let root = ROOT.get_or_init(|| {
        let root = std::env::temp_dir().join(format!("duvet-config-fuzz-{}", std::process::id()));
        std::fs::create_dir_all(root.join(".duvet")).expect("a temporary project");
        root
    });
    std::fs::write(root.join(".duvet/config.toml"), data).expect("the config is written");
    if let Ok(config) = load(root, &Flags::default()) {
        assert!(config.spec_cache_dir.starts_with(&config.root));
        for spec in &config.specifications {
            inside(&config.spec_cache_dir, &spec.source);
        }
        for source in &config.sources {
            assert!(!source.pattern.trim().is_empty(), "empty pattern accepted");
        }
    }
}

/// `duvet::annotation::toml_file::parse` (a requirement TOML file).
pub fn duvet_toml(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let lines = text.lines().count().max(1);
    match duvet::annotation::toml_file::parse(text, Path::new(".duvet/requirements/x.toml")) {
        Ok(annotations) => {
            for annotation in &annotations {
                assert!(
                    annotation.line >= 1 && annotation.line <= lines,
                    "line {}",
                    annotation.line
                );
            }
            assert!(
                annotations.windows(2).all(|w| w[0].line <= w[1].line),
                "not ordered by line"
            );
        }
        Err(message) => assert!(
            message.starts_with(".duvet/requirements/x.toml"),
            "{message}"
        ),
    }
}

// ---------------------------------------------------------------------------------------------
// jility: description edits and template front matter.

use jility_core::description::{Edit, EditOperation};

/// The lines of `text` as `replace_lines` numbers them (the oracle of the round trip below).
fn numbered_lines(text: &str) -> (Vec<&str>, bool) {
    let newlines = text.bytes().filter(|&b| b == b'\n').count();
    let crlf = newlines > 0 && text.matches("\r\n").count() == newlines;
    if text.is_empty() {
        return (Vec::new(), crlf);
    }
    let body = text.strip_suffix('\n').unwrap_or(text);
    let terminated = text.ends_with('\n');
    let mut lines: Vec<&str> = body.split('\n').collect();
    if crlf {
        let n = if terminated {
            lines.len()
        } else {
            lines.len() - 1
        };
        for line in lines.iter_mut().take(n) {
            *line = line.strip_suffix('\r').unwrap_or(line);
        }
    }
    (lines, crlf)
}

/// `description::apply` with `replace_lines`. Input: start line (1 byte), end line (1 byte),
/// then UTF-8 `original` NUL `content`.
pub fn jility_replace_lines(data: &[u8]) {
    let [start, end, rest @ ..] = data else {
        return;
    };
    let Ok(rest) = std::str::from_utf8(rest) else {
        return;
    };
    let (original, content) = rest.split_once('\0').unwrap_or((rest, ""));
    let (start, end) = (usize::from(*start), usize::from(*end));
    let edit = |content, start, end| Edit {
        operation: EditOperation::ReplaceLines,
        content,
        start_line: Some(start),
        end_line: Some(end),
        section_header: None,
    };
    let count = jility_core::description::line_count(original);
    match jility_core::description::apply(original, &edit(content, start, end)) {
        Ok(applied) => {
            assert!(
                1 <= start && start <= end && end <= count,
                "accepted {start}-{end} of {count}"
            );
            let _ = jility_core::description::diff(original, &applied.text, "a", "b");
        }
        Err(error) => {
            assert!(
                !(1 <= start && start <= end && end <= count),
                "refused {start}-{end} of {count}: {error}"
            );
            let _ = error.hint();
        }
    }
    // Replacing lines with themselves changes nothing.
    if 1 <= start && start <= end && end <= count {
        let (lines, crlf) = numbered_lines(original);
        let eol = if crlf { "\r\n" } else { "\n" };
        let mut same = lines[start - 1..end].join(eol);
        same.push_str(eol);
        let applied = jility_core::description::apply(original, &edit(&same, start, end))
            .expect("a valid range is accepted");
        assert_eq!(
            applied.text, original,
            "replacing lines {start}-{end} with themselves"
        );
    }
}

/// `description::apply` with `replace_section`. Input: the section header (first line), then
/// `original` NUL `content`.
pub fn jility_replace_section(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (header, rest) = text.split_once('\n').unwrap_or((text, ""));
    let (original, content) = rest.split_once('\0').unwrap_or((rest, ""));
    let edit = Edit {
        operation: EditOperation::ReplaceSection,
        content,
        start_line: None,
        end_line: None,
        section_header: Some(header),
    };
    match jility_core::description::apply(original, &edit) {
        Ok(applied) => {
            let _ = jility_core::description::diff(original, &applied.text, "a", "b");
        }
        Err(error) => {
            let _ = error.to_string();
            let _ = error.hint();
        }
    }
}

/// `templates::parse` of a project template (`+++` TOML front matter, then markdown), and
/// rendering it with every variable filled.
pub fn jility_front_matter(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(template) =
        jility_core::templates::parse("fuzz", text, Some(".jility/templates/fuzz.md".into()))
    {
        let variables: BTreeMap<String, String> = template
            .variables
            .iter()
            .map(|name| (name.clone(), "x".to_string()))
            .collect();
        match jility_core::templates::render(&template, &variables) {
            Ok(rendered) => assert!(!rendered.title.is_empty()),
            Err(jility_core::templates::RenderError::EmptyTitle { .. }) => {}
            Err(error) => panic!("every variable was given: {error}"),
        }
    }
}

/// `query::parse` of a query of the query language: it reads or refuses (never panics), a
/// refusal never quotes more than a clipped excerpt, and what it reads holds its limits.
pub fn jility_query(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let clock = jility_core::query::Clock::at(Utc.with_ymd_and_hms(2026, 12, 5, 0, 0, 0).unwrap());
    match jility_core::query::parse(text, &clock) {
        Ok(query) => {
            let words: usize = query.words.iter().map(|w| w.phrase.len()).sum();
            assert!(words <= jility_core::query::MAX_QUERY_WORDS);
            assert!(query.qualifiers.len() <= jility_core::query::MAX_QUALIFIERS);
            for q in &query.qualifiers {
                if let jility_core::query::Qualifier::Points(min, max) = q.qualifier {
                    assert!(min <= max, "an empty range read: {min}..{max}");
                }
            }
        }
        Err(err) => {
            assert_eq!(err.code, jility_core::errors::INVALID_INPUT, "{err:?}");
            assert!(
                err.message.chars().count() <= 3 * jility_core::errors::MAX_ERROR_CHARS + 400,
                "a refusal quotes too much: {} chars",
                err.message.chars().count()
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// twig-mcp: .twig/state.json and netrc.

/// twig's state as `StateCache::load` reads it (`serde_json` into `RepoState`, then
/// `LoadedState::new`), and the lookups and branch tree every tool makes on it.
pub fn twig_state(data: &[u8]) {
    use twig_mcp::state::{LoadedState, RepoState};
    let Ok(state) = serde_json::from_slice::<RepoState>(data) else {
        return;
    };
    let loaded = LoadedState::new(state);
    // Every name the state mentions (linked, in a dependency, a root) is tracked, once, in
    // name order.
    let names: Vec<String> = loaded.sorted_branches().map(str::to_string).collect();
    assert!(
        names.windows(2).all(|w| w[0] < w[1]),
        "names not sorted once"
    );
    for root in loaded.root_names() {
        assert!(loaded.names(root), "root {root} not tracked");
    }
    for name in names.iter().take(64) {
        assert!(loaded.names(name));
        let parents: Vec<&str> = loaded.parents(name).collect();
        let unique: HashSet<&&str> = parents.iter().collect();
        assert_eq!(unique.len(), parents.len(), "parents of {name} repeat");
        assert!(
            parents.iter().all(|p| loaded.names(p)),
            "a parent of {name} is not tracked"
        );
        let (chain, _) = loaded.ancestry(name, 16);
        assert!(!chain.is_empty() && chain.len() <= 16, "ancestry of {name}");
        let unique: HashSet<&String> = chain.iter().collect();
        assert_eq!(
            unique.len(),
            chain.len(),
            "ancestry of {name} repeats a branch"
        );
        let _ = loaded.branches_after(name).count();
    }
    let graph =
        twig_mcp::graph::BranchGraph::build(&names, &loaded, names.first().map(String::as_str));
    let badges = twig_mcp::graph::Badges::of(
        names
            .iter()
            .take(8)
            .map(|n| twig_mcp::types::BranchHealth {
                branch: n.clone(),
                stale: true,
                age_days: Some(40),
                ..Default::default()
            })
            .collect(),
    );
    for root in graph.root_candidates().iter().take(4) {
        let tree = graph.tree(root, &loaded, true, Some(&badges));
        assert_eq!(tree.root, *root);
        assert!(tree.orphans.iter().all(|o| o != root));
    }
    for name in names.iter().take(64) {
        let children: Vec<&str> = loaded.children(name).iter().collect();
        assert!(
            children.windows(2).all(|w| w[0] < w[1]),
            "children of {name} not sorted"
        );
        assert!(
            children.iter().all(|c| c != name),
            "{name} is its own child"
        );
        assert!(
            children
                .iter()
                .all(|c| loaded.parents(c).any(|p| p == name)),
            "a child of {name} does not name it as a parent"
        );
    }
}

/// Writes a netrc token so that the tokenizer reads it back as `text`.
fn netrc_token(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

/// `netrc::Netrc::parse`, and a round trip of what it read.
pub fn twig_netrc(data: &[u8]) {
    use twig_mcp::remote::netrc::Netrc;
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let netrc = Netrc::parse(text);
    for (name, credentials) in &netrc.machines {
        assert!(netrc.machine(name).is_some(), "machine {name:?} not found");
        let _ = format!("{credentials:?}");
    }
    // Written out again (every token quoted), the entries read back the same.
    let mut written = String::new();
    for (name, credentials) in &netrc.machines {
        written += &format!(
            "machine {} login {} password {}\n",
            netrc_token(name),
            netrc_token(&credentials.login),
            netrc_token(&credentials.password)
        );
    }
    if let Some(credentials) = &netrc.default {
        written += &format!(
            "default login {} password {}\n",
            netrc_token(&credentials.login),
            netrc_token(&credentials.password)
        );
    }
    let again = Netrc::parse(&written);
    assert_eq!(again.machines, netrc.machines, "round trip of {written:?}");
    assert_eq!(again.default, netrc.default, "round trip of {written:?}");
}

// ---------------------------------------------------------------------------------------------

#[cfg(test)]
mod tests {
    use super::TARGETS;

    /// Replays every file of every corpus directory through its target (stable CI).
    #[test]
    fn corpora_replay() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus");
        let mut replayed = 0;
        for (name, target) in TARGETS {
            let dir = root.join(name);
            let mut files: Vec<_> = std::fs::read_dir(&dir)
                .unwrap_or_else(|err| panic!("{}: {err}", dir.display()))
                .map(|entry| entry.expect("a directory entry").path())
                .filter(|path| path.is_file())
                .collect();
            files.sort();
            assert!(!files.is_empty(), "{} has no seed", dir.display());
            for file in files {
                let data = std::fs::read(&file).expect("a corpus file");
                let outcome = std::panic::catch_unwind(|| target(&data));
                assert!(outcome.is_ok(), "{name}: {} fails", file.display());
                replayed += 1;
            }
        }
        eprintln!("replayed {replayed} corpus files");
    }

    /// Every target has a binary and a corpus directory.
    #[test]
    fn every_target_is_wired() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        for (name, _) in TARGETS {
            assert!(
                root.join("fuzz_targets")
                    .join(format!("{name}.rs"))
                    .is_file(),
                "{name}"
            );
            assert!(root.join("corpus").join(name).is_dir(), "{name}");
        }
    }
}
