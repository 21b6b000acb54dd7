//! Which task refs changed since the last scan, without reading them all: reading 10,000
//! loose ref files costs tens of milliseconds, which every listing (of issues too: they name
//! the task refs) would pay. As the catalog's tracker does for issues and milestones
//! (`crate::tracking`), the kernel tells (inotify, on Linux): `refs/git-mile/tasks/`,
//! `refs/git-mile/` itself and the git directory (for `packed-refs`) are watched from before
//! the first scan. A ref update renames a lock file over the ref inside the writer's `rename`
//! call, which queues the event before the call returns, so every write that finished before
//! a look is in the queue the look drains. An overflowing queue, a change of `packed-refs`,
//! an entry of `refs/git-mile/` other than `issue`, `milestone` and `tasks` appearing or
//! going, a file of `tasks/` that is no task id (nor a lock file), or the directory going
//! away, means "scan everything". Elsewhere, or without inotify (its limits, or
//! `GIT_MILE_NO_INOTIFY`), every look is "everything", as before.

use std::path::{Path, PathBuf};

/// The namespace of upstream git-mile's tasks under `refs/git-mile/` (a directory watched).
pub const TASKS: &str = "tasks";

/// What a look found.
#[derive(Debug, PartialEq, Eq)]
pub enum TaskLook {
    Unchanged,
    /// Only the task refs of these ids (file names in `refs/git-mile/tasks/`) may have
    /// changed.
    Changed(Vec<String>),
    Everything,
}

/// The watch, or none (every look is everything).
pub struct TaskWatch {
    #[cfg(target_os = "linux")]
    inner: Option<linux::Inner>,
}

impl TaskWatch {
    /// A watch of `git_dir`'s task refs; make it before scanning (its first look is
    /// [`TaskLook::Everything`]).
    pub fn new(git_dir: &Path) -> Self {
        #[cfg(target_os = "linux")]
        {
            let inner = match std::env::var_os("GIT_MILE_NO_INOTIFY") {
                Some(_) => None,
                None => linux::Inner::new(git_dir)
                    .map_err(|err| tracing::debug!(%err, "no inotify watch of task refs"))
                    .ok(),
            };
            Self { inner }
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = git_dir;
            Self {}
        }
    }

    pub fn look(&mut self) -> TaskLook {
        #[cfg(target_os = "linux")]
        if let Some(inner) = &mut self.inner {
            return inner.look();
        }
        TaskLook::Everything
    }
}

/// Whether a look may be trusted for what a full scan found: nothing under `refs/git-mile/`
/// but `issue/`, `milestone/` and `tasks/`, and in `tasks/` files only (changes deeper than
/// the watched directories are not told).
pub fn simple_layout(git_dir: &Path) -> bool {
    let top = git_dir.join("refs").join("git-mile");
    let Ok(entries) = std::fs::read_dir(&top) else {
        return true;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        match name.to_str() {
            Some("issue" | "milestone") => {}
            Some("tasks") => {
                let Ok(tasks) = std::fs::read_dir(entry.path()) else {
                    return false;
                };
                if tasks
                    .flatten()
                    .any(|e| e.file_type().map_or(true, |t| t.is_dir()))
                {
                    return false;
                }
            }
            _ => return false,
        }
    }
    true
}

#[cfg(target_os = "linux")]
mod linux {
    use super::*;
    use crate::ref_watch::{self, inode};
    use inotify::{Inotify, WatchDescriptor};

    pub struct Inner {
        inotify: Inotify,
        git_dir: PathBuf,
        git_wd: WatchDescriptor,
        /// `refs/git-mile/` and `refs/git-mile/tasks/`, when watched, with the inode each
        /// was watched at.
        top: Option<(WatchDescriptor, Option<u64>)>,
        tasks: Option<(WatchDescriptor, Option<u64>)>,
        fresh: bool,
        buffer: Vec<u8>,
    }

    impl Inner {
        pub fn new(git_dir: &Path) -> std::io::Result<Self> {
            let (inotify, git_wd) = ref_watch::watch_git_dir(git_dir)?;
            let mut inner = Self {
                inotify,
                git_dir: git_dir.to_path_buf(),
                git_wd,
                top: None,
                tasks: None,
                fresh: true,
                buffer: vec![0; 64 * 1024],
            };
            inner.watch_missing()?;
            Ok(inner)
        }

        fn top_dir(&self) -> PathBuf {
            self.git_dir.join("refs").join("git-mile")
        }

        /// Watch the directories that exist now; whether one was added.
        fn watch_missing(&mut self) -> std::io::Result<bool> {
            let dir_mask = ref_watch::ref_dir_mask();
            let mut added = false;
            let top = self.top_dir();
            for (slot, dir, mask) in [
                (0, top.clone(), dir_mask),
                (1, top.join(TASKS), ref_watch::ref_files_mask()),
            ] {
                let watched = if slot == 0 { &self.top } else { &self.tasks };
                if watched.is_some() {
                    continue;
                }
                match self.inotify.watches().add(&dir, mask) {
                    Ok(wd) => {
                        let entry = Some((wd, inode(&dir)));
                        if slot == 0 {
                            self.top = entry;
                        } else {
                            self.tasks = entry;
                        }
                        added = true;
                    }
                    Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
                    Err(err) => return Err(err),
                }
            }
            Ok(added)
        }

