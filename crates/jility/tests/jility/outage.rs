//! A database outage under load: `jility serve` on a private PostgreSQL cluster that the test
//! makes with `initdb` (in a temp dir, on a free port of its own; never the machine's
//! server), written and read over REST, over `/mcp` (JSON-RPC with reqwest) and through the
//! bridge (`JILITY_MODE=cloud jility --mcp-server`), while the cluster is stopped
//! (`pg_ctl stop -m fast`, then `-m immediate`) and started again.
//!
//! While it is down every answer is `database_unavailable`, retryable, with a retry delay
//! (`Retry-After` over REST and on a refused `/mcp` request, `retry_after_secs` in the
//! envelope), never PostgreSQL's wording, each within [`ANSWER_BOUND`]; once it is back
//! every channel succeeds again by itself; and every write that was acknowledged is in the
//! database. The figures (time to the first retryable answer, the slowest answer during the
//! outage, time to recovery, acknowledged and present writes) are printed for
//! docs/reliability.md.
//!
//! When `root` runs the test, initdb refuses to: the cluster then runs as the `postgres`
//! user (`runuser`), in a temp dir given to it. Without initdb
//! (`/usr/lib/postgresql/*/bin`, or `PG_BIN_DIR`) the test says so and passes.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stderr
)] // assertions in tests; the figures and the servers' logs go to stderr

use crate::cloud;
use crate::pg;

use std::net::TcpListener;
use std::os::unix::fs::MetadataExt as _;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use jility_cloud::auth::Tokens;
use reqwest::Method;
use serde_json::{Value, json};

use cloud::{Server, client, workspace};
use pg::TestDb;

const BIN: &str = env!("CARGO_BIN_EXE_jility");

/// The longest any answer may take, outage or not.
const ANSWER_BOUND: Duration = Duration::from_secs(8);
/// How long the cluster stays down in each round.
const OUTAGE: Duration = Duration::from_secs(4);
/// How long every channel may take to succeed again once the cluster is back.
const RECOVERY_BOUND: Duration = Duration::from_secs(20);
/// The database URL's password: never in the server's log nor in an answer.
const PASSWORD: &str = "outage-s3cret-pw";
/// Pause between a channel's requests (the machine is shared).
const PACE: Duration = Duration::from_millis(40);

// ---------------------------------------------------------------------------------------
// The private cluster

/// The directory of PostgreSQL's programs: `PG_BIN_DIR`, else the newest
/// `/usr/lib/postgresql/*/bin` that has initdb.
pub(crate) fn pg_bin() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("PG_BIN_DIR").map(PathBuf::from) {
        return dir.join("initdb").is_file().then_some(dir);
    }
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let version = entry.file_name().to_str()?.parse::<u32>().ok()?;
            let bin = entry.path().join("bin");
            bin.join("initdb").is_file().then_some((version, bin))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, bin)| bin)
}

/// A PostgreSQL cluster of the test's own, stopped (immediately) and removed when dropped.
pub(crate) struct Cluster {
    bin: PathBuf,
    dir: tempfile::TempDir,
    port: u16,
    /// Run PostgreSQL's programs as `postgres` (the test runs as root).
    as_postgres: bool,
}

/// A temp dir for a cluster (under /tmp when the `postgres` user runs it: it must reach the
/// directory, not root's TMPDIR) and a free port.
fn place(prefix: &str, as_postgres: bool) -> (tempfile::TempDir, u16) {
    let mut builder = tempfile::Builder::new();
    builder.prefix(prefix);
    let dir = if as_postgres {
        builder.tempdir_in("/tmp")
    } else {
        builder.tempdir()
    }
    .unwrap();
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    (dir, port)
}

impl Cluster {
    /// initdb a cluster in a temp dir and start it on a free port.
    pub(crate) fn create(bin: PathBuf) -> Self {
        Self::create_with(bin, "")
    }

