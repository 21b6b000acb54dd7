//! `get_stack_health` (and `get_branch_tree` with `health: true`) through the built binary,
//! over real repositories built with `git`: ahead/behind checked against `git rev-list`,
//! merged/fresh branches, missing refs, orphans, stale dates, a 200-deep stack with paging,
//! errors, and that nothing is written. GitHub and Jira facts: `health_remote.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // assertions in tests

use crate::support;

use serde_json::{Value, json};
use support::health::*;
use support::*;
use twig_mcp::errors;

// ---------------------------------------------------------------------------------------------
// 1–2. Ahead/behind, needs_rebase and the rebase order
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn diamond_counts_against_each_parent_in_twig_order() {
    // main ← a (one commit); main ← b (two); d from a: one commit, then b merged in (no-ff);
    // then a and b each get one more commit: d is behind both of its parents.
    let fx = new_repo();
    grow(&fx, &[("main", "a"), ("main", "b")]);
    commit(&fx, "b", "b2");
    grow(&fx, &[("a", "d")]);
    fx.git(&["checkout", "-q", "d"]);
    merge_no_ff(&fx, "b");
    commit(&fx, "a", "a2");
    commit(&fx, "b", "b3");
    fx.git(&["checkout", "-q", "main"]);
    // twig's order of d's parents is b, then a (file order, not name order).
    let deps = [("a", "main"), ("b", "main"), ("d", "b"), ("d", "a")];
    write_plain_state(&fx, &["a", "b", "d"], &deps);

    let mcp = fx.start(&[], &[]).await;
    let (data, page) = health(&mcp, json!({})).await;
    assert_eq!(page.total, 4);
    assert_eq!(order(&data), ["main", "a", "b", "d"]);
    assert_counts_match_git(&fx, &data);
    let d = entry(&data, "d");
    assert_eq!(d["parents"], json!(["b", "a"]));
    // Against b: d has a's commit, its own and the merge; b has its newest. Against a: d
    // has its own, the merge and b's first two; a has its newest.
    assert_eq!(git_counts(&fx, "d", "b"), (3, 1));
    assert_eq!(git_counts(&fx, "d", "a"), (4, 1));
    assert_eq!(
        d["against"],
        json!([vs("b", 3, 1, true, false), vs("a", 4, 1, true, false)])
    );
    assert_eq!(
        (&d["needs_rebase"], &d["merged"], &d["prune"]),
        (&json!(true), &json!(false), &json!(false))
    );
    assert_eq!(
        data["rebase_order"],
        json!([{"branch": "d", "onto": ["b", "a"]}])
    );
    assert_eq!(
        entry(&data, "a")["against"],
        json!([vs("main", 2, 0, false, false)])
    );
    assert_eq!(data["summary"]["needs_rebase"], 1);
    assert_eq!(data["summary"]["branches"], 4);
    // Each line's badges count against the branch drawn above it: d in full under b, its
    // repeat under a.
    let tree: Value = mcp
        .call_ok("get_branch_tree", json!({"health": true}))
        .await;
    let text = tree["tree_text"].as_str().unwrap();
    let line = |needle: &str| text.lines().find(|l| l.contains(needle)).unwrap();
    assert!(line("d [also under: a]").ends_with("  ↑3 ↓1"), "{text}");
    assert!(
        line("d [repeat: in full under b]").ends_with("  ↑4 ↓1"),
        "{text}"
    );
    mcp.shutdown().await;
}

/// `d` (parents a, b) is merged into its second parent b but is behind its primary parent a:
/// it still has work a lacks, so it is not merged, not a prune candidate, and it is rebased
/// onto a and b.
#[tokio::test]
async fn merged_into_a_second_parent_only_is_not_merged() {
    let fx = new_repo();
    grow(&fx, &[("main", "a"), ("main", "b"), ("a", "d")]);
    fx.git(&["checkout", "-q", "d"]);
    merge_no_ff(&fx, "b");
    fx.git(&["checkout", "-q", "b"]);
    fx.git(&["merge", "-q", "--ff-only", "d"]);
    commit(&fx, "a", "a2");
    fx.git(&["checkout", "-q", "main"]);
    let deps = [("a", "main"), ("b", "main"), ("d", "a"), ("d", "b")];
    write_plain_state(&fx, &["a", "b", "d"], &deps);

    let mcp = fx.start(&[], &[]).await;
    let (data, _) = health(&mcp, json!({})).await;
    let d = entry(&data, "d");
    assert_eq!(
        d["against"],
        json!([vs("a", 3, 1, true, false), vs("b", 0, 0, false, true)])
    );
    assert_eq!(
        data["rebase_order"],
        json!([{"branch": "d", "onto": ["a", "b"]}])
    );
    assert_eq!(d["merged"], false, "{d}");
    assert_eq!(d["prune"], false, "{d}");
    assert_eq!(data["prune"], json!([]));
    mcp.shutdown().await;
}

