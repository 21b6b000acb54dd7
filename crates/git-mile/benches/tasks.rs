//! Benchmark of upstream git-mile's tasks against this version's own issues (issue 48), in
//! one repository holding 10,000 of each, with 4 events each, written once through `git
//! fast-import` (issues in this version's format, tasks in upstream's: pretty JSON, lamport
//! clocks) and cached in `target/git-mile-bench/tasks-v<REPO_VERSION>/`; each run works on a
//! fresh copy, loose refs as the writers leave them.
//!
//! Measured through `mcp-testkit` (rmcp client over stdio) against the release binary, on one
//! server, each pair alternated call by call so that the machine's noise falls on both:
//! - the first `git_mile.list` after start of issues (no cache file: every issue replayed) and
//!   of tasks (every task replayed: tasks have no cache file), median of 5 starts;
//! - warm `git_mile.list` of issues and of tasks with the same filter and sort (2 queries),
//!   each query in both orders (issue then task, task then issue);
//! - `git_mile.create` of an issue and of a task (a title and a label), `git_mile.update`
//!   adding a label to a random issue and to a random task, `git_mile.comment` on each.
//!
//! Prints a Markdown report with the ratios task / issue and writes it to
//! `target/git-mile-tasks-bench.md`.
//!
//! Run: `cargo bench -p git-mile --bench tasks`

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::print_stderr
)]

#[path = "../tests/git-mile/support/fixture.rs"]
mod fixture;
mod support;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use fixture::{ANN, BOB, FixtureEntity, FixtureEvent, created, fixed_id};
use mcp_testkit::bench::{self, Rng, machine, ms, percentile};
use serde_json::{Value, json};
use support::{call, copy_repo, start};

const REPO_VERSION: u32 = 1;
const N: u64 = 10_000;
const STARTS: usize = 5;
const WARMUP: usize = 20;
const ITERS: usize = 200;
const WRITE_ITERS: usize = 100;
/// The targets: a task's p50 at most this many times an issue's.
const RATIO_TARGET: f64 = 1.5;

const LABELS: &[&str] = &["bug", "feature", "docs", "perf", "ui", "api", "p1", "p2"];
const AREAS: &[&str] = &[
    "login", "checkout", "search", "billing", "export", "sync", "settings", "reports",
];

/// The id of task `n`: a UUIDv7-shaped id, lowercase.
fn task_id(n: u64) -> String {
    format!("019a0000-0000-7000-8000-{n:012x}")
}

fn issues() -> Vec<FixtureEntity> {
    let mut rng = Rng(0x7461736b);
    (0..N)
        .map(|n| {
            let at = (n as i64) * 3000;
            let title = format!("{} {}", rng.pick(AREAS), n);
            let actor = if n % 2 == 0 { &ANN } else { &BOB };
            let events = vec![
                FixtureEvent {
                    at,
                    actor,
                    change: created("issue", &title, "Steps follow.", &[rng.pick(LABELS)]),
                },
                FixtureEvent {
                    at: at + 60,
                    actor,
                    change: json!({"type": "label_added", "label": rng.pick(LABELS)}),
                },
                FixtureEvent {
                    at: at + 120,
                    actor,
                    change: json!({"type": "comment_added", "comment": fixed_id(0xcc, n), "body": "Looked into it."}),
                },
                FixtureEvent {
                    at: at + 180,
                    actor,
                    change: json!({"type": "status_changed", "status": if n % 3 == 0 { "closed" } else { "open" }}),
                },
            ];
            FixtureEntity {
                kind: "issue",
                id: fixed_id(0x49, n),
                events,
            }
        })
        .collect()
}

/// One task event's commit message, as upstream's store writes it.
fn task_message(task: &str, event: u64, lamport: u64, at: i64, kind: Value) -> String {
    let body = json!({
        "schema": "git-mile-event@1",
        "id": format!("019a0000-0000-7000-9000-{event:012x}"),
        "lamport": lamport,
        "ts": fixture::rfc3339(at),
        "actor": {"name": ANN.name, "email": ANN.email},
        "task": task,
        "kind": kind,
    });
    let id = body["id"].as_str().unwrap().to_string();
    format!(
        "git-mile-event: {id}\n\n{}",
        serde_json::to_string_pretty(&body).unwrap()
    )
}

