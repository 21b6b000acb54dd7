//! jility's test fixtures (a dev-dependency only): a PostgreSQL database of its own for each
//! test, on the server at `JILITY_TEST_DATABASE_URL` (default
//! `postgres://postgres@127.0.0.1:5432/test`; the README's test command starts one where
//! none runs), dropped when the test ends, failed or not. The tests of `jility-pg`,
//! `jility-identity` and the `jility` binary share it.
//!
//! A fixture that cannot do its work fails the test: it panics, saying why.
// `TestDb::new` makes a database: not a `Default`.
#![allow(
    clippy::unwrap_used,
    clippy::panic,
    clippy::print_stderr,
    clippy::new_without_default
)]

const DEFAULT_URL: &str = "postgres://postgres@127.0.0.1:5432/test";

pub fn base_url() -> String {
    std::env::var("JILITY_TEST_DATABASE_URL").unwrap_or_else(|_| DEFAULT_URL.to_string())
}

/// `url` with its database name replaced by `name`.
pub fn with_database(url: &str, name: &str) -> String {
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

/// A database of its own for one test, dropped (even when the test fails) by `Drop`.
pub struct TestDb {
    admin_url: String,
    pub name: String,
    pub url: String,
}

impl TestDb {
    pub fn new() -> Self {
        Self::on(&base_url())
    }

    /// A database of its own on the server at `admin_url` (e.g. a private cluster a test
    /// started).
    pub fn on(admin_url: &str) -> Self {
        let admin_url = admin_url.to_string();
        let name = format!("jility_t_{}", uuid::Uuid::new_v4().simple());
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

    pub fn client(&self) -> postgres::Client {
        postgres::Client::connect(&self.url, postgres::NoTls).unwrap()
    }

    /// The store's pool on this database (migrated), with a few connections.
    pub fn connect(&self) -> jility_pg::store::PgDatabase {
        jility_pg::store::PgDatabase::connect_with(&self.url, 4).unwrap()
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        match postgres::Client::connect(&self.admin_url, postgres::NoTls) {
            Ok(mut admin) => {
                if let Err(err) = admin.batch_execute(&format!(
                    "DROP DATABASE IF EXISTS {} WITH (FORCE)",
                    self.name
                )) {
                    eprintln!("could not drop test database {}: {err}", self.name);
                }
            }
            Err(err) => eprintln!("could not drop test database {}: {err}", self.name),
        }
    }
}
