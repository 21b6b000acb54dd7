//! How many audit entries requests without a valid principal may cause: a client with no
//! credential must not be able to fill the database by being refused in a loop.
//!
//! Every refusal of the bearer token ([`super::middleware`]) is attributed to a *source*:
//!
//! - a token that exists but expired or was revoked: that token (by its BLAKE3 hash, the
//!   form the database keeps; never the token), so its entries stay under its workspace;
//! - anything else (no token, a malformed or an unknown one): the client's address (an
//!   IPv6 client by its /64). A token the server does not know is not a source of its own:
//!   a client could send a new one with every request.
//!
//! Per window of one minute (aligned on the clock, per server process):
//!
//! - a source has at most [`PER_SOURCE`] refusals recorded as entries of their own; the
//!   sources of the second kind together at most [`ANONYMOUS_PER_WINDOW`];
//! - further refusals are counted here, by reason, and recorded as one entry per source
//!   when the window ends (`auth.failed`, 401, detail `N more refusals suppressed (…)`),
//!   by a task that wakes at each window's end, or by the next refusal recorded, whichever
//!   comes first, and when the server stops;
//! - at most [`MAX_SOURCES`] sources are tracked; the refusals of any other source (and
//!   those of a client that had no entry before the budget ran out) are counted together
//!   and summed up in one entry under no workspace.
//!
//! So refusals cause at most about `2 × ANONYMOUS_PER_WINDOW + 1` entries per minute under
//! no workspace, and `PER_SOURCE + 1` per expired or revoked token, however many requests
//! are sent; and none goes uncounted (only a process killed before its window ends loses
//! its counts).
//!
//! A refusal never waits on the database: the entries and summaries are handed to a writer
//! thread of their own through a bounded queue ([`Refusals::with_writer`]), so a request
//! without a valid credential is answered at once even while the database is slow, frozen
//! or down. A refusal that finds the queue full is counted in its source's summary instead. Refusals of authenticated principals (a scope refused, a write refused by
//! the tracker) are not counted here: each is one request, counted by the token's rate
//! limit ([`crate::ratelimit`]).

use std::collections::HashMap;
use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, SecondsFormat, Utc};

use crate::audit::{AUTH_FAILED, Audit, NewEntry};

/// Refusals of one source recorded as entries of their own per window.
pub const PER_SOURCE: u32 = 10;

/// Refusals of every client without a known token together recorded per window.
pub const ANONYMOUS_PER_WINDOW: u32 = 600;

/// Most sources tracked at once.
pub const MAX_SOURCES: usize = 10_000;

/// The window, in seconds.
pub const WINDOW_SECS: i64 = 60;

/// Why a token was refused, as the audit log names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    Missing,
    Malformed,
    Unknown,
    Expired,
    Revoked,
}

impl Reason {
    const ALL: [Reason; 5] = [
        Reason::Missing,
        Reason::Malformed,
        Reason::Unknown,
        Reason::Expired,
        Reason::Revoked,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Reason::Missing => "missing",
            Reason::Malformed => "malformed",
            Reason::Unknown => "unknown",
            Reason::Expired => "expired",
            Reason::Revoked => "revoked",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// Where refusals come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Source {
    /// A client address (IPv4, or an IPv6 /64), for refusals that name no known token.
    Client(IpAddr),
    /// A known (expired or revoked) token, by its BLAKE3 hash.
    Token([u8; 32]),
    /// Every source beyond the table or the budget, together.
    Others,
}

impl Source {
    /// The source of a refusal from `client` (unknown: the unspecified address).
    pub fn client(client: Option<IpAddr>) -> Self {
        let ip = match client.map(|ip| ip.to_canonical()) {
            None => IpAddr::V4(Ipv4Addr::UNSPECIFIED),
            Some(IpAddr::V4(v4)) => IpAddr::V4(v4),
            Some(IpAddr::V6(v6)) => {
                let bits = u128::from(v6) & !((1u128 << 64) - 1);
                IpAddr::V6(Ipv6Addr::from(bits))
            }
        };
        Self::Client(ip)
    }

    /// The source of a refusal of `token` (expired or revoked).
    pub fn token(token: &str) -> Self {
        Self::Token(*blake3::hash(token.trim().as_bytes()).as_bytes())
    }

    fn anonymous(&self) -> bool {
        !matches!(self, Source::Token(_))
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Client(ip) if ip.is_unspecified() => f.write_str("an unknown address"),
            Source::Client(IpAddr::V6(v6)) => write!(f, "{v6}/64"),
            Source::Client(ip) => write!(f, "{ip}"),
            Source::Token(_) => f.write_str("this token"),
            Source::Others => f.write_str("other sources"),
        }
    }
}

