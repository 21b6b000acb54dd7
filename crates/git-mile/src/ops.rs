//! What the write commands do: resolve the entity a user names, check the change makes
//! sense, and append its events. Reads go through the [`Catalog`].

use std::sync::Arc;

use serde::Serialize;

use crate::catalog::{Catalog, Lookup, Snapshot};
use crate::event::Change;
use crate::model::{Entity, Kind, Status};
use crate::replay::replay;
use crate::store::{GitStore, StoreError};

/// Longest title accepted, in characters.
pub const MAX_TITLE: usize = 500;
/// Largest description or comment body accepted, in bytes (each lives in a commit message).
pub const MAX_TEXT: usize = 256 * 1024;
/// Most labels one call may add (or remove): each is an event, and an entity's every event
/// is read again by every later write.
pub const MAX_LABELS: usize = 100;

#[derive(Debug, thiserror::Error)]
pub enum OpError {
    /// No `what` has the id; an id shorter than [`crate::catalog::MIN_PREFIX`] characters is
    /// told as such.
    #[error("{}", not_found_message(what, id))]
    NotFound { what: &'static str, id: String },
    #[error(
        "`{}` matches {} entities ({}); give more characters",
        crate::quote::excerpt(.id),
        .candidates.len(),
        crate::quote::some_of(.candidates)
    )]
    Ambiguous { id: String, candidates: Vec<String> },
    #[error(
        "{what} `{id}` cannot be read ({why}): the repository may be damaged; `git fsck` tells more"
    )]
    Unreadable {
        what: &'static str,
        id: String,
        why: String,
    },
    #[error("{0}")]
    Invalid(String),
    /// A write refused before anything was written (`why` says what kind of refusal), with
    /// what to do instead.
    #[error("{message}\nhint: {hint}")]
    Refused {
        why: Refusal,
        message: String,
        hint: String,
    },
    /// A command that did part of its work: what was done and what was not.
    #[error("{0}")]
    Incomplete(String),
    #[error(transparent)]
    Store(StoreError),
}

impl From<StoreError> for OpError {
    fn from(err: StoreError) -> Self {
        match err {
            // A ref file git cannot read: the same failure as a history that cannot be read.
            StoreError::Unreadable { kind, id, why } => OpError::Unreadable {
                what: kind,
                id,
                why,
            },
            other => OpError::Store(other),
        }
    }
}

pub type OpResult<T> = Result<T, OpError>;

/// Why a write of an upstream task was refused (see `crate::task_write`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// An argument upstream would refuse, or that would make a task upstream cannot show (a
    /// state outside the workflow, a task its own parent).
    Invalid,
    /// Something the call names is not there (a comment of the task).
    NotFound,
    /// The task's history holds an event this version cannot read (a later upstream's):
    /// nothing is appended after it.
    NewerEvent,
    /// The repository has upstream hooks for this write, which this version does not run.
    Hooks,
    /// The repository's `.git-mile/config.toml` cannot be read as upstream reads it.
    Config,
}

impl OpError {
    pub(crate) fn refused(
        why: Refusal,
        message: impl Into<String>,
        hint: impl Into<String>,
    ) -> Self {
        OpError::Refused {
            why,
            message: message.into(),
            hint: hint.into(),
        }
    }
}

/// Why no `what` has `id`: an id too short to be a prefix is told as such (with what to type
/// instead), any other as not found.
fn not_found_message(what: &str, id: &str) -> String {
    if crate::catalog::too_short(id) {
        let shown = crate::quote::excerpt(id.trim());
        let list = match what {
            "milestone" => "git mile list --entity milestone",
            "task" => "git mile list --entity task",
            _ => "git mile list",
        };
        format!(
            "`{shown}` is too short for an id: a prefix needs at least {} characters; give more \
             of the {what} id, or all of it (`{list}` prints prefixes that work)",
            crate::catalog::MIN_PREFIX
        )
    } else {
        format!("{what} `{}` not found", crate::quote::excerpt(id))
    }
}

/// What a write command did.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Written {
    pub kind: Kind,
    pub id: String,
    /// The events appended, by type (empty when nothing needed to change).
    pub events: Vec<&'static str>,
    /// The entity after them.
    #[serde(skip)]
    pub entity: Entity,
}

fn what(kinds: &[Kind]) -> &'static str {
    match kinds {
        [Kind::Issue] => "issue",
        [Kind::Milestone] => "milestone",
        _ => "issue or milestone",
    }
}

