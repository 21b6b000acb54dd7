//! `jility --mcp-server --http ADDR` (Streamable HTTP at /mcp), and what both transports owe
//! each other: a call waiting for the database holds up no other request.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // assertions in tests

use crate::support;

use jility_core::errors;
use mcp_testkit::{McpProcess, Wire};
use serde_json::{Value, json};
use support::*;

#[tokio::test]
async fn http_serves_the_tools_with_the_same_envelopes() {
    let p = Project::new();
    let mcp = start_over(Wire::Http, p.root(), &[], &[("JILITY_ACTOR", AGENT)]).await;
    assert!(mcp.url().unwrap().ends_with("/mcp"), "{:?}", mcp.url());
    // Handshake.
    let info = mcp.server_info();
    assert_eq!(
        info.server_info.as_ref().expect("serverInfo").name,
        "jility"
    );
    assert!(
        info.instructions
            .as_deref()
            .is_some_and(|i| i.contains("jility_list_tickets"))
    );
    assert_eq!(mcp.tools().await.len(), 39);

    // A write, then a read of it.
    let n = mcp
        .create_with(json!({"title": "Over HTTP", "labels": ["web"], "story_points": 3}))
        .await;
    assert_eq!(n, "TASK-1");
    let t = mcp.ticket(&n).await;
    assert_eq!(t["title"], "Over HTTP");
    assert_eq!(t["created_by"], AGENT);
    assert_eq!(t["labels"], json!(["web"]));

    // An error result: a conflict, with its hint, not retryable.
    mcp.data(
        "jility_assign_ticket",
        json!({"ticket_id": n, "assignees": ["alice"]}),
    )
    .await;
    let (text, e) = mcp
        .err("jility_claim_ticket", json!({"ticket_id": n}))
        .await;
    assert_eq!(e.code, errors::ALREADY_ASSIGNED);
    assert!(!e.retryable);
    assert!(!e.hint.is_empty());
    assert!(text.starts_with("❌ Error: "), "{text}");
    let (_, e) = mcp
        .err("jility_get_ticket", json!({"ticket_id": "TASK-99"}))
        .await;
    assert_eq!(e.code, errors::NOT_FOUND);
    assert!(!e.retryable);

    // A paged walk: 7 tickets in pages of 3.
    for i in 2..=7 {
        mcp.create(&format!("Ticket {i}")).await;
    }
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let mut args = json!({"limit": 3});
        if let Some(c) = &cursor {
            args["cursor"] = json!(c);
        }
        let (page, info) = mcp.list("jility_list_tickets", args).await;
        pages += 1;
        assert_eq!(info.total, 7);
        seen.extend(numbers(&page["tickets"]));
        match info.next_cursor {
            Some(c) => cursor = Some(c),
            None => break,
        }
    }
    assert_eq!(pages, 3);
    let expected: Vec<String> = (1..=7).rev().map(|i| format!("TASK-{i}")).collect();
    assert_eq!(seen, expected);
    mcp.shutdown().await;
}

/// Without JILITY_ACTOR the actor is each HTTP session's client name from its handshake,
/// and a cursor made in one session pages on in another (one key per server).
#[tokio::test]
async fn http_sessions_have_their_own_actor_and_share_cursors() {
    let p = Project::new();
    let first = start_over(Wire::Http, p.root(), &[], &[]).await;
    let second = McpProcess::connect_http(first.url().unwrap(), None)
        .await
        .unwrap();
    let a = first.create("From the first session").await;
    let b = second.create("From the second session").await;
    assert_eq!(first.ticket(&a).await["created_by"], "mcp-testkit");
    assert_eq!(second.ticket(&b).await["created_by"], "mcp-testkit");

    let (page, info) = first.list("jility_list_tickets", json!({"limit": 1})).await;
    assert_eq!(numbers(&page["tickets"]), ["TASK-2"]);
    let (page, info) = second
        .list(
            "jility_list_tickets",
            json!({"limit": 1, "cursor": info.next_cursor.unwrap()}),
        )
        .await;
    assert_eq!(numbers(&page["tickets"]), ["TASK-1"]);
    assert!(info.next_cursor.is_none());
    first.shutdown().await;
}

/// Hold the database's write lock the way another process would: a connection of its own
/// in an IMMEDIATE transaction.
fn hold_write_lock(db: &std::path::Path) -> rusqlite::Connection {
    let conn = rusqlite::Connection::open(db).unwrap();
    conn.execute_batch("BEGIN IMMEDIATE").unwrap();
    conn
}

/// While one call waits for the database's write lock (SQLite's busy timeout is 30 s), the
/// server answers `ping`, reads, and (over HTTP) other sessions; the waiting call completes
/// once the lock is released.
async fn a_call_waiting_for_the_database_holds_up_nothing_else(wire: Wire) {
    let p = Project::new();
    let mcp = start_over(wire, p.root(), &[], &[("JILITY_ACTOR", AGENT)]).await;
    let n = mcp.create("Before the lock").await;
    let other = match wire {
        Wire::Http => Some(
            McpProcess::connect_http(mcp.url().unwrap(), None)
                .await
                .unwrap(),
        ),
        Wire::Stdio => None,
    };

    let lock = hold_write_lock(&p.db());
    let mut waiting =
        Box::pin(mcp.call("jility_create_ticket", json!({"title": "After the lock"})));
    // `biased`: the waiting call is sent first; every answer below must arrive while it is
    // still pending.
    tokio::select! {
        biased;
        r = &mut waiting => panic!("the write finished while the lock was held: {r:?}"),
        () = mcp.ping() => {}
    }
    tokio::select! {
        biased;
        r = &mut waiting => panic!("the write finished while the lock was held: {r:?}"),
        t = mcp.ticket(&n) => assert_eq!(t["title"], "Before the lock"),
    }
    if let Some(other) = &other {
        tokio::select! {
            biased;
            r = &mut waiting => panic!("the write finished while the lock was held: {r:?}"),
            (page, info) = other.list("jility_list_tickets", json!({})) => {
                assert_eq!(info.total, 1);
                assert_eq!(numbers(&page["tickets"]), [n.as_str()]);
            }
        }
        tokio::select! {
            biased;
            r = &mut waiting => panic!("the write finished while the lock was held: {r:?}"),
            () = other.ping() => {}
        }
    }

    lock.execute_batch("COMMIT").unwrap();
    let result = waiting.await;
    assert_eq!(result.is_error, Some(false), "{result:?}");
    let data: Value = result.structured_content.unwrap()["data"].clone();
    assert_eq!(data["ticket"]["number"], "TASK-2");
    assert_eq!(mcp.ticket("TASK-2").await["title"], "After the lock");
    mcp.shutdown().await;
}

#[tokio::test]
async fn over_stdio_a_call_waiting_for_the_database_holds_up_nothing_else() {
    a_call_waiting_for_the_database_holds_up_nothing_else(Wire::Stdio).await;
}

#[tokio::test]
async fn over_http_a_call_waiting_for_the_database_holds_up_nothing_else() {
    a_call_waiting_for_the_database_holds_up_nothing_else(Wire::Http).await;
}

#[test]
fn http_needs_mcp_server_and_a_token_off_loopback() {
    let p = Project::new();
    let out = run(p.root(), &[], &["--http", "127.0.0.1:0"]);
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(out.stderr.contains("--mcp-server"), "{out:?}");
    let out = run(p.root(), &[], &["--mcp-server", "--http", "0.0.0.0:0"]);
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(out.stderr.contains("MCP_HTTP_TOKEN"), "{out:?}");
    assert!(!p.path(".jility").exists(), "nothing was created");
}
