//! What the jility benchmarks share (`benches/stdio.rs`, local mode, and `benches/cloud.rs`,
//! the cloud API and its bridge): the deterministic generator of a realistic 100,000-ticket
//! database, the builder that creates it through any MCP server speaking jility's tools (a
//! local `jility --mcp-server`, or the cloud bridge), the cached local database, timed tool
//! calls measured against `ping`, the concurrent writers and the check that none of their
//! tickets is lost.
//!
//! Included by each benchmark with `mod support;`; each uses part of it.
#![allow(dead_code)]

use std::{
    collections::{BTreeMap, HashSet},
    fmt::Write as _,
    path::{Path, PathBuf},
    time::{Duration, Instant},
};

use mcp_testkit::{
    McpProcess,
    bench::{self, Rng, TimedCall, machine, percentile, ping},
};
use rmcp::{RoleClient, model::CallToolRequestParams, service::Peer};
use serde_json::{Value, json};
use tokio::task::JoinSet;

// ---- sizes ----------------------------------------------------------------------------------

/// The version of the cached database: bump it when the generator below changes. (A cached
/// database from before a schema migration is upgraded by the server, on each run's copy.)
pub const DB_VERSION: u32 = 2;
pub const TICKETS: usize = 100_000;
pub const COMMENTS: usize = 20_000;
/// Most tickets per `jility_create_tickets_batch` call (the tool's limit).
pub const BATCH: usize = 200;
/// The plan is created in chunks of this many tickets: the backlog ones of a chunk in one batch,
/// the others one by one with their status, so that statuses interleave in time.
pub const CHUNK: usize = 400;
/// Requests in flight while building the database (pipelined on one connection).
pub const BUILD_WINDOW: usize = 16;

/// Warm-up calls of a latency case, then measured calls.
pub const WARMUP: usize = 50;
pub const ITERS: usize = 500;
pub const ITERS_SEARCH: usize = 300;

/// Concurrent writers: so many processes, each sent so many creates.
pub const LOAD_PROCESSES: usize = 4;
pub const LOAD_CREATES: usize = 1_000;
/// The page size when listing every ticket to check that none is lost (the tool's maximum).
pub const PAGE: usize = 200;

pub const KEY: &str = "TASK";
pub const ACTOR: &str = "bench";

// ---- a deterministic generator --------------------------------------------------------------

// ---- vocabulary -----------------------------------------------------------------------------

/// Statuses of the planned tickets, weighted as in a tracker that has been used for a while.
pub const STATUSES: &[(&str, u32)] = &[
    ("done", 46),
    ("backlog", 25),
    ("todo", 12),
    ("in_progress", 8),
    ("review", 5),
    ("blocked", 4),
];

