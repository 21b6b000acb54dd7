//! The audit log of `jility serve` (`GET /api/v1/audit`, `jility audit`), against a real
//! PostgreSQL: every write (answered or refused after authentication) and every
//! authentication failure is recorded with its token, actor, operation, ticket and status;
//! expired and revoked tokens under their workspace, unknown ones under none; `full_access`
//! required; tenant isolation; paging; no token in a dump of the database; the CLI; floods
//! of refused requests cause a few entries per source and minute and one that counts the
//! rest.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stderr
)] // assertions in tests; the server's log is passed on to stderr

use std::collections::HashSet;
use std::process::Command;

use chrono::{SecondsFormat, TimeDelta, Utc};
use jility_cloud::auth::{NewToken, ScopeSet, Tokens};
use reqwest::Method;
use reqwest::StatusCode;
use reqwest::blocking::Client;
use serde_json::{Value, json};

use crate::cloud;
use crate::pg;

use cloud::*;
use pg::TestDb;

/// Every entry of the workspace's audit log, page by page with `limit`, checking that no
/// entry comes twice.
fn audit_pages(http: &Client, server: &Server, token: &str, limit: usize) -> Vec<Value> {
    let mut all = Vec::new();
    let mut cursor: Option<String> = None;
    let mut seen = HashSet::new();
    for _ in 0..100 {
        let mut path = format!("/audit?limit={limit}");
        if let Some(c) = &cursor {
            path.push_str(&format!("&cursor={c}"));
        }
        let page = call_json(http, server, Method::GET, &path, token, None);
        assert_eq!(page.status, StatusCode::OK, "{}", page.body);
        let entries = page.body["entries"].as_array().unwrap();
        assert!(entries.len() <= limit);
        for e in entries {
            assert!(seen.insert(e["id"].as_i64().unwrap()), "entry twice: {e}");
            all.push(e.clone());
        }
        match page.body["page"]["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_string()),
            None => return all,
        }
    }
    panic!("the audit log does not end");
}

fn expect(entry: &Value, operation: &str, token_id: i64, actor: &str, status: u16) {
    assert_eq!(entry["operation"], operation, "{entry}");
    assert_eq!(entry["token_id"], token_id, "{entry}");
    assert_eq!(entry["actor"], actor, "{entry}");
    assert_eq!(entry["status"], status, "{entry}");
    assert!(
        entry["at"].as_str().is_some_and(|at| at.ends_with('Z')),
        "{entry}"
    );
}