/// An idle server drops its commit-graph caches (mcp_common::memory): the health read again
/// after the idle period is the same, pair for pair, and a change made while it was idle shows.
#[tokio::test]
async fn the_answer_after_an_idle_period_is_the_same_without_the_caches() {
    let fx = new_repo();
    grow(&fx, &[("main", "a"), ("main", "b"), ("a", "d")]);
    commit(&fx, "b", "b2");
    commit(&fx, "a", "a2");
    fx.git(&["checkout", "-q", "main"]);
    let deps = [("a", "main"), ("b", "main"), ("d", "a"), ("d", "b")];
    write_plain_state(&fx, &["a", "b", "d"], &deps);

    let mcp = fx.start(&[], &[]).await;
    let (warm, _) = health(&mcp, json!({})).await;
    assert_counts_match_git(&fx, &warm);
    let idle = mcp_common::memory::IDLE * 4;
    tokio::time::sleep(idle).await;
    let (after_idle, _) = health(&mcp, json!({})).await;
    assert_eq!(after_idle, warm);

    commit(&fx, "main", "m2");
    fx.git(&["checkout", "-q", "main"]);
    tokio::time::sleep(idle).await;
    let (moved, _) = health(&mcp, json!({})).await;
    assert_counts_match_git(&fx, &moved);
    assert_eq!(entry(&moved, "a")["against"][0]["behind"], 1, "{moved}");
    mcp.shutdown().await;
}

#[tokio::test]
async fn branch_behind_its_moved_parent_is_rebased_with_its_children() {
    // main ← f1 ← f2 ← f3, f1 ← g; then main gets three commits; `later` is made after.
    let fx = new_repo();
    grow(
        &fx,
        &[("main", "f1"), ("f1", "f2"), ("f2", "f3"), ("f1", "g")],
    );
    for n in 1..=3 {
        commit(&fx, "main", &format!("main moved {n}"));
    }
    grow(&fx, &[("main", "later")]);
    let deps = [
        ("f1", "main"),
        ("f2", "f1"),
        ("f3", "f2"),
        ("g", "f1"),
        ("later", "main"),
    ];
    write_plain_state(&fx, &["f1", "f2", "f3", "g", "later"], &deps);

    let mcp = fx.start(&[], &[]).await;
    let (data, _) = health(&mcp, json!({})).await;
    assert_eq!(order(&data), ["main", "f1", "f2", "f3", "g", "later"]);
    assert_counts_match_git(&fx, &data);
    assert_eq!(git_counts(&fx, "f1", "main"), (1, 3));
    let f1 = entry(&data, "f1");
    assert_eq!(f1["against"], json!([vs("main", 1, 3, true, false)]));
    assert_eq!(f1["needs_rebase"], true);
    // The children are not behind their own parent, but are rebased after it.
    for (child, parent) in [("f2", "f1"), ("f3", "f2"), ("g", "f1")] {
        assert_eq!(
            entry(&data, child)["against"],
            json!([vs(parent, 1, 0, false, false)])
        );
        assert_eq!(entry(&data, child)["needs_rebase"], false, "{child}");
    }
    assert_eq!(
        entry(&data, "later")["against"],
        json!([vs("main", 1, 0, false, false)])
    );
    assert_eq!(
        data["rebase_order"],
        json!([
            {"branch": "f1", "onto": ["main"]},
            {"branch": "f2", "onto": ["f1"]},
            {"branch": "f3", "onto": ["f2"]},
            {"branch": "g", "onto": ["f1"]},
        ])
    );
    assert_eq!(data["summary"]["needs_rebase"], 1);
    assert_eq!(data["prune"], json!([]));

    // The subtree of f2 only: f2 and f3 are not behind, nothing to rebase there.
    let (sub, page) = health(&mcp, json!({"branch": "f2"})).await;
    assert_eq!(page.total, 2);
    assert_eq!(order(&sub), ["f2", "f3"]);
    assert_eq!(sub["scope"], "f2");
    assert_eq!(sub["rebase_order"], json!([]));
    mcp.shutdown().await;
}

