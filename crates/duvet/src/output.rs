//! Writing the files the commands make (reports, requirement files, downloaded texts): whole
//! or not at all, and only where they belong; and reading the files named to them as files
//! only ([`read`]).
//!
//! A file is written to a temporary file beside it, then renamed into place: a failure (a
//! full disk, Ctrl-C) leaves the old file, or none, never half of one. It is not forced to
//! disk (no fsync, as duvet 0.4.3 does none): every file here is remade by the next run (a
//! report, a snapshot, a requirement file, a download), and waiting for the disk took 0.5 to
//! 16 ms a file on a report of h3 that otherwise takes 15 ms. A path that is not a
//! regular file (`/dev/stdout`, a pipe) is written directly, as is one behind a dangling
//! link; one behind a link is written where the link points.
//!
//! The files duvet places by itself (the download cache, the requirement files, the reports
//! and snapshot a config file names) must stay in the project: [`confine`] refuses a path
//! that leaves it, by `..` or an absolute path, or through a symbolic link a (cloned,
//! untrusted) project holds. Paths given on the command line are the user's and written as
//! given.

use std::cell::RefCell;
use std::collections::HashMap;
use std::io::Write;
use std::path::{Component, Path, PathBuf};

/// The bytes of the file at `path`, if it is a regular file (behind links): a device or a
/// pipe named as a report, a specification or a config (`/dev/zero`, a FIFO) would never
/// end, or never start.
pub fn read(path: &Path) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    read_into(path, &mut bytes)?;
    Ok(bytes)
}

/// [`read`] into `buffer` (cleared first), which keeps its memory from one file to the next.
pub fn read_into(path: &Path, buffer: &mut Vec<u8>) -> std::io::Result<()> {
    use std::io::Read;
    let meta = std::fs::metadata(path)?;
    // A directory: the system's own words.
    if !meta.is_file() && !meta.is_dir() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file (a device or a pipe)",
        ));
    }
    buffer.clear();
    std::fs::File::open(path)?.read_to_end(buffer).map(drop)
}

/// [`read`], as text (UTF-8).
pub fn read_to_string(path: &Path) -> std::io::Result<String> {
    String::from_utf8(read(path)?).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        )
    })
}

/// Write `bytes` to `path` whole, making its directory; a regular file that already holds
/// them is left alone (a report run again on an unchanged project rewrites nothing, and a
/// watcher of the file sees no change).
pub fn write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if holds(path, bytes) {
        return Ok(());
    }
    write_with(path, |out| out.write_all(bytes))
}

/// [`write`] for a file whose directory the caller has made (the requirement files of a
/// specification): one `lstat` tells a missing file (written at once) and a regular one
/// (compared first) from the rest (a link, a device: [`write`]'s way). Returns whether the
/// file changed.
pub fn write_in_dir(path: &Path, bytes: &[u8]) -> std::io::Result<bool> {
    let meta = std::fs::symlink_metadata(path);
    let plain = match &meta {
        Err(e) => e.kind() == std::io::ErrorKind::NotFound,
        Ok(meta) => meta.is_file(),
    };
    if !plain {
        if holds(path, bytes) {
            return Ok(false);
        }
        write_with(path, |out| out.write_all(bytes))?;
        return Ok(true);
    }
    if let Ok(meta) = meta
        && meta.len() == bytes.len() as u64
        && same_bytes(path, bytes)
    {
        return Ok(false);
    }
    match replace(path, |out| out.write_all(bytes)) {
        // The directory is not there after all: made.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            write_with(path, |out| out.write_all(bytes))?
        }
        other => other?,
    }
    Ok(true)
}

/// Whether `path` is a regular file holding exactly `bytes` (its size asked first).
pub(crate) fn holds(path: &Path, bytes: &[u8]) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() == bytes.len() as u64)
        && same_bytes(path, bytes)
}

/// Whether the file at `path` reads as exactly `bytes`: compared a block at a time, as it is
/// read (no buffer the size of the file, which would be fresh memory for each report).
fn same_bytes(path: &Path, bytes: &[u8]) -> bool {
    use std::io::Read;
    let Ok(mut file) = std::fs::File::open(path) else {
        return false;
    };
    let mut block = [0u8; 1 << 16];
    let mut rest = bytes;
    loop {
        match file.read(&mut block) {
            Ok(0) => return rest.is_empty(),
            Ok(n) => match rest.split_at_checked(n) {
                Some((head, tail)) if head == &block[..n] => rest = tail,
                _ => return false,
            },
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return false,
        }
    }
}

