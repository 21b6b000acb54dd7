//! One envelope everywhere (issue 23, findings 6 and 7), through the built binaries: every
//! refusal of `jility serve` and of the `--http` edge (`jility --mcp-server --http`, the kit
//! every server shares) is JSON with `{"error": {"code", "message", "hint", "retryable"}}`:
//! a path that cannot be decoded, a wrong method, an unknown route, a bad body; `/audit`
//! reads `limit` as the other listings; a missing token is `unauthenticated` on both; a
//! foreign `Origin` on a REST path is the REST envelope (on `/mcp` the JSON-RPC body); more
//! than one `Host` is refused; OAuth's discovery paths and `/register` answer `404` saying the
//! server takes bearer tokens, without a token.
//!
//! Requests go over a raw socket where a client library would tidy them (two `Host`
//! headers, bytes that are not UTF-8 in the path).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stderr
)] // assertions in tests; the servers' logs are passed on to stderr

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use jility_cloud::auth::Tokens;
use serde_json::Value;

use crate::cloud;
use crate::pg;

use cloud::{Server, workspace};
use pg::TestDb;

/// An answer read off the socket.
#[derive(Debug)]
struct Raw {
    status: u16,
    headers: Vec<(String, String)>,
    text: String,
}

impl Raw {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.text).unwrap_or_else(|e| {
            panic!(
                "the answer ({}) is not JSON ({e}): {}",
                self.status, self.text
            )
        })
    }

    /// The REST error envelope, checked: status, content type and all four members.
    fn envelope(&self, status: u16, code: &str, what: &str) -> Value {
        assert_eq!(self.status, status, "{what}: {self:?}");
        let error = self.any_envelope(what);
        assert_eq!(error["code"], code, "{what}: {error}");
        error
    }

    /// The REST error envelope whatever its status and code (an error status).
    fn any_envelope(&self, what: &str) -> Value {
        assert!(
            (400..600).contains(&self.status),
            "{what}: not an error: {self:?}"
        );
        let content_type = self.header("content-type").unwrap_or_default();
        assert!(
            content_type.starts_with("application/json"),
            "{what}: content type {content_type:?}: {self:?}"
        );
        let body = self.json();
        let error = &body["error"];
        assert!(error.is_object(), "{what}: not an envelope: {body}");
        assert!(error["code"].is_string(), "{what}: code: {body}");
        assert!(
            error["message"].as_str().is_some_and(|m| !m.is_empty()),
            "{what}: message: {body}"
        );
        assert!(
            error["hint"].as_str().is_some_and(|h| !h.is_empty()),
            "{what}: hint: {body}"
        );
        assert!(error["retryable"].is_boolean(), "{what}: retryable: {body}");
        error.clone()
    }
}

/// Send `head` (the request line and headers, without the blank line; `Connection: close` is
/// added) and `body` to `addr` (`HOST:PORT`), and read the whole answer.
fn raw(addr: &str, head: &str, body: &[u8]) -> Raw {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut request = format!("{head}\r\nConnection: close\r\n\r\n").into_bytes();
    request.extend_from_slice(body);
    // A server that refuses a large body may close before it is all sent: what it answered
    // counts.
    let _ = stream.write_all(&request);
    let mut bytes = Vec::new();
    let _ = stream.read_to_end(&mut bytes);
    let split = bytes
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("no answer head: {:?}", String::from_utf8_lossy(&bytes)));
    let head = String::from_utf8_lossy(&bytes[..split]).to_string();
    let mut payload = bytes[split + 4..].to_vec();
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status line: {head}"));
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    if headers
        .iter()
        .any(|(n, v)| n == "transfer-encoding" && v.contains("chunked"))
    {
        payload = unchunk(&payload);
    }
    Raw {
        status,
        headers,
        text: String::from_utf8_lossy(&payload).to_string(),
    }
}

fn unchunk(mut data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let Some(end) = data.windows(2).position(|w| w == b"\r\n") else {
            return out;
        };
        let size = usize::from_str_radix(
            String::from_utf8_lossy(&data[..end])
                .split(';')
                .next()
                .unwrap_or("0")
                .trim(),
            16,
        )
        .unwrap_or(0);
        if size == 0 || data.len() < end + 2 + size {
            return out;
        }
        out.extend_from_slice(&data[end + 2..end + 2 + size]);
        data = &data[(end + 4 + size).min(data.len())..];
    }
}

