//! Writes of upstream git-mile's tasks (issue 48, item 1): what `git_mile.create`,
//! `git_mile.update` and `git_mile.comment` with `entity: "task"` (and the CLI's `create
//! task`, `update`, `comment`) write is what upstream's own store writes, byte for byte (each
//! commit checked against upstream's layout, built here independently), reads back through
//! this version, and, when upstream's own binary is there (`GIT_MILE_UPSTREAM_BIN`, else
//! `~/.cache/git-mile-upstream-50731c6/bin/git-mile`), through upstream's `show`, `ls` and
//! `log` too. Bad input is refused before anything is written; concurrent writers lose
//! nothing.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // assertions in tests

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support::{Sandbox, data_of, ok, rpc_error, tool_error};
use crate::tasks::{EMPTY_TREE, J, pretty};

/// Upstream git-mile's own binary, when there is one.
pub(crate) fn upstream_bin() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("GIT_MILE_UPSTREAM_BIN") {
        let path = PathBuf::from(path);
        return path.is_file().then_some(path);
    }
    let home = std::env::var_os("HOME")?;
    let path = Path::new(&home).join(".cache/git-mile-upstream-50731c6/bin/git-mile");
    path.is_file().then_some(path)
}

/// Upstream's binary run in `repo`; its stdout as JSON.
fn upstream_json(sandbox: &Sandbox, bin: &Path, repo: &Path, args: &[&str]) -> Value {
    let out = sandbox
        .command(bin.to_str().unwrap(), repo)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "upstream {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The fields of each kind of event after its `type`, in the order of upstream's
/// `EventKind` (`git-mile-core/src/event.rs`).
fn kind_fields(kind: &str) -> &'static [&'static str] {
    match kind {
        "taskCreated" => &[
            "title",
            "labels",
            "assignees",
            "description",
            "state",
            "state_kind",
        ],
        "taskStateSet" => &["state", "state_kind"],
        "taskStateCleared" => &[],
        "taskTitleSet" => &["title"],
        "taskDescriptionSet" => &["description"],
        "labelsAdded" | "labelsRemoved" => &["labels"],
        "assigneesAdded" | "assigneesRemoved" => &["assignees"],
        "commentAdded" | "commentUpdated" => &["comment_id", "body_md"],
        "childLinked" | "childUnlinked" => &["parent", "child"],
        "relationAdded" | "relationRemoved" => &["kind", "target"],
        other => panic!("not an event of upstream's: {other}"),
    }
}

/// The message upstream's store writes for `event`: its header, a blank line, and the event
/// as `serde_json::to_string_pretty` prints upstream's struct (no newline at the end).
fn upstream_message(event: &Value) -> String {
    let kind = &event["kind"];
    let t = kind["type"].as_str().unwrap();
    let fields = kind_fields(t);
    assert_eq!(
        kind.as_object().unwrap().len(),
        fields.len() + 1,
        "{t}: upstream's fields only: {kind}"
    );
    let mut k = vec![("type", J::V(json!(t)))];
    for field in fields {
        k.push((*field, J::V(kind[*field].clone())));
    }
    let body = J::Obj(vec![
        ("schema", J::V(json!("git-mile-event@1"))),
        ("id", J::V(event["id"].clone())),
        ("lamport", J::V(event["lamport"].clone())),
        ("ts", J::V(event["ts"].clone())),
        (
            "actor",
            J::Obj(vec![
                ("name", J::V(event["actor"]["name"].clone())),
                ("email", J::V(event["actor"]["email"].clone())),
            ]),
        ),
        ("task", J::V(event["task"].clone())),
        ("kind", J::Obj(k)),
    ]);
    format!(
        "git-mile-event: {}\n\n{}",
        event["id"].as_str().unwrap(),
        pretty(&body, 0)
    )
}

/// `ts` as the `time` crate writes RFC 3339: `Z`, the fraction without trailing zeros.
fn is_upstream_time(ts: &str) -> bool {
    let Ok(t) = chrono::DateTime::parse_from_rfc3339(ts) else {
        return false;
    };
    let nanos = chrono::Timelike::nanosecond(&t);
    let fraction = if nanos == 0 {
        String::new()
    } else {
        format!(".{}", format!("{nanos:09}").trim_end_matches('0'))
    };
    ts == format!("{}{fraction}Z", t.format("%Y-%m-%dT%H:%M:%S"))
}

