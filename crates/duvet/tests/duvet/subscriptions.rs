//! Resource subscriptions through the built binary: `resources/subscribe` over stdio and
//! Streamable HTTP (each session told about its own URIs through its own peer), and the
//! 2026-07-28 `subscriptions/listen`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // assertions in tests

use crate::support;

use std::time::Duration;

use mcp_testkit::{McpProcess, Wire};
use rmcp::{
    ServiceError,
    model::{ErrorCode, SubscribeRequestParams, UnsubscribeRequestParams},
};
use serde_json::Value;
use support::*;

/// How long an expected update may take to arrive (a bound, not a timing assumption).
const WAIT: Duration = Duration::from_secs(10);
/// How long to listen for updates that must not come (or stragglers of a burst).
const QUIET: Duration = Duration::from_millis(500);

const CITATIONS: &str = "duvet:///citations";
const REQUIREMENTS: &str = "duvet:///requirements";
const COFFEE: &str = "duvet:///specifications/coffee";

const NEW_CITATION: &str =
    "//= specs/coffee.md#ordering\n//# A client MUST identify the pot.\nfn order() {}\n";

/// The MCP endpoint the server announced on stderr.
fn url(mcp: &McpProcess) -> String {
    mcp.url().expect("an HTTP server").to_string()
}

/// Every update that arrives until none comes for [`QUIET`].
async fn drain(mcp: &McpProcess) -> Vec<String> {
    let mut seen = Vec::new();
    while let Some(uri) = mcp.next_resource_update(QUIET).await {
        seen.push(uri);
    }
    seen
}

#[allow(deprecated)]
async fn subscribe(mcp: &McpProcess, uri: &str) -> Result<(), ServiceError> {
    tokio::time::timeout(WAIT, mcp.peer().subscribe(SubscribeRequestParams::new(uri)))
        .await
        .expect("an answer in time")
}

#[allow(deprecated)]
async fn unsubscribe(mcp: &McpProcess, uri: &str) {
    tokio::time::timeout(
        WAIT,
        mcp.peer().unsubscribe(UnsubscribeRequestParams::new(uri)),
    )
    .await
    .expect("an answer in time")
    .expect("unsubscribed");
}

fn assert_invalid_params(result: Result<(), ServiceError>, uri: &str) {
    match result {
        Err(ServiceError::McpError(err)) => {
            assert_eq!(err.code, ErrorCode::INVALID_PARAMS, "{uri}: {err:?}");
            assert!(err.message.contains(uri), "{}", err.message);
        }
        other => panic!("{uri}: expected invalid params, got {other:?}"),
    }
}

#[tokio::test]
async fn stdio_subscribe_edit_unsubscribe() {
    let p = coffee_project();
    let mcp = p.start(&[]).await;
    assert_eq!(
        mcp.server_info()
            .capabilities
            .resources
            .and_then(|r| r.subscribe),
        Some(true)
    );

    // Unknown URIs are refused as invalid params; the tree's URIs are accepted, also ones
    // that do not exist yet and pages.
    for uri in [
        "duvet:///nope",
        "duvet:///specifications/coffee/chapters",
        "duvet:///specifications//sections",
        "file:///etc/passwd",
    ] {
        assert_invalid_params(subscribe(&mcp, uri).await, uri);
    }
    subscribe(&mcp, CITATIONS).await.unwrap();
    subscribe(
        &mcp,
        "duvet:///specifications/not-yet/sections/1/requirements",
    )
    .await
    .unwrap();
    unsubscribe(
        &mcp,
        "duvet:///specifications/not-yet/sections/1/requirements",
    )
    .await;
    let before = mcp.read_resource_json(CITATIONS).await;

    // A source file changes: the subscribed resource is announced, and reads anew.
    p.write("src/main.rs", NEW_CITATION);
    assert_eq!(
        mcp.next_resource_update(WAIT).await.as_deref(),
        Some(CITATIONS)
    );
    assert!(drain(&mcp).await.iter().all(|uri| uri == CITATIONS));
    let after = mcp.read_resource_json(CITATIONS).await;
    assert_ne!(before, after);
    assert!(after.to_string().contains("src/main.rs:1"), "{after}");

    // Unsubscribed from the citations, subscribed to the requirements: after a change the
    // requirements are announced, the citations no more. (A session's URIs are announced
    // together, in order, and the citations would come first.)
    unsubscribe(&mcp, CITATIONS).await;
    subscribe(&mcp, REQUIREMENTS).await.unwrap();
    p.write("src/main.rs", "fn nothing() {}\n");
    assert_eq!(
        mcp.next_resource_update(WAIT).await.as_deref(),
        Some(REQUIREMENTS)
    );
    assert!(drain(&mcp).await.iter().all(|uri| uri == REQUIREMENTS));

    // With nothing subscribed, a change announces nothing.
    unsubscribe(&mcp, REQUIREMENTS).await;
    p.write("specs/coffee.md", &COFFEE_MD.replace("quickly", "at once"));
    assert_eq!(drain(&mcp).await, Vec::<String>::new());
    mcp.shutdown().await;
}