#[test]
fn writes_and_refusals_are_audited() {
    let db = TestDb::new();
    let pool = db.connect();
    let tokens = Tokens::new(&pool);
    let (alpha, admin) = workspace(&tokens, "alpha");
    let (_beta, beta) = workspace(&tokens, "beta");
    let admin_id = tokens.list(alpha.id).unwrap()[0].id;
    // A token that will have expired (made directly: its creation is not an API write).
    let old = tokens
        .create(
            alpha.id,
            &NewToken {
                name: "old".into(),
                scopes: ScopeSet::full_access(),
                expires_at: Some(Utc::now() + TimeDelta::days(1)),
                created_by: "tester".into(),
            },
        )
        .unwrap();
    let past = (Utc::now() - TimeDelta::minutes(5)).to_rfc3339_opts(SecondsFormat::Millis, true);
    db.client()
        .execute(
            "UPDATE api_tokens SET expires_at = $2 WHERE id = $1",
            &[&old.record.id, &past],
        )
        .unwrap();
    let server = Server::start(&db, &[]);
    let http = client();

    // The writes: a ticket created, commented, deleted; tokens created and revoked.
    let created = call_json(
        &http,
        &server,
        Method::POST,
        "/tickets",
        &admin,
        Some(json!({"title": "Audit me"})),
    );
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    let key = created.body["ticket"]["number"]
        .as_str()
        .unwrap()
        .to_string();
    let commented = call_json(
        &http,
        &server,
        Method::POST,
        &format!("/tickets/{key}/comments"),
        &admin,
        Some(json!({"content": "noted"})),
    );
    assert_eq!(commented.status, StatusCode::CREATED, "{}", commented.body);
    let deleted = call_json(
        &http,
        &server,
        Method::DELETE,
        &format!("/tickets/{key}"),
        &admin,
        None,
    );
    assert_eq!(deleted.status, StatusCode::OK, "{}", deleted.body);
    let mint = |name: &str, scopes: Value| {
        let minted = call_json(
            &http,
            &server,
            Method::POST,
            "/tokens",
            &admin,
            Some(json!({"name": name, "scopes": scopes})),
        );
        assert_eq!(minted.status, StatusCode::CREATED, "{}", minted.body);
        (
            minted.body["token"].as_str().unwrap().to_string(),
            minted.body["id"].as_i64().unwrap(),
        )
    };
    let (reader, reader_id) = mint("reader", json!(["tickets:read"]));
    let (doomed, doomed_id) = mint("doomed", json!(["full_access"]));
    let revoked = call_json(
        &http,
        &server,
        Method::DELETE,
        &format!("/tokens/{doomed_id}"),
        &admin,
        None,
    );
    assert_eq!(revoked.status, StatusCode::OK, "{}", revoked.body);
    // A write refused after authentication.
    let refused = call_json(
        &http,
        &server,
        Method::POST,
        "/tickets",
        &reader,
        Some(json!({"title": "nope"})),
    );
    assert_eq!(refused.status, StatusCode::FORBIDDEN, "{}", refused.body);
    // Reads are not audited.
    let read = call_json(&http, &server, Method::GET, "/tickets", &reader, None);
    assert_eq!(read.status, StatusCode::OK, "{}", read.body);
    // Authentication failures: expired, revoked, unknown, missing.
    for token in [old.token.expose(), doomed.as_str()] {
        let failed = call_json(&http, &server, Method::GET, "/tickets", token, None);
        assert_eq!(failed.status, StatusCode::UNAUTHORIZED, "{}", failed.body);
    }
    let unknown = format!("jil_live_{}", "Q".repeat(40));
    let failed = call_json(&http, &server, Method::GET, "/tickets", &unknown, None);
    assert_eq!(failed.status, StatusCode::UNAUTHORIZED, "{}", failed.body);
    let missing = http.get(format!("{}/tickets", server.url)).send().unwrap();
    assert_eq!(missing.status(), StatusCode::UNAUTHORIZED);

    // The log, newest first (refusals are written by a thread of their own, a moment after
    // their answers: the listing is read again until they are in).
    let mut listed = call_json(&http, &server, Method::GET, "/audit", &admin, None);
    for _ in 0..50 {
        if listed.body["entries"]
            .as_array()
            .is_some_and(|e| e.len() >= 9)
        {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
        listed = call_json(&http, &server, Method::GET, "/audit", &admin, None);
    }
    assert_eq!(listed.status, StatusCode::OK, "{}", listed.body);
    let entries = listed.body["entries"].as_array().unwrap().clone();
    assert_eq!(entries.len(), 9, "{}", listed.body);
    assert_eq!(listed.body["page"]["total"], 9, "{}", listed.body);
    assert!(listed.body["page"].get("next_cursor").is_none());
    let ids: Vec<i64> = entries.iter().map(|e| e["id"].as_i64().unwrap()).collect();
    assert!(ids.windows(2).all(|w| w[0] > w[1]), "newest first: {ids:?}");
    let e = &entries;
    expect(&e[0], "auth.failed", doomed_id, "doomed", 401);
    assert_eq!(e[0]["detail"], "revoked");
    expect(&e[1], "auth.failed", old.record.id, "old", 401);
    assert_eq!(e[1]["detail"], "expired");
    expect(&e[2], "tickets.create", reader_id, "reader", 403);
    assert!(e[2]["ticket"].is_null());
    expect(&e[3], "tokens.revoke", admin_id, "bootstrap", 200);
    assert!(
        e[3]["detail"]
            .as_str()
            .unwrap()
            .contains(&doomed_id.to_string())
    );
    expect(&e[4], "tokens.create", admin_id, "bootstrap", 201);
    expect(&e[5], "tokens.create", admin_id, "bootstrap", 201);
    expect(&e[6], "tickets.delete", admin_id, "bootstrap", 200);
    expect(&e[7], "tickets.comment", admin_id, "bootstrap", 201);
    expect(&e[8], "tickets.create", admin_id, "bootstrap", 201);
    for entry in &e[6..] {
        assert_eq!(entry["ticket"], key.as_str(), "{entry}");
    }

    // Unknown and missing tokens belong to no workspace.
    let text = listed.body.to_string();
    assert!(!text.contains("\"unknown\"") && !text.contains("\"missing\""));
    assert_eq!(eventually_anonymous(&db, 2), ["unknown", "missing"]);

    // full_access only.
    let denied = call_json(&http, &server, Method::GET, "/audit", &reader, None);
    assert_eq!(denied.status, StatusCode::FORBIDDEN, "{}", denied.body);
    assert_eq!(denied.code(), "permission_denied");

    // Workspace B sees none of A's entries, and cannot use A's cursor.
    let foreign = call_json(&http, &server, Method::GET, "/audit", &beta, None);
    assert_eq!(foreign.status, StatusCode::OK, "{}", foreign.body);
    assert_eq!(foreign.body["entries"], json!([]), "{}", foreign.body);
    assert_eq!(foreign.body["page"]["total"], 0);
    let first = call_json(&http, &server, Method::GET, "/audit?limit=2", &admin, None);
    let cursor = first.body["page"]["next_cursor"].as_str().unwrap();
    let stolen = call_json(
        &http,
        &server,
        Method::GET,
        &format!("/audit?limit=2&cursor={cursor}"),
        &beta,
        None,
    );
    assert_eq!(stolen.status, StatusCode::BAD_REQUEST, "{}", stolen.body);
    let bad = call_json(&http, &server, Method::GET, "/audit?limit=0", &admin, None);
    assert_eq!(bad.status, StatusCode::BAD_REQUEST, "{}", bad.body);

    // Paging by 2 visits every entry once, in order.
    let paged = audit_pages(&http, &server, &admin, 2);
    assert_eq!(paged, entries);

    // The CLI prints the same entries.
    let home = tempfile::tempdir().unwrap();
    let out = jility(
        &["audit", "--json"],
        server.root(),
        Some(&admin),
        home.path(),
    );
    let printed = stdout_json(&out);
    assert_eq!(printed["entries"], json!(entries));
    let out = jility(
        &["audit", "--limit", "2"],
        server.root(),
        Some(&admin),
        home.path(),
    );
    assert!(out.status.success());
    let table = String::from_utf8_lossy(&out.stdout);
    // A table for people: aligned columns under a header, times said as people say them.
    assert!(table.starts_with("ID  WHEN      TOKEN  WHO"), "{table}");
    assert!(
        table
            .lines()
            .any(|l| l.contains(" just now ") && l.contains("auth.failed") && l.contains(" 401 ")),
        "{table}"
    );
    assert!(table.contains("2 of 9 entries, newest first\n"), "{table}");
    assert!(
        table.contains("Next page: jility audit --cursor "),
        "{table}"
    );
    let out = jility(
        &["audit", "--json"],
        server.root(),
        Some(&reader),
        home.path(),
    );
    assert!(!out.status.success());

    // A failing audit insert does not fail the request.
    db.client()
        .batch_execute("ALTER TABLE audit_log RENAME TO audit_log_away")
        .unwrap();
    let unaudited = call_json(
        &http,
        &server,
        Method::POST,
        "/tickets",
        &admin,
        Some(json!({"title": "Still works"})),
    );
    assert_eq!(unaudited.status, StatusCode::CREATED, "{}", unaudited.body);
    db.client()
        .batch_execute("ALTER TABLE audit_log_away RENAME TO audit_log")
        .unwrap();

    // No token anywhere in a dump of the database.
    let pg_dump = std::env::var("PG_DUMP").unwrap_or_else(|_| "/usr/bin/pg_dump".to_string());
    let dump = Command::new(&pg_dump)
        .args(["--no-password", "--dbname", &db.url])
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "cannot run pg_dump ({pg_dump}; install the PostgreSQL client or set PG_DUMP): {e}"
            )
        });
    assert!(
        dump.status.success(),
        "pg_dump failed: {}",
        String::from_utf8_lossy(&dump.stderr)
    );
    let dump = String::from_utf8_lossy(&dump.stdout);
    assert!(dump.contains("audit_log") && dump.contains("auth.failed"));
    for secret in [
        admin.as_str(),
        beta.as_str(),
        reader.as_str(),
        doomed.as_str(),
        old.token.expose(),
        unknown.as_str(),
    ] {
        assert!(!dump.contains(secret), "the dump contains a token");
        assert!(
            !dump.contains(&secret[13..]),
            "the dump contains part of a token"
        );
    }
}

