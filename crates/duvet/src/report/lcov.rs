//! The LCOV report of duvet 0.4.3 (`duvet report --lcov DIR`): one `compliance.N.lcov` per
//! specification, where a specification's lines are source lines, its sections functions,
//! and citations and tests two branches of each line they touch, so that coverage tools
//! show requirement coverage.

use std::collections::HashSet;
use std::fmt::Write as _;

use super::{Kind, Report, Target};

/// The files of the report: (`compliance.N.lcov`, text).
pub fn files(
    report: &Report,
    download_dir: &std::path::Path,
    require_citations: bool,
    require_tests: bool,
) -> Vec<(String, String)> {
    report
        .targets
        .iter()
        .enumerate()
        .map(|(n, target)| {
            (
                format!("compliance.{n}.lcov"),
                target_text(target, download_dir, require_citations, require_tests),
            )
        })
        .collect()
}

fn target_text(
    target: &Target,
    download_dir: &std::path::Path,
    require_citations: bool,
    require_tests: bool,
) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "TN:Compliance");
    let file = if target.is_url {
        target.file.strip_prefix(download_dir).map_or_else(
            |_| crate::model::path_text(&target.file),
            crate::model::path_text,
        )
    } else {
        target.key.clone()
    };
    let _ = writeln!(out, "SF:{file}");
    for section in &target.sections {
        let _ = writeln!(out, "FN:{},{}", section.title_line, section.title);
    }
    let _ = writeln!(out, "FNF:{}", target.sections.len());

    let mut cited = HashSet::new();
    let mut tested = HashSet::new();
    let mut significant = Vec::new();
    for r in &target.refs {
        let section = target.sections.get(r.section);
        let (citation, test) = match r.kind {
            Kind::Test => (0, 1),
            Kind::Citation => (1, 0),
            Kind::Implication | Kind::Exception => (1, 1),
            Kind::Spec | Kind::Todo => (0, 0),
        };
        for (block, count) in [(0usize, citation), (1usize, test)] {
            // As 0.4.3: a section's title line is hit once per block, in the same set as
            // the lines.
            let hits = if block == 0 { &mut cited } else { &mut tested };
            if count != 0 {
                hits.insert(r.line);
            }
            let _ = writeln!(out, "BRDA:{},{block},0,{count}", r.line);
            if let Some(section) = section {
                let mut title_count = count;
                if title_count != 0 && !hits.insert(section.title_line) {
                    title_count = 0;
                }
                let _ = writeln!(out, "FNDA:{title_count},{}", section.title);
                let _ = writeln!(out, "BRDA:{},{block},0,{title_count}", section.title_line);
            }
        }
        significant.push(r.line);
    }
    significant.sort_unstable();
    significant.dedup();
    for line in &significant {
        let _ = writeln!(out, "DA:{line},0");
    }
    let sorted = |set: &HashSet<usize>| {
        let mut v: Vec<usize> = set.iter().copied().collect();
        v.sort_unstable();
        v
    };
    let (hit, missed): (Vec<usize>, Vec<usize>) = match (require_citations, require_tests) {
        (true, true) => (
            sorted(&cited.intersection(&tested).copied().collect()),
            sorted(&cited.symmetric_difference(&tested).copied().collect()),
        ),
        (true, false) => (
            sorted(&cited),
            sorted(&tested.difference(&cited).copied().collect()),
        ),
        (false, true) => (
            sorted(&tested),
            sorted(&cited.difference(&tested).copied().collect()),
        ),
        (false, false) => (sorted(&cited.union(&tested).copied().collect()), Vec::new()),
    };
    for line in hit {
        let _ = writeln!(out, "DA:{line},1");
    }
    for line in missed {
        let _ = writeln!(out, "DA:{line},0");
    }
    let _ = writeln!(out, "end_of_record");
    out
}
