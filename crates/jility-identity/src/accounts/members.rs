//! Who belongs to which workspace, with which [`Role`], and the rules of changing it:
//! only owners and admins manage members; only an owner makes, unmakes or removes an
//! owner; a workspace always keeps at least one owner; anyone may leave (but its last
//! owner). Each change runs in one transaction that locks its workspace's row, so two
//! changes cannot both remove the last owner.

use postgres::GenericClient;
use serde::Serialize;

use mcp_common_core::ToolError;

use super::handle::{Accounts, Actor, now, store, time_text};
use super::roles::Role;
use super::users::{USER_COLUMNS, User, no_user, user_row};
use jility_core::errors;
use jility_pg::store::Workspace;

/// A workspace a user belongs to, and their role in it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Membership {
    pub workspace: Workspace,
    pub role: Role,
}

/// A member of a workspace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Member {
    pub user: User,
    pub role: Role,
    /// When they joined.
    pub since: String,
}

/// A role as stored, read back.
pub(super) fn role_of(text: &str) -> Result<Role, ToolError> {
    text.parse()
        .map_err(|_| ToolError::internal(format!("damaged role in the database: {text}")))
}

/// Lock workspace `workspace_id`'s row for the transaction `tx` (its members and invites
/// change one change at a time), and answer it; a missing workspace is `not_found`. `NO KEY
/// UPDATE`, so rows that merely reference the workspace (tickets, tokens) are not held up.
/// Every transaction here that locks more than a workspace locks it first.
pub(super) fn lock_workspace(
    tx: &mut impl GenericClient,
    workspace_id: i64,
) -> Result<Workspace, ToolError> {
    let row = tx
        .query_opt(
            "SELECT id, name, created_at FROM workspaces WHERE id = $1 FOR NO KEY UPDATE",
            &[&workspace_id],
        )
        .map_err(store)?
        .ok_or_else(|| {
            ToolError::not_found(format!("There is no workspace {workspace_id}"))
                .with_hint("Check the workspace's name or id.")
        })?;
    Ok(Workspace {
        id: row.try_get(0).map_err(store)?,
        name: row.try_get(1).map_err(store)?,
        created_at: row.try_get(2).map_err(store)?,
    })
}

/// `user_id`'s role in `workspace_id`, if a member.
pub(super) fn role_in(
    client: &mut impl GenericClient,
    workspace_id: i64,
    user_id: i64,
) -> Result<Option<Role>, ToolError> {
    client
        .query_opt(
            "SELECT role FROM memberships WHERE workspace_id = $1 AND user_id = $2",
            &[&workspace_id, &user_id],
        )
        .map_err(store)?
        .map(|row| role_of(&row.try_get::<_, String>(0).map_err(store)?))
        .transpose()
}

/// The role `actor` manages `workspace_id` with (the operator as an owner), or
/// `permission_denied`.
pub(super) fn manager_role(
    client: &mut impl GenericClient,
    workspace_id: i64,
    actor: Actor,
) -> Result<Role, ToolError> {
    let role = match actor {
        Actor::Operator => Some(Role::Owner),
        Actor::User(user_id) => role_in(client, workspace_id, user_id)?,
    };
    match role {
        Some(role) if role.manages_members() => Ok(role),
        _ => Err(denied(
            "Only an owner or an admin of the workspace manages its members and invites",
        )),
    }
}

/// Refuse what only an owner may do when `manager` is not one.
pub(super) fn owner_only(manager: Role, what: &str) -> Result<(), ToolError> {
    if manager == Role::Owner {
        Ok(())
    } else {
        Err(denied(&format!("Only an owner {what}")))
    }
}

pub(super) fn denied(message: &str) -> ToolError {
    ToolError::new(errors::PERMISSION_DENIED, message.to_string())
        .with_hint("Ask an owner of the workspace to do it.")
}

fn last_owner() -> ToolError {
    ToolError::new(
        mcp_common_core::codes::CONFLICT,
        "A workspace keeps at least one owner; this is its last",
    )
    .with_hint("Make another member an owner first, then change or remove this one.")
}

fn owners(tx: &mut impl GenericClient, workspace_id: i64) -> Result<i64, ToolError> {
    tx.query_one(
        "SELECT count(*) FROM memberships WHERE workspace_id = $1 AND role = 'owner'",
        &[&workspace_id],
    )
    .map_err(store)?
    .try_get(0)
    .map_err(store)
}

/// Insert a membership on `tx`; one already there is a `conflict`.
pub(super) fn insert_membership(
    tx: &mut impl GenericClient,
    workspace_id: i64,
    user_id: i64,
    role: Role,
) -> Result<(), ToolError> {
    let inserted = tx
        .execute(
            "INSERT INTO memberships (workspace_id, user_id, role, created_at) \
             VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
            &[&workspace_id, &user_id, &role.as_str(), &time_text(now())],
        )
        .map_err(|err| {
            if err.code() == Some(&postgres::error::SqlState::FOREIGN_KEY_VIOLATION) {
                no_user(user_id)
            } else {
                store(err)
            }
        })?;
    if inserted == 0 {
        return Err(ToolError::new(
            mcp_common_core::codes::CONFLICT,
            format!("User {user_id} is already a member of this workspace"),
        )
        .with_hint("Change their role instead."));
    }
    Ok(())
}

