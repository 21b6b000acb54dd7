//! Which entity refs changed since the catalog last looked, without reading them all.
//!
//! Reading every loose ref file (10,000 of them in a large repository) costs tens of
//! milliseconds, so the catalog asks a [`Tracker`] first:
//!
//! - On Linux, the kernel tells ([`Watch`], inotify): the two entity ref directories and the
//!   git directory (for `packed-refs`) are watched from before the first read. A ref update
//!   renames a lock file over the ref inside the writer's `rename` call, which queues the
//!   event before the call returns, so every write that finished before a look is in the
//!   queue the look drains. An overflowing queue, a watched directory that goes away or
//!   appears, or a change of `packed-refs` means "read everything".
//! - Elsewhere, or where inotify cannot be had (its limits), file metadata tells
//!   ([`StatTracker`]): while the modification times of the ref directories and of
//!   `packed-refs` are unchanged, nothing changed (a ref update renames a lock file into one
//!   of them), except within [`RACY_WINDOW`] of the last look, where a change could share a
//!   timestamp. When they moved but `packed-refs` did not, the two ref directories are
//!   listed and each file's metadata taken ([`LooseRefs`]), a few milliseconds: a ref update
//!   gives the file a new inode and new times, an in-place edit new times, so a file whose
//!   signature is unchanged holds the same tip, unless it was modified within the racy
//!   window of the look that recorded it, which is read again, as git does with its index.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::model::Kind;

/// What a look found.
#[derive(Debug, PartialEq, Eq)]
pub enum Look {
    /// Nothing changed since the last look.
    Unchanged,
    /// Only these refs may have changed (read them again; some may be gone).
    Changed(Vec<(Kind, String)>),
    /// Anything may have changed: read every ref.
    Everything,
}

/// How the catalog learns what changed: the kernel's account where there is one, else file
/// metadata.
pub enum Tracker {
    #[cfg(target_os = "linux")]
    Watch(Watch),
    Stat(StatTracker),
}

impl Tracker {
    /// A tracker of `git_dir`'s entity refs; make it before reading any ref (its first look
    /// is [`Look::Everything`]).
    /// `GIT_MILE_NO_INOTIFY` (set to anything) asks for file metadata: for repositories on
    /// file systems whose changes inotify does not see (network mounts written by others).
    pub fn new(git_dir: &Path) -> Self {
        #[cfg(target_os = "linux")]
        match std::env::var_os("GIT_MILE_NO_INOTIFY") {
            Some(_) => {}
            None => match Watch::new(git_dir) {
                Ok(watch) => return Self::Watch(watch),
                Err(err) => {
                    tracing::debug!(%err, "no inotify watch; telling changes by file metadata");
                }
            },
        }
        Self::Stat(StatTracker::new(git_dir))
    }

    /// What changed since the last look.
    pub fn look(&mut self) -> Look {
        match self {
            #[cfg(target_os = "linux")]
            Self::Watch(watch) => watch.look(),
            Self::Stat(stat) => stat.look(),
        }
    }

    /// Which kind of tracker this is (for logs and tests).
    pub fn name(&self) -> &'static str {
        match self {
            #[cfg(target_os = "linux")]
            Self::Watch(_) => "inotify",
            Self::Stat(_) => "stat",
        }
    }
}

/// Modification times of the places a ref update touches.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stamp(Vec<Option<(SystemTime, u64)>>);

impl Stamp {
    fn read(git_dir: &Path) -> Self {
        let paths = [
            git_dir.join("refs/git-mile"),
            git_dir.join("refs/git-mile/issue"),
            git_dir.join("refs/git-mile/milestone"),
            git_dir.join("packed-refs"),
        ];
        Self(
            paths
                .iter()
                .map(|p| {
                    let meta = std::fs::metadata(p).ok()?;
                    Some((meta.modified().ok()?, meta.len()))
                })
                .collect(),
        )
    }

    /// The part of the stamp that is `packed-refs`.
    fn packed(&self) -> Option<&(SystemTime, u64)> {
        self.0.last().and_then(Option::as_ref)
    }

    /// Could a change have happened without moving these times? (Made within the racy
    /// window before `looked_at`.)
    fn racy(&self, looked_at: SystemTime) -> bool {
        self.0.iter().flatten().any(|(mtime, _)| {
            looked_at
                .duration_since(*mtime)
                .map(|age| age < RACY_WINDOW)
                .unwrap_or(true)
        })
    }
}

