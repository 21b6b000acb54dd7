//! Helpers of the health tests (`health.rs`, `health_remote.rs`): repositories
//! grown commit by commit, states, calls of `get_stack_health`, and checks against git.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::{
    io::Write,
    path::Path,
    process::{Command, Stdio},
    sync::{
        OnceLock,
        atomic::{AtomicI64, Ordering},
    },
    time::{SystemTime, UNIX_EPOCH},
};

use mcp_common::{Page, WireError};
use mcp_testkit::McpProcess;
use serde_json::{Value, json};

use super::*;

// ---------------------------------------------------------------------------------------------
// Helpers: repositories, commits, state, calls
// ---------------------------------------------------------------------------------------------

pub const DAY: i64 = 86_400;
pub const GITHUB_TOKEN: &str = "ghp_16C7e42F292c6912E7710c838347Ae178B4a";

pub fn unix_now() -> i64 {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    i64::try_from(secs).unwrap()
}

/// Run `git` in the fixture's repository with author and committer dates `date` (git's
/// `@<seconds> <offset>` form), or now.
pub fn git_dated(fx: &Fixture, date: Option<&str>, args: &[&str]) -> String {
    let mut command = Command::new("git");
    command
        .args(args)
        .current_dir(fx.repo_path())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "Test")
        .env("GIT_AUTHOR_EMAIL", "test@example.com")
        .env("GIT_COMMITTER_NAME", "Test")
        .env("GIT_COMMITTER_EMAIL", "test@example.com");
    if let Some(date) = date {
        command
            .env("GIT_AUTHOR_DATE", date)
            .env("GIT_COMMITTER_DATE", date);
    }
    let output = command.output().expect("run git");
    assert!(
        output.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).trim().to_string()
}

/// A strictly increasing commit date (`@<seconds> +0000`), starting an hour ago: every
/// commit of these tests is one second newer than the one before, as git's date-ordered
/// walks expect (same-second commits are the subject of their own test).
pub fn tick() -> String {
    static START: OnceLock<i64> = OnceLock::new();
    static CLOCK: AtomicI64 = AtomicI64::new(0);
    let start = *START.get_or_init(|| unix_now() - 3600);
    format!("@{} +0000", start + CLOCK.fetch_add(1, Ordering::SeqCst))
}

/// A repository `repo/` on `main` with one commit (dated by [`tick`]).
pub fn new_repo() -> Fixture {
    repo_dated(&tick())
}

/// A repository `repo/` on `main` with one commit dated `date`.
pub fn repo_dated(date: &str) -> Fixture {
    let fx = Fixture::empty();
    std::fs::create_dir_all(fx.repo_path()).unwrap();
    fx.git(&["init", "-q", "-b", "main"]);
    std::fs::write(fx.repo_path().join("README.md"), "hello\n").unwrap();
    fx.git(&["add", "README.md"]);
    git_dated(&fx, Some(date), &["commit", "-q", "-m", "initial"]);
    fx
}

/// `@<seconds> +0000` for `days` days ago.
pub fn days_ago(days: i64) -> String {
    format!("@{} +0000", unix_now() - days * DAY)
}

/// Check out `branch` and commit a new file named after `message` on it.
pub fn commit(fx: &Fixture, branch: &str, message: &str) {
    commit_dated(fx, branch, message, Some(&tick()));
}

pub fn commit_dated(fx: &Fixture, branch: &str, message: &str, date: Option<&str>) {
    fx.git(&["checkout", "-q", branch]);
    let file = format!("{}.txt", message.replace(['/', ' '], "-"));
    std::fs::write(fx.repo_path().join(&file), format!("{message}\n")).unwrap();
    fx.git(&["add", &file]);
    git_dated(fx, date, &["commit", "-q", "-m", message]);
}

/// Create `branch` at the tip of `from`.
pub fn branch_off(fx: &Fixture, from: &str, branch: &str) {
    fx.git(&["branch", branch, from]);
}

/// For each `(from, name)`: create `name` at `from`'s tip and commit `{name} work` on it;
/// then check out main.
pub fn grow(fx: &Fixture, branches: &[(&str, &str)]) {
    for (from, name) in branches {
        branch_off(fx, from, name);
        commit(fx, name, &format!("{name} work"));
    }
    fx.git(&["checkout", "-q", "main"]);
}

/// Merge `branch` into the checked-out branch with a merge commit.
pub fn merge_no_ff(fx: &Fixture, branch: &str) {
    let message = format!("merge {branch}");
    git_dated(
        fx,
        Some(&tick()),
        &["merge", "-q", "--no-ff", "-m", &message, branch],
    );
}

/// An `against` entry of a parent git has.
pub fn vs(parent: &str, ahead: u32, behind: u32, needs_rebase: bool, merged: bool) -> Value {
    json!({"parent": parent, "ahead": ahead, "behind": behind, "needs_rebase": needs_rebase, "merged": merged})
}

