//! The local state tools through the built binary, including every degraded context.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // assertions in tests

mod support;

use mcp_common::ErrorCode;
use serde_json::{Value, json};
use support::*;

#[tokio::test]
async fn current_branch_with_metadata_and_omitted_fields() {
    let fx = stacked();
    fx.git(&["checkout", "-q", "feat/auth-ui"]);
    let mcp = fx.start(&[], &[]).await;
    let data: Value = mcp.call_ok("get_current_branch", json!({})).await;
    assert_eq!(
        data,
        json!({
            "branch": "feat/auth-ui",
            "jira_issue": "PROJ-102",
            "parent_branch": "feat/auth",
            "created_at": "2026-03-01T10:00:00.123456789+00:00",
        }),
        "pr_number has no value and must be omitted"
    );

    // Switching branches mid-session is seen on the next call.
    fx.git(&["checkout", "-q", "main"]);
    let data: Value = mcp.call_ok("get_current_branch", json!({})).await;
    assert_eq!(data, json!({"branch": "main"}));
    mcp.shutdown().await;
}

#[tokio::test]
async fn current_branch_detached_head_is_not_found() {
    let fx = stacked();
    let head = fx.git(&["rev-parse", "HEAD"]);
    fx.git(&["checkout", "-q", &head]);
    let mcp = fx.start(&[], &[]).await;
    let err = mcp.call_err("get_current_branch", json!({})).await;
    assert_eq!(err.code, ErrorCode::NotFound);
    assert_eq!(err.message, "Not on any branch (detached HEAD state)");
    assert!(err.hint.is_some());
}

#[tokio::test]
async fn current_branch_degrades_without_twig_state() {
    let fx = Fixture::repo(&["feature"]);
    fx.git(&["checkout", "-q", "feature"]);
    let mcp = fx.start(&[], &[]).await;
    let data: Value = mcp.call_ok("get_current_branch", json!({})).await;
    assert_eq!(data, json!({"branch": "feature"}));
}

#[tokio::test]
async fn branch_metadata_found_and_not_found() {
    let fx = stacked();
    let mcp = fx.start(&[], &[]).await;
    let data: Value = mcp
        .call_ok("get_branch_metadata", json!({"branch": "feat/auth"}))
        .await;
    assert_eq!(
        data,
        json!({
            "branch": "feat/auth",
            "jira_issue": "PROJ-101",
            "pr_number": 42,
            "parent_branch": "main",
            "created_at": "2026-03-01T10:00:00.123456789+00:00",
        })
    );
    let err = mcp
        .call_err("get_branch_metadata", json!({"branch": "nope"}))
        .await;
    assert_eq!(err.code, ErrorCode::NotFound);
    assert_eq!(err.message, "Branch 'nope' not found in twig state");
    assert_eq!(
        err.hint.as_deref(),
        Some("Use `list_branches` to see tracked branches.")
    );
}

#[tokio::test]
async fn invalid_arguments_are_structured_errors() {
    let fx = stacked();
    let mcp = fx.start(&[], &[]).await;
    let err = mcp.call_err("get_branch_metadata", json!({})).await;
    assert_eq!(err.code, ErrorCode::InvalidParams);
    assert!(err.message.contains("branch"), "{}", err.message);
    assert!(err.hint.is_some());

    let err = mcp
        .call_err("get_branch_metadata", json!({"branch": 12}))
        .await;
    assert_eq!(err.code, ErrorCode::InvalidParams);

    let err = mcp
        .call_err("get_branch_metadata", json!({"branch": "  "}))
        .await;
    assert_eq!(err.code, ErrorCode::InvalidParams);

    let err = mcp.call_err("list_branches", json!({"limit": 0})).await;
    assert_eq!(err.code, ErrorCode::InvalidParams);
}

