//! Writes of upstream git-mile's tasks (`refs/git-mile/tasks/<id>`), as upstream's own
//! writer makes them (`git-mile-app`'s `TaskWriter`), so that upstream reads them exactly as
//! if it had written them:
//!
//! - one event per commit, encoded byte for byte as upstream's store writes it
//!   ([`encode`]); the commit's tree empty, its author and committer the actor, timed now;
//! - the actor resolved as upstream resolves it ([`actor`]);
//! - each event's `lamport` one more than the greatest of the task's events before it (the
//!   events of one call numbered on from there), its `ts` now, its id a UUIDv7;
//! - the events of an update in upstream's order (title, state, description, labels added
//!   and removed, assignees added and removed, then links), one `labelsAdded` for all the
//!   labels added, and so on; a state written with the kind the workflow gives it
//!   ([`project`]); a parent link (`childLinked`, `childUnlinked`) in both tasks' refs;
//! - checked as upstream checks, and more (see [`check`]), before anything is written.
//!
//! What this version adds: only what differs from the task is written (an update that
//! changes nothing writes nothing); each task's events of one call are chained and its ref
//! moved once, by the store's compare-and-swap, planned again when another writer moved the
//! ref meanwhile (so concurrent writers lose nothing); a task whose history holds an event
//! this version cannot read (a later upstream's) is not written to: its events stay as they
//! are, nothing is appended after them ([`Refusal::NewerEvent`]); upstream's hooks are not
//! run, and a write that upstream would hand to one is refused ([`Refusal::Hooks`]).
//!
//! Reading stays in [`crate::task`], which writes nothing.

pub mod check;
pub mod encode;
pub mod project;
pub mod tool;

use std::collections::{BTreeSet, HashMap, VecDeque};

use chrono::Utc;
use uuid::Uuid;

use crate::catalog::Catalog;
use crate::ops::{OpError, OpResult, Refusal};
use crate::store::{RawCommit, StoreError, Tip};
use crate::task::event::{Actor, TaskChange};
use crate::task::{Task, TaskHistory, TaskLookup};
pub use check::{Create, Relation, Update};
use encode::Envelope;
use project::Project;

pub use crate::task::ref_name as task_ref;

/// What a write did.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct TaskWritten {
    /// `task`.
    pub kind: &'static str,
    /// The task's id.
    pub id: String,
    /// The events written in the task's ref, by type (empty when nothing needed to change).
    pub events: Vec<&'static str>,
    /// The events written in other tasks' refs (a parent's side of a link), by type.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub linked: Vec<&'static str>,
    /// The comment added or edited.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
}

const NAME_VARS: [&str; 3] = ["GIT_MILE_ACTOR_NAME", "GIT_AUTHOR_NAME", "USER"];
const EMAIL_VARS: [&str; 2] = ["GIT_MILE_ACTOR_EMAIL", "GIT_AUTHOR_EMAIL"];

/// The actor of an event, as upstream resolves it (`git-mile-app`'s `default_actor`): from
/// the environment when it gives both a name (`GIT_MILE_ACTOR_NAME`, else `GIT_AUTHOR_NAME`,
/// else `USER`) and an email (`GIT_MILE_ACTOR_EMAIL`, else `GIT_AUTHOR_EMAIL`), else git's
/// `user.name` and `user.email`. Where upstream falls back on `git-mile
/// <git-mile@example.invalid>`, this version writes nothing ([`StoreError::NoIdentity`]), as
/// for its own entities.
pub fn actor(catalog: &Catalog) -> OpResult<Actor> {
    let env = |keys: &[&str]| {
        keys.iter()
            .find_map(|k| std::env::var(k).ok().filter(|v| !v.trim().is_empty()))
    };
    let actor = match (env(&NAME_VARS), env(&EMAIL_VARS)) {
        (Some(name), Some(email)) => Some(Actor { name, email }),
        _ => {
            let repo = catalog.store().repository();
            let config = repo.config_snapshot();
            match (config.string("user.name"), config.string("user.email")) {
                (Some(name), Some(email)) => Some(Actor {
                    name: name.to_string(),
                    email: email.to_string(),
                }),
                _ => None,
            }
        }
    };
    // What git refuses in a signature (upstream's `Signature::now` fails on it).
    let unusable = |s: &str| s.contains(['<', '>', '\n', '\0']);
    match actor {
        Some(a) if !a.name.trim().is_empty() && !unusable(&a.name) && !unusable(&a.email) => Ok(a),
        _ => Err(StoreError::NoIdentity.into()),
    }
}

