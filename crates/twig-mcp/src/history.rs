//! The commit graph, read-only: branch tips, their committer dates, and ahead/behind counts
//! between two tips (what a branch's reflog says of its own work: [`crate::reflog`]).
//!
//! Commits never change, so what is read of them is kept by object id ([`History`]): the
//! parents and committer time of each commit walked, and the counts of each pair of tips
//! compared. A warm health check of thousands of branches then costs the reading of their
//! refs. The caches are bounded (past the bound they start over) and emptied when the server
//! is idle ([`History::clear`]).

use std::{
    cmp::Reverse,
    collections::{BTreeMap, BinaryHeap, HashMap, HashSet},
    sync::{Arc, Mutex},
};

use gix::ObjectId;

/// Commits kept (about 100 bytes each).
const MAX_COMMITS: usize = 200_000;
/// Tip pairs kept.
const MAX_PAIRS: usize = 100_000;
/// Commits walked past the point where every queued one is common.
const SLOP: usize = 5;
/// The most commits one comparison walks; a pair further apart is not counted.
pub const MAX_WALK: usize = 200_000;

/// What a walk needs of a commit.
#[derive(Debug, Clone)]
struct CommitInfo {
    /// Committer time, seconds since the epoch (0 when it cannot be read).
    time: i64,
    parents: Arc<[ObjectId]>,
    /// The object is in the repository (a shallow clone's edge is not).
    present: bool,
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
    /// Seconds since the epoch, when the date can be read.
    pub time: Option<i64>,
    /// RFC 3339 with the commit's own offset, when the date can be read.
    pub date: Option<String>,
}

/// The caches of one repository (see the module documentation).
#[derive(Debug, Default)]
pub struct History {
    commits: Mutex<HashMap<ObjectId, CommitInfo>>,
    pairs: Mutex<HashMap<(ObjectId, ObjectId), Result<Divergence, String>>>,
    tips: Mutex<HashMap<ObjectId, Tip>>,
}

impl History {
    /// Forget everything read (an idle server keeps no commit-graph caches: they serve a burst
    /// of calls, and the next burst reads again what it needs).
    pub fn clear(&self) {
        fn empty<K, V>(cache: &Mutex<HashMap<K, V>>) {
            // Freed after the lock is released: a call waiting for it does not wait for that.
            let old = cache.lock().map(|mut map| std::mem::take(&mut *map));
            drop(old);
        }
        empty(&self.commits);
        empty(&self.pairs);
        empty(&self.tips);
    }
}

/// Insert into a bounded cache: past `max` entries it starts over.
fn remember<K: std::hash::Hash + Eq, V>(
    cache: &Mutex<HashMap<K, V>>,
    max: usize,
    key: K,
    value: V,
) {
    if let Ok(mut map) = cache.lock() {
        if map.len() >= max {
            map.clear();
        }
        map.insert(key, value);
    }
}

/// One walk: each commit's flags (bit 0: reached from the base, bit `i + 1`: from tip `i`)
/// and time, the queue (newest first; among commits of the same second, first queued first
/// out, so a child is taken before the parent it queued), how many queued commits are not yet
/// reached from every start, and the times of the commits reached from some starts only.
struct Walk {
    /// The flags of a commit reached from every start.
    all: u64,
    flags: HashMap<ObjectId, (u64, i64)>,
    queue: BinaryHeap<(i64, Reverse<u64>, ObjectId)>,
    /// Queued so far (the FIFO order of equal times).
    pushed: u64,
    /// How many times each commit is queued.
    queued: HashMap<ObjectId, u32>,
    open: usize,
    /// Times of the commits reached from some starts only, with their counts.
    partial: BTreeMap<i64, usize>,
    /// Commits that are not in the repository (a shallow clone's edge).
    absent: HashSet<ObjectId>,
}

impl Walk {
    fn new(starts: usize) -> Self {
        Self {
            all: if starts >= 64 {
                u64::MAX
            } else {
                (1u64 << starts) - 1
            },
            flags: HashMap::new(),
            queue: BinaryHeap::new(),
            pushed: 0,
            queued: HashMap::new(),
            open: 0,
            partial: BTreeMap::new(),
            absent: HashSet::new(),
        }
    }

