//! The commit graph, read-only: branch tips, their committer dates, whether a branch moved
//! since it was created (its reflog), and ahead/behind counts between two tips.
//!
//! Commits never change, so what is read of them is kept by object id ([`History`]): the
//! parents and committer time of each commit walked, and the counts of each pair of tips
//! compared. A warm health check of thousands of branches then costs the reading of their
//! refs. Both caches are bounded; past the bound they start over.

use std::{
    cmp::Reverse,
    collections::{BinaryHeap, HashMap},
    sync::{Arc, Mutex},
};

use gix::ObjectId;

/// Commits kept (about 100 bytes each).
const MAX_COMMITS: usize = 200_000;
/// Tip pairs kept.
const MAX_PAIRS: usize = 100_000;
/// The most commits one comparison walks; a pair further apart is reported as cut.
pub const MAX_WALK: usize = 1_000_000;

/// What a walk needs of a commit.
#[derive(Debug, Clone)]
struct CommitInfo {
    /// Committer time, seconds since the epoch.
    time: i64,
    parents: Arc<[ObjectId]>,
}

/// Ahead/behind of one tip against another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Divergence {
    /// Commits reachable from the first tip only.
    pub ahead: u32,
    /// Commits reachable from the second tip only.
    pub behind: u32,
}

/// The tip of a local branch: its commit, and that commit's committer date.
#[derive(Debug, Clone)]
pub struct Tip {
    pub id: ObjectId,
    /// Seconds since the epoch.
    pub time: i64,
    /// RFC 3339 with the commit's own offset.
    pub date: String,
}

/// The caches of one repository (see the module documentation).
#[derive(Debug, Default)]
pub struct History {
    commits: Mutex<HashMap<ObjectId, CommitInfo>>,
    pairs: Mutex<HashMap<(ObjectId, ObjectId), Divergence>>,
}

/// One comparison: each commit's flags, the queue (newest first) and how many queued
/// commits are not yet known to be reachable from both tips.
#[derive(Default)]
struct Walk {
    flags: HashMap<ObjectId, u8>,
    queue: BinaryHeap<(i64, Reverse<ObjectId>)>,
    /// How many times each commit is queued.
    queued: HashMap<ObjectId, u32>,
    open: usize,
}

impl Walk {
    /// Add `flag` to commit `id` (its time `time`) and queue it to pass the flags on.
    fn mark(&mut self, id: ObjectId, flag: u8, time: i64) {
        let before = self.flags.get(&id).copied().unwrap_or(0);
        let after = before | flag;
        self.flags.insert(id, after);
        let count = self.queued.entry(id).or_insert(0);
        if *count == 0 {
            if after != BOTH {
                self.open += 1;
            }
        } else if before != BOTH && after == BOTH {
            self.open -= 1;
        }
        *count += 1;
        self.queue.push((time, Reverse(id)));
    }

    /// The newest queued commit and its flags.
    fn pop(&mut self) -> Option<(ObjectId, u8)> {
        let (_, Reverse(id)) = self.queue.pop()?;
        let flag = self.flags.get(&id).copied().unwrap_or(0);
        if let Some(count) = self.queued.get_mut(&id) {
            *count = count.saturating_sub(1);
            if *count == 0 && flag != BOTH {
                self.open -= 1;
            }
        }
        Some((id, flag))
    }
}

/// Flags of a commit during a comparison.
const FROM_A: u8 = 1;
const FROM_B: u8 = 2;
const BOTH: u8 = FROM_A | FROM_B;

impl History {
    /// The commit `id`: from the cache, else read from `repo`.
    fn commit(&self, repo: &gix::Repository, id: ObjectId) -> Result<CommitInfo, String> {
        if let Ok(commits) = self.commits.lock()
            && let Some(info) = commits.get(&id)
        {
            return Ok(info.clone());
        }
        let commit = repo
            .find_commit(id)
            .map_err(|err| format!("cannot read commit {id}: {err}"))?;
        let time = commit
            .time()
            .map_err(|err| format!("cannot read the date of commit {id}: {err}"))?
            .seconds;
        let parents: Arc<[ObjectId]> = commit.parent_ids().map(|p| p.detach()).collect();
        let info = CommitInfo { time, parents };
        if let Ok(mut commits) = self.commits.lock() {
            if commits.len() >= MAX_COMMITS {
                commits.clear();
            }
            commits.insert(id, info.clone());
        }
        Ok(info)
    }

    /// The tip facts of commit `id`.
    pub fn tip(&self, repo: &gix::Repository, id: ObjectId) -> Result<Tip, String> {
        let commit = repo
            .find_commit(id)
            .map_err(|err| format!("cannot read commit {id}: {err}"))?;
        let time = commit
            .time()
            .map_err(|err| format!("cannot read the date of commit {id}: {err}"))?;
        Ok(Tip {
            id,
            time: time.seconds,
            date: time.format_or_unix(gix::date::time::format::ISO8601_STRICT),
        })
    }

    /// Commits reachable from `a` but not `b` (ahead) and from `b` but not `a` (behind).
    ///
    /// Walks both histories newest first (by committer time) and stops once every commit
    /// still queued is reachable from both, as `git rev-list --left-right --count a...b`.
    /// A commit reached again with new flags is walked again, so clock skew costs time,
    /// not correctness of what was walked.
    pub fn divergence(
        &self,
        repo: &gix::Repository,
        a: ObjectId,
        b: ObjectId,
    ) -> Result<Divergence, String> {
        if a == b {
            return Ok(Divergence {
                ahead: 0,
                behind: 0,
            });
        }
        if let Ok(pairs) = self.pairs.lock()
            && let Some(known) = pairs.get(&(a, b))
        {
            return Ok(*known);
        }
        let mut walk = Walk::default();
        for (id, flag) in [(a, FROM_A), (b, FROM_B)] {
            let info = self.commit(repo, id)?;
            walk.mark(id, flag, info.time);
        }
        let mut walked = 0usize;
        while walk.open > 0 {
            let Some((id, flag)) = walk.pop() else {
                break;
            };
            walked += 1;
            if walked > MAX_WALK {
                return Err(format!(
                    "{a} and {b} are more than {MAX_WALK} commits apart; not counted"
                ));
            }
            let info = self.commit(repo, id)?;
            for parent in info.parents.iter() {
                if walk.flags.get(parent).is_none_or(|f| f | flag != *f) {
                    let time = self.commit(repo, *parent)?.time;
                    walk.mark(*parent, flag, time);
                }
            }
        }
        let flags = walk.flags;
        let mut ahead = 0u32;
        let mut behind = 0u32;
        for flag in flags.values() {
            match *flag {
                FROM_A => ahead += 1,
                FROM_B => behind += 1,
                _ => {}
            }
        }
        let result = Divergence { ahead, behind };
        if let Ok(mut pairs) = self.pairs.lock() {
            if pairs.len() >= MAX_PAIRS {
                pairs.clear();
            }
            pairs.insert((a, b), result);
        }
        Ok(result)
    }
}

/// Whether the branch `name` moved since it was created: its reflog's first entry set it to
/// another commit than its tip. `None` when git keeps no reflog for it.
pub fn moved_since_created(repo: &gix::Repository, name: &str, tip: ObjectId) -> Option<bool> {
    let reference = repo
        .find_reference(format!("refs/heads/{name}").as_str())
        .ok()?;
    let mut platform = reference.log_iter();
    let mut lines = platform.all().ok()??;
    let first = lines.next()?.ok()?;
    let created = ObjectId::from_hex(first.new_oid).ok()?;
    Some(created != tip)
}