/// Changes told by file metadata (see the module's documentation).
pub struct StatTracker {
    git_dir: PathBuf,
    /// The last look: its stamp, when it was taken, and the loose files then.
    last: Option<(Stamp, SystemTime, Option<LooseRefs>)>,
}

impl StatTracker {
    pub fn new(git_dir: &Path) -> Self {
        Self {
            git_dir: git_dir.to_path_buf(),
            last: None,
        }
    }

    pub fn look(&mut self) -> Look {
        let stamp = Stamp::read(&self.git_dir);
        if let Some((before, looked_at, _)) = &self.last
            && *before == stamp
            && !stamp.racy(*looked_at)
        {
            return Look::Unchanged;
        }
        let looked_at = SystemTime::now();
        let loose = LooseRefs::scan(&self.git_dir)
            .map_err(|err| tracing::debug!(%err, "could not list the loose refs"))
            .ok();
        let look = match (&self.last, &loose) {
            (Some((before, _, Some(was))), Some(now)) if before.packed() == stamp.packed() => {
                Look::Changed(was.changed_since(now).into_iter().cloned().collect())
            }
            _ => Look::Everything,
        };
        self.last = Some((stamp, looked_at, loose));
        look
    }
}

/// A modification this close to the look that recorded it may hide another one.
pub const RACY_WINDOW: Duration = Duration::from_secs(2);

/// What identifies one version of a loose ref file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileSig {
    modified: SystemTime,
    len: u64,
    /// Inode and change time (nanoseconds), where the platform has them.
    inode: u64,
    changed: i128,
}

impl FileSig {
    fn of(meta: &std::fs::Metadata) -> Option<Self> {
        #[cfg(unix)]
        let (inode, changed) = {
            use std::os::unix::fs::MetadataExt;
            (
                meta.ino(),
                i128::from(meta.ctime()) * 1_000_000_000 + i128::from(meta.ctime_nsec()),
            )
        };
        #[cfg(not(unix))]
        let (inode, changed) = (0, 0);
        Some(Self {
            modified: meta.modified().ok()?,
            len: meta.len(),
            inode,
            changed,
        })
    }

    /// Could the file have changed again without changing this signature?
    fn racy(&self, looked_at: SystemTime) -> bool {
        looked_at
            .duration_since(self.modified)
            .map(|age| age < RACY_WINDOW)
            .unwrap_or(true)
    }
}

/// The loose entity ref files at one look, by kind and id.
#[derive(Debug, Clone, Default)]
pub struct LooseRefs {
    files: HashMap<(Kind, String), FileSig>,
    looked_at: Option<SystemTime>,
}

impl LooseRefs {
    /// List `refs/git-mile/{issue,milestone}/` under `git_dir`. Names that are not canonical
    /// entity ids (lock files, strays) are left out, as the catalog leaves them out.
    pub fn scan(git_dir: &Path) -> std::io::Result<Self> {
        let looked_at = SystemTime::now();
        let mut files = HashMap::new();
        for kind in [Kind::Issue, Kind::Milestone] {
            let dir = git_dir.join("refs/git-mile").join(kind.as_str());
            let entries = match std::fs::read_dir(&dir) {
                Ok(entries) => entries,
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => continue,
                Err(err) => return Err(err),
            };
            for entry in entries {
                let entry = entry?;
                let Some(name) = entry.file_name().to_str().map(str::to_string) else {
                    continue;
                };
                if !crate::ref_watch::canonical_id(&name) {
                    continue;
                }
                // `DirEntry::metadata` does not follow symlinks: a symbolic ref is seen as
                // itself, and read whole when it changes.
                let Some(sig) = entry.metadata().ok().and_then(|m| FileSig::of(&m)) else {
                    continue;
                };
                files.insert((kind, name), sig);
            }
        }
        Ok(Self {
            files,
            looked_at: Some(looked_at),
        })
    }

