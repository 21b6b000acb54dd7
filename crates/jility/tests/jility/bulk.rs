//! Bulk edits through `jility serve`: one event naming every ticket changed (a preview is
//! none), one audit entry, a change-log entry per ticket naming the edit; another
//! workspace's bulk edit reaches none of these tickets, and a read-only token changes
//! nothing. (The domain's rules are the store suite's `bulk_edits`; the binaries' script is
//! `query.rs`.)

use std::time::Duration;

use reqwest::Method;
use reqwest::StatusCode;
use serde_json::json;

use crate::api_endpoints::{Fixture, Subscription};

#[test]
fn a_bulk_edit_is_one_event_one_audit_entry_and_stays_in_its_workspace() {
    let fx = Fixture::new();
    let events = Subscription::open(&fx.server, &fx.reader);
    let b_events = Subscription::open(&fx.server, &fx.b);

    // A preview changes nothing and is no event.
    let preview = fx.call(
        Method::POST,
        "/tickets/bulk",
        &fx.a,
        Some(json!({"query": "login is:open", "set": {"add_labels": ["auth"]}, "dry_run": true})),
    );
    assert_eq!(preview.status, StatusCode::OK, "{}", preview.body);
    assert_eq!(preview.body["dry_run"], true);
    assert_eq!(preview.body["matched"], 2, "{}", preview.body);
    events.quiet(Duration::from_millis(500));

    let done = fx.call(
        Method::POST,
        "/tickets/bulk",
        &fx.a,
        Some(json!({
            "query": "is:open",
            "set": {"add_labels": ["auth"], "status": "todo"},
            "expected_count": 3,
            "message": "sprint prep",
        })),
    );
    assert_eq!(done.status, StatusCode::OK, "{}", done.body);
    assert_eq!(done.body["changed"], 3, "{}", done.body);
    let bulk_id = done.body["bulk_id"].as_str().unwrap().to_string();
    let change = events.change();
    assert_eq!(change["operation"], "jility_bulk_update");
    let mut tickets: Vec<String> = change["tickets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().to_string())
        .collect();
    tickets.sort();
    assert_eq!(tickets, ["TASK-1", "TASK-2", "TASK-3"], "{change}");
    events.quiet(Duration::from_millis(500));

    // One audit entry; each ticket's change log names the edit.
    let audit = fx.call(Method::GET, "/audit?limit=5", &fx.a, None);
    assert_eq!(audit.status, StatusCode::OK, "{}", audit.body);
    let operations: Vec<&str> = audit.body["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["operation"].as_str().unwrap())
        .collect();
    assert_eq!(
        operations
            .iter()
            .filter(|o| **o == "tickets.bulk_update")
            .count(),
        2,
        "the preview and the edit: {operations:?}"
    );
    for n in 1..=3 {
        let ticket = fx.call(Method::GET, &format!("/tickets/TASK-{n}"), &fx.a, None);
        let details: Vec<&str> = ticket.body["recent_changes"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|c| c["detail"].as_str())
            .collect();
        assert!(
            details
                .iter()
                .filter(|d| **d == format!("bulk edit {bulk_id}"))
                .count()
                == 2,
            "TASK-{n}: {details:?}"
        );
    }

    // A read-only token changes nothing; B's edits reach only B's tickets.
    let refused = fx.call(
        Method::POST,
        "/tickets/bulk",
        &fx.reader,
        Some(json!({"query": "is:open", "set": {"status": "backlog"}})),
    );
    assert_eq!(refused.status, StatusCode::FORBIDDEN, "{}", refused.body);
    let theirs = fx.call(
        Method::POST,
        "/tickets/bulk",
        &fx.b,
        Some(json!({"query": "label:auth", "set": {"status": "in_progress"}})),
    );
    assert_eq!(theirs.status, StatusCode::OK, "{}", theirs.body);
    assert_eq!(theirs.body["matched"], 0, "{}", theirs.body);
    let named = fx.call(
        Method::POST,
        "/tickets/bulk/assign",
        &fx.b,
        Some(json!({"tickets": ["TASK-1"], "assignees": ["beta-person"]})),
    );
    assert_eq!(named.status, StatusCode::OK, "{}", named.body);
    assert_eq!(named.body["tickets"][0]["title"], "Beta's own work");
    let change = b_events.change();
    assert_eq!(change["operation"], "jility_bulk_assign");
    let mine = fx.call(Method::GET, "/tickets/TASK-1", &fx.a, None);
    assert_eq!(mine.body["ticket"]["assignees"], json!([]), "{}", mine.body);
    assert_eq!(mine.body["ticket"]["status"], "todo", "{}", mine.body);
    events.quiet(Duration::from_millis(500));
}