/// A UUIDv7, lowercase hyphenated.
fn is_v7(id: &str) -> bool {
    uuid::Uuid::parse_str(id)
        .is_ok_and(|u| u.get_version_num() == 7 && u.hyphenated().to_string() == id)
}

/// Every commit of task `id`'s ref, oldest first, checked as upstream's store writes one;
/// their events.
fn checked_events(sandbox: &Sandbox, repo: &Path, id: &str) -> Vec<Value> {
    let name = format!("refs/git-mile/tasks/{id}");
    let commits = sandbox.git(repo, &["rev-list", "--reverse", &name]);
    let mut events = Vec::new();
    let mut parent: Option<String> = None;
    for oid in commits.lines() {
        let raw = sandbox.git(repo, &["cat-file", "commit", oid]);
        let (head, message) = raw.split_once("\n\n").unwrap();
        let (_, body) = message.split_once("\n\n").unwrap();
        let event: Value = serde_json::from_str(body).unwrap();
        assert_eq!(message, upstream_message(&event), "commit {oid}");
        let mut lines = head.lines();
        assert_eq!(lines.next(), Some(format!("tree {EMPTY_TREE}").as_str()));
        if let Some(parent) = &parent {
            assert_eq!(lines.next(), Some(format!("parent {parent}").as_str()));
        }
        let who = format!(
            "{} <{}> ",
            event["actor"]["name"].as_str().unwrap(),
            event["actor"]["email"].as_str().unwrap()
        );
        for role in ["author ", "committer "] {
            let line = lines.next().unwrap();
            assert!(line.starts_with(&format!("{role}{who}")), "{line}");
        }
        assert_eq!(lines.next(), None, "no other header");
        assert_eq!(event["task"], id);
        assert!(is_v7(event["id"].as_str().unwrap()), "{event}");
        assert!(is_upstream_time(event["ts"].as_str().unwrap()), "{event}");
        parent = Some(oid.to_string());
        events.push(event);
    }
    // One writer: each event's lamport one more than the one before it.
    let lamports: Vec<u64> = events
        .iter()
        .map(|e| e["lamport"].as_u64().unwrap())
        .collect();
    assert_eq!(lamports, (1..=events.len() as u64).collect::<Vec<_>>());
    events
}

fn types(events: &[Value]) -> Vec<&str> {
    events
        .iter()
        .map(|e| e["kind"]["type"].as_str().unwrap())
        .collect()
}

fn sorted(value: &Value) -> Vec<String> {
    let mut items: Vec<String> = value
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    items.sort();
    items
}

/// The task as upstream's `show` prints it agrees with ours.
fn same_in_upstream(ours: &Value, theirs: &Value) {
    assert_eq!(theirs["id"], ours["id"]);
    for field in ["title", "description", "state", "state_kind"] {
        assert_eq!(theirs[field], ours[field], "{field}");
    }
    for field in ["labels", "assignees", "children", "parents"] {
        // Ours are absent when empty.
        let ours = ours.get(field).cloned().unwrap_or(json!([]));
        assert_eq!(sorted(&theirs[field]), sorted(&ours), "{field}");
    }
    let relations = ours.get("relations").cloned().unwrap_or(json!({}));
    assert_eq!(theirs["relates"], relations);
    let time = |v: &Value| chrono::DateTime::parse_from_rfc3339(v.as_str().unwrap()).unwrap();
    assert_eq!(time(&theirs["updated_rfc3339"]), time(&ours["updated"]));
}

async fn show(mcp: &mcp_testkit::McpProcess, id: &str) -> Value {
    ok(mcp, "git_mile.show", json!({"entity": "task", "id": id})).await
}

