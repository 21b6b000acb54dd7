//! What every concern of [`crate::accounts`] shares: the [`Accounts`] handle, who acts
//! ([`Actor`]), the one-time secrets of sessions, invites and resets ([`PlainSecret`]), and
//! the stored form of times.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use chrono::{DateTime, SecondsFormat, Utc};
use mcp_common_core::ToolError;

use jility_pg::store::PgDatabase;

/// The people of a database: users, their memberships, web sessions, invites and password
/// resets. Every method blocks on the database (and, for passwords, on Argon2id): async
/// callers run them on blocking threads (`tokio::task::spawn_blocking`), as with
/// [`crate::auth::Tokens`]. Clones share the pool.
#[derive(Clone)]
pub struct Accounts {
    pub(super) db: PgDatabase,
    /// Argon2id verifications this handle (and its clones) ran.
    pub(super) verifications: Arc<AtomicU64>,
}

impl Accounts {
    pub fn new(db: &PgDatabase) -> Self {
        Self {
            db: db.clone(),
            verifications: Arc::default(),
        }
    }

    /// How many password verifications (Argon2id, against a stored or the dummy hash) this
    /// handle and its clones have run: what a refused sign-in did not cost.
    pub fn password_verifications(&self) -> u64 {
        self.verifications.load(Ordering::Relaxed)
    }
}

/// Who does something to accounts: the operator of the database (`jility admin` on the
/// command line, who may do anything), or a signed-in user, whose role decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Actor {
    Operator,
    User(i64),
}

impl Actor {
    /// The user acting, `None` for the operator.
    pub fn user_id(self) -> Option<i64> {
        match self {
            Actor::Operator => None,
            Actor::User(id) => Some(id),
        }
    }
}

/// Random characters in a secret: 43 of 62 letters and digits, about 256 bits.
pub const SECRET_LEN: usize = 43;

const ALPHABET: &[u8; 62] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/// A one-time secret in plaintext: a session's cookie, an invite's or a reset's link. Shown
/// once; at rest only its BLAKE3 hash. Its `Debug` shows nothing of it.
#[derive(Clone, PartialEq, Eq)]
pub struct PlainSecret(String);

impl PlainSecret {
    /// A new secret from the OS CSPRNG (rejection sampling: every character uniform).
    pub fn mint() -> Result<Self, ToolError> {
        let mut secret = String::with_capacity(SECRET_LEN);
        let mut bytes = [0u8; 64];
        while secret.len() < SECRET_LEN {
            getrandom::fill(&mut bytes).map_err(|e| {
                ToolError::internal(format!("The system's random generator failed: {e}"))
            })?;
            for byte in bytes {
                if secret.len() == SECRET_LEN {
                    break;
                }
                if usize::from(byte) < 4 * ALPHABET.len() {
                    secret.push(char::from(ALPHABET[usize::from(byte) % ALPHABET.len()]));
                }
            }
        }
        Ok(Self(secret))
    }

    /// The secret itself: for the cookie or the link, nowhere else.
    pub fn expose(&self) -> &str {
        &self.0
    }

    pub fn into_string(self) -> String {
        self.0
    }
}

impl fmt::Debug for PlainSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("PlainSecret(…)")
    }
}

/// Whether `secret` has the form of a minted secret (so nothing else reaches the database).
pub(crate) fn well_formed(secret: &str) -> bool {
    secret.len() == SECRET_LEN && secret.bytes().all(|b| b.is_ascii_alphanumeric())
}

/// The hash kept at rest.
pub(crate) fn secret_hash(secret: &str) -> blake3::Hash {
    blake3::hash(secret.as_bytes())
}

/// A stored hash read back, compared with `expected` in constant time (`blake3::Hash`'s
/// equality is).
pub(crate) fn same_hash(stored: &[u8], expected: &blake3::Hash) -> bool {
    <[u8; 32]>::try_from(stored)
        .map(blake3::Hash::from_bytes)
        .is_ok_and(|stored| stored == *expected)
}

pub(crate) fn store(err: postgres::Error) -> ToolError {
    jility_pg::store::db(err).into()
}

pub fn now() -> DateTime<Utc> {
    Utc::now()
}

/// The stored form of a time: RFC 3339, UTC, milliseconds (sorts as text).
pub fn time_text(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Millis, true)
}
