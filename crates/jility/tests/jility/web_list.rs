//! The list, search and create pages of `jility web` through the built binary, as a browser
//! without script uses them: the list's filters and its cursor (which keeps the filters),
//! search with its matches marked and every word of a ticket escaped, creating one ticket
//! (authored by the person), a batch from pasted lines (all or none), a ticket from a
//! template with its variables, and each form refused without the page's token or from
//! another site.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::support;
use crate::web;

use std::collections::BTreeSet;

use support::{HUMAN, Project};
use web::LocalWeb;

fn project() -> Project {
    let project = Project::new();
    project.init("API");
    project
}

/// The tickets a page's table shows, in order.
fn rows(page: &str) -> Vec<String> {
    page.split("<tr data-ticket=\"")
        .skip(1)
        .map(|rest| rest.split('"').next().unwrap().to_string())
        .collect()
}

/// The "Next page" link of a page, as a path.
fn next_page(page: &str) -> Option<String> {
    let marker = "class=\"next\" rel=\"next\" href=\"";
    let start = page.find(marker)? + marker.len();
    let href = page[start..].split('"').next()?;
    Some(href.replace("&amp;", "&"))
}

/// How many tickets the project has, through the CLI.
fn ticket_count(project: &Project) -> u64 {
    let list = project.json(&["ticket", "list", "--limit", "1"]);
    list["page"]["total"]
        .as_u64()
        .unwrap_or_else(|| panic!("{list}"))
}

/// `count` tickets titled `<word> task N` with `label`, through the web's batch form.
fn batch(web: &LocalWeb, word: &str, count: usize, label: &str) -> reqwest::blocking::Response {
    let lines: String = (1..=count)
        .map(|i| format!("- {word} task {i}\n"))
        .collect();
    web.post_form(
        "/w/local/tickets/batch",
        &[("lines", &lines), ("labels", label)],
    )
}

#[test]
fn the_list_filters_and_pages_with_a_cursor_that_keeps_the_filters() {
    let project = project();
    let web = LocalWeb::start(&project);
    let (status, empty) = web.get("/w/local/list");
    assert_eq!(status, 200);
    assert!(empty.contains("data-page=\"list\""), "{empty}");
    assert!(empty.contains("No tickets yet"), "{empty}");
    assert!(empty.contains("href=\"/w/local/new\""), "{empty}");

    let made = batch(&web, "Bulk", 60, "bulk");
    assert_eq!(made.status().as_u16(), 303);
    let location = made.headers()["location"].to_str().unwrap().to_string();
    assert_eq!(
        location,
        "/w/local/list?label=bulk&status=backlog&created=60"
    );
    project.json(&[
        "ticket",
        "create",
        "--title",
        "Agent work",
        "--status",
        "todo",
        "--assignee",
        "claude-code",
        "--label",
        "api",
    ]);
    project.json(&[
        "ticket",
        "create",
        "--title",
        "Mine to review",
        "--status",
        "todo",
        "--assignee",
        HUMAN,
    ]);
    project.json(&["ticket", "move", "API-62", "in_progress"]);

    // The page the batch leads to: the count, 50 rows, a next page keeping the filters.
    let (_, first) = web.get(&location);
    assert!(first.contains("Created 60 tickets."), "{first}");
    assert!(first.contains("notice ok"), "{first}");
    assert!(first.contains("60 tickets"), "{first}");
    let first_rows = rows(&first);
    assert_eq!(first_rows.len(), 50, "{first}");
    let next = next_page(&first).expect("a next page");
    assert!(
        next.contains("label=bulk") && next.contains("status=backlog"),
        "{next}"
    );
    assert!(next.contains("cursor="), "{next}");
    let (status, second) = web.get(&next);
    assert_eq!(status, 200, "{second}");
    let second_rows = rows(&second);
    assert_eq!(second_rows.len(), 10, "{second}");
    assert!(next_page(&second).is_none());
    assert!(second.contains(">First page<"), "{second}");
    let all: BTreeSet<&String> = first_rows.iter().chain(&second_rows).collect();
    assert_eq!(all.len(), 60);
    assert!(!all.iter().any(|n| *n == "API-61" || *n == "API-62"));
    // The table: number, title, status, labels, updated.
    assert!(first.contains("Bulk task 60"), "{first}");
    assert!(
        first.contains("<span class=\"label\">bulk</span>"),
        "{first}"
    );
    assert!(first.contains("UTC</time>"), "{first}");

    // Several statuses at once.
    let (_, open) = web.get("/w/local/list?status=todo&status=in_progress");
    let mut open_rows = rows(&open);
    open_rows.sort();
    assert_eq!(open_rows, ["API-61", "API-62"], "{open}");
    assert!(open.contains("2 tickets"), "{open}");
    assert!(open.contains("value=\"todo\" checked"), "{open}");
    // Assignee, and people told apart from agents.
    let (_, agent) = web.get("/w/local/list?assignee=claude-code");
    assert_eq!(rows(&agent), ["API-61"], "{agent}");
    assert!(agent.contains("who agent"), "{agent}");
    let (_, mine) = web.get("/w/local/list?mine=1");
    assert_eq!(rows(&mine), ["API-62"], "{mine}");
    assert!(mine.contains("who person"), "{mine}");
    // Label and epic, and an empty result that says what to do.
    let (_, api) = web.get("/w/local/list?label=api");
    assert_eq!(rows(&api), ["API-61"]);
    let (_, none) = web.get("/w/local/list?label=nothing");
    assert!(rows(&none).is_empty());
    assert!(none.contains("No ticket matches these filters"), "{none}");
    assert!(none.contains("Clear the filters"), "{none}");
    // A cursor given with other filters than its own is refused, not misread.
    let swapped = next.replace("label=bulk", "label=api");
    let (status, _) = web.get(&swapped);
    assert_eq!(status, 400);
}

