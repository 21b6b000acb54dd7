//! Bad planning input, as a hostile client sent it (issue 42's probe), in both modes: each is
//! refused with a clear error and a hint, and changes nothing.
//! - sprint names with control, invisible or unusual space characters; runs of spaces are
//!   one space (so `Sprint  1` is `Sprint 1`, a duplicate);
//! - dates that are not exactly `YYYY-MM-DD` (1970 to 9999); a sprint longer than a year
//!   (its burndown has a row a day);
//! - a done ticket added to a sprint (it would count again in the velocity);
//! - an empty `carry_over_to`;
//! - an epic with tickets deleted (they would point at a deleted epic); an epic made a
//!   sub-task (parents and epics could loop).

use chrono::{TimeDelta, Utc};
use serde_json::{Value, json};

use crate::planning::{World, block_on, cloud_world, create, err, local, ok, status};

fn day(offset: i64) -> String {
    (Utc::now().date_naive() + TimeDelta::days(offset)).to_string()
}

async fn refusals(world: &World) {
    let mcp = world.mcp().await;
    let sprint =
        |name: &str, from: &str, to: &str| json!({"name": name, "starts_on": from, "ends_on": to});
    ok(
        &mcp,
        "jility_create_sprint",
        sprint("Sprint 1", &day(0), &day(13)),
    )
    .await;

    // Names.
    for name in [
        "a\nb",
        "tab\there",
        "\u{1b}[31mred",
        "\u{7}",
        "\u{200b}",
        "Sprint\u{a0}2",
        "\u{feff}S",
    ] {
        let message = err(
            &mcp,
            "jility_create_sprint",
            sprint(name, &day(0), &day(13)),
            "invalid_input",
        )
        .await;
        assert!(message.contains("character"), "{name:?}: {message}");
    }
    let message = err(
        &mcp,
        "jility_create_sprint",
        sprint("Sprint  1", &day(0), &day(13)),
        "already_exists",
    )
    .await;
    assert!(message.contains("'Sprint 1'"), "{message}");
    let spaced = ok(
        &mcp,
        "jility_create_sprint",
        sprint("  Sprint   2 ", &day(14), &day(27)),
    )
    .await;
    assert_eq!(spaced["sprint"]["name"], "Sprint 2");

    // Dates and length.
    for (from, to) in [
        ("2026-1-7", "2026-01-20"),
        ("-0001-01-01", "2026-01-20"),
        ("0000-01-01", "2026-01-20"),
        ("1969-12-31", "1970-01-05"),
        ("2026-02-30", "2026-03-05"),
    ] {
        let message = err(
            &mcp,
            "jility_create_sprint",
            sprint("Dated", from, to),
            "invalid_input",
        )
        .await;
        assert!(message.contains("is not a date"), "{from}..{to}: {message}");
    }
    let message = err(
        &mcp,
        "jility_create_sprint",
        sprint("Forever", &day(0), &day(400)),
        "invalid_input",
    )
    .await;
    assert!(
        message.contains("401 days") && message.contains("at most 366"),
        "{message}"
    );
    ok(
        &mcp,
        "jility_create_sprint",
        sprint("A year", &day(30), &day(395)),
    )
    .await;

    // A done ticket is not sprint work; the list with it adds nothing.
    let open = create(
        &mcp,
        json!({"title": "Open", "story_points": 2, "status": "todo"}),
    )
    .await;
    let done = create(
        &mcp,
        json!({"title": "Finished", "story_points": 3, "status": "todo"}),
    )
    .await;
    status(&mcp, &done, &["in_progress", "done"]).await;
    let message = err(
        &mcp,
        "jility_add_to_sprint",
        json!({"sprint": "Sprint 1", "tickets": [open, done]}),
        "invalid_input",
    )
    .await;
    assert!(message.contains(&format!("{done} is done")), "{message}");
    let listed = ok(&mcp, "jility_list_tickets", json!({"sprint": "Sprint 1"})).await;
    assert_eq!(listed["tickets"], json!([]), "nothing was added");

    // An empty carry-over target.
    ok(
        &mcp,
        "jility_add_to_sprint",
        json!({"sprint": "Sprint 1", "tickets": [open]}),
    )
    .await;
    ok(&mcp, "jility_start_sprint", json!({"sprint": "Sprint 1"})).await;
    let message = err(
        &mcp,
        "jility_complete_sprint",
        json!({"sprint": "Sprint 1", "carry_over_to": " "}),
        "invalid_input",
    )
    .await;
    assert!(message.contains("carry_over_to"), "{message}");
    let stats = ok(&mcp, "jility_sprint_stats", json!({"sprint": "Sprint 1"})).await;
    assert_eq!(stats["sprint"]["state"], "active", "still active");

    // Epics: one with tickets stays; an epic is no sub-task.
    let epic = create(&mcp, json!({"title": "Sign-in", "kind": "epic"})).await;
    let member = create(&mcp, json!({"title": "Form", "epic_id": epic})).await;
    let (deleted, out) = world.cli(&["ticket", "delete", &epic]);
    assert!(!deleted, "an epic with a ticket was deleted: {out}");
    let still = ok(&mcp, "jility_get_ticket", json!({"ticket_id": member})).await;
    assert_eq!(still["ticket"]["epic"], json!(epic));
    // (Fields are edited by the CLI, the API and the web, not over MCP.)
    let (edited, out) = world.cli(&["ticket", "edit", &epic, "--parent", &member]);
    assert!(!edited, "an epic became a sub-task: {out}");
    err(
        &mcp,
        "jility_create_ticket",
        json!({"title": "Nested", "kind": "epic", "parent_id": member}),
        "invalid_input",
    )
    .await;
    let (edited, out) = world.cli(&["ticket", "edit", &open, "--kind", "epic"]);
    assert!(!edited, "a sprint's ticket became an epic: {out}");
    let epics = ok(&mcp, "jility_list_epics", json!({})).await;
    let numbers: Vec<&Value> = epics["epics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| &e["number"])
        .collect();
    assert_eq!(numbers, vec![&json!(epic)], "no epic was made");
    // Empty, it goes.
    let (edited, out) = world.cli(&["ticket", "edit", &member, "--clear-epic"]);
    assert!(edited, "{out}");
    let (deleted, out) = world.cli(&["ticket", "delete", &epic]);
    assert!(deleted, "{out}");
    let sprints = ok(&mcp, "jility_list_sprints", json!({})).await;
    assert_eq!(sprints["sprints"].as_array().unwrap().len(), 3, "{sprints}");
}

#[test]
fn bad_planning_input_is_refused_locally() {
    let world = local();
    block_on(refusals(&world));
}

#[test]
fn bad_planning_input_is_refused_through_the_bridge() {
    let world = cloud_world();
    block_on(refusals(&world));
}

/// Writers of one sprint on two `jility serve` processes of one database, at once: the kept
/// figure of today (the burndown's last day) is the sprint's remaining points afterwards —
/// no writer's change was counted without another's (the kept row's lock).
#[test]
fn concurrent_writers_on_two_servers_keep_the_sprint_exact() {
    use reqwest::Method;

    use crate::cloud::{self, Server, token, workspace};
    use crate::pg::TestDb;

    const TICKETS: usize = 24;
    const WRITERS: usize = 8;
    const ROUNDS: usize = 12;
    let db = TestDb::new();
    let pool = db.connect();
    let tokens = jility_cloud::auth::Tokens::new(&pool);
    let (ws, _) = workspace(&tokens, "racing");
    let agent = token(&tokens, &ws, "agent", "tickets:read,tickets:write");
    let agent = agent.token.expose().to_string();
    let unlimited = ["--rate-limit", "100000"];
    let servers = [
        Server::start(&db, &unlimited),
        Server::start(&db, &unlimited),
    ];
    let http = cloud::client();
    let post = |server: &Server, path: &str, body: Value| {
        let answer = cloud::call_json(&http, server, Method::POST, path, &agent, Some(body));
        assert!(answer.status.is_success(), "{path}: {}", answer.body);
        answer.body
    };
    let items: Vec<Value> = (0..TICKETS)
        .map(|i| {
            let points = [1, 2, 3, 5, 8][i % 5];
            json!({"title": format!("Work {i}"), "story_points": points})
        })
        .collect();
    post(&servers[0], "/tickets/batch", json!({"tickets": items}));
    let numbers: Vec<String> = (1..=TICKETS).map(|n| format!("TASK-{n}")).collect();
    post(
        &servers[0],
        "/sprints",
        json!({"name": "Race", "starts_on": day(-1), "ends_on": day(12)}),
    );
    post(
        &servers[0],
        "/sprints/Race/tickets",
        json!({"tickets": numbers}),
    );
    post(&servers[0], "/sprints/Race/start", json!({}));
    // Each writer owns some tickets and moves them along (a ticket's moves stay in order),
    // alternately through either server; every third round re-estimates instead.
    std::thread::scope(|scope| {
        for w in 0..WRITERS {
            let (servers, agent) = (&servers, &agent);
            scope.spawn(move || {
                let http = cloud::client();
                for round in 0..ROUNDS {
                    for n in (w + 1..=TICKETS).step_by(WRITERS) {
                        let server = &servers[(round + n) % 2];
                        let to = if n % 2 == 0 { "done" } else { "review" };
                        let points = [2, 3, 5, 8, 13][(round + n) % 5];
                        let (path, body) = match round % 3 {
                            0 => (
                                format!("/tickets/TASK-{n}/status"),
                                json!({"status": "in_progress"}),
                            ),
                            1 => (format!("/tickets/TASK-{n}/status"), json!({"status": to})),
                            _ => (
                                format!("/tickets/TASK-{n}/fields"),
                                json!({"story_points": points}),
                            ),
                        };
                        let answer =
                            cloud::call_json(&http, server, Method::POST, &path, agent, Some(body));
                        assert!(answer.status.is_success(), "{path}: {}", answer.body);
                    }
                }
            });
        }
    });
    // Half the tickets end done, half in review (the last round that moved them).
    let stats = cloud::call_json(
        &http,
        &servers[1],
        Method::GET,
        "/sprints/Race",
        &agent,
        None,
    );
    assert_eq!(stats.status, 200, "{}", stats.body);
    let last = stats.body["burndown"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(
        last["remaining"], stats.body["remaining_points"],
        "today's kept figure is the sprint's remaining points: {}",
        stats.body
    );
    let listed = cloud::call_json(
        &http,
        &servers[0],
        Method::GET,
        "/tickets?sprint=Race&limit=200",
        &agent,
        None,
    );
    let open: u64 = listed.body["tickets"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["status"] != "done")
        .map(|t| t["story_points"].as_u64().unwrap_or(0))
        .sum();
    assert_eq!(stats.body["remaining_points"], open, "{}", stats.body);
    assert!(open > 0, "some tickets are open at the end");
}
