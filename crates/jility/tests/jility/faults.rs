//! Faults: `kill -9` of `jility --mcp-server` writers in the middle of batch creations, then
//! integrity checks of the SQLite file they shared.
//!
//! A few cold starts are killed first (the database being created and migrated). Then each
//! round starts two servers on the same database, pipelines `jility_create_tickets_batch`
//! calls into both (batches of 20 tickets, each batch named by a unique marker in its
//! titles and labels, items 2..20 depending on item 1) and SIGKILLs each server at a moment
//! drawn from a PRNG seeded per round. After every round the database must hold whole
//! batches only: `PRAGMA integrity_check` ok, foreign keys and the full-text index
//! consistent, ticket numbers 1..N without gaps or duplicates (and `next_number` N + 1),
//! every batch present with all its rows or absent, every batch answered before the kill
//! present with the numbers it was answered with, every batch answered with an error absent.
//! The rounds are bounded in count and time; a failure names the seed
//! (`JILITY_FAULTS_SEED=… cargo test -p jility --test jility faults::` repeats the draws).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stderr // the summary of the kills
)]

use crate::support;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::process::Command;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use mcp_testkit::bench::Rng;
use mcp_testkit::killable::{Frame, Killable as Writer, seed};
use serde_json::{Value, json};
use support::{BIN, Project};

/// Kill rounds at most, and at least (when the time budget runs out early).
const ROUNDS: u64 = 10;
const MIN_ROUNDS: u64 = 3;
/// No round starts after this much time.
const BUDGET: Duration = Duration::from_secs(18);
/// Servers writing at once in a round.
const WRITERS: usize = 2;
/// Tickets per batch.
const BATCH: usize = 20;
/// Batch calls in flight per server.
const WINDOW: usize = 4;
/// Cold starts killed before the rounds.
const COLD_KILLS: u64 = 4;
const BASE_SEED: u64 = 0x6a69_6c69_7479_0009;

/// `jility --mcp-server` in `root` as actor `writer-{index}`, its stderr in `logs`.
fn spawn_writer(
    root: &Path,
    logs: &Path,
    index: usize,
    label: &str,
    tx: mpsc::Sender<Frame>,
) -> Writer {
    let mut command = Command::new(BIN);
    command
        .arg("--mcp-server")
        .current_dir(root)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("JILITY_ACTOR", format!("writer-{index}"));
    Writer::spawn(
        command,
        logs.join(format!("{label}-w{index}.stderr")),
        index,
        tx,
    )
}

/// The frame answering `id` of writer `index` (other frames are kept in `stash`).
fn answer(rx: &mpsc::Receiver<Frame>, stash: &mut Vec<Frame>, index: usize, id: u64) -> Value {
    loop {
        let (w, frame) = rx
            .recv_timeout(Duration::from_secs(30))
            .unwrap_or_else(|e| panic!("writer {index}: no answer to {id} within 30 s ({e})"));
        if w == index && frame["id"].as_u64() == Some(id) {
            return frame;
        }
        stash.push((w, frame));
    }
}

fn initialize(writer: &mut Writer, rx: &mpsc::Receiver<Frame>, stash: &mut Vec<Frame>) {
    let hello = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "faults", "version": "1"}}});
    assert!(writer.send(&hello), "writer {}: stdin closed", writer.index);
    let answer = answer(rx, stash, writer.index, 0);
    assert_eq!(
        answer["result"]["serverInfo"]["name"],
        "jility",
        "{answer}\n{}",
        writer.stderr()
    );
    assert!(writer.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"})));
}

/// The marker of batch `k` of writer `w` in round `round`.
fn marker(round: u64, w: usize, k: u64) -> String {
    format!("r{round}w{w}b{k}")
}

fn batch_call(id: u64, marker: &str) -> Value {
    let tickets: Vec<Value> = (1..=BATCH)
        .map(|i| {
            let depends_on: Vec<&str> = if i == 1 { vec![] } else { vec!["#1"] };
            json!({
                "title": format!("{marker} item {i}"),
                "labels": ["fault", marker],
                "depends_on": depends_on,
            })
        })
        .collect();
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": "jility_create_tickets_batch", "arguments": {"tickets": tickets}}})
}

/// What the client learnt of the batches it sent.
#[derive(Default)]
struct Ledger {
    /// Marker → the ticket numbers it was answered with.
    acked: BTreeMap<String, Vec<u64>>,
    /// Markers answered with an error (nothing may be written).
    refused: BTreeMap<String, String>,
    /// Every marker sent.
    sent: BTreeSet<String>,
}

