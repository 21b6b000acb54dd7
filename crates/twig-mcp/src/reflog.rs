//! Whether a branch's own work is in its parent, from git's reflogs: the evidence `merged`
//! needs when a branch has no commit its parent lacks (ahead 0).
//!
//! Ahead 0 alone says nothing: a branch made with `twig switch -p` that never had a commit
//! is ahead 0, and so is the same branch after `twig cascade` fast-forwarded it to its
//! parent's new tip. Only a branch that *had* commits of its own, now in its parent, is
//! merged. The rule:
//!
//! - A commit `C` the branch's reflog shows it at (an entry at second `t`) was **own** when
//!   `C` was not reachable from the parent's tip at `t`. The parent's tip at `t` is read from
//!   the parent's reflog: the last entry before second `t` and every entry of second `t`
//!   (a cascade or a script moves both in one second), plus any earlier-written entry dated
//!   at or after `t` (a clock that went back). `C` must be unreachable from every one.
//! - The branch is **merged** into the parent when some own commit is reachable from the
//!   parent's current tip.
//! - The entry that created the branch is never own work: a branch made from a commit its
//!   parent did not have yet (`git switch -c feat origin/main` with `main` behind; a branch
//!   made on a parent branch, re-parented after that parent merged) had no work of its own.
//! - No evidence, no claim: without a reflog of the branch or of the parent, when a line of
//!   either cannot be read, when the parent's reflog does not end at its current tip (a move
//!   nobody logged), when it starts at or after `t` (created later, or its older entries
//!   expired), or when a count fails, `C` is not own, and the branch is not merged. A gap
//!   that expiry cut in the middle of the parent's reflog cannot be seen; git expires
//!   unreachable entries after 30 days, so the claim rests on the last month's entries.
//!
//! Bounded: only branches ahead 0 are asked; a branch's newest [`MAX_EXAMINED`] entries are
//! examined; a reflog keeps its newest [`MAX_ENTRIES`] entries; each reachability question is
//! a counted (and cached) walk of [`History`], itself bounded.

use std::collections::{HashMap, HashSet};

use gix::ObjectId;

use crate::history::History;

/// Entries of one reflog kept (the newest).
const MAX_ENTRIES: usize = 10_000;
/// Entries of a branch's reflog examined for an own commit (the newest).
pub const MAX_EXAMINED: usize = 64;

/// One reflog entry: the commit the ref was set to, and when (seconds since the epoch;
/// `None` when the date cannot be read).
#[derive(Debug, Clone, Copy)]
struct Entry {
    new: ObjectId,
    time: Option<i64>,
    /// The entry that created the ref (its previous id is null): where a branch starts is
    /// never work of its own.
    created: bool,
}

/// The reflogs read during one assessment, by branch name (`None`: git keeps none).
#[derive(Debug, Default)]
pub struct Reflogs {
    logs: HashMap<String, Option<Vec<Entry>>>,
}

impl Reflogs {
    fn load(&mut self, repo: &gix::Repository, name: &str) {
        if !self.logs.contains_key(name) {
            self.logs.insert(name.to_string(), read(repo, name));
        }
    }

    /// Whether `branch`, which has no commit `parent` lacks, had commits of its own that
    /// `parent` (at `parent_tip`) now has; see the module documentation.
    pub fn merged_into(
        &mut self,
        repo: &gix::Repository,
        history: &History,
        branch: &str,
        parent: &str,
        parent_tip: ObjectId,
    ) -> bool {
        self.load(repo, branch);
        self.load(repo, parent);
        let (Some(Some(own)), Some(Some(theirs))) = (self.logs.get(branch), self.logs.get(parent))
        else {
            return false;
        };
        // A parent's reflog that does not end at its tip misses moves (a tool that updated the
        // ref without logging): its past tips are not known.
        if theirs.last().map(|e| e.new) != Some(parent_tip) {
            return false;
        }
        // `Some(true)`: reachable; `None`: could not be counted.
        let reaches = |commit: ObjectId, tip: ObjectId| -> Option<bool> {
            if commit == tip {
                return Some(true);
            }
            history
                .divergence(repo, commit, tip)
                .ok()
                .map(|d| d.ahead == 0)
        };
        let mut asked: HashSet<(ObjectId, Option<i64>)> = HashSet::new();
        for entry in own.iter().rev().take(MAX_EXAMINED) {
            let Some(time) = entry.time.filter(|_| !entry.created) else {
                continue;
            };
            if !asked.insert((entry.new, entry.time)) {
                continue;
            }
            // Own first: the parent's tip then is near (often the very commit: no walk);
            // its tip now may be far ahead.
            let Some(tips) = tips_at(theirs, time) else {
                continue;
            };
            let own = tips
                .into_iter()
                .all(|tip| reaches(entry.new, tip) == Some(false));
            if own && reaches(entry.new, parent_tip) == Some(true) {
                return true;
            }
        }
        false
    }
}