// ---------------------------------------------------------------------------------------------
// 3. Merged, fresh, prune candidates (and who is never one)
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn merged_branches_are_prune_candidates_fresh_ones_are_not() {
    let fx = new_repo();
    // ff: two commits, fast-forwarded into main; `late` stacked on ff before that.
    grow(&fx, &[("main", "ff")]);
    commit(&fx, "ff", "ff 2");
    grow(&fx, &[("ff", "late")]);
    fx.git(&["merge", "-q", "--ff-only", "ff"]);
    // develop: a second configured root that depends on main, also fast-forwarded into it.
    grow(&fx, &[("main", "develop")]);
    fx.git(&["merge", "-q", "--ff-only", "develop"]);
    // noff: one commit, merged with a merge commit.
    grow(&fx, &[("main", "noff")]);
    merge_no_ff(&fx, "noff");
    // fresh1 made at main's tip; fresh2 made, then main moved.
    branch_off(&fx, "main", "fresh2");
    commit(&fx, "main", "main moves on");
    branch_off(&fx, "main", "fresh1");
    let names = ["develop", "ff", "fresh1", "fresh2", "late", "noff"];
    let deps = [
        ("develop", "main"),
        ("ff", "main"),
        ("fresh1", "main"),
        ("fresh2", "main"),
        ("late", "ff"),
        ("noff", "main"),
    ];
    let branches = names.iter().map(|n| branch(n, None, None)).collect();
    fx.write_state(&state(
        branches,
        &deps,
        &[("main", true), ("develop", false)],
        json!([]),
    ));

    let mcp = fx.start(&[], &[]).await;
    let (data, _) = health(&mcp, json!({})).await;
    assert_counts_match_git(&fx, &data);
    let against = |name: &str| entry(&data, name)["against"].clone();
    // ff has nothing of its own left; main has develop's commit, noff's, its merge and one more.
    assert_eq!(against("ff"), json!([vs("main", 0, 4, false, true)]));
    assert_eq!(against("noff"), json!([vs("main", 0, 2, false, true)]));
    // No commit of their own, but never moved since created: not merged work.
    assert_eq!(against("fresh1"), json!([vs("main", 0, 0, false, false)]));
    assert_eq!(against("fresh2"), json!([vs("main", 0, 1, true, false)]));
    for (name, merged, prune, needs_rebase) in [
        ("ff", true, true, false),
        ("noff", true, true, false),
        ("fresh1", false, false, false),
        ("fresh2", false, false, true),
        ("develop", true, false, false),
        ("late", false, false, false),
    ] {
        let health = entry(&data, name);
        assert_eq!(health["merged"], merged, "{name} merged");
        assert_eq!(health["prune"], prune, "{name} prune");
        assert_eq!(health["needs_rebase"], needs_rebase, "{name} needs_rebase");
    }
    assert_eq!(
        entry(&data, "develop")["root"],
        true,
        "a root is never a candidate"
    );
    let ff_reason = "merged into main; re-parent its children first (late)";
    assert_eq!(
        data["prune"],
        json!([
            {"branch": "ff", "reason": ff_reason},
            {"branch": "noff", "reason": "merged into main"},
        ])
    );
    assert_eq!(
        data["rebase_order"],
        json!([{"branch": "fresh2", "onto": ["main"]}])
    );
    assert_eq!(data["summary"]["merged"], 3);
    assert_eq!(data["summary"]["needs_rebase"], 1);

    // The checked-out branch is never a prune candidate.
    fx.git(&["checkout", "-q", "noff"]);
    let (data, _) = health(&mcp, json!({})).await;
    assert_eq!(entry(&data, "noff")["merged"], true);
    assert_eq!(entry(&data, "noff")["prune"], false);
    assert_eq!(
        data["prune"],
        json!([{"branch": "ff", "reason": ff_reason}])
    );
    mcp.shutdown().await;
}

