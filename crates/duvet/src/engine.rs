//! The live project: the configuration and [`Model`] of the files as they are now.
//!
//! A watcher bumps a generation counter on every change under the watched directories; a
//! snapshot is current only if it was built at the latest generation. A request that finds
//! no current snapshot waits for the one rebuild in progress (only changed files are parsed
//! again, see [`FileCache`]), so every request answers from the files as they were when it
//! arrived or later. The configuration is read again on each rebuild, so edits to
//! `.duvet/config.toml` (or its creation) take effect too.
//!
//! Every change is also published on a [`tokio::sync::watch`] channel ([`Engine::changes`]),
//! which resource subscriptions follow to tell clients that what they read is out of date.

use std::{
    collections::HashSet,
    path::{Path, PathBuf},
    sync::{
        Arc, Mutex,
        atomic::{AtomicU64, Ordering},
    },
};

use mcp_common::ToolError;
use notify::{EventKind, RecursiveMode, Watcher};

use crate::{
    config::{self, Flags, ProjectConfig},
    execution::view::{Coverage, CoverageSettings},
    model::Model,
    project::{self, FileCache},
};

/// What a coverage answer was computed from: the snapshot and each report file's version.
type CoverageKey = (usize, Vec<(PathBuf, Option<std::time::SystemTime>, u64)>);

/// A configuration and the model built from it.
pub struct Snapshot {
    pub config: ProjectConfig,
    pub model: Model,
}

/// A build: the snapshot, or why there is no project.
type Built = Result<Arc<Snapshot>, String>;

pub struct Engine {
    root: PathBuf,
    flags: Flags,
    cache: FileCache,
    /// The latest build and the generation it was started at.
    latest: Mutex<Option<(u64, Built)>>,
    generation: Arc<AtomicU64>,
    /// The generation, published for whoever follows changes (see [`Engine::changes`]).
    changes: Arc<tokio::sync::watch::Sender<u64>>,
    build: tokio::sync::Mutex<()>,
    watcher: Mutex<Option<notify::RecommendedWatcher>>,
    /// Directories watched recursively, and non-recursively.
    watched: Mutex<(HashSet<PathBuf>, HashSet<PathBuf>)>,
    /// The coverage reports to read (`--coverage-report`), if any.
    coverage_settings: Option<CoverageSettings>,
    /// The latest coverage answer, while its snapshot and reports are unchanged.
    coverage: Mutex<Option<(CoverageKey, Arc<Coverage>)>>,
}

fn no_project(reason: &str) -> ToolError {
    ToolError::new(crate::errors::NO_PROJECT, reason.to_string()).with_hint(
        "Start `duvet mcp` in the project's root (the directory holding .duvet/config.toml), or give it --root DIR or --config FILE, or describe a legacy project with --spec-pattern and --source-pattern (see `duvet mcp --help`).",
    )
}

impl Engine {
    /// An engine for the project at `root` described by `flags` (and the config file).
    pub fn new(root: PathBuf, flags: Flags) -> Arc<Self> {
        Self::with_coverage(root, flags, None)
    }

    /// An engine that also reads the coverage reports `coverage` names.
    pub fn with_coverage(
        root: PathBuf,
        flags: Flags,
        coverage: Option<CoverageSettings>,
    ) -> Arc<Self> {
        let engine = Arc::new(Self {
            root,
            flags,
            cache: FileCache::default(),
            latest: Mutex::new(None),
            generation: Arc::new(AtomicU64::new(1)),
            changes: Arc::new(tokio::sync::watch::Sender::new(1)),
            build: tokio::sync::Mutex::new(()),
            watcher: Mutex::new(None),
            watched: Mutex::new((HashSet::new(), HashSet::new())),
            coverage_settings: coverage,
            coverage: Mutex::new(None),
        });
        engine.start_watcher();
        engine
    }

    /// The project as it is now.
    pub async fn snapshot(self: &Arc<Self>) -> Result<Arc<Snapshot>, ToolError> {
        if let Some(current) = self.current() {
            return current.map_err(|reason| no_project(&reason));
        }
        let _guard = self.build.lock().await;
        if let Some(current) = self.current() {
            return current.map_err(|reason| no_project(&reason));
        }
        // The generation this build reflects: a change from now on makes it stale.
        let generation = self.generation.load(Ordering::SeqCst);
        let engine = self.clone();
        let built = tokio::task::spawn_blocking(move || engine.rebuild())
            .await
            .map_err(|err| ToolError::internal(format!("the analysis failed: {err}")))?;
        if let Ok(mut latest) = self.latest.lock() {
            *latest = Some((generation, built.clone()));
        }
        built.map_err(|reason| no_project(&reason))
    }

    /// Whether coverage reports are configured.
    pub fn has_coverage(&self) -> bool {
        self.coverage_settings.is_some()
    }

    /// The executed state of `snapshot`'s citations in the configured coverage reports, read
    /// again when a report changes. Without reports configured, or when they cannot be read,
    /// an error says what to do.
    pub async fn coverage(
        self: &Arc<Self>,
        snapshot: &Arc<Snapshot>,
    ) -> Result<Arc<Coverage>, ToolError> {
        let Some(settings) = self.coverage_settings.clone() else {
            return Err(ToolError::new(
                crate::errors::NO_COVERAGE,
                "No coverage report is configured".to_string(),
            )
            .with_hint("Start `duvet mcp` with --coverage-report PATH (LCOV or, with --coverage-format jacoco-xml, JaCoCo XML), e.g. the lcov.info that `cargo llvm-cov --lcov` or `cargo tarpaulin --out Lcov` writes."));
        };
        let engine = self.clone();
        let snapshot = snapshot.clone();
        tokio::task::spawn_blocking(move || engine.coverage_now(&settings, &snapshot))
            .await
            .map_err(|err| ToolError::internal(format!("reading coverage failed: {err}")))?
    }

