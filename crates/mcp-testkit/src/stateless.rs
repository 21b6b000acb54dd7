//! Raw JSON-RPC on the stateless HTTP wire of MCP 2026-07-28, with headers of the test's
//! choosing: [`request`] posts one request as a 2026-07-28 client does (no session; the
//! version and the client's capabilities in `_meta`; `MCP-Protocol-Version`, `Mcp-Method`
//! and `Mcp-Name` set) and answers the JSON-RPC message that answers it.
//!
//! [`check_request_surface`] checks, through a server binary, what every server does with a
//! request's `X-MCP-Toolsets`, `X-MCP-Tools` and `X-MCP-Readonly` headers
//! (`mcp_common::surface::Surface`): they narrow `tools/list` and calls, never widen what
//! the server's options offer, and an unknown name is `-32602`; and a 2026-07-28
//! `tools/list` carries `ttlMs` (one hour) and every tool a title and an icon.

use std::collections::BTreeSet;

use mcp_common::surface::{Entry, LISTING_TTL_MS, toolsets_of};
use serde_json::{Value, json};

use crate::Wire;
use crate::protocol::spawn;

/// The protocol version of the stateless wire.
pub const VERSION: &str = "2026-07-28";

/// The answer to `method` with `params` (an object; `_meta` is added to it), posted to `url`
/// as one stateless 2026-07-28 request with `headers` besides the protocol's own: the
/// JSON-RPC message answering it, whether the server sent it as JSON or as server-sent
/// events. `Mcp-Name` is sent as is (tests name tools and URIs in ASCII).
pub async fn request(url: &str, method: &str, params: Value, headers: &[(&str, &str)]) -> Value {
    request_as(url, method, params, headers, json!({})).await
}

/// [`request`] from a client declaring `capabilities` (e.g. `{"elicitation": {}}`).
pub async fn request_as(
    url: &str,
    method: &str,
    params: Value,
    headers: &[(&str, &str)],
    capabilities: Value,
) -> Value {
    crate::install_crypto_provider();
    let mut params = match params {
        Value::Object(map) => map,
        Value::Null => serde_json::Map::new(),
        other => panic!("params must be an object: {other}"),
    };
    params.insert(
        "_meta".into(),
        json!({
            "io.modelcontextprotocol/protocolVersion": VERSION,
            "io.modelcontextprotocol/clientInfo": {"name": "mcp-testkit", "version": "0"},
            "io.modelcontextprotocol/clientCapabilities": capabilities,
        }),
    );
    let name = match method {
        "tools/call" | "prompts/get" => params.get("name"),
        "resources/read" | "resources/subscribe" | "resources/unsubscribe" => params.get("uri"),
        _ => None,
    }
    .and_then(Value::as_str)
    .map(str::to_string);
    let message = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let mut post = reqwest::Client::new()
        .post(url)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", VERSION)
        .header("Mcp-Method", method);
    if let Some(name) = name {
        post = post.header("Mcp-Name", name);
    }
    for (header, value) in headers {
        post = post.header(*header, *value);
    }
    let answer = tokio::time::timeout(
        crate::REQUEST_TIMEOUT,
        post.body(message.to_string()).send(),
    )
    .await
    .unwrap_or_else(|_| panic!("{method}: no answer in time"))
    .unwrap_or_else(|err| panic!("{method}: {err}"));
    let text = answer.text().await.expect("a body");
    let messages: Vec<Value> = match serde_json::from_str::<Value>(&text) {
        Ok(value) => vec![value],
        Err(_) => text
            .lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .filter_map(|data| serde_json::from_str(data.trim()).ok())
            .collect(),
    };
    messages
        .into_iter()
        .find(|m| m["id"] == json!(1))
        .unwrap_or_else(|| panic!("{method}: no answer with its id in {text}"))
}

/// The `result` of `answer`, failing the test with the error if there is none.
pub fn result(answer: &Value) -> &Value {
    answer
        .get("result")
        .unwrap_or_else(|| panic!("a result: {answer}"))
}

/// The string `field` of every item of the list `list` in `answer`'s result (e.g. the
/// `uri` of each of `resources`), in the order listed.
pub fn values_of(answer: &Value, list: &str, field: &str) -> Vec<String> {
    result(answer)[list]
        .as_array()
        .unwrap_or_else(|| panic!("{list}: {answer}"))
        .iter()
        .map(|item| item[field].as_str().expect("a string").to_string())
        .collect()
}

