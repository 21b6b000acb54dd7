//! API tokens against a real PostgreSQL: minting, authentication, expiry, revocation,
//! workspace scoping, hashed storage (a dump holds no token) and scopes (the bootstrap
//! command `jility admin create-workspace`: `crates/jility/tests/jility/tokens_cli.rs`).
//!
//! Each test makes its own database on the server at `JILITY_TEST_DATABASE_URL` (default
//! `postgres://postgres@127.0.0.1:5432/test`) and drops it when done, failed or not.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stderr
)] // assertions in tests; a database left behind is reported on stderr

use std::collections::BTreeSet;
use std::process::Command;

use chrono::{SecondsFormat, TimeDelta, Utc};
use jility_core::errors;
use jility_identity::auth::{
    AuthError, NewToken, PlainToken, Scope, ScopeSet, TOKEN_PREFIX, TokenRef, Tokens,
};
use mcp_common_core::{ErrorClass, ToolError};
use serde_json::Value;

use crate::pg;

use pg::TestDb;

fn new_token(name: &str, scopes: &str) -> NewToken {
    NewToken {
        name: name.to_string(),
        scopes: ScopeSet::parse(scopes).unwrap(),
        expires_at: None,
        created_by: "tester".to_string(),
    }
}

fn auth_error(tokens: &Tokens, token: &str) -> AuthError {
    match tokens.authenticate(token) {
        Ok(principal) => panic!("token accepted: {principal:?}"),
        Err(err) => err,
    }
}

/// The error an auth failure becomes, checked to never carry `token`.
fn tool_error(err: AuthError, token: &str) -> ToolError {
    let err = ToolError::from(err);
    assert_eq!(err.code, errors::UNAUTHENTICATED);
    assert_eq!(err.class(), ErrorClass::Unauthenticated);
    assert_eq!(err.class().http_status(), 401);
    assert!(!err.retryable());
    let wire = serde_json::to_string(&err).unwrap();
    assert!(
        token.trim().is_empty() || !wire.contains(token),
        "the error carries the token: {wire}"
    );
    err
}

#[test]
fn minted_tokens_have_the_format_and_differ() {
    let mut seen = BTreeSet::new();
    let mut chars = BTreeSet::new();
    for _ in 0..200 {
        let token = PlainToken::mint().unwrap();
        let text = token.expose();
        assert!(text.starts_with(TOKEN_PREFIX), "{text}");
        let random = &text[TOKEN_PREFIX.len()..];
        assert!(text.len() >= 9 + 32, "{text}");
        assert_eq!(random.len(), 40);
        assert!(random.bytes().all(|b| b.is_ascii_alphanumeric()), "{text}");
        chars.extend(random.chars());
        assert!(seen.insert(text.to_string()), "a token came twice");
        assert!(jility_identity::auth::is_well_formed(text));
        assert!(!format!("{token:?}").contains(random));
    }
    // 8,000 draws from 62 characters: all of them show up (a missing one is ~1e-54 likely).
    assert_eq!(chars.len(), 62, "the alphabet is [A-Za-z0-9]: {chars:?}");
}

