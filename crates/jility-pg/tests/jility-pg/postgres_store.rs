//! The PostgreSQL store against a real server: the same domain scenario as on SQLite,
//! search, numbering under concurrent writers, workspace isolation and migrations.
//!
//! Each test makes its own database on the server at `JILITY_TEST_DATABASE_URL` (default
//! `postgres://postgres@127.0.0.1:5432/test`) and drops it when done, failed or not.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stderr
)] // assertions in tests; a database left behind is reported on stderr

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::{Arc, Barrier};
use std::time::Duration;

use jility_core::errors;
use jility_core::params::{
    AddComment, AssignTicket, BatchItem, ClaimTicket, CreateBatch, CreateTicket, Dependency,
    EditTicket, FromTemplate, LinkCommit, ListTemplates, ListTickets, RevertDescription,
    SearchTickets, StatusName, UpdateDescription, UpdateStatus,
};
use jility_core::store::{NewChange, Store, StoreError, StoreTx, TicketUpdate, wait};
use jility_core::tracker::Tracker;
use jility_pg::store::{PgDatabase, PgStore};
use jility_sqlite::store::SqlitePool;
use mcp_common_core::{CursorKey, Paged, ToolError};
use serde::Serialize;
use serde_json::{Value, json};

use crate::pg;

use pg::{TestDb, with_database};

/// A tracker on a new workspace of `db`, with a project `key`.
fn pg_tracker(db: &PgDatabase, workspace: &str, key: &str, root: &Path) -> Tracker<PgStore> {
    let ws = db.create_workspace(workspace).unwrap();
    let store = PgStore::open(db, ws.id).unwrap();
    let mut tracker = Tracker::new(store, root.to_path_buf(), CursorKey::random());
    tracker.init(key, "Demo", false).unwrap();
    tracker
}

fn sqlite_tracker(dir: &Path, key: &str) -> Tracker<SqlitePool> {
    let (pool, _) = SqlitePool::open(&dir.join("data.db"), true).unwrap();
    let mut tracker = Tracker::new(pool, dir.to_path_buf(), CursorKey::random());
    tracker.init(key, "Demo", false).unwrap();
    tracker
}

fn create(title: &str) -> CreateTicket {
    CreateTicket {
        title: title.to_string(),
        ..Default::default()
    }
}

fn status(name: &str) -> StatusName {
    StatusName(name.to_string())
}

/// UUIDs and times differ between runs; everything else must not.
fn scrub(value: Value) -> Value {
    match value {
        Value::String(s) => {
            if uuid::Uuid::parse_str(&s).is_ok() && s.len() == 36 {
                Value::String("<uuid>".into())
            } else if chrono::DateTime::parse_from_rfc3339(&s).is_ok() {
                Value::String("<time>".into())
            } else {
                Value::String(s)
            }
        }
        Value::Array(items) => Value::Array(items.into_iter().map(scrub).collect()),
        Value::Object(map) => Value::Object(map.into_iter().map(|(k, v)| (k, scrub(v))).collect()),
        other => other,
    }
}

fn outcome<T: Serialize>(result: Result<T, ToolError>) -> Value {
    match result {
        Ok(value) => scrub(serde_json::to_value(value).unwrap()),
        Err(err) => json!({"error": {"code": err.code.to_string(), "message": err.message}}),
    }
}

fn paged<T: Serialize>(result: Result<Paged<T>, ToolError>) -> Value {
    match result {
        Ok(p) => json!({
            "data": scrub(serde_json::to_value(&p.data).unwrap()),
            "total": p.page.total,
            "total_exact": p.page.total_exact,
            "more": p.page.next_cursor.is_some(),
        }),
        Err(err) => outcome::<()>(Err(err)),
    }
}

fn list<S: Store>(t: &mut Tracker<S>, p: ListTickets) -> Value {
    paged(t.list("alice", &p))
}

/// Search hits' numbers, best first, and the total.
fn search_numbers<S: Store>(t: &mut Tracker<S>, query: &str) -> (Vec<String>, u64) {
    let result = t
        .search(
            "alice",
            &SearchTickets {
                query: query.to_string(),
                limit: Some(100),
                cursor: None,
                sprint: None,
            },
        )
        .unwrap();
    (
        result.data.hits.into_iter().map(|h| h.number).collect(),
        result.page.total,
    )
}

