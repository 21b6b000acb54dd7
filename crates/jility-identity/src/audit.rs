//! The cloud server's audit log (`audit_log`, migration 0005): every write through the API —
//! successful or refused after authentication — and every authentication failure, with the
//! time, the token's id and name, the operation, the ticket and the HTTP status answered.
//!
//! - [`Audit::record`] never fails its caller: a failed insert is logged as a warning and
//!   the request goes on. It is blocking; call it on a blocking thread.
//! - No entry holds a token: an authentication failure records its reason only
//!   (`missing`, `malformed`, `unknown`, `expired`, `revoked`). An expired or revoked token
//!   is found by its hash ([`Audit::token_owner`]) and recorded under its workspace; the
//!   others have no workspace and appear in no workspace's log.
//! - Authentication failures are bounded before they get here (`jility-api`'s
//!   `refusals`): per client address, or per expired or revoked token, a few a minute get
//!   an entry of their own and the rest one summary entry (`N more refusals suppressed
//!   (unknown N, …) from … in the minute from …`), so that requests without a valid token
//!   cannot fill the database. Writes of authenticated tokens are each one request under
//!   the token's rate limit, and all recorded.
//! - [`Audit::list`] reads one workspace's entries, newest first, by id.

use chrono::{SecondsFormat, Utc};
use mcp_common_core::ToolError;
use postgres::types::Type;
use serde::Serialize;

use crate::auth::is_well_formed;
use jility_core::store::StoreError;
use jility_pg::store::PgDatabase;

/// The operation of an authentication failure.
pub const AUTH_FAILED: &str = "auth.failed";

/// Counting a workspace's entries stops at the listings' cap ("at least").
const COUNT_CAP: i64 = jility_core::store::COUNT_CAP as i64;

/// Longest `detail` kept, in characters.
const MAX_DETAIL_CHARS: usize = 200;

/// One entry to record.
#[derive(Debug, Clone, Default)]
pub struct NewEntry<'a> {
    /// `None` for an authentication failure whose token belongs to no workspace.
    pub workspace_id: Option<i64>,
    pub token_id: Option<i64>,
    /// The token's name.
    pub actor: Option<&'a str>,
    /// e.g. `tickets.create`, `tokens.revoke`, [`AUTH_FAILED`].
    pub operation: &'a str,
    /// e.g. `TASK-3`.
    pub ticket: Option<&'a str>,
    /// The HTTP status answered.
    pub status: u16,
    /// A short note; for an authentication failure, its reason. Never a token.
    pub detail: Option<&'a str>,
}

/// One entry as `GET /api/v1/audit` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AuditEntry {
    pub id: i64,
    pub at: String,
    pub token_id: Option<i64>,
    pub actor: Option<String>,
    pub operation: String,
    pub ticket: Option<String>,
    pub status: u16,
    pub detail: Option<String>,
}

/// One page of a workspace's entries, newest first.
#[derive(Debug, Clone)]
pub struct AuditPage {
    pub entries: Vec<AuditEntry>,
    /// How many entries the workspace has (at least, when `total_exact` is false).
    pub total: u64,
    pub total_exact: bool,
    /// Whether older entries follow the last one.
    pub more: bool,
}

/// The audit log of a database.
#[derive(Clone)]
pub struct Audit {
    db: PgDatabase,
}

impl Audit {
    pub fn new(db: &PgDatabase) -> Self {
        Self { db: db.clone() }
    }

    /// Record `entry`; a failure is logged, never returned (blocking).
    pub fn record(&self, entry: &NewEntry<'_>) {
        let written = self
            .db
            .with_client(|client| record_in(client, entry).map_err(jility_pg::store::db));
        if let Err(err) = written {
            tracing::warn!(
                operation = entry.operation,
                workspace_id = entry.workspace_id,
                error = %err,
                "could not write an audit entry"
            );
        }
    }

    /// The workspace, id and name of the (refused) token `token`, found by its hash; `None`
    /// when it is malformed or unknown, or the lookup fails (blocking).
    pub fn token_owner(&self, token: &str) -> Option<(i64, i64, String)> {
        let token = token.trim();
        if !is_well_formed(token) {
            return None;
        }
        self.owner_of_hash(blake3::hash(token.as_bytes()).as_bytes())
    }

