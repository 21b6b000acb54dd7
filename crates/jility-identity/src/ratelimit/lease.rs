//! The requests a process has leased from the shared count and not spent yet, per key.
//!
//! A lease is a block of requests counted in the database in one statement
//! (`jility_rate_lease`, migration 0013) and spent here without asking again, for at most
//! [`LEASE_TTL`] after it was asked for — [`QUIET_LEASE_TTL`] for a quiet key's lease when
//! the limiter hears revocations (see the module above) — ; what is left then goes back to
//! the shared count (`jility_rate_return`), from a sweeper thread that runs while the
//! limiter lives. A
//! lease's size adapts to the key's traffic: a key's first is [`AHEAD_MIN`] (never above the
//! share below; what it leaves unspent goes back), then it doubles each time a block was
//! spent before it expired and halves when one expired half unspent, between 1 and a share
//! ([`LEASE_SHARE`]) of the smaller limit. A key whose limits are under `LEASE_SHARE × 2`
//! a minute is therefore counted one request per statement, exactly as before leases.
//!
//! A busy key's next lease is asked for ahead of need: when a request spends from a block of
//! at least [`AHEAD_MIN`] and what is left falls to half of it, or the block is in the
//! last quarter of its life, the lease is asked for in the background while requests go on
//! spending the old one ([`Book::spend`] answers what to ask for). So no request of a busy
//! key waits on the database, and the count is as exact as before: a lease asked ahead is
//! counted when it is granted, and what is left of it at its end goes back like any block.
//!
//! A refusal is kept for the key (at most a second, never past the time a slot frees), so a
//! caller hammering past its limit costs the database one statement a second per process.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use super::Decision;

/// A leased request is spent within this long after its lease was asked for, or given back.
pub const LEASE_TTL: Duration = Duration::from_secs(1);

/// The longest any lease lives, in whole seconds: a quiet key's ([`QUIET_LEASE_TTL`]). The
/// windows every process reads are this much wider than 60 s (`WINDOW_SECS`).
pub const QUIET_LEASE_SECS: u16 = 4;

/// How long a quiet key's lease lives (a key whose counts, with the lease, are at most
/// 1/[`QUIET_SHARE`] of each of its limits as the database answered), when the limiter is
/// told of every revocation ([`super::RateLimiter::hear_revocations`]).
pub const QUIET_LEASE_TTL: Duration = Duration::from_secs(QUIET_LEASE_SECS as u64);

/// A key is quiet while its counts are at most this fraction of its limits.
pub const QUIET_SHARE: i64 = 4;

/// A lease is at most this fraction of the smaller of its key's limits.
pub const LEASE_SHARE: u32 = 64;

/// A key's next lease is asked for ahead of need only from blocks this big (a busy key): a
/// key spending a request or two a second is asked for as it comes, as before.
pub const AHEAD_MIN: u32 = 8;

/// A key's first lease, at most (never above its share of the limits, [`LEASE_SHARE`]): as
/// big as a block asked ahead of need ([`AHEAD_MIN`]).
const FIRST_LEASE: u32 = AHEAD_MIN;

/// How often the sweeper gives back expired leases.
const SWEEP_EVERY: Duration = Duration::from_millis(250);

/// A key with nothing leased and no request for this long is forgotten.
const IDLE: Duration = Duration::from_secs(30);

/// What the database last said of a key's windows (counts include every lease of every
/// process, the unspent parts of this process's leases among them).
#[derive(Clone, Copy, Debug)]
pub(super) struct Seen {
    pub token_used: i32,
    pub token_frees_at: f64,
    pub workspace_used: i32,
    pub workspace_frees_at: f64,
    /// The database's clock when it answered, and our clock then.
    pub now: f64,
    pub at: Instant,
}

impl Seen {
    /// The database's clock now, estimated from the last answer.
    pub fn now(&self) -> f64 {
        self.now + self.at.elapsed().as_secs_f64()
    }
}

/// Requests of one lease not spent yet.
struct Block {
    /// The second they are counted in (database clock).
    second: i64,
    /// When it was asked for: a long lease is cut to [`LEASE_TTL`] from then when
    /// revocations may have been missed ([`Book::cut_long_leases`]).
    asked_at: Instant,
    expires: Instant,
    size: u32,
    left: u32,
}

