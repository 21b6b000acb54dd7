//! Upstream git-mile's tasks, read-only: the refs `refs/git-mile/tasks/<uuid>` that the
//! open-source git-mile (github.com/Warashi/git-mile) writes, replayed as it replays them,
//! listed and shown as a third entity, `task`. Nothing here writes.
//!
//! Also the refs under `refs/git-mile/` that this version reads in no way ([`OtherRefs`]):
//! every listing names them, so that data this version cannot read is never silent.

pub mod event;
pub mod log;
pub mod replay;
pub mod scan;
pub mod shapes;
pub mod states;
pub mod view;
pub mod watch;

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, OnceLock};

pub use replay::Task;
pub use scan::{TaskCache, TaskHistory};
pub use shapes::{OtherRefs, TasksNote};

use crate::query::{Field, Fields, Value};

/// The shortest prefix of an id a user may type (as `crate::catalog::MIN_PREFIX`, which
/// this module does not import: the catalog holds the tasks' cache).
pub const MIN_PREFIX: usize = 4;

/// How many groups of other refs a listing names at most.
pub const MAX_OTHER_REFS: usize = 20;

/// Every task at one moment, and the refs this version does not read (cheap to clone: the
/// tasks are shared).
#[derive(Debug, Default, Clone)]
pub struct TaskSet {
    /// By id; shared by the set's clones (a listing while no task ref moved clones the set
    /// the cache kept, which copies no task and counts no reference).
    tasks: Arc<[Arc<Task>]>,
    /// Tasks whose history cannot be read, by id: why.
    unreadable: BTreeMap<String, Arc<str>>,
    other_refs: Vec<OtherRefs>,
    /// How many task refs there are (read or not).
    refs: usize,
    /// How many tasks are in each state, counted once for the set (its clones share it: a
    /// listing while no task ref moved counts nothing again).
    tally: Arc<OnceLock<Vec<StateTally>>>,
}

/// The tasks of a set in one state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateTally {
    /// `None`: the tasks with no state.
    pub state: Option<String>,
    pub tasks: u64,
    /// The kind most of them record (the first by name among equals).
    pub kind: Option<String>,
}

/// A task with what the set knows around it; what filters and sorts see.
#[derive(Debug, Clone, Copy)]
pub struct TaskRow<'a> {
    pub task: &'a Task,
    pub comment_count: u64,
}

/// How an id given by a user resolved among the tasks.
#[derive(Debug)]
pub enum TaskLookup<'a> {
    Found(TaskRow<'a>),
    NotFound,
    Ambiguous(Vec<String>),
    Unreadable(String, Arc<str>),
}

/// The tasks of a repository whose task refs could not be read at all: none, and one group
/// of other refs that says why (a listing of issues or milestones still answers).
pub fn unread(err: &crate::store::StoreError) -> TaskSet {
    TaskSet::new(
        Vec::new(),
        BTreeMap::new(),
        vec![OtherRefs {
            prefix: crate::store::REF_PREFIX.to_string(),
            count: 0,
            what: crate::quote::excerpt(&format!(
                "refs outside issue/ and milestone/ could not be read: {err}"
            )),
        }],
    )
}

/// How many groups of other refs the server's instructions name.
const NOTED_GROUPS: usize = 5;

/// What the server's instructions say of `tasks`: how many upstream tasks there are and the
/// refs this version does not read; nothing when there are none.
pub fn note(tasks: &TaskSet) -> String {
    let mut note = String::new();
    if tasks.refs > 0 {
        note.push_str(&format!(
            " This repository also holds {} task(s) of upstream git-mile (refs/git-mile/tasks/): list them with git_mile.list {{\"entity\":\"task\"}} (fields state, state_kind, assignees, parents, children; status is closed when state_kind is done; the first page without a filter lists the workflow's states and their kinds in states, and git_mile.show of a task names its parents and children in family).",
            tasks.refs
        ));
    }
    if !tasks.other_refs.is_empty() {
        let groups: Vec<String> = tasks
            .other_refs
            .iter()
            .take(NOTED_GROUPS)
            .map(|g| format!("{} ({} ref(s): {})", g.prefix, g.count, g.what))
            .collect();
        let more = tasks.other_refs.len().saturating_sub(NOTED_GROUPS);
        note.push_str(&format!(
            " It also holds refs this version does not read: {}{}; every git_mile.list names them in other_refs.",
            groups.join("; "),
            if more > 0 {
                format!("; and {more} more group(s)")
            } else {
                String::new()
            }
        ));
    }
    note
}

