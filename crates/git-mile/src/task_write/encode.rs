//! Upstream git-mile's encoding of a task event, byte for byte as its store writes one
//! (`git-mile-store-git`'s `append_event`, `git-mile-core`'s `Event`):
//!
//! - the commit message is `git-mile-event: <event id>`, a blank line, and the event as
//!   `serde_json::to_string_pretty` prints it (two spaces of indentation, no newline at the
//!   end);
//! - the event's fields in the order of upstream's struct: `schema`, `id`, `lamport`, `ts`,
//!   `actor {name, email}`, `task`, `kind {type, …}` (the kind's fields in upstream's order,
//!   an absent value `null`: [`TaskChange`]'s serialization);
//! - `ts` as the `time` crate's RFC 3339 (`time::serde::rfc3339`): UTC as `Z`, the fraction
//!   of a second with its trailing zeros dropped, none when whole;
//! - ids are UUIDv7 (`Uuid::now_v7`), lowercase hyphenated.

use chrono::{DateTime, Timelike as _, Utc};
use serde::Serialize;
use uuid::Uuid;

use crate::task::event::{Actor, PREFIX, SCHEMA, TaskChange};

/// One event as upstream serializes it.
#[derive(Debug, Clone, Serialize)]
pub struct Envelope<'a> {
    pub schema: &'static str,
    pub id: Uuid,
    pub lamport: u64,
    pub ts: String,
    pub actor: &'a Actor,
    pub task: Uuid,
    pub kind: &'a TaskChange,
}

/// A fresh id as upstream makes them (`TaskId::new`, `EventId::new`): a UUIDv7.
pub fn new_id() -> Uuid {
    Uuid::now_v7()
}

/// `ts` as `time::serde::rfc3339` writes it.
pub fn rfc3339(ts: DateTime<Utc>) -> String {
    let mut text = ts.format("%Y-%m-%dT%H:%M:%S").to_string();
    let nanos = ts.nanosecond() % 1_000_000_000;
    if nanos != 0 {
        let digits = format!("{nanos:09}");
        text.push('.');
        text.push_str(digits.trim_end_matches('0'));
    }
    text.push('Z');
    text
}

impl<'a> Envelope<'a> {
    pub fn new(
        id: Uuid,
        lamport: u64,
        ts: DateTime<Utc>,
        actor: &'a Actor,
        task: Uuid,
        kind: &'a TaskChange,
    ) -> Self {
        Self {
            schema: SCHEMA,
            id,
            lamport,
            ts: rfc3339(ts),
            actor,
            task,
            kind,
        }
    }

    /// The commit message that carries this event.
    pub fn message(&self) -> Result<String, serde_json::Error> {
        Ok(format!(
            "{PREFIX}{}\n\n{}",
            self.id,
            serde_json::to_string_pretty(self)?
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone as _;

    #[test]
    fn times_are_written_as_upstream_writes_them() {
        let at = |nanos| Utc.timestamp_opt(1_762_600_000, nanos).unwrap();
        assert_eq!(rfc3339(at(0)), "2025-11-08T11:06:40Z");
        assert_eq!(rfc3339(at(123_456_789)), "2025-11-08T11:06:40.123456789Z");
        assert_eq!(rfc3339(at(120_000_000)), "2025-11-08T11:06:40.12Z");
        assert_eq!(rfc3339(at(5_000)), "2025-11-08T11:06:40.000005Z");
    }

    #[test]
    fn messages_are_upstreams_pretty_json() {
        let actor = Actor {
            name: "alice".into(),
            email: "alice@example.com".into(),
        };
        let task = Uuid::parse_str("019a5b2c-1111-7000-8000-000000000001").unwrap();
        let id = Uuid::parse_str("019a5b2c-eeee-7000-8000-000000000001").unwrap();
        let kind = TaskChange::TaskCreated {
            title: "T \"q\"".into(),
            labels: vec!["a".into(), "b".into()],
            assignees: vec![],
            description: None,
            state: Some("state/todo".into()),
            state_kind: Some("todo".into()),
        };
        let at = Utc.timestamp_opt(1_762_600_000, 500_000_000).unwrap();
        let message = Envelope::new(id, 1, at, &actor, task, &kind)
            .message()
            .unwrap();
        assert_eq!(
            message,
            r#"git-mile-event: 019a5b2c-eeee-7000-8000-000000000001

{
  "schema": "git-mile-event@1",
  "id": "019a5b2c-eeee-7000-8000-000000000001",
  "lamport": 1,
  "ts": "2025-11-08T11:06:40.5Z",
  "actor": {
    "name": "alice",
    "email": "alice@example.com"
  },
  "task": "019a5b2c-1111-7000-8000-000000000001",
  "kind": {
    "type": "taskCreated",
    "title": "T \"q\"",
    "labels": [
      "a",
      "b"
    ],
    "assignees": [],
    "description": null,
    "state": "state/todo",
    "state_kind": "todo"
  }
}"#
        );
        let cleared = Envelope::new(id, 2, at, &actor, task, &TaskChange::TaskStateCleared)
            .message()
            .unwrap();
        assert!(
            cleared.ends_with("\"kind\": {\n    \"type\": \"taskStateCleared\"\n  }\n}"),
            "{cleared}"
        );
        // It reads back as the reader decodes upstream's events.
        match crate::task::event::decode(message.as_bytes()) {
            crate::task::event::Decoded::Event(event) => {
                assert_eq!(event.kind, kind);
                assert_eq!(event.ts, at);
                assert_eq!(event.lamport, 1);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(new_id().get_version_num(), 7);
    }
}
