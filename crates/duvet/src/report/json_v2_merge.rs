//! `duvet merge`: v2 reports merged into one, as duvet 0.4.3 merges them.
//!
//! Ids are hashes of content, so merging is a union of each bucket by id; where two inputs
//! hold the same id, the fields outside the hash are reconciled:
//!
//! * fields the id is made from (a repository's blob link, an inline source's contents, a
//!   linked source, the `source` of a specification, section, requirement or citation, a
//!   requirement's `origin`) must agree, else the hash collided or a producer erred: an
//!   "internal invariant violation" error;
//! * fields that give an entity its meaning must agree, else the merge fails: an inline
//!   source's `file_name`, a specification's `title` and `format` (its `url` too when both
//!   have one; one beats none), a section's `short_name` and `long_name`, a requirement's
//!   `level`, a citation's `type`, `level` and `target`, and buckets of unknown schema URLs;
//! * a citation's `comment`, `feature` and `tracking_issue` may drift (the smaller string
//!   wins, one beats none) and its `tags` are united, with a warning on stderr;
//! * a requirement's `coverage` is united, each citation's ranges sorted and deduplicated.
//!
//! `issue_links` are united, sorted and deduplicated. A linked source without a repository
//! in two inputs is refused: the same path of two projects would become one file. The result
//! does not depend on the order of the inputs. Errors name the input by its index (from 0),
//! in 0.4.3's words.

use std::collections::BTreeMap;

use super::json_v2::{
    Annotations, CiteAnnotation, ReportV2, Repository, RequirementAnnotation, SectionAnnotation,
    Sources, SpecificationAnnotation, VERSION, clip,
};

/// A value from an input as an error quotes it: its `Debug` form, cut when long.
fn quoted(value: &Option<String>) -> String {
    match value {
        Some(text) => format!("Some({:?})", clip(text)),
        None => "None".to_string(),
    }
}

const INVARIANT: &str = "likely hash collision or producer bug -- this is rare; please file a \
                         bug with both input reports attached.";

/// `reports` merged; warnings (metadata drift) go to `warn`.
pub fn merge(reports: Vec<ReportV2>, warn: &mut dyn FnMut(String)) -> Result<ReportV2, String> {
    if reports.is_empty() {
        return Err("merge requires at least one input report".to_string());
    }
    // The same path without a repository in two inputs may be two projects' files.
    let mut unrepositoried: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, report) in reports.iter().enumerate() {
        for (id, source) in &report.sources.linked {
            if source.repository.is_some() {
                continue;
            }
            if let Some(first) = unrepositoried.insert(id, i) {
                return Err(format!(
                    "linked source '{}' (file '{}') without a repository appears in inputs \
                     #{first} and #{i}; merging would silently consolidate it across reports \
                     — add a blob-link to disambiguate (see [[source]] blob-link in your \
                     duvet config)",
                    clip(id),
                    clip(&source.file_name),
                ));
            }
        }
    }
    let mut inputs = reports.into_iter().enumerate();
    let Some((_, mut out)) = inputs.next() else {
        return Err("merge requires at least one input report".to_string());
    };
    supported(0, &out.version)?;
    for (i, next) in inputs {
        supported(i, &next.version)?;
        merge_one(&mut out, next, i, warn)?;
    }
    for requirement in out.annotations.requirement.values_mut() {
        for ranges in requirement.coverage.values_mut() {
            ranges.sort();
            ranges.dedup();
        }
    }
    Ok(out)
}

fn supported(i: usize, version: &str) -> Result<(), String> {
    if version == VERSION {
        return Ok(());
    }
    Err(format!(
        "input #{i}: unsupported report version '{}', expected '{VERSION}'",
        clip(version)
    ))
}

fn merge_one(
    out: &mut ReportV2,
    next: ReportV2,
    i: usize,
    warn: &mut dyn FnMut(String),
) -> Result<(), String> {
    out.issue_links.extend(next.issue_links);
    out.issue_links.sort();
    out.issue_links.dedup();
    repositories(&mut out.repositories, next.repositories, i)?;
    sources(&mut out.sources, next.sources, i)?;
    annotations(&mut out.annotations, next.annotations, i, warn)
}