    /// Add `flag` to commit `id` (its time `time`) and queue it to pass the flags on.
    fn mark(&mut self, id: ObjectId, flag: u64, time: i64) {
        let all = self.all;
        let before = self.flags.get(&id).map_or(0, |(f, _)| *f);
        let after = before | flag;
        self.flags.insert(id, (after, time));
        if before == 0 && after != all {
            *self.partial.entry(time).or_insert(0) += 1;
        } else if before != 0
            && before != all
            && after == all
            && let Some(count) = self.partial.get_mut(&time)
        {
            *count -= 1;
            if *count == 0 {
                self.partial.remove(&time);
            }
        }
        let count = self.queued.entry(id).or_insert(0);
        if *count == 0 {
            if after != all {
                self.open += 1;
            }
        } else if before != all && after == all {
            self.open = self.open.saturating_sub(1);
        }
        *count += 1;
        self.pushed += 1;
        self.queue.push((time, Reverse(self.pushed), id));
    }

    /// The newest queued commit and its flags.
    fn pop(&mut self) -> Option<(ObjectId, u64)> {
        let (_, _, id) = self.queue.pop()?;
        let flag = self.flags.get(&id).map_or(0, |(f, _)| *f);
        if let Some(count) = self.queued.get_mut(&id) {
            *count = count.saturating_sub(1);
            if *count == 0 && flag != self.all {
                self.open = self.open.saturating_sub(1);
            }
        }
        Some((id, flag))
    }

    /// Whether a queued (common) commit may still be an ancestor of a partly reached one: with
    /// clocks that never go back, an ancestor is no newer than its descendant, so once every
    /// queued commit is older than every partly reached commit none can be.
    fn may_reach_partial(&self) -> bool {
        match (self.queue.peek(), self.partial.keys().next()) {
            (Some((newest, _, _)), Some(oldest)) => newest >= oldest,
            _ => false,
        }
    }
}

/// Tips compared with one base in one walk (the base takes the 64th bit).
const BATCH: usize = 63;

impl History {
    /// The commit `id`: from the cache, else read from `repo`.
    fn commit(&self, repo: &gix::Repository, id: ObjectId) -> Result<CommitInfo, String> {
        if let Ok(commits) = self.commits.lock()
            && let Some(info) = commits.get(&id)
        {
            return Ok(info.clone());
        }
        // A commit that is not there (the edge of a shallow clone) ends the walk there.
        let Some(object) = repo
            .try_find_object(id)
            .map_err(|err| format!("cannot read commit {id}: {err}"))?
        else {
            if !repo.is_shallow().unwrap_or(false) {
                return Err(format!("commit {id} is missing from the repository"));
            }
            return Ok(CommitInfo {
                time: 0,
                parents: Arc::from([]),
                present: false,
            });
        };
        let commit = object
            .try_into_commit()
            .map_err(|err| format!("{id} is not a commit: {err}"))?;
        // A date git accepts but gix cannot read only orders the walk: take it as the oldest.
        let time = commit.time().map(|t| t.seconds).unwrap_or(0);
        let parents: Arc<[ObjectId]> = commit.parent_ids().map(|p| p.detach()).collect();
        let info = CommitInfo {
            time,
            parents,
            present: true,
        };
        remember(&self.commits, MAX_COMMITS, id, info.clone());
        Ok(info)
    }

    /// The tip facts of commit `id`.
    pub fn tip(&self, repo: &gix::Repository, id: ObjectId) -> Result<Tip, String> {
        if let Ok(tips) = self.tips.lock()
            && let Some(tip) = tips.get(&id)
        {
            return Ok(tip.clone());
        }
        let commit = repo
            .find_commit(id)
            .map_err(|err| format!("cannot read commit {id}: {err}"))?;
        // A date that cannot be read, or not written as RFC 3339 (beyond its years), is unknown.
        let time = commit.time().ok();
        let date = time
            .map(|t| t.format_or_unix(gix::date::time::format::ISO8601_STRICT))
            .filter(|d| d.contains('T') && !d.starts_with('-'));
        let tip = Tip {
            id,
            time: time.filter(|_| date.is_some()).map(|t| t.seconds),
            date,
        };
        remember(&self.tips, MAX_PAIRS, id, tip.clone());
        Ok(tip)
    }