    /// [`Self::create`] with `settings` (lines of `postgresql.conf`) added before it starts.
    pub(crate) fn create_with(bin: PathBuf, settings: &str) -> Self {
        let as_postgres = std::fs::metadata("/proc/self").unwrap().uid() == 0;
        let (dir, port) = place("jility-outage-", as_postgres);
        if as_postgres {
            let id = |flag: &str| -> u32 {
                let out = Command::new("id")
                    .args([flag, "postgres"])
                    .output()
                    .unwrap();
                assert!(
                    out.status.success(),
                    "running as root, the cluster needs a `postgres` user: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
                String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
            };
            std::os::unix::fs::chown(dir.path(), Some(id("-u")), Some(id("-g"))).unwrap();
        }
        let cluster = Self {
            bin,
            dir,
            port,
            as_postgres,
        };
        let data = cluster.data();
        let out = cluster.run(
            "initdb",
            &[
                "-D",
                data.to_str().unwrap(),
                "-U",
                "postgres",
                "-A",
                "trust",
                "-E",
                "UTF8",
                "--no-sync",
            ],
        );
        assert!(out.status.success(), "initdb: {}", text(&out));
        if !settings.is_empty() {
            let conf = data.join("postgresql.conf");
            let mut all = std::fs::read_to_string(&conf).unwrap();
            all.push_str(settings);
            std::fs::write(&conf, all).unwrap();
        }
        cluster.start();
        cluster
    }

    pub(crate) fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// A streaming standby of this cluster (`pg_basebackup -R`), started on a port of its own.
    pub(crate) fn standby(&self) -> Self {
        let as_postgres = self.as_postgres;
        let (dir, port) = place("jility-standby-", as_postgres);
        if as_postgres {
            let owner = std::fs::metadata(self.dir.path()).unwrap();
            std::os::unix::fs::chown(dir.path(), Some(owner.uid()), Some(owner.gid())).unwrap();
        }
        let standby = Self {
            bin: self.bin.clone(),
            dir,
            port,
            as_postgres,
        };
        let data = standby.data();
        let out = standby.run(
            "pg_basebackup",
            &[
                "-h",
                "127.0.0.1",
                "-p",
                &self.port.to_string(),
                "-U",
                "postgres",
                "-D",
                data.to_str().unwrap(),
                "-R",
                "-X",
                "stream",
                "--checkpoint=fast",
                "--no-sync",
            ],
        );
        assert!(out.status.success(), "pg_basebackup: {}", text(&out));
        standby.start();
        standby
    }

    /// Send `signal` (`STOP`, `CONT`) to the server and every process it started.
    pub(crate) fn signal(&self, signal: &str) {
        let pid = std::fs::read_to_string(self.data().join("postmaster.pid")).unwrap();
        let pid = pid.lines().next().unwrap().trim().to_string();
        let sent = Command::new("kill")
            .args([&format!("-{signal}"), &pid])
            .status()
            .unwrap();
        assert!(sent.success());
        let _ = Command::new("pkill")
            .args([&format!("-{signal}"), "-P", &pid])
            .status();
    }

    /// The URL of database `name` on this cluster.
    pub(crate) fn url_of(&self, name: &str) -> String {
        format!(
            "postgres://postgres:{PASSWORD}@127.0.0.1:{}/{name}",
            self.port
        )
    }

    /// Run PostgreSQL's `program` (as `postgres` when the test is root).
    fn run(&self, program: &str, args: &[&str]) -> Output {
        let path = self.bin.join(program);
        let mut command = if self.as_postgres {
            let mut command = Command::new("runuser");
            command.args(["-u", "postgres", "--"]).arg(path);
            command
        } else {
            Command::new(path)
        };
        command
            .args(args)
            .current_dir(self.dir.path())
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }

    fn pg_ctl(&self, args: &[&str]) -> Output {
        let data = self.data();
        let mut all = vec!["-D", data.to_str().unwrap()];
        all.extend_from_slice(args);
        self.run("pg_ctl", &all)
    }

    /// The server's log (its stderr).
    pub(crate) fn log(&self) -> PathBuf {
        self.dir.path().join("postgres.log")
    }

    pub(crate) fn start(&self) {
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off",
            self.port,
            self.dir.path().display()
        );
        let log = self.dir.path().join("postgres.log");
        let out = self.pg_ctl(&[
            "-w",
            "-t",
            "60",
            "-l",
            log.to_str().unwrap(),
            "-o",
            &options,
            "start",
        ]);
        assert!(
            out.status.success(),
            "pg_ctl start: {}\n{}",
            text(&out),
            std::fs::read_to_string(&log).unwrap_or_default()
        );
    }