#[tokio::test]
async fn branch_tree_from_default_root_and_explicit_root() {
    let fx = stacked();
    let mcp = fx.start(&[], &[]).await;
    let data: Value = mcp.call_ok("get_branch_tree", json!({})).await;
    assert_eq!(data["root"], "main");
    assert_eq!(data["truncated"], false);
    assert_eq!(
        data["tree_text"],
        "main\n├── feat/auth (PROJ-101, #42)\n│   └── feat/auth-ui (PROJ-102)\n├── feat/billing (#7)\n└── scratch\n"
    );
    assert_eq!(
        data["branches"],
        json!([{
            "branch": "main",
            "children": [
                {"branch": "feat/auth", "jira_issue": "PROJ-101", "pr_number": 42, "children": [
                    {"branch": "feat/auth-ui", "jira_issue": "PROJ-102", "children": []}
                ]},
                {"branch": "feat/billing", "pr_number": 7, "children": []},
                {"branch": "scratch", "children": []}
            ]
        }])
    );

    let data: Value = mcp
        .call_ok("get_branch_tree", json!({"branch": "feat/auth"}))
        .await;
    assert_eq!(data["root"], "feat/auth");
    assert_eq!(
        data["tree_text"],
        "feat/auth (PROJ-101, #42)\n└── feat/auth-ui (PROJ-102)\n"
    );

    let err = mcp
        .call_err("get_branch_tree", json!({"branch": "gone/remote-only"}))
        .await;
    assert_eq!(err.code, ErrorCode::NotFound);
    assert_eq!(
        err.message,
        "Branch 'gone/remote-only' not found in repository"
    );
}

#[tokio::test]
async fn branch_tree_without_roots_uses_current_branch() {
    let fx = Fixture::repo(&["a", "b"]);
    fx.write_state(&state(
        vec![branch("b", Some("X-1"), None)],
        &[("b", "a")],
        &[],
        json!([]),
    ));
    fx.git(&["checkout", "-q", "a"]);
    let mcp = fx.start(&[], &[]).await;
    let data: Value = mcp.call_ok("get_branch_tree", json!({})).await;
    assert_eq!(data["root"], "a");
    assert_eq!(data["tree_text"], "a\n└── b (X-1)\n");
}

#[tokio::test]
async fn branch_tree_in_a_repository_without_branches() {
    let fx = Fixture::empty();
    let repo = fx.repo_path();
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    fx.write_state(&state(vec![], &[], &[], json!([])));
    let mcp = fx.start(&[], &[]).await;
    let err = mcp.call_err("get_branch_tree", json!({})).await;
    assert_eq!(err.code, ErrorCode::NotFound);
    assert_eq!(err.message, "No branches found in repository");
    // An unborn branch is still the current branch.
    let data: Value = mcp.call_ok("get_current_branch", json!({})).await;
    assert_eq!(data, json!({"branch": "main"}));
}

#[tokio::test]
async fn branch_stack_walks_first_parents_and_survives_cycles() {
    let fx = Fixture::repo(&["a", "b", "c"]);
    fx.write_state(&state(
        vec![
            branch("c", Some("C-1"), Some(3)),
            branch("b", None, Some(2)),
        ],
        &[("c", "b"), ("c", "main"), ("b", "a"), ("a", "c")],
        &[("main", true)],
        json!([]),
    ));
    fx.git(&["checkout", "-q", "c"]);
    let mcp = fx.start(&[], &[]).await;
    let data: Value = mcp.call_ok("get_branch_stack", json!({})).await;
    let names: Vec<&str> = data["stack"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["branch"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["c", "b", "a"], "cycle a → c must stop the walk");
    assert_eq!(data["stack"][0]["parent_branch"], "b");
    assert_eq!(data["stack"][0]["jira_issue"], "C-1");

    let data: Value = mcp
        .call_ok("get_branch_stack", json!({"branch": "b"}))
        .await;
    assert_eq!(data["stack"].as_array().unwrap().len(), 3);

    let head = fx.git(&["rev-parse", "HEAD"]);
    fx.git(&["checkout", "-q", &head]);
    let err = mcp.call_err("get_branch_stack", json!({})).await;
    assert_eq!(err.code, ErrorCode::NotFound);
    assert_eq!(err.message, "Not on any branch (detached HEAD)");
}

#[tokio::test]
async fn list_branches_pages_in_name_order() {
    let fx = stacked();
    let mcp = fx.start(&[], &[]).await;
    let all: Value = mcp.call_ok("list_branches", json!({})).await;
    let names: Vec<&str> = all["branches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["branch"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "feat/auth",
            "feat/auth-ui",
            "feat/billing",
            "gone/remote-only"
        ]
    );
    assert_eq!(all["total"], 4);
    assert!(all.get("next_cursor").is_none());

    let page1: Value = mcp.call_ok("list_branches", json!({"limit": 3})).await;
    assert_eq!(page1["branches"].as_array().unwrap().len(), 3);
    let cursor = page1["next_cursor"].as_str().unwrap().to_string();
    let page2: Value = mcp
        .call_ok("list_branches", json!({"limit": 3, "cursor": cursor}))
        .await;
    assert_eq!(page2["branches"][0]["branch"], "gone/remote-only");
    assert!(page2.get("next_cursor").is_none());
}

