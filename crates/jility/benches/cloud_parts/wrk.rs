//! The GET throughput with `wrk` as the load generator, when it is installed (Debian's
//! `wrk`; `JILITY_BENCH_WRK` names another): a client written in C, as `pgbench`'s is, so
//! that the ratio to `pgbench -S` compares the two servers, not the two clients. The
//! benchmark's own generator (async reqwest, [`super::read_throughput`]) costs a core about
//! 18 µs a request on loopback, taken from the two CPUs the server and PostgreSQL share;
//! `wrk` a fraction of that. It checks statuses only (any answer but 2xx fails the run); the
//! reqwest run beside it checks every answer's ticket number and decodes a sample whole.
//!
//! `CLIENTS` connections in all, spread over the servers (one `wrk` each, run at once),
//! each thread's connections with a token of its own; a warm-up run, then the measured
//! one. Its latencies are wrk's own percentiles (with several servers, the highest of
//! theirs); wrk's CPU is in the split's "rest".

use super::*;

/// The request script: `GET /api/v1/tickets/{KEY}-{random N}` with a bearer token per
/// thread, from the environment.
const SCRIPT: &str = r#"
local tokens = {}
for t in string.gmatch(os.getenv("JILITY_BENCH_TOKENS") or "", "[^,]+") do
  tokens[#tokens + 1] = t
end
local prefix = os.getenv("JILITY_BENCH_PREFIX")
local tickets = tonumber(os.getenv("JILITY_BENCH_TICKETS"))
local seed = tonumber(os.getenv("JILITY_BENCH_SEED"))
local next_thread = 0
function setup(thread)
  thread:set("token", tokens[next_thread % #tokens + 1])
  thread:set("seed", seed + next_thread)
  thread:set("prefix", prefix)
  thread:set("tickets", tickets)
  next_thread = next_thread + 1
end
function init(args)
  math.randomseed(seed)
  headers = { ["Authorization"] = "Bearer " .. token }
end
function request()
  return wrk.format("GET", prefix .. math.random(1, tickets), headers)
end
"#;

/// The `wrk` to run, if there is one.
pub fn binary() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("JILITY_BENCH_WRK").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(path));
    }
    on_path("wrk")
}

/// What one `wrk` run printed.
struct Run {
    requests: usize,
    window: Duration,
    p50: Duration,
    p99: Duration,
}

/// A duration as wrk prints it: `812.00us`, `1.23ms`, `2.00s`.
fn duration(text: &str) -> Option<Duration> {
    let (number, scale) = if let Some(n) = text.strip_suffix("us") {
        (n, 1e-6)
    } else if let Some(n) = text.strip_suffix("ms") {
        (n, 1e-3)
    } else if let Some(n) = text.strip_suffix('m') {
        (n, 60.0)
    } else {
        (text.strip_suffix('s')?, 1.0)
    };
    Some(Duration::from_secs_f64(number.parse::<f64>().ok()? * scale))
}

fn parse(out: &str) -> Run {
    let mut run = Run {
        requests: 0,
        window: Duration::ZERO,
        p50: Duration::ZERO,
        p99: Duration::ZERO,
    };
    for line in out.lines().map(str::trim) {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            ["50%", at] => run.p50 = duration(at).unwrap(),
            ["99%", at] => run.p99 = duration(at).unwrap(),
            [n, "requests", "in", took, ..] => {
                run.requests = n.parse().unwrap();
                run.window = duration(took.trim_end_matches(',')).unwrap();
            }
            _ => {}
        }
        assert!(
            !line.starts_with("Non-2xx") && !line.starts_with("Socket errors"),
            "wrk: {line}\n{out}"
        );
    }
    assert!(run.requests > 0, "wrk printed no requests:\n{out}");
    run
}

/// What the connections ask for: the Lua script (it reads `JILITY_BENCH_TOKENS`,
/// `JILITY_BENCH_PREFIX`, `JILITY_BENCH_TICKETS` and `JILITY_BENCH_SEED`), the tickets
/// `KEY-1` to `KEY-tickets` of the tokens' workspace, and more settings for the script.
pub struct Ask<'a> {
    pub script: &'a str,
    pub tickets: usize,
    pub env: Vec<(&'a str, String)>,
}

