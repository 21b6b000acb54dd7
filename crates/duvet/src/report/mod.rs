//! duvet 0.4.3's reports, from the model `duvet mcp` answers from: what `duvet report` writes
//! (`--json`, `--lcov`, the snapshot, the HTML page) and checks (`--ci`).
//!
//! duvet counts in *references*: every annotation (a requirement of a requirement file, a
//! citation, a test, …) placed on the lines of its specification that its quote covers, one
//! byte range per line. [`Report::build`] makes them from the project's annotations, in
//! duvet's order (by file, then line: an annotation's number in the reports is its rank), and
//! the sections' lines with their place in the specification's file, from the parse the
//! model was made from (the text and 0.4.3's reading of it, [`ParsedSpec`]: no file is read
//! again). Quotes are found as the model finds them ([`crate::coverage::View::find`]).
//!
//! What 0.4.3 refuses, a report refuses too, with 0.4.3's words: a target without a section,
//! a section the specification lacks, a quote it does not hold, a specification that cannot be
//! read, a malformed annotation. Quote lines without a target line, which 0.4.3 skips without
//! a word, are warnings here ([`Report::warnings`]), never failures.

pub mod ci;
pub mod executed;
pub mod html;
pub mod json;
pub mod json_v2;
pub mod json_v2_merge;
pub mod lcov;
pub mod settings;
pub mod statuses;

use std::collections::BTreeMap;

use foldhash::{HashMap, HashMapExt};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use crate::annotation::{Annotation, AnnotationType, Level, Malformed};
use crate::model::{Inputs, Model, ParsedSpec, split_target};
use crate::spec::Format;

pub use statuses::Counts;

/// An annotation as the reports show it.
#[derive(Debug, Clone)]
pub struct Entry {
    pub annotation: Annotation,
    /// The file of the annotation, as written in the reports (relative to the root).
    pub source: String,
    /// The specification it targets, resolved as duvet resolves it ([`target_path`]).
    pub target_path: String,
    pub section: Option<String>,
    /// The `blob-link` of the `[[source]]` it was read from, if that has one
    /// ([`settings::SourceLinks`]).
    pub blob_link: Option<String>,
}

/// One annotation on one line of a specification: bytes `start..end` of the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Ref {
    /// The annotation's number ([`Report::entries`]): refs sort by it first, as duvet's.
    pub anno: usize,
    pub start: usize,
    pub end: usize,
    pub line: usize,
    /// The index of its section in [`Target::sections`].
    pub section: usize,
    pub kind: Kind,
    /// 0 none, 1 MAY, 2 SHOULD, 3 MUST (duvet's order of levels).
    pub level: u8,
}

/// The annotation types in duvet's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    Spec,
    Test,
    Citation,
    Exception,
    Todo,
    Implication,
}

impl Kind {
    pub fn of(kind: AnnotationType) -> Self {
        match kind {
            AnnotationType::Spec => Self::Spec,
            AnnotationType::Test => Self::Test,
            AnnotationType::Implementation => Self::Citation,
            AnnotationType::Exception => Self::Exception,
            AnnotationType::Todo => Self::Todo,
            AnnotationType::Implication => Self::Implication,
        }
    }

    /// As the JSON report writes it.
    pub fn upper(self) -> &'static str {
        match self {
            Self::Spec => "SPEC",
            Self::Test => "TEST",
            Self::Citation => "CITATION",
            Self::Exception => "EXCEPTION",
            Self::Todo => "TODO",
            Self::Implication => "IMPLICATION",
        }
    }
}

/// A level's rank in duvet's order (none < MAY < SHOULD < MUST).
pub fn rank(level: Option<Level>) -> u8 {
    match level {
        None => 0,
        Some(Level::May) => 1,
        Some(Level::Should) => 2,
        Some(Level::Must) => 3,
    }
}

/// The name of a level rank.
pub fn level_name(rank: u8) -> &'static str {
    match rank {
        1 => "MAY",
        2 => "SHOULD",
        3 => "MUST",
        _ => "AUTO",
    }
}

