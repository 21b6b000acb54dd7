//! The query language through the binaries, in both modes (local: `jility --mcp-server` on
//! SQLite; cloud: the bridge to `jility serve` on PostgreSQL) with the same script:
//! `jility_search_tickets` and `jility_list_tickets`' `query` (qualifiers, negation, `me`,
//! orders, paging with the cursor bound to the query), its errors (quoting the part, naming
//! the qualifiers, running nothing), and the CLI's `ticket list --query` and `ticket search`;
//! saved views (save, list, run by name, refusals, delete; the CLI's `jility view`); in the
//! cloud, `GET /tickets?q=`, `GET /search?q=` and `/views`, and another workspace sees none
//! of it.

use reqwest::Method;
use serde_json::{Value, json};

use crate::bridge::bridge;
use crate::cloud::{self, Server, workspace};
use crate::pg::TestDb;
use crate::planning::{World, block_on, cloud_world, create, err, local, ok, status};
use crate::support::{self, Tools};

fn numbers(page: &Value, key: &str) -> Vec<String> {
    support::numbers(&page[key])
}

/// Every page of `query`, `limit` at a time.
async fn every_page(mcp: &mcp_testkit::McpProcess, query: &str, limit: u64) -> Vec<String> {
    let mut out = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut args = json!({"query": query, "limit": limit});
        if let Some(c) = &cursor {
            args["cursor"] = json!(c);
        }
        let (_, data, page) = mcp.paged("jility_list_tickets", args).await;
        out.extend(numbers(&data, "tickets"));
        assert_eq!(data["query"], json!(query), "{data}");
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => {
                assert_eq!(page.total as usize, out.len(), "{query}: the total");
                return out;
            }
        }
    }
}

