//! The git side: entity refs, event commits with an empty tree, compare-and-swap ref updates
//! and merges of diverged histories. Nothing here touches the working tree, the index or
//! any ref outside `refs/git-mile/`.

use std::collections::{HashSet, VecDeque};
use std::path::{Path, PathBuf};
use std::time::Duration;

use gix::ObjectId;
use gix::refs::transaction::{Change as RefChange, LogChange, PreviousValue, RefEdit, RefLog};
use gix::refs::{FullName, Target};

use crate::event::{Actor, Change, Event, merge_message};
use crate::model::{Entity, Kind};
use crate::replay::replay;

pub const REF_PREFIX: &str = "refs/git-mile/";

/// How long a writer keeps retrying while other processes move the ref under it.
const CAS_PATIENCE: Duration = Duration::from_secs(10);
/// A ref lock file older than this is not another writer at work: a crashed process left it.
const STALE_LOCK: Duration = Duration::from_secs(5);
/// How many times one object, or one ref's lock file, is written while the directory it goes
/// into keeps vanishing under the write (see [`retry_vanished`]).
const VANISHED_ATTEMPTS: usize = 3;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("not a git repository: {0}")]
    NoRepo(String),
    #[error("unsupported repository: {0}")]
    Unsupported(String),
    #[error(
        "no git identity: set user.name and user.email (git config user.name \"…\"; git config user.email …)"
    )]
    NoIdentity,
    #[error("{kind} {id} not found")]
    NotFound { kind: &'static str, id: String },
    #[error("another writer kept moving {0}; try again")]
    Contended(String),
    /// A lock file that stayed: another git process holds it, or a crashed one left it.
    #[error("{ref_name} cannot be written: {why}")]
    Locked { ref_name: String, why: String },
    /// An entity ref whose file git cannot read or decode.
    #[error(
        "{kind} `{id}` cannot be read ({why}): the repository may be damaged; `git fsck` tells more"
    )]
    Unreadable {
        kind: &'static str,
        id: String,
        why: String,
    },
    /// A write whose directory vanished under it each time it was tried: `git gc`, `git prune`
    /// or `git pack-refs` kept removing empty directories of the repository meanwhile.
    /// Nothing was written (the ref did not move); the same write will work once they are done.
    #[error(
        "{what} could not be written: the directory it goes into vanished under the write \
         {VANISHED_ATTEMPTS} times (another git process, such as `git gc`, is removing empty \
         directories of the repository): {why}"
    )]
    Vanished { what: &'static str, why: String },
    #[error("git error: {0}")]
    Git(String),
}

/// Why a repository could not be opened, with the causes gix gives.
fn open_error(path: &Path, err: &(dyn std::error::Error + 'static)) -> StoreError {
    let mut causes = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        causes.push_str(&cause.to_string());
        source = cause.source();
    }
    if causes.to_ascii_lowercase().contains("objectformat") {
        return StoreError::Unsupported(format!(
            "{}: its objects are named with SHA-256; git-mile supports SHA-1 repositories only",
            path.display()
        ));
    }
    StoreError::NoRepo(format!("{}: {err}", path.display()))
}

/// A git failure with its causes (gix's messages often name the operation, and their
/// sources the reason, e.g. a read-only file system).
fn git<E: std::error::Error>(err: E) -> StoreError {
    let mut message = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let cause = cause.to_string();
        if !message.contains(&cause) {
            message.push_str(": ");
            message.push_str(&cause);
        }
        source = source.and_then(std::error::Error::source);
    }
    StoreError::Git(message)
}

/// Whether `err` is a write that lost its directory: a file could not be created in, or
/// renamed into, a directory that does not exist (`ENOENT`), while `base`, the directory that
/// holds it (`.git/objects`, `.git/refs`), still exists.
///
/// git removes empty directories as it cleans up: `git gc` and `git prune` the fan-out
/// directories of `.git/objects/` (`.git/objects/4b/`) once they hold no loose object, `git
/// pack-refs` (run by `git gc`) the directories of `.git/refs/` whose refs it packed. A writer
/// that has just made such a directory, or found it there, loses it when the removal comes
/// between that and the creation of its file: gix then fails with `ENOENT`. Writing again
/// makes the directory anew.
fn vanished(err: &gix::Error, base: &Path) -> bool {
    err.iter_errors().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::NotFound)
    }) && base.is_dir()
}

/// `attempt` (the write of one object, or one ref update), tried again while it fails
/// because its directory [`vanished`], at most [`VANISHED_ATTEMPTS`] times in all; any other
/// failure is returned at once. Only for writes that may safely be done again: an object is
/// named by its content, so writing it twice writes the same file; a ref update whose lock
/// file could not be created changed nothing (gix moves the ref last, by renaming its lock
/// file, which lives in the very directory that would have to vanish).
fn retry_vanished<T>(
    base: &Path,
    mut attempt: impl FnMut() -> Result<T, gix::Error>,
) -> Result<T, gix::Error> {
    let mut tries = 1;
    loop {
        match attempt() {
            Err(err) if tries < VANISHED_ATTEMPTS && vanished(&err, base) => {
                tracing::debug!(tries, why = %err, "a directory vanished under a write; again");
                tries += 1;
            }
            done => return done,
        }
    }
}

/// Why a ref could not be read, with gix's causes, cut short: gix quotes the file's content,
/// which may be anything.
fn reason<E: std::error::Error>(err: E) -> String {
    match git(err) {
        StoreError::Git(message) => crate::quote::excerpt(&message),
        other => crate::quote::excerpt(&other.to_string()),
    }
}

pub type StoreResult<T> = Result<T, StoreError>;

