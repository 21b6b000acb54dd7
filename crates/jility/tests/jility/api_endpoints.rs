//! The REST endpoints of every operation beyond the first five (tests/api.rs covers create,
//! get, list, search, comment and delete): batch, claim, description, status, assign,
//! commits, dependencies, graph, templates, tickets from templates, history and revert; and
//! the event stream `GET /api/v1/events`. For each endpoint: its answer's shape, its scope,
//! tenant isolation, bad bodies and path arguments given twice.
//!
//! Each test makes its own database on the server at `JILITY_TEST_DATABASE_URL` (default
//! `postgres://postgres@127.0.0.1:5432/test`) and drops it when done, failed or not.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stderr
)] // assertions in tests; the server's log is passed on to stderr

use std::io::{BufRead, BufReader};
use std::sync::mpsc;
use std::time::Duration;

use jility_cloud::auth::Tokens;
use reqwest::Method;
use reqwest::StatusCode;
use reqwest::blocking::Client;
use serde_json::{Value, json};

use crate::cloud;
use crate::pg;

use cloud::*;
use pg::TestDb;

/// Requests per minute per token: these tests make many.
const RATE_LIMIT: &str = "100000";

/// The longest error answer (the whole JSON) a bad request may get.
const SHORT: usize = 2_000;

/// A server with two workspaces:
/// - A (`alpha`): TASK-1 "Build the login API" (a two-line description), TASK-2 "Design
///   the session table", TASK-3 "Write the login handler"; tokens `alpha-writer`
///   (full_access), `reader` (tickets:read) and `commenter` (comments:write);
/// - B (`beta`): its own TASK-1 "Beta's own work"; token `bootstrap` (full_access).
pub(crate) struct Fixture {
    pub(crate) server: Server,
    http: Client,
    pub(crate) a: String,
    pub(crate) reader: String,
    commenter: String,
    pub(crate) b: String,
    /// The UUIDs of A's TASK-1, TASK-2 and TASK-3.
    a_ids: Vec<String>,
    /// Dropped last, after the server.
    _db: TestDb,
}

const DESCRIPTION: &str = "Line one\nLine two";

impl Fixture {
    pub(crate) fn new() -> Self {
        Self::with_servers(1).0
    }

    /// The fixture, and `count - 1` more server processes on the same database.
    fn with_servers(count: usize) -> (Self, Vec<Server>) {
        let db = TestDb::new();
        let pool = db.connect();
        let tokens = Tokens::new(&pool);
        let (alpha, _bootstrap) = workspace(&tokens, "alpha");
        let (_beta, b) = workspace(&tokens, "beta");
        let a = token(&tokens, &alpha, "alpha-writer", "full_access")
            .token
            .expose()
            .to_string();
        let reader = token(&tokens, &alpha, "reader", "tickets:read")
            .token
            .expose()
            .to_string();
        let commenter = token(&tokens, &alpha, "commenter", "comments:write")
            .token
            .expose()
            .to_string();
        let server = Server::start(&db, &["--rate-limit", RATE_LIMIT]);
        let others = (1..count)
            .map(|_| Server::start(&db, &["--rate-limit", RATE_LIMIT]))
            .collect();
        let http = client();
        let mut fixture = Self {
            server,
            http,
            a,
            reader,
            commenter,
            b,
            a_ids: Vec::new(),
            _db: db,
        };
        for (title, description) in [
            ("Build the login API", Some(DESCRIPTION)),
            ("Design the session table", None),
            ("Write the login handler", None),
        ] {
            let mut body = json!({ "title": title });
            if let Some(description) = description {
                body["description"] = json!(description);
            }
            let created = fixture.call(Method::POST, "/tickets", &fixture.a, Some(body));
            assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
            fixture
                .a_ids
                .push(created.body["ticket"]["id"].as_str().unwrap().to_string());
        }
        let own = fixture.call(
            Method::POST,
            "/tickets",
            &fixture.b,
            Some(json!({"title": "Beta's own work"})),
        );
        assert_eq!(own.status, StatusCode::CREATED, "{}", own.body);
        assert_eq!(own.body["ticket"]["number"], "TASK-1");
        (fixture, others)
    }

    pub(crate) fn call(
        &self,
        method: Method,
        path: &str,
        token: &str,
        body: Option<Value>,
    ) -> Answer {
        call_json(&self.http, &self.server, method, path, token, body)
    }

    /// A request with a raw body (not necessarily JSON).
    fn raw(&self, method: Method, path: &str, token: &str, body: &str) -> Answer {
        call(
            &self.http,
            &self.server,
            method,
            path,
            Some(token),
            Some(body),
        )
    }

    /// A ticket as A sees it.
    fn detail(&self, id: &str) -> Value {
        self.detail_as(&self.a, id)
    }

    fn detail_as(&self, token: &str, id: &str) -> Value {
        let got = self.call(Method::GET, &format!("/tickets/{id}"), token, None);
        assert_eq!(got.status, StatusCode::OK, "{id}: {}", got.body);
        got.body
    }

    /// The numbers of every ticket of `token`'s workspace.
    fn numbers(&self, token: &str) -> Vec<String> {
        let listed = self.call(Method::GET, "/tickets?limit=200", token, None);
        assert_eq!(listed.status, StatusCode::OK, "{}", listed.body);
        let mut numbers = numbers(&listed.body["tickets"]);
        numbers.sort();
        numbers
    }

    /// A's tickets and B's, in full: what a refused request must leave as it was.
    fn everything(&self) -> Value {
        let mut all = Vec::new();
        for token in [&self.a, &self.b] {
            for n in self.numbers(token) {
                all.push(self.detail_as(token, &n));
            }
        }
        Value::Array(all)
    }
}

fn numbers(list: &Value) -> Vec<String> {
    list.as_array()
        .unwrap_or_else(|| panic!("not an array: {list}"))
        .iter()
        .map(|t| t["number"].as_str().unwrap().to_string())
        .collect()
}

/// The member names of an object, sorted.
fn keys(value: &Value) -> Vec<String> {
    let mut keys: Vec<String> = value
        .as_object()
        .unwrap_or_else(|| panic!("not an object: {value}"))
        .keys()
        .cloned()
        .collect();
    keys.sort();
    keys
}

fn assert_keys(value: &Value, expected: &[&str]) {
    let mut expected: Vec<String> = expected.iter().map(|k| k.to_string()).collect();
    expected.sort();
    assert_eq!(keys(value), expected, "{value}");
}

fn assert_ticket_ref(value: &Value, number: &str) {
    assert_keys(value, &["number", "title", "status"]);
    assert_eq!(value["number"], number, "{value}");
}

/// `value` as text, cut short for a failure message.
fn shown(value: &Value) -> String {
    let text = value.to_string();
    if text.len() <= 500 {
        text
    } else {
        format!(
            "{}… ({} bytes)",
            text.chars().take(500).collect::<String>(),
            text.len()
        )
    }
}

fn assert_denied(answer: &Answer, scope: &str, what: &str) {
    assert_eq!(
        answer.status,
        StatusCode::FORBIDDEN,
        "{what}: {}",
        shown(&answer.body)
    );
    assert_eq!(answer.code(), "permission_denied", "{what}");
    assert!(
        answer.message().contains(scope),
        "{what}: names {scope}: {}",
        shown(&answer.body)
    );
}

