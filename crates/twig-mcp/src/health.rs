//! The stack's health as git's objects tell it: for every branch twig tracks, ahead/behind
//! against each parent, whether it needs a rebase or is merged, how old its last commit is,
//! whether its git branch exists; for the whole scope, the rebase order (parents first, as
//! `twig cascade` rebases) and what could be pruned. Nothing is fetched or written.
//!
//! - Structure is twig's: a branch's parents are its dependency edges in file order, the
//!   first primary. Roots are the configured roots (when none is configured: the branches
//!   with children and no parent). An orphan is a branch git has that is no root and has no
//!   parent git has. When a root is marked default and git has it, the orphans without a
//!   declared parent are in its stack (its scope, right after its own branches), as `twig
//!   tree` draws them under it; otherwise they come after every root's stack, as `twig tree`
//!   lists them apart. Either way nothing is counted against the default root: no edge
//!   declares it their parent (twig's `flow` counts against it; a guess could claim merged).
//! - `needs_rebase` against a parent: the parent has commits the branch lacks, and the
//!   branch is not merged into it.
//! - `merged` into a parent: the branch has no commit the parent lacks, and it had commits of
//!   its own that the parent now has — a commit its reflog shows it at, that the parent's tip
//!   did not reach then (the parent's reflog), is reachable from the parent's tip now (the
//!   rule and its bounds: [`crate::reflog`]). Ahead 0 alone is no evidence: a branch made with
//!   `twig switch -p` that never had a commit, even after `twig cascade` fast-forwarded it to
//!   its parent's new tip, is not merged; nor is one reset back onto its parent. Without a
//!   reflog (the branch's or the parent's), nothing is claimed merged. The branch is merged
//!   when it is merged into its primary parent.
//! - `empty`: ahead 0 of its primary parent and not merged — nothing of its own to prune.
//! - `stale`: the tip's committer date is more than `stale_after_days` days old (as
//!   `twig git stale-branches`); roots are never stale.
//! - Order: parents before children — the reversed post-order of a depth-first walk from the
//!   roots (by name), then the orphans (those the default root takes, right after it), then
//!   whatever a cycle left out; siblings by name.

use std::collections::{HashMap, HashSet};

use gix::ObjectId;

use crate::{
    git::GitRepo,
    reflog::Reflogs,
    state::{Kids, LoadedState},
    types::{
        BranchHealth, HealthSummary, ParentHealth, PruneCandidate, RebaseStep, SkipReason,
        SkippedStep,
    },
};

/// The most entries `rebase_order`, `prune` and `untracked` list.
pub const MAX_LIST: usize = 500;
/// The most entries `skipped` lists; the rest are counted.
pub const MAX_SKIPPED: usize = 100;
/// The most parents of one branch that are compared (a hand-made state may declare thousands).
pub const MAX_PARENTS: usize = 50;
/// Seconds in a day.
const DAY: i64 = 86_400;

/// The health of a scope, before any remote fact is added.
#[derive(Debug, Clone)]
pub struct HealthReport {
    /// Every branch of the scope, parents before children.
    pub branches: Vec<BranchHealth>,
    pub rebase_order: Vec<RebaseStep>,
    /// Branches left out of `rebase_order` (at most [`MAX_SKIPPED`]), and how many more.
    pub skipped: Vec<SkippedStep>,
    pub skipped_more: u64,
    pub prune: Vec<PruneCandidate>,
    pub untracked: Vec<String>,
    pub truncated: bool,
    pub summary: HealthSummary,
}

/// What the assessment starts from.
pub struct Inputs<'a> {
    pub state: &'a LoadedState,
    /// The checked-out branch (never a prune candidate).
    pub head: Option<&'a str>,
    /// The subtree to assess (its root), or every root.
    pub scope: Option<&'a str>,
    pub stale_after_days: u32,
    /// Seconds since the epoch.
    pub now: i64,
}

