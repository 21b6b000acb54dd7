//! The write tools of `git mile mcp-server`: `git_mile.create`, `git_mile.update` and
//! `git_mile.comment`. Each checks its arguments, resolves the ids it is given as
//! `git_mile.show` does, writes through the store's compare-and-swap (one event per change,
//! authored with the user's git identity, all of a call's events in one ref update), and
//! answers the entity as `git_mile.show` shows it. `--read-only` leaves them out.

use rmcp::model::Tool;
use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Value, json};

use mcp_common::{ErrorCode, ToolError, codes};

use crate::catalog::Catalog;
use crate::errors;
use crate::model::{Kind, Status};
use crate::ops::{self, OpError, Refusal, Update, Written};
use crate::quote;
use crate::schema::{entity_schema, id_schema, output_schema, tool, write_hints};
use crate::store::StoreError;
use crate::views::EntityView;

pub const CREATE: &str = "git_mile.create";
pub const UPDATE: &str = "git_mile.update";
pub const COMMENT: &str = "git_mile.comment";

/// What the server's instructions add when the write tools are offered.
pub const INSTRUCTIONS: &str = " git_mile.create files an issue or a milestone, git_mile.update \
changes title, description, status (open|closed), labels (addLabels/removeLabels) or an issue's \
milestone (an id, or null to detach), and git_mile.comment adds a comment; each answers the \
entity as git_mile.show does and is authored with the user's git identity. With entity \"task\" \
they write upstream git-mile's tasks as upstream does: state (the workflow's; null clears), \
assignees, parents, relations, and comments edited by commentId.";

/// The user's git identity is not configured: nothing can be authored.
pub const NO_IDENTITY: ErrorCode = ErrorCode::new("no_identity", mcp_common::ErrorClass::NotFound);

/// A task whose history holds an event this version cannot read (a later upstream's):
/// nothing is appended after it.
pub const NEWER_EVENT: ErrorCode = ErrorCode::new("newer_event", mcp_common::ErrorClass::Conflict);
/// The repository has upstream git-mile hooks for the write, which this version does not run.
pub const UPSTREAM_HOOKS: ErrorCode =
    ErrorCode::new("upstream_hooks", mcp_common::ErrorClass::Conflict);
/// The repository's `.git-mile/config.toml` cannot be read as upstream reads it.
pub const UPSTREAM_CONFIG: ErrorCode =
    ErrorCode::new("upstream_config", mcp_common::ErrorClass::Conflict);

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateArgs {
    entity: Kind,
    title: String,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    labels: Option<Vec<String>>,
    #[serde(default)]
    milestone: Option<String>,
    #[serde(default, deserialize_with = "given")]
    state: Option<Value>,
    #[serde(default, deserialize_with = "given")]
    assignees: Option<Value>,
    #[serde(default, deserialize_with = "given")]
    parents: Option<Value>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UpdateArgs {
    entity: Kind,
    id: String,
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    description: Option<String>,
    /// A string, checked after decoding: an unknown status is an invalid argument (-32602),
    /// not an undecodable call.
    #[serde(default)]
    status: Option<String>,
    #[serde(default, rename = "addLabels")]
    add_labels: Option<Vec<String>>,
    #[serde(default, rename = "removeLabels")]
    remove_labels: Option<Vec<String>>,
    /// Absent: unchanged; `null`: detach; an id: attach.
    #[serde(default, deserialize_with = "present")]
    milestone: Option<Option<String>>,
    #[serde(default, deserialize_with = "given")]
    state: Option<Value>,
    #[serde(default, rename = "addAssignees", deserialize_with = "given")]
    add_assignees: Option<Value>,
    #[serde(default, rename = "removeAssignees", deserialize_with = "given")]
    remove_assignees: Option<Value>,
    #[serde(default, rename = "addParents", deserialize_with = "given")]
    add_parents: Option<Value>,
    #[serde(default, rename = "removeParents", deserialize_with = "given")]
    remove_parents: Option<Value>,
    #[serde(default, rename = "addRelations", deserialize_with = "given")]
    add_relations: Option<Value>,
    #[serde(default, rename = "removeRelations", deserialize_with = "given")]
    remove_relations: Option<Value>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CommentArgs {
    entity: Kind,
    id: String,
    body: String,
    #[serde(default, rename = "commentId", deserialize_with = "given")]
    comment_id: Option<Value>,
}

/// Any value that is present, even `null`, against one that is absent (`None`).
fn given<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}

/// Refuse the fields of tasks given for an issue or a milestone.
fn tasks_only(fields: &[(&str, bool)]) -> Result<(), ToolError> {
    match fields.iter().find(|(_, given)| *given) {
        Some((name, _)) => Err(invalid(format!(
            "{name} applies to tasks only (entity \"task\"), not to issues and milestones"
        ))),
        None => Ok(()),
    }
}

/// A field that is present, even as `null` (`Some(None)`), against one that is absent
/// (`None`, by `#[serde(default)]`).
pub(crate) fn present<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Option<String>>, D::Error> {
    Option::<String>::deserialize(deserializer).map(Some)
}

/// What every answer of a write has (the entity or task as `git_mile.show` answers it, whose
/// outputSchema describes the rest): its `outputSchema`.
#[derive(Serialize, JsonSchema)]
#[allow(dead_code)] // only its schema is used; answers are built from their parts
struct WriteOutput {
    id: Option<String>,
    /// `issue`, `milestone` or `task`.
    kind: Option<String>,
    title: Option<String>,
    status: Option<String>,
}

/// An invalid argument (`-32602`).
pub(crate) fn invalid(message: impl Into<String>) -> ToolError {
    ToolError::new(codes::INVALID_PARAMS, message)
}

/// The kind an error of `ops` names (`what`), else the call's own.
fn named(what: &'static str, kind: &'static str) -> &'static str {
    match what {
        "milestone" | "issue" | "task" => what,
        _ => kind,
    }
}

