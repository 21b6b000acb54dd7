//! The v2 JSON report of duvet 0.4.3 (`duvet report --json-v2 FILE`), which `duvet merge`
//! reads and writes: every entity under an id made from its content, so that the reports of
//! several packages can be merged ([`super::json_v2_merge`]).
//!
//! Layout, as 0.4.3 writes it (`serde_json`'s pretty printer, two spaces, no final newline):
//! `{"version": "2.0", "issue_links"?: [..], "repositories"?: {repo-id: {"blob_link"}},
//! "sources": {<sources.json#inline>: {src-id: {"file_name", "contents"}}, <sources.json#linked>:
//! {lnk-id: {"file_name", "repository"?}}, other URL-keyed buckets…}, "annotations":
//! {<annotations.json#specification>: {spc-id: {"source": {"src", "start", "end"}, "title"?,
//! "format", "url"?}}, <#section>: {sec-id: {"source", "short_name", "long_name"?}},
//! <#requirement>: {req-id: {"source": {"src", "line"?}, "origin": {"src", "ranges": [{"start",
//! "end"}]}, "level", "coverage"?: {cite-id: [range…]}}}, <#cite>: {cite-id: {"source", "target",
//! "type", "level", "comment"?, "feature"?, "tracking_issue"?, "tags"?}}, other buckets…}}`.
//! The buckets' keys are the schema URLs (`https://awslabs.github.io/duvet/v2/…`); buckets of
//! other URLs are kept as read.
//!
//! Ids ([`ids`]) are a prefix and the 16 hex digits of the FNV-1a 64-bit hash of the entity's
//! key fields. A specification's text is embedded (`src-`, hashed from its bytes); code and
//! requirement files are named (`lnk-`, from the path and the repository's id); a requirement
//! is one authoring site (requirement file or `type=spec` comment, and line) with the byte
//! ranges of the specification it quotes, and its coverage the parts of those ranges each
//! citation's ranges overlap.

use std::collections::{BTreeMap, HashMap};
use std::ops::Range;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{Entry, Kind, Ref, Report, Target, level_name};
use crate::spec::Format;

/// The version every v2 report holds.
pub const VERSION: &str = "2.0";

/// The ids of the v2 schema: `<prefix><16 lowercase hex digits>` of the FNV-1a 64-bit hash of
/// the entity's key fields, joined by NUL bytes (numbers in decimal), as duvet 0.4.3's
/// `ids.rs` makes them.
pub mod ids {
    /// FNV-1a, 64 bits.
    pub fn fnv1a_64(data: &[u8]) -> u64 {
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        for &byte in data {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
        hash
    }

    fn id(prefix: &str, data: &[u8]) -> String {
        format!("{prefix}{:016x}", fnv1a_64(data))
    }

    /// The fields joined by NUL bytes.
    fn joined(fields: &[&str]) -> Vec<u8> {
        fields.join("\0").into_bytes()
    }

    /// A repository, from its blob link.
    pub fn repo(blob_link: &str) -> String {
        id("repo-", blob_link.as_bytes())
    }

    /// An embedded source (a specification's text), from its bytes.
    pub fn src(contents: &[u8]) -> String {
        id("src-", contents)
    }

    /// A linked source (a code or requirement file), from its path and repository id (empty
    /// without one).
    pub fn lnk(file_name: &str, repository: &str) -> String {
        id("lnk-", &joined(&[file_name, repository]))
    }

    /// A specification: its source and bytes.
    pub fn spc(src: &str, start: usize, end: usize) -> String {
        id(
            "spc-",
            &joined(&[src, &start.to_string(), &end.to_string()]),
        )
    }

    /// A section: its source and bytes.
    pub fn sec(src: &str, start: usize, end: usize) -> String {
        id(
            "sec-",
            &joined(&[src, &start.to_string(), &end.to_string()]),
        )
    }

    /// A requirement: the source it quotes, its ranges (in any order), and where it is
    /// written (linked source and line).
    pub fn req(origin: &str, ranges: &[(usize, usize)], source: &str, line: usize) -> String {
        let mut sorted = ranges.to_vec();
        sorted.sort_unstable();
        let mut fields = vec![origin.to_string()];
        for (start, end) in sorted {
            fields.push(start.to_string());
            fields.push(end.to_string());
        }
        fields.push(source.to_string());
        fields.push(line.to_string());
        id("req-", fields.join("\0").as_bytes())
    }

    /// A citation (or test, exception, …): where it is written and the source it quotes.
    pub fn cite(source: &str, line: usize, target: &str) -> String {
        id("cite-", &joined(&[source, &line.to_string(), target]))
    }
}

// ---- the schema --------------------------------------------------------------------------

/// A v2 report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReportV2 {
    pub version: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub issue_links: Vec<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub repositories: BTreeMap<String, Repository>,
    pub sources: Sources,
    pub annotations: Annotations,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Repository {
    pub blob_link: String,
}

/// The sources by bucket; buckets of other schema URLs are kept as read (`extensions`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Sources {
    #[serde(
        rename = "https://awslabs.github.io/duvet/v2/sources.json#inline",
        default
    )]
    pub inline: BTreeMap<String, InlineSource>,
    #[serde(
        rename = "https://awslabs.github.io/duvet/v2/sources.json#linked",
        default
    )]
    pub linked: BTreeMap<String, LinkedSource>,
    #[serde(flatten)]
    pub extensions: BTreeMap<String, serde_json::Value>,
}