async fn script(world: &World) {
    let mcp = world.mcp().await;
    // TASK-1 … TASK-6.
    let login = create(
        &mcp,
        json!({"title": "Login page", "description": "the sign in form", "labels": ["ui"], "story_points": 2, "assignees": ["agent-1"]}),
    )
    .await;
    let api = create(
        &mcp,
        json!({"title": "Login API", "description": "jwt login endpoint", "labels": ["api", "auth"], "story_points": 5, "assignees": ["bob"]}),
    )
    .await;
    let epic = create(&mcp, json!({"title": "Auth", "kind": "epic"})).await;
    let review = create(
        &mcp,
        json!({"title": "Review the docs", "labels": ["docs"], "story_points": 8, "epic_id": epic}),
    )
    .await;
    let wontfix = create(
        &mcp,
        json!({"title": "Old login flow", "labels": ["wontfix"], "status": "todo"}),
    )
    .await;
    let waits = create(&mcp, json!({"title": "Waits on the API", "status": "todo"})).await;
    ok(
        &mcp,
        "jility_add_dependency",
        json!({"ticket_id": waits, "depends_on": api}),
    )
    .await;
    status(&mcp, &api, &["in_progress"]).await;
    status(&mcp, &review, &["todo", "in_progress", "review"]).await;

    let by_epic = format!("epic:{epic}");
    let by_dependency = format!("depends-on:{api}");
    let cases: [(&str, Vec<&String>); 14] = [
        ("status:todo,review", vec![&waits, &wontfix, &review]),
        ("-status:backlog", vec![&waits, &wontfix, &review, &api]),
        ("label:api,ui", vec![&api, &login]),
        ("-label:wontfix login", vec![&api, &login]),
        ("assignee:me", vec![&login]),
        ("is:unassigned is:ticket", vec![&waits, &wontfix, &review]),
        ("is:blocked", vec![&waits]),
        ("is:epic", vec![&epic]),
        (&by_epic, vec![&review]),
        (&by_dependency, vec![&waits]),
        ("points:3..8", vec![&review, &api]),
        ("points:>5", vec![&review]),
        (
            "created:>2024-10-20 updated:<1d",
            vec![&waits, &wontfix, &review, &epic, &api, &login],
        ),
        ("updated:>7d", vec![]),
    ];
    for (query, want) in &cases {
        let got = every_page(&mcp, query, 2).await;
        let want: Vec<String> = want.iter().map(|s| s.to_string()).collect();
        assert_eq!(got, want, "{query}");
    }
    // Orders, each way.
    let got = every_page(&mcp, "points:1..13 sort:points-asc", 10).await;
    assert_eq!(
        got,
        [&login, &api, &review].map(String::clone),
        "points asc"
    );
    let got = every_page(&mcp, "is:ticket sort:title-asc", 10).await;
    assert_eq!(
        got,
        [&api, &login, &wontfix, &review, &waits].map(String::clone),
        "title asc"
    );
    let got = every_page(&mcp, "is:ticket sort:updated-desc", 10).await;
    assert_eq!(got[0], review, "the last changed first: {got:?}");

    // Search: words ranked with snippets, narrowed by qualifiers.
    let found = ok(
        &mcp,
        "jility_search_tickets",
        json!({"query": "login -label:wontfix status:in_progress"}),
    )
    .await;
    assert_eq!(
        numbers(&found, "hits"),
        std::slice::from_ref(&api),
        "{found}"
    );
    assert!(found["hits"][0]["snippet"].as_str().unwrap().contains("**"));
    let found = ok(
        &mcp,
        "jility_search_tickets",
        json!({"query": "login sort:created-asc"}),
    )
    .await;
    assert_eq!(
        numbers(&found, "hits"),
        [&login, &api, &wontfix].map(String::clone),
        "{found}"
    );

    // Errors: the part quoted, the qualifiers named, nothing run.
    let message = err(
        &mcp,
        "jility_search_tickets",
        json!({"query": "login colour:red"}),
        "invalid_input",
    )
    .await;
    assert!(message.contains("'colour:red'"), "{message}");
    assert!(message.contains("status:, label:"), "{message}");
    let message = err(
        &mcp,
        "jility_list_tickets",
        json!({"query": "status:in-progress"}),
        "invalid_input",
    )
    .await;
    assert!(message.contains("in_progress"), "{message}");
    for bad in [
        "points:8..3",
        "updated:<7y",
        "sort:size",
        "is:sleepy",
        "sort:a sort:b",
    ] {
        err(
            &mcp,
            "jility_list_tickets",
            json!({"query": bad}),
            "invalid_input",
        )
        .await;
    }
    err(
        &mcp,
        "jility_list_tickets",
        json!({"query": "epic:TASK-99"}),
        "not_found",
    )
    .await;
    // The cursor is bound to its query.
    let (_, _, first) = mcp
        .paged(
            "jility_list_tickets",
            json!({"query": "is:ticket", "limit": 1}),
        )
        .await;
    let cursor = first.next_cursor.unwrap();
    err(
        &mcp,
        "jility_list_tickets",
        json!({"query": "is:epic", "limit": 1, "cursor": cursor}),
        "invalid_params",
    )
    .await;

    // Saved views: saved, listed, run by name (with more qualifiers), refused when the name
    // is taken or the query does not read, deleted.
    let saved = ok(
        &mcp,
        "jility_save_view",
        json!({"name": "Auth work", "query": "label:api,ui -label:wontfix sort:title-asc", "shared": true}),
    )
    .await;
    assert_eq!(saved["view"]["owner"], "agent-1", "{saved}");
    assert_eq!(saved["view"]["shared"], true, "{saved}");
    let listed = ok(&mcp, "jility_list_views", json!({})).await;
    assert_eq!(listed["views"][0]["name"], "Auth work", "{listed}");
    assert_eq!(
        every_page(&mcp, "view:\"auth work\"", 1).await,
        [api.clone(), login.clone()]
    );
    assert_eq!(
        every_page(&mcp, "view:\"Auth work\" assignee:me", 5).await,
        std::slice::from_ref(&login)
    );
    let found = ok(
        &mcp,
        "jility_search_tickets",
        json!({"query": "login view:\"Auth work\""}),
    )
    .await;
    assert_eq!(
        numbers(&found, "hits"),
        [api.clone(), login.clone()],
        "{found}"
    );
    err(
        &mcp,
        "jility_save_view",
        json!({"name": "AUTH WORK", "query": "is:open"}),
        "already_exists",
    )
    .await;
    err(
        &mcp,
        "jility_save_view",
        json!({"name": "broken", "query": "colour:red"}),
        "invalid_input",
    )
    .await;
    err(
        &mcp,
        "jility_list_tickets",
        json!({"query": "view:nope"}),
        "not_found",
    )
    .await;
    ok(&mcp, "jility_delete_view", json!({"name": "auth work"})).await;
    let listed = ok(&mcp, "jility_list_views", json!({})).await;
    assert_eq!(listed["views"], json!([]), "{listed}");
    err(
        &mcp,
        "jility_delete_view",
        json!({"name": "auth work"}),
        "not_found",
    )
    .await;

    // Bulk edits: a preview, the edit, the count guard, a refusal whole, assigning.
    let set = json!({"add_labels": ["q4"], "status": "todo"});
    let preview = ok(
        &mcp,
        "jility_bulk_update",
        json!({"query": "label:api,ui", "set": set, "dry_run": true}),
    )
    .await;
    assert_eq!(
        (preview["matched"].as_u64(), preview["changed"].as_u64()),
        (Some(2), Some(2))
    );
    assert_eq!(every_page(&mcp, "label:q4", 5).await, Vec::<String>::new());
    err(
        &mcp,
        "jility_bulk_update",
        json!({"query": "label:api,ui", "set": set, "expected_count": 5}),
        "count_mismatch",
    )
    .await;
    let done = ok(
        &mcp,
        "jility_bulk_update",
        json!({"query": "label:api,ui", "set": set, "expected_count": 2, "message": "q4 planning"}),
    )
    .await;
    assert_eq!(done["changed"], 2, "{done}");
    assert_eq!(
        every_page(&mcp, "label:q4 status:todo", 5).await,
        [api.clone(), login.clone()]
    );
    let message = err(
        &mcp,
        "jility_bulk_update",
        json!({"query": "label:q4", "set": {"status": "review"}}),
        "invalid_status",
    )
    .await;
    assert!(message.contains("todo → review"), "{message}");
    assert_eq!(every_page(&mcp, "label:q4 status:todo", 5).await.len(), 2);
    let assigned = ok(
        &mcp,
        "jility_bulk_assign",
        json!({"tickets": [waits, wontfix], "assignees": ["agent-2"]}),
    )
    .await;
    assert_eq!(assigned["changed"], 2, "{assigned}");
    assert_eq!(
        every_page(&mcp, "assignee:agent-2", 5).await,
        [waits.clone(), wontfix.clone()]
    );
    mcp.shutdown().await;

    // The CLI's bulk edit.
    let (ok_, text) = world.cli(&[
        "--json",
        "ticket",
        "bulk",
        "--query",
        "label:q4",
        "--remove-label",
        "q4",
        "--expected",
        "2",
    ]);
    assert!(ok_, "{text}");
    let removed: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(removed["changed"], 2, "{removed}");
    let (ok_, text) = world.cli(&["ticket", "bulk", "--query", "", "--status", "todo"]);
    assert!(!ok_, "{text}");
    // `--to none` alone unassigns; with other names it is refused; `--to` is required.
    let (ok_, text) = world.cli(&["--json", "ticket", "bulk-assign", &waits, "--to", "none"]);
    assert!(ok_, "{text}");
    let cleared: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        cleared["tickets"][0]["changes"][0], "assignees: agent-2 → none",
        "{cleared}"
    );
    let (ok_, text) = world.cli(&[
        "ticket",
        "bulk-assign",
        &waits,
        "--to",
        "none",
        "--to",
        "bob",
    ]);
    assert!(!ok_, "{text}");
    let (ok_, _) = world.cli(&["ticket", "bulk-assign", &waits]);
    assert!(!ok_, "bulk-assign without --to is a usage error");
    // A search by an order alone lists every ticket in it.
    let (ok_, text) = world.cli(&["--json", "ticket", "search", "sort:points-desc"]);
    assert!(ok_, "{text}");

    // The CLI saves, lists, runs and deletes views.
    let (ok_, text) = world.cli(&["view", "save", "mine", "assignee:me is:open"]);
    assert!(ok_, "{text}");
    let listed = world.cli(&["--json", "view", "list"]);
    assert!(listed.0, "{}", listed.1);
    let listed: Value = serde_json::from_str(&listed.1).unwrap();
    assert_eq!(listed["views"][0]["name"], "mine", "{listed}");
    let shown = world.cli(&["--json", "view", "show", "mine"]);
    assert!(shown.0, "{}", shown.1);
    let (ok_, text) = world.cli(&["view", "delete", "mine"]);
    assert!(ok_, "{text}");

    // The CLI: the same answers, and the next page's command carries the query.
    let listed = world.cli(&["--json", "ticket", "list", "--query", "label:api,ui"]);
    assert!(listed.0, "{}", listed.1);
    let listed: Value = serde_json::from_str(&listed.1).unwrap();
    assert_eq!(numbers(&listed, "tickets"), [api.clone(), login.clone()]);
    let (ok_, text) = world.cli(&[
        "ticket",
        "list",
        "--query",
        "is:ticket sort:title-asc",
        "--limit",
        "2",
    ]);
    assert!(ok_, "{text}");
    assert!(
        text.contains(
            "jility ticket list --query 'is:ticket sort:title-asc' --limit '2' --cursor "
        ),
        "{text}"
    );
    let (ok_, text) = world.cli(&["ticket", "search", "login colour:red"]);
    assert!(!ok_, "{text}");
    let (ok_, text) = world.cli(&["--json", "ticket", "search", "login is:assigned"]);
    assert!(ok_, "{text}");
    let found: Value = serde_json::from_str(&text).unwrap();
    let mut hits = numbers(&found, "hits");
    hits.sort();
    // (The old login flow was assigned by the bulk edit above.)
    assert_eq!(
        hits,
        [login.clone(), api.clone(), wontfix.clone()],
        "{found}"
    );
}

