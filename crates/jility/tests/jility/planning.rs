//! Planning through the binaries, in both modes (local: `jility --mcp-server` on SQLite;
//! cloud: the bridge to `jility serve` on PostgreSQL), with the same script and the same
//! exact numbers:
//! - a sprint's history over five days, each day's changes given their day in the database
//!   afterwards (the changes' times and the sprint's start, nothing a server reads from its
//!   environment), so that committed, completed, added, removed, the burndown beside the ideal
//!   line, the velocity of the sprint before, the carry-over and the forecast are known;
//! - the planner's proposal: dependency order, todo before backlog, oldest first, capacity
//!   from the velocity, and why each ticket was left out; deterministic, and it changes
//!   nothing;
//! - the refusals (a second active sprint, a ticket in another open sprint, carrying over into
//!   a completed sprint) and `move`;
//! - the CLI's `sprint show` (a text burndown, `--json` equal to the tool's data), `sprint
//!   plan`, `epic list` and `epic show`;
//! - in the cloud, another workspace sees none of it (REST, the bridge), and a read-only token
//!   reads but cannot plan.

use chrono::{NaiveDate, TimeDelta, Utc};
use mcp_testkit::McpProcess;
use reqwest::Method;
use serde_json::{Value, json};

use crate::bridge::bridge;
use crate::cloud::{self, Server, token, workspace};
use crate::pg::TestDb;
use crate::support::{self, Project};

pub(crate) fn block_on<F: Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(future)
}

/// Where the script runs: what it can do besides the tools.
pub(crate) enum World {
    Local(Project),
    Cloud {
        db: TestDb,
        server: Server,
        token: String,
        home: tempfile::TempDir,
    },
}

impl World {
    /// The newest change's id.
    fn mark(&self) -> i64 {
        match self {
            World::Local(p) => rusqlite::Connection::open(p.db())
                .unwrap()
                .query_row("SELECT coalesce(max(id), 0) FROM ticket_changes", [], |r| {
                    r.get(0)
                })
                .unwrap(),
            // (The blocking client makes a runtime of its own: off the test's.)
            World::Cloud { db, .. } => tokio::task::block_in_place(|| {
                db.client()
                    .query_one("SELECT coalesce(max(id), 0) FROM ticket_changes", &[])
                    .unwrap()
                    .get(0)
            }),
        }
    }

    /// Every change after `mark` happened at `at`; so did the active sprint's kept figures
    /// of today (its remaining points are kept by day as changes happen): they become that
    /// day's, and the days after it (figures the sprint's start kept from the replay, when
    /// none of this had happened yet) are gone, as if the days had passed.
    fn happened(&self, mark: i64, at: &str) {
        self.sql(
            "UPDATE ticket_changes SET changed_at = ?1 WHERE id > ?2",
            at,
            mark,
        );
        let day = &at[..10];
        let today = Utc::now().date_naive().to_string();
        for sql in [
            "DELETE FROM sprint_days WHERE day >= ?1 AND day <> ?2",
            "UPDATE sprint_days SET day = ?1 WHERE day = ?2",
        ] {
            self.sql_text(sql, day, &today);
        }
    }

    fn sql_text(&self, sql: &str, a: &str, b: &str) {
        match self {
            World::Local(p) => {
                rusqlite::Connection::open(p.db())
                    .unwrap()
                    .execute(sql, rusqlite::params![a, b])
                    .unwrap();
            }
            World::Cloud { db, .. } => {
                let sql = sql.replace("?1", "$1").replace("?2", "$2");
                tokio::task::block_in_place(|| {
                    db.client().execute(&sql, &[&a, &b]).unwrap();
                });
            }
        }
    }

    /// The sprint numbered `number` started at `at`.
    fn started(&self, number: i64, at: &str) {
        self.sql(
            "UPDATE sprints SET started_at = ?1 WHERE number = ?2",
            at,
            number,
        );
    }

