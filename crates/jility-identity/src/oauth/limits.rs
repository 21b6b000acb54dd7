//! The token endpoint's limits: in any [`TOKEN_WINDOW_SECS`], at most
//! [`token_limit`] requests to `POST /oauth/token` and `POST /oauth/revoke` per client
//! address (an IPv6 address by its /64), and twice that to `POST /oauth/token` per
//! `client_id` (whatever the address). A request past either is answered `429` with
//! `Retry-After` and RFC 6749's form, `{"error": "invalid_request", "error_description":
//! "Too many token requests …"}` (`slow_down` is the device flow's, not this), before any
//! code, refresh token or client is looked at.
//!
//! The windows are kept in PostgreSQL, so every server process on the database shares them:
//! in `oauth_registrations`, OAuth's sliding-window table (registrations count there under
//! `addr:…`, these under `token:addr:…` and `token:client:BLAKE3(client_id)`). As the
//! sign-in limits do (`accounts/limits.rs`), a request's rows go in first and the window is
//! counted with them, so requests sent together cannot pass the limit together; a refused
//! request's rows are taken out again (a window holds what was let through). A request
//! costs two statements: its keys' rows older than the window go in the one that adds its
//! rows, and every [`SWEEP_EVERY`]th request also takes out every row older than the
//! registration window (keys that went quiet).
//!
//! A `client_id` is public, so its window can be filled by anyone who sends it from enough
//! addresses: its limit is set well above what its people's clients need (each refreshes
//! about once an access token's lifetime), and bounds what one client — a loop in it, or
//! a stranger borrowing its id — can make this server do. `JILITY_OAUTH_TOKEN_LIMIT` sets
//! the per-address limit (1 to 100,000 a minute; the client's is twice it).

use std::net::IpAddr;

use chrono::{DateTime, TimeDelta, Utc};
use mcp_common_core::ToolError;

use super::OAuthError;
use super::clients::address_key;
use crate::accounts::{now, store, time_text};
use jility_pg::store::PgDatabase;

/// Token requests allowed per client address in the window, unless
/// `JILITY_OAUTH_TOKEN_LIMIT` says otherwise.
pub const TOKEN_REQUESTS_PER_ADDRESS: usize = 60;
/// The windows, in seconds.
pub const TOKEN_WINDOW_SECS: i64 = 60;
/// One request in this many (by the id of its row) also sweeps every key's old rows.
const SWEEP_EVERY: i64 = 32;

/// Requests allowed per client address in the window: `JILITY_OAUTH_TOKEN_LIMIT` (1 to
/// 100,000), else [`TOKEN_REQUESTS_PER_ADDRESS`]. A `client_id` is allowed twice this.
pub fn token_limit() -> usize {
    std::env::var("JILITY_OAUTH_TOKEN_LIMIT")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|n| (1..=100_000).contains(n))
        .unwrap_or(TOKEN_REQUESTS_PER_ADDRESS)
}

/// Count a request from `from` (for `client_id`, when it names one) in its windows, or
/// refuse it: `429`, with the seconds until a slot frees (blocking).
pub fn admit(db: &PgDatabase, from: IpAddr, client_id: Option<&str>) -> Result<(), OAuthError> {
    let per_address = token_limit();
    let mut keys = vec![(
        format!("token:addr:{}", address_key(from)),
        per_address,
        "this address",
    )];
    if let Some(id) = client_id.filter(|id| !id.is_empty()) {
        keys.push((
            format!("token:client:{}", blake3::hash(id.as_bytes()).to_hex()),
            per_address.saturating_mul(2),
            "this client",
        ));
    }
    let names: Vec<String> = keys.iter().map(|(k, _, _)| k.clone()).collect();
    let at = now();
    let at_text = time_text(at);
    let cutoff = time_text(at - TimeDelta::seconds(TOKEN_WINDOW_SECS));
    let stale = time_text(at - TimeDelta::seconds(super::REGISTRATION_WINDOW_SECS));
    let refused = db.with_client(|client| -> Result<Option<(u64, &'static str)>, ToolError> {
        // The keys' rows out of their window go on the way (a data-modifying CTE runs to
        // completion; the index on (key, at) finds them).
        let ids: Vec<i64> = client
            .query(
                "WITH gone AS (DELETE FROM oauth_registrations WHERE key = ANY($1) AND at <= $3) \
                 INSERT INTO oauth_registrations (key, at) SELECT k, $2 FROM unnest($1::TEXT[]) k \
                 RETURNING id",
                &[&names, &at_text, &cutoff],
            )
            .map_err(store)?
            .iter()
            .map(|row| row.try_get(0))
            .collect::<Result<_, _>>()
            .map_err(store)?;
        // Every [`SWEEP_EVERY`]th request, the rows of every key older than any window
        // (a whole-table scan, so not on every request).
        if ids.first().is_some_and(|id| id % SWEEP_EVERY == 0) {
            client
                .execute("DELETE FROM oauth_registrations WHERE at <= $1", &[&stale])
                .map_err(store)?;
        }
        let rows = client
            .query(
                "SELECT key, at FROM oauth_registrations WHERE key = ANY($1) AND at > $2 \
                 ORDER BY at",
                &[&names, &cutoff],
            )
            .map_err(store)?;
        let mut refused: Option<(u64, &'static str)> = None;
        for (key, most, what) in &keys {
            let mut times = Vec::new();
            for row in &rows {
                if row.try_get::<_, String>(0).map_err(store)? == *key {
                    times.push(row.try_get::<_, String>(1).map_err(store)?);
                }
            }
            if let Some(wait) = wait_secs(&times, *most, at)
                && refused.is_none_or(|(longest, _)| wait > longest)
            {
                refused = Some((wait, *what));
            }
        }
        if refused.is_some() {
            client
                .execute(
                    "DELETE FROM oauth_registrations WHERE id = ANY($1)",
                    &[&ids],
                )
                .map_err(store)?;
        }
        Ok(refused)
    })?;
    match refused {
        None => Ok(()),
        Some((wait, what)) => {
            tracing::warn!(wait, what, "refused a token request: too many");
            Err(OAuthError::too_many(
                format!("Too many token requests from {what}; try again in {wait} s"),
                wait,
            ))
        }
    }
}

/// When more than `most` requests (this one included) are in the window `times` (oldest
/// first), the seconds until enough leave it for this one to pass.
fn wait_secs(times: &[String], most: usize, at: DateTime<Utc>) -> Option<u64> {
    if times.len() <= most {
        return None;
    }
    let window = TimeDelta::seconds(TOKEN_WINDOW_SECS);
    let frees = times
        .get(times.len() - most - 1)
        .and_then(|t| jility_core::token::parse_time(t))
        .map_or(at + window, |t| t + window);
    let secs = ((frees - at).num_milliseconds().max(0) + 999) / 1000;
    Some(u64::try_from(secs).unwrap_or(1).max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wait_is_until_enough_leave_the_window() {
        let at = now();
        let times: Vec<String> = (0..4)
            .map(|i| time_text(at - TimeDelta::seconds(50 - i * 10)))
            .collect();
        assert_eq!(wait_secs(&times, 4, at), None);
        // Five in the window with room for four: the oldest (50 s ago) leaves in 10 s.
        let mut five = times.clone();
        five.push(time_text(at));
        assert_eq!(wait_secs(&five, 4, at), Some(10));
        // Room for three: the two oldest must leave (the second, 40 s ago, in 20 s).
        assert_eq!(wait_secs(&five, 3, at), Some(20));
    }
}
