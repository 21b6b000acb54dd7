//! The cloud server's rate limit, on a real PostgreSQL: a sliding 60 s window per token and
//! per workspace, counted in the database, so that every server process on it shares one
//! count (each process is a pool of its own here, as in `jility serve`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // assertions in tests

use crate::pg;

use std::sync::{Arc, Barrier};

use jility_identity::ratelimit::{LEASE_TTL, QUIET_LEASE_TTL, RateLimiter, Scope};
use jility_pg::store::PgDatabase;
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
        assert!((1..=65).contains(&decision.retry_after_secs));
        last = Some(decision);
    }
    let refused = limiter.check("token-a").unwrap();
    // The window slides: the first request leaves it 60 s after it was made, not at a minute's
    // end, so the sixth request within a few seconds is refused.
    assert!(refused.reset_at >= last.unwrap().reset_at - 1);
    {
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
    two_server_processes_share_one_count_with(false);
}

/// The same with quiet keys leased for [`QUIET_LEASE_TTL`]: exactly the limit passes.
#[test]
fn two_server_processes_with_long_leases_share_one_count() {
    two_server_processes_share_one_count_with(true);
}

fn two_server_processes_share_one_count_with(long_leases: bool) {
    let db = TestDb::new();
    // Two pools on one database, as two `jility serve` processes have.
    let first = RateLimiter::new(PgDatabase::connect(&db.url).unwrap(), 100);
    let second = RateLimiter::new(PgDatabase::connect(&db.url).unwrap(), 100);
    first.hear_revocations(long_leases);
    second.hear_revocations(long_leases);
    // 4 threads, two on each "process", 40 requests each: 160 requests against a limit of
    // 100 in the last 60 s. Exactly 100 may pass, whatever the calendar minute.
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
    let allowed: Vec<_> = decisions.iter().filter(|d| d.allowed).collect();
    assert_eq!(allowed.len(), 100);
    // Every count from 1 to 100 was handed out exactly once.
    let mut remaining: Vec<u32> = allowed.iter().map(|d| d.remaining).collect();
    remaining.sort();
    assert_eq!(remaining, (0..100).collect::<Vec<u32>>());
}