/// A hand-made state: `hub` declares 60 parents `p00`…`p59` (each a branch on `main`).
pub fn hub_of_60_parents() -> Fixture {
    let fx = new_repo();
    let parents: Vec<String> = (0..60).map(|i| format!("p{i:02}")).collect();
    for parent in &parents {
        fx.git(&["branch", parent]);
    }
    fx.git(&["branch", "hub"]);
    let mut names: Vec<&str> = parents.iter().map(String::as_str).collect();
    names.push("hub");
    let mut deps: Vec<(&str, &str)> = parents.iter().map(|p| ("hub", p.as_str())).collect();
    deps.extend(parents.iter().map(|p| (p.as_str(), "main")));
    write_plain_state(&fx, &names, &deps);
    fx
}

/// A state tracking `names` (no links) with `deps` (child, parent) in that order and the
/// single default root `main`.
pub fn write_plain_state(fx: &Fixture, names: &[&str], deps: &[(&str, &str)]) {
    let branches = names.iter().map(|n| branch(n, None, None)).collect();
    fx.write_state(&state(branches, deps, &[("main", true)], json!([])));
}

/// `get_stack_health` with `args`: its data and page.
pub async fn health(mcp: &McpProcess, args: Value) -> (Value, Page) {
    mcp.call_paged::<Value>("get_stack_health", args).await
}

/// `get_stack_health` with `args`, which must fail: its error.
pub async fn health_err(mcp: &McpProcess, args: Value) -> WireError {
    mcp.call_err("get_stack_health", args).await
}

/// The entry of `branch` in the answer's `branches`.
pub fn entry<'a>(data: &'a Value, branch: &str) -> &'a Value {
    data["branches"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["branch"] == branch)
        .unwrap_or_else(|| panic!("{branch} not in {data:#}"))
}

/// The branch names of the answer's `branches`, in order.
pub fn order(data: &Value) -> Vec<String> {
    data["branches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["branch"].as_str().unwrap().to_string())
        .collect()
}

/// `(ahead, behind)` of `branch` against `parent` as git counts them.
pub fn git_counts(fx: &Fixture, branch: &str, parent: &str) -> (u64, u64) {
    let out = fx.git(&[
        "rev-list",
        "--left-right",
        "--count",
        &format!("{branch}...{parent}"),
    ]);
    let mut parts = out.split_whitespace().map(|n| n.parse::<u64>().unwrap());
    (parts.next().unwrap(), parts.next().unwrap())
}

/// Every counted `against` entry of the answer equals `git rev-list --left-right --count`.
pub fn assert_counts_match_git(fx: &Fixture, data: &Value) {
    for health in data["branches"].as_array().unwrap() {
        let name = health["branch"].as_str().unwrap();
        for against in health["against"].as_array().unwrap() {
            if against["missing"] == true {
                continue;
            }
            let parent = against["parent"].as_str().unwrap();
            let (ahead, behind) = git_counts(fx, name, parent);
            assert_eq!(
                (
                    against["ahead"].as_u64().unwrap(),
                    against["behind"].as_u64().unwrap()
                ),
                (ahead, behind),
                "{name} against {parent}"
            );
        }
    }
}

/// Every file under `dir` (relative path, contents, modification time) and every directory.
pub fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>, Option<SystemTime>)> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, Vec<u8>, Option<SystemTime>)>) {
        for item in std::fs::read_dir(dir).unwrap() {
            let path = item.unwrap().path();
            let rel = path.strip_prefix(root).unwrap().display().to_string();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                out.push((format!("{rel}/"), Vec::new(), None));
                walk(root, &path, out);
            } else {
                out.push((rel, std::fs::read(&path).unwrap(), meta.modified().ok()));
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// In `fx`: b001 on main, b002 on b001, … b{depth}, one commit each, in one `git fast-import` run.
/// Commit `i` is dated `at + i` seconds, or exactly `at` when `same_second`.
pub fn deep_stack(fx: Fixture, depth: usize, at: i64, same_second: bool) -> Fixture {
    let mut script = String::new();
    for i in 1..=depth {
        let date = if same_second { at } else { at + i as i64 };
        let from = match i {
            1 => "refs/heads/main".to_string(),
            _ => format!(":{}", i - 1),
        };
        let message = format!("b{i:03} work\n");
        let content = format!("{i}\n");
        script.push_str(&format!(
            "commit refs/heads/b{i:03}\nmark :{i}\ncommitter Test <test@example.com> {date} +0000\n\
             data {}\n{message}from {from}\nM 644 inline b{i:03}.txt\ndata {}\n{content}\n",
            message.len(),
            content.len(),
        ));
    }
    let mut child = Command::new("git")
        .args(["fast-import", "--quiet"])
        .current_dir(fx.repo_path())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(script.as_bytes()).unwrap();
    drop(stdin);
    assert!(child.wait().unwrap().success());
    let names: Vec<String> = std::iter::once("main".to_string())
        .chain((1..=depth).map(|i| format!("b{i:03}")))
        .collect();
    let deps: Vec<(&str, &str)> = names
        .windows(2)
        .map(|w| (w[1].as_str(), w[0].as_str()))
        .collect();
    let name_refs: Vec<&str> = names[1..].iter().map(String::as_str).collect();
    write_plain_state(&fx, &name_refs, &deps);
    fx
}
