//! People in cloud mode against a real PostgreSQL: accounts and passwords (Argon2id, never
//! in clear), sign-in (one error for an unknown email and a wrong password; limits per
//! account and per address, checked before any password), web sessions (expiry, logout,
//! CSRF token), roles and their rules, invites and password resets (single use, expiry),
//! and tokens minted by a person. The `jility admin` people commands: `accounts_cli.rs`.
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

use jility_core::errors;
use jility_identity::accounts::{
    ACCOUNT_FAILURES, ADDRESS_FAILURES, AcceptAs, Accounts, Actor, ResetFor, Role, User,
};
use jility_identity::auth::{NewToken, Scope, ScopeSet, Tokens};
use jility_pg::store::{PgDatabase, Workspace};
use mcp_common_core::{ErrorClass, ErrorCode, ToolError, codes};

use crate::pg;

use pg::TestDb;

const PASSWORD: &str = "correct horse battery";

/// A database with a workspace `acme` and its owner `owner@example.com` (password
/// [`PASSWORD`]).
struct World {
    accounts: Accounts,
    db: PgDatabase,
    workspace: Workspace,
    owner: User,
    test_db: TestDb,
}

fn world() -> World {
    let test_db = TestDb::new();
    let db = test_db.connect();
    let accounts = Accounts::new(&db);
    let workspace = db.create_workspace("acme").unwrap();
    let owner = accounts
        .create_user("Owner@Example.com", "Olive Owner", Some(PASSWORD))
        .unwrap();
    accounts
        .add_member(workspace.id, owner.id, Role::Owner, Actor::Operator)
        .unwrap();
    World {
        accounts,
        db,
        workspace,
        owner,
        test_db,
    }
}

impl World {
    /// A user with [`PASSWORD`] and `role` in `acme` (by the operator).
    fn member(&self, email: &str, role: Role) -> User {
        let user = self
            .accounts
            .create_user(email, email, Some(PASSWORD))
            .unwrap();
        self.accounts
            .add_member(self.workspace.id, user.id, role, Actor::Operator)
            .unwrap();
        user
    }

    fn sql(&self, statement: &str) {
        self.test_db.client().batch_execute(statement).unwrap();
    }
}

fn addr(text: &str) -> IpAddr {
    text.parse().unwrap()
}

fn err<T: std::fmt::Debug>(result: Result<T, ToolError>) -> ToolError {
    match result {
        Ok(value) => panic!("expected an error, got {value:?}"),
        Err(err) => err,
    }
}

#[test]
fn a_user_signs_in_and_the_session_is_found_by_its_secret() {
    let w = world();
    assert_eq!(w.owner.email, "owner@example.com", "emails are lower-cased");
    assert!(w.owner.has_password);
    let found = w.accounts.user_by_email(" OWNER@example.COM ").unwrap();
    assert_eq!(found.as_ref(), Some(&w.owner));

    let new = w
        .accounts
        .login("OWNER@example.com", PASSWORD, addr("10.0.0.1"))
        .unwrap();
    assert_eq!(new.session.user, w.owner);
    assert!(!format!("{new:?}").contains(new.secret.expose()), "{new:?}");
    let session = w.accounts.session(new.secret.expose()).unwrap().unwrap();
    assert_eq!(session, new.session);
    // The CSRF token is stable for the session and differs from another's.
    let again = w.accounts.session(new.secret.expose()).unwrap().unwrap();
    assert_eq!(again.csrf_token, new.session.csrf_token);
    assert!(session.csrf_matches(&new.session.csrf_token));
    assert!(!session.csrf_matches("forged"));
    let other = w
        .accounts
        .login("owner@example.com", PASSWORD, addr("10.0.0.1"))
        .unwrap();
    assert_ne!(other.session.csrf_token, new.session.csrf_token);
    assert_ne!(other.secret, new.secret);

    // A taken email (in any case) is a conflict with a hint; bad input is refused clearly.
    let taken = err(w.accounts.create_user("OWNER@EXAMPLE.COM", "Someone", None));
    assert_eq!(taken.code, codes::CONFLICT);
    assert!(taken.hint.is_some());
    for bad in [
        "no-at-sign",
        "two@@example.com",
        "a@b@c",
        "@example.com",
        "x@",
    ] {
        let e = err(w.accounts.create_user(bad, "X", None));
        assert_eq!(e.code, errors::INVALID_INPUT, "{bad}");
    }
    let long = format!("{}@example.com", "a".repeat(250));
    assert_eq!(
        err(w.accounts.create_user(&long, "X", None)).code,
        errors::INVALID_INPUT
    );
    for bad in ["", "   ", "tab\there", &"n".repeat(101)] {
        let e = err(w.accounts.create_user("n@example.com", bad, None));
        assert_eq!(e.code, errors::INVALID_INPUT, "{bad:?}");
    }
    let short = err(w.accounts.create_user("p@example.com", "P", Some("short")));
    assert_eq!(short.code, errors::INVALID_INPUT);
    assert!(short.message.contains("10"), "{}", short.message);
    let huge = "x".repeat(1025);
    let e = err(w.accounts.create_user("p@example.com", "P", Some(&huge)));
    assert!(e.message.contains("1024"), "{}", e.message);
    assert!(w.accounts.user_by_email("p@example.com").unwrap().is_none());
}

