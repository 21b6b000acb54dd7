//! `jility --mcp-server` through the built binary and rmcp's client: the protocol, every
//! tool's markdown and data, every error code, description editing, listings, batches and
//! search.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // assertions in tests

use crate::support;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use jility_core::errors;
use serde_json::{Value, json};
use support::*;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

const TOOLS: [&str; 39] = [
    "jility_add_comment",
    "jility_add_dependency",
    "jility_add_to_sprint",
    "jility_assign_ticket",
    "jility_bulk_assign",
    "jility_bulk_update",
    "jility_claim_ticket",
    "jility_complete_sprint",
    "jility_create_from_template",
    "jility_create_sprint",
    "jility_create_ticket",
    "jility_create_tickets_batch",
    "jility_delete_ticket",
    "jility_delete_view",
    "jility_estimate_effort",
    "jility_get_dependency_graph",
    "jility_get_epic",
    "jility_get_ticket",
    "jility_get_ticket_history",
    "jility_link_commit",
    "jility_list_epics",
    "jility_list_notifications",
    "jility_list_sprints",
    "jility_list_templates",
    "jility_list_tickets",
    "jility_list_views",
    "jility_mark_notifications_read",
    "jility_plan_sprint",
    "jility_remove_dependency",
    "jility_remove_from_sprint",
    "jility_revert_description",
    "jility_save_view",
    "jility_search_tickets",
    "jility_sprint_stats",
    "jility_start_sprint",
    "jility_suggest_related",
    "jility_update_description",
    "jility_update_status",
    "jility_watch_ticket",
];

fn set(items: &[&str]) -> BTreeSet<String> {
    items.iter().map(|s| s.to_string()).collect()
}

/// The numbers a listing with these arguments shows (one page).
async fn listed(mcp: &mcp_testkit::McpProcess, args: Value) -> BTreeSet<String> {
    let (page, _) = mcp.list("jility_list_tickets", args).await;
    numbers(&page["tickets"]).into_iter().collect()
}

// ---------------------------------------------------------------------------------------
// Protocol

#[tokio::test]
async fn handshake_names_jility_and_gives_instructions() {
    let p = Project::new();
    let mcp = p.start().await;
    let info = mcp.server_info();
    let server = info.server_info.as_ref().expect("serverInfo");
    assert_eq!(server.name, "jility");
    assert_eq!(server.version, env!("CARGO_PKG_VERSION"));
    let instructions = info.instructions.expect("instructions");
    for needle in [
        "KEY-N",
        "jility_list_tickets",
        "jility_claim_ticket",
        "jility_update_description",
        "jility_get_ticket_history",
    ] {
        assert!(instructions.contains(needle), "{needle}: {instructions}");
    }
    let names: Vec<String> = mcp
        .tools()
        .await
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    assert_eq!(names, TOOLS);
    mcp.ping().await;
}

/// Any change to what clients see of the tools must be deliberate: regenerate with
/// `UPDATE_SNAPSHOTS=1 cargo test -p jility --test jility mcp::`.
#[tokio::test]
async fn tool_list_matches_the_snapshot() {
    let p = Project::new();
    let mcp = p.start().await;
    let tools = mcp.tools().await;
    // The tools are the operations table's (a row without its tool, or a tool without its row,
    // fails here): same names, read-only exactly for the GET routes, paged exactly for the
    // operations whose answer is a page.
    let table: Vec<_> = jility_core::ops::table()
        .iter()
        .filter(|op| op.tool)
        .collect();
    let mut listed: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    let mut declared: Vec<&str> = table.iter().map(|op| op.name).collect();
    listed.sort_unstable();
    declared.sort_unstable();
    assert_eq!(listed, declared, "the MCP tools are the table's");
    for tool in &tools {
        let row = table.iter().find(|op| op.name == tool.name).unwrap();
        let schema = tool.output_schema.as_ref().expect("outputSchema");
        assert_eq!(schema.get("type"), Some(&json!("object")), "{}", tool.name);
        let props = schema["properties"].as_object().unwrap();
        let keys: Vec<&String> = props.keys().collect();
        if row.paged {
            assert_eq!(keys, ["data", "page", "status"], "{}", tool.name);
            let input = tool.input_schema["properties"].as_object().unwrap();
            assert!(
                input.contains_key("limit") && input.contains_key("cursor"),
                "{}: every list tool pages",
                tool.name
            );
        } else {
            assert_eq!(keys, ["data", "status"], "{}", tool.name);
        }
        assert!(
            tool.description.as_deref().is_some_and(|d| !d.is_empty()),
            "{}",
            tool.name
        );
        let annotations = tool.annotations.as_ref().expect("annotations");
        let read_only = row.verb == jility_core::ops::Verb::Get;
        // A write's `readOnlyHint: false` is the specification's default, left out.
        assert_eq!(
            annotations.read_only_hint.unwrap_or(false),
            read_only,
            "{}",
            tool.name
        );
        assert!(
            tool.title.is_some() && tool.icons.is_some(),
            "{}: a title and an icon",
            tool.name
        );
        assert_eq!(annotations.open_world_hint, Some(false), "{}", tool.name);
    }
    mcp.assert_tools_snapshot(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots/tools.json"),
    )
    .await;
}

/// One successful and one failing call of every tool: the structured content is exactly the
/// envelope, matches the tool's outputSchema, and `isError` and the text agree with it.
#[tokio::test]
async fn every_tool_answers_with_an_envelope_matching_its_output_schema() {
    let p = Project::new();
    let mcp = p.start().await;
    let schemas: BTreeMap<String, Value> = mcp
        .tools()
        .await
        .into_iter()
        .map(|t| {
            let schema = Value::Object(t.output_schema.unwrap().as_ref().clone());
            (t.name.to_string(), schema)
        })
        .collect();
    let good: Vec<(&str, Value)> = vec![
        (
            "jility_create_ticket",
            json!({"title": "First", "description": "## Notes\n\nold\n", "story_points": 2}),
        ),
        (
            "jility_create_tickets_batch",
            json!({"tickets": [{"title": "Second"}, {"title": "Third", "depends_on": ["#1"]}]}),
        ),
        ("jility_get_ticket", json!({"ticket_id": "TASK-1"})),
        ("jility_list_tickets", json!({})),
        ("jility_claim_ticket", json!({"ticket_id": "TASK-1"})),
        (
            "jility_update_description",
            json!({"ticket_id": "TASK-1", "operation": "replace_section",
                   "section_header": "## Notes", "content": "new", "message": "m"}),
        ),
        (
            "jility_update_status",
            json!({"ticket_id": "TASK-1", "status": "review"}),
        ),
        (
            "jility_add_comment",
            json!({"ticket_id": "TASK-1", "content": "hello"}),
        ),
        (
            "jility_assign_ticket",
            json!({"ticket_id": "TASK-2", "assignees": ["bob"], "message": "yours"}),
        ),
        (
            "jility_link_commit",
            json!({"ticket_id": "TASK-1", "commit_hash": "abc123f"}),
        ),
        (
            "jility_add_dependency",
            json!({"ticket_id": "TASK-1", "depends_on": "TASK-2"}),
        ),
        (
            "jility_remove_dependency",
            json!({"ticket_id": "TASK-1", "depends_on": "TASK-2"}),
        ),
        (
            "jility_get_dependency_graph",
            json!({"ticket_id": "TASK-3"}),
        ),
        ("jility_list_templates", json!({})),
        (
            "jility_create_from_template",
            json!({"template": "bug-fix", "variables": {"summary": "crash"}}),
        ),
        ("jility_search_tickets", json!({"query": "first"})),
        ("jility_get_ticket_history", json!({"ticket_id": "TASK-1"})),
        (
            "jility_revert_description",
            json!({"ticket_id": "TASK-1", "version": 1}),
        ),
        (
            "jility_create_ticket",
            json!({"title": "Epic", "kind": "epic"}),
        ),
        ("jility_list_epics", json!({})),
        ("jility_get_epic", json!({"epic_id": "TASK-5"})),
        (
            "jility_create_sprint",
            json!({"name": "S1", "starts_on": "2026-12-07", "ends_on": "2026-12-18", "capacity_points": 5}),
        ),
        (
            "jility_create_sprint",
            json!({"name": "S2", "starts_on": "2026-12-21", "ends_on": "2026-12-31"}),
        ),
        ("jility_plan_sprint", json!({"sprint": "S1"})),
        (
            "jility_add_to_sprint",
            json!({"sprint": "S1", "tickets": ["TASK-2", "TASK-3"]}),
        ),
        (
            "jility_remove_from_sprint",
            json!({"sprint": "S1", "tickets": ["TASK-3"]}),
        ),
        ("jility_start_sprint", json!({"sprint": "S1"})),
        ("jility_list_sprints", json!({})),
        ("jility_sprint_stats", json!({"sprint": "S1"})),
        (
            "jility_complete_sprint",
            json!({"sprint": "S1", "carry_over_to": "S2"}),
        ),
        (
            "jility_save_view",
            json!({"name": "mine", "query": "is:open sort:updated-desc", "shared": true}),
        ),
        ("jility_list_views", json!({})),
        ("jility_delete_view", json!({"name": "mine"})),
        (
            "jility_bulk_update",
            json!({"query": "is:open", "set": {"add_labels": ["swept"]}, "dry_run": true}),
        ),
        (
            "jility_bulk_assign",
            json!({"tickets": ["TASK-2"], "assignees": ["carol"]}),
        ),
        ("jility_suggest_related", json!({"ticket_id": "TASK-2"})),
        (
            "jility_estimate_effort",
            json!({"title": "Fix the login page"}),
        ),
    ];
    let bad: Vec<(&str, Value)> = vec![
        ("jility_create_ticket", json!({"title": ""})),
        ("jility_create_tickets_batch", json!({"tickets": []})),
        ("jility_get_ticket", json!({"ticket_id": "TASK-99"})),
        ("jility_list_tickets", json!({"limit": 0})),
        ("jility_claim_ticket", json!({"ticket_id": "TASK-99"})),
        (
            "jility_update_description",
            json!({"ticket_id": "TASK-1", "operation": "replace_lines", "content": "x",
                   "start_line": 50, "end_line": 60}),
        ),
        (
            "jility_update_status",
            json!({"ticket_id": "TASK-1", "status": "finished"}),
        ),
        (
            "jility_add_comment",
            json!({"ticket_id": "TASK-1", "content": " "}),
        ),
        (
            "jility_assign_ticket",
            json!({"ticket_id": "TASK-1", "assignees": [""]}),
        ),
        (
            "jility_link_commit",
            json!({"ticket_id": "TASK-1", "commit_hash": "zz"}),
        ),
        (
            "jility_add_dependency",
            json!({"ticket_id": "TASK-1", "depends_on": "TASK-1"}),
        ),
        (
            "jility_remove_dependency",
            json!({"ticket_id": "TASK-1", "depends_on": "TASK-3"}),
        ),
        ("jility_get_dependency_graph", json!({"ticket_id": "nope"})),
        ("jility_list_templates", json!({"unexpected": true})),
        (
            "jility_create_from_template",
            json!({"template": "nope", "variables": {}}),
        ),
        ("jility_search_tickets", json!({"query": "**"})),
        ("jility_get_ticket_history", json!({"ticket_id": "TASK-99"})),
        (
            "jility_revert_description",
            json!({"ticket_id": "TASK-1", "version": 99}),
        ),
        ("jility_list_epics", json!({"limit": 0})),
        ("jility_get_epic", json!({"epic_id": "TASK-1"})),
        (
            "jility_create_sprint",
            json!({"name": "S3", "starts_on": "2026-12-18", "ends_on": "2026-12-07"}),
        ),
        (
            "jility_add_to_sprint",
            json!({"sprint": "S1", "tickets": ["TASK-2"]}),
        ),
        (
            "jility_remove_from_sprint",
            json!({"sprint": "nope", "tickets": ["TASK-2"]}),
        ),
        ("jility_start_sprint", json!({"sprint": "S1"})),
        ("jility_complete_sprint", json!({"sprint": "S2"})),
        ("jility_list_sprints", json!({"state": ["finished"]})),
        ("jility_sprint_stats", json!({"sprint": "nope"})),
        ("jility_plan_sprint", json!({"sprint": "S1"})),
        (
            "jility_save_view",
            json!({"name": "x", "query": "colour:red"}),
        ),
        ("jility_list_views", json!({"unexpected": true})),
        ("jility_delete_view", json!({"name": "nope"})),
        (
            "jility_bulk_update",
            json!({"query": "is:open", "set": {"status": "done"}}),
        ),
        ("jility_bulk_assign", json!({"assignees": ["x"]})),
        ("jility_suggest_related", json!({})),
        ("jility_estimate_effort", json!({"ticket_id": "TASK-99"})),
    ];
    let mut seen_ok = BTreeSet::new();
    let mut seen_err = BTreeSet::new();
    for (calls, expect_error) in [(good, false), (bad, true)] {
        for (tool, args) in calls {
            let result = mcp.call(tool, args.clone()).await;
            let structured = result
                .structured_content
                .clone()
                .unwrap_or_else(|| panic!("{tool}: no structuredContent"));
            let keys: Vec<&String> = structured.as_object().unwrap().keys().collect();
            let text = result.content[0].as_text().unwrap().text.clone();
            if expect_error {
                assert_eq!(result.is_error, Some(true), "{tool} {args}: {structured}");
                assert_eq!(structured["status"], "error", "{tool}");
                assert_eq!(keys, ["error", "status"], "{tool}");
                assert!(text.starts_with("❌ Error: "), "{tool}: {text}");
                assert!(
                    text.contains(structured["error"]["message"].as_str().unwrap()),
                    "{tool}: {text}"
                );
                seen_err.insert(tool);
            } else {
                assert_ne!(result.is_error, Some(true), "{tool} {args}: {structured}");
                assert_eq!(structured["status"], "ok", "{tool}");
                let paged = [
                    "jility_list_tickets",
                    "jility_search_tickets",
                    "jility_list_templates",
                    "jility_list_epics",
                    "jility_get_epic",
                    "jility_list_sprints",
                ]
                .contains(&tool);
                if paged {
                    assert_eq!(keys, ["data", "page", "status"], "{tool}");
                } else {
                    assert_eq!(keys, ["data", "status"], "{tool}");
                }
                assert!(
                    text.starts_with([
                        '✅', '📋', '#', '🔗', '🔍', '📜', '🗂', '🏁', '🏃', '📈', '🧭', '🔖', '🗑',
                        '🔎', '📏'
                    ]),
                    "{tool}: {text}"
                );
                seen_ok.insert(tool);
            }
            check_schema(&schemas[tool], &structured)
                .unwrap_or_else(|e| panic!("{tool}: {e}\n{structured:#}"));
        }
    }
    assert_eq!(seen_ok.len(), 35);
    assert_eq!(seen_err.len(), 35);
}

