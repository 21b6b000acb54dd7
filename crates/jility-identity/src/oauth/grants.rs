//! What OAuth keeps: authorization codes, grants (one per approval, the family of its
//! refresh tokens), refresh tokens, and the access tokens (API tokens marked with their
//! grant). Every method blocks on the database; each change is one transaction with its
//! audit entry, and a revocation is published as every token's is (each server process
//! stops accepting the grant's tokens at once).
//!
//! A grant holds one live access token at a time: a refresh ends the grant's access tokens
//! (the one minted with the refresh token it rotates) in the transaction that mints the
//! next, audited as `oauth.revoke` ("the previous access token, replaced by a refresh") and
//! published. A request still in flight with the old token is refused from then on; the
//! client retries with the new one.

use chrono::TimeDelta;
use postgres::GenericClient;
use serde::Serialize;

use jility_core::token::{NewToken, PlainToken, Scope, ScopeSet};
use mcp_common_core::ToolError;

use super::clients::Client;
use super::{OAuthError, pkce};
use crate::accounts::{
    PlainSecret, Role, now, same_hash, secret_hash, store, time_text, well_formed,
};
use crate::audit::{NewEntry, record_in};
use jility_pg::store::PgDatabase;

/// The scopes OAuth grants (never `full_access`), in the order they are shown.
pub const SCOPES: [&str; 4] = [
    "tickets:read",
    "tickets:write",
    "tickets:delete",
    "comments:write",
];

/// The prefix of refresh tokens (told apart from access tokens, `jil_live_…`).
const REFRESH_PREFIX: &str = "jil_rt_";

/// The OAuth store of a database (clones share the pool).
#[derive(Clone)]
pub struct OAuth {
    pub db: PgDatabase,
}

/// What a code or a refresh hands the client.
#[derive(Debug)]
pub struct Issued {
    pub access_token: PlainToken,
    pub expires_in: i64,
    pub refresh_token: String,
    pub scope: String,
    pub grant_id: i64,
}

/// A grant as the settings page shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Grant {
    pub id: i64,
    pub client_name: String,
    pub client_id: String,
    pub redirect_host: String,
    pub user_id: i64,
    pub user_email: String,
    pub scopes: Vec<String>,
    pub created_at: String,
    pub last_used_at: String,
}

/// A code to issue: what the person approved.
pub struct NewCode<'a> {
    pub client: &'a Client,
    pub user_id: i64,
    pub workspace_id: i64,
    pub scopes: &'a [String],
    pub redirect_uri: &'a str,
    pub code_challenge: &'a str,
    pub resource: &'a str,
}

/// The scopes of `role` that OAuth can grant.
pub fn grantable(role: Role) -> Vec<String> {
    let allowed = role.scopes();
    SCOPES
        .iter()
        .filter(|name| {
            name.parse::<Scope>()
                .is_ok_and(|scope| allowed.allows(scope))
        })
        .map(|s| (*s).to_string())
        .collect()
}

/// The requested `scope` parameter as a list of OAuth scopes, or why not; empty: none asked.
pub fn parse_scope(scope: Option<&str>) -> Result<Vec<String>, OAuthError> {
    let mut out = Vec::new();
    for name in scope.unwrap_or_default().split_ascii_whitespace() {
        if !SCOPES.contains(&name) {
            return Err(OAuthError::invalid_scope(format!(
                "The scope `{}` is not offered (these are: {})",
                mcp_common_core::text::clip(name, 40),
                SCOPES.join(" ")
            )));
        }
        if !out.iter().any(|s| s == name) {
            out.push(name.to_string());
        }
    }
    Ok(out)
}

fn invalid_grant(message: &str) -> OAuthError {
    OAuthError::invalid_grant(message)
}

fn audit(
    tx: &mut impl GenericClient,
    workspace_id: i64,
    actor: &str,
    operation: &str,
    detail: &str,
) -> Result<(), ToolError> {
    record_in(
        tx,
        &NewEntry {
            workspace_id: Some(workspace_id),
            token_id: None,
            actor: Some(actor),
            operation,
            ticket: None,
            status: 200,
            detail: Some(detail),
        },
    )
    .map_err(store)
}

impl OAuth {
    pub fn new(db: &PgDatabase) -> Self {
        Self { db: db.clone() }
    }

