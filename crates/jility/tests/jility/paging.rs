//! Paging of the three list tools: `limit`, signed cursors bound to their query, the
//! `page` object, and cursors shared by the CLI and every server on the same database.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // assertions in tests

use crate::support;

use jility_core::errors;
use serde_json::{Value, json};
use support::*;

/// Walk `tool` with `args` in pages of `limit`; every page's data and the totals.
async fn walk(
    mcp: &mcp_testkit::McpProcess,
    tool: &str,
    args: Value,
    limit: u64,
) -> (Vec<Value>, Vec<u64>) {
    let mut pages = Vec::new();
    let mut totals = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut call = args.clone();
        call["limit"] = json!(limit);
        if let Some(c) = &cursor {
            call["cursor"] = json!(c);
        }
        let (data, page) = mcp.list(tool, call).await;
        pages.push(data);
        totals.push(page.total);
        match page.next_cursor {
            Some(c) => cursor = Some(c),
            None => break,
        }
        assert!(pages.len() < 50, "paging does not end");
    }
    (pages, totals)
}

#[tokio::test]
async fn search_and_templates_page_too() {
    let p = Project::new();
    let mcp = p.start().await;
    for i in 1..=5 {
        mcp.create(&format!("Walrus number {i}")).await;
    }
    mcp.create("Something else").await;
    let (pages, totals) = walk(&mcp, "jility_search_tickets", json!({"query": "walrus"}), 2).await;
    assert_eq!(pages.len(), 3);
    assert_eq!(totals, [5, 5, 5]);
    let mut seen: Vec<String> = pages.iter().flat_map(|p| numbers(&p["hits"])).collect();
    assert_eq!(seen.len(), 5, "no hit twice: {seen:?}");
    seen.sort();
    seen.dedup();
    assert_eq!(seen, ["TASK-1", "TASK-2", "TASK-3", "TASK-4", "TASK-5"]);
    let (text, _, page) = mcp
        .paged(
            "jility_search_tickets",
            json!({"query": "walrus", "limit": 2}),
        )
        .await;
    let cursor = page.next_cursor.unwrap();
    assert!(
        text.ends_with(&format!(
            "More: pass cursor \"{cursor}\" for the next page."
        )),
        "{text}"
    );

    p.write(
        ".jility/templates/spike.md",
        "# Spike: {{topic}}\n\nFind out.\n",
    );
    let (pages, totals) = walk(&mcp, "jility_list_templates", json!({}), 2).await;
    assert_eq!(pages.len(), 3);
    assert_eq!(totals, [6, 6, 6]);
    let names: Vec<String> = pages
        .iter()
        .flat_map(|p| p["templates"].as_array().unwrap().clone())
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        names,
        [
            "api-endpoint",
            "database-migration",
            "react-component",
            "bug-fix",
            "refactor",
            "spike"
        ]
    );
    let (_, page) = mcp.list("jility_list_templates", json!({})).await;
    assert_eq!(page.total, 6);
    assert!(page.next_cursor.is_none());
}

