//! Related tickets, likely duplicates and estimates through the binaries, in both modes
//! (local: `jility --mcp-server` on SQLite; cloud: the bridge to `jility serve` on
//! PostgreSQL) with the same script: `jility_suggest_related` for a draft and for a filed
//! ticket (ranked, duplicates flagged and first, the words that matched, the ticket itself
//! left out), the likely duplicates beside a new ticket (created all the same),
//! `jility_estimate_effort` from alike done tickets (which, how alike, the range) and "not
//! enough history", every refusal; the CLI's `ticket related`, `ticket estimate` and the
//! hint of `ticket create`; in the cloud, `GET /tickets/related` and `/tickets/estimate`
//! answer from the caller's workspace only. (The quality of the ranking is measured on the
//! labelled set of `tests/data/related.json`: the benchmark's `related` part.)

use reqwest::Method;
use serde_json::{Value, json};

use crate::cloud::{self, Server, workspace};
use crate::pg::TestDb;
use crate::planning::{World, block_on, cloud_world, create, err, local, ok, status};

fn numbers(related: &Value) -> Vec<String> {
    related["related"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["number"].as_str().unwrap().to_string())
        .collect()
}

/// The tickets every script starts from: TASK-1 … TASK-6.
async fn tickets(mcp: &mcp_testkit::McpProcess) {
    for (title, description, points) in [
        (
            "Password reset link expires after 5 minutes",
            "Users click the link in the reset email and get an 'expired' page.",
            3,
        ),
        (
            "Invoice PDF export cuts off long line items",
            "Line items with long descriptions are truncated in the exported PDF.",
            5,
        ),
        (
            "Invoice PDF export is missing the company logo",
            "The logo uploaded in settings does not appear on exported invoices.",
            3,
        ),
        ("Dark mode for the dashboard", "Add a dark theme.", 8),
        (
            "Export invoices as CSV",
            "Accountants want a CSV of all invoices.",
            3,
        ),
        (
            "Invoice PDF export wraps long descriptions badly",
            "Long line item descriptions overflow the PDF table.",
            5,
        ),
    ] {
        create(
            mcp,
            json!({"title": title, "description": description, "story_points": points}),
        )
        .await;
    }
    // TASK-2, TASK-3 and TASK-5 are done; TASK-6 is not.
    for t in ["TASK-2", "TASK-3", "TASK-5"] {
        status(mcp, t, &["todo", "in_progress", "review", "done"]).await;
    }
}