/// The refusal of a write to task `id`, whose history cannot be read (`why`).
fn unreadable(id: &str, why: &str) -> OpError {
    OpError::refused(
        Refusal::NewerEvent,
        format!(
            "task {id} cannot be read by this version ({}); nothing was written, and its events are kept as they are",
            crate::quote::excerpt(why)
        ),
        "If a later upstream git-mile wrote it, change this task with that version (this one appends nothing after an event it cannot read); otherwise `git fsck` tells whether the repository is damaged.",
    )
}

/// The task `id` names: a full id (any spelling of a UUID) or a unique prefix of at least 4
/// characters. A full id is looked up by its ref alone (no other ref is read); the task must
/// be readable.
pub fn resolve(catalog: &Catalog, id: &str) -> OpResult<Uuid> {
    if let Ok(uuid) = Uuid::parse_str(id.trim()) {
        current(catalog, uuid)?;
        return Ok(uuid);
    }
    let tasks = catalog.tasks_named(id)?;
    match tasks.lookup(id) {
        TaskLookup::Found(row) => parse_id(&row.task.id),
        TaskLookup::NotFound => Err(OpError::NotFound {
            what: "task",
            id: id.trim().to_string(),
        }),
        TaskLookup::Ambiguous(candidates) => Err(OpError::Ambiguous {
            id: id.trim().to_string(),
            candidates,
        }),
        TaskLookup::Unreadable(id, why) => Err(unreadable(&id, &why)),
    }
}

/// Task `id` as its ref says now (read through the catalog's cache of tasks).
pub fn current(catalog: &Catalog, id: Uuid) -> OpResult<std::sync::Arc<Task>> {
    let not_found = || OpError::NotFound {
        what: "task",
        id: id.hyphenated().to_string(),
    };
    match catalog.store().ref_tip(&task_ref(id))? {
        Tip::At(tip) => history(catalog, id, tip).map(|h| h.task),
        Tip::Missing => Err(not_found()),
        Tip::Broken(why) => Err(OpError::Unreadable {
            what: "task",
            id: id.hyphenated().to_string(),
            why,
        }),
    }
}

fn parse_id(id: &str) -> OpResult<Uuid> {
    Uuid::parse_str(id).map_err(|_| OpError::NotFound {
        what: "task",
        id: crate::quote::excerpt(id),
    })
}

/// The history of task `id` at `tip`, or the refusal to write to it.
fn history(catalog: &Catalog, id: Uuid, tip: gix::ObjectId) -> OpResult<TaskHistory> {
    catalog
        .task_history(id, tip)
        .map_err(|why| unreadable(&id.hyphenated().to_string(), &why))
}

/// Events of one task, numbered and encoded as they are planned.
struct Chain<'a> {
    task: Uuid,
    actor: &'a Actor,
    lamport: u64,
    commits: Vec<RawCommit>,
    kinds: Vec<&'static str>,
}

impl<'a> Chain<'a> {
    /// Events of `task` after `history` (none: a new task).
    fn after(task: Uuid, actor: &'a Actor, history: Option<&TaskHistory>) -> Self {
        let lamport = history
            .and_then(|h| h.events.iter().map(|e| e.lamport).max())
            .unwrap_or(0);
        Self {
            task,
            actor,
            lamport: lamport.saturating_add(1),
            commits: Vec::new(),
            kinds: Vec::new(),
        }
    }