/// The names of the tools `tools/list` answers with `headers`, in name order (each
/// server lists in its own deterministic order: [`check_request_surface`] checks it is the
/// same every time).
pub async fn listed(url: &str, headers: &[(&str, &str)]) -> Vec<String> {
    let answer = request(url, "tools/list", json!({}), headers).await;
    names_of(result(&answer))
}

/// The tools' names in `result`, in name order.
fn names_of(result: &Value) -> Vec<String> {
    let mut names = listed_order(result);
    names.sort();
    names
}

/// The tools' names in `result`, in the order listed.
fn listed_order(result: &Value) -> Vec<String> {
    result["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("tools: {result}"))
        .iter()
        .map(|t| t["name"].as_str().expect("a name").to_string())
        .collect()
}

fn names<'a>(entries: impl IntoIterator<Item = &'a Entry>) -> Vec<String> {
    let set: BTreeSet<String> = entries.into_iter().map(|e| e.name.to_string()).collect();
    set.into_iter().collect()
}

/// A call of `tool` with `headers` is refused as an unknown tool (`-32602`) that names it
/// and lists exactly `offered` (`data.tools`).
async fn assert_refused(url: &str, tool: &str, headers: &[(&str, &str)], offered: &[String]) {
    let answer = request(
        url,
        "tools/call",
        json!({"name": tool, "arguments": {}}),
        headers,
    )
    .await;
    let error = answer
        .get("error")
        .unwrap_or_else(|| panic!("{tool} with {headers:?} is refused: {answer}"));
    // -32602 as MCP's specification has it for an unknown tool; -32601 where a server's
    // contract says so (git-mile's), with the tools in the message alone.
    let code = error["code"].as_i64().unwrap_or_default();
    assert!(code == -32602 || code == -32601, "{answer}");
    let message = error["message"].as_str().expect("a message");
    assert!(message.contains(tool), "{message}");
    if let Some(tools) = error["data"]["tools"].as_array() {
        let listed: Vec<String> = tools
            .iter()
            .filter_map(|t| t.as_str().map(String::from))
            .collect();
        assert_eq!(
            listed, offered,
            "{tool} with {headers:?}: the tools offered"
        );
    }
    for name in offered {
        assert!(message.contains(name.as_str()), "{name}: {message}");
    }
}

