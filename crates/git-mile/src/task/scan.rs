//! Reading `refs/git-mile/` outside the two namespaces the catalog reads (`issue/`,
//! `milestone/`): upstream git-mile's tasks under `tasks/`, and a count of every other ref,
//! so that a repository holding data this version cannot read says so.
//!
//! The namespaces are found without listing `issue/` and `milestone/` (which may hold
//! thousands of refs, and which the catalog tracks on its own): the directory
//! `refs/git-mile/` is read, and `packed-refs`, whose names are taken again only when the
//! file changed. Each namespace found is then read through git, loose and packed refs alike.
//! A task is replayed again only when its ref moved.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use gix::ObjectId;
use uuid::Uuid;

use super::event::{Decoded, TaskEvent, decode};
use super::replay::{Task, replay};
use super::{MAX_OTHER_REFS, OtherRefs, TaskSet};
use crate::store::{GitStore, StoreError, StoreResult};

/// The namespaces the catalog reads: never listed here.
const READ_ELSEWHERE: [&str; 2] = ["issue", "milestone"];
pub const TASKS: &str = "tasks";

/// What a task ref's history folds to: its task, or why it cannot be read.
type Folded = Result<Arc<Task>, Arc<str>>;

/// The names in `packed-refs` under `refs/git-mile/`, outside the catalog's namespaces, as
/// of the file's modification time and size.
#[derive(Default)]
struct Packed {
    stamp: Option<(SystemTime, u64)>,
    /// Namespaces (`tasks`), and refs directly under `refs/git-mile/` (`refs/git-mile/x`).
    namespaces: BTreeSet<String>,
    direct: BTreeSet<String>,
}

#[derive(Default)]
pub struct TaskCache {
    folded: Mutex<HashMap<String, (ObjectId, Folded)>>,
    packed: Mutex<Packed>,
}

fn git<E: std::fmt::Display>(err: E) -> StoreError {
    StoreError::Git(crate::quote::excerpt(&err.to_string()))
}

/// One counted group of refs.
fn bump(groups: &mut BTreeMap<(String, &'static str), u64>, prefix: String, what: &'static str) {
    *groups.entry((prefix, what)).or_default() += 1;
}

/// What a namespace other than the ones this version reads is.
fn what_namespace(ns: &str) -> &'static str {
    match ns {
        "entities" => {
            "entities of an early upstream git-mile (identities, October 2025), which this version does not read"
        }
        _ => "refs of a namespace this version does not know",
    }
}