/// An entity ref whose file git cannot read or decode: it points nowhere git-mile can follow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokenRef {
    pub kind: Kind,
    pub id: String,
    /// Why (at most a few hundred characters).
    pub why: String,
}

/// The entity refs under a prefix: those that point at something, and those git cannot read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RefScan {
    pub refs: Vec<EntityRef>,
    pub broken: Vec<BrokenRef>,
}

impl RefScan {
    pub fn is_empty(&self) -> bool {
        self.refs.is_empty() && self.broken.is_empty()
    }
}

/// Refs found under a prefix, each named by what it parses to: (name, tip) for those that
/// point at an object, (name, why) for those git cannot read or decode.
pub type Scanned<T> = (Vec<(T, ObjectId)>, Vec<(T, String)>);

/// Task refs found under a prefix, named by their task ids.
pub type TaskRefScan = Scanned<String>;

/// Where one entity's ref points.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tip {
    Missing,
    At(ObjectId),
    /// A ref file git cannot read or decode: why.
    Broken(String),
}

/// One entity's ref as found in the repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntityRef {
    pub kind: Kind,
    pub id: String,
    pub tip: ObjectId,
}

pub fn ref_name(kind: Kind, id: &str) -> String {
    format!("{REF_PREFIX}{}/{id}", kind.as_str())
}

/// The ref of upstream git-mile's task `id`.
pub fn task_ref_name(id: &str) -> String {
    format!("{REF_PREFIX}tasks/{id}")
}

fn parse_ref_name(prefix: &str, name: &str) -> Option<(Kind, String)> {
    let rest = name.strip_prefix(prefix)?;
    let (kind, id) = rest.split_once('/')?;
    let kind = match kind {
        "milestone" => Kind::Milestone,
        "issue" => Kind::Issue,
        _ => return None,
    };
    // Only the ids git-mile writes (lowercase hyphenated UUIDs): another spelling could not
    // be addressed, and would name a second ref for the same entity.
    let canonical = uuid::Uuid::parse_str(id).is_ok_and(|u| u.hyphenated().to_string() == id);
    canonical.then(|| (kind, id.to_string()))
}

/// Retries of a compare-and-swap: short sleeps with jitter, so that writers that collided
/// do not collide again, until [`CAS_PATIENCE`] is spent.
struct Backoff {
    attempt: u32,
    deadline: std::time::Instant,
}

impl Backoff {
    fn new() -> Self {
        Self {
            attempt: 0,
            deadline: std::time::Instant::now() + CAS_PATIENCE,
        }
    }

    /// Sleep before the next attempt; `false` when patience is spent.
    fn wait(&mut self) -> bool {
        if std::time::Instant::now() >= self.deadline {
            return false;
        }
        let base = 1u64 << self.attempt.min(4);
        let jitter = u64::from(uuid::Uuid::new_v4().as_bytes()[0] % 8);
        self.attempt += 1;
        std::thread::sleep(Duration::from_millis(base + jitter));
        true
    }
}

pub struct GitStore {
    repo: gix::ThreadSafeRepository,
    git_dir: PathBuf,
    /// Writers of this process to the same ref take turns (a ref maps to one of these by
    /// its name): compare-and-swap settles races between processes, but a hundred threads
    /// of one server spinning on one ref would starve some of them past [`CAS_PATIENCE`].
    turns: [std::sync::Mutex<()>; TURNS],
}

const TURNS: usize = 64;

impl GitStore {
    /// The repository at `path` or, when none is given, the one containing the working
    /// directory.
    pub fn open(path: Option<&Path>) -> StoreResult<Self> {
        let repo = match path {
            Some(path) => {
                gix::ThreadSafeRepository::discover(path).map_err(|e| open_error(path, &e))?
            }
            // As git does: `GIT_DIR` (set by `git --git-dir=… mile`) wins over discovery.
            None => {
                let cwd = std::env::current_dir().map_err(|e| StoreError::NoRepo(e.to_string()))?;
                gix::ThreadSafeRepository::discover_with_environment_overrides(&cwd)
                    .map_err(|e| open_error(&cwd, &e))?
            }
        };
        let local = repo.to_thread_local();
        let git_dir = local.common_dir().to_path_buf();
        // gix reads and writes refs as files: a repository that keeps them elsewhere would
        // have its entities written where git never looks (and then pruned by `git gc`).
        if let Some(storage) = local.config_snapshot().string("extensions.refStorage")
            && !storage.eq_ignore_ascii_case(b"files")
        {
            return Err(StoreError::Unsupported(format!(
                "{} keeps its refs in `{storage}` storage; git-mile supports the default `files` \
                 storage only (`git refs migrate --ref-format=files` converts a repository)",
                git_dir.display()
            )));
        }
        Ok(Self {
            repo,
            git_dir,
            turns: std::array::from_fn(|_| std::sync::Mutex::new(())),
        })
    }

    fn local(&self) -> gix::Repository {
        self.repo.to_thread_local()
    }

    /// The repository, for readers of refs outside the entity namespaces (`crate::task`).
    pub fn repository(&self) -> gix::Repository {
        self.local()
    }

    /// The repository's shared git directory (where the cache lives).
    pub fn git_dir(&self) -> &Path {
        &self.git_dir
    }

    /// The repository's working tree (for a bare repository, the directory that holds it):
    /// where upstream git-mile reads `.git-mile/config.toml`.
    pub fn workdir(&self) -> PathBuf {
        match self.local().workdir() {
            Some(dir) => dir.to_path_buf(),
            None => self.git_dir.parent().unwrap_or(&self.git_dir).to_path_buf(),
        }
    }

