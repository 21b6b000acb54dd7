//! Event logs: `git_mile.log` and `git mile log` list the events of one issue, milestone or
//! upstream task, newest first: who (the actor), when, what changed (the event's fields, long
//! texts cut), paged by a sealed cursor as listings are.
//!
//! The order is the order of replay, reversed: for issues and milestones (time, event id), for
//! tasks (lamport, time, event id), as upstream orders them. A task's events this version
//! cannot decode (a later upstream's) are listed too, as `unknown`, with what can be read of
//! them: nothing in a ref is dropped from its log.

use chrono::{DateTime, Utc};
use mcp_common::page::{CursorError, CursorKey, Cursors};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::catalog::Catalog;
use crate::listing::{DEFAULT_LIMIT, ListError, MAX_LIMIT, Target};
use crate::model::Kind;
use crate::ops::{self, OpError};
use crate::task::TaskLookup;
use crate::task::log::Logged;

/// The scope log cursors are bound under (the CLI's and the server's alike).
const SCOPE: &str = "git_mile.log";
/// The longest text of an entry, in characters (`git_mile.show` has them whole).
pub const MAX_TEXT: usize = 200;
/// The most items of a list in an entry (labels added at once…).
pub const MAX_ITEMS: usize = 20;

/// One event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LogEntry {
    /// The event's id.
    pub event: String,
    /// When (RFC 3339); `null` for an unknown event without a readable time.
    pub ts: Option<DateTime<Utc>>,
    /// Who: `name <email>`.
    pub actor: Option<String>,
    /// The event's type (`title_edited`…; for tasks upstream's: `taskTitleSet`…, or
    /// `unknown`).
    #[serde(rename = "type")]
    pub kind: String,
    /// Tasks only: the event's Lamport clock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lamport: Option<u64>,
    /// What changed: the event's fields (texts cut to 200 characters, lists to 20 items).
    pub change: Value,
    /// Whether a text or a list of `change` was cut.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub clipped: bool,
    /// An event this version cannot read: why (it is kept in the ref as it is).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unknown: Option<String>,
}

/// A page of a log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LogPage {
    /// `issue`, `milestone` or `task`.
    pub entity: String,
    /// The full id.
    pub id: String,
    /// How many events the entity has.
    pub total: u64,
    /// Newest first.
    pub events: Vec<LogEntry>,
    #[serde(rename = "nextCursor")]
    pub next_cursor: Option<String>,
}

/// Where an entry falls in the order: (lamport, time, event id).
type Stamp = (u64, Option<DateTime<Utc>>, String);

/// A log request, checked before the repository is read.
pub struct LogPlan {
    /// `None`: whichever kind the id names.
    target: Option<Target>,
    id: String,
    limit: usize,
    cursors: Cursors,
    after: Option<Stamp>,
}

/// Why a log cannot be answered.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    /// A bad `limit` or `cursor`.
    #[error(transparent)]
    Args(ListError),
    #[error(transparent)]
    Op(#[from] OpError),
}

/// The shape a cursor is bound to: the entity and the id as given.
#[derive(Serialize)]
struct Shape<'a> {
    entity: &'a str,
    id: &'a str,
}

impl LogPlan {
    pub fn new(
        target: Option<Target>,
        id: &str,
        limit: Option<&serde_json::Number>,
        cursor: Option<&str>,
        key: &CursorKey,
    ) -> Result<Self, ListError> {
        let limit = match limit {
            None => DEFAULT_LIMIT,
            Some(n) => n
                .as_u64()
                .or_else(|| {
                    n.as_f64()
                        .filter(|f| f.fract() == 0.0 && *f >= 0.0)
                        .map(|f| f as u64)
                })
                .filter(|l| (1..=MAX_LIMIT).contains(l))
                .ok_or_else(|| ListError::Limit(crate::quote::excerpt(&n.to_string())))?,
        };
        let id = id.trim().to_string();
        let cursors = key.bind(
            SCOPE,
            &Shape {
                entity: target.map_or("any", Target::as_str),
                id: &id,
            },
        );
        let after = match cursor.map(str::trim) {
            Some(text) if !text.is_empty() => {
                Some(cursors.decode::<Stamp>(text).map_err(ListError::Cursor)?)
            }
            _ => None,
        };
        Ok(Self {
            target,
            id,
            limit: limit as usize,
            cursors,
            after,
        })
    }