/// The entity `id` names among `kinds`: a full id, or a unique prefix of one.
pub fn resolve(catalog: &Catalog, kinds: &[Kind], id: &str) -> OpResult<(Kind, String)> {
    let id = id.trim();
    let store = catalog.store();
    // A full id needs no catalog: look its ref up directly.
    if let Ok(uuid) = uuid::Uuid::parse_str(id) {
        // Any spelling of a UUID (braces, `urn:uuid:`, no hyphens) names the same ref.
        let id = uuid.hyphenated().to_string();
        for kind in kinds {
            if store.tip(*kind, &id)?.is_some() {
                return Ok((*kind, id));
            }
        }
        return Err(OpError::NotFound {
            what: what(kinds),
            id,
        });
    }
    let snapshot = catalog.snapshot()?;
    resolve_in(&snapshot, kinds, id)
}

/// [`resolve`] against a snapshot already read.
pub fn resolve_in(snapshot: &Snapshot, kinds: &[Kind], id: &str) -> OpResult<(Kind, String)> {
    // `lookup` reads any spelling of a UUID.
    let id = id.trim();
    let mut found = Vec::new();
    for kind in kinds {
        match snapshot.lookup(*kind, id) {
            Lookup::Found(row) => found.push((row.entity.kind, row.entity.id.clone())),
            Lookup::Ambiguous(ids) => {
                return Err(OpError::Ambiguous {
                    id: id.to_string(),
                    candidates: ids,
                });
            }
            Lookup::NotFound => {}
            Lookup::Unreadable(id, why) => {
                return Err(OpError::Unreadable {
                    what: kind.as_str(),
                    id,
                    why: why.to_string(),
                });
            }
        }
    }
    match found.len() {
        0 => Err(OpError::NotFound {
            what: what(kinds),
            id: id.to_string(),
        }),
        1 => Ok(found.swap_remove(0)),
        _ => Err(OpError::Ambiguous {
            id: id.to_string(),
            candidates: found.into_iter().map(|(_, id)| id).collect(),
        }),
    }
}

/// One entity replayed from its ref alone.
pub fn load(store: &GitStore, kind: Kind, id: &str) -> OpResult<Entity> {
    let not_found = || OpError::NotFound {
        what: kind.as_str(),
        id: id.to_string(),
    };
    let tip = store.tip(kind, id)?.ok_or_else(not_found)?;
    replay(kind, id, store.events(tip)?).ok_or_else(not_found)
}

/// Characters that break a line or control a terminal: none may be in a title or a label.
fn breaks_a_line(c: char) -> bool {
    c.is_control() || matches!(c, '\u{2028}' | '\u{2029}')
}

pub(crate) fn check_title(title: &str) -> OpResult<String> {
    let title = title.trim();
    if title.is_empty() {
        return Err(OpError::Invalid("the title is empty".into()));
    }
    if title.chars().count() > MAX_TITLE {
        return Err(OpError::Invalid(format!(
            "the title is longer than {MAX_TITLE} characters"
        )));
    }
    if title.contains(breaks_a_line) {
        return Err(OpError::Invalid(
            "the title must be one line, without control characters".into(),
        ));
    }
    Ok(title.to_string())
}

pub(crate) fn check_text(what: &str, text: &str) -> OpResult<()> {
    if text.len() > MAX_TEXT {
        return Err(OpError::Invalid(format!(
            "the {what} is larger than {} KiB",
            MAX_TEXT / 1024
        )));
    }
    Ok(())
}

fn check_label(label: &str) -> OpResult<String> {
    check_name("label", label)
}

/// A name (`what`: a label, an assignee, a state…), trimmed: 1 to 100 characters on one line.
pub(crate) fn check_name(what: &str, name: &str) -> OpResult<String> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 100 || name.contains(breaks_a_line) {
        return Err(OpError::Invalid(format!(
            "invalid {what} `{}`: {what}s are 1 to 100 characters on one line",
            crate::quote::excerpt(name)
        )));
    }
    Ok(name.to_string())
}

/// The names of one call (`what`: `label`, `assignee`…; `argument`: what the call named them),
/// checked: at most [`MAX_LABELS`], each valid, duplicates dropped (the first kept).
pub(crate) fn check_names(what: &str, argument: &str, names: &[String]) -> OpResult<Vec<String>> {
    if names.len() > MAX_LABELS {
        return Err(OpError::Invalid(format!(
            "{} {argument} given; one call takes at most {MAX_LABELS}",
            names.len()
        )));
    }
    let mut clean: Vec<String> = Vec::with_capacity(names.len());
    for name in names {
        let name = check_name(what, name)?;
        if !clean.contains(&name) {
            clean.push(name);
        }
    }
    Ok(clean)
}

