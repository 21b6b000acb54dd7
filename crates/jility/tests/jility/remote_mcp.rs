//! MCP at `/mcp` on `jility serve`, through the built binary, rmcp's client and a real
//! PostgreSQL: the tools a token's scopes show, hidden tools refused, tokens checked before
//! MCP is spoken, every tool run in the token's workspace as the token's name, and tenant
//! isolation tool by tool.
//!
//! Each test makes its own database on the server at `JILITY_TEST_DATABASE_URL` (default
//! `postgres://postgres@127.0.0.1:5432/test`) and drops it when done, failed or not.
//!
//! The database helpers are blocking (the `postgres` crate runs its own runtime), so the
//! tests are plain `#[test]`s; the MCP client runs on a runtime of its own ([`Remote`]).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stderr
)] // assertions in tests; the server's log is passed on to stderr

use std::collections::BTreeSet;
use std::time::Duration;

use jility_cloud::auth::{TokenRef, Tokens};
use mcp_testkit::McpProcess;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::cloud;
use crate::pg;

use cloud::*;
use pg::TestDb;

/// Every MCP tool, sorted.
const TOOLS: [&str; 39] = [
    "jility_add_comment",
    "jility_add_dependency",
    "jility_add_to_sprint",
    "jility_assign_ticket",
    "jility_bulk_assign",
    "jility_bulk_update",
    "jility_claim_ticket",
    "jility_complete_sprint",
    "jility_create_from_template",
    "jility_create_sprint",
    "jility_create_ticket",
    "jility_create_tickets_batch",
    "jility_delete_ticket",
    "jility_delete_view",
    "jility_estimate_effort",
    "jility_get_dependency_graph",
    "jility_get_epic",
    "jility_get_ticket",
    "jility_get_ticket_history",
    "jility_link_commit",
    "jility_list_epics",
    "jility_list_notifications",
    "jility_list_sprints",
    "jility_list_templates",
    "jility_list_tickets",
    "jility_list_views",
    "jility_mark_notifications_read",
    "jility_plan_sprint",
    "jility_remove_dependency",
    "jility_remove_from_sprint",
    "jility_revert_description",
    "jility_save_view",
    "jility_search_tickets",
    "jility_sprint_stats",
    "jility_start_sprint",
    "jility_suggest_related",
    "jility_update_description",
    "jility_update_status",
    "jility_watch_ticket",
];

/// The tools `tickets:read` allows, sorted.
const READ_TOOLS: [&str; 17] = [
    "jility_estimate_effort",
    "jility_get_dependency_graph",
    "jility_get_epic",
    "jility_get_ticket",
    "jility_get_ticket_history",
    "jility_list_epics",
    "jility_list_notifications",
    "jility_list_sprints",
    "jility_list_templates",
    "jility_list_tickets",
    "jility_list_views",
    "jility_mark_notifications_read",
    "jility_plan_sprint",
    "jility_search_tickets",
    "jility_sprint_stats",
    "jility_suggest_related",
    "jility_watch_ticket",
];

/// Requests per minute per token for these servers: an MCP session makes many.
const RATE_LIMIT: &str = "100000";

fn start(db: &TestDb) -> Server {
    Server::start(db, &["--rate-limit", RATE_LIMIT])
}

/// An MCP client of `/mcp` with a bearer token, on a runtime of its own (the client is
/// dropped before the runtime: fields drop in order).
struct Remote {
    mcp: McpProcess,
    rt: tokio::runtime::Runtime,
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

fn mcp_url(server: &Server) -> String {
    format!("{}/mcp", server.root())
}

impl Remote {
    fn connect(server: &Server, token: &str) -> Self {
        let rt = runtime();
        let mcp = rt
            .block_on(McpProcess::connect_http(&mcp_url(server), Some(token)))
            .unwrap_or_else(|e| panic!("cannot connect to /mcp: {e:#}\n{}", server.log()));
        Self { mcp, rt }
    }

    /// The names of the tools `tools/list` shows, sorted.
    fn tools(&self) -> Vec<String> {
        self.rt
            .block_on(self.mcp.tools())
            .into_iter()
            .map(|t| t.name.to_string())
            .collect()
    }

    /// Call `tool`: its `structuredContent` envelope, checked against `isError`.
    fn call(&self, tool: &str, args: Value) -> Value {
        let result = self.rt.block_on(self.mcp.call(tool, args.clone()));
        let structured = result
            .structured_content
            .clone()
            .unwrap_or_else(|| panic!("{tool} {args}: no structuredContent in {result:?}"));
        let is_error = result.is_error.unwrap_or(false);
        assert_eq!(
            is_error,
            structured["status"] == "error",
            "{tool} {args}: isError={is_error} but {structured}"
        );
        let text = result
            .content
            .first()
            .and_then(|c| c.as_text())
            .map(|t| t.text.clone())
            .unwrap_or_else(|| panic!("{tool}: no text content in {result:?}"));
        assert!(!text.trim().is_empty(), "{tool}: empty markdown");
        structured
    }

    /// Call a tool that must succeed: its envelope (`data`, and `page` for listings).
    fn ok(&self, tool: &str, args: Value) -> Value {
        let envelope = self.call(tool, args.clone());
        assert_eq!(envelope["status"], "ok", "{tool} {args}: {envelope}");
        envelope
    }

    /// Call a tool that must succeed: its `data`.
    fn data(&self, tool: &str, args: Value) -> Value {
        self.ok(tool, args)["data"].clone()
    }