#[tokio::test]
async fn tasks_written_by_ours_are_upstreams_byte_for_byte() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("r");
    let mcp = sandbox.server(&repo, &[]).await;

    let parent = ok(
        &mcp,
        "git_mile.create",
        json!({
            "entity": "task", "title": "Ship the importer", "labels": ["type/feature", "area/cli"],
            "assignees": ["alice"], "description": "Read upstream refs \"as is\".\nTwo lines."
        }),
    )
    .await;
    let p = parent["id"].as_str().unwrap().to_string();
    assert!(is_v7(&p), "{p}");
    // The workflow's default state, with its kind (upstream's built-in workflow).
    assert_eq!(parent["state"], "state/todo");
    assert_eq!(parent["state_kind"], "todo");
    assert_eq!(parent["author"], "Ann Example");

    let child = ok(
        &mcp,
        "git_mile.create",
        json!({"entity": "task", "title": "Write the events", "parents": [&p[..30]], "state": "state/in-progress"}),
    )
    .await;
    let c = child["id"].as_str().unwrap().to_string();
    assert_eq!(child["parents"], json!([p]));
    assert_eq!(child["state_kind"], "in_progress");
    assert_eq!(show(&mcp, &p).await["children"], json!([c]));

    let updated = ok(
        &mcp,
        "git_mile.update",
        json!({
            "entity": "task", "id": c, "title": "Write events as upstream does",
            "description": "Byte for byte.", "state": "state/done",
            "addLabels": ["b", "a"], "removeLabels": ["nope"],
            "addAssignees": ["bob", "carol"], "addRelations": [format!("related:{}", &p[..30])]
        }),
    )
    .await;
    assert_eq!(updated["title"], "Write events as upstream does");
    assert_eq!(updated["status"], "closed");
    assert_eq!(updated["state_kind"], "done");
    assert_eq!(updated["labels"], json!(["a", "b"]));
    assert_eq!(updated["assignees"], json!(["bob", "carol"]));
    assert_eq!(updated["relations"], json!({"related": [p]}));
    // The same update again changes nothing, and writes nothing.
    let count = |id: &str| {
        sandbox
            .git(
                &repo,
                &["rev-list", "--count", &format!("refs/git-mile/tasks/{id}")],
            )
            .trim()
            .to_string()
    };
    let before = count(&c);
    ok(
        &mcp,
        "git_mile.update",
        json!({"entity": "task", "id": c, "state": "state/done", "addLabels": ["a"], "title": "Write events as upstream does"}),
    )
    .await;
    assert_eq!(count(&c), before);

    ok(
        &mcp,
        "git_mile.update",
        json!({"entity": "task", "id": c, "removeAssignees": ["carol"], "state": null}),
    )
    .await;
    let commented = ok(
        &mcp,
        "git_mile.comment",
        json!({"entity": "task", "id": c, "body": "first draft"}),
    )
    .await;
    let comment = commented["comments"][0]["id"].as_str().unwrap().to_string();
    assert!(is_v7(&comment));
    let edited = ok(
        &mcp,
        "git_mile.comment",
        json!({"entity": "task", "id": c, "body": "second draft", "commentId": &comment[..30]}),
    )
    .await;
    assert_eq!(edited["comments"][0]["body"], "second draft");
    assert_eq!(edited["comments"][0]["edits"], 1);
    assert_eq!(edited["stats"]["comment_count"], 1);
    let unlinked = ok(
        &mcp,
        "git_mile.update",
        json!({"entity": "task", "id": c, "removeParents": [p], "removeRelations": [format!("related:{p}")]}),
    )
    .await;
    assert!(unlinked.get("parents").is_none(), "{unlinked}");
    assert!(unlinked.get("relations").is_none(), "{unlinked}");
    assert!(show(&mcp, &p).await.get("children").is_none());

    // Every commit as upstream's store writes one, the events in upstream's order.
    let events = checked_events(&sandbox, &repo, &c);
    assert_eq!(
        types(&events),
        [
            "taskCreated",
            "childLinked",
            "taskTitleSet",
            "taskStateSet",
            "taskDescriptionSet",
            "labelsAdded",
            "assigneesAdded",
            "relationAdded",
            "taskStateCleared",
            "assigneesRemoved",
            "commentAdded",
            "commentUpdated",
            "childUnlinked",
            "relationRemoved",
        ]
    );
    assert_eq!(events[0]["kind"]["description"], Value::Null);
    assert_eq!(events[5]["kind"]["labels"], json!(["b", "a"]), "as given");
    assert_eq!(events[3]["kind"]["state_kind"], "done");
    let parent_events = checked_events(&sandbox, &repo, &p);
    assert_eq!(
        types(&parent_events),
        ["taskCreated", "childLinked", "childUnlinked"]
    );
    assert_eq!(
        parent_events[1]["kind"],
        json!({"type": "childLinked", "parent": p, "child": c})
    );

    let ours_c = show(&mcp, &c).await;
    let ours_p = show(&mcp, &p).await;
    assert!(ours_c.get("state").is_none(), "{ours_c}");
    assert_eq!(ours_c["assignees"], json!(["bob"]));
    mcp.shutdown().await;

    // The CLI writes the same way.
    let cli = sandbox.mile_ok(
        &repo,
        &[
            "create",
            "task",
            "--title",
            "From the CLI",
            "--assignee",
            "dan",
            "--parent",
            &p,
        ],
    );
    let t = cli.trim().to_string();
    sandbox.mile_ok(
        &repo,
        &[
            "update",
            &t,
            "--state",
            "state/in-progress",
            "--add-label",
            "cli",
            "--add-relation",
            &format!("blocks:{c}"),
        ],
    );
    sandbox.mile_ok(&repo, &["comment", &t, "--body", "hello"]);
    sandbox.mile_ok(&repo, &["label", &t, "--remove", "cli"]);
    sandbox.mile_ok(&repo, &["edit", &t, "--description", "Said twice."]);
    let cli_events = checked_events(&sandbox, &repo, &t);
    assert_eq!(
        types(&cli_events),
        [
            "taskCreated",
            "childLinked",
            "taskStateSet",
            "labelsAdded",
            "relationAdded",
            "commentAdded",
            "labelsRemoved",
            "taskDescriptionSet"
        ]
    );
    let ours_t = sandbox.mile_json(&repo, &["show", &t]);
    assert_eq!(ours_t["relations"], json!({"blocks": [c]}));
    assert!(ours_p.get("children").is_none(), "{ours_p}");
    let ours_p = sandbox.mile_json(&repo, &["show", &p]);
    assert_eq!(ours_p["children"], json!([t]));

    let Some(bin) = upstream_bin() else {
        return;
    };
    // Upstream reads back what ours wrote.
    for ours in [&ours_c, &ours_p, &ours_t] {
        let id = ours["id"].as_str().unwrap();
        let theirs = upstream_json(&sandbox, &bin, &repo, &["show", "--task", id]);
        same_in_upstream(ours, &theirs);
    }
    let listed = upstream_json(&sandbox, &bin, &repo, &["ls", "--format", "json"]);
    let mut ids: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap())
        .collect();
    ids.sort_unstable();
    let mut ours: Vec<&str> = vec![&c, &p, &t];
    ours.sort_unstable();
    assert_eq!(ids, ours);
    // Its log holds our events, in its order (lamport, time, id): ours, newest first, reversed.
    let log = upstream_json(
        &sandbox,
        &bin,
        &repo,
        &["log", "--task", &c, "--format", "json"],
    );
    let theirs: Vec<&str> = log
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap())
        .collect();
    let page = sandbox.mile_json(&repo, &["log", &c, "--limit", "200"]);
    let mut mine: Vec<&str> = page["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    mine.reverse();
    assert_eq!(theirs, mine);
    assert_eq!(
        log.as_array().unwrap()[11]["kind"]["body_md"],
        "second draft"
    );
}

