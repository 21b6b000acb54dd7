//! The OAuth findings of issue 39 through the built binary: the authorization endpoint is no
//! open redirector (every fault of a request is a page, for every kind of client, signed in
//! or not, on `GET` and `POST`; only the consent form's answer goes to the client), the JSON
//! endpoints' refusals are RFC 6749 / 7591 JSON (too large, unreadable, another content
//! type or method), a grant holds one live access token at a time, and the token endpoint is
//! limited per address and per `client_id`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stderr
)]

use std::net::IpAddr;
use std::time::Duration;

use reqwest::blocking::{Client, Response};
use serde_json::{Value, json};

use crate::browser::{Browser, hidden, person, workspace};
use crate::cloud::Server;
use crate::oauth::{App, REDIRECT, code_for, get, http, location, query_of, serve_document};
use crate::pg::TestDb;

/// A stranger's site, registered as a client's redirect URI.
const ELSEWHERE: &str = "https://attacker.example/cb";

/// Every fault of an authorization request, with the error it is: the parameters that
/// make it (an empty value takes the parameter out).
fn faults() -> Vec<(Vec<(&'static str, &'static str)>, &'static str)> {
    vec![
        (
            vec![("response_type", "token")],
            "unsupported_response_type",
        ),
        (vec![("response_type", "")], "unsupported_response_type"),
        (
            vec![("code_challenge", ""), ("code_challenge_method", "")],
            "invalid_request",
        ),
        (vec![("code_challenge_method", "plain")], "invalid_request"),
        (vec![("code_challenge_method", "")], "invalid_request"),
        (vec![("code_challenge", "too-short")], "invalid_request"),
        (
            vec![("resource", "https://attacker.example/mcp")],
            "invalid_target",
        ),
        (vec![("scope", "full_access")], "invalid_scope"),
        (vec![("scope", "tickets:read admin")], "invalid_scope"),
    ]
}

/// The answer leaves no one off this site: no `Location`, or one on this site.
fn stays(answer: &Response, what: &str) {
    let to = location(answer);
    assert!(
        to.is_empty() || (to.starts_with('/') && !to.starts_with("//")),
        "{what}: sent to {to}"
    );
}

