//! Issue 23, findings 1 and 3, through the binaries: one workspace cannot take every MCP
//! session of `jility serve` (shares per workspace and per token), a single user of the
//! `--http` edge still has the whole server (and idle sessions make room under pressure),
//! minting tokens is limited per workspace, and the rate limit is a sliding window with a
//! workspace ceiling: no burst past the limit across a minute boundary, and a second token
//! does not add to a workspace's throughput.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stderr
)] // assertions in tests; figures for docs/reliability.md go to stderr

use crate::cloud;
use crate::pg;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use jility_cloud::auth::Tokens;
use reqwest::blocking::Client;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use cloud::*;
use pg::TestDb;

/// POST an `initialize` with JSON-RPC id `id` to `url` as `token`: status, session id (if
/// one was made), `Retry-After`, body.
fn initialize(
    http: &Client,
    url: &str,
    token: &str,
    id: &str,
) -> (StatusCode, Option<String>, Option<String>, Value) {
    let response = http
        .post(url)
        .bearer_auth(token)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(
            json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "fair-share", "version": "1"}
            }})
            .to_string(),
        )
        .send()
        .unwrap();
    let status = response.status();
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(String::from)
    };
    let session = header("mcp-session-id");
    let retry = header("retry-after");
    let text = response.text().unwrap();
    let body = if status.is_success() {
        Value::Null
    } else {
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{status}: not JSON ({e}): {text}"))
    };
    (status, session, retry, body)
}

/// A ping in session `session`: the status.
fn ping(http: &Client, url: &str, token: &str, session: &str) -> StatusCode {
    http.post(url)
        .bearer_auth(token)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-session-id", session)
        .header("mcp-protocol-version", "2025-06-18")
        .body(json!({"jsonrpc": "2.0", "id": 9, "method": "ping"}).to_string())
        .send()
        .unwrap()
        .status()
}

/// The resident memory of process `pid`, in kB.
fn rss_kb(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap()
}

