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
use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use gix::ObjectId;
use uuid::Uuid;

use super::event::{Decoded, TaskEvent, decode};
use super::replay::{Task, replay};
use super::watch::{TaskLook, TaskWatch, simple_layout};
use super::{MAX_OTHER_REFS, OtherRefs, TaskSet};
use crate::store::{GitStore, StoreError, StoreResult};

/// The namespaces the catalog reads: never listed here.
const READ_ELSEWHERE: [&str; 2] = ["issue", "milestone"];
/// The namespace of upstream's tasks (`refs/git-mile/tasks/`), defined where it is watched.
pub use super::watch::TASKS;

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
    loaded: Mutex<HashMap<Uuid, Loaded>>,
    packed: Mutex<Packed>,
    /// The last full scan, kept while the kernel says no ref it named changed.
    kept: Mutex<Kept>,
    /// The last set of every task, and the generation of the scan it was read from:
    /// answered again while the refs are where they were.
    every: Mutex<Option<(u64, TaskSet)>>,
    /// How many commits were opened to read tasks, since the cache was made: the work a
    /// listing did (a listing of issues opens none).
    commits_read: AtomicU64,
}

/// Where a commit falls in the order events are read in, as upstream's walk (commit time,
/// oldest first) yields them: by time, then by generation (a parent before its children
/// among equal times), then by id, so that the order never depends on how the history was
/// walked.
type ReadKey = (i64, u64, ObjectId);

/// A task ref as last read: its tip, every commit reachable from it (with its generation),
/// the events about the task in read order, and what they fold to. When the ref moves forward
/// (its old tip is an ancestor of the new one), only the commits on top are read.
struct Loaded {
    tip: ObjectId,
    generations: HashMap<ObjectId, u64>,
    events: Vec<(ReadKey, TaskEvent)>,
    folded: Folded,
}

/// The refs under `refs/git-mile/` outside the catalog's namespaces, named but not read: the
/// task refs' tips, and the groups of refs this version does not read.
#[derive(Clone)]
struct Scan {
    tips: Vec<(Uuid, ObjectId)>,
    groups: BTreeMap<(String, &'static str), u64>,
}

/// A scan kept between looks, and the watch that tells what changed since.
#[derive(Default)]
struct Kept {
    /// Made before the first scan (see [`TaskWatch`]).
    watch: Option<TaskWatch>,
    tips: BTreeMap<Uuid, ObjectId>,
    groups: BTreeMap<(String, &'static str), u64>,
    /// Whether the last full scan may be brought up to date from what the watch tells: it
    /// found nothing but task refs, laid out as upstream lays them.
    trusted: bool,
    /// Counts the changes of `tips` and `groups`.
    generation: u64,
}

impl Kept {
    fn scan(&self) -> Scan {
        Scan {
            tips: self.tips.iter().map(|(id, tip)| (*id, *tip)).collect(),
            groups: self.groups.clone(),
        }
    }

