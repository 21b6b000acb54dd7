//! Folding a task's events into the task, as upstream git-mile does (`TaskSnapshot::replay`
//! and `TaskView::from_events` of its `git-mile-core` and `git-mile-app`):
//!
//! - the events are ordered by (lamport, timestamp, event id), a stable sort of the order
//!   they were read in, then applied one by one;
//! - title, description, state and state kind are last-writer-wins registers stamped with
//!   (lamport, timestamp, event id): a value is taken only from an event stamped strictly
//!   later than the one that set the value before (the registers start stamped
//!   (0, 1970-01-01T00:00:00Z, nil), so an event stamped no later than that sets nothing);
//! - `taskCreated` sets the title and the description (none: empty) and the state kind (none
//!   clears it), the state only when it gives one; `taskStateCleared` clears both;
//! - labels, assignees, parents, children and relations are observed-remove sets: applied in
//!   order, an add adds and a remove removes what was added before it;
//! - `childLinked` / `childUnlinked` in task T change T's children when T is the parent, its
//!   parents when T is the child (upstream writes the event in both tasks' refs);
//! - comments are kept in order of their `commentAdded`; a `commentUpdated` replaces the
//!   body of the latest comment with its id (none: it changes nothing) and stamps it edited;
//! - `updated` is the timestamp of the last event in that order (not the latest timestamp).
//!
//! Upstream has no author nor creation time; here they are those of the first
//! `taskCreated` (of the first event when there is none).

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet, HashMap};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::event::{TaskChange, TaskEvent};

/// The state kind that makes a task closed; every other kind, and none, is open. Upstream's
/// kinds are `done`, `in_progress`, `blocked`, `todo` and `backlog`: only `done` is finished
/// (its MCP server's `list_tasks` hides `done` by default, as our lists hide closed ones).
pub const CLOSED_KIND: &str = "done";

/// A comment of a task, as shown (`git_mile.show`, `git mile show --json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TaskComment {
    /// The comment's id (upstream's `comment_id`).
    pub id: String,
    pub author: String,
    /// The current body (after its edits).
    pub body: String,
    /// RFC 3339 time of the comment.
    pub ts: DateTime<Utc>,
    /// How many `commentUpdated` events changed it (0: never).
    pub edits: u64,
    /// RFC 3339 time of the last of them, `null` when never edited.
    pub edited: Option<DateTime<Utc>>,
}

/// A task as its events make it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Task {
    /// The task id, lowercase hyphenated.
    pub id: String,
    pub title: String,
    /// The title lowercased, made once when the task is folded: what a filter's `contains`
    /// over titles reads (a listing of 10,000 tasks would lowercase every title again).
    #[serde(skip)]
    pub title_lower: String,
    pub description: String,
    pub state: Option<String>,
    pub state_kind: Option<String>,
    pub labels: BTreeSet<String>,
    pub assignees: BTreeSet<String>,
    pub parents: BTreeSet<String>,
    pub children: BTreeSet<String>,
    /// Upstream's generic relations: kind → task ids (kinds left empty are dropped).
    pub relations: BTreeMap<String, BTreeSet<String>>,
    pub author: String,
    pub created: DateTime<Utc>,
    pub updated: DateTime<Utc>,
    pub comments: Vec<TaskComment>,
}

impl Task {
    pub fn closed(&self) -> bool {
        self.state_kind.as_deref() == Some(CLOSED_KIND)
    }

    /// `open` or `closed`, from the state kind.
    pub fn status(&self) -> &'static str {
        if self.closed() { "closed" } else { "open" }
    }
}

/// The stamp of an event: the key of the order of replay and of the registers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Stamp {
    lamport: u64,
    ts: DateTime<Utc>,
    id: Uuid,
}

impl Stamp {
    fn of(event: &TaskEvent) -> Self {
        Self {
            lamport: event.lamport,
            ts: event.ts,
            id: event.id,
        }
    }
}

/// A last-writer-wins register.
struct Register<T> {
    value: T,
    stamp: Stamp,
}

