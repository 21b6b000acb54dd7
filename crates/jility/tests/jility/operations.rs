//! `jility serve` as operators run it: many processes and admin commands started at the
//! same moment on one database, the pool's size, `jility admin migrate`, a schema newer than
//! the binary.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use crate::pg::TestDb;

fn jility() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_jility"));
    command
        .env("JILITY_MODE", "cloud")
        .env_remove("DATABASE_URL")
        .env_remove("JILITY_DB_POOL_SIZE")
        .stdin(Stdio::null());
    command
}

/// A `jility serve` on `url` on a free port, killed when dropped.
struct Started(Child);

impl Drop for Started {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Start `jility serve` on `url`; `Ok` with the process once it announced its address,
/// `Err` with what it said when it exited first (or said nothing for 60 s).
fn serve(url: &str, extra: &[&str]) -> Result<Started, String> {
    let mut child = jility()
        .args(["serve", "--listen", "127.0.0.1:0", "--database-url", url])
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut said = Vec::new();
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            if line.starts_with("jility: serving the API at ") {
                let _ = tx.send(Ok(()));
            }
            said.push(line);
        }
        let _ = tx.send(Err(said.join("\n")));
    });
    match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(Ok(())) => Ok(Started(child)),
        Ok(Err(said)) => {
            let status = child.wait().unwrap();
            Err(format!("exited {status}: {said}"))
        }
        Err(_) => {
            let _ = child.kill();
            Err("said nothing for 60 s".into())
        }
    }
}

/// Eight processes at the same moment on a new database, over many rounds: six servers and
/// two `admin create-workspace` commands. Every one comes up (migrations serialised, every
/// start-up step safe beside another).
#[test]
fn eight_simultaneous_starts_on_a_new_database_all_come_up() {
    const ROUNDS: usize = 12;
    const SERVERS: usize = 6;
    const ADMINS: usize = 2;
    for round in 0..ROUNDS {
        let db = TestDb::new();
        let barrier = Arc::new(Barrier::new(SERVERS + ADMINS));
        let mut handles = Vec::new();
        for i in 0..SERVERS {
            let (url, barrier) = (db.url.clone(), barrier.clone());
            handles.push(std::thread::spawn(move || {
                barrier.wait();
                serve(&url, &[]).map(|started| {
                    drop(started);
                    format!("server {i}")
                })
            }));
        }
        for i in 0..ADMINS {
            let (url, barrier) = (db.url.clone(), barrier.clone());
            handles.push(std::thread::spawn(move || {
                barrier.wait();
                let out = jility()
                    .args([
                        "admin",
                        "create-workspace",
                        &format!("ws{i}"),
                        "--database-url",
                        &url,
                        "--json",
                    ])
                    .output()
                    .unwrap();
                if out.status.success() {
                    Ok(format!("admin {i}"))
                } else {
                    Err(format!(
                        "admin {i} exited {}: {}",
                        out.status,
                        String::from_utf8_lossy(&out.stderr)
                    ))
                }
            }));
        }
        let failed: Vec<String> = handles
            .into_iter()
            .filter_map(|h| h.join().unwrap().err())
            .collect();
        assert!(failed.is_empty(), "round {round}: {failed:#?}");
    }
}

