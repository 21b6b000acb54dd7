//! Requirement statuses, computed once the model's citations are attached: the detail from
//! the annotations that quote each requirement, the status from the bytes they cover, as
//! duvet 0.4.3 counts them ([`crate::coverage`]), and `cited` from the lines they touch, as
//! `duvet report --ci --require-citations` counts them (the rule: [`crate::model`]'s doc).

use std::collections::{HashMap, HashSet};
use std::ops::Range;

pub mod kinds;

use self::kinds::StatusKind;
use crate::{annotation::AnnotationType, model::Model};

/// Whether annotations of `kind` cover requirement text (duvet's report: everything but
/// requirements themselves and TODOs).
pub fn covers(kind: AnnotationType) -> bool {
    !matches!(kind, AnnotationType::Spec | AnnotationType::Todo)
}

/// Whether annotations of `kind` cite the lines they touch (`duvet report --ci`: citations,
/// implications and exceptions; "mark exceptions as fully covered").
pub fn cites(kind: AnnotationType) -> bool {
    matches!(
        kind,
        AnnotationType::Implementation | AnnotationType::Implication | AnnotationType::Exception
    )
}

/// What an exception gives as its reason.
fn reason(reason: Option<&str>) -> String {
    reason.unwrap_or("no reason given").to_string()
}

impl Model {
    pub(crate) fn compute_statuses(&mut self) {
        // Requirements some covering annotation quotes: the status of those whose text duvet
        // would not find in the section (a listed requirement of a missing specification).
        let mut quoted: HashSet<usize> = HashSet::new();
        // Likewise, the requirements citing annotations quote: with exceptions, and without.
        let mut quoted_citing: HashSet<usize> = HashSet::new();
        let mut quoted_implementing: HashSet<usize> = HashSet::new();
        for (citation, matches) in std::mem::take(&mut self.pending_ranges) {
            let kind = self.citations[citation].kind;
            for (r, _) in matches {
                let status = &mut self.requirements[r].status;
                status.citation_count += 1;
                if cites(kind) {
                    quoted_citing.insert(r);
                    if kind != AnnotationType::Exception {
                        quoted_implementing.insert(r);
                    }
                }
                match kind {
                    AnnotationType::Implementation | AnnotationType::Implication => {}
                    AnnotationType::Exception => {
                        if status.exception.is_none() {
                            status.exception =
                                Some(reason(self.citations[citation].reason.as_deref()));
                        }
                    }
                    AnnotationType::Test => status.tested = true,
                    AnnotationType::Todo => status.todo_count += 1,
                    AnnotationType::Spec => {}
                }
                if covers(kind) {
                    quoted.insert(r);
                }
            }
        }

        // What each section's covering annotations cover, in its view.
        let mut covering: HashMap<(usize, usize), Vec<Range<usize>>> = HashMap::new();
        for citation in &self.citations {
            if let (true, Some(span)) = (covers(citation.kind), &citation.span) {
                covering
                    .entry((citation.spec, citation.section))
                    .or_default()
                    .push(span.clone());
            }
        }

        // The lines of each section that citing annotations touch: with exceptions (what
        // `duvet report --ci` counts), and without (to tell exception-only requirements); and
        // the first exception touching each line, whose reason an excepted requirement gives
        // when no exception quotes it (an exception of another requirement on its line).
        let mut citing: HashMap<(usize, usize), (HashSet<usize>, HashSet<usize>)> = HashMap::new();
        let mut excepting: HashMap<(usize, usize, usize), usize> = HashMap::new();
        for (c, citation) in self.citations.iter().enumerate() {
            if let (true, Some(span)) = (cites(citation.kind), &citation.span) {
                let place = (citation.spec, citation.section);
                let lines = self.specs[place.0].sections[place.1].view.lines(span);
                let (with, without) = citing.entry(place).or_default();
                with.extend(lines.clone());
                if citation.kind != AnnotationType::Exception {
                    without.extend(lines);
                } else {
                    for line in lines {
                        excepting.entry((place.0, place.1, line)).or_insert(c);
                    }
                }
            }
        }

        for (r, requirement) in self.requirements.iter_mut().enumerate() {
            let place = (requirement.spec, requirement.section);
            let lines = requirement
                .span
                .as_ref()
                .map(|span| self.specs[place.0].sections[place.1].view.lines(span))
                .filter(|lines| !lines.is_empty());
            let (cited, implemented) = match &lines {
                Some(lines) => {
                    let (with, without) = citing
                        .get(&place)
                        .map_or((None, None), |(w, wo)| (Some(w), Some(wo)));
                    let all = |set: Option<&HashSet<usize>>| {
                        set.is_some_and(|set| lines.clone().all(|line| set.contains(&line)))
                    };
                    (all(with), all(without))
                }
                None => (quoted_citing.contains(&r), quoted_implementing.contains(&r)),
            };
            requirement.status.cited = cited;
            requirement.excepted = cited && !implemented;
            // Excepted, by exceptions none of which quotes it: the reason of the first one
            // touching a line of its text that no implementation or implication touches (one
            // does, or it would not be excepted).
            if requirement.excepted && requirement.status.exception.is_none() {
                let without = citing.get(&place).map(|(_, without)| without);
                requirement.status.exception = lines
                    .into_iter()
                    .flatten()
                    .filter(|line| without.is_none_or(|without| !without.contains(line)))
                    .find_map(|line| excepting.get(&(place.0, place.1, line)))
                    .map(|&c| reason(self.citations[c].reason.as_deref()));
            }
            requirement.status.status = match &requirement.span {
                Some(span) => {
                    let view = &self.specs[place.0].sections[place.1].view;
                    let total = view.bytes(span);
                    let ranges = covering.get(&place).map(Vec::as_slice).unwrap_or(&[]);
                    let uncovered = view.uncovered(span, ranges);
                    if uncovered == 0 {
                        StatusKind::FullyImplemented
                    } else if uncovered >= total {
                        StatusKind::NotStarted
                    } else {
                        StatusKind::PartiallyImplemented
                    }
                }
                None if quoted.contains(&r) => StatusKind::FullyImplemented,
                None => StatusKind::NotStarted,
            };
        }
    }
}
