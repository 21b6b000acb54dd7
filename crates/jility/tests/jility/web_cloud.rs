//! The web board of `jility serve` through the built binary, on a fresh PostgreSQL database
//! per test, as a browser without script would use it (forms, cookies, redirects by hand):
//! sign-in and its cookie, one answer for a wrong password and an unknown email, a
//! person's change recorded under their name, isolation between workspaces (pages,
//! fragments, forms, settings, live streams), a viewer's refused changes, CSRF, sign-out,
//! invite and reset links, and tokens minted on the settings page.
//!
//! People and workspaces are made with `jility admin`, as an operator would.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stderr
)]

use std::io::{BufRead, BufReader};
use std::sync::mpsc;
use std::time::Duration;

use reqwest::blocking::Client;
use serde_json::Value;

use crate::browser;
use crate::cloud;
use crate::pg;

use browser::{Browser, PASSWORD, admin, api, hidden, person, readonly_input, workspace};
use cloud::Server;
use pg::TestDb;

fn ticket(server: &Server, token: &str, title: &str) -> String {
    let (status, made) = api(
        server,
        token,
        reqwest::Method::POST,
        "/tickets",
        Some(&serde_json::json!({ "title": title }).to_string()),
    );
    assert_eq!(status, 201, "{made}");
    made["ticket"]["number"].as_str().unwrap().to_string()
}

fn status_of(server: &Server, token: &str, number: &str) -> Value {
    let (status, detail) = api(
        server,
        token,
        reqwest::Method::GET,
        &format!("/tickets/{number}"),
        None,
    );
    assert_eq!(status, 200, "{detail}");
    detail
}