    /// Issue a single-use code for what the person approved; the secret is in the answer
    /// alone.
    pub fn issue_code(&self, new: &NewCode<'_>) -> Result<PlainSecret, ToolError> {
        let code = PlainSecret::mint()?;
        let hash = secret_hash(code.expose());
        let hash: &[u8] = hash.as_bytes();
        let at = now();
        self.db.with_client(|client| {
            let mut tx = client.transaction().map_err(store)?;
            tx.execute(
                "DELETE FROM oauth_codes WHERE expires_at <= $1 AND grant_id IS NULL",
                &[&time_text(at - TimeDelta::days(1))],
            )
            .map_err(store)?;
            tx.execute(
                "INSERT INTO oauth_codes (code_hash, client_id, user_id, workspace_id, scopes, \
                 redirect_uri, code_challenge, resource, created_at, expires_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
                &[
                    &hash,
                    &new.client.id,
                    &new.user_id,
                    &new.workspace_id,
                    &new.scopes,
                    &new.redirect_uri,
                    &new.code_challenge,
                    &new.resource,
                    &time_text(at),
                    &time_text(at + TimeDelta::seconds(super::CODE_SECS)),
                ],
            )
            .map_err(store)?;
            tx.execute(
                "UPDATE oauth_clients SET last_used_at = $2 WHERE id = $1",
                &[&new.client.id, &time_text(at)],
            )
            .map_err(store)?;
            tx.commit().map_err(store)?;
            Ok(code)
        })
    }

    /// Exchange `code` (with the client, redirect URI, PKCE verifier and resource it was
    /// issued for) for tokens. A code presented a second time revokes what the first
    /// exchange issued.
    pub fn exchange_code(
        &self,
        code: &str,
        client_id: &str,
        redirect_uri: &str,
        verifier: &str,
        resource: Option<&str>,
    ) -> Result<Issued, OAuthError> {
        if !well_formed(code) {
            return Err(invalid_grant("The authorization code is not valid"));
        }
        let hash = secret_hash(code);
        let bytes: &[u8] = hash.as_bytes();
        let at = now();
        let at_text = time_text(at);
        let outcome = self.db.with_client(
            |client| -> Result<Result<Issued, OAuthError>, ToolError> {
                let mut tx = client.transaction().map_err(store)?;
                let Some(row) = tx
                .query_opt(
                    "SELECT c.id, c.code_hash, cl.client_id, c.user_id, c.workspace_id, c.scopes, \
                            c.redirect_uri, c.code_challenge, c.resource, c.expires_at, c.used_at, \
                            c.grant_id, cl.id, cl.name, u.email \
                     FROM oauth_codes c JOIN oauth_clients cl ON cl.id = c.client_id \
                     JOIN users u ON u.id = c.user_id \
                     WHERE c.code_hash = $1 FOR UPDATE OF c",
                    &[&bytes],
                )
                .map_err(store)?
            else {
                return Ok(Err(invalid_grant("The authorization code is not valid")));
            };
                let stored: Vec<u8> = row.try_get(1).map_err(store)?;
                if !same_hash(&stored, &hash) {
                    return Ok(Err(invalid_grant("The authorization code is not valid")));
                }
                let code_id: i64 = row.try_get(0).map_err(store)?;
                let workspace_id: i64 = row.try_get(4).map_err(store)?;
                let email: String = row.try_get(14).map_err(store)?;
                if row
                    .try_get::<_, Option<String>>(10)
                    .map_err(store)?
                    .is_some()
                {
                    // Replayed: whatever the first exchange issued is revoked.
                    if let Some(grant_id) = row.try_get::<_, Option<i64>>(11).map_err(store)? {
                        revoke_in(&mut tx, grant_id, "authorization code used twice", &email)?;
                    }
                    tx.commit().map_err(store)?;
                    return Ok(Err(invalid_grant(
                        "The authorization code was used already; the tokens it gave are revoked",
                    )));
                }
                let expires_at: String = row.try_get(9).map_err(store)?;
                if expires_at <= at_text {
                    return Ok(Err(invalid_grant("The authorization code has expired")));
                }
                if row.try_get::<_, String>(2).map_err(store)? != client_id {
                    return Ok(Err(invalid_grant(
                        "The authorization code was issued to another client",
                    )));
                }
                if row.try_get::<_, String>(6).map_err(store)? != redirect_uri {
                    return Ok(Err(invalid_grant(
                        "The redirect_uri is not the one of the authorization request",
                    )));
                }
                let code_resource: String = row.try_get(8).map_err(store)?;
                if resource.is_some_and(|r| r != code_resource) {
                    return Ok(Err(OAuthError::invalid_target(
                        "The resource is not the one the code was issued for",
                    )));
                }
                let challenge: String = row.try_get(7).map_err(store)?;
                if !pkce::verifies(verifier, &challenge) {
                    return Ok(Err(invalid_grant(
                        "The code_verifier does not match the code_challenge (PKCE, S256)",
                    )));
                }
                let user_id: i64 = row.try_get(3).map_err(store)?;
                let asked: Vec<String> = row.try_get(5).map_err(store)?;
                let Some(scopes) = still_allowed(&mut tx, user_id, workspace_id, &asked)? else {
                    return Ok(Err(invalid_grant(
                        "The person who approved is no longer a member of the workspace",
                    )));
                };
                let client_row: i64 = row.try_get(12).map_err(store)?;
                let client_name: String = row.try_get(13).map_err(store)?;
                let grant_id: i64 = tx
                .query_one(
                    "INSERT INTO oauth_grants (client_id, user_id, workspace_id, scopes, resource, \
                     created_at, last_used_at) VALUES ($1, $2, $3, $4, $5, $6, $6) RETURNING id",
                    &[&client_row, &user_id, &workspace_id, &scopes, &code_resource, &at_text],
                )
                .map_err(store)?
                .try_get(0)
                .map_err(store)?;
                tx.execute(
                    "UPDATE oauth_codes SET used_at = $2, grant_id = $3 WHERE id = $1",
                    &[&code_id, &at_text, &grant_id],
                )
                .map_err(store)?;
                let issued = issue(
                    &mut tx,
                    &Family {
                        grant_id,
                        workspace_id,
                        user_id,
                        email: &email,
                        client_name: &client_name,
                        resource: &code_resource,
                    },
                    &scopes,
                )?;
                audit(
                    &mut tx,
                    workspace_id,
                    &email,
                    "oauth.grant",
                    &format!("{client_name}: {}", scopes.join(" ")),
                )?;
                tx.commit().map_err(store)?;
                tracing::info!(grant_id, workspace_id, "granted an OAuth client access");
                Ok(Ok(issued))
            },
        );
        outcome.map_err(OAuthError::from)?
    }

