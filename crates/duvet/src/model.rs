//! The analysed project: specifications with their sections and requirements, citations
//! matched to the requirements they quote, the invalid citations, and each requirement's
//! status. Built from parsed inputs by [`Model::build`]; pure, so it is tested without files.
//!
//! Status vocabulary (used by every tool and resource that speaks of status), as duvet 0.4.3
//! computes it for `duvet report` (see [`crate::status`]):
//! - `fully_implemented`: implementation, implication, exception or test annotations cover
//!   every byte of the requirement's text;
//! - `partially_implemented`: they cover some of its bytes;
//! - `not_started`: they cover none (TODOs cover nothing).
//!
//! **Cited** — the one meaning of the word in every tool, resource and the system prompt — is
//! what `duvet report --ci --require-citations` (0.4.3, `report/ci.rs`) demands of a
//! requirement. It counts *lines* of the specification file, not bytes or requirements: each
//! line any part of a quote lies on is touched by that annotation; a line is cited when an
//! implementation, an implication **or an exception** touches it (a test or a TODO does not);
//! a requirement is cited when every line its text lies on is cited. So a quote of part of a
//! line cites the whole line (and another requirement sharing it), and a requirement over two
//! lines whose first line alone is quoted is not cited. A requirement whose text is not found
//! in its section (a listed one of an unavailable specification) is cited when such an
//! annotation quotes it. Exception-only requirements are therefore cited: their `exception`
//! says why, and `list_uncited_requirements` with `excepted: true` lists them
//! ([`Requirement::excepted`]). `--require-tests` (on by default in 0.4.3) fails lines an
//! implementation touches that no test, implication or exception touches: a separate check
//! (`list_untested_citations`), not part of cited. The rest of the detail: `tested` (a test
//! quotes it), `exception` (the reason, when an exception quotes it or, for an excepted
//! requirement no exception quotes, touches a line of it), `todo_count`, and
//! `citation_count` (annotations of any kind other than `spec` quoting it).

use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::path::PathBuf;
use std::sync::Arc;

use serde::Serialize;

pub use crate::spec::parsed::ParsedSpec;
pub use crate::status::kinds::{Status, StatusKind};
use crate::{
    annotation::{Annotation, AnnotationType, Level, Malformed},
    coverage::View,
    matching::find_quote,
    spec::requirements,
};

/// A specification as loaded: where it came from and what it contains.
#[derive(Debug, Clone)]
pub struct SpecInput {
    /// The specification as the project names it: a URL or a path relative to the root.
    pub source: String,
    /// The file its text was (or would be) read from.
    pub file: PathBuf,
    /// The parsed text, or why it could not be read.
    pub parsed: Result<Arc<ParsedSpec>, String>,
    /// Whether the project declares it (`[[specification]]`): only declared specifications
    /// have their requirement sentences extracted, as in Duvet; cited ones contribute the
    /// requirements listed in requirement files.
    pub declared: bool,
}

/// What a model is built for: all `duvet mcp` answers from, or what `duvet report` reads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Scope {
    /// Specifications, requirements, citations, statuses and the tools' indexes.
    #[default]
    Full,
    /// The specifications with their sections and the annotations that cannot be read (quote
    /// lines without a target among them): what a report reads of the model, which places
    /// every annotation itself, as duvet 0.4.3 does ([`crate::report::Report::build`]). No
    /// requirement, citation or status is made, and sections keep no `content` or view; the
    /// sections themselves, which serve only to tell whether quote lines without a target line
    /// quote a specification, are made only when there are such lines
    /// ([`crate::orphan_rule::worth_looking`]).
    Specifications,
}

/// Everything the model is built from.
#[derive(Debug, Default)]
pub struct Inputs {
    pub specs: Vec<SpecInput>,
    pub annotations: Vec<Annotation>,
    pub malformed: Vec<Malformed>,
    /// Whether sentences with RFC 2119 keywords of declared specifications are requirements
    /// (config-file projects), or only the requirements listed in requirement files
    /// (flag-defined projects, as Duvet).
    pub extract_requirements: bool,
}

#[derive(Debug, Clone)]
pub struct SectionEntry {
    pub id: String,
    /// `/specifications/{spec_id}/sections/{section_id}`, each segment percent-encoded where
    /// a path needs it (a Markdown id may hold `/`, `?`, `#` or `%`), so that the path read
    /// back as a resource names the same section.
    pub path: String,
    pub title: String,
    /// The section's text as in the specification.
    pub content: String,
    /// The text normalized for matching quotes.
    normalized: Arc<str>,
    /// The text as duvet 0.4.3 reads it, for coverage ([`crate::coverage`]); shared with
    /// the parsed file.
    pub view: Arc<View>,
    /// Indexes into [`Model::requirements`], in document order.
    pub requirements: Vec<usize>,
}