#[test]
fn sign_in_then_a_change_recorded_under_the_person_then_sign_out() {
    let db = TestDb::new();
    let token = workspace(&db, "acme");
    person(&db, "ada@example.com", "Ada Lovelace", "acme", "member");
    person(&db, "val@example.com", "Val", "acme", "viewer");
    let server = Server::start(&db, &[]);
    let number = ticket(&server, &token, "Ship it");

    // Not signed in: to the sign-in page, `next` kept.
    let mut ada = Browser::new(&server);
    let answer = ada
        .client
        .get(format!("{}/w/acme/board", ada.base))
        .send()
        .unwrap();
    assert_eq!(answer.status().as_u16(), 303);
    let to = answer.headers()["location"].to_str().unwrap();
    assert!(to.starts_with("/login?next="), "{to}");

    // Other paths: a person's 404 page (with the security headers); under /api/ the API's.
    let missing = ada
        .client
        .get(format!("{}/favicon.ico", ada.base))
        .send()
        .unwrap();
    assert_eq!(missing.status().as_u16(), 404);
    assert!(missing.headers().contains_key("content-security-policy"));
    assert!(missing.text().unwrap().contains("<html"));
    let api_missing = ada
        .client
        .get(format!("{}/api/nothing", ada.base))
        .send()
        .unwrap();
    assert_eq!(api_missing.status().as_u16(), 401, "the API's guard first");

    // The sign-in page sets the double-submit cookie: Strict, HttpOnly.
    let page = ada
        .client
        .get(format!("{}/login", ada.base))
        .send()
        .unwrap();
    let set = page.headers()["set-cookie"].to_str().unwrap().to_string();
    assert!(
        set.starts_with("jility_csrf=")
            && set.contains("HttpOnly")
            && set.contains("SameSite=Strict"),
        "{set}"
    );

    // A wrong password and an unknown email: the same answer.
    let wrong = ada.sign_in("ada@example.com", "not the password");
    let wrong_status = wrong.status().as_u16();
    let wrong_text = wrong.text().unwrap();
    let unknown = ada.sign_in("nobody@example.com", "not the password");
    assert_eq!(wrong_status, 401);
    assert_eq!(unknown.status().as_u16(), wrong_status);
    let unknown_text = unknown.text().unwrap();
    let notice = |page: &str| {
        page[page.find("notice error").unwrap()..]
            .split("</div>")
            .next()
            .unwrap()
            .to_string()
    };
    assert_eq!(notice(&wrong_text), notice(&unknown_text));
    assert!(
        !wrong_text.contains("not the password"),
        "the password is not shown back"
    );

    // Too many failures for one email: refused before any password check, with Retry-After.
    let mut last = None;
    for _ in 0..=jility_cloud::accounts::ACCOUNT_FAILURES {
        last = Some(ada.sign_in("mallory@example.com", "guess guess guess"));
    }
    let limited = last.unwrap();
    assert_eq!(limited.status().as_u16(), 429);
    assert!(limited.headers().contains_key("retry-after"));

    // Signed in: the session cookie is HttpOnly, SameSite=Lax, for the whole site.
    let answer = ada.sign_in("ada@example.com", PASSWORD);
    assert_eq!(answer.status().as_u16(), 303);
    let cookie = answer
        .headers()
        .get_all("set-cookie")
        .iter()
        .map(|v| v.to_str().unwrap().to_string())
        .find(|c| c.starts_with("jility_session="))
        .expect("a session cookie");
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Lax") && cookie.contains("Path=/"),
        "{cookie}"
    );
    assert!(!cookie.contains("Secure"), "no TLS here: {cookie}");
    let (status, home) = ada.get("/");
    assert_eq!(status, 303, "{home}");
    let (status, board) = ada.get("/w/acme/board");
    assert_eq!(status, 200);
    assert!(
        board.contains("Ada Lovelace"),
        "the display name in the header"
    );
    assert!(board.contains(&format!("data-ticket=\"{number}\"")));

    // CSRF: without the token, or from another origin, nothing changes.
    let path = format!("/w/acme/tickets/{number}/status");
    let csrf = ada.csrf("acme");
    let bare = ada.post(&path, &[("status", "in_progress")]);
    assert_eq!(bare.status().as_u16(), 403);
    let foreign = ada.post_from(
        &path,
        &[("_csrf", &csrf), ("status", "in_progress")],
        Some("http://evil.example"),
    );
    assert_eq!(foreign.status().as_u16(), 403);
    assert_eq!(
        status_of(&server, &token, &number)["ticket"]["status"],
        "backlog"
    );

    // A person's move is recorded under their name, and audited as theirs.
    let moved = ada.post(&path, &[("_csrf", &csrf), ("status", "in_progress")]);
    assert_eq!(moved.status().as_u16(), 303);
    let detail = status_of(&server, &token, &number);
    assert_eq!(detail["ticket"]["status"], "in_progress");
    assert_eq!(detail["ticket"]["updated_by"], "ada@example.com");
    let (_, audit) = api(&server, &token, reqwest::Method::GET, "/audit", None);
    let entry = &audit["entries"][0];
    assert_eq!(entry["actor"], "ada@example.com", "{audit}");
    assert!(
        entry["token_id"].is_null(),
        "a person holds no token: {entry}"
    );

    // A viewer's change is refused and changes nothing.
    let mut val = Browser::signed_in(&server, "val@example.com");
    let csrf_val = val.csrf("acme");
    let refused = val.post(&path, &[("_csrf", &csrf_val), ("status", "done")]);
    assert_eq!(refused.status().as_u16(), 403);
    let refused = val.post(
        &format!("/w/acme/tickets/{number}/comments"),
        &[("_csrf", &csrf_val), ("content", "hi")],
    );
    assert_eq!(refused.status().as_u16(), 403);
    let detail = status_of(&server, &token, &number);
    assert_eq!(detail["ticket"]["status"], "in_progress");
    assert_eq!(detail["comment_count"], 0);
    // Nor does a viewer (or a member) open the settings.
    assert_eq!(val.get("/w/acme/settings").0, 403);
    assert_eq!(ada.get("/w/acme/settings/tokens").0, 403);

    // Sign-out needs the session's token, then ends the session (and its live streams).
    let kept = ada.cookies.clone();
    assert_eq!(ada.post("/logout", &[]).status().as_u16(), 403);
    let (status, stream) = events(&ada, "/w/acme/events");
    assert_eq!(status, 200);
    assert_eq!(
        stream.recv_timeout(Duration::from_secs(10)).unwrap(),
        "event: ready"
    );
    let out = ada.post("/logout", &[("_csrf", &csrf)]);
    assert_eq!(out.status().as_u16(), 303);
    assert!(
        ends_within(&stream, Duration::from_secs(10)),
        "the live stream ended"
    );
    assert!(!ada.cookies.contains_key("jility_session"));
    ada.cookies = kept; // the old cookie no longer signs anyone in
    assert_eq!(ada.get("/w/acme/board").0, 303);
}

/// Lines of a server-sent event stream, read on a thread.
fn events(browser: &Browser, path: &str) -> (u16, mpsc::Receiver<String>) {
    let response = Client::builder()
        .build()
        .unwrap()
        .get(format!("{}{path}", browser.base))
        .header("cookie", browser.cookie_header())
        .send()
        .unwrap();
    let status = response.status().as_u16();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(response).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    (status, rx)
}

