//! Cloud mode's credentials at rest: workspaces' API tokens, minted, authenticated, listed
//! and revoked in PostgreSQL. Their format and scopes are the core's ([`jility_core::token`],
//! re-exported here).
//!
//! **Tokens.** A token is `jil_live_` followed by 40 characters of `[A-Za-z0-9]` drawn from
//! the operating system's CSPRNG (about 238 bits). It is shown once, when minted. At rest
//! only its BLAKE3 hash and a display prefix (`jil_live_AbCd`, enough to tell tokens apart
//! in a listing) are kept, so neither a database dump nor a read of the table yields a usable
//! token. A fast hash suffices (unlike passwords, the token is random, so there is nothing
//! to guess), and it makes authentication one indexed lookup: the hash column is uniquely
//! indexed, and the stored hash is compared again with `blake3::Hash`'s constant-time
//! equality. The plaintext travels in [`PlainToken`], whose `Debug` shows only the prefix,
//! so no log line or error message carries a token.
//!
//! **Scopes.** `tickets:read`, `tickets:write`, `tickets:delete`, `comments:write` and
//! `full_access`; `full_access` allows everything, the others only themselves
//! ([`ScopeSet::allows`]).
//!
//! **Limits.** Through the API a workspace has at most [`DEFAULT_MAX_LIVE_TOKENS`] live
//! tokens (`JILITY_MAX_LIVE_TOKENS`); past it a mint is [`TOO_MANY_TOKENS`] (409).
//!
//! **Failures.** [`Tokens::authenticate`] answers an [`AuthError`]: malformed, unknown,
//! expired (and when) or revoked (and when). As a [`ToolError`] each is
//! [`errors::UNAUTHENTICATED`] (class `Unauthenticated`, HTTP 401); a missing scope is
//! [`errors::PERMISSION_DENIED`] naming the scope ([`ScopeSet::require`]).

use std::str::FromStr;

use chrono::{DateTime, SecondsFormat, Utc};
use mcp_common_core::ToolError;
use postgres::error::SqlState;
use postgres::types::Type;
use postgres::{GenericClient, Row};

use jility_core::errors;
use jility_core::store::StoreError;
use jility_pg::store::{PgDatabase, Workspace};

pub use jility_core::token::*;

/// `last_used_at` is written at most this often per token.
const LAST_USED_GRANULARITY: chrono::TimeDelta = chrono::TimeDelta::seconds(60);

/// A mint refused because the workspace has as many live tokens as it may
/// ([`Tokens::create_limited`]). Not retryable as it is: a token must be revoked first.
pub const TOO_MANY_TOKENS: mcp_common_core::ErrorCode =
    mcp_common_core::ErrorCode::new("too_many_tokens", mcp_common_core::ErrorClass::Conflict);

/// Live (unexpired, unrevoked) tokens a workspace may have by default when minting through
/// the API: plenty for a team's people, bots and CI, too few to multiply its share of the
/// server (sessions and requests are limited per workspace as well).
pub const DEFAULT_MAX_LIVE_TOKENS: u32 = 50;
/// The environment variable of `jility serve` that sets the live tokens a workspace may have.
pub const MAX_LIVE_TOKENS_VAR: &str = "JILITY_MAX_LIVE_TOKENS";

/// [`MAX_LIVE_TOKENS_VAR`] (a positive number), else [`DEFAULT_MAX_LIVE_TOKENS`].
pub fn max_live_tokens() -> u32 {
    match std::env::var(MAX_LIVE_TOKENS_VAR) {
        Err(_) => DEFAULT_MAX_LIVE_TOKENS,
        Ok(value) => match value.trim().parse::<u32>() {
            Ok(n) if n >= 1 => n,
            _ => {
                tracing::warn!(
                    "{MAX_LIVE_TOKENS_VAR} must be a positive number; using {DEFAULT_MAX_LIVE_TOKENS}"
                );
                DEFAULT_MAX_LIVE_TOKENS
            }
        },
    }
}

/// Longest token or workspace name.
const MAX_NAME_CHARS: usize = 100;

/// The columns of a [`TokenRecord`], in [`record_row`]'s order.
const RECORD_COLUMNS: &str = "id, workspace_id, name, scopes, display_prefix, created_by, \
     created_at, expires_at, revoked_at, last_used_at";

