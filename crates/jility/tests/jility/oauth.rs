//! OAuth 2.1 on `jility serve` through the built binary, as an MCP client and a person in a
//! browser without script would go through it (forms, cookies and redirects by hand), on a
//! fresh PostgreSQL database per test: discovery from the `401` at `/mcp`, dynamic
//! registration, sign-in and consent, the code exchanged with PKCE, the token used through
//! rmcp's client (`tools/list` shows only what was granted), refresh and its rotation — and
//! every refusal: no PKCE, `plain` PKCE, a wrong verifier, an unregistered redirect URI, a
//! code used twice, a token for another resource, a refresh token reused, a scope beyond the
//! person's role, a denied consent, registrations past their limit. Its helpers are shared
//! with `oauth_redirects.rs` (what the authorization endpoint sends where, the JSON
//! endpoints' refusals, one access token per grant, the token endpoint's limits).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stderr
)]

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use mcp_testkit::McpProcess;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::browser;
use crate::cloud;
use crate::pg;

use browser::{Browser, hidden, person, workspace};
use cloud::Server;
use pg::TestDb;

pub(crate) const REDIRECT: &str = "http://127.0.0.1:47011/callback";

/// A database with workspaces `acme` (Mia a member, Owen its owner, Val a viewer) and
/// `bravo` (Mia an owner), and a server.
pub(crate) fn world() -> (TestDb, Server) {
    let db = TestDb::new();
    workspace(&db, "acme");
    workspace(&db, "bravo");
    person(&db, "mia@example.com", "Mia", "acme", "member");
    person(&db, "owen@example.com", "Owen", "acme", "owner");
    person(&db, "val@example.com", "Val", "acme", "viewer");
    browser::admin(
        &db,
        &[
            "add-member",
            "--workspace",
            "bravo",
            "--email",
            "mia@example.com",
            "--role",
            "owner",
        ],
        None,
    );
    let server = Server::start(&db, &[]);
    (db, server)
}

pub(crate) fn http() -> reqwest::blocking::Client {
    cloud::client()
}

/// An MCP client's side of the flow: its registration and one PKCE pair.
pub(crate) struct App {
    pub base: String,
    pub client_id: String,
    pub verifier: String,
    pub challenge: String,
}

impl App {
    pub fn register(server: &Server) -> Self {
        Self::register_with(server, &[REDIRECT])
    }

    /// A client registered with `redirect_uris`.
    pub fn register_with(server: &Server, redirect_uris: &[&str]) -> Self {
        let base = server.root().to_string();
        let answer = http()
            .post(format!("{base}/oauth/register"))
            .json(&json!({"redirect_uris": redirect_uris, "client_name": "Test Agent"}))
            .send()
            .unwrap();
        assert_eq!(answer.status().as_u16(), 201);
        let made: Value = answer.json().unwrap();
        assert_eq!(made["token_endpoint_auth_method"], "none");
        assert!(
            made.as_object().unwrap().values().all(|v| !v.is_null()),
            "no member is null (RFC 7591): {made}"
        );
        let verifier = format!("v{}", "erifier-".repeat(8));
        let challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
        Self {
            base,
            client_id: made["client_id"].as_str().unwrap().to_string(),
            verifier,
            challenge,
        }
    }

    pub fn resource(&self) -> String {
        format!("{}/mcp", self.base)
    }

