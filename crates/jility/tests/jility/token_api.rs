//! Token management through `jility serve`'s API (`POST/GET/DELETE /api/v1/tokens`) and
//! through the command line (`jility auth create-token | list-tokens | revoke-token |
//! login`), against a real PostgreSQL: scopes of minted tokens enforced, no secret in a
//! listing, revocation, `full_access` required, tenant isolation, bad inputs, the stored
//! token's file mode, and an unreachable API.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stderr
)] // assertions in tests; the server's log is passed on to stderr

use std::os::unix::fs::PermissionsExt;
use std::process::Command;
use std::time::{Duration, Instant};

use jility_cloud::auth::{NewToken, ScopeSet, Tokens};
use reqwest::Method;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::cloud;
use crate::pg;

use cloud::*;
use pg::TestDb;

#[test]
fn tokens_are_minted_listed_and_revoked_through_the_api() {
    let db = TestDb::new();
    let pool = db.connect();
    let tokens = Tokens::new(&pool);
    let (alpha, admin) = workspace(&tokens, "alpha");
    let (_beta, beta) = workspace(&tokens, "beta");
    let server = Server::start(&db, &[]);
    let http = client();

    // Mint a read-only token.
    let created = call_json(
        &http,
        &server,
        Method::POST,
        "/tokens",
        &admin,
        Some(json!({"name": "reader", "scopes": ["tickets:read"], "expires_in_days": 7})),
    );
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    let reader = created.body["token"].as_str().unwrap().to_string();
    assert!(jility_cloud::auth::is_well_formed(&reader));
    assert_eq!(created.body["name"], "reader");
    assert_eq!(created.body["scopes"], json!(["tickets:read"]));
    assert!(reader.starts_with(created.body["prefix"].as_str().unwrap()));
    assert!(created.body["created_at"].is_string());
    assert!(created.body["expires_at"].is_string());
    let reader_id = created.body["id"].as_i64().unwrap();

    // It reads but does not write.
    let read = call_json(&http, &server, Method::GET, "/tickets", &reader, None);
    assert_eq!(read.status, StatusCode::OK, "{}", read.body);
    let write = call_json(
        &http,
        &server,
        Method::POST,
        "/tickets",
        &reader,
        Some(json!({"title": "nope"})),
    );
    assert_eq!(write.status, StatusCode::FORBIDDEN, "{}", write.body);
    assert_eq!(write.code(), "permission_denied");
    assert!(write.message().contains("tickets:write"));

    // The listing shows it, without any secret.
    let listed = call_json(&http, &server, Method::GET, "/tokens", &admin, None);
    assert_eq!(listed.status, StatusCode::OK, "{}", listed.body);
    let all = listed.body["tokens"].as_array().unwrap();
    assert_eq!(all.len(), 2, "bootstrap and reader: {}", listed.body);
    let entry = all.iter().find(|t| t["id"] == reader_id).unwrap();
    assert_eq!(entry["name"], "reader");
    assert_eq!(entry["scopes"], json!(["tickets:read"]));
    assert!(entry["last_used_at"].is_string(), "it was used: {entry}");
    assert!(entry.get("revoked_at").is_none());
    let text = listed.body.to_string();
    assert!(!text.contains(&reader) && !text.contains(&admin));
    assert!(!text.contains("hash"));

    // Workspace B can neither see nor revoke it.
    let foreign = call_json(&http, &server, Method::GET, "/tokens", &beta, None);
    assert_eq!(foreign.body["tokens"].as_array().unwrap().len(), 1);
    assert!(!foreign.body.to_string().contains("reader"));
    let foreign_revoke = call_json(
        &http,
        &server,
        Method::DELETE,
        &format!("/tokens/{reader_id}"),
        &beta,
        None,
    );
    assert_eq!(foreign_revoke.status, StatusCode::NOT_FOUND);
    assert_eq!(foreign_revoke.code(), "not_found");
    let foreign_by_token = call_json(
        &http,
        &server,
        Method::DELETE,
        "/tokens",
        &beta,
        Some(json!({"token": reader})),
    );
    assert_eq!(foreign_by_token.status, StatusCode::NOT_FOUND);
    assert_eq!(
        call_json(&http, &server, Method::GET, "/tickets", &reader, None).status,
        StatusCode::OK,
        "still works after B's attempts"
    );

    // Non-full_access tokens get 403 on every token endpoint.
    for scopes in [
        "tickets:read",
        "tickets:write,tickets:delete,comments:write",
    ] {
        let minted = tokens
            .create(
                alpha.id,
                &NewToken {
                    name: "narrow".into(),
                    scopes: ScopeSet::parse(scopes).unwrap(),
                    expires_at: None,
                    created_by: "tester".into(),
                },
            )
            .unwrap();
        let narrow = minted.token.expose();
        for (method, path, body) in [
            (
                Method::POST,
                "/tokens".to_string(),
                Some(json!({"name": "x", "scopes": ["full_access"]})),
            ),
            (Method::GET, "/tokens".to_string(), None),
            (Method::DELETE, format!("/tokens/{reader_id}"), None),
            (
                Method::DELETE,
                "/tokens".to_string(),
                Some(json!({"id": reader_id})),
            ),
        ] {
            let answer = call_json(&http, &server, method.clone(), &path, narrow, body);
            assert_eq!(answer.status, StatusCode::FORBIDDEN, "{method} {path}");
            assert_eq!(answer.code(), "permission_denied");
            assert!(answer.message().contains("full_access"));
        }
    }

    // Bad inputs: 400 with the envelope.
    for body in [
        json!({"name": "x", "scopes": ["tickets:admin"]}),
        json!({"name": "x", "scopes": []}),
        json!({"name": "  ", "scopes": ["tickets:read"]}),
        json!({"name": "x", "scopes": ["tickets:read"], "expires_in_days": 0}),
        json!({"name": "x", "scopes": ["tickets:read"], "expires_in_days": -3}),
        json!({"name": "x", "scopes": ["tickets:read"], "expires_in_days": 1.5}),
        json!({"name": "x"}),
        json!({"name": "x", "scopes": ["tickets:read"], "admin": true}),
        json!("name"),
    ] {
        let answer = call_json(
            &http,
            &server,
            Method::POST,
            "/tokens",
            &admin,
            Some(body.clone()),
        );
        assert_eq!(
            answer.status,
            StatusCode::BAD_REQUEST,
            "{body}: {}",
            answer.body
        );
        assert_eq!(answer.code(), "invalid_input", "{body}");
    }
    let bad_scope = call_json(
        &http,
        &server,
        Method::POST,
        "/tokens",
        &admin,
        Some(json!({"name": "x", "scopes": ["tickets:admin"]})),
    );
    assert!(bad_scope.message().contains("tickets:admin"));
    for path in ["/tokens/abc", "/tokens/-"] {
        let answer = call_json(&http, &server, Method::DELETE, path, &admin, None);
        assert_eq!(answer.status, StatusCode::BAD_REQUEST, "{path}");
    }
    let neither = call_json(
        &http,
        &server,
        Method::DELETE,
        "/tokens",
        &admin,
        Some(json!({})),
    );
    assert_eq!(neither.status, StatusCode::BAD_REQUEST);
    let missing = call_json(
        &http,
        &server,
        Method::DELETE,
        "/tokens/999999",
        &admin,
        None,
    );
    assert_eq!(missing.status, StatusCode::NOT_FOUND);

    // Revoke it: the record answers, and the token now gets 401 "revoked".
    let revoked = call_json(
        &http,
        &server,
        Method::DELETE,
        &format!("/tokens/{reader_id}"),
        &admin,
        None,
    );
    assert_eq!(revoked.status, StatusCode::OK, "{}", revoked.body);
    assert_eq!(revoked.body["id"], reader_id);
    let revoked_at = revoked.body["revoked_at"].as_str().unwrap().to_string();
    assert!(revoked.body.get("token").is_none());
    let refused = call_json(&http, &server, Method::GET, "/tickets", &reader, None);
    assert_eq!(refused.status, StatusCode::UNAUTHORIZED);
    assert_eq!(refused.code(), "unauthenticated");
    assert!(refused.message().contains("revoked"), "{}", refused.body);
    assert!(refused.message().contains(&revoked_at));
    let listed = call_json(&http, &server, Method::GET, "/tokens", &admin, None);
    let entry = listed.body["tokens"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == reader_id)
        .unwrap()
        .clone();
    assert_eq!(entry["revoked_at"], revoked_at.as_str());

    // Revoking by the token itself (in the body), and a token revoking itself.
    let other = call_json(
        &http,
        &server,
        Method::POST,
        "/tokens",
        &admin,
        Some(json!({"name": "other", "scopes": ["full_access"]})),
    );
    let other_token = other.body["token"].as_str().unwrap().to_string();
    let by_token = call_json(
        &http,
        &server,
        Method::DELETE,
        "/tokens",
        &other_token,
        Some(json!({"token": other_token})),
    );
    assert_eq!(by_token.status, StatusCode::OK, "{}", by_token.body);
    assert_eq!(by_token.body["id"], other.body["id"]);
    let after = call_json(&http, &server, Method::GET, "/tokens", &other_token, None);
    assert_eq!(after.status, StatusCode::UNAUTHORIZED);
    assert!(after.message().contains("revoked"));
}

