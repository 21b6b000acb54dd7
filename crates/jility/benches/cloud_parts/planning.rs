//! The planning part of the cloud benchmark (`JILITY_BENCH_ONLY=planning`, issue 42): epics
//! and sprints on the 100,000-ticket workspace, beside the API's `GET /tickets/{KEY-N}` p50
//! measured in the same run.
//!
//! The run's copy is planned through the REST API first, as a team would have over months
//! (timed and reported): 500 epics created in batches, each with 40 of the workspace's
//! tickets joined to it (`POST /tickets/{KEY-N}/fields`, 8 senders at once); 198 completed
//! two-week sprints going back eight years (each: created, 20 unfinished tickets added,
//! started, 14 of them moved to done, completed — the rest go back to the backlog); the
//! active sprint, started five days ago with 300 estimated tickets, then 10,000 changes to
//! them (status moves and point edits, each ticket's in order, the last 100 tickets' ending
//! in done); and a planned sprint with a capacity of 40 points, whose plan considers every
//! todo and backlog ticket in no open sprint (up to the planner's cap of 10,000).
//!
//! Then, one request at a time on a keep-alive connection, twice: **at once** (the state a
//! team is in a moment after such a burst of writes: nothing analysed, the machines'
//! PostgreSQL runs with autovacuum off) and **after `VACUUM (ANALYZE)`**:
//! - `GET /sprints/active` (`jility_sprint_stats` of the 300-ticket sprint with 10,000
//!   changes) ≤ 10× the API GET p50;
//! - `GET /epics` (`jility_list_epics`, first page) ≤ 10×;
//! - `GET /sprints/{planned}/plan` (`jility_plan_sprint`) ≤ 20×;
//! - the web's planning page and the active sprint's page ≤ 30 ms p50;
//! - and, without a target, an epic (`GET /epics/{KEY-N}`), the sprint list, and the web's
//!   sprint history, epic list, an epic's page and the active sprint's board.

use std::sync::atomic::{AtomicUsize, Ordering};

use super::*;

use web::pages;
use writes::post;

/// Epics made, and tickets joined to each.
const EPICS: usize = 500;
const EPIC_TICKETS: usize = 40;
/// Completed sprints, the tickets each held, and how many of them were done.
const COMPLETED: usize = 198;
const COMPLETED_TICKETS: usize = 20;
const COMPLETED_DONE: usize = 14;
/// The active sprint's tickets, and the changes made to them after it started.
const ACTIVE_TICKETS: usize = 300;
const ACTIVE_CHANGES: usize = 10_000;
/// The active sprint's tickets whose changes end in done.
const ACTIVE_DONE: usize = 100;
/// The planned sprint's capacity (points).
const PLANNED_CAPACITY: i64 = 40;
/// Requests in flight while planning the copy.
const SENDERS: usize = 8;
/// Requests of each measured row (after [`WARMUP`]).
const SAMPLES: usize = 200;

/// Targets: a multiple of the API GET p50, and the pages' p50.
const STATS_TARGET: f64 = 10.0;
const EPICS_TARGET: f64 = 10.0;
const PLAN_TARGET: f64 = 20.0;
const PAGE_TARGET_MS: f64 = 30.0;

/// A ticket of the copy, as the planning setup picks them.
struct Live {
    number: i64,
    status: String,
    points: Option<i16>,
}

/// Every live ticket of the bench workspace, read from the copy.
fn tickets_of(url: &str) -> Vec<Live> {
    let mut db = postgres::Client::connect(url, postgres::NoTls).unwrap();
    db.query(
        "SELECT t.number, t.status, t.story_points FROM tickets t \
         JOIN workspaces w ON w.id = t.workspace_id \
         WHERE w.name = $1 AND t.deleted_at IS NULL ORDER BY t.number",
        &[&WORKSPACE],
    )
    .unwrap()
    .iter()
    .map(|r| Live {
        number: r.get(0),
        status: r.get(1),
        points: r.get(2),
    })
    .collect()
}

/// `requests` (path under the API, JSON body) sent by [`SENDERS`] at once, each list in
/// order by one sender; every answer must be a success. Requests sent.
async fn send_lists(base: &str, token: &str, lists: Vec<Vec<(String, Value)>>) -> usize {
    let lists = Arc::new(lists);
    let next = Arc::new(AtomicUsize::new(0));
    let mut set = JoinSet::new();
    for _ in 0..SENDERS {
        let (lists, next) = (lists.clone(), next.clone());
        let (base, token) = (base.to_string(), token.to_string());
        set.spawn(async move {
            let http = http_client();
            let mut sent = 0;
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(list) = lists.get(i) else { break };
                for (path, body) in list {
                    let url = format!("{base}{path}");
                    let (status, text) = post(&http, &url, &token, body).await;
                    assert!(
                        (200..300).contains(&status),
                        "POST {url} {body}: {status} {text}"
                    );
                    sent += 1;
                }
            }
            sent
        });
    }
    let mut sent = 0;
    while let Some(done) = set.join_next().await {
        sent += done.unwrap();
    }
    sent
}

