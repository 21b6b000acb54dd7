//! The fan-out: the outbox's changes (written by a trigger in each change's transaction)
//! become deliveries, one per subscription that wants the change, each with the body it
//! will carry on every attempt: the event, the change, and the ticket as the API answers
//! it now.
//!
//! One process fans out at a time (a transaction-scoped advisory lock; the others skip),
//! reading the outbox in id order: a workspace's writers take turns, so its changes' ids
//! are in commit order, and so are the deliveries made of them — the order a ticket's
//! deliveries keep.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use jility_core::tracker::{Observed, Tracker};
use jility_pg::store::{PgDatabase, PgStore, Prepared, db};
use mcp_common_core::{CursorKey, ToolError, text::clip};
use serde_json::json;

use crate::kinds::{event_type, wants};
use crate::signing::new_message_id;

/// The advisory lock of the fan-out (class, key): one process at a time.
const FANOUT_LOCK: (i32, i32) = (0x6a68_6f6f, 1);
/// Changes fanned out per transaction.
pub const BATCH: i64 = 200;
/// Longest old or new value of a change a body carries, in characters (a description's
/// whole text is in the ticket).
const MAX_VALUE_CHARS: usize = 2_000;

/// One change of the outbox.
struct Pending {
    outbox_id: i64,
    change_id: i64,
    workspace_id: i64,
    workspace: String,
    ticket_id: i64,
    uuid: String,
    key: String,
    number: i64,
    change_type: String,
    old_value: Option<String>,
    new_value: Option<String>,
    detail: Option<String>,
    message: Option<String>,
    changed_by: String,
    changed_at: String,
}

/// A live subscription, as the fan-out needs it.
struct Subscriber {
    id: i64,
    workspace_id: i64,
    events: Vec<String>,
    filter: Option<String>,
    owner: String,
}

/// The trackers the fan-out reads tickets with, one per workspace, kept between batches.
#[derive(Default)]
pub struct Readers {
    trackers: HashMap<i64, Tracker<PgStore>>,
}

impl Readers {
    fn tracker(
        &mut self,
        db: &PgDatabase,
        workspace_id: i64,
    ) -> Result<&mut Tracker<PgStore>, ToolError> {
        if !self.trackers.contains_key(&workspace_id) {
            if self.trackers.len() >= 256 {
                self.trackers.clear();
            }
            let store = PgStore::open(db, workspace_id)?;
            // Its cursors never leave this module: any key will do.
            let key = CursorKey::derive("jility-hooks readers", &workspace_id.to_le_bytes());
            self.trackers.insert(
                workspace_id,
                Tracker::new(store, PathBuf::from("/nonexistent"), key),
            );
        }
        self.trackers
            .get_mut(&workspace_id)
            .ok_or_else(|| ToolError::internal("no tracker"))
    }
}

