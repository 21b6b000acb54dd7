//! The git repository, read-only: detection, the checked-out branch, local branches and
//! remotes. Nothing here writes to the repository (not even the index).

use std::path::{Path, PathBuf};

use gix::ObjectId;

use crate::history::History;

/// A repository detected at startup.
pub struct GitRepo {
    repo: gix::ThreadSafeRepository,
    workdir: PathBuf,
    git_dir: PathBuf,
    /// What was read of the commit graph (see [`History`]).
    history: History,
}

impl std::fmt::Debug for GitRepo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GitRepo")
            .field("workdir", &self.workdir)
            .field("git_dir", &self.git_dir)
            .finish()
    }
}

/// The checked-out state of HEAD.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Head {
    /// HEAD names a branch (possibly one without commits yet).
    Branch(String),
    /// HEAD points at a commit directly.
    Detached,
}

impl GitRepo {
    /// Find the repository containing `start`, walking up through its parents.
    ///
    /// Paths are made absolute, so that they stay right whatever the working directory and
    /// compare equal to the paths file notifications report.
    pub fn discover(start: &Path) -> Result<Self, String> {
        let start = std::fs::canonicalize(start)
            .map_err(|err| format!("cannot use {}: {err}", start.display()))?;
        let repo = gix::ThreadSafeRepository::discover(&start)
            .map_err(|err| format!("no git repository at or above {}: {err}", start.display()))?;
        let local = repo.to_thread_local();
        let workdir = local
            .workdir()
            .map(absolute)
            .ok_or_else(|| format!("{} is a bare repository", local.git_dir().display()))?;
        let git_dir = absolute(local.git_dir());
        Ok(Self {
            repo,
            workdir,
            git_dir,
            history: History::default(),
        })
    }

    /// The root of the working tree (where `.twig/` lives).
    pub fn workdir(&self) -> &Path {
        &self.workdir
    }

    /// The file that says which branch is checked out in this working tree.
    pub fn head_file(&self) -> PathBuf {
        self.git_dir.join("HEAD")
    }

    /// Where the branches live: the `refs/heads` directory and the `packed-refs` file of the
    /// repository's common directory (shared by its worktrees).
    pub fn refs_paths(&self) -> (PathBuf, PathBuf) {
        let common = absolute(self.repo.to_thread_local().common_dir());
        (
            common.join("refs").join("heads"),
            common.join("packed-refs"),
        )
    }

    /// Whether the repository still exists on disk.
    pub fn exists(&self) -> bool {
        self.git_dir.is_dir()
    }

    /// Read HEAD afresh.
    pub fn head(&self) -> Result<Head, String> {
        let repo = self.repo.to_thread_local();
        match repo.head_name() {
            // HEAD names a branch only under refs/heads (`git symbolic-ref HEAD refs/tags/t`
            // is possible, and is no branch).
            Ok(Some(name)) => match name.as_bstr().to_string().strip_prefix("refs/heads/") {
                Some(branch) => Ok(Head::Branch(branch.to_string())),
                None => Ok(Head::Detached),
            },
            Ok(None) => Ok(Head::Detached),
            Err(err) => Err(format!("cannot read HEAD: {err}")),
        }
    }

    /// The checked-out branch, or `None` when HEAD is detached or unreadable.
    pub fn current_branch(&self) -> Option<String> {
        match self.head() {
            Ok(Head::Branch(name)) => Some(name),
            _ => None,
        }
    }

    /// The names of all local branches, in name order.
    ///
    /// Only names are needed, so loose refs are listed from the directory tree under
    /// `refs/heads` without reading each ref file (gix's reference iterator reads and parses
    /// every file, which dominates on repositories with thousands of loose refs); packed refs
    /// come from gix's cached `packed-refs` buffer.
    pub fn local_branches(&self) -> Result<Vec<String>, String> {
        let repo = self.repo.to_thread_local();
        let mut names = Vec::new();
        let heads = repo.common_dir().join("refs").join("heads");
        collect_loose_names(&heads, "", &mut names)
            .map_err(|err| format!("cannot list {}: {err}", heads.display()))?;
        let packed = repo
            .refs
            .cached_packed_buffer()
            .map_err(|err| format!("cannot read packed-refs: {err}"))?;
        if let Some(packed) = packed {
            let iter = packed
                .iter_prefixed("refs/heads/".into())
                .map_err(|err| format!("cannot read packed-refs: {err}"))?;
            for reference in iter.flatten() {
                names.push(reference.name.shorten().to_string());
            }
        }
        names.sort_unstable();
        names.dedup();
        Ok(names)
    }