    /// The user's git identity (`user.name`, `user.email`, or the `GIT_AUTHOR_*` variables).
    pub fn actor(&self) -> StoreResult<Actor> {
        let repo = self.local();
        let sig = repo
            .author()
            .ok_or(StoreError::NoIdentity)?
            .map_err(|_| StoreError::NoIdentity)?;
        let name = sig.name.to_string();
        let email = sig.email.to_string();
        // What git itself refuses in a signature: such an identity cannot author anything.
        let unusable = |s: &str| s.contains(['<', '>', '\n', '\0']);
        if name.trim().is_empty() || unusable(&name) || unusable(&email) {
            return Err(StoreError::NoIdentity);
        }
        Ok(Actor { name, email })
    }

    /// Every entity ref.
    pub fn refs(&self) -> StoreResult<RefScan> {
        self.refs_under(REF_PREFIX)
    }

    /// Entity refs laid out as under `refs/git-mile/` but below `prefix` (which ends in `/`),
    /// such as fetched ones. A ref file git cannot read or decode (`echo junk > .git/refs/…`)
    /// is reported among [`RefScan::broken`], as git only warns about it: the others are still
    /// read. A failure that names no ref (an unreadable `packed-refs`) fails the whole scan.
    pub fn refs_under(&self, prefix: &str) -> StoreResult<RefScan> {
        let (refs, broken) = self.scan_refs(prefix, |name| parse_ref_name(prefix, name))?;
        Ok(RefScan {
            refs: refs
                .into_iter()
                .map(|((kind, id), tip)| EntityRef { kind, id, tip })
                .collect(),
            broken: broken
                .into_iter()
                .map(|((kind, id), why)| BrokenRef { kind, id, why })
                .collect(),
        })
    }

    /// Upstream git-mile's task refs laid out as under `refs/git-mile/` but below `prefix`
    /// (`refs/git-mile/` itself, or where a pull fetched a remote's): those that point at
    /// something (task id, tip), and those git cannot read (task id, why). Only the names
    /// upstream writes (lowercase hyphenated UUIDs) are task refs.
    pub fn task_refs_under(&self, prefix: &str) -> StoreResult<TaskRefScan> {
        let tasks = format!("{prefix}tasks/");
        self.scan_refs(&tasks, |name| {
            let id = name.strip_prefix(tasks.as_str())?;
            let canonical =
                uuid::Uuid::parse_str(id).is_ok_and(|u| u.hyphenated().to_string() == id);
            canonical.then(|| id.to_string())
        })
    }

    /// The refs under `prefix` that `parse` names (the others are passed over): those that
    /// point at an object, and those git cannot read or decode, with why. A failure that
    /// names no ref (an unreadable `packed-refs`) fails the whole scan.
    fn scan_refs<T>(
        &self,
        prefix: &str,
        parse: impl Fn(&str) -> Option<T>,
    ) -> StoreResult<Scanned<T>> {
        let repo = self.local();
        let platform = repo.references().map_err(git)?;
        let iter = platform.prefixed(prefix.as_bytes()).map_err(git)?;
        let (mut refs, mut broken) = (Vec::new(), Vec::new());
        for reference in iter {
            let reference = match reference {
                Ok(reference) => reference,
                Err(err) => {
                    let Some(name) = self.failed_ref(&repo, &err) else {
                        return Err(git(err));
                    };
                    match parse(&name) {
                        Some(parsed) => broken.push((parsed, reason(err))),
                        // Not a name git-mile writes: ignored, as when it can be read.
                        None => {
                            tracing::debug!(%name, why = %reason(err), "unreadable ref ignored")
                        }
                    }
                    continue;
                }
            };
            let name = reference.name().as_bstr().to_string();
            let Some(parsed) = parse(&name) else {
                continue;
            };
            if let Some(tip) = reference.target().try_id() {
                refs.push((parsed, tip.to_owned()));
            }
        }
        Ok((refs, broken))
    }

    /// The name of the ref (`refs/…`) a failed read was about, when gix says which: a loose
    /// ref file that could not be decoded, or not read.
    fn failed_ref(&self, repo: &gix::Repository, err: &gix::Error) -> Option<String> {
        let relative = match err.downcast_any_ref::<gix::refs::file::find::ReferenceDecode>() {
            Some(decode) => decode.relative_path.clone(),
            None => match err.metadata_merged().get("path") {
                Some(gix::error::MetadataValue::Path(path)) => path
                    .strip_prefix(&self.git_dir)
                    .or_else(|_| path.strip_prefix(repo.git_dir()))
                    .ok()?
                    .to_path_buf(),
                _ => return None,
            },
        };
        let parts: Option<Vec<&str>> = relative
            .components()
            .map(|c| match c {
                std::path::Component::Normal(part) => part.to_str(),
                _ => None,
            })
            .collect();
        let name = parts?.join("/");
        name.starts_with("refs/").then_some(name)
    }

    /// Where one entity's ref points: nowhere, at a commit, or into a file git cannot
    /// read or decode (the repository is damaged; the reason is said).
    pub fn read_tip(&self, kind: Kind, id: &str) -> StoreResult<Tip> {
        self.ref_tip(&ref_name(kind, id))
    }

    /// The tip of one entity's ref; a ref git cannot read is [`StoreError::Unreadable`].
    pub fn tip(&self, kind: Kind, id: &str) -> StoreResult<Option<ObjectId>> {
        match self.read_tip(kind, id)? {
            Tip::Missing => Ok(None),
            Tip::At(tip) => Ok(Some(tip)),
            Tip::Broken(why) => Err(StoreError::Unreadable {
                kind: kind.as_str(),
                id: id.to_string(),
                why,
            }),
        }
    }

