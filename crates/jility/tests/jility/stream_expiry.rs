//! Streams end with their credential, through the built binary: `GET /api/v1/events` and an
//! MCP session's `GET /mcp` stream end at their token's expiry (an API token's, an OAuth
//! access token's got through a real sign-in), at its revocation, and when the person who
//! approved an OAuth token is demoted below its scopes or removed; a person's live page
//! stream (`GET /w/{ws}/events`) ends at its session's expiry, at a change of their role
//! and at their removal. And a REST `403` for a scope the token lacks carries the
//! `insufficient_scope` challenge.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stderr
)]

use std::io::{BufRead as _, BufReader};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::Utc;
use jility_cloud::auth::{NewToken, ScopeSet, Tokens};
use reqwest::blocking::{Client, RequestBuilder};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::browser::{self, Browser, hidden, person, workspace};
use crate::cloud::{self, Server};
use crate::pg::TestDb;

/// How late after its credential lapses a stream may still end (a timer's and a
/// connection's slack; the revocation events and the re-read every 5 s are well inside).
const SLACK: Duration = Duration::from_secs(3);

/// An open server-sent event stream: its lines, read on a thread, then when it ended.
struct Stream {
    lines: mpsc::Receiver<Read>,
}

/// What the reading thread saw.
enum Read {
    Line(String),
    /// The stream ended (then).
    End(Instant),
}

impl Stream {
    /// Send `request` (no overall timeout) and expect an event stream.
    fn open(request: RequestBuilder) -> Self {
        let response = request.send().unwrap();
        let status = response.status().as_u16();
        let kind = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string();
        assert_eq!(status, 200, "{}", response.text().unwrap_or_default());
        assert!(kind.starts_with("text/event-stream"), "{kind}");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(response).lines() {
                let Ok(line) = line else { break };
                if tx.send(Read::Line(line)).is_err() {
                    return;
                }
            }
            let _ = tx.send(Read::End(Instant::now()));
        });
        Self { lines }
    }

    /// Wait for the line `want` (within 10 s).
    fn expect(&self, want: &str) {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(Read::Line(line)) if line == want => return,
                Ok(Read::Line(_)) => {}
                Ok(Read::End(_)) => panic!("the stream ended before `{want}`"),
                Err(err) => panic!("no `{want}` on the stream: {err}"),
            }
        }
    }

    /// When the stream ended, if it does within `wait`; the lines that came before.
    fn end_within(&self, wait: Duration) -> (Option<Instant>, Vec<String>) {
        let deadline = Instant::now() + wait;
        let mut seen = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(Read::Line(line)) => seen.push(line),
                Ok(Read::End(at)) => return (Some(at), seen),
                Err(_) => return (None, seen),
            }
        }
    }

    /// The stream ends within `wait`.
    fn ends_within(&self, wait: Duration, what: &str) -> Instant {
        let (ended, seen) = self.end_within(wait);
        ended.unwrap_or_else(|| {
            panic!("{what}: the stream is still open after {wait:?}; it sent {seen:?}")
        })
    }

    /// The stream is still open after `wait`.
    fn stays_open(&self, wait: Duration, what: &str) {
        let (ended, seen) = self.end_within(wait);
        assert!(
            ended.is_none(),
            "{what}: the stream ended; it sent {seen:?}"
        );
    }
}

fn streaming() -> Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    Client::builder().timeout(None).build().unwrap()
}

/// `GET /api/v1/events` with `token`, once `ready`.
fn api_events(server: &Server, token: &str) -> Stream {
    let stream = Stream::open(
        streaming()
            .get(format!("{}/events", server.url))
            .bearer_auth(token)
            .header("accept", "text/event-stream"),
    );
    stream.expect("event: ready");
    stream
}

/// An MCP session opened with `token` (initialized), and its standalone `GET /mcp` stream.
fn mcp_stream(server: &Server, token: &str) -> Stream {
    let url = format!("{}/mcp", server.root());
    let http = cloud::client();
    let opened = http
        .post(&url)
        .bearer_auth(token)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "stream-test", "version": "1.0"}}})
            .to_string(),
        )
        .send()
        .unwrap();
    assert_eq!(opened.status().as_u16(), 200);
    let session = opened.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_string();
    let _ = opened.text().unwrap();
    let initialized = http
        .post(&url)
        .bearer_auth(token)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-protocol-version", "2025-06-18")
        .header("mcp-session-id", &session)
        .body(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string())
        .send()
        .unwrap();
    assert_eq!(initialized.status().as_u16(), 202);
    Stream::open(
        streaming()
            .get(&url)
            .bearer_auth(token)
            .header("accept", "text/event-stream")
            .header("mcp-protocol-version", "2025-06-18")
            .header("mcp-session-id", &session),
    )
}

