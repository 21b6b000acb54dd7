//! twig's on-disk data: `<repo>/.twig/state.json` and the global repository registry
//! (`$XDG_DATA_HOME/twig/registry.json`), read exactly as twig 0.7 writes them.
//!
//! The state is fresh on every call, yet an unchanged file is not parsed again: [`StateCache`]
//! keys the parsed state by the file's identity (size, modification time, inode, change time).

use std::{
    collections::{BTreeMap, HashSet},
    fs,
    os::unix::fs::MetadataExt,
    path::{Path, PathBuf},
    sync::{Arc, Mutex, OnceLock},
    time::{Duration, SystemTime},
};

use serde::Deserialize;

/// The parsed content of `.twig/state.json`: only the fields the server reads (ids,
/// timestamps of dependencies and roots, `version` and `updated_at` are skipped, which keeps a
/// 10,000-branch state small in memory).
#[derive(Debug, Default, Deserialize)]
pub struct RepoState {
    #[serde(default)]
    pub worktrees: Vec<Worktree>,
    /// Moved into [`LoadedState`] (read through [`LoadedState::meta`]).
    #[serde(default)]
    branches: BTreeMap<String, BranchMetadata>,
    /// Moved into [`LoadedState`] (read through [`LoadedState::parents`]).
    #[serde(default)]
    dependencies: Vec<Dependency>,
    #[serde(default)]
    pub root_branches: Vec<RootBranch>,
}

#[derive(Debug, Deserialize)]
pub struct Worktree {
    pub name: String,
    pub path: String,
    pub branch: String,
}

/// A branch's entry; its name is the key of `branches` (twig repeats it in a `branch` field).
#[derive(Debug, Deserialize)]
pub struct BranchMetadata {
    #[serde(default)]
    pub jira_issue: Option<Box<str>>,
    #[serde(default)]
    pub github_pr: Option<u32>,
    #[serde(default)]
    pub created_at: Option<Box<str>>,
}

#[derive(Debug, Deserialize)]
pub struct Dependency {
    pub child: String,
    pub parent: String,
}

#[derive(Debug, Deserialize)]
pub struct RootBranch {
    pub branch: String,
    #[serde(default)]
    pub is_default: bool,
}

/// A parsed state, arranged once per file version for the lookups every tool makes without
/// copying names: `branches` is ordered by name; every name twig tracks is kept once, in name
/// order, and the dependencies refer to names by position, sorted by child (a stable sort, so
/// each child's parents keep their declaration order) without repeated pairs.
#[derive(Debug, Default)]
pub struct LoadedState {
    pub state: RepoState,
    /// Every branch twig tracks, in name order: linked (`branches`), in a dependency (as
    /// child or parent), or a root — twig writes a `branches` entry only when a Jira issue
    /// or PR is linked, so a branch made with `twig switch -p` has none.
    tracked: Vec<Box<str>>,
    /// The `branches` entries by position in `tracked`, sorted (`state.branches` is emptied
    /// into them: the names are in `tracked`).
    metas: Vec<(u32, BranchMetadata)>,
    /// The dependencies as (child, parent) positions in `tracked`, sorted by child, each
    /// child's parents in declaration order (`state.dependencies` is emptied into them).
    edges: Vec<(u32, u32)>,
    /// Each branch's declared children in name order (none is its own child), built on first
    /// use: only the health check walks down the stacks.
    children: OnceLock<Children>,
}

/// The declared children of every tracked branch, as positions in `tracked`: those of the
/// branch at position `i` are `kids[start[i]..start[i + 1]]` (four bytes a dependency, where
/// a map of names took some sixty).
#[derive(Debug, Default)]
struct Children {
    start: Vec<u32>,
    kids: Vec<u32>,
}

/// The declared children of one branch, in name order.
#[derive(Debug, Clone, Copy)]
pub struct Kids<'a> {
    names: &'a [Box<str>],
    ids: &'a [u32],
}

impl<'a> Kids<'a> {
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// The `i`-th child (`i < len()`).
    pub fn get(&self, i: usize) -> Option<&'a str> {
        let names = self.names;
        self.ids
            .get(i)
            .and_then(|&id| names.get(id as usize))
            .map(|n| &**n)
    }

    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &'a str> + ExactSizeIterator + use<'a> {
        let names = self.names;
        self.ids
            .iter()
            .map(move |&id| names.get(id as usize).map_or("", |n| &**n))
    }
}

