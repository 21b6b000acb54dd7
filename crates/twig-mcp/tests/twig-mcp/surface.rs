//! What a request's `X-MCP-Toolsets`, `X-MCP-Tools` and `X-MCP-Readonly` headers choose over
//! HTTP ([`mcp_testkit::stateless`]), and the prompts and resources following the toolset
//! they belong to, `local` ([`twig_mcp::server::CONTENT_TOOLSET`]).

use mcp_testkit::Wire;
use mcp_testkit::protocol::spawn;
use mcp_testkit::stateless::request;
use serde_json::json;
use twig_mcp::server::{CONTENT_TOOLSET, TOOLS};

const BIN: &str = env!("CARGO_BIN_EXE_twig-mcp");

/// Every twig tool reads: `X-MCP-Readonly: true` changes nothing.
#[tokio::test]
async fn a_request_s_headers_narrow_the_tools_and_never_widen_them() {
    assert!(TOOLS.iter().all(|e| !e.writes));
    mcp_testkit::stateless::check_request_surface(BIN, &[], TOOLS).await;
}

use mcp_testkit::stateless::values_of as names;

/// With `headers`, the prompts, resources and the template are all offered (listed, got and
/// read) or none is (not listed; getting a prompt is `-32602`, reading a resource is not
/// found, each naming the toolset).
async fn assert_content(url: &str, headers: &[(&str, &str)], offered: bool) {
    let prompts = request(url, "prompts/list", json!({}), headers).await;
    let resources = request(url, "resources/list", json!({}), headers).await;
    let templates = request(url, "resources/templates/list", json!({}), headers).await;
    let (prompts, resources, templates) = (
        names(&prompts, "prompts", "name"),
        names(&resources, "resources", "uri"),
        names(&templates, "resourceTemplates", "uriTemplate"),
    );
    if offered {
        assert_eq!(prompts, ["stack-status", "branch-context"], "{headers:?}");
        assert_eq!(
            resources,
            [
                "twig://repo/tree",
                "twig://repo/branches",
                "twig://repo/health"
            ],
            "{headers:?}"
        );
        assert_eq!(templates, ["twig://branch/{name}/context"], "{headers:?}");
    } else {
        assert!(
            prompts.is_empty() && resources.is_empty() && templates.is_empty(),
            "{headers:?}: {prompts:?} {resources:?} {templates:?}"
        );
    }
    let got = request(
        url,
        "prompts/get",
        json!({"name": "stack-status", "arguments": {}}),
        headers,
    )
    .await;
    let read = request(
        url,
        "resources/read",
        json!({"uri": "twig://repo/tree"}),
        headers,
    )
    .await;
    if offered {
        assert!(got.get("result").is_some(), "{headers:?}: {got}");
        assert!(read.get("result").is_some(), "{headers:?}: {read}");
    } else {
        assert_eq!(got["error"]["code"], json!(-32602), "{got}");
        assert!(
            got["error"]["message"]
                .as_str()
                .unwrap()
                .contains(CONTENT_TOOLSET),
            "{got}"
        );
        // Resource not found: -32602 on the 2026-07-28 wire (-32002 before it).
        assert_eq!(read["error"]["code"], json!(-32602), "{read}");
        assert_eq!(read["error"]["data"]["uri"], json!("twig://repo/tree"));
    }
}

#[tokio::test]
async fn prompts_and_resources_follow_the_local_toolset() {
    assert_eq!(CONTENT_TOOLSET, "local");
    let (_home, mcp) = spawn(Wire::Http, BIN, &[]).await;
    let url = mcp.url().unwrap().to_string();
    assert_content(&url, &[], true).await;
    assert_content(&url, &[("X-MCP-Toolsets", "local")], true).await;
    assert_content(&url, &[("X-MCP-Tools", "get_branch_tree")], true).await;
    assert_content(&url, &[("X-MCP-Readonly", "true")], true).await;
    assert_content(&url, &[("X-MCP-Toolsets", "github,jira")], false).await;
    assert_content(&url, &[("X-MCP-Tools", "get_pull_request")], false).await;
    let unknown = request(
        &url,
        "prompts/list",
        json!({}),
        &[("X-MCP-Toolsets", "no-such-set")],
    )
    .await;
    assert_eq!(unknown["error"]["code"], json!(-32602), "{unknown}");
    drop(mcp);

    // Left out by the server's own --toolsets: no header brings them back.
    let (_home, mcp) = spawn(Wire::Http, BIN, &["--toolsets", "github,jira"]).await;
    let url = mcp.url().unwrap().to_string();
    assert_content(&url, &[], false).await;
    assert_content(&url, &[("X-MCP-Toolsets", "local,github")], false).await;
    assert_content(&url, &[("X-MCP-Tools", "get_branch_tree")], false).await;
}

/// Subscribing follows the toolset too: without `local`, the resources cannot be subscribed
/// to (not found, as reading them); with it they can.
#[tokio::test]
#[allow(deprecated)] // resources/subscribe: the 2025-11-25 way, still served
async fn subscriptions_follow_the_local_toolset() {
    for (args, offered) in [(&["--toolsets", "github,jira"][..], false), (&[][..], true)] {
        let (_home, mcp) = spawn(Wire::Stdio, BIN, args).await;
        let answer = mcp
            .peer()
            .subscribe(rmcp::model::SubscribeRequestParams::new("twig://repo/tree"))
            .await;
        match (answer, offered) {
            (Ok(()), true) => {}
            (Err(rmcp::service::ServiceError::McpError(err)), false) => {
                assert_eq!(err.code.0, -32002, "{err:?}");
                assert!(err.message.contains("toolset"), "{err:?}");
            }
            (answer, _) => panic!("{args:?}: {answer:?}"),
        }
    }
}