        fn forget(&mut self, wd: &WatchDescriptor) {
            for slot in [&mut self.top, &mut self.tasks] {
                if slot.as_ref().is_some_and(|(w, _)| w == wd)
                    && let Some((w, _)) = slot.take()
                {
                    let _ = self.inotify.watches().remove(w);
                }
            }
        }

        pub fn look(&mut self) -> TaskLook {
            let mut everything = std::mem::take(&mut self.fresh);
            match self.watch_missing() {
                Ok(added) => everything |= added,
                Err(_) => everything = true,
            }
            let mut changed = std::collections::BTreeSet::new();
            let mut gone = Vec::new();
            let top_wd = self.top.as_ref().map(|(w, _)| w.clone());
            let tasks_wd = self.tasks.as_ref().map(|(w, _)| w.clone());
            // A change the watch cannot name (an entry of refs/git-mile/ or tasks/ that is no
            // task ref).
            let mut unnamed = false;
            everything |=
                ref_watch::drain(&mut self.inotify, &mut self.buffer, &self.git_wd, |event| {
                    let name = event.name.and_then(|n| n.to_str());
                    if ref_watch::gone(event) {
                        gone.push(event.wd.clone());
                    } else if Some(&event.wd) == top_wd.as_ref() {
                        if !matches!(name, Some("issue" | "milestone")) {
                            unnamed = true;
                        }
                    } else if Some(&event.wd) == tasks_wd.as_ref() {
                        match name {
                            Some(name) if ref_watch::canonical_id(name) => {
                                changed.insert(name.to_string());
                            }
                            Some(name) if name.ends_with(".lock") => {}
                            _ => unnamed = true,
                        }
                    }
                });
            everything |= unnamed || !gone.is_empty();
            // A directory that is no longer the one watched counts as gone now (the kernel
            // may tell later).
            for (dir, slot) in [
                (self.top_dir(), &self.top),
                (self.top_dir().join(TASKS), &self.tasks),
            ] {
                if let Some((wd, watched)) = slot
                    && (inode(&dir) != *watched || watched.is_none())
                {
                    gone.push(wd.clone());
                    everything = true;
                }
            }
            for wd in gone {
                self.forget(&wd);
            }
            if everything {
                let _ = self.watch_missing();
                TaskLook::Everything
            } else if changed.is_empty() {
                TaskLook::Unchanged
            } else {
                TaskLook::Changed(changed.into_iter().collect())
            }
        }
    }
}

#[cfg(test)]
#[cfg(target_os = "linux")]
mod tests {
    use super::*;

    const A: &str = "019a5b2c-0001-7000-8000-000000000001";

    fn write(dir: &Path, name: &str, text: &str) {
        let lock = dir.join(format!("{name}.lock"));
        std::fs::write(&lock, text).unwrap();
        std::fs::rename(&lock, dir.join(name)).unwrap();
    }

    #[test]
    fn the_kernel_tells_which_task_refs_changed() {
        let git = tempfile::tempdir().unwrap();
        let mut watch = TaskWatch::new(git.path());
        assert_eq!(
            watch.look(),
            TaskLook::Everything,
            "the first look reads all"
        );
        assert_eq!(watch.look(), TaskLook::Unchanged);
        let tasks = git.path().join("refs/git-mile/tasks");
        std::fs::create_dir_all(&tasks).unwrap();
        assert_eq!(
            watch.look(),
            TaskLook::Everything,
            "the directories appeared"
        );
        write(&tasks, A, "a\n");
        assert_eq!(watch.look(), TaskLook::Changed(vec![A.to_string()]));
        assert_eq!(watch.look(), TaskLook::Unchanged);
        // The catalog's namespaces are not ours.
        std::fs::create_dir_all(git.path().join("refs/git-mile/issue")).unwrap();
        assert_eq!(watch.look(), TaskLook::Unchanged);
        // Anything else: everything.
        write(&tasks, "not-a-task", "x\n");
        assert_eq!(watch.look(), TaskLook::Everything);
        std::fs::create_dir_all(git.path().join("refs/git-mile/other")).unwrap();
        assert_eq!(watch.look(), TaskLook::Everything);
        write(git.path(), "packed-refs", "# pack-refs\n");
        assert_eq!(watch.look(), TaskLook::Everything);
        std::fs::remove_dir_all(&tasks).unwrap();
        assert_eq!(watch.look(), TaskLook::Everything);
        assert!(!simple_layout(git.path()), "other/ is there");
        std::fs::remove_dir(git.path().join("refs/git-mile/other")).unwrap();
        assert!(simple_layout(git.path()));
    }
}