/// A specification's file, its text embedded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InlineSource {
    pub file_name: String,
    pub contents: String,
}

/// A code or requirement file, by path (relative to the project's root) and repository.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkedSource {
    pub file_name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repository: Option<String>,
}

/// The annotations by bucket; buckets of other schema URLs are kept as read.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Annotations {
    #[serde(
        rename = "https://awslabs.github.io/duvet/v2/annotations.json#specification",
        default
    )]
    pub specification: BTreeMap<String, SpecificationAnnotation>,
    #[serde(
        rename = "https://awslabs.github.io/duvet/v2/annotations.json#section",
        default
    )]
    pub section: BTreeMap<String, SectionAnnotation>,
    #[serde(
        rename = "https://awslabs.github.io/duvet/v2/annotations.json#requirement",
        default
    )]
    pub requirement: BTreeMap<String, RequirementAnnotation>,
    #[serde(
        rename = "https://awslabs.github.io/duvet/v2/annotations.json#cite",
        default
    )]
    pub cite: BTreeMap<String, CiteAnnotation>,
    #[serde(flatten)]
    pub extensions: BTreeMap<String, serde_json::Value>,
}

/// Bytes `start..end` of a source.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourceRef {
    pub src: String,
    pub start: usize,
    pub end: usize,
}

/// Byte ranges of a source (a quote cut where the specification's lines break).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourceRanges {
    pub src: String,
    pub ranges: Vec<ByteRange>,
}

