//! The HTTP serving of the kit, over real sockets with a raw HTTP client: both protocol
//! generations, DNS-rebinding guards, the body limit and the bearer token. (Every server's
//! own tests and the conformance suite drive the same code through the binaries.)
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use mcp_common::http::{HttpConfig, MAX_BODY_BYTES};
use rmcp::ServerHandler;
use rmcp::model::{Implementation, ServerCapabilities, ServerConfig};
use serde_json::{Value, json};

#[derive(Clone)]
struct Minimal;

impl ServerHandler for Minimal {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("minimal", "1.0.0"))
    }
}

struct Server {
    url: String,
    port: u16,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<anyhow::Result<()>>,
}

impl Server {
    async fn start(config: HttpConfig) -> Self {
        let listener = mcp_common::http::bind(&config).await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let (tx, rx) = tokio::sync::oneshot::channel();
        let task = tokio::spawn(async move {
            mcp_common::http::serve_on(listener, &config, || Minimal, async {
                let _ = rx.await;
            })
            .await
        });
        Self {
            url: format!("http://127.0.0.1:{port}/mcp"),
            port,
            stop: Some(tx),
            task,
        }
    }

    async fn stop(mut self) {
        let _ = self.stop.take().unwrap().send(());
        self.task.await.unwrap().unwrap();
    }
}

fn loopback(token: Option<&str>) -> HttpConfig {
    HttpConfig::new("127.0.0.1:0", token.map(String::from), vec![], vec![]).unwrap()
}

fn initialize(version: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": version,
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}
    }})
}

fn post(url: &str, body: &Value) -> reqwest::RequestBuilder {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::new()
        .post(url)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .body(body.to_string())
}

/// The JSON-RPC messages of a response, whether sent as JSON or as server-sent events.
async fn messages(response: reqwest::Response) -> Vec<Value> {
    let text = response.text().await.unwrap();
    match serde_json::from_str::<Value>(&text) {
        Ok(value) => vec![value],
        Err(_) => text
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str(d.trim()).ok())
            .collect(),
    }
}

#[tokio::test]
async fn sessions_for_2025_11_25_clients() {
    let server = Server::start(loopback(None)).await;
    let response = post(&server.url, &initialize("2025-11-25"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let session = response
        .headers()
        .get("mcp-session-id")
        .expect("a session id")
        .to_str()
        .unwrap()
        .to_string();
    let answers = messages(response).await;
    let result = answers
        .iter()
        .find(|m| m["id"] == 1)
        .expect("initialize answered");
    assert_eq!(result["result"]["protocolVersion"], "2025-11-25");
    assert_eq!(result["result"]["serverInfo"]["name"], "minimal");
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let ack = post(&server.url, &initialized)
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-11-25")
        .send()
        .await
        .unwrap();
    assert_eq!(ack.status(), 202);
    let ping = json!({"jsonrpc": "2.0", "id": 2, "method": "ping"});
    let response = post(&server.url, &ping)
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-11-25")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let answers = messages(response).await;
    assert!(
        answers
            .iter()
            .any(|m| m["id"] == 2 && m["result"].is_object()),
        "{answers:?}"
    );
    // An unknown session is not served.
    let response = post(&server.url, &ping)
        .header("mcp-session-id", "no-such-session")
        .header("mcp-protocol-version", "2025-11-25")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 404);
    server.stop().await;
}

#[tokio::test]
async fn stateless_requests_for_2026_07_28_clients() {
    let server = Server::start(loopback(None)).await;
    let list = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {}
    }}});
    let response = post(&server.url, &list)
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", "tools/list")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert!(
        response.headers().get("mcp-session-id").is_none(),
        "no session for 2026-07-28"
    );
    let answers = messages(response).await;
    let answer = answers.iter().find(|m| m["id"] == 7).expect("answered");
    assert!(answer["result"]["tools"].is_array(), "{answer}");
    server.stop().await;
}

#[tokio::test]
async fn foreign_origin_and_host_are_forbidden() {
    let server = Server::start(loopback(None)).await;
    let body = initialize("2025-11-25");
    let evil = post(&server.url, &body)
        .header("Origin", "http://evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(evil.status(), 403);
    let own = post(&server.url, &body)
        .header("Origin", format!("http://127.0.0.1:{}", server.port))
        .send()
        .await
        .unwrap();
    assert_eq!(own.status(), 200);
    let other_port = post(&server.url, &body)
        .header("Origin", "http://localhost:1")
        .send()
        .await
        .unwrap();
    assert_eq!(
        other_port.status(),
        403,
        "another local page is another origin"
    );
    let rebound = post(&server.url, &body)
        .header("Host", format!("evil.example:{}", server.port))
        .send()
        .await
        .unwrap();
    assert_eq!(rebound.status(), 403);
    server.stop().await;
}

#[tokio::test]
async fn oversized_bodies_are_refused() {
    let server = Server::start(loopback(None)).await;
    let huge = json!({"jsonrpc": "2.0", "id": 1, "method": "ping",
                      "params": {"pad": "x".repeat(MAX_BODY_BYTES + 1)}});
    let response = post(&server.url, &huge).send().await.unwrap();
    assert_eq!(response.status(), 413);
    // The server still serves afterwards.
    let response = post(&server.url, &initialize("2025-11-25"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    server.stop().await;
}

#[tokio::test]
async fn the_bearer_token_is_required_when_set() {
    let server = Server::start(loopback(Some("correct horse"))).await;
    let body = initialize("2025-11-25");
    let missing = post(&server.url, &body).send().await.unwrap();
    assert_eq!(missing.status(), 401);
    assert_eq!(
        missing.headers().get("www-authenticate").unwrap(),
        "Bearer realm=\"mcp\""
    );
    let text = missing.text().await.unwrap();
    assert!(text.contains("MCP_HTTP_TOKEN"), "{text}");
    assert!(!text.contains("correct horse"), "{text}");
    let wrong = post(&server.url, &body)
        .bearer_auth("correct horsf")
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), 401);
    assert!(!wrong.text().await.unwrap().contains("correct horse"));
    let upper = post(&server.url, &body)
        .header("Authorization", "BEARER correct horse")
        .send()
        .await
        .unwrap();
    assert_eq!(upper.status(), 200, "the scheme is case-insensitive");
    let right = post(&server.url, &body)
        .bearer_auth("correct horse")
        .send()
        .await
        .unwrap();
    assert_eq!(right.status(), 200);
    server.stop().await;
}

#[tokio::test]
async fn other_paths_are_not_found() {
    let server = Server::start(loopback(None)).await;
    let response = post(
        &server.url.replace("/mcp", "/other"),
        &initialize("2025-11-25"),
    )
    .send()
    .await
    .unwrap();
    assert_eq!(response.status(), 404);
    server.stop().await;
}