#[test]
fn an_unknown_email_and_a_wrong_password_answer_the_same() {
    let w = world();
    let nopass = w
        .accounts
        .create_user("nopass@example.com", "No Password", None)
        .unwrap();
    assert!(!nopass.has_password);
    let at = addr("10.0.0.2");
    let before = w.accounts.password_verifications();
    let wrong = err(w.accounts.login("owner@example.com", "wrong password!", at));
    let unknown = err(w.accounts.login("nobody@example.com", PASSWORD, at));
    let without = err(w.accounts.login("nopass@example.com", PASSWORD, at));
    assert_eq!(wrong, unknown);
    assert_eq!(wrong, without);
    assert_eq!(wrong.code, errors::UNAUTHENTICATED);
    assert_eq!(wrong.message, "Email or password is wrong");
    // Each did the same work: one Argon2id verification (a dummy hash when there is none).
    assert_eq!(w.accounts.password_verifications() - before, 3);
    let wire = serde_json::to_string(&wrong).unwrap();
    assert!(!wire.contains("wrong password!") && !wire.contains(PASSWORD));
}

#[test]
fn failed_sign_ins_are_limited_per_account_before_any_password_check() {
    let w = world();
    // Failures from different addresses count for the account.
    for i in 0..ACCOUNT_FAILURES {
        let e = err(w.accounts.login(
            "owner@example.com",
            "not the password",
            addr(&format!("10.1.0.{i}")),
        ));
        assert_eq!(e.code, errors::UNAUTHENTICATED, "attempt {i}");
    }
    let before = w.accounts.password_verifications();
    // Even the right password is refused now, without a verification.
    let limited = err(w
        .accounts
        .login("owner@example.com", PASSWORD, addr("10.1.1.1")));
    assert_eq!(limited.code, codes::RATE_LIMITED);
    assert_eq!(limited.class(), ErrorClass::RateLimited);
    assert!(limited.retryable());
    let wait = limited.retry_after_secs.unwrap();
    assert!((1..=900).contains(&wait), "{wait}");
    assert_eq!(
        w.accounts.password_verifications(),
        before,
        "no Argon2id run"
    );

    // An unknown email is limited alike, with the same words: nothing tells them apart.
    for i in 0..ACCOUNT_FAILURES {
        let e = err(w.accounts.login(
            "ghost@example.com",
            "not the password",
            addr(&format!("10.2.0.{i}")),
        ));
        assert_eq!(e.code, errors::UNAUTHENTICATED);
    }
    let ghost = err(w
        .accounts
        .login("Ghost@Example.com", PASSWORD, addr("10.2.1.1")));
    // The same words but for the seconds to wait, which may have ticked between the two.
    let words = |hint: &Option<String>| {
        hint.as_deref()
            .map(|h| h.replace(|c: char| c.is_ascii_digit(), "#"))
    };
    assert_eq!(
        (ghost.code, &ghost.message, words(&ghost.hint)),
        (limited.code, &limited.message, words(&limited.hint))
    );
    assert!(
        ghost
            .hint
            .as_deref()
            .is_some_and(|h| h.contains(" s, then sign in"))
    );

    // When the failures leave the window, the account signs in again.
    w.sql("UPDATE login_failures SET at = '2000-01-01T00:00:00.000Z'");
    w.accounts
        .login("owner@example.com", PASSWORD, addr("10.1.1.1"))
        .unwrap();
}