/// A line of a specification's file: its number (1-based) and bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    pub number: usize,
    pub bytes: Range<usize>,
}

/// A section with the lines of its body that hold text.
#[derive(Debug, Clone)]
pub struct SectionLines {
    pub id: String,
    pub title: String,
    pub title_line: usize,
    /// The bytes of the heading's line (where a reference to the whole section lies).
    pub title_bytes: Range<usize>,
    pub lines: Vec<Line>,
}

/// A specification the annotations target, with their references.
#[derive(Debug, Clone)]
pub struct Target {
    /// As the reports name it: the URL, or the path as resolved.
    pub key: String,
    pub is_url: bool,
    /// The file its text was read from.
    pub file: PathBuf,
    pub title: Option<String>,
    pub format: Format,
    pub text: Arc<str>,
    /// In document order.
    pub sections: Vec<SectionLines>,
    /// Sorted by line, then bytes, then annotation.
    pub refs: Vec<Ref>,
    /// Of each requirement (a `SPEC` annotation) by its number.
    pub statuses: BTreeMap<usize, Counts>,
}

impl Target {
    /// The section named `id`, as 0.4.3 finds it: by its id, or in an IETF text also
    /// without its `section-`/`appendix-` prefix (`#4.2`, `#A.1`).
    pub fn section(&self, id: &str) -> Option<usize> {
        let position = |id: &str| self.sections.iter().position(|s| s.id == id);
        position(id).or_else(|| {
            if self.format != Format::Ietf {
                return None;
            }
            let bare = id
                .trim_start_matches("section-")
                .trim_start_matches("appendix-");
            ["section-", "appendix-"]
                .iter()
                .find_map(|prefix| position(&format!("{prefix}{bare}")))
        })
    }

    /// The text of bytes `range` of the file.
    pub fn slice(&self, range: &Range<usize>) -> &str {
        self.text.get(range.clone()).unwrap_or_default()
    }
}

/// Everything the reports of one run are written from.
#[derive(Debug, Clone, Default)]
pub struct Report {
    pub entries: Vec<Entry>,
    /// Sorted as duvet sorts them: URLs, then paths.
    pub targets: Vec<Target>,
    /// Why duvet 0.4.3 would stop (then no report is written).
    pub errors: Vec<String>,
    /// What 0.4.3 skips in silence and this report names.
    pub warnings: Vec<String>,
}

/// What a report is built from: the project's inputs (the model is built from the same).
pub struct Sources {
    pub root: PathBuf,
    pub annotations: Vec<Annotation>,
    pub malformed: Vec<Malformed>,
    /// Each parsed specification with the name its annotations or the config give it.
    pub specs: Vec<(String, Arc<ParsedSpec>)>,
}

impl Sources {
    /// The parts of `inputs` a report needs (before the model consumes them).
    pub fn of(root: &Path, inputs: &Inputs) -> Self {
        let specs = inputs
            .specs
            .iter()
            .filter_map(|s| Some((s.source.clone(), s.parsed.as_ref().ok()?.clone())))
            .collect();
        Self {
            root: root.to_path_buf(),
            annotations: inputs.annotations.clone(),
            malformed: inputs.malformed.clone(),
            specs,
        }
    }
}

/// 1-based line numbers of byte offsets.
struct LineIndex(Vec<usize>);

impl LineIndex {
    fn new(text: &str) -> Self {
        let mut starts = vec![0];
        starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|at| at + 1));
        Self(starts)
    }

    fn number(&self, offset: usize) -> usize {
        self.0.partition_point(|&start| start <= offset)
    }

    /// The bytes of line `number`, without its line break.
    fn bytes(&self, text: &str, number: usize) -> Range<usize> {
        let start = self.0.get(number - 1).copied().unwrap_or(text.len());
        let mut end = self.0.get(number).map_or(text.len(), |next| next - 1);
        if text.as_bytes().get(end.wrapping_sub(1)) == Some(&b'\r') && end > start {
            end -= 1;
        }
        start..end
    }
}