/// A failed operation on a `kind` as the contract reports it.
fn failure(kind: Kind, err: OpError) -> ToolError {
    failure_of(kind.as_str(), err)
}

/// A failed read (`git_mile.log`) of a `kind` (`issue`, `milestone`, `task`) as the contract
/// reports it.
pub fn read_failure(kind: &'static str, err: OpError) -> ToolError {
    failure_of(kind, err)
}

/// A failed write of a task as the contract reports it.
pub fn task_failure(err: OpError) -> ToolError {
    failure_of("task", err)
}

fn failure_of(kind: &'static str, err: OpError) -> ToolError {
    match err {
        OpError::Invalid(message) => invalid(message),
        OpError::NotFound { what, id } => errors::not_found_named(named(what, kind), &id),
        OpError::Ambiguous { id, candidates } => errors::ambiguous_named(kind, &id, &candidates),
        OpError::Unreadable { what, id, why } => {
            errors::unreadable_named(named(what, kind), id, why)
        }
        OpError::Store(StoreError::NoIdentity) => ToolError::new(
            NO_IDENTITY,
            "no git identity to author the change: user.name and user.email are not set for this repository (or hold characters git refuses: < > or a line break)",
        )
        .with_hint(
            "Set them (git config --global user.name \"…\"; git config --global user.email …) and restart the server; nothing was written.",
        ),
        OpError::Store(StoreError::Contended(name)) => {
            let id = name.rsplit('/').next().unwrap_or(&name).to_string();
            ToolError::new(
                codes::CONFLICT,
                format!(
                    "{kind} `{id}` kept changing under this write: other writers moved {name} for 10 s; nothing was written"
                ),
            )
            .with_hint(
                "Something is writing this entity without pause (a script, a pull in a loop): show it again once that stops, then decide what to change.",
            )
        }
        OpError::Store(StoreError::Locked { ref_name, why }) => {
            let id = ref_name.rsplit('/').next().unwrap_or(&ref_name).to_string();
            ToolError::new(
                codes::CONFLICT,
                format!("{kind} `{id}` cannot be written: {why}; nothing was written"),
            )
            .with_hint(
                "If no git or git mile command is running in this repository, remove the lock file the message names, then call again.",
            )
        }
        // git's own cleanup removed, again and again, a directory the write went into: the
        // same call works once it is done, so it is retryable, unlike a conflict.
        OpError::Store(err @ StoreError::Vanished { .. }) => ToolError::new(
            errors::REPOSITORY_BUSY,
            format!("{err}; nothing was written"),
        )
        .with_hint(
            "Another git process (git gc, git prune, git pack-refs) is cleaning up this repository: call again in a moment.",
        ),
        OpError::Store(StoreError::NotFound { kind: what, id }) => {
            errors::not_found_named(named(what, kind), &id)
        }
        OpError::Store(err) => errors::repository(&err),
        OpError::Incomplete(message) => errors::internal(message),
        OpError::Refused { why, message, hint } => ToolError::new(
            match why {
                Refusal::Invalid => codes::INVALID_PARAMS,
                Refusal::NotFound => errors::NOT_FOUND,
                Refusal::NewerEvent => NEWER_EVENT,
                Refusal::Hooks => UPSTREAM_HOOKS,
                Refusal::Config => UPSTREAM_CONFIG,
            },
            message,
        )
        .with_hint(hint),
    }
}

fn nonempty(what: &str, value: &str) -> Result<(), ToolError> {
    if value.trim().is_empty() {
        return Err(invalid(format!("{what} is empty")));
    }
    Ok(())
}

