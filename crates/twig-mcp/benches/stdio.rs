//! Latency and memory benchmark of `twig-mcp` over stdio.
//!
//! Generates a repository with 2,000 local branches (loose refs, the worst case for reading
//! them), each with commits of its own stacked on its parent and `main` with a history of
//! 300 commits (see [`fixture`]), and a twig state file of 10,000 branches in stacks of depth
//! 5; starts the release binary as an MCP server in it, and measures the round trip of
//! `tools/call` for the local tools and `get_stack_health` against the round trip of the MCP
//! `ping` request, interleaved in the same run. Also times the first `get_stack_health` of
//! fresh server processes (cold), the real twig CLI's `twig tree` and `twig flow` when a twig
//! binary is found (`TWIG_BIN`, else `twig` on `PATH`), and reads the server's resident
//! memory (VmRSS) after startup, after the runs and after a short idle.
//!
//! Prints a Markdown report and writes it to `target/twig-mcp-bench.md`.
//!
//! Run: `cargo bench -p twig-mcp --bench stdio`

// The benchmark reports to the terminal and aborts on any setup failure.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::print_stderr
)]

#[path = "stdio/fixture.rs"]
mod fixture;
#[path = "stdio/twig_cli.rs"]
mod twig_cli;

use std::{
    fmt::Write as _,
    path::{Path, PathBuf},
    sync::OnceLock,
    time::{Duration, Instant},
};

use fixture::{Expected, Fixture, MAIN_COMMITS, generate_fixture, git};

use mcp_testkit::{
    McpProcess,
    bench::{self, Memory, TimedCall, call, machine, met, mib, ms, percentile, ping, read_memory},
};
use serde_json::{Value, json};

/// Stacks in the state file; every stack is `STACK_DEPTH` branches deep.
const STACKS: usize = 2_000;
const STACK_DEPTH: usize = 5;
/// Every `LOCAL_EVERY`-th stack exists as local branches (2,000 branches); the others only
/// exist in the state (8,000 branches).
const LOCAL_EVERY: usize = 5;
/// The stack whose deepest branch is checked out.
const HEAD_STACK: usize = 1_000;

/// Stacks hung under branches of stack 0 instead of `main`: (stack, level of stack 0). With
/// stack 0 they make the subtree of `stack-0000/branch-001`: 20 branches.
const ATTACHED: [(usize, usize); 3] = [(5, 2), (10, 3), (15, 2)];
const SUBTREE_STACKS: [usize; 4] = [0, 5, 10, 15];

const WARMUP: usize = 50;
const ITERS_CHEAP: usize = 500;
const ITERS_HEAVY: usize = 200;
/// Warm-up and timed calls of `get_stack_health` on the whole repository.
const WARMUP_HEALTH: usize = 10;
const ITERS_HEALTH: usize = 100;
/// Fresh server processes for the cold `get_stack_health`.
const COLD_RUNS: usize = 7;
/// How long the server sits idle before the last memory reading.
const IDLE: Duration = Duration::from_secs(3);
const RSS_TARGET_KB: u64 = 20 * 1024;

fn branch_name(stack: usize, level: usize) -> String {
    format!("stack-{stack:04}/branch-{level:03}")
}

fn is_local_stack(stack: usize) -> bool {
    stack.is_multiple_of(LOCAL_EVERY)
}

fn head_branch() -> String {
    branch_name(HEAD_STACK, STACK_DEPTH)
}

/// The parent twig's state gives branch `level` of `stack`.
fn parent_name(stack: usize, level: usize) -> String {
    if level > 1 {
        return branch_name(stack, level - 1);
    }
    match ATTACHED.iter().find(|(s, _)| *s == stack) {
        Some((_, on)) => branch_name(0, *on),
        None => "main".to_string(),
    }
}

fn subtree_root() -> String {
    branch_name(SUBTREE_STACKS[0], 1)
}

