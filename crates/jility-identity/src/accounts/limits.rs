//! Sign-in limits: at most [`ACCOUNT_FAILURES`] failed sign-ins per email and
//! [`ADDRESS_FAILURES`] per client address in any [`WINDOW_SECS`] (a sliding window over
//! `login_failures`, shared by every server process on the database).
//!
//! An attempt is counted *before* its password is checked: its rows go in first (one per
//! key), then the window is counted with them, so attempts sent together cannot pass the
//! limit together, and a refused attempt costs no Argon2id run. A refused attempt's rows
//! are taken out again (the window holds failures, not refusals); a successful sign-in
//! takes out its address row and every failure of its email. The email is kept as a
//! BLAKE3 hash, whether an account has it or not: the limit (and its error) are the same
//! for an unknown email, so they tell nothing about who has an account. IPv6 addresses
//! count by their /64, which one client usually holds whole.

use std::net::IpAddr;

use chrono::TimeDelta;
use mcp_common_core::ToolError;

use super::handle::{now, store, time_text};
use jility_pg::store::PgDatabase;

/// Failed sign-ins allowed per email in the window.
pub const ACCOUNT_FAILURES: usize = 5;
/// Failed sign-ins allowed per client address in the window.
pub const ADDRESS_FAILURES: usize = 20;
/// The sliding window, in seconds (15 minutes).
pub const WINDOW_SECS: i64 = 15 * 60;

/// An attempt counted in the window, to keep (it failed) or take out
/// ([`Attempt::succeeded`], [`Attempt`] refused).
pub(super) struct Attempt {
    email_key: String,
    ids: Vec<i64>,
}

/// The window's key of an email (lower-cased first).
pub(super) fn email_key(email: &str) -> String {
    format!(
        "email:{}",
        blake3::hash(email.trim().to_lowercase().as_bytes()).to_hex()
    )
}

/// The window's key of a client address.
fn address_key(addr: IpAddr) -> String {
    match addr {
        IpAddr::V4(v4) => format!("addr:{v4}"),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => format!("addr:{v4}"),
            None => {
                let s = v6.segments();
                format!("addr:{:x}:{:x}:{:x}:{:x}::/64", s[0], s[1], s[2], s[3])
            }
        },
    }
}

/// Count a sign-in attempt of `email` from `addr`, or refuse it: a `rate_limited` error
/// (retryable, with the seconds to wait) that reads the same whether the account exists.
pub(super) fn begin(db: &PgDatabase, email: &str, addr: IpAddr) -> Result<Attempt, ToolError> {
    let at = now();
    let cutoff = time_text(at - TimeDelta::seconds(WINDOW_SECS));
    let email_key = email_key(email);
    let address_key = address_key(addr);
    db.with_client(|client| {
        // Rows out of every window go on the way (a data-modifying CTE runs to completion).
        let ids: Vec<i64> = client
            .query(
                "WITH gone AS (DELETE FROM login_failures WHERE at <= $3) \
                 INSERT INTO login_failures (key, at) VALUES ($1, $4), ($2, $4) RETURNING id",
                &[&email_key, &address_key, &cutoff, &time_text(at)],
            )
            .map_err(store)?
            .iter()
            .map(|row| row.try_get(0))
            .collect::<Result<_, _>>()
            .map_err(store)?;
        let rows = client
            .query(
                "SELECT key, at FROM login_failures WHERE key IN ($1, $2) AND at > $3 \
                 ORDER BY at",
                &[&email_key, &address_key, &cutoff],
            )
            .map_err(store)?;
        let mut email_times = Vec::new();
        let mut address_times = Vec::new();
        for row in &rows {
            let key: String = row.try_get(0).map_err(store)?;
            let time: String = row.try_get(1).map_err(store)?;
            if key == email_key {
                email_times.push(time);
            } else {
                address_times.push(time);
            }
        }
        let wait = [
            (email_times, ACCOUNT_FAILURES),
            (address_times, ADDRESS_FAILURES),
        ]
        .into_iter()
        .filter_map(|(times, most)| wait_secs(&times, most, at))
        .max();
        if let Some(wait) = wait {
            client
                .execute("DELETE FROM login_failures WHERE id = ANY($1)", &[&ids])
                .map_err(store)?;
            tracing::warn!(wait, "refused a sign-in: too many failures");
            return Err(ToolError::new(
                mcp_common_core::codes::RATE_LIMITED,
                "Too many failed sign-ins; wait before trying again",
            )
            .with_hint(format!(
                "Wait {wait} s, then sign in again. If the password is lost, ask an admin of the workspace for a reset link."
            ))
            .with_retry_after(wait));
        }
        Ok(Attempt {
            email_key: email_key.clone(),
            ids,
        })
    })
}

/// When more than `most` attempts (this one included) are in the window `times` (oldest
/// first), the seconds until enough leave it for this one to pass.
fn wait_secs(times: &[String], most: usize, at: chrono::DateTime<chrono::Utc>) -> Option<u64> {
    if times.len() <= most {
        return None;
    }
    // Once the oldest `len - most` have left, `most` remain (this one among them).
    let frees = times
        .get(times.len() - most - 1)
        .and_then(|t| jility_core::token::parse_time(t))
        .map(|t| t + TimeDelta::seconds(WINDOW_SECS))
        .unwrap_or(at + TimeDelta::seconds(WINDOW_SECS));
    let secs = ((frees - at).num_milliseconds().max(0) + 999) / 1000;
    Some(u64::try_from(secs).unwrap_or(1).max(1))
}

impl Attempt {
    /// The attempt succeeded: its address row goes, and every failure of its email (the
    /// account's count starts afresh; the address's does not, so that signing in to an
    /// account of one's own does not clear an address's failures on others).
    pub(super) fn succeeded(self, db: &PgDatabase) {
        let result = db.with_client(|client| {
            client
                .execute(
                    "DELETE FROM login_failures WHERE id = ANY($1) OR key = $2",
                    &[&self.ids, &self.email_key],
                )
                .map_err(store)
        });
        if let Err(err) = result {
            tracing::warn!(error = %err, "could not clear the failures of a sign-in");
        }
    }
}

/// Forget the failures of `email` (its password was just reset).
pub(super) fn clear_email(
    client: &mut impl postgres::GenericClient,
    email: &str,
) -> Result<(), ToolError> {
    client
        .execute(
            "DELETE FROM login_failures WHERE key = $1",
            &[&email_key(email)],
        )
        .map(|_| ())
        .map_err(store)
}
