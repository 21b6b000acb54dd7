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

/// What a task's item in a listing has besides the fields every item has.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TaskFacts {
    /// Tasks only: the workflow state (e.g. `state/in-progress`), `null` when none.
    pub state: Option<String>,
    /// Tasks only: the state's kind (`todo`, `in_progress`, `blocked`, `done`, `backlog`), `null` when none; `done` is `closed`.
    pub state_kind: Option<String>,
    /// Tasks only.
    pub assignees: Vec<String>,
    /// Tasks only: ids of its parent tasks.
    pub parents: Vec<String>,
    /// Tasks only: ids of its child tasks.
    pub children: Vec<String>,
}
