//! The catalog: every entity of the repository, folded from its events, kept in memory and
//! in a cache file under `.git/git-mile/`, both validated by the ref tips. After a change
//! only the entities whose tip moved are replayed again.
//!
//! Re-reading every ref on every call would cost milliseconds on large repositories, so the
//! catalog asks a [`Tracker`] what changed since it last looked (the kernel on Linux, file
//! metadata elsewhere) and reads only those refs again; when nothing changed it answers from
//! memory without touching git.

use std::collections::{BTreeMap, HashMap};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use gix::ObjectId;
use serde::{Deserialize, Serialize};

use crate::model::{Entity, Kind, Status};
use crate::query::{Field, Fields, Value};
use crate::replay::replay;
use crate::store::{BrokenRef, EntityRef, GitStore, StoreError, StoreResult, Tip};
use crate::tracking::{Look, Tracker};

/// Bumped whenever the folding of events or the entity model changes: older caches are
/// then ignored and rebuilt.
const CACHE_VERSION: u32 = 2;
const CACHE_FILE: &str = "cache-v2.json";

/// Counts that are not stored but derived from the catalog.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stats {
    pub comment_count: u64,
    /// For milestones: how many open issues are attached.
    pub open_issues: Option<u64>,
}

/// Every entity at one moment.
#[derive(Debug, Default)]
pub struct Snapshot {
    entities: Vec<Arc<Entity>>,
    by_key: HashMap<(Kind, String), usize>,
    open_issues: HashMap<String, u64>,
    /// Refs whose history cannot be read (a damaged repository), by kind and id: why.
    unreadable: BTreeMap<(Kind, String), Arc<str>>,
}

/// An entity with what the catalog knows around it; what filters and sorts see.
#[derive(Debug, Clone, Copy)]
pub struct Row<'a> {
    pub entity: &'a Entity,
    pub stats: Stats,
    /// For an issue attached to a milestone that exists: its title.
    pub milestone_title: Option<&'a str>,
}

/// The empty set the task fields of an issue or a milestone hold.
static NONE: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();

impl Fields for Row<'_> {
    fn value(&self, field: Field) -> Value<'_> {
        let e = self.entity;
        match field {
            Field::Id => Value::Text(&e.id),
            Field::Title => Value::Text(&e.title),
            Field::Description => Value::Text(&e.description),
            Field::Status => Value::Text(e.status.as_str()),
            Field::Labels => Value::Labels(&e.labels),
            Field::Milestone => Value::Milestone {
                id: e.milestone.as_deref(),
                title: self.milestone_title,
            },
            Field::Author => Value::Text(&e.author),
            Field::Created => Value::Date(e.created),
            Field::Updated => Value::Date(e.updated),
            Field::CommentCount => Value::Number(Some(self.stats.comment_count)),
            Field::OpenIssues => Value::Number(self.stats.open_issues),
            Field::HasComments => Value::Bool(!e.comments.is_empty()),
            Field::HasMilestone => Value::Bool(e.milestone.is_some()),
            // Task fields: no filter or sort over issues and milestones names them.
            Field::State | Field::StateKind => Value::Text(""),
            Field::Assignees | Field::Parents | Field::Children => Value::Labels(&NONE),
        }
    }
}

/// How an id given by a user resolved.
#[derive(Debug)]
pub enum Lookup<'a> {
    Found(Row<'a>),
    NotFound,
    /// A prefix shared by several entities: their ids.
    Ambiguous(Vec<String>),
    /// An entity whose ref exists but whose history cannot be read: its id, and why.
    Unreadable(String, Arc<str>),
}

/// The shortest prefix of an id a user may type.
pub const MIN_PREFIX: usize = 4;

/// Whether `id`, as a user gave it, is too short to name anything: shorter than
/// [`MIN_PREFIX`] characters once trimmed (no full id is that short).
pub fn too_short(id: &str) -> bool {
    id.trim().chars().count() < MIN_PREFIX
}