/// `GET path` with `token` (if any) and a Host naming `addr`.
fn get(addr: &str, path: &str, token: Option<&str>) -> Raw {
    let auth = token.map_or_else(String::new, |t| format!("\r\nAuthorization: Bearer {t}"));
    raw(
        addr,
        &format!("GET {path} HTTP/1.1\r\nHost: {addr}{auth}"),
        b"",
    )
}

/// `HOST:PORT` of a server's URL.
fn addr_of(url: &str) -> String {
    let rest = url
        .strip_prefix("http://")
        .unwrap_or_else(|| panic!("not http: {url}"));
    rest.split('/').next().unwrap().to_string()
}

/// `jility serve` on a database of its own, with a workspace and its full_access token.
fn cloud_server() -> (TestDb, Server, String, String) {
    let db = TestDb::new();
    let pool = db.connect();
    let tokens = Tokens::new(&pool);
    let (_workspace, token) = workspace(&tokens, "envelope");
    let server = Server::start(&db, &[]);
    let addr = addr_of(&server.url);
    (db, server, addr, token)
}

/// `jility --mcp-server --http 127.0.0.1:0` in a project of its own with `MCP_HTTP_TOKEN`
/// set: the `--http` edge all four servers share. Killed when dropped.
struct Edge {
    child: Child,
    addr: String,
    _dir: tempfile::TempDir,
}

const EDGE_TOKEN: &str = "edge-secret-token-1234";

impl Edge {
    fn start() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let mut command = Command::new(env!("CARGO_BIN_EXE_jility"));
        command
            .args(["--mcp-server", "--http", "127.0.0.1:0"])
            .current_dir(dir.path())
            .env_clear()
            .env("HOME", dir.path())
            .env("MCP_HTTP_TOKEN", EDGE_TOKEN)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        if let Ok(path) = std::env::var("PATH") {
            command.env("PATH", path);
        }
        let mut child = command.spawn().unwrap();
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = mpsc::channel();
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
                panic!("the --http server did not announce its address");
            }
        };
        Self {
            child,
            addr: addr_of(&url),
            _dir: dir,
        }
    }
}

impl Drop for Edge {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;

/// `POST /mcp` with an `initialize`, `extra` header lines (each `Name: value`).
fn initialize(addr: &str, extra: &[String]) -> Raw {
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}",
        INITIALIZE.len()
    );
    for line in extra {
        head.push_str("\r\n");
        head.push_str(line);
    }
    raw(addr, &head, INITIALIZE.as_bytes())
}

#[test]
fn a_path_that_cannot_be_decoded_is_the_envelope() {
    let (_db, _server, addr, token) = cloud_server();
    for (method, path) in [
        ("GET", "/api/v1/tickets/%FF"),
        ("GET", "/api/v1/tickets/%C3%28/history"),
        ("POST", "/api/v1/tickets/%ED%A0%80/comments"),
        ("DELETE", "/api/v1/tokens/%FF"),
        ("DELETE", "/api/v1/tickets/TASK-1/dependencies/%80"),
    ] {
        let answer = raw(
            &addr,
            &format!(
                "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nContent-Length: 2"
            ),
            b"{}",
        );
        let error = answer.envelope(400, "invalid_input", path);
        assert_eq!(error["retryable"], false, "{error}");
        assert!(
            error["message"].as_str().unwrap().contains("path"),
            "{path}: {error}"
        );
    }
}

#[test]
fn audit_reads_limit_as_the_other_listings_do() {
    let (_db, _server, addr, token) = cloud_server();
    for limit in ["abc", "-1", "-300", "0", "201", "500", "", "1.5", "2"] {
        let tickets = get(
            &addr,
            &format!("/api/v1/tickets?limit={limit}"),
            Some(&token),
        );
        let audit = get(&addr, &format!("/api/v1/audit?limit={limit}"), Some(&token));
        assert_eq!(
            audit.status, tickets.status,
            "limit={limit}: {audit:?} / {tickets:?}"
        );
        if tickets.status == 200 {
            continue;
        }
        let (a, t) = (audit.any_envelope("audit"), tickets.any_envelope("tickets"));
        assert_eq!(a["code"], t["code"], "limit={limit}: {a} / {t}");
        // The same words, but the maximum (both 200) and the listing's name.
        assert_eq!(a["message"], t["message"], "limit={limit}: {a} / {t}");
        assert_eq!(a["retryable"], false);
    }
}