/// One scenario through the whole domain; every answer (or error) in order.
fn scenario<S: Store>(t: &mut Tracker<S>) -> Vec<(&'static str, Value)> {
    let mut out: Vec<(&'static str, Value)> = Vec::new();
    let mut step = |name: &'static str, value: Value| out.push((name, value));

    step(
        "create 1",
        outcome(t.create_ticket(
            "alice",
            CreateTicket {
                title: "Implement login page".into(),
                description: Some(
                    "## Context\n\nUsers log in with a password.\n\n## Plan\n\nTBD\n".into(),
                ),
                story_points: Some(5),
                assignees: vec!["alice".into()],
                labels: vec!["frontend".into(), "auth".into()],
                ..Default::default()
            },
        )),
    );
    step(
        "create 2",
        outcome(t.create_ticket(
            "bob",
            CreateTicket {
                title: "Write API docs".into(),
                status: Some(status("todo")),
                labels: vec!["docs".into()],
                kind: Some(jility_core::model::Kind::Epic),
                ..Default::default()
            },
        )),
    );
    step(
        "create 3",
        outcome(t.create_ticket(
            "alice",
            CreateTicket {
                title: "Set up CI".into(),
                parent_id: Some("TASK-1".into()),
                epic_id: Some("TASK-2".into()),
                ..Default::default()
            },
        )),
    );
    step(
        "create bad points",
        outcome(t.create_ticket(
            "alice",
            CreateTicket {
                title: "Bad".into(),
                story_points: Some(40),
                ..Default::default()
            },
        )),
    );
    step("get 1", outcome(t.get_ticket("TASK-1")));
    step(
        "status 1 in_progress",
        outcome(t.update_status(
            "alice",
            UpdateStatus {
                ticket_id: "TASK-1".into(),
                status: status("in_progress"),
                message: Some("starting".into()),
            },
        )),
    );
    step(
        "status 3 backlog->done refused",
        outcome(t.update_status(
            "alice",
            UpdateStatus {
                ticket_id: "TASK-3".into(),
                status: status("done"),
                message: None,
            },
        )),
    );
    for (i, text) in ["First remark", "Second remark about passwords"]
        .iter()
        .enumerate()
    {
        step(
            if i == 0 { "comment a" } else { "comment b" },
            outcome(t.add_comment(
                "carol",
                AddComment {
                    ticket_id: "TASK-1".into(),
                    content: text.to_string(),
                },
            )),
        );
    }
    step(
        "replace section",
        outcome(t.update_description(
            "alice",
            UpdateDescription {
                ticket_id: "TASK-1".into(),
                operation: jility_core::description::EditOperation::ReplaceSection,
                content: "1. Form\n2. Session cookie".into(),
                start_line: None,
                end_line: None,
                section_header: Some("## Plan".into()),
                message: Some("plan it".into()),
            },
        )),
    );
    step(
        "append",
        outcome(t.update_description(
            "bob",
            UpdateDescription {
                ticket_id: "TASK-1".into(),
                operation: jility_core::description::EditOperation::Append,
                content: "Note: rate limit the form.".into(),
                start_line: None,
                end_line: None,
                section_header: None,
                message: None,
            },
        )),
    );
    step("history", outcome(t.history("TASK-1")));
    step(
        "revert to 2",
        outcome(t.revert_description(
            "alice",
            RevertDescription {
                ticket_id: "TASK-1".into(),
                version: 2,
            },
        )),
    );
    step(
        "revert to 9 refused",
        outcome(t.revert_description(
            "alice",
            RevertDescription {
                ticket_id: "TASK-1".into(),
                version: 9,
            },
        )),
    );
    step("history after revert", outcome(t.history("TASK-1")));
    let dep = |ticket: &str, on: &str| Dependency {
        ticket_id: ticket.into(),
        depends_on: on.into(),
    };
    step(
        "dep 2->1",
        outcome(t.add_dependency("alice", dep("TASK-2", "TASK-1"))),
    );
    step(
        "dep 3->2",
        outcome(t.add_dependency("alice", dep("TASK-3", "TASK-2"))),
    );
    step(
        "dep 3->2 again",
        outcome(t.add_dependency("alice", dep("TASK-3", "TASK-2"))),
    );
    step(
        "dep 1->3 cycle",
        outcome(t.add_dependency("alice", dep("TASK-1", "TASK-3"))),
    );
    step(
        "dep 1->1 self",
        outcome(t.add_dependency("alice", dep("TASK-1", "TASK-1"))),
    );
    step("graph 3", outcome(t.dependency_graph("TASK-3")));
    step("graph 1", outcome(t.dependency_graph("TASK-1")));
    step(
        "remove dep 3->2",
        outcome(t.remove_dependency("alice", dep("TASK-3", "TASK-2"))),
    );
    step(
        "remove dep 3->2 again",
        outcome(t.remove_dependency("alice", dep("TASK-3", "TASK-2"))),
    );
    let item = |title: &str, depends_on: &[&str]| BatchItem {
        title: title.into(),
        description: Some(format!("About {title}")),
        story_points: Some(2),
        assignees: vec![],
        labels: vec!["batch".into()],
        depends_on: depends_on.iter().map(|d| d.to_string()).collect(),
        kind: None,
    };
    step(
        "batch failing on a missing ticket",
        outcome(t.create_batch(
            "alice",
            CreateBatch {
                tickets: vec![
                    item("Batch one", &[]),
                    item("Batch two", &["#1"]),
                    item("Batch three", &["TASK-99"]),
                ],
                parent_id: None,
            },
        )),
    );
    step(
        "batch failing on a later item",
        outcome(t.create_batch(
            "alice",
            CreateBatch {
                tickets: vec![item("Batch one", &["#2"]), item("Batch two", &[])],
                parent_id: None,
            },
        )),
    );
    step("list after failed batches", list(t, ListTickets::default()));
    step(
        "batch ok",
        outcome(t.create_batch(
            "alice",
            CreateBatch {
                tickets: vec![
                    item("Batch one", &[]),
                    item("Batch two", &["#1", "TASK-1"]),
                    item("Batch three", &["Batch two"]),
                ],
                parent_id: Some("TASK-1".into()),
            },
        )),
    );
    step(
        "claim 2",
        outcome(t.claim(
            "bob",
            ClaimTicket {
                ticket_id: "TASK-2".into(),
                message: Some("mine".into()),
            },
        )),
    );
    step(
        "claim 1 taken",
        outcome(t.claim(
            "bob",
            ClaimTicket {
                ticket_id: "TASK-1".into(),
                message: None,
            },
        )),
    );
    step(
        "assign 3",
        outcome(t.assign(
            "alice",
            AssignTicket {
                ticket_id: "TASK-3".into(),
                assignees: vec!["dave".into(), "Carol".into()],
                message: Some("pair on it".into()),
            },
        )),
    );
    step(
        "link commit",
        outcome(t.link_commit(
            "alice",
            LinkCommit {
                ticket_id: "TASK-1".into(),
                commit_hash: "ABCDEF1234".into(),
                commit_message: Some("Add login form".into()),
            },
        )),
    );
    step(
        "link commit again",
        outcome(t.link_commit(
            "alice",
            LinkCommit {
                ticket_id: "TASK-1".into(),
                commit_hash: "abcdef1234".into(),
                commit_message: None,
            },
        )),
    );
    step(
        "edit 2",
        outcome(t.edit(
            "bob",
            EditTicket {
                ticket_id: "TASK-2".into(),
                title: Some("Write the API docs".into()),
                story_points: Some(Some(3)),
                labels: Some(vec!["docs".into(), "Api".into(), "api".into()]),
                parent_id: Some(Some("TASK-1".into())),
                message: Some("tidy".into()),
                ..Default::default()
            },
        )),
    );
    step(
        "edit 1 parent loop refused",
        outcome(t.edit(
            "bob",
            EditTicket {
                ticket_id: "TASK-1".into(),
                parent_id: Some(Some("TASK-2".into())),
                ..Default::default()
            },
        )),
    );
    let templates = t
        .templates(&ListTemplates::default())
        .unwrap()
        .data
        .templates;
    let template = templates.iter().find(|t| t.name == "api-endpoint").unwrap();
    step(
        "from template",
        outcome(
            t.create_from_template(
                "alice",
                FromTemplate {
                    template: "api-endpoint".into(),
                    variables: template
                        .variables
                        .iter()
                        .map(|v| (v.clone(), format!("the {v}")))
                        .collect(),
                    assignee: Some("erin".into()),
                },
            ),
        ),
    );
    step("list all", list(t, ListTickets::default()));
    step(
        "list in_progress+todo",
        list(
            t,
            ListTickets {
                status: vec![status("in_progress"), status("todo")],
                ..Default::default()
            },
        ),
    );
    step(
        "list label batch",
        list(
            t,
            ListTickets {
                labels: vec!["batch".into()],
                ..Default::default()
            },
        ),
    );
    step(
        "list labels docs+api",
        list(
            t,
            ListTickets {
                labels: vec!["docs".into(), "api".into()],
                ..Default::default()
            },
        ),
    );
    step(
        "list assignee bob",
        list(
            t,
            ListTickets {
                assignee: Some("bob".into()),
                ..Default::default()
            },
        ),
    );
    step(
        "list unassigned",
        list(
            t,
            ListTickets {
                unassigned: true,
                ..Default::default()
            },
        ),
    );
    step(
        "list parent 1",
        list(
            t,
            ListTickets {
                parent_id: Some("TASK-1".into()),
                ..Default::default()
            },
        ),
    );
    step(
        "list epic 2",
        list(
            t,
            ListTickets {
                epic_id: Some("TASK-2".into()),
                ..Default::default()
            },
        ),
    );
    // Paging: three pages of three, through the cursors.
    let mut cursor = None;
    for name in ["page 1", "page 2", "page 3"] {
        let page = t
            .list(
                "alice",
                &ListTickets {
                    limit: Some(3),
                    cursor: cursor.clone(),
                    ..Default::default()
                },
            )
            .unwrap();
        cursor = page.page.next_cursor.clone();
        step(name, paged(Ok(page)));
    }
    for query in [
        "login",
        "batch two",
        "\"rate limit\"",
        "passwords",
        "nothingmatches",
    ] {
        let (mut numbers, total) = search_numbers(t, query);
        numbers.sort();
        step(
            "search",
            json!({"query": query, "hits": numbers, "total": total}),
        );
    }
    // More comments and changes than a ticket's page shows (50 and 20): the newest are
    // shown, the count is all of them.
    for n in 0..55 {
        outcome(t.add_comment(
            "dave",
            AddComment {
                ticket_id: "TASK-2".into(),
                content: format!("note {n}"),
            },
        ));
    }
    let busy = outcome(t.get_ticket("TASK-2"));
    assert_eq!(busy["comment_count"], 56, "{busy}");
    assert_eq!(busy["comments"].as_array().map(Vec::len), Some(50));
    assert_eq!(busy["comments"][49]["content"], "note 54");
    assert_eq!(busy["recent_changes"].as_array().map(Vec::len), Some(20));
    step("get a ticket with many comments", busy);
    // A dependency on a ticket that is then deleted: its dependent shows it no more.
    step(
        "dep 4->3 before delete",
        outcome(t.add_dependency("alice", dep("TASK-4", "TASK-3"))),
    );
    step("delete 3", outcome(t.delete("alice", "TASK-3")));
    step("get deleted", outcome(t.get_ticket("TASK-3")));
    step("delete again", outcome(t.delete("alice", "TASK-3")));
    step("list after delete", list(t, ListTickets::default()));
    step(
        "graph 2 after delete",
        outcome(t.dependency_graph("TASK-2")),
    );
    for n in 1..=8 {
        step("final get", outcome(t.get_ticket(&format!("TASK-{n}"))));
    }
    out
}

#[test]
fn the_domain_gives_the_same_answers_on_postgres_as_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let mut local = sqlite_tracker(dir.path(), "TASK");
    let expected = scenario(&mut local);

    let test_db = TestDb::new();
    let db = PgDatabase::connect(&test_db.url).unwrap();
    let root = tempfile::tempdir().unwrap();
    let mut cloud = pg_tracker(&db, "acme", "TASK", root.path());
    let got = scenario(&mut cloud);

    assert_eq!(expected.len(), got.len());
    for ((name, want), (_, have)) in expected.iter().zip(&got) {
        assert_eq!(
            want,
            have,
            "step {name:?} differs\nsqlite:   {}\npostgres: {}",
            serde_json::to_string_pretty(want).unwrap(),
            serde_json::to_string_pretty(have).unwrap()
        );
    }
    // Sanity: the scenario did what it says.
    let steps: std::collections::HashMap<&str, &Value> = got.iter().map(|(n, v)| (*n, v)).collect();
    assert_eq!(
        steps["dep 1->3 cycle"]["error"]["code"],
        errors::DEPENDENCY_CYCLE.to_string()
    );
    assert!(steps["batch failing on a missing ticket"]["error"].is_object());
    assert_eq!(steps["list after failed batches"]["total"], 3);
    assert_eq!(steps["batch ok"]["tickets"][0]["number"], "TASK-4");
    assert_eq!(steps["get deleted"]["error"]["code"], "not_found");
    assert_eq!(steps["history after revert"]["current_version"], 4);
}

