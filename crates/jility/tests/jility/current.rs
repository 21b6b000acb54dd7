//! Issue 23's protocol findings through the jility binary ([`mcp_testkit::protocol`]): an
//! over-long message answered with its id over stdio and HTTP, input schemas in the
//! single-type form, unknown tools named with the tools, undeclared capabilities' methods unknown.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // assertions in tests

use mcp_testkit::{McpProcess, Wire, protocol};
use rmcp::service::ServiceError;

use crate::cloud;
use crate::pg;

const BIN: &str = env!("CARGO_BIN_EXE_jility");
const ARGS: &[&str] = &["--mcp-server"];

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

/// Over HTTP, a request's X-MCP-Toolsets, X-MCP-Tools and X-MCP-Readonly narrow the tools
/// (never widen them); a 2026-07-28 listing carries ttlMs, titles and icons.
#[tokio::test]
async fn a_request_s_headers_narrow_the_tools_and_never_widen_them() {
    mcp_testkit::stateless::check_request_surface(BIN, ARGS, jility::server::catalog()).await;
}

#[tokio::test]
async fn an_unknown_tool_is_named_with_the_tools() {
    protocol::check_unknown_tool_is_named(BIN, ARGS).await;
}

/// Every method of a capability jility does not declare (it declares tools alone) is
/// `-32601`, not an empty list.
async fn undeclared_methods_are_unknown(mcp: &McpProcess) {
    let peer = mcp.peer();
    let answers = [
        ("prompts/list", peer.list_prompts(None).await.err()),
        ("resources/list", peer.list_resources(None).await.err()),
        (
            "resources/templates/list",
            peer.list_resource_templates(None).await.err(),
        ),
        (
            "completion/complete",
            peer.complete(rmcp::model::CompleteRequestParams::new(
                rmcp::model::Reference::for_prompt("p"),
                rmcp::model::ArgumentInfo::new("a", "b"),
            ))
            .await
            .err(),
        ),
    ];
    for (method, answer) in answers {
        match answer {
            Some(ServiceError::McpError(err)) => {
                assert_eq!(err.code.0, -32601, "{method}: {err:?}")
            }
            other => panic!("{method}: {other:?}"),
        }
    }
}

#[tokio::test]
async fn undeclared_capabilities_are_unknown_methods_over_stdio_and_http() {
    for wire in [Wire::Stdio, Wire::Http] {
        let (_home, mcp) = protocol::spawn(wire, BIN, ARGS).await;
        undeclared_methods_are_unknown(&mcp).await;
    }
}

/// The same at `/mcp` of `jility serve`, with a workspace's token.
#[test]
fn undeclared_capabilities_are_unknown_methods_at_the_hosted_mcp() {
    let db = pg::TestDb::new();
    let pool = db.connect();
    let tokens = jility_cloud::auth::Tokens::new(&pool);
    let (_workspace, token) = cloud::workspace(&tokens, "alpha");
    let server = cloud::Server::start(&db, &[]);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let url = format!("{}/mcp", server.root());
        let mcp = McpProcess::connect_http(&url, Some(&token))
            .await
            .expect("connects to /mcp");
        undeclared_methods_are_unknown(&mcp).await;
    });
}

/// `--toolsets`, `--tools` and `--read-only`, as every server takes them.
#[tokio::test]
async fn toolsets_tools_and_read_only_choose_the_tools() {
    mcp_testkit::surface::check_surface(BIN, ARGS, jility::server::catalog()).await;
}
