//! What a hostile person tried against `jility serve`'s web app, kept as tests (through the
//! built binary, on a fresh PostgreSQL database each): one person cannot hold the server's
//! live streams however often they sign in; what a removed or demoted member minted or
//! approved stops working; a token cannot pass for a person; another site cannot sign a
//! browser out; a member form's action must be one it knows.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stderr
)]

use crate::browser;
use crate::cloud;
use crate::pg;

use browser::{Browser, api, hidden, person, readonly_input, workspace};
use cloud::Server;
use pg::TestDb;

/// Mint a token on the settings page as `browser`: the token.
fn mint(browser: &mut Browser, workspace: &str, name: &str, scopes: &[&str]) -> String {
    let csrf = browser.csrf(workspace);
    let mut fields = vec![("_csrf", csrf.as_str()), ("name", name)];
    for scope in scopes {
        fields.push(("scope", scope));
    }
    let made = browser.post(&format!("/w/{workspace}/settings/tokens"), &fields);
    assert_eq!(made.status().as_u16(), 201);
    readonly_input(&made.text().unwrap(), "new-token")
}

/// The user id of `email` on the members page of `workspace`.
fn user_id(browser: &mut Browser, workspace: &str, email: &str) -> String {
    let (_, page) = browser.get(&format!("/w/{workspace}/settings"));
    let row = &page[page
        .find(&format!("data-member=\"{email}\""))
        .unwrap_or_else(|| panic!("{email} in {page}"))..];
    hidden(row, "user")
}

#[test]
fn one_person_holds_a_bounded_number_of_streams_however_often_they_sign_in() {
    let db = TestDb::new();
    workspace(&db, "acme");
    person(&db, "vic@example.com", "Vic", "acme", "viewer");
    person(&db, "ada@example.com", "Ada", "acme", "member");
    let server = Server::start(&db, &[]);
    let most = jility_web::live::MAX_STREAMS_PER_PERSON;
    let mut sessions: Vec<Browser> = (0..3)
        .map(|_| Browser::signed_in(&server, "vic@example.com"))
        .collect();
    let mut open = Vec::new();
    for n in 0..most {
        let browser = &mut sessions[n % 3];
        let answer = browser
            .client
            .get(format!("{}/w/acme/events", browser.base))
            .header("cookie", browser.cookie_header())
            .send()
            .unwrap();
        assert_eq!(answer.status().as_u16(), 200, "stream {n}");
        open.push(answer);
    }
    let fresh = Browser::signed_in(&server, "vic@example.com");
    let refused = fresh
        .client
        .get(format!("{}/w/acme/events", fresh.base))
        .header("cookie", fresh.cookie_header())
        .send()
        .unwrap();
    assert_eq!(
        refused.status().as_u16(),
        429,
        "a new session does not reset the count"
    );
    assert!(refused.headers().contains_key("retry-after"));
    // Another person is not held back by Vic.
    let ada = Browser::signed_in(&server, "ada@example.com");
    let theirs = ada
        .client
        .get(format!("{}/w/acme/events", ada.base))
        .header("cookie", ada.cookie_header())
        .send()
        .unwrap();
    assert_eq!(theirs.status().as_u16(), 200);
    drop(open);
}