/// Write what `make` writes to `path` whole, making its directory.
pub fn write_with(
    path: &Path,
    make: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let direct = match std::fs::metadata(path) {
        // A device or a pipe: there is nothing to replace. A directory: the system's words.
        Ok(meta) => !meta.is_file(),
        // A link to nothing: writing creates what it points to.
        Err(_) => path.is_symlink(),
    };
    if direct {
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)?;
        let mut out = std::io::BufWriter::with_capacity(1 << 16, file);
        make(&mut out)?;
        return out.flush();
    }
    let target = if path.is_symlink() {
        std::fs::canonicalize(path)?
    } else {
        path.to_path_buf()
    };
    let dir = parent(&target);
    std::fs::create_dir_all(dir).map_err(|e| in_the_way(dir).unwrap_or(e))?;
    replace(&target, make)
}

/// The directory of `path` (`.` for a bare name).
fn parent(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// The temporary file [`replace`] writes `target`'s bytes to before renaming it into place:
/// beside it, hidden, named after it and this process.
pub(crate) fn temp_for(target: &Path) -> PathBuf {
    static PID: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    let pid = PID.get_or_init(std::process::id);
    parent(target).join(format!(".{name}.{pid}.tmp"))
}

/// Write what `make` writes to a temporary file beside `target` (a regular file or none, in
/// a directory that exists), then rename it into place; the temporary file is removed when
/// that fails.
fn replace(
    target: &Path,
    make: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let temp = temp_for(target);
    let written = (|| {
        // Made anew, never opened through what stands there (a link a cloned project holds
        // under a name it can guess would lead the text elsewhere): what stands there is
        // removed (a link itself, not what it points to), once.
        let create = || {
            std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&temp)
        };
        let file = match create() {
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                std::fs::remove_file(&temp)?;
                create()?
            }
            other => other?,
        };
        let mut out = std::io::BufWriter::with_capacity(1 << 16, file);
        make(&mut out)?;
        out.into_inner().map_err(|e| e.into_error())?;
        std::fs::rename(&temp, target)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    written
}

/// When `dir` cannot be made because a file stands where a directory of it should: which.
fn in_the_way(dir: &Path) -> Option<std::io::Error> {
    let file = dir.ancestors().find(|a| a.is_file())?;
    Some(std::io::Error::new(
        std::io::ErrorKind::NotADirectory,
        format!("{} is a file, not a directory", file.display()),
    ))
}

/// Check that `file`, a file duvet places by itself under `base`, stays there: below `base`
/// through no `..` and no link out of it, and (when `base` is in the project `root`) `base`
/// itself in the project. `what` names the file in the message.
pub fn confine(root: &Path, base: &Path, file: &Path, what: &str) -> Result<(), String> {
    Confinement::new(root, base, what).check(file)
}

/// [`confine`] for a `base` the user named (`duvet extract --out`): followed wherever it
/// leads, but nothing below it leaves it.
pub fn confine_below(base: &Path, file: &Path, what: &str) -> Result<(), String> {
    Confinement::below(base, what).check(file)
}

/// [`confine`] for many files under one `base` (the requirement files of a specification):
/// each directory on their way is resolved once, not once a file (a realpath is a readlink
/// per component: 3,000 system calls for h3's 100 files, a tenth of a report's time).
pub struct Confinement<'a> {
    root: Option<&'a Path>,
    base: &'a Path,
    what: &'a str,
    resolved: RefCell<HashMap<PathBuf, PathBuf>>,
}

impl<'a> Confinement<'a> {
    /// Files under `base`, which must be in the project `root` (see [`confine`]).
    pub fn new(root: &'a Path, base: &'a Path, what: &'a str) -> Self {
        Self::with(Some(root), base, what)
    }

    /// Files under a `base` the user named (see [`confine_below`]).
    pub fn below(base: &'a Path, what: &'a str) -> Self {
        Self::with(None, base, what)
    }

    fn with(root: Option<&'a Path>, base: &'a Path, what: &'a str) -> Self {
        Self {
            root,
            base,
            what,
            resolved: RefCell::default(),
        }
    }

    /// Whether `file` stays where it belongs; the message says why not.
    pub fn check(&self, file: &Path) -> Result<(), String> {
        confined(self.root, self.base, file, self.what, &|dir| {
            if let Some(real) = self.resolved.borrow().get(dir) {
                return real.clone();
            }
            let real = resolved(dir);
            self.resolved
                .borrow_mut()
                .insert(dir.to_path_buf(), real.clone());
            real
        })
    }
}