    fn sql(&self, sql: &str, text: &str, number: i64) {
        match self {
            World::Local(p) => {
                rusqlite::Connection::open(p.db())
                    .unwrap()
                    .execute(sql, rusqlite::params![text, number])
                    .unwrap();
            }
            World::Cloud { db, .. } => {
                let sql = sql.replace("?1", "$1").replace("?2", "$2");
                tokio::task::block_in_place(|| {
                    db.client().execute(&sql, &[&text, &number]).unwrap();
                });
            }
        }
    }

    /// `jility ARGS` as a person would run it here (`--json` answers parsed).
    pub(crate) fn cli(&self, args: &[&str]) -> (bool, String) {
        let out = match self {
            World::Local(p) => {
                let run = support::run(p.root(), &[("JILITY_ACTOR", "alice")], args);
                return (run.success(), run.stdout.clone());
            }
            World::Cloud {
                server,
                token,
                home,
                ..
            } => cloud::jility(args, server.root(), Some(token), home.path()),
        };
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    }

    fn cli_json(&self, args: &[&str]) -> Value {
        let mut all = vec!["--json"];
        all.extend_from_slice(args);
        let (ok, out) = self.cli(&all);
        assert!(ok, "jility {args:?}: {out}");
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"))
    }

    pub(crate) async fn mcp(&self) -> McpProcess {
        match self {
            World::Local(p) => p.start().await,
            World::Cloud {
                server,
                token,
                home,
                ..
            } => bridge(server.root(), token, home.path()).await,
        }
    }
}