impl LoadedState {
    pub fn new(mut state: RepoState) -> Self {
        state.dependencies.sort_by(|a, b| a.child.cmp(&b.child));
        let mut seen = HashSet::new();
        let keep: Vec<bool> = state
            .dependencies
            .iter()
            .map(|d| seen.insert((d.child.as_str(), d.parent.as_str())))
            .collect();
        let mut keep = keep.into_iter();
        state.dependencies.retain(|_| keep.next().unwrap_or(false));
        let mut tracked: Vec<Box<str>> = state
            .branches
            .keys()
            .map(String::as_str)
            .chain(
                state
                    .dependencies
                    .iter()
                    .flat_map(|d| [d.child.as_str(), d.parent.as_str()]),
            )
            .chain(state.root_branches.iter().map(|r| r.branch.as_str()))
            .map(Box::from)
            .collect();
        tracked.sort_unstable();
        tracked.dedup();
        tracked.shrink_to_fit();
        let position = |name: &str| {
            tracked
                .binary_search_by(|n| (**n).cmp(name))
                .map_or(u32::MAX, |i| i as u32)
        };
        // Sorted by child already (positions keep the names' order), parents in declaration
        // order; the names are in `tracked`, so the dependencies' own copies go.
        let edges: Vec<(u32, u32)> = std::mem::take(&mut state.dependencies)
            .iter()
            .map(|d| (position(&d.child), position(&d.parent)))
            .collect();
        let mut metas: Vec<(u32, BranchMetadata)> = std::mem::take(&mut state.branches)
            .into_iter()
            .map(|(name, meta)| (position(&name), meta))
            .collect();
        metas.shrink_to_fit();
        Self {
            state,
            tracked,
            metas,
            edges,
            children: OnceLock::new(),
        }
    }

    /// The `branches` entry of `branch` (its linked Jira issue and PR), when twig wrote one.
    pub fn meta(&self, branch: &str) -> Option<&BranchMetadata> {
        let at = self.position(branch)? as u32;
        let i = self.metas.binary_search_by_key(&at, |(p, _)| *p).ok()?;
        self.metas.get(i).map(|(_, meta)| meta)
    }

    /// The position of `branch` in `tracked`.
    fn position(&self, branch: &str) -> Option<usize> {
        self.tracked.binary_search_by(|n| (**n).cmp(branch)).ok()
    }

