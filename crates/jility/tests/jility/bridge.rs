//! The cloud bridge (`JILITY_MODE=cloud jility --mcp-server`) through the built binary,
//! against `jility serve` on a real PostgreSQL: it answers like local mode, tool for tool;
//! its cache is invalidated by its own writes at once and by other agents' writes through
//! the event stream; its cache does not answer while the API is down; many bridges write at
//! once without losing a ticket; the API's errors (scopes, tokens, rate limits, the network)
//! reach the agent as tool errors that never carry the token.
//!
//! Each test makes its own database on the server at `JILITY_TEST_DATABASE_URL` (default
//! `postgres://postgres@127.0.0.1:5432/test`) and drops it when done, failed or not.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stderr
)] // assertions in tests; the servers' logs are passed on to stderr

use crate::cloud;
use crate::pg;

use std::collections::BTreeSet;
use std::future::Future;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use chrono::{SecondsFormat, TimeDelta, Utc};
use jility_cloud::auth::{NewToken, ScopeSet, TokenRef, Tokens};
use mcp_common::WireError;
use mcp_testkit::McpProcess;
use serde_json::{Value, json};

use cloud::{Server, token, workspace};
use pg::TestDb;

const BIN: &str = env!("CARGO_BIN_EXE_jility");

/// The name of the token the agents of these tests use (and local mode's `JILITY_ACTOR`).
const AGENT: &str = "agent-7";

/// The scopes an agent's token has: everything the tools need.
const AGENT_SCOPES: &str = "tickets:read,tickets:write,tickets:delete,comments:write";

// ---------------------------------------------------------------------------------------
// Fixtures

/// Run `future` on a runtime of its own. The tests' blocking pieces (the database, the
/// server's start and stop) stay outside it or run on blocking threads.
fn block_on<F: Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(future)
}

/// `JILITY_MODE=cloud jility --mcp-server` to the API at `api` (`http://127.0.0.1:PORT`)
/// with `token`, in `home` (its working directory, HOME and XDG_CONFIG_HOME: no stored
/// token of the real user is ever read), with no other environment (no JILITY_ACTOR).
pub(crate) async fn bridge(api: &str, token: &str, home: &Path) -> McpProcess {
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

/// `jility --mcp-server` in the project directory `dir` (local mode), as `actor`.
async fn local(dir: &Path, actor: &str) -> McpProcess {
    let config = dir.join("config");
    let env = [
        ("JILITY_ACTOR", actor),
        ("HOME", dir.to_str().unwrap()),
        ("XDG_CONFIG_HOME", config.to_str().unwrap()),
    ];
    McpProcess::spawn_bin(BIN, &["--mcp-server"], dir, &env)
        .await
        .expect("start jility --mcp-server")
}

/// What one tool call answered: its text, its `structuredContent` and `isError`.
#[derive(Debug, Clone)]
struct Answer {
    text: String,
    structured: Value,
    is_error: bool,
}

impl Answer {
    fn data(&self) -> &Value {
        assert!(!self.is_error, "expected success: {}", self.text);
        &self.structured["data"]
    }

    fn error(&self) -> WireError {
        assert!(self.is_error, "expected an error: {}", self.structured);
        assert_eq!(self.structured["status"], "error", "{}", self.structured);
        serde_json::from_value(self.structured["error"].clone())
            .unwrap_or_else(|e| panic!("not an error envelope ({e}): {}", self.structured))
    }

    fn next_cursor(&self) -> Option<String> {
        self.structured["page"]["next_cursor"]
            .as_str()
            .map(str::to_string)
    }
}

async fn call(mcp: &McpProcess, tool: &str, args: Value) -> Answer {
    let result = mcp.call(tool, args).await;
    let text = result
        .content
        .first()
        .and_then(|c| c.as_text())
        .map(|t| t.text.clone())
        .unwrap_or_else(|| panic!("{tool}: no text in {result:?}"));
    let structured = result
        .structured_content
        .clone()
        .unwrap_or_else(|| panic!("{tool}: no structuredContent in {result:?}"));
    let is_error = result.is_error.unwrap_or(false);
    assert_eq!(
        is_error,
        structured["status"] == "error",
        "{tool}: isError and the status disagree: {structured}"
    );
    Answer {
        text,
        structured,
        is_error,
    }
}

/// A call that must succeed: its `data`.
async fn ok(mcp: &McpProcess, tool: &str, args: Value) -> Value {
    let answer = call(mcp, tool, args.clone()).await;
    assert!(
        !answer.is_error,
        "{tool} {args}: expected success, got {}",
        answer.text
    );
    answer.structured["data"].clone()
}

/// A call that must fail: its error.
async fn err(mcp: &McpProcess, tool: &str, args: Value) -> WireError {
    call(mcp, tool, args).await.error()
}

/// The ticket `id` as the bridge (or local mode) answers it.
async fn ticket(mcp: &McpProcess, id: &str) -> Value {
    ok(mcp, "jility_get_ticket", json!({ "ticket_id": id })).await["ticket"].clone()
}

/// One request to the API (not through any bridge): its status and JSON.
async fn rest(
    api: &str,
    method: reqwest::Method,
    path: &str,
    token: &str,
    body: Option<Value>,
) -> (u16, Value) {
    mcp_testkit::install_crypto_provider();
    let mut request = reqwest::Client::new()
        .request(method, format!("{api}/api/v1{path}"))
        .bearer_auth(token)
        .timeout(Duration::from_secs(30));
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    let value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("the answer ({status}) is not JSON ({e}): {text}"));
    (status, value)
}

/// Run `f` on a blocking thread (the database's client must not run on the runtime's).
async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    tokio::task::spawn_blocking(f).await.unwrap()
}

/// Change `number`'s title behind the API's back: straight in the database, so no event
/// is published and no cache hears of it.
async fn retitle_in_database(db_url: &str, number: i64, title: &str) {
    let url = db_url.to_string();
    let title = title.to_string();
    blocking(move || {
        let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
        let changed = client
            .execute(
                "UPDATE tickets SET title = $1 WHERE number = $2",
                &[&title, &number],
            )
            .unwrap();
        assert_eq!(changed, 1, "one ticket {number} in the test's database");
    })
    .await;
}