fn ticket_number(display: &str) -> u64 {
    display
        .strip_prefix("TASK-")
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("not a TASK-N number: {display}"))
}

impl Ledger {
    fn record(&mut self, markers: &HashMap<(usize, u64), String>, (w, frame): Frame) {
        assert!(frame.get("not_json").is_none(), "writer {w} wrote {frame}");
        let Some(id) = frame["id"].as_u64() else {
            return; // a notification
        };
        let marker = markers
            .get(&(w, id))
            .unwrap_or_else(|| panic!("writer {w}: an answer to no request: {frame}"))
            .clone();
        let result = &frame["result"];
        let ok = result["isError"] == false && result["structuredContent"]["status"] == "ok";
        if !ok {
            let why = format!("{frame}");
            assert!(
                self.refused.insert(marker.clone(), why).is_none(),
                "{marker} answered twice"
            );
            return;
        }
        let tickets = result["structuredContent"]["data"]["tickets"]
            .as_array()
            .unwrap_or_else(|| panic!("no tickets in {frame}"));
        assert_eq!(tickets.len(), BATCH, "{frame}");
        let numbers = tickets
            .iter()
            .enumerate()
            .map(|(i, t)| {
                assert_eq!(t["title"], format!("{marker} item {}", i + 1), "{frame}");
                ticket_number(t["number"].as_str().unwrap())
            })
            .collect();
        assert!(
            self.acked.insert(marker.clone(), numbers).is_none(),
            "{marker} answered twice"
        );
    }
}

/// Counts of one round, for the summary.
#[derive(Default, Debug)]
struct RoundStats {
    kills: usize,
    kills_in_flight: usize,
    sent: usize,
    acked: usize,
    refused: usize,
    committed_unacked: usize,
    tickets: u64,
}

/// One kill round: two servers write batches until each is killed at its drawn moment.
fn round(p: &Project, logs: &Path, round: u64, seed: u64, ledger: &mut Ledger) -> RoundStats {
    let mut rng = Rng(seed);
    let (tx, rx) = mpsc::channel::<Frame>();
    let mut stash = Vec::new();
    let mut writers: Vec<Writer> = (0..WRITERS)
        .map(|w| spawn_writer(p.root(), logs, w, &format!("round{round}"), tx.clone()))
        .collect();
    drop(tx);
    for writer in &mut writers {
        initialize(writer, &rx, &mut stash);
    }
    assert!(stash.is_empty(), "frames before any call: {stash:?}");

    let start = Instant::now();
    let kill_at: Vec<Instant> = (0..WRITERS)
        .map(|_| start + Duration::from_millis(rng.range(40, 450) as u64))
        .collect();
    let mut killed = [false; WRITERS];
    let mut in_flight = [0usize; WRITERS];
    let mut next_id = [1u64; WRITERS];
    let mut markers: HashMap<(usize, u64), String> = HashMap::new();
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
                writer.kill();
                killed[w] = true;
                continue;
            }
            while in_flight[w] < WINDOW {
                let id = next_id[w];
                next_id[w] += 1;
                let m = marker(round, w, id);
                assert!(
                    writer.send(&batch_call(id, &m)),
                    "writer {w} died on its own:\n{}",
                    writer.stderr()
                );
                markers.insert((w, id), m.clone());
                ledger.sent.insert(m);
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
        ledger.record(&markers, frame);
    }
    stats.acked = ledger.acked.len() - acked_before;
    stats.refused = ledger.refused.len() - refused_before;
    stats
}

/// One batch as the database holds it: item → ticket number.
type Stored = BTreeMap<String, BTreeMap<usize, u64>>;

fn parse_title(title: &str) -> (String, usize) {
    let (marker, item) = title
        .split_once(" item ")
        .unwrap_or_else(|| panic!("a title no batch wrote: {title:?}"));
    (marker.to_string(), item.parse().unwrap())
}

fn scalar(conn: &rusqlite::Connection, sql: &str) -> i64 {
    conn.query_row(sql, [], |r| r.get(0))
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}