    /// Every event reachable from `tip` (merge commits carry none).
    pub fn events(&self, tip: ObjectId) -> StoreResult<Vec<Event>> {
        let repo = self.local();
        let mut events = Vec::new();
        let mut seen = HashSet::from([tip]);
        let mut queue = VecDeque::from([tip]);
        while let Some(id) = queue.pop_front() {
            let commit = repo.find_commit(id).map_err(git)?;
            if let Some(event) = Event::from_message(commit.message_raw_sloppy()) {
                events.push(event);
            }
            for parent in commit.parent_ids() {
                let parent = parent.detach();
                if seen.insert(parent) {
                    queue.push_back(parent);
                }
            }
        }
        Ok(events)
    }

    /// Is `ancestor` reachable from `tip`?
    fn reaches(&self, tip: ObjectId, ancestor: ObjectId) -> StoreResult<bool> {
        let repo = self.local();
        let mut seen = HashSet::from([tip]);
        let mut queue = VecDeque::from([tip]);
        while let Some(id) = queue.pop_front() {
            if id == ancestor {
                return Ok(true);
            }
            for parent in repo.find_commit(id).map_err(git)?.parent_ids() {
                let parent = parent.detach();
                if seen.insert(parent) {
                    queue.push_back(parent);
                }
            }
        }
        Ok(false)
    }

    fn write_commit(
        &self,
        repo: &gix::Repository,
        signature: gix::actor::Signature,
        message: &str,
        parents: &[ObjectId],
    ) -> StoreResult<ObjectId> {
        let empty_tree = self.write_object(repo, &gix::objs::Tree::empty())?;
        let commit = gix::objs::Commit {
            tree: empty_tree,
            parents: parents.iter().copied().collect(),
            author: signature.clone(),
            committer: signature,
            encoding: None,
            message: message.into(),
            extra_headers: Vec::new(),
        };
        self.write_object(repo, &commit)
    }

    /// Write one object, again when `git gc` removed its fan-out directory under the write
    /// ([`retry_vanished`]).
    fn write_object(
        &self,
        repo: &gix::Repository,
        object: &impl gix::objs::WriteTo,
    ) -> StoreResult<ObjectId> {
        let objects = self.repo.objects_dir();
        retry_vanished(objects, || repo.write_object(object).map(|id| id.detach())).map_err(|err| {
            if vanished(&err, objects) {
                StoreError::Vanished {
                    what: "an object",
                    why: reason(err),
                }
            } else {
                git(err)
            }
        })
    }

    /// Point the ref at `new` if it still points at `expected` (`None`: must not exist).
    fn swap(
        &self,
        repo: &gix::Repository,
        name: &str,
        expected: Option<ObjectId>,
        new: ObjectId,
    ) -> StoreResult<Swap> {
        let full: FullName = name.try_into().map_err(git)?;
        let edit = RefEdit {
            change: RefChange::Update {
                log: LogChange {
                    mode: RefLog::AndReference,
                    force_create_reflog: false,
                    message: "git-mile".into(),
                },
                expected: match expected {
                    Some(old) => PreviousValue::MustExistAndMatch(Target::Object(old)),
                    None => PreviousValue::MustNotExist,
                },
                new: Target::Object(new),
            },
            name: full,
            deref: false,
        };
        // The lock file goes into the ref's directory, which `git pack-refs` removes when it
        // packed every ref it held: made again on the next attempt.
        let refs = self.git_dir.join("refs");
        match retry_vanished(&refs, || repo.edit_reference(edit.clone())) {
            Ok(_) => Ok(Swap::Done),
            Err(err) if vanished(&err, &refs) => Ok(Swap::Vanished(reason(err))),
            Err(err) => {
                // A held lock or a moved ref means another writer: read again and retry.
                // Anything else (permissions, a full disk) is the caller's to report.
                let ref_lock = self.git_dir.join(format!("{name}.lock"));
                let packed_lock = self.git_dir.join("packed-refs.lock");
                for lock in [&ref_lock, &packed_lock] {
                    if let Some(age) = std::fs::metadata(lock)
                        .and_then(|m| m.modified())
                        .ok()
                        .and_then(|t| t.elapsed().ok())
                        && age > STALE_LOCK
                    {
                        return Ok(Swap::Locked(format!(
                            "{} exists since {}s: another git process holds it, or a crashed \
                             one left it; if no git or git mile command is running, remove the file",
                            lock.display(),
                            age.as_secs()
                        )));
                    }
                }
                let lock = if packed_lock.exists() {
                    packed_lock
                } else {
                    ref_lock
                };
                let current = repo
                    .try_find_reference(name)
                    .ok()
                    .flatten()
                    .and_then(|r| r.target().try_id().map(|id| id.to_owned()));
                if lock.exists() || current != expected {
                    Ok(Swap::Contended)
                } else {
                    Ok(Swap::Failed(err.to_string()))
                }
            }
        }
    }

    fn signature(actor: &Actor) -> gix::actor::Signature {
        gix::actor::Signature {
            name: actor.name.as_str().into(),
            email: actor.email.as_str().into(),
            time: gix::date::Time::now_local_or_utc(),
        }
    }

