//! Latency and concurrency benchmark of `jility --mcp-server` over stdio, on a database of
//! 100,000 tickets.
//!
//! The database is built through the product: the release binary as an MCP server creates the
//! tickets with `jility_create_tickets_batch` (200 per call, status backlog) and
//! `jility_create_ticket` (the other statuses), then adds 20,000 comments with
//! `jility_add_comment`. Titles, descriptions and comments are generated from a vocabulary of
//! bug reports, features and chores, so full-text search has realistic words to find; labels
//! come from a set of 12, assignees from a team of 14. The result is cached in
//! `target/jility-bench/v<DB_VERSION>/` (bump [`DB_VERSION`] when the generator changes); each
//! run works on a fresh copy in a temp dir, so the cache is never mutated.
//!
//! Measures, through `mcp-testkit` (rmcp client, stdio):
//! 1. **Latency**: p50/p99 of `jility_get_ticket`, `jility_list_tickets` (status todo or
//!    in_progress, and a label), `jility_search_tickets` (1–2 word queries) and
//!    `jility_create_ticket`, each call preceded by an MCP `ping`; ratios to the ping p50 of the
//!    same run. Every result is checked (listing totals against the generator's counts). Also,
//!    without a target, `jility_list_tickets` without filters and the p50 of each search query.
//! 2. **Concurrent writers**: 1 process × 1,000 creates (baseline), then 4 server processes on
//!    the same database, each sent 1,000 `jility_create_ticket` calls at once with the others:
//!    tickets per second overall, then a check that no ticket is lost, by paging through every
//!    ticket with `jility_list_tickets`: the count, and the numbers unique and contiguous.
//!
//! Prints a Markdown report and writes it to `target/jility-bench.md`.
//!
//! Run: `cargo bench -p jility --bench stdio`

// The benchmark reports to the terminal and aborts on any setup failure.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::print_stderr
)]

use std::{
    collections::{BTreeMap, HashSet},
    fmt::Write as _,
    path::{Path, PathBuf},
    time::{Duration, Instant},
};

use mcp_testkit::{
    McpProcess,
    bench::{self, Rng, TimedCall, machine, met, mib, ms, ms_scaled, percentile, ping},
};
use rmcp::{RoleClient, model::CallToolRequestParams, service::Peer};
use serde_json::{Value, json};
use tokio::task::JoinSet;

// ---- sizes and targets ----------------------------------------------------------------------

/// The version of the cached database: bump it when the generator below changes. (A cached
/// database from before a schema migration is upgraded by the server, on each run's copy.)
const DB_VERSION: u32 = 2;
const TICKETS: usize = 100_000;
const COMMENTS: usize = 20_000;
/// Most tickets per `jility_create_tickets_batch` call (the tool's limit).
const BATCH: usize = 200;
/// The plan is created in chunks of this many tickets: the backlog ones of a chunk in one batch,
/// the others one by one with their status, so that statuses interleave in time.
const CHUNK: usize = 400;
/// Requests in flight while building the database (pipelined on one connection).
const BUILD_WINDOW: usize = 16;

const WARMUP: usize = 50;
const ITERS: usize = 500;
const ITERS_SEARCH: usize = 300;
/// Calls of the diagnostic listing without filters (slow: it counts every ticket).
const ITERS_DIAGNOSTIC: usize = 100;

const LOAD_PROCESSES: usize = 4;
const LOAD_CREATES: usize = 1_000;
/// The page size when listing every ticket to check that none is lost (the tool's maximum).
const PAGE: usize = 200;

const CREATE_TARGET_MS: f64 = 1.0;
const GET_TARGET_MS: f64 = 2.0;
const LIST_TARGET_MS: f64 = 2.0;
const SEARCH_TARGET_MS: f64 = 10.0;

const KEY: &str = "TASK";
const ACTOR: &str = "bench";

// ---- a deterministic generator --------------------------------------------------------------

// ---- vocabulary -----------------------------------------------------------------------------

/// Statuses of the planned tickets, weighted as in a tracker that has been used for a while.
const STATUSES: &[(&str, u32)] = &[
    ("done", 46),
    ("backlog", 25),
    ("todo", 12),
    ("in_progress", 8),
    ("review", 5),
    ("blocked", 4),
];

const LABELS: &[(&str, u32)] = &[
    ("backend", 35),
    ("bug", 30),
    ("frontend", 25),
    ("feature", 20),
    ("api", 12),
    ("infra", 10),
    ("performance", 8),
    ("ux", 8),
    ("database", 7),
    ("security", 6),
    ("testing", 6),
    ("docs", 5),
];

const TEAM: &[&str] = &[
    "alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy", "agent-1",
    "agent-2", "agent-3", "agent-4",
];

const AREAS: &[&str] = &[
    "billing",
    "checkout",
    "login",
    "session handling",
    "search index",
    "notification service",
    "webhook delivery",
    "CSV export",
    "bulk import",
    "dashboard",
    "audit log",
    "user profile",
    "permissions",
    "rate limiter",
    "cache layer",
    "job scheduler",
    "payment gateway",
    "invoice PDF",
    "onboarding flow",
    "settings page",
    "API gateway",
    "mobile app",
    "email digest",
    "file upload",
    "report builder",
    "SSO",
    "password reset",
    "feature flags",
    "metrics pipeline",
    "CI pipeline",
    "database migrations",
    "job queue",
    "websocket server",
    "GraphQL schema",
    "admin console",
    "access tokens",
    "team invitations",
    "calendar sync",
    "image thumbnails",
    "full-text search",
];

const SYMPTOMS: &[&str] = &[
    "memory leak",
    "timeout",
    "race condition",
    "deadlock",
    "slow query",
    "crash on startup",
    "stale data",
    "broken pagination",
    "wrong totals",
    "missing translation",
    "null pointer exception",
    "duplicate events",
    "500 error",
    "layout shift",
    "flaky test",
    "high CPU usage",
    "data loss",
    "infinite redirect",
    "expired token",
    "encoding error",
    "off-by-one error",
    "connection pool exhaustion",
    "silent failure",
    "retry storm",
];