// ---------------------------------------------------------------------------------------------
// 4–6. Missing refs, orphans, untracked branches
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn deleted_git_branch_is_missing_and_its_children_count_against_nothing() {
    // main ← gone ← kid; kid2 depends on gone and main; gone's ref is deleted; main moves.
    let fx = new_repo();
    grow(&fx, &[("main", "gone"), ("gone", "kid"), ("gone", "kid2")]);
    commit(&fx, "main", "main moves on");
    fx.git(&["branch", "-q", "-D", "gone"]);
    let deps = [
        ("gone", "main"),
        ("kid", "gone"),
        ("kid2", "gone"),
        ("kid2", "main"),
    ];
    write_plain_state(&fx, &["gone", "kid", "kid2"], &deps);

    let mcp = fx.start(&[], &[]).await;
    let (data, _) = health(&mcp, json!({})).await;
    assert_eq!(order(&data), ["main", "gone", "kid", "kid2"]);
    // No `against`, no age, no date.
    assert_eq!(
        *entry(&data, "gone"),
        json!({
            "branch": "gone", "parents": ["main"], "missing": true, "stale": false,
            "against": [], "needs_rebase": false, "merged": false, "prune": false,
        })
    );
    let mut missing_parent = vs("gone", 0, 0, false, false);
    missing_parent["missing"] = json!(true);
    let kid = entry(&data, "kid");
    assert_eq!(kid["against"], json!([missing_parent]));
    assert_eq!(kid["needs_rebase"], false);
    assert_eq!(
        entry(&data, "kid2")["against"],
        json!([missing_parent, vs("main", 2, 1, true, false)])
    );
    assert_counts_match_git(&fx, &data);
    // Rebased onto the parents git has only.
    assert_eq!(
        data["rebase_order"],
        json!([{"branch": "kid2", "onto": ["main"]}])
    );
    assert_eq!(data["summary"]["missing"], 1);
    assert_eq!(data["summary"]["branches"], 4);
    assert_eq!(data["prune"], json!([]));

    // The subtree of a missing branch can still be asked for.
    let (sub, page) = health(&mcp, json!({"branch": "gone"})).await;
    assert_eq!(page.total, 3);
    assert_eq!(order(&sub), ["gone", "kid", "kid2"]);
    mcp.shutdown().await;
}

/// `kid`'s only parent's git branch was deleted: an orphan in the health as in the tree
/// (`twig tree` draws it under the default root `main`; we mark it); the deleted parent
/// itself is missing, not an orphan.
#[tokio::test]
async fn child_of_a_deleted_branch_is_an_orphan_as_in_the_tree() {
    let fx = new_repo();
    grow(&fx, &[("main", "gone"), ("gone", "kid")]);
    fx.git(&["branch", "-q", "-D", "gone"]);
    write_plain_state(&fx, &["gone", "kid"], &[("gone", "main"), ("kid", "gone")]);
    let mcp = fx.start(&[], &[]).await;
    let tree: Value = mcp.call_ok("get_branch_tree", json!({})).await;
    assert_eq!(tree["orphans"], json!([]));
    assert_eq!(
        tree["branches"][0]["children"],
        json!([{"branch": "kid", "orphan": true, "children": []}])
    );
    let (data, _) = health(&mcp, json!({})).await;
    assert_eq!(entry(&data, "kid")["orphan"], true, "{data:#}");
    assert_eq!(data["summary"]["orphans"], 1);
    mcp.shutdown().await;
}