    fn push(&mut self, kind: TaskChange) -> OpResult<()> {
        let envelope = Envelope::new(
            encode::new_id(),
            self.lamport,
            Utc::now(),
            self.actor,
            self.task,
            &kind,
        );
        let message = envelope
            .message()
            .map_err(|e| OpError::Invalid(format!("the event cannot be encoded: {e}")))?;
        self.commits.push(RawCommit {
            actor: crate::event::Actor {
                name: self.actor.name.clone(),
                email: self.actor.email.clone(),
            },
            message,
        });
        self.kinds.push(kind.type_name());
        self.lamport = self.lamport.saturating_add(1);
        Ok(())
    }
}

/// Append to task `id`'s ref what `plan` makes of its history (`None`: the ref does not
/// exist), by compare-and-swap; the types of the events written.
fn append(
    catalog: &Catalog,
    id: Uuid,
    actor: &Actor,
    mut plan: impl FnMut(Option<&TaskHistory>, &mut Chain<'_>) -> OpResult<()>,
) -> OpResult<Vec<&'static str>> {
    let mut kinds = Vec::new();
    catalog
        .store()
        .append_raw(&task_ref(id), |tip| -> OpResult<Vec<RawCommit>> {
            let history = tip.map(|tip| history(catalog, id, tip)).transpose()?;
            let mut chain = Chain::after(id, actor, history.as_ref());
            plan(history.as_ref(), &mut chain)?;
            kinds = chain.kinds;
            Ok(chain.commits)
        })?;
    Ok(kinds)
}

/// The project's configuration, or the refusal to write.
fn project(catalog: &Catalog) -> OpResult<Project> {
    let workdir = catalog.store().workdir();
    Project::load(&workdir).map_err(|err| {
        OpError::refused(
            Refusal::Config,
            format!("{}; nothing was written", err.0),
            "Upstream git-mile refuses to write with this configuration too: fix .git-mile/config.toml (its [workflow] and [hooks] tables), then call again.",
        )
    })
}

/// Refuse a write upstream would hand to hooks (`names`: the specific hooks of its events).
fn no_hooks(project: &Project, names: &[&str]) -> OpResult<()> {
    let hooks = project.hooks_for(names);
    if hooks.is_empty() {
        return Ok(());
    }
    let listed: Vec<String> = hooks.iter().map(|p| p.display().to_string()).collect();
    Err(OpError::refused(
        Refusal::Hooks,
        format!(
            "this repository has upstream git-mile hooks for this write ({}), which this version does not run; nothing was written",
            crate::quote::excerpt(&listed.join(", "))
        ),
        "Make this change with upstream git-mile, which runs them, or disable them in .git-mile/config.toml ([hooks] enabled = false, or disabled = [\"<name>\"]).",
    ))
}

/// The state a task is set to, checked against the workflow: the state and its kind.
fn workflow_state(project: &Project, state: &str) -> OpResult<(String, Option<String>)> {
    let workflow = &project.workflow;
    if !workflow.allows(state) {
        return Err(OpError::refused(
            Refusal::Invalid,
            format!(
                "state `{}` is not in this repository's workflow; nothing was written",
                crate::quote::excerpt(state)
            ),
            format!(
                "Give one of: {} (upstream git-mile's workflow, from .git-mile/config.toml or its built-in one).",
                workflow.describe()
            ),
        ));
    }
    Ok((
        state.to_string(),
        workflow.kind_of(state).map(str::to_string),
    ))
}

/// The tasks below `id` (its children, theirs, …), as the refs say now.
fn descendants(catalog: &Catalog, id: Uuid) -> OpResult<BTreeSet<String>> {
    let tasks = catalog.tasks()?;
    let children: HashMap<&str, &BTreeSet<String>> = tasks
        .rows()
        .map(|row| (row.task.id.as_str(), &row.task.children))
        .collect();
    let mut below = BTreeSet::new();
    let mut queue = VecDeque::from([id.hyphenated().to_string()]);
    while let Some(at) = queue.pop_front() {
        for child in children.get(at.as_str()).into_iter().flat_map(|c| c.iter()) {
            if below.insert(child.clone()) {
                queue.push_back(child.clone());
            }
        }
    }
    Ok(below)
}