fn assert_not_found(answer: &Answer, what: &str) {
    assert_eq!(
        answer.status,
        StatusCode::NOT_FOUND,
        "{what}: {}",
        shown(&answer.body)
    );
    assert_eq!(answer.code(), "not_found", "{what}");
}

/// 400 `invalid_input` with a hint, and short: the input is not echoed at length.
fn assert_invalid_and_short(answer: &Answer, what: &str) {
    assert_eq!(
        answer.status,
        StatusCode::BAD_REQUEST,
        "{what}: {}",
        shown(&answer.body)
    );
    assert_eq!(
        answer.code(),
        "invalid_input",
        "{what}: {}",
        shown(&answer.body)
    );
    let hint = answer.error()["hint"].as_str().unwrap();
    assert!(!hint.trim().is_empty(), "{what}: no hint");
    let size = answer.body.to_string().len();
    assert!(
        size < SHORT,
        "{what}: a {size}-byte error: {}",
        shown(&answer.body)
    );
    assert!(answer.message().chars().count() < 500, "{what}");
    assert!(hint.chars().count() < 500, "{what}");
}

fn huge() -> String {
    "x".repeat(100_000)
}

/// As long as a URL may carry (the `http` crate refuses URIs of 64 KiB and more).
fn long() -> String {
    "x".repeat(20_000)
}

/// One write endpoint, for [`refusals`].
struct Write<'a> {
    method: Method,
    /// The path with `{}` where the ticket goes.
    path: &'a str,
    /// A body the endpoint accepts.
    body: Value,
    /// The scope it needs.
    scope: &'a str,
    /// The route's arguments other than `ticket_id` (name, value), as in `path`.
    path_args: &'a [(&'a str, &'a str)],
}

impl Write<'_> {
    fn at(&self, ticket: &str) -> String {
        self.path.replace("{}", ticket)
    }
}

/// Everything a write endpoint on a ticket must refuse, leaving every ticket as it was: a
/// token without its scope (403 naming it), another workspace's token (404, by number and
/// by UUID), bodies that are not the arguments (400, short), a path argument repeated in
/// the body (400), a query string (400).
fn refusals(fx: &Fixture, write: &Write<'_>) {
    let before = fx.everything();
    let what = write.at("{ticket}");
    let path = write.at("TASK-2");

    // The scope.
    let without = if write.scope == "comments:write" {
        &fx.reader
    } else {
        &fx.commenter
    };
    let denied = fx.call(
        write.method.clone(),
        &path,
        without,
        Some(write.body.clone()),
    );
    assert_denied(&denied, write.scope, &what);
    let denied = fx.call(
        write.method.clone(),
        &path,
        &fx.reader,
        Some(write.body.clone()),
    );
    assert_denied(&denied, write.scope, &what);

    // Another workspace: A's TASK-2 (B has no TASK-2) and A's TASK-2 by its UUID.
    for ticket in ["TASK-2", fx.a_ids[1].as_str()] {
        let foreign = fx.call(
            write.method.clone(),
            &write.at(ticket),
            &fx.b,
            Some(write.body.clone()),
        );
        assert_not_found(&foreign, &format!("{what} of A's {ticket} by B"));
    }

    // Bodies that are not the arguments.
    let mut unexpected_value = write.body.clone();
    unexpected_value["unexpected"] = json!(huge());
    let mut unexpected_name = write.body.clone();
    unexpected_name[huge()] = json!(1);
    for (case, body) in [
        ("a huge unexpected value", unexpected_value.to_string()),
        ("a huge unexpected member", unexpected_name.to_string()),
        ("a huge string", json!(huge()).to_string()),
        ("an array", "[1, 2]".to_string()),
        ("not JSON", format!("{{\"{}", huge())),
    ] {
        let answer = fx.raw(write.method.clone(), &path, &fx.a, &body);
        assert_invalid_and_short(&answer, &format!("{what} with {case}"));
    }

    // A path argument repeated in the body, even with the same value.
    let mut repeats = vec![("ticket_id", "TASK-2"), ("ticket_id", "TASK-3")];
    repeats.extend(write.path_args.iter().copied());
    for (name, value) in repeats {
        let mut body = write.body.clone();
        body[name] = json!(value);
        let answer = fx.call(write.method.clone(), &path, &fx.a, Some(body));
        assert_invalid_and_short(&answer, &format!("{what} with {name} in the body"));
        assert!(
            answer.message().contains(name) && answer.message().contains("twice"),
            "{what}: {}",
            shown(&answer.body)
        );
    }

    // Writes take no query.
    let answer = fx.call(
        write.method.clone(),
        &format!("{path}?ticket_id=TASK-3"),
        &fx.a,
        Some(write.body.clone()),
    );
    assert_invalid_and_short(&answer, &format!("{what} with a query"));

    assert_eq!(
        fx.everything(),
        before,
        "{what}: a refused request changed a ticket"
    );
}

/// Everything a read endpoint on a ticket must refuse.
fn read_refusals(fx: &Fixture, path: &str) {
    let what = path.replace("{}", "{ticket}");
    let at = |ticket: &str| path.replace("{}", ticket);
    let denied = fx.call(Method::GET, &at("TASK-2"), &fx.commenter, None);
    assert_denied(&denied, "tickets:read", &what);
    for ticket in ["TASK-2", fx.a_ids[1].as_str()] {
        let foreign = fx.call(Method::GET, &at(ticket), &fx.b, None);
        assert_not_found(&foreign, &format!("{what} of A's {ticket} by B"));
    }
    for query in ["?ticket_id=TASK-3", &format!("?{}=1", long())] {
        let answer = fx.call(
            Method::GET,
            &format!("{}{query}", at("TASK-2")),
            &fx.a,
            None,
        );
        assert_invalid_and_short(&answer, &format!("{what} with a query"));
    }
    // B's own TASK-1 is B's.
    let own = fx.call(Method::GET, &at("TASK-1"), &fx.b, None);
    assert_eq!(own.status, StatusCode::OK, "{what}: {}", shown(&own.body));
    assert!(
        !own.body.to_string().contains("login"),
        "{what}: B sees A's: {}",
        shown(&own.body)
    );
}

// ---------------------------------------------------------------------------------------
// Ticket writes

#[test]
fn claim_assigns_the_caller_and_starts_the_ticket() {
    let fx = Fixture::new();
    refusals(
        &fx,
        &Write {
            method: Method::POST,
            path: "/tickets/{}/claim",
            body: json!({"message": "Starting on this"}),
            scope: "tickets:write",
            path_args: &[],
        },
    );
    let claimed = fx.call(
        Method::POST,
        "/tickets/TASK-2/claim",
        &fx.a,
        Some(json!({"message": "Starting on this"})),
    );
    assert_eq!(claimed.status, StatusCode::OK, "{}", claimed.body);
    assert_keys(
        &claimed.body,
        &["ticket", "assignee", "previous_status", "already_claimed"],
    );
    assert_ticket_ref(&claimed.body["ticket"], "TASK-2");
    assert_eq!(claimed.body["ticket"]["status"], "in_progress");
    assert_eq!(claimed.body["assignee"], "alpha-writer");
    assert_eq!(claimed.body["previous_status"], "backlog");
    assert_eq!(claimed.body["already_claimed"], false);
    // An empty body is no arguments: claiming again changes nothing.
    let again = fx.raw(Method::POST, "/tickets/TASK-2/claim", &fx.a, "");
    assert_eq!(again.status, StatusCode::OK, "{}", again.body);
    assert_eq!(again.body["already_claimed"], true);
    let after = fx.detail("TASK-2");
    assert_eq!(after["ticket"]["assignees"], json!(["alpha-writer"]));
    assert_eq!(after["ticket"]["status"], "in_progress");
    assert_eq!(after["comments"][0]["content"], "Starting on this");
    assert_eq!(after["comments"][0]["author"], "alpha-writer");
}