#[test]
fn a_successful_sign_in_clears_the_account_count_but_not_the_address() {
    let w = world();
    let at = addr("10.3.0.1");
    for _ in 0..ACCOUNT_FAILURES - 1 {
        err(w.accounts.login("owner@example.com", "nope nope nope", at));
    }
    w.accounts.login("owner@example.com", PASSWORD, at).unwrap();
    for _ in 0..ACCOUNT_FAILURES {
        let e = err(w.accounts.login("owner@example.com", "nope nope nope", at));
        assert_eq!(e.code, errors::UNAUTHENTICATED);
    }
    let e = err(w.accounts.login("owner@example.com", PASSWORD, at));
    assert_eq!(e.code, codes::RATE_LIMITED);
}

#[test]
fn failed_sign_ins_are_limited_per_address() {
    let w = world();
    let at = addr("192.0.2.7");
    // Different emails each time: the account limit never applies.
    for i in 0..ADDRESS_FAILURES {
        let e = err(w
            .accounts
            .login(&format!("guess{i}@example.com"), "guess guess", at));
        assert_eq!(e.code, errors::UNAUTHENTICATED, "attempt {i}");
    }
    let before = w.accounts.password_verifications();
    let e = err(w.accounts.login("owner@example.com", PASSWORD, at));
    assert_eq!(e.code, codes::RATE_LIMITED);
    assert_eq!(w.accounts.password_verifications(), before);
    // Another address is not limited, and the refusals did not count for the account.
    w.accounts
        .login("owner@example.com", PASSWORD, addr("192.0.2.8"))
        .unwrap();

    // An IPv6 client counts by its /64.
    for i in 0..ADDRESS_FAILURES {
        err(w.accounts.login(
            &format!("six{i}@example.com"),
            "guess guess",
            addr(&format!("2001:db8:1:2::{:x}", i + 1)),
        ));
    }
    let e = err(w
        .accounts
        .login("owner@example.com", PASSWORD, addr("2001:db8:1:2:ffff::1")));
    assert_eq!(e.code, codes::RATE_LIMITED);
    w.accounts
        .login("owner@example.com", PASSWORD, addr("2001:db8:1:3::1"))
        .unwrap();
}

#[test]
fn sessions_expire_and_end_at_logout() {
    let w = world();
    let at = addr("10.4.0.1");
    let a = w.accounts.login("owner@example.com", PASSWORD, at).unwrap();
    let b = w.accounts.login("owner@example.com", PASSWORD, at).unwrap();
    let c = w.accounts.login("owner@example.com", PASSWORD, at).unwrap();
    // 30 days from sign-in.
    let expires = jility_core::token::parse_time(&a.session.expires_at).unwrap();
    let days = (expires - chrono::Utc::now()).num_hours();
    assert!((29 * 24..=30 * 24).contains(&days), "{days}");

    // Unknown, malformed and empty secrets are no session.
    for bad in [
        "",
        "short",
        &"A".repeat(43),
        &format!("{}!", &a.secret.expose()[1..]),
    ] {
        assert!(w.accounts.session(bad).unwrap().is_none(), "{bad}");
    }

    // Expired.
    w.sql(&format!(
        "UPDATE web_sessions SET expires_at = '2000-01-01T00:00:00.000Z' WHERE id = {}",
        a.session.id
    ));
    assert!(w.accounts.session(a.secret.expose()).unwrap().is_none());

    // last_seen_at is written at most once a minute.
    let seen = |id: i64| -> String {
        w.test_db
            .client()
            .query_one(
                "SELECT last_seen_at FROM web_sessions WHERE id = $1",
                &[&id],
            )
            .unwrap()
            .get(0)
    };
    w.sql(&format!(
        "UPDATE web_sessions SET last_seen_at = '2000-01-01T00:00:00.000Z' WHERE id = {}",
        b.session.id
    ));
    w.accounts.session(b.secret.expose()).unwrap().unwrap();
    let first = seen(b.session.id);
    assert_ne!(first, "2000-01-01T00:00:00.000Z");
    std::thread::sleep(std::time::Duration::from_millis(20));
    w.accounts.session(b.secret.expose()).unwrap().unwrap();
    assert_eq!(seen(b.session.id), first, "written again within a minute");

    // Logout ends one session; logout everywhere the rest.
    w.accounts.logout(b.secret.expose()).unwrap();
    assert!(w.accounts.session(b.secret.expose()).unwrap().is_none());
    assert!(w.accounts.session(c.secret.expose()).unwrap().is_some());
    w.accounts.logout("not a secret").unwrap();
    assert!(w.accounts.logout_everywhere(w.owner.id).unwrap() >= 1);
    assert!(w.accounts.session(c.secret.expose()).unwrap().is_none());
}

