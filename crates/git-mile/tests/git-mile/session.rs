//! The wire protocol frame by frame: the reference sessions of the contract
//! (`docs/reference/examples/`: the reads against `--read-only`, the writes against the
//! default server) replayed against the server, protocol negotiation, and `shutdown`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // assertions in tests

use crate::support;

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};
use support::world::{i, m};
use support::{RawSession, Sandbox, world_repo};

/// A recorded session of the contract (`docs/reference/examples/`): its file, the server's
/// arguments, and the client's frames.
struct Reference {
    file: &'static str,
    server_args: &'static [&'static str],
    frames: fn() -> Vec<Value>,
}

/// The original surface: handshake, list and show, against `--read-only` (which offers
/// exactly the original two tools).
const READS: Reference = Reference {
    file: "mcp-session-list-show.json",
    server_args: &["--read-only"],
    frames: read_frames,
};

/// The writes: create, update and comment, against the default server.
const WRITES: Reference = Reference {
    file: "mcp-session-create-update-comment.json",
    server_args: &[],
    frames: write_frames,
};

fn session_path(file: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../docs/reference/examples")
        .join(file)
}

fn call(id: u64, name: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": arguments}})
}

fn handshake() -> Vec<Value> {
    vec![
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2024-11-05",
            "capabilities": {},
            "clientInfo": {"name": "git-mile-docs", "version": "1.0.0"}
        }}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}),
    ]
}

/// The client side of the reads' session.
fn read_frames() -> Vec<Value> {
    let mut frames = handshake();
    frames.extend([
        call(3, "git_mile.list", json!({"entity": "milestone"})),
        call(
            4,
            "git_mile.list",
            json!({
                "entity": "issue", "filter": "status == \"open\"", "sort": ["updated:desc"], "limit": 2
            }),
        ),
        call(
            5,
            "git_mile.show",
            json!({"entity": "milestone", "id": m(1)}),
        ),
        call(6, "git_mile.show", json!({"entity": "issue", "id": i(1)})),
        call(
            7,
            "git_mile.log",
            json!({"entity": "issue", "id": i(1), "limit": 2}),
        ),
        json!({"jsonrpc": "2.0", "id": 8, "method": "ping"}),
        json!({"jsonrpc": "2.0", "id": 9, "method": "shutdown"}),
    ]);
    frames
}

/// Stands for the id `git_mile.create` answered, in the writes' client frames.
const CREATED: &str = "${created}";

/// The client side of the writes' session: an issue filed into a milestone, updated (title,
/// status, labels), commented on, updated with what it already has (nothing is written),
/// detached; an unknown id; the closed issue listed.
fn write_frames() -> Vec<Value> {
    let mut frames = handshake();
    frames.extend([
        call(
            3,
            "git_mile.create",
            json!({
                "entity": "issue", "title": "Session expires during checkout",
                "description": "The token is not refreshed while the cart page is open.",
                "labels": ["bug", "auth"], "milestone": m(1)
            }),
        ),
        call(
            4,
            "git_mile.update",
            json!({
                "entity": "issue", "id": CREATED, "title": "Token not refreshed on the cart page",
                "status": "closed", "addLabels": ["fixed"], "removeLabels": ["auth"]
            }),
        ),
        call(
            5,
            "git_mile.comment",
            json!({"entity": "issue", "id": CREATED, "body": "Fixed by refreshing on focus."}),
        ),
        call(
            6,
            "git_mile.update",
            json!({"entity": "issue", "id": CREATED, "status": "closed", "addLabels": ["bug"]}),
        ),
        call(
            7,
            "git_mile.update",
            json!({"entity": "issue", "id": CREATED, "milestone": null}),
        ),
        call(
            8,
            "git_mile.comment",
            json!({"entity": "issue", "id": "0123456789", "body": "Anyone?"}),
        ),
        call(
            9,
            "git_mile.list",
            json!({"entity": "issue", "filter": "labels contains \"fixed\"", "includeClosed": true}),
        ),
        json!({"jsonrpc": "2.0", "id": 10, "method": "ping"}),
        json!({"jsonrpc": "2.0", "id": 11, "method": "shutdown"}),
    ]);
    frames
}

