//! The command line's text on a real terminal (a pseudo-terminal made by util-linux's
//! `script`) and off one: colour only on a terminal, `NO_COLOR` and `--color` honoured,
//! markdown rendered without its markers, text fitted to the terminal's width, `--json`
//! the same everywhere.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // assertions in tests

use crate::support;

use std::process::{Command, Stdio};

use serde_json::Value;
use support::*;

/// `jility ARGS` on a pseudo-terminal in `p`, with `env` (TERM is a colour terminal): what
/// the terminal showed (stdout and stderr both), line ends as `\n`.
fn on_terminal(p: &Project, env: &[(&str, &str)], args: &[&str]) -> String {
    let quote = |s: &str| format!("'{}'", s.replace('\'', r"'\''"));
    let line = std::iter::once(env!("CARGO_BIN_EXE_jility"))
        .chain(args.iter().copied())
        .map(quote)
        .collect::<Vec<_>>()
        .join(" ");
    let mut command = Command::new("script");
    command
        .args(["-q", "-e", "-c", &line, "/dev/null"])
        .current_dir(p.root())
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("TERM", "xterm-256color")
        .env("JILITY_ACTOR", "alice")
        .stdin(Stdio::null());
    for (key, value) in env {
        command.env(key, value);
    }
    // Its exit status is the command's; what it showed is what is asserted.
    let out = command.output().expect("util-linux script");
    String::from_utf8(out.stdout).unwrap().replace("\r\n", "\n")
}

const ESC: &str = "\x1b[";