/// Where a section's view lies in the file: for each view line (a non-blank section line,
/// trimmed), its start in the view and in the file, and its length; with the view, made
/// when a quote is first looked for in the section (most sections are quoted by none).
struct ViewMap(Vec<(usize, usize, usize)>, OnceLock<crate::coverage::View>);

impl ViewMap {
    /// The section's view, in `text` (its file's).
    fn view(&self, text: &str) -> &crate::coverage::View {
        self.1.get_or_init(|| {
            let lines: Vec<&str> = self
                .0
                .iter()
                .map(|&(_, at, len)| text.get(at..at + len).unwrap_or_default())
                .collect();
            crate::coverage::View::new(&lines)
        })
    }

    /// Bytes `range` of the view as ranges of the file, one per line it touches; the joining
    /// spaces between lines stand for none (a piece of one byte is empty, as in 0.4.3).
    fn file_ranges(&self, range: &Range<usize>) -> Vec<Range<usize>> {
        let mut out = Vec::new();
        let first = self.0.partition_point(|&(view, _, _)| view <= range.start);
        for &(view, file, len) in self.0.get(first.saturating_sub(1)..).unwrap_or(&[]) {
            if view >= range.end {
                break;
            }
            let start = range.start.max(view);
            let end = range.end.min(view + len);
            if start + 1 == end {
                // 0.4.3 starts each piece empty and grows it from its second byte on, so a
                // piece of one byte is empty (and counts nothing).
                out.push(file + (start - view)..file + (start - view));
            } else if start < end {
                out.push(file + (start - view)..file + (end - view));
            }
        }
        out
    }
}

/// A section's lines as the report places them: 0.4.3's reading of the section
/// ([`crate::extract::sections`], kept by the parse), its text lines (an IETF blank line is
/// an empty one, a Markdown list break none), with the view its quotes are found in.
fn section_lines(
    text: &str,
    index: &LineIndex,
    section: &crate::extract::Kept,
) -> (SectionLines, ViewMap) {
    let mut lines = Vec::with_capacity(section.lines.len());
    let mut map = Vec::new();
    let mut view = 0;
    for bytes in section.lines.iter().flatten() {
        let at = bytes.start;
        lines.push(Line {
            number: index.number(at),
            bytes: bytes.clone(),
        });
        let line = text.get(bytes.clone()).unwrap_or_default();
        let trimmed = line.trim();
        if trimmed.is_empty() {
            continue;
        }
        let lead = line.len() - line.trim_start().len();
        if !map.is_empty() {
            view += 1;
        }
        map.push((view, at + lead, trimmed.len()));
        view += trimmed.len();
    }
    let title_line = index.number(section.title_at);
    (
        SectionLines {
            id: section.id.clone(),
            title: section.title.clone(),
            title_line,
            title_bytes: index.bytes(text, title_line),
            lines,
        },
        ViewMap(map, OnceLock::new()),
    )
}

/// The path a relative target names, as duvet resolves it: from the root when the file is
/// there, else from the annotation's directory and each one above it.
pub fn target_path(root: &Path, source: &Path, target: &str) -> String {
    if target.contains("://") || target.starts_with('/') {
        return target.to_string();
    }
    if root.join(target).is_file() {
        return target.to_string();
    }
    let mut dir = source.to_path_buf();
    while dir.pop() {
        let candidate = dir.join(target);
        if root.join(&candidate).is_file() {
            return crate::model::path_text(&candidate);
        }
    }
    target.to_string()
}

/// What one annotation comes to, decided in the annotations' order (so that the errors come
/// in it) before the quotes are looked for.
enum Placing {
    /// Nothing: its specification's text could not be read, which is said once.
    Skip,
    Error(String),
    /// A reference to the whole section `c` of target `t`: its heading's line.
    Title {
        t: usize,
        c: usize,
    },
    /// A quote, to be found by search `search` in section `c` of target `t`.
    Quote {
        t: usize,
        c: usize,
        search: usize,
    },
}

