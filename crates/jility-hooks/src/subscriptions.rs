//! A workspace's subscriptions and their delivery logs, as kept in PostgreSQL (blocking;
//! call on a blocking thread). Every statement binds the workspace: another workspace's
//! subscription or delivery is not found.

use jility_core::errors::{ALREADY_EXISTS, INVALID_INPUT};
use jility_pg::store::{PgDatabase, db};
use mcp_common_core::ToolError;
use postgres::Row;
use serde::Serialize;

use crate::kinds::{EVENT_TYPES, TEST_EVENT};
use crate::signing::{new_message_id, new_secret};

/// Most subscriptions a workspace keeps.
pub const MAX_WEBHOOKS: i64 = 20;
/// Longest description, in characters.
const MAX_DESCRIPTION_CHARS: usize = 200;
/// Longest filter, in characters.
const MAX_FILTER_CHARS: usize = 500;
/// Most deliveries one page of a log shows.
pub const MAX_PAGE: i64 = 100;

/// A subscription as the API shows it: never its secret.
#[derive(Debug, Clone, Serialize)]
pub struct Webhook {
    pub id: i64,
    pub url: String,
    /// The event types it wants; empty: every type.
    pub events: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub filter: Option<String>,
    pub description: String,
    pub enabled: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disabled_reason: Option<String>,
    /// Since when every delivery failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failing_since: Option<String>,
    /// Until when the secret before the last rotation is still signed with.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous_secret_until: Option<String>,
    pub pending_deliveries: i64,
    pub created_by: String,
    pub created_at: String,
}

/// One delivery of a log.
#[derive(Debug, Clone, Serialize)]
pub struct Delivery {
    pub id: i64,
    pub webhook_id: i64,
    /// `webhook-id`: the same on every attempt.
    pub message_id: String,
    pub event_type: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ticket: Option<String>,
    /// `pending`, `delivered` or `failed`.
    pub state: String,
    pub attempts: i32,
    pub created_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_attempt_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_attempt_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_status: Option<i32>,
    /// The first bytes of the receiver's answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_excerpt: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delivered_at: Option<String>,
}

/// What a new subscription is.
#[derive(Debug, Clone)]
pub struct NewWebhook {
    pub url: String,
    pub events: Vec<String>,
    pub filter: Option<String>,
    pub description: String,
    pub created_by: String,
}

/// A change to a subscription: each member given is set.
#[derive(Debug, Clone, Default)]
pub struct Change {
    pub url: Option<String>,
    pub events: Option<Vec<String>>,
    /// `Some(None)`: no filter.
    pub filter: Option<Option<String>>,
    pub description: Option<String>,
    pub enabled: Option<bool>,
}

fn invalid(message: impl Into<String>, hint: &str) -> ToolError {
    ToolError::new(INVALID_INPUT, message).with_hint(hint)
}

fn not_found(id: i64) -> ToolError {
    ToolError::not_found(format!("No webhook {id} in this workspace")).with_hint(
        "List the workspace's webhooks with GET /api/v1/webhooks (`jility webhook list`).",
    )
}

/// `events` checked: each a known type, each once, in the listed order.
pub fn check_events(events: &[String]) -> Result<Vec<String>, ToolError> {
    let mut out = Vec::new();
    for event in events {
        let event = event.trim();
        if event == "*" {
            return Ok(Vec::new());
        }
        if !EVENT_TYPES.contains(&event) {
            return Err(invalid(
                format!(
                    "'{}' is not an event type",
                    mcp_common_core::text::clip(event, 60)
                ),
                &format!("Choose among {} (or `*` for all).", EVENT_TYPES.join(", ")),
            ));
        }
    }
    for known in EVENT_TYPES {
        if events.iter().any(|e| e.trim() == known) {
            out.push(known.to_string());
        }
    }
    Ok(out)
}

/// A description checked: control characters dropped, at most so long.
pub fn check_description(text: &str) -> Result<String, ToolError> {
    let text: String = text.trim().chars().filter(|c| !c.is_control()).collect();
    if text.chars().count() > MAX_DESCRIPTION_CHARS {
        return Err(invalid(
            format!("A description has at most {MAX_DESCRIPTION_CHARS} characters"),
            "Say in a few words what receives these events.",
        ));
    }
    Ok(text)
}