#[test]
fn a_missing_or_wrong_token_is_unauthenticated_on_every_server() {
    let (_db, _server, addr, _token) = cloud_server();
    let edge = Edge::start();
    let cases: Vec<(&str, Raw)> = vec![
        (
            "serve: REST without a token",
            get(&addr, "/api/v1/tickets", None),
        ),
        (
            "serve: REST with a wrong token",
            get(&addr, "/api/v1/tickets", Some("jil_live_not-a-token")),
        ),
        ("serve: /mcp without a token", initialize(&addr, &[])),
        ("edge: /mcp without a token", initialize(&edge.addr, &[])),
        (
            "edge: /mcp with a wrong token",
            initialize(&edge.addr, &["Authorization: Bearer wrong".to_string()]),
        ),
        (
            "edge: another path without a token",
            get(&edge.addr, "/other", None),
        ),
    ];
    for (what, answer) in &cases {
        let error = answer.envelope(401, "unauthenticated", what);
        assert_eq!(error["retryable"], false, "{what}");
        let challenge = answer.header("www-authenticate").unwrap_or_default();
        assert!(challenge.starts_with("Bearer"), "{what}: {challenge:?}");
        assert!(!answer.text.contains(EDGE_TOKEN), "{what}");
    }
    // The right token passes the edge; another path behind it is `not_found`, as JSON.
    let right = initialize(&edge.addr, &[format!("Authorization: Bearer {EDGE_TOKEN}")]);
    assert_eq!(right.status, 200, "{right:?}");
    get(&edge.addr, "/other", Some(EDGE_TOKEN)).envelope(404, "not_found", "edge: /other");
}

#[test]
fn a_foreign_origin_on_a_rest_path_is_the_rest_envelope() {
    let (_db, _server, addr, token) = cloud_server();
    let with_origin = |path: &str, origin: &str| {
        raw(
            &addr,
            &format!(
                "GET {path} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\nOrigin: {origin}"
            ),
            b"",
        )
    };
    for path in ["/api/v1/tickets", "/api/v1/audit", "/api/v1/nothing"] {
        for origin in ["http://evil.example", "null", "http://127.0.0.1:1"] {
            let answer = with_origin(path, origin);
            let error = answer.envelope(403, "permission_denied", &format!("{path} {origin}"));
            assert!(
                error["message"].as_str().unwrap().contains("origin"),
                "{error}"
            );
        }
    }
    // The server's own origin passes.
    let own = with_origin("/api/v1/tickets", &format!("http://{addr}"));
    assert_eq!(own.status, 200, "{own:?}");
    // On /mcp the transport's refusal stays a JSON-RPC error.
    let mcp = initialize(
        &addr,
        &[
            format!("Authorization: Bearer {token}"),
            "Origin: http://evil.example".to_string(),
        ],
    );
    assert_eq!(mcp.status, 403, "{mcp:?}");
    let body = mcp.json();
    assert_eq!(body["jsonrpc"], "2.0", "{body}");
    assert!(body["error"]["code"].is_i64(), "{body}");
}

#[test]
fn more_than_one_host_is_refused() {
    let (_db, _server, addr, token) = cloud_server();
    let edge = Edge::start();
    for (server, path, bearer) in [
        (&addr, "/api/v1/tickets", token.as_str()),
        (&addr, "/mcp", token.as_str()),
        (&edge.addr, "/mcp", EDGE_TOKEN),
    ] {
        for hosts in [
            format!("Host: {server}\r\nHost: evil.example"),
            format!("Host: evil.example\r\nHost: {server}"),
            format!("Host: {server}\r\nHost: {server}"),
        ] {
            let answer = raw(
                server,
                &format!(
                    "POST {path} HTTP/1.1\r\n{hosts}\r\nAuthorization: Bearer {bearer}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}",
                    INITIALIZE.len()
                ),
                INITIALIZE.as_bytes(),
            );
            let what = format!("{server}{path} {hosts:?}");
            let error = answer.envelope(400, "invalid_request", &what);
            assert!(
                error["message"].as_str().unwrap().contains("Host"),
                "{error}"
            );
        }
    }
    // One Host is fine.
    assert_eq!(get(&addr, "/api/v1/tickets", Some(&token)).status, 200);
}