pub const LABELS: &[(&str, u32)] = &[
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

pub const TEAM: &[&str] = &[
    "alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy", "agent-1",
    "agent-2", "agent-3", "agent-4",
];

pub const AREAS: &[&str] = &[
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

pub const SYMPTOMS: &[&str] = &[
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

pub const CONDITIONS: &[&str] = &[
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

pub const FEATURES: &[&str] = &[
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

pub const DEPENDENCIES: &[&str] = &[
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

pub const MODULES: &[&str] = &[
    "request handler",
    "retry logic",
    "serializer",
    "query builder",
    "config loader",
    "state machine",
    "error handling",
    "test fixtures",
];

pub const CAUSES: &[&str] = &[
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

pub const EVIDENCE: &[&str] = &[
    "`connection reset by peer`",
    "repeated `429 Too Many Requests` responses",
    "`deadline exceeded` errors",
    "GC pauses over 2 seconds",
    "lock wait timeouts",
    "a spike in 5xx responses",
    "`invalid token` warnings",
    "out-of-memory kills",
];

pub const GOALS: &[&str] = &[
    "work faster",
    "audit changes",
    "share results with their team",
    "recover from mistakes",
    "meet compliance requirements",
    "automate their workflow",
];

pub const TEAMS: &[&str] = &[
    "payments",
    "growth",
    "platform",
    "mobile",
    "data",
    "identity",
    "support tooling",
];

pub const PLANS: &[&str] = &["free", "team", "business", "enterprise"];

pub const BROWSERS: &[&str] = &["Firefox", "Chrome", "Safari", "Edge", "the Android app"];

/// The queries of `jility_search_tickets`: what someone looking for a ticket types, from common
/// words to rare ones.
pub const QUERIES: &[&str] = &[
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

pub fn capitalize(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Bug,
    Feature,
    Chore,
    Spike,
}

/// A ticket to create.
pub struct Planned {
    pub title: String,
    pub description: String,
    pub status: &'static str,
    pub story_points: Option<u8>,
    pub assignees: Vec<&'static str>,
    pub labels: Vec<&'static str>,
}

impl Planned {
    pub fn generate(rng: &mut Rng, status: &'static str) -> Self {
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
    pub fn args(&self, with_status: bool) -> Value {
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

pub fn sentence(rng: &mut Rng, area: &str, symptom: &str, feature: &str) -> String {
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

pub fn description(rng: &mut Rng, kind: Kind, area: &str, symptom: &str, feature: &str) -> String {
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

pub fn comment(rng: &mut Rng) -> String {
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
pub struct Plan {
    pub tickets: Vec<Planned>,
    /// `(ticket number, content)`.
    pub comments: Vec<(usize, String)>,
}

impl Plan {
    pub fn generate() -> Self {
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
    pub fn active_with(&self, label: &str) -> usize {
        self.tickets
            .iter()
            .filter(|t| matches!(t.status, "todo" | "in_progress") && t.labels.contains(&label))
            .count()
    }

    pub fn by_status(&self) -> BTreeMap<&'static str, usize> {
        let mut counts = BTreeMap::new();
        for t in &self.tickets {
            *counts.entry(t.status).or_default() += 1;
        }
        counts
    }
}

// ---- requests -------------------------------------------------------------------------------

pub fn request(tool: &str, args: Value) -> CallToolRequestParams {
    let Value::Object(map) = args else {
        panic!("arguments of {tool} must be an object: {args}");
    };
    CallToolRequestParams::new(tool.to_string()).with_arguments(map)
}

/// Call `tool` through `peer` (untimed, for building and loading); panics on an error result.
/// `mcp_testkit::bench::call`, keeping a list's `page` as `data.page` (the kit's drops it):
/// one timed `tools/call` that must succeed.
pub async fn call(mcp: &McpProcess, tool: &str, args: &Value) -> TimedCall {
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
pub fn with_page(mut structured: Value) -> Value {
    let page = structured["page"].take();
    let mut data = structured["data"].take();
    if !page.is_null()
        && let Some(members) = data.as_object_mut()
    {
        members.insert("page".to_string(), page);
    }
    data
}

pub async fn call_peer(peer: &Peer<RoleClient>, tool: &str, args: Value) -> Value {
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

pub fn number_of(display: &Value) -> usize {
    display
        .as_str()
        .and_then(|s| s.strip_prefix(KEY))
        .and_then(|s| s.strip_prefix('-'))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("not a ticket number: {display}"))
}

// ---- the database ---------------------------------------------------------------------------

/// The release binary (built by `cargo bench`, or here when it is missing).
pub fn server_binary() -> PathBuf {
    bench::release_binary(option_env!("CARGO_BIN_EXE_jility"), "jility", "jility")
}

pub async fn start(bin: &Path, root: &Path) -> McpProcess {
    McpProcess::spawn_bin(bin, &["--mcp-server"], root, &[("JILITY_ACTOR", ACTOR)])
        .await
        .expect("start jility --mcp-server")
}

/// Cargo's target directory, without `..` in it (for the messages).
pub fn target_dir() -> PathBuf {
    let dir = bench::target_dir();
    dir.canonicalize().unwrap_or(dir)
}

pub fn cache_dir() -> PathBuf {
    target_dir()
        .join("jility-bench")
        .join(format!("v{DB_VERSION}"))
}

/// The database files (`data.db`, and `data.db-wal` if the server left one) in `dir`.
pub fn db_files(dir: &Path) -> Vec<PathBuf> {
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
pub async fn pipeline(
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
pub async fn build_database(bin: &Path, plan: &Plan, dir: &Path) {
    let mcp = start(bin, dir).await;
    let calls = build(&mcp, plan).await;
    let stderr = mcp.shutdown().await;
    eprintln!(
        "  {calls} calls; server stderr: {}",
        stderr.trim().lines().last().unwrap_or("(empty)")
    );
}

/// Create everything `plan` holds through `mcp` (an MCP server with jility's tools, on an
/// empty tracker), `BUILD_WINDOW` calls in flight, then check that every ticket is there;
/// returns how many calls it took.
pub async fn build(mcp: &McpProcess, plan: &Plan) -> usize {
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
    calls += pipeline(mcp, requests, "tickets", 10_000).await;
    let comments = plan.comments.iter().map(|(ticket, content)| {
        (
            "jility_add_comment",
            json!({"ticket_id": format!("{KEY}-{ticket}"), "content": content}),
        )
    });
    calls += pipeline(mcp, comments, "comments", 5_000).await;
    // Every ticket is there, numbered 1..=TICKETS.
    let page = call(mcp, "jility_list_tickets", &json!({"limit": 1}))
        .await
        .data;
    assert_total(&page, TICKETS);
    assert_eq!(number_of(&page["tickets"][0]["number"]), TICKETS, "{page}");
    calls
}

/// The cached database (built now when missing): its directory and how long the build took.
pub fn ensure_database(bin: &Path, plan: &Plan) -> (PathBuf, String) {
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
pub fn copy_database(cache: &Path) -> (tempfile::TempDir, u64) {
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
pub type Args = Box<dyn Fn(usize) -> Value>;
/// Checks that the answer of the `i`-th call is the real one (not an empty or degraded one).
pub type Check = Box<dyn Fn(usize, &Value)>;

pub struct Case {
    pub label: String,
    pub tool: &'static str,
    pub iters: usize,
    /// p50 at most this many milliseconds; `None` for a diagnostic.
    pub target_ms: Option<f64>,
    pub args: Args,
    pub check: Check,
}

pub struct Row {
    pub label: String,
    pub p50: Duration,
    pub p99: Duration,
    /// Mean size of the result's markdown text.
    pub bytes: usize,
    pub target_ms: Option<f64>,
}

pub async fn measure(mcp: &McpProcess, case: &Case, pings: &mut Vec<Duration>) -> Row {
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

// ---- concurrent writers ---------------------------------------------------------------------

pub struct Load {
    pub processes: usize,
    pub wall: Duration,
    pub p50: Duration,
    pub p99: Duration,
    /// The numbers the creates returned, per process.
    pub numbers: Vec<Vec<usize>>,
}

pub fn loader(run: &str, k: usize) -> String {
    format!("{run}-{k}")
}

/// `processes` servers on the database in `root`, each sent `LOAD_CREATES` creates (one at a
/// time, as an agent does) at the same time as the others.
pub async fn load(bin: &Path, root: &Path, processes: usize, run: &'static str) -> Load {
    let mut servers = Vec::new();
    for _ in 0..processes {
        servers.push(start(bin, root).await);
    }
    load_on(servers, run).await
}

/// Each of `servers` (started and initialized) sent `LOAD_CREATES` creates (one at a time,
/// as an agent does, assigned to `loader(run, k)`) at the same time as the others; each is
/// shut down when done. The clock starts when the first create is sent.
pub async fn load_on(servers: Vec<McpProcess>, run: &'static str) -> Load {
    let processes = servers.len();
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
pub const COUNT_CAP: usize = 10_000;

/// A listing's `total` for `expected` matching tickets.
pub fn assert_total(page: &Value, expected: usize) {
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
pub async fn list_all(mcp: &McpProcess, filter: Value) -> (Vec<usize>, usize, usize) {
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

pub struct Verified {
    pub listed: usize,
    pub pages: usize,
    pub took: Duration,
    /// The numbers of the concurrent run, lowest and highest.
    pub span: (usize, usize),
}

/// No ticket lost: every number 1..=expected listed once, the load runs' numbers among them,
/// the concurrent run's numbers contiguous.
pub async fn verify(bin: &Path, root: &Path, expected: usize, loads: &[&Load]) -> Verified {
    let mcp = start(bin, root).await;
    let verified = verify_on(&mcp, expected, loads).await;
    mcp.shutdown().await;
    verified
}

/// [`verify`] through `mcp`: every ticket listed with `jility_list_tickets`, pages of
/// [`PAGE`]; the last load's tickets by its assignees (run `load`).
pub async fn verify_on(mcp: &McpProcess, expected: usize, loads: &[&Load]) -> Verified {
    let t = Instant::now();
    let (numbers, total, pages) = list_all(mcp, json!({})).await;
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
            mcp,
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
    let all: Vec<usize> = last.numbers.iter().flatten().copied().collect();
    Verified {
        listed: numbers.len(),
        pages,
        took,
        span: (*all.iter().min().unwrap(), *all.iter().max().unwrap()),
    }
}