#[test]
fn description_edits_make_versions() {
    let fx = Fixture::new();
    refusals(
        &fx,
        &Write {
            method: Method::POST,
            path: "/tickets/{}/description",
            body: json!({"operation": "append", "content": "Line three"}),
            scope: "tickets:write",
            path_args: &[],
        },
    );
    let edited = fx.call(
        Method::POST,
        "/tickets/TASK-1/description",
        &fx.a,
        Some(json!({
            "operation": "replace_lines",
            "start_line": 2,
            "end_line": 2,
            "content": "Line 2, sharper",
            "message": "Clearer"
        })),
    );
    assert_eq!(edited.status, StatusCode::OK, "{}", edited.body);
    assert_keys(
        &edited.body,
        &[
            "number",
            "operation",
            "summary",
            "version",
            "changed_by",
            "message",
            "lines",
            "diff",
            "changed",
        ],
    );
    assert_eq!(edited.body["number"], "TASK-1");
    assert_eq!(edited.body["operation"], "replace_lines");
    assert_eq!(edited.body["version"], 2);
    assert_eq!(edited.body["changed_by"], "alpha-writer");
    assert_eq!(edited.body["message"], "Clearer");
    assert_eq!(edited.body["lines"], 2);
    assert_eq!(edited.body["diff"], json!({"added": 1, "removed": 1}));
    assert_eq!(edited.body["changed"], true);
    assert_eq!(
        fx.detail("TASK-1")["ticket"]["description"],
        "Line one\nLine 2, sharper"
    );
    // An edit the tracker refuses is 400 too.
    let bad = fx.call(
        Method::POST,
        "/tickets/TASK-1/description",
        &fx.a,
        Some(json!({"operation": "replace_lines", "start_line": 9, "end_line": 9, "content": "x"})),
    );
    assert_eq!(bad.status, StatusCode::BAD_REQUEST, "{}", bad.body);
    let bad = fx.call(
        Method::POST,
        "/tickets/TASK-1/description",
        &fx.a,
        Some(json!({"operation": "rewrite", "content": "x"})),
    );
    assert_invalid_and_short(&bad, "an unknown operation");
}

#[test]
fn status_moves_through_the_workflow() {
    let fx = Fixture::new();
    refusals(
        &fx,
        &Write {
            method: Method::POST,
            path: "/tickets/{}/status",
            body: json!({"status": "todo"}),
            scope: "tickets:write",
            path_args: &[],
        },
    );
    let moved = fx.call(
        Method::POST,
        "/tickets/TASK-2/status",
        &fx.a,
        Some(json!({"status": "todo", "message": "Planned"})),
    );
    assert_eq!(moved.status, StatusCode::OK, "{}", moved.body);
    assert_keys(
        &moved.body,
        &[
            "number",
            "title",
            "previous",
            "current",
            "changed_by",
            "message",
            "changed",
        ],
    );
    assert_eq!(moved.body["number"], "TASK-2");
    assert_eq!(moved.body["title"], "Design the session table");
    assert_eq!(moved.body["previous"], "backlog");
    assert_eq!(moved.body["current"], "todo");
    assert_eq!(moved.body["changed_by"], "alpha-writer");
    assert_eq!(moved.body["changed"], true);
    assert_eq!(fx.detail("TASK-2")["ticket"]["status"], "todo");
    // A move the workflow forbids is the tracker's conflict.
    let skip = fx.call(
        Method::POST,
        "/tickets/TASK-2/status",
        &fx.a,
        Some(json!({"status": "done"})),
    );
    assert_eq!(skip.status, StatusCode::CONFLICT, "{}", skip.body);
    assert_eq!(skip.code(), "invalid_status");
}

