//! What every server answers alike (issue 23), checked through a server binary: a message
//! over the 4 MiB limit answered with the id at its start, over stdio and HTTP; input schemas
//! in the single-type form; an unknown tool named with the tools; a missing resource's URI
//! in its error. Each server's `tests/<crate>/current.rs` calls these with its binary, as its
//! `tests/<crate>/edge.rs` calls [`crate::edge`].

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, ReadResourceRequestParams};
use rmcp::service::ServiceError;
use serde_json::{Value, json};
use tempfile::TempDir;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use crate::{McpProcess, Wire};

/// `bin args` started over `wire` in a home of its own (kept as long as the server).
pub async fn spawn(wire: Wire, bin: &str, args: &[&str]) -> (TempDir, McpProcess) {
    let home = tempfile::tempdir().expect("tempdir");
    let home_str = home.path().display().to_string();
    let mcp =
        McpProcess::spawn_bin_over(wire, bin, args, home.path(), &[("HOME", home_str.as_str())])
            .await
            .expect("the server starts");
    (home, mcp)
}

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

/// The server `bin args` started over stdio in `home` with `lines` written to it (on a task of their
/// own, so that a slow reader does not block the answers), and its first `count` answers
/// that carry an id.
async fn stdio_answers(
    bin: &str,
    args: &[&str],
    home: &Path,
    lines: Vec<String>,
    count: usize,
) -> Vec<Value> {
    let home_str = home.display().to_string();
    let mut command =
        crate::clean_command(bin.as_ref(), args, home, &[("HOME", home_str.as_str())]);
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
pub async fn check_over_long_line_over_stdio(bin: &str, args: &[&str]) {
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
    let answers = stdio_answers(bin, args, home.path(), lines, 5).await;
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
pub async fn check_over_long_body_over_http(bin: &str, args: &[&str]) {
    let (_home, mcp) = spawn(Wire::Http, bin, args).await;
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
pub async fn check_portable_input_schemas(bin: &str, args: &[&str]) {
    let (_home, mcp) = spawn(Wire::Stdio, bin, args).await;
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

/// The listing budget (issue 46): a full `tools/list` at most this many bytes per tool on
/// average, and its tools' `name`, `description` and `inputSchema` at most
/// [`LEAN_BYTES_PER_TOOL`].
pub const FULL_BYTES_PER_TOOL: usize = 1_300;
pub const LEAN_BYTES_PER_TOOL: usize = 800;

/// The bytes of each tool of a listing as sent (compact JSON): the whole definition, and its
/// `name`, `description` and `inputSchema` alone.
pub fn listing_bytes(tools: &[rmcp::model::Tool]) -> Vec<(String, usize, usize)> {
    tools
        .iter()
        .map(|tool| {
            let whole = serde_json::to_string(tool).map(|t| t.len()).unwrap_or(0);
            let lean = serde_json::to_string(&json!({
                "name": tool.name,
                "description": tool.description,
                "inputSchema": tool.input_schema,
            }))
            .map(|t| t.len())
            .unwrap_or(0);
            (tool.name.to_string(), whole, lean)
        })
        .collect()
}

/// Tokens of `text` as o200k_base (the tokenizer of OpenAI's current models, published as
/// the `tiktoken-rs` crate) counts them: a model's cost of reading it, near enough for
/// comparisons (Claude's tokenizer is not published). `None` when the tokenizer cannot load.
pub fn tokens(text: &str) -> Option<usize> {
    static BPE: std::sync::OnceLock<Option<tiktoken_rs::CoreBPE>> = std::sync::OnceLock::new();
    BPE.get_or_init(|| tiktoken_rs::o200k_base().ok())
        .as_ref()
        .map(|bpe| bpe.encode_with_special_tokens(text).len())
}

/// The server's full listing keeps within the budget; each tool's bytes are printed (run
/// with `--nocapture` to see them), the largest first, and the listing's tokens.
#[allow(clippy::print_stderr)]
pub async fn check_listing_budget(bin: &str, args: &[&str]) {
    let (_home, mcp) = spawn(Wire::Stdio, bin, args).await;
    let tools = mcp.tools().await;
    assert!(!tools.is_empty());
    let mut sizes = listing_bytes(&tools);
    sizes.sort_by_key(|s| std::cmp::Reverse(s.1));
    let text = serde_json::to_string(&tools).unwrap_or_default();
    let whole = text.len();
    let lean: usize = sizes.iter().map(|s| s.2).sum();
    let n = tools.len();
    eprintln!(
        "{bin}: {n} tools, {whole} bytes ({} a tool), {} tokens (o200k_base); name + description + inputSchema {lean} ({} a tool)",
        whole / n,
        tokens(&text).unwrap_or(0),
        lean / n
    );
    for (name, full, lean) in &sizes {
        eprintln!("  {name:<40} {full:>6} {lean:>6}");
    }
    assert!(
        whole <= FULL_BYTES_PER_TOOL * n,
        "{bin}: the listing is {whole} bytes for {n} tools, over {FULL_BYTES_PER_TOOL} a tool; the largest: {:?}",
        &sizes[..sizes.len().min(5)]
    );
    assert!(
        lean <= LEAN_BYTES_PER_TOOL * n,
        "{bin}: names, descriptions and input schemas are {lean} bytes for {n} tools, over {LEAN_BYTES_PER_TOOL} a tool"
    );
}

/// A call of a tool the server does not offer names the tool and lists the tools.
pub async fn check_unknown_tool_is_named(bin: &str, args: &[&str]) {
    let (_home, mcp) = spawn(Wire::Stdio, bin, args).await;
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

/// A resource that does not exist is `-32002` with `data.uri`, the URI asked for (SEP-2164).
pub async fn check_missing_resource_carries_its_uri(bin: &str, args: &[&str], missing: &str) {
    let (_home, mcp) = spawn(Wire::Stdio, bin, args).await;
    let answer = mcp
        .peer()
        .read_resource(ReadResourceRequestParams::new(missing))
        .await;
    let Err(ServiceError::McpError(err)) = answer else {
        panic!("an error: {answer:?}");
    };
    assert_eq!(err.code.0, -32002, "{err:?}");
    assert_eq!(
        err.data.as_ref().map(|d| &d["uri"]),
        Some(&json!(missing)),
        "{err:?}"
    );
}