impl TaskCache {
    /// Every task and every other ref of `store`'s repository, as the refs say now.
    pub fn read(&self, store: &GitStore) -> StoreResult<TaskSet> {
        let git_dir = store.git_dir();
        let (mut namespaces, mut direct) = loose_names(git_dir);
        {
            let mut packed = self
                .packed
                .lock()
                .map_err(|_| StoreError::Git("task cache lock poisoned".into()))?;
            refresh_packed(git_dir, &mut packed);
            namespaces.extend(packed.namespaces.iter().cloned());
            direct.extend(packed.direct.iter().cloned());
        }
        if namespaces.is_empty() && direct.is_empty() {
            // Nothing beside issue/ and milestone/: git is not asked at all.
            self.fold(store, &[])?;
            return Ok(TaskSet::default());
        }
        let repo = store.repository();
        let mut groups: BTreeMap<(String, &'static str), u64> = BTreeMap::new();
        let mut tips: Vec<(Uuid, ObjectId)> = Vec::new();
        let platform = repo.references().map_err(git)?;
        for ns in &namespaces {
            let prefix = format!("{}{}/", crate::store::REF_PREFIX, printable(ns));
            let iter = match platform.prefixed(prefix.as_bytes()) {
                Ok(iter) => iter,
                // A directory whose name no ref may have (`git check-ref-format`).
                Err(err) if ns != TASKS => {
                    tracing::debug!(%prefix, %err, "not a ref namespace");
                    bump(
                        &mut groups,
                        prefix.clone(),
                        "a directory whose name is no valid ref name; git does not read it either",
                    );
                    continue;
                }
                Err(err) => return Err(git(err)),
            };
            let mut seen = 0u64;
            for reference in iter {
                seen += 1;
                let Ok(reference) = reference else {
                    let what = if ns == TASKS {
                        "task refs git cannot read (the repository may be damaged; `git fsck` tells more)"
                    } else {
                        what_namespace(ns)
                    };
                    bump(&mut groups, prefix.clone(), what);
                    continue;
                };
                if ns != TASKS {
                    bump(&mut groups, prefix.clone(), what_namespace(ns));
                    continue;
                }
                let name = reference.name().as_bstr().to_string();
                let rest = name.strip_prefix(&prefix).unwrap_or_default();
                // Only the names upstream writes: lowercase hyphenated UUIDs.
                let id = Uuid::parse_str(rest)
                    .ok()
                    .filter(|u| u.hyphenated().to_string() == rest);
                match (id, reference.target().try_id()) {
                    (Some(id), Some(tip)) => tips.push((id, tip.to_owned())),
                    (Some(_), None) => bump(
                        &mut groups,
                        prefix.clone(),
                        "symbolic refs in upstream git-mile's task namespace, which hold no task",
                    ),
                    (None, _) => bump(
                        &mut groups,
                        prefix.clone(),
                        "refs in upstream git-mile's task namespace whose names are not task ids (lowercase UUIDs); upstream passes over them too",
                    ),
                }
            }
            if seen == 0 {
                // Files git passes over (names no ref may have): counted, not ignored.
                let dir = git_dir.join("refs").join("git-mile").join(ns);
                let files = count_files(&dir, MAX_COUNTED);
                if files > 0 {
                    *groups
                        .entry((
                            prefix.clone(),
                            "files whose names are no valid ref names; git does not read them either",
                        ))
                        .or_default() += files;
                }
            }
        }
        for name in direct {
            // It may have been deleted since (a stale packed-refs reading is re-read above).
            if repo
                .try_find_reference(name.as_str())
                .ok()
                .flatten()
                .is_some()
            {
                bump(
                    &mut groups,
                    name,
                    "a ref directly under refs/git-mile/, in no namespace",
                );
            }
        }
        let folded = self.fold(store, &tips)?;
        let mut tasks = Vec::new();
        let mut unreadable = BTreeMap::new();
        for ((id, _), folded) in tips.iter().zip(folded) {
            match folded {
                Ok(task) => tasks.push(task),
                Err(why) => {
                    unreadable.insert(id.hyphenated().to_string(), why);
                }
            }
        }
        let other_refs = groups
            .into_iter()
            .take(MAX_OTHER_REFS)
            .map(|((prefix, what), count)| OtherRefs {
                prefix: crate::quote::excerpt(&prefix),
                count,
                what: what.to_string(),
            })
            .collect();
        Ok(TaskSet::new(tasks, unreadable, other_refs))
    }

    /// Each tip's task, replayed again only when its ref moved.
    fn fold(&self, store: &GitStore, tips: &[(Uuid, ObjectId)]) -> StoreResult<Vec<Folded>> {
        let mut known = self
            .folded
            .lock()
            .map_err(|_| StoreError::Git("task cache lock poisoned".into()))?;
        let mut out = Vec::with_capacity(tips.len());
        let mut live = HashSet::new();
        for (id, tip) in tips {
            let key = id.hyphenated().to_string();
            let folded = match known.get(&key) {
                Some((known_tip, folded)) if known_tip == tip => folded.clone(),
                _ => {
                    let folded = load(store, *id, *tip);
                    if let Err(why) = &folded {
                        tracing::warn!(task = %key, %why, "unreadable task; left out");
                    }
                    known.insert(key.clone(), (*tip, folded.clone()));
                    folded
                }
            };
            live.insert(key);
            out.push(folded);
        }
        known.retain(|key, _| live.contains(key));
        Ok(out)
    }
}

/// How many files [`count_files`] counts at most.
const MAX_COUNTED: u64 = 10_000;

/// The files under `dir` (at most `budget`).
fn count_files(dir: &Path, budget: u64) -> u64 {
    let mut count = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            if count >= budget {
                return count;
            }
            match entry.file_type() {
                Ok(t) if t.is_dir() => stack.push(entry.path()),
                Ok(_) => count += 1,
                Err(_) => {}
            }
        }
    }
    count
}