    /// The declared children of `branch`, in name order.
    pub fn children(&self, branch: &str) -> Kids<'_> {
        let children = self.children.get_or_init(|| {
            let mut pairs: Vec<(u32, u32)> = Vec::new();
            // Children in name order, so every list is too.
            for (child, name) in self.tracked.iter().enumerate() {
                for parent in self.parents(name).filter(|parent| *parent != &**name) {
                    if let Some(parent) = self.position(parent) {
                        pairs.push((parent as u32, child as u32));
                    }
                }
            }
            pairs.sort_by_key(|&(parent, _)| parent); // stable: children stay in name order
            let mut start = Vec::with_capacity(self.tracked.len() + 1);
            let mut next = 0;
            for i in 0..self.tracked.len() {
                start.push(next as u32);
                while next < pairs.len() && pairs[next].0 as usize == i {
                    next += 1;
                }
            }
            start.push(next as u32);
            Children {
                start,
                kids: pairs.into_iter().map(|(_, child)| child).collect(),
            }
        });
        let ids = self
            .position(branch)
            .and_then(|i| {
                let from = *children.start.get(i)? as usize;
                let to = *children.start.get(i + 1)? as usize;
                children.kids.get(from..to)
            })
            .unwrap_or(&[]);
        Kids {
            names: &self.tracked,
            ids,
        }
    }

    /// The declared parents of `branch`, first (primary) parent first.
    pub fn parents<'a>(&'a self, branch: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        let edges = match self.position(branch) {
            Some(child) => {
                let child = child as u32;
                let from = self.edges.partition_point(|&(c, _)| c < child);
                let to = from + self.edges[from..].partition_point(|&(c, _)| c == child);
                &self.edges[from..to]
            }
            None => &[],
        };
        edges
            .iter()
            .map(|&(_, parent)| self.tracked.get(parent as usize).map_or("", |n| &**n))
    }

    /// The primary (first declared) parent of `branch`.
    pub fn primary_parent<'a>(&'a self, branch: &'a str) -> Option<&'a str> {
        self.parents(branch).next()
    }

    /// Every tracked branch name (see [`LoadedState::names`]) in name order.
    pub fn sorted_branches(&self) -> impl ExactSizeIterator<Item = &str> {
        self.tracked.iter().map(|n| &**n)
    }

    /// Tracked branch names after `after`, in name order.
    pub fn branches_after<'a>(&'a self, after: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        let from = self.tracked.partition_point(|n| &**n <= after);
        self.tracked[from..].iter().map(|n| &**n)
    }

    /// How many branches twig tracks.
    pub fn tracked_count(&self) -> usize {
        self.tracked.len()
    }

    /// The configured roots in declaration order.
    pub fn root_names(&self) -> impl Iterator<Item = &str> {
        self.state.root_branches.iter().map(|r| r.branch.as_str())
    }

    /// The default root: the one marked `is_default`, else the first configured root.
    pub fn default_root(&self) -> Option<&str> {
        self.state
            .root_branches
            .iter()
            .find(|r| r.is_default)
            .or_else(|| self.state.root_branches.first())
            .map(|r| r.branch.as_str())
    }

    /// Whether twig's state names `branch` anywhere: tracked, declared as a child or a parent,
    /// or configured as a root.
    pub fn names(&self, branch: &str) -> bool {
        self.position(branch).is_some()
    }

    /// Walk from `start` up the primary parents to the root, guarding against cycles, and
    /// stop after `max` branches (at least `start` itself). The flag is true when the chain
    /// was cut there: the last branch returned has a parent that is not in the chain.
    pub fn ancestry(&self, start: &str, max: usize) -> (Vec<String>, bool) {
        let mut chain = vec![start.to_string()];
        let mut seen: HashSet<&str> = HashSet::from([start]);
        let mut current = start;
        while let Some(parent) = self.primary_parent(current) {
            if !seen.insert(parent) {
                break;
            }
            if chain.len() >= max {
                return (chain, true);
            }
            chain.push(parent.to_string());
            current = parent;
        }
        (chain, false)
    }
}

/// Why the state could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    #[error("{} does not exist", .0.display())]
    Missing(PathBuf),
    #[error("cannot read {}: {}", .0.display(), .1)]
    Unreadable(PathBuf, std::io::Error),
    #[error("{} is not valid twig state: {}", .0.display(), .1)]
    Invalid(PathBuf, serde_json::Error),
}

/// The identity of a file version: a change to any of these means the file changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FileIdentity {
    len: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
    ino: u64,
    dev: u64,
}

impl FileIdentity {
    fn of(meta: &fs::Metadata) -> Self {
        Self {
            len: meta.len(),
            mtime: (meta.mtime(), meta.mtime_nsec()),
            ctime: (meta.ctime(), meta.ctime_nsec()),
            ino: meta.ino(),
            dev: meta.dev(),
        }
    }
}

/// A file modified less than this long before it was read may still change without changing
/// its identity (Linux file timestamps advance in ticks of up to 10 ms); it is parsed again
/// until it is older.
const RACY_WINDOW: Duration = Duration::from_millis(100);

/// Caches the parsed state of one state file by the file's identity.
#[derive(Debug)]
pub struct StateCache {
    path: PathBuf,
    cached: Mutex<Option<(FileIdentity, Arc<LoadedState>)>>,
}

