//! Resource subscriptions: `.twig/state.json`, the checked-out branch (git's `HEAD`) and the
//! branches (`refs/heads`, recursively, and `packed-refs`) are watched with the operating
//! system's file notifications (inotify; no polling), and each change tells subscribers that
//! the repository-wide resources (`twig://repo/tree`, `…/branches`, `…/health`) were updated.
//!
//! Two client generations are served: the legacy `resources/subscribe` request (protocol
//! versions up to 2025-11-25) and `subscriptions/listen` (2026-07-28).
//! The watcher starts with the first subscription, so a server nobody subscribes to watches
//! nothing.
//!
//! One [`Subscriptions`] (the watcher and the stream of changes) serves the whole process;
//! each client session (one over stdio, any number over HTTP) keeps its own legacy
//! subscriptions in a [`SessionSubscriptions`] and is told through its own peer, as each `listen`
//! stream is through its own sink.

use std::{
    path::{Path, PathBuf},
    sync::{Arc, Mutex},
    time::Duration,
};

use mcp_common::subscribe::{self, SessionSubscriptions};
use notify::{EventKind, RecursiveMode, Watcher};
use rmcp::{
    RoleServer,
    service::{Peer, SubscriptionContext},
};
use tokio::sync::{broadcast, mpsc};

use crate::{context::ServerContext, resources};

/// Changes closer together than this are announced once.
const DEBOUNCE: Duration = Duration::from_millis(50);

enum Signal {
    Changed,
    TwigDirAppeared,
}

#[derive(Default)]
struct Inner {
    watcher: Option<notify::RecommendedWatcher>,
}

pub struct Subscriptions {
    ctx: Arc<ServerContext>,
    inner: Arc<Mutex<Inner>>,
    changes: broadcast::Sender<()>,
}

/// The files whose changes are announced, and the directories watched to see them.
struct Watched {
    workdir: PathBuf,
    twig_dir: PathBuf,
    state_file: PathBuf,
    head_file: PathBuf,
    /// `refs/heads`: a branch made, moved or deleted.
    heads_dir: PathBuf,
    packed_refs: PathBuf,
}

impl Watched {
    fn classify(&self, path: &Path) -> Option<Signal> {
        // Git writes `X.lock`, then renames it to `X`: the rename is the change.
        let lock = path.extension().is_some_and(|ext| ext == "lock");
        if path == self.state_file
            || path == self.head_file
            || path == self.packed_refs
            || (!lock && path.starts_with(&self.heads_dir))
        {
            Some(Signal::Changed)
        } else if path == self.twig_dir {
            Some(Signal::TwigDirAppeared)
        } else {
            None
        }
    }
}

impl Subscriptions {
    pub fn new(ctx: Arc<ServerContext>) -> Self {
        let (changes, _) = broadcast::channel(16);
        Self {
            ctx,
            inner: Arc::new(Mutex::new(Inner::default())),
            changes,
        }
    }

