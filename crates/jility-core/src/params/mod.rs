//! The inputs of every operation, shared by the MCP tools (as their input schemas) and the
//! CLI (which fills them from its flags).

use std::borrow::Cow;
use std::collections::BTreeMap;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};

use crate::description::EditOperation;
use crate::model::{Kind, Status};

mod finding;
mod inbox;
mod planning;

pub use finding::*;
pub use inbox::*;
pub use planning::*;

/// A status as the caller wrote it. Kept as text so that a wrong one (`in-progress`) is
/// answered with `invalid_status` naming the valid ones, not a generic argument error.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct StatusName(pub String);

impl JsonSchema for StatusName {
    fn schema_name() -> Cow<'static, str> {
        "Status".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "string",
            "enum": Status::ALL.map(Status::as_str),
        })
    }
}

impl From<Status> for StatusName {
    fn from(status: Status) -> Self {
        Self(status.as_str().to_string())
    }
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateTicket {
    /// Ticket title (required, not empty).
    pub title: String,
    /// Markdown description.
    #[serde(default)]
    pub description: Option<String>,
    /// Effort estimate, 1 to 13.
    #[serde(default)]
    #[schemars(range(min = 1, max = 13))]
    pub story_points: Option<i64>,
    /// Initial status (default `backlog`).
    #[serde(default)]
    pub status: Option<StatusName>,
    /// Assignees, e.g. `["agent-1", "alice"]`.
    #[serde(default)]
    pub assignees: Vec<String>,
    /// Labels like `backend`, `frontend`, `bug`.
    #[serde(default)]
    pub labels: Vec<String>,
    /// Parent ticket (`KEY-N` or UUID) for sub-tasks.
    #[serde(default)]
    pub parent_id: Option<String>,
    /// Epic ticket (`KEY-N` or UUID).
    #[serde(default)]
    pub epic_id: Option<String>,
    /// `ticket` (default) or `epic` (an epic gathers tickets; it belongs to no epic).
    #[serde(default)]
    pub kind: Option<Kind>,
}

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BatchItem {
    pub title: String,
    #[serde(default)]
    pub description: Option<String>,
    /// Effort estimate, 1 to 13.
    #[serde(default)]
    #[schemars(range(min = 1, max = 13))]
    pub story_points: Option<i64>,
    #[serde(default)]
    pub assignees: Vec<String>,
    #[serde(default)]
    pub labels: Vec<String>,
    /// Tickets this one depends on: existing tickets (`KEY-N` or UUID), or earlier items
    /// of this batch as `#1`, `#2`, … (1-based position) or by their exact title.
    #[serde(default)]
    pub depends_on: Vec<String>,
    /// `ticket` (default) or `epic`.
    #[serde(default)]
    pub kind: Option<Kind>,
}

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateBatch {
    /// The tickets to create, all or none.
    pub tickets: Vec<BatchItem>,
    /// Epic or parent ticket of every created ticket.
    #[serde(default)]
    pub parent_id: Option<String>,
}

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TicketId {
    /// `KEY-N` (e.g. `TASK-42`) or the ticket's UUID.
    pub ticket_id: String,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListTickets {
    /// Filter by status (any of these).
    #[serde(default)]
    pub status: Vec<StatusName>,
    /// Only tickets assigned to this name.
    #[serde(default)]
    pub assignee: Option<String>,
    /// Only tickets carrying all of these labels.
    #[serde(default)]
    pub labels: Vec<String>,
    /// Sub-tasks of this parent ticket.
    #[serde(default)]
    pub parent_id: Option<String>,
    /// Tickets of this epic.
    #[serde(default)]
    pub epic_id: Option<String>,
    /// Only tickets with no assignee.
    #[serde(default)]
    pub unassigned: bool,
    /// Tickets of a sprint: its name or number, `active` (the active sprint), or `none`
    /// (the backlog: in no planned or active sprint, and not done in a completed one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sprint: Option<String>,
    /// A query in the query language, beside the filters: words (full-text) and
    /// qualifiers, e.g. `login status:todo,review -label:wontfix updated:<7d
    /// sort:updated-desc` (see jility_search_tickets).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
    /// Page size, default 50, at most 200.
    #[serde(default)]
    #[schemars(range(min = 1, max = 200))]
    pub limit: Option<i64>,
    /// `next_cursor` of the previous page (with the same filters).
    #[serde(default)]
    pub cursor: Option<String>,
}

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClaimTicket {
    /// `KEY-N` or UUID.
    pub ticket_id: String,
    /// Optional message when claiming (e.g. "Starting work on this"); added as a comment.
    #[serde(default)]
    pub message: Option<String>,
}

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateDescription {
    /// `KEY-N` or UUID.
    pub ticket_id: String,
    /// Type of edit operation.
    pub operation: EditOperation,
    /// New content to insert.
    pub content: String,
    /// For replace_lines: first line (1-indexed).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub start_line: Option<i64>,
    /// For replace_lines: last line (inclusive).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub end_line: Option<i64>,
    /// For replace_section: the markdown header, e.g. `## Acceptance Criteria`. The header
    /// line is kept; its body up to the next header of the same or higher level is replaced.
    #[serde(default)]
    pub section_header: Option<String>,
    /// Optional change message for the history.
    #[serde(default)]
    pub message: Option<String>,
}

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateStatus {
    /// `KEY-N` or UUID.
    pub ticket_id: String,
    pub status: StatusName,
    /// Optional context message, kept in the change log.
    #[serde(default)]
    pub message: Option<String>,
}

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AddComment {
    /// `KEY-N` or UUID.
    pub ticket_id: String,
    /// Markdown comment content (@mentions welcome).
    pub content: String,
}

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AssignTicket {
    /// `KEY-N` or UUID.
    pub ticket_id: String,
    /// The new assignees. Empty array = unassign.
    pub assignees: Vec<String>,
    /// Handoff message (e.g. "I've set up the structure, please finish the
    /// implementation"); added as a comment.
    #[serde(default)]
    pub message: Option<String>,
}

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LinkCommit {
    /// `KEY-N` or UUID.
    pub ticket_id: String,
    /// The commit hash, abbreviated (at least 4 hex digits) or full.
    pub commit_hash: String,
    /// Optional commit message.
    #[serde(default)]
    pub commit_message: Option<String>,
}

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Dependency {
    /// The ticket that has the dependency.
    pub ticket_id: String,
    /// The ticket that must be completed first.
    pub depends_on: String,
}

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FromTemplate {
    /// Template name (see jility_list_templates).
    pub template: String,
    /// Values of the template's `{{variables}}`.
    #[serde(default)]
    pub variables: BTreeMap<String, String>,
    /// Assign the new ticket to this name.
    #[serde(default)]
    pub assignee: Option<String>,
}

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchTickets {
    /// The query: words to find in titles, descriptions and comments (all must match;
    /// "quoted phrases" match exactly; `-word` must not), and qualifiers: `status:todo,review`
    /// (any of), `label:x`, `assignee:me`, `is:unassigned|assigned|blocked|open|done|epic`,
    /// `no:sprint|epic|parent|points|assignee|label`, `epic:KEY-N`, `parent:KEY-N`,
    /// `depends-on:KEY-N`, `sprint:active|"Sprint 3"`, `points:3..8|>5`,
    /// `created:>2024-10-20`, `updated:<7d`, `-` before any to negate, and
    /// `sort:created|updated|points|title` with `-asc`/`-desc` (default: best match).
    pub query: String,
    /// Page size, default 20, at most 100.
    #[serde(default)]
    #[schemars(range(min = 1, max = 100))]
    pub limit: Option<i64>,
    /// `next_cursor` of the previous page (with the same query).
    #[serde(default)]
    pub cursor: Option<String>,
    /// Only the tickets of a sprint: its name or number, `active` (the active sprint), or
    /// `none` (the backlog), as jility_list_tickets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sprint: Option<String>,
}

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RevertDescription {
    /// `KEY-N` or UUID.
    pub ticket_id: String,
    /// The version to restore (1 is the original; see jility_get_ticket_history).
    #[schemars(range(min = 1))]
    pub version: i64,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListTemplates {
    /// Page size, default 50, at most 200.
    #[serde(default)]
    #[schemars(range(min = 1, max = 200))]
    pub limit: Option<i64>,
    /// `next_cursor` of the previous page.
    #[serde(default)]
    pub cursor: Option<String>,
}

/// Field edits of a ticket (`jility ticket edit`, the web's ticket page, `POST
/// /tickets/{ticket_id}/fields`): a field left out stays as it is; `story_points`,
/// `parent_id` and `epic_id` given as `null` are cleared, `labels: []` clears the labels.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditTicket {
    /// `KEY-N` or UUID.
    pub ticket_id: String,
    /// New title (not empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// New description, whole (recorded as a new version).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Story points, 1 to 13; `null` clears them.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(range(min = 1, max = 13))]
    pub story_points: Option<Option<i64>>,
    /// The labels, all of them (`[]` clears them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<Vec<String>>,
    /// Parent ticket (`KEY-N` or UUID); `null` clears it.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub parent_id: Option<Option<String>>,
    /// Epic (`KEY-N` or UUID); `null` clears it.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub epic_id: Option<Option<String>>,
    /// `ticket` or `epic`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<Kind>,
    /// Optional change message, kept in the change log.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// A precise edit of the description made in the same transaction as the fields (both
    /// or neither; `jility ticket edit --title … --append …`); not with `description`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description_edit: Option<DescriptionEdit>,
}

/// A precise description edit of [`EditTicket`]: [`UpdateDescription`] without the ticket
/// and the message (the fields' message is the edit's).
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DescriptionEdit {
    /// Type of edit operation.
    pub operation: EditOperation,
    /// New content to insert.
    pub content: String,
    /// For replace_lines: first line (1-indexed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub start_line: Option<i64>,
    /// For replace_lines: last line (inclusive).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub end_line: Option<i64>,
    /// For replace_section: the markdown header, e.g. `## Acceptance Criteria`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub section_header: Option<String>,
}

impl DescriptionEdit {
    /// The edit as [`UpdateDescription`] of `ticket_id`, with `message`.
    pub fn of(self, ticket_id: String, message: Option<String>) -> UpdateDescription {
        UpdateDescription {
            ticket_id,
            operation: self.operation,
            content: self.content,
            start_line: self.start_line,
            end_line: self.end_line,
            section_header: self.section_header,
            message,
        }
    }
}

/// A member that is present: `Some(value)`, `Some(None)` for `null` (absent members are
/// `None` through `#[serde(default)]`).
pub(crate) fn present<'de, D, T>(deserializer: D) -> Result<Option<Option<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(deserializer).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_edit_tells_absent_from_null() {
        let absent: EditTicket = serde_json::from_str(r#"{"ticket_id":"A-1"}"#).unwrap();
        assert_eq!(
            (absent.story_points, absent.parent_id, absent.epic_id),
            (None, None, None)
        );
        let cleared: EditTicket = serde_json::from_str(
            r#"{"ticket_id":"A-1","story_points":null,"parent_id":null,"epic_id":"A-2"}"#,
        )
        .unwrap();
        assert_eq!(cleared.story_points, Some(None));
        assert_eq!(cleared.parent_id, Some(None));
        assert_eq!(cleared.epic_id, Some(Some("A-2".to_string())));
        // Serialised back, null stays null and absent stays absent.
        let back = serde_json::to_value(&cleared).unwrap();
        assert_eq!(
            back,
            serde_json::json!({"ticket_id":"A-1","story_points":null,"parent_id":null,"epic_id":"A-2"})
        );
        assert!(serde_json::from_str::<EditTicket>(r#"{"ticket_id":"A-1","bogus":1}"#).is_err());
    }
}
