//! A database that stops answering: `jility serve` on a private PostgreSQL cluster (made with
//! `initdb`, as in [`crate::outage`]) whose every process is stopped with `SIGSTOP` for
//! [`FREEZE`] — the connections stay open and nothing comes back — under REST writes (each
//! with an `Idempotency-Key`), REST reads, `/mcp` tool calls, requests without a token and
//! requests with an unknown token; then resumed with `SIGCONT`.
//!
//! Every request is answered within [`ANSWER_BOUND`]: `503` `database_unavailable`,
//! retryable, with `Retry-After` (a tool error with `retry_after_secs` at `/mcp`), never
//! `database_busy` nor PostgreSQL's wording; a request without a token is refused `401` at
//! once, freeze or not (its audit entry is written later). Once the cluster resumes every
//! channel succeeds again, every acknowledged write is there once, and no write whose
//! refusal said "nothing was written" lands after the fact (the work left on a blocking
//! thread is rolled back, not committed late); a refusal that says the outcome is unknown
//! is settled by retrying with the same key.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stderr
)]

use std::collections::HashMap;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use jility_cloud::auth::Tokens;
use serde_json::{Value, json};

use crate::cloud::{self, Server, client, workspace};
use crate::outage::{Cluster, pg_bin};
use crate::pg::TestDb;

/// The longest any answer may take, frozen or not.
const ANSWER_BOUND: Duration = Duration::from_secs(5);
/// How long the cluster stays frozen: longer than the bound, so that waiting it out fails.
const FREEZE: Duration = Duration::from_secs(9);
/// How long every channel may take to succeed again once the cluster resumes.
const RECOVERY_BOUND: Duration = Duration::from_secs(15);
/// A refusal of a request without a token waits on nothing.
const REFUSAL_BOUND: Duration = Duration::from_secs(1);
const PACE: Duration = Duration::from_millis(50);

/// What the test sends, a request a step each: REST writes (with keys) and reads, requests
/// without a token and with an unknown one, `/mcp` tool calls, a person's page, OAuth's
/// token endpoint (a well-formed refresh token it does not know: `400` when the database
/// answers).
const CHANNELS: [&str; 7] = [
    "rest-write",
    "rest-read",
    "no-token",
    "unknown-token",
    "mcp",
    "web",
    "oauth-token",
];

/// Whether `sample` is its channel's ordinary answer (what it gets with the database up).
fn ordinary(sample: &Sample) -> bool {
    match sample.channel {
        "no-token" | "unknown-token" => sample.status == 401,
        "oauth-token" => sample.status == 400,
        _ => sample.status != 0 && sample.error.is_none(),
    }
}

/// The cluster's processes: its postmaster (the first line of `postmaster.pid`) and every
/// process whose parent it is.
fn cluster_pids(cluster: &Cluster) -> Vec<u32> {
    let pidfile = std::fs::read_to_string(cluster.data().join("postmaster.pid")).unwrap();
    let postmaster: u32 = pidfile.lines().next().unwrap().trim().parse().unwrap();
    let mut pids = vec![postmaster];
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // `pid (comm) state ppid …`: the fields after the last `)`.
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|ppid| ppid.parse::<u32>().ok());
        if ppid == Some(postmaster) {
            pids.push(pid);
        }
    }
    pids
}

fn signal(pids: &[u32], signal: &str) {
    let status = Command::new("kill")
        .arg(format!("-{signal}"))
        .args(pids.iter().map(u32::to_string))
        .status()
        .unwrap();
    assert!(status.success(), "kill -{signal} {pids:?}");
}

#[derive(Debug, Clone)]
struct Sample {
    channel: &'static str,
    started: Instant,
    elapsed: Duration,
    /// The HTTP status, or 0 when the transport failed.
    status: u16,
    retry_after: Option<String>,
    /// The error envelope, if refused (a tool error's at `/mcp`).
    error: Option<Value>,
    /// The title and key of a write.
    write: Option<(String, String)>,
}

#[derive(Default)]
struct Record(Mutex<Vec<Sample>>);

impl Record {
    fn push(&self, sample: Sample) {
        self.0.lock().unwrap().push(sample);
    }