#[test]
fn old_requests_leave_the_window() {
    let db = TestDb::new();
    let pool = PgDatabase::connect(&db.url).unwrap();
    let limiter = RateLimiter::new(pool, 10);
    let mut client = db.client();
    // Seven requests 66 to 70 s ago (past the 65 s read: 60, and 4 + 1 for the seconds a
    // lease may be spent after the second it is counted in), and two 30 s ago.
    client
        .execute(
            "INSERT INTO rate_limit_counts (key, seconds, counts) \
             SELECT 'k', ARRAY(SELECT floor(extract(epoch FROM clock_timestamp()))::bigint - s \
                               FROM unnest(ARRAY[70, 68, 66, 30]) s), \
                    ARRAY[2, 3, 2, 2]",
            &[],
        )
        .unwrap();
    let decision = limiter.check("k").unwrap();
    assert!(decision.allowed);
    assert_eq!(decision.remaining, 7, "only the last 60 s count");
    // The second 30 s ago leaves the 65 s read 35 s from now: up to five seconds later than
    // an exact log would free it (the cost of 4 s leases, `WINDOW_SECS`).
    assert!(
        (32..=35).contains(&decision.retry_after_secs),
        "{decision:?}"
    );
    let kept: i32 = client
        .query_one(
            "SELECT cardinality(seconds) FROM rate_limit_counts WHERE key = 'k'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(kept, 2, "the old seconds were forgotten");
}

#[test]
fn a_workspace_ceiling_binds_all_its_tokens_and_a_refusal_counts_for_neither() {
    let db = TestDb::new();
    let limiter = RateLimiter::with_workspace_limit(PgDatabase::connect(&db.url).unwrap(), 3, 4);
    let tokens = jility_identity::auth::Tokens::new(&db.connect());
    let (alpha, _) = tokens
        .create_workspace("alpha", "bootstrap", "tester")
        .unwrap();
    for _ in 0..3 {
        assert!(limiter.check_token(1, alpha.id).unwrap().0.allowed);
    }
    let (refused, revoked) = limiter.check_token(1, alpha.id).unwrap();
    assert!(!refused.allowed);
    assert_eq!(refused.scope, Scope::Token);
    assert_eq!(revoked, None);
    // Token 2 of the same workspace: one left of the ceiling of 4.
    let (second, _) = limiter.check_token(2, alpha.id).unwrap();
    assert!(second.allowed);
    assert_eq!((second.scope, second.remaining), (Scope::Workspace, 0));
    let (ceiling, _) = limiter.check_token(2, alpha.id).unwrap();
    assert!(!ceiling.allowed);
    assert_eq!((ceiling.scope, ceiling.limit), (Scope::Workspace, 4));
    assert!(ceiling.error().message.contains("workspace"));
    // The refusal did not count for token 2: it has used 1 of its 3.
    let used: i32 = db
        .client()
        .query_one(
            "SELECT counts[1] FROM rate_limit_counts WHERE key = 'token:2'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(used, 1);
}

/// A limit of 6,400 a minute leases up to 100 requests at a time.
const BIG: u32 = 6_400;

fn shared_count(db: &TestDb, key: &str) -> i64 {
    db.client()
        .query_one(
            "SELECT coalesce(sum(c), 0)::bigint FROM rate_limit_counts, unnest(counts) c \
             WHERE key = $1",
            &[&key],
        )
        .unwrap()
        .get(0)
}

#[test]
fn leased_requests_keep_the_headers_exact_within_one_process() {
    let db = TestDb::new();
    let limiter = RateLimiter::new(PgDatabase::connect(&db.url).unwrap(), BIG);
    for spent in 1..=1_000u32 {
        let decision = limiter.check("busy").unwrap();
        assert!(decision.allowed);
        assert_eq!(decision.remaining, BIG - spent, "request {spent}");
    }
    // Leases grew: the database counted more than was spent, and gets the rest back
    // once the leases expire.
    assert!(shared_count(&db, "busy") > 1_000, "leases were taken ahead");
    std::thread::sleep(
        jility_identity::ratelimit::LEASE_TTL + std::time::Duration::from_millis(800),
    );
    assert_eq!(
        shared_count(&db, "busy"),
        1_000,
        "the unspent part was given back"
    );
}

#[test]
fn two_processes_leasing_never_pass_the_limit_together_and_give_back_the_rest() {
    two_processes_leasing_with(false);
}

/// The same with the first quarter of the limit leased for [`QUIET_LEASE_TTL`].
#[test]
fn two_processes_with_long_leases_never_pass_the_limit_together() {
    two_processes_leasing_with(true);
}

fn two_processes_leasing_with(long_leases: bool) {
    let db = TestDb::new();
    let first = RateLimiter::new(PgDatabase::connect(&db.url).unwrap(), BIG);
    let second = RateLimiter::new(PgDatabase::connect(&db.url).unwrap(), BIG);
    first.hear_revocations(long_leases);
    second.hear_revocations(long_leases);
    // 4 threads, two on each process, 2,000 requests each: 8,000 against 6,400.
    let barrier = Arc::new(Barrier::new(4));
    let threads: Vec<_> = (0..4)
        .map(|i| {
            let limiter = if i % 2 == 0 {
                first.clone()
            } else {
                second.clone()
            };
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                barrier.wait();
                (0..2_000)
                    .filter(|_| limiter.check("shared-token").unwrap().allowed)
                    .count()
            })
        })
        .collect();
    let allowed: usize = threads.into_iter().map(|t| t.join().unwrap()).sum();
    assert!(allowed <= BIG as usize, "{allowed} passed a limit of {BIG}");
    // What a process held when the requests stopped is given back within its lease's
    // time: the shared count is then what was spent, and the rest can be had.
    let ttl = if long_leases {
        QUIET_LEASE_TTL
    } else {
        jility_identity::ratelimit::LEASE_TTL
    };
    std::thread::sleep(ttl + std::time::Duration::from_millis(800));
    assert_eq!(shared_count(&db, "shared-token") as usize, allowed);
    let left = BIG as usize - allowed;
    let more = (0..left + 10)
        .filter(|_| first.check("shared-token").unwrap().allowed)
        .count();
    assert_eq!(more, left, "exactly the rest of the limit, no more");
}