#[test]
fn roles_decide_who_manages_members_and_a_workspace_keeps_an_owner() {
    let w = world();
    let ws = w.workspace.id;
    let admin = w.member("admin@example.com", Role::Admin);
    let member = w.member("member@example.com", Role::Member);
    let viewer = w.member("viewer@example.com", Role::Viewer);
    let newcomer = w
        .accounts
        .create_user("new@example.com", "Newcomer", None)
        .unwrap();

    // Scopes follow from the role.
    assert!(Role::Owner.scopes().allows(Scope::TicketsDelete));
    assert!(Role::Admin.scopes().allows(Scope::FullAccess));
    let m = Role::Member.scopes();
    assert!(m.allows(Scope::TicketsRead) && m.allows(Scope::TicketsWrite));
    assert!(m.allows(Scope::CommentsWrite) && !m.allows(Scope::TicketsDelete));
    let v = Role::Viewer.scopes();
    assert!(v.allows(Scope::TicketsRead));
    assert!(!v.allows(Scope::TicketsWrite) && !v.allows(Scope::CommentsWrite));
    assert!(!Role::Viewer.can_write() && Role::Member.can_write());
    assert!(Role::Admin.manages_members() && !Role::Member.manages_members());
    assert_eq!("Viewer".parse::<Role>().unwrap(), Role::Viewer);
    assert_eq!(err("boss".parse::<Role>()).code, errors::INVALID_INPUT);

    // Members and viewers manage nobody.
    for by in [member.id, viewer.id] {
        let e = err(w
            .accounts
            .add_member(ws, newcomer.id, Role::Viewer, Actor::User(by)));
        assert_eq!(e.code, errors::PERMISSION_DENIED);
    }
    // An admin adds members, but makes no owner and touches none.
    let e = err(w
        .accounts
        .add_member(ws, newcomer.id, Role::Owner, Actor::User(admin.id)));
    assert_eq!(e.code, errors::PERMISSION_DENIED);
    w.accounts
        .add_member(ws, newcomer.id, Role::Viewer, Actor::User(admin.id))
        .unwrap();
    let e = err(w
        .accounts
        .add_member(ws, newcomer.id, Role::Viewer, Actor::User(admin.id)));
    assert_eq!(e.code, codes::CONFLICT, "already a member");
    assert_eq!(
        err(w
            .accounts
            .set_role(ws, newcomer.id, Role::Owner, Actor::User(admin.id)))
        .code,
        errors::PERMISSION_DENIED
    );
    assert_eq!(
        err(w
            .accounts
            .set_role(ws, w.owner.id, Role::Member, Actor::User(admin.id)))
        .code,
        errors::PERMISSION_DENIED
    );
    assert_eq!(
        err(w
            .accounts
            .remove_member(ws, w.owner.id, Actor::User(admin.id)))
        .code,
        errors::PERMISSION_DENIED
    );
    w.accounts
        .set_role(ws, newcomer.id, Role::Member, Actor::User(admin.id))
        .unwrap();

    // The last owner is neither demoted nor removed, by anyone, not even leaving.
    for by in [Actor::Operator, Actor::User(w.owner.id)] {
        let e = err(w.accounts.set_role(ws, w.owner.id, Role::Admin, by));
        assert_eq!(e.code, codes::CONFLICT);
        assert!(e.message.contains("owner"), "{}", e.message);
        let e = err(w.accounts.remove_member(ws, w.owner.id, by));
        assert_eq!(e.code, codes::CONFLICT);
    }
    // With a second owner (made by an owner), the first may step down.
    w.accounts
        .set_role(ws, admin.id, Role::Owner, Actor::User(w.owner.id))
        .unwrap();
    w.accounts
        .set_role(ws, w.owner.id, Role::Member, Actor::User(admin.id))
        .unwrap();
    assert_eq!(
        w.accounts.membership(w.owner.id, ws).unwrap(),
        Some(Role::Member)
    );
    // Anyone may leave (a session acts as its user).
    let session = w
        .accounts
        .login("viewer@example.com", PASSWORD, addr("10.9.0.1"))
        .unwrap()
        .session;
    w.accounts
        .remove_member(ws, viewer.id, Actor::from(&session))
        .unwrap();
    assert_eq!(w.accounts.membership(viewer.id, ws).unwrap(), None);

    let members = w.accounts.members(ws).unwrap();
    let roles: Vec<(String, Role)> = members
        .iter()
        .map(|m| (m.user.email.clone(), m.role))
        .collect();
    assert_eq!(roles[0], ("admin@example.com".to_string(), Role::Owner));
    assert_eq!(members.len(), 4);
    let memberships = w.accounts.memberships(admin.id).unwrap();
    assert_eq!(memberships.len(), 1);
    assert_eq!(memberships[0].workspace.name, "acme");
    assert_eq!(memberships[0].role, Role::Owner);

    // A workspace deleted takes its memberships along.
    w.sql(&format!("DELETE FROM workspaces WHERE id = {ws}"));
    assert!(w.accounts.memberships(admin.id).unwrap().is_empty());
}

