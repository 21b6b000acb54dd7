//! Related tickets in PostgreSQL: the tickets with any of a probe's words, ranked by
//! `ts_rank` (the weights of search), and the tickets whose titles `pg_trgm` finds alike
//! (its `%` operator through the trigram index of schema 24, most alike first), each once.

use postgres::types::Type;

use jility_core::similarity::COMPARED_CHARS;
use jility_core::store::{Probe, RelatedTx, StoreResult, TicketRow};

use super::Tx;
use super::find::{Binds, conditions};
use super::rows::{TICKET_COLUMNS, ticket_row};

/// Weights of `ts_rank` as search's: comments 0.1, descriptions 0.4, titles 1.0.
const RANK_WEIGHTS: &str = "'{0, 0.1, 0.4, 1.0}'::float4[]";

impl RelatedTx for Tx<'_> {
    fn related_candidates(
        &mut self,
        probe: &Probe<'_>,
        limit: usize,
    ) -> StoreResult<Vec<TicketRow>> {
        if probe.words.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        let trigrams = self
            .query(
                "SELECT to_regclass('tickets_title_trigrams') IS NOT NULL",
                &[],
            )?
            .first()
            .is_some_and(|row| row.get::<_, bool>(0));
        let mut binds = Binds::new(self.ws);
        // Any of the words, each through the same parser and dictionaries as the documents
        // (a parameter: nothing typed is read as query syntax).
        let any = probe
            .words
            .iter()
            .map(|w| {
                let mark = binds.bind(Box::new(w.clone()), Type::TEXT);
                format!("plainto_tsquery('jility', {mark})")
            })
            .collect::<Vec<_>>()
            .join(" || ");
        let exclude = binds.bind(Box::new(probe.exclude.unwrap_or(0)), Type::INT8);
        let limit_mark = binds.bind(Box::new(limit as i64), Type::INT8);
        let kept = conditions(probe.filter, "t", &mut binds);
        let alike = if trigrams {
            let title = binds.bind(Box::new(probe.title.to_string()), Type::TEXT);
            let few = binds.bind(Box::new((limit / 5).max(1) as i64), Type::INT8);
            format!(
                " UNION ALL (SELECT t.id, 1 AS branch, similarity(t.title, {title}) AS score \
                   FROM tickets t WHERE t.workspace_id = $1 AND t.deleted_at IS NULL \
                     AND t.title % {title} AND t.id <> {exclude} AND {kept} \
                   ORDER BY 3 DESC, t.id DESC LIMIT {few})"
            )
        } else {
            String::new()
        };
        let columns = TICKET_COLUMNS.replacen(
            "t.description",
            &format!("left(t.description, {COMPARED_CHARS})"),
            1,
        );
        let sql = format!(
            "SELECT {columns} FROM (\
               (SELECT s.ticket_id AS id, 0 AS branch, \
                  ts_rank({RANK_WEIGHTS}, s.search, q.query, 1) AS score \
                FROM ticket_search s CROSS JOIN (SELECT {any} AS query) q \
                JOIN tickets t ON t.workspace_id = $1 AND t.id = s.ticket_id \
                WHERE s.workspace_id = $1 AND s.search @@ q.query \
                  AND s.ticket_id <> {exclude} AND t.deleted_at IS NULL AND {kept} \
                ORDER BY 3 DESC, s.ticket_id DESC LIMIT {limit_mark}){alike}\
             ) c \
             JOIN tickets t ON t.workspace_id = $1 AND t.id = c.id \
             JOIN projects p ON p.workspace_id = t.workspace_id AND p.id = t.project_id \
             ORDER BY c.branch, c.score DESC, t.id DESC"
        );
        let rows = self.query_typed(&sql, &binds.typed())?;
        let mut seen = std::collections::BTreeSet::new();
        let mut out = Vec::with_capacity(rows.len());
        for row in &rows {
            let ticket = ticket_row(row)?;
            if seen.insert(ticket.id) {
                out.push(ticket);
            }
        }
        Ok(out)
    }
}