    pub(crate) fn stop(&self, mode: &str) {
        let out = self.pg_ctl(&["-w", "-t", "60", "-m", mode, "stop"]);
        assert!(
            out.status.success(),
            "pg_ctl stop -m {mode}: {}",
            text(&out)
        );
    }

    /// The cluster's URL, with a password (trust authentication ignores it) that no log
    /// line or answer may show.
    pub(crate) fn url(&self) -> String {
        format!(
            "postgres://postgres:{PASSWORD}@127.0.0.1:{}/postgres",
            self.port
        )
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = self.pg_ctl(&["-m", "immediate", "stop"]);
    }
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

// ---------------------------------------------------------------------------------------
// What the channels saw

#[derive(Debug, Clone)]
enum Outcome {
    Ok,
    Refused {
        /// The HTTP status, where the refusal was one (REST, a refused `/mcp` request).
        http: Option<u16>,
        envelope: Value,
        /// `Retry-After`, where the refusal was HTTP.
        retry_after_header: Option<String>,
    },
}

#[derive(Debug, Clone)]
struct Sample {
    channel: &'static str,
    started: Instant,
    elapsed: Duration,
    outcome: Outcome,
}

impl Sample {
    fn ended(&self) -> Instant {
        self.started + self.elapsed
    }
}

#[derive(Default)]
struct Record {
    samples: Mutex<Vec<Sample>>,
    /// Titles of tickets whose creation was acknowledged.
    acknowledged: Mutex<Vec<String>>,
}

impl Record {
    fn push(&self, channel: &'static str, started: Instant, outcome: Outcome) {
        self.samples.lock().unwrap().push(Sample {
            channel,
            started,
            elapsed: started.elapsed(),
            outcome,
        });
    }

    fn ack(&self, title: String) {
        self.acknowledged.lock().unwrap().push(title);
    }
}

/// Run `step` (given its iteration number) every `pace` until `stop` is set, on a thread.
pub(crate) fn channel(
    stop: &Arc<AtomicBool>,
    pace: Duration,
    mut step: impl FnMut(u64) + Send + 'static,
) -> std::thread::JoinHandle<()> {
    let stop = stop.clone();
    std::thread::spawn(move || {
        let mut i = 0;
        while !stop.load(Ordering::Relaxed) {
            step(i);
            i += 1;
            std::thread::sleep(pace);
        }
    })
}

/// The error envelope of an `/mcp` JSON-RPC answer (`text`, JSON or SSE): the tool's
/// `structuredContent.error` when `isError`, `None` on success.
fn mcp_tool_error(text: &str) -> Result<Option<Value>, String> {
    let message: Value = if text.trim_start().starts_with('{') {
        serde_json::from_str(text).map_err(|e| format!("{e}: {text}"))?
    } else {
        text.lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
            .find(|v| v.get("id").is_some())
            .ok_or_else(|| format!("no JSON-RPC answer in {text}"))?
    };
    let result = message
        .get("result")
        .ok_or_else(|| format!("not a tool result: {message}"))?;
    if result["isError"] == true {
        Ok(Some(result["structuredContent"]["error"].clone()))
    } else {
        Ok(None)
    }
}

/// An MCP session at `/mcp` over plain HTTP: its id.
pub(crate) fn mcp_session(http: &reqwest::blocking::Client, url: &str, token: &str) -> String {
    let post = |body: Value, session: Option<&str>| {
        let mut request = http
            .post(url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .header("mcp-protocol-version", "2025-06-18")
            .bearer_auth(token)
            .body(body.to_string());
        if let Some(session) = session {
            request = request.header("mcp-session-id", session);
        }
        request.send().unwrap()
    };
    let response = post(
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "outage-test", "version": "1.0"}}}),
        None,
    );
    assert!(response.status().is_success(), "{:?}", response.status());
    let session = response
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .expect("a session id")
        .to_string();
    let _ = response.text();
    let done = post(
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        Some(&session),
    );
    assert!(done.status().is_success(), "{:?}", done.status());
    session
}