    fn all(&self) -> Vec<Sample> {
        self.0.lock().unwrap().clone()
    }
}

/// Create a ticket titled `title` over REST (it must be created).
fn create(http: &reqwest::blocking::Client, server: &Server, token: &str, title: &str) {
    let created = cloud::call_json(
        http,
        server,
        reqwest::Method::POST,
        "/tickets",
        token,
        Some(json!({"title": title})),
    );
    assert_eq!(created.status, 201, "{}", created.body);
}

/// A private cluster (`None`, said on stderr, without initdb), a database on it with a
/// workspace `alpha` and its token, and `jility serve` on it without a rate limit in the way.
fn private_cluster() -> Option<(Cluster, TestDb, String, Server)> {
    let Some(bin) = pg_bin() else {
        eprintln!("SKIPPED: initdb is not installed: the freeze test needs a cluster of its own");
        return None;
    };
    let cluster = Cluster::create(bin);
    let db = TestDb::on(&cluster.url());
    let tokens = Tokens::new(&db.connect());
    let (_alpha, token) = workspace(&tokens, "alpha");
    let server = Server::start(&db, &["--rate-limit", "1000000"]);
    Some((cluster, db, token, server))
}

/// One request of a channel: its status, `Retry-After` and body text.
fn send(request: reqwest::blocking::RequestBuilder) -> (u16, Option<String>, String) {
    match request.send() {
        Ok(response) => {
            let status = response.status().as_u16();
            let retry_after = response
                .headers()
                .get("retry-after")
                .and_then(|v| v.to_str().ok())
                .map(str::to_string);
            (status, retry_after, response.text().unwrap_or_default())
        }
        Err(err) => (0, None, err.to_string()),
    }
}

/// The error of an `/mcp` answer (JSON or SSE): a tool error's envelope, or the JSON-RPC
/// error's `data`; `None` for a tool's success.
fn mcp_error(text: &str) -> Option<Value> {
    let message: Value = if text.trim_start().starts_with('{') {
        serde_json::from_str(text).unwrap_or(Value::Null)
    } else {
        text.lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
            .find(|v| v.get("id").is_some())
            .unwrap_or(Value::Null)
    };
    if let Some(error) = message.get("error") {
        return Some(error.get("data").cloned().unwrap_or(error.clone()));
    }
    let result = message.get("result")?;
    (result["isError"] == true).then(|| result["structuredContent"]["error"].clone())
}