#[test]
fn the_query_language_in_local_mode() {
    let world = local();
    block_on(script(&world));
}

#[test]
fn the_query_language_through_the_bridge() {
    let world = cloud_world();
    block_on(script(&world));
}

/// `GET /tickets?q=` and `GET /search?q=` answer the caller's workspace only: the same
/// queries in another workspace find nothing, and its names do not resolve there.
#[test]
fn queries_stay_in_their_workspace() {
    let db = TestDb::new();
    let pool = db.connect();
    let tokens = jility_cloud::auth::Tokens::new(&pool);
    let (_a, a_token) = workspace(&tokens, "alpha");
    let (_b, b_token) = workspace(&tokens, "beta");
    let server = Server::start(&db, &[]);
    let http = cloud::client();
    let call = |method: Method, path: &str, token: &str, body: Option<Value>| {
        cloud::call_json(&http, &server, method, path, token, body)
    };
    for body in [
        json!({"title": "Alpha epic", "kind": "epic"}),
        json!({"title": "Alpha login", "labels": ["api"], "story_points": 3, "epic_id": "TASK-1"}),
    ] {
        let made = call(Method::POST, "/tickets", &a_token, Some(body));
        assert_eq!(made.status, 201, "{}", made.body);
    }
    let queries = [
        ("/tickets?q=label%3Aapi", "tickets"),
        ("/tickets?q=points%3A3..5%20sort%3Aupdated-desc", "tickets"),
        ("/tickets?q=alpha&status=backlog", "tickets"),
        ("/search?q=alpha%20login%20is%3Aticket", "hits"),
        ("/search?q=is%3Aepic", "hits"),
    ];
    for (path, key) in queries {
        let mine = call(Method::GET, path, &a_token, None);
        assert_eq!(mine.status, 200, "{path}: {}", mine.body);
        assert!(
            !support::numbers(&mine.body[key]).is_empty(),
            "{path}: {}",
            mine.body
        );
        let theirs = call(Method::GET, path, &b_token, None);
        assert_eq!(theirs.status, 200, "{path}: {}", theirs.body);
        assert_eq!(theirs.body[key], json!([]), "{path}: {}", theirs.body);
    }
    for path in [
        "/tickets?q=epic%3ATASK-1",
        "/search?q=alpha%20parent%3ATASK-2",
    ] {
        let theirs = call(Method::GET, path, &b_token, None);
        assert_eq!(
            (theirs.status.as_u16(), theirs.code()),
            (404, "not_found"),
            "{path}: {}",
            theirs.body
        );
    }
    let refused = call(Method::GET, "/tickets?q=colour%3Ared", &a_token, None);
    assert_eq!(
        (refused.status.as_u16(), refused.code()),
        (400, "invalid_input"),
        "{}",
        refused.body
    );
    assert!(
        refused.body.to_string().contains("colour:red"),
        "{}",
        refused.body
    );

    // A's shared view is not B's: B cannot list, run or delete it.
    let saved = call(
        Method::POST,
        "/views",
        &a_token,
        Some(json!({"name": "team", "query": "label:api", "shared": true})),
    );
    assert_eq!(saved.status, 201, "{}", saved.body);
    let mine = call(Method::GET, "/views", &a_token, None);
    assert_eq!(mine.body["views"][0]["name"], "team", "{}", mine.body);
    let theirs = call(Method::GET, "/views", &b_token, None);
    assert_eq!(theirs.body["views"], json!([]), "{}", theirs.body);
    for (method, path) in [
        (Method::GET, "/tickets?q=view%3Ateam"),
        (Method::GET, "/search?q=alpha%20view%3Ateam"),
        (Method::DELETE, "/views/team"),
    ] {
        let answer = call(method, path, &b_token, None);
        assert_eq!(
            (answer.status.as_u16(), answer.code()),
            (404, "not_found"),
            "{path}: {}",
            answer.body
        );
    }
    let ran = call(Method::GET, "/tickets?q=view%3Ateam", &a_token, None);
    assert_eq!(
        support::numbers(&ran.body["tickets"]),
        ["TASK-2"],
        "{}",
        ran.body
    );

    // Through the bridge as B: nothing of A's.
    let home = tempfile::tempdir().unwrap();
    block_on(async {
        let mcp = bridge(server.root(), &b_token, home.path()).await;
        let listed = ok(&mcp, "jility_list_tickets", json!({"query": "label:api"})).await;
        assert_eq!(listed["tickets"], json!([]));
        let found = ok(
            &mcp,
            "jility_search_tickets",
            json!({"query": "alpha is:open"}),
        )
        .await;
        assert_eq!(found["hits"], json!([]));
        mcp.shutdown().await;
    });
}

