//! `duvet mcp --http ADDR`: the same server over Streamable HTTP, through the built binary
//! and rmcp's client. Sessions share one engine (one analysis, one file watcher) and one
//! cursor key.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // assertions in tests

use crate::support;

use std::time::Duration;

use duvet::errors;
use mcp_testkit::{McpProcess, Wire};
use rmcp::{ServiceExt, model::CallToolRequestParams, transport::StreamableHttpClientTransport};
use serde_json::{Value, json};
use support::*;

const ACCEPT: &str = "A coffee pot server MUST accept both the BREW and POST method equivalently.";
const IDENTIFY: &str = "A client MUST identify the pot.";
const CLIENTS: &str = "Clients SHOULD send BREW rather than GET to start brewing.";

/// The identifier of a requirement of the coffee project: the hash of its place and text.
fn id(text: &str) -> String {
    let place = match text {
        ACCEPT => "www.rfc-editor.org/rfc/rfc2324.txt#section-2.1.1",
        IDENTIFY => "specs/coffee.md#ordering",
        other => panic!("no place for {other}"),
    };
    req_id(place, text)
}

fn texts(list: &Value) -> Vec<String> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|r| r["text"].as_str().unwrap().to_string())
        .collect()
}

/// The MCP endpoint the server announced on stderr.
fn url(mcp: &McpProcess) -> String {
    let stderr = mcp.stderr();
    let rest = stderr
        .split("serving MCP over HTTP at ")
        .nth(1)
        .unwrap_or_else(|| panic!("no announcement in {stderr}"));
    rest.split_whitespace().next().unwrap().to_string()
}

#[tokio::test]
async fn handshake_tools_and_errors_over_http() {
    let p = coffee_project();
    let mcp = p.start_over(Wire::Http, &[]).await;
    assert!(
        url(&mcp).starts_with("http://127.0.0.1:") && url(&mcp).ends_with("/mcp"),
        "{}",
        url(&mcp)
    );
    let info = mcp.server_info();
    assert_eq!(info.server_info.as_ref().unwrap().name, "duvet");
    assert!(
        info.instructions
            .unwrap()
            .starts_with("You are interacting with the Duvet MCP server")
    );
    assert_eq!(mcp.tools().await.len(), 11);

    // A tool that succeeds.
    let s: Value = mcp
        .call_ok(
            "get_requirement_status",
            json!({"req_identifier": id(ACCEPT)}),
        )
        .await;
    assert_eq!(s["status"], "fully_implemented");

    // An error result: isError, with the code, message, hint and retryability.
    let result = mcp
        .call(
            "resolve_spec_id",
            json!({"url": "https://example.com/nope"}),
        )
        .await;
    assert_eq!(result.is_error, Some(true));
    let error = &result.structured_content.unwrap()["error"];
    assert_eq!(error["code"], "not_found");
    assert_eq!(error["retryable"], false);
    assert!(
        error["hint"].as_str().unwrap().contains(RFC2324_URL),
        "{error}"
    );
    let err = mcp
        .call_err("get_citation_context", json!({"citation_id": "../x.rs:1"}))
        .await;
    assert_eq!(err.code, errors::INVALID_PARAMS);
    assert!(!err.hint.is_empty());
    mcp.shutdown().await;
}

#[tokio::test]
async fn no_project_over_http() {
    let p = Project::new();
    let mcp = p.start_over(Wire::Http, &[]).await;
    let err = mcp.call_err("list_uncited_requirements", json!({})).await;
    assert_eq!(err.code, errors::NO_PROJECT);
    assert!(err.hint.contains("--source-pattern"), "{}", err.hint);
    assert!(!err.retryable);
    mcp.shutdown().await;
}

#[tokio::test]
async fn paged_walk_over_http() {
    let p = coffee_project();
    let mcp = p.start_over(Wire::Http, &[]).await;
    let whole: Vec<Value> = mcp.call_ok("get_prioritized_requirements", json!({})).await;
    assert_eq!(whole.len(), 7);
    let mut walked = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let mut args = json!({"limit": 3});
        if let Some(c) = &cursor {
            args["cursor"] = json!(c);
        }
        let (page, info) = mcp
            .call_paged::<Vec<Value>>("get_prioritized_requirements", args)
            .await;
        assert_eq!(info.total, 7);
        assert_eq!(info.total_exact, None);
        walked.extend(page);
        pages += 1;
        match info.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    assert_eq!(pages, 3);
    assert_eq!(walked, whole);

    // Refusals travel the same way.
    let err = mcp
        .call_err("search_requirements", json!({"query": "must", "limit": 0}))
        .await;
    assert_eq!(err.code, errors::INVALID_PARAMS);
    let err = mcp
        .call_err(
            "search_requirements",
            json!({"query": "should", "cursor": cursor.unwrap()}),
        )
        .await;
    assert_eq!(err.code, errors::INVALID_PARAMS);
    mcp.shutdown().await;
}