/// The refs under `refs/git-mile/` with their tips.
fn refs(sandbox: &Sandbox, repo: &Path) -> String {
    sandbox.git(repo, &["for-each-ref", "refs/git-mile"])
}

async fn invalid(mcp: &mcp_testkit::McpProcess, tool: &str, args: Value) -> (String, String) {
    let error = rpc_error(mcp, tool, args.clone()).await;
    assert_eq!(error.code.0, -32602, "{tool} {args}: {error:?}");
    let data = data_of(&error);
    assert_eq!(data.code, "invalid_params");
    (error.message.to_string(), data.hint.to_string())
}

#[tokio::test]
async fn bad_task_writes_are_refused_before_anything_is_written() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("r");
    let mcp = sandbox.server(&repo, &[]).await;
    let a = ok(
        &mcp,
        "git_mile.create",
        json!({"entity": "task", "title": "A"}),
    )
    .await;
    let a = a["id"].as_str().unwrap().to_string();
    let b = ok(
        &mcp,
        "git_mile.create",
        json!({"entity": "task", "title": "B", "parents": [a]}),
    )
    .await;
    let b = b["id"].as_str().unwrap().to_string();
    let c = ok(
        &mcp,
        "git_mile.comment",
        json!({"entity": "task", "id": b, "body": "note"}),
    )
    .await;
    assert_eq!(c["stats"]["comment_count"], 1);
    let before = refs(&sandbox, &repo);

    // A state outside the workflow (upstream's built-in one here): the hint names the states.
    let (message, hint) = invalid(
        &mcp,
        "git_mile.update",
        json!({"entity": "task", "id": b, "state": "state/review"}),
    )
    .await;
    assert!(message.contains("state/review"), "{message}");
    assert!(
        hint.contains("state/todo (Todo), state/in-progress (In Progress), state/done (Done)"),
        "{hint}"
    );
    invalid(
        &mcp,
        "git_mile.create",
        json!({"entity": "task", "title": "C", "state": "done"}),
    )
    .await;
    // A task its own parent, or a parent below it.
    let (message, _) = invalid(
        &mcp,
        "git_mile.update",
        json!({"entity": "task", "id": a, "addParents": [a]}),
    )
    .await;
    assert!(message.contains("its own parent"), "{message}");
    let (message, _) = invalid(
        &mcp,
        "git_mile.update",
        json!({"entity": "task", "id": a, "addParents": [b]}),
    )
    .await;
    assert!(message.contains("cycle"), "{message}");
    invalid(
        &mcp,
        "git_mile.update",
        json!({"entity": "task", "id": a, "addRelations": [format!("blocks:{a}")]}),
    )
    .await;
    invalid(
        &mcp,
        "git_mile.update",
        json!({"entity": "task", "id": a, "addRelations": ["no-target"]}),
    )
    .await;
    // The fields of issues, for a task; those of tasks, for an issue.
    for (tool, args) in [
        (
            "git_mile.create",
            json!({"entity": "task", "title": "C", "milestone": "x"}),
        ),
        (
            "git_mile.update",
            json!({"entity": "task", "id": a, "status": "closed"}),
        ),
        ("git_mile.update", json!({"entity": "task", "id": a})),
        (
            "git_mile.update",
            json!({"entity": "task", "id": a, "addLabels": ["x"], "removeLabels": ["x"]}),
        ),
        ("git_mile.create", json!({"entity": "task", "title": " "})),
        (
            "git_mile.create",
            json!({"entity": "issue", "title": "I", "assignees": ["x"]}),
        ),
        (
            "git_mile.comment",
            json!({"entity": "issue", "id": a, "body": "x", "commentId": "x"}),
        ),
    ] {
        let (message, _) = invalid(&mcp, tool, args.clone()).await;
        assert!(!message.is_empty(), "{args}");
    }
    // A comment the task does not have; a parent that does not exist.
    let error = tool_error(
        &mcp,
        "git_mile.comment",
        json!({"entity": "task", "id": b, "body": "x", "commentId": "0123abcd"}),
    )
    .await;
    assert_eq!(error["code"], "not_found");
    assert!(
        error["message"].as_str().unwrap().contains("0123abcd"),
        "{error}"
    );
    let error = tool_error(
        &mcp,
        "git_mile.create",
        json!({"entity": "task", "title": "C", "parents": ["ffffffff-ffff-7fff-bfff-ffffffffffff"]}),
    )
    .await;
    assert_eq!(error["code"], "not_found");
    assert_eq!(refs(&sandbox, &repo), before, "nothing was written");

    // The repository's own workflow: its states, and the kind each writes.
    let config = repo.join(".git-mile");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("config.toml"),
        "[workflow]\nstates = [{ value = \"state/review\", label = \"Review\", kind = \"blocked\" }, { value = \"state/todo\" }]\ndefault_state = \"state/todo\"\n",
    )
    .unwrap();
    let set = ok(
        &mcp,
        "git_mile.update",
        json!({"entity": "task", "id": b, "state": "state/review"}),
    )
    .await;
    assert_eq!(set["state_kind"], "blocked");
    let created = ok(
        &mcp,
        "git_mile.create",
        json!({"entity": "task", "title": "D"}),
    )
    .await;
    assert_eq!(created["state"], "state/todo");
    assert!(
        created.get("state_kind").is_none(),
        "no kind configured: {created}"
    );
    let before = refs(&sandbox, &repo);

    // A configuration upstream refuses to start with.
    std::fs::write(
        config.join("config.toml"),
        "[workflow]\nstates = [{ value = \"a\", kind = \"finished\" }]\n",
    )
    .unwrap();
    let error = tool_error(
        &mcp,
        "git_mile.comment",
        json!({"entity": "task", "id": b, "body": "x"}),
    )
    .await;
    assert_eq!(error["code"], "upstream_config");

    // Hooks upstream would run: refused, unless disabled.
    std::fs::write(config.join("config.toml"), "").unwrap();
    std::fs::create_dir_all(config.join("hooks")).unwrap();
    std::fs::write(config.join("hooks/pre-task-create"), "#!/bin/sh\nexit 1\n").unwrap();
    let error = tool_error(
        &mcp,
        "git_mile.create",
        json!({"entity": "task", "title": "E"}),
    )
    .await;
    assert_eq!(error["code"], "upstream_hooks");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("pre-task-create"),
        "{error}"
    );
    assert_eq!(refs(&sandbox, &repo), before, "nothing was written");
    // A comment has hooks of its own: none here.
    ok(
        &mcp,
        "git_mile.comment",
        json!({"entity": "task", "id": b, "body": "no hook for this"}),
    )
    .await;
    std::fs::write(
        config.join("config.toml"),
        "[hooks]\ndisabled = [\"pre-task-create\"]\n",
    )
    .unwrap();
    ok(
        &mcp,
        "git_mile.create",
        json!({"entity": "task", "title": "E"}),
    )
    .await;
    mcp.shutdown().await;

    // The CLI says the same, with the hint.
    std::fs::write(config.join("config.toml"), "").unwrap();
    let err = sandbox.mile_err(&repo, &["update", &b, "--state", "nope"], 2);
    assert!(err.contains("not in this repository's workflow"), "{err}");
    assert!(
        err.contains("hint: Give one of: state/todo (Todo)"),
        "{err}"
    );
}