/// A line of a source.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourceLocation {
    pub src: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ByteRange {
    pub start: usize,
    pub end: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpecificationAnnotation {
    pub source: SourceRef,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    pub format: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SectionAnnotation {
    pub source: SourceRef,
    pub short_name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub long_name: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequirementAnnotation {
    /// Where the requirement is written (requirement file or `type=spec` comment).
    pub source: SourceLocation,
    /// The bytes of the specification it stands for.
    pub origin: SourceRanges,
    pub level: Level,
    /// The parts of `origin` each citation covers.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub coverage: BTreeMap<String, Vec<ByteRange>>,
    /// Whether its implementation citations' code ran: only with `--coverage-report`
    /// ([`super::executed`]; not 0.4.3's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution: Option<serde_json::Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CiteAnnotation {
    pub source: SourceLocation,
    pub target: SourceRanges,
    #[serde(rename = "type")]
    pub kind: CiteType,
    #[serde(default)]
    pub level: Level,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub feature: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tracking_issue: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
}

/// The type of a citation (requirements are not citations). `Debug` names the variants as
/// 0.4.3's merge errors do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum CiteType {
    #[serde(rename = "CITATION")]
    #[default]
    Citation,
    #[serde(rename = "TEST")]
    Test,
    #[serde(rename = "IMPLICATION")]
    Implication,
    #[serde(rename = "EXCEPTION")]
    Exception,
    #[serde(rename = "TODO")]
    Todo,
}

/// A level. `Debug` names the variants as 0.4.3's merge errors do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Level {
    #[serde(rename = "AUTO")]
    #[default]
    Auto,
    #[serde(rename = "MAY")]
    May,
    #[serde(rename = "SHOULD")]
    Should,
    #[serde(rename = "MUST")]
    Must,
}

impl Level {
    fn of_rank(rank: u8) -> Self {
        match level_name(rank) {
            "MAY" => Self::May,
            "SHOULD" => Self::Should,
            "MUST" => Self::Must,
            _ => Self::Auto,
        }
    }
}

impl CiteType {
    /// `None` for a requirement.
    fn of(kind: Kind) -> Option<Self> {
        match kind {
            Kind::Spec => None,
            Kind::Citation => Some(Self::Citation),
            Kind::Test => Some(Self::Test),
            Kind::Implication => Some(Self::Implication),
            Kind::Exception => Some(Self::Exception),
            Kind::Todo => Some(Self::Todo),
        }
    }
}

fn non_empty(value: &str) -> Option<String> {
    (!value.is_empty()).then(|| value.to_string())
}

// ---- building a report --------------------------------------------------------------------

impl ReportV2 {
    /// The v2 report of `report`: `root` is the project's root (paths are written relative
    /// to it), `blob_link` and `issue_link` those of the run (`--blob-link`, `[report.html]`);
    /// an annotation's own blob link (its source's) names its repository instead of the run's.
    pub fn build(
        report: &Report,
        root: &Path,
        blob_link: Option<&str>,
        issue_link: Option<&str>,
    ) -> Self {
        let mut out = ReportV2 {
            version: VERSION.to_string(),
            issue_links: issue_link.map(str::to_string).into_iter().collect(),
            repositories: BTreeMap::new(),
            sources: Sources::default(),
            annotations: Annotations::default(),
        };
        // The repositories: each annotation's source's blob link, and the run's, which stands
        // for the annotations without one.
        let mut repo_ids: HashMap<&str, String> = HashMap::new();
        let links = report.entries.iter().filter_map(|e| e.blob_link.as_deref());
        for link in links.chain(blob_link) {
            repo_ids.entry(link).or_insert_with(|| {
                let id = ids::repo(link);
                out.repositories.insert(
                    id.clone(),
                    Repository {
                        blob_link: link.to_string(),
                    },
                );
                id
            });
        }

        // Every annotation's file, linked (a file and a repository), by annotation.
        let mut lnk_ids: HashMap<(&str, &str), String> = HashMap::new();
        let mut lnks: Vec<String> = Vec::with_capacity(report.entries.len());
        for entry in &report.entries {
            let repo = (entry.blob_link.as_deref())
                .or(blob_link)
                .and_then(|link| repo_ids.get(link))
                .map_or("", String::as_str);
            let id = lnk_ids
                .entry((entry.source.as_str(), repo))
                .or_insert_with(|| {
                    let id = ids::lnk(&entry.source, repo);
                    out.sources.linked.insert(
                        id.clone(),
                        LinkedSource {
                            file_name: entry.source.clone(),
                            repository: (!repo.is_empty()).then(|| repo.to_string()),
                        },
                    );
                    id
                });
            lnks.push(id.clone());
        }

        for target in &report.targets {
            if target.sections.is_empty() {
                continue;
            }
            let src = ids::src(target.text.as_bytes());
            out.sources
                .inline
                .entry(src.clone())
                .or_insert_with(|| InlineSource {
                    file_name: file_name(root, &target.file),
                    contents: target.text.to_string(),
                });
            let titles = out.add_specification(target, &src);
            let cites = out.add_cites(report, target, &src, &lnks, &titles);
            out.add_requirements(report, target, &src, &lnks, &cites, &titles);
        }
        out
    }

    /// The specification and its sections; returns the bytes of each section's title.
    fn add_specification(&mut self, target: &Target, src: &str) -> Vec<Range<usize>> {
        let end = target.text.len();
        let url = target.is_url.then(|| {
            let parsed =
                url::Url::parse(&target.key).map_or_else(|_| target.key.clone(), String::from);
            canonical_url(&parsed)
        });
        self.annotations
            .specification
            .entry(ids::spc(src, 0, end))
            .or_insert_with(|| SpecificationAnnotation {
                source: SourceRef {
                    src: src.to_string(),
                    start: 0,
                    end,
                },
                title: target.title.clone(),
                format: match target.format {
                    Format::Ietf => "ietf",
                    Format::Markdown => "markdown",
                }
                .to_string(),
                url,
            });
        let titles = match target.format {
            Format::Markdown => markdown_titles(&target.text),
            Format::Ietf => HashMap::new(),
        };
        let mut spans = Vec::with_capacity(target.sections.len());
        for section in &target.sections {
            let title = title_bytes(target, section, &titles);
            spans.push(title.clone());
            let end = section
                .lines
                .last()
                .map_or(title.end, |line| line.bytes.end);
            self.annotations
                .section
                .entry(ids::sec(src, title.start, end))
                .or_insert_with(|| SectionAnnotation {
                    source: SourceRef {
                        src: src.to_string(),
                        start: title.start,
                        end,
                    },
                    short_name: section.id.clone(),
                    long_name: Some(section.title.clone()),
                });
        }
        spans
    }

    /// The citations of `target`; returns each citation reference as (cite id, bytes).
    fn add_cites(
        &mut self,
        report: &Report,
        target: &Target,
        src: &str,
        lnks: &[String],
        titles: &[Range<usize>],
    ) -> Vec<(String, Range<usize>)> {
        let mut placed = Vec::new();
        for r in &target.refs {
            let Some(kind) = CiteType::of(r.kind) else {
                continue;
            };
            let Some(entry) = report.entries.get(r.anno) else {
                continue;
            };
            let Some(lnk) = lnks.get(r.anno) else {
                continue;
            };
            let a = &entry.annotation;
            let id = ids::cite(lnk, a.line, src);
            let bytes = ref_bytes(r, entry, titles);
            let range = ByteRange {
                start: bytes.start,
                end: bytes.end,
            };
            // The first reference of a citation gives its fields (all its references are of
            // one comment).
            self.annotations
                .cite
                .entry(id.clone())
                .and_modify(|cite| cite.target.ranges.push(range.clone()))
                .or_insert_with(|| CiteAnnotation {
                    source: SourceLocation {
                        src: lnk.clone(),
                        line: (a.line > 0).then_some(a.line),
                    },
                    target: SourceRanges {
                        src: src.to_string(),
                        ranges: vec![range.clone()],
                    },
                    kind,
                    level: Level::of_rank(r.level),
                    comment: non_empty(&a.comment),
                    feature: a.feature.as_deref().and_then(non_empty),
                    tracking_issue: a.tracking_issue.as_deref().and_then(non_empty),
                    tags: a.tags.clone(),
                });
            placed.push((id, bytes));
        }
        for cite in self.annotations.cite.values_mut() {
            cite.target.ranges.sort();
            cite.target.ranges.dedup();
        }
        placed
    }

    /// The requirements of `target`: its `SPEC` references grouped by where they are written
    /// (file and line), each with the parts of its ranges the citations cover.
    fn add_requirements(
        &mut self,
        report: &Report,
        target: &Target,
        src: &str,
        lnks: &[String],
        cites: &[(String, Range<usize>)],
        titles: &[Range<usize>],
    ) {
        let mut groups: BTreeMap<(&str, usize), Group> = BTreeMap::new();
        for r in target.refs.iter().filter(|r| r.kind == Kind::Spec) {
            let Some(entry) = report.entries.get(r.anno) else {
                continue;
            };
            let Some(lnk) = lnks.get(r.anno) else {
                continue;
            };
            groups
                .entry((lnk.as_str(), entry.annotation.line))
                .or_insert_with(|| (r.level, Vec::new()))
                .1
                .push({
                    let bytes = ref_bytes(r, entry, titles);
                    (bytes.start, bytes.end)
                });
        }
        for ((lnk, line), (level, mut ranges)) in groups {
            ranges.sort_unstable();
            ranges.dedup();
            let mut coverage: BTreeMap<String, Vec<ByteRange>> = BTreeMap::new();
            for &(start, end) in &ranges {
                for (cite, bytes) in cites {
                    let (from, to) = (bytes.start.max(start), bytes.end.min(end));
                    if from < to {
                        coverage.entry(cite.clone()).or_default().push(ByteRange {
                            start: from,
                            end: to,
                        });
                    }
                }
            }
            for covered in coverage.values_mut() {
                covered.sort();
                covered.dedup();
            }
            self.annotations.requirement.insert(
                ids::req(src, &ranges, lnk, line),
                RequirementAnnotation {
                    source: SourceLocation {
                        src: lnk.to_string(),
                        line: (line > 0).then_some(line),
                    },
                    origin: SourceRanges {
                        src: src.to_string(),
                        ranges: ranges
                            .into_iter()
                            .map(|(start, end)| ByteRange { start, end })
                            .collect(),
                    },
                    level: Level::of_rank(level),
                    coverage,
                    execution: None,
                },
            );
        }
    }
}

/// The bytes of a reference as 0.4.3 places it: a reference to a whole section (no quote)
/// is its title's text, not the heading's line; the part of a quote on one line is empty when
/// it is a single byte (0.4.3 starts each part empty and grows it from its second byte on).
fn ref_bytes(r: &Ref, entry: &Entry, titles: &[Range<usize>]) -> Range<usize> {
    match titles.get(r.section) {
        Some(title) if entry.annotation.quote.is_empty() => title.clone(),
        _ if r.end == r.start + 1 => r.start..r.start,
        _ => r.start..r.end,
    }
}

/// A requirement's references: the level of the first, and their bytes.
type Group = (u8, Vec<(usize, usize)>);

/// A file's path as 0.4.3 writes it: relative to the root when under it.
fn file_name(root: &Path, file: &Path) -> String {
    let relative = file.strip_prefix(root).unwrap_or(file);
    relative.to_string_lossy().into_owned()
}

/// The URL 0.4.3 names an IETF document by (`https://www.rfc-editor.org/rfc/rfcN.txt` for the
/// rfc-editor, tools and datatracker spellings); other URLs as they are.
pub fn canonical_url(url: &str) -> String {
    const SPELLINGS: [&str; 6] = [
        "https://www.rfc-editor.org/rfc/rfc",
        "http://www.rfc-editor.org/rfc/rfc",
        "https://tools.ietf.org/rfc/rfc",
        "http://tools.ietf.org/rfc/rfc",
        "https://datatracker.ietf.org/doc/html/rfc",
        "http://datatracker.ietf.org/doc/html/rfc",
    ];
    for spelling in SPELLINGS {
        if let Some(rest) = url.strip_prefix(spelling) {
            let mut number = rest.trim_end_matches('/');
            for extension in [".txt", ".html", ".xml", ".pdf"] {
                number = number.trim_end_matches(extension);
            }
            return format!("{}{number}.txt", SPELLINGS[0]);
        }
    }
    url.to_string()
}

/// The bytes 0.4.3 gives a section's title: of its heading's text in the file.
fn title_bytes(
    target: &Target,
    section: &super::SectionLines,
    markdown: &HashMap<usize, Range<usize>>,
) -> Range<usize> {
    let line = section.title_bytes.clone();
    if let Some(range) = markdown.get(&line.start) {
        return range.clone();
    }
    let text = target.slice(&line);
    match target.format {
        Format::Ietf => {
            let title = section.title.as_str();
            let kept = text.trim_end();
            if title.is_empty() {
                // No title: the empty text just after the number.
                let number = section
                    .id
                    .strip_prefix("section-")
                    .or_else(|| section.id.strip_prefix("appendix-"))
                    .unwrap_or(&section.id);
                let at = kept
                    .rfind(number)
                    .map_or(kept.len(), |at| at + number.len());
                return line.start + at..line.start + at;
            }
            if kept.ends_with(title) {
                let at = line.start + kept.len() - title.len();
                return at..at + title.len();
            }
            // A title on more than one line (kept whole here; 0.4.3 keeps its first line):
            // the end of the heading's line that starts it.
            let at = kept
                .char_indices()
                .map(|(at, _)| at)
                .find(|&at| {
                    at > 0 && !kept[at..].trim().is_empty() && title.starts_with(&kept[at..])
                })
                .or_else(|| text.find(title))
                .unwrap_or(0);
            line.start + at..line.start + kept.len().max(at)
        }
        Format::Markdown => {
            // A heading pulldown-cmark does not see as one: its text after the `#`s.
            let lead = text.len() - text.trim_start().len();
            let rest = &text[lead..];
            let hashes = rest.len() - rest.trim_start_matches('#').len();
            let after = &rest[hashes..];
            let spaces = after.len() - after.trim_start().len();
            let start = line.start + lead + hashes + spaces;
            start..line.end.max(start)
        }
    }
}

/// The bytes of each Markdown heading's title as 0.4.3's tokenizer takes them, by the start
/// of the heading's first line: from the first text pulldown-cmark reads in it to the end of
/// its last text or markup; a heading without text is its first line.
fn markdown_titles(text: &str) -> HashMap<usize, Range<usize>> {
    use pulldown_cmark::{CowStr, Event, Options, Parser, Tag, TagEnd};

    let line_start = |offset: usize| {
        text.get(..offset)
            .and_then(|before| before.rfind('\n'))
            .map_or(0, |at| at + 1)
    };
    // The end of the line at `offset`, as `str::lines` ends it (without "\n" or "\r\n").
    let line_end = |offset: usize| {
        let rest = text.get(offset..).unwrap_or("");
        match rest.find('\n') {
            Some(at) => offset + rest[..at].strip_suffix('\r').unwrap_or(&rest[..at]).len(),
            None => text.len(),
        }
    };
    let base = text.as_ptr() as usize;
    let mut titles = HashMap::new();
    let mut heading: Option<usize> = None;
    let mut buffer: Option<Range<usize>> = None;
    let parser = Parser::new_ext(text, Options::ENABLE_HEADING_ATTRIBUTES).into_offset_iter();
    for (event, range) in parser {
        match event {
            Event::Start(Tag::Heading { .. }) => {
                heading = Some(line_start(range.start));
                buffer = None;
            }
            Event::End(TagEnd::Heading(_)) => {
                if let Some(first) = heading.take() {
                    let title = buffer.take().unwrap_or(first..line_end(first));
                    titles.insert(first, title);
                }
            }
            Event::Text(t) if heading.is_some() => {
                // Only text that is a slice of the file (not an unescaped copy) counts.
                if let CowStr::Borrowed(s) = t {
                    let at = (s.as_ptr() as usize).wrapping_sub(base);
                    if at <= text.len() {
                        let r = at..at + s.len();
                        buffer = Some(match buffer {
                            Some(b) => b.start.min(r.start)..b.end.max(r.end),
                            None => r,
                        });
                    }
                }
            }
            _ => {
                if let Some(b) = &mut buffer {
                    b.end = range.end;
                }
            }
        }
    }
    titles
}

// ---- reading and writing --------------------------------------------------------------------

/// The report as 0.4.3 writes it.
pub fn to_bytes(report: &ReportV2) -> Vec<u8> {
    // Serializing these types cannot fail (string keys, no non-finite floats but as read).
    serde_json::to_vec_pretty(report).unwrap_or_default()
}

/// Write the report to `path`, making its directory; errors as 0.4.3 words them.
pub fn write(report: &ReportV2, path: &Path) -> Result<(), String> {
    crate::output::write(path, &to_bytes(report))
        .map_err(|e| format!("failed to create file '{}': {e}", path.display()))
}

/// The most of a message taken from the input that an error repeats.
const ECHO: usize = 200;

/// `text`, cut to [`ECHO`] bytes (at a character boundary) with `…` where it was cut.
pub fn clip(text: &str) -> String {
    if text.len() <= ECHO {
        return text.to_string();
    }
    let mut end = ECHO;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

/// A report read from `bytes`: valid JSON of the v2 schema, version "2.0". The error says
/// what is wrong (0.4.3's words) without repeating more than a little of the input.
pub fn parse(bytes: &[u8]) -> Result<ReportV2, String> {
    let report: ReportV2 = serde_json::from_slice(bytes).map_err(|e| {
        let message = e.to_string();
        // serde_json names a value of the wrong type in full: keep where it is.
        let message = if message.len() > ECHO {
            let place = format!(" at line {} column {}", e.line(), e.column());
            let head = message.strip_suffix(&place).unwrap_or(&message);
            format!("{}{place}", clip(head))
        } else {
            message
        };
        format!("failed to parse JSON: {message}")
    })?;
    if report.version != VERSION {
        return Err(format!(
            "unsupported report version '{}', expected '{VERSION}'",
            clip(&report.version)
        ));
    }
    Ok(report)
}

/// The report in file `path`; the error names the file.
pub fn read(path: &Path) -> Result<ReportV2, String> {
    let bytes = crate::output::read(path)
        .map_err(|e| format!("failed to open file '{}': {e}", path.display()))?;
    parse(&bytes).map_err(|e| format!("failed to read report from '{}': {e}", path.display()))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn ids_are_0_4_3_s() {
        // The vectors of duvet 0.4.3's ids.rs.
        assert_eq!(ids::fnv1a_64(b""), 0xcbf29ce484222325);
        assert_eq!(ids::fnv1a_64(b"a"), 0xaf63dc4c8601ec8c);
        assert_eq!(ids::fnv1a_64(b"foobar"), 0x85944171f73967e8);
        assert_eq!(
            ids::repo("https://github.com/org/repo/blob/main"),
            "repo-2a688096043d13a6"
        );
        assert_eq!(ids::src(b"hello world"), "src-779a65e7023cd2e7");
        assert_eq!(
            ids::lnk("src/lib.rs", "repo-abc123"),
            "lnk-944cdb82e9f1060d"
        );
        assert_eq!(ids::lnk("src/lib.rs", ""), "lnk-45b7397fa826f08e");
        assert_eq!(ids::spc("src-aaa", 0, 98765), "spc-dfc8916cc1aac4ca");
        assert_eq!(ids::sec("src-aaa", 0, 98765), "sec-dfc8916cc1aac4ca");
        assert_eq!(ids::cite("lnk-bbb", 42, "src-aaa"), "cite-1a2fb6b5abf8ae91");
        assert_eq!(
            ids::req("src-aaa", &[(10, 35), (40, 50)], "lnk-bbb", 7),
            ids::req("src-aaa", &[(40, 50), (10, 35)], "lnk-bbb", 7)
        );
        assert_ne!(
            ids::req("src-aaa", &[(10, 35)], "lnk-bbb", 7),
            ids::req("src-aaa", &[(10, 35)], "lnk-bbb", 8)
        );
    }

    #[test]
    fn canonical_urls() {
        for url in [
            "https://www.rfc-editor.org/rfc/rfc9000",
            "https://www.rfc-editor.org/rfc/rfc9000.html",
            "https://datatracker.ietf.org/doc/html/rfc9000",
            "http://tools.ietf.org/rfc/rfc9000.txt",
            "https://www.rfc-editor.org/rfc/rfc9000/",
        ] {
            assert_eq!(
                canonical_url(url),
                "https://www.rfc-editor.org/rfc/rfc9000.txt"
            );
        }
        assert_eq!(
            canonical_url("https://example.com/spec.md"),
            "https://example.com/spec.md"
        );
    }

    #[test]
    fn markdown_title_bytes() {
        let text = "# Proto\n\n## *Bold* and `code`\n\nSetext\ntitle\n======\n\n## `only`\n";
        let titles = markdown_titles(text);
        assert_eq!(titles[&0], 2..7);
        let at = text.find("## *").unwrap();
        let bold = text.find("Bold").unwrap();
        assert_eq!(titles[&at], bold..text.find("`\n").unwrap() + 1);
        let setext = text.find("Setext").unwrap();
        assert_eq!(titles[&setext], setext..text.find("title").unwrap() + 5);
        let only = text.find("## `only`").unwrap();
        assert_eq!(titles[&only], only..only + "## `only`".len());
    }

    #[test]
    fn hostile_input_fails_with_a_short_message() {
        let long = "x".repeat(100_000);
        let json = format!(
            r#"{{"version":"2.0","issue_links":[1],"sources":{{}},"annotations":"{long}"}}"#
        );
        let err = parse(json.as_bytes()).unwrap_err();
        assert!(err.len() < 400, "{err}");
        let json = format!(r#"{{"version":"{long}","sources":{{}},"annotations":{{}}}}"#);
        let err = parse(json.as_bytes()).unwrap_err();
        assert!(err.starts_with("unsupported report version 'xxx"), "{err}");
        assert!(err.len() < 400, "{err}");
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        let json =
            format!(r#"{{"version":"2.0","sources":{{"https://x#y":{deep}}},"annotations":{{}}}}"#);
        assert!(parse(json.as_bytes()).is_err());
        assert!(parse(b"\xff\xfe").is_err());
        assert!(parse(b"").is_err());
    }
}
