//! Measurement plumbing shared by the servers' stdio benchmarks (`benches/stdio.rs`): timed
//! `ping` and `tools/call` round trips, a process's memory from `/proc/<pid>/status`,
//! percentiles, the release binary under test, and the figures and notes of a Markdown report.
//!
//! Nothing here prints: a benchmark writes its own report and progress lines. Setup failures
//! and error results panic, which aborts the benchmark with the reason.

use std::{
    path::{Path, PathBuf},
    process::Command,
    time::{Duration, Instant},
};

use serde_json::Value;

use crate::{McpProcess, tool_params};

// ---- timed requests -----------------------------------------------------------------------

/// The round trip of one MCP `ping`: request sent → answer decoded by the rmcp client. The
/// floor that a `tools/call` latency is compared with.
pub async fn ping(mcp: &McpProcess) -> Duration {
    let start = Instant::now();
    mcp.ping().await;
    start.elapsed()
}

/// One timed `tools/call` (see [`call`]).
pub struct TimedCall {
    /// Request sent → result decoded by the rmcp client.
    pub elapsed: Duration,
    /// The `data` of the result's envelope.
    pub data: Value,
    /// The size in bytes of the result's text content: the envelope as JSON text (the message
    /// on the wire carries it twice, as text and as `structuredContent`).
    pub text_len: usize,
}

/// Call `tool` with `args` (a JSON object, or null for none) and time the round trip. Panics
/// if the result is an error (`isError`, or an envelope whose `status` is not `ok`): a
/// benchmark must not time failures.
pub async fn call(mcp: &McpProcess, tool: &str, args: &Value) -> TimedCall {
    let params = tool_params(tool, args.clone());
    let start = Instant::now();
    let result = mcp.call_with(tool, params).await;
    let elapsed = start.elapsed();
    let structured = result.structured_content.unwrap_or(Value::Null);
    assert!(
        result.is_error != Some(true) && structured["status"] == "ok",
        "{tool} {args} returned an error: {structured}"
    );
    let text_len = result
        .content
        .first()
        .and_then(|c| c.as_text())
        .map_or(0, |t| t.text.len());
    TimedCall {
        elapsed,
        data: structured["data"].clone(),
        text_len,
    }
}

// ---- memory -------------------------------------------------------------------------------

/// Memory of a process, in KiB, from `/proc/<pid>/status`.
#[derive(Clone, Copy, Debug)]
pub struct Memory {
    /// `VmRSS`: resident set size.
    pub rss: u64,
    /// `RssAnon`: the resident anonymous memory (heap, stacks).
    pub anon: u64,
    /// `RssFile`: the resident file-backed memory (the executable, shared libraries).
    pub file: u64,
    /// `VmHWM`: the peak resident set size so far.
    pub peak: u64,
}

/// The memory of process `pid`; `None` when its `/proc/<pid>/status` cannot be read or lacks
/// a figure (the process is gone, or is a zombie).
pub fn read_memory(pid: u32) -> Option<Memory> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
    };
    Some(Memory {
        rss: field("VmRSS:")?,
        anon: field("RssAnon:")?,
        file: field("RssFile:")?,
        peak: field("VmHWM:")?,
    })
}

// ---- statistics ---------------------------------------------------------------------------

/// The `q`-quantile (0 < `q` ≤ 1) of `samples` by the nearest-rank method: the smallest
/// sample with at least `q` of all samples at or below it (for `q` = 0.5 and an even count,
/// the lower median). Panics if `samples` is empty.
pub fn percentile<T: Ord + Copy>(samples: &[T], q: f64) -> T {
    let mut sorted = samples.to_vec();
    sorted.sort();
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

// ---- the binary under test ----------------------------------------------------------------

/// The workspace's root directory.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Cargo's target directory: `CARGO_TARGET_DIR`, or `target` in the workspace.
pub fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("target"))
}