#[tokio::test]
async fn orphans_are_listed_after_the_roots_stacks() {
    // aaa-lonely has no parent and is no root; it sorts first by name but comes after main's
    // stack, its child after it. x and y depend on each other (a cycle): listed last.
    let fx = new_repo();
    grow(
        &fx,
        &[
            ("main", "feat"),
            ("main", "aaa-lonely"),
            ("aaa-lonely", "lonely-kid"),
        ],
    );
    grow(&fx, &[("main", "x"), ("x", "y")]);
    let deps = [
        ("feat", "main"),
        ("lonely-kid", "aaa-lonely"),
        ("x", "y"),
        ("y", "x"),
    ];
    write_plain_state(&fx, &["aaa-lonely", "feat", "lonely-kid", "x", "y"], &deps);

    let mcp = fx.start(&[], &[]).await;
    let (data, _) = health(&mcp, json!({})).await;
    assert_eq!(
        order(&data),
        ["main", "feat", "aaa-lonely", "lonely-kid", "x", "y"]
    );
    let lonely = entry(&data, "aaa-lonely");
    assert_eq!(lonely["orphan"], true);
    assert_eq!(lonely["parents"], json!([]));
    assert_eq!(lonely["against"], json!([]));
    assert!(lonely.get("root").is_none(), "{lonely}");
    assert!(entry(&data, "lonely-kid").get("orphan").is_none());
    assert_eq!(entry(&data, "main")["root"], true);
    assert!(entry(&data, "main").get("orphan").is_none());
    for name in ["x", "y"] {
        assert!(entry(&data, name).get("orphan").is_none(), "{name}");
    }
    assert_eq!(data["summary"]["orphans"], 1);
    assert_counts_match_git(&fx, &data);
    mcp.shutdown().await;
}

#[tokio::test]
async fn untracked_git_branches_are_listed_apart() {
    let fx = Fixture::repo(&["feat", "scratch", "zz-tmp"]);
    write_plain_state(&fx, &["feat"], &[("feat", "main")]);
    let mcp = fx.start(&[], &[]).await;
    let (data, page) = health(&mcp, json!({})).await;
    assert_eq!(data["untracked"], json!(["scratch", "zz-tmp"]));
    assert_eq!(order(&data), ["main", "feat"]);
    assert_eq!(page.total, 2);
    // Only for the whole repository.
    let (data, _) = health(&mcp, json!({"branch": "main"})).await;
    assert_eq!(data["untracked"], json!([]));
    assert_eq!(order(&data), ["main", "feat"]);
    mcp.shutdown().await;
}

// ---------------------------------------------------------------------------------------------
// 7. Stale branches and the tree's badges
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn stale_by_committer_date_and_badges_in_the_tree() {
    // main's commits are 50 and 45 days old (a root is never stale); `old` has one commit
    // 40 days old; `fresh` two commits of the last hour, made before main's second commit.
    let fx = repo_dated(&days_ago(50));
    grow(&fx, &[("main", "fresh")]);
    commit(&fx, "fresh", "fresh 2");
    commit_dated(&fx, "main", "main 2", Some(&days_ago(45)));
    branch_off(&fx, "main", "old");
    // 40 days ago, in a +02:00 zone.
    let old_at = unix_now() - 40 * DAY;
    commit_dated(&fx, "old", "old work", Some(&format!("@{old_at} +0200")));
    fx.git(&["checkout", "-q", "main"]);
    write_plain_state(
        &fx,
        &["fresh", "old"],
        &[("fresh", "main"), ("old", "main")],
    );

    let mcp = fx.start(&[], &[]).await;
    let (data, _) = health(&mcp, json!({})).await;
    assert_eq!(data["stale_after_days"], 30);
    let old = entry(&data, "old");
    assert_eq!(old["stale"], true);
    assert_eq!(old["age_days"], 40);
    let expected_date = git_dated(&fx, None, &["log", "-1", "--format=%cI", "old"]);
    assert_eq!(old["last_commit_at"], expected_date.as_str());
    assert!(expected_date.ends_with("+02:00"), "{expected_date}");
    let main = entry(&data, "main");
    assert_eq!(main["stale"], false, "a root is never stale");
    assert_eq!(main["age_days"], 45);
    let fresh = entry(&data, "fresh");
    assert_eq!(fresh["stale"], false);
    assert_eq!(fresh["age_days"], 0);
    assert_eq!(data["summary"]["stale"], 1);
    assert_counts_match_git(&fx, &data);

    let (data, _) = health(&mcp, json!({"stale_after_days": 60})).await;
    assert_eq!(data["stale_after_days"], 60);
    assert_eq!(entry(&data, "old")["stale"], false);
    assert_eq!(entry(&data, "old")["age_days"], 40);
    assert_eq!(data["summary"]["stale"], 0);

    let tree: Value = mcp
        .call_ok("get_branch_tree", json!({"health": true}))
        .await;
    assert_eq!(
        tree["tree_text"],
        "main\n├── fresh  ↑2 ↓1\n└── old  ↑1 stale 40d\n"
    );
    // Without `health`, no badges.
    let plain: Value = mcp.call_ok("get_branch_tree", json!({})).await;
    assert_eq!(plain["tree_text"], "main\n├── fresh\n└── old\n");
    mcp.shutdown().await;
}

