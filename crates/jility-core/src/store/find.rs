//! What a query of the query language asks a store, resolved: a [`Filter`] of tests on
//! each ticket (ids, not names), an order ([`Sort`]) and a position to page on from. The
//! domain parses and resolves ([`crate::query`], [`crate::tracker`]); each store writes the
//! tests in its own SQL.

use serde::{Deserialize, Serialize};

use crate::model::{Kind, Status, TicketSummary};

/// Tests that must all hold of a live ticket.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Filter {
    pub clauses: Vec<Clause>,
}

impl Filter {
    pub fn is_empty(&self) -> bool {
        self.clauses.is_empty()
    }

    /// The filter and `test`.
    pub fn with(mut self, test: Test) -> Self {
        self.clauses.push(Clause {
            negated: false,
            test,
        });
        self
    }
}

/// A test, or its negation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Clause {
    pub negated: bool,
    pub test: Test,
}

/// One test of a ticket. A list holds when any of its values does.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum Test {
    Status(Vec<Status>),
    Label(Vec<String>),
    Assignee(Vec<String>),
    /// It has a label.
    Labelled,
    /// It has an assignee.
    Assigned,
    /// Status `blocked`, or waiting on a live prerequisite that is not done.
    Blocked,
    Kind(Kind),
    /// Its epic (`None`: it has none).
    Epic(Option<i64>),
    /// Its parent (`None`: it has none).
    Parent(Option<i64>),
    /// In this sprint (`Some(id)`), or in the backlog (`None`: in no open sprint, and not
    /// done in a completed one, as [`super::ListFilter`]'s `sprint`).
    Sprint(Option<i64>),
    /// It depends on this ticket.
    DependsOn(i64),
    /// Story points within `min..=max` (`None`: it has none).
    Points(Option<(u8, u8)>),
    /// Created within the range.
    Created(TimeRange),
    /// Last changed within the range.
    Updated(TimeRange),
    /// Its title, description or comments hold this phrase (one word or several, in
    /// order), as full-text search finds it.
    Text(Vec<String>),
    /// It is one of these numbers of the project keyed `key` (a bulk edit's tickets named).
    Numbers {
        key: String,
        numbers: Vec<i64>,
    },
}

/// Times as the stores keep them (RFC 3339, UTC, milliseconds: they sort as text):
/// `from <= t < until`, either end open.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct TimeRange {
    pub from: Option<String>,
    pub until: Option<String>,
}

/// What a found page is ordered by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SortField {
    Created,
    Updated,
    /// Story points, a ticket without any as 0.
    Points,
    /// The title, ASCII letters compared without case.
    Title,
}

impl SortField {
    pub const ALL: [SortField; 4] = [Self::Created, Self::Updated, Self::Points, Self::Title];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Created => "created",
            Self::Updated => "updated",
            Self::Points => "points",
            Self::Title => "title",
        }
    }
}

/// An order: the field, each way; ties by the ticket's storage id the same way (so the
/// order is total, and newest first when descending).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sort {
    pub field: SortField,
    pub descending: bool,
}

impl Sort {
    /// Newest first: what listings answer unless asked otherwise.
    pub const NEWEST: Sort = Sort {
        field: SortField::Created,
        descending: true,
    };
}

/// A ticket's value of a [`SortField`]: text (times, titles) or a number (points).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SortValue {
    Number(i64),
    Text(String),
}

/// Where a page ends: the last ticket's sort value and storage id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Position {
    pub value: SortValue,
    pub id: i64,
}

/// One page of [`super::StoreTx::find`].
pub struct FoundPage {
    pub items: Vec<TicketSummary>,
    /// How many tickets match, counted up to [`super::COUNT_CAP`].
    pub total: usize,
    pub total_exact: bool,
    /// The last item's position, when more items follow.
    pub next: Option<Position>,
}