#[tokio::test]
async fn resources_over_http() {
    let p = coffee_project();
    let mcp = p.start_over(Wire::Http, &[]).await;
    let resources = mcp.peer().list_all_resources().await.unwrap();
    assert!(
        resources
            .iter()
            .any(|r| r.uri == "duvet:///specifications/rfc2324")
    );
    let specs = mcp.read_resource_json("duvet:///specifications").await;
    assert_eq!(specs[0]["id"], "rfc2324");
    let reqs = mcp
        .read_resource_json("duvet:///specifications/coffee/sections/ordering/requirements")
        .await;
    assert_eq!(texts(&reqs)[0], IDENTIFY);

    // A paged list resource, walked through the `next` URIs.
    let all = mcp.read_resource_json("duvet:///requirements").await;
    let mut walked = Vec::new();
    let mut next = Some("duvet:///requirements?limit=4".to_string());
    while let Some(uri) = next {
        let result = mcp.read_resource(&uri).await.unwrap();
        let rmcp::model::ResourceContents::TextResourceContents { text, meta, .. } =
            &result.contents[0]
        else {
            panic!("text expected")
        };
        walked.extend(serde_json::from_str::<Vec<Value>>(text).unwrap());
        let meta = serde_json::to_value(meta).unwrap();
        assert_eq!(meta["total"], 7);
        next = meta["next"].as_str().map(String::from);
    }
    assert_eq!(Value::Array(walked), all);
    assert!(
        mcp.read_resource("duvet:///requirements?cursor=forged")
            .await
            .is_err()
    );
    mcp.shutdown().await;
}

/// Two sessions of one server: one analysis serves both, a cursor of one pages in the other,
/// and a file change is seen by both (one watcher).
#[tokio::test]
async fn sessions_share_the_engine_and_the_cursor_key() {
    let p = coffee_project();
    let first = p.start_over(Wire::Http, &["-v"]).await;
    let (_, page) = first
        .call_paged::<Vec<Value>>("get_prioritized_requirements", json!({"limit": 2}))
        .await;
    let cursor = page.next_cursor.unwrap();

    let second = ().serve(StreamableHttpClientTransport::from_uri(url(&first))).await.unwrap();
    let call = |args: Value| {
        let mut params = CallToolRequestParams::new("get_prioritized_requirements");
        if let Value::Object(map) = args {
            params = params.with_arguments(map);
        }
        second.peer().call_tool(params)
    };
    let result = call(json!({"limit": 2, "cursor": cursor})).await.unwrap();
    assert_eq!(result.is_error, Some(false), "{result:?}");
    let envelope = result.structured_content.unwrap();
    assert_eq!(envelope["data"].as_array().unwrap().len(), 2);
    assert_eq!(envelope["page"]["total"], 7);

    let analyses = |stderr: &str| stderr.matches("project analysed").count();
    assert_eq!(
        analyses(&first.stderr()),
        1,
        "one analysis for both sessions: {}",
        first.stderr()
    );

    // A change seen through the first session is seen through the second.
    p.write(
        "src/main.rs",
        "//= specs/coffee.md#ordering\n//# A client MUST identify the pot.\nfn order() {}\n",
    );
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let uncited: Value = first.call_ok("list_uncited_requirements", json!({})).await;
        // Uncited: no implementation, implication or exception quotes them (a test or a TODO
        // alone does not cite; TRADEMARK's exception does, and QUICKLY shares IDENTIFY's line).
        if texts(&uncited) == [ACCEPT, CLIENTS] {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "change not seen: {uncited}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let mut params = CallToolRequestParams::new("list_uncited_requirements");
    params = params.with_arguments(serde_json::Map::new());
    let result = second.peer().call_tool(params).await.unwrap();
    let data = &result.structured_content.unwrap()["data"];
    assert_eq!(texts(data), [ACCEPT, CLIENTS]);
    let rebuilt = analyses(&first.stderr());
    assert!(rebuilt >= 2, "{}", first.stderr());

    second.cancel().await.unwrap();
    first.shutdown().await;
}

/// Serving off loopback needs a token: without one the server refuses to start (exit 2)
/// and says why.
#[test]
fn off_loopback_without_a_token_is_refused() {
    let p = Project::new();
    let output = std::process::Command::new(BIN)
        .args(["mcp", "--http", "0.0.0.0:0"])
        .current_dir(p.root())
        .env_clear()
        .env("HOME", "/nonexistent")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with("duvet: ") && stderr.contains("MCP_HTTP_TOKEN"),
        "{stderr}"
    );
}
