//! Related tickets in SQLite: the tickets with any of a probe's words, ranked by FTS5's BM25
//! (the weights of search: title 10, description 4, comments 1).

use rusqlite::params_from_iter;

use jility_core::similarity::COMPARED_CHARS;
use jility_core::store::{Probe, RelatedTx, StoreResult, TicketRow};

use crate::find::{Binds, conditions};
use crate::rows::{TICKET_COLUMNS, Tx, db, ticket_row};

impl RelatedTx for Tx<'_> {
    fn related_candidates(
        &mut self,
        probe: &Probe<'_>,
        limit: usize,
    ) -> StoreResult<Vec<TicketRow>> {
        if probe.words.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        // Any of the words, each quoted: matched as text, never read as FTS5 syntax.
        let any = probe
            .words
            .iter()
            .map(|w| format!("\"{}\"", w.replace('"', "\"\"")))
            .collect::<Vec<_>>()
            .join(" OR ");
        let mut binds = Binds::default();
        let matching = binds.bind(any);
        let exclude = binds.bind(probe.exclude.unwrap_or(0));
        let kept = conditions(probe.filter, "t", &mut binds);
        let limit = binds.bind(limit as i64);
        let columns = TICKET_COLUMNS.replacen(
            "t.description",
            &format!("substr(t.description, 1, {COMPARED_CHARS})"),
            1,
        );
        let sql = format!(
            "SELECT {columns} FROM \
               (SELECT rowid AS id, bm25(ticket_search, 10.0, 4.0, 1.0) AS score \
                FROM ticket_search WHERE ticket_search MATCH {matching}) m \
             JOIN tickets t ON t.id = m.id JOIN projects p ON p.id = t.project_id \
             WHERE t.deleted_at IS NULL AND t.id <> {exclude} AND {kept} \
             ORDER BY m.score, t.id DESC LIMIT {limit}"
        );
        let mut stmt = self.tx.prepare_cached(&sql).map_err(db)?;
        let rows = stmt
            .query_map(params_from_iter(binds.0.iter()), ticket_row)
            .map_err(db)?;
        rows.collect::<Result<_, _>>().map_err(db)
    }
}
