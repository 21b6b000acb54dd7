//! The inputs of saved views and bulk edits.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{StatusName, present};

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SaveView {
    /// The view's name (1 to 60 characters; letters, digits, blanks, `-`, `_`, `.`): run it
    /// as `view:NAME` in any query (`view:"my triage"` when it has blanks).
    pub name: String,
    /// Its query in the query language, e.g. `label:auth status:review updated:>7d`.
    pub query: String,
    /// Shared with the workspace (everyone sees and runs it; only its owner deletes it);
    /// default: the caller's own.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub shared: bool,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListViews {}

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ViewName {
    /// The view's name (any case).
    pub name: String,
}

/// The changes of a bulk edit: a field left out stays as it is on every ticket.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BulkSet {
    /// The status to move every ticket to (each move must be one the workflow allows).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<StatusName>,
    /// Labels to add to every ticket.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub add_labels: Vec<String>,
    /// Labels to take off every ticket.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub remove_labels: Vec<String>,
    /// People or agents to add to every ticket's assignees.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub add_assignees: Vec<String>,
    /// People or agents to take off every ticket's assignees.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub remove_assignees: Vec<String>,
    /// A planned or the active sprint (name, number or `active`) to move every ticket into,
    /// or `none` to send them back to the backlog.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sprint: Option<String>,
    /// The epic (`KEY-N` or UUID) every ticket joins; `null` takes them out of theirs.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub epic_id: Option<Option<String>>,
    /// Story points, 1 to 13, of every ticket; `null` clears them.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(range(min = 1, max = 13))]
    pub story_points: Option<Option<i64>>,
}

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BulkUpdate {
    /// The tickets: a query of the query language (e.g. `label:auth status:review`)…
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
    /// …or the tickets named (`KEY-N` or UUID); one of the two.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tickets: Vec<String>,
    /// What to change on every one of them.
    pub set: BulkSet,
    /// Change nothing unless the tickets are exactly this many (so that a query broader
    /// than meant changes nothing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_count: Option<u64>,
    /// Answer what would change and what would be refused; change nothing.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub dry_run: bool,
    /// Why, kept in each changed ticket's change log.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BulkAssign {
    /// The tickets: a query of the query language…
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
    /// …or the tickets named (`KEY-N` or UUID); one of the two.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tickets: Vec<String>,
    /// Every ticket's assignees from now on (empty: unassign them all).
    pub assignees: Vec<String>,
    /// Change nothing unless the tickets are exactly this many.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_count: Option<u64>,
    /// Answer what would change; change nothing.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub dry_run: bool,
    /// Why (a handoff message), kept in each changed ticket's change log.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// Keeps the start of a long description: the part of a probe that is compared
/// ([`crate::similarity::compared`]), so that a long one pasted in costs no more than that
/// anywhere, and fits in a GET's query whatever its script.
fn compared_start<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let text = Option::<String>::deserialize(d)?;
    Ok(text.map(|t| crate::similarity::compared(&t).to_string()))
}

/// The same for a title ([`crate::similarity::compared_title`]).
fn compared_title<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let text = Option::<String>::deserialize(d)?;
    Ok(text.map(|t| crate::similarity::compared_title(&t).to_string()))
}

/// Longest ticket reference a probe takes (a UUID is 36 characters, `KEY-N` fewer): a
/// longer one names no ticket, and is refused before it travels anywhere.
const MAX_REFERENCE_CHARS: usize = 100;

fn reference<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let text = Option::<String>::deserialize(d)?;
    match text {
        Some(t) if t.chars().count() > MAX_REFERENCE_CHARS => {
            Err(serde::de::Error::custom(format!(
                "`ticket_id` is longer than any ticket's number or UUID ({MAX_REFERENCE_CHARS} characters at most)"
            )))
        }
        other => Ok(other),
    }
}

/// A ticket filed, or one about to be: what related tickets and estimates are found for.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SuggestRelated {
    /// A filed ticket (`KEY-N` or UUID): its title and description are the probe, and it is
    /// left out of the answer.
    #[serde(
        default,
        deserialize_with = "reference",
        skip_serializing_if = "Option::is_none"
    )]
    pub ticket_id: Option<String>,
    /// The title of a ticket not yet filed (instead of `ticket_id`).
    #[serde(
        default,
        deserialize_with = "compared_title",
        skip_serializing_if = "Option::is_none"
    )]
    pub title: Option<String>,
    /// Its description (markdown; its first 4,000 characters are compared).
    #[serde(
        default,
        deserialize_with = "compared_start",
        skip_serializing_if = "Option::is_none"
    )]
    pub description: Option<String>,
    /// How many related tickets at most (default 5, at most 20).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<i64>,
}

/// What to estimate: a filed ticket, or the title and description of one about to be.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EstimateEffort {
    /// A filed ticket (`KEY-N` or UUID).
    #[serde(
        default,
        deserialize_with = "reference",
        skip_serializing_if = "Option::is_none"
    )]
    pub ticket_id: Option<String>,
    /// The title of a ticket not yet filed (instead of `ticket_id`).
    #[serde(
        default,
        deserialize_with = "compared_title",
        skip_serializing_if = "Option::is_none"
    )]
    pub title: Option<String>,
    /// Its description (markdown; its first 4,000 characters are compared).
    #[serde(
        default,
        deserialize_with = "compared_start",
        skip_serializing_if = "Option::is_none"
    )]
    pub description: Option<String>,
}

/// `p` as if it had been sent as JSON: its texts cut to what is compared, a reference too
/// long refused — for callers that build a probe themselves (the CLI, the web).
pub fn as_sent<T: Serialize + serde::de::DeserializeOwned>(
    p: T,
) -> Result<T, mcp_common_core::ToolError> {
    let value = serde_json::to_value(p)
        .map_err(|e| mcp_common_core::ToolError::internal(format!("Cannot encode JSON: {e}")))?;
    serde_json::from_value(value).map_err(|e| {
        mcp_common_core::ToolError::new(
            crate::errors::INVALID_INPUT,
            crate::errors::clip(&e.to_string()),
        )
        .with_hint("Name a ticket by its KEY-N or UUID.")
    })
}