    /// The signature of a merge commit: fixed, and timed by its parents, so that two clones
    /// merging the same two tips write the same commit and their histories converge.
    fn merge_signature(
        &self,
        repo: &gix::Repository,
        parents: &[ObjectId],
    ) -> StoreResult<gix::actor::Signature> {
        let mut time = gix::date::Time::new(0, 0);
        for parent in parents {
            let commit = repo.find_commit(*parent).map_err(git)?;
            let committed = commit.time().map_err(git)?;
            if committed.seconds > time.seconds {
                time = gix::date::Time::new(committed.seconds, 0);
            }
        }
        Ok(gix::actor::Signature {
            name: "git-mile".into(),
            email: "git-mile@localhost".into(),
            time,
        })
    }

    /// Create an entity whose history starts with `changes` (the first is its `created`
    /// event): every commit is written first and the ref is created once, so the entity
    /// appears whole or not at all. Returns its id and its state.
    pub fn create(&self, kind: Kind, changes: Vec<Change>) -> StoreResult<(String, Entity)> {
        let actor = self.actor()?;
        let id = uuid::Uuid::new_v4().to_string();
        let repo = self.local();
        let name = ref_name(kind, &id);
        let events = timed_events(&actor, changes, None)?;
        let tip = self.write_chain(&repo, &actor, kind, &id, &events, None)?;
        let Some(tip) = tip else {
            return Err(StoreError::Git(format!("{name}: nothing to create")));
        };
        let entity = replay(kind, &id, events)
            .ok_or_else(|| StoreError::Git(format!("{name}: no creation event")))?;
        match self.swap(&repo, &name, None, tip)? {
            Swap::Done => Ok((id, entity)),
            Swap::Contended => Err(StoreError::Git(format!(
                "could not create {name}: it exists already"
            ))),
            Swap::Failed(why) => Err(StoreError::Git(format!("could not create {name}: {why}"))),
            Swap::Vanished(why) => Err(StoreError::Vanished { what: "a ref", why }),
            Swap::Locked(why) => Err(StoreError::Locked {
                ref_name: name,
                why,
            }),
        }
    }

    /// Change an existing entity by compare-and-swap: `plan` sees the entity as its ref's
    /// tip has it and says which changes to append (none: nothing is written). The changes
    /// become one commit each, chained, and the ref moves once, so they land together or
    /// not at all. When another writer moved the ref meanwhile, the entity is read again and
    /// `plan` asked again, until [`CAS_PATIENCE`] is spent.
    ///
    /// Events are timed after every event already in the history they extend, even when
    /// this machine's clock is behind another's: the fold orders events by time, and what is
    /// written after seeing an event must come after it.
    ///
    /// Returns the events written and the entity after them.
    pub fn write<E: From<StoreError>>(
        &self,
        kind: Kind,
        id: &str,
        mut plan: impl FnMut(&Entity) -> Result<Vec<Change>, E>,
    ) -> Result<(Vec<Event>, Entity), E> {
        let actor = self.actor()?;
        let repo = self.local();
        let name = ref_name(kind, id);
        let _turn = self.turn(&name);
        let not_found = || StoreError::NotFound {
            kind: kind.as_str(),
            id: id.to_string(),
        };
        let mut backoff = Backoff::new();
        loop {
            let tip = self.tip(kind, id)?.ok_or_else(not_found)?;
            let history = self.events(tip)?;
            let latest = history.iter().map(|e| e.ts).max();
            let current = replay(kind, id, history.clone()).ok_or_else(not_found)?;
            let changes = plan(&current)?;
            if changes.is_empty() {
                return Ok((Vec::new(), current));
            }
            let events = timed_events(&actor, changes, latest)?;
            let Some(new) = self.write_chain(&repo, &actor, kind, id, &events, Some(tip))? else {
                return Ok((Vec::new(), current));
            };
            match self.swap(&repo, &name, Some(tip), new)? {
                Swap::Done => {
                    let mut all = history;
                    all.extend(events.iter().cloned());
                    let entity = replay(kind, id, all).ok_or_else(not_found)?;
                    return Ok((events, entity));
                }
                Swap::Contended => {}
                Swap::Failed(why) => {
                    return Err(StoreError::Git(format!("{name}: {why}")).into());
                }
                Swap::Vanished(why) => {
                    return Err(StoreError::Vanished { what: "a ref", why }.into());
                }
                Swap::Locked(why) => {
                    return Err(StoreError::Locked {
                        ref_name: name,
                        why,
                    }
                    .into());
                }
            }
            if !backoff.wait() {
                return Err(StoreError::Contended(name).into());
            }
        }
    }

    /// Where the ref `name` (any ref under `refs/git-mile/`) points: nowhere, at a commit, or
    /// into a file git cannot read or decode.
    pub fn ref_tip(&self, name: &str) -> StoreResult<Tip> {
        let repo = self.local();
        match repo.try_find_reference(name) {
            Ok(reference) => Ok(
                match reference.and_then(|r| r.target().try_id().map(|id| id.to_owned())) {
                    Some(tip) => Tip::At(tip),
                    None => Tip::Missing,
                },
            ),
            Err(err) if self.failed_ref(&repo, &err).as_deref() == Some(name) => {
                Ok(Tip::Broken(reason(err)))
            }
            Err(err) => Err(git(err)),
        }
    }