impl StateCache {
    pub fn new(path: PathBuf) -> Self {
        Self {
            path,
            cached: Mutex::new(None),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The current state: the cached parse when the file is unchanged, else a fresh parse.
    pub fn load(&self) -> Result<Arc<LoadedState>, StateError> {
        let meta = match fs::metadata(&self.path) {
            Ok(meta) => meta,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                return Err(StateError::Missing(self.path.clone()));
            }
            Err(err) => return Err(StateError::Unreadable(self.path.clone(), err)),
        };
        let identity = FileIdentity::of(&meta);
        if let Ok(guard) = self.cached.lock()
            && let Some((cached_identity, state)) = guard.as_ref()
            && *cached_identity == identity
        {
            return Ok(state.clone());
        }
        let bytes =
            fs::read(&self.path).map_err(|err| StateError::Unreadable(self.path.clone(), err))?;
        let state: RepoState = serde_json::from_slice(&bytes)
            .map_err(|err| StateError::Invalid(self.path.clone(), err))?;
        let loaded = Arc::new(LoadedState::new(state));
        tracing::debug!(path = %self.path.display(), "parsed twig state");
        // Cache only what is known to match the identity: the file must not have changed
        // while it was read, and must not be "racy" (modified within the timestamp
        // granularity of the read, where a same-size rewrite could keep the same identity).
        let after = fs::metadata(&self.path).ok().map(|m| FileIdentity::of(&m));
        let racy = meta
            .modified()
            .ok()
            .and_then(|mtime| SystemTime::now().duration_since(mtime).ok())
            .is_none_or(|age| age < RACY_WINDOW);
        if let Ok(mut guard) = self.cached.lock() {
            *guard = (after == Some(identity) && !racy).then(|| (identity, loaded.clone()));
        }
        Ok(loaded)
    }
}

/// One repository of twig's global registry.
#[derive(Debug, Deserialize)]
pub struct RegistryEntry {
    pub path: String,
    pub name: String,
    #[serde(default)]
    pub last_fetch: Option<String>,
}

/// Where twig keeps its registry: `$XDG_DATA_HOME/twig/registry.json`, with
/// `XDG_DATA_HOME` defaulting to `~/.local/share`.
pub fn registry_path(xdg_data_home: Option<&str>, home: Option<&Path>) -> Option<PathBuf> {
    match xdg_data_home.filter(|v| !v.is_empty() && Path::new(v).is_absolute()) {
        Some(dir) => Some(PathBuf::from(dir).join("twig").join("registry.json")),
        None => home.map(|h| h.join(".local/share/twig/registry.json")),
    }
}

/// Load the registry. A registry that was never written is an empty list, as in twig.
pub fn load_registry(path: &Path) -> Result<Vec<RegistryEntry>, String> {
    match fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map_err(|err| format!("{} is not a valid twig registry: {err}", path.display())),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(err) => Err(format!("cannot read {}: {err}", path.display())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STATE: &str = r#"{
      "version": 1,
      "updated_at": "2026-01-02T03:04:05Z",
      "worktrees": [{"name": "wt", "path": "/tmp/wt", "branch": "feat/a", "created_at": "2026-01-01T00:00:00Z"}],
      "branches": {
        "feat/a": {"branch": "feat/a", "jira_issue": "PROJ-1", "github_pr": 42, "created_at": "2026-01-01T00:00:00Z"},
        "feat/b": {"branch": "feat/b", "jira_issue": null, "github_pr": null, "created_at": "2026-01-01T00:00:00Z"},
        "feat/c": {"branch": "feat/c", "created_at": "2026-01-01T00:00:00Z"}
      },
      "dependencies": [
        {"id": "0b3c6f62-0000-4000-8000-000000000001", "child": "feat/b", "parent": "feat/a", "created_at": "2026-01-01T00:00:00Z"},
        {"id": "0b3c6f62-0000-4000-8000-000000000002", "child": "feat/b", "parent": "main", "created_at": "2026-01-01T00:00:00Z"},
        {"id": "0b3c6f62-0000-4000-8000-000000000003", "child": "feat/a", "parent": "main", "created_at": "2026-01-01T00:00:00Z"},
        {"id": "0b3c6f62-0000-4000-8000-000000000004", "child": "main", "parent": "feat/b", "created_at": "2026-01-01T00:00:00Z"}
      ],
      "root_branches": [
        {"id": "0b3c6f62-0000-4000-8000-000000000005", "branch": "develop", "is_default": false, "created_at": "2026-01-01T00:00:00Z"},
        {"id": "0b3c6f62-0000-4000-8000-000000000006", "branch": "main", "is_default": true, "created_at": "2026-01-01T00:00:00Z"}
      ]
    }"#;

    #[test]
    fn parses_real_twig_state_and_indexes_parents() {
        let state: RepoState = serde_json::from_str(STATE).unwrap();
        let loaded = LoadedState::new(state);
        assert_eq!(loaded.primary_parent("feat/b"), Some("feat/a"));
        assert_eq!(
            loaded.parents("feat/b").collect::<Vec<_>>(),
            ["feat/a", "main"]
        );
        assert_eq!(loaded.parents("nope").count(), 0);
        assert_eq!(loaded.default_root(), Some("main"));
        // Every branch twig names: linked ones, dependency ends and roots (`develop` is a
        // root only, with no `branches` entry).
        assert_eq!(
            loaded.sorted_branches().collect::<Vec<_>>(),
            ["develop", "feat/a", "feat/b", "feat/c", "main"]
        );
        assert_eq!(
            loaded.branches_after("feat/a").collect::<Vec<_>>(),
            ["feat/b", "feat/c", "main"]
        );
        assert!(loaded.names("develop") && loaded.names("main") && !loaded.names("nope"));
        let c = loaded.meta("feat/c").unwrap();
        assert_eq!((c.jira_issue.as_deref(), c.github_pr), (None, None));
    }

    #[test]
    fn ancestry_stops_at_cycles() {
        let loaded = LoadedState::new(serde_json::from_str(STATE).unwrap());
        // feat/b → feat/a → main → feat/b (cycle)
        let (chain, cut) = loaded.ancestry("feat/b", 100);
        assert_eq!(chain, ["feat/b", "feat/a", "main"]);
        assert!(!cut, "a cycle is not a cut");
        assert_eq!(loaded.ancestry("feat/b", 3), (chain, false));
        assert_eq!(
            loaded.ancestry("feat/b", 2),
            (vec!["feat/b".to_string(), "feat/a".to_string()], true)
        );
        assert_eq!(loaded.ancestry("feat/b", 0).0, ["feat/b"]);
        assert!(loaded.names("main") && loaded.names("develop") && loaded.names("feat/c"));
        assert!(!loaded.names("nope"));
    }

    /// Set the file's modification time well in the past.
    fn age(path: &Path) {
        let file = fs::File::options().write(true).open(path).unwrap();
        file.set_modified(SystemTime::now() - Duration::from_secs(60))
            .unwrap();
    }

    #[test]
    fn cache_reparses_only_when_the_file_changes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        let cache = StateCache::new(path.clone());
        assert!(matches!(cache.load(), Err(StateError::Missing(_))));
        fs::write(&path, STATE).unwrap();
        // Just written: racy, so not trusted from the cache yet.
        let first = cache.load().unwrap();
        let second = cache.load().unwrap();
        assert!(
            !Arc::ptr_eq(&first, &second),
            "a racy file must be parsed again"
        );
        age(&path);
        let third = cache.load().unwrap();
        let fourth = cache.load().unwrap();
        assert!(Arc::ptr_eq(&third, &fourth), "unchanged file parsed again");
        // Same size, new content.
        fs::write(&path, STATE.replace("PROJ-1", "PROJ-9")).unwrap();
        age(&path);
        let third = cache.load().unwrap();
        assert_eq!(
            third.meta("feat/a").unwrap().jira_issue.as_deref(),
            Some("PROJ-9")
        );
        fs::write(&path, "{not json").unwrap();
        assert!(matches!(cache.load(), Err(StateError::Invalid(..))));
    }

    #[test]
    fn registry_is_a_bare_array() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("registry.json");
        assert!(load_registry(&path).unwrap().is_empty());
        fs::write(
            &path,
            r#"[{"path":"/src/a","name":"a","last_fetch":null},{"path":"/src/b","name":"b","last_fetch":"2026-01-01T00:00:00Z"}]"#,
        )
        .unwrap();
        let entries = load_registry(&path).unwrap();
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[1].name, "b");
        assert_eq!(
            registry_path(Some("/xdg"), None),
            Some(PathBuf::from("/xdg/twig/registry.json"))
        );
        assert_eq!(
            registry_path(None, Some(Path::new("/home/u"))),
            Some(PathBuf::from("/home/u/.local/share/twig/registry.json"))
        );
    }
}
