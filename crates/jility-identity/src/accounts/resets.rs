//! Password resets: links that set a user's password, issued by an admin (or the operator)
//! and handed on. A link lasts [`RESET_HOURS`] hours and is used once; issuing one voids
//! the user's older ones; using one ends every session of the user.
//!
//! A reset takes over an account, which may span workspaces, so the rule is that it never
//! gives its issuer more than they hold already: a user may issue one for themselves, or
//! for someone who belongs to at least one workspace and, in every workspace they belong
//! to, has the issuer as an owner, or as an admin while they are a member or a viewer.

use chrono::TimeDelta;
use postgres::GenericClient;

use mcp_common_core::ToolError;

use super::handle::{
    Accounts, Actor, PlainSecret, now, same_hash, secret_hash, store, time_text, well_formed,
};
use super::limits::clear_email;
use super::members::{denied, role_in, role_of};
use super::passwords::hash_password;
use super::users::{USER_COLUMNS, User, no_user, user_row};
use jility_core::errors;

/// How long a reset link lasts.
pub const RESET_HOURS: i64 = 24;

/// Whose password a reset sets.
#[derive(Debug, Clone, Copy)]
pub enum ResetFor<'a> {
    Email(&'a str),
    User(i64),
}

fn invalid_reset(message: &str) -> ToolError {
    ToolError::new(errors::NOT_FOUND, message.to_string())
        .with_hint("Ask an admin of the workspace for a new reset link.")
}

/// The refusal of a reset the issuer may not make (or of an unknown user, alike).
fn refused() -> ToolError {
    denied(
        "Only an owner of every workspace this person belongs to (or an admin, for members and viewers) issues their reset link",
    )
}

/// Refuse `actor` a reset of `user_id` unless the rule of the module allows it.
fn may_reset(tx: &mut impl GenericClient, actor: Actor, user_id: i64) -> Result<(), ToolError> {
    let by = match actor {
        Actor::Operator => return Ok(()),
        Actor::User(by) if by == user_id => return Ok(()),
        Actor::User(by) => by,
    };
    let theirs = tx
        .query(
            "SELECT workspace_id, role FROM memberships WHERE user_id = $1",
            &[&user_id],
        )
        .map_err(store)?;
    if theirs.is_empty() {
        return Err(refused());
    }
    for row in &theirs {
        let workspace_id: i64 = row.try_get(0).map_err(store)?;
        let their_role = role_of(&row.try_get::<_, String>(1).map_err(store)?)?;
        let allowed = match role_in(tx, workspace_id, by)? {
            Some(super::roles::Role::Owner) => true,
            Some(super::roles::Role::Admin) => !their_role.manages_members(),
            _ => false,
        };
        if !allowed {
            return Err(refused());
        }
    }
    Ok(())
}

impl Accounts {
    /// Issue a reset link's secret for a user, as `by` (see the module's rule), voiding
    /// their older links. An unknown email or id is `not_found`.
    pub fn create_reset(&self, user: ResetFor<'_>, by: Actor) -> Result<PlainSecret, ToolError> {
        let secret = PlainSecret::mint()?;
        let hash = secret_hash(secret.expose());
        let hash: &[u8] = hash.as_bytes();
        let at = now();
        self.db.with_client(|client| {
            let mut tx = client.transaction().map_err(store)?;
            let row = match user {
                ResetFor::Email(email) => tx.query_opt(
                    "SELECT id FROM users WHERE email = $1 FOR NO KEY UPDATE",
                    &[&email.trim().to_lowercase()],
                ),
                ResetFor::User(id) => {
                    tx.query_opt(
                        "SELECT id FROM users WHERE id = $1 FOR NO KEY UPDATE",
                        &[&id],
                    )
                }
            }
            .map_err(store)?;
            let user_id: i64 = match row {
                Some(row) => row.try_get(0).map_err(store)?,
                // A user is refused as for a person they may not reset: no way to learn
                // who has an account.
                None if by != Actor::Operator => return Err(refused()),
                None => {
                    return Err(match user {
                        ResetFor::Email(email) => ToolError::not_found(format!(
                            "There is no user with the email {}",
                            mcp_common_core::text::clip(email.trim(), 60)
                        ))
                        .with_hint("Check the address, or create the user (`jility admin create-user`)."),
                        ResetFor::User(id) => no_user(id),
                    });
                }
            };
            may_reset(&mut tx, by, user_id)?;
            let at_text = time_text(at);
            tx.execute(
                "UPDATE password_resets SET voided_at = $2 \
                 WHERE user_id = $1 AND used_at IS NULL AND voided_at IS NULL",
                &[&user_id, &at_text],
            )
            .map_err(store)?;
            tx.execute(
                "INSERT INTO password_resets (user_id, secret_hash, created_by, created_at, expires_at) \
                 VALUES ($1, $2, $3, $4, $5)",
                &[
                    &user_id,
                    &hash,
                    &by.user_id(),
                    &at_text,
                    &time_text(at + TimeDelta::hours(RESET_HOURS)),
                ],
            )
            .map_err(store)?;
            tx.commit().map_err(store)?;
            tracing::info!(user_id, "issued a password reset link");
            Ok(secret)
        })
    }