#[test]
fn the_cli_manages_tokens_through_the_api() {
    let db = TestDb::new();
    let pool = db.connect();
    let tokens = Tokens::new(&pool);
    let (_alpha, admin) = workspace(&tokens, "alpha");
    let server = Server::start(&db, &[]);
    let home = tempfile::tempdir().unwrap();
    let api = server.root();

    // create-token --json: the plaintext, once.
    let created = stdout_json(&jility(
        &[
            "auth",
            "create-token",
            "--name",
            "agent",
            "--scopes",
            "tickets:read,comments:write",
            "--expires-in-days",
            "30",
            "--json",
        ],
        api,
        Some(&admin),
        home.path(),
    ));
    let agent = created["token"].as_str().unwrap().to_string();
    assert!(jility_cloud::auth::is_well_formed(&agent));
    assert_eq!(created["scopes"], json!(["tickets:read", "comments:write"]));
    assert!(created["expires_at"].is_string());
    let agent_id = created["id"].as_i64().unwrap();

    // A trailing /api/v1 in the URL is accepted too.
    let listed = stdout_json(&jility(
        &["auth", "list-tokens", "--json"],
        &format!("{api}/api/v1/"),
        Some(&admin),
        home.path(),
    ));
    let names: Vec<&str> = listed["tokens"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["bootstrap", "agent"]);
    assert!(!listed.to_string().contains(&agent));

    // Markdown listing.
    let markdown = jility(&["auth", "list-tokens"], api, Some(&admin), home.path());
    assert!(markdown.status.success());
    let text = String::from_utf8_lossy(&markdown.stdout);
    assert!(
        text.contains("agent") && text.contains("tickets:read,comments:write"),
        "{text}"
    );

    // A narrow token is refused with the API's message and hint.
    let denied = jility(&["auth", "list-tokens"], api, Some(&agent), home.path());
    assert!(!denied.status.success());
    let err = String::from_utf8_lossy(&denied.stderr);
    assert!(err.contains("full_access"), "{err}");
    let denied_json = jility(
        &["auth", "list-tokens", "--json"],
        api,
        Some(&agent),
        home.path(),
    );
    let envelope: Value = serde_json::from_slice(&denied_json.stdout).unwrap();
    assert_eq!(envelope["error"]["code"], "permission_denied");

    // Bad scopes are refused before any request.
    let bad = jility(
        &[
            "auth",
            "create-token",
            "--name",
            "x",
            "--scopes",
            "tickets:admin",
        ],
        api,
        Some(&admin),
        home.path(),
    );
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("tickets:admin"));

    // revoke-token by id.
    let revoked = jility(
        &["auth", "revoke-token", &agent_id.to_string()],
        api,
        Some(&admin),
        home.path(),
    );
    assert!(
        revoked.status.success(),
        "{}",
        String::from_utf8_lossy(&revoked.stderr)
    );
    assert!(String::from_utf8_lossy(&revoked.stdout).contains("Revoked token"));
    let refused = jility(&["auth", "list-tokens"], api, Some(&agent), home.path());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("revoked"));

    // revoke-token by the token itself.
    let second = stdout_json(&jility(
        &["auth", "create-token", "--name", "second", "--json"],
        api,
        Some(&admin),
        home.path(),
    ));
    assert_eq!(
        second["scopes"],
        json!(["tickets:read"]),
        "the default scope"
    );
    let second_token = second["token"].as_str().unwrap();
    let by_token = stdout_json(&jility(
        &["auth", "revoke-token", second_token, "--json"],
        api,
        Some(&admin),
        home.path(),
    ));
    assert_eq!(by_token["id"], second["id"]);
    assert!(by_token["revoked_at"].is_string());

    // login: a malformed token is refused and not echoed; a good one stored with 0600.
    let malformed = jility(
        &["auth", "login", "--token", "jil_live_tooShortSecret"],
        api,
        None,
        home.path(),
    );
    assert!(!malformed.status.success());
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&malformed.stdout),
        String::from_utf8_lossy(&malformed.stderr)
    );
    assert!(
        all.contains("malformed") && !all.contains("tooShortSecret"),
        "{all}"
    );
    let login = jility(
        &["auth", "login", "--token", &admin],
        api,
        None,
        home.path(),
    );
    assert!(
        login.status.success(),
        "{}",
        String::from_utf8_lossy(&login.stderr)
    );
    let login_out = format!(
        "{}{}",
        String::from_utf8_lossy(&login.stdout),
        String::from_utf8_lossy(&login.stderr)
    );
    assert!(!login_out.contains(&admin), "the token is not printed back");
    let file = home.path().join("config").join("jility").join("token");
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let dir_mode = std::fs::metadata(file.parent().unwrap())
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(dir_mode, 0o700);
    assert_eq!(std::fs::read_to_string(&file).unwrap().trim(), admin);
    let leftovers: Vec<_> = std::fs::read_dir(file.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(leftovers.len(), 1, "no temporary file left: {leftovers:?}");
    let stored = stdout_json(&jility(
        &["auth", "list-tokens", "--json"],
        api,
        None,
        home.path(),
    ));
    assert_eq!(stored["tokens"].as_array().unwrap().len(), 3);

    // Without XDG_CONFIG_HOME: $HOME/.config/jility/token.
    let other_home = tempfile::tempdir().unwrap();
    let plain = Command::new(env!("CARGO_BIN_EXE_jility"))
        .args(["auth", "login", "--token", &admin])
        .env("HOME", other_home.path())
        .env_remove("XDG_CONFIG_HOME")
        .output()
        .unwrap();
    assert!(plain.status.success());
    let file = other_home.path().join(".config/jility/token");
    assert_eq!(
        std::fs::metadata(&file).unwrap().permissions().mode() & 0o777,
        0o600
    );

    // No token at all: a clear error.
    let empty_home = tempfile::tempdir().unwrap();
    let none = jility(&["auth", "list-tokens"], api, None, empty_home.path());
    assert!(!none.status.success());
    assert!(String::from_utf8_lossy(&none.stderr).contains("JILITY_API_TOKEN"));
}