async fn script(world: &World) {
    let mcp = world.mcp().await;
    tickets(&mcp).await;

    // A draft like TASK-1: it comes first, flagged, with the words it shares.
    let (text, found) = mcp
        .call_markdown::<Value>(
            "jility_suggest_related",
            json!({"title": "Reset password link expired too quickly", "description": "The link in the password reset email stops working after a few minutes."}),
        )
        .await;
    let found = found.unwrap();
    let first = &found["related"][0];
    assert_eq!(first["number"], "TASK-1", "{found}");
    assert_eq!(first["duplicate"], true, "{found}");
    assert!(
        first["score"].as_f64().unwrap() >= found["duplicate_threshold"].as_f64().unwrap(),
        "{found}"
    );
    let matched: Vec<&str> = first["matched"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    for word in ["reset", "password", "link"] {
        assert!(matched.contains(&word), "{word}: {found}");
    }
    assert_eq!(first["fields"], json!(["title", "description"]), "{found}");
    assert_eq!(found["duplicates"], 1, "{found}");
    assert!(!numbers(&found).contains(&"TASK-4".to_string()), "{found}");
    assert!(
        text.contains("likely duplicate") && text.contains("TASK-1"),
        "{text}"
    );
    assert_eq!(
        found["probe"],
        json!({"title": "Reset password link expired too quickly"})
    );

    // A filed ticket: itself left out; the open one alike comes before the done ones.
    let filed = ok(
        &mcp,
        "jility_suggest_related",
        json!({"ticket_id": "TASK-2", "limit": 3}),
    )
    .await;
    let found = numbers(&filed);
    assert!(!found.contains(&"TASK-2".to_string()), "{filed}");
    assert_eq!(found.len(), 3, "{filed}");
    assert_eq!(found[0], "TASK-6", "a likely duplicate, open: {filed}");
    assert!(found.contains(&"TASK-3".to_string()), "{filed}");
    assert_eq!(filed["probe"]["ticket"], "TASK-2");
    let scores: Vec<f64> = filed["related"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["score"].as_f64().unwrap())
        .collect();
    assert!(scores.iter().all(|s| (0.0..=1.0).contains(s)), "{filed}");

    // Nothing alike: an empty list, said so.
    let (text, none) = mcp
        .call_markdown::<Value>(
            "jility_suggest_related",
            json!({"title": "Kubernetes ingress annotations"}),
        )
        .await;
    assert_eq!(none.unwrap()["related"], json!([]));
    assert!(text.contains("No tickets like"), "{text}");

    // Creating a likely duplicate answers it beside the new ticket, made all the same.
    let (text, made) = mcp
        .call_markdown::<Value>(
            "jility_create_ticket",
            json!({"title": "Password reset link expired after a few minutes", "description": "The reset email's link says expired."}),
        )
        .await;
    let made = made.unwrap();
    assert_eq!(made["ticket"]["number"], "TASK-7", "{made}");
    assert_eq!(made["likely_duplicates"][0]["number"], "TASK-1", "{made}");
    assert_eq!(made["likely_duplicates"][0]["duplicate"], true, "{made}");
    assert!(
        text.contains("may duplicate") && text.contains("TASK-1"),
        "{text}"
    );
    let unlike = ok(
        &mcp,
        "jility_create_ticket",
        json!({"title": "Kubernetes ingress annotations"}),
    )
    .await;
    assert!(unlike.get("likely_duplicates").is_none(), "{unlike}");

    // An exact done duplicate comes before a fainter open one: duplicates by score alone.
    let exact = ok(
        &mcp,
        "jility_suggest_related",
        json!({"title": "Invoice PDF export cuts off long line items"}),
    )
    .await;
    assert_eq!(numbers(&exact)[0], "TASK-2", "{exact}");
    assert!(
        exact["related"][0]["score"].as_f64().unwrap() > 0.9,
        "{exact}"
    );
    // One word in common is never a likely duplicate.
    let one = ok(&mcp, "jility_suggest_related", json!({"title": "Invoice"})).await;
    assert_eq!(one["duplicates"], 0, "{one}");
    // A done epic's points are its tickets': never an estimate's basis.
    let epic = ok(
        &mcp,
        "jility_create_ticket",
        json!({"title": "Invoice PDF export drops long line items epic", "kind": "epic", "story_points": 13}),
    )
    .await["ticket"]["number"]
        .as_str()
        .unwrap()
        .to_string();
    status(&mcp, &epic, &["todo", "in_progress", "review", "done"]).await;

    // An estimate from the alike done tickets, the same every time.
    let args = json!({"title": "Invoice PDF export drops long line items", "description": "Long line items are cut off in the PDF."});
    let (text, estimate) = mcp
        .call_markdown::<Value>("jility_estimate_effort", args.clone())
        .await;
    let estimate = estimate.unwrap();
    assert_eq!(estimate["story_points"], 5, "{estimate}");
    let basis: Vec<&str> = estimate["based_on"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["number"].as_str().unwrap())
        .collect();
    assert_eq!(basis[0], "TASK-2", "the most alike first: {estimate}");
    assert!(basis.contains(&"TASK-3"), "{estimate}");
    assert!(!basis.contains(&"TASK-6"), "not done: {estimate}");
    assert!(!basis.contains(&epic.as_str()), "an epic: {estimate}");
    assert_eq!(
        estimate["range"],
        json!({"low": 3, "high": 5}),
        "{estimate}"
    );
    assert!(
        text.contains("5 points") && text.contains("TASK-2"),
        "{text}"
    );
    assert_eq!(ok(&mcp, "jility_estimate_effort", args).await, estimate);
    let filed = ok(
        &mcp,
        "jility_estimate_effort",
        json!({"ticket_id": "TASK-6"}),
    )
    .await;
    assert_eq!(filed["story_points"], 5, "{filed}");
    assert_eq!(filed["probe"]["ticket"], "TASK-6");

    // No done ticket alike: not enough history, no number made up.
    let (text, none) = mcp
        .call_markdown::<Value>(
            "jility_estimate_effort",
            json!({"title": "Kubernetes ingress annotations"}),
        )
        .await;
    let none = none.unwrap();
    assert!(none.get("story_points").is_none(), "{none}");
    assert_eq!(none["confidence"], "none");
    assert_eq!(none["based_on"], json!([]));
    assert!(text.contains("Not enough history"), "{text}");

    // Refusals: each names what to do, and changes nothing.
    for (tool, args, code) in [
        ("jility_suggest_related", json!({}), "invalid_input"),
        (
            "jility_suggest_related",
            json!({"ticket_id": "TASK-1", "title": "x"}),
            "invalid_input",
        ),
        (
            "jility_suggest_related",
            json!({"ticket_id": "TASK-1", "description": "x"}),
            "invalid_input",
        ),
        (
            "jility_suggest_related",
            json!({"ticket_id": "TASK-99"}),
            "not_found",
        ),
        (
            "jility_suggest_related",
            json!({"title": "x", "limit": 21}),
            "invalid_params",
        ),
        (
            "jility_suggest_related",
            json!({"title": "x", "limit": 0}),
            "invalid_params",
        ),
        (
            "jility_estimate_effort",
            json!({"title": "  "}),
            "invalid_input",
        ),
        (
            "jility_suggest_related",
            json!({"title": "reset\u{0}password"}),
            "invalid_input",
        ),
        (
            "jility_estimate_effort",
            json!({"ticket_id": "nope"}),
            "invalid_input",
        ),
    ] {
        err(&mcp, tool, args, code).await;
    }
    // Text in any script is cut to what is compared, and fits through the bridge's GET.
    let wide = ok(
        &mcp,
        "jility_suggest_related",
        json!({"title": format!("password reset {}", "🎉".repeat(4_000)), "description": "🎉".repeat(40_000)}),
    )
    .await;
    assert!(wide["related"].is_array(), "{wide}");
    assert!(wide["probe"]["title"].as_str().unwrap().len() <= 2_000);
    let message = err(
        &mcp,
        "jility_estimate_effort",
        json!({"ticket_id": "x".repeat(100_000)}),
        "invalid_input",
    )
    .await;
    assert!(message.len() < 1_000, "{message}");
    // A very long description is compared by its start, not refused.
    let long = ok(
        &mcp,
        "jility_suggest_related",
        json!({"title": "Password reset link expiry", "description": "reset ".repeat(20_000)}),
    )
    .await;
    assert_eq!(
        numbers(&long)[..2],
        ["TASK-7", "TASK-1"],
        "equal scores, newest first: {long}"
    );
}

#[test]
fn related_tickets_in_local_mode() {
    let world = local();
    block_on(script(&world));
    let World::Local(project) = &world else {
        unreachable!()
    };
    // The CLI: a person's text, and JSON equal to the tool's data.
    let ran = |args: &[&str]| {
        let run = project.cli(args);
        assert!(run.success(), "{args:?}: {}", run.stderr);
        run.stdout
    };
    let out = ran(&[
        "ticket",
        "related",
        "--title",
        "Reset password link expired too quickly",
    ]);
    assert!(
        out.contains("likely duplicate") && out.contains("TASK-1"),
        "{out}"
    );
    let json = project.json(&["ticket", "related", "TASK-2", "--limit", "2"]);
    assert_eq!(numbers(&json), ["TASK-9", "TASK-6"], "{json}");
    let out = ran(&["ticket", "estimate", "TASK-6"]);
    assert!(out.contains("5 points") && out.contains("TASK-2"), "{out}");
    let out = ran(&[
        "ticket",
        "create",
        "--title",
        "Password reset link expires too soon",
    ]);
    assert!(
        out.contains("It may duplicate") && out.contains("TASK-1"),
        "{out}"
    );
    // A ticket and a title together: clap refuses before anything runs.
    let refused = project.cli(&["ticket", "related", "TASK-1", "--title", "x"]);
    assert_eq!(refused.code, Some(2), "{}", refused.stderr);
    assert!(
        refused.stderr.contains("cannot be used with"),
        "{}",
        refused.stderr
    );
}

#[test]
fn related_tickets_through_the_bridge() {
    let world = cloud_world();
    block_on(script(&world));
}

/// `GET /tickets/related` and `/tickets/estimate` answer from the caller's workspace only:
/// another workspace's tickets are never candidates, and its numbers do not resolve.
#[test]
fn related_tickets_stay_in_their_workspace() {
    let db = TestDb::new();
    let pool = db.connect();
    let tokens = jility_cloud::auth::Tokens::new(&pool);
    let (_a, a_token) = workspace(&tokens, "alpha");
    let (_b, b_token) = workspace(&tokens, "beta");
    let server = Server::start(&db, &[]);
    let http = cloud::client();
    let call =
        |path: &str, token: &str| cloud::call_json(&http, &server, Method::GET, path, token, None);
    for body in [
        json!({"title": "Alpha password reset link expires", "story_points": 3, "status": "done"}),
        json!({"title": "Alpha password reset email", "story_points": 5, "status": "done"}),
    ] {
        let made = cloud::call_json(
            &http,
            &server,
            Method::POST,
            "/tickets",
            &a_token,
            Some(body),
        );
        assert_eq!(made.status, 201, "{}", made.body);
    }
    // A token that may write but not read is told of no other ticket by a create.
    let writer = crate::cloud::token(&tokens, &_a, "writer", "tickets:write");
    let made = cloud::call_json(
        &http,
        &server,
        Method::POST,
        "/tickets",
        writer.token.expose(),
        Some(json!({"title": "Alpha password reset link expires"})),
    );
    assert_eq!(made.status, 201, "{}", made.body);
    assert!(
        made.body.get("likely_duplicates").is_none(),
        "{}",
        made.body
    );
    let made = cloud::call_json(
        &http,
        &server,
        Method::POST,
        "/tickets",
        &a_token,
        Some(json!({"title": "Alpha password reset link expired"})),
    );
    let named: Vec<&str> = made.body["likely_duplicates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["number"].as_str().unwrap())
        .collect();
    assert_eq!(
        named[..2],
        ["TASK-3", "TASK-1"],
        "equal scores, newest first: {}",
        made.body
    );
    let mine = call(
        "/tickets/related?title=Alpha%20password%20reset%20link",
        &a_token,
    );
    assert_eq!(mine.status, 200, "{}", mine.body);
    assert!(
        numbers(&mine.body).contains(&"TASK-1".to_string()),
        "{}",
        mine.body
    );
    let estimate = call(
        "/tickets/estimate?title=Alpha%20password%20reset%20link",
        &a_token,
    );
    assert_eq!(estimate.status, 200, "{}", estimate.body);
    assert!(estimate.body["story_points"].is_u64(), "{}", estimate.body);

    let theirs = call(
        "/tickets/related?title=Alpha%20password%20reset%20link",
        &b_token,
    );
    assert_eq!(theirs.status, 200, "{}", theirs.body);
    assert_eq!(theirs.body["related"], json!([]), "{}", theirs.body);
    let theirs = call(
        "/tickets/estimate?title=Alpha%20password%20reset%20link",
        &b_token,
    );
    assert_eq!(theirs.status, 200, "{}", theirs.body);
    assert_eq!(theirs.body["confidence"], "none", "{}", theirs.body);
    for path in [
        "/tickets/related?ticket_id=TASK-1",
        "/tickets/estimate?ticket_id=TASK-2",
    ] {
        let theirs = call(path, &b_token);
        assert_eq!(
            (theirs.status.as_u16(), theirs.code()),
            (404, "not_found"),
            "{path}: {}",
            theirs.body
        );
    }
    let unknown = call("/tickets/related?title=x&colour=red", &a_token);
    assert_eq!(
        (unknown.status.as_u16(), unknown.code()),
        (400, "invalid_input"),
        "{}",
        unknown.body
    );
}
