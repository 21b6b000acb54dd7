//! Upstream git-mile's tasks, read-only: task refs made byte for byte as upstream's store
//! writes them (an empty tree; a commit whose author and committer are the actor and whose
//! message is `git-mile-event: <event-id>`, a blank line, and the event as pretty JSON),
//! written with `git mktree`, `git hash-object -w` and `git update-ref`, then read through
//! the CLI and the MCP server as a user runs them. Also the refs under `refs/git-mile/` this
//! version does not read, named by every listing.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // assertions in tests

use crate::support;

use std::path::Path;

use serde_json::{Value, json};
use support::{Sandbox, call_raw, ok, rpc_error};

/// An ordered JSON object, printed as serde_json's pretty printer prints upstream's structs
/// (fields in declaration order, two spaces of indentation).
pub(crate) enum J {
    Obj(Vec<(&'static str, J)>),
    V(Value),
}

pub(crate) fn pretty(j: &J, indent: usize) -> String {
    let pad = |n: usize| "  ".repeat(n);
    match j {
        J::Obj(fields) => {
            let inner: Vec<String> = fields
                .iter()
                .map(|(k, v)| format!("{}\"{k}\": {}", pad(indent + 1), pretty(v, indent + 1)))
                .collect();
            format!("{{\n{}\n{}}}", inner.join(",\n"), pad(indent))
        }
        J::V(Value::Array(items)) if items.is_empty() => "[]".into(),
        J::V(Value::Array(items)) => {
            let inner: Vec<String> = items
                .iter()
                .map(|v| format!("{}{v}", pad(indent + 1)))
                .collect();
            format!("[\n{}\n{}]", inner.join(",\n"), pad(indent))
        }
        J::V(v) => v.to_string(),
    }
}

pub(crate) const EMPTY_TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

pub(crate) const P: &str = "019a5b2c-1111-7000-8000-000000000001";
const K: &str = "019a5b2c-2222-7000-8000-000000000002";
const BAD_JSON: &str = "019a5b2c-3333-7000-8000-000000000003";
pub(crate) const BAD_SCHEMA: &str = "019a5b2c-4444-7000-8000-000000000004";
const COMMENT: &str = "019a5b2c-cccc-7000-8000-00000000000c";

struct Upstream<'a> {
    sandbox: &'a Sandbox,
    repo: &'a Path,
    seq: u64,
}

impl Upstream<'_> {
    /// Write an object with `git hash-object -w` from `content`; its id.
    fn object(&self, kind: &str, content: &str) -> String {
        let mut child = self
            .sandbox
            .command("git", self.repo)
            .args(["hash-object", "-t", kind, "-w", "--stdin"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write as _;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(content.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success());
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    }

    /// One event commit on `parents`, as upstream's `GitStore::append_event` writes it:
    /// `kind` is the event's `kind` object (its `type` first).
    fn event(
        &mut self,
        task: &str,
        parents: &[&str],
        actor: (&str, &str),
        lamport: u64,
        ts: &str,
        kind: J,
    ) -> String {
        self.seq += 1;
        let event_id = format!("019a5b2c-eeee-7000-8000-{:012x}", self.seq);
        let body = J::Obj(vec![
            ("schema", J::V(json!("git-mile-event@1"))),
            ("id", J::V(json!(event_id))),
            ("lamport", J::V(json!(lamport))),
            ("ts", J::V(json!(ts))),
            (
                "actor",
                J::Obj(vec![
                    ("name", J::V(json!(actor.0))),
                    ("email", J::V(json!(actor.1))),
                ]),
            ),
            ("task", J::V(json!(task))),
            ("kind", kind),
        ]);
        self.raw_commit(
            parents,
            actor,
            &format!("git-mile-event: {event_id}\n\n{}", pretty(&body, 0)),
        )
    }

    /// A commit with an empty tree and `message` exactly.
    fn raw_commit(&self, parents: &[&str], actor: (&str, &str), message: &str) -> String {
        let tree = self.sandbox.git(self.repo, &["mktree"]);
        assert_eq!(tree.trim(), EMPTY_TREE);
        let mut content = format!("tree {EMPTY_TREE}\n");
        for parent in parents {
            content.push_str(&format!("parent {parent}\n"));
        }
        let sig = format!(
            "{} <{}> {} +0000",
            actor.0,
            actor.1,
            1_762_600_000 + self.seq
        );
        content.push_str(&format!("author {sig}\ncommitter {sig}\n\n{message}"));
        self.object("commit", &content)
    }

    fn set_ref(&self, name: &str, commit: &str) {
        self.sandbox.git(self.repo, &["update-ref", name, commit]);
    }
}

fn kind(fields: Vec<(&'static str, J)>) -> J {
    J::Obj(fields)
}

fn v(value: Value) -> J {
    J::V(value)
}

const ALICE: (&str, &str) = ("alice", "alice@example.com");
const BOB: (&str, &str) = ("bob", "bob@example.com");

/// A repository holding, as upstream writes them: task P (in progress, two labels, one
/// assignee, a comment edited once, child K), task K (done; its title set on two branches
/// that were merged), a task whose event is not JSON, one of an unknown schema; and a ref
/// in a namespace nobody knows.
pub(crate) fn upstream_repo(sandbox: &Sandbox) -> std::path::PathBuf {
    let repo = sandbox.repo("r");
    let mut up = Upstream {
        sandbox,
        repo: &repo,
        seq: 0,
    };
    let p1 = up.event(
        P,
        &[],
        ALICE,
        1,
        "2025-11-08T10:00:00.123456789Z",
        kind(vec![
            ("type", v(json!("taskCreated"))),
            ("title", v(json!("Ship the importer"))),
            ("labels", v(json!(["type/feature", "area/cli"]))),
            ("assignees", v(json!(["alice"]))),
            ("description", v(json!("Read upstream refs."))),
            ("state", v(json!("state/in-progress"))),
            ("state_kind", v(json!("in_progress"))),
        ]),
    );
    let p2 = up.event(
        P,
        &[&p1],
        BOB,
        2,
        "2025-11-08T10:05:00Z",
        kind(vec![
            ("type", v(json!("commentAdded"))),
            ("comment_id", v(json!(COMMENT))),
            ("body_md", v(json!("first draft"))),
        ]),
    );
    let p3 = up.event(
        P,
        &[&p2],
        BOB,
        3,
        "2025-11-08T10:06:00Z",
        kind(vec![
            ("type", v(json!("commentUpdated"))),
            ("comment_id", v(json!(COMMENT))),
            ("body_md", v(json!("final words"))),
        ]),
    );
    let k1 = up.event(
        K,
        &[],
        ALICE,
        4,
        "2025-11-08T10:10:00Z",
        kind(vec![
            ("type", v(json!("taskCreated"))),
            ("title", v(json!("Write tests"))),
            ("labels", v(json!([]))),
            ("assignees", v(json!(["bob"]))),
            ("description", v(json!(null))),
            ("state", v(json!("state/todo"))),
            ("state_kind", v(json!("todo"))),
        ]),
    );
    let k2 = up.event(
        K,
        &[&k1],
        ALICE,
        5,
        "2025-11-08T10:10:00.5Z",
        kind(vec![
            ("type", v(json!("childLinked"))),
            ("parent", v(json!(P))),
            ("child", v(json!(K))),
        ]),
    );
    let p4 = up.event(
        P,
        &[&p3],
        ALICE,
        6,
        "2025-11-08T10:10:00.6Z",
        kind(vec![
            ("type", v(json!("childLinked"))),
            ("parent", v(json!(P))),
            ("child", v(json!(K))),
        ]),
    );
    up.set_ref(&format!("refs/git-mile/tasks/{P}"), &p4);
    // Two clones set K's title and state concurrently (same lamport): the later timestamp
    // wins whichever side of the merge it is on; the merge commit carries no event.
    let a = up.event(
        K,
        &[&k2],
        ALICE,
        7,
        "2025-11-08T11:00:00Z",
        kind(vec![
            ("type", v(json!("taskTitleSet"))),
            ("title", v(json!("Write the tests"))),
        ]),
    );
    let a2 = up.event(
        K,
        &[&a],
        ALICE,
        8,
        "2025-11-08T11:00:01Z",
        kind(vec![
            ("type", v(json!("taskStateSet"))),
            ("state", v(json!("state/done"))),
            ("state_kind", v(json!("done"))),
        ]),
    );
    let b = up.event(
        K,
        &[&k2],
        BOB,
        7,
        "2025-11-08T10:59:00Z",
        kind(vec![
            ("type", v(json!("taskTitleSet"))),
            ("title", v(json!("Tests, written by bob"))),
        ]),
    );
    let merge = up.raw_commit(&[&a2, &b], BOB, "Merge task refs");
    up.set_ref(&format!("refs/git-mile/tasks/{K}"), &merge);

    let bad = up.raw_commit(
        &[],
        ALICE,
        "git-mile-event: 019a5b2c-eeee-7000-8000-0000000000ff\n\n{\"schema\": \"git-mile-event@1\", oops",
    );
    up.set_ref(&format!("refs/git-mile/tasks/{BAD_JSON}"), &bad);
    let later = up.event(
        BAD_SCHEMA,
        &[],
        ALICE,
        1,
        "2025-11-08T12:00:00Z",
        kind(vec![("type", v(json!("taskStateCleared")))]),
    );
    // The same commit, its schema changed.
    let text = sandbox.git(&repo, &["cat-file", "commit", &later]);
    let other = up.object(
        "commit",
        &text.replace("git-mile-event@1", "git-mile-event@7"),
    );
    up.set_ref(&format!("refs/git-mile/tasks/{BAD_SCHEMA}"), &other);

    up.set_ref("refs/git-mile/somethingelse/x1", &p1);
    up.set_ref("refs/git-mile/somethingelse/x2", &p1);
    repo
}

fn ids(page: &Value) -> Vec<String> {
    page["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["id"].as_str().unwrap().to_string())
        .collect()
}

fn stderr_of(sandbox: &Sandbox, repo: &Path, args: &[&str]) -> String {
    String::from_utf8_lossy(&sandbox.mile(repo, args).stderr).into_owned()
}

#[test]
fn the_cli_lists_and_shows_upstream_tasks() {
    let sandbox = Sandbox::new();
    let repo = upstream_repo(&sandbox);

    // Open tasks by default: K is done, hence closed.
    let page = sandbox.mile_json(&repo, &["list", "--entity", "task"]);
    assert_eq!(ids(&page), [P]);
    let item = &page["items"][0];
    assert_eq!(item["status"], "open");
    assert_eq!(item["state"], "state/in-progress");
    assert_eq!(item["state_kind"], "in_progress");
    assert_eq!(item["labels"], json!(["area/cli", "type/feature"]));
    assert_eq!(item["assignees"], json!(["alice"]));
    assert_eq!(item["children"], json!([K]));
    assert_eq!(item["stats"], json!({"comment_count": 1}));
    // No parent: no `parents` (a task's facts are absent when it has none).
    assert!(item.get("parents").is_none(), "{item}");
    // The damaged tasks are named, not dropped in silence; so is the unknown namespace.
    assert_eq!(page["unreadable"], json!([BAD_JSON, BAD_SCHEMA]));
    let other = page["other_refs"].as_array().unwrap();
    assert_eq!(other.len(), 1, "{page}");
    assert_eq!(other[0]["prefix"], "refs/git-mile/somethingelse/");
    assert_eq!(other[0]["count"], 2);
    let err = stderr_of(&sandbox, &repo, &["list", "--entity", "task"]);
    assert!(
        err.contains("refs/git-mile/somethingelse/ holds 2 refs this version does not read"),
        "{err}"
    );

    let all = sandbox.mile_json(&repo, &["list", "--entity", "task", "--include-closed"]);
    assert_eq!(ids(&all), [K, P], "updated:desc");

    // Filters on the task fields.
    let filtered = |filter: &str| {
        ids(&sandbox.mile_json(&repo, &["list", "--entity", "task", "--filter", filter]))
    };
    assert_eq!(filtered("state == \"state/in-progress\""), [P]);
    assert_eq!(
        filtered("state_kind == \"done\""),
        [K],
        "decides the status"
    );
    assert_eq!(filtered("status == \"closed\""), [K]);
    assert_eq!(filtered("assignees contains \"alice\""), [P]);
    assert_eq!(
        filtered("assignees contains \"bob\""),
        Vec::<String>::new(),
        "closed"
    );
    assert_eq!(
        filtered(&format!(
            "parents contains \"{P}\" and status in [\"open\", \"closed\"]"
        )),
        [K]
    );
    assert_eq!(
        filtered("labels contains \"area/cli\" and has_comments"),
        [P]
    );
    // Type errors name the task fields.
    let err = sandbox.mile_err(
        &repo,
        &["list", "--entity", "task", "--filter", "milestone == null"],
        2,
    );
    assert!(
        err.contains("state_kind") && err.contains("assignees"),
        "{err}"
    );
    // Sorting as for the other entities.
    let sorted = sandbox.mile_json(
        &repo,
        &[
            "list",
            "--entity",
            "task",
            "--include-closed",
            "--sort",
            "title",
        ],
    );
    assert_eq!(ids(&sorted), [P, K]);

    // Show by prefix: the whole task.
    let p = sandbox.mile_json(&repo, &["show", &P[..13]]);
    assert_eq!(p["kind"], "task");
    assert_eq!(p["id"], P);
    assert_eq!(p["title"], "Ship the importer");
    assert_eq!(p["description"], "Read upstream refs.");
    assert_eq!(p["author"], "alice");
    assert_eq!(p["created"], "2025-11-08T10:00:00.123456789Z");
    assert_eq!(p["updated"], "2025-11-08T10:10:00.600Z");
    assert!(p.get("parents").is_none(), "absent when none: {p}");
    assert_eq!(p["children"], json!([K]));
    let comment = &p["comments"][0];
    assert_eq!(comment["id"], COMMENT);
    assert_eq!(comment["author"], "bob");
    assert_eq!(comment["body"], "final words");
    assert_eq!(comment["ts"], "2025-11-08T10:05:00Z");
    assert_eq!(comment["edits"], 1);
    assert_eq!(comment["edited"], "2025-11-08T10:06:00Z");
    assert_eq!(p["stats"], json!({"comment_count": 1}));

    // By full id: the merge replayed by (lamport, time, id).
    let k = sandbox.mile_json(&repo, &["show", K]);
    assert_eq!(k["title"], "Write the tests");
    assert_eq!(k["status"], "closed");
    assert_eq!(k["state"], "state/done");
    assert_eq!(k["state_kind"], "done");
    assert_eq!(k["parents"], json!([P]));
    assert_eq!(k["assignees"], json!(["bob"]));
    assert_eq!(k["description"], "");
    let text = sandbox.mile_ok(&repo, &["show", K]);
    assert!(
        text.starts_with(&format!("task {K}\nWrite the tests  [closed]")),
        "{text}"
    );
    let text = sandbox.mile_ok(&repo, &["show", P]);
    assert!(text.contains("(edited 1 time,"), "{text}");

    // A damaged task is said to be so; an unknown id names the refs not read.
    let err = sandbox.mile_err(&repo, &["show", BAD_JSON], 1);
    assert!(
        err.contains("cannot be read") && err.contains("does not parse"),
        "{err}"
    );
    let err = sandbox.mile_err(&repo, &["show", BAD_SCHEMA], 1);
    assert!(err.contains("git-mile-event@7"), "{err}");
    let err = sandbox.mile_err(&repo, &["show", "abcdef12"], 1);
    assert!(
        err.contains("issue, milestone or task `abcdef12` not found")
            && err.contains("refs/git-mile/somethingelse/"),
        "{err}"
    );

    // A task has no status of its own to open or close: its state makes it.
    let err = sandbox.mile_err(&repo, &["close", P], 2);
    assert!(err.contains("--state"), "{err}");
    // A task holding an event of a later schema is not written to: its ref stays as it is.
    let tip = sandbox.git(
        &repo,
        &["rev-parse", &format!("refs/git-mile/tasks/{BAD_SCHEMA}")],
    );
    let err = sandbox.mile_err(&repo, &["comment", BAD_SCHEMA, "--body", "hi"], 1);
    assert!(err.contains("cannot be read by this version"), "{err}");
    assert!(err.contains("git-mile-event@7"), "{err}");
    assert!(err.contains("hint: "), "{err}");
    let after = sandbox.git(
        &repo,
        &["rev-parse", &format!("refs/git-mile/tasks/{BAD_SCHEMA}")],
    );
    assert_eq!(after, tip);
}

#[test]
fn issue_listings_name_the_refs_not_read() {
    let sandbox = Sandbox::new();
    let repo = upstream_repo(&sandbox);
    let issue = sandbox.create(&repo, "issue", "Ours", &[]);
    let page = sandbox.mile_json(&repo, &["list"]);
    assert_eq!(ids(&page), [issue]);
    assert_eq!(
        page["other_refs"][0]["prefix"],
        "refs/git-mile/somethingelse/"
    );
    let err = stderr_of(&sandbox, &repo, &["list", "--entity", "milestone"]);
    assert!(err.contains("refs/git-mile/somethingelse/"), "{err}");

    // Nothing to say: no field, no line.
    let plain = sandbox.repo("plain");
    sandbox.create(&plain, "issue", "Ours", &[]);
    let page = sandbox.mile_json(&plain, &["list"]);
    assert!(page.get("other_refs").is_none(), "{page}");
    assert!(stderr_of(&sandbox, &plain, &["list"]).is_empty());
    let page = sandbox.mile_json(&plain, &["list", "--entity", "task"]);
    assert_eq!(page["items"], json!([]), "{page}");
    assert!(page.get("other_refs").is_none(), "{page}");
    // The states a first task may take: upstream's built-in workflow, no task in any.
    let states: Vec<&Value> = page["states"].as_array().unwrap().iter().collect();
    assert_eq!(states.len(), 3, "{page}");
    assert!(states.iter().all(|s| s["tasks"] == 0), "{page}");

    // A directory no ref may be named after is reported, and breaks nothing.
    let odd = repo.join(".git/refs/git-mile/bad name");
    std::fs::create_dir_all(&odd).unwrap();
    let tip = sandbox.git(&repo, &["rev-parse", &format!("refs/git-mile/tasks/{P}")]);
    std::fs::write(odd.join("x"), tip).unwrap();
    let page = sandbox.mile_json(&repo, &["list", "--entity", "task", "--include-closed"]);
    assert_eq!(ids(&page), [K, P]);
    let prefixes: Vec<&str> = page["other_refs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["prefix"].as_str().unwrap())
        .collect();
    assert_eq!(
        prefixes,
        ["refs/git-mile/bad name/", "refs/git-mile/somethingelse/"],
        "{page}"
    );
    std::fs::remove_dir_all(&odd).unwrap();

    // Packed refs are found too (`git pack-refs` removes the loose files).
    sandbox.git(&repo, &["pack-refs", "--all"]);
    let page = sandbox.mile_json(&repo, &["list", "--entity", "task", "--include-closed"]);
    assert_eq!(ids(&page), [K, P]);
    assert_eq!(page["other_refs"][0]["count"], 2);
}

#[tokio::test]
async fn the_server_reads_tasks_and_leaves_unreadable_ones_as_they_are() {
    let sandbox = Sandbox::new();
    let repo = upstream_repo(&sandbox);
    let mcp = sandbox.server(&repo, &[]).await;

    let instructions = mcp.server_info().instructions.clone().unwrap_or_default();
    assert!(
        instructions.contains("4 task(s) of upstream git-mile")
            && instructions.contains("refs/git-mile/somethingelse/ (2 ref(s)"),
        "{instructions}"
    );

    let page = ok(
        &mcp,
        "git_mile.list",
        json!({"entity": "task", "filter": "assignees contains \"bob\"", "includeClosed": true}),
    )
    .await;
    assert_eq!(ids(&page), [K]);
    assert_eq!(page["unreadable"], json!([BAD_JSON, BAD_SCHEMA]));
    assert_eq!(page["other_refs"][0]["count"], 2);

    // Pages and cursors as for the other entities.
    let first = ok(
        &mcp,
        "git_mile.list",
        json!({"entity": "task", "includeClosed": true, "limit": 1}),
    )
    .await;
    assert_eq!(ids(&first), [K]);
    let cursor = first["nextCursor"].as_str().unwrap();
    let second = ok(
        &mcp,
        "git_mile.list",
        json!({"entity": "task", "includeClosed": true, "limit": 1, "cursor": cursor}),
    )
    .await;
    assert_eq!(ids(&second), [P]);
    assert_eq!(second["nextCursor"], Value::Null);

    let shown = ok(
        &mcp,
        "git_mile.show",
        json!({"entity": "task", "id": &P[..13]}),
    )
    .await;
    assert_eq!(shown["comments"][0]["body"], "final words");
    assert_eq!(shown["labels"], json!(["area/cli", "type/feature"]));

    let err = rpc_error(
        &mcp,
        "git_mile.list",
        json!({"entity": "task", "filter": "open_issues > 1"}),
    )
    .await;
    assert_eq!(err.code.0, -32602);
    assert!(err.message.contains("state_kind"), "{}", err.message);

    let issues = ok(&mcp, "git_mile.list", json!({"entity": "issue"})).await;
    assert_eq!(issues["items"], json!([]));
    assert_eq!(
        issues["other_refs"][0]["prefix"],
        "refs/git-mile/somethingelse/"
    );

    // Unreadable and unknown tasks.
    let result = call_raw(
        &mcp,
        "git_mile.show",
        json!({"entity": "task", "id": "ffffffff"}),
    )
    .await
    .unwrap();
    assert_eq!(support::error_object(&result)["code"], "not_found");
    let err = rpc_error(
        &mcp,
        "git_mile.show",
        json!({"entity": "task", "id": BAD_JSON}),
    )
    .await;
    assert_eq!(err.code.0, -32001);

    // A task holding an event of a later schema is not written to (a tool-level
    // `newer_event`, which says so): its ref is not touched.
    let tip = sandbox.git(
        &repo,
        &["rev-parse", &format!("refs/git-mile/tasks/{BAD_SCHEMA}")],
    );
    for (tool, args) in [
        (
            "git_mile.update",
            json!({"entity": "task", "id": BAD_SCHEMA, "title": "t"}),
        ),
        (
            "git_mile.comment",
            json!({"entity": "task", "id": BAD_SCHEMA, "body": "b"}),
        ),
    ] {
        let error = support::tool_error(&mcp, tool, args).await;
        assert_eq!(error["code"], "newer_event", "{tool}: {error}");
        assert!(
            error["message"]
                .as_str()
                .unwrap()
                .contains("git-mile-event@7"),
            "{error}"
        );
        assert!(
            error["hint"].as_str().unwrap().contains("later upstream"),
            "{error}"
        );
    }
    let after = sandbox.git(
        &repo,
        &["rev-parse", &format!("refs/git-mile/tasks/{BAD_SCHEMA}")],
    );
    assert_eq!(after, tip);
    // Every tool takes tasks.
    for tool in mcp.tools().await {
        let entity = tool.input_schema["properties"]["entity"]["enum"].clone();
        assert!(
            entity.as_array().unwrap().contains(&json!("task")),
            "{}",
            tool.name
        );
    }
    // The task ref P was not touched.
    let tip = sandbox.git(&repo, &["rev-parse", &format!("refs/git-mile/tasks/{P}")]);
    let count = sandbox.git(&repo, &["rev-list", "--count", tip.trim()]);
    assert_eq!(count.trim(), "4");
}

/// A task made of one `taskCreated` of `title`, `labels` and `description`, and a comment of
/// `body`; its ref set.
fn one_task(up: &mut Upstream<'_>, id: &str, title: &str, labels: &[&str], body: &str) -> String {
    let created = up.event(
        id,
        &[],
        ALICE,
        1,
        "2025-11-08T10:00:00Z",
        kind(vec![
            ("type", v(json!("taskCreated"))),
            ("title", v(json!(title))),
            ("labels", v(json!(labels))),
            ("assignees", v(json!(["al\u{1b}[1mice"]))),
            ("description", v(json!(body))),
            ("state", v(json!("state/\u{7}todo"))),
            ("state_kind", v(json!("todo"))),
        ]),
    );
    let tip = up.event(
        id,
        &[&created],
        BOB,
        2,
        "2025-11-08T10:01:00Z",
        kind(vec![
            ("type", v(json!("commentAdded"))),
            ("comment_id", v(json!(COMMENT))),
            ("body_md", v(json!(body))),
        ]),
    );
    up.set_ref(&format!("refs/git-mile/tasks/{id}"), &tip);
    tip
}

/// Whether `text` holds a character a terminal acts on (ESC, CR, NUL, BEL, a bidi control).
fn has_controls(text: &str) -> bool {
    text.chars()
        .any(|c| (c.is_control() && c != '\n' && c != '\t') || c == '\u{202e}')
}

#[test]
fn what_a_task_ref_holds_reaches_a_terminal_escaped_and_a_listing_bounded() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("hostile");
    let mut up = Upstream {
        sandbox: &sandbox,
        repo: &repo,
        seq: 0,
    };
    let evil = "ctl\u{1b}[2J\r\nInjected line\u{0}\u{202e}";
    let huge = "T".repeat(100_000);
    let long_label = "a".repeat(3000);
    one_task(
        &mut up,
        P,
        evil,
        &["\u{1b}]0;pwned\u{7}"],
        "x\u{0}y\u{1b}[31mRED\r",
    );
    one_task(&mut up, K, &huge, &[&long_label, "ok"], "fine");

    // The terminal: nothing it acts on, every field on its line, long ones cut.
    let text = sandbox.mile_ok(&repo, &["list", "--entity", "task"]);
    assert!(!has_controls(&text), "{text:?}");
    // A line a task, then the states (the one the tasks are in escaped too).
    assert_eq!(text.lines().count(), 3, "{text:?}");
    assert!(
        text.lines()
            .last()
            .unwrap()
            .ends_with("state/\\u{7}todo (todo, not in the workflow): 2 tasks"),
        "{text:?}"
    );
    assert!(
        text.contains("ctl\\u{1b}[2J\\u{d}\\u{a}Injected line\\u{0}\\u{202e}"),
        "{text:?}"
    );
    assert!(text.contains("\\u{1b}]0;pwned\\u{7}"), "{text:?}");
    assert!(text.contains("@al\\u{1b}[1mice"), "{text:?}");
    assert!(text.len() < 2_000, "{}", text.len());
    for id in [P, K] {
        let shown = sandbox.mile_ok(&repo, &["show", id]);
        assert!(!has_controls(&shown), "{shown:?}");
        assert!(shown.len() < 2_000, "{}", shown.len());
    }
    let shown = sandbox.mile_ok(&repo, &["show", P]);
    assert!(shown.contains("x\\u{0}y\\u{1b}[31mRED\\u{d}"), "{shown:?}");

    // JSON is JSON: the text as written, but a listing's fields bounded (show gives them whole).
    let page = sandbox.mile_json(&repo, &["list", "--entity", "task", "--sort", "id"]);
    assert_eq!(page["items"][0]["title"], evil);
    let item = &page["items"][1];
    let title = item["title"].as_str().unwrap();
    assert_eq!(title.chars().count(), 500);
    assert!(title.ends_with('…'));
    let label = item["labels"][0].as_str().unwrap();
    assert_eq!(label.chars().count(), 100);
    assert!(page.to_string().len() < 5_000);
    let whole = sandbox.mile_json(&repo, &["show", K]);
    assert_eq!(whole["title"].as_str().unwrap().len(), 100_000);
    assert_eq!(whole["labels"][0].as_str().unwrap().len(), 3000);
}

#[tokio::test]
async fn many_tasks_of_one_prefix_and_many_namespaces_stay_short() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("many");
    let mut up = Upstream {
        sandbox: &sandbox,
        repo: &repo,
        seq: 0,
    };
    // UUIDv7 ids of one millisecond: their first 8 characters (and more) are shared.
    let ids: Vec<String> = (0..14)
        .map(|n| format!("019a5b2c-1111-7000-8000-{:012x}", n * 17))
        .collect();
    let mut tip = String::new();
    for id in &ids {
        tip = one_task(&mut up, id, "t", &[], "b");
    }

    // Typing back the prefix a listing prints names that task.
    let text = sandbox.mile_ok(&repo, &["list", "--entity", "task", "--limit", "200"]);
    let (states, rows): (Vec<&str>, Vec<&str>) =
        text.lines().partition(|l| l.starts_with("states: "));
    assert_eq!((rows.len(), states.len()), (ids.len(), 1), "{text}");
    for line in rows {
        let prefix = line.split_whitespace().next().unwrap();
        assert!(prefix.len() >= 8, "{line}");
        let shown = sandbox.mile_json(&repo, &["show", prefix]);
        assert!(shown["id"].as_str().unwrap().starts_with(prefix), "{line}");
    }

    // An ambiguous prefix names at most 10 candidates, and how many more.
    let err = sandbox.mile_err(&repo, &["show", "019a5b2c"], 1);
    assert!(err.contains("matches 14 entities"), "{err}");
    assert!(err.contains(" and 4 more)"), "{err}");
    assert!(!err.contains(&ids[13]), "{err}");

    // Namespaces past the 20 a page names: the groups under tasks/ are kept, and a last
    // group counts those left out.
    let refs = repo.join(".git/refs/git-mile");
    for n in 0..25 {
        let dir = refs.join(format!("ns{n:02}"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("x"), format!("{tip}\n")).unwrap();
    }
    std::fs::write(refs.join("tasks/not-a-task"), format!("{tip}\n")).unwrap();

    let mcp = sandbox.server(&repo, &[]).await;
    let instructions = mcp.server_info().instructions.clone().unwrap_or_default();
    assert!(
        instructions.contains("14 task(s) of upstream git-mile"),
        "{instructions}"
    );
    let result = call_raw(
        &mcp,
        "git_mile.show",
        json!({"entity": "task", "id": "019a5b2c"}),
    )
    .await
    .unwrap();
    let err = support::error_object(&result);
    assert_eq!(err["code"], "ambiguous_id");
    let message = err["message"].as_str().unwrap();
    assert!(message.contains("is the start of 14 task ids"), "{message}");
    assert!(message.contains(" and 4 more)"), "{message}");
    assert!(message.len() < 600, "{message}");

    let page = ok(&mcp, "git_mile.list", json!({"entity": "issue"})).await;
    let groups = page["other_refs"].as_array().unwrap();
    assert_eq!(groups.len(), 20, "{page}");
    assert!(
        groups
            .iter()
            .any(|g| g["prefix"] == "refs/git-mile/tasks/" && g["count"] == 1),
        "{page}"
    );
    let last = groups.last().unwrap();
    assert_eq!(last["prefix"], "refs/git-mile/");
    assert_eq!(last["count"], 7);
    assert!(
        last["what"].as_str().unwrap().starts_with("7 more groups"),
        "{page}"
    );
}

#[test]
fn listings_of_issues_read_no_task() {
    let sandbox = Sandbox::new();
    let repo = upstream_repo(&sandbox);
    // `-vv` logs each task ref read, with how many commits were opened.
    let read = |args: &[&str]| {
        let mut all = vec!["-vv"];
        all.extend_from_slice(args);
        stderr_of(&sandbox, &repo, &all)
    };
    assert!(!read(&["list"]).contains("task commits read"));
    assert!(!read(&["list", "--entity", "milestone"]).contains("task commits read"));
    let err = read(&["list", "--entity", "task"]);
    assert_eq!(err.matches("task commits read").count(), 4, "{err}");
    // Show reads the task it names and, to name them, its parents and children (K), no other.
    let err = read(&["show", &P[..13]]);
    assert_eq!(err.matches("task commits read").count(), 2, "{err}");
}
