//! The ticket page of `jility web` through the built binary, as a browser without script
//! (forms, redirects) and as the page's script (JSON) use it: checklists ticked and
//! unticked (a stale tick refused), a section edited alone, the history's diffs and a
//! revert, fields edited and cleared, dependencies and the blocked state, a hostile
//! description rendered inert, the change log saying who, and every new form refused
//! without the page's token or from another site.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::support;
use crate::web;

use serde_json::Value;
use support::{AGENT, HUMAN, Project};
use web::LocalWeb;

const TICKET: &str = "/w/local/tickets/API-1";
const DESCRIPTION: &str = "Intro line.\n\n## Tasks\n\n- [ ] write the handler\n- [x] add the route\n\n## Notes\n\nkeep this\n";

fn project() -> Project {
    let project = Project::new();
    project.init("API");
    project.json(&[
        "ticket",
        "create",
        "--title",
        "Login endpoint",
        "--description",
        DESCRIPTION,
    ]);
    project.json(&["ticket", "create", "--title", "Session store"]);
    project.json(&["ticket", "create", "--title", "Auth epic", "--kind", "epic"]);
    project
}

fn show(project: &Project, number: &str) -> Value {
    project.json(&["ticket", "show", number])
}

fn description(project: &Project) -> String {
    show(project, "API-1")["ticket"]["description"]
        .as_str()
        .unwrap()
        .to_string()
}

fn versions(project: &Project) -> usize {
    let history = project.json(&["ticket", "history", "API-1"]);
    history["versions"].as_array().unwrap().len()
}

#[test]
fn a_task_is_ticked_and_unticked_and_a_stale_tick_changes_nothing() {
    let project = project();
    let web = LocalWeb::start(&project);
    let (_, page) = web.get(TICKET);
    assert!(page.contains("data-task=\"0\""), "{page}");
    // Without script: a form post and a redirect back.
    let ticked = web.post_form(
        &format!("{TICKET}/tasks"),
        &[("task", "0"), ("done", "true")],
    );
    assert_eq!(ticked.status().as_u16(), 303);
    assert_eq!(ticked.headers()["location"], TICKET);
    assert_eq!(
        description(&project),
        DESCRIPTION.replace("- [ ] write", "- [x] write")
    );
    // As the script does: the second box unticked.
    let (status, answer) = web.post_json(
        &format!("{TICKET}/tasks"),
        &[("task", "1"), ("done", "false")],
    );
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["ok"], true);
    let both = DESCRIPTION
        .replace("- [ ] write", "- [x] write")
        .replace("- [x] add", "- [ ] add");
    assert_eq!(description(&project), both);
    // A tick of a box already ticked (the page was stale), and one out of range.
    let (status, answer) = web.post_json(
        &format!("{TICKET}/tasks"),
        &[("task", "0"), ("done", "true")],
    );
    assert_eq!(status, 409, "{answer}");
    assert_eq!(answer["error"]["code"], "conflict", "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .to_lowercase()
            .contains("the description changed; reload"),
        "{answer}"
    );
    let (status, _) = web.post_json(
        &format!("{TICKET}/tasks"),
        &[("task", "7"), ("done", "true")],
    );
    assert_eq!(status, 409);
    assert_eq!(description(&project), both);
    // Each tick is a version with its message.
    assert_eq!(versions(&project), 3);
    let (_, history) = web.get(&format!("{TICKET}/history"));
    assert!(history.contains("ticked “write the handler”"), "{history}");
    assert!(history.contains("unticked “add the route”"), "{history}");
}