#[tokio::test]
async fn a_read_only_server_writes_no_task() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("r");
    let t = sandbox.create(&repo, "task", "T", &[]);
    let before = refs(&sandbox, &repo);
    let mcp = sandbox.server(&repo, &["--read-only"]).await;
    for (tool, args) in [
        ("git_mile.create", json!({"entity": "task", "title": "t"})),
        (
            "git_mile.update",
            json!({"entity": "task", "id": t, "title": "u"}),
        ),
        (
            "git_mile.comment",
            json!({"entity": "task", "id": t, "body": "b"}),
        ),
    ] {
        let error = rpc_error(&mcp, tool, args).await;
        assert_eq!(error.code.0, -32601, "{error:?}");
        assert!(error.message.contains("read-only"), "{error:?}");
    }
    assert_eq!(show(&mcp, &t).await["title"], "T");
    mcp.shutdown().await;
    assert_eq!(refs(&sandbox, &repo), before);
}

#[test]
fn concurrent_writers_of_one_task_lose_nothing() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("r");
    let t = sandbox.create(&repo, "task", "Busy", &[]);
    let p = sandbox.create(&repo, "task", "Parent", &[]);
    let mut children = Vec::new();
    for n in 0..8 {
        let mut command = sandbox.command("git", &repo);
        command.args(["mile", "comment", &t, "--body", &format!("comment {n}")]);
        children.push(command.spawn().unwrap());
    }
    for n in 0..4 {
        let mut command = sandbox.command("git", &repo);
        command.args(["mile", "update", &t, "--add-label", &format!("l{n}")]);
        children.push(command.spawn().unwrap());
    }
    // A writer of the parent's ref too (a link writes in both).
    let mut command = sandbox.command("git", &repo);
    command.args(["mile", "update", &t, "--add-parent", &p]);
    children.push(command.spawn().unwrap());
    let mut command = sandbox.command("git", &repo);
    command.args(["mile", "comment", &p, "--body", "on the parent"]);
    children.push(command.spawn().unwrap());
    for mut child in children {
        assert!(child.wait().unwrap().success());
    }
    let shown = sandbox.mile_json(&repo, &["show", &t]);
    assert_eq!(shown["stats"]["comment_count"], 8);
    assert_eq!(shown["labels"], json!(["l0", "l1", "l2", "l3"]));
    assert_eq!(shown["parents"], json!([p]));
    let parent = sandbox.mile_json(&repo, &["show", &p]);
    assert_eq!(parent["children"], json!([t]));
    assert_eq!(parent["stats"]["comment_count"], 1);
    // One chain each, every event numbered one more than the one before it.
    let events = checked_events(&sandbox, &repo, &t);
    assert_eq!(events.len(), 1 + 8 + 4 + 1);
    checked_events(&sandbox, &repo, &p);
}