/// The answer is the page of `error`, sent nowhere.
fn page_of(answer: Response, error: &str, what: &str) {
    stays(&answer, what);
    assert_eq!(answer.status().as_u16(), 400, "{what}");
    assert_eq!(
        answer
            .headers()
            .get("cache-control")
            .and_then(|v| v.to_str().ok()),
        Some("no-store"),
        "{what}"
    );
    let page = answer.text().unwrap();
    assert!(
        page.contains(&format!(r#"data-error="{error}""#)),
        "{what}: {page}"
    );
    assert!(page.contains("Nothing was sent back"), "{what}: {page}");
}

/// The consent form's fields for `app`'s request with `extra`, as `browser` would post it.
fn form(
    app: &App,
    extra: &[(&str, &str)],
    csrf: Option<&str>,
    decision: &str,
) -> Vec<(String, String)> {
    let mut fields = app.params(extra);
    if let Some(csrf) = csrf {
        fields.push(("_csrf".into(), csrf.into()));
    }
    fields.push(("workspace".into(), "acme".into()));
    fields.push(("decision".into(), decision.into()));
    fields.push(("grant".into(), "tickets:read".into()));
    fields
}

fn post(browser: &mut Browser, fields: &[(String, String)], origin: Option<&str>) -> Response {
    let borrowed: Vec<(&str, &str)> = fields
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let origin = origin.map_or_else(|| browser.base.clone(), str::to_string);
    browser.post_from("/oauth/authorize", &borrowed, Some(&origin))
}

#[test]
fn no_fault_of_an_authorization_request_sends_anyone_to_the_client() {
    let (db, server) = crate::oauth::world();
    drop(server);
    let server = Server::start_with(
        &db,
        "127.0.0.1:0",
        &[],
        &[("JILITY_OAUTH_ALLOW_PRIVATE_CLIENTS", "1")],
    );
    let https = App::register_with(&server, &[ELSEWHERE]);
    let loopback = App::register(&server);
    let document = serve_document(|own: &str| {
        json!({"client_id": own, "client_name": "Document Client",
               "redirect_uris": [REDIRECT, ELSEWHERE], "token_endpoint_auth_method": "none"})
        .to_string()
    });
    let documented = App {
        client_id: document,
        ..App::register(&server)
    };
    let kinds: [(&str, &App, &str); 4] = [
        ("registered, https redirect", &https, ELSEWHERE),
        ("registered, loopback redirect", &loopback, REDIRECT),
        ("metadata document, https redirect", &documented, ELSEWHERE),
        (
            "metadata document, loopback redirect",
            &documented,
            REDIRECT,
        ),
    ];
    let mut mia = Browser::signed_in(&server, "mia@example.com");
    let mut stranger = Browser::new(&server);
    let mut tried = 0;
    for (kind, app, redirect) in kinds {
        let base = [("redirect_uri", redirect)];
        // The request itself is fine: Mia sees the consent page.
        let (status, consent) =
            mia.get(&app.authorize_path(&[&base[..], &[("workspace", "acme")]].concat()));
        assert_eq!(status, 200, "{kind}: {consent}");
        let csrf = hidden(&consent, "_csrf");
        for (fault, error) in faults() {
            let extra = [&base[..], &fault[..]].concat();
            let what = format!("{kind}, {fault:?}");
            for (who, browser) in [("not signed in", &mut stranger), ("signed in", &mut mia)] {
                let answer = browser
                    .client
                    .get(format!("{}{}", server.root(), app.authorize_path(&extra)))
                    .header("cookie", browser.cookie_header())
                    .send()
                    .unwrap();
                page_of(answer, error, &format!("GET, {who}, {what}"));
                tried += 1;
            }
            // Posted: by a stranger, by Mia with her CSRF token (approving or denying), and
            // by a cross-site form in Mia's browser.
            let answer = post(&mut stranger, &form(app, &extra, None, "approve"), None);
            page_of(answer, error, &format!("POST, not signed in, {what}"));
            for decision in ["approve", "deny"] {
                let answer = post(&mut mia, &form(app, &extra, Some(&csrf), decision), None);
                page_of(
                    answer,
                    error,
                    &format!("POST {decision}, signed in, {what}"),
                );
            }
            let answer = post(
                &mut mia,
                &form(app, &extra, None, "deny"),
                Some("https://attacker.example"),
            );
            stays(&answer, &format!("POST cross-site, {what}"));
            assert_ne!(answer.status().as_u16() / 100, 2, "{what}");
            tried += 4;
        }
        // A well-formed request answered without the person: nothing goes to the client
        // either (a stranger is sent to sign in; a cross-site form is refused).
        let answer = post(&mut stranger, &form(app, &base, None, "deny"), None);
        stays(&answer, &format!("{kind}: a stranger's denial"));
        let answer = post(
            &mut mia,
            &form(app, &base, Some(&csrf), "deny"),
            Some("https://attacker.example"),
        );
        assert_eq!(answer.status().as_u16(), 403, "{kind}: cross-site");
        stays(&answer, &format!("{kind}: a cross-site denial"));
        let answer = post(&mut mia, &form(app, &base, None, "deny"), None);
        assert_eq!(answer.status().as_u16(), 403, "{kind}: no CSRF token");
        stays(&answer, &format!("{kind}: a denial without the CSRF token"));

        // What is still sent to the client: the consent form's answer — a denial
        // (access_denied), nothing approvable ticked (invalid_scope), an approval (the code).
        let answer = post(&mut mia, &form(app, &base, Some(&csrf), "deny"), None);
        assert_eq!(answer.status().as_u16(), 303, "{kind}");
        let to = location(&answer);
        assert!(to.starts_with(redirect), "{kind}: {to}");
        let back = query_of(&to);
        assert_eq!(get(&back, "error"), Some("access_denied"), "{kind}");
        assert_eq!(get(&back, "state"), Some("st-123"), "{kind}");
        let mut nothing = form(app, &base, Some(&csrf), "approve");
        nothing.retain(|(k, _)| k != "grant");
        let answer = post(&mut mia, &nothing, None);
        let back = query_of(&location(&answer));
        assert_eq!(get(&back, "error"), Some("invalid_scope"), "{kind}");
        let answer = post(&mut mia, &form(app, &base, Some(&csrf), "approve"), None);
        let to = location(&answer);
        assert!(to.starts_with(redirect), "{kind}: {to}");
        assert!(get(&query_of(&to), "code").is_some(), "{kind}: {to}");
    }
    eprintln!("{tried} faulty requests, none sent anywhere");
}

#[test]
fn the_json_endpoints_refuse_in_json() {
    let (_db, server) = crate::oauth::world();
    let root = server.root().to_string();
    let json_error = |answer: Response, status: u16, error: &str, what: &str| {
        assert_eq!(answer.status().as_u16(), status, "{what}");
        let body: Value = answer
            .json()
            .unwrap_or_else(|e| panic!("{what}: not JSON: {e}"));
        assert_eq!(body["error"], error, "{what}: {body}");
        assert!(body["error_description"].is_string(), "{what}: {body}");
    };
    // Registration: too large, not JSON, another content type, another method.
    let big = json!({"redirect_uris": [REDIRECT], "client_name": "x".repeat(100 * 1024)});
    let answer = http()
        .post(format!("{root}/oauth/register"))
        .json(&big)
        .send()
        .unwrap();
    json_error(
        answer,
        413,
        "invalid_client_metadata",
        "a 100 KiB registration",
    );
    // Announced at 5 MiB: refused on its announcement (sent raw, headers only: a client
    // still writing a body the server will not read may see its connection reset first).
    {
        use std::io::{Read as _, Write as _};
        let address = root.trim_start_matches("http://");
        let mut stream = std::net::TcpStream::connect(address).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        write!(
            stream,
            "POST /oauth/register HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n",
            5 * 1024 * 1024
        )
        .unwrap();
        let mut raw = String::new();
        let _ = stream.read_to_string(&mut raw);
        assert!(
            raw.starts_with("HTTP/1.1 413 "),
            "a 5 MiB registration: {raw}"
        );
        let body: Value = serde_json::from_str(raw.split("\r\n\r\n").nth(1).unwrap_or(""))
            .unwrap_or_else(|e| panic!("a 5 MiB registration: not JSON: {e}: {raw}"));
        assert_eq!(body["error"], "invalid_client_metadata", "{body}");
    }
    let answer = http()
        .post(format!("{root}/oauth/register"))
        .header("content-type", "application/json")
        .body("{\"redirect_uris\": [")
        .send()
        .unwrap();
    json_error(answer, 400, "invalid_client_metadata", "broken JSON");
    let answer = http()
        .post(format!("{root}/oauth/register"))
        .header("content-type", "text/plain")
        .body(json!({"redirect_uris": [REDIRECT]}).to_string())
        .send()
        .unwrap();
    json_error(answer, 400, "invalid_client_metadata", "text/plain");
    let answer = http()
        .post(format!("{root}/oauth/register"))
        .header("content-type", "application/json; charset=utf-8")
        .body(json!({"redirect_uris": [REDIRECT]}).to_string())
        .send()
        .unwrap();
    assert_eq!(answer.status().as_u16(), 201, "JSON with a charset");
    for path in ["/oauth/register", "/oauth/token", "/oauth/revoke"] {
        let answer = http().get(format!("{root}{path}")).send().unwrap();
        assert_eq!(
            answer.headers().get("allow").and_then(|v| v.to_str().ok()),
            Some("POST"),
            "{path}"
        );
        json_error(answer, 405, "invalid_request", &format!("GET {path}"));
    }
    // The token and revocation endpoints: too large.
    for path in ["/oauth/token", "/oauth/revoke"] {
        let answer = http()
            .post(format!("{root}{path}"))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(format!(
                "grant_type=refresh_token&x={}",
                "y".repeat(100 * 1024)
            ))
            .send()
            .unwrap();
        json_error(
            answer,
            413,
            "invalid_request",
            &format!("100 KiB at {path}"),
        );
    }
}

#[test]
fn a_grant_holds_one_live_access_token_at_a_time() {
    let db = TestDb::new();
    let acme_token = workspace(&db, "acme");
    person(&db, "mia@example.com", "Mia", "acme", "member");
    let server = Server::start(&db, &[]);
    let app = App::register(&server);
    let code = code_for(&server, &app, &["tickets:read"]);
    let (status, mut tokens) = app.exchange(&code, &app.verifier, &[]);
    assert_eq!(status, 200, "{tokens}");
    let whoami = |token: &str| {
        http()
            .get(format!("{}/whoami", server.url))
            .bearer_auth(token)
            .send()
            .unwrap()
            .status()
            .as_u16()
    };
    let mut earlier = Vec::new();
    const REFRESHES: usize = 20;
    for _ in 0..REFRESHES {
        let access = tokens["access_token"].as_str().unwrap().to_string();
        assert_eq!(whoami(&access), 200, "the newest access token works");
        let (status, renewed) = app.refresh(tokens["refresh_token"].as_str().unwrap());
        assert_eq!(status, 200, "{renewed}");
        earlier.push(access);
        tokens = renewed;
    }
    let live: Vec<usize> = earlier
        .iter()
        .enumerate()
        .filter(|(_, t)| whoami(t) != 401)
        .map(|(i, _)| i)
        .collect();
    assert!(
        live.is_empty(),
        "replaced access tokens still live: {live:?}"
    );
    assert_eq!(whoami(tokens["access_token"].as_str().unwrap()), 200);
    // Each replacement is in the audit log as a revocation, under Mia's name.
    let audit: Value = http()
        .get(format!("{}/audit?limit=200", server.url))
        .bearer_auth(&acme_token)
        .send()
        .unwrap()
        .json()
        .unwrap();
    let replaced = audit["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| {
            e["operation"] == "oauth.revoke"
                && e["actor"] == "mia@example.com"
                && e["detail"]
                    .as_str()
                    .is_some_and(|d| d.contains("replaced by a refresh"))
        })
        .count();
    assert_eq!(replaced, REFRESHES, "{audit}");
}

/// A client that connects from `address` (any of 127.0.0.0/8 reaches the server).
fn from(address: &str) -> Client {
    Client::builder()
        .local_address(address.parse::<IpAddr>().unwrap())
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap()
}

fn refresh_from(client: &Client, root: &str, client_id: &str) -> Response {
    client
        .post(format!("{root}/oauth/token"))
        .form(&[
            ("grant_type", "refresh_token"),
            ("refresh_token", "jil_rt_not-a-real-one"),
            ("client_id", client_id),
        ])
        .send()
        .unwrap()
}

fn limited(answer: Response, what: &str) -> String {
    assert_eq!(answer.status().as_u16(), 429, "{what}");
    let wait: u64 = answer.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=60).contains(&wait), "{what}: {wait}");
    let body: Value = answer.json().unwrap();
    assert_eq!(body["error"], "invalid_request", "{what}: {body}");
    body["error_description"].as_str().unwrap().to_string()
}