/// Fan out one batch of the outbox in `tx` (which the caller commits; it does not wait for
/// the disk: the deliveries and the outbox rows they replace commit together; lost together in
/// a crash, the rows are fanned out again): how many changes it took (0: none waiting, or
/// another process is fanning out), and how many deliveries it made of them.
pub fn fan_out(
    tx: &mut postgres::Transaction<'_>,
    cache: &mut Prepared<'_>,
    db: &PgDatabase,
    readers: &mut Readers,
) -> Result<(usize, usize), ToolError> {
    // The transaction does not wait for the disk (`SET LOCAL`, in the same trip).
    let lock = cache.get(
        tx,
        "SELECT pg_try_advisory_xact_lock($1, $2), \
                set_config('synchronous_commit', 'off', true)",
    )?;
    let locked: bool = tx
        .query_one(&lock, &[&FANOUT_LOCK.0, &FANOUT_LOCK.1])
        .map_err(db_err)?
        .try_get(0)
        .map_err(db_err)?;
    if !locked {
        return Ok((0, 0));
    }
    let waiting = cache.get(
        tx,
        // Each row's change, ticket, project and workspace looked up by key (`OFFSET 0`
        // keeps the lookups per row): the table's size as the planner guesses it (a
        // queue's dead rows, no statistics) must not turn them into scans of every
        // ticket.
        "SELECT o.id, o.workspace_id, x.name, o.ticket_id, x.uuid, x.key, x.number, \
                x.change_type, x.old_value, x.new_value, x.detail, x.message, x.changed_by, x.changed_at, o.change_id \
         FROM (SELECT * FROM webhook_outbox ORDER BY id LIMIT $1) o \
         CROSS JOIN LATERAL ( \
           SELECT ws.name, t.uuid, p.key, t.number, c.change_type, c.old_value, c.new_value, \
                  c.detail, c.message, c.changed_by, c.changed_at \
           FROM workspaces ws, ticket_changes c, tickets t, projects p \
           WHERE ws.id = o.workspace_id AND c.id = o.change_id \
             AND t.workspace_id = o.workspace_id AND t.id = o.ticket_id \
             AND p.workspace_id = t.workspace_id AND p.id = t.project_id \
           OFFSET 0) x \
         ORDER BY o.id",
    )?;
    let rows = tx.query(&waiting, &[&BATCH]).map_err(db_err)?;
    if rows.is_empty() {
        return Ok((0, 0));
    }
    let mut pending = Vec::with_capacity(rows.len());
    for row in &rows {
        pending.push(Pending {
            outbox_id: row.try_get(0).map_err(db_err)?,
            workspace_id: row.try_get(1).map_err(db_err)?,
            workspace: row.try_get(2).map_err(db_err)?,
            ticket_id: row.try_get(3).map_err(db_err)?,
            uuid: row.try_get(4).map_err(db_err)?,
            key: row.try_get(5).map_err(db_err)?,
            number: row.try_get(6).map_err(db_err)?,
            change_type: row.try_get(7).map_err(db_err)?,
            old_value: row.try_get(8).map_err(db_err)?,
            new_value: row.try_get(9).map_err(db_err)?,
            detail: row.try_get(10).map_err(db_err)?,
            message: row.try_get(11).map_err(db_err)?,
            changed_by: row.try_get(12).map_err(db_err)?,
            changed_at: row.try_get(13).map_err(db_err)?,
            change_id: row.try_get(14).map_err(db_err)?,
        });
    }
    let workspaces: Vec<i64> = {
        let mut ids: Vec<i64> = pending.iter().map(|p| p.workspace_id).collect();
        ids.sort_unstable();
        ids.dedup();
        ids
    };
    let mut subscribers: BTreeMap<i64, Vec<Subscriber>> = BTreeMap::new();
    let live = cache.get(
        tx,
        "SELECT id, workspace_id, events, filter, created_by FROM webhooks \
         WHERE enabled AND workspace_id = ANY($1) ORDER BY id",
    )?;
    for row in tx.query(&live, &[&workspaces]).map_err(db_err)? {
        let subscriber = Subscriber {
            id: row.try_get(0).map_err(db_err)?,
            workspace_id: row.try_get(1).map_err(db_err)?,
            events: row.try_get(2).map_err(db_err)?,
            filter: row.try_get(3).map_err(db_err)?,
            owner: row.try_get(4).map_err(db_err)?,
        };
        subscribers
            .entry(subscriber.workspace_id)
            .or_default()
            .push(subscriber);
    }
    let mut deliveries = Deliveries::default();
    for (workspace_id, subs) in &subscribers {
        let changes: Vec<&Pending> = pending
            .iter()
            .filter(|p| p.workspace_id == *workspace_id)
            .collect();
        plan(db, readers, *workspace_id, subs, &changes, &mut deliveries)?;
    }
    let outbox_ids: Vec<i64> = pending.iter().map(|p| p.outbox_id).collect();
    let insert = cache.get(
        tx,
        "INSERT INTO webhook_deliveries (workspace_id, webhook_id, message_id, event_type, ticket_id, ticket, body) \
         SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[], $5::bigint[], $6::text[], $7::text[])",
    )?;
    tx.execute(
        &insert,
        &[
            &deliveries.workspace_id,
            &deliveries.webhook_id,
            &deliveries.message_id,
            &deliveries.event_type,
            &deliveries.ticket_id,
            &deliveries.ticket,
            &deliveries.body,
        ],
    )
    .map_err(db_err)?;
    let taken = cache.get(tx, "DELETE FROM webhook_outbox WHERE id = ANY($1)")?;
    tx.execute(&taken, &[&outbox_ids]).map_err(db_err)?;
    Ok((pending.len(), deliveries.body.len()))
}