impl<T> Register<T> {
    fn new(value: T) -> Self {
        Self {
            value,
            stamp: Stamp {
                lamport: 0,
                ts: DateTime::<Utc>::UNIX_EPOCH,
                id: Uuid::nil(),
            },
        }
    }

    fn set(&mut self, value: T, stamp: Stamp) {
        if stamp > self.stamp {
            self.value = value;
            self.stamp = stamp;
        }
    }
}

/// `events` (all of one task, in the order they were read) in the order of replay.
pub fn order<'a>(events: impl IntoIterator<Item = &'a TaskEvent>) -> Vec<&'a TaskEvent> {
    let mut events: Vec<&TaskEvent> = events.into_iter().collect();
    // `sort_by` is stable: events with equal stamps keep the order they were read in.
    events.sort_by(|a, b| Stamp::of(a).cmp(&Stamp::of(b)));
    events
}

fn ids(set: BTreeSet<Uuid>) -> BTreeSet<String> {
    set.into_iter()
        .map(|id| id.hyphenated().to_string())
        .collect()
}

/// The task `id` made by `events` (those of its ref that are about it), or `None` when there
/// are none.
pub fn replay<'a>(id: Uuid, events: impl IntoIterator<Item = &'a TaskEvent>) -> Option<Task> {
    let events = order(events);
    let first = events.first()?;
    let origin = events
        .iter()
        .find(|e| matches!(e.kind, TaskChange::TaskCreated { .. }))
        .copied()
        .unwrap_or(first);
    let (author, created) = (origin.actor.name.clone(), origin.ts);
    let mut title = Register::new(String::new());
    let mut description = Register::new(String::new());
    let mut state: Register<Option<String>> = Register::new(None);
    let mut state_kind: Register<Option<String>> = Register::new(None);
    let mut labels = BTreeSet::new();
    let mut assignees = BTreeSet::new();
    let mut parents = BTreeSet::new();
    let mut children = BTreeSet::new();
    let mut relations: BTreeMap<String, BTreeSet<Uuid>> = BTreeMap::new();
    let mut comments: Vec<TaskComment> = Vec::new();
    let mut comment_at: HashMap<Uuid, usize> = HashMap::new();
    let mut last: Option<Stamp> = None;
    for event in events.iter().copied() {
        let stamp = Stamp::of(event);
        last = Some(last.map_or(stamp, |l| l.max(stamp)));
        match &event.kind {
            TaskChange::TaskCreated {
                title: t,
                labels: l,
                assignees: a,
                description: d,
                state: s,
                state_kind: k,
            } => {
                title.set(t.clone(), stamp);
                description.set(d.clone().unwrap_or_default(), stamp);
                if let Some(s) = s {
                    state.set(Some(s.clone()), stamp);
                }
                state_kind.set(k.clone(), stamp);
                labels.extend(l.iter().cloned());
                assignees.extend(a.iter().cloned());
            }
            TaskChange::TaskStateSet {
                state: s,
                state_kind: k,
            } => {
                state.set(Some(s.clone()), stamp);
                state_kind.set(k.clone(), stamp);
            }
            TaskChange::TaskStateCleared => {
                state.set(None, stamp);
                state_kind.set(None, stamp);
            }
            TaskChange::TaskTitleSet { title: t } => title.set(t.clone(), stamp),
            TaskChange::TaskDescriptionSet { description: d } => {
                description.set(d.clone().unwrap_or_default(), stamp);
            }
            TaskChange::LabelsAdded { labels: l } => labels.extend(l.iter().cloned()),
            TaskChange::LabelsRemoved { labels: l } => l.iter().for_each(|x| {
                labels.remove(x);
            }),
            TaskChange::AssigneesAdded { assignees: a } => assignees.extend(a.iter().cloned()),
            TaskChange::AssigneesRemoved { assignees: a } => a.iter().for_each(|x| {
                assignees.remove(x);
            }),
            TaskChange::CommentAdded {
                comment_id,
                body_md,
            } => {
                comment_at.insert(*comment_id, comments.len());
                comments.push(TaskComment {
                    id: comment_id.hyphenated().to_string(),
                    author: event.actor.name.clone(),
                    body: body_md.clone(),
                    ts: event.ts,
                    edits: 0,
                    edited: None,
                });
            }
            TaskChange::CommentUpdated {
                comment_id,
                body_md,
            } => {
                if let Some(comment) = comment_at
                    .get(comment_id)
                    .and_then(|&at| comments.get_mut(at))
                {
                    comment.body.clone_from(body_md);
                    comment.edits += 1;
                    comment.edited = Some(event.ts);
                }
            }
            TaskChange::ChildLinked { parent, child } => {
                if *parent == id {
                    children.insert(*child);
                }
                if *child == id {
                    parents.insert(*parent);
                }
            }
            TaskChange::ChildUnlinked { parent, child } => {
                if *parent == id {
                    children.remove(child);
                }
                if *child == id {
                    parents.remove(parent);
                }
            }
            TaskChange::RelationAdded { kind, target } => {
                relations.entry(kind.clone()).or_default().insert(*target);
            }
            TaskChange::RelationRemoved { kind, target } => {
                if let Some(set) = relations.get_mut(kind) {
                    set.remove(target);
                    if set.is_empty() {
                        relations.remove(kind);
                    }
                }
            }
        }
    }
    Some(Task {
        id: id.hyphenated().to_string(),
        title_lower: title.value.to_lowercase(),
        title: title.value,
        description: description.value,
        state: state.value,
        state_kind: state_kind.value,
        labels,
        assignees,
        parents: ids(parents),
        children: ids(children),
        relations: relations
            .into_iter()
            .map(|(kind, set)| (kind, ids(set)))
            .collect(),
        author,
        created,
        updated: last.map_or(created, |l| l.ts),
        comments,
    })
}

