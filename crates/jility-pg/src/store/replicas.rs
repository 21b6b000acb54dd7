//! Reads from standbys (`jility serve --read-replica URL`): PostgreSQL's streaming
//! replicas take the reads of callers they can answer as well as the primary would.
//!
//! - **Whose reads.** Those of a known caller ([`as_caller`]: the API's token, an OAuth
//!   token, a person's session). Writes, reads inside a write, the identity floor's own
//!   statements, the event stream and reads with no caller stay on the primary.
//! - **Never older than what the caller wrote.** After each commit of a caller's write, the
//!   primary's WAL position is recorded for the caller (`read_positions`, in the database:
//!   every process reads it), and a read goes to a standby only when the standby's watch has
//!   seen it replay that far.
//! - **Never too far behind.** A watch thread per standby asks the primary for its WAL
//!   position, then the standby how far it replayed, every [`WATCH_EVERY`]: a standby that
//!   had replayed the primary's position read at `t` holds everything committed before `t`
//!   (the newest such `t` among the last minute's watches).
//!   One more than the bound (`--read-replica-max-lag-ms`, 2 s by default) behind, or whose
//!   watch has had no answer for [`SILENT_AFTER`], is skipped until it catches up or
//!   answers again; one a read failed on, for [`REST_AFTER`].
//! - **Never a failed read for a standby's sake.** A read that fails on a standby (stopped,
//!   restarted, a query cancelled by replay) runs again on the primary ([`Store::read`]'s
//!   closure may run twice); a whole-ticket read not answered within [`PATIENCE`] is asked
//!   of the primary. A read on a blocking connection already waiting on a standby that is
//!   paused waits until it continues (a paused process cannot be told to answer): new
//!   reads go elsewhere within [`SILENT_AFTER`].

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::Instant;

use super::*;

/// How often each standby's watch asks how far it replayed.
const WATCH_EVERY: Duration = Duration::from_millis(100);
/// How many of the primary's positions a watch keeps (a minute of them).
const SEEN: usize = 600;
/// Every how many watches the old positions are forgotten (about a minute).
const PRUNE_EVERY: u64 = 600;
/// A standby whose watch has had no answer for this long gets no new reads.
const SILENT_AFTER: Duration = Duration::from_secs(1);
/// A standby a read failed on gets no reads for this long.
const REST_AFTER: Duration = Duration::from_secs(2);
/// How long a whole-ticket read waits on a standby before it asks the primary.
pub(super) const PATIENCE: Duration = Duration::from_millis(500);
/// How long a read waits for a connection of a standby's pool before it takes the primary.
const CHECKOUT_PATIENCE: Duration = Duration::from_millis(100);
/// The default bound on how far behind a standby may be and still take reads.
pub const DEFAULT_MAX_LAG: Duration = Duration::from_secs(2);

/// The statement reading a caller's last write position (text: `X/Y`).
pub(super) const POSITION_SQL: &str = "SELECT lsn::text FROM read_positions WHERE token_id = $1";

thread_local! {
    static CALLER: Cell<Option<i64>> = const { Cell::new(None) };
}

tokio::task_local! {
    static TASK_CALLER: i64;
}

/// Run `f` (on this thread) as caller `key`: its reads may go to standbys that replayed
/// its writes, and its writes record their position.
pub fn as_caller<R>(key: i64, f: impl FnOnce() -> R) -> R {
    let before = CALLER.with(|c| c.replace(Some(key)));
    let result = f();
    CALLER.with(|c| c.set(before));
    result
}

/// [`as_caller`] for a future (awaited on its own task).
pub async fn as_caller_async<F: std::future::Future>(key: i64, f: F) -> F::Output {
    TASK_CALLER.scope(key, f).await
}

/// The caller the current thread or task works for.
pub(super) fn caller() -> Option<i64> {
    CALLER
        .with(Cell::get)
        .or_else(|| TASK_CALLER.try_with(|key| *key).ok())
}