/// The schema check used above is not vacuous: it refuses envelopes of the wrong shape
/// (its answer's own fields, their types and the fields it always has).
#[tokio::test]
async fn the_schema_check_refuses_wrong_shapes() {
    let p = Project::new();
    let mcp = p.start().await;
    let tool = mcp
        .tools()
        .await
        .into_iter()
        .find(|t| t.name == "jility_claim_ticket")
        .unwrap();
    let schema = Value::Object(tool.output_schema.unwrap().as_ref().clone());
    let good = json!({"status": "ok", "data": {
        "ticket": {"number": "TASK-1", "title": "t", "status": "todo"},
        "assignee": "a", "previous_status": "backlog", "already_claimed": false, "story_points": 3}});
    check_schema(&schema, &good).unwrap();
    check_schema(
        &schema,
        &json!({"status": "error", "error": {"code": "not_found", "message": "m", "hint": "h", "retryable": false}}),
    )
    .unwrap();
    // The answer's own fields are typed (nested shapes are not described: lean listings).
    let mutations: [(&str, Value); 7] = [
        ("/status", json!("fine")),
        ("/data/ticket", json!("TASK-1")),
        ("/data/already_claimed", json!("no")),
        ("/data/story_points", json!("three")),
        ("/data/previous_status", json!(7)),
        ("/data/assignee", Value::Null),
        ("/data", json!([1])),
    ];
    for (pointer, value) in mutations {
        let mut bad = good.clone();
        *bad.pointer_mut(pointer).unwrap() = value;
        assert!(check_schema(&schema, &bad).is_err(), "{pointer}: {bad}");
    }
    let mut bad = good.clone();
    bad["data"]
        .as_object_mut()
        .unwrap()
        .remove("previous_status");
    assert!(check_schema(&schema, &bad).is_err(), "{bad}");
    // The error member is the same for every tool (the README's) and not described in each
    // listing: its shape is checked by the envelope's own tests, not by this schema.
}

/// Raw JSON-RPC over the pipes: every line the server writes to stdout is a JSON-RPC frame,
/// nothing else (logs and notices go to stderr).
#[tokio::test]
async fn stdout_carries_only_json_rpc_frames() {
    let p = Project::new();
    let mut command = tokio::process::Command::new(BIN);
    command
        .arg("--mcp-server")
        .arg("-vvv")
        .current_dir(p.root())
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    let mut child = command.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut stderr = child.stderr.take().unwrap();
    let stderr_task = tokio::spawn(async move {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text).await;
        text
    });

    let send = |frame: Value| format!("{frame}\n");
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw-client", "version": "1.0.0"}}});
    stdin.write_all(send(initialize).as_bytes()).await.unwrap();
    let first = tokio::time::timeout(Duration::from_secs(30), stdout.next_line())
        .await
        .unwrap()
        .unwrap()
        .expect("an initialize answer");
    let first: Value = serde_json::from_str(&first).unwrap();
    assert_eq!(first["id"], 1);
    assert_eq!(first["result"]["serverInfo"]["name"], "jility");

    let frames = [
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "jility_create_ticket", "arguments": {"title": "Raw ticket",
            "description": "line 1\nline 2 with \"quotes\" and ```code```"}}}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": "jility_get_ticket", "arguments": {"ticket_id": "TASK-99"}}}),
        json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list"}),
        json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {
            "name": "jility_list_tickets", "arguments": {}}}),
    ];
    for frame in frames {
        stdin.write_all(send(frame).as_bytes()).await.unwrap();
    }
    stdin.flush().await.unwrap();

    let mut answers: BTreeMap<i64, Value> = BTreeMap::new();
    while answers.len() < 4 {
        let line = tokio::time::timeout(Duration::from_secs(30), stdout.next_line())
            .await
            .expect("an answer in time")
            .unwrap()
            .expect("stdout open");
        let frame: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("not a JSON line on stdout ({e}): {line:?}"));
        assert_eq!(frame["jsonrpc"], "2.0", "{frame}");
        if let Some(id) = frame["id"].as_i64() {
            answers.insert(id, frame);
        }
    }
    let created = &answers[&2]["result"];
    assert_eq!(created["isError"], false);
    assert_eq!(
        created["structuredContent"]["data"]["ticket"]["number"],
        "TASK-1"
    );
    assert_eq!(
        created["structuredContent"]["data"]["ticket"]["created_by"], "raw-client",
        "the client's name is the actor"
    );
    assert!(
        created["content"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("✅ Created ticket TASK-1")
    );
    let missing = &answers[&3]["result"];
    assert_eq!(missing["isError"], true);
    assert_eq!(missing["structuredContent"]["error"]["code"], "not_found");
    assert_eq!(answers[&4]["result"]["tools"].as_array().unwrap().len(), 39);
    // Pipelined requests run concurrently (storage work is off the async threads), so the
    // listing may run before or after the creation commits: either way it is a whole page.
    let total = answers[&5]["result"]["structuredContent"]["page"]["total"].as_u64();
    assert!(matches!(total, Some(0 | 1)), "{}", answers[&5]);

    // End of input: the server exits, and whatever else it wrote is JSON too.
    drop(stdin);
    loop {
        let line = tokio::time::timeout(Duration::from_secs(30), stdout.next_line())
            .await
            .expect("stdout closes")
            .unwrap();
        let Some(line) = line else { break };
        let _: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("not a JSON line on stdout ({e}): {line:?}"));
    }
    let status = tokio::time::timeout(Duration::from_secs(30), child.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(status.success(), "{status:?}");
    let stderr = stderr_task.await.unwrap();
    assert!(stderr.contains("jility: created"), "{stderr}");
    assert!(
        stderr.contains("TRACE") || stderr.contains("DEBUG"),
        "{stderr}"
    );
}

#[tokio::test]
async fn the_server_creates_the_database_in_an_empty_directory() {
    let p = Project::new();
    assert!(!p.path(".jility").exists());
    let mcp = p.start().await;
    assert!(p.db().is_file());
    let number = mcp.create("First").await;
    assert_eq!(number, "TASK-1", "the default project's key is TASK");
    let stderr = mcp.shutdown().await;
    let db = p.db().canonicalize().unwrap();
    assert!(
        stderr.contains(&format!("jility: created {}", db.display()))
            || stderr.contains(&format!("jility: created {}", p.db().display())),
        "{stderr}"
    );
    assert!(stderr.contains("project TASK"), "{stderr}");
    assert!(stderr.contains("jility init --key KEY"), "{stderr}");

    // The second start finds it and says nothing about creating.
    let mcp = p.start().await;
    assert_eq!(mcp.ticket("TASK-1").await["title"], "First");
    let stderr = mcp.shutdown().await;
    assert!(!stderr.contains("created"), "{stderr}");
}

#[tokio::test]
async fn db_flag_and_jility_db_choose_the_database() {
    let p = Project::new();
    let elsewhere = tempfile::tempdir().unwrap();
    let by_flag = elsewhere.path().join("flag/tickets.db");
    let by_env = elsewhere.path().join("env/tickets.db");

    let mcp = start(
        p.root(),
        &["--db", by_flag.to_str().unwrap()],
        &[("JILITY_ACTOR", AGENT)],
    )
    .await;
    assert_eq!(mcp.create("Flagged").await, "TASK-1");
    let stderr = mcp.shutdown().await;
    assert!(stderr.contains("created"), "{stderr}");
    assert!(stderr.contains("tickets.db"), "{stderr}");

    let mcp = start(
        p.root(),
        &[],
        &[
            ("JILITY_ACTOR", AGENT),
            ("JILITY_DB", by_env.to_str().unwrap()),
        ],
    )
    .await;
    assert_eq!(mcp.create("From env").await, "TASK-1");
    assert_eq!(mcp.create("From env 2").await, "TASK-2");
    drop(mcp);

    assert!(by_flag.is_file() && by_env.is_file());
    assert!(
        !p.path(".jility").exists(),
        "the working directory is untouched"
    );
    // The CLI reads the same files.
    let v = p.json(&["--db", by_flag.to_str().unwrap(), "ticket", "list"]);
    assert_eq!(v["page"]["total"], 1);
    assert_eq!(v["tickets"][0]["title"], "Flagged");
    let v = json_ok(
        p.root(),
        &[("JILITY_DB", by_env.to_str().unwrap())],
        &["ticket", "list"],
    );
    assert_eq!(v["page"]["total"], 2);
}

#[tokio::test]
async fn a_server_in_a_subdirectory_uses_the_parents_project() {
    let p = Project::new();
    p.init("PAR");
    p.write(
        ".jility/templates/chore.md",
        "# Chore: {{what}}\n\nDo {{what}}.\n",
    );
    let sub = p.path("src/deep/er");
    std::fs::create_dir_all(&sub).unwrap();
    let mcp = start(&sub, &[], &[("JILITY_ACTOR", AGENT)]).await;
    assert_eq!(mcp.create("From below").await, "PAR-1");
    let stderr = mcp.shutdown().await;
    assert!(!stderr.contains("created"), "{stderr}");
    assert!(!sub.join(".jility").exists());
    assert!(!p.path("src/.jility").exists());
    assert_eq!(
        p.json(&["ticket", "show", "PAR-1"])["ticket"]["title"],
        "From below"
    );
    // The project's templates are the parent's too.
    let mcp = start(&sub, &[], &[("JILITY_ACTOR", AGENT)]).await;
    let c = mcp
        .data(
            "jility_create_from_template",
            json!({"template": "chore", "variables": {"what": "dusting"}}),
        )
        .await;
    assert_eq!(c["ticket"]["title"], "Chore: dusting");
    assert_eq!(c["ticket"]["description"], "Do dusting.\n");
}

#[tokio::test]
async fn cloud_mode_needs_its_api_and_a_token_and_nothing_local() {
    let p = Project::new();
    let config = p.root().to_str().unwrap();
    let base = [
        ("JILITY_MODE", "cloud"),
        ("XDG_CONFIG_HOME", config),
        ("JILITY_API_TOKEN", ""),
    ];
    let with = |extra: &[(&'static str, &'static str)]| {
        let mut env: Vec<(&str, &str)> = base.to_vec();
        env.extend_from_slice(extra);
        env
    };
    let cases: [(&[(&str, &str)], &str); 2] = [
        (&[("JILITY_API_URL", "")], "JILITY_API_URL is not set"),
        (
            &[("JILITY_API_URL", "http://tickets.example.com")],
            "HTTPS only",
        ),
    ];
    for (extra, expected) in cases {
        let out = run(p.root(), &with(extra), &["--mcp-server"]);
        assert!(!out.success(), "{out:?}");
        assert_ne!(out.code, None, "exits, not killed: {out:?}");
        assert!(out.stdout.is_empty(), "{out:?}");
        assert!(out.stderr.contains(expected), "{expected}: {out:?}");
        assert!(!p.path(".jility").exists());
    }
    // Without a token the bridge starts a sign-in (tests/bridge_signin.rs); an API it cannot
    // reach is said in its log, and nothing local is made.
    let out = run(
        p.root(),
        &with(&[("JILITY_API_URL", "http://127.0.0.1:9")]),
        &["--mcp-server"],
    );
    assert!(out.stdout.is_empty(), "{out:?}");
    assert!(
        out.stderr.contains("sign-in failed") && out.stderr.contains("Cannot reach"),
        "{out:?}"
    );
    assert!(!p.path(".jility").exists());
    // The local commands are not the cloud's.
    let out = run(p.root(), &[("JILITY_MODE", "cloud")], &["--json", "init"]);
    assert_eq!(out.code, Some(1), "{out:?}");
    let v: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v["error"]["code"], "invalid_input");
    assert!(!p.path(".jility").exists());
    let out = run(p.root(), &[("JILITY_MODE", "space")], &["--mcp-server"]);
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(
        out.stderr.contains("JILITY_MODE=space is not a mode"),
        "{out:?}"
    );

    // `local` (and empty) are this build's mode.
    for mode in ["local", ""] {
        let mcp = start(
            p.root(),
            &[],
            &[("JILITY_MODE", mode), ("JILITY_ACTOR", AGENT)],
        )
        .await;
        mcp.create("Local").await;
    }
}

// ---------------------------------------------------------------------------------------
// Tickets

#[tokio::test]
async fn create_ticket_answers_with_the_designs_markdown_and_the_ticket() {
    let p = Project::new();
    let mcp = p.start().await;
    let (text, data) = mcp
        .ok(
            "jility_create_ticket",
            json!({
                "title": "  Add password validation  ",
                "description": "## Context\n\nCheck strength.\n",
                "story_points": 3,
                "status": "todo",
                "assignees": ["agent-1", "alice", "agent-1"],
                "labels": ["validation", "backend"],
                "kind": "epic",
            }),
        )
        .await;
    assert_eq!(
        text,
        "✅ Created ticket TASK-1\n\n**Title:** Add password validation\n**Status:** Todo\n\
         **Story Points:** 3\n**Assignees:** agent-1, alice\n**Labels:** backend, validation\n\
         **Kind:** epic\n\n\
         View: `jility ticket show TASK-1`"
    );
    let t = &data["ticket"];
    assert_eq!(t["number"], "TASK-1");
    assert_eq!(t["title"], "Add password validation", "trimmed");
    assert_eq!(t["description"], "## Context\n\nCheck strength.\n");
    assert_eq!(t["status"], "todo");
    assert_eq!(t["story_points"], 3);
    assert_eq!(t["assignees"], json!(["agent-1", "alice"]), "deduplicated");
    assert_eq!(t["labels"], json!(["backend", "validation"]));
    assert_eq!(t["created_by"], AGENT);
    assert_eq!(t["updated_by"], AGENT);
    assert_eq!(t["kind"], "epic");
    assert!(t.get("parent").is_none() && t.get("epic").is_none(), "{t}");
    let uuid = t["id"].as_str().unwrap();
    assert_eq!(uuid.len(), 36, "{uuid}");
    assert!(t["created_at"].as_str().unwrap().ends_with('Z'), "{t}");

    // The same ticket by UUID, by bare number and in lower case.
    for id in [uuid, "1", "task-1", " TASK-1 "] {
        assert_eq!(mcp.ticket(id).await["number"], "TASK-1", "{id}");
    }

    // Defaults, and sub-tasks.
    let (text, data) = mcp
        .ok(
            "jility_create_ticket",
            json!({"title": "Sub-task", "parent_id": "TASK-1", "epic_id": uuid}),
        )
        .await;
    assert_eq!(
        text,
        "✅ Created ticket TASK-2\n\n**Title:** Sub-task\n**Status:** Backlog\n\
         **Assignees:** unassigned\n**Parent:** TASK-1\n**Epic:** TASK-1\n\n\
         View: `jility ticket show TASK-2`"
    );
    assert_eq!(data["ticket"]["status"], "backlog");
    assert_eq!(data["ticket"]["description"], "");
    assert_eq!(data["ticket"]["parent"], "TASK-1");
    assert_eq!(data["ticket"]["epic"], "TASK-1");
    assert!(data["ticket"].get("story_points").is_none());
    assert!(
        data["ticket"].get("kind").is_none(),
        "a plain ticket says nothing of its kind"
    );
}

