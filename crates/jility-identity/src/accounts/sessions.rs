//! Web sessions: a sign-in (email and password, limited per account and per address)
//! makes one; its secret travels in a cookie and is checked by one indexed lookup of its
//! hash, not by a password check per request. Sessions last [`SESSION_DAYS`] days from
//! sign-in; `last_seen_at` is written at most once a minute per session.

use std::net::IpAddr;

use chrono::{DateTime, TimeDelta, Utc};
use mcp_common_core::ToolError;
use postgres::types::Type;
use serde::Serialize;

use super::handle::{
    Accounts, Actor, PlainSecret, now, same_hash, secret_hash, store, time_text, well_formed,
};
use super::limits;
use super::passwords::{dummy_hash, verify_password};
use super::users::{USER_COLUMNS, User, user_row};
use jility_core::errors;

/// How long a session lasts from sign-in.
pub const SESSION_DAYS: i64 = 30;

/// `last_seen_at` is written at most this often per session.
const LAST_SEEN_GRANULARITY: TimeDelta = TimeDelta::seconds(60);

/// The context of the key the CSRF token is derived with.
const CSRF_CONTEXT: &str = "jility web session 2026 CSRF token";

/// A signed-in browser.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Session {
    pub id: i64,
    pub user: User,
    /// The token a form of this session posts back: derived from the session's secret
    /// (BLAKE3 `derive_key`), so stable for the session and unknown to other sites.
    pub csrf_token: String,
    pub created_at: String,
    pub expires_at: String,
}

impl Session {
    /// Whether `given` is this session's CSRF token (compared in constant time).
    pub fn csrf_matches(&self, given: &str) -> bool {
        let expected = blake3::hash(self.csrf_token.as_bytes());
        expected == blake3::hash(given.as_bytes())
    }
}

impl Session {
    /// What stands in a [`crate::auth::Principal`]'s `token_id` when this session's person
    /// acts on the web (they hold no token): the negative of the session's id. Tokens' ids
    /// are positive, so it names no token; the audit log records no token for it (the
    /// person's email is the actor), and the live stream finds the session by it
    /// ([`session_of_token_id`]).
    pub fn principal_token_id(&self) -> i64 {
        -self.id
    }
}

/// The web session a principal's `token_id` stands for ([`Session::principal_token_id`]),
/// `None` for a token's.
pub fn session_of_token_id(token_id: i64) -> Option<i64> {
    (token_id < 0).then(|| token_id.saturating_neg())
}

/// A signed-in person acts as themselves.
impl From<&Session> for Actor {
    fn from(session: &Session) -> Self {
        Actor::User(session.user.id)
    }
}

/// A session just made, with its secret (the cookie's value), shown only now.
#[derive(Debug)]
pub struct NewSession {
    pub secret: PlainSecret,
    pub session: Session,
}

/// The CSRF token of the session whose secret is `secret`.
fn csrf_token(secret: &str) -> String {
    blake3::Hash::from_bytes(blake3::derive_key(CSRF_CONTEXT, secret.as_bytes()))
        .to_hex()
        .to_string()
}

/// The one answer to an unknown email, a wrong password and an account without one.
fn wrong_credentials() -> ToolError {
    ToolError::new(errors::UNAUTHENTICATED, "Email or password is wrong").with_hint(
        "Check both and try again. If the password is lost, ask an admin of the workspace for a reset link.",
    )
}

impl Accounts {
    /// Sign in: a new session for the user with this email and password. An unknown email,
    /// a wrong password and an account without a password are one error, after the same
    /// work (an Argon2id verification against a dummy hash when there is no hash to check).
    /// Too many failures for the email or from `client_addr` are refused before any
    /// password is checked ([`super::limits`]).
    pub fn login(
        &self,
        email: &str,
        password: &str,
        client_addr: IpAddr,
    ) -> Result<NewSession, ToolError> {
        let attempt = limits::begin(&self.db, email, client_addr)?;
        // Made once per process, by whichever sign-in comes first, known email or not.
        let dummy = dummy_hash();
        let email = email.trim().to_lowercase();
        let found = self.db.with_client(|client| {
            client
                .query_opt(
                    &format!(
                        "SELECT {USER_COLUMNS}, u.password_hash FROM users u WHERE u.email = $1"
                    ),
                    &[&email],
                )
                .map_err(store)?
                .map(|row| {
                    Ok::<_, ToolError>((
                        user_row(&row, 0)?,
                        row.try_get::<_, Option<String>>(5).map_err(store)?,
                    ))
                })
                .transpose()
        })?;
        let (user, hash) = match found {
            Some((user, Some(hash))) => (Some(user), hash),
            Some((_, None)) | None => (None, dummy.to_string()),
        };
        self.verifications
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let verified = verify_password(password, &hash);
        let Some(user) = user.filter(|_| verified) else {
            tracing::info!("a sign-in failed");
            return Err(wrong_credentials());
        };
        attempt.succeeded(&self.db);
        let session = self.create_session(user)?;
        tracing::info!(
            user_id = session.session.user.id,
            session_id = session.session.id,
            "signed in"
        );
        Ok(session)
    }