// ---------------------------------------------------------------------------------------------
// 10. A 200-deep stack and paging
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn deep_stack_pages_through_every_branch_once() {
    let fx = deep_stack(new_repo(), 200, unix_now() - 600, false);
    let mcp = fx.start(&[], &[]).await;
    let expected: Vec<String> = std::iter::once("main".to_string())
        .chain((1..=200).map(|i| format!("b{i:03}")))
        .collect();

    let (first, page) = health(&mcp, json!({"limit": 1000})).await;
    assert_eq!(page.total, 201);
    assert!(page.next_cursor.is_none());
    assert_eq!(order(&first), expected);
    assert_eq!(first["summary"]["branches"], 201);
    assert_eq!(first["summary"]["needs_rebase"], 0);
    for health in &first["branches"].as_array().unwrap()[1..] {
        assert_eq!(health["against"][0]["ahead"], 1, "{}", health["branch"]);
        assert_eq!(health["against"][0]["behind"], 0, "{}", health["branch"]);
        assert_eq!(health["merged"], false, "{}", health["branch"]);
    }
    assert_eq!(git_counts(&fx, "b200", "b199"), (1, 0));
    assert_eq!(git_counts(&fx, "b200", "main"), (200, 0));

    // Default page size is 100.
    let (_, page) = health(&mcp, json!({})).await;
    assert_eq!(page.total, 201);
    assert!(page.next_cursor.is_some());

    // 30 at a time: every branch exactly once, in order.
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let mut args = json!({"limit": 30});
        if let Some(c) = &cursor {
            args["cursor"] = json!(c);
        }
        let (data, page) = health(&mcp, args).await;
        assert_eq!(page.total, 201);
        assert_eq!(
            data["summary"]["branches"], 201,
            "the summary covers every page"
        );
        seen.extend(order(&data));
        pages += 1;
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    assert_eq!(pages, 7);
    assert_eq!(seen, expected);

    let err = health_err(&mcp, json!({"cursor": "not-a-cursor"})).await;
    assert_eq!(err.code, errors::INVALID_PARAMS, "{err:?}");
    // A cursor is bound to its query's arguments (only `limit` may change).
    let (_, page) = health(&mcp, json!({"limit": 30})).await;
    let args = json!({"limit": 50, "cursor": page.next_cursor});
    let (data, _) = health(&mcp, args).await;
    assert_eq!(order(&data), expected[30..80].to_vec());
    let args = json!({"cursor": page.next_cursor, "stale_after_days": 5});
    let err = health_err(&mcp, args).await;
    assert_eq!(err.code, errors::INVALID_PARAMS, "{err:?}");
    let args = json!({"cursor": page.next_cursor, "branch": "b001"});
    let err = health_err(&mcp, args).await;
    assert_eq!(err.code, errors::INVALID_PARAMS, "{err:?}");

    let (sub, page) = health(&mcp, json!({"branch": "b190"})).await;
    assert_eq!(page.total, 11);
    assert_eq!(sub["summary"]["branches"], 11);
    assert_eq!(order(&sub), expected[190..].to_vec());
    assert_eq!(sub["untracked"], json!([]));
    mcp.shutdown().await;
}