/// `tool` answered until `done` holds of its data (a write another process made reaches the
/// bridge's cache through the event stream, a moment later); at most 10 s.
async fn until(mcp: &McpProcess, tool: &str, args: Value, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let data = ok(mcp, tool, args.clone()).await;
        if done(&data) || std::time::Instant::now() > deadline {
            return data;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

pub(crate) fn local() -> World {
    let project = Project::new();
    project.init("TASK");
    World::Local(project)
}

pub(crate) fn cloud_world() -> World {
    let db = TestDb::new();
    let pool = db.connect();
    let tokens = jility_cloud::auth::Tokens::new(&pool);
    let (ws, _) = workspace(&tokens, "planning");
    let agent = token(
        &tokens,
        &ws,
        "agent-1",
        "tickets:read,tickets:write,tickets:delete",
    );
    let server = Server::start(&db, &[]);
    World::Cloud {
        db,
        server,
        token: agent.token.expose().to_string(),
        home: tempfile::tempdir().unwrap(),
    }
}

pub(crate) async fn ok(mcp: &McpProcess, tool: &str, args: Value) -> Value {
    match mcp.call_markdown::<Value>(tool, args.clone()).await.1 {
        Ok(data) => data,
        Err(e) => panic!("{tool} {args}: expected success, got {e:?}"),
    }
}

pub(crate) async fn err(mcp: &McpProcess, tool: &str, args: Value, code: &str) -> String {
    let (text, answer) = mcp.call_markdown::<Value>(tool, args.clone()).await;
    let e = answer.expect_err(&text);
    assert_eq!(e.code, code, "{tool} {args}: {e:?}");
    assert!(!e.hint.is_empty(), "{tool}: no hint");
    e.message
}

pub(crate) async fn create(mcp: &McpProcess, args: Value) -> String {
    ok(mcp, "jility_create_ticket", args).await["ticket"]["number"]
        .as_str()
        .unwrap()
        .to_string()
}

pub(crate) async fn status(mcp: &McpProcess, ticket: &str, path: &[&str]) {
    for s in path {
        ok(
            mcp,
            "jility_update_status",
            json!({"ticket_id": ticket, "status": s}),
        )
        .await;
    }
}

fn day(d: NaiveDate, time: &str) -> String {
    format!("{d}T{time}.000Z")
}

/// The whole script; `world` gives the days.
async fn script(world: &World) {
    let mcp = world.mcp().await;
    let today = Utc::now().date_naive();
    let d = |n: i64| today + TimeDelta::days(n);

    // The sprint before: 5 points done, its velocity.
    ok(
        &mcp,
        "jility_create_sprint",
        json!({"name": "Sprint 0", "starts_on": d(-20).to_string(), "ends_on": d(-11).to_string(), "capacity_points": 10}),
    )
    .await;
    let t0 = create(
        &mcp,
        json!({"title": "Warm-up", "story_points": 5, "status": "todo"}),
    )
    .await;
    ok(
        &mcp,
        "jility_add_to_sprint",
        json!({"sprint": "Sprint 0", "tickets": [t0]}),
    )
    .await;
    ok(&mcp, "jility_start_sprint", json!({"sprint": "Sprint 0"})).await;
    status(&mcp, &t0, &["in_progress", "done"]).await;
    let done = ok(
        &mcp,
        "jility_complete_sprint",
        json!({"sprint": "Sprint 0"}),
    )
    .await;
    assert_eq!(done["completed"], json!([t0]));
    assert_eq!(done["carried_over"], json!([]));
    assert_eq!(done["sprint"]["completed_points"], 5);

    // Day 0: four tickets, three of them (10 points) committed.
    let mark = world.mark();
    let t1 = create(
        &mcp,
        json!({"title": "Login form", "story_points": 3, "status": "todo"}),
    )
    .await;
    let t2 = create(
        &mcp,
        json!({"title": "Session API", "story_points": 5, "status": "todo"}),
    )
    .await;
    let t3 = create(
        &mcp,
        json!({"title": "Audit log", "story_points": 2, "status": "todo"}),
    )
    .await;
    let t4 = create(
        &mcp,
        json!({"title": "Password reset", "story_points": 8, "status": "todo"}),
    )
    .await;
    let created = ok(
        &mcp,
        "jility_create_sprint",
        json!({"name": "Sprint 1", "goal": "People can sign in", "starts_on": d(-4).to_string(), "ends_on": d(5).to_string(), "capacity_points": 20}),
    )
    .await;
    assert_eq!(created["sprint"]["number"], 2);
    assert_eq!(created["sprint"]["state"], "planned");
    let added = ok(
        &mcp,
        "jility_add_to_sprint",
        json!({"sprint": "sprint 1", "tickets": [t1, t2, t3]}),
    )
    .await;
    assert_eq!(added["sprint"]["points"], 10);
    assert_eq!(added["over_capacity"], false);
    let started = ok(&mcp, "jility_start_sprint", json!({"sprint": "#2"})).await;
    assert_eq!(started["committed"], json!([t1, t2, t3]));
    assert_eq!(started["sprint"]["committed_points"], 10);
    world.happened(mark, &day(d(-4), "09:00:00"));
    world.started(2, &day(d(-4), "10:00:00"));
    // Search within the sprint, or the backlog (MCP; REST through the bridge; the CLI).
    for (query, sprint, want) in [
        ("login", "active", vec![t1.clone()]),
        ("login", "Sprint 1", vec![t1.clone()]),
        ("login", "none", vec![]),
        ("password reset", "active", vec![]),
        ("password reset", "none", vec![t4.clone()]),
    ] {
        let found = ok(
            &mcp,
            "jility_search_tickets",
            json!({"query": query, "sprint": sprint}),
        )
        .await;
        let numbers: Vec<&str> = found["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["number"].as_str().unwrap())
            .collect();
        assert_eq!(numbers, want, "{query} in {sprint}: {found}");
        let cli = world.cli_json(&["ticket", "search", query, "--sprint", sprint]);
        assert_eq!(
            cli["hits"], found["hits"],
            "the CLI's search of {query} in {sprint}"
        );
    }
    err(
        &mcp,
        "jility_search_tickets",
        json!({"query": "login", "sprint": "Sprint 9"}),
        "not_found",
    )
    .await;
    // A second active sprint is refused.
    ok(
        &mcp,
        "jility_create_sprint",
        json!({"name": "Sprint 2", "starts_on": d(6).to_string(), "ends_on": d(15).to_string()}),
    )
    .await;
    let message = err(
        &mcp,
        "jility_start_sprint",
        json!({"sprint": "Sprint 2"}),
        "sprint_conflict",
    )
    .await;
    assert!(message.contains("Sprint 1"), "{message}");

    // Day 1: t1 done.
    let mark = world.mark();
    status(&mcp, &t1, &["in_progress", "done"]).await;
    world.happened(mark, &day(d(-3), "12:00:00"));
    // Day 2: t4 added (8), t2 re-estimated 5 → 3 (the CLI, as a person would).
    let mark = world.mark();
    ok(
        &mcp,
        "jility_add_to_sprint",
        json!({"sprint": "Sprint 1", "tickets": [t4]}),
    )
    .await;
    world.happened(mark, &day(d(-2), "12:00:00"));
    let mark = world.mark();
    let edited = world.cli_json(&["ticket", "edit", &t2, "--points", "3"]);
    assert_eq!(edited["ticket"]["story_points"], 3);
    world.happened(mark, &day(d(-2), "13:00:00"));
    // Day 3: t3 removed (2).
    let mark = world.mark();
    let removed = ok(
        &mcp,
        "jility_remove_from_sprint",
        json!({"sprint": "Sprint 1", "tickets": [t3, t0]}),
    )
    .await;
    assert_eq!(removed["removed"][0]["number"], t3);
    assert_eq!(removed["not_in"], json!([t0]));
    world.happened(mark, &day(d(-1), "12:00:00"));
    // Today: t2 done.
    status(&mcp, &t2, &["in_progress", "review", "done"]).await;

    let stats = ok(&mcp, "jility_sprint_stats", json!({"sprint": "Sprint 1"})).await;
    assert_eq!(stats["committed_points"], 10, "{stats}");
    assert_eq!(stats["completed_points"], 6, "{stats}");
    assert_eq!(stats["added_points"], 8, "{stats}");
    assert_eq!(stats["removed_points"], 2, "{stats}");
    assert_eq!(stats["remaining_points"], 8, "{stats}");
    assert_eq!(stats["days_left"], 5, "{stats}");
    let burndown = burndown_rows(&stats);
    let want: Vec<(String, u64, f64)> = [
        (-4, 10, 9.0),
        (-3, 7, 8.0),
        (-2, 13, 7.0),
        (-1, 11, 6.0),
        (0, 8, 5.0),
    ]
    .into_iter()
    .map(|(n, r, i)| (d(n).to_string(), r, i))
    .collect();
    assert_eq!(burndown, want, "{stats}");
    assert_eq!(
        stats["velocity"],
        json!({"sprints": [{"name": "Sprint 0", "completed_points": 5}], "mean": 5.0})
    );
    assert_eq!(stats["carry_over"], json!([t4]));
    assert_eq!(stats["carry_over_points"], 8);
    // 6 points in 5 days: 1.2 a day, 8 left: 7 more days, past the end.
    assert_eq!(
        stats["forecast"],
        json!({"pace": 1.2, "ends_on": d(7).to_string(), "on_track": false})
    );
    // `active` names the active sprint.
    assert_eq!(
        ok(&mcp, "jility_sprint_stats", json!({"sprint": "active"})).await,
        stats
    );
    // The ticket says where it is; the list filters by sprint.
    let t4_now = ok(&mcp, "jility_get_ticket", json!({"ticket_id": t4})).await;
    assert_eq!(t4_now["ticket"]["sprint"], "Sprint 1");
    let active = ok(&mcp, "jility_list_tickets", json!({"sprint": "active"})).await;
    let mut numbers = support::numbers(&active["tickets"]);
    numbers.sort();
    let mut want = vec![t1.clone(), t2.clone(), t4.clone()];
    want.sort();
    assert_eq!(numbers, want);
    let backlog = ok(&mcp, "jility_list_tickets", json!({"sprint": "none"})).await;
    assert_eq!(support::numbers(&backlog["tickets"]), vec![t3.clone()]);

    // The CLI: the same figures as text, and as the tool's data with --json.
    let (ran, text) = world.cli(&["sprint", "show", "Sprint 1"]);
    assert!(ran, "{text}");
    assert!(text.contains("Burndown"), "{text}");
    for (date, remaining, _) in &burndown_rows(&stats) {
        let row = text
            .lines()
            .find(|l| l.trim_start().starts_with(date.as_str()))
            .unwrap_or_else(|| panic!("no burndown row for {date}: {text}"));
        assert!(row.contains(&format!(" {remaining} (ideal")), "{row}");
    }
    assert_eq!(world.cli_json(&["sprint", "show", "Sprint 1"]), stats);

    // Planning the next sprint, by the velocity (5 points): t3 (todo, 2), p3 (todo, 1),
    // then p2 (todo, 2) which waits on p3; p1 (backlog) and p5 (8) do not fit, p4 has no
    // points, p6 waits on t4 (in Sprint 1, not done).
    let p1 = create(&mcp, json!({"title": "Old idea", "story_points": 2})).await;
    let p2 = create(
        &mcp,
        json!({"title": "Use the cache", "story_points": 2, "status": "todo"}),
    )
    .await;
    let p3 = create(
        &mcp,
        json!({"title": "Add a cache", "story_points": 1, "status": "todo"}),
    )
    .await;
    let p4 = create(&mcp, json!({"title": "Unsized", "status": "todo"})).await;
    let p5 = create(
        &mcp,
        json!({"title": "Big one", "story_points": 8, "status": "todo"}),
    )
    .await;
    let p6 = create(
        &mcp,
        json!({"title": "After the reset", "story_points": 1, "status": "todo"}),
    )
    .await;
    ok(
        &mcp,
        "jility_add_dependency",
        json!({"ticket_id": p2, "depends_on": p3}),
    )
    .await;
    ok(
        &mcp,
        "jility_add_dependency",
        json!({"ticket_id": p6, "depends_on": t4}),
    )
    .await;
    let plan = ok(&mcp, "jility_plan_sprint", json!({"sprint": "Sprint 2"})).await;
    assert_eq!(plan["capacity_points"], 5, "{plan}");
    assert_eq!(plan["capacity_source"], "velocity");
    assert_eq!(plan["tickets"], json!([t3, p3, p2]), "{plan}");
    assert_eq!(plan["proposed_points"], 5);
    assert!(
        plan["proposed"][2]["reason"]
            .as_str()
            .unwrap()
            .contains(&format!("after {p3}")),
        "{plan}"
    );
    let reasons: Vec<(String, String)> = plan["left_out"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["number"].as_str().unwrap().to_string(),
                l["reason"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        reasons,
        vec![
            (p4.clone(), "no story points: estimate it first".to_string()),
            (
                p5.clone(),
                "over capacity: needs 8 points, 0 left".to_string()
            ),
            (p6.clone(), format!("blocked by {t4} (todo)")),
            (
                p1.clone(),
                "over capacity: needs 2 points, 0 left".to_string()
            ),
        ],
        "{plan}"
    );
    assert_eq!(plan["left_out_total"], 4);
    assert_eq!(plan["candidates_exact"], true);
    // Deterministic, and nothing changed.
    assert_eq!(
        ok(&mcp, "jility_plan_sprint", json!({"sprint": "Sprint 2"})).await,
        plan
    );
    assert_eq!(
        world.cli_json(&["sprint", "plan", "Sprint 2"]),
        plan,
        "the CLI's plan"
    );
    let (ran, text) = world.cli(&["sprint", "plan", "Sprint 2"]);
    assert!(
        ran && text.contains("Apply it: jility sprint add"),
        "{text}"
    );
    let sprint2 = ok(&mcp, "jility_list_tickets", json!({"sprint": "Sprint 2"})).await;
    assert!(support::numbers(&sprint2["tickets"]).is_empty());

    // Applying it; a ticket of an open sprint moves only when asked.
    ok(
        &mcp,
        "jility_add_to_sprint",
        json!({"sprint": "Sprint 2", "tickets": plan["tickets"]}),
    )
    .await;
    let message = err(
        &mcp,
        "jility_add_to_sprint",
        json!({"sprint": "Sprint 2", "tickets": [p1, t4]}),
        "sprint_conflict",
    )
    .await;
    assert!(
        message.contains(&t4) && message.contains("Sprint 1"),
        "{message}"
    );
    // All or none: p1 was not added.
    let p1_now = ok(&mcp, "jility_get_ticket", json!({"ticket_id": p1})).await;
    assert!(p1_now["ticket"].get("sprint").is_none(), "{p1_now}");
    let moved = ok(
        &mcp,
        "jility_add_to_sprint",
        json!({"sprint": "Sprint 2", "tickets": [t4], "move": true}),
    )
    .await;
    assert_eq!(moved["added"][0]["moved_from"], "Sprint 1");
    ok(
        &mcp,
        "jility_add_to_sprint",
        json!({"sprint": "Sprint 1", "tickets": [t4], "move": true}),
    )
    .await;

    // Completing: carrying over into a completed sprint is refused, into a planned one works.
    err(
        &mcp,
        "jility_complete_sprint",
        json!({"sprint": "Sprint 1", "carry_over_to": "Sprint 0"}),
        "sprint_conflict",
    )
    .await;
    let completed = ok(
        &mcp,
        "jility_complete_sprint",
        json!({"sprint": "Sprint 1", "carry_over_to": "Sprint 2"}),
    )
    .await;
    assert_eq!(completed["carried_over"], json!([t4]));
    assert_eq!(completed["carried_to"], "Sprint 2");
    assert_eq!(completed["carried_points"], 8);
    assert_eq!(completed["sprint"]["completed_points"], 6);
    err(
        &mcp,
        "jility_add_to_sprint",
        json!({"sprint": "Sprint 1", "tickets": [p1]}),
        "sprint_conflict",
    )
    .await;
    let after = ok(&mcp, "jility_sprint_stats", json!({"sprint": "Sprint 1"})).await;
    assert_eq!(after["completed_points"], 6, "{after}");
    assert_eq!(after["remaining_points"], 8, "{after}");
    assert_eq!(after["carry_over"], json!([t4]));
    assert_eq!(after["burndown"].as_array().unwrap().len(), 5);
    assert_eq!(after["burndown"][4]["remaining"], 8, "{after}");
    assert!(after.get("forecast").is_none());
    assert_eq!(
        after["velocity"]["sprints"],
        json!([{"name": "Sprint 1", "completed_points": 6}, {"name": "Sprint 0", "completed_points": 5}])
    );
    assert_eq!(after["velocity"]["mean"], 5.5);
    let t4_later = ok(&mcp, "jility_get_ticket", json!({"ticket_id": t4})).await;
    assert_eq!(t4_later["ticket"]["sprint"], "Sprint 2");
    let history: Vec<&Value> = t4_later["recent_changes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["type"] == "sprint_changed")
        .collect();
    assert_eq!(history[0]["old_value"], "Sprint 1");
    assert_eq!(history[0]["new_value"], "Sprint 2");
    assert_eq!(history[0]["detail"], "carried over");

    // Epics: progress and the critical path.
    let epic = create(&mcp, json!({"title": "Sign-in", "kind": "epic"})).await;
    for (ticket, _) in [(&t1, 3), (&t2, 3), (&t4, 8), (&p2, 2), (&p3, 1)] {
        let (ran, out) = world.cli(&["ticket", "edit", ticket, "--epic", &epic]);
        assert!(ran, "{out}");
    }
    ok(
        &mcp,
        "jility_add_dependency",
        json!({"ticket_id": t4, "depends_on": p2}),
    )
    .await;
    ok(
        &mcp,
        "jility_update_status",
        json!({"ticket_id": p3, "status": "blocked"}),
    )
    .await;
    let got = ok(&mcp, "jility_get_epic", json!({"epic_id": epic})).await;
    let progress = &got["progress"];
    assert_eq!(
        (
            progress["tickets"].as_u64(),
            progress["tickets_done"].as_u64(),
            progress["points_total"].as_u64(),
            progress["points_done"].as_u64(),
            progress["percent_done_points"].as_u64(),
            progress["percent_done_count"].as_u64(),
            progress["blocked"].as_u64(),
        ),
        (
            Some(5),
            Some(2),
            Some(17),
            Some(6),
            Some(35),
            Some(40),
            Some(3)
        ),
        "{got}"
    );
    let path: Vec<&str> = got["critical_path"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["number"].as_str().unwrap())
        .collect();
    assert_eq!(path, vec![p3.as_str(), p2.as_str(), t4.as_str()], "{got}");
    assert_eq!(got["critical_path"]["points"], 11);
    assert_eq!(
        got["critical_path"]["steps"][2]["blocked_by"][0]["number"],
        p2
    );
    let listed = ok(&mcp, "jility_list_epics", json!({})).await;
    assert_eq!(listed["epics"][0]["number"], epic);
    assert_eq!(listed["epics"][0]["progress"], got["progress"]);
    let listed = until(&mcp, "jility_list_epics", json!({}), |_| true).await;
    assert_eq!(listed["epics"][0]["progress"], got["progress"]);
    let (ran, text) = world.cli(&["epic", "list"]);
    assert!(ran && text.contains("35%"), "{text}");
    let (ran, text) = world.cli(&["epic", "show", &epic]);
    assert!(
        ran && text.contains("Critical path") && text.contains(&p3),
        "{text}"
    );
    // A deleted ticket counts nowhere; a ticket cannot stop being an epic while it has any.
    let (ran, out) = world.cli(&["ticket", "delete", &t1]);
    assert!(ran, "{out}");
    let got = until(&mcp, "jility_get_epic", json!({"epic_id": epic}), |g| {
        g["progress"]["tickets"] == 4
    })
    .await;
    assert_eq!(got["progress"]["tickets"], 4);
    assert_eq!(got["progress"]["points_total"], 14);
    let (ran, out) = world.cli(&["ticket", "edit", &epic, "--kind", "ticket"]);
    assert!(!ran, "{out}");
    mcp.shutdown().await;
}

/// The burndown rows of a stats answer: date, remaining, ideal.
fn burndown_rows(stats: &Value) -> Vec<(String, u64, f64)> {
    stats["burndown"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            (
                b["date"].as_str().unwrap().to_string(),
                b["remaining"].as_u64().unwrap(),
                b["ideal"].as_f64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn a_sprint_replayed_in_local_mode() {
    let world = local();
    block_on(script(&world));
}

#[test]
fn a_sprint_replayed_through_the_bridge() {
    let world = cloud_world();
    block_on(script(&world));
}

/// Another workspace sees none of it, through REST and the bridge; a read-only token reads
/// the plan but cannot change it.
#[test]
fn planning_stays_in_its_workspace_and_needs_its_scopes() {
    let db = TestDb::new();
    let pool = db.connect();
    let tokens = jility_cloud::auth::Tokens::new(&pool);
    let (a, a_token) = workspace(&tokens, "alpha");
    let (_b, b_token) = workspace(&tokens, "beta");
    let reader = token(&tokens, &a, "reader", "tickets:read");
    let server = Server::start(&db, &[]);
    let http = cloud::client();
    let post = |path: &str, token: &str, body: Value| {
        cloud::call_json(&http, &server, Method::POST, path, token, Some(body))
    };
    let get =
        |path: &str, token: &str| cloud::call_json(&http, &server, Method::GET, path, token, None);

    let made = post(
        "/tickets",
        &a_token,
        json!({"title": "Alpha epic", "kind": "epic"}),
    );
    assert_eq!(made.status, 201, "{}", made.body);
    let made = post(
        "/tickets",
        &a_token,
        json!({"title": "Alpha work", "story_points": 2, "status": "todo", "epic_id": "TASK-1"}),
    );
    assert_eq!(made.status, 201, "{}", made.body);
    let sprint = post(
        "/sprints",
        &a_token,
        json!({"name": "Alpha 1", "starts_on": "2026-12-07", "ends_on": "2026-12-18", "capacity_points": 5}),
    );
    assert_eq!(sprint.status, 201, "{}", sprint.body);
    let added = post(
        "/sprints/Alpha%201/tickets",
        &a_token,
        json!({"tickets": ["TASK-2"]}),
    );
    assert_eq!(added.status, 200, "{}", added.body);

    // Every change is in A's audit log, named, with the ticket it touched; B's log has none.
    let audit = get("/audit?limit=50", &a_token);
    assert_eq!(audit.status, 200, "{}", audit.body);
    let operations: Vec<(String, Value)> = audit.body["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["operation"].as_str().unwrap().to_string(),
                e["ticket"].clone(),
            )
        })
        .collect();
    assert!(
        operations.contains(&("sprints.create".to_string(), Value::Null)),
        "{operations:?}"
    );
    assert!(
        operations.contains(&("sprints.add".to_string(), json!("TASK-2"))),
        "{operations:?}"
    );
    let theirs = get("/audit?limit=50", &b_token);
    assert_eq!(theirs.status, 200, "{}", theirs.body);
    assert!(
        !theirs.body.to_string().contains("sprints."),
        "{}",
        theirs.body
    );

    // Workspace B: nothing of A's.
    let sprints = get("/sprints", &b_token);
    assert_eq!(sprints.status, 200);
    assert_eq!(sprints.body["sprints"], json!([]), "{}", sprints.body);
    let epics = get("/epics", &b_token);
    assert_eq!(epics.body["epics"], json!([]), "{}", epics.body);
    for path in [
        "/sprints/Alpha%201",
        "/sprints/Alpha%201/plan",
        "/sprints/1",
        "/search?q=alpha&sprint=Alpha%201",
    ] {
        let answer = get(path, &b_token);
        assert_eq!(
            (answer.status.as_u16(), answer.code()),
            (404, "not_found"),
            "{path}: {}",
            answer.body
        );
    }
    let answer = get("/epics/TASK-1", &b_token);
    assert_eq!(answer.status.as_u16(), 404, "{}", answer.body);
    for (path, body) in [
        ("/sprints/Alpha%201/tickets", json!({"tickets": ["TASK-2"]})),
        ("/sprints/Alpha%201/remove", json!({"tickets": ["TASK-2"]})),
        ("/sprints/Alpha%201/start", json!({})),
        ("/sprints/Alpha%201/complete", json!({})),
    ] {
        let answer = post(path, &b_token, body);
        assert_eq!(answer.status.as_u16(), 404, "{path}: {}", answer.body);
    }
    // B's own sprint of the same name is B's.
    let own = post(
        "/sprints",
        &b_token,
        json!({"name": "Alpha 1", "starts_on": "2026-12-07", "ends_on": "2026-12-18"}),
    );
    assert_eq!(own.status, 201, "{}", own.body);
    assert_eq!(
        get("/sprints/Alpha%201", &b_token).body["sprint"]["tickets"],
        0
    );
    assert_eq!(
        get("/sprints/Alpha%201", &a_token).body["sprint"]["tickets"],
        1
    );
    let search = |token: &str| {
        let found = get("/search?q=alpha%20work&sprint=Alpha%201", token);
        assert_eq!(found.status, 200, "{}", found.body);
        support::numbers(&found.body["hits"])
    };
    assert_eq!(search(&a_token), vec!["TASK-2".to_string()]);
    assert_eq!(search(&b_token), Vec::<String>::new());

    // The reader reads, and may not change.
    let reader = reader.token.expose().to_string();
    assert_eq!(get("/sprints/Alpha%201/plan", &reader).status, 200);
    assert_eq!(get("/epics/TASK-1", &reader).status, 200);
    let refused = post("/sprints/Alpha%201/start", &reader, json!({}));
    assert_eq!(
        (refused.status.as_u16(), refused.code()),
        (403, "permission_denied"),
        "{}",
        refused.body
    );
    assert!(
        refused.body.to_string().contains("tickets:write"),
        "{}",
        refused.body
    );

    // Through the bridge as B: the same.
    let home = tempfile::tempdir().unwrap();
    block_on(async {
        let mcp = bridge(server.root(), &b_token, home.path()).await;
        let listed = ok(&mcp, "jility_list_epics", json!({})).await;
        assert_eq!(listed["epics"], json!([]));
        let stats = ok(&mcp, "jility_sprint_stats", json!({"sprint": "Alpha 1"})).await;
        assert_eq!(stats["sprint"]["tickets"], 0, "B's own sprint: {stats}");
        err(
            &mcp,
            "jility_get_epic",
            json!({"epic_id": "TASK-1"}),
            "not_found",
        )
        .await;
        mcp.shutdown().await;
    });
}