/// Whether the stream closes within `wait`.
fn ends_within(rx: &mpsc::Receiver<String>, wait: Duration) -> bool {
    let deadline = std::time::Instant::now() + wait;
    while let Some(left) = deadline.checked_duration_since(std::time::Instant::now()) {
        match rx.recv_timeout(left) {
            Ok(_) => continue,
            Err(mpsc::RecvTimeoutError::Disconnected) => return true,
            Err(mpsc::RecvTimeoutError::Timeout) => return false,
        }
    }
    false
}

/// The `data:` lines of `change` events received within `wait`.
fn changes_within(rx: &mpsc::Receiver<String>, wait: Duration) -> Vec<String> {
    let deadline = std::time::Instant::now() + wait;
    let mut seen = Vec::new();
    let mut in_change = false;
    while let Some(left) = deadline.checked_duration_since(std::time::Instant::now()) {
        match rx.recv_timeout(left) {
            Ok(line) => {
                if line == "event: change" {
                    in_change = true;
                } else if let Some(data) = line.strip_prefix("data: ").filter(|_| in_change) {
                    seen.push(data.to_string());
                    in_change = false;
                }
            }
            Err(_) => break,
        }
    }
    seen
}

#[test]
fn a_member_of_b_sees_and_changes_nothing_of_a() {
    let db = TestDb::new();
    let token_a = workspace(&db, "alpha");
    let token_b = workspace(&db, "bravo");
    person(&db, "ann@example.com", "Ann", "alpha", "owner");
    person(&db, "bea@example.com", "Bea", "bravo", "owner");
    let server = Server::start(&db, &[]);
    let number = ticket(&server, &token_a, "Secret plan");
    let (status, made) = api(
        &server,
        &token_a,
        reqwest::Method::POST,
        "/tickets",
        Some(&serde_json::json!({"title": "Secret epic", "kind": "epic"}).to_string()),
    );
    assert_eq!(status, 201, "{made}");
    let epic = made["ticket"]["number"].as_str().unwrap().to_string();
    let (status, made) = api(
        &server,
        &token_a,
        reqwest::Method::POST,
        "/sprints",
        Some(
            &serde_json::json!({"name": "Secret sprint", "starts_on": "2026-12-07", "ends_on": "2026-12-18"})
                .to_string(),
        ),
    );
    assert_eq!(status, 201, "{made}");
    let mut bea = Browser::signed_in(&server, "bea@example.com");
    let csrf = bea.csrf("bravo");
    // B's own epics page shows none of A's.
    let (status, own) = bea.get("/w/bravo/epics");
    assert_eq!(status, 200, "{own}");
    assert!(
        !own.contains("Secret epic") && own.contains("No epics yet"),
        "{own}"
    );
    let (status, own) = bea.get("/w/bravo/sprints");
    assert_eq!(status, 200, "{own}");
    assert!(
        !own.contains("Secret sprint") && own.contains("No sprints yet"),
        "{own}"
    );
    let (status, own) = bea.get("/w/bravo/sprints/1");
    assert_eq!(status, 404, "B has no sprint 1: {own}");
    // B's likely duplicates of A's title come from B's tickets only.
    let (status, own) = bea.get_with(
        "/w/bravo/related?title=Secret%20plan%20secret",
        &[("accept", "application/json")],
    );
    assert_eq!(status, 200, "{own}");
    let own: serde_json::Value = serde_json::from_str(&own).unwrap();
    assert_eq!(own["related"], serde_json::json!([]), "{own}");

    // Every page, fragment and settings page of A: the 404 of a workspace that does not exist.
    let (_, nowhere) = bea.get("/w/nowhere/board");
    for path in [
        "/w/alpha/board".to_string(),
        format!("/w/alpha/tickets/{number}"),
        "/w/alpha/list".to_string(),
        "/w/alpha/epics".to_string(),
        format!("/w/alpha/epics/{epic}"),
        "/w/alpha/sprints".to_string(),
        "/w/alpha/sprints/1".to_string(),
        "/w/alpha/sprints/Secret%20sprint".to_string(),
        "/w/alpha/plan".to_string(),
        "/w/alpha/plan?sprint=1&propose=1".to_string(),
        "/w/alpha/related?title=Secret%20plan".to_string(),
        "/w/alpha/settings".to_string(),
        "/w/alpha/settings/tokens".to_string(),
        "/w/alpha/settings/audit".to_string(),
    ] {
        let (status, page) = bea.get(&path);
        assert_eq!(status, 404, "{path}: {page}");
        assert_eq!(
            page, nowhere,
            "{path} answers as a workspace that does not exist"
        );
        assert!(
            !page.contains("Secret plan")
                && !page.contains("Secret epic")
                && !page.contains("Secret sprint")
        );
    }
    let (status, fragment) = bea.get_with(
        &format!("/w/alpha/tickets/{number}"),
        &[("x-fragment", "1")],
    );
    assert_eq!(status, 404);
    assert!(!fragment.contains("Secret plan"));
    let (status, _) = events(&bea, "/w/alpha/events");
    assert_eq!(status, 404);

    // Every form of A, with B's valid token and this origin: 404, and nothing changes.
    let forms: Vec<(String, Vec<(&str, &str)>)> = vec![
        (
            format!("/w/alpha/tickets/{number}/status"),
            vec![("status", "done")],
        ),
        (
            format!("/w/alpha/tickets/{number}/comments"),
            vec![("content", "mine now")],
        ),
        (
            format!("/w/alpha/tickets/{number}/tasks"),
            vec![("task", "0"), ("done", "false")],
        ),
        (
            format!("/w/alpha/tickets/{number}/description"),
            vec![("operation", "replace_all"), ("content", "gone")],
        ),
        (
            format!("/w/alpha/tickets/{number}/fields"),
            vec![("title", "taken")],
        ),
        (
            "/w/alpha/sprints/1/tickets".to_string(),
            vec![("ticket", number.as_str())],
        ),
        (
            "/w/alpha/sprints/Secret%20sprint/remove".to_string(),
            vec![("ticket", number.as_str())],
        ),
        (
            format!("/w/alpha/tickets/{number}/dependencies"),
            vec![("depends_on", "TASK-1")],
        ),
        (
            format!("/w/alpha/tickets/{number}/dependencies/remove"),
            vec![("depends_on", "TASK-1")],
        ),
        (
            format!("/w/alpha/tickets/{number}/revert"),
            vec![("version", "1")],
        ),
        ("/w/alpha/tickets".to_string(), vec![("title", "planted")]),
        (
            "/w/alpha/tickets/batch".to_string(),
            vec![("lines", "planted")],
        ),
        (
            "/w/alpha/tickets/from-template".to_string(),
            vec![("template", "bug")],
        ),
        (
            "/w/alpha/settings/members".to_string(),
            vec![("user", "1"), ("action", "remove")],
        ),
        (
            "/w/alpha/settings/invites".to_string(),
            vec![("role", "owner")],
        ),
        (
            "/w/alpha/settings/invites/revoke".to_string(),
            vec![("invite", "1")],
        ),
        (
            "/w/alpha/settings/tokens".to_string(),
            vec![("name", "mine"), ("scope", "full_access")],
        ),
        (
            "/w/alpha/settings/tokens/revoke".to_string(),
            vec![("token", "1")],
        ),
    ];
    // (A route another page adds later answers as for a workspace that does not exist
    // too: what matters is that A's answer is nowhere's.)
    for (path, fields) in &forms {
        let mut all = fields.clone();
        all.push(("_csrf", &csrf));
        let answer = bea.post(path, &all).status().as_u16();
        let nowhere = bea
            .post(&path.replacen("/w/alpha/", "/w/nowhere/", 1), &all)
            .status()
            .as_u16();
        assert_eq!(answer, nowhere, "{path}");
        assert!(answer == 404 || answer == 405, "{path}: {answer}");
    }
    let detail = status_of(&server, &token_a, &number);
    assert_eq!(detail["ticket"]["status"], "backlog");
    assert_eq!(detail["ticket"]["title"], "Secret plan");
    assert_eq!(detail["comment_count"], 0);
    let (_, listed) = api(&server, &token_a, reqwest::Method::GET, "/tickets", None);
    assert_eq!(
        listed["tickets"].as_array().unwrap().len(),
        2,
        "A's ticket and epic only: {listed}"
    );
    let (_, tokens) = api(&server, &token_a, reqwest::Method::GET, "/tokens", None);
    assert_eq!(tokens["tokens"].as_array().unwrap().len(), 1, "{tokens}");

    // B's own live stream hears B's changes, never A's.
    let (status, stream) = events(&bea, "/w/bravo/events");
    assert_eq!(status, 200);
    let ready = stream.recv_timeout(Duration::from_secs(10)).unwrap();
    assert_eq!(ready, "event: ready");
    ticket(&server, &token_a, "Another secret");
    assert!(
        changes_within(&stream, Duration::from_secs(2)).is_empty(),
        "A's change reached B"
    );
    ticket(&server, &token_b, "Bravo's own");
    let heard = changes_within(&stream, Duration::from_secs(5));
    assert_eq!(heard.len(), 1, "{heard:?}");
    assert!(
        heard[0].contains("TASK-1") && !heard[0].contains("Secret"),
        "{heard:?}"
    );
}

