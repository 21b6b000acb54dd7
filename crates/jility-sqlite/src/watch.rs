//! Hearing that the database changed, whoever changed it: another process (an agent's MCP
//! server, the CLI) or another connection of this one. A connection of its own asks
//! SQLite's `PRAGMA data_version` every [`INTERVAL`]: the number changes when any other
//! connection commits to the file (WAL included), and costs no read of a table. What
//! changed is not said: a listener reloads what it shows.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

/// How often the watcher asks.
pub const INTERVAL: Duration = Duration::from_millis(150);

/// Start watching the database at `path` on a thread of its own: `changed` is called after
/// each change heard, until it returns `false`. A database that cannot be opened (or read)
/// is retried after a second, quietly after the first warning.
pub fn watch(path: &Path, changed: impl FnMut() -> bool + Send + 'static) -> std::io::Result<()> {
    let path = path.to_path_buf();
    std::thread::Builder::new()
        .name("jility-watch".into())
        .spawn(move || run(path, changed))
        .map(|_| ())
}

fn run(path: PathBuf, mut changed: impl FnMut() -> bool) {
    let mut warned = false;
    loop {
        let conn = match Connection::open_with_flags(
            &path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        ) {
            Ok(conn) => conn,
            Err(err) => {
                if !warned {
                    tracing::warn!(db = %path.display(), error = %err, "cannot watch the database");
                    warned = true;
                }
                std::thread::sleep(Duration::from_secs(1));
                continue;
            }
        };
        let _ = conn.busy_timeout(Duration::from_secs(1));
        let mut last: Option<i64> = None;
        loop {
            match conn.pragma_query_value(None, "data_version", |r| r.get::<_, i64>(0)) {
                Ok(version) => {
                    if last.is_some_and(|l| l != version) && !changed() {
                        return;
                    }
                    last = Some(version);
                }
                Err(err) => {
                    if !warned {
                        tracing::warn!(db = %path.display(), error = %err, "cannot watch the database");
                        warned = true;
                    }
                    // Reopen: the file may have been replaced.
                    if !changed() {
                        return;
                    }
                    break;
                }
            }
            std::thread::sleep(INTERVAL);
        }
        std::thread::sleep(Duration::from_secs(1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    #[test]
    fn another_connections_commit_is_heard() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data.db");
        let writer = Connection::open(&path).unwrap();
        writer
            .execute_batch("PRAGMA journal_mode=WAL; CREATE TABLE t(x);")
            .unwrap();
        let (tx, rx) = mpsc::channel();
        watch(&path, move || tx.send(()).is_ok()).unwrap();
        std::thread::sleep(INTERVAL * 3);
        assert!(rx.try_recv().is_err(), "nothing changed yet");
        writer.execute("INSERT INTO t VALUES (1)", []).unwrap();
        rx.recv_timeout(Duration::from_secs(3))
            .expect("the change is heard");
        let other = Connection::open(&path).unwrap();
        other.execute("INSERT INTO t VALUES (2)", []).unwrap();
        rx.recv_timeout(Duration::from_secs(3))
            .expect("a second change is heard");
    }
}
