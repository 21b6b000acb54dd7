//! Deliveries: claimed a few at a time under a lease (so that of several processes one
//! sends each, and a process killed mid-send leaves it to be sent again when the lease
//! lapses), sent signed to the address that was checked, and their outcome recorded: done,
//! tried again later (timeouts, connection errors, 429 after its `Retry-After`, 5xx), or
//! failed. A subscription whose every delivery failed for [`FAILING_WINDOW_SECS`] is
//! disabled.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use jility_identity::audit::{Audit, NewEntry};
use jility_pg::store::{PgDatabase, Prepared};
use mcp_common_core::ToolError;
use url::Url;

use crate::signing::signature_header;
use crate::target;

/// How long a claimed delivery is its process's alone.
pub const LEASE_SECS: i32 = 30;
/// How long a delivery is tried, and how long a subscription may fail before it is
/// disabled (24 hours).
pub const FAILING_WINDOW_SECS: f64 = 24.0 * 3600.0;
/// The whole of one attempt, connection included.
pub const ATTEMPT_SECS: u64 = 10;
/// Most bytes of an answer read.
pub const MAX_ANSWER_BYTES: usize = 64 * 1024;
/// Bytes of an answer kept in the log.
const EXCERPT_BYTES: usize = 512;
/// The longest wait between two attempts.
const MAX_DELAY_SECS: f64 = 3600.0;

/// The first wait before a retry (`JILITY_WEBHOOKS_RETRY_BASE_MS`, default 5 s), doubled
/// at each attempt up to an hour, with ±20% jitter.
pub fn retry_base() -> Duration {
    std::env::var("JILITY_WEBHOOKS_RETRY_BASE_MS")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|ms| (10..=600_000).contains(ms))
        .map(Duration::from_millis)
        .unwrap_or(Duration::from_secs(5))
}

/// A delivery claimed for one attempt.
#[derive(Debug, Clone)]
pub struct Claimed {
    pub id: i64,
    pub workspace_id: i64,
    pub webhook_id: i64,
    pub message_id: String,
    pub body: String,
    pub attempts: i32,
    /// Seconds since its first attempt.
    pub trying_for: f64,
    pub url: String,
    pub secrets: Vec<String>,
}

/// Claim at most `most` due deliveries in `tx` (its caller commits it, not waiting for the
/// disk: a lease lost in a crash leaves the delivery to be claimed again): each the
/// earliest waiting of its ticket for its subscription, of an enabled subscription, not
/// leased by another process.
pub fn claim(
    tx: &mut Tx<'_>,
    cache: &mut Prepared<'_>,
    most: i64,
) -> Result<Vec<Claimed>, ToolError> {
    let due = cache.get(
        tx,
        "WITH due AS ( \
           SELECT d.id FROM webhook_deliveries d \
           JOIN webhooks w ON w.id = d.webhook_id AND w.enabled \
           WHERE d.state = 'pending' AND d.next_attempt_at <= now() \
             AND (d.leased_until IS NULL OR d.leased_until < now()) \
             AND (d.ticket_id IS NULL OR NOT EXISTS ( \
               SELECT 1 FROM webhook_deliveries e \
               WHERE e.webhook_id = d.webhook_id AND e.ticket_id = d.ticket_id \
                 AND e.state = 'pending' AND e.id < d.id)) \
           ORDER BY d.next_attempt_at, d.id LIMIT $1 \
           FOR UPDATE OF d SKIP LOCKED) \
         UPDATE webhook_deliveries d SET \
           leased_until = now() + make_interval(secs => $2::int), \
           attempts = d.attempts + 1, \
           first_attempt_at = coalesce(d.first_attempt_at, now()), \
           last_attempt_at = now() \
         FROM due, webhooks w \
         WHERE d.id = due.id AND w.id = d.webhook_id \
         RETURNING d.id, d.workspace_id, d.webhook_id, d.message_id, d.body, d.attempts, \
           extract(epoch FROM now() - d.first_attempt_at)::float8, w.url, w.secret, \
           CASE WHEN w.previous_until > now() THEN w.previous_secret END",
    )?;
    let rows = tx.query(&due, &[&most, &LEASE_SECS]).map_err(get)?;
    rows.iter()
        .map(|row| -> Result<Claimed, ToolError> {
            let get = |e: postgres::Error| ToolError::from(jility_pg::store::db(e));
            let mut secrets: Vec<String> = vec![row.try_get(8).map_err(get)?];
            if let Some(previous) = row.try_get::<_, Option<String>>(9).map_err(get)? {
                secrets.push(previous);
            }
            Ok(Claimed {
                id: row.try_get(0).map_err(get)?,
                workspace_id: row.try_get(1).map_err(get)?,
                webhook_id: row.try_get(2).map_err(get)?,
                message_id: row.try_get(3).map_err(get)?,
                body: row.try_get(4).map_err(get)?,
                attempts: row.try_get(5).map_err(get)?,
                trying_for: row.try_get(6).map_err(get)?,
                url: row.try_get(7).map_err(get)?,
                secrets,
            })
        })
        .collect()
}