#[tokio::test]
async fn the_actor_is_resolved_as_upstream_resolves_it() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("r");
    // GIT_MILE_ACTOR_* first.
    let mcp = sandbox
        .server_with_env(
            &repo,
            &[],
            &[
                ("GIT_MILE_ACTOR_NAME", "Zed Upstream"),
                ("GIT_MILE_ACTOR_EMAIL", "zed@example.com"),
            ],
        )
        .await;
    let t = ok(
        &mcp,
        "git_mile.create",
        json!({"entity": "task", "title": "T"}),
    )
    .await;
    assert_eq!(t["author"], "Zed Upstream");
    let id = t["id"].as_str().unwrap().to_string();
    let events = checked_events(&sandbox, &repo, &id);
    assert_eq!(events[0]["actor"]["email"], "zed@example.com");
    mcp.shutdown().await;
    // A name without an email in the environment: git's user.name and user.email.
    let mcp = sandbox
        .server_with_env(&repo, &[], &[("GIT_AUTHOR_NAME", "Half")])
        .await;
    let c = ok(
        &mcp,
        "git_mile.comment",
        json!({"entity": "task", "id": id, "body": "b"}),
    )
    .await;
    assert_eq!(c["comments"][0]["author"], "Ann Example");
    mcp.shutdown().await;
    // None at all: nothing is written (upstream would write as `git-mile`).
    sandbox.git(&repo, &["config", "--unset", "user.name"]);
    sandbox.git(&repo, &["config", "--unset", "user.email"]);
    let before = refs(&sandbox, &repo);
    let mcp = sandbox.server(&repo, &[]).await;
    let error = tool_error(
        &mcp,
        "git_mile.update",
        json!({"entity": "task", "id": id, "title": "U"}),
    )
    .await;
    assert_eq!(error["code"], "no_identity");
    mcp.shutdown().await;
    assert_eq!(refs(&sandbox, &repo), before);
}