/// `git_mile.create`'s arguments, checked without reading the repository.
pub fn check_create(args: CreateArgs) -> Result<CreateArgs, ToolError> {
    let kind = args.entity;
    tasks_only(&[
        ("state", args.state.is_some()),
        ("assignees", args.assignees.is_some()),
        ("parents", args.parents.is_some()),
    ])?;
    nonempty("title", &args.title)?;
    match (&args.milestone, kind) {
        (Some(_), Kind::Milestone) => {
            return Err(invalid(
                "milestone applies to issues only: a milestone cannot be attached to another",
            ));
        }
        (Some(milestone), Kind::Issue) => nonempty("milestone", milestone)?,
        (None, _) => {}
    }
    ops::check_create(
        &args.title,
        args.description.as_deref().unwrap_or(""),
        args.labels.as_deref().unwrap_or(&[]),
    )
    .map_err(|err| failure(kind, err))?;
    Ok(args)
}

/// `git_mile.create`: the milestone resolved, the entity written whole.
pub fn create(catalog: &Catalog, args: CreateArgs) -> Result<EntityView, ToolError> {
    let kind = args.entity;
    let milestone = match &args.milestone {
        Some(m) => Some(
            ops::resolve(catalog, &[Kind::Milestone], m)
                .map_err(|err| failure(Kind::Milestone, err))?
                .1,
        ),
        None => None,
    };
    let written = ops::create(
        catalog.store(),
        kind,
        &args.title,
        args.description.as_deref().unwrap_or(""),
        args.labels.as_deref().unwrap_or(&[]),
        milestone.as_deref(),
    )
    .map_err(|err| failure(kind, err))?;
    view(catalog, &written)
}

/// An update whose arguments were checked: the ids still to resolve.
pub struct CheckedUpdate {
    kind: Kind,
    id: String,
    update: Update,
    /// As given: absent, `null`, or a milestone id to resolve.
    milestone: Option<Option<String>>,
}

/// `git_mile.update`'s arguments, checked without reading the repository.
pub fn check_update(args: UpdateArgs) -> Result<CheckedUpdate, ToolError> {
    let kind = args.entity;
    tasks_only(&[
        ("state", args.state.is_some()),
        ("addAssignees", args.add_assignees.is_some()),
        ("removeAssignees", args.remove_assignees.is_some()),
        ("addParents", args.add_parents.is_some()),
        ("removeParents", args.remove_parents.is_some()),
        ("addRelations", args.add_relations.is_some()),
        ("removeRelations", args.remove_relations.is_some()),
    ])?;
    let status = args
        .status
        .as_deref()
        .map(|status| match status {
            "open" => Ok(Status::Open),
            "closed" => Ok(Status::Closed),
            other => Err(invalid(format!(
                "unknown status `{}`: give \"open\" or \"closed\"",
                quote::excerpt(other)
            ))),
        })
        .transpose()?;
    nonempty("id", &args.id)?;
    if let Some(title) = &args.title {
        nonempty("title", title)?;
    }
    if let Some(Some(milestone)) = &args.milestone {
        nonempty("milestone", milestone)?;
    }
    let update = Update {
        title: args.title,
        description: args.description,
        status,
        add_labels: args.add_labels.unwrap_or_default(),
        remove_labels: args.remove_labels.unwrap_or_default(),
        milestone: None,
    };
    if update.is_empty() && args.milestone.is_none() {
        return Err(invalid(
            "nothing to update: give at least one of title, description, status, addLabels, removeLabels, milestone",
        ));
    }
    if kind == Kind::Milestone && args.milestone.is_some() {
        return Err(invalid(
            "milestone applies to issues only: a milestone cannot be attached to another",
        ));
    }
    ops::check_update(&update).map_err(|err| failure(kind, err))?;
    Ok(CheckedUpdate {
        kind,
        id: args.id,
        update,
        milestone: args.milestone,
    })
}

/// `git_mile.update`: the ids resolved, then one event per field that differs, none when
/// nothing does.
pub fn update(catalog: &Catalog, checked: CheckedUpdate) -> Result<EntityView, ToolError> {
    let CheckedUpdate {
        kind,
        id,
        mut update,
        milestone,
    } = checked;
    let (_, id) = ops::resolve(catalog, &[kind], &id).map_err(|err| failure(kind, err))?;
    update.milestone = match milestone {
        None => None,
        Some(None) => Some(None),
        Some(Some(m)) => Some(Some(
            ops::resolve(catalog, &[Kind::Milestone], &m)
                .map_err(|err| failure(Kind::Milestone, err))?
                .1,
        )),
    };
    let written =
        ops::update(catalog.store(), kind, &id, &update).map_err(|err| failure(kind, err))?;
    view(catalog, &written)
}

