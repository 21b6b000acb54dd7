//! Request rate limits for the cloud server: so many requests in any 60 s per API token, and
//! a ceiling per workspace, counted in PostgreSQL so that every `jility serve` process on one
//! database shares them.
//!
//! A sliding window: each key (a token, a workspace) keeps how many requests it was allowed
//! in each second of the last 61 on the database's clock (table `rate_limit_counts`; at most
//! 61 buckets whatever the limit), and a request passes only when its token and its
//! workspace both allowed fewer than their limits in its second and the 60 before it; then
//! it counts for both, else for neither. That span covers at least the 60 s before the
//! request, so no 60 s span holds more than a token's limit of its requests, across a minute
//! boundary or not (a refused caller may wait up to a second longer than an exact count
//! would make it), and minting more tokens does not raise a workspace past its ceiling. One
//! statement (the function `jility_rate_take`, migration 0010) counts both under row locks,
//! so two processes never both take the last slot, and the token's revocation is read in the
//! same round trip; what a caller learns ([`Decision`]) is what the `X-RateLimit-*` headers
//! and a 429's `Retry-After` carry.
//!
//! The workspace ceiling is [`DEFAULT_WORKSPACE_FACTOR`] times a token's limit unless
//! `JILITY_WORKSPACE_RATE_LIMIT` sets it (requests per minute).

use mcp_common::ToolError;

use jility_core::errors;

use crate::store::PgDatabase;
use jility_core::store::StoreError;

/// Requests per minute per token unless `jility serve --rate-limit N` says otherwise.
pub const DEFAULT_PER_MINUTE: u32 = 100;
/// A workspace's ceiling is this many times a token's limit by default: enough for a few
/// busy clients at once, not for a token minted per request.
pub const DEFAULT_WORKSPACE_FACTOR: u32 = 5;
/// The environment variable that sets a workspace's ceiling (requests per minute).
pub const WORKSPACE_LIMIT_VAR: &str = "JILITY_WORKSPACE_RATE_LIMIT";

/// The window, in one-second buckets before the current one.
const WINDOW_SECS: i32 = 60;

/// Which limit a decision is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    Token,
    Workspace,
}

/// The verdict on one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    pub allowed: bool,
    /// Which limit the numbers below are about: the token's, or its workspace's when that
    /// is the one closer to its end (or the one that refused).
    pub scope: Scope,
    /// Requests allowed in any 60 s (`X-RateLimit-Limit`).
    pub limit: u32,
    /// Requests left in the last 60 s after this one (`X-RateLimit-Remaining`).
    pub remaining: u32,
    /// When the oldest second counted leaves the window (a slot frees), in Unix seconds
    /// (`X-RateLimit-Reset`).
    pub reset_at: i64,
    /// Seconds until a slot frees, at least 1 (`Retry-After` when refused).
    pub retry_after_secs: u64,
}

impl Decision {
    /// The `rate_limit` error of a refused request: retryable, with the wait.
    pub fn error(&self) -> ToolError {
        let whose = match self.scope {
            Scope::Token => "this token",
            Scope::Workspace => "this workspace (all its tokens together)",
        };
        ToolError::new(
            errors::RATE_LIMIT,
            format!(
                "rate limit reached: {} requests per minute for {whose}",
                self.limit
            ),
        )
        .with_hint(format!(
            "Wait {} s before the next request; the limit counts the last 60 s and is shared by every server process.",
            self.retry_after_secs
        ))
        .with_retry_after(self.retry_after_secs)
    }
}

/// Counts requests per key in the database.
#[derive(Clone)]
pub struct RateLimiter {
    db: PgDatabase,
    per_minute: u32,
    per_workspace: u32,
}

impl RateLimiter {
    /// `per_minute` per token; the workspace ceiling from the environment
    /// ([`WORKSPACE_LIMIT_VAR`]) or [`DEFAULT_WORKSPACE_FACTOR`] times it.
    pub fn new(db: PgDatabase, per_minute: u32) -> Self {
        let per_minute = per_minute.max(1);
        let default = per_minute.saturating_mul(DEFAULT_WORKSPACE_FACTOR);
        let per_workspace = match std::env::var(WORKSPACE_LIMIT_VAR) {
            Err(_) => default,
            Ok(value) => match value.trim().parse::<u32>() {
                Ok(n) if n >= 1 => n,
                _ => {
                    tracing::warn!(
                        "{WORKSPACE_LIMIT_VAR} must be a positive number; using {default}"
                    );
                    default
                }
            },
        };
        Self::with_workspace_limit(db, per_minute, per_workspace)
    }

    pub fn with_workspace_limit(db: PgDatabase, per_minute: u32, per_workspace: u32) -> Self {
        Self {
            db,
            per_minute: per_minute.max(1),
            per_workspace: per_workspace.max(1),
        }
    }