/// Every kept context compared with what `jility_ticket_contexts` computes from the rows
/// now: (tickets, kept rows, kept rows that differ or are missing).
fn kept_contexts(client: &mut postgres::Client) -> (i64, i64, i64) {
    let row = client
        .query_one(
            "SELECT (SELECT count(*) FROM tickets), (SELECT count(*) FROM ticket_contexts), \
             (SELECT count(*) FROM ticket_contexts k FULL JOIN \
                (SELECT l.* FROM workspaces w, LATERAL jility_ticket_contexts(w.id, \
                   ARRAY(SELECT id FROM tickets WHERE workspace_id = w.id)) l) l \
                ON l.ticket_id = k.ticket_id \
              WHERE k IS DISTINCT FROM l)",
            &[],
        )
        .unwrap();
    (row.get(0), row.get(1), row.get(2))
}

/// A whole-ticket read uses each ticket's kept context when it is current (at the version
/// the ticket's last write left): after the domain scenario, whose last steps read every
/// ticket, every kept context is what the rows say now; a missing or stale one is never
/// shown (the read is made part by part, the same) and is refreshed because a read found it.
#[test]
fn kept_ticket_contexts_match_the_rows_and_a_missing_one_is_read_part_by_part() {
    let test_db = TestDb::new();
    let db = PgDatabase::connect(&test_db.url).unwrap();
    let root = tempfile::tempdir().unwrap();
    let mut cloud = pg_tracker(&db, "acme", "TASK", root.path());
    scenario(&mut cloud);
    let gets = |t: &mut Tracker<PgStore>| -> Vec<Value> {
        (1..=8)
            .map(|n| outcome(t.get_ticket(&format!("TASK-{n}"))))
            .collect()
    };
    let settle = || {
        assert!(
            db.settle_contexts(Duration::from_secs(20)),
            "refreshes hang"
        )
    };
    settle();
    let kept = gets(&mut cloud);
    let mut client = postgres::Client::connect(&test_db.url, postgres::NoTls).unwrap();
    let (tickets, rows, stale) = kept_contexts(&mut client);
    assert!(tickets >= 7, "{tickets}");
    assert_eq!(rows, tickets, "every ticket has its context kept");
    assert_eq!(stale, 0, "kept contexts differ from the rows");
    // The dependent of the deleted TASK-3 does not show it.
    assert_eq!(kept[3]["dependencies"], json!([]), "{}", kept[3]);

    // A current kept context is what a read shows (so the comparison above means something)…
    let count_of_2 =
        |t: &mut Tracker<PgStore>| outcome(t.get_ticket("TASK-2"))["comment_count"].clone();
    client
        .batch_execute(
            "UPDATE ticket_contexts SET comment_count = 999 \
             WHERE ticket_id = (SELECT id FROM tickets WHERE number = 2)",
        )
        .unwrap();
    assert_eq!(count_of_2(&mut cloud), 999);
    // …and one at an older version than its ticket's is not, and is refreshed.
    client
        .batch_execute(
            "UPDATE ticket_contexts SET version = version - 1 \
             WHERE ticket_id = (SELECT id FROM tickets WHERE number = 2)",
        )
        .unwrap();
    assert_eq!(count_of_2(&mut cloud), 56);
    settle();
    assert_eq!(
        kept_contexts(&mut client).2,
        0,
        "a stale context read stays stale"
    );

    // Without kept rows the reads are made part by part, and the same; each read asks for
    // its ticket's context again.
    client.batch_execute("DELETE FROM ticket_contexts").unwrap();
    assert_eq!(gets(&mut cloud), kept);
    settle();
    let (_, rows, stale) = kept_contexts(&mut client);
    assert_eq!(
        (rows, stale),
        (tickets, 0),
        "the tickets read are kept again"
    );
    // A write moves the ticket past its kept context, and once committed has it refreshed
    // (off the request): the reads that follow find it kept, and show the write.
    let current = "SELECT count(*) FROM ticket_contexts k JOIN tickets t ON t.id = k.ticket_id \
             AND k.version = t.context_version WHERE t.number = 2";
    cloud
        .add_comment(
            "bob",
            AddComment {
                ticket_id: "TASK-2".into(),
                content: "kept again".into(),
            },
        )
        .unwrap();
    settle();
    // Kept at the write's version with no read in between.
    assert_eq!(client.query_one(current, &[]).unwrap().get::<_, i64>(0), 1);
    assert_eq!(count_of_2(&mut cloud), 57);
    assert_eq!(kept_contexts(&mut client).2, 0);
}

