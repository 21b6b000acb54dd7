//! The database file: upgrades from older schemas, databases from newer versions, and many
//! processes writing one database at once.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // assertions in tests

use crate::support;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};

use jility_core::errors;
use rusqlite::{Connection, params};
use serde_json::json;
use support::*;

const V1: &str = include_str!("../../../jility-sqlite/src/migrations/0001_initial.sql");
const V2: &str = include_str!("../../../jility-sqlite/src/migrations/0002_search.sql");
const AT: &str = "2024-10-20T10:00:00.000Z";

/// The schema version this jility writes.
const LATEST: u32 = 8;

/// id, title, description, status, story points, deleted_at.
type V1Ticket = (
    i64,
    &'static str,
    &'static str,
    &'static str,
    Option<i64>,
    Option<&'static str>,
);

/// A database as the first version of jility left it: schema 1 (no search index), project
/// OLD with a live ticket (assignee, label, comment, commit), a deleted one, and a live one
/// that depends on the first; the change log as that version wrote it.
fn v1_database(path: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let conn = Connection::open(path).unwrap();
    conn.pragma_update(None, "journal_mode", "WAL").unwrap();
    conn.execute_batch(V1).unwrap();
    conn.pragma_update(None, "user_version", 1).unwrap();
    conn.execute(
        "INSERT INTO projects (id, key, name, next_number, created_at) VALUES (1, 'OLD', 'Legacy', 4, ?1)",
        [AT],
    )
    .unwrap();
    let tickets: [V1Ticket; 3] = [
        (
            1,
            "Legacy kangaroo importer",
            "## Context\n\nMigrate the platypus records.\n",
            "todo",
            Some(5),
            None,
        ),
        (
            2,
            "Abandoned wombat feature",
            "Nobody wants wombats.",
            "backlog",
            None,
            Some(AT),
        ),
        (
            3,
            "Follow-up cleanup",
            "After the import.",
            "backlog",
            None,
            None,
        ),
    ];
    for (id, title, description, status, points, deleted_at) in tickets {
        conn.execute(
            "INSERT INTO tickets (id, uuid, project_id, number, title, description, status, story_points, \
             parent_id, epic_id, created_by, created_at, updated_by, updated_at, deleted_by, deleted_at) \
             VALUES (?1, ?2, 1, ?1, ?3, ?4, ?5, ?6, NULL, NULL, 'carol', ?7, 'carol', ?7, ?8, ?9)",
            params![
                id,
                format!("00000000-0000-4000-8000-00000000000{id}"),
                title,
                description,
                status,
                points,
                AT,
                deleted_at.map(|_| "carol"),
                deleted_at
            ],
        )
        .unwrap();
        conn.execute(
            "INSERT INTO ticket_changes (ticket_id, change_type, new_value, changed_by, changed_at) \
             VALUES (?1, 'created', ?2, 'carol', ?3)",
            params![id, title, AT],
        )
        .unwrap();
        conn.execute(
            "INSERT INTO ticket_changes (ticket_id, change_type, new_value, detail, changed_by, changed_at) \
             VALUES (?1, 'description_changed', ?2, 'created', 'carol', ?3)",
            params![id, description, AT],
        )
        .unwrap();
    }
    conn.execute_batch(&format!(
        "INSERT INTO ticket_assignees (ticket_id, assignee, assigned_by, assigned_at) VALUES (1, 'carol', 'carol', '{AT}');
         INSERT INTO ticket_labels (ticket_id, label) VALUES (1, 'legacy');
         INSERT INTO ticket_labels (ticket_id, label) VALUES (2, 'legacy');
         INSERT INTO comments (id, uuid, ticket_id, author, content, created_at)
             VALUES (1, '00000000-0000-4000-9000-000000000001', 1, 'dave', 'Remember the echidna edge case', '{AT}');
         INSERT INTO ticket_changes (ticket_id, change_type, new_value, changed_by, changed_at)
             VALUES (1, 'comment_added', '00000000-0000-4000-9000-000000000001', 'dave', '{AT}');
         INSERT INTO commit_links (id, ticket_id, commit_hash, commit_message, linked_by, linked_at)
             VALUES (1, 1, 'abc1234', 'Initial import', 'carol', '{AT}');
         INSERT INTO dependencies (ticket_id, depends_on_id, created_by, created_at) VALUES (3, 1, 'carol', '{AT}');"
    ))
    .unwrap();
}