fn repositories(
    out: &mut BTreeMap<String, Repository>,
    next: BTreeMap<String, Repository>,
    i: usize,
) -> Result<(), String> {
    for (id, repository) in next {
        match out.get(&id) {
            Some(seen) if seen.blob_link != repository.blob_link => {
                return Err(format!(
                    "internal invariant violation: input #{i} has repository '{}' with \
                     blob_link '{}' conflicting with previously seen '{}'; {INVARIANT}",
                    clip(&id),
                    clip(&repository.blob_link),
                    clip(&seen.blob_link),
                ));
            }
            Some(_) => {}
            None => {
                out.insert(id, repository);
            }
        }
    }
    Ok(())
}

fn sources(out: &mut Sources, next: Sources, i: usize) -> Result<(), String> {
    for (id, source) in next.inline {
        match out.inline.get(&id) {
            Some(seen) => {
                if seen.contents != source.contents {
                    return Err(format!(
                        "internal invariant violation: input #{i} has inline source '{}' with \
                         contents conflicting with previously seen contents; {INVARIANT}",
                        clip(&id)
                    ));
                }
                if seen.file_name != source.file_name {
                    return Err(format!(
                        "input #{i} has inline source '{}' with file_name '{}' conflicting \
                         with previously seen '{}'",
                        clip(&id),
                        clip(&source.file_name),
                        clip(&seen.file_name),
                    ));
                }
            }
            None => {
                out.inline.insert(id, source);
            }
        }
    }
    for (id, source) in next.linked {
        match out.linked.get(&id) {
            Some(seen) if *seen != source => {
                return Err(format!(
                    "internal invariant violation: input #{i} has linked source '{}' that \
                     differs from previously seen entry under the same id; {INVARIANT}",
                    clip(&id)
                ));
            }
            Some(_) => {}
            None => {
                out.linked.insert(id, source);
            }
        }
    }
    extensions("sources", &mut out.extensions, next.extensions, i)
}

fn annotations(
    out: &mut Annotations,
    next: Annotations,
    i: usize,
    warn: &mut dyn FnMut(String),
) -> Result<(), String> {
    for (id, spec) in next.specification {
        specification(&mut out.specification, id, spec, i)?;
    }
    for (id, section) in next.section {
        self::section(&mut out.section, id, section, i)?;
    }
    for (id, requirement) in next.requirement {
        self::requirement(&mut out.requirement, id, requirement, i)?;
    }
    for (id, cite) in next.cite {
        self::cite(&mut out.cite, id, cite, i, warn)?;
    }
    extensions("annotations", &mut out.extensions, next.extensions, i)
}

fn specification(
    out: &mut BTreeMap<String, SpecificationAnnotation>,
    id: String,
    spec: SpecificationAnnotation,
    i: usize,
) -> Result<(), String> {
    let Some(seen) = out.get_mut(&id) else {
        out.insert(id, spec);
        return Ok(());
    };
    let id = clip(&id);
    if seen.title != spec.title {
        return Err(format!(
            "input #{i} has specification annotation '{id}' with title {} conflicting with \
             previously seen {}",
            quoted(&spec.title),
            quoted(&seen.title)
        ));
    }
    if seen.format != spec.format {
        return Err(format!(
            "input #{i} has specification annotation '{id}' with format '{}' conflicting with \
             previously seen '{}'",
            clip(&spec.format),
            clip(&seen.format)
        ));
    }
    if seen.source != spec.source {
        return Err(format!(
            "internal invariant violation: input #{i} has specification '{id}' with source \
             differing from previously seen; {INVARIANT}"
        ));
    }
    match (&seen.url, spec.url) {
        (Some(a), Some(b)) if *a != b => {
            return Err(format!(
                "input #{i} has specification annotation '{id}' with url {} conflicting with \
                 previously seen {} (likely a producer bug or accidental content collision; \
                 spc- IDs do not hash url)",
                quoted(&Some(b)),
                quoted(&seen.url)
            ));
        }
        (None, Some(b)) => seen.url = Some(b),
        _ => {}
    }
    Ok(())
}