/// The branches' structure as twig declares it: children of each branch (the state's index),
/// the configured roots and, for the whole repository, roots and orphans.
struct Structure<'a> {
    state: &'a LoadedState,
    configured: HashSet<&'a str>,
}

impl<'a> Structure<'a> {
    fn of(state: &'a LoadedState) -> Self {
        Self {
            state,
            configured: state.root_names().collect(),
        }
    }

    fn children(&self, branch: &str) -> Kids<'a> {
        self.state.children(branch)
    }

    fn parentless(&self, name: &str) -> bool {
        self.state.parents(name).all(|parent| parent == name)
    }

    /// A configured root, or — when none is configured — a branch with children and no parent.
    fn is_root(&self, name: &str) -> bool {
        if self.configured.is_empty() {
            self.parentless(name) && !self.children(name).is_empty()
        } else {
            self.configured.contains(name)
        }
    }

    /// Every root, by name, and every other branch without a parent (the orphans), by name.
    fn roots_and_orphans(&self) -> (Vec<&'a str>, Vec<&'a str>) {
        let mut roots: Vec<&str> = Vec::new();
        let mut orphans: Vec<&str> = Vec::new();
        if !self.configured.is_empty() {
            roots = self.configured.iter().copied().collect();
            roots.sort_unstable();
        }
        for name in self.state.sorted_branches() {
            if !self.parentless(name) {
                continue;
            }
            if self.is_root(name) {
                if self.configured.is_empty() {
                    roots.push(name);
                }
            } else {
                orphans.push(name);
            }
        }
        (roots, orphans)
    }

    /// The branches reachable from `starts`, parents before children, then those of `rest`
    /// that no start reaches (only a cycle leaves a branch out); see the module documentation.
    fn order(&self, starts: &[&'a str], rest: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
        let mut seen: HashSet<&str> = HashSet::new();
        let mut post: Vec<&str> = Vec::new();
        // Walk the starts last to first: reversing the post-order puts them back first to last.
        for start in starts.iter().rev() {
            self.walk(start, &mut seen, &mut post);
        }
        let mut ordered: Vec<&str> = post.drain(..).rev().collect();
        let rest: Vec<&str> = rest.filter(|name| !seen.contains(name)).collect();
        for start in rest {
            self.walk(start, &mut seen, &mut post);
        }
        ordered.extend(post.into_iter().rev());
        ordered
    }

    /// Depth-first from `start` over branches not yet `seen`, appending the post-order.
    /// Iterative (a 10,000-deep stack must not exhaust the thread's stack); children are taken
    /// in reverse name order so that the reversed post-order lists siblings by name.
    fn walk(&self, start: &'a str, seen: &mut HashSet<&'a str>, post: &mut Vec<&'a str>) {
        if !seen.insert(start) {
            return;
        }
        let mut stack: Vec<(&str, usize)> = vec![(start, 0)];
        while let Some((node, next)) = stack.last_mut() {
            let kids = self.children(node);
            if let Some(child) = kids.len().checked_sub(1 + *next).and_then(|i| kids.get(i)) {
                *next += 1;
                if seen.insert(child) {
                    stack.push((child, 0));
                }
            } else {
                post.push(node);
                stack.pop();
            }
        }
    }
}