    /// Every local branch with the object it points at (symbolic refs followed, tags peeled),
    /// in name order; a ref that cannot be resolved (a loop, a missing target) is left out.
    pub fn branch_tips(&self) -> Result<Vec<(String, ObjectId)>, String> {
        let repo = self.repo.to_thread_local();
        let refs = repo
            .references()
            .map_err(|err| format!("cannot read the branches: {err}"))?;
        let branches = refs
            .local_branches()
            .map_err(|err| format!("cannot read the branches: {err}"))?;
        let mut tips = Vec::new();
        for mut reference in branches.flatten() {
            let name = reference.name().shorten().to_string();
            // As git does: a symbolic ref is followed, an annotated tag peeled.
            if let Ok(id) = reference.peel_to_id() {
                tips.push((name, id.detach()));
            }
        }
        tips.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        Ok(tips)
    }

    /// The object branch `name` points at (followed and peeled as by [`Self::branch_tips`]),
    /// or `None` when there is no such branch.
    pub fn tip_of(&self, name: &str) -> Option<ObjectId> {
        let repo = self.repo.to_thread_local();
        let mut reference = repo
            .try_find_reference(format!("refs/heads/{name}").as_str())
            .ok()??;
        reference.peel_to_id().ok().map(|id| id.detach())
    }

    /// A handle for reading objects on this thread.
    pub fn local(&self) -> gix::Repository {
        self.repo.to_thread_local()
    }

    /// The commit-graph caches of this repository.
    pub fn history(&self) -> &History {
        &self.history
    }

    /// The linked worktrees git knows (not the main one), by path.
    pub fn worktrees(&self) -> Result<Vec<GitWorktree>, String> {
        let repo = self.repo.to_thread_local();
        let proxies = repo
            .worktrees()
            .map_err(|err| format!("cannot list the worktrees: {err}"))?;
        let mut out = Vec::new();
        for proxy in proxies {
            let id = proxy.id().map(|id| id.to_string()).unwrap_or_default();
            let Ok(path) = proxy.base() else { continue };
            let head = std::fs::read_to_string(proxy.git_dir().join("HEAD")).unwrap_or_default();
            let branch = head
                .trim()
                .strip_prefix("ref: refs/heads/")
                .map(str::to_string);
            out.push(GitWorktree {
                id,
                path: absolute(&path),
                exists: path.is_dir(),
                branch,
            });
        }
        Ok(out)
    }

    /// The fetch URL of the remote `name`, read from the current configuration.
    pub fn remote_url(&self, name: &str) -> Result<Option<String>, String> {
        // Open afresh so that a remote added during the session is seen.
        let repo = gix::open(&self.git_dir)
            .map_err(|err| format!("cannot open {}: {err}", self.git_dir.display()))?;
        let Ok(remote) = repo.find_remote(name) else {
            return Ok(None);
        };
        Ok(remote
            .url(gix::remote::Direction::Fetch)
            .map(|url| url.to_bstring().to_string()))
    }
}

/// A linked worktree as git records it (`.git/worktrees/<id>`).
#[derive(Debug, Clone)]
pub struct GitWorktree {
    pub id: String,
    pub path: PathBuf,
    /// The directory is still there.
    pub exists: bool,
    /// The branch checked out there; `None` when its HEAD is detached.
    pub branch: Option<String>,
}

/// `path` resolved against the working directory, with symbolic links resolved when possible.
fn absolute(path: &Path) -> PathBuf {
    std::fs::canonicalize(path)
        .or_else(|_| std::path::absolute(path))
        .unwrap_or_else(|_| path.to_path_buf())
}

/// Append the branch names of the loose refs below `dir` (named relative to `refs/heads`).
/// Lock files of refs being written (`*.lock`) are not branches.
fn collect_loose_names(dir: &Path, prefix: &str, names: &mut Vec<String>) -> std::io::Result<()> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(err) => return Err(err),
    };
    for entry in entries {
        let entry = entry?;
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        let full = format!("{prefix}{name}");
        let file_type = entry.file_type()?;
        if file_type.is_dir() {
            collect_loose_names(&entry.path(), &format!("{full}/"), names)?;
        } else if !name.ends_with(".lock") {
            names.push(full);
        }
    }
    Ok(())
}
