//! The HTTP serving of the kit, over real sockets with a raw HTTP client: both protocol
//! generations, DNS-rebinding guards, the body limit and the bearer token. (Every server's
//! own tests and the conformance suite drive the same code through the binaries.)
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use mcp_common::http::{HttpConfig, MAX_BODY_BYTES};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData,
    Implementation, ProgressNotificationParam, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler};
use serde_json::{Value, json};

#[derive(Clone)]
struct Minimal;

impl ServerHandler for Minimal {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("minimal", "1.0.0"))
    }

    /// `progress` reports progress (to the request's progress token) before it answers;
    /// any other tool just answers.
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if request.name == "progress"
            && let Some(token) = context.meta.get_progress_token()
        {
            context
                .peer
                .notify_progress(ProgressNotificationParam::new(token, 0.5))
                .await
                .unwrap();
        }
        Ok(
            CallToolResult::success(vec![ContentBlock::text(format!("{} done", request.name))])
                .into(),
        )
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

/// Open a 2025-11-25 session on `url`; its id.
async fn open_session(url: &str) -> String {
    let response = post(url, &initialize("2025-11-25")).send().await.unwrap();
    assert_eq!(response.status(), 200);
    let session = response.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_string();
    response.bytes().await.unwrap();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let ack = post(url, &initialized)
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-11-25")
        .send()
        .await
        .unwrap();
    assert_eq!(ack.status(), 202);
    session
}

fn content_type(response: &reqwest::Response) -> String {
    response.headers()["content-type"]
        .to_str()
        .unwrap()
        .to_string()
}

#[tokio::test]
async fn a_lone_answer_in_a_session_is_plain_json_and_one_with_progress_streams() {
    let server = Server::start(loopback(None)).await;
    let initialize = post(&server.url, &initialize("2025-11-25"))
        .send()
        .await
        .unwrap();
    assert_eq!(content_type(&initialize), "application/json");
    assert!(initialize.headers().contains_key("mcp-session-id"));
    let session = open_session(&server.url).await;
    let call = |id: u64, name: &str, progress: bool| {
        let mut params = json!({"name": name, "arguments": {}});
        if progress {
            params["_meta"] = json!({"progressToken": "p1"});
        }
        post(
            &server.url,
            &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}),
        )
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-11-25")
    };

    // The answer alone: JSON, the whole body one message.
    let response = call(2, "quick", false).send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(content_type(&response), "application/json");
    let body: Value = serde_json::from_str(&response.text().await.unwrap()).unwrap();
    assert_eq!(body["id"], 2);
    assert_eq!(body["result"]["content"][0]["text"], "quick done");

    // Progress first: the stream is passed on, progress then the answer, in order.
    let response = call(3, "progress", true).send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert!(content_type(&response).starts_with("text/event-stream"));
    let answers = messages(response).await;
    assert_eq!(answers.len(), 2, "{answers:?}");
    assert_eq!(answers[0]["method"], "notifications/progress");
    assert_eq!(answers[0]["params"]["progressToken"], "p1");
    assert_eq!(answers[1]["id"], 3);
    assert_eq!(answers[1]["result"]["content"][0]["text"], "progress done");

    // A JSON-RPC error alone is plain JSON too.
    let response = post(
        &server.url,
        &json!({"jsonrpc": "2.0", "id": 4, "method": "no/such/method"}),
    )
    .header("mcp-session-id", &session)
    .header("mcp-protocol-version", "2025-11-25")
    .send()
    .await
    .unwrap();
    assert_eq!(content_type(&response), "application/json");
    let body: Value = serde_json::from_str(&response.text().await.unwrap()).unwrap();
    assert_eq!(body["id"], 4);
    assert_eq!(body["error"]["code"], -32601);
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
    // The code jility serve gives a missing token too.
    let refusal: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(refusal["error"]["code"], "unauthenticated", "{refusal}");
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