#[test]
fn assign_hands_a_ticket_over() {
    let fx = Fixture::new();
    refusals(
        &fx,
        &Write {
            method: Method::POST,
            path: "/tickets/{}/assign",
            body: json!({"assignees": ["mallory"]}),
            scope: "tickets:write",
            path_args: &[],
        },
    );
    let assigned = fx.call(
        Method::POST,
        "/tickets/TASK-2/assign",
        &fx.a,
        Some(json!({"assignees": ["alice", "bob"], "message": "Pair on this"})),
    );
    assert_eq!(assigned.status, StatusCode::OK, "{}", assigned.body);
    assert_keys(
        &assigned.body,
        &[
            "number",
            "previous",
            "current",
            "message",
            "comment_added",
            "changed_by",
        ],
    );
    assert_eq!(assigned.body["number"], "TASK-2");
    assert_eq!(assigned.body["previous"], json!([]));
    assert_eq!(assigned.body["current"], json!(["alice", "bob"]));
    assert_eq!(assigned.body["comment_added"], true);
    assert_eq!(assigned.body["changed_by"], "alpha-writer");
    let unassigned = fx.call(
        Method::POST,
        "/tickets/TASK-2/assign",
        &fx.a,
        Some(json!({"assignees": []})),
    );
    assert_eq!(unassigned.status, StatusCode::OK, "{}", unassigned.body);
    assert_eq!(unassigned.body["current"], json!([]));
    assert!(
        fx.detail("TASK-2")["ticket"]["assignees"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    // The assignees are required.
    let missing = fx.call(
        Method::POST,
        "/tickets/TASK-2/assign",
        &fx.a,
        Some(json!({})),
    );
    assert_invalid_and_short(&missing, "no assignees");
}

#[test]
fn commits_are_linked() {
    let fx = Fixture::new();
    refusals(
        &fx,
        &Write {
            method: Method::POST,
            path: "/tickets/{}/commits",
            body: json!({"commit_hash": "deadbeef"}),
            scope: "tickets:write",
            path_args: &[],
        },
    );
    let linked = fx.call(
        Method::POST,
        "/tickets/TASK-2/commits",
        &fx.a,
        Some(json!({"commit_hash": "ABCDEF12", "commit_message": "Add the session table"})),
    );
    assert_eq!(linked.status, StatusCode::CREATED, "{}", linked.body);
    assert_keys(&linked.body, &["number", "commit", "already_linked"]);
    assert_eq!(linked.body["number"], "TASK-2");
    assert_keys(
        &linked.body["commit"],
        &["hash", "message", "linked_at", "linked_by"],
    );
    assert_eq!(linked.body["commit"]["hash"], "abcdef12");
    assert_eq!(linked.body["commit"]["message"], "Add the session table");
    assert_eq!(linked.body["commit"]["linked_by"], "alpha-writer");
    assert_eq!(linked.body["already_linked"], false);
    let again = fx.call(
        Method::POST,
        "/tickets/TASK-2/commits",
        &fx.a,
        Some(json!({"commit_hash": "abcdef12"})),
    );
    assert!(again.status.is_success(), "{}", again.body);
    assert_eq!(again.body["already_linked"], true);
    let commits = fx.detail("TASK-2")["linked_commits"].clone();
    assert_eq!(commits.as_array().unwrap().len(), 1, "{commits}");
    let bad = fx.call(
        Method::POST,
        "/tickets/TASK-2/commits",
        &fx.a,
        Some(json!({"commit_hash": "not-a-hash"})),
    );
    assert_invalid_and_short(&bad, "a bad hash");
}

#[test]
fn dependencies_are_added_and_removed() {
    let fx = Fixture::new();
    refusals(
        &fx,
        &Write {
            method: Method::POST,
            path: "/tickets/{}/dependencies",
            body: json!({"depends_on": "TASK-3"}),
            scope: "tickets:write",
            path_args: &[],
        },
    );
    // B cannot tie its own ticket to A's either (by number B lacks, or by UUID).
    for foreign in ["TASK-2", fx.a_ids[1].as_str()] {
        let answer = fx.call(
            Method::POST,
            "/tickets/TASK-1/dependencies",
            &fx.b,
            Some(json!({ "depends_on": foreign })),
        );
        assert_not_found(&answer, "B's TASK-1 depending on A's");
    }
    let added = fx.call(
        Method::POST,
        "/tickets/TASK-2/dependencies",
        &fx.a,
        Some(json!({"depends_on": "TASK-3"})),
    );
    assert_eq!(added.status, StatusCode::CREATED, "{}", added.body);
    assert_keys(
        &added.body,
        &[
            "ticket",
            "depends_on",
            "chain",
            "is_blocked",
            "already_existed",
        ],
    );
    assert_ticket_ref(&added.body["ticket"], "TASK-2");
    assert_ticket_ref(&added.body["depends_on"], "TASK-3");
    assert_eq!(numbers(&added.body["chain"]), ["TASK-3", "TASK-2"]);
    assert_eq!(added.body["is_blocked"], true);
    assert_eq!(added.body["already_existed"], false);
    let cycle = fx.call(
        Method::POST,
        "/tickets/TASK-3/dependencies",
        &fx.a,
        Some(json!({"depends_on": "TASK-2"})),
    );
    assert_eq!(cycle.status, StatusCode::CONFLICT, "{}", cycle.body);
    assert_eq!(cycle.code(), "dependency_cycle");

    // Removal: DELETE /tickets/{ticket_id}/dependencies/{depends_on}.
    refusals(
        &fx,
        &Write {
            method: Method::DELETE,
            path: "/tickets/{}/dependencies/TASK-3",
            body: json!({}),
            scope: "tickets:write",
            path_args: &[("depends_on", "TASK-3"), ("depends_on", "TASK-1")],
        },
    );
    // B cannot remove A's dependency with A's UUIDs on the other side either.
    let foreign = fx.call(
        Method::DELETE,
        &format!("/tickets/{}/dependencies/{}", fx.a_ids[1], fx.a_ids[2]),
        &fx.b,
        None,
    );
    assert_not_found(&foreign, "B removing A's dependency by UUIDs");
    assert_eq!(numbers(&fx.detail("TASK-2")["dependencies"]), ["TASK-3"]);
    let removed = fx.call(
        Method::DELETE,
        &format!("/tickets/TASK-2/dependencies/{}", fx.a_ids[2]),
        &fx.a,
        None,
    );
    assert_eq!(removed.status, StatusCode::OK, "{}", removed.body);
    assert_keys(&removed.body, &["ticket", "depends_on", "is_blocked"]);
    assert_ticket_ref(&removed.body["ticket"], "TASK-2");
    assert_ticket_ref(&removed.body["depends_on"], "TASK-3");
    assert_eq!(removed.body["is_blocked"], false);
    assert!(
        fx.detail("TASK-2")["dependencies"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    let gone = fx.call(
        Method::DELETE,
        "/tickets/TASK-2/dependencies/TASK-3",
        &fx.a,
        None,
    );
    assert!(gone.status.is_client_error(), "{}", gone.body);
}

#[test]
fn revert_restores_an_earlier_description() {
    let fx = Fixture::new();
    let edited = fx.call(
        Method::POST,
        "/tickets/TASK-2/description",
        &fx.a,
        Some(json!({"operation": "replace_all", "content": "Second version"})),
    );
    assert_eq!(edited.status, StatusCode::OK, "{}", edited.body);
    refusals(
        &fx,
        &Write {
            method: Method::POST,
            path: "/tickets/{}/revert",
            body: json!({"version": 1}),
            scope: "tickets:write",
            path_args: &[],
        },
    );
    let reverted = fx.call(
        Method::POST,
        "/tickets/TASK-2/revert",
        &fx.a,
        Some(json!({"version": 1})),
    );
    assert_eq!(reverted.status, StatusCode::OK, "{}", reverted.body);
    assert_keys(
        &reverted.body,
        &[
            "number",
            "operation",
            "summary",
            "version",
            "changed_by",
            "message",
            "lines",
            "diff",
            "changed",
        ],
    );
    assert_eq!(reverted.body["number"], "TASK-2");
    assert_eq!(reverted.body["version"], 3);
    assert_eq!(reverted.body["changed_by"], "alpha-writer");
    assert_eq!(reverted.body["changed"], true);
    assert_eq!(fx.detail("TASK-2")["ticket"]["description"], "");
    let missing = fx.call(
        Method::POST,
        "/tickets/TASK-2/revert",
        &fx.a,
        Some(json!({"version": 9})),
    );
    assert_invalid_and_short(&missing, "a version that does not exist");
    let wrong = fx.call(
        Method::POST,
        "/tickets/TASK-2/revert",
        &fx.a,
        Some(json!({"version": huge()})),
    );
    assert_invalid_and_short(&wrong, "a huge version");
}

// ---------------------------------------------------------------------------------------
// Ticket reads

#[test]
fn fields_are_edited_and_cleared() {
    let fx = Fixture::new();
    refusals(
        &fx,
        &Write {
            method: Method::POST,
            path: "/tickets/{}/fields",
            body: json!({"story_points": 3}),
            scope: "tickets:write",
            path_args: &[],
        },
    );
    // Only an epic gathers tickets: TASK-3 becomes one first.
    let epic = fx.call(
        Method::POST,
        "/tickets/TASK-3/fields",
        &fx.a,
        Some(json!({"kind": "epic"})),
    );
    assert_eq!(epic.status, StatusCode::OK, "{}", epic.body);
    assert_eq!(epic.body["changed"], json!(["kind"]));
    assert_eq!(epic.body["ticket"]["kind"], "epic");
    let edited = fx.call(
        Method::POST,
        "/tickets/TASK-2/fields",
        &fx.a,
        Some(json!({"title": "Session table", "story_points": 5, "labels": ["db"], "parent_id": "TASK-1", "epic_id": "TASK-3", "message": "sized"})),
    );
    assert_eq!(edited.status, StatusCode::OK, "{}", edited.body);
    assert_keys(&edited.body, &["ticket", "changed"]);
    assert_eq!(
        edited.body["changed"],
        json!(["title", "story_points", "labels", "parent", "epic"])
    );
    let ticket = &fx.detail("TASK-2")["ticket"];
    assert_eq!(ticket["title"], "Session table");
    assert_eq!(ticket["story_points"], 5);
    assert_eq!(ticket["parent"], "TASK-1");
    // `null` clears, a member left out stays.
    let cleared = fx.call(
        Method::POST,
        "/tickets/TASK-2/fields",
        &fx.a,
        Some(json!({"story_points": null, "parent_id": null})),
    );
    assert_eq!(cleared.status, StatusCode::OK, "{}", cleared.body);
    assert_eq!(cleared.body["changed"], json!(["story_points", "parent"]));
    let ticket = &fx.detail("TASK-2")["ticket"];
    assert!(ticket["story_points"].is_null() && ticket["parent"].is_null());
    assert_eq!(ticket["epic"], "TASK-3");
    assert_eq!(ticket["labels"], json!(["db"]));
    let wrong = fx.call(
        Method::POST,
        "/tickets/TASK-2/fields",
        &fx.a,
        Some(json!({"story_points": 40})),
    );
    assert_invalid_and_short(&wrong, "points out of range");
}

#[test]
fn graph_shows_what_blocks_a_ticket() {
    let fx = Fixture::new();
    for (ticket, depends_on) in [("TASK-2", "TASK-3"), ("TASK-1", "TASK-2")] {
        let added = fx.call(
            Method::POST,
            &format!("/tickets/{ticket}/dependencies"),
            &fx.a,
            Some(json!({ "depends_on": depends_on })),
        );
        assert_eq!(added.status, StatusCode::CREATED, "{}", added.body);
    }
    read_refusals(&fx, "/tickets/{}/graph");
    let graph = fx.call(Method::GET, "/tickets/TASK-2/graph", &fx.reader, None);
    assert_eq!(graph.status, StatusCode::OK, "{}", graph.body);
    assert_keys(
        &graph.body,
        &[
            "ticket",
            "title",
            "status",
            "dependencies",
            "dependents",
            "is_blocked",
            "blocking_count",
            "upstream",
            "downstream",
            "truncated",
        ],
    );
    assert_eq!(graph.body["ticket"], "TASK-2");
    assert_eq!(numbers(&graph.body["dependencies"]), ["TASK-3"]);
    assert_eq!(numbers(&graph.body["dependents"]), ["TASK-1"]);
    assert_eq!(graph.body["is_blocked"], true);
    assert_eq!(graph.body["blocking_count"], 1);
    assert_keys(
        &graph.body["upstream"][0],
        &["number", "title", "status", "depth"],
    );
    assert_eq!(numbers(&graph.body["upstream"]), ["TASK-3"]);
    assert_eq!(numbers(&graph.body["downstream"]), ["TASK-1"]);
    assert_eq!(graph.body["truncated"], false);
    // By UUID too.
    let by_uuid = fx.call(
        Method::GET,
        &format!("/tickets/{}/graph", fx.a_ids[1]),
        &fx.reader,
        None,
    );
    assert_eq!(by_uuid.body, graph.body);
}

#[test]
fn history_lists_every_version() {
    let fx = Fixture::new();
    let edited = fx.call(
        Method::POST,
        "/tickets/TASK-1/description",
        &fx.a,
        Some(json!({"operation": "append", "content": "Line three", "message": "More"})),
    );
    assert_eq!(edited.status, StatusCode::OK, "{}", edited.body);
    read_refusals(&fx, "/tickets/{}/history");
    let history = fx.call(Method::GET, "/tickets/TASK-1/history", &fx.reader, None);
    assert_eq!(history.status, StatusCode::OK, "{}", history.body);
    assert_keys(
        &history.body,
        &["number", "title", "current_version", "versions"],
    );
    assert_eq!(history.body["number"], "TASK-1");
    assert_eq!(history.body["current_version"], 2);
    let versions = history.body["versions"].as_array().unwrap();
    assert_eq!(versions.len(), 2);
    for (i, version) in versions.iter().enumerate() {
        assert_eq!(version["version"], i + 1);
        assert_eq!(version["changed_by"], "alpha-writer");
        for member in ["changed_at", "diff", "added", "removed", "lines"] {
            assert!(!version[member].is_null(), "{member} in {version}");
        }
    }
    assert_eq!(versions[1]["message"], "More");
    assert!(
        versions[1]["diff"]
            .as_str()
            .unwrap()
            .contains("+Line three")
    );
}

// ---------------------------------------------------------------------------------------
// Batches and templates

#[test]
fn batch_creates_all_or_none() {
    let fx = Fixture::new();
    let before = fx.everything();
    let body = json!({
        "parent_id": "TASK-1",
        "tickets": [
            {"title": "Schema", "story_points": 2, "labels": ["db"]},
            {"title": "Handler", "story_points": 3, "assignees": ["alice"], "depends_on": ["#1"]}
        ]
    });
    // The scope.
    for token in [&fx.reader, &fx.commenter] {
        let denied = fx.call(Method::POST, "/tickets/batch", token, Some(body.clone()));
        assert_denied(&denied, "tickets:write", "/tickets/batch");
    }
    // B cannot hang tickets under A's, nor after A's; and gets none of them.
    // (B's next ticket is its TASK-2: a batch of one naming TASK-3 names none of B's.)
    for foreign in ["TASK-3", fx.a_ids[2].as_str()] {
        let mut under = body.clone();
        under["parent_id"] = json!(foreign);
        let answer = fx.call(Method::POST, "/tickets/batch", &fx.b, Some(under));
        assert_not_found(&answer, "a batch under A's ticket");
        let after = json!({"tickets": [{"title": "y", "depends_on": [foreign]}]});
        let answer = fx.call(Method::POST, "/tickets/batch", &fx.b, Some(after));
        assert_not_found(&answer, "a batch after A's ticket");
    }
    // Bad bodies.
    let mut unexpected = body.clone();
    unexpected["tickets"][1]["unexpected"] = json!(huge());
    let mut unexpected_name = body.clone();
    unexpected_name[huge()] = json!(1);
    for (case, text) in [
        ("a huge unexpected value", unexpected.to_string()),
        ("a huge unexpected member", unexpected_name.to_string()),
        ("not JSON", format!("{{\"tickets\": [{}", huge())),
        ("an array", "[]".to_string()),
    ] {
        let answer = fx.raw(Method::POST, "/tickets/batch", &fx.a, &text);
        assert_invalid_and_short(&answer, &format!("a batch with {case}"));
    }
    // All or none: an item naming a missing ticket creates nothing.
    let broken = json!({"tickets": [{"title": "ok"}, {"title": "bad", "depends_on": ["TASK-99"]}]});
    let answer = fx.call(Method::POST, "/tickets/batch", &fx.a, Some(broken));
    assert_not_found(&answer, "a batch after a missing ticket");
    assert_eq!(fx.everything(), before, "a refused batch changed something");

    let created = fx.call(Method::POST, "/tickets/batch", &fx.a, Some(body));
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    assert_keys(&created.body, &["tickets", "parent", "total_story_points"]);
    assert_eq!(numbers(&created.body["tickets"]), ["TASK-4", "TASK-5"]);
    assert_keys(
        &created.body["tickets"][1],
        &[
            "number",
            "title",
            "story_points",
            "assignees",
            "labels",
            "depends_on",
        ],
    );
    assert_eq!(created.body["tickets"][0]["labels"], json!(["db"]));
    assert_eq!(created.body["tickets"][1]["assignees"], json!(["alice"]));
    assert_eq!(created.body["tickets"][1]["depends_on"], json!(["TASK-4"]));
    assert_ticket_ref(&created.body["parent"], "TASK-1");
    assert_eq!(created.body["total_story_points"], 5);
    let child = fx.detail("TASK-5");
    assert_eq!(child["ticket"]["parent"], "TASK-1");
    assert_eq!(child["ticket"]["created_by"], "alpha-writer");
    assert_eq!(numbers(&child["dependencies"]), ["TASK-4"]);
    assert_eq!(fx.numbers(&fx.b), ["TASK-1"]);
}

#[test]
fn templates_are_listed_and_paged() {
    let fx = Fixture::new();
    let denied = fx.call(Method::GET, "/templates", &fx.commenter, None);
    assert_denied(&denied, "tickets:read", "/templates");
    let listed = fx.call(Method::GET, "/templates", &fx.reader, None);
    assert_eq!(listed.status, StatusCode::OK, "{}", listed.body);
    assert_keys(&listed.body, &["templates", "problems", "page"]);
    let templates = listed.body["templates"].as_array().unwrap();
    let names: Vec<&str> = templates
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "api-endpoint",
            "database-migration",
            "react-component",
            "bug-fix",
            "refactor"
        ],
        "the built-in ones (a workspace has no project templates)"
    );
    let bug = &templates[3];
    assert_keys(
        bug,
        &[
            "name",
            "description",
            "title",
            "labels",
            "story_points",
            "variables",
            "source",
        ],
    );
    assert_eq!(bug["variables"], json!(["summary"]));
    assert_eq!(bug["source"], "builtin");
    assert!(listed.body["problems"].as_array().unwrap().is_empty());
    assert_eq!(listed.body["page"], json!({"total": 5}));

    // Paging.
    let first = fx.call(Method::GET, "/templates?limit=2", &fx.a, None);
    assert_eq!(first.status, StatusCode::OK, "{}", first.body);
    assert_eq!(first.body["templates"].as_array().unwrap().len(), 2);
    let cursor = first.body["page"]["next_cursor"]
        .as_str()
        .unwrap()
        .to_string();
    let mut seen: Vec<String> = first.body["templates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    let mut next = Some(cursor);
    while let Some(cursor) = next {
        let page = fx.call(
            Method::GET,
            &format!("/templates?limit=2&cursor={}", urlencode(&cursor)),
            &fx.a,
            None,
        );
        assert_eq!(page.status, StatusCode::OK, "{}", page.body);
        seen.extend(
            page.body["templates"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["name"].as_str().unwrap().to_string()),
        );
        next = page.body["page"]["next_cursor"].as_str().map(String::from);
        assert!(seen.len() <= 5, "{seen:?}");
    }
    assert_eq!(seen, names);

    // Bad queries: short answers.
    for query in [
        format!("?{}=1", long()),
        "?limit=many".to_string(),
        format!("?cursor={}", long()),
    ] {
        let answer = fx.call(Method::GET, &format!("/templates{query}"), &fx.a, None);
        let shown: String = query.chars().take(20).collect();
        assert_eq!(
            answer.status,
            StatusCode::BAD_REQUEST,
            "{shown}: {}",
            answer.body
        );
        assert!(answer.body.to_string().len() < SHORT, "{shown}");
    }
}

#[test]
fn tickets_are_created_from_templates() {
    let fx = Fixture::new();
    let path = "/templates/bug-fix/tickets";
    let body = json!({"variables": {"summary": "login fails on Safari"}, "assignee": "bob"});
    let before = fx.everything();
    for token in [&fx.reader, &fx.commenter] {
        let denied = fx.call(Method::POST, path, token, Some(body.clone()));
        assert_denied(&denied, "tickets:write", path);
    }
    let mut unexpected = body.clone();
    unexpected["unexpected"] = json!(huge());
    let mut unexpected_name = body.clone();
    unexpected_name[huge()] = json!(1);
    for (case, text) in [
        ("a huge unexpected value", unexpected.to_string()),
        ("a huge unexpected member", unexpected_name.to_string()),
        ("a huge variable of the wrong type", {
            json!({"variables": {"summary": [huge()]}}).to_string()
        }),
        ("not JSON", format!("{{{}", huge())),
    ] {
        let answer = fx.raw(Method::POST, path, &fx.a, &text);
        assert_invalid_and_short(&answer, &format!("{path} with {case}"));
    }
    for template in ["bug-fix", "refactor"] {
        let mut twice = body.clone();
        twice["template"] = json!(template);
        let answer = fx.call(Method::POST, path, &fx.a, Some(twice));
        assert_invalid_and_short(&answer, "the template in the body");
        assert!(answer.message().contains("twice"), "{}", answer.body);
    }
    let unfilled = fx.call(Method::POST, path, &fx.a, Some(json!({})));
    assert_invalid_and_short(&unfilled, "no variables");
    assert!(
        unfilled.body.to_string().contains("summary"),
        "{}",
        unfilled.body
    );
    let unknown = fx.call(
        Method::POST,
        "/templates/no-such-template/tickets",
        &fx.a,
        Some(body.clone()),
    );
    assert_not_found(&unknown, "an unknown template");
    let query = fx.call(
        Method::POST,
        &format!("{path}?assignee=eve"),
        &fx.a,
        Some(body.clone()),
    );
    assert_invalid_and_short(&query, "a query");
    assert_eq!(
        fx.everything(),
        before,
        "a refused request created a ticket"
    );

    let created = fx.call(Method::POST, path, &fx.a, Some(body.clone()));
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    assert_keys(&created.body, &["ticket", "template"]);
    assert_eq!(created.body["template"], "bug-fix");
    let ticket = &created.body["ticket"];
    assert_eq!(ticket["number"], "TASK-4");
    assert_eq!(ticket["title"], "Fix: login fails on Safari");
    assert_eq!(ticket["labels"], json!(["bug"]));
    assert_eq!(ticket["story_points"], 2);
    assert_eq!(ticket["assignees"], json!(["bob"]));
    assert_eq!(ticket["created_by"], "alpha-writer");
    assert!(
        ticket["description"]
            .as_str()
            .unwrap()
            .contains("Bug: login fails on Safari")
    );
    // Another workspace's ticket from a template is its own.
    let theirs = fx.call(Method::POST, path, &fx.b, Some(body));
    assert_eq!(theirs.status, StatusCode::CREATED, "{}", theirs.body);
    assert_eq!(theirs.body["ticket"]["number"], "TASK-2");
    assert_eq!(fx.numbers(&fx.b), ["TASK-1", "TASK-2"]);
    assert_eq!(fx.numbers(&fx.a), ["TASK-1", "TASK-2", "TASK-3", "TASK-4"]);
}

/// What the client sent is never echoed beyond a short excerpt (api/body.rs's promise),
/// also when a huge value sits in a member the endpoint does take, or in the path.
#[test]
fn huge_values_in_known_members_are_not_echoed() {
    let fx = Fixture::new();
    let segment = long();
    let mut cases: Vec<(Method, String, Option<Value>)> = [
        (
            "/tickets/TASK-2/dependencies",
            json!({"depends_on": huge()}),
        ),
        ("/tickets/TASK-2/commits", json!({"commit_hash": huge()})),
        ("/tickets/TASK-2/status", json!({"status": huge()})),
        (
            "/tickets/TASK-2/description",
            json!({"operation": "replace_section", "section_header": huge(), "content": "x"}),
        ),
        ("/tickets/TASK-2/assign", json!({"assignees": [huge()]})),
        (
            "/tickets/batch",
            json!({"tickets": [{"title": "x", "depends_on": [huge()]}]}),
        ),
        (
            "/tickets/batch",
            json!({"parent_id": huge(), "tickets": [{"title": "x"}]}),
        ),
        ("/tickets", json!({"title": "x", "parent_id": huge()})),
        ("/tickets", json!({"title": "x", "epic_id": huge()})),
        ("/tickets", json!({"title": "x", "status": huge()})),
        ("/tickets", json!({"title": "x", "labels": [huge()]})),
        (
            "/templates/bug-fix/tickets",
            json!({"variables": {huge(): "x"}}),
        ),
    ]
    .into_iter()
    .map(|(path, body)| (Method::POST, path.to_string(), Some(body)))
    .collect();
    cases.extend([
        (Method::GET, format!("/tickets/{segment}/graph"), None),
        (Method::GET, format!("/tickets/{segment}/history"), None),
        (Method::POST, format!("/tickets/{segment}/claim"), None),
        (
            Method::DELETE,
            format!("/tickets/TASK-2/dependencies/{segment}"),
            None,
        ),
        (
            Method::POST,
            format!("/templates/{segment}/tickets"),
            Some(json!({})),
        ),
        (Method::GET, format!("/tickets?status={segment}"), None),
    ]);
    let mut echoed = Vec::new();
    for (method, path, body) in cases {
        let answer = fx.call(method.clone(), &path, &fx.a, body.clone());
        let shown_path: String = path.chars().take(40).collect();
        let what = format!(
            "{method} {shown_path} {}",
            body.as_ref()
                .map(shown)
                .unwrap_or_default()
                .chars()
                .take(60)
                .collect::<String>()
        );
        let size = answer.body.to_string().len();
        if !answer.status.is_client_error() || size >= SHORT {
            echoed.push(format!(
                "{what} -> {} ({size} bytes): {}",
                answer.status,
                answer
                    .body
                    .to_string()
                    .chars()
                    .take(120)
                    .collect::<String>()
            ));
        }
    }
    assert!(
        echoed.is_empty(),
        "echoed at length:\n{}",
        echoed.join("\n")
    );
}

// ---------------------------------------------------------------------------------------
// Events

/// One server-sent event: its name and its data.
type Sse = (String, Value);

/// A subscription to `GET /api/v1/events`, read on a thread of its own.
pub(crate) struct Subscription {
    events: mpsc::Receiver<Sse>,
}

const EVENT_WAIT: Duration = Duration::from_secs(10);

impl Subscription {
    pub(crate) fn open(server: &Server, token: &str) -> Self {
        let _ = rustls::crypto::ring::default_provider().install_default();
        // No overall timeout: the stream stays open; waits are bounded by `next`.
        let http = Client::builder().timeout(None).build().unwrap();
        let response = http
            .get(format!("{}/events", server.url))
            .bearer_auth(token)
            .header("accept", "text/event-stream")
            .send()
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        let content_type = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string();
        assert!(
            content_type.starts_with("text/event-stream"),
            "{content_type}"
        );
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut name = String::new();
            let mut data = String::new();
            for line in BufReader::new(response).lines() {
                let Ok(line) = line else { break };
                if line.is_empty() {
                    // Heartbeats (every few seconds of silence) say only that it lives.
                    if name != "heartbeat" && (!name.is_empty() || !data.is_empty()) {
                        let value = serde_json::from_str(&data).unwrap_or(Value::String(data));
                        let event = if name.is_empty() {
                            "message".to_string()
                        } else {
                            name
                        };
                        if tx.send((event, value)).is_err() {
                            break;
                        }
                    }
                    name = String::new();
                    data = String::new();
                } else if line.starts_with(':') {
                    // A keep-alive comment.
                } else if let Some(value) = line.strip_prefix("event:") {
                    name = value.trim().to_string();
                } else if let Some(value) = line.strip_prefix("data:") {
                    if !data.is_empty() {
                        data.push('\n');
                    }
                    data.push_str(value.strip_prefix(' ').unwrap_or(value));
                }
            }
        });
        let subscription = Self { events: rx };
        let (name, data) = subscription.next();
        assert_eq!(name, "ready", "{data}");
        subscription
    }

    /// The next event, within [`EVENT_WAIT`].
    fn next(&self) -> Sse {
        self.events
            .recv_timeout(EVENT_WAIT)
            .unwrap_or_else(|e| panic!("no event within {EVENT_WAIT:?}: {e}"))
    }

    /// The next `change`.
    pub(crate) fn change(&self) -> Value {
        let (name, data) = self.next();
        assert_eq!(name, "change", "{data}");
        assert_keys(&data, &["operation", "tickets", "actor", "at"]);
        let at = data["at"].as_str().unwrap();
        assert!(
            at.len() >= 20 && at.ends_with('Z') && at.contains('T'),
            "{at}"
        );
        data
    }

    /// The stream ends (within [`EVENT_WAIT`]), whatever arrives before.
    fn ends(&self) {
        let deadline = std::time::Instant::now() + EVENT_WAIT;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match self.events.recv_timeout(left) {
                Ok(_) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => return,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    panic!("the stream did not end within {EVENT_WAIT:?}")
                }
            }
        }
    }

    /// Nothing more arrives within `wait`.
    pub(crate) fn quiet(&self, wait: Duration) {
        if let Ok(event) = self.events.recv_timeout(wait) {
            panic!("an unexpected event: {event:?}");
        }
    }
}

