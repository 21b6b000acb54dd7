//! The kit's transports measured through the four release binaries: a cheap call over
//! Streamable HTTP against the same call over stdio (p50 ratio, target ≤ 3×), and one server
//! under 32 concurrent HTTP clients (calls per second, target ≥ 5,000/s on 2 cores).
//!
//! `cargo bench -p mcp-common --bench transports`; the report goes to stdout and to
//! `target/transports-bench.md`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout
)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use mcp_testkit::{McpProcess, Wire, bench};
use serde_json::{Value, json};

/// Round trips per measured series (each a ping and a call), after warm-up.
const ROUNDS: usize = 1000;
const WARM_UP: usize = 50;
const CLIENTS: usize = 32;
const LOAD: Duration = Duration::from_secs(5);

struct Case {
    server: &'static str,
    bin: PathBuf,
    args: Vec<&'static str>,
    cwd: PathBuf,
    env: Vec<(&'static str, String)>,
    tool: &'static str,
    tool_args: Value,
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn git_repo(dir: &Path) {
    run(Command::new("git")
        .args(["init", "-q", "-b", "main"])
        .current_dir(dir));
    run(Command::new("git")
        .args([
            "-c",
            "user.name=Bench",
            "-c",
            "user.email=bench@example.com",
        ])
        .args(["commit", "-q", "--allow-empty", "-m", "start"])
        .current_dir(dir));
}

/// The servers measured: all four, or those named in `TRANSPORTS_SERVERS` (comma-separated),
/// whose release binaries alone are built.
fn selected(server: &str) -> bool {
    std::env::var("TRANSPORTS_SERVERS")
        .map(|only| only.split(',').any(|s| s.trim() == server))
        .unwrap_or(true)
}

fn cases(root: &Path) -> Vec<Case> {
    let home = root.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let home_env = ("HOME", home.display().to_string());
    let mut cases = Vec::new();

    if selected("twig-mcp") {
        let twig = root.join("twig");
        std::fs::create_dir_all(&twig).unwrap();
        git_repo(&twig);
        cases.push(Case {
            server: "twig-mcp",
            bin: bench::release_binary(None, "twig-mcp", "twig-mcp"),
            args: vec![],
            cwd: twig,
            env: vec![home_env.clone()],
            tool: "get_current_branch",
            tool_args: json!({}),
        });
    }

    if selected("duvet") {
        // A small real project: the client suites' fixture.
        let duvet = root.join("duvet");
        let fixture = bench::workspace_root().join("clients/fixtures/duvet-project");
        run(Command::new("cp").arg("-r").arg(&fixture).arg(&duvet));
        cases.push(Case {
            server: "duvet",
            bin: bench::release_binary(None, "duvet", "duvet"),
            args: vec!["mcp"],
            cwd: duvet,
            env: vec![home_env.clone()],
            tool: "resolve_spec_id",
            tool_args: json!({"url": "https://www.rfc-editor.org/rfc/rfc2324"}),
        });
    }

    if selected("jility") {
        let tracker = root.join("jility");
        std::fs::create_dir_all(&tracker).unwrap();
        let jility = bench::release_binary(None, "jility", "jility");
        run(Command::new(&jility)
            .args(["init", "--key", "API"])
            .current_dir(&tracker));
        run(Command::new(&jility)
            .args(["ticket", "create", "--title", "Add login"])
            .env("JILITY_ACTOR", "bench")
            .current_dir(&tracker));
        cases.push(Case {
            server: "jility",
            bin: jility,
            args: vec!["--mcp-server"],
            cwd: tracker,
            env: vec![home_env.clone(), ("JILITY_ACTOR", "bench".into())],
            tool: "jility_get_ticket",
            tool_args: json!({"ticket_id": "API-1"}),
        });
    }

    if selected("git-mile") {
        let mile = root.join("mile");
        std::fs::create_dir_all(&mile).unwrap();
        git_repo(&mile);
        let git_mile = bench::release_binary(None, "git-mile", "git-mile");
        let identity = [
            ("GIT_AUTHOR_NAME", "Bench"),
            ("GIT_AUTHOR_EMAIL", "bench@example.com"),
            ("GIT_COMMITTER_NAME", "Bench"),
            ("GIT_COMMITTER_EMAIL", "bench@example.com"),
        ];
        let issue = run(Command::new(&git_mile)
            .args(["create", "issue", "--title", "Crash on start"])
            .envs(identity)
            .current_dir(&mile));
        let issue = issue
            .split_whitespace()
            .last()
            .unwrap_or_default()
            .to_string();
        cases.push(Case {
            server: "git-mile",
            bin: git_mile,
            args: vec!["mcp-server"],
            cwd: mile,
            env: vec![home_env],
            tool: "git_mile.show",
            tool_args: json!({"entity": "issue", "id": issue}),
        });
    }
    // `TRANSPORTS_SERVER_ENV=NAME=VALUE,…` adds to the servers' environment (to compare
    // settings such as `TOKIO_WORKER_THREADS` in one run).
    if let Ok(extra) = std::env::var("TRANSPORTS_SERVER_ENV") {
        for pair in extra.split(',').filter_map(|kv| kv.split_once('=')) {
            for case in &mut cases {
                case.env.push((leak(pair.0), pair.1.to_string()));
            }
        }
    }
    cases
}

fn leak(s: &str) -> &'static str {
    Box::leak(s.to_string().into_boxed_str())
}

/// `ROUNDS`, or `TRANSPORTS_ROUNDS` (e.g. more, to profile the latency phase).
fn rounds() -> usize {
    std::env::var("TRANSPORTS_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(ROUNDS)
}

/// p50 of ping and of the call, interleaved, after a warm-up.
async fn latencies(mcp: &McpProcess, case: &Case) -> (Duration, Duration) {
    for _ in 0..WARM_UP {
        mcp.ping().await;
        call(mcp, case).await;
    }
    let rounds = rounds();
    let mut pings = Vec::with_capacity(rounds);
    let mut calls = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        pings.push(bench::ping(mcp).await);
        calls.push(call(mcp, case).await);
    }
    (
        bench::percentile(&pings, 0.5),
        bench::percentile(&calls, 0.5),
    )
}

async fn call(mcp: &McpProcess, case: &Case) -> Duration {
    let start = std::time::Instant::now();
    let result = mcp.call(case.tool, case.tool_args.clone()).await;
    let elapsed = start.elapsed();
    assert!(result.is_error != Some(true), "{}: {result:?}", case.server);
    elapsed
}

/// Where the client (this process's main thread) and the server run during the latency
/// series. Unpinned, the scheduler puts a client and its server on one core in some runs and
/// on two in others, and the p50 of the same stdio call swings between about 0.035 and 0.1 ms
/// from one run to the next; two transports compare only under the same placement, so both
/// placements are measured.
#[derive(Clone, Copy, PartialEq)]
enum Placement {
    /// Client and server on CPU 0.
    OneCore,
    /// Client on CPU 0, server on CPU 1.
    TwoCores,
}

/// Pin this process's main thread (and the processes it starts from now on) to `cpus`, with
/// `taskset` from util-linux.
fn pin(cpus: &str) -> bool {
    Command::new("taskset")
        .args(["-p", "-c", cpus, &std::process::id().to_string()])
        .stdout(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The machine's CPUs, as `taskset` reads them (not this process's current affinity).
fn all_cpus() -> String {
    std::fs::read_to_string("/sys/devices/system/cpu/online")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "0-1023".into())
}

async fn spawn(case: &Case, wire: Wire, placement: Option<Placement>) -> McpProcess {
    let env: Vec<(&str, &str)> = case.env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let bin = case.bin.display().to_string();
    let (program, args): (PathBuf, Vec<&str>) = if placement == Some(Placement::TwoCores) {
        let mut args = vec!["-c", "1", bin.as_str()];
        args.extend(case.args.iter().copied());
        ("taskset".into(), args)
    } else {
        (case.bin.clone(), case.args.clone())
    };
    McpProcess::spawn_bin_over(wire, &program, &args, &case.cwd, &env)
        .await
        .unwrap_or_else(|err| panic!("{}: {err}", case.server))
}

/// The p50 of the cheap call over stdio and over HTTP, under one placement.
struct Latencies {
    stdio: Duration,
    http: Duration,
}

impl Latencies {
    fn ratio(&self) -> f64 {
        self.http.as_secs_f64() / self.stdio.as_secs_f64()
    }
}

struct Row {
    server: &'static str,
    tool: &'static str,
    /// `None` where `taskset` is missing: then measured unpinned, in `two_cores`.
    one_core: Option<Latencies>,
    two_cores: Latencies,
    load: bench::Throughput,
    rmcp_load: bench::Throughput,
}

/// One client calling in turn, on a single-threaded runtime as an agent's client is (Claude
/// Code's runs on Node's event loop), against a server over stdio and then over HTTP.
async fn measure_latencies(case: &Case, placement: Option<Placement>) -> Latencies {
    let stdio = spawn(case, Wire::Stdio, placement).await;
    let (_, stdio_call) = latencies(&stdio, case).await;
    stdio.shutdown().await;
    let http = spawn(case, Wire::Http, placement).await;
    let (_, http_call) = latencies(&http, case).await;
    http.shutdown().await;
    Latencies {
        stdio: stdio_call,
        http: http_call,
    }
}

/// Many clients at once, on a runtime with every core.
async fn measure_load(case: &Case) -> (bench::Throughput, bench::Throughput) {
    let http = spawn(case, Wire::Http, None).await;
    let url = http.url().expect("an HTTP endpoint").to_string();
    let load = bench::http_throughput(
        &url,
        CLIENTS,
        case.tool,
        &case.tool_args,
        Duration::from_millis(500),
        LOAD,
    )
    .await
    .unwrap_or_else(|err| panic!("{}: {err}", case.server));
    let mut clients = Vec::with_capacity(CLIENTS);
    for _ in 0..CLIENTS {
        clients.push(McpProcess::connect_http(&url, None).await.unwrap());
    }
    // Warm every session, then load.
    bench::throughput(
        &clients,
        case.tool,
        &case.tool_args,
        Duration::from_millis(500),
    )
    .await;
    let rmcp_load = bench::throughput(&clients, case.tool, &case.tool_args, LOAD).await;
    for client in clients {
        client.shutdown().await;
    }
    http.shutdown().await;
    (load, rmcp_load)
}

fn measure(case: &Case) -> Row {
    let (one_core, two_cores) = if pin("0") {
        let one = bench::runtime().block_on(measure_latencies(case, Some(Placement::OneCore)));
        let two = bench::runtime().block_on(measure_latencies(case, Some(Placement::TwoCores)));
        pin(&all_cpus());
        (Some(one), two)
    } else {
        (
            None,
            bench::runtime().block_on(measure_latencies(case, None)),
        )
    };
    let (load, rmcp_load) = bench::multi_thread_runtime().block_on(measure_load(case));
    Row {
        server: case.server,
        tool: case.tool,
        one_core,
        two_cores,
        load,
        rmcp_load,
    }
}

fn main() {
    let root = tempfile::tempdir().unwrap();
    let cases = cases(root.path());
    let mut rows = Vec::new();
    for case in &cases {
        println!("measuring {} …", case.server);
        let row = measure(case);
        println!(
            "{}: HTTP / stdio {} (one core), {:.2}× (two cores); 32 clients {:.0} calls/s (rmcp clients {:.0})",
            row.server,
            row.one_core
                .as_ref()
                .map_or("-".into(), |l| format!("{:.2}×", l.ratio())),
            row.two_cores.ratio(),
            row.load.per_second(),
            row.rmcp_load.per_second()
        );
        rows.push(row);
    }
    let pinned = rows.iter().all(|r| r.one_core.is_some());
    let mut report = format!(
        "## Transports: Streamable HTTP against stdio\n\nMachine: {}. Latency: {} interleaved ping + call round trips per transport after {WARM_UP} warm-up rounds, by one rmcp client on a single-threaded runtime (an agent's client runs on one event loop), {}. Load: {CLIENTS} HTTP clients (one session each) calling back to back for {} s, unpinned; first lean HTTP clients that send ready-made requests and scan the answers (the load generator, which shares the cores with the server), then rmcp clients (what rmcp-based agents get). All clients keep their connections alive.\n\n",
        bench::machine(),
        rounds(),
        if pinned {
            "with client and server on one core, then on two (client on CPU 0, server on CPU 1)"
        } else {
            "unpinned (`taskset` was not found)"
        },
        LOAD.as_secs()
    );
    report.push_str("| server | cheap call | one core: stdio p50 | HTTP p50 | HTTP / stdio | two cores: stdio p50 | HTTP p50 | HTTP / stdio | target ≤ 3× | 32 clients: calls/s | p50 | p99 | target ≥ 5,000/s | 32 rmcp clients: calls/s |\n|---|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---|---:|\n");
    for row in &rows {
        let rate = row.load.per_second();
        let (one_stdio, one_http, one_ratio) = row.one_core.as_ref().map_or(
            ("-".to_string(), "-".to_string(), "-".to_string()),
            |l| {
                (
                    bench::ms(l.stdio),
                    bench::ms(l.http),
                    format!("{:.2}×", l.ratio()),
                )
            },
        );
        let worst = row.one_core.as_ref().map_or(row.two_cores.ratio(), |l| {
            l.ratio().max(row.two_cores.ratio())
        });
        report.push_str(&format!(
            "| {} | `{}` | {} | {} | {} | {} | {} | {:.2}× | {} | {:.0} | {} | {} | {} | {:.0} |\n",
            row.server,
            row.tool,
            one_stdio,
            one_http,
            one_ratio,
            bench::ms(row.two_cores.stdio),
            bench::ms(row.two_cores.http),
            row.two_cores.ratio(),
            bench::met(worst <= 3.0),
            rate,
            bench::ms(bench::percentile(&row.load.latencies, 0.5)),
            bench::ms(bench::percentile(&row.load.latencies, 0.99)),
            bench::met(rate >= 5000.0),
            row.rmcp_load.per_second(),
        ));
    }
    println!("{report}");
    println!("{}", bench::write_report("transports-bench.md", &report));
}