fn user_version(path: &Path) -> u32 {
    Connection::open(path)
        .unwrap()
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap()
}

fn count(path: &Path, table: &str) -> i64 {
    Connection::open(path)
        .unwrap()
        .query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
        .unwrap()
}

#[tokio::test]
async fn a_first_version_database_is_upgraded_and_searchable() {
    let p = Project::new();
    v1_database(&p.db());
    let before: Vec<i64> = [
        "tickets",
        "comments",
        "ticket_changes",
        "commit_links",
        "dependencies",
    ]
    .iter()
    .map(|t| count(&p.db(), t))
    .collect();

    let mcp = p.start().await;
    let d = mcp
        .data("jility_get_ticket", json!({"ticket_id": "OLD-1"}))
        .await;
    let t = &d["ticket"];
    assert_eq!(t["title"], "Legacy kangaroo importer");
    assert_eq!(
        t["description"],
        "## Context\n\nMigrate the platypus records.\n"
    );
    assert_eq!(t["status"], "todo");
    assert_eq!(t["story_points"], 5);
    assert_eq!(t["assignees"], json!(["carol"]));
    assert_eq!(t["labels"], json!(["legacy"]));
    assert_eq!(t["created_by"], "carol");
    assert_eq!(t["id"], "00000000-0000-4000-8000-000000000001");
    assert_eq!(d["comments"][0]["author"], "dave");
    assert_eq!(d["linked_commits"][0]["hash"], "abc1234");
    assert_eq!(numbers(&d["dependents"]), ["OLD-3"]);

    let (page, info) = mcp.list("jility_list_tickets", json!({})).await;
    assert_eq!(info.total, 2);
    assert_eq!(numbers(&page["tickets"]), ["OLD-3", "OLD-1"]);
    // The upgrade copied statuses onto labels and assignees: their filters see old tickets.
    for filter in [
        json!({"labels": ["legacy"], "status": ["todo"]}),
        json!({"assignee": "carol", "status": ["todo", "review"]}),
        json!({"labels": ["legacy"], "assignee": "carol"}),
    ] {
        let (page, info) = mcp.list("jility_list_tickets", filter.clone()).await;
        assert_eq!(numbers(&page["tickets"]), ["OLD-1"], "{filter}");
        assert_eq!(info.total, 1, "{filter}");
    }
    let (_, info) = mcp
        .list(
            "jility_list_tickets",
            json!({"labels": ["legacy"], "status": ["done"]}),
        )
        .await;
    assert_eq!(info.total, 0);
    // The upgrade indexed what was there: titles, descriptions and comments of live tickets.
    for (query, expected) in [
        ("kangaroo", vec!["OLD-1"]),
        ("platypus", vec!["OLD-1"]),
        ("echidna", vec!["OLD-1"]),
        ("cleanup", vec!["OLD-3"]),
        ("wombat", vec![]),
    ] {
        let (r, _) = mcp
            .list("jility_search_tickets", json!({"query": query}))
            .await;
        assert_eq!(numbers(&r["hits"]), expected, "{query}");
    }
    let (_, e) = mcp
        .err("jility_get_ticket", json!({"ticket_id": "OLD-2"}))
        .await;
    assert_eq!(e.code, errors::NOT_FOUND);
    let h = mcp
        .data("jility_get_ticket_history", json!({"ticket_id": "OLD-1"}))
        .await;
    assert_eq!(h["current_version"], 1);
    assert_eq!(h["versions"][0]["changed_by"], "carol");
    // It keeps working: numbering continues, new text is indexed.
    assert_eq!(mcp.create("New numbat ticket").await, "OLD-4");
    mcp.data(
        "jility_add_comment",
        json!({"ticket_id": "OLD-3", "content": "a quokka was here"}),
    )
    .await;
    let (r, _) = mcp
        .list("jility_search_tickets", json!({"query": "numbat"}))
        .await;
    assert_eq!(numbers(&r["hits"]), ["OLD-4"]);
    let (r, _) = mcp
        .list("jility_search_tickets", json!({"query": "quokka"}))
        .await;
    assert_eq!(numbers(&r["hits"]), ["OLD-3"]);
    let stderr = mcp.shutdown().await;
    assert!(!stderr.contains("created"), "{stderr}");

    assert_eq!(user_version(&p.db()), LATEST);
    let after: Vec<i64> = [
        "tickets",
        "comments",
        "ticket_changes",
        "commit_links",
        "dependencies",
    ]
    .iter()
    .map(|t| count(&p.db(), t))
    .collect();
    assert_eq!(after[0], before[0] + 1, "one new ticket, none lost");
    assert_eq!(after[1], before[1] + 1, "one new comment, none lost");
    assert!(after[2] > before[2]);
    assert_eq!(after[3..], before[3..]);
    assert_eq!(count(&p.db(), "ticket_search"), 3, "live tickets only");
}

