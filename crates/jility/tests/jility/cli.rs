//! The `jility` command line through the built binary: every command, as text for people
//! (here not a terminal: no colour) and with `--json`, and its errors.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // assertions in tests

use crate::support;

use jility_core::errors;
use serde_json::{Value, json};
use support::*;

#[test]
fn init_creates_the_project_once() {
    let p = Project::new();
    let out = p.cli(&["init", "--key", "api", "--name", "My API"]);
    let text = out.ok();
    assert!(text.starts_with("✓ Initialized Jility in "), "{text}");
    assert!(
        text.ends_with(
            "/.jility/data.db\n  Project  My API (tickets are API-1, API-2, …)\n\n\
             Create a ticket: jility ticket create --title \"…\"\n\
             Keep it out of git: add .jility/ to .gitignore\n"
        ),
        "{text}"
    );
    assert!(p.db().is_file());

    // Twice: already initialized. Without --key the key stays.
    let text = p.cli(&["init"]).ok().to_string();
    assert!(
        text.starts_with("✓ Jility is already initialized in "),
        "{text}"
    );
    assert!(text.ends_with("\n  Project  My API (API)\n"), "{text}");
    // A project without tickets takes a new key…
    let v = p.json(&["init", "--key", "OTHER"]);
    assert_eq!(
        (v["created"].clone(), v["key"].clone()),
        (json!(false), json!("OTHER"))
    );
    let v = p.json(&["init", "--key", "API"]);
    assert_eq!(v["key"], "API");
    assert_eq!(v["name"], "My API");
    assert!(
        v["db"].as_str().unwrap().ends_with(".jility/data.db"),
        "{v}"
    );
    let v = p.json(&["ticket", "create", "--title", "First"]);
    assert_eq!(v["ticket"]["number"], "API-1");
    // …but not once its tickets are named by the old one.
    let e = p.json_err(&["init", "--key", "OTHER"]);
    assert_eq!(e.code, errors::INVALID_INPUT);
    assert!(e.message.contains("API-N"), "{}", e.message);
    assert_eq!(p.json(&["init"])["key"], "API");

    // The default key, and the directory's name as the project's name.
    let q = Project::new();
    let v = q.json(&["init"]);
    assert_eq!(v["created"], true);
    assert_eq!(v["key"], "TASK");
    let dir = q.root().canonicalize().unwrap();
    assert_eq!(v["name"], dir.file_name().unwrap().to_str().unwrap());
}

#[test]
fn init_refuses_a_bad_key() {
    let p = Project::new();
    for key in ["1BAD", "WAY-TOO-LONG-KEY", "", "A B"] {
        let e = p.json_err(&["init", "--key", key]);
        assert_eq!(e.code, errors::INVALID_INPUT, "{key:?}");
        assert!(
            e.message.ends_with("is not a valid project key"),
            "{key:?}: {e:?}"
        );
        assert!(e.hint.contains("e.g. TASK or API"));
    }
}

#[test]
fn a_refused_init_leaves_nothing_behind() {
    let p = Project::new();
    let e = p.json_err(&["init", "--key", "1BAD"]);
    assert_eq!(e.code, errors::INVALID_INPUT);
    assert!(
        !p.path(".jility").exists(),
        "a refused init must not create the database"
    );
    // Whatever was left, the next command must not be an internal error.
    let e = p.json_err(&["ticket", "create", "--title", "x"]);
    assert_ne!(e.code, errors::INTERNAL, "{e:?}");
}

#[test]
fn commands_outside_a_project_say_to_run_init() {
    let p = Project::new();
    let out = p.cli(&["ticket", "list"]);
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(out.stdout.is_empty(), "{out:?}");
    assert!(
        out.stderr
            .starts_with("❌ Error: No Jility database found in "),
        "{out:?}"
    );
    assert!(
        out.stderr.ends_with(
            " or its parents\n\nRun `jility init` in the project's root, or pass --db PATH / set JILITY_DB (for a team's server: JILITY_MODE=cloud).\n"
        ),
        "{out:?}"
    );
    for args in [
        &["ticket", "list"][..],
        &["ticket", "show", "TASK-1"],
        &["ticket", "create", "--title", "x"],
        &["dep", "graph", "TASK-1"],
        &["template", "list"],
    ] {
        let e = p.json_err(args);
        assert_eq!(e.code, errors::NOT_FOUND, "{args:?}");
        assert!(e.hint.contains("jility init"), "{args:?}");
    }
    let e = p.json_err(&["--db", "missing.db", "ticket", "list"]);
    assert_eq!(e.code, errors::NOT_FOUND);
    assert!(e.message.starts_with("No Jility database at "), "{e:?}");
    assert!(e.message.ends_with("missing.db"), "{e:?}");
    assert!(!p.path(".jility").exists());
    assert!(!p.path("missing.db").exists());
}