/// Refusals given their own entry per source and minute (`api::refusals::PER_SOURCE`).
const PER_SOURCE: usize = 10;

/// How many refusals the `auth.failed` entries `details` stand for: one each, or the count
/// a summary (`N more refusals suppressed (…) …`) gives.
fn refusals_counted(details: &[String]) -> u64 {
    details
        .iter()
        .map(|d| {
            if d.contains(" suppressed (") {
                d.split_whitespace().next().unwrap().parse::<u64>().unwrap()
            } else {
                assert!(
                    ["missing", "malformed", "unknown", "expired", "revoked"].contains(&d.as_str()),
                    "{d}"
                );
                1
            }
        })
        .sum()
}

/// The details of the authentication failures under no workspace, oldest first.
fn anonymous_refusals(db: &TestDb) -> Vec<String> {
    db.client()
        .query(
            "SELECT detail FROM audit_log WHERE workspace_id IS NULL \
             AND operation = 'auth.failed' ORDER BY id",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect()
}

/// [`anonymous_refusals`] once there are at least `n` (they are written a moment after
/// their answers), or as they are after 5 s.
fn eventually_anonymous(db: &TestDb, n: usize) -> Vec<String> {
    for _ in 0..50 {
        let found = anonymous_refusals(db);
        if found.len() >= n {
            return found;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    anonymous_refusals(db)
}

/// Sleep until a minute has at least `secs` seconds left (on this machine's clock, which
/// is the server's), so that what follows falls in one window.
fn wait_for_room_in_the_minute(secs: i64) {
    let into = Utc::now().timestamp_millis().rem_euclid(60_000);
    if 60_000 - into < secs * 1000 {
        std::thread::sleep(std::time::Duration::from_millis(
            u64::try_from(60_000 - into + 500).unwrap(),
        ));
    }
}

/// A client without a valid token cannot fill the database: 500 requests with made-up
/// tokens (each a different one) and 100 with a revoked token cause a few entries each, and
/// one entry per source counts the rest (written at the latest when the server stops), so
/// that no refusal goes uncounted; a refusal then a valid request, and writes during the
/// flood, are audited as before; no token appears in the log or the server's output.
#[test]
fn refusal_floods_are_bounded_and_counted() {
    let db = TestDb::new();
    let pool = db.connect();
    let tokens = Tokens::new(&pool);
    let (alpha, admin) = workspace(&tokens, "alpha");
    let admin_id = tokens.list(alpha.id).unwrap()[0].id;
    let doomed = token(&tokens, &alpha, "doomed", "full_access");
    let doomed_id = doomed.record.id;
    let doomed = doomed.token.expose().to_string();
    let server = Server::start(&db, &[]);
    let http = client();

    // A client gets its token wrong, then right: both are in the log.
    let wrong = format!("jil_live_{}", "W".repeat(40));
    let refused = call_json(&http, &server, Method::GET, "/tickets", &wrong, None);
    assert_eq!(refused.status, StatusCode::UNAUTHORIZED, "{}", refused.body);
    let created = call_json(
        &http,
        &server,
        Method::POST,
        "/tickets",
        &admin,
        Some(json!({"title": "after a typo"})),
    );
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    assert_eq!(eventually_anonymous(&db, 1), ["unknown"]);
    let revoked = call_json(
        &http,
        &server,
        Method::DELETE,
        &format!("/tokens/{doomed_id}"),
        &admin,
        None,
    );
    assert_eq!(revoked.status, StatusCode::OK, "{}", revoked.body);

    // The flood: a new made-up token each time, then a revoked one, with writes between.
    let mut made_up = Vec::new();
    for i in 0..500 {
        let bogus = format!("jil_live_{i:040}");
        let answer = call_json(&http, &server, Method::POST, "/tickets", &bogus, None);
        assert_eq!(answer.status, StatusCode::UNAUTHORIZED, "{}", answer.body);
        assert_eq!(answer.code(), "unauthenticated");
        made_up.push(bogus);
        if i % 100 == 99 {
            let write = call_json(
                &http,
                &server,
                Method::POST,
                "/tickets",
                &admin,
                Some(json!({"title": format!("during the flood {i}")})),
            );
            assert_eq!(write.status, StatusCode::CREATED, "{}", write.body);
        }
    }
    for _ in 0..100 {
        let answer = call_json(&http, &server, Method::GET, "/tickets", &doomed, None);
        assert_eq!(answer.status, StatusCode::UNAUTHORIZED, "{}", answer.body);
    }
    // Still refused, and answered as before, after the entries ran out.
    let missing = http.get(format!("{}/tickets", server.url)).send().unwrap();
    assert_eq!(missing.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(
        missing
            .headers()
            .get("www-authenticate")
            .and_then(|v| v.to_str().ok()),
        Some("Bearer")
    );

    // Every write is in the workspace's log, the flood or not.
    let listed = audit_pages(&http, &server, &admin, 200);
    let creates = listed
        .iter()
        .filter(|e| e["operation"] == "tickets.create")
        .count();
    assert_eq!(creates, 6, "{listed:?}");
    assert!(listed.iter().all(|e| e["token_id"] != json!(null)));

    // Stopping the server records what it counted.
    let (status, log) = server.terminate();
    assert!(status.success(), "{status:?}: {log}");
    assert!(log.contains("too many refused requests"), "{log}");

    // Under no workspace: 502 refusals from 127.0.0.1, in a few entries (two windows at
    // most: ten each and a summary), all counted.
    let anonymous = anonymous_refusals(&db);
    assert!(anonymous.len() <= 2 * (PER_SOURCE + 1), "{anonymous:?}");
    assert_eq!(refusals_counted(&anonymous), 502, "{anonymous:?}");
    let summaries: Vec<&String> = anonymous
        .iter()
        .filter(|d| d.contains("suppressed"))
        .collect();
    assert!(!summaries.is_empty(), "{anonymous:?}");
    for summary in &summaries {
        assert!(
            summary.contains(" more refusals suppressed (")
                && summary.contains(" from 127.0.0.1 in the minute from "),
            "{summary}"
        );
    }

    // In the workspace's log, through the API of a server started again: the revoked token's
    // 100 refusals, in a few entries under its name, all counted.
    let server = Server::start(&db, &[]);
    let listed = audit_pages(&http, &server, &admin, 200);
    let of_doomed: Vec<&Value> = listed
        .iter()
        .filter(|e| e["operation"] == "auth.failed")
        .collect();
    for entry in &of_doomed {
        expect(entry, "auth.failed", doomed_id, "doomed", 401);
    }
    assert!(of_doomed.len() <= 2 * (PER_SOURCE + 1), "{of_doomed:?}");
    let details: Vec<String> = of_doomed
        .iter()
        .map(|e| e["detail"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(refusals_counted(&details), 100, "{details:?}");
    assert!(
        details
            .iter()
            .any(|d| d.contains(" more refusals suppressed (revoked ")
                && d.contains(" from this token ")),
        "{details:?}"
    );
    assert!(
        listed
            .iter()
            .any(|e| e["operation"] == "tokens.revoke" && e["token_id"] == admin_id)
    );

    // No token in the log nor in the server's output.
    let everything: Vec<String> = db
        .client()
        .query("SELECT coalesce(detail, '') FROM audit_log", &[])
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    let everything = everything.join("\n");
    let (_, log2) = server.terminate();
    for secret in made_up
        .iter()
        .chain([&wrong, &doomed, &admin])
        .map(String::as_str)
    {
        assert!(!everything.contains(&secret[9..]), "a token in the log");
        assert!(
            !log.contains(&secret[9..]),
            "a token in the server's output"
        );
        assert!(
            !log2.contains(&secret[9..]),
            "a token in the server's output"
        );
    }
}

/// The refusals suppressed in a minute are recorded when that minute ends, with the server
/// running; in the next minute, the source's refusals have entries of their own again.
#[test]
fn suppressed_refusals_are_recorded_when_the_minute_ends() {
    let db = TestDb::new();
    let server = Server::start(&db, &[]);
    let http = client();
    wait_for_room_in_the_minute(15);
    for _ in 0..30 {
        let answer = http.get(format!("{}/tickets", server.url)).send().unwrap();
        assert_eq!(answer.status(), StatusCode::UNAUTHORIZED);
    }
    assert_eq!(
        eventually_anonymous(&db, PER_SOURCE),
        vec!["missing"; PER_SOURCE]
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(75);
    let details = loop {
        let details = anonymous_refusals(&db);
        if details.len() > PER_SOURCE {
            break details;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no summary a minute later: {details:?}\n{}",
            server.log()
        );
        std::thread::sleep(std::time::Duration::from_millis(250));
    };
    assert_eq!(details.len(), PER_SOURCE + 1, "{details:?}");
    assert!(
        details[PER_SOURCE].starts_with("20 more refusals suppressed (missing 20) from 127.0.0.1"),
        "{details:?}"
    );
    // A new minute: an entry of its own again.
    let answer = http.get(format!("{}/tickets", server.url)).send().unwrap();
    assert_eq!(answer.status(), StatusCode::UNAUTHORIZED);
    let details = eventually_anonymous(&db, PER_SOURCE + 2);
    assert_eq!(details.len(), PER_SOURCE + 2, "{details:?}");
    assert_eq!(details[PER_SOURCE + 1], "missing");
    assert_eq!(refusals_counted(&details), 31);
}
