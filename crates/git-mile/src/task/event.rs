//! The events of upstream git-mile's tasks, as its store writes them: one per commit of
//! `refs/git-mile/tasks/<task-id>`, the commit's message being
//!
//! ```text
//! git-mile-event: <event-id>
//!
//! {"schema": "git-mile-event@1", "id": …, "lamport": …, "ts": …, "actor": {…}, "task": …, "kind": {"type": …, …}}
//! ```
//!
//! (the JSON pretty-printed, the tree empty, author and committer the actor). A commit whose
//! message does not start that way is not an event and is passed over, as upstream does; an
//! event that does not decode, or of another schema, makes its task unreadable (upstream
//! fails to load it too), which listings say.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// The schema of the events this version reads.
pub const SCHEMA: &str = "git-mile-event@1";
/// How the first line of an event's commit message starts.
pub const PREFIX: &str = "git-mile-event: ";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Actor {
    pub name: String,
    pub email: String,
}

/// One event. Fields upstream does not know are ignored, as upstream's decoder does.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct TaskEvent {
    pub schema: String,
    pub id: Uuid,
    /// Lamport clock: the first key of the order of replay (0 for events written before
    /// upstream had it).
    #[serde(default)]
    pub lamport: u64,
    pub ts: DateTime<Utc>,
    pub actor: Actor,
    pub task: Uuid,
    pub kind: TaskChange,
}

/// What an event does. The variant is the JSON's `kind.type` (camelCase); the fields keep
/// their snake_case names. Serialized, it is upstream's encoding of the `kind` object (its
/// `type` first, then the fields in upstream's order, an absent value `null`), which
/// `git_mile.log` shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum TaskChange {
    TaskCreated {
        title: String,
        #[serde(default)]
        labels: Vec<String>,
        #[serde(default)]
        assignees: Vec<String>,
        #[serde(default)]
        description: Option<String>,
        #[serde(default)]
        state: Option<String>,
        /// Upstream's kinds are `done`, `in_progress`, `blocked`, `todo` and `backlog`; any
        /// other is kept as written (a later upstream's) rather than refused.
        #[serde(default)]
        state_kind: Option<String>,
    },
    TaskStateSet {
        state: String,
        #[serde(default)]
        state_kind: Option<String>,
    },
    TaskStateCleared,
    TaskTitleSet {
        title: String,
    },
    TaskDescriptionSet {
        #[serde(default)]
        description: Option<String>,
    },
    LabelsAdded {
        labels: Vec<String>,
    },
    LabelsRemoved {
        labels: Vec<String>,
    },
    AssigneesAdded {
        assignees: Vec<String>,
    },
    AssigneesRemoved {
        assignees: Vec<String>,
    },
    CommentAdded {
        comment_id: Uuid,
        body_md: String,
    },
    CommentUpdated {
        comment_id: Uuid,
        body_md: String,
    },
    ChildLinked {
        parent: Uuid,
        child: Uuid,
    },
    ChildUnlinked {
        parent: Uuid,
        child: Uuid,
    },
    RelationAdded {
        kind: String,
        target: Uuid,
    },
    RelationRemoved {
        kind: String,
        target: Uuid,
    },
}

impl TaskChange {
    /// The event's `type`, as upstream writes it.
    pub fn type_name(&self) -> &'static str {
        match self {
            TaskChange::TaskCreated { .. } => "taskCreated",
            TaskChange::TaskStateSet { .. } => "taskStateSet",
            TaskChange::TaskStateCleared => "taskStateCleared",
            TaskChange::TaskTitleSet { .. } => "taskTitleSet",
            TaskChange::TaskDescriptionSet { .. } => "taskDescriptionSet",
            TaskChange::LabelsAdded { .. } => "labelsAdded",
            TaskChange::LabelsRemoved { .. } => "labelsRemoved",
            TaskChange::AssigneesAdded { .. } => "assigneesAdded",
            TaskChange::AssigneesRemoved { .. } => "assigneesRemoved",
            TaskChange::CommentAdded { .. } => "commentAdded",
            TaskChange::CommentUpdated { .. } => "commentUpdated",
            TaskChange::ChildLinked { .. } => "childLinked",
            TaskChange::ChildUnlinked { .. } => "childUnlinked",
            TaskChange::RelationAdded { .. } => "relationAdded",
            TaskChange::RelationRemoved { .. } => "relationRemoved",
        }
    }
}