/// A token of `workspace` with `scopes` that expires `secs` from now, and when.
fn expiring_token(db: &TestDb, workspace: &str, scopes: &str, secs: i64) -> (String, i64, Instant) {
    let pool = db.connect();
    let tokens = Tokens::new(&pool);
    let id: i64 = db
        .client()
        .query_one("SELECT id FROM workspaces WHERE name = $1", &[&workspace])
        .unwrap()
        .get(0);
    let expires_at = Utc::now() + chrono::TimeDelta::seconds(secs);
    let minted = tokens
        .create(
            id,
            &NewToken {
                name: format!("short-{secs}"),
                scopes: ScopeSet::parse(scopes).unwrap(),
                expires_at: Some(expires_at),
                created_by: "tester".to_string(),
            },
        )
        .unwrap();
    let left = (expires_at - Utc::now()).to_std().unwrap();
    (
        minted.token.expose().to_string(),
        minted.record.id,
        Instant::now() + left,
    )
}

/// `stream` ends at `at` (not before it, at most [`SLACK`] after).
fn ends_at(stream: &Stream, at: Instant, what: &str) {
    let wait = at.saturating_duration_since(Instant::now()) + SLACK + Duration::from_secs(2);
    let ended = stream.ends_within(wait, what);
    assert!(
        ended + Duration::from_millis(100) >= at,
        "{what}: ended {:?} before the expiry",
        at - ended
    );
    // What the report of a run shows: how late after the expiry it ended.
    eprintln!(
        "{what}: ended {:?} after the expiry",
        ended.saturating_duration_since(at)
    );
    assert!(
        ended <= at + SLACK,
        "{what}: ended {:?} after the expiry",
        ended - at
    );
}

fn answer(request: RequestBuilder) -> (u16, String) {
    let response = request.send().unwrap();
    (response.status().as_u16(), response.text().unwrap())
}

// ---------------------------------------------------------------------------------------
// OAuth: a client registered, a person signing in and approving, the code exchanged.

const REDIRECT: &str = "http://127.0.0.1:47013/callback";

/// An OAuth access token for `email` in `workspace` with `grant`: through registration, the
/// person's sign-in and consent, and the code's exchange with PKCE.
fn oauth_token(server: &Server, email: &str, workspace: &str, grant: &[&str]) -> String {
    let base = server.root().to_string();
    let http = cloud::client();
    let registered: Value = http
        .post(format!("{base}/oauth/register"))
        .json(&json!({"redirect_uris": [REDIRECT], "client_name": "Stream Agent"}))
        .send()
        .unwrap()
        .json()
        .unwrap();
    let client_id = registered["client_id"].as_str().unwrap().to_string();
    let verifier = format!("v{}", "erifier-".repeat(8));
    let challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
    let scope = grant.join(" ");
    let resource = format!("{base}/mcp");
    let params: Vec<(&str, &str)> = vec![
        ("response_type", "code"),
        ("client_id", &client_id),
        ("redirect_uri", REDIRECT),
        ("state", "st"),
        ("code_challenge", &challenge),
        ("code_challenge_method", "S256"),
        ("scope", &scope),
        ("resource", &resource),
        ("workspace", workspace),
    ];
    let query = form_urlencoded::Serializer::new(String::new())
        .extend_pairs(&params)
        .finish();
    let mut person = Browser::signed_in(server, email);
    let (status, page) = person.get(&format!("/oauth/authorize?{query}"));
    assert_eq!(status, 200, "{page}");
    let csrf = hidden(&page, "_csrf");
    let mut fields = params.clone();
    fields.push(("_csrf", &csrf));
    fields.push(("decision", "approve"));
    for scope in grant {
        fields.push(("grant", scope));
    }
    let decided = person.post("/oauth/authorize", &fields);
    assert_eq!(decided.status().as_u16(), 303);
    let to = decided.headers()["location"].to_str().unwrap().to_string();
    let code = url::Url::parse(&to)
        .unwrap()
        .query_pairs()
        .find(|(k, _)| k == "code")
        .map(|(_, v)| v.into_owned())
        .unwrap_or_else(|| panic!("no code in {to}"));
    let exchanged: Value = http
        .post(format!("{base}/oauth/token"))
        .form(&[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("client_id", &client_id),
            ("redirect_uri", REDIRECT),
            ("code_verifier", &verifier),
        ])
        .send()
        .unwrap()
        .json()
        .unwrap();
    exchanged["access_token"]
        .as_str()
        .unwrap_or_else(|| panic!("no access token: {exchanged}"))
        .to_string()
}