/// Every commit the branch with reflog `log` may have pointed at during second `t` (see the
/// module documentation), or `None` when its reflog does not reach back before `t`.
fn tips_at(log: &[Entry], t: i64) -> Option<Vec<ObjectId>> {
    let last_before = log
        .iter()
        .rposition(|e| e.time.is_some_and(|time| time < t))?;
    let tips = log
        .iter()
        .enumerate()
        .filter(|(i, e)| {
            *i == last_before
                || match e.time {
                    // Written before the last entry that precedes `t`, yet dated at or after
                    // it: a clock went back; after it: the second `t` itself.
                    Some(time) if *i < last_before => time >= t,
                    Some(time) => time == t,
                    None => true,
                }
        })
        .map(|(_, e)| e.new)
        .collect();
    Some(tips)
}

/// The reflog of the branch `name`, oldest first (at most [`MAX_ENTRIES`], the newest), or
/// `None` when git keeps none for it.
fn read(repo: &gix::Repository, name: &str) -> Option<Vec<Entry>> {
    let reference = repo
        .find_reference(format!("refs/heads/{name}").as_str())
        .ok()?;
    let mut platform = reference.log_iter();
    let lines = platform.all().ok()??;
    let mut entries: Vec<Entry> = Vec::new();
    for line in lines {
        // A line that cannot be read may hide a move: no evidence from this reflog.
        let line = line.ok()?;
        let new = ObjectId::from_hex(line.new_oid).ok()?;
        if new.is_null() {
            continue;
        }
        let created = ObjectId::from_hex(line.previous_oid).is_ok_and(|old| old.is_null());
        entries.push(Entry {
            new,
            time: line.signature.time().ok().map(|t| t.seconds),
            created,
        });
        if entries.len() >= 2 * MAX_ENTRIES {
            entries.drain(..MAX_ENTRIES);
        }
    }
    if entries.len() > MAX_ENTRIES {
        entries.drain(..entries.len() - MAX_ENTRIES);
    }
    (!entries.is_empty()).then_some(entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(byte: u8) -> ObjectId {
        ObjectId::from_bytes_or_panic(&[byte; 20])
    }

    fn entry(byte: u8, time: i64) -> Entry {
        Entry {
            new: id(byte),
            time: Some(time),
            created: false,
        }
    }

    #[test]
    fn the_parents_tips_during_a_second() {
        let log = [entry(1, 100), entry(2, 200), entry(3, 200), entry(4, 300)];
        assert_eq!(tips_at(&log, 150), Some(vec![id(1)]));
        assert_eq!(
            tips_at(&log, 200),
            Some(vec![id(1), id(2), id(3)]),
            "the tip before the second and every tip of that second"
        );
        assert_eq!(tips_at(&log, 400), Some(vec![id(4)]));
        assert_eq!(tips_at(&log, 100), None, "the reflog starts at that second");
        assert_eq!(tips_at(&log, 50), None, "nothing known before the reflog");
        // A clock that went back: the entry written first but dated later is a candidate.
        let skewed = [entry(1, 100), entry(2, 500), entry(3, 120)];
        assert_eq!(tips_at(&skewed, 130), Some(vec![id(2), id(3)]));
        let undated = [
            entry(1, 100),
            Entry {
                new: id(2),
                time: None,
                created: false,
            },
        ];
        assert_eq!(tips_at(&undated, 130), Some(vec![id(1), id(2)]));
    }
}
