//! The JSON shapes of tasks, shared by the MCP tools and the CLI's `--json`.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::TaskRow;
use super::replay::TaskComment;
use super::shapes::TaskFacts;
use crate::views::{ListItem, StatsView};

/// A whole task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TaskView {
    pub id: String,
    pub title: String,
    /// `open` or `closed` (closed when the state kind is `done`).
    pub status: String,
    pub description: String,
    pub labels: Vec<String>,
    pub comments: Vec<TaskComment>,
    pub stats: StatsView,
    /// `task`.
    pub kind: String,
    /// Who created it (the actor of its `taskCreated` event).
    pub author: String,
    pub created: DateTime<Utc>,
    pub updated: DateTime<Utc>,
    #[serde(flatten)]
    pub facts: TaskFacts,
    /// Upstream's other relations, by kind: task ids. Absent when none.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub relations: BTreeMap<String, Vec<String>>,
}

fn facts(row: &TaskRow<'_>) -> TaskFacts {
    let t = row.task;
    TaskFacts {
        state: t.state.clone(),
        state_kind: t.state_kind.clone(),
        assignees: t.assignees.iter().cloned().collect(),
        parents: t.parents.iter().cloned().collect(),
        children: t.children.iter().cloned().collect(),
    }
}

fn stats(row: &TaskRow<'_>) -> StatsView {
    StatsView {
        comment_count: row.comment_count,
        open_issues: None,
    }
}

/// A task's item in a listing.
pub fn list_item(row: &TaskRow<'_>) -> ListItem {
    let t = row.task;
    ListItem {
        id: t.id.clone(),
        title: t.title.clone(),
        status: t.status().to_string(),
        labels: t.labels.iter().cloned().collect(),
        stats: stats(row),
        task: Some(facts(row)),
    }
}

impl TaskView {
    pub fn from_row(row: &TaskRow<'_>) -> Self {
        let t = row.task;
        Self {
            id: t.id.clone(),
            title: t.title.clone(),
            status: t.status().to_string(),
            description: t.description.clone(),
            labels: t.labels.iter().cloned().collect(),
            comments: t.comments.clone(),
            stats: stats(row),
            kind: "task".to_string(),
            author: t.author.clone(),
            created: t.created,
            updated: t.updated,
            facts: facts(row),
            relations: t
                .relations
                .iter()
                .map(|(kind, ids)| (kind.clone(), ids.iter().cloned().collect()))
                .collect(),
        }
    }
}