fn db_err(err: postgres::Error) -> ToolError {
    db(err).into()
}

/// The deliveries a batch makes, as the columns of one insert.
#[derive(Default)]
struct Deliveries {
    workspace_id: Vec<i64>,
    webhook_id: Vec<i64>,
    message_id: Vec<String>,
    event_type: Vec<String>,
    ticket_id: Vec<i64>,
    ticket: Vec<String>,
    body: Vec<String>,
}

/// The deliveries of one workspace's `changes` to its subscribers.
fn plan(
    db: &PgDatabase,
    readers: &mut Readers,
    workspace_id: i64,
    subscribers: &[Subscriber],
    changes: &[&Pending],
    out: &mut Deliveries,
) -> Result<(), ToolError> {
    let tracker = readers.tracker(db, workspace_id)?;
    let mut uuids: Vec<String> = changes.iter().map(|c| c.uuid.clone()).collect();
    uuids.sort();
    uuids.dedup();
    let observed: HashMap<String, Observed> = uuids
        .iter()
        .cloned()
        .zip(tracker.observe(&uuids)?)
        .filter_map(|(uuid, found)| found.map(|o| (uuid, o)))
        .collect();
    // Which tickets each filtered subscription keeps, asked once per project.
    let mut kept: HashMap<i64, Vec<(String, i64)>> = HashMap::new();
    for subscriber in subscribers {
        let Some(filter) = &subscriber.filter else {
            continue;
        };
        let mut by_key: BTreeMap<&str, Vec<i64>> = BTreeMap::new();
        for change in changes {
            by_key
                .entry(change.key.as_str())
                .or_default()
                .push(change.number);
        }
        let mut matched = Vec::new();
        for (key, mut numbers) in by_key {
            numbers.sort_unstable();
            numbers.dedup();
            match tracker.matching(&subscriber.owner, filter, key, &numbers) {
                Ok(found) => matched.extend(found.into_iter().map(|n| (key.to_string(), n))),
                Err(err) => tracing::warn!(
                    webhook_id = subscriber.id,
                    error = %err.message,
                    "a webhook's filter no longer reads; its subscription gets no ticket events until it is fixed"
                ),
            }
        }
        kept.insert(subscriber.id, matched);
    }
    for change in changes {
        // A new ticket's first description is part of its creation, not an edit.
        if change.change_type == "description_changed"
            && change.detail.as_deref() == Some("created")
        {
            continue;
        }
        let event = event_type(&change.change_type);
        let ticket = observed.get(&change.uuid);
        let body = json!({
            "type": event,
            "timestamp": change.changed_at,
            "data": {
                "workspace": change.workspace,
                "change": {
                    "id": change.change_id,
                    "type": change.change_type,
                    "old_value": change.old_value.as_deref().map(|v| clip(v, MAX_VALUE_CHARS)),
                    "new_value": change.new_value.as_deref().map(|v| clip(v, MAX_VALUE_CHARS)),
                    "detail": change.detail,
                    "message": change.message,
                    "changed_by": change.changed_by,
                    "changed_at": change.changed_at,
                },
                "ticket": ticket.map(|o| &o.ticket),
                "deleted": ticket.is_some_and(|o| o.deleted),
            }
        })
        .to_string();
        let message_id = new_message_id()?;
        let number = format!("{}-{}", change.key, change.number);
        for subscriber in subscribers {
            if !wants(&subscriber.events, event) {
                continue;
            }
            // A deleted ticket matches no query: a filtered subscription that asks for
            // deletions is told of every one.
            if subscriber.filter.is_some()
                && event != "ticket.deleted"
                && !kept.get(&subscriber.id).is_some_and(|k| {
                    k.iter()
                        .any(|(key, n)| *key == change.key && *n == change.number)
                })
            {
                continue;
            }
            out.workspace_id.push(workspace_id);
            out.webhook_id.push(subscriber.id);
            out.message_id.push(message_id.clone());
            out.event_type.push(event.to_string());
            out.ticket_id.push(change.ticket_id);
            out.ticket.push(number.clone());
            out.body.push(body.clone());
        }
    }
    Ok(())
}