#[test]
fn events_need_a_token_with_tickets_read() {
    let fx = Fixture::new();
    let http = client();
    let url = format!("{}/events", fx.server.url);
    let anonymous = http.get(&url).send().unwrap();
    assert_eq!(anonymous.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(
        anonymous
            .headers()
            .get("www-authenticate")
            .and_then(|v| v.to_str().ok()),
        Some("Bearer")
    );
    let body: Value = anonymous.json().unwrap();
    assert_eq!(body["error"]["code"], "unauthenticated");
    let forged = http
        .get(&url)
        .bearer_auth(format!("jil_live_{}", "Q".repeat(40)))
        .send()
        .unwrap();
    assert_eq!(forged.status(), StatusCode::UNAUTHORIZED);
    let denied = fx.call(Method::GET, "/events", &fx.commenter, None);
    assert_denied(&denied, "tickets:read", "/events");
    // A tickets:read token subscribes, and hears a write.
    let reader = Subscription::open(&fx.server, &fx.reader);
    let claimed = fx.call(Method::POST, "/tickets/TASK-3/claim", &fx.a, None);
    assert_eq!(claimed.status, StatusCode::OK, "{}", claimed.body);
    let change = reader.change();
    assert_eq!(change["operation"], "jility_claim_ticket");
    assert_eq!(change["tickets"], json!(["TASK-3"]));
    assert_eq!(change["actor"], "alpha-writer");
}

#[test]
fn events_reach_only_the_writers_workspace() {
    let fx = Fixture::new();
    let a_events = Subscription::open(&fx.server, &fx.reader);
    let b_events = Subscription::open(&fx.server, &fx.b);

    // A's writes: A hears each, naming the ticket, the operation and the token.
    let created = fx.call(
        Method::POST,
        "/tickets",
        &fx.a,
        Some(json!({"title": "Secret alpha plan"})),
    );
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    let change = a_events.change();
    assert_eq!(change["operation"], "jility_create_ticket");
    assert_eq!(change["tickets"], json!(["TASK-4"]));
    assert_eq!(change["actor"], "alpha-writer");

    // Refused and failed writes are not events.
    let denied = fx.call(
        Method::POST,
        "/tickets/TASK-4/status",
        &fx.reader,
        Some(json!({"status": "todo"})),
    );
    assert_eq!(denied.status, StatusCode::FORBIDDEN);
    let missing = fx.call(Method::POST, "/tickets/TASK-99/claim", &fx.a, None);
    assert_eq!(missing.status, StatusCode::NOT_FOUND);

    let added = fx.call(
        Method::POST,
        "/tickets/TASK-4/dependencies",
        &fx.a,
        Some(json!({"depends_on": "TASK-1"})),
    );
    assert_eq!(added.status, StatusCode::CREATED, "{}", added.body);
    let change = a_events.change();
    assert_eq!(change["operation"], "jility_add_dependency");
    let mut tickets: Vec<String> = change["tickets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().to_string())
        .collect();
    tickets.sort();
    assert_eq!(tickets, ["TASK-1", "TASK-4"], "{change}");
    let deleted = fx.call(Method::DELETE, "/tickets/TASK-4", &fx.a, None);
    assert_eq!(deleted.status, StatusCode::OK, "{}", deleted.body);
    let change = a_events.change();
    assert_eq!(change["operation"], "jility_delete_ticket");
    assert_eq!(change["tickets"], json!(["TASK-4"]));

    // B heard none of it: its first change is its own write, made after all of A's.
    let commented = fx.call(
        Method::POST,
        "/tickets/TASK-1/comments",
        &fx.b,
        Some(json!({"content": "Beta's note"})),
    );
    assert_eq!(commented.status, StatusCode::CREATED, "{}", commented.body);
    let change = b_events.change();
    assert_eq!(change["operation"], "jility_add_comment", "{change}");
    assert_eq!(change["tickets"], json!(["TASK-1"]));
    assert_eq!(change["actor"], "bootstrap");
    // And A does not hear B's.
    a_events.quiet(Duration::from_secs(1));
    b_events.quiet(Duration::from_millis(200));
}

#[test]
fn a_write_through_one_server_reaches_subscribers_of_another() {
    let (fx, others) = Fixture::with_servers(2);
    let second = &others[0];
    let on_first = Subscription::open(&fx.server, &fx.reader);
    let on_second = Subscription::open(second, &fx.reader);
    let b_on_first = Subscription::open(&fx.server, &fx.b);
    let moved = call_json(
        &fx.http,
        second,
        Method::POST,
        "/tickets/TASK-2/status",
        &fx.a,
        Some(json!({"status": "todo"})),
    );
    assert_eq!(moved.status, StatusCode::OK, "{}", moved.body);
    for (which, subscription) in [("the first", &on_first), ("the second", &on_second)] {
        let change = subscription.change();
        assert_eq!(change["operation"], "jility_update_status", "{which}");
        assert_eq!(change["tickets"], json!(["TASK-2"]), "{which}");
        assert_eq!(change["actor"], "alpha-writer", "{which}");
    }
    // And the other way round.
    let claimed = fx.call(Method::POST, "/tickets/TASK-2/claim", &fx.a, None);
    assert_eq!(claimed.status, StatusCode::OK, "{}", claimed.body);
    let change = on_second.change();
    assert_eq!(change["operation"], "jility_claim_ticket");
    assert_eq!(on_first.change()["operation"], "jility_claim_ticket");
    // B's subscriber on the first server heard neither.
    b_on_first.quiet(Duration::from_secs(1));
}

/// Each server keeps a token's principal for a few seconds after authenticating it, yet a
/// revocation through one server is refused by every server from its next request on (not
/// when the kept principal runs out), and ends the token's event streams on all of them.
#[test]
fn a_revocation_through_one_server_is_heard_by_every_server() {
    let (fx, others) = Fixture::with_servers(2);
    let second = &others[0];
    let minted = fx.call(
        Method::POST,
        "/tokens",
        &fx.a,
        Some(json!({"name": "short-lived", "scopes": ["tickets:read"]})),
    );
    assert_eq!(minted.status, StatusCode::CREATED, "{}", minted.body);
    let token = minted.body["token"].as_str().unwrap().to_string();
    let id = minted.body["id"].as_i64().unwrap();
    // Both servers authenticate it, and keep its principal.
    for server in [&fx.server, second] {
        for _ in 0..2 {
            let read = call_json(
                &fx.http,
                server,
                Method::GET,
                "/tickets/TASK-1",
                &token,
                None,
            );
            assert_eq!(read.status, StatusCode::OK, "{}", read.body);
        }
    }
    let stream_on_second = Subscription::open(second, &token);

    let revoked = fx.call(Method::DELETE, &format!("/tokens/{id}"), &fx.a, None);
    assert_eq!(revoked.status, StatusCode::OK, "{}", revoked.body);
    let on_first = call_json(
        &fx.http,
        &fx.server,
        Method::GET,
        "/tickets/TASK-1",
        &token,
        None,
    );
    assert_eq!(
        on_first.status,
        StatusCode::UNAUTHORIZED,
        "{}",
        on_first.body
    );
    assert!(on_first.message().contains("revoked"), "{}", on_first.body);

    let on_second = call_json(
        &fx.http,
        second,
        Method::GET,
        "/tickets/TASK-1",
        &token,
        None,
    );
    assert_eq!(
        on_second.status,
        StatusCode::UNAUTHORIZED,
        "{}",
        on_second.body
    );
    assert!(
        on_second.message().contains("revoked"),
        "{}",
        on_second.body
    );
    stream_on_second.ends();
}

/// Inputs that would cost the server dearly or that PostgreSQL cannot store are refused as
/// bad input, before any work: a NUL character anywhere (body, query), more than 100 labels
/// or assignees.
#[test]
fn costly_or_unstorable_inputs_are_refused_up_front() {
    let db = TestDb::new();
    let pool = db.connect();
    let (_ws, token) = workspace(&Tokens::new(&pool), "guarded");
    let server = Server::start(&db, &["--rate-limit", "100000"]);
    let http = client();
    let refused = |answer: Answer, needle: &str| {
        assert_eq!(answer.status, StatusCode::BAD_REQUEST, "{}", answer.body);
        assert_eq!(answer.code(), "invalid_input");
        assert!(answer.message().contains(needle), "{}", answer.body);
        assert!(answer.body.to_string().len() < 2_000, "{}", answer.body);
    };
    for body in [
        json!({"title": "a\u{0}b"}),
        json!({"title": "ok", "labels": ["x\u{0}"]}),
        json!({"title": "ok", "description": "\u{0}"}),
    ] {
        let answer = call(
            &http,
            &server,
            Method::POST,
            "/tickets",
            Some(&token),
            Some(&body.to_string()),
        );
        refused(answer, "NUL");
    }
    let answer = call(
        &http,
        &server,
        Method::GET,
        "/tickets?label=a%00b",
        Some(&token),
        None,
    );
    refused(answer, "NUL");
    let many: Vec<String> = (0..101).map(|i| format!("l{i}")).collect();
    for member in ["labels", "assignees"] {
        let body = json!({"title": "many", member: many});
        let answer = call(
            &http,
            &server,
            Method::POST,
            "/tickets",
            Some(&token),
            Some(&body.to_string()),
        );
        refused(answer, "at most 100");
    }
    // A hundred is fine; nothing refused above was stored.
    let body = json!({"title": "hundred", "labels": many[..100]});
    let answer = call(
        &http,
        &server,
        Method::POST,
        "/tickets",
        Some(&token),
        Some(&body.to_string()),
    );
    assert_eq!(answer.status, StatusCode::CREATED, "{}", answer.body);
    assert_eq!(answer.body["ticket"]["number"], "TASK-1");
}
