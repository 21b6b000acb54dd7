//! Faults: `kill -9` of `git mile mcp-server` writers in the middle of comments, then
//! integrity checks of the repository they shared.
//!
//! Each round starts two servers on one repository, pipelines `git_mile.comment` calls on a
//! few issues into both (each body unique), and SIGKILLs each server at a moment drawn from a
//! PRNG seeded per round. After every round: `git fsck --strict` passes and reports nothing
//! damaged (dangling objects, which a killed writer leaves, are fine), `git mile show` reads
//! every issue, every comment acknowledged before the kill is there exactly once, no comment
//! is there twice, a comment answered with an error is absent, and each issue's ref holds one
//! commit per event (its creation and its comments). Lock files a killed writer left are
//! counted and removed, as their error message tells users to. At the end a fresh server lists
//! and shows the issues and comments again. The rounds are bounded in count and time; a
//! failure names the seed (`GIT_MILE_FAULTS_SEED=… cargo test -p git-mile --test git-mile faults::`).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stderr // the summary of the kills
)]

use crate::support;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use mcp_testkit::bench::Rng;
use mcp_testkit::killable::{Frame, Killable as Writer, seed};
use serde_json::{Value, json};
use support::{RawSession, Sandbox, bin};

/// Kill rounds at most, and at least (when the time budget runs out early).
const ROUNDS: u64 = 10;
const MIN_ROUNDS: u64 = 3;
/// No round starts after this much time.
const BUDGET: Duration = Duration::from_secs(18);
/// Servers writing at once in a round.
const WRITERS: usize = 2;
/// Issues commented on.
const ISSUES: usize = 3;
/// Comment calls in flight per server.
const WINDOW: usize = 6;
const BASE_SEED: u64 = 0x6769_742d_6d69_6c65;

/// `git mile mcp-server` in `repo`, its stderr in `logs`.
fn spawn_writer(
    sandbox: &Sandbox,
    repo: &Path,
    logs: &Path,
    index: usize,
    label: &str,
    tx: mpsc::Sender<Frame>,
) -> Writer {
    let mut command = sandbox.command(bin(), repo);
    command.arg("mcp-server");
    Writer::spawn(
        command,
        logs.join(format!("{label}-w{index}.stderr")),
        index,
        tx,
    )
}

fn initialize(writer: &mut Writer, rx: &mpsc::Receiver<Frame>) {
    let hello = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "faults", "version": "1"}}});
    assert!(writer.send(&hello), "writer {}: stdin closed", writer.index);
    let (w, answer) = rx
        .recv_timeout(Duration::from_secs(30))
        .unwrap_or_else(|e| panic!("writer {}: no initialize answer ({e})", writer.index));
    assert_eq!(w, writer.index);
    assert_eq!(answer["id"], 0, "{answer}\n{}", writer.stderr());
    assert!(answer["result"]["serverInfo"].is_object(), "{answer}");
    assert!(writer.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"})));
}

fn comment_call(id: u64, issue: &str, body: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": "git_mile.comment",
        "arguments": {"entity": "issue", "id": issue, "body": body}}})
}

/// What the client learnt of the comments it sent.
#[derive(Default)]
struct Ledger {
    /// Body → issue, of every comment sent.
    sent: BTreeMap<String, String>,
    /// Bodies answered with the entity holding them.
    acked: BTreeSet<String>,
    /// Bodies answered with an error (nothing may be written), and the answer.
    refused: BTreeMap<String, String>,
}

impl Ledger {
    fn record(&mut self, bodies: &HashMap<(usize, u64), String>, (w, frame): Frame) {
        assert!(frame.get("not_json").is_none(), "writer {w} wrote {frame}");
        let Some(id) = frame["id"].as_u64() else {
            return; // a notification
        };
        let body = bodies
            .get(&(w, id))
            .unwrap_or_else(|| panic!("writer {w}: an answer to no request: {frame}"))
            .clone();
        let result = &frame["result"];
        if result.is_null() || result["isError"] == true {
            assert!(
                self.refused
                    .insert(body.clone(), frame.to_string())
                    .is_none(),
                "{body} answered twice"
            );
            return;
        }
        let entity = &result["structuredContent"];
        assert_eq!(
            entity["id"].as_str(),
            Some(self.sent[&body].as_str()),
            "{frame}"
        );
        let held = entity["comments"]
            .as_array()
            .unwrap_or_else(|| panic!("no comments in {frame}"))
            .iter()
            .filter(|c| c["body"] == body.as_str())
            .count();
        assert_eq!(
            held, 1,
            "the answer to {body} holds it {held} times: {frame}"
        );
        assert!(self.acked.insert(body.clone()), "{body} answered twice");
    }
}

