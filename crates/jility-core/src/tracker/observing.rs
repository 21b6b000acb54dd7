//! What an observer of changes reads (cloud mode's webhooks): tickets as they are now —
//! deleted ones too, which no operation shows — and which of a few tickets a query of the
//! query language keeps.

use mcp_common_core::ToolError;

use super::Tracker;
use super::tickets::detail;
use crate::model::Ticket;
use crate::query::{self, Clock};
use crate::store::{Filter, Store, Test, TicketLookup};

/// A ticket as it is now, and whether it was deleted.
#[derive(Debug, Clone)]
pub struct Observed {
    pub ticket: Ticket,
    pub deleted: bool,
}

impl<S: Store> Tracker<S> {
    /// The tickets of `uuids`, whole, in their order (`None`: no such ticket).
    pub fn observe(&mut self, uuids: &[String]) -> Result<Vec<Option<Observed>>, ToolError> {
        let lookups: Vec<TicketLookup> = uuids.iter().cloned().map(TicketLookup::Uuid).collect();
        let found = crate::store::wait(self.store.whole_tickets(&lookups))?;
        Ok(found
            .into_iter()
            .map(|whole| {
                whole.map(|whole| {
                    let deleted = whole.row.deleted_at.is_some();
                    Observed {
                        ticket: detail(whole).ticket,
                        deleted,
                    }
                })
            })
            .collect())
    }

    /// Whether `text` is a query that would run for `actor` now (its views, tickets and
    /// sprints exist): what a subscription's filter is checked with.
    pub fn check_query(&mut self, actor: &str, text: &str) -> Result<(), ToolError> {
        let query = query::parse(text, &Clock::now())?;
        self.store
            .read(|tx| super::finding::check(tx, actor, &query))
    }

    /// Which of the live tickets `numbers` of project `key` the query `text` keeps for
    /// `actor`.
    pub fn matching(
        &mut self,
        actor: &str,
        text: &str,
        key: &str,
        numbers: &[i64],
    ) -> Result<Vec<i64>, ToolError> {
        let query = query::parse(text, &Clock::now())?;
        self.store.read(|tx| {
            let filter: Filter =
                super::finding::filter_of(tx, actor, &query)?.with(Test::Numbers {
                    key: key.to_string(),
                    numbers: numbers.to_vec(),
                });
            Ok(tx
                .find_rows(&filter, numbers.len())?
                .into_iter()
                .map(|row| row.number)
                .collect())
        })
    }
}