/// One request, which must succeed: its answer.
async fn post_one(
    http: &reqwest::Client,
    base: &str,
    token: &str,
    path: &str,
    body: Value,
) -> Value {
    let url = format!("{base}{path}");
    let (status, text) = post(http, &url, token, &body).await;
    assert!(
        (200..300).contains(&status),
        "POST {url} {body}: {status} {text}"
    );
    serde_json::from_str(&text).unwrap()
}

/// The sprint `sprint` (the create request's body) made, `tickets` added and started: its
/// path (`/sprints/{number}`).
async fn started_sprint(
    http: &reqwest::Client,
    base: &str,
    token: &str,
    sprint: Value,
    tickets: &[&Live],
) -> String {
    let created = post_one(http, base, token, "/sprints", sprint).await;
    let path = format!("/sprints/{}", created["sprint"]["number"].as_i64().unwrap());
    let numbers: Vec<String> = tickets.iter().map(|r| ticket_ref(r.number)).collect();
    post_one(
        http,
        base,
        token,
        &format!("{path}/tickets"),
        json!({"tickets": numbers}),
    )
    .await;
    post_one(http, base, token, &format!("{path}/start"), json!({})).await;
    path
}

fn ticket_ref(number: i64) -> String {
    format!("{KEY}-{number}")
}

/// What the setup made, for the measures.
struct PlannedCopy {
    epics: Vec<i64>,
    active: i64,
    planned: i64,
    requests: usize,
    took: Duration,
}

