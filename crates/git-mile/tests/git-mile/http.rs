//! `git mile mcp-server --http ADDR`: the same tools over Streamable HTTP at `/mcp`, one
//! handler per session over one shared repository and cursor key.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // assertions in tests

use crate::support;

use mcp_testkit::{McpProcess, REQUEST_TIMEOUT, Wire};
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::ServiceError;
use rmcp::{ErrorData, ServiceExt};
use serde_json::{Value, json};
use support::world::{i, m};
use support::{Sandbox, world_repo};

async fn server_over(wire: Wire, sandbox: &Sandbox, cwd: &std::path::Path) -> McpProcess {
    let env = support::base_env(sandbox.dir.path());
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    McpProcess::spawn_bin_over(wire, support::bin(), &["mcp-server"], cwd, &env)
        .await
        .expect("server starts")
}

fn params(tool: &str, args: Value) -> CallToolRequestParams {
    let params = CallToolRequestParams::new(tool.to_string());
    match args {
        Value::Object(map) => params.with_arguments(map),
        _ => params,
    }
}

async fn call(
    peer: &rmcp::service::Peer<rmcp::RoleClient>,
    tool: &str,
    args: Value,
) -> Result<CallToolResult, ErrorData> {
    let answer = tokio::time::timeout(REQUEST_TIMEOUT, peer.call_tool(params(tool, args)))
        .await
        .expect("no timeout");
    match answer {
        Ok(result) => Ok(result),
        Err(ServiceError::McpError(error)) => Err(error),
        Err(other) => panic!("transport failure: {other}"),
    }
}

/// A successful call's JSON (text copy and structuredContent agree).
async fn ok(peer: &rmcp::service::Peer<rmcp::RoleClient>, tool: &str, args: Value) -> Value {
    let result = call(peer, tool, args.clone())
        .await
        .unwrap_or_else(|e| panic!("{tool} {args}: {e:?}"));
    assert_ne!(result.is_error, Some(true), "{tool} {args}: {result:?}");
    let text = &result.content[0].as_text().expect("text").text;
    let value: Value = serde_json::from_str(text).expect("JSON text");
    assert_eq!(Some(&value), result.structured_content.as_ref());
    value
}