/// Assess the scope's health from git's objects. The whole repository reads every branch
/// ref; a subtree only its branches' and their parents'.
pub fn assess<'a>(repo: &GitRepo, inputs: &Inputs<'a>) -> Result<HealthReport, String> {
    let state = inputs.state;
    let structure = Structure::of(state);
    // With a default root git has, `twig tree` draws the orphans git has under it: they are
    // in its stack, right after its own branches (still `orphan`, counted against nothing).
    let adopter = state
        .state
        .root_branches
        .iter()
        .find(|r| r.is_default)
        .map(|r| r.branch.as_str())
        .filter(|root| repo.tip_of(root).is_some());
    let adopted = |orphans: Vec<&'a str>| -> (Vec<&'a str>, Vec<&'a str>) {
        orphans
            .into_iter()
            .partition(|name| adopter.is_some() && repo.tip_of(name).is_some())
    };
    let order: Vec<&str> = match inputs.scope {
        Some(scope) if adopter == Some(scope) => {
            let (orphans, _) = adopted(structure.roots_and_orphans().1);
            let starts: Vec<&str> = std::iter::once(scope).chain(orphans).collect();
            structure.order(&starts, std::iter::empty())
        }
        Some(scope) => structure.order(&[scope], std::iter::empty()),
        None => {
            let (mut starts, orphans) = structure.roots_and_orphans();
            let (orphans, apart) = adopted(orphans);
            let at = adopter
                .and_then(|root| starts.iter().position(|s| *s == root))
                .map_or(starts.len(), |at| at + 1);
            starts.splice(at..at, orphans);
            starts.extend(apart);
            structure.order(&starts, state.sorted_branches())
        }
    };
    let all_tips;
    let tips: HashMap<&str, ObjectId> = match inputs.scope {
        None => {
            all_tips = repo.branch_tips()?;
            all_tips
                .iter()
                .map(|(name, id)| (name.as_str(), *id))
                .collect()
        }
        Some(_) => {
            let mut needed: Vec<&str> = order.clone();
            needed.extend(order.iter().flat_map(|name| state.parents(name)));
            needed.sort_unstable();
            needed.dedup();
            needed
                .into_iter()
                .filter_map(|name| repo.tip_of(name).map(|id| (name, id)))
                .collect()
        }
    };
    let local = repo.local();
    let history = repo.history();
    let stale_after = i64::from(inputs.stale_after_days) * DAY;

    // Every (branch, parent) pair counted in as few walks as possible.
    let pairs: Vec<(ObjectId, ObjectId)> = order
        .iter()
        .filter_map(|name| Some((name, tips.get(name).copied()?)))
        .flat_map(|(name, tip)| {
            state
                .parents(name)
                .take(MAX_PARENTS)
                .filter_map(|parent| tips.get(parent).copied())
                .map(move |parent_tip| (tip, parent_tip))
        })
        .collect();
    history.prefetch(&local, &pairs);
    let mut reflogs = Reflogs::default();
    let mut branches = Vec::with_capacity(order.len());
    let mut many_parents = false;
    for name in &order {
        // A branch is never its own parent (twig refuses such an edge; a hand-edited state
        // may have one).
        let mut parents: Vec<String> = state
            .parents(name)
            .filter(|parent| parent != name)
            .map(str::to_string)
            .collect();
        let more_parents = parents.len().saturating_sub(MAX_PARENTS) as u64;
        if more_parents > 0 {
            parents.truncate(MAX_PARENTS);
            many_parents = true;
        }
        let root = structure.is_root(name);
        let mut health = BranchHealth {
            branch: name.to_string(),
            parents: parents.clone(),
            more_parents,
            root,
            orphan: false,
            missing: false,
            last_commit_at: None,
            age_days: None,
            stale: false,
            against: Vec::new(),
            needs_rebase: false,
            merged: false,
            empty: false,
            prune: false,
            pull_request: None,
            jira_issue: None,
        };
        // A ref that does not point at a readable commit is no usable branch either.
        let facts = tips.get(name).map(|tip| history.tip(&local, *tip));
        let (tip, facts) = match facts {
            Some(Ok(facts)) => (facts.id, facts),
            Some(Err(err)) => {
                tracing::warn!(branch = %name, %err, "branch does not point at a commit");
                health.missing = true;
                branches.push(health);
                continue;
            }
            None => {
                health.missing = true;
                branches.push(health);
                continue;
            }
        };
        if let Some(time) = facts.time {
            let age = inputs.now.saturating_sub(time).max(0);
            health.age_days = Some(u64::try_from(age / DAY).unwrap_or(0));
            health.stale = !root && age > stale_after;
        }
        health.last_commit_at = facts.date;
        for parent in parents {
            let parent_tip = tips
                .get(parent.as_str())
                .copied()
                .filter(|id| history.tip(&local, *id).is_ok());
            let Some(parent_tip) = parent_tip else {
                health.against.push(not_compared(parent, true, None));
                continue;
            };
            let divergence = match history.divergence(&local, tip, parent_tip) {
                Ok(divergence) => divergence,
                Err(why) => {
                    health.against.push(not_compared(parent, false, Some(why)));
                    continue;
                }
            };
            // Ahead 0 is no evidence of merged work (a branch that never had a commit is
            // ahead 0 too): its reflog must show commits of its own now in the parent.
            let merged = divergence.ahead == 0
                && reflogs.merged_into(&local, history, name, &parent, parent_tip);
            health.against.push(ParentHealth {
                parent,
                ahead: divergence.ahead,
                behind: divergence.behind,
                needs_rebase: divergence.behind > 0 && !merged,
                merged,
                missing: false,
                uncounted: None,
            });
        }
        health.needs_rebase = health.against.iter().any(|a| a.needs_rebase);
        // Merged into where it goes: its primary parent (merged into another parent only, it
        // still has work the primary lacks — it is rebased, not pruned).
        health.merged = health.against.first().is_some_and(|a| a.merged);
        // Nothing of its own against its primary parent, and no evidence of merged work.
        health.empty = health
            .against
            .first()
            .is_some_and(|a| !a.missing && a.uncounted.is_none() && a.ahead == 0 && !a.merged);
        // An orphan as `twig tree` draws it: no parent that git has (a branch whose parents
        // were all deleted included).
        health.orphan = !root && health.against.iter().all(|a| a.missing);
        health.prune = health.merged && prunable(&health, inputs.head);
        branches.push(health);
    }

    let mut truncated = many_parents;
    let (rebase_order, skipped, skipped_more) = rebase_order(&branches, &structure, &mut truncated);
    let mut prune = Vec::new();
    for health in branches.iter().filter(|h| h.prune) {
        if let Some(into) = health.against.first().filter(|a| a.merged) {
            let reason = format!("merged into {}", into.parent);
            push_capped(
                &mut prune,
                prune_candidate(&health.branch, reason, &structure),
                &mut truncated,
            );
        }
    }
    let mut untracked = Vec::new();
    if inputs.scope.is_none() {
        let mut names: Vec<&str> = tips.keys().copied().collect();
        names.sort_unstable();
        for name in names {
            if !state.names(name) {
                push_capped(&mut untracked, name.to_string(), &mut truncated);
            }
        }
    }
    let count = |f: fn(&BranchHealth) -> bool| branches.iter().filter(|h| f(h)).count() as u64;
    let summary = HealthSummary {
        branches: branches.len() as u64,
        needs_rebase: count(|h| h.needs_rebase),
        merged: count(|h| h.merged),
        empty: count(|h| h.empty),
        stale: count(|h| h.stale),
        missing: count(|h| h.missing),
        orphans: count(|h| h.orphan),
    };
    Ok(HealthReport {
        branches,
        rebase_order,
        skipped,
        skipped_more,
        prune,
        untracked,
        truncated,
        summary,
    })
}