/// A filter's length checked (whether it reads is the tracker's to say).
pub fn check_filter_length(text: &str) -> Result<(), ToolError> {
    if text.chars().count() > MAX_FILTER_CHARS {
        return Err(invalid(
            format!("A filter has at most {MAX_FILTER_CHARS} characters"),
            "Filter with a few qualifiers, such as `label:backend status:review`.",
        ));
    }
    Ok(())
}

const COLUMNS: &str = "w.id, w.url, w.events, w.filter, w.description, w.enabled, \
     w.disabled_reason, to_char(w.failing_since AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'), \
     CASE WHEN w.previous_until > now() THEN to_char(w.previous_until AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"') END, \
     (SELECT count(*) FROM webhook_deliveries d WHERE d.webhook_id = w.id AND d.state = 'pending'), \
     w.created_by, to_char(w.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')";

fn webhook(row: &Row) -> Result<Webhook, ToolError> {
    Ok(Webhook {
        id: row.try_get(0).map_err(db)?,
        url: row.try_get(1).map_err(db)?,
        events: row.try_get(2).map_err(db)?,
        filter: row.try_get(3).map_err(db)?,
        description: row.try_get(4).map_err(db)?,
        enabled: row.try_get(5).map_err(db)?,
        disabled_reason: row.try_get(6).map_err(db)?,
        failing_since: row.try_get(7).map_err(db)?,
        previous_secret_until: row.try_get(8).map_err(db)?,
        pending_deliveries: row.try_get(9).map_err(db)?,
        created_by: row.try_get(10).map_err(db)?,
        created_at: row.try_get(11).map_err(db)?,
    })
}

const DELIVERY_COLUMNS: &str = "d.id, d.webhook_id, d.message_id, d.event_type, d.ticket, d.state, d.attempts, \
     to_char(d.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'), \
     to_char(d.last_attempt_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'), \
     CASE WHEN d.state = 'pending' THEN to_char(d.next_attempt_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"') END, \
     d.response_status, d.response_excerpt, d.error, d.duration_ms, \
     to_char(d.delivered_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')";

fn delivery(row: &Row) -> Result<Delivery, ToolError> {
    Ok(Delivery {
        id: row.try_get(0).map_err(db)?,
        webhook_id: row.try_get(1).map_err(db)?,
        message_id: row.try_get(2).map_err(db)?,
        event_type: row.try_get(3).map_err(db)?,
        ticket: row.try_get(4).map_err(db)?,
        state: row.try_get(5).map_err(db)?,
        attempts: row.try_get(6).map_err(db)?,
        created_at: row.try_get(7).map_err(db)?,
        last_attempt_at: row.try_get(8).map_err(db)?,
        next_attempt_at: row.try_get(9).map_err(db)?,
        response_status: row.try_get(10).map_err(db)?,
        response_excerpt: row.try_get(11).map_err(db)?,
        error: row.try_get(12).map_err(db)?,
        duration_ms: row.try_get(13).map_err(db)?,
        delivered_at: row.try_get(14).map_err(db)?,
    })
}

/// The subscriptions of a database, one workspace at a time.
#[derive(Clone)]
pub struct Subscriptions {
    db: PgDatabase,
}

impl Subscriptions {
    pub fn new(db: &PgDatabase) -> Self {
        Self { db: db.clone() }
    }

    /// Keep `new` (checked by the caller) with a new secret: the subscription and, this
    /// once, its secret. Refused past [`MAX_WEBHOOKS`] (under the workspace's row lock, so
    /// concurrent creations cannot pass it together).
    pub fn create(
        &self,
        workspace_id: i64,
        new: &NewWebhook,
    ) -> Result<(Webhook, String), ToolError> {
        let secret = new_secret()?;
        self.db.with_client(|client| {
            let mut tx = client.transaction().map_err(db)?;
            tx.query_one(
                "SELECT id FROM workspaces WHERE id = $1 FOR UPDATE",
                &[&workspace_id],
            )
            .map_err(db)?;
            let count: i64 = tx
                .query_one(
                    "SELECT count(*) FROM webhooks WHERE workspace_id = $1",
                    &[&workspace_id],
                )
                .map_err(db)?
                .try_get(0)
                .map_err(db)?;
            if count >= MAX_WEBHOOKS {
                return Err(ToolError::new(
                    ALREADY_EXISTS,
                    format!("This workspace has {MAX_WEBHOOKS} webhooks, the most it keeps"),
                )
                .with_hint("Delete a webhook no longer used (DELETE /api/v1/webhooks/{id}), or send more event types to one."));
            }
            let id: i64 = tx
                .query_one(
                    "INSERT INTO webhooks (workspace_id, url, events, filter, description, secret, created_by) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id",
                    &[
                        &workspace_id,
                        &new.url,
                        &new.events,
                        &new.filter,
                        &new.description,
                        &secret,
                        &new.created_by,
                    ],
                )
                .map_err(db)?
                .try_get(0)
                .map_err(db)?;
            tx.commit().map_err(db)?;
            Ok(id)
        })
        .and_then(|id| Ok((self.get(workspace_id, id)?, secret)))
    }