/// What one attempt came to.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub status: Option<u16>,
    pub excerpt: Option<String>,
    pub error: Option<String>,
    pub duration_ms: i32,
    pub verdict: Verdict,
}

/// Whether a delivery is done.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Verdict {
    Delivered,
    /// Try again, not before so many seconds (a `Retry-After`).
    Retry(Option<f64>),
    /// Not tried again.
    Failed,
}

/// HTTP clients kept per host and checked address, so that connections are reused.
#[derive(Default)]
pub struct Clients {
    kept: Mutex<HashMap<(String, SocketAddr), reqwest::Client>>,
}

impl Clients {
    fn client(&self, host: &str, addr: SocketAddr) -> Result<reqwest::Client, String> {
        let key = (host.to_string(), addr);
        if let Ok(kept) = self.kept.lock()
            && let Some(client) = kept.get(&key)
        {
            return Ok(client.clone());
        }
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(Duration::from_secs(ATTEMPT_SECS))
            .connect_timeout(Duration::from_secs(ATTEMPT_SECS))
            .resolve(host, addr)
            .no_proxy()
            .user_agent("jility-webhooks/1")
            .build()
            .map_err(|e| format!("no HTTP client: {e}"))?;
        if let Ok(mut kept) = self.kept.lock() {
            if kept.len() >= 256 {
                kept.clear();
            }
            kept.insert(key, client.clone());
        }
        Ok(client)
    }
}

