//! Events: each commit of an entity's ref carries exactly one, as JSON in its message.
//!
//! A message reads `git-mile: <type> <kind>/<id>`, a blank line, then the event's JSON, so
//! `git log refs/git-mile/issue/<id>` is readable by people too. Merge commits (made when
//! two clones' histories meet) carry no event: their message is `git-mile: merge <kind>/<id>`.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::model::{Kind, Status};

/// The version of the event format; readers skip events of a schema they do not know.
pub const SCHEMA: &str = "git-mile/1";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Actor {
    pub name: String,
    pub email: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event {
    pub schema: String,
    /// Unique id of the event (UUID): the same event reached through two histories counts once.
    pub event: String,
    pub ts: DateTime<Utc>,
    pub actor: Actor,
    #[serde(flatten)]
    pub change: Change,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Change {
    Created {
        kind: Kind,
        title: String,
        #[serde(default)]
        description: String,
        #[serde(default)]
        labels: Vec<String>,
    },
    TitleEdited {
        title: String,
    },
    DescriptionEdited {
        description: String,
    },
    StatusChanged {
        status: Status,
    },
    CommentAdded {
        comment: String,
        body: String,
    },
    LabelAdded {
        label: String,
    },
    LabelRemoved {
        label: String,
    },
    /// An issue attached to a milestone.
    Attached {
        milestone: String,
    },
    /// An issue detached from a milestone.
    Detached {
        milestone: String,
    },
}

impl Change {
    pub fn type_name(&self) -> &'static str {
        match self {
            Self::Created { .. } => "created",
            Self::TitleEdited { .. } => "title_edited",
            Self::DescriptionEdited { .. } => "description_edited",
            Self::StatusChanged { .. } => "status_changed",
            Self::CommentAdded { .. } => "comment_added",
            Self::LabelAdded { .. } => "label_added",
            Self::LabelRemoved { .. } => "label_removed",
            Self::Attached { .. } => "attached",
            Self::Detached { .. } => "detached",
        }
    }
}

impl Event {
    pub fn new(actor: Actor, change: Change) -> Self {
        Self {
            schema: SCHEMA.to_string(),
            event: uuid::Uuid::new_v4().to_string(),
            ts: Utc::now(),
            actor,
            change,
        }
    }

    /// The commit message carrying this event.
    pub fn to_message(&self, kind: Kind, id: &str) -> Result<String, serde_json::Error> {
        Ok(format!(
            "git-mile: {} {}/{id}\n\n{}\n",
            self.change.type_name(),
            kind.as_str(),
            serde_json::to_string(self)?
        ))
    }

    /// The event of a commit message; `None` for merge commits, foreign commits and events
    /// of an unknown schema.
    pub fn from_message(message: &[u8]) -> Option<Self> {
        let text = std::str::from_utf8(message).ok()?;
        let (header, body) = text.split_once("\n\n")?;
        if !header.starts_with("git-mile: ") || header.starts_with("git-mile: merge ") {
            return None;
        }
        let event: Self = serde_json::from_str(body.trim()).ok()?;
        (event.schema == SCHEMA).then_some(event)
    }
}

pub fn merge_message(kind: Kind, id: &str) -> String {
    format!("git-mile: merge {}/{id}\n", kind.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_round_trip() {
        let e = Event::new(
            Actor {
                name: "Ann".into(),
                email: "ann@example.com".into(),
            },
            Change::LabelAdded {
                label: "bug".into(),
            },
        );
        let message = e.to_message(Kind::Issue, "abc").unwrap();
        assert!(message.starts_with("git-mile: label_added issue/abc\n\n{"));
        assert_eq!(Event::from_message(message.as_bytes()), Some(e));
        assert_eq!(
            Event::from_message(merge_message(Kind::Issue, "abc").as_bytes()),
            None
        );
        assert_eq!(Event::from_message(b"fix: something\n\nbody"), None);
        assert_eq!(
            Event::from_message(b"git-mile: x y\n\n{\"schema\":\"git-mile/9\"}"),
            None
        );
    }
}