impl Report {
    /// The report of a project: its inputs (for the annotations as written) and its model
    /// (for the specifications).
    ///
    /// The specifications are read, their quotes found and their references counted on every
    /// core; each distinct quote of a section is looked for once.
    pub fn build(sources: &Sources, model: &Model) -> Self {
        let mut report = Self::default();
        report.collect_entries(sources, model);

        // The specifications and their parsed texts by the model's index.
        let mut parsed: HashMap<usize, Arc<ParsedSpec>> = HashMap::new();
        for (source, spec) in &sources.specs {
            if let Some(index) = model.spec_index(source) {
                parsed.entry(index).or_insert_with(|| spec.clone());
            }
        }

        // Each target's specification, by the annotation that first names it: all of them
        // placed at once. As 0.4.3 keys them: by the target as written, so two spellings of one
        // URL are two targets of one text.
        let specs: Vec<Option<usize>> = report
            .entries
            .iter()
            .map(|entry| model.spec_index(split_target(&entry.annotation.target).0))
            .collect();
        let mut first: HashMap<&str, usize> = HashMap::new();
        let mut loads: Vec<(usize, &Entry)> = Vec::new();
        for (entry, spec) in report.entries.iter().zip(&specs) {
            if let Some(spec) = *spec {
                first.entry(&entry.target_path).or_insert_with(|| {
                    loads.push((spec, entry));
                    loads.len() - 1
                });
            }
        }
        let mut loaded: Vec<Option<Loaded>> = crate::par::par_map(loads, |(spec, entry)| {
            load_target(model, spec, parsed.get(&spec), entry)
        });

        // The annotations in order: the targets as they are first named, the errors, the
        // searches (each distinct quote of a section once).
        let mut by_target: HashMap<String, usize> = HashMap::new();
        let mut targets: Vec<Target> = Vec::new();
        let mut maps: Vec<Vec<ViewMap>> = Vec::new();
        let mut indexes: Vec<LineIndex> = Vec::new();
        let mut searches: Vec<(usize, usize, &str)> = Vec::new();
        let mut distinct: HashMap<(usize, usize, &str), usize> = HashMap::new();
        let mut placings: Vec<Placing> = Vec::with_capacity(report.entries.len());
        for (entry, spec) in report.entries.iter().zip(&specs) {
            let a = &entry.annotation;
            let Some(spec) = *spec else {
                let (spec_part, _) = split_target(&a.target);
                placings.push(Placing::Error(format!(
                    "{}:{}: could not resolve file {spec_part:?}",
                    entry.source, a.line
                )));
                continue;
            };
            let t = match by_target.get(&entry.target_path) {
                Some(&t) => t,
                None => {
                    let load = first
                        .get(entry.target_path.as_str())
                        .and_then(|&slot| loaded.get_mut(slot)?.take());
                    let Some(load) = load else {
                        placings.push(Placing::Error(match &model.specs[spec].error {
                            Some(error) => format!("{}: {error}", entry.target_path),
                            None => format!(
                                "{}: the specification's text was not read",
                                entry.target_path
                            ),
                        }));
                        // Every later annotation of it fails alike: counted once.
                        by_target.insert(entry.target_path.clone(), usize::MAX);
                        continue;
                    };
                    targets.push(load.target);
                    maps.push(load.maps);
                    indexes.push(load.index);
                    by_target.insert(entry.target_path.clone(), targets.len() - 1);
                    targets.len() - 1
                }
            };
            if t == usize::MAX {
                placings.push(Placing::Skip);
                continue;
            }
            let target = &targets[t];
            let Some(section_id) = entry.section.as_deref() else {
                placings.push(Placing::Error(format!(
                    "{}:{}: reference to {} is missing a section",
                    entry.source, a.line, target.key
                )));
                continue;
            };
            let Some(c) = target.section(section_id) else {
                placings.push(Placing::Error(format!(
                    "{}:{}: missing section {section_id:?} in {}",
                    entry.source, a.line, target.key
                )));
                continue;
            };
            if a.quote.is_empty() {
                placings.push(Placing::Title { t, c });
                continue;
            }
            let search = *distinct.entry((t, c, &a.quote)).or_insert_with(|| {
                searches.push((t, c, &a.quote));
                searches.len() - 1
            });
            placings.push(Placing::Quote { t, c, search });
        }
        let found = crate::par::par_map(searches, |(t, c, quote)| {
            maps[t][c].view(&targets[t].text).find(quote)
        });

        let mut placed: Vec<Vec<Ref>> = vec![Vec::new(); targets.len()];
        for (number, (entry, placing)) in report.entries.iter().zip(placings).enumerate() {
            let a = &entry.annotation;
            let kind = Kind::of(a.kind);
            let level = rank(a.level);
            match placing {
                Placing::Skip => {}
                Placing::Error(error) => report.errors.push(error),
                Placing::Title { t, c } => {
                    let title = &targets[t].sections[c];
                    placed[t].push(Ref {
                        line: title.title_line,
                        start: title.title_bytes.start,
                        end: title.title_bytes.end,
                        anno: number,
                        section: c,
                        kind,
                        level,
                    });
                }
                Placing::Quote { t, c, search } => match &found[search] {
                    Some(range) => {
                        for bytes in maps[t][c].file_ranges(range) {
                            placed[t].push(Ref {
                                line: indexes[t].number(bytes.start),
                                start: bytes.start,
                                end: bytes.end,
                                anno: number,
                                section: c,
                                kind,
                                level,
                            });
                        }
                    }
                    None => report.errors.push(format!(
                        "{}:{}: could not find text in section {:?} of {}",
                        entry.source,
                        a.line,
                        entry.section.as_deref().unwrap_or_default(),
                        targets[t].key
                    )),
                },
            }
        }

        // Each target's references in order, and the counts of its requirements.
        report.targets = crate::par::par_map(
            targets.into_iter().zip(placed).collect(),
            |(mut target, mut refs)| {
                refs.sort_unstable();
                target.statuses = statuses::of(&refs);
                target.refs = refs;
                target
            },
        );
        report
            .targets
            .sort_by(|a, b| (!a.is_url, &a.key).cmp(&(!b.is_url, &b.key)));
        report
    }