    /// The authorization request's parameters (S256, this app's redirect), with `extra`
    /// replacing or adding to them.
    pub fn params(&self, extra: &[(&str, &str)]) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = vec![
            ("response_type".into(), "code".into()),
            ("client_id".into(), self.client_id.clone()),
            ("redirect_uri".into(), REDIRECT.into()),
            ("state".into(), "st-123".into()),
            ("code_challenge".into(), self.challenge.clone()),
            ("code_challenge_method".into(), "S256".into()),
            (
                "scope".into(),
                "tickets:read tickets:write comments:write".into(),
            ),
            ("resource".into(), self.resource()),
        ];
        for (k, v) in extra {
            out.retain(|(name, _)| name != k);
            if !v.is_empty() {
                out.push(((*k).into(), (*v).into()));
            }
        }
        out
    }

    pub fn authorize_path(&self, extra: &[(&str, &str)]) -> String {
        let query = form_urlencoded::Serializer::new(String::new())
            .extend_pairs(self.params(extra))
            .finish();
        format!("/oauth/authorize?{query}")
    }

    /// Exchange `code`: status and answer.
    pub fn exchange(&self, code: &str, verifier: &str, extra: &[(&str, &str)]) -> (u16, Value) {
        let mut form = vec![
            ("grant_type", "authorization_code".to_string()),
            ("code", code.to_string()),
            ("client_id", self.client_id.clone()),
            ("redirect_uri", REDIRECT.to_string()),
            ("code_verifier", verifier.to_string()),
        ];
        for (k, v) in extra {
            form.retain(|(name, _)| name != k);
            form.push((k, (*v).to_string()));
        }
        token_request(&self.base, &form)
    }

    pub fn refresh(&self, refresh_token: &str) -> (u16, Value) {
        token_request(
            &self.base,
            &[
                ("grant_type", "refresh_token"),
                ("refresh_token", refresh_token),
                ("client_id", &self.client_id),
            ],
        )
    }
}

pub(crate) fn token_request<V: AsRef<str>>(base: &str, form: &[(&str, V)]) -> (u16, Value) {
    let pairs: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_ref())).collect();
    let answer = http()
        .post(format!("{base}/oauth/token"))
        .form(&pairs)
        .send()
        .unwrap();
    assert_eq!(
        answer
            .headers()
            .get("cache-control")
            .and_then(|v| v.to_str().ok()),
        Some("no-store")
    );
    let status = answer.status().as_u16();
    (status, answer.json().unwrap())
}

/// The query of a redirect to the client, as pairs.
pub(crate) fn query_of(location: &str) -> Vec<(String, String)> {
    let url = url::Url::parse(location).unwrap();
    url.query_pairs().into_owned().collect()
}

pub(crate) fn get<'a>(pairs: &'a [(String, String)], name: &str) -> Option<&'a str> {
    pairs
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

pub(crate) fn location(response: &reqwest::blocking::Response) -> String {
    response
        .headers()
        .get("location")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string()
}

/// Open the consent page as `browser` (signed in) and answer it: `decision`, the scopes
/// ticked in `grant`, in `workspace`. The redirect's query.
fn decide(
    browser: &mut Browser,
    app: &App,
    extra: &[(&str, &str)],
    workspace: &str,
    grant: &[&str],
    decision: &str,
) -> Vec<(String, String)> {
    let path = app.authorize_path(&[extra, &[("workspace", workspace)]].concat());
    let (status, page) = browser.get(&path);
    assert_eq!(status, 200, "{page}");
    let csrf = hidden(&page, "_csrf");
    let mut fields: Vec<(String, String)> = app.params(extra);
    fields.push(("_csrf".into(), csrf));
    fields.push(("workspace".into(), workspace.into()));
    fields.push(("decision".into(), decision.into()));
    for scope in grant {
        fields.push(("grant".into(), (*scope).into()));
    }
    let borrowed: Vec<(&str, &str)> = fields
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let answer = browser.post("/oauth/authorize", &borrowed);
    assert_eq!(answer.status().as_u16(), 303);
    let to = location(&answer);
    assert!(to.starts_with(REDIRECT), "back to the client: {to}");
    let pairs = query_of(&to);
    assert_eq!(get(&pairs, "state"), Some("st-123"), "state comes back");
    assert_eq!(
        get(&pairs, "iss"),
        Some(app.base.as_str()),
        "iss (RFC 9207)"
    );
    pairs
}

/// A code for Mia in `acme` with `grant`.
pub(crate) fn code_for(server: &Server, app: &App, grant: &[&str]) -> String {
    let mut mia = Browser::signed_in(server, "mia@example.com");
    let back = decide(&mut mia, app, &[], "acme", grant, "approve");
    get(&back, "code").unwrap().to_string()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn tools_with(server: &Server, token: &str) -> Vec<String> {
    let rt = runtime();
    let mcp = rt
        .block_on(McpProcess::connect_http(
            &format!("{}/mcp", server.root()),
            Some(token),
        ))
        .unwrap_or_else(|e| panic!("cannot connect: {e:#}\n{}", server.log()));
    let mut names: Vec<String> = rt
        .block_on(mcp.tools())
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    names.sort();
    names
}

pub(crate) fn mcp_status(server: &Server, token: &str, host: Option<&str>) -> u16 {
    let mut request = http()
        .post(format!("{}/mcp", server.root()))
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .bearer_auth(token)
        .body(
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "t", "version": "0"}}})
            .to_string(),
        );
    if let Some(host) = host {
        request = request.header("host", host);
    }
    request.send().unwrap().status().as_u16()
}

