//! Upstream git-mile's own data: the task refs its binary wrote, and what it answered about
//! them, recorded by `tests/fixtures/upstream-tasks/record.sh` (every kind of task change on
//! one clone; two clones changing the same task at once, pushing and pulling). Each stage's
//! refs are fetched from their bundle into a fresh repository, and ours must read every task
//! as upstream did, field by field, through the CLI and the MCP server.
//!
//! When upstream's binary is on this machine (`GIT_MILE_UPSTREAM_BIN`, or where record.sh's
//! header installs it), record.sh is also run live into a temporary directory and the same
//! checks are made against what upstream answers there.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // assertions in tests

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde_json::{Value, json};

use crate::support::{Sandbox, ok};

pub const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/upstream-tasks");

/// Upstream's binary, when this machine has one: `GIT_MILE_UPSTREAM_BIN` (which must then
/// name a file), else `~/.cache/git-mile-upstream-50731c6/bin/git-mile` if it exists.
pub fn upstream_bin() -> Option<PathBuf> {
    if let Some(bin) = std::env::var_os("GIT_MILE_UPSTREAM_BIN").filter(|b| !b.is_empty()) {
        let bin = PathBuf::from(bin);
        assert!(
            bin.is_file(),
            "GIT_MILE_UPSTREAM_BIN names no file: {}",
            bin.display()
        );
        return Some(bin);
    }
    let home = std::env::var_os("HOME")?;
    let bin = Path::new(&home).join(".cache/git-mile-upstream-50731c6/bin/git-mile");
    bin.is_file().then_some(bin)
}

/// One recording of record.sh: its bundles, answers and scenario.
pub struct Recording {
    pub dir: PathBuf,
    pub scenario: Value,
}

impl Recording {
    /// The recording committed beside record.sh.
    pub fn committed() -> Self {
        Self::at(PathBuf::from(FIXTURES))
    }

