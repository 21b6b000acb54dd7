//! The checks of duvet 0.4.3's `duvet query` as tools, and the citations that quote no
//! requirement:
//!
//! - `list_untested_citations` (`--check test`): implementation annotations whose quoted text
//!   test annotations of the same section do not cover entirely. Implications, exceptions and
//!   TODOs need no test; a test without an implementation is fine.
//! - `list_duplicate_citations` (`--check duplicates`): annotations whose quoted text other
//!   annotations of the same type and section already quote entirely.
//! - `list_unattached_citations`: valid citations whose quote overlaps no requirement, with why.
//!
//! Coverage here is duvet's: quotes compared in the section's view after whitespace
//! normalization ([`crate::coverage::normalize`]), exactly. Sections are matched by what a
//! target resolves to, so `…#section-4.2` and `…#4.2` are one section (duvet 0.4.3 compares
//! target strings), and an implementation whose quote matches only within one edit is listed
//! as untested (duvet 0.4.3 stops with an error there).

use std::collections::HashMap;
use std::ops::Range;

use mcp_common::CursorKey;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{
    annotation::AnnotationType,
    coverage,
    filter::ListParams,
    model::{Model, path_text},
    paging::{PageResult, page_of},
};

/// A citation in the checks' lists.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CitationItem {
    /// `file:line`, as in `get_citation_context`.
    pub id: String,
    pub file_path: String,
    pub line_number: usize,
    /// The annotation's type: implementation, test, implication, exception or todo.
    #[serde(rename = "type")]
    pub kind: String,
    /// `<specification URL or path>#<section id>`.
    pub target: String,
    /// What it quotes (at most 200 characters; `…` when cut).
    pub quote: String,
    /// Identifiers of the requirements its quote overlaps.
    pub requirements: Vec<String>,
}

/// An implementation that its tests do not cover.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct UntestedCitation {
    #[serde(flatten)]
    pub citation: CitationItem,
    /// `none`: no test quotes any of it; `partial`: tests quote some of it.
    pub tested: String,
    /// The test annotations that quote part of it (`file:line`; the first 20).
    pub tests: Vec<String>,
    /// How many test annotations quote part of it.
    pub tests_count: usize,
}

/// An annotation that others of its type already quote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DuplicateCitation {
    #[serde(flatten)]
    pub citation: CitationItem,
    /// The annotations of the same type and section that quote its text (`file:line`; the
    /// first 20).
    pub duplicates: Vec<String>,
    /// How many annotations of the same type and section quote its text.
    pub duplicates_count: usize,
}

/// A citation that quotes no requirement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct UnattachedCitation {
    #[serde(flatten)]
    pub citation: CitationItem,
    /// Why it matches no requirement.
    pub why: String,
}

const QUOTE_SHOWN: usize = 200;

pub fn citation_item(model: &Model, c: usize) -> CitationItem {
    let citation = &model.citations[c];
    let spec = &model.specs[citation.spec];
    let quote = mcp_common::clip(&citation.quote, QUOTE_SHOWN);
    CitationItem {
        id: citation.id.clone(),
        file_path: path_text(&citation.file),
        line_number: citation.line,
        kind: kind_name(citation.kind).to_string(),
        target: format!("{}#{}", spec.url, spec.sections[citation.section].id),
        quote,
        requirements: citation
            .requirements
            .iter()
            .map(|&r| model.requirements[r].identifier.clone())
            .collect(),
    }
}

pub fn kind_name(kind: AnnotationType) -> &'static str {
    match kind {
        AnnotationType::Implementation => "implementation",
        AnnotationType::Test => "test",
        AnnotationType::Todo => "todo",
        AnnotationType::Exception => "exception",
        AnnotationType::Implication => "implication",
        AnnotationType::Spec => "spec",
    }
}

/// Where each citation's quote lies in its section's normalized view: every occurrence, found
/// once per model (kept in the citation; the normalized view is kept in the view, shared by
/// the models of the same file).
fn occurrences(model: &Model, c: usize) -> &[Range<usize>] {
    let citation = &model.citations[c];
    citation.placed.get_or_init(|| {
        let quote = coverage::normalize(&citation.quote);
        if quote.is_empty() {
            return Vec::new();
        }
        let view = model.specs[citation.spec].sections[citation.section]
            .view
            .normalized();
        occurrences_in(view, &quote)
    })
}

