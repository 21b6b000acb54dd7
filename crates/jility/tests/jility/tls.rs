//! `jility serve --tls-cert --tls-key`: HTTPS with a self-signed certificate (the API, and
//! MCP at `/mcp`), and no answer to plain HTTP on the same port.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::Duration;

use jility_cloud::auth::Tokens;
use reqwest::StatusCode;

use crate::cloud;
use crate::pg;

use cloud::*;
use pg::TestDb;

#[test]
fn serves_https_and_not_plain_http() {
    let dir = tempfile::tempdir().unwrap();
    let rcgen::CertifiedKey { cert, signing_key } =
        rcgen::generate_simple_self_signed(vec!["localhost".into(), "127.0.0.1".into()]).unwrap();
    let (cert_pem, key_pem) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    std::fs::write(&cert_pem, cert.pem()).unwrap();
    std::fs::write(&key_pem, signing_key.serialize_pem()).unwrap();

    let db = TestDb::new();
    let pool = db.connect();
    let (_alpha, token) = workspace(&Tokens::new(&pool), "alpha");
    let server = Server::start(
        &db,
        &[
            "--tls-cert",
            cert_pem.to_str().unwrap(),
            "--tls-key",
            key_pem.to_str().unwrap(),
        ],
    );
    assert!(
        server.url.starts_with("https://127.0.0.1:"),
        "{}",
        server.url
    );

    let _ = rustls::crypto::ring::default_provider().install_default();
    let https = reqwest::blocking::Client::builder()
        .tls_certs_only([reqwest::Certificate::from_pem(cert.pem().as_bytes()).unwrap()])
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap();
    let created = https
        .post(format!("{}/tickets", server.url))
        .bearer_auth(&token)
        .json(&serde_json::json!({"title": "Over TLS"}))
        .send()
        .unwrap();
    assert_eq!(created.status(), StatusCode::CREATED, "{}", server.log());
    let answer = https
        .get(format!("{}/tickets/TASK-1", server.url))
        .bearer_auth(&token)
        .send()
        .unwrap();
    assert_eq!(answer.status(), StatusCode::OK, "{}", server.log());
    assert_eq!(
        answer.headers()["strict-transport-security"],
        "max-age=31536000",
        "browsers are told to keep to HTTPS"
    );
    let body: serde_json::Value = answer.json().unwrap();
    assert_eq!(body["ticket"]["title"], "Over TLS");

    // MCP at /mcp over the same TLS port.
    let mcp = https
        .post(format!("{}/mcp", server.root()))
        .bearer_auth(&token)
        .header("accept", "application/json, text/event-stream")
        .json(
            &serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "tls-test", "version": "1"}}}),
        )
        .send()
        .unwrap();
    assert_eq!(mcp.status(), StatusCode::OK, "{}", server.log());
    assert!(mcp.text().unwrap().contains("\"serverInfo\""));

    // The web board's cookies are `Secure` over TLS: the sign-in form's, and the session's.
    let accounts = jility_cloud::accounts::Accounts::new(&pool);
    let ada = accounts
        .create_user("ada@example.com", "Ada", Some("correct horse battery"))
        .unwrap();
    accounts
        .add_member(
            _alpha.id,
            ada.id,
            jility_cloud::accounts::Role::Member,
            jility_cloud::accounts::Actor::Operator,
        )
        .unwrap();
    let form = https
        .get(format!("{}/login", server.root()))
        .send()
        .unwrap();
    let csrf_cookie = form.headers()["set-cookie"].to_str().unwrap().to_string();
    assert!(csrf_cookie.contains("; Secure"), "{csrf_cookie}");
    let csrf = csrf_cookie
        .split(';')
        .next()
        .unwrap()
        .trim_start_matches("jility_csrf=")
        .to_string();
    let no_redirects = reqwest::blocking::Client::builder()
        .tls_certs_only([reqwest::Certificate::from_pem(cert.pem().as_bytes()).unwrap()])
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let signed_in = no_redirects
        .post(format!("{}/login", server.root()))
        .header("cookie", format!("jility_csrf={csrf}"))
        .form(&[
            ("_csrf", csrf.as_str()),
            ("email", "ada@example.com"),
            ("password", "correct horse battery"),
        ])
        .send()
        .unwrap();
    assert_eq!(
        signed_in.status(),
        StatusCode::SEE_OTHER,
        "{}",
        server.log()
    );
    let session = signed_in.headers()["set-cookie"].to_str().unwrap();
    assert!(
        session.starts_with("jility_session=") && session.contains("; Secure"),
        "{session}"
    );

    // A client that does not trust the certificate is refused.
    let untrusting = reqwest::blocking::Client::builder()
        .tls_certs_only(Vec::<reqwest::Certificate>::new())
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap();
    assert!(
        untrusting
            .get(format!("{}/tickets", server.url))
            .bearer_auth(&token)
            .send()
            .is_err()
    );

    let plain = server.url.replacen("https://", "http://", 1);
    let refused = client()
        .get(format!("{plain}/tickets"))
        .bearer_auth(&token)
        .send();
    assert!(refused.is_err(), "plain HTTP was answered: {refused:?}");
}

#[test]
fn a_bad_certificate_stops_the_server_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let cert = dir.path().join("cert.pem");
    std::fs::write(&cert, "not a certificate").unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_jility"))
        .args(["serve", "--listen", "127.0.0.1:0", "--database-url"])
        .arg("postgres://postgres@127.0.0.1:9/none")
        .arg("--tls-cert")
        .arg(&cert)
        .arg("--tls-key")
        .arg(dir.path().join("missing.pem"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("cert.pem"), "{stderr}");
    assert!(!stderr.contains("not a certificate"), "{stderr}");
}