impl Snapshot {
    fn build(entities: Vec<Arc<Entity>>, unreadable: BTreeMap<(Kind, String), Arc<str>>) -> Self {
        let mut by_key = HashMap::with_capacity(entities.len());
        let mut open_issues: HashMap<String, u64> = HashMap::new();
        for (i, e) in entities.iter().enumerate() {
            by_key.insert((e.kind, e.id.clone()), i);
            if let (Kind::Issue, Status::Open, Some(m)) = (e.kind, e.status, &e.milestone) {
                *open_issues.entry(m.clone()).or_default() += 1;
            }
        }
        Self {
            entities,
            by_key,
            open_issues,
            unreadable,
        }
    }

    /// The ids of the entities of `kind` whose refs cannot be read, in id order.
    pub fn unreadable(&self, kind: Kind) -> impl Iterator<Item = &str> {
        self.unreadable
            .keys()
            .filter(move |(k, _)| *k == kind)
            .map(|(_, id)| id.as_str())
    }

    pub fn len(&self) -> usize {
        self.entities.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entities.is_empty()
    }

    /// `entity` with what this snapshot knows around it (its stats, its milestone's title).
    pub fn row<'a>(&'a self, entity: &'a Entity) -> Row<'a> {
        let open_issues = match entity.kind {
            Kind::Milestone => Some(self.open_issues.get(&entity.id).copied().unwrap_or(0)),
            Kind::Issue => None,
        };
        let milestone_title = entity.milestone.as_ref().and_then(|m| {
            self.by_key
                .get(&(Kind::Milestone, m.clone()))
                .map(|&i| self.entities[i].title.as_str())
        });
        Row {
            entity,
            stats: Stats {
                comment_count: entity.comments.len() as u64,
                open_issues,
            },
            milestone_title,
        }
    }

    /// Every entity of `kind`, in no particular order.
    pub fn rows(&self, kind: Kind) -> impl Iterator<Item = Row<'_>> {
        self.entities
            .iter()
            .filter(move |e| e.kind == kind)
            .map(|e| self.row(e))
    }

    /// An entity by its full id (any spelling of the UUID) or by a unique prefix of at least
    /// [`MIN_PREFIX`] characters.
    pub fn lookup(&self, kind: Kind, id: &str) -> Lookup<'_> {
        let id = id.trim();
        let normal = uuid::Uuid::parse_str(id).map(|u| u.hyphenated().to_string());
        let id = normal.as_deref().unwrap_or(id);
        let key = (kind, id.to_string());
        if let Some(&i) = self.by_key.get(&key) {
            return Lookup::Found(self.row(&self.entities[i]));
        }
        if let Some(why) = self.unreadable.get(&key) {
            return Lookup::Unreadable(id.to_string(), why.clone());
        }
        if id.chars().count() < MIN_PREFIX {
            return Lookup::NotFound;
        }
        let lower = id.to_ascii_lowercase();
        let matches: Vec<&Arc<Entity>> = self
            .entities
            .iter()
            .filter(|e| e.kind == kind && e.id.starts_with(&lower))
            .collect();
        let broken: Vec<(&String, &Arc<str>)> = self
            .unreadable
            .iter()
            .filter(|((k, full), _)| *k == kind && full.starts_with(&lower))
            .map(|((_, full), why)| (full, why))
            .collect();
        match (matches.as_slice(), broken.as_slice()) {
            ([], []) => Lookup::NotFound,
            ([one], []) => Lookup::Found(self.row(one)),
            ([], [(full, why)]) => Lookup::Unreadable((*full).clone(), (*why).clone()),
            (many, broken) => {
                let mut ids: Vec<String> = many.iter().map(|e| e.id.clone()).collect();
                ids.extend(broken.iter().map(|(full, _)| (*full).clone()));
                ids.sort();
                Lookup::Ambiguous(ids)
            }
        }
    }
}