#[test]
fn a_revoked_token_is_refused_by_every_process_within_a_lease() {
    let db = TestDb::new();
    let pool = PgDatabase::connect(&db.url).unwrap();
    let tokens = jility_identity::auth::Tokens::new(&pool);
    let (alpha, minted) = tokens
        .create_workspace("alpha", "bootstrap", "tester")
        .unwrap();
    let id = minted.record.id;
    // Another process, busy with the token: its leases have grown.
    let other = RateLimiter::new(PgDatabase::connect(&db.url).unwrap(), BIG);
    // And a third, busy with it too, whose next request will change something.
    let writer = RateLimiter::new(PgDatabase::connect(&db.url).unwrap(), BIG);
    for _ in 0..500 {
        for limiter in [&other, &writer] {
            let (decision, revoked) = limiter.check_token(id, alpha.id).unwrap();
            assert!(decision.allowed && revoked.is_none());
        }
    }
    tokens
        .revoke(alpha.id, &jility_identity::auth::TokenRef::Id(id))
        .unwrap();
    let since = std::time::Instant::now();
    // A request that may change something asks afresh: refused at once.
    let (_, revoked) = writer.check_token_fresh(id, alpha.id).unwrap();
    assert!(
        revoked.is_some(),
        "a write after revocation is refused at once"
    );
    let mut served_after = 0;
    loop {
        let (_, revoked) = other.check_token(id, alpha.id).unwrap();
        if revoked.is_some() {
            break;
        }
        served_after += 1;
        assert!(
            since.elapsed() <= jility_identity::ratelimit::LEASE_TTL,
            "still served {:?} after its revocation",
            since.elapsed()
        );
    }
    // It was refused as soon as the lease it held ran out, and stays refused.
    assert!(served_after <= (BIG / jility_identity::ratelimit::LEASE_SHARE) as usize);
    for _ in 0..3 {
        assert!(other.check_token(id, alpha.id).unwrap().1.is_some());
    }
    // The process that revokes forgets its leases at once.
    let here = RateLimiter::new(pool, BIG);
    let minted = tokens
        .create(
            alpha.id,
            &jility_identity::auth::NewToken {
                name: "second".into(),
                scopes: jility_core::token::ScopeSet::full_access(),
                expires_at: None,
                created_by: "tester".into(),
            },
        )
        .unwrap();
    for _ in 0..500 {
        assert!(
            here.check_token(minted.record.id, alpha.id)
                .unwrap()
                .1
                .is_none()
        );
    }
    tokens
        .revoke(
            alpha.id,
            &jility_identity::auth::TokenRef::Id(minted.record.id),
        )
        .unwrap();
    here.forget_token(minted.record.id);
    assert!(
        here.check_token(minted.record.id, alpha.id)
            .unwrap()
            .1
            .is_some()
    );
}