    /// New tokens for `refresh_token` (which is used up: rotation). A refresh token used
    /// already revokes its whole grant. `scope`, when given, narrows the access token.
    pub fn refresh(
        &self,
        refresh_token: &str,
        client_id: &str,
        scope: Option<&str>,
        resource: Option<&str>,
    ) -> Result<Issued, OAuthError> {
        let Some(secret) = refresh_token
            .strip_prefix(REFRESH_PREFIX)
            .filter(|s| well_formed(s))
        else {
            return Err(invalid_grant("The refresh token is not valid"));
        };
        let narrowed = parse_scope(scope)?;
        let hash = secret_hash(secret);
        let bytes: &[u8] = hash.as_bytes();
        let at_text = time_text(now());
        let outcome = self.db.with_client(|client| -> Result<Result<Issued, OAuthError>, ToolError> {
            let mut tx = client.transaction().map_err(store)?;
            let Some(row) = tx
                .query_opt(
                    "SELECT r.id, r.token_hash, r.expires_at, r.used_at, g.id, g.revoked_at, \
                            cl.client_id, g.user_id, g.workspace_id, g.scopes, g.resource, \
                            cl.name, u.email \
                     FROM oauth_refresh_tokens r JOIN oauth_grants g ON g.id = r.grant_id \
                     JOIN oauth_clients cl ON cl.id = g.client_id JOIN users u ON u.id = g.user_id \
                     WHERE r.token_hash = $1 FOR UPDATE OF r, g",
                    &[&bytes],
                )
                .map_err(store)?
            else {
                return Ok(Err(invalid_grant("The refresh token is not valid")));
            };
            let stored: Vec<u8> = row.try_get(1).map_err(store)?;
            if !same_hash(&stored, &hash) {
                return Ok(Err(invalid_grant("The refresh token is not valid")));
            }
            let grant_id: i64 = row.try_get(4).map_err(store)?;
            let email: String = row.try_get(12).map_err(store)?;
            if row.try_get::<_, Option<String>>(5).map_err(store)?.is_some() {
                return Ok(Err(invalid_grant("The access this refresh token belongs to was revoked")));
            }
            if row.try_get::<_, Option<String>>(3).map_err(store)?.is_some() {
                revoke_in(&mut tx, grant_id, "refresh token reused", &email)?;
                tx.commit().map_err(store)?;
                return Ok(Err(invalid_grant(
                    "The refresh token was used already; the access it belonged to is revoked (sign in again)",
                )));
            }
            if row.try_get::<_, String>(2).map_err(store)? <= at_text {
                return Ok(Err(invalid_grant("The refresh token has expired (sign in again)")));
            }
            if row.try_get::<_, String>(6).map_err(store)? != client_id {
                return Ok(Err(invalid_grant("The refresh token was issued to another client")));
            }
            let grant_resource: String = row.try_get(10).map_err(store)?;
            if resource.is_some_and(|r| r != grant_resource) {
                return Ok(Err(OAuthError::invalid_target(
                    "The resource is not the one the grant is bound to",
                )));
            }
            let granted: Vec<String> = row.try_get(9).map_err(store)?;
            if let Some(extra) = narrowed.iter().find(|s| !granted.contains(s)) {
                return Ok(Err(OAuthError::invalid_scope(format!(
                    "The scope `{extra}` was not granted; ask for it by signing in again"
                ))));
            }
            let user_id: i64 = row.try_get(7).map_err(store)?;
            let workspace_id: i64 = row.try_get(8).map_err(store)?;
            let asked = if narrowed.is_empty() { granted } else { narrowed.clone() };
            let Some(scopes) = still_allowed(&mut tx, user_id, workspace_id, &asked)? else {
                revoke_in(&mut tx, grant_id, "the person left the workspace", &email)?;
                tx.commit().map_err(store)?;
                return Ok(Err(invalid_grant(
                    "The person who approved is no longer a member of the workspace",
                )));
            };
            let refresh_id: i64 = row.try_get(0).map_err(store)?;
            tx.execute(
                "UPDATE oauth_refresh_tokens SET used_at = $2 WHERE id = $1",
                &[&refresh_id, &at_text],
            )
            .map_err(store)?;
            let client_name: String = row.try_get(11).map_err(store)?;
            // One live access token per grant: the one the rotated refresh token came with
            // (and any other still live) ends now, published and audited like any revocation.
            let ended = end_access_tokens(&mut tx, grant_id, workspace_id)?;
            if ended > 0 {
                audit(
                    &mut tx,
                    workspace_id,
                    &email,
                    "oauth.revoke",
                    &format!("{client_name}: the previous access token, replaced by a refresh"),
                )?;
            }
            let issued = issue(
                &mut tx,
                &Family {
                    grant_id,
                    workspace_id,
                    user_id,
                    email: &email,
                    client_name: &client_name,
                    resource: &grant_resource,
                },
                &scopes,
            )?;
            audit(&mut tx, workspace_id, &email, "oauth.refresh", &client_name)?;
            tx.commit().map_err(store)?;
            Ok(Ok(issued))
        });
        outcome.map_err(OAuthError::from)?
    }