fn section(
    out: &mut BTreeMap<String, SectionAnnotation>,
    id: String,
    section: SectionAnnotation,
    i: usize,
) -> Result<(), String> {
    let Some(seen) = out.get(&id) else {
        out.insert(id, section);
        return Ok(());
    };
    let id = clip(&id);
    if seen.short_name != section.short_name {
        return Err(format!(
            "input #{i} has section annotation '{id}' with short_name '{}' conflicting with \
             previously seen '{}'",
            clip(&section.short_name),
            clip(&seen.short_name)
        ));
    }
    if seen.long_name != section.long_name {
        return Err(format!(
            "input #{i} has section annotation '{id}' with long_name {} conflicting with \
             previously seen {}",
            quoted(&section.long_name),
            quoted(&seen.long_name)
        ));
    }
    if seen.source != section.source {
        return Err(format!(
            "internal invariant violation: input #{i} has section '{id}' with source differing \
             from previously seen; {INVARIANT}"
        ));
    }
    Ok(())
}

fn requirement(
    out: &mut BTreeMap<String, RequirementAnnotation>,
    id: String,
    requirement: RequirementAnnotation,
    i: usize,
) -> Result<(), String> {
    let Some(seen) = out.get_mut(&id) else {
        out.insert(id, requirement);
        return Ok(());
    };
    let id = clip(&id);
    if seen.level != requirement.level {
        return Err(format!(
            "input #{i} has requirement annotation '{id}' with level {:?} conflicting with \
             previously seen {:?}",
            requirement.level, seen.level
        ));
    }
    for (field, differs) in [
        ("source", seen.source != requirement.source),
        ("origin", seen.origin != requirement.origin),
    ] {
        if differs {
            return Err(format!(
                "internal invariant violation: input #{i} has requirement '{id}' with {field} \
                 differing from previously seen; {INVARIANT}"
            ));
        }
    }
    for (cite, ranges) in requirement.coverage {
        seen.coverage.entry(cite).or_default().extend(ranges);
    }
    Ok(())
}

fn cite(
    out: &mut BTreeMap<String, CiteAnnotation>,
    id: String,
    cite: CiteAnnotation,
    i: usize,
    warn: &mut dyn FnMut(String),
) -> Result<(), String> {
    let Some(seen) = out.get_mut(&id) else {
        out.insert(id, cite);
        return Ok(());
    };
    let id = clip(&id);
    if seen.kind != cite.kind {
        return Err(format!(
            "input #{i} has cite annotation '{id}' with type {:?} conflicting with previously \
             seen {:?}",
            cite.kind, seen.kind
        ));
    }
    if seen.level != cite.level {
        return Err(format!(
            "input #{i} has cite annotation '{id}' with level {:?} conflicting with previously \
             seen {:?}",
            cite.level, seen.level
        ));
    }
    if seen.target != cite.target {
        return Err(format!(
            "input #{i} has cite annotation '{id}' with target conflicting with previously seen"
        ));
    }
    if seen.source != cite.source {
        return Err(format!(
            "internal invariant violation: input #{i} has cite '{id}' with source differing \
             from previously seen; {INVARIANT}"
        ));
    }
    let drifted: Vec<&str> = [
        ("comment", seen.comment != cite.comment),
        ("feature", seen.feature != cite.feature),
        ("tracking_issue", seen.tracking_issue != cite.tracking_issue),
        ("tags", seen.tags != cite.tags),
    ]
    .into_iter()
    .filter_map(|(field, differs)| differs.then_some(field))
    .collect();
    smaller(&mut seen.comment, cite.comment);
    smaller(&mut seen.feature, cite.feature);
    smaller(&mut seen.tracking_issue, cite.tracking_issue);
    seen.tags.extend(cite.tags);
    seen.tags.sort();
    seen.tags.dedup();
    if !drifted.is_empty() {
        warn(format!(
            "warning: input #{i} has cite annotation '{id}' with metadata drift from previously \
             seen ({}); reconciling deterministically (lex-min for strings, sorted union for \
             tags)",
            drifted.join(", ")
        ));
    }
    Ok(())
}