/// A WAL position (`X/Y` in hex) as a number.
pub(super) fn parse_lsn(text: &str) -> Option<u64> {
    let (high, low) = text.trim().split_once('/')?;
    let high = u64::from_str_radix(high, 16).ok()?;
    let low = u64::from_str_radix(low, 16).ok()?;
    Some((high << 32) | low)
}

/// One standby.
pub(super) struct Replica {
    pub(super) index: usize,
    pub(super) pool: Pool,
    pub(super) reader: Arc<Reader>,
    pub(super) health: Health,
    /// The position it had replayed at its watch's last answer.
    replay: AtomicU64,
    /// When (ms since the epoch of [`Replicas`], plus one) the primary's position it had
    /// replayed was read: everything committed before then is on it. 0: never.
    fresh_at: AtomicU64,
    /// When its watch last had an answer (same clock; 0: never).
    answered: AtomicU64,
    /// When a read last failed on it (same clock; 0: never).
    failed: AtomicU64,
    /// It is in recovery (a standby), as its watch last saw.
    standby: AtomicBool,
}

/// What `/readyz` and the metrics say of a standby.
#[derive(Debug, Clone, serde::Serialize, PartialEq)]
pub struct StandbyState {
    pub standby: usize,
    /// `in_use`, `lagging`, `silent` (its watch has no answer), `resting` (a read failed on
    /// it a moment ago), `not_a_standby` (promoted, or a primary) or `unknown` (not
    /// watched yet).
    pub state: &'static str,
    /// How far behind the primary it is, as of its watch's last answer.
    pub lag_ms: Option<u64>,
}

/// The standbys of a database, and when each may take reads.
pub struct Replicas {
    pub(super) list: Vec<Arc<Replica>>,
    max_lag: Duration,
    epoch: Instant,
    next: AtomicUsize,
}