/// Whether a write made now reaches a fresh subscriber of `GET /events` (that is, the
/// server's database listener is live): open the stream, wait for `ready`, create a ticket
/// (acknowledged in `record`), wait a few seconds for its `change`.
fn events_flow(server: &Server, token: &str, record: &Record, attempt: u32) -> bool {
    let http = reqwest::blocking::Client::builder()
        .timeout(None)
        .build()
        .unwrap();
    let Ok(response) = http
        .get(format!("{}/events", server.url))
        .bearer_auth(token)
        .header("accept", "text/event-stream")
        .send()
    else {
        return false;
    };
    if response.status() != 200 {
        return false;
    }
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    std::thread::spawn(move || {
        use std::io::BufRead as _;
        for line in std::io::BufReader::new(response).lines() {
            let Ok(line) = line else { break };
            if let Some(name) = line.strip_prefix("event:")
                && tx.send(name.trim().to_string()).is_err()
            {
                break;
            }
        }
    });
    if rx.recv_timeout(Duration::from_secs(5)).as_deref() != Ok("ready") {
        return false;
    }
    let title = format!("events-{attempt}");
    let created = client()
        .post(format!("{}/tickets", server.url))
        .bearer_auth(token)
        .json(&json!({"title": title}))
        .send();
    match created {
        Ok(response) if response.status() == 201 => record.ack(title),
        _ => return false,
    }
    let until = Instant::now() + Duration::from_secs(3);
    while let Ok(name) = rx.recv_timeout(until.saturating_duration_since(Instant::now())) {
        match name.as_str() {
            "change" => return true,
            "reset" => return false,
            _ => {}
        }
    }
    false
}

// ---------------------------------------------------------------------------------------
// The test