/// Plan the copy as the module's header says.
async fn plan_the_copy(base: &str, token: &str, url: &str) -> PlannedCopy {
    let started = Instant::now();
    let http = http_client();
    let mut rng = Rng(0x5B81_4E42);
    let rows = {
        let url = url.to_string();
        tokio::task::spawn_blocking(move || tickets_of(&url))
            .await
            .unwrap()
    };
    assert_eq!(rows.len(), TICKETS, "the copy's tickets");
    let mut requests = 0;

    // Epics, in batches of 100, then 40 tickets joined to each.
    let mut epics = Vec::with_capacity(EPICS);
    for batch in 0..EPICS / 100 {
        let items: Vec<Value> = (0..100)
            .map(|i| {
                let k = batch * 100 + i;
                json!({
                    "title": format!("Epic {k}: {} for {}", rng.pick(FEATURES), rng.pick(AREAS)),
                    "description": format!("Everything it takes to ship {} in {}.", rng.pick(FEATURES), rng.pick(AREAS)),
                    "labels": ["epic"],
                    "kind": "epic",
                })
            })
            .collect();
        let answer = post_one(
            &http,
            base,
            token,
            "/tickets/batch",
            json!({"tickets": items}),
        )
        .await;
        requests += 1;
        for t in answer["tickets"].as_array().unwrap() {
            epics.push(number_of(&t["number"]) as i64);
        }
    }
    assert_eq!(epics.len(), EPICS);
    let mut order: Vec<usize> = (0..rows.len()).collect();
    for i in (1..order.len()).rev() {
        order.swap(i, rng.below(i + 1));
    }
    let members: Vec<Vec<(String, Value)>> = epics
        .iter()
        .enumerate()
        .map(|(e, epic)| {
            order[e * EPIC_TICKETS..(e + 1) * EPIC_TICKETS]
                .iter()
                .map(|&i| {
                    (
                        format!("/tickets/{}/fields", ticket_ref(rows[i].number)),
                        json!({"epic_id": ticket_ref(*epic)}),
                    )
                })
                .collect()
        })
        .collect();
    requests += send_lists(base, token, members).await;
    eprintln!(
        "planning: {EPICS} epics of {EPIC_TICKETS} tickets in {:.1?}",
        started.elapsed()
    );

    // Unfinished, estimated tickets for the sprints, in the shuffled order.
    let mut pool = order
        .iter()
        .map(|&i| &rows[i])
        .filter(|r| r.status != "done" && r.points.is_some());
    let today = chrono::Utc::now().date_naive();
    let day = |offset: i64| (today + chrono::Duration::days(offset)).to_string();
    for k in 0..COMPLETED {
        let starts = -14 * (COMPLETED as i64 - k as i64) - 5;
        let picked: Vec<&Live> = pool.by_ref().take(COMPLETED_TICKETS).collect();
        let sprint = json!({"name": format!("Sprint {}", k + 1), "starts_on": day(starts), "ends_on": day(starts + 13), "capacity_points": 30});
        let path = started_sprint(&http, base, token, sprint, &picked).await;
        // Done the way people get there: through in progress.
        let done: Vec<Vec<(String, Value)>> = picked[..COMPLETED_DONE]
            .iter()
            .map(|r| {
                let path = format!("/tickets/{}/status", ticket_ref(r.number));
                let mut steps = Vec::new();
                if r.status != "in_progress" {
                    steps.push((path.clone(), json!({"status": "in_progress"})));
                }
                steps.push((path, json!({"status": "done"})));
                steps
            })
            .collect();
        requests += 3 + send_lists(base, token, done).await;
        post_one(&http, base, token, &format!("{path}/complete"), json!({})).await;
        requests += 1;
    }
    eprintln!(
        "planning: {COMPLETED} completed sprints by {:.1?}",
        started.elapsed()
    );

    // The active sprint: 300 tickets, started, then 10,000 changes.
    let picked: Vec<&Live> = pool.by_ref().take(ACTIVE_TICKETS).collect();
    assert_eq!(picked.len(), ACTIVE_TICKETS);
    let sprint = json!({"name": format!("Sprint {}", COMPLETED + 1), "goal": "Ship the planning board", "starts_on": day(-5), "ends_on": day(8), "capacity_points": 1200});
    let path = started_sprint(&http, base, token, sprint, &picked).await;
    let active: i64 = path.trim_start_matches("/sprints/").parse().unwrap();
    requests += 3;
    let points = [1, 2, 3, 5, 8];
    let changes: Vec<Vec<(String, Value)>> = picked
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let n =
                ACTIVE_CHANGES / ACTIVE_TICKETS + usize::from(i < ACTIVE_CHANGES % ACTIVE_TICKETS);
            let finishes = i < ACTIVE_DONE;
            let mut status = r.status.clone();
            let mut pts = i64::from(r.points.unwrap_or(1));
            let ticket = ticket_ref(r.number);
            (0..n)
                .map(|k| {
                    let last_two = finishes && k + 2 >= n;
                    if k % 4 == 3 && !last_two {
                        pts = points.iter().copied().find(|p| *p > pts).unwrap_or(1);
                        return (
                            format!("/tickets/{ticket}/fields"),
                            json!({"story_points": pts}),
                        );
                    }
                    // A walk the workflow allows: into progress, to review and back, now
                    // and then back to todo; a finishing ticket ends in progress, then done.
                    let next = match status.as_str() {
                        _ if finishes && k + 1 == n => "done",
                        "in_progress" if finishes && k + 2 == n => "review",
                        _ if finishes && k + 2 == n => "in_progress",
                        "in_progress" if k % 10 == 5 => "todo",
                        "in_progress" => "review",
                        _ => "in_progress",
                    };
                    status = next.to_string();
                    (format!("/tickets/{ticket}/status"), json!({"status": next}))
                })
                .collect()
        })
        .collect();
    let sent = send_lists(base, token, changes).await;
    assert_eq!(sent, ACTIVE_CHANGES);
    requests += sent;
    eprintln!(
        "planning: the active sprint's {ACTIVE_CHANGES} changes by {:.1?}",
        started.elapsed()
    );

    // The planned sprint the planner fills.
    let created = post_one(
        &http,
        base,
        token,
        "/sprints",
        json!({"name": format!("Sprint {}", COMPLETED + 2), "starts_on": day(9), "ends_on": day(22), "capacity_points": PLANNED_CAPACITY}),
    )
    .await;
    requests += 1;
    PlannedCopy {
        epics,
        active,
        planned: created["sprint"]["number"].as_i64().unwrap(),
        requests,
        took: started.elapsed(),
    }
}

/// One state's figures: (label, samples, target as text, met) rows.
struct Measured {
    base: Sequential,
    rows: Vec<(String, Vec<Duration>, Option<Target>)>,
    candidates: u64,
    stats_changes: String,
}

#[derive(Clone, Copy)]
enum Target {
    Times(f64),
    Ms(f64),
}

