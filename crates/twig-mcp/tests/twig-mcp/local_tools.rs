//! The local state tools through the built binary, including every degraded context.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // assertions in tests

use crate::support;

use serde_json::{Value, json};
use support::*;
use twig_mcp::errors;

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
            "parents": ["feat/auth"],
            "created_at": "2026-03-01T10:00:00.123456789+00:00",
        }),
        "pr_number has no value and must be omitted"
    );

    // Switching branches mid-session is seen on the next call.
    fx.git(&["checkout", "-q", "main"]);
    let data: Value = mcp.call_ok("get_current_branch", json!({})).await;
    assert_eq!(data, json!({"branch": "main", "parents": []}));
    mcp.shutdown().await;
}

#[tokio::test]
async fn current_branch_detached_head_is_not_found() {
    let fx = stacked();
    let head = fx.git(&["rev-parse", "HEAD"]);
    fx.git(&["checkout", "-q", &head]);
    let mcp = fx.start(&[], &[]).await;
    let err = mcp.call_err("get_current_branch", json!({})).await;
    assert_eq!(err.code, errors::NOT_FOUND);
    assert_eq!(err.message, "Not on any branch (detached HEAD state)");
    assert!(!err.hint.is_empty());
}

#[tokio::test]
async fn current_branch_degrades_without_twig_state() {
    let fx = Fixture::repo(&["feature"]);
    fx.git(&["checkout", "-q", "feature"]);
    let mcp = fx.start(&[], &[]).await;
    let data: Value = mcp.call_ok("get_current_branch", json!({})).await;
    assert_eq!(data, json!({"branch": "feature", "parents": []}));
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
            "parents": ["main"],
            "created_at": "2026-03-01T10:00:00.123456789+00:00",
        })
    );
    // A branch twig tracks only as a root and a parent (no Jira/PR link): found.
    let data: Value = mcp
        .call_ok("get_branch_metadata", json!({"branch": "main"}))
        .await;
    assert_eq!(data, json!({"branch": "main", "parents": []}));
    let err = mcp
        .call_err("get_branch_metadata", json!({"branch": "nope"}))
        .await;
    assert_eq!(err.code, errors::NOT_FOUND);
    assert_eq!(err.message, "Branch 'nope' not found in twig state");
    assert!(err.hint.starts_with("Use `list_branches`"), "{}", err.hint);
}

#[tokio::test]
async fn invalid_arguments_are_structured_errors() {
    let fx = stacked();
    let mcp = fx.start(&[], &[]).await;
    let err = mcp.call_err("get_branch_metadata", json!({})).await;
    assert_eq!(err.code, errors::INVALID_PARAMS);
    assert!(err.message.contains("branch"), "{}", err.message);
    assert!(!err.hint.is_empty());

    let err = mcp
        .call_err("get_branch_metadata", json!({"branch": 12}))
        .await;
    assert_eq!(err.code, errors::INVALID_PARAMS);

    let err = mcp
        .call_err("get_branch_metadata", json!({"branch": "  "}))
        .await;
    assert_eq!(err.code, errors::INVALID_PARAMS);

    let err = mcp.call_err("list_branches", json!({"limit": 0})).await;
    assert_eq!(err.code, errors::INVALID_PARAMS);
}