#[cfg(test)]
impl Task {
    /// A task of id `id` titled `title`, created and updated at the epoch by `a`, with nothing
    /// else: what unit tests start from.
    pub fn bare(id: &str, title: &str) -> Self {
        let at = DateTime::<Utc>::UNIX_EPOCH;
        Self {
            id: id.into(),
            title: title.into(),
            title_lower: title.to_lowercase(),
            description: String::new(),
            state: None,
            state_kind: None,
            labels: BTreeSet::new(),
            assignees: BTreeSet::new(),
            parents: BTreeSet::new(),
            children: BTreeSet::new(),
            relations: BTreeMap::new(),
            author: "a".into(),
            created: at,
            updated: at,
            comments: Vec::new(),
        }
    }
}

/// Order of tasks by id (for stable listings before sorting).
pub fn by_id(a: &Task, b: &Task) -> Ordering {
    a.id.cmp(&b.id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::event::Actor;
    use chrono::TimeZone;

    const TASK: Uuid = Uuid::from_u128(0xaa);

    fn event(lamport: u64, secs: i64, id: u128, kind: TaskChange) -> TaskEvent {
        TaskEvent {
            schema: crate::task::event::SCHEMA.into(),
            id: Uuid::from_u128(id),
            lamport,
            ts: Utc.timestamp_opt(1_760_000_000 + secs, 0).unwrap(),
            actor: Actor {
                name: format!("user{id}"),
                email: "u@example.com".into(),
            },
            task: TASK,
            kind,
        }
    }

    fn created(title: &str) -> TaskChange {
        TaskChange::TaskCreated {
            title: title.into(),
            labels: vec!["a".into()],
            assignees: vec![],
            description: None,
            state: Some("state/todo".into()),
            state_kind: Some("todo".into()),
        }
    }

    fn state(s: &str, k: &str) -> TaskChange {
        TaskChange::TaskStateSet {
            state: s.into(),
            state_kind: Some(k.into()),
        }
    }

    #[test]
    fn lamport_orders_before_time_and_time_before_id() {
        // The later lamport wins over the later timestamp.
        let events = vec![
            event(2, 10, 3, state("state/done", "done")),
            event(0, 0, 1, created("t")),
            event(1, 99, 2, state("state/doing", "in_progress")),
        ];
        let task = replay(TASK, &events).unwrap();
        assert_eq!(task.state.as_deref(), Some("state/done"));
        assert!(task.closed());
        // Whatever order they were read in.
        let mut reversed = events.clone();
        reversed.reverse();
        assert_eq!(replay(TASK, &reversed).unwrap(), task);
        // `updated` is the timestamp of the last event in that order, not the latest one.
        assert_eq!(task.updated, events[0].ts);

        // Equal lamports: the later timestamp; equal timestamps: the greater event id.
        let events = vec![
            event(0, 0, 1, created("t")),
            event(0, 5, 9, TaskChange::TaskTitleSet { title: "x".into() }),
            event(0, 6, 2, TaskChange::TaskTitleSet { title: "y".into() }),
            event(0, 7, 4, TaskChange::TaskTitleSet { title: "p".into() }),
            event(0, 7, 3, TaskChange::TaskTitleSet { title: "q".into() }),
        ];
        assert_eq!(replay(TASK, &events).unwrap().title, "p");
    }

    #[test]
    fn registers_sets_and_comments() {
        let comment = Uuid::from_u128(0xc);
        let events = vec![
            event(0, 0, 1, created("t")),
            event(
                1,
                1,
                2,
                TaskChange::LabelsAdded {
                    labels: vec!["b".into()],
                },
            ),
            event(
                2,
                2,
                3,
                TaskChange::LabelsRemoved {
                    labels: vec!["a".into()],
                },
            ),
            event(
                3,
                3,
                4,
                TaskChange::CommentAdded {
                    comment_id: comment,
                    body_md: "first".into(),
                },
            ),
            event(
                4,
                4,
                5,
                TaskChange::CommentUpdated {
                    comment_id: comment,
                    body_md: "second".into(),
                },
            ),
            event(
                5,
                5,
                6,
                TaskChange::CommentUpdated {
                    comment_id: Uuid::from_u128(0xd),
                    body_md: "nobody".into(),
                },
            ),
            event(6, 6, 7, TaskChange::TaskStateCleared),
            event(
                7,
                7,
                8,
                TaskChange::ChildLinked {
                    parent: TASK,
                    child: Uuid::from_u128(0xbb),
                },
            ),
            event(
                8,
                8,
                9,
                TaskChange::ChildLinked {
                    parent: Uuid::from_u128(0x99),
                    child: TASK,
                },
            ),
            event(
                9,
                9,
                10,
                TaskChange::ChildUnlinked {
                    parent: TASK,
                    child: Uuid::from_u128(0xbb),
                },
            ),
        ];
        let task = replay(TASK, &events).unwrap();
        assert_eq!(task.labels.iter().collect::<Vec<_>>(), ["b"]);
        assert_eq!((task.state.clone(), task.state_kind.clone()), (None, None));
        assert_eq!(task.status(), "open");
        assert_eq!(task.comments.len(), 1);
        assert_eq!(task.comments[0].body, "second");
        assert_eq!(task.comments[0].edits, 1);
        assert_eq!(task.author, "user1");
        assert!(task.children.is_empty());
        assert_eq!(
            task.parents.iter().collect::<Vec<_>>(),
            ["00000000-0000-0000-0000-000000000099"]
        );
    }

    #[test]
    fn a_creation_without_state_keeps_the_state_but_sets_the_kind() {
        let events = vec![
            event(0, 0, 1, state("state/x", "blocked")),
            event(
                1,
                1,
                2,
                TaskChange::TaskCreated {
                    title: "t".into(),
                    labels: vec![],
                    assignees: vec![],
                    description: Some("d".into()),
                    state: None,
                    state_kind: None,
                },
            ),
        ];
        let task = replay(TASK, &events).unwrap();
        assert_eq!(task.state.as_deref(), Some("state/x"));
        assert_eq!(task.state_kind, None);
        assert_eq!(task.author, "user2");
    }

    #[test]
    fn an_event_stamped_at_the_epoch_sets_no_register() {
        let mut e = event(0, 0, 0, created("t"));
        e.ts = DateTime::<Utc>::UNIX_EPOCH;
        let task = replay(TASK, &[e]).unwrap();
        assert_eq!(task.title, "");
        assert_eq!(task.labels.len(), 1);
    }
}