/// The refusals of one source in the current window.
#[derive(Debug, Default, Clone)]
struct Tally {
    recorded: u32,
    suppressed: [u64; 5],
}

impl Tally {
    fn suppressed(&self) -> u64 {
        self.suppressed.iter().sum()
    }

    fn summary(&self, source: Source, window_start: i64) -> Option<Summary> {
        (self.suppressed() > 0).then_some(Summary {
            source,
            window_start,
            suppressed: self.suppressed,
        })
    }
}

/// The refusals of one source that had no entry of their own in one window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    pub source: Source,
    /// The window's start, in Unix seconds.
    pub window_start: i64,
    /// By [`Reason`], in its order.
    suppressed: [u64; 5],
}

impl Summary {
    pub fn total(&self) -> u64 {
        self.suppressed.iter().sum()
    }

    /// The entry's detail: `N more refusals suppressed (unknown 480, missing 10) from
    /// 203.0.113.7 in the minute from 2026-05-04T12:00:00Z`.
    pub fn detail(&self) -> String {
        let total = self.total();
        let reasons = Reason::ALL
            .iter()
            .filter_map(|r| {
                let n = self.suppressed[r.index()];
                (n > 0).then(|| format!("{} {n}", r.as_str()))
            })
            .collect::<Vec<_>>()
            .join(", ");
        let start = DateTime::<Utc>::from_timestamp(self.window_start, 0)
            .map(|t| t.to_rfc3339_opts(SecondsFormat::Secs, true))
            .unwrap_or_else(|| self.window_start.to_string());
        let plural = if total == 1 { "refusal" } else { "refusals" };
        format!(
            "{total} more {plural} suppressed ({reasons}) from {} in the minute from {start}",
            self.source
        )
    }
}

/// What [`Refusals::admit`] decided.
#[derive(Debug)]
pub struct Admission {
    /// Record this refusal as an entry of its own.
    pub record: bool,
    /// This refusal is its source's first suppressed one of the window.
    pub first_suppressed: bool,
    /// The summaries of the window that just ended, to record first.
    pub ended: Vec<Summary>,
}

#[derive(Default)]
struct Table {
    window_start: i64,
    sources: HashMap<Source, Tally>,
    anonymous_recorded: u32,
    others: Tally,
}

impl Table {
    /// Roll over to the window of `now` (Unix seconds) if it is a new one: the summaries of
    /// the one that ended.
    fn roll(&mut self, now: i64) -> Vec<Summary> {
        let window_start = now.div_euclid(WINDOW_SECS) * WINDOW_SECS;
        if window_start == self.window_start {
            return Vec::new();
        }
        self.take(window_start)
    }

    /// Every summary so far, and a fresh window starting at `window_start`.
    fn take(&mut self, window_start: i64) -> Vec<Summary> {
        let ended = std::mem::replace(
            self,
            Table {
                window_start,
                ..Table::default()
            },
        );
        let mut summaries: Vec<Summary> = ended
            .sources
            .iter()
            .filter_map(|(source, tally)| tally.summary(*source, ended.window_start))
            .collect();
        summaries.sort_by_key(|s| s.source);
        summaries.extend(ended.others.summary(Source::Others, ended.window_start));
        summaries
    }

    /// Count a refusal of `source` whose entry could not be written as suppressed.
    fn count(&mut self, source: Source, reason: Reason) {
        let tally = match self.sources.get_mut(&source) {
            Some(tally) => tally,
            None => &mut self.others,
        };
        tally.suppressed[reason.index()] += 1;
    }

    fn admit(&mut self, source: Source, reason: Reason, now: i64) -> Admission {
        let ended = self.roll(now);
        let anonymous = source.anonymous();
        let budget_left = !anonymous || self.anonymous_recorded < ANONYMOUS_PER_WINDOW;
        let tracked =
            self.sources.contains_key(&source) || (budget_left && self.sources.len() < MAX_SOURCES);
        let tally = if tracked {
            self.sources.entry(source).or_default()
        } else {
            &mut self.others
        };
        let record = tracked && budget_left && tally.recorded < PER_SOURCE;
        let first_suppressed = !record && tally.suppressed() == 0;
        if record {
            tally.recorded += 1;
        } else {
            tally.suppressed[reason.index()] += 1;
        }
        if record && anonymous {
            self.anonymous_recorded += 1;
        }
        Admission {
            record,
            first_suppressed,
            ended,
        }
    }
}

/// Entries waiting for the writer thread, at most.
const QUEUE: usize = 4096;