#[tokio::test]
async fn worktrees_from_state() {
    let fx = stacked();
    let mcp = fx.start(&[], &[]).await;
    let data: Value = mcp.call_ok("get_worktrees", json!({})).await;
    assert_eq!(
        data,
        json!({"worktrees": [{"name": "auth-ui", "path": "/work/wt/auth-ui", "branch": "feat/auth-ui"}]})
    );
}

#[tokio::test]
async fn list_repositories_reads_the_registry_outside_a_repo() {
    let fx = Fixture::empty();
    let xdg = fx.path().join("xdg");
    std::fs::create_dir_all(xdg.join("twig")).unwrap();
    std::fs::write(
        xdg.join("twig/registry.json"),
        r#"[{"path":"/src/api","name":"api","last_fetch":null},{"path":"/src/web","name":"web","last_fetch":"2026-03-01T10:00:00Z"}]"#,
    )
    .unwrap();
    let xdg_str = xdg.display().to_string();
    let mcp = fx
        .start_in(&fx.outside(), &[], &[("XDG_DATA_HOME", &xdg_str)])
        .await;
    let data: Value = mcp.call_ok("list_repositories", json!({})).await;
    assert_eq!(
        data,
        json!({"repositories": [{"name": "api", "path": "/src/api"}, {"name": "web", "path": "/src/web"}]})
    );

    // Default location: ~/.local/share/twig/registry.json; a corrupt file is `internal`.
    let reg = fx.home().join(".local/share/twig");
    std::fs::create_dir_all(&reg).unwrap();
    std::fs::write(reg.join("registry.json"), "{oops").unwrap();
    let mcp = fx.start_in(&fx.outside(), &[], &[]).await;
    let err = mcp.call_err("list_repositories", json!({})).await;
    assert_eq!(err.code, ErrorCode::Internal);
    assert!(
        err.message.starts_with("Failed to load registry: "),
        "{}",
        err.message
    );
}

#[tokio::test]
async fn outside_a_repository_every_repo_tool_says_no_repo() {
    let fx = Fixture::empty();
    let mcp = fx.start_in(&fx.outside(), &[], &[]).await;
    for (tool, args) in [
        ("get_current_branch", json!({})),
        ("get_branch_metadata", json!({"branch": "main"})),
        ("get_branch_tree", json!({})),
        ("get_branch_stack", json!({})),
        ("get_branch_stack", json!({"branch": "main"})),
        ("list_branches", json!({})),
        ("get_worktrees", json!({})),
    ] {
        let err = mcp.call_err(tool, args).await;
        assert_eq!(err.code, ErrorCode::NoRepo, "{tool}");
        assert_eq!(err.message, "twig-mcp was started outside a git repository");
        assert_eq!(
            err.hint.as_deref(),
            Some("Run twig-mcp from within a git repository.")
        );
    }
    // The registry still works.
    let data: Value = mcp.call_ok("list_repositories", json!({})).await;
    assert_eq!(data, json!({"repositories": []}));
}

#[tokio::test]
async fn repo_flag_and_detection_from_a_subdirectory() {
    let fx = stacked();
    let sub = fx.repo_path().join("src/deep");
    std::fs::create_dir_all(&sub).unwrap();
    let mcp = fx.start_in(&sub, &[], &[]).await;
    let data: Value = mcp.call_ok("get_current_branch", json!({})).await;
    assert_eq!(data["branch"], "main");

    let repo = fx.repo_path().display().to_string();
    let mcp = fx.start_in(&fx.outside(), &["--repo", &repo], &[]).await;
    let data: Value = mcp
        .call_ok("get_branch_metadata", json!({"branch": "feat/billing"}))
        .await;
    assert_eq!(data["pr_number"], 7);
}

