//! Related tickets in PostgreSQL (see `jility_core::store::RelatedTx`): tsqueries of the
//! probe's word pairs ranked by `ts_rank` with search's weights — in titles (weight A)
//! through the GIN index, and anywhere among the workspace's newest tickets — and titles
//! alike by `pg_trgm` (its `%` through the trigram index of schema 24, most alike first).

use postgres::types::Type;

use jility_core::similarity::COMPARED_CHARS;
use jility_core::store::{Probe, RECENT, RelatedTx, StoreResult, TicketRow};

use super::Tx;
use super::find::{Binds, conditions};
use super::rows::{TICKET_COLUMNS, ticket_row};

/// Weights of `ts_rank` as search's: comments 0.1, descriptions 0.4, titles 1.0.
const RANK_WEIGHTS: &str = "'{0, 0.1, 0.4, 1.0}'::float4[]";

/// The `to_tsquery` text holding any of `words`' pairs, each word quoted and, with
/// `weight`, only in that weight's field. The words are the domain's: letters and digits
/// only, so nothing in them is query syntax (a quote would be doubled all the same).
fn any_pair(words: &[String], weight: &str) -> Option<String> {
    let quoted = |w: &str| format!("'{}'{weight}", w.replace('\'', "''").replace('\\', ""));
    let pairs: Vec<String> = Probe::pairs(words)
        .into_iter()
        .map(|pair| {
            let both: Vec<String> = pair.into_iter().map(quoted).collect();
            format!("({})", both.join(" & "))
        })
        .collect();
    (!pairs.is_empty()).then(|| pairs.join(" | "))
}

impl RelatedTx for Tx<'_> {
    fn related_candidates(
        &mut self,
        probe: &Probe<'_>,
        limit: usize,
    ) -> StoreResult<Vec<TicketRow>> {
        if limit == 0 || probe.words.is_empty() {
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
        let exclude = binds.bind(Box::new(probe.exclude.unwrap_or(0)), Type::INT8);
        let limit_mark = binds.bind(Box::new(limit as i64), Type::INT8);
        let kept = conditions(probe.filter, "t", &mut binds);
        let mut branches = Vec::new();
        // A branch: the tickets of `from` (rows `s`: workspace_id, ticket_id, search) that
        // `query` matches, ranked, the best `limit`.
        let ranked = |binds: &mut Binds, query: String, from: &str, branch: usize| {
            let query = binds.bind(Box::new(query), Type::TEXT);
            format!(
                "(SELECT s.ticket_id AS id, {branch} AS branch, \
                   ts_rank({RANK_WEIGHTS}, s.search, to_tsquery('jility', {query}), 1) AS score \
                 FROM {from} \
                 JOIN tickets t ON t.workspace_id = $1 AND t.id = s.ticket_id \
                 WHERE s.workspace_id = $1 AND s.search @@ to_tsquery('jility', {query}) \
                   AND s.ticket_id <> {exclude} AND t.deleted_at IS NULL AND {kept} \
                 ORDER BY 3 DESC, s.ticket_id DESC LIMIT {limit_mark})"
            )
        };
        if let Some(pairs) = any_pair(probe.title_words, ":A") {
            branches.push(ranked(&mut binds, pairs, "ticket_search s", 0));
        }
        if let Some(pairs) = any_pair(probe.words, "") {
            let from = format!(
                "(SELECT workspace_id, ticket_id, search FROM ticket_search WHERE workspace_id = $1 \
                  ORDER BY ticket_id DESC LIMIT {RECENT}) s"
            );
            branches.push(ranked(&mut binds, pairs, &from, 1));
        }
        if trigrams {
            let title = binds.bind(Box::new(probe.title.to_string()), Type::TEXT);
            let few = binds.bind(Box::new((limit / 5).max(1) as i64), Type::INT8);
            branches.push(format!(
                "(SELECT t.id, 2 AS branch, similarity(t.title, {title}) AS score \
                  FROM tickets t WHERE t.workspace_id = $1 AND t.deleted_at IS NULL \
                    AND t.title % {title} AND t.id <> {exclude} AND {kept} \
                  ORDER BY 3 DESC, t.id DESC LIMIT {few})"
            ));
        }
        if branches.is_empty() {
            return Ok(Vec::new());
        }
        let columns = TICKET_COLUMNS.replacen(
            "t.description",
            &format!("left(t.description, {COMPARED_CHARS})"),
            1,
        );
        let sql = format!(
            "SELECT {columns} FROM ({}) c \
             JOIN tickets t ON t.workspace_id = $1 AND t.id = c.id \
             JOIN projects p ON p.workspace_id = t.workspace_id AND p.id = t.project_id \
             ORDER BY c.branch, c.score DESC, t.id DESC",
            branches.join(" UNION ALL ")
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
