//! twig-mcp over Streamable HTTP (`--http`): the same tools, errors, pages and resource
//! subscriptions as over stdio, with state shared by every session of the process and
//! notifications delivered to each subscriber's own session.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // assertions in tests

use crate::support;

use std::time::Duration;

use mcp_common::Page;
use mcp_testkit::{McpProcess, Wire};
use rmcp::model::SubscribeRequestParams;
use serde_json::{Value, json};
use support::*;
use twig_mcp::errors;

const WAIT: Duration = Duration::from_secs(10);

async fn start_http(fx: &Fixture, env: &[(&str, &str)]) -> McpProcess {
    fx.start_over(Wire::Http, &fx.repo_path(), &[], env).await
}

/// The server's MCP endpoint, as it announced it.
fn url_of(mcp: &McpProcess) -> String {
    mcp.url().expect("an HTTP server").to_string()
}

/// A second client of the same server: its own HTTP session.
async fn another_session(url: &str) -> McpProcess {
    McpProcess::connect_http(url, None).await.unwrap()
}

/// What arrives within a short while.
async fn drain(mcp: &McpProcess) -> Vec<String> {
    let mut seen = Vec::new();
    while let Some(uri) = mcp.next_resource_update(Duration::from_millis(500)).await {
        seen.push(uri);
    }
    seen
}

#[tokio::test]
async fn http_handshake_and_a_tool() {
    let fx = stacked();
    fx.git(&["checkout", "-q", "feat/auth"]);
    let mcp = start_http(&fx, &[]).await;
    assert!(url_of(&mcp).ends_with("/mcp"), "{}", url_of(&mcp));
    let info = mcp.server_info();
    let server = info.server_info.expect("serverInfo");
    assert_eq!(server.name, "twig-mcp");
    assert_eq!(server.version, env!("CARGO_PKG_VERSION"));
    assert!(info.instructions.unwrap().starts_with("Twig MCP server."));
    assert_eq!(
        info.capabilities.resources.and_then(|r| r.subscribe),
        Some(true)
    );
    assert_eq!(mcp.tools().await.len(), 13);

    let data: Value = mcp.call_ok("get_current_branch", json!({})).await;
    assert_eq!(data["branch"], "feat/auth");
    assert_eq!(data["pr_number"], 42);
    mcp.shutdown().await;
}

#[tokio::test]
async fn http_errors_carry_hint_and_retryability() {
    let fx = stacked();
    fx.git(&[
        "remote",
        "add",
        "origin",
        "https://github.com/octo/widgets.git",
    ]);
    let mcp = start_http(
        &fx,
        &[
            ("GITHUB_TOKEN", "ghp_test"),
            ("GITHUB_API_URL", "http://127.0.0.1:9"),
        ],
    )
    .await;
    // Unreachable GitHub: temporary, so retryable.
    let err = mcp
        .call_err("get_pull_request", json!({"pr_number": 42}))
        .await;
    assert_eq!(err.code, errors::NETWORK_ERROR, "{err:?}");
    assert!(
        err.message.starts_with("GitHub API error: "),
        "{}",
        err.message
    );
    assert_eq!(err.hint, "Check your network connection.");
    assert!(err.retryable);
    // A branch twig does not track: not retryable, with its own hint.
    let err = mcp
        .call_err("get_branch_metadata", json!({"branch": "nope"}))
        .await;
    assert_eq!(err.code, errors::NOT_FOUND);
    assert!(err.hint.starts_with("Use `list_branches`"), "{}", err.hint);
    assert!(!err.retryable);
    mcp.shutdown().await;
}

#[tokio::test]
async fn http_paged_walk_and_cursors_shared_by_sessions() {
    let fx = stacked();
    let mcp = start_http(&fx, &[]).await;
    let mut names = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let mut args = json!({"limit": 1});
        if let Some(cursor) = &cursor {
            args["cursor"] = json!(cursor);
        }
        let (data, page) = mcp.call_paged::<Value>("list_branches", args).await;
        assert_eq!(page.total, 5);
        names.push(data["branches"][0]["branch"].as_str().unwrap().to_string());
        pages += 1;
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    assert_eq!(pages, 5);
    // Every branch twig tracks: `main` is a root and a parent, without a link.
    assert_eq!(
        names,
        [
            "feat/auth",
            "feat/auth-ui",
            "feat/billing",
            "gone/remote-only",
            "main"
        ]
    );

    // Another session of the same process accepts this session's cursors (one key per
    // process) and refuses forged ones.
    let (_, page) = mcp
        .call_paged::<Value>("list_branches", json!({"limit": 3}))
        .await;
    let cursor = page.next_cursor.unwrap();
    let other = another_session(&url_of(&mcp)).await;
    let answer = other
        .call("list_branches", json!({"limit": 3, "cursor": cursor}))
        .await
        .structured_content
        .unwrap();
    assert_eq!(answer["status"], "ok", "{answer}");
    assert_eq!(answer["data"]["branches"][0]["branch"], "gone/remote-only");
    assert_eq!(
        serde_json::from_value::<Page>(answer["page"].clone()).unwrap(),
        Page::new(5, None)
    );
    let answer = other
        .call("list_branches", json!({"cursor": "forged"}))
        .await
        .structured_content
        .unwrap();
    assert_eq!(answer["status"], "error");
    assert_eq!(answer["error"]["code"], "invalid_params");
    other.shutdown().await;
    mcp.shutdown().await;
}

