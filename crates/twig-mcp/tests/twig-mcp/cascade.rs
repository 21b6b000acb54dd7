//! `merged` and `empty` after the ref moves of twig's own commands (issue 40): a stack made as
//! `twig switch -p` makes it (a branch at its parent's tip, the state as twig writes it, no
//! `branches` entry), `twig cascade` reproduced with the git commands twig 0.7.1 runs (for
//! each branch in its plan: `git checkout <branch>`, then `git rebase <parent>`), and branches
//! merged for real. Every git operation before the cascade has its own date (reflog entries
//! are dated like commits, by `GIT_COMMITTER_DATE`); the cascade runs at the wall clock's
//! pace, as twig runs it: every step in the same second.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // assertions in tests

use crate::support;

use serde_json::{Value, json};
use support::health::*;
use support::*;

/// Dates ten seconds apart, starting two hours ago, for the operations before a cascade.
struct Clock(i64);

impl Clock {
    fn new() -> Self {
        Self(unix_now() - 7200)
    }

    /// `git` with the next date.
    fn git(&mut self, fx: &Fixture, args: &[&str]) -> String {
        self.0 += 10;
        git_dated(fx, Some(&format!("@{} +0000", self.0)), args)
    }

    /// Check out `branch` and commit a new file on it.
    fn commit(&mut self, fx: &Fixture, branch: &str, message: &str) {
        fx.git(&["checkout", "-q", branch]);
        let file = format!("{}.txt", message.replace(['/', ' '], "-"));
        std::fs::write(fx.repo_path().join(&file), format!("{message}\n")).unwrap();
        fx.git(&["add", &file]);
        self.git(fx, &["commit", "-q", "-m", message]);
    }

    /// `twig switch -p <parent> <branch>` without a commit: the branch at the parent's tip.
    fn branch(&mut self, fx: &Fixture, parent: &str, branch: &str) {
        self.git(fx, &["branch", branch, parent]);
    }
}

/// A repository whose first commit is dated by `clock`.
fn dated_repo(clock: &mut Clock) -> Fixture {
    clock.0 += 10;
    repo_dated(&format!("@{} +0000", clock.0))
}

/// The state `twig switch -p` and `twig branch root add main --default` write: dependencies
/// and the default root, no `branches` entry (nothing linked).
fn write_twig_state(fx: &Fixture, deps: &[(&str, &str)]) {
    fx.write_state(&state(Vec::new(), deps, &[("main", true)], json!([])));
}

/// `twig cascade` from the checked-out branch, as twig 0.7.1 runs it: for each branch of its
/// plan (parents first), `git checkout <branch>` then `git rebase <parent>`; then back to
/// where it started. At the wall clock's pace.
fn cascade(fx: &Fixture, plan: &[(&str, &str)]) {
    let start = fx.git(&["rev-parse", "--abbrev-ref", "HEAD"]);
    for (branch, parent) in plan {
        fx.git(&["checkout", "-q", branch]);
        fx.git(&["rebase", parent]);
    }
    fx.git(&["checkout", "-q", &start]);
}

fn prune_names(data: &Value) -> Vec<String> {
    data["prune"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["branch"].as_str().unwrap().to_string())
        .collect()
}

/// Each of `names` is empty — nothing ahead of its parent, not merged, not pruned.
fn assert_empty(data: &Value, names: &[&str]) {
    for name in names {
        let branch = entry(data, name);
        assert_eq!(
            (&branch["merged"], &branch["empty"], &branch["prune"]),
            (&json!(false), &json!(true), &json!(false)),
            "{name}: {branch}"
        );
        assert_eq!(branch["against"][0]["ahead"], 0, "{name}: {branch}");
    }
}