#[tokio::test]
#[allow(deprecated)]
async fn http_sessions_each_hear_about_their_own_resources() {
    let p = coffee_project();
    let mcp = p.start_over(Wire::Http, &[]).await;
    subscribe(&mcp, REQUIREMENTS).await.unwrap();
    assert_invalid_params(subscribe(&mcp, "duvet:///nope").await, "duvet:///nope");

    // A second session subscribes to another resource; a third does not subscribe.
    let url = url(&mcp);
    let second = McpProcess::connect_http(&url, None).await.unwrap();
    subscribe(&second, COFFEE).await.unwrap();
    let third = McpProcess::connect_http(&url, None).await.unwrap();

    // The Markdown specification changes.
    p.write(
        "specs/coffee.md",
        &format!("{COFFEE_MD}\n## Cups\n\nCups MUST be warm.\n"),
    );
    assert_eq!(
        mcp.next_resource_update(WAIT).await.as_deref(),
        Some(REQUIREMENTS),
        "the first session hears about its resource"
    );
    assert_eq!(
        second.next_resource_update(WAIT).await.as_deref(),
        Some(COFFEE),
        "the second session is told too"
    );
    // Each session only hears about what it subscribed to.
    assert!(drain(&mcp).await.iter().all(|uri| uri == REQUIREMENTS));
    assert!(drain(&second).await.iter().all(|uri| uri == COFFEE));
    assert_eq!(drain(&third).await, Vec::<String>::new());
    let requirements: Value = mcp.read_resource_json(REQUIREMENTS).await;
    assert!(
        requirements.to_string().contains("Cups MUST be warm."),
        "{requirements}"
    );

    // A session that ends ends its subscriptions, and nothing for the others.
    second.shutdown().await;
    p.write("src/main.rs", NEW_CITATION);
    assert_eq!(
        mcp.next_resource_update(WAIT).await.as_deref(),
        Some(REQUIREMENTS)
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
    let p = coffee_project();
    let mcp = p.start_over(Wire::Http, &[]).await;
    // Analysed (and so watched) before the change below.
    let _ = mcp.read_resource_json(CITATIONS).await;
    let transport = StreamableHttpClientTransport::from_uri(url(&mcp));
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
    filter.resource_subscriptions = Some(vec![CITATIONS.to_string(), "duvet:///nope".to_string()]);
    let mut subscription = tokio::time::timeout(WAIT, client.peer().listen(filter))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        subscription.acknowledged().resource_subscriptions,
        Some(vec![CITATIONS.to_string()]),
        "unknown URIs are left out of the acknowledgment"
    );
    p.write("src/main.rs", NEW_CITATION);
    let notification = tokio::time::timeout(WAIT, subscription.next())
        .await
        .expect("an update after the source changed")
        .unwrap()
        .expect("subscription open");
    match notification {
        ServerNotification::ResourceUpdatedNotification(n) => {
            assert_eq!(n.params.uri, CITATIONS)
        }
        other => panic!("unexpected notification {other:?}"),
    }
    let _ = subscription.cancel().await;
    let _ = client.cancel().await;
    mcp.shutdown().await;
}