    pub fn per_minute(&self) -> u32 {
        self.per_minute
    }

    pub fn per_workspace(&self) -> u32 {
        self.per_workspace
    }

    /// Count one request of `key` alone (no workspace) and say whether it may proceed.
    /// Blocks on the database: async callers run it on a blocking thread.
    pub fn check(&self, key: &str) -> Result<Decision, StoreError> {
        self.count(key, None, None).map(|(decision, _)| decision)
    }

    /// [`Self::check`] for `key` (a person on the web: `person:EMAIL`) in workspace
    /// `workspace_id`: the same limit as a token's, and the workspace's ceiling.
    pub fn check_in_workspace(&self, key: &str, workspace_id: i64) -> Result<Decision, StoreError> {
        self.count(key, Some(&format!("workspace:{workspace_id}")), None)
            .map(|(decision, _)| decision)
    }

    /// [`Self::check`] for API token `token_id` of workspace `workspace_id` (both limits),
    /// and, in the same round trip, when the token was revoked (`None`: it is not).
    pub fn check_token(
        &self,
        token_id: i64,
        workspace_id: i64,
    ) -> Result<(Decision, Option<String>), StoreError> {
        self.count(
            &format!("token:{token_id}"),
            Some(&format!("workspace:{workspace_id}")),
            Some(token_id),
        )
    }

    fn count(
        &self,
        key: &str,
        workspace: Option<&str>,
        token: Option<i64>,
    ) -> Result<(Decision, Option<String>), StoreError> {
        let token_limit = i32::try_from(self.per_minute).unwrap_or(i32::MAX);
        let workspace_limit = i32::try_from(self.per_workspace).unwrap_or(i32::MAX);
        self.db.with_prepared(TAKE_SQL, |client, take| {
            let row = client
                .query_one(
                    take,
                    &[
                        &key,
                        &token_limit,
                        &workspace,
                        &workspace_limit,
                        &WINDOW_SECS,
                        &token,
                    ],
                )
                .map_err(crate::store::db)?;
            let allowed: bool = row.try_get(0).map_err(crate::store::db)?;
            let token_used: i32 = row.try_get(1).map_err(crate::store::db)?;
            let token_frees: f64 = row.try_get(2).map_err(crate::store::db)?;
            let workspace_used: i32 = row.try_get(3).map_err(crate::store::db)?;
            let workspace_frees: f64 = row.try_get(4).map_err(crate::store::db)?;
            let now: f64 = row.try_get(5).map_err(crate::store::db)?;
            let revoked_at: Option<String> = row.try_get(6).map_err(crate::store::db)?;
            let token = Side {
                limit: self.per_minute,
                used: token_used,
                frees_at: token_frees,
            };
            let decision = match workspace {
                None => token.decide(Scope::Token, allowed, now),
                Some(_) => {
                    let workspace = Side {
                        limit: self.per_workspace,
                        used: workspace_used,
                        frees_at: workspace_frees,
                    };
                    // The one that refused, or the one with fewer requests left.
                    let binding = if !allowed {
                        if workspace.full() && !token.full() {
                            Scope::Workspace
                        } else {
                            Scope::Token
                        }
                    } else if workspace.left() < token.left() {
                        Scope::Workspace
                    } else {
                        Scope::Token
                    };
                    match binding {
                        Scope::Token => token.decide(Scope::Token, allowed, now),
                        Scope::Workspace => workspace.decide(Scope::Workspace, allowed, now),
                    }
                }
            };
            Ok((decision, revoked_at))
        })
    }
}

/// One key's count in the window.
struct Side {
    limit: u32,
    used: i32,
    frees_at: f64,
}

impl Side {
    fn left(&self) -> u32 {
        self.limit
            .saturating_sub(u32::try_from(self.used).unwrap_or(u32::MAX))
    }

    fn full(&self) -> bool {
        self.left() == 0
    }

    fn decide(&self, scope: Scope, allowed: bool, now: f64) -> Decision {
        let wait = (self.frees_at - now).ceil();
        Decision {
            allowed,
            scope,
            limit: self.limit,
            remaining: self.left(),
            reset_at: self.frees_at.ceil() as i64,
            retry_after_secs: if wait >= 1.0 { wait as u64 } else { 1 },
        }
    }
}

/// The rate limit's one statement per request: both windows counted under row locks, and
/// whether the token was revoked, in one round trip (prepared once per connection).
const TAKE_SQL: &str = "SELECT r.allowed, r.token_used, r.token_frees_at, r.workspace_used, \
        r.workspace_frees_at, r.now_at, \
        (SELECT t.revoked_at FROM api_tokens t WHERE t.id = $6) \
     FROM jility_rate_take($1, $2, $3, $4, $5) r";
