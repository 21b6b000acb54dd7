//! The JSON shapes of tasks, shared by the MCP tools and the CLI's `--json`.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::TaskRow;
use super::TaskSet;
use super::replay::TaskComment;
use super::shapes::{Kin, TaskFacts};
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
    /// Its parents and children, by id: title, status and state (tasks that cannot be read
    /// are left out). Absent when it has none.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub family: BTreeMap<String, Kin>,
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

/// The longest title in a list item, in characters (as the longest title of an issue).
pub const MAX_ITEM_TITLE: usize = 500;
/// The longest state, state kind, label or assignee in a list item, in characters (as the
/// longest label of an issue).
pub const MAX_ITEM_NAME: usize = 100;
/// The most labels, assignees, parents or children a list item names (the first, in order).
pub const MAX_ITEM_SET: usize = 100;

/// The first [`MAX_ITEM_SET`] of `values`, each cut to [`MAX_ITEM_NAME`] characters.
fn some<'a>(values: impl IntoIterator<Item = &'a String>) -> Vec<String> {
    values
        .into_iter()
        .take(MAX_ITEM_SET)
        .map(|v| crate::quote::cut(v, MAX_ITEM_NAME))
        .collect()
}

/// [`facts`] bounded for a list item: what a task's ref holds may be of any size.
fn item_facts(row: &TaskRow<'_>) -> TaskFacts {
    let t = row.task;
    let name = |v: &Option<String>| v.as_deref().map(|v| crate::quote::cut(v, MAX_ITEM_NAME));
    TaskFacts {
        state: name(&t.state),
        state_kind: name(&t.state_kind),
        assignees: some(&t.assignees),
        parents: some(&t.parents),
        children: some(&t.children),
    }
}

fn stats(row: &TaskRow<'_>) -> StatsView {
    StatsView {
        comment_count: row.comment_count,
        open_issues: None,
    }
}

/// A task's item in a listing: its title and names cut, its sets bounded (`git_mile.show`
/// gives them whole).
pub fn list_item(row: &TaskRow<'_>) -> ListItem {
    let t = row.task;
    ListItem {
        id: t.id.clone(),
        title: crate::quote::cut(&t.title, MAX_ITEM_TITLE),
        status: t.status().to_string(),
        labels: some(&t.labels),
        stats: stats(row),
        task: Some(item_facts(row)),
    }
}

/// The most comments a task's view holds: the last ones (`stats.comment_count` says how many
/// there are).
pub const MAX_SHOWN_COMMENTS: usize = 200;

impl TaskView {
    pub fn from_row(row: &TaskRow<'_>) -> Self {
        let t = row.task;
        Self {
            id: t.id.clone(),
            title: t.title.clone(),
            status: t.status().to_string(),
            description: t.description.clone(),
            labels: t.labels.iter().cloned().collect(),
            // The last ones; `stats.comment_count` counts them all.
            comments: t.comments[t.comments.len().saturating_sub(MAX_SHOWN_COMMENTS)..].to_vec(),
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
            family: BTreeMap::new(),
        }
    }

    /// The task of `row` as `git_mile.show` shows it: with its parents and children named,
    /// as `read` (given their ids; the catalog's `tasks_among`) reads them.
    pub fn shown<E>(
        row: &TaskRow<'_>,
        read: impl FnOnce(Vec<&str>) -> Result<TaskSet, E>,
    ) -> Result<Self, E> {
        let view = Self::from_row(row);
        let family = read(view.kin_ids().collect())?;
        Ok(view.with_family(&family))
    }

    /// The ids of its parents and children.
    fn kin_ids(&self) -> impl Iterator<Item = &str> {
        self.facts
            .parents
            .iter()
            .chain(&self.facts.children)
            .map(String::as_str)
    }