    /// The kept scan with the refs of `names` read again; `false` when one of them is not
    /// a plain task ref any more (a full scan tells what it is).
    fn update(&mut self, store: &GitStore, names: &[String]) -> bool {
        let repo = store.repository();
        for name in names {
            let Ok(id) = Uuid::parse_str(name) else {
                return false;
            };
            let full = format!("{}{TASKS}/{name}", crate::store::REF_PREFIX);
            let before = match repo.try_find_reference(full.as_str()) {
                Ok(Some(reference)) => match reference.target().try_id() {
                    Some(tip) => self.tips.insert(id, tip.to_owned()),
                    None => return false,
                },
                Ok(None) => self.tips.remove(&id),
                Err(_) => return false,
            };
            if before != self.tips.get(&id).copied() {
                self.generation += 1;
            }
        }
        true
    }
}

fn git<E: std::fmt::Display>(err: E) -> StoreError {
    StoreError::Git(crate::quote::excerpt(&err.to_string()))
}

/// A task's ref as read at one tip ([`TaskCache::history`]).
#[derive(Debug, Clone)]
pub struct TaskHistory {
    /// The events about the task, in the order upstream reads them (its order of replay is
    /// [`super::replay::order`] of these).
    pub events: Vec<TaskEvent>,
    pub task: Arc<Task>,
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

/// The groups a listing names: at most [`MAX_OTHER_REFS`], in prefix order. When there are
/// more, those under `tasks/` (refs of the namespace this version reads that hold no task or
/// cannot be read) are kept first, then the others in prefix order, and a last group of
/// prefix `refs/git-mile/` counts the refs of the groups left out.
fn other_refs(groups: BTreeMap<(String, &'static str), u64>) -> Vec<OtherRefs> {
    let tasks = format!("{}{TASKS}/", crate::store::REF_PREFIX);
    let all: Vec<((String, &'static str), u64)> = groups.into_iter().collect();
    let shape = |((prefix, what), count): &((String, &'static str), u64)| OtherRefs {
        prefix: crate::quote::excerpt(prefix),
        count: *count,
        what: what.to_string(),
    };
    if all.len() <= MAX_OTHER_REFS {
        return all.iter().map(shape).collect();
    }
    let mut order: Vec<usize> = (0..all.len()).collect();
    order.sort_by_key(|&i| (all[i].0.0 != tasks, i));
    let kept: BTreeSet<usize> = order.into_iter().take(MAX_OTHER_REFS - 1).collect();
    let mut out: Vec<OtherRefs> = kept.iter().map(|&i| shape(&all[i])).collect();
    let left_out = all.len() - kept.len();
    let count = (0..all.len())
        .filter(|i| !kept.contains(i))
        .map(|i| all[i].1)
        .sum();
    out.push(OtherRefs {
        prefix: crate::store::REF_PREFIX.to_string(),
        count,
        what: format!(
            "{left_out} more groups of refs this version does not read, left out of this list (it names at most {MAX_OTHER_REFS})"
        ),
    });
    out
}

impl TaskCache {
    /// The task refs and every other ref of `store`'s repository, named but not read: how many
    /// task refs there are and the groups of other refs. No commit is opened.
    pub fn names(&self, store: &GitStore) -> StoreResult<TaskSet> {
        let kept = self.refresh(store)?;
        Ok(TaskSet::named(
            kept.tips.len(),
            other_refs(kept.groups.clone()),
        ))
    }

    /// Every task and every other ref of `store`'s repository, as the refs say now.
    pub fn read(&self, store: &GitStore) -> StoreResult<TaskSet> {
        let (generation, scan) = {
            let kept = self.refresh(store)?;
            let generation = kept.generation;
            let every = self
                .every
                .lock()
                .map_err(|_| StoreError::Git("task cache lock poisoned".into()))?;
            if let Some((read, set)) = every.as_ref()
                && *read == generation
            {
                return Ok(set.clone());
            }
            (generation, kept.scan())
        };
        let set = self.read_scanned(store, scan, |_| true)?;
        if let Ok(mut every) = self.every.lock() {
            *every = Some((generation, set.clone()));
        }
        Ok(set)
    }

    /// The tasks whose ids `wanted` accepts (the others are not read) and every other ref of
    /// `store`'s repository, as the refs say now.
    pub fn read_where(
        &self,
        store: &GitStore,
        wanted: impl Fn(&str) -> bool,
    ) -> StoreResult<TaskSet> {
        let scan = self.scan(store)?;
        self.read_scanned(store, scan, wanted)
    }

    /// The tasks of `scan` whose ids `wanted` accepts, and the other refs it names.
    fn read_scanned(
        &self,
        store: &GitStore,
        scan: Scan,
        wanted: impl Fn(&str) -> bool,
    ) -> StoreResult<TaskSet> {
        let live: HashSet<Uuid> = scan.tips.iter().map(|(id, _)| *id).collect();
        let mut buffer = uuid::Uuid::encode_buffer();
        let tips: Vec<(Uuid, ObjectId)> = scan
            .tips
            .into_iter()
            .filter(|(id, _)| wanted(id.hyphenated().encode_lower(&mut buffer)))
            .collect();
        let folded = self.fold(store, &tips, &live)?;
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
        Ok(TaskSet::new(tasks, unreadable, other_refs(scan.groups)).of_refs(live.len()))
    }

    /// What the ref of task `id` holds at `tip`: its events about the task in the order
    /// upstream reads them, and the task they fold to; or why it cannot be read (an event
    /// this version cannot decode, a history with no event about the task). Read through the
    /// cache, as listings read it: when the ref moved forward since it was last read, only the
    /// commits on top are opened.
    pub fn history(
        &self,
        store: &GitStore,
        id: Uuid,
        tip: ObjectId,
    ) -> Result<TaskHistory, Arc<str>> {
        let mut known = self
            .loaded
            .lock()
            .map_err(|_| Arc::<str>::from("task cache lock poisoned"))?;
        let key = id;
        let loaded = match known.remove(&key) {
            Some(loaded) if loaded.tip == tip => loaded,
            before => {
                let (loaded, read) = load(store, id, tip, before);
                self.commits_read.fetch_add(read, AtomicOrdering::Relaxed);
                loaded
            }
        };
        let history = loaded.folded.clone().map(|task| TaskHistory {
            events: loaded.events.iter().map(|(_, e)| e.clone()).collect(),
            task,
        });
        known.insert(key, loaded);
        history
    }

    /// How many commits were opened to read tasks since this cache was made.
    pub fn commits_read(&self) -> u64 {
        self.commits_read.load(AtomicOrdering::Relaxed)
    }

    /// The refs, named: nothing but ref names and tips is read, and only those the kernel
    /// says changed since the last scan when it can tell ([`TaskWatch`]).
    fn scan(&self, store: &GitStore) -> StoreResult<Scan> {
        Ok(self.refresh(store)?.scan())
    }

    /// The kept scan brought up to date: from what the kernel says changed when it can tell
    /// ([`TaskWatch`]), else by a full scan.
    fn refresh(&self, store: &GitStore) -> StoreResult<std::sync::MutexGuard<'_, Kept>> {
        let mut kept = self
            .kept
            .lock()
            .map_err(|_| StoreError::Git("task cache lock poisoned".into()))?;
        let git_dir = store.git_dir();
        let look = kept
            .watch
            .get_or_insert_with(|| TaskWatch::new(git_dir))
            .look();
        if kept.trusted {
            match look {
                TaskLook::Unchanged => return Ok(kept),
                TaskLook::Changed(names) if kept.update(store, &names) => return Ok(kept),
                _ => {}
            }
        }
        let scan = self.scan_all(store)?;
        let tips: BTreeMap<Uuid, ObjectId> = scan.tips.iter().copied().collect();
        if tips != kept.tips || scan.groups != kept.groups || kept.generation == 0 {
            kept.generation += 1;
        }
        kept.tips = tips;
        kept.groups = scan.groups;
        kept.trusted = kept.groups.is_empty() && simple_layout(git_dir);
        Ok(kept)
    }

    /// Every ref under `refs/git-mile/` outside the catalog's namespaces, named.
    fn scan_all(&self, store: &GitStore) -> StoreResult<Scan> {
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
        let mut groups: BTreeMap<(String, &'static str), u64> = BTreeMap::new();
        let mut tips: Vec<(Uuid, ObjectId)> = Vec::new();
        if namespaces.is_empty() && direct.is_empty() {
            // Nothing beside issue/ and milestone/: git is not asked at all.
            return Ok(Scan { tips, groups });
        }
        let repo = store.repository();
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
        Ok(Scan { tips, groups })
    }

    /// Each tip's task: read again only when its ref moved, and then only the commits on top
    /// of the old tip when the ref moved forward. Tasks whose ids are not in `live` (their
    /// refs are gone) are forgotten.
    fn fold(
        &self,
        store: &GitStore,
        tips: &[(Uuid, ObjectId)],
        live: &HashSet<Uuid>,
    ) -> StoreResult<Vec<Folded>> {
        let mut known = self
            .loaded
            .lock()
            .map_err(|_| StoreError::Git("task cache lock poisoned".into()))?;
        known.retain(|key, _| live.contains(key));
        let mut out: Vec<Option<Folded>> = Vec::with_capacity(tips.len());
        let mut unfolded = Vec::new();
        for (id, tip) in tips {
            let key = *id;
            match known.get(&key) {
                Some(loaded) if loaded.tip == *tip => out.push(Some(loaded.folded.clone())),
                _ => {
                    let before = known.remove(&key);
                    let (events, read) = read_events(store, *id, *tip, before);
                    self.commits_read.fetch_add(read, AtomicOrdering::Relaxed);
                    tracing::debug!(task = %key, commits = read, "task commits read");
                    unfolded.push((out.len(), key, events));
                    out.push(None);
                }
            }
        }
        // Folded once every ref is read, one task after another, so that each task's strings and
        // sets lie together in memory: a task folded right after its commits were read has them
        // scattered among the events the cache keeps and what reading them left, and a warm
        // listing, which reads every task's title, labels, state and dates, took 1.3–1.6× as
        // long over 10,000 tasks so scattered (issue 48).
        for (i, key, events) in unfolded {
            let loaded = events.fold(key);
            if let Err(why) = &loaded.folded {
                tracing::warn!(task = %key, %why, "unreadable task; left out");
            }
            if let Some(slot) = out.get_mut(i) {
                *slot = Some(loaded.folded.clone());
            }
            known.insert(key, loaded);
        }
        Ok(out.into_iter().flatten().collect())
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

/// One commit read: when it was committed, its parents, and its event about the task.
struct Walked {
    oid: ObjectId,
    time: i64,
    parents: Vec<ObjectId>,
    event: Option<TaskEvent>,
}

/// The commits reachable from `tip` and not from `known`'s tip, newest first (a commit
/// `known` holds is not opened again), with how many were opened; `None` when `known` is
/// given and its tip is not an ancestor of `tip` (the ref was rewritten or moved back). A
/// commit that is a bad event makes the whole task unreadable: why.
fn walk(
    store: &GitStore,
    id: Uuid,
    tip: ObjectId,
    known: Option<&Loaded>,
    read: &mut u64,
) -> Result<Option<Vec<Walked>>, Arc<str>> {
    let is_known = |oid: &ObjectId| known.is_some_and(|k| k.generations.contains_key(oid));
    if is_known(&tip) {
        return Ok(None);
    }
    let repo = store.repository();
    let short = |oid: &ObjectId| oid.to_hex_with_len(12).to_string();
    let mut walked = Vec::new();
    let mut reached = false;
    let mut seen = HashSet::from([tip]);
    let mut queue = VecDeque::from([tip]);
    while let Some(oid) = queue.pop_front() {
        *read += 1;
        let commit = repo
            .find_commit(oid)
            .map_err(|err| Arc::from(format!("commit {}: {}", short(&oid), err).as_str()))?;
        let event = match decode(commit.message_raw_sloppy()) {
            Decoded::NotAnEvent => None,
            Decoded::Bad(why) => {
                let why = format!("commit {} holds {why}", short(&oid));
                return Err(Arc::from(crate::quote::excerpt(&why).as_str()));
            }
            // Upstream passes over events about another task.
            Decoded::Event(event) => Some(*event).filter(|e| e.task == id),
        };
        let mut parents = Vec::new();
        for parent in commit.parent_ids() {
            let parent = parent.detach();
            parents.push(parent);
            if is_known(&parent) {
                reached |= known.is_some_and(|k| k.tip == parent);
            } else if seen.insert(parent) {
                queue.push_back(parent);
            }
        }
        walked.push(Walked {
            oid,
            time: commit.time().map(|t| t.seconds).unwrap_or(0),
            parents,
            event,
        });
    }
    Ok((known.is_none() || reached).then_some(walked))
}

/// A task ref's events as read, not folded yet: [`Loaded`] without its task (none, and why,
/// when the ref cannot be read).
struct Unfolded {
    tip: ObjectId,
    generations: HashMap<ObjectId, u64>,
    events: Vec<(ReadKey, TaskEvent)>,
    unreadable: Option<Arc<str>>,
}

impl Unfolded {
    fn failed(tip: ObjectId, why: Arc<str>) -> Self {
        Self {
            tip,
            generations: HashMap::new(),
            events: Vec::new(),
            unreadable: Some(why),
        }
    }

    /// The events with the task they fold to.
    fn fold(self, id: Uuid) -> Loaded {
        let folded = match self.unreadable {
            Some(why) => Err(why),
            None => replay(id, self.events.iter().map(|(_, event)| event))
                .map(Arc::new)
                .ok_or_else(|| Arc::from("its history holds no git-mile-event about this task")),
        };
        Loaded {
            tip: self.tip,
            generations: self.generations,
            events: self.events,
            folded,
        }
    }
}

/// `before` (nothing, or the task as read at an ancestor of `tip`) with the commits `walked`
/// on top of it: each commit's generation, and the events in read order.
fn extend(tip: ObjectId, before: Option<Loaded>, walked: Vec<Walked>) -> Unfolded {
    let (mut generations, mut events) = match before {
        Some(before) => (before.generations, before.events),
        None => (HashMap::new(), Vec::new()),
    };
    // Generations, parents first (Kahn's order over the commits walked).
    let at: HashMap<ObjectId, usize> = walked.iter().enumerate().map(|(i, w)| (w.oid, i)).collect();
    let mut waiting: Vec<usize> = vec![0; walked.len()];
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); walked.len()];
    for (i, w) in walked.iter().enumerate() {
        for parent in &w.parents {
            if let Some(&p) = at.get(parent) {
                waiting[i] += 1;
                children[p].push(i);
            }
        }
    }
    let mut ready: Vec<usize> = (0..walked.len()).filter(|&i| waiting[i] == 0).collect();
    while let Some(i) = ready.pop() {
        let w = &walked[i];
        let generation = 1 + w
            .parents
            .iter()
            .filter_map(|p| generations.get(p))
            .max()
            .copied()
            .unwrap_or(0);
        generations.insert(w.oid, generation);
        for &child in &children[i] {
            waiting[child] -= 1;
            if waiting[child] == 0 {
                ready.push(child);
            }
        }
    }
    for w in walked {
        if let Some(event) = w.event {
            let generation = generations.get(&w.oid).copied().unwrap_or(0);
            events.push(((w.time, generation, w.oid), event));
        }
    }
    // Stable, and the events before are in order already: a merge of two runs.
    events.sort_by_key(|(key, _)| *key);
    Unfolded {
        tip,
        generations,
        events,
        unreadable: None,
    }
}

/// The task of the ref of `id` at `tip`, and how many commits were opened for it: every
/// commit reachable from it (merges included) read once, oldest first by commit time as
/// upstream reads them (among equal times, parents first); a commit that is no event is
/// passed over; one that is a bad event makes the task unreadable. When `before` (the task
/// as last read) is at an ancestor of `tip`, only the commits on top of it are opened and
/// their events added to those read before.
fn load(store: &GitStore, id: Uuid, tip: ObjectId, before: Option<Loaded>) -> (Loaded, u64) {
    let (events, read) = read_events(store, id, tip, before);
    (events.fold(id), read)
}

/// [`load`] without the fold: the events, and how many commits were opened.
fn read_events(
    store: &GitStore,
    id: Uuid,
    tip: ObjectId,
    before: Option<Loaded>,
) -> (Unfolded, u64) {
    let mut read = 0;
    let failed = |why: Arc<str>| Unfolded::failed(tip, why);
    if let Some(before) = before.filter(|b| b.folded.is_ok()) {
        match walk(store, id, tip, Some(&before), &mut read) {
            Ok(Some(walked)) => return (extend(tip, Some(before), walked), read),
            // Not moved forward: read whole.
            Ok(None) => {}
            Err(why) => return (failed(why), read),
        }
    }
    match walk(store, id, tip, None, &mut read) {
        Ok(Some(walked)) => (extend(tip, None, walked), read),
        Ok(None) => (failed(Arc::from("its history could not be walked")), read),
        Err(why) => (failed(why), read),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write as _;
    use std::process::{Command, Stdio};

    const TASK: &str = "019a5b2c-0001-7000-8000-000000000001";
    const EMPTY_TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

    struct Repo {
        dir: tempfile::TempDir,
        store: GitStore,
    }

    fn git(dir: &Path, args: &[&str], input: Option<&str>) -> String {
        let mut child = Command::new("git")
            .args(args)
            .current_dir(dir)
            .env_remove("GIT_DIR")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(input.unwrap_or("").as_bytes()).unwrap();
        drop(stdin);
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "git {args:?}");
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    }

    impl Repo {
        fn new() -> Self {
            let dir = tempfile::tempdir().unwrap();
            git(dir.path(), &["init", "-q"], None);
            git(dir.path(), &["mktree"], Some(""));
            let store = GitStore::open(Some(dir.path())).unwrap();
            Self { dir, store }
        }

        /// A commit at `time` on `parents` holding an event (lamport 1, one fixed timestamp,
        /// the event id `event`) of `kind`.
        fn event(&self, parents: &[&str], time: i64, event: &str, kind: &str) -> String {
            let body = format!(
                "{{\"schema\": \"git-mile-event@1\", \"id\": \"{event}\", \"lamport\": 1, \"ts\": \"2025-11-08T10:00:00Z\", \"actor\": {{\"name\": \"a\", \"email\": \"a@x\"}}, \"task\": \"{TASK}\", \"kind\": {kind}}}"
            );
            let mut content = format!("tree {EMPTY_TREE}\n");
            for parent in parents {
                content.push_str(&format!("parent {parent}\n"));
            }
            content.push_str(&format!(
                "author a <a@x> {time} +0000\ncommitter a <a@x> {time} +0000\n\ngit-mile-event: {event}\n\n{body}"
            ));
            git(
                self.dir.path(),
                &["hash-object", "-t", "commit", "-w", "--stdin"],
                Some(&content),
            )
        }

        fn comment(&self, parents: &[&str], time: i64, event: &str, n: u32, body: &str) -> String {
            self.event(
                parents,
                time,
                event,
                &format!(
                    "{{\"type\": \"commentAdded\", \"comment_id\": \"019a5b2c-cccc-7000-8000-{n:012x}\", \"body_md\": \"{body}\"}}"
                ),
            )
        }

        fn point(&self, commit: &str) {
            git(
                self.dir.path(),
                &["update-ref", &format!("refs/git-mile/tasks/{TASK}"), commit],
                None,
            );
        }

        fn bodies(&self, cache: &TaskCache) -> Vec<String> {
            let set = cache.read(&self.store).unwrap();
            let row = set.rows().next().unwrap();
            row.task.comments.iter().map(|c| c.body.clone()).collect()
        }
    }

    const SAME_EVENT: &str = "019a5b2c-eeee-7000-8000-000000000001";

    #[test]
    fn commits_of_the_same_second_are_read_parents_first() {
        // Two events with the same stamp (lamport, ts and event id): the order they are read
        // in decides, and upstream reads a parent before its child.
        let repo = Repo::new();
        let c1 = repo.comment(&[], 1_762_600_000, SAME_EVENT, 1, "parent");
        let c2 = repo.comment(&[&c1], 1_762_600_000, SAME_EVENT, 2, "child");
        repo.point(&c2);
        assert_eq!(repo.bodies(&TaskCache::default()), ["parent", "child"]);
        // Whatever the ids of the commits: a child with an earlier time than its parent
        // (clock skew) is read first, by time.
        let c3 = repo.comment(&[&c2], 1_762_599_999, SAME_EVENT, 3, "skewed");
        repo.point(&c3);
        assert_eq!(
            repo.bodies(&TaskCache::default()),
            ["skewed", "parent", "child"]
        );
    }

    #[test]
    fn a_ref_moved_forward_is_read_from_its_old_tip() {
        let repo = Repo::new();
        let cache = TaskCache::default();
        let mut tip = repo.event(
            &[],
            1_762_600_000,
            "019a5b2c-eeee-7000-8000-000000000000",
            "{\"type\": \"taskCreated\", \"title\": \"t\"}",
        );
        for n in 1..=5u32 {
            let event = format!("019a5b2c-eeee-7000-8000-{n:012x}");
            tip = repo.comment(&[&tip], 1_762_600_000 + i64::from(n), &event, n, "c");
        }
        repo.point(&tip);

        // Names only: no commit opened.
        let named = cache.names(&repo.store).unwrap();
        assert_eq!(named.refs, 1);
        assert!(named.is_empty());
        assert_eq!(cache.commits_read(), 0);

        assert_eq!(repo.bodies(&cache).len(), 5);
        assert_eq!(cache.commits_read(), 6);
        // Unchanged: nothing read again.
        repo.bodies(&cache);
        assert_eq!(cache.commits_read(), 6);

        // One event on top: one commit read, folded with the others.
        let old = tip.clone();
        tip = repo.comment(
            &[&tip],
            1_762_600_100,
            "019a5b2c-eeee-7000-8000-000000000099",
            9,
            "new",
        );
        repo.point(&tip);
        let bodies = repo.bodies(&cache);
        assert_eq!(bodies.len(), 6);
        assert_eq!(bodies.last().map(String::as_str), Some("new"));
        assert_eq!(cache.commits_read(), 7);

        // A merge of a branch forked from an old commit: only the new commits are read.
        let side = repo.comment(
            &[&old],
            1_762_600_050,
            "019a5b2c-eeee-7000-8000-0000000000aa",
            10,
            "side",
        );
        let merge = git(
            repo.dir.path(),
            &[
                "commit-tree",
                EMPTY_TREE,
                "-p",
                &tip,
                "-p",
                &side,
                "-m",
                "merge",
            ],
            None,
        );
        repo.point(&merge);
        let bodies = repo.bodies(&cache);
        assert_eq!(bodies.len(), 7);
        assert_eq!(
            bodies[5..],
            ["new", "side"],
            "equal lamports and times: by event id"
        );
        assert_eq!(cache.commits_read(), 9);

        // Rewritten (the old tip is no ancestor): read whole, the lost events gone.
        repo.point(&old);
        assert_eq!(repo.bodies(&cache).len(), 5);
        // Each of the 6 once more, after finding `old` among the known commits (not read).
        assert_eq!(cache.commits_read(), 15);
    }

    #[test]
    fn groups_cut_keep_those_of_tasks_and_say_how_many_are_left_out() {
        let mut groups = BTreeMap::new();
        for n in 0..30 {
            groups.insert((format!("refs/git-mile/ns{n:02}/"), "unknown"), 2);
        }
        groups.insert(
            (
                "refs/git-mile/tasks/".to_string(),
                "task refs git cannot read",
            ),
            1,
        );
        let shown = other_refs(groups);
        assert_eq!(shown.len(), MAX_OTHER_REFS);
        assert!(shown.iter().any(|g| g.prefix == "refs/git-mile/tasks/"));
        let last = shown.last().unwrap();
        assert_eq!(last.prefix, "refs/git-mile/");
        assert_eq!(last.count, 24);
        assert!(last.what.starts_with("12 more groups"), "{}", last.what);
        // In prefix order otherwise.
        assert_eq!(shown[0].prefix, "refs/git-mile/ns00/");
        assert_eq!(shown[18].prefix, "refs/git-mile/tasks/");
    }
}