/// Why a token was refused. No variant carries the token.
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    #[error("the API token is malformed")]
    Malformed,
    #[error("the API token is not valid")]
    Unknown,
    #[error("the API token expired at {at}")]
    Expired { at: String },
    #[error("the API token was revoked at {at}")]
    Revoked { at: String },
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<postgres::Error> for AuthError {
    fn from(err: postgres::Error) -> Self {
        AuthError::Store(jility_pg::store::db(err))
    }
}

impl From<AuthError> for ToolError {
    fn from(err: AuthError) -> Self {
        let unauthenticated = |message: String, hint: String| {
            ToolError::new(errors::UNAUTHENTICATED, message).with_hint(hint)
        };
        match err {
            AuthError::Malformed => unauthenticated(
                "The API token is malformed".into(),
                format!(
                    "A jility token is `{TOKEN_PREFIX}` followed by at least 32 letters and digits. Check JILITY_API_TOKEN (or the token given) for a typo or a cut-off copy."
                ),
            ),
            AuthError::Unknown => unauthenticated(
                "The API token is not valid".into(),
                "No such token exists on this server. Use a token created for this server (`jility admin create-workspace` or `jility auth create-token`).".into(),
            ),
            AuthError::Expired { at } => unauthenticated(
                format!("The API token expired at {at}"),
                format!(
                    "This token expired at {at} and can no longer be used; create a new token (`jility auth create-token`) and use it instead."
                ),
            ),
            AuthError::Revoked { at } => unauthenticated(
                format!("The API token was revoked at {at}"),
                format!(
                    "This token was revoked at {at} and can no longer be used; ask an admin of the workspace for a new token."
                ),
            ),
            AuthError::Store(err) => err.into(),
        }
    }
}

/// The tokens of a database's workspaces.
#[derive(Clone)]
pub struct Tokens {
    db: PgDatabase,
}

impl Tokens {
    pub fn new(db: &PgDatabase) -> Self {
        Self { db: db.clone() }
    }

    /// Create the workspace `name` and mint its first token (`full_access`, named
    /// `token_name`) in one transaction: both or neither. A name already taken is
    /// [`errors::ALREADY_EXISTS`].
    pub fn create_workspace(
        &self,
        name: &str,
        token_name: &str,
        created_by: &str,
    ) -> Result<(Workspace, MintedToken), ToolError> {
        let name = check_workspace_name(name)?;
        let new = NewToken {
            name: token_name.to_string(),
            scopes: ScopeSet::full_access(),
            expires_at: None,
            created_by: created_by.to_string(),
        };
        check_new_token(&new)?;
        let created_at = now_text();
        self.db.with_client(|client| {
            let mut tx = client.transaction().map_err(store)?;
            let row = tx
                .query_one(
                    "INSERT INTO workspaces (name, created_at) VALUES ($1, $2) RETURNING id",
                    &[&name, &created_at],
                )
                .map_err(|err| {
                    if err.code() == Some(&SqlState::UNIQUE_VIOLATION) {
                        ToolError::new(
                            errors::ALREADY_EXISTS,
                            format!("A workspace named '{name}' already exists"),
                        )
                        .with_hint("Choose another name; nothing was created.")
                    } else {
                        store(err)
                    }
                })?;
            let workspace = Workspace {
                id: row.try_get(0).map_err(store)?,
                name: name.clone(),
                created_at: created_at.clone(),
            };
            let minted = insert_token(&mut tx, workspace.id, &new, None)?;
            tx.commit().map_err(store)?;
            Ok((workspace, minted))
        })
    }

    /// Mint a token for workspace `workspace_id`. Its plaintext is in the answer and
    /// nowhere else.
    pub fn create(&self, workspace_id: i64, new: &NewToken) -> Result<MintedToken, ToolError> {
        check_new_token(new)?;
        self.db.with_client(|client| {
            let exists = client
                .query_opt("SELECT 1 FROM workspaces WHERE id = $1", &[&workspace_id])
                .map_err(store)?;
            if exists.is_none() {
                return Err(ToolError::not_found(format!(
                    "There is no workspace {workspace_id}"
                )));
            }
            insert_token(client, workspace_id, new, None)
        })
    }

