//! The git repository, read-only: detection, the checked-out branch, local branches and
//! remotes. Nothing here writes to the repository (not even the index).

use std::path::{Path, PathBuf};

/// A repository detected at startup.
pub struct GitRepo {
    repo: gix::ThreadSafeRepository,
    workdir: PathBuf,
    git_dir: PathBuf,
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
    pub fn discover(start: &Path) -> Result<Self, String> {
        let repo = gix::ThreadSafeRepository::discover(start)
            .map_err(|err| format!("no git repository at or above {}: {err}", start.display()))?;
        let local = repo.to_thread_local();
        let workdir = local
            .workdir()
            .map(Path::to_path_buf)
            .ok_or_else(|| format!("{} is a bare repository", local.git_dir().display()))?;
        let git_dir = local.git_dir().to_path_buf();
        Ok(Self {
            repo,
            workdir,
            git_dir,
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

    /// Whether the repository still exists on disk.
    pub fn exists(&self) -> bool {
        self.git_dir.is_dir()
    }

    /// Read HEAD afresh.
    pub fn head(&self) -> Result<Head, String> {
        let repo = self.repo.to_thread_local();
        match repo.head_name() {
            Ok(Some(name)) => Ok(Head::Branch(name.shorten().to_string())),
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
    pub fn local_branches(&self) -> Result<Vec<String>, String> {
        let repo = self.repo.to_thread_local();
        let platform = repo
            .references()
            .map_err(|err| format!("cannot read references: {err}"))?;
        let iter = platform
            .local_branches()
            .map_err(|err| format!("cannot list local branches: {err}"))?;
        let mut names = Vec::new();
        for reference in iter {
            match reference {
                Ok(reference) => names.push(reference.name().shorten().to_string()),
                Err(err) => tracing::debug!(error = %err, "skipping an unreadable reference"),
            }
        }
        names.sort();
        names.dedup();
        Ok(names)
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
