//! Issue 23's protocol findings through the jility binary: an over-long message answered with
//! its id over stdio and HTTP, input schemas in the single-type form, unknown tools named with the tools, undeclared capabilities' methods unknown.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // assertions in tests

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use mcp_testkit::{McpProcess, Wire};
use rmcp::model::CallToolRequestParams;
use rmcp::service::ServiceError;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

mod cloud;
mod pg;

const BIN: &str = env!("CARGO_BIN_EXE_jility");
const ARGS: &[&str] = &["--mcp-server"];

const WAIT: Duration = Duration::from_secs(120);

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// A request of 10 MiB (over the 4 MiB limit) whose id, `id`, comes first.
fn over_long(id: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"{}"}}"#,
        "m".repeat(10 << 20)
    )
}

/// The server started over stdio in `home` with `lines` written to it (on a task of their
/// own, so that a slow reader does not block the answers), and its first `count` answers
/// that carry an id.
async fn stdio_answers(home: &Path, lines: Vec<String>, count: usize) -> Vec<Value> {
    let home_str = home.display().to_string();
    let mut command =
        mcp_testkit::clean_command(BIN.as_ref(), ARGS, home, &[("HOME", home_str.as_str())]);
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true);
    let mut child = command.spawn().expect("the server starts");
    let mut stdin = child.stdin.take().expect("stdin");
    let stdout = child.stdout.take().expect("stdout");
    let (done, keep_open) = tokio::sync::oneshot::channel::<()>();
    let writer = tokio::spawn(async move {
        for line in lines {
            stdin.write_all(line.as_bytes()).await.expect("write");
            stdin.write_all(b"\n").await.expect("write");
        }
        stdin.flush().await.expect("flush");
        let _ = keep_open.await;
    });
    let mut reader = BufReader::new(stdout).lines();
    let mut answers = Vec::new();
    tokio::time::timeout(WAIT, async {
        while answers.len() < count {
            let line = reader.next_line().await.expect("read").expect("an answer");
            let value: Value = serde_json::from_str(&line).expect("JSON");
            if value.get("id").is_some() {
                answers.push(value);
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("no {count} answers in time: {answers:?}"));
    let _ = done.send(());
    writer.await.expect("writer");
    answers
}

/// A message over the limit, over stdio, is answered with the id at its start (`-32600`),
/// and the session goes on; an id the start does not hold gets `null`.
#[tokio::test]
async fn an_over_long_line_is_answered_with_its_id_over_stdio() {
    let home = tempfile::tempdir().expect("tempdir");
    let id_last = format!(
        r#"{{"jsonrpc":"2.0","method":"{}","id":9}}"#,
        "m".repeat(10 << 20)
    );
    let lines = vec![
        INITIALIZE.to_string(),
        INITIALIZED.to_string(),
        over_long("7"),
        over_long(r#""s-7""#),
        id_last,
        r#"{"jsonrpc":"2.0","id":8,"method":"ping"}"#.to_string(),
    ];
    let answers = stdio_answers(home.path(), lines, 5).await;
    assert_eq!(answers[0]["id"], json!(1), "{:?}", answers[0]);
    for (answer, id) in answers[1..4]
        .iter()
        .zip([json!(7), json!("s-7"), Value::Null])
    {
        assert_eq!(answer["id"], id, "{answer}");
        assert_eq!(answer["error"]["code"], json!(-32600), "{answer}");
    }
    assert_eq!(answers[4]["id"], json!(8));
    assert!(answers[4].get("result").is_some(), "{:?}", answers[4]);
}

/// A body over the limit, over HTTP, is `413` with the id at its start.
#[tokio::test]
async fn an_over_long_body_is_answered_with_its_id_over_http() {
    let home = tempfile::tempdir().expect("tempdir");
    let home_str = home.path().display().to_string();
    let mcp = McpProcess::spawn_bin_over(
        Wire::Http,
        BIN,
        ARGS,
        home.path(),
        &[("HOME", home_str.as_str())],
    )
    .await
    .expect("the server starts");
    let url = mcp.url().expect("an HTTP server").to_string();
    let http = reqwest::Client::new();
    for (id, expected) in [("7", json!(7)), (r#""s-7""#, json!("s-7"))] {
        let answer = tokio::time::timeout(
            WAIT,
            http.post(&url)
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .body(over_long(id))
                .send(),
        )
        .await
        .expect("in time")
        .expect("an answer");
        assert_eq!(answer.status().as_u16(), 413);
        let body: Value = serde_json::from_str(&answer.text().await.expect("body")).expect("JSON");
        assert_eq!(body["id"], expected, "{body}");
        assert_eq!(body["error"]["code"], json!(-32600), "{body}");
    }
    mcp.ping().await;
}

/// Every tool's input schema is in the single-type form: no type array and no `null` type
/// anywhere (`$defs` included) but as an explicit `anyOf` branch.
#[tokio::test]
async fn input_schemas_have_no_type_arrays_or_null_types() {
    let home = tempfile::tempdir().expect("tempdir");
    let home_str = home.path().display().to_string();
    let mcp = McpProcess::spawn_bin_over(
        Wire::Stdio,
        BIN,
        ARGS,
        home.path(),
        &[("HOME", home_str.as_str())],
    )
    .await
    .expect("the server starts");
    let tools = mcp.tools().await;
    assert!(!tools.is_empty());
    for tool in tools {
        let schema = Value::Object(tool.input_schema.as_ref().clone());
        assert_eq!(
            mcp_common::protocol::first_unportable(&schema),
            None,
            "{}: {schema}",
            tool.name
        );
    }
}

/// A call of a tool the server does not offer names the tool and lists the tools.
#[tokio::test]
async fn an_unknown_tool_is_named_with_the_tools() {
    let home = tempfile::tempdir().expect("tempdir");
    let home_str = home.path().display().to_string();
    let mcp = McpProcess::spawn_bin_over(
        Wire::Stdio,
        BIN,
        ARGS,
        home.path(),
        &[("HOME", home_str.as_str())],
    )
    .await
    .expect("the server starts");
    let tools = mcp.tools().await;
    let answer = mcp
        .peer()
        .call_tool(CallToolRequestParams::new("no_such_tool"))
        .await;
    let Err(ServiceError::McpError(err)) = answer else {
        panic!("an error: {answer:?}");
    };
    assert!(err.message.contains("`no_such_tool`"), "{}", err.message);
    for tool in &tools {
        assert!(err.message.contains(tool.name.as_ref()), "{}", err.message);
    }
}

/// Every method of a capability jility does not declare (it declares tools alone) is
/// `-32601`, not an empty list.
async fn undeclared_methods_are_unknown(mcp: &McpProcess) {
    let peer = mcp.peer();
    let answers = [
        ("prompts/list", peer.list_prompts(None).await.err()),
        ("resources/list", peer.list_resources(None).await.err()),
        (
            "resources/templates/list",
            peer.list_resource_templates(None).await.err(),
        ),
        (
            "completion/complete",
            peer.complete(rmcp::model::CompleteRequestParams::new(
                rmcp::model::Reference::for_prompt("p"),
                rmcp::model::ArgumentInfo::new("a", "b"),
            ))
            .await
            .err(),
        ),
    ];
    for (method, answer) in answers {
        match answer {
            Some(ServiceError::McpError(err)) => {
                assert_eq!(err.code.0, -32601, "{method}: {err:?}")
            }
            other => panic!("{method}: {other:?}"),
        }
    }
}

#[tokio::test]
async fn undeclared_capabilities_are_unknown_methods_over_stdio_and_http() {
    let home = tempfile::tempdir().expect("tempdir");
    let home_str = home.path().display().to_string();
    for wire in [Wire::Stdio, Wire::Http] {
        let mcp = McpProcess::spawn_bin_over(
            wire,
            BIN,
            ARGS,
            home.path(),
            &[("HOME", home_str.as_str())],
        )
        .await
        .expect("the server starts");
        undeclared_methods_are_unknown(&mcp).await;
    }
}

/// The same at `/mcp` of `jility serve`, with a workspace's token.
#[test]
fn undeclared_capabilities_are_unknown_methods_at_the_hosted_mcp() {
    let db = pg::TestDb::new();
    let pool = db.connect();
    let tokens = jility_cloud::auth::Tokens::new(&pool);
    let (_workspace, token) = cloud::workspace(&tokens, "alpha");
    let server = cloud::Server::start(&db, &[]);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let url = format!("{}/mcp", server.root());
        let mcp = McpProcess::connect_http(&url, Some(&token))
            .await
            .expect("connects to /mcp");
        undeclared_methods_are_unknown(&mcp).await;
    });
}