/// Every integrity check of the database after a kill; the batches it holds.
fn check(p: &Project, ledger: &Ledger, context: &str) -> Stored {
    // The binary opens the killed database first (and recovers its WAL).
    let listed = p.json(&["ticket", "list", "--limit", "1"]);
    let total = listed["page"]["total"].as_u64().expect("total");
    // (A large count is a lower bound, `total_exact: false`.)
    let exact = listed["page"]["total_exact"] != false;

    let conn = rusqlite::Connection::open(p.db()).unwrap();
    let integrity: Vec<String> = conn
        .prepare("PRAGMA integrity_check")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(integrity, ["ok"], "{context}: PRAGMA integrity_check");
    let fk: i64 = conn
        .prepare("PRAGMA foreign_key_check")
        .unwrap()
        .query_map([], |_| Ok(()))
        .unwrap()
        .count() as i64;
    assert_eq!(fk, 0, "{context}: PRAGMA foreign_key_check");
    conn.execute(
        "INSERT INTO ticket_search(ticket_search) VALUES('integrity-check')",
        [],
    )
    .unwrap_or_else(|e| panic!("{context}: the full-text index is damaged: {e}"));
    assert_eq!(
        scalar(&conn, "SELECT count(*) FROM projects"),
        1,
        "{context}"
    );

    // Numbers 1..N, no gap, no duplicate; the next number is N + 1.
    let mut rows: Vec<(u64, String)> = conn
        .prepare("SELECT number, title FROM tickets ORDER BY number")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let n = rows.len() as u64;
    if exact {
        assert_eq!(n, total, "{context}: the CLI and the file disagree");
    } else {
        assert!(n >= total, "{context}: the CLI counts {total} of {n}");
    }
    if n > 0 {
        let shown = p.json(&["ticket", "show", &format!("TASK-{n}")]);
        assert_eq!(
            shown["ticket"]["title"],
            rows[n as usize - 1].1,
            "{context}"
        );
    }
    for (i, (number, _)) in rows.iter().enumerate() {
        assert_eq!(*number, i as u64 + 1, "{context}: numbers are not 1..{n}");
    }
    assert_eq!(
        scalar(&conn, "SELECT next_number FROM projects") as u64,
        n + 1,
        "{context}: next_number"
    );
    assert_eq!(
        scalar(&conn, "SELECT count(*) FROM ticket_search") as u64,
        n,
        "{context}: search rows"
    );

    // Whole batches: 20 items, numbered in order, labelled, item 1 their dependency.
    let mut stored: Stored = BTreeMap::new();
    for (number, title) in rows.drain(..) {
        let (marker, item) = parse_title(&title);
        assert!(
            ledger.sent.contains(&marker),
            "{context}: {title} was never sent"
        );
        let items = stored.entry(marker).or_default();
        assert!(
            items.insert(item, number).is_none(),
            "{context}: {title} is stored twice"
        );
    }
    for (marker, items) in &stored {
        let first = items.get(&1).copied().unwrap_or(0);
        let want: BTreeMap<usize, u64> = (1..=BATCH).map(|i| (i, first + i as u64 - 1)).collect();
        assert_eq!(
            items, &want,
            "{context}: batch {marker} is partial or not numbered in order"
        );
    }
    let batches = stored.len() as i64;
    assert_eq!(
        scalar(&conn, "SELECT count(*) FROM ticket_labels"),
        2 * n as i64,
        "{context}: labels"
    );
    assert_eq!(
        scalar(
            &conn,
            "SELECT count(*) FROM ticket_labels l JOIN tickets t ON t.id = l.ticket_id
             WHERE l.status != t.status OR l.live != (t.deleted_at IS NULL)
                OR (l.label != 'fault' AND substr(t.title, 1, length(l.label) + 1) != l.label || ' ')"
        ),
        0,
        "{context}: labels out of step with their tickets"
    );
    assert_eq!(
        scalar(
            &conn,
            "SELECT count(*) FROM dependencies d
             JOIN tickets t ON t.id = d.ticket_id JOIN tickets f ON f.id = d.depends_on_id"
        ),
        batches * (BATCH as i64 - 1),
        "{context}: dependencies"
    );
    assert_eq!(
        scalar(
            &conn,
            "SELECT count(*) FROM dependencies d
             JOIN tickets t ON t.id = d.ticket_id JOIN tickets f ON f.id = d.depends_on_id
             WHERE f.title NOT LIKE '% item 1' OR substr(t.title, 1, instr(t.title, ' ')) != substr(f.title, 1, instr(f.title, ' '))"
        ),
        0,
        "{context}: a dependency outside its batch"
    );
    assert_eq!(
        scalar(&conn, "SELECT count(*) FROM ticket_changes"),
        2 * n as i64 + batches * (BATCH as i64 - 1),
        "{context}: change log rows"
    );

    // What the client was told.
    for (marker, numbers) in &ledger.acked {
        let items = stored
            .get(marker)
            .unwrap_or_else(|| panic!("{context}: batch {marker} was acknowledged but is gone"));
        let held: Vec<u64> = items.values().copied().collect();
        assert_eq!(
            &held, numbers,
            "{context}: batch {marker}'s numbers changed"
        );
    }
    for (marker, why) in &ledger.refused {
        assert!(
            !stored.contains_key(marker),
            "{context}: batch {marker} was refused ({why}) but is stored"
        );
    }
    stored
}