const CONDITIONS: &[&str] = &[
    "the user has more than 1000 items",
    "the session expires mid-request",
    "two tabs are open",
    "the network drops during upload",
    "the locale is set to German",
    "a webhook endpoint returns 429",
    "the cache is cold",
    "the job is retried",
    "daylight saving time changes",
    "the import file has a BOM",
    "the account is on the free plan",
    "SSO is enabled",
    "the browser is Safari 17",
    "the queue backs up",
    "a migration runs during deploy",
    "the payload exceeds 10 MB",
];

const FEATURES: &[&str] = &[
    "dark mode",
    "bulk editing",
    "keyboard shortcuts",
    "saved filters",
    "an audit trail",
    "two-factor authentication",
    "CSV download",
    "rate limit headers",
    "retry with backoff",
    "pagination cursors",
    "webhook signatures",
    "usage quotas",
    "inline previews",
    "role-based access",
    "scheduled reports",
    "read replicas",
    "structured logging",
    "OpenTelemetry tracing",
    "soft delete",
    "undo support",
];

const DEPENDENCIES: &[&str] = &[
    "tokio",
    "React",
    "PostgreSQL",
    "Node.js",
    "OpenSSL",
    "Kubernetes",
    "Terraform",
    "Python",
    "webpack",
    "Redis",
    "Elasticsearch",
    "gRPC",
];

const MODULES: &[&str] = &[
    "request handler",
    "retry logic",
    "serializer",
    "query builder",
    "config loader",
    "state machine",
    "error handling",
    "test fixtures",
];

const CAUSES: &[&str] = &[
    "a missing index",
    "an unbounded retry loop",
    "a shared mutable cache",
    "the connection pool size",
    "a timezone conversion",
    "an N+1 query",
    "a stale feature flag",
    "a missing null check",
    "lock ordering",
    "an unescaped header",
];

const EVIDENCE: &[&str] = &[
    "`connection reset by peer`",
    "repeated `429 Too Many Requests` responses",
    "`deadline exceeded` errors",
    "GC pauses over 2 seconds",
    "lock wait timeouts",
    "a spike in 5xx responses",
    "`invalid token` warnings",
    "out-of-memory kills",
];

const GOALS: &[&str] = &[
    "work faster",
    "audit changes",
    "share results with their team",
    "recover from mistakes",
    "meet compliance requirements",
    "automate their workflow",
];

const TEAMS: &[&str] = &[
    "payments",
    "growth",
    "platform",
    "mobile",
    "data",
    "identity",
    "support tooling",
];

const PLANS: &[&str] = &["free", "team", "business", "enterprise"];

const BROWSERS: &[&str] = &["Firefox", "Chrome", "Safari", "Edge", "the Android app"];

/// The queries of `jility_search_tickets`: what someone looking for a ticket types, from common
/// words to rare ones.
const QUERIES: &[&str] = &[
    "memory leak",
    "timeout",
    "deadlock",
    "password reset",
    "invoice pdf",
    "flaky test",
    "webhook retry",
    "safari",
    "csv export",
    "stale cache",
];

/// The labels the listing filters by (with status todo or in_progress).
const LIST_LABELS: &[&str] = &["backend", "frontend", "bug", "api"];

fn capitalize(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Bug,
    Feature,
    Chore,
    Spike,
}

/// A ticket to create.
struct Planned {
    title: String,
    description: String,
    status: &'static str,
    story_points: Option<u8>,
    assignees: Vec<&'static str>,
    labels: Vec<&'static str>,
}

impl Planned {
    fn generate(rng: &mut Rng, status: &'static str) -> Self {
        let kind = rng.weighted(&[
            (Kind::Bug, 40),
            (Kind::Feature, 30),
            (Kind::Chore, 20),
            (Kind::Spike, 10),
        ]);
        let area = rng.pick(AREAS);
        let symptom = rng.pick(SYMPTOMS);
        let feature = rng.pick(FEATURES);
        let title = match (kind, rng.below(3)) {
            (Kind::Bug, 0) => format!("Fix {symptom} in {area}"),
            (Kind::Bug, 1) => format!(
                "{}: {symptom} when {}",
                capitalize(area),
                rng.pick(CONDITIONS)
            ),
            (Kind::Bug, _) => format!("{} in {area} after the last deploy", capitalize(symptom)),
            (Kind::Feature, 0) => format!("Add {feature} to {area}"),
            (Kind::Feature, 1) => format!("Support {feature} in {area}"),
            (Kind::Feature, _) => format!("{}: let users {}", capitalize(area), rng.pick(GOALS)),
            (Kind::Chore, 0) => format!("Upgrade {} used by {area}", rng.pick(DEPENDENCIES)),
            (Kind::Chore, 1) => format!("Refactor the {} of {area}", rng.pick(MODULES)),
            (Kind::Chore, _) => format!("Remove dead code from {area}"),
            (Kind::Spike, 0) => format!("Investigate {symptom} reports from {area}"),
            (Kind::Spike, _) => format!("Measure the cost of {feature} in {area}"),
        };
        let description = description(rng, kind, area, symptom, feature);
        let labels = {
            let mut labels: Vec<&'static str> = Vec::new();
            match kind {
                Kind::Bug => labels.push("bug"),
                Kind::Feature => labels.push("feature"),
                _ => {}
            }
            let extra = rng.range(1, 2);
            while labels.len() < extra + usize::from(matches!(kind, Kind::Bug | Kind::Feature)) {
                let label = rng.weighted(LABELS);
                if !labels.contains(&label) {
                    labels.push(label);
                }
            }
            labels
        };
        let assigned = match status {
            "in_progress" | "review" => 1.0,
            "done" => 0.9,
            "todo" | "blocked" => 0.4,
            _ => 0.05,
        };
        let mut assignees = Vec::new();
        if rng.chance(assigned) {
            assignees.push(rng.pick(TEAM));
            if rng.chance(0.1) {
                let pair = rng.pick(TEAM);
                if !assignees.contains(&pair) {
                    assignees.push(pair);
                }
            }
        }
        let story_points = rng
            .chance(0.7)
            .then(|| rng.pick(&[1u8, 2, 3, 3, 5, 5, 8, 13]));
        Self {
            title,
            description,
            status,
            story_points,
            assignees,
            labels,
        }
    }