#[test]
fn a_database_outage_is_answered_unavailable_in_bounded_time_and_recovers_without_loss() {
    let Some(bin) = pg_bin() else {
        eprintln!(
            "SKIPPED: initdb is not installed (no /usr/lib/postgresql/*/bin/initdb, no PG_BIN_DIR): \
             the outage test needs a PostgreSQL cluster of its own"
        );
        return;
    };
    let cluster = Cluster::create(bin);
    let db = TestDb::on(&cluster.url());
    let tokens = Tokens::new(&db.connect());
    let (_alpha, token) = workspace(&tokens, "alpha");
    let server = Server::start(&db, &["--rate-limit", "1000000"]);
    let http = client();

    // Written and read before anything fails.
    let created = cloud::call_json(
        &http,
        &server,
        Method::POST,
        "/tickets",
        &token,
        Some(json!({"title": "before the outage"})),
    );
    assert_eq!(created.status, 201, "{}", created.body);
    let got = cloud::call_json(&http, &server, Method::GET, "/tickets/TASK-1", &token, None);
    assert_eq!(got.status, 200, "{}", got.body);

    let record = Arc::new(Record::default());
    record.ack("before the outage".into());
    let stop = Arc::new(AtomicBool::new(false));
    let mut threads = Vec::new();

    // REST: a writer and a reader.
    for (name, write) in [("rest-write", true), ("rest-read", false)] {
        let (record, http, url, token) =
            (record.clone(), client(), server.url.clone(), token.clone());
        threads.push(channel(&stop, PACE, move |i| {
            let title = format!("{name}-{i}");
            let started = Instant::now();
            let request = if write {
                http.post(format!("{url}/tickets"))
                    .json(&json!({"title": title}))
            } else if i % 2 == 0 {
                http.get(format!("{url}/tickets?limit=5"))
            } else {
                http.get(format!("{url}/tickets/TASK-1"))
            };
            let response = request.bearer_auth(&token).send();
            let outcome = match response {
                Ok(response) => {
                    let status = response.status().as_u16();
                    let retry_after = response
                        .headers()
                        .get("retry-after")
                        .and_then(|v| v.to_str().ok())
                        .map(str::to_string);
                    let body: Value = response.json().unwrap_or(Value::Null);
                    if (200..300).contains(&status) {
                        if write {
                            record.ack(title);
                        }
                        Outcome::Ok
                    } else {
                        Outcome::Refused {
                            http: Some(status),
                            envelope: body["error"].clone(),
                            retry_after_header: retry_after,
                        }
                    }
                }
                Err(err) => Outcome::Refused {
                    http: None,
                    envelope: json!({"transport": err.to_string()}),
                    retry_after_header: None,
                },
            };
            record.push(name, started, outcome);
        }));
    }

    // /mcp: tool calls in one session, as JSON-RPC over reqwest.
    {
        let (record, http, url, token) = (
            record.clone(),
            client(),
            format!("{}/mcp", server.root()),
            token.clone(),
        );
        let session = mcp_session(&http, &url, &token);
        threads.push(channel(&stop, PACE, move |i| {
            let title = format!("mcp-{i}");
            let started = Instant::now();
            let body = json!({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
                "params": {"name": "jility_create_ticket", "arguments": {"title": title}}});
            let response = http
                .post(&url)
                .header("accept", "application/json, text/event-stream")
                .header("content-type", "application/json")
                .header("mcp-protocol-version", "2025-06-18")
                .header("mcp-session-id", &session)
                .bearer_auth(&token)
                .body(body.to_string())
                .send();
            let outcome = match response {
                Ok(response) => {
                    let status = response.status().as_u16();
                    let retry_after = response
                        .headers()
                        .get("retry-after")
                        .and_then(|v| v.to_str().ok())
                        .map(str::to_string);
                    let text = response.text().unwrap_or_default();
                    if status == 200 {
                        match mcp_tool_error(&text) {
                            Ok(None) => {
                                record.ack(title);
                                Outcome::Ok
                            }
                            Ok(Some(envelope)) => Outcome::Refused {
                                http: None,
                                envelope,
                                retry_after_header: None,
                            },
                            Err(err) => panic!("/mcp: {err}"),
                        }
                    } else {
                        let body: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
                        Outcome::Refused {
                            http: Some(status),
                            envelope: body["error"].clone(),
                            retry_after_header: retry_after,
                        }
                    }
                }
                Err(err) => Outcome::Refused {
                    http: None,
                    envelope: json!({"transport": err.to_string()}),
                    retry_after_header: None,
                },
            };
            record.push("mcp", started, outcome);
        }));
    }

    // The bridge: creates (its cache never answers a write).
    let home = tempfile::tempdir().unwrap();
    {
        let (record, api, token, home) = (
            record.clone(),
            server.root().to_string(),
            token.clone(),
            home.path().to_path_buf(),
        );
        let stop = stop.clone();
        threads.push(std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            let config = home.join("config");
            let env = [
                ("JILITY_MODE", "cloud"),
                ("JILITY_API_URL", api.as_str()),
                ("JILITY_API_TOKEN", token.as_str()),
                ("HOME", home.to_str().unwrap()),
                ("XDG_CONFIG_HOME", config.to_str().unwrap()),
            ];
            let bridge = rt
                .block_on(mcp_testkit::McpProcess::spawn_bin(
                    BIN,
                    &["--mcp-server"],
                    &home,
                    &env,
                ))
                .expect("start the bridge");
            let mut i = 0;
            while !stop.load(Ordering::Relaxed) {
                let title = format!("bridge-{i}");
                let started = Instant::now();
                let result =
                    rt.block_on(bridge.call("jility_create_ticket", json!({"title": title})));
                let outcome = if result.is_error == Some(true) {
                    let structured = result.structured_content.unwrap_or(Value::Null);
                    Outcome::Refused {
                        http: None,
                        envelope: structured["error"].clone(),
                        retry_after_header: None,
                    }
                } else {
                    record.ack(title);
                    Outcome::Ok
                };
                record.push("bridge", started, outcome);
                i += 1;
                std::thread::sleep(PACE);
            }
            drop(bridge);
        }));
    }

    let channels = ["rest-write", "rest-read", "mcp", "bridge"];
    let successes_since = |since: Instant| -> Vec<&'static str> {
        let samples = record.samples.lock().unwrap();
        channels
            .iter()
            .copied()
            .filter(|c| {
                samples.iter().any(|s| {
                    s.channel == *c && s.started >= since && matches!(s.outcome, Outcome::Ok)
                })
            })
            .collect()
    };
    // Every channel works before the outage.
    let warm = Instant::now();
    while successes_since(warm).len() < channels.len() {
        assert!(
            warm.elapsed() < Duration::from_secs(60),
            "the channels never succeeded"
        );
        std::thread::sleep(Duration::from_millis(50));
    }

    let worst_ms = AtomicU64::new(0);
    let mut figures = Vec::new();
    for mode in ["fast", "immediate"] {
        std::thread::sleep(Duration::from_millis(500));
        let stop_issued = Instant::now();
        cluster.stop(mode);
        let stopped = Instant::now();
        std::thread::sleep(OUTAGE);
        let start_issued = Instant::now();
        cluster.start();
        let started = Instant::now();
        // Every channel succeeds again by itself.
        let mut recovered = Vec::new();
        for c in channels {
            loop {
                let first = record
                    .samples
                    .lock()
                    .unwrap()
                    .iter()
                    .filter(|s| {
                        s.channel == c && s.started >= started && matches!(s.outcome, Outcome::Ok)
                    })
                    .map(Sample::ended)
                    .min();
                if let Some(first) = first {
                    recovered.push((c, first - started));
                    break;
                }
                assert!(
                    started.elapsed() < RECOVERY_BOUND,
                    "{c} did not recover within {RECOVERY_BOUND:?} after pg_ctl start ({mode})\n{}",
                    server.log()
                );
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        let samples = record.samples.lock().unwrap().clone();
        // Requests made while the cluster was down were all refused as unavailable.
        let during: Vec<&Sample> = samples
            .iter()
            .filter(|s| s.started >= stopped && s.ended() <= start_issued)
            .collect();
        for c in channels {
            let of_channel: Vec<_> = during.iter().filter(|s| s.channel == c).collect();
            assert!(
                !of_channel.is_empty(),
                "{c} made no request during the outage ({mode}): stop issued at 0, stopped {:?}, start issued {:?}; its requests: {:?}",
                stopped - stop_issued,
                start_issued - stop_issued,
                samples
                    .iter()
                    .filter(|s| s.channel == c && s.ended() >= stop_issued)
                    .map(|s| (
                        s.started.saturating_duration_since(stop_issued),
                        s.elapsed,
                        &s.outcome
                    ))
                    .collect::<Vec<_>>()
            );
            for s in of_channel {
                assert!(
                    !matches!(s.outcome, Outcome::Ok),
                    "{c} succeeded with the database down ({mode}): {s:?}"
                );
            }
        }
        let first_refusal = samples
            .iter()
            .filter(|s| s.ended() >= stop_issued && !matches!(s.outcome, Outcome::Ok))
            .map(|s| s.ended() - stop_issued)
            .min()
            .unwrap();
        let worst = samples
            .iter()
            .filter(|s| s.ended() >= stop_issued && s.started <= started)
            .map(|s| s.elapsed)
            .max()
            .unwrap();
        worst_ms.fetch_max(worst.as_millis() as u64, Ordering::Relaxed);
        let refused = during.len();
        figures.push(format!(
            "stop -m {mode}: pg_ctl stop took {:?}; first retryable answer {:?} after stop was issued; \
             {refused} requests during the {OUTAGE:?} outage, all refused; slowest answer {:?}; \
             pg_ctl start took {:?}; first success after start returned: {}",
            stopped - stop_issued,
            first_refusal,
            worst,
            started - start_issued,
            recovered
                .iter()
                .map(|(c, d)| format!("{c} {d:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    // The event listener reconnected by itself: a write reaches a subscriber again.
    let back = Instant::now();
    let mut attempt = 0;
    while !events_flow(&server, &token, &record, attempt) {
        attempt += 1;
        assert!(
            back.elapsed() < Duration::from_secs(30),
            "no event reached a subscriber within 30 s after the database came back\n{}",
            server.log()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    figures.push(format!(
        "events: a write reached a new /events subscriber {:?} after the last recovery was checked ({attempt} failed attempts before)",
        back.elapsed()
    ));
    stop.store(true, Ordering::Relaxed);
    for thread in threads {
        thread.join().unwrap();
    }

    // Every answer of the whole run: a success, or database_unavailable, retryable, with a
    // retry delay and the hint, never PostgreSQL's wording; each within the bound.
    let samples = record.samples.lock().unwrap().clone();
    let mut refusals = 0;
    for s in &samples {
        assert!(
            s.elapsed < ANSWER_BOUND,
            "{} took {:?} (bound {ANSWER_BOUND:?}): {s:?}",
            s.channel,
            s.elapsed
        );
        let Outcome::Refused {
            http,
            envelope,
            retry_after_header,
        } = &s.outcome
        else {
            continue;
        };
        refusals += 1;
        assert_eq!(envelope["code"], "database_unavailable", "{s:?}");
        assert_eq!(envelope["retryable"], true, "{s:?}");
        assert_eq!(
            envelope["message"], "The database cannot be reached",
            "{s:?}"
        );
        assert_eq!(
            envelope["hint"],
            "Retry in a few seconds: the server answers again as soon as its database is back.",
            "{s:?}"
        );
        let secs = envelope["retry_after_secs"].as_u64();
        assert!(secs.is_some_and(|s| (1..=10).contains(&s)), "{s:?}");
        if let Some(status) = http {
            assert_eq!(*status, 503, "{s:?}");
            let header = retry_after_header
                .as_deref()
                .and_then(|v| v.parse::<u64>().ok());
            assert_eq!(header, secs, "Retry-After: {s:?}");
        }
        let text = envelope.to_string();
        for wording in [
            "57P0",
            "terminating connection",
            "administrator command",
            "os error",
            "Connection refused",
            "postgres://",
            PASSWORD,
        ] {
            assert!(
                !text.contains(wording),
                "PostgreSQL's wording {wording:?} in {text}"
            );
        }
    }
    assert!(refusals > 0);

    // Nothing acknowledged was lost.
    let acknowledged = record.acknowledged.lock().unwrap().clone();
    let present: std::collections::HashSet<String> = db
        .client()
        .query("SELECT title FROM tickets", &[])
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect();
    let lost: Vec<&String> = acknowledged
        .iter()
        .filter(|t| !present.contains(*t))
        .collect();
    assert!(lost.is_empty(), "acknowledged writes lost: {lost:?}");

    // The server logged PostgreSQL's reason, without secrets, and is still serving.
    let log = server.log();
    assert!(log.contains("the database cannot be reached"), "{log}");
    assert!(!log.contains(PASSWORD), "the password is in the log");
    let after = cloud::call_json(
        &http,
        &server,
        Method::GET,
        "/tickets?limit=1",
        &token,
        None,
    );
    assert_eq!(after.status, 200, "{}", after.body);

    eprintln!("OUTAGE FIGURES (for docs/reliability.md):");
    for line in &figures {
        eprintln!("  {line}");
    }
    eprintln!(
        "  answers: {} in all, {refusals} refused as database_unavailable, slowest {} ms (bound {ANSWER_BOUND:?}); \
         writes acknowledged {}, present {} (none lost)",
        samples.len(),
        worst_ms.load(Ordering::Relaxed),
        acknowledged.len(),
        present.len()
    );
}

/// A command that starts on a database nobody answers at (`jility serve`, `jility admin
/// create-workspace`) stops at once saying where it looked (host, port, database; never the
/// password) and what to check, not "retry in a few seconds".
#[test]
fn starting_on_a_database_that_cannot_be_reached_names_where_it_looked() {
    let port = {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a free port");
        listener.local_addr().expect("addr").port()
    };
    let url = format!("postgres://jility:{PASSWORD}@127.0.0.1:{port}/tracker");
    for args in [
        vec![
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--database-url",
            url.as_str(),
        ],
        vec![
            "admin",
            "create-workspace",
            "acme",
            "--database-url",
            url.as_str(),
        ],
    ] {
        let started = Instant::now();
        let out = Command::new(BIN)
            .args(&args)
            .env_remove("DATABASE_URL")
            .stdin(Stdio::null())
            .output()
            .expect("runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?}: {stderr}");
        assert!(
            started.elapsed() < ANSWER_BOUND,
            "{args:?} took {:?}",
            started.elapsed()
        );
        assert!(
            stderr.contains(&format!(
                "Cannot reach the database at 127.0.0.1:{port}/tracker"
            )),
            "{args:?}: {stderr}"
        );
        assert!(stderr.contains("--database-url"), "{args:?}: {stderr}");
        assert!(!stderr.contains(PASSWORD), "{args:?}: {stderr}");
        assert!(
            !stderr.contains("retry in a few seconds"),
            "{args:?}: {stderr}"
        );
    }
}
