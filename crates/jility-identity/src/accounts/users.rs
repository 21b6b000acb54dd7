//! Users: created (with a password or none yet), found by email or id, given a password.

use postgres::Row;
use postgres::error::SqlState;
use serde::Serialize;

use mcp_common_core::ToolError;

use super::handle::{Accounts, now, store, time_text};
use super::passwords::hash_password;
use jility_core::errors;

/// Longest email accepted (RFC 5321's path limit).
pub const MAX_EMAIL_CHARS: usize = 254;
/// Longest display name accepted.
pub const MAX_USER_NAME_CHARS: usize = 100;

/// A person. Never carries their password's hash.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct User {
    pub id: i64,
    /// Lower-cased.
    pub email: String,
    /// The name shown to others.
    pub name: String,
    /// Whether a password is set (else sign-in is impossible until a reset or an invite
    /// sets one).
    pub has_password: bool,
    pub created_at: String,
}

impl User {
    /// The name a person's changes are recorded under (tickets, comments, audit): their
    /// email, unique where a display name may repeat.
    pub fn actor(&self) -> &str {
        &self.email
    }
}

/// The columns of a [`User`], in [`user_row`]'s order, for a table aliased `u`.
pub(super) const USER_COLUMNS: &str =
    "u.id, u.email, u.name, u.password_hash IS NOT NULL, u.created_at";

/// A [`User`] from [`USER_COLUMNS`] starting at column `at`.
pub(super) fn user_row(row: &Row, at: usize) -> Result<User, ToolError> {
    Ok(User {
        id: row.try_get(at).map_err(store)?,
        email: row.try_get(at + 1).map_err(store)?,
        name: row.try_get(at + 2).map_err(store)?,
        has_password: row.try_get(at + 3).map_err(store)?,
        created_at: row.try_get(at + 4).map_err(store)?,
    })
}

/// An email as stored (trimmed, lower-cased), or why it is not one.
pub fn check_email(email: &str) -> Result<String, ToolError> {
    let email = email.trim().to_lowercase();
    let valid = email.chars().count() <= MAX_EMAIL_CHARS
        && email.matches('@').count() == 1
        && email
            .split_once('@')
            .is_some_and(|(local, domain)| !local.is_empty() && !domain.is_empty())
        && !email.chars().any(|c| c.is_control() || c.is_whitespace());
    if !valid {
        return Err(ToolError::new(
            errors::INVALID_INPUT,
            format!(
                "'{}' is not an email address",
                mcp_common_core::text::clip(&email, 60)
            ),
        )
        .with_hint(format!(
            "Give an address like name@example.com: one @, no spaces, at most {MAX_EMAIL_CHARS} characters."
        )));
    }
    Ok(email)
}

/// A display name as stored (trimmed), or why it is not one.
pub fn check_user_name(name: &str) -> Result<String, ToolError> {
    let name = name.trim();
    if name.is_empty()
        || name.chars().count() > MAX_USER_NAME_CHARS
        || name.chars().any(char::is_control)
    {
        return Err(ToolError::new(
            errors::INVALID_INPUT,
            format!(
                "A name needs 1 to {MAX_USER_NAME_CHARS} characters, without control characters"
            ),
        )
        .with_hint("Give the name the person goes by, e.g. `Ada Lovelace`."));
    }
    Ok(name.to_string())
}

/// The error of an email already taken.
pub(super) fn email_taken(email: &str) -> ToolError {
    ToolError::new(
        mcp_common_core::codes::CONFLICT,
        format!("An account with the email {email} already exists"),
    )
    .with_hint("Use that account (add it as a member), or give another email; nothing was created.")
}

/// Insert a user on `client` (a transaction or not); `password_hash` already made.
pub(super) fn insert_user(
    client: &mut impl postgres::GenericClient,
    email: &str,
    name: &str,
    password_hash: Option<&str>,
) -> Result<User, ToolError> {
    let row = client
        .query_one(
            "INSERT INTO users (email, name, password_hash, created_at) VALUES ($1, $2, $3, $4) \
             RETURNING id, email, name, password_hash IS NOT NULL, created_at",
            &[&email, &name, &password_hash, &time_text(now())],
        )
        .map_err(|err| {
            if err.code() == Some(&SqlState::UNIQUE_VIOLATION) {
                email_taken(email)
            } else {
                store(err)
            }
        })?;
    user_row(&row, 0)
}

impl Accounts {
    /// Create a user. Without a password, sign-in is impossible until a reset link (or an
    /// invite) sets one. An email already taken (in any case) is a `conflict`.
    pub fn create_user(
        &self,
        email: &str,
        name: &str,
        password: Option<&str>,
    ) -> Result<User, ToolError> {
        let email = check_email(email)?;
        let name = check_user_name(name)?;
        let hash = password.map(hash_password).transpose()?;
        let user = self
            .db
            .with_client(|client| insert_user(client, &email, &name, hash.as_deref()))?;
        tracing::info!(user_id = user.id, "created a user");
        Ok(user)
    }

    /// The user with this email (in any case), if any.
    pub fn user_by_email(&self, email: &str) -> Result<Option<User>, ToolError> {
        let email = email.trim().to_lowercase();
        self.db.with_client(|client| {
            client
                .query_opt(
                    &format!("SELECT {USER_COLUMNS} FROM users u WHERE u.email = $1"),
                    &[&email],
                )
                .map_err(store)?
                .map(|row| user_row(&row, 0))
                .transpose()
        })
    }

    /// The user with this id, if any.
    pub fn user(&self, user_id: i64) -> Result<Option<User>, ToolError> {
        self.db.with_client(|client| {
            client
                .query_opt(
                    &format!("SELECT {USER_COLUMNS} FROM users u WHERE u.id = $1"),
                    &[&user_id],
                )
                .map_err(store)?
                .map(|row| user_row(&row, 0))
                .transpose()
        })
    }

    /// Set a user's password (at least [`super::MIN_PASSWORD_CHARS`] characters, at most
    /// [`super::MAX_PASSWORD_BYTES`] bytes). Their sessions stay signed in.
    pub fn set_password(&self, user_id: i64, password: &str) -> Result<User, ToolError> {
        let hash = hash_password(password)?;
        self.db.with_client(|client| {
            let row = client
                .query_opt(
                    "UPDATE users SET password_hash = $2 WHERE id = $1 \
                     RETURNING id, email, name, password_hash IS NOT NULL, created_at",
                    &[&user_id, &hash],
                )
                .map_err(store)?;
            match row {
                Some(row) => user_row(&row, 0),
                None => Err(no_user(user_id)),
            }
        })
    }
}

pub(super) fn no_user(user_id: i64) -> ToolError {
    ToolError::not_found(format!("There is no user {user_id}"))
        .with_hint("Find users by email (`jility admin create-user` makes one).")
}
