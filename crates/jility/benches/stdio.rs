//! Latency and concurrency benchmark of `jility --mcp-server` over stdio, on a database of
//! 100,000 tickets.
//!
//! The database is built through the product: the release binary as an MCP server creates the
//! tickets with `jility_create_tickets_batch` (200 per call, status backlog) and
//! `jility_create_ticket` (the other statuses), then adds 20,000 comments with
//! `jility_add_comment`. Titles, descriptions and comments are generated from a vocabulary of
//! bug reports, features and chores, so full-text search has realistic words to find; labels
//! come from a set of 12, assignees from a team of 14. The result is cached in
//! `target/jility-bench/v<DB_VERSION>/` (bump [`support::DB_VERSION`] when the generator
//! changes); each run works on a fresh copy in a temp dir, so the cache is never mutated. The
//! generator, the builder and the concurrent writers are in `benches/support/mod.rs`, shared
//! with `benches/cloud.rs`.
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

mod support;

use std::{
    collections::HashSet,
    fmt::Write as _,
    path::Path,
    time::{Duration, Instant},
};

use mcp_testkit::{
    McpProcess,
    bench::{self, Rng, machine, met, mib, ms, ms_scaled, percentile},
};
use serde_json::json;

use support::{
    COMMENTS, Case, ITERS, ITERS_SEARCH, KEY, LABELS, LOAD_CREATES, LOAD_PROCESSES, PAGE, Plan,
    Planned, QUERIES, TICKETS, WARMUP, assert_total, call, copy_database, db_files,
    ensure_database, load, measure, number_of, server_binary, start, verify,
};

// ---- sizes and targets ----------------------------------------------------------------------

// The sizes of the database and of the runs are in `support`, shared with `benches/cloud.rs`.

/// Calls of the diagnostic listing without filters (slow: it counts every ticket).
const ITERS_DIAGNOSTIC: usize = 100;

const CREATE_TARGET_MS: f64 = 1.0;
const GET_TARGET_MS: f64 = 2.0;
const LIST_TARGET_MS: f64 = 2.0;
const SEARCH_TARGET_MS: f64 = 10.0;

/// The labels the listing filters by (with status todo or in_progress).
const LIST_LABELS: &[&str] = &["backend", "frontend", "bug", "api"];

// ---- the cases ------------------------------------------------------------------------------

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