/// The fast-import stream of the tasks.
fn task_stream(out: &mut impl std::io::Write) -> std::io::Result<()> {
    let mut rng = Rng(0x7570);
    let mut event = 0u64;
    for n in 0..N {
        let id = task_id(n);
        let at = (n as i64) * 3000;
        let done = n % 3 == 0;
        let kinds = [
            json!({"type": "taskCreated", "title": format!("{} {}", rng.pick(AREAS), n),
                   "labels": [rng.pick(LABELS)], "assignees": ["ann"], "description": "Steps follow.",
                   "state": "state/todo", "state_kind": "todo"}),
            json!({"type": "labelsAdded", "labels": [rng.pick(LABELS)]}),
            json!({"type": "commentAdded", "comment_id": format!("019a0000-0000-7000-a000-{n:012x}"), "body_md": "Looked into it."}),
            if done {
                json!({"type": "taskStateSet", "state": "state/done", "state_kind": "done"})
            } else {
                json!({"type": "taskStateSet", "state": "state/in-progress", "state_kind": "in_progress"})
            },
        ];
        for (k, kind) in kinds.into_iter().enumerate() {
            event += 1;
            let t = at + 60 * k as i64;
            let message = task_message(&id, event, k as u64 + 1, t, kind);
            let who = format!("{} <{}> {} +0000", ANN.name, ANN.email, fixture::BASE + t);
            write!(
                out,
                "commit refs/git-mile/tasks/{id}\nauthor {who}\ncommitter {who}\ndata {}\n{message}\n",
                message.len()
            )?;
        }
    }
    writeln!(out, "done")
}

/// The cached repository, built when missing.
fn ensure_repo() -> (PathBuf, String) {
    support::cached_repo(&format!("tasks-v{REPO_VERSION}"), |repo| {
        fixture::import(repo, &issues());
        fixture::import_stream(repo, |out| task_stream(out));
        format!("{N} issues, {N} tasks")
    })
}

/// The same query over issues and over tasks.
fn query(entity: &str, n: usize) -> Value {
    match n % 2 {
        0 => {
            json!({"entity": entity, "filter": "labels contains \"bug\" and comment_count >= 1", "sort": ["updated:desc"], "limit": 20})
        }
        _ => {
            json!({"entity": entity, "filter": "title contains \"login\"", "sort": ["created:asc"], "limit": 20, "includeClosed": true})
        }
    }
}

/// One measured pair: an issue's and a task's samples.
struct Pair {
    what: &'static str,
    issue: Vec<Duration>,
    task: Vec<Duration>,
}

impl Pair {
    fn new(what: &'static str) -> Self {
        Self {
            what,
            issue: Vec::new(),
            task: Vec::new(),
        }
    }
}

fn main() {
    let started = Instant::now();
    let bin = bench::release_binary(
        option_env!("CARGO_BIN_EXE_git-mile"),
        "git-mile",
        "git-mile",
    );
    let (cached, built) = ensure_repo();
    eprintln!("repository: {built}");
    let report = bench::runtime().block_on(run(&bin, &cached));
    println!("{report}");
    eprintln!(
        "{}",
        bench::write_report("git-mile-tasks-bench.md", &report)
    );
    eprintln!("total time {:.1?}", started.elapsed());
}