    /// [`Self::create`], refused when workspace `workspace_id` has `most` live tokens
    /// (neither expired nor revoked) already: [`TOO_MANY_TOKENS`]. The workspace's row is
    /// locked while its tokens are counted, so mints sent together cannot pass the limit
    /// together.
    pub fn create_limited(
        &self,
        workspace_id: i64,
        new: &NewToken,
        most: u32,
    ) -> Result<MintedToken, ToolError> {
        self.create_limited_by(workspace_id, new, most, None)
    }

    /// [`Self::create_limited`] for a person: `user_id`, a member of the workspace whose
    /// role allows every scope asked ([`crate::accounts::Role::scopes`]). The token records
    /// who minted it: `created_by` is their email, and `created_by_user` (see
    /// [`Self::minted_by`]) their id. Anyone else is `permission_denied`.
    pub fn create_for_user(
        &self,
        workspace_id: i64,
        user_id: i64,
        new: &NewToken,
        most: u32,
    ) -> Result<MintedToken, ToolError> {
        self.create_limited_by(workspace_id, new, most, Some(user_id))
    }

    /// The person who minted token `token_id` of workspace `workspace_id`, when a person
    /// did ([`Self::create_for_user`]); `None` for tokens minted otherwise.
    pub fn minted_by(&self, workspace_id: i64, token_id: i64) -> Result<Option<i64>, ToolError> {
        self.db.with_client(|client| {
            match client
                .query_opt(
                    "SELECT created_by_user FROM api_tokens WHERE workspace_id = $1 AND id = $2",
                    &[&workspace_id, &token_id],
                )
                .map_err(store)?
            {
                Some(row) => row.try_get(0).map_err(store),
                None => Err(ToolError::not_found(format!(
                    "There is no token {token_id} in this workspace"
                ))),
            }
        })
    }

    fn create_limited_by(
        &self,
        workspace_id: i64,
        new: &NewToken,
        most: u32,
        user_id: Option<i64>,
    ) -> Result<MintedToken, ToolError> {
        check_new_token(new)?;
        self.db.with_client(|client| {
            let mut tx = client.transaction().map_err(store)?;
            let exists = tx
                .query_opt(
                    "SELECT 1 FROM workspaces WHERE id = $1 FOR UPDATE",
                    &[&workspace_id],
                )
                .map_err(store)?;
            if exists.is_none() {
                return Err(ToolError::not_found(format!(
                    "There is no workspace {workspace_id}"
                )));
            }
            let live: i64 = tx
                .query_one(
                    "SELECT count(*) FROM api_tokens WHERE workspace_id = $1 \
                     AND oauth_grant_id IS NULL \
                     AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $2)",
                    &[&workspace_id, &now_text()],
                )
                .map_err(store)?
                .try_get(0)
                .map_err(store)?;
            if live >= i64::from(most) {
                return Err(ToolError::new(
                    TOO_MANY_TOKENS,
                    format!("This workspace has {live} live tokens; at most {most} are allowed"),
                )
                .with_hint(
                    "Revoke tokens that are no longer used (DELETE /api/v1/tokens/{id}; GET /api/v1/tokens lists them), then mint again.",
                ));
            }
            let person = match user_id {
                Some(user_id) => Some(person_minting(&mut tx, workspace_id, user_id, new)?),
                None => None,
            };
            let minted = match &person {
                Some((user_id, email)) => {
                    let new = NewToken {
                        created_by: email.clone(),
                        ..new.clone()
                    };
                    insert_token(&mut tx, workspace_id, &new, Some(*user_id))?
                }
                None => insert_token(&mut tx, workspace_id, new, None)?,
            };
            tx.commit().map_err(store)?;
            Ok(minted)
        })
    }

    /// The tokens of workspace `workspace_id`, oldest first (revoked and expired ones
    /// included, marked so).
    pub fn list(&self, workspace_id: i64) -> Result<Vec<TokenRecord>, ToolError> {
        self.db.with_client(|client| {
            client
                .query(
                    &format!(
                        "SELECT {RECORD_COLUMNS} FROM api_tokens WHERE workspace_id = $1 \
                         AND oauth_grant_id IS NULL ORDER BY id"
                    ),
                    &[&workspace_id],
                )
                .map_err(store)?
                .iter()
                .map(record_row)
                .collect()
        })
    }