/// What may differ between two runs: the server's version, cursors (signed with a key of
/// the repository), the id a create made and the times of events written during the run
/// (the fixture's are whole seconds; the run's have a fraction). Tool results are compared
/// as the JSON their text carries.
fn normalize(value: &Value, created: Option<&str>) -> Value {
    match value {
        Value::Object(map) => {
            let mut out = serde_json::Map::new();
            for (key, v) in map {
                let v = match (key.as_str(), v) {
                    ("nextCursor", Value::String(_)) => json!("<cursor>"),
                    ("serverInfo", Value::Object(info)) => {
                        let mut info = info.clone();
                        info.insert("version".into(), json!("<version>"));
                        Value::Object(info)
                    }
                    ("text", Value::String(text)) => match serde_json::from_str::<Value>(text) {
                        Ok(inner @ Value::Object(_)) => json!({"json": normalize(&inner, created)}),
                        _ => normalize(v, created),
                    },
                    _ => normalize(v, created),
                };
                out.insert(key.clone(), v);
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(|v| normalize(v, created)).collect()),
        Value::String(text) => {
            if created.is_some_and(|id| text == id) {
                json!("<created-id>")
            } else if chrono::DateTime::parse_from_rfc3339(text).is_ok() && text.contains('.') {
                json!("<written-at>")
            } else {
                value.clone()
            }
        }
        other => other.clone(),
    }
}

/// The id `git_mile.create` answered in a session's log, if it has one.
fn created_id(log: &[Value]) -> Option<String> {
    log.windows(2).find_map(|pair| {
        (pair[0]["payload"]["params"]["name"] == "git_mile.create")
            .then(|| pair[1]["payload"]["result"]["structuredContent"]["id"].as_str())
            .flatten()
            .map(str::to_string)
    })
}

/// Run `frames` against a fresh server over the fixture; the whole exchange. `${created}` in
/// a frame becomes the id the last `git_mile.create` answered.
fn run_session(
    server_args: &[&str],
    frames: &[Value],
) -> (Vec<Value>, Option<std::process::ExitStatus>) {
    let sandbox = Sandbox::new();
    let repo = world_repo(&sandbox, "repo");
    let mut session = RawSession::start_with(&sandbox, &repo, server_args);
    let mut log = Vec::new();
    let mut created = String::new();
    for frame in frames {
        let frame: Value =
            serde_json::from_str(&frame.to_string().replace(CREATED, &created)).unwrap();
        session.send(&frame);
        log.push(json!({"direction": "client", "payload": frame}));
        if frame.get("id").is_some() {
            let answer = session.recv();
            if frame["params"]["name"] == "git_mile.create"
                && let Some(id) = answer["result"]["structuredContent"]["id"].as_str()
            {
                created = id.to_string();
            }
            log.push(json!({"direction": "server", "payload": answer}));
        }
    }
    let closed = session.closed_within(Duration::from_secs(10));
    assert!(closed, "stdout stays open after shutdown");
    let status = session.wait_exit(Duration::from_secs(10));
    (log, status)
}

fn replays(reference: &Reference) {
    let path = session_path(reference.file);
    let text = std::fs::read_to_string(&path).expect("the reference session exists");
    let recorded: Vec<Value> = serde_json::from_str(&text).expect("the session is JSON");
    let recorded_id = created_id(&recorded);
    let client: Vec<Value> = recorded
        .iter()
        .filter(|e| e["direction"] == "client")
        .map(|e| {
            let text = e["payload"].to_string();
            let text = match &recorded_id {
                Some(id) => text.replace(id.as_str(), CREATED),
                None => text,
            };
            serde_json::from_str(&text).unwrap()
        })
        .collect();
    assert_eq!(
        client,
        (reference.frames)(),
        "the recorded client frames are the test's"
    );
    let (live, status) = run_session(reference.server_args, &client);
    let live_id = created_id(&live);
    assert_eq!(live.len(), recorded.len());
    for (recorded, live) in recorded.iter().zip(&live) {
        assert_eq!(recorded["direction"], live["direction"]);
        assert_eq!(
            normalize(&recorded["payload"], recorded_id.as_deref()),
            normalize(&live["payload"], live_id.as_deref()),
            "frame differs from the reference session {}: refresh it with \
             `GIT_MILE_RECORD=1 cargo test -p git-mile --test git-mile session::record` if the change is intended \
             (and note it under MCP in CHANGELOG.md)",
            reference.file
        );
    }
    assert!(
        status.is_some_and(|s| s.success()),
        "exit status {status:?}"
    );
}

#[test]
fn reference_session_of_the_reads_replays() {
    replays(&READS);
}

#[test]
fn reference_session_of_the_writes_replays() {
    replays(&WRITES);
}

/// Writes the reference sessions from a real run: `GIT_MILE_RECORD=1 cargo test -p git-mile
/// --test git-mile session::record`.
#[test]
fn record_reference_sessions() {
    if std::env::var_os("GIT_MILE_RECORD").is_none() {
        return;
    }
    for reference in [READS, WRITES] {
        let (log, _) = run_session(reference.server_args, &(reference.frames)());
        let text = serde_json::to_string_pretty(&log).unwrap();
        let path = session_path(reference.file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text + "\n").unwrap();
    }
}

#[test]
fn negotiates_the_protocol_version_the_client_asks_for() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("repo");
    for version in ["2024-11-05", "2025-03-26", "2025-06-18"] {
        let mut session = RawSession::start(&sandbox, &repo);
        let answer = session.initialize(version);
        assert_eq!(answer["result"]["protocolVersion"], version);
        assert_eq!(answer["result"]["serverInfo"]["name"], "git-mile");
        assert!(answer["result"]["capabilities"]["tools"].is_object());
    }
}