    /// [`Self::token_owner`] by the token's BLAKE3 hash (blocking).
    pub fn owner_of_hash(&self, hash: &[u8; 32]) -> Option<(i64, i64, String)> {
        let found = self.db.with_client(|client| -> Result<_, StoreError> {
            let bytes: &[u8] = hash;
            let rows = client
                .query_typed(
                    "SELECT workspace_id, id, name FROM api_tokens WHERE token_hash = $1",
                    &[(&bytes, Type::BYTEA)],
                )
                .map_err(jility_pg::store::db)?;
            rows.first()
                .map(|row| -> Result<_, StoreError> {
                    Ok((
                        row.try_get(0).map_err(jility_pg::store::db)?,
                        row.try_get(1).map_err(jility_pg::store::db)?,
                        row.try_get(2).map_err(jility_pg::store::db)?,
                    ))
                })
                .transpose()
        });
        match found {
            Ok(owner) => owner,
            Err(err) => {
                tracing::warn!(error = %err, "could not look up a refused token for the audit log");
                None
            }
        }
    }

    /// Up to `limit` entries of `workspace_id` older than the entry `before` (all when
    /// `None`), newest first (blocking).
    pub fn list(
        &self,
        workspace_id: i64,
        limit: usize,
        before: Option<i64>,
    ) -> Result<AuditPage, ToolError> {
        let fetch = i64::try_from(limit).unwrap_or(i64::MAX).saturating_add(1);
        self.db.with_client(|client| -> Result<_, ToolError> {
            let mut tx = client
                .build_transaction()
                .isolation_level(postgres::IsolationLevel::RepeatableRead)
                .read_only(true)
                .start()
                .map_err(store)?;
            let rows = tx
                .query(
                    "SELECT id, at, token_id, actor, operation, ticket, status, detail \
                     FROM audit_log \
                     WHERE workspace_id = $1 AND ($2::BIGINT IS NULL OR id < $2) \
                     ORDER BY id DESC LIMIT $3",
                    &[&workspace_id, &before, &fetch],
                )
                .map_err(store)?;
            let counted: i64 = tx
                .query_one(
                    "SELECT count(*) FROM (SELECT 1 FROM audit_log WHERE workspace_id = $1 \
                     LIMIT $2) AS capped",
                    &[&workspace_id, &(COUNT_CAP + 1)],
                )
                .map_err(store)?
                .try_get(0)
                .map_err(store)?;
            tx.commit().map_err(store)?;
            let more = rows.len() > limit;
            let entries = rows
                .iter()
                .take(limit)
                .map(|row| -> Result<AuditEntry, postgres::Error> {
                    let status: i32 = row.try_get(6)?;
                    Ok(AuditEntry {
                        id: row.try_get(0)?,
                        at: row.try_get(1)?,
                        token_id: row.try_get(2)?,
                        actor: row.try_get(3)?,
                        operation: row.try_get(4)?,
                        ticket: row.try_get(5)?,
                        status: u16::try_from(status).unwrap_or_default(),
                        detail: row.try_get(7)?,
                    })
                })
                .collect::<Result<Vec<_>, _>>()
                .map_err(store)?;
            Ok(AuditPage {
                entries,
                total: u64::try_from(counted.min(COUNT_CAP)).unwrap_or_default(),
                total_exact: counted <= COUNT_CAP,
                more,
            })
        })
    }
}

fn store(err: postgres::Error) -> ToolError {
    jility_pg::store::db(err).into()
}

fn clip(text: &str) -> String {
    mcp_common_core::clip(text, MAX_DETAIL_CHARS)
}

/// Record `entry` on `client` (a transaction: the entry commits with what it records).
pub(crate) fn record_in(
    client: &mut impl postgres::GenericClient,
    entry: &NewEntry<'_>,
) -> Result<(), postgres::Error> {
    let at = Utc::now().to_rfc3339_opts(SecondsFormat::Millis, true);
    let detail = entry.detail.map(clip);
    let status = i32::from(entry.status);
    client
        .execute(
            "INSERT INTO audit_log \
             (workspace_id, at, token_id, actor, operation, ticket, status, detail) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
            &[
                &entry.workspace_id,
                &at,
                &entry.token_id,
                &entry.actor,
                &entry.operation,
                &entry.ticket,
                &status,
                &detail,
            ],
        )
        .map(|_| ())
}
