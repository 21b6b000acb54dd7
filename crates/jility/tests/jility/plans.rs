//! Every statement `jility serve` runs to answer requests examines about as many rows as it
//! returns, whatever PostgreSQL's statistics say: on a database where a workspace was
//! imported through `POST /api/v1/tickets/batch` a moment before and nothing was ever
//! analysed (the server's generic plans made while the tables were empty), and on tables
//! skewed between tenants (one large workspace beside many small ones, analysed, the plans
//! made by a server started on them).
//!
//! The plans are PostgreSQL's own, of every statement the server ran: a private cluster
//! (`initdb`, as `outage.rs`) logs each with `auto_explain` (JSON, actual row counts), and
//! each plan is judged: the rows its scans read (kept or filtered out) and its joins
//! discarded against the rows it returned. A plan that reads a project's tickets to return
//! three — the generic plan that turned `number = ANY($3)` into a filter after a bulk
//! import, at 15% of `pgbench -S` — fails it. Counting (a listing's total, up to its cap)
//! may read what it counts.
//!
//! No statement may be compiled (JIT): that costs far more than running one of them.
//!
//! Statements run inside functions (the context refresher's) are judged too.
//!
//! Requests: whole tickets by number (concurrently, so reads are batched) and by UUID,
//! listings (no filter, each status as the board's columns ask, a label, an assignee,
//! unassigned, a parent), search (common and rare words), the query language (a listing by
//! qualifiers), planning (the epic list, an epic,
//! the sprint list, the active sprint's stats, a planned sprint's plan), each with the token check and
//! the rate limit every request runs. Without initdb the test says so and passes (as
//! `outage.rs`).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stderr
)] // assertions in tests; the worst plans go to stderr

use std::collections::BTreeMap;

use jility_cloud::auth::Tokens;
use reqwest::Method;
use serde_json::{Value, json};

use crate::cloud::{self, Server};
use crate::outage::{Cluster, pg_bin};
use crate::pg::TestDb;

/// What the cluster logs: every statement's plan as run, with row counts but no timing.
const SETTINGS: &str = "
session_preload_libraries = 'auto_explain'
auto_explain.log_min_duration = 0
auto_explain.log_analyze = on
auto_explain.log_timing = off
auto_explain.log_format = json
auto_explain.log_nested_statements = on
autovacuum = off
log_line_prefix = '%m [%p] app=%a '
";

/// Tickets of the imported workspace, and small workspaces beside it (of `SMALL_TICKETS`).
const IMPORTED: usize = 6_000;
const SMALL_WORKSPACES: usize = 60;
const SMALL_TICKETS: usize = 20;

/// A listing counts what matches up to this many ([`jility_core::store::COUNT_CAP`] + 1).
const COUNTED: u64 = jility_core::store::COUNT_CAP as u64 + 1;