    /// Chain commits onto the ref `name`, under `refs/git-mile/` but in a format that is not
    /// this crate's (upstream git-mile's tasks), by the same compare-and-swap as [`Self::write`]:
    /// `plan` sees where the ref points (`None`: it does not exist, and is then created) and
    /// says which commits to chain on top, each with an empty tree, authored and committed by
    /// its actor now, its message exactly as given (none: nothing is written). The ref moves
    /// once, so the commits land together or not at all; when another writer moved it
    /// meanwhile, `plan` is asked again, until [`CAS_PATIENCE`] is spent.
    ///
    /// Returns the new tip, `None` when nothing was written.
    pub fn append_raw<E: From<StoreError>>(
        &self,
        name: &str,
        mut plan: impl FnMut(Option<ObjectId>) -> Result<Vec<RawCommit>, E>,
    ) -> Result<Option<ObjectId>, E> {
        if !name.starts_with(REF_PREFIX) {
            return Err(StoreError::Git(format!("{name} is not under {REF_PREFIX}")).into());
        }
        let repo = self.local();
        let _turn = self.turn(name);
        let mut backoff = Backoff::new();
        loop {
            let tip = match self.ref_tip(name)? {
                Tip::Missing => None,
                Tip::At(tip) => Some(tip),
                Tip::Broken(why) => {
                    return Err(StoreError::Git(format!("{name} cannot be read: {why}")).into());
                }
            };
            let commits = plan(tip)?;
            if commits.is_empty() {
                return Ok(None);
            }
            let mut parent = tip;
            for commit in &commits {
                let parents: Vec<ObjectId> = parent.into_iter().collect();
                parent = Some(self.write_commit(
                    &repo,
                    Self::signature(&commit.actor),
                    &commit.message,
                    &parents,
                )?);
            }
            let Some(new) = parent else {
                return Ok(None);
            };
            match self.swap(&repo, name, tip, new)? {
                Swap::Done => return Ok(Some(new)),
                Swap::Contended => {}
                Swap::Failed(why) => {
                    return Err(StoreError::Git(format!("{name}: {why}")).into());
                }
                Swap::Vanished(why) => {
                    return Err(StoreError::Vanished { what: "a ref", why }.into());
                }
                Swap::Locked(why) => {
                    return Err(StoreError::Locked {
                        ref_name: name.to_string(),
                        why,
                    }
                    .into());
                }
            }
            if !backoff.wait() {
                return Err(StoreError::Contended(name.to_string()).into());
            }
        }
    }

    /// This process's turn to write the ref `name` (held until dropped).
    fn turn(&self, name: &str) -> std::sync::MutexGuard<'_, ()> {
        let stripe = blake3::hash(name.as_bytes()).as_bytes()[0] as usize % TURNS;
        // A writer that panicked left nothing half-done in the ref (the swap is atomic).
        self.turns[stripe]
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// One commit per event, each the parent of the next, on top of `parent`; the last one.
    fn write_chain(
        &self,
        repo: &gix::Repository,
        actor: &Actor,
        kind: Kind,
        id: &str,
        events: &[Event],
        mut parent: Option<ObjectId>,
    ) -> StoreResult<Option<ObjectId>> {
        for event in events {
            let message = event.to_message(kind, id).map_err(git)?;
            let parents: Vec<ObjectId> = parent.into_iter().collect();
            parent = Some(self.write_commit(repo, Self::signature(actor), &message, &parents)?);
        }
        Ok(parent)
    }

    /// Bring `theirs` (a fetched tip of the same entity) into the local ref: create it,
    /// fast-forward, or write a merge commit whose parents are both tips (in id order, and
    /// timed by them, so that every clone writes the same one).
    pub fn merge(&self, kind: Kind, id: &str, theirs: ObjectId) -> StoreResult<MergeOutcome> {
        let tip = || self.tip(kind, id);
        self.merge_into(&ref_name(kind, id), tip, theirs, |repo, ours, theirs| {
            // Parents in a fixed order, so both sides of a merge write the same commit
            // whoever merges first.
            let mut parents = [ours, theirs];
            parents.sort();
            let signature = self.merge_signature(repo, &parents)?;
            self.write_commit(repo, signature, &merge_message(kind, id), &parents)
        })
    }

    /// The tip of upstream git-mile's ref of task `id` (`refs/git-mile/tasks/<id>`); a ref
    /// git cannot read is [`StoreError::Unreadable`].
    pub fn task_tip(&self, id: &str) -> StoreResult<Option<ObjectId>> {
        match self.ref_tip(&task_ref_name(id))? {
            Tip::Missing => Ok(None),
            Tip::At(tip) => Ok(Some(tip)),
            Tip::Broken(why) => Err(StoreError::Unreadable {
                kind: "task",
                id: id.to_string(),
                why,
            }),
        }
    }

    /// Bring `theirs` (a fetched tip of upstream git-mile's task `id`) into the local ref as
    /// upstream's `git-mile pull` does: create it, fast-forward, leave it when it is ahead,
    /// or else write upstream's merge commit: the empty tree, the local tip then `theirs` as
    /// parents, the message `Merge remote changes into refs/git-mile/tasks/<id>`, and the
    /// user's `user.name`/`user.email` (`git-mile <git-mile@example.invalid>` without them),
    /// timed now. Upstream reads a merge commit as no event: the task is the union of both
    /// histories' events, replayed by its CRDT rules.
    pub fn merge_task(&self, id: &str, theirs: ObjectId) -> StoreResult<MergeOutcome> {
        let name = task_ref_name(id);
        let tip = || self.task_tip(id);
        self.merge_into(&name, tip, theirs, |repo, ours, theirs| {
            let config = repo.config_snapshot();
            let named = |key: &str| config.string(key).map(|v| v.to_string());
            let (user, email) = match (named("user.name"), named("user.email")) {
                (Some(user), Some(email)) => (user, email),
                _ => (
                    "git-mile".to_string(),
                    "git-mile@example.invalid".to_string(),
                ),
            };
            let signature = gix::actor::Signature {
                name: user.as_str().into(),
                email: email.as_str().into(),
                time: gix::date::Time::now_local_or_utc(),
            };
            let message = format!("Merge remote changes into {name}");
            self.write_commit(repo, signature, &message, &[ours, theirs])
        })
    }

