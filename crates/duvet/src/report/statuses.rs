//! What the JSON report says of each requirement: how many of its bytes annotations of each
//! type cover, how many none covers (`incomplete`), and which annotations touch it
//! (`related`), counted in bytes of the specification's file as duvet 0.4.3 counts them.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ops::Range;

use super::{Kind, Ref};

/// The counts of one requirement.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counts {
    pub spec: usize,
    pub incomplete: usize,
    pub citation: usize,
    pub implication: usize,
    pub test: usize,
    pub exception: usize,
    pub todo: usize,
    pub related: BTreeSet<usize>,
}

/// Sorted, disjoint, non-empty byte ranges.
type Ranges = Vec<Range<usize>>;

/// The union of `ranges` (any order), as sorted disjoint non-empty ranges.
fn union(mut ranges: Vec<Range<usize>>) -> Ranges {
    ranges.retain(|r| r.start < r.end);
    ranges.sort_unstable_by_key(|r| r.start);
    let mut out: Ranges = Vec::with_capacity(ranges.len());
    for r in ranges {
        match out.last_mut() {
            Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
            _ => out.push(r),
        }
    }
    out
}

/// How many bytes of `of` (sorted, disjoint) also lie in `set` (sorted, disjoint).
fn overlap(of: &[Range<usize>], set: &[Range<usize>]) -> usize {
    let mut count = 0;
    for r in of {
        let first = set.partition_point(|s| s.end <= r.start);
        for s in set.get(first..).unwrap_or_default() {
            if s.start >= r.end {
                break;
            }
            count += s.end.min(r.end) - s.start.max(r.start);
        }
    }
    count
}

/// The counts of every requirement among `refs` (one specification's), by its number.
///
/// duvet 0.4.3 counts bytes as sets (a byte two parts of one requirement share, or two
/// annotations of one type cover, counts once); here the sets are unions of ranges, and a
/// requirement's count of a type is the size of its bytes' intersection with that type's.
pub fn of(refs: &[Ref]) -> BTreeMap<usize, Counts> {
    // The bytes each type of annotation covers, and those that cover a requirement's byte
    // (exception, implication, citation, test: a TODO does not).
    let mut by_kind: HashMap<Kind, Vec<Range<usize>>> = HashMap::new();
    let mut requirements: BTreeMap<usize, Vec<Range<usize>>> = BTreeMap::new();
    // Non-requirement references that cover a byte, by start, each with the furthest end of
    // those up to it (so that a search for those covering a range stops early).
    let mut others: Vec<&Ref> = Vec::new();
    for r in refs {
        if r.kind == Kind::Spec {
            requirements.entry(r.anno).or_default().push(r.start..r.end);
        } else if r.start < r.end {
            by_kind.entry(r.kind).or_default().push(r.start..r.end);
            others.push(r);
        }
    }
    let covering = union(
        [
            Kind::Exception,
            Kind::Implication,
            Kind::Citation,
            Kind::Test,
        ]
        .iter()
        .filter_map(|kind| by_kind.get(kind))
        .flatten()
        .cloned()
        .collect(),
    );
    let by_kind: HashMap<Kind, Ranges> = by_kind
        .into_iter()
        .map(|(kind, ranges)| (kind, union(ranges)))
        .collect();
    others.sort_unstable_by_key(|r| (r.start, r.end));
    let reach: Vec<usize> = others
        .iter()
        .scan(0, |furthest, r| {
            *furthest = r.end.max(*furthest);
            Some(*furthest)
        })
        .collect();
    requirements
        .into_iter()
        .map(|(anno, parts)| {
            let spec = union(parts);
            let count = |kind: Kind| by_kind.get(&kind).map_or(0, |set| overlap(&spec, set));
            let mut related = BTreeSet::new();
            for part in &spec {
                // The references starting before the part ends, back to the first that
                // cannot reach into it.
                let before = others.partition_point(|r| r.start < part.end);
                for i in (0..before).rev() {
                    if reach[i] <= part.start {
                        break;
                    }
                    if others[i].end > part.start {
                        related.insert(others[i].anno);
                    }
                }
            }
            let total: usize = spec.iter().map(Range::len).sum();
            let counts = Counts {
                spec: total,
                incomplete: total - overlap(&spec, &covering),
                citation: count(Kind::Citation),
                implication: count(Kind::Implication),
                test: count(Kind::Test),
                exception: count(Kind::Exception),
                todo: count(Kind::Todo),
                related,
            };
            (anno, counts)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::collections::{HashMap, HashSet};

    use super::*;

    /// duvet 0.4.3's counting, byte by byte (the first implementation here): the reference
    /// the sweep over ranges must agree with.
    fn by_bytes(refs: &[Ref]) -> BTreeMap<usize, Counts> {
        let mut covering: BTreeMap<usize, Vec<&Ref>> = BTreeMap::new();
        let mut requirements: BTreeMap<usize, Vec<&Ref>> = BTreeMap::new();
        for r in refs {
            if r.kind == Kind::Spec {
                requirements.entry(r.anno).or_default().push(r);
            } else {
                for offset in r.start..r.end {
                    covering.entry(offset).or_default().push(r);
                }
            }
        }
        requirements
            .into_iter()
            .map(|(anno, parts)| {
                let mut bytes: HashMap<Kind, HashSet<usize>> = HashMap::new();
                let mut related = BTreeSet::new();
                for part in parts {
                    bytes
                        .entry(Kind::Spec)
                        .or_default()
                        .extend(part.start..part.end);
                    for (offset, by) in covering.range(part.start..part.end) {
                        for r in by {
                            bytes.entry(r.kind).or_default().insert(*offset);
                            related.insert(r.anno);
                        }
                    }
                }
                let spec = bytes.remove(&Kind::Spec).unwrap_or_default();
                let count = |kind: Kind| bytes.get(&kind).map_or(0, HashSet::len);
                let covered = |offset: &usize| {
                    [
                        Kind::Exception,
                        Kind::Implication,
                        Kind::Citation,
                        Kind::Test,
                    ]
                    .iter()
                    .any(|kind| bytes.get(kind).is_some_and(|set| set.contains(offset)))
                };
                let counts = Counts {
                    spec: spec.len(),
                    incomplete: spec.iter().filter(|offset| !covered(offset)).count(),
                    citation: count(Kind::Citation),
                    implication: count(Kind::Implication),
                    test: count(Kind::Test),
                    exception: count(Kind::Exception),
                    todo: count(Kind::Todo),
                    related,
                };
                (anno, counts)
            })
            .collect()
    }

    /// Random references (overlapping, nested, empty, one annotation in several parts)
    /// counted both ways.
    #[test]
    fn ranges_count_as_bytes_do() {
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = |below: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % below as u64) as usize
        };
        let kinds = [
            Kind::Spec,
            Kind::Test,
            Kind::Citation,
            Kind::Exception,
            Kind::Todo,
            Kind::Implication,
        ];
        for round in 0..300 {
            let span = 20 + next(200);
            let mut refs = Vec::new();
            for _ in 0..next(40) {
                let anno = next(12);
                // One annotation is one type throughout, as in a report.
                let kind = kinds[anno % kinds.len()];
                let start = next(span);
                let end = if next(8) == 0 {
                    start
                } else {
                    start + next(30)
                };
                refs.push(Ref {
                    anno,
                    start,
                    end,
                    line: 1 + start / 10,
                    section: 0,
                    kind,
                    level: 0,
                });
            }
            refs.sort();
            assert_eq!(of(&refs), by_bytes(&refs), "round {round}: {refs:?}");
        }
    }
}
