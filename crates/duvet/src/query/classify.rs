//! How much of an annotation's quote others cover, as duvet 0.4.3's query counts it: in the
//! normalized text of the section the model holds, the target at the first occurrence of its
//! quote, each covering quote at the occurrence that overlaps the target most
//! ([`crate::checks::best_of`]), each byte covered or not.

use std::cell::OnceCell;
use std::collections::{BTreeSet, HashMap};
use std::ops::Range;

use crate::annotation::Annotation;
use crate::checks::{best_of, occurrences_in};
use crate::coverage::normalize;
use crate::model::Model;

use super::Covered;

/// An annotation with the normalized text of its section, when the model has it.
struct Item<'a> {
    annotation: &'a Annotation,
    section: Option<&'a str>,
    quote: String,
    found: OnceCell<Vec<Range<usize>>>,
}

/// The annotations of a query, by their index in it.
pub(super) struct Items<'a> {
    items: Vec<Item<'a>>,
}

/// Annotations that may cover others, by target as written (0.4.3 compares targets as
/// strings); those without a quote cover nothing.
pub(super) struct Pool<'a> {
    by_target: HashMap<&'a str, Vec<usize>>,
}

impl<'a> Pool<'a> {
    pub(super) fn new(items: &Items<'a>, members: Vec<usize>) -> Self {
        let mut by_target: HashMap<&str, Vec<usize>> = HashMap::new();
        for i in members {
            let a = items.items[i].annotation;
            if !a.quote.is_empty() {
                by_target.entry(a.target.as_str()).or_default().push(i);
            }
        }
        Self { by_target }
    }

    fn of(&self, target: &str) -> &[usize] {
        self.by_target.get(target).map_or(&[], Vec::as_slice)
    }
}

/// Annotations sorted by how others cover them (0.4.3's classes).
#[derive(Debug, Default)]
pub(super) struct Classified {
    /// Covered entirely by the resolving pool, and by no pending one.
    pub complete: Vec<Covered>,
    /// Covered in part by the resolving pool, by no pending one.
    pub incomplete: Vec<Covered>,
    /// Covered by nothing.
    pub none: Vec<usize>,
    /// Covered by both pools (the resolving coverers first).
    pub mixed: Vec<Covered>,
    /// Covered only by the pending pool (TODOs).
    pub pending: Vec<Covered>,
}

impl<'a> Items<'a> {
    pub(super) fn new(model: &'a Model, annotations: &[&'a Annotation]) -> Self {
        let items = annotations
            .iter()
            .map(|&annotation| Item {
                annotation,
                section: model
                    .resolve_target(&annotation.target)
                    .ok()
                    .map(|(s, c)| model.specs[s].sections[c].view.normalized()),
                quote: normalize(&annotation.quote),
                found: OnceCell::new(),
            })
            .collect();
        Self { items }
    }

    /// Where item `i`'s quote occurs in its section (none when it has no section).
    fn occurrences(&self, i: usize) -> &[Range<usize>] {
        let item = &self.items[i];
        item.found.get_or_init(|| match item.section {
            Some(section) => occurrences_in(section, &item.quote),
            None => Vec::new(),
        })
    }

    /// How much of item `target`'s quote the members of `pool` with its target cover: whether
    /// all of it, and which overlap it. `None` when its own quote is not found; quotes not
    /// found go to `unmatched`.
    fn cover(
        &self,
        target: usize,
        pool: &Pool<'_>,
        unmatched: &mut BTreeSet<usize>,
    ) -> Option<(bool, Vec<usize>)> {
        let a = self.items[target].annotation;
        // A reference without a quote: covered, by nothing (0.4.3's rule).
        if a.quote.trim().is_empty() {
            return Some((true, Vec::new()));
        }
        let Some(range) = self.occurrences(target).first().cloned() else {
            unmatched.insert(target);
            return None;
        };
        let mut covered = vec![false; range.len()];
        let mut by = Vec::new();
        for &c in pool.of(&a.target) {
            if c == target {
                continue;
            }
            let Some(found) = best_of(self.occurrences(c), &range) else {
                unmatched.insert(c);
                continue;
            };
            let (start, end) = (found.start.max(range.start), found.end.min(range.end));
            if start < end {
                covered[start - range.start..end - range.start].fill(true);
                by.push(c);
            }
        }
        Some((covered.iter().all(|&b| b), by))
    }

    /// Sort `targets` by how `resolving` and `pending` cover them, as 0.4.3 does.
    pub(super) fn classify(
        &self,
        targets: &[usize],
        resolving: &Pool<'_>,
        pending: &Pool<'_>,
        unmatched: &mut BTreeSet<usize>,
    ) -> Classified {
        let mut out = Classified::default();
        for &target in targets {
            let Some((fully, by)) = self.cover(target, resolving, unmatched) else {
                continue;
            };
            let Some((pending_fully, todo)) = self.cover(target, pending, unmatched) else {
                continue;
            };
            let covered = |fully, by| Covered { target, fully, by };
            match (fully, by.len(), todo.len()) {
                (true, _, 0) => out.complete.push(covered(true, by)),
                (false, 1.., 0) => out.incomplete.push(covered(false, by)),
                (false, 0, 1..) => out.pending.push(covered(pending_fully, todo)),
                (true, _, 1..) | (false, 1.., 1..) => {
                    let mut all = by;
                    all.extend(todo);
                    out.mixed.push(covered(fully, all));
                }
                _ => out.none.push(target),
            }
        }
        out
    }
}