#[test]
fn search_marks_matches_and_shows_what_tickets_say_as_text() {
    let project = project();
    let web = LocalWeb::start(&project);
    project.json(&[
        "ticket",
        "create",
        "--title",
        "Zebra <script>alert(1)</script>",
        "--description",
        "A zebra crossing <img src=x onerror=alert(2)> here",
    ]);
    let (status, page) = web.get("/w/local/list?q=zebra");
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("data-page=\"list\""));
    assert_eq!(rows(&page), ["API-1"], "{page}");
    assert!(
        page.contains("<mark>Zebra</mark>") || page.contains("<mark>zebra</mark>"),
        "{page}"
    );
    assert!(
        page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
        "{page}"
    );
    assert!(!page.contains("<script>alert"), "{page}");
    assert!(!page.contains("<img src=x"), "{page}");
    assert!(page.contains("1 match"), "{page}");
    // Nothing found: what to do.
    let (_, nothing) = web.get("/w/local/list?q=aardvark");
    assert!(
        nothing.contains("No ticket matches this search"),
        "{nothing}"
    );

    // Search pages by its own cursor, which keeps the query.
    let made = batch(&web, "Walrus", 55, "sea");
    assert_eq!(made.status().as_u16(), 303);
    let (_, first) = web.get("/w/local/list?q=walrus");
    assert_eq!(rows(&first).len(), 50, "{first}");
    assert!(first.contains("55 matches"), "{first}");
    let next = next_page(&first).expect("a next page");
    assert!(next.contains("q=walrus"), "{next}");
    let (_, second) = web.get(&next);
    assert_eq!(rows(&second).len(), 5, "{second}");
    let all: BTreeSet<String> = rows(&first).into_iter().chain(rows(&second)).collect();
    assert_eq!(all.len(), 55);
    // Search applies every filter (as qualifiers of its query): a walrus without the
    // label is left out of the list and the board, and the status filter holds over every
    // page, counted.
    project.json(&["ticket", "create", "--title", "Walrus alone"]);
    let (_, labelled) = web.get("/w/local/list?q=walrus&label=sea");
    assert!(labelled.contains("55 matches"), "{labelled}");
    assert!(!labelled.contains("data-note"), "{labelled}");
    let (_, everything) = web.get("/w/local/list?q=walrus");
    assert!(everything.contains("56 matches"), "{everything}");
    let (_, board) = web.get("/w/local/board?q=walrus&label=sea");
    assert!(!board.contains("Walrus alone"), "{board}");
    project.json(&["ticket", "move", "API-2", "todo"]);
    let (_, narrowed) = web.get("/w/local/list?q=walrus&status=todo");
    assert!(narrowed.contains("1 match"), "{narrowed}");
    assert_eq!(
        every_row(&web, "/w/local/list?q=walrus&status=todo"),
        ["API-2"]
    );
    // The query language in the search box: qualifiers, and a query that does not read is
    // shown with why, beside the box, to be corrected.
    assert_eq!(
        every_row(&web, "/w/local/list?q=walrus%20-label%3Asea"),
        ["API-57"]
    );
    let (status, refused) = web.get("/w/local/list?q=walrus%20colour%3Ared");
    assert_eq!(status, 200, "{refused}");
    assert!(
        refused.contains("data-refused=\"invalid_input\""),
        "{refused}"
    );
    assert!(refused.contains("colour:red"), "{refused}");
    assert!(refused.contains("How to write a query"), "{refused}");
    assert!(refused.contains("value=\"walrus colour:red\""), "{refused}");
    let (status, board) = web.get("/w/local/board?q=walrus%20colour%3Ared");
    assert_eq!(status, 200, "{board}");
    assert!(board.contains("data-refused=\"invalid_input\""), "{board}");
    assert!(board.contains("colour:red"), "{board}");
}