async fn run(bin: &Path, cached: &Path) -> String {
    let dir = copy_repo(cached);
    let repo = dir.path().join("repo");
    let mut pairs = Vec::new();

    // The first list after start: every issue replayed (its cache file removed each time),
    // every task replayed (tasks are cached in memory only).
    let mut first = Pair::new("first `git_mile.list` after start (all 10,000 replayed)");
    for _ in 0..STARTS {
        let _ = std::fs::remove_file(repo.join(".git/git-mile/cache-v2.json"));
        let mcp = start(bin, &repo).await;
        first
            .issue
            .push(call(&mcp, "git_mile.list", &query("issue", 0)).await.0);
        mcp.shutdown().await;
        let mcp = start(bin, &repo).await;
        let (d, page) = call(&mcp, "git_mile.list", &query("task", 0)).await;
        assert!(!page["items"].as_array().unwrap().is_empty());
        first.task.push(d);
        mcp.shutdown().await;
    }
    pairs.push(first);

    let mcp = start(bin, &repo).await;
    // Warm lists, alternated. Which of a pair goes first changes every other pair, so that each
    // query is timed in both orders: the second call of a pair runs on caches the first one
    // filled with 10,000 other entities (measured: 1.3–1.75× for whichever goes second), which
    // the order issue-then-task laid on tasks alone.
    let mut lists = Pair::new("`git_mile.list`, filter + sort, warm (2 queries)");
    for n in 0..WARMUP + ITERS {
        let ((di, pi), (dt, pt)) = if (n / 2) % 2 == 0 {
            let issue = call(&mcp, "git_mile.list", &query("issue", n)).await;
            (issue, call(&mcp, "git_mile.list", &query("task", n)).await)
        } else {
            let task = call(&mcp, "git_mile.list", &query("task", n)).await;
            (call(&mcp, "git_mile.list", &query("issue", n)).await, task)
        };
        assert_eq!(
            pi["items"].as_array().unwrap().len(),
            pt["items"].as_array().unwrap().len(),
            "the same data gives pages of the same size"
        );
        if n >= WARMUP {
            lists.issue.push(di);
            lists.task.push(dt);
        }
    }
    pairs.push(lists);

    // Writes, alternated.
    let mut rng = Rng(48);
    let mut creates = Pair::new("`git_mile.create` (a title and a label)");
    let mut updates = Pair::new("`git_mile.update` (a label added)");
    let mut comments = Pair::new("`git_mile.comment`");
    for n in 0..WARMUP + WRITE_ITERS {
        let keep = n >= WARMUP;
        let title = format!("Bench {n}");
        let (d, v) = call(
            &mcp,
            "git_mile.create",
            &json!({"entity": "issue", "title": title, "labels": ["bench"]}),
        )
        .await;
        assert_eq!(v["kind"], "issue");
        if keep {
            creates.issue.push(d);
        }
        let (d, v) = call(
            &mcp,
            "git_mile.create",
            &json!({"entity": "task", "title": title, "labels": ["bench"]}),
        )
        .await;
        assert_eq!(v["kind"], "task");
        if keep {
            creates.task.push(d);
        }
        let k = rng.below(N as usize) as u64;
        let label = format!("l{n}");
        let (d, v) = call(
            &mcp,
            "git_mile.update",
            &json!({"entity": "issue", "id": fixed_id(0x49, k), "addLabels": [label]}),
        )
        .await;
        assert!(v["labels"].as_array().unwrap().contains(&json!(label)));
        if keep {
            updates.issue.push(d);
        }
        let (d, v) = call(
            &mcp,
            "git_mile.update",
            &json!({"entity": "task", "id": task_id(k), "addLabels": [label]}),
        )
        .await;
        assert!(v["labels"].as_array().unwrap().contains(&json!(label)));
        if keep {
            updates.task.push(d);
        }
        let (d, _) = call(
            &mcp,
            "git_mile.comment",
            &json!({"entity": "issue", "id": fixed_id(0x49, k), "body": "More."}),
        )
        .await;
        if keep {
            comments.issue.push(d);
        }
        let (d, _) = call(
            &mcp,
            "git_mile.comment",
            &json!({"entity": "task", "id": task_id(k), "body": "More."}),
        )
        .await;
        if keep {
            comments.task.push(d);
        }
    }
    mcp.shutdown().await;
    pairs.extend([creates, updates, comments]);

    // For scale: the issues of a copy without the tasks (a listing of issues names the task
    // refs, which it reads each time).
    let _ = std::fs::remove_dir_all(repo.join(".git/refs/git-mile/tasks"));
    let mcp = start(bin, &repo).await;
    let mut alone = Vec::new();
    for n in 0..WARMUP + ITERS {
        let (d, _) = call(&mcp, "git_mile.list", &query("issue", n)).await;
        if n >= WARMUP {
            alone.push(d);
        }
    }
    mcp.shutdown().await;

    let mut out = String::new();
    let _ = writeln!(
        out,
        "## git-mile: upstream tasks against issues (issue 48)\n"
    );
    let _ = writeln!(
        out,
        "{}; 10,000 issues and 10,000 tasks, 4 events each; {WARMUP} warm-up then {ITERS} \
         lists and {WRITE_ITERS} writes of each, alternated; first list: median of {STARTS} \
         starts.\n",
        machine()
    );
    let _ = writeln!(
        out,
        "| measure | issue p50 | task p50 | task p99 | issue p99 | task / issue (p50) | target | met? |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---|---|");
    for pair in &pairs {
        let (i50, t50) = (percentile(&pair.issue, 0.5), percentile(&pair.task, 0.5));
        let (i99, t99) = (percentile(&pair.issue, 0.99), percentile(&pair.task, 0.99));
        let ratio = t50.as_secs_f64() / i50.as_secs_f64();
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {ratio:.2}× | ≤ {RATIO_TARGET}× | {} |",
            pair.what,
            ms(i50),
            ms(t50),
            ms(t99),
            ms(i99),
            bench::met(ratio <= RATIO_TARGET)
        );
    }
    let _ = writeln!(
        out,
        "\nFor scale: the same warm `git_mile.list` of issues in the repository without its \
         10,000 task refs: p50 {}, p99 {}.",
        ms(percentile(&alone, 0.5)),
        ms(percentile(&alone, 0.99))
    );
    out
}