#[test]
fn authenticate_with_scopes_and_refuse_unknown_and_malformed() {
    let t = TestDb::new();
    let db = t.connect();
    let tokens = Tokens::new(&db);
    let (ws, boot) = tokens
        .create_workspace("acme", "bootstrap", "admin")
        .unwrap();
    assert_eq!(ws.name, "acme");
    assert_eq!(boot.record.scopes, ScopeSet::full_access());
    assert_eq!(boot.record.workspace_id, ws.id);

    let reader = tokens
        .create(ws.id, &new_token("reader", "tickets:read,comments:write"))
        .unwrap();
    assert_ne!(reader.token, boot.token);
    let principal = tokens.authenticate(reader.token.expose()).unwrap();
    assert_eq!(principal.workspace_id, ws.id);
    assert_eq!(principal.workspace, "acme");
    assert_eq!(principal.token_id, reader.record.id);
    assert_eq!(principal.token_name, "reader");
    assert_eq!(
        principal.scopes.iter().collect::<Vec<_>>(),
        [Scope::TicketsRead, Scope::CommentsWrite]
    );
    assert!(principal.allows(Scope::TicketsRead));
    assert!(!principal.allows(Scope::TicketsWrite));
    let denied = principal.require(Scope::TicketsDelete).unwrap_err();
    assert_eq!(denied.code, errors::PERMISSION_DENIED);
    assert!(denied.message.contains("tickets:delete"), "{denied}");

    // Surrounding whitespace (a pasted header) is forgiven.
    let boot_principal = tokens
        .authenticate(&format!(" {} \n", boot.token.expose()))
        .unwrap();
    assert!(boot_principal.allows(Scope::TicketsDelete));

    // Authentication records the use, at most once a minute.
    let used = |id: i64| -> Option<String> {
        tokens
            .list(ws.id)
            .unwrap()
            .into_iter()
            .find(|r| r.id == id)
            .unwrap()
            .last_used_at
    };
    let first = used(reader.record.id).expect("last_used_at is set");
    tokens.authenticate(reader.token.expose()).unwrap();
    assert_eq!(used(reader.record.id), Some(first));

    // A well-formed token that does not exist.
    let unknown = PlainToken::mint().unwrap();
    let err = auth_error(&tokens, unknown.expose());
    assert!(matches!(err, AuthError::Unknown), "{err:?}");
    let err = tool_error(err, unknown.expose());
    assert!(err.message.contains("not valid"), "{err}");

    // Malformed: wrong prefix, too short, bad characters, empty.
    let random = &reader.token.expose()[TOKEN_PREFIX.len()..];
    for bad in [
        format!("jil_test_{random}"),
        format!("{TOKEN_PREFIX}{}", &random[..20]),
        format!("{TOKEN_PREFIX}{}-", &random[..39]),
        random.to_string(),
        String::new(),
    ] {
        let err = auth_error(&tokens, &bad);
        assert!(matches!(err, AuthError::Malformed), "{bad}: {err:?}");
        let err = tool_error(err, &bad);
        assert!(err.message.contains("malformed"), "{err}");
    }
    // One character changed: a different hash, unknown.
    let mut altered = reader.token.expose().to_string();
    let last = altered.pop().unwrap();
    altered.push(if last == 'a' { 'b' } else { 'a' });
    assert!(matches!(auth_error(&tokens, &altered), AuthError::Unknown));
}

#[test]
fn expired_tokens_are_refused_with_the_time() {
    let t = TestDb::new();
    let db = t.connect();
    let tokens = Tokens::new(&db);
    let (ws, _) = tokens
        .create_workspace("acme", "bootstrap", "admin")
        .unwrap();

    // An expiry in the past cannot be given.
    let mut past = new_token("past", "tickets:read");
    past.expires_at = Some(Utc::now() - TimeDelta::hours(1));
    let err = tokens.create(ws.id, &past).unwrap_err();
    assert_eq!(err.code, errors::INVALID_INPUT);

    let mut soon = new_token("soon", "tickets:read");
    soon.expires_at = Some(Utc::now() + TimeDelta::days(1));
    let minted = tokens.create(ws.id, &soon).unwrap();
    assert!(minted.record.expires_at.is_some());
    tokens.authenticate(minted.token.expose()).unwrap();
    assert!(minted.record.is_active(Utc::now()));

    // Time passes: move the expiry into the past.
    let expired_at =
        (Utc::now() - TimeDelta::minutes(5)).to_rfc3339_opts(SecondsFormat::Millis, true);
    t.client()
        .execute(
            "UPDATE api_tokens SET expires_at = $2 WHERE id = $1",
            &[&minted.record.id, &expired_at],
        )
        .unwrap();
    let err = auth_error(&tokens, minted.token.expose());
    match &err {
        AuthError::Expired { at } => assert_eq!(at, &expired_at),
        other => panic!("expected Expired, got {other:?}"),
    }
    let err = tool_error(err, minted.token.expose());
    assert!(err.message.contains("expired"), "{err}");
    assert!(err.message.contains(&expired_at), "{err}");
    assert!(err.hint_text().contains("expired"), "{}", err.hint_text());
    assert!(err.hint_text().contains(&expired_at), "{}", err.hint_text());
    let listed = tokens.list(ws.id).unwrap();
    let record = listed.iter().find(|r| r.id == minted.record.id).unwrap();
    assert!(!record.is_active(Utc::now()));
}