#[tokio::test]
async fn the_actor_is_jility_actor_or_else_the_clients_name() {
    let p = Project::new();
    for (mcp, actor) in [
        (p.start().await, AGENT),
        (p.start_anonymous().await, "mcp-testkit"),
        (
            start(p.root(), &[], &[("JILITY_ACTOR", "   ")]).await,
            "mcp-testkit",
        ),
    ] {
        let n = mcp.create("Who made me").await;
        let t = mcp.ticket(&n).await;
        assert_eq!(t["created_by"], actor);
        let (text, c) = mcp
            .ok(
                "jility_add_comment",
                json!({"ticket_id": n, "content": "a note"}),
            )
            .await;
        assert!(text.contains(&format!("**From:** {actor}")), "{text}");
        assert_eq!(c["comment"]["author"], actor);
        let s = mcp
            .data(
                "jility_update_status",
                json!({"ticket_id": n, "status": "todo"}),
            )
            .await;
        assert_eq!(s["changed_by"], actor);
        let d = mcp
            .data(
                "jility_update_description",
                json!({"ticket_id": n, "operation": "append", "content": "more"}),
            )
            .await;
        assert_eq!(d["changed_by"], actor);
        let detail = mcp.data("jility_get_ticket", json!({"ticket_id": n})).await;
        assert_eq!(detail["ticket"]["updated_by"], actor);
        let changes = detail["recent_changes"].as_array().unwrap();
        assert!(changes.len() >= 4, "{detail}");
        assert!(changes.iter().all(|c| c["changed_by"] == actor), "{detail}");
        let history = mcp
            .data("jility_get_ticket_history", json!({"ticket_id": n}))
            .await;
        let authors: Vec<&Value> = history["versions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| &v["changed_by"])
            .collect();
        assert_eq!(authors, [actor, actor]);
    }
}

#[tokio::test]
async fn get_ticket_gives_the_full_context() {
    let p = Project::new();
    let mcp = p.start().await;
    let a = mcp
        .create_with(
            json!({"title": "Implement JWT", "description": "## Context\n\nJWT.",
                            "story_points": 3, "labels": ["backend"]}),
        )
        .await;
    let b = mcp.create("Create User model").await;
    let c = mcp.create("Add login endpoint").await;
    mcp.data(
        "jility_add_dependency",
        json!({"ticket_id": a, "depends_on": b}),
    )
    .await;
    mcp.data(
        "jility_add_dependency",
        json!({"ticket_id": c, "depends_on": a}),
    )
    .await;
    mcp.data(
        "jility_add_comment",
        json!({"ticket_id": a, "content": "Handle expiry\nand refresh"}),
    )
    .await;
    mcp.data(
        "jility_link_commit",
        json!({"ticket_id": a, "commit_hash": "abc123f", "commit_message": "Add JWT service"}),
    )
    .await;
    mcp.data(
        "jility_update_status",
        json!({"ticket_id": a, "status": "in_progress", "message": "starting"}),
    )
    .await;

    let (text, d) = mcp
        .ok("jility_get_ticket", json!({"ticket_id": "TASK-1"}))
        .await;
    assert_eq!(d["ticket"]["number"], "TASK-1");
    assert_eq!(d["ticket"]["status"], "in_progress");
    assert_eq!(d["comment_count"], 1);
    assert_eq!(d["comments"][0]["author"], AGENT);
    assert_eq!(d["comments"][0]["content"], "Handle expiry\nand refresh");
    assert_eq!(
        d["dependencies"],
        json!([{"number": "TASK-2", "title": "Create User model", "status": "backlog"}])
    );
    assert_eq!(
        d["dependents"],
        json!([{"number": "TASK-3", "title": "Add login endpoint", "status": "backlog"}])
    );
    assert_eq!(d["linked_commits"][0]["hash"], "abc123f");
    assert_eq!(d["linked_commits"][0]["message"], "Add JWT service");
    assert_eq!(d["linked_commits"][0]["linked_by"], AGENT);
    let newest = &d["recent_changes"][0];
    assert_eq!(newest["type"], "status_changed");
    assert_eq!(newest["old_value"], "backlog");
    assert_eq!(newest["new_value"], "in_progress");
    assert_eq!(newest["message"], "starting");
    assert_eq!(newest["changed_by"], AGENT);
    let kinds: Vec<&str> = d["recent_changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "status_changed",
            "commit_linked",
            "comment_added",
            "dependency_added",
            "description_changed",
            "created"
        ]
    );
    for needle in [
        "# TASK-1: Implement JWT\n",
        "**Status:** In Progress\n",
        "**Story Points:** 3\n",
        "**Labels:** backend\n",
        "## Description\n\n## Context\n\nJWT.\n",
        "## Depends on (1)\n- TASK-2: Create User model (backlog)\n",
        "## Blocks (1)\n- TASK-3: Add login endpoint (backlog)\n",
        "## Commits (1)\n- abc123f: Add JWT service\n",
        "## Comments (1)\n",
        "> Handle expiry\n> and refresh\n",
        "## Recent changes\n",
        "status_changed by agent-1: backlog → in_progress — starting\n",
    ] {
        assert!(text.contains(needle), "{needle:?} in:\n{text}");
    }
    assert!(
        text.ends_with("History: `jility ticket history TASK-1`"),
        "{text}"
    );
}

/// get_ticket shows the newest 50 comments (oldest first) and the newest 20 changes, long
/// values cut; the counts say how many there are.
#[tokio::test]
async fn get_ticket_limits_comments_and_changes() {
    let p = Project::new();
    let mcp = p.start().await;
    let n = mcp.create("Busy").await;
    for i in 1..=55 {
        mcp.data(
            "jility_add_comment",
            json!({"ticket_id": n, "content": format!("comment {i}")}),
        )
        .await;
    }
    let long = "T".repeat(300);
    p.cli(&["ticket", "edit", &n, "--title", &long]).ok();
    let (text, d) = mcp.ok("jility_get_ticket", json!({"ticket_id": n})).await;
    assert_eq!(d["comment_count"], 55);
    let comments = d["comments"].as_array().unwrap();
    assert_eq!(comments.len(), 50);
    assert_eq!(comments[0]["content"], "comment 6");
    assert_eq!(comments[49]["content"], "comment 55");
    assert!(text.contains("## Comments (newest 50 of 55)\n"), "{text}");
    let changes = d["recent_changes"].as_array().unwrap();
    assert_eq!(changes.len(), 20);
    assert_eq!(changes[0]["type"], "title_changed");
    assert_eq!(changes[0]["changed_by"], HUMAN);
    assert_eq!(changes[0]["old_value"], "Busy");
    assert_eq!(
        changes[0]["new_value"],
        format!("{}…", "T".repeat(200)),
        "long values are cut"
    );
    assert_eq!(
        d["ticket"]["title"],
        long.as_str(),
        "the ticket itself is whole"
    );
    assert!(changes[1..].iter().all(|c| c["type"] == "comment_added"));
}

#[tokio::test]
async fn claim_assigns_to_the_caller_and_starts_the_work() {
    let p = Project::new();
    let mcp = p.start().await;
    let n = mcp
        .create_with(json!({"title": "Add login endpoint", "story_points": 3, "status": "todo"}))
        .await;
    let (text, c) = mcp
        .ok(
            "jility_claim_ticket",
            json!({"ticket_id": n, "message": "Starting work on this"}),
        )
        .await;
    assert_eq!(
        text,
        "✅ Claimed TASK-1 and assigned to agent-1\n\n**Title:** Add login endpoint\n\
         **Status:** In Progress (moved from Todo)\n**Story Points:** 3\n\n\
         Get context: `jility ticket show TASK-1`"
    );
    assert_eq!(c["assignee"], AGENT);
    assert_eq!(c["previous_status"], "todo");
    assert_eq!(c["ticket"]["status"], "in_progress");
    assert_eq!(c["already_claimed"], false);
    let d = mcp.data("jility_get_ticket", json!({"ticket_id": n})).await;
    assert_eq!(d["ticket"]["assignees"], json!([AGENT]));
    assert_eq!(d["ticket"]["status"], "in_progress");
    assert_eq!(d["comments"][0]["content"], "Starting work on this");

    // Claiming again is harmless.
    let (text, c) = mcp.ok("jility_claim_ticket", json!({"ticket_id": n})).await;
    assert!(
        text.starts_with("✅ TASK-1 is already yours (agent-1)"),
        "{text}"
    );
    assert_eq!(c["already_claimed"], true);

    // Someone else cannot take it.
    let other = p.start_as("agent-2").await;
    let (text, e) = other
        .err("jility_claim_ticket", json!({"ticket_id": n}))
        .await;
    assert_eq!(e.code, errors::ALREADY_ASSIGNED);
    assert_eq!(e.message, "TASK-1 is already assigned to agent-1");
    assert!(text.contains("jility_assign_ticket"), "{text}");
    assert_eq!(mcp.ticket(&n).await["assignees"], json!([AGENT]));

    // A ticket in review keeps its status; a done one cannot be claimed.
    let review = other
        .create_with(json!({"title": "In review", "status": "review"}))
        .await;
    let c = other
        .data("jility_claim_ticket", json!({"ticket_id": review}))
        .await;
    assert_eq!(c["ticket"]["status"], "review");
    assert_eq!(c["assignee"], "agent-2");
    let done = other
        .create_with(json!({"title": "Finished", "status": "done"}))
        .await;
    let (_, e) = other
        .err("jility_claim_ticket", json!({"ticket_id": done}))
        .await;
    assert_eq!(e.code, errors::INVALID_STATUS);
    assert_eq!(e.message, "TASK-3 is done; a done ticket cannot be claimed");
    assert_eq!(other.ticket(&done).await["assignees"], json!([]));
}