/// Wait (up to `within`) until `mcp` answers `jility_get_ticket` of `TASK-number` from its
/// cache, which it does only once it follows the API's event stream: read the ticket,
/// change its title behind the API's back, read it again; the old title means the cache
/// answered (and a fresh REST read shows the new one). Returns the title the cache holds
/// and the one the database holds.
async fn until_cached(
    mcp: &McpProcess,
    db_url: &str,
    api: &str,
    token: &str,
    number: i64,
    within: Duration,
) -> (String, String) {
    let id = format!("TASK-{number}");
    let deadline = Instant::now() + within;
    for attempt in 0.. {
        let before = ticket(mcp, &id).await["title"]
            .as_str()
            .unwrap()
            .to_string();
        let behind = format!("Changed behind the API's back ({attempt})");
        retitle_in_database(db_url, number, &behind).await;
        let after = ticket(mcp, &id).await["title"]
            .as_str()
            .unwrap()
            .to_string();
        if after == before {
            let (status, fresh) = rest(
                api,
                reqwest::Method::GET,
                &format!("/tickets/{id}"),
                token,
                None,
            )
            .await;
            assert_eq!(status, 200, "{fresh}");
            assert_eq!(
                fresh["ticket"]["title"], behind,
                "the API itself answers what the database holds"
            );
            return (before, behind);
        }
        assert_eq!(after, behind, "uncached reads go to the API");
        assert!(
            Instant::now() < deadline,
            "the bridge never answered from its cache within {within:?}: does it follow the event stream?"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    unreachable!()
}

/// A port on which nothing listens (it was free a moment ago).
fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// The port of a server's URL (`http://127.0.0.1:PORT/api/v1`).
fn port_of(url: &str) -> u16 {
    url.trim_start_matches("http://127.0.0.1:")
        .split('/')
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

// ---------------------------------------------------------------------------------------
// Normalising answers: what differs between two runs by nature (ids, times, cursors).

/// `text` with every UUID replaced by `<uuid>` and every RFC 3339 time by `<time>`.
fn scrub(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < bytes.len() {
        if let Some(n) = uuid_at(&bytes[i..]) {
            out.push_str("<uuid>");
            i += n;
        } else if let Some(n) = time_at(&bytes[i..]) {
            out.push_str("<time>");
            i += n;
        } else {
            let c = text[i..].chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// The length of the UUID (8-4-4-4-12 hex digits) `bytes` starts with.
fn uuid_at(bytes: &[u8]) -> Option<usize> {
    let mut i = 0;
    for (group, len) in [8, 4, 4, 4, 12].into_iter().enumerate() {
        if group > 0 {
            if bytes.get(i) != Some(&b'-') {
                return None;
            }
            i += 1;
        }
        for _ in 0..len {
            if !bytes.get(i)?.is_ascii_hexdigit() {
                return None;
            }
            i += 1;
        }
    }
    Some(i)
}

/// The length of the RFC 3339 time (`YYYY-MM-DDTHH:MM:SS[.fff](Z|±HH:MM)`) `bytes` starts
/// with.
fn time_at(bytes: &[u8]) -> Option<usize> {
    let digits =
        |at: usize, n: usize| (at..at + n).all(|j| bytes.get(j).is_some_and(u8::is_ascii_digit));
    let is = |at: usize, c: u8| bytes.get(at) == Some(&c);
    let shape = digits(0, 4)
        && is(4, b'-')
        && digits(5, 2)
        && is(7, b'-')
        && digits(8, 2)
        && (is(10, b'T') || is(10, b't'))
        && digits(11, 2)
        && is(13, b':')
        && digits(14, 2)
        && is(16, b':')
        && digits(17, 2);
    if !shape {
        return None;
    }
    let mut i = 19;
    if is(i, b'.') && digits(i + 1, 1) {
        i += 1;
        while bytes.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
    }
    if is(i, b'Z') || is(i, b'z') {
        Some(i + 1)
    } else if (is(i, b'+') || is(i, b'-'))
        && digits(i + 1, 2)
        && is(i + 3, b':')
        && digits(i + 4, 2)
    {
        Some(i + 6)
    } else {
        None
    }
}

/// `value` with every string scrubbed, and every cursor of `cursors` (opaque, sealed
/// with a key of their server) replaced by `<cursor>`.
fn normalise(value: &Value, cursors: &[String]) -> Value {
    map_strings(value, &|s| normalise_text(s, cursors))
}

fn normalise_text(text: &str, cursors: &[String]) -> String {
    let mut text = text.to_string();
    for cursor in cursors {
        text = text.replace(cursor.as_str(), "<cursor>");
    }
    // A bulk edit's id (random) as the change logs name it.
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(at) = rest.find("bulk edit ") {
        let (head, tail) = rest.split_at(at + "bulk edit ".len());
        out.push_str(head);
        let id: String = tail.chars().take_while(char::is_ascii_hexdigit).collect();
        if id.len() == 8 {
            out.push_str("<bulk>");
            rest = &tail[8..];
        } else {
            rest = tail;
        }
    }
    out.push_str(rest);
    scrub(&out)
}

#[test]
fn the_normaliser_replaces_ids_times_and_cursors_only() {
    let id = uuid::Uuid::new_v4().to_string();
    let text = format!(
        "**Created:** 2026-11-03T10:20:30.123Z by x; {id} and 2026-11-03T10:20:30+01:00, not 2026-11-03 or TASK-12 or abc; ❌ ok"
    );
    assert_eq!(
        scrub(&text),
        "**Created:** <time> by x; <uuid> and <time>, not 2026-11-03 or TASK-12 or abc; ❌ ok"
    );
    let value =
        json!({"a": [text], "page": {"next_cursor": "c123"}, "b": "pass cursor \"c123\"", "n": 3});
    let normal = normalise(&value, &["c123".to_string()]);
    assert_eq!(normal["page"]["next_cursor"], "<cursor>");
    assert_eq!(normal["b"], "pass cursor \"<cursor>\"");
    assert_eq!(normal["n"], 3);
}

// ---------------------------------------------------------------------------------------
// 1. Both modes answer alike.

/// A step of [`scenario`]: the call and its answer.
struct Step {
    tool: &'static str,
    args: Value,
    answer: Answer,
}

struct Recorder<'a> {
    mcp: &'a McpProcess,
    steps: Vec<Step>,
}

impl Recorder<'_> {
    async fn call(&mut self, tool: &'static str, args: Value) -> Answer {
        let answer = call(self.mcp, tool, args.clone()).await;
        self.steps.push(Step {
            tool,
            args,
            answer: answer.clone(),
        });
        answer
    }

    /// A call that must succeed (in either mode: the scenario is valid).
    async fn ok(&mut self, tool: &'static str, args: Value) -> Answer {
        let answer = self.call(tool, args.clone()).await;
        assert!(!answer.is_error, "{tool} {args}: {}", answer.text);
        answer
    }

    /// A call that must fail, with `code`.
    async fn err(&mut self, tool: &'static str, args: Value, code: &str) {
        let answer = self.call(tool, args.clone()).await;
        let error = answer.error();
        assert_eq!(error.code, code, "{tool} {args}: {}", answer.text);
    }
}

/// Every tool, its successes and its failures, in one story: the same calls for local
/// mode and for the bridge.
async fn scenario(mcp: &McpProcess) -> Vec<Step> {
    let mut r = Recorder {
        mcp,
        steps: Vec::new(),
    };
    // Creating.
    let first = r
        .ok(
            "jility_create_ticket",
            json!({
                "title": "Fix the login form",
                "description": "The login form breaks on submit.\n\n## Acceptance Criteria\n\n- the form submits\n",
                "labels": ["bug", "frontend"],
                "story_points": 3
            }),
        )
        .await;
    let uuid = first.data()["ticket"]["id"].as_str().unwrap().to_string();
    r.ok(
        "jility_create_ticket",
        json!({"title": "Write the release notes", "status": "todo", "assignees": ["bob"], "labels": ["docs"]}),
    )
    .await;
    r.err(
        "jility_create_ticket",
        json!({"title": ""}),
        "invalid_input",
    )
    .await;
    r.err(
        "jility_create_ticket",
        json!({"title": "Too big", "story_points": 20}),
        "invalid_input",
    )
    .await;
    r.err(
        "jility_create_ticket",
        json!({"title": "Orphan", "parent_id": "TASK-99"}),
        "not_found",
    )
    .await;
    r.ok(
        "jility_create_tickets_batch",
        json!({
            "parent_id": "TASK-1",
            "tickets": [
                {"title": "Design the schema", "story_points": 5, "labels": ["backend"]},
                {"title": "Build the API", "story_points": 8, "depends_on": ["#1"]},
                {"title": "Ship the release", "depends_on": ["Build the API", "TASK-2"]}
            ]
        }),
    )
    .await;
    r.err(
        "jility_create_tickets_batch",
        json!({"tickets": []}),
        "invalid_input",
    )
    .await;
    r.err(
        "jility_create_tickets_batch",
        json!({"tickets": [{"title": "Lost", "depends_on": ["TASK-99"]}]}),
        "not_found",
    )
    .await;

    // Reading.
    r.ok("jility_get_ticket", json!({"ticket_id": "TASK-1"}))
        .await;
    r.ok("jility_get_ticket", json!({"ticket_id": uuid})).await;
    r.err(
        "jility_get_ticket",
        json!({"ticket_id": "TASK-99"}),
        "not_found",
    )
    .await;
    r.err(
        "jility_get_ticket",
        json!({"ticket_id": "nope"}),
        "invalid_input",
    )
    .await;
    r.err("jility_get_ticket", json!({}), "invalid_input").await;
    r.ok("jility_list_tickets", json!({})).await;
    r.ok(
        "jility_list_tickets",
        json!({"status": ["todo", "backlog"]}),
    )
    .await;
    r.ok("jility_list_tickets", json!({"labels": ["bug"]}))
        .await;
    r.ok("jility_list_tickets", json!({"assignee": "bob"}))
        .await;
    r.ok("jility_list_tickets", json!({"unassigned": true}))
        .await;
    r.ok("jility_list_tickets", json!({"parent_id": "TASK-1"}))
        .await;
    let page = r.ok("jility_list_tickets", json!({"limit": 2})).await;
    let cursor = page.next_cursor().expect("a next page");
    let page = r
        .ok("jility_list_tickets", json!({"limit": 2, "cursor": cursor}))
        .await;
    let cursor = page.next_cursor().expect("a last page");
    r.ok("jility_list_tickets", json!({"limit": 2, "cursor": cursor}))
        .await;
    r.err(
        "jility_list_tickets",
        json!({"limit": 2, "cursor": "not-a-cursor"}),
        "invalid_params",
    )
    .await;
    r.err("jility_list_tickets", json!({"limit": 0}), "invalid_params")
        .await;
    r.err(
        "jility_list_tickets",
        json!({"status": ["finished"]}),
        "invalid_status",
    )
    .await;

    // Working on tickets.
    r.ok(
        "jility_claim_ticket",
        json!({"ticket_id": "TASK-1", "message": "on it"}),
    )
    .await;
    r.err(
        "jility_claim_ticket",
        json!({"ticket_id": "TASK-2"}),
        "already_assigned",
    )
    .await;
    r.err(
        "jility_claim_ticket",
        json!({"ticket_id": "TASK-99"}),
        "not_found",
    )
    .await;
    r.ok(
        "jility_update_description",
        json!({"ticket_id": "TASK-1", "operation": "append",
               "content": "Also check the mobile layout.", "message": "more"}),
    )
    .await;
    r.ok(
        "jility_update_description",
        json!({"ticket_id": "TASK-1", "operation": "replace_section",
               "section_header": "## Acceptance Criteria",
               "content": "- the form submits\n- errors show inline\n"}),
    )
    .await;
    r.err(
        "jility_update_description",
        json!({"ticket_id": "TASK-1", "operation": "replace_lines", "content": "x",
               "start_line": 50, "end_line": 60}),
        "invalid_input",
    )
    .await;
    r.err(
        "jility_update_description",
        json!({"ticket_id": "TASK-1", "operation": "replace_section", "content": "x",
               "section_header": "## Nowhere"}),
        "invalid_input",
    )
    .await;
    r.ok(
        "jility_update_status",
        json!({"ticket_id": "TASK-1", "status": "review", "message": "ready"}),
    )
    .await;
    r.err(
        "jility_update_status",
        json!({"ticket_id": "TASK-3", "status": "done"}),
        "invalid_status",
    )
    .await;
    r.err(
        "jility_update_status",
        json!({"ticket_id": "TASK-3", "status": "finished"}),
        "invalid_status",
    )
    .await;
    r.ok(
        "jility_update_status",
        json!({"ticket_id": "TASK-3", "status": "blocked", "message": "waiting"}),
    )
    .await;
    r.ok(
        "jility_add_comment",
        json!({"ticket_id": "TASK-1", "content": "Looks good to me @bob"}),
    )
    .await;
    r.err(
        "jility_add_comment",
        json!({"ticket_id": "TASK-1", "content": " "}),
        "invalid_input",
    )
    .await;
    r.err(
        "jility_add_comment",
        json!({"ticket_id": "TASK-99", "content": "hello"}),
        "not_found",
    )
    .await;
    r.ok(
        "jility_assign_ticket",
        json!({"ticket_id": "TASK-3", "assignees": ["carol", "dave"], "message": "pairing on this"}),
    )
    .await;
    r.ok(
        "jility_assign_ticket",
        json!({"ticket_id": "TASK-2", "assignees": []}),
    )
    .await;
    r.err(
        "jility_assign_ticket",
        json!({"ticket_id": "TASK-1", "assignees": [""]}),
        "invalid_input",
    )
    .await;
    r.ok(
        "jility_link_commit",
        json!({"ticket_id": "TASK-1", "commit_hash": "abc123f", "commit_message": "Fix the login form"}),
    )
    .await;
    r.ok(
        "jility_link_commit",
        json!({"ticket_id": "TASK-1", "commit_hash": "abc123f"}),
    )
    .await;
    r.err(
        "jility_link_commit",
        json!({"ticket_id": "TASK-1", "commit_hash": "zz"}),
        "invalid_input",
    )
    .await;

    // Dependencies.
    r.ok(
        "jility_add_dependency",
        json!({"ticket_id": "TASK-1", "depends_on": "TASK-3"}),
    )
    .await;
    r.err(
        "jility_add_dependency",
        json!({"ticket_id": "TASK-3", "depends_on": "TASK-5"}),
        "dependency_cycle",
    )
    .await;
    r.err(
        "jility_add_dependency",
        json!({"ticket_id": "TASK-1", "depends_on": "TASK-1"}),
        "dependency_cycle",
    )
    .await;
    r.ok(
        "jility_get_dependency_graph",
        json!({"ticket_id": "TASK-5"}),
    )
    .await;
    r.ok(
        "jility_get_dependency_graph",
        json!({"ticket_id": "TASK-3"}),
    )
    .await;
    r.err(
        "jility_get_dependency_graph",
        json!({"ticket_id": "nope"}),
        "invalid_input",
    )
    .await;
    r.ok(
        "jility_remove_dependency",
        json!({"ticket_id": "TASK-1", "depends_on": "TASK-3"}),
    )
    .await;
    r.err(
        "jility_remove_dependency",
        json!({"ticket_id": "TASK-1", "depends_on": "TASK-3"}),
        "not_found",
    )
    .await;

    // Templates.
    r.ok("jility_list_templates", json!({})).await;
    let page = r.ok("jility_list_templates", json!({"limit": 2})).await;
    let cursor = page.next_cursor().expect("more templates");
    r.ok(
        "jility_list_templates",
        json!({"limit": 2, "cursor": cursor}),
    )
    .await;
    r.err(
        "jility_list_templates",
        json!({"unexpected": true}),
        "invalid_input",
    )
    .await;
    r.ok(
        "jility_create_from_template",
        json!({"template": "bug-fix", "variables": {"summary": "crash on save"}, "assignee": "erin"}),
    )
    .await;
    r.err(
        "jility_create_from_template",
        json!({"template": "nope", "variables": {}}),
        "not_found",
    )
    .await;
    r.err(
        "jility_create_from_template",
        json!({"template": "refactor", "variables": {"target": "the parser"}}),
        "invalid_input",
    )
    .await;

    // Search.
    r.ok("jility_search_tickets", json!({"query": "login"}))
        .await;
    r.ok("jility_search_tickets", json!({"query": "\"login form\""}))
        .await;
    r.ok("jility_search_tickets", json!({"query": "mobile layout"}))
        .await;
    let page = r
        .ok(
            "jility_search_tickets",
            json!({"query": "release", "limit": 1}),
        )
        .await;
    if let Some(cursor) = page.next_cursor() {
        r.ok(
            "jility_search_tickets",
            json!({"query": "release", "limit": 1, "cursor": cursor}),
        )
        .await;
    }
    r.ok("jility_search_tickets", json!({"query": "zebra"}))
        .await;
    r.err(
        "jility_search_tickets",
        json!({"query": "**"}),
        "invalid_input",
    )
    .await;

    // History.
    r.ok("jility_get_ticket_history", json!({"ticket_id": "TASK-1"}))
        .await;
    r.err(
        "jility_get_ticket_history",
        json!({"ticket_id": "TASK-99"}),
        "not_found",
    )
    .await;
    r.ok(
        "jility_revert_description",
        json!({"ticket_id": "TASK-1", "version": 1}),
    )
    .await;
    r.err(
        "jility_revert_description",
        json!({"ticket_id": "TASK-1", "version": 99}),
        "invalid_input",
    )
    .await;

    // Planning: an epic with two tickets, one waiting on the other; a sprint planned,
    // filled, started, worked on and completed into the next one.
    let number = |answer: &Answer| {
        answer.data()["ticket"]["number"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let epic = number(
        &r.ok(
            "jility_create_ticket",
            json!({"title": "Sign-in", "kind": "epic"}),
        )
        .await,
    );
    r.err(
        "jility_create_ticket",
        json!({"title": "Nested", "kind": "epic", "epic_id": epic}),
        "invalid_input",
    )
    .await;
    let a = number(
        &r.ok(
            "jility_create_ticket",
            json!({"title": "Session table", "story_points": 3, "status": "todo", "epic_id": epic}),
        )
        .await,
    );
    let b = number(
        &r.ok(
            "jility_create_ticket",
            json!({"title": "Session API", "story_points": 5, "epic_id": epic}),
        )
        .await,
    );
    r.ok(
        "jility_add_dependency",
        json!({"ticket_id": b, "depends_on": a}),
    )
    .await;
    r.ok("jility_list_epics", json!({})).await;
    r.ok("jility_get_epic", json!({"epic_id": epic})).await;
    r.err(
        "jility_get_epic",
        json!({"epic_id": "TASK-1"}),
        "invalid_input",
    )
    .await;
    let today = Utc::now().date_naive();
    let later = today + TimeDelta::days(9);
    r.ok(
        "jility_create_sprint",
        json!({"name": "Sprint 1", "starts_on": today.to_string(), "ends_on": later.to_string(), "capacity_points": 10}),
    )
    .await;
    r.err(
        "jility_create_sprint",
        json!({"name": "Backwards", "starts_on": later.to_string(), "ends_on": today.to_string()}),
        "invalid_input",
    )
    .await;
    r.ok("jility_plan_sprint", json!({"sprint": "Sprint 1"}))
        .await;
    // Saved views and bulk edits.
    r.ok(
        "jility_save_view",
        json!({"name": "open work", "query": "is:open sort:title-asc", "shared": true}),
    )
    .await;
    r.err(
        "jility_save_view",
        json!({"name": "OPEN WORK", "query": "is:open"}),
        "already_exists",
    )
    .await;
    r.ok("jility_list_views", json!({})).await;
    r.ok(
        "jility_list_tickets",
        json!({"query": "view:\"open work\""}),
    )
    .await;
    r.ok("jility_delete_view", json!({"name": "open work"}))
        .await;
    r.ok(
        "jility_bulk_update",
        json!({"tickets": [a, b], "set": {"add_labels": ["planned"]}, "dry_run": true}),
    )
    .await;
    r.err(
        "jility_bulk_update",
        json!({"tickets": [a, b], "set": {"add_labels": ["planned"]}, "expected_count": 3}),
        "count_mismatch",
    )
    .await;
    r.ok(
        "jility_bulk_update",
        json!({"tickets": [a, b], "set": {"add_labels": ["planned"]}, "expected_count": 2}),
    )
    .await;
    r.ok(
        "jility_bulk_assign",
        json!({"query": "label:planned", "assignees": ["pair-1", "pair-2"]}),
    )
    .await;
    // Related tickets and estimates: the same scores and order in both modes.
    r.ok(
        "jility_suggest_related",
        json!({"ticket_id": a, "limit": 5}),
    )
    .await;
    r.ok(
        "jility_suggest_related",
        json!({"title": "Login page form", "description": "the sign in form"}),
    )
    .await;
    r.err("jility_suggest_related", json!({}), "invalid_input")
        .await;
    r.ok("jility_estimate_effort", json!({"ticket_id": a}))
        .await;
    r.err(
        "jility_estimate_effort",
        json!({"ticket_id": "TASK-999"}),
        "not_found",
    )
    .await;
    r.ok(
        "jility_add_to_sprint",
        json!({"sprint": "Sprint 1", "tickets": [a, b]}),
    )
    .await;
    r.err(
        "jility_add_to_sprint",
        json!({"sprint": "Sprint 1", "tickets": [epic]}),
        "invalid_input",
    )
    .await;
    r.ok("jility_start_sprint", json!({"sprint": "Sprint 1"}))
        .await;
    r.err(
        "jility_start_sprint",
        json!({"sprint": "1"}),
        "sprint_conflict",
    )
    .await;
    r.ok(
        "jility_update_status",
        json!({"ticket_id": a, "status": "in_progress"}),
    )
    .await;
    r.ok(
        "jility_update_status",
        json!({"ticket_id": a, "status": "done"}),
    )
    .await;
    r.ok("jility_list_tickets", json!({"sprint": "active"}))
        .await;
    r.ok("jility_sprint_stats", json!({"sprint": "Sprint 1"}))
        .await;
    r.ok(
        "jility_remove_from_sprint",
        json!({"sprint": "Sprint 1", "tickets": [b]}),
    )
    .await;
    r.ok(
        "jility_add_to_sprint",
        json!({"sprint": "Sprint 1", "tickets": [b]}),
    )
    .await;
    r.ok(
        "jility_create_sprint",
        json!({"name": "Sprint 2", "starts_on": later.to_string(), "ends_on": (later + TimeDelta::days(9)).to_string()}),
    )
    .await;
    r.ok("jility_list_sprints", json!({})).await;
    r.ok(
        "jility_complete_sprint",
        json!({"sprint": "Sprint 1", "carry_over_to": "Sprint 2"}),
    )
    .await;
    r.err(
        "jility_complete_sprint",
        json!({"sprint": "Sprint 1"}),
        "sprint_conflict",
    )
    .await;
    r.ok("jility_sprint_stats", json!({"sprint": "Sprint 1"}))
        .await;
    r.ok("jility_get_ticket", json!({"ticket_id": b})).await;
    r.ok("jility_get_epic", json!({"epic_id": epic})).await;

    // Where it all ended.
    r.ok("jility_get_ticket", json!({"ticket_id": "TASK-1"}))
        .await;
    r.ok("jility_get_ticket", json!({"ticket_id": "TASK-3"}))
        .await;
    r.ok("jility_get_ticket_history", json!({"ticket_id": "TASK-1"}))
        .await;
    r.ok(
        "jility_get_dependency_graph",
        json!({"ticket_id": "TASK-5"}),
    )
    .await;
    r.ok("jility_list_tickets", json!({})).await;
    r.ok("jility_search_tickets", json!({"query": "mobile"}))
        .await;
    // Deleting, last: a ticket made for it, then again (deleted, so not found).
    let doomed = r
        .ok(
            "jility_create_ticket",
            json!({"title": "Made to be deleted"}),
        )
        .await;
    let doomed = doomed.structured["data"]["ticket"]["number"]
        .as_str()
        .unwrap()
        .to_string();
    r.ok("jility_delete_ticket", json!({"ticket_id": doomed}))
        .await;
    r.err(
        "jility_delete_ticket",
        json!({"ticket_id": doomed}),
        "not_found",
    )
    .await;
    r.steps
}

fn map_strings(value: &Value, f: &dyn Fn(&str) -> String) -> Value {
    match value {
        Value::String(s) => Value::String(f(s)),
        Value::Array(items) => Value::Array(items.iter().map(|v| map_strings(v, f)).collect()),
        Value::Object(members) => Value::Object(
            members
                .iter()
                .map(|(k, v)| (k.clone(), map_strings(v, f)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The answer as compared: text and structuredContent normalised (a bulk edit's id, random,
/// as a cursor), and isError.
fn comparable(answer: &Answer) -> (String, Value, bool) {
    let mut cursors: Vec<String> = answer.next_cursor().into_iter().collect();
    if let Some(bulk) = answer.structured["data"]["bulk_id"].as_str() {
        cursors.push(bulk.to_string());
    }
    let text = normalise_text(&answer.text, &cursors);
    let structured = normalise(&answer.structured, &cursors);
    (text, structured, answer.is_error)
}

#[test]
fn both_modes_answer_alike() {
    let db = TestDb::new();
    let pool = db.connect();
    let tokens = Tokens::new(&pool);
    let (ws, _) = workspace(&tokens, "alike");
    let agent = token(&tokens, &ws, AGENT, AGENT_SCOPES);
    // The scenario makes more calls than a token may in a minute by default.
    let server = Server::start(&db, &["--rate-limit", "100000"]);
    let project = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();

    let (local_tools, cloud_tools, local_steps, cloud_steps) = block_on(async {
        let local_mcp = local(project.path(), AGENT).await;
        let cloud_mcp = bridge(server.root(), agent.token.expose(), home.path()).await;
        let local_tools = serde_json::to_value(local_mcp.tools().await).unwrap();
        let cloud_tools = serde_json::to_value(cloud_mcp.tools().await).unwrap();
        let local_steps = scenario(&local_mcp).await;
        let cloud_steps = scenario(&cloud_mcp).await;
        let stderr = cloud_mcp.shutdown().await;
        assert!(
            !stderr.contains(agent.token.expose()),
            "the bridge logs the token: {stderr}"
        );
        local_mcp.shutdown().await;
        (local_tools, cloud_tools, local_steps, cloud_steps)
    });

    // The same tools, schemas and all.
    assert_eq!(local_tools, cloud_tools, "the tools differ");
    assert_eq!(local_tools.as_array().unwrap().len(), 39);

    // Every tool is exercised, and the same calls were made on both sides.
    let tools: BTreeSet<&str> = local_steps.iter().map(|s| s.tool).collect();
    assert_eq!(tools.len(), 36, "{tools:?}");
    let failing: BTreeSet<&str> = local_steps
        .iter()
        .filter(|s| s.answer.is_error)
        .map(|s| s.tool)
        .collect();
    assert!(failing.len() >= 20, "errors of most tools: {failing:?}");
    assert_eq!(local_steps.len(), cloud_steps.len());

    let mut differences = Vec::new();
    for (i, (l, c)) in local_steps.iter().zip(&cloud_steps).enumerate() {
        assert_eq!(l.tool, c.tool);
        let (l_text, l_structured, l_error) = comparable(&l.answer);
        let (c_text, c_structured, c_error) = comparable(&c.answer);
        if l_error != c_error || l_structured != c_structured || l_text != c_text {
            differences.push(format!(
                "step {i}: {} {}\n  local ({}): {l_text}\n  {l_structured}\n  cloud ({}): {c_text}\n  {c_structured}",
                l.tool,
                l.args,
                if l_error { "error" } else { "ok" },
                if c_error { "error" } else { "ok" },
            ));
        }
    }
    assert!(
        differences.is_empty(),
        "{} of {} answers differ between local mode and the bridge:\n\n{}",
        differences.len(),
        local_steps.len(),
        differences.join("\n\n")
    );

    // The actor is the token's name in the cloud, JILITY_ACTOR locally: the same here.
    let created = cloud_steps[0].answer.data();
    assert_eq!(created["ticket"]["created_by"], AGENT);
    // The bridge keeps nothing locally.
    assert!(!home.path().join(".jility").exists());
    assert!(project.path().join(".jility/data.db").exists());
}

// ---------------------------------------------------------------------------------------
// 2. Another agent's write is seen at once; the cache is used.

#[test]
fn another_agents_write_is_seen_at_once() {
    let db = TestDb::new();
    let pool = db.connect();
    let tokens = Tokens::new(&pool);
    let (ws, boot) = workspace(&tokens, "team");
    let a_token = token(&tokens, &ws, "agent-a", AGENT_SCOPES);
    let b_token = token(&tokens, &ws, "agent-b", AGENT_SCOPES);
    let server = Server::start(&db, &[]);
    let a_home = tempfile::tempdir().unwrap();
    let b_home = tempfile::tempdir().unwrap();
    let api = server.root().to_string();
    let a_secret = a_token.token.expose().to_string();

    block_on(async {
        let a = bridge(&api, &a_secret, a_home.path()).await;
        let b = bridge(&api, b_token.token.expose(), b_home.path()).await;
        let created = ok(
            &a,
            "jility_create_ticket",
            json!({"title": "Shared work", "status": "todo"}),
        )
        .await;
        assert_eq!(created["ticket"]["number"], "TASK-1");
        assert_eq!(created["ticket"]["created_by"], "agent-a");

        // The cache answers: a change made behind the API's back is not seen by A…
        let (cached, behind) =
            until_cached(&a, &db.url, &api, &a_secret, 1, Duration::from_secs(15)).await;
        assert_eq!(ticket(&a, "TASK-1").await["title"], cached.as_str());
        // …and B, which never read it, reads it from the API.
        assert_eq!(ticket(&b, "TASK-1").await["title"], behind.as_str());

        // A list cached by A (read twice).
        let (listed, _) = list_numbers(&a, json!({})).await;
        assert_eq!(listed, ["TASK-1"]);
        assert_eq!(list_numbers(&a, json!({})).await.0, ["TASK-1"]);

        // B moves TASK-1: A sees it well before its cache's 30 s are up.
        let moved = ok(
            &b,
            "jility_update_status",
            json!({"ticket_id": "TASK-1", "status": "in_progress"}),
        )
        .await;
        assert_eq!(moved["current"], "in_progress");
        assert_eq!(moved["changed_by"], "agent-b");
        let a = &a;
        let started = Instant::now();
        let seen = poll(Duration::from_secs(5), || async move {
            let t = ticket(a, "TASK-1").await;
            (t["status"] == "in_progress").then_some(t)
        })
        .await
        .unwrap_or_else(|| panic!("A still shows the old status after 5 s"));
        eprintln!("A saw B's status change after {:?}", started.elapsed());
        assert_eq!(seen["updated_by"], "agent-b");
        // The whole entry was dropped: the title changed behind the API's back shows too.
        assert_eq!(seen["title"], behind.as_str());

        // B creates a ticket: A's cached list shows it.
        let created = ok(&b, "jility_create_ticket", json!({"title": "B's own"})).await;
        assert_eq!(created["ticket"]["number"], "TASK-2");
        let started = Instant::now();
        poll(Duration::from_secs(5), || async move {
            let (listed, total) = list_numbers(a, json!({})).await;
            (listed.contains(&"TASK-2".to_string()) && total == 2).then_some(())
        })
        .await
        .unwrap_or_else(|| panic!("A's list does not show B's ticket after 5 s"));
        eprintln!("A's list showed B's ticket after {:?}", started.elapsed());

        // A comment by B (another scope, another route) reaches A's cached ticket too.
        let detail = ok(a, "jility_get_ticket", json!({"ticket_id": "TASK-2"})).await;
        assert_eq!(detail["comment_count"], 0);
        ok(
            &b,
            "jility_add_comment",
            json!({"ticket_id": "TASK-2", "content": "from B"}),
        )
        .await;
        poll(Duration::from_secs(5), || async move {
            let detail = ok(a, "jility_get_ticket", json!({"ticket_id": "TASK-2"})).await;
            (detail["comment_count"] == 1).then_some(())
        })
        .await
        .unwrap_or_else(|| panic!("A does not see B's comment after 5 s"));

        // A search cached by A finds B's new ticket.
        let hits = |found: &Value| found["hits"].as_array().unwrap().len();
        let found = ok(a, "jility_search_tickets", json!({"query": "bulletin"})).await;
        assert_eq!(hits(&found), 0, "{found}");
        ok(
            &b,
            "jility_create_ticket",
            json!({"title": "The bulletin board"}),
        )
        .await;
        poll(Duration::from_secs(5), || async move {
            let found = ok(a, "jility_search_tickets", json!({"query": "bulletin"})).await;
            (hits(&found) == 1).then_some(())
        })
        .await
        .unwrap_or_else(|| panic!("A's search does not find B's ticket after 5 s"));

        // A deletion through the REST API (no bridge at all) reaches A's cache too.
        assert_eq!(ticket(a, "TASK-2").await["title"], "B's own");
        let (status, body) = rest(
            &api,
            reqwest::Method::DELETE,
            "/tickets/TASK-2",
            &boot,
            None,
        )
        .await;
        assert_eq!(status, 200, "{body}");
        poll(Duration::from_secs(5), || async move {
            let answer = call(a, "jility_get_ticket", json!({"ticket_id": "TASK-2"})).await;
            (answer.is_error && answer.error().code == "not_found").then_some(())
        })
        .await
        .unwrap_or_else(|| panic!("A still shows the deleted ticket after 5 s"));
        assert_eq!(list_numbers(a, json!({})).await.1, 2);
    });
}

/// The numbers one page of `jility_list_tickets` shows, and its total.
async fn list_numbers(mcp: &McpProcess, args: Value) -> (Vec<String>, u64) {
    let answer = call(mcp, "jility_list_tickets", args).await;
    let numbers = answer.data()["tickets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["number"].as_str().unwrap().to_string())
        .collect();
    (
        numbers,
        answer.structured["page"]["total"].as_u64().unwrap(),
    )
}

/// Call `probe` every 50 ms until it gives something, for at most `within`.
async fn poll<T, F, Fut>(within: Duration, mut probe: F) -> Option<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = Instant::now() + within;
    loop {
        if let Some(found) = probe().await {
            return Some(found);
        }
        if Instant::now() >= deadline {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A revoked token reads nothing more, not even from the bridge's cache: the server ends the
/// token's event stream, and the bridge stops answering from its cache when that happens.
#[test]
fn a_revoked_tokens_bridge_stops_answering_from_its_cache() {
    let db = TestDb::new();
    let pool = db.connect();
    let tokens = Tokens::new(&pool);
    let (ws, admin) = workspace(&tokens, "revoking");
    let a_token = token(&tokens, &ws, AGENT, AGENT_SCOPES);
    let server = Server::start(&db, &[]);
    let home = tempfile::tempdir().unwrap();
    let api = server.root().to_string();
    let secret = a_token.token.expose().to_string();

    block_on(async {
        let a = bridge(&api, &secret, home.path()).await;
        ok(&a, "jility_create_ticket", json!({"title": "Secret plans"})).await;
        until_cached(&a, &db.url, &api, &secret, 1, Duration::from_secs(15)).await;
        let (status, revoked) = rest(
            &api,
            reqwest::Method::DELETE,
            &format!("/tokens/{}", a_token.record.id),
            &admin,
            None,
        )
        .await;
        assert_eq!(status, 200, "{revoked}");
        // Well before the 30 s a cached ticket lives, A's reads are refused.
        let refused = poll(Duration::from_secs(10), || async {
            let answer = call(&a, "jility_get_ticket", json!({"ticket_id": "TASK-1"})).await;
            answer.is_error.then(|| answer.error())
        })
        .await
        .expect("the bridge kept answering a revoked token's reads from its cache");
        assert_eq!(refused.code, "unauthenticated", "{refused:?}");
        assert!(refused.message.contains("revoked"), "{refused:?}");
    });
}

// ---------------------------------------------------------------------------------------
// 3. A bridge's own writes invalidate its cache at once.

#[test]
fn own_writes_invalidate() {
    let db = TestDb::new();
    let pool = db.connect();
    let tokens = Tokens::new(&pool);
    let (ws, _) = workspace(&tokens, "solo");
    let a_token = token(&tokens, &ws, AGENT, AGENT_SCOPES);
    let server = Server::start(&db, &[]);
    let home = tempfile::tempdir().unwrap();
    let api = server.root().to_string();
    let secret = a_token.token.expose().to_string();

    block_on(async {
        let a = bridge(&api, &secret, home.path()).await;
        ok(
            &a,
            "jility_create_ticket",
            json!({"title": "Mine", "description": "line one"}),
        )
        .await;
        // From here on A's reads of TASK-1 come from its cache.
        let (cached, _) =
            until_cached(&a, &db.url, &api, &secret, 1, Duration::from_secs(15)).await;
        assert_eq!(ticket(&a, "TASK-1").await["title"], cached.as_str());
        let detail = ok(&a, "jility_get_ticket", json!({"ticket_id": "TASK-1"})).await;
        assert_eq!(detail["comment_count"], 0);
        let history = ok(
            &a,
            "jility_get_ticket_history",
            json!({"ticket_id": "TASK-1"}),
        )
        .await;
        assert_eq!(
            history["versions"].as_array().unwrap().len(),
            1,
            "{history}"
        );
        assert_eq!(list_numbers(&a, json!({"status": ["todo"]})).await.1, 0);

        // Each write, then the read at once: no waiting, no polling.
        ok(
            &a,
            "jility_add_comment",
            json!({"ticket_id": "TASK-1", "content": "a note of mine"}),
        )
        .await;
        let detail = ok(&a, "jility_get_ticket", json!({"ticket_id": "TASK-1"})).await;
        assert_eq!(detail["comment_count"], 1, "{detail}");
        assert_eq!(detail["comments"][0]["content"], "a note of mine");
        assert_eq!(detail["comments"][0]["author"], AGENT);

        ok(
            &a,
            "jility_update_status",
            json!({"ticket_id": "TASK-1", "status": "todo"}),
        )
        .await;
        assert_eq!(ticket(&a, "TASK-1").await["status"], "todo");
        assert_eq!(
            list_numbers(&a, json!({"status": ["todo"]})).await.0,
            ["TASK-1"]
        );

        ok(
            &a,
            "jility_update_description",
            json!({"ticket_id": "TASK-1", "operation": "append", "content": "line two"}),
        )
        .await;
        let t = ticket(&a, "TASK-1").await;
        assert_eq!(t["description"], "line one\nline two", "{t}");
        let history = ok(
            &a,
            "jility_get_ticket_history",
            json!({"ticket_id": "TASK-1"}),
        )
        .await;
        assert_eq!(
            history["versions"].as_array().unwrap().len(),
            2,
            "{history}"
        );

        // A write naming the ticket by its UUID drops what it touched too.
        let uuid = t["id"].as_str().unwrap().to_string();
        ok(
            &a,
            "jility_update_status",
            json!({"ticket_id": uuid, "status": "in_progress"}),
        )
        .await;
        assert_eq!(ticket(&a, "TASK-1").await["status"], "in_progress");

        // A new ticket shows in the cached list and search at once.
        ok(&a, "jility_search_tickets", json!({"query": "brand"})).await;
        ok(&a, "jility_create_ticket", json!({"title": "Brand new"})).await;
        let (listed, total) = list_numbers(&a, json!({})).await;
        assert_eq!(total, 2);
        assert!(listed.contains(&"TASK-2".to_string()));
        let found = ok(&a, "jility_search_tickets", json!({"query": "brand"})).await;
        assert_eq!(found["hits"][0]["number"], "TASK-2", "{found}");

        // A dependency shows in both tickets' graphs at once.
        ok(
            &a,
            "jility_get_dependency_graph",
            json!({"ticket_id": "TASK-2"}),
        )
        .await;
        ok(
            &a,
            "jility_add_dependency",
            json!({"ticket_id": "TASK-1", "depends_on": "TASK-2"}),
        )
        .await;
        let graph = ok(
            &a,
            "jility_get_dependency_graph",
            json!({"ticket_id": "TASK-2"}),
        )
        .await;
        assert!(graph.to_string().contains("TASK-1"), "{graph}");
    });
}

// ---------------------------------------------------------------------------------------
// 4. The API goes down mid-session, and comes back.

#[test]
fn api_going_down_mid_session() {
    let db = TestDb::new();
    let pool = db.connect();
    let tokens = Tokens::new(&pool);
    let (ws, _) = workspace(&tokens, "flaky");
    let a_token = token(&tokens, &ws, AGENT, AGENT_SCOPES);
    let mut server = Some(Server::start(&db, &[]));
    let url = server.as_ref().unwrap().url.clone();
    let api = server.as_ref().unwrap().root().to_string();
    let port = port_of(&url);
    let secret = a_token.token.expose().to_string();
    let home = tempfile::tempdir().unwrap();

    block_on(async {
        let a = bridge(&api, &secret, home.path()).await;
        ok(&a, "jility_create_ticket", json!({"title": "Before"})).await;
        let (cached, _) =
            until_cached(&a, &db.url, &api, &secret, 1, Duration::from_secs(15)).await;
        assert_eq!(ticket(&a, "TASK-1").await["title"], cached.as_str());

        // More of TASK-1 in the cache.
        ok(
            &a,
            "jility_get_ticket_history",
            json!({"ticket_id": "TASK-1"}),
        )
        .await;
        ok(
            &a,
            "jility_get_dependency_graph",
            json!({"ticket_id": "TASK-1"}),
        )
        .await;

        // The API goes away. A write fails (writes are never cached); it names another
        // ticket, so it drops nothing of TASK-1 from the cache…
        drop(server.take());
        let write = call(
            &a,
            "jility_add_comment",
            json!({"ticket_id": "TASK-99", "content": "During"}),
        )
        .await;
        check_network_error(&write, &url, &secret);
        // …yet the reads whose answers the cache held fail too: with the event stream
        // gone, the cache no longer answers.
        for (tool, args) in [
            ("jility_get_ticket", json!({"ticket_id": "TASK-1"})),
            ("jility_get_ticket_history", json!({"ticket_id": "TASK-1"})),
            (
                "jility_get_dependency_graph",
                json!({"ticket_id": "TASK-1"}),
            ),
            ("jility_list_tickets", json!({})),
            ("jility_create_ticket", json!({"title": "During"})),
        ] {
            let down = call(&a, tool, args).await;
            assert!(
                down.is_error,
                "{tool} while the API is down is answered from the cache: {}",
                down.text
            );
            check_network_error(&down, &url, &secret);
        }
        // The bridge lives on.
        a.ping().await;

        // Meanwhile the ticket changes (behind any API).
        retitle_in_database(&db.url, 1, "Changed while the API was down").await;

        // The API comes back on the same port: calls work again, and nothing stale is
        // served from before.
        let listen = format!("127.0.0.1:{port}");
        let db_ref = &db;
        let restarted = tokio::task::block_in_place(|| Server::start_at(db_ref, &listen, &[]));
        let t = ticket(&a, "TASK-1").await;
        assert_eq!(t["title"], "Changed while the API was down");
        let created = ok(&a, "jility_create_ticket", json!({"title": "After"})).await;
        assert_eq!(
            created["ticket"]["number"], "TASK-2",
            "the failed write wrote nothing"
        );
        a.ping().await;

        // The bridge follows the event stream again (it reconnects on its own): its cache
        // answers once more.
        until_cached(&a, &db.url, &api, &secret, 2, Duration::from_secs(40)).await;
        let stderr = a.shutdown().await;
        assert!(
            !stderr.contains(&secret),
            "the bridge logs the token: {stderr}"
        );
        drop(restarted);
    });
}

/// `answer` is the `network_error` of an unreachable API at `url`: retryable, naming the
/// URL, never the token.
fn check_network_error(answer: &Answer, url: &str, secret: &str) {
    let error = answer.error();
    assert_eq!(error.code, "network_error", "{}", answer.text);
    assert!(error.retryable, "{}", answer.structured);
    assert!(
        error.message.contains(url),
        "names {url}: {}",
        error.message
    );
    assert!(
        !answer.text.contains(secret),
        "the token is shown: {}",
        answer.text
    );
    assert!(
        !answer.structured.to_string().contains(secret),
        "the token is in the answer: {}",
        answer.structured
    );
    assert!(answer.text.starts_with("❌ Error: "), "{}", answer.text);
}

// ---------------------------------------------------------------------------------------
// 5. Four bridges create at once.

#[test]
fn four_bridges_create_at_once() {
    const BRIDGES: usize = 4;
    const EACH: usize = 50;
    let db = TestDb::new();
    let pool = db.connect();
    let tokens = Tokens::new(&pool);
    let (ws, boot) = workspace(&tokens, "crowd");
    let agents: Vec<(String, String)> = (0..BRIDGES)
        .map(|i| {
            let name = format!("agent-{i}");
            let minted = token(&tokens, &ws, &name, AGENT_SCOPES);
            (name, minted.token.expose().to_string())
        })
        .collect();
    let server = Server::start(&db, &["--rate-limit", "100000"]);
    let api = server.root().to_string();
    let homes: Vec<_> = (0..BRIDGES).map(|_| tempfile::tempdir().unwrap()).collect();

    block_on(async {
        let mut bridges = Vec::new();
        for ((_, secret), home) in agents.iter().zip(&homes) {
            bridges.push(bridge(&api, secret, home.path()).await);
        }
        // Every bridge creates its 50 at once, all bridges at once.
        let created =
            futures::future::join_all(bridges.iter().enumerate().map(|(i, b)| async move {
                futures::future::join_all((0..EACH).map(|n| async move {
                    let data = ok(
                        b,
                        "jility_create_ticket",
                        json!({"title": format!("Ticket {n} of agent {i}")}),
                    )
                    .await;
                    let ticket = &data["ticket"];
                    assert_eq!(ticket["created_by"], format!("agent-{i}"));
                    assert_eq!(ticket["title"], format!("Ticket {n} of agent {i}"));
                    ticket["number"].as_str().unwrap().to_string()
                }))
                .await
            }))
            .await;
        let answered: BTreeSet<String> = created.iter().flatten().cloned().collect();
        assert_eq!(
            answered.len(),
            BRIDGES * EACH,
            "every create got its own number"
        );
        let expected: BTreeSet<String> =
            (1..=BRIDGES * EACH).map(|n| format!("TASK-{n}")).collect();
        assert_eq!(answered, expected);

        // Through the API, page by page: each exactly once.
        let mut seen = Vec::new();
        let mut path = "/tickets?limit=37".to_string();
        for _ in 0..20 {
            let (status, page) = rest(&api, reqwest::Method::GET, &path, &boot, None).await;
            assert_eq!(status, 200, "{page}");
            assert_eq!(page["page"]["total"], BRIDGES * EACH);
            seen.extend(
                page["tickets"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|t| t["number"].as_str().unwrap().to_string()),
            );
            match page["page"]["next_cursor"].as_str() {
                Some(cursor) => {
                    let cursor: String =
                        form_urlencoded::byte_serialize(cursor.as_bytes()).collect();
                    path = format!("/tickets?limit=37&cursor={cursor}");
                }
                None => break,
            }
        }
        assert_eq!(seen.len(), BRIDGES * EACH, "no ticket twice, none lost");
        assert_eq!(seen.iter().cloned().collect::<BTreeSet<_>>(), expected);

        // Through a bridge, page by page.
        let mut seen = Vec::new();
        let mut args = json!({"limit": 60});
        for _ in 0..20 {
            let answer = call(&bridges[0], "jility_list_tickets", args.clone()).await;
            assert_eq!(answer.structured["page"]["total"], BRIDGES * EACH);
            seen.extend(
                answer.data()["tickets"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|t| t["number"].as_str().unwrap().to_string()),
            );
            match answer.next_cursor() {
                Some(cursor) => args = json!({"limit": 60, "cursor": cursor}),
                None => break,
            }
        }
        assert_eq!(seen.len(), BRIDGES * EACH, "no ticket twice, none lost");
        assert_eq!(seen.into_iter().collect::<BTreeSet<_>>(), expected);
    });
}

// ---------------------------------------------------------------------------------------
// 6. The API's errors through the bridge.

#[test]
fn errors_through_the_bridge() {
    let db = TestDb::new();
    let pool = db.connect();
    let tokens = Tokens::new(&pool);
    let (ws, boot) = workspace(&tokens, "strict");
    let reader = token(&tokens, &ws, "reader", "tickets:read");
    let commenter = token(&tokens, &ws, "commenter", "tickets:read,comments:write");
    // An expiry cannot be minted in the past: mint one for tomorrow, then let time pass.
    let expired = tokens
        .create(
            ws.id,
            &NewToken {
                name: "old".to_string(),
                scopes: ScopeSet::full_access(),
                expires_at: Some(Utc::now() + TimeDelta::days(1)),
                created_by: "tester".to_string(),
            },
        )
        .unwrap();
    let expired_at =
        (Utc::now() - TimeDelta::hours(1)).to_rfc3339_opts(SecondsFormat::Millis, true);
    db.client()
        .execute(
            "UPDATE api_tokens SET expires_at = $2 WHERE id = $1",
            &[&expired.record.id, &expired_at],
        )
        .unwrap();
    let revoked = token(&tokens, &ws, "gone", "full_access");
    tokens
        .revoke(ws.id, &TokenRef::Id(revoked.record.id))
        .unwrap();
    let server = Server::start(&db, &[]);
    let api = server.root().to_string();
    let limited_server = Server::start(&db, &["--rate-limit", "3"]);
    let limited_api = limited_server.root().to_string();
    let limited = token(&tokens, &ws, "busy", AGENT_SCOPES);
    let homes: Vec<_> = (0..6).map(|_| tempfile::tempdir().unwrap()).collect();
    let nothing_port = free_port();

    block_on(async {
        let (status, _) = rest(
            &api,
            reqwest::Method::POST,
            "/tickets",
            &boot,
            Some(json!({"title": "Exists"})),
        )
        .await;
        assert_eq!(status, 201);

        // A read-only token reads, and may not write.
        let secret = reader.token.expose();
        let r = bridge(&api, secret, homes[0].path()).await;
        assert_eq!(ticket(&r, "TASK-1").await["title"], "Exists");
        let denied = call(&r, "jility_create_ticket", json!({"title": "Nope"})).await;
        let error = denied.error();
        assert_eq!(error.code, "permission_denied", "{}", denied.text);
        assert!(error.message.contains("tickets:write"), "{}", error.message);
        assert!(!error.retryable);
        assert!(!denied.text.contains(secret));
        let denied = err(
            &r,
            "jility_add_comment",
            json!({"ticket_id": "TASK-1", "content": "hi"}),
        )
        .await;
        assert_eq!(denied.code, "permission_denied");
        assert!(
            denied.message.contains("comments:write"),
            "{}",
            denied.message
        );
        // A comment-only token comments, and may not move tickets.
        let c = bridge(&api, commenter.token.expose(), homes[1].path()).await;
        ok(
            &c,
            "jility_add_comment",
            json!({"ticket_id": "TASK-1", "content": "hi"}),
        )
        .await;
        let denied = err(
            &c,
            "jility_update_status",
            json!({"ticket_id": "TASK-1", "status": "todo"}),
        )
        .await;
        assert_eq!(denied.code, "permission_denied");
        assert!(
            denied.message.contains("tickets:write"),
            "{}",
            denied.message
        );
        // Nothing was written by the refused calls.
        let t = ticket(&c, "TASK-1").await;
        assert_eq!(t["status"], "backlog");
        let listed = list_numbers(&c, json!({})).await;
        assert_eq!(listed.1, 1);

        // An expired token, a revoked one: unauthenticated, saying why, reads and writes.
        for (minted, home, why) in [
            (&expired, homes[2].path(), "expired"),
            (&revoked, homes[3].path(), "revoked"),
        ] {
            let secret = minted.token.expose();
            let x = bridge(&api, secret, home).await;
            for (tool, args) in [
                ("jility_get_ticket", json!({"ticket_id": "TASK-1"})),
                ("jility_list_tickets", json!({})),
                ("jility_create_ticket", json!({"title": "x"})),
            ] {
                let answer = call(&x, tool, args).await;
                let error = answer.error();
                assert_eq!(
                    error.code, "unauthenticated",
                    "{why} {tool}: {}",
                    answer.text
                );
                assert!(error.message.contains(why), "{why}: {}", error.message);
                assert!(!error.retryable);
                assert!(!answer.text.contains(secret), "{}", answer.text);
            }
            let stderr = x.shutdown().await;
            assert!(
                !stderr.contains(secret),
                "the bridge logs the token: {stderr}"
            );
        }
        let answer = call(
            &bridge(&api, expired.token.expose(), homes[2].path()).await,
            "jility_get_ticket",
            json!({"ticket_id": "TASK-1"}),
        )
        .await;
        assert!(
            answer.error().message.contains(&expired_at[..19]),
            "says when: {}",
            answer.text
        );

        // Over the rate limit: rate_limit, retryable, with the wait.
        let secret = limited.token.expose();
        let busy = bridge(&limited_api, secret, homes[4].path()).await;
        let mut refused = None;
        for n in 0..12 {
            // Writes: never answered from the cache.
            let answer = call(
                &busy,
                "jility_create_ticket",
                json!({"title": format!("Busy {n}")}),
            )
            .await;
            if answer.is_error {
                refused = Some(answer);
                break;
            }
        }
        let refused = refused.expect("a refusal within 12 calls of a limit of 3 a minute");
        let error = refused.error();
        assert_eq!(error.code, "rate_limit", "{}", refused.text);
        assert!(error.retryable, "{}", refused.structured);
        let wait = error.retry_after_secs.expect("retry_after_secs");
        assert!((1..=65).contains(&wait), "{wait}");
        assert!(!refused.text.contains(secret));
        let again = call(&busy, "jility_get_ticket", json!({"ticket_id": "TASK-1"})).await;
        assert_eq!(again.error().code, "rate_limit", "{}", again.text);

        // An API where nothing listens: network_error, naming the URL, not the token.
        let nowhere = format!("http://127.0.0.1:{nothing_port}");
        let secret = boot.as_str();
        let n = bridge(&nowhere, secret, homes[5].path()).await;
        for (tool, args) in [
            ("jility_get_ticket", json!({"ticket_id": "TASK-1"})),
            ("jility_create_ticket", json!({"title": "x"})),
        ] {
            let answer = call(&n, tool, args).await;
            check_network_error(&answer, &format!("{nowhere}/api/v1"), secret);
        }
        n.ping().await;
        let stderr = n.shutdown().await;
        assert!(
            !stderr.contains(secret),
            "the bridge logs the token: {stderr}"
        );
    });
}

// ---------------------------------------------------------------------------------------
// 7. HTTPS only.

#[test]
fn https_only() {
    let home = tempfile::tempdir().unwrap();
    let secret = format!("jil_live_{}", "A".repeat(40));
    for url in [
        "http://example.com",
        "http://10.1.2.3:3900",
        "http://tickets.example.com/api/v1",
    ] {
        let out = Command::new(BIN)
            .arg("--mcp-server")
            .current_dir(home.path())
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("JILITY_MODE", "cloud")
            .env("JILITY_API_URL", url)
            .env("JILITY_API_TOKEN", &secret)
            .env("HOME", home.path())
            .env("XDG_CONFIG_HOME", home.path().join("config"))
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{url}: {out:?}");
        assert!(out.status.code().is_some(), "{url}: exits, not killed");
        assert!(out.stdout.is_empty(), "{url}: {out:?}");
        assert!(stderr.contains("HTTPS only"), "{url}: {stderr}");
        assert!(
            !stderr.contains(&secret),
            "{url}: the token is shown: {stderr}"
        );
    }
    assert!(!home.path().join(".jility").exists());
}
