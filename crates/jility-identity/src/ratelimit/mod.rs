//! Request rate limits for the cloud server: so many requests in any 60 s per API token, and
//! a ceiling per workspace, counted in PostgreSQL so that every `jility serve` process on one
//! database shares them.
//!
//! A sliding window: each key (a token, a workspace) keeps how many requests it was allowed
//! in each second of the last 65 on the database's clock (table `rate_limit_counts`; at most
//! 65 buckets whatever the limit). A process does not ask the database for every request:
//! it leases a block of requests ([`lease`]; one statement, `jility_rate_lease`, migration
//! 0013, counts the block against the token and its workspace together, under row locks, so
//! two processes never both take the last slot), spends it for at most [`LEASE_TTL`] (1 s),
//! or [`QUIET_LEASE_TTL`] (4 s) while the key is quiet (below), and gives back what it did
//! not spend. A block is granted only when the token's and the workspace's counts in the
//! block's second and the [`QUIET_LEASE_SECS`] + 60 before it leave room for all of it;
//! since every request is spent within [`QUIET_LEASE_SECS`] seconds of the second it is
//! counted in, **no 60 s span holds more than a token's limit of its requests**, across
//! processes, exactly (the proof is at `WINDOW_SECS`; a refused caller may wait up to five
//! seconds longer than an exact log would make it), and minting more tokens does not raise
//! a workspace past its ceiling.
//!
//! A key is **quiet** while its counts, token and workspace, with the lease just granted,
//! are at most 1/[`QUIET_SHARE`] of each limit as the database answered: its lease then
//! lives [`QUIET_LEASE_TTL`] instead of [`LEASE_TTL`], so the many tokens that send a few
//! requests a second cost the database a statement every few seconds rather than every
//! second; a key nearer its limits keeps 1 s leases, so that what a process holds unspent
//! is soon available to the others again. Long leases are granted only by a limiter whose
//! owner hears every revocation ([`RateLimiter::hear_revocations`], below). Blocks grow with a
//! key's traffic up to 1/[`LEASE_SHARE`] of its limit, so a limit under 128 a minute is
//! still counted a request at a time. What a process holds unspent is not available to the
//! others until it is given back (at most a second later; a process that dies leaves it to
//! age out of the window), so under contention between processes a token may be allowed
//! fewer than its limit, never more.
//!
//! **Revocation** is read in the same round trip as a lease. A request that may change
//! something (any method but `GET` and `HEAD`, and every request at `/mcp`) asks the
//! database afresh ([`RateLimiter::check_token_fresh`]), so a revoked token changes nothing
//! after its revocation, as before leases. A read is refused by the process that revoked
//! the token at once ([`RateLimiter::forget_token`]), and by every other process from its
//! next lease on. A limiter that grants long leases must be told of every revocation made
//! by any process: its owner calls [`RateLimiter::hear_revocations`] once it relays the
//! database's revocation events, [`RateLimiter::forget_token`] on each (the token's leases
//! are dropped at once, so its next read asks the database), and
//! [`RateLimiter::revocations_missed`] when events may have been lost (every lease is cut
//! back to [`LEASE_TTL`] from when it was asked for). So another process refuses a revoked
//! token's reads as soon as it hears the revocation, and within [`LEASE_TTL`] of it when
//! the event is lost to a reconnection that is noticed (or from the reconnection, if that
//! comes later); whatever is heard or missed, never more than [`QUIET_LEASE_TTL`] after it,
//! since no lease lives longer. A limiter nobody told to hear revocations leases for
//! [`LEASE_TTL`] only: within [`LEASE_TTL`] of the revocation, as before.
//!
//! What a caller learns ([`Decision`]) is what the `X-RateLimit-*` headers and a 429's
//! `Retry-After` carry; `remaining` is the shared count as of the process's last lease,
//! less what it spent since. A refusal is kept for a second at most, so a caller past its
//! limit costs one statement a second per process.
//!
//! The workspace ceiling is [`DEFAULT_WORKSPACE_FACTOR`] times a token's limit unless
//! `JILITY_WORKSPACE_RATE_LIMIT` sets it (requests per minute).

mod lease;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use mcp_common_core::ToolError;

