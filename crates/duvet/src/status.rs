//! Requirement statuses, computed once the model's citations are attached: the detail from
//! the annotations that quote each requirement, the status from the bytes they cover, as
//! duvet 0.4.3 counts them ([`crate::coverage`]).

use std::collections::{HashMap, HashSet};
use std::ops::Range;

use crate::{
    annotation::AnnotationType,
    model::{Model, StatusKind},
};

/// Whether annotations of `kind` cover requirement text (duvet's report: everything but
/// requirements themselves and TODOs).
pub fn covers(kind: AnnotationType) -> bool {
    !matches!(kind, AnnotationType::Spec | AnnotationType::Todo)
}

impl Model {
    pub(crate) fn compute_statuses(&mut self) {
        // Requirements some covering annotation quotes: the status of those whose text duvet
        // would not find in the section (a listed requirement of a missing specification).
        let mut quoted: HashSet<usize> = HashSet::new();
        for (citation, matches) in std::mem::take(&mut self.pending_ranges) {
            let kind = self.citations[citation].kind;
            for (r, _) in matches {
                let status = &mut self.requirements[r].status;
                status.citation_count += 1;
                match kind {
                    AnnotationType::Implementation | AnnotationType::Implication => {
                        status.cited = true;
                    }
                    AnnotationType::Exception => {
                        if status.exception.is_none() {
                            status.exception = Some(
                                self.citations[citation]
                                    .reason
                                    .clone()
                                    .unwrap_or_else(|| "no reason given".to_string()),
                            );
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

        for (r, requirement) in self.requirements.iter_mut().enumerate() {
            let place = (requirement.spec, requirement.section);
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