fn user_id(db: &TestDb, email: &str) -> i64 {
    db.client()
        .query_one("SELECT id FROM users WHERE email = $1", &[&email])
        .unwrap()
        .get(0)
}

/// The owner `owner` removes `email` from `workspace` on the settings page.
fn remove(owner: &mut Browser, db: &TestDb, workspace: &str, email: &str) {
    let csrf = owner.csrf(workspace);
    let user = user_id(db, email).to_string();
    let removed = owner.post(
        &format!("/w/{workspace}/settings/members"),
        &[("_csrf", &csrf), ("user", &user), ("action", "remove")],
    );
    assert!(
        removed.status().is_success() || removed.status().is_redirection(),
        "{}",
        removed.status()
    );
}

// ---------------------------------------------------------------------------------------

#[test]
fn an_api_tokens_streams_end_at_its_expiry() {
    let db = TestDb::new();
    let bootstrap = workspace(&db, "acme");
    let server = Server::start_with(
        &db,
        "127.0.0.1:0",
        &[],
        &[("JILITY_EVENTS_HEARTBEAT_SECS", "1")],
    );
    let (token, _, expires) = expiring_token(&db, "acme", "tickets:read", 5);
    let events = api_events(&server, &token);
    let mcp = mcp_stream(&server, &token);
    // Until then, both live and the events stream delivers.
    let (status, text) = answer(
        cloud::client()
            .post(format!("{}/tickets", server.url))
            .bearer_auth(&bootstrap)
            .json(&json!({"title": "before the expiry"})),
    );
    assert_eq!(status, 201, "{text}");
    events.expect("event: change");
    ends_at(&events, expires, "GET /api/v1/events");
    ends_at(&mcp, expires, "GET /mcp");
    // And the token is refused afresh.
    let (status, _) = answer(
        cloud::client()
            .get(format!("{}/events", server.url))
            .bearer_auth(&token),
    );
    assert_eq!(status, 401);
}

#[test]
fn an_oauth_access_tokens_streams_end_at_its_expiry() {
    let db = TestDb::new();
    workspace(&db, "acme");
    person(&db, "mia@example.com", "Mia", "acme", "member");
    let server = Server::start_with(
        &db,
        "127.0.0.1:0",
        &[],
        &[("JILITY_OAUTH_ACCESS_SECS", "6")],
    );
    let access = oauth_token(&server, "mia@example.com", "acme", &["tickets:read"]);
    // The token's expiry, as the server keeps it.
    let expires_at: String = db
        .client()
        .query_one(
            "SELECT expires_at FROM api_tokens WHERE oauth_grant_id IS NOT NULL",
            &[],
        )
        .unwrap()
        .get(0);
    let expires_at = chrono::DateTime::parse_from_rfc3339(&expires_at)
        .unwrap()
        .with_timezone(&Utc);
    let expires = Instant::now() + (expires_at - Utc::now()).to_std().unwrap();
    let events = api_events(&server, &access);
    let mcp = mcp_stream(&server, &access);
    ends_at(&events, expires, "GET /api/v1/events (OAuth)");
    ends_at(&mcp, expires, "GET /mcp (OAuth)");
}

#[test]
fn a_revoked_tokens_streams_end_at_once() {
    let db = TestDb::new();
    let bootstrap = workspace(&db, "acme");
    let server = Server::start(&db, &[]);
    let (token, id, _) = expiring_token(&db, "acme", "tickets:read", 3600);
    let events = api_events(&server, &token);
    let mcp = mcp_stream(&server, &token);
    let asked = Instant::now();
    let (status, text) = answer(
        cloud::client()
            .delete(format!("{}/tokens/{id}", server.url))
            .bearer_auth(&bootstrap),
    );
    assert_eq!(status, 200, "{text}");
    for (stream, what) in [(&events, "GET /api/v1/events"), (&mcp, "GET /mcp")] {
        let ended = stream.ends_within(SLACK, &format!("{what} after the revocation"));
        eprintln!(
            "{what}: ended {:?} after the revocation was asked",
            ended.saturating_duration_since(asked)
        );
    }
}