/// Commits of the same second — what a script, `git rebase` or `twig cascade` makes — are
/// counted as `git rev-list --left-right --count` counts them (a tie in committer time once
/// let a parent be taken before its child and keep a one-sided mark).
#[tokio::test]
async fn same_second_commits_are_counted_as_git_counts_them() {
    // Every commit, main's too, at 2026-01-01T00:00:00Z: the object ids, hence the
    // failure, are the same on every run.
    let at = 1_767_225_600;
    let fx = deep_stack(repo_dated(&format!("@{at} +0000")), 200, at, true);
    let mcp = fx.start(&[], &[]).await;
    let (data, _) = health(&mcp, json!({"limit": 1000})).await;
    let wrong: Vec<String> = data["branches"].as_array().unwrap()[1..]
        .iter()
        .filter(|h| h["against"][0]["ahead"] != 1 || h["against"][0]["behind"] != 0)
        .map(|h| format!("{} {}", h["branch"], h["against"][0]))
        .collect();
    assert!(wrong.is_empty(), "counted wrong: {wrong:#?}");
    assert_eq!(data["summary"]["needs_rebase"], 0);
    assert_eq!(data["rebase_order"], json!([]));
    assert_counts_match_git(&fx, &data);
    mcp.shutdown().await;
}

// ---------------------------------------------------------------------------------------------
// 11. Errors
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn bad_arguments_and_absent_context_are_errors() {
    let fx = stacked();
    let mcp = fx.start(&[], &[]).await;
    let err = health_err(&mcp, json!({"branch": "nope"})).await;
    assert_eq!(err.code, errors::NOT_FOUND, "{err:?}");
    assert_eq!(err.message, "Branch 'nope' is not tracked by twig");
    assert!(err.hint.contains("list_branches"), "{err:?}");
    assert!(!err.retryable);

    let err = health_err(&mcp, json!({"branch": ""})).await;
    assert_eq!(err.code, errors::INVALID_PARAMS, "{err:?}");
    assert_eq!(err.message, "`branch` must not be empty");

    let err = health_err(&mcp, json!({"stale_after_days": 40000})).await;
    assert_eq!(err.code, errors::INVALID_PARAMS, "{err:?}");
    assert!(err.message.contains("40000"), "{err:?}");

    let err = health_err(&mcp, json!({"limit": 0})).await;
    assert_eq!(err.code, errors::INVALID_PARAMS, "{err:?}");
    mcp.shutdown().await;

    // No state file.
    let bare = Fixture::repo(&["feat"]);
    let mcp = bare.start(&[], &[]).await;
    let err = health_err(&mcp, json!({})).await;
    assert_eq!(err.code, errors::NO_TWIG_STATE, "{err:?}");
    let err = mcp
        .call_err("get_branch_tree", json!({"health": true}))
        .await;
    assert_eq!(err.code, errors::NO_TWIG_STATE, "{err:?}");
    mcp.shutdown().await;

    // Outside any repository.
    let mcp = bare.start_in(&bare.outside(), &[], &[]).await;
    let err = health_err(&mcp, json!({})).await;
    assert_eq!(err.code, errors::NO_REPO, "{err:?}");
    mcp.shutdown().await;
}

// ---------------------------------------------------------------------------------------------
// 12. Read-only
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn health_checks_write_nothing() {
    let fx = new_repo();
    grow(&fx, &[("main", "feat"), ("feat", "merged")]);
    fx.git(&["checkout", "-q", "feat"]);
    fx.git(&["merge", "-q", "--ff-only", "merged"]);
    commit(&fx, "main", "main moves on");
    fx.git(&["branch", "scratch"]);
    write_plain_state(
        &fx,
        &["feat", "merged"],
        &[("feat", "main"), ("merged", "feat")],
    );
    // `git status` refreshes the index: ask it before the snapshot.
    let status_before = fx.git(&["status", "--porcelain"]);
    let refs_before = fx.git(&["for-each-ref"]);
    let git_dir = fx.repo_path().join(".git");
    let before = snapshot(&git_dir);

    let mcp = fx.start(&[], &[]).await;
    let (data, _) = health(&mcp, json!({})).await;
    assert_eq!(entry(&data, "merged")["merged"], true);
    assert_eq!(entry(&data, "feat")["needs_rebase"], true);
    let _ = health(&mcp, json!({"branch": "feat", "limit": 1})).await;
    let _: Value = mcp
        .call_ok("get_branch_tree", json!({"health": true}))
        .await;
    mcp.shutdown().await;

    let after = snapshot(&git_dir);
    assert_eq!(
        before.iter().map(|f| &f.0).collect::<Vec<_>>(),
        after.iter().map(|f| &f.0).collect::<Vec<_>>(),
        "files added or removed under .git"
    );
    for (b, a) in before.iter().zip(&after) {
        assert!(b == a, "{} changed", b.0);
    }
    assert_eq!(fx.git(&["for-each-ref"]), refs_before);
    assert_eq!(fx.git(&["status", "--porcelain"]), status_before);
}

