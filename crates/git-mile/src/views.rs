//! The JSON shapes of answers, shared by the MCP tools and the CLI's `--json`.

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::catalog::Row;
use crate::model::Kind;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct StatsView {
    /// Number of comments.
    pub comment_count: u64,
    /// Milestones only: open issues attached to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_issues: Option<u64>,
}

/// One entity in a listing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ListItem {
    pub id: String,
    pub title: String,
    /// `open` or `closed`.
    pub status: String,
    pub labels: Vec<String>,
    pub stats: StatsView,
    /// Tasks only: state, state_kind, assignees, parents, children (each absent when none).
    #[serde(flatten)]
    pub task: Option<crate::task::shapes::TaskFacts>,
}

/// A page of a listing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ListResponse {
    pub items: Vec<ListItem>,
    /// Pass it as `cursor` to get the next page; `null` on the last page.
    #[serde(rename = "nextCursor")]
    pub next_cursor: Option<String>,
    /// Only when the repository is damaged: ids (at most 20) of entities of this kind that cannot be read, left out of `items` (`git fsck` tells more).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unreadable: Vec<String>,
    /// Only when there are some: refs under refs/git-mile/ that this version does not read (at most 20 groups), by prefix, with how many and what they are.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub other_refs: Vec<crate::task::shapes::OtherRefs>,
    /// Only on a page of issues or milestones with no item, in a repository holding upstream git-mile's tasks: how many tasks there are and how to list them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks: Option<crate::task::shapes::TasksNote>,
    /// Tasks only, on the first page (no cursor) of a listing without a filter: the workflow's states and those the tasks are in, each with its kind and how many tasks are in it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub states: Vec<crate::task::shapes::StateUse>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CommentView {
    pub author: String,
    pub body: String,
    /// RFC 3339 time of the comment.
    pub ts: DateTime<Utc>,
}

/// The milestone an issue is attached to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct MilestoneRef {
    pub id: String,
    /// `null` when the milestone is not in this repository (not pulled yet).
    pub title: Option<String>,
}

/// A whole entity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct EntityView {
    pub id: String,
    pub title: String,
    /// `open` or `closed`.
    pub status: String,
    pub description: String,
    pub labels: Vec<String>,
    pub comments: Vec<CommentView>,
    pub stats: StatsView,
    /// `milestone` or `issue`.
    pub kind: String,
    /// Who created it.
    pub author: String,
    pub created: DateTime<Utc>,
    pub updated: DateTime<Utc>,
    /// Issues only: the milestone it is attached to, `null` when none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub milestone: Option<Option<MilestoneRef>>,
}

impl ListItem {
    pub fn from_row(row: &Row<'_>) -> Self {
        let e = row.entity;
        Self {
            id: e.id.clone(),
            title: e.title.clone(),
            status: e.status.as_str().to_string(),
            labels: e.labels.iter().cloned().collect(),
            stats: stats(row),
            task: None,
        }
    }
}

fn stats(row: &Row<'_>) -> StatsView {
    StatsView {
        comment_count: row.stats.comment_count,
        open_issues: row.stats.open_issues,
    }
}

impl EntityView {
    pub fn from_row(row: &Row<'_>) -> Self {
        let e = row.entity;
        Self {
            id: e.id.clone(),
            title: e.title.clone(),
            status: e.status.as_str().to_string(),
            description: e.description.clone(),
            labels: e.labels.iter().cloned().collect(),
            comments: e
                .comments
                .iter()
                .map(|c| CommentView {
                    author: c.author.clone(),
                    body: c.body.clone(),
                    ts: c.ts,
                })
                .collect(),
            stats: stats(row),
            kind: e.kind.as_str().to_string(),
            author: e.author.clone(),
            created: e.created,
            updated: e.updated,
            milestone: match e.kind {
                Kind::Milestone => None,
                Kind::Issue => Some(e.milestone.as_ref().map(|id| MilestoneRef {
                    id: id.clone(),
                    title: row.milestone_title.map(str::to_string),
                })),
            },
        }
    }
}
