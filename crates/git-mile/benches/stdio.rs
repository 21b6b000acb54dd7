//! Benchmark of `git mile` on a repository of 10,000 issues and 200 milestones with about
//! five events each (51,000 event commits, loose refs as the CLI leaves them).
//!
//! The repository is written once through `git fast-import` in git-mile's on-disk event
//! format (created, labels, comments, attach, status and title changes, spread over a year)
//! and cached in `target/git-mile-bench/v<REPO_VERSION>/` (`support`, shared with the `tasks`
//! benchmark); each run works on a fresh copy.
//!
//! Measures, through `mcp-testkit` (rmcp client over stdio) against the release binary:
//! - the first `git_mile.list` after the server starts, with no cache file (every entity
//!   replayed from its commits) and with the cache file of a previous run;
//! - warm p50/p99 of `git_mile.list` with a filter and a sort (rotating over 4 queries) and of
//!   `git_mile.show`, each call preceded by a `ping`; ratios to the ping p50 of the same run;
//! - the writes on the same server, each preceded by a `ping`: `git_mile.create` of an issue
//!   (a title and a label), `git_mile.comment` on a random issue, `git_mile.update` adding then
//!   removing a label, and a `git_mile.list` (filter + sort) right after a write (a comment on
//!   an issue of its first page, which it must show counted; only the list is timed), each
//!   answer checked;
//! - `git mile create issue` from the CLI (through `git`, as a user runs it), p50/p99.
//!
//! Prints a Markdown report and writes it to `target/git-mile-bench.md`.
//!
//! Run: `cargo bench -p git-mile --bench stdio`

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
use std::process::Command;
use std::time::{Duration, Instant};

use fixture::{ANN, Actor, BOB, FixtureEntity, FixtureEvent, created, fixed_id};
use mcp_testkit::McpProcess;
use mcp_testkit::bench::{self, Rng, machine, met, mib, ms, ms_scaled, percentile, ping};
use serde_json::{Value, json};
use support::{call, copy_repo, git, start};

const REPO_VERSION: u32 = 1;
const ISSUES: u64 = 10_000;
const MILESTONES: u64 = 200;

const WARMUP: usize = 30;
const ITERS: usize = 300;
const CLI_ITERS: usize = 60;
const STARTS: usize = 5;

const LIST_TARGET_MS: f64 = 20.0;
const SHOW_TARGET_MS: f64 = 2.0;
const FIRST_TARGET_MS: f64 = 300.0;
const CREATE_TARGET_MS: f64 = 50.0;
const WRITE_WARMUP: usize = 20;
const WRITE_ITERS: usize = 150;
const MCP_CREATE_TARGET_MS: f64 = 15.0;
const COMMENT_TARGET_MS: f64 = 15.0;
const LIST_AFTER_WRITE_TARGET_MS: f64 = 20.0;

const LABELS: &[&str] = &[
    "bug",
    "feature",
    "docs",
    "perf",
    "security",
    "ui",
    "api",
    "infra",
    "p1",
    "p2",
    "p3",
    "good-first-issue",
];
const AREAS: &[&str] = &[
    "login",
    "checkout",
    "search",
    "billing",
    "export",
    "sync",
    "dashboard",
    "settings",
    "notifications",
    "uploads",
    "reports",
    "onboarding",
];
const PROBLEMS: &[&str] = &[
    "crashes",
    "is slow",
    "shows stale data",
    "loses input",
    "times out",
    "breaks on mobile",
    "needs a redesign",
    "has no tests",
    "logs secrets",
    "double-submits",
];
static CAROL: Actor = Actor {
    name: "Carol Example",
    email: "carol@example.com",
};
const DAY: i64 = 86_400;