#[tokio::test]
async fn branch_tree_from_default_root_and_explicit_root() {
    let fx = stacked();
    let mcp = fx.start(&[], &[]).await;
    let data: Value = mcp.call_ok("get_branch_tree", json!({})).await;
    assert_eq!(data["root"], "main");
    assert_eq!(data["truncated"], false);
    // `scratch` has no dependency: under the default root `main`, as `twig tree` draws it,
    // marked (no edge says it depends on main).
    assert_eq!(
        data["tree_text"],
        "main\n├── feat/auth (PROJ-101, #42)\n│   └── feat/auth-ui (PROJ-102)\n├── feat/billing (#7)\n\
         └── scratch [orphan]\n\n[orphan]: no parent git has; drawn under the default root main as `twig tree` draws it, not a dependency\n"
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
                {"branch": "scratch", "orphan": true, "children": []}
            ]
        }])
    );
    assert_eq!(data["orphans"], json!([]), "none listed apart");

    let data: Value = mcp
        .call_ok("get_branch_tree", json!({"branch": "feat/auth"}))
        .await;
    assert_eq!(data["root"], "feat/auth");
    assert_eq!(
        data["tree_text"],
        "feat/auth (PROJ-101, #42)\n└── feat/auth-ui (PROJ-102)\n"
    );
    assert_eq!(data["orphans"], json!([]), "a subtree lists no orphans");

    let err = mcp
        .call_err("get_branch_tree", json!({"branch": "gone/remote-only"}))
        .await;
    assert_eq!(err.code, errors::NOT_FOUND);
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
    // Without configured roots, twig lists every branch without a parent as orphaned.
    assert_eq!(
        data["tree_text"],
        "a\n└── b (X-1)\n\nOrphaned branches (no dependencies defined):\n  • main\n"
    );
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
    assert_eq!(err.code, errors::NOT_FOUND);
    assert_eq!(err.message, "No branches found in repository");
    // An unborn branch is still the current branch.
    let data: Value = mcp.call_ok("get_current_branch", json!({})).await;
    assert_eq!(data, json!({"branch": "main", "parents": []}));
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
    assert_eq!(data["truncated"], false, "a cycle is not a cut");
    assert_eq!(data["stack"][0]["parent_branch"], "b");
    assert_eq!(data["stack"][0]["jira_issue"], "C-1");

    let data: Value = mcp
        .call_ok("get_branch_stack", json!({"branch": "b"}))
        .await;
    assert_eq!(data["stack"].as_array().unwrap().len(), 3);

    let head = fx.git(&["rev-parse", "HEAD"]);
    fx.git(&["checkout", "-q", &head]);
    let err = mcp.call_err("get_branch_stack", json!({})).await;
    assert_eq!(err.code, errors::NOT_FOUND);
    assert_eq!(err.message, "Not on any branch (detached HEAD)");
}