/// What the writer thread records.
enum Job {
    Entry(Source, Reason),
    Summaries(Vec<Summary>),
    /// Answered once everything queued before it is written.
    Flush(std::sync::mpsc::Sender<()>),
}

/// The refusals of the current window, per source (shared by the clones); with a writer
/// thread ([`Self::with_writer`]), or writing on the caller's thread (tests).
#[derive(Clone, Default)]
pub struct Refusals {
    table: Arc<Mutex<Table>>,
    writer: Option<std::sync::mpsc::SyncSender<Job>>,
}

impl Refusals {
    /// Refusals recorded in `audit` by a thread of their own, which ends when the last
    /// clone is dropped.
    pub fn with_writer(audit: Audit) -> Self {
        let (queue, jobs) = std::sync::mpsc::sync_channel::<Job>(QUEUE);
        let spawned = std::thread::Builder::new()
            .name("jility refusals".into())
            .spawn(move || {
                for job in jobs {
                    match job {
                        Job::Entry(source, reason) => {
                            let owner = owner(&audit, source);
                            audit.record(&entry(owner.as_ref(), reason.as_str()));
                        }
                        Job::Summaries(summaries) => write_summaries(&audit, &summaries),
                        Job::Flush(done) => {
                            let _ = done.send(());
                        }
                    }
                }
            });
        match spawned {
            Ok(_) => Self {
                table: Arc::default(),
                writer: Some(queue),
            },
            Err(err) => {
                tracing::warn!(error = %err, "cannot start the refusals' writer: refusals are written as they come");
                Self::default()
            }
        }
    }

    /// Wait (blocking) until what was handed to the writer so far is written, at most
    /// `timeout`: whether it was.
    pub fn flush(&self, timeout: Duration) -> bool {
        let Some(queue) = &self.writer else {
            return true;
        };
        let (done, written) = std::sync::mpsc::channel();
        send_within(queue, Job::Flush(done), timeout) && written.recv_timeout(timeout).is_ok()
    }

    /// Hand `summaries` to the writer (or write them now, without one).
    pub fn write(&self, audit: &Audit, summaries: Vec<Summary>) {
        if summaries.is_empty() {
            return;
        }
        match &self.writer {
            None => write_summaries(audit, &summaries),
            Some(queue) => {
                if let Err(err) = queue.try_send(Job::Summaries(summaries)) {
                    let lost = match err {
                        std::sync::mpsc::TrySendError::Full(Job::Summaries(s))
                        | std::sync::mpsc::TrySendError::Disconnected(Job::Summaries(s)) => s,
                        _ => Vec::new(),
                    };
                    for summary in lost {
                        tracing::warn!(detail = %summary.detail(), "the audit log's writer is behind: this summary of refusals is only logged");
                    }
                }
            }
        }
    }

    /// Count a refusal of `reason` from `source` at `now` (Unix seconds).
    pub fn admit(&self, source: Source, reason: Reason, now: i64) -> Admission {
        match self.table.lock() {
            Ok(mut table) => table.admit(source, reason, now),
            // Never happens (nothing panics under the lock); record rather than lose it.
            Err(_) => Admission {
                record: true,
                first_suppressed: false,
                ended: Vec::new(),
            },
        }
    }

    /// The summaries of the window that ended before `now`, if it has not been rolled over
    /// yet.
    pub fn ended(&self, now: i64) -> Vec<Summary> {
        self.table
            .lock()
            .map(|mut table| table.roll(now))
            .unwrap_or_default()
    }

    /// The summaries of the current window so far (the server stops).
    pub fn drain(&self) -> Vec<Summary> {
        self.table
            .lock()
            .map(|mut table| {
                let start = table.window_start;
                table.take(start)
            })
            .unwrap_or_default()
    }

    /// Record the refusal of `reason` from `source` in the audit log, or count it; first
    /// record the summaries of the window that ended, if any. Never waits on the database
    /// with a writer thread (blocking without one). The workspace of a [`Source::Token`] is
    /// looked up only when an entry is written.
    pub fn record(&self, audit: &Audit, source: Source, reason: Reason) {
        let admission = self.admit(source, reason, Utc::now().timestamp());
        self.write(audit, admission.ended);
        if admission.first_suppressed {
            tracing::warn!(
                %source,
                per_source = PER_SOURCE,
                anonymous_per_window = ANONYMOUS_PER_WINDOW,
                "too many refused requests: further refusals of this source are counted and recorded as one audit entry when the minute ends"
            );
        }
        if !admission.record {
            return;
        }
        match &self.writer {
            None => {
                let owner = owner(audit, source);
                audit.record(&entry(owner.as_ref(), reason.as_str()));
            }
            // The queue is full (the database has not answered for a while): counted in the
            // source's summary instead of waiting.
            Some(queue) => {
                if queue.try_send(Job::Entry(source, reason)).is_err()
                    && let Ok(mut table) = self.table.lock()
                {
                    table.count(source, reason);
                }
            }
        }
    }
}