/// A busy token's next lease is asked for ahead of need, in the background on the runtime's
/// blocking threads, while its reads spend the current one: they seldom wait on the
/// database, the headers never say more is left than is, and what was leased and not spent
/// goes back.
#[test]
fn a_busy_tokens_next_lease_is_asked_for_ahead_of_need() {
    use jility_identity::ratelimit::LEASE_SHARE;
    let db = TestDb::new();
    let pool = PgDatabase::connect(&db.url).unwrap();
    let tokens = jility_identity::auth::Tokens::new(&pool);
    let (alpha, minted) = tokens
        .create_workspace("alpha", "bootstrap", "tester")
        .unwrap();
    let id = minted.record.id;
    let limiter = RateLimiter::new(pool, BIG);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let _inside = runtime.enter();
    // 1,000 reads in bursts of 4 with 10 ms between: leases start at 8 and grow 16, 32 … up
    // to 100 (BIG / LEASE_SHARE), so asking as each runs out would wait on the database
    // 13 times. Asked ahead from the first block on, only the first read waits, and a later
    // one only when a lease statement takes longer than the reads left of a block leave it
    // (20 ms for the block of 16, 125 ms for one of 100): a loaded machine stalls now and
    // then, not on every block.
    const READS: u32 = 1_000;
    let mut waited = 0;
    for spent in 1..=READS {
        let decision = match limiter.check_token_leased(id, alpha.id) {
            Some(decision) => decision,
            None => {
                waited += 1;
                limiter.check_token(id, alpha.id).unwrap().0
            }
        };
        assert!(decision.allowed);
        if spent == 1 {
            assert_eq!(
                shared_count(&db, &format!("token:{id}")),
                i64::from(jility_identity::ratelimit::AHEAD_MIN),
                "a key's first lease is a block as big as one asked ahead"
            );
        }
        // Never more than is left; less by a block at most while a lease asked ahead is
        // counted in the database and not yet here.
        let left = BIG - spent;
        assert!(
            decision.remaining <= left && decision.remaining + BIG / LEASE_SHARE >= left,
            "request {spent}: {} remaining of {left}",
            decision.remaining
        );
        if spent % 4 == 0 {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
    assert!(
        waited >= 1,
        "the first lease is asked as it is needed: {waited}"
    );
    assert!(waited <= 5, "{waited} reads waited on the database");
    std::thread::sleep(
        jility_identity::ratelimit::LEASE_TTL + std::time::Duration::from_millis(800),
    );
    assert_eq!(
        shared_count(&db, &format!("token:{id}")),
        i64::from(READS),
        "what was leased ahead and not spent was given back"
    );
}

/// Requests of token `token` (in workspace `token`) every 200 ms for `secs` seconds, each
/// allowed: how many lease statements the last `measured` seconds of them cost.
fn steady(limiter: &RateLimiter, token: i64, secs: u64, measured: u64) -> (u64, u32) {
    let start = std::time::Instant::now();
    let mut before = None;
    let mut spent = 0;
    let mut next = start;
    while start.elapsed() < std::time::Duration::from_secs(secs) {
        if before.is_none() && start.elapsed() >= std::time::Duration::from_secs(secs - measured) {
            before = Some(limiter.leases_asked());
        }
        let (decision, revoked) = limiter.check_token(token, token).unwrap();
        assert!(decision.allowed && revoked.is_none());
        spent += 1;
        next += std::time::Duration::from_millis(200);
        std::thread::sleep(next.saturating_duration_since(std::time::Instant::now()));
    }
    (limiter.leases_asked() - before.unwrap(), spent)
}

/// A token sending 5 requests a second, far below its limits, asks the database about once
/// per [`QUIET_LEASE_TTL`] once its leases have grown; one near its limit keeps leases of
/// [`LEASE_TTL`] (a statement a second or more); and what either leased and did not spend
/// goes back, so the shared counts are exactly what was spent.
#[test]
fn a_quiet_key_asks_once_per_long_lease_and_one_near_its_limit_every_second() {
    let db = TestDb::new();
    let quiet = RateLimiter::new(PgDatabase::connect(&db.url).unwrap(), BIG);
    let near = RateLimiter::new(PgDatabase::connect(&db.url).unwrap(), BIG);
    quiet.hear_revocations(true);
    near.hear_revocations(true);
    // Token 2 used 2,000 of its 6,400 thirty seconds ago: past a quarter of its limit.
    db.client()
        .execute(
            "INSERT INTO rate_limit_counts (key, seconds, counts) \
             VALUES ('token:2', ARRAY[floor(extract(epoch FROM clock_timestamp()))::bigint - 30], \
                     ARRAY[2000])",
            &[],
        )
        .unwrap();
    // 3 s for the leases to grow, then 8 s measured; both tokens at once.
    let other = near.clone();
    let busy = std::thread::spawn(move || steady(&other, 2, 11, 8));
    let (quiet_leases, quiet_spent) = steady(&quiet, 1, 11, 8);
    let (near_leases, near_spent) = busy.join().unwrap();
    eprintln!("leases in 8 s at 5/s: quiet {quiet_leases}, near its limit {near_leases}");
    assert!(
        quiet_leases <= 4,
        "a quiet token asked {quiet_leases} times in 8 s"
    );
    assert!(
        near_leases >= 6,
        "a token near its limit asked only {near_leases} times in 8 s: its leases lived longer than a second"
    );
    std::thread::sleep(QUIET_LEASE_TTL + std::time::Duration::from_millis(800));
    assert_eq!(shared_count(&db, "token:1"), i64::from(quiet_spent));
    assert_eq!(shared_count(&db, "workspace:1"), i64::from(quiet_spent));
    assert_eq!(shared_count(&db, "token:2"), 2_000 + i64::from(near_spent));
}

/// A limiter that hears revocations (as `jility serve` does, from the database's events)
/// leases a quiet token for [`QUIET_LEASE_TTL`], yet refuses it within [`LEASE_TTL`] of its
/// revocation in another process: the event drops the token's leases. When events may
/// have been missed, every lease is cut back to [`LEASE_TTL`]; and a revocation nobody
/// hears is refused when the long lease ends.
#[test]
fn a_process_with_long_leases_refuses_a_revoked_token_when_it_hears_of_it() {
    let db = TestDb::new();
    let pool = PgDatabase::connect(&db.url).unwrap();
    let tokens = jility_identity::auth::Tokens::new(&pool);
    let (alpha, _) = tokens
        .create_workspace("alpha", "bootstrap", "tester")
        .unwrap();
    let mint = |name: &str| {
        tokens
            .create(
                alpha.id,
                &jility_identity::auth::NewToken {
                    name: name.into(),
                    scopes: jility_core::token::ScopeSet::full_access(),
                    expires_at: None,
                    created_by: "tester".into(),
                },
            )
            .unwrap()
            .record
            .id
    };
    let (heard, missed, unheard) = (mint("heard"), mint("missed"), mint("unheard"));
    // Another process, hearing revocations: its relay of the database's events (as
    // `jility_api::ApiState` relays them) drops a revoked token's leases.
    let other = RateLimiter::new(PgDatabase::connect(&db.url).unwrap(), BIG);
    other.hear_revocations(true);
    let events = jility_pg::events::Events::start(&PgDatabase::connect(&db.url).unwrap());
    let mut received = events.subscribe();
    let relay = other.clone();
    std::thread::spawn(move || {
        while let Ok(event) = received.blocking_recv() {
            if let jility_pg::events::Event::Change(change) = event
                && let Some(id) = change.revoked_token
            {
                relay.forget_token(id);
            }
        }
    });
    // Each token's leases grow (1, 2, 4 … 64, 100, 100: the last one has 27 left, and a
    // token with 300 of 6,400 used is quiet); then one more request is served from the
    // lease, without the database.
    let warm = |id: i64| {
        for _ in 0..300 {
            let (decision, revoked) = other.check_token(id, alpha.id).unwrap();
            assert!(decision.allowed && revoked.is_none());
        }
    };
    let served_from_the_lease = |id: i64| {
        let asked = other.leases_asked();
        let (decision, revoked) = other.check_token(id, alpha.id).unwrap();
        assert!(decision.allowed && revoked.is_none());
        assert_eq!(other.leases_asked(), asked, "served from a lease");
    };
    let refused_within = |id: i64| {
        let since = std::time::Instant::now();
        loop {
            let (_, revoked) = other.check_token(id, alpha.id).unwrap();
            if revoked.is_some() {
                return since.elapsed();
            }
            // Slowly: the 26 requests left of its lease would last 2.6 s.
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    };
    let revoke = |id: i64| {
        tokens
            .revoke(alpha.id, &jility_identity::auth::TokenRef::Id(id))
            .unwrap();
    };
    // Heard: refused as soon as the event arrives, well within a second.
    warm(heard);
    served_from_the_lease(heard);
    revoke(heard);
    let took = refused_within(heard);
    assert!(
        took <= LEASE_TTL,
        "still served {took:?} after its revocation"
    );

    // Not heard at all (as when the listener's connection is lost unnoticed): refused when
    // the long lease ends, never later.
    warm(unheard);
    served_from_the_lease(unheard);
    let held = std::time::Instant::now();
    // Revoked behind the relay's back: straight in the database, with no event.
    db.client()
        .execute(
            "UPDATE api_tokens SET revoked_at = now()::text WHERE id = $1",
            &[&unheard],
        )
        .unwrap();
    let took = refused_within(unheard);
    assert!(
        held.elapsed() <= QUIET_LEASE_TTL + std::time::Duration::from_millis(500),
        "still served {took:?} after its revocation"
    );

    // Missed and then known to be missed (the listener reconnected): leases are cut back
    // to a second from when they were asked for.
    warm(missed);
    std::thread::sleep(LEASE_TTL);
    served_from_the_lease(missed);
    db.client()
        .execute(
            "UPDATE api_tokens SET revoked_at = now()::text WHERE id = $1",
            &[&missed],
        )
        .unwrap();
    other.revocations_missed();
    let took = refused_within(missed);
    assert!(
        took <= std::time::Duration::from_millis(300),
        "a lease older than a second was still spent {took:?} after the cut"
    );
}
