//! The ticket commands in cloud mode (`JILITY_MODE=cloud jility ticket …`) against a real
//! `jility serve` on PostgreSQL: every command answers as it does in local mode (the same
//! JSON but for ids and times, the same text), with the token of `JILITY_API_TOKEN` or the
//! one `jility auth login --token` stored; errors name the server and the missing scope; a
//! server that cannot be reached is a retryable error; the local-only commands say so.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stderr
)] // assertions in tests

use std::process::{Command, Output, Stdio};

use jility_cloud::auth::Tokens;
use serde_json::Value;

use crate::cloud;
use crate::pg;

use cloud::*;
use pg::TestDb;

/// The commands both modes run, in order (on TASK-1…TASK-3).
const SCRIPT: &[&[&str]] = &[
    &[
        "ticket",
        "create",
        "--title",
        "Login",
        "-d",
        "# Login\n\n## Acceptance Criteria\n- [ ] returns 200\n\n## Notes\nnone",
        "-l",
        "auth",
        "-p",
        "3",
    ],
    &["ticket", "create", "-t", "-flag parsing", "-s", "todo"],
    &["ticket", "create", "-t", "Schema", "--parent", "TASK-1"],
    &["ticket", "list"],
    &["ticket", "list", "--status", "todo", "--limit", "1"],
    &[
        "ticket",
        "edit",
        "TASK-1",
        "--section",
        "## Acceptance Criteria",
        "--content",
        "- [x] returns 200",
    ],
    &[
        "ticket",
        "edit",
        "TASK-1",
        "--title",
        "Login with SSO",
        "--append",
        "- [ ] expired tokens",
        "-m",
        "-scope",
    ],
    &[
        "ticket", "edit", "TASK-1", "--points", "5", "--label", "sso",
    ],
    &["ticket", "move", "TASK-1", "todo", "-m", "- planned"],
    &["ticket", "assign", "TASK-1", "carol", "-m", "yours"],
    &["ticket", "claim", "TASK-2"],
    &["ticket", "comment", "TASK-1", "- [ ] check the redirect"],
    &["ticket", "link", "TASK-1", "abcdef1234", "-m", "Add SSO"],
    &["ticket", "history", "TASK-1"],
    &["ticket", "history", "TASK-1", "--revert", "1"],
    &["dep", "add", "TASK-1", "TASK-3"],
    &["dep", "graph", "TASK-1"],
    &["dep", "remove", "TASK-1", "TASK-3"],
    &["template", "list", "--limit", "2"],
    &["template", "create", "bug-fix", "--var", "summary=crash"],
    &["ticket", "show", "TASK-1"],
    &["ticket", "delete", "TASK-4"],
    &["ticket", "list"],
];

/// An answer without what differs between two stores: ids, times, cursors.
fn normalized(mut value: Value) -> Value {
    fn walk(value: &mut Value) {
        match value {
            Value::Object(members) => {
                members.retain(|name, _| {
                    !matches!(name.as_str(), "id" | "next_cursor") && !name.ends_with("_at")
                });
                members.values_mut().for_each(walk);
            }
            Value::Array(items) => items.iter_mut().for_each(walk),
            // A comment's id in the change log.
            Value::String(text) if uuid::Uuid::parse_str(text).is_ok() => {
                *text = "<uuid>".to_string();
            }
            _ => {}
        }
    }
    walk(&mut value);
    value
}