fn generate() -> Vec<FixtureEntity> {
    let mut rng = Rng(0x6d696c65);
    let people: [&'static Actor; 3] = [&ANN, &BOB, &CAROL];
    let mut entities = Vec::new();
    let mut comment_n = 0u64;
    let mut comment = |rng: &mut Rng| {
        comment_n += 1;
        json!({"type": "comment_added", "comment": fixed_id(0xcc, comment_n),
               "body": format!("Looked into it: {} {}.", rng.pick(AREAS), rng.pick(PROBLEMS))})
    };
    for n in 0..MILESTONES {
        let at = (n as i64) * DAY * 365 / MILESTONES as i64;
        let mut events = vec![FixtureEvent {
            at,
            actor: rng.pick(&people),
            change: created(
                "milestone",
                &format!("Release {}.{}", 1 + n / 20, n % 20),
                "Scope and dates.",
                &[],
            ),
        }];
        for k in 1..5 {
            let change = match k {
                1 | 2 => comment(&mut rng),
                3 => {
                    json!({"type": "description_edited", "description": "Scope, dates and owners."})
                }
                _ if n < MILESTONES * 3 / 4 => {
                    json!({"type": "status_changed", "status": "closed"})
                }
                _ => {
                    json!({"type": "title_edited", "title": format!("Release {}.{} (planned)", 1 + n / 20, n % 20)})
                }
            };
            events.push(FixtureEvent {
                at: at + k * 3600,
                actor: rng.pick(&people),
                change,
            });
        }
        entities.push(FixtureEntity {
            kind: "milestone",
            id: fixed_id(0x4d, n),
            events,
        });
    }
    for n in 0..ISSUES {
        let at = (n as i64) * DAY * 365 / ISSUES as i64;
        let title = format!("{} {}", rng.pick(AREAS), rng.pick(PROBLEMS));
        let first = rng.pick(LABELS);
        let mut events = vec![FixtureEvent {
            at,
            actor: rng.pick(&people),
            change: created(
                "issue",
                &title,
                &format!("When using {title}, it fails.\n\nSteps to reproduce follow."),
                &[first],
            ),
        }];
        let extra = rng.range(3, 6) as i64;
        for k in 1..=extra {
            let change = match rng.below(6) {
                0 | 1 => comment(&mut rng),
                2 => json!({"type": "label_added", "label": rng.pick(LABELS)}),
                3 => {
                    json!({"type": "attached", "milestone": fixed_id(0x4d, rng.below(MILESTONES as usize) as u64)})
                }
                4 => {
                    json!({"type": "status_changed", "status": if rng.chance(0.6) { "closed" } else { "open" }})
                }
                _ => json!({"type": "title_edited", "title": format!("{title} (again)")}),
            };
            events.push(FixtureEvent {
                at: at + k * 600,
                actor: rng.pick(&people),
                change,
            });
        }
        entities.push(FixtureEntity {
            kind: "issue",
            id: fixed_id(0x49, n),
            events,
        });
    }
    entities
}

/// The cached repository, built when missing.
fn ensure_repo() -> (PathBuf, String) {
    support::cached_repo(&format!("v{REPO_VERSION}"), |repo| {
        let entities = generate();
        let events: usize = entities.iter().map(|e| e.events.len()).sum();
        fixture::import(repo, &entities);
        format!("{events} events")
    })
}

fn list_queries() -> Vec<Value> {
    vec![
        json!({"entity": "issue", "filter": "labels contains \"bug\" and comment_count >= 1", "sort": ["updated:desc"], "limit": 20}),
        json!({"entity": "issue", "filter": "status == \"open\" and title contains \"login\"", "sort": ["created:asc"], "limit": 20}),
        json!({"entity": "issue", "filter": "milestone != null and not (labels in [\"docs\", \"ui\"])", "sort": ["comment_count:desc", "title"], "limit": 20, "includeClosed": true}),
        json!({"entity": "milestone", "filter": "open_issues > 5", "sort": ["title:desc"], "limit": 20}),
    ]
}

struct Row {
    what: String,
    p50: Duration,
    p99: Duration,
    target: Option<f64>,
}

fn main() {
    let started = Instant::now();
    let bin = bench::release_binary(
        option_env!("CARGO_BIN_EXE_git-mile"),
        "git-mile",
        "git-mile",
    );
    let events: usize = generate().iter().map(|e| e.events.len()).sum();
    let (cached, built) = ensure_repo();
    eprintln!("repository: {built}");
    let report = bench::runtime().block_on(run(&bin, &cached, events));
    println!("{report}");
    eprintln!("{}", bench::write_report("git-mile-bench.md", &report));
    eprintln!("total time {:.1?}", started.elapsed());
}

async fn run(bin: &Path, cached: &Path, events: usize) -> String {
    let dir = copy_repo(cached);
    let repo = dir.path().join("repo");
    let probe = &list_queries()[0];

    // First list after start: without a cache file (once: it writes one), then with it.
    let t = Instant::now();
    let mcp = start(bin, &repo).await;
    let startup = t.elapsed();
    let (cold, _) = call(&mcp, "git_mile.list", probe).await;
    mcp.shutdown().await;
    let cache_bytes = std::fs::metadata(repo.join(".git/git-mile/cache-v2.json"))
        .map(|m| m.len())
        .unwrap_or(0);
    let mut firsts = Vec::new();
    for _ in 0..STARTS {
        let mcp = start(bin, &repo).await;
        firsts.push(call(&mcp, "git_mile.list", probe).await.0);
        mcp.shutdown().await;
    }
    let first = percentile(&firsts, 0.5);
    // For scale: git itself listing the same refs.
    let mut for_each_ref = Vec::new();
    for _ in 0..STARTS {
        let t = Instant::now();
        git(
            &repo,
            &["for-each-ref", "--format=%(objectname)", "refs/git-mile"],
        );
        for_each_ref.push(t.elapsed());
    }
    let for_each_ref = percentile(&for_each_ref, 0.5);

    let mcp = start(bin, &repo).await;
    let pid = mcp.pid().unwrap();
    let mut pings = Vec::new();
    let mut rows = Vec::new();
    let queries = list_queries();
    let mut lists = Vec::new();
    let mut listed = 0usize;
    for n in 0..WARMUP + ITERS {
        pings.push(ping(&mcp).await);
        let (d, page) = call(&mcp, "git_mile.list", &queries[n % queries.len()]).await;
        listed += page["items"].as_array().map_or(0, Vec::len);
        if n >= WARMUP {
            lists.push(d);
        }
    }
    assert!(listed > 0, "the listings found nothing");
    rows.push(Row {
        what: "`git_mile.list`, filter + sort, warm (4 queries)".into(),
        p50: percentile(&lists, 0.5),
        p99: percentile(&lists, 0.99),
        target: Some(LIST_TARGET_MS),
    });
    let mut rng = Rng(42);
    let mut shows = Vec::new();
    for n in 0..WARMUP + ITERS {
        pings.push(ping(&mcp).await);
        let (entity, id) = if rng.chance(0.1) {
            (
                "milestone",
                fixed_id(0x4d, rng.below(MILESTONES as usize) as u64),
            )
        } else {
            ("issue", fixed_id(0x49, rng.below(ISSUES as usize) as u64))
        };
        let (d, shown) = call(&mcp, "git_mile.show", &json!({"entity": entity, "id": id})).await;
        assert_eq!(shown["id"], json!(id));
        if n >= WARMUP {
            shows.push(d);
        }
    }
    rows.push(Row {
        what: "`git_mile.show`".into(),
        p50: percentile(&shows, 0.5),
        p99: percentile(&shows, 0.99),
        target: Some(SHOW_TARGET_MS),
    });
    let memory = bench::read_memory(pid);
    writes(&mcp, &mut pings, &mut rows).await;
    mcp.shutdown().await;
    let ping_p50 = percentile(&pings, 0.5);

    // The CLI, through git, as a user runs it.
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut creates = Vec::new();
    for n in 0..CLI_ITERS {
        let t = Instant::now();
        let out = Command::new("git")
            .args([
                "mile",
                "create",
                "issue",
                "--title",
                &format!("Bench issue {n}"),
                "--label",
                "bench",
            ])
            .current_dir(&repo)
            .env("PATH", &path)
            .output()
            .unwrap();
        creates.push(t.elapsed());
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    rows.push(Row {
        what: "`git mile create issue` (CLI through git)".into(),
        p50: percentile(&creates, 0.5),
        p99: percentile(&creates, 0.99),
        target: Some(CREATE_TARGET_MS),
    });

    let mut report = String::new();
    writeln!(
        report,
        "## git-mile (`cargo bench -p git-mile --bench stdio`)\n"
    )
    .unwrap();
    writeln!(
        report,
        "{} · repository of {ISSUES} issues and {MILESTONES} milestones, {events} events, one loose ref per entity; cache file {}\n",
        machine(),
        mib(cache_bytes / 1024)
    )
    .unwrap();
    writeln!(
        report,
        "| measure | p50 | p99 | p50 / ping p50 | target | met |"
    )
    .unwrap();
    writeln!(report, "|---|---|---|---|---|---|").unwrap();
    writeln!(
        report,
        "| MCP `ping` (baseline, {} samples) | {} | {} | 1.0× | | |",
        pings.len(),
        ms(ping_p50),
        ms(percentile(&pings, 0.99))
    )
    .unwrap();
    for row in &rows {
        let target = row.target.map_or(String::new(), |t| format!("≤ {t} ms"));
        let ok = row
            .target
            .map_or("", |t| met(row.p50.as_secs_f64() * 1e3 <= t));
        writeln!(
            report,
            "| {} | {} | {} | {:.1}× | {target} | {ok} |",
            row.what,
            ms_scaled(row.p50),
            ms_scaled(row.p99),
            row.p50.as_secs_f64() / ping_p50.as_secs_f64(),
        )
        .unwrap();
    }
    writeln!(
        report,
        "| first `git_mile.list` after start, cache file present (median of {STARTS} starts) | {} | | {:.0}× | ≤ {FIRST_TARGET_MS} ms | {} |",
        ms_scaled(first),
        first.as_secs_f64() / ping_p50.as_secs_f64(),
        met(first.as_secs_f64() * 1e3 <= FIRST_TARGET_MS)
    )
    .unwrap();
    writeln!(
        report,
        "| first `git_mile.list` after start, no cache file (replays all {events} events) | {} | | {:.0}× | | |",
        ms_scaled(cold),
        cold.as_secs_f64() / ping_p50.as_secs_f64()
    )
    .unwrap();
    writeln!(
        report,
        "| for scale: `git for-each-ref refs/git-mile` (median of {STARTS}) | {} | | {:.0}× | | |",
        ms_scaled(for_each_ref),
        for_each_ref.as_secs_f64() / ping_p50.as_secs_f64()
    )
    .unwrap();
    writeln!(report).unwrap();
    writeln!(
        report,
        "Server start to initialized: {}.",
        ms_scaled(startup)
    )
    .unwrap();
    if let Some(m) = memory {
        writeln!(
            report,
            "Server memory after the warm runs: RSS {}, peak {}.",
            mib(m.rss),
            mib(m.peak)
        )
        .unwrap();
    }
    report
}

/// The write tools on the warm server, each call preceded by a `ping` (added to `pings`):
/// `WRITE_WARMUP` calls, then `WRITE_ITERS` timed ones, each answer checked.
async fn writes(mcp: &McpProcess, pings: &mut Vec<Duration>, rows: &mut Vec<Row>) {
    let mut rng = Rng(0x77726974);
    let random_issue = |rng: &mut Rng| fixed_id(0x49, rng.below(ISSUES as usize) as u64);

    // git_mile.create: an issue with a title and a label.
    let mut samples = Vec::new();
    for n in 0..WRITE_WARMUP + WRITE_ITERS {
        pings.push(ping(mcp).await);
        let title = format!("Bench MCP issue {n}");
        let (d, made) = call(
            mcp,
            "git_mile.create",
            &json!({"entity": "issue", "title": title, "labels": ["bench"]}),
        )
        .await;
        assert_eq!(made["title"], json!(title), "{made}");
        assert_eq!(made["kind"], "issue", "{made}");
        assert_eq!(made["status"], "open", "{made}");
        assert_eq!(made["labels"], json!(["bench"]), "{made}");
        assert!(
            made["id"].as_str().is_some_and(|id| id.len() == 36),
            "{made}"
        );
        if n >= WRITE_WARMUP {
            samples.push(d);
        }
    }
    rows.push(Row {
        what: "`git_mile.create` of an issue (title, a label)".into(),
        p50: percentile(&samples, 0.5),
        p99: percentile(&samples, 0.99),
        target: Some(MCP_CREATE_TARGET_MS),
    });

    // git_mile.comment on a random existing issue.
    let mut samples = Vec::new();
    for n in 0..WRITE_WARMUP + WRITE_ITERS {
        pings.push(ping(mcp).await);
        let id = random_issue(&mut rng);
        let body = format!("Bench comment {n}: checked again.");
        let (d, shown) = call(
            mcp,
            "git_mile.comment",
            &json!({"entity": "issue", "id": id, "body": body}),
        )
        .await;
        assert_eq!(shown["id"], json!(id), "{shown}");
        let comments = shown["comments"].as_array().expect("comments");
        assert!(comments.iter().any(|c| c["body"] == json!(body)), "{shown}");
        assert_eq!(
            shown["stats"]["comment_count"],
            json!(comments.len()),
            "{shown}"
        );
        if n >= WRITE_WARMUP {
            samples.push(d);
        }
    }
    rows.push(Row {
        what: "`git_mile.comment` on a random issue".into(),
        p50: percentile(&samples, 0.5),
        p99: percentile(&samples, 0.99),
        target: Some(COMMENT_TARGET_MS),
    });

    // git_mile.update: a label added to a random issue, then removed from it.
    let mut samples = Vec::new();
    let mut id = String::new();
    for n in 0..WRITE_WARMUP + WRITE_ITERS {
        pings.push(ping(mcp).await);
        let add = n % 2 == 0;
        if add {
            id = random_issue(&mut rng);
        }
        let args = if add {
            json!({"entity": "issue", "id": id, "addLabels": ["bench-toggle"]})
        } else {
            json!({"entity": "issue", "id": id, "removeLabels": ["bench-toggle"]})
        };
        let (d, shown) = call(mcp, "git_mile.update", &args).await;
        assert_eq!(shown["id"], json!(id), "{shown}");
        let has = shown["labels"]
            .as_array()
            .expect("labels")
            .iter()
            .any(|l| l == "bench-toggle");
        assert_eq!(has, add, "{args} answered {shown}");
        if n >= WRITE_WARMUP {
            samples.push(d);
        }
    }
    rows.push(Row {
        what: "`git_mile.update`, a label added then removed (alternating)".into(),
        p50: percentile(&samples, 0.5),
        p99: percentile(&samples, 0.99),
        target: None,
    });

    // git_mile.list right after a write: a comment on an issue of the list's first page (it
    // stays on it: its `updated` can only grow, and only the page's issues are written), then
    // the list, which must show the issue with the comment counted; only the list is timed.
    let query = &list_queries()[0];
    let (_, mut page) = call(mcp, "git_mile.list", query).await;
    let mut samples = Vec::new();
    for n in 0..WRITE_WARMUP + WRITE_ITERS {
        let items = page["items"].as_array().expect("items");
        assert!(!items.is_empty(), "the list found nothing");
        let id = items[rng.below(items.len())]["id"].clone();
        pings.push(ping(mcp).await);
        let (_, shown) = call(
            mcp,
            "git_mile.comment",
            &json!({"entity": "issue", "id": id, "body": format!("Bench comment before a list {n}.")}),
        )
        .await;
        let count = shown["stats"]["comment_count"].clone();
        let (d, listed) = call(mcp, "git_mile.list", query).await;
        let item = listed["items"]
            .as_array()
            .expect("items")
            .iter()
            .find(|item| item["id"] == id)
            .unwrap_or_else(|| panic!("the list after a comment on {id} lost it: {listed}"));
        assert_eq!(
            item["stats"]["comment_count"], count,
            "the list after a comment on {id} missed it: {listed}"
        );
        page = listed;
        if n >= WRITE_WARMUP {
            samples.push(d);
        }
    }
    rows.push(Row {
        what: "`git_mile.list`, filter + sort, right after a write (a comment)".into(),
        p50: percentile(&samples, 0.5),
        p99: percentile(&samples, 0.99),
        target: Some(LIST_AFTER_WRITE_TARGET_MS),
    });
}
