//! Fixtures for twig-mcp's integration tests: real git repositories in temp dirs, twig state
//! files in twig 0.7's format, an isolated HOME, and the built binary behind an MCP client.
#![allow(dead_code)]

pub mod health;
pub mod mock;

use std::{
    path::{Path, PathBuf},
    process::Command,
};

use mcp_testkit::{McpProcess, Wire};
use serde_json::{Value, json};

pub const BIN: &str = env!("CARGO_BIN_EXE_twig-mcp");

/// Run `git` in `dir` with a fixed identity and no user/system configuration.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "Test")
        .env("GIT_AUTHOR_EMAIL", "test@example.com")
        .env("GIT_COMMITTER_NAME", "Test")
        .env("GIT_COMMITTER_EMAIL", "test@example.com")
        .output()
        .expect("run git");
    assert!(
        output.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).trim().to_string()
}

/// A temp dir holding a HOME (for netrc and the registry) and, usually, a repository.
pub struct Fixture {
    pub dir: tempfile::TempDir,
}

impl Fixture {
    /// An empty fixture: HOME exists, no repository.
    pub fn empty() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(dir.path().join("home")).unwrap();
        std::fs::create_dir_all(dir.path().join("outside")).unwrap();
        Self { dir }
    }

    /// A repository `repo/` on `main` with one commit and the given extra branches.
    pub fn repo(branches: &[&str]) -> Self {
        let fixture = Self::empty();
        let repo = fixture.repo_path();
        std::fs::create_dir_all(&repo).unwrap();
        git(&repo, &["init", "-q", "-b", "main"]);
        std::fs::write(repo.join("README.md"), "hello\n").unwrap();
        git(&repo, &["add", "README.md"]);
        git(&repo, &["commit", "-q", "-m", "initial"]);
        for branch in branches {
            git(&repo, &["branch", branch]);
        }
        fixture
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn repo_path(&self) -> PathBuf {
        self.dir.path().join("repo")
    }

    pub fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    pub fn outside(&self) -> PathBuf {
        self.dir.path().join("outside")
    }

    pub fn git(&self, args: &[&str]) -> String {
        git(&self.repo_path(), args)
    }

    /// Write `.twig/state.json` exactly as twig 0.7 lays it out.
    pub fn write_state(&self, state: &Value) {
        let dir = self.repo_path().join(".twig");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("state.json"),
            serde_json::to_vec_pretty(state).unwrap(),
        )
        .unwrap();
    }

    pub fn write_netrc(&self, content: &str) {
        std::fs::write(self.home().join(".netrc"), content).unwrap();
    }

    /// The environment of a server run: only HOME (and PATH, added by the harness).
    pub fn env(&self) -> Vec<(String, String)> {
        vec![("HOME".into(), self.home().display().to_string())]
    }

    /// Start twig-mcp in the repository with extra args and env.
    pub async fn start(&self, args: &[&str], env: &[(&str, &str)]) -> McpProcess {
        self.start_in(&self.repo_path(), args, env).await
    }

    /// Start twig-mcp in `cwd`.
    pub async fn start_in(&self, cwd: &Path, args: &[&str], env: &[(&str, &str)]) -> McpProcess {
        self.start_over(Wire::Stdio, cwd, args, env).await
    }

    /// Start twig-mcp in `cwd`, reached over `wire` (`Wire::Http` adds `--http 127.0.0.1:0`).
    pub async fn start_over(
        &self,
        wire: Wire,
        cwd: &Path,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> McpProcess {
        let home = self.home().display().to_string();
        let mut all: Vec<(&str, &str)> = vec![("HOME", home.as_str())];
        all.extend_from_slice(env);
        McpProcess::spawn_bin_over(wire, BIN, args, cwd, &all)
            .await
            .unwrap_or_else(|err| panic!("start twig-mcp: {err:#}"))
    }
}

/// A branch entry of `state.json`.
pub fn branch(name: &str, jira: Option<&str>, pr: Option<u32>) -> (String, Value) {
    (
        name.to_string(),
        json!({
            "branch": name,
            "jira_issue": jira,
            "github_pr": pr,
            "created_at": "2026-03-01T10:00:00.123456789+00:00",
        }),
    )
}

/// A whole `state.json` in twig 0.7's layout.
pub fn state(
    branches: Vec<(String, Value)>,
    dependencies: &[(&str, &str)],
    roots: &[(&str, bool)],
    worktrees: Value,
) -> Value {
    let branches: serde_json::Map<String, Value> = branches.into_iter().collect();
    let dependencies: Vec<Value> = dependencies
        .iter()
        .enumerate()
        .map(|(i, (child, parent))| {
            json!({
                "id": format!("5f0c2a3e-1b2c-4d5e-8f90-{i:012}"),
                "child": child,
                "parent": parent,
                "created_at": "2026-03-01T10:00:00+00:00",
            })
        })
        .collect();
    let roots: Vec<Value> = roots
        .iter()
        .enumerate()
        .map(|(i, (name, is_default))| {
            json!({
                "id": format!("9a8b7c6d-0000-4000-8000-{i:012}"),
                "branch": name,
                "is_default": is_default,
                "created_at": "2026-03-01T10:00:00+00:00",
            })
        })
        .collect();
    json!({
        "version": 1,
        "updated_at": "2026-03-02T09:30:00.5+00:00",
        "worktrees": worktrees,
        "branches": branches,
        "dependencies": dependencies,
        "root_branches": roots,
    })
}

/// The standard stacked fixture: main ← feat/auth ← feat/auth-ui, main ← feat/billing, plus
/// an untracked local branch `scratch`.
pub fn stacked() -> Fixture {
    let fixture = Fixture::repo(&["feat/auth", "feat/auth-ui", "feat/billing", "scratch"]);
    fixture.write_state(&state(
        vec![
            branch("feat/auth", Some("PROJ-101"), Some(42)),
            branch("feat/auth-ui", Some("PROJ-102"), None),
            branch("feat/billing", None, Some(7)),
            branch("gone/remote-only", Some("PROJ-9"), None),
        ],
        &[
            ("feat/auth", "main"),
            ("feat/auth-ui", "feat/auth"),
            ("feat/billing", "main"),
        ],
        &[("main", true)],
        json!([{"name": "auth-ui", "path": "/work/wt/auth-ui", "branch": "feat/auth-ui", "created_at": "2026-03-01T10:00:00+00:00"}]),
    ));
    fixture
}