/// The snapshot of what `tips` folded to.
fn snapshot_of(tips: &Tips) -> Snapshot {
    let mut entities: Vec<Arc<Entity>> = Vec::with_capacity(tips.len());
    let mut unreadable = BTreeMap::new();
    for (key, (_, folded)) in tips {
        match folded {
            Ok(entity) => entities.push(entity.clone()),
            Err(why) => {
                unreadable.insert(key.clone(), why.clone());
            }
        }
    }
    entities.sort_by(|a, b| (a.kind, &a.id).cmp(&(b.kind, &b.id)));
    Snapshot::build(entities, unreadable)
}

/// What a ref's history folds to: its entity, or why it holds none (no creation event, or
/// objects that cannot be read). Kept for unreadable refs too, so they are not read again
/// until their tip moves.
type Folded = Result<Arc<Entity>, Arc<str>>;

/// Every ref's tip and what it folded to. A ref file git cannot read or decode has no tip
/// (`None`), and folds to why.
type Tips = HashMap<(Kind, String), (Option<ObjectId>, Folded)>;

/// Is `entry` what the catalog holds for a ref file that cannot be read for `why`?
fn is_broken_for(entry: Option<&(Option<ObjectId>, Folded)>, why: &str) -> bool {
    matches!(entry, Some((None, Err(known))) if **known == *why)
}

fn warn_broken(broken: &BrokenRef) {
    tracing::warn!(
        kind = broken.kind.as_str(),
        id = %broken.id,
        why = %broken.why,
        "ref file git cannot read; left out"
    );
}

/// What the catalog knows: how it learns of changes, and what it read last.
#[derive(Default)]
struct State {
    tracker: Option<Tracker>,
    loaded: Option<Loaded>,
}

struct Loaded {
    tips: Tips,
    snapshot: Arc<Snapshot>,
    /// Entities replayed since the cache file was last written.
    unsaved: usize,
}

#[derive(Serialize, Deserialize)]
struct CacheFile {
    version: u32,
    entries: Vec<CacheEntry>,
}

#[derive(Serialize, Deserialize)]
struct CacheEntry {
    kind: Kind,
    id: String,
    tip: String,
    entity: Option<Entity>,
    /// Why the ref holds no entity (when `entity` is absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    unreadable: Option<String>,
}

/// What one refresh did (for logs and tests).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Refresh {
    /// Entities replayed from their commits.
    pub replayed: usize,
    /// Entities taken from the memory or disk cache.
    pub reused: usize,
}

/// A running process rewrites the cache file once it has replayed this many entities since
/// it last wrote it; fewer are replayed again by the next process that starts.
const REWRITE_AFTER: usize = 100;

pub struct Catalog {
    store: Arc<GitStore>,
    cache_path: PathBuf,
    state: Mutex<State>,
    last_refresh: Mutex<Option<Refresh>>,
    /// Upstream git-mile's tasks and the other refs this version does not read.
    tasks: crate::task::TaskCache,
}

impl Catalog {
    pub fn new(store: Arc<GitStore>) -> Self {
        let cache_path = store.git_dir().join("git-mile").join(CACHE_FILE);
        Self {
            store,
            cache_path,
            state: Mutex::new(State::default()),
            last_refresh: Mutex::new(None),
            tasks: crate::task::TaskCache::default(),
        }
    }

    pub fn store(&self) -> &GitStore {
        &self.store
    }

    /// Every upstream task, and the refs under `refs/git-mile/` this version does not read,
    /// as the refs say now (tasks whose ref did not move are not replayed again).
    pub fn tasks(&self) -> StoreResult<crate::task::TaskSet> {
        self.tasks.read(&self.store)
    }

    /// The upstream tasks `id` (a full id or a prefix) may name, and the refs this version
    /// does not read: no other task is read.
    pub fn tasks_named(&self, id: &str) -> StoreResult<crate::task::TaskSet> {
        let wanted = crate::task::wanted(id);
        self.tasks.read_where(&self.store, |task| {
            wanted.as_deref().is_some_and(|w| task.starts_with(w))
        })
    }

