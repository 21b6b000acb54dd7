//! The bridge never serves what it cannot vouch for (issue 23, finding 5), through the
//! built binaries on a real PostgreSQL:
//! - the event stream of `jility serve` carries a `heartbeat` event (its interval announced
//!   by `ready`), seen on the raw stream;
//! - a server hung with its connection open (SIGSTOP) is noticed within a few heartbeats: the
//!   bridge then answers a retryable error or the fresh value, never the stale cached one,
//!   and serves from cache again after SIGCONT;
//! - the bridge's `tools/list` shows what its token's scopes allow, exactly as `/mcp` does,
//!   and a hidden tool is refused with the same code (`GET /api/v1/whoami` says the scopes).
//!
//! The servers run with `JILITY_EVENTS_HEARTBEAT_SECS=1`, so the bridge's deadline is 3 s.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stderr
)]

use crate::cloud;
use crate::pg;

use std::io::Read as _;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use jility_cloud::auth::Tokens;
use mcp_testkit::McpProcess;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use cloud::{Server, call_json, client, token, workspace};
use pg::TestDb;

const BIN: &str = env!("CARGO_BIN_EXE_jility");
const HEARTBEAT: [(&str, &str); 1] = [("JILITY_EVENTS_HEARTBEAT_SECS", "1")];

