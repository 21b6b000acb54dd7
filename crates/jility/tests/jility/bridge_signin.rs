//! The bridge and the CLI signing in to `jility serve` as a native app (OAuth 2.1, loopback
//! redirect, PKCE), through the built binaries: `jility auth login` prints the link, a
//! person approves (a browser without script here), the redirect reaches the CLI's loopback
//! port and the tokens are kept with mode 0600; the bridge then works with them and
//! refreshes them itself; a bridge with no credentials starts the sign-in and says where.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stderr
)]

use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use mcp_testkit::McpProcess;
use serde_json::{Value, json};

use crate::browser;
use crate::cloud;
use crate::pg;

use browser::{Browser, hidden_fields, person, workspace};
use cloud::Server;
use pg::TestDb;

const BIN: &str = env!("CARGO_BIN_EXE_jility");

fn env_for<'a>(server: &'a Server, home: &'a Path) -> Vec<(&'static str, String)> {
    vec![
        ("JILITY_API_URL", server.root().to_string()),
        ("HOME", home.to_str().unwrap().to_string()),
        (
            "XDG_CONFIG_HOME",
            home.join("config").to_str().unwrap().to_string(),
        ),
    ]
}

/// Start `jility auth login` (no token): the process and the link it printed.
fn login(server: &Server, home: &Path) -> (Child, String, mpsc::Receiver<String>) {
    let mut command = Command::new(BIN);
    command
        .args(["auth", "login"])
        .current_dir(home)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env_for(server, home) {
        command.env(k, v);
    }
    let mut child = command.spawn().unwrap();
    let (lines, rx) = mpsc::channel();
    let stderr = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = lines.send(line);
        }
    });
    let link = loop {
        let line = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("jility auth login prints a link");
        if let Some(url) = line
            .trim()
            .strip_prefix(&format!("{}/oauth/authorize?", server.root()))
        {
            break format!("/oauth/authorize?{url}");
        }
    };
    (child, link, rx)
}

/// A person (signed in as `browser`) approves `link` (a path) with `grant`: the loopback
/// URL the browser is sent to, which is then visited, as a browser would.
fn approve(browser: &mut Browser, link: &str, grant: &[&str]) -> String {
    let (status, page) = browser.get(link);
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("jility bridge"), "{page}");
    let mut fields: Vec<(String, String)> = Vec::new();
    for (name, value) in hidden_fields(&page) {
        fields.push((name, value));
    }
    fields.push(("decision".into(), "approve".into()));
    for scope in grant {
        fields.push(("grant".into(), (*scope).into()));
    }
    let borrowed: Vec<(&str, &str)> = fields
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let answer = browser.post("/oauth/authorize", &borrowed);
    assert_eq!(answer.status().as_u16(), 303);
    let to = answer.headers()["location"].to_str().unwrap().to_string();
    assert!(to.starts_with("http://127.0.0.1:"), "{to}");
    let landed = reqwest::blocking::get(&to).unwrap();
    assert_eq!(landed.status().as_u16(), 200);
    assert!(landed.text().unwrap().contains("Signed in"));
    to
}

fn world() -> (TestDb, Server) {
    let db = TestDb::new();
    workspace(&db, "acme");
    person(&db, "mia@example.com", "Mia", "acme", "member");
    // Access tokens that expire at once: every call of the bridge refreshes first.
    let server = Server::start_with(
        &db,
        "127.0.0.1:0",
        &[],
        &[("JILITY_OAUTH_ACCESS_SECS", "2")],
    );
    (db, server)
}