#[test]
fn revoked_tokens_are_refused_and_revocation_is_scoped() {
    let t = TestDb::new();
    let db = t.connect();
    let tokens = Tokens::new(&db);
    let (a, a_boot) = tokens
        .create_workspace("alpha", "bootstrap", "admin")
        .unwrap();
    let (b, b_boot) = tokens
        .create_workspace("beta", "bootstrap", "admin")
        .unwrap();
    let a_agent = tokens
        .create(a.id, &new_token("agent", "tickets:write"))
        .unwrap();

    // Workspace B can revoke A's tokens neither by id nor by the token itself.
    for which in [
        TokenRef::Id(a_agent.record.id),
        TokenRef::Token(a_agent.token.clone()),
        TokenRef::Id(a_boot.record.id),
    ] {
        let err = tokens.revoke(b.id, &which).unwrap_err();
        assert_eq!(err.code, errors::NOT_FOUND, "{err}");
        assert!(!err.message.contains(a_agent.token.expose()));
    }
    tokens.authenticate(a_agent.token.expose()).unwrap();
    tokens.authenticate(a_boot.token.expose()).unwrap();
    assert!(
        tokens
            .list(a.id)
            .unwrap()
            .iter()
            .all(|r| r.revoked_at.is_none())
    );

    // A revokes its own, by id…
    let revoked = tokens
        .revoke(a.id, &TokenRef::Id(a_agent.record.id))
        .unwrap();
    let at = revoked.revoked_at.clone().expect("revoked_at is set");
    let err = auth_error(&tokens, a_agent.token.expose());
    match &err {
        AuthError::Revoked { at: when } => assert_eq!(when, &at),
        other => panic!("expected Revoked, got {other:?}"),
    }
    let err = tool_error(err, a_agent.token.expose());
    assert!(err.message.contains("revoked"), "{err}");
    assert!(err.message.contains(&at), "{err}");
    assert!(err.hint_text().contains(&at), "{}", err.hint_text());
    // Revoking again keeps the first time.
    let again = tokens
        .revoke(a.id, &TokenRef::Id(a_agent.record.id))
        .unwrap();
    assert_eq!(again.revoked_at, Some(at));

    // …and by the token itself (parsed as a CLI argument would be).
    let which: TokenRef = a_boot.token.expose().parse().unwrap();
    let revoked = tokens.revoke(a.id, &which).unwrap();
    assert_eq!(revoked.id, a_boot.record.id);
    assert!(matches!(
        auth_error(&tokens, a_boot.token.expose()),
        AuthError::Revoked { .. }
    ));
    // B's token is untouched.
    assert_eq!(
        tokens
            .authenticate(b_boot.token.expose())
            .unwrap()
            .workspace_id,
        b.id
    );
    // An unknown id in one's own workspace is not found either.
    assert_eq!(
        tokens
            .revoke(b.id, &TokenRef::Id(999_999))
            .unwrap_err()
            .code,
        errors::NOT_FOUND
    );
}

#[test]
fn listings_show_no_secret() {
    let t = TestDb::new();
    let db = t.connect();
    let tokens = Tokens::new(&db);
    let (a, boot) = tokens
        .create_workspace("alpha", "bootstrap", "admin")
        .unwrap();
    let (b, _) = tokens
        .create_workspace("beta", "bootstrap", "admin")
        .unwrap();
    let agent = tokens
        .create(a.id, &new_token("agent", "tickets:read"))
        .unwrap();
    let listed = tokens.list(a.id).unwrap();
    assert_eq!(
        listed.iter().map(|r| r.name.as_str()).collect::<Vec<_>>(),
        ["bootstrap", "agent"]
    );
    assert_eq!(tokens.list(b.id).unwrap().len(), 1, "B sees only its own");
    let json = serde_json::to_string(&listed).unwrap();
    let debug = format!("{listed:?}");
    for minted in [&boot, &agent] {
        let secret = minted.token.expose();
        let hash = minted.token.hash().to_hex().to_string();
        for shown in [&json, &debug] {
            assert!(!shown.contains(secret), "plaintext listed: {shown}");
            assert!(!shown.contains(&secret[TOKEN_PREFIX.len()..]));
            assert!(!shown.contains(&hash), "hash listed: {shown}");
        }
        assert!(json.contains(&minted.token.display_prefix()));
    }
    let value: Value = serde_json::from_str(&json).unwrap();
    let keys: BTreeSet<&str> = value[0]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert!(
        !keys.iter().any(|k| k.contains("hash") || *k == "token"),
        "{keys:?}"
    );
    assert_eq!(value[1]["scopes"], serde_json::json!(["tickets:read"]));
}

