//! Whole-ticket reads on `jility serve`'s async connections (`jility reads` in
//! `pg_stat_activity`), where the reads waiting on one connection are answered by one
//! statement per workspace and project:
//!
//! - reads of the same numbers from two workspaces at once each get their own workspace's
//!   tickets, never the other's;
//! - the reads queued on a connection whose backend is stopped (`SIGSTOP`, as a backend
//!   waiting on a slow disk or not scheduled) are asked again on another connection and
//!   answered, right, within moments; once the backend goes on, reads go on everywhere.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // assertions in tests

use crate::cloud;
use crate::pg;

use std::process::Command;
use std::time::{Duration, Instant};

use jility_cloud::auth::Tokens;
use jility_cloud::store::READS_APPLICATION;
use reqwest::Method;
use reqwest::StatusCode;

use cloud::{Server, call, client, workspace};
use pg::TestDb;

const TICKETS: usize = 12;
/// Reads at once, each thread reading every ticket in turn.
const READERS: usize = 16;
/// The longest a read may take while one backend is stopped (a read waits 5 ms before it is
/// asked again; the rest is a loaded test machine).
const BOUND: Duration = Duration::from_secs(3);

fn signal(pid: i32, signal: &str) -> bool {
    Command::new("kill")
        .args([&format!("-{signal}"), &pid.to_string()])
        .status()
        .is_ok_and(|status| status.success())
}

/// The stopped backend, let go again when dropped (also when the test fails): the test's
/// database cannot be dropped while one of its backends is stopped.
struct Stopped(i32);

impl Drop for Stopped {
    fn drop(&mut self) {
        signal(self.0, "CONT");
    }
}

/// Every ticket read by `READERS` threads at once: the slowest read.
fn read_all(server: &Server, token: &str) -> Duration {
    read_all_as(server, &[(token, "ticket")])
}

/// Every ticket read by `READERS` threads at once, reader `r` with token `r % n` of
/// `tokens`, whose tickets are titled `PREFIX TASK-N`: the slowest read.
fn read_all_as(server: &Server, tokens: &[(&str, &str)]) -> Duration {
    std::thread::scope(|scope| {
        let readers: Vec<_> = (0..READERS)
            .map(|r| {
                let (token, prefix) = tokens[r % tokens.len()];
                scope.spawn(move || {
                    let http = client();
                    let mut slowest = Duration::ZERO;
                    for i in 0..TICKETS {
                        let number = format!("TASK-{}", (r + i) % TICKETS + 1);
                        let started = Instant::now();
                        let got = call(
                            &http,
                            server,
                            Method::GET,
                            &format!("/tickets/{number}"),
                            Some(token),
                            None,
                        );
                        slowest = slowest.max(started.elapsed());
                        assert_eq!(got.status, StatusCode::OK, "{}", got.body);
                        assert_eq!(got.body["ticket"]["number"], number.as_str());
                        assert_eq!(
                            got.body["ticket"]["title"],
                            format!("{prefix} {number}").as_str()
                        );
                    }
                    slowest
                })
            })
            .collect();
        readers
            .into_iter()
            .map(|r| r.join().unwrap())
            .max()
            .unwrap()
    })
}

#[test]
fn reads_of_two_workspaces_at_once_each_get_their_own_tickets() {
    let db = TestDb::new();
    let tokens = Tokens::new(&db.connect());
    let (_alpha, a) = workspace(&tokens, "alpha");
    let (_beta, b) = workspace(&tokens, "beta");
    let server = Server::start(&db, &["--rate-limit", "100000"]);
    let http = client();
    for (token, prefix) in [(&a, "alpha"), (&b, "beta")] {
        for n in 1..=TICKETS {
            let body = format!(r#"{{"title":"{prefix} TASK-{n}"}}"#);
            let created = call(
                &http,
                &server,
                Method::POST,
                "/tickets",
                Some(token),
                Some(&body),
            );
            assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
        }
    }
    // Half the readers alpha's, half beta's, all reading TASK-1 … TASK-12 at once: the
    // reads waiting on a connection at the same moment are of both workspaces.
    for _ in 0..3 {
        read_all_as(&server, &[(&a, "alpha"), (&b, "beta")]);
    }
}

#[test]
fn reads_queued_behind_a_stopped_backend_are_answered_on_another_connection() {
    let db = TestDb::new();
    let tokens = Tokens::new(&db.connect());
    let (_alpha, token) = workspace(&tokens, "alpha");
    let server = Server::start(&db, &["--rate-limit", "100000"]);
    let http = client();
    for n in 1..=TICKETS {
        let body = format!(r#"{{"title":"ticket TASK-{n}"}}"#);
        let created = call(
            &http,
            &server,
            Method::POST,
            "/tickets",
            Some(&token),
            Some(&body),
        );
        assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    }
    // Reads at once open the server's read connections.
    read_all(&server, &token);
    let backends: Vec<i32> = db
        .client()
        .query(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() \
             AND application_name = $1 ORDER BY pid",
            &[&READS_APPLICATION],
        )
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect();
    assert!(
        backends.len() >= 2,
        "reads at once open more than one read connection: {backends:?}"
    );

    let stopped = Stopped(backends[0]);
    assert!(
        signal(stopped.0, "STOP"),
        "cannot stop backend {}",
        stopped.0
    );
    // Many rounds: a read reaches the stopped backend's connection whenever the others
    // are busier, and without another connection to ask it would never be answered.
    for _ in 0..3 {
        let slowest = read_all(&server, &token);
        assert!(
            slowest < BOUND,
            "a read took {slowest:?} with one backend stopped"
        );
    }
    let stuck: i64 = db
        .client()
        .query_one(
            "SELECT count(*) FROM pg_stat_activity WHERE pid = $1",
            &[&stopped.0],
        )
        .unwrap()
        .get(0);
    assert_eq!(stuck, 1, "the stopped backend is still there");

    drop(stopped);
    let slowest = read_all(&server, &token);
    assert!(
        slowest < BOUND,
        "a read took {slowest:?} after the backend went on"
    );
    assert!(
        !server.log().contains("panicked"),
        "the server panicked:\n{}",
        server.log()
    );
}
