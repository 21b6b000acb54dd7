//! The cloud server's rate limit, on a real PostgreSQL: counted per token in the database, so
//! that every server process on it shares one count (each process is a pool of its own
//! here, as in `jility serve`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // assertions in tests

mod pg;

use std::sync::{Arc, Barrier};

use jility_cloud::ratelimit::RateLimiter;
use jility_cloud::store::PgDatabase;
use pg::TestDb;

#[test]
fn the_limit_counts_every_request_of_a_token_and_says_when_to_retry() {
    let db = TestDb::new();
    let limiter = RateLimiter::new(PgDatabase::connect(&db.url).unwrap(), 5);
    let mut last = None;
    for used in 1..=5u32 {
        let decision = limiter.check("token-a").unwrap();
        assert!(decision.allowed, "request {used} of 5");
        assert_eq!(decision.limit, 5);
        assert_eq!(decision.remaining, 5 - used);
        assert!((1..=60).contains(&decision.retry_after_secs));
        assert_eq!(decision.reset_at % 60, 0, "windows end on the minute");
        last = Some(decision);
    }
    let refused = limiter.check("token-a").unwrap();
    // A window may have ended between the two calls; then the count started again.
    if refused.reset_at == last.unwrap().reset_at {
        assert!(!refused.allowed);
        assert_eq!(refused.remaining, 0);
        let error = refused.error();
        assert_eq!(error.code.as_str(), "rate_limit");
        assert!(error.retryable());
        assert_eq!(error.retry_after_secs, Some(refused.retry_after_secs));
        assert!(
            error.message.contains("5 requests per minute"),
            "{}",
            error.message
        );
    }
    // Another token has its own count.
    let other = limiter.check("token-b").unwrap();
    assert!(other.allowed);
    assert_eq!(other.remaining, 4);
}

#[test]
fn two_server_processes_share_one_count() {
    let db = TestDb::new();
    // Two pools on one database, as two `jility serve` processes have.
    let first = RateLimiter::new(PgDatabase::connect(&db.url).unwrap(), 100);
    let second = RateLimiter::new(PgDatabase::connect(&db.url).unwrap(), 100);
    // 4 threads, two on each "process", 40 requests each: 160 requests against a limit of
    // 100 in one window. Exactly 100 may pass (unless the minute turns during the run: then
    // the counts of both windows are checked).
    let barrier = Arc::new(Barrier::new(4));
    let mut threads = Vec::new();
    for i in 0..4 {
        let limiter = if i % 2 == 0 {
            first.clone()
        } else {
            second.clone()
        };
        let barrier = barrier.clone();
        threads.push(std::thread::spawn(move || {
            barrier.wait();
            (0..40)
                .map(|_| limiter.check("shared-token").unwrap())
                .collect::<Vec<_>>()
        }));
    }
    let decisions: Vec<_> = threads
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect();
    let mut windows: Vec<i64> = decisions.iter().map(|d| d.reset_at).collect();
    windows.sort();
    windows.dedup();
    for window in windows {
        let in_window: Vec<_> = decisions.iter().filter(|d| d.reset_at == window).collect();
        let allowed = in_window.iter().filter(|d| d.allowed).count();
        assert_eq!(allowed, in_window.len().min(100), "window ending {window}");
        // Every count from 1 to the number of requests was handed out exactly once.
        let mut remaining: Vec<u32> = in_window.iter().map(|d| d.remaining).collect();
        remaining.sort();
        let mut expected: Vec<u32> = (1..=in_window.len() as u32)
            .map(|count| 100u32.saturating_sub(count))
            .collect();
        expected.sort();
        assert_eq!(remaining, expected, "window ending {window}");
    }
}

#[test]
fn old_windows_are_forgotten() {
    let db = TestDb::new();
    let pool = PgDatabase::connect(&db.url).unwrap();
    let limiter = RateLimiter::new(pool, 10);
    let mut client = db.client();
    client
        .execute(
            "INSERT INTO rate_limit_windows (key, window_start, count) VALUES ('k', 60, 7)",
            &[],
        )
        .unwrap();
    let decision = limiter.check("k").unwrap();
    assert!(decision.allowed);
    assert_eq!(decision.remaining, 9, "an old window does not count");
    let rows: i64 = client
        .query_one(
            "SELECT count(*) FROM rate_limit_windows WHERE key = 'k'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(rows, 1, "the old window was deleted");
}