/// The release binary `bin` of `package`. `cargo bench` builds a package's binaries for its
/// benchmarks (with the bench profile, i.e. release) and names them in `CARGO_BIN_EXE_<bin>`:
/// pass that variable as `built` (`option_env!`, read where the benchmark is compiled). When it
/// is missing or names no file (e.g. the bench executable was built some other way), this runs
/// `cargo build --release -p <package> --bin <bin>`, whose progress goes to stderr, and panics
/// if that fails.
pub fn release_binary(built: Option<&str>, package: &str, bin: &str) -> PathBuf {
    if let Some(built) = built.map(PathBuf::from)
        && built.is_file()
    {
        return built;
    }
    let status = cargo()
        .args(["build", "--release", "-p", package, "--bin", bin])
        .status()
        .unwrap_or_else(|err| panic!("cannot run cargo: {err}"));
    assert!(
        status.success(),
        "`cargo build --release -p {package} --bin {bin}` failed ({status}); cannot benchmark"
    );
    let path = target_dir().join("release").join(bin);
    assert!(path.is_file(), "{} was not built", path.display());
    path
}

/// `cargo` (the one running this test or benchmark), in the workspace's root, without the
/// variables Cargo sets for the running package (`CARGO_PKG_NAME`, `CARGO_MANIFEST_DIR`, …):
/// build scripts that watch them (ring's does) would see them change and rebuild half the
/// tree, back and forth with every other build.
pub fn cargo() -> Command {
    let mut command = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        if name.starts_with("CARGO_PKG_")
            || name.starts_with("CARGO_MANIFEST_")
            || name.starts_with("CARGO_CFG_")
            || [
                "CARGO_CRATE_NAME",
                "CARGO_BIN_NAME",
                "CARGO_PRIMARY_PACKAGE",
                "CARGO_TARGET_TMPDIR",
                "CARGO_RUSTC_CURRENT_DIR",
                "OUT_DIR",
            ]
            .contains(&name.as_ref())
        {
            command.env_remove(name.as_ref());
        }
    }
    command.current_dir(workspace_root());
    command
}

/// The single-threaded runtime a benchmark drives its client with (the server runs in its own
/// process).
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("build a tokio runtime")
}

// ---- the report ---------------------------------------------------------------------------

/// The machine, for a report's heading: `<n> CPUs (<model name from /proc/cpuinfo>)`.
pub fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("model name"))
                .map(|m| m.trim_start_matches([' ', '\t', ':']).to_string())
        })
        .unwrap_or_else(|| "unknown".into());
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    format!("{cpus} CPUs ({cpu})")
}

/// Write `report` to `<target dir>/<file_name>`; returns the line that tells where it went, or
/// why it could not be written (the benchmark prints it).
pub fn write_report(file_name: &str, report: &str) -> String {
    let out = target_dir()
        .canonicalize()
        .unwrap_or_else(|_| target_dir())
        .join(file_name);
    match std::fs::write(&out, report) {
        Ok(()) => format!("report written to {}", out.display()),
        Err(err) => format!("cannot write {}: {err}", out.display()),
    }
}

/// A duration in milliseconds with three decimals: `0.123 ms`.
pub fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1e3)
}

/// A duration in milliseconds with the decimals its size warrants: `0.123 ms`, `12.3 ms`,
/// `123 ms`.
pub fn ms_scaled(d: Duration) -> String {
    let v = d.as_secs_f64() * 1e3;
    if v >= 100.0 {
        format!("{v:.0} ms")
    } else if v >= 10.0 {
        format!("{v:.1} ms")
    } else {
        format!("{v:.3} ms")
    }
}

/// An amount in KiB shown in MiB with one decimal: `12.3 MiB`.
pub fn mib(kb: u64) -> String {
    format!("{:.1} MiB", kb as f64 / 1024.0)
}

/// Whether a target is met, for a table cell: `yes`, or a bold `**no**`.
pub fn met(ok: bool) -> &'static str {
    if ok { "yes" } else { "**no**" }
}

