//! `jility web` through the built binary, as a browser without script uses it: the board
//! shows what agents and the CLI made, a form moves a card (and a move the workflow forbids
//! is refused with the allowed moves), a form without the page's token or from another
//! site changes nothing, only loopback names are answered, and every answer carries the
//! strict Content-Security-Policy.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::support;
use crate::web;

use support::Project;
use web::LocalWeb;

fn project_with_tickets() -> Project {
    let project = Project::new();
    project.init("API");
    project.json(&[
        "ticket",
        "create",
        "--title",
        "Login endpoint",
        "--label",
        "api",
    ]);
    project.json(&[
        "ticket",
        "create",
        "--title",
        "Rate limiter",
        "--assignee",
        "claude-code",
    ]);
    project
}

#[test]
fn the_board_shows_the_tickets_in_their_columns() {
    let project = project_with_tickets();
    let web = LocalWeb::start(&project);
    let (status, page) = web.get("/w/local/board");
    assert_eq!(status, 200);
    assert!(page.contains("data-ticket=\"API-1\""), "{page}");
    assert!(page.contains("data-ticket=\"API-2\""), "{page}");
    assert!(page.contains("Login endpoint"));
    // Both start in the backlog: its count is 2.
    let backlog = page.split("data-status=\"backlog\"").nth(1).unwrap();
    assert!(backlog.contains("data-count>2<"), "{backlog}");
    // The agent is told apart from the person.
    assert!(page.contains("who agent"), "{page}");
    // Filters are kept in the URL.
    let (_, filtered) = web.get("/w/local/board?label=api");
    assert!(filtered.contains("API-1") && !filtered.contains("data-ticket=\"API-2\""));
}

#[test]
fn a_form_moves_a_card_and_the_workflow_refuses_a_forbidden_move() {
    let project = project_with_tickets();
    let web = LocalWeb::start(&project);
    let moved = web.post_form(
        "/w/local/tickets/API-1/status",
        &[("status", "todo"), ("back", "/w/local/board")],
    );
    assert_eq!(moved.status().as_u16(), 303);
    assert_eq!(moved.headers()["location"], "/w/local/board");
    let shown = project.json(&["ticket", "show", "API-1"]);
    assert_eq!(shown["ticket"]["status"], "todo", "{shown}");
    assert_eq!(shown["recent_changes"][0]["changed_by"], support::HUMAN);
    // todo → done skips the workflow: refused, naming the moves allowed.
    let (status, answer) = web.post_json("/w/local/tickets/API-1/status", &[("status", "done")]);
    assert_eq!(status, 409, "{answer}");
    assert_eq!(answer["error"]["code"], "invalid_status", "{answer}");
    let text = answer["error"].to_string();
    assert!(text.contains("in_progress"), "{text}");
    // A redirect back never leaves the site.
    let outside = web.post_form(
        "/w/local/tickets/API-1/status",
        &[("status", "in_progress"), ("back", "https://evil.example/")],
    );
    assert_eq!(outside.headers()["location"], "/w/local/tickets/API-1");
}

#[test]
fn a_form_without_the_token_or_from_another_site_changes_nothing() {
    let project = project_with_tickets();
    let web = LocalWeb::start(&project);
    let no_token = web
        .client
        .post(web.url("/w/local/tickets/API-1/status"))
        .form(&[("status", "todo")])
        .send()
        .unwrap();
    assert_eq!(no_token.status().as_u16(), 403);
    let token = web.csrf("/w/local/board");
    let cross = web
        .client
        .post(web.url("/w/local/tickets/API-1/status"))
        .header("Origin", "https://evil.example")
        .form(&[("status", "todo"), ("_csrf", token.as_str())])
        .send()
        .unwrap();
    assert_eq!(cross.status().as_u16(), 403);
    let shown = project.json(&["ticket", "show", "API-1"]);
    assert_eq!(shown["ticket"]["status"], "backlog", "{shown}");
}

