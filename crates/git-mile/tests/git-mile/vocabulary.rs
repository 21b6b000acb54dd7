//! Issue 48, items 5 and 6, through the binary (the CLI run by `git mile`, the MCP server
//! through an rmcp client) on the tasks upstream git-mile's own binary wrote (the committed
//! `solo` recording: three tasks, one a child of another):
//! - a listing of issues or milestones in a repository that holds only tasks says how many
//!   tasks there are and how to list them, never an empty page in silence;
//! - the first page of a task listing without a filter names the states (the workflow's and
//!   those the tasks are in) with their kinds;
//! - a task is shown with its parents and children named (`family`).

use std::path::PathBuf;

use serde_json::{Value, json};

use crate::support::{Sandbox, ok};
use crate::upstream_tasks::{Recording, load};

/// A fresh repository holding the tasks of the `solo` recording and nothing else.
fn tasks_only(sandbox: &Sandbox, name: &str) -> (PathBuf, Recording) {
    let recording = Recording::committed();
    let repo = sandbox.repo(name);
    load(sandbox, &repo, &recording.bundle("solo"));
    (repo, recording)
}

#[tokio::test]
async fn a_repository_of_tasks_alone_says_how_to_list_them() {
    let sandbox = Sandbox::new();
    let (repo, _) = tasks_only(&sandbox, "tasks");

    // The CLI: the default listing (issues) and milestones.
    for args in [&["list"][..], &["list", "--entity", "milestone"][..]] {
        let text = sandbox.mile_ok(&repo, args);
        assert!(
            text.contains("this repository holds 3 tasks of upstream git-mile")
                && text.contains("git mile list --entity task"),
            "{args:?}: {text}"
        );
        let page = sandbox.mile_json(&repo, args);
        assert_eq!(page["items"], json!([]), "{page}");
        assert_eq!(page["tasks"]["count"], 3, "{args:?}: {page}");
    }

    // The server, for both kinds.
    let mcp = sandbox.server(&repo, &[]).await;
    for entity in ["issue", "milestone"] {
        let page = ok(&mcp, "git_mile.list", json!({ "entity": entity })).await;
        assert_eq!(page["items"], json!([]), "{page}");
        assert_eq!(page["tasks"]["count"], 3, "{entity}: {page}");
        let hint = page["tasks"]["hint"].as_str().expect("a hint");
        assert!(
            hint.contains(&format!("No {entity} matches"))
                && hint.contains(r#"git_mile.list {"entity":"task"}"#),
            "{hint}"
        );
        // As the hint says: the tasks are there.
        let listed = ok(
            &mcp,
            "git_mile.list",
            json!({"entity": "task", "includeClosed": true}),
        )
        .await;
        assert_eq!(listed["items"].as_array().unwrap().len(), 3, "{listed}");
    }
    drop(mcp);

    // With an issue, a page of issues has items and no note; an empty one still names them.
    let issue = sandbox.create(&repo, "issue", "Our own issue", &[]);
    let page = sandbox.mile_json(&repo, &["list"]);
    assert_eq!(page["items"][0]["id"], json!(issue), "{page}");
    assert!(page.get("tasks").is_none(), "{page}");
    let none = sandbox.mile_json(&repo, &["list", "--filter", "title == \"nothing\""]);
    assert_eq!(none["tasks"]["count"], 3, "{none}");

    // A repository without tasks answers as before: nothing matches, no note.
    let plain = sandbox.repo("plain");
    assert_eq!(sandbox.mile_ok(&plain, &["list"]).trim(), "nothing matches");
    let page = sandbox.mile_json(&plain, &["list"]);
    assert!(page.get("tasks").is_none(), "{page}");
}

/// The states of a page, as `state kind tasks workflow default` lines.
fn states(page: &Value) -> Vec<String> {
    page["states"]
        .as_array()
        .unwrap_or_else(|| panic!("no states: {page}"))
        .iter()
        .map(|s| {
            format!(
                "{} {} {} {} {}",
                s["state"], s["kind"], s["tasks"], s["workflow"], s["default"]
            )
        })
        .collect()
}

#[tokio::test]
async fn the_first_unfiltered_page_of_tasks_names_the_states_and_their_kinds() {
    let sandbox = Sandbox::new();
    let (repo, _) = tasks_only(&sandbox, "tasks");
    let mcp = sandbox.server(&repo, &[]).await;
    let page = ok(&mcp, "git_mile.list", json!({"entity": "task", "limit": 1})).await;
    // Upstream's built-in workflow (no .git-mile/config.toml), then the task with no state;
    // the closed task counts though the page hides it.
    assert_eq!(
        states(&page),
        [
            r#""state/todo" "todo" 0 true true"#,
            r#""state/in-progress" "in_progress" 1 true null"#,
            r#""state/done" "done" 1 true null"#,
            "null null 1 false null",
        ]
    );
    // Only the first page names them.
    let cursor = page["nextCursor"].as_str().expect("a second page");
    let next = ok(
        &mcp,
        "git_mile.list",
        json!({"entity": "task", "limit": 1, "cursor": cursor}),
    )
    .await;
    assert_eq!(next["items"].as_array().unwrap().len(), 1, "{next}");
    assert!(next.get("states").is_none(), "{next}");
    // Nor does a filtered page: the vocabulary is the repository's, named once.
    let filtered = ok(
        &mcp,
        "git_mile.list",
        json!({"entity": "task", "filter": "state_kind == \"in_progress\""}),
    )
    .await;
    assert_eq!(filtered["items"].as_array().unwrap().len(), 1, "{filtered}");
    assert!(filtered.get("states").is_none(), "{filtered}");
    // Pages of issues do not.
    let issues = ok(&mcp, "git_mile.list", json!({"entity": "issue"})).await;
    assert!(issues.get("states").is_none(), "{issues}");
    drop(mcp);

    // The CLI prints them under the page.
    let text = sandbox.mile_ok(&repo, &["list", "--entity", "task"]);
    assert!(
        text.contains(
            "states: state/todo (todo, default): 0 tasks, state/in-progress (in_progress): 1 task, \
             state/done (done): 1 task, no state (not in the workflow): 1 task"
        ),
        "{text}"
    );

    // A workflow of the repository's own: its states, then those the tasks use outside it.
    std::fs::create_dir_all(repo.join(".git-mile")).unwrap();
    std::fs::write(
        repo.join(".git-mile/config.toml"),
        "[workflow]\ndefault_state = \"s/new\"\nstates = [\n  { value = \"s/new\", kind = \"backlog\" },\n  { value = \"state/done\", kind = \"done\" },\n]\n",
    )
    .unwrap();
    let mcp = sandbox.server(&repo, &[]).await;
    let page = ok(&mcp, "git_mile.list", json!({"entity": "task"})).await;
    assert_eq!(
        states(&page),
        [
            r#""s/new" "backlog" 0 true true"#,
            r#""state/done" "done" 1 true null"#,
            r#""state/in-progress" "in_progress" 1 false null"#,
            "null null 1 false null",
        ]
    );
}

#[tokio::test]
async fn a_subtask_is_shown_with_its_parent_and_a_parent_with_its_children() {
    let sandbox = Sandbox::new();
    let (repo, recording) = tasks_only(&sandbox, "tasks");
    let parent = recording.role("solo", "other");
    let child = recording.role("solo", "child");
    let alone = recording.role("solo", "parent");

    let mcp = sandbox.server(&repo, &[]).await;
    let shown = ok(
        &mcp,
        "git_mile.show",
        json!({"entity": "task", "id": child}),
    )
    .await;
    assert_eq!(shown["parents"], json!([parent]), "{shown}");
    assert_eq!(
        shown["family"],
        json!({ &parent: {"title": "Other parent", "status": "open", "state": null} }),
        "{shown}"
    );
    let shown = ok(
        &mcp,
        "git_mile.show",
        json!({"entity": "task", "id": &parent[..13]}),
    )
    .await;
    assert_eq!(
        shown["family"],
        json!({ &child: {"title": "Write the tests", "status": "closed", "state": "state/done"} }),
        "{shown}"
    );
    // A task with neither has no family.
    let shown = ok(
        &mcp,
        "git_mile.show",
        json!({"entity": "task", "id": alone}),
    )
    .await;
    assert!(shown.get("family").is_none(), "{shown}");
    // A write answers the task as show does: with its family.
    let written = ok(
        &mcp,
        "git_mile.update",
        json!({"entity": "task", "id": child, "addLabels": ["reviewed"]}),
    )
    .await;
    assert_eq!(
        written["family"][&parent]["title"], "Other parent",
        "{written}"
    );
    drop(mcp);

    // The CLI: one line a parent or child, named.
    let text = sandbox.mile_ok(&repo, &["show", &child]);
    assert!(
        text.contains(&format!("parent: {parent}  Other parent  [open]\n")),
        "{text}"
    );
    let text = sandbox.mile_ok(&repo, &["show", &parent]);
    assert!(
        text.contains(&format!(
            "child: {child}  Write the tests  [closed]  <state/done>\n"
        )),
        "{text}"
    );
    let json = sandbox.mile_json(&repo, &["show", &child]);
    assert_eq!(json["family"][&parent]["status"], "open", "{json}");
}