async fn bridge(server: &Server, home: &Path) -> McpProcess {
    let env = env_for(server, home);
    let mut pairs: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    pairs.push(("JILITY_MODE", "cloud"));
    McpProcess::spawn_bin(BIN, &["--mcp-server"], home, &pairs)
        .await
        .expect("start the bridge")
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn auth_login_signs_in_in_the_browser_and_the_bridge_refreshes_by_itself() {
    let (_db, server) = world();
    let home = tempfile::tempdir().unwrap();
    let (child, link, _lines) = login(&server, home.path());
    let mut mia = Browser::signed_in(&server, "mia@example.com");
    approve(&mut mia, &link, &["tickets:read", "tickets:write"]);
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("Signed in") && said.contains("tickets:read tickets:write"),
        "{said}"
    );
    let file = home.path().join("config/jility/oauth.json");
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let kept: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert!(
        !said.contains(kept["access_token"].as_str().unwrap()),
        "no token printed"
    );

    let rt = runtime();
    rt.block_on(async {
        let mcp = bridge(&server, home.path()).await;
        for n in 0..3 {
            // Each call finds the access token (2 s) about to expire: refreshed first.
            let made = mcp
                .call(
                    "jility_create_ticket",
                    json!({"title": format!("Through the bridge {n}")}),
                )
                .await;
            assert_ne!(made.is_error, Some(true), "{made:?}\n{}", mcp.stderr());
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
        let listed = mcp.call("jility_list_tickets", json!({})).await;
        assert_ne!(listed.is_error, Some(true), "{listed:?}");
        let log = mcp.shutdown().await;
        assert!(
            !log.contains(kept["refresh_token"].as_str().unwrap()),
            "no token logged"
        );
    });
    // The CLI's own calls use the sign-in too (and it has no full_access: refused by scope).
    let mut command = Command::new(BIN);
    command
        .args(["auth", "list-tokens"])
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default());
    for (k, v) in env_for(&server, home.path()) {
        command.env(k, v);
    }
    let out = command.output().unwrap();
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && text.contains("full_access"),
        "{text}"
    );
    // The ticket commands in cloud mode use the sign-in (its 2 s access token refreshed
    // first): the bridge's tickets are there, and a new one is authored as the grant is
    // named (the sign-in of `jility auth login`).
    std::thread::sleep(Duration::from_millis(2_100));
    let cli = |args: &[&str]| {
        let mut command = Command::new(BIN);
        command
            .args(args)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("JILITY_MODE", "cloud");
        for (k, v) in env_for(&server, home.path()) {
            command.env(k, v);
        }
        command.output().unwrap()
    };
    let out = cli(&["ticket", "list"]);
    let listed = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && listed.contains("Through the bridge 2"),
        "{listed}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = cli(&["ticket", "create", "-t", "From the CLI", "--json"]);
    let made: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        made["ticket"]["created_by"], "jility bridge (OAuth)",
        "{made}"
    );
    // Its scopes hold: no delete.
    let number = made["ticket"]["number"].as_str().unwrap().to_string();
    let out = cli(&["ticket", "delete", &number]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && said.contains("tickets:delete"),
        "{said}"
    );
}

#[test]
fn a_bridge_without_credentials_starts_the_sign_in_and_says_where() {
    let (_db, server) = world();
    let home = tempfile::tempdir().unwrap();
    let rt = runtime();
    rt.block_on(async {
        let mcp = bridge(&server, home.path()).await;
        // Until the person signs in, every call says so, with the link.
        let mut link = None;
        for _ in 0..100 {
            let answer = mcp.call("jility_list_tickets", json!({})).await;
            assert_eq!(answer.is_error, Some(true));
            let text = serde_json::to_string(&answer.structured_content).unwrap();
            assert!(text.contains("unauthenticated"), "{text}");
            if let Some(at) = text.find("/oauth/authorize?") {
                let rest = &text[at..];
                let end = rest.find(' ').unwrap_or(rest.len());
                link = Some(rest[..end].to_string());
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let link = link.expect("the link is in the answer");
        let server_ref = &server;
        let approved = tokio::task::block_in_place(|| {
            let mut mia = Browser::signed_in(server_ref, "mia@example.com");
            approve(&mut mia, &link, &["tickets:read"])
        });
        assert!(approved.contains("code="));
        let mut worked = false;
        for _ in 0..100 {
            let answer = mcp.call("jility_list_tickets", json!({})).await;
            if answer.is_error != Some(true) {
                worked = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert!(worked, "{}", mcp.stderr());
        assert!(
            mcp.stderr().contains("open http"),
            "the link is in the log too"
        );
    });
}

#[test]
fn a_revoked_sign_in_is_refused_and_a_new_one_is_taken_up_without_a_restart() {
    let (_db, server) = world();
    let home = tempfile::tempdir().unwrap();
    let sign_in = |server: &Server| {
        let (child, link, _lines) = login(server, home.path());
        let mut mia = Browser::signed_in(server, "mia@example.com");
        approve(&mut mia, &link, &["tickets:read"]);
        assert!(child.wait_with_output().unwrap().status.success());
        mia
    };
    let mut mia = sign_in(&server);
    let rt = runtime();
    rt.block_on(async {
        let mcp = bridge(&server, home.path()).await;
        let listed = mcp.call("jility_list_tickets", json!({})).await;
        assert_ne!(listed.is_error, Some(true), "{listed:?}");
        // Mia revokes the bridge on the settings page: its next call is refused, saying so.
        tokio::task::block_in_place(|| {
            let (_, page) = mia.get("/w/acme/settings/clients");
            let grant = browser::hidden(&page, "grant");
            let csrf = mia.csrf("acme");
            let answer = mia.post(
                "/w/acme/settings/clients/revoke",
                &[("_csrf", &csrf), ("grant", &grant)],
            );
            assert_eq!(answer.status().as_u16(), 303);
        });
        tokio::time::sleep(Duration::from_millis(2_100)).await;
        let refused = mcp.call("jility_list_tickets", json!({})).await;
        assert_eq!(refused.is_error, Some(true), "{refused:?}");
        let text = serde_json::to_string(&refused.structured_content).unwrap();
        assert!(text.contains("unauthenticated"), "{text}");
        // Signed in again in a terminal: the running bridge takes the new sign-in up.
        tokio::task::block_in_place(|| {
            sign_in(&server);
        });
        let again = mcp.call("jility_list_tickets", json!({})).await;
        assert_ne!(again.is_error, Some(true), "{again:?}\n{}", mcp.stderr());
    });
}