    /// record.sh run now with upstream's binary `bin`, into the sandbox.
    pub fn live(sandbox: &Sandbox, bin: &Path) -> Self {
        let dir = sandbox.path("recorded");
        let mut command = sandbox.command("bash", sandbox.dir.path());
        command
            .arg(format!("{FIXTURES}/record.sh"))
            .arg(&dir)
            .env("GIT_MILE_UPSTREAM_BIN", bin);
        // python3 may be a pyenv shim, which finds its interpreter through these.
        for var in ["PYENV_ROOT", "PYENV_VERSION"] {
            if let Some(value) = std::env::var_os(var) {
                command.env(var, value);
            }
        }
        let output = command.output().expect("bash runs");
        assert!(
            output.status.success(),
            "record.sh failed: {}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        Self::at(dir)
    }

    fn at(dir: PathBuf) -> Self {
        let text = std::fs::read_to_string(dir.join("scenario.json")).expect("scenario.json");
        Self {
            scenario: serde_json::from_str(&text).expect("scenario.json is JSON"),
            dir,
        }
    }

    pub fn stages(&self) -> Vec<String> {
        self.scenario["stages"]
            .as_array()
            .expect("stages")
            .iter()
            .map(|s| s.as_str().unwrap().to_string())
            .collect()
    }

    /// Upstream's answers at `stage`: `{"tasks": {id: {"show", "comments"}}, "ls": [...]}`.
    pub fn answers(&self, stage: &str) -> Value {
        let text = std::fs::read_to_string(self.dir.join(format!("{stage}.json")))
            .unwrap_or_else(|e| panic!("{stage}.json: {e}"));
        serde_json::from_str(&text).expect("answers are JSON")
    }

    pub fn bundle(&self, stage: &str) -> PathBuf {
        self.dir.join(format!("{stage}.bundle"))
    }

    /// The id of the task of role `name` in the scenario's `group` (`solo`, `shared`).
    pub fn role(&self, group: &str, name: &str) -> String {
        self.scenario[group][name]
            .as_str()
            .unwrap_or_else(|| panic!("no {group}.{name} in scenario.json"))
            .to_string()
    }
}

/// The refs of `bundle` fetched into `repo` as they were in the clone that made it.
pub fn load(sandbox: &Sandbox, repo: &Path, bundle: &Path) {
    sandbox.git(
        repo,
        &[
            "fetch",
            "-q",
            bundle.to_str().unwrap(),
            "refs/git-mile/*:refs/git-mile/*",
        ],
    );
}

fn time(value: &Value) -> Option<DateTime<Utc>> {
    value.as_str().map(|s| {
        DateTime::parse_from_rfc3339(s)
            .unwrap_or_else(|e| panic!("not RFC 3339 ({e}): {s}"))
            .with_timezone(&Utc)
    })
}

fn set(value: &Value) -> BTreeSet<String> {
    value
        .as_array()
        .map(|a| a.iter().map(|v| v.as_str().unwrap().to_string()).collect())
        .unwrap_or_default()
}

/// Where our view of a task (`git mile show --json`, `git_mile.show`) differs from upstream's
/// answers about it (`{"show": its snapshot, "comments": list_comments}`): one line a field.
pub fn disagreements(ours: &Value, theirs: &Value) -> Vec<String> {
    let snapshot = &theirs["show"];
    let mut out = Vec::new();
    let mut same = |field: &str, a: Value, b: Value| {
        if a != b {
            out.push(format!("{field}: ours {a}, upstream's {b}"));
        }
    };
    same("id", ours["id"].clone(), snapshot["id"].clone());
    for field in ["title", "description", "state", "state_kind"] {
        same(field, ours[field].clone(), snapshot[field].clone());
    }
    for field in ["labels", "assignees", "parents", "children"] {
        same(
            field,
            json!(set(&ours[field])),
            json!(set(&snapshot[field])),
        );
    }
    // Upstream's `relates` (empty kinds dropped), our `relations` (absent when none).
    let relations = |v: &Value| -> Vec<(String, BTreeSet<String>)> {
        v.as_object()
            .map(|o| o.iter().map(|(k, ids)| (k.clone(), set(ids))).collect())
            .unwrap_or_default()
    };
    same(
        "relations",
        json!(relations(&ours["relations"])),
        json!(relations(&snapshot["relates"])),
    );
    same(
        "updated",
        json!(time(&ours["updated"])),
        json!(time(&snapshot["updated_rfc3339"])),
    );
    // Comments: upstream lists them in order, as our view does.
    let theirs_comments: Vec<Value> = theirs["comments"]
        .as_array()
        .expect("comments")
        .iter()
        .map(|c| {
            json!({
                "id": c["comment_id"],
                "author": c["actor"]["name"],
                "body": c["body_md"],
                "ts": time(&c["created_at"]),
                "edited": time(&c["updated_at"]),
            })
        })
        .collect();
    let ours_comments: Vec<Value> = ours["comments"]
        .as_array()
        .expect("our comments")
        .iter()
        .map(|c| {
            json!({
                "id": c["id"],
                "author": c["author"],
                "body": c["body"],
                "ts": time(&c["ts"]),
                "edited": time(&c["edited"]),
            })
        })
        .collect();
    same("comments", json!(ours_comments), json!(theirs_comments));
    same(
        "stats.comment_count",
        ours["stats"]["comment_count"].clone(),
        json!(theirs_comments.len()),
    );
    out
}

fn ids(page: &Value) -> Vec<String> {
    page["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|i| i["id"].as_str().unwrap().to_string())
        .collect()
}

/// Upstream's `ls` (every task: its CLI filters nothing by default): the ids in its order.
fn upstream_ls(answers: &Value) -> Vec<String> {
    answers["ls"]
        .as_array()
        .expect("ls")
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_string())
        .collect()
}

/// Our CLI reads every task of `repo` as upstream answered in `answers` (`stage` names them
/// in failures).
pub fn assert_cli_agrees(sandbox: &Sandbox, repo: &Path, answers: &Value, stage: &str) {
    let tasks = answers["tasks"].as_object().expect("tasks");
    assert!(!tasks.is_empty(), "{stage}: no task recorded");
    let mut failures = Vec::new();
    for (id, theirs) in tasks {
        let ours = sandbox.mile_json(repo, &["show", id]);
        assert_eq!(ours["kind"], "task", "{stage} {id}: {ours}");
        for line in disagreements(&ours, theirs) {
            failures.push(format!("{stage} task {id}: {line}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let listed = sandbox.mile_json(
        repo,
        &[
            "list",
            "--entity",
            "task",
            "--include-closed",
            "--limit",
            "200",
        ],
    );
    let expected: BTreeSet<String> = tasks.keys().cloned().collect();
    let recorded: BTreeSet<String> = upstream_ls(answers).into_iter().collect();
    assert_eq!(recorded, expected, "{stage}: upstream's ls");
    // Upstream lists the most recently updated first, as our default sort does.
    assert_eq!(
        ids(&listed),
        upstream_ls(answers),
        "{stage}: the order of ls"
    );
}

/// Our MCP server reads every task of `repo` as upstream answered in `answers`.
pub async fn assert_mcp_agrees(sandbox: &Sandbox, repo: &Path, answers: &Value, stage: &str) {
    let tasks = answers["tasks"].as_object().expect("tasks");
    let mcp = sandbox.server(repo, &[]).await;
    let mut failures = Vec::new();
    for (id, theirs) in tasks {
        let ours = ok(&mcp, "git_mile.show", json!({"entity": "task", "id": id})).await;
        for line in disagreements(&ours, theirs) {
            failures.push(format!("{stage} task {id} (MCP): {line}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let page = ok(
        &mcp,
        "git_mile.list",
        json!({"entity": "task", "includeClosed": true, "limit": 200}),
    )
    .await;
    let listed: BTreeSet<String> = ids(&page).into_iter().collect();
    assert_eq!(
        listed,
        tasks.keys().cloned().collect::<BTreeSet<_>>(),
        "{stage}: git_mile.list"
    );
    // Open tasks: those upstream's own MCP server lists by default (it hides `done`).
    let open = ok(
        &mcp,
        "git_mile.list",
        json!({"entity": "task", "limit": 200}),
    )
    .await;
    let open: BTreeSet<String> = ids(&open).into_iter().collect();
    let not_done: BTreeSet<String> = tasks
        .iter()
        .filter(|(_, t)| t["show"]["state_kind"] != "done")
        .map(|(id, _)| id.clone())
        .collect();
    assert_eq!(open, not_done, "{stage}: open tasks");
}

/// Every stage of `recording`, each in a fresh repository, through the CLI and the server.
async fn every_stage_agrees(sandbox: &Sandbox, recording: &Recording, tag: &str) {
    for stage in recording.stages() {
        let repo = sandbox.repo(&format!("{tag}-{stage}"));
        load(sandbox, &repo, &recording.bundle(&stage));
        let answers = recording.answers(&stage);
        assert_cli_agrees(sandbox, &repo, &answers, &stage);
        assert_mcp_agrees(sandbox, &repo, &answers, &stage).await;
    }
}

#[tokio::test]
async fn every_recorded_task_reads_as_upstream_answered() {
    let sandbox = Sandbox::new();
    let recording = Recording::committed();
    every_stage_agrees(&sandbox, &recording, "committed").await;

    // What the recording holds, so that a recording that lost a kind of change fails here.
    let solo = recording.answers("solo");
    let parent = &solo["tasks"][recording.role("solo", "parent")];
    let other = recording.role("solo", "other");
    let child = recording.role("solo", "child");
    assert_eq!(parent["show"]["title"], "Ship the task importer");
    assert_eq!(parent["show"]["state_kind"], "in_progress");
    assert_eq!(parent["show"]["labels"], json!(["area/cli", "type/bug"]));
    assert_eq!(parent["show"]["assignees"], json!(["bob"]));
    assert_eq!(parent["show"]["relates"], json!({"blocks": [other]}));
    assert_eq!(parent["show"]["children"], json!([]));
    let comments = parent["comments"].as_array().unwrap();
    assert_eq!(comments.len(), 2);
    assert_eq!(comments[0]["body_md"], "final words");
    assert!(comments[0]["updated_at"].is_string());
    let child = &solo["tasks"][child];
    assert_eq!(child["show"]["state_kind"], "done");
    assert_eq!(child["show"]["parents"], json!([other]));
    assert_eq!(solo["tasks"][&other]["show"]["state"], Value::Null);

    let t = recording.role("shared", "t");
    let merged = &recording.answers("b-merged")["tasks"][&t];
    assert_eq!(merged["comments"].as_array().unwrap().len(), 2);
    assert_eq!(
        merged["show"]["parents"],
        json!([recording.role("shared", "p2")])
    );
    assert_eq!(merged["show"]["state_kind"], "done");
    assert_eq!(
        recording.answers("a-final")["tasks"],
        recording.answers("b-merged")["tasks"]
    );
}

#[tokio::test]
async fn a_live_recording_reads_as_upstream_answered() {
    let Some(bin) = upstream_bin() else {
        eprintln!("upstream git-mile is not on this machine: the live recording is not made");
        return;
    };
    let sandbox = Sandbox::new();
    let recording = Recording::live(&sandbox, &bin);
    every_stage_agrees(&sandbox, &recording, "live").await;
}