fn local_branches() -> usize {
    STACKS / LOCAL_EVERY * STACK_DEPTH
}

// ---- the server ---------------------------------------------------------------------------

/// The release binary (built by `cargo bench`, or here when it is missing).
fn server_binary() -> PathBuf {
    bench::release_binary(
        option_env!("CARGO_BIN_EXE_twig-mcp"),
        "twig-mcp",
        "twig-mcp",
    )
}

/// The memory of the server; aborts when it cannot be read.
fn memory_kb(pid: u32) -> Memory {
    read_memory(pid).unwrap_or_else(|| panic!("no memory figures in /proc/{pid}/status"))
}

// ---- the cases ----------------------------------------------------------------------------

#[derive(Clone, Copy)]
enum Target {
    /// p50 at most this many times the ping p50.
    PingRatio(f64),
    /// p50 at most this many milliseconds.
    Millis(f64),
    None,
}

struct Case {
    label: &'static str,
    tool: &'static str,
    warmup: usize,
    iters: usize,
    target: Target,
    args: fn(usize) -> Value,
    /// Checks that the answer is the real one (not an empty or degraded answer).
    check: fn(&Value),
}

fn count_nodes(node: &Value) -> usize {
    1 + node["children"]
        .as_array()
        .map_or(0, |c| c.iter().map(count_nodes).sum())
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            label: "`get_current_branch`",
            tool: "get_current_branch",
            warmup: WARMUP,
            iters: ITERS_CHEAP,
            target: Target::PingRatio(3.0),
            args: |_| json!({}),
            check: |data| {
                assert_eq!(data["branch"], head_branch().as_str());
                assert_eq!(
                    data["parent_branch"],
                    branch_name(HEAD_STACK, STACK_DEPTH - 1)
                );
            },
        },
        Case {
            label: "`get_branch_metadata`",
            tool: "get_branch_metadata",
            warmup: WARMUP,
            iters: ITERS_CHEAP,
            target: Target::PingRatio(3.0),
            args: |i| json!({"branch": branch_name((i * 7) % STACKS, 1 + i % STACK_DEPTH)}),
            check: |data| assert!(data["created_at"].is_string(), "{data}"),
        },
        Case {
            label: "`get_branch_stack`",
            tool: "get_branch_stack",
            warmup: WARMUP,
            iters: ITERS_CHEAP,
            target: Target::None,
            args: |_| json!({}),
            check: |data| {
                let stack = data["stack"].as_array().unwrap();
                assert_eq!(stack.len(), STACK_DEPTH + 1, "{data}");
                assert_eq!(stack[STACK_DEPTH]["branch"], "main");
            },
        },
        Case {
            label: "`get_branch_tree`",
            tool: "get_branch_tree",
            warmup: WARMUP,
            iters: ITERS_HEAVY,
            target: Target::Millis(20.0),
            args: |_| json!({}),
            check: |data| {
                let expected = 1 + local_branches();
                assert_eq!(data["root"], "main");
                assert_eq!(count_nodes(&data["branches"][0]), expected);
                assert_eq!(
                    data["tree_text"].as_str().unwrap().lines().count(),
                    expected
                );
            },
        },
        Case {
            label: "`list_branches` (default page of 200)",
            tool: "list_branches",
            warmup: WARMUP,
            iters: ITERS_HEAVY,
            target: Target::None,
            args: |i| {
                // Walk the pages with the cursors the server issued (see `page_cursors`).
                let cursors = PAGE_CURSORS.get().expect("page cursors collected");
                match &cursors[i % cursors.len()] {
                    None => json!({}),
                    Some(cursor) => json!({"cursor": cursor}),
                }
            },
            check: |data| assert_eq!(data["branches"].as_array().unwrap().len(), 200),
        },
        Case {
            label: "`list_branches` (`limit` 1000)",
            tool: "list_branches",
            warmup: WARMUP,
            iters: ITERS_HEAVY,
            target: Target::None,
            args: |_| json!({"limit": 1000}),
            check: |data| assert_eq!(data["branches"].as_array().unwrap().len(), 1000),
        },
        Case {
            label: "`get_stack_health`, whole repository (default page of 100)",
            tool: "get_stack_health",
            warmup: WARMUP_HEALTH,
            iters: ITERS_HEALTH,
            target: Target::Millis(100.0),
            args: |_| json!({}),
            check: |data| check_whole(data, 100),
        },
        Case {
            label: "`get_stack_health`, whole repository (`limit` 1000)",
            tool: "get_stack_health",
            warmup: WARMUP_HEALTH,
            iters: ITERS_HEALTH,
            target: Target::Millis(100.0),
            args: |_| json!({"limit": 1000}),
            check: |data| check_whole(data, 1000),
        },
        Case {
            label: "`get_stack_health`, subtree of 20 branches",
            tool: "get_stack_health",
            warmup: WARMUP,
            iters: ITERS_HEAVY,
            target: Target::Millis(5.0),
            args: |_| json!({"branch": subtree_root()}),
            check: check_subtree,
        },
    ]
}