    /// The workspace's subscriptions, oldest first.
    pub fn list(&self, workspace_id: i64) -> Result<Vec<Webhook>, ToolError> {
        self.db.with_client(|client| {
            client
                .query(
                    &format!(
                        "SELECT {COLUMNS} FROM webhooks w WHERE w.workspace_id = $1 ORDER BY w.id"
                    ),
                    &[&workspace_id],
                )
                .map_err(db)?
                .iter()
                .map(webhook)
                .collect()
        })
    }

    /// Subscription `id` of the workspace.
    pub fn get(&self, workspace_id: i64, id: i64) -> Result<Webhook, ToolError> {
        self.db.with_client(|client| {
            let rows = client
                .query(
                    &format!(
                        "SELECT {COLUMNS} FROM webhooks w WHERE w.workspace_id = $1 AND w.id = $2"
                    ),
                    &[&workspace_id, &id],
                )
                .map_err(db)?;
            rows.first()
                .map(webhook)
                .transpose()?
                .ok_or_else(|| not_found(id))
        })
    }

    /// Apply `change` (checked by the caller) to subscription `id`. Enabling it again clears
    /// its failures.
    pub fn update(
        &self,
        workspace_id: i64,
        id: i64,
        change: &Change,
    ) -> Result<Webhook, ToolError> {
        let (set_filter, filter) = match &change.filter {
            Some(filter) => (true, filter.clone()),
            None => (false, None),
        };
        let updated = self.db.with_client(|client| {
            client
                .execute(
                    "UPDATE webhooks SET \
                       url = coalesce($3, url), \
                       events = coalesce($4, events), \
                       filter = CASE WHEN $5 THEN $6 ELSE filter END, \
                       description = coalesce($7, description), \
                       enabled = coalesce($8, enabled), \
                       disabled_reason = CASE WHEN $8 IS NULL THEN disabled_reason WHEN $8 THEN NULL ELSE 'disabled by a person' END, \
                       failing_since = CASE WHEN $8 THEN NULL ELSE failing_since END \
                     WHERE workspace_id = $1 AND id = $2",
                    &[
                        &workspace_id,
                        &id,
                        &change.url,
                        &change.events,
                        &set_filter,
                        &filter,
                        &change.description,
                        &change.enabled,
                    ],
                )
                .map_err(db)
        })?;
        if updated == 0 {
            return Err(not_found(id));
        }
        self.get(workspace_id, id)
    }

    /// Forget subscription `id` and its deliveries: what it was.
    pub fn delete(&self, workspace_id: i64, id: i64) -> Result<Webhook, ToolError> {
        let found = self.get(workspace_id, id)?;
        let deleted = self.db.with_client(|client| {
            client
                .execute(
                    "DELETE FROM webhooks WHERE workspace_id = $1 AND id = $2",
                    &[&workspace_id, &id],
                )
                .map_err(db)
        })?;
        if deleted == 0 {
            return Err(not_found(id));
        }
        Ok(found)
    }

    /// A new secret for subscription `id`; the old one is still signed with (a second
    /// signature) for `keep_hours`. The subscription and, this once, the new secret.
    pub fn rotate(
        &self,
        workspace_id: i64,
        id: i64,
        keep_hours: i64,
    ) -> Result<(Webhook, String), ToolError> {
        let secret = new_secret()?;
        let updated = self.db.with_client(|client| {
            client
                .execute(
                    "UPDATE webhooks SET previous_secret = secret, secret = $3, \
                       previous_until = now() + make_interval(hours => $4::int) \
                     WHERE workspace_id = $1 AND id = $2",
                    &[&workspace_id, &id, &secret, &(keep_hours as i32)],
                )
                .map_err(db)
        })?;
        if updated == 0 {
            return Err(not_found(id));
        }
        Ok((self.get(workspace_id, id)?, secret))
    }

