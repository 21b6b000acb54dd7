//! Issue 23's protocol findings through the git-mile binary ([`mcp_testkit::protocol`]): an
//! over-long message answered with its id over stdio and HTTP, input schemas in the
//! single-type form, the stateless generation's initialize unknown.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // assertions in tests

use mcp_testkit::{Wire, protocol};
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_git-mile");
const ARGS: &[&str] = &["mcp-server"];

#[tokio::test]
async fn an_over_long_line_is_answered_with_its_id_over_stdio() {
    protocol::check_over_long_line_over_stdio(BIN, ARGS).await;
}

#[tokio::test]
async fn an_over_long_body_is_answered_with_its_id_over_http() {
    protocol::check_over_long_body_over_http(BIN, ARGS).await;
}

#[tokio::test]
async fn input_schemas_have_no_type_arrays_or_null_types() {
    protocol::check_portable_input_schemas(BIN, ARGS).await;
}

#[tokio::test]
async fn the_tool_listing_keeps_within_its_budget() {
    protocol::check_listing_budget(BIN, ARGS).await;
}

/// An `initialize` of the stateless generation (`MCP-Protocol-Version: 2026-07-28`, the
/// version in `_meta`) is an unknown method, as rmcp answers it for the other servers:
/// `404` with `-32601`, whatever its params (not `200` with "cannot be decoded").
#[tokio::test]
async fn a_stateless_initialize_is_an_unknown_method() {
    let (_home, mcp) = protocol::spawn(Wire::Http, BIN, ARGS).await;
    let url = mcp.url().expect("an HTTP server").to_string();
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    for params in [
        json!({ "_meta": meta }),
        json!({ "_meta": meta, "capabilities": "not an object" }),
    ] {
        let message = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params});
        let answer = reqwest::Client::new()
            .post(&url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", "2026-07-28")
            .header("Mcp-Method", "initialize")
            .body(message.to_string())
            .send()
            .await
            .expect("an answer");
        assert_eq!(answer.status().as_u16(), 404);
        let body: Value = serde_json::from_str(&answer.text().await.expect("body")).expect("JSON");
        assert_eq!(body["id"], json!(1), "{body}");
        assert_eq!(body["error"]["code"], json!(-32601), "{body}");
    }
    mcp.ping().await;
}

/// Over HTTP, a request's X-MCP-Toolsets, X-MCP-Tools and X-MCP-Readonly narrow the tools
/// (never widen them); a 2026-07-28 listing carries ttlMs, titles and icons.
#[tokio::test]
async fn a_request_s_headers_narrow_the_tools_and_never_widen_them() {
    mcp_testkit::stateless::check_request_surface(BIN, ARGS, git_mile::server::TOOLS).await;
}

/// `--toolsets`, `--tools` and `--read-only`, as every server takes them.
#[tokio::test]
async fn toolsets_tools_and_read_only_choose_the_tools() {
    mcp_testkit::surface::check_surface(BIN, ARGS, git_mile::server::TOOLS).await;
}