/// Every occurrence of `quote` (normalized) in `view` (a section's normalized view), in
/// order and not overlapping, as duvet reads on after each occurrence; none for an empty
/// quote. Shared with `duvet query` ([`crate::query`]).
pub(crate) fn occurrences_in(view: &str, quote: &str) -> Vec<Range<usize>> {
    if quote.is_empty() {
        return Vec::new();
    }
    memchr::memmem::find_iter(view.as_bytes(), quote.as_bytes())
        .scan(0, |next, start| {
            let keep = start >= *next;
            if keep {
                *next = start + quote.len();
            }
            Some(keep.then(|| start..start + quote.len()))
        })
        .flatten()
        .collect()
}

/// The first occurrence of citation `c`'s normalized quote (duvet's target rule).
fn first(model: &Model, c: usize) -> Option<Range<usize>> {
    occurrences(model, c).first().cloned()
}

/// The occurrence of citation `c`'s quote that overlaps `target` most, then lies nearest
/// to it (duvet's rule for the covering annotations). The occurrences are in order and
/// of one length, so only those overlapping `target` (or, when none does, the two
/// nearest) can be best: found by binary search, not by reading them all.
fn nearest(model: &Model, c: usize, target: &Range<usize>) -> Option<Range<usize>> {
    best_of(occurrences(model, c), target)
}

/// Of `all` (occurrences of one quote, in order, as [`occurrences_in`] finds them), the one
/// that overlaps `target` most, then lies nearest to it: duvet's rule for a covering quote.
/// Shared with `duvet query` ([`crate::query`]).
pub(crate) fn best_of(all: &[Range<usize>], target: &Range<usize>) -> Option<Range<usize>> {
    let lo = all.partition_point(|o| o.end <= target.start);
    let hi = all.partition_point(|o| o.start < target.end);
    let candidates = if lo < hi {
        &all[lo..hi]
    } else {
        let at = all.partition_point(|o| o.start < target.start);
        &all[at.saturating_sub(1)..(at + 1).min(all.len())]
    };
    let mut best: Option<(usize, usize, &Range<usize>)> = None;
    for found in candidates {
        let overlap = found
            .end
            .min(target.end)
            .saturating_sub(found.start.max(target.start));
        let distance = found.start.abs_diff(target.start);
        if best.is_none_or(|(o, d, _)| overlap > o || (overlap == o && distance < d)) {
            best = Some((overlap, distance, found));
        }
    }
    best.map(|(_, _, found)| found.clone())
}

/// How much of `target` the `covering` citations quote: `None` when none overlaps it, else
/// whether all of it is, with the overlapping citations.
fn coverage_of(
    model: &Model,
    target: usize,
    covering: impl Iterator<Item = usize>,
) -> Option<(bool, Vec<usize>)> {
    let range = first(model, target)?;
    let mut covered = vec![false; range.len()];
    let mut by = Vec::new();
    for c in covering {
        let Some(found) = nearest(model, c, &range) else {
            continue;
        };
        let (start, end) = (found.start.max(range.start), found.end.min(range.end));
        if start < end {
            covered[start - range.start..end - range.start].fill(true);
            by.push(c);
        }
    }
    (!by.is_empty()).then(|| (covered.iter().all(|&b| b), by))
}

/// Citations grouped by section, in model order.
fn by_section(model: &Model, keep: impl Fn(usize) -> bool) -> HashMap<(usize, usize), Vec<usize>> {
    let mut groups: HashMap<(usize, usize), Vec<usize>> = HashMap::new();
    for c in (0..model.citations.len()).filter(|&c| keep(c)) {
        let citation = &model.citations[c];
        groups
            .entry((citation.spec, citation.section))
            .or_default()
            .push(c);
    }
    groups
}

/// The most citation ids an item lists (the count says how many there are).
const IDS_LISTED: usize = 20;