#[tokio::test]
async fn missing_or_corrupt_state_is_no_twig_state() {
    let fx = Fixture::repo(&["feature"]);
    let mcp = fx.start(&[], &[]).await;
    for (tool, args) in [
        ("get_branch_metadata", json!({"branch": "feature"})),
        ("get_branch_tree", json!({})),
        ("get_branch_stack", json!({})),
        ("list_branches", json!({})),
    ] {
        let err = mcp.call_err(tool, args).await;
        assert_eq!(err.code, ErrorCode::NoTwigState, "{tool}");
        assert!(
            err.message.contains("state.json"),
            "cause missing: {}",
            err.message
        );
        assert_eq!(
            err.hint.as_deref(),
            Some("Run `twig init` in this repository first.")
        );
    }
    // State appearing mid-session is picked up; a corrupt one names the parse error.
    std::fs::create_dir_all(fx.repo_path().join(".twig")).unwrap();
    std::fs::write(fx.repo_path().join(".twig/state.json"), "{\"branches\": [").unwrap();
    let err = mcp.call_err("list_branches", json!({})).await;
    assert_eq!(err.code, ErrorCode::NoTwigState);
    assert!(
        err.message.starts_with("Failed to load twig state"),
        "{}",
        err.message
    );
    fx.write_state(&state(
        vec![branch("feature", None, Some(5))],
        &[],
        &[],
        json!([]),
    ));
    let data: Value = mcp
        .call_ok("get_branch_metadata", json!({"branch": "feature"}))
        .await;
    assert_eq!(data["pr_number"], 5);
}

#[tokio::test]
async fn deleted_repository_is_no_repo() {
    let fx = stacked();
    let mcp = fx.start(&[], &[]).await;
    mcp.call_ok::<Value>("get_current_branch", json!({})).await;
    std::fs::remove_dir_all(fx.repo_path()).unwrap();
    let err = mcp.call_err("get_current_branch", json!({})).await;
    assert_eq!(err.code, ErrorCode::NoRepo);
    assert!(err.message.contains("no longer exists"), "{}", err.message);
}

#[tokio::test]
async fn worktree_checkout_reports_its_own_branch() {
    let fx = stacked();
    let wt = fx.path().join("wt-billing");
    fx.git(&[
        "worktree",
        "add",
        "-q",
        wt.to_str().unwrap(),
        "feat/billing",
    ]);
    // twig keeps one state per working tree root; this one shares the main tree's file.
    std::fs::create_dir_all(wt.join(".twig")).unwrap();
    std::fs::copy(
        fx.repo_path().join(".twig/state.json"),
        wt.join(".twig/state.json"),
    )
    .unwrap();
    let mcp = fx.start_in(&wt, &[], &[]).await;
    let data: Value = mcp.call_ok("get_current_branch", json!({})).await;
    assert_eq!(data["branch"], "feat/billing");
    assert_eq!(data["pr_number"], 7);
}

#[tokio::test]
async fn branch_tree_sees_packed_and_loose_refs_once() {
    let fx = stacked();
    fx.git(&["pack-refs", "--all"]);
    // A branch updated after packing exists both packed and loose; a new one only loose.
    std::fs::write(fx.repo_path().join("more.txt"), "x\n").unwrap();
    fx.git(&["add", "more.txt"]);
    fx.git(&["commit", "-q", "-m", "more"]);
    fx.git(&["branch", "-f", "scratch", "HEAD"]);
    fx.git(&["branch", "late"]);
    let mcp = fx.start(&[], &[]).await;
    let data: Value = mcp.call_ok("get_branch_tree", json!({})).await;
    assert_eq!(
        data["tree_text"],
        "main\n├── feat/auth (PROJ-101, #42)\n│   └── feat/auth-ui (PROJ-102)\n├── feat/billing (#7)\n├── late\n└── scratch\n"
    );
    fx.git(&["branch", "-D", "late"]);
    let data: Value = mcp.call_ok("get_branch_tree", json!({})).await;
    assert!(!data["tree_text"].as_str().unwrap().contains("late"));
}