    /// The annotations in duvet's order, and what cannot be one.
    fn collect_entries(&mut self, sources: &Sources, model: &Model) {
        // A relative target resolves alike from every file of a directory (and a project's
        // annotations name a few targets thousands of times): each is resolved once.
        let mut resolved: HashMap<(&Path, &str), String> = HashMap::new();
        let mut entries: Vec<Entry> = sources
            .annotations
            .iter()
            .map(|a| {
                let (path, section) = split_target(&a.target);
                let dir = a.file.parent().unwrap_or(Path::new(""));
                let target_path = resolved
                    .entry((dir, path))
                    .or_insert_with(|| target_path(&sources.root, &a.file, path))
                    .clone();
                Entry {
                    source: crate::model::path_text(&a.file),
                    target_path,
                    section: section.map(str::to_string),
                    annotation: a.clone(),
                    blob_link: None,
                }
            })
            .collect();
        entries.sort_by(|a, b| {
            (&a.annotation.file, a.annotation.line).cmp(&(&b.annotation.file, b.annotation.line))
        });
        self.entries = entries;
        for m in &sources.malformed {
            let place = format!("{}:{}", crate::model::path_text(&m.file), m.line);
            if m.orphan_quote.is_some() {
                // A slip only when the text is a specification's (the model decides).
                if model.invalid_citation(&place).is_none() {
                    continue;
                }
                self.warnings.push(format!(
                    "{place}: quote lines without a target line are not an annotation \
                     (duvet 0.4.3 skips them too)"
                ));
            } else {
                self.errors.push(format!("{place}: {}", m.reason));
            }
        }
    }
}

