//! The bootstrap command `jility admin create-workspace` against a real PostgreSQL: the
//! token it prints works, a name is taken once, and it needs a database URL. (The tokens
//! themselves: `crates/jility-identity/tests/jility-identity/tokens.rs`.)
//!
//! Each test makes its own database on the server at `JILITY_TEST_DATABASE_URL` (default
//! `postgres://postgres@127.0.0.1:5432/test`) and drops it when done, failed or not.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stderr
)] // assertions in tests; a database left behind is reported on stderr

use std::process::Command;

use jility_cloud::auth::{ScopeSet, TOKEN_PREFIX, Tokens};
use serde_json::Value;

use crate::pg;

use pg::TestDb;

fn jility(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_jility"))
        .args(args)
        .env_remove("DATABASE_URL")
        .env_remove("JILITY_MODE")
        .output()
        .unwrap()
}

#[test]
fn cli_create_workspace_prints_a_working_token() {
    let t = TestDb::new();
    let out = jility(&[
        "admin",
        "create-workspace",
        "acme",
        "--database-url",
        &t.url,
        "--json",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let answer: Value = serde_json::from_str(stdout.trim()).unwrap();
    let members: Vec<&str> = answer
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(members.len(), 2, "{answer}");
    assert_eq!(answer["workspace"], "acme");
    let token = answer["token"].as_str().unwrap();
    assert!(
        token.starts_with(TOKEN_PREFIX) && token.len() >= 41,
        "{token}"
    );
    assert!(
        stdout.trim_start().starts_with("{\"workspace\":"),
        "{stdout}"
    );

    let db = t.connect();
    let tokens = Tokens::new(&db);
    let principal = tokens.authenticate(token).unwrap();
    assert_eq!(principal.workspace, "acme");
    assert_eq!(principal.token_name, "bootstrap");
    assert_eq!(principal.scopes, ScopeSet::full_access());

    // The same name again: refused, nothing written.
    let again = jility(&[
        "admin",
        "create-workspace",
        "acme",
        "--database-url",
        &t.url,
    ]);
    assert!(!again.status.success());
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert!(stderr.contains("already exists"), "{stderr}");
    assert!(again.stdout.is_empty(), "no token printed");
    assert_eq!(db.workspaces().unwrap().len(), 1);
    assert_eq!(tokens.list(principal.workspace_id).unwrap().len(), 1);

    // The human form explains, DATABASE_URL is the default, and the mode does not matter.
    let human = Command::new(env!("CARGO_BIN_EXE_jility"))
        .args(["admin", "create-workspace", "beta"])
        .env("DATABASE_URL", &t.url)
        .env("JILITY_MODE", "cloud")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&human.stdout);
    assert!(human.status.success(), "{text}");
    assert!(
        text.contains("beta") && text.contains(TOKEN_PREFIX),
        "{text}"
    );
    assert!(text.contains("only time"), "{text}");
    assert_eq!(db.workspaces().unwrap().len(), 2);
}

#[test]
fn cli_create_workspace_needs_a_database_url() {
    let out = jility(&["admin", "create-workspace", "acme"]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("database URL"), "{stderr}");
    assert!(stderr.contains("DATABASE_URL"), "{stderr}");
}