/// What one commit's message holds.
#[derive(Debug, PartialEq, Eq)]
pub enum Decoded {
    /// Not an event (no `git-mile-event: ` header): passed over.
    NotAnEvent,
    Event(Box<TaskEvent>),
    /// An event this version cannot read: why.
    Bad(String),
}

/// The event in a commit message, as upstream reads it: the header is everything before the
/// first blank line and must start with [`PREFIX`]; the body is the JSON.
pub fn decode(message: &[u8]) -> Decoded {
    let Ok(text) = std::str::from_utf8(message) else {
        // Upstream reads messages as UTF-8 and passes over those that are not.
        return Decoded::NotAnEvent;
    };
    let Some((head, body)) = text.split_once("\n\n") else {
        return Decoded::NotAnEvent;
    };
    if !head.starts_with(PREFIX) {
        return Decoded::NotAnEvent;
    }
    // The common case in one pass: an event of this schema.
    if let Ok(event) = serde_json::from_str::<TaskEvent>(body)
        && event.schema == SCHEMA
    {
        return Decoded::Event(Box::new(event));
    }
    // The schema first, so that a later schema is named as such, not as a decoding error.
    let value: serde_json::Value = match serde_json::from_str(body) {
        Ok(value) => value,
        Err(err) => return Decoded::Bad(format!("its JSON does not parse: {err}")),
    };
    match value.get("schema").and_then(serde_json::Value::as_str) {
        Some(SCHEMA) => {}
        Some(other) => {
            return Decoded::Bad(format!(
                "an event of schema `{}`, which this version does not read (it reads {SCHEMA})",
                crate::quote::excerpt(other)
            ));
        }
        None => return Decoded::Bad("an event without a schema".into()),
    }
    match serde_json::from_value::<TaskEvent>(value) {
        Ok(event) => Decoded::Event(Box::new(event)),
        Err(err) => Decoded::Bad(format!("an event that does not decode: {err}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BODY: &str = r#"{
  "schema": "git-mile-event@1",
  "id": "019a0000-0000-7000-8000-000000000001",
  "lamport": 3,
  "ts": "2025-11-08T12:34:56.789Z",
  "actor": { "name": "alice", "email": "alice@example.com" },
  "task": "019a0000-0000-7000-8000-0000000000aa",
  "kind": { "type": "taskStateSet", "state": "state/done", "state_kind": "done" }
}"#;

    #[test]
    fn reads_what_upstream_writes() {
        let message = format!("git-mile-event: 019a0000-0000-7000-8000-000000000001\n\n{BODY}");
        let Decoded::Event(event) = decode(message.as_bytes()) else {
            panic!("not decoded");
        };
        assert_eq!(event.lamport, 3);
        assert_eq!(
            event.kind,
            TaskChange::TaskStateSet {
                state: "state/done".into(),
                state_kind: Some("done".into())
            }
        );
    }

    #[test]
    fn other_commits_and_bad_events() {
        assert_eq!(decode(b"merge\n\n{}"), Decoded::NotAnEvent);
        assert_eq!(decode(b"git-mile-event: x"), Decoded::NotAnEvent);
        assert!(matches!(
            decode(b"git-mile-event: x\n\n{not json"),
            Decoded::Bad(why) if why.contains("does not parse")
        ));
        let other = BODY.replace("git-mile-event@1", "git-mile-event@2");
        assert!(matches!(
            decode(format!("git-mile-event: x\n\n{other}").as_bytes()),
            Decoded::Bad(why) if why.contains("git-mile-event@2")
        ));
        let unknown = BODY.replace("taskStateSet", "taskExploded");
        assert!(matches!(
            decode(format!("git-mile-event: x\n\n{unknown}").as_bytes()),
            Decoded::Bad(why) if why.contains("taskExploded")
        ));
    }
}