/// What an empty page of `what` (`issue`, `milestone`) says of the tasks: how many there are
/// and how to list them; nothing when there are none.
pub fn empty_page_note(tasks: &TaskSet, what: &str) -> Option<TasksNote> {
    (tasks.refs > 0).then(|| TasksNote {
        count: tasks.refs as u64,
        hint: format!(
            "No {what} matches, but this repository holds {} task(s) of upstream git-mile (refs/git-mile/tasks/): list them with git_mile.list {{\"entity\":\"task\"}} (git mile list --entity task); done ones with includeClosed (--include-closed).",
            tasks.refs
        ),
    })
}

/// The ref of task `id`: `refs/git-mile/tasks/<id>`.
pub fn ref_name(id: uuid::Uuid) -> String {
    format!(
        "{}{}/{}",
        crate::store::REF_PREFIX,
        scan::TASKS,
        id.hyphenated()
    )
}

/// What task ids `id` (as a user gives it: a full id in any spelling of a UUID, or a prefix)
/// names the start of; `None` when it is too short to name any.
pub fn wanted(id: &str) -> Option<String> {
    let id = id.trim();
    let wanted = match uuid::Uuid::parse_str(id) {
        Ok(uuid) => uuid.hyphenated().to_string(),
        Err(_) => id.to_ascii_lowercase(),
    };
    (wanted.chars().count() >= MIN_PREFIX).then_some(wanted)
}

impl TaskSet {
    pub fn new(
        mut tasks: Vec<Arc<Task>>,
        unreadable: BTreeMap<String, Arc<str>>,
        other_refs: Vec<OtherRefs>,
    ) -> Self {
        tasks.sort_by(|a, b| replay::by_id(a, b));
        let refs = tasks.len() + unreadable.len();
        Self {
            tasks: tasks.into(),
            unreadable,
            other_refs,
            refs,
            tally: Arc::default(),
        }
    }

    /// The task refs counted (`refs` of them) but not read, and the other refs.
    pub fn named(refs: usize, other_refs: Vec<OtherRefs>) -> Self {
        Self {
            other_refs,
            refs,
            ..Self::default()
        }
    }

    /// This set, its tasks read from `refs` task refs (more when only some were read).
    pub fn of_refs(mut self, refs: usize) -> Self {
        self.refs = self.refs.max(refs);
        self
    }

    /// How many task refs there are, read or not.
    pub fn refs(&self) -> usize {
        self.refs
    }

    /// The ids of every task read, readable or not, in id order.
    pub fn ids(&self) -> impl Iterator<Item = &str> {
        self.tasks
            .iter()
            .map(|t| t.id.as_str())
            .chain(self.unreadable())
    }