    /// Bring `theirs` into the ref `name`, whose tip `tip` reads: create it, fast-forward it,
    /// leave it when it holds `theirs` already, or point it at the merge commit `merge`
    /// writes of its tip and `theirs`; by compare-and-swap, again while other writers move it.
    fn merge_into(
        &self,
        name: &str,
        tip: impl Fn() -> StoreResult<Option<ObjectId>>,
        theirs: ObjectId,
        merge: impl Fn(&gix::Repository, ObjectId, ObjectId) -> StoreResult<ObjectId>,
    ) -> StoreResult<MergeOutcome> {
        let repo = self.local();
        let name = name.to_string();
        let _turn = self.turn(&name);
        let mut backoff = Backoff::new();
        loop {
            let ours = tip()?;
            let (new, outcome) = match ours {
                None => (theirs, MergeOutcome::Created),
                Some(ours) if ours == theirs || self.reaches(ours, theirs)? => {
                    return Ok(MergeOutcome::UpToDate);
                }
                Some(ours) if self.reaches(theirs, ours)? => (theirs, MergeOutcome::FastForward),
                Some(ours) => (merge(&repo, ours, theirs)?, MergeOutcome::Merged),
            };
            match self.swap(&repo, &name, ours, new)? {
                Swap::Done => return Ok(outcome),
                Swap::Contended => {}
                Swap::Failed(why) => return Err(StoreError::Git(format!("{name}: {why}"))),
                Swap::Vanished(why) => return Err(StoreError::Vanished { what: "a ref", why }),
                Swap::Locked(why) => {
                    return Err(StoreError::Locked {
                        ref_name: name,
                        why,
                    });
                }
            }
            if !backoff.wait() {
                return Err(StoreError::Contended(name));
            }
        }
    }
}

/// `changes` as events by `actor`, timed now and each after the one before, and all after
/// `after` (the latest event of the history they extend).
fn timed_events(
    actor: &Actor,
    changes: Vec<Change>,
    after: Option<chrono::DateTime<chrono::Utc>>,
) -> StoreResult<Vec<Event>> {
    let tick = chrono::Duration::microseconds(1);
    let mut previous = after;
    let mut events = Vec::with_capacity(changes.len());
    for change in changes {
        let mut event = Event::new(actor.clone(), change);
        if let Some(previous) = previous
            && previous >= event.ts
        {
            event.ts = previous.checked_add_signed(tick).ok_or_else(|| {
                StoreError::Git(format!(
                    "the history holds an event timed {previous}, after which nothing can be \
                     timed; a clock or a tool that wrote it was wrong"
                ))
            })?;
        }
        previous = Some(event.ts);
        events.push(event);
    }
    Ok(events)
}

/// One commit [`GitStore::append_raw`] writes: its author and committer, and its message
/// exactly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawCommit {
    pub actor: Actor,
    pub message: String,
}