fn start(db: &TestDb) -> Server {
    Server::start_with(db, "127.0.0.1:0", &["--rate-limit", "100000"], &HEARTBEAT)
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

async fn bridge(api: &str, token: &str, home: &Path) -> McpProcess {
    let config = home.join("config");
    let env = [
        ("JILITY_MODE", "cloud"),
        ("JILITY_API_URL", api),
        ("JILITY_API_TOKEN", token),
        ("HOME", home.to_str().unwrap()),
        ("XDG_CONFIG_HOME", config.to_str().unwrap()),
    ];
    McpProcess::spawn_bin(BIN, &["--mcp-server"], home, &env)
        .await
        .expect("start the bridge")
}

/// A tool call's `structuredContent` envelope.
async fn envelope(mcp: &McpProcess, tool: &str, args: Value) -> Value {
    let result = mcp.call(tool, args).await;
    result.structured_content.clone().unwrap()
}

fn signal(pid: u32, which: &str) {
    let sent = Command::new("kill")
        .args([which, &pid.to_string()])
        .status()
        .unwrap();
    assert!(sent.success(), "kill {which} {pid}");
}

fn describe(http: &reqwest::blocking::Client, server: &Server, token: &str, text: &str) {
    let answer = call_json(
        http,
        server,
        Method::POST,
        "/tickets/TASK-1/description",
        token,
        Some(json!({"operation": "replace_all", "content": text})),
    );
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
}

#[test]
fn the_event_stream_carries_heartbeats() {
    let db = TestDb::new();
    let tokens = Tokens::new(&db.connect());
    let (_alpha, full) = workspace(&tokens, "alpha");
    let server = start(&db);
    let started = Instant::now();
    let mut response = client()
        .get(format!("{}/events", server.url))
        .bearer_auth(&full)
        .header("accept", "text/event-stream")
        .send()
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let mut seen = String::new();
    let mut buffer = [0u8; 1024];
    while started.elapsed() < Duration::from_secs(10) {
        let n = response.read(&mut buffer).unwrap();
        assert!(n > 0, "the stream ended: {seen}");
        seen.push_str(&String::from_utf8_lossy(&buffer[..n]));
        if seen.matches("event: heartbeat").count() >= 2 {
            break;
        }
    }
    assert!(
        seen.contains("event: ready\ndata: {\"heartbeat_secs\":1}"),
        "{seen}"
    );
    assert!(seen.matches("event: heartbeat").count() >= 2, "{seen}");
    // Two heartbeats of a 1 s interval come within about 2 s, not 15.
    assert!(started.elapsed() < Duration::from_secs(5), "{seen}");

    // whoami: the caller's own token, any scope.
    let reader = token(&tokens, &_alpha, "reader", "tickets:read,comments:write");
    let me = call_json(
        &client(),
        &server,
        Method::GET,
        "/whoami",
        reader.token.expose(),
        None,
    );
    assert_eq!(me.status, StatusCode::OK, "{}", me.body);
    assert_eq!(me.body["token_name"], "reader");
    assert_eq!(me.body["workspace"], "alpha");
    assert_eq!(me.body["scopes"], json!(["tickets:read", "comments:write"]));
    assert!(!me.body.to_string().contains(reader.token.expose()));
}

#[test]
fn a_hung_server_is_not_vouched_for() {
    let db = TestDb::new();
    let tokens = Tokens::new(&db.connect());
    let (_alpha, full) = workspace(&tokens, "alpha");
    let followed = start(&db);
    let other = start(&db);
    let http = client();
    let created = call_json(
        &http,
        &followed,
        Method::POST,
        "/tickets",
        &full,
        Some(json!({"title": "Watched", "description": "before"})),
    );
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    let home = tempfile::tempdir().unwrap();
    let rt = runtime();
    let mcp = rt.block_on(bridge(followed.root(), &full, home.path()));
    let get = |mcp: &McpProcess| {
        rt.block_on(envelope(
            mcp,
            "jility_get_ticket",
            json!({"ticket_id": "TASK-1"}),
        ))
    };
    // Wait until the stream is followed: a changed description is then seen through the
    // cache's invalidation, and the next reads are cached.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        describe(
            &http,
            &other,
            &full,
            &format!("before {:?}", Instant::now()),
        );
        std::thread::sleep(Duration::from_millis(300));
        let first = get(&mcp);
        describe(&http, &other, &full, "before");
        std::thread::sleep(Duration::from_millis(500));
        let second = get(&mcp);
        if first["status"] == "ok" && second["data"]["ticket"]["description"] == "before" {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the bridge never settled: {second}"
        );
    }
    let pid = followed.pid();
    signal(pid, "-STOP");
    let stopped = Instant::now();
    describe(&http, &other, &full, "after");
    // Past the deadline (3 heartbeats of 1 s) the bridge no longer vouches for its cache.
    std::thread::sleep(Duration::from_secs(4));
    let asked = Instant::now();
    let answer = get(&mcp);
    let took = asked.elapsed();
    eprintln!(
        "hung server: answer {:.1} s after SIGSTOP, in {:.1} s: {answer}",
        stopped.elapsed().as_secs_f64(),
        took.as_secs_f64()
    );
    if answer["status"] == "ok" {
        assert_eq!(
            answer["data"]["ticket"]["description"], "after",
            "stale: {answer}"
        );
    } else {
        assert_eq!(answer["error"]["retryable"], true, "{answer}");
        assert_eq!(answer["error"]["code"], "network_error", "{answer}");
    }
    signal(pid, "-CONT");
    let resumed = Instant::now();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let answer = get(&mcp);
        if answer["status"] == "ok" {
            assert_eq!(answer["data"]["ticket"]["description"], "after", "{answer}");
            break;
        }
        assert!(Instant::now() < deadline, "no recovery: {answer}");
        std::thread::sleep(Duration::from_millis(200));
    }
    eprintln!(
        "recovered {:.1} s after SIGCONT",
        resumed.elapsed().as_secs_f64()
    );
    // And a write seen through the recovered stream reaches the bridge.
    describe(&http, &other, &full, "again");
    let deadline = Instant::now() + Duration::from_secs(10);
    while get(&mcp)["data"]["ticket"]["description"] != "again" {
        assert!(
            Instant::now() < deadline,
            "the stream was not followed again"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    rt.block_on(mcp.shutdown());
}

#[test]
fn the_bridge_lists_and_refuses_tools_as_mcp_does() {
    let db = TestDb::new();
    let tokens = Tokens::new(&db.connect());
    let (alpha, _full) = workspace(&tokens, "alpha");
    let narrow = token(&tokens, &alpha, "narrow", "tickets:read,comments:write");
    let server = start(&db);
    let home = tempfile::tempdir().unwrap();
    let rt = runtime();
    let remote = rt
        .block_on(McpProcess::connect_http(
            &format!("{}/mcp", server.root()),
            Some(narrow.token.expose()),
        ))
        .unwrap();
    let local = rt.block_on(bridge(server.root(), narrow.token.expose(), home.path()));
    let names = |mcp: &McpProcess| {
        let mut names: Vec<String> = rt
            .block_on(mcp.tools())
            .into_iter()
            .map(|t| t.name.to_string())
            .collect();
        names.sort();
        names
    };
    let over_mcp = names(&remote);
    let over_bridge = names(&local);
    assert!(over_mcp.contains(&"jility_get_ticket".to_string()));
    assert!(!over_mcp.contains(&"jility_create_ticket".to_string()));
    assert_eq!(over_bridge, over_mcp);
    let args = json!({"title": "Sneaky"});
    let refused_mcp = rt.block_on(envelope(&remote, "jility_create_ticket", args.clone()));
    let refused_bridge = rt.block_on(envelope(&local, "jility_create_ticket", args));
    assert_eq!(refused_mcp["error"]["code"], "permission_denied");
    assert_eq!(
        refused_bridge["error"]["code"],
        refused_mcp["error"]["code"]
    );
    assert_eq!(
        refused_bridge["error"]["message"],
        refused_mcp["error"]["message"]
    );
    assert_eq!(refused_bridge["error"]["retryable"], false);
    rt.block_on(local.shutdown());
    rt.block_on(remote.shutdown());
}
