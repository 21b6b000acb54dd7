//! What every tool handler shares: the repository detected at startup, the cached twig state,
//! settings read from the command line and environment, and the lazily built remote clients.

use std::{
    path::{Path, PathBuf},
    sync::Arc,
    time::Duration,
};

use mcp_common::{CursorKey, ToolError};

use crate::{
    errors,
    git::{GitRepo, Head},
    state::{LoadedState, StateCache, StateError},
};

/// Settings taken from the command line and the environment at startup.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    /// Timeout of each network request.
    pub timeout: Duration,
    pub home: Option<PathBuf>,
    pub xdg_data_home: Option<String>,
    pub github_api_url: Option<String>,
    pub github_token: Option<String>,
    pub gh_token: Option<String>,
    pub jira_host: Option<String>,
}

impl Settings {
    /// Read the environment variables the server honours.
    pub fn from_env(timeout: Duration) -> Self {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        Self {
            timeout,
            home: var("HOME").map(PathBuf::from).or_else(std::env::home_dir),
            xdg_data_home: var("XDG_DATA_HOME"),
            github_api_url: var("GITHUB_API_URL"),
            github_token: var("GITHUB_TOKEN"),
            gh_token: var("GH_TOKEN"),
            jira_host: var("JIRA_HOST"),
        }
    }
}

pub struct ServerContext {
    repo: Option<GitRepo>,
    state: Option<StateCache>,
    pub settings: Settings,
    /// The key that seals the list tools' cursors. One per process, shared by every session
    /// (HTTP serves many): a cursor from one session is good in another, not after a restart.
    pub cursors: CursorKey,
    pub(crate) github: tokio::sync::OnceCell<Arc<crate::remote::github::GitHubClient>>,
    pub(crate) jira: tokio::sync::OnceCell<Arc<crate::remote::jira::JiraClient>>,
}

/// The state file of a working tree.
pub fn state_path(workdir: &Path) -> PathBuf {
    workdir.join(".twig").join("state.json")
}

impl ServerContext {
    /// Detect the repository from `repo` (the `--repo` flag) or else from `cwd`.
    pub fn new(repo: Option<&Path>, cwd: &Path, settings: Settings) -> Self {
        let start = repo.unwrap_or(cwd);
        let repo = match GitRepo::discover(start) {
            Ok(repo) => {
                tracing::info!(workdir = %repo.workdir().display(), "repository detected");
                Some(repo)
            }
            Err(err) => {
                tracing::warn!(%err, "no repository: repository tools will answer no_repo");
                None
            }
        };
        let state = repo
            .as_ref()
            .map(|r| StateCache::new(state_path(r.workdir())));
        Self {
            repo,
            state,
            settings,
            cursors: CursorKey::random(),
            github: tokio::sync::OnceCell::new(),
            jira: tokio::sync::OnceCell::new(),
        }
    }

    /// Drop the commit-graph caches whenever the server becomes idle (they serve a burst of
    /// calls; `mcp_common::memory` then returns the memory to the system).
    pub fn shed_caches_when_idle(self: &Arc<Self>) {
        let context = Arc::downgrade(self);
        mcp_common::memory::on_idle(move || {
            if let Some(repo) = context.upgrade().as_ref().and_then(|c| c.repo.as_ref()) {
                repo.history().clear();
            }
        });
    }

    /// The repository, if one was detected (whether or not it still exists).
    pub fn repo(&self) -> Option<&GitRepo> {
        self.repo.as_ref()
    }

    /// The repository, or the `no_repo` error.
    pub fn require_repo(&self) -> Result<&GitRepo, ToolError> {
        let repo = self.repo.as_ref().ok_or_else(|| {
            ToolError::new(
                errors::NO_REPO,
                "twig-mcp was started outside a git repository",
            )
            .with_hint("Run twig-mcp from within a git repository.")
        })?;
        if !repo.exists() {
            return Err(ToolError::new(
                errors::NO_REPO,
                format!(
                    "The repository at {} no longer exists",
                    repo.workdir().display()
                ),
            )
            .with_hint("Run twig-mcp from within a git repository, or pass `--repo <path>`."));
        }
        Ok(repo)
    }

    /// The twig state, or the `no_twig_state` error naming the cause.
    pub fn require_state(&self) -> Result<Arc<LoadedState>, ToolError> {
        self.require_repo()?;
        let cache = self
            .state
            .as_ref()
            .ok_or_else(|| ToolError::internal("repository detected without a state location"))?;
        cache.load().map_err(|err| {
            let message = match &err {
                StateError::Missing(_) => format!("No twig state found: {err}"),
                _ => format!("Failed to load twig state: {err}"),
            };
            ToolError::new(errors::NO_TWIG_STATE, message)
                .with_hint("Run `twig init` in this repository first.")
        })
    }

    /// The twig state when it can be loaded (for tools that degrade without it).
    pub fn try_state(&self) -> Option<Arc<LoadedState>> {
        self.state.as_ref().and_then(|cache| cache.load().ok())
    }

    /// The checked-out branch; `Ok(None)` when HEAD is detached.
    pub fn current_branch(&self) -> Result<Option<String>, ToolError> {
        let repo = self.require_repo()?;
        match repo.head() {
            Ok(Head::Branch(name)) => Ok(Some(name)),
            Ok(Head::Detached) => Ok(None),
            Err(err) => Err(ToolError::internal(err)),
        }
    }

    /// Where the state file of the detected repository lives.
    pub fn state_file(&self) -> Option<&Path> {
        self.state.as_ref().map(StateCache::path)
    }
}
