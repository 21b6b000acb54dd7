//! The store conformance suite of `jility-core` (`jility_core::suite`) on SQLite: each
//! check on a new database file of its own, as `jility init` makes it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // assertions in tests

use jility_core::store::StoreError;
use jility_sqlite::{MIGRATIONS, SqlitePool};

#[test]
fn the_store_suite_passes_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let mut made = 0;
    jility_core::suite::run(|| {
        made += 1;
        let path = dir.path().join(format!("suite-{made}.db"));
        let (pool, before) = SqlitePool::open(&path, true).unwrap();
        assert_eq!(before, 0, "a new file");
        pool
    });
}

/// A database whose schema a newer jility wrote is refused, and left as it was.
#[test]
fn a_database_from_a_newer_jility_is_too_new() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("future.db");
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.pragma_update(None, "user_version", 99).unwrap();
    drop(conn);
    let bytes = std::fs::read(&path).unwrap();
    match SqlitePool::open(&path, true) {
        Err(StoreError::TooNew { found, known }) => {
            assert_eq!((found, known), (99, MIGRATIONS.len() as u32));
        }
        Err(other) => panic!("expected TooNew, got {other}"),
        Ok(_) => panic!("a newer database was opened"),
    }
    assert!(std::fs::read(&path).unwrap() == bytes, "the file changed");
}