impl SectionEntry {
    /// The section's text, whitespace collapsed, as quotes are matched against it.
    pub fn normalized(&self) -> &str {
        &self.normalized
    }
}

#[derive(Debug, Clone)]
pub struct Spec {
    pub id: String,
    /// The key the specification is known under ([`source_key`]): part of its requirements'
    /// identifiers.
    pub key: String,
    pub name: String,
    /// The URL or path the project uses for it.
    pub url: String,
    pub description: String,
    pub file: PathBuf,
    /// Why the text could not be loaded (then there are no sections).
    pub error: Option<String>,
    pub sections: Vec<SectionEntry>,
}

#[derive(Debug, Clone)]
pub struct Requirement {
    /// Hex BLAKE3 of the requirement's place and normalized text (see [`requirement_identifier`]).
    pub identifier: String,
    /// The normalized text.
    pub text: String,
    /// The text in lower case, for searching.
    pub lower: String,
    pub level: Option<Level>,
    pub spec: usize,
    pub section: usize,
    /// Byte range in the section's normalized text, when the text occurs there.
    range: Option<(usize, usize)>,
    /// Where duvet finds the text in the section's view, when it does.
    pub span: Option<Range<usize>>,
    /// Indexes into [`Model::citations`].
    pub citations: Vec<usize>,
    pub status: Status,
    /// Cited only because exceptions touch lines no implementation or implication does; its
    /// `status.exception` then always says why (the reason of one of those exceptions).
    pub excepted: bool,
}

#[derive(Debug, Clone)]
pub struct Citation {
    /// `file:line`, e.g. `src/main.rs:42`.
    pub id: String,
    pub file: PathBuf,
    pub line: usize,
    pub kind: AnnotationType,
    pub comment_text: String,
    pub reason: Option<String>,
    /// The quoted text as written (lines joined by single spaces; empty for a reference to
    /// the whole section).
    pub quote: String,
    /// The part of the section's view the quote covers, found as duvet finds it.
    pub span: Option<Range<usize>>,
    /// Every occurrence of the normalized quote in the section's normalized view, found
    /// once, when a check first needs it ([`crate::checks`]).
    pub placed: std::sync::OnceLock<Vec<Range<usize>>>,
    pub spec: usize,
    pub section: usize,
    /// Indexes into [`Model::requirements`] of the requirements its quote overlaps.
    pub requirements: Vec<usize>,
}

/// A citation that does not hold, with the reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct InvalidCitation {
    pub file_path: String,
    pub line_number: usize,
    pub comment_text: String,
    pub error: String,
}

/// Why a citation target does not resolve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unresolved {
    UnknownSpec(String),
    SpecUnavailable(String),
    NoSection,
    MissingSection(String),
    QuoteNotFound(String),
}

impl std::fmt::Display for Unresolved {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::UnknownSpec(m)
            | Self::SpecUnavailable(m)
            | Self::MissingSection(m)
            | Self::QuoteNotFound(m) => f.write_str(m),
            Self::NoSection => f.write_str(
                "Citation names no section: add `#section-…` (or the Markdown heading id) to the target",
            ),
        }
    }
}

/// The most characters of an invalid annotation's text that a list shows.
pub const COMMENT_SHOWN: usize = 2000;

/// What a path segment of a resource must encode.
pub const SEGMENT: &percent_encoding::AsciiSet = &percent_encoding::CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'/')
    .add(b'?');
/// The path of section `section_id` of specification `spec_id` ([`SectionEntry::path`]).
fn section_path(spec_id: &str, section_id: &str) -> String {
    format!(
        "/specifications/{}/sections/{}",
        encode_segment(spec_id),
        encode_segment(section_id)
    )
}

/// `segment` percent-encoded as [`SEGMENT`] says, borrowed when nothing needs it.
pub fn encode_segment(segment: &str) -> std::borrow::Cow<'_, str> {
    percent_encoding::utf8_percent_encode(segment, SEGMENT).into()
}

/// What a citation id (`path/to/file.rs:42`, whose `/` separate segments) must encode.
pub const CITATION_ID: &percent_encoding::AsciiSet = &percent_encoding::CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'?');

/// A requirement (index) and the byte range of it that a quote covers.
pub type Overlap = (usize, (usize, usize));

/// Where a resolved citation points.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    pub spec: usize,
    pub section: usize,
    /// The requirements the quote overlaps, with the overlapping byte ranges.
    pub matches: Vec<Overlap>,
    pub quoted: bool,
}