fn text(output: &Output) -> String {
    assert!(
        output.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// `jility ARGS` in local mode in `dir`, as `actor`.
fn local(dir: &std::path::Path, actor: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_jility"))
        .args(args)
        .current_dir(dir)
        .env("JILITY_ACTOR", actor)
        .env_remove("JILITY_MODE")
        .env_remove("JILITY_DB")
        .env_remove("NO_COLOR")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn every_ticket_command_answers_in_cloud_mode_as_in_local_mode() {
    let db = TestDb::new();
    let pool = db.connect();
    let (_alpha, token) = workspace(&Tokens::new(&pool), "alpha");
    let server = Server::start(&db, &[]);
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    // The cloud's author is the token's name: the local one is made the same.
    text(&local(
        project.path(),
        "bootstrap",
        &["init", "--key", "TASK"],
    ));

    for (i, args) in SCRIPT.iter().enumerate() {
        // Each command twice on each side: as JSON, then as text; the text is compared
        // before the write is repeated, so both sides see the same state.
        let with_json: Vec<&str> = args.iter().copied().chain(["--json"]).collect();
        let remote = jility(&with_json, server.root(), Some(&token), home.path());
        let here = local(project.path(), "bootstrap", &with_json);
        let remote: Value = serde_json::from_str(&text(&remote)).unwrap();
        let here: Value = serde_json::from_str(&text(&here)).unwrap();
        assert_eq!(normalized(remote), normalized(here), "step {i}: {args:?}");
        if !writes(args) {
            let remote = text(&jility(args, server.root(), Some(&token), home.path()));
            let here = text(&local(project.path(), "bootstrap", args));
            assert_eq!(
                without_cursor(&remote),
                without_cursor(&here),
                "step {i}: {args:?}"
            );
        }
    }
    // The search runs on each store's own index: the same tickets are found.
    let hits = |output: Output| -> Vec<String> {
        let v: Value = serde_json::from_str(&text(&output)).unwrap();
        numbers(&v["hits"])
    };
    let args = ["ticket", "search", "redirect", "--json"];
    assert_eq!(
        hits(jility(&args, server.root(), Some(&token), home.path())),
        hits(local(project.path(), "bootstrap", &args))
    );
    assert_eq!(
        hits(jility(&args, server.root(), Some(&token), home.path())),
        ["TASK-1"]
    );
}

/// A text without the cursor it offers (each store has its own key).
fn without_cursor(text: &str) -> String {
    text.lines()
        .map(|line| match line.split_once("--cursor ") {
            Some((before, _)) => format!("{before}--cursor …"),
            None => line.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn writes(args: &[&str]) -> bool {
    let reads = matches!(
        args[..2],
        ["ticket", "list" | "show" | "search"] | ["dep", "graph"] | ["template", "list"]
    ) || (args[1] == "history" && !args.contains(&"--revert"));
    !reads
}

fn numbers(list: &Value) -> Vec<String> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|t| t["number"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn the_token_of_auth_login_serves_the_ticket_commands() {
    let db = TestDb::new();
    let pool = db.connect();
    let (_alpha, token) = workspace(&Tokens::new(&pool), "alpha");
    let server = Server::start(&db, &[]);
    let home = tempfile::tempdir().unwrap();

    let mut login = Command::new(env!("CARGO_BIN_EXE_jility"))
        .args(["auth", "login", "--token", "-"])
        .env("JILITY_API_URL", server.root())
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join("config"))
        .env_remove("JILITY_API_TOKEN")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write as _;
    writeln!(login.stdin.take().unwrap(), "{token}").unwrap();
    assert!(login.wait_with_output().unwrap().status.success());

    let created = jility(
        &["ticket", "create", "-t", "Stored", "--json"],
        server.root(),
        None,
        home.path(),
    );
    let v: Value = serde_json::from_str(&text(&created)).unwrap();
    assert_eq!(v["ticket"]["number"], "TASK-1");
    let shown = text(&jility(
        &["ticket", "show", "TASK-1"],
        server.root(),
        None,
        home.path(),
    ));
    assert!(shown.starts_with("TASK-1  Stored\n"), "{shown}");
}

/// The error envelope of a failed `--json` command.
fn error_of(output: &Output) -> Value {
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let v: Value = serde_json::from_slice(&output.stdout).unwrap();
    v["error"].clone()
}

#[test]
fn errors_name_the_server_and_the_missing_scope() {
    let db = TestDb::new();
    let pool = db.connect();
    let tokens = Tokens::new(&pool);
    let (alpha, admin) = workspace(&tokens, "alpha");
    let reader = token(&tokens, &alpha, "reader", "tickets:read");
    let reader = reader.token.expose().to_string();
    let server = Server::start(&db, &[]);
    let home = tempfile::tempdir().unwrap();
    let root = server.root().to_string();
    let run = |args: &[&str], token: Option<&str>| jility(args, &root, token, home.path());

    text(&run(&["ticket", "create", "-t", "One"], Some(&admin)));
    // A read-only token reads…
    let listed = text(&run(&["ticket", "list"], Some(&reader)));
    assert!(listed.contains("TASK-1  Backlog  One"), "{listed}");
    // …and a write names the scope it lacks and the server.
    let e = error_of(&run(
        &["ticket", "comment", "TASK-1", "hi", "--json"],
        Some(&reader),
    ));
    assert_eq!(e["code"], "permission_denied", "{e}");
    assert!(
        e["message"].as_str().unwrap().contains("comments:write"),
        "{e}"
    );
    assert!(e["hint"].as_str().unwrap().contains(&root), "{e}");
    assert_eq!(e["retryable"], false);
    let out = run(&["ticket", "move", "TASK-1", "todo"], Some(&reader));
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("❌ Error: This token lacks the `tickets:write` scope\n\n"),
        "{stderr}"
    );
    assert!(stderr.contains(&root), "{stderr}");
    // Not found, as in local mode, with the commands to use (not the MCP tools).
    let out = run(&["ticket", "show", "TASK-9"], Some(&reader));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("❌ Error: Ticket TASK-9 not found\n\nUse `jility ticket list`"),
        "{stderr}"
    );
    assert!(!stderr.contains("jility_"), "{stderr}");
    // A bad token: unauthenticated.
    let e = error_of(&run(
        &["ticket", "list", "--json"],
        Some("jil_live_0000000000000000000000000000000000000000"),
    ));
    assert_eq!(e["code"], "unauthenticated", "{e}");
    // No token and no sign-in: say how to sign in.
    let e = error_of(&run(&["ticket", "list", "--json"], None));
    assert_eq!(e["code"], "unauthenticated", "{e}");
    assert!(e["message"].as_str().unwrap().contains(&root), "{e}");
    assert!(
        e["hint"].as_str().unwrap().contains("`jility auth login`"),
        "{e}"
    );
    // No server there: retryable, naming the address.
    let e = error_of(&jility(
        &["ticket", "list", "--json"],
        "http://127.0.0.1:9",
        Some(&admin),
        home.path(),
    ));
    assert_eq!(e["code"], "network_error", "{e}");
    assert_eq!(e["retryable"], true, "{e}");
    assert!(
        e["message"].as_str().unwrap().contains("127.0.0.1:9"),
        "{e}"
    );
    let out = jility(
        &["ticket", "list"],
        "http://127.0.0.1:9",
        Some(&admin),
        home.path(),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("try again"), "{stderr}");
    // The commands of a local database say what to do instead.
    for (args, instead) in [
        (&["init", "--json"][..], "jility admin create-workspace"),
        (&["web", "--listen", "127.0.0.1:0"][..], "JILITY_API_URL"),
    ] {
        let out = run(args, Some(&admin));
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(all.contains("JILITY_MODE is cloud"), "{all}");
        assert!(all.contains(instead), "{all}");
    }
    // Nothing was written by the refused calls.
    let v: Value = serde_json::from_str(&text(&run(
        &["ticket", "show", "TASK-1", "--json"],
        Some(&admin),
    )))
    .unwrap();
    assert_eq!(v["comment_count"], 0);
    assert_eq!(v["ticket"]["status"], "backlog");
}
