//! Invites: links an owner or admin copies and hands on (no mail server), each making its
//! holder a member with a role. An invite lasts [`INVITE_DAYS`] days and is used once: the
//! acceptance locks its row, so two acceptances of one link cannot both succeed.

use std::net::IpAddr;

use chrono::TimeDelta;
use postgres::GenericClient;
use serde::Serialize;

use mcp_common_core::ToolError;

use super::handle::{
    Accounts, Actor, PlainSecret, now, same_hash, secret_hash, store, time_text, well_formed,
};
use super::limits;
use super::members::{
    Membership, insert_membership, lock_workspace, manager_role, owner_only, role_of,
};
use super::passwords::{check_password, hash_password};
use super::roles::Role;
use super::users::{check_email, check_user_name, insert_user};
use jility_core::errors;

/// How long an invite lasts.
pub const INVITE_DAYS: i64 = 7;

/// An invite as stored (never its secret).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Invite {
    pub id: i64,
    pub workspace_id: i64,
    pub role: Role,
    /// The user who made it; `None`: the admin command line.
    pub created_by: Option<i64>,
    pub created_at: String,
    pub expires_at: String,
}

/// What the holder of an invite link is invited to (for the page that accepts it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InviteInfo {
    pub workspace_id: i64,
    pub workspace: String,
    pub role: Role,
    pub expires_at: String,
}

/// Who accepts an invite: a new account (asked for from the client address `from`), or a
/// signed-in user.
#[derive(Debug, Clone, Copy)]
pub enum AcceptAs<'a> {
    NewUser {
        email: &'a str,
        name: &'a str,
        password: &'a str,
        from: IpAddr,
    },
    Existing(i64),
}

const INVITE_COLUMNS: &str = "id, workspace_id, role, created_by, created_at, expires_at";

fn invite_row(row: &postgres::Row) -> Result<Invite, ToolError> {
    Ok(Invite {
        id: row.try_get(0).map_err(store)?,
        workspace_id: row.try_get(1).map_err(store)?,
        role: role_of(&row.try_get::<_, String>(2).map_err(store)?)?,
        created_by: row.try_get(3).map_err(store)?,
        created_at: row.try_get(4).map_err(store)?,
        expires_at: row.try_get(5).map_err(store)?,
    })
}

fn invalid_invite(message: &str) -> ToolError {
    ToolError::new(errors::NOT_FOUND, message.to_string())
        .with_hint("Ask an admin of the workspace for a new invite link.")
}

impl Accounts {
    /// Make an invite to `workspace_id` with `role`, as `by` (an owner or an admin; only an
    /// owner invites owners). The secret (for the link) is in the answer and nowhere else.
    pub fn create_invite(
        &self,
        workspace_id: i64,
        role: Role,
        by: Actor,
    ) -> Result<(PlainSecret, Invite), ToolError> {
        let secret = PlainSecret::mint()?;
        let hash = secret_hash(secret.expose());
        let hash: &[u8] = hash.as_bytes();
        let at = now();
        self.db.with_client(|client| {
            let mut tx = client.transaction().map_err(store)?;
            lock_workspace(&mut tx, workspace_id)?;
            let manager = manager_role(&mut tx, workspace_id, by)?;
            if role == Role::Owner {
                owner_only(manager, "invites owners")?;
            }
            let row = tx
                .query_one(
                    &format!(
                        "INSERT INTO invites (workspace_id, role, secret_hash, created_by, created_at, expires_at) \
                         VALUES ($1, $2, $3, $4, $5, $6) RETURNING {INVITE_COLUMNS}"
                    ),
                    &[
                        &workspace_id,
                        &role.as_str(),
                        &hash,
                        &by.user_id(),
                        &time_text(at),
                        &time_text(at + TimeDelta::days(INVITE_DAYS)),
                    ],
                )
                .map_err(store)?;
            let invite = invite_row(&row)?;
            tx.commit().map_err(store)?;
            tracing::info!(workspace_id, invite_id = invite.id, role = %role, "made an invite");
            Ok((secret, invite))
        })
    }

    /// The pending invites of `workspace_id` (neither accepted, revoked nor expired),
    /// oldest first.
    pub fn invites(&self, workspace_id: i64) -> Result<Vec<Invite>, ToolError> {
        self.db.with_client(|client| {
            client
                .query(
                    &format!(
                        "SELECT {INVITE_COLUMNS} FROM invites WHERE workspace_id = $1 \
                         AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > $2 ORDER BY id"
                    ),
                    &[&workspace_id, &time_text(now())],
                )
                .map_err(store)?
                .iter()
                .map(invite_row)
                .collect()
        })
    }

    /// Revoke a pending invite of `workspace_id`, as `by` (an owner or an admin).
    pub fn revoke_invite(
        &self,
        workspace_id: i64,
        invite_id: i64,
        by: Actor,
    ) -> Result<(), ToolError> {
        self.db.with_client(|client| {
            let mut tx = client.transaction().map_err(store)?;
            lock_workspace(&mut tx, workspace_id)?;
            manager_role(&mut tx, workspace_id, by)?;
            let revoked = tx
                .execute(
                    "UPDATE invites SET revoked_at = $3 WHERE workspace_id = $1 AND id = $2 \
                     AND accepted_at IS NULL AND revoked_at IS NULL",
                    &[&workspace_id, &invite_id, &time_text(now())],
                )
                .map_err(store)?;
            if revoked == 0 {
                return Err(ToolError::not_found(format!(
                    "There is no pending invite {invite_id} in this workspace"
                ))
                .with_hint("List the workspace's pending invites to see their ids."));
            }
            tx.commit().map_err(store)
        })
    }