/// Writers commenting on one ticket while each reads it back at once: no read shows fewer
/// comments than were acknowledged before it began (a context a read had refreshed is not
/// used once a write has moved past it), and the kept context ends equal to the rows.
#[test]
fn a_read_right_after_a_write_never_shows_the_context_before_it() {
    use std::sync::atomic::{AtomicI64, Ordering};
    let test_db = TestDb::new();
    let db = PgDatabase::connect(&test_db.url).unwrap();
    let root = tempfile::tempdir().unwrap();
    let mut first = pg_tracker(&db, "acme", "TASK", root.path());
    first.create_ticket("alice", create("Busy")).unwrap();
    let ws = db.workspace_by_name("acme").unwrap().unwrap().id;
    let acked = AtomicI64::new(0);
    std::thread::scope(|scope| {
        for writer in 0..3 {
            let (db, acked, root) = (&db, &acked, root.path());
            scope.spawn(move || {
                let store = PgStore::open(db, ws).unwrap();
                let mut t = Tracker::new(store, root.to_path_buf(), CursorKey::random());
                let mut seen = 0;
                for n in 0..25 {
                    t.add_comment(
                        "bob",
                        AddComment {
                            ticket_id: "TASK-1".into(),
                            content: format!("writer {writer} note {n}"),
                        },
                    )
                    .unwrap();
                    let floor = acked.fetch_add(1, Ordering::SeqCst) + 1;
                    let ticket = outcome(t.get_ticket("TASK-1"));
                    let count = ticket["comment_count"].as_i64().unwrap();
                    assert!(
                        count >= floor,
                        "{count} comments shown, {floor} acknowledged"
                    );
                    assert!(count >= seen, "{count} after {seen}");
                    seen = count;
                    let newest = &ticket["comments"][0]["content"];
                    assert!(newest.as_str().is_some(), "{ticket}");
                }
            });
        }
    });
    assert!(db.settle_contexts(Duration::from_secs(20)));
    let mut client = postgres::Client::connect(&test_db.url, postgres::NoTls).unwrap();
    assert_eq!(kept_contexts(&mut client), (1, 1, 0));
    assert_eq!(outcome(first.get_ticket("TASK-1"))["comment_count"], 75);
}

/// Three tickets where "zebra" is in a title, a description and (on `commented`, the third
/// of them) a comment.
pub(crate) fn search_fixture<S: Store>(t: &mut Tracker<S>, commented: &str) {
    for (title, description) in [
        (
            "Zebra crossing signals",
            "Paint the road markings near school",
        ),
        ("Road paint order", "The zebra must be painted white again"),
        ("Quarterly report", "Numbers for the board meeting agenda"),
    ] {
        t.create_ticket(
            "alice",
            CreateTicket {
                title: title.into(),
                description: Some(description.into()),
                ..Default::default()
            },
        )
        .unwrap();
    }
    t.add_comment(
        "bob",
        AddComment {
            ticket_id: commented.into(),
            content: "Saw a zebra on the way to work".into(),
        },
    )
    .unwrap();
}