    /// The page, read from `catalog`.
    pub fn run(&self, catalog: &Catalog) -> Result<LogPage, LogError> {
        let (entity, id, entries) = match self.target {
            Some(Target::Entity(kind)) => {
                let (kind, id) = ops::resolve(catalog, &[kind], &self.id)?;
                (
                    kind.as_str(),
                    id.clone(),
                    entity_entries(catalog, kind, &id)?,
                )
            }
            Some(Target::Task) => {
                let id = task_id(catalog, &self.id)?;
                ("task", id.clone(), task_entries(catalog, &id)?)
            }
            None => match ops::resolve(catalog, &[Kind::Issue, Kind::Milestone], &self.id) {
                Ok((kind, id)) => (
                    kind.as_str(),
                    id.clone(),
                    entity_entries(catalog, kind, &id)?,
                ),
                Err(OpError::NotFound { .. }) => {
                    let id = task_id(catalog, &self.id).map_err(|err| match err {
                        OpError::NotFound { id, .. } => OpError::NotFound {
                            what: "issue, milestone or task",
                            id,
                        },
                        other => other,
                    })?;
                    ("task", id.clone(), task_entries(catalog, &id)?)
                }
                Err(err) => return Err(err.into()),
            },
        };
        let total = entries.len() as u64;
        // Newest first; after the cursor, those older than its entry.
        let mut older: Vec<(Stamp, LogEntry)> = entries
            .into_iter()
            .rev()
            .filter(|(stamp, _)| self.after.as_ref().is_none_or(|after| stamp < after))
            .collect();
        let next_cursor = if older.len() > self.limit {
            older.truncate(self.limit);
            older.last().map(|(stamp, _)| self.cursors.encode(stamp))
        } else {
            None
        };
        Ok(LogPage {
            entity: entity.to_string(),
            id,
            total,
            events: older.into_iter().map(|(_, entry)| entry).collect(),
            next_cursor,
        })
    }
}

/// Why a log cursor was refused.
pub fn cursor_refusal(error: CursorError) -> &'static str {
    match error {
        CursorError::Forged => {
            "the cursor is not one this server issued (it is malformed or was altered)"
        }
        CursorError::OtherQuery => {
            "the cursor belongs to another log: pass the same entity and id as the call that returned it, or drop the cursor to start over"
        }
    }
}

/// The task `id` names, readable or not.
fn task_id(catalog: &Catalog, id: &str) -> Result<String, OpError> {
    let tasks = catalog.tasks_named(id)?;
    match tasks.lookup(id) {
        TaskLookup::Found(row) => Ok(row.task.id.clone()),
        TaskLookup::Unreadable(id, _) => Ok(id),
        TaskLookup::NotFound => Err(OpError::NotFound {
            what: "task",
            id: id.trim().to_string(),
        }),
        TaskLookup::Ambiguous(candidates) => Err(OpError::Ambiguous {
            id: id.trim().to_string(),
            candidates,
        }),
    }
}

/// `value` with its texts cut to [`MAX_TEXT`] characters and its lists to [`MAX_ITEMS`]
/// items; whether anything was cut.
fn clip(value: Value, clipped: &mut bool) -> Value {
    match value {
        Value::String(text) if text.chars().count() > MAX_TEXT => {
            *clipped = true;
            Value::String(crate::quote::cut(&text, MAX_TEXT))
        }
        Value::Array(items) => {
            if items.len() > MAX_ITEMS {
                *clipped = true;
            }
            Value::Array(
                items
                    .into_iter()
                    .take(MAX_ITEMS)
                    .map(|v| clip(v, clipped))
                    .collect(),
            )
        }
        Value::Object(fields) => Value::Object(
            fields
                .into_iter()
                .map(|(k, v)| (k, clip(v, clipped)))
                .collect(),
        ),
        other => other,
    }
}