impl Ask<'_> {
    /// A random ticket of the benchmark's 100,000 each request ([`SCRIPT`]).
    fn template() -> Self {
        Self::random_of(TICKETS)
    }

    /// A random ticket of `tickets` each request ([`SCRIPT`]).
    pub fn random_of(tickets: usize) -> Self {
        Self {
            script: SCRIPT,
            tickets,
            env: Vec::new(),
        }
    }
}

/// `wrk` against each of `bases` at once (`threads` threads and `connections` connections
/// each) for `seconds`, each with its share of `tokens`.
fn run_all(
    bin: &Path,
    script: &Path,
    ask: &Ask,
    bases: &[&str],
    tokens: &[String],
    seconds: u64,
    seed: u64,
) -> Vec<Run> {
    let each = CLIENTS / bases.len();
    let threads = (2 / bases.len()).max(1);
    let children: Vec<Child> = bases
        .iter()
        .enumerate()
        .map(|(i, base)| {
            let (host, prefix) = base.split_at(base.find("/api/").unwrap());
            let mine: Vec<&str> = tokens
                .iter()
                .skip(i)
                .step_by(bases.len())
                .map(String::as_str)
                .collect();
            Command::new(bin)
                .args([
                    &format!("-t{threads}"),
                    &format!("-c{each}"),
                    &format!("-d{seconds}s"),
                    "--latency",
                    // As long as the reqwest clients wait (wrk's default, 2 s, would count a
                    // slower answer as a socket error and fail the run).
                    "--timeout",
                    "30s",
                    "-s",
                ])
                .arg(script)
                .arg(host)
                .env("JILITY_BENCH_TOKENS", mine.join(","))
                .env("JILITY_BENCH_PREFIX", format!("{prefix}/tickets/{KEY}-"))
                .env("JILITY_BENCH_TICKETS", ask.tickets.to_string())
                .env("JILITY_BENCH_SEED", (seed + i as u64 * 1000).to_string())
                .envs(ask.env.iter().map(|(name, value)| (name, value)))
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap_or_else(|err| panic!("cannot run {}: {err}", bin.display()))
        })
        .collect();
    children
        .into_iter()
        .map(|child| parse(&stdout_of("wrk", &child.wait_with_output().unwrap())))
        .collect()
}

/// The throughput of `CLIENTS` `wrk` connections spread over `bases` (the servers
/// `servers`), or `None` without `wrk`.
pub fn read_throughput(
    bases: &[&str],
    tokens: &[String],
    seed: u64,
    servers: &[u32],
) -> Option<Throughput> {
    read_throughput_asking(&Ask::template(), bases, tokens, seed, servers)
}

/// [`read_throughput`], the connections asking what `ask` says.
pub fn read_throughput_asking(
    ask: &Ask,
    bases: &[&str],
    tokens: &[String],
    seed: u64,
    servers: &[u32],
) -> Option<Throughput> {
    let bin = binary()?;
    let dir = temp_dir("jility-bench-wrk-");
    let script = dir.path().join("get.lua");
    std::fs::write(&script, ask.script).unwrap();
    let warm_up = WARM_UP.as_secs().max(1);
    let warmed: usize = run_all(&bin, &script, ask, bases, tokens, warm_up, seed)
        .iter()
        .map(|r| r.requests)
        .sum();
    let first = cpu_ticks(servers);
    let runs = run_all(
        &bin,
        &script,
        ask,
        bases,
        tokens,
        MEASURE.as_secs(),
        seed + 1,
    );
    let cpu = first.and_then(|first| first.split(cpu_ticks(servers)?));
    if runs.len() > 1 {
        // The line below takes the worst of each percentile: say what each server got.
        for (base, run) in bases.iter().zip(&runs) {
            eprintln!(
                "  wrk on {base}: {} requests in {:.1?}, p50 {:.3?} p99 {:.3?}",
                run.requests, run.window, run.p50, run.p99
            );
        }
    }
    let window = runs.iter().map(|r| r.window).max().unwrap_or(MEASURE);
    let requests: usize = runs.iter().map(|r| r.requests).sum();
    Some(Throughput {
        requests,
        window,
        p50: runs.iter().map(|r| r.p50).max().unwrap_or_default(),
        p99: runs.iter().map(|r| r.p99).max().unwrap_or_default(),
        parsed: 0,
        checked: warmed + requests,
        cpu,
    })
}
