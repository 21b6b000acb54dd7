//! Lists that a hand-made state or a busy repository can make long (issue 40): worktrees come
//! a page at a time like every other list, and a branch's parents are bounded wherever they
//! are listed, with a count of the rest.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // assertions in tests

use crate::support;

use serde_json::{Value, json};
use support::health::*;
use support::*;

#[tokio::test]
async fn worktrees_come_a_page_at_a_time() {
    let fx = Fixture::repo(&["feat/a"]);
    let by_hand = fx.path().join("wt-by-hand");
    fx.git(&[
        "worktree",
        "add",
        "-q",
        "-b",
        "by-hand",
        by_hand.to_str().unwrap(),
    ]);
    let records: Vec<Value> = (0..4)
        .map(|i| {
            json!({"name": format!("gone{i}"), "path": format!("/nowhere/gone{i}"),
                        "branch": "feat/a", "created_at": "2026-03-01T10:00:00+00:00"})
        })
        .collect();
    fx.write_state(&state(vec![], &[], &[("main", true)], json!(records)));
    let mcp = fx.start(&[], &[]).await;
    let (all, page) = mcp.call_paged::<Value>("get_worktrees", json!({})).await;
    assert_eq!(page.total, 5);
    assert!(page.next_cursor.is_none());
    let names = |data: &Value| -> Vec<String> {
        data["worktrees"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(
        names(&all),
        ["gone0", "gone1", "gone2", "gone3", "wt-by-hand"],
        "twig's records in the state's order, then git's other worktrees"
    );
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut args = json!({"limit": 2});
        if let Some(cursor) = &cursor {
            args["cursor"] = json!(cursor);
        }
        let (data, page) = mcp.call_paged::<Value>("get_worktrees", args).await;
        assert!(names(&data).len() <= 2);
        seen.extend(names(&data));
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    assert_eq!(seen, names(&all));
    let err = mcp
        .call_err("get_worktrees", json!({"cursor": "made-up"}))
        .await;
    assert_eq!(err.code, twig_mcp::errors::INVALID_PARAMS, "{err:?}");
    let err = mcp.call_err("get_worktrees", json!({"limit": 0})).await;
    assert_eq!(err.code, twig_mcp::errors::INVALID_PARAMS, "{err:?}");
    mcp.shutdown().await;
}

/// A hand-made state declares 60 parents of `hub`: every answer lists 50 (the tree's repeat
/// marker 10) and counts the rest.
#[tokio::test]
async fn a_branchs_parents_are_bounded_wherever_they_are_listed() {
    let fx = hub_of_60_parents();
    let mcp = fx.start(&[], &[]).await;
    let check = |meta: &Value| {
        assert_eq!(meta["parents"].as_array().unwrap().len(), 50, "{meta}");
        assert_eq!(meta["parents"][0], "p00");
        assert_eq!(meta["parents"][49], "p49");
        assert_eq!(meta["more_parents"], 10, "{meta}");
        assert_eq!(meta["parent_branch"], "p00");
    };
    let meta: Value = mcp
        .call_ok("get_branch_metadata", json!({"branch": "hub"}))
        .await;
    check(&meta);
    let (list, _) = mcp
        .call_paged::<Value>("list_branches", json!({"limit": 1000}))
        .await;
    let hub = list["branches"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["branch"] == "hub")
        .unwrap();
    check(hub);
    let p00 = list["branches"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["branch"] == "p00")
        .unwrap();
    assert!(p00.get("more_parents").is_none(), "{p00}");
    let stack: Value = mcp
        .call_ok("get_branch_stack", json!({"branch": "hub"}))
        .await;
    check(&stack["stack"][0]);
    let (data, _) = health(&mcp, json!({"branch": "hub"})).await;
    let health = entry(&data, "hub");
    assert_eq!(health["parents"].as_array().unwrap().len(), 50);
    assert_eq!(health["more_parents"], 10);
    let tree: Value = mcp.call_ok("get_branch_tree", json!({})).await;
    let full = find_node(&tree["branches"][0], "hub").unwrap();
    assert_eq!(full["also_under"].as_array().unwrap().len(), 10);
    assert_eq!(full["also_under_more"], 49);
    mcp.shutdown().await;
}

/// The node of `branch` shown in full (not a repeat) under `node`.
fn find_node<'a>(node: &'a Value, branch: &str) -> Option<&'a Value> {
    if node["branch"] == branch && node.get("repeat").is_none() {
        return Some(node);
    }
    node["children"]
        .as_array()?
        .iter()
        .find_map(|child| find_node(child, branch))
}