    /// Revoke what `token` (an access or refresh token of a grant) belongs to: the whole
    /// grant. Any other token, or none, is left alone (RFC 7009: the answer is the same).
    pub fn revoke_token(&self, token: &str) -> Result<(), ToolError> {
        let token = token.trim();
        let (table, column, hash) = match token.strip_prefix(REFRESH_PREFIX) {
            Some(secret) if well_formed(secret) => {
                ("oauth_refresh_tokens", "grant_id", secret_hash(secret))
            }
            Some(_) => return Ok(()),
            None if jility_core::token::is_well_formed(token) => (
                "api_tokens",
                "oauth_grant_id",
                blake3::hash(token.as_bytes()),
            ),
            None => return Ok(()),
        };
        let bytes: &[u8] = hash.as_bytes();
        self.db.with_client(|client| {
            let mut tx = client.transaction().map_err(store)?;
            let found = tx
                .query_opt(
                    &format!(
                        "SELECT t.{column}, u.email FROM {table} t \
                         JOIN oauth_grants g ON g.id = t.{column} JOIN users u ON u.id = g.user_id \
                         WHERE t.token_hash = $1"
                    ),
                    &[&bytes],
                )
                .map_err(store)?;
            if let Some(row) = found {
                let grant_id: i64 = row.try_get(0).map_err(store)?;
                let email: String = row.try_get(1).map_err(store)?;
                revoke_in(&mut tx, grant_id, "revoked by the client", &email)?;
            }
            tx.commit().map_err(store)
        })
    }