/// SplitMix64: a fast, deterministic generator, good enough for benchmark data.
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// `0..n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// `lo..=hi`.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }

    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        ((self.next_u64() >> 11) as f64 / (1u64 << 53) as f64) < p
    }

    /// An item picked with the given weights.
    pub fn weighted<T: Copy>(&mut self, items: &[(T, u32)]) -> T {
        let total: u32 = items.iter().map(|(_, w)| w).sum();
        let mut at = self.below(total as usize) as u32;
        for (item, weight) in items {
            if at < *weight {
                return *item;
            }
            at -= weight;
        }
        items[items.len() - 1].0
    }
}

// ---- concurrency --------------------------------------------------------------------------

/// What many clients calling at once achieved.
pub struct Throughput {
    /// Calls answered (none may fail: an error result panics).
    pub calls: u64,
    /// From the first call sent to the last answer received.
    pub elapsed: Duration,
    /// Round trip of each call, as seen by its client.
    pub latencies: Vec<Duration>,
}

impl Throughput {
    pub fn per_second(&self) -> f64 {
        self.calls as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// Every client in `clients` calls `tool` with `args` back to back, all at once, until
/// `duration` has passed; each call's result must be ok.
pub async fn throughput(
    clients: &[McpProcess],
    tool: &str,
    args: &Value,
    duration: Duration,
) -> Throughput {
    let start = Instant::now();
    let deadline = start + duration;
    let mut tasks = tokio::task::JoinSet::new();
    for client in clients {
        let peer = client.peer().clone();
        let params = tool_params(tool, args.clone());
        let tool = tool.to_string();
        tasks.spawn(async move {
            let mut latencies = Vec::new();
            while Instant::now() < deadline {
                let sent = Instant::now();
                let result = peer
                    .call_tool(params.clone())
                    .await
                    .unwrap_or_else(|err| panic!("{tool}: {err}"));
                latencies.push(sent.elapsed());
                assert!(result.is_error != Some(true), "{tool}: {result:?}");
            }
            latencies
        });
    }
    let mut latencies = Vec::new();
    while let Some(done) = tasks.join_next().await {
        latencies.extend(done.expect("a client task failed"));
    }
    Throughput {
        calls: latencies.len() as u64,
        elapsed: start.elapsed(),
        latencies,
    }
}

/// One MCP session held by a lean HTTP client: the load generator of [`http_throughput`].
/// It speaks the 2025-11-25 session protocol directly (the handshake, then each request
/// POSTed with `Mcp-Session-Id`), sends pre-serialized requests and scans the answer's bytes
/// instead of decoding them into types, so that the machine's cores go to the server under
/// test rather than to the client.
struct RawSession {
    http: reqwest::Client,
    url: String,
    session: String,
}

const RAW_PROTOCOL: &str = "2025-11-25";

impl RawSession {
    async fn open(url: &str) -> anyhow::Result<Self> {
        let http = reqwest::Client::builder().tcp_nodelay(true).build()?;
        let init = serde_json::json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": RAW_PROTOCOL, "capabilities": {},
                       "clientInfo": {"name": "mcp-testkit-load", "version": "1"}}
        });
        let response = http
            .post(url)
            .header("accept", "application/json, text/event-stream")
            .json(&init)
            .send()
            .await?
            .error_for_status()?;
        let session = response
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .ok_or_else(|| anyhow::anyhow!("the server opened no session"))?
            .to_string();
        response.bytes().await?;
        let me = Self {
            http,
            url: url.to_string(),
            session,
        };
        let initialized = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        me.post(initialized.to_vec()).await?;
        Ok(me)
    }

    async fn post(&self, body: Vec<u8>) -> anyhow::Result<String> {
        let response = self
            .http
            .post(&self.url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .header("mcp-session-id", &self.session)
            .header("mcp-protocol-version", RAW_PROTOCOL)
            .body(body)
            .send()
            .await?
            .error_for_status()?;
        Ok(response.text().await?)
    }

    async fn close(&self) {
        let _ = self
            .http
            .delete(&self.url)
            .header("mcp-session-id", &self.session)
            .header("mcp-protocol-version", RAW_PROTOCOL)
            .send()
            .await;
    }
}