#[test]
fn an_unreachable_api_fails_fast_naming_the_url_not_the_token() {
    let home = tempfile::tempdir().unwrap();
    let token = format!("jil_live_{}", "Secret0".repeat(6));
    for args in [
        &["auth", "list-tokens"][..],
        &["auth", "create-token", "--name", "x"][..],
        &["auth", "revoke-token", "12"][..],
        &["auth", "revoke-token", &token][..],
    ] {
        for json in [false, true] {
            let mut args = args.to_vec();
            if json {
                args.push("--json");
            }
            let started = Instant::now();
            let output = jility(&args, "http://127.0.0.1:1", Some(&token), home.path());
            assert!(started.elapsed() < Duration::from_secs(10), "fails fast");
            assert!(!output.status.success());
            let all = format!(
                "{}{}",
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            );
            assert!(all.contains("http://127.0.0.1:1/api/v1"), "{all}");
            assert!(!all.contains("Secret0"), "the token leaks: {all}");
            if json {
                let envelope: Value = serde_json::from_slice(&output.stdout).unwrap();
                assert_eq!(envelope["error"]["code"], "network_error");
                assert_eq!(envelope["error"]["retryable"], true);
            }
        }
    }
    // The command works whatever JILITY_MODE says, and a bad URL is named as such.
    let bad = jility(
        &["auth", "list-tokens"],
        "ftp://example",
        Some(&token),
        home.path(),
    );
    assert!(String::from_utf8_lossy(&bad.stderr).contains("JILITY_API_URL"));
    // HTTPS only, except to this machine: the token must not cross a network in clear.
    let clear = jility(
        &["auth", "list-tokens", "--json"],
        "http://jility.example.com:3900",
        Some(&token),
        home.path(),
    );
    assert!(!clear.status.success());
    let envelope: Value = serde_json::from_slice(&clear.stdout).unwrap();
    assert_eq!(envelope["error"]["code"], "invalid_input");
    assert!(
        envelope["error"]["message"]
            .as_str()
            .unwrap()
            .contains("HTTPS only"),
        "{envelope}"
    );
    assert!(!String::from_utf8_lossy(&clear.stdout).contains(token.as_str()));
}