/// A parent nothing was counted against: it has no git branch (`missing`), or the count
/// failed (`uncounted`).
fn not_compared(parent: String, missing: bool, uncounted: Option<String>) -> ParentHealth {
    ParentHealth {
        parent,
        ahead: 0,
        behind: 0,
        needs_rebase: false,
        merged: false,
        missing,
        uncounted,
    }
}

/// Whether a merged (or done) branch may be suggested for deletion: never a root, the
/// checked-out branch, or a branch git does not have.
pub fn prunable(health: &BranchHealth, head: Option<&str>) -> bool {
    !health.root && !health.missing && head != Some(health.branch.as_str())
}

/// A prune candidate; the reason names children that would lose their parent.
fn prune_candidate(branch: &str, reason: String, structure: &Structure<'_>) -> PruneCandidate {
    let reason = match structure.children(branch) {
        children if !children.is_empty() => {
            let shown: Vec<&str> = children.iter().take(3).collect();
            let more = children.len().saturating_sub(shown.len());
            let tail = if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            };
            format!(
                "{reason}; re-parent its children first ({}{tail})",
                shown.join(", ")
            )
        }
        _ => reason,
    };
    PruneCandidate {
        branch: branch.to_string(),
        reason,
    }
}

/// Prune candidates for remote reasons (a merged pull request, a done Jira issue), as
/// `(branch, reason)`.
pub fn prune_candidates(state: &LoadedState, found: Vec<(String, String)>) -> Vec<PruneCandidate> {
    if found.is_empty() {
        return Vec::new();
    }
    let structure = Structure::of(state);
    found
        .into_iter()
        .map(|(branch, reason)| prune_candidate(&branch, reason, &structure))
        .collect()
}