    /// Revoke a token of workspace `workspace_id`, by id or by the token itself. A token of
    /// another workspace is not found (and left alone). Revoking a revoked token keeps its
    /// first revocation time.
    ///
    /// The revocation is published as an event in the same transaction (delivered when it
    /// commits), so that every server process stops accepting the token at once, whoever
    /// revoked it.
    pub fn revoke(&self, workspace_id: i64, which: &TokenRef) -> Result<TokenRecord, ToolError> {
        let at = now_text();
        self.db.with_client(|client| {
            let mut client = client.transaction().map_err(store)?;
            let row = match which {
                TokenRef::Id(id) => client.query_opt(
                    &format!(
                        "UPDATE api_tokens SET revoked_at = coalesce(revoked_at, $3) \
                         WHERE workspace_id = $1 AND id = $2 RETURNING {RECORD_COLUMNS}"
                    ),
                    &[&workspace_id, id, &at],
                ),
                TokenRef::Token(token) => {
                    let hash = token.hash();
                    let hash: &[u8] = hash.as_bytes();
                    client.query_opt(
                        &format!(
                            "UPDATE api_tokens SET revoked_at = coalesce(revoked_at, $3) \
                             WHERE workspace_id = $1 AND token_hash = $2 RETURNING {RECORD_COLUMNS}"
                        ),
                        &[&workspace_id, &hash, &at],
                    )
                }
            }
            .map_err(store)?;
            match row {
                Some(row) => {
                    let record = record_row(&row)?;
                    jility_pg::events::notify_revoked(&mut client, workspace_id, record.id)?;
                    client.commit().map_err(store)?;
                    Ok(record)
                }
                None => Err(match which {
                    TokenRef::Id(id) => {
                        ToolError::not_found(format!("There is no token {id} in this workspace"))
                    }
                    TokenRef::Token(_) => {
                        ToolError::not_found("That token is not a token of this workspace")
                    }
                }
                .with_hint(
                    "List the workspace's tokens and their ids with `jility auth list-tokens`.",
                )),
            }
        })
    }

    /// Who `token` is: its workspace and scopes, or why it is refused. Records the use
    /// (`last_used_at`, at most once a minute per token).
    pub fn authenticate(&self, token: &str) -> Result<Principal, AuthError> {
        let token = token.trim();
        if !is_well_formed(token) {
            return Err(AuthError::Malformed);
        }
        let hash = blake3::hash(token.as_bytes());
        let now = Utc::now();
        self.db.with_client(|client| {
            // One round trip: an unnamed statement with its parameter types given.
            let bytes: &[u8] = hash.as_bytes();
            let rows = client.query_typed(
                "SELECT t.id, t.workspace_id, w.name, t.name, t.token_hash, t.scopes, \
                        t.expires_at, t.revoked_at, t.last_used_at, t.resource, t.oauth_grant_id \
                 FROM api_tokens t JOIN workspaces w ON w.id = t.workspace_id \
                 WHERE t.token_hash = $1",
                &[(&bytes, Type::BYTEA)],
            )?;
            let Some(row) = rows.first() else {
                return Err(AuthError::Unknown);
            };
            let stored: Vec<u8> = row.try_get(4)?;
            let stored = <[u8; 32]>::try_from(stored.as_slice())
                .map(blake3::Hash::from_bytes)
                .map_err(|_| AuthError::Unknown)?;
            // blake3::Hash's equality is constant-time.
            if stored != hash {
                return Err(AuthError::Unknown);
            }
            let token_id: i64 = row.try_get(0)?;
            if let Some(at) = row.try_get::<_, Option<String>>(7)? {
                return Err(AuthError::Revoked { at });
            }
            let expires_at = match row.try_get::<_, Option<String>>(6)? {
                Some(at) => match parse_time(&at).filter(|expires| *expires > now) {
                    Some(expires) => Some(expires),
                    None => return Err(AuthError::Expired { at }),
                },
                None => None,
            };
            let scopes = scopes_from(row.try_get(5)?)?;
            let last_used = row.try_get::<_, Option<String>>(8)?;
            if last_used
                .as_deref()
                .and_then(parse_time)
                .is_none_or(|used| now - used >= LAST_USED_GRANULARITY)
            {
                let cutoff = time_text(now - LAST_USED_GRANULARITY);
                // Guarded, so tokens used at once by many requests write it once.
                if let Err(err) = client.execute(
                    "UPDATE api_tokens SET last_used_at = $2 \
                     WHERE id = $1 AND (last_used_at IS NULL OR last_used_at <= $3)",
                    &[&token_id, &time_text(now), &cutoff],
                ) {
                    tracing::warn!(token_id, error = %jility_pg::store::db(err), "could not record a token's use");
                }
            }
            Ok(Principal {
                workspace_id: row.try_get(1)?,
                workspace: row.try_get(2)?,
                token_id,
                token_name: row.try_get(3)?,
                scopes,
                expires_at,
                resource: row.try_get(9)?,
                grant_id: row.try_get(10)?,
            })
        })
    }
}