#[test]
fn request_statements_read_about_what_they_return_before_statistics_and_when_skewed() {
    let Some(bin) = pg_bin() else {
        eprintln!("SKIPPED: no initdb (set PG_BIN_DIR or install PostgreSQL's server)");
        return;
    };
    let cluster = Cluster::create_with(bin, SETTINGS);
    let db = TestDb::on(&cluster.url());
    let tokens = Tokens::new(&db.connect());
    let (_, big) = cloud::workspace(&tokens, "big");
    let unlimited = ["--rate-limit", "1000000"];
    let env = [("JILITY_WORKSPACE_RATE_LIMIT", "1000000")];
    let server = Server::start_with(&db, "127.0.0.1:0", &unlimited, &env);
    let client = cloud::client();

    // A new user's first requests: the server's statements are planned on empty tables.
    let ask = |server: &Server, token: &str, path: &str| {
        cloud::call(&client, server, Method::GET, path, Some(token), None)
    };
    for path in request_paths(1) {
        ask(&server, &big, &path);
    }
    // The import, then at once everything again: nothing was analysed.
    import(&client, &server, &big, IMPORTED, true);
    plan(&client, &server, &big, IMPORTED);
    let fresh = std::fs::metadata(cluster.log()).unwrap().len();
    exercise(&server, &big, IMPORTED);
    let fresh_plans = plans_since(&cluster, fresh);
    let unanalysed: i64 = db
        .client()
        .query_one(
            "SELECT count(*) FROM pg_stat_user_tables \
             WHERE last_analyze IS NOT NULL OR last_autoanalyze IS NOT NULL",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(unanalysed, 0, "no table may have been analysed yet");
    let _ = server.terminate();

    // Skewed: many small workspaces beside the big one, analysed; a server started on them.
    let mut small = Vec::new();
    let server = Server::start_with(&db, "127.0.0.1:0", &unlimited, &env);
    for i in 0..SMALL_WORKSPACES {
        let (_, token) = cloud::workspace(&tokens, &format!("small{i}"));
        import(&client, &server, &token, SMALL_TICKETS, false);
        plan(&client, &server, &token, SMALL_TICKETS);
        small.push(token);
    }
    let _ = server.terminate();
    db.client().batch_execute("ANALYZE").unwrap();
    let server = Server::start_with(&db, "127.0.0.1:0", &unlimited, &env);
    let skewed = std::fs::metadata(cluster.log()).unwrap().len();
    exercise(&server, &big, IMPORTED);
    for token in small.iter().take(10) {
        exercise(&server, token, SMALL_TICKETS);
    }
    exercise(&server, &big, IMPORTED);
    let skewed_plans = plans_since(&cluster, skewed);
    let _ = server.terminate();

    // The JIT check can fail: a statement this cluster compiles is seen as compiled.
    let probe = std::fs::metadata(cluster.log()).unwrap().len();
    let mut config: postgres::Config = db.url.parse().unwrap();
    let mut jit = config
        .application_name("jility-jit-probe")
        .connect(postgres::NoTls)
        .unwrap();
    let available: bool = jit
        .query_one("SELECT pg_jit_available()", &[])
        .unwrap()
        .get(0);
    jit.batch_execute("SET jit = on; SET jit_above_cost = 0; SELECT count(*) FROM tickets")
        .unwrap();
    drop(jit);
    let probed = compiled(&plans_since(&cluster, probe)).len();
    match available {
        true => assert_eq!(
            probed, 1,
            "a JIT-compiled statement was not seen as compiled"
        ),
        false => eprintln!("this PostgreSQL has no JIT: the JIT check was not probed"),
    }

    for (case, plans) in [("fresh import", &fresh_plans), ("skewed", &skewed_plans)] {
        let judged: Vec<Judged> = plans.iter().map(judge).collect();
        let statements: BTreeMap<&str, usize> =
            judged.iter().fold(BTreeMap::new(), |mut seen, j| {
                *seen.entry(j.query.as_str()).or_default() += 1;
                seen
            });
        eprintln!(
            "{case}: {} plans of {} statements",
            judged.len(),
            statements.len()
        );
        // The statements the requests must have run (a whole-ticket read, batched or not;
        // a listing's page and count; search; the planning reads, the active sprint's kept
        // figures among them).
        for needle in [
            "unnest($1::bigint[]",
            "count(*)",
            "ts_rank",
            "t.kind = 'epic'",
            "FROM sprint_days",
            "t.project_id = $2 AND t.kind = 'ticket'",
        ] {
            assert!(
                judged.iter().any(|j| j.query.contains(needle)),
                "{case}: no statement containing {needle:?} was run"
            );
        }
        // Compiling a statement (JIT) costs far more than running one of these.
        let compiled = compiled(plans);
        assert!(compiled.is_empty(), "{case}: JIT-compiled: {compiled:?}");
        let mut bad: Vec<&Judged> = judged.iter().filter(|j| j.read > j.allowed).collect();
        bad.sort_by_key(|j| std::cmp::Reverse(j.read));
        bad.dedup_by(|a, b| a.query == b.query);
        for j in &bad {
            eprintln!(
                "{case}: read {} rows to return {} (allowed {}): {}",
                j.read,
                j.returned,
                j.allowed,
                mcp_common::clip(&j.query, 300)
            );
        }
        if let Some(dir) = std::env::var_os("JILITY_PLANS_DIR") {
            for (i, j) in bad.iter().enumerate() {
                let file = std::path::Path::new(&dir).join(format!("{case}-{i}.json"));
                let text = serde_json::to_string_pretty(&json!({"query": j.query, "plan": j.plan}));
                std::fs::write(file, text.unwrap()).unwrap();
            }
        }
        assert!(
            bad.is_empty(),
            "{case}: {} statements read far more rows than they return (above)",
            bad.len()
        );
    }
}

/// The GET paths of the requests: tickets by number (of `tickets`), listings, search.
fn request_paths(tickets: usize) -> Vec<String> {
    let mut paths = vec![
        "/tickets?limit=50".to_string(),
        "/tickets?label=backend&limit=20".to_string(),
        "/tickets?assignee=agent-3&limit=20".to_string(),
        "/tickets?unassigned=true&limit=20".to_string(),
        "/tickets?parent_id=TASK-1&limit=20".to_string(),
        "/search?q=cache".to_string(),
        "/search?q=ticket".to_string(),
        "/search?q=zebra%20quartz".to_string(),
        // The query language: a listing by qualifiers (newest first).
        "/tickets?q=label%3Abackend%20is%3Aopen&limit=20".to_string(),
    ];
    // The board's columns: one listing per status.
    for status in [
        "backlog",
        "todo",
        "in_progress",
        "review",
        "done",
        "blocked",
    ] {
        paths.push(format!("/tickets?status={status}&limit=25"));
    }
    for n in [1, tickets / 2, tickets] {
        paths.push(format!("/tickets/TASK-{}", n.max(1)));
    }
    // Planning: the epics [`plan`] made come after the imported tickets.
    paths.extend([
        "/epics?limit=20".to_string(),
        format!("/epics/TASK-{}", tickets + 1),
        "/sprints".to_string(),
        "/sprints/active".to_string(),
        "/sprints/Next/plan".to_string(),
    ]);
    paths
}

/// A workspace of `tickets` imported tickets planned as a team plans: two epics with a few
/// tickets each, an active sprint whose tickets moved, and a planned sprint named `Next`.
fn plan(client: &reqwest::blocking::Client, server: &Server, token: &str, tickets: usize) {
    let post = |path: &str, body: Value| {
        let answer = cloud::call(
            client,
            server,
            Method::POST,
            path,
            Some(token),
            Some(&body.to_string()),
        );
        assert!(answer.status.is_success(), "{path}: {:?}", answer.body);
    };
    post(
        "/tickets/batch",
        json!({"tickets": [
            {"title": "Epic: sign-in", "kind": "epic"},
            {"title": "Epic: billing", "kind": "epic"},
        ]}),
    );
    for n in (1..=tickets).step_by(tickets.div_ceil(12)) {
        let epic = tickets + 1 + n % 2;
        post(
            &format!("/tickets/TASK-{n}/fields"),
            json!({"epic_id": format!("TASK-{epic}")}),
        );
    }
    let today = chrono::Utc::now().date_naive();
    let day = |offset: i64| (today + chrono::Duration::days(offset)).to_string();
    post(
        "/sprints",
        json!({"name": "Now", "starts_on": day(-3), "ends_on": day(10)}),
    );
    let members: Vec<String> = (1..=tickets.min(30)).map(|n| format!("TASK-{n}")).collect();
    post("/sprints/Now/tickets", json!({"tickets": members}));
    post("/sprints/Now/start", json!({}));
    for n in 1..=tickets.min(10) {
        let status = |s: &str| json!({ "status": s });
        post(&format!("/tickets/TASK-{n}/status"), status("in_progress"));
        if n % 2 == 0 {
            post(&format!("/tickets/TASK-{n}/status"), status("done"));
        }
    }
    post(
        "/sprints",
        json!({"name": "Next", "starts_on": day(11), "ends_on": day(24), "capacity_points": 20}),
    );
}

/// Everything a workspace of `tickets` tickets is asked: the paths, tickets by UUID, and 200
/// whole-ticket reads from 8 clients at once (so that reads are batched).
fn exercise(server: &Server, token: &str, tickets: usize) {
    let client = cloud::client();
    for path in request_paths(tickets) {
        let answer = cloud::call(&client, server, Method::GET, &path, Some(token), None);
        assert!(answer.status.is_success(), "{path}: {:?}", answer.body);
    }
    let one = cloud::call(
        &client,
        server,
        Method::GET,
        "/tickets/TASK-2",
        Some(token),
        None,
    );
    let uuid = one.body["ticket"]["id"].as_str().unwrap().to_string();
    let by_uuid = format!("/tickets/{uuid}");
    let answer = cloud::call(&client, server, Method::GET, &by_uuid, Some(token), None);
    assert!(answer.status.is_success(), "{:?}", answer.body);
    std::thread::scope(|scope| {
        for worker in 0..8usize {
            scope.spawn(move || {
                let client = cloud::client();
                for i in 0..25usize {
                    let n = (worker * 7919 + i * 104_729) % tickets + 1;
                    let path = format!("/tickets/TASK-{n}");
                    let answer =
                        cloud::call(&client, server, Method::GET, &path, Some(token), None);
                    assert!(answer.status.is_success(), "{path}: {:?}", answer.body);
                }
            });
        }
    });
}

/// `count` tickets created through the batch API (200 a request), the way a team imports
/// its backlog: labels, assignees, points, statuses spread, some with a parent.
fn import(
    client: &reqwest::blocking::Client,
    server: &Server,
    token: &str,
    count: usize,
    parents: bool,
) {
    let words = [
        "cache", "login", "billing", "search", "export", "render", "queue",
    ];
    let labels = ["backend", "frontend", "infra", "docs", "bug"];
    let mut made = 0;
    while made < count {
        let size = (count - made).min(200);
        let tickets: Vec<Value> = (made..made + size)
            .map(|i| {
                let points = [1, 2, 3, 5, 8][i % 5];
                // Some depend on earlier tickets of their batch (a neighbour to show).
                let depends: Vec<String> = match i % 6 {
                    0 if i > made => vec![format!("#{}", i - made)],
                    _ => vec![],
                };
                json!({
                    "title": format!("Ticket {i} about the {}", words[i % words.len()]),
                    "description": format!("The {} part of ticket {i} needs work.", words[(i / 3) % words.len()]),
                    "story_points": points,
                    "labels": [labels[i % labels.len()]],
                    "assignees": if i % 4 == 0 { vec![] } else { vec![format!("agent-{}", i % 8)] },
                    "depends_on": depends,
                })
            })
            .collect();
        let mut body = json!({ "tickets": tickets });
        if parents && made > 0 && made % 1000 == 0 {
            body["parent_id"] = json!("TASK-1");
        }
        let answer = cloud::call(
            client,
            server,
            Method::POST,
            "/tickets/batch",
            Some(token),
            Some(&body.to_string()),
        );
        assert!(answer.status.is_success(), "{:?}", answer.body);
        made += size;
    }
}

/// The statements of `plans` that PostgreSQL compiled (JIT).
fn compiled(plans: &[Value]) -> Vec<&str> {
    plans
        .iter()
        .filter(|p| p.get("JIT").is_some())
        .filter_map(|p| p["Query Text"].as_str())
        .collect()
}

/// The plans the server's connections logged after byte `offset` of the cluster's log.
fn plans_since(cluster: &Cluster, offset: u64) -> Vec<Value> {
    // Give the server's last statements a moment to reach the log.
    std::thread::sleep(std::time::Duration::from_millis(500));
    let log = std::fs::read(cluster.log()).unwrap();
    let log = String::from_utf8_lossy(&log[usize::try_from(offset).unwrap()..]).into_owned();
    let mut plans = Vec::new();
    let mut rest = log.as_str();
    while let Some(at) = rest.find("plan:") {
        let line_start = rest[..at].rfind('\n').map_or(0, |n| n + 1);
        let prefix = &rest[line_start..at];
        let after = &rest[at + "plan:".len()..];
        let mut values = serde_json::Deserializer::from_str(after).into_iter::<Value>();
        let parsed = values.next();
        let used = values.byte_offset();
        rest = &after[used.max(1)..];
        if !prefix.contains("app=jility") {
            continue;
        }
        if let Some(Ok(plan)) = parsed {
            plans.push(plan);
        }
    }
    plans
}

/// A statement's plan as judged: the rows it read and returned, and what it may read.
struct Judged {
    query: String,
    read: u64,
    returned: u64,
    allowed: u64,
    plan: Value,
}

fn judge(logged: &Value) -> Judged {
    let query = logged["Query Text"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let plan = &logged["Plan"];
    // An INSERT … SELECT returns nothing: what it wrote is what its query returned.
    let returned = match plan["Node Type"].as_str() {
        Some("ModifyTable") => plan["Plans"]
            .as_array()
            .and_then(|p| p.first())
            .map_or(0, rows)
            .max(rows(plan)),
        _ => rows(plan),
    };
    let read = read(plan);
    // A page's statement reads a page per status and the page's neighbours; counting reads
    // what it counts, up to its cap.
    let counting = if query.contains("count(*)") {
        2 * COUNTED
    } else {
        0
    };
    let allowed = 16 * (returned + 1) + 256 + counting;
    Judged {
        query,
        read,
        returned,
        allowed,
        plan: plan.clone(),
    }
}

fn number(node: &Value, field: &str) -> u64 {
    node[field].as_f64().unwrap_or(0.0).max(0.0).round() as u64
}

/// The rows a node produced over all its loops.
fn rows(node: &Value) -> u64 {
    number(node, "Actual Rows") * number(node, "Actual Loops").max(1)
}

/// The rows the plan read: every scan's rows kept and filtered out, and every row a join
/// or a node's filter discarded, over all loops.
fn read(node: &Value) -> u64 {
    let loops = number(node, "Actual Loops").max(1);
    let discarded = [
        "Rows Removed by Filter",
        "Rows Removed by Index Recheck",
        "Rows Removed by Join Filter",
    ]
    .iter()
    .map(|field| number(node, field) * loops)
    .sum::<u64>();
    let kind = node["Node Type"].as_str().unwrap_or_default();
    let scanned =
        if kind.contains("Scan") && !kind.contains("Function") && !kind.contains("Subquery") {
            rows(node)
        } else {
            0
        };
    let below: u64 = node["Plans"]
        .as_array()
        .map(|plans| plans.iter().map(read).sum())
        .unwrap_or(0);
    scanned + discarded + below
}