/// The labels of one call, checked: at most [`MAX_LABELS`], each valid.
fn check_labels(what: &str, labels: &[String]) -> OpResult<Vec<String>> {
    if labels.len() > MAX_LABELS {
        return Err(OpError::Invalid(format!(
            "{} {what} given; one call takes at most {MAX_LABELS}",
            labels.len()
        )));
    }
    labels.iter().map(|l| check_label(l)).collect()
}

/// The arguments of [`create`], checked without reading the repository.
pub fn check_create(title: &str, description: &str, labels: &[String]) -> OpResult<()> {
    check_title(title)?;
    check_text("description", description)?;
    check_labels("labels", labels)?;
    Ok(())
}

/// The arguments of [`update`], checked without reading the repository.
pub fn check_update(update: &Update) -> OpResult<()> {
    checked_update(update).map(|_| ())
}

/// An update's values as they will be written: the trimmed title, the labels to add and
/// to remove.
struct CheckedUpdate {
    title: Option<String>,
    add: Vec<String>,
    remove: Vec<String>,
}

fn checked_update(update: &Update) -> OpResult<CheckedUpdate> {
    let title = update.title.as_deref().map(check_title).transpose()?;
    if let Some(description) = &update.description {
        check_text("description", description)?;
    }
    let add = check_labels("labels to add", &update.add_labels)?;
    let remove = check_labels("labels to remove", &update.remove_labels)?;
    if let Some(both) = add.iter().find(|l| remove.contains(l)) {
        return Err(OpError::Invalid(format!(
            "label `{both}` is both added and removed"
        )));
    }
    Ok(CheckedUpdate { title, add, remove })
}

/// The body of [`comment`], checked without reading the repository.
pub fn check_comment(body: &str) -> OpResult<()> {
    if body.trim().is_empty() {
        return Err(OpError::Invalid("the comment is empty".into()));
    }
    check_text("comment", body)
}

/// Create an entity; an issue may start attached to `milestone` (a full milestone id). Its
/// events (`created`, then `attached`) are written together: the entity appears whole or
/// not at all.
pub fn create(
    store: &GitStore,
    kind: Kind,
    title: &str,
    description: &str,
    labels: &[String],
    milestone: Option<&str>,
) -> OpResult<Written> {
    let title = check_title(title)?;
    check_text("description", description)?;
    let mut clean = Vec::new();
    for label in check_labels("labels", labels)? {
        if !clean.contains(&label) {
            clean.push(label);
        }
    }
    let mut changes = vec![Change::Created {
        kind,
        title,
        description: description.to_string(),
        labels: clean,
    }];
    if let Some(milestone) = milestone {
        if kind != Kind::Issue {
            return Err(OpError::Invalid(
                "only issues are attached to milestones".into(),
            ));
        }
        load(store, Kind::Milestone, milestone)?;
        changes.push(Change::Attached {
            milestone: milestone.to_string(),
        });
    }
    let names = changes.iter().map(Change::type_name).collect();
    let (id, entity) = store.create(kind, changes)?;
    Ok(Written {
        kind,
        id,
        events: names,
        entity,
    })
}

/// Change `kind` `id` by compare-and-swap: `plan` sees its current state and says what to
/// append (nothing: nothing is written).
fn write(
    store: &GitStore,
    kind: Kind,
    id: &str,
    plan: impl FnMut(&Entity) -> OpResult<Vec<Change>>,
) -> OpResult<Written> {
    let (events, entity) = store.write(kind, id, plan).map_err(|err| match err {
        OpError::Store(StoreError::NotFound { kind, id }) => OpError::NotFound { what: kind, id },
        other => other,
    })?;
    Ok(Written {
        kind,
        id: id.to_string(),
        events: events.iter().map(|e| e.change.type_name()).collect(),
        entity,
    })
}

/// What `git_mile.update` (and the CLI's edit, label, open, close, attach and detach) may
/// change; `None` and empty lists leave a field as it is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Update {
    pub title: Option<String>,
    pub description: Option<String>,
    pub status: Option<Status>,
    pub add_labels: Vec<String>,
    pub remove_labels: Vec<String>,
    /// Issues only: `Some(Some(id))` attaches to that milestone (a full id), `Some(None)`
    /// detaches.
    pub milestone: Option<Option<String>>,
}

impl Update {
    /// Whether it asks for anything at all.
    pub fn is_empty(&self) -> bool {
        self == &Self::default()
    }
}

