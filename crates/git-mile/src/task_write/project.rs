//! What upstream git-mile reads from a repository's `.git-mile/config.toml` before it writes a
//! task (`git-mile-app`'s `ProjectConfig`), read the same way:
//!
//! - the workflow: the states a task may be in, each with an optional kind, and the state a
//!   new task starts in. Without the file, or without a `[workflow]` table in it, upstream's
//!   built-in workflow (`state/todo` (todo, the default), `state/in-progress` (in_progress),
//!   `state/done` (done)); a `[workflow]` table without `states` leaves states unrestricted
//!   and without kinds;
//! - the hooks: scripts in `.git-mile/hooks/` (or `[hooks] hooks_dir`) upstream runs around
//!   each event it writes. This version runs no script of the repository's: a write that
//!   upstream would hand to one is refused, so that no hook of the team's is skipped in
//!   silence.
//!
//! The file is read from the working tree (for a bare repository, the directory that holds
//! it), as upstream does.

use std::path::{Path, PathBuf};

use serde::Deserialize;

/// Upstream's state kinds (`git-mile-core`'s `StateKind`): an event naming another cannot be
/// read by upstream.
pub const KINDS: [&str; 5] = ["done", "in_progress", "blocked", "todo", "backlog"];

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct WorkflowState {
    pub value: String,
    #[serde(default)]
    pub label: Option<String>,
    #[serde(default)]
    pub kind: Option<Kind>,
}

/// A state kind, as upstream's config accepts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Done,
    InProgress,
    Blocked,
    Todo,
    Backlog,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Done => "done",
            Kind::InProgress => "in_progress",
            Kind::Blocked => "blocked",
            Kind::Todo => "todo",
            Kind::Backlog => "backlog",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Workflow {
    #[serde(default)]
    pub states: Vec<WorkflowState>,
    #[serde(default)]
    pub default_state: Option<String>,
}