/// The rows of every page of a list, following its "Next page" links.
fn every_row(web: &LocalWeb, path: &str) -> Vec<String> {
    let mut all = Vec::new();
    let mut next = Some(path.to_string());
    while let Some(path) = next {
        let (status, page) = web.get(&path);
        assert_eq!(status, 200, "{page}");
        all.extend(rows(&page));
        next = next_page(&page);
    }
    all
}

#[test]
fn a_ticket_made_by_the_form_is_the_persons_and_refusals_keep_the_values() {
    let project = project();
    let web = LocalWeb::start(&project);
    let (status, page) = web.get("/w/local/new");
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("data-page=\"new\""));
    for name in [
        "title",
        "description",
        "status",
        "story_points",
        "labels",
        "assignees",
        "parent",
        "epic",
    ] {
        assert!(page.contains(&format!("name=\"{name}\"")), "{name}: {page}");
    }
    assert!(page.contains("<label for=\"n-title\">"), "{page}");

    let made = web.post_form(
        "/w/local/tickets",
        &[
            ("title", "Login endpoint"),
            ("description", "## Goal\nSign in."),
            ("status", "todo"),
            ("story_points", "5"),
            ("labels", "api, bug"),
            ("assignees", "alice, claude-code"),
        ],
    );
    assert_eq!(made.status().as_u16(), 303);
    assert_eq!(made.headers()["location"], "/w/local/tickets/API-1");
    let shown = project.json(&["ticket", "show", "API-1"]);
    let t = &shown["ticket"];
    assert_eq!(t["title"], "Login endpoint", "{shown}");
    assert_eq!(t["created_by"], HUMAN, "{shown}");
    assert_eq!(t["status"], "todo");
    assert_eq!(t["story_points"], 5);
    assert_eq!(t["labels"], serde_json::json!(["api", "bug"]));
    assert_eq!(t["assignees"], serde_json::json!(["alice", "claude-code"]));
    assert_eq!(t["description"], "## Goal\nSign in.");

    // The script is sent to the new ticket's page; a sub-task keeps its parent.
    let (status, answer) = web.post_json(
        "/w/local/tickets",
        &[
            ("title", "Sub-task"),
            ("parent", "API-1"),
            ("story_points", ""),
        ],
    );
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["ok"], true);
    assert_eq!(answer["location"], "/w/local/tickets/API-2");
    assert_eq!(answer["number"], "API-2");
    let shown = project.json(&["ticket", "show", "API-2"]);
    assert_eq!(shown["ticket"]["parent"], "API-1", "{shown}");
    assert_eq!(shown["ticket"]["status"], "backlog", "{shown}");

    // An empty title: the page again, with the message, its hint and what was typed.
    let refused = web.post_form(
        "/w/local/tickets",
        &[
            ("title", "  "),
            ("description", "Kept <b>text</b>"),
            ("labels", "ux"),
        ],
    );
    assert_eq!(refused.status().as_u16(), 400);
    let body = refused.text().unwrap();
    assert!(body.contains("data-page=\"new\""), "{body}");
    assert!(body.contains("notice error"), "{body}");
    assert!(body.contains("Title cannot be empty"), "{body}");
    assert!(body.contains("Give the ticket a short title"), "{body}");
    assert!(
        body.contains("Kept &lt;b&gt;text&lt;/b&gt;</textarea>"),
        "{body}"
    );
    assert!(body.contains("value=\"ux\""), "{body}");
    // Points out of range, and not a number.
    let refused = web.post_form(
        "/w/local/tickets",
        &[("title", "Big"), ("story_points", "20")],
    );
    assert_eq!(refused.status().as_u16(), 400);
    let body = refused.text().unwrap();
    assert!(
        body.contains("Story points must be between 1 and 13"),
        "{body}"
    );
    assert!(body.contains("value=\"Big\""), "{body}");
    let (status, answer) = web.post_json(
        "/w/local/tickets",
        &[("title", "Big"), ("story_points", "lots")],
    );
    assert_eq!(status, 400, "{answer}");
    assert_eq!(answer["error"]["code"], "invalid_input", "{answer}");
    assert!(
        answer["error"]["hint"].as_str().unwrap().contains("13"),
        "{answer}"
    );
    // A parent that does not exist.
    let (status, answer) = web.post_json(
        "/w/local/tickets",
        &[("title", "Orphan"), ("parent", "API-99")],
    );
    assert_eq!(status, 404, "{answer}");
    assert_eq!(ticket_count(&project), 2);
}