    /// The refs whose loose file appeared, changed or went away between `self` (the earlier
    /// look) and `now`, and those recorded too close to the earlier look to be trusted.
    pub fn changed_since<'a>(&'a self, now: &'a Self) -> Vec<&'a (Kind, String)> {
        let looked_at = self.looked_at.unwrap_or(SystemTime::UNIX_EPOCH);
        let mut changed: Vec<&(Kind, String)> = now
            .files
            .iter()
            .filter(|(key, sig)| match self.files.get(*key) {
                Some(before) => before != *sig || before.racy(looked_at),
                None => true,
            })
            .map(|(key, _)| key)
            .collect();
        changed.extend(
            self.files
                .keys()
                .filter(|key| !now.files.contains_key(*key)),
        );
        changed
    }
}

/// Changes told by the kernel (see the module's documentation).
#[cfg(target_os = "linux")]
pub struct Watch {
    inotify: inotify::Inotify,
    git_dir: PathBuf,
    git_wd: inotify::WatchDescriptor,
    /// The watched entity ref directories, with the inode each was watched at.
    dirs: HashMap<inotify::WatchDescriptor, (Kind, Option<u64>)>,
    /// Entity ref directories not watched (absent when last looked for).
    missing: Vec<Kind>,
    /// The first look reads everything: nothing was read before the watch.
    fresh: bool,
    buffer: Vec<u8>,
}

#[cfg(target_os = "linux")]
impl Watch {
    fn new(git_dir: &Path) -> std::io::Result<Self> {
        let (inotify, git_wd) = crate::ref_watch::watch_git_dir(git_dir)?;
        let mut watch = Self {
            inotify,
            git_dir: git_dir.to_path_buf(),
            git_wd,
            dirs: HashMap::new(),
            missing: vec![Kind::Issue, Kind::Milestone],
            fresh: true,
            buffer: vec![0; 64 * 1024],
        };
        watch.watch_missing()?;
        Ok(watch)
    }

    /// Watch the entity ref directories that exist now; whether one was added.
    fn watch_missing(&mut self) -> std::io::Result<bool> {
        let mut added = false;
        let mut still = Vec::new();
        for kind in std::mem::take(&mut self.missing) {
            let dir = self.git_dir.join("refs/git-mile").join(kind.as_str());
            let mask = crate::ref_watch::ref_files_mask();
            match self.inotify.watches().add(&dir, mask) {
                Ok(wd) => {
                    self.dirs.insert(wd, (kind, crate::ref_watch::inode(&dir)));
                    added = true;
                }
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => still.push(kind),
                Err(err) => {
                    self.missing = still;
                    return Err(err);
                }
            }
        }
        self.missing = still;
        Ok(added)
    }