/// Ids of the tasks a listing (closed ones too) names.
async fn task_ids(mcp: &mcp_testkit::McpProcess) -> Vec<String> {
    let page = ok(
        mcp,
        "git_mile.list",
        json!({"entity": "task", "includeClosed": true, "limit": 200}),
    )
    .await;
    let mut ids: Vec<String> = page["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["id"].as_str().unwrap().to_string())
        .collect();
    ids.sort();
    ids
}

/// A running server sees every change other processes make to the task refs (it reads again
/// only the refs the kernel says changed, or all of them when it cannot tell).
#[tokio::test]
async fn a_running_server_sees_what_other_writers_do_to_tasks() {
    for env in [&[][..], &[("GIT_MILE_NO_INOTIFY", "1")][..]] {
        let sandbox = Sandbox::new();
        let repo = sandbox.repo("r");
        let a = sandbox.create(&repo, "task", "A", &[]);
        let mcp = sandbox.server_with_env(&repo, &[], env).await;
        assert_eq!(task_ids(&mcp).await, std::slice::from_ref(&a));
        // Another process writes: a new task, and a comment on the first.
        let b = sandbox.create(&repo, "task", "B", &[]);
        sandbox.mile_ok(&repo, &["comment", &a, "--body", "from elsewhere"]);
        let mut both = vec![a.clone(), b.clone()];
        both.sort();
        assert_eq!(task_ids(&mcp).await, both, "{env:?}");
        assert_eq!(show(&mcp, &a).await["stats"]["comment_count"], 1);
        // Packed, then changed loose again, then deleted.
        sandbox.git(&repo, &["pack-refs", "--all"]);
        assert_eq!(task_ids(&mcp).await, both);
        sandbox.mile_ok(&repo, &["update", &b, "--title", "B2"]);
        assert_eq!(show(&mcp, &b).await["title"], "B2");
        sandbox.git(
            &repo,
            &["update-ref", "-d", &format!("refs/git-mile/tasks/{b}")],
        );
        assert_eq!(task_ids(&mcp).await, std::slice::from_ref(&a), "{env:?}");
        // A ref of another namespace appears: named, and the tasks still listed.
        let tip = sandbox.git(&repo, &["rev-parse", &format!("refs/git-mile/tasks/{a}")]);
        sandbox.git(&repo, &["update-ref", "refs/git-mile/other/x", tip.trim()]);
        let page = ok(&mcp, "git_mile.list", json!({"entity": "task"})).await;
        assert_eq!(page["other_refs"][0]["prefix"], "refs/git-mile/other/");
        sandbox.mile_ok(&repo, &["comment", &a, "--body", "again"]);
        assert_eq!(show(&mcp, &a).await["stats"]["comment_count"], 2);
        mcp.shutdown().await;
    }
}