fn ids(model: &Model, citations: &[usize]) -> Vec<String> {
    citations
        .iter()
        .take(IDS_LISTED)
        .map(|&c| model.citations[c].id.clone())
        .collect()
}

pub fn list_untested_citations(
    model: &Model,
    key: &CursorKey,
    params: ListParams,
) -> PageResult<UntestedCitation> {
    let (scope, page) = params.split();
    let filter = scope.resolve(model)?;
    let tests = by_section(model, |c| model.citations[c].kind == AnnotationType::Test);
    let mut items = Vec::new();
    for c in 0..model.citations.len() {
        let citation = &model.citations[c];
        if citation.kind != AnnotationType::Implementation
            || citation.quote.trim().is_empty()
            || !filter.citation(model, c)
        {
            continue;
        }
        let pool = tests
            .get(&(citation.spec, citation.section))
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        let (tested, by) = match coverage_of(model, c, pool.iter().copied()) {
            Some((true, _)) => continue,
            Some((false, by)) => ("partial", by),
            None => ("none", Vec::new()),
        };
        items.push((c, tested, by));
    }
    page_of(
        key,
        "list_untested_citations",
        &scope,
        &items,
        page,
        |(c, tested, by)| UntestedCitation {
            citation: citation_item(model, c),
            tested: tested.to_string(),
            tests: ids(model, &by),
            tests_count: by.len(),
        },
    )
}

pub fn list_duplicate_citations(
    model: &Model,
    key: &CursorKey,
    params: ListParams,
) -> PageResult<DuplicateCitation> {
    let (scope, page) = params.split();
    let filter = scope.resolve(model)?;
    let groups = by_section(model, |c| {
        !model.citations[c].quote.trim().is_empty() && filter.citation(model, c)
    });
    let mut items = Vec::new();
    for group in groups.values() {
        for &c in group {
            let kind = model.citations[c].kind;
            let others = group
                .iter()
                .copied()
                .filter(|&o| o != c && model.citations[o].kind == kind);
            if let Some((true, by)) = coverage_of(model, c, others) {
                items.push((c, by));
            }
        }
    }
    items.sort_unstable_by_key(|&(c, _)| c);
    page_of(
        key,
        "list_duplicate_citations",
        &scope,
        &items,
        page,
        |(c, by)| DuplicateCitation {
            citation: citation_item(model, c),
            duplicates: ids(model, &by),
            duplicates_count: by.len(),
        },
    )
}

/// Why citation `c` quotes no requirement.
pub fn unattached_reason(model: &Model, c: usize) -> String {
    let citation = &model.citations[c];
    let section = &model.specs[citation.spec].sections[citation.section];
    if citation.quote.trim().is_empty() {
        "it quotes no text: a reference to the whole section covers no requirement".to_string()
    } else if section.requirements.is_empty() {
        format!(
            "{} has no requirements: no sentence of it has MUST, SHOULD, MAY or their kin, and \
             no requirements file lists one (a specification only cited, not declared in \
             .duvet/config.toml, has only the requirements its requirements files list)",
            section.id
        )
    } else {
        format!(
            "its quote is text of {} outside every requirement (text without MUST, SHOULD, \
             MAY or their kin)",
            section.id
        )
    }
}

/// The valid citations that quote no requirement, in model order.
pub fn unattached(model: &Model) -> impl Iterator<Item = usize> + '_ {
    (0..model.citations.len()).filter(|&c| model.citations[c].requirements.is_empty())
}

pub fn list_unattached_citations(
    model: &Model,
    key: &CursorKey,
    params: ListParams,
) -> PageResult<UnattachedCitation> {
    let (scope, page) = params.split();
    let filter = scope.resolve(model)?;
    let items: Vec<usize> = unattached(model)
        .filter(|&c| filter.citation(model, c))
        .collect();
    page_of(
        key,
        "list_unattached_citations",
        &scope,
        &items,
        page,
        |c| UnattachedCitation {
            citation: citation_item(model, c),
            why: unattached_reason(model, c),
        },
    )
}