    fn look(&mut self) -> Look {
        use crate::ref_watch;
        let mut everything = std::mem::take(&mut self.fresh);
        // A directory that appeared since: watched from now on, and read whole.
        if !self.missing.is_empty() {
            match self.watch_missing() {
                Ok(added) => everything |= added,
                Err(_) => everything = true,
            }
        }
        let mut changed = std::collections::BTreeSet::new();
        let mut gone = Vec::new();
        let dirs = &self.dirs;
        everything |=
            ref_watch::drain(&mut self.inotify, &mut self.buffer, &self.git_wd, |event| {
                let Some((kind, _)) = dirs.get(&event.wd).copied() else {
                    return;
                };
                if ref_watch::gone(event) {
                    gone.push(event.wd.clone());
                } else if let Some(name) = event.name.and_then(|n| n.to_str())
                    && ref_watch::canonical_id(name)
                {
                    changed.insert((kind, name.to_string()));
                }
            });
        everything |= !gone.is_empty();
        // The kernel tells that a watched directory was removed only once its inode is
        // released, which may come after the removal of the files in it (seen under load): a
        // directory that is no longer the one watched counts as gone now.
        for (wd, (kind, watched)) in &self.dirs {
            let dir = self.git_dir.join("refs/git-mile").join(kind.as_str());
            if ref_watch::inode(&dir) != *watched || watched.is_none() {
                gone.push(wd.clone());
                everything = true;
            }
        }
        for wd in gone {
            if let Some((kind, _)) = self.dirs.remove(&wd) {
                let _ = self.inotify.watches().remove(wd);
                if !self.missing.contains(&kind) {
                    self.missing.push(kind);
                }
            }
        }
        if everything {
            // Watch again what went away and came back meanwhile.
            let _ = self.watch_missing();
            Look::Everything
        } else if changed.is_empty() {
            Look::Unchanged
        } else {
            Look::Changed(changed.into_iter().collect())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "49000000-0000-4000-8000-000000000001";
    const B: &str = "49000000-0000-4000-8000-000000000002";

    fn write(dir: &Path, name: &str, text: &str) {
        // As git does: a lock file renamed over the ref.
        let lock = dir.join(format!("{name}.lock"));
        std::fs::write(&lock, text).unwrap();
        std::fs::rename(&lock, dir.join(name)).unwrap();
    }

    #[test]
    fn tells_new_changed_removed_and_racy_files() {
        let git = tempfile::tempdir().unwrap();
        let issues = git.path().join("refs/git-mile/issue");
        std::fs::create_dir_all(&issues).unwrap();
        write(&issues, A, "a\n");
        write(&issues, "not-an-id", "x\n");
        let first = LooseRefs::scan(git.path()).unwrap();
        assert_eq!(first.files.len(), 1);

        // Just written: racy, so read again although nothing changed.
        let again = LooseRefs::scan(git.path()).unwrap();
        assert_eq!(first.changed_since(&again).len(), 1);

        // Long after: trusted.
        let mut old = first.clone();
        old.looked_at = Some(SystemTime::now() + RACY_WINDOW * 2);
        assert!(old.changed_since(&again).is_empty());

        write(&issues, A, "b\n");
        write(&issues, B, "c\n");
        let after = LooseRefs::scan(git.path()).unwrap();
        let mut changed: Vec<&str> = old
            .changed_since(&after)
            .into_iter()
            .map(|(_, id)| id.as_str())
            .collect();
        changed.sort();
        assert_eq!(changed, [A, B]);

        std::fs::remove_file(issues.join(A)).unwrap();
        let mut settled = after.clone();
        settled.looked_at = Some(SystemTime::now() + RACY_WINDOW * 2);
        let gone = LooseRefs::scan(git.path()).unwrap();
        let changed: Vec<&str> = settled
            .changed_since(&gone)
            .into_iter()
            .map(|(_, id)| id.as_str())
            .collect();
        assert_eq!(changed, [A]);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_kernel_tells_which_refs_changed() {
        let git = tempfile::tempdir().unwrap();
        let mut watch = Watch::new(git.path()).unwrap();
        assert_eq!(watch.look(), Look::Everything, "the first look reads all");
        assert_eq!(watch.look(), Look::Unchanged);

        // The ref directory appears: watched from then on, read whole.
        let issues = git.path().join("refs/git-mile/issue");
        std::fs::create_dir_all(&issues).unwrap();
        assert_eq!(watch.look(), Look::Everything);
        write(&issues, A, "a\n");
        write(&issues, "not-an-id", "x\n");
        assert_eq!(
            watch.look(),
            Look::Changed(vec![(Kind::Issue, A.to_string())])
        );
        assert_eq!(watch.look(), Look::Unchanged);
        // In place, and deleted.
        std::fs::write(issues.join(A), "b\n").unwrap();
        write(&issues, B, "c\n");
        assert_eq!(
            watch.look(),
            Look::Changed(vec![
                (Kind::Issue, A.to_string()),
                (Kind::Issue, B.to_string())
            ])
        );
        std::fs::remove_file(issues.join(B)).unwrap();
        assert_eq!(
            watch.look(),
            Look::Changed(vec![(Kind::Issue, B.to_string())])
        );
        // packed-refs, written as git does.
        write(git.path(), "packed-refs", "# pack-refs\n");
        assert_eq!(watch.look(), Look::Everything);
        // Other files of the git directory do not count.
        std::fs::write(git.path().join("index"), "x").unwrap();
        assert_eq!(watch.look(), Look::Unchanged);
        // The directory goes away and comes back.
        std::fs::remove_dir_all(&issues).unwrap();
        assert_eq!(watch.look(), Look::Everything);
        std::fs::create_dir_all(&issues).unwrap();
        write(&issues, A, "d\n");
        assert_eq!(watch.look(), Look::Everything);
        write(&issues, A, "e\n");
        assert_eq!(
            watch.look(),
            Look::Changed(vec![(Kind::Issue, A.to_string())])
        );
    }
}