#[test]
fn a_batch_from_pasted_lines_is_all_or_none() {
    let project = project();
    let web = LocalWeb::start(&project);
    project.json(&["ticket", "create", "--title", "Epic: accounts"]);
    let lines = "- Login form\n\n* Password reset\n1. Rate limiter\n- [ ] Audit log\n   \n";
    let made = web.post_form(
        "/w/local/tickets/batch",
        &[
            ("lines", lines),
            ("parent", "API-1"),
            ("labels", "accounts, web"),
        ],
    );
    assert_eq!(made.status().as_u16(), 303);
    let location = made.headers()["location"].to_str().unwrap().to_string();
    assert_eq!(
        location,
        "/w/local/list?status=backlog&parent=API-1&created=4"
    );
    let (_, list) = web.get(&location);
    assert!(list.contains("Created 4 tickets."), "{list}");
    assert_eq!(rows(&list).len(), 4, "{list}");
    let children = project.json(&["ticket", "list", "--parent", "API-1"]);
    let text = children.to_string();
    for title in ["Login form", "Password reset", "Rate limiter", "Audit log"] {
        assert!(text.contains(&format!("\"{title}\"")), "{title}: {text}");
    }
    assert!(!text.contains("- [ ]"), "{text}");
    let shown = project.json(&["ticket", "show", "API-2"]);
    assert_eq!(
        shown["ticket"]["labels"],
        serde_json::json!(["accounts", "web"])
    );
    assert_eq!(shown["ticket"]["created_by"], HUMAN);

    // One bad line (too long a title) creates nothing, and names its line.
    let long = "x".repeat(600);
    let bad = format!("- Fine one\n\n- {long}\n- Fine two\n");
    let refused = web.post_form("/w/local/tickets/batch", &[("lines", &bad)]);
    assert_eq!(refused.status().as_u16(), 400);
    let body = refused.text().unwrap();
    assert!(body.contains("Line 3: Title is longer than"), "{body}");
    assert!(body.contains("- Fine one"), "the lines are kept: {body}");
    assert_eq!(ticket_count(&project), 5);
    // Nothing to create, as JSON to the script.
    let (status, answer) = web.post_json("/w/local/tickets/batch", &[("lines", "\n - \n")]);
    assert_eq!(status, 400, "{answer}");
    assert_eq!(answer["error"]["code"], "invalid_input");
    // Without labels or parent: the backlog, with the count; the script goes there too.
    let (status, answer) = web.post_json("/w/local/tickets/batch", &[("lines", "One\nTwo")]);
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["location"], "/w/local/list?status=backlog&created=2");
    assert_eq!(answer["numbers"], serde_json::json!(["API-6", "API-7"]));
    assert_eq!(ticket_count(&project), 7);
}

