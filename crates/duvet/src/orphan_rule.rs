//! Which quote lines without a target line are worth looking for in the specifications
//! ([`crate::orphans`] looks; the model decides from this alone whether it must read the
//! specifications' sections for them). Apart so that the model and the search, which extends
//! the model, do not import each other.

use crate::spec::requirements;

/// Fewer words than this are too common to tell a quote from a coincidence ("MUST NOT").
pub const MIN_WORDS: usize = 3;

/// Whether any of `malformed` is quote lines without a target line long enough to be looked
/// for in the specifications (else the model's sections need not be read for them).
pub fn worth_looking(malformed: &[crate::annotation::Malformed]) -> bool {
    malformed.iter().any(|m| {
        m.orphan_quote
            .as_deref()
            .is_some_and(|quote| requirements::normalize(quote).split(' ').count() >= MIN_WORDS)
    })
}
