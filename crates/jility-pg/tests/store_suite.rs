//! The store conformance suite of `jility-core` (`jility_core::suite`) on PostgreSQL: each
//! check on a new workspace of its own, all in one database of this test's
//! (`jility_testkit::TestDb`, dropped when it ends, failed or not).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stderr
)] // assertions in tests; a database left behind is reported on stderr

use std::time::Duration;

use jility_core::store::StoreError;
use jility_pg::store::{MIGRATIONS, PgDatabase, PgStore};
use jility_testkit::TestDb;

#[test]
fn the_store_suite_passes_on_postgres() {
    let suite_db = TestDb::new();
    let db = PgDatabase::connect_with(&suite_db.url, 4).unwrap();
    let mut made = 0;
    jility_core::suite::run_with(
        || {
            made += 1;
            let workspace = db.create_workspace(&format!("suite-{made}")).unwrap();
            PgStore::open(&db, workspace.id).unwrap()
        },
        // The kept ticket contexts the reads asked for are refreshed: the next whole-ticket
        // reads take the one-statement path.
        |store: &PgStore| {
            assert!(
                store.database().settle_contexts(Duration::from_secs(20)),
                "the contexts' refreshes did not finish"
            );
        },
    );
    drop(db);

    // A database a newer jility migrated is refused, and left as it was.
    let known = MIGRATIONS.len() as u32;
    let mut client = postgres::Client::connect(&suite_db.url, postgres::NoTls).unwrap();
    client
        .execute(
            "INSERT INTO jility_schema_migrations (version) VALUES ($1)",
            &[&(known as i32 + 7)],
        )
        .unwrap();
    match PgDatabase::connect(&suite_db.url) {
        Err(StoreError::TooNew { found, known: k }) => assert_eq!((found, k), (known + 7, known)),
        Err(other) => panic!("expected TooNew, got {other}"),
        Ok(_) => panic!("a newer database was opened"),
    }
    let versions: i64 = client
        .query_one("SELECT count(*) FROM jility_schema_migrations", &[])
        .unwrap()
        .get(0);
    assert_eq!(versions, i64::from(known) + 1);
}