/// The bug of issue 40: after `twig cascade`, a branch that never had a commit of its own —
/// fast-forwarded to its parent's new tip — was "merged into main" and a prune candidate.
#[tokio::test]
async fn a_branch_cascade_fast_forwarded_is_empty_not_merged() {
    let mut clock = Clock::new();
    let fx = dated_repo(&mut clock);
    // main ← feat/a (one commit) ← feat/a-empty (none); main ← feat/empty (none).
    clock.branch(&fx, "main", "feat/a");
    clock.commit(&fx, "feat/a", "a work");
    clock.branch(&fx, "feat/a", "feat/a-empty");
    clock.branch(&fx, "main", "feat/empty");
    // main moves on.
    clock.commit(&fx, "main", "main moves on");
    let deps = [
        ("feat/a", "main"),
        ("feat/a-empty", "feat/a"),
        ("feat/empty", "main"),
    ];
    write_twig_state(&fx, &deps);
    // `twig cascade` on main: twig's plan for these edges is feat/empty, feat/a, feat/a-empty.
    fx.git(&["checkout", "-q", "main"]);
    cascade(
        &fx,
        &[
            ("feat/empty", "main"),
            ("feat/a", "main"),
            ("feat/a-empty", "feat/a"),
        ],
    );
    assert_eq!(
        fx.git(&["rev-parse", "feat/empty"]),
        fx.git(&["rev-parse", "main"]),
        "cascade fast-forwarded feat/empty to main"
    );

    let mcp = fx.start(&[], &[]).await;
    let (data, _) = health(&mcp, json!({})).await;
    assert_counts_match_git(&fx, &data);
    assert_empty(&data, &["feat/empty", "feat/a-empty"]);
    for name in ["feat/empty", "feat/a-empty"] {
        let branch = entry(&data, name);
        assert_eq!(branch["against"][0]["merged"], false, "{name}: {branch}");
    }
    let a = entry(&data, "feat/a");
    assert_eq!((&a["merged"], a.get("empty")), (&json!(false), None), "{a}");
    assert_eq!(prune_names(&data), Vec::<String>::new());
    assert_eq!(data["summary"]["merged"], 0);
    assert_eq!(data["summary"]["empty"], 2);
    assert_eq!(data["rebase_order"], json!([]));
    // The tree's badges say so too.
    let tree: Value = mcp
        .call_ok("get_branch_tree", json!({"health": true}))
        .await;
    let text = tree["tree_text"].as_str().unwrap();
    assert!(text.contains("└── feat/empty  empty\n"), "{text}");
    assert!(text.contains("└── feat/a-empty  empty\n"), "{text}");
    assert!(!text.contains("merged"), "{text}");
    mcp.shutdown().await;
}

/// The same stack made and cascaded by a script, every step at the wall clock's pace (most
/// in one second, as reflog dates count): ties count against, so still empty, not merged.
#[tokio::test]
async fn a_stack_scripted_within_a_second_is_not_taken_for_merged() {
    let fx = Fixture::repo(&[]);
    let commit = |branch: &str, name: &str| {
        fx.git(&["checkout", "-q", branch]);
        std::fs::write(fx.repo_path().join(name), "x\n").unwrap();
        fx.git(&["add", name]);
        fx.git(&["commit", "-q", "-m", name]);
    };
    fx.git(&["branch", "feat/a", "main"]);
    commit("feat/a", "a.txt");
    fx.git(&["branch", "feat/a-empty", "feat/a"]);
    fx.git(&["branch", "feat/empty", "main"]);
    commit("main", "main.txt");
    write_twig_state(
        &fx,
        &[
            ("feat/a", "main"),
            ("feat/a-empty", "feat/a"),
            ("feat/empty", "main"),
        ],
    );
    fx.git(&["checkout", "-q", "main"]);
    cascade(
        &fx,
        &[
            ("feat/empty", "main"),
            ("feat/a", "main"),
            ("feat/a-empty", "feat/a"),
        ],
    );
    let mcp = fx.start(&[], &[]).await;
    let (data, _) = health(&mcp, json!({})).await;
    assert_empty(&data, &["feat/empty", "feat/a-empty"]);
    assert_eq!(data["prune"], json!([]));
    mcp.shutdown().await;
}