    /// The upstream tasks of these full `ids` (no other task is read).
    pub fn tasks_among<'a>(
        &self,
        ids: impl IntoIterator<Item = &'a str>,
    ) -> StoreResult<crate::task::TaskSet> {
        let ids: std::collections::HashSet<&str> = ids.into_iter().collect();
        if ids.is_empty() {
            return Ok(crate::task::TaskSet::default());
        }
        self.tasks
            .read_where(&self.store, |task| ids.contains(task))
    }

    /// How many upstream task refs there are, and the refs this version does not read, from
    /// the refs' names alone: no task is read (for listings of issues and milestones, and the
    /// server's instructions).
    pub fn task_names(&self) -> StoreResult<crate::task::TaskSet> {
        self.tasks.names(&self.store)
    }

    /// What the ref of the upstream task `id` holds at `tip` (its events and the task they
    /// fold to), or why it cannot be read; through the same cache as [`Self::tasks`].
    pub fn task_history(
        &self,
        id: uuid::Uuid,
        tip: gix::ObjectId,
    ) -> Result<crate::task::TaskHistory, Arc<str>> {
        self.tasks.history(&self.store, id, tip)
    }

    /// How many commits were opened to read upstream tasks since the catalog was made.
    pub fn task_commits_read(&self) -> u64 {
        self.tasks.commits_read()
    }

    /// What the last call of [`Self::snapshot`] that read refs did.
    pub fn last_refresh(&self) -> Option<Refresh> {
        self.last_refresh.lock().ok().and_then(|r| *r)
    }

    /// Every entity as the refs say now.
    pub fn snapshot(&self) -> StoreResult<Arc<Snapshot>> {
        let mut guard = self
            .state
            .lock()
            .map_err(|_| StoreError::Git("catalog lock poisoned".into()))?;
        let state = &mut *guard;
        let tracker = state
            .tracker
            .get_or_insert_with(|| Tracker::new(self.store.git_dir()));
        let look = tracker.look();
        let refreshed = self.refresh(&mut state.loaded, look);
        if refreshed.is_err() {
            // The changes of that look were not taken in: start again with a new tracker,
            // whose first look reads everything.
            state.tracker = None;
        }
        refreshed
    }

    /// Which kind of tracker tells this catalog of changes (for logs and tests).
    pub fn tracker(&self) -> Option<&'static str> {
        let state = self.state.lock().ok()?;
        state.tracker.as_ref().map(Tracker::name)
    }

    /// Bring `loaded` up to date with what `look` found.
    fn refresh(&self, loaded: &mut Option<Loaded>, look: Look) -> StoreResult<Arc<Snapshot>> {
        if let Some(known) = loaded.as_mut() {
            match look {
                Look::Unchanged => return Ok(known.snapshot.clone()),
                Look::Changed(keys) => return self.apply(known, keys),
                Look::Everything => {}
            }
        }
        let scan = self.store.refs()?;
        let (refs, broken) = (&scan.refs, &scan.broken);
        if let Some(known) = loaded.as_ref()
            && refs.len() + broken.len() == known.tips.len()
            && refs.iter().all(|r| {
                known
                    .tips
                    .get(&(r.kind, r.id.clone()))
                    .is_some_and(|(tip, _)| *tip == Some(r.tip))
            })
            && broken
                .iter()
                .all(|b| is_broken_for(known.tips.get(&(b.kind, b.id.clone())), &b.why))
        {
            return Ok(known.snapshot.clone());
        }

        // What did not move comes from memory, else from the disk cache.
        let from_disk = loaded.is_none();
        let (known, unsaved) = match loaded.take() {
            Some(loaded) => (loaded.tips, loaded.unsaved),
            None => (self.read_cache(), 0),
        };
        let mut tips: Tips = HashMap::with_capacity(refs.len() + broken.len());
        let mut stale: Vec<&EntityRef> = Vec::new();
        for r in refs {
            let key = (r.kind, r.id.clone());
            match known.get(&key) {
                Some((tip, folded)) if *tip == Some(r.tip) => {
                    tips.insert(key, (Some(r.tip), folded.clone()));
                }
                _ => stale.push(r),
            }
        }
        let refresh = Refresh {
            replayed: stale.len(),
            reused: tips.len(),
        };
        for (r, folded) in stale.iter().zip(self.replay_all(&stale)?) {
            tips.insert((r.kind, r.id.clone()), (Some(r.tip), folded));
        }
        // A ref file git cannot read is left out and named, as git warns and goes on.
        for b in broken {
            let key = (b.kind, b.id.clone());
            if !is_broken_for(known.get(&key), &b.why) {
                warn_broken(b);
            }
            tips.insert(key, (None, Err(Arc::from(b.why.as_str()))));
        }
        let snapshot = Arc::new(snapshot_of(&tips));
        let mut unsaved = unsaved + refresh.replayed;
        let cache_outdated = if from_disk {
            // (The cache holds no entry for a ref file that cannot be read.)
            let cached = tips.values().filter(|(tip, _)| tip.is_some()).count();
            refresh.replayed > 0 || known.len() != cached
        } else {
            unsaved >= REWRITE_AFTER
        };
        if cache_outdated {
            self.write_cache(&tips);
            unsaved = 0;
        }
        self.record(refresh);
        *loaded = Some(Loaded {
            tips,
            snapshot: snapshot.clone(),
            unsaved,
        });
        Ok(snapshot)
    }

    /// Take in the refs `keys` that may have changed: only those whose tip moved are
    /// replayed, in place.
    fn apply(&self, known: &mut Loaded, keys: Vec<(Kind, String)>) -> StoreResult<Arc<Snapshot>> {
        let mut gone = Vec::new();
        let mut stale = Vec::new();
        let mut broken = Vec::new();
        for (kind, id) in keys {
            let tip = self.store.read_tip(kind, &id)?;
            let key = (kind, id);
            let entry = known.tips.get(&key);
            match tip {
                Tip::Missing if entry.is_none() => {}
                Tip::Missing => gone.push(key),
                Tip::At(tip) if entry.is_some_and(|(known, _)| *known == Some(tip)) => {}
                Tip::At(tip) => stale.push(EntityRef {
                    kind: key.0,
                    id: key.1,
                    tip,
                }),
                Tip::Broken(why) if is_broken_for(entry, &why) => {}
                Tip::Broken(why) => broken.push(BrokenRef {
                    kind: key.0,
                    id: key.1,
                    why,
                }),
            }
        }
        if stale.is_empty() && gone.is_empty() && broken.is_empty() {
            return Ok(known.snapshot.clone());
        }
        let stale_refs: Vec<&EntityRef> = stale.iter().collect();
        let folded = self.replay_all(&stale_refs)?;
        let replayed = stale_refs.len();
        for key in &gone {
            known.tips.remove(key);
        }
        for (r, folded) in stale.into_iter().zip(folded) {
            known.tips.insert((r.kind, r.id), (Some(r.tip), folded));
        }
        for b in broken {
            warn_broken(&b);
            known
                .tips
                .insert((b.kind, b.id), (None, Err(Arc::from(b.why))));
        }
        known.snapshot = Arc::new(snapshot_of(&known.tips));
        known.unsaved += replayed;
        if known.unsaved >= REWRITE_AFTER {
            self.write_cache(&known.tips);
            known.unsaved = 0;
        }
        self.record(Refresh {
            replayed,
            reused: known.tips.len() - replayed,
        });
        Ok(known.snapshot.clone())
    }

    fn record(&self, refresh: Refresh) {
        tracing::debug!(?refresh, "catalog refreshed");
        if let Ok(mut last) = self.last_refresh.lock() {
            *last = Some(refresh);
        }
    }

    /// Fold `refs`, on every core when there are many; one result per ref, in order.
    fn replay_all(&self, refs: &[&EntityRef]) -> StoreResult<Vec<Folded>> {
        let workers = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
            .min(8);
        if refs.len() < 64 || workers == 1 {
            return Ok(self.replay_chunk(refs));
        }
        let chunk = refs.len().div_ceil(workers);
        std::thread::scope(|scope| {
            let handles: Vec<_> = refs
                .chunks(chunk)
                .map(|part| scope.spawn(move || self.replay_chunk(part)))
                .collect();
            let mut out = Vec::with_capacity(refs.len());
            for handle in handles {
                let part = handle
                    .join()
                    .map_err(|_| StoreError::Git("a replay thread failed".into()))?;
                out.extend(part);
            }
            Ok(out)
        })
    }

    fn replay_chunk(&self, refs: &[&EntityRef]) -> Vec<Folded> {
        refs.iter()
            .map(|r| {
                // One damaged or foreign ref is left out of listings (and said so), never
                // fatal: the others are still served.
                let folded = match self.store.events(r.tip) {
                    Ok(events) => replay(r.kind, &r.id, events)
                        .map(Arc::new)
                        .ok_or_else(|| Arc::from("its history holds no creation event")),
                    Err(err) => Err(Arc::from(crate::quote::excerpt(&err.to_string()))),
                };
                if let Err(why) = &folded {
                    tracing::warn!(kind = r.kind.as_str(), id = %r.id, %why, "unreadable ref; left out");
                }
                folded
            })
            .collect()
    }

    fn read_cache(&self) -> Tips {
        let Ok(bytes) = std::fs::read(&self.cache_path) else {
            return HashMap::new();
        };
        let file: CacheFile = match serde_json::from_slice(&bytes) {
            Ok(file) => file,
            Err(err) => {
                let err = crate::quote::excerpt(&err.to_string());
                tracing::warn!(path = %self.cache_path.display(), %err, "cache unreadable; rebuilding");
                return HashMap::new();
            }
        };
        if file.version != CACHE_VERSION {
            return HashMap::new();
        }
        file.entries
            .into_iter()
            .filter_map(|entry| {
                let tip = ObjectId::from_hex(entry.tip.as_bytes()).ok()?;
                // An entry whose entity disagrees with its key is damage: read the ref again.
                if let Some(e) = &entry.entity
                    && (e.kind != entry.kind || e.id != entry.id)
                {
                    return None;
                }
                let folded = match (entry.entity, entry.unreadable) {
                    (Some(entity), _) => Ok(Arc::new(entity)),
                    (None, Some(why)) => Err(Arc::from(crate::quote::excerpt(&why))),
                    // Neither: not a cache this version wrote; read the ref again.
                    (None, None) => return None,
                };
                Some(((entry.kind, entry.id), (Some(tip), folded)))
            })
            .collect()
    }

    /// Write the cache beside the refs: a temporary file renamed into place, so readers see
    /// either the old cache or the new one. Failure (a read-only repository) only costs speed.
    fn write_cache(&self, tips: &Tips) {
        // A ref file that cannot be read has no tip to validate an entry: it is found again
        // by the next full read.
        let mut entries: Vec<CacheEntry> = tips
            .iter()
            .filter_map(|((kind, id), (tip, folded))| {
                Some(CacheEntry {
                    kind: *kind,
                    id: id.clone(),
                    tip: tip.as_ref()?.to_hex().to_string(),
                    entity: folded.as_deref().ok().cloned(),
                    unreadable: folded.as_ref().err().map(|why| why.to_string()),
                })
            })
            .collect();
        entries.sort_by(|a, b| (a.kind, &a.id).cmp(&(b.kind, &b.id)));
        let file = CacheFile {
            version: CACHE_VERSION,
            entries,
        };
        let dir = self
            .cache_path
            .parent()
            .unwrap_or(Path::new("."))
            .to_path_buf();
        let tmp = dir.join(format!(
            ".{CACHE_FILE}.{}.{}",
            std::process::id(),
            uuid::Uuid::new_v4().simple()
        ));
        let result = (|| -> std::io::Result<()> {
            std::fs::create_dir_all(&dir)?;
            let mut out = std::io::BufWriter::new(std::fs::File::create(&tmp)?);
            serde_json::to_writer(&mut out, &file)?;
            out.flush()?;
            drop(out);
            std::fs::rename(&tmp, &self.cache_path)
        })();
        if let Err(err) = result {
            let _ = std::fs::remove_file(&tmp);
            tracing::warn!(path = %self.cache_path.display(), %err, "could not write the cache");
        }
    }
}