#[tokio::test]
async fn update_status_follows_the_workflow() {
    let p = Project::new();
    let mcp = p.start().await;
    let n = mcp.create("Workflow").await;
    let (text, s) = mcp
        .ok(
            "jility_update_status",
            json!({"ticket_id": n, "status": "todo"}),
        )
        .await;
    assert_eq!(
        text,
        "✅ Moved TASK-1 to Todo\n\n**Previous:** Backlog\n**Current:** Todo\n**Changed by:** agent-1"
    );
    assert_eq!(s["previous"], "backlog");
    assert_eq!(s["current"], "todo");
    assert_eq!(s["changed"], true);
    mcp.data(
        "jility_update_status",
        json!({"ticket_id": n, "status": "in_progress"}),
    )
    .await;
    let (text, _) = mcp
        .ok(
            "jility_update_status",
            json!({"ticket_id": n, "status": "review", "message": "PR #12"}),
        )
        .await;
    assert_eq!(
        text,
        "✅ Moved TASK-1 to Review\n\n**Previous:** In Progress\n**Current:** Review\n\
         **Changed by:** agent-1\n**Message:** PR #12\n\nReady for human review! 🎉"
    );
    let (text, _) = mcp
        .ok(
            "jility_update_status",
            json!({"ticket_id": n, "status": "done"}),
        )
        .await;
    assert!(text.ends_with("Done! ✔"), "{text}");

    // Done cannot go back to the backlog; the error names where it can go.
    let (text, e) = mcp
        .err(
            "jility_update_status",
            json!({"ticket_id": n, "status": "backlog"}),
        )
        .await;
    assert_eq!(e.code, errors::INVALID_STATUS);
    assert_eq!(e.message, "Cannot move TASK-1 from Done to Backlog");
    assert_eq!(e.hint, "From done a ticket can move to: todo, in_progress.");
    assert!(text.starts_with("❌ Error: Cannot move TASK-1 from Done to Backlog"));
    assert_eq!(mcp.ticket(&n).await["status"], "done");

    // A misspelt status names the valid ones.
    let (_, e) = mcp
        .err(
            "jility_update_status",
            json!({"ticket_id": n, "status": "in-progress"}),
        )
        .await;
    assert_eq!(e.code, errors::INVALID_STATUS);
    assert_eq!(
        e.message,
        "Invalid status 'in-progress'. Valid statuses: backlog, todo, in_progress, review, done, blocked"
    );

    // The same status is no change; reopening is allowed.
    let (text, s) = mcp
        .ok(
            "jility_update_status",
            json!({"ticket_id": n, "status": "done"}),
        )
        .await;
    assert_eq!(text, "✅ TASK-1 is already Done");
    assert_eq!(s["changed"], false);
    let s = mcp
        .data(
            "jility_update_status",
            json!({"ticket_id": n, "status": "in_progress"}),
        )
        .await;
    assert_eq!(s["previous"], "done");
    // Blocked and back.
    let (text, _) = mcp
        .ok(
            "jility_update_status",
            json!({"ticket_id": n, "status": "blocked"}),
        )
        .await;
    assert!(text.contains("**Current:** Blocked"), "{text}");
    let (_, e) = mcp
        .err(
            "jility_update_status",
            json!({"ticket_id": n, "status": "done"}),
        )
        .await;
    assert_eq!(e.code, errors::INVALID_STATUS);
    assert!(
        e.hint.contains("backlog, todo, in_progress, review"),
        "blocked's moves are named"
    );
    let changes =
        mcp.data("jility_get_ticket", json!({"ticket_id": n})).await["recent_changes"].clone();
    let moves: Vec<(String, String)> = changes
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["type"] == "status_changed")
        .map(|c| {
            (
                c["old_value"].as_str().unwrap().to_string(),
                c["new_value"].as_str().unwrap().to_string(),
            )
        })
        .rev()
        .collect();
    let expected: Vec<(String, String)> = [
        ("backlog", "todo"),
        ("todo", "in_progress"),
        ("in_progress", "review"),
        ("review", "done"),
        ("done", "in_progress"),
        ("in_progress", "blocked"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    assert_eq!(moves, expected, "refused moves and no-ops are not recorded");
}

#[tokio::test]
async fn comments_and_assignments() {
    let p = Project::new();
    let mcp = p.start().await;
    let n = mcp.create("Pairing").await;
    let (text, c) = mcp
        .ok(
            "jility_add_comment",
            json!({"ticket_id": n, "content": "Implementation complete! @alice Please review.\nSecond line"}),
        )
        .await;
    assert_eq!(
        text,
        "✅ Added comment to TASK-1\n\n**From:** agent-1\n**Content:**\n\
         > Implementation complete! @alice Please review.\n> Second line\n\n\
         View: `jility ticket show TASK-1`"
    );
    assert_eq!(c["number"], "TASK-1");
    assert_eq!(c["comment"]["author"], AGENT);
    assert_eq!(c["comment"]["id"].as_str().unwrap().len(), 36);

    let (text, a) = mcp
        .ok(
            "jility_assign_ticket",
            json!({"ticket_id": n, "assignees": ["agent-1"]}),
        )
        .await;
    assert_eq!(
        text,
        "✅ Assigned TASK-1\n\n**Previous:** unassigned\n**Current:** agent-1"
    );
    assert_eq!(a["comment_added"], false);
    let (text, a) = mcp
        .ok(
            "jility_assign_ticket",
            json!({"ticket_id": n, "assignees": ["alice", "agent-1"],
                   "message": "I've set up the structure, please finish"}),
        )
        .await;
    assert_eq!(
        text,
        "✅ Reassigned TASK-1\n\n**Previous:** agent-1\n**Current:** agent-1, alice (pairing)\n\
         **Message:** \"I've set up the structure, please finish\"\n\n\
         Handoff message added as comment."
    );
    assert_eq!(a["previous"], json!(["agent-1"]));
    assert_eq!(a["current"], json!(["agent-1", "alice"]));
    assert_eq!(a["comment_added"], true);
    assert_eq!(a["changed_by"], AGENT);
    let d = mcp.data("jility_get_ticket", json!({"ticket_id": n})).await;
    assert_eq!(d["comment_count"], 2);
    assert_eq!(
        d["comments"][1]["content"],
        "I've set up the structure, please finish"
    );
    assert_eq!(
        listed(&mcp, json!({"assignee": "alice"})).await,
        set(&["TASK-1"])
    );

    let (text, a) = mcp
        .ok(
            "jility_assign_ticket",
            json!({"ticket_id": n, "assignees": []}),
        )
        .await;
    assert_eq!(
        text,
        "✅ Unassigned TASK-1\n\n**Previous:** agent-1, alice\n**Current:** unassigned"
    );
    assert_eq!(a["current"], json!([]));
    assert_eq!(mcp.ticket(&n).await["assignees"], json!([]));
}

#[tokio::test]
async fn link_commit_normalizes_and_deduplicates() {
    let p = Project::new();
    let mcp = p.start().await;
    let n = mcp.create("Commits").await;
    let (text, c) = mcp
        .ok(
            "jility_link_commit",
            json!({"ticket_id": n, "commit_hash": " ABC123F ", "commit_message": "Add JWT token generation service"}),
        )
        .await;
    assert_eq!(
        text,
        "✅ Linked commit to TASK-1\n\n**Commit:** abc123f\n\
         **Message:** Add JWT token generation service\n\nView commits: `jility ticket show TASK-1`"
    );
    assert_eq!(c["commit"]["hash"], "abc123f");
    assert_eq!(c["already_linked"], false);
    let (text, c) = mcp
        .ok(
            "jility_link_commit",
            json!({"ticket_id": n, "commit_hash": "abc123f"}),
        )
        .await;
    assert!(
        text.starts_with("✅ Commit abc123f was already linked to TASK-1"),
        "{text}"
    );
    assert_eq!(c["already_linked"], true);
    let full = "0123456789abcdef0123456789abcdef01234567";
    let (text, _) = mcp
        .ok(
            "jility_link_commit",
            json!({"ticket_id": n, "commit_hash": full}),
        )
        .await;
    assert!(text.contains("**Commit:** 0123456789\n"), "{text}");
    let d = mcp.data("jility_get_ticket", json!({"ticket_id": n})).await;
    let hashes: Vec<&str> = d["linked_commits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["hash"].as_str().unwrap())
        .collect();
    assert_eq!(hashes, ["abc123f", full]);
}

#[tokio::test]
async fn dependencies_chains_graphs_and_cycles() {
    let p = Project::new();
    let mcp = p.start().await;
    let a = mcp.create("Create User model").await;
    let b = mcp.create("Implement JWT").await;
    let c = mcp.create("Add login endpoint").await;

    let (text, d) = mcp
        .ok(
            "jility_add_dependency",
            json!({"ticket_id": b, "depends_on": a}),
        )
        .await;
    assert_eq!(
        text,
        "✅ Added dependency\n\nTASK-2 now depends on TASK-1\n\n**Dependency chain:**\n\
         TASK-1 (backlog) → TASK-2 (backlog)\n\nTASK-2 is blocked until TASK-1 is complete."
    );
    assert_eq!(d["is_blocked"], true);
    assert_eq!(d["already_existed"], false);
    let (text, d) = mcp
        .ok(
            "jility_add_dependency",
            json!({"ticket_id": c, "depends_on": b}),
        )
        .await;
    assert!(
        text.contains("TASK-1 (backlog) → TASK-2 (backlog) → TASK-3 (backlog)"),
        "{text}"
    );
    assert_eq!(numbers(&d["chain"]), ["TASK-1", "TASK-2", "TASK-3"]);
    let (text, d) = mcp
        .ok(
            "jility_add_dependency",
            json!({"ticket_id": c, "depends_on": b}),
        )
        .await;
    assert!(text.starts_with("✅ Dependency already present"), "{text}");
    assert_eq!(d["already_existed"], true);

    // A → B → C → A is refused, naming the cycle; so is a self-dependency.
    let (_, e) = mcp
        .err(
            "jility_add_dependency",
            json!({"ticket_id": a, "depends_on": c}),
        )
        .await;
    assert_eq!(e.code, errors::DEPENDENCY_CYCLE);
    assert_eq!(
        e.message,
        "TASK-1 cannot depend on TASK-3: that would create the cycle TASK-1 → TASK-3 → TASK-2 → TASK-1"
    );
    let (_, e) = mcp
        .err(
            "jility_add_dependency",
            json!({"ticket_id": b, "depends_on": "task-2"}),
        )
        .await;
    assert_eq!(e.code, errors::DEPENDENCY_CYCLE);
    assert_eq!(e.message, "TASK-2 cannot depend on itself");

    // The graph of the end of the chain, and of its middle.
    let (text, g) = mcp
        .ok("jility_get_dependency_graph", json!({"ticket_id": c}))
        .await;
    assert_eq!(
        text,
        "🔗 Dependencies of TASK-3: Add login endpoint (backlog)\n\n\
         **Blocked:** yes • **Blocking:** 0 ticket(s)\n\n\
         ## Depends on (2)\n- TASK-2: Implement JWT (backlog)\n  - TASK-1: Create User model (backlog)\n\n\
         ## Blocks\n(none)"
    );
    assert_eq!(g["upstream"][1]["depth"], 2);
    assert_eq!(g["truncated"], false);
    let g = mcp
        .data("jility_get_dependency_graph", json!({"ticket_id": b}))
        .await;
    assert_eq!(numbers(&g["dependencies"]), ["TASK-1"]);
    assert_eq!(numbers(&g["dependents"]), ["TASK-3"]);
    assert_eq!(g["is_blocked"], true);
    assert_eq!(g["blocking_count"], 1);
    let g = mcp
        .data("jility_get_dependency_graph", json!({"ticket_id": a}))
        .await;
    assert_eq!(numbers(&g["downstream"]), ["TASK-2", "TASK-3"]);
    assert_eq!(g["is_blocked"], false);

    // A finished dependency no longer blocks.
    for status in ["in_progress", "done"] {
        mcp.data(
            "jility_update_status",
            json!({"ticket_id": a, "status": status}),
        )
        .await;
    }
    let g = mcp
        .data("jility_get_dependency_graph", json!({"ticket_id": b}))
        .await;
    assert_eq!(g["is_blocked"], false);

    // Removing: once, then it is gone.
    let (text, r) = mcp
        .ok(
            "jility_remove_dependency",
            json!({"ticket_id": c, "depends_on": b}),
        )
        .await;
    assert_eq!(
        text,
        "✅ Removed dependency\n\nTASK-3 no longer depends on TASK-2"
    );
    assert_eq!(r["is_blocked"], false);
    let (_, e) = mcp
        .err(
            "jility_remove_dependency",
            json!({"ticket_id": c, "depends_on": b}),
        )
        .await;
    assert_eq!(e.code, errors::NOT_FOUND);
    assert_eq!(e.message, "TASK-3 does not depend on TASK-2");
    // Without the cycle, A may now depend on C.
    mcp.data(
        "jility_add_dependency",
        json!({"ticket_id": a, "depends_on": c}),
    )
    .await;
    let kinds: Vec<String> =
        mcp.data("jility_get_ticket", json!({"ticket_id": c})).await["recent_changes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["type"].as_str().unwrap().to_string())
            .collect();
    assert_eq!(
        kinds,
        [
            "dependency_removed",
            "dependency_added",
            "description_changed",
            "created"
        ]
    );
}

#[tokio::test]
async fn templates_builtin_and_from_the_project() {
    let p = Project::new();
    p.write(
        ".jility/templates/spike.md",
        "+++\ntitle = \"Spike: {{topic}}\"\ndescription = \"Time-boxed investigation\"\n\
         labels = [\"spike\"]\nstory_points = 2\n+++\n## Context\nInvestigate {{topic}} for {{team}}.\n",
    );
    p.write(
        ".jility/templates/bad.md",
        "+++\ntitle = \"never closed\"\n",
    );
    let mcp = p.start().await;
    let (text, list) = mcp.ok("jility_list_templates", json!({})).await;
    assert!(
        text.starts_with(
            "📋 Available Templates\n\n\
             1. **api-endpoint** - REST API endpoint with validation (variables: method, endpoint, resource)\n\
             2. **database-migration** - Schema migration with rollback (variables: table, change)\n\
             3. **react-component** - React component with tests (variables: component, purpose)\n\
             4. **bug-fix** - Bug investigation and fix (variables: summary)\n\
             5. **refactor** - Code refactoring task (variables: target, goal)\n\
             6. **spike** - Time-boxed investigation (variables: topic, team)\n"
        ),
        "{text}"
    );
    assert!(
        text.contains("⚠️ Skipped .jility/templates/bad.md: the front matter opened by +++ on line 1 is never closed"),
        "{text}"
    );
    let templates = list["templates"].as_array().unwrap();
    assert_eq!(templates.len(), 6);
    assert_eq!(templates[0]["source"], "builtin");
    assert_eq!(templates[5]["source"], "project");
    assert_eq!(templates[5]["path"], ".jility/templates/spike.md");
    assert_eq!(templates[5]["story_points"], 2);
    assert_eq!(list["problems"][0]["path"], ".jility/templates/bad.md");

    let (text, c) = mcp
        .ok(
            "jility_create_from_template",
            json!({"template": "api-endpoint", "assignee": "agent-1",
                   "variables": {"resource": "users", "method": "POST", "endpoint": "/api/users/register"}}),
        )
        .await;
    assert!(
        text.starts_with(
            "✅ Created TASK-1 from template 'api-endpoint'\n\n\
             **Title:** POST /api/users/register endpoint\n**Status:** Backlog\n\
             **Story Points:** 3\n**Assignees:** agent-1\n**Labels:** api, backend\n\
             **Description:**\n## Context\nImplement POST endpoint for users resource.\n"
        ),
        "{text}"
    );
    assert!(
        text.ends_with("\n\nView: `jility ticket show TASK-1`"),
        "{text}"
    );
    assert_eq!(c["template"], "api-endpoint");
    let t = &c["ticket"];
    assert_eq!(t["created_by"], AGENT);
    let description = t["description"].as_str().unwrap();
    assert!(description.contains("- `src/routes/users.rs` - route handler"));
    assert!(description.contains("- [ ] `POST /api/users/register` returns"));
    assert!(!description.contains("{{"), "{description}");

    let c = mcp
        .data(
            "jility_create_from_template",
            json!({"template": "spike", "variables": {"topic": "caching", "team": "infra"}}),
        )
        .await;
    assert_eq!(c["ticket"]["title"], "Spike: caching");
    assert_eq!(c["ticket"]["labels"], json!(["spike"]));
    assert_eq!(c["ticket"]["story_points"], 2);
    assert_eq!(
        c["ticket"]["description"],
        "## Context\nInvestigate caching for infra.\n"
    );

    // Every missing variable is named; nothing is created.
    let (_, e) = mcp
        .err(
            "jility_create_from_template",
            json!({"template": "api-endpoint", "variables": {"method": "GET"}}),
        )
        .await;
    assert_eq!(e.code, errors::INVALID_INPUT);
    assert_eq!(
        e.message,
        "template \"api-endpoint\" needs values for these variables: endpoint, resource"
    );
    assert!(
        e.hint
            .contains("The template uses: method, endpoint, resource"),
        "{e:?}"
    );
    let (_, e) = mcp
        .err(
            "jility_create_from_template",
            json!({"template": "refactor"}),
        )
        .await;
    assert_eq!(
        e.message,
        "template \"refactor\" needs values for these variables: goal, target"
    );
    let (_, e) = mcp
        .err(
            "jility_create_from_template",
            json!({"template": "story", "variables": {}}),
        )
        .await;
    assert_eq!(e.code, errors::NOT_FOUND);
    assert_eq!(e.message, "Template 'story' not found");
    assert!(
        e.hint.contains(
            "api-endpoint, database-migration, react-component, bug-fix, refactor, spike"
        ),
        "{e:?}"
    );
    let (_, info) = mcp.list("jility_list_tickets", json!({})).await;
    assert_eq!(info.total, 2);
}

#[tokio::test]
async fn history_numbers_versions_from_one_and_revert_adds_one() {
    let p = Project::new();
    let mcp = p.start().await;
    let n = mcp
        .create_with(json!({"title": "Versions", "description": "line one\nline two\n"}))
        .await;
    let (text, u) = mcp
        .ok(
            "jility_update_description",
            json!({"ticket_id": n, "operation": "append", "content": "line three\n", "message": "add three"}),
        )
        .await;
    assert_eq!(
        text,
        "✅ Updated description for TASK-1\n\n**Operation:** append\n**Changed by:** agent-1\n\
         **Message:** add three\n**Version:** 2 (+1 −0 lines, 3 lines now)\n\n\
         Version history: `jility ticket history TASK-1`"
    );
    assert_eq!(u["version"], 2);
    assert_eq!(u["diff"], json!({"added": 1, "removed": 0}));
    let other = p.start_as("agent-2").await;
    let u = other
        .data(
            "jility_update_description",
            json!({"ticket_id": n, "operation": "replace_lines", "start_line": 1, "end_line": 1,
                   "content": "LINE ONE"}),
        )
        .await;
    assert_eq!(u["version"], 3);
    assert_eq!(u["summary"], "replace_lines (line 1)");

    let (text, h) = mcp
        .ok("jility_get_ticket_history", json!({"ticket_id": n}))
        .await;
    assert_eq!(h["current_version"], 3);
    let versions = h["versions"].as_array().unwrap();
    assert_eq!(versions.len(), 3);
    let expected = [
        (1, AGENT, "created", None, "+line one\n+line two\n"),
        (2, AGENT, "append", Some("add three"), "+line three\n"),
        (
            3,
            "agent-2",
            "replace_lines (line 1)",
            None,
            "-line one\n+LINE ONE\n",
        ),
    ];
    for (v, (number, author, operation, message, diff)) in versions.iter().zip(expected) {
        assert_eq!(v["version"], number, "{v}");
        assert_eq!(v["changed_by"], author, "{v}");
        assert_eq!(v["operation"], operation, "{v}");
        assert_eq!(v["message"].as_str(), message, "{v}");
        assert!(v["diff"].as_str().unwrap().contains(diff), "{v}");
    }
    assert_eq!(versions[0]["added"], 2);
    assert_eq!(versions[2]["removed"], 1);
    assert_eq!(versions[2]["lines"], 3);
    assert!(
        text.starts_with("📜 Description history of TASK-1: Versions (3 versions)\n"),
        "{text}"
    );
    assert!(text.contains("\n## Version 1 — agent-1 at "), "{text}");
    assert!(
        text.contains(" (current)\n**Operation:** replace_lines (line 1)\n"),
        "{text}"
    );
    assert!(text.contains("```diff\n"), "{text}");

    // Revert to the original: a fourth version with the first text.
    let (text, r) = mcp
        .ok(
            "jility_revert_description",
            json!({"ticket_id": n, "version": 1}),
        )
        .await;
    assert!(
        text.starts_with(
            "✅ Updated description for TASK-1\n\n**Operation:** revert to version 1\n"
        ),
        "{text}"
    );
    assert!(
        text.contains("**Message:** Reverted to version 1\n"),
        "{text}"
    );
    assert_eq!(r["version"], 4);
    assert_eq!(r["changed"], true);
    assert_eq!(r["operation"], "revert");
    assert_eq!(mcp.description(&n).await, "line one\nline two\n");
    let h = mcp
        .data("jility_get_ticket_history", json!({"ticket_id": n}))
        .await;
    assert_eq!(h["current_version"], 4);
    assert_eq!(h["versions"][3]["operation"], "revert to version 1");
    assert!(
        h["versions"][3]["diff"]
            .as_str()
            .unwrap()
            .contains("-line three\n"),
        "{h}"
    );

    // Reverting to the current text changes nothing and adds no version.
    let (text, r) = mcp
        .ok(
            "jility_revert_description",
            json!({"ticket_id": n, "version": 4}),
        )
        .await;
    assert!(
        text.starts_with("✅ Description of TASK-1 unchanged"),
        "{text}"
    );
    assert_eq!(r["changed"], false);
    assert_eq!(r["version"], 4);
    for version in [0, 5, -1] {
        let (_, e) = mcp
            .err(
                "jility_revert_description",
                json!({"ticket_id": n, "version": version}),
            )
            .await;
        assert_eq!(e.code, errors::INVALID_INPUT);
        assert_eq!(
            e.message,
            format!("TASK-1 has no description version {version}; it has versions 1 to 4")
        );
    }
    let h = mcp
        .data("jility_get_ticket_history", json!({"ticket_id": n}))
        .await;
    assert_eq!(h["versions"].as_array().unwrap().len(), 4);
}

#[tokio::test]
async fn a_done_dependency_of_a_blocked_ticket_reads_well() {
    let p = Project::new();
    let mcp = p.start().await;
    let done = mcp
        .create_with(json!({"title": "Finished", "status": "done"}))
        .await;
    let open = mcp.create("Open").await;
    let waiting = mcp.create("Waiting").await;
    mcp.data(
        "jility_add_dependency",
        json!({"ticket_id": waiting, "depends_on": open}),
    )
    .await;
    let (text, d) = mcp
        .ok(
            "jility_add_dependency",
            json!({"ticket_id": waiting, "depends_on": done}),
        )
        .await;
    assert_eq!(d["is_blocked"], true);
    assert!(text.contains("TASK-3 is blocked"), "{text}");
    assert!(!text.contains("are is"), "broken sentence: {text}");
}

#[tokio::test]
async fn counts_of_one_are_singular() {
    let p = Project::new();
    let mcp = p.start().await;
    let (text, _) = mcp
        .ok(
            "jility_create_tickets_batch",
            json!({"tickets": [{"title": "Only"}]}),
        )
        .await;
    assert!(text.starts_with("✅ Created 1 ticket\n"), "{text}");
    let (text, _) = mcp
        .ok("jility_get_ticket_history", json!({"ticket_id": "TASK-1"}))
        .await;
    assert!(
        text.starts_with("📜 Description history of TASK-1: Only (1 version)\n"),
        "{text}"
    );
}

/// The graph walks at most 500 tickets per direction and says when it stopped.
#[tokio::test]
async fn a_long_dependency_chain_is_cut_at_500() {
    let p = Project::new();
    let mcp = p.start().await;
    let mut first = 1;
    for count in [200, 200, 102] {
        let tickets: Vec<Value> = (first..first + count)
            .map(|i| {
                let depends_on = if i == 1 {
                    vec![]
                } else if i == first {
                    vec![format!("TASK-{}", i - 1)]
                } else {
                    vec![format!("#{}", i - first)]
                };
                json!({"title": format!("Step {i}"), "depends_on": depends_on})
            })
            .collect();
        mcp.data("jility_create_tickets_batch", json!({"tickets": tickets}))
            .await;
        first += count;
    }
    let (text, g) = mcp
        .ok(
            "jility_get_dependency_graph",
            json!({"ticket_id": "TASK-502"}),
        )
        .await;
    assert_eq!(g["truncated"], true);
    let upstream = g["upstream"].as_array().unwrap();
    assert_eq!(upstream.len(), 500);
    assert_eq!(upstream[0]["number"], "TASK-501");
    assert_eq!(upstream[499]["number"], "TASK-2");
    assert_eq!(upstream[499]["depth"], 500);
    assert!(
        text.ends_with("(graph cut at 500 tickets per direction)"),
        "{}",
        text.chars().rev().take(200).collect::<String>()
    );
    let g = mcp
        .data(
            "jility_get_dependency_graph",
            json!({"ticket_id": "TASK-251"}),
        )
        .await;
    assert_eq!(g["truncated"], false);
    assert_eq!(g["upstream"].as_array().unwrap().len(), 250);
    assert_eq!(g["downstream"].as_array().unwrap().len(), 251);
    // Closing the loop anywhere is a cycle through all of them.
    let (_, e) = mcp
        .err(
            "jility_add_dependency",
            json!({"ticket_id": "TASK-1", "depends_on": "TASK-502"}),
        )
        .await;
    assert_eq!(e.code, errors::DEPENDENCY_CYCLE);
    assert!(
        e.message
            .starts_with("TASK-1 cannot depend on TASK-502: that would create the cycle TASK-1 → TASK-502 → TASK-501 → "),
        "{}",
        e.message.chars().take(200).collect::<String>()
    );
    assert!(e.message.ends_with(" → TASK-2 → TASK-1"));
}

// ---------------------------------------------------------------------------------------
// Errors

#[tokio::test]
async fn not_found_errors() {
    let p = Project::new();
    let mcp = p.start().await;
    let a = mcp.create("Alive").await;
    let b = mcp.create("Doomed").await;

    let (text, e) = mcp
        .err("jility_get_ticket", json!({"ticket_id": "TASK-999"}))
        .await;
    assert_eq!(e.code, errors::NOT_FOUND);
    assert_eq!(
        text,
        "❌ Error: Ticket TASK-999 not found\n\nUse jility_list_tickets or jility_search_tickets \
         (CLI: `jility ticket list`) to see available tickets."
    );
    let (_, e) = mcp
        .err("jility_get_ticket", json!({"ticket_id": "OTHER-1"}))
        .await;
    assert_eq!(e.code, errors::NOT_FOUND);
    let uuid = "6f9619ff-8b86-d011-b42d-00c04fc964ff";
    let (_, e) = mcp
        .err("jility_get_ticket", json!({"ticket_id": uuid}))
        .await;
    assert_eq!(e.code, errors::NOT_FOUND);

    // A deleted ticket (the CLI deletes) is gone for every tool.
    p.cli(&["ticket", "delete", &b]).ok();
    for (tool, args) in [
        ("jility_get_ticket", json!({"ticket_id": b})),
        (
            "jility_update_status",
            json!({"ticket_id": b, "status": "todo"}),
        ),
        (
            "jility_add_comment",
            json!({"ticket_id": b, "content": "x"}),
        ),
        ("jility_claim_ticket", json!({"ticket_id": b})),
        (
            "jility_add_dependency",
            json!({"ticket_id": a, "depends_on": b}),
        ),
        ("jility_get_ticket_history", json!({"ticket_id": b})),
    ] {
        let (_, e) = mcp.err(tool, args).await;
        assert_eq!(e.code, errors::NOT_FOUND, "{tool}");
        assert_eq!(e.message, "Ticket TASK-2 was deleted", "{tool}");
    }

    let (_, e) = mcp
        .err(
            "jility_create_from_template",
            json!({"template": "epic", "variables": {}}),
        )
        .await;
    assert_eq!(e.code, errors::NOT_FOUND);
    let c = mcp.create("Third").await;
    let (_, e) = mcp
        .err(
            "jility_remove_dependency",
            json!({"ticket_id": a, "depends_on": c}),
        )
        .await;
    assert_eq!(e.code, errors::NOT_FOUND);
    assert_eq!(e.message, "TASK-1 does not depend on TASK-3");
    let (_, e) = mcp
        .err(
            "jility_create_ticket",
            json!({"title": "Orphan", "parent_id": "TASK-77"}),
        )
        .await;
    assert_eq!(e.code, errors::NOT_FOUND);
    assert_eq!(
        mcp.list("jility_list_tickets", json!({})).await.1.total,
        2,
        "the orphan was not created"
    );
}

/// Every way of giving bad input is `invalid_input`, with a message that says what is wrong,
/// and changes nothing.
#[tokio::test]
async fn invalid_input_errors() {
    let p = Project::new();
    let mcp = p.start().await;
    let n = mcp
        .create_with(json!({"title": "Target", "description": "## Notes\na\n\n### Notes\nb\n\n## Other\nc\n"}))
        .await;
    let cases: Vec<(&str, Value, &str)> = vec![
        (
            "jility_create_ticket",
            json!({"title": ""}),
            "Title cannot be empty",
        ),
        (
            "jility_create_ticket",
            json!({"title": "  \t "}),
            "Title cannot be empty",
        ),
        (
            "jility_create_ticket",
            json!({"title": "two\nlines"}),
            "Title cannot contain line breaks",
        ),
        (
            "jility_create_ticket",
            json!({"title": "x".repeat(501)}),
            "Title is longer than 500 characters",
        ),
        (
            "jility_create_ticket",
            json!({"title": "Zero", "story_points": 0}),
            "Story points must be between 1 and 13, got 0",
        ),
        (
            "jility_create_ticket",
            json!({"title": "Fourteen", "story_points": 14}),
            "Story points must be between 1 and 13, got 14",
        ),
        (
            "jility_create_ticket",
            json!({"title": 42}),
            "Invalid arguments: invalid type: integer `42`, expected a string",
        ),
        (
            "jility_create_ticket",
            json!({"title": "Extra", "priority": "high"}),
            "Invalid arguments: unknown field `priority`",
        ),
        (
            "jility_create_ticket",
            json!({}),
            "Invalid arguments: missing field `title`",
        ),
        (
            "jility_create_ticket",
            json!({"title": "Labels", "labels": ["ok", " "]}),
            "Labels cannot be empty strings",
        ),
        (
            "jility_get_ticket",
            json!({"ticket_id": "not a ticket"}),
            "'not a ticket' is not a ticket reference",
        ),
        (
            "jility_list_tickets",
            json!({"assignee": "bob", "unassigned": true}),
            "assignee and unassigned cannot be combined",
        ),
        (
            "jility_link_commit",
            json!({"ticket_id": n, "commit_hash": "not-a-hash"}),
            "'not-a-hash' is not a commit hash",
        ),
        (
            "jility_link_commit",
            json!({"ticket_id": n, "commit_hash": "abc"}),
            "'abc' is not a commit hash",
        ),
        (
            "jility_update_description",
            json!({"ticket_id": n, "operation": "replace_lines", "content": "x",
                   "start_line": 8, "end_line": 12}),
            "TASK-1: line range 8-12 is out of bounds: the description has 8 lines",
        ),
        (
            "jility_update_description",
            json!({"ticket_id": n, "operation": "replace_lines", "content": "x",
                   "start_line": 0, "end_line": 1}),
            "start_line must be 1 or more, got 0",
        ),
        (
            "jility_update_description",
            json!({"ticket_id": n, "operation": "replace_lines", "content": "x",
                   "start_line": 3, "end_line": 2}),
            "TASK-1: line range 3-2 is invalid: end_line must be >= start_line (the description has 8 lines)",
        ),
        (
            "jility_update_description",
            json!({"ticket_id": n, "operation": "replace_lines", "content": "x", "start_line": 2}),
            "TASK-1: replace_lines requires end_line (1-indexed, inclusive)",
        ),
        (
            "jility_update_description",
            json!({"ticket_id": n, "operation": "replace_section", "content": "x",
                   "section_header": "## Acceptance Criteria"}),
            "TASK-1: no heading in the description matches section_header \"## Acceptance Criteria\"",
        ),
        (
            "jility_update_description",
            json!({"ticket_id": n, "operation": "replace_section", "content": "x",
                   "section_header": "Notes"}),
            "TASK-1: section_header \"Notes\" is ambiguous: it matches 2 headings, at lines 1, 4",
        ),
        (
            "jility_update_description",
            json!({"ticket_id": n, "operation": "replace_section", "content": "x"}),
            "TASK-1: replace_section requires section_header (e.g. \"## Acceptance Criteria\")",
        ),
        (
            "jility_update_description",
            json!({"ticket_id": n, "operation": "rewrite", "content": "x"}),
            "Invalid arguments: unknown variant `rewrite`",
        ),
        (
            "jility_create_from_template",
            json!({"template": "database-migration", "variables": {"other": "x"}}),
            "template \"database-migration\" needs values for these variables: change, table",
        ),
        (
            "jility_search_tickets",
            json!({"query": "'"}),
            "The query ''' has no words to search for",
        ),
        (
            "jility_add_comment",
            json!({"ticket_id": n, "content": "\n  \n"}),
            "Comment cannot be empty",
        ),
        (
            "jility_assign_ticket",
            json!({"ticket_id": n, "assignees": ["ok", ""]}),
            "Assignees cannot be empty strings",
        ),
        (
            "jility_create_tickets_batch",
            json!({"tickets": []}),
            "The batch has no tickets",
        ),
    ];
    for (tool, args, message) in cases {
        let (text, e) = mcp.err(tool, args.clone()).await;
        assert_eq!(e.code, errors::INVALID_INPUT, "{tool} {args}: {e:?}");
        assert!(
            e.message.starts_with(message),
            "{tool} {args}:\n  got {:?}\n want {message:?}",
            e.message
        );
        assert!(!e.hint.is_empty(), "{tool} {args}: every error has a hint");
        assert!(text.starts_with(&format!("❌ Error: {message}")), "{text}");
    }
    // Nothing was created or changed.
    let (_, info) = mcp.list("jility_list_tickets", json!({})).await;
    assert_eq!(info.total, 1);
    let detail = mcp.data("jility_get_ticket", json!({"ticket_id": n})).await;
    assert_eq!(detail["comment_count"], 0);
    assert_eq!(detail["linked_commits"], json!([]));
    let history = mcp
        .data("jility_get_ticket_history", json!({"ticket_id": n}))
        .await;
    assert_eq!(history["current_version"], 1);
    assert_eq!(mcp.create("Next").await, "TASK-2");
}

// ---------------------------------------------------------------------------------------
// Description editing

/// Create a ticket with `description`; edit it; return the new description, checking that
/// the edit made exactly one new version.
async fn edit(mcp: &mcp_testkit::McpProcess, n: &str, args: Value) -> (String, Value) {
    let before = mcp
        .data("jility_get_ticket_history", json!({"ticket_id": n}))
        .await["current_version"]
        .as_u64()
        .unwrap();
    let mut args = args;
    args["ticket_id"] = json!(n);
    let u = mcp.data("jility_update_description", args).await;
    assert_eq!(u["changed"], true, "{u}");
    assert_eq!(u["version"].as_u64().unwrap(), before + 1, "{u}");
    let h = mcp
        .data("jility_get_ticket_history", json!({"ticket_id": n}))
        .await;
    assert_eq!(h["current_version"].as_u64().unwrap(), before + 1);
    (mcp.description(n).await, u)
}

#[tokio::test]
async fn append_prepend_and_replace_all() {
    let p = Project::new();
    let mcp = p.start().await;
    let n = mcp
        .create_with(json!({"title": "Edits", "description": "# Title\n\nBody"}))
        .await;
    let (text, _) = edit(
        &mcp,
        &n,
        json!({"operation": "append", "content": "## Update\n\n- Added error handling\n"}),
    )
    .await;
    assert_eq!(
        text, "# Title\n\nBody\n## Update\n\n- Added error handling\n",
        "appended on a new line"
    );
    let (text, _) = edit(
        &mcp,
        &n,
        json!({"operation": "prepend", "content": "> Status: draft"}),
    )
    .await;
    assert_eq!(
        text,
        "> Status: draft\n# Title\n\nBody\n## Update\n\n- Added error handling\n"
    );
    let (text, u) = edit(
        &mcp,
        &n,
        json!({"operation": "replace_all", "content": "Fresh start\n"}),
    )
    .await;
    assert_eq!(text, "Fresh start\n");
    assert_eq!(u["summary"], "replace_all");
    assert_eq!(u["diff"], json!({"added": 1, "removed": 7}));
    assert_eq!(u["lines"], 1);

    // An edit that leaves the text as it was records no version.
    let (text, u) = mcp
        .ok(
            "jility_update_description",
            json!({"ticket_id": n, "operation": "replace_all", "content": "Fresh start\n"}),
        )
        .await;
    assert!(
        text.starts_with("✅ Description of TASK-1 unchanged"),
        "{text}"
    );
    assert_eq!(u["changed"], false);
    assert_eq!(u["version"], 4);

    // Appending to an empty description.
    let m = mcp.create("Empty").await;
    let (text, _) = edit(&mcp, &m, json!({"operation": "append", "content": "first"})).await;
    assert_eq!(text, "first");
}

#[tokio::test]
async fn replace_lines_at_the_boundaries() {
    let p = Project::new();
    let mcp = p.start().await;
    let n = mcp
        .create_with(json!({"title": "Lines", "description": "1\n2\n3\n4\n5\n"}))
        .await;
    let (text, u) = edit(
        &mcp,
        &n,
        json!({"operation": "replace_lines", "start_line": 1, "end_line": 1, "content": "one"}),
    )
    .await;
    assert_eq!(text, "one\n2\n3\n4\n5\n");
    assert_eq!(u["summary"], "replace_lines (line 1)");
    let (text, _) = edit(
        &mcp,
        &n,
        json!({"operation": "replace_lines", "start_line": 5, "end_line": 5, "content": "five\n"}),
    )
    .await;
    assert_eq!(text, "one\n2\n3\n4\nfive\n");
    let (text, u) = edit(
        &mcp,
        &n,
        json!({"operation": "replace_lines", "start_line": 2, "end_line": 4, "content": "x\ny",
               "message": "Updated checklist progress"}),
    )
    .await;
    assert_eq!(text, "one\nx\ny\nfive\n");
    assert_eq!(u["summary"], "replace_lines (lines 2-4)");
    assert_eq!(u["message"], "Updated checklist progress");
    assert_eq!(u["diff"], json!({"added": 2, "removed": 3}));
    // The whole text, growing it.
    let (text, _) = edit(
        &mcp,
        &n,
        json!({"operation": "replace_lines", "start_line": 1, "end_line": 4, "content": "a\nb\nc\nd\ne\nf"}),
    )
    .await;
    assert_eq!(text, "a\nb\nc\nd\ne\nf\n");

    // Out of bounds: one past the end, and on an empty description.
    let (text, e) = mcp
        .err(
            "jility_update_description",
            json!({"ticket_id": n, "operation": "replace_lines", "start_line": 6, "end_line": 7, "content": "x"}),
        )
        .await;
    assert_eq!(e.code, errors::INVALID_INPUT);
    assert_eq!(
        e.message,
        "TASK-1: line range 6-7 is out of bounds: the description has 6 lines"
    );
    assert!(
        text.ends_with(
            "The description has 6 lines; use start_line and end_line between 1 and 6 \
             (read it with jility_get_ticket)."
        ),
        "{text}"
    );
    let m = mcp.create("Empty").await;
    let (_, e) = mcp
        .err(
            "jility_update_description",
            json!({"ticket_id": m, "operation": "replace_lines", "start_line": 1, "end_line": 1, "content": "x"}),
        )
        .await;
    assert_eq!(
        e.message,
        "TASK-2: line range 1-1 is out of bounds: the description is empty (0 lines)"
    );
    assert!(e.hint.contains("append or replace_all"));
    assert_eq!(mcp.description(&n).await, "a\nb\nc\nd\ne\nf\n");
}

const DOC: &str = "# Title\n\nIntro text.\n\n## Context\n\nSome context.\n\n### Details\n\n\
                   Deep details.\n\n## Acceptance Criteria\n\n- [ ] one\n- [ ] two\n\n## Notes\nLast note.\n";

#[tokio::test]
async fn replace_section_at_the_end_and_with_nested_headers() {
    let p = Project::new();
    let mcp = p.start().await;
    let n = mcp
        .create_with(json!({"title": "Sections", "description": DOC}))
        .await;
    // The last section, which runs to the end of the text.
    let (text, u) = edit(
        &mcp,
        &n,
        json!({"operation": "replace_section", "section_header": "## Notes", "content": "New note.\n\n"}),
    )
    .await;
    assert_eq!(text, DOC.replace("Last note.\n", "New note.\n"));
    assert_eq!(u["summary"], "replace_section (## Notes, lines 18-19)");
    // A section with a ### inside: the sub-section is part of it.
    let (text, u) = edit(
        &mcp,
        &n,
        json!({"operation": "replace_section", "section_header": "## Context", "content": "New context."}),
    )
    .await;
    assert_eq!(
        text,
        "# Title\n\nIntro text.\n\n## Context\n\nNew context.\n\n## Acceptance Criteria\n\n\
         - [ ] one\n- [ ] two\n\n## Notes\nNew note.\n"
    );
    assert_eq!(u["summary"], "replace_section (## Context, lines 5-12)");
    // Matching ignores case and extra spaces; the middle section.
    let (text, _) = edit(
        &mcp,
        &n,
        json!({"operation": "replace_section", "section_header": "acceptance   CRITERIA",
               "content": "- [x] one\n- [x] two\n- [x] three"}),
    )
    .await;
    assert!(
        text.contains("## Acceptance Criteria\n\n- [x] one\n- [x] two\n- [x] three\n\n## Notes\n"),
        "{text}"
    );
    // The nested header on its own.
    let n2 = mcp
        .create_with(json!({"title": "Nested", "description": DOC}))
        .await;
    let (text, _) = edit(
        &mcp,
        &n2,
        json!({"operation": "replace_section", "section_header": "### Details", "content": "More."}),
    )
    .await;
    assert!(
        text.contains("### Details\n\nMore.\n\n## Acceptance Criteria"),
        "{text}"
    );
    assert!(text.contains("Some context.\n"), "{text}");
}

#[tokio::test]
async fn replace_section_ignores_headers_in_code_and_understands_setext() {
    let p = Project::new();
    let mcp = p.start().await;
    let code = "## Steps\n\n```sh\n# not a heading\n## Notes\n```\n\n~~~\n## Notes\n~~~\n\n## Notes\n\nreal\n";
    let n = mcp
        .create_with(json!({"title": "Code", "description": code}))
        .await;
    let (text, u) = edit(
        &mcp,
        &n,
        json!({"operation": "replace_section", "section_header": "## Notes", "content": "changed"}),
    )
    .await;
    assert_eq!(
        text,
        code.replace("\nreal\n", "\nchanged\n"),
        "not ambiguous"
    );
    assert_eq!(u["summary"], "replace_section (## Notes, lines 12-14)");
    let (text, _) = edit(
        &mcp,
        &n,
        json!({"operation": "replace_section", "section_header": "Steps", "content": "new steps"}),
    )
    .await;
    assert_eq!(text, "## Steps\n\nnew steps\n\n## Notes\n\nchanged\n");
    let (_, e) = mcp
        .err(
            "jility_update_description",
            json!({"ticket_id": n, "operation": "replace_section", "section_header": "not a heading", "content": "x"}),
        )
        .await;
    assert_eq!(e.code, errors::INVALID_INPUT);
    assert!(
        e.hint
            .starts_with("Available headings: \"## Steps\", \"## Notes\"."),
        "headings are listed"
    );

    let setext =
        "Title\n=====\n\nintro\n\nPart one\n--------\nbody one\n\nPart two\n---\nbody two\n";
    let m = mcp
        .create_with(json!({"title": "Setext", "description": setext}))
        .await;
    let (text, u) = edit(
        &mcp,
        &m,
        json!({"operation": "replace_section", "section_header": "## Part one", "content": "new"}),
    )
    .await;
    assert_eq!(
        text,
        "Title\n=====\n\nintro\n\nPart one\n--------\nnew\n\nPart two\n---\nbody two\n"
    );
    assert_eq!(u["summary"], "replace_section (## Part one, lines 6-9)");
    let (text, _) = edit(
        &mcp,
        &m,
        json!({"operation": "replace_section", "section_header": "# Title", "content": "everything"}),
    )
    .await;
    assert_eq!(text, "Title\n=====\n\neverything\n");
    let h = mcp
        .data("jility_get_ticket_history", json!({"ticket_id": m}))
        .await;
    assert_eq!(h["current_version"], 3);
}

// ---------------------------------------------------------------------------------------
// Lists

async fn six_tickets(mcp: &mcp_testkit::McpProcess) {
    for args in [
        json!({"title": "Auth API", "status": "in_progress", "story_points": 3,
               "assignees": ["agent-1"], "labels": ["backend", "security"], "kind": "epic"}),
        json!({"title": "Login UI", "status": "in_progress", "story_points": 5,
               "assignees": ["alice"], "labels": ["frontend"]}),
        json!({"title": "Password hashing", "status": "todo", "labels": ["backend"]}),
        json!({"title": "OAuth support", "story_points": 8, "labels": ["backend"],
               "parent_id": "TASK-1", "epic_id": "TASK-1"}),
        json!({"title": "Write docs", "status": "done", "epic_id": "TASK-1"}),
        json!({"title": "Vendor API access", "status": "blocked", "assignees": ["agent-1"]}),
    ] {
        mcp.create_with(args).await;
    }
}

#[tokio::test]
async fn list_groups_by_status_and_filters() {
    let p = Project::new();
    let mcp = p.start().await;
    six_tickets(&mcp).await;
    let (text, page, info) = mcp.paged("jility_list_tickets", json!({})).await;
    assert_eq!(
        text,
        "📋 Found 6 tickets\n\n\
         ## In Progress (2)\n- TASK-2: Login UI (alice) • 5 pts\n- TASK-1: Auth API (agent-1) • 3 pts\n\n\
         ## Blocked (1)\n- TASK-6: Vendor API access (agent-1)\n\n\
         ## Todo (1)\n- TASK-3: Password hashing (unassigned)\n\n\
         ## Backlog (1)\n- TASK-4: OAuth support (unassigned) • 8 pts\n\n\
         ## Done (1)\n- TASK-5: Write docs (unassigned)"
    );
    assert_eq!(info.total, 6);
    assert!(info.next_cursor.is_none());
    assert!(info.total_exact.is_none(), "exact totals say nothing more");
    assert_eq!(
        numbers(&page["tickets"]),
        ["TASK-6", "TASK-5", "TASK-4", "TASK-3", "TASK-2", "TASK-1"],
        "newest first"
    );
    assert_eq!(page["tickets"][5]["labels"], json!(["backend", "security"]));

    let cases = [
        (
            json!({"status": ["in_progress"]}),
            set(&["TASK-1", "TASK-2"]),
        ),
        (
            json!({"status": ["in_progress", "blocked", "done"]}),
            set(&["TASK-1", "TASK-2", "TASK-5", "TASK-6"]),
        ),
        (json!({"status": ["review"]}), set(&[])),
        (json!({"assignee": "agent-1"}), set(&["TASK-1", "TASK-6"])),
        (json!({"assignee": "nobody"}), set(&[])),
        (
            json!({"labels": ["backend"]}),
            set(&["TASK-1", "TASK-3", "TASK-4"]),
        ),
        (json!({"labels": ["backend", "security"]}), set(&["TASK-1"])),
        (json!({"labels": ["frontend", "backend"]}), set(&[])),
        (json!({"parent_id": "TASK-1"}), set(&["TASK-4"])),
        (json!({"epic_id": "task-1"}), set(&["TASK-4", "TASK-5"])),
        (
            json!({"unassigned": true}),
            set(&["TASK-3", "TASK-4", "TASK-5"]),
        ),
        (
            json!({"unassigned": true, "labels": ["backend"], "status": ["backlog", "todo"]}),
            set(&["TASK-3", "TASK-4"]),
        ),
        (
            json!({"assignee": "agent-1", "status": ["blocked"]}),
            set(&["TASK-6"]),
        ),
    ];
    for (args, expected) in cases {
        let (page, info) = mcp.list("jility_list_tickets", args.clone()).await;
        let got: BTreeSet<String> = numbers(&page["tickets"]).into_iter().collect();
        assert_eq!(got, expected, "{args}");
        assert_eq!(info.total, expected.len() as u64, "{args}");
    }
    let (text, _) = mcp
        .ok("jility_list_tickets", json!({"status": ["review"]}))
        .await;
    assert_eq!(text, "📋 Found 0 tickets");
    let (text, _) = mcp
        .ok("jility_list_tickets", json!({"status": ["blocked"]}))
        .await;
    assert!(
        text.starts_with("📋 Found 1 ticket\n\n## Blocked (1)\n"),
        "{text}"
    );
    let (_, e) = mcp
        .err("jility_list_tickets", json!({"status": ["in-progress"]}))
        .await;
    assert_eq!(e.code, errors::INVALID_STATUS);
    let (_, e) = mcp
        .err(
            "jility_create_ticket",
            json!({"title": "Bad status", "status": "started"}),
        )
        .await;
    assert_eq!(e.code, errors::INVALID_STATUS);
    assert!(
        e.message
            .starts_with("Invalid status 'started'. Valid statuses: ")
    );
    let (_, e) = mcp
        .err("jility_list_tickets", json!({"parent_id": "TASK-40"}))
        .await;
    assert_eq!(e.code, errors::NOT_FOUND);
}

/// Paging with `cursor` visits every ticket exactly once, also when tickets are created
/// while paging; the default page is 50 and the largest 200.
#[tokio::test]
async fn cursor_paging_visits_every_ticket_once() {
    let p = Project::new();
    let mcp = p.start().await;
    for (from, count) in [(1, 200), (201, 50)] {
        let tickets: Vec<Value> = (from..from + count)
            .map(|i| json!({"title": format!("Ticket number {i}"), "labels": [format!("l{}", i % 3)]}))
            .collect();
        let b = mcp
            .data("jility_create_tickets_batch", json!({"tickets": tickets}))
            .await;
        assert_eq!(b["tickets"].as_array().unwrap().len(), count);
    }
    let (text, page, info) = mcp.paged("jility_list_tickets", json!({})).await;
    assert_eq!(page["tickets"].as_array().unwrap().len(), 50);
    assert_eq!(info.total, 250);
    assert!(
        text.starts_with("📋 Found 250 tickets (showing 50)\n"),
        "{text}"
    );
    let cursor = info.next_cursor.clone().unwrap();
    assert!(text.ends_with(&format!(
        "More: pass cursor \"{cursor}\" for the next page."
    )));
    let (page, info) = mcp.list("jility_list_tickets", json!({"limit": 200})).await;
    assert_eq!(page["tickets"].as_array().unwrap().len(), 200);
    assert!(info.next_cursor.is_some());

    let mut seen: Vec<String> = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let mut args = json!({"limit": 23});
        if let Some(c) = &cursor {
            args["cursor"] = json!(c);
        }
        let (page, info) = mcp.list("jility_list_tickets", args).await;
        pages += 1;
        seen.extend(numbers(&page["tickets"]));
        if pages == 1 {
            assert_eq!(info.total, 250);
            // New tickets during paging appear before the cursor, never twice.
            for i in 0..3 {
                mcp.create(&format!("Late {i}")).await;
            }
        } else {
            assert_eq!(info.total, 253);
        }
        match info.next_cursor {
            Some(c) => cursor = Some(c),
            None => break,
        }
        assert!(pages < 100, "paging does not end");
    }
    assert_eq!(pages, 11, "250 tickets in pages of 23");
    let unique: BTreeSet<&String> = seen.iter().collect();
    assert_eq!(unique.len(), seen.len(), "no ticket twice");
    let expected: BTreeSet<String> = (1..=250).map(|i| format!("TASK-{i}")).collect();
    assert_eq!(seen.iter().cloned().collect::<BTreeSet<_>>(), expected);

    // Paging a filtered list.
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut args = json!({"limit": 10, "labels": ["l1"]});
        if let Some(c) = &cursor {
            args["cursor"] = json!(c);
        }
        let (page, info) = mcp.list("jility_list_tickets", args).await;
        assert_eq!(info.total, 84);
        seen.extend(numbers(&page["tickets"]));
        match info.next_cursor {
            Some(c) => cursor = Some(c),
            None => break,
        }
    }
    let expected: Vec<String> = (1..=250)
        .rev()
        .filter(|i| i % 3 == 1)
        .map(|i| format!("TASK-{i}"))
        .collect();
    assert_eq!(seen, expected);
}

#[tokio::test]
async fn deleted_tickets_vanish_from_every_view() {
    let p = Project::new();
    let mcp = p.start().await;
    six_tickets(&mcp).await;
    mcp.data(
        "jility_add_dependency",
        json!({"ticket_id": "TASK-1", "depends_on": "TASK-3"}),
    )
    .await;
    mcp.data(
        "jility_add_comment",
        json!({"ticket_id": "TASK-3", "content": "salted hashes please"}),
    )
    .await;
    let (hits, _) = mcp
        .list("jility_search_tickets", json!({"query": "hashing"}))
        .await;
    assert_eq!(numbers(&hits["hits"]), ["TASK-3"]);

    let out = p.cli(&["ticket", "delete", "TASK-3"]);
    assert_eq!(out.ok().trim(), "✓ Deleted TASK-3  Password hashing");

    let (page, info) = mcp.list("jility_list_tickets", json!({})).await;
    assert_eq!(info.total, 5);
    assert!(!numbers(&page["tickets"]).contains(&"TASK-3".to_string()));
    assert_eq!(
        listed(&mcp, json!({"labels": ["backend"]})).await,
        set(&["TASK-1", "TASK-4"])
    );
    assert_eq!(
        listed(&mcp, json!({"unassigned": true})).await,
        set(&["TASK-4", "TASK-5"])
    );
    for query in ["hashing", "salted"] {
        let (hits, hits_info) = mcp
            .list("jility_search_tickets", json!({"query": query}))
            .await;
        assert_eq!(hits_info.total, 0, "{query}: {hits}");
    }
    let (_, e) = mcp
        .err("jility_get_ticket", json!({"ticket_id": "TASK-3"}))
        .await;
    assert_eq!(e.code, errors::NOT_FOUND);
    let g = mcp
        .data(
            "jility_get_dependency_graph",
            json!({"ticket_id": "TASK-1"}),
        )
        .await;
    assert_eq!(g["dependencies"], json!([]), "a deleted dependency is gone");
    assert_eq!(g["is_blocked"], false);
    // Numbers are never reused.
    assert_eq!(mcp.create("After").await, "TASK-7");
}

// ---------------------------------------------------------------------------------------
// Batches

#[tokio::test]
async fn batch_creates_under_a_parent_with_dependencies() {
    let p = Project::new();
    let mcp = p.start().await;
    let epic = mcp.create("User registration epic").await;
    let (text, b) = mcp
        .ok(
            "jility_create_tickets_batch",
            json!({"parent_id": epic, "tickets": [
                {"title": "Setup database schema", "story_points": 3, "assignees": ["agent-1"]},
                {"title": "Create user model", "story_points": 2, "assignees": ["agent-1"],
                 "depends_on": ["#1"]},
                {"title": "Build registration endpoint", "story_points": 5, "assignees": ["agent-2"],
                 "depends_on": ["Create user model", "TASK-1"], "labels": ["api"],
                 "description": "## Context\n\nPOST /register"},
                {"title": "Write integration tests",
                 "depends_on": ["#2", " Build registration endpoint ", "#2"]},
            ]}),
        )
        .await;
    assert_eq!(
        text,
        "✅ Created 4 tickets under TASK-1\n\n\
         - TASK-2: Setup database schema (3 pts) → agent-1\n\
         - TASK-3: Create user model (2 pts) → agent-1 (depends on TASK-2)\n\
         - TASK-4: Build registration endpoint (5 pts) → agent-2 (depends on TASK-3, TASK-1)\n\
         - TASK-5: Write integration tests → unassigned (depends on TASK-3, TASK-4)\n\n\
         Total: 10 story points"
    );
    assert_eq!(b["total_story_points"], 10);
    assert_eq!(b["parent"]["number"], "TASK-1");
    assert_eq!(b["tickets"][2]["labels"], json!(["api"]));
    assert_eq!(
        listed(&mcp, json!({"parent_id": "TASK-1"})).await,
        set(&["TASK-2", "TASK-3", "TASK-4", "TASK-5"])
    );
    let d = mcp
        .data("jility_get_ticket", json!({"ticket_id": "TASK-5"}))
        .await;
    assert_eq!(numbers(&d["dependencies"]), ["TASK-3", "TASK-4"]);
    assert_eq!(d["ticket"]["parent"], "TASK-1");
    assert_eq!(d["ticket"]["created_by"], AGENT);
    let d = mcp
        .data("jility_get_ticket", json!({"ticket_id": "TASK-4"}))
        .await;
    assert_eq!(d["ticket"]["description"], "## Context\n\nPOST /register");
    assert_eq!(d["ticket"]["assignees"], json!(["agent-2"]));
    let g = mcp
        .data(
            "jility_get_dependency_graph",
            json!({"ticket_id": "TASK-2"}),
        )
        .await;
    assert_eq!(numbers(&g["downstream"]), ["TASK-3", "TASK-4", "TASK-5"]);

    // Without a parent.
    let (text, b) = mcp
        .ok(
            "jility_create_tickets_batch",
            json!({"tickets": [{"title": "Loose"}]}),
        )
        .await;
    assert!(
        text.starts_with("✅ Created 1 ticket")
            && text.contains("\n\n- TASK-6: Loose → unassigned\n"),
        "{text}"
    );
    assert!(b.get("parent").is_none());
}

/// A batch with any bad item creates nothing: not the items before it, not a number.
#[tokio::test]
async fn a_batch_with_a_bad_item_creates_nothing() {
    let p = Project::new();
    let mcp = p.start().await;
    mcp.create("Existing").await;
    let good = |t: &str| json!({"title": t, "story_points": 1});
    let bad_items = [
        (
            json!({"title": "Too big", "story_points": 20}),
            errors::INVALID_INPUT,
            "Ticket #3 of the batch: Story points must be between 1 and 13, got 20",
        ),
        (
            json!({"title": "Unknown dependency", "depends_on": ["TASK-99"]}),
            errors::NOT_FOUND,
            "Ticket #3 of the batch: Ticket TASK-99 not found",
        ),
        (
            json!({"title": "Forward reference", "depends_on": ["#5"]}),
            errors::INVALID_INPUT,
            "Ticket #3 of the batch depends on #5, which is not an earlier item",
        ),
        (
            json!({"title": "Self reference", "depends_on": ["#3"]}),
            errors::INVALID_INPUT,
            "Ticket #3 of the batch depends on #3, which is not an earlier item",
        ),
        (
            json!({"title": "Unknown title", "depends_on": ["No such item"]}),
            errors::INVALID_INPUT,
            "Ticket #3 of the batch: 'No such item' is not a ticket reference",
        ),
        (
            json!({"title": ""}),
            errors::INVALID_INPUT,
            "Ticket #3 of the batch: Title cannot be empty",
        ),
    ];
    for (item, code, message) in bad_items {
        let (_, e) = mcp
            .err(
                "jility_create_tickets_batch",
                json!({"tickets": [good("First of batch"), good("Second of batch"), item,
                                   good("Fourth of batch"), good("Fifth of batch")]}),
            )
            .await;
        assert_eq!(e.code, code, "{e:?}");
        assert_eq!(e.message, message);
    }
    let (_, e) = mcp
        .err(
            "jility_create_tickets_batch",
            json!({"parent_id": "TASK-50", "tickets": [good("Orphan")]}),
        )
        .await;
    assert_eq!(e.code, errors::NOT_FOUND);
    let many: Vec<Value> = (0..201).map(|i| good(&format!("t{i}"))).collect();
    let (_, e) = mcp
        .err("jility_create_tickets_batch", json!({"tickets": many}))
        .await;
    assert_eq!(
        e.message,
        "The batch has 201 tickets; at most 200 are allowed"
    );

    let (_, info) = mcp.list("jility_list_tickets", json!({})).await;
    assert_eq!(info.total, 1);
    let (hits, hits_info) = mcp
        .list("jility_search_tickets", json!({"query": "batch"}))
        .await;
    assert_eq!(hits_info.total, 0, "{hits}");
    assert_eq!(
        mcp.create("Next").await,
        "TASK-2",
        "failed batches used no numbers"
    );
}

// ---------------------------------------------------------------------------------------
// Search

async fn search_fixture(mcp: &mcp_testkit::McpProcess) {
    for args in [
        json!({"title": "Implement JWT token generation",
               "description": "Add JWT-based auth to API. Token should expire after 7 days."}),
        json!({"title": "Add login endpoint",
               "description": "Endpoint should validate credentials and return a JWT token."}),
        json!({"title": "Add token refresh endpoint",
               "description": "Allow users to renew their session without re-authenticating."}),
        json!({"title": "Marsupial census",
               "description": "Count the kangaroo, the other kangaroo and one more kangaroo."}),
        json!({"title": "Kangaroo tracker", "description": "Just a tracker."}),
        json!({"title": "Support c++ builds and foo-bar parsing",
               "description": "Also (unbalanced parentheses and it's quoted."}),
    ] {
        mcp.create_with(args).await;
    }
    mcp.data(
        "jility_add_comment",
        json!({"ticket_id": "TASK-3", "content": "We spotted a wombat in the logs"}),
    )
    .await;
}

/// The bold parts of a snippet, lower-cased.
fn bold(snippet: &str) -> Vec<String> {
    snippet
        .split("**")
        .skip(1)
        .step_by(2)
        .map(str::to_lowercase)
        .collect()
}

#[tokio::test]
async fn search_ranks_titles_first_with_bold_snippets() {
    let p = Project::new();
    let mcp = p.start().await;
    search_fixture(&mcp).await;

    let (text, r, r_info) = mcp
        .paged("jility_search_tickets", json!({"query": "kangaroo"}))
        .await;
    assert_eq!(
        numbers(&r["hits"]),
        ["TASK-5", "TASK-4"],
        "a title match beats three in a description"
    );
    assert_eq!(r_info.total, 2);
    assert_eq!(r["query"], "kangaroo");
    assert!(text.starts_with("🔍 Found 2 tickets matching \"kangaroo\"\n\n1. **TASK-5** • Kangaroo tracker (backlog)\n   > "), "{text}");
    for hit in r["hits"].as_array().unwrap() {
        let snippet = hit["snippet"].as_str().unwrap();
        assert!(bold(snippet).contains(&"kangaroo".to_string()), "{snippet}");
    }

    let (text, r) = mcp
        .ok("jility_search_tickets", json!({"query": "\"JWT token\""}))
        .await;
    assert_eq!(numbers(&r["hits"]), ["TASK-1", "TASK-2"]);
    assert!(
        text.starts_with("🔍 Found 2 tickets matching \"\"JWT token\"\"\n\n1. **TASK-1** • Implement JWT token generation (backlog)\n"),
        "{text}"
    );
    for hit in r["hits"].as_array().unwrap() {
        let snippet = hit["snippet"].as_str().unwrap();
        let words = bold(snippet).join(" ");
        assert!(
            words.contains("jwt") && words.contains("token"),
            "{snippet}"
        );
    }
    // All words must match, in any order and form (stemming).
    let (r, _) = mcp
        .list("jility_search_tickets", json!({"query": "token endpoint"}))
        .await;
    assert_eq!(
        numbers(&r["hits"]).into_iter().collect::<BTreeSet<_>>(),
        set(&["TASK-2", "TASK-3"])
    );
    let (r, _) = mcp
        .list(
            "jility_search_tickets",
            json!({"query": "refreshing TOKENS"}),
        )
        .await;
    assert_eq!(numbers(&r["hits"]), ["TASK-3"]);

    // Comments are searched.
    let (r, _) = mcp
        .list("jility_search_tickets", json!({"query": "wombat"}))
        .await;
    assert_eq!(numbers(&r["hits"]), ["TASK-3"]);
    assert!(
        r["hits"][0]["snippet"]
            .as_str()
            .unwrap()
            .contains("**wombat**"),
        "{r}"
    );

    // The limit cuts the hits, not the total.
    let (text, r, r_info) = mcp
        .paged(
            "jility_search_tickets",
            json!({"query": "token", "limit": 1}),
        )
        .await;
    assert_eq!(r["hits"].as_array().unwrap().len(), 1);
    assert_eq!(r_info.total, 3);
    assert!(
        text.starts_with("🔍 Found 3 tickets matching \"token\" (top 1)"),
        "{text}"
    );
    let (_, e) = mcp
        .err(
            "jility_search_tickets",
            json!({"query": "token", "limit": 101}),
        )
        .await;
    assert_eq!(e.code, errors::INVALID_PARAMS);

    // Default limit 20.
    let many: Vec<Value> = (0..25)
        .map(|i| json!({"title": format!("Platypus {i}")}))
        .collect();
    mcp.data("jility_create_tickets_batch", json!({"tickets": many}))
        .await;
    let (r, r_info) = mcp
        .list("jility_search_tickets", json!({"query": "platypus"}))
        .await;
    assert_eq!(r_info.total, 25);
    assert_eq!(r["hits"].as_array().unwrap().len(), 20);

    // Title edits (CLI) are searched at once.
    p.cli(&["ticket", "edit", "TASK-5", "--title", "Wallaby tracker"])
        .ok();
    let (r, _) = mcp
        .list("jility_search_tickets", json!({"query": "wallaby"}))
        .await;
    assert_eq!(numbers(&r["hits"]), ["TASK-5"]);
    let (r, _) = mcp
        .list("jility_search_tickets", json!({"query": "kangaroo"}))
        .await;
    assert_eq!(numbers(&r["hits"]), ["TASK-4"]);
    // Description edits too.
    mcp.data(
        "jility_update_description",
        json!({"ticket_id": "TASK-4", "operation": "append", "content": "Also a quokka."}),
    )
    .await;
    let (r, _) = mcp
        .list("jility_search_tickets", json!({"query": "quokka"}))
        .await;
    assert_eq!(numbers(&r["hits"]), ["TASK-4"]);
}

#[tokio::test]
async fn search_queries_with_punctuation_never_fail() {
    let p = Project::new();
    let mcp = p.start().await;
    search_fixture(&mcp).await;
    let cases: [(&str, Option<&[&str]>); 15] = [
        ("\"JWT token\"", Some(&["TASK-1", "TASK-2"])),
        ("c++", Some(&["TASK-6"])),
        ("foo-bar", Some(&["TASK-6"])),
        ("(unbalanced", Some(&["TASK-6"])),
        ("it's", Some(&["TASK-6"])),
        ("\"unclosed phrase", None),
        ("a AND OR NOT", None),
        ("NEAR(jwt token)", None),
        ("jwt*", Some(&["TASK-1", "TASK-2"])),
        ("-jwt", None),
        ("^jwt", Some(&["TASK-1", "TASK-2"])),
        ("{jwt}", Some(&["TASK-1", "TASK-2"])),
        ("jwt; DROP TABLE tickets; --", None),
        ("\"\"jwt\"\"", Some(&["TASK-1", "TASK-2"])),
        ("ünïcödé wörds", None),
    ];
    for (query, expected) in cases {
        let (text, r) = mcp
            .ok("jility_search_tickets", json!({"query": query}))
            .await;
        assert!(text.starts_with("🔍 Found "), "{query}: {text}");
        if let Some(expected) = expected {
            assert_eq!(
                numbers(&r["hits"]).into_iter().collect::<BTreeSet<_>>(),
                set(expected),
                "{query}"
            );
        }
    }
    // `-word` leaves out what has the word (the query language's negation).
    let (_, r) = mcp
        .ok("jility_search_tickets", json!({"query": "-jwt"}))
        .await;
    let without = numbers(&r["hits"]);
    assert!(!without.is_empty(), "{r}");
    assert!(
        !without.iter().any(|n| n == "TASK-1" || n == "TASK-2"),
        "{without:?}"
    );
    // A word before a colon is a qualifier: an unknown one is refused, naming the
    // qualifiers; quoted, it is text.
    let (_, e) = mcp
        .err("jility_search_tickets", json!({"query": "title:jwt"}))
        .await;
    assert_eq!(e.code, errors::INVALID_INPUT);
    assert!(e.message.contains("'title:jwt'"), "{}", e.message);
    mcp.ok("jility_search_tickets", json!({"query": "\"title:jwt\""}))
        .await;
    // Only queries without any word are refused.
    for query in ["*", "'", "\"\"", "   ", "-- () ** ^", ""] {
        let (_, e) = mcp
            .err("jility_search_tickets", json!({"query": query}))
            .await;
        assert_eq!(e.code, errors::INVALID_INPUT, "{query:?}");
        assert_eq!(
            e.message,
            format!("The query '{query}' has no words to search for")
        );
    }
    // The database survived the SQL-looking query.
    assert_eq!(mcp.list("jility_list_tickets", json!({})).await.1.total, 6);
}

/// Label and assignee filters read copies of the ticket's status: moves, claims and
/// deletions must reach them.
#[tokio::test]
async fn filters_follow_status_changes_and_deletions() {
    let p = Project::new();
    let mcp = p.start_as("agent-1").await;
    for title in ["One", "Two", "Three"] {
        mcp.create_with(json!({"title": title, "labels": ["api"], "status": "todo"}))
            .await;
    }
    let listed = |filter: Value| {
        let mcp = &mcp;
        async move {
            let (page, info) = mcp.list("jility_list_tickets", filter).await;
            (numbers(&page["tickets"]), json!(info.total))
        }
    };
    mcp.data("jility_claim_ticket", json!({"ticket_id": "TASK-2"}))
        .await;
    mcp.data(
        "jility_update_status",
        json!({"ticket_id": "TASK-3", "status": "in_progress"}),
    )
    .await;
    assert_eq!(
        listed(json!({"labels": ["api"], "status": ["in_progress"]})).await,
        (vec!["TASK-3".to_string(), "TASK-2".to_string()], json!(2))
    );
    assert_eq!(
        listed(json!({"labels": ["api"], "status": ["todo"]})).await,
        (vec!["TASK-1".to_string()], json!(1))
    );
    assert_eq!(
        listed(json!({"assignee": "agent-1", "status": ["in_progress"]})).await,
        (vec!["TASK-2".to_string()], json!(1))
    );
    p.json(&["ticket", "delete", "TASK-2"]);
    assert_eq!(
        listed(json!({"labels": ["api"]})).await,
        (vec!["TASK-3".to_string(), "TASK-1".to_string()], json!(2))
    );
    assert_eq!(
        listed(json!({"assignee": "agent-1"})).await,
        (vec![], json!(0))
    );
    // A label added after a move carries the current status.
    p.json(&[
        "ticket", "edit", "TASK-3", "--label", "api", "--label", "late",
    ]);
    assert_eq!(
        listed(json!({"labels": ["late"], "status": ["in_progress"]})).await,
        (vec!["TASK-3".to_string()], json!(1))
    );
}

/// Totals are exact up to 10,000 matching tickets; beyond, the answer says "more than".
#[tokio::test]
async fn totals_beyond_ten_thousand_say_more_than() {
    let p = Project::new();
    let mcp = p.start().await;
    for _ in 0..51 {
        let tickets: Vec<Value> = (0..200)
            .map(|i| json!({"title": format!("Bulk {i}"), "labels": ["bulk"]}))
            .collect();
        mcp.data("jility_create_tickets_batch", json!({"tickets": tickets}))
            .await;
    }
    let (text, page, info) = mcp
        .paged(
            "jility_list_tickets",
            json!({"labels": ["bulk"], "limit": 3}),
        )
        .await;
    assert_eq!(info.total, 10_000);
    assert_eq!(info.total_exact, Some(false));
    assert!(
        text.starts_with("📋 Found more than 10000 tickets (showing 3)"),
        "{text}"
    );
    assert_eq!(
        numbers(&page["tickets"]),
        ["TASK-10200", "TASK-10199", "TASK-10198"]
    );
    let (_, info) = mcp
        .list(
            "jility_list_tickets",
            json!({"labels": ["bulk"], "status": ["todo"]}),
        )
        .await;
    assert_eq!(info.total, 0);
    assert_eq!(info.total_exact, None);
}

/// Oversized text is refused with a clear error and changes nothing.
#[tokio::test]
async fn oversized_descriptions_and_comments_are_refused() {
    let p = Project::new();
    let mcp = p.start().await;
    let big = "x".repeat((1 << 20) + 1);
    let (_, e) = mcp
        .err(
            "jility_create_ticket",
            json!({"title": "Big", "description": big}),
        )
        .await;
    assert_eq!(e.code, errors::INVALID_INPUT);
    assert_eq!(
        e.message,
        "The description is 1025 KiB; at most 1024 KiB are allowed"
    );
    let n = mcp.create("Small").await;
    assert_eq!(n, "TASK-1", "the refused ticket took no number");
    // Growing past the limit by appends is refused too, and leaves the text as it was.
    let half = "y".repeat(600 << 10);
    mcp.data(
        "jility_update_description",
        json!({"ticket_id": n, "operation": "append", "content": half}),
    )
    .await;
    let (_, e) = mcp
        .err(
            "jility_update_description",
            json!({"ticket_id": n, "operation": "append", "content": half}),
        )
        .await;
    assert_eq!(e.code, errors::INVALID_INPUT);
    assert!(
        e.message.starts_with("The new description of TASK-1 is"),
        "{e:?}"
    );
    assert_eq!(mcp.description(&n).await.len(), 600 << 10);
    let (_, e) = mcp
        .err(
            "jility_add_comment",
            json!({"ticket_id": n, "content": "z".repeat((256 << 10) + 1)}),
        )
        .await;
    assert_eq!(e.code, errors::INVALID_INPUT);
    let (_, e) = mcp
        .err(
            "jility_claim_ticket",
            json!({"ticket_id": n, "message": "z".repeat((256 << 10) + 1)}),
        )
        .await;
    assert_eq!(e.code, errors::INVALID_INPUT);
    let d = mcp.data("jility_get_ticket", json!({"ticket_id": n})).await;
    assert_eq!(d["comment_count"], 0);
    assert_eq!(d["ticket"]["assignees"], json!([]));
}

#[tokio::test]
async fn search_refuses_huge_queries_without_quoting_them() {
    let p = Project::new();
    let mcp = p.start().await;
    let words: Vec<String> = (0..33).map(|i| format!("w{i}")).collect();
    let (_, answer) = mcp
        .call_markdown::<Value>("jility_search_tickets", json!({"query": words.join(" ")}))
        .await;
    let err = answer.unwrap_err();
    assert_eq!(err.code, "invalid_input");
    assert!(err.message.contains("33 words"), "{}", err.message);
    let long = "x".repeat(5000);
    let (text, answer) = mcp
        .call_markdown::<Value>("jility_search_tickets", json!({"query": long}))
        .await;
    let err = answer.unwrap_err();
    assert!(text.len() < 400, "{text}");
    assert_eq!(err.code, "invalid_input");
    assert!(
        err.message.len() < 300,
        "the query is not quoted back: {}",
        err.message
    );
    // 32 words are still a query.
    let words: Vec<String> = (0..32).map(|i| format!("w{i}")).collect();
    let (_, _, page) = mcp
        .paged("jility_search_tickets", json!({"query": words.join(" ")}))
        .await;
    assert_eq!(page.total, 0);
}

// ---------------------------------------------------------------------------------------
// Hostile input: control characters in titles, signed numbers, ambiguous batch titles

/// A title of NUL characters, or with NUL or another control character in it, is
/// `invalid_input` in every operation that sets a title; a tab is ordinary whitespace.
#[tokio::test]
async fn titles_with_control_characters_are_refused() {
    let p = Project::new();
    let mcp = p.start().await;
    let cases = [
        ("\0", "U+0000"),
        ("\0\0\0", "U+0000"),
        ("  \0  ", "U+0000"),
        ("Fix\0 the login", "U+0000"),
        ("Bell \u{7}", "U+0007"),
        ("\u{1b}[2J Clear screen", "U+001B"),
        ("Delete \u{7f}", "U+007F"),
        ("C1 \u{9b}31m", "U+009B"),
    ];
    for (title, code) in cases {
        let want = format!("Title cannot contain control characters (found {code})");
        let (_, e) = mcp
            .err("jility_create_ticket", json!({"title": title}))
            .await;
        assert_eq!(e.code, errors::INVALID_INPUT, "{title:?}: {e:?}");
        assert_eq!(e.message, want, "{title:?}");
        assert!(e.hint.contains("control characters"), "{}", e.hint);

        let (_, e) = mcp
            .err(
                "jility_create_tickets_batch",
                json!({"tickets": [{"title": "Fine"}, {"title": title}]}),
            )
            .await;
        assert_eq!(e.code, errors::INVALID_INPUT, "{title:?}: {e:?}");
        assert_eq!(e.message, format!("Ticket #2 of the batch: {want}"));
    }
    // Unicode line breaks are line breaks.
    for title in ["a\u{2028}b", "a\u{2029}b", "a\u{85}b"] {
        let (_, e) = mcp
            .err("jility_create_ticket", json!({"title": title}))
            .await;
        assert_eq!(e.message, "Title cannot contain line breaks", "{title:?}");
    }
    // Through a template: the rendered title is checked the same way.
    let (_, e) = mcp
        .err(
            "jility_create_from_template",
            json!({"template": "bug-fix", "variables": {"summary": "crash \0"}}),
        )
        .await;
    assert_eq!(e.code, errors::INVALID_INPUT, "{e:?}");
    assert!(e.message.contains("U+0000"), "{}", e.message);
    // Nothing was created; a tab is ordinary whitespace.
    let (_, info) = mcp.list("jility_list_tickets", json!({})).await;
    assert_eq!(info.total, 0);
    let n = mcp.create("Tab\tseparated").await;
    assert_eq!(n, "TASK-1");
    assert_eq!(mcp.ticket(&n).await["title"], "Tab\tseparated");

    // Update (the CLI's edit): the same rule.
    for title in ["\u{1}", "Bell \u{7}", "\u{1b}[31mred"] {
        let e = p.json_err(&["ticket", "edit", "TASK-1", "--title", title]);
        assert_eq!(e.code, errors::INVALID_INPUT, "{title:?}: {e:?}");
        assert!(
            e.message
                .starts_with("Title cannot contain control characters"),
            "{}",
            e.message
        );
    }
    assert_eq!(mcp.ticket("TASK-1").await["title"], "Tab\tseparated");
}

/// The number of a ticket reference is digits only: no sign, no blanks. Leading zeros name
/// the same ticket.
#[tokio::test]
async fn ticket_numbers_are_digits_only() {
    let p = Project::new();
    let mcp = p.start().await;
    assert_eq!(mcp.create("First").await, "TASK-1");
    assert_eq!(mcp.create("Second").await, "TASK-2");
    for bad in [
        "TASK-+1",
        "TASK--1",
        "TASK- 1",
        "TASK -1",
        "TASK-1 2",
        "+1",
        "#+1",
        "TASK-0x1",
        "TASK-1e0",
        "TASK-\u{a0}1",
    ] {
        let (_, e) = mcp
            .err("jility_get_ticket", json!({"ticket_id": bad}))
            .await;
        assert_eq!(e.code, errors::INVALID_INPUT, "{bad:?}: {e:?}");
        assert_eq!(
            e.message,
            format!("'{bad}' is not a ticket reference"),
            "{bad:?}"
        );
        let (_, e) = mcp
            .err(
                "jility_add_dependency",
                json!({"ticket_id": "TASK-2", "depends_on": bad}),
            )
            .await;
        assert_eq!(e.code, errors::INVALID_INPUT, "{bad:?}: {e:?}");
    }
    // Blanks around the whole reference are ignored, as always.
    let v = mcp
        .data("jility_get_ticket", json!({"ticket_id": " TASK-1\t"}))
        .await;
    assert_eq!(v["ticket"]["number"], "TASK-1");
    // Leading zeros: the same ticket, named canonically in the answer.
    for same in ["TASK-01", "TASK-0001", "#01", "01"] {
        let v = mcp
            .data("jility_get_ticket", json!({"ticket_id": same}))
            .await;
        assert_eq!(v["ticket"]["number"], "TASK-1", "{same}");
    }
    let (_, e) = mcp
        .err("jility_get_ticket", json!({"ticket_id": "TASK-00"}))
        .await;
    assert_eq!(e.code, errors::INVALID_INPUT);
    // A batch item named by position is `#N` with digits only: `#+1` is no position.
    let (_, e) = mcp
        .err(
            "jility_create_tickets_batch",
            json!({"tickets": [{"title": "A"}, {"title": "B", "depends_on": ["#+1"]}]}),
        )
        .await;
    assert_eq!(e.code, errors::INVALID_INPUT, "{e:?}");
    assert_eq!(
        e.message,
        "Ticket #2 of the batch: '#+1' is not a ticket reference"
    );
    // No dependency was added, nothing created.
    let graph = mcp
        .data(
            "jility_get_dependency_graph",
            json!({"ticket_id": "TASK-2"}),
        )
        .await;
    assert_eq!(graph["dependencies"], json!([]), "{graph}");
    assert_eq!(mcp.list("jility_list_tickets", json!({})).await.1.total, 2);
}

/// A batch item that depends on a title two items of the batch share is refused, naming the
/// title and the items; nothing of the batch is written. Positions still work.
#[tokio::test]
async fn a_batch_dependency_on_a_shared_title_is_ambiguous() {
    let p = Project::new();
    let mcp = p.start().await;
    mcp.create("Existing").await;
    for tickets in [
        json!([{"title": "Set up"}, {"title": "Set up"}, {"title": "Build", "depends_on": ["Set up"]}]),
        json!([{"title": "Set up"}, {"title": "Build", "depends_on": [" Set up "]}, {"title": "  Set up"}]),
    ] {
        let (_, e) = mcp
            .err("jility_create_tickets_batch", json!({"tickets": tickets}))
            .await;
        assert_eq!(e.code, errors::INVALID_INPUT, "{e:?}");
        assert!(
            e.message.starts_with("Ticket #"),
            "names the dependent item: {}",
            e.message
        );
        assert!(e.message.contains("'Set up'"), "{}", e.message);
        assert!(
            e.message.contains("#1, #2") || e.message.contains("#1, #3"),
            "{}",
            e.message
        );
        assert!(e.hint.contains("#1"), "{}", e.hint);
    }
    let (_, e) = mcp
        .err(
            "jility_create_tickets_batch",
            json!({"tickets": [{"title": "Set up"}, {"title": "Set up"}, {"title": "Build", "depends_on": ["Set up"]}]}),
        )
        .await;
    assert_eq!(
        e.message,
        "Ticket #3 of the batch depends on 'Set up', a title that items #1, #2 of the batch share"
    );
    // Nothing was written: no ticket, no number used.
    assert_eq!(mcp.list("jility_list_tickets", json!({})).await.1.total, 1);
    // By position the same batch is fine, and a title that one item has still works.
    let v = mcp
        .data(
            "jility_create_tickets_batch",
            json!({"tickets": [{"title": "Set up"}, {"title": "Set up"},
                               {"title": "Build", "depends_on": ["#2"]},
                               {"title": "Ship", "depends_on": ["Build"]}]}),
        )
        .await;
    let tickets = v["tickets"].as_array().unwrap();
    assert_eq!(tickets[0]["number"], "TASK-2");
    assert_eq!(tickets[2]["depends_on"], json!(["TASK-3"]));
    assert_eq!(tickets[3]["depends_on"], json!(["TASK-4"]));
}
