//! What a request's `X-MCP-Toolsets`, `X-MCP-Tools` and `X-MCP-Readonly` headers choose over
//! HTTP ([`mcp_testkit::stateless`]), and the resources following their toolsets: the
//! citation lists and citations belong to `citations`, the rest to `requirements`
//! (`duvet::resources::toolset`); the system prompt is always offered.

use crate::support::*;

use mcp_testkit::Wire;
use mcp_testkit::stateless::request;
use serde_json::json;

/// Every duvet tool reads: `X-MCP-Readonly: true` changes nothing.
#[tokio::test]
async fn a_request_s_headers_narrow_the_tools_and_never_widen_them() {
    assert!(duvet::server::TOOLS.iter().all(|e| !e.writes));
    let args = ["mcp", "--coverage-report", "lcov.info"];
    mcp_testkit::stateless::check_request_surface(BIN, &args, duvet::server::TOOLS).await;
}

/// What a request with `headers` is offered: the resources' URIs, the templates' URIs and
/// the prompts' names.
async fn offered(url: &str, headers: &[(&str, &str)]) -> (Vec<String>, Vec<String>, Vec<String>) {
    let strings = mcp_testkit::stateless::values_of;
    let resources = request(url, "resources/list", json!({}), headers).await;
    let templates = request(url, "resources/templates/list", json!({}), headers).await;
    let prompts = request(url, "prompts/list", json!({}), headers).await;
    (
        strings(&resources, "resources", "uri"),
        strings(&templates, "resourceTemplates", "uriTemplate"),
        strings(&prompts, "prompts", "name"),
    )
}

/// Reading `uri` with `headers`: refused as a resource that does not exist, naming its
/// toolset, or not.
async fn refused(url: &str, uri: &str, headers: &[(&str, &str)]) -> bool {
    let answer = request(url, "resources/read", json!({ "uri": uri }), headers).await;
    match answer.get("error") {
        Some(error) => {
            // Resource not found: -32602 on the 2026-07-28 wire (-32002 before it).
            assert_eq!(error["code"], json!(-32602), "{answer}");
            assert_eq!(error["data"]["uri"], json!(uri), "{answer}");
            assert!(
                error["message"].as_str().unwrap().contains("toolset"),
                "{answer}"
            );
            true
        }
        None => false,
    }
}

const CITATIONS: &str = "duvet:///citations";
const SPECS: &str = "duvet:///specifications";
const SECTION_CITATIONS: &str = "duvet:///specifications/rfc2324/sections/section-2.1.1/citations";

fn is_citations(uri: &str) -> bool {
    uri == CITATIONS || uri.contains("}/citations")
}

#[tokio::test]
async fn resources_follow_their_toolsets() {
    let p = coffee_project();
    let mcp = p.start_over(Wire::Http, &[]).await;
    let url = mcp.url().unwrap().to_string();

    let (resources, templates, prompts) = offered(&url, &[]).await;
    assert!(resources.iter().any(|u| u == CITATIONS), "{resources:?}");
    assert!(resources.iter().any(|u| u == SPECS), "{resources:?}");
    assert_eq!(templates.len(), 9, "{templates:?}");
    assert_eq!(prompts, [duvet::server::PROMPT_NAME]);
    assert!(!refused(&url, CITATIONS, &[]).await);

    // Only the requirements: no citation list, no citation.
    let header = [("X-MCP-Toolsets", "requirements")];
    let (resources, templates, prompts) = offered(&url, &header).await;
    assert!(!resources.iter().any(|u| u == CITATIONS), "{resources:?}");
    assert!(resources.iter().any(|u| u == SPECS), "{resources:?}");
    assert!(!templates.iter().any(|t| is_citations(t)), "{templates:?}");
    assert_eq!(templates.len(), 5, "{templates:?}");
    assert_eq!(prompts, [duvet::server::PROMPT_NAME], "always offered");
    assert!(refused(&url, CITATIONS, &header).await);
    assert!(refused(&url, SECTION_CITATIONS, &header).await);
    assert!(!refused(&url, SPECS, &header).await);

    // A tool of `citations` by name offers its resources.
    let header = [("X-MCP-Tools", "list_invalid_citations")];
    let (resources, templates, _) = offered(&url, &header).await;
    assert_eq!(resources, [CITATIONS]);
    assert!(templates.iter().all(|t| is_citations(t)), "{templates:?}");
    assert_eq!(templates.len(), 4, "{templates:?}");
    assert!(refused(&url, SPECS, &header).await);
    assert!(!refused(&url, CITATIONS, &header).await);
    mcp.shutdown().await;

    // The server's own --toolsets, and a header cannot bring the others back.
    let mcp = p.start_over(Wire::Http, &["--toolsets", "citations"]).await;
    let url = mcp.url().unwrap().to_string();
    for header in [vec![], vec![("X-MCP-Toolsets", "citations,requirements")]] {
        let (resources, templates, prompts) = offered(&url, &header).await;
        assert_eq!(resources, [CITATIONS], "{header:?}");
        assert!(templates.iter().all(|t| is_citations(t)), "{templates:?}");
        assert_eq!(prompts, [duvet::server::PROMPT_NAME]);
        assert!(refused(&url, SPECS, &header).await);
        assert!(refused(&url, "duvet:///requirements", &header).await);
        assert!(!refused(&url, SECTION_CITATIONS, &header).await);
    }
    let header = [("X-MCP-Toolsets", "requirements")];
    let (resources, templates, _) = offered(&url, &header).await;
    assert!(
        resources.is_empty() && templates.is_empty(),
        "{resources:?} {templates:?}"
    );
    mcp.shutdown().await;
}

/// Subscribing follows the toolsets too: a resource of a toolset the server is not offered
/// cannot be subscribed to (not found, as reading it).
#[tokio::test]
#[allow(deprecated)] // resources/subscribe: the 2025-11-25 way, still served
async fn subscriptions_follow_their_toolsets() {
    let p = coffee_project();
    let mcp = p.start(&["--toolsets", "requirements"]).await;
    let subscribe = |uri: &'static str| {
        mcp.peer()
            .subscribe(rmcp::model::SubscribeRequestParams::new(uri))
    };
    let err = subscribe(CITATIONS).await.expect_err("refused");
    let rmcp::service::ServiceError::McpError(err) = err else {
        panic!("a JSON-RPC error: {err:?}")
    };
    assert_eq!(err.code.0, -32002, "{err:?}");
    assert!(err.message.contains("toolset"), "{err:?}");
    subscribe(SPECS)
        .await
        .expect("a resource of the requirements");
    mcp.shutdown().await;
}