async fn measure_state(
    server: &Server,
    cookie: &str,
    token: &str,
    planned: &PlannedCopy,
    seed: u64,
) -> Measured {
    let http = http_client();
    let base_url = &server.url;
    let numbers = distinct_numbers(seed, WARMUP + SAMPLES);
    let base = sequential(
        &http,
        base_url,
        token,
        SAMPLES,
        |i| format!("/tickets/{KEY}-{}", numbers[i]),
        |i, v| assert_eq!(v["ticket"]["number"], format!("{KEY}-{}", numbers[i])),
    )
    .await;
    let stats = sequential(
        &http,
        base_url,
        token,
        SAMPLES,
        |_| "/sprints/active".into(),
        |_, v| {
            assert_eq!(v["sprint"]["tickets"], ACTIVE_TICKETS as u64, "{v}");
        },
    )
    .await;
    let stats_answer = {
        let (_, body) = get(&http, &format!("{base_url}/sprints/active"), token).await;
        serde_json::from_str::<Value>(&body).unwrap()
    };
    let stats_changes = format!(
        "committed {} points, completed {}, remaining {}, {} days left",
        stats_answer["committed_points"],
        stats_answer["completed_points"],
        stats_answer["remaining_points"],
        stats_answer["days_left"]
    );
    let epics = sequential(
        &http,
        base_url,
        token,
        SAMPLES,
        |_| "/epics".into(),
        |_, v| {
            assert!(!v["epics"].as_array().unwrap().is_empty(), "{v}");
        },
    )
    .await;
    let mut rng = Rng(seed ^ 0xE91C);
    let picks: Vec<i64> = (0..WARMUP + SAMPLES)
        .map(|_| rng.pick(&planned.epics))
        .collect();
    let epic = sequential(
        &http,
        base_url,
        token,
        SAMPLES,
        |i| format!("/epics/{KEY}-{}", picks[i]),
        |_, v| {
            assert!(
                v.get("progress").is_some() || v.get("epic").is_some(),
                "{v}"
            );
        },
    )
    .await;
    let plan_path = format!("/sprints/{}/plan", planned.planned);
    let plan = sequential(
        &http,
        base_url,
        token,
        SAMPLES,
        |_| plan_path.clone(),
        |_, v| {
            assert!(!v["tickets"].as_array().unwrap().is_empty(), "{v}");
        },
    )
    .await;
    let candidates = {
        let (_, body) = get(&http, &format!("{base_url}{plan_path}"), token).await;
        serde_json::from_str::<Value>(&body).unwrap()["candidates"]
            .as_u64()
            .unwrap()
    };
    let sprints = sequential(
        &http,
        base_url,
        token,
        SAMPLES,
        |_| "/sprints".into(),
        |_, v| {
            assert!(!v["sprints"].as_array().unwrap().is_empty(), "{v}");
        },
    )
    .await;
    let root = format!("{}/w/{WORKSPACE}", server.root());
    let page = |path: String, marker: &'static str| {
        let (http, root) = (http.clone(), root.clone());
        async move {
            pages(
                &http,
                cookie,
                SAMPLES,
                |_| format!("{root}{path}"),
                |_, body| {
                    assert!(body.contains(marker), "{path}: no {marker}");
                },
            )
            .await
            .0
        }
    };
    let plan_page = page("/plan".into(), "data-page=\"plan\"").await;
    let sprint_page = page(
        format!("/sprints/{}", planned.active),
        "data-page=\"sprint\"",
    )
    .await;
    let history = page("/sprints".into(), "data-page=\"sprints\"").await;
    let epic_list = page("/epics".into(), "data-page=\"epics\"").await;
    let epic_page = page(format!("/epics/{}", planned.epics[7]), "data-page=\"epic\"").await;
    let board = page("/board?sprint=active".into(), "data-page=\"board\"").await;
    Measured {
        rows: vec![
            (
                "`GET /sprints/active` (sprint stats: 300 tickets, 10,000 changes)".into(),
                stats.samples,
                Some(Target::Times(STATS_TARGET)),
            ),
            (
                "`GET /epics` (list epics, first page)".into(),
                epics.samples,
                Some(Target::Times(EPICS_TARGET)),
            ),
            (
                format!("`GET /sprints/{{n}}/plan` (plan a sprint, {candidates} candidates)"),
                plan.samples,
                Some(Target::Times(PLAN_TARGET)),
            ),
            (
                "`GET /epics/{KEY-N}` (an epic of 40 tickets)".into(),
                epic.samples,
                None,
            ),
            ("`GET /sprints` (200 sprints)".into(), sprints.samples, None),
            (
                "page: planning (`/plan`)".into(),
                plan_page,
                Some(Target::Ms(PAGE_TARGET_MS)),
            ),
            (
                "page: the active sprint (`/sprints/{n}`)".into(),
                sprint_page,
                Some(Target::Ms(PAGE_TARGET_MS)),
            ),
            ("page: sprint history (`/sprints`)".into(), history, None),
            ("page: epics (`/epics`)".into(), epic_list, None),
            ("page: an epic (`/epics/{n}`)".into(), epic_page, None),
            ("page: the active sprint's board".into(), board, None),
        ],
        base,
        candidates,
        stats_changes,
    }
}

