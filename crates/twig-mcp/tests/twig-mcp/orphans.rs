//! Orphans — branches with no parent git has that are no root — and the default root (issue
//! 40): `twig branch root add main --default` makes `twig tree` draw them under main (twig
//! 0.7.1's resolver attaches them to the default root); without a default root it lists them
//! apart. The tree and the health follow it; the tree marks them `[orphan]`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // assertions in tests

use crate::support;

use serde_json::{Value, json};
use support::health::*;
use support::*;

const NOTE: &str = "[orphan]: no parent git has; drawn under the default root main as `twig tree` draws it, not a dependency\n";

/// main ← feat (one commit); develop (a root, one commit); lonely (linked to a Jira issue,
/// no dependency) ← lonely-kid; scratch (a git branch twig does not track).
fn repo_with_orphans(roots: &[(&str, bool)]) -> Fixture {
    let fx = new_repo();
    grow(
        &fx,
        &[
            ("main", "feat"),
            ("main", "develop"),
            ("main", "lonely"),
            ("lonely", "lonely-kid"),
            ("main", "scratch"),
        ],
    );
    fx.write_state(&state(
        vec![branch("lonely", Some("PROJ-5"), None)],
        &[("feat", "main"), ("lonely-kid", "lonely")],
        roots,
        json!([]),
    ));
    fx
}

#[tokio::test]
async fn with_a_default_root_orphans_are_drawn_under_it_marked() {
    // develop is configured first, main is the default: the tree drawn is main's.
    let fx = repo_with_orphans(&[("develop", false), ("main", true)]);
    let mcp = fx.start(&[], &[]).await;
    let tree: Value = mcp.call_ok("get_branch_tree", json!({})).await;
    assert_eq!(tree["root"], "main");
    assert_eq!(
        tree["tree_text"],
        format!(
            "main\n├── feat\n├── lonely (PROJ-5) [orphan]\n│   └── lonely-kid\n└── scratch [orphan]\n\n{NOTE}"
        )
    );
    assert_eq!(tree["orphans"], json!([]));
    let kids = tree["branches"][0]["children"].as_array().unwrap();
    let marked: Vec<(&str, bool)> = kids
        .iter()
        .map(|k| (k["branch"].as_str().unwrap(), k.get("orphan").is_some()))
        .collect();
    assert_eq!(
        marked,
        [("feat", false), ("lonely", true), ("scratch", true)]
    );
    // Asked by name, the default root's tree has them too; another root's has not.
    let named: Value = mcp
        .call_ok("get_branch_tree", json!({"branch": "main"}))
        .await;
    assert_eq!(named["tree_text"], tree["tree_text"]);
    let develop: Value = mcp
        .call_ok("get_branch_tree", json!({"branch": "develop"}))
        .await;
    assert_eq!(develop["tree_text"], "develop\n");

    // The health: lonely is in main's stack (right after main's own branches), still an
    // orphan, counted against nothing; main's scope has it, develop's has not.
    let (data, _) = health(&mcp, json!({})).await;
    assert_eq!(
        order(&data),
        ["develop", "main", "feat", "lonely", "lonely-kid"]
    );
    let lonely = entry(&data, "lonely");
    assert_eq!(lonely["orphan"], true);
    assert_eq!(lonely["against"], json!([]));
    assert_eq!(lonely["merged"], false);
    assert_eq!(data["untracked"], json!(["scratch"]));
    let (main, _) = health(&mcp, json!({"branch": "main"})).await;
    assert_eq!(order(&main), ["main", "feat", "lonely", "lonely-kid"]);
    let (develop, _) = health(&mcp, json!({"branch": "develop"})).await;
    assert_eq!(order(&develop), ["develop"]);
    mcp.shutdown().await;
}

#[tokio::test]
async fn without_a_default_root_orphans_are_listed_apart() {
    // A root that is not the default, or a default root git does not have: as `twig tree`,
    // the orphans are listed apart.
    for roots in [
        vec![("main", false)],
        vec![("trunk", true), ("main", false)],
    ] {
        let fx = repo_with_orphans(&roots);
        let mcp = fx.start(&[], &[]).await;
        let tree: Value = mcp.call_ok("get_branch_tree", json!({})).await;
        assert_eq!(tree["root"], "main", "{roots:?}");
        assert_eq!(
            tree["tree_text"],
            "main\n└── feat\n\nOrphaned branches (no dependencies defined):\n  • develop\n  • lonely (PROJ-5)\n  • scratch\n",
            "{roots:?}"
        );
        assert_eq!(tree["orphans"], json!(["develop", "lonely", "scratch"]));
        let (data, _) = health(&mcp, json!({})).await;
        let tail: Vec<String> = order(&data).into_iter().rev().take(2).collect();
        assert_eq!(
            tail,
            ["lonely-kid", "lonely"],
            "{roots:?}: after the stacks"
        );
        let (main, _) = health(&mcp, json!({"branch": "main"})).await;
        assert_eq!(order(&main), ["main", "feat"]);
        mcp.shutdown().await;
    }
}
