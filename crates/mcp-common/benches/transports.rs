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
const ROUNDS: usize = 500;
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

fn cases(root: &Path) -> Vec<Case> {
    let home = root.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let home_env = ("HOME", home.display().to_string());

    let twig = root.join("twig");
    std::fs::create_dir_all(&twig).unwrap();
    git_repo(&twig);

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

    // A small real project: the client suites' fixture.
    let duvet = root.join("duvet");
    let fixture = bench::workspace_root().join("clients/fixtures/duvet-project");
    run(Command::new("cp").arg("-r").arg(&fixture).arg(&duvet));

    vec![
        Case {
            server: "twig-mcp",
            bin: bench::release_binary(None, "twig-mcp", "twig-mcp"),
            args: vec![],
            cwd: twig,
            env: vec![home_env.clone()],
            tool: "get_current_branch",
            tool_args: json!({}),
        },
        Case {
            server: "duvet",
            bin: bench::release_binary(None, "duvet", "duvet"),
            args: vec!["mcp"],
            cwd: duvet,
            env: vec![home_env.clone()],
            tool: "resolve_spec_id",
            tool_args: json!({"url": "https://www.rfc-editor.org/rfc/rfc9110"}),
        },
        Case {
            server: "jility",
            bin: jility,
            args: vec!["--mcp-server"],
            cwd: tracker,
            env: vec![home_env.clone(), ("JILITY_ACTOR", "bench".into())],
            tool: "jility_get_ticket",
            tool_args: json!({"ticket_id": "API-1"}),
        },
        Case {
            server: "git-mile",
            bin: git_mile,
            args: vec!["mcp-server"],
            cwd: mile,
            env: vec![home_env],
            tool: "git_mile.show",
            tool_args: json!({"entity": "issue", "id": issue}),
        },
    ]
}

/// p50 of ping and of the call, interleaved, after a warm-up.
async fn latencies(mcp: &McpProcess, case: &Case) -> (Duration, Duration) {
    for _ in 0..WARM_UP {
        mcp.ping().await;
        call(mcp, case).await;
    }
    let mut pings = Vec::with_capacity(ROUNDS);
    let mut calls = Vec::with_capacity(ROUNDS);
    for _ in 0..ROUNDS {
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

async fn spawn(case: &Case, wire: Wire) -> McpProcess {
    let env: Vec<(&str, &str)> = case.env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    McpProcess::spawn_bin_over(wire, &case.bin, &case.args, &case.cwd, &env)
        .await
        .unwrap_or_else(|err| panic!("{}: {err}", case.server))
}

struct Row {
    server: &'static str,
    tool: &'static str,
    stdio_ping: Duration,
    stdio_call: Duration,
    http_ping: Duration,
    http_call: Duration,
    load: bench::Throughput,
}

async fn measure(case: &Case) -> Row {
    let stdio = spawn(case, Wire::Stdio).await;
    let (stdio_ping, stdio_call) = latencies(&stdio, case).await;
    stdio.shutdown().await;

    let http = spawn(case, Wire::Http).await;
    let (http_ping, http_call) = latencies(&http, case).await;
    let url = http.url().expect("an HTTP endpoint").to_string();
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
    let load = bench::throughput(&clients, case.tool, &case.tool_args, LOAD).await;
    for client in clients {
        client.shutdown().await;
    }
    http.shutdown().await;
    Row {
        server: case.server,
        tool: case.tool,
        stdio_ping,
        stdio_call,
        http_ping,
        http_call,
        load,
    }
}

fn main() {
    let root = tempfile::tempdir().unwrap();
    // `TRANSPORTS_SERVERS=twig-mcp,jility` measures only those.
    let only: Option<Vec<String>> = std::env::var("TRANSPORTS_SERVERS")
        .ok()
        .map(|v| v.split(',').map(String::from).collect());
    let cases: Vec<Case> = cases(root.path())
        .into_iter()
        .filter(|c| {
            only.as_ref()
                .is_none_or(|o| o.iter().any(|s| s == c.server))
        })
        .collect();
    let rows: Vec<Row> = bench::multi_thread_runtime().block_on(async {
        let mut rows = Vec::new();
        for case in &cases {
            println!("measuring {} …", case.server);
            let row = measure(case).await;
            println!(
                "{}: stdio call p50 {}, HTTP call p50 {}, 32 clients {:.0} calls/s",
                row.server,
                bench::ms(row.stdio_call),
                bench::ms(row.http_call),
                row.load.per_second()
            );
            rows.push(row);
        }
        rows
    });
    let mut report = format!(
        "## Transports: Streamable HTTP against stdio\n\nMachine: {}. {ROUNDS} interleaved ping + call round trips per transport after {WARM_UP} warm-up rounds; then {CLIENTS} HTTP clients (one session each) calling back to back for {} s.\n\n",
        bench::machine(),
        LOAD.as_secs()
    );
    report.push_str("| server | cheap call | stdio ping p50 | stdio call p50 | HTTP ping p50 | HTTP call p50 | HTTP / stdio (call p50) | target ≤ 3× | 32 clients: calls/s | p50 | p99 | target ≥ 5,000/s |\n|---|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---|\n");
    for row in &rows {
        let ratio = row.http_call.as_secs_f64() / row.stdio_call.as_secs_f64();
        let rate = row.load.per_second();
        report.push_str(&format!(
            "| {} | `{}` | {} | {} | {} | {} | {:.2}× | {} | {:.0} | {} | {} | {} |\n",
            row.server,
            row.tool,
            bench::ms(row.stdio_ping),
            bench::ms(row.stdio_call),
            bench::ms(row.http_ping),
            bench::ms(row.http_call),
            ratio,
            bench::met(ratio <= 3.0),
            rate,
            bench::ms(bench::percentile(&row.load.latencies, 0.5)),
            bench::ms(bench::percentile(&row.load.latencies, 0.99)),
            bench::met(rate >= 5000.0),
        ));
    }
    println!("{report}");
    println!("{}", bench::write_report("transports-bench.md", &report));
}
