//! Two `jility serve` processes on one database, in the cloud benchmark:
//!
//! - **throughput**: the [`CLIENTS`] GET clients split between the run's server and a second
//!   one started on the same database (client `c` on process `c % 2`: 16 and 16), measured
//!   as the single process is ([`read_throughput`]);
//! - **the rate limit is shared**: two fresh processes on the same database with
//!   `--rate-limit` [`LIMIT`] (and `JILITY_WORKSPACE_RATE_LIMIT` out of the way, so that only
//!   the token's limit can refuse: the workspace has just answered hundreds of thousands of
//!   requests), and one fresh token sending [`SENT`] `GET /tickets/{KEY-N}` within a second
//!   or two, alternately to one process and the other, one at a time; then another fresh
//!   token the same from [`SENDERS`] concurrent senders (half on each process). Every answer
//!   must be 200 or 429; the 200s must be at least [`LIMIT`] and at most [`LIMIT`] +
//!   [`TOLERANCE`].

use super::*;

/// `--rate-limit` of the two processes of the shared-limit check (requests per minute).
pub const LIMIT: usize = 60;
/// Requests sent with each token, well within a minute.
pub const SENT: usize = 100;
/// Senders of the concurrent variant.
pub const SENDERS: usize = 4;
/// Allowed requests over [`LIMIT`] that still pass: none, as the rate limiter counts every
/// request in PostgreSQL under row locks (`jility_cloud::ratelimit`).
pub const TOLERANCE: usize = 0;

pub struct RateCheck {
    /// Sent one at a time, alternately to each process: (allowed, refused).
    pub alternating: (usize, usize),
    /// Sent by [`SENDERS`] at once: (allowed, refused).
    pub concurrent: (usize, usize),
    pub took: Duration,
}

impl RateCheck {
    pub fn met(&self) -> bool {
        [self.alternating, self.concurrent]
            .iter()
            .all(|(allowed, _)| (LIMIT..=LIMIT + TOLERANCE).contains(allowed))
    }
}

/// `SENT` requests with `token`, `senders` at once, sender `s` on `bases[s % len]` (one
/// sender: alternately on each): (allowed, refused).
async fn count(bases: &[&str], token: &str, senders: usize) -> (usize, usize) {
    let mut tasks = JoinSet::new();
    for s in 0..senders {
        let http = http_client();
        let token = token.to_string();
        let bases: Vec<String> = bases.iter().map(|b| b.to_string()).collect();
        tasks.spawn(async move {
            let mut rng = Rng(0x1141_7000 + s as u64);
            let (mut allowed, mut refused) = (0, 0);
            for i in (s..SENT).step_by(senders) {
                let base = &bases[if senders == 1 { i } else { s } % bases.len()];
                let url = format!("{base}/tickets/{KEY}-{}", rng.range(1, TICKETS));
                let (status, body) = get(&http, &url, &token).await;
                match status {
                    200 => allowed += 1,
                    429 => refused += 1,
                    _ => panic!("GET {url}: {status} {body}"),
                }
            }
            (allowed, refused)
        });
    }
    let (mut allowed, mut refused) = (0, 0);
    while let Some(done) = tasks.join_next().await {
        let (a, r) = done.unwrap();
        allowed += a;
        refused += r;
    }
    (allowed, refused)
}

/// The shared-limit check, with two fresh tokens (`tokens[0]` one at a time, `tokens[1]`
/// concurrently), on two processes started now and stopped after.
pub async fn rate_limit_shared(bin: &Path, database_url: &str, tokens: &[String]) -> RateCheck {
    let limit = LIMIT.to_string();
    let env = [("JILITY_WORKSPACE_RATE_LIMIT", "1000000000")];
    let one = Server::start_with(bin, database_url, &limit, &env);
    let two = Server::start_with(bin, database_url, &limit, &env);
    let bases = [one.url.as_str(), two.url.as_str()];
    let t = Instant::now();
    let alternating = count(&bases, &tokens[0], 1).await;
    let concurrent = count(&bases, &tokens[1], SENDERS).await;
    let took = t.elapsed();
    for log in [one.stop(), two.stop()] {
        let lines = problems(&log);
        for line in lines.iter().take(3) {
            eprintln!("  rate-limited server: {line}");
        }
        if lines.len() > 3 {
            eprintln!("  rate-limited server: … {} such lines in all", lines.len());
        }
    }
    RateCheck {
        alternating,
        concurrent,
        took,
    }
}