#[test]
fn no_command_and_version() {
    let p = Project::new();
    let out = p.cli(&[]);
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(out.stderr.contains("--mcp-server"), "{out:?}");
    let out = p.cli(&["--version"]);
    assert_eq!(
        out.ok().trim(),
        format!("jility {}", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn ticket_create_list_and_show() {
    let p = Project::new();
    p.init("API");
    let out = p.cli(&["ticket", "create", "--title", "Parent", "--kind", "epic"]);
    assert_eq!(
        out.ok(),
        "✓ Created API-1  Parent\n  Status     Backlog\n  Assignees  —\n\n\
         View it: jility ticket show API-1\n"
    );
    let v = p.json(&[
        "ticket",
        "create",
        "-t",
        "Child",
        "-d",
        "# Title\n\nline a\nline b\n\n## Notes\nold",
        "-p",
        "3",
        "-l",
        "backend",
        "-l",
        "api",
        "-a",
        "bob",
        "--parent",
        "API-1",
        "--epic",
        "api-1",
        "-s",
        "todo",
    ]);
    let t = &v["ticket"];
    assert_eq!(t["number"], "API-2");
    assert_eq!(t["status"], "todo");
    assert_eq!(t["story_points"], 3);
    assert_eq!(t["labels"], json!(["api", "backend"]));
    assert_eq!(t["assignees"], json!(["bob"]));
    assert_eq!(t["parent"], "API-1");
    assert_eq!(t["epic"], "API-1");
    assert_eq!(t["created_by"], HUMAN);

    let out = p.cli(&["ticket", "list"]);
    assert_eq!(
        out.ok(),
        "TICKET  STATUS   TITLE   ASSIGNEES  LABELS        PTS  UPDATED\n\
         API-2   Todo     Child   bob        api, backend  3    just now\n\
         API-1   Backlog  Parent  —          —                  just now\n\n\
         2 of 2 tickets\n"
    );
    let v = p.json(&["ticket", "list", "--status", "todo", "--status", "done"]);
    assert_eq!(numbers(&v["tickets"]), ["API-2"]);
    // A status named twice lists each ticket once.
    let v = p.json(&["ticket", "list", "--status", "todo", "--status", "todo"]);
    assert_eq!(numbers(&v["tickets"]), ["API-2"]);
    let v = p.json(&["ticket", "list", "--unassigned"]);
    assert_eq!(numbers(&v["tickets"]), ["API-1"]);
    let v = p.json(&["ticket", "list", "--assignee", "bob", "--label", "api"]);
    assert_eq!(numbers(&v["tickets"]), ["API-2"]);
    let v = p.json(&["ticket", "list", "--parent", "API-1"]);
    assert_eq!(numbers(&v["tickets"]), ["API-2"]);
    let v = p.json(&["ticket", "list", "--epic", "API-1", "--label", "nope"]);
    assert_eq!(v["page"]["total"], 0);
    let v = p.json(&["ticket", "list", "--limit", "1"]);
    assert_eq!(numbers(&v["tickets"]), ["API-2"]);
    let cursor = v["page"]["next_cursor"].as_str().unwrap();
    let v = p.json(&["ticket", "list", "--limit", "1", "--cursor", cursor]);
    assert_eq!(numbers(&v["tickets"]), ["API-1"]);
    assert!(v["page"].get("next_cursor").is_none());
    let e = p.json_err(&["ticket", "list", "--limit", "201"]);
    assert_eq!(e.code, errors::INVALID_PARAMS);

    let out = p.cli(&["ticket", "show", "API-2"]);
    let text = out.ok();
    assert!(
        text.starts_with("API-2  Child\n  Status     Todo\n  Assignees  bob\n"),
        "{text}"
    );
    assert!(text.contains("  Created    just now by alice\n"), "{text}");
    assert!(text.contains("  Parent     API-1\n"), "{text}");
    // The description's headings sit under the page's, without their markers.
    assert!(
        text.contains("\nDescription\n  Title\n\n  line a line b\n\n  Notes\n\n  old\n"),
        "{text}"
    );
    assert!(text.contains("\nRecent changes\n  WHEN"), "{text}");
    assert!(!text.contains("**") && !text.contains("## "), "{text}");
    let v = p.json(&["ticket", "show", "API-2"]);
    assert_eq!(v["ticket"]["title"], "Child");
    assert_eq!(v["comment_count"], 0);
    assert_eq!(v["recent_changes"][0]["type"], "description_changed");
}

#[test]
fn ticket_edit_fields_and_description() {
    let p = Project::new();
    p.init("API");
    p.json(&[
        "ticket",
        "create",
        "-t",
        "Child",
        "-d",
        "# Title\n\nline a\nline b\n\n## Notes\nold",
        "-p",
        "3",
        "-l",
        "backend",
    ]);
    let v = p.json(&[
        "ticket", "edit", "API-1", "--title", "Renamed", "-m", "rename",
    ]);
    assert_eq!(v["changed"], json!(["title"]));
    assert_eq!(v["ticket"]["title"], "Renamed");
    let text = p
        .cli(&["ticket", "edit", "API-1", "--append", "appended"])
        .ok()
        .to_string();
    assert_eq!(
        text,
        "✓ Updated the description of API-1 (version 2)\n  Edit   append\n  Lines  8 (+2 -1)\n\
         \x20 By     alice\n\nEvery version: jility ticket history API-1\n"
    );
    let v = p.json(&[
        "ticket",
        "edit",
        "API-1",
        "--lines",
        "3-4",
        "--content",
        "LINE",
    ]);
    assert_eq!(v["summary"], "replace_lines (lines 3-4)");
    assert_eq!(v["version"], 3);
    // Fields and a description edit are one change: when the edit fails, nothing is kept.
    let title = p.json(&["ticket", "show", "API-1"])["ticket"]["title"].clone();
    let e = p.json_err(&[
        "ticket",
        "edit",
        "API-1",
        "--title",
        "Renamed",
        "--lines",
        "99-100",
        "--content",
        "x",
    ]);
    assert_eq!(e.code, errors::INVALID_INPUT);
    assert_eq!(
        p.json(&["ticket", "show", "API-1"])["ticket"]["title"],
        title
    );
    let v = p.json(&[
        "ticket",
        "edit",
        "API-1",
        "--title",
        "Renamed",
        "--lines",
        "3",
        "--content",
        "LINE",
    ]);
    // The line already reads so, and so does the title: nothing changed.
    assert_eq!(v["changed"], json!([]));
    assert_eq!(
        p.json(&["ticket", "history", "API-1"])["current_version"],
        3
    );
    assert_eq!(
        p.json(&["ticket", "show", "API-1"])["ticket"]["title"],
        "Renamed"
    );
    let v = p.json(&[
        "ticket",
        "edit",
        "API-1",
        "--lines",
        "1",
        "--content",
        "# Heading",
    ]);
    assert_eq!(v["summary"], "replace_lines (line 1)");
    let v = p.json(&[
        "ticket",
        "edit",
        "API-1",
        "--section",
        "## Notes",
        "--content",
        "new notes",
        "--message",
        "notes",
    ]);
    assert_eq!(v["summary"], "replace_section (## Notes, lines 5-7)");
    assert_eq!(v["message"], "notes");
    let v = p.json(&["ticket", "edit", "API-1", "--prepend", "> draft"]);
    assert_eq!(v["operation"], "prepend");
    let v = p.json(&["ticket", "show", "API-1"]);
    assert_eq!(
        v["ticket"]["description"],
        "> draft\n# Heading\n\nLINE\n\n## Notes\nnew notes"
    );

    let v = p.json(&[
        "ticket", "edit", "API-1", "--points", "5", "--label", "x", "--label", "y",
    ]);
    assert_eq!(v["changed"], json!(["story_points", "labels"]));
    assert_eq!(v["ticket"]["story_points"], 5);
    assert_eq!(v["ticket"]["labels"], json!(["x", "y"]));
    let v = p.json(&["ticket", "edit", "API-1", "--clear-points"]);
    assert_eq!(v["changed"], json!(["story_points"]));
    assert!(v["ticket"].get("story_points").is_none(), "{v}");
    let out = p.cli(&["ticket", "edit", "API-1", "--clear-points"]);
    assert_eq!(
        out.ok(),
        "✓ API-1 already had these values; nothing changed\n"
    );
    let v = p.json(&[
        "ticket",
        "edit",
        "API-1",
        "--clear-labels",
        "--description",
        "whole",
    ]);
    assert_eq!(v["changed"], json!(["description", "labels"]));
    assert_eq!(v["ticket"]["description"], "whole");
    let v = p.json(&["ticket", "history", "API-1"]);
    let ops: Vec<&str> = v["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["operation"].as_str().unwrap())
        .collect();
    assert_eq!(
        ops,
        [
            "created",
            "append",
            "replace_lines (lines 3-4)",
            "replace_lines (line 1)",
            "replace_section (## Notes, lines 5-7)",
            "prepend",
            "edit"
        ]
    );

    // Errors.
    let e = p.json_err(&["ticket", "edit", "API-1"]);
    assert_eq!(e.code, errors::INVALID_INPUT);
    assert_eq!(e.message, "Nothing to edit");
    let e = p.json_err(&[
        "ticket",
        "edit",
        "API-1",
        "--lines",
        "x-y",
        "--content",
        "z",
    ]);
    assert_eq!(e.message, "'x-y' is not a line range");
    let e = p.json_err(&[
        "ticket",
        "edit",
        "API-1",
        "--lines",
        "1-9",
        "--content",
        "z",
    ]);
    assert_eq!(
        e.message,
        "API-1: line range 1-9 is out of bounds: the description has 1 line"
    );
    let e = p.json_err(&[
        "ticket",
        "edit",
        "API-1",
        "--section",
        "## Nope",
        "--content",
        "z",
    ]);
    assert!(
        e.message.contains("no heading in the description matches"),
        "{e:?}"
    );
    for points in ["0", "14"] {
        let e = p.json_err(&["ticket", "edit", "API-1", "--points", points]);
        assert_eq!(
            e.message,
            format!("Story points must be between 1 and 13, got {points}")
        );
    }
    let e = p.json_err(&["ticket", "edit", "API-1", "--parent", "API-1"]);
    assert_eq!(e.message, "API-1 cannot be its own parent");
    let e = p.json_err(&["ticket", "edit", "API-1", "--title", " "]);
    assert_eq!(e.message, "Title cannot be empty");
    // clap refuses conflicting or incomplete flags before anything runs.
    let out = p.cli(&["ticket", "edit", "API-1", "--lines", "1-2"]);
    assert_eq!(out.code, Some(2), "{out:?}");
    let out = p.cli(&["ticket", "edit", "API-1", "--points", "2", "--clear-points"]);
    assert_eq!(out.code, Some(2), "{out:?}");
    assert_eq!(
        p.json(&["ticket", "history", "API-1"])["current_version"],
        7
    );
}

#[test]
fn move_assign_claim_and_comment() {
    let p = Project::new();
    p.init("TASK");
    p.json(&["ticket", "create", "-t", "Work", "-p", "2"]);
    let out = p.cli(&["ticket", "move", "TASK-1", "todo", "-m", "planned"]);
    assert_eq!(
        out.ok(),
        "✓ Moved TASK-1  Work\n  Backlog → Todo — planned\n"
    );
    let e = p.json_err(&["ticket", "move", "TASK-1", "in-progress"]);
    assert_eq!(e.code, errors::INVALID_STATUS);
    assert!(
        e.message
            .contains("Valid statuses: backlog, todo, in_progress")
    );
    let e = p.json_err(&["ticket", "move", "TASK-1", "done"]);
    assert_eq!(e.code, errors::INVALID_STATUS);
    assert_eq!(e.message, "Cannot move TASK-1 from Todo to Done");

    let v = p.json(&["ticket", "claim", "TASK-1", "-m", "mine now"]);
    assert_eq!(v["assignee"], HUMAN);
    assert_eq!(v["ticket"]["status"], "in_progress");
    let e = json_err(
        p.root(),
        &[("JILITY_ACTOR", "bob")],
        &["ticket", "claim", "TASK-1"],
    );
    assert_eq!(e.code, errors::ALREADY_ASSIGNED);
    assert_eq!(e.message, "TASK-1 is already assigned to alice");

    let out = p.cli(&[
        "ticket",
        "assign",
        "TASK-1",
        "alice",
        "bob",
        "-m",
        "pair with me",
    ]);
    assert_eq!(
        out.ok(),
        "✓ Assigned TASK-1 to alice, bob (was alice)\n  The handoff message was added as a comment.\n"
    );
    let v = p.json(&["ticket", "assign", "TASK-1"]);
    assert_eq!(v["current"], json!([]));
    let out = p.cli(&["ticket", "comment", "TASK-1", "LGTM @bob"]);
    assert_eq!(out.ok(), "✓ Commented on TASK-1 as alice\n  LGTM @bob\n");
    let v = p.json(&["ticket", "comment", "TASK-1", "second"]);
    assert_eq!(v["comment"]["author"], HUMAN);
    let v = p.json(&["ticket", "show", "TASK-1"]);
    let comments: Vec<&str> = v["comments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["content"].as_str().unwrap())
        .collect();
    assert_eq!(
        comments,
        ["mine now", "pair with me", "LGTM @bob", "second"]
    );
    let e = p.json_err(&["ticket", "comment", "TASK-1", " "]);
    assert_eq!(e.code, errors::INVALID_INPUT);
}

#[test]
fn history_revert_search_link_and_delete() {
    let p = Project::new();
    p.init("TASK");
    p.json(&[
        "ticket",
        "create",
        "-t",
        "Kangaroo importer",
        "-d",
        "first text\n",
    ]);
    p.json(&["ticket", "edit", "TASK-1", "--append", "second line"]);
    let out = p.cli(&["ticket", "history", "TASK-1"]);
    let text = out.ok();
    assert!(
        text.starts_with("TASK-1  Kangaroo importer  description at version 2\n\nVersion 1 alice · just now · created\n"),
        "{text}"
    );
    assert!(text.contains("\n    +second line\n"), "{text}");
    // What to run next is a command, not an MCP tool.
    assert!(
        text.ends_with("Restore one: jility ticket history TASK-1 --revert VERSION\n"),
        "{text}"
    );
    let v = p.json(&["ticket", "history", "TASK-1", "--revert", "1"]);
    assert_eq!(v["version"], 3);
    assert_eq!(v["summary"], "revert to version 1");
    assert_eq!(
        p.json(&["ticket", "show", "TASK-1"])["ticket"]["description"],
        "first text\n"
    );
    let e = p.json_err(&["ticket", "history", "TASK-1", "--revert", "9"]);
    assert_eq!(e.code, errors::INVALID_INPUT);

    p.json(&[
        "ticket",
        "create",
        "-t",
        "Other",
        "-d",
        "mentions kangaroo once",
    ]);
    let out = p.cli(&["ticket", "search", "kangaroo"]);
    let text = out.ok();
    assert!(
        text.starts_with("TASK-1  Backlog  Kangaroo importer\n  Kangaroo importer\n\n"),
        "{text}"
    );
    let v = p.json(&["ticket", "search", "kangaroo", "--limit", "1"]);
    assert_eq!(v["page"]["total"], 2);
    assert_eq!(numbers(&v["hits"]), ["TASK-1"]);
    let e = p.json_err(&["ticket", "search", "*"]);
    assert_eq!(e.code, errors::INVALID_INPUT);

    let out = p.cli(&[
        "ticket",
        "link",
        "TASK-1",
        "ABCDEF1",
        "-m",
        "Import kangaroos",
    ]);
    assert_eq!(
        out.ok(),
        "✓ Commit abcdef1 linked to TASK-1\n  Import kangaroos\n"
    );
    let v = p.json(&["ticket", "link", "TASK-1", "abcdef1"]);
    assert_eq!(v["already_linked"], true);
    let e = p.json_err(&["ticket", "link", "TASK-1", "xyz"]);
    assert_eq!(e.message, "'xyz' is not a commit hash");

    let v = p.json(&["ticket", "delete", "TASK-1"]);
    assert_eq!(v, json!({"number": "TASK-1", "title": "Kangaroo importer"}));
    let e = p.json_err(&["ticket", "show", "TASK-1"]);
    assert_eq!(e.code, errors::NOT_FOUND);
    assert_eq!(e.message, "Ticket TASK-1 was deleted");
    let e = p.json_err(&["ticket", "delete", "TASK-1"]);
    assert_eq!(e.code, errors::NOT_FOUND);
    assert_eq!(p.json(&["ticket", "list"])["page"]["total"], 1);
    assert_eq!(
        numbers(&p.json(&["ticket", "search", "kangaroo"])["hits"]),
        ["TASK-2"]
    );
}

#[test]
fn dependencies() {
    let p = Project::new();
    p.init("TASK");
    for title in ["Schema", "Model", "Endpoint"] {
        p.json(&["ticket", "create", "-t", title]);
    }
    let out = p.cli(&["dep", "add", "TASK-2", "TASK-1"]);
    assert_eq!(
        out.ok(),
        "✓ TASK-2 now depends on TASK-1  Schema\n  TASK-2 waits on unfinished work.\n"
    );
    let v = p.json(&["dep", "add", "TASK-3", "TASK-2"]);
    assert_eq!(numbers(&v["chain"]), ["TASK-1", "TASK-2", "TASK-3"]);
    let out = p.cli(&["dep", "add", "TASK-1", "TASK-3"]);
    assert_eq!(out.code, Some(1));
    assert!(out.stdout.is_empty());
    assert!(
        out.stderr.starts_with(
            "❌ Error: TASK-1 cannot depend on TASK-3: that would create the cycle TASK-1 → TASK-3 → TASK-2 → TASK-1\n\n"
        ),
        "{out:?}"
    );
    let e = p.json_err(&["dep", "add", "TASK-1", "TASK-1"]);
    assert_eq!(e.code, errors::DEPENDENCY_CYCLE);
    let out = p.cli(&["dep", "graph", "TASK-2"]);
    assert_eq!(
        out.ok(),
        "TASK-2  Model  Backlog\n  Blocked: a dependency is not done.\n\n\
         Waits on\n  TICKET  STATUS   TITLE   DEPTH\n  TASK-1  Backlog  Schema  1\n\n\
         Waited on by\n  TICKET  STATUS   TITLE     DEPTH\n  TASK-3  Backlog  Endpoint  1\n"
    );
    let v = p.json(&["dep", "graph", "TASK-1"]);
    assert_eq!(numbers(&v["downstream"]), ["TASK-2", "TASK-3"]);
    let out = p.cli(&["dep", "remove", "TASK-3", "TASK-2"]);
    assert_eq!(out.ok(), "✓ TASK-3 no longer depends on TASK-2\n");
    let e = p.json_err(&["dep", "remove", "TASK-3", "TASK-2"]);
    assert_eq!(e.code, errors::NOT_FOUND);
    let v = p.json(&["dep", "add", "TASK-1", "TASK-3"]);
    assert_eq!(v["is_blocked"], true);
}

#[test]
fn templates_builtin_and_from_the_project() {
    let p = Project::new();
    p.init("TASK");
    let out = p.cli(&["template", "list"]);
    assert_eq!(
        out.ok(),
        "TEMPLATE            WHAT                               VARIABLES\n\
         api-endpoint        REST API endpoint with validation  method, endpoint, resource\n\
         database-migration  Schema migration with rollback     table, change\n\
         react-component     React component with tests         component, purpose\n\
         bug-fix             Bug investigation and fix          summary\n\
         refactor            Code refactoring task              target, goal\n\n\
         5 of 5 templates\nUse one: jility template create NAME --var NAME=VALUE …\n"
    );
    let v = p.json(&[
        "template",
        "create",
        "bug-fix",
        "--var",
        "summary=login crashes on = sign",
        "-a",
        "bob",
    ]);
    assert_eq!(v["template"], "bug-fix");
    assert_eq!(v["ticket"]["title"], "Fix: login crashes on = sign");
    assert_eq!(v["ticket"]["labels"], json!(["bug"]));
    assert_eq!(v["ticket"]["story_points"], 2);
    assert_eq!(v["ticket"]["assignees"], json!(["bob"]));
    assert!(
        v["ticket"]["description"]
            .as_str()
            .unwrap()
            .starts_with("## Context\nBug: login crashes on = sign\n")
    );
    let e = p.json_err(&["template", "create", "api-endpoint", "--var", "method=GET"]);
    assert_eq!(e.code, errors::INVALID_INPUT);
    assert_eq!(
        e.message,
        "template \"api-endpoint\" needs values for these variables: endpoint, resource"
    );
    let e = p.json_err(&["template", "create", "bug-fix", "--var", "summary"]);
    assert_eq!(e.message, "'summary' is not NAME=VALUE");
    let e = p.json_err(&["template", "create", "nope"]);
    assert_eq!(e.code, errors::NOT_FOUND);

    // Project templates: TOML front matter between +++ lines; a file named like a built-in
    // replaces it; a `# ` heading gives the title when the front matter does not.
    p.write(
        ".jility/templates/spike.md",
        "+++\ntitle = \"Spike: {{topic}}\"\ndescription = \"Time-boxed investigation\"\n\
         labels = [\"spike\", \"research\"]\nstory_points = 2\n+++\n## Context\nInvestigate {{topic}}.\n",
    );
    p.write(
        ".jility/templates/bug-fix.md",
        "+++\ndescription = \"Our bug process\"\n+++\n# Bug: {{area}}\n\n## Steps\n1. Reproduce in {{area}}\n",
    );
    p.write(".jility/templates/notes.txt", "not a template");
    let v = p.json(&["template", "list"]);
    let names: Vec<&str> = v["templates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "api-endpoint",
            "database-migration",
            "react-component",
            "bug-fix",
            "refactor",
            "spike"
        ]
    );
    assert_eq!(v["templates"][3]["source"], "project");
    assert_eq!(v["templates"][3]["description"], "Our bug process");
    assert_eq!(v["templates"][3]["variables"], json!(["area"]));
    assert_eq!(v["templates"][5]["variables"], json!(["topic"]));
    assert_eq!(v["problems"], json!([]));
    let text = p.cli(&["template", "list"]).ok().to_string();
    assert!(
        text.contains("\nbug-fix             Our bug process                    area\n"),
        "{text}"
    );
    assert!(
        text.contains("\nspike               Time-boxed investigation           topic\n\n6 of 6"),
        "{text}"
    );

    let out = p.cli(&["template", "create", "spike", "--var", "topic=caching"]);
    let text = out.ok();
    assert!(
        text.starts_with(
            "✓ Created TASK-2 from template spike  Spike: caching\n  Status     Backlog\n\
             \x20 Assignees  —\n  Labels     research, spike\n  Points     2\n"
        ),
        "{text}"
    );
    let v = p.json(&["template", "create", "bug-fix", "--var", "area=billing"]);
    assert_eq!(v["ticket"]["title"], "Bug: billing");
    assert_eq!(
        v["ticket"]["description"],
        "## Steps\n1. Reproduce in billing\n"
    );
    assert!(v["ticket"].get("story_points").is_none());
}

#[test]
fn the_cli_actor_is_jility_actor_then_user() {
    let p = Project::new();
    p.init("TASK");
    let who = |env: &[(&str, &str)]| {
        let v = json_ok(p.root(), env, &["ticket", "create", "-t", "Who"]);
        v["ticket"]["created_by"].as_str().unwrap().to_string()
    };
    assert_eq!(
        who(&[("JILITY_ACTOR", "agent-7"), ("USER", "bob")]),
        "agent-7"
    );
    assert_eq!(who(&[("JILITY_ACTOR", " "), ("USER", "bob")]), "bob");
    assert_eq!(who(&[("USERNAME", "carol")]), "carol");
    // Without any: the account's name as the system knows it, never a made-up one.
    let account = who(&[]);
    assert!(!account.is_empty() && account != "cli", "{account}");
    let v = json_ok(
        p.root(),
        &[("USER", "dave")],
        &["ticket", "comment", "TASK-1", "hi"],
    );
    assert_eq!(v["comment"]["author"], "dave");
}

/// Errors: without --json a `❌ Error:` text on stderr and nothing on stdout; with --json the
/// envelope on stdout and nothing on stderr. Exit code 1 either way.
#[test]
fn errors_on_stderr_or_as_json() {
    let p = Project::new();
    p.init("TASK");
    let out = p.cli(&["ticket", "show", "TASK-5"]);
    assert_eq!(out.code, Some(1));
    assert!(out.stdout.is_empty(), "{out:?}");
    assert_eq!(
        out.stderr,
        "❌ Error: Ticket TASK-5 not found\n\nUse `jility ticket list` or `jility ticket search` \
         to see available tickets.\n"
    );
    let out = run(
        p.root(),
        &[("JILITY_ACTOR", HUMAN)],
        &["--json", "ticket", "show", "TASK-5"],
    );
    assert_eq!(out.code, Some(1));
    assert!(out.stderr.is_empty(), "{out:?}");
    let v: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(
        v,
        json!({"status": "error", "error": {
            "code": "not_found",
            "message": "Ticket TASK-5 not found",
            "hint": "Use jility_list_tickets or jility_search_tickets (CLI: `jility ticket list`) to see available tickets.",
            "retryable": false
        }})
    );
    // --json may come after the subcommand too.
    let out = run(
        p.root(),
        &[("JILITY_ACTOR", HUMAN)],
        &["ticket", "create", "--title", "", "--json"],
    );
    assert_eq!(out.code, Some(1));
    let v: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v["error"]["code"], "invalid_input");
    let e = p.json_err(&["ticket", "create", "--title", "x", "--points", "14"]);
    assert_eq!(e.message, "Story points must be between 1 and 13, got 14");
    let e = p.json_err(&[
        "ticket",
        "create",
        "--title",
        "x",
        "--status",
        "in-progress",
    ]);
    assert_eq!(e.code, errors::INVALID_STATUS);
    assert_eq!(p.json(&["ticket", "list"])["page"]["total"], 0);
}

/// The recent changes of `ticket show` without their timestamps.
/// What each row of a ticket page's "Recent changes" says (its WHAT column).
fn change_lines(text: &str) -> Vec<String> {
    let mut rows = text
        .lines()
        .skip_while(|l| *l != "Recent changes")
        .skip(1)
        .take_while(|l| l.starts_with("  "));
    let header = rows.next().unwrap();
    let what = header.find("WHAT").unwrap();
    rows.map(|l| l[what..].to_string()).collect()
}

#[test]
fn recent_changes_tell_setting_from_clearing() {
    let p = Project::new();
    p.init("API");
    p.json(&["ticket", "create", "-t", "Parent"]);
    p.json(&["ticket", "create", "-t", "Child", "-p", "5"]);
    p.json(&["ticket", "edit", "API-2", "--parent", "API-1"]);
    p.json(&["ticket", "edit", "API-2", "--clear-parent"]);
    p.json(&["ticket", "edit", "API-2", "--clear-points"]);
    // The data is right…
    let v = p.json(&["ticket", "show", "API-2"]);
    let changes = &v["recent_changes"];
    assert_eq!(changes[0]["type"], "story_points_changed");
    assert_eq!(changes[0]["old_value"], "5");
    assert!(changes[0].get("new_value").is_none());
    assert_eq!(changes[1]["type"], "parent_changed");
    assert_eq!(changes[1]["old_value"], "API-1");
    assert_eq!(changes[2]["new_value"], "API-1");
    // …and the text must say it too.
    let lines = change_lines(p.cli(&["ticket", "show", "API-2"]).ok());
    assert_eq!(lines[0], "points 5 → none", "{lines:?}");
    assert_eq!(lines[1], "parent API-1 → none", "{lines:?}");
    assert_eq!(lines[2], "parent none → API-1", "{lines:?}");
    assert_ne!(
        lines[1], lines[2],
        "clearing the parent reads like setting it"
    );
}

/// A parent chain cannot loop: a ticket's sub-task cannot become its parent.
#[test]
fn parent_chains_cannot_loop() {
    let p = Project::new();
    p.init("API");
    for title in ["Epic", "Story", "Task"] {
        p.json(&["ticket", "create", "-t", title]);
    }
    p.json(&["ticket", "edit", "API-2", "--parent", "API-1"]);
    p.json(&["ticket", "edit", "API-3", "--parent", "API-2"]);
    let e = p.json_err(&["ticket", "edit", "API-1", "--parent", "API-3"]);
    assert_eq!(e.code, errors::INVALID_INPUT);
    assert_eq!(
        e.message,
        "API-3 cannot be the parent of API-1: it is one of its sub-tasks"
    );
    let v = p.json(&["ticket", "show", "API-1"]);
    assert!(v["ticket"].get("parent").is_none(), "{v}");
    // Moving a sub-task elsewhere is fine.
    let v = p.json(&["ticket", "edit", "API-3", "--parent", "API-1"]);
    assert_eq!(v["ticket"]["parent"], "API-1");
}

/// A build without the default features (`cargo build -p jility --no-default-features`) is
/// local mode over stdio alone: cloud mode is refused with a reason, and neither the cloud
/// commands nor `--http` exist.
#[cfg(not(feature = "http"))]
#[test]
fn a_local_only_build_refuses_cloud_mode() {
    let p = Project::new();
    let out = run(p.root(), &[("JILITY_MODE", "cloud")], &["--mcp-server"]);
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert!(
        out.stderr.contains("built without cloud mode"),
        "{}",
        out.stderr
    );
    for command in ["serve", "admin", "auth", "audit"] {
        let out = run(p.root(), &[], &[command, "--help"]);
        assert_eq!(out.code, Some(2), "{command}: {}", out.stderr);
        assert!(
            out.stderr.contains("unrecognized subcommand"),
            "{}",
            out.stderr
        );
    }
    let help = run(p.root(), &[], &["--help"]);
    assert!(help.success());
    assert!(
        !help.stdout.contains("Serve the REST API"),
        "{}",
        help.stdout
    );
    // Local mode works as in the full build.
    assert!(p.json(&["init", "--key", "LOC"])["created"] == json!(true));
}
