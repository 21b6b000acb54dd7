//! The arguments of task writes, checked without reading the repository, and what an update
//! writes given the task as it is ([`Resolved::changes`]).
//!
//! Upstream checks little of what it writes (a title may be empty, a task its own parent);
//! here titles, texts, labels and assignees follow the rules of this version's own entities
//! (a title one line of 1 to 500 characters, names 1 to 100 characters on one line, at most
//! 100 of them per argument, texts up to 256 KiB), so that what is written reads well in
//! upstream's CLI and TUI and in this version's.

use uuid::Uuid;

use crate::ops::{MAX_LABELS, OpError, OpResult, check_name, check_names, check_text, check_title};
use crate::task::Task;
use crate::task::event::TaskChange;

/// A task to create.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Create {
    pub title: String,
    /// `None`: none (upstream's `null`).
    pub description: Option<String>,
    /// `None`: the workflow's default state.
    pub state: Option<String>,
    pub labels: Vec<String>,
    pub assignees: Vec<String>,
    /// Ids (or prefixes) of its parent tasks.
    pub parents: Vec<String>,
}

/// A relation of upstream's (`relationAdded`/`relationRemoved`): its kind and the task it
/// points to (an id or a prefix).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Relation {
    pub kind: String,
    pub target: String,
}

impl Relation {
    /// `KIND:TASK` (the task an id or a prefix, which holds no `:`; the kind may).
    pub fn parse(text: &str) -> OpResult<Self> {
        match text.rsplit_once(':') {
            Some((kind, target)) if !kind.trim().is_empty() && !target.trim().is_empty() => {
                Ok(Relation {
                    kind: kind.to_string(),
                    target: target.to_string(),
                })
            }
            _ => Err(OpError::Invalid(format!(
                "`{}` is no relation: give KIND:TASK, e.g. blocks:019a5b2c",
                crate::quote::excerpt(text)
            ))),
        }
    }
}

/// What an update may change; `None` and empty lists leave a field as it is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Update {
    pub title: Option<String>,
    /// Empty clears it.
    pub description: Option<String>,
    /// `Some(None)` clears the state (`taskStateCleared`).
    pub state: Option<Option<String>>,
    pub add_labels: Vec<String>,
    pub remove_labels: Vec<String>,
    pub add_assignees: Vec<String>,
    pub remove_assignees: Vec<String>,
    /// Ids (or prefixes) of tasks to link as parents, and to unlink.
    pub add_parents: Vec<String>,
    pub remove_parents: Vec<String>,
    pub add_relations: Vec<Relation>,
    pub remove_relations: Vec<Relation>,
}

impl Update {
    pub fn is_empty(&self) -> bool {
        self == &Self::default()
    }
}

fn check_ids(argument: &str, ids: &[String]) -> OpResult<Vec<String>> {
    if ids.len() > MAX_LABELS {
        return Err(OpError::Invalid(format!(
            "{} {argument} given; one call takes at most {MAX_LABELS}",
            ids.len()
        )));
    }
    ids.iter()
        .map(|id| {
            let id = id.trim();
            if id.is_empty() {
                Err(OpError::Invalid(format!("an empty id among {argument}")))
            } else {
                Ok(id.to_string())
            }
        })
        .collect()
}

fn check_relations(argument: &str, relations: &[Relation]) -> OpResult<Vec<Relation>> {
    if relations.len() > MAX_LABELS {
        return Err(OpError::Invalid(format!(
            "{} {argument} given; one call takes at most {MAX_LABELS}",
            relations.len()
        )));
    }
    relations
        .iter()
        .map(|r| {
            Ok(Relation {
                kind: check_name("relation kind", &r.kind)?,
                target: check_ids(argument, std::slice::from_ref(&r.target))?.remove(0),
            })
        })
        .collect()
}

/// A value both added and removed in one call.
fn both<T: PartialEq>(
    add: &[T],
    remove: &[T],
    what: &str,
    show: impl Fn(&T) -> String,
) -> OpResult<()> {
    match add.iter().find(|x| remove.contains(x)) {
        Some(x) => Err(OpError::Invalid(format!(
            "{what} `{}` is both added and removed",
            crate::quote::excerpt(&show(x))
        ))),
        None => Ok(()),
    }
}

fn check_state(state: &str) -> OpResult<String> {
    check_name("state", state)
}

/// `request` checked: trimmed, duplicates dropped.
pub fn create(request: &Create) -> OpResult<Create> {
    let description = match &request.description {
        Some(d) => {
            check_text("description", d)?;
            Some(d.clone())
        }
        None => None,
    };
    Ok(Create {
        title: check_title(&request.title)?,
        description,
        state: request.state.as_deref().map(check_state).transpose()?,
        labels: check_names("label", "labels", &request.labels)?,
        assignees: check_names("assignee", "assignees", &request.assignees)?,
        parents: check_ids("parents", &request.parents)?,
    })
}