/// What the fixture built: the health summary of the whole repository and of the subtree.
static EXPECTED: OnceLock<(Expected, Expected)> = OnceLock::new();

/// Entries `rebase_order` and `prune` list at most (`health::MAX_LIST`).
const MAX_LIST: usize = 500;

fn len(value: &Value) -> usize {
    value.as_array().map_or(usize::MAX, Vec::len)
}

/// `get_stack_health` of the whole repository, `page` branches listed.
fn check_whole(data: &Value, page: usize) {
    let (all, _) = EXPECTED.get().expect("expected figures set");
    assert_eq!(Expected::of(&data["summary"]), *all, "{}", data["summary"]);
    assert_eq!(data["summary"]["orphans"], 0);
    assert_eq!(data["stale_after_days"], 30);
    let branches = &data["branches"];
    assert_eq!(len(branches), page);
    assert_eq!(branches[0]["branch"], "main");
    assert_eq!(branches[1]["branch"], subtree_root());
    assert!(
        branches[1]["against"][0]["behind"].as_u64() > Some(0),
        "{}",
        branches[1]
    );
    // More than 500 branches are to rebase (every branch stacked on a behind one).
    assert_eq!(len(&data["rebase_order"]), MAX_LIST);
    assert_eq!(data["truncated"], true);
    // The merged branches, none checked out.
    assert_eq!(len(&data["prune"]) as u64, all.merged);
    assert_eq!(len(&data["untracked"]), 0);
}

/// `get_stack_health` of the subtree.
fn check_subtree(data: &Value) {
    let (_, subtree) = EXPECTED.get().expect("expected figures set");
    assert_eq!(
        Expected::of(&data["summary"]),
        *subtree,
        "{}",
        data["summary"]
    );
    assert_eq!(data["scope"], subtree_root());
    let branches = &data["branches"];
    assert_eq!(len(branches), 20);
    assert_eq!(branches[0]["branch"], subtree_root());
    assert!(
        branches
            .as_array()
            .unwrap()
            .iter()
            .all(|b| b["missing"] != true && b["last_commit_at"].is_string()),
        "{branches}"
    );
    assert!(len(&data["rebase_order"]) >= subtree.needs_rebase as usize);
    assert_eq!(len(&data["prune"]) as u64, subtree.merged);
}

/// The cursor of every full page of `list_branches` (default limit), `None` for the first.
static PAGE_CURSORS: OnceLock<Vec<Option<String>>> = OnceLock::new();