#[derive(Debug, Default)]
pub struct Model {
    pub specs: Vec<Spec>,
    pub requirements: Vec<Requirement>,
    pub citations: Vec<Citation>,
    pub invalid: Vec<InvalidCitation>,
    spec_by_source: HashMap<String, usize>,
    /// The spelling each specification was added under (most targets repeat it), so that a
    /// lookup need not compute the canonical key.
    spec_by_spelling: HashMap<String, usize>,
    by_identifier: HashMap<String, usize>,
    /// The BLAKE3 of the text alone (the identifier of earlier versions) → the requirements
    /// with that text, in document order.
    by_text: HashMap<blake3::Hash, Vec<usize>>,
    by_citation_id: HashMap<String, usize>,
    /// `file:line` of invalid citations → index into `invalid`.
    invalid_by_id: HashMap<String, usize>,
    /// Requirement indexes in work-first order (see [`Model::prioritized`]).
    priority: Vec<usize>,
    /// Citations' quoted ranges, per citation, until statuses are computed.
    pub(crate) pending_ranges: Vec<(usize, Vec<Overlap>)>,
}

/// The key under which a specification is known: URLs by the file Duvet caches them as (so
/// `https://tools.ietf.org/html/rfc9000`, `https://www.rfc-editor.org/rfc/rfc9000.txt` and
/// `http://www.rfc-editor.org/rfc/rfc9000/` are one specification), paths as written.
pub fn source_key(source: &str) -> String {
    let trimmed = source.trim().trim_end_matches('/');
    if let Some(path) = crate::config::cache_path(std::path::Path::new(""), trimmed) {
        return path_text(&path);
    }
    let without_scheme = trimmed
        .strip_prefix("https://")
        .or_else(|| trimmed.strip_prefix("http://"))
        .unwrap_or(trimmed);
    without_scheme.trim_start_matches("./").to_string()
}

/// The fewest characters of an identifier that [`Model::find_requirements`] takes as a prefix.
pub const MIN_PREFIX: usize = 6;

/// A requirement's identifier: the lowercase hex BLAKE3 of its place — `<spec key>#<section
/// id>`, the spec key being [`source_key`] (for a URL, the path of Duvet's cache file, e.g.
/// `www.rfc-editor.org/rfc/rfc9000.txt`; for a file, its path as configured) — a line feed,
/// and its normalized text. Unique in the project (a section lists a text once), the same in
/// every run while the text and its place are unchanged, whatever else the project holds.
pub fn requirement_identifier(place: &str, text: &str) -> String {
    let mut hasher = blake3::Hasher::new();
    hasher.update(place.as_bytes());
    hasher.update(b"\n");
    hasher.update(text.as_bytes());
    hasher.finalize().to_hex().to_string()
}

/// Split `target` into its specification part and its section fragment.
pub fn split_target(target: &str) -> (&str, Option<&str>) {
    match target.trim().split_once('#') {
        Some((spec, section)) if !section.trim().is_empty() => (spec, Some(section.trim())),
        Some((spec, _)) => (spec, None),
        None => (target.trim(), None),
    }
}

impl Model {
    pub fn build(inputs: Inputs) -> Self {
        Self::build_for(inputs, Scope::Full)
    }