#[test]
fn search_matches_every_word_phrases_exactly_and_ranks_title_first() {
    let test_db = TestDb::new();
    let db = PgDatabase::connect(&test_db.url).unwrap();
    let root = tempfile::tempdir().unwrap();
    let mut t = pg_tracker(&db, "acme", "TASK", root.path());
    search_fixture(&mut t, "TASK-3");

    // Ranking: title, then description, then comment.
    assert_eq!(
        search_numbers(&mut t, "zebra"),
        (vec!["TASK-1".into(), "TASK-2".into(), "TASK-3".into()], 3)
    );
    // Every word must match (in any field).
    let (mut hits, total) = search_numbers(&mut t, "zebra road");
    hits.sort();
    assert_eq!((hits, total), (vec!["TASK-1".into(), "TASK-2".into()], 2));
    assert_eq!(search_numbers(&mut t, "zebra quarterly").1, 1);
    assert_eq!(search_numbers(&mut t, "zebra unicorn").1, 0);
    // Quoted phrases match exactly, in order.
    assert_eq!(
        search_numbers(&mut t, "\"crossing signals\""),
        (vec!["TASK-1".into()], 1)
    );
    assert_eq!(search_numbers(&mut t, "\"signals crossing\"").1, 0);
    assert_eq!(
        search_numbers(&mut t, "\"zebra must\" paint"),
        (vec!["TASK-2".into()], 1)
    );
    // Stems, like local mode's porter tokenizer; comments are searched.
    let (mut hits, _) = search_numbers(&mut t, "painting");
    hits.sort();
    assert_eq!(hits, vec!["TASK-1".to_string(), "TASK-2".to_string()]);
    assert_eq!(search_numbers(&mut t, "work").0, vec!["TASK-3".to_string()]);
    // Punctuation is never syntax.
    assert_eq!(search_numbers(&mut t, "zebra & | ! ( :* <->").1, 3);

    // Snippets mark the matches.
    let result = t
        .search(
            "alice",
            &SearchTickets {
                query: "zebra".into(),
                limit: None,
                cursor: None,
                sprint: None,
            },
        )
        .unwrap();
    for hit in &result.data.hits {
        assert!(
            hit.snippet.to_lowercase().contains("**zebra**"),
            "{}: {:?}",
            hit.number,
            hit.snippet
        );
    }
    assert_eq!(result.data.hits[0].snippet, "**Zebra** crossing signals");

    // Paging by offset.
    let first = t
        .search(
            "alice",
            &SearchTickets {
                query: "zebra".into(),
                limit: Some(2),
                cursor: None,
                sprint: None,
            },
        )
        .unwrap();
    assert_eq!(first.data.hits.len(), 2);
    let second = t
        .search(
            "alice",
            &SearchTickets {
                query: "zebra".into(),
                limit: Some(2),
                cursor: first.page.next_cursor.clone(),
                sprint: None,
            },
        )
        .unwrap();
    assert_eq!(second.data.hits.len(), 1);
    assert_eq!(second.data.hits[0].number, "TASK-3");

    // Deleted tickets are not found; a changed title is found by its new words.
    t.delete("alice", "TASK-1").unwrap();
    assert_eq!(
        search_numbers(&mut t, "zebra"),
        (vec!["TASK-2".into(), "TASK-3".into()], 2)
    );
    assert_eq!(search_numbers(&mut t, "signals").1, 0);
    // A page past the end (its cursor was made before the deletion): no hits, the total.
    let past = t
        .search(
            "alice",
            &SearchTickets {
                query: "zebra".into(),
                limit: Some(2),
                cursor: first.page.next_cursor.clone(),
                sprint: None,
            },
        )
        .unwrap();
    assert!(past.data.hits.is_empty());
    assert_eq!(past.page.total, 2);
    t.edit(
        "alice",
        EditTicket {
            ticket_id: "TASK-3".into(),
            title: Some("Quarterly giraffe report".into()),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(
        search_numbers(&mut t, "giraffe").0,
        vec!["TASK-3".to_string()]
    );
}

#[test]
fn search_finds_the_same_tickets_as_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let mut local = sqlite_tracker(dir.path(), "TASK");
    search_fixture(&mut local, "TASK-3");
    let test_db = TestDb::new();
    let db = PgDatabase::connect(&test_db.url).unwrap();
    let root = tempfile::tempdir().unwrap();
    let mut cloud = pg_tracker(&db, "acme", "TASK", root.path());
    search_fixture(&mut cloud, "TASK-3");
    for query in [
        "zebra",
        "zebra road",
        "\"crossing signals\"",
        "\"signals crossing\"",
        "painted",
        "the",
        "work zebra",
        "board-meeting",
        "white again",
    ] {
        let mut want = search_numbers(&mut local, query);
        let mut got = search_numbers(&mut cloud, query);
        want.0.sort();
        got.0.sort();
        assert_eq!(want, got, "query {query:?}");
    }
}

#[test]
fn concurrent_writers_never_repeat_or_lose_a_number() {
    let test_db = TestDb::new();
    let db = PgDatabase::connect(&test_db.url).unwrap();
    let root = tempfile::tempdir().unwrap();
    let mut first = pg_tracker(&db, "acme", "TASK", root.path());
    let workspace = first.store().workspace_id();

    const THREADS: usize = 4;
    const PER_THREAD: usize = 100;
    let barrier = Arc::new(Barrier::new(THREADS));
    let handles: Vec<_> = (0..THREADS)
        .map(|thread| {
            let url = test_db.url.clone();
            let barrier = barrier.clone();
            let root = root.path().to_path_buf();
            std::thread::spawn(move || {
                // A database handle (pool) and connection of its own, as another process
                // would have.
                let db = PgDatabase::connect_with(&url, 1).unwrap();
                let store = PgStore::open(&db, workspace).unwrap();
                let mut tracker = Tracker::new(store, root, CursorKey::random());
                barrier.wait();
                (0..PER_THREAD)
                    .map(|i| {
                        tracker
                            .create_ticket("agent", create(&format!("thread {thread} ticket {i}")))
                            .unwrap()
                            .ticket
                            .number
                    })
                    .collect::<Vec<String>>()
            })
        })
        .collect();
    let mut numbers = Vec::new();
    for handle in handles {
        numbers.extend(handle.join().unwrap());
    }
    let total = THREADS * PER_THREAD;
    assert_eq!(numbers.len(), total);
    let unique: BTreeSet<i64> = numbers
        .iter()
        .map(|n| n.strip_prefix("TASK-").unwrap().parse().unwrap())
        .collect();
    assert_eq!(unique.len(), total, "a number was repeated");
    assert_eq!(unique, (1..=total as i64).collect::<BTreeSet<_>>());
    let listed = first
        .list(
            "alice",
            &ListTickets {
                limit: Some(1),
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(listed.page.total, total as u64);
    assert_eq!(
        first
            .create_ticket("alice", create("after"))
            .unwrap()
            .ticket
            .number,
        format!("TASK-{}", total + 1)
    );
}

fn is_not_found(err: &ToolError) -> bool {
    err.code == errors::NOT_FOUND
}

/// Whole-ticket reads of several workspaces waiting at once are answered by one statement
/// (the async connections batch whatever the workspace), and each read gets its own
/// workspace's ticket: the workspaces share the project key and the numbers, so only the
/// workspace tells the tickets apart.
#[test]
fn batched_reads_of_many_workspaces_each_get_their_own_ticket() {
    use jility_core::store::TicketLookup;
    let test_db = TestDb::new();
    let db = PgDatabase::connect(&test_db.url).unwrap();
    let root = tempfile::tempdir().unwrap();
    const WORKSPACES: usize = 6;
    const TICKETS: i64 = 5;
    let mut stores = Vec::new();
    for w in 0..WORKSPACES {
        let name = format!("tenant-{w}");
        let mut t = pg_tracker(&db, &name, "TASK", root.path());
        for n in 1..=TICKETS {
            t.create_ticket("alice", create(&format!("{name} ticket {n}")))
                .unwrap();
        }
        let ws = db.workspace_by_name(&name).unwrap().unwrap();
        stores.push((name, PgStore::open(&db, ws.id).unwrap()));
    }
    assert!(db.settle_contexts(Duration::from_secs(10)));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    for round in 0..20 {
        let reads = stores.iter().enumerate().flat_map(|(w, (name, store))| {
            (1..=TICKETS).map(move |n| {
                let mut store = store.clone();
                let number = (n + round + w as i64) % TICKETS + 1;
                let lookup = TicketLookup::Number {
                    key: Some("TASK".into()),
                    number,
                };
                let expected = format!("{name} ticket {number}");
                async move {
                    let found = tokio::spawn(store.whole_tickets(&[lookup]))
                        .await
                        .unwrap()
                        .unwrap();
                    let title = found[0].as_ref().map(|w| w.row.title.clone());
                    (expected, title)
                }
            })
        });
        let answers = runtime.block_on(futures::future::join_all(reads));
        for (expected, title) in answers {
            assert_eq!(title.as_deref(), Some(expected.as_str()), "round {round}");
        }
    }
}

#[test]
fn a_workspace_never_sees_or_touches_another() {
    let test_db = TestDb::new();
    let db = PgDatabase::connect(&test_db.url).unwrap();
    let root = tempfile::tempdir().unwrap();
    // The same project key in both: only the workspace tells them apart.
    let mut a = pg_tracker(&db, "alpha-corp", "TASK", root.path());
    let mut b = pg_tracker(&db, "beta-corp", "TASK", root.path());
    assert!(
        db.create_workspace("alpha-corp").is_err(),
        "names are unique"
    );

    let a1 = a
        .create_ticket(
            "alice",
            CreateTicket {
                title: "Alpha secret plan".into(),
                description: Some("The hidden unicorn roadmap".into()),
                assignees: vec!["alice".into()],
                labels: vec!["secret".into()],
                ..Default::default()
            },
        )
        .unwrap()
        .ticket;
    a.create_ticket("alice", create("Alpha second")).unwrap();
    a.add_comment(
        "alice",
        AddComment {
            ticket_id: "TASK-1".into(),
            content: "unicorn comment".into(),
        },
    )
    .unwrap();
    a.link_commit(
        "alice",
        LinkCommit {
            ticket_id: "TASK-1".into(),
            commit_hash: "abcd1234".into(),
            commit_message: None,
        },
    )
    .unwrap();
    a.add_dependency(
        "alice",
        Dependency {
            ticket_id: "TASK-2".into(),
            depends_on: "TASK-1".into(),
        },
    )
    .unwrap();
    let b1 = b.create_ticket("bob", create("Beta only")).unwrap().ticket;
    assert_eq!(
        b1.number, "TASK-1",
        "each workspace numbers its own tickets"
    );

    let (a1_id, a_project) = a
        .store()
        .clone()
        .read(|tx| {
            let row = tx.ticket_by_uuid(&a1.id)?.unwrap();
            Ok((row.id, tx.default_project()?.id))
        })
        .unwrap();
    let b1_id = b
        .store()
        .clone()
        .read(|tx| Ok(tx.ticket_by_uuid(&b1.id)?.unwrap().id))
        .unwrap();

    // Through the domain: by number, by uuid, in lists and in search.
    assert!(is_not_found(&b.get_ticket("TASK-2").unwrap_err()));
    assert!(is_not_found(&b.get_ticket(&a1.id).unwrap_err()));
    assert_eq!(b.get_ticket("TASK-1").unwrap().ticket.title, "Beta only");
    let listed = b.list("alice", &ListTickets::default()).unwrap();
    assert_eq!(listed.page.total, 1);
    assert_eq!(listed.data.tickets[0].title, "Beta only");
    for filter in [
        ListTickets {
            labels: vec!["secret".into()],
            ..Default::default()
        },
        ListTickets {
            assignee: Some("alice".into()),
            ..Default::default()
        },
    ] {
        assert_eq!(b.list("alice", &filter).unwrap().page.total, 0);
    }
    for query in ["unicorn", "alpha", "secret plan"] {
        assert_eq!(search_numbers(&mut b, query).1, 0, "{query}");
        assert!(search_numbers(&mut a, query).1 > 0, "{query}");
    }
    // Writes naming A's ticket from B find nothing.
    assert!(is_not_found(
        &b.add_comment(
            "mallory",
            AddComment {
                ticket_id: a1.id.clone(),
                content: "pwned".into(),
            },
        )
        .unwrap_err()
    ));
    assert!(is_not_found(
        &b.update_status(
            "mallory",
            UpdateStatus {
                ticket_id: a1.id.clone(),
                status: status("done"),
                message: None,
            },
        )
        .unwrap_err()
    ));
    assert!(is_not_found(
        &b.edit(
            "mallory",
            EditTicket {
                ticket_id: a1.id.clone(),
                title: Some("pwned".into()),
                ..Default::default()
            },
        )
        .unwrap_err()
    ));
    assert!(is_not_found(
        &b.add_dependency(
            "mallory",
            Dependency {
                ticket_id: "TASK-1".into(),
                depends_on: a1.id.clone(),
            },
        )
        .unwrap_err()
    ));
    assert!(is_not_found(&b.delete("mallory", &a1.id).unwrap_err()));

    // Through the store itself, with A's row ids: reads see nothing…
    let mut store_b = b.store().clone();
    store_b
        .read(|tx| {
            assert!(tx.ticket_by_id(a1_id)?.is_none());
            assert!(tx.ticket_by_uuid(&a1.id)?.is_none());
            assert_eq!(tx.ticket_by_number("TASK", 2)?.map(|r| r.id), None);
            assert_eq!(tx.comments(a1_id, 50)?.1, 0);
            assert!(tx.changes(a1_id, 50)?.is_empty());
            assert!(tx.description_versions(a1_id)?.is_empty());
            assert!(tx.assignees(a1_id)?.is_empty());
            assert!(tx.labels(a1_id)?.is_empty());
            assert!(tx.commits(a1_id)?.is_empty());
            assert!(tx.dependent_ids(a1_id)?.is_empty());
            assert_eq!(tx.projects()?.len(), 1);
            Ok(())
        })
        .unwrap();
    // …and every write is refused (and rolled back).
    let at = "2024-10-20T10:00:00.000Z";
    type Attempt = Box<dyn Fn(&mut dyn StoreTx) -> Result<(), ToolError>>;
    let attempts: Vec<(&str, Attempt)> = vec![
        (
            "comment",
            Box::new(move |tx: &mut dyn StoreTx| {
                tx.insert_comment(a1_id, "m", "pwned", at)
                    .map(|_| ())
                    .map_err(Into::into)
            }),
        ),
        (
            "dependency on A",
            Box::new(move |tx: &mut dyn StoreTx| {
                tx.add_dependency(b1_id, a1_id, "m", at)
                    .map(|_| ())
                    .map_err(Into::into)
            }),
        ),
        (
            "dependency of A",
            Box::new(move |tx: &mut dyn StoreTx| {
                tx.add_dependency(a1_id, b1_id, "m", at)
                    .map(|_| ())
                    .map_err(Into::into)
            }),
        ),
        (
            "update",
            Box::new(move |tx: &mut dyn StoreTx| {
                tx.update_ticket(
                    a1_id,
                    &TicketUpdate {
                        title: Some("pwned".into()),
                        ..Default::default()
                    },
                    "m",
                    at,
                )
                .map_err(Into::into)
            }),
        ),
        (
            "parent in A",
            Box::new(move |tx: &mut dyn StoreTx| {
                tx.update_ticket(
                    b1_id,
                    &TicketUpdate {
                        parent_id: Some(Some(a1_id)),
                        ..Default::default()
                    },
                    "m",
                    at,
                )
                .map_err(Into::into)
            }),
        ),
        (
            "labels",
            Box::new(move |tx: &mut dyn StoreTx| {
                tx.set_labels(a1_id, &["pwned".into()]).map_err(Into::into)
            }),
        ),
        (
            "assignees",
            Box::new(move |tx: &mut dyn StoreTx| {
                tx.set_assignees(a1_id, &["m".into()], "m", at)
                    .map_err(Into::into)
            }),
        ),
        (
            "commit",
            Box::new(move |tx: &mut dyn StoreTx| {
                tx.link_commit(a1_id, "dead", None, "m", at)
                    .map(|_| ())
                    .map_err(Into::into)
            }),
        ),
        (
            "change",
            Box::new(move |tx: &mut dyn StoreTx| {
                tx.record_change(
                    a1_id,
                    &NewChange {
                        change_type: "pwned",
                        old_value: None,
                        new_value: None,
                        detail: None,
                        message: None,
                        actor: "m",
                        at,
                    },
                )
                .map_err(Into::into)
            }),
        ),
        (
            "number",
            Box::new(move |tx: &mut dyn StoreTx| {
                tx.allocate_number(a_project)
                    .map(|_| ())
                    .map_err(Into::into)
            }),
        ),
    ];
    for (name, attempt) in attempts {
        assert!(
            store_b.write(|tx| attempt(tx)).is_err(),
            "{name} was allowed"
        );
    }
    assert!(
        !store_b
            .write(|tx| Ok(tx.rekey_project(a_project, "PWN")?))
            .unwrap()
    );
    assert!(
        !store_b
            .write(|tx| Ok(tx.remove_dependency(a1_id, b1_id)?))
            .unwrap()
    );

    // A is untouched.
    let detail = a.get_ticket("TASK-1").unwrap();
    assert_eq!(detail.ticket.title, "Alpha secret plan");
    assert_eq!(detail.ticket.labels, vec!["secret".to_string()]);
    assert_eq!(detail.ticket.assignees, vec!["alice".to_string()]);
    assert_eq!(detail.comment_count, 1);
    assert_eq!(detail.linked_commits.len(), 1);
    assert_eq!(detail.dependents.len(), 1);
    assert_eq!(
        a.create_ticket("alice", create("Alpha third"))
            .unwrap()
            .ticket
            .number,
        "TASK-3"
    );
    assert_eq!(
        b.create_ticket("bob", create("Beta second"))
            .unwrap()
            .ticket
            .number,
        "TASK-2"
    );
    // A store for a workspace that does not exist is refused.
    assert!(PgStore::open(&db, 999_999).is_err());
}

fn migration_rows(test_db: &TestDb) -> i64 {
    test_db
        .client()
        .query_one("SELECT count(*) FROM jility_schema_migrations", &[])
        .unwrap()
        .get(0)
}

#[test]
fn migrations_run_once_even_when_processes_start_together() {
    let known = jility_pg::store::MIGRATIONS.len() as u32;

    // Two at once on a fresh database.
    let test_db = TestDb::new();
    let barrier = Arc::new(Barrier::new(2));
    let handles: Vec<_> = (0..2)
        .map(|_| {
            let url = test_db.url.clone();
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                barrier.wait();
                PgDatabase::connect(&url).map(|db| db.version().unwrap())
            })
        })
        .collect();
    for handle in handles {
        assert_eq!(handle.join().unwrap().unwrap(), known);
    }
    assert_eq!(migration_rows(&test_db), i64::from(known));

    // Opening again is a no-op.
    let db = PgDatabase::connect(&test_db.url).unwrap();
    let db2 = PgDatabase::connect(&test_db.url).unwrap();
    assert_eq!(db.version().unwrap(), known);
    assert_eq!(db2.version().unwrap(), known);
    assert_eq!(migration_rows(&test_db), i64::from(known));
    let ws = db.create_workspace("kept").unwrap();
    drop(PgDatabase::connect(&test_db.url).unwrap());
    assert_eq!(db2.workspace_by_name("kept").unwrap(), Some(ws.clone()));
    assert_eq!(db2.workspaces().unwrap(), vec![ws]);

    // A newer jility's database is refused, and left as it was.
    test_db
        .client()
        .execute(
            "INSERT INTO jility_schema_migrations (version) VALUES ($1)",
            &[&(known as i32 + 7)],
        )
        .unwrap();
    match PgDatabase::connect(&test_db.url) {
        Err(StoreError::TooNew { found, known: k }) => {
            assert_eq!((found, k), (known + 7, known));
        }
        Err(other) => panic!("expected TooNew, got {other}"),
        Ok(_) => panic!("a newer database was opened"),
    }
    assert_eq!(migration_rows(&test_db), i64::from(known) + 1);
}

#[test]
fn a_bad_url_fails_at_once_with_its_reason() {
    let err = PgDatabase::connect("not a url").err().unwrap();
    assert!(err.to_string().contains("invalid database URL"), "{err}");
    let test_db = TestDb::new();
    let missing = with_database(&test_db.url, "jility_no_such_database");
    let err = PgDatabase::connect(&missing).err().unwrap();
    assert!(err.to_string().contains("jility_no_such_database"), "{err}");
}

/// `whole_tickets`, the one way the domain reads a ticket whole, answers the same on every
/// path the cloud store takes: the async connections (on a runtime, batched), a connection
/// of the pool (no runtime), and the primitives in a read transaction (what a ticket whose
/// context is not kept gets) — before and after the contexts are kept, for tickets with
/// neighbours, a deleted one that a live one names, a missing one, by UUID, in the default
/// project and in a project that does not exist.
#[test]
fn every_path_of_a_whole_ticket_read_answers_the_same() {
    use jility_core::store::{TicketLookup, WholeTicket, whole_ticket};
    let test_db = TestDb::new();
    let db = PgDatabase::connect(&test_db.url).unwrap();
    let root = tempfile::tempdir().unwrap();
    let mut t = pg_tracker(&db, "acme", "TASK", root.path());
    scenario(&mut t);
    let ws = db.workspace_by_name("acme").unwrap().unwrap();
    let uuid = t.get_ticket("TASK-2").unwrap().ticket.id;
    let number = |key: Option<&str>, number: i64| TicketLookup::Number {
        key: key.map(str::to_string),
        number,
    };
    let lookups = vec![
        number(Some("TASK"), 1),
        number(Some("TASK"), 2),
        number(Some("TASK"), 3),
        number(Some("TASK"), 4),
        TicketLookup::Uuid(uuid),
        number(Some("TASK"), 99),
        number(None, 2),
        number(Some("NOPE"), 1),
    ];
    let mut store = PgStore::open(&db, ws.id).unwrap();
    let shown = |found: &[Option<WholeTicket>]| format!("{found:#?}");
    let expected = store
        .read(|tx| {
            lookups
                .iter()
                .map(|lookup| whole_ticket(tx, lookup))
                .collect::<Result<Vec<_>, _>>()
        })
        .unwrap();
    assert_eq!(expected.iter().filter(|w| w.is_some()).count(), 6);
    let deleted = expected[2].as_ref().unwrap();
    assert!(deleted.row.deleted_at.is_some(), "{deleted:?}");
    let named = expected[0].as_ref().unwrap();
    assert!(!named.dependencies.is_empty() || !named.dependents.is_empty());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let on_runtime = |store: &PgStore| {
        let mut store = store.clone();
        let lookups = lookups.clone();
        runtime
            .block_on(async move {
                tokio::task::spawn_blocking(move || wait(store.whole_tickets(&lookups))).await
            })
            .unwrap()
            .unwrap()
    };
    // Whether or not the refresher has kept the contexts the writes asked for yet, each path
    // answers the same.
    assert_eq!(
        shown(&wait(store.whole_tickets(&lookups)).unwrap()),
        shown(&expected)
    );
    assert!(db.settle_contexts(Duration::from_secs(10)));
    let kept: i64 = {
        let mut client = postgres::Client::connect(&test_db.url, postgres::NoTls).unwrap();
        client
            .query_one(
                "SELECT count(*) FROM ticket_contexts c JOIN tickets t ON t.id = c.ticket_id \
                 WHERE c.version = t.context_version",
                &[],
            )
            .unwrap()
            .get(0)
    };
    assert!(
        kept >= 4,
        "the reads had the contexts refreshed ({kept} kept)"
    );
    // Kept now: one statement a ticket, on the pool, then on the async connections.
    assert_eq!(
        shown(&wait(store.whole_tickets(&lookups)).unwrap()),
        shown(&expected)
    );
    assert_eq!(shown(&on_runtime(&store)), shown(&expected));
    // Awaited on a task of the runtime, as `jility serve` awaits it.
    let awaited = {
        let mut store = store.clone();
        let lookups = lookups.clone();
        runtime
            .block_on(async move { tokio::spawn(store.whole_tickets(&lookups)).await })
            .unwrap()
            .unwrap()
    };
    assert_eq!(shown(&awaited), shown(&expected));
    let readers: i64 = {
        let mut client = postgres::Client::connect(&test_db.url, postgres::NoTls).unwrap();
        client
            .query_one(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 \
                 AND datname = current_database()",
                &[&jility_pg::store::READS_APPLICATION],
            )
            .unwrap()
            .get(0)
    };
    assert!(readers >= 1, "the read ran on the async connections");
    // A write leaves the kept context behind its ticket: read part by part again, the same.
    t.add_comment(
        "bob",
        AddComment {
            ticket_id: "TASK-1".into(),
            content: "one more".into(),
        },
    )
    .unwrap();
    let expected = store
        .read(|tx| {
            lookups
                .iter()
                .map(|lookup| whole_ticket(tx, lookup))
                .collect::<Result<Vec<_>, _>>()
        })
        .unwrap();
    assert_eq!(shown(&on_runtime(&store)), shown(&expected));
    assert!(
        expected[0]
            .as_ref()
            .unwrap()
            .comments
            .iter()
            .any(|c| c.content == "one more")
    );
}