#[test]
fn an_oauth_tokens_streams_end_when_its_person_is_demoted_below_it_or_removed() {
    let db = TestDb::new();
    workspace(&db, "acme");
    person(&db, "mia@example.com", "Mia", "acme", "member");
    person(&db, "own@example.com", "Olive", "acme", "owner");
    let server = Server::start(&db, &[]);
    let writer = oauth_token(
        &server,
        "mia@example.com",
        "acme",
        &["tickets:read", "tickets:write"],
    );
    let reader = oauth_token(&server, "mia@example.com", "acme", &["tickets:read"]);
    let writer_events = api_events(&server, &writer);
    let writer_mcp = mcp_stream(&server, &writer);
    let reader_events = api_events(&server, &reader);
    let reader_mcp = mcp_stream(&server, &reader);

    // A viewer may not write: the token that could ends; the one a viewer may hold goes on.
    let asked = Instant::now();
    browser::set_role(&db, "mia@example.com", "acme", "viewer");
    for (stream, what) in [(&writer_events, "events"), (&writer_mcp, "MCP stream")] {
        let ended = stream.ends_within(
            SLACK,
            &format!("a write grant's {what}, its person demoted"),
        );
        eprintln!(
            "a write grant's {what}: ended {:?} after the demotion was asked (a CLI run)",
            ended.saturating_duration_since(asked)
        );
    }
    reader_events.stays_open(Duration::from_secs(2), "a read grant, its person a viewer");
    reader_mcp.stays_open(
        Duration::from_millis(100),
        "a read grant, its person a viewer",
    );

    // Removed from the workspace: nothing of theirs goes on.
    let mut olive = Browser::signed_in(&server, "own@example.com");
    remove(&mut olive, &db, "acme", "mia@example.com");
    reader_events.ends_within(SLACK, "a read grant's events, its person removed");
    reader_mcp.ends_within(SLACK, "a read grant's MCP stream, its person removed");
}

#[test]
fn a_change_made_behind_the_servers_back_ends_the_streams_at_the_next_reread() {
    let db = TestDb::new();
    workspace(&db, "acme");
    person(&db, "mia@example.com", "Mia", "acme", "member");
    let server = Server::start(&db, &[]);
    let (token, id, _) = expiring_token(&db, "acme", "tickets:read", 3600);
    let writer = oauth_token(
        &server,
        "mia@example.com",
        "acme",
        &["tickets:read", "tickets:write"],
    );
    let token_events = api_events(&server, &token);
    let token_mcp = mcp_stream(&server, &token);
    let writer_events = api_events(&server, &writer);
    let writer_mcp = mcp_stream(&server, &writer);
    // Written straight into the database: no event tells the server; its re-read (every
    // 5 s) finds them.
    let asked = Instant::now();
    let mut sql = db.client();
    sql.execute(
        "UPDATE api_tokens SET revoked_at = '2026-01-01T00:00:00.000Z' WHERE id = $1",
        &[&id],
    )
    .unwrap();
    sql.execute(
        "UPDATE memberships SET role = 'viewer' WHERE user_id = $1",
        &[&user_id(&db, "mia@example.com")],
    )
    .unwrap();
    let reread = Duration::from_secs(5) + SLACK;
    for (stream, what) in [
        (&token_events, "a revoked token's events"),
        (&token_mcp, "a revoked token's MCP stream"),
        (&writer_events, "a demoted person's write grant's events"),
        (&writer_mcp, "a demoted person's write grant's MCP stream"),
    ] {
        let ended = stream.ends_within(reread, what);
        eprintln!(
            "{what}: ended {:?} after the change behind the server's back",
            ended.saturating_duration_since(asked)
        );
    }
}

/// A person's live stream of `workspace`'s pages, once `ready`.
fn live(browser: &Browser, workspace: &str) -> Stream {
    let stream = Stream::open(
        streaming()
            .get(format!("{}/w/{workspace}/events", browser.base))
            .header("cookie", browser.cookie_header()),
    );
    stream.expect("event: ready");
    stream
}