#[tokio::test]
#[allow(deprecated)]
async fn http_subscribers_each_hear_about_state_changes() {
    let fx = stacked();
    let mcp = start_http(&fx, &[]).await;
    mcp.peer()
        .subscribe(SubscribeRequestParams::new("twig://repo/tree"))
        .await
        .unwrap();
    // A second session subscribes to the other resource; a third does not subscribe.
    let url = url_of(&mcp);
    let second = another_session(&url).await;
    second
        .peer()
        .subscribe(SubscribeRequestParams::new("twig://repo/branches"))
        .await
        .unwrap();
    let third = another_session(&url).await;
    assert_eq!(
        mcp.next_resource_update(Duration::from_millis(300)).await,
        None,
        "no change yet"
    );

    // twig rewrites its state file.
    fx.write_state(&state(
        vec![branch("feat/new", None, None)],
        &[],
        &[("main", true)],
        json!([]),
    ));
    assert_eq!(
        mcp.next_resource_update(WAIT).await.as_deref(),
        Some("twig://repo/tree"),
        "the first session hears about its resource"
    );
    assert_eq!(
        second.next_resource_update(WAIT).await.as_deref(),
        Some("twig://repo/branches"),
        "the second session is told too"
    );
    // Each session only hears about what it subscribed to.
    while let Some(uri) = mcp.next_resource_update(Duration::from_millis(500)).await {
        assert_eq!(uri, "twig://repo/tree");
    }
    assert!(
        drain(&second)
            .await
            .iter()
            .all(|uri| uri == "twig://repo/branches")
    );
    assert!(drain(&third).await.is_empty());

    // A session that ends stops nothing for the others.
    second.shutdown().await;
    fx.git(&["checkout", "-q", "feat/billing"]);
    assert_eq!(
        mcp.next_resource_update(WAIT).await.as_deref(),
        Some("twig://repo/tree")
    );
    third.shutdown().await;
    mcp.shutdown().await;
}

/// A 2026-07-28 client (stateless HTTP) subscribes with `subscriptions/listen`.
#[tokio::test]
async fn http_listen_subscribers_of_the_2026_protocol_hear_about_changes() {
    use rmcp::{
        ClientServiceExt,
        model::{ProtocolVersion, ServerNotification, SubscriptionFilter},
        service::ClientLifecycleMode,
        transport::StreamableHttpClientTransport,
    };
    let fx = stacked();
    let mcp = start_http(&fx, &[]).await;
    let transport = StreamableHttpClientTransport::from_uri(url_of(&mcp));
    let client = tokio::time::timeout(
        WAIT,
        ().serve_with_lifecycle(
            transport,
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        ),
    )
    .await
    .unwrap()
    .unwrap();
    let mut filter = SubscriptionFilter::new();
    filter.resource_subscriptions = Some(vec![
        "twig://repo/branches".to_string(),
        "twig://branch/x/context".to_string(),
    ]);
    let mut subscription = tokio::time::timeout(WAIT, client.peer().listen(filter))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        subscription.acknowledged().resource_subscriptions,
        Some(vec!["twig://repo/branches".to_string()]),
    );
    fx.write_state(&state(vec![], &[], &[], json!([])));
    let notification = tokio::time::timeout(WAIT, subscription.next())
        .await
        .expect("an update after the state changed")
        .unwrap()
        .expect("subscription open");
    match notification {
        ServerNotification::ResourceUpdatedNotification(n) => {
            assert_eq!(n.params.uri, "twig://repo/branches")
        }
        other => panic!("unexpected notification {other:?}"),
    }
    let _ = subscription.cancel().await;
    let _ = client.cancel().await;
    mcp.shutdown().await;
}

#[tokio::test]
async fn http_off_loopback_without_a_token_refuses_to_start() {
    let fx = stacked();
    let output = tokio::process::Command::new(BIN)
        .args(["--http", "0.0.0.0:0"])
        .current_dir(fx.repo_path())
        .env_clear()
        .env("HOME", fx.home())
        .output()
        .await
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.starts_with("twig-mcp: "), "{stderr}");
    assert!(stderr.contains("MCP_HTTP_TOKEN"), "{stderr}");
}
