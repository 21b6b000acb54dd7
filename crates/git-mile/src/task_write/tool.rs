//! `git_mile.create`, `git_mile.update` and `git_mile.comment` with `entity: "task"`: the
//! arguments of tasks, checked before the repository is read, and the task answered as
//! `git_mile.show` shows it after the write.

use serde::Deserialize;
use serde_json::Value;

use mcp_common::ToolError;

use super::{Create, Relation, TaskWritten, Update};
use crate::catalog::Catalog;
use crate::errors;
use crate::task::TaskRow;
use crate::task::view::TaskView;
use crate::writes::{invalid, present, task_failure};

/// Whether a write's arguments (as sent) are about a task.
pub fn is_task(args: &Value) -> bool {
    args.get("entity").and_then(Value::as_str) == Some("task")
}

/// The `entity` of a task write: `"task"` (anything else went to the other writes).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "snake_case")]
enum TaskEntity {
    Task,
}

/// A field given that applies to issues or milestones only.
fn not_for_tasks(field: &str, given: bool, instead: &str) -> Result<(), ToolError> {
    if given {
        return Err(invalid(format!(
            "{field} applies to issues and milestones only; for a task give {instead}"
        )));
    }
    Ok(())
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateArgs {
    #[allow(dead_code)]
    entity: TaskEntity,
    title: String,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    labels: Option<Vec<String>>,
    #[serde(default)]
    milestone: Option<Value>,
    #[serde(default)]
    state: Option<String>,
    #[serde(default)]
    assignees: Option<Vec<String>>,
    #[serde(default)]
    parents: Option<Vec<String>>,
}

/// `git_mile.create`'s arguments for a task, checked without reading the repository.
pub fn check_create(args: CreateArgs) -> Result<Create, ToolError> {
    not_for_tasks("milestone", args.milestone.is_some(), "parents")?;
    let create = Create {
        title: args.title,
        description: args.description,
        state: args.state,
        labels: args.labels.unwrap_or_default(),
        assignees: args.assignees.unwrap_or_default(),
        parents: args.parents.unwrap_or_default(),
    };
    super::check::create(&create).map_err(task_failure)
}

/// `git_mile.create` of a task.
pub fn create(catalog: &Catalog, create: Create) -> Result<TaskView, ToolError> {
    let written = super::create(catalog, &create).map_err(task_failure)?;
    view(catalog, &written)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UpdateArgs {
    #[allow(dead_code)]
    entity: TaskEntity,
    id: String,
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    status: Option<Value>,
    #[serde(default, rename = "addLabels")]
    add_labels: Option<Vec<String>>,
    #[serde(default, rename = "removeLabels")]
    remove_labels: Option<Vec<String>>,
    #[serde(default, deserialize_with = "present")]
    milestone: Option<Option<String>>,
    /// Absent: unchanged; `null`: cleared; a state: set.
    #[serde(default, deserialize_with = "present")]
    state: Option<Option<String>>,
    #[serde(default, rename = "addAssignees")]
    add_assignees: Option<Vec<String>>,
    #[serde(default, rename = "removeAssignees")]
    remove_assignees: Option<Vec<String>>,
    #[serde(default, rename = "addParents")]
    add_parents: Option<Vec<String>>,
    #[serde(default, rename = "removeParents")]
    remove_parents: Option<Vec<String>>,
    #[serde(default, rename = "addRelations")]
    add_relations: Option<Vec<String>>,
    #[serde(default, rename = "removeRelations")]
    remove_relations: Option<Vec<String>>,
}

/// A checked task update, its id still to resolve.
pub struct CheckedUpdate {
    id: String,
    update: Update,
}

/// `kind:id` pairs as relations.
fn relations(given: Option<Vec<String>>) -> Result<Vec<Relation>, ToolError> {
    given
        .unwrap_or_default()
        .iter()
        .map(|r| Relation::parse(r).map_err(task_failure))
        .collect()
}

/// `git_mile.update`'s arguments for a task, checked without reading the repository.
pub fn check_update(args: UpdateArgs) -> Result<CheckedUpdate, ToolError> {
    not_for_tasks("status", args.status.is_some(), "state")?;
    not_for_tasks(
        "milestone",
        args.milestone.is_some(),
        "addParents/removeParents",
    )?;
    if args.id.trim().is_empty() {
        return Err(invalid("id is empty"));
    }
    let update = Update {
        title: args.title,
        description: args.description,
        state: args.state,
        add_labels: args.add_labels.unwrap_or_default(),
        remove_labels: args.remove_labels.unwrap_or_default(),
        add_assignees: args.add_assignees.unwrap_or_default(),
        remove_assignees: args.remove_assignees.unwrap_or_default(),
        add_parents: args.add_parents.unwrap_or_default(),
        remove_parents: args.remove_parents.unwrap_or_default(),
        add_relations: relations(args.add_relations)?,
        remove_relations: relations(args.remove_relations)?,
    };
    Ok(CheckedUpdate {
        id: args.id,
        update: super::check::update(&update).map_err(task_failure)?,
    })
}

/// `git_mile.update` of a task.
pub fn update(catalog: &Catalog, checked: CheckedUpdate) -> Result<TaskView, ToolError> {
    let written = super::update(catalog, &checked.id, &checked.update).map_err(task_failure)?;
    view(catalog, &written)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CommentArgs {
    #[allow(dead_code)]
    entity: TaskEntity,
    id: String,
    body: String,
    /// Edit this comment (its id or a prefix) instead of adding one.
    #[serde(default, rename = "commentId")]
    comment_id: Option<String>,
}

/// `git_mile.comment`'s arguments for a task, checked without reading the repository.
pub fn check_comment(args: CommentArgs) -> Result<CommentArgs, ToolError> {
    if args.id.trim().is_empty() {
        return Err(invalid("id is empty"));
    }
    if args
        .comment_id
        .as_deref()
        .is_some_and(|c| c.trim().is_empty())
    {
        return Err(invalid("commentId is empty"));
    }
    crate::ops::check_comment(&args.body).map_err(task_failure)?;
    Ok(args)
}

/// `git_mile.comment` on a task: a comment added, or the one `commentId` names edited.
pub fn comment(catalog: &Catalog, args: CommentArgs) -> Result<TaskView, ToolError> {
    let written = match &args.comment_id {
        Some(comment) => super::edit_comment(catalog, &args.id, comment, &args.body),
        None => super::comment(catalog, &args.id, &args.body),
    }
    .map_err(task_failure)?;
    view(catalog, &written)
}

/// The task written, as `git_mile.show` shows it (read from its ref alone).
fn view(catalog: &Catalog, written: &TaskWritten) -> Result<TaskView, ToolError> {
    let id = uuid::Uuid::parse_str(&written.id)
        .map_err(|_| errors::internal(format!("task {} was written with a bad id", written.id)))?;
    let task = super::current(catalog, id).map_err(task_failure)?;
    let row = TaskRow {
        task: &task,
        comment_count: task.comments.len() as u64,
    };
    TaskView::shown(&row, |ids| catalog.tasks_among(ids)).map_err(|err| errors::repository(&err))
}