impl Default for Workflow {
    fn default() -> Self {
        let state = |value: &str, label: &str, kind| WorkflowState {
            value: value.into(),
            label: Some(label.into()),
            kind: Some(kind),
        };
        Self {
            states: vec![
                state("state/todo", "Todo", Kind::Todo),
                state("state/in-progress", "In Progress", Kind::InProgress),
                state("state/done", "Done", Kind::Done),
            ],
            default_state: Some("state/todo".into()),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct Hooks {
    pub enabled: bool,
    pub disabled: Vec<String>,
    pub timeout: u64,
    pub async_post_hooks: bool,
    pub hooks_dir: PathBuf,
}

impl Default for Hooks {
    fn default() -> Self {
        Self {
            enabled: true,
            disabled: Vec::new(),
            timeout: 30,
            async_post_hooks: true,
            hooks_dir: PathBuf::from("hooks"),
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct Project {
    #[serde(default)]
    pub workflow: Workflow,
    #[serde(default)]
    pub hooks: Hooks,
    /// `.git-mile/` of the working tree (where the hooks are).
    #[serde(skip)]
    pub base: PathBuf,
}

/// Why the configuration cannot be used: what upstream would say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError(pub String);

impl Project {
    /// The configuration of the repository whose working tree is `workdir`.
    pub fn load(workdir: &Path) -> Result<Self, ConfigError> {
        let base = workdir.join(".git-mile");
        let path = base.join("config.toml");
        let mut project = if path.exists() {
            let text = std::fs::read_to_string(&path)
                .map_err(|e| ConfigError(format!("{} cannot be read: {e}", path.display())))?;
            let project: Project = toml::from_str(&text).map_err(|e| {
                ConfigError(format!(
                    "{} does not parse as upstream git-mile reads it: {}",
                    path.display(),
                    crate::quote::excerpt(&e.to_string())
                ))
            })?;
            project
                .workflow
                .check()
                .map_err(|why| ConfigError(format!("{}: {why}", path.display())))?;
            project
        } else {
            Project::default()
        };
        project.base = base;
        Ok(project)
    }

    /// The hook scripts upstream would run for events of these `names` (upstream's
    /// `HookKind` script names, `pre-event` and `post-event` added), that exist.
    pub fn hooks_for(&self, names: &[&str]) -> Vec<PathBuf> {
        if !self.hooks.enabled {
            return Vec::new();
        }
        let dir = self.base.join(&self.hooks.hooks_dir);
        let mut all: Vec<&str> = vec!["pre-event", "post-event"];
        all.extend_from_slice(names);
        all.sort_unstable();
        all.dedup();
        all.into_iter()
            .filter(|name| !self.hooks.disabled.iter().any(|d| d == name))
            .map(|name| dir.join(name))
            .filter(|path| path.exists())
            .collect()
    }
}

impl Workflow {
    /// Upstream's checks of a configured workflow: unique states, a default among them.
    fn check(&self) -> Result<(), String> {
        let mut seen = std::collections::HashSet::new();
        for state in &self.states {
            if !seen.insert(state.value.as_str()) {
                return Err(format!("duplicate workflow state {}", state.value));
            }
        }
        if let Some(default) = &self.default_state {
            if default.trim().is_empty() {
                return Err("default workflow state must not be empty".into());
            }
            if self.restricted() && self.find(default).is_none() {
                return Err(format!(
                    "default workflow state '{default}' is not defined in workflow configuration"
                ));
            }
        }
        Ok(())
    }

    /// Whether only the listed states are allowed.
    pub fn restricted(&self) -> bool {
        !self.states.is_empty()
    }

    pub fn find(&self, value: &str) -> Option<&WorkflowState> {
        self.states.iter().find(|s| s.value == value)
    }

    /// Whether upstream accepts `state`.
    pub fn allows(&self, state: &str) -> bool {
        !self.restricted() || self.find(state).is_some()
    }

    /// The kind upstream writes with `state`: the configured one, none otherwise.
    pub fn kind_of(&self, state: &str) -> Option<&'static str> {
        self.find(state).and_then(|s| s.kind).map(Kind::as_str)
    }

    /// The states and the default, as a task listing names them.
    pub fn names(&self) -> crate::task::states::Workflow {
        crate::task::states::Workflow {
            states: self
                .states
                .iter()
                .map(|s| (s.value.clone(), s.kind.map(|k| k.as_str().to_string())))
                .collect(),
            default: self.default_state.clone(),
        }
    }

    /// The states, as upstream's messages list them: `value (label)`.
    pub fn describe(&self) -> String {
        self.states
            .iter()
            .map(|s| match s.label.as_deref() {
                Some(label) if label != s.value => format!("{} ({label})", s.value),
                _ => s.value.clone(),
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(config: Option<&str>) -> Result<Project, ConfigError> {
        let dir = tempfile::tempdir().unwrap();
        if let Some(config) = config {
            std::fs::create_dir_all(dir.path().join(".git-mile")).unwrap();
            std::fs::write(dir.path().join(".git-mile/config.toml"), config).unwrap();
        }
        Project::load(dir.path())
    }

    #[test]
    fn upstreams_workflow_rules() {
        let builtin = load(None).unwrap().workflow;
        assert_eq!(builtin.default_state.as_deref(), Some("state/todo"));
        assert!(builtin.allows("state/done") && !builtin.allows("state/review"));
        assert_eq!(builtin.kind_of("state/in-progress"), Some("in_progress"));
        // A file without [workflow]: the built-in one.
        assert_eq!(
            load(Some("[hooks]\nenabled = false\n")).unwrap().workflow,
            builtin
        );
        // [workflow] without states: anything goes, no kinds, no default.
        let open = load(Some("[workflow]\n")).unwrap().workflow;
        assert!(open.allows("state/anything"));
        assert_eq!(open.kind_of("state/todo"), None);
        assert_eq!(open.default_state, None);
        let custom = load(Some(
            "[workflow]\nstates = [{ value = \"s/review\", label = \"Review\", kind = \"blocked\" }, { value = \"s/x\" }]\ndefault_state = \"s/x\"\n",
        ))
        .unwrap()
        .workflow;
        assert_eq!(custom.kind_of("s/review"), Some("blocked"));
        assert_eq!(custom.describe(), "s/review (Review), s/x");
        // What upstream refuses to start with.
        for bad in [
            "[workflow]\nstates = [{ value = \"a\", kind = \"finished\" }]\n",
            "[workflow]\nstates = [{ value = \"a\" }, { value = \"a\" }]\n",
            "[workflow]\nstates = [{ value = \"a\" }]\ndefault_state = \"b\"\n",
            "not toml [",
        ] {
            assert!(load(Some(bad)).is_err(), "{bad}");
        }
    }
}