/// Send `claimed` once.
pub async fn send(clients: &Clients, claimed: &Claimed, allow_private: bool) -> Outcome {
    let started = Instant::now();
    let elapsed = |started: Instant| started.elapsed().as_millis().min(i32::MAX as u128) as i32;
    let refused = |error: String, verdict: Verdict| Outcome {
        status: None,
        excerpt: None,
        error: Some(error),
        duration_ms: elapsed(started),
        verdict,
    };
    let url = match Url::parse(&claimed.url)
        .map_err(|e| e.to_string())
        .and_then(|url| target::parse(url.as_str(), allow_private).map_err(|e| e.message))
    {
        Ok(url) => url,
        Err(error) => return refused(error, Verdict::Failed),
    };
    let addr = match target::address(&url, allow_private).await {
        Ok(addr) => addr,
        Err(err) if err.code == jility_core::errors::NETWORK_ERROR => {
            return refused(err.message, Verdict::Retry(None));
        }
        Err(err) => return refused(err.message, Verdict::Failed),
    };
    let host = url.host_str().unwrap_or_default().to_string();
    let client = match clients.client(&host, addr) {
        Ok(client) => client,
        Err(error) => return refused(error, Verdict::Retry(None)),
    };
    let timestamp = chrono::Utc::now().timestamp();
    let secrets: Vec<&str> = claimed.secrets.iter().map(String::as_str).collect();
    let signature = signature_header(
        &secrets,
        &claimed.message_id,
        timestamp,
        claimed.body.as_bytes(),
    );
    let sent = client
        .post(url)
        .header("content-type", "application/json")
        .header("webhook-id", &claimed.message_id)
        .header("webhook-timestamp", timestamp.to_string())
        .header("webhook-signature", signature)
        .body(claimed.body.clone())
        .send()
        .await;
    let mut response = match sent {
        Ok(response) => response,
        Err(err) => {
            let kind = if err.is_timeout() {
                format!("no answer within {ATTEMPT_SECS} s")
            } else if err.is_connect() {
                "no connection could be made".to_string()
            } else {
                "the exchange failed".to_string()
            };
            return refused(kind, Verdict::Retry(None));
        }
    };
    let status = response.status();
    let retry_after = response
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(retry_after_secs);
    let mut answer = Vec::new();
    let mut read_error = None;
    loop {
        match tokio::time::timeout(Duration::from_secs(ATTEMPT_SECS), response.chunk()).await {
            Ok(Ok(Some(chunk))) => {
                answer.extend_from_slice(&chunk);
                if answer.len() >= MAX_ANSWER_BYTES {
                    break;
                }
            }
            Ok(Ok(None)) => break,
            Ok(Err(_)) | Err(_) => {
                read_error = Some("the answer could not be read".to_string());
                break;
            }
        }
    }
    answer.truncate(EXCERPT_BYTES);
    let excerpt: String = String::from_utf8_lossy(&answer)
        .chars()
        .filter(|c| *c != '\0')
        .collect();
    let code = status.as_u16();
    let verdict = if status.is_success() {
        Verdict::Delivered
    } else if code == 429 || code == 408 || status.is_server_error() {
        Verdict::Retry(retry_after)
    } else {
        Verdict::Failed
    };
    let error = match verdict {
        Verdict::Delivered => None,
        _ if status.is_redirection() => {
            Some(format!("answered {code}: redirects are not followed"))
        }
        _ => Some(read_error.unwrap_or_else(|| format!("answered {code}"))),
    };
    Outcome {
        status: Some(code),
        excerpt: (!excerpt.is_empty()).then_some(excerpt),
        error,
        duration_ms: elapsed(started),
        verdict,
    }
}

/// `Retry-After` as seconds: a number of seconds or an HTTP date.
fn retry_after_secs(value: &str) -> Option<f64> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(secs as f64);
    }
    let at = chrono::DateTime::parse_from_rfc2822(value).ok()?;
    let secs =
        (at.with_timezone(&chrono::Utc) - chrono::Utc::now()).num_milliseconds() as f64 / 1000.0;
    Some(secs.max(0.0))
}

/// The wait before attempt `attempts + 1`: the base doubled per attempt, at most an hour,
/// ±20% jitter; at least `retry_after`.
pub fn delay(base: Duration, attempts: i32, retry_after: Option<f64>) -> f64 {
    let doubled = base.as_secs_f64() * 2f64.powi(attempts.clamp(1, 30) - 1);
    let mut jitter = [0u8; 2];
    let _ = getrandom::fill(&mut jitter);
    let unit = f64::from(u16::from_le_bytes(jitter)) / f64::from(u16::MAX);
    let wait = doubled.min(MAX_DELAY_SECS) * (0.8 + 0.4 * unit);
    wait.max(retry_after.unwrap_or(0.0).min(MAX_DELAY_SECS))
}

/// Where an attempt leaves its delivery: its state and, for a retry, the wait.
fn settle(claimed: &Claimed, outcome: &Outcome, base: Duration) -> (&'static str, f64) {
    match outcome.verdict {
        Verdict::Delivered => ("delivered", 0.0),
        Verdict::Failed => ("failed", 0.0),
        Verdict::Retry(after) => {
            let wait = delay(base, claimed.attempts, after);
            if claimed.trying_for + wait > FAILING_WINDOW_SECS {
                ("failed", 0.0)
            } else {
                ("pending", wait)
            }
        }
    }
}

type Tx<'a> = postgres::Transaction<'a>;

fn get(e: postgres::Error) -> ToolError {
    ToolError::from(jility_pg::store::db(e))
}