    /// One page of subscription `id`'s deliveries, newest first, older than `before`
    /// (a delivery's id): the page and whether older ones follow.
    pub fn deliveries(
        &self,
        workspace_id: i64,
        id: i64,
        before: Option<i64>,
        limit: i64,
    ) -> Result<(Vec<Delivery>, bool), ToolError> {
        self.get(workspace_id, id)?;
        let before = before.unwrap_or(i64::MAX);
        let limit = limit.clamp(1, MAX_PAGE);
        self.db.with_client(|client| {
            let rows = client
                .query(
                    &format!(
                        "SELECT {DELIVERY_COLUMNS} FROM webhook_deliveries d \
                         WHERE d.workspace_id = $1 AND d.webhook_id = $2 AND d.id < $3 \
                         ORDER BY d.id DESC LIMIT $4"
                    ),
                    &[&workspace_id, &id, &before, &(limit + 1)],
                )
                .map_err(db)?;
            let more = rows.len() as i64 > limit;
            let page = rows
                .iter()
                .take(limit as usize)
                .map(delivery)
                .collect::<Result<Vec<_>, _>>()?;
            Ok((page, more))
        })
    }

    /// Send delivery `delivery_id` of subscription `id` again, with its message id and body,
    /// as soon as the deliveries of its ticket before it are done.
    pub fn redeliver(
        &self,
        workspace_id: i64,
        id: i64,
        delivery_id: i64,
    ) -> Result<Delivery, ToolError> {
        self.get(workspace_id, id)?;
        self.db.with_client(|client| {
            let rows = client
                .query(
                    &format!(
                        "UPDATE webhook_deliveries d SET state = 'pending', next_attempt_at = now(), \
                           first_attempt_at = NULL, leased_until = NULL \
                         WHERE d.workspace_id = $1 AND d.webhook_id = $2 AND d.id = $3 \
                         RETURNING {DELIVERY_COLUMNS}"
                    ),
                    &[&workspace_id, &id, &delivery_id],
                )
                .map_err(db)?;
            rows.first().map(delivery).transpose()?.ok_or_else(|| {
                ToolError::not_found(format!("Webhook {id} has no delivery {delivery_id}"))
                    .with_hint("List its deliveries with GET /api/v1/webhooks/{id}/deliveries.")
            })
        })
    }

    /// Queue a test event for subscription `id` (sent whatever event types it wants).
    pub fn test_event(&self, workspace_id: i64, id: i64, by: &str) -> Result<Delivery, ToolError> {
        self.get(workspace_id, id)?;
        let message_id = new_message_id()?;
        let body = serde_json::json!({
            "type": TEST_EVENT,
            "timestamp": chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            "data": {"webhook_id": id, "sent_by": by, "message": "A test event from jility: this subscription reaches its receiver."},
        })
        .to_string();
        self.db.with_client(|client| {
            let row = client
                .query_one(
                    &format!(
                        "WITH d AS (INSERT INTO webhook_deliveries (workspace_id, webhook_id, message_id, event_type, body) \
                           VALUES ($1, $2, $3, $4, $5) RETURNING *) \
                         SELECT {DELIVERY_COLUMNS} FROM d"
                    ),
                    &[&workspace_id, &id, &message_id, &TEST_EVENT, &body],
                )
                .map_err(db)?;
            delivery(&row)
        })
    }

    /// Deliveries waiting, and changes not yet fanned out, in the whole database: the
    /// backlog a scrape of `/metrics` reports.
    pub fn backlog(&self) -> Result<(i64, i64), ToolError> {
        self.db.with_client(|client| {
            let row = client
                .query_one(
                    "SELECT (SELECT count(*) FROM webhook_deliveries WHERE state = 'pending'), \
                            (SELECT count(*) FROM webhook_outbox)",
                    &[],
                )
                .map_err(db)?;
            Ok((row.try_get(0).map_err(db)?, row.try_get(1).map_err(db)?))
        })
    }
}
