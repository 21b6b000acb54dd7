//! Which entity refs changed since the catalog last looked, without reading them all.
//!
//! Reading every loose ref file (10,000 of them in a large repository) costs about 100 ms;
//! listing the two ref directories and taking each file's metadata costs a few. A ref update
//! (git's or gix's) writes a lock file and renames it over the ref, so the file gets a new
//! inode and new times; an in-place edit changes its times. A file whose signature is
//! unchanged therefore holds the same tip, unless it was modified within [`RACY_WINDOW`]
//! of the look that recorded it (two changes in one timestamp tick, an inode reused), which
//! is read again, as git does with its index.
//!
//! Only loose refs are covered: when `packed-refs` changes, the catalog reads every ref.

use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, SystemTime};

use crate::model::Kind;

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
                if !canonical_id(&name) {
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

/// Only the ids git-mile writes: lowercase hyphenated UUIDs.
fn canonical_id(name: &str) -> bool {
    uuid::Uuid::parse_str(name).is_ok_and(|u| u.hyphenated().to_string() == name)
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
}