    /// Revoke grant `grant_id` of `workspace_id` (a person on the settings page, `by`);
    /// `false` when there is no such live grant there.
    pub fn revoke_grant(
        &self,
        workspace_id: i64,
        grant_id: i64,
        by: &str,
        only_user: Option<i64>,
    ) -> Result<bool, ToolError> {
        self.db.with_client(|client| {
            let mut tx = client.transaction().map_err(store)?;
            let found = tx
                .query_opt(
                    "SELECT 1 FROM oauth_grants WHERE id = $1 AND workspace_id = $2 \
                     AND revoked_at IS NULL AND ($3::BIGINT IS NULL OR user_id = $3) FOR UPDATE",
                    &[&grant_id, &workspace_id, &only_user],
                )
                .map_err(store)?;
            if found.is_none() {
                return Ok(false);
            }
            revoke_in(&mut tx, grant_id, "revoked on the settings page", by)?;
            tx.commit().map_err(store)?;
            Ok(true)
        })
    }

    /// The live grants of `workspace_id` (of `user_id` alone when given), newest first.
    pub fn grants(&self, workspace_id: i64, user_id: Option<i64>) -> Result<Vec<Grant>, ToolError> {
        self.db.with_client(|client| {
            client
                .query(
                    "SELECT g.id, cl.name, cl.client_id, cl.redirect_uris[1], g.user_id, u.email, \
                            g.scopes, g.created_at, g.last_used_at \
                     FROM oauth_grants g JOIN oauth_clients cl ON cl.id = g.client_id \
                     JOIN users u ON u.id = g.user_id \
                     WHERE g.workspace_id = $1 AND g.revoked_at IS NULL \
                       AND ($2::BIGINT IS NULL OR g.user_id = $2) \
                     ORDER BY g.id DESC LIMIT 200",
                    &[&workspace_id, &user_id],
                )
                .map_err(store)?
                .iter()
                .map(|row| {
                    let redirect: Option<String> = row.try_get(3).map_err(store)?;
                    Ok(Grant {
                        id: row.try_get(0).map_err(store)?,
                        client_name: row.try_get(1).map_err(store)?,
                        client_id: row.try_get(2).map_err(store)?,
                        redirect_host: Client::redirect_host(redirect.as_deref().unwrap_or("")),
                        user_id: row.try_get(4).map_err(store)?,
                        user_email: row.try_get(5).map_err(store)?,
                        scopes: row.try_get(6).map_err(store)?,
                        created_at: row.try_get(7).map_err(store)?,
                        last_used_at: row.try_get(8).map_err(store)?,
                    })
                })
                .collect()
        })
    }
}

/// Of `asked`, the scopes `user_id`'s role in `workspace_id` still allows; `None` when they
/// are no member (or none is left).
fn still_allowed(
    tx: &mut impl GenericClient,
    user_id: i64,
    workspace_id: i64,
    asked: &[String],
) -> Result<Option<Vec<String>>, ToolError> {
    let role = tx
        .query_opt(
            "SELECT role FROM memberships WHERE user_id = $1 AND workspace_id = $2",
            &[&user_id, &workspace_id],
        )
        .map_err(store)?;
    let Some(role) = role else {
        return Ok(None);
    };
    let role: Role = row_role(&role.try_get::<_, String>(0).map_err(store)?)?;
    let allowed = grantable(role);
    let kept: Vec<String> = asked
        .iter()
        .filter(|s| allowed.contains(s))
        .cloned()
        .collect();
    Ok((!kept.is_empty()).then_some(kept))
}