/// A target as read, with what its quotes are placed by.
struct Loaded {
    target: Target,
    /// Per section, where its view lies in the file.
    maps: Vec<ViewMap>,
    index: LineIndex,
}

/// The target of specification `spec` of the model, with the view maps of its sections, from
/// its parse (the text and 0.4.3's reading of it, which the model was made from); `None`
/// when it has none.
fn load_target(
    model: &Model,
    spec: usize,
    parsed: Option<&Arc<ParsedSpec>>,
    entry: &Entry,
) -> Option<Loaded> {
    let parsed = parsed?;
    let file = model.specs[spec].file.clone();
    let text = parsed.text.clone();
    let index = LineIndex::new(&text);
    let (sections, maps) = parsed
        .kept()
        .iter()
        .map(|section| section_lines(&text, &index, section))
        .unzip();
    let format = parsed.format;
    let title =
        (format == Format::Markdown && !parsed.title.is_empty()).then(|| parsed.title.clone());
    Some(Loaded {
        target: Target {
            key: entry.target_path.clone(),
            is_url: entry.target_path.contains("://"),
            file,
            title,
            format,
            text,
            sections,
            refs: Vec::new(),
            statuses: BTreeMap::new(),
        },
        maps,
        index,
    })
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::config::{self, Flags};
    use crate::model::Scope;
    use crate::project::{self, FileCache};

    /// The report and its JSON as `duvet report` makes them, from a model of `scope`.
    fn report_of(root: &Path, scope: Scope) -> (Report, Vec<u8>) {
        let config = config::load(root, &Flags::default()).unwrap();
        let (inputs, model_of): (_, fn(Inputs) -> Model) = match scope {
            Scope::Full => (
                project::inputs(&config, &FileCache::default()),
                Model::build,
            ),
            Scope::Specifications => (
                project::inputs_for(&config, &FileCache::single_use(), scope),
                |inputs| Model::build_for(inputs, Scope::Specifications),
            ),
        };
        let sources = Sources::of(root, &inputs);
        let model = model_of(inputs);
        let report = Report::build(&sources, &model);
        let json = json::to_vec(&report, Some("https://b"), None, None);
        (report, json)
    }

    /// A report reads of the model only what a model of [`Scope::Specifications`] holds:
    /// from it, a report is the one the whole model gives (JSON, errors, and the warnings of
    /// quote lines without a target line, which only the model's sections decide).
    #[test]
    fn a_report_is_the_same_from_the_model_of_a_report() {
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/upstream");
        let dir = tempfile::tempdir().unwrap();
        let copy = |from: &Path, to: &Path| {
            for entry in walkdir::WalkDir::new(from).into_iter().flatten() {
                let target = to.join(entry.path().strip_prefix(from).unwrap());
                if entry.file_type().is_dir() {
                    std::fs::create_dir_all(&target).unwrap();
                } else {
                    std::fs::copy(entry.path(), &target).unwrap();
                }
            }
        };
        copy(&fixture, dir.path());
        // A quote of the specification without its target line (a warning), and one of
        // no specification (nothing).
        let lib = dir.path().join("src/lib.rs");
        let mut text = std::fs::read_to_string(&lib).unwrap();
        text.push_str(
            "\n//# The server MUST log each request.\nfn a() {}\n\n//# not a quote of anything here\nfn b() {}\n",
        );
        std::fs::write(&lib, text).unwrap();

        let (full, full_json) = report_of(dir.path(), Scope::Full);
        let (part, part_json) = report_of(dir.path(), Scope::Specifications);
        assert!(full.errors.is_empty(), "{:?}", full.errors);
        assert_eq!(full.warnings.len(), 2, "{:?}", full.warnings);
        assert_eq!(part.errors, full.errors);
        assert_eq!(part.warnings, full.warnings);
        assert_eq!(
            String::from_utf8(part_json).unwrap(),
            String::from_utf8(full_json).unwrap()
        );
    }
}