#[test]
fn tokens_minted_by_a_person_record_them_and_stay_within_their_role() {
    let w = world();
    let member = w.member("member@example.com", Role::Member);
    let viewer = w.member("viewer@example.com", Role::Viewer);
    let outsider = w
        .accounts
        .create_user("out@example.com", "Out", Some(PASSWORD))
        .unwrap();
    let tokens = Tokens::new(&w.db);
    let new = |scopes: &str| NewToken {
        name: "laptop".into(),
        scopes: ScopeSet::parse(scopes).unwrap(),
        expires_at: None,
        created_by: "ignored".into(),
    };
    let minted = tokens
        .create_for_user(
            w.workspace.id,
            member.id,
            &new("tickets:read,tickets:write"),
            50,
        )
        .unwrap();
    assert_eq!(minted.record.created_by, "member@example.com");
    assert_eq!(
        tokens.minted_by(w.workspace.id, minted.record.id).unwrap(),
        Some(member.id)
    );
    let e = err(tokens.create_for_user(w.workspace.id, member.id, &new("tickets:delete"), 50));
    assert_eq!(e.code, errors::PERMISSION_DENIED);
    let e = err(tokens.create_for_user(w.workspace.id, viewer.id, &new("tickets:write"), 50));
    assert_eq!(e.code, errors::PERMISSION_DENIED);
    tokens
        .create_for_user(w.workspace.id, viewer.id, &new("tickets:read"), 50)
        .unwrap();
    let e = err(tokens.create_for_user(w.workspace.id, outsider.id, &new("tickets:read"), 50));
    assert_eq!(e.code, errors::PERMISSION_DENIED);
    // Tokens minted otherwise record no person.
    let plain = tokens.create(w.workspace.id, &new("tickets:read")).unwrap();
    assert_eq!(
        tokens.minted_by(w.workspace.id, plain.record.id).unwrap(),
        None
    );
}