    /// Call a tool that must fail: its error object.
    fn err(&self, tool: &str, args: Value) -> Value {
        let envelope = self.call(tool, args.clone());
        assert_eq!(envelope["status"], "error", "{tool} {args}: {envelope}");
        let error = envelope["error"].clone();
        for member in ["code", "message", "hint", "retryable"] {
            assert!(!error[member].is_null(), "{tool}: no {member} in {error}");
        }
        error
    }
}

fn names(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

fn numbers(list: &Value) -> Vec<String> {
    list.as_array()
        .unwrap_or_else(|| panic!("not an array: {list}"))
        .iter()
        .map(|t| t["number"].as_str().unwrap().to_string())
        .collect()
}

fn sorted(mut items: Vec<String>) -> Vec<String> {
    items.sort();
    items
}

/// A ticket as the REST API shows it to `token` (which must see it).
fn detail(http: &reqwest::blocking::Client, server: &Server, token: &str, id: &str) -> Value {
    let got = call_json(
        http,
        server,
        Method::GET,
        &format!("/tickets/{id}"),
        token,
        None,
    );
    assert_eq!(got.status, StatusCode::OK, "{id}: {}", got.body);
    got.body
}

/// The numbers of every ticket of `token`'s workspace, through REST.
fn all_tickets(http: &reqwest::blocking::Client, server: &Server, token: &str) -> Vec<String> {
    let listed = call_json(http, server, Method::GET, "/tickets?limit=200", token, None);
    assert_eq!(listed.status, StatusCode::OK, "{}", listed.body);
    sorted(numbers(&listed.body["tickets"]))
}

// ---------------------------------------------------------------------------------------
// 1. tools/list follows the token's scopes

#[test]
fn tools_list_shows_what_the_tokens_scopes_allow() {
    let db = TestDb::new();
    let pool = db.connect();
    let tokens = Tokens::new(&pool);
    let (alpha, full) = workspace(&tokens, "alpha");
    let server = start(&db);

    let everything = Remote::connect(&server, &full);
    assert_eq!(everything.tools(), names(&TOOLS), "full_access sees all");

    let cases: [(&str, Vec<String>); 5] = [
        ("tickets:read", names(&READ_TOOLS)),
        ("comments:write", names(&["jility_add_comment"])),
        ("tickets:read,comments:write", {
            let mut seven = names(&READ_TOOLS);
            seven.push("jility_add_comment".into());
            sorted(seven)
        }),
        // The writes other than comments: the 33 less the 12 reads and the comment.
        ("tickets:write", {
            let shown: BTreeSet<&str> = READ_TOOLS
                .iter()
                .copied()
                .chain(["jility_add_comment"])
                .collect();
            TOOLS
                .iter()
                .filter(|t| !shown.contains(*t) && **t != "jility_delete_ticket")
                .map(|t| t.to_string())
                .collect()
        }),
        // Deleting a ticket needs tickets:delete, and nothing else does.
        ("tickets:delete", names(&["jility_delete_ticket"])),
    ];
    for (i, (scopes, expected)) in cases.into_iter().enumerate() {
        let minted = token(&tokens, &alpha, &format!("scoped-{i}"), scopes);
        let remote = Remote::connect(&server, minted.token.expose());
        let shown = remote.tools();
        assert_eq!(shown, expected, "{scopes}");
        match scopes {
            "tickets:read" => assert_eq!(shown.len(), 17),
            "comments:write" => assert_eq!(shown.len(), 1),
            "tickets:read,comments:write" => assert_eq!(shown.len(), 18),
            "tickets:write" => assert_eq!(shown.len(), 20),
            _ => {}
        }
    }
    // Two sessions with different tokens on one server keep their own lists.
    assert_eq!(everything.tools().len(), 39);
}

// ---------------------------------------------------------------------------------------
// 2. A hidden tool's call is permission_denied, and does nothing

#[test]
fn calling_a_hidden_tool_is_permission_denied_and_changes_nothing() {
    let db = TestDb::new();
    let pool = db.connect();
    let tokens = Tokens::new(&pool);
    let (alpha, full) = workspace(&tokens, "alpha");
    let reader = token(&tokens, &alpha, "reader", "tickets:read");
    let commenter = token(&tokens, &alpha, "commenter", "comments:write");
    let server = start(&db);
    let http = client();
    let created = call_json(
        &http,
        &server,
        Method::POST,
        "/tickets",
        &full,
        Some(json!({"title": "Existing work", "description": "Keep me as I am"})),
    );
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    let before = detail(&http, &server, &full, "TASK-1");

    let read = Remote::connect(&server, reader.token.expose());
    for args in [
        json!({"title": "Sneaky"}),
        // Arguments that would fail validation are not even looked at.
        json!({"bogus": 1}),
        json!({}),
        json!({"title": 42, "story_points": "lots"}),
    ] {
        let err = read.err("jility_create_ticket", args.clone());
        assert_eq!(err["code"], "permission_denied", "{args}: {err}");
        let message = err["message"].as_str().unwrap();
        assert!(message.contains("tickets:write"), "{args}: {message}");
        assert_eq!(err["retryable"], false);
    }
    for (tool, args, scope) in [
        (
            "jility_create_tickets_batch",
            json!({"tickets": [{"title": "a"}]}),
            "tickets:write",
        ),
        (
            "jility_claim_ticket",
            json!({"ticket_id": "TASK-1"}),
            "tickets:write",
        ),
        (
            "jility_update_description",
            json!({"ticket_id": "TASK-1", "operation": "replace_all", "content": "gone"}),
            "tickets:write",
        ),
        (
            "jility_add_comment",
            json!({"ticket_id": "TASK-1", "content": "sneaky"}),
            "comments:write",
        ),
        (
            "jility_create_from_template",
            json!({"template": "bug-fix", "variables": {"summary": "x"}}),
            "tickets:write",
        ),
    ] {
        let err = read.err(tool, args);
        assert_eq!(err["code"], "permission_denied", "{tool}: {err}");
        assert!(
            err["message"].as_str().unwrap().contains(scope),
            "{tool}: {err}"
        );
    }
    // A comments:write token cannot read.
    let comment = Remote::connect(&server, commenter.token.expose());
    let err = comment.err("jility_get_ticket", json!({"ticket_id": "TASK-1"}));
    assert_eq!(err["code"], "permission_denied", "{err}");
    assert!(err["message"].as_str().unwrap().contains("tickets:read"));
    // Reads work for the reader.
    let got = read.data("jility_get_ticket", json!({"ticket_id": "TASK-1"}));
    assert_eq!(got["ticket"]["title"], "Existing work");

    // Nothing was created or changed.
    assert_eq!(all_tickets(&http, &server, &full), ["TASK-1"]);
    assert_eq!(detail(&http, &server, &full, "TASK-1"), before);

    // What the comments:write token may do, it does.
    let added = comment.data(
        "jility_add_comment",
        json!({"ticket_id": "TASK-1", "content": "Allowed"}),
    );
    assert_eq!(added["comment"]["author"], "commenter");
    let after = detail(&http, &server, &full, "TASK-1");
    assert_eq!(after["comment_count"], 1);
    assert_eq!(after["comments"][0]["content"], "Allowed");
}

/// A write refused at `/mcp` is recorded in the audit log as the same write refused over
/// REST is (the API's contract: every write, answered or refused after authentication).
#[test]
fn a_hidden_tool_refused_is_audited_like_a_refused_rest_write() {
    let db = TestDb::new();
    let pool = db.connect();
    let tokens = Tokens::new(&pool);
    let (alpha, full) = workspace(&tokens, "alpha");
    let reader = token(&tokens, &alpha, "reader", "tickets:read");
    let server = start(&db);
    let http = client();
    let read = Remote::connect(&server, reader.token.expose());
    let err = read.err("jility_create_ticket", json!({"title": "Sneaky"}));
    assert_eq!(err["code"], "permission_denied");
    let rest = call_json(
        &http,
        &server,
        Method::POST,
        "/tickets",
        reader.token.expose(),
        Some(json!({"title": "Sneaky"})),
    );
    assert_eq!(rest.status, StatusCode::FORBIDDEN);
    let listed = call_json(&http, &server, Method::GET, "/audit", &full, None);
    assert_eq!(listed.status, StatusCode::OK, "{}", listed.body);
    let refused: Vec<&Value> = listed.body["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["operation"] == "tickets.create" && e["status"] == 403)
        .collect();
    assert_eq!(
        refused.len(),
        2,
        "both refusals (MCP and REST) are audited: {}",
        listed.body
    );
    assert!(refused.iter().all(|e| e["actor"] == "reader"));
}

// ---------------------------------------------------------------------------------------
// 3. Tokens are checked before MCP is spoken

/// POST an `initialize` to `/mcp` with `authorization` (raw header value) if any.
fn initialize(
    http: &reqwest::blocking::Client,
    server: &Server,
    authorization: Option<&str>,
) -> (StatusCode, reqwest::header::HeaderMap, String) {
    let body = json!({
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "raw-test", "version": "1.0"}
        }
    });
    let mut request = http
        .post(mcp_url(server))
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(body.to_string());
    if let Some(value) = authorization {
        request = request.header("authorization", value);
    }
    let response = request.send().unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    (status, headers, response.text().unwrap())
}

#[test]
fn mcp_refuses_missing_malformed_unknown_revoked_and_expired_tokens_with_401() {
    let db = TestDb::new();
    let pool = db.connect();
    let tokens = Tokens::new(&pool);
    let (alpha, full) = workspace(&tokens, "alpha");
    let expired = token(&tokens, &alpha, "old", "full_access");
    db.client()
        .execute(
            "UPDATE api_tokens SET expires_at = '2020-01-02T03:04:05.000Z' WHERE id = $1",
            &[&expired.record.id],
        )
        .unwrap();
    let revoked = token(&tokens, &alpha, "gone", "full_access");
    tokens
        .revoke(alpha.id, &TokenRef::Id(revoked.record.id))
        .unwrap();
    let server = start(&db);
    let http = client();

    // The control: a good token is answered by MCP.
    let (status, headers, text) = initialize(&http, &server, Some(&format!("Bearer {full}")));
    assert_eq!(status, StatusCode::OK, "{text}");
    assert!(headers.get("www-authenticate").is_none());
    assert!(text.contains("\"serverInfo\""), "{text}");

    let unknown = format!("jil_live_{}", "Q".repeat(40));
    let bearer = |t: &str| format!("Bearer {t}");
    let cases: [(&str, Option<String>, &str); 6] = [
        ("no token", None, "no API token"),
        (
            "another scheme",
            Some("Basic dXNlcjpwYXNz".into()),
            "Bearer",
        ),
        (
            "a malformed token",
            Some(bearer("jil_live_short")),
            "malformed",
        ),
        ("an unknown token", Some(bearer(&unknown)), "not valid"),
        (
            "an expired token",
            Some(bearer(expired.token.expose())),
            "expired",
        ),
        (
            "a revoked token",
            Some(bearer(revoked.token.expose())),
            "revoked",
        ),
    ];
    for (what, authorization, says) in &cases {
        let (status, headers, text) = initialize(&http, &server, authorization.as_deref());
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{what}: {text}");
        // The challenge says where OAuth starts (the MCP authorization spec, RFC 9728).
        let challenge = headers
            .get("www-authenticate")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default();
        assert!(
            challenge.starts_with("Bearer resource_metadata=\"")
                && challenge.contains("/.well-known/oauth-protected-resource/mcp\""),
            "{what}: {challenge}"
        );
        let body: Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{what}: not JSON ({e}): {text}"));
        assert_eq!(body["error"]["code"], "unauthenticated", "{what}: {body}");
        let message = body["error"]["message"].as_str().unwrap();
        assert!(message.contains(says), "{what}: {message}");
        assert!(!text.contains("serverInfo"), "{what}: MCP answered");
        if let Some(authorization) = authorization {
            let secret = authorization.trim_start_matches("Bearer ");
            assert!(!text.contains(secret), "{what}: the token is echoed");
        }
    }

    // rmcp's client sees the 401 at connect and gives up: no session.
    let rt = runtime();
    for token in [
        None,
        Some("jil_live_short"),
        Some(unknown.as_str()),
        Some(expired.token.expose()),
        Some(revoked.token.expose()),
    ] {
        let connected = rt.block_on(McpProcess::connect_http(&mcp_url(&server), token));
        assert!(connected.is_err(), "{token:?}: connected");
    }

    // A token revoked during a session: its next request is refused.
    let minted = token(&tokens, &alpha, "short-lived", "full_access");
    let remote = Remote::connect(&server, minted.token.expose());
    remote.data("jility_list_tickets", json!({}));
    tokens
        .revoke(alpha.id, &TokenRef::Id(minted.record.id))
        .unwrap();
    let params = rmcp::model::CallToolRequestParams::new("jility_create_ticket".to_string())
        .with_arguments(
            json!({"title": "after revocation"})
                .as_object()
                .unwrap()
                .clone(),
        );
    let answered = remote.rt.block_on(async {
        tokio::time::timeout(Duration::from_secs(30), remote.mcp.peer().call_tool(params)).await
    });
    match answered {
        Err(_) => panic!("the call after revocation hung"),
        Ok(Ok(result)) => panic!("a revoked token's call was answered: {result:?}"),
        Ok(Err(_)) => {}
    }
    assert!(all_tickets(&http, &server, &full).is_empty());
    // No token reaches the server's log.
    let log = server.log();
    for secret in [
        full.as_str(),
        expired.token.expose(),
        revoked.token.expose(),
        minted.token.expose(),
        unknown.as_str(),
    ] {
        assert!(!log.contains(secret), "a token in the log");
    }
}

#[test]
fn a_session_answers_only_to_the_token_that_opened_it() {
    let db = TestDb::new();
    let pool = db.connect();
    let tokens = Tokens::new(&pool);
    let (alpha, owner) = workspace(&tokens, "alpha");
    let colleague = token(&tokens, &alpha, "colleague", "full_access");
    let (_beta, stranger) = workspace(&tokens, "beta");
    let server = start(&db);
    let http = client();

    let (status, headers, text) = initialize(&http, &server, Some(&format!("Bearer {owner}")));
    assert_eq!(status, StatusCode::OK, "{text}");
    let session = headers
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .expect("a session id")
        .to_string();
    let send = |method: Method, token: &str, body: Option<Value>| {
        let mut request = http
            .request(method, mcp_url(&server))
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .header("mcp-protocol-version", "2025-06-18")
            .header("mcp-session-id", &session)
            .header("authorization", format!("Bearer {token}"));
        if let Some(body) = body {
            request = request.body(body.to_string());
        }
        let response = request.send().unwrap();
        (response.status(), response.text().unwrap())
    };
    let ping = |id: i64| Some(json!({"jsonrpc": "2.0", "id": id, "method": "ping"}));
    let (status, text) = send(
        Method::POST,
        &owner,
        Some(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})),
    );
    assert_eq!(status, StatusCode::ACCEPTED, "{text}");

    // Another workspace's token, and another token of the same workspace, are told that the
    // session does not exist, whatever they ask of it.
    for other in [stranger.as_str(), colleague.token.expose()] {
        for (method, body) in [
            (Method::POST, ping(2)),
            (Method::GET, None),
            (Method::DELETE, None),
        ] {
            let (status, text) = send(method.clone(), other, body);
            assert_eq!(status, StatusCode::NOT_FOUND, "{method}: {text}");
            let refusal: Value = serde_json::from_str(&text).unwrap();
            assert_eq!(refusal["error"]["code"], -32001, "{method}: {refusal}");
        }
    }
    // The owner's session goes on, and ends when the owner ends it.
    let (status, text) = send(Method::POST, &owner, ping(3));
    assert_eq!(status, StatusCode::OK, "{text}");
    assert!(text.contains(r#""id":3"#), "{text}");
    let (status, text) = send(Method::DELETE, &owner, None);
    assert!(status.is_success(), "{status}: {text}");
    let (status, text) = send(Method::POST, &owner, ping(4));
    assert_eq!(status, StatusCode::NOT_FOUND, "{text}");
}

#[test]
fn slow_clients_are_cut_off_and_sessions_are_bounded() {
    let db = TestDb::new();
    let pool = db.connect();
    let tokens = Tokens::new(&pool);
    let (_alpha, owner) = workspace(&tokens, "alpha");
    let server = Server::start_with(
        &db,
        "127.0.0.1:0",
        &["--rate-limit", RATE_LIMIT],
        &[
            ("MCP_HTTP_READ_TIMEOUT_SECS", "1"),
            ("MCP_HTTP_MAX_SESSIONS", "3"),
            // One token here: its shares (by default half and a quarter) made the whole
            // server, so that the server's own limit is what is checked.
            ("MCP_HTTP_MAX_SESSIONS_PER_TENANT", "3"),
            ("MCP_HTTP_MAX_SESSIONS_PER_TOKEN", "3"),
        ],
    );
    runtime().block_on(mcp_testkit::edge::check_http_limits(
        &mcp_url(&server),
        Some(&owner),
    ));
    // The API's own routes: a body that does not arrive in time is refused with a hint that
    // says so (not "send a smaller body").
    use std::io::{Read as _, Write as _};
    let rest = server.url.trim_start_matches("http://");
    let (addr, path) = rest.split_once('/').unwrap();
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    write!(
        stream,
        "POST /{path}/tickets HTTP/1.1\r\nHost: {addr}\r\nauthorization: Bearer {owner}\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{{\"title\""
    )
    .unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    assert!(answer.contains("did not arrive"), "{answer}");
    assert!(answer.contains("MCP_HTTP_READ_TIMEOUT_SECS"), "{answer}");
}

// ---------------------------------------------------------------------------------------
// 4. Every tool, as the token's name

#[test]
fn every_tool_works_through_mcp_as_the_tokens_name() {
    let db = TestDb::new();
    let pool = db.connect();
    let tokens = Tokens::new(&pool);
    let (alpha, _bootstrap) = workspace(&tokens, "alpha");
    let agent = token(&tokens, &alpha, "agent-smith", "full_access");
    let agent_token = agent.token.expose().to_string();
    let server = start(&db);
    let http = client();
    let mcp = Remote::connect(&server, &agent_token);
    let mut used = BTreeSet::new();
    let mut tool = |name: &'static str| {
        used.insert(name);
        name
    };

    let original = "## Goal\nLet users sign in.\n\n## Acceptance Criteria\n- [ ] the form works";
    let created = mcp.data(
        tool("jility_create_ticket"),
        json!({
            "title": "Build the login API",
            "description": original,
            "labels": ["backend"],
            "story_points": 5
        }),
    );
    let ticket = &created["ticket"];
    assert_eq!(ticket["number"], "TASK-1");
    assert_eq!(ticket["created_by"], "agent-smith", "{created}");
    assert_eq!(ticket["updated_by"], "agent-smith");
    assert_eq!(ticket["status"], "backlog");
    assert_eq!(ticket["story_points"], 5);
    let uuid = ticket["id"].as_str().unwrap().to_string();

    let batch = mcp.data(
        tool("jility_create_tickets_batch"),
        json!({
            "parent_id": "TASK-1",
            "tickets": [
                {"title": "Design the session table", "story_points": 2},
                {"title": "Write the login handler", "story_points": 3, "depends_on": ["#1"]}
            ]
        }),
    );
    assert_eq!(numbers(&batch["tickets"]), ["TASK-2", "TASK-3"], "{batch}");
    assert_eq!(batch["tickets"][1]["depends_on"], json!(["TASK-2"]));
    assert_eq!(batch["parent"]["number"], "TASK-1");
    assert_eq!(batch["total_story_points"], 5);

    let got = mcp.data(tool("jility_get_ticket"), json!({"ticket_id": uuid}));
    assert_eq!(got["ticket"]["number"], "TASK-1");
    assert_eq!(got["ticket"]["description"], original);

    let listed = mcp.ok(tool("jility_list_tickets"), json!({"labels": ["backend"]}));
    assert_eq!(numbers(&listed["data"]["tickets"]), ["TASK-1"]);
    assert_eq!(listed["page"]["total"], 1, "{listed}");
    let children = mcp.ok("jility_list_tickets", json!({"parent_id": "TASK-1"}));
    assert_eq!(
        sorted(numbers(&children["data"]["tickets"])),
        ["TASK-2", "TASK-3"]
    );

    let claimed = mcp.data(
        tool("jility_claim_ticket"),
        json!({"ticket_id": "TASK-1", "message": "Starting on this"}),
    );
    assert_eq!(claimed["assignee"], "agent-smith", "{claimed}");
    assert_eq!(claimed["ticket"]["status"], "in_progress");
    assert_eq!(claimed["previous_status"], "backlog");
    assert_eq!(claimed["already_claimed"], false);

    let edited = mcp.data(
        tool("jility_update_description"),
        json!({
            "ticket_id": "TASK-1",
            "operation": "replace_section",
            "section_header": "## Acceptance Criteria",
            "content": "- [ ] users can sign in\n- [ ] bad passwords are refused",
            "message": "Sharper criteria"
        }),
    );
    assert_eq!(edited["version"], 2, "{edited}");
    assert_eq!(edited["changed_by"], "agent-smith");
    assert_eq!(edited["changed"], true);

    let moved = mcp.data(
        tool("jility_update_status"),
        json!({"ticket_id": "TASK-1", "status": "review", "message": "Ready"}),
    );
    assert_eq!(moved["previous"], "in_progress", "{moved}");
    assert_eq!(moved["current"], "review");
    assert_eq!(moved["changed_by"], "agent-smith");

    let commented = mcp.data(
        tool("jility_add_comment"),
        json!({"ticket_id": "TASK-1", "content": "Please review @alice"}),
    );
    assert_eq!(commented["number"], "TASK-1");
    assert_eq!(commented["comment"]["author"], "agent-smith", "{commented}");

    let assigned = mcp.data(
        tool("jility_assign_ticket"),
        json!({"ticket_id": "TASK-1", "assignees": ["alice"], "message": "Over to you"}),
    );
    assert_eq!(assigned["previous"], json!(["agent-smith"]), "{assigned}");
    assert_eq!(assigned["current"], json!(["alice"]));
    assert_eq!(assigned["changed_by"], "agent-smith");
    assert_eq!(assigned["comment_added"], true);

    let linked = mcp.data(
        tool("jility_link_commit"),
        json!({"ticket_id": "TASK-1", "commit_hash": "ABC1234DEF", "commit_message": "Add login"}),
    );
    assert_eq!(linked["commit"]["hash"], "abc1234def", "{linked}");
    assert_eq!(linked["commit"]["linked_by"], "agent-smith");
    assert_eq!(linked["already_linked"], false);

    let depends = mcp.data(
        tool("jility_add_dependency"),
        json!({"ticket_id": "TASK-1", "depends_on": "TASK-3"}),
    );
    assert_eq!(depends["ticket"]["number"], "TASK-1", "{depends}");
    assert_eq!(depends["depends_on"]["number"], "TASK-3");
    assert_eq!(depends["is_blocked"], true);
    assert_eq!(depends["already_existed"], false);
    assert_eq!(
        numbers(&depends["chain"]),
        ["TASK-2", "TASK-3", "TASK-1"],
        "{depends}"
    );

    let graph = mcp.data(
        tool("jility_get_dependency_graph"),
        json!({"ticket_id": "TASK-1"}),
    );
    assert_eq!(graph["ticket"], "TASK-1");
    assert_eq!(numbers(&graph["dependencies"]), ["TASK-3"]);
    let upstream: Vec<(String, i64)> = graph["upstream"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            (
                n["number"].as_str().unwrap().to_string(),
                n["depth"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        upstream,
        [("TASK-3".to_string(), 1), ("TASK-2".to_string(), 2)],
        "{graph}"
    );
    assert_eq!(graph["is_blocked"], true);

    let removed = mcp.data(
        tool("jility_remove_dependency"),
        json!({"ticket_id": "TASK-1", "depends_on": "TASK-3"}),
    );
    assert_eq!(removed["ticket"]["number"], "TASK-1", "{removed}");
    assert_eq!(removed["depends_on"]["number"], "TASK-3");
    assert_eq!(removed["is_blocked"], false);

    let templates = mcp.ok(tool("jility_list_templates"), json!({}));
    let template_names: Vec<&str> = templates["data"]["templates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    for name in ["api-endpoint", "bug-fix", "refactor"] {
        assert!(template_names.contains(&name), "{templates}");
    }
    assert!(templates["page"]["total"].as_u64().unwrap() >= 5);

    let from_template = mcp.data(
        tool("jility_create_from_template"),
        json!({
            "template": "bug-fix",
            "variables": {"summary": "login fails on Safari"},
            "assignee": "bob"
        }),
    );
    assert_eq!(from_template["template"], "bug-fix", "{from_template}");
    let bug = &from_template["ticket"];
    assert_eq!(bug["number"], "TASK-4");
    assert_eq!(bug["title"], "Fix: login fails on Safari");
    assert_eq!(bug["created_by"], "agent-smith");
    assert_eq!(bug["assignees"], json!(["bob"]));
    assert_eq!(bug["labels"], json!(["bug"]));

    let found = mcp.ok(tool("jility_search_tickets"), json!({"query": "login"}));
    let hits = sorted(numbers(&found["data"]["hits"]));
    assert!(
        hits.contains(&"TASK-1".to_string()) && hits.contains(&"TASK-4".to_string()),
        "{found}"
    );
    assert!(found["page"]["total"].as_u64().unwrap() >= 2);

    let history = mcp.data(
        tool("jility_get_ticket_history"),
        json!({"ticket_id": "TASK-1"}),
    );
    assert_eq!(history["current_version"], 2, "{history}");
    let versions = history["versions"].as_array().unwrap();
    assert_eq!(versions.len(), 2);
    assert!(
        versions.iter().all(|v| v["changed_by"] == "agent-smith"),
        "{history}"
    );
    assert_eq!(versions[1]["message"], "Sharper criteria");

    let reverted = mcp.data(
        tool("jility_revert_description"),
        json!({"ticket_id": "TASK-1", "version": 1}),
    );
    assert_eq!(reverted["version"], 3, "{reverted}");
    assert_eq!(reverted["changed_by"], "agent-smith");
    assert_eq!(reverted["changed"], true);

    // Planning.
    let epic = mcp.data(
        tool("jility_create_ticket"),
        json!({"title": "Sign-in", "kind": "epic"}),
    );
    assert_eq!(epic["ticket"]["number"], "TASK-5");
    assert_eq!(epic["ticket"]["kind"], "epic");
    let epics = mcp.data(tool("jility_list_epics"), json!({}));
    assert_eq!(epics["epics"][0]["number"], "TASK-5", "{epics}");
    let got = mcp.data(tool("jility_get_epic"), json!({"epic_id": "TASK-5"}));
    assert_eq!(got["progress"]["tickets"], 0, "{got}");
    let sprint = mcp.data(
        tool("jility_create_sprint"),
        json!({"name": "Sprint 1", "starts_on": "2026-12-07", "ends_on": "2026-12-18", "capacity_points": 8}),
    );
    assert_eq!(sprint["sprint"]["number"], 1);
    let plan = mcp.data(tool("jility_plan_sprint"), json!({"sprint": "Sprint 1"}));
    assert_eq!(plan["capacity_points"], 8, "{plan}");
    // Saved views are the token's name's; bulk edits are made as it.
    let view = mcp.data(
        tool("jility_save_view"),
        json!({"name": "mine", "query": "assignee:me"}),
    );
    assert_eq!(view["view"]["owner"], "agent-smith", "{view}");
    let views = mcp.data(tool("jility_list_views"), json!({}));
    assert_eq!(views["views"][0]["name"], "mine", "{views}");
    mcp.data(tool("jility_delete_view"), json!({"name": "mine"}));
    let related = mcp.data(
        tool("jility_suggest_related"),
        json!({"ticket_id": "TASK-2"}),
    );
    assert!(related["related"].is_array(), "{related}");
    let estimate = mcp.data(
        tool("jility_estimate_effort"),
        json!({"title": "Sign-in epic"}),
    );
    assert!(estimate["confidence"].is_string(), "{estimate}");
    let bulk = mcp.data(
        tool("jility_bulk_update"),
        json!({"tickets": ["TASK-2", "TASK-3"], "set": {"add_labels": ["remote"]}}),
    );
    assert_eq!(bulk["changed"], 2, "{bulk}");
    let assigned = mcp.data(
        tool("jility_bulk_assign"),
        json!({"query": "label:remote", "assignees": ["agent-smith"], "dry_run": true}),
    );
    assert_eq!(assigned["matched"], 2, "{assigned}");
    let added = mcp.data(
        tool("jility_add_to_sprint"),
        json!({"sprint": "Sprint 1", "tickets": ["TASK-2", "TASK-3"]}),
    );
    assert_eq!(added["added"].as_array().map(Vec::len), Some(2), "{added}");
    mcp.data(
        tool("jility_remove_from_sprint"),
        json!({"sprint": "Sprint 1", "tickets": ["TASK-3"]}),
    );
    mcp.data(tool("jility_start_sprint"), json!({"sprint": "Sprint 1"}));
    let sprints = mcp.data(tool("jility_list_sprints"), json!({}));
    assert_eq!(sprints["sprints"][0]["state"], "active", "{sprints}");
    let stats = mcp.data(tool("jility_sprint_stats"), json!({"sprint": "Sprint 1"}));
    assert_eq!(stats["sprint"]["tickets"], 1, "{stats}");
    let completed = mcp.data(
        tool("jility_complete_sprint"),
        json!({"sprint": "Sprint 1"}),
    );
    assert_eq!(completed["sprint"]["state"], "completed", "{completed}");
    // The inbox is the token's: watching TASK-2, reading and marking the inbox.
    let watched = mcp.data(tool("jility_watch_ticket"), json!({"ticket_id": "TASK-2"}));
    assert_eq!(watched["watching"], true, "{watched}");
    let inbox = mcp.data(tool("jility_list_notifications"), json!({}));
    assert_eq!(inbox["recipient"], "agent-smith", "{inbox}");
    mcp.data(tool("jility_mark_notifications_read"), json!({"all": true}));
    let moved = detail(&http, &server, &agent_token, "TASK-2");
    let change = moved["recent_changes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "sprint_changed")
        .unwrap_or_else(|| panic!("{moved}"))
        .clone();
    assert_eq!(change["changed_by"], "agent-smith", "{change}");
    // Deleting (an old client: no question) leaves the ticket out of every list.
    let doomed = mcp.data(
        tool("jility_create_ticket"),
        json!({"title": "Made to be deleted"}),
    );
    let doomed = doomed["ticket"]["number"].as_str().unwrap().to_string();
    let deleted = mcp.data(tool("jility_delete_ticket"), json!({"ticket_id": doomed}));
    assert_eq!(deleted["number"], doomed, "{deleted}");
    let listed = mcp.data(tool("jility_list_tickets"), json!({}));
    assert!(
        !listed.to_string().contains(&format!("\"{doomed}\"")),
        "{listed}"
    );

    assert_eq!(
        used.into_iter().collect::<Vec<_>>(),
        TOOLS,
        "every tool was called"
    );

    // REST agrees, and every trace of the work names the token.
    let after = detail(&http, &server, &agent_token, "TASK-1");
    let t = &after["ticket"];
    assert_eq!(t["description"], original);
    assert_eq!(t["status"], "review");
    assert_eq!(t["assignees"], json!(["alice"]));
    assert_eq!(t["updated_by"], "agent-smith");
    assert_eq!(
        after["comment_count"], 3,
        "claim, comment, handoff: {after}"
    );
    for comment in after["comments"].as_array().unwrap() {
        assert_eq!(comment["author"], "agent-smith", "{comment}");
    }
    assert_eq!(after["linked_commits"][0]["linked_by"], "agent-smith");
    assert!(after["dependencies"].as_array().unwrap().is_empty());
    for change in after["recent_changes"].as_array().unwrap() {
        assert_eq!(change["changed_by"], "agent-smith", "{change}");
    }
    assert_eq!(
        all_tickets(&http, &server, &agent_token),
        ["TASK-1", "TASK-2", "TASK-3", "TASK-4", "TASK-5"]
    );
}

// ---------------------------------------------------------------------------------------
// 5. Tenant isolation, tool by tool

#[test]
fn a_workspace_reaches_none_of_anothers_tickets_through_any_tool() {
    let db = TestDb::new();
    let pool = db.connect();
    let tokens = Tokens::new(&pool);
    let (_alpha, a_token) = workspace(&tokens, "alpha");
    let (_beta, b_token) = workspace(&tokens, "beta");
    let server = start(&db);
    let http = client();
    let a = Remote::connect(&server, &a_token);
    let b = Remote::connect(&server, &b_token);

    // A: TASK-1, TASK-2 and TASK-3 (which depends on TASK-2), with a secret word.
    for title in [
        "Alpha zebra plan",
        "Alpha zebra storage",
        "Alpha zebra rollout",
    ] {
        a.data(
            "jility_create_ticket",
            json!({"title": title, "description": "The zebra protocol, alpha only"}),
        );
    }
    a.data(
        "jility_add_dependency",
        json!({"ticket_id": "TASK-3", "depends_on": "TASK-2"}),
    );
    // A plans a sprint with TASK-2 in it.
    a.data(
        "jility_create_sprint",
        json!({"name": "Alpha 1", "starts_on": "2026-12-07", "ends_on": "2026-12-18", "capacity_points": 8}),
    );
    a.data(
        "jility_add_to_sprint",
        json!({"sprint": "Alpha 1", "tickets": ["TASK-2"]}),
    );
    // B: its own TASK-1 only, and a sprint of its own.
    let own = b.data("jility_create_ticket", json!({"title": "Beta's own work"}));
    assert_eq!(own["ticket"]["number"], "TASK-1");
    b.data(
        "jility_create_sprint",
        json!({"name": "Beta 1", "starts_on": "2026-12-07", "ends_on": "2026-12-18"}),
    );

    let a_ids: Vec<String> = ["TASK-2", "TASK-3"]
        .iter()
        .map(|n| {
            a.data("jility_get_ticket", json!({"ticket_id": n}))["ticket"]["id"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    let before: Vec<Value> = ["TASK-1", "TASK-2", "TASK-3"]
        .iter()
        .map(|n| detail(&http, &server, &a_token, n))
        .collect();
    let b_before = detail(&http, &server, &b_token, "TASK-1");

    // A's tickets by number (B has none of these) and by UUID.
    let refs = [
        "TASK-2".to_string(),
        a_ids[0].clone(),
        "TASK-3".to_string(),
        a_ids[1].clone(),
    ];
    let mut tools_checked = BTreeSet::new();
    for r in &refs {
        let calls: Vec<(&str, Value)> = vec![
            ("jility_get_ticket", json!({"ticket_id": r})),
            (
                "jility_claim_ticket",
                json!({"ticket_id": r, "message": "mine"}),
            ),
            (
                "jility_update_description",
                json!({"ticket_id": r, "operation": "replace_all", "content": "hijacked"}),
            ),
            (
                "jility_update_status",
                json!({"ticket_id": r, "status": "todo"}),
            ),
            (
                "jility_add_comment",
                json!({"ticket_id": r, "content": "from beta"}),
            ),
            (
                "jility_assign_ticket",
                json!({"ticket_id": r, "assignees": ["mallory"]}),
            ),
            (
                "jility_link_commit",
                json!({"ticket_id": r, "commit_hash": "deadbeef"}),
            ),
            (
                "jility_add_dependency",
                json!({"ticket_id": r, "depends_on": "TASK-1"}),
            ),
            (
                "jility_add_dependency",
                json!({"ticket_id": "TASK-1", "depends_on": r}),
            ),
            (
                "jility_remove_dependency",
                json!({"ticket_id": "TASK-3", "depends_on": r}),
            ),
            (
                "jility_remove_dependency",
                json!({"ticket_id": r, "depends_on": "TASK-2"}),
            ),
            ("jility_get_dependency_graph", json!({"ticket_id": r})),
            ("jility_get_ticket_history", json!({"ticket_id": r})),
            (
                "jility_revert_description",
                json!({"ticket_id": r, "version": 1}),
            ),
            (
                "jility_create_ticket",
                json!({"title": "child of a foreign ticket", "parent_id": r}),
            ),
            (
                "jility_create_ticket",
                json!({"title": "in a foreign epic", "epic_id": r}),
            ),
            (
                "jility_create_tickets_batch",
                json!({"parent_id": r, "tickets": [{"title": "under a foreign parent"}]}),
            ),
            (
                "jility_create_tickets_batch",
                json!({"tickets": [{"title": "after a foreign ticket", "depends_on": [r]}]}),
            ),
            ("jility_get_epic", json!({"epic_id": r})),
            (
                "jility_add_to_sprint",
                json!({"sprint": "Beta 1", "tickets": [r]}),
            ),
            (
                "jility_remove_from_sprint",
                json!({"sprint": "Beta 1", "tickets": [r]}),
            ),
            (
                "jility_bulk_update",
                json!({"tickets": [r], "set": {"add_labels": ["x"]}}),
            ),
            (
                "jility_bulk_assign",
                json!({"tickets": [r], "assignees": ["x"]}),
            ),
            ("jility_suggest_related", json!({"ticket_id": r})),
            ("jility_estimate_effort", json!({"ticket_id": r})),
            ("jility_watch_ticket", json!({"ticket_id": r})),
            ("jility_delete_ticket", json!({"ticket_id": r})),
        ];
        for (tool, args) in calls {
            tools_checked.insert(tool);
            let err = b.err(tool, args.clone());
            assert_eq!(err["code"], "not_found", "{tool} {args}: {err}");
        }
        // Listings filtered by a foreign ticket: refused or empty, never A's.
        for filter in ["parent_id", "epic_id"] {
            let mut args = serde_json::Map::new();
            args.insert(filter.to_string(), json!(r));
            let envelope = b.call("jility_list_tickets", Value::Object(args));
            match envelope["status"].as_str() {
                Some("ok") => assert!(
                    numbers(&envelope["data"]["tickets"]).is_empty(),
                    "{filter}={r}: {envelope}"
                ),
                _ => assert_eq!(
                    envelope["error"]["code"], "not_found",
                    "{filter}={r}: {envelope}"
                ),
            }
        }
    }
    // A's sprint, by its name: B has none of that name (its own is #1 in B).
    for (tool, args) in [
        ("jility_sprint_stats", json!({"sprint": "Alpha 1"})),
        ("jility_plan_sprint", json!({"sprint": "Alpha 1"})),
        ("jility_start_sprint", json!({"sprint": "Alpha 1"})),
        ("jility_complete_sprint", json!({"sprint": "Alpha 1"})),
        (
            "jility_add_to_sprint",
            json!({"sprint": "Alpha 1", "tickets": ["TASK-1"]}),
        ),
        (
            "jility_remove_from_sprint",
            json!({"sprint": "Alpha 1", "tickets": ["TASK-1"]}),
        ),
        ("jility_list_tickets", json!({"sprint": "Alpha 1"})),
    ] {
        tools_checked.insert(tool);
        let err = b.err(tool, args.clone());
        assert_eq!(err["code"], "not_found", "{tool} {args}: {err}");
    }
    let sprints = b.ok("jility_list_sprints", json!({}));
    assert_eq!(
        sprints["data"]["sprints"].as_array().map(Vec::len),
        Some(1),
        "{sprints}"
    );
    assert_eq!(sprints["data"]["sprints"][0]["name"], "Beta 1");
    assert_eq!(sprints["data"]["sprints"][0]["number"], 1);
    assert_eq!(sprints["data"]["sprints"][0]["tickets"], 0);
    let epics = b.ok("jility_list_epics", json!({}));
    assert_eq!(epics["data"]["epics"], json!([]), "{epics}");
    let stats = b.data("jility_sprint_stats", json!({"sprint": "1"}));
    assert_eq!(stats["sprint"]["name"], "Beta 1", "B's #1 is B's own");
    let alpha = a.data("jility_sprint_stats", json!({"sprint": "Alpha 1"}));
    assert_eq!(alpha["sprint"]["tickets"], 1, "A's sprint is as A left it");
    assert_eq!(alpha["sprint"]["state"], "planned");
    // A's saved view is not B's to run or delete; B's bulk edit by query reaches none of A's.
    a.data(
        "jility_save_view",
        json!({"name": "alpha view", "query": "is:open", "shared": true}),
    );
    for (tool, args) in [
        ("jility_delete_view", json!({"name": "alpha view"})),
        (
            "jility_list_tickets",
            json!({"query": "view:\"alpha view\""}),
        ),
    ] {
        tools_checked.insert(tool);
        let err = b.err(tool, args.clone());
        assert_eq!(err["code"], "not_found", "{tool} {args}: {err}");
    }
    let views = b.data("jility_list_views", json!({}));
    assert_eq!(views["views"], json!([]), "{views}");
    let swept = b.data(
        "jility_bulk_update",
        json!({"query": "is:open", "set": {"add_labels": ["beta-only"]}, "dry_run": true}),
    );
    assert_eq!(swept["matched"], 1, "B's own ticket only: {swept}");
    // Every ticket-taking tool was tried.
    for t in TOOLS {
        if !matches!(
            t,
            "jility_list_tickets"
                | "jility_search_tickets"
                | "jility_list_templates"
                | "jility_create_from_template"
                | "jility_list_epics"
                | "jility_list_sprints"
                | "jility_create_sprint"
                | "jility_save_view"
                | "jility_list_views"
                | "jility_list_notifications"
                | "jility_mark_notifications_read"
        ) {
            assert!(tools_checked.contains(t), "{t} was not tried");
        }
    }

    // B's inbox holds nothing of A's; marking all read reaches only B's.
    let inbox = b.ok("jility_list_notifications", json!({}));
    assert!(!inbox.to_string().contains("Alpha"), "{inbox}");
    b.data("jility_mark_notifications_read", json!({"all": true}));
    // Listings and search show B its own work only.
    let listed = b.ok("jility_list_tickets", json!({}));
    assert_eq!(numbers(&listed["data"]["tickets"]), ["TASK-1"], "{listed}");
    assert_eq!(listed["page"]["total"], 1);
    let found = b.ok("jility_search_tickets", json!({"query": "zebra"}));
    assert!(numbers(&found["data"]["hits"]).is_empty(), "{found}");
    assert_eq!(found["page"]["total"], 0);
    let found = b.ok("jility_search_tickets", json!({"query": "alpha"}));
    assert!(numbers(&found["data"]["hits"]).is_empty(), "{found}");
    // A template ticket of B's lands in B's workspace.
    let made = b.data(
        "jility_create_from_template",
        json!({"template": "refactor", "variables": {"target": "x", "goal": "y"}}),
    );
    assert_eq!(made["ticket"]["number"], "TASK-2");
    // B's TASK-1 is B's, whatever A has under the same number.
    let mine = b.data("jility_get_ticket", json!({"ticket_id": "TASK-1"}));
    assert_eq!(mine["ticket"]["title"], "Beta's own work");

    // Nothing of A's changed; nothing of B's was tied to A's.
    for (n, before) in ["TASK-1", "TASK-2", "TASK-3"].iter().zip(&before) {
        assert_eq!(
            &detail(&http, &server, &a_token, n),
            before,
            "A's {n} changed"
        );
    }
    let b_after = detail(&http, &server, &b_token, "TASK-1");
    assert_eq!(b_after, b_before, "B's TASK-1 changed");
    assert_eq!(
        all_tickets(&http, &server, &a_token),
        ["TASK-1", "TASK-2", "TASK-3"]
    );
    assert_eq!(all_tickets(&http, &server, &b_token), ["TASK-1", "TASK-2"]);
    // A still sees its own through MCP as before.
    let history = a.data("jility_get_ticket_history", json!({"ticket_id": "TASK-2"}));
    assert_eq!(history["current_version"], 1);
}

// ---------------------------------------------------------------------------------------
// 6. Stateless (2026-07-28) requests: no session, the token of each request decides

/// One stateless JSON-RPC request of `method` to `/mcp` with `token`: the status and the
/// answer (from plain JSON or the event stream).
fn stateless(
    http: &reqwest::blocking::Client,
    server: &Server,
    token: &str,
    id: i64,
    method: &str,
    mut params: Value,
) -> (StatusCode, Value) {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "stateless-client", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    let mut request = http
        .post(mcp_url(server))
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", method)
        .bearer_auth(token)
        .body(body.to_string());
    if let Some(name) = body["params"]["name"].as_str() {
        request = request.header("Mcp-Name", name);
    }
    let response = request.send().unwrap();
    let status = response.status();
    assert!(
        response.headers().get("mcp-session-id").is_none(),
        "no session for 2026-07-28"
    );
    let text = response.text().unwrap();
    if !status.is_success() {
        let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
        return (status, body);
    }
    let messages: Vec<Value> = match serde_json::from_str::<Value>(&text) {
        Ok(one) => vec![one],
        Err(_) => text
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str(d.trim()).ok())
            .collect(),
    };
    let answer = messages
        .into_iter()
        .find(|m| m["id"] == id)
        .unwrap_or_else(|| panic!("{method}: no answer in {text}"));
    (status, answer)
}

#[test]
fn stateless_requests_are_authorised_per_request() {
    let db = TestDb::new();
    let pool = db.connect();
    let tokens = Tokens::new(&pool);
    let (alpha, _bootstrap) = workspace(&tokens, "alpha");
    let writer = token(&tokens, &alpha, "stateless-writer", "full_access");
    let reader = token(&tokens, &alpha, "stateless-reader", "tickets:read");
    let server = start(&db);
    let http = client();

    let (status, listed) = stateless(
        &http,
        &server,
        reader.token.expose(),
        1,
        "tools/list",
        json!({}),
    );
    assert_eq!(status, StatusCode::OK, "{listed}");
    let mut shown: Vec<String> = listed["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{listed}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    shown.sort();
    assert_eq!(shown, names(&READ_TOOLS), "{listed}");
    let (_, all) = stateless(
        &http,
        &server,
        writer.token.expose(),
        2,
        "tools/list",
        json!({}),
    );
    assert_eq!(all["result"]["tools"].as_array().unwrap().len(), 39);

    let (status, created) = stateless(
        &http,
        &server,
        writer.token.expose(),
        3,
        "tools/call",
        json!({"name": "jility_create_ticket", "arguments": {"title": "Stateless work"}}),
    );
    assert_eq!(status, StatusCode::OK, "{created}");
    let envelope = &created["result"]["structuredContent"];
    assert_eq!(envelope["status"], "ok", "{created}");
    assert_eq!(
        envelope["data"]["ticket"]["created_by"], "stateless-writer",
        "the token names the actor, not the client: {created}"
    );

    let (_, refused) = stateless(
        &http,
        &server,
        reader.token.expose(),
        4,
        "tools/call",
        json!({"name": "jility_create_ticket", "arguments": {"title": "Sneaky"}}),
    );
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    let error = &refused["result"]["structuredContent"]["error"];
    assert_eq!(error["code"], "permission_denied", "{refused}");
    assert!(error["message"].as_str().unwrap().contains("tickets:write"));

    let (status, unauthenticated) =
        stateless(&http, &server, "jil_live_short", 5, "tools/list", json!({}));
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{unauthenticated}");
    assert_eq!(
        all_tickets(&http, &server, writer.token.expose()),
        ["TASK-1"]
    );
}