/// A refusal of a new session: the status, `Retry-After`, and a JSON-RPC error with the
/// initialize's id, a hint, and retryable.
fn assert_refused(
    answer: &(StatusCode, Option<String>, Option<String>, Value),
    status: StatusCode,
    id: &str,
    says: &str,
) {
    let (got, session, retry, body) = answer;
    assert_eq!(*got, status, "{body}");
    assert!(session.is_none());
    let retry: u64 = retry.as_deref().expect("Retry-After").parse().unwrap();
    assert!(retry >= 1);
    assert_eq!(body["id"], id, "{body}");
    assert_eq!(body["error"]["code"], -32000, "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains(says), "{message}");
    assert_eq!(body["error"]["data"]["retryable"], true, "{body}");
    assert!(body["error"]["data"]["hint"].as_str().unwrap().len() > 10);
}

#[test]
fn a_workspace_still_gets_in_while_another_fills_the_session_table() {
    let db = TestDb::new();
    let pool = db.connect();
    let tokens = Tokens::new(&pool);
    let (alpha, a_token) = workspace(&tokens, "alpha");
    let (beta, _) = workspace(&tokens, "beta");
    let b_tokens: Vec<String> = (0..6)
        .map(|i| {
            token(&tokens, &beta, &format!("reader-{i}"), "tickets:read")
                .token
                .expose()
                .to_string()
        })
        .collect();
    let server = Server::start_with(
        &db,
        "127.0.0.1:0",
        &["--rate-limit", "1000"],
        &[("MCP_HTTP_MAX_SESSIONS", "10")],
    );
    let url = format!("{}/mcp", server.root());
    let http = client();
    let before = rss_kb(server.pid());
    // B opens sessions with each of its tokens until each is refused.
    let mut b_sessions = 0;
    let mut token_refusals = 0;
    let mut tenant_refusals = 0;
    let mut first_token_sessions = 0;
    for (t, token) in b_tokens.iter().enumerate() {
        for n in 0..10 {
            let id = format!("b-{t}-{n}");
            let answer = initialize(&http, &url, token, &id);
            match answer.0 {
                StatusCode::OK => {
                    b_sessions += 1;
                    if t == 0 {
                        first_token_sessions += 1;
                    }
                }
                StatusCode::TOO_MANY_REQUESTS => {
                    let message = answer.3["error"]["message"].as_str().unwrap().to_string();
                    if message.contains("token") {
                        assert_refused(
                            &answer,
                            StatusCode::TOO_MANY_REQUESTS,
                            &id,
                            "this token keeps 2 sessions",
                        );
                        token_refusals += 1;
                    } else {
                        assert_refused(
                            &answer,
                            StatusCode::TOO_MANY_REQUESTS,
                            &id,
                            "this tenant keeps 5 sessions",
                        );
                        tenant_refusals += 1;
                    }
                    break;
                }
                other => panic!("B's initialize {id} got {other}: {}", answer.3),
            }
        }
    }
    let after = rss_kb(server.pid());
    // A token's share is a quarter of the server (2 of 10), a workspace's half (5 of 10).
    assert_eq!(first_token_sessions, 2, "one token's share");
    assert_eq!(b_sessions, 5, "B's share");
    assert!(token_refusals >= 2 && tenant_refusals >= 1);
    // A still gets in, with sessions that work.
    let (status, session, _, body) = initialize(&http, &url, &a_token, "a-1");
    assert_eq!(status, StatusCode::OK, "A was locked out: {body}");
    let session = session.unwrap();
    assert_eq!(ping(&http, &url, &a_token, &session), StatusCode::OK);
    eprintln!(
        "FIGURES session fairness: MCP_HTTP_MAX_SESSIONS=10, B with 6 tokens got {b_sessions} sessions \
         ({first_token_sessions} per token; {token_refusals} token and {tenant_refusals} workspace refusals, 429); \
         A's initialize: {status}; RSS {before} kB before, {after} kB after B's sessions"
    );
    let _ = alpha;
}

#[test]
fn one_user_of_the_http_edge_has_the_whole_server_and_idle_sessions_make_room() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_jility"))
        .args(["--mcp-server", "--http", "127.0.0.1:0"])
        .current_dir(dir.path())
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", dir.path())
        .env("JILITY_ACTOR", "agent")
        .env("MCP_HTTP_TOKEN", "edge-secret")
        .env("MCP_HTTP_MAX_SESSIONS", "4")
        .env("MCP_HTTP_IDLE_UNDER_PRESSURE_SECS", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            if let Some(at) = line.split("serving MCP over HTTP at ").nth(1) {
                let _ = tx.send(at.split_whitespace().next().unwrap_or_default().to_string());
            }
            eprintln!("edge: {line}");
        }
    });
    let url = match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(url) => url,
        Err(_) => {
            let _ = child.kill();
            panic!("the edge did not announce its address");
        }
    };
    struct Kill(std::process::Child);
    impl Drop for Kill {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let _child = Kill(child);
    let http = client();
    // One token: its share is the whole server (4), as before shares existed.
    let sessions: Vec<String> = (0..4)
        .map(|n| {
            let (status, session, _, body) =
                initialize(&http, &url, "edge-secret", &format!("s{n}"));
            assert_eq!(status, StatusCode::OK, "session {n}: {body}");
            session.unwrap()
        })
        .collect();
    // Full, and nothing idle for long: 503.
    let full = initialize(&http, &url, "edge-secret", "s4");
    assert_refused(
        &full,
        StatusCode::SERVICE_UNAVAILABLE,
        "s4",
        "keeps 4 sessions",
    );
    // One session stays in use; the others are idle past the 1 s allowed under pressure.
    for _ in 0..3 {
        std::thread::sleep(Duration::from_millis(500));
        assert_eq!(
            ping(&http, &url, "edge-secret", &sessions[0]),
            StatusCode::OK
        );
    }
    let (status, made, _, body) = initialize(&http, &url, "edge-secret", "s5");
    assert_eq!(
        status,
        StatusCode::OK,
        "idle sessions did not make room: {body}"
    );
    assert!(made.is_some());
    // The idle ones were closed; the one in use goes on.
    assert_eq!(
        ping(&http, &url, "edge-secret", &sessions[0]),
        StatusCode::OK
    );
    for idle in &sessions[1..] {
        assert_eq!(
            ping(&http, &url, "edge-secret", idle),
            StatusCode::NOT_FOUND
        );
    }
}

#[test]
fn minting_is_limited_per_workspace() {
    let db = TestDb::new();
    let pool = db.connect();
    let tokens = Tokens::new(&pool);
    let (_alpha, full) = workspace(&tokens, "alpha");
    let (_beta, beta_full) = workspace(&tokens, "beta");
    let server = Server::start_with(
        &db,
        "127.0.0.1:0",
        &["--rate-limit", "1000"],
        &[("JILITY_MAX_LIVE_TOKENS", "3")],
    );
    let http = client();
    let mint = |token: &str, name: &str| {
        call(
            &http,
            &server,
            Method::POST,
            "/tokens",
            Some(token),
            Some(&json!({"name": name, "scopes": ["tickets:read"]}).to_string()),
        )
    };
    // The bootstrap token is live: two more make three.
    let first = mint(&full, "one");
    assert_eq!(first.status, StatusCode::CREATED, "{}", first.body);
    assert_eq!(mint(&full, "two").status, StatusCode::CREATED);
    let refused = mint(&full, "three");
    assert_eq!(refused.status, StatusCode::CONFLICT, "{}", refused.body);
    assert_eq!(refused.code(), "too_many_tokens");
    assert_eq!(refused.error()["retryable"], false);
    assert!(
        refused.message().contains("at most 3"),
        "{}",
        refused.message()
    );
    assert!(
        refused.error()["hint"].as_str().unwrap().contains("Revoke"),
        "{}",
        refused.body
    );
    // Another workspace has its own count.
    assert_eq!(mint(&beta_full, "beta-one").status, StatusCode::CREATED);
    // A revoked token no longer counts.
    let id = first.body["id"].as_i64().unwrap();
    let revoked = call(
        &http,
        &server,
        Method::DELETE,
        &format!("/tokens/{id}"),
        Some(&full),
        None,
    );
    assert!(revoked.status.is_success(), "{}", revoked.body);
    assert_eq!(mint(&full, "three").status, StatusCode::CREATED);
}

