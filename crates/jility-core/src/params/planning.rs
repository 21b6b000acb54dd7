//! The inputs of planning: epics and sprints.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::StatusName;

#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListEpics {
    /// Only epics in these statuses (the epic's own status).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub status: Vec<StatusName>,
    /// Page size, default 20, at most 100.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 100))]
    pub limit: Option<i64>,
    /// `next_cursor` of the previous page (with the same filters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetEpic {
    /// The epic: `KEY-N` or UUID.
    pub epic_id: String,
    /// Page size of its tickets, default 50, at most 200.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 200))]
    pub limit: Option<i64>,
    /// `next_cursor` of the previous page of its tickets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateSprint {
    /// Unique in the project, e.g. `Sprint 12`.
    pub name: String,
    /// What the sprint is for, in a sentence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goal: Option<String>,
    /// First day, `YYYY-MM-DD`.
    pub starts_on: String,
    /// Last day, `YYYY-MM-DD` (not before the first).
    pub ends_on: String,
    /// Story points the team can take (above 0); without it, planning uses the velocity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 10000))]
    pub capacity_points: Option<i64>,
}

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AddToSprint {
    /// The sprint: its name, its number, or `active`.
    pub sprint: String,
    /// The tickets (`KEY-N` or UUID), all or none.
    pub tickets: Vec<String>,
    /// Move tickets that are in another planned or active sprint (else that is refused).
    #[serde(default, rename = "move", skip_serializing_if = "std::ops::Not::not")]
    pub move_tickets: bool,
}

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RemoveFromSprint {
    /// The sprint: its name, its number, or `active`.
    pub sprint: String,
    /// The tickets (`KEY-N` or UUID) to send back to the backlog, all or none.
    pub tickets: Vec<String>,
}

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SprintName {
    /// The sprint: its name, its number, or `active`.
    pub sprint: String,
}

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CompleteSprint {
    /// The sprint: its name, its number, or `active`.
    pub sprint: String,
    /// A planned sprint that takes the unfinished tickets; without it they go back to the
    /// backlog.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub carry_over_to: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListSprints {
    /// Only sprints in these states: `planned`, `active`, `completed`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub state: Vec<String>,
    /// Page size, default 50, at most 200.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 200))]
    pub limit: Option<i64>,
    /// `next_cursor` of the previous page (with the same filters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}
