//! The inbox's arguments.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListNotifications {
    /// Only the entries not yet read.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unread_only: bool,
    /// Page size, default 20, at most 100.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 100))]
    pub limit: Option<i64>,
    /// `next_cursor` of the previous page (with the same `unread_only`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MarkNotificationsRead {
    /// The entries to mark read (their `id`s), at most 500.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ids: Vec<i64>,
    /// Mark every entry of the caller's inbox read (instead of `ids`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub all: bool,
}

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WatchTicket {
    /// Ticket number (`KEY-N`) or UUID.
    pub ticket_id: String,
    /// `true` (default): be told of its changes; `false`: not, even as its creator,
    /// assignee or commenter.
    #[serde(default = "yes")]
    pub watching: bool,
}

fn yes() -> bool {
    true
}