    /// The arguments of `jility_create_ticket` (`with_status`) or of a batch item.
    fn args(&self, with_status: bool) -> Value {
        let mut args = json!({
            "title": self.title,
            "description": self.description,
            "labels": self.labels,
        });
        if let Some(points) = self.story_points {
            args["story_points"] = json!(points);
        }
        if !self.assignees.is_empty() {
            args["assignees"] = json!(self.assignees);
        }
        if with_status {
            args["status"] = json!(self.status);
        }
        args
    }
}

fn sentence(rng: &mut Rng, area: &str, symptom: &str, feature: &str) -> String {
    match rng.below(8) {
        0 => format!(
            "Customers on the {} plan report {symptom} in {area} when {}.",
            rng.pick(PLANS),
            rng.pick(CONDITIONS)
        ),
        1 => format!(
            "It started after release {}.{}.{}.",
            rng.range(2, 5),
            rng.range(0, 30),
            rng.range(0, 9)
        ),
        2 => format!(
            "Support opened {} tickets about this in the last week.",
            rng.range(2, 40)
        ),
        3 => format!(
            "The logs show {} around the time of the failure.",
            rng.pick(EVIDENCE)
        ),
        4 => format!(
            "We suspect {} in the {}, but nobody has confirmed it yet.",
            rng.pick(CAUSES),
            rng.pick(MODULES)
        ),
        5 => format!(
            "This blocks the {} team from shipping {feature}.",
            rng.pick(TEAMS)
        ),
        6 => format!(
            "Users want {feature} in {area} so they can {}.",
            rng.pick(GOALS)
        ),
        _ => format!(
            "The {area} code predates the move to {} and is hard to change.",
            rng.pick(DEPENDENCIES)
        ),
    }
}

fn description(rng: &mut Rng, kind: Kind, area: &str, symptom: &str, feature: &str) -> String {
    let mut out = String::from("## Context\n\n");
    let sentences = rng.range(2, 4);
    let context: Vec<String> = (0..sentences)
        .map(|_| sentence(rng, area, symptom, feature))
        .collect();
    out.push_str(&context.join(" "));
    out.push_str("\n\n");
    if kind == Kind::Bug {
        out.push_str("## Steps to Reproduce\n\n");
        let steps = [
            format!("Sign in as a {} plan user", rng.pick(PLANS)),
            format!("Open {area}"),
            format!("Make sure {}", rng.pick(CONDITIONS)),
            format!("Repeat the last step {} times", rng.range(2, 10)),
            format!("Observe the {symptom}"),
        ];
        for (i, step) in steps.iter().enumerate() {
            writeln!(out, "{}. {step}", i + 1).unwrap();
        }
        out.push('\n');
    }
    out.push_str("## Acceptance Criteria\n\n");
    let criteria = rng.range(2, 4);
    let mut used = HashSet::new();
    while used.len() < criteria {
        let which = rng.below(7);
        if !used.insert(which) {
            continue;
        }
        let line = match which {
            0 => format!(
                "{} handles the case where {} without {symptom}",
                capitalize(area),
                rng.pick(CONDITIONS)
            ),
            1 => format!("A regression test covers {symptom} in {area}"),
            2 => format!("The runbook describes how to detect {symptom}"),
            3 => format!(
                "p99 latency of {area} stays below {} ms",
                rng.pick(&[50, 100, 200, 500])
            ),
            4 => format!(
                "{} is behind a feature flag until QA signs off",
                capitalize(feature)
            ),
            5 => "Error messages tell the user what to do next".to_string(),
            _ => format!("Dashboards show the new metrics for {area}"),
        };
        writeln!(out, "- [ ] {line}").unwrap();
    }
    if rng.chance(0.3) {
        write!(
            out,
            "\n## Notes\n\n{}",
            sentence(rng, area, symptom, feature)
        )
        .unwrap();
    }
    out.trim_end().to_string()
}

fn comment(rng: &mut Rng) -> String {
    let area = rng.pick(AREAS);
    let symptom = rng.pick(SYMPTOMS);
    match rng.below(8) {
        0 => format!(
            "Reproduced on staging: {symptom} in {area} when {}.",
            rng.pick(CONDITIONS)
        ),
        1 => format!(
            "Root cause looks like {} in the {area} {}.",
            rng.pick(CAUSES),
            rng.pick(MODULES)
        ),
        2 => format!(
            "PR #{} is up; @{} can you review?",
            rng.range(1_000, 9_999),
            rng.pick(TEAM)
        ),
        3 => format!(
            "Deployed to staging, watching the {area} dashboards for a day before rolling out."
        ),
        4 => format!(
            "Blocked on the {} upgrade; the {area} fix needs it.",
            rng.pick(DEPENDENCIES)
        ),
        5 => format!(
            "Could not reproduce with {}; we need more logs from the customer.",
            rng.pick(BROWSERS)
        ),
        6 => format!(
            "Moving this to the next sprint, the {} team has higher priority {area} work.",
            rng.pick(TEAMS)
        ),
        _ => format!("Customer confirmed the fix works; {symptom} is gone."),
    }
}

/// Everything the database holds, generated deterministically.
struct Plan {
    tickets: Vec<Planned>,
    /// `(ticket number, content)`.
    comments: Vec<(usize, String)>,
}