impl Accounts {
    /// The workspaces `user_id` belongs to, by name.
    pub fn memberships(&self, user_id: i64) -> Result<Vec<Membership>, ToolError> {
        self.db.with_client(|client| {
            client
                .query(
                    "SELECT w.id, w.name, w.created_at, m.role FROM memberships m \
                     JOIN workspaces w ON w.id = m.workspace_id WHERE m.user_id = $1 \
                     ORDER BY w.name",
                    &[&user_id],
                )
                .map_err(store)?
                .iter()
                .map(|row| {
                    Ok(Membership {
                        workspace: Workspace {
                            id: row.try_get(0).map_err(store)?,
                            name: row.try_get(1).map_err(store)?,
                            created_at: row.try_get(2).map_err(store)?,
                        },
                        role: role_of(&row.try_get::<_, String>(3).map_err(store)?)?,
                    })
                })
                .collect()
        })
    }

    /// `user_id`'s role in `workspace_id`, `None` when not a member.
    pub fn membership(&self, user_id: i64, workspace_id: i64) -> Result<Option<Role>, ToolError> {
        self.db
            .with_client(|client| role_in(client, workspace_id, user_id))
    }

    /// The members of `workspace_id`, owners first, then by name.
    pub fn members(&self, workspace_id: i64) -> Result<Vec<Member>, ToolError> {
        self.db.with_client(|client| {
            client
                .query(
                    &format!(
                        "SELECT {USER_COLUMNS}, m.role, m.created_at FROM memberships m \
                         JOIN users u ON u.id = m.user_id WHERE m.workspace_id = $1 \
                         ORDER BY array_position(ARRAY['owner','admin','member','viewer'], m.role), \
                                  lower(u.name), u.id"
                    ),
                    &[&workspace_id],
                )
                .map_err(store)?
                .iter()
                .map(|row| {
                    Ok(Member {
                        user: user_row(row, 0)?,
                        role: role_of(&row.try_get::<_, String>(5).map_err(store)?)?,
                        since: row.try_get(6).map_err(store)?,
                    })
                })
                .collect()
        })
    }

    /// Make `user_id` a member of `workspace_id` with `role`, as `by` (an owner or an
    /// admin; only an owner adds an owner).
    pub fn add_member(
        &self,
        workspace_id: i64,
        user_id: i64,
        role: Role,
        by: Actor,
    ) -> Result<Member, ToolError> {
        self.db.with_client(|client| {
            let mut tx = client.transaction().map_err(store)?;
            lock_workspace(&mut tx, workspace_id)?;
            let manager = manager_role(&mut tx, workspace_id, by)?;
            if role == Role::Owner {
                owner_only(manager, "makes owners")?;
            }
            insert_membership(&mut tx, workspace_id, user_id, role)?;
            let member = member_in(&mut tx, workspace_id, user_id)?;
            tx.commit().map_err(store)?;
            tracing::info!(workspace_id, user_id, role = %role, "added a member");
            Ok(member)
        })
    }

    /// Change `user_id`'s role in `workspace_id`, as `by` (an owner or an admin; only an
    /// owner makes or unmakes an owner; the last owner stays one).
    pub fn set_role(
        &self,
        workspace_id: i64,
        user_id: i64,
        role: Role,
        by: Actor,
    ) -> Result<Member, ToolError> {
        self.db.with_client(|client| {
            let mut tx = client.transaction().map_err(store)?;
            lock_workspace(&mut tx, workspace_id)?;
            let manager = manager_role(&mut tx, workspace_id, by)?;
            let current =
                role_in(&mut tx, workspace_id, user_id)?.ok_or_else(|| not_member(user_id))?;
            if current == Role::Owner || role == Role::Owner {
                owner_only(manager, "makes or unmakes owners")?;
            }
            if current == Role::Owner && role != Role::Owner && owners(&mut tx, workspace_id)? <= 1
            {
                return Err(last_owner());
            }
            tx.execute(
                "UPDATE memberships SET role = $3 WHERE workspace_id = $1 AND user_id = $2",
                &[&workspace_id, &user_id, &role.as_str()],
            )
            .map_err(store)?;
            revoke_beyond(&mut tx, workspace_id, user_id, Some(role))?;
            // Their open pages' live streams check again (and end) when this commits.
            super::access::notify_access_changed(&mut tx, super::access::Access::User(user_id))?;
            let member = member_in(&mut tx, workspace_id, user_id)?;
            tx.commit().map_err(store)?;
            tracing::info!(workspace_id, user_id, role = %role, "changed a member's role");
            Ok(member)
        })
    }

