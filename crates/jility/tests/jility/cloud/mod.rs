//! `jility serve` for the cloud tests: the process on a test database, and requests to its
//! API and the CLI against it.
#![allow(dead_code, clippy::unwrap_used, clippy::panic, clippy::print_stderr)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use jility_cloud::auth::{MintedToken, NewToken, ScopeSet, Tokens};
use jility_cloud::store::Workspace;
use reqwest::blocking::Client;
use reqwest::header::HeaderMap;
use reqwest::{Method, StatusCode};
use serde_json::Value;

use crate::pg::TestDb;

/// A `jility serve` process, killed when dropped.
pub struct Server {
    child: Child,
    /// `http://127.0.0.1:PORT/api/v1`.
    pub url: String,
    log: Arc<Mutex<Vec<String>>>,
}

impl Server {
    pub fn start(db: &TestDb, extra: &[&str]) -> Self {
        Self::start_at(db, "127.0.0.1:0", extra)
    }

    /// A server listening on `listen` (e.g. the port of one that stopped).
    pub fn start_at(db: &TestDb, listen: &str, extra: &[&str]) -> Self {
        Self::start_with(db, listen, extra, &[])
    }

    /// A server listening on `listen`, with `env` added to its environment.
    pub fn start_with(db: &TestDb, listen: &str, extra: &[&str], env: &[(&str, &str)]) -> Self {
        Self::start_on(&db.url, listen, extra, env)
    }

    /// A server on the database at `url`.
    pub fn start_on(url: &str, listen: &str, extra: &[&str], env: &[(&str, &str)]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_jility"))
            .args(["serve", "--listen", listen, "--database-url", url])
            .args(extra)
            .envs(env.iter().copied())
            // `serve` runs whatever the mode says.
            .env("JILITY_MODE", "cloud")
            .env_remove("DATABASE_URL")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let log = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = mpsc::channel();
        let lines = log.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if let Some(url) = line.strip_prefix("jility: serving the API at ") {
                    // "URL/api/v1 and MCP at URL/mcp"
                    let _ = tx.send(
                        url.split_whitespace()
                            .next()
                            .unwrap_or_default()
                            .to_string(),
                    );
                }
                eprintln!("server: {line}");
                lines.lock().unwrap().push(line);
            }
        });
        let url = match rx.recv_timeout(Duration::from_secs(60)) {
            Ok(url) => url,
            Err(_) => {
                let _ = child.kill();
                panic!(
                    "the server did not announce its address: {:?}",
                    log.lock().unwrap()
                );
            }
        };
        // Owned first, so that a failed check below still stops the process (Drop).
        let server = Self { child, url, log };
        assert!(
            (server.url.starts_with("http://127.0.0.1:")
                || server.url.starts_with("https://127.0.0.1:"))
                && server.url.ends_with("/api/v1"),
            "{}",
            server.url
        );
        assert!(
            !server.url.contains(":0/"),
            "the real port is announced: {}",
            server.url
        );
        server
    }

    /// `http://127.0.0.1:PORT`, as JILITY_API_URL takes it.
    pub fn root(&self) -> &str {
        self.url.strip_suffix("/api/v1").unwrap()
    }

    /// The process's id (to signal it, or read its memory from /proc).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn log(&self) -> String {
        self.log.lock().unwrap().join("\n")
    }

    /// Send SIGTERM and wait for the process: its exit status and its log.
    pub fn terminate(mut self) -> (std::process::ExitStatus, String) {
        let sent = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
        let status = self.child.wait().unwrap();
        // The log thread ends with the process's stderr.
        std::thread::sleep(Duration::from_millis(200));
        (status, self.log())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub struct Answer {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Value,
}

impl Answer {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The error envelope of a failed answer.
    pub fn error(&self) -> &Value {
        let err = &self.body["error"];
        assert!(err.is_object(), "not an error envelope: {}", self.body);
        for member in ["code", "message", "hint", "retryable"] {
            assert!(!err[member].is_null(), "no {member} in {err}");
        }
        err
    }

    pub fn code(&self) -> &str {
        self.error()["code"].as_str().unwrap()
    }

    pub fn message(&self) -> &str {
        self.error()["message"].as_str().unwrap()
    }
}

pub fn client() -> Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap()
}