impl Replicas {
    /// Standbys at `urls` (each configured as `config_of` says), each watched against the
    /// primary at `primary`; pools and readers of `budget`'s sizes.
    pub(super) fn new(
        urls: &[String],
        max_lag: Duration,
        budget: Budget,
        primary: &Config,
        config_of: impl Fn(&str) -> StoreResult<(Config, tokio_postgres::Config)>,
    ) -> StoreResult<Arc<Self>> {
        let configs = urls
            .iter()
            .map(|url| config_of(url))
            .collect::<StoreResult<Vec<_>>>()?;
        let mut list = Vec::new();
        for (index, (config, reads)) in configs.iter().enumerate() {
            let health = Health::named(&format!("standby {index}"));
            let pool = pool(
                budget.pool,
                Manager {
                    config: config.clone(),
                    health: health.clone(),
                },
            );
            list.push(Arc::new(Replica {
                index,
                pool,
                reader: Arc::new(Reader::new(reads.clone(), budget.readers as usize)),
                health,
                replay: AtomicU64::new(0),
                fresh_at: AtomicU64::new(0),
                answered: AtomicU64::new(0),
                failed: AtomicU64::new(0),
                standby: AtomicBool::new(false),
            }));
        }
        let replicas = Arc::new(Self {
            list,
            max_lag,
            epoch: Instant::now(),
            next: AtomicUsize::new(0),
        });
        for (index, (config, _)) in configs.into_iter().enumerate() {
            let weak = Arc::downgrade(&replicas);
            let primary = primary.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("jility standby {index} watch"))
                .spawn(move || watch(&weak, index, &primary, &config));
            if let Err(err) = spawned {
                tracing::warn!(error = %err, standby = index, "cannot start watching a standby; it takes no reads");
            }
        }
        Ok(replicas)
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX - 1) + 1
    }

    /// Its state now (whatever the caller's position).
    fn state(&self, replica: &Replica) -> (&'static str, Option<u64>) {
        let now = self.now_ms();
        let answered = replica.answered.load(Ordering::Acquire);
        let fresh_at = replica.fresh_at.load(Ordering::Acquire);
        let lag = (fresh_at != 0).then(|| now.saturating_sub(fresh_at));
        let state = if answered == 0 {
            "unknown"
        } else if now.saturating_sub(answered) > SILENT_AFTER.as_millis() as u64 {
            "silent"
        } else if !replica.standby.load(Ordering::Acquire) {
            "not_a_standby"
        } else if replica.failed.load(Ordering::Acquire) != 0
            && now.saturating_sub(replica.failed.load(Ordering::Acquire))
                < REST_AFTER.as_millis() as u64
        {
            "resting"
        } else if lag.is_none_or(|lag| lag > self.max_lag.as_millis() as u64) {
            "lagging"
        } else {
            "in_use"
        };
        (state, lag)
    }

    /// Every standby's state, in the order they were given.
    pub fn states(&self) -> Vec<StandbyState> {
        self.list
            .iter()
            .map(|replica| {
                let (state, lag_ms) = self.state(replica);
                StandbyState {
                    standby: replica.index,
                    state,
                    lag_ms,
                }
            })
            .collect()
    }

    /// Whether some standby could take a read, whatever the caller's position.
    pub(super) fn any_in_use(&self) -> bool {
        self.list.iter().any(|r| self.state(r).0 == "in_use")
    }

    /// A standby that can take a read of a caller whose last write ended at `needed` (in
    /// turn among those that can), or `None`: the primary's.
    pub(super) fn choose(&self, needed: Option<u64>) -> Option<Arc<Replica>> {
        let count = self.list.len();
        let start = self.next.fetch_add(1, Ordering::Relaxed);
        (0..count)
            .filter_map(|i| self.list.get((start + i) % count))
            .find(|replica| {
                self.state(replica).0 == "in_use"
                    && needed.is_none_or(|needed| replica.replay.load(Ordering::Acquire) >= needed)
            })
            .cloned()
    }

    /// A read failed on `replica` (it may be going down): it rests a moment.
    pub(super) fn failed(&self, replica: &Replica, why: &str) {
        replica.failed.store(self.now_ms(), Ordering::Release);
        metrics::counter!(
            crate::measure::STANDBY_FALLBACKS,
            "standby" => replica.index.to_string(),
            "cause" => why.to_string()
        )
        .increment(1);
        tracing::info!(
            standby = replica.index,
            why,
            "a read on a standby failed; the primary answers it"
        );
    }

    /// A read went to `replica`.
    pub(super) fn used(replica: &Replica) {
        metrics::counter!(crate::measure::STANDBY_READS, "standby" => replica.index.to_string())
            .increment(1);
    }

    /// The connections of each standby's pool: (index, open, idle, most).
    pub fn pool_states(&self) -> Vec<(usize, u32, u32, u32)> {
        self.list
            .iter()
            .map(|r| {
                let state = r.pool.state();
                (
                    r.index,
                    state.connections,
                    state.idle_connections,
                    r.pool.max_size(),
                )
            })
            .collect()
    }
}

impl Replica {
    /// A connection of its pool, if one comes at once.
    pub(super) fn checkout(&self) -> Option<Pooled> {
        self.pool.get_timeout(CHECKOUT_PATIENCE).ok()
    }
}