fn store(err: postgres::Error) -> ToolError {
    jility_pg::store::db(err).into()
}

fn now_text() -> String {
    time_text(Utc::now())
}

/// The stored form of a time: RFC 3339, UTC, milliseconds (sorts as text).
fn time_text(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Millis, true)
}

fn check_name(what: &str, name: &str) -> Result<String, ToolError> {
    let name = name.trim();
    if name.is_empty()
        || name.chars().count() > MAX_NAME_CHARS
        || name.chars().any(char::is_control)
    {
        return Err(ToolError::new(
            errors::INVALID_INPUT,
            format!("A {what} needs a name of 1 to {MAX_NAME_CHARS} characters, without control characters"),
        )
        .with_hint(format!("Give the {what} a short name, e.g. `acme`.")));
    }
    Ok(name.to_string())
}

/// A workspace's name is in its pages' URLs (`/w/NAME/…`) and on people's screens: 1 to 64
/// of `a-z 0-9 . _ -`, starting with a letter or digit, without `..` — no look-alikes
/// (`Acme` beside `acme`, full-width letters, invisible characters), nothing a browser or
/// proxy rewrites in a path.
fn check_workspace_name(name: &str) -> Result<String, ToolError> {
    let name = name.trim();
    let valid = (1..=64).contains(&name.len())
        && name.bytes().all(|b| {
            b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'.' | b'_' | b'-')
        })
        && name
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphanumeric())
        && !name.contains("..");
    if valid {
        return Ok(name.to_string());
    }
    Err(ToolError::new(
        errors::INVALID_INPUT,
        format!(
            "'{}' is not a workspace name: 1 to 64 lower-case letters, digits, `.`, `_` or `-`, starting with a letter or digit",
            mcp_common_core::text::clip(name, 70)
        ),
    )
    .with_hint("Choose a short lower-case name such as `acme` or `team-2`; it appears in the board's URLs."))
}

fn check_new_token(new: &NewToken) -> Result<(), ToolError> {
    check_name("token", &new.name)?;
    // A change is recorded under its token's name, and a person's under their email: a
    // token named like an email would pass for that person.
    if new.name.contains('@') {
        return Err(ToolError::new(
            errors::INVALID_INPUT,
            "A token's name may not contain `@`: what it does would pass for a person's",
        )
        .with_hint("Name the token after the agent or machine that uses it, e.g. `ci-bot`."));
    }
    if new.created_by.trim().is_empty() {
        return Err(ToolError::new(
            errors::INVALID_INPUT,
            "A token needs its creator's name",
        ));
    }
    if let Some(at) = new.expires_at
        && at <= Utc::now()
    {
        return Err(ToolError::new(
            errors::INVALID_INPUT,
            format!("The expiry {} is not in the future", time_text(at)),
        )
        .with_hint("Give an expiry in the future, or none for a token that does not expire."));
    }
    Ok(())
}

/// Mint a token and store its hash, on `client` (a transaction or not).
fn insert_token(
    client: &mut impl GenericClient,
    workspace_id: i64,
    new: &NewToken,
    created_by_user: Option<i64>,
) -> Result<MintedToken, ToolError> {
    insert_any_token(client, workspace_id, new, created_by_user, None)
}

/// Mint an OAuth access token of grant `grant_id`, bound to `resource`, for `user_id`, on
/// `client` (the grant's transaction). It is listed with the grant, not with the tokens.
pub(crate) fn insert_access_token(
    client: &mut impl GenericClient,
    workspace_id: i64,
    new: &NewToken,
    user_id: i64,
    grant_id: i64,
    resource: &str,
) -> Result<MintedToken, ToolError> {
    check_new_token(new)?;
    insert_any_token(
        client,
        workspace_id,
        new,
        Some(user_id),
        Some((grant_id, resource)),
    )
}