/// A commit missing from the repository (a damaged clone): that pair is not counted and says
/// why; every other branch is answered, and the call succeeds.
#[tokio::test]
async fn a_missing_commit_leaves_one_pair_uncounted_not_the_call_failed() {
    let fx = new_repo();
    grow(&fx, &[("main", "ok"), ("main", "damaged")]);
    commit(&fx, "damaged", "second");
    commit(&fx, "damaged", "third");
    fx.git(&["checkout", "-q", "main"]);
    let middle = fx.git(&["rev-parse", "damaged~1"]);
    std::fs::remove_file(
        fx.repo_path()
            .join(".git/objects")
            .join(&middle[..2])
            .join(&middle[2..]),
    )
    .unwrap();
    write_plain_state(
        &fx,
        &["ok", "damaged"],
        &[("ok", "main"), ("damaged", "main")],
    );
    let mcp = fx.start(&[], &[]).await;
    let (data, _) = health(&mcp, json!({})).await;
    let damaged = &entry(&data, "damaged")["against"][0];
    assert_eq!(
        (&damaged["ahead"], &damaged["behind"]),
        (&json!(0), &json!(0))
    );
    assert_eq!(damaged["needs_rebase"], false);
    assert!(
        damaged["uncounted"].as_str().unwrap().contains("missing"),
        "{damaged}"
    );
    assert_eq!(
        entry(&data, "ok")["against"],
        json!([vs("main", 1, 0, false, false)])
    );
    // A huge branch name is not echoed whole.
    let err = health_err(&mcp, json!({"branch": "x".repeat(100_000)})).await;
    assert_eq!(err.code, errors::NOT_FOUND);
    assert!(err.message.len() < 400, "{}", err.message.len());
    mcp.shutdown().await;
}

/// A branch with more parents than an answer compares (a hand-made state): the first 50 are
/// compared, the answer says it was cut; the tree names 10 of the other parents.
#[tokio::test]
async fn a_branch_with_very_many_parents_is_bounded() {
    let fx = hub_of_60_parents();
    let mcp = fx.start(&[], &[]).await;
    let (data, _) = health(&mcp, json!({"branch": "hub"})).await;
    let hub = entry(&data, "hub");
    assert_eq!(hub["parents"].as_array().unwrap().len(), 50);
    assert_eq!(hub["against"].as_array().unwrap().len(), 50);
    assert_eq!(data["truncated"], true);
    let tree: Value = mcp.call_ok("get_branch_tree", json!({})).await;
    assert_eq!(tree["truncated"], true);
    let text = tree["tree_text"].as_str().unwrap();
    let full = text
        .lines()
        .find(|l| l.contains("hub [also under:"))
        .unwrap();
    assert_eq!(full.matches(", ").count(), 9, "{full}");
    mcp.shutdown().await;
}

/// The `stack-status` prompt badges every branch of its trees, not only the health's first
/// page (100 branches).
#[tokio::test]
async fn stack_status_badges_every_branch_of_a_wide_stack() {
    let fx = new_repo();
    let names: Vec<String> = (0..150).map(|i| format!("w{i:03}")).collect();
    let grown: Vec<(&str, &str)> = names.iter().map(|n| ("main", n.as_str())).collect();
    grow(&fx, &grown);
    let deps: Vec<(&str, &str)> = names.iter().map(|n| (n.as_str(), "main")).collect();
    let tracked: Vec<&str> = names.iter().map(String::as_str).collect();
    write_plain_state(&fx, &tracked, &deps);
    let mcp = fx.start(&[], &[]).await;
    let text = mcp.prompt_text("stack-status", json!({})).await;
    let badged = text
        .lines()
        .filter(|l| l.contains("── w") && l.ends_with("  ↑1"))
        .count();
    assert_eq!(badged, 150, "{text}");
    mcp.shutdown().await;
}