/// `clients` sessions on the Streamable HTTP server at `url` call `tool` with `args` back to
/// back, all at once, for `duration` (after `warm_up`); each answer must be a result that is
/// not an error. The clients are lean (see `RawSession`): this measures what the server can
/// serve, where [`throughput`] measures what rmcp's own clients get.
pub async fn http_throughput(
    url: &str,
    clients: usize,
    tool: &str,
    args: &Value,
    warm_up: Duration,
    duration: Duration,
) -> anyhow::Result<Throughput> {
    let mut sessions = Vec::with_capacity(clients);
    for _ in 0..clients {
        sessions.push(std::sync::Arc::new(RawSession::open(url).await?));
    }
    let start = Instant::now() + warm_up;
    let deadline = start + duration;
    let mut tasks = tokio::task::JoinSet::new();
    for session in &sessions {
        let session = session.clone();
        let tool = tool.to_string();
        let args = args.clone();
        tasks.spawn(async move {
            let mut latencies = Vec::new();
            let mut id: u64 = 1;
            loop {
                let sent = Instant::now();
                if sent >= deadline {
                    break;
                }
                let request = serde_json::json!({
                    "jsonrpc": "2.0", "id": id, "method": "tools/call",
                    "params": {"name": tool, "arguments": args}
                });
                let body = serde_json::to_vec(&request)?;
                let text = session.post(body).await?;
                anyhow::ensure!(
                    text.contains(&format!("\"id\":{id}"))
                        && text.contains("\"result\"")
                        && !text.contains("\"isError\":true"),
                    "{tool}: not an ok result: {}",
                    text.chars().take(500).collect::<String>()
                );
                let done = Instant::now();
                if sent >= start && done <= deadline {
                    latencies.push(done - sent);
                }
                id += 1;
            }
            anyhow::Ok(latencies)
        });
    }
    let mut latencies = Vec::new();
    while let Some(done) = tasks.join_next().await {
        latencies.extend(done??);
    }
    let elapsed = deadline.saturating_duration_since(start);
    for session in &sessions {
        session.close().await;
    }
    Ok(Throughput {
        calls: latencies.len() as u64,
        elapsed,
        latencies,
    })
}

/// A runtime with all cores, for benchmarks whose client side is itself concurrent.
pub fn multi_thread_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("build a tokio runtime")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentile_is_nearest_rank() {
        let samples: Vec<u64> = (1..=10).rev().collect();
        assert_eq!(percentile(&samples, 0.5), 5);
        assert_eq!(percentile(&samples, 0.99), 10);
        assert_eq!(percentile(&samples, 0.01), 1);
        assert_eq!(percentile(&[7u64], 0.5), 7);
        // The lower median, as `sorted[(len - 1) / 2]`.
        for len in 1..=9u64 {
            let sorted: Vec<u64> = (0..len).collect();
            assert_eq!(percentile(&sorted, 0.5), sorted[(sorted.len() - 1) / 2]);
        }
    }

    #[test]
    fn formats_figures() {
        assert_eq!(ms(Duration::from_micros(1_234)), "1.234 ms");
        assert_eq!(ms(Duration::from_millis(250)), "250.000 ms");
        assert_eq!(ms_scaled(Duration::from_micros(1_234)), "1.234 ms");
        assert_eq!(ms_scaled(Duration::from_micros(12_345)), "12.3 ms");
        assert_eq!(ms_scaled(Duration::from_millis(250)), "250 ms");
        assert_eq!(mib(1536), "1.5 MiB");
        assert_eq!(met(true), "yes");
        assert_eq!(met(false), "**no**");
    }

    #[test]
    fn reads_own_memory() {
        let memory = read_memory(std::process::id()).expect("this process's memory");
        assert!(memory.rss > 0 && memory.peak >= memory.rss, "{memory:?}");
        assert!(memory.anon + memory.file <= memory.rss, "{memory:?}");
    }
}