/// The parents' side of links: in each parent's ref, `childLinked` (or `childUnlinked`) for
/// `child` where the parent does not say so yet. A failure after the child's own ref was
/// written is told as such (the same call again completes it).
fn link_parents(
    catalog: &Catalog,
    actor: &Actor,
    child: Uuid,
    link: &[Uuid],
    unlink: &[Uuid],
    written: &mut TaskWritten,
) -> OpResult<()> {
    let child_id = child.hyphenated().to_string();
    for (parents, linking) in [(link, true), (unlink, false)] {
        for &parent in parents {
            let kinds = append(catalog, parent, actor, |history, chain| {
                let Some(history) = history else {
                    // A parent whose ref is gone: nothing to unlink there.
                    return if linking {
                        Err(OpError::NotFound {
                            what: "task",
                            id: parent.hyphenated().to_string(),
                        })
                    } else {
                        Ok(())
                    };
                };
                let has = history.task.children.contains(&child_id);
                if linking && !has {
                    chain.push(TaskChange::ChildLinked { parent, child })?;
                } else if !linking && has {
                    chain.push(TaskChange::ChildUnlinked { parent, child })?;
                }
                Ok(())
            });
            match kinds {
                Ok(kinds) => written.linked.extend(kinds),
                Err(err) if !written.events.is_empty() => {
                    return Err(OpError::Incomplete(format!(
                        "task {child_id} was written ({}), but its parent {parent}'s ref was not: {err}; the same call again completes it",
                        written.events.join(", ")
                    )));
                }
                Err(err) => return Err(err),
            }
        }
    }
    Ok(())
}

/// Resolve the ids of tasks to link to: each must exist and be readable.
fn existing(catalog: &Catalog, ids: &[String]) -> OpResult<Vec<Uuid>> {
    let mut out = Vec::with_capacity(ids.len());
    for id in ids {
        let id = resolve(catalog, id)?;
        if !out.contains(&id) {
            out.push(id);
        }
    }
    Ok(out)
}

/// Resolve the ids of tasks to unlink from: a full id is taken as is (the task may be gone),
/// a prefix must name a task.
fn named(catalog: &Catalog, ids: &[String]) -> OpResult<Vec<Uuid>> {
    let mut out = Vec::with_capacity(ids.len());
    for id in ids {
        let id = match Uuid::parse_str(id.trim()) {
            Ok(id) => id,
            Err(_) => resolve(catalog, id)?,
        };
        if !out.contains(&id) {
            out.push(id);
        }
    }
    Ok(out)
}

fn self_link(what: &str, id: Uuid) -> OpError {
    OpError::refused(
        Refusal::Invalid,
        format!("task {id} cannot be {what}; nothing was written"),
        "Name another task.",
    )
}