/// What `bin base…` (serving every tool of `entries`) does with a request's headers over
/// HTTP, on the stateless 2026-07-28 wire:
///
/// - `tools/list` lists every tool in the same order every time, each with a title and an icon, with
///   `ttlMs` one hour and `cacheScope` public;
/// - `X-MCP-Toolsets` (each toolset alone) narrows it (`cacheScope` private), and a call of
///   a tool left out is an unknown tool listing the tools offered; `X-MCP-Tools` likewise;
/// - `X-MCP-Readonly: true` leaves out the tools that write (none when none writes);
/// - with `--toolsets` of one toolset, a header naming another cannot bring its tools back;
/// - a header naming an unknown toolset or tool is `-32602`, naming it.
pub async fn check_request_surface(bin: &str, base: &[&str], entries: &[Entry]) {
    let (_home, mcp) = spawn(Wire::Http, bin, base).await;
    let url = mcp.url().expect("an HTTP server").to_string();
    let all = names(entries);

    // The whole listing: the same order each time, titles and icons, the caching hints.
    let answer = request(&url, "tools/list", json!({}), &[]).await;
    let whole = result(&answer);
    assert_eq!(names_of(whole), all, "{bin}: every tool");
    let again = request(&url, "tools/list", json!({}), &[]).await;
    assert_eq!(
        listed_order(whole),
        listed_order(result(&again)),
        "{bin}: the same order every time"
    );
    assert_eq!(whole["ttlMs"], json!(LISTING_TTL_MS), "{whole}");
    assert_eq!(whole["cacheScope"], json!("public"), "{whole}");
    for tool in whole["tools"].as_array().expect("tools") {
        let title = tool["title"].as_str().unwrap_or_default();
        assert!(!title.is_empty(), "{bin}: a title for {}", tool["name"]);
        let icon = tool["icons"][0]["src"].as_str().unwrap_or_default();
        assert!(
            icon.starts_with("data:image/"),
            "{bin}: an icon for {}",
            tool["name"]
        );
    }

    // Each toolset alone, from the request's header.
    let sets = toolsets_of(entries);
    for set in &sets {
        let header = [("X-MCP-Toolsets", *set)];
        let answer = request(&url, "tools/list", json!({}), &header).await;
        let narrowed = result(&answer);
        let offered = names(entries.iter().filter(|e| e.toolset == *set));
        assert_eq!(names_of(narrowed), offered, "{bin} X-MCP-Toolsets: {set}");
        assert_eq!(narrowed["cacheScope"], json!("private"), "{narrowed}");
        assert_eq!(narrowed["ttlMs"], json!(LISTING_TTL_MS), "{narrowed}");
        if let Some(other) = entries.iter().find(|e| e.toolset != *set) {
            assert_refused(&url, other.name, &header, &offered).await;
        }
    }

    // Two tools by name.
    let (first, last) = (entries[0], entries[entries.len() - 1]);
    let pair = format!("{},{}", first.name, last.name);
    let header = [("X-MCP-Tools", pair.as_str())];
    let offered = names([&first, &last]);
    assert_eq!(
        listed(&url, &header).await,
        offered,
        "{bin} X-MCP-Tools: {pair}"
    );
    if let Some(other) = entries
        .iter()
        .find(|e| e.name != first.name && e.name != last.name)
    {
        assert_refused(&url, other.name, &header, &offered).await;
    }

    // Read-only.
    let reads = names(entries.iter().filter(|e| !e.writes));
    assert_eq!(
        listed(&url, &[("X-MCP-Readonly", "true")]).await,
        reads,
        "{bin} X-MCP-Readonly: true"
    );
    if let Some(writer) = entries.iter().find(|e| e.writes) {
        let header = [("X-MCP-Readonly", "true")];
        assert_refused(&url, writer.name, &header, &reads).await;
    }

    // Read-only said twice is read-only; a value that is neither yes nor no, or none, is
    // refused rather than read as "no narrowing".
    assert_eq!(
        listed(
            &url,
            &[("X-MCP-Readonly", "true"), ("X-MCP-Readonly", "true")]
        )
        .await,
        reads,
        "{bin} X-MCP-Readonly twice"
    );
    for value in ["banana", "", "true, maybe"] {
        let answer = request(&url, "tools/list", json!({}), &[("X-MCP-Readonly", value)]).await;
        assert_eq!(
            answer["error"]["code"],
            json!(-32602),
            "{value:?}: {answer}"
        );
    }

    // Unknown names are -32602, naming them.
    for (header, value) in [
        ("X-MCP-Toolsets", "no-such-set"),
        ("X-MCP-Tools", "no_such_tool"),
    ] {
        for (method, params) in [
            ("tools/list", json!({})),
            ("tools/call", json!({"name": first.name, "arguments": {}})),
        ] {
            let answer = request(&url, method, params, &[(header, value)]).await;
            assert_eq!(answer["error"]["code"], json!(-32602), "{method}: {answer}");
            let message = answer["error"]["message"].as_str().unwrap_or_default();
            assert!(message.contains(value), "{message}");
        }
    }
    drop(mcp);

    // A header cannot widen what the server's --toolsets left out.
    if sets.len() > 1 {
        let (kept, other) = (sets[0], sets[1]);
        let mut args: Vec<&str> = base.to_vec();
        args.extend(["--toolsets", kept]);
        let (_home, mcp) = spawn(Wire::Http, bin, &args).await;
        let url = mcp.url().expect("an HTTP server").to_string();
        let offered = names(entries.iter().filter(|e| e.toolset == kept));
        assert_eq!(listed(&url, &[]).await, offered, "{bin} --toolsets {kept}");
        let both = format!("{kept},{other}");
        let header = [("X-MCP-Toolsets", both.as_str())];
        assert_eq!(
            listed(&url, &header).await,
            offered,
            "{bin} --toolsets {kept}, X-MCP-Toolsets: {both}"
        );
        let outside = entries
            .iter()
            .find(|e| e.toolset == other)
            .expect("a tool of the other toolset");
        assert_refused(&url, outside.name, &header, &offered).await;
        let header = [("X-MCP-Toolsets", other)];
        assert!(
            listed(&url, &header).await.is_empty(),
            "{bin} --toolsets {kept}, X-MCP-Toolsets: {other}: nothing"
        );
        let header = [("X-MCP-Tools", outside.name)];
        assert!(
            listed(&url, &header).await.is_empty(),
            "{bin} --toolsets {kept}, X-MCP-Tools: {}: nothing",
            outside.name
        );
        assert_refused(&url, outside.name, &header, &[]).await;
    }
}