#[test]
fn shutdown_answers_null_and_exits_cleanly() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("repo");
    let mut session = RawSession::start(&sandbox, &repo);
    session.initialize("2024-11-05");
    session.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}));
    let answer = session.recv();
    assert_eq!(answer, json!({"jsonrpc": "2.0", "id": 2, "result": null}));
    session.assert_ends_cleanly();

    // Closing stdin also ends it cleanly; unknown methods are -32601.
    let mut session = RawSession::start(&sandbox, &repo);
    session.initialize("2024-11-05");
    session.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "frobnicate"}));
    assert_eq!(session.recv()["error"]["code"], -32601);
    session.close_stdin();
    session.assert_ends_cleanly();
}

#[test]
fn nothing_after_shutdown_is_read_and_what_came_before_is_answered_first() {
    let sandbox = Sandbox::new();
    let repo = world_repo(&sandbox, "repo");
    let mut session = RawSession::start(&sandbox, &repo);
    session.initialize("2024-11-05");
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "git_mile.list", "arguments": {"entity": "issue"}}});
    session.send(&list);
    session.send(&json!({"jsonrpc": "2.0", "id": 3, "method": "shutdown"}));
    session.send(&list);
    session.send(&json!({"jsonrpc": "2.0", "id": 4, "method": "ping"}));
    let first = session.recv();
    assert_eq!(first["id"], 2);
    assert!(first["result"]["content"].is_array(), "{first}");
    assert_eq!(
        session.recv(),
        json!({"jsonrpc": "2.0", "id": 3, "result": null})
    );
    session.assert_ends_cleanly();
}

#[test]
fn shutdown_or_the_end_of_input_before_initialize_ends_cleanly() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("repo");
    let mut session = RawSession::start(&sandbox, &repo);
    session.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "shutdown"}));
    assert_eq!(
        session.recv(),
        json!({"jsonrpc": "2.0", "id": 1, "result": null})
    );
    session.assert_ends_cleanly();

    let mut session = RawSession::start(&sandbox, &repo);
    session.close_stdin();
    session.assert_ends_cleanly();
}