#[test]
fn invite_and_reset_links_work_once() {
    let db = TestDb::new();
    let _token = workspace(&db, "acme");
    person(&db, "own@example.com", "Owner", "acme", "owner");
    let server = Server::start(&db, &[]);
    let mut owner = Browser::signed_in(&server, "own@example.com");

    // The settings page makes an invite link, shown once.
    let csrf = owner.csrf("acme");
    let made = owner.post(
        "/w/acme/settings/invites",
        &[("_csrf", &csrf), ("role", "member")],
    );
    assert_eq!(made.status().as_u16(), 201);
    let page = made.text().unwrap();
    assert!(page.contains("data-page=\"settings\""));
    let link = readonly_input(&page, "invite-link");
    let path = link
        .strip_prefix(&server.root().to_string())
        .expect("a link to this server")
        .to_string();
    assert!(path.starts_with("/invite/"), "{link}");
    let (_, again) = owner.get("/w/acme/settings");
    assert!(!again.contains(&path), "the link is shown only once");

    // A new person signs up through it (double-submit token), and is signed in.
    let mut newbie = Browser::new(&server);
    let (status, form) = newbie.get(&path);
    assert_eq!(status, 200);
    assert!(form.contains("Join acme as member"), "{form}");
    let csrf_new = hidden(&form, "_csrf");
    let fields = [
        ("_csrf", csrf_new.as_str()),
        ("name", "Newbie"),
        ("email", "new@example.com"),
        ("password", PASSWORD),
    ];
    // Without the cookie's twin, refused.
    let forged = newbie.post(
        &path,
        &[
            ("_csrf", "x"),
            ("name", "N"),
            ("email", "n@example.com"),
            ("password", PASSWORD),
        ],
    );
    assert_eq!(forged.status().as_u16(), 403);
    let joined = newbie.post(&path, &fields);
    assert_eq!(joined.status().as_u16(), 303);
    assert_eq!(joined.headers()["location"], "/w/acme/board");
    assert_eq!(newbie.get("/w/acme/board").0, 200);
    // Used once: a second use is refused.
    let mut other = Browser::new(&server);
    let (status, _) = other.get(&path);
    assert_eq!(status, 404);
    let again = other.post(&path, &fields);
    assert_eq!(again.status().as_u16(), 404);

    // A signed-in person of another workspace joins with one button.
    let _other = workspace(&db, "other");
    person(&db, "ext@example.com", "Ext", "other", "member");
    let made = owner.post(
        "/w/acme/settings/invites",
        &[("_csrf", &csrf), ("role", "viewer")],
    );
    let link = readonly_input(&made.text().unwrap(), "invite-link");
    let path = link.strip_prefix(server.root()).unwrap().to_string();
    let mut ext = Browser::signed_in(&server, "ext@example.com");
    let (status, form) = ext.get(&path);
    assert_eq!(status, 200);
    assert!(form.contains("Join acme as viewer"), "{form}");
    let token = hidden(&form, "_csrf");
    let joined = ext.post(&path, &[("_csrf", &token)]);
    assert_eq!(joined.status().as_u16(), 303);
    let (status, board) = ext.get("/w/acme/board");
    assert_eq!(status, 200);
    assert!(board.contains("/w/other/board"), "the workspace switcher");
    assert!(!board.contains("New ticket"), "a viewer makes no tickets");

    // A reset link (issued by the operator) sets a password once and ends old sessions.
    let reset = admin(&db, &["reset-password", "--email", "new@example.com"], None);
    let reset_path = reset.to_string();
    let reset_path = reset_path[reset_path.find("/reset/").expect("a reset path")..]
        .split('"')
        .next()
        .unwrap()
        .to_string();
    let mut visitor = Browser::new(&server);
    let (status, form) = visitor.get(&reset_path);
    assert_eq!(status, 200, "{form}");
    let csrf_reset = hidden(&form, "_csrf");
    let differ = visitor.post(
        &reset_path,
        &[
            ("_csrf", &csrf_reset),
            ("password", "a new long password"),
            ("confirm", "another one!!"),
        ],
    );
    assert_eq!(differ.status().as_u16(), 400);
    let set = visitor.post(
        &reset_path,
        &[
            ("_csrf", &csrf_reset),
            ("password", "a new long password"),
            ("confirm", "a new long password"),
        ],
    );
    assert_eq!(set.status().as_u16(), 303);
    assert_eq!(newbie.get("/w/acme/board").0, 303, "the old session ended");
    let reused = visitor.post(
        &reset_path,
        &[
            ("_csrf", &csrf_reset),
            ("password", "yet another password"),
            ("confirm", "yet another password"),
        ],
    );
    assert_eq!(reused.status().as_u16(), 404);
    assert_eq!(
        newbie
            .sign_in("new@example.com", PASSWORD)
            .status()
            .as_u16(),
        401
    );
    assert_eq!(
        newbie
            .sign_in("new@example.com", "a new long password")
            .status()
            .as_u16(),
        303
    );
}

