//! Request rate limits for the cloud server: so many requests per minute per API token,
//! counted in PostgreSQL so that every `jility serve` process on one database shares them.
//!
//! A fixed window of one minute, aligned on the database's clock: the first request of a
//! window inserts its counter row and later ones increment it in the same statement, so two
//! processes never both see a free slot that only one may take. What a caller learns
//! ([`Decision`]) is what the `X-RateLimit-*` headers and a 429's `Retry-After` carry.

use mcp_common::ToolError;

use jility_core::errors;

use crate::store::PgDatabase;
use jility_core::store::StoreError;

/// Requests per minute per token unless `jility serve --rate-limit N` says otherwise.
pub const DEFAULT_PER_MINUTE: u32 = 100;

const WINDOW_SECS: i64 = 60;

/// The verdict on one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    pub allowed: bool,
    /// Requests allowed per window (`X-RateLimit-Limit`).
    pub limit: u32,
    /// Requests left in this window after this one (`X-RateLimit-Remaining`).
    pub remaining: u32,
    /// When the window ends, in Unix seconds (`X-RateLimit-Reset`).
    pub reset_at: i64,
    /// Seconds until the window ends, at least 1 (`Retry-After` when refused).
    pub retry_after_secs: u64,
}

impl Decision {
    /// The `rate_limit` error of a refused request: retryable, with the wait.
    pub fn error(&self) -> ToolError {
        ToolError::new(
            errors::RATE_LIMIT,
            format!(
                "rate limit reached: {} requests per minute for this token",
                self.limit
            ),
        )
        .with_hint(format!(
            "Wait {} s before the next request; the limit is per token and shared by every server process.",
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
}

impl RateLimiter {
    pub fn new(db: PgDatabase, per_minute: u32) -> Self {
        Self {
            db,
            per_minute: per_minute.max(1),
        }
    }

    pub fn per_minute(&self) -> u32 {
        self.per_minute
    }

    /// Count one request of `key` (an API token's id) and say whether it may proceed.
    /// Blocks on the database: async callers run it on a blocking thread.
    pub fn check(&self, key: &str) -> Result<Decision, StoreError> {
        self.count(key, None).map(|(decision, _)| decision)
    }

    /// [`Self::check`] for API token `token_id`, and, in the same round trip, when the
    /// token was revoked (`None`: it is not).
    pub fn check_token(&self, token_id: i64) -> Result<(Decision, Option<String>), StoreError> {
        self.count(&token_id.to_string(), Some(token_id))
    }

    fn count(
        &self,
        key: &str,
        token: Option<i64>,
    ) -> Result<(Decision, Option<String>), StoreError> {
        self.db.with_client(|client| {
            let row = client
                .query_one(
                    "WITH now AS (SELECT extract(epoch FROM clock_timestamp())::float8 AS at) \
                     INSERT INTO rate_limit_windows AS w (key, window_start, count) \
                     SELECT $1, (floor(at / $2) * $2)::bigint, 1 FROM now \
                     ON CONFLICT (key, window_start) DO UPDATE SET count = w.count + 1 \
                     RETURNING w.count, w.window_start, (SELECT at FROM now), \
                        (SELECT t.revoked_at FROM api_tokens t WHERE t.id = $3)",
                    &[&key, &(WINDOW_SECS as f64), &token],
                )
                .map_err(crate::store::db)?;
            let revoked_at: Option<String> = row.try_get(3).map_err(crate::store::db)?;
            let count: i32 = row.try_get(0).map_err(crate::store::db)?;
            let window_start: i64 = row.try_get(1).map_err(crate::store::db)?;
            let now: f64 = row.try_get(2).map_err(crate::store::db)?;
            if count == 1 {
                // The key's first request of a window: forget its older windows.
                client
                    .execute(
                        "DELETE FROM rate_limit_windows WHERE key = $1 AND window_start < $2",
                        &[&key, &window_start],
                    )
                    .map_err(crate::store::db)?;
            }
            Ok((self.decide(count, window_start, now), revoked_at))
        })
    }

    fn decide(&self, count: i32, window_start: i64, now: f64) -> Decision {
        let used = u32::try_from(count).unwrap_or(u32::MAX);
        let reset_at = window_start + WINDOW_SECS;
        let wait = (reset_at as f64 - now).ceil();
        Decision {
            allowed: used <= self.per_minute,
            limit: self.per_minute,
            remaining: self.per_minute.saturating_sub(used),
            reset_at,
            retry_after_secs: if wait >= 1.0 { wait as u64 } else { 1 },
        }
    }
}
