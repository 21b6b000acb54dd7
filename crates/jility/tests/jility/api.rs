//! The REST API of `jility serve`, through the built binary against a real PostgreSQL:
//! every endpoint's answer, tokens (missing, malformed, unknown, expired, revoked), scopes,
//! tenant isolation endpoint by endpoint, rate limits and bad bodies.
//!
//! Each test makes its own database on the server at `JILITY_TEST_DATABASE_URL` (default
//! `postgres://postgres@127.0.0.1:5432/test`) and drops it when done, failed or not.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stderr
)] // assertions in tests; the server's log is passed on to stderr

use std::time::Duration;

use jility_cloud::auth::{TokenRef, Tokens};
use reqwest::Method;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::cloud;
use crate::pg;

use cloud::*;
use pg::TestDb;

fn numbers(list: &Value, member: &str) -> Vec<String> {
    list[member]
        .as_array()
        .unwrap_or_else(|| panic!("no {member} in {list}"))
        .iter()
        .map(|t| t["number"].as_str().unwrap().to_string())
        .collect()
}

fn assert_rate_headers(answer: &Answer) {
    for name in [
        "x-ratelimit-limit",
        "x-ratelimit-remaining",
        "x-ratelimit-reset",
    ] {
        let value = answer
            .header(name)
            .unwrap_or_else(|| panic!("no {name} on a {} answer", answer.status));
        value.parse::<i64>().unwrap();
    }
}