    /// Remove `user_id` from `workspace_id`, as `by`: an owner or an admin (only an owner
    /// removes an owner), or the member themselves (leaving); never the last owner.
    pub fn remove_member(
        &self,
        workspace_id: i64,
        user_id: i64,
        by: Actor,
    ) -> Result<(), ToolError> {
        self.db.with_client(|client| {
            let mut tx = client.transaction().map_err(store)?;
            lock_workspace(&mut tx, workspace_id)?;
            let leaving = by == Actor::User(user_id);
            let manager = if leaving {
                None
            } else {
                Some(manager_role(&mut tx, workspace_id, by)?)
            };
            let current =
                role_in(&mut tx, workspace_id, user_id)?.ok_or_else(|| not_member(user_id))?;
            if current == Role::Owner {
                if let Some(manager) = manager {
                    owner_only(manager, "removes owners")?;
                }
                if owners(&mut tx, workspace_id)? <= 1 {
                    return Err(last_owner());
                }
            }
            tx.execute(
                "DELETE FROM memberships WHERE workspace_id = $1 AND user_id = $2",
                &[&workspace_id, &user_id],
            )
            .map_err(store)?;
            revoke_beyond(&mut tx, workspace_id, user_id, None)?;
            super::access::notify_access_changed(&mut tx, super::access::Access::User(user_id))?;
            tx.commit().map_err(store)?;
            tracing::info!(workspace_id, user_id, "removed a member");
            Ok(())
        })
    }
}

/// Revoke what `user_id` holds in `workspace_id` beyond `role` (`None`: they left, so all
/// of it): the API tokens they minted and the OAuth grants they approved whose scopes the
/// role no longer allows. Each token's revocation is published, so it stops at once.
fn revoke_beyond(
    tx: &mut postgres::Transaction<'_>,
    workspace_id: i64,
    user_id: i64,
    role: Option<Role>,
) -> Result<(), ToolError> {
    let allowed: Option<Vec<String>> = match role {
        Some(role)
            if role
                .scopes()
                .contains(jility_core::token::Scope::FullAccess) =>
        {
            return Ok(());
        }
        Some(role) => Some(role.scopes().names()),
        None => None,
    };
    let at = time_text(now());
    let grants = tx
        .query(
            "UPDATE oauth_grants SET revoked_at = $3, revoked_reason = 'the person''s role changed' \
             WHERE workspace_id = $1 AND user_id = $2 AND revoked_at IS NULL \
               AND ($4::TEXT[] IS NULL OR NOT scopes <@ $4::TEXT[]) RETURNING id",
            &[&workspace_id, &user_id, &at, &allowed],
        )
        .map_err(store)?;
    let grant_ids: Vec<i64> = grants
        .iter()
        .map(|r| r.try_get(0))
        .collect::<Result<_, _>>()
        .map_err(store)?;
    let tokens = tx
        .query(
            "UPDATE api_tokens SET revoked_at = $3 \
             WHERE workspace_id = $1 AND revoked_at IS NULL \
               AND ((created_by_user = $2 AND ($4::TEXT[] IS NULL OR NOT scopes <@ $4::TEXT[])) \
                    OR oauth_grant_id = ANY($5)) \
             RETURNING id",
            &[&workspace_id, &user_id, &at, &allowed, &grant_ids],
        )
        .map_err(store)?;
    for token in &tokens {
        jility_pg::events::notify_revoked(tx, workspace_id, token.try_get(0).map_err(store)?)?;
    }
    if !tokens.is_empty() || !grant_ids.is_empty() {
        tracing::info!(
            workspace_id,
            user_id,
            tokens = tokens.len(),
            grants = grant_ids.len(),
            "revoked what a member may no longer hold"
        );
    }
    Ok(())
}

fn not_member(user_id: i64) -> ToolError {
    ToolError::not_found(format!("User {user_id} is not a member of this workspace"))
        .with_hint("List the workspace's members to see who is.")
}

/// The member `user_id` of `workspace_id`, read on `tx`.
pub(super) fn member_in(
    tx: &mut impl GenericClient,
    workspace_id: i64,
    user_id: i64,
) -> Result<Member, ToolError> {
    let row = tx
        .query_opt(
            &format!(
                "SELECT {USER_COLUMNS}, m.role, m.created_at FROM memberships m \
                 JOIN users u ON u.id = m.user_id WHERE m.workspace_id = $1 AND m.user_id = $2"
            ),
            &[&workspace_id, &user_id],
        )
        .map_err(store)?
        .ok_or_else(|| not_member(user_id))?;
    Ok(Member {
        user: user_row(&row, 0)?,
        role: role_of(&row.try_get::<_, String>(5).map_err(store)?)?,
        since: row.try_get(6).map_err(store)?,
    })
}