#[test]
fn a_ticket_from_a_template_fills_its_variables() {
    let project = project();
    project.write(
        ".jility/templates/spike.md",
        "+++\ntitle = \"Spike: {{topic}}\"\ndescription = \"Time-boxed investigation\"\nlabels = [\"spike\"]\nstory_points = 2\n+++\n## Context\nInvestigate {{topic}} within {{days}} days.\n",
    );
    let web = LocalWeb::start(&project);
    let (_, page) = web.get("/w/local/new");
    assert!(page.contains("name=\"template\""), "{page}");
    assert!(page.contains("value=\"api-endpoint\""), "{page}");
    assert!(page.contains("value=\"spike\""), "{page}");
    let (status, chosen) = web.get("/w/local/new?template=spike");
    assert_eq!(status, 200);
    assert!(chosen.contains("data-template=\"spike\""), "{chosen}");
    assert!(chosen.contains("name=\"var_topic\""), "{chosen}");
    assert!(chosen.contains("name=\"var_days\""), "{chosen}");
    assert!(
        chosen.contains("<label for=\"t-var_topic\">topic</label>"),
        "{chosen}"
    );
    let (_, unknown) = web.get("/w/local/new?template=nope");
    assert!(unknown.contains("data-unknown-template"), "{unknown}");

    let made = web.post_form(
        "/w/local/tickets/from-template",
        &[
            ("template", "spike"),
            ("var_topic", "caching"),
            ("var_days", "3"),
            ("assignee", "claude-code"),
        ],
    );
    assert_eq!(made.status().as_u16(), 303);
    assert_eq!(made.headers()["location"], "/w/local/tickets/API-1");
    let shown = project.json(&["ticket", "show", "API-1"]);
    let t = &shown["ticket"];
    assert_eq!(t["title"], "Spike: caching", "{shown}");
    assert!(
        t["description"]
            .as_str()
            .unwrap()
            .contains("caching within 3 days"),
        "{shown}"
    );
    assert_eq!(t["labels"], serde_json::json!(["spike"]));
    assert_eq!(t["assignees"], serde_json::json!(["claude-code"]));
    assert_eq!(t["created_by"], HUMAN);

    // A built-in one, through the script.
    let (status, answer) = web.post_json(
        "/w/local/tickets/from-template",
        &[
            ("template", "api-endpoint"),
            ("var_method", "POST"),
            ("var_endpoint", "/login"),
            ("var_resource", "session"),
        ],
    );
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["location"], "/w/local/tickets/API-2");
    let shown = project.json(&["ticket", "show", "API-2"]);
    assert_eq!(shown["ticket"]["title"], "POST /login endpoint", "{shown}");

    // A variable left empty: the page again with the template's form and what was typed.
    let refused = web.post_form(
        "/w/local/tickets/from-template",
        &[
            ("template", "spike"),
            ("var_topic", "queues"),
            ("var_days", " "),
        ],
    );
    assert_eq!(refused.status().as_u16(), 400);
    let body = refused.text().unwrap();
    assert!(body.contains("notice error"), "{body}");
    assert!(
        body.contains("needs values for these variables: days"),
        "{body}"
    );
    assert!(body.contains("data-template=\"spike\""), "{body}");
    assert!(body.contains("value=\"queues\""), "{body}");
    assert_eq!(ticket_count(&project), 2);
}