/// `jility ticket list`'s next-page command repeats every filter it was given (a cursor is
/// bound to them), and running it lists the next page.
#[test]
fn the_cli_next_page_command_keeps_the_filters() {
    let project = support::Project::new();
    project.init("TASK");
    for n in 1..=5 {
        let label = if n == 5 { "other" } else { "kept" };
        let run = project.cli(&[
            "ticket",
            "create",
            "--title",
            &format!("Ticket {n}"),
            "--label",
            label,
        ]);
        assert!(run.success(), "{}", run.stderr);
    }
    let first = project.cli(&[
        "ticket", "list", "--label", "kept", "--status", "backlog", "--limit", "2",
    ]);
    assert!(first.success(), "{}", first.stderr);
    let line = first
        .stdout
        .lines()
        .chain(first.stderr.lines())
        .find(|l| l.contains("Next page: "))
        .unwrap_or_else(|| panic!("no next page: {}", first.stdout));
    let command = line.split("Next page: ").nth(1).unwrap().trim();
    assert!(
        command.starts_with(
            "jility ticket list --status 'backlog' --label 'kept' --limit '2' --cursor "
        ),
        "{command}"
    );
    // Run it as a shell would: the next page of the same filters.
    let cursor = command.rsplit(' ').next().unwrap();
    let second = project.json(&[
        "ticket", "list", "--status", "backlog", "--label", "kept", "--limit", "2", "--cursor",
        cursor,
    ]);
    assert_eq!(
        numbers(&second, "tickets"),
        ["TASK-2", "TASK-1"],
        "{second}"
    );
}