/// The text without its escape sequences (what the eye reads).
fn visible(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\x1b' && chars.peek() == Some(&'[') {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn project() -> Project {
    let p = Project::new();
    p.init("API");
    p.json(&[
        "ticket",
        "create",
        "-t",
        "Login",
        "-d",
        "# Login\n\nUsers sign in with **SSO** via `oauth2`, and then they land on the dashboard they asked for.\n\n## Acceptance Criteria\n- [x] returns 200\n- [ ] logs the attempt\n\n```sh\ncurl -i /login\n```",
        "-l",
        "auth",
        "-a",
        "bob",
    ]);
    p.json(&["ticket", "comment", "API-1", "- **first** thought"]);
    p
}

#[test]
fn colour_only_on_a_terminal_unless_told() {
    let p = project();
    // On a terminal: colour.
    let shown = on_terminal(&p, &[], &["ticket", "list"]);
    assert!(shown.contains(ESC), "{shown:?}");
    assert!(
        visible(&shown).contains("API-1   Backlog  Login"),
        "{shown:?}"
    );
    // NO_COLOR, or --color never: none.
    let shown = on_terminal(&p, &[("NO_COLOR", "1")], &["ticket", "list"]);
    assert!(!shown.contains(ESC), "{shown:?}");
    let shown = on_terminal(&p, &[], &["ticket", "list", "--color", "never"]);
    assert!(!shown.contains(ESC), "{shown:?}");
    // Off a terminal: none, unless --color always.
    let piped = p.cli(&["ticket", "list"]).ok().to_string();
    assert!(!piped.contains(ESC), "{piped:?}");
    let forced = p
        .cli(&["ticket", "list", "--color", "always"])
        .ok()
        .to_string();
    assert!(forced.contains(ESC), "{forced:?}");
    assert_eq!(visible(&forced), piped);
    // Errors on a terminal are coloured too, and say the same.
    let shown = on_terminal(&p, &[], &["ticket", "show", "API-9"]);
    assert!(shown.contains(ESC), "{shown:?}");
    assert!(
        visible(&shown).starts_with("❌ Error: Ticket API-9 not found\n"),
        "{shown:?}"
    );
}

#[test]
fn json_is_the_same_on_a_terminal() {
    let p = project();
    for args in [
        &["ticket", "show", "API-1", "--json"][..],
        &["ticket", "list", "--json"],
        &["--json", "ticket", "search", "sso"],
    ] {
        let shown = on_terminal(&p, &[], args);
        assert!(!shown.contains(ESC), "{shown:?}");
        let on_tty: Value = serde_json::from_str(&shown).unwrap();
        let piped: Value = serde_json::from_str(p.cli(args).ok()).unwrap();
        assert_eq!(on_tty, piped, "{args:?}");
    }
    // Times are whole in JSON, said as people say them in text.
    let v = p.json(&["ticket", "show", "API-1"]);
    let at = v["ticket"]["created_at"].as_str().unwrap();
    assert!(at.ends_with('Z') && at.contains('T'), "{at}");
    let text = p.cli(&["ticket", "show", "API-1"]).ok().to_string();
    assert!(text.contains("Created    just now by alice"), "{text}");
    assert!(!text.contains(at), "{text}");
}

#[test]
fn markdown_is_rendered_for_the_terminal() {
    let p = project();
    let shown = visible(&on_terminal(
        &p,
        &[("COLUMNS", "48")],
        &["ticket", "show", "API-1"],
    ));
    // No markdown markers: headings, bold and code are styles, checklists are boxes.
    for marker in ["**", "## ", "# Login", "`oauth2`", "- [x]", "```"] {
        assert!(!shown.contains(marker), "{marker:?} in {shown}");
    }
    assert!(
        shown.contains("  ☑ returns 200\n  ☐ logs the attempt\n"),
        "{shown}"
    );
    assert!(shown.contains("\n      curl -i /login\n"), "{shown}");
    // The description's headings sit under the page's: indented.
    assert!(shown.contains("\nDescription\n  Login\n"), "{shown}");
    assert!(shown.contains("\n  Acceptance Criteria\n"), "{shown}");
    // The comment, under its author.
    assert!(
        shown.contains("  alice · just now\n    • first thought\n"),
        "{shown}"
    );
    // Paragraphs fit the terminal's width.
    for line in shown.lines() {
        assert!(line.chars().count() <= 48, "{line:?} in {shown}");
    }
    assert!(
        shown.contains("  Users sign in with SSO via oauth2, and then\n  they land"),
        "{shown}"
    );
    // Search snippets: the matches highlighted, without their markers.
    let raw = on_terminal(&p, &[], &["ticket", "search", "dashboard"]);
    assert!(!visible(&raw).contains("**"), "{raw:?}");
    assert!(
        raw.contains(&format!("{ESC}1m")) || raw.contains(";1m"),
        "{raw:?}"
    );
    assert!(visible(&raw).contains("dashboard"), "{raw:?}");
}

#[test]
fn free_text_may_start_with_a_dash() {
    let p = project();
    let v = p.json(&[
        "ticket",
        "edit",
        "API-1",
        "--section",
        "## Acceptance Criteria",
        "--content",
        "- [x] returns 200\n- [x] logs the attempt",
    ]);
    assert_eq!(v["operation"], "replace_section", "{v}");
    let v = p.json(&["ticket", "edit", "API-1", "--append", "- [ ] rate limits"]);
    assert_eq!(v["operation"], "append", "{v}");
    let v = p.json(&["ticket", "edit", "API-1", "--prepend", "-- draft --"]);
    assert_eq!(v["operation"], "prepend", "{v}");
    let v = p.json(&["ticket", "comment", "API-1", "-1 from me"]);
    assert_eq!(v["comment"]["content"], "-1 from me");
    let v = p.json(&[
        "ticket",
        "move",
        "API-1",
        "todo",
        "-m",
        "-v is not verbose here",
    ]);
    assert_eq!(v["message"], "-v is not verbose here");
    let v = p.json(&["ticket", "create", "-t", "-x flag", "-d", "- one"]);
    assert_eq!(v["ticket"]["title"], "-x flag");
    assert_eq!(v["ticket"]["description"], "- one");
    let description = p.json(&["ticket", "show", "API-1"])["ticket"]["description"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        description.starts_with("-- draft --\n# Login")
            && description.contains("- [x] returns 200\n- [x] logs the attempt")
            && description.ends_with("- [ ] rate limits"),
        "{description}"
    );
}