/// A key's leases in this process (for one workspace: a person's key is counted in each of
/// their workspaces apart).
struct Lease {
    /// The key in the database, and the workspace whose ceiling it is counted against.
    key: String,
    workspace: Option<String>,
    blocks: VecDeque<Block>,
    /// Size of the next lease asked for.
    next: u32,
    /// A lease of `next` is being asked for (others ask for one request meanwhile).
    asking: bool,
    /// A block was spent in full before it expired: the next lease doubles (up to the
    /// cap [`Book::take`] is given).
    grow: bool,
    seen: Option<Seen>,
    refused: Option<(Instant, Decision)>,
    used_at: Instant,
    /// A lease asked ahead failed (the database down): none is asked ahead before this.
    ahead_after: Option<Instant>,
}

impl Lease {
    fn new(key: &str, workspace: Option<&str>) -> Self {
        Self {
            key: key.to_string(),
            workspace: workspace.map(str::to_string),
            blocks: VecDeque::new(),
            next: 1,
            asking: false,
            grow: false,
            seen: None,
            refused: None,
            used_at: Instant::now(),
            ahead_after: None,
        }
    }

    fn left(&self) -> u32 {
        self.blocks.iter().map(|b| b.left).sum()
    }

    /// The size of the next lease to ask for, the key marked as asking.
    fn ask(&mut self, cap: u32) -> u32 {
        // A key's first lease: [`FIRST_LEASE`] when its limits allow (what it leaves unspent
        // goes back), so a token sending a few requests a second reaches a block asked ahead
        // of need after one lease its requests wait for, not four.
        if self.seen.is_none() && self.blocks.is_empty() {
            self.next = self.next.max(FIRST_LEASE.min(cap.max(1)));
        }
        // The last block was spent in full while it was good (a lone request is spent as it
        // comes): the key needs bigger ones.
        if self.grow {
            self.next = self.next.saturating_mul(2).min(cap.max(1));
            self.grow = false;
        }
        self.asking = true;
        self.next
    }

    /// Whether to ask for the next lease now, ahead of need ([`AHEAD_MIN`]): what it is.
    fn ahead(&mut self, now: Instant, cap: u32) -> Option<u32> {
        if self.asking
            || self.refused.is_some()
            || self.seen.is_none()
            || self.ahead_after.is_some_and(|after| now < after)
        {
            return None;
        }
        let newest = self.blocks.back()?;
        if newest.size < AHEAD_MIN {
            return None;
        }
        let low = self.left().saturating_mul(2) <= newest.size;
        let ending = newest.expires.saturating_duration_since(now) <= LEASE_TTL / 4;
        (low || ending).then(|| self.ask(cap))
    }

    /// Move expired blocks to `returns` (with what is left of them) and shrink the next
    /// lease if they went half unspent.
    fn expire(&mut self, now: Instant, returns: &mut Returns) {
        while let Some(block) = self.blocks.front() {
            if block.expires > now && block.left > 0 {
                break;
            }
            if block.left > 0 {
                if block.left * 2 >= block.size {
                    self.next = (self.next / 2).max(1);
                    self.grow = false;
                }
                returns.add(
                    &self.key,
                    self.workspace.as_deref(),
                    block.second,
                    block.left,
                );
            }
            self.blocks.pop_front();
        }
    }
}

/// Requests to give back: key, second, count.
#[derive(Default)]
pub(super) struct Returns {
    pub keys: Vec<String>,
    pub seconds: Vec<i64>,
    pub counts: Vec<i32>,
}