    pub fn rows(&self) -> impl Iterator<Item = TaskRow<'_>> {
        self.tasks.iter().map(|task| TaskRow {
            task,
            comment_count: task.comments.len() as u64,
        })
    }

    pub fn len(&self) -> usize {
        self.tasks.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tasks.is_empty()
    }

    /// How many tasks are in each state: the named states by name, then the tasks with none.
    pub fn state_tally(&self) -> &[StateTally] {
        self.tally.get_or_init(|| {
            // By state: how many tasks, and how many of them record each kind.
            type Kinds<'a> = BTreeMap<Option<&'a str>, u64>;
            let mut by_state: HashMap<Option<&str>, (u64, Kinds<'_>)> = HashMap::new();
            for task in self.tasks.iter() {
                let entry = by_state.entry(task.state.as_deref()).or_default();
                entry.0 += 1;
                *entry.1.entry(task.state_kind.as_deref()).or_default() += 1;
            }
            let mut tally: Vec<StateTally> = by_state
                .into_iter()
                .map(|(state, (tasks, kinds))| StateTally {
                    state: state.map(str::to_string),
                    tasks,
                    kind: kinds
                        .iter()
                        .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))
                        .and_then(|(kind, _)| kind.map(str::to_string)),
                })
                .collect();
            tally.sort_by(|a, b| (a.state.is_none(), &a.state).cmp(&(b.state.is_none(), &b.state)));
            tally
        })
    }

    /// The ids of the tasks whose refs cannot be read, in id order.
    pub fn unreadable(&self) -> impl Iterator<Item = &str> {
        self.unreadable.keys().map(String::as_str)
    }

    pub fn other_refs(&self) -> &[OtherRefs] {
        &self.other_refs
    }

    /// The task `id` names: a full id (any spelling of a UUID) or a unique prefix of at
    /// least [`MIN_PREFIX`] characters.
    pub fn lookup(&self, id: &str) -> TaskLookup<'_> {
        let Some(wanted) = wanted(id) else {
            return TaskLookup::NotFound;
        };
        let rows: Vec<TaskRow<'_>> = self
            .rows()
            .filter(|row| row.task.id.starts_with(&wanted))
            .collect();
        let broken: Vec<(&String, &Arc<str>)> = self
            .unreadable
            .iter()
            .filter(|(key, _)| key.starts_with(&wanted))
            .collect();
        match (rows.as_slice(), broken.as_slice()) {
            ([row], []) => TaskLookup::Found(*row),
            ([], [(key, why)]) => TaskLookup::Unreadable((*key).clone(), (*why).clone()),
            ([], []) => TaskLookup::NotFound,
            _ => TaskLookup::Ambiguous(
                rows.iter()
                    .map(|r| r.task.id.clone())
                    .chain(broken.iter().map(|(k, _)| (*k).clone()))
                    .collect(),
            ),
        }
    }
}

impl Fields for TaskRow<'_> {
    fn value(&self, field: Field) -> Value<'_> {
        let t = self.task;
        match field {
            Field::Id => Value::Text(&t.id),
            Field::Title => Value::Text(&t.title),
            Field::Description => Value::Text(&t.description),
            Field::Status => Value::Text(t.status()),
            Field::State => Value::Text(t.state.as_deref().unwrap_or("")),
            Field::StateKind => Value::Text(t.state_kind.as_deref().unwrap_or("")),
            Field::Labels => Value::Labels(&t.labels),
            Field::Assignees => Value::Labels(&t.assignees),
            Field::Parents => Value::Labels(&t.parents),
            Field::Children => Value::Labels(&t.children),
            Field::Author => Value::Text(&t.author),
            Field::Created => Value::Date(t.created),
            Field::Updated => Value::Date(t.updated),
            Field::CommentCount => Value::Number(Some(self.comment_count)),
            Field::HasComments => Value::Bool(!t.comments.is_empty()),
            // Issue and milestone fields: no filter or sort over tasks names them.
            Field::Milestone => Value::Milestone {
                id: None,
                title: None,
            },
            Field::OpenIssues => Value::Number(None),
            Field::HasMilestone => Value::Bool(false),
        }
    }

    fn lowercase(&self, field: Field) -> Option<&str> {
        let t = self.task;
        // A task not folded here (deserialized) has no lowercased title of its own.
        (field == Field::Title && (t.title.is_empty() || !t.title_lower.is_empty()))
            .then_some(t.title_lower.as_str())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn title_contains_reads_the_title_lowercased_once() {
        use crate::query::{Filter, Vocabulary};
        let task = super::Task::bare("019a5b2c-0001-7000-8000-000000000001", "Fix the LOGIN Page");
        let row = super::TaskRow {
            task: &task,
            comment_count: 0,
        };
        let filter = |text: &str| Filter::parse_in(text, Vocabulary::Tasks).unwrap();
        assert!(filter(r#"title contains "login page""#).matches(&row));
        assert!(!filter(r#"not (title contains "Login") or id == "x""#).matches(&row));
        assert!(!filter(r#"title contains "logout""#).matches(&row));
        // A task with no lowercased title of its own (not folded here): lowercased on the spot.
        let bare = super::Task {
            title_lower: String::new(),
            ..task.clone()
        };
        let row = super::TaskRow {
            task: &bare,
            comment_count: 0,
        };
        assert!(filter(r#"title contains "LOGIN""#).matches(&row));
    }

    #[test]
    fn prefixes_are_as_short_as_for_issues() {
        assert_eq!(super::MIN_PREFIX, crate::catalog::MIN_PREFIX);
    }
}