#[test]
fn the_token_endpoint_is_limited_per_address_and_per_client() {
    let db = TestDb::new();
    workspace(&db, "acme");
    let server = Server::start_with(
        &db,
        "127.0.0.1:0",
        &[],
        &[("JILITY_OAUTH_TOKEN_LIMIT", "5")],
    );
    let root = server.root().to_string();
    let one = from("127.0.0.1");
    // Five requests from one address are answered (each a bad refresh token); the sixth,
    // whatever its client, is refused before it is looked at; so is a revocation.
    for i in 0..5 {
        let answer = refresh_from(&one, &root, "jilc_a");
        assert_eq!(answer.status().as_u16(), 400, "request {i}");
        assert_eq!(answer.json::<Value>().unwrap()["error"], "invalid_grant");
    }
    let said = limited(refresh_from(&one, &root, "jilc_a"), "the sixth");
    assert!(said.contains("this address"), "{said}");
    limited(refresh_from(&one, &root, "jilc_other"), "another client");
    let revoke = one
        .post(format!("{root}/oauth/revoke"))
        .form(&[("token", "jil_rt_whatever")])
        .send()
        .unwrap();
    limited(revoke, "a revocation");
    // One client from many addresses: twice the address's limit in all.
    for i in 0..5 {
        let answer = refresh_from(&from("127.0.0.2"), &root, "jilc_a");
        assert_eq!(answer.status().as_u16(), 400, "from .2, request {i}");
    }
    let said = limited(
        refresh_from(&from("127.0.0.3"), &root, "jilc_a"),
        "the client's eleventh",
    );
    assert!(said.contains("this client"), "{said}");
    // Another client from another address is untouched.
    let answer = refresh_from(&from("127.0.0.3"), &root, "jilc_b");
    assert_eq!(answer.status().as_u16(), 400);
}