use jility_core::errors;
pub use lease::{
    AHEAD_MIN, LEASE_SHARE, LEASE_TTL, QUIET_LEASE_SECS, QUIET_LEASE_TTL, QUIET_SHARE,
};
use lease::{Book, Returns, Seen, Taken};

use jility_core::store::StoreError;
use jility_pg::store::PgDatabase;

/// Requests per minute per token unless `jility serve --rate-limit N` says otherwise.
pub const DEFAULT_PER_MINUTE: u32 = 100;
/// A workspace's ceiling is this many times a token's limit by default: enough for a few
/// busy clients at once, not for a token minted per request.
pub const DEFAULT_WORKSPACE_FACTOR: u32 = 5;
/// The environment variable that sets a workspace's ceiling (requests per minute).
pub const WORKSPACE_LIMIT_VAR: &str = "JILITY_WORKSPACE_RATE_LIMIT";

/// The window, in one-second buckets before the current one (the `span` of
/// `jility_rate_lease`): the 60 s a limit is about, and [`QUIET_LEASE_SECS`] more because a
/// leased request is spent up to that long after the second it is counted in ([`lease`]).
/// Every process reads windows this wide, whatever leases it grants itself: another
/// process's quiet leases may be in them.
///
/// Why 60 + T is wide enough, T = [`QUIET_LEASE_SECS`], the longest a lease lives
/// (whole seconds). Times are on the database's clock (the lease's `Instant` is taken
/// before the statement is sent, so it is no later than the statement's clock read).
/// - A request of a lease granted at time `g` is counted in second `s = floor(g)`, so
///   `s <= g < s + 1`; it is spent at a time `t` with `g <= t < asked + T <= g + T`
///   (a block is spent only while `now < expires = asked + ttl`, `ttl <= T`; a cut only
///   shortens it). So `t - 1 - T < s <= t`.
/// - Take any 60 s span `[a, a + 60)` and the requests spent in it, and among their leases
///   the one granted last, at `g*` in second `s*`. Grants are serialized by the row locks
///   of the token (and workspace), and the clock is read after the locks are taken, so
///   every other lease of these requests was granted before it, and stayed counted (what
///   goes back is only what was never spent).
/// - Every one of these requests has `s > t - 1 - T >= a - 1 - T`, and the last lease has
///   `s* <= g* <= t* < a + 60`; so `s - s* > -61 - T`, i.e. `s >= s* - 60 - T` (integers).
/// - The last lease was granted only if the counts of seconds `s* - span ..= s*`, with it,
///   were within the limit. With `span = 60 + T` those seconds hold every request spent in
///   `[a, a + 60)`: at most the limit of them. `T = 1` gave the former 61.
///
/// What it costs: a second's bucket leaves the window `span + 1` seconds after the second
/// starts, where an exact log would free a request 60 s after it was made (at least `s +
/// 60`): a refused caller's `Retry-After`/`X-RateLimit-Reset` may be up to `1 + T` = 5 s
/// later than an exact log's (2 s with 1 s leases), and counts may hold up to `T` seconds of
/// requests more than the last 60 s.
///
/// During an upgrade, a process of the previous version still reads 61 s windows; while it
/// shares the database with processes granting quiet leases, a key may exceed its limit by
/// what its quiet leases spent in their last three seconds (at most a quarter of the limit
/// in all, since only quiet keys get them).
const WINDOW_SECS: i32 = 60 + QUIET_LEASE_SECS as i32;

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