    /// What the invite with this secret offers, `None` when there is no such pending
    /// invite (unknown, used, revoked or expired).
    pub fn invite_by_secret(&self, secret: &str) -> Result<Option<InviteInfo>, ToolError> {
        let secret = secret.trim();
        if !well_formed(secret) {
            return Ok(None);
        }
        let hash = secret_hash(secret);
        let bytes: &[u8] = hash.as_bytes();
        self.db.with_client(|client| {
            let Some(row) = client
                .query_opt(
                    "SELECT i.secret_hash, i.workspace_id, w.name, i.role, i.expires_at \
                     FROM invites i JOIN workspaces w ON w.id = i.workspace_id \
                     WHERE i.secret_hash = $1 AND i.accepted_at IS NULL AND i.revoked_at IS NULL \
                       AND i.expires_at > $2",
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
            Ok(Some(InviteInfo {
                workspace_id: row.try_get(1).map_err(store)?,
                workspace: row.try_get(2).map_err(store)?,
                role: role_of(&row.try_get::<_, String>(3).map_err(store)?)?,
                expires_at: row.try_get(4).map_err(store)?,
            }))
        })
    }

    /// Accept the invite with this secret: as a new account (made now, with its password)
    /// or as an existing user, who becomes a member with the invite's role. In one
    /// transaction: the invite is used once, and nothing is made when it cannot be.
    pub fn accept_invite(&self, secret: &str, who: AcceptAs<'_>) -> Result<Membership, ToolError> {
        let secret = secret.trim();
        if !well_formed(secret) {
            return Err(invalid_invite("This invite link is not valid"));
        }
        // Checked and hashed before the transaction, which holds the invite's lock. A new
        // account's email, when taken, tells that someone has it: such attempts count as
        // failed sign-ins of the email and the address (and are refused past the limits),
        // so an invite cannot be used to list who has an account.
        let (new_user, attempt) = match who {
            AcceptAs::NewUser {
                email,
                name,
                password,
                from,
            } => {
                let email = check_email(email)?;
                let name = check_user_name(name)?;
                check_password(password)?;
                let attempt = limits::begin(&self.db, &email, from)?;
                (Some((email, name, hash_password(password)?)), Some(attempt))
            }
            AcceptAs::Existing(_) => (None, None),
        };
        let hash = secret_hash(secret);
        let bytes: &[u8] = hash.as_bytes();
        let at = time_text(now());
        let accepted = self.db.with_client(|client| {
            let mut tx = client.transaction().map_err(store)?;
            // The workspace's row first, as every change of its members and invites locks
            // it (no lock cycle with a revocation), then the invite's.
            let workspace_id: i64 = tx
                .query_opt(
                    "SELECT workspace_id FROM invites WHERE secret_hash = $1",
                    &[&bytes],
                )
                .map_err(store)?
                .ok_or_else(|| invalid_invite("This invite link is not valid"))?
                .try_get(0)
                .map_err(store)?;
            let workspace = lock_workspace(&mut tx, workspace_id)?;
            let (invite_id, _, role) = pending_invite(&mut tx, bytes, &hash, &at)?;
            let user_id = match (&new_user, who) {
                (Some((email, name, password_hash)), _) => {
                    insert_user(&mut tx, email, name, Some(password_hash))
                        .map_err(|err| {
                            if err.code == mcp_common_core::codes::CONFLICT {
                                err.with_hint("Sign in as that account and accept the invite there, or give another email; the invite is still unused.")
                            } else {
                                err
                            }
                        })?
                        .id
                }
                (None, AcceptAs::Existing(user_id)) => user_id,
                (None, AcceptAs::NewUser { .. }) => {
                    return Err(ToolError::internal("an invite's new user went missing"));
                }
            };
            insert_membership(&mut tx, workspace_id, user_id, role)?;
            tx.execute(
                "UPDATE invites SET accepted_at = $2, accepted_by = $3 WHERE id = $1",
                &[&invite_id, &at, &user_id],
            )
            .map_err(store)?;
            tx.commit().map_err(store)?;
            tracing::info!(workspace_id, user_id, invite_id, role = %role, "accepted an invite");
            Ok(Membership { workspace, role })
        })?;
        if let Some(attempt) = attempt {
            attempt.succeeded(&self.db);
        }
        Ok(accepted)
    }
}

/// The pending invite with this hash, locked for `tx`: its id, workspace and role; else
/// why it cannot be accepted.
fn pending_invite(
    tx: &mut impl GenericClient,
    bytes: &[u8],
    hash: &blake3::Hash,
    at: &str,
) -> Result<(i64, i64, Role), ToolError> {
    let row = tx
        .query_opt(
            "SELECT id, workspace_id, role, secret_hash, accepted_at, revoked_at, expires_at \
             FROM invites WHERE secret_hash = $1 FOR UPDATE",
            &[&bytes],
        )
        .map_err(store)?
        .ok_or_else(|| invalid_invite("This invite link is not valid"))?;
    let stored: Vec<u8> = row.try_get(3).map_err(store)?;
    if !same_hash(&stored, hash) {
        return Err(invalid_invite("This invite link is not valid"));
    }
    if row
        .try_get::<_, Option<String>>(4)
        .map_err(store)?
        .is_some()
    {
        return Err(invalid_invite("This invite link was already used"));
    }
    if row
        .try_get::<_, Option<String>>(5)
        .map_err(store)?
        .is_some()
    {
        return Err(invalid_invite("This invite link was revoked"));
    }
    let expires_at: String = row.try_get(6).map_err(store)?;
    if expires_at.as_str() <= at {
        return Err(invalid_invite(&format!(
            "This invite link expired at {expires_at}"
        )));
    }
    Ok((
        row.try_get(0).map_err(store)?,
        row.try_get(1).map_err(store)?,
        role_of(&row.try_get::<_, String>(2).map_err(store)?)?,
    ))
}