#[test]
fn a_metadata_document_on_an_ipv4_address_inside_ipv6_is_not_fetched() {
    let db = TestDb::new();
    workspace(&db, "acme");
    person(&db, "mia@example.com", "Mia", "acme", "member");
    let server = Server::start(&db, &[]);
    let mut mia = Browser::signed_in(&server, "mia@example.com");
    for host in [
        "[::127.0.0.1]",                          // IPv4-compatible loopback
        "[::ffff:0:7f00:1]",                      // IPv4-translated loopback
        "[64:ff9b::a9fe:a9fe]",                   // NAT64 of 169.254.169.254
        "[64:ff9b:1::a00:1]",                     // local-use NAT64
        "[2002:a9fe:a9fe::1]",                    // 6to4 of 169.254.169.254
        "[2001:0:4136:e378:8000:63bf:80ff:fffe]", // Teredo, client 127.0.0.1
    ] {
        let app = App {
            client_id: format!("https://{host}/client.json"),
            ..App::register(&server)
        };
        let (status, page) = mia.get(&app.authorize_path(&[]));
        assert_eq!(status, 400, "{host}: {page}");
        assert!(page.contains("private"), "{host}: {page}");
    }
}

/// A metadata document whose redirect URI or `client_uri` holds a NUL (which PostgreSQL's
/// text cannot) is refused on the person's page, as any unusable document is: never a 500
/// with the database's wording.
#[test]
fn a_metadata_document_holding_a_nul_is_refused_as_unusable() {
    let db = TestDb::new();
    workspace(&db, "acme");
    person(&db, "mia@example.com", "Mia", "acme", "member");
    let server = Server::start_with(
        &db,
        "127.0.0.1:0",
        &[],
        &[("JILITY_OAUTH_ALLOW_PRIVATE_CLIENTS", "1")],
    );
    let mut mia = Browser::signed_in(&server, "mia@example.com");
    let nul_uri = format!("{REDIRECT}\u{0}x");
    for (field, value) in [
        ("redirect_uris", json!([nul_uri])),
        ("client_uri", json!("https://client.example/\u{0}")),
    ] {
        let document = serve_document(move |own: &str| {
            let mut doc = json!({"client_id": own, "client_name": "Nul Client",
                   "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none"});
            doc[field] = value.clone();
            doc.to_string()
        });
        let app = App {
            client_id: document,
            ..App::register(&server)
        };
        let (status, page) = mia.get(&app.authorize_path(&[]));
        assert_eq!(status, 400, "{field}: {page}");
        assert!(page.contains("NUL character"), "{field}: {page}");
        for wording in ["invalid byte sequence", "22021", "SQLSTATE"] {
            assert!(!page.contains(wording), "{field}: {page}");
        }
    }
}