    fn lock(&self) -> Result<std::sync::MutexGuard<'_, Inner>, String> {
        self.inner
            .lock()
            .map_err(|_| "subscription state is poisoned".to_string())
    }

    /// Start watching, once. Without a repository there is nothing to watch, and the
    /// subscription simply never fires.
    pub fn ensure_watcher(&self) -> Result<(), String> {
        let mut inner = self.lock()?;
        if inner.watcher.is_some() {
            return Ok(());
        }
        let (Some(repo), Some(state_file)) = (self.ctx.repo(), self.ctx.state_file()) else {
            return Ok(());
        };
        let (heads_dir, packed_refs) = repo.refs_paths();
        let watched = Arc::new(Watched {
            workdir: repo.workdir().to_path_buf(),
            twig_dir: state_file
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_default(),
            state_file: state_file.to_path_buf(),
            head_file: repo.head_file(),
            heads_dir,
            packed_refs,
        });
        let (tx, rx) = mpsc::unbounded_channel();
        let filter = watched.clone();
        let mut watcher =
            notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
                let Ok(event) = event else { return };
                if matches!(event.kind, EventKind::Access(_) | EventKind::Other) {
                    return;
                }
                for path in &event.paths {
                    if let Some(signal) = filter.classify(path) {
                        let _ = tx.send(signal);
                    }
                }
            })
            .map_err(|err| format!("cannot start the file watcher: {err}"))?;
        watcher
            .watch(&watched.workdir, RecursiveMode::NonRecursive)
            .map_err(|err| format!("cannot watch {}: {err}", watched.workdir.display()))?;
        if let Some(git_dir) = watched.head_file.parent() {
            watcher
                .watch(git_dir, RecursiveMode::NonRecursive)
                .map_err(|err| format!("cannot watch {}: {err}", git_dir.display()))?;
        }
        if watched.twig_dir.is_dir()
            && let Err(err) = watcher.watch(&watched.twig_dir, RecursiveMode::NonRecursive)
        {
            tracing::warn!(%err, "cannot watch the .twig directory");
        }
        // The branches: changes to them update the tree and the health. In a linked
        // worktree they live in the main repository's directory.
        if let Some(common) = watched.packed_refs.parent()
            && watched.head_file.parent() != Some(common)
            && let Err(err) = watcher.watch(common, RecursiveMode::NonRecursive)
        {
            tracing::warn!(%err, "cannot watch the repository's common directory");
        }
        if let Err(err) = watcher.watch(&watched.heads_dir, RecursiveMode::Recursive) {
            tracing::warn!(%err, "cannot watch the branches (refs/heads)");
        }
        inner.watcher = Some(watcher);
        drop(inner);
        tokio::spawn(debounce(
            rx,
            self.changes.clone(),
            self.inner.clone(),
            watched,
        ));
        tracing::debug!("file watcher started");
        Ok(())
    }

    /// Subscribe `session` to `uri`; changes reach it through `peer`. The forwarding task
    /// ends when the session is dropped or its client is gone.
    pub fn subscribe_legacy(
        &self,
        session: &Arc<SessionSubscriptions>,
        uri: String,
        peer: Peer<RoleServer>,
    ) -> Result<(), String> {
        self.ensure_watcher()?;
        let Some(mut stopped) = session.accept(uri, peer)? else {
            return Ok(());
        };
        let mut changes = self.changes.subscribe();
        let session = Arc::downgrade(session);
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    _ = &mut stopped => break,
                    received = changes.recv() => {
                        if matches!(received, Err(broadcast::error::RecvError::Closed)) {
                            break;
                        }
                    }
                }
                let Some(session) = session.upgrade() else {
                    break;
                };
                if !session.notify().await {
                    break;
                }
            }
            tracing::debug!("legacy subscription forwarding ended");
        });
        Ok(())
    }

    pub fn unsubscribe_legacy(&self, session: &SessionSubscriptions, uri: &str) {
        session.remove(uri);
    }

    /// Serve one `subscriptions/listen` stream until the client cancels it.
    pub async fn listen(&self, context: SubscriptionContext) -> Result<(), String> {
        let uris =
            subscribe::listened_uris(&context, |uri| resources::check_subscribable(uri).is_ok());
        if uris.is_empty() {
            context.cancelled().await;
            return Ok(());
        }
        self.ensure_watcher()?;
        let mut changes = self.changes.subscribe();
        loop {
            tokio::select! {
                _ = context.cancelled() => return Ok(()),
                received = changes.recv() => {
                    if matches!(received, Err(broadcast::error::RecvError::Closed))
                        || !subscribe::notify_listener(&context, &uris).await
                    {
                        return Ok(());
                    }
                }
            }
        }
    }
}

/// Coalesce bursts of file events into one announcement; start watching `.twig` when it
/// appears after the watcher started.
async fn debounce(
    mut rx: mpsc::UnboundedReceiver<Signal>,
    changes: broadcast::Sender<()>,
    inner: Arc<Mutex<Inner>>,
    watched: Arc<Watched>,
) {
    while let Some(first) = rx.recv().await {
        let mut twig_dir_appeared = matches!(first, Signal::TwigDirAppeared);
        tokio::time::sleep(DEBOUNCE).await;
        while let Ok(signal) = rx.try_recv() {
            twig_dir_appeared |= matches!(signal, Signal::TwigDirAppeared);
        }
        if twig_dir_appeared
            && watched.twig_dir.is_dir()
            && let Ok(mut guard) = inner.lock()
            && let Some(watcher) = guard.watcher.as_mut()
            && let Err(err) = watcher.watch(&watched.twig_dir, RecursiveMode::NonRecursive)
        {
            tracing::warn!(%err, "cannot watch the .twig directory");
        }
        tracing::debug!("twig state or HEAD changed");
        let _ = changes.send(());
    }
}