/// One value of two: one beats none, the smaller of two.
fn smaller(seen: &mut Option<String>, next: Option<String>) {
    if let Some(next) = next
        && seen.as_ref().is_none_or(|seen| next < *seen)
    {
        *seen = Some(next);
    }
}

/// Buckets of other schema URLs: kept when equal, refused when not.
fn extensions(
    bucket: &str,
    out: &mut BTreeMap<String, serde_json::Value>,
    next: BTreeMap<String, serde_json::Value>,
    i: usize,
) -> Result<(), String> {
    for (key, value) in next {
        match out.get(&key) {
            Some(seen) if *seen != value => {
                return Err(format!(
                    "input #{i} has extension '{}' under {bucket} conflicting with previously \
                     seen value",
                    clip(&key)
                ));
            }
            Some(_) => {}
            None => {
                out.insert(key, value);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::super::json_v2::{
        ByteRange, CiteType, Level, LinkedSource, SourceLocation, SourceRanges, parse,
    };
    use super::*;

    fn empty() -> ReportV2 {
        parse(br#"{"version":"2.0","sources":{},"annotations":{}}"#).unwrap()
    }

    fn cite(comment: Option<&str>, tags: &[&str]) -> CiteAnnotation {
        CiteAnnotation {
            source: SourceLocation {
                src: "lnk-x".into(),
                line: Some(3),
            },
            target: SourceRanges {
                src: "src-y".into(),
                ranges: vec![ByteRange { start: 1, end: 4 }],
            },
            kind: CiteType::Citation,
            level: Level::Auto,
            comment: comment.map(str::to_string),
            feature: None,
            tracking_issue: None,
            tags: tags.iter().map(|t| t.to_string()).collect(),
        }
    }

    fn merged(reports: Vec<ReportV2>) -> (Result<ReportV2, String>, Vec<String>) {
        let mut warnings = Vec::new();
        let out = merge(reports, &mut |w| warnings.push(w));
        (out, warnings)
    }

    #[test]
    fn soft_drift_is_reconciled_in_any_order() {
        let mut a = empty();
        a.annotations
            .cite
            .insert("cite-1".into(), cite(Some("beta"), &["t2"]));
        let mut b = empty();
        b.annotations
            .cite
            .insert("cite-1".into(), cite(Some("alpha"), &["t1", "t2"]));
        let (ab, warnings) = merged(vec![a.clone(), b.clone()]);
        let (ba, _) = merged(vec![b, a]);
        let ab = ab.unwrap();
        assert_eq!(ab, ba.unwrap());
        let c = &ab.annotations.cite["cite-1"];
        assert_eq!(c.comment.as_deref(), Some("alpha"));
        assert_eq!(c.tags, ["t1", "t2"]);
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].contains("(comment, tags)"), "{}", warnings[0]);
    }

    #[test]
    fn conflicts_are_refused() {
        let mut a = empty();
        a.annotations.cite.insert("cite-1".into(), cite(None, &[]));
        let mut b = a.clone();
        b.annotations.cite.get_mut("cite-1").unwrap().kind = CiteType::Test;
        let (out, _) = merged(vec![a.clone(), b]);
        assert_eq!(
            out.unwrap_err(),
            "input #1 has cite annotation 'cite-1' with type Test conflicting with previously \
             seen Citation"
        );
        let mut c = empty();
        c.sources.linked.insert(
            "lnk-x".into(),
            LinkedSource {
                file_name: "src/lib.rs".into(),
                repository: None,
            },
        );
        let (out, _) = merged(vec![c.clone(), empty(), c]);
        assert!(out.unwrap_err().contains("appears in inputs #0 and #2"));
    }
}