/// Branches with work of their own, merged into main by a fast-forward, by a merge commit,
/// and merged then cascaded (fast-forwarded past the merge): merged and pruned. A branch
/// whose commit was abandoned (reset onto main's new tip) is not merged: empty, kept.
/// Without reflogs nothing is claimed merged.
#[tokio::test]
async fn branches_with_merged_work_are_merged_abandoned_work_is_not() {
    let mut clock = Clock::new();
    let fx = dated_repo(&mut clock);
    for name in ["ff", "noff", "casc", "abandoned"] {
        clock.branch(&fx, "main", name);
        clock.commit(&fx, name, &format!("{name} work"));
    }
    fx.git(&["checkout", "-q", "main"]);
    clock.git(&fx, &["merge", "-q", "--ff-only", "ff"]);
    clock.git(&fx, &["merge", "-q", "--no-ff", "-m", "merge noff", "noff"]);
    clock.git(&fx, &["merge", "-q", "--no-ff", "-m", "merge casc", "casc"]);
    clock.commit(&fx, "main", "main moves on");
    // abandoned: its commit dropped, the branch reset onto main's new tip.
    fx.git(&["checkout", "-q", "abandoned"]);
    clock.git(&fx, &["reset", "-q", "--hard", "main"]);
    fx.git(&["checkout", "-q", "main"]);
    write_twig_state(
        &fx,
        &[
            ("abandoned", "main"),
            ("casc", "main"),
            ("ff", "main"),
            ("noff", "main"),
        ],
    );
    // `twig cascade` on main: casc (behind main) is fast-forwarded past its merge.
    cascade(&fx, &[("casc", "main")]);
    assert_eq!(
        fx.git(&["rev-parse", "casc"]),
        fx.git(&["rev-parse", "main"])
    );

    let mcp = fx.start(&[], &[]).await;
    let (data, _) = health(&mcp, json!({})).await;
    assert_counts_match_git(&fx, &data);
    for name in ["ff", "noff", "casc"] {
        let branch = entry(&data, name);
        assert_eq!(branch["merged"], true, "{name}: {branch}");
        assert_eq!(branch["prune"], true, "{name}: {branch}");
        assert!(branch.get("empty").is_none(), "{name}: {branch}");
    }
    let abandoned = entry(&data, "abandoned");
    assert_eq!(
        abandoned["against"],
        json!([vs("main", 0, 0, false, false)])
    );
    assert_eq!(abandoned["merged"], false, "{abandoned}");
    assert_eq!(abandoned["empty"], true, "{abandoned}");
    assert_eq!(abandoned["prune"], false, "{abandoned}");
    assert_eq!(prune_names(&data), ["casc", "ff", "noff"]);
    assert_eq!(data["summary"]["merged"], 3);
    assert_eq!(data["summary"]["empty"], 1);
    mcp.shutdown().await;

    // Without the branch's reflog (or the parent's), there is no evidence: not merged.
    std::fs::remove_file(fx.repo_path().join(".git/logs/refs/heads/ff")).unwrap();
    std::fs::remove_file(fx.repo_path().join(".git/logs/refs/heads/main")).unwrap();
    let mcp = fx.start(&[], &[]).await;
    let (data, _) = health(&mcp, json!({})).await;
    assert_empty(&data, &["ff", "noff", "casc"]);
    assert_eq!(prune_names(&data), Vec::<String>::new());
    mcp.shutdown().await;
}

/// Where a branch starts is not work of its own: a branch made from a commit its parent did
/// not have yet (a branch of `main` made from `origin/main` while `main` is behind; a branch
/// made on a parent branch and re-parented onto `main` after that parent merged) is empty when
/// the parent catches up. And a parent whose reflog does not end at its tip (a move nobody
/// logged) gives no evidence.
#[tokio::test]
async fn where_a_branch_starts_is_not_its_own_work() {
    let mut clock = Clock::new();
    let fx = dated_repo(&mut clock);
    // `upstream` stands for origin/main: main is one commit behind it.
    clock.branch(&fx, "main", "upstream");
    clock.commit(&fx, "upstream", "upstream work");
    clock.branch(&fx, "upstream", "from-upstream");
    // A stack: `base` with work, `next` made on it and never committed to.
    clock.branch(&fx, "main", "base");
    clock.commit(&fx, "base", "base work");
    clock.branch(&fx, "base", "next");
    // main catches up with upstream, then takes base (its PR merged).
    fx.git(&["checkout", "-q", "main"]);
    clock.git(&fx, &["merge", "-q", "--ff-only", "upstream"]);
    clock.git(&fx, &["merge", "-q", "--no-ff", "-m", "merge base", "base"]);
    // next re-parented onto main after base merged; from-upstream was main's all along.
    write_twig_state(
        &fx,
        &[
            ("base", "main"),
            ("from-upstream", "main"),
            ("next", "main"),
        ],
    );
    let mcp = fx.start(&[], &[]).await;
    let (data, _) = health(&mcp, json!({})).await;
    assert_counts_match_git(&fx, &data);
    assert_empty(&data, &["from-upstream", "next"]);
    assert_eq!(entry(&data, "base")["merged"], true);
    assert_eq!(prune_names(&data), ["base"]);
    mcp.shutdown().await;

    // main moved by a tool that writes no reflog: its past tips are unknown, nothing merged.
    clock.commit(&fx, "main", "main moves on");
    let tip = fx.git(&["rev-parse", "HEAD"]);
    clock.git(&fx, &["checkout", "-q", "--detach"]);
    let after = {
        std::fs::write(fx.repo_path().join("unlogged.txt"), "x\n").unwrap();
        fx.git(&["add", "unlogged.txt"]);
        clock.git(&fx, &["commit", "-q", "-m", "unlogged"]);
        fx.git(&["rev-parse", "HEAD"])
    };
    assert_ne!(tip, after);
    std::fs::write(
        fx.repo_path().join(".git/refs/heads/main"),
        format!("{}\n", after.trim()),
    )
    .unwrap();
    fx.git(&["checkout", "-q", "main"]);
    let mcp = fx.start(&[], &[]).await;
    let (data, _) = health(&mcp, json!({})).await;
    let base = entry(&data, "base");
    assert_eq!(base["merged"], false, "{base}");
    assert_eq!(prune_names(&data), Vec::<String>::new());
    mcp.shutdown().await;
}