#[test]
fn what_a_removed_or_demoted_member_minted_stops_working() {
    let db = TestDb::new();
    workspace(&db, "acme");
    person(&db, "own@example.com", "Olive", "acme", "owner");
    person(&db, "carol@example.com", "Carol", "acme", "admin");
    person(&db, "max@example.com", "Max", "acme", "member");
    let server = Server::start(&db, &[]);
    let mut carol = Browser::signed_in(&server, "carol@example.com");
    let carols = mint(&mut carol, "acme", "carol-bot", &["full_access"]);
    assert_eq!(
        api(&server, &carols, reqwest::Method::GET, "/tickets", None).0,
        200
    );
    let mut max = Browser::signed_in(&server, "max@example.com");
    let (_, page) = max.get("/w/acme/settings/tokens");
    assert!(
        page.contains("Only owners and admins"),
        "a member mints no token here"
    );
    // Max's tokens come from Olive making him an admin first, then a demotion.
    let mut olive = Browser::signed_in(&server, "own@example.com");
    let csrf = olive.csrf("acme");
    let max_id = user_id(&mut olive, "acme", "max@example.com");
    let set_role = |olive: &mut Browser, role: &str| {
        let answer = olive.post(
            "/w/acme/settings/members",
            &[
                ("_csrf", &csrf),
                ("user", &max_id),
                ("action", "role"),
                ("role", role),
            ],
        );
        assert_eq!(answer.status().as_u16(), 303, "role {role}");
    };
    set_role(&mut olive, "admin");
    let writer = mint(
        &mut max,
        "acme",
        "max-writer",
        &["tickets:read", "tickets:write"],
    );
    let reader = mint(&mut max, "acme", "max-reader", &["tickets:read"]);
    // Demoted to viewer: the token that writes is revoked, the one that reads stays.
    set_role(&mut olive, "viewer");
    assert_eq!(
        api(&server, &writer, reqwest::Method::GET, "/tickets", None).0,
        401
    );
    assert_eq!(
        api(&server, &reader, reqwest::Method::GET, "/tickets", None).0,
        200
    );
    // Carol removed: her full_access token stops at once.
    let carol_id = user_id(&mut olive, "acme", "carol@example.com");
    let removed = olive.post(
        "/w/acme/settings/members",
        &[("_csrf", &csrf), ("user", &carol_id), ("action", "remove")],
    );
    assert_eq!(removed.status().as_u16(), 303);
    let (status, body) = api(&server, &carols, reqwest::Method::GET, "/tickets", None);
    assert_eq!(status, 401, "{body}");
    let (status, _) = api(
        &server,
        &carols,
        reqwest::Method::POST,
        "/tokens",
        Some(r#"{"name":"another","scopes":["full_access"]}"#),
    );
    assert_eq!(status, 401);
    // Olive's own tokens are untouched.
    let olives = mint(&mut olive, "acme", "olive-bot", &["tickets:read"]);
    assert_eq!(
        api(&server, &olives, reqwest::Method::GET, "/tickets", None).0,
        200
    );
}

#[test]
fn a_token_cannot_pass_for_a_person_and_member_actions_are_checked() {
    let db = TestDb::new();
    workspace(&db, "acme");
    person(&db, "own@example.com", "Olive", "acme", "owner");
    person(&db, "ada@example.com", "Ada", "acme", "member");
    let server = Server::start(&db, &[]);
    let mut olive = Browser::signed_in(&server, "own@example.com");
    let csrf = olive.csrf("acme");
    let refused = olive.post(
        "/w/acme/settings/tokens",
        &[
            ("_csrf", &csrf),
            ("name", "ada@example.com"),
            ("scope", "tickets:read"),
        ],
    );
    assert_eq!(refused.status().as_u16(), 400);
    assert!(refused.text().unwrap().contains("may not contain"));
    // An action the members form does not have changes nothing.
    let ada_id = user_id(&mut olive, "acme", "ada@example.com");
    let bogus = olive.post(
        "/w/acme/settings/members",
        &[
            ("_csrf", &csrf),
            ("user", &ada_id),
            ("action", "bogus"),
            ("role", "admin"),
        ],
    );
    assert_eq!(bogus.status().as_u16(), 400);
    let (_, page) = olive.get("/w/acme/settings");
    let row = &page[page.find("data-member=\"ada@example.com\"").unwrap()..];
    let row = &row[..row.find("</tr>").unwrap()];
    assert!(
        row.contains(r#"<option value="member" selected"#),
        "Ada is still a member: {row}"
    );
}

#[test]
fn another_site_cannot_sign_a_browser_out() {
    let db = TestDb::new();
    workspace(&db, "acme");
    person(&db, "ada@example.com", "Ada", "acme", "member");
    let server = Server::start(&db, &[]);
    let ada = Browser::signed_in(&server, "ada@example.com");
    // A cross-site form: no cookie (SameSite), a foreign Origin.
    let answer = ada
        .client
        .post(format!("{}/logout", ada.base))
        .header("origin", "https://evil.example")
        .form(&[("x", "y")])
        .send()
        .unwrap();
    assert_eq!(answer.status().as_u16(), 403);
    assert!(
        answer.headers().get("set-cookie").is_none(),
        "no cookie is cleared"
    );
    let mut ada = ada;
    assert_eq!(ada.get("/w/acme/board").0, 200, "still signed in");
}