    /// Commits reachable from `a` but not `b` (ahead) and from `b` but not `a` (behind).
    ///
    /// Walks the histories newest first (by committer time) until every commit still queued
    /// is reachable from both and older than any commit reached from one side only — exact
    /// when clocks never go back, same-second commits included — then a few commits more, as
    /// `git rev-list --left-right --count a...b` does without a commit-graph. A commit
    /// reached again with new flags is walked again; like git's, the walk can be misled by a
    /// commit dated far before its own ancestors.
    ///
    /// A pair that cannot be counted (further apart than [`MAX_WALK`] commits, or a commit
    /// missing from a repository that is not shallow) is an error, remembered like an answer
    /// so that asking again costs nothing.
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
            return known.clone();
        }
        let result = self.walk(repo, b, &[a]).map(|counts| {
            counts.first().copied().unwrap_or(Divergence {
                ahead: 0,
                behind: 0,
            })
        });
        remember(&self.pairs, MAX_PAIRS, (a, b), result.clone());
        result
    }

    /// Count every `(tip, base)` pair of `pairs` that is not known yet, the tips of one base
    /// in one walk ([`BATCH`] at a time, as git's `ahead_behind` does): branches stacked on
    /// one parent share the parent's history, walked once instead of once per branch. A
    /// walk that fails is retried pair by pair, so that only the pair at fault is uncounted.
    pub fn prefetch(&self, repo: &gix::Repository, pairs: &[(ObjectId, ObjectId)]) {
        let mut by_base: HashMap<ObjectId, Vec<ObjectId>> = HashMap::new();
        if let Ok(known) = self.pairs.lock() {
            for (tip, base) in pairs {
                if tip != base && !known.contains_key(&(*tip, *base)) {
                    let tips = by_base.entry(*base).or_default();
                    if !tips.contains(tip) {
                        tips.push(*tip);
                    }
                }
            }
        }
        for (base, tips) in by_base {
            for chunk in tips.chunks(BATCH).filter(|chunk| chunk.len() > 1) {
                if let Ok(counts) = self.walk(repo, base, chunk) {
                    for (tip, count) in chunk.iter().zip(counts) {
                        remember(&self.pairs, MAX_PAIRS, (*tip, base), Ok(count));
                    }
                }
            }
        }
    }

    /// One walk from `base` and `tips` (at most [`BATCH`]): each tip's divergence from `base`.
    fn walk(
        &self,
        repo: &gix::Repository,
        base: ObjectId,
        tips: &[ObjectId],
    ) -> Result<Vec<Divergence>, String> {
        let mut walk = Walk::new(tips.len() + 1);
        let starts = std::iter::once(base).chain(tips.iter().copied());
        for (bit, id) in starts.enumerate() {
            let info = self.commit(repo, id)?;
            let known = walk.flags.get(&id).map_or(0, |(f, _)| *f);
            walk.mark(id, known | (1 << bit), info.time);
        }
        let mut walked = 0usize;
        // The walk goes on while a commit reached from some starts only is queued, or a
        // queued commit may still reach one (same-second commits: a script, a rebase, `twig
        // cascade`), and then a few commits more (as git's `SLOP`) for a commit dated before
        // its own ancestors (a skewed clock).
        let mut slop = SLOP;
        loop {
            if walk.open > 0 || walk.may_reach_partial() {
                slop = SLOP;
            } else if slop == 0 {
                break;
            } else {
                slop -= 1;
            }
            let Some((id, flag)) = walk.pop() else {
                break;
            };
            walked += 1;
            if walked > MAX_WALK {
                return Err(format!("more than {MAX_WALK} commits apart"));
            }
            let info = self.commit(repo, id)?;
            if !info.present {
                walk.absent.insert(id);
            }
            for parent in info.parents.iter() {
                if walk.flags.get(parent).is_none_or(|(f, _)| f | flag != *f) {
                    let time = self.commit(repo, *parent)?.time;
                    walk.mark(*parent, flag, time);
                }
            }
        }
        let mut counts = vec![
            Divergence {
                ahead: 0,
                behind: 0
            };
            tips.len()
        ];
        for (id, (flag, _)) in &walk.flags {
            // A shallow clone's edge is not a commit of either side.
            if walk.absent.contains(id) {
                continue;
            }
            let from_base = flag & 1 != 0;
            for (i, count) in counts.iter_mut().enumerate() {
                let from_tip = flag & (1 << (i + 1)) != 0;
                match (from_tip, from_base) {
                    (true, false) => count.ahead += 1,
                    (false, true) => count.behind += 1,
                    _ => {}
                }
            }
        }
        Ok(counts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::{path::Path, process::Command};

    fn git(dir: &Path, args: &[&str], date: Option<&str>) -> String {
        let mut command = Command::new("git");
        command
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_AUTHOR_NAME", "T")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "T")
            .env("GIT_COMMITTER_EMAIL", "t@example.com");
        if let Some(date) = date {
            command
                .env("GIT_COMMITTER_DATE", date)
                .env("GIT_AUTHOR_DATE", date);
        }
        let out = command.output().unwrap();
        assert!(out.status.success(), "{args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    }

    fn commit(dir: &Path, message: &str, date: &str) {
        git(
            dir,
            &["commit", "-q", "--allow-empty", "-m", message],
            Some(date),
        );
    }

    fn id(dir: &Path, rev: &str) -> ObjectId {
        ObjectId::from_hex(git(dir, &["rev-parse", rev], None).as_bytes()).unwrap()
    }

    /// `git rev-list --left-right --count a...b`.
    fn git_counts(dir: &Path, a: &str, b: &str) -> Divergence {
        let out = git(
            dir,
            &["rev-list", "--left-right", "--count", &format!("{a}...{b}")],
            None,
        );
        let mut parts = out.split_whitespace().map(|n| n.parse::<u32>().unwrap());
        Divergence {
            ahead: parts.next().unwrap(),
            behind: parts.next().unwrap(),
        }
    }

    #[test]
    fn counts_agree_with_git_even_with_skewed_clocks_and_merges() {
        let dir = tempfile::tempdir().unwrap();
        let repo_dir = dir.path();
        git(repo_dir, &["init", "-q", "-b", "main"], None);
        commit(repo_dir, "base", "1700000000 +0000");
        git(repo_dir, &["branch", "feat"], None);
        // main: three commits, one dated *before* the base (a skewed clock).
        commit(repo_dir, "m1", "1700000100 +0000");
        commit(repo_dir, "m2", "1600000000 +0000");
        commit(repo_dir, "m3", "1700000300 +0000");
        git(repo_dir, &["checkout", "-q", "feat"], None);
        commit(repo_dir, "f1", "1700000050 +0000");
        commit(repo_dir, "f2", "1800000000 +0200");
        // feat merges main, then adds one more.
        git(
            repo_dir,
            &["merge", "-q", "--no-ff", "-m", "merge main", "main"],
            Some("1800000100 +0000"),
        );
        commit(repo_dir, "f3", "1800000200 +0000");
        git(repo_dir, &["checkout", "-q", "main"], None);
        commit(repo_dir, "m4", "1700000400 +0000");

        let repo = gix::open(repo_dir).unwrap();
        let history = History::default();
        for (a, b) in [("feat", "main"), ("main", "feat"), ("feat~2", "main~1")] {
            let counted = history
                .divergence(&repo, id(repo_dir, a), id(repo_dir, b))
                .unwrap();
            assert_eq!(counted, git_counts(repo_dir, a, b), "{a}...{b}");
        }
        // Cached: the same answer again, also for equal tips.
        let (feat, main) = (id(repo_dir, "feat"), id(repo_dir, "main"));
        assert_eq!(
            history.divergence(&repo, feat, main).unwrap(),
            git_counts(repo_dir, "feat", "main")
        );
        assert_eq!(
            history.divergence(&repo, feat, feat).unwrap(),
            Divergence {
                ahead: 0,
                behind: 0
            }
        );
        // The date keeps the commit's own offset.
        let tip = history.tip(&repo, id(repo_dir, "feat~2")).unwrap();
        assert_eq!(tip.date.as_deref(), Some("2027-01-15T10:00:00+02:00"));
        assert_eq!(tip.time, Some(1_800_000_000));

        // A shallow clone: the walk stops at the edge instead of failing.
        let shallow = dir.path().join("shallow");
        git(
            repo_dir,
            &[
                "clone",
                "-q",
                "--depth",
                "2",
                "--no-single-branch",
                &format!("file://{}", repo_dir.display()),
                shallow.to_str().unwrap(),
            ],
            None,
        );
        let repo = gix::open(&shallow).unwrap();
        let counted = History::default()
            .divergence(
                &repo,
                id(&shallow, "origin/feat"),
                id(&shallow, "origin/main"),
            )
            .unwrap();
        // Only commits the clone has are counted (f1 and f2 are beyond its edge); main's m3 is
        // there and reachable from feat's merge, so it is not behind (git, which cuts the
        // merge's parents at the shallow edge, says 2).
        assert_eq!(
            counted,
            Divergence {
                ahead: 2,
                behind: 1
            }
        );

        // A commit missing from a repository that is not shallow: not counted, and said so
        // (remembered: asking again does not walk again).
        let broken = dir.path().join("broken");
        git(
            repo_dir,
            &[
                "clone",
                "-q",
                "--no-local",
                repo_dir.to_str().unwrap(),
                broken.to_str().unwrap(),
            ],
            None,
        );
        git(
            &broken,
            &["checkout", "-q", "-b", "mine", "origin/feat"],
            None,
        );
        commit(&broken, "loose one", "1800000300 +0000");
        commit(&broken, "loose two", "1800000400 +0000");
        let middle = id(&broken, "mine~1").to_string();
        std::fs::remove_file(
            broken
                .join(".git/objects")
                .join(&middle[..2])
                .join(&middle[2..]),
        )
        .unwrap();
        let repo = gix::open(&broken).unwrap();
        let history = History::default();
        let (mine, main) = (id(&broken, "mine"), id(&broken, "origin/main"));
        let err = history.divergence(&repo, mine, main).unwrap_err();
        assert!(err.contains("missing"), "{err}");
        assert_eq!(history.divergence(&repo, mine, main), Err(err));
    }

    #[test]
    fn a_date_gix_cannot_read_orders_nothing_and_fails_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let repo_dir = dir.path();
        git(repo_dir, &["init", "-q", "-b", "main"], None);
        commit(repo_dir, "base", "1700000000 +0000");
        let tree = git(repo_dir, &["rev-parse", "HEAD^{tree}"], None);
        let parent = git(repo_dir, &["rev-parse", "HEAD"], None);
        let raw = format!(
            "tree {tree}\nparent {parent}\nauthor T <t@example.com> garbage\ncommitter T <t@example.com> garbage\n\nodd\n"
        );
        let path = repo_dir.join("odd-commit");
        std::fs::write(&path, raw).unwrap();
        let odd = git(
            repo_dir,
            &[
                "hash-object",
                "-t",
                "commit",
                "-w",
                "--literally",
                path.to_str().unwrap(),
            ],
            None,
        );
        git(repo_dir, &["update-ref", "refs/heads/odd", &odd], None);
        git(repo_dir, &["checkout", "-q", "odd"], None);
        commit(repo_dir, "above", "1700000200 +0000");
        let repo = gix::open(repo_dir).unwrap();
        let history = History::default();
        let counted = history
            .divergence(&repo, id(repo_dir, "odd"), id(repo_dir, "main"))
            .unwrap();
        assert_eq!(counted, git_counts(repo_dir, "odd", "main"));
        let tip = history.tip(&repo, id(repo_dir, "odd~1")).unwrap();
        assert_eq!(
            (tip.time, tip.date),
            (None, None),
            "an unreadable date is unknown"
        );
    }

    /// A stack made by a script or a rebase: every commit in the same second.
    #[test]
    fn same_second_commits_are_counted_as_git_counts_them() {
        let dir = tempfile::tempdir().unwrap();
        let repo_dir = dir.path();
        let when = "1767225600 +0000";
        git(repo_dir, &["init", "-q", "-b", "main"], None);
        commit(repo_dir, "base", when);
        for i in 0..3 {
            commit(repo_dir, &format!("m{i}"), when);
        }
        git(repo_dir, &["checkout", "-q", "-b", "later"], None);
        commit(repo_dir, "l", when);
        let mut names = vec!["later".to_string()];
        for level in 1..=40 {
            let name = format!("s{level:02}");
            git(repo_dir, &["checkout", "-q", "-b", &name], None);
            commit(repo_dir, &name, when);
            names.push(name);
        }
        let repo = gix::open(repo_dir).unwrap();
        let history = History::default();
        let counted = history
            .divergence(&repo, id(repo_dir, "later"), id(repo_dir, "main"))
            .unwrap();
        assert_eq!(
            counted,
            Divergence {
                ahead: 1,
                behind: 0
            }
        );
        for pair in names.windows(2) {
            let (parent, child) = (&pair[0], &pair[1]);
            let counted = history
                .divergence(&repo, id(repo_dir, child), id(repo_dir, parent))
                .unwrap();
            assert_eq!(
                counted,
                git_counts(repo_dir, child, parent),
                "{child}...{parent}"
            );
        }
        let far = history
            .divergence(&repo, id(repo_dir, "s40"), id(repo_dir, "main"))
            .unwrap();
        assert_eq!(far, git_counts(repo_dir, "s40", "main"));

        // One side reaches the common commit long before the other: the common history below
        // it was walked as one-sided and must be made common again, deeper than any slop.
        git(repo_dir, &["checkout", "-q", "main"], None);
        for i in 0..25 {
            commit(repo_dir, &format!("deep{i}"), when);
        }
        git(repo_dir, &["checkout", "-q", "-b", "short"], None);
        commit(repo_dir, "short", when);
        git(repo_dir, &["checkout", "-q", "-b", "long", "main"], None);
        for i in 0..20 {
            commit(repo_dir, &format!("long{i}"), when);
        }
        let counted = History::default()
            .divergence(&repo, id(repo_dir, "short"), id(repo_dir, "long"))
            .unwrap();
        assert_eq!(
            counted,
            Divergence {
                ahead: 1,
                behind: 20
            }
        );
    }

    /// Branches stacked on one parent are counted in one walk, and each count is git's.
    #[test]
    fn a_batch_of_tips_counts_as_git_counts_each_pair() {
        let dir = tempfile::tempdir().unwrap();
        let repo_dir = dir.path();
        git(repo_dir, &["init", "-q", "-b", "main"], None);
        let mut t = 1_700_000_000;
        let mut next = || {
            t += 60;
            format!("{t} +0000")
        };
        commit(repo_dir, "base", &next());
        let mut tips = Vec::new();
        for i in 0..70 {
            // Fork every branch at another point of main, give it 1–3 commits, move main.
            let name = format!("b{i:02}");
            git(repo_dir, &["checkout", "-q", "-b", &name, "main"], None);
            for c in 0..=(i % 3) {
                commit(repo_dir, &format!("{name}-{c}"), &next());
            }
            git(repo_dir, &["checkout", "-q", "main"], None);
            if i % 4 == 0 {
                git(
                    repo_dir,
                    &[
                        "merge",
                        "-q",
                        "--no-ff",
                        "-m",
                        &format!("merge {name}"),
                        &name,
                    ],
                    Some(&next()),
                );
            } else {
                commit(repo_dir, &format!("main-{i}"), &next());
            }
            tips.push(name);
        }
        let repo = gix::open(repo_dir).unwrap();
        let history = History::default();
        let main = id(repo_dir, "main");
        let pairs: Vec<(ObjectId, ObjectId)> =
            tips.iter().map(|t| (id(repo_dir, t), main)).collect();
        history.prefetch(&repo, &pairs);
        assert_eq!(
            history.pairs.lock().unwrap().len(),
            70,
            "every pair counted by the batch walks"
        );
        for name in &tips {
            let counted = history.divergence(&repo, id(repo_dir, name), main).unwrap();
            assert_eq!(counted, git_counts(repo_dir, name, "main"), "{name}");
        }
    }
}
