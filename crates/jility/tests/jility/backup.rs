//! `jility admin backup` and `restore` through the binary: a snapshot taken under
//! concurrent writes restores; a quiet database restores equal, table by table and through
//! the API; a workspace's backup holds that workspace only; what cannot be restored (a
//! newer backup, a damaged one, a database in use) is refused, restoring nothing.

use std::path::Path;
use std::process::{Command, Output};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use reqwest::Method;
use serde_json::{Value, json};

use crate::cloud::{Server, call, client};
use crate::pg::TestDb;

fn admin(url: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_jility"))
        .arg("admin")
        .args(args)
        .args(["--database-url", url])
        .env("JILITY_MODE", "cloud")
        .output()
        .unwrap()
}

fn ok_json(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn refused(out: &Output) -> String {
    assert!(!out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stderr).to_string()
}

fn workspace(db: &TestDb, name: &str, owner: &str) -> String {
    crate::cloud::admin_workspace(&db.url, name, &["--owner", owner])
}

/// A workspace with some of everything: tickets with comments, changes, labels, assignees,
/// dependencies, commits, a parent and an epic newer than its tickets, a sprint, a view.
fn fill(server: &Server, token: &str, tickets: usize) {
    let http = client();
    let post = |path: &str, body: Value| {
        let answer = call(
            &http,
            server,
            Method::POST,
            path,
            Some(token),
            Some(&body.to_string()),
        );
        assert!(
            answer.status.is_success(),
            "{path}: {} {:?}",
            answer.status,
            answer.body
        );
        answer.body
    };
    for i in 1..=tickets {
        post(
            "/tickets",
            json!({
                "title": format!("Ticket {i}: tune the cache"),
                "description": format!("Details of {i}, with *markdown*."),
                "labels": ["backend", format!("l{}", i % 3)],
                "assignees": [format!("agent-{}", i % 2)],
                "story_points": (i % 5) as i64 + 1,
            }),
        );
        post(
            &format!("/tickets/TASK-{i}/comments"),
            json!({"content": format!("First look at {i}")}),
        );
        post(
            &format!("/tickets/TASK-{i}/comments"),
            json!({"content": "Second comment, café"}),
        );
        post(
            &format!("/tickets/TASK-{i}/status"),
            json!({"status": "in_progress"}),
        );
    }
    post(
        "/tickets/TASK-2/dependencies",
        json!({"depends_on": "TASK-1"}),
    );
    post(
        "/tickets/TASK-1/commits",
        json!({"commit_hash": "a1b2c3d4e5f6a7b8c9d0a1b2c3d4e5f6a7b8c9d0", "commit_message": "Fix"}),
    );
    let epic = post(
        "/tickets",
        json!({"title": "The cache epic", "kind": "epic"}),
    );
    let epic = epic["ticket"]["number"].as_str().unwrap().to_string();
    post(
        "/tickets/TASK-1/fields",
        json!({"epic_id": epic, "parent_id": "TASK-3"}),
    );
    post(
        "/sprints",
        json!({"name": "Sprint 1", "starts_on": "2026-12-01", "ends_on": "2026-12-14", "capacity_points": 20}),
    );
    post(
        "/sprints/Sprint 1/tickets",
        json!({"tickets": ["TASK-1", "TASK-2"]}),
    );
    post(
        "/views",
        json!({"name": "mine", "query": "label:backend", "shared": true}),
    );
}

/// Every row of the tables a backup keeps, as JSON text, sorted: equal databases give equal
/// lists.
fn rows(db: &TestDb) -> Vec<(String, Vec<String>)> {
    let mut client = db.client();
    jility_cloud::backup::TABLES
        .iter()
        .map(|(table, _)| {
            let mut rows: Vec<String> = client
                .query(&format!("SELECT row_to_json(t)::text FROM {table} t"), &[])
                .unwrap()
                .iter()
                .map(|row| row.get(0))
                .collect();
            // OAuth's tokens are not kept (none here); nothing else differs.
            rows.sort();
            ((*table).to_string(), rows)
        })
        .collect()
}

fn count(db: &TestDb, sql: &str) -> i64 {
    db.client().query_one(sql, &[]).unwrap().get(0)
}

fn backup_to(url: &str, file: &Path, extra: &[&str]) -> Value {
    let mut args = vec!["backup", "--json", "-o", file.to_str().unwrap()];
    args.extend_from_slice(extra);
    ok_json(&admin(url, &args))
}

#[test]
fn a_backup_under_concurrent_writes_restores_and_a_quiet_one_restores_equal() {
    let dir = tempfile::tempdir().unwrap();
    let source = TestDb::new();
    let alpha = workspace(&source, "alpha", "ada@example.com");
    let beta = workspace(&source, "beta", "bob@example.com");
    let server = Server::start(&source, &["--rate-limit", "100000"]);
    fill(&server, &alpha, 12);
    fill(&server, &beta, 3);

    // Writers keep creating and commenting while the snapshot is taken.
    let stop = Arc::new(AtomicBool::new(false));
    let server = Arc::new(server);
    let writers: Vec<_> = [alpha.clone(), beta.clone()]
        .into_iter()
        .map(|token| {
            let (server, stop) = (server.clone(), stop.clone());
            std::thread::spawn(move || {
                let http = client();
                let mut made = 0;
                while !stop.load(Ordering::Relaxed) {
                    let created = call(
                        &http,
                        &server,
                        Method::POST,
                        "/tickets",
                        Some(&token),
                        Some(r#"{"title":"written during the backup","labels":["busy"]}"#),
                    );
                    assert_eq!(created.status, 201, "{:?}", created.body);
                    let number = created.body["ticket"]["number"]
                        .as_str()
                        .unwrap()
                        .to_string();
                    let commented = call(
                        &http,
                        &server,
                        Method::POST,
                        &format!("/tickets/{number}/comments"),
                        Some(&token),
                        Some(r#"{"content":"and a comment"}"#),
                    );
                    assert_eq!(commented.status, 201);
                    made += 1;
                }
                made
            })
        })
        .collect();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let busy = dir.path().join("busy.jsonl");
    let busy_summary = backup_to(&source.url, &busy, &[]);
    std::thread::sleep(std::time::Duration::from_millis(200));
    stop.store(true, Ordering::Relaxed);
    let made: usize = writers.into_iter().map(|w| w.join().unwrap()).sum();
    assert!(made > 0);

    // The busy snapshot restores whole: each ticket with all of its comments of that moment.
    let busy_target = TestDb::new();
    let restored = ok_json(&admin(
        &busy_target.url,
        &["restore", "--json", busy.to_str().unwrap()],
    ));
    assert_eq!(restored["rows"], busy_summary["rows"]);
    let tickets = busy_summary["rows"]["tickets"].as_i64().unwrap();
    assert_eq!(count(&busy_target, "SELECT count(*) FROM tickets"), tickets);
    // The 17 tickets of `fill`, and some the writers made before the snapshot.
    assert!(tickets > 17, "{busy_summary}");
    // Every busy ticket came with its comment (each writer's newest may have been caught
    // between the two): the snapshot is of one moment.
    assert_eq!(
        count(
            &busy_target,
            "SELECT count(*) FROM tickets t WHERE t.title = 'written during the backup' \
             AND NOT EXISTS (SELECT 1 FROM comments c WHERE c.ticket_id = t.id) \
             AND t.id < (SELECT max(o.id) FROM tickets o WHERE o.workspace_id = t.workspace_id)"
        ),
        0
    );

    // A quiet backup restores equal, table by table.
    let quiet = dir.path().join("quiet.jsonl");
    backup_to(&source.url, &quiet, &[]);
    let target = TestDb::new();
    ok_json(&admin(
        &target.url,
        &["restore", "--json", quiet.to_str().unwrap()],
    ));
    let (before, after) = (rows(&source), rows(&target));
    for ((table, a), (_, b)) in before.iter().zip(&after) {
        assert_eq!(a.len(), b.len(), "{table}");
        assert!(a == b, "{table} differs after the restore");
    }
    // What is derived is rebuilt: every live ticket searchable, by title and by comment.
    assert_eq!(
        count(&target, "SELECT count(*) FROM ticket_search"),
        count(&source, "SELECT count(*) FROM ticket_search")
    );

    // Through the API of a server on the restored database, with the tokens of before
    // (kept as their hashes): the same tickets, history and comments; new tickets go on
    // from the numbers restored.
    let restored_server = Server::start(&target, &[]);
    let http = client();
    for path in [
        "/tickets/TASK-1",
        "/tickets/TASK-1/history",
        "/tickets/TASK-12",
        "/tickets?limit=50",
        "/search?q=caf%C3%A9",
        "/sprints/Sprint%201",
        "/epics",
        "/views",
    ] {
        let a = call(&http, &server, Method::GET, path, Some(&alpha), None);
        let b = call(
            &http,
            &restored_server,
            Method::GET,
            path,
            Some(&alpha),
            None,
        );
        assert_eq!(a.status, 200, "{path}: {:?}", a.body);
        assert_eq!(a.body, b.body, "{path}");
    }
    let next_a = call(
        &http,
        &server,
        Method::POST,
        "/tickets",
        Some(&beta),
        Some(r#"{"title":"next"}"#),
    );
    let next_b = call(
        &http,
        &restored_server,
        Method::POST,
        "/tickets",
        Some(&beta),
        Some(r#"{"title":"next"}"#),
    );
    assert_eq!(next_b.status, 201, "{:?}", next_b.body);
    assert_eq!(
        next_a.body["ticket"]["number"],
        next_b.body["ticket"]["number"]
    );
}

#[test]
fn a_workspace_backup_holds_that_workspace_and_its_people_only() {
    let dir = tempfile::tempdir().unwrap();
    let source = TestDb::new();
    let alpha = workspace(&source, "alpha", "ada@example.com");
    let beta = workspace(&source, "beta", "bob@example.com");
    let server = Server::start(&source, &[]);
    fill(&server, &alpha, 2);
    fill(&server, &beta, 2);
    // An unknown workspace: refused, no file (and no partial one) left.
    let missing = dir.path().join("missing.jsonl");
    let said = refused(&admin(
        &source.url,
        &[
            "backup",
            "--workspace",
            "gamma",
            "-o",
            missing.to_str().unwrap(),
        ],
    ));
    assert!(said.contains("No workspace is named \"gamma\""), "{said}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);

    let file = dir.path().join("beta.jsonl");
    let summary = backup_to(&source.url, &file, &["--workspace", "beta"]);
    assert_eq!(summary["workspaces"], json!(["beta"]));
    let target = TestDb::new();
    ok_json(&admin(
        &target.url,
        &["restore", "--json", file.to_str().unwrap()],
    ));
    assert_eq!(count(&target, "SELECT count(*) FROM workspaces"), 1);
    assert_eq!(count(&target, "SELECT count(*) FROM users"), 1);
    let email: String = target
        .client()
        .query_one("SELECT email FROM users", &[])
        .unwrap()
        .get(0);
    assert_eq!(email, "bob@example.com");
    let restored = Server::start(&target, &[]);
    let http = client();
    let b = call(
        &http,
        &restored,
        Method::GET,
        "/tickets/TASK-1",
        Some(&beta),
        None,
    );
    assert_eq!(b.status, 200);
    let a = call(
        &http,
        &restored,
        Method::GET,
        "/tickets/TASK-1",
        Some(&alpha),
        None,
    );
    assert_eq!(
        a.status, 401,
        "alpha's token is not in beta's backup: {:?}",
        a.body
    );
    // Nothing of alpha's text anywhere in the file.
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(!text.contains("ada@example.com"));
    assert!(!text.contains(&alpha[..20]));
}

#[test]
fn restore_refuses_newer_damaged_and_foreign_files_and_a_database_in_use() {
    let dir = tempfile::tempdir().unwrap();
    let source = TestDb::new();
    let token = workspace(&source, "alpha", "ada@example.com");
    let server = Server::start(&source, &[]);
    fill(&server, &token, 2);
    let file = dir.path().join("b.jsonl");
    backup_to(&source.url, &file, &[]);
    let text = std::fs::read_to_string(&file).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let known = jility_cloud::store::MIGRATIONS.len();
    let write = |name: &str, body: String| {
        let path = dir.path().join(name);
        std::fs::write(&path, body).unwrap();
        path
    };
    let header: Value = serde_json::from_str(lines[0]).unwrap();
    let with_header = |header: Value| {
        let mut all = vec![header.to_string()];
        all.extend(lines[1..].iter().map(|l| l.to_string()));
        all.join("\n") + "\n"
    };
    let mut newer = header.clone();
    newer["schema"] = json!(known + 1);
    let mut future = header.clone();
    future["format_version"] = json!(2);
    let edited = text.replacen("First look at 1", "First look at 9", 1);
    assert_ne!(edited, text);
    let cases = [
        (
            write("newer.jsonl", with_header(newer)),
            format!(
                "made by a newer jility (schema version {}; this one knows up to {known})",
                known + 1
            ),
            false,
        ),
        (
            write("future.jsonl", with_header(future)),
            "format version 2; this jility reads up to 1".to_string(),
            false,
        ),
        (
            write("foreign.jsonl", "{\"hello\":1}\n".into()),
            "This is not a jility backup".to_string(),
            false,
        ),
        (
            write(
                "truncated.jsonl",
                lines[..lines.len() - 1].join("\n") + "\n",
            ),
            "its end is missing".to_string(),
            true,
        ),
        (
            write("cut.jsonl", lines[..lines.len() / 2].join("\n")),
            "its end is missing".to_string(),
            true,
        ),
        (
            write("edited.jsonl", edited),
            "do not match its hash".to_string(),
            true,
        ),
    ];
    for (path, expected, reaches_database) in cases {
        let target = TestDb::new();
        let said = refused(&admin(&target.url, &["restore", path.to_str().unwrap()]));
        assert!(said.contains(&expected), "{}: {said}", path.display());
        // Nothing restored; a file refused by its header did not even migrate the database.
        let migrated: bool = target
            .client()
            .query_one("SELECT to_regclass('workspaces') IS NOT NULL", &[])
            .unwrap()
            .get(0);
        assert_eq!(migrated, reaches_database, "{}", path.display());
        if migrated {
            assert_eq!(count(&target, "SELECT count(*) FROM workspaces"), 0);
            assert_eq!(count(&target, "SELECT count(*) FROM tickets"), 0);
        }
    }
    // A database in use is never written over.
    let said = refused(&admin(&source.url, &["restore", file.to_str().unwrap()]));
    assert!(
        said.contains("already holds workspaces or people"),
        "{said}"
    );
    assert_eq!(count(&source, "SELECT count(*) FROM workspaces"), 1);
}