#[test]
fn every_endpoint_answers_within_its_workspace_only() {
    let db = TestDb::new();
    let pool = db.connect();
    let tokens = Tokens::new(&pool);
    let (_alpha, a) = workspace(&tokens, "alpha");
    let (_beta, b) = workspace(&tokens, "beta");
    let server = Server::start(&db, &[]);
    let http = client();
    let a = Some(a.as_str());
    let b = Some(b.as_str());

    // Create.
    let created = call(
        &http,
        &server,
        Method::POST,
        "/tickets",
        a,
        Some(
            r#"{"title":"Fix the login form","description":"The login form breaks on submit","labels":["bug"],"story_points":3}"#,
        ),
    );
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    assert_rate_headers(&created);
    let ticket = &created.body["ticket"];
    assert_eq!(ticket["number"], "TASK-1");
    assert_eq!(ticket["title"], "Fix the login form");
    assert_eq!(ticket["labels"], json!(["bug"]));
    assert_eq!(ticket["story_points"], 3);
    assert_eq!(ticket["status"], "backlog");
    assert_eq!(
        ticket["created_by"], "bootstrap",
        "the actor is the token's name"
    );
    let second = call(
        &http,
        &server,
        Method::POST,
        "/tickets",
        a,
        Some(r#"{"title":"Write the release notes","status":"todo"}"#),
    );
    assert_eq!(second.status, StatusCode::CREATED, "{}", second.body);
    assert_eq!(second.body["ticket"]["number"], "TASK-2");

    // Get.
    let got = call(&http, &server, Method::GET, "/tickets/TASK-1", a, None);
    assert_eq!(got.status, StatusCode::OK, "{}", got.body);
    assert_rate_headers(&got);
    assert_eq!(got.body["ticket"]["title"], "Fix the login form");
    assert_eq!(got.body["comment_count"], 0);
    assert!(got.body["recent_changes"].is_array());
    let missing = call(&http, &server, Method::GET, "/tickets/TASK-99", a, None);
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
    assert_rate_headers(&missing);

    // List: filters, paging with the same `page` object as the tools.
    let all = call(&http, &server, Method::GET, "/tickets", a, None);
    assert_eq!(all.status, StatusCode::OK, "{}", all.body);
    let mut listed = numbers(&all.body, "tickets");
    listed.sort();
    assert_eq!(listed, ["TASK-1", "TASK-2"]);
    assert_eq!(all.body["page"]["total"], 2);
    let bugs = call(&http, &server, Method::GET, "/tickets?label=bug", a, None);
    assert_eq!(numbers(&bugs.body, "tickets"), ["TASK-1"]);
    let todo = call(
        &http,
        &server,
        Method::GET,
        "/tickets?status=todo,review",
        a,
        None,
    );
    assert_eq!(numbers(&todo.body, "tickets"), ["TASK-2"]);
    let first = call(&http, &server, Method::GET, "/tickets?limit=1", a, None);
    assert_eq!(first.body["page"]["total"], 2);
    let cursor = first.body["page"]["next_cursor"]
        .as_str()
        .unwrap()
        .to_string();
    let rest = call(
        &http,
        &server,
        Method::GET,
        &format!("/tickets?limit=1&cursor={}", urlencode(&cursor)),
        a,
        None,
    );
    assert_eq!(rest.status, StatusCode::OK, "{}", rest.body);
    let mut paged = numbers(&first.body, "tickets");
    paged.extend(numbers(&rest.body, "tickets"));
    paged.sort();
    assert_eq!(paged, ["TASK-1", "TASK-2"]);
    assert!(rest.body["page"]["next_cursor"].is_null());
    let bad_status = call(
        &http,
        &server,
        Method::GET,
        "/tickets?status=doing",
        a,
        None,
    );
    // The status of the error's class, as everywhere (invalid_status is a conflict).
    assert_eq!(
        bad_status.status,
        StatusCode::CONFLICT,
        "{}",
        bad_status.body
    );
    assert_eq!(bad_status.code(), "invalid_status");
    let bad_param = call(&http, &server, Method::GET, "/tickets?colour=red", a, None);
    assert_eq!(bad_param.status, StatusCode::BAD_REQUEST);
    assert_eq!(bad_param.code(), "invalid_input");

    // Search.
    let found = call(
        &http,
        &server,
        Method::GET,
        "/search?q=login%20form",
        a,
        None,
    );
    assert_eq!(found.status, StatusCode::OK, "{}", found.body);
    assert_eq!(numbers(&found.body, "hits"), ["TASK-1"]);
    assert!(
        found.body["hits"][0]["snippet"]
            .as_str()
            .unwrap()
            .contains("**")
    );
    assert_eq!(found.body["page"]["total"], 1);
    let no_q = call(&http, &server, Method::GET, "/search", a, None);
    assert_eq!(no_q.status, StatusCode::BAD_REQUEST);

    // Comment.
    let commented = call(
        &http,
        &server,
        Method::POST,
        "/tickets/TASK-1/comments",
        a,
        Some(r#"{"content":"Reproduced on staging"}"#),
    );
    assert_eq!(commented.status, StatusCode::CREATED, "{}", commented.body);
    assert_eq!(commented.body["number"], "TASK-1");
    assert_eq!(
        commented.body["comment"]["content"],
        "Reproduced on staging"
    );
    assert_eq!(commented.body["comment"]["author"], "bootstrap");

    // Delete (soft): gone from every view.
    let deleted = call(&http, &server, Method::DELETE, "/tickets/TASK-2", a, None);
    assert_eq!(deleted.status, StatusCode::OK, "{}", deleted.body);
    assert_eq!(
        deleted.body,
        json!({"number": "TASK-2", "title": "Write the release notes"})
    );
    let gone = call(&http, &server, Method::GET, "/tickets/TASK-2", a, None);
    assert_eq!(gone.status, StatusCode::NOT_FOUND);
    let after = call(&http, &server, Method::GET, "/tickets", a, None);
    assert_eq!(numbers(&after.body, "tickets"), ["TASK-1"]);
    let kept: i64 = db
        .client()
        .query_one("SELECT count(*) FROM tickets WHERE number = 2", &[])
        .unwrap()
        .get(0);
    assert_eq!(kept, 1, "a soft delete keeps the row");

    // Bad bodies: 400 with the envelope, never the input echoed at length.
    let not_json = call(
        &http,
        &server,
        Method::POST,
        "/tickets",
        a,
        Some("{\"title\": "),
    );
    assert_eq!(
        not_json.status,
        StatusCode::BAD_REQUEST,
        "{}",
        not_json.body
    );
    assert_eq!(not_json.code(), "invalid_input");
    assert!(not_json.message().contains("not valid JSON"));
    let wrong_shape = call(
        &http,
        &server,
        Method::POST,
        "/tickets",
        a,
        Some(r#"{"titel":"x"}"#),
    );
    assert_eq!(wrong_shape.status, StatusCode::BAD_REQUEST);
    assert!(
        wrong_shape.message().contains("shape"),
        "{}",
        wrong_shape.body
    );
    let huge = format!("{{\"{}\": 1}}", "x".repeat(100_000));
    let huge_answer = call(&http, &server, Method::POST, "/tickets", a, Some(&huge));
    assert_eq!(huge_answer.status, StatusCode::BAD_REQUEST);
    assert!(huge_answer.body.to_string().len() < 2_000);
    let empty_title = call(
        &http,
        &server,
        Method::POST,
        "/tickets",
        a,
        Some(r#"{"title":" "}"#),
    );
    assert_eq!(empty_title.status, StatusCode::BAD_REQUEST);
    let bad_comment = call(
        &http,
        &server,
        Method::POST,
        "/tickets/TASK-1/comments",
        a,
        Some("[]"),
    );
    assert_eq!(bad_comment.status, StatusCode::BAD_REQUEST);
    let nowhere = call(&http, &server, Method::GET, "/nowhere", a, None);
    assert_eq!(nowhere.status, StatusCode::NOT_FOUND);
    assert_eq!(nowhere.code(), "not_found");

    // Workspace B sees none of A's tickets, on any endpoint.
    for (method, path, body) in [
        (Method::GET, "/tickets/TASK-1", None),
        (
            Method::POST,
            "/tickets/TASK-1/comments",
            Some(r#"{"content":"from B"}"#),
        ),
        (Method::DELETE, "/tickets/TASK-1", None),
        (
            Method::GET,
            &*format!("/tickets/{}", ticket["id"].as_str().unwrap()),
            None,
        ),
    ] {
        let answer = call(&http, &server, method.clone(), path, b, body);
        assert_eq!(
            answer.status,
            StatusCode::NOT_FOUND,
            "{method} {path}: {}",
            answer.body
        );
        assert_eq!(answer.code(), "not_found");
    }
    let b_list = call(&http, &server, Method::GET, "/tickets", b, None);
    assert_eq!(b_list.status, StatusCode::OK);
    assert!(numbers(&b_list.body, "tickets").is_empty());
    assert_eq!(b_list.body["page"]["total"], 0);
    let b_search = call(&http, &server, Method::GET, "/search?q=login", b, None);
    assert_eq!(b_search.status, StatusCode::OK);
    assert!(numbers(&b_search.body, "hits").is_empty());
    // B's own first ticket is B's TASK-1; A's is untouched.
    let b_created = call(
        &http,
        &server,
        Method::POST,
        "/tickets",
        b,
        Some(r#"{"title":"Beta's own login work"}"#),
    );
    assert_eq!(b_created.status, StatusCode::CREATED);
    assert_eq!(b_created.body["ticket"]["number"], "TASK-1");
    let b_get = call(&http, &server, Method::GET, "/tickets/TASK-1", b, None);
    assert_eq!(b_get.body["ticket"]["title"], "Beta's own login work");
    let b_found = call(&http, &server, Method::GET, "/search?q=login", b, None);
    assert_eq!(numbers(&b_found.body, "hits"), ["TASK-1"]);
    assert_eq!(b_found.body["hits"][0]["title"], "Beta's own login work");
    let a_get = call(&http, &server, Method::GET, "/tickets/TASK-1", a, None);
    assert_eq!(a_get.body["ticket"]["title"], "Fix the login form");
    assert_eq!(a_get.body["comment_count"], 1, "B's comment never landed");
    let a_list = call(&http, &server, Method::GET, "/tickets", a, None);
    assert_eq!(numbers(&a_list.body, "tickets"), ["TASK-1"]);
    assert_eq!(a_list.body["tickets"][0]["title"], "Fix the login form");
}

#[test]
fn tokens_are_checked_and_scopes_enforced() {
    let db = TestDb::new();
    let pool = db.connect();
    let tokens = Tokens::new(&pool);
    let (alpha, full) = workspace(&tokens, "alpha");
    let reader = token(&tokens, &alpha, "reader", "tickets:read");
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
    let server = Server::start(&db, &[]);
    let http = client();
    let created = call(
        &http,
        &server,
        Method::POST,
        "/tickets",
        Some(&full),
        Some(r#"{"title":"Guarded"}"#),
    );
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);

    let unknown = format!("jil_live_{}", "Q".repeat(40));
    let cases: [(&str, Option<&str>, &str); 6] = [
        ("no token", None, "no API token"),
        ("another scheme", Some("Basic dXNlcjpwYXNz"), "Bearer"),
        ("a malformed token", Some("jil_live_short"), "malformed"),
        ("an unknown token", Some(&unknown), "not valid"),
        ("an expired token", Some(expired.token.expose()), "expired"),
        ("a revoked token", Some(revoked.token.expose()), "revoked"),
    ];
    for (what, token, says) in cases {
        for (method, path, body) in [
            (Method::GET, "/tickets", None),
            (Method::GET, "/tickets/TASK-1", None),
            (Method::POST, "/tickets", Some(r#"{"title":"x"}"#)),
            (Method::DELETE, "/tickets/TASK-1", None),
        ] {
            let answer = call(&http, &server, method, path, token, body);
            assert_eq!(
                answer.status,
                StatusCode::UNAUTHORIZED,
                "{what}: {}",
                answer.body
            );
            assert_eq!(answer.header("www-authenticate"), Some("Bearer"), "{what}");
            assert_eq!(answer.code(), "unauthenticated", "{what}");
            assert!(answer.message().contains(says), "{what}: {}", answer.body);
            assert!(answer.header("x-ratelimit-limit").is_none());
            if let Some(token) = token {
                assert!(!answer.body.to_string().contains(token), "{what} is echoed");
            }
        }
    }
    let expired_answer = call(
        &http,
        &server,
        Method::GET,
        "/tickets",
        Some(expired.token.expose()),
        None,
    );
    assert!(
        expired_answer.message().contains("2020-01-02T03:04:05"),
        "says when"
    );
    let revoked_at = tokens
        .list(alpha.id)
        .unwrap()
        .into_iter()
        .find(|t| t.id == revoked.record.id)
        .unwrap()
        .revoked_at
        .unwrap();
    let revoked_answer = call(
        &http,
        &server,
        Method::GET,
        "/tickets",
        Some(revoked.token.expose()),
        None,
    );
    assert!(revoked_answer.message().contains(&revoked_at), "says when");

    // A tickets:read token reads, and is refused every write, naming the scope.
    let read = Some(reader.token.expose());
    for (method, path) in [
        (Method::GET, "/tickets/TASK-1"),
        (Method::GET, "/tickets"),
        (Method::GET, "/search?q=guarded"),
    ] {
        let answer = call(&http, &server, method, path, read, None);
        assert_eq!(answer.status, StatusCode::OK, "{path}: {}", answer.body);
    }
    for (method, path, body, scope) in [
        (
            Method::POST,
            "/tickets",
            Some(r#"{"title":"sneaky"}"#),
            "tickets:write",
        ),
        (
            Method::POST,
            "/tickets/TASK-1/comments",
            Some(r#"{"content":"sneaky"}"#),
            "comments:write",
        ),
        (Method::DELETE, "/tickets/TASK-1", None, "tickets:delete"),
    ] {
        let answer = call(&http, &server, method, path, read, body);
        assert_eq!(
            answer.status,
            StatusCode::FORBIDDEN,
            "{path}: {}",
            answer.body
        );
        assert_eq!(answer.code(), "permission_denied");
        assert!(answer.message().contains(scope), "{path}: {}", answer.body);
        assert_rate_headers(&answer);
    }
    let still = call(
        &http,
        &server,
        Method::GET,
        "/tickets/TASK-1",
        Some(&full),
        None,
    );
    assert_eq!(still.status, StatusCode::OK);
    assert_eq!(still.body["comment_count"], 0);
    let listed = call(&http, &server, Method::GET, "/tickets", Some(&full), None);
    assert_eq!(numbers(&listed.body, "tickets"), ["TASK-1"]);

    // No token ever reaches the server's log.
    let log = server.log();
    for secret in [
        full.as_str(),
        reader.token.expose(),
        expired.token.expose(),
        revoked.token.expose(),
        unknown.as_str(),
    ] {
        assert!(!log.contains(secret), "a token in the log");
    }
}

#[test]
fn requests_over_the_rate_limit_get_429() {
    let db = TestDb::new();
    let pool = db.connect();
    let tokens = Tokens::new(&pool);
    let (_alpha, full) = workspace(&tokens, "alpha");
    let server = Server::start(&db, &["--rate-limit", "3"]);
    let http = client();
    let now = clear_of_window_end();
    for remaining in [2, 1, 0] {
        let answer = call(&http, &server, Method::GET, "/tickets", Some(&full), None);
        assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
        assert_eq!(answer.header("x-ratelimit-limit"), Some("3"));
        assert_eq!(
            answer.header("x-ratelimit-remaining"),
            Some(&*remaining.to_string())
        );
        let reset: u64 = answer.header("x-ratelimit-reset").unwrap().parse().unwrap();
        assert!(
            reset > now && reset <= now + 120,
            "reset {reset}, now {now}"
        );
    }
    let refused = call(&http, &server, Method::GET, "/tickets", Some(&full), None);
    assert_eq!(
        refused.status,
        StatusCode::TOO_MANY_REQUESTS,
        "{}",
        refused.body
    );
    assert_eq!(refused.code(), "rate_limit");
    assert_eq!(refused.error()["retryable"], true);
    let retry: u64 = refused.header("retry-after").unwrap().parse().unwrap();
    assert!((1..=65).contains(&retry), "Retry-After {retry}");
    assert_eq!(refused.error()["retry_after_secs"], retry);
    assert_eq!(refused.header("x-ratelimit-remaining"), Some("0"));
    // A write over the limit is refused too, and does nothing.
    let write = call(
        &http,
        &server,
        Method::POST,
        "/tickets",
        Some(&full),
        Some(r#"{"title":"late"}"#),
    );
    assert_eq!(write.status, StatusCode::TOO_MANY_REQUESTS);
    let count: i64 = db
        .client()
        .query_one("SELECT count(*) FROM tickets", &[])
        .unwrap()
        .get(0);
    assert_eq!(count, 0);
}

/// The rate window is a minute on the database's clock: wait until well clear of its end,
/// so that a test's requests fall in one window. The time now, in seconds.
fn clear_of_window_end() -> u64 {
    let now = || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs()
    };
    let at = now();
    if at % 60 > 50 {
        std::thread::sleep(Duration::from_secs(61 - at % 60));
    }
    now()
}

#[test]
fn two_server_processes_share_one_rate_limit() {
    let db = TestDb::new();
    let pool = db.connect();
    let (_alpha, full) = workspace(&Tokens::new(&pool), "alpha");
    let one = Server::start(&db, &["--rate-limit", "4"]);
    let two = Server::start(&db, &["--rate-limit", "4"]);
    let http = client();
    clear_of_window_end();
    let mut remaining = Vec::new();
    for server in [&one, &two, &one, &two] {
        let answer = call(&http, server, Method::GET, "/tickets", Some(&full), None);
        assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
        remaining.push(answer.header("x-ratelimit-remaining").unwrap().to_string());
    }
    assert_eq!(remaining, ["3", "2", "1", "0"], "one count across both");
    for server in [&one, &two] {
        let refused = call(&http, server, Method::GET, "/tickets", Some(&full), None);
        assert_eq!(
            refused.status,
            StatusCode::TOO_MANY_REQUESTS,
            "{}",
            refused.body
        );
        assert_eq!(refused.code(), "rate_limit");
    }
}

#[test]
fn a_token_revoked_through_one_process_is_refused_by_the_other_within_a_second() {
    let db = TestDb::new();
    let pool = db.connect();
    let tokens = Tokens::new(&pool);
    let (alpha, full) = workspace(&tokens, "alpha");
    let agent = token(&tokens, &alpha, "agent", "full_access");
    let agent_token = agent.token.expose().to_string();
    // A limit high enough that the other process leases blocks of the agent's requests.
    let one = Server::start(&db, &["--rate-limit", "640000"]);
    let two = Server::start(&db, &["--rate-limit", "640000"]);
    let http = client();
    let list = |server: &Server| {
        call(
            &http,
            server,
            Method::GET,
            "/tickets",
            Some(&agent_token),
            None,
        )
    };
    for _ in 0..200 {
        let read = list(&two);
        assert_eq!(read.status, StatusCode::OK, "{}", read.body);
    }
    let path = format!("/tokens/{}", agent.record.id);
    let revoked = call(&http, &one, Method::DELETE, &path, Some(&full), None);
    assert_eq!(revoked.status, StatusCode::OK, "{}", revoked.body);
    let since = std::time::Instant::now();
    // The revoking process refuses it at once; the other refuses a write at once.
    let here = list(&one);
    assert_eq!(here.status, StatusCode::UNAUTHORIZED, "{}", here.body);
    let body = r#"{"title":"After revocation"}"#;
    let write = call(
        &http,
        &two,
        Method::POST,
        "/tickets",
        Some(&agent_token),
        Some(body),
    );
    assert_eq!(write.status, StatusCode::UNAUTHORIZED, "{}", write.body);
    // Its reads stop within the second a lease lasts.
    loop {
        let read = list(&two);
        if read.status == StatusCode::UNAUTHORIZED {
            assert_eq!(read.code(), "unauthenticated");
            break;
        }
        assert_eq!(read.status, StatusCode::OK, "{}", read.body);
        assert!(
            since.elapsed() < Duration::from_millis(1_500),
            "still served {:?} after its revocation",
            since.elapsed()
        );
    }
    let listed = call(&http, &one, Method::GET, "/tickets", Some(&full), None);
    assert!(
        numbers(&listed.body, "tickets").is_empty(),
        "nothing was written"
    );
}

#[test]
fn two_server_processes_on_one_database_honour_each_others_cursors() {
    let db = TestDb::new();
    let pool = db.connect();
    let tokens = Tokens::new(&pool);
    let (_alpha, a) = workspace(&tokens, "alpha");
    let (_beta, b) = workspace(&tokens, "beta");
    let a = Some(a.as_str());
    let b = Some(b.as_str());
    // Two processes behind one load balancer.
    let first = Server::start(&db, &[]);
    let second = Server::start(&db, &[]);
    let http = client();
    for title in ["One", "Two", "Three"] {
        let body = json!({ "title": title }).to_string();
        let created = call(&http, &first, Method::POST, "/tickets", a, Some(&body));
        assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    }
    let page = call(&http, &first, Method::GET, "/tickets?limit=2", a, None);
    let cursor = page.body["page"]["next_cursor"]
        .as_str()
        .expect("a next page")
        .to_string();
    let path = format!("/tickets?limit=2&cursor={}", urlencode(&cursor));
    let rest = call(&http, &second, Method::GET, &path, a, None);
    assert_eq!(rest.status, StatusCode::OK, "{}", rest.body);
    let mut all = numbers(&page.body, "tickets");
    all.extend(numbers(&rest.body, "tickets"));
    all.sort();
    assert_eq!(all, ["TASK-1", "TASK-2", "TASK-3"]);
    // The same cursor is still bound to its workspace: refused for another.
    let foreign = call(&http, &second, Method::GET, &path, b, None);
    assert_eq!(foreign.status, StatusCode::BAD_REQUEST, "{}", foreign.body);
    assert_eq!(foreign.code(), "invalid_params");
}

#[test]
fn the_openapi_document_is_public_and_describes_every_route() {
    let db = TestDb::new();
    let server = Server::start(&db, &[]);
    // No token needed, no rate-limit count.
    let answer = client()
        .get(format!("{}/openapi.json", server.url))
        .send()
        .unwrap();
    assert_eq!(answer.status(), StatusCode::OK);
    assert_eq!(
        answer.headers()["content-type"].to_str().unwrap(),
        "application/json"
    );
    let doc: Value = answer.json().unwrap();
    assert_eq!(doc["openapi"], "3.1.0");
    let paths = doc["paths"].as_object().unwrap();
    for (path, method) in [
        ("/tickets", "post"),
        ("/tickets", "get"),
        ("/tickets/{ticket_id}", "get"),
        ("/tickets/{ticket_id}", "delete"),
        ("/tickets/{ticket_id}/claim", "post"),
        ("/tickets/{ticket_id}/dependencies/{depends_on}", "delete"),
        ("/search", "get"),
        ("/templates/{template}/tickets", "post"),
        ("/tokens", "post"),
        ("/audit", "get"),
        ("/events", "get"),
    ] {
        assert!(
            paths.get(path).and_then(|p| p.get(method)).is_some(),
            "{method} {path} missing"
        );
    }
    assert_eq!(
        paths["/tickets/{ticket_id}/claim"]["post"]["x-required-scope"],
        "tickets:write"
    );
    // Everything else still needs a token.
    let refused = client()
        .get(format!("{}/tickets", server.url))
        .send()
        .unwrap();
    assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
}

#[test]
fn sigterm_stops_the_server_cleanly_after_it_served() {
    let db = TestDb::new();
    let pool = db.connect();
    let (_alpha, full) = workspace(&Tokens::new(&pool), "alpha");
    let server = Server::start(&db, &[]);
    let http = client();
    // Every pool in use: the API's, the rate limiter's, the workspace's tracker.
    let created = call(
        &http,
        &server,
        Method::POST,
        "/tickets",
        Some(&full),
        Some(r#"{"title":"before the stop"}"#),
    );
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    let (status, log) = server.terminate();
    assert!(status.success(), "{status:?}: {log}");
    assert!(!log.contains("panicked"), "{log}");
}

/// The ticket rules of local mode hold on PostgreSQL through the API: a title with NUL (or
/// another control character) is `invalid_input` (400), not a database error; a ticket
/// number is digits only; a batch dependency on a title two items share is refused, and
/// nothing of the batch is written.
#[test]
fn the_api_refuses_control_characters_signed_numbers_and_ambiguous_batch_titles() {
    let db = TestDb::new();
    let pool = db.connect();
    let (_alpha, full) = workspace(&Tokens::new(&pool), "alpha");
    let server = Server::start(&db, &[]);
    let http = client();
    let post =
        |path: &str, body: Value| call_json(&http, &server, Method::POST, path, &full, Some(body));

    // NUL cannot reach PostgreSQL: the API refuses it in any argument, before the tracker.
    for title in ["\0", "\0\0", "Fix\0 login"] {
        for (path, body) in [
            ("/tickets", json!({"title": title})),
            (
                "/tickets/batch",
                json!({"tickets": [{"title": "Fine"}, {"title": title}]}),
            ),
        ] {
            let refused = post(path, body);
            assert_eq!(
                refused.status,
                StatusCode::BAD_REQUEST,
                "{title:?}: {}",
                refused.body
            );
            assert_eq!(refused.code(), "invalid_input");
            assert!(refused.message().contains("NUL"), "{}", refused.message());
        }
    }
    // The other control characters are the tracker's title rule, as in local mode.
    for (title, code) in [
        ("\u{1b}[2J", "U+001B"),
        ("a\u{7f}", "U+007F"),
        ("\u{1}", "U+0001"),
    ] {
        let want = format!("Title cannot contain control characters (found {code})");
        let refused = post("/tickets", json!({"title": title}));
        assert_eq!(
            refused.status,
            StatusCode::BAD_REQUEST,
            "{title:?}: {}",
            refused.body
        );
        assert_eq!(refused.code(), "invalid_input");
        assert_eq!(refused.message(), want);
        let refused = post(
            "/tickets/batch",
            json!({"tickets": [{"title": "Fine"}, {"title": title}]}),
        );
        assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{}", refused.body);
        assert_eq!(refused.message(), format!("Ticket #2 of the batch: {want}"));
    }

    let ambiguous = post(
        "/tickets/batch",
        json!({"tickets": [{"title": "Set up"}, {"title": "Set up"},
                           {"title": "Build", "depends_on": ["Set up"]}]}),
    );
    assert_eq!(
        ambiguous.status,
        StatusCode::BAD_REQUEST,
        "{}",
        ambiguous.body
    );
    assert_eq!(ambiguous.code(), "invalid_input");
    assert_eq!(
        ambiguous.message(),
        "Ticket #3 of the batch depends on 'Set up', a title that items #1, #2 of the batch share"
    );
    let all = call(&http, &server, Method::GET, "/tickets", Some(&full), None);
    assert_eq!(
        all.body["page"]["total"], 0,
        "nothing was written: {}",
        all.body
    );

    let created = post("/tickets", json!({"title": "Tab\tseparated"}));
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    assert_eq!(
        created.body["ticket"]["number"], "TASK-1",
        "no number was used"
    );
    for bad in ["TASK-+1", "TASK--1", "TASK- 1", "+1"] {
        let path = format!("/tickets/{}", urlencode(bad));
        let refused = call(&http, &server, Method::GET, &path, Some(&full), None);
        assert_eq!(
            refused.status,
            StatusCode::BAD_REQUEST,
            "{bad}: {}",
            refused.body
        );
        assert_eq!(refused.code(), "invalid_input", "{bad}");
    }
    let same = call(
        &http,
        &server,
        Method::GET,
        "/tickets/TASK-01",
        Some(&full),
        None,
    );
    assert_eq!(same.status, StatusCode::OK, "{}", same.body);
    assert_eq!(same.body["ticket"]["number"], "TASK-1");
}