    /// The model of `inputs` for `scope` (see [`Scope`]; read the inputs for the same scope,
    /// [`crate::project::inputs_for`]).
    pub fn build_for(inputs: Inputs, scope: Scope) -> Self {
        let mut model = Model::default();
        let mut used_ids = HashSet::new();
        let mut extract = Vec::new();
        let with_sections = crate::orphan_rule::worth_looking(&inputs.malformed);
        for input in inputs.specs {
            let parsed = input.parsed.as_ref().ok().cloned();
            let declared = input.declared;
            if let Some(s) = model.add_spec(input, &mut used_ids, scope, with_sections)
                && let Some(parsed) = parsed
                && declared
                && inputs.extract_requirements
            {
                extract.push((s, parsed));
            }
        }

        // What only `duvet mcp` reads: the requirements, the citations attached to them.
        if scope == Scope::Full {
            // Requirements listed by annotations (requirement files and `type=spec`). Listed
            // requirements are kept even when the specification's text is not available.
            let (listed, citations_in): (Vec<Annotation>, Vec<Annotation>) = inputs
                .annotations
                .into_iter()
                .partition(|a| a.kind == AnnotationType::Spec);
            // Each text normalized and its level found on every core; added in order.
            let listed = crate::par::par_map(listed, |annotation| {
                let text = requirements::normalize(&annotation.quote);
                let level = annotation
                    .level
                    .or_else(|| requirements::strongest_level(&text));
                (annotation, text, level)
            });
            for (annotation, text, level) in listed {
                if annotation.quote.trim().is_empty() {
                    model.invalid.push(invalid(
                        &annotation,
                        "Requirement has no quote: add the requirement's text".to_string(),
                    ));
                    continue;
                }
                let target = match model.resolve_target(&annotation.target) {
                    Ok(target) => Ok(target),
                    Err(Unresolved::SpecUnavailable(_)) => model
                        .placeholder_section(&annotation.target)
                        .ok_or(Unresolved::NoSection),
                    Err(err) => Err(err),
                };
                match target {
                    Ok((s, c)) => model.add_requirement(s, c, text, level, None),
                    Err(err) => model.invalid.push(invalid(&annotation, err.to_string())),
                }
            }

            // Requirements from the text: a section whose requirements are listed in requirement
            // files keeps those (Duvet writes its own extraction there), else its sentences,
            // extracted on every core, added in order.
            let mut wanted = Vec::new();
            for (s, parsed) in extract {
                for c in 0..parsed.sections().len().min(model.specs[s].sections.len()) {
                    if model.specs[s].sections[c].requirements.is_empty() {
                        wanted.push((s, c, parsed.clone()));
                    }
                }
            }
            let wanted = crate::par::par_map(wanted, |(s, c, parsed)| {
                parsed.sentences(c);
                (s, c, parsed)
            });
            for (s, c, parsed) in wanted {
                let Some(found) = parsed.sentences(c) else {
                    continue;
                };
                for (sentence, span) in found.sentences.iter().zip(&found.spans) {
                    model.add_requirement(
                        s,
                        c,
                        sentence.text.clone(),
                        Some(sentence.level),
                        Some(span.clone()),
                    );
                }
            }

            // Resolved on every core (each normalizes and looks for its quote), added in order.
            let resolved = {
                let model = &model;
                crate::par::par_map(citations_in, |annotation| {
                    let resolved = model.resolve(&annotation.target, &annotation.quote);
                    (annotation, resolved)
                })
            };
            for (annotation, resolved) in resolved {
                match resolved {
                    Ok(resolved) => model.add_citation(annotation, resolved),
                    Err(err) => model.invalid.push(invalid(&annotation, err.to_string())),
                }
            }
            model.place_citations();
        }
        // Quote lines without a target: a slip only when they quote a specification.
        let orphans: Vec<&str> = inputs
            .malformed
            .iter()
            .filter_map(|m| m.orphan_quote.as_deref())
            .collect();
        let mut targets = model.orphan_targets(&orphans).into_iter();
        for malformed in inputs.malformed {
            let error = match &malformed.orphan_quote {
                None => format!("Malformed annotation: {}", malformed.reason),
                Some(_) => match targets.next().flatten() {
                    Some(target) => format!(
                        "Malformed annotation: {}; the text is in {target}: add the target line above them",
                        malformed.reason
                    ),
                    None => continue,
                },
            };
            model.invalid.push(InvalidCitation {
                file_path: path_text(&malformed.file),
                line_number: malformed.line,
                comment_text: mcp_common::clip(&malformed.text, COMMENT_SHOWN),
                error,
            });
        }
        model
            .invalid
            .sort_by(|a, b| (&a.file_path, a.line_number).cmp(&(&b.file_path, b.line_number)));
        for (i, bad) in model.invalid.iter().enumerate() {
            model
                .invalid_by_id
                .entry(format!("{}:{}", bad.file_path, bad.line_number))
                .or_insert(i);
        }
        if scope == Scope::Full {
            model.compute_statuses();
            model.priority = model.compute_priority();
        }
        model
    }

    /// Add a specification; `None` when the project already has it.
    fn add_spec(
        &mut self,
        input: SpecInput,
        used_ids: &mut HashSet<String>,
        scope: Scope,
        with_sections: bool,
    ) -> Option<usize> {
        let key = source_key(&input.source);
        if self.spec_by_source.contains_key(&key) {
            return None;
        }
        let (base_id, name) = spec_identity(&input.source);
        let mut id = base_id.clone();
        let mut n = 2;
        while !used_ids.insert(id.clone()) {
            id = format!("{base_id}-{n}");
            n += 1;
        }
        let (sections, error, description) = match &input.parsed {
            Ok(parsed) => {
                let sections = match scope {
                    Scope::Full => parsed
                        .sections()
                        .iter()
                        .enumerate()
                        .map(|(i, section)| SectionEntry {
                            normalized: parsed.normalized().get(i).cloned().unwrap_or_default(),
                            view: parsed.views().get(i).cloned().unwrap_or_default(),
                            path: section_path(&id, &section.id),
                            id: section.id.clone(),
                            title: section.title.clone(),
                            content: section.content(),
                            requirements: Vec::new(),
                        })
                        .collect(),
                    // A report reads no section's text or view from the model, and its
                    // sections only for quote lines without a target line.
                    Scope::Specifications if with_sections => parsed
                        .kept()
                        .iter()
                        .enumerate()
                        .map(|(i, section)| SectionEntry {
                            normalized: parsed.normalized().get(i).cloned().unwrap_or_default(),
                            view: Arc::default(),
                            path: section_path(&id, &section.id),
                            id: section.id.clone(),
                            title: section.title.clone(),
                            content: String::new(),
                            requirements: Vec::new(),
                        })
                        .collect(),
                    Scope::Specifications => Vec::new(),
                };
                (sections, None, parsed.title.clone())
            }
            Err(err) => (Vec::new(), Some(err.clone()), String::new()),
        };
        let index = self.specs.len();
        self.spec_by_source.insert(key.clone(), index);
        self.spec_by_spelling
            .insert(input.source.trim().to_string(), index);
        self.specs.push(Spec {
            id,
            key,
            name,
            url: input.source,
            description,
            file: input.file,
            error,
            sections,
        });
        Some(index)
    }

