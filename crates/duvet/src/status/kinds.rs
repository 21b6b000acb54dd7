//! The status vocabulary of a requirement (its kind and detail), apart from how it is
//! computed ([`crate::status`]), so that the model can hold one without importing that.

use serde::Serialize;

/// How far a requirement is implemented.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StatusKind {
    FullyImplemented,
    PartiallyImplemented,
    NotStarted,
}

impl StatusKind {
    /// Work-first order of `get_prioritized_requirements`: partial, then not started, then done.
    pub(crate) fn priority(self) -> u8 {
        match self {
            Self::PartiallyImplemented => 0,
            Self::NotStarted => 1,
            Self::FullyImplemented => 2,
        }
    }
}

/// A requirement's status with the detail an assistant needs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Status {
    pub status: StatusKind,
    /// As `duvet report --ci --require-citations` (0.4.3) counts it: every line of the
    /// specification this requirement's text lies on is touched by an implementation,
    /// implication or exception annotation (a quote of part of a line touches the line; tests
    /// and TODOs do not count). Exception-only requirements are cited: see `exception`.
    pub cited: bool,
    /// A test annotation quotes this requirement.
    pub tested: bool,
    /// The reason of an exception annotation quoting this requirement (the project decided
    /// not to implement it, or not here); for a requirement only exceptions cite, that of an
    /// exception touching its text's lines when none quotes it (it quotes another requirement
    /// on the same line).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exception: Option<String>,
    /// How many TODO annotations quote this requirement.
    pub todo_count: usize,
    /// How many annotations (other than requirement definitions) quote this requirement.
    pub citation_count: usize,
}