#[test]
fn an_invite_is_used_once_and_expires() {
    let w = world();
    let ws = w.workspace.id;
    let admin = w.member("admin@example.com", Role::Admin);
    let member = w.member("member@example.com", Role::Member);

    // Who may invite whom.
    assert_eq!(
        err(w
            .accounts
            .create_invite(ws, Role::Viewer, Actor::User(member.id)))
        .code,
        errors::PERMISSION_DENIED
    );
    assert_eq!(
        err(w
            .accounts
            .create_invite(ws, Role::Owner, Actor::User(admin.id)))
        .code,
        errors::PERMISSION_DENIED
    );
    let (secret, invite) = w
        .accounts
        .create_invite(ws, Role::Member, Actor::User(admin.id))
        .unwrap();
    assert!(!format!("{secret:?}").contains(secret.expose()));
    assert_eq!(invite.created_by, Some(admin.id));
    assert_eq!(w.accounts.invites(ws).unwrap(), vec![invite.clone()]);
    let info = w
        .accounts
        .invite_by_secret(secret.expose())
        .unwrap()
        .unwrap();
    assert_eq!((info.workspace.as_str(), info.role), ("acme", Role::Member));

    // Accepted as a new account: a member who signs in.
    let joined = w
        .accounts
        .accept_invite(
            secret.expose(),
            AcceptAs::NewUser {
                email: "Newbie@Example.com",
                name: "Newbie",
                password: "a long enough password",
                from: addr("10.1.1.1"),
            },
        )
        .unwrap();
    assert_eq!((joined.workspace.id, joined.role), (ws, Role::Member));
    let newbie = w
        .accounts
        .login(
            "newbie@example.com",
            "a long enough password",
            addr("10.5.0.1"),
        )
        .unwrap()
        .session
        .user;
    assert_eq!(
        w.accounts.membership(newbie.id, ws).unwrap(),
        Some(Role::Member)
    );

    // Single use.
    assert!(
        w.accounts
            .invite_by_secret(secret.expose())
            .unwrap()
            .is_none()
    );
    assert!(w.accounts.invites(ws).unwrap().is_empty());
    let again = err(w.accounts.accept_invite(
        secret.expose(),
        AcceptAs::NewUser {
            email: "second@example.com",
            name: "Second",
            password: "a long enough password",
            from: addr("10.1.1.1"),
        },
    ));
    assert_eq!(again.code, errors::NOT_FOUND);
    assert!(again.message.contains("already used"), "{}", again.message);
    assert!(
        w.accounts
            .user_by_email("second@example.com")
            .unwrap()
            .is_none()
    );

    // An existing member accepting is a conflict that leaves the invite usable; another
    // existing user joins with it.
    let (secret, _) = w
        .accounts
        .create_invite(ws, Role::Viewer, Actor::Operator)
        .unwrap();
    let e = err(w
        .accounts
        .accept_invite(secret.expose(), AcceptAs::Existing(member.id)));
    assert_eq!(e.code, codes::CONFLICT);
    let outsider = w
        .accounts
        .create_user("out@example.com", "Out", Some(PASSWORD))
        .unwrap();
    let joined = w
        .accounts
        .accept_invite(secret.expose(), AcceptAs::Existing(outsider.id))
        .unwrap();
    assert_eq!(joined.role, Role::Viewer);

    // Expired.
    let (secret, invite) = w
        .accounts
        .create_invite(ws, Role::Viewer, Actor::Operator)
        .unwrap();
    w.sql(&format!(
        "UPDATE invites SET expires_at = '2000-01-01T00:00:00.000Z' WHERE id = {}",
        invite.id
    ));
    assert!(
        w.accounts
            .invite_by_secret(secret.expose())
            .unwrap()
            .is_none()
    );
    let e = err(w.accounts.accept_invite(
        secret.expose(),
        AcceptAs::NewUser {
            email: "late@example.com",
            name: "Late",
            password: "a long enough password",
            from: addr("10.1.1.1"),
        },
    ));
    assert!(e.message.contains("expired"), "{}", e.message);

    // Revoked.
    let (secret, invite) = w
        .accounts
        .create_invite(ws, Role::Viewer, Actor::User(admin.id))
        .unwrap();
    w.accounts
        .revoke_invite(ws, invite.id, Actor::User(admin.id))
        .unwrap();
    let e = err(w
        .accounts
        .accept_invite(secret.expose(), AcceptAs::Existing(admin.id)));
    assert!(e.message.contains("revoked"), "{}", e.message);
    assert!(w.accounts.invite_by_secret("forged").unwrap().is_none());
}

#[test]
fn an_invite_cannot_be_used_to_list_who_has_an_account() {
    let w = world();
    let ws = w.workspace.id;
    let (secret, _) = w
        .accounts
        .create_invite(ws, Role::Member, Actor::Operator)
        .unwrap();
    let sign_up = |email: &str, from: &str| {
        w.accounts.accept_invite(
            secret.expose(),
            AcceptAs::NewUser {
                email,
                name: "Prober",
                password: "a long enough password",
                from: addr(from),
            },
        )
    };
    // A taken email is a conflict (the invite stays unused), counted as a failed sign-in
    // of that email: past the account's limit, the answer is the sign-in limit's, the same
    // for an email nobody has.
    for _ in 0..5 {
        assert_eq!(
            err(sign_up("owner@example.com", "10.9.0.1")).code,
            codes::CONFLICT
        );
    }
    let limited = err(sign_up("OWNER@example.com", "10.9.0.2"));
    assert_eq!(limited.code, codes::RATE_LIMITED, "{limited:?}");
    assert!(limited.retry_after_secs.is_some(), "{limited:?}");
    // Per address too: one address probing many emails is stopped at its limit.
    let taken: Vec<String> = (0..21).map(|n| format!("taken{n}@example.com")).collect();
    for email in &taken {
        w.accounts.create_user(email, "Taken", None).unwrap();
    }
    let seen: Vec<ErrorCode> = taken
        .iter()
        .map(|email| err(sign_up(email, "10.9.0.3")).code)
        .collect();
    assert!(seen[..20].iter().all(|c| *c == codes::CONFLICT), "{seen:?}");
    assert_eq!(seen[20], codes::RATE_LIMITED);
    // The invite is still there, and a new email from another address joins with it.
    let joined = sign_up("fresh@example.com", "10.9.0.4").unwrap();
    assert_eq!(joined.role, Role::Member);
}