    /// This view with its parents and children named, as `tasks` (which holds them) has them.
    fn with_family(mut self, tasks: &TaskSet) -> Self {
        let wanted: std::collections::BTreeSet<&str> = self.kin_ids().collect();
        self.family = tasks
            .rows()
            .filter(|row| wanted.contains(row.task.id.as_str()))
            .map(|row| {
                let t = row.task;
                let kin = Kin {
                    title: crate::quote::cut(&t.title, MAX_ITEM_TITLE),
                    status: t.status().to_string(),
                    state: t
                        .state
                        .as_deref()
                        .map(|s| crate::quote::cut(s, MAX_ITEM_NAME)),
                };
                (t.id.clone(), kin)
            })
            .collect();
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::Task;

    fn task(title: String, comments: usize) -> Task {
        let at = DateTime::<Utc>::UNIX_EPOCH;
        Task {
            state: Some("s".repeat(1000)),
            labels: (0..300)
                .map(|n| format!("{n:03}{}", "l".repeat(1000)))
                .collect(),
            comments: (0..comments)
                .map(|n| TaskComment {
                    id: n.to_string(),
                    author: "a".into(),
                    body: format!("c{n}"),
                    ts: at,
                    edits: 0,
                    edited: None,
                })
                .collect(),
            ..Task::bare("019a5b2c-0001-7000-8000-000000000001", &title)
        }
    }

    #[test]
    fn list_items_are_bounded_and_shows_keep_the_last_comments() {
        let t = task("T".repeat(1_000_000), 100_000);
        let row = TaskRow {
            task: &t,
            comment_count: t.comments.len() as u64,
        };
        let item = list_item(&row);
        assert_eq!(item.title.chars().count(), MAX_ITEM_TITLE);
        assert!(item.title.ends_with('…'));
        assert_eq!(item.labels.len(), MAX_ITEM_SET);
        assert!(
            item.labels
                .iter()
                .all(|l| l.chars().count() == MAX_ITEM_NAME)
        );
        let facts = item.task.unwrap();
        assert_eq!(facts.state.unwrap().chars().count(), MAX_ITEM_NAME);
        assert!(serde_json::to_string(&list_item(&row)).unwrap().len() < 20_000);

        let view = TaskView::from_row(&row);
        assert_eq!(view.title.len(), 1_000_000, "whole in show");
        assert_eq!(view.labels.len(), 300);
        assert_eq!(view.comments.len(), MAX_SHOWN_COMMENTS);
        assert_eq!(view.comments[0].body, "c99800");
        assert_eq!(view.comments.last().unwrap().body, "c99999");
        assert_eq!(view.stats.comment_count, 100_000);
    }

    #[test]
    fn a_tasks_state_assignees_parents_and_children_are_absent_when_none() {
        let keys = |value: serde_json::Value| -> Vec<String> {
            value.as_object().unwrap().keys().cloned().collect()
        };
        let bare = Task::bare("019a5b2c-0001-7000-8000-000000000001", "T");
        let row = TaskRow {
            task: &bare,
            comment_count: 0,
        };
        let item = serde_json::to_value(list_item(&row)).unwrap();
        assert_eq!(keys(item), ["id", "labels", "stats", "status", "title"]);
        let shown = serde_json::to_value(TaskView::from_row(&row)).unwrap();
        for field in ["state", "state_kind", "assignees", "parents", "children"] {
            assert!(shown.get(field).is_none(), "{field}: {shown}");
        }
        // The text copy of an answer keeps the contract's order, every field present.
        let full = Task {
            state: Some("state/todo".into()),
            state_kind: Some("todo".into()),
            assignees: ["ann".to_string()].into(),
            parents: ["019a5b2c-0001-7000-8000-000000000002".to_string()].into(),
            children: ["019a5b2c-0001-7000-8000-000000000003".to_string()].into(),
            ..bare.clone()
        };
        let row = TaskRow {
            task: &full,
            comment_count: 0,
        };
        let text = serde_json::to_string(&list_item(&row)).unwrap();
        assert_eq!(
            text,
            r#"{"id":"019a5b2c-0001-7000-8000-000000000001","title":"T","status":"open","labels":[],"stats":{"comment_count":0},"state":"state/todo","state_kind":"todo","assignees":["ann"],"parents":["019a5b2c-0001-7000-8000-000000000002"],"children":["019a5b2c-0001-7000-8000-000000000003"]}"#
        );
    }
}
