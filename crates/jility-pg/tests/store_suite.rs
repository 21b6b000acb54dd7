//! The store conformance suite of `jility-core` (`jility_core::suite`) on PostgreSQL: each
//! check on a new workspace of its own, all in one database this test makes on the server
//! at `JILITY_TEST_DATABASE_URL` (default `postgres://postgres@127.0.0.1:5432/test`, a user
//! who may create databases, no password) and drops when it ends, failed or not.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stderr
)] // assertions in tests; a database left behind is reported on stderr

use std::time::Duration;

use jility_core::store::StoreError;
use jility_pg::store::{MIGRATIONS, PgDatabase, PgStore};

const DEFAULT_URL: &str = "postgres://postgres@127.0.0.1:5432/test";

/// `url` with its database name replaced by `name` (any query string kept).
fn with_database(url: &str, name: &str) -> String {
    let (main, query) = match url.split_once('?') {
        Some((main, query)) => (main, Some(query)),
        None => (url, None),
    };
    let (server, _) = main
        .rsplit_once('/')
        .filter(|(server, _)| server.contains("//") && !server.ends_with('/'))
        .unwrap_or((main, ""));
    match query {
        Some(query) => format!("{server}/{name}?{query}"),
        None => format!("{server}/{name}"),
    }
}

/// The suite's database, dropped (even when the test fails) by `Drop`.
struct SuiteDb {
    admin_url: String,
    name: String,
    url: String,
}

impl SuiteDb {
    fn new() -> Self {
        let admin_url =
            std::env::var("JILITY_TEST_DATABASE_URL").unwrap_or_else(|_| DEFAULT_URL.to_string());
        let name = format!("jility_suite_{}", uuid::Uuid::new_v4().simple());
        let mut admin = postgres::Client::connect(&admin_url, postgres::NoTls).unwrap_or_else(|e| {
            panic!("cannot reach the test PostgreSQL at {admin_url} (set JILITY_TEST_DATABASE_URL): {e}")
        });
        admin
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .unwrap();
        let url = with_database(&admin_url, &name);
        Self {
            admin_url,
            name,
            url,
        }
    }
}

impl Drop for SuiteDb {
    fn drop(&mut self) {
        let dropped =
            postgres::Client::connect(&self.admin_url, postgres::NoTls).and_then(|mut admin| {
                admin.batch_execute(&format!(
                    "DROP DATABASE IF EXISTS {} WITH (FORCE)",
                    self.name
                ))
            });
        if let Err(err) = dropped {
            eprintln!("could not drop the suite's database {}: {err}", self.name);
        }
    }
}

#[test]
fn the_store_suite_passes_on_postgres() {
    let suite_db = SuiteDb::new();
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