/// The watch of standby `index` until its [`Replicas`] are dropped: the primary's position,
/// then how far the standby replayed, every [`WATCH_EVERY`], each on a connection of its own.
fn watch(replicas: &std::sync::Weak<Replicas>, index: usize, primary: &Config, standby: &Config) {
    let mut on_primary: Option<Client> = None;
    let mut on_standby: Option<Client> = None;
    // The primary's positions of the last watches, oldest first: the newest one the
    // standby has replayed says when it was as new as the primary (under a steady stream of
    // writes it is never quite at the primary's position of the moment).
    let mut seen: std::collections::VecDeque<(u64, u64)> = std::collections::VecDeque::new();
    let mut rounds: u64 = 0;
    loop {
        rounds += 1;
        // Positions older than any standby in use can be behind are of no use: the first
        // standby's watch forgets them (an hour old; the lag bound is ten minutes at most).
        if index == 0 && rounds.is_multiple_of(PRUNE_EVERY) {
            let _ = ask(
                &mut on_primary,
                primary,
                "DELETE FROM read_positions WHERE at < now() - interval '1 hour'",
            );
        }
        let Some(all) = replicas.upgrade() else {
            return;
        };
        let Some(replica) = all.list.get(index).cloned() else {
            return;
        };
        let asked_at = all.now_ms();
        drop(all);
        let primary_at = ask(
            &mut on_primary,
            primary,
            "SELECT pg_current_wal_lsn()::text",
        )
        .and_then(|row| row.first().and_then(|t| parse_lsn(t)));
        if let Some(position) = primary_at {
            seen.push_back((asked_at, position));
            if seen.len() > SEEN {
                seen.pop_front();
            }
        }
        let answer = ask(
            &mut on_standby,
            standby,
            "SELECT pg_is_in_recovery()::text, coalesce(pg_last_wal_replay_lsn(), '0/0')::text",
        );
        let Some(all) = replicas.upgrade() else {
            return;
        };
        // Unanswered: it goes silent, and takes no reads, once the last answer is old.
        if let Some(row) = answer {
            let in_recovery = row.first().is_some_and(|v| v == "true");
            let replayed = row.get(1).and_then(|t| parse_lsn(t)).unwrap_or(0);
            replica.standby.store(in_recovery, Ordering::Release);
            replica.replay.store(replayed, Ordering::Release);
            if in_recovery && let Some((at, _)) = seen.iter().rev().find(|(_, p)| replayed >= *p) {
                replica.fresh_at.fetch_max(*at, Ordering::AcqRel);
            }
            replica.answered.store(all.now_ms(), Ordering::Release);
        }
        drop(all);
        std::thread::sleep(WATCH_EVERY);
    }
}

/// The first row of `sql` (as text) on `client`, connecting it first when needed; `None`
/// (and the connection dropped) when it fails.
fn ask(client: &mut Option<Client>, config: &Config, sql: &str) -> Option<Vec<String>> {
    if client.as_ref().is_none_or(Client::is_closed) {
        match config.connect(NoTls) {
            Ok(connected) => *client = Some(connected),
            Err(err) => {
                tracing::debug!(error = %err, "a standby watch cannot connect");
                return None;
            }
        }
    }
    let answered = client.as_mut()?.simple_query(sql);
    match answered {
        Ok(messages) => messages.into_iter().find_map(|m| match m {
            postgres::SimpleQueryMessage::Row(row) => Some(
                (0..row.len())
                    .map(|i| row.get(i).unwrap_or_default().to_string())
                    .collect(),
            ),
            _ => None,
        }),
        Err(err) => {
            tracing::debug!(error = %err, "a standby watch's question failed");
            *client = None;
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_parse_as_postgres_writes_them() {
        assert_eq!(parse_lsn("0/0"), Some(0));
        assert_eq!(parse_lsn("16/B374D848"), Some((0x16 << 32) | 0xB374_D848));
        assert!(parse_lsn("1/FF") < parse_lsn("2/0"));
        assert_eq!(parse_lsn("nonsense"), None);
        assert_eq!(parse_lsn("1/zz"), None);
    }

    #[test]
    fn a_caller_is_known_on_its_thread_only_while_it_runs() {
        assert_eq!(caller(), None);
        as_caller(7, || {
            assert_eq!(caller(), Some(7));
            as_caller(8, || assert_eq!(caller(), Some(8)));
            assert_eq!(caller(), Some(7));
        });
        assert_eq!(caller(), None);
    }
}