impl Returns {
    pub fn add(&mut self, key: &str, workspace: Option<&str>, second: i64, left: u32) {
        let count = i32::try_from(left).unwrap_or(i32::MAX);
        for key in std::iter::once(key).chain(workspace) {
            self.keys.push(key.to_string());
            self.seconds.push(second);
            self.counts.push(count);
        }
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
}

/// What [`Book::take`] found for a request.
pub(super) enum Taken {
    /// Spent a leased request: the decision to give (allowed).
    Spent(Decision),
    /// Refused moments ago, and still.
    Refused(Decision),
    /// Nothing leased: ask the database for `wanted` (the caller is the key's asker when
    /// `asker`, and must [`Book::settle`] either way).
    Ask { wanted: u32, asker: bool },
}

/// The book's entry of `key` counted in `workspace`.
fn entry(key: &str, workspace: Option<&str>) -> String {
    match workspace {
        Some(workspace) => format!("{key}\u{0}{workspace}"),
        None => key.to_string(),
    }
}

/// Every key's leases (shared by the limiter's clones and the sweeper).
#[derive(Default)]
pub(super) struct Book {
    leases: Mutex<HashMap<String, Lease>>,
    /// Expired blocks waiting for the sweeper.
    returns: Mutex<Returns>,
}

impl Book {
    /// Spend a leased request of `key`, or say what to ask the database for.
    pub fn take(
        &self,
        key: &str,
        workspace: Option<&str>,
        cap: u32,
        decide: impl Fn(&Seen, u32) -> Decision,
    ) -> Taken {
        let Ok(mut leases) = self.leases.lock() else {
            return Taken::Ask {
                wanted: 1,
                asker: false,
            };
        };
        // After the lock: a wait for it must not spend a block past its time.
        let now = Instant::now();
        let lease = leases
            .entry(entry(key, workspace))
            .or_insert_with(|| Lease::new(key, workspace));
        lease.used_at = now;
        let mut returns = Returns::default();
        lease.expire(now, &mut returns);
        if !returns.is_empty() {
            self.queue(returns);
        }
        // What is leased is spent first: it was counted, whatever was refused since.
        if let Some(block) = lease.blocks.iter_mut().find(|b| b.left > 0) {
            block.left -= 1;
            if block.left == 0 {
                lease.grow = true;
            }
            let left = lease.left();
            if let Some(seen) = &lease.seen {
                return Taken::Spent(decide(seen, left));
            }
        }
        if let Some((until, decision)) = lease.refused {
            if now < until {
                let mut decision = decision;
                if let Some(seen) = &lease.seen {
                    decision.retry_after_secs = wait(decision.reset_at as f64, seen.now());
                }
                return Taken::Refused(decision);
            }
            lease.refused = None;
        }
        if lease.asking {
            Taken::Ask {
                wanted: 1,
                asker: false,
            }
        } else {
            Taken::Ask {
                wanted: lease.ask(cap),
                asker: true,
            }
        }
    }

    /// Record what the database granted `key` (`granted` of `wanted`, counted in
    /// `second`, the request that asked spending `spent` of them: one, or none for a lease
    /// asked ahead; the rest spent here for `ttl` from `asked_at`); answers what is left unspent here and the newest windows seen (answers
    /// may settle out of the order the database gave them, e.g. a lease asked ahead and a
    /// request's: an older one must not stand for the blocks a newer one counted).
    #[allow(clippy::too_many_arguments)] // one answer's parts, named
    pub fn settle(
        &self,
        key: &str,
        workspace: Option<&str>,
        asker: bool,
        asked_at: Instant,
        ttl: Duration,
        answer: Option<(u32, i64, Seen)>,
        refusal: Option<Decision>,
        spent: u32,
    ) -> (u32, Option<Seen>) {
        let Ok(mut leases) = self.leases.lock() else {
            return (0, None);
        };
        let Some(lease) = leases.get_mut(&entry(key, workspace)) else {
            // Forgotten since it was asked for (its token was revoked): nothing is kept,
            // and what was granted beyond this request goes back.
            if let Some((granted, second, _)) = answer
                && granted > spent
            {
                let mut returns = Returns::default();
                returns.add(key, workspace, second, granted - spent);
                drop(leases);
                self.queue(returns);
            }
            return (0, answer.map(|(_, _, seen)| seen));
        };
        if asker {
            lease.asking = false;
        }
        let Some((granted, second, seen)) = answer else {
            if spent == 0 {
                lease.ahead_after = Some(Instant::now() + LEASE_TTL / 4);
            }
            return (lease.left(), lease.seen);
        };
        if lease.seen.is_none_or(|newest| seen.now >= newest.now) {
            lease.seen = Some(seen);
        }
        if let Some(refusal) = refusal {
            // Kept a second at most, and never past the time a slot frees.
            let frees_in = (refusal.reset_at as f64 - seen.now()).clamp(0.0, 1.0);
            lease.refused = Some((Instant::now() + Duration::from_secs_f64(frees_in), refusal));
            return (lease.left(), lease.seen);
        }
        if granted > spent {
            lease.blocks.push_back(Block {
                second,
                asked_at,
                expires: asked_at + ttl.min(QUIET_LEASE_TTL),
                size: granted,
                left: granted - spent,
            });
        }
        // The asker's lone request, spent as it came: bigger leases next.
        if asker && granted == 1 && spent == 1 {
            lease.grow = true;
        }
        (lease.left(), lease.seen)
    }