/// Counts requests per key in the database, in leased blocks ([`lease`]).
#[derive(Clone)]
pub struct RateLimiter {
    db: PgDatabase,
    per_minute: u32,
    per_workspace: u32,
    book: Arc<Book>,
    /// Whether quiet keys' leases may live [`QUIET_LEASE_TTL`]: the owner hears every
    /// revocation ([`Self::hear_revocations`]).
    long_leases: Arc<AtomicBool>,
    /// Lease statements this process has run.
    asked: Arc<AtomicU64>,
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
        let book = Arc::new(Book::default());
        let giver = db.clone();
        lease::sweeper(&book, move |returns| give_back(&giver, &returns));
        Self {
            db,
            per_minute: per_minute.max(1),
            per_workspace: per_workspace.max(1),
            book,
            long_leases: Arc::new(AtomicBool::new(false)),
            asked: Arc::new(AtomicU64::new(0)),
        }
    }

    /// Whether this limiter's owner hears every revocation, by any process, and calls
    /// [`Self::forget_token`] on each and [`Self::revocations_missed`] when some may have
    /// been missed: only then are quiet keys leased for [`QUIET_LEASE_TTL`]. `false` (the
    /// owner stopped hearing them) also cuts every lease back to [`LEASE_TTL`].
    pub fn hear_revocations(&self, hearing: bool) {
        self.long_leases.store(hearing, Ordering::SeqCst);
        if !hearing {
            self.book.cut_long_leases();
        }
    }

    /// Revocations may have been missed (the events' listener reconnected, or fell
    /// behind): every lease held is cut back to [`LEASE_TTL`] from when it was asked for,
    /// so a token revoked meanwhile is refused within that of its revocation (or at once,
    /// when its leases are older).
    pub fn revocations_missed(&self) {
        self.book.cut_long_leases();
    }

    /// How many lease statements (`jility_rate_lease`) this limiter has run, its clones
    /// included.
    pub fn leases_asked(&self) -> u64 {
        self.asked.load(Ordering::Relaxed)
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
    /// and when the token was revoked (`None`: it is not), as of the last time this
    /// process leased requests for it: at most [`LEASE_TTL`] ago, or [`QUIET_LEASE_TTL`]
    /// for a quiet token of a limiter that hears revocations (which drops the token's
    /// leases when it hears of its revocation, [`Self::forget_token`]).
    pub fn check_token(
        &self,
        token_id: i64,
        workspace_id: i64,
    ) -> Result<(Decision, Option<String>), StoreError> {
        self.count(
            &token_key(token_id),
            Some(&format!("workspace:{workspace_id}")),
            Some(token_id),
        )
    }

    /// [`Self::check_token`] when this process holds a leased request of the token (or
    /// refused it a moment ago): answered without the database, so without blocking.
    /// `None`: call [`Self::check_token`].
    /// When the token's lease runs low, its next one is asked for in the background
    /// ([`lease`]), on a blocking thread of the runtime the caller runs on.
    pub fn check_token_leased(&self, token_id: i64, workspace_id: i64) -> Option<Decision> {
        let key = token_key(token_id);
        let workspace = format!("workspace:{workspace_id}");
        let (decision, ahead) =
            self.book
                .spend(&key, Some(&workspace), self.cap(true), |seen, left| {
                    self.decide(seen, left, true, true)
                })?;
        if let Some(wanted) = ahead {
            let this = self.clone();
            let ask = move || this.lease_ahead(&key, &workspace, token_id, wanted);
            match tokio::runtime::Handle::try_current() {
                Ok(runtime) => drop(runtime.spawn_blocking(ask)),
                Err(_) => ask(),
            }
        }
        Some(decision)
    }

    /// Ask for `wanted` requests of `key` ahead of need and keep them as its next block;
    /// a refusal or a revocation is recorded as when a request asks.
    fn lease_ahead(&self, key: &str, workspace: &str, token_id: i64, wanted: u32) {
        let answer = self.lease(key, Some(workspace), Some(token_id), wanted);
        if let Err(err) = &answer {
            tracing::debug!(error = %err, "could not lease rate-limit requests ahead");
        }
        // No request waits on this answer: the book keeps what it says.
        let _ = self.settle(key, Some(workspace), true, answer, 0);
    }

    /// [`Self::check_token_fresh`] when `fresh`, else [`Self::check_token`].
    pub fn check_token_with(
        &self,
        token_id: i64,
        workspace_id: i64,
        fresh: bool,
    ) -> Result<(Decision, Option<String>), StoreError> {
        if fresh {
            self.check_token_fresh(token_id, workspace_id)
        } else {
            self.check_token(token_id, workspace_id)
        }
    }

    /// [`Self::check_token`] asking the database whatever this process holds: for a
    /// request that changes something, which a token revoked a moment ago in another
    /// process must not do. It counts one request, not a lease.
    pub fn check_token_fresh(
        &self,
        token_id: i64,
        workspace_id: i64,
    ) -> Result<(Decision, Option<String>), StoreError> {
        self.count_with(
            &token_key(token_id),
            Some(&format!("workspace:{workspace_id}")),
            Some(token_id),
            true,
        )
    }

    /// Spend nothing more of token `token_id`'s leases in this process (it was revoked,
    /// here or, as its event says, in another process): its next request asks the
    /// database, which says it is revoked.
    pub fn forget_token(&self, token_id: i64) {
        self.book.forget(&token_key(token_id));
    }

    /// The largest lease for a key with these limits.
    fn cap(&self, workspace: bool) -> u32 {
        let limit = if workspace {
            self.per_minute.min(self.per_workspace)
        } else {
            self.per_minute
        };
        (limit / LEASE_SHARE).max(1)
    }

    fn decide(&self, seen: &Seen, left: u32, workspace: bool, allowed: bool) -> Decision {
        // What this process holds unspent is counted in the database but not used yet.
        let unspent = i32::try_from(left).unwrap_or(i32::MAX);
        let now = seen.now();
        let token = Side {
            limit: self.per_minute,
            used: seen.token_used.saturating_sub(unspent),
            frees_at: seen.token_frees_at,
        };
        if !workspace {
            return token.decide(Scope::Token, allowed, now);
        }
        let workspace = Side {
            limit: self.per_workspace,
            used: seen.workspace_used.saturating_sub(unspent),
            frees_at: seen.workspace_frees_at,
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

    fn count(
        &self,
        key: &str,
        workspace: Option<&str>,
        token: Option<i64>,
    ) -> Result<(Decision, Option<String>), StoreError> {
        self.count_with(key, workspace, token, false)
    }

    fn count_with(
        &self,
        key: &str,
        workspace: Option<&str>,
        token: Option<i64>,
        fresh: bool,
    ) -> Result<(Decision, Option<String>), StoreError> {
        let has_workspace = workspace.is_some();
        let cap = self.cap(has_workspace);
        let (wanted, asker) = if fresh {
            (1, false)
        } else {
            match self.book.take(key, workspace, cap, |seen, left| {
                self.decide(seen, left, has_workspace, true)
            }) {
                Taken::Spent(decision) | Taken::Refused(decision) => return Ok((decision, None)),
                Taken::Ask { wanted, asker } => (wanted, asker),
            }
        };
        let answer = self.lease(key, workspace, token, wanted);
        self.settle(key, workspace, asker, answer, 1)
    }

    /// Ask the database for `wanted` requests of `key` (and its workspace): what it granted.
    fn lease(
        &self,
        key: &str,
        workspace: Option<&str>,
        token: Option<i64>,
        wanted: u32,
    ) -> Result<Leased, StoreError> {
        let token_limit = i32::try_from(self.per_minute).unwrap_or(i32::MAX);
        let workspace_limit = i32::try_from(self.per_workspace).unwrap_or(i32::MAX);
        let wanted_n = i32::try_from(wanted).unwrap_or(i32::MAX);
        let mut asked_at = Instant::now();
        self.asked.fetch_add(1, Ordering::Relaxed);
        self.db.with_prepared(LEASE_SQL, |client, lease| {
            asked_at = Instant::now();
            let row = client
                .query_one(
                    lease,
                    &[
                        &key,
                        &token_limit,
                        &workspace,
                        &workspace_limit,
                        &WINDOW_SECS,
                        &wanted_n,
                        &token,
                    ],
                )
                .map_err(jility_pg::store::db)?;
            let get = |at: usize| -> Result<f64, StoreError> {
                row.try_get(at).map_err(jility_pg::store::db)
            };
            let granted: i32 = row.try_get(0).map_err(jility_pg::store::db)?;
            let seen = Seen {
                token_used: row.try_get(1).map_err(jility_pg::store::db)?,
                token_frees_at: get(2)?,
                workspace_used: row.try_get(3).map_err(jility_pg::store::db)?,
                workspace_frees_at: get(4)?,
                now: get(5)?,
                at: Instant::now(),
            };
            Ok(Leased {
                granted: u32::try_from(granted).unwrap_or(0),
                second: row.try_get(6).map_err(jility_pg::store::db)?,
                seen,
                revoked_at: row.try_get(7).map_err(jility_pg::store::db)?,
                asked_at,
            })
        })
    }

    /// Record a lease's answer in the book (the asking request spending `spent` of it) and
    /// decide on that request.
    fn settle(
        &self,
        key: &str,
        workspace: Option<&str>,
        asker: bool,
        answer: Result<Leased, StoreError>,
        spent: u32,
    ) -> Result<(Decision, Option<String>), StoreError> {
        let has_workspace = workspace.is_some();
        let leased = match answer {
            Ok(leased) => leased,
            Err(err) => {
                self.book.settle(
                    key,
                    workspace,
                    asker,
                    Instant::now(),
                    LEASE_TTL,
                    None,
                    None,
                    spent,
                );
                return Err(err);
            }
        };
        let Leased {
            granted,
            second,
            seen,
            revoked_at,
            asked_at,
        } = leased;
        if revoked_at.is_some() {
            self.book.settle(
                key, workspace, asker, asked_at, LEASE_TTL, None, None, spent,
            );
            if granted > 0 {
                let mut returns = Returns::default();
                returns.add(key, workspace, second, granted);
                give_back(&self.db, &returns);
            }
            self.book.forget(key);
            let decision = self.decide(&seen, 0, has_workspace, false);
            return Ok((decision, revoked_at));
        }
        let refusal = (granted == 0).then(|| self.decide(&seen, 0, has_workspace, false));
        let ttl = self.ttl(&seen, has_workspace);
        let (left, newest) = self.book.settle(
            key,
            workspace,
            asker,
            asked_at,
            ttl,
            Some((granted, second, seen)),
            refusal,
            spent,
        );
        // This answer's own windows, unless a newer answer settled first and this process
        // holds requests it counted (a lease asked ahead): those are in `left`, so only the
        // newer windows may be set against them.
        let seen = match newest {
            Some(newest) if left > 0 && newest.now > seen.now => newest,
            _ => seen,
        };
        Ok((
            refusal.unwrap_or_else(|| self.decide(&seen, left, has_workspace, true)),
            None,
        ))
    }
}

impl RateLimiter {
    /// How long a lease the database answered with `seen` (its counts include the lease)
    /// lives: [`QUIET_LEASE_TTL`] when the key is quiet (every count at most
    /// 1/[`QUIET_SHARE`] of its limit) and this limiter hears revocations, else
    /// [`LEASE_TTL`].
    fn ttl(&self, seen: &Seen, workspace: bool) -> Duration {
        let quiet =
            |used: i32, limit: u32| i64::from(used).saturating_mul(QUIET_SHARE) <= i64::from(limit);
        let long = self.long_leases.load(Ordering::SeqCst)
            && quiet(seen.token_used, self.per_minute)
            && (!workspace || quiet(seen.workspace_used, self.per_workspace));
        if long { QUIET_LEASE_TTL } else { LEASE_TTL }
    }
}

/// What the database answered a lease: how many of the requests asked for it granted, the
/// second they are counted in, the windows as it saw them, when the token was revoked
/// (if it was), and when it was asked.
struct Leased {
    granted: u32,
    second: i64,
    seen: Seen,
    revoked_at: Option<String>,
    asked_at: Instant,
}

fn token_key(token_id: i64) -> String {
    format!("token:{token_id}")
}

/// Give back unspent leased requests; a failure only leaves them to age out of the window.
fn give_back(db: &PgDatabase, returns: &Returns) {
    let given = db.with_prepared(RETURN_SQL, |client, statement| {
        client
            .execute(
                statement,
                &[&returns.keys, &returns.seconds, &returns.counts],
            )
            .map_err(jility_pg::store::db)
    });
    if let Err(err) = given {
        tracing::debug!(error = %err, "could not give back leased requests; they leave the window within a minute");
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
        Decision {
            allowed,
            scope,
            limit: self.limit,
            remaining: self.left(),
            reset_at: self.frees_at.ceil() as i64,
            retry_after_secs: lease::wait(self.frees_at, now),
        }
    }
}

/// The rate limit's statement: a lease counted in both windows under row locks, and
/// whether the token was revoked, in one round trip (prepared once per connection).
const LEASE_SQL: &str = "SELECT r.granted, r.token_used, r.token_frees_at, r.workspace_used, \
        r.workspace_frees_at, r.now_at, r.second, \
        (SELECT t.revoked_at FROM api_tokens t WHERE t.id = $7) \
     FROM jility_rate_lease($1, $2, $3, $4, $5, $6) r";

/// Unspent leases given back, many keys in one statement.
const RETURN_SQL: &str = "SELECT jility_rate_return($1, $2, $3)";