fn push_capped<T>(list: &mut Vec<T>, item: T, truncated: &mut bool) {
    if list.len() < MAX_LIST {
        list.push(item);
    } else {
        *truncated = true;
    }
}

/// The branches to rebase, parents first: those behind a parent and every branch stacked on
/// them, each onto its parents that exist in git. Left out, and listed in `skipped` (at most
/// [`MAX_SKIPPED`], then counted): of those, a branch git does not have, one without a parent
/// git has, and a merged branch — also a merged one behind its parent alone, which `twig
/// cascade` would rebase too (its plan takes every descendant, then fails on these).
fn rebase_order(
    branches: &[BranchHealth],
    structure: &Structure<'_>,
    truncated: &mut bool,
) -> (Vec<RebaseStep>, Vec<SkippedStep>, u64) {
    let mut affected: HashSet<&str> = HashSet::new();
    let mut pending: Vec<&str> = branches
        .iter()
        .filter(|h| h.needs_rebase)
        .map(|h| h.branch.as_str())
        .collect();
    while let Some(name) = pending.pop() {
        if affected.insert(name) {
            pending.extend(structure.children(name).iter());
        }
    }
    let mut steps = Vec::new();
    let mut skipped = Vec::new();
    let mut skipped_more = 0u64;
    for health in branches {
        let in_order = affected.contains(health.branch.as_str());
        let onto: Vec<String> = health
            .against
            .iter()
            .filter(|a| !a.missing)
            .map(|a| a.parent.clone())
            .collect();
        let skip = if health.missing {
            in_order.then(|| {
                (
                    SkipReason::Missing,
                    "twig tracks it but git has no such branch".to_string(),
                )
            })
        } else if health.merged {
            let behind = health.against.iter().any(|a| a.behind > 0);
            (in_order || behind).then(|| {
                let into = health
                    .against
                    .first()
                    .filter(|a| a.merged)
                    .map_or_else(|| "its pull request".to_string(), |a| a.parent.clone());
                (
                    SkipReason::Merged,
                    format!(
                        "merged into {into}: not rebased (prune it instead; re-parent its children first)"
                    ),
                )
            })
        } else if onto.is_empty() {
            in_order.then(|| {
                (
                    SkipReason::NoParent,
                    "no parent of it has a git branch".to_string(),
                )
            })
        } else {
            None
        };
        if let Some((reason, detail)) = skip {
            if skipped.len() < MAX_SKIPPED {
                skipped.push(SkippedStep {
                    branch: health.branch.clone(),
                    reason,
                    detail,
                });
            } else {
                skipped_more += 1;
            }
            continue;
        }
        if !in_order {
            continue;
        }
        push_capped(
            &mut steps,
            RebaseStep {
                branch: health.branch.clone(),
                onto,
            },
            truncated,
        );
    }
    (steps, skipped, skipped_more)
}