    /// Add a requirement; `span` is where it lies in the section's view when already known
    /// (extracted sentences: [`ParsedSpec::spans`]), else it is looked for here.
    fn add_requirement(
        &mut self,
        spec: usize,
        section: usize,
        text: String,
        level: Option<Level>,
        span: Option<Option<Range<usize>>>,
    ) {
        if text.is_empty() {
            return;
        }
        let place = format!(
            "{}#{}",
            self.specs[spec].key, self.specs[spec].sections[section].id
        );
        let mut identifier = requirement_identifier(&place, &text);
        let mut n = 2;
        while let Some(&other) = self.by_identifier.get(&identifier) {
            if self.requirements[other].spec == spec && self.requirements[other].section == section
            {
                // The same text listed twice in one section is one requirement.
                return;
            }
            // Two sections of one specification with the same id (a malformed document):
            // the later ones are told apart by their rank, deterministically.
            identifier = requirement_identifier(&format!("{place}~{n}"), &text);
            n += 1;
        }
        let entry = &self.specs[spec].sections[section];
        // Sentences extracted from the text occur in it; listed ones usually do.
        let after = entry
            .requirements
            .last()
            .and_then(|&r| self.requirements[r].range)
            .map_or(0, |(_, end)| end);
        let range = entry
            .normalized
            .get(after..)
            .and_then(|rest| rest.find(&text))
            .map(|start| (after + start, after + start + text.len()))
            .or_else(|| find_quote(&entry.normalized, &text));
        let span = span.unwrap_or_else(|| {
            let after = entry
                .requirements
                .last()
                .and_then(|&r| self.requirements[r].span.as_ref())
                .map_or(0, |span| span.end);
            entry.view.find_from(&text, after)
        });
        let index = self.requirements.len();
        self.requirements.push(Requirement {
            identifier: identifier.clone(),
            lower: text.to_lowercase(),
            text,
            level,
            spec,
            section,
            range,
            span,
            citations: Vec::new(),
            status: Status {
                status: StatusKind::NotStarted,
                cited: false,
                tested: false,
                exception: None,
                todo_count: 0,
                citation_count: 0,
            },
            excepted: false,
        });
        self.specs[spec].sections[section].requirements.push(index);
        self.by_text
            .entry(blake3::hash(self.requirements[index].text.as_bytes()))
            .or_default()
            .push(index);
        self.by_identifier.insert(identifier, index);
    }

    /// The specification and section a target names.
    pub fn resolve_target(&self, target: &str) -> Result<(usize, usize), Unresolved> {
        let (spec_part, section) = split_target(target);
        let spec = self.spec_index(spec_part).ok_or_else(|| {
            Unresolved::UnknownSpec(format!(
                "Specification not found: '{spec_part}' is not a specification of this project"
            ))
        })?;
        let entry = &self.specs[spec];
        if let Some(error) = &entry.error {
            return Err(Unresolved::SpecUnavailable(format!(
                "Specification not available: {error}"
            )));
        }
        let section = section.ok_or(Unresolved::NoSection)?;
        let index = self.section_index(spec, section).ok_or_else(|| {
            Unresolved::MissingSection(format!(
                "Section not found: '{section}' is not a section of {}{}",
                entry.name,
                did_you_mean(&self.section_suggestions(spec, section))
            ))
        })?;
        Ok((spec, index))
    }