fn stack_names(data: &Value) -> Vec<String> {
    data["stack"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["branch"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn branch_stack_of_an_unknown_branch_is_not_found() {
    let fx = stacked();
    let mcp = fx.start(&[], &[]).await;
    for unknown in ["nope", "feat/auth-u", "FEAT/AUTH"] {
        let err = mcp
            .call_err("get_branch_stack", json!({"branch": unknown}))
            .await;
        assert_eq!(err.code, errors::NOT_FOUND, "{unknown}: {err:?}");
        assert_eq!(
            err.message,
            format!("Branch '{unknown}' not found in twig state or repository")
        );
        assert!(err.hint.contains("list_branches"), "{}", err.hint);
        assert!(!err.retryable);
    }
    // Known branches still answer: tracked, local only (untracked), tracked but not local,
    // and a root that is only named by the state and git.
    for (known, expected) in [
        ("feat/auth-ui", vec!["feat/auth-ui", "feat/auth", "main"]),
        ("scratch", vec!["scratch"]),
        ("gone/remote-only", vec!["gone/remote-only"]),
        ("main", vec!["main"]),
        (" feat/auth ", vec!["feat/auth", "main"]),
    ] {
        let data: Value = mcp
            .call_ok("get_branch_stack", json!({"branch": known}))
            .await;
        assert_eq!(stack_names(&data), expected, "{known}");
        assert_eq!(data["truncated"], false);
    }
    // A local branch created mid-session is seen.
    fx.git(&["branch", "late"]);
    let data: Value = mcp
        .call_ok("get_branch_stack", json!({"branch": "late"}))
        .await;
    assert_eq!(stack_names(&data), ["late"]);
}

#[tokio::test]
async fn branch_stack_of_a_long_chain_is_bounded_and_says_so() {
    // b00000 ← b00001 ← … ← b19999: a 20,000-branch chain, tracked in the state only.
    const CHAIN: usize = 20_000;
    let fx = Fixture::repo(&[]);
    let name = |i: usize| format!("b{i:05}");
    let names: Vec<String> = (0..CHAIN).map(name).collect();
    let deps: Vec<(String, String)> = (1..CHAIN).map(|i| (name(i), name(i - 1))).collect();
    let dep_refs: Vec<(&str, &str)> = deps.iter().map(|(c, p)| (c.as_str(), p.as_str())).collect();
    fx.write_state(&state(
        names.iter().map(|n| branch(n, None, None)).collect(),
        &dep_refs,
        &[("b00000", true)],
        json!([]),
    ));
    let mcp = fx.start(&[], &[]).await;
    let data: Value = mcp
        .call_ok("get_branch_stack", json!({"branch": name(CHAIN - 1)}))
        .await;
    let stack = stack_names(&data);
    assert_eq!(stack.len(), twig_mcp::tools::local::MAX_STACK);
    assert_eq!(stack.len(), 200);
    assert_eq!(stack[0], name(CHAIN - 1));
    assert_eq!(stack[199], name(CHAIN - 200));
    assert_eq!(data["truncated"], true);
    // The last entry says where to continue.
    let next = data["stack"][199]["parent_branch"].as_str().unwrap();
    assert_eq!(next, name(CHAIN - 201));
    let data: Value = mcp
        .call_ok("get_branch_stack", json!({"branch": next}))
        .await;
    assert_eq!(stack_names(&data)[0], next);
    assert_eq!(data["truncated"], true);

    // Exactly the bound is not a cut; one more is.
    let data: Value = mcp
        .call_ok("get_branch_stack", json!({"branch": name(199)}))
        .await;
    assert_eq!(stack_names(&data).len(), 200);
    assert_eq!(stack_names(&data).last().unwrap(), "b00000");
    assert_eq!(data["truncated"], false);
    let data: Value = mcp
        .call_ok("get_branch_stack", json!({"branch": name(200)}))
        .await;
    assert_eq!(stack_names(&data).len(), 200);
    assert_eq!(stack_names(&data).last().unwrap(), "b00001");
    assert_eq!(data["truncated"], true);
}

#[tokio::test]
async fn list_branches_pages_in_name_order() {
    let fx = stacked();
    let mcp = fx.start(&[], &[]).await;
    let (all, page) = mcp.call_paged::<Value>("list_branches", json!({})).await;
    assert_eq!(
        support::health::order(&all),
        [
            "feat/auth",
            "feat/auth-ui",
            "feat/billing",
            "gone/remote-only",
            "main"
        ],
        "every branch twig tracks: `main` is a root and a parent, without a link"
    );
    assert_eq!(page, mcp_common::Page::new(5, None));
    assert!(all.get("total").is_none() && all.get("next_cursor").is_none());

    let (page1, info1) = mcp
        .call_paged::<Value>("list_branches", json!({"limit": 3}))
        .await;
    assert_eq!(support::health::order(&page1).len(), 3);
    assert_eq!(info1.total, 5);
    let cursor = info1.next_cursor.expect("a next page");
    let (page2, info2) = mcp
        .call_paged::<Value>("list_branches", json!({"limit": 3, "cursor": cursor}))
        .await;
    assert_eq!(support::health::order(&page2), ["gone/remote-only", "main"]);
    assert_eq!(info2, mcp_common::Page::new(5, None));

    // The cursor seals the last name: a branch added before it does not shift the next page.
    let (_, info) = mcp
        .call_paged::<Value>("list_branches", json!({"limit": 2}))
        .await;
    let cursor = info.next_cursor.unwrap();
    fx.write_state(&state(
        vec![
            branch("a/first", None, None),
            branch("feat/auth", None, None),
            branch("feat/auth-ui", None, None),
            branch("feat/billing", None, None),
            branch("gone/remote-only", None, None),
        ],
        &[],
        &[],
        json!([]),
    ));
    let (rest, info) = mcp
        .call_paged::<Value>("list_branches", json!({"limit": 2, "cursor": cursor}))
        .await;
    assert_eq!(
        support::health::order(&rest),
        ["feat/billing", "gone/remote-only"]
    );
    assert_eq!(info, mcp_common::Page::new(5, None));

    // An empty cursor is the first page, as before.
    let (first, _) = mcp
        .call_paged::<Value>("list_branches", json!({"limit": 1, "cursor": ""}))
        .await;
    assert_eq!(support::health::order(&first), ["a/first"]);
}

#[tokio::test]
async fn list_branches_refuses_bad_cursors_and_limits() {
    let fx = stacked();
    let mcp = fx.start(&[], &[]).await;
    let (_, info) = mcp
        .call_paged::<Value>("list_branches", json!({"limit": 1}))
        .await;
    let cursor = info.next_cursor.unwrap();

    // A branch name (the old cursor), a made-up or blank one, or an altered cursor is
    // refused, not answered (with an empty page or the first page).
    for forged in [
        "feat/auth".to_string(),
        "zzz".to_string(),
        "~".to_string(),
        " ".to_string(),
        "\u{a0}\t".to_string(),
        "AQAAAAAAAAAAInp6eiIAAAAAAAAAAAAAAAAAAAAA".to_string(),
        format!(" {cursor}x "),
        format!("{cursor}x"),
        cursor.chars().rev().collect(),
    ] {
        let err = mcp
            .call_err("list_branches", json!({"cursor": forged}))
            .await;
        assert_eq!(err.code, errors::INVALID_PARAMS, "{forged}: {err:?}");
        assert!(err.message.contains("list_branches"), "{}", err.message);
        assert!(err.hint.contains("next_cursor"), "{}", err.hint);
        assert!(!err.retryable);
    }
    // A cursor of another list is another query.
    let other = Fixture::empty();
    let xdg = other.path().join("xdg");
    std::fs::create_dir_all(xdg.join("twig")).unwrap();
    std::fs::write(
        xdg.join("twig/registry.json"),
        r#"[{"path":"/a","name":"a"},{"path":"/b","name":"b"}]"#,
    )
    .unwrap();
    let xdg = xdg.display().to_string();
    let mcp2 = fx.start(&[], &[("XDG_DATA_HOME", &xdg)]).await;
    let (_, info) = mcp2
        .call_paged::<Value>("list_repositories", json!({"limit": 1}))
        .await;
    let repo_cursor = info.next_cursor.unwrap();
    let err = mcp2
        .call_err("list_branches", json!({"cursor": repo_cursor}))
        .await;
    assert_eq!(err.code, errors::INVALID_PARAMS);
    assert!(err.message.contains("different"), "{}", err.message);
    // A cursor of another server process is forged there (keys are per process).
    let err = mcp2
        .call_err("list_branches", json!({"cursor": cursor}))
        .await;
    assert_eq!(err.code, errors::INVALID_PARAMS);
    assert!(
        err.message.contains("not one this server issued"),
        "{}",
        err.message
    );

    for limit in [json!(0), json!(1001), json!(-1), json!("ten")] {
        let err = mcp.call_err("list_branches", json!({"limit": limit})).await;
        assert_eq!(err.code, errors::INVALID_PARAMS, "{limit}: {err:?}");
        assert!(!err.hint.is_empty());
    }
    let err = mcp.call_err("list_branches", json!({"limit": 1001})).await;
    assert_eq!(err.message, "limit 1001 is out of range: give 1 to 1000");
    assert_eq!(
        err.hint,
        "Omit limit for pages of 200, or page with next_cursor."
    );
    let (data, _) = mcp
        .call_paged::<Value>("list_branches", json!({"limit": 1000}))
        .await;
    assert_eq!(support::health::order(&data).len(), 5);
}

#[tokio::test]
async fn worktrees_from_state() {
    let fx = stacked();
    let mcp = fx.start(&[], &[]).await;
    let data: Value = mcp.call_ok("get_worktrees", json!({})).await;
    // twig recorded a worktree that git does not have.
    assert_eq!(
        data,
        json!({"worktrees": [{"name": "auth-ui", "path": "/work/wt/auth-ui", "branch": "feat/auth-ui", "status": "missing"}]})
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
    let (data, page) = mcp
        .call_paged::<Value>("list_repositories", json!({}))
        .await;
    assert_eq!(
        data,
        json!({"repositories": [{"name": "api", "path": "/src/api"}, {"name": "web", "path": "/src/web"}]})
    );
    assert_eq!(page, mcp_common::Page::new(2, None));

    // A page at a time, in registry order.
    let (first, page) = mcp
        .call_paged::<Value>("list_repositories", json!({"limit": 1}))
        .await;
    assert_eq!(first["repositories"][0]["name"], "api");
    assert_eq!(page.total, 2);
    let cursor = page.next_cursor.expect("a second page");
    let (second, page) = mcp
        .call_paged::<Value>("list_repositories", json!({"limit": 1, "cursor": cursor}))
        .await;
    assert_eq!(second["repositories"][0]["name"], "web");
    assert_eq!(page, mcp_common::Page::new(2, None));
    let err = mcp
        .call_err("list_repositories", json!({"cursor": "bm90IGEgY3Vyc29y"}))
        .await;
    assert_eq!(err.code, errors::INVALID_PARAMS);
    assert!(err.hint.contains("next_cursor"), "{}", err.hint);
    for limit in [0, 1001] {
        let err = mcp
            .call_err("list_repositories", json!({"limit": limit}))
            .await;
        assert_eq!(err.code, errors::INVALID_PARAMS, "{limit}");
        assert!(err.hint.contains("pages of 200"), "{}", err.hint);
    }

    // Default location: ~/.local/share/twig/registry.json; a corrupt file is `internal`.
    let reg = fx.home().join(".local/share/twig");
    std::fs::create_dir_all(&reg).unwrap();
    std::fs::write(reg.join("registry.json"), "{oops").unwrap();
    let mcp = fx.start_in(&fx.outside(), &[], &[]).await;
    let err = mcp.call_err("list_repositories", json!({})).await;
    assert_eq!(err.code, errors::INTERNAL);
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
        assert_eq!(err.code, errors::NO_REPO, "{tool}");
        assert_eq!(err.message, "twig-mcp was started outside a git repository");
        assert_eq!(
            Some(err.hint.as_str()),
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
        assert_eq!(err.code, errors::NO_TWIG_STATE, "{tool}");
        assert!(
            err.message.contains("state.json"),
            "cause missing: {}",
            err.message
        );
        assert_eq!(
            Some(err.hint.as_str()),
            Some("Run `twig init` in this repository first.")
        );
    }
    // State appearing mid-session is picked up; a corrupt one names the parse error.
    std::fs::create_dir_all(fx.repo_path().join(".twig")).unwrap();
    std::fs::write(fx.repo_path().join(".twig/state.json"), "{\"branches\": [").unwrap();
    let err = mcp.call_err("list_branches", json!({})).await;
    assert_eq!(err.code, errors::NO_TWIG_STATE);
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
    assert_eq!(err.code, errors::NO_REPO);
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
        "main\n├── feat/auth (PROJ-101, #42)\n│   └── feat/auth-ui (PROJ-102)\n├── feat/billing (#7)\n\
         ├── late [orphan]\n└── scratch [orphan]\n\n[orphan]: no parent git has; drawn under the default root main as `twig tree` draws it, not a dependency\n"
    );
    fx.git(&["branch", "-D", "late"]);
    let data: Value = mcp.call_ok("get_branch_tree", json!({})).await;
    assert!(!data["tree_text"].as_str().unwrap().contains("late"));
}

#[tokio::test]
async fn a_branch_with_two_parents_answers_both_in_twigs_order() {
    // `twig branch depend feat/auth-ui feat/auth-api` after `twig switch -p feat/auth
    // feat/auth-ui`: two edges of one child, the first is the primary parent.
    let fx = Fixture::repo(&["feat/auth", "feat/auth-api", "feat/auth-ui"]);
    fx.write_state(&state(
        vec![branch("feat/auth-ui", Some("PROJ-7"), None)],
        &[
            ("feat/auth", "main"),
            ("feat/auth-api", "feat/auth"),
            ("feat/auth-ui", "feat/auth"),
            ("feat/auth-ui", "feat/auth-api"),
        ],
        &[("main", true)],
        json!([]),
    ));
    let mcp = fx.start(&[], &[]).await;
    let data: Value = mcp
        .call_ok("get_branch_metadata", json!({"branch": "feat/auth-ui"}))
        .await;
    assert_eq!(data["parent_branch"], "feat/auth");
    assert_eq!(data["parents"], json!(["feat/auth", "feat/auth-api"]));
    // A branch twig tracks only through its dependencies (no link) is found too.
    let api: Value = mcp
        .call_ok("get_branch_metadata", json!({"branch": "feat/auth-api"}))
        .await;
    assert_eq!(
        api,
        json!({"branch": "feat/auth-api", "parent_branch": "feat/auth", "parents": ["feat/auth"]})
    );
    // The stack follows the primary parent and names the others at each step.
    let stack: Value = mcp
        .call_ok("get_branch_stack", json!({"branch": "feat/auth-ui"}))
        .await;
    let steps: Vec<(String, Value)> = stack["stack"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["branch"].as_str().unwrap().to_string(),
                s["parents"].clone(),
            )
        })
        .collect();
    assert_eq!(
        steps,
        [
            (
                "feat/auth-ui".to_string(),
                json!(["feat/auth", "feat/auth-api"])
            ),
            ("feat/auth".to_string(), json!(["main"])),
            ("main".to_string(), json!([])),
        ]
    );
    let (all, _) = mcp.call_paged::<Value>("list_branches", json!({})).await;
    assert_eq!(
        support::health::order(&all),
        ["feat/auth", "feat/auth-api", "feat/auth-ui", "main"]
    );
    // The tree shows feat/auth-ui under both parents: in full under its primary parent,
    // marked as a repeat under the other.
    let tree: Value = mcp.call_ok("get_branch_tree", json!({})).await;
    assert_eq!(
        tree["tree_text"],
        "main\n└── feat/auth\n    ├── feat/auth-api\n    │   └── feat/auth-ui (PROJ-7) [repeat: in full under feat/auth]\n    \
         └── feat/auth-ui (PROJ-7) [also under: feat/auth-api]\n"
    );
    let auth = &tree["branches"][0]["children"][0];
    assert_eq!(
        auth["children"][0]["children"][0],
        json!({"branch": "feat/auth-ui", "jira_issue": "PROJ-7", "children": [], "repeat": true, "shown_under": "feat/auth"})
    );
    assert_eq!(auth["children"][1]["also_under"], json!(["feat/auth-api"]));
    // Drawn from feat/auth-api, whose subtree does not hold the primary parent: in full.
    let sub: Value = mcp
        .call_ok("get_branch_tree", json!({"branch": "feat/auth-api"}))
        .await;
    assert_eq!(
        sub["tree_text"],
        "feat/auth-api\n└── feat/auth-ui (PROJ-7) [also under: feat/auth]\n"
    );
}

/// `twig worktree create feature/wt-branch` (0.7.1): git checks out a branch named like the
/// directory while the state records the requested name.
#[tokio::test]
async fn worktrees_report_the_branch_git_has_checked_out_there() {
    let fx = stacked();
    let twig_made = fx.path().join("repo-worktrees").join("feature-wt-branch");
    let agreeing = fx.path().join("wt-billing");
    let detached = fx.path().join("wt-detached");
    let by_hand = fx.path().join("wt-by-hand");
    let path = |p: &std::path::Path| p.to_str().unwrap().to_string();
    fx.git(&[
        "worktree",
        "add",
        "-q",
        "-b",
        "feature-wt-branch",
        &path(&twig_made),
    ]);
    fx.git(&["worktree", "add", "-q", &path(&agreeing), "feat/billing"]);
    fx.git(&["worktree", "add", "-q", "--detach", &path(&detached)]);
    fx.git(&["worktree", "add", "-q", "-b", "by-hand", &path(&by_hand)]);
    let record = |name: &str, path: String, branch: &str| json!({"name": name, "path": path, "branch": branch, "created_at": "2026-03-01T10:00:00+00:00"});
    fx.write_state(&state(
        vec![branch("feat/billing", None, Some(7))],
        &[("feat/billing", "main")],
        &[("main", true)],
        json!([
            record("feature-wt-branch", path(&twig_made), "feature/wt-branch"),
            record("billing", path(&agreeing), "feat/billing"),
            record("detached", path(&detached), "feat/auth"),
            record("gone", "/nowhere/gone".into(), "feat/gone"),
        ]),
    ));
    let mcp = fx.start(&[], &[]).await;
    let data: Value = mcp.call_ok("get_worktrees", json!({})).await;
    assert_eq!(
        data["worktrees"],
        json!([
            {"name": "feature-wt-branch", "path": path(&twig_made), "branch": "feature-wt-branch",
             "twig_branch": "feature/wt-branch", "status": "branch_differs"},
            {"name": "billing", "path": path(&agreeing), "branch": "feat/billing", "status": "ok"},
            {"name": "detached", "path": path(&detached), "branch": "", "twig_branch": "feat/auth",
             "status": "detached"},
            {"name": "gone", "path": "/nowhere/gone", "branch": "feat/gone", "status": "missing"},
            {"name": "wt-by-hand", "path": path(&std::fs::canonicalize(&by_hand).unwrap()),
             "branch": "by-hand", "status": "not_in_twig"},
        ])
    );
    // A worktree whose directory was deleted (git still records it) is missing too.
    std::fs::remove_dir_all(&agreeing).unwrap();
    let data: Value = mcp.call_ok("get_worktrees", json!({})).await;
    assert_eq!(data["worktrees"][1]["status"], "missing");
    // Without a state file, git's worktrees are listed as not twig's.
    std::fs::remove_file(fx.repo_path().join(".twig/state.json")).unwrap();
    let data: Value = mcp.call_ok("get_worktrees", json!({})).await;
    let statuses: Vec<&str> = data["worktrees"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["status"].as_str().unwrap())
        .collect();
    // (The deleted one is missing whether twig recorded it or not.)
    let mut sorted = statuses.clone();
    sorted.sort();
    assert_eq!(
        sorted,
        ["detached", "missing", "not_in_twig", "not_in_twig"],
        "{data}"
    );
}

/// Two records of one worktree (a symbolic link and its target) both find it; a worktree
/// twig did not make whose directory was moved away is missing, not a live worktree.
#[tokio::test]
async fn worktrees_seen_through_links_and_moved_away() {
    let fx = stacked();
    let real = fx.path().join("wt-real");
    let link = fx.path().join("wt-link");
    let moved = fx.path().join("wt-moved");
    fx.git(&[
        "worktree",
        "add",
        "-q",
        real.to_str().unwrap(),
        "feat/billing",
    ]);
    fx.git(&[
        "worktree",
        "add",
        "-q",
        "-b",
        "elsewhere",
        moved.to_str().unwrap(),
    ]);
    std::os::unix::fs::symlink(&real, &link).unwrap();
    std::fs::rename(&moved, fx.path().join("wt-moved-away")).unwrap();
    let record = |name: &str, path: &std::path::Path| json!({"name": name, "path": path.to_str().unwrap(), "branch": "feat/billing", "created_at": "2026-03-01T10:00:00+00:00"});
    fx.write_state(&state(
        vec![],
        &[],
        &[("main", true)],
        json!([record("real", &real), record("link", &link)]),
    ));
    let mcp = fx.start(&[], &[]).await;
    let data: Value = mcp.call_ok("get_worktrees", json!({})).await;
    let statuses: Vec<(&str, &str)> = data["worktrees"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| (w["name"].as_str().unwrap(), w["status"].as_str().unwrap()))
        .collect();
    assert_eq!(
        statuses,
        [("real", "ok"), ("link", "ok"), ("wt-moved", "missing")]
    );
}

/// HEAD can name a ref outside refs/heads (`git symbolic-ref HEAD refs/tags/t1`): that is no
/// branch to report as current.
#[tokio::test]
async fn head_on_a_tag_is_not_a_current_branch() {
    let fx = stacked();
    fx.git(&["tag", "t1"]);
    fx.git(&["symbolic-ref", "HEAD", "refs/tags/t1"]);
    let mcp = fx.start(&[], &[]).await;
    let err = mcp.call_err("get_current_branch", json!({})).await;
    assert_eq!(err.code, errors::NOT_FOUND);
    assert!(err.message.contains("detached"), "{}", err.message);
}
