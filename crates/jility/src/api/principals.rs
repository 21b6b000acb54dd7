//! The principals of recently authenticated tokens, kept for a few seconds so that a busy
//! agent's requests do not each look their token up in the database.
//!
//! A kept principal is used only while it is sure to be current:
//! - for at most [`KEEP`], and never past its token's expiry;
//! - only while this process listens for the database's events without a gap since the
//!   principal was kept ([`Events::generation`]): a revocation made by any server process
//!   is published as an event, and the listener drops the revoked token's principal
//!   ([`Principals::forget_token`]) before it relays anything; a revocation made by this
//!   process drops it at once, before the revocation is answered.
//!
//! A principal read from the database while a revocation was being heard is not kept
//! ([`Principals::mark`]): it may be the revoked token's.
//!
//! Only tokens that authenticated are kept (keyed by their BLAKE3 hash, never the token),
//! so unknown tokens cannot fill it; it is bounded all the same.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chrono::Utc;

use crate::auth::Principal;
use crate::events::Events;

/// How long a principal is kept.
pub const KEEP: Duration = Duration::from_secs(10);

/// Most principals kept; when full, the cache starts over.
const CAPACITY: usize = 10_000;

struct Kept {
    principal: Principal,
    generation: u64,
    until: Instant,
}

/// Recently authenticated tokens' principals (shared by the clones).
#[derive(Clone, Default)]
pub struct Principals {
    kept: Arc<Mutex<HashMap<[u8; 32], Kept>>>,
    /// How many revocations this process has heard.
    revocations: Arc<AtomicU64>,
}

/// What [`Principals::mark`] returns: the revocations heard before a token was looked up.
#[derive(Debug, Clone, Copy)]
pub struct Mark(u64);

fn key(token: &str) -> [u8; 32] {
    *blake3::hash(token.trim().as_bytes()).as_bytes()
}

impl Principals {
    /// The principal of `token` if one is kept and still sure to be current.
    pub fn get(&self, token: &str, events: &Events) -> Option<Principal> {
        let generation = events.generation()?;
        let key = key(token);
        let mut kept = self.kept.lock().ok()?;
        let entry = kept.get(&key)?;
        let current = entry.generation == generation
            && Instant::now() < entry.until
            && entry
                .principal
                .expires_at
                .is_none_or(|expires| Utc::now() < expires);
        if current {
            Some(entry.principal.clone())
        } else {
            kept.remove(&key);
            None
        }
    }

    /// Take before looking a token up in the database, and give to [`Principals::keep`].
    pub fn mark(&self) -> Mark {
        Mark(self.revocations.load(Ordering::SeqCst))
    }

    /// Keep `principal`, authenticated from `token` after `mark`, unless a revocation was
    /// heard since or this process does not follow the events.
    pub fn keep(&self, token: &str, principal: &Principal, events: &Events, mark: Mark) {
        let Some(generation) = events.generation() else {
            return;
        };
        let Ok(mut kept) = self.kept.lock() else {
            return;
        };
        if self.revocations.load(Ordering::SeqCst) != mark.0 {
            return;
        }
        if kept.len() >= CAPACITY {
            kept.clear();
        }
        kept.insert(
            key(token),
            Kept {
                principal: principal.clone(),
                generation,
                until: Instant::now() + KEEP,
            },
        );
    }

    /// Drop the principal of token `token_id` (revoked).
    pub fn forget_token(&self, token_id: i64) {
        if let Ok(mut kept) = self.kept.lock() {
            // Under the lock, so that no `keep` of an earlier mark slips in after it.
            self.revocations.fetch_add(1, Ordering::SeqCst);
            kept.retain(|_, entry| entry.principal.token_id != token_id);
        }
    }
}