#[test]
fn the_cli_upgrades_a_first_version_database_too() {
    let p = Project::new();
    v1_database(&p.db());
    let v = p.json(&["ticket", "search", "echidna"]);
    assert_eq!(numbers(&v["hits"]), ["OLD-1"]);
    assert!(
        v["hits"][0]["snippet"]
            .as_str()
            .unwrap()
            .contains("**echidna**")
    );
    assert_eq!(user_version(&p.db()), LATEST);
    // A second run finds nothing to do.
    let v = p.json(&["ticket", "list"]);
    assert_eq!(v["page"]["total"], 2);
    assert_eq!(user_version(&p.db()), LATEST);
}

#[test]
fn rows_an_older_jility_inserts_still_show_in_filtered_listings() {
    let p = Project::new();
    p.init("API");
    p.json(&["ticket", "create", "--title", "One"]);
    p.json(&["ticket", "move", "API-1", "todo"]);
    // An older jility, still running, inserts a label and an assignee its own way: without
    // the status columns schema 3 added.
    let conn = Connection::open(p.db()).unwrap();
    conn.execute_batch(
        "INSERT INTO ticket_labels (ticket_id, label) VALUES (1, 'legacy');
         INSERT INTO ticket_assignees (ticket_id, assignee, assigned_by, assigned_at)
             VALUES (1, 'old', 'old', '2024-10-20T10:00:00.000Z');",
    )
    .unwrap();
    drop(conn);
    let v = p.json(&["ticket", "list", "--status", "todo", "--label", "legacy"]);
    assert_eq!(numbers(&v["tickets"]), ["API-1"]);
    let v = p.json(&["ticket", "list", "--status", "todo", "--assignee", "old"]);
    assert_eq!(numbers(&v["tickets"]), ["API-1"]);
    let v = p.json(&["ticket", "list", "--status", "backlog", "--label", "legacy"]);
    assert_eq!(numbers(&v["tickets"]), Vec::<String>::new());
}

/// A database whose schema is newer than this binary's, in the journal mode jility uses.
fn future_database(path: &Path, journal_mode: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let conn = Connection::open(path).unwrap();
    conn.pragma_update(None, "journal_mode", journal_mode)
        .unwrap();
    conn.execute_batch(V1).unwrap();
    conn.execute_batch(V2).unwrap();
    conn.execute_batch(
        "CREATE TABLE sprints (id INTEGER PRIMARY KEY, name TEXT);
         INSERT INTO sprints (name) VALUES ('Sprint 1');
         INSERT INTO projects (key, name, created_at) VALUES ('NEW', 'Future', '2030-01-01');",
    )
    .unwrap();
    conn.pragma_update(None, "user_version", 99).unwrap();
}