#[test]
fn a_dump_of_the_database_contains_no_token() {
    let t = TestDb::new();
    let db = t.connect();
    let tokens = Tokens::new(&db);
    let (ws, boot) = tokens
        .create_workspace("acme", "bootstrap", "admin")
        .unwrap();
    let mut secrets = vec![boot.token.clone()];
    for (name, scopes) in [
        ("reader", "tickets:read"),
        ("writer", "tickets:write,comments:write"),
    ] {
        let minted = tokens.create(ws.id, &new_token(name, scopes)).unwrap();
        tokens.authenticate(minted.token.expose()).unwrap();
        secrets.push(minted.token);
    }
    let revoked = tokens
        .create(ws.id, &new_token("gone", "full_access"))
        .unwrap();
    tokens
        .revoke(ws.id, &TokenRef::Token(revoked.token.clone()))
        .unwrap();
    secrets.push(revoked.token);

    let pg_dump = std::env::var("PG_DUMP").unwrap_or_else(|_| "/usr/bin/pg_dump".to_string());
    let out = Command::new(&pg_dump)
        .args(["--no-password", "--dbname", &t.url])
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "cannot run pg_dump ({pg_dump}; install the PostgreSQL client or set PG_DUMP): {e}"
            )
        });
    assert!(
        out.status.success(),
        "pg_dump failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dump = String::from_utf8_lossy(&out.stdout);
    assert!(
        dump.contains("api_tokens"),
        "the dump holds the tokens table"
    );
    assert!(dump.contains("bootstrap"), "the dump holds the token rows");
    for secret in &secrets {
        let text = secret.expose();
        assert!(!dump.contains(text), "the dump contains a token");
        // Not even the part after the display prefix.
        assert!(!dump.contains(&text[TOKEN_PREFIX.len() + 4..]));
        assert!(dump.contains(&secret.display_prefix()));
    }
}

#[test]
fn full_access_implies_the_others_and_read_does_not_write() {
    let full = ScopeSet::full_access();
    for scope in Scope::ALL {
        assert!(full.allows(scope), "{scope}");
        assert!(full.require(scope).is_ok());
    }
    let read = ScopeSet::parse("tickets:read").unwrap();
    assert!(read.allows(Scope::TicketsRead));
    for scope in [
        Scope::TicketsWrite,
        Scope::TicketsDelete,
        Scope::CommentsWrite,
        Scope::FullAccess,
    ] {
        assert!(!read.allows(scope), "{scope}");
        let err = read.require(scope).unwrap_err();
        assert_eq!(err.code, errors::PERMISSION_DENIED);
        assert!(err.message.contains(scope.as_str()));
    }
    let write = ScopeSet::parse("tickets:write").unwrap();
    assert!(!write.allows(Scope::TicketsDelete));
    assert!(ScopeSet::parse("tickets:read,admin").is_err());
    assert!(ScopeSet::parse("").is_err());
    assert_eq!(
        ScopeSet::parse("full_access,tickets:read")
            .unwrap()
            .to_string(),
        "tickets:read,full_access"
    );
}

#[test]
fn workspace_names_are_unique_and_nothing_is_half_written() {
    let t = TestDb::new();
    let db = t.connect();
    let tokens = Tokens::new(&db);
    tokens
        .create_workspace("acme", "bootstrap", "admin")
        .unwrap();
    let err = tokens
        .create_workspace(" acme ", "bootstrap", "admin")
        .unwrap_err();
    assert_eq!(err.code, errors::ALREADY_EXISTS, "{err}");
    assert!(err.message.contains("acme"));
    assert_eq!(db.workspaces().unwrap().len(), 1);
    let count: i64 = t
        .client()
        .query_one("SELECT count(*) FROM api_tokens", &[])
        .unwrap()
        .get(0);
    assert_eq!(count, 1);
    // Names go into URLs and onto screens: no look-alikes, nothing a path rewrites.
    for bad in [
        "  ",
        "Acme",
        "ａｃｍｅ",
        "ac\u{200b}me",
        ".",
        "..",
        "../acme",
        "a/b",
        "x?y#z",
        "-x",
        "a..b",
        "with space",
    ] {
        let err = tokens
            .create_workspace(bad, "bootstrap", "admin")
            .unwrap_err();
        assert_eq!(err.code, errors::INVALID_INPUT, "{bad:?}: {err}");
    }
    for good in ["team-2", "a.b_c", "9lives"] {
        tokens
            .create_workspace(good, "bootstrap", "admin")
            .unwrap_or_else(|e| panic!("{good}: {e}"));
    }
    // A token's name never looks like a person's email.
    let acme = db.workspace_by_name("acme").unwrap().unwrap();
    let err = tokens
        .create(
            acme.id,
            &NewToken {
                name: "ada@example.com".into(),
                scopes: ScopeSet::parse("tickets:read").unwrap(),
                expires_at: None,
                created_by: "admin".into(),
            },
        )
        .unwrap_err();
    assert_eq!(err.code, errors::INVALID_INPUT, "{err}");
}