/// Compact badges of a branch for the tree's text: `↑2 ↓1` against the parent it is drawn
/// under (`under`; the primary parent when none is given or that one is not a parent),
/// `stale 40d`, `merged`, `missing`.
pub fn badges(health: &BranchHealth, under: Option<&str>) -> String {
    let mut parts = Vec::new();
    if health.missing {
        parts.push("missing".to_string());
    }
    let parent = under
        .and_then(|under| health.against.iter().find(|a| a.parent == under))
        .or_else(|| health.against.first());
    if let Some(primary) = parent.filter(|a| !a.missing) {
        if primary.ahead > 0 {
            parts.push(format!("↑{}", primary.ahead));
        }
        if primary.behind > 0 {
            parts.push(format!("↓{}", primary.behind));
        }
    }
    if health.merged {
        parts.push("merged".to_string());
    }
    if health.empty {
        parts.push("empty".to_string());
    }
    if health.stale
        && let Some(days) = health.age_days
    {
        parts.push(format!("stale {days}d"));
    }
    parts.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::RepoState;

    fn state(json: &str) -> LoadedState {
        LoadedState::new(serde_json::from_str::<RepoState>(json).unwrap())
    }

    #[test]
    fn order_puts_parents_first_and_siblings_by_name() {
        // main → a → {c, b}; a diamond: d has parents [c, b]; orphan o; cycle x ↔ y.
        let state = state(
            r#"{"dependencies":[{"child":"a","parent":"main"},{"child":"c","parent":"a"},
                {"child":"b","parent":"a"},{"child":"d","parent":"c"},{"child":"d","parent":"b"},
                {"child":"x","parent":"y"},{"child":"y","parent":"x"}],
                "branches":{"o":{"branch":"o","created_at":"x"}},
                "root_branches":[{"branch":"main","is_default":true}]}"#,
        );
        let structure = Structure::of(&state);
        let (roots, orphans) = structure.roots_and_orphans();
        assert_eq!((roots.clone(), orphans.clone()), (vec!["main"], vec!["o"]));
        let mut starts = roots;
        starts.extend(orphans);
        let order = structure.order(&starts, state.sorted_branches());
        assert_eq!(order, ["main", "a", "b", "c", "d", "o", "x", "y"]);
        assert_eq!(
            structure.order(&["c"], std::iter::empty()),
            ["c", "d"],
            "a subtree"
        );
    }

    #[test]
    fn without_configured_roots_parentless_branches_with_children_are_roots() {
        let state = state(
            r#"{"dependencies":[{"child":"a","parent":"main"}],
                "branches":{"lonely":{"branch":"lonely","created_at":"x"}}}"#,
        );
        let structure = Structure::of(&state);
        assert_eq!(
            structure.roots_and_orphans(),
            (vec!["main"], vec!["lonely"])
        );
        assert!(structure.is_root("main") && !structure.is_root("a"));
    }

    #[test]
    fn badges_are_compact() {
        let mut health = BranchHealth {
            branch: "b".into(),
            parents: vec!["main".into()],
            more_parents: 0,
            root: false,
            orphan: false,
            missing: false,
            last_commit_at: None,
            age_days: Some(40),
            stale: true,
            against: vec![ParentHealth {
                parent: "main".into(),
                ahead: 2,
                behind: 1,
                needs_rebase: true,
                merged: false,
                missing: false,
                uncounted: None,
            }],
            needs_rebase: true,
            merged: false,
            empty: false,
            prune: false,
            pull_request: None,
            jira_issue: None,
        };
        assert_eq!(badges(&health, None), "↑2 ↓1 stale 40d");
        health.against.push(ParentHealth {
            parent: "other".into(),
            ahead: 5,
            behind: 0,
            needs_rebase: false,
            merged: false,
            missing: false,
            uncounted: None,
        });
        assert_eq!(
            badges(&health, Some("other")),
            "↑5 stale 40d",
            "against the parent drawn above"
        );
        assert_eq!(badges(&health, Some("main")), "↑2 ↓1 stale 40d");
        health.against.pop();
        health.stale = false;
        health.against[0].ahead = 0;
        health.merged = true;
        assert_eq!(badges(&health, None), "↓1 merged");
        health.merged = false;
        health.empty = true;
        assert_eq!(badges(&health, None), "↓1 empty");
    }
}