/// Record the attempts `done` in one transaction: the delivered in one statement, each
/// other one on its own; a subscription failing for [`FAILING_WINDOW_SECS`] is disabled,
/// with an audit entry and an inbox entry for its maker and the workspace's admins.
/// Whether deliveries may have come due by it (the next of a ticket whose delivery is
/// settled), so that the caller claims again only then.
pub fn record(
    db: &PgDatabase,
    audit: &Audit,
    done: &[(Claimed, Outcome)],
    base: Duration,
) -> Result<bool, ToolError> {
    let settled: Vec<(&'static str, f64)> = done.iter().map(|(c, o)| settle(c, o, base)).collect();
    let (disabled, more) = db.with_cached(
        |client, cache| -> Result<(Vec<(usize, String)>, bool), ToolError> {
            let mut tx = client.transaction().map_err(get)?;
            // Not waiting for the disk: a record lost in a crash only means the delivery is
            // sent again when its lease lapses (at least once, as ever). The statement of the
            // delivered says so itself, saving a trip.
            let delivered: Vec<usize> = (0..done.len())
                .filter(|i| settled[*i].0 == "delivered")
                .collect();
            if delivered.is_empty() {
                tx.batch_execute("SET LOCAL synchronous_commit = off")
                    .map_err(get)?;
            }
            let mut more = false;
            if !delivered.is_empty() {
                let ids: Vec<i64> = delivered.iter().map(|i| done[*i].0.id).collect();
                let attempts: Vec<i32> = delivered.iter().map(|i| done[*i].0.attempts).collect();
                let statuses: Vec<Option<i32>> = delivered
                    .iter()
                    .map(|i| done[*i].1.status.map(i32::from))
                    .collect();
                let excerpts: Vec<Option<String>> = delivered
                    .iter()
                    .map(|i| done[*i].1.excerpt.clone())
                    .collect();
                let durations: Vec<i32> =
                    delivered.iter().map(|i| done[*i].1.duration_ms).collect();
                // One trip: the deliveries settled, their subscriptions no longer failing, and
                // whether a next delivery of one of their tickets waits (the statement's
                // snapshot still shows the settled rows pending: they are left out by id).
                let settle = cache.get(
                    &mut tx,
                    "WITH done AS ( \
                   UPDATE webhook_deliveries d SET state = 'delivered', leased_until = NULL, \
                     response_status = u.status, response_excerpt = u.excerpt, error = NULL, \
                     duration_ms = u.duration, delivered_at = now() \
                   FROM unnest($1::bigint[], $2::int[], $3::int[], $4::text[], $5::int[]) \
                     AS u(id, attempts, status, excerpt, duration) \
                   WHERE d.id = u.id AND d.attempts = u.attempts \
                   RETURNING d.webhook_id, d.ticket_id), \
                 cleared AS ( \
                   UPDATE webhooks w SET failing_since = NULL \
                   WHERE w.id IN (SELECT webhook_id FROM done) AND w.failing_since IS NOT NULL) \
                 SELECT EXISTS ( \
                   SELECT 1 FROM webhook_deliveries e \
                   JOIN (SELECT DISTINCT webhook_id, ticket_id FROM done) p \
                     ON e.webhook_id = p.webhook_id AND e.ticket_id = p.ticket_id \
                   WHERE e.state = 'pending' AND e.id <> ALL($1::bigint[])), \
                 set_config('synchronous_commit', 'off', true)",
                )?;
                more = tx
                    .query_one(
                        &settle,
                        &[&ids, &attempts, &statuses, &excerpts, &durations],
                    )
                    .map_err(get)?
                    .try_get(0)
                    .map_err(get)?;
            }
            let mut disabled = Vec::new();
            for (i, ((claimed, outcome), (state, wait))) in done.iter().zip(&settled).enumerate() {
                if *state != "delivered" {
                    // A delivery given up lets the next of its ticket go.
                    more |= *state == "failed";
                    if let Some(reason) = failure(&mut tx, claimed, outcome, state, *wait)? {
                        disabled.push((i, reason));
                    }
                }
            }
            tx.commit().map_err(get)?;
            Ok((disabled, more))
        },
    )?;
    // Counted once recorded: a record that failed is tried again (the dispatcher), or its
    // sends are made again when their leases lapse, and counted then.
    for ((_, outcome), (state, _)) in done.iter().zip(&settled) {
        let outcome_name = match *state {
            "delivered" => "delivered",
            "pending" => "retry",
            _ => "failed",
        };
        crate::measure::attempt(outcome_name, outcome.duration_ms);
    }
    for (i, reason) in disabled {
        let claimed = &done[i].0;
        crate::measure::disabled();
        tracing::warn!(
            workspace_id = claimed.workspace_id,
            webhook_id = claimed.webhook_id,
            "disabled a webhook whose deliveries failed for 24 hours"
        );
        let detail = format!("webhook {}: {reason}", claimed.webhook_id);
        audit.record(&NewEntry {
            workspace_id: Some(claimed.workspace_id),
            actor: Some("jility"),
            operation: "webhooks.disabled",
            status: 200,
            detail: Some(&detail),
            ..NewEntry::default()
        });
    }
    Ok(more)
}

/// Record a failed attempt (tried again later, or not): the reason its subscription was
/// disabled, when it was.
fn failure(
    tx: &mut Tx<'_>,
    claimed: &Claimed,
    outcome: &Outcome,
    state: &str,
    wait: f64,
) -> Result<Option<String>, ToolError> {
    let status = outcome.status.map(i32::from);
    tx.execute(
        "UPDATE webhook_deliveries SET state = $3, leased_until = NULL, \
           next_attempt_at = now() + make_interval(secs => $4::float8), \
           response_status = $5, response_excerpt = $6, error = $7, duration_ms = $8 \
         WHERE id = $1 AND attempts = $2",
        &[
            &claimed.id,
            &claimed.attempts,
            &state,
            &wait,
            &status,
            &outcome.excerpt,
            &outcome.error,
            &outcome.duration_ms,
        ],
    )
    .map_err(get)?;
    let reason = format!(
        "every delivery failed for 24 hours (the last: {})",
        outcome.error.as_deref().unwrap_or("failed")
    );
    // A subscription deleted meanwhile has no row (and its deliveries are gone).
    let due: bool = tx
        .query_opt(
            "UPDATE webhooks SET failing_since = coalesce(failing_since, now()) \
             WHERE id = $1 \
             RETURNING enabled AND failing_since < now() - make_interval(secs => $2::float8)",
            &[&claimed.webhook_id, &FAILING_WINDOW_SECS],
        )
        .and_then(|row| row.map(|row| row.try_get(0)).transpose())
        .map_err(get)?
        .unwrap_or(false);
    if !due {
        return Ok(None);
    }
    tx.execute(
        "UPDATE webhooks SET enabled = false, disabled_reason = $2 WHERE id = $1",
        &[&claimed.webhook_id, &reason],
    )
    .map_err(get)?;
    // Told in the inbox of who made it and of the workspace's owners and admins.
    let summary = format!(
        "Webhook {} was disabled: {reason}. Enable it again once its receiver answers.",
        claimed.webhook_id
    );
    tx.execute(
        "INSERT INTO notifications (workspace_id, recipient, kind, priority, ticket_id, actor, summary, created_at) \
         SELECT w.workspace_id, told.person, 'webhook_disabled', 60, NULL, 'jility', $2, \
                to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"') \
         FROM webhooks w, LATERAL ( \
           SELECT w.created_by AS person \
           UNION SELECT u.email FROM memberships m JOIN users u ON u.id = m.user_id \
           WHERE m.workspace_id = w.workspace_id AND m.role IN ('owner', 'admin')) told \
         WHERE w.id = $1",
        &[&claimed.webhook_id, &summary],
    )
    .map_err(get)?;
    Ok(Some(reason))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_grow_and_honour_retry_after() {
        let base = Duration::from_secs(5);
        let first = delay(base, 1, None);
        assert!((4.0..=6.0).contains(&first), "{first}");
        let fifth = delay(base, 5, None);
        assert!((64.0..=96.0).contains(&fifth), "{fifth}");
        assert!(delay(base, 30, None) <= 3600.0 * 1.2);
        assert!(delay(base, 1, Some(120.0)) >= 120.0);
        assert_eq!(retry_after_secs("7"), Some(7.0));
        assert_eq!(retry_after_secs("Wed, 21 Oct 2015 07:28:00 GMT"), Some(0.0));
        assert_eq!(retry_after_secs("soon"), None);
    }
}