/// One request with `token` as bearer (raw `Authorization` value when it has a space).
pub fn call(
    client: &Client,
    server: &Server,
    method: Method,
    path: &str,
    token: Option<&str>,
    body: Option<&str>,
) -> Answer {
    let mut request = client.request(method, format!("{}{path}", server.url));
    if let Some(token) = token {
        let value = if token.contains(' ') {
            token.to_string()
        } else {
            format!("Bearer {token}")
        };
        request = request.header("authorization", value);
    }
    if let Some(body) = body {
        request = request
            .header("content-type", "application/json")
            .body(body.to_string());
    }
    let response = request.send().unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let text = response.text().unwrap();
    let body = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("the answer ({status}) is not JSON ({e}): {text}"));
    Answer {
        status,
        headers,
        body,
    }
}

pub fn workspace(tokens: &Tokens, name: &str) -> (Workspace, String) {
    let (workspace, minted) = tokens
        .create_workspace(name, "bootstrap", "tester")
        .unwrap();
    (workspace, minted.token.expose().to_string())
}

pub fn token(tokens: &Tokens, workspace: &Workspace, name: &str, scopes: &str) -> MintedToken {
    tokens
        .create(
            workspace.id,
            &NewToken {
                name: name.to_string(),
                scopes: ScopeSet::parse(scopes).unwrap(),
                expires_at: None,
                created_by: "tester".to_string(),
            },
        )
        .unwrap()
}

pub fn urlencode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// One request with `token` as bearer and `body` as JSON.
pub fn call_json(
    http: &Client,
    server: &Server,
    method: Method,
    path: &str,
    token: &str,
    body: Option<Value>,
) -> Answer {
    let authorization = format!("Bearer {token}");
    let body = body.map(|b| b.to_string());
    call(
        http,
        server,
        method,
        path,
        Some(&authorization),
        body.as_deref(),
    )
}

/// `jility …` with the API's URL and `token` (none: `JILITY_API_TOKEN` unset), HOME and
/// XDG_CONFIG_HOME in `home`.
pub fn jility(args: &[&str], api: &str, token: Option<&str>, home: &std::path::Path) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_jility"));
    command
        .args(args)
        .env("JILITY_API_URL", api)
        .env("JILITY_MODE", "cloud")
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env_remove("JILITY_API_TOKEN")
        .stdin(Stdio::null());
    if let Some(token) = token {
        command.env("JILITY_API_TOKEN", token);
    }
    command.output().unwrap()
}

pub fn stdout_json(output: &Output) -> Value {
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "failed: {text}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

/// `jility admin create-workspace NAME --json` on the database at `url` (another process,
/// which holds no connection once it has exited), with `extra` arguments: its first token.
pub fn admin_workspace(url: &str, name: &str, extra: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_jility"))
        .args([
            "admin",
            "create-workspace",
            name,
            "--json",
            "--database-url",
            url,
        ])
        .args(extra)
        .env("JILITY_MODE", "cloud")
        .env_remove("DATABASE_URL")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let made: Value = serde_json::from_slice(&out.stdout).unwrap();
    made["token"].as_str().unwrap().to_string()
}

/// One `tools/call` of `name` with `arguments` (and `meta` as its `_meta`) in the MCP
/// session `session` at `root`/mcp: the HTTP status.
pub fn call_tool_in_session(
    http: &Client,
    root: &str,
    token: &str,
    session: &str,
    name: &str,
    arguments: Value,
    meta: Option<Value>,
) -> StatusCode {
    let mut params = serde_json::json!({ "name": name, "arguments": arguments });
    if let Some(meta) = meta {
        params["_meta"] = meta;
    }
    let response = http
        .post(format!("{root}/mcp"))
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-protocol-version", "2025-06-18")
        .header("mcp-session-id", session)
        .bearer_auth(token)
        .body(serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}).to_string())
        .send()
        .unwrap();
    let status = response.status();
    let _ = response.text();
    status
}
