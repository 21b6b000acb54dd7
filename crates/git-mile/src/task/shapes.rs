//! The parts of the JSON shapes of listings that tasks bring, apart so that the shapes of
//! every entity ([`crate::views`]) and those of tasks ([`super::view`]) can both use them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Refs under `refs/git-mile/` that this version does not read, grouped by prefix and by
/// what they are.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct OtherRefs {
    /// `refs/git-mile/<namespace>/`, or the ref's own name when it is directly under
    /// `refs/git-mile/`.
    pub prefix: String,
    /// How many refs.
    pub count: u64,
    /// What they are, as far as this version knows.
    pub what: String,
}

/// What a task's item in a listing (and its show) has besides the fields every item has; each
/// absent when the task has none, as `relations` and `family` are in a show (a page of tasks
/// carries no run of `null`s and `[]`s).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TaskFacts {
    /// Tasks only: the workflow state (e.g. `state/in-progress`); absent when none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    /// Tasks only: the state's kind (`todo`, `in_progress`, `blocked`, `done`, `backlog`); absent when none; `done` is `closed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state_kind: Option<String>,
    /// Tasks only; absent when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub assignees: Vec<String>,
    /// Tasks only: ids of its parent tasks; absent when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parents: Vec<String>,
    /// Tasks only: ids of its child tasks; absent when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<String>,
}

/// What a page of issues or milestones with no item says of the repository's upstream tasks,
/// so that a repository holding only tasks never answers an empty page in silence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TasksNote {
    /// How many task refs there are (`refs/git-mile/tasks/`).
    pub count: u64,
    /// How to list them.
    pub hint: String,
}

/// A workflow state of upstream's tasks, and how many tasks are in it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct StateUse {
    /// The state (e.g. `state/in-progress`); `null` for the tasks that have none.
    pub state: Option<String>,
    /// Its kind (`todo`, `in_progress`, `blocked`, `done`, `backlog`; `done` is `closed`):
    /// the workflow's, else the one most of its tasks record; `null` when none.
    pub kind: Option<String>,
    /// How many tasks are in it (closed ones too, whatever the filter).
    pub tasks: u64,
    /// Whether the repository's workflow has it (a write may set it).
    pub workflow: bool,
    /// The state a new task starts in (only on that one).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub default: bool,
}

/// A parent or child of a task, as its show names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Kin {
    pub title: String,
    /// `open` or `closed`.
    pub status: String,
    pub state: Option<String>,
}
