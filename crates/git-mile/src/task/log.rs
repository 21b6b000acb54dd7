//! A task's events as its ref holds them, for `git_mile.log`: every event about the task,
//! and also those this version cannot decode (a later upstream's, or damaged), shown as
//! unknown with what can be read of them, never dropped. Nothing is replayed.

use std::collections::{HashSet, VecDeque};

use chrono::{DateTime, Utc};
use gix::ObjectId;
use serde_json::Value;
use uuid::Uuid;

use super::event::{Actor, Decoded, TaskEvent, decode};
use crate::store::{GitStore, StoreError, StoreResult};

/// An event this version cannot decode: what can be read of its JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unknown {
    /// The commit that holds it (abbreviated).
    pub commit: String,
    pub id: Option<String>,
    pub lamport: u64,
    pub ts: Option<DateTime<Utc>>,
    pub actor: Option<Actor>,
    /// Its `kind.type`, when it has one.
    pub kind: Option<String>,
    /// Its `schema`, when it has one.
    pub schema: Option<String>,
    /// Why it cannot be read.
    pub why: String,
}

/// One event of a task's ref.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Logged {
    Event(TaskEvent),
    Unknown(Unknown),
}

impl Logged {
    /// Its place in the order of replay: (lamport, time, id).
    pub fn stamp(&self) -> (u64, Option<DateTime<Utc>>, String) {
        match self {
            Logged::Event(e) => (e.lamport, Some(e.ts), e.id.hyphenated().to_string()),
            Logged::Unknown(u) => (u.lamport, u.ts, u.id.clone().unwrap_or_default()),
        }
    }
}

fn text(value: &Value, key: &str) -> Option<String> {
    value.get(key).and_then(Value::as_str).map(str::to_string)
}

/// What can be read of an event that does not decode.
fn unknown(commit: ObjectId, body: &str, why: String) -> Unknown {
    let value: Value = serde_json::from_str(body).unwrap_or(Value::Null);
    Unknown {
        commit: commit.to_hex_with_len(12).to_string(),
        id: text(&value, "id"),
        lamport: value.get("lamport").and_then(Value::as_u64).unwrap_or(0),
        ts: text(&value, "ts")
            .and_then(|t| DateTime::parse_from_rfc3339(&t).ok())
            .map(|t| t.with_timezone(&Utc)),
        actor: value
            .get("actor")
            .and_then(|a| serde_json::from_value(a.clone()).ok()),
        kind: value.get("kind").and_then(|k| text(k, "type")),
        schema: text(&value, "schema"),
        why,
    }
}

/// Every event about task `id` reachable from `tip` (each commit once, merges included),
/// those that do not decode as [`Logged::Unknown`], in the order of replay (lamport, time,
/// id; an unknown event without a time first among its lamport).
pub fn events(store: &GitStore, id: Uuid, tip: ObjectId) -> StoreResult<Vec<Logged>> {
    let repo = store.repository();
    let mut out = Vec::new();
    let mut seen = HashSet::from([tip]);
    let mut queue = VecDeque::from([tip]);
    while let Some(oid) = queue.pop_front() {
        let commit = repo
            .find_commit(oid)
            .map_err(|e| StoreError::Git(crate::quote::excerpt(&e.to_string())))?;
        let message = commit.message_raw_sloppy();
        match decode(message) {
            Decoded::NotAnEvent => {}
            Decoded::Event(event) => {
                if event.task == id {
                    out.push(Logged::Event(*event));
                }
            }
            Decoded::Bad(why) => {
                let raw = String::from_utf8_lossy(message);
                let body = raw.split_once("\n\n").map_or("", |(_, b)| b);
                let event = unknown(oid, body, why);
                // Another task's, as far as can be told: passed over as upstream does.
                let task = serde_json::from_str::<Value>(body)
                    .ok()
                    .and_then(|v| text(&v, "task"));
                if task.is_none_or(|t| t == id.hyphenated().to_string()) {
                    out.push(Logged::Unknown(event));
                }
            }
        }
        for parent in commit.parent_ids() {
            let parent = parent.detach();
            if seen.insert(parent) {
                queue.push_back(parent);
            }
        }
    }
    out.sort_by_key(Logged::stamp);
    Ok(out)
}