#[tokio::test]
async fn bad_limits_and_cursors_are_invalid_params() {
    let p = Project::new();
    let mcp = p.start().await;
    for i in 1..=3 {
        mcp.create_with(json!({"title": format!("Ticket {i}"), "status": "todo"}))
            .await;
    }
    let tools = [
        ("jility_list_tickets", json!({}), 200),
        ("jility_search_tickets", json!({"query": "ticket"}), 100),
        ("jility_list_templates", json!({}), 200),
    ];
    for (tool, args, max) in &tools {
        // Out-of-range limits.
        for limit in [json!(0), json!(-1), json!(max + 1)] {
            let mut call = args.clone();
            call["limit"] = limit.clone();
            let (_, e) = mcp.err(tool, call).await;
            assert_eq!(e.code, errors::INVALID_PARAMS, "{tool} limit {limit}");
            assert!(e.message.contains("limit"), "{tool}: {}", e.message);
            assert!(!e.retryable);
        }
        let mut call = args.clone();
        call["limit"] = json!(max);
        mcp.list(tool, call).await;

        // A genuine cursor, then forged ones.
        let mut first = args.clone();
        first["limit"] = json!(1);
        let (_, page) = mcp.list(tool, first.clone()).await;
        let cursor = page
            .next_cursor
            .unwrap_or_else(|| panic!("{tool}: one page"));
        let mut altered: Vec<char> = cursor.chars().collect();
        let last = altered.len() - 3;
        altered[last] = if altered[last] == 'A' { 'B' } else { 'A' };
        let altered: String = altered.into_iter().collect();
        for forged in ["bogus", "t5", &altered, ""] {
            let mut call = first.clone();
            call["cursor"] = json!(forged);
            let (_, e) = mcp.err(tool, call).await;
            assert_eq!(e.code, errors::INVALID_PARAMS, "{tool} cursor {forged:?}");
            assert!(e.hint.contains("next_cursor"), "{tool}: {}", e.hint);
        }
        let mut call = first.clone();
        call["cursor"] = json!(cursor);
        mcp.list(tool, call).await;
    }

    // A cursor of another query.
    let (_, page) = mcp
        .list(
            "jility_list_tickets",
            json!({"status": ["todo"], "limit": 1}),
        )
        .await;
    let todo_cursor = page.next_cursor.unwrap();
    for other in [
        json!({}),
        json!({"status": ["backlog"]}),
        json!({"status": ["todo"], "unassigned": true}),
    ] {
        let mut call = other.clone();
        call["cursor"] = json!(todo_cursor);
        let (_, e) = mcp.err("jility_list_tickets", call).await;
        assert_eq!(e.code, errors::INVALID_PARAMS, "{other}");
        assert!(e.message.contains("different"), "{}", e.message);
    }
    // The same query spelled differently is the same query; only limit may change.
    let (page, _) = mcp
        .list(
            "jility_list_tickets",
            json!({"status": ["todo", "todo"], "limit": 5, "cursor": todo_cursor}),
        )
        .await;
    assert_eq!(numbers(&page["tickets"]), ["TASK-2", "TASK-1"]);

    let (_, page) = mcp
        .list(
            "jility_search_tickets",
            json!({"query": "ticket", "limit": 1}),
        )
        .await;
    let search_cursor = page.next_cursor.unwrap();
    let (_, e) = mcp
        .err(
            "jility_search_tickets",
            json!({"query": "other words", "cursor": search_cursor}),
        )
        .await;
    assert_eq!(e.code, errors::INVALID_PARAMS);
    // A cursor of one tool is refused by another.
    let (_, e) = mcp
        .err("jility_list_templates", json!({"cursor": todo_cursor}))
        .await;
    assert_eq!(e.code, errors::INVALID_PARAMS);
    let (_, e) = mcp
        .err(
            "jility_search_tickets",
            json!({"query": "ticket", "cursor": todo_cursor}),
        )
        .await;
    assert_eq!(e.code, errors::INVALID_PARAMS);
    // The CLI refuses them the same way.
    let e = p.json_err(&["ticket", "list", "--cursor", "bogus"]);
    assert_eq!(e.code, errors::INVALID_PARAMS);
    let e = p.json_err(&["template", "list", "--limit", "0"]);
    assert_eq!(e.code, errors::INVALID_PARAMS);
}

/// Cursors are sealed with a key derived from the database file: the CLI and the server
/// accept each other's, also after a restart; another database's are refused.
#[tokio::test]
async fn cursors_are_shared_by_the_cli_and_servers_of_one_database() {
    let p = Project::new();
    p.init("TASK");
    for i in 1..=4 {
        p.json(&["ticket", "create", "--title", &format!("Ticket {i}")]);
    }
    let v = p.json(&["ticket", "list", "--limit", "1"]);
    assert_eq!(numbers(&v["tickets"]), ["TASK-4"]);
    assert_eq!(v["page"]["total"], 4);
    let from_cli = v["page"]["next_cursor"].as_str().unwrap().to_string();

    let mcp = p.start().await;
    let (page, info) = mcp
        .list(
            "jility_list_tickets",
            json!({"limit": 1, "cursor": from_cli}),
        )
        .await;
    assert_eq!(numbers(&page["tickets"]), ["TASK-3"]);
    let from_server = info.next_cursor.unwrap();
    mcp.shutdown().await;

    let v = p.json(&["ticket", "list", "--limit", "1", "--cursor", &from_server]);
    assert_eq!(numbers(&v["tickets"]), ["TASK-2"]);
    let restarted = p.start().await;
    let (page, _) = restarted
        .list(
            "jility_list_tickets",
            json!({"limit": 1, "cursor": from_server}),
        )
        .await;
    assert_eq!(numbers(&page["tickets"]), ["TASK-2"]);
    restarted.shutdown().await;

    let v = p.json(&["ticket", "search", "ticket", "--limit", "3"]);
    assert_eq!(v["hits"].as_array().unwrap().len(), 3);
    assert_eq!(v["page"]["total"], 4);
    let cursor = v["page"]["next_cursor"].as_str().unwrap();
    let v = p.json(&[
        "ticket", "search", "ticket", "--limit", "3", "--cursor", cursor,
    ]);
    assert_eq!(v["hits"].as_array().unwrap().len(), 1);
    assert!(v["page"].get("next_cursor").is_none());

    // Another project's database does not take this one's cursors.
    let other = Project::new();
    other.init("TASK");
    for i in 1..=4 {
        other.json(&["ticket", "create", "--title", &format!("Other {i}")]);
    }
    let e = other.json_err(&["ticket", "list", "--limit", "1", "--cursor", &from_server]);
    assert_eq!(e.code, errors::INVALID_PARAMS);
}
