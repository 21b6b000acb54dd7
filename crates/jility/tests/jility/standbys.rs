//! Reads from a streaming standby (`jility serve --read-replica`): a primary and its standby
//! made with `initdb` and `pg_basebackup` on private ports. Read-after-write by concurrent
//! clients never sees an older answer; the standby stopped, paused (SIGSTOP) and started
//! again under load fails no request; `/readyz` and the metrics say whether it is in use.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use reqwest::blocking::Client;
use serde_json::{Value, json};

use crate::cloud::{Server, client};
use crate::outage::{Cluster, pg_bin};
use crate::pg::TestDb;

const CLIENTS: usize = 8;
/// Clients that only read (what others wrote): their reads may all go to the standby.
const READERS: usize = 2;

fn readyz(http: &Client, url: &str) -> Value {
    http.get(url).send().unwrap().json().unwrap()
}

fn standby_state(http: &Client, url: &str) -> String {
    readyz(http, url)["standbys"][0]["state"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn wait_for(what: &str, bound: Duration, mut check: impl FnMut() -> bool) {
    let started = Instant::now();
    while !check() {
        assert!(started.elapsed() < bound, "{what}: not within {bound:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn metric(http: &Client, url: &str, line: &str) -> f64 {
    let text = http.get(url).send().unwrap().text().unwrap();
    text.lines()
        .find(|l| l.starts_with(line) && l[line.len()..].starts_with(' '))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0)
}

/// What the clients saw: requests answered, and every failure or stale answer.
#[derive(Default)]
struct Seen {
    answered: AtomicUsize,
    wrong: Mutex<Vec<String>>,
}

/// One client's read-after-write loop until `stop`: create a ticket, read it back at once,
/// comment, read the comment back, move it, list it under its new status, and read it again
/// a moment later (when the standby has caught up).
fn client_loop(root: String, token: String, me: usize, stop: Arc<AtomicBool>, seen: Arc<Seen>) {
    let http = client();
    let mut round = 0;
    let wrong = |what: String| seen.wrong.lock().unwrap().push(what);
    let send = |request: reqwest::blocking::RequestBuilder| -> Option<Value> {
        match request.bearer_auth(&token).send() {
            Ok(response) => {
                let status = response.status();
                let body: Value = response.json().unwrap_or(Value::Null);
                seen.answered.fetch_add(1, Ordering::Relaxed);
                if status.is_success() {
                    Some(body)
                } else {
                    wrong(format!("client {me}: {status} {body}"));
                    None
                }
            }
            Err(err) => {
                wrong(format!("client {me}: {err}"));
                None
            }
        }
    };
    while !stop.load(Ordering::Relaxed) {
        round += 1;
        let title = format!("client {me} round {round}");
        let Some(created) = send(
            http.post(format!("{root}/tickets"))
                .json(&json!({"title": title})),
        ) else {
            continue;
        };
        let number = created["ticket"]["number"].as_str().unwrap().to_string();
        let Some(read) = send(http.get(format!("{root}/tickets/{number}"))) else {
            continue;
        };
        if read["ticket"]["title"] != title.as_str() {
            wrong(format!(
                "client {me}: {number} read back as {}",
                read["ticket"]
            ));
        }
        let note = format!("note {me}/{round}");
        send(
            http.post(format!("{root}/tickets/{number}/comments"))
                .json(&json!({"content": note})),
        );
        if let Some(read) = send(http.get(format!("{root}/tickets/{number}"))) {
            let comments = read["comments"].as_array().cloned().unwrap_or_default();
            if !comments.iter().any(|c| c["content"] == note.as_str()) {
                wrong(format!("client {me}: {number} without its comment: {read}"));
            }
        }
        send(
            http.post(format!("{root}/tickets/{number}/status"))
                .json(&json!({"status": "in_progress"})),
        );
        if let Some(listed) = send(http.get(format!("{root}/tickets?status=in_progress&limit=200")))
        {
            let found = listed["tickets"]
                .as_array()
                .is_some_and(|t| t.iter().any(|t| t["number"] == number.as_str()));
            if !found {
                wrong(format!("client {me}: {number} not listed as in_progress"));
            }
        }
        std::thread::sleep(Duration::from_millis(150));
        if let Some(read) = send(http.get(format!("{root}/tickets/{number}")))
            && read["ticket"]["status"] != "in_progress"
        {
            wrong(format!(
                "client {me}: {number} read later as {}",
                read["ticket"]
            ));
        }
    }
}

/// A reader's loop until `stop`: the newest tickets, and the first one whole.
fn reader_loop(root: String, token: String, me: usize, stop: Arc<AtomicBool>, seen: Arc<Seen>) {
    let http = client();
    while !stop.load(Ordering::Relaxed) {
        for path in ["/tickets?limit=20", "/tickets/TASK-1"] {
            match http.get(format!("{root}{path}")).bearer_auth(&token).send() {
                Ok(response)
                    if response.status().is_success()
                        || path.ends_with("-1") && response.status() == 404 =>
                {
                    seen.answered.fetch_add(1, Ordering::Relaxed);
                }
                Ok(response) => seen.wrong.lock().unwrap().push(format!(
                    "reader {me}: {} {}",
                    response.status(),
                    response.text().unwrap_or_default()
                )),
                Err(err) => seen
                    .wrong
                    .lock()
                    .unwrap()
                    .push(format!("reader {me}: {err}")),
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn reads_go_to_a_standby_that_replayed_the_callers_writes_and_survive_it_going_away() {
    let Some(bin) = pg_bin() else {
        eprintln!("SKIPPED: initdb is not installed (no /usr/lib/postgresql/*/bin/initdb)");
        return;
    };
    let setup = Instant::now();
    let primary = Cluster::create(bin);
    eprintln!("standby test: primary up after {:?}", setup.elapsed());
    let db = TestDb::on(&primary.url());
    let standby = primary.standby();
    let standby_url = standby.url_of(&db.name);
    eprintln!("standby test: standby up after {:?}", setup.elapsed());
    // A token per client, made by the admin command before the server starts.
    crate::cloud::admin_workspace(&db.url, "reads", &[]);
    let server = Server::start_with(
        &db,
        "127.0.0.1:0",
        &[
            "--read-replica",
            &standby_url,
            "--metrics-listen",
            "127.0.0.1:0",
            "--rate-limit",
            "100000",
        ],
        &[("JILITY_WORKSPACE_RATE_LIMIT", "1000000")],
    );
    let tokens = {
        let pool = jility_cloud::store::PgDatabase::connect_with(&db.url, 6).unwrap();
        let tokens = jility_cloud::auth::Tokens::new(&pool);
        let workspace = pool.workspace_by_name("reads").unwrap().unwrap();
        (0..CLIENTS + READERS)
            .map(|i| {
                crate::cloud::token(&tokens, &workspace, &format!("client-{i}"), "full_access")
                    .token
                    .expose()
                    .to_string()
            })
            .collect::<Vec<_>>()
    };
    eprintln!("standby test: server up after {:?}", setup.elapsed());
    let metrics = crate::probes::metrics_url(&server);
    let ready = metrics.replace("/metrics", "/readyz");
    let http = client();
    wait_for("the standby in use", Duration::from_secs(30), || {
        standby_state(&http, &ready) == "in_use"
    });
    eprintln!("standby test: standby in use after {:?}", setup.elapsed());
    let verdict = readyz(&http, &ready);
    assert_eq!(verdict["status"], "ready", "{verdict}");
    assert!(
        !verdict.to_string().contains(&standby.url_of("")),
        "{verdict}"
    );

    let stop = Arc::new(AtomicBool::new(false));
    let seen = Arc::new(Seen::default());
    let clients: Vec<_> = tokens
        .iter()
        .enumerate()
        .map(|(me, token)| {
            let (root, token, stop, seen) = (
                server.url.clone(),
                token.clone(),
                stop.clone(),
                seen.clone(),
            );
            std::thread::spawn(move || {
                if me < CLIENTS {
                    client_loop(root, token, me, stop, seen);
                } else {
                    reader_loop(root, token, me, stop, seen);
                }
            })
        })
        .collect();
    let started = Instant::now();
    let mark = |phase: &str| {
        eprintln!(
            "standby test: {phase} at {:.1} s",
            started.elapsed().as_secs_f64()
        )
    };
    let check = |phase: &str| {
        let wrong = seen.wrong.lock().unwrap();
        assert!(
            wrong.is_empty(),
            "{phase}: {} wrong of {}: {:#?}",
            wrong.len(),
            seen.answered.load(Ordering::Relaxed),
            &wrong[..wrong.len().min(10)]
        );
    };
    let reads = r#"jility_db_standby_reads_total{standby="0"}"#;
    // Under load, the standby takes reads.
    wait_for("reads on the standby", Duration::from_secs(30), || {
        metric(&http, &metrics, reads) > 20.0
    });
    // A steady stretch: how many reads the standby takes.
    let (answered_before, reads_before) = (
        seen.answered.load(Ordering::Relaxed),
        metric(&http, &metrics, reads),
    );
    std::thread::sleep(Duration::from_secs(3));
    let steady = metric(&http, &metrics, reads) - reads_before;
    let all = seen.answered.load(Ordering::Relaxed) - answered_before;
    eprintln!("standby test: steady: {steady} of {all} answers read on the standby");
    assert!(steady > 0.0);
    check("in use");
    mark("in use checked");

    // Stopped: its reads go to the primary, none fails; it is said to be silent.
    standby.stop("fast");
    let stopped_at = Instant::now();
    wait_for("the standby silent", Duration::from_secs(5), || {
        standby_state(&http, &ready) == "silent"
    });
    eprintln!(
        "standby test: stopped standby skipped after {:?}",
        stopped_at.elapsed()
    );
    assert_eq!(
        metric(&http, &metrics, r#"jility_db_standby_in_use{standby="0"}"#),
        0.0
    );
    std::thread::sleep(Duration::from_secs(2));
    check("stopped");
    mark("stopped checked");
    // Started again: in use again.
    standby.start();
    wait_for("the standby back in use", Duration::from_secs(30), || {
        standby_state(&http, &ready) == "in_use"
    });
    let before = metric(&http, &metrics, reads);
    wait_for(
        "reads on the standby again",
        Duration::from_secs(30),
        || metric(&http, &metrics, reads) > before + 20.0,
    );
    check("restarted");
    mark("restarted checked");

    // Paused: within a second no new read goes there; reads already waiting on it finish
    // when it continues.
    standby.signal("STOP");
    let paused_at = Instant::now();
    wait_for("the paused standby silent", Duration::from_secs(3), || {
        standby_state(&http, &ready) == "silent"
    });
    eprintln!(
        "standby test: paused standby skipped after {:?}",
        paused_at.elapsed()
    );
    std::thread::sleep(Duration::from_secs(2));
    standby.signal("CONT");
    wait_for(
        "the standby in use after the pause",
        Duration::from_secs(30),
        || standby_state(&http, &ready) == "in_use",
    );
    mark("in use after the pause");
    std::thread::sleep(Duration::from_secs(1));
    stop.store(true, Ordering::Relaxed);
    for c in clients {
        c.join().unwrap();
    }
    check("paused");
    mark("clients done");
    let text = http.get(&metrics).send().unwrap().text().unwrap();
    for line in text.lines().filter(|l| l.starts_with("jility_db_standby")) {
        eprintln!("standby test: {line}");
    }
    let answered = seen.answered.load(Ordering::Relaxed);
    assert!(answered > 500, "{answered} answers");
    eprintln!(
        "standby test: {answered} answers, {} reads on the standby, none failed or stale",
        metric(&http, &metrics, reads)
    );
}