    /// Resolve a target and find its quote, with the requirements the quote overlaps.
    pub fn resolve(&self, target: &str, quote: &str) -> Result<Resolved, Unresolved> {
        let (spec, section) = self.resolve_target(target)?;
        let quote = requirements::normalize(quote);
        if quote.is_empty() {
            return Ok(Resolved {
                spec,
                section,
                matches: Vec::new(),
                quoted: false,
            });
        }
        let entry = &self.specs[spec].sections[section];
        let (start, end) = find_quote(&entry.normalized, &quote).ok_or_else(|| {
            Unresolved::QuoteNotFound(format!(
                "Quote not found: the text is not in {} of {}",
                entry.id, self.specs[spec].name
            ))
        })?;
        let matches = entry
            .requirements
            .iter()
            .filter_map(|&r| {
                let (rs, re) = self.requirements[r].range?;
                let (os, oe) = (start.max(rs), end.min(re));
                (os < oe).then_some((r, (os, oe)))
            })
            .collect();
        Ok(Resolved {
            spec,
            section,
            matches,
            quoted: true,
        })
    }

    fn add_citation(&mut self, annotation: Annotation, resolved: Resolved) {
        let index = self.citations.len();
        let id = format!("{}:{}", path_text(&annotation.file), annotation.line);
        for &(r, _) in &resolved.matches {
            self.requirements[r].citations.push(index);
        }
        self.by_citation_id.entry(id.clone()).or_insert(index);
        self.citations.push(Citation {
            id,
            file: annotation.file,
            line: annotation.line,
            kind: annotation.kind,
            comment_text: annotation.comment_text,
            reason: annotation.reason,
            quote: annotation.quote,
            span: None,
            placed: std::sync::OnceLock::new(),
            spec: resolved.spec,
            section: resolved.section,
            requirements: resolved.matches.iter().map(|(r, _)| *r).collect(),
        });
        self.pending_ranges.push((index, resolved.matches));
    }

    /// Where duvet finds each citation's quote in its section's view ([`Citation::span`]):
    /// on every core, each distinct quote of a section once (a quote that is not found
    /// exactly takes a fuzzy pass over the section, the costliest search of the build).
    fn place_citations(&mut self) {
        let mut distinct: HashMap<(usize, usize, &str), usize> = HashMap::new();
        let mut searches: Vec<(usize, usize, &str)> = Vec::new();
        let of: Vec<usize> = self
            .citations
            .iter()
            .map(|c| {
                let key = (c.spec, c.section, c.quote.as_str());
                *distinct.entry(key).or_insert_with(|| {
                    searches.push(key);
                    searches.len() - 1
                })
            })
            .collect();
        let specs = &self.specs;
        let spans = crate::par::par_map(searches, |(s, c, quote)| {
            specs[s].sections[c].view.find(quote)
        });
        for (citation, search) in self.citations.iter_mut().zip(of) {
            citation.span = spans[search].clone();
        }
    }

    /// The specification the project knows under `source` (URL or path, with or without
    /// scheme or trailing slash), or by its id.
    pub fn spec_index(&self, source: &str) -> Option<usize> {
        if let Some(&index) = self.spec_by_spelling.get(source.trim()) {
            return Some(index);
        }
        self.spec_by_source
            .get(&source_key(source))
            .copied()
            .or_else(|| self.specs.iter().position(|s| s.id == source))
    }

    /// A section by id, with or without its `section-` prefix.
    pub fn section_index(&self, spec: usize, id: &str) -> Option<usize> {
        let sections = &self.specs.get(spec)?.sections;
        let id = id.trim();
        sections
            .iter()
            .position(|s| s.id == id)
            .or_else(|| {
                let prefixed = format!("section-{id}");
                sections.iter().position(|s| s.id == prefixed)
            })
            .or_else(|| {
                let bare = id.strip_prefix("section-")?;
                sections.iter().position(|s| s.id == bare)
            })
            .or_else(|| {
                // Older Duvet named unnumbered IETF sections `named-<Title>`.
                let title = id.strip_prefix("named-")?;
                sections
                    .iter()
                    .position(|s| s.id.starts_with("name-") && s.title.eq_ignore_ascii_case(title))
            })
    }

    /// The ids of sections that `id` (which names none) probably means: the same number or
    /// name under another prefix (`A.7` or `section-A.7` for `appendix-A.7`, `appendix-3`
    /// for `section-3`) or in another case. Upstream Duvet 0.4 drops such citations silently.
    pub fn section_suggestions(&self, spec: usize, id: &str) -> Vec<&str> {
        /// The id without its `section-`/`appendix-` prefix (any case) or trailing dot.
        fn bare(id: &str) -> &str {
            let id = id.trim().trim_end_matches('.');
            for prefix in ["section-", "appendix-"] {
                if id.len() > prefix.len()
                    && id.is_char_boundary(prefix.len())
                    && id[..prefix.len()].eq_ignore_ascii_case(prefix)
                {
                    return &id[prefix.len()..];
                }
            }
            id
        }
        let wanted = bare(id);
        if wanted.is_empty() {
            return Vec::new();
        }
        self.specs.get(spec).map_or_else(Vec::new, |spec| {
            spec.sections
                .iter()
                .filter(|s| s.id != id.trim() && bare(&s.id).eq_ignore_ascii_case(wanted))
                .map(|s| s.id.as_str())
                .take(3)
                .collect()
        })
    }