/// The pool's size is an option: with `--db-pool-size 8` a server under load from 32
/// clients never holds more than eight connections (its pools, its readers, its watch and
/// its listener together), and `JILITY_DB_POOL_SIZE` sets it too.
#[test]
fn the_pool_size_bounds_the_connections_a_server_holds() {
    use crate::cloud::{Server, call, client};
    use reqwest::Method;
    for (extra, env) in [
        (vec!["--db-pool-size", "8"], vec![]),
        (vec![], vec![("JILITY_DB_POOL_SIZE", "8")]),
    ] {
        let db = TestDb::new();
        // Made by another process, which holds no connection once it has exited.
        let token = crate::cloud::admin_workspace(&db.url, "pool", &[]);
        let server = Server::start_with(&db, "127.0.0.1:0", &extra, &env);
        let server = Arc::new(server);
        let token = Arc::new(token);
        let created = call(
            &client(),
            &server,
            Method::POST,
            "/tickets",
            Some(&token),
            Some(r#"{"title":"one"}"#),
        );
        assert_eq!(created.status, 201, "{:?}", created.body);
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let clients: Vec<_> = (0..32)
            .map(|i| {
                let (server, token, stop) = (server.clone(), token.clone(), stop.clone());
                std::thread::spawn(move || {
                    let http = client();
                    let mut answered = 0;
                    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                        let (method, path, body) = if i % 4 == 0 {
                            (Method::POST, "/tickets", Some(r#"{"title":"more"}"#))
                        } else {
                            (Method::GET, "/tickets?limit=5", None)
                        };
                        let answer = call(&http, &server, method, path, Some(&token), body);
                        assert!(
                            answer.status.is_success() || answer.status == 429,
                            "{} {:?}",
                            answer.status,
                            answer.body
                        );
                        answered += 1;
                    }
                    answered
                })
            })
            .collect();
        let mut admin = db.client();
        let deadline = Instant::now() + Duration::from_secs(3);
        let mut most = 0;
        while Instant::now() < deadline {
            let held: i64 = admin
                .query_one(
                    "SELECT count(*) FROM pg_stat_activity \
                     WHERE datname = current_database() AND pid <> pg_backend_pid()",
                    &[],
                )
                .unwrap()
                .get(0);
            most = most.max(held);
            std::thread::sleep(Duration::from_millis(10));
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let answered: usize = clients.into_iter().map(|c| c.join().unwrap()).sum();
        assert!(answered > 32, "{answered} answers");
        assert!(
            most <= 8,
            "{most} connections held with a pool of 8 ({env:?})"
        );
        assert!(
            most >= 4,
            "{most} connections: the load did not reach the pool"
        );
    }
}

fn admin(url: &str, args: &[&str]) -> std::process::Output {
    jility()
        .arg("admin")
        .args(args)
        .args(["--database-url", url])
        .output()
        .unwrap()
}

fn json_of(out: &std::process::Output) -> serde_json::Value {
    assert!(out.status.success(), "{out:?}");
    serde_json::from_slice(&out.stdout).unwrap()
}

fn version(db: &TestDb) -> Option<i32> {
    let mut client = db.client();
    let exists: bool = client
        .query_one(
            "SELECT to_regclass('jility_schema_migrations') IS NOT NULL",
            &[],
        )
        .unwrap()
        .get(0);
    exists.then(|| {
        client
            .query_one("SELECT max(version) FROM jility_schema_migrations", &[])
            .unwrap()
            .get(0)
    })
}

/// `jility admin migrate --check` says what would run and changes nothing; `migrate`
/// applies it once; a schema newer than the binary is refused by both and by `serve`,
/// untouched.
#[test]
fn admin_migrate_checks_applies_and_refuses_a_newer_schema() {
    let known = jility_cloud::store::MIGRATIONS.len();
    let db = TestDb::new();
    let checked = json_of(&admin(&db.url, &["migrate", "--check", "--json"]));
    assert_eq!(checked["before"], 0);
    assert_eq!(checked["after"], known);
    assert_eq!(checked["checked_only"], true);
    let names = checked["migrations"].as_array().unwrap();
    assert_eq!(names.len(), known);
    assert_eq!(names[0], "0001_initial");
    assert_eq!(version(&db), None, "--check created nothing");
    let text = admin(&db.url, &["migrate", "--check"]);
    let text = String::from_utf8_lossy(&text.stdout).to_string();
    assert!(
        text.contains(&format!("would apply {known} migrations"))
            && text.contains("Nothing was changed"),
        "{text}"
    );
    assert_eq!(version(&db), None);

    let applied = json_of(&admin(&db.url, &["migrate", "--json"]));
    assert_eq!(
        (applied["before"].as_u64(), applied["after"].as_u64()),
        (Some(0), Some(known as u64))
    );
    assert_eq!(applied["checked_only"], false);
    assert_eq!(version(&db), Some(known as i32));
    let again = admin(&db.url, &["migrate"]);
    let again = String::from_utf8_lossy(&again.stdout).to_string();
    assert!(again.contains("schema is current"), "{again}");
    let checked = json_of(&admin(&db.url, &["migrate", "--check", "--json"]));
    assert_eq!(checked["migrations"].as_array().unwrap().len(), 0);

    // A newer jility migrated it.
    db.client()
        .execute(
            "INSERT INTO jility_schema_migrations (version) VALUES ($1)",
            &[&(known as i32 + 1)],
        )
        .unwrap();
    let newer = format!("schema version {}; this one knows up to {known}", known + 1);
    for args in [&["migrate"][..], &["migrate", "--check"][..]] {
        let out = admin(&db.url, args);
        assert!(!out.status.success());
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(
            said.contains(&newer) && said.contains("Upgrade jility"),
            "{said}"
        );
    }
    let refused = serve(&db.url, &[]).err().unwrap();
    assert!(refused.contains(&newer), "{refused}");
    assert_eq!(version(&db), Some(known as i32 + 1), "left untouched");
}

/// A rolling upgrade: the database is migrated ahead of a running server (an additive
/// migration: a column, a table, an index), and the server goes on reading and writing.
#[test]
fn a_running_server_keeps_working_beside_an_additive_migration() {
    use crate::cloud::{Server, call, client};
    use reqwest::Method;
    let db = TestDb::new();
    let made = json_of(&admin(&db.url, &["create-workspace", "roll", "--json"]));
    let token = made["token"].as_str().unwrap().to_string();
    let server = Server::start(&db, &[]);
    let http = client();
    let create = |title: &str| {
        let answer = call(
            &http,
            &server,
            Method::POST,
            "/tickets",
            Some(&token),
            Some(&serde_json::json!({ "title": title }).to_string()),
        );
        assert_eq!(answer.status, 201, "{:?}", answer.body);
        answer.body["ticket"]["number"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let first = create("before the migration");
    let known = jility_cloud::store::MIGRATIONS.len() as i32;
    db.client()
        .batch_execute(&format!(
            "BEGIN;
             ALTER TABLE tickets ADD COLUMN risk TEXT;
             ALTER TABLE comments ADD COLUMN edited_at TEXT DEFAULT NULL;
             CREATE TABLE ticket_risks (ticket_id BIGINT PRIMARY KEY, note TEXT);
             CREATE INDEX tickets_risk ON tickets (risk);
             INSERT INTO jility_schema_migrations (version) VALUES ({});
             COMMIT;",
            known + 1
        ))
        .unwrap();
    let second = create("after the migration");
    for (method, path, body) in [
        (Method::GET, format!("/tickets/{first}"), None),
        (Method::GET, "/tickets?limit=10".to_string(), None),
        (
            Method::POST,
            format!("/tickets/{second}/status"),
            Some(r#"{"status":"in_progress"}"#),
        ),
        (
            Method::POST,
            format!("/tickets/{second}/comments"),
            Some(r#"{"content":"still here"}"#),
        ),
        (Method::GET, format!("/tickets/{second}"), None),
        (Method::GET, "/search?q=migration".to_string(), None),
    ] {
        let answer = call(&http, &server, method.clone(), &path, Some(&token), body);
        assert!(
            answer.status.is_success(),
            "{method} {path}: {} {:?}",
            answer.status,
            answer.body
        );
    }
    let listed = call(
        &http,
        &server,
        Method::GET,
        "/tickets?limit=10",
        Some(&token),
        None,
    );
    assert_eq!(
        listed.body["tickets"].as_array().map(Vec::len),
        Some(2),
        "{:?}",
        listed.body
    );
}