    /// Spend a leased request of `key` if there is one (or repeat a refusal still
    /// current), touching nothing else: `None` means the database must be asked. With the
    /// decision, the size of the lease to ask for now, ahead of need ([`AHEAD_MIN`]): the
    /// caller asks for it and [`Book::settle`]s it as the key's asker, spending none.
    pub fn spend(
        &self,
        key: &str,
        workspace: Option<&str>,
        cap: u32,
        decide: impl Fn(&Seen, u32) -> Decision,
    ) -> Option<(Decision, Option<u32>)> {
        let mut leases = self.leases.lock().ok()?;
        let now = Instant::now();
        let lease = leases.get_mut(&entry(key, workspace))?;
        if let Some(block) = lease
            .blocks
            .iter_mut()
            .find(|b| b.left > 0 && b.expires > now)
        {
            block.left -= 1;
            if block.left == 0 {
                lease.grow = true;
            }
            lease.used_at = now;
            let left = lease.left();
            let decision = lease.seen.as_ref().map(|seen| decide(seen, left))?;
            return Some((decision, lease.ahead(now, cap)));
        }
        let (_, mut decision) = lease.refused.filter(|(until, _)| now < *until)?;
        if let Some(seen) = &lease.seen {
            decision.retry_after_secs = wait(decision.reset_at as f64, seen.now());
        }
        Some((decision, None))
    }

    /// Drop what is leased for `key`, in every workspace (its token was revoked): nothing
    /// more is spent, the unspent part goes back.
    pub fn forget(&self, key: &str) {
        let mut returns = Returns::default();
        if let Ok(mut leases) = self.leases.lock() {
            leases.retain(|_, lease| {
                if lease.key != key {
                    return true;
                }
                for block in lease.blocks.iter_mut() {
                    block.expires = Instant::now();
                }
                lease.expire(Instant::now() + LEASE_TTL, &mut returns);
                false
            });
        }
        self.queue(returns);
    }

    /// Cut every lease to [`LEASE_TTL`] from when it was asked for (revocations may have
    /// been missed): what is older goes back at the next sweep, and nothing more of it is
    /// spent.
    pub fn cut_long_leases(&self) {
        if let Ok(mut leases) = self.leases.lock() {
            for lease in leases.values_mut() {
                for block in lease.blocks.iter_mut() {
                    block.expires = block.expires.min(block.asked_at + LEASE_TTL);
                }
            }
        }
    }

    fn queue(&self, more: Returns) {
        if let Ok(mut returns) = self.returns.lock() {
            returns.keys.extend(more.keys);
            returns.seconds.extend(more.seconds);
            returns.counts.extend(more.counts);
        }
    }

    /// Expire every key's blocks, forget idle keys, and hand over what must go back.
    fn sweep(&self) -> Returns {
        let now = Instant::now();
        let mut returns = Returns::default();
        if let Ok(mut leases) = self.leases.lock() {
            leases.retain(|_, lease| {
                lease.expire(now, &mut returns);
                !(lease.blocks.is_empty() && !lease.asking && now - lease.used_at > IDLE)
            });
        }
        if let Ok(mut queued) = self.returns.lock() {
            let queued = std::mem::take(&mut *queued);
            returns.keys.extend(queued.keys);
            returns.seconds.extend(queued.seconds);
            returns.counts.extend(queued.counts);
        }
        returns
    }
}

/// Seconds from `now` until `at`, at least 1.
pub(super) fn wait(at: f64, now: f64) -> u64 {
    let wait = (at - now).ceil();
    if wait >= 1.0 { wait as u64 } else { 1 }
}

/// Give back expired leases every [`SWEEP_EVERY`] while `book` lives, through `give`.
pub(super) fn sweeper(book: &Arc<Book>, give: impl Fn(Returns) + Send + 'static) {
    let book: Weak<Book> = Arc::downgrade(book);
    let spawned = std::thread::Builder::new()
        .name("jility-rate-leases".into())
        .spawn(move || {
            loop {
                std::thread::sleep(SWEEP_EVERY);
                let Some(book) = book.upgrade() else {
                    return;
                };
                let returns = book.sweep();
                drop(book);
                if !returns.is_empty() {
                    give(returns);
                }
            }
        });
    if let Err(err) = spawned {
        tracing::warn!(error = %err, "cannot start the thread that gives back rate-limit leases; unspent leases will age out of the window instead");
    }
}