/// `request` checked: trimmed, duplicates dropped, nothing both added and removed, and
/// something asked.
pub fn update(request: &Update) -> OpResult<Update> {
    if request.is_empty() {
        return Err(OpError::Invalid(
            "nothing to update: give at least one of title, description, state, addLabels, removeLabels, addAssignees, removeAssignees, addParents, removeParents, addRelations, removeRelations".into(),
        ));
    }
    if let Some(description) = &request.description {
        check_text("description", description)?;
    }
    let checked = Update {
        title: request.title.as_deref().map(check_title).transpose()?,
        description: request.description.clone(),
        state: match &request.state {
            Some(Some(state)) => Some(Some(check_state(state)?)),
            Some(None) => Some(None),
            None => None,
        },
        add_labels: check_names("label", "labels to add", &request.add_labels)?,
        remove_labels: check_names("label", "labels to remove", &request.remove_labels)?,
        add_assignees: check_names("assignee", "assignees to add", &request.add_assignees)?,
        remove_assignees: check_names(
            "assignee",
            "assignees to remove",
            &request.remove_assignees,
        )?,
        add_parents: check_ids("parents to add", &request.add_parents)?,
        remove_parents: check_ids("parents to remove", &request.remove_parents)?,
        add_relations: check_relations("relations to add", &request.add_relations)?,
        remove_relations: check_relations("relations to remove", &request.remove_relations)?,
    };
    let text = |s: &String| s.clone();
    both(&checked.add_labels, &checked.remove_labels, "label", text)?;
    both(
        &checked.add_assignees,
        &checked.remove_assignees,
        "assignee",
        text,
    )?;
    both(
        &checked.add_parents,
        &checked.remove_parents,
        "parent",
        text,
    )?;
    both(
        &checked.add_relations,
        &checked.remove_relations,
        "relation",
        |r| format!("{}:{}", r.kind, r.target),
    )?;
    Ok(checked)
}

/// An update with its ids resolved and its state checked against the workflow.
pub struct Resolved<'a> {
    pub title: Option<&'a str>,
    pub description: Option<&'a str>,
    /// `Some(Some((state, kind)))` sets, `Some(None)` clears.
    pub state: Option<Option<(&'a str, Option<&'a str>)>>,
    pub add_labels: &'a [String],
    pub remove_labels: &'a [String],
    pub add_assignees: &'a [String],
    pub remove_assignees: &'a [String],
    pub add_parents: &'a [Uuid],
    pub remove_parents: &'a [Uuid],
    pub add_relations: &'a [(String, Uuid)],
    pub remove_relations: &'a [(String, Uuid)],
}

impl Resolved<'_> {
    /// The events that make `task` (of id `id`) what this update asks, in upstream's order;
    /// none for what it is already.
    pub fn changes(&self, id: Uuid, task: &Task) -> Vec<TaskChange> {
        let mut changes = Vec::new();
        if let Some(title) = self.title
            && title != task.title
        {
            changes.push(TaskChange::TaskTitleSet {
                title: title.to_string(),
            });
        }
        match self.state {
            Some(Some((state, kind)))
                if task.state.as_deref() != Some(state) || task.state_kind.as_deref() != kind =>
            {
                changes.push(TaskChange::TaskStateSet {
                    state: state.to_string(),
                    state_kind: kind.map(str::to_string),
                });
            }
            Some(None) if task.state.is_some() || task.state_kind.is_some() => {
                changes.push(TaskChange::TaskStateCleared);
            }
            _ => {}
        }
        if let Some(description) = self.description
            && description != task.description
        {
            // Empty clears it, as upstream's editor does (`null`).
            changes.push(TaskChange::TaskDescriptionSet {
                description: (!description.is_empty()).then(|| description.to_string()),
            });
        }
        let added = |wanted: &[String], have: &std::collections::BTreeSet<String>| -> Vec<String> {
            wanted
                .iter()
                .filter(|x| !have.contains(*x))
                .cloned()
                .collect()
        };
        let removed =
            |wanted: &[String], have: &std::collections::BTreeSet<String>| -> Vec<String> {
                wanted
                    .iter()
                    .filter(|x| have.contains(*x))
                    .cloned()
                    .collect()
            };
        let labels = added(self.add_labels, &task.labels);
        if !labels.is_empty() {
            changes.push(TaskChange::LabelsAdded { labels });
        }
        let labels = removed(self.remove_labels, &task.labels);
        if !labels.is_empty() {
            changes.push(TaskChange::LabelsRemoved { labels });
        }
        let assignees = added(self.add_assignees, &task.assignees);
        if !assignees.is_empty() {
            changes.push(TaskChange::AssigneesAdded { assignees });
        }
        let assignees = removed(self.remove_assignees, &task.assignees);
        if !assignees.is_empty() {
            changes.push(TaskChange::AssigneesRemoved { assignees });
        }
        let has_parent = |p: &Uuid| task.parents.contains(&p.hyphenated().to_string());
        for parent in self.add_parents.iter().filter(|p| !has_parent(p)) {
            changes.push(TaskChange::ChildLinked {
                parent: *parent,
                child: id,
            });
        }
        for parent in self.remove_parents.iter().filter(|p| has_parent(p)) {
            changes.push(TaskChange::ChildUnlinked {
                parent: *parent,
                child: id,
            });
        }
        let has_relation = |kind: &str, target: &Uuid| {
            task.relations
                .get(kind)
                .is_some_and(|set| set.contains(&target.hyphenated().to_string()))
        };
        for (kind, target) in self.add_relations {
            if !has_relation(kind, target) {
                changes.push(TaskChange::RelationAdded {
                    kind: kind.clone(),
                    target: *target,
                });
            }
        }
        for (kind, target) in self.remove_relations {
            if has_relation(kind, target) {
                changes.push(TaskChange::RelationRemoved {
                    kind: kind.clone(),
                    target: *target,
                });
            }
        }
        changes
    }
}