/// `twig cascade --preview` plans every descendant, merged and deleted branches included,
/// then fails on them; `rebase_order` leaves them out and says so in `skipped`.
#[tokio::test]
async fn rebase_order_names_what_it_leaves_out_of_cascades_plan() {
    let mut clock = Clock::new();
    let fx = dated_repo(&mut clock);
    // main ← a ← b (merged into a); a ← gone (git branch deleted) ← kid; main ← m (merged
    // into main with a merge commit); then main moves on: a needs a rebase.
    clock.branch(&fx, "main", "a");
    clock.commit(&fx, "a", "a work");
    for (parent, name) in [("a", "b"), ("a", "gone"), ("gone", "kid"), ("main", "m")] {
        clock.branch(&fx, parent, name);
        clock.commit(&fx, name, &format!("{name} work"));
    }
    fx.git(&["checkout", "-q", "a"]);
    clock.git(&fx, &["merge", "-q", "--ff-only", "b"]);
    fx.git(&["checkout", "-q", "main"]);
    clock.git(&fx, &["merge", "-q", "--no-ff", "-m", "merge m", "m"]);
    clock.commit(&fx, "main", "main moves on");
    fx.git(&["branch", "-q", "-D", "gone"]);
    let mut deps = vec![
        ("a", "main"),
        ("b", "a"),
        ("gone", "a"),
        ("kid", "gone"),
        ("m", "main"),
    ];
    // Many more branches twig tracks under a that git does not have: the list is bounded.
    let lost: Vec<String> = (0..105).map(|i| format!("lost{i:03}")).collect();
    deps.extend(lost.iter().map(|name| (name.as_str(), "a")));
    write_twig_state(&fx, &deps);

    let mcp = fx.start(&[], &[]).await;
    let (data, _) = health(&mcp, json!({"limit": 1000})).await;
    assert_eq!(
        data["rebase_order"],
        json!([{"branch": "a", "onto": ["main"]}])
    );
    let skipped = data["skipped"].as_array().unwrap();
    assert_eq!(skipped.len(), 100);
    assert_eq!(
        data["skipped_more"], 9,
        "b, gone, kid, m and 105 lost: 109, 100 listed"
    );
    let reason = |name: &str| {
        skipped
            .iter()
            .find(|s| s["branch"] == name)
            .map(|s| (s["reason"].clone(), s["detail"].clone()))
    };
    let (why, detail) = reason("b").unwrap();
    assert_eq!(why, "merged");
    assert!(
        detail.as_str().unwrap().starts_with("merged into a:"),
        "{detail}"
    );
    assert_eq!(reason("gone").unwrap().0, "missing");
    assert_eq!(reason("kid").unwrap().0, "no_parent");
    assert_eq!(entry(&data, "m")["merged"], true);
    assert_eq!(entry(&data, "b")["merged"], true);
    // In the order of the branches (parents first): b, gone, kid, then lost000…
    let names: Vec<&str> = skipped
        .iter()
        .map(|s| s["branch"].as_str().unwrap())
        .collect();
    assert_eq!(names[..4], ["b", "gone", "kid", "lost000"]);
    assert!(
        reason("m").is_none(),
        "m comes after the 100 listed: counted"
    );
    mcp.shutdown().await;

    // Without the lost branches, m (merged into main, behind it alone) is listed too.
    write_twig_state(&fx, &deps[..5]);
    let mcp = fx.start(&[], &[]).await;
    let (data, _) = health(&mcp, json!({})).await;
    let names: Vec<&str> = data["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["branch"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["b", "gone", "kid", "m"]);
    assert_eq!(data["skipped_more"], 0);
    assert_eq!(data["skipped"][3]["reason"], "merged");
    // The stack-status prompt says so too.
    let text = mcp.prompt_text("stack-status", json!({})).await;
    assert!(
        text.contains("Left out of the rebase order (`twig cascade` would try them):\n- b: merged into a: not rebased"),
        "{text}"
    );
    assert!(
        text.contains("- gone: twig tracks it but git has no such branch\n"),
        "{text}"
    );
    mcp.shutdown().await;
}