/// `git_mile.comment`'s arguments, checked without reading the repository.
pub fn check_comment(args: CommentArgs) -> Result<CommentArgs, ToolError> {
    tasks_only(&[("commentId", args.comment_id.is_some())])?;
    nonempty("id", &args.id)?;
    nonempty("body", &args.body)?;
    ops::check_comment(&args.body).map_err(|err| failure(args.entity, err))?;
    Ok(args)
}

/// `git_mile.comment`: one `comment_added` event.
pub fn comment(catalog: &Catalog, args: CommentArgs) -> Result<EntityView, ToolError> {
    let kind = args.entity;
    let (_, id) = ops::resolve(catalog, &[kind], &args.id).map_err(|err| failure(kind, err))?;
    let written =
        ops::comment(catalog.store(), kind, &id, &args.body).map_err(|err| failure(kind, err))?;
    view(catalog, &written)
}

/// The written entity as `git_mile.show` has it: its state after the write, with its stats
/// and its milestone's title from the catalog.
fn view(catalog: &Catalog, written: &Written) -> Result<EntityView, ToolError> {
    let snapshot = catalog.snapshot().map_err(|err| errors::repository(&err))?;
    Ok(EntityView::from_row(&snapshot.row(&written.entity)))
}

fn labels_schema(description: &str) -> Value {
    json!({
        "type": "array",
        "maxItems": ops::MAX_LABELS,
        "items": { "type": "string", "minLength": 1, "maxLength": 100 },
        "description": description
    })
}

/// The three write tools.
pub fn tools() -> Vec<Tool> {
    // Tasks' names, ids and relations (`kind:id`): plain strings, checked by the tool.
    let strings = |description: &str| json!({ "type": "array", "items": { "type": "string" }, "description": description });
    let create_input = json!({
        "type": "object",
        "properties": {
            "entity": entity_schema(),
            "title": { "type": "string", "minLength": 1, "maxLength": ops::MAX_TITLE, "description": "One line." },
            "description": { "type": "string", "description": "Markdown; default empty." },
            "labels": labels_schema("Labels to start with."),
            "milestone": { "type": "string", "description": "Issues only: its milestone (id or prefix)." },
            "state": { "type": "string", "description": "Tasks." },
            "assignees": strings("Tasks."),
            "parents": strings("Tasks.")
        },
        "required": ["entity", "title"],
        "additionalProperties": false
    });
    let update_input = json!({
        "type": "object",
        "properties": {
            "entity": entity_schema(),
            "id": id_schema(),
            "title": { "type": "string", "minLength": 1, "maxLength": ops::MAX_TITLE, "description": "New title (one line)." },
            "description": { "type": "string", "description": "Replaces the description." },
            "status": { "type": "string", "enum": ["open", "closed"], "description": "Close or reopen." },
            "addLabels": labels_schema("Labels to add."),
            "removeLabels": labels_schema("Labels to remove."),
            // `null` is meaningful here (detach), so it is an explicit alternative: a type
            // array is what single-type dialects reject.
            "milestone": {
                "anyOf": [{ "type": "string" }, { "type": "null" }],
                "description": "Issues only: milestone id or prefix; null detaches."
            },
            "state": {
                "anyOf": [{ "type": "string" }, { "type": "null" }],
                "description": "Tasks: null clears."
            },
            "addAssignees": strings("Tasks."),
            "removeAssignees": strings("Tasks."),
            "addParents": strings("Tasks."),
            "removeParents": strings("Tasks."),
            "addRelations": strings("Tasks: kind:id."),
            "removeRelations": strings("Tasks: kind:id.")
        },
        "required": ["entity", "id"],
        "additionalProperties": false
    });
    let comment_input = json!({
        "type": "object",
        "properties": {
            "entity": entity_schema(),
            "id": id_schema(),
            "body": { "type": "string", "minLength": 1, "description": "Markdown." },
            "commentId": { "type": "string", "description": "Tasks: edit this comment." }
        },
        "required": ["entity", "id", "body"],
        "additionalProperties": false
    });
    // The entity or task as `git_mile.show` answers it (whose outputSchema describes it
    // whole) or, on an `isError` result, `{"error": …}`: the fields every answer has, typed;
    // the error member, the same for every tool, left undescribed (an error result validates
    // all the same, the schema allowing members it does not name).
    let output = output_schema::<WriteOutput>();
    let create = tool(
        CREATE,
        "File an issue, milestone or task as the user's git identity; answers as git_mile.show.",
        create_input,
        write_hints("Create entity", false),
        output.clone(),
    );
    let update = tool(
        UPDATE,
        "Change an issue, milestone or task (only what differs); answers as git_mile.show.",
        update_input,
        write_hints("Update entity", true),
        output.clone(),
    );
    let comment = tool(
        COMMENT,
        "Comment on an issue, milestone or task as the user; answers as git_mile.show.",
        comment_input,
        write_hints("Comment", false),
        output,
    );
    vec![create, update, comment]
}