#[test]
fn every_create_form_is_refused_without_the_token_or_from_another_site() {
    let project = project();
    let web = LocalWeb::start(&project);
    let token = web.csrf("/w/local/new");
    let forms: [(&str, Vec<(&str, &str)>); 3] = [
        ("/w/local/tickets", vec![("title", "Forged")]),
        (
            "/w/local/tickets/batch",
            vec![("lines", "Forged one\nForged two")],
        ),
        (
            "/w/local/tickets/from-template",
            vec![
                ("template", "api-endpoint"),
                ("var_method", "GET"),
                ("var_endpoint", "/x"),
            ],
        ),
    ];
    for (path, fields) in &forms {
        let no_token = web.client.post(web.url(path)).form(fields).send().unwrap();
        assert_eq!(no_token.status().as_u16(), 403, "{path}");
        let mut wrong = fields.clone();
        wrong.push(("_csrf", "not-the-token"));
        let bad_token = web
            .client
            .post(web.url(path))
            .header("Origin", &web.base)
            .form(&wrong)
            .send()
            .unwrap();
        assert_eq!(bad_token.status().as_u16(), 403, "{path}");
        let mut signed = fields.clone();
        signed.push(("_csrf", &token));
        let cross = web
            .client
            .post(web.url(path))
            .header("Origin", "https://evil.example")
            .form(&signed)
            .send()
            .unwrap();
        assert_eq!(cross.status().as_u16(), 403, "{path}");
        let body = cross.text().unwrap();
        assert!(body.contains("not sent from this site"), "{path}: {body}");
    }
    assert_eq!(ticket_count(&project), 0);
}

/// Saved views on the web: the list's search saved as a view (the form), shown beside the
/// list and the board, run by its link, refused when the name is taken, deleted by its owner.
#[test]
fn a_search_saved_as_a_view_runs_from_the_list_and_the_board() {
    let project = project();
    let web = LocalWeb::start(&project);
    project.json(&["ticket", "create", "--title", "Login form", "--label", "ui"]);
    project.json(&["ticket", "create", "--title", "Login API", "--label", "api"]);
    let (_, page) = web.get("/w/local/list?q=login%20label%3Aui");
    assert!(page.contains("data-save-view"), "{page}");
    assert!(page.contains("No saved views"), "{page}");
    let saved = web.post_form(
        "/w/local/views",
        &[
            ("name", "ui work"),
            ("query", "login label:ui"),
            ("shared", "1"),
        ],
    );
    assert_eq!(saved.status().as_u16(), 303);
    let location = saved.headers()["location"].to_str().unwrap().to_string();
    assert_eq!(location, "/w/local/list?q=view%3A%22ui+work%22");
    let (_, ran) = web.get(&location);
    assert_eq!(rows(&ran), ["API-1"], "{ran}");
    assert!(ran.contains("aria-current=\"page\">ui work</a>"), "{ran}");
    let (_, board) = web.get("/w/local/board");
    assert!(board.contains("data-views"), "{board}");
    assert!(
        board.contains("href=\"/w/local/board?q=view%3A%22ui+work%22\""),
        "{board}"
    );
    let (_, board) = web.get("/w/local/board?q=view%3A%22ui+work%22");
    assert!(
        board.contains("Login form") && !board.contains("Login API"),
        "{board}"
    );
    // The same name again is refused, and nothing changes.
    let again = web.post_form(
        "/w/local/views",
        &[("name", "UI WORK"), ("query", "is:open")],
    );
    assert_eq!(again.status().as_u16(), 409);
    let body = again.text().unwrap();
    assert!(body.contains("exists already"), "{body}");
    // Deleted by its owner: gone from the list.
    let deleted = web.post_form(
        "/w/local/views/delete",
        &[("name", "ui work"), ("back", "/w/local/list")],
    );
    assert_eq!(deleted.status().as_u16(), 303);
    let (_, page) = web.get("/w/local/list");
    assert!(page.contains("No saved views"), "{page}");
}

