//! Webhooks (`JILITY_BENCH_ONLY=webhooks`, issue 45), on a new database as a team starts:
//! a ticket's creation through `POST /tickets`, one client after another, with no
//! subscription (the baseline) and with ten, in alternating blocks of the same run; then
//! four writers for a few seconds with one subscription to a receiver on loopback: how long
//! from each change's commit (the `changed_at` its body carries, stamped as the write
//! begins) to the receiver holding it, p50 and p99, and how many changes a second were
//! written and delivered.

use super::*;

use import::Scratch;

/// Creations per block, and blocks per condition.
const PER_BLOCK: usize = 100;
const BLOCKS: usize = 4;
/// Subscriptions of the second condition.
const SUBSCRIPTIONS: usize = 10;
/// Writers of the delivery run, and how long they write.
const WRITERS: usize = 4;
const WRITING: Duration = Duration::from_secs(5);

/// What the receiver got: each change's id, its `changed_at`, and when it came.
type Got = Arc<
    Mutex<
        Vec<(
            i64,
            chrono::DateTime<chrono::Utc>,
            chrono::DateTime<chrono::Utc>,
        )>,
    >,
>;

/// A receiver on loopback answering 204 to every POST: when each body came, and the change
/// it carried (its id and `changed_at`).
struct Receiver {
    url: String,
    got: Got,
}

impl Receiver {
    fn start() -> Self {
        use std::io::{BufRead, BufReader, Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        let got: Got = Arc::new(Mutex::new(Vec::new()));
        let kept = got.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { return };
                let kept = kept.clone();
                std::thread::spawn(move || {
                    let _ = stream.set_nodelay(true);
                    let mut reader = BufReader::new(stream.try_clone().unwrap());
                    let mut writer = stream;
                    loop {
                        let mut line = String::new();
                        if reader.read_line(&mut line).unwrap_or(0) == 0 {
                            return;
                        }
                        let mut length = 0usize;
                        loop {
                            line.clear();
                            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                                return;
                            }
                            let header = line.trim_end();
                            if header.is_empty() {
                                break;
                            }
                            if let Some((name, value)) = header.split_once(':')
                                && name.eq_ignore_ascii_case("content-length")
                            {
                                length = value.trim().parse().unwrap_or(0);
                            }
                        }
                        let mut body = vec![0; length];
                        if reader.read_exact(&mut body).is_err() {
                            return;
                        }
                        let now = chrono::Utc::now();
                        if let Ok(event) = serde_json::from_slice::<Value>(&body) {
                            let change = &event["data"]["change"];
                            if let (Some(id), Some(at)) =
                                (change["id"].as_i64(), change["changed_at"].as_str())
                                && let Ok(at) = chrono::DateTime::parse_from_rfc3339(at)
                            {
                                kept.lock().unwrap().push((
                                    id,
                                    at.with_timezone(&chrono::Utc),
                                    now,
                                ));
                            }
                        }
                        if writer
                            .write_all(b"HTTP/1.1 204 No Content\r\n\r\n")
                            .is_err()
                        {
                            return;
                        }
                    }
                });
            }
        });
        Self { url, got }
    }

    fn count(&self) -> usize {
        self.got.lock().unwrap().len()
    }
}

/// CPU seconds used so far by the server process, by the rest of the machine (PostgreSQL,
/// mostly: its processes come and go, the machine's count keeps them), and by this process
/// (the clients and the receiver).
fn cpu(server: u32) -> [f64; 3] {
    let ticks = |stat: &str| -> f64 {
        // After the command's closing parenthesis: fields 3.., utime and stime are 14 and 15.
        let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let get = |i: usize| {
            fields
                .get(i)
                .and_then(|f| f.parse::<f64>().ok())
                .unwrap_or(0.0)
        };
        (get(11) + get(12)) / 100.0
    };
    let read = |pid: &str| std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The machine: user, nice, system, irq, softirq and steal time.
    let machine: f64 = std::fs::read_to_string("/proc/stat")
        .unwrap_or_default()
        .lines()
        .next()
        .map(|line| {
            line.split_whitespace()
                .skip(1)
                .enumerate()
                .filter(|(i, _)| matches!(i, 0 | 1 | 2 | 5 | 6 | 7))
                .filter_map(|(_, v)| v.parse::<f64>().ok())
                .sum::<f64>()
                / 100.0
        })
        .unwrap_or(0.0);
    let (server, own) = (ticks(&read(&server.to_string())), ticks(&read("self")));
    [server, machine - server - own, own]
}

