//! `git mile update`, and the writes of upstream git-mile's tasks from the command line
//! (`create task`, `update`, `comment`, `edit` and `label` of a task): the CLI's side of
//! `git_mile.create`, `git_mile.update` and `git_mile.comment`.

use clap::{Args, ValueEnum};

use super::{BOTH, EntityArg, emit, written_text};
use crate::catalog::Catalog;
use crate::listing::Target;
use crate::model::{Kind, Status};
use crate::ops::{self, OpError, Update};
use crate::task_write::{self, Relation, TaskWritten};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum StatusArg {
    Open,
    Closed,
}

/// `git mile update`: whatever `git_mile.update` changes.
#[derive(Debug, Args)]
pub struct UpdateArgs {
    /// The id: the full UUID or a unique prefix of at least 4 characters.
    #[arg(value_name = "ID")]
    pub id: String,
    /// What the id names, when it may name several kinds (default: whichever it names).
    #[arg(long, value_enum, value_name = "ENTITY")]
    pub entity: Option<EntityArg>,
    /// The new title: one line of 1 to 500 characters.
    #[arg(long, value_name = "TEXT")]
    pub title: Option<String>,
    /// The new description, replacing the old one whole (up to 256 KiB; empty clears a
    /// task's).
    #[arg(long, value_name = "TEXT")]
    pub description: Option<String>,
    /// Issues and milestones: open or close.
    #[arg(long, value_enum, value_name = "STATUS")]
    pub status: Option<StatusArg>,
    /// A label to add (repeatable).
    #[arg(long = "add-label", value_name = "LABEL")]
    pub add_labels: Vec<String>,
    /// A label to remove (repeatable).
    #[arg(long = "remove-label", value_name = "LABEL")]
    pub remove_labels: Vec<String>,
    /// Issues: attach to this milestone (id or prefix).
    #[arg(long, value_name = "MILESTONE", conflicts_with = "no_milestone")]
    pub milestone: Option<String>,
    /// Issues: detach from the milestone.
    #[arg(long)]
    pub no_milestone: bool,
    /// Tasks: the workflow state (one of the workflow's, from .git-mile/config.toml or
    /// upstream's built-in one), written with the kind the workflow gives it.
    #[arg(long, value_name = "STATE", conflicts_with = "clear_state")]
    pub state: Option<String>,
    /// Tasks: clear the state.
    #[arg(long)]
    pub clear_state: bool,
    /// Tasks: an assignee to add (repeatable).
    #[arg(long = "add-assignee", value_name = "NAME")]
    pub add_assignees: Vec<String>,
    /// Tasks: an assignee to remove (repeatable).
    #[arg(long = "remove-assignee", value_name = "NAME")]
    pub remove_assignees: Vec<String>,
    /// Tasks: a parent task to link (id or prefix; repeatable).
    #[arg(long = "add-parent", value_name = "TASK")]
    pub add_parents: Vec<String>,
    /// Tasks: a parent task to unlink (repeatable).
    #[arg(long = "remove-parent", value_name = "TASK")]
    pub remove_parents: Vec<String>,
    /// Tasks: a relation to add, `KIND:TASK` (e.g. `blocks:019a5b2c`; repeatable).
    #[arg(long = "add-relation", value_name = "KIND:TASK")]
    pub add_relations: Vec<String>,
    /// Tasks: a relation to remove, `KIND:TASK` (repeatable).
    #[arg(long = "remove-relation", value_name = "KIND:TASK")]
    pub remove_relations: Vec<String>,
    /// Print the result as JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// What a write command names: an issue or a milestone, or a task.
pub enum Named {
    Entity(Kind, String),
    Task(String),
}

/// The entity `id` names among `entity` (all kinds when `None`).
pub fn resolve(catalog: &Catalog, entity: Option<EntityArg>, id: &str) -> Result<Named, OpError> {
    let kinds: &[Kind] = match entity.map(EntityArg::target) {
        Some(Target::Task) => return task(catalog, id),
        Some(Target::Entity(kind)) => &[kind][..],
        None => &BOTH,
    };
    match ops::resolve(catalog, kinds, id) {
        Ok((kind, id)) => Ok(Named::Entity(kind, id)),
        Err(OpError::NotFound { what, id: given }) if entity.is_none() => match task(catalog, id) {
            Ok(named) => Ok(named),
            Err(OpError::NotFound { .. }) => Err(OpError::NotFound {
                what: if what == "issue or milestone" {
                    "issue, milestone or task"
                } else {
                    what
                },
                id: given,
            }),
            Err(err) => Err(err),
        },
        Err(err) => Err(err),
    }
}

fn task(catalog: &Catalog, id: &str) -> Result<Named, OpError> {
    task_write::resolve(catalog, id).map(|id| Named::Task(id.hyphenated().to_string()))
}

/// A task write for a terminal.
pub fn task_text(w: &TaskWritten, done: &str) -> String {
    if w.events.is_empty() && w.linked.is_empty() {
        format!("task {}: nothing to change", w.id)
    } else {
        format!("{done} task {}", w.id)
    }
}

/// `KIND:TASK` as relations.
fn relations(given: &[String]) -> Result<Vec<Relation>, OpError> {
    given.iter().map(|r| Relation::parse(r)).collect()
}

/// A field given that does not apply to what the id names.
fn not_for(field: &str, given: bool, what: &str) -> Result<(), OpError> {
    if given {
        return Err(OpError::Invalid(format!(
            "{field} does not apply to {what}"
        )));
    }
    Ok(())
}

/// `git mile update`.
pub fn run(catalog: &Catalog, args: &UpdateArgs) -> Result<(), OpError> {
    let json = args.json;
    match resolve(catalog, args.entity, &args.id)? {
        Named::Task(id) => {
            not_for("--status", args.status.is_some(), "tasks (give --state)")?;
            not_for(
                "--milestone",
                args.milestone.is_some() || args.no_milestone,
                "tasks (give --add-parent)",
            )?;
            let update = task_write::Update {
                title: args.title.clone(),
                description: args.description.clone(),
                state: match (&args.state, args.clear_state) {
                    (Some(state), _) => Some(Some(state.clone())),
                    (None, true) => Some(None),
                    (None, false) => None,
                },
                add_labels: args.add_labels.clone(),
                remove_labels: args.remove_labels.clone(),
                add_assignees: args.add_assignees.clone(),
                remove_assignees: args.remove_assignees.clone(),
                add_parents: args.add_parents.clone(),
                remove_parents: args.remove_parents.clone(),
                add_relations: relations(&args.add_relations)?,
                remove_relations: relations(&args.remove_relations)?,
            };
            let w = task_write::update(catalog, &id, &update)?;
            emit(json, &w, |w| task_text(w, "updated"))
        }
        Named::Entity(kind, id) => {
            let tasks_only = args.state.is_some()
                || args.clear_state
                || !args.add_assignees.is_empty()
                || !args.remove_assignees.is_empty()
                || !args.add_parents.is_empty()
                || !args.remove_parents.is_empty()
                || !args.add_relations.is_empty()
                || !args.remove_relations.is_empty();
            not_for(
                "--state, --clear-state, assignees, parents and relations",
                tasks_only,
                "issues and milestones (tasks only)",
            )?;
            let milestone = match (&args.milestone, args.no_milestone) {
                (Some(m), _) => Some(Some(ops::resolve(catalog, &[Kind::Milestone], m)?.1)),
                (None, true) => Some(None),
                (None, false) => None,
            };
            let update = Update {
                title: args.title.clone(),
                description: args.description.clone(),
                status: args.status.map(|s| match s {
                    StatusArg::Open => Status::Open,
                    StatusArg::Closed => Status::Closed,
                }),
                add_labels: args.add_labels.clone(),
                remove_labels: args.remove_labels.clone(),
                milestone,
            };
            if update.is_empty() {
                return Err(OpError::Invalid(
                    "nothing to update: give --title, --description, --status, --add-label, --remove-label, --milestone or --no-milestone".into(),
                ));
            }
            let w = ops::update(catalog.store(), kind, &id, &update)?;
            emit(json, &w, |w| written_text(w, "updated"))
        }
    }
}

/// `git mile create task`.
pub fn create_task(
    catalog: &Catalog,
    request: &task_write::Create,
    json: bool,
) -> Result<(), OpError> {
    let w = task_write::create(catalog, request)?;
    emit(json, &w, |w| w.id.clone())
}

/// `git mile comment` of a task: a comment added, or (`edit`) one edited.
pub fn comment_task(
    catalog: &Catalog,
    id: &str,
    body: &str,
    edit: Option<&str>,
    json: bool,
) -> Result<(), OpError> {
    let w = match edit {
        Some(comment) => task_write::edit_comment(catalog, id, comment, body)?,
        None => task_write::comment(catalog, id, body)?,
    };
    let done = if edit.is_some() {
        "edited a comment of"
    } else {
        "commented on"
    };
    emit(json, &w, |w| task_text(w, done))
}

/// `git mile edit` and `git mile label` of a task.
pub fn update_task(
    catalog: &Catalog,
    id: &str,
    update: &task_write::Update,
    done: &str,
    json: bool,
) -> Result<(), OpError> {
    let w = task_write::update(catalog, id, update)?;
    emit(json, &w, |w| task_text(w, done))
}