/// Apply `update` to `kind` `id`: every argument is checked before anything is written, then
/// one event is appended per field that differs from the entity's current state (none when
/// nothing differs), all in one compare-and-swap.
pub fn update(store: &GitStore, kind: Kind, id: &str, update: &Update) -> OpResult<Written> {
    let CheckedUpdate { title, add, remove } = checked_update(update)?;
    if let Some(milestone) = &update.milestone {
        if kind != Kind::Issue {
            return Err(OpError::Invalid(
                "only issues are attached to milestones".into(),
            ));
        }
        if let Some(milestone) = milestone {
            load(store, Kind::Milestone, milestone)?;
        }
    }
    write(store, kind, id, |current| {
        let mut changes = Vec::new();
        if let Some(title) = &title
            && *title != current.title
        {
            changes.push(Change::TitleEdited {
                title: title.clone(),
            });
        }
        if let Some(description) = &update.description
            && *description != current.description
        {
            changes.push(Change::DescriptionEdited {
                description: description.clone(),
            });
        }
        if let Some(status) = update.status
            && status != current.status
        {
            changes.push(Change::StatusChanged { status });
        }
        let mut labels = current.labels.clone();
        for label in &add {
            if labels.insert(label.clone()) {
                changes.push(Change::LabelAdded {
                    label: label.clone(),
                });
            }
        }
        for label in &remove {
            if labels.remove(label) {
                changes.push(Change::LabelRemoved {
                    label: label.clone(),
                });
            }
        }
        match (&update.milestone, &current.milestone) {
            (Some(Some(wanted)), now) if now.as_ref() != Some(wanted) => {
                changes.push(Change::Attached {
                    milestone: wanted.clone(),
                });
            }
            (Some(None), Some(now)) => changes.push(Change::Detached {
                milestone: now.clone(),
            }),
            _ => {}
        }
        Ok(changes)
    })
}

pub fn edit(
    store: &GitStore,
    kind: Kind,
    id: &str,
    title: Option<&str>,
    description: Option<&str>,
) -> OpResult<Written> {
    if title.is_none() && description.is_none() {
        return Err(OpError::Invalid(
            "nothing to edit: give --title and/or --description".into(),
        ));
    }
    let changes = Update {
        title: title.map(str::to_string),
        description: description.map(str::to_string),
        ..Update::default()
    };
    update(store, kind, id, &changes)
}

/// Add a comment; `body` is kept as given.
pub fn comment(store: &GitStore, kind: Kind, id: &str, body: &str) -> OpResult<Written> {
    check_comment(body)?;
    let comment = uuid::Uuid::new_v4().to_string();
    write(store, kind, id, |_| {
        Ok(vec![Change::CommentAdded {
            comment: comment.clone(),
            body: body.to_string(),
        }])
    })
}

pub fn label(
    store: &GitStore,
    kind: Kind,
    id: &str,
    add: &[String],
    remove: &[String],
) -> OpResult<Written> {
    if add.is_empty() && remove.is_empty() {
        return Err(OpError::Invalid(
            "nothing to change: give --add LABEL and/or --remove LABEL".into(),
        ));
    }
    let changes = Update {
        add_labels: add.to_vec(),
        remove_labels: remove.to_vec(),
        ..Update::default()
    };
    update(store, kind, id, &changes)
}

pub fn set_status(store: &GitStore, kind: Kind, id: &str, status: Status) -> OpResult<Written> {
    let changes = Update {
        status: Some(status),
        ..Update::default()
    };
    update(store, kind, id, &changes)
}

pub fn attach(store: &GitStore, issue: &str, milestone: &str) -> OpResult<Written> {
    let changes = Update {
        milestone: Some(Some(milestone.to_string())),
        ..Update::default()
    };
    update(store, Kind::Issue, issue, &changes)
}

pub fn detach(store: &GitStore, issue: &str) -> OpResult<Written> {
    let changes = Update {
        milestone: Some(None),
        ..Update::default()
    };
    update(store, Kind::Issue, issue, &changes)
}

/// Open a catalog over the repository at `repo` (else the working directory's).
pub fn open_catalog(repo: Option<&std::path::Path>) -> OpResult<Arc<Catalog>> {
    let store = GitStore::open(repo)?;
    Ok(Arc::new(Catalog::new(Arc::new(store))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_too_short_is_told_so() {
        let err = OpError::NotFound {
            what: "issue or milestone",
            id: "65".into(),
        };
        assert_eq!(
            err.to_string(),
            "`65` is too short for an id: a prefix needs at least 4 characters; give more of the \
             issue or milestone id, or all of it (`git mile list` prints prefixes that work)"
        );
        let err = OpError::NotFound {
            what: "milestone",
            id: "ab".into(),
        };
        assert!(
            err.to_string()
                .contains("(`git mile list --entity milestone` prints"),
            "{err}"
        );
        let err = OpError::NotFound {
            what: "issue",
            id: "abcdef12".into(),
        };
        assert_eq!(err.to_string(), "issue `abcdef12` not found");
    }
}
