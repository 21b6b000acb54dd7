//! The domain model: statuses and their workflow, tickets and what hangs off them, as
//! the tools and the CLI return them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Where a ticket stands in the workflow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Backlog,
    Todo,
    InProgress,
    Review,
    Done,
    Blocked,
}

impl Status {
    pub const ALL: [Status; 6] = [
        Status::Backlog,
        Status::Todo,
        Status::InProgress,
        Status::Review,
        Status::Done,
        Status::Blocked,
    ];

    /// The order in which listings group statuses: active work first.
    pub const GROUP_ORDER: [Status; 6] = [
        Status::InProgress,
        Status::Review,
        Status::Blocked,
        Status::Todo,
        Status::Backlog,
        Status::Done,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Backlog => "backlog",
            Self::Todo => "todo",
            Self::InProgress => "in_progress",
            Self::Review => "review",
            Self::Done => "done",
            Self::Blocked => "blocked",
        }
    }

    /// The display name, e.g. "In Progress".
    pub fn label(self) -> &'static str {
        match self {
            Self::Backlog => "Backlog",
            Self::Todo => "Todo",
            Self::InProgress => "In Progress",
            Self::Review => "Review",
            Self::Done => "Done",
            Self::Blocked => "Blocked",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == text)
    }

    pub fn valid_list() -> String {
        Self::ALL.map(Status::as_str).join(", ")
    }

    /// The workflow: the statuses a ticket in this status may move to.
    ///
    /// Work flows backlog → todo → in_progress → review → done; any open ticket can be
    /// blocked and unblocked; review can go back to in_progress; a done ticket can be
    /// reopened (todo or in_progress) but not sent back to the backlog.
    pub fn transitions(self) -> &'static [Status] {
        use Status::*;
        match self {
            Backlog => &[Todo, InProgress, Blocked],
            Todo => &[Backlog, InProgress, Blocked],
            InProgress => &[Todo, Review, Done, Blocked],
            Review => &[InProgress, Done, Blocked],
            Blocked => &[Backlog, Todo, InProgress, Review],
            Done => &[Todo, InProgress],
        }
    }

    pub fn can_move_to(self, to: Status) -> bool {
        self.transitions().contains(&to)
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a ticket is: a piece of work, or an epic that gathers tickets (`epic_id`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    #[default]
    Ticket,
    Epic,
}

impl Kind {
    pub const ALL: [Kind; 2] = [Kind::Ticket, Kind::Epic];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ticket => "ticket",
            Self::Epic => "epic",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == text)
    }

    pub fn is_ticket(&self) -> bool {
        *self == Kind::Ticket
    }
}

/// A ticket with its assignees and labels.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Ticket {
    /// Stable UUID.
    pub id: String,
    /// Display number, `KEY-N` (e.g. `TASK-42`).
    pub number: String,
    pub title: String,
    /// Markdown description.
    pub description: String,
    pub status: Status,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub story_points: Option<u8>,
    pub assignees: Vec<String>,
    pub labels: Vec<String>,
    /// The parent ticket's number, for sub-tasks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    /// The epic's number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub epic: Option<String>,
    /// `ticket` or `epic`.
    #[serde(default, skip_serializing_if = "Kind::is_ticket")]
    pub kind: Kind,
    /// The sprint it is in (planned, active, or the completed one it was finished in).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sprint: Option<String>,
    pub created_at: String,
    pub created_by: String,
    pub updated_at: String,
    pub updated_by: String,
}

/// A ticket as listings show it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct TicketSummary {
    pub number: String,
    pub title: String,
    pub status: Status,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub story_points: Option<u8>,
    pub assignees: Vec<String>,
    pub labels: Vec<String>,
    pub updated_at: String,
}

/// Another ticket named by a relation (dependency, dependent).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TicketRef {
    pub number: String,
    pub title: String,
    pub status: Status,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Comment {
    pub id: String,
    pub author: String,
    /// Markdown content.
    pub content: String,
    pub created_at: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct CommitLink {
    pub hash: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    pub linked_at: String,
    pub linked_by: String,
}

/// One entry of a ticket's change log.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Change {
    /// `created`, `title_changed`, `description_changed`, `status_changed`,
    /// `story_points_changed`, `assignees_changed`, `labels_changed`, `parent_changed`,
    /// `epic_changed`, `kind_changed`, `sprint_changed`, `comment_added`, `commit_linked`,
    /// `dependency_added`, `dependency_removed` or `deleted`.
    #[serde(rename = "type")]
    pub change_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old_value: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_value: Option<String>,
    /// What the change did, when more than the values says it (e.g. the edit operation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    pub changed_by: String,
    pub changed_at: String,
}

pub const MAX_STORY_POINTS: u8 = 13;