/// Walk `list_branches` once to collect the cursors the timed walk replays (cursors are
/// sealed by the server: they cannot be made here).
async fn page_cursors(mcp: &McpProcess) -> Vec<Option<String>> {
    let mut cursors = vec![None];
    loop {
        let args = match cursors.last().cloned().flatten() {
            None => json!({}),
            Some(cursor) => json!({"cursor": cursor}),
        };
        let (_, page) = mcp.call_paged::<Value>("list_branches", args).await;
        // Every branch of the state, and the root `main`.
        assert_eq!(page.total, (STACKS * STACK_DEPTH + 1) as u64);
        match page.next_cursor {
            Some(next) => cursors.push(Some(next)),
            None => break,
        }
    }
    assert_eq!(cursors.len(), (STACKS * STACK_DEPTH + 1).div_ceil(200));
    // The timed walk replays the full pages.
    cursors.pop();
    cursors
}

struct Row {
    label: String,
    p50: Duration,
    p99: Duration,
    bytes: usize,
    target: Target,
}

async fn measure(mcp: &McpProcess, case: &Case, pings: &mut Vec<Duration>) -> Row {
    let mut bytes = 0;
    for i in 0..case.warmup {
        let TimedCall { data, text_len, .. } = call(mcp, case.tool, &(case.args)(i)).await;
        (case.check)(&data);
        bytes = text_len;
    }
    let mut samples = Vec::with_capacity(case.iters);
    for i in 0..case.iters {
        pings.push(ping(mcp).await);
        let TimedCall { elapsed, data, .. } =
            call(mcp, case.tool, &(case.args)(case.warmup + i)).await;
        samples.push(elapsed);
        (case.check)(&data);
    }
    Row {
        label: case.label.to_string(),
        p50: percentile(&samples, 0.50),
        p99: percentile(&samples, 0.99),
        bytes,
        target: case.target,
    }
}

fn main() {
    let started = Instant::now();
    let bin = server_binary();
    let t = Instant::now();
    let fixture = generate_fixture();
    eprintln!(
        "fixture: {} local branches ({} loose ref files), {} commits, state {} branches ({} bytes), \
         generated in {:.1?}; expected health: {:?}, subtree {:?}",
        local_branches(),
        fixture.loose_refs,
        fixture.commits,
        STACKS * STACK_DEPTH,
        fixture.state_bytes,
        t.elapsed(),
        fixture.all,
        fixture.subtree,
    );
    let _ = EXPECTED.set((fixture.all, fixture.subtree));

    let report = bench::runtime().block_on(run(&bin, &fixture));
    println!("{report}");
    eprintln!("{}", bench::write_report("twig-mcp-bench.md", &report));
    eprintln!("total time {:.1?}", started.elapsed());
}