#[test]
fn only_loopback_names_are_answered_and_pages_carry_the_csp() {
    let project = project_with_tickets();
    let web = LocalWeb::start(&project);
    let rebound = web
        .client
        .get(web.url("/w/local/board"))
        .header("Host", "attacker.example")
        .send()
        .unwrap();
    assert_eq!(rebound.status().as_u16(), 403);
    let page = web.client.get(web.url("/w/local/board")).send().unwrap();
    let csp = page.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(
        csp.contains("script-src 'self'") && !csp.contains("unsafe-inline"),
        "{csp}"
    );
    let (status, _) = web.get("/w/elsewhere/board");
    assert_eq!(status, 404);
}

#[test]
fn web_refuses_to_listen_beyond_loopback() {
    let project = project_with_tickets();
    let run = project.cli(&["web", "--listen", "0.0.0.0:0"]);
    assert_ne!(run.code, Some(0));
    assert!(run.stderr.contains("loopback"), "{}", run.stderr);
}

#[test]
fn a_column_pages_on_with_its_own_cursor() {
    let project = Project::new();
    project.init("API");
    for n in 1..=30 {
        project.json(&["ticket", "create", "--title", &format!("Task {n}")]);
    }
    project.json(&["ticket", "move", "API-1", "todo"]);
    let web = LocalWeb::start(&project);
    let (_, page) = web.get("/w/local/board?label=");
    let backlog = page
        .split("class=\"column\" data-status=\"backlog\"")
        .nth(1)
        .unwrap()
        .split("</section>")
        .next()
        .unwrap();
    assert!(backlog.contains("data-count>29<"), "{backlog}");
    assert_eq!(backlog.matches("class=\"card\"").count(), 25, "{backlog}");
    let more = backlog
        .split("class=\"more\" href=\"")
        .nth(1)
        .expect("a More link")
        .split('"')
        .next()
        .unwrap()
        .replace("&amp;", "&");
    assert!(more.contains("after_backlog="), "{more}");
    let (status, next) = web.get(&more);
    assert_eq!(status, 200);
    let rest = next
        .split("class=\"column\" data-status=\"backlog\"")
        .nth(1)
        .unwrap()
        .split("</section>")
        .next()
        .unwrap();
    assert_eq!(rest.matches("class=\"card\"").count(), 4, "{rest}");
    // The other columns are read from their start: the todo column still shows API-1.
    let todo = next
        .split("class=\"column\" data-status=\"todo\"")
        .nth(1)
        .unwrap();
    assert!(todo.contains("data-ticket=\"API-1\""));
    assert!(
        !todo
            .split("</section>")
            .next()
            .unwrap()
            .contains("class=\"more\"")
    );
}

#[test]
fn one_person_holds_a_bounded_number_of_live_streams() {
    let project = project_with_tickets();
    let web = LocalWeb::start(&project);
    let open: Vec<_> = (0..jility_web::live::MAX_STREAMS_PER_PERSON)
        .map(|_| {
            let r = web.client.get(web.url("/w/local/events")).send().unwrap();
            assert_eq!(r.status().as_u16(), 200);
            r
        })
        .collect();
    let refused = web.client.get(web.url("/w/local/events")).send().unwrap();
    assert_eq!(refused.status().as_u16(), 429);
    assert_eq!(refused.headers()["retry-after"], "30");
    let err: serde_json::Value = refused.json().unwrap();
    assert_eq!(err["error"]["code"], "rate_limited", "{err}");
    assert_eq!(err["error"]["retryable"], true, "{err}");
    // A closed tab frees its place.
    drop(open);
    let again = (0..50).find_map(|_| {
        let r = web.client.get(web.url("/w/local/events")).send().unwrap();
        if r.status().as_u16() == 200 {
            Some(r)
        } else {
            std::thread::sleep(std::time::Duration::from_millis(50));
            None
        }
    });
    assert!(
        again.is_some(),
        "a stream is served again after the others closed"
    );
}