/// A parameter sent twice (RFC 6749 §3.1: they must not be) is a fault like any other: the
/// page, nothing sent to the client — whichever copy comes first.
#[test]
fn a_repeated_authorization_parameter_is_refused_on_the_page() {
    let (db, server) = crate::oauth::world();
    drop(server);
    let server = Server::start(&db, &[]);
    let app = App::register(&server);
    let mia = Browser::signed_in(&server, "mia@example.com");
    for (name, second) in [
        ("state", "other"),
        ("response_type", "token"),
        ("redirect_uri", "https://attacker.example/cb"),
        ("scope", "full_access"),
        ("code_challenge_method", "plain"),
    ] {
        let path = format!(
            "{}&{}",
            app.authorize_path(&[]),
            form_urlencoded::Serializer::new(String::new())
                .append_pair(name, second)
                .finish()
        );
        let answer = mia
            .client
            .get(format!("{}{path}", server.root()))
            .header("cookie", mia.cookie_header())
            .send()
            .unwrap();
        let what = format!("{name} twice");
        stays(&answer, &what);
        assert_eq!(answer.status().as_u16(), 400, "{what}");
        let page = answer.text().unwrap();
        assert!(
            page.contains("invalid_request") && page.contains("more than once"),
            "{what}: {page}"
        );
    }
}
