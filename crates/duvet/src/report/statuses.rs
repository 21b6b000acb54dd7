//! What the JSON report says of each requirement: how many of its bytes annotations of each
//! type cover, how many none covers (`incomplete`), and which annotations touch it
//! (`related`), counted in bytes of the specification's file as duvet 0.4.3 counts them.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

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

/// The counts of every requirement among `refs` (one specification's), by its number.
pub fn of(refs: &[Ref]) -> BTreeMap<usize, Counts> {
    // Which non-requirement references cover each byte.
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