/// Methods an SDK client would not send: what the contract does not offer is -32601, params
/// that do not decode are -32600.
#[test]
fn unoffered_methods_and_undecodable_params() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("repo");
    let mut session = RawSession::start(&sandbox, &repo);
    session.initialize("2024-11-05");
    let mut id = 1;
    let mut ask = |session: &mut RawSession, method: &str, params: Option<Value>| {
        id += 1;
        let mut frame = json!({"jsonrpc": "2.0", "id": id, "method": method});
        if let Some(params) = params {
            frame["params"] = params;
        }
        session.send(&frame);
        let answer = session.recv();
        assert_eq!(answer["id"], id, "{answer}");
        answer["error"].clone()
    };
    for method in [
        "resources/list",
        "resources/templates/list",
        "prompts/list",
        "resources/read",
        "frobnicate",
    ] {
        let error = ask(&mut session, method, Some(json!({})));
        assert_eq!(error["code"], -32601, "{method}: {error}");
    }
    let error = ask(
        &mut session,
        "completion/complete",
        Some(json!({"ref": {"type": "ref/prompt", "name": "x"},
            "argument": {"name": "a", "value": "b"}})),
    );
    assert_eq!(error["code"], -32601, "{error}");
    for params in [
        Some(json!({"name": "git_mile.list", "arguments": [1]})),
        Some(json!({"arguments": {"entity": "issue"}})),
        None,
    ] {
        let error = ask(&mut session, "tools/call", params.clone());
        assert_eq!(error["code"], -32600, "{params:?}: {error}");
        assert!(
            error["message"].as_str().unwrap().contains("arguments"),
            "{error}"
        );
    }
}

/// Some clients give their servers sockets, not pipes, for stdin and stdout; `shutdown` must
/// end the process there too, without waiting for the client to close its end.
#[test]
fn shutdown_exits_when_stdio_is_a_socket() {
    use std::io::{BufRead, BufReader, Write};
    use std::os::unix::net::UnixStream;
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("repo");
    let (ours, theirs) = UnixStream::pair().unwrap();
    let mut child = sandbox
        .command(support::bin(), &repo)
        .arg("mcp-server")
        .stdin(std::process::Stdio::from(std::os::fd::OwnedFd::from(
            theirs.try_clone().unwrap(),
        )))
        .stdout(std::process::Stdio::from(std::os::fd::OwnedFd::from(
            theirs,
        )))
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    ours.set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut writer = ours.try_clone().unwrap();
    let mut reader = BufReader::new(ours);
    let mut line = String::new();
    for frame in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2024-11-05", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}),
    ] {
        writeln!(writer, "{frame}").unwrap();
        if frame.get("id").is_some() {
            line.clear();
            reader.read_line(&mut line).unwrap();
        }
    }
    let answer: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(answer, json!({"jsonrpc": "2.0", "id": 2, "result": null}));
    // Our end stays open: the server must exit on its own.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("the server did not exit after shutdown");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "{status:?}");
}

/// Writes a client pipelined before `shutdown` (or before closing stdin) are all run and
/// answered, however long they take, and then the server ends cleanly.
#[test]
fn pipelined_writes_are_all_answered_before_the_end() {
    const N: u64 = 150;
    for ending in ["shutdown", "end of input"] {
        let sandbox = Sandbox::new();
        let repo = world_repo(&sandbox, "repo");
        let mut session = RawSession::start(&sandbox, &repo);
        session.initialize("2025-06-18");
        for n in 0..N {
            session.send(&call(
                100 + n,
                "git_mile.comment",
                json!({"entity": "issue", "id": i(4), "body": format!("note {n}")}),
            ));
        }
        match ending {
            "shutdown" => session.send(&json!({"jsonrpc": "2.0", "id": 999, "method": "shutdown"})),
            _ => session.close_stdin(),
        }
        let mut answered = std::collections::BTreeSet::new();
        for _ in 0..N {
            let answer = session.recv();
            assert_eq!(answer["result"]["isError"], json!(false), "{answer}");
            assert!(
                answer["result"]["structuredContent"]["id"].is_string(),
                "{answer}"
            );
            assert!(answered.insert(answer["id"].as_u64().unwrap()), "{answer}");
        }
        assert_eq!(answered.len() as u64, N, "{ending}");
        if ending == "shutdown" {
            assert_eq!(
                session.recv(),
                json!({"jsonrpc": "2.0", "id": 999, "result": null})
            );
        }
        session.assert_ends_cleanly();
        let shown = sandbox.mile_json(&repo, &["show", &i(4)]);
        assert_eq!(
            shown["comments"].as_array().unwrap().len() as u64,
            N,
            "{ending}"
        );
    }
}