/// Bulk edits on the list: rows ticked (or all matching the list), a change, its preview (a
/// dry run, with what would be refused), then confirm; a list that changed in between
/// changes nothing.
#[test]
fn rows_ticked_on_the_list_change_together_after_a_preview() {
    let project = project();
    let web = LocalWeb::start(&project);
    for title in ["Sweep one", "Sweep two", "Sweep three"] {
        project.json(&["ticket", "create", "--title", title, "--label", "sweep"]);
    }
    let (_, page) = web.get("/w/local/list?label=sweep");
    assert!(page.contains("data-bulk"), "{page}");
    assert!(page.contains("All 3 matching this list"), "{page}");
    assert!(page.contains("aria-label=\"Select API-1\""), "{page}");

    // Two rows ticked: the preview, then the change.
    let preview = web.post_form(
        "/w/local/bulk",
        &[
            ("ticket", "API-1"),
            ("ticket", "API-2"),
            ("status", "todo"),
            ("step", "preview"),
            ("back", "/w/local/list?label=sweep"),
        ],
    );
    assert_eq!(preview.status().as_u16(), 200);
    let preview = preview.text().unwrap();
    assert!(preview.contains("data-page=\"bulk-preview\""), "{preview}");
    assert!(preview.contains("data-changed=\"2\""), "{preview}");
    assert!(preview.contains("status: backlog → todo"), "{preview}");
    assert!(preview.contains("Change 2 tickets"), "{preview}");
    let (_, unchanged) = web.get("/w/local/tickets/API-1");
    assert!(
        unchanged.contains("s-backlog"),
        "the preview changed nothing"
    );
    let applied = web.post_form(
        "/w/local/bulk",
        &[
            ("ticket", "API-1"),
            ("ticket", "API-2"),
            ("status", "todo"),
            ("step", "apply"),
            ("expected", "2"),
            ("back", "/w/local/list?label=sweep"),
        ],
    );
    assert_eq!(applied.status().as_u16(), 303);
    let location = applied.headers()["location"].to_str().unwrap().to_string();
    assert_eq!(location, "/w/local/list?label=sweep&changed=2");
    let (_, after) = web.get(&location);
    assert!(after.contains("Changed 2 tickets."), "{after}");
    assert_eq!(
        every_row(&web, "/w/local/list?status=todo&label=sweep"),
        ["API-2", "API-1"]
    );

    // All matching the list: a move two of them cannot make is shown, and not offered.
    let preview = web
        .post_form(
            "/w/local/bulk",
            &[
                ("all", "1"),
                ("query", "label:sweep"),
                ("expected", "3"),
                ("status", "review"),
                ("step", "preview"),
            ],
        )
        .text()
        .unwrap();
    assert!(preview.contains("data-refused=\"3\""), "{preview}");
    assert!(!preview.contains("data-confirm-bulk"), "{preview}");
    // A label added to all three; a count that no longer holds changes nothing.
    let stale = web.post_form(
        "/w/local/bulk",
        &[
            ("all", "1"),
            ("query", "label:sweep"),
            ("expected", "2"),
            ("add_label", "done-sweep"),
            ("step", "apply"),
        ],
    );
    assert_eq!(stale.status().as_u16(), 409);
    assert!(stale.text().unwrap().contains("not the 2 expected"));
    let applied = web.post_form(
        "/w/local/bulk",
        &[
            ("all", "1"),
            ("query", "label:sweep"),
            ("expected", "3"),
            ("add_label", "done-sweep"),
            ("step", "apply"),
        ],
    );
    assert_eq!(applied.status().as_u16(), 303);
    assert_eq!(every_row(&web, "/w/local/list?label=done-sweep").len(), 3);
    // Nothing ticked: a refusal that says what to do.
    let none = web.post_form("/w/local/bulk", &[("status", "todo"), ("step", "preview")]);
    assert_eq!(none.status().as_u16(), 400);
    assert!(none.text().unwrap().contains("No ticket is selected"));
}