    fn coverage_now(
        &self,
        settings: &CoverageSettings,
        snapshot: &Arc<Snapshot>,
    ) -> Result<Arc<Coverage>, ToolError> {
        let missing = |message: String| {
            ToolError::new(crate::errors::NO_COVERAGE, message).with_hint(
                "Run the tests with coverage (e.g. `cargo tarpaulin --out Lcov`), or fix --coverage-report to name the report they write.",
            )
        };
        let unreadable = |message: String| {
            ToolError::new(crate::errors::COVERAGE_UNREADABLE, message).with_hint(
                "Try again once the test run writing the report has finished; if it persists, check --coverage-format.",
            )
        };
        let files = settings.files(&self.root).map_err(missing)?;
        let key: CoverageKey = (
            Arc::as_ptr(snapshot) as usize,
            files
                .iter()
                .map(|f| {
                    let meta = std::fs::metadata(f).ok();
                    let modified = meta.as_ref().and_then(|m| m.modified().ok());
                    (f.clone(), modified, meta.map_or(0, |m| m.len()))
                })
                .collect(),
        );
        if let Ok(cached) = self.coverage.lock()
            && let Some((cached_key, coverage)) = cached.as_ref()
            && *cached_key == key
        {
            return Ok(coverage.clone());
        }
        let reports = files
            .iter()
            .map(|f| crate::execution::reports::read(f, settings.format).map(|r| (f.clone(), r)))
            .collect::<Result<Vec<_>, _>>()
            .map_err(unreadable)?;
        let coverage = Arc::new(
            Coverage::build(&snapshot.model, &snapshot.config.root, &reports).map_err(missing)?,
        );
        if let Ok(mut cached) = self.coverage.lock() {
            *cached = Some((key, coverage.clone()));
        }
        Ok(coverage)
    }

    /// Follow the project's changes: the receiver sees a new value each time a file under
    /// the watched directories changes (the model is then rebuilt on the next request).
    /// Its current value counts as seen.
    pub fn changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.changes.subscribe()
    }

    /// The latest build if nothing changed since it started.
    fn current(&self) -> Option<Built> {
        let latest = self.latest.lock().ok()?;
        let (generation, built) = latest.as_ref()?;
        (*generation == self.generation.load(Ordering::SeqCst)).then(|| built.clone())
    }

    /// Read the configuration and the files (on a blocking thread).
    fn rebuild(&self) -> Built {
        let started = std::time::Instant::now();
        let config = match config::load(&self.root, &self.flags) {
            Ok(config) => config,
            Err(err) => {
                // Watch for a config file to appear.
                self.watch(&self.root, false);
                self.watch(&self.root.join(".duvet"), true);
                return Err(err.to_string());
            }
        };
        // Watch before reading, so that a change during the read is not missed.
        for (dir, recursive) in project::watch_roots(&config) {
            self.watch(&dir, recursive);
        }
        let model = project::build(&config, &self.cache);
        for spec in &model.specs {
            if let Some(dir) = spec.file.parent() {
                self.watch(dir, false);
            }
        }
        tracing::info!(
            elapsed_ms = started.elapsed().as_millis() as u64,
            specs = model.specs.len(),
            requirements = model.requirements.len(),
            citations = model.citations.len(),
            "project analysed"
        );
        Ok(Arc::new(Snapshot { config, model }))
    }

    fn start_watcher(&self) {
        let generation = self.generation.clone();
        let changes = self.changes.clone();
        let watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
            let relevant = match event {
                Ok(event) => {
                    !matches!(event.kind, EventKind::Access(_))
                        && event
                            .paths
                            .iter()
                            .any(|p| !p.components().any(|c| c.as_os_str() == ".git"))
                }
                // Lost events (queue overflow): assume anything changed.
                Err(_) => true,
            };
            if relevant {
                let now = generation.fetch_add(1, Ordering::SeqCst) + 1;
                changes.send_replace(now);
            }
        });
        match watcher {
            Ok(watcher) => {
                if let Ok(mut slot) = self.watcher.lock() {
                    *slot = Some(watcher);
                }
            }
            Err(err) => {
                tracing::warn!(%err, "cannot watch the project; changes are seen after a restart")
            }
        }
    }

    /// Watch `dir`; a directory that does not exist yet is watched through its nearest
    /// existing ancestor (non-recursively), so that its creation is noticed.
    fn watch(&self, dir: &Path, recursive: bool) {
        let (dir, recursive) = if dir.is_dir() {
            (dir.to_path_buf(), recursive)
        } else {
            match dir.ancestors().skip(1).find(|a| a.is_dir()) {
                Some(existing) if existing.starts_with(&self.root) => {
                    (existing.to_path_buf(), false)
                }
                _ => return,
            }
        };
        let (Ok(mut watched), Ok(mut watcher)) = (self.watched.lock(), self.watcher.lock()) else {
            return;
        };
        let Some(watcher) = watcher.as_mut() else {
            return;
        };
        let (deep, shallow) = &mut *watched;
        if deep.iter().any(|w| dir.starts_with(w)) || (!recursive && shallow.contains(&dir)) {
            return;
        }
        let mode = if recursive {
            RecursiveMode::Recursive
        } else {
            RecursiveMode::NonRecursive
        };
        match watcher.watch(&dir, mode) {
            Ok(()) => {
                if recursive {
                    deep.insert(dir);
                } else {
                    shallow.insert(dir);
                }
            }
            Err(err) => tracing::warn!(%err, dir = %dir.display(), "cannot watch"),
        }
    }
}