#[test]
fn concurrent_changes_keep_an_owner_and_use_an_invite_once() {
    let w = world();
    let ws = w.workspace.id;
    for round in 0..5 {
        // Two owners demote each other at once: one of them stays an owner.
        let other = w.member(&format!("co{round}@example.com"), Role::Owner);
        let current = w
            .accounts
            .members(ws)
            .unwrap()
            .into_iter()
            .filter(|m| m.role == Role::Owner && m.user.id != other.id)
            .map(|m| m.user.id)
            .next()
            .unwrap();
        let results: Vec<Result<(), ToolError>> = std::thread::scope(|scope| {
            let a = scope.spawn(|| {
                w.accounts
                    .set_role(ws, current, Role::Member, Actor::User(other.id))
                    .map(|_| ())
            });
            let b = scope.spawn(|| {
                w.accounts
                    .set_role(ws, other.id, Role::Member, Actor::User(current))
                    .map(|_| ())
            });
            vec![a.join().unwrap(), b.join().unwrap()]
        });
        let owners = w
            .accounts
            .members(ws)
            .unwrap()
            .iter()
            .filter(|m| m.role == Role::Owner)
            .count();
        assert_eq!(owners, 1, "round {round}: {results:?}");
        assert_eq!(
            results.iter().filter(|r| r.is_ok()).count(),
            1,
            "{results:?}"
        );

        // One invite, accepted twice at once: one account joins.
        let (secret, _) = w
            .accounts
            .create_invite(ws, Role::Viewer, Actor::Operator)
            .unwrap();
        let accepted: Vec<bool> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..2)
                .map(|i| {
                    let secret = secret.expose().to_string();
                    let accounts = w.accounts.clone();
                    scope.spawn(move || {
                        let email = format!("race{round}-{i}@example.com");
                        accounts
                            .accept_invite(
                                &secret,
                                AcceptAs::NewUser {
                                    email: &email,
                                    name: "Racer",
                                    password: "a long enough password",
                                    from: addr("10.1.1.1"),
                                },
                            )
                            .is_ok()
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(accepted.iter().filter(|ok| **ok).count(), 1, "{accepted:?}");
    }
}

#[test]
fn a_reset_is_used_once_voids_older_ones_and_ends_sessions() {
    let w = world();
    let admin = w.member("admin@example.com", Role::Admin);
    let member = w.member("member@example.com", Role::Member);
    let at = addr("10.6.0.1");
    let session = w
        .accounts
        .login("member@example.com", PASSWORD, at)
        .unwrap();

    let older = w
        .accounts
        .create_reset(ResetFor::Email("MEMBER@example.com"), Actor::User(admin.id))
        .unwrap();
    let newer = w
        .accounts
        .create_reset(ResetFor::User(member.id), Actor::User(admin.id))
        .unwrap();
    assert_eq!(
        w.accounts
            .reset_by_secret(newer.expose())
            .unwrap()
            .unwrap()
            .id,
        member.id
    );
    assert!(
        w.accounts
            .reset_by_secret(older.expose())
            .unwrap()
            .is_none()
    );
    let e = err(w
        .accounts
        .reset_password(older.expose(), "brand new password"));
    assert_eq!(e.code, errors::NOT_FOUND);
    assert!(e.message.contains("newer"), "{}", e.message);

    // A too-short password leaves the link usable.
    assert_eq!(
        err(w.accounts.reset_password(newer.expose(), "short")).code,
        errors::INVALID_INPUT
    );
    let user = w
        .accounts
        .reset_password(newer.expose(), "brand new password")
        .unwrap();
    assert_eq!(user.id, member.id);
    assert!(
        w.accounts
            .session(session.secret.expose())
            .unwrap()
            .is_none()
    );
    err(w.accounts.login("member@example.com", PASSWORD, at));
    w.accounts
        .login("member@example.com", "brand new password", at)
        .unwrap();
    let e = err(w
        .accounts
        .reset_password(newer.expose(), "another new password"));
    assert!(e.message.contains("already used"), "{}", e.message);

    // Expired.
    let late = w
        .accounts
        .create_reset(ResetFor::User(member.id), Actor::Operator)
        .unwrap();
    w.sql(
        "UPDATE password_resets SET expires_at = '2000-01-01T00:00:00.000Z' WHERE used_at IS NULL",
    );
    let e = err(w
        .accounts
        .reset_password(late.expose(), "another new password"));
    assert!(e.message.contains("expired"), "{}", e.message);

    // Who may issue one: not an admin for an owner, not a member, not for someone who
    // belongs to a workspace the issuer does not manage; an owner may; anyone for themself.
    assert_eq!(
        err(w
            .accounts
            .create_reset(ResetFor::User(w.owner.id), Actor::User(admin.id)))
        .code,
        errors::PERMISSION_DENIED
    );
    assert_eq!(
        err(w
            .accounts
            .create_reset(ResetFor::User(admin.id), Actor::User(member.id)))
        .code,
        errors::PERMISSION_DENIED
    );
    let other = w.db.create_workspace("other").unwrap();
    w.accounts
        .add_member(other.id, member.id, Role::Viewer, Actor::Operator)
        .unwrap();
    assert_eq!(
        err(w
            .accounts
            .create_reset(ResetFor::User(member.id), Actor::User(admin.id)))
        .code,
        errors::PERMISSION_DENIED
    );
    w.accounts
        .create_reset(ResetFor::User(admin.id), Actor::User(w.owner.id))
        .unwrap();
    w.accounts
        .create_reset(ResetFor::User(member.id), Actor::User(member.id))
        .unwrap();
    assert_eq!(
        err(w
            .accounts
            .create_reset(ResetFor::Email("nobody@example.com"), Actor::Operator))
        .code,
        errors::NOT_FOUND
    );
    // To a user, an unknown email reads as one they may not reset: no enumeration.
    let unknown = err(w
        .accounts
        .create_reset(ResetFor::Email("nobody@example.com"), Actor::User(admin.id)));
    let forbidden = err(w
        .accounts
        .create_reset(ResetFor::User(w.owner.id), Actor::User(admin.id)));
    assert_eq!(unknown, forbidden);
}

#[test]
fn no_password_or_secret_is_stored_in_clear() {
    let w = world();
    let session = w
        .accounts
        .login("owner@example.com", PASSWORD, addr("10.7.0.1"))
        .unwrap();
    let (invite, _) = w
        .accounts
        .create_invite(w.workspace.id, Role::Viewer, Actor::Operator)
        .unwrap();
    let reset = w
        .accounts
        .create_reset(ResetFor::User(w.owner.id), Actor::Operator)
        .unwrap();
    err(w
        .accounts
        .login("owner@example.com", "typed by mistake", addr("10.7.0.1")));
    let mut client = w.test_db.client();
    let hash: String = client
        .query_one(
            "SELECT password_hash FROM users WHERE id = $1",
            &[&w.owner.id],
        )
        .unwrap()
        .get(0);
    assert!(hash.starts_with("$argon2id$"), "{hash}");
    assert!(!hash.contains(PASSWORD));
    // Every table, as text: no password, no secret, not even the mistyped one.
    let tables = [
        "users",
        "memberships",
        "web_sessions",
        "invites",
        "password_resets",
        "login_failures",
    ];
    for table in tables {
        let dump: String = client
            .query_one(
                &format!("SELECT coalesce(string_agg(t::text, ' '), '') FROM {table} t"),
                &[],
            )
            .unwrap()
            .get(0);
        for secret in [
            PASSWORD,
            "typed by mistake",
            session.secret.expose(),
            invite.expose(),
            reset.expose(),
            &session.session.csrf_token,
        ] {
            assert!(!dump.contains(secret), "{table} holds a secret: {dump}");
        }
    }
    assert!(!format!("{reset:?}").contains(reset.expose()));
}