    /// A new session for `user`, signed in some other way (e.g. having just set their
    /// password through an invite).
    pub fn create_session(&self, user: User) -> Result<NewSession, ToolError> {
        let secret = PlainSecret::mint()?;
        let hash = secret_hash(secret.expose());
        let hash: &[u8] = hash.as_bytes();
        let at = now();
        let created_at = time_text(at);
        let expires_at = time_text(at + TimeDelta::days(SESSION_DAYS));
        let id: i64 = self.db.with_client(|client| {
            client
                .query_one(
                    "INSERT INTO web_sessions (secret_hash, user_id, created_at, expires_at, last_seen_at) \
                     VALUES ($1, $2, $3, $4, $3) RETURNING id",
                    &[&hash, &user.id, &created_at, &expires_at],
                )
                .map_err(store)?
                .try_get(0)
                .map_err(store)
        })?;
        let csrf_token = csrf_token(secret.expose());
        Ok(NewSession {
            secret,
            session: Session {
                id,
                user,
                csrf_token,
                created_at,
                expires_at,
            },
        })
    }

    /// The live session whose secret is `secret` (a cookie's value), `None` when there is
    /// none or it expired. Records the visit (at most once a minute per session).
    pub fn session(&self, secret: &str) -> Result<Option<Session>, ToolError> {
        let secret = secret.trim();
        if !well_formed(secret) {
            return Ok(None);
        }
        let hash = secret_hash(secret);
        let at = now();
        self.db.with_client(|client| {
            let bytes: &[u8] = hash.as_bytes();
            // One round trip: an unnamed statement with its parameter type given.
            let rows = client
                .query_typed(
                    &format!(
                        "SELECT s.id, s.secret_hash, s.created_at, s.expires_at, s.last_seen_at, \
                                {USER_COLUMNS} \
                         FROM web_sessions s JOIN users u ON u.id = s.user_id \
                         WHERE s.secret_hash = $1"
                    ),
                    &[(&bytes, Type::BYTEA)],
                )
                .map_err(store)?;
            let Some(row) = rows.first() else {
                return Ok(None);
            };
            let stored: Vec<u8> = row.try_get(1).map_err(store)?;
            if !same_hash(&stored, &hash) {
                return Ok(None);
            }
            let expires_at: String = row.try_get(3).map_err(store)?;
            if parse(&expires_at).is_none_or(|expires| expires <= at) {
                return Ok(None);
            }
            let id: i64 = row.try_get(0).map_err(store)?;
            let last_seen: String = row.try_get(4).map_err(store)?;
            if parse(&last_seen).is_none_or(|seen| at - seen >= LAST_SEEN_GRANULARITY) {
                // Guarded, so requests sent together write it once.
                if let Err(err) = client.execute(
                    "UPDATE web_sessions SET last_seen_at = $2 WHERE id = $1 AND last_seen_at <= $3",
                    &[&id, &time_text(at), &time_text(at - LAST_SEEN_GRANULARITY)],
                ) {
                    tracing::warn!(session_id = id, error = %jility_pg::store::db(err), "could not record a session's visit");
                }
            }
            Ok(Some(Session {
                id,
                user: user_row(row, 5)?,
                csrf_token: csrf_token(secret),
                created_at: row.try_get(2).map_err(store)?,
                expires_at,
            }))
        })
    }

    /// Whether session `session_id` of `user_id` is still live (neither ended nor expired),
    /// without recording a visit: for a stream that outlasts its request.
    pub fn session_live(&self, session_id: i64, user_id: i64) -> Result<bool, ToolError> {
        let at = time_text(now());
        self.db.with_client(|client| {
            client
                .query_opt(
                    "SELECT 1 FROM web_sessions WHERE id = $1 AND user_id = $2 AND expires_at > $3",
                    &[&session_id, &user_id, &at],
                )
                .map(|row| row.is_some())
                .map_err(store)
        })
    }

    /// End the session whose secret is `secret` (nothing when there is none).
    pub fn logout(&self, secret: &str) -> Result<(), ToolError> {
        let secret = secret.trim();
        if !well_formed(secret) {
            return Ok(());
        }
        let hash = secret_hash(secret);
        let bytes: &[u8] = hash.as_bytes();
        self.db.with_client(|client| {
            client
                .execute("DELETE FROM web_sessions WHERE secret_hash = $1", &[&bytes])
                .map(|_| ())
                .map_err(store)
        })
    }

    /// End every session of the user; answers how many there were.
    pub fn logout_everywhere(&self, user_id: i64) -> Result<u64, ToolError> {
        self.db.with_client(|client| {
            client
                .execute("DELETE FROM web_sessions WHERE user_id = $1", &[&user_id])
                .map_err(store)
        })
    }
}

fn parse(text: &str) -> Option<DateTime<Utc>> {
    jility_core::token::parse_time(text)
}