#[test]
fn a_token_minted_on_the_settings_page_works_until_revoked() {
    let db = TestDb::new();
    let _token = workspace(&db, "acme");
    person(&db, "own@example.com", "Owner", "acme", "admin");
    let server = Server::start(&db, &[]);
    let mut owner = Browser::signed_in(&server, "own@example.com");
    let csrf = owner.csrf("acme");
    let made = owner.post(
        "/w/acme/settings/tokens",
        &[
            ("_csrf", &csrf),
            ("name", "ci-bot"),
            ("scope", "tickets:read"),
            ("scope", "tickets:write"),
            ("expires_in_days", "30"),
        ],
    );
    assert_eq!(made.status().as_u16(), 201);
    let page = made.text().unwrap();
    let token = readonly_input(&page, "new-token");
    assert!(token.starts_with("jil_live_"), "{token}");

    // It works at the API and at /mcp's REST twin, with its scopes only.
    let (status, listed) = api(&server, &token, reqwest::Method::GET, "/tickets", None);
    assert_eq!(status, 200, "{listed}");
    let (status, _) = api(&server, &token, reqwest::Method::GET, "/tokens", None);
    assert_eq!(status, 403, "no full_access");
    // Listed with who minted it, never the token itself.
    let (_, listing) = owner.get("/w/acme/settings/tokens");
    assert!(listing.contains("ci-bot") && listing.contains("own@example.com"));
    assert!(!listing.contains(&token));
    let id = hidden(
        &listing[listing
            .find("data-token=\"2\"")
            .expect("the new token's row")..],
        "token",
    );

    // Revoked on the page: refused from then on; both recorded as the person's.
    let revoked = owner.post(
        "/w/acme/settings/tokens/revoke",
        &[("_csrf", &csrf), ("token", &id)],
    );
    assert_eq!(revoked.status().as_u16(), 303);
    let (status, _) = api(&server, &token, reqwest::Method::GET, "/tickets", None);
    assert_eq!(status, 401);
    let (status, audit) = owner.get("/w/acme/settings/audit");
    assert_eq!(status, 200);
    assert!(
        audit.contains("tokens.create") && audit.contains("tokens.revoke"),
        "{audit}"
    );
    assert!(audit.contains("own@example.com"));
}

#[test]
fn a_persons_writes_are_rate_limited_as_a_tokens_requests() {
    let db = TestDb::new();
    let token = workspace(&db, "acme");
    person(&db, "ada@example.com", "Ada", "acme", "member");
    let server = Server::start(&db, &["--rate-limit", "3"]);
    let number = ticket(&server, &token, "Chatty");
    let mut ada = Browser::signed_in(&server, "ada@example.com");
    let csrf = ada.csrf("acme");
    let path = format!("/w/acme/tickets/{number}/comments");
    for n in 0..3 {
        let answer = ada.post(
            &path,
            &[("_csrf", &csrf), ("content", &format!("note {n}"))],
        );
        assert_eq!(answer.status().as_u16(), 303, "write {n}");
    }
    // Reads are not counted.
    assert_eq!(ada.get(&format!("/w/acme/tickets/{number}")).0, 200);
    let limited = ada.post(&path, &[("_csrf", &csrf), ("content", "one too many")]);
    assert_eq!(limited.status().as_u16(), 429);
    assert!(limited.headers().contains_key("retry-after"));
    assert_eq!(status_of(&server, &token, &number)["comment_count"], 3);
}