#[test]
fn a_section_is_edited_alone_and_the_whole_text_too() {
    let project = project();
    let web = LocalWeb::start(&project);
    let (_, page) = web.get(TICKET);
    // Each section has its editor, holding its body.
    assert!(page.contains("data-section=\"## Tasks\""), "{page}");
    assert!(page.contains("data-section=\"## Notes\""), "{page}");
    assert!(page.contains(">keep this</textarea>"), "{page}");
    // The description's headings sit under the page's "Description" (h2), in order.
    assert!(
        page.contains("<h3>Tasks</h3>") && page.contains("<h3>Notes</h3>"),
        "{page}"
    );
    let saved = web.post_form(
        &format!("{TICKET}/description"),
        &[
            ("section_header", "## Notes"),
            ("content", "new notes\r\nsecond line"),
            ("message", "clearer notes"),
        ],
    );
    assert_eq!(saved.status().as_u16(), 303);
    assert_eq!(
        description(&project),
        DESCRIPTION.replace("keep this", "new notes\nsecond line")
    );
    // A section that is not there: refused, with the headings to choose from.
    let (status, answer) = web.post_json(
        &format!("{TICKET}/description"),
        &[("section_header", "## Nope"), ("content", "x")],
    );
    assert_eq!(status, 400, "{answer}");
    assert!(
        answer["error"]["hint"].to_string().contains("## Tasks"),
        "{answer}"
    );
    // The whole description.
    let (status, answer) = web.post_json(
        &format!("{TICKET}/description"),
        &[("operation", "replace_all"), ("content", "All new.\n")],
    );
    assert_eq!(status, 200, "{answer}");
    assert_eq!(description(&project), "All new.\n");
}

#[test]
fn the_history_shows_each_diff_and_a_revert_restores_the_text_as_a_new_version() {
    let project = project();
    let web = LocalWeb::start(&project);
    web.post_form(
        &format!("{TICKET}/description"),
        &[
            ("section_header", "## Notes"),
            ("content", "changed <b>here</b>"),
        ],
    );
    let (_, page) = web.get(TICKET);
    assert!(page.contains("History (2 versions)"), "{page}");
    let (status, history) = web.get(&format!("{TICKET}/history"));
    assert_eq!(status, 200);
    assert!(history.contains("data-page=\"history\""), "{history}");
    assert!(
        history.contains("<span class=\"del\">-keep this\n</span>"),
        "{history}"
    );
    assert!(
        history.contains("<span class=\"add\">+changed &lt;b&gt;here&lt;/b&gt;\n</span>"),
        "{history}"
    );
    assert!(history.contains("Version 2 (current)"), "{history}");
    // Only the old version has a restore form.
    assert_eq!(
        history.matches("Restore this version").count(),
        1,
        "{history}"
    );
    let reverted = web.post_form(&format!("{TICKET}/revert"), &[("version", "1")]);
    assert_eq!(reverted.status().as_u16(), 303);
    assert_eq!(reverted.headers()["location"], format!("{TICKET}/history"));
    assert_eq!(description(&project), DESCRIPTION);
    assert_eq!(versions(&project), 3);
    let (_, history) = web.get(&format!("{TICKET}/history"));
    assert!(history.contains("Version 3 (current)"), "{history}");
    assert!(history.contains("revert to version 1"), "{history}");
    assert_eq!(history.matches("Restore this version").count(), 2);
}