#[test]
fn oauth_discovery_paths_say_the_server_takes_bearer_tokens() {
    // `jility --mcp-server --http` takes a static bearer token; `jility serve` does OAuth
    // (tests/oauth.rs), and answers these paths it does not serve as any unknown path.
    let (_db, _server, addr, _token) = cloud_server();
    let edge = Edge::start();
    for server in [&edge.addr] {
        for (method, path) in [
            ("GET", "/.well-known/oauth-protected-resource"),
            ("GET", "/.well-known/oauth-protected-resource/mcp"),
            ("GET", "/.well-known/oauth-protected-resource/api/v1"),
            ("GET", "/.well-known/oauth-authorization-server"),
            ("GET", "/.well-known/oauth-authorization-server/mcp"),
            ("GET", "/.well-known/openid-configuration"),
            ("GET", "/.well-known/openid-configuration/mcp"),
            ("GET", "/mcp/.well-known/openid-configuration"),
            ("POST", "/register"),
            ("GET", "/register"),
            ("GET", "/authorize"),
            ("POST", "/token"),
        ] {
            let answer = raw(
                server,
                &format!(
                    "{method} {path} HTTP/1.1\r\nHost: {server}\r\nContent-Type: application/json\r\nContent-Length: 2"
                ),
                b"{}",
            );
            let what = format!("{method} {server}{path}");
            let error = answer.envelope(404, "not_found", &what);
            let message = error["message"].as_str().unwrap();
            assert!(
                message.contains("OAuth") && message.contains("bearer token"),
                "{what}: {error}"
            );
            assert!(
                error["hint"].as_str().unwrap().contains("Bearer"),
                "{what}: {error}"
            );
            assert!(answer.header("www-authenticate").is_none(), "{what}");
        }
    }
    for (method, path) in [
        ("GET", "/.well-known/oauth-protected-resource/api/v1"),
        ("GET", "/mcp/.well-known/openid-configuration"),
        ("POST", "/register"),
        ("GET", "/authorize"),
        ("POST", "/token"),
    ] {
        let answer = raw(
            &addr,
            &format!(
                "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: 2"
            ),
            b"{}",
        );
        assert!(
            matches!(answer.status, 401 | 404 | 405),
            "{method} {path}: {answer:?}"
        );
    }
}

/// A hostile request: method, path, extra header lines, body.
struct Hostile {
    method: &'static str,
    path: String,
    headers: Vec<String>,
    body: Vec<u8>,
}

fn hostile(method: &'static str, path: &str, headers: &[&str], body: &[u8]) -> Hostile {
    Hostile {
        method,
        path: path.to_string(),
        headers: headers.iter().map(|h| h.to_string()).collect(),
        body: body.to_vec(),
    }
}