fn post(http: &reqwest::blocking::Client, url: &str, token: &str, body: &Value) -> Value {
    let answer = http.post(url).bearer_auth(token).json(body).send().unwrap();
    let status = answer.status();
    let body: Value = answer.json().unwrap();
    assert!(status.is_success(), "{url}: {status} {body}");
    body
}

/// One block of creations, one after another: each one's time.
fn creations(
    http: &reqwest::blocking::Client,
    base: &str,
    token: &str,
    label: &str,
    n: usize,
) -> Vec<Duration> {
    (0..n)
        .map(|i| {
            let t = Instant::now();
            post(
                http,
                &format!("{base}/tickets"),
                token,
                &json!({"title": format!("{label} {i}"), "labels": ["bench"]}),
            );
            t.elapsed()
        })
        .collect()
}

/// Change rows inserted per condition of the write-path measure.
const CHANGE_ROWS: usize = 5_000;

/// How long [`CHANGE_ROWS`] inserts into `ticket_changes` took, one statement each, with no
/// live subscription and with [`SUBSCRIPTIONS`] (both in transactions rolled back).
fn change_rows(url: &str) -> (Duration, Duration) {
    let mut client = postgres::Client::connect(url, postgres::NoTls).unwrap();
    let run = |client: &mut postgres::Client, subscribed: bool| {
        let mut tx = client.transaction().unwrap();
        let (ws, ticket): (i64, i64) = {
            let row = tx
                .query_one(
                    "SELECT workspace_id, id FROM tickets ORDER BY id LIMIT 1",
                    &[],
                )
                .unwrap();
            (row.get(0), row.get(1))
        };
        if subscribed {
            tx.execute(
                "INSERT INTO webhooks (workspace_id, url, secret, created_by) \
                 SELECT $1, 'https://hooks.example.com/x', 'whsec_AAAA', 'bench' FROM generate_series(1, $2::int)",
                &[&ws, &(SUBSCRIPTIONS as i32)],
            )
            .unwrap();
        }
        let insert = tx
            .prepare(
                "INSERT INTO ticket_changes (workspace_id, ticket_id, change_type, changed_by, changed_at) \
                 VALUES ($1, $2, 'title_changed', 'bench', '2026-01-01T00:00:00.000Z')",
            )
            .unwrap();
        let t = Instant::now();
        for _ in 0..CHANGE_ROWS {
            tx.execute(&insert, &[&ws, &ticket]).unwrap();
        }
        let took = t.elapsed();
        tx.rollback().unwrap();
        took
    };
    // Alternated, the median of three each.
    let mut bare = Vec::new();
    let mut outboxed = Vec::new();
    for _ in 0..3 {
        bare.push(run(&mut client, false));
        outboxed.push(run(&mut client, true));
    }
    bare.sort();
    outboxed.sort();
    (bare[1], outboxed[1])
}