#[test]
fn fields_are_edited_and_cleared() {
    let project = project();
    let web = LocalWeb::start(&project);
    let fields = format!("{TICKET}/fields");
    let post = |pairs: &[(&str, &str)]| {
        let response = web.post_form(&fields, pairs);
        assert_eq!(response.status().as_u16(), 303, "{pairs:?}");
        show(&project, "API-1")["ticket"].clone()
    };
    let t = post(&[("story_points", "5")]);
    assert_eq!(t["story_points"], 5);
    let t = post(&[("labels", " backend, auth ,,")]);
    assert_eq!(t["labels"], serde_json::json!(["auth", "backend"]));
    assert_eq!(t["story_points"], 5, "a field left out stays");
    let t = post(&[("title", "Login endpoint v2")]);
    assert_eq!(t["title"], "Login endpoint v2");
    let t = post(&[("parent", "API-2"), ("epic", "API-3")]);
    assert_eq!(
        (t["parent"].as_str(), t["epic"].as_str()),
        (Some("API-2"), Some("API-3"))
    );
    let t = post(&[("assignees", "bob, claude-code")]);
    assert_eq!(t["assignees"], serde_json::json!(["bob", "claude-code"]));
    let t = post(&[("assign_me", "1")]);
    assert_eq!(
        t["assignees"],
        serde_json::json!(["bob", "claude-code", HUMAN])
    );
    // Cleared: points, labels, parent, epic, assignees.
    let t = post(&[
        ("story_points", ""),
        ("labels", ""),
        ("parent", ""),
        ("epic", ""),
        ("assignees", ""),
    ]);
    assert!(t["story_points"].is_null(), "{t}");
    assert_eq!(t["labels"], serde_json::json!([]));
    assert!(t["parent"].is_null() && t["epic"].is_null(), "{t}");
    assert_eq!(t["assignees"], serde_json::json!([]));
    // A refused value changes nothing.
    let (status, answer) = web.post_json(&fields, &[("story_points", "99"), ("title", "X")]);
    assert_eq!(status, 400, "{answer}");
    let t = show(&project, "API-1")["ticket"].clone();
    assert_eq!(t["title"], "Login endpoint v2");
    assert!(t["story_points"].is_null());
    // The page offers each field's form, labelled.
    let (_, page) = web.get(TICKET);
    for id in [
        "field-assignees",
        "field-labels",
        "field-story_points",
        "field-parent",
        "field-epic",
        "field-title",
        "field-depends_on",
    ] {
        assert!(
            page.contains(&format!("label for=\"{id}\"")),
            "{id}: {page}"
        );
        assert!(page.contains(&format!("id=\"{id}\"")), "{id}");
    }
    assert!(page.contains("Assign to me"));
}

#[test]
fn dependencies_are_added_and_removed_with_the_blocked_state() {
    let project = project();
    let web = LocalWeb::start(&project);
    let added = web.post_form(
        &format!("{TICKET}/dependencies"),
        &[("depends_on", "API-2")],
    );
    assert_eq!(added.status().as_u16(), 303);
    let shown = show(&project, "API-1");
    assert_eq!(shown["dependencies"][0]["number"], "API-2", "{shown}");
    let (_, page) = web.get(TICKET);
    assert!(page.contains("data-blocked=\"true\""), "{page}");
    assert!(page.contains("data-dependency=\"API-2\""), "{page}");
    // A cycle is refused with the tracker's answer.
    let (status, answer) = web.post_json(
        "/w/local/tickets/API-2/dependencies",
        &[("depends_on", "API-1")],
    );
    assert_eq!(status, 409, "{answer}");
    assert_eq!(answer["error"]["code"], "dependency_cycle");
    // Done dependencies block nothing.
    for status in ["todo", "in_progress", "review", "done"] {
        project.json(&["ticket", "move", "API-2", status]);
    }
    let (_, page) = web.get(TICKET);
    assert!(!page.contains("data-blocked"), "{page}");
    assert!(page.contains("data-dependency=\"API-2\""));
    let removed = web.post_form(
        &format!("{TICKET}/dependencies/remove"),
        &[("depends_on", "API-2")],
    );
    assert_eq!(removed.status().as_u16(), 303);
    let shown = show(&project, "API-1");
    assert_eq!(shown["dependencies"], serde_json::json!([]), "{shown}");
}