/// Create a task: `taskCreated` (its state, when none is given, the workflow's default, with
/// the kind the workflow gives it), then a `childLinked` per parent, in its ref and in the
/// parent's.
pub fn create(catalog: &Catalog, request: &Create) -> OpResult<TaskWritten> {
    let request = check::create(request)?;
    let project = project(catalog)?;
    let state = match request
        .state
        .clone()
        .or_else(|| project.workflow.default_state.clone())
    {
        Some(state) => Some(workflow_state(&project, &state)?),
        None => None,
    };
    let parents = existing(catalog, &request.parents)?;
    let mut hooks = vec!["pre-task-create", "post-task-create"];
    if !parents.is_empty() {
        hooks.extend(["pre-relation-change", "post-relation-change"]);
    }
    no_hooks(&project, &hooks)?;
    let actor = actor(catalog)?;
    let id = encode::new_id();
    let (state, state_kind) = state.map_or((None, None), |(s, k)| (Some(s), k));
    let events = append(catalog, id, &actor, |history, chain| {
        if history.is_some() {
            return Err(OpError::Invalid(format!("task {id} exists already")));
        }
        chain.push(TaskChange::TaskCreated {
            title: request.title.clone(),
            labels: request.labels.clone(),
            assignees: request.assignees.clone(),
            description: request.description.clone(),
            state: state.clone(),
            state_kind: state_kind.clone(),
        })?;
        for &parent in &parents {
            chain.push(TaskChange::ChildLinked { parent, child: id })?;
        }
        Ok(())
    })?;
    let mut written = TaskWritten {
        kind: "task",
        id: id.hyphenated().to_string(),
        events,
        linked: Vec::new(),
        comment: None,
    };
    link_parents(catalog, &actor, id, &parents, &[], &mut written)?;
    Ok(written)
}

/// Update task `id` (a full id or a prefix): every argument checked, then one event per
/// field that differs from the task (none when nothing does), in upstream's order.
pub fn update(catalog: &Catalog, id: &str, request: &Update) -> OpResult<TaskWritten> {
    let request = check::update(request)?;
    let id = resolve(catalog, id)?;
    let project = project(catalog)?;
    let state = match &request.state {
        Some(Some(state)) => Some(Some(workflow_state(&project, state)?)),
        Some(None) => Some(None),
        None => None,
    };
    let add_parents = existing(catalog, &request.add_parents)?;
    let remove_parents = named(catalog, &request.remove_parents)?;
    if add_parents.contains(&id) {
        return Err(self_link("its own parent", id));
    }
    if !add_parents.is_empty() {
        let below = descendants(catalog, id)?;
        if let Some(cycle) = add_parents
            .iter()
            .find(|p| below.contains(&p.hyphenated().to_string()))
        {
            return Err(OpError::refused(
                Refusal::Invalid,
                format!(
                    "task {cycle} is below task {id} (a child, or a child's child): making it a parent would make a cycle; nothing was written"
                ),
                "Unlink it from below first, or name another parent.",
            ));
        }
    }
    let mut add_relations = Vec::new();
    for relation in &request.add_relations {
        let target = resolve(catalog, &relation.target)?;
        if target == id {
            return Err(self_link("related to itself", id));
        }
        add_relations.push((relation.kind.clone(), target));
    }
    let mut remove_relations = Vec::new();
    for relation in &request.remove_relations {
        let target = named(catalog, std::slice::from_ref(&relation.target))?;
        remove_relations.extend(target.into_iter().map(|t| (relation.kind.clone(), t)));
    }
    let mut hooks = Vec::new();
    if request.title.is_some()
        || request.description.is_some()
        || !request.add_labels.is_empty()
        || !request.remove_labels.is_empty()
        || !request.add_assignees.is_empty()
        || !request.remove_assignees.is_empty()
    {
        hooks.extend(["pre-task-update", "post-task-update"]);
    }
    if state.is_some() {
        hooks.extend(["pre-state-change", "post-state-change"]);
    }
    if !add_parents.is_empty() || !remove_parents.is_empty() {
        hooks.extend(["pre-relation-change", "post-relation-change"]);
    }
    no_hooks(&project, &hooks)?;
    let actor = actor(catalog)?;
    let events = append(catalog, id, &actor, |history, chain| {
        let Some(history) = history else {
            return Err(OpError::NotFound {
                what: "task",
                id: id.hyphenated().to_string(),
            });
        };
        let plan = check::Resolved {
            title: request.title.as_deref(),
            description: request.description.as_deref(),
            state: state
                .as_ref()
                .map(|s| s.as_ref().map(|(s, k)| (s.as_str(), k.as_deref()))),
            add_labels: &request.add_labels,
            remove_labels: &request.remove_labels,
            add_assignees: &request.add_assignees,
            remove_assignees: &request.remove_assignees,
            add_parents: &add_parents,
            remove_parents: &remove_parents,
            add_relations: &add_relations,
            remove_relations: &remove_relations,
        };
        for change in plan.changes(id, &history.task) {
            chain.push(change)?;
        }
        Ok(())
    })?;
    let mut written = TaskWritten {
        kind: "task",
        id: id.hyphenated().to_string(),
        events,
        linked: Vec::new(),
        comment: None,
    };
    link_parents(
        catalog,
        &actor,
        id,
        &add_parents,
        &remove_parents,
        &mut written,
    )?;
    Ok(written)
}

