//! Storage for related tickets: the candidates a probe's words find, for the domain to score
//! ([`crate::similarity`]).
//!
//! A candidate shares at least **two** of the probe's words (one, when the probe has only
//! one): a single shared word — the product's name, a common verb — makes a ticket about
//! anything a candidate, and the work to rank them all grows with the workspace. Each
//! store finds, each best first by its own full-text ranking and each a bounded number:
//! 1. tickets whose **titles** share two of the probe's title words, across the workspace;
//! 2. among the workspace's [`RECENT`] newest tickets, those sharing two of the probe's
//!    words anywhere (title, description, comments);
//!
//! How each ranks within a kind is its own (SQLite's BM25; PostgreSQL's `ts_rank`, titles'
//! plus `pg_trgm`'s similarity); the domain scores what they find the same way.

use super::{Filter, StoreResult, TicketRow};

/// Most of a probe's title words looked for in titles.
pub const TITLE_WORDS: usize = 8;

/// Most of a probe's words (the title's first) looked for anywhere.
pub const PROBE_WORDS: usize = 12;

/// The newest tickets of a workspace that the words are looked for in anywhere.
pub const RECENT: usize = 600;

/// What to find tickets like.
pub struct Probe<'a> {
    /// Its title's content words as written (lowercased, no stop words), at most
    /// [`TITLE_WORDS`].
    pub title_words: &'a [String],
    /// Its content words, the title's first, at most [`PROBE_WORDS`].
    pub words: &'a [String],
    /// Its title, for title similarity where the store ranks by it.
    pub title: &'a str,
    /// A ticket left out (the probe's own).
    pub exclude: Option<i64>,
    /// Tests every candidate passes (an estimate's: done, with points).
    pub filter: &'a Filter,
}

impl Probe<'_> {
    /// The pairs of `words` a candidate must have one of (each pair's two words): every
    /// pair, or the one word alone when there is one.
    pub fn pairs(words: &[String]) -> Vec<Vec<&str>> {
        if words.len() == 1 {
            return vec![vec![words[0].as_str()]];
        }
        let mut out = Vec::new();
        for (i, a) in words.iter().enumerate() {
            for b in &words[i + 1..] {
                out.push(vec![a.as_str(), b.as_str()]);
            }
        }
        out
    }
}

/// Finding related tickets.
pub trait RelatedTx {
    /// The candidates of the module's docs, each once: at most `limit` of each kind. Descriptions hold their first
    /// [`crate::similarity::COMPARED_CHARS`] characters at most.
    fn related_candidates(
        &mut self,
        probe: &Probe<'_>,
        limit: usize,
    ) -> StoreResult<Vec<TicketRow>>;
}