/// How a compare-and-swap of a ref went.
enum Swap {
    Done,
    /// Another writer moved the ref or holds its lock: read again and retry.
    Contended,
    /// A lock file stayed longer than a writer holds one: why.
    Locked(String),
    /// The ref's directory vanished under each attempt to lock it (`git pack-refs`): why.
    Vanished(String),
    /// A failure retrying cannot cure.
    Failed(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MergeOutcome {
    UpToDate,
    Created,
    FastForward,
    Merged,
}

#[cfg(test)]
#[cfg(unix)] // a link to nowhere stands for a directory removed under a write
mod tests {
    use super::*;
    use crate::event::Change;

    /// A repository without any object yet, with an identity to author events.
    fn fresh() -> (tempfile::TempDir, GitStore) {
        let dir = tempfile::tempdir().unwrap();
        for args in [
            &["init", "-q"][..],
            &["config", "user.name", "Ann Example"],
            &["config", "user.email", "ann@example.com"],
        ] {
            let status = std::process::Command::new("git")
                .args(args)
                .current_dir(dir.path())
                .env_remove("GIT_DIR")
                .status()
                .unwrap();
            assert!(status.success(), "git {args:?}");
        }
        let store = GitStore::open(Some(dir.path())).unwrap();
        (dir, store)
    }

    fn created(title: &str) -> Vec<Change> {
        vec![Change::Created {
            kind: Kind::Issue,
            title: title.into(),
            description: String::new(),
            labels: Vec::new(),
        }]
    }

    const EMPTY_TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

    /// `git gc` removing the fan-out directory of an object at the moment gix writes the
    /// object, made to happen on every try: `.git/objects/4b` (where the empty tree, the first
    /// object of every event commit, goes) is a link to nowhere. gix's `mkdir` finds it there
    /// (`EEXIST`, which gix takes for "the directory exists"), then the rename of the object's
    /// temporary file into it fails with `ENOENT`: the very failure of a directory removed
    /// between the two.
    fn fan_out_removed_under_every_write(dir: &Path, store: &GitStore) -> PathBuf {
        let objects = store.repo.objects_dir().to_path_buf();
        let fan_out = objects.join(&EMPTY_TREE[..2]);
        assert!(!fan_out.exists(), "a fresh repository has no {fan_out:?}");
        std::os::unix::fs::symlink(dir.join("removed-by-gc"), &fan_out).unwrap();
        fan_out
    }

    fn write_empty_tree(repo: &gix::Repository) -> Result<ObjectId, gix::Error> {
        repo.write_object(gix::objs::Tree::empty())
            .map(|id| id.detach())
    }

    #[test]
    fn an_object_whose_directory_vanished_under_its_write_is_written_again() {
        let (dir, store) = fresh();
        let fan_out = fan_out_removed_under_every_write(dir.path(), &store);
        let objects = store.repo.objects_dir().to_path_buf();
        let repo = store.local();

        // Unfixed, this failure was the end of the write: a -32001 for an MCP client.
        let err = write_empty_tree(&repo).unwrap_err();
        assert!(vanished(&err, &objects), "{err}");
        assert!(
            err.to_string().contains("Could not persist loose object"),
            "{err}"
        );

        // gc removed the directory once, then was done: the second try makes it anew.
        let mut tries = 0;
        let id = retry_vanished(&objects, || {
            tries += 1;
            if tries == 2 {
                std::fs::remove_file(&fan_out).unwrap();
            }
            write_empty_tree(&repo)
        })
        .unwrap();
        assert_eq!(tries, 2);
        assert_eq!(id.to_string(), EMPTY_TREE);
        assert!(fan_out.join(&EMPTY_TREE[2..]).is_file());
        assert!(repo.has_object(id));
    }

    #[test]
    fn a_directory_that_keeps_vanishing_is_tried_a_bounded_number_of_times_and_said() {
        let (dir, store) = fresh();
        let fan_out = fan_out_removed_under_every_write(dir.path(), &store);
        let objects = store.repo.objects_dir().to_path_buf();
        let repo = store.local();

        let mut tries = 0;
        let err = retry_vanished(&objects, || {
            tries += 1;
            write_empty_tree(&repo)
        })
        .unwrap_err();
        assert_eq!(tries, VANISHED_ATTEMPTS);
        assert!(vanished(&err, &objects), "{err}");
        // Each try's temporary file goes with its failure (the last one's is held by the error).
        drop(err);
        let temporary = || -> Vec<_> {
            std::fs::read_dir(&objects)
                .unwrap()
                .map(|entry| entry.unwrap().file_name())
                .filter(|name| name.to_string_lossy().starts_with(".tmp"))
                .collect()
        };
        assert!(temporary().is_empty(), "{:?}", temporary());

        // Through a whole write: nothing is created, and the failure is told apart from the
        // others (it is the one a caller may simply try again).
        match store.create(Kind::Issue, created("t")) {
            Err(StoreError::Vanished { what, why }) => {
                assert_eq!(what, "an object");
                assert!(why.contains("No such file or directory"), "{why}");
            }
            other => panic!("not Vanished: {other:?}"),
        }
        assert!(store.refs().unwrap().is_empty());
        assert!(temporary().is_empty(), "{:?}", temporary());

        // Once gc is done, the same write works.
        std::fs::remove_file(&fan_out).unwrap();
        let (id, entity) = store.create(Kind::Issue, created("t")).unwrap();
        assert_eq!(entity.title, "t");
        assert_eq!(store.refs().unwrap().refs[0].id, id);
        assert!(fan_out.join(&EMPTY_TREE[2..]).is_file());
    }

    #[test]
    fn other_write_failures_are_not_tried_again() {
        // The fan-out "directory" is a file: ENOTDIR, nothing transient.
        let (_dir, store) = fresh();
        let objects = store.repo.objects_dir().to_path_buf();
        std::fs::write(objects.join(&EMPTY_TREE[..2]), "").unwrap();
        let repo = store.local();
        let mut tries = 0;
        let err = retry_vanished(&objects, || {
            tries += 1;
            write_empty_tree(&repo)
        })
        .unwrap_err();
        assert_eq!(tries, 1, "{err}");
        assert!(!vanished(&err, &objects), "{err}");
        assert!(matches!(
            store.create(Kind::Issue, created("t")),
            Err(StoreError::Git(_))
        ));

        // The objects directory itself is gone (the repository was removed under the
        // server): an ENOENT too, but no directory of git's own cleanup.
        let (_dir, store) = fresh();
        let objects = store.repo.objects_dir().to_path_buf();
        std::fs::rename(&objects, objects.with_extension("gone")).unwrap();
        let repo = store.local();
        let mut tries = 0;
        let err = retry_vanished(&objects, || {
            tries += 1;
            write_empty_tree(&repo)
        })
        .unwrap_err();
        assert_eq!(tries, 1, "{err}");
        assert!(!vanished(&err, &objects), "{err}");
    }

    #[test]
    fn a_ref_lock_whose_directory_vanished_is_taken_again() {
        // gix's lock of `refs/git-mile/issue/<id>` fails with ENOENT when `git pack-refs`
        // removes `refs/git-mile/issue/` between gix's `mkdir` and its `open`: the same
        // retry, the same bound.
        let (_dir, store) = fresh();
        let refs = store.git_dir().join("refs");
        let enoent = || {
            Err::<(), _>(gix::Error::from_error(std::io::Error::from(
                std::io::ErrorKind::NotFound,
            )))
        };
        let mut tries = 0;
        retry_vanished(&refs, || {
            tries += 1;
            if tries < 3 { enoent() } else { Ok(()) }
        })
        .unwrap();
        assert_eq!(tries, 3);
        let mut tries = 0;
        let err = retry_vanished(&refs, || {
            tries += 1;
            enoent()
        })
        .unwrap_err();
        assert_eq!(tries, VANISHED_ATTEMPTS);
        assert!(vanished(&err, &refs));
        let mut tries = 0;
        let err = retry_vanished(&refs, || {
            tries += 1;
            Err::<(), _>(gix::Error::from_error(std::io::Error::from(
                std::io::ErrorKind::PermissionDenied,
            )))
        })
        .unwrap_err();
        assert_eq!(tries, 1);
        assert!(!vanished(&err, &refs));
    }
}
