//! The inbox through the binaries: mentions, assignments, handoffs and done blockers reach
//! whom they concern, never the one who acted; watching and unwatching; marking read; over
//! the CLI and MCP in local mode, and over MCP and REST in the cloud, each workspace's
//! apart.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::support::{self, Project, Tools as _, json_ok};

fn inbox(p: &Project, who: &str, extra: &[&str]) -> Value {
    let mut args = vec!["inbox", "list"];
    args.extend_from_slice(extra);
    json_ok(p.root(), &[("JILITY_ACTOR", who)], &args)
}

fn as_(p: &Project, who: &str, args: &[&str]) -> Value {
    json_ok(p.root(), &[("JILITY_ACTOR", who)], args)
}

fn kinds(inbox: &Value) -> Vec<(String, String)> {
    inbox["notifications"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            (
                n["kind"].as_str().unwrap().to_string(),
                n["ticket"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

/// Locally: who is told what, each once, the actor never; unwatching; marking read.
#[test]
fn mentions_assignments_handoffs_and_blockers_reach_whom_they_concern() {
    let p = Project::new();
    p.init("TASK");
    // bob is known to the workspace (he files a ticket); nobody is not.
    as_(
        &p,
        "bob",
        &[
            "ticket",
            "create",
            "--title",
            "Ship the release",
            "--assignee",
            "carol",
        ],
    );
    as_(
        &p,
        "alice",
        &[
            "ticket",
            "create",
            "--title",
            "Fix login",
            "--assignee",
            "agent-1",
        ],
    );
    as_(&p, "bob", &["dep", "add", "TASK-1", "TASK-2"]);

    // agent-1 was assigned TASK-2 by alice; alice is told nothing of her own change.
    let agent = inbox(&p, "agent-1", &[]);
    assert_eq!(kinds(&agent), vec![("assigned".into(), "TASK-2".into())]);
    assert_eq!(agent["notifications"][0]["actor"], "alice");
    assert_eq!(agent["notifications"][0]["title"], "Fix login");
    assert_eq!(agent["notifications"][0]["read"], false);
    assert_eq!(agent["unread"], 1);
    assert_eq!(agent["recipient"], "agent-1");
    assert_eq!(kinds(&inbox(&p, "alice", &[])), vec![]);
    // carol was assigned TASK-1 by bob, then told of the dependency he added to it.
    assert_eq!(
        kinds(&inbox(&p, "carol", &[])),
        vec![
            ("watching".into(), "TASK-1".into()),
            ("assigned".into(), "TASK-1".into())
        ]
    );

    // A comment mentioning bob and someone unknown: bob is told; the stranger nobody is.
    as_(
        &p,
        "agent-1",
        &[
            "ticket",
            "comment",
            "TASK-2",
            "@bob is this yours? cc @nobody, mail me at x@example.com",
        ],
    );
    let bob = inbox(&p, "bob", &[]);
    assert_eq!(kinds(&bob)[0], ("mentioned".into(), "TASK-2".into()));
    assert!(
        bob["notifications"][0]["summary"]
            .as_str()
            .unwrap()
            .contains("agent-1 mentioned you")
    );
    assert_eq!(kinds(&inbox(&p, "nobody", &[])), vec![]);
    // alice watches TASK-2 (she created it): the comment reached her as a change.
    assert_eq!(
        kinds(&inbox(&p, "alice", &[])),
        vec![("watching".into(), "TASK-2".into())]
    );

    // Moved to review by agent-1: a handoff for alice (not a plain change).
    as_(&p, "agent-1", &["ticket", "move", "TASK-2", "in_progress"]);
    as_(&p, "agent-1", &["ticket", "move", "TASK-2", "review"]);
    let alice = inbox(&p, "alice", &[]);
    assert_eq!(kinds(&alice)[0], ("handoff".into(), "TASK-2".into()));
    assert!(
        alice["notifications"][0]["summary"]
            .as_str()
            .unwrap()
            .contains("handed it over for review")
    );

    // Done: TASK-1 waited on it, so its creator (bob) and assignee (carol) are told, on TASK-1.
    as_(&p, "agent-1", &["ticket", "move", "TASK-2", "done"]);
    let carol = inbox(&p, "carol", &[]);
    assert_eq!(kinds(&carol)[0], ("blocker_done".into(), "TASK-1".into()));
    assert!(
        carol["notifications"][0]["summary"]
            .as_str()
            .unwrap()
            .contains("TASK-2")
    );
    assert_eq!(
        kinds(&inbox(&p, "bob", &[]))[0],
        ("blocker_done".into(), "TASK-1".into())
    );

    // alice stops watching TASK-2: its changes no longer reach her.
    let before = inbox(&p, "alice", &[])["notifications"]
        .as_array()
        .unwrap()
        .len();
    let unwatched = as_(&p, "alice", &["inbox", "unwatch", "TASK-2"]);
    assert_eq!(unwatched["watching"], false);
    as_(&p, "agent-1", &["ticket", "comment", "TASK-2", "All done."]);
    assert_eq!(
        inbox(&p, "alice", &[])["notifications"]
            .as_array()
            .unwrap()
            .len(),
        before
    );
    // dave chooses to watch TASK-1 and hears of its next change.
    let watched = as_(&p, "dave", &["inbox", "watch", "TASK-1"]);
    assert_eq!(watched["watching"], true);
    assert!(
        watched["watchers"]
            .as_array()
            .unwrap()
            .contains(&json!("dave"))
    );
    as_(&p, "carol", &["ticket", "move", "TASK-1", "todo"]);
    assert_eq!(
        kinds(&inbox(&p, "dave", &[])),
        vec![("watching".into(), "TASK-1".into())]
    );

    // Marking read: by id, then all; unread_only follows.
    let bob = inbox(&p, "bob", &[]);
    let first = bob["notifications"][0]["id"].as_i64().unwrap();
    let marked = as_(&p, "bob", &["inbox", "read", &first.to_string()]);
    assert_eq!(marked["marked"], 1);
    let unread = inbox(&p, "bob", &["--unread"]);
    assert!(
        unread["notifications"]
            .as_array()
            .unwrap()
            .iter()
            .all(|n| n["id"] != first && n["read"] == false)
    );
    let all = as_(&p, "bob", &["inbox", "read", "--all"]);
    assert_eq!(all["unread"], 0);
    assert_eq!(inbox(&p, "bob", &["--unread"])["notifications"], json!([]));
    // Another's ids are not theirs to mark.
    let carols = inbox(&p, "carol", &[])["notifications"][0]["id"]
        .as_i64()
        .unwrap();
    let none = as_(&p, "bob", &["inbox", "read", &carols.to_string()]);
    assert_eq!(none["marked"], 0);
    assert_eq!(inbox(&p, "carol", &[])["unread"], 3);

    // Text for people.
    let text = support::Project::cli(&p, &["inbox", "list"]);
    assert!(text.ok().contains("inbox"), "{}", text.ok());
    let e = p.json_err(&["inbox", "read"]);
    assert_eq!(e.code, jility_core::errors::INVALID_INPUT);
}

/// The tools over MCP (stdio, local mode): the caller is JILITY_ACTOR; paging; marking.
#[tokio::test]
async fn the_inbox_tools_answer_the_caller() {
    let p = Project::new();
    p.init("TASK");
    for n in 0..5 {
        as_(
            &p,
            "alice",
            &[
                "ticket",
                "create",
                "--title",
                &format!("Task {n}"),
                "--assignee",
                "agent-7",
            ],
        );
    }
    let mcp = support::start(p.root(), &[], &[("JILITY_ACTOR", "agent-7")]).await;
    let (first, page) = mcp
        .list(
            "jility_list_notifications",
            json!({"unread_only": true, "limit": 3}),
        )
        .await;
    assert_eq!(first["notifications"].as_array().unwrap().len(), 3);
    assert_eq!(first["unread"], 5);
    assert_eq!(page.total, 5);
    let cursor = page.next_cursor.clone().unwrap();
    let (rest, page) = mcp
        .list(
            "jility_list_notifications",
            json!({"unread_only": true, "limit": 3, "cursor": cursor}),
        )
        .await;
    assert_eq!(rest["notifications"].as_array().unwrap().len(), 2);
    assert!(page.next_cursor.is_none());
    // A cursor of another listing is refused.
    let (_, bad) = mcp
        .err(
            "jility_list_notifications",
            json!({"unread_only": false, "cursor": cursor}),
        )
        .await;
    assert_eq!(bad.code, "invalid_params", "{bad:?}");
    let marked = mcp
        .data("jility_mark_notifications_read", json!({"all": true}))
        .await;
    assert_eq!(marked, json!({"marked": 5, "unread": 0}));
    let (_, both) = mcp
        .err(
            "jility_mark_notifications_read",
            json!({"all": true, "ids": [1]}),
        )
        .await;
    assert_eq!(both.code, "invalid_input");
    let watched = mcp
        .data(
            "jility_watch_ticket",
            json!({"ticket_id": "TASK-1", "watching": false}),
        )
        .await;
    assert_eq!(watched["watching"], false);
    let (_, missing) = mcp
        .err("jility_watch_ticket", json!({"ticket_id": "TASK-99"}))
        .await;
    assert_eq!(missing.code, "not_found");
}

/// In the cloud: a member is mentioned by email or one-word name and told under their email
/// (the name their writes on the web carry); tokens are told under their names; the REST
/// routes answer as the tools; nothing crosses workspaces.
#[test]
fn cloud_inboxes_are_the_callers_and_stay_in_their_workspace() {
    let db = crate::pg::TestDb::new();
    let admin = crate::cloud::admin_workspace(&db.url, "north", &[]);
    let other = crate::cloud::admin_workspace(&db.url, "south", &[]);
    // A member of north: erin@example.com, named Erin.
    let pool = db.connect();
    let accounts = jility_cloud::accounts::Accounts::new(&pool);
    let north = pool.workspace_by_name("north").unwrap().unwrap();
    let user = accounts
        .create_user("erin@example.com", "Erin", Some("correct horse battery"))
        .unwrap();
    accounts
        .add_member(
            north.id,
            user.id,
            jility_cloud::accounts::Role::Member,
            jility_cloud::accounts::Actor::Operator,
        )
        .unwrap();
    let server = crate::cloud::Server::start(&db, &[]);
    let http = crate::cloud::client();
    let call = |token: &str, method: Method, path: &str, body: Option<Value>| {
        crate::cloud::call_json(&http, &server, method, path, token, body)
    };
    let made = call(
        &admin,
        Method::POST,
        "/tickets",
        Some(json!({"title": "Northern work", "assignees": ["agent-n"]})),
    );
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.body);
    let comment = call(
        &admin,
        Method::POST,
        "/tickets/TASK-1/comments",
        Some(json!({"content": "@erin and @erin@example.com, see this; @agent-n too"})),
    );
    assert!(comment.status.is_success(), "{}", comment.body);
    call(
        &other,
        Method::POST,
        "/tickets",
        Some(json!({"title": "Southern work", "assignees": ["agent-n"]})),
    );

    // erin's inbox is her email's: one mention (two spellings, one person).
    let rows: Vec<(String, String)> = db
        .client()
        .query(
            "SELECT n.recipient, n.kind FROM notifications n JOIN workspaces w ON w.id = n.workspace_id WHERE w.name = 'north' ORDER BY n.id",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    assert!(
        rows.contains(&("erin@example.com".into(), "mentioned".into())),
        "{rows:?}"
    );
    assert_eq!(
        rows.iter()
            .filter(|(who, _)| who == "erin@example.com")
            .count(),
        1,
        "{rows:?}"
    );
    // agent-n: assigned (the mention on the same ticket and moment is another operation).
    let tokens = jility_cloud::auth::Tokens::new(&pool);
    let agent = crate::cloud::token(&tokens, &north, "agent-n", "tickets:read");
    let agent = agent.token.expose().to_string();
    let listed = call(&agent, Method::GET, "/notifications?unread_only=true", None);
    assert_eq!(listed.status, StatusCode::OK, "{}", listed.body);
    let kinds: Vec<&str> = listed.body["notifications"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, vec!["mentioned", "assigned"], "{}", listed.body);
    assert!(listed.body["notifications"].to_string().contains("TASK-1"));
    assert!(
        !listed.body.to_string().contains("Southern"),
        "another workspace's entry"
    );
    let marked = call(
        &agent,
        Method::POST,
        "/notifications/read",
        Some(json!({"all": true})),
    );
    assert_eq!(marked.status, StatusCode::OK, "{}", marked.body);
    assert_eq!(marked.body["marked"], 2);
    // A token of the same name in the other workspace sees only its own.
    let south = pool.workspace_by_name("south").unwrap().unwrap();
    let southern = crate::cloud::token(&tokens, &south, "agent-n", "tickets:read");
    let theirs = call(southern.token.expose(), Method::GET, "/notifications", None);
    assert_eq!(theirs.body["notifications"].as_array().unwrap().len(), 1);
    assert_eq!(theirs.body["notifications"][0]["title"], "Southern work");
    // Watching over REST.
    let watch = call(
        &agent,
        Method::POST,
        "/tickets/TASK-1/watch",
        Some(json!({"watching": false})),
    );
    assert_eq!(watch.status, StatusCode::OK, "{}", watch.body);
    assert_eq!(watch.body["watching"], false);
}