impl Plan {
    fn generate() -> Self {
        let mut rng = Rng(0x6A11_17E5);
        let tickets: Vec<Planned> = (0..TICKETS)
            .map(|_| {
                let status = rng.weighted(STATUSES);
                Planned::generate(&mut rng, status)
            })
            .collect();
        // Comments cluster on a few tickets: 60% of them on 5,000 "hot" tickets.
        let hot: Vec<usize> = (0..5_000).map(|_| rng.range(1, TICKETS)).collect();
        let comments = (0..COMMENTS)
            .map(|_| {
                let ticket = if rng.chance(0.6) {
                    rng.pick(&hot)
                } else {
                    rng.range(1, TICKETS)
                };
                (ticket, comment(&mut rng))
            })
            .collect();
        Self { tickets, comments }
    }

    /// Tickets with status todo or in_progress that carry `label`.
    fn active_with(&self, label: &str) -> usize {
        self.tickets
            .iter()
            .filter(|t| matches!(t.status, "todo" | "in_progress") && t.labels.contains(&label))
            .count()
    }

    fn by_status(&self) -> BTreeMap<&'static str, usize> {
        let mut counts = BTreeMap::new();
        for t in &self.tickets {
            *counts.entry(t.status).or_default() += 1;
        }
        counts
    }
}

// ---- requests -------------------------------------------------------------------------------

fn request(tool: &str, args: Value) -> CallToolRequestParams {
    let Value::Object(map) = args else {
        panic!("arguments of {tool} must be an object: {args}");
    };
    CallToolRequestParams::new(tool.to_string()).with_arguments(map)
}

/// Call `tool` through `peer` (untimed, for building and loading); panics on an error result.
/// `mcp_testkit::bench::call`, keeping a list's `page` as `data.page` (the kit's drops it):
/// one timed `tools/call` that must succeed.
async fn call(mcp: &McpProcess, tool: &str, args: &Value) -> TimedCall {
    let start = Instant::now();
    let result = mcp.call(tool, args.clone()).await;
    let elapsed = start.elapsed();
    let text_len = result
        .content
        .first()
        .and_then(|c| c.as_text())
        .map_or(0, |t| t.text.len());
    let structured = result.structured_content.unwrap_or(Value::Null);
    assert!(
        result.is_error != Some(true) && structured["status"] == "ok",
        "{tool} {args} returned an error: {structured}"
    );
    TimedCall {
        elapsed,
        data: with_page(structured),
        text_len,
    }
}

/// The envelope's `data`, with its `page` (total, next_cursor), if any, as `data.page`.
fn with_page(mut structured: Value) -> Value {
    let page = structured["page"].take();
    let mut data = structured["data"].take();
    if !page.is_null()
        && let Some(members) = data.as_object_mut()
    {
        members.insert("page".to_string(), page);
    }
    data
}

async fn call_peer(peer: &Peer<RoleClient>, tool: &str, args: Value) -> Value {
    let shown = args.to_string();
    let result = tokio::time::timeout(
        mcp_testkit::REQUEST_TIMEOUT,
        peer.call_tool(request(tool, args)),
    )
    .await
    .unwrap_or_else(|_| panic!("{tool} timed out"))
    .unwrap_or_else(|err| panic!("{tool} failed at the protocol level: {err}"));
    let structured = result.structured_content.unwrap_or(Value::Null);
    assert!(
        result.is_error != Some(true) && structured["status"] == "ok",
        "{tool} {} returned an error: {structured}",
        shown.chars().take(300).collect::<String>()
    );
    with_page(structured)
}

fn number_of(display: &Value) -> usize {
    display
        .as_str()
        .and_then(|s| s.strip_prefix(KEY))
        .and_then(|s| s.strip_prefix('-'))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("not a ticket number: {display}"))
}

// ---- the database ---------------------------------------------------------------------------

/// The release binary (built by `cargo bench`, or here when it is missing).
fn server_binary() -> PathBuf {
    bench::release_binary(option_env!("CARGO_BIN_EXE_jility"), "jility", "jility")
}

async fn start(bin: &Path, root: &Path) -> McpProcess {
    McpProcess::spawn_bin(bin, &["--mcp-server"], root, &[("JILITY_ACTOR", ACTOR)])
        .await
        .expect("start jility --mcp-server")
}

/// Cargo's target directory, without `..` in it (for the messages).
fn target_dir() -> PathBuf {
    let dir = bench::target_dir();
    dir.canonicalize().unwrap_or(dir)
}

fn cache_dir() -> PathBuf {
    target_dir()
        .join("jility-bench")
        .join(format!("v{DB_VERSION}"))
}

/// The database files (`data.db`, and `data.db-wal` if the server left one) in `dir`.
fn db_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|err| panic!("cannot read {}: {err}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n == "data.db" || n == "data.db-wal")
        })
        .collect();
    files.sort();
    files
}