#[test]
fn every_hostile_request_is_answered_with_the_envelope() {
    let (_db, _server, addr, token) = cloud_server();
    let json = "Content-Type: application/json";
    let mut cases = vec![
        // Bad percent-encoding, in every kind of path.
        hostile("GET", "/api/v1/tickets/%FF", &[], b""),
        hostile("GET", "/api/v1/tickets/%C0%AF", &[], b""),
        hostile("GET", "/api/v1/tickets/%ED%A0%80/graph", &[], b""),
        hostile("POST", "/api/v1/tickets/%FE/claim", &[json], b"{}"),
        hostile("POST", "/api/v1/templates/%FF/tickets", &[json], b"{}"),
        hostile("DELETE", "/api/v1/tokens/%F0%28%8C%28", &[], b""),
        hostile("GET", "/api/v1/tickets/%zz", &[], b""),
        hostile("GET", "/api/v1/%FF", &[], b""),
        // Bad query types.
        hostile("GET", "/api/v1/tickets?limit=abc", &[], b""),
        hostile("GET", "/api/v1/tickets?limit=1e3", &[], b""),
        hostile(
            "GET",
            "/api/v1/tickets?limit=99999999999999999999999",
            &[],
            b"",
        ),
        hostile("GET", "/api/v1/tickets?unassigned=maybe", &[], b""),
        hostile("GET", "/api/v1/tickets?cursor=%FF%FE", &[], b""),
        hostile("GET", "/api/v1/tickets?bogus=1", &[], b""),
        hostile("GET", "/api/v1/audit?limit=-5", &[], b""),
        hostile("GET", "/api/v1/audit?cursor=forged", &[], b""),
        // Wrong methods.
        hostile("PATCH", "/api/v1/tickets", &[], b""),
        hostile("PUT", "/api/v1/tickets/TASK-1", &[], b""),
        hostile("DELETE", "/api/v1/audit", &[], b""),
        hostile("POST", "/api/v1/events", &[json], b"{}"),
        hostile("POST", "/api/v1/openapi.json", &[json], b"{}"),
        hostile("PUT", "/api/v1/tokens", &[json], b"{}"),
        // Unknown routes (`/` and other paths outside `/api/` and `/mcp` are the web board's
        // pages for people: tests/web_cloud.rs).
        hostile("GET", "/api", &[], b""),
        hostile("GET", "/api/nothing", &[], b""),
        hostile("GET", "/api/v2/tickets", &[], b""),
        hostile("GET", "/api/v1/tickets/TASK-1/nothing", &[], b""),
        hostile("GET", "/api/v1/../../etc/passwd", &[], b""),
        // Bad JSON and bodies of the wrong shape.
        hostile("POST", "/api/v1/tickets", &[json], b"{"),
        hostile("POST", "/api/v1/tickets", &[json], b"[]"),
        hostile("POST", "/api/v1/tickets", &[json], b"null"),
        hostile("POST", "/api/v1/tickets", &[json], b"\"title\""),
        hostile("POST", "/api/v1/tickets", &[json], b"{\"title\": 7}"),
        hostile("POST", "/api/v1/tickets", &[json], b"\xff\xfe{}"),
        hostile(
            "POST",
            "/api/v1/tickets/batch",
            &[json],
            b"{\"tickets\": {}}",
        ),
        hostile("POST", "/api/v1/tokens", &[json], b"{\"name\": 1}"),
        hostile("DELETE", "/api/v1/tokens", &[json], b"{"),
        // Wrong content types, or none.
        hostile(
            "POST",
            "/api/v1/tickets",
            &["Content-Type: text/plain"],
            b"title=x",
        ),
        hostile("POST", "/api/v1/tickets", &[], b"<ticket/>"),
        hostile(
            "POST",
            "/api/v1/tokens",
            &["Content-Type: application/xml"],
            b"<t/>",
        ),
    ];
    // Oversized: a body past the 4 MiB limit.
    let mut big = b"{\"title\": \"".to_vec();
    big.resize(5 * 1024 * 1024, b'a');
    big.extend_from_slice(b"\"}");
    cases.push(hostile("POST", "/api/v1/tickets", &[json], &big));
    let mut seen = std::collections::BTreeMap::<String, usize>::new();
    for with_token in [true, false] {
        for case in &cases {
            let mut head = format!("{} {} HTTP/1.1\r\nHost: {addr}", case.method, case.path);
            if with_token {
                head.push_str(&format!("\r\nAuthorization: Bearer {token}"));
            }
            for line in &case.headers {
                head.push_str(&format!("\r\n{line}"));
            }
            head.push_str(&format!("\r\nContent-Length: {}", case.body.len()));
            let answer = raw(&addr, &head, &case.body);
            let what = format!(
                "{} {} (token: {with_token}, {} body bytes)",
                case.method,
                case.path,
                case.body.len()
            );
            let error = answer.any_envelope(&what);
            assert!(answer.status < 500, "{what}: {answer:?}");
            if !with_token {
                assert_eq!(error["code"], "unauthenticated", "{what}: {error}");
            }
            *seen
                .entry(format!(
                    "{} {}",
                    answer.status,
                    error["code"].as_str().unwrap()
                ))
                .or_default() += 1;
        }
    }
    eprintln!("answers of the sweep: {seen:?}");
    // Each kind was met: the sweep is not answered by one refusal alone.
    for kind in [
        "400 invalid_input",
        "404 not_found",
        "405 method_not_allowed",
        "401 unauthenticated",
    ] {
        assert!(seen.contains_key(kind), "no {kind} in {seen:?}");
    }
}
