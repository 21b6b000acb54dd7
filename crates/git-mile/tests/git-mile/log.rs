//! `git_mile.log` and `git mile log` (issue 48, item 3): the events of an issue, a milestone
//! or a task, newest first, paged by cursor, texts cut; a task's events this version cannot
//! read listed as unknown.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // assertions in tests

use serde_json::{Value, json};

use crate::support::world::{i, m};
use crate::support::{Sandbox, data_of, ok, rpc_error, world_repo};
use crate::tasks::{BAD_SCHEMA, P, upstream_repo};

fn event_ids(page: &Value) -> Vec<String> {
    page["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["event"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn an_issues_events_newest_first_page_by_page() {
    let sandbox = Sandbox::new();
    let repo = world_repo(&sandbox, "repo");
    let mcp = sandbox.server(&repo, &[]).await;
    let all = ok(
        &mcp,
        "git_mile.log",
        json!({"entity": "issue", "id": i(1), "limit": 200}),
    )
    .await;
    let total = all["total"].as_u64().unwrap() as usize;
    assert!(total >= 3, "{all}");
    assert_eq!(all["entity"], "issue");
    assert_eq!(all["id"], i(1));
    assert_eq!(all["nextCursor"], Value::Null);
    let events = all["events"].as_array().unwrap();
    assert_eq!(events.len(), total);
    assert_eq!(events.last().unwrap()["type"], "created");
    // Newest first.
    let times: Vec<&str> = events.iter().map(|e| e["ts"].as_str().unwrap()).collect();
    let mut sorted = times.clone();
    sorted.sort_unstable_by(|a, b| b.cmp(a));
    assert_eq!(times, sorted);
    for e in events {
        assert!(e["actor"].as_str().unwrap().contains(" <"), "{e}");
        assert!(e["change"].is_object(), "{e}");
        assert!(e.get("lamport").is_none(), "{e}");
    }

    // Page by page: the same events, none twice.
    let mut paged = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut args = json!({"entity": "issue", "id": i(1), "limit": 1});
        if let Some(c) = &cursor {
            args["cursor"] = json!(c);
        }
        let page = ok(&mcp, "git_mile.log", args).await;
        paged.extend(event_ids(&page));
        match page["nextCursor"].as_str() {
            Some(next) => cursor = Some(next.to_string()),
            None => break,
        }
    }
    assert_eq!(paged, event_ids(&all));

    // A cursor of another log, a bad limit, an unknown id.
    let first = ok(
        &mcp,
        "git_mile.log",
        json!({"entity": "issue", "id": i(1), "limit": 1}),
    )
    .await;
    let cursor = first["nextCursor"].as_str().unwrap();
    let error = rpc_error(
        &mcp,
        "git_mile.log",
        json!({"entity": "issue", "id": i(2), "cursor": cursor}),
    )
    .await;
    assert_eq!(error.code.0, -32602);
    assert_eq!(data_of(&error).code, "invalid_cursor");
    assert!(error.message.contains("another log"), "{error:?}");
    let error = rpc_error(
        &mcp,
        "git_mile.log",
        json!({"entity": "issue", "id": i(1), "limit": 0}),
    )
    .await;
    assert_eq!(data_of(&error).code, "invalid_limit");
    let result = crate::support::call_raw(
        &mcp,
        "git_mile.log",
        json!({"entity": "milestone", "id": i(1)}),
    )
    .await
    .unwrap();
    assert_eq!(crate::support::error_object(&result)["code"], "not_found");

    // Long texts are cut, and said to be.
    let long = "x".repeat(5_000);
    let created = ok(
        &mcp,
        "git_mile.create",
        json!({"entity": "issue", "title": "Long", "description": long}),
    )
    .await;
    let id = created["id"].as_str().unwrap();
    let log = ok(&mcp, "git_mile.log", json!({"entity": "issue", "id": id})).await;
    let entry = &log["events"][0];
    assert_eq!(entry["type"], "created");
    assert_eq!(entry["clipped"], true);
    assert_eq!(
        entry["change"]["description"]
            .as_str()
            .unwrap()
            .chars()
            .count(),
        200
    );
    assert_eq!(entry["actor"], "Ann Example <ann@example.com>");
    mcp.shutdown().await;

    // The CLI: a milestone's, whichever kind the id names.
    let page = sandbox.mile_json(&repo, &["log", &m(1)]);
    assert_eq!(page["entity"], "milestone");
    let text = sandbox.mile_ok(&repo, &["log", &i(1), "--limit", "1"]);
    assert!(text.starts_with(&format!("issue {}: ", i(1))), "{text}");
    assert!(text.contains("more: --cursor "), "{text}");
}

#[tokio::test]
async fn a_tasks_events_unknown_ones_included() {
    let sandbox = Sandbox::new();
    let repo = upstream_repo(&sandbox);
    let mcp = sandbox.server(&repo, &[]).await;
    let log = ok(&mcp, "git_mile.log", json!({"entity": "task", "id": P})).await;
    let events = log["events"].as_array().unwrap();
    assert_eq!(log["total"].as_u64().unwrap() as usize, events.len());
    // Upstream's order reversed: by lamport, newest first.
    let lamports: Vec<u64> = events
        .iter()
        .map(|e| e["lamport"].as_u64().unwrap())
        .collect();
    let mut sorted = lamports.clone();
    sorted.sort_unstable_by(|a, b| b.cmp(a));
    assert_eq!(lamports, sorted);
    assert_eq!(events.last().unwrap()["type"], "taskCreated");
    assert!(events.iter().any(|e| e["type"] == "commentUpdated"));

    // A task holding an event of a later schema: listed, said to be unknown, kept.
    let log = ok(
        &mcp,
        "git_mile.log",
        json!({"entity": "task", "id": BAD_SCHEMA}),
    )
    .await;
    let unknown: Vec<&Value> = log["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e.get("unknown").is_some())
        .collect();
    assert_eq!(unknown.len(), 1, "{log}");
    assert!(
        unknown[0]["unknown"]
            .as_str()
            .unwrap()
            .contains("git-mile-event@7"),
        "{log}"
    );
    assert_eq!(unknown[0]["change"]["schema"], "git-mile-event@7");
    mcp.shutdown().await;
    let text = sandbox.mile_ok(&repo, &["log", BAD_SCHEMA]);
    assert!(text.contains("unknown to this version"), "{text}");
}
