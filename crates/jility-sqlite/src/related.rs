//! Related tickets in SQLite (see `jility_core::store::RelatedTx`): FTS5 queries of the
//! probe's word pairs, ranked by BM25 with search's weights (title 10, description 4,
//! comments 1) — in titles across the project, and anywhere among the newest tickets.

use rusqlite::params_from_iter;

use jility_core::similarity::COMPARED_CHARS;
use jility_core::store::{Probe, RECENT, RelatedTx, StoreResult, TicketRow};

use crate::find::{Binds, conditions};
use crate::rows::{TICKET_COLUMNS, Tx, db, ticket_row};

/// The FTS5 query holding any of `words`' pairs, each word quoted (matched as text, never
/// read as FTS5 syntax); `None` when there are no words.
fn any_pair(words: &[String]) -> Option<String> {
    let quoted = |w: &str| format!("\"{}\"", w.replace('"', "\"\""));
    let pairs: Vec<String> = Probe::pairs(words)
        .into_iter()
        .map(|pair| {
            let both: Vec<String> = pair.into_iter().map(quoted).collect();
            format!("({})", both.join(" AND "))
        })
        .collect();
    (!pairs.is_empty()).then(|| pairs.join(" OR "))
}

impl Tx<'_> {
    /// The live tickets `matching` finds (and `also`, a condition on their ids), best first,
    /// at most `limit`, after the probe's own and those its filter refuses.
    fn ranked(
        &mut self,
        probe: &Probe<'_>,
        matching: String,
        also: &str,
        limit: usize,
    ) -> StoreResult<Vec<TicketRow>> {
        let mut binds = Binds::default();
        let matching = binds.bind(matching);
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
                FROM ticket_search WHERE ticket_search MATCH {matching}{also}) m \
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

impl RelatedTx for Tx<'_> {
    fn related_candidates(
        &mut self,
        probe: &Probe<'_>,
        limit: usize,
    ) -> StoreResult<Vec<TicketRow>> {
        let mut out: Vec<TicketRow> = Vec::new();
        if limit == 0 {
            return Ok(out);
        }
        if let Some(pairs) = any_pair(probe.title_words) {
            out.extend(self.ranked(probe, format!("{{title}} : ({pairs})"), "", limit)?);
        }
        if let Some(pairs) = any_pair(probe.words) {
            // The newest RECENT live tickets: from the RECENT-th newest one's id on.
            let recent = format!(
                " AND rowid >= coalesce((SELECT id FROM tickets WHERE deleted_at IS NULL \
                   ORDER BY id DESC LIMIT 1 OFFSET {}), 0)",
                RECENT - 1
            );
            for row in self.ranked(probe, pairs, &recent, limit)? {
                if !out.iter().any(|o| o.id == row.id) {
                    out.push(row);
                }
            }
        }
        Ok(out)
    }
}