#[test]
fn discovery_starts_from_the_401_at_mcp() {
    let (_db, server) = world();
    let base = server.root().to_string();
    let answer = http()
        .post(format!("{base}/mcp"))
        .header("content-type", "application/json")
        .body("{}")
        .send()
        .unwrap();
    assert_eq!(answer.status().as_u16(), 401);
    let challenge = answer
        .headers()
        .get("www-authenticate")
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    let metadata_url = format!("{base}/.well-known/oauth-protected-resource/mcp");
    assert!(
        challenge.contains(&format!("resource_metadata=\"{metadata_url}\"")),
        "{challenge}"
    );
    assert!(challenge.contains("scope=\"tickets:read"), "{challenge}");

    let resource: Value = http().get(&metadata_url).send().unwrap().json().unwrap();
    assert_eq!(resource["resource"], format!("{base}/mcp"));
    assert_eq!(resource["authorization_servers"], json!([base]));
    let scopes = resource["scopes_supported"].as_array().unwrap();
    assert!(!scopes.contains(&json!("full_access")), "{resource}");

    for path in [
        "/.well-known/oauth-authorization-server",
        "/.well-known/openid-configuration",
    ] {
        let server_meta: Value = http()
            .get(format!("{base}{path}"))
            .send()
            .unwrap()
            .json()
            .unwrap();
        assert_eq!(server_meta["issuer"], base, "{path}");
        assert_eq!(
            server_meta["code_challenge_methods_supported"],
            json!(["S256"])
        );
        for endpoint in [
            "authorization_endpoint",
            "token_endpoint",
            "registration_endpoint",
            "revocation_endpoint",
        ] {
            assert!(
                server_meta[endpoint].as_str().unwrap().starts_with(&base),
                "{path} {endpoint}"
            );
        }
        assert_eq!(
            server_meta["grant_types_supported"],
            json!(["authorization_code", "refresh_token"])
        );
    }
    // The REST API's 401 stays a plain bearer challenge.
    let rest = http().get(format!("{base}/api/v1/tickets")).send().unwrap();
    assert_eq!(rest.status().as_u16(), 401);
    assert_eq!(rest.headers().get("www-authenticate").unwrap(), "Bearer");
}