fn insert_any_token(
    client: &mut impl GenericClient,
    workspace_id: i64,
    new: &NewToken,
    created_by_user: Option<i64>,
    oauth: Option<(i64, &str)>,
) -> Result<MintedToken, ToolError> {
    let (grant_id, resource) = oauth.unzip();
    let token = PlainToken::mint()?;
    let hash = token.hash();
    let hash: &[u8] = hash.as_bytes();
    let prefix = token.display_prefix();
    let name = new.name.trim().to_string();
    let created_by = new.created_by.trim().to_string();
    let expires_at = new.expires_at.map(time_text);
    let row = client
        .query_one(
            &format!(
                "INSERT INTO api_tokens (workspace_id, name, token_hash, display_prefix, scopes, \
                                         created_by, created_at, expires_at, created_by_user, \
                                         oauth_grant_id, resource) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING {RECORD_COLUMNS}"
            ),
            &[
                &workspace_id,
                &name,
                &hash,
                &prefix,
                &new.scopes.names(),
                &created_by,
                &now_text(),
                &expires_at,
                &created_by_user,
                &grant_id,
                &resource,
            ],
        )
        .map_err(store)?;
    let record = record_row(&row)?;
    tracing::info!(
        workspace_id,
        token_id = record.id,
        prefix = %record.display_prefix,
        "minted an API token"
    );
    Ok(MintedToken { token, record })
}

/// The id and email of `user_id`, who mints `new` in `workspace_id`: a member whose role
/// allows each of its scopes, else `permission_denied`.
fn person_minting(
    tx: &mut impl GenericClient,
    workspace_id: i64,
    user_id: i64,
    new: &NewToken,
) -> Result<(i64, String), ToolError> {
    let row = tx
        .query_opt(
            "SELECT u.email, m.role FROM memberships m JOIN users u ON u.id = m.user_id \
             WHERE m.workspace_id = $1 AND m.user_id = $2",
            &[&workspace_id, &user_id],
        )
        .map_err(store)?
        .ok_or_else(|| {
            ToolError::new(
                errors::PERMISSION_DENIED,
                "Only a member of the workspace mints its tokens",
            )
            .with_hint("Ask an owner or an admin of the workspace to add you.")
        })?;
    let email: String = row.try_get(0).map_err(store)?;
    let role: crate::accounts::Role = row
        .try_get::<_, String>(1)
        .map_err(store)?
        .parse()
        .map_err(|_| ToolError::internal("damaged role in the database"))?;
    let held = role.scopes();
    if let Some(scope) = new.scopes.iter().find(|scope| !held.allows(*scope)) {
        return Err(ToolError::new(
            errors::PERMISSION_DENIED,
            format!("A {role} cannot mint a token with the scope {scope}"),
        )
        .with_hint(format!("Ask for at most the scopes of your role: {held}.")));
    }
    Ok((user_id, email))
}

fn scopes_from(names: Vec<String>) -> Result<ScopeSet, StoreError> {
    names
        .iter()
        .map(|name| Scope::from_str(name))
        .collect::<Result<Vec<_>, _>>()
        .ok()
        .and_then(|scopes| ScopeSet::new(scopes).ok())
        .ok_or_else(|| StoreError::Database(format!("damaged token scopes: {names:?}")))
}

fn record_row(row: &Row) -> Result<TokenRecord, ToolError> {
    let get = |e: postgres::Error| store(e);
    Ok(TokenRecord {
        id: row.try_get(0).map_err(get)?,
        workspace_id: row.try_get(1).map_err(get)?,
        name: row.try_get(2).map_err(get)?,
        scopes: scopes_from(row.try_get(3).map_err(get)?)?,
        display_prefix: row.try_get(4).map_err(get)?,
        created_by: row.try_get(5).map_err(get)?,
        created_at: row.try_get(6).map_err(get)?,
        expires_at: row.try_get(7).map_err(get)?,
        revoked_at: row.try_get(8).map_err(get)?,
        last_used_at: row.try_get(9).map_err(get)?,
    })
}
