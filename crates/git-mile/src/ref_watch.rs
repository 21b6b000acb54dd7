//! What the two kernel watches of refs share: the catalog's ([`crate::tracking`], issues and
//! milestones) and the tasks' ([`crate::task::watch`], upstream git-mile's task refs). Each
//! watches its own ref directories and the git directory (for `packed-refs`) with inotify,
//! and drains the queue on each look.

/// A lowercase hyphenated UUID: the ids git-mile writes, and the names upstream gives task
/// refs.
pub fn canonical_id(name: &str) -> bool {
    uuid::Uuid::parse_str(name).is_ok_and(|u| u.hyphenated().to_string() == name)
}

#[cfg(target_os = "linux")]
pub use linux::*;

#[cfg(target_os = "linux")]
mod linux {
    use std::ffi::OsStr;
    use std::path::Path;

    use inotify::{Event, EventMask, Inotify, WatchDescriptor, WatchMask};

    /// What a watched ref directory tells: entries moved in or out, made or removed, and the
    /// directory itself going away.
    pub fn ref_dir_mask() -> WatchMask {
        WatchMask::MOVED_TO
            | WatchMask::MOVED_FROM
            | WatchMask::CREATE
            | WatchMask::DELETE
            | WatchMask::DELETE_SELF
            | WatchMask::MOVE_SELF
            | WatchMask::ONLYDIR
    }

    /// With [`ref_dir_mask`] for a directory of ref files: a file written in place.
    pub fn ref_files_mask() -> WatchMask {
        ref_dir_mask() | WatchMask::MODIFY | WatchMask::CLOSE_WRITE
    }

    /// A queue that watches `git_dir` (where `packed-refs` is renamed into place), and that
    /// watch.
    pub fn watch_git_dir(git_dir: &Path) -> std::io::Result<(Inotify, WatchDescriptor)> {
        let inotify = Inotify::init()?;
        let git_wd = inotify.watches().add(
            git_dir,
            WatchMask::MOVED_TO
                | WatchMask::MOVED_FROM
                | WatchMask::CLOSE_WRITE
                | WatchMask::DELETE,
        )?;
        Ok((inotify, git_wd))
    }

    /// Whether a watched directory went away (or stopped being watched) by `event`.
    pub fn gone(event: &Event<&OsStr>) -> bool {
        event
            .mask
            .intersects(EventMask::IGNORED | EventMask::DELETE_SELF | EventMask::MOVE_SELF)
    }

    /// Hand `each` every event the queue holds now, but those of the git directory's watch
    /// `git_wd`; whether anything else may have changed: the queue overflowed or could not be
    /// read, or `packed-refs` changed (then every ref must be read again).
    pub fn drain(
        inotify: &mut Inotify,
        buffer: &mut [u8],
        git_wd: &WatchDescriptor,
        mut each: impl FnMut(&Event<&OsStr>),
    ) -> bool {
        let mut everything = false;
        loop {
            let events = match inotify.read_events(buffer) {
                Ok(events) => events,
                Err(err) if err.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(err) => {
                    tracing::debug!(%err, "reading an inotify queue of refs failed");
                    return true;
                }
            };
            for event in events {
                if event.mask.contains(EventMask::Q_OVERFLOW) {
                    everything = true;
                } else if &event.wd == git_wd {
                    everything |= event.name.is_some_and(|name| name == "packed-refs");
                } else {
                    each(&event);
                }
            }
        }
        everything
    }

    /// The inode of `path`, if it exists: a watched directory that is no longer the one
    /// watched counts as gone (the kernel may tell later).
    pub fn inode(path: &Path) -> Option<u64> {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(path).ok().map(|meta| meta.ino())
    }
}
