//! The live project: the current [`Model`], rebuilt on the next request after a watched file
//! changes (only changed files are parsed again, see [`FileCache`]).

use std::{
    collections::HashSet,
    path::{Path, PathBuf},
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, Ordering},
    },
};

use mcp_common::{ErrorCode, ToolError};
use notify::{EventKind, RecursiveMode, Watcher};

use crate::{
    config::ProjectConfig,
    model::Model,
    project::{self, FileCache},
};

pub struct Engine {
    project: Result<ProjectConfig, String>,
    cache: FileCache,
    model: Mutex<Option<Arc<Model>>>,
    dirty: Arc<AtomicBool>,
    build: tokio::sync::Mutex<()>,
    watcher: Mutex<Option<notify::RecommendedWatcher>>,
    /// Directories watched so far (the specification files' directories are added as the
    /// model names them).
    watched: Mutex<HashSet<PathBuf>>,
}

impl Engine {
    /// An engine for the project `config` (or for the reason there is none).
    pub fn new(project: Result<ProjectConfig, String>) -> Arc<Self> {
        let engine = Arc::new(Self {
            project,
            cache: FileCache::default(),
            model: Mutex::new(None),
            dirty: Arc::new(AtomicBool::new(true)),
            build: tokio::sync::Mutex::new(()),
            watcher: Mutex::new(None),
            watched: Mutex::new(HashSet::new()),
        });
        engine.start_watching();
        engine
    }

    pub fn config(&self) -> Result<&ProjectConfig, ToolError> {
        self.project.as_ref().map_err(|reason| {
            ToolError::new(ErrorCode::NoProject, reason.clone()).with_hint(
                "Run `duvet mcp` in a project with .duvet/config.toml, or pass --spec-pattern and --source-pattern (see `duvet mcp --help`).",
            )
        })
    }

    /// The model of the files as they are now.
    pub async fn model(self: &Arc<Self>) -> Result<Arc<Model>, ToolError> {
        self.config()?;
        if let Some(model) = self.current() {
            return Ok(model);
        }
        let _guard = self.build.lock().await;
        if let Some(model) = self.current() {
            return Ok(model);
        }
        // Clear first: a change during the build marks the model dirty again.
        self.dirty.store(false, Ordering::SeqCst);
        let engine = self.clone();
        let model = tokio::task::spawn_blocking(move || {
            let started = std::time::Instant::now();
            let model = match &engine.project {
                Ok(config) => project::build(config, &engine.cache),
                Err(_) => Model::default(),
            };
            tracing::info!(
                elapsed_ms = started.elapsed().as_millis() as u64,
                specs = model.specs.len(),
                requirements = model.requirements.len(),
                citations = model.citations.len(),
                "project analysed"
            );
            Arc::new(model)
        })
        .await
        .map_err(|err| ToolError::internal(format!("the analysis failed: {err}")))?;
        self.watch_spec_dirs(&model);
        if let Ok(mut slot) = self.model.lock() {
            *slot = Some(model.clone());
        }
        Ok(model)
    }

    /// The built model if it is still current.
    fn current(&self) -> Option<Arc<Model>> {
        if self.dirty.load(Ordering::SeqCst) {
            return None;
        }
        self.model.lock().ok().and_then(|m| m.clone())
    }

    /// Watch the directories the project reads from; any change there marks the model dirty.
    fn start_watching(&self) {
        let Ok(config) = &self.project else { return };
        let dirty = self.dirty.clone();
        let watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
            let Ok(event) = event else {
                dirty.store(true, Ordering::SeqCst);
                return;
            };
            if matches!(event.kind, EventKind::Access(_)) {
                return;
            }
            let relevant = event
                .paths
                .iter()
                .any(|p| !p.components().any(|c| c.as_os_str() == ".git"));
            if relevant {
                dirty.store(true, Ordering::SeqCst);
            }
        });
        let mut watcher = match watcher {
            Ok(watcher) => watcher,
            Err(err) => {
                tracing::warn!(%err, "cannot watch the project; changes are seen after a restart");
                return;
            }
        };
        for (dir, recursive) in project::watch_roots(config) {
            self.watch(&mut watcher, &dir, recursive);
        }
        if let Ok(mut slot) = self.watcher.lock() {
            *slot = Some(watcher);
        }
    }

    fn watch(&self, watcher: &mut notify::RecommendedWatcher, dir: &Path, recursive: bool) {
        if !dir.is_dir() {
            return;
        }
        let Ok(mut watched) = self.watched.lock() else {
            return;
        };
        if watched.iter().any(|w| dir.starts_with(w)) {
            return;
        }
        let mode = if recursive {
            RecursiveMode::Recursive
        } else {
            RecursiveMode::NonRecursive
        };
        match watcher.watch(dir, mode) {
            Ok(()) => {
                if recursive {
                    watched.insert(dir.to_path_buf());
                }
            }
            Err(err) => tracing::warn!(%err, dir = %dir.display(), "cannot watch"),
        }
    }

    /// Specification files can live anywhere in the project: watch their directories too.
    fn watch_spec_dirs(&self, model: &Model) {
        let Ok(mut slot) = self.watcher.lock() else {
            return;
        };
        let Some(watcher) = slot.as_mut() else { return };
        let dirs: HashSet<PathBuf> = model
            .specs
            .iter()
            .filter_map(|s| s.file.parent().map(Path::to_path_buf))
            .collect();
        for dir in dirs {
            self.watch(watcher, &dir, true);
        }
    }
}