/// Run the CLI and the server on it: both refuse, saying why.
fn assert_refused(p: &Project) {
    let e = p.json_err(&["ticket", "list"]);
    assert_eq!(
        e.message,
        format!(
            "Cannot open the database {}: the database was made by a newer jility (schema version 99; this one knows up to {LATEST})",
            p.db().display()
        )
    );
    assert_eq!(
        e.hint,
        "Upgrade jility to use this database; it was left untouched."
    );
    let e = p.json_err(&["ticket", "create", "--title", "x"]);
    assert!(e.message.contains("newer jility"), "{e:?}");
    let out = run(p.root(), &[("JILITY_ACTOR", AGENT)], &["--mcp-server"]);
    assert!(!out.success(), "{out:?}");
    assert!(out.stdout.is_empty(), "{out:?}");
    assert!(
        out.stderr
            .contains("was made by a newer jility (schema version 99"),
        "{out:?}"
    );
}

#[test]
fn a_database_from_a_newer_jility_is_refused_and_left_alone() {
    let p = Project::new();
    future_database(&p.db(), "WAL");
    let bytes = std::fs::read(p.db()).unwrap();
    assert_refused(&p);
    assert_eq!(user_version(&p.db()), 99);
    assert_eq!(count(&p.db(), "sprints"), 1);
    assert_eq!(count(&p.db(), "tickets"), 0);
    assert!(std::fs::read(p.db()).unwrap() == bytes, "the file changed");
}

#[test]
fn a_newer_database_in_rollback_journal_mode_is_not_modified() {
    let p = Project::new();
    future_database(&p.db(), "DELETE");
    let bytes = std::fs::read(p.db()).unwrap();
    assert_refused(&p);
    assert_eq!(user_version(&p.db()), 99);
    let mode: String = Connection::open(p.db())
        .unwrap()
        .pragma_query_value(None, "journal_mode", |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "delete", "the journal mode was changed");
    assert!(std::fs::read(p.db()).unwrap() == bytes, "the file changed");
}

#[test]
fn a_file_that_is_not_a_database_is_reported_and_left_alone() {
    let p = Project::new();
    p.write(
        ".jility/data.db",
        "this is not SQLite, just text that happens to be here\n",
    );
    let e = p.json_err(&["ticket", "list"]);
    assert!(e.message.starts_with("Cannot open the database "), "{e:?}");
    assert!(e.hint.contains("Jility database"));
    assert_eq!(
        std::fs::read_to_string(p.db()).unwrap(),
        "this is not SQLite, just text that happens to be here\n"
    );
}

/// Create `n` tickets one after the other; their numbers.
async fn create_many(server: &mcp_testkit::McpProcess, name: &str, n: usize) -> Vec<String> {
    let mut out = Vec::new();
    for i in 0..n {
        out.push(server.create(&format!("{name} ticket {i}")).await);
    }
    out
}