fn ids(page: &Value) -> Vec<String> {
    page["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|item| item["id"].as_str().expect("id").to_string())
        .collect()
}

/// The URL the server announced on stderr.
fn announced_url(mcp: &McpProcess) -> String {
    let stderr = mcp.stderr();
    let rest = stderr
        .split("serving MCP over HTTP at ")
        .nth(1)
        .unwrap_or_else(|| panic!("no announced URL: {stderr}"));
    rest.chars().take_while(|c| !c.is_whitespace()).collect()
}

#[tokio::test]
async fn handshake_list_show_and_errors_over_http() {
    let sandbox = Sandbox::new();
    let repo = world_repo(&sandbox, "repo");
    let mcp = server_over(Wire::Http, &sandbox, &repo).await;
    assert!(
        announced_url(&mcp).ends_with("/mcp"),
        "{}",
        announced_url(&mcp)
    );
    let info = mcp.server_info();
    let server = info.server_info.as_ref().expect("serverInfo");
    assert_eq!(server.name, "git-mile");
    assert_eq!(server.version, env!("CARGO_PKG_VERSION"));
    assert!(info.capabilities.tools.is_some());
    let names: Vec<String> = mcp
        .tools()
        .await
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    assert_eq!(
        names,
        [
            "git_mile.comment",
            "git_mile.create",
            "git_mile.list",
            "git_mile.log",
            "git_mile.show",
            "git_mile.update",
        ],
        "the test kit lists tools sorted by name"
    );
    mcp.ping().await;

    let peer = mcp.peer();
    let page = ok(peer, "git_mile.list", json!({"entity": "milestone"})).await;
    assert_eq!(ids(&page), [m(1)]);
    assert_eq!(page["nextCursor"], Value::Null);
    let issue = ok(
        peer,
        "git_mile.show",
        json!({"entity": "issue", "id": i(1)}),
    )
    .await;
    assert_eq!(issue["title"], "Fix login crash");

    // A tool-level failure: isError, the error as JSON text, no structuredContent.
    let result = call(
        peer,
        "git_mile.show",
        json!({"entity": "issue", "id": "99999999-0000-4000-8000-000000000000"}),
    )
    .await
    .expect("a tool result");
    assert_eq!(support::error_object(&result)["code"], "not_found");
    let result = call(
        peer,
        "git_mile.show",
        json!({"entity": "issue", "id": &i(1)[..30]}),
    )
    .await
    .expect("a tool result");
    assert_eq!(support::error_object(&result)["code"], "ambiguous_id");

    // Protocol-level errors keep their codes.
    let error = call(peer, "git_mile.delete", json!({})).await.unwrap_err();
    assert_eq!(error.code.0, -32601);
    let error = call(peer, "git_mile.list", json!({"entity": "epic"}))
        .await
        .unwrap_err();
    assert_eq!(error.code.0, -32600);
    let error = call(
        peer,
        "git_mile.list",
        json!({"entity": "issue", "filter": "status = 1"}),
    )
    .await
    .unwrap_err();
    assert_eq!(error.code.0, -32602);
    mcp.shutdown().await;
}

#[tokio::test]
async fn cursors_walk_across_sessions_and_transports() {
    let sandbox = Sandbox::new();
    let repo = world_repo(&sandbox, "repo");
    let mcp = server_over(Wire::Http, &sandbox, &repo).await;
    let args = |cursor: &Value| {
        json!({"entity": "issue", "includeClosed": true, "sort": ["title"], "limit": 2,
               "cursor": cursor})
    };
    // The whole walk in one session.
    let mut walked = Vec::new();
    let mut cursor = Value::Null;
    let mut pages = 0;
    loop {
        let page = ok(mcp.peer(), "git_mile.list", args(&cursor)).await;
        walked.extend(ids(&page));
        pages += 1;
        cursor = page["nextCursor"].clone();
        if cursor.is_null() {
            break;
        }
        assert!(pages < 10, "the walk does not end");
    }
    assert_eq!(pages, 3);
    assert_eq!(walked, [i(2), i(3), i(1), i(5), i(4)]);

    // A cursor of one session works in another session of the same server.
    let first = ok(mcp.peer(), "git_mile.list", args(&Value::Null)).await;
    let cursor = first["nextCursor"].clone();
    let url = announced_url(&mcp);
    let transport = rmcp::transport::StreamableHttpClientTransport::from_uri(url);
    let other = tokio::time::timeout(REQUEST_TIMEOUT, ().serve(transport))
        .await
        .expect("no timeout")
        .expect("a second session");
    let second = ok(other.peer(), "git_mile.list", args(&cursor)).await;
    assert_eq!(ids(&second), [i(1), i(5)]);
    // Used with another query it is refused there too.
    let mut changed = args(&cursor);
    changed["sort"] = json!(["title:desc"]);
    let error = call(other.peer(), "git_mile.list", changed)
        .await
        .unwrap_err();
    assert_eq!(error.code.0, -32602);
    assert!(
        error.message.contains("different query"),
        "{}",
        error.message
    );
    let _ = other.cancel().await;
    mcp.shutdown().await;

    // And over stdio, in another process on the same repository.
    let stdio = server_over(Wire::Stdio, &sandbox, &repo).await;
    let again = ok(stdio.peer(), "git_mile.list", args(&cursor)).await;
    assert_eq!(again, second);
    stdio.shutdown().await;
}

#[tokio::test]
async fn outside_a_repository_http_serves_the_no_repository_error() {
    let sandbox = Sandbox::new();
    let empty = sandbox.path("not-a-repo");
    std::fs::create_dir_all(&empty).unwrap();
    let mcp = server_over(Wire::Http, &sandbox, &empty).await;
    let result = call(mcp.peer(), "git_mile.list", json!({"entity": "issue"}))
        .await
        .expect("a tool result");
    assert_eq!(support::error_object(&result)["code"], "no_repository");
    mcp.shutdown().await;
}

#[test]
fn a_bad_address_is_refused_at_start() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("repo");
    for (addr, words) in [
        ("nowhere", "not an address"),
        ("0.0.0.0:0", "MCP_HTTP_TOKEN"),
    ] {
        let output = sandbox
            .command(support::bin(), &repo)
            .args(["mcp-server", "--http", addr])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{addr}: {output:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.starts_with("git-mile: ") && stderr.contains(words),
            "{addr}: {stderr}"
        );
    }
}