#[test]
fn a_persons_live_stream_ends_at_the_sessions_expiry_a_role_change_and_a_removal() {
    let db = TestDb::new();
    workspace(&db, "acme");
    person(&db, "ada@example.com", "Ada", "acme", "member");
    person(&db, "bo@example.com", "Bo", "acme", "member");
    person(&db, "own@example.com", "Olive", "acme", "owner");
    let server = Server::start(&db, &[]);

    // A session signed in 30 days ago, ending in a few seconds.
    let ada = Browser::signed_in(&server, "ada@example.com");
    let expires_at = Utc::now() + chrono::TimeDelta::seconds(4);
    let text = expires_at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    db.client()
        .execute(
            "UPDATE web_sessions SET expires_at = $1 WHERE user_id = $2",
            &[&text, &user_id(&db, "ada@example.com")],
        )
        .unwrap();
    let expires = Instant::now() + (expires_at - Utc::now()).to_std().unwrap();
    let expiring = live(&ada, "acme");

    // A member made a viewer (by the operator): the page's stream ends; the page,
    // reconnecting, is shown with the new role.
    let bo = Browser::signed_in(&server, "bo@example.com");
    let demoted = live(&bo, "acme");
    browser::set_role(&db, "bo@example.com", "acme", "viewer");
    demoted.ends_within(SLACK, "the live stream of a person whose role changed");
    let again = live(&bo, "acme");
    again.stays_open(Duration::from_secs(1), "the viewer's new stream");

    // Removed: it ends, and no new one opens.
    let mut olive = Browser::signed_in(&server, "own@example.com");
    remove(&mut olive, &db, "acme", "bo@example.com");
    again.ends_within(SLACK, "the live stream of a person removed");
    let refused = streaming()
        .get(format!("{}/w/acme/events", bo.base))
        .header("cookie", bo.cookie_header())
        .send()
        .unwrap();
    assert_ne!(refused.status().as_u16(), 200);

    ends_at(&expiring, expires, "the live stream of an expiring session");
}

#[test]
fn a_rest_403_for_a_missing_scope_carries_the_scope_challenge() {
    let db = TestDb::new();
    workspace(&db, "acme");
    person(&db, "mia@example.com", "Mia", "acme", "member");
    let server = Server::start(&db, &[]);
    let (api_token, _, _) = expiring_token(&db, "acme", "tickets:read", 3600);
    let oauth = oauth_token(&server, "mia@example.com", "acme", &["tickets:read"]);
    for (kind, token) in [("API token", api_token.as_str()), ("OAuth", oauth.as_str())] {
        let response = cloud::client()
            .post(format!("{}/tickets", server.url))
            .bearer_auth(token)
            .json(&json!({"title": "not allowed"}))
            .send()
            .unwrap();
        assert_eq!(response.status().as_u16(), 403, "{kind}");
        let challenge = response
            .headers()
            .get("www-authenticate")
            .unwrap_or_else(|| panic!("{kind}: no challenge"))
            .to_str()
            .unwrap()
            .to_string();
        assert!(
            challenge.starts_with("Bearer ")
                && challenge.contains(r#"error="insufficient_scope""#)
                && challenge.contains(r#"scope="tickets:write""#)
                && challenge.contains(&format!(
                    r#"resource_metadata="{}/.well-known/oauth-protected-resource/mcp""#,
                    server.root()
                )),
            "{kind}: {challenge}"
        );
        let body: Value = response.json().unwrap();
        assert_eq!(body["error"]["code"], "permission_denied", "{kind}: {body}");
        assert!(
            body["error"]["message"]
                .as_str()
                .unwrap()
                .contains("tickets:write"),
            "{kind}: the envelope is unchanged: {body}"
        );
    }
    // The scope named is the one the request needed.
    let response = cloud::client()
        .get(format!("{}/tokens", server.url))
        .bearer_auth(&api_token)
        .send()
        .unwrap();
    assert_eq!(response.status().as_u16(), 403);
    let challenge = response.headers()["www-authenticate"].to_str().unwrap();
    assert!(challenge.contains(r#"scope="full_access""#), "{challenge}");
    // A refusal of another kind (a foreign page's origin, before the token) carries none.
    let response = cloud::client()
        .get(format!("{}/tickets", server.url))
        .bearer_auth(&api_token)
        .header("origin", "https://evil.example")
        .send()
        .unwrap();
    assert_eq!(response.status().as_u16(), 403);
    assert!(response.headers().get("www-authenticate").is_none());
}