fn row_role(text: &str) -> Result<Role, ToolError> {
    text.parse()
}

/// The grant a token is issued under.
struct Family<'a> {
    grant_id: i64,
    workspace_id: i64,
    user_id: i64,
    email: &'a str,
    client_name: &'a str,
    resource: &'a str,
}

/// Mint an access token (an API token of the grant) and a refresh token, in `tx`.
fn issue(
    tx: &mut postgres::Transaction<'_>,
    family: &Family<'_>,
    scopes: &[String],
) -> Result<Issued, ToolError> {
    let at = now();
    let scope_set = ScopeSet::new(
        scopes
            .iter()
            .map(|s| s.parse::<Scope>())
            .collect::<Result<Vec<_>, _>>()?,
    )?;
    // Named after the client (never like a person: no `@`), so what it does shows as an
    // agent's.
    let name: String = format!("{} (OAuth)", family.client_name.replace('@', " at "))
        .chars()
        .take(100)
        .collect();
    let new = NewToken {
        name,
        scopes: scope_set,
        expires_at: Some(at + TimeDelta::seconds(super::access_secs())),
        created_by: family.email.to_string(),
    };
    let minted = crate::auth::insert_access_token(
        tx,
        family.workspace_id,
        &new,
        family.user_id,
        family.grant_id,
        family.resource,
    )?;
    let secret = PlainSecret::mint()?;
    let hash = secret_hash(secret.expose());
    let hash: &[u8] = hash.as_bytes();
    tx.execute(
        "INSERT INTO oauth_refresh_tokens (grant_id, token_hash, created_at, expires_at) \
         VALUES ($1, $2, $3, $4)",
        &[
            &family.grant_id,
            &hash,
            &time_text(at),
            &time_text(at + TimeDelta::days(super::REFRESH_DAYS)),
        ],
    )
    .map_err(store)?;
    tx.execute(
        "UPDATE oauth_grants SET last_used_at = $2 WHERE id = $1",
        &[&family.grant_id, &time_text(at)],
    )
    .map_err(store)?;
    Ok(Issued {
        access_token: minted.token,
        expires_in: super::access_secs(),
        refresh_token: format!("{REFRESH_PREFIX}{}", secret.expose()),
        scope: scopes.join(" "),
        grant_id: family.grant_id,
    })
}

/// End every live access token of grant `grant_id` (of `workspace_id`), in `tx`, each
/// revocation published so that every server process refuses the token at once; how many.
fn end_access_tokens(
    tx: &mut postgres::Transaction<'_>,
    grant_id: i64,
    workspace_id: i64,
) -> Result<usize, ToolError> {
    let revoked = tx
        .query(
            "UPDATE api_tokens SET revoked_at = $2 \
             WHERE oauth_grant_id = $1 AND revoked_at IS NULL RETURNING id",
            &[&grant_id, &time_text(now())],
        )
        .map_err(store)?;
    for token in &revoked {
        let token_id: i64 = token.try_get(0).map_err(store)?;
        jility_pg::events::notify_revoked(tx, workspace_id, token_id)?;
    }
    Ok(revoked.len())
}

/// Revoke grant `grant_id` and every token of it, in `tx`: audited, and each access token's
/// revocation published so that every server process refuses it at once.
fn revoke_in(
    tx: &mut postgres::Transaction<'_>,
    grant_id: i64,
    reason: &str,
    actor: &str,
) -> Result<(), ToolError> {
    let at = time_text(now());
    let row = tx
        .query_opt(
            "UPDATE oauth_grants SET revoked_at = $2, revoked_reason = $3 \
             WHERE id = $1 AND revoked_at IS NULL RETURNING workspace_id",
            &[&grant_id, &at, &reason],
        )
        .map_err(store)?;
    let Some(row) = row else {
        return Ok(());
    };
    let workspace_id: i64 = row.try_get(0).map_err(store)?;
    end_access_tokens(tx, grant_id, workspace_id)?;
    audit(tx, workspace_id, actor, "oauth.revoke", reason)?;
    tracing::info!(grant_id, workspace_id, reason, "revoked an OAuth grant");
    Ok(())
}
