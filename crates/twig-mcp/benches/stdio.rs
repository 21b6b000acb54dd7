//! Latency and memory benchmark of `twig-mcp` over stdio.
//!
//! Generates a repository with 2,000 local branches (loose refs, the worst case for reading
//! them) and a twig state file of 10,000 branches in stacks of depth 5, starts the release
//! binary as an MCP server in it, and measures the round trip of `tools/call` for the local
//! tools against the round trip of the MCP `ping` request, interleaved in the same run. Also
//! reads the server's resident memory (VmRSS) after startup, after the runs and after a short
//! idle.
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

use std::{
    fmt::Write as _,
    io::Write as _,
    path::{Path, PathBuf},
    process::{Command, Stdio},
    sync::OnceLock,
    time::{Duration, Instant},
};

use mcp_testkit::{
    McpProcess,
    bench::{self, Memory, TimedCall, call, machine, met, mib, ms, percentile, ping, read_memory},
};
use serde_json::{Map, Value, json};

/// Stacks in the state file; every stack is `STACK_DEPTH` branches deep.
const STACKS: usize = 2_000;
const STACK_DEPTH: usize = 5;
/// Every `LOCAL_EVERY`-th stack exists as local branches (2,000 branches); the others only
/// exist in the state (8,000 branches).
const LOCAL_EVERY: usize = 5;
/// The stack whose deepest branch is checked out.
const HEAD_STACK: usize = 1_000;

const WARMUP: usize = 50;
const ITERS_CHEAP: usize = 500;
const ITERS_HEAVY: usize = 200;
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

// ---- fixture ------------------------------------------------------------------------------

fn git_command(dir: &Path) -> Command {
    let mut command = Command::new("git");
    command
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "Bench")
        .env("GIT_AUTHOR_EMAIL", "bench@example.com")
        .env("GIT_COMMITTER_NAME", "Bench")
        .env("GIT_COMMITTER_EMAIL", "bench@example.com");
    command
}

fn git(dir: &Path, args: &[&str]) -> String {
    let output = git_command(dir)
        .args(args)
        .output()
        .unwrap_or_else(|err| panic!("cannot run git {args:?}: {err}"));
    assert!(
        output.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).trim().to_string()
}

/// A deterministic, UUID-shaped id (twig writes v4 UUIDs).
fn uuid_like(kind: u64, i: usize) -> String {
    let mut x = (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ kind;
    x ^= x >> 29;
    let y = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    format!(
        "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
        (x >> 32) as u32,
        (x >> 16) as u16,
        x as u16 & 0xfff,
        (y >> 52) as u16 & 0xfff,
        y & 0xffff_ffff_ffff
    )
}

fn timestamp(i: usize) -> String {
    format!(
        "2026-{:02}-{:02}T{:02}:{:02}:{:02}.{:09}+00:00",
        1 + i % 12,
        1 + i % 28,
        i % 24,
        i % 60,
        (i / 60) % 60,
        (i * 7_919) % 1_000_000_000
    )
}

/// `.twig/state.json` in twig 0.7's layout: 10,000 branches, each stack chained to `main`.
fn state_json() -> Value {
    let mut branches = Map::new();
    let mut dependencies = Vec::new();
    let mut n = 0;
    for stack in 0..STACKS {
        for level in 1..=STACK_DEPTH {
            let name = branch_name(stack, level);
            let parent = if level == 1 {
                "main".to_string()
            } else {
                branch_name(stack, level - 1)
            };
            let jira = (n % 3 != 0).then(|| format!("PROJ-{}", 1_000 + n));
            let pr = (n % 2 == 0).then_some(10_000 + n);
            branches.insert(
                name.clone(),
                json!({
                    "branch": name,
                    "jira_issue": jira,
                    "github_pr": pr,
                    "created_at": timestamp(n),
                }),
            );
            dependencies.push(json!({
                "id": uuid_like(1, n),
                "child": name,
                "parent": parent,
                "created_at": timestamp(n),
            }));
            n += 1;
        }
    }
    let worktrees: Vec<Value> = (0..3)
        .map(|i| {
            let branch = branch_name(i * LOCAL_EVERY, STACK_DEPTH);
            json!({
                "name": format!("wt-{i}"),
                "path": format!("/work/wt/wt-{i}"),
                "branch": branch,
                "created_at": timestamp(i),
            })
        })
        .collect();
    json!({
        "version": 1,
        "updated_at": "2026-03-02T09:30:00.5+00:00",
        "worktrees": worktrees,
        "branches": branches,
        "dependencies": dependencies,
        "root_branches": [{
            "id": uuid_like(2, 0),
            "branch": "main",
            "is_default": true,
            "created_at": timestamp(0),
        }],
    })
}

struct Fixture {
    _dir: tempfile::TempDir,
    repo: PathBuf,
    home: PathBuf,
    state_bytes: usize,
    loose_refs: usize,
}

fn count_files(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| {
                    let path = e.path();
                    if path.is_dir() { count_files(&path) } else { 1 }
                })
                .sum()
        })
        .unwrap_or(0)
}

