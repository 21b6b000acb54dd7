//! `jility admin`'s people commands through the built binary, against a real PostgreSQL:
//! create-workspace --owner, create-user, add-member, invite, reset-password, their links
//! and their refusals; what they make is checked through `jility_cloud::accounts`.
//!
//! Each test makes its own database on the server at `JILITY_TEST_DATABASE_URL` (default
//! `postgres://postgres@127.0.0.1:5432/test`) and drops it when done, failed or not.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stderr
)] // assertions in tests; a database left behind is reported on stderr

use std::net::IpAddr;
use std::process::Command;

use jility_cloud::accounts::{AcceptAs, Accounts, Role};
use jility_core::errors;
use serde_json::Value;

use crate::browser;
use crate::pg;

use browser::{jility, ok_json};
use pg::TestDb;

fn addr(text: &str) -> IpAddr {
    text.parse().unwrap()
}

/// The secret at the end of a link or path.
fn secret_of(link: &Value) -> String {
    link.as_str()
        .unwrap()
        .rsplit('/')
        .next()
        .unwrap()
        .to_string()
}

#[test]
fn admin_commands_make_owners_users_members_invites_and_resets() {
    let db = TestDb::new();
    // A workspace with a new owner: a set-password link, a path without --url.
    let created = ok_json(
        &db,
        &[
            "--json",
            "admin",
            "create-workspace",
            "acme",
            "--owner",
            "Ada@Example.com",
            "--owner-name",
            "Ada",
        ],
        None,
    );
    assert_eq!(created["workspace"], "acme");
    assert!(created["token"].as_str().unwrap().starts_with("jil_live_"));
    let owner = &created["owner"];
    assert_eq!(owner["user"]["email"], "ada@example.com");
    assert_eq!(owner["user"]["name"], "Ada");
    assert_eq!(owner["created"], true);
    let link = &owner["set_password"];
    assert_eq!(link["path_only"], true);
    assert!(
        link["link"].as_str().unwrap().starts_with("/reset/"),
        "{link}"
    );

    let pool = db.connect();
    let accounts = Accounts::new(&pool);
    let acme = pool.workspace_by_name("acme").unwrap().unwrap();
    let ada = accounts.user_by_email("ada@example.com").unwrap().unwrap();
    assert_eq!(
        accounts.membership(ada.id, acme.id).unwrap(),
        Some(Role::Owner)
    );
    accounts
        .reset_password(&secret_of(&link["link"]), "ada's own password")
        .unwrap();
    accounts
        .login("ada@example.com", "ada's own password", addr("10.8.0.1"))
        .unwrap();

    // A user with a password from stdin; one without gets a whole link with --url.
    let carl = ok_json(
        &db,
        &[
            "--json",
            "admin",
            "create-user",
            "--email",
            "carl@example.com",
            "--name",
            "Carl",
            "--password-stdin",
        ],
        Some("carl's long password\n"),
    );
    assert_eq!(carl["set_password"], Value::Null);
    accounts
        .login("carl@example.com", "carl's long password", addr("10.8.0.1"))
        .unwrap();
    let bob = ok_json(
        &db,
        &[
            "--json",
            "admin",
            "create-user",
            "--email",
            "bob@example.com",
            "--name",
            "Bob",
            "--url",
            "https://jility.example.com/",
        ],
        None,
    );
    let bob_link = bob["set_password"]["link"].as_str().unwrap();
    assert!(
        bob_link.starts_with("https://jility.example.com/reset/"),
        "{bob_link}"
    );

    // Members: added, then given another role.
    let added = ok_json(
        &db,
        &[
            "--json",
            "admin",
            "add-member",
            "--workspace",
            "acme",
            "--email",
            "BOB@example.com",
            "--role",
            "viewer",
        ],
        None,
    );
    assert_eq!(added["member"]["role"], "viewer");
    assert_eq!(added["previous_role"], Value::Null);
    let changed = ok_json(
        &db,
        &[
            "--json",
            "admin",
            "add-member",
            "--workspace",
            "acme",
            "--email",
            "bob@example.com",
            "--role",
            "admin",
        ],
        None,
    );
    assert_eq!(changed["member"]["role"], "admin");
    assert_eq!(changed["previous_role"], "viewer");
    let bob_id = changed["member"]["user"]["id"].as_i64().unwrap();
    assert_eq!(
        accounts.membership(bob_id, acme.id).unwrap(),
        Some(Role::Admin)
    );

    // An invite link from JILITY_PUBLIC_URL, accepted once.
    let out = Command::new(env!("CARGO_BIN_EXE_jility"))
        .args([
            "--json",
            "admin",
            "invite",
            "--workspace",
            "acme",
            "--role",
            "member",
        ])
        .env("DATABASE_URL", &db.url)
        .env("JILITY_PUBLIC_URL", "https://board.example.com")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let invited: Value = serde_json::from_slice(&out.stdout).unwrap();
    let invite_link = invited["link"]["link"].as_str().unwrap();
    assert!(
        invite_link.starts_with("https://board.example.com/invite/"),
        "{invite_link}"
    );
    assert_eq!(invited["invite"]["role"], "member");
    let joined = accounts
        .accept_invite(
            &secret_of(&invited["link"]["link"]),
            AcceptAs::Existing(ada.id + 1000),
        )
        .map(|_| ())
        .unwrap_err();
    assert_eq!(joined.code, errors::NOT_FOUND, "no such user: {joined:?}");
    let carl_id = carl["user"]["id"].as_i64().unwrap();
    accounts
        .accept_invite(
            &secret_of(&invited["link"]["link"]),
            AcceptAs::Existing(carl_id),
        )
        .unwrap();
    assert_eq!(
        accounts.membership(carl_id, acme.id).unwrap(),
        Some(Role::Member)
    );

    // A reset link (markdown output), which ends the user's sessions.
    let session = accounts
        .login("carl@example.com", "carl's long password", addr("10.8.0.2"))
        .unwrap();
    let out = jility(
        &db,
        &["admin", "reset-password", "--email", "carl@example.com"],
        None,
    );
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("/reset/"))
        .unwrap_or_else(|| panic!("no link in {text}"));
    assert!(
        text.contains("put the web board's address in front"),
        "{text}"
    );
    accounts
        .reset_password(line.trim_start_matches("/reset/"), "carl's newer password")
        .unwrap();
    assert!(accounts.session(session.secret.expose()).unwrap().is_none());

    // Refusals: as the error envelope with --json, a hint on stderr without.
    let out = jility(
        &db,
        &["admin", "reset-password", "--email", "nobody@example.com"],
        None,
    );
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no user with the email"), "{stderr}");
    let out = jility(
        &db,
        &[
            "--json",
            "admin",
            "add-member",
            "--workspace",
            "acme",
            "--email",
            "ada@example.com",
            "--role",
            "member",
        ],
        None,
    );
    assert!(!out.status.success());
    let envelope: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        envelope["error"]["code"], "conflict",
        "the last owner: {envelope}"
    );
    let out = jility(
        &db,
        &[
            "admin",
            "invite",
            "--workspace",
            "nowhere",
            "--role",
            "member",
        ],
        None,
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("no workspace named"));
    let out = jility(
        &db,
        &["admin", "invite", "--workspace", "acme", "--role", "boss"],
        None,
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a role"));
    let out = jility(
        &db,
        &[
            "admin",
            "create-user",
            "--email",
            "dan@example.com",
            "--name",
            "Dan",
            "--password-stdin",
        ],
        Some("short\n"),
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("at least 10 characters"));
    let out = Command::new(env!("CARGO_BIN_EXE_jility"))
        .args([
            "admin",
            "create-user",
            "--email",
            "x@example.com",
            "--name",
            "X",
        ])
        .env_remove("DATABASE_URL")
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("No database URL given"));

    // An existing user becomes the owner of a new workspace, with no link.
    let second = ok_json(
        &db,
        &[
            "--json",
            "admin",
            "create-workspace",
            "beta",
            "--owner",
            "carl@example.com",
        ],
        None,
    );
    assert_eq!(second["owner"]["created"], false);
    assert_eq!(second["owner"]["set_password"], Value::Null);
    // An owner email that is not one is refused before anything is made.
    let out = jility(
        &db,
        &[
            "admin",
            "create-workspace",
            "gamma",
            "--owner",
            "not-an-email",
        ],
        None,
    );
    assert!(!out.status.success());
    assert!(pool.workspace_by_name("gamma").unwrap().is_none());
}