#[test]
fn kill_9_in_the_middle_of_batches_leaves_whole_batches() {
    let started = Instant::now();
    let seed = seed("JILITY_FAULTS_SEED", BASE_SEED);
    let p = Project::new();
    let logs = tempfile::tempdir().unwrap();
    let mut ledger = Ledger::default();

    // Cold starts: killed while the database is created, migrated and given its project.
    let mut cold = Vec::new();
    for k in 0..COLD_KILLS {
        let mut rng = Rng(seed ^ (0xc01d << 16) ^ k);
        let (tx, _rx) = mpsc::channel::<Frame>();
        let mut writer = spawn_writer(p.root(), logs.path(), 0, &format!("cold{k}"), tx);
        let after = rng.range(0, 20) as u64;
        std::thread::sleep(Duration::from_millis(after));
        writer.kill();
        cold.push((after, p.db().exists()));
    }

    let mut summary = Vec::new();
    let mut held = 0u64;
    let mut r = 0;
    while r < ROUNDS && (r < MIN_ROUNDS || started.elapsed() < BUDGET) {
        let round_seed = seed ^ r.wrapping_mul(0x9e37_79b9);
        let context = format!("round {r} (JILITY_FAULTS_SEED={seed})");
        let t = Instant::now();
        let mut stats = round(&p, logs.path(), r, round_seed, &mut ledger);
        let stored = check(&p, &ledger, &context);
        held = stored.len() as u64 * BATCH as u64;
        stats.tickets = held;
        stats.committed_unacked = stored
            .keys()
            .filter(|m| m.starts_with(&format!("r{r}w")) && !ledger.acked.contains_key(*m))
            .count();
        summary.push(format!("round {r}: {stats:?} in {:?}", t.elapsed()));
        r += 1;
    }

    // A fresh server after the last kill: it lists every ticket and numbers a new batch
    // right after the last one, then ends cleanly at the end of its input.
    let (tx, rx) = mpsc::channel::<Frame>();
    let mut stash = Vec::new();
    let mut writer = spawn_writer(p.root(), logs.path(), 9, "final", tx);
    initialize(&mut writer, &rx, &mut stash);
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "jility_list_tickets", "arguments": {"limit": 1}}});
    assert!(writer.send(&list));
    let listed = answer(&rx, &mut stash, 9, 1);
    let page = &listed["result"]["structuredContent"]["page"];
    let total = page["total"].as_u64().unwrap_or_else(|| panic!("{listed}"));
    if page["total_exact"] == false {
        assert!(total <= held, "{listed}: {held} tickets");
    } else {
        assert_eq!(total, held, "{listed}");
    }
    let n = held;
    assert!(writer.send(&batch_call(2, "final")));
    let made = answer(&rx, &mut stash, 9, 2);
    let first = &made["result"]["structuredContent"]["data"]["tickets"][0]["number"];
    assert_eq!(first, &json!(format!("TASK-{}", n + 1)), "{made}");
    let status = writer.finish();
    assert!(status.success(), "{status:?}: {}", writer.stderr());
    ledger.sent.insert("final".into());
    ledger.acked.insert(
        "final".into(),
        (n + 1..=n + BATCH as u64).collect::<Vec<u64>>(),
    );
    check(&p, &ledger, "after the final server");

    eprintln!(
        "faults (seed {seed}): cold kills (ms after spawn, database file existed) {cold:?}; {r} rounds, {} kills; {} batches acknowledged, {} refused, {} sent; {:?}\n{}",
        r as usize * WRITERS,
        ledger.acked.len(),
        ledger.refused.len(),
        ledger.sent.len(),
        started.elapsed(),
        summary.join("\n")
    );
}