async fn run(bin: &Path, fixture: &Fixture) -> String {
    let home = fixture.home.display().to_string();
    let t = Instant::now();
    let mcp = McpProcess::spawn_bin(bin, &[], &fixture.repo, &[("HOME", home.as_str())])
        .await
        .expect("start twig-mcp");
    let startup = t.elapsed();
    let pid = mcp.pid().expect("the server's pid");
    let mem_startup = memory_kb(pid);

    // The first call parses the 10,000-branch state.
    let first_call = call(
        &mcp,
        "get_branch_metadata",
        &json!({"branch": branch_name(0, 1)}),
    )
    .await
    .elapsed;
    let mem_parsed = memory_kb(pid);
    let _ = PAGE_CURSORS.set(page_cursors(&mcp).await);

    let mut pings = Vec::new();
    let mut rows = Vec::new();
    let mut mem_before_health = None;
    for case in cases() {
        if case.tool == "get_stack_health" && mem_before_health.is_none() {
            mem_before_health = Some(memory_kb(pid));
        }
        let t = Instant::now();
        rows.push(measure(&mcp, &case, &mut pings).await);
        eprintln!("{}: {:.1?}", case.label, t.elapsed());
    }
    let ping_loose = pings.clone();
    let mem_after = memory_kb(pid);
    tokio::time::sleep(IDLE).await;
    let mem_idle = memory_kb(pid);

    // Cold: the first `get_stack_health` of fresh server processes.
    let health = cases()
        .into_iter()
        .find(|c| c.tool == "get_stack_health")
        .unwrap();
    for parse_first in [false, true] {
        rows.push(cold(bin, fixture, &health, parse_first).await);
    }

    // The real twig CLI in the same repository.
    let mut twig_note = None;
    match twig_cli::find_twig() {
        None => {
            twig_note = Some("no twig binary (set `TWIG_BIN`, or put `twig` on `PATH`)".into());
        }
        Some(twig) => {
            let version = twig_cli::version(&twig);
            let commands: [(&[&str], &str); 2] = [
                (&["tree", "--no-color"], "`twig tree`"),
                (&["flow"], "`twig flow` (plugin `twig-flow`)"),
            ];
            for (args, label) in commands {
                let label = format!("{label}, {version}: process run (p99 column: max)");
                match twig_cli::time_twig(
                    &twig,
                    args,
                    &fixture.repo,
                    &fixture.home,
                    local_branches(),
                    &head_branch(),
                ) {
                    Ok(timed) => rows.push(Row {
                        label,
                        p50: percentile(&timed.samples, 0.50),
                        p99: percentile(&timed.samples, 1.0),
                        bytes: timed.bytes,
                        target: Target::None,
                    }),
                    Err(why) => {
                        eprintln!("{label}: {why}");
                        let note = twig_note.get_or_insert_with(String::new);
                        let _ = write!(note, "{label} not timed: {why}. ");
                    }
                }
            }
        }
    }

    // Diagnostic: with the refs packed into one file.
    git(&fixture.repo, &["pack-refs", "--all"]);
    for (tool, label) in [
        (
            "get_branch_tree",
            "`get_branch_tree`, refs packed (diagnostic)",
        ),
        (
            "get_stack_health",
            "`get_stack_health`, whole repository, refs packed (diagnostic)",
        ),
    ] {
        let case = Case {
            label,
            ..cases().into_iter().find(|c| c.tool == tool).unwrap()
        };
        rows.push(Row {
            target: Target::None,
            ..measure(&mcp, &case, &mut pings).await
        });
    }

    let stderr = mcp.shutdown().await;
    let ping_p50 = percentile(&ping_loose, 0.50);
    let ping_p99 = percentile(&ping_loose, 0.99);

    let mut out = String::new();
    writeln!(
        out,
        "twig-mcp stdio benchmark: {} local branches ({} loose ref files) with commits of their \
         own on a `main` of {MAIN_COMMITS} commits ({} commits in all), twig state of {} \
         branches in stacks of depth {STACK_DEPTH} ({:.1} MiB), HEAD on `{}`; {}.\n\
         Health as built: whole repository {:?}; subtree {:?}.\n\
         {WARMUP} warm-up calls per tool, then {ITERS_CHEAP} (cheap tools) or {ITERS_HEAVY} \
         (tree, list, health of the subtree) calls, {WARMUP_HEALTH} and {ITERS_HEALTH} for the \
         health of the whole repository, each preceded by a `ping`. Cold: the first call of \
         {COLD_RUNS} fresh server processes. Latency: request sent to result decoded by the \
         rmcp client. Envelope size: the result's JSON text (the message on the wire carries \
         it twice, as text and as `structuredContent`).\n",
        local_branches(),
        fixture.loose_refs,
        fixture.commits,
        STACKS * STACK_DEPTH,
        fixture.state_bytes as f64 / 1_048_576.0,
        head_branch(),
        machine(),
        fixture.all,
        fixture.subtree,
    )
    .unwrap();
    writeln!(
        out,
        "| tool | p50 | p99 | p50 / ping p50 | envelope size | target | met? |"
    )
    .unwrap();
    writeln!(out, "|---|---:|---:|---:|---:|---|---|").unwrap();
    writeln!(
        out,
        "| `ping` ({} round trips) | {} | {} | 1.00× | — | — | — |",
        ping_loose.len(),
        ms(ping_p50),
        ms(ping_p99)
    )
    .unwrap();
    for row in &rows {
        let ratio = row.p50.as_secs_f64() / ping_p50.as_secs_f64();
        let (target, met) = match row.target {
            Target::PingRatio(max) => (format!("p50 ≤ {max}× ping"), Some(ratio <= max)),
            Target::Millis(max) => (
                format!("p50 ≤ {max} ms"),
                Some(row.p50.as_secs_f64() * 1e3 <= max),
            ),
            Target::None => ("—".to_string(), None),
        };
        let met = met.map_or("—", bench::met);
        writeln!(
            out,
            "| {} | {} | {} | {ratio:.2}× | {:.1} KiB | {target} | {met} |",
            row.label,
            ms(row.p50),
            ms(row.p99),
            row.bytes as f64 / 1024.0
        )
        .unwrap();
    }
    writeln!(
        out,
        "\n| server memory | VmRSS | anonymous | file-backed | VmHWM (peak so far) | VmRSS < 20 MiB? |"
    )
    .unwrap();
    writeln!(out, "|---|---:|---:|---:|---:|---|").unwrap();
    for (label, mem) in [
        ("right after startup (initialize done)", mem_startup),
        ("after the first call (state parsed)", mem_parsed),
        (
            "after the other tools' runs, before `get_stack_health`",
            mem_before_health.unwrap_or(mem_parsed),
        ),
        ("right after the runs", mem_after),
        ("after the runs and 3 s idle", mem_idle),
    ] {
        writeln!(
            out,
            "| {label} | {} | {} | {} | {} | {} |",
            mib(mem.rss),
            mib(mem.anon),
            mib(mem.file),
            mib(mem.peak),
            met(mem.rss < RSS_TARGET_KB)
        )
        .unwrap();
    }
    writeln!(
        out,
        "\nStartup (spawn + initialize): {}. First `tools/call` after startup (parses the \
         state): {}.",
        ms(startup),
        ms(first_call)
    )
    .unwrap();
    if let Some(note) = twig_note {
        writeln!(out, "\nThe twig CLI: {}", note.trim()).unwrap();
    }
    if !stderr.trim().is_empty() {
        writeln!(out, "\nServer stderr:\n```\n{}\n```", stderr.trim()).unwrap();
    }
    out
}