/// `job` into `queue`, waiting at most `timeout` for room (std's `SyncSender` has no
/// timed send): whether it went in.
fn send_within(queue: &std::sync::mpsc::SyncSender<Job>, mut job: Job, timeout: Duration) -> bool {
    let deadline = std::time::Instant::now() + timeout;
    loop {
        match queue.try_send(job) {
            Ok(()) => return true,
            Err(std::sync::mpsc::TrySendError::Full(back))
                if std::time::Instant::now() < deadline =>
            {
                job = back;
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(_) => return false,
        }
    }
}

/// The audit entry of an authentication failure: `detail` (its reason, or a summary;
/// never the token), under the token's workspace when it has one.
pub fn entry<'a>(owner: Option<&'a (i64, i64, String)>, detail: &'a str) -> NewEntry<'a> {
    NewEntry {
        workspace_id: owner.map(|o| o.0),
        token_id: owner.map(|o| o.1),
        actor: owner.map(|o| o.2.as_str()),
        operation: AUTH_FAILED,
        ticket: None,
        status: axum::http::StatusCode::UNAUTHORIZED.as_u16(),
        detail: Some(detail),
    }
}

fn owner(audit: &Audit, source: Source) -> Option<(i64, i64, String)> {
    match source {
        Source::Token(hash) => audit.owner_of_hash(&hash),
        Source::Client(_) | Source::Others => None,
    }
}

/// Record `summaries` (blocking).
pub fn write_summaries(audit: &Audit, summaries: &[Summary]) {
    for summary in summaries {
        let detail = summary.detail();
        tracing::info!(
            source = %summary.source,
            suppressed = summary.total(),
            "recording the refusals suppressed in a minute as one audit entry"
        );
        let owner = owner(audit, summary.source);
        audit.record(&entry(owner.as_ref(), &detail));
    }
}

/// Record the summaries of each window when it ends, until the task is dropped.
pub async fn record_at_window_ends(refusals: Refusals, audit: Audit) {
    loop {
        let now = Utc::now();
        let next = (now.timestamp().div_euclid(WINDOW_SECS) + 1) * WINDOW_SECS;
        let wait_ms = (next * 1000 - now.timestamp_millis()).max(0);
        // A moment past the end, so that the window has surely ended on this clock.
        let wait = Duration::from_millis(u64::try_from(wait_ms).unwrap_or_default() + 50);
        tokio::time::sleep(wait).await;
        refusals.write(&audit, refusals.ended(Utc::now().timestamp()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: i64 = 1_800_000_000 - 1_800_000_000 % WINDOW_SECS;

    fn ip(text: &str) -> Source {
        Source::client(Some(text.parse().unwrap()))
    }

    #[test]
    fn a_source_gets_its_entries_then_a_summary() {
        let mut table = Table::default();
        let source = ip("203.0.113.7");
        let mut recorded = 0;
        let mut first = 0;
        for i in 0..500 {
            let reason = if i % 2 == 0 {
                Reason::Unknown
            } else {
                Reason::Missing
            };
            let admission = table.admit(source, reason, T0 + 5);
            recorded += u32::from(admission.record);
            first += u32::from(admission.first_suppressed);
            assert!(admission.ended.is_empty());
        }
        assert_eq!(recorded, PER_SOURCE);
        assert_eq!(first, 1);
        // The next refusal, a minute later, ends the window: its summary first, then an
        // entry of its own.
        let next = table.admit(source, Reason::Unknown, T0 + WINDOW_SECS);
        assert!(next.record);
        assert_eq!(next.ended.len(), 1);
        let summary = &next.ended[0];
        assert_eq!(summary.total(), 490);
        assert_eq!(summary.window_start, T0);
        let detail = summary.detail();
        assert!(
            detail.starts_with("490 more refusals suppressed (missing 245, unknown 245) from 203.0.113.7 in the minute from "),
            "{detail}"
        );
        assert!(detail.chars().count() <= 200, "{detail}");
        assert!(table.drain_for_test().is_empty());
    }

    #[test]
    fn sources_are_separate_and_ipv6_counts_by_64() {
        let mut table = Table::default();
        for _ in 0..PER_SOURCE {
            assert!(table.admit(ip("192.0.2.1"), Reason::Unknown, T0).record);
        }
        assert!(!table.admit(ip("192.0.2.1"), Reason::Unknown, T0).record);
        assert!(table.admit(ip("192.0.2.2"), Reason::Unknown, T0).record);
        assert_eq!(ip("::ffff:192.0.2.2"), ip("192.0.2.2"));
        assert_eq!(ip("2001:db8:1:2::1"), ip("2001:db8:1:2:ffff::9"));
        assert_ne!(ip("2001:db8:1:2::1"), ip("2001:db8:1:3::1"));
        assert_eq!(ip("2001:db8:1:2::1").to_string(), "2001:db8:1:2::/64");
        assert_eq!(Source::client(None).to_string(), "an unknown address");
        // A known token is a source of its own, whatever the address.
        let token = Source::token("jil_live_whatever");
        for _ in 0..PER_SOURCE {
            assert!(table.admit(token, Reason::Revoked, T0).record);
        }
        assert!(!table.admit(token, Reason::Revoked, T0).record);
        let summaries = table.drain_for_test();
        assert_eq!(summaries.len(), 2);
        assert_eq!(summaries[0].source, ip("192.0.2.1"));
        assert_eq!(summaries[1].source, token);
        assert!(
            summaries[1]
                .detail()
                .starts_with("1 more refusal suppressed (revoked 1) from this token"),
            "{}",
            summaries[1].detail()
        );
    }

    #[test]
    fn the_anonymous_budget_and_the_table_are_bounded() {
        let mut table = Table::default();
        let mut recorded = 0u32;
        // Many addresses, three refusals each.
        for n in 0..100_000u32 {
            let source = Source::client(Some(IpAddr::V4(Ipv4Addr::from(0x0a00_0000 + n))));
            for _ in 0..3 {
                recorded += u32::from(table.admit(source, Reason::Unknown, T0).record);
            }
        }
        assert_eq!(recorded, ANONYMOUS_PER_WINDOW);
        assert!(table.sources.len() <= MAX_SOURCES);
        // Known tokens still get their entries, up to the table's size.
        assert!(
            table
                .admit(Source::token("jil_live_a"), Reason::Expired, T0)
                .record
        );
        let summaries = table.drain_for_test();
        let total: u64 = summaries.iter().map(Summary::total).sum();
        assert_eq!(total, 300_000 - u64::from(ANONYMOUS_PER_WINDOW));
        // One summary per source that had entries, and one for the others.
        assert!(summaries.len() <= ANONYMOUS_PER_WINDOW as usize + 1);
        assert_eq!(summaries.last().map(|s| s.source), Some(Source::Others));
        assert!(
            summaries
                .last()
                .is_some_and(|s| s.detail().contains("from other sources"))
        );

        // A full table: new sources are counted together.
        let mut table = Table::default();
        for n in 0..MAX_SOURCES {
            let token = Source::token(&format!("jil_live_{n}"));
            assert!(table.admit(token, Reason::Revoked, T0).record);
        }
        let more = Source::token("jil_live_one_more");
        assert!(!table.admit(more, Reason::Revoked, T0).record);
        assert_eq!(table.sources.len(), MAX_SOURCES);
        let summaries = table.drain_for_test();
        assert_eq!(summaries.len(), 1);
        assert_eq!(summaries[0].source, Source::Others);
    }

    #[test]
    fn refusals_roll_over_with_the_clock() {
        let refusals = Refusals::default();
        let source = ip("198.51.100.1");
        for _ in 0..(PER_SOURCE + 3) {
            refusals.admit(source, Reason::Malformed, T0 + 1);
        }
        assert!(refusals.ended(T0 + 59).is_empty());
        let ended = refusals.ended(T0 + 61);
        assert_eq!(ended.len(), 1);
        assert_eq!(ended[0].total(), 3);
        // Taken once.
        assert!(
            refusals
                .admit(source, Reason::Malformed, T0 + 62)
                .ended
                .is_empty()
        );
        for _ in 0..(PER_SOURCE + 1) {
            refusals.admit(source, Reason::Malformed, T0 + 62);
        }
        // The server stops: what was suppressed so far.
        let drained = refusals.drain();
        assert_eq!(drained.len(), 1);
        assert_eq!(drained[0].total(), 2);
        assert!(refusals.drain().is_empty());
        assert_eq!(drained[0].window_start, T0 + WINDOW_SECS);
    }

    impl Table {
        fn drain_for_test(&mut self) -> Vec<Summary> {
            let start = self.window_start;
            self.take(start)
        }
    }
}