/// Comment on task `id`: `commentAdded` with a new comment id, the body kept as given.
pub fn comment(catalog: &Catalog, id: &str, body: &str) -> OpResult<TaskWritten> {
    crate::ops::check_comment(body)?;
    let id = resolve(catalog, id)?;
    no_hooks(&project(catalog)?, &["pre-comment-add", "post-comment-add"])?;
    let actor = actor(catalog)?;
    let comment_id = encode::new_id();
    let events = append(catalog, id, &actor, |history, chain| {
        if history.is_none() {
            return Err(OpError::NotFound {
                what: "task",
                id: id.hyphenated().to_string(),
            });
        }
        chain.push(TaskChange::CommentAdded {
            comment_id,
            body_md: body.to_string(),
        })
    })?;
    Ok(TaskWritten {
        kind: "task",
        id: id.hyphenated().to_string(),
        events,
        linked: Vec::new(),
        comment: Some(comment_id.hyphenated().to_string()),
    })
}

/// The comment of `task` that `given` names: its full id or a unique prefix of at least 4
/// characters.
fn find_comment(task: &Task, given: &str) -> OpResult<Uuid> {
    let wanted = crate::task::wanted(given).unwrap_or_default();
    let mut found: Vec<&str> = task
        .comments
        .iter()
        .map(|c| c.id.as_str())
        .filter(|c| !wanted.is_empty() && c.starts_with(&wanted))
        .collect();
    found.dedup();
    match found.as_slice() {
        [one] => parse_id(one),
        [] => Err(OpError::refused(
            Refusal::NotFound,
            format!(
                "comment `{}` not found in task {}; nothing was written",
                crate::quote::excerpt(given.trim()),
                task.id
            ),
            "Show the task (git_mile.show {\"entity\":\"task\"}) for its comments' ids; a prefix needs at least 4 characters.",
        )),
        many => Err(OpError::Ambiguous {
            id: given.trim().to_string(),
            candidates: many.iter().map(|c| c.to_string()).collect(),
        }),
    }
}

/// Edit comment `comment` of task `id`: `commentUpdated` with the new body (nothing when
/// it is the same). Upstream runs no hook for it.
pub fn edit_comment(
    catalog: &Catalog,
    id: &str,
    comment: &str,
    body: &str,
) -> OpResult<TaskWritten> {
    crate::ops::check_comment(body)?;
    let id = resolve(catalog, id)?;
    project(catalog)?;
    let actor = actor(catalog)?;
    let mut edited = None;
    let events = append(catalog, id, &actor, |history, chain| {
        let Some(history) = history else {
            return Err(OpError::NotFound {
                what: "task",
                id: id.hyphenated().to_string(),
            });
        };
        let comment_id = find_comment(&history.task, comment)?;
        edited = Some(comment_id.hyphenated().to_string());
        let same = history
            .task
            .comments
            .iter()
            .rev()
            .find(|c| Uuid::parse_str(&c.id).ok() == Some(comment_id))
            .is_some_and(|c| c.body == body);
        if !same {
            chain.push(TaskChange::CommentUpdated {
                comment_id,
                body_md: body.to_string(),
            })?;
        }
        Ok(())
    })?;
    Ok(TaskWritten {
        kind: "task",
        id: id.hyphenated().to_string(),
        events,
        linked: Vec::new(),
        comment: edited,
    })
}