/// The first `case` call of [`COLD_RUNS`] fresh server processes (p99 column: the slowest);
/// with `parse_first`, after a `get_branch_metadata` that parses the state, so that only
/// the commit caches are empty.
async fn cold(bin: &Path, fixture: &Fixture, case: &Case, parse_first: bool) -> Row {
    let home = fixture.home.display().to_string();
    let mut samples = Vec::with_capacity(COLD_RUNS);
    let mut bytes = 0;
    for _ in 0..COLD_RUNS {
        let mcp = McpProcess::spawn_bin(bin, &[], &fixture.repo, &[("HOME", home.as_str())])
            .await
            .expect("start twig-mcp");
        if parse_first {
            call(
                &mcp,
                "get_branch_metadata",
                &json!({"branch": head_branch()}),
            )
            .await;
        }
        let TimedCall {
            elapsed,
            data,
            text_len,
        } = call(&mcp, case.tool, &(case.args)(0)).await;
        (case.check)(&data);
        samples.push(elapsed);
        bytes = text_len;
        mcp.shutdown().await;
    }
    let label = if parse_first {
        "`get_stack_health`, whole repository, cold commit caches (state parsed before; p99 \
         column: max)"
    } else {
        "`get_stack_health`, whole repository, cold: first call of a fresh server (p99 column: \
         max)"
    };
    Row {
        label: label.to_string(),
        p50: percentile(&samples, 0.50),
        p99: percentile(&samples, 1.0),
        bytes,
        target: if parse_first {
            Target::None
        } else {
            Target::Millis(500.0)
        },
    }
}