fn generate_fixture() -> Fixture {
    let dir = tempfile::tempdir().expect("create a temp dir");
    let repo = dir.path().join("repo");
    let home = dir.path().join("home");
    std::fs::create_dir_all(&repo).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    std::fs::write(repo.join("README.md"), "bench\n").unwrap();
    git(&repo, &["add", "README.md"]);
    git(&repo, &["commit", "-q", "-m", "initial"]);
    let sha = git(&repo, &["rev-parse", "HEAD"]);

    // All local branches in one transaction.
    let mut script = String::new();
    for stack in (0..STACKS).filter(|s| is_local_stack(*s)) {
        for level in 1..=STACK_DEPTH {
            writeln!(
                script,
                "create refs/heads/{} {sha}",
                branch_name(stack, level)
            )
            .unwrap();
        }
    }
    let mut child = git_command(&repo)
        .args(["update-ref", "--stdin"])
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run git update-ref --stdin");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(script.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "git update-ref --stdin failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    // Same commit everywhere, so moving HEAD is a checkout.
    let head = format!("refs/heads/{}", head_branch());
    git(&repo, &["symbolic-ref", "HEAD", &head]);

    let state = serde_json::to_vec_pretty(&state_json()).unwrap();
    std::fs::create_dir_all(repo.join(".twig")).unwrap();
    std::fs::write(repo.join(".twig/state.json"), &state).unwrap();
    let loose_refs = count_files(&repo.join(".git/refs/heads"));
    Fixture {
        _dir: dir,
        repo,
        home,
        state_bytes: state.len(),
        loose_refs,
    }
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
            iters: ITERS_CHEAP,
            target: Target::PingRatio(3.0),
            args: |i| json!({"branch": branch_name((i * 7) % STACKS, 1 + i % STACK_DEPTH)}),
            check: |data| assert!(data["created_at"].is_string(), "{data}"),
        },
        Case {
            label: "`get_branch_stack`",
            tool: "get_branch_stack",
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
            iters: ITERS_HEAVY,
            target: Target::Millis(20.0),
            args: |_| json!({}),
            check: |data| {
                let expected = 1 + STACKS / LOCAL_EVERY * STACK_DEPTH;
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
            iters: ITERS_HEAVY,
            target: Target::None,
            args: |_| json!({"limit": 1000}),
            check: |data| assert_eq!(data["branches"].as_array().unwrap().len(), 1000),
        },
    ]
}

/// The cursor of every page of `list_branches` (default limit), `None` for the first page.
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
        assert_eq!(page.total, (STACKS * STACK_DEPTH) as u64);
        match page.next_cursor {
            Some(next) => cursors.push(Some(next)),
            None => break,
        }
    }
    assert_eq!(cursors.len(), STACKS * STACK_DEPTH / 200);
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
    for i in 0..WARMUP {
        let TimedCall { data, text_len, .. } = call(mcp, case.tool, &(case.args)(i)).await;
        (case.check)(&data);
        bytes = text_len;
    }
    let mut samples = Vec::with_capacity(case.iters);
    for i in 0..case.iters {
        pings.push(ping(mcp).await);
        let TimedCall { elapsed, data, .. } = call(mcp, case.tool, &(case.args)(WARMUP + i)).await;
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
        "fixture: {} local branches ({} loose ref files), state {} branches ({} bytes), generated in {:.1?}",
        STACKS / LOCAL_EVERY * STACK_DEPTH,
        fixture.loose_refs,
        STACKS * STACK_DEPTH,
        fixture.state_bytes,
        t.elapsed()
    );

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
    for case in cases() {
        let t = Instant::now();
        rows.push(measure(&mcp, &case, &mut pings).await);
        eprintln!("{}: {:.1?}", case.label, t.elapsed());
    }
    let ping_loose = pings.clone();
    let mem_after = memory_kb(pid);
    tokio::time::sleep(IDLE).await;
    let mem_idle = memory_kb(pid);

    // Diagnostic: the same tree with the refs packed into one file.
    git(&fixture.repo, &["pack-refs", "--all"]);
    let packed = Case {
        label: "`get_branch_tree`, refs packed (diagnostic)",
        ..cases()
            .into_iter()
            .find(|c| c.tool == "get_branch_tree")
            .unwrap()
    };
    rows.push(Row {
        target: Target::None,
        ..measure(&mcp, &packed, &mut pings).await
    });

    let stderr = mcp.shutdown().await;
    let ping_p50 = percentile(&ping_loose, 0.50);
    let ping_p99 = percentile(&ping_loose, 0.99);

    let mut out = String::new();
    writeln!(
        out,
        "twig-mcp stdio benchmark: {} local branches ({} loose ref files), twig state of {} \
         branches in stacks of depth {STACK_DEPTH} ({:.1} MiB), HEAD on `{}`; {}.\n\
         {WARMUP} warm-up calls per tool, then {ITERS_CHEAP} (cheap tools) or {ITERS_HEAVY} \
         (tree, list) calls, each preceded by a `ping`. Latency: request sent to result \
         decoded by the rmcp client. Envelope size: the result's JSON text (the message on the \
         wire carries it twice, as text and as `structuredContent`).\n",
        STACKS / LOCAL_EVERY * STACK_DEPTH,
        fixture.loose_refs,
        STACKS * STACK_DEPTH,
        fixture.state_bytes as f64 / 1_048_576.0,
        head_branch(),
        machine(),
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
    if !stderr.trim().is_empty() {
        writeln!(out, "\nServer stderr:\n```\n{}\n```", stderr.trim()).unwrap();
    }
    out
}