fn confined(
    root: Option<&Path>,
    base: &Path,
    file: &Path,
    what: &str,
    resolved: &dyn Fn(&Path) -> PathBuf,
) -> Result<(), String> {
    let lexical_base = normal(base);
    let lexical_root = root.map_or_else(|| lexical_base.clone(), normal);
    let lexical_file = normal(file);
    let shown = |p: &Path| {
        if root.is_some() && p == lexical_root {
            return "the project".to_string();
        }
        match root {
            Some(_) => p
                .strip_prefix(&lexical_root)
                .map_or_else(|_| p.display().to_string(), |r| r.display().to_string()),
            None => p.display().to_string(),
        }
    };
    if lexical_file == lexical_base {
        return Err(format!(
            "{what} {} is {}, not a file in it",
            file.display(),
            shown(&lexical_base)
        ));
    }
    if !lexical_file.starts_with(&lexical_base) {
        return Err(format!(
            "{what} {} is outside {}: duvet writes it only there",
            file.display(),
            shown(&lexical_base)
        ));
    }
    let real_root = resolved(&lexical_root);
    if root.is_some() && lexical_base.starts_with(&lexical_root) {
        // The first directory from the project down to the file that leads out of it.
        if let Some((link, real)) = leaving(&lexical_root, &real_root, &lexical_file, resolved) {
            return Err(format!(
                "{what} {}: {} links outside the project (to {}); duvet writes only inside it",
                shown(&lexical_file),
                shown(&link),
                real.display()
            ));
        }
    }
    let real_base = resolved(&lexical_base);
    // The file itself a link: written through, so it must lead inside too (a link to
    // nothing would create its target wherever that is).
    if lexical_file.is_symlink() {
        let real = std::fs::canonicalize(&lexical_file);
        let inside = |real: &PathBuf| {
            real.starts_with(&real_base)
                && (!lexical_base.starts_with(&lexical_root) || real.starts_with(&real_root))
        };
        if !real.as_ref().is_ok_and(inside) {
            return Err(format!(
                "{what} {} links outside {} (to {}); duvet writes only inside it",
                shown(&lexical_file),
                shown(&lexical_base),
                std::fs::read_link(&lexical_file)
                    .map_or_else(|_| "?".to_string(), |t| t.display().to_string())
            ));
        }
    }
    if let Some((link, real)) = leaving(&lexical_base, &real_base, &lexical_file, resolved) {
        return Err(format!(
            "{what} {}: {} links outside {} (to {}); duvet writes only inside it",
            shown(&lexical_file),
            shown(&link),
            shown(&lexical_base),
            real.display()
        ));
    }
    Ok(())
}

/// The first directory below `from` on the way to `file` that is not in `real_from` once its
/// links are followed, and where it leads.
fn leaving(
    from: &Path,
    real_from: &Path,
    file: &Path,
    resolved: &dyn Fn(&Path) -> PathBuf,
) -> Option<(PathBuf, PathBuf)> {
    let below = file.strip_prefix(from).ok()?;
    let mut dir = from.to_path_buf();
    let mut parts: Vec<_> = below.components().collect();
    parts.pop();
    for part in parts {
        dir.push(part);
        let real = resolved(&dir);
        if !real.starts_with(real_from) {
            return Some((dir, real));
        }
    }
    None
}

/// `path` without `.` and with each `..` taking off the component before it.
fn normal(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other),
        }
    }
    out
}