/// The time now on this machine (the database's clock is the same one), in seconds.
fn now_secs() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

#[test]
fn no_burst_passes_the_limit_across_a_minute_boundary() {
    const LIMIT: usize = 10;
    let db = TestDb::new();
    let pool = db.connect();
    let (_alpha, full) = workspace(&Tokens::new(&pool), "alpha");
    let server = Server::start(&db, &["--rate-limit", &LIMIT.to_string()]);
    let http = client();
    // Start 3 s before a minute ends (the calendar window a fixed-window count resets at),
    // and go on until 4 s after it.
    let wait = (60.0 - now_secs() % 60.0 - 3.0).rem_euclid(60.0);
    std::thread::sleep(Duration::from_secs_f64(wait));
    let start = Instant::now();
    let mut allowed: Vec<f64> = Vec::new();
    let mut refused = 0;
    while start.elapsed() < Duration::from_secs(7) {
        let answer = call(&http, &server, Method::GET, "/tickets", Some(&full), None);
        match answer.status {
            StatusCode::OK => allowed.push(now_secs()),
            StatusCode::TOO_MANY_REQUESTS => {
                refused += 1;
                let retry: u64 = answer.header("retry-after").unwrap().parse().unwrap();
                assert!((1..=65).contains(&retry), "Retry-After {retry}");
                assert_eq!(answer.header("x-ratelimit-remaining"), Some("0"));
                assert_eq!(answer.header("x-ratelimit-limit"), Some("10"));
                assert!(answer.header("x-ratelimit-reset").is_some());
                assert_eq!(answer.code(), "rate_limit");
            }
            other => panic!("{other}: {}", answer.body),
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    // The most allowed in any 60 s span.
    let most = allowed
        .iter()
        .map(|&from| {
            allowed
                .iter()
                .filter(|&&t| t >= from && t < from + 60.0)
                .count()
        })
        .max()
        .unwrap_or(0);
    eprintln!(
        "FIGURES burst: limit {LIMIT}/min, {} requests over 7 s across a minute boundary: \
         {} allowed, {refused} refused (429); most allowed in any 60 s: {most}",
        allowed.len() + refused,
        allowed.len()
    );
    assert!(
        most <= LIMIT,
        "{most} requests passed within 60 s, past the limit of {LIMIT}"
    );
    assert_eq!(most, LIMIT, "the limit is reached, not undercut");
}

#[test]
fn a_second_token_does_not_add_to_a_workspace_ceiling() {
    let db = TestDb::new();
    let pool = db.connect();
    let tokens = Tokens::new(&pool);
    let (alpha, first) = workspace(&tokens, "alpha");
    let second = token(&tokens, &alpha, "second", "tickets:read");
    let second = second.token.expose().to_string();
    let (_beta, other) = workspace(&tokens, "beta");
    let server = Server::start_with(
        &db,
        "127.0.0.1:0",
        &["--rate-limit", "5"],
        &[("JILITY_WORKSPACE_RATE_LIMIT", "7")],
    );
    let http = client();
    let get = |token: &str| call(&http, &server, Method::GET, "/tickets", Some(token), None);
    for _ in 0..5 {
        assert_eq!(get(&first).status, StatusCode::OK);
    }
    let over = get(&first);
    assert_eq!(over.status, StatusCode::TOO_MANY_REQUESTS);
    assert!(over.message().contains("this token"), "{}", over.message());
    // The second token has the 2 the workspace has left, not 5.
    for _ in 0..2 {
        let answer = get(&second);
        assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
    }
    let ceiling = get(&second);
    assert_eq!(
        ceiling.status,
        StatusCode::TOO_MANY_REQUESTS,
        "{}",
        ceiling.body
    );
    assert!(
        ceiling.message().contains("workspace"),
        "{}",
        ceiling.message()
    );
    assert_eq!(ceiling.header("x-ratelimit-limit"), Some("7"));
    assert_eq!(ceiling.header("x-ratelimit-remaining"), Some("0"));
    assert!(ceiling.header("retry-after").is_some());
    assert_eq!(ceiling.error()["retryable"], true);
    // Another workspace is not held back.
    assert_eq!(get(&other).status, StatusCode::OK);
}