    /// For a requirement listed against a specification whose text is not available: the
    /// section it names, created empty.
    fn placeholder_section(&mut self, target: &str) -> Option<(usize, usize)> {
        let (spec_part, section) = split_target(target);
        let spec = self.spec_index(spec_part)?;
        let section = section?;
        if let Some(c) = self.section_index(spec, section) {
            return Some((spec, c));
        }
        let path = section_path(&self.specs[spec].id, section);
        let sections = &mut self.specs[spec].sections;
        sections.push(SectionEntry {
            path,
            id: section.to_string(),
            title: String::new(),
            content: String::new(),
            normalized: Arc::from(""),
            view: Arc::default(),
            requirements: Vec::new(),
        });
        Some((spec, sections.len() - 1))
    }

    /// An invalid citation by its `file:line`.
    pub fn invalid_citation(&self, id: &str) -> Option<&InvalidCitation> {
        self.invalid_by_id.get(id).map(|&i| &self.invalid[i])
    }

    /// The requirements an identifier names, among `within` (a section's requirements) or
    /// all of them, in document order: the requirement with this identifier; else, for the
    /// identifier of earlier versions (the BLAKE3 of the text alone), every requirement with
    /// that text; else those whose identifier starts with it (at least
    /// [`MIN_PREFIX`] characters). More than one means the identifier is ambiguous.
    pub fn find_requirements(&self, identifier: &str, within: Option<&[usize]>) -> Vec<usize> {
        let id = identifier.trim().to_ascii_lowercase();
        let in_scope = |r: &usize| within.is_none_or(|w| w.contains(r));
        if let Some(&r) = self.by_identifier.get(&id)
            && in_scope(&r)
        {
            return vec![r];
        }
        if let Ok(hash) = blake3::Hash::from_hex(&id) {
            let same_text: Vec<usize> = self
                .by_text
                .get(&hash)
                .into_iter()
                .flatten()
                .copied()
                .filter(in_scope)
                .collect();
            if !same_text.is_empty() {
                return same_text;
            }
        }
        if id.len() < MIN_PREFIX {
            return Vec::new();
        }
        match within {
            Some(within) => within
                .iter()
                .copied()
                .filter(|&r| self.requirements[r].identifier.starts_with(&id))
                .collect(),
            None => (0..self.requirements.len())
                .filter(|&r| self.requirements[r].identifier.starts_with(&id))
                .collect(),
        }
    }

    pub fn citation(&self, id: &str) -> Option<&Citation> {
        self.by_citation_id.get(id).map(|&c| &self.citations[c])
    }

    /// `/specifications/{spec}/sections/{section}/requirements/{identifier}`.
    pub fn requirement_path(&self, r: usize) -> String {
        let req = &self.requirements[r];
        format!(
            "{}/requirements/{}",
            self.specs[req.spec].sections[req.section].path, req.identifier
        )
    }

    /// `/specifications/{spec_id}/sections/{section_id}`, each segment percent-encoded where
    /// a path needs it (a Markdown id may hold `/`, `?`, `#` or `%`), so that the path read
    /// back as a resource names the same section.
    pub fn section_path(&self, spec: usize, section: usize) -> String {
        let spec = &self.specs[spec];
        format!(
            "/specifications/{}/sections/{}",
            encode_segment(&spec.id),
            encode_segment(&spec.sections[section].id)
        )
    }

    /// Requirement indexes in work-first order: level (MUST, SHOULD, MAY, unspecified), then
    /// status (partially implemented, not started, fully implemented), then TODOs (most
    /// first), then path. Computed once per build.
    pub fn prioritized(&self) -> &[usize] {
        &self.priority
    }

    fn compute_priority(&self) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.requirements.len()).collect();
        let level_rank = |l: Option<Level>| match l {
            Some(Level::Must) => 0,
            Some(Level::Should) => 1,
            Some(Level::May) => 2,
            None => 3,
        };
        order.sort_by_cached_key(|&r| {
            let req = &self.requirements[r];
            (
                level_rank(req.level),
                req.status.status.priority(),
                std::cmp::Reverse(req.status.todo_count),
                self.requirement_path(r),
            )
        });
        order
    }
}

/// `; did you mean X?` (or `X or Y`) for suggestions, nothing without.
pub fn did_you_mean(suggestions: &[&str]) -> String {
    if suggestions.is_empty() {
        String::new()
    } else {
        format!("; did you mean {}?", suggestions.join(" or "))
    }
}