/// Where `path` is on disk: its deepest existing ancestor with every link followed, and the
/// rest (which does not exist yet) as it is.
fn resolved(path: &Path) -> PathBuf {
    let mut existing = path.to_path_buf();
    let mut rest = Vec::new();
    loop {
        if let Ok(real) = std::fs::canonicalize(&existing) {
            return rest.iter().rev().fold(real, |p, c| p.join(c));
        }
        match (existing.file_name(), existing.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name.to_os_string());
                existing = parent.to_path_buf();
            }
            _ => return path.to_path_buf(),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_failed_write_leaves_the_old_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("out.json");
        std::fs::write(&file, "old").unwrap();
        let failed = write_with(&file, |out| {
            out.write_all(b"half")?;
            Err(std::io::Error::other("disk full"))
        });
        assert!(failed.is_err());
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "old");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        write(&file, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "new");
    }

    /// A report run again on an unchanged project rewrites nothing: the file keeps its inode
    /// and its modification time; other bytes (of the same length too) replace it.
    #[test]
    fn a_file_already_holding_the_bytes_is_left_alone() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("report.html");
        write(&file, b"<p>same</p>").unwrap();
        let past = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        std::fs::File::options()
            .write(true)
            .open(&file)
            .unwrap()
            .set_modified(past)
            .unwrap();
        let before = std::fs::metadata(&file).unwrap();
        write(&file, b"<p>same</p>").unwrap();
        let after = std::fs::metadata(&file).unwrap();
        assert_eq!(after.ino(), before.ino());
        assert_eq!(after.modified().unwrap(), past);
        write(&file, b"<p>diff</p>").unwrap();
        assert_eq!(std::fs::read(&file).unwrap(), b"<p>diff</p>");
        assert_ne!(std::fs::metadata(&file).unwrap().ino(), before.ino());
        write(&file, b"<p>longer</p>").unwrap();
        assert_eq!(std::fs::read(&file).unwrap(), b"<p>longer</p>");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    /// A link standing where the temporary file goes (a cloned project can guess its name)
    /// is not written through: the file lands where it belongs, the link's target untouched.
    #[test]
    fn a_link_at_the_temporary_name_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let victim = outside.path().join("victim");
        std::fs::write(&victim, "keep").unwrap();
        for (name, write) in [
            (
                "a.toml",
                &(|p: &Path| write(p, b"text")) as &dyn Fn(&Path) -> std::io::Result<()>,
            ),
            ("b.toml", &|p: &Path| write_in_dir(p, b"text").map(drop)),
        ] {
            let file = dir.path().join(name);
            std::os::unix::fs::symlink(&victim, temp_for(&file)).unwrap();
            write(&file).unwrap();
            assert_eq!(std::fs::read(&file).unwrap(), b"text", "{name}");
            assert_eq!(std::fs::read(&victim).unwrap(), b"keep", "{name}");
            assert!(!temp_for(&file).exists(), "{name}");
        }
    }

    /// The buffer a thread reads source files into: cleared for each file, and a pipe or a
    /// directory is refused without being read (a pipe would never end).
    #[test]
    fn read_into_reads_each_file_whole_and_refuses_pipes() {
        let dir = tempfile::tempdir().unwrap();
        let (long, short) = (dir.path().join("long.rs"), dir.path().join("short.rs"));
        std::fs::write(&long, "fn a() {}\n".repeat(1000)).unwrap();
        std::fs::write(&short, "// x\n").unwrap();
        let mut buffer = Vec::new();
        read_into(&long, &mut buffer).unwrap();
        assert_eq!(buffer.len(), 10_000);
        read_into(&short, &mut buffer).unwrap();
        assert_eq!(buffer, b"// x\n");
        let fifo = dir.path().join("fifo.rs");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let refused = read_into(&fifo, &mut buffer).unwrap_err();
        assert_eq!(refused.kind(), std::io::ErrorKind::InvalidInput);
        assert!(read_into(dir.path(), &mut buffer).is_err());
        assert!(read_into(&dir.path().join("missing.rs"), &mut buffer).is_err());
    }

    #[test]
    fn one_confinement_refuses_each_way_out_among_many_files() {
        let project = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let root = project.path();
        let base = root.join(".duvet/requirements");
        std::fs::create_dir_all(base.join("spec")).unwrap();
        std::os::unix::fs::symlink(outside.path(), base.join("host")).unwrap();
        let confinement = Confinement::new(root, &base, "x");
        // The directories the first files resolved are kept; each later file is still judged
        // on its own way.
        for (file, ok) in [
            ("spec/a.toml", true),
            ("spec/b.toml", true),
            ("host/c.toml", false),
            ("spec/d.toml", true),
            ("spec/../host/e.toml", false),
            ("../f.toml", false),
            ("spec/g.toml", true),
        ] {
            assert_eq!(confinement.check(&base.join(file)).is_ok(), ok, "{file}");
        }
    }

    #[test]
    fn confine_refuses_ways_out() {
        let project = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let root = project.path();
        let base = root.join(".duvet/specifications");
        std::fs::create_dir_all(&base).unwrap();
        std::os::unix::fs::symlink(outside.path(), base.join("host")).unwrap();
        let ok = base.join("other/a.txt");
        assert_eq!(confine(root, &base, &ok, "x"), Ok(()));
        for bad in [base.join("host/a.txt"), base.join("../../../a.txt")] {
            assert!(
                confine(root, &base, &bad, "x").is_err(),
                "{}",
                bad.display()
            );
        }
        // The file itself a link out, or a link to nothing.
        let file = base.join("other/b.txt");
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(outside.path().join("x"), &file).unwrap();
        assert!(confine(root, &base, &file, "x").is_err());
        std::fs::write(outside.path().join("x"), "x").unwrap();
        assert!(confine(root, &base, &file, "x").is_err());
        let linked = root.join(".duvet/requirements");
        std::os::unix::fs::symlink(outside.path(), &linked).unwrap();
        assert!(confine(root, &linked, &linked.join("a/b.toml"), "x").is_err());
        // A base outside the project (named by the user) is followed.
        let elsewhere = outside.path().join("cache");
        assert_eq!(
            confine(root, &elsewhere, &elsewhere.join("h/a.txt"), "x"),
            Ok(())
        );
    }
}