/// A state's table and its ratio lines.
fn table(state: &str, m: &Measured) -> (String, Vec<String>) {
    let base = m.base.p50;
    let mut out = vec![
        format!("| {state} | p50 | p99 | × API GET p50 | target | met |"),
        "|---|---:|---:|---:|---|---|".to_string(),
        format!(
            "| API `GET /tickets/{{KEY-N}}` (baseline) | {} | {} | 1.0× | | |",
            ms(base),
            ms(m.base.p99)
        ),
    ];
    let mut lines = Vec::new();
    for (label, samples, target) in &m.rows {
        let p50 = percentile(samples, 0.50);
        let times = p50.as_secs_f64() / base.as_secs_f64();
        let (target_text, ok) = match target {
            Some(Target::Times(t)) => (format!("≤ {t:.0}×"), Some(times <= *t)),
            Some(Target::Ms(t)) => (
                format!("≤ {t:.0} ms"),
                Some(p50.as_secs_f64() * 1000.0 <= *t),
            ),
            None => (String::new(), None),
        };
        out.push(format!(
            "| {label} | {} | {} | {times:.1}× | {target_text} | {} |",
            ms(p50),
            ms(percentile(samples, 0.99)),
            ok.map_or("", met)
        ));
        if let Some(ok) = ok {
            lines.push(format!(
                "{state}: {label}: p50 {} = {times:.1}× the API GET p50 ({}) [target {target_text}]: {}",
                ms(p50),
                ms(base),
                if ok { "PASS" } else { "FAIL" }
            ));
        }
    }
    (out.join("\n"), lines)
}

/// The planning part, printed as it comes, then its ratio lines.
pub async fn planning_only(server: &Server, cookie: &str, token: &str, url: &str) {
    let planned = plan_the_copy(&server.url, token, url).await;
    println!(
        "planned the copy: {EPICS} epics × {EPIC_TICKETS} tickets, {COMPLETED} completed sprints, \
         the active one ({ACTIVE_TICKETS} tickets, {ACTIVE_CHANGES} changes), a planned one: \
         {} requests in {:.1?}",
        planned.requests, planned.took
    );
    let at_once = measure_state(server, cookie, token, &planned, 0x91A2_0001).await;
    let (text, mut lines) = table("at once (nothing analysed)", &at_once);
    let copy = url.to_string();
    let open: i64 = tokio::task::spawn_blocking(move || {
        let mut db = postgres::Client::connect(&copy, postgres::NoTls).unwrap();
        db.query_one(
            "SELECT count(*) FROM tickets t WHERE t.deleted_at IS NULL AND t.kind = 'ticket' \
             AND t.status IN ('todo', 'backlog') AND NOT EXISTS (SELECT 1 FROM sprints s \
                WHERE s.id = t.sprint_id AND s.state <> 'completed')",
            &[],
        )
        .unwrap()
        .get(0)
    })
    .await
    .unwrap();
    println!(
        "\nthe active sprint: {}\nthe planner: {} candidates read of {open} backlog and todo \
         tickets in no open sprint\n\n{text}",
        at_once.stats_changes, at_once.candidates
    );
    let t = Instant::now();
    let copy = url.to_string();
    tokio::task::spawn_blocking(move || {
        let mut db = postgres::Client::connect(&copy, postgres::NoTls).unwrap();
        db.batch_execute("VACUUM (ANALYZE)").unwrap();
    })
    .await
    .unwrap();
    println!("\nVACUUM (ANALYZE) in {:.1?}", t.elapsed());
    let analysed = measure_state(server, cookie, token, &planned, 0x91A2_0002).await;
    let (text, more) = table("after VACUUM (ANALYZE)", &analysed);
    println!("\n{text}");
    lines.extend(more);
    assert_eq!(at_once.candidates, analysed.candidates);
    println!("\nRatios (one run, one machine):");
    for line in lines {
        println!("- {line}");
    }
}