/// Two servers and four CLI processes create tickets in one database at the same time:
/// every ticket gets its own number, 1..=N without a gap, and everyone sees all of them.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_servers_and_cli_processes_number_tickets_without_gaps() {
    const PER_SERVER: usize = 60;
    const CLIS: usize = 4;
    const PER_CLI: usize = 15;
    let p = Project::new();
    p.init("TASK");
    let a = p.start_as("server-a").await;
    let b = p.start_as("server-b").await;

    let clis: Vec<_> = (0..CLIS)
        .map(|k| {
            let root = p.root().to_path_buf();
            tokio::task::spawn_blocking(move || {
                let actor = format!("cli-{k}");
                (0..PER_CLI)
                    .map(|i| {
                        let v = json_ok(
                            &root,
                            &[("JILITY_ACTOR", &actor)],
                            &[
                                "ticket",
                                "create",
                                "--title",
                                &format!("cli {k} ticket {i}"),
                            ],
                        );
                        v["ticket"]["number"].as_str().unwrap().to_string()
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    // Two request streams per server: its connection carries interleaved calls too.
    let half = PER_SERVER / 2;
    let (a1, a2, b1, b2) = tokio::join!(
        create_many(&a, "a", half),
        create_many(&a, "a'", half),
        create_many(&b, "b", half),
        create_many(&b, "b'", half)
    );
    let mut all: Vec<String> = [a1, a2, b1, b2].concat();
    for cli in clis {
        all.extend(cli.await.unwrap());
    }

    let n = 2 * PER_SERVER + CLIS * PER_CLI;
    assert_eq!(all.len(), n);
    let mut got: Vec<u64> = all
        .iter()
        .map(|s| s.strip_prefix("TASK-").unwrap().parse().unwrap())
        .collect();
    got.sort_unstable();
    let expected: Vec<u64> = (1..=n as u64).collect();
    assert_eq!(got, expected, "no number twice, none skipped");

    for server in [&a, &b] {
        let (page, info) = server
            .list("jility_list_tickets", json!({"limit": 200}))
            .await;
        assert_eq!(info.total, n as u64);
        let listed: BTreeSet<String> = numbers(&page["tickets"]).into_iter().collect();
        let all: BTreeSet<String> = all.iter().cloned().collect();
        assert_eq!(listed, all);
    }
    let v = p.json(&["ticket", "list", "--limit", "200"]);
    assert_eq!(v["page"]["total"], n);
    let conn = Connection::open(p.db()).unwrap();
    let mut stmt = conn
        .prepare("SELECT created_by, count(*) FROM tickets GROUP BY created_by ORDER BY created_by")
        .unwrap();
    let by_actor: Vec<(String, i64)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        by_actor,
        [
            ("cli-0".to_string(), PER_CLI as i64),
            ("cli-1".to_string(), PER_CLI as i64),
            ("cli-2".to_string(), PER_CLI as i64),
            ("cli-3".to_string(), PER_CLI as i64),
            ("server-a".to_string(), PER_SERVER as i64),
            ("server-b".to_string(), PER_SERVER as i64),
        ]
    );
    let next: i64 = conn
        .query_row("SELECT next_number FROM projects", [], |r| r.get(0))
        .unwrap();
    assert_eq!(next, n as i64 + 1);
}

/// Several processes starting at once in a new project (e.g. two agents' servers and a
/// `jility init`) must all get the database; exactly one creates the project.
#[test]
fn processes_creating_a_new_database_at_once_all_succeed() {
    for round in 0..60 {
        let p = Project::new();
        let spawn = |args: &[&str]| {
            Command::new(BIN)
                .args(args)
                .current_dir(p.root())
                .env_clear()
                .env("PATH", std::env::var("PATH").unwrap_or_default())
                .env("JILITY_ACTOR", "racer")
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        };
        let inits: Vec<_> = (0..8).map(|_| spawn(&["--json", "init"])).collect();
        let servers: Vec<_> = (0..2).map(|_| spawn(&["--mcp-server"])).collect();
        let mut created = 0;
        for child in inits {
            let out = child.wait_with_output().unwrap();
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert!(
                out.status.success(),
                "round {round}: init failed: {stdout}{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
            if v["created"] == true {
                created += 1;
            }
        }
        for child in servers {
            // stdin is closed, so the handshake fails after the database was opened.
            let out = child.wait_with_output().unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(
                !stderr.contains("Cannot open the database"),
                "round {round}: server: {stderr}"
            );
        }
        let projects = count(&p.db(), "projects");
        assert_eq!(projects, 1, "round {round}");
        assert!(
            created <= 1,
            "round {round}: {created} inits created the project"
        );
    }
}