/// `name` with its control characters shown as `?` (it is printed on a terminal).
fn printable(name: &str) -> String {
    name.chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}

/// The namespaces (directories) and direct refs (files) in `refs/git-mile/`.
fn loose_names(git_dir: &Path) -> (BTreeSet<String>, BTreeSet<String>) {
    let mut namespaces = BTreeSet::new();
    let mut direct = BTreeSet::new();
    let Ok(entries) = std::fs::read_dir(git_dir.join("refs").join("git-mile")) else {
        return (namespaces, direct);
    };
    for entry in entries.flatten() {
        let Some(name) = entry.file_name().to_str().map(str::to_string) else {
            continue;
        };
        if READ_ELSEWHERE.contains(&name.as_str()) || name.ends_with(".lock") {
            continue;
        }
        match entry.file_type() {
            Ok(t) if t.is_dir() => {
                namespaces.insert(name);
            }
            Ok(_) => {
                direct.insert(format!("{}{}", crate::store::REF_PREFIX, printable(&name)));
            }
            Err(_) => {}
        }
    }
    (namespaces, direct)
}

/// Take the names of `packed-refs` again when the file changed.
fn refresh_packed(git_dir: &Path, packed: &mut Packed) {
    let path = git_dir.join("packed-refs");
    let stamp = std::fs::metadata(&path)
        .ok()
        .and_then(|m| Some((m.modified().ok()?, m.len())));
    if stamp.is_some() && stamp == packed.stamp {
        return;
    }
    *packed = Packed {
        stamp,
        ..Packed::default()
    };
    let Ok(text) = std::fs::read(&path) else {
        return;
    };
    for line in text.split(|b| *b == b'\n') {
        let Some(name) = line.splitn(2, |b| *b == b' ').nth(1) else {
            continue;
        };
        let Some(rest) = name.strip_prefix(crate::store::REF_PREFIX.as_bytes()) else {
            continue;
        };
        let rest = String::from_utf8_lossy(rest).trim_end().to_string();
        match rest.split_once('/') {
            Some((ns, _)) if READ_ELSEWHERE.contains(&ns) => {}
            Some((ns, _)) => {
                packed.namespaces.insert(ns.to_string());
            }
            None => {
                packed
                    .direct
                    .insert(format!("{}{rest}", crate::store::REF_PREFIX));
            }
        }
    }
}

/// The task of the ref of `id` at `tip`: every commit reachable from it (merges included)
/// read once, oldest first by commit time as upstream reads them; a commit that is no
/// event is passed over; one that is a bad event makes the task unreadable.
fn load(store: &GitStore, id: Uuid, tip: ObjectId) -> Folded {
    let repo = store.repository();
    let short = |oid: &ObjectId| oid.to_hex_with_len(12).to_string();
    let mut read: Vec<(i64, TaskEvent)> = Vec::new();
    let mut seen = HashSet::from([tip]);
    let mut queue = VecDeque::from([tip]);
    while let Some(oid) = queue.pop_front() {
        let commit = repo
            .find_commit(oid)
            .map_err(|err| Arc::from(format!("commit {}: {}", short(&oid), err).as_str()))?;
        match decode(commit.message_raw_sloppy()) {
            Decoded::NotAnEvent => {}
            Decoded::Bad(why) => {
                let why = format!("commit {} holds {why}", short(&oid));
                return Err(Arc::from(crate::quote::excerpt(&why).as_str()));
            }
            Decoded::Event(event) => {
                // Upstream passes over events about another task.
                if event.task == id {
                    let time = commit.time().map(|t| t.seconds).unwrap_or(0);
                    read.push((time, *event));
                }
            }
        }
        for parent in commit.parent_ids() {
            let parent = parent.detach();
            if seen.insert(parent) {
                queue.push_back(parent);
            }
        }
    }
    // Oldest commit first (stable: the order of the walk among equal times).
    read.sort_by_key(|(time, _)| *time);
    let events = read.into_iter().map(|(_, event)| event).collect();
    replay(id, events)
        .map(Arc::new)
        .ok_or_else(|| Arc::from("its history holds no git-mile-event about this task"))
}