/// An entry of `change` (an event's serialization, its `type` taken out).
fn entry(
    event: String,
    ts: Option<DateTime<Utc>>,
    actor: Option<String>,
    lamport: Option<u64>,
    change: Value,
) -> LogEntry {
    let mut change = change;
    let kind = match change.as_object_mut().and_then(|c| c.remove("type")) {
        Some(Value::String(kind)) => kind,
        _ => "unknown".to_string(),
    };
    let mut clipped = false;
    let change = clip(change, &mut clipped);
    LogEntry {
        event,
        ts,
        actor,
        kind,
        lamport,
        change,
        clipped,
        unknown: None,
    }
}

fn who(name: &str, email: &str) -> String {
    format!("{name} <{email}>")
}

/// The events of an issue or a milestone, oldest first, with their stamps.
fn entity_entries(
    catalog: &Catalog,
    kind: Kind,
    id: &str,
) -> Result<Vec<(Stamp, LogEntry)>, OpError> {
    let store = catalog.store();
    let tip = store.tip(kind, id)?.ok_or_else(|| OpError::NotFound {
        what: kind.as_str(),
        id: id.to_string(),
    })?;
    let mut events = store.events(tip)?;
    events.sort_by(|a, b| (a.ts, &a.event).cmp(&(b.ts, &b.event)));
    events.dedup_by(|a, b| a.event == b.event);
    Ok(events
        .into_iter()
        .map(|e| {
            let stamp = (0, Some(e.ts), e.event.clone());
            let change = serde_json::to_value(&e.change).unwrap_or(Value::Null);
            let actor = who(&e.actor.name, &e.actor.email);
            (stamp, entry(e.event, Some(e.ts), Some(actor), None, change))
        })
        .collect())
}

/// The events of a task, oldest first in upstream's order, with their stamps.
fn task_entries(catalog: &Catalog, id: &str) -> Result<Vec<(Stamp, LogEntry)>, OpError> {
    let store = catalog.store();
    let uuid = uuid::Uuid::parse_str(id).map_err(|_| OpError::NotFound {
        what: "task",
        id: id.to_string(),
    })?;
    let name = crate::task::ref_name(uuid);
    let tip = match store.ref_tip(&name)? {
        crate::store::Tip::At(tip) => tip,
        crate::store::Tip::Missing => {
            return Err(OpError::NotFound {
                what: "task",
                id: id.to_string(),
            });
        }
        crate::store::Tip::Broken(why) => {
            return Err(OpError::Unreadable {
                what: "task",
                id: id.to_string(),
                why,
            });
        }
    };
    let logged = crate::task::log::events(store, uuid, tip)?;
    Ok(logged
        .into_iter()
        .map(|logged| {
            let stamp = logged.stamp();
            let entry = match logged {
                Logged::Event(e) => {
                    let change = serde_json::to_value(&e.kind).unwrap_or(Value::Null);
                    let actor = who(&e.actor.name, &e.actor.email);
                    entry(
                        e.id.hyphenated().to_string(),
                        Some(e.ts),
                        Some(actor),
                        Some(e.lamport),
                        change,
                    )
                }
                Logged::Unknown(u) => {
                    let mut change = serde_json::Map::new();
                    if let Some(kind) = &u.kind {
                        change.insert("type".into(), Value::String(kind.clone()));
                    }
                    if let Some(schema) = &u.schema {
                        change.insert("schema".into(), Value::String(schema.clone()));
                    }
                    change.insert("commit".into(), Value::String(u.commit.clone()));
                    let mut e = entry(
                        u.id.clone().unwrap_or_else(|| u.commit.clone()),
                        u.ts,
                        u.actor.as_ref().map(|a| who(&a.name, &a.email)),
                        Some(u.lamport),
                        Value::Object(change),
                    );
                    e.unknown = Some(crate::quote::cut(&u.why, MAX_TEXT));
                    e
                }
            };
            (stamp, entry)
        })
        .collect())
}