fn invalid(annotation: &Annotation, error: String) -> InvalidCitation {
    InvalidCitation {
        file_path: path_text(&annotation.file),
        line_number: annotation.line,
        comment_text: mcp_common::clip(&annotation.comment_text, COMMENT_SHOWN),
        error,
    }
}

/// A relative path with `/` separators.
pub fn path_text(path: &std::path::Path) -> String {
    path.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// The id and name of a specification from its URL or path: `rfc9000` / `RFC 9000` for RFCs,
/// else the last path segment without extension.
fn spec_identity(source: &str) -> (String, String) {
    let key = source_key(source);
    let last = key
        .rsplit('/')
        .find(|s| !s.is_empty())
        .unwrap_or("specification");
    let stem = last
        .rsplit_once('.')
        .filter(|(stem, ext)| !stem.is_empty() && ext.len() <= 8)
        .map_or(last, |(stem, _)| stem);
    let lower = stem.to_ascii_lowercase();
    if let Some(number) = lower.strip_prefix("rfc")
        && !number.is_empty()
        && number.chars().all(|c| c.is_ascii_digit())
    {
        return (lower.clone(), format!("RFC {number}"));
    }
    let id: String = lower
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    let id = id.trim_matches('-').to_string();
    let id = if id.is_empty() {
        "specification".to_string()
    } else {
        id
    };
    (id, stem.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::Section;

    const SAME: &str = "The value MUST be set to 0.";

    /// A model of one declared Markdown specification `spec.md` with these sections.
    fn model(sections: &[(&str, &str)]) -> Model {
        let sections: Vec<Section> = sections
            .iter()
            .map(|(id, text)| Section {
                id: id.to_string(),
                title: id.to_string(),
                lines: vec![text.to_string()],
                at: vec![0],
                title_at: 0,
            })
            .collect();
        let parsed = ParsedSpec::of_sections("Spec".to_string(), sections);
        Model::build(Inputs {
            specs: vec![SpecInput {
                source: "spec.md".to_string(),
                file: PathBuf::from("spec.md"),
                parsed: Ok(Arc::new(parsed)),
                declared: true,
            }],
            extract_requirements: true,
            ..Inputs::default()
        })
    }

    fn identifiers(model: &Model) -> Vec<&str> {
        model
            .requirements
            .iter()
            .map(|r| r.identifier.as_str())
            .collect()
    }

    #[test]
    fn the_same_text_in_two_sections_has_two_identifiers() {
        let m = model(&[("one", SAME), ("two", &format!("Other text. {SAME}"))]);
        let one = requirement_identifier("spec.md#one", SAME);
        let two = requirement_identifier("spec.md#two", SAME);
        assert_eq!(identifiers(&m), [one.as_str(), two.as_str()]);
        assert_eq!(m.find_requirements(&one, None), [0]);
        assert_eq!(m.find_requirements(&two.to_uppercase(), None), [1]);
        // The hash of the text alone names both, or the one of a section.
        let text = requirements::identifier(SAME);
        assert_eq!(m.find_requirements(&text, None), [0, 1]);
        let second = &m.specs[0].sections[1].requirements;
        assert_eq!(m.find_requirements(&text, Some(second)), [1]);
        // Identifiers of another section are not found within this one.
        assert!(m.find_requirements(&one, Some(second)).is_empty());
        // Prefixes: at least MIN_PREFIX characters.
        assert_eq!(m.find_requirements(&one[..MIN_PREFIX], None), [0]);
        assert!(m.find_requirements(&one[..MIN_PREFIX - 1], None).is_empty());
    }

    #[test]
    fn sections_with_one_id_are_told_apart_by_rank() {
        let m = model(&[("one", SAME), ("one", SAME)]);
        assert_eq!(
            identifiers(&m),
            [
                requirement_identifier("spec.md#one", SAME),
                requirement_identifier("spec.md#one~2", SAME),
            ]
        );
    }

    #[test]
    fn a_section_id_under_another_prefix_is_suggested() {
        let m = model(&[
            ("section-1", "Text."),
            ("appendix-A.7", "Text."),
            ("Ordering", "Text."),
        ]);
        assert_eq!(m.section_suggestions(0, "A.7"), ["appendix-A.7"]);
        assert_eq!(m.section_suggestions(0, "section-a.7"), ["appendix-A.7"]);
        assert_eq!(m.section_suggestions(0, "appendix-1"), ["section-1"]);
        assert_eq!(m.section_suggestions(0, "ordering"), ["Ordering"]);
        assert!(m.section_suggestions(0, "B.1").is_empty());
        assert!(m.section_suggestions(0, "section-").is_empty());
        let err = m.resolve_target("spec.md#A.7").unwrap_err().to_string();
        assert_eq!(
            err,
            "Section not found: 'A.7' is not a section of spec; did you mean appendix-A.7?"
        );
    }
}
