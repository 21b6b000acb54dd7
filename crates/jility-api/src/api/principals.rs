//! The principals of recently authenticated tokens, kept for a few seconds so that a busy
//! agent's requests do not each look their token up (hash, workspace, scopes) in the
//! database.
//!
//! Keeping one never lets a revoked or expired token through for longer than the rate
//! limit's lease: whether its token was revoked is read with every lease of its requests
//! ([`crate::ratelimit::RateLimiter::check_token`], at most a second apart while the token
//! is in use, or four for a quiet token), every process drops a revoked token's principal
//! and leases as soon as it hears of the revocation ([`super::ApiState::forget_token`]),
//! and a kept principal is used only before its token's expiry. A token's scopes and
//! workspace never change.
//!
//! Only tokens that authenticated are kept (keyed by their BLAKE3 hash, never the token),
//! so unknown tokens cannot fill it; it is bounded all the same.
//!
//! And the watch over the tokens of open streams ([`lapses`]): a stream holds a [`Lapse`]
//! of its token and ends when it resolves (the token expired, was revoked, or its holder's
//! role no longer allows it), with no database query per stream or per event.

mod lapses;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chrono::Utc;

use crate::auth::Principal;

pub use lapses::Lapse;

/// How long a principal is kept.
pub const KEEP: Duration = Duration::from_secs(10);

/// Most principals kept; when full, the cache starts over.
const CAPACITY: usize = 10_000;

struct Kept {
    principal: Principal,
    until: Instant,
}

/// Recently authenticated tokens' principals (shared by the clones).
#[derive(Clone, Default)]
pub struct Principals {
    kept: Arc<Mutex<HashMap<[u8; 32], Kept>>>,
    watches: Arc<lapses::Watches>,
}

fn key(token: &str) -> [u8; 32] {
    *blake3::hash(token.trim().as_bytes()).as_bytes()
}

impl Principals {
    /// The principal of `token` if one is kept, its time is not up and its token has not
    /// expired.
    pub fn get(&self, token: &str) -> Option<Principal> {
        let key = key(token);
        let mut kept = self.kept.lock().ok()?;
        let entry = kept.get(&key)?;
        let current = Instant::now() < entry.until
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

    /// Keep `principal`, just authenticated from `token`.
    pub fn keep(&self, token: &str, principal: &Principal) {
        let Ok(mut kept) = self.kept.lock() else {
            return;
        };
        if kept.len() >= CAPACITY {
            kept.clear();
        }
        kept.insert(
            key(token),
            Kept {
                principal: principal.clone(),
                until: Instant::now() + KEEP,
            },
        );
    }

    /// A hold on `principal`'s token for one stream of `state`'s server: it resolves when
    /// the token's credential lapses ([`lapses`]).
    pub fn watch(&self, principal: &Principal, state: &super::ApiState) -> Lapse {
        self.watches
            .watch(principal, &state.events, &state.db, &state.shutdown)
    }

    /// Drop the principal of token `token_id` (revoked), and end its streams.
    pub fn forget_token(&self, token_id: i64) {
        if let Ok(mut kept) = self.kept.lock() {
            kept.retain(|_, entry| entry.principal.token_id != token_id);
        }
        self.watches.lapse(token_id);
    }
}