#[test]
fn a_person_signs_in_approves_and_the_client_works_with_what_was_granted() {
    let (_db, server) = world();
    let app = App::register(&server);
    // Not signed in: to the sign-in page, and back to the request after it.
    let mut mia = Browser::new(&server);
    let (status, _) = mia.get(&app.authorize_path(&[]));
    assert_eq!(status, 303);
    let answer = mia
        .client
        .get(format!("{}{}", server.root(), app.authorize_path(&[])))
        .send()
        .unwrap();
    let to = location(&answer);
    assert!(to.starts_with("/login?next=%2Foauth%2Fauthorize"), "{to}");
    let answer = mia.sign_in("mia@example.com", browser::PASSWORD);
    assert_eq!(answer.status().as_u16(), 303);

    // Mia is in two workspaces: she picks one first.
    let (status, page) = mia.get(&app.authorize_path(&[]));
    assert_eq!(status, 200);
    assert!(page.contains("Test Agent"), "the client's name is shown");
    assert!(
        page.contains("127.0.0.1"),
        "so is the host it sends her back to"
    );
    assert!(page.contains(r#"name="workspace""#) && page.contains("bravo"));

    // In acme (a member) she approves reading and commenting, not writing.
    let back = decide(
        &mut mia,
        &app,
        &[],
        "acme",
        &["tickets:read", "comments:write"],
        "approve",
    );
    let code = get(&back, "code").unwrap();
    let (status, tokens) = app.exchange(code, &app.verifier, &[("resource", &app.resource())]);
    assert_eq!(status, 200, "{tokens}");
    assert_eq!(tokens["token_type"], "Bearer");
    assert_eq!(tokens["expires_in"], 3600);
    assert_eq!(tokens["scope"], "tickets:read comments:write");
    let access = tokens["access_token"].as_str().unwrap();
    let refresh = tokens["refresh_token"].as_str().unwrap();

    let tools = tools_with(&server, access);
    assert!(
        tools.contains(&"jility_get_ticket".to_string()),
        "{tools:?}"
    );
    assert!(
        tools.contains(&"jility_add_comment".to_string()),
        "{tools:?}"
    );
    assert!(
        !tools.contains(&"jility_create_ticket".to_string()),
        "writing was not granted: {tools:?}"
    );

    // Refresh: new tokens; the old refresh token is used up, and using it again revokes
    // the family (the new access token stops working).
    let (status, renewed) = app.refresh(refresh);
    assert_eq!(status, 200, "{renewed}");
    let new_access = renewed["access_token"].as_str().unwrap();
    assert_ne!(new_access, access);
    assert_ne!(renewed["refresh_token"], tokens["refresh_token"]);
    assert_eq!(mcp_status(&server, new_access, None), 200);
    let (status, reused) = app.refresh(refresh);
    assert_eq!(
        (status, reused["error"].as_str()),
        (400, Some("invalid_grant"))
    );
    assert_eq!(
        mcp_status(&server, new_access, None),
        401,
        "the family is revoked"
    );
    let (status, _) = app.refresh(renewed["refresh_token"].as_str().unwrap());
    assert_eq!(status, 400, "and so is its newest refresh token");
}

#[test]
fn pkce_is_required_as_s256_and_checked() {
    let (_db, server) = world();
    let app = App::register(&server);
    let mia = Browser::signed_in(&server, "mia@example.com");
    // Without PKCE, or with `plain`: a page says why, nothing is issued nor sent to the
    // client (oauth_redirects.rs holds every such fault).
    for extra in [
        vec![("code_challenge", ""), ("code_challenge_method", "")],
        vec![("code_challenge_method", "plain")],
    ] {
        let answer = mia
            .client
            .get(format!("{}{}", server.root(), app.authorize_path(&extra)))
            .header("cookie", mia.cookie_header())
            .send()
            .unwrap();
        assert_eq!(answer.status().as_u16(), 400, "{extra:?}");
        assert!(answer.headers().get("location").is_none());
        let page = answer.text().unwrap();
        assert!(page.contains(r#"data-error="invalid_request""#), "{page}");
    }
    // A wrong verifier is refused; the right one still works once.
    let code = code_for(&server, &app, &["tickets:read"]);
    let wrong = format!("w{}", "rong-verifier".repeat(4));
    let (status, refused) = app.exchange(&code, &wrong, &[]);
    assert_eq!(
        (status, refused["error"].as_str()),
        (400, Some("invalid_grant"))
    );
    assert!(
        refused["error_description"]
            .as_str()
            .unwrap()
            .contains("code_verifier"),
        "{refused}"
    );
}

#[test]
fn a_redirect_uri_not_registered_gets_nothing_sent_to_it() {
    let (_db, server) = world();
    let app = App::register(&server);
    let mut mia = Browser::signed_in(&server, "mia@example.com");
    for evil in [
        "https://evil.example/callback",
        "http://127.0.0.1:47011/other",
        "http://localhost:47011/callback",
    ] {
        let (status, page) = mia.get(&app.authorize_path(&[("redirect_uri", evil)]));
        assert_eq!(status, 400, "{evil}");
        assert!(page.contains("did not register"), "{page}");
    }
    // A loopback redirect on another port is the same native app (RFC 8252).
    let other_port = "http://127.0.0.1:51999/callback";
    let (status, _) = mia.get(&app.authorize_path(&[("redirect_uri", other_port)]));
    assert_eq!(status, 200);
    // An unknown client: the same dead end.
    let (status, page) = mia.get(&app.authorize_path(&[("client_id", "jilc_nobody")]));
    assert_eq!(status, 400);
    assert!(page.contains("not registered"), "{page}");
    // Registration takes only loopback or https redirects, public clients, code flow.
    for (body, error) in [
        (
            json!({"redirect_uris": ["http://evil.example/cb"]}),
            "invalid_redirect_uri",
        ),
        (
            json!({"redirect_uris": ["myapp://cb"]}),
            "invalid_redirect_uri",
        ),
        (json!({"redirect_uris": []}), "invalid_redirect_uri"),
        (
            json!({"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "client_secret_basic"}),
            "invalid_client_metadata",
        ),
        (
            json!({"redirect_uris": [REDIRECT], "grant_types": ["client_credentials"]}),
            "invalid_client_metadata",
        ),
    ] {
        let answer: Value = http()
            .post(format!("{}/oauth/register", server.root()))
            .json(&body)
            .send()
            .unwrap()
            .json()
            .unwrap();
        assert_eq!(answer["error"], error, "{body}");
    }
}

#[test]
fn a_code_used_twice_revokes_what_it_gave() {
    let (_db, server) = world();
    let app = App::register(&server);
    let code = code_for(&server, &app, &["tickets:read"]);
    let (status, tokens) = app.exchange(&code, &app.verifier, &[]);
    assert_eq!(status, 200, "{tokens}");
    let access = tokens["access_token"].as_str().unwrap();
    assert_eq!(mcp_status(&server, access, None), 200);
    let (status, again) = app.exchange(&code, &app.verifier, &[]);
    assert_eq!(
        (status, again["error"].as_str()),
        (400, Some("invalid_grant"))
    );
    assert_eq!(mcp_status(&server, access, None), 401);
    let (status, _) = app.refresh(tokens["refresh_token"].as_str().unwrap());
    assert_eq!(status, 400);
    // Another client cannot exchange a code it was not given.
    let other = App::register(&server);
    let code = code_for(&server, &app, &["tickets:read"]);
    let (status, refused) = other.exchange(&code, &app.verifier, &[]);
    assert_eq!(
        (status, refused["error"].as_str()),
        (400, Some("invalid_grant"))
    );
}

#[test]
fn a_token_is_bound_to_the_resource_it_was_issued_for() {
    let (_db, server) = world();
    let app = App::register(&server);
    // Asking for another resource is refused at the start.
    let mia = Browser::signed_in(&server, "mia@example.com");
    let answer = mia
        .client
        .get(format!(
            "{}{}",
            server.root(),
            app.authorize_path(&[("resource", "https://other.example/mcp")])
        ))
        .header("cookie", mia.cookie_header())
        .send()
        .unwrap();
    assert_eq!(answer.status().as_u16(), 400);
    assert!(
        answer
            .text()
            .unwrap()
            .contains(r#"data-error="invalid_target""#)
    );
    // And at the exchange.
    let code = code_for(&server, &app, &["tickets:read"]);
    let (status, refused) = app.exchange(
        &code,
        &app.verifier,
        &[("resource", "https://other.example/mcp")],
    );
    assert_eq!(
        (status, refused["error"].as_str()),
        (400, Some("invalid_target"))
    );
    // A token issued for http://127.0.0.1:PORT/mcp does not work at another name of the
    // server (another resource).
    let code = code_for(&server, &app, &["tickets:read"]);
    let (_, tokens) = app.exchange(&code, &app.verifier, &[]);
    let access = tokens["access_token"].as_str().unwrap();
    assert_eq!(mcp_status(&server, access, None), 200);
    let port = server.root().rsplit(':').next().unwrap().to_string();
    assert_eq!(
        mcp_status(&server, access, Some(&format!("localhost:{port}"))),
        401
    );
}

#[test]
fn scopes_beyond_the_role_are_not_granted_and_a_denial_grants_nothing() {
    let (_db, server) = world();
    let app = App::register(&server);
    // Val, a viewer, is shown writing as not allowed; ticking it anyway grants reading only.
    let mut val = Browser::signed_in(&server, "val@example.com");
    let (_, page) = val.get(&app.authorize_path(&[]));
    assert!(page.contains("not allowed for your role"), "{page}");
    let back = decide(
        &mut val,
        &app,
        &[],
        "acme",
        &["tickets:read", "tickets:write", "comments:write"],
        "approve",
    );
    let (status, tokens) = app.exchange(get(&back, "code").unwrap(), &app.verifier, &[]);
    assert_eq!(status, 200, "{tokens}");
    assert_eq!(tokens["scope"], "tickets:read");
    // Asking for write only, a viewer has nothing to approve: invalid_scope, no code.
    let back = decide(
        &mut val,
        &app,
        &[("scope", "tickets:write")],
        "acme",
        &["tickets:write"],
        "approve",
    );
    assert_eq!(get(&back, "error"), Some("invalid_scope"));
    assert!(get(&back, "code").is_none());
    // `full_access` is never offered.
    let answer = val
        .client
        .get(format!(
            "{}{}",
            server.root(),
            app.authorize_path(&[("scope", "full_access")])
        ))
        .header("cookie", val.cookie_header())
        .send()
        .unwrap();
    assert_eq!(answer.status().as_u16(), 400);
    assert!(
        answer
            .text()
            .unwrap()
            .contains(r#"data-error="invalid_scope""#)
    );
    // A denial: access_denied, no code.
    let mut owen = Browser::signed_in(&server, "owen@example.com");
    let back = decide(&mut owen, &app, &[], "acme", &["tickets:read"], "deny");
    assert_eq!(get(&back, "error"), Some("access_denied"));
    assert!(get(&back, "code").is_none());
    // A workspace the person is not in cannot be picked (Owen is not in bravo).
    let (status, page) = owen.get(&app.authorize_path(&[("workspace", "bravo")]));
    assert_eq!(status, 200);
    assert!(!page.contains(r#"value="bravo""#), "{page}");
}

#[test]
fn the_consent_form_needs_the_session_and_its_csrf_token() {
    let (_db, server) = world();
    let app = App::register(&server);
    let mut mia = Browser::signed_in(&server, "mia@example.com");
    let mut fields: Vec<(String, String)> = app.params(&[]);
    fields.push(("workspace".into(), "acme".into()));
    fields.push(("decision".into(), "approve".into()));
    fields.push(("grant".into(), "tickets:read".into()));
    let borrowed: Vec<(&str, &str)> = fields
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let answer = mia.post("/oauth/authorize", &borrowed);
    assert_eq!(answer.status().as_u16(), 403, "no CSRF token");
    let mut with_token = borrowed.clone();
    with_token.push(("_csrf", "forged"));
    let answer = mia.post("/oauth/authorize", &with_token);
    assert_eq!(answer.status().as_u16(), 403, "a forged CSRF token");
}

#[test]
fn registrations_are_limited_per_address() {
    let (_db, server) = world();
    let mut statuses = Vec::new();
    for _ in 0..21 {
        let answer = http()
            .post(format!("{}/oauth/register", server.root()))
            .json(&json!({"redirect_uris": [REDIRECT]}))
            .send()
            .unwrap();
        statuses.push(answer.status().as_u16());
        if answer.status().as_u16() == 429 {
            assert!(answer.headers().get("retry-after").is_some());
            let body: Value = answer.json().unwrap();
            assert_eq!(body["error"], "slow_down");
        }
    }
    assert!(statuses[..20].iter().all(|s| *s == 201), "{statuses:?}");
    assert_eq!(statuses[20], 429);
}

#[test]
fn revoking_a_token_ends_its_grant() {
    let (_db, server) = world();
    let app = App::register(&server);
    let code = code_for(&server, &app, &["tickets:read"]);
    let (_, tokens) = app.exchange(&code, &app.verifier, &[]);
    let access = tokens["access_token"].as_str().unwrap();
    assert_eq!(mcp_status(&server, access, None), 200);
    let answer = http()
        .post(format!("{}/oauth/revoke", server.root()))
        .form(&[("token", tokens["refresh_token"].as_str().unwrap())])
        .send()
        .unwrap();
    assert_eq!(answer.status().as_u16(), 200);
    assert_eq!(mcp_status(&server, access, None), 401);
    // An unknown token: the same answer (RFC 7009).
    let answer = http()
        .post(format!("{}/oauth/revoke", server.root()))
        .form(&[("token", "jil_rt_nothing")])
        .send()
        .unwrap();
    assert_eq!(answer.status().as_u16(), 200);
}

#[test]
fn people_see_and_revoke_connected_clients_and_the_audit_log_says_so() {
    let db = TestDb::new();
    let acme_token = workspace(&db, "acme");
    workspace(&db, "bravo");
    person(&db, "mia@example.com", "Mia", "acme", "member");
    person(&db, "owen@example.com", "Owen", "acme", "owner");
    person(&db, "val@example.com", "Val", "acme", "viewer");
    person(&db, "zed@example.com", "Zed", "bravo", "owner");
    let server = Server::start(&db, &[]);
    let app = App::register(&server);
    let code = code_for(&server, &app, &["tickets:read"]);
    let (_, tokens) = app.exchange(&code, &app.verifier, &[]);
    let access = tokens["access_token"].as_str().unwrap();

    // Mia sees her client; Owen (owner) sees it with her name; Val sees none of hers.
    let mut mia = Browser::signed_in(&server, "mia@example.com");
    let (status, page) = mia.get("/w/acme/settings/clients");
    assert_eq!(status, 200, "{page}");
    assert!(
        page.contains("Test Agent") && page.contains("tickets:read"),
        "{page}"
    );
    let grant = hidden(&page, "grant");
    let mut owen = Browser::signed_in(&server, "owen@example.com");
    let (_, page) = owen.get("/w/acme/settings/clients");
    assert!(
        page.contains("mia@example.com") && page.contains("Test Agent"),
        "{page}"
    );
    let mut val = Browser::signed_in(&server, "val@example.com");
    let (_, page) = val.get("/w/acme/settings/clients");
    assert!(!page.contains("Test Agent"), "{page}");
    // Val cannot revoke Mia's grant; Zed (another workspace) cannot either.
    let csrf = val.csrf("acme");
    let answer = val.post(
        "/w/acme/settings/clients/revoke",
        &[("_csrf", &csrf), ("grant", &grant)],
    );
    assert_eq!(answer.status().as_u16(), 404);
    let mut zed = Browser::signed_in(&server, "zed@example.com");
    let csrf = zed.csrf("bravo");
    let answer = zed.post(
        "/w/bravo/settings/clients/revoke",
        &[("_csrf", &csrf), ("grant", &grant)],
    );
    assert_eq!(answer.status().as_u16(), 404);
    let answer = zed.post(
        "/w/acme/settings/clients/revoke",
        &[("_csrf", &csrf), ("grant", &grant)],
    );
    assert_eq!(answer.status().as_u16(), 404);
    assert_eq!(mcp_status(&server, access, None), 200, "still working");
    // Mia revokes it: the token stops at once.
    let csrf = mia.csrf("acme");
    let answer = mia.post(
        "/w/acme/settings/clients/revoke",
        &[("_csrf", &csrf), ("grant", &grant)],
    );
    assert_eq!(answer.status().as_u16(), 303);
    assert_eq!(mcp_status(&server, access, None), 401);
    let (_, page) = mia.get("/w/acme/settings/clients");
    assert!(!page.contains("Test Agent"), "{page}");
    // The grant and its revocation are in acme's audit log under Mia's name.
    let audit: Value = http()
        .get(format!("{}/api/v1/audit?limit=100", server.root()))
        .bearer_auth(&acme_token)
        .send()
        .unwrap()
        .json()
        .unwrap();
    let entries = audit["entries"].as_array().unwrap();
    for operation in ["oauth.grant", "oauth.revoke"] {
        assert!(
            entries
                .iter()
                .any(|e| e["operation"] == operation && e["actor"] == "mia@example.com"),
            "{operation} in {audit}"
        );
    }
    assert!(
        !audit.to_string().contains(access),
        "no token in the audit log"
    );
}

#[test]
fn a_call_beyond_the_grant_asks_the_client_to_step_up() {
    let (_db, server) = world();
    let app = App::register(&server);
    let code = code_for(&server, &app, &["tickets:read"]);
    let (_, tokens) = app.exchange(&code, &app.verifier, &[]);
    let access = tokens["access_token"].as_str().unwrap();
    let call = |tool: &str| {
        http()
            .post(format!("{}/mcp", server.root()))
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .bearer_auth(access)
            .body(
                json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                       "params": {"name": tool, "arguments": {"title": "x"}}})
                .to_string(),
            )
            .send()
            .unwrap()
    };
    let refused = call("jility_create_ticket");
    assert_eq!(refused.status().as_u16(), 403);
    let challenge = refused.headers()["www-authenticate"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(
        challenge.contains(r#"error="insufficient_scope""#)
            && challenge.contains(r#"scope="tickets:write""#)
            && challenge.contains("resource_metadata="),
        "{challenge}"
    );
    // A call the grant covers goes on to MCP (which wants a session first: not a 403).
    assert_ne!(call("jility_get_ticket").status().as_u16(), 403);
}

/// A client's metadata document served on loopback (one thread answering every request
/// with `document`); its URL.
pub(crate) fn serve_document(document: impl Fn(&str) -> String + Send + 'static) -> String {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!(
        "http://{}/oauth/client.json",
        listener.local_addr().unwrap()
    );
    let own = url.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut buf = [0u8; 4096];
            let _ = stream.read(&mut buf);
            let body = document(&own);
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    url
}

#[test]
fn a_client_id_metadata_document_is_fetched_only_where_the_operator_allows() {
    let db = TestDb::new();
    workspace(&db, "acme");
    person(&db, "mia@example.com", "Mia", "acme", "member");
    let document = |own: &str| {
        json!({"client_id": own, "client_name": "Document Client",
               "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none"})
        .to_string()
    };
    let client_id = serve_document(document);
    let base_params = |server: &Server| App {
        base: server.root().to_string(),
        client_id: client_id.clone(),
        verifier: format!("v{}", "erifier-".repeat(8)),
        challenge: URL_SAFE_NO_PAD.encode(Sha256::digest(
            format!("v{}", "erifier-".repeat(8)).as_bytes(),
        )),
    };

    // By default a document on a private (here: loopback) address is never fetched.
    let server = Server::start(&db, &[]);
    let meta: Value = http()
        .get(format!(
            "{}/.well-known/oauth-authorization-server",
            server.root()
        ))
        .send()
        .unwrap()
        .json()
        .unwrap();
    assert_eq!(meta["client_id_metadata_document_supported"], true);
    let mut mia = Browser::signed_in(&server, "mia@example.com");
    let app = base_params(&server);
    let (status, page) = mia.get(&app.authorize_path(&[]));
    assert_eq!(status, 400, "{page}");
    assert!(page.contains("must be https"), "{page}");
    for private in [
        client_id.replace("http://", "https://"),
        "https://localhost/client.json".to_string(),
        "https://169.254.169.254/latest/meta-data".to_string(),
        "https://[::1]/client.json".to_string(),
    ] {
        let app = App {
            client_id: private.clone(),
            ..base_params(&server)
        };
        let (status, page) = mia.get(&app.authorize_path(&[]));
        assert_eq!(status, 400, "{private}: {page}");
        assert!(page.contains("private"), "{private}: {page}");
    }
    drop(server);

    // With the operator's flag it is, and the flow works with the document's client.
    let server = Server::start_with(
        &db,
        "127.0.0.1:0",
        &[],
        &[("JILITY_OAUTH_ALLOW_PRIVATE_CLIENTS", "1")],
    );
    let app = base_params(&server);
    let mut mia = Browser::signed_in(&server, "mia@example.com");
    let (status, page) = mia.get(&app.authorize_path(&[]));
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("Document Client"), "{page}");
    let back = decide(&mut mia, &app, &[], "acme", &["tickets:read"], "approve");
    let (status, tokens) = app.exchange(get(&back, "code").unwrap(), &app.verifier, &[]);
    assert_eq!(status, 200, "{tokens}");
    // A redirect the document does not list is refused there too.
    let (status, _) = mia.get(&app.authorize_path(&[("redirect_uri", "https://evil.example/cb")]));
    assert_eq!(status, 400);
    // A document that names another client is refused.
    let liar = serve_document(|_| {
        json!({"client_id": "https://someone.else/client.json", "redirect_uris": [REDIRECT]})
            .to_string()
    });
    let app = App {
        client_id: liar,
        ..base_params(&server)
    };
    let (status, page) = mia.get(&app.authorize_path(&[]));
    assert_eq!(status, 400);
    assert!(page.contains("another client_id"), "{page}");
}