#[test]
fn a_hostile_description_renders_inert() {
    let project = Project::new();
    project.init("API");
    let evil = "## Evil\n\n<script>alert(1)</script>\n\n<img src=x onerror=alert(2)>\n\n[x](javascript:alert(3))\n";
    project.json(&[
        "ticket",
        "create",
        "--title",
        "<b>bold</b>",
        "--description",
        evil,
    ]);
    let web = LocalWeb::start(&project);
    project.json(&["ticket", "comment", "API-1", "<script>alert(4)</script>"]);
    let (status, page) = web.get(TICKET);
    assert_eq!(status, 200);
    for bad in [
        "<script>alert",
        "<img src=\"x\"",
        "<img src=x",
        "onerror=\"",
        "href=\"javascript:",
        "<b>bold",
    ] {
        assert!(!page.contains(bad), "{bad}: {page}");
    }
    assert!(
        page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
        "{page}"
    );
    // The section editor holds the text escaped too.
    assert!(page.contains("data-section=\"## Evil\""), "{page}");
    web.post_form(
        &format!("{TICKET}/description"),
        &[("operation", "replace_all"), ("content", "safe")],
    );
    let (_, history) = web.get(&format!("{TICKET}/history"));
    assert!(!history.contains("<script>alert"), "{history}");
    assert!(history.contains("-&lt;script&gt;alert(1)"), "{history}");
}

#[test]
fn the_change_log_and_comments_say_who_in_words() {
    let project = project();
    let web = LocalWeb::start(&project);
    let agent = |args: &[&str]| support::json_ok(project.root(), &[("JILITY_ACTOR", AGENT)], args);
    let comment = agent(&["ticket", "comment", "API-1", "on it"]);
    let comment_id = comment["comment"]["id"].as_str().unwrap().to_string();
    agent(&["ticket", "move", "API-1", "todo"]);
    web.post_form(&format!("{TICKET}/fields"), &[("story_points", "3")]);
    let (_, page) = web.get(TICKET);
    let log = page.split("id=\"h-changes\"").nth(1).unwrap();
    assert!(log.contains("commented"), "{log}");
    assert!(!page.contains(&comment_id), "no ids: {log}");
    assert!(
        log.contains(
            "moved it from <span class=\"value\">Backlog</span> to <span class=\"value\">Todo</span>"
        ),
        "{log}"
    );
    assert!(
        log.contains("set story points to <span class=\"value\">3</span>"),
        "{log}"
    );
    // The person and the agent, told apart in words for screen readers.
    assert!(
        log.contains("<span class=\"visually-hidden\">Person: </span>alice"),
        "{log}"
    );
    assert!(
        log.contains("<span class=\"visually-hidden\">Agent: </span>agent-1"),
        "{log}"
    );
    let comments = page.split("id=\"h-comments\"").nth(1).unwrap();
    assert!(comments.contains("who agent"), "{comments}");
    assert!(comments.contains("Agent: </span>agent-1"), "{comments}");
}

#[test]
fn every_new_form_is_refused_without_the_token_or_from_another_site() {
    let project = project();
    let web = LocalWeb::start(&project);
    let token = web.csrf("/w/local/board");
    let forms: [(&str, &[(&str, &str)]); 6] = [
        ("tasks", &[("task", "0"), ("done", "true")]),
        (
            "description",
            &[("operation", "replace_all"), ("content", "gone")],
        ),
        ("fields", &[("title", "hijacked"), ("story_points", "8")]),
        ("dependencies", &[("depends_on", "API-2")]),
        ("dependencies/remove", &[("depends_on", "API-2")]),
        ("revert", &[("version", "1")]),
    ];
    let before = show(&project, "API-1");
    for (route, fields) in forms {
        let url = web.url(&format!("{TICKET}/{route}"));
        let no_token = web
            .client
            .post(&url)
            .header("Origin", &web.base)
            .form(fields)
            .send()
            .unwrap();
        assert_eq!(no_token.status().as_u16(), 403, "{route} without token");
        let mut with_token: Vec<(&str, &str)> = fields.to_vec();
        with_token.push(("_csrf", &token));
        let cross = web
            .client
            .post(&url)
            .header("Origin", "https://evil.example")
            .form(&with_token)
            .send()
            .unwrap();
        assert_eq!(cross.status().as_u16(), 403, "{route} from another site");
    }
    let after = show(&project, "API-1");
    assert_eq!(before["ticket"], after["ticket"]);
    assert_eq!(before["dependencies"], after["dependencies"]);
    assert_eq!(versions(&project), 1);
}