    /// Whose password the reset link with this secret sets, `None` when it cannot be used
    /// (unknown, used, voided or expired): for the page that asks for the new password.
    pub fn reset_by_secret(&self, secret: &str) -> Result<Option<User>, ToolError> {
        let secret = secret.trim();
        if !well_formed(secret) {
            return Ok(None);
        }
        let hash = secret_hash(secret);
        let bytes: &[u8] = hash.as_bytes();
        self.db.with_client(|client| {
            let Some(row) = client
                .query_opt(
                    &format!(
                        "SELECT r.secret_hash, {USER_COLUMNS} FROM password_resets r \
                         JOIN users u ON u.id = r.user_id WHERE r.secret_hash = $1 \
                         AND r.used_at IS NULL AND r.voided_at IS NULL AND r.expires_at > $2"
                    ),
                    &[&bytes, &time_text(now())],
                )
                .map_err(store)?
            else {
                return Ok(None);
            };
            let stored: Vec<u8> = row.try_get(0).map_err(store)?;
            if !same_hash(&stored, &hash) {
                return Ok(None);
            }
            user_row(&row, 1).map(Some)
        })
    }

    /// Set the password of the reset link with this secret, once; every session of the
    /// user ends, and their failed sign-ins are forgotten.
    pub fn reset_password(&self, secret: &str, new_password: &str) -> Result<User, ToolError> {
        let secret = secret.trim();
        if !well_formed(secret) {
            return Err(invalid_reset("This reset link is not valid"));
        }
        let password_hash = hash_password(new_password)?;
        let hash = secret_hash(secret);
        let bytes: &[u8] = hash.as_bytes();
        let at = time_text(now());
        let user = self.db.with_client(|client| {
            let mut tx = client.transaction().map_err(store)?;
            // The user's row first, as when a reset is issued (no lock cycle), then the link.
            if let Some(row) = tx
                .query_opt(
                    "SELECT user_id FROM password_resets WHERE secret_hash = $1",
                    &[&bytes],
                )
                .map_err(store)?
            {
                let user_id: i64 = row.try_get(0).map_err(store)?;
                tx.execute(
                    "SELECT 1 FROM users WHERE id = $1 FOR NO KEY UPDATE",
                    &[&user_id],
                )
                .map_err(store)?;
            }
            let row = tx
                .query_opt(
                    "SELECT id, user_id, secret_hash, used_at, voided_at, expires_at \
                     FROM password_resets WHERE secret_hash = $1 FOR UPDATE",
                    &[&bytes],
                )
                .map_err(store)?
                .ok_or_else(|| invalid_reset("This reset link is not valid"))?;
            let stored: Vec<u8> = row.try_get(2).map_err(store)?;
            if !same_hash(&stored, &hash) {
                return Err(invalid_reset("This reset link is not valid"));
            }
            if row
                .try_get::<_, Option<String>>(3)
                .map_err(store)?
                .is_some()
            {
                return Err(invalid_reset("This reset link was already used"));
            }
            if row
                .try_get::<_, Option<String>>(4)
                .map_err(store)?
                .is_some()
            {
                return Err(invalid_reset("This reset link was replaced by a newer one"));
            }
            let expires_at: String = row.try_get(5).map_err(store)?;
            if expires_at <= at {
                return Err(invalid_reset(&format!(
                    "This reset link expired at {expires_at}"
                )));
            }
            let reset_id: i64 = row.try_get(0).map_err(store)?;
            let user_id: i64 = row.try_get(1).map_err(store)?;
            tx.execute(
                "UPDATE password_resets SET used_at = $2 WHERE id = $1",
                &[&reset_id, &at],
            )
            .map_err(store)?;
            let user_row_ = tx
                .query_one(
                    "UPDATE users u SET password_hash = $2 WHERE u.id = $1 \
                     RETURNING u.id, u.email, u.name, u.password_hash IS NOT NULL, u.created_at",
                    &[&user_id, &password_hash],
                )
                .map_err(store)?;
            let user = user_row(&user_row_, 0)?;
            tx.execute("DELETE FROM web_sessions WHERE user_id = $1", &[&user_id])
                .map_err(store)?;
            clear_email(&mut tx, &user.email)?;
            tx.commit().map_err(store)?;
            Ok::<_, ToolError>(user)
        })?;
        tracing::info!(
            user_id = user.id,
            "reset a password; the user's sessions ended"
        );
        Ok(user)
    }
}
