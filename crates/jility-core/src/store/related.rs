//! Storage for related tickets: the candidates a probe's words find, for the domain to score
//! ([`crate::similarity`]).

use super::{Filter, StoreResult, TicketRow};

/// What to find tickets like.
pub struct Probe<'a> {
    /// Its content words as written (lowercased, no stop words; the title's first): a
    /// candidate has at least one of them, as the store's full-text search matches words
    /// (stems).
    pub words: &'a [String],
    /// Its title, for title similarity where the store has it (PostgreSQL's `pg_trgm`).
    pub title: &'a str,
    /// A ticket left out (the probe's own).
    pub exclude: Option<i64>,
    /// Tests every candidate passes (an estimate's: done, with points).
    pub filter: &'a Filter,
}

/// Finding related tickets.
pub trait RelatedTx {
    /// Up to `limit` live tickets that have any of the probe's words (ranked by the store's
    /// full-text ranking, best first; ties newest first), and any whose titles the store finds
    /// alike (PostgreSQL's `pg_trgm`; at most `limit / 5` more), each once. Descriptions
    /// hold their first [`crate::similarity::COMPARED_CHARS`] characters at most.
    fn related_candidates(
        &mut self,
        probe: &Probe<'_>,
        limit: usize,
    ) -> StoreResult<Vec<TicketRow>>;
}