#[test]
fn a_frozen_database_is_answered_unavailable_within_seconds_and_nothing_lands_late() {
    let Some((cluster, db, token, server)) = private_cluster() else {
        return;
    };
    let http = client();
    create(&http, &server, &token, "before the freeze");
    let mcp_url = format!("{}/mcp", server.root());
    let session = crate::outage::mcp_session(&http, &mcp_url, &token);
    // A person signed in on the web board, whose pages read their session and workspace.
    crate::browser::person(&db, "ada@example.com", "Ada", "alpha", "member");
    let ada = crate::browser::Browser::signed_in(&server, "ada@example.com");
    let (cookie, root) = (ada.cookie_header(), server.root().to_string());

    let record = Arc::new(Record::default());
    let stop = Arc::new(AtomicBool::new(false));
    let mut threads = Vec::new();
    let unknown = format!("jil_live_{}", "Q".repeat(40));
    for name in CHANNELS {
        let (record, http, url, token) =
            (record.clone(), client(), server.url.clone(), token.clone());
        let (mcp_url, session, unknown) = (mcp_url.clone(), session.clone(), unknown.clone());
        let (cookie, root) = (cookie.clone(), root.clone());
        threads.push(crate::outage::channel(&stop, PACE, move |i| {
            let started = Instant::now();
            let mut write = None;
            let request = match name {
                "rest-write" => {
                    let (title, key) = (format!("w-{i}"), format!("key-{i}"));
                    write = Some((title.clone(), key.clone()));
                    http.post(format!("{url}/tickets"))
                        .header("idempotency-key", key)
                        .json(&json!({"title": title}))
                        .bearer_auth(&token)
                }
                "rest-read" if i % 2 == 0 => http
                    .get(format!("{url}/tickets/TASK-1"))
                    .bearer_auth(&token),
                "rest-read" => http
                    .get(format!("{url}/tickets?limit=5"))
                    .bearer_auth(&token),
                "no-token" => http.get(format!("{url}/tickets")),
                "web" => http
                    .get(format!("{root}/w/alpha/board"))
                    .header("cookie", &cookie),
                "oauth-token" => http.post(format!("{root}/oauth/token")).form(&[
                    ("grant_type", "refresh_token"),
                    (
                        "refresh_token",
                        "jil_rt_RRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRR",
                    ),
                    ("client_id", "not-a-client"),
                ]),
                "unknown-token" => http.get(format!("{url}/tickets")).bearer_auth(&unknown),
                _ => {
                    let title = format!("m-{i}");
                    write = Some((title.clone(), String::new()));
                    let body = json!({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
                        "params": {"name": "jility_create_ticket", "arguments": {"title": title}}});
                    http.post(&mcp_url)
                        .header("accept", "application/json, text/event-stream")
                        .header("content-type", "application/json")
                        .header("mcp-protocol-version", "2025-06-18")
                        .header("mcp-session-id", &session)
                        .bearer_auth(&token)
                        .body(body.to_string())
                }
            };
            let (status, retry_after, text) = send(request);
            let error = if name == "mcp" {
                mcp_error(&text)
            } else if (200..300).contains(&status) {
                None
            } else if name == "web" {
                // A page: what it says, as the person reads it.
                Some(json!({"page": status, "unavailable": text.contains("database")}))
            } else if name == "oauth-token" {
                serde_json::from_str::<Value>(&text).ok()
            } else {
                Some(
                    serde_json::from_str::<Value>(&text)
                        .map(|body| body["error"].clone())
                        .unwrap_or(json!({"transport": text})),
                )
            };
            record.push(Sample {
                channel: name,
                started,
                elapsed: started.elapsed(),
                status,
                retry_after,
                error,
                write,
            });
        }));
    }

    std::thread::sleep(Duration::from_secs(1));
    let pids = cluster_pids(&cluster);
    let frozen_at = Instant::now();
    signal(&pids, "STOP");
    std::thread::sleep(FREEZE);
    signal(&pids, "CONT");
    let resumed_at = Instant::now();
    // Until every channel has succeeded since the cluster resumed, at most the bound.
    loop {
        let samples = record.all();
        let back = CHANNELS.iter().all(|name| {
            samples
                .iter()
                .any(|s| s.channel == *name && s.started >= resumed_at && ordinary(s))
        });
        if back {
            break;
        }
        if resumed_at.elapsed() >= RECOVERY_BOUND {
            let last: Vec<&Sample> = CHANNELS
                .iter()
                .filter_map(|name| samples.iter().rev().find(|s| s.channel == *name))
                .collect();
            panic!(
                "not every channel succeeded within {RECOVERY_BOUND:?} of the cluster's return: {last:#?}\n{}",
                server.log()
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    stop.store(true, Ordering::Relaxed);
    for thread in threads {
        thread.join().unwrap();
    }
    let samples = record.all();

    // Every answer in bounded time; the figures for docs/reliability.md.
    let slowest = samples.iter().map(|s| s.elapsed).max().unwrap();
    let during: Vec<&Sample> = samples
        .iter()
        .filter(|s| s.started + s.elapsed > frozen_at && s.started < resumed_at)
        .collect();
    let first_refusal = during
        .iter()
        .filter(|s| s.error.is_some() && s.channel != "no-token")
        .map(|s| (s.started + s.elapsed).saturating_duration_since(frozen_at))
        .min();
    eprintln!(
        "frozen {FREEZE:?}: {} requests, {} answered during the freeze, slowest answer {slowest:?}, \
         first refusal {first_refusal:?} after the freeze began",
        samples.len(),
        during.len()
    );
    for sample in &samples {
        assert!(
            sample.elapsed <= ANSWER_BOUND,
            "{} took {:?} (bound {ANSWER_BOUND:?}): {sample:?}",
            sample.channel,
            sample.elapsed
        );
        assert_ne!(sample.status, 0, "no answer: {sample:?}");
        if sample.channel == "no-token" {
            assert_eq!(sample.status, 401, "{sample:?}");
            assert!(sample.elapsed <= REFUSAL_BOUND, "{sample:?}");
            continue;
        }
        if ordinary(sample) {
            continue;
        }
        let Some(error) = &sample.error else { continue };
        if sample.channel == "web" {
            assert_eq!(error["page"], 503, "{sample:?}");
            assert_eq!(error["unavailable"], true, "{sample:?}");
            assert!(sample.retry_after.is_some(), "no Retry-After: {sample:?}");
            continue;
        }
        if sample.channel == "oauth-token" {
            assert_eq!(sample.status, 503, "{sample:?}");
            assert_eq!(error["error"], "temporarily_unavailable", "{sample:?}");
            assert!(sample.retry_after.is_some(), "no Retry-After: {sample:?}");
            continue;
        }
        assert_eq!(error["code"], "database_unavailable", "{sample:?}");
        assert_eq!(error["retryable"], true, "{sample:?}");
        let text = error.to_string();
        for wording in [
            "SQLSTATE",
            "canceling statement",
            "connection",
            "database_busy",
        ] {
            assert!(!text.contains(wording), "{wording}: {sample:?}");
        }
        if sample.channel == "mcp" && sample.status == 200 {
            assert!(error["retry_after_secs"].as_u64().is_some(), "{sample:?}");
        } else {
            assert_eq!(sample.status, 503, "{sample:?}");
            assert!(sample.retry_after.is_some(), "no Retry-After: {sample:?}");
        }
    }
    for name in CHANNELS.iter().filter(|name| **name != "no-token") {
        assert!(
            during.iter().any(|s| s.channel == *name && !ordinary(s)),
            "{name} saw no refusal during the freeze"
        );
    }

    // What was written: give the work left behind time to finish, then look.
    std::thread::sleep(Duration::from_secs(2));
    let titles: Vec<String> = db
        .client()
        .query("SELECT title FROM tickets", &[])
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    let mut count: HashMap<&str, usize> = HashMap::new();
    for title in &titles {
        *count.entry(title.as_str()).or_default() += 1;
    }
    let mut unknown_outcomes = 0;
    for sample in samples.iter().filter(|s| s.write.is_some()) {
        let (title, key) = sample.write.as_ref().unwrap();
        let present = count.get(title.as_str()).copied().unwrap_or(0);
        match &sample.error {
            None => assert_eq!(present, 1, "acknowledged once: {sample:?}"),
            Some(error)
                if error["message"]
                    .as_str()
                    .unwrap_or("")
                    .contains("nothing was written") =>
            {
                assert_eq!(
                    present, 0,
                    "refused as not written, yet written later: {sample:?}"
                );
            }
            Some(error) => {
                // The outcome is unknown: the same key tells.
                assert!(
                    error["message"]
                        .as_str()
                        .unwrap_or("")
                        .contains("may or may not"),
                    "{sample:?}"
                );
                unknown_outcomes += 1;
                if key.is_empty() {
                    continue;
                }
                let again = http
                    .post(format!("{}/tickets", server.url))
                    .header("idempotency-key", key)
                    .json(&json!({"title": title}))
                    .bearer_auth(&token)
                    .send()
                    .unwrap();
                assert_eq!(again.status(), 201, "{sample:?}");
                let after: i64 = db
                    .client()
                    .query_one("SELECT count(*) FROM tickets WHERE title = $1", &[title])
                    .unwrap()
                    .get(0);
                assert_eq!(after, 1, "a retry with the key wrote it once: {sample:?}");
            }
        }
    }
    eprintln!("writes whose outcome was unknown: {unknown_outcomes}");
    let log = server.log();
    assert!(!log.contains("outage-s3cret-pw"), "{log}");
    assert!(!log.contains("panicked"), "{log}");
}

/// Each cause of a retryable refusal is named for what it is, with `Retry-After`: another
/// writer holding the workspace's lock (through the binary), every connection of the pool
/// in use (through the library's pool of one), and neither is called an outage.
#[test]
fn each_cause_of_a_refusal_is_named_for_what_it_is() {
    let db = TestDb::new();
    let tokens = Tokens::new(&db.connect());
    let (alpha, token) = workspace(&tokens, "alpha");
    let server = Server::start(&db, &[]);
    let http = client();
    create(&http, &server, &token, "first");

    // Another process holds the workspace's writer lock (as a writer does, in its
    // transaction): a write waits `lock_timeout` (3 s), then is refused as busy.
    let mut holder = db.client();
    let mut tx = holder.transaction().unwrap();
    tx.execute(
        "SELECT pg_advisory_xact_lock($1, $2)",
        &[&0x006a_696c_i32, &(i32::try_from(alpha.id).unwrap())],
    )
    .unwrap();
    let started = Instant::now();
    let refused = cloud::call_json(
        &http,
        &server,
        reqwest::Method::POST,
        "/tickets",
        &token,
        Some(json!({"title": "behind the lock"})),
    );
    let waited = started.elapsed();
    assert_eq!(refused.status, 503, "{}", refused.body);
    assert_eq!(refused.code(), "database_busy", "{}", refused.body);
    assert!(
        refused.message().contains("another writer held a lock"),
        "{}",
        refused.body
    );
    assert_eq!(refused.header("retry-after"), Some("1"), "{}", refused.body);
    assert_eq!(refused.error()["retryable"], true);
    assert!(waited < ANSWER_BOUND, "{waited:?}");
    // Reads go on meanwhile.
    let read = cloud::call_json(
        &http,
        &server,
        reqwest::Method::GET,
        "/tickets",
        &token,
        None,
    );
    assert_eq!(read.status, 200, "{}", read.body);
    tx.rollback().unwrap();
    create(&http, &server, &token, "after the lock");
    let titles: Vec<String> = db
        .client()
        .query("SELECT title FROM tickets ORDER BY number", &[])
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(titles, ["first", "after the lock"]);

    // A pool whose one connection is in use: busy, saying so (not an outage, not a lock).
    let pool = jility_cloud::store::PgDatabase::connect_with(&db.url, 1).unwrap();
    let (release, held) = std::sync::mpsc::channel::<()>();
    let (taken, wait_taken) = std::sync::mpsc::channel::<()>();
    let holder = {
        let pool = pool.clone();
        std::thread::spawn(move || {
            pool.with_client(|_client| -> Result<(), jility_core::store::StoreError> {
                taken.send(()).unwrap();
                let _ = held.recv();
                Ok(())
            })
            .unwrap();
        })
    };
    wait_taken.recv().unwrap();
    let err = pool
        .with_client(|_client| -> Result<(), jility_core::store::StoreError> { Ok(()) })
        .unwrap_err();
    let err = mcp_common::ToolError::from(err);
    assert_eq!(err.code.to_string(), "database_busy", "{err:?}");
    assert!(
        err.message.contains("all 1 of this server's connections"),
        "{err:?}"
    );
    assert_eq!(err.retry_after_secs, Some(1), "{err:?}");
    release.send(()).unwrap();
    holder.join().unwrap();
}

/// A write that committed is acknowledged as written, even when the database freezes while
/// its audit entry waits (here behind a lock on the audit log): never answered "nothing was
/// written" (a client without a key would write it again). Over REST and `/mcp`.
#[test]
fn a_committed_write_whose_audit_entry_is_frozen_is_acknowledged() {
    let Some((cluster, db, token, server)) = private_cluster() else {
        return;
    };
    let http = client();
    let mcp_url = format!("{}/mcp", server.root());
    let session = crate::outage::mcp_session(&http, &mcp_url, &token);
    for channel in ["rest", "mcp"] {
        let title = format!("audited-{channel}");
        let mut locker = db.client();
        let mut lock = locker.transaction().unwrap();
        lock.batch_execute("LOCK TABLE audit_log IN ACCESS EXCLUSIVE MODE")
            .unwrap();
        let sent = {
            let (http, url, token, title) =
                (client(), server.url.clone(), token.clone(), title.clone());
            let (mcp_url, session) = (mcp_url.clone(), session.clone());
            std::thread::spawn(move || {
                let started = Instant::now();
                let request = if channel == "rest" {
                    http.post(format!("{url}/tickets"))
                        .json(&json!({"title": title}))
                        .bearer_auth(&token)
                } else {
                    let body = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                        "params": {"name": "jility_create_ticket", "arguments": {"title": title}}});
                    http.post(&mcp_url)
                        .header("accept", "application/json, text/event-stream")
                        .header("content-type", "application/json")
                        .header("mcp-protocol-version", "2025-06-18")
                        .header("mcp-session-id", &session)
                        .bearer_auth(&token)
                        .body(body.to_string())
                };
                let (status, _, text) = send(request);
                (status, text, started.elapsed())
            })
        };
        // The ticket commits, its audit entry waits on the lock; then the database freezes.
        std::thread::sleep(Duration::from_millis(700));
        let pids = cluster_pids(&cluster);
        signal(&pids, "STOP");
        let (status, text, took) = sent.join().unwrap();
        signal(&pids, "CONT");
        lock.rollback().unwrap();
        assert!(took <= ANSWER_BOUND, "{channel}: {took:?}");
        if channel == "rest" {
            assert_eq!(status, 201, "{channel}: {text}");
        } else {
            assert_eq!(status, 200, "{channel}: {text}");
            assert!(mcp_error(&text).is_none(), "{channel}: {text}");
            assert!(text.contains("\"id\":7"), "{channel}: {text}");
        }
        assert!(!text.contains("nothing was written"), "{channel}: {text}");
        let present: i64 = db
            .client()
            .query_one("SELECT count(*) FROM tickets WHERE title = $1", &[&title])
            .unwrap()
            .get(0);
        assert_eq!(present, 1, "{channel}: {text}");
    }
}

/// A database that answers but holds a lock the reads need: every request is answered busy
/// within seconds however many wait at once — the few that hold a blocking thread after the
/// lock timeout, the ones queued behind them when they have waited for a thread too long —
/// instead of in batches, one lock timeout after another.
#[test]
fn requests_queued_behind_a_held_lock_are_answered_busy_within_seconds() {
    let db = TestDb::new();
    let tokens = Tokens::new(&db.connect());
    let (_alpha, token) = workspace(&tokens, "alpha");
    let server = Server::start(&db, &["--rate-limit", "1000000"]);
    let http = client();
    create(&http, &server, &token, "first");
    let mut locker = db.client();
    let mut lock = locker.transaction().unwrap();
    lock.batch_execute("LOCK TABLE tickets IN ACCESS EXCLUSIVE MODE")
        .unwrap();
    let answers: Vec<_> = (0..40)
        .map(|_| {
            let (http, url, token) = (client(), server.url.clone(), token.clone());
            std::thread::spawn(move || {
                let started = Instant::now();
                let (status, retry_after, text) = send(
                    http.get(format!("{url}/tickets?limit=5"))
                        .bearer_auth(&token),
                );
                (status, retry_after, text, started.elapsed())
            })
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|t| t.join().unwrap())
        .collect();
    lock.rollback().unwrap();
    let slowest = answers.iter().map(|a| a.3).max().unwrap();
    let mut took: Vec<u128> = answers.iter().map(|a| a.3.as_millis()).collect();
    took.sort_unstable();
    eprintln!("40 reads behind a held lock: slowest answer {slowest:?}; all (ms): {took:?}");
    for (status, retry_after, text, took) in &answers {
        assert!(*took <= ANSWER_BOUND, "{took:?}: {text}");
        assert_eq!(*status, 503, "{text}");
        let body: Value = serde_json::from_str(text).unwrap();
        assert_eq!(body["error"]["code"], "database_busy", "{text}");
        assert_eq!(body["error"]["retryable"], true, "{text}");
        assert!(retry_after.is_some(), "{text}");
    }
    let after = cloud::call_json(
        &http,
        &server,
        reqwest::Method::GET,
        "/tickets",
        &token,
        None,
    );
    assert_eq!(after.status, 200, "{}", after.body);
}