/// Run `requests` through one server, `BUILD_WINDOW` in flight; returns how many ran.
async fn pipeline(
    mcp: &McpProcess,
    requests: impl Iterator<Item = (&'static str, Value)>,
    progress: &str,
    every: usize,
) -> usize {
    let mut inflight = JoinSet::new();
    let mut sent = 0;
    let started = Instant::now();
    for (tool, args) in requests {
        if inflight.len() >= BUILD_WINDOW {
            inflight.join_next().await.unwrap().unwrap();
        }
        let peer = mcp.peer().clone();
        inflight.spawn(async move {
            call_peer(&peer, tool, args).await;
        });
        sent += 1;
        if sent % every == 0 {
            eprintln!("  {progress}: {sent} calls, {:.0?}", started.elapsed());
        }
    }
    while let Some(done) = inflight.join_next().await {
        done.unwrap();
    }
    sent
}

/// Build the database through the product in `dir/.jility/data.db`.
async fn build_database(bin: &Path, plan: &Plan, dir: &Path) {
    let mcp = start(bin, dir).await;
    let mut calls = 0;
    // Tickets: chunk by chunk, the backlog ones in batches, the others one by one.
    let requests = plan.tickets.chunks(CHUNK).flat_map(|chunk| {
        let backlog: Vec<&Planned> = chunk.iter().filter(|t| t.status == "backlog").collect();
        let batches: Vec<(&'static str, Value)> = backlog
            .chunks(BATCH)
            .map(|batch| {
                let items: Vec<Value> = batch.iter().map(|t| t.args(false)).collect();
                ("jility_create_tickets_batch", json!({"tickets": items}))
            })
            .collect();
        let singles = chunk
            .iter()
            .filter(|t| t.status != "backlog")
            .map(|t| ("jility_create_ticket", t.args(true)));
        batches.into_iter().chain(singles)
    });
    calls += pipeline(&mcp, requests, "tickets", 10_000).await;
    let comments = plan.comments.iter().map(|(ticket, content)| {
        (
            "jility_add_comment",
            json!({"ticket_id": format!("{KEY}-{ticket}"), "content": content}),
        )
    });
    calls += pipeline(&mcp, comments, "comments", 5_000).await;
    // Every ticket is there, numbered 1..=TICKETS.
    let page = call(&mcp, "jility_list_tickets", &json!({"limit": 1}))
        .await
        .data;
    assert_total(&page, TICKETS);
    assert_eq!(number_of(&page["tickets"][0]["number"]), TICKETS, "{page}");
    let stderr = mcp.shutdown().await;
    eprintln!(
        "  {calls} calls; server stderr: {}",
        stderr.trim().lines().last().unwrap_or("(empty)")
    );
}

/// The cached database (built now when missing): its directory and how long the build took.
fn ensure_database(bin: &Path, plan: &Plan) -> (PathBuf, String) {
    let cache = cache_dir();
    let note = cache.join("built.txt");
    if cache.join(".jility/data.db").is_file() && note.is_file() {
        let built = std::fs::read_to_string(&note).unwrap_or_default();
        eprintln!("database: cached in {} ({})", cache.display(), built.trim());
        return (cache, built.trim().to_string());
    }
    let building = cache.with_extension(format!("building-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&building);
    std::fs::create_dir_all(&building).unwrap();
    eprintln!(
        "database: building {TICKETS} tickets and {COMMENTS} comments through the product in {} …",
        building.display()
    );
    let t = Instant::now();
    bench::runtime().block_on(build_database(bin, plan, &building));
    let took = t.elapsed();
    let built = format!(
        "built through the MCP server in {:.0} s on {}, {}",
        took.as_secs_f64(),
        chrono::Utc::now().format("%Y-%m-%d"),
        machine()
    );
    std::fs::write(building.join("built.txt"), format!("{built}\n")).unwrap();
    let _ = std::fs::remove_dir_all(&cache);
    std::fs::rename(&building, &cache).unwrap();
    eprintln!("database: {built}");
    (cache, built)
}

/// A fresh copy of the cached database in a temp dir (the run never mutates the cache).
fn copy_database(cache: &Path) -> (tempfile::TempDir, u64) {
    let dir = tempfile::Builder::new()
        .prefix("jility-bench-")
        .tempdir_in(target_dir())
        .expect("create a temp dir");
    let to = dir.path().join(".jility");
    std::fs::create_dir_all(&to).unwrap();
    let mut bytes = 0;
    for file in db_files(&cache.join(".jility")) {
        bytes += std::fs::copy(&file, to.join(file.file_name().unwrap())).unwrap();
    }
    (dir, bytes)
}

// ---- the cases ------------------------------------------------------------------------------

/// The arguments of the `i`-th call of a case.
type Args = Box<dyn Fn(usize) -> Value>;
/// Checks that the answer of the `i`-th call is the real one (not an empty or degraded one).
type Check = Box<dyn Fn(usize, &Value)>;

struct Case {
    label: String,
    tool: &'static str,
    iters: usize,
    /// p50 at most this many milliseconds; `None` for a diagnostic.
    target_ms: Option<f64>,
    args: Args,
    check: Check,
}

struct Row {
    label: String,
    p50: Duration,
    p99: Duration,
    /// Mean size of the result's markdown text.
    bytes: usize,
    target_ms: Option<f64>,
}

async fn measure(mcp: &McpProcess, case: &Case, pings: &mut Vec<Duration>) -> Row {
    for i in 0..WARMUP {
        let TimedCall { data, .. } = call(mcp, case.tool, &(case.args)(i)).await;
        (case.check)(i, &data);
    }
    let mut samples = Vec::with_capacity(case.iters);
    let mut bytes = 0;
    for i in WARMUP..WARMUP + case.iters {
        pings.push(ping(mcp).await);
        let TimedCall {
            elapsed,
            data,
            text_len,
        } = call(mcp, case.tool, &(case.args)(i)).await;
        samples.push(elapsed);
        bytes += text_len;
        (case.check)(i, &data);
    }
    Row {
        label: case.label.clone(),
        p50: percentile(&samples, 0.50),
        p99: percentile(&samples, 0.99),
        bytes: bytes / case.iters,
        target_ms: case.target_ms,
    }
}

/// Ticket numbers for `jility_get_ticket`, spread over the whole database.
fn get_numbers() -> Vec<usize> {
    let mut rng = Rng(0x0067_E771);
    (0..WARMUP + ITERS).map(|_| rng.range(1, TICKETS)).collect()
}

fn cases(plan: &Plan) -> Vec<Case> {
    let numbers = get_numbers();
    let numbers_check = numbers.clone();
    let expected: Vec<usize> = LIST_LABELS.iter().map(|l| plan.active_with(l)).collect();
    let mut create_rng = Rng(0xC4EA_7E00);
    let created: Vec<Planned> = (0..WARMUP + ITERS)
        .map(|_| Planned::generate(&mut create_rng, "todo"))
        .collect();
    let titles: Vec<String> = created.iter().map(|t| t.title.clone()).collect();
    vec![
        Case {
            label: "`jility_get_ticket` (random ticket)".into(),
            tool: "jility_get_ticket",
            iters: ITERS,
            target_ms: Some(GET_TARGET_MS),
            args: Box::new(move |i| json!({"ticket_id": format!("{KEY}-{}", numbers[i])})),
            check: Box::new(move |i, data| {
                assert_eq!(number_of(&data["ticket"]["number"]), numbers_check[i]);
                assert!(data["ticket"]["description"].as_str().unwrap().len() > 100);
            }),
        },
        Case {
            label: "`jility_list_tickets` (status todo/in_progress + a label, page of 50)".into(),
            tool: "jility_list_tickets",
            iters: ITERS,
            target_ms: Some(LIST_TARGET_MS),
            args: Box::new(|i| {
                json!({
                    "status": ["todo", "in_progress"],
                    "labels": [LIST_LABELS[i % LIST_LABELS.len()]],
                })
            }),
            check: Box::new(move |i, data| {
                let label = LIST_LABELS[i % LIST_LABELS.len()];
                assert_total(data, expected[i % LIST_LABELS.len()]);
                let tickets = data["tickets"].as_array().unwrap();
                assert_eq!(tickets.len(), 50);
                for t in tickets {
                    assert!(matches!(t["status"].as_str(), Some("todo" | "in_progress")));
                    assert!(t["labels"].as_array().unwrap().iter().any(|l| l == label));
                }
                assert!(data["page"]["next_cursor"].is_string());
            }),
        },
        Case {
            label: "`jility_search_tickets` (1–2 words, 20 hits)".into(),
            tool: "jility_search_tickets",
            iters: ITERS_SEARCH,
            target_ms: Some(SEARCH_TARGET_MS),
            args: Box::new(|i| json!({"query": QUERIES[i % QUERIES.len()]})),
            check: Box::new(|_, data| {
                let total = data["page"]["total"].as_u64().unwrap() as usize;
                let hits = data["hits"].as_array().unwrap();
                assert!(total > 0, "{data}");
                assert_eq!(hits.len(), total.min(20), "{data}");
            }),
        },
        Case {
            label: "`jility_list_tickets` (no filter, page of 50; diagnostic)".into(),
            tool: "jility_list_tickets",
            iters: ITERS_DIAGNOSTIC,
            target_ms: None,
            args: Box::new(|_| json!({})),
            check: Box::new(|_, data| {
                assert_total(data, TICKETS);
                assert_eq!(number_of(&data["tickets"][0]["number"]), TICKETS);
                assert_eq!(data["tickets"].as_array().unwrap().len(), 50);
            }),
        },
        Case {
            label: "`jility_create_ticket` (status todo, ~0.5 KiB description)".into(),
            tool: "jility_create_ticket",
            iters: ITERS,
            target_ms: Some(CREATE_TARGET_MS),
            args: Box::new(move |i| created[i].args(true)),
            check: Box::new(move |i, data| {
                assert_eq!(data["ticket"]["title"], titles[i].as_str());
                assert_eq!(data["ticket"]["status"], "todo");
            }),
        },
    ]
}

/// Per query of the search case: the number of matches and the p50 of its calls.
async fn search_detail(mcp: &McpProcess) -> Vec<(&'static str, u64, Duration)> {
    let mut out = Vec::new();
    for query in QUERIES {
        let mut samples = Vec::new();
        let mut total = 0;
        for _ in 0..20 {
            let c = call(mcp, "jility_search_tickets", &json!({"query": query})).await;
            total = c.data["page"]["total"].as_u64().unwrap();
            samples.push(c.elapsed);
        }
        out.push((*query, total, percentile(&samples, 0.5)));
    }
    out
}

// ---- concurrent writers ---------------------------------------------------------------------

struct Load {
    processes: usize,
    wall: Duration,
    p50: Duration,
    p99: Duration,
    /// The numbers the creates returned, per process.
    numbers: Vec<Vec<usize>>,
}

fn loader(run: &str, k: usize) -> String {
    format!("{run}-{k}")
}

/// `processes` servers on the database in `root`, each sent `LOAD_CREATES` creates (one at a
/// time, as an agent does) at the same time as the others.
async fn load(bin: &Path, root: &Path, processes: usize, run: &'static str) -> Load {
    let mut servers = Vec::new();
    for _ in 0..processes {
        servers.push(start(bin, root).await);
    }
    let started = Instant::now();
    let mut tasks = JoinSet::new();
    for (k, mcp) in servers.into_iter().enumerate() {
        tasks.spawn(async move {
            let mut rng = Rng(0x10AD_0000 + k as u64);
            let mut samples = Vec::with_capacity(LOAD_CREATES);
            let mut numbers = Vec::with_capacity(LOAD_CREATES);
            for _ in 0..LOAD_CREATES {
                let mut t = Planned::generate(&mut rng, "todo");
                t.assignees = vec![];
                let mut args = t.args(true);
                args["assignees"] = json!([loader(run, k)]);
                let c = call(&mcp, "jility_create_ticket", &args).await;
                samples.push(c.elapsed);
                numbers.push(number_of(&c.data["ticket"]["number"]));
            }
            let wall = started.elapsed();
            mcp.shutdown().await;
            (k, wall, samples, numbers)
        });
    }
    let mut results = Vec::new();
    while let Some(done) = tasks.join_next().await {
        results.push(done.unwrap());
    }
    results.sort_by_key(|r| r.0);
    let wall = results.iter().map(|r| r.1).max().unwrap();
    let samples: Vec<Duration> = results.iter().flat_map(|r| r.2.iter().copied()).collect();
    Load {
        processes,
        wall,
        p50: percentile(&samples, 0.50),
        p99: percentile(&samples, 0.99),
        numbers: results.into_iter().map(|r| r.3).collect(),
    }
}

/// Listings count exactly up to this many matches, then answer `total_exact: false`.
const COUNT_CAP: usize = 10_000;

/// A listing's `total` for `expected` matching tickets.
fn assert_total(page: &Value, expected: usize) {
    // `total_exact` is only sent (as false) when the count stopped at its cap.
    assert_eq!(page["page"]["total"], expected.min(COUNT_CAP), "{page}");
    let exact = page["page"]
        .get("total_exact")
        .cloned()
        .unwrap_or(json!(true));
    assert_eq!(exact, expected <= COUNT_CAP, "{page}");
}

/// Every ticket number, by paging through `jility_list_tickets` (newest first); and the page
/// count.
async fn list_all(mcp: &McpProcess, filter: Value) -> (Vec<usize>, usize, usize) {
    let mut numbers = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    let mut total = None;
    loop {
        let mut args = filter.clone();
        args["limit"] = json!(PAGE);
        if let Some(c) = &cursor {
            args["cursor"] = json!(c);
        }
        let page = call(mcp, "jility_list_tickets", &args).await.data;
        pages += 1;
        let page_total = page["page"]["total"].as_u64().unwrap() as usize;
        assert_eq!(*total.get_or_insert(page_total), page_total, "total moved");
        numbers.extend(
            page["tickets"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| number_of(&t["number"])),
        );
        match page["page"]["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_string()),
            None => break,
        }
    }
    (numbers, total.unwrap_or(0), pages)
}

struct Verified {
    listed: usize,
    pages: usize,
    took: Duration,
    /// The numbers of the concurrent run, lowest and highest.
    span: (usize, usize),
}

/// No ticket lost: every number 1..=expected listed once, the load runs' numbers among them,
/// the concurrent run's numbers contiguous.
async fn verify(bin: &Path, root: &Path, expected: usize, loads: &[&Load]) -> Verified {
    let mcp = start(bin, root).await;
    let t = Instant::now();
    let (numbers, total, pages) = list_all(&mcp, json!({})).await;
    let took = t.elapsed();
    assert_eq!(total, expected.min(COUNT_CAP), "total of the listing");
    assert_eq!(numbers.len(), expected, "tickets listed");
    let unique: HashSet<usize> = numbers.iter().copied().collect();
    assert_eq!(unique.len(), numbers.len(), "a number is listed twice");
    assert_eq!(
        (*unique.iter().min().unwrap(), *unique.iter().max().unwrap()),
        (1, expected),
        "the numbers are not 1..={expected}"
    );
    for load in loads {
        let created: Vec<usize> = load.numbers.iter().flatten().copied().collect();
        let distinct: HashSet<usize> = created.iter().copied().collect();
        assert_eq!(
            distinct.len(),
            load.processes * LOAD_CREATES,
            "a number twice"
        );
        assert!(
            created.iter().all(|n| unique.contains(n)),
            "a created ticket is missing"
        );
        let (lo, hi) = (
            *distinct.iter().min().unwrap(),
            *distinct.iter().max().unwrap(),
        );
        assert_eq!(hi - lo + 1, distinct.len(), "the load's numbers have gaps");
    }
    // And each process's tickets are listed under its assignee.
    let last = loads.last().unwrap();
    for (k, numbers) in last.numbers.iter().enumerate() {
        let (listed, total, _) = list_all(
            &mcp,
            json!({"assignee": loader("load", k), "status": ["todo"]}),
        )
        .await;
        assert_eq!(total, LOAD_CREATES);
        let mut listed = listed;
        listed.sort_unstable();
        let mut created = numbers.clone();
        created.sort_unstable();
        assert_eq!(listed, created, "process {k}'s tickets");
    }
    mcp.shutdown().await;
    let all: Vec<usize> = last.numbers.iter().flatten().copied().collect();
    Verified {
        listed: numbers.len(),
        pages,
        took,
        span: (*all.iter().min().unwrap(), *all.iter().max().unwrap()),
    }
}

// ---- main -----------------------------------------------------------------------------------

fn main() {
    let started = Instant::now();
    let bin = server_binary();
    let t = Instant::now();
    let plan = Plan::generate();
    eprintln!(
        "plan: {TICKETS} tickets, {COMMENTS} comments, generated in {:.1?}",
        t.elapsed()
    );
    let (cache, built) = ensure_database(&bin, &plan);
    let t = Instant::now();
    let (dir, db_bytes) = copy_database(&cache);
    let copied = t.elapsed();
    eprintln!(
        "copied {} to {} in {copied:.1?}",
        mib(db_bytes / 1024),
        dir.path().display()
    );
    let report = bench::runtime().block_on(run(&bin, dir.path(), &plan, &built, db_bytes));
    println!("{report}");
    eprintln!("{}", bench::write_report("jility-bench.md", &report));
    eprintln!("total time {:.1?}", started.elapsed());
}

async fn run(bin: &Path, root: &Path, plan: &Plan, built: &str, db_bytes: u64) -> String {
    let t = Instant::now();
    let mcp = start(bin, root).await;
    let startup = t.elapsed();
    let pid = mcp.pid().expect("the server's pid");
    let first_call = call(
        &mcp,
        "jility_get_ticket",
        &json!({"ticket_id": format!("{KEY}-1")}),
    )
    .await
    .elapsed;

    let mut pings = Vec::new();
    let mut rows = Vec::new();
    let mut detail = Vec::new();
    for case in cases(plan) {
        let t = Instant::now();
        rows.push(measure(&mcp, &case, &mut pings).await);
        eprintln!("{}: {:.1?}", case.label, t.elapsed());
        if case.tool == "jility_search_tickets" {
            detail = search_detail(&mcp).await;
        }
    }
    let memory = bench::read_memory(pid);
    let stderr = mcp.shutdown().await;
    let ping_p50 = percentile(&pings, 0.50);
    let ping_p99 = percentile(&pings, 0.99);
    let after_latency = TICKETS + WARMUP + ITERS;

    let t = Instant::now();
    let solo = load(bin, root, 1, "solo").await;
    eprintln!("1 process × {LOAD_CREATES} creates: {:.1?}", t.elapsed());
    let t = Instant::now();
    let many = load(bin, root, LOAD_PROCESSES, "load").await;
    eprintln!(
        "{LOAD_PROCESSES} processes × {LOAD_CREATES} creates: {:.1?}",
        t.elapsed()
    );
    let expected = after_latency + LOAD_CREATES * (1 + LOAD_PROCESSES);
    let verified = verify(bin, root, expected, &[&solo, &many]).await;
    eprintln!(
        "verified {} tickets in {:.1?}",
        verified.listed, verified.took
    );
    let db_after: u64 = db_files(&root.join(".jility"))
        .iter()
        .map(|f| std::fs::metadata(f).map_or(0, |m| m.len()))
        .sum();

    // ---- the report
    let mut out = String::new();
    let statuses = plan
        .by_status()
        .iter()
        .map(|(s, n)| format!("{s} {n}"))
        .collect::<Vec<_>>()
        .join(", ");
    let assigned = plan
        .tickets
        .iter()
        .filter(|t| !t.assignees.is_empty())
        .count();
    let commented: HashSet<usize> = plan.comments.iter().map(|c| c.0).collect();
    let mean_description = plan
        .tickets
        .iter()
        .map(|t| t.description.len())
        .sum::<usize>()
        / TICKETS;
    writeln!(
        out,
        "jility stdio benchmark: {TICKETS} tickets ({statuses}), 1–3 labels each from {} \
         labels, {assigned} with assignees, descriptions of {mean_description} bytes on average; \
         {COMMENTS} comments on {} tickets. Database {} ({built}); each run works on a fresh \
         copy. Machine: {}.\n\
         {WARMUP} warm-up calls per tool, then {ITERS} calls ({ITERS_SEARCH} for search), each \
         preceded by a `ping`. Latency: request sent to result decoded by the rmcp client. \
         Result size: the markdown text of the result (the envelope travels beside it as \
         `structuredContent`).\n",
        LABELS.len(),
        commented.len(),
        mib(db_bytes / 1024),
        machine(),
    )
    .unwrap();
    writeln!(
        out,
        "| tool | p50 | p99 | p50 / ping p50 | result size | target | met? |"
    )
    .unwrap();
    writeln!(out, "|---|---:|---:|---:|---:|---|---|").unwrap();
    writeln!(
        out,
        "| `ping` ({} round trips) | {} | {} | 1.00× | — | — | — |",
        pings.len(),
        ms(ping_p50),
        ms(ping_p99)
    )
    .unwrap();
    for row in &rows {
        let ratio = row.p50.as_secs_f64() / ping_p50.as_secs_f64();
        let (target, met) = match row.target_ms {
            Some(max) => (
                format!("p50 ≤ {max} ms"),
                met(row.p50.as_secs_f64() * 1e3 <= max),
            ),
            None => ("—".to_string(), "—"),
        };
        writeln!(
            out,
            "| {} | {} | {} | {ratio:.1}× | {:.1} KiB | {target} | {met} |",
            row.label,
            ms(row.p50),
            ms(row.p99),
            row.bytes as f64 / 1024.0,
        )
        .unwrap();
    }
    writeln!(
        out,
        "\nListing filters: status todo or in_progress, and one of the labels {} in turn \
         ({} matching tickets).",
        LIST_LABELS
            .iter()
            .map(|l| format!("`{l}`"))
            .collect::<Vec<_>>()
            .join(", "),
        LIST_LABELS
            .iter()
            .map(|l| plan.active_with(l).to_string())
            .collect::<Vec<_>>()
            .join(", ")
    )
    .unwrap();
    writeln!(
        out,
        "\n| search query | matching tickets | p50 (20 calls) |\n|---|---:|---:|"
    )
    .unwrap();
    for (query, total, p50) in &detail {
        writeln!(out, "| `{query}` | {total} | {} |", ms_scaled(*p50)).unwrap();
    }
    writeln!(
        out,
        "\nStartup (spawn + initialize): {}. First call (`jility_get_ticket TASK-1`): {}. \
         Server VmRSS after the runs: {} (peak {}).",
        ms(startup),
        ms(first_call),
        memory.map_or("?".into(), |m| mib(m.rss)),
        memory.map_or("?".into(), |m| mib(m.peak)),
    )
    .unwrap();

    writeln!(
        out,
        "\n**Concurrent writers** (each process is an MCP server on the same database, sent \
         {LOAD_CREATES} `jility_create_ticket` calls one after another; the processes run at \
         the same time):\n"
    )
    .unwrap();
    writeln!(
        out,
        "| processes × creates | wall | tickets/s | call p50 | call p99 |\n|---|---:|---:|---:|---:|"
    )
    .unwrap();
    for l in [&solo, &many] {
        let n = l.processes * LOAD_CREATES;
        writeln!(
            out,
            "| {} × {LOAD_CREATES} | {} | {:.0} | {} | {} |",
            l.processes,
            ms_scaled(l.wall),
            n as f64 / l.wall.as_secs_f64(),
            ms(l.p50),
            ms(l.p99)
        )
        .unwrap();
    }
    writeln!(
        out,
        "\nNone lost: paging through every ticket with `jility_list_tickets` ({} pages of \
         {PAGE}, {}) lists {} tickets, numbered {KEY}-1 to {KEY}-{} each once; the {} numbers \
         of the concurrent run are {KEY}-{} to {KEY}-{} (contiguous), and each process's \
         {LOAD_CREATES} tickets are listed under its assignee. Database after the run: {}.",
        verified.pages,
        ms_scaled(verified.took),
        verified.listed,
        expected,
        LOAD_PROCESSES * LOAD_CREATES,
        verified.span.0,
        verified.span.1,
        mib(db_after / 1024),
    )
    .unwrap();
    let stderr: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    if !stderr.is_empty() {
        writeln!(out, "\nServer stderr:\n```\n{}\n```", stderr.join("\n")).unwrap();
    }
    out
}