pub fn webhooks(bin: &Path) -> Vec<String> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut lines = Vec::new();
    let (db, _) = Scratch::create("jility_bench_webhooks_", None);
    let server = Server::start_with(
        bin,
        &db.url,
        RATE_LIMIT,
        &[("JILITY_WEBHOOKS_ALLOW_PRIVATE", "1")],
    );
    let token = create_workspace(bin, &db.url);
    let base = server.url.clone();
    let http = reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap();
    // Warm the connection and the workspace.
    creations(&http, &base, &token, "warm", 20);

    // The write path alone: a change's row inserted, in a transaction rolled back, with no
    // live subscription and with ten (the trigger then writes its outbox row too).
    let (bare, outboxed) = change_rows(&db.url);
    lines.push(format!(
        "a change's row inserted ({CHANGE_ROWS} one after another, in PostgreSQL, rolled back): with no subscription {:.1} µs each (baseline); with {SUBSCRIPTIONS}, its outbox row written by the trigger too, {:.1} µs ({:.2}×)",
        bare.as_secs_f64() * 1e6 / CHANGE_ROWS as f64,
        outboxed.as_secs_f64() * 1e6 / CHANGE_ROWS as f64,
        outboxed.as_secs_f64() / bare.as_secs_f64(),
    ));

    // Creations without and with ten subscriptions, in alternating blocks.
    let receiver = Receiver::start();
    let mut without = Vec::new();
    let mut with = Vec::new();
    let mut ids = Vec::new();
    let pid = server.child.id();
    let mut cpu_without = [0.0; 3];
    let mut cpu_with = [0.0; 3];
    let add = |into: &mut [f64; 3], before: [f64; 3], after: [f64; 3]| {
        for i in 0..3 {
            into[i] += after[i] - before[i];
        }
    };
    for block in 0..BLOCKS {
        let before = cpu(pid);
        without.extend(creations(
            &http,
            &base,
            &token,
            &format!("plain {block}"),
            PER_BLOCK,
        ));
        add(&mut cpu_without, before, cpu(pid));
        for _ in 0..SUBSCRIPTIONS {
            let made = post(
                &http,
                &format!("{base}/webhooks"),
                &token,
                &json!({"url": receiver.url}),
            );
            ids.push(made["id"].as_i64().unwrap());
        }
        let before = cpu(pid);
        with.extend(creations(
            &http,
            &base,
            &token,
            &format!("watched {block}"),
            PER_BLOCK,
        ));
        // Until every delivery of the block is made.
        let wanted = (block + 1) * PER_BLOCK * SUBSCRIPTIONS;
        let waiting = Instant::now();
        while receiver.count() < wanted && waiting.elapsed() < Duration::from_secs(60) {
            std::thread::sleep(Duration::from_millis(5));
        }
        add(&mut cpu_with, before, cpu(pid));
        for id in ids.drain(..) {
            let gone = http
                .delete(format!("{base}/webhooks/{id}"))
                .bearer_auth(&token)
                .send()
                .unwrap();
            assert!(gone.status().is_success());
        }
    }
    without.sort();
    with.sort();
    let (w50, s50) = (percentile(&without, 0.5), percentile(&with, 0.5));
    let ratio = s50.as_secs_f64() / w50.as_secs_f64();
    lines.push(format!(
        "a ticket created (`POST /tickets`, one client, {} each in {BLOCKS} alternating blocks): with no subscription p50 {} p99 {} (baseline); with {SUBSCRIPTIONS} subscriptions p50 {} p99 {} ({ratio:.2}×; target ≤ 1.2×)",
        without.len(),
        ms(w50),
        ms(percentile(&without, 0.99)),
        ms(s50),
        ms(percentile(&with, 0.99)),
    ));

    let per = |cpu: [f64; 3]| {
        let n = (BLOCKS * PER_BLOCK) as f64;
        format!(
            "server {:.2} ms, PostgreSQL and the rest of the machine {:.2} ms, clients and receiver {:.2} ms",
            cpu[0] * 1e3 / n,
            cpu[1] * 1e3 / n,
            cpu[2] * 1e3 / n
        )
    };
    lines.push(format!(
        "CPU per creation: with no subscription {}; with {SUBSCRIPTIONS} {}",
        per(cpu_without),
        per(cpu_with)
    ));

    // Four writers, one subscription: commit to receipt, and throughput.
    let receiver = Receiver::start();
    post(
        &http,
        &format!("{base}/webhooks"),
        &token,
        &json!({"url": receiver.url}),
    );
    let started = Instant::now();
    let written: usize = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..WRITERS)
            .map(|w| {
                let (base, token) = (base.clone(), token.clone());
                scope.spawn(move || {
                    let http = reqwest::blocking::Client::new();
                    let mut n = 0;
                    while started.elapsed() < WRITING {
                        post(
                            &http,
                            &format!("{base}/tickets"),
                            &token,
                            &json!({"title": format!("writer {w} {n}")}),
                        );
                        n += 1;
                    }
                    n
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).sum()
    });
    let wrote_in = started.elapsed();
    while receiver.count() < written {
        assert!(
            started.elapsed() < Duration::from_secs(300),
            "{} of {written} delivered",
            receiver.count()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let delivered_in = started.elapsed();
    let got = receiver.got.lock().unwrap().clone();
    let mut latencies: Vec<Duration> = got
        .iter()
        .map(|(_, at, came)| (*came - *at).to_std().unwrap_or_default())
        .collect();
    latencies.sort();
    let distinct: std::collections::HashSet<i64> = got.iter().map(|(id, _, _)| *id).collect();
    lines.push(format!(
        "deliveries to a loopback receiver, {WRITERS} writers for {:.0} s: {written} tickets written ({:.0}/s), all {} delivered ({} sent twice) {:.1} s after the first write ({:.0}/s); commit → receipt p50 {} p99 {} max {}",
        WRITING.as_secs_f64(),
        written as f64 / wrote_in.as_secs_f64(),
        distinct.len(),
        got.len() - distinct.len(),
        delivered_in.as_secs_f64(),
        written as f64 / delivered_in.as_secs_f64(),
        ms(percentile(&latencies, 0.5)),
        ms(percentile(&latencies, 0.99)),
        ms(*latencies.last().unwrap_or(&Duration::ZERO)),
    ));
    drop(server);
    lines
}