/// Counts of one round, for the summary.
#[derive(Default, Debug)]
struct RoundStats {
    kills: usize,
    kills_in_flight: usize,
    /// Kills that cut an answer short in the middle of its line (no answer, for the client).
    answers_cut_short: usize,
    sent: usize,
    acked: usize,
    refused: usize,
    committed_unacked: usize,
    locks_left: Vec<String>,
    /// What `git fsck` said beyond silence (nothing damaged: that fails the test).
    fsck_notes: Vec<String>,
    /// Temporary files in `.git/objects` (all rounds so far).
    garbage: usize,
    comments: usize,
}

/// One kill round: two servers comment until each is killed at its drawn moment.
fn round(
    sandbox: &Sandbox,
    repo: &Path,
    logs: &Path,
    issues: &[String],
    round: u64,
    seed: u64,
    ledger: &mut Ledger,
) -> RoundStats {
    let mut rng = Rng(seed);
    let (tx, rx) = mpsc::channel::<Frame>();
    let mut writers: Vec<Writer> = (0..WRITERS)
        .map(|w| spawn_writer(sandbox, repo, logs, w, &format!("round{round}"), tx.clone()))
        .collect();
    drop(tx);
    for writer in &mut writers {
        initialize(writer, &rx);
    }

    let start = Instant::now();
    let kill_at: Vec<Instant> = (0..WRITERS)
        .map(|_| start + Duration::from_millis(rng.range(40, 450) as u64))
        .collect();
    let mut killed = [false; WRITERS];
    let mut in_flight = [0usize; WRITERS];
    let mut next_id = [1u64; WRITERS];
    let mut bodies: HashMap<(usize, u64), String> = HashMap::new();
    let mut frames: Vec<Frame> = Vec::new();
    let mut stats = RoundStats::default();

    while killed.iter().any(|k| !k) {
        let now = Instant::now();
        for (w, writer) in writers.iter_mut().enumerate() {
            if killed[w] {
                continue;
            }
            if now >= kill_at[w] {
                stats.kills += 1;
                if in_flight[w] > 0 {
                    stats.kills_in_flight += 1;
                }
                if writer.kill() {
                    stats.answers_cut_short += 1;
                }
                killed[w] = true;
                continue;
            }
            while in_flight[w] < WINDOW {
                let id = next_id[w];
                next_id[w] += 1;
                let issue = &issues[rng.below(issues.len())];
                let body = format!("r{round}w{w}c{id}");
                assert!(
                    writer.send(&comment_call(id, issue, &body)),
                    "writer {w} died on its own:\n{}",
                    writer.stderr()
                );
                bodies.insert((w, id), body.clone());
                ledger.sent.insert(body, issue.clone());
                stats.sent += 1;
                in_flight[w] += 1;
            }
        }
        match rx.recv_timeout(Duration::from_millis(1)) {
            Ok((w, frame)) => {
                if frame.get("id").is_some() {
                    in_flight[w] = in_flight[w].saturating_sub(1);
                }
                frames.push((w, frame));
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    // Every writer is dead and its reader joined: what it answered is in the channel.
    frames.extend(rx.try_iter());
    let acked_before = ledger.acked.len();
    let refused_before = ledger.refused.len();
    for frame in frames {
        ledger.record(&bodies, frame);
    }
    stats.acked = ledger.acked.len() - acked_before;
    stats.refused = ledger.refused.len() - refused_before;
    stats
}

/// Lock files under `.git` (relative paths).
fn locks(git_dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut todo = vec![git_dir.to_path_buf()];
    while let Some(dir) = todo.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                todo.push(path);
            } else if path.extension().is_some_and(|e| e == "lock") {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// Every integrity check of the repository after a kill: the comments of each issue.
fn check(
    sandbox: &Sandbox,
    repo: &Path,
    issues: &[String],
    ledger: &Ledger,
    context: &str,
) -> (BTreeMap<String, Vec<String>>, String) {
    let fsck = sandbox
        .command("git", repo)
        .args(["fsck", "--strict", "--no-progress", "--no-dangling"])
        .output()
        .unwrap();
    let report = format!(
        "{}{}",
        String::from_utf8_lossy(&fsck.stdout),
        String::from_utf8_lossy(&fsck.stderr)
    );
    assert!(
        fsck.status.success(),
        "{context}: git fsck failed:\n{report}"
    );
    let lower = report.to_lowercase();
    for word in ["error", "missing", "broken", "corrupt"] {
        assert!(
            !lower.contains(word),
            "{context}: git fsck reports {word}:\n{report}"
        );
    }

    let mut held = BTreeMap::new();
    for issue in issues {
        let shown = sandbox.mile_json(repo, &["show", issue]);
        assert_eq!(shown["id"], issue.as_str(), "{context}");
        let bodies: Vec<String> = shown["comments"]
            .as_array()
            .unwrap_or_else(|| panic!("{context}: no comments in {shown}"))
            .iter()
            .map(|c| c["body"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(
            shown["stats"]["comment_count"],
            bodies.len(),
            "{context}: {shown}"
        );
        let distinct: BTreeSet<&String> = bodies.iter().collect();
        assert_eq!(
            distinct.len(),
            bodies.len(),
            "{context}: a comment is there twice on {issue}: {bodies:?}"
        );
        for body in &bodies {
            assert_eq!(
                ledger.sent.get(body),
                Some(issue),
                "{context}: {body} on {issue} was not sent there"
            );
        }
        // One commit per event: the creation and each comment, nothing half-written.
        let commits: usize = sandbox
            .git(
                repo,
                &[
                    "rev-list",
                    "--count",
                    &format!("refs/git-mile/issue/{issue}"),
                ],
            )
            .trim()
            .parse()
            .unwrap();
        assert_eq!(commits, 1 + bodies.len(), "{context}: commits of {issue}");
        held.insert(issue.clone(), bodies);
    }
    let all: BTreeSet<&String> = held.values().flatten().collect();
    for body in &ledger.acked {
        assert!(
            all.contains(body),
            "{context}: {body} was acknowledged but is gone"
        );
    }
    for (body, why) in &ledger.refused {
        assert!(
            !all.contains(body),
            "{context}: {body} was refused ({why}) but is there"
        );
    }
    (held, report)
}

/// Files in `.git/objects` that are neither objects nor packs: temporary files of writers
/// killed while writing an object.
fn garbage(git_dir: &Path) -> Vec<String> {
    let objects = git_dir.join("objects");
    let mut found = Vec::new();
    for entry in std::fs::read_dir(&objects).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let fan_out = name.len() == 2 && name.chars().all(|c| c.is_ascii_hexdigit());
        if fan_out {
            for inner in std::fs::read_dir(&path).unwrap() {
                let inner = inner.unwrap().file_name().to_string_lossy().into_owned();
                if !(inner.len() == 38 && inner.chars().all(|c| c.is_ascii_hexdigit())) {
                    found.push(format!("{name}/{inner}"));
                }
            }
        } else if name != "pack" && name != "info" {
            found.push(name);
        }
    }
    found
}

/// A tool call over a [`RawSession`] that must succeed; its structured content.
fn call(session: &mut RawSession, id: u64, tool: &str, args: Value) -> Value {
    session.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": tool, "arguments": args}}));
    let answer = session.recv();
    assert_eq!(answer["id"], id, "{answer}");
    assert_eq!(answer["result"]["isError"], false, "{tool}: {answer}");
    answer["result"]["structuredContent"].clone()
}

#[test]
fn kill_9_in_the_middle_of_comments_loses_no_acknowledged_comment() {
    let started = Instant::now();
    let seed = seed("GIT_MILE_FAULTS_SEED", BASE_SEED);
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("repo");
    let git_dir = repo.join(".git");
    let logs = tempfile::tempdir().unwrap();
    let issues: Vec<String> = (1..=ISSUES)
        .map(|k| sandbox.create(&repo, "issue", &format!("Fault target {k}"), &[]))
        .collect();
    let mut ledger = Ledger::default();

    let mut summary = Vec::new();
    let mut locks_left = 0;
    let mut r = 0;
    while r < ROUNDS && (r < MIN_ROUNDS || started.elapsed() < BUDGET) {
        let round_seed = seed ^ r.wrapping_mul(0x9e37_79b9);
        let context = format!("round {r} (GIT_MILE_FAULTS_SEED={seed})");
        let t = Instant::now();
        let mut stats = round(
            &sandbox,
            &repo,
            logs.path(),
            &issues,
            r,
            round_seed,
            &mut ledger,
        );
        // The reads work with whatever the killed writers left, locks included.
        let (held, fsck) = check(&sandbox, &repo, &issues, &ledger, &context);
        stats.fsck_notes = fsck.lines().map(str::to_string).collect();
        stats.garbage = garbage(&git_dir).len();
        // A killed writer may leave a ref's lock behind (the error of a later write names
        // it and tells users to remove it): counted, then removed for the next round.
        for lock in locks(&git_dir) {
            let name = lock.strip_prefix(&git_dir).unwrap().display().to_string();
            assert!(
                name.starts_with("refs/git-mile/") || name == "packed-refs.lock",
                "{context}: a lock outside git-mile's refs: {name}"
            );
            stats.locks_left.push(name);
            std::fs::remove_file(&lock).unwrap();
        }
        locks_left += stats.locks_left.len();
        stats.comments = held.values().map(Vec::len).sum();
        let prefix = format!("r{r}w");
        stats.committed_unacked = held
            .values()
            .flatten()
            .filter(|b| b.starts_with(&prefix) && !ledger.acked.contains(*b))
            .count();
        summary.push(format!("round {r}: {stats:?} in {:?}", t.elapsed()));
        r += 1;
    }

    // A fresh server: it lists and shows what the CLI shows, takes one more comment, and
    // ends cleanly at the end of its input.
    let (held, _) = check(&sandbox, &repo, &issues, &ledger, "before the fresh server");
    let mut session = RawSession::start(&sandbox, &repo);
    let hello = session.initialize("2025-06-18");
    assert!(hello["result"]["serverInfo"].is_object(), "{hello}");
    let page = call(
        &mut session,
        2,
        "git_mile.list",
        json!({"entity": "issue", "includeClosed": true, "limit": 200}),
    );
    let listed: BTreeMap<String, u64> = page["items"]
        .as_array()
        .unwrap_or_else(|| panic!("{page}"))
        .iter()
        .map(|item| {
            (
                item["id"].as_str().unwrap().to_string(),
                item["stats"]["comment_count"].as_u64().unwrap(),
            )
        })
        .collect();
    let want: BTreeMap<String, u64> = held
        .iter()
        .map(|(id, bodies)| (id.clone(), bodies.len() as u64))
        .collect();
    assert_eq!(listed, want, "{page}");
    let mut id = 3;
    for (issue, bodies) in &held {
        let shown = call(
            &mut session,
            id,
            "git_mile.show",
            json!({"entity": "issue", "id": issue}),
        );
        id += 1;
        let seen: Vec<&str> = shown["comments"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["body"].as_str().unwrap())
            .collect();
        assert_eq!(seen, *bodies, "{shown}");
    }
    let after = call(
        &mut session,
        id,
        "git_mile.comment",
        json!({"entity": "issue", "id": issues[0], "body": "after the faults"}),
    );
    assert_eq!(
        after["stats"]["comment_count"],
        held[&issues[0]].len() + 1,
        "{after}"
    );
    session.close_stdin();
    session.assert_ends_cleanly();
    ledger
        .sent
        .insert("after the faults".into(), issues[0].clone());
    ledger.acked.insert("after the faults".into());
    check(&sandbox, &repo, &issues, &ledger, "after the fresh server");

    eprintln!(
        "faults (seed {seed}): {r} rounds, {} kills, {locks_left} lock files left; {} comments acknowledged, {} refused, {} sent; {:?}\n{}",
        r as usize * WRITERS,
        ledger.acked.len(),
        ledger.refused.len(),
        ledger.sent.len(),
        started.elapsed(),
        summary.join("\n")
    );
}
