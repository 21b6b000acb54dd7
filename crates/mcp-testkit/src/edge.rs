//! The protocol-edge rules every server holds over stdio, checked frame by frame against a
//! built binary: hostile lines before and after `initialize`, each request whose id can be
//! read answered exactly once with that id, nothing fatal, a second `initialize` refused,
//! nothing huge echoed to stdout or stderr, and a clean exit at the end of input.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test harness

use std::io::{BufRead, Read, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::Duration;

use serde_json::{Value, json};

/// A line, and the id and JSON-RPC code of its answer (`None`: it gets no answer).
type Case = (Vec<u8>, Option<(Value, i64)>);

fn line(text: &str) -> Vec<u8> {
    text.as_bytes().to_vec()
}

/// Lines no request handler should ever see, and how the edge answers them.
fn hostile() -> Vec<Case> {
    let deep = format!(
        r#"{{"jsonrpc":"2.0","method":"tools/call","params":{{"name":"x","arguments":{{"a":{}{}}}}},"id":110}}"#,
        "[".repeat(300),
        "]".repeat(300)
    );
    let mut bad_utf8 = line(r#"{"jsonrpc":"2.0","id":111,"method":"ping","params":{"x":"a"#);
    bad_utf8.extend_from_slice(b"\xff\xfe\"}}");
    vec![
        (line("this is not json"), Some((Value::Null, -32700))),
        (
            line(r#"{"jsonrpc":"2.0","id":107,"method":"tools/call","params":{"name":"\ud800"}}"#),
            Some((json!(107), -32700)),
        ),
        (
            line(r#"{"jsonrpc":"2.0","id":"nan","method":"ping","params":{"x":NaN}}"#),
            Some((json!("nan"), -32700)),
        ),
        (
            line(r#"{"jsonrpc":"2.0","id":109,"method":"ping","params":{"x":1e999}}"#),
            Some((json!(109), -32700)),
        ),
        (line(&deep), Some((json!(110), -32700))),
        (bad_utf8, Some((json!(111), -32700))),
        (
            line(r#"{"jsonrpc":"2.0","id":112,"method":"tools/call","params":"x"}"#),
            Some((json!(112), -32600)),
        ),
        (
            line(r#"{"jsonrpc":"2.0","id":113,"method":"tools/list","params":[1]}"#),
            Some((json!(113), -32600)),
        ),
        // A tools/call rmcp cannot read (not an unknown method: what is wrong with it).
        (
            line(
                r#"{"jsonrpc":"2.0","id":119,"method":"tools/call","params":{"name":"x","arguments":"notanobject"}}"#,
            ),
            Some((json!(119), -32600)),
        ),
        (
            line(r#"{"jsonrpc":"2.0","id":120,"method":"tools/call","params":{"arguments":{}}}"#),
            Some((json!(120), -32600)),
        ),
        (
            line(r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#),
            Some((Value::Null, -32600)),
        ),
        (
            line(r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#),
            Some((Value::Null, -32600)),
        ),
        (
            line(r#"[{"jsonrpc":"2.0","id":114,"method":"ping"}]"#),
            Some((Value::Null, -32600)),
        ),
        (
            line(r#"{"jsonrpc":"1.0","id":115,"method":"ping"}"#),
            Some((json!(115), -32600)),
        ),
        (
            line(r#"{"id":116,"method":"ping"}"#),
            Some((json!(116), -32600)),
        ),
        (
            line(&format!(
                r#"{{"jsonrpc":"2.0","id":117,"method":"{}"}}"#,
                "m".repeat(1_000_000)
            )),
            Some((json!(117), -32601)),
        ),
        (
            line(&format!(
                r#"{{"jsonrpc":"2.0","id":118,"method":"ping","params":{{"pad":"{}"}}}}"#,
                "x".repeat(5 * 1024 * 1024)
            )),
            // Over the limit, answered with the id read from its start.
            Some((json!(118), -32600)),
        ),
        // A notification that does not decode gets no answer.
        (
            line(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":"x"}"#),
            None,
        ),
    ]
}

struct Session {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    lines: Receiver<String>,
    stderr: std::thread::JoinHandle<usize>,
    /// Everything the server wrote to stdout, for the last check.
    seen: Vec<String>,
}

impl Session {
    fn start(mut command: Command) -> Self {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the server starts");
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("stdout");
        let mut stderr = child.stderr.take().expect("stderr");
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        // Drained (a server blocked on a full stderr pipe would look hung), and measured.
        let stderr = std::thread::spawn(move || {
            let mut buffer = [0u8; 65536];
            let mut total = 0;
            while let Ok(n) = stderr.read(&mut buffer) {
                if n == 0 {
                    break;
                }
                total += n;
            }
            total
        });
        Self {
            child,
            stdin,
            lines,
            stderr,
            seen: Vec::new(),
        }
    }

    fn send(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).expect("write a line");
        stdin.write_all(b"\n").expect("write a line");
        stdin.flush().expect("flush");
    }

    fn recv(&mut self, what: &str) -> Value {
        match self.lines.recv_timeout(Duration::from_secs(20)) {
            Ok(line) => {
                let value: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("{what}: stdout carried a non-JSON line ({e})"));
                self.seen.push(line);
                value
            }
            Err(RecvTimeoutError::Timeout) => panic!("{what}: no answer within 20 s"),
            Err(RecvTimeoutError::Disconnected) => {
                panic!("{what}: the server closed stdout (exited?)")
            }
        }
    }

    /// Nothing more arrives for a while.
    fn quiet(&mut self, what: &str) {
        match self.lines.recv_timeout(Duration::from_millis(150)) {
            Err(RecvTimeoutError::Timeout) => {}
            Ok(line) => panic!("{what}: unexpected frame {}", excerpt(&line)),
            Err(RecvTimeoutError::Disconnected) => panic!("{what}: the server exited"),
        }
    }

    /// `ping` with `id` is answered `{}`: the session is alive and unchanged.
    fn alive(&mut self, id: &str, what: &str) {
        self.send(
            json!({"jsonrpc": "2.0", "id": id, "method": "ping"})
                .to_string()
                .as_bytes(),
        );
        let answer = self.recv(what);
        assert_eq!(answer["id"], id, "{what}: {answer}");
        assert_eq!(answer["result"], json!({}), "{what}: {answer}");
    }
}

fn excerpt(text: &str) -> String {
    text.chars().take(300).collect()
}

/// Run the edge checks against the stdio server `command` starts (its program, arguments,
/// working directory and environment set by the caller). Panics on the first rule broken.
pub fn check_stdio_edge(command: Command) {
    let mut session = Session::start(command);

    // Before `initialize`: notifications and stray responses are not fatal, and get no
    // answer; a ping is answered.
    for early in [
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":2,"error":{"code":-1,"message":"stray"}}"#,
    ] {
        session.send(early.as_bytes());
        session.quiet(early);
    }
    session.alive("before-initialize", "a ping before initialize");

    for (bytes, expected) in hostile().into_iter().chain(hostile()) {
        let what = excerpt(&String::from_utf8_lossy(&bytes));
        session.send(&bytes);
        match expected {
            None => session.quiet(&what),
            Some((id, code)) => {
                let answer = session.recv(&what);
                assert_eq!(answer["jsonrpc"], "2.0", "{what}: {answer}");
                assert_eq!(answer["id"], id, "{what}: {answer}");
                assert_eq!(answer["error"]["code"], code, "{what}: {answer}");
                assert!(
                    answer.to_string().len() < 2_000,
                    "{what}: the answer echoes the input ({} bytes)",
                    answer.to_string().len()
                );
                session.quiet(&what);
            }
        }
        session.alive("between", &what);
    }

    // The handshake, then a second `initialize` naming a version nobody speaks: refused,
    // and the session goes on as it was.
    session.send(
        json!({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "edge", "version": "1"}
        }})
        .to_string()
        .as_bytes(),
    );
    let init = session.recv("initialize");
    assert_eq!(init["id"], "init", "{init}");
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18", "{init}");
    session.send(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    session.send(
        json!({"jsonrpc": "2.0", "id": "again", "method": "initialize", "params": {
            "protocolVersion": "1999-01-01", "capabilities": {},
            "clientInfo": {"name": "edge", "version": "1"}
        }})
        .to_string()
        .as_bytes(),
    );
    let again = session.recv("a second initialize");
    assert_eq!(again["id"], "again", "{again}");
    assert_eq!(again["error"]["code"], -32600, "{again}");
    session.alive("after", "a ping after a second initialize");
    session.send(br#"{"jsonrpc":"2.0","id":"tools","method":"tools/list"}"#);
    let tools = session.recv("tools/list");
    assert!(tools["result"]["tools"].is_array(), "{tools}");

    // After `initialize` the same lines get the same answers, and stray messages are
    // ignored.
    for (bytes, expected) in hostile() {
        let what = excerpt(&String::from_utf8_lossy(&bytes));
        session.send(&bytes);
        if let Some((id, code)) = expected {
            let answer = session.recv(&what);
            assert_eq!(answer["id"], id, "{what}: {answer}");
            assert_eq!(answer["error"]["code"], code, "{what}: {answer}");
        }
        session.quiet(&what);
    }
    session.send(br#"{"jsonrpc":"2.0","id":77,"result":{}}"#);
    session.alive("end", "a ping after a stray response");

    // The end of input ends the server cleanly, and it wrote nothing huge anywhere.
    session.stdin = None;
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = session.child.try_wait().expect("wait") {
            break status;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the server did not exit after the end of input"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "exit status {status}");
    let stderr = session.stderr.join().expect("stderr reader");
    assert!(
        stderr < 256 * 1024,
        "stderr holds {stderr} bytes: input was echoed into the log"
    );
}

/// A POST of a JSON-RPC message to a Streamable HTTP endpoint, with the headers a client sends.
fn mcp_post(client: &reqwest::Client, url: &str) -> reqwest::RequestBuilder {
    client
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18")
}

/// One POST to a Streamable HTTP endpoint: its status, and the JSON-RPC message it answered
/// with (from a JSON body, or the first `data:` of an event stream; `Null` when none).
async fn post(
    client: &reqwest::Client,
    url: &str,
    session: Option<&str>,
    body: Vec<u8>,
) -> (u16, Value, Option<String>) {
    let mut request = mcp_post(client, url).body(body);
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    let response = request.send().await.expect("the server answers");
    let status = response.status().as_u16();
    let session = response
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let text = response.text().await.unwrap_or_default();
    let message = serde_json::from_str(&text).unwrap_or_else(|_| {
        text.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .find_map(|d| serde_json::from_str(d.trim()).ok())
            .unwrap_or(Value::Null)
    });
    (status, message, session)
}

/// The edge checks over Streamable HTTP at `url` (`…/mcp`): hostile bodies are answered
/// `400` with the JSON-RPC error and the id where it can be read (`413` past the body
/// limit; `202` for a notification that does not decode), and a second `initialize` in a
/// session is refused while the session goes on.
pub async fn check_http_edge(url: &str) {
    let client = reqwest::Client::new();
    for (body, expected) in hostile() {
        let what = excerpt(&String::from_utf8_lossy(&body));
        let too_big = body.len() > 4 * 1024 * 1024;
        if too_big {
            // Refused once the limit is read: the client may see the 413, or, still
            // sending, the connection closed under it.
            let sent = reqwest::Client::new()
                .post(url)
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .body(body)
                .send()
                .await;
            if let Ok(response) = sent {
                assert_eq!(response.status().as_u16(), 413, "{what}");
                let answer: Value = response.json().await.unwrap_or(Value::Null);
                let id = expected.as_ref().map_or(Value::Null, |(id, _)| id.clone());
                assert_eq!(answer["id"], id, "{what}: {answer}");
                assert_eq!(answer["error"]["code"], -32600, "{what}: {answer}");
            }
            continue;
        }
        let (status, answer, _) = post(&client, url, None, body).await;
        match expected {
            None => assert_eq!(status, 202, "{what}: {answer}"),
            Some((id, code)) => {
                assert!(
                    answer.to_string().len() < 2_000,
                    "{what}: the answer echoes the input: {}",
                    excerpt(&answer.to_string())
                );
                assert_eq!(status, 400, "{what}: {answer}");
                assert_eq!(answer["jsonrpc"], "2.0", "{what}: {answer}");
                assert_eq!(answer["id"], id, "{what}: {answer}");
                assert_eq!(answer["error"]["code"], code, "{what}: {answer}");
            }
        }
    }
    let initialize = |id: &str, version: &str| {
        json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
            "protocolVersion": version, "capabilities": {},
            "clientInfo": {"name": "edge", "version": "1"}
        }})
        .to_string()
        .into_bytes()
    };
    let (status, init, session) = post(&client, url, None, initialize("init", "2025-06-18")).await;
    assert_eq!(status, 200, "{init}");
    assert_eq!(init["id"], "init", "{init}");
    let session = session.expect("a session id");
    let (status, _, _) = post(
        &client,
        url,
        Some(&session),
        br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_vec(),
    )
    .await;
    assert_eq!(status, 202);
    let (status, again, _) = post(
        &client,
        url,
        Some(&session),
        initialize("again", "1999-01-01"),
    )
    .await;
    assert_eq!(status, 400, "{again}");
    assert_eq!(again["id"], "again", "{again}");
    assert_eq!(again["error"]["code"], -32600, "{again}");
    let (status, pong, _) = post(
        &client,
        url,
        Some(&session),
        br#"{"jsonrpc":"2.0","id":"p","method":"ping"}"#.to_vec(),
    )
    .await;
    assert_eq!(status, 200, "{pong}");
    assert_eq!(pong, json!({"jsonrpc": "2.0", "id": "p", "result": {}}));
    // The session answers only to the credentials that opened it (none here): other
    // credentials are told it does not exist, and it goes on for its owner.
    let stranger = mcp_post(&client, url)
        .header("mcp-session-id", &session)
        .header("authorization", "Bearer someone-else")
        .body(r#"{"jsonrpc":"2.0","id":"s","method":"ping"}"#)
        .send()
        .await
        .expect("the server answers");
    assert_eq!(stranger.status().as_u16(), 404);
    let refusal: Value = stranger.json().await.expect("a JSON body");
    assert_eq!(refusal["error"]["code"], -32001, "{refusal}");
    let (status, pong, _) = post(
        &client,
        url,
        Some(&session),
        br#"{"jsonrpc":"2.0","id":"p2","method":"ping"}"#.to_vec(),
    )
    .await;
    assert_eq!((status, &pong["id"]), (200, &json!("p2")), "{pong}");
    // The same credentials, spelt differently, are the same caller; other ones are not.
    let (status, _, other_session) =
        post(&client, url, None, initialize("other", "2025-06-18")).await;
    assert_eq!(status, 200);
    let other_session = other_session.expect("a session id");
    let authorised = |authorization: &'static str, id: &'static str| {
        mcp_post(&client, url)
            .header("authorization", authorization)
            .body(format!(r#"{{"jsonrpc":"2.0","id":"{id}","method":"initialize","params":{{"protocolVersion":"2025-06-18","capabilities":{{}},"clientInfo":{{"name":"edge","version":"1"}}}}}}"#))
    };
    let opened = authorised("Bearer abc", "a").send().await.expect("answers");
    assert_eq!(opened.status().as_u16(), 200);
    let owned = opened.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_string();
    for (authorization, expected) in [
        ("bearer   abc", 200),
        ("BEARER abc", 200),
        ("Bearer abd", 404),
    ] {
        let answer = mcp_post(&client, url)
            .header("mcp-session-id", &owned)
            .header("authorization", authorization)
            .body(r#"{"jsonrpc":"2.0","id":"o","method":"ping"}"#)
            .send()
            .await
            .expect("answers");
        assert_eq!(answer.status().as_u16(), expected, "{authorization}");
    }
    // A second initialize whatever the content type's spelling, and in an unknown session.
    let shouted = client
        .post(url)
        .header("content-type", "Application/JSON")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18")
        .header("mcp-session-id", &other_session)
        .body(initialize("shout", "2025-06-18"))
        .send()
        .await
        .expect("answers");
    assert_eq!(shouted.status().as_u16(), 400);
    let refusal: Value = shouted.json().await.expect("JSON");
    assert_eq!(
        (&refusal["id"], &refusal["error"]["code"]),
        (&json!("shout"), &json!(-32600)),
        "{refusal}"
    );
    let (status, answer, _) = post(
        &client,
        url,
        Some("00000000-0000-4000-8000-00000000dead"),
        initialize("lost", "2025-06-18"),
    )
    .await;
    assert_eq!(status, 404, "{answer}");
    assert_eq!(answer["error"]["code"], -32001, "{answer}");
    let odd = client
        .post(url)
        .header("content-type", "text/plain")
        .header("accept", "application/json, text/event-stream")
        .body(r#"{"jsonrpc":"2.0","id":"odd","method":"ping","params":[]}"#)
        .send()
        .await
        .expect("answers");
    assert_eq!(odd.status().as_u16(), 400, "the edge checks every POST");
    // Requests sent together with one id: each is answered or refused, none left waiting
    // (rmcp answers only the last of them).
    let same = futures::future::join_all((0..10).map(|_| {
        tokio::time::timeout(
            Duration::from_secs(20),
            post(
                &client,
                url,
                Some(&session),
                br#"{"jsonrpc":"2.0","id":"same","method":"tools/list"}"#.to_vec(),
            ),
        )
    }))
    .await;
    for answer in same {
        let (status, answer, _) = answer.expect("a request sharing its id was never answered");
        assert_eq!(answer["id"], "same", "{answer}");
        match status {
            200 => assert!(answer["result"].is_object(), "{answer}"),
            400 => assert_eq!(answer["error"]["code"], -32600, "{answer}"),
            other => panic!("{other}: {answer}"),
        }
    }
    // Transport-level refusals have JSON-RPC bodies too.
    let refusals = [
        (
            "no session",
            client.get(url).header("accept", "text/event-stream"),
        ),
        (
            "unknown session",
            client
                .delete(url)
                .header("mcp-session-id", "00000000-0000-4000-8000-000000000000"),
        ),
        (
            "not acceptable",
            client
                .post(url)
                .header("content-type", "application/json")
                .header("accept", "text/plain")
                .body(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#),
        ),
        (
            "wrong content type",
            client
                .post(url)
                .header("content-type", "text/plain")
                .header("accept", "application/json, text/event-stream")
                .body("ping"),
        ),
    ];
    for (what, request) in refusals {
        let response = request.send().await.expect("the server answers");
        let status = response.status();
        assert!(status.is_client_error(), "{what}: {status}");
        let text = response.text().await.unwrap_or_default();
        let body: Value = serde_json::from_str(&text)
            .unwrap_or_else(|_| panic!("{what}: {status} with a body that is not JSON: {text}"));
        assert_eq!(body["jsonrpc"], "2.0", "{what}: {body}");
        assert_eq!(body["id"], Value::Null, "{what}: {body}");
        assert!(body["error"]["code"].is_i64(), "{what}: {body}");
        assert!(
            body["error"]["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty()),
            "{what}: {body}"
        );
    }
    // In the session, the same hostile bodies get the same answers.
    for (body, expected) in hostile().into_iter().take(8) {
        let what = excerpt(&String::from_utf8_lossy(&body));
        let (status, answer, _) = post(&client, url, Some(&session), body).await;
        if let Some((id, code)) = expected {
            assert_eq!(status, 400, "{what}: {answer}");
            assert_eq!(answer["id"], id, "{what}: {answer}");
            assert_eq!(answer["error"]["code"], code, "{what}: {answer}");
        }
    }
}

/// [`check_stdio_edge`] against `bin ARGS`, started in an empty temporary directory that is
/// also its HOME, with no other environment but PATH.
pub fn check_stdio_binary(bin: &str, args: &[&str]) {
    let home = tempfile::tempdir().expect("tempdir");
    let mut command = Command::new(bin);
    command
        .args(args)
        .current_dir(home.path())
        .env_clear()
        .env("HOME", home.path())
        .env("PATH", std::env::var("PATH").unwrap_or_default());
    check_stdio_edge(command);
}

/// The limits of a Streamable HTTP server at `url` started with `MCP_HTTP_READ_TIMEOUT_SECS=1`
/// and `MCP_HTTP_MAX_SESSIONS=3`. Read deadlines: a connection that sends nothing, one that sends half its
/// headers, and one that sends half its body are all closed (the last after a `408` with the
/// JSON-RPC error), and one that does not read its answers is cut off, so that slow clients
/// cannot hold the server's connections. Sessions: a fourth is refused (`503`) until one
/// ends. `token` is sent as the bearer token where the server needs one.
pub async fn check_http_limits(url: &str, token: Option<&str>) {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    let addr = url
        .trim_start_matches("http://")
        .split('/')
        .next()
        .expect("host:port")
        .to_string();
    let path = format!(
        "/{}",
        url.trim_start_matches("http://")
            .split_once('/')
            .map_or("", |(_, p)| p)
    );
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let authorization =
        token.map_or_else(String::new, |t| format!("authorization: Bearer {t}\r\n"));
    let slow = [
        ("idle", String::new()),
        (
            "half the headers",
            format!("POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Ty"),
        ),
        (
            "half the body",
            format!(
                "POST {path} HTTP/1.1\r\nHost: {addr}\r\n{authorization}content-type: application/json\r\naccept: application/json, text/event-stream\r\ncontent-length: {}\r\n\r\n{}",
                body.len(),
                &body[..10]
            ),
        ),
    ];
    let mut waits = Vec::new();
    for (what, sent) in slow {
        let addr = addr.clone();
        waits.push(tokio::spawn(async move {
            let mut stream = tokio::net::TcpStream::connect(&addr)
                .await
                .expect("connects");
            stream.write_all(sent.as_bytes()).await.expect("writes");
            let mut answer = Vec::new();
            // Far longer than the 1 s deadline: a server without one keeps the connection.
            let read =
                tokio::time::timeout(Duration::from_secs(20), stream.read_to_end(&mut answer))
                    .await;
            assert!(
                read.is_ok(),
                "{what}: the connection is still open after 20 s"
            );
            (what, String::from_utf8_lossy(&answer).to_string())
        }));
    }
    for wait in waits {
        let (what, answer) = wait.await.expect("the check runs");
        if what == "half the body" {
            assert!(answer.starts_with("HTTP/1.1 408"), "{what}: {answer}");
            let json = answer.split("\r\n\r\n").nth(1).unwrap_or_default();
            let json: Value =
                serde_json::from_str(json.trim()).unwrap_or_else(|_| panic!("{what}: {answer}"));
            assert_eq!(json["error"]["code"], -32600, "{what}: {json}");
        }
    }
    // A client that sends two requests whose answers are large (a 3.5 MiB id, echoed) and
    // reads nothing for a while: the server, unable to write, cuts it off after the timeout,
    // so the second answer never arrives whole. (Without the cut, the client reads both in
    // full once it reads.)
    let socket = tokio::net::TcpSocket::new_v4().expect("a socket");
    socket
        .set_recv_buffer_size(8 * 1024)
        .expect("a small receive buffer");
    let mut stream = socket
        .connect(addr.parse().expect("an address"))
        .await
        .expect("connects");
    let id = "x".repeat(3 * 1024 * 1024 + 512 * 1024);
    let body = format!(r#"{{"jsonrpc":"2.0","id":"{id}","method":"ping","params":[]}}"#);
    let request = format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\n{authorization}content-type: application/json\r\naccept: application/json, text/event-stream\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    let sent = tokio::time::timeout(Duration::from_secs(10), async {
        stream.write_all(request.as_bytes()).await?;
        stream.write_all(request.as_bytes()).await
    })
    .await;
    assert!(
        matches!(sent, Ok(Ok(()))),
        "the two requests were not taken: {sent:?}"
    );
    tokio::time::sleep(Duration::from_secs(4)).await;
    let mut answers = Vec::new();
    let read =
        tokio::time::timeout(Duration::from_secs(20), stream.read_to_end(&mut answers)).await;
    assert!(read.is_ok(), "the connection is still open");
    assert!(
        answers.len() < 2 * id.len(),
        "a client that read nothing for 4 s got both answers ({} bytes)",
        answers.len()
    );
    drop(stream);
    // And it goes on serving.
    let initialize = json!({"jsonrpc": "2.0", "id": "after", "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "edge", "version": "1"}
    }});
    let mut request = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(initialize.to_string());
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.expect("the server answers");
    assert_eq!(response.status().as_u16(), 200);
    let text = response.text().await.unwrap_or_default();
    assert!(text.contains(r#""id":"after""#), "{text}");

    // At most 3 sessions (MCP_HTTP_MAX_SESSIONS=3): the one above and two more; the next is
    // refused until one ends.
    let client = reqwest::Client::new();
    let open = |id: &'static str| {
        let mut request = client
            .post(url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(
                json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
                    "protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "edge", "version": "1"}
                }})
                .to_string(),
            );
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        request.send()
    };
    // Initializes sent together do not pass the limit together: the one above and at most
    // two of these.
    let burst = futures::future::join_all((0..8).map(|_| open("burst"))).await;
    let mut burst_sessions = Vec::new();
    for response in burst {
        let response = response.expect("answers");
        match response.status().as_u16() {
            200 => burst_sessions.push(
                response.headers()["mcp-session-id"]
                    .to_str()
                    .unwrap()
                    .to_string(),
            ),
            // The server is full (503), or, when a session that just ended is still
            // counted for its tenant, the tenant's share is (429): refused either way.
            503 | 429 => {}
            other => panic!("a burst initialize got {other}"),
        }
    }
    assert!(
        burst_sessions.len() <= 2,
        "{} sessions opened together past the limit of 3",
        burst_sessions.len() + 1
    );
    for session in &burst_sessions {
        let mut end = client.delete(url).header("mcp-session-id", session);
        if let Some(token) = token {
            end = end.bearer_auth(token);
        }
        assert!(end.send().await.expect("answers").status().is_success());
    }
    // (The caller may hold a session of its own: open until refused.)
    let mut sessions = Vec::new();
    let mut refused = None;
    for id in ["s2", "s3", "s4"] {
        let response = open(id).await.expect("answers");
        if response.status().as_u16() == 503 {
            refused = Some((id, response));
            break;
        }
        assert_eq!(response.status().as_u16(), 200, "{id}");
        sessions.push(
            response.headers()["mcp-session-id"]
                .to_str()
                .unwrap()
                .to_string(),
        );
    }
    let (id, refused) = refused.expect("a fourth session is refused");
    assert!(!sessions.is_empty(), "refused before 3 sessions");
    assert!(refused.headers().contains_key("retry-after"));
    let refusal: Value = refused.json().await.expect("JSON");
    assert_eq!(
        (&refusal["id"], &refusal["error"]["code"]),
        (&json!(id), &json!(-32000)),
        "{refusal}"
    );
    let mut end = client.delete(url).header("mcp-session-id", &sessions[0]);
    if let Some(token) = token {
        end = end.bearer_auth(token);
    }
    assert!(end.send().await.expect("answers").status().is_success());
    assert_eq!(open("s5").await.expect("answers").status().as_u16(), 200);
}

/// [`check_http_edge`] against `bin ARGS --http 127.0.0.1:0`, started as for
/// [`check_stdio_binary`]; the server still answers a ping at the end. Then
/// [`check_http_limits`] against a second server started with a read timeout of 1 s and
/// at most 3 sessions.
pub async fn check_http_binary(bin: &str, args: &[&str]) {
    let home = tempfile::tempdir().expect("tempdir");
    let home_path = home.path().display().to_string();
    let mcp = crate::McpProcess::spawn_bin_over(
        crate::Wire::Http,
        bin,
        args,
        home.path(),
        &[("HOME", home_path.as_str())],
    )
    .await
    .expect("the server starts");
    let url = mcp.url().expect("an HTTP server").to_string();
    check_http_edge(&url).await;
    mcp.ping().await;

    let hasty = crate::McpProcess::spawn_bin_over(
        crate::Wire::Http,
        bin,
        args,
        home.path(),
        &[
            ("HOME", home_path.as_str()),
            ("MCP_HTTP_READ_TIMEOUT_SECS", "1"),
            ("MCP_HTTP_MAX_SESSIONS", "3"),
        ],
    )
    .await
    .expect("the server starts");
    check_http_limits(hasty.url().expect("an HTTP server"), None).await;
    drop(hasty);
}
