//! Related tickets in PostgreSQL (see `jility_core::store::RelatedTx`): tsqueries of the
//! probe's word pairs — in titles, through the narrow `ticket_titles` of schema 24, ranked
//! by `ts_rank` plus `pg_trgm`'s title similarity where the extension is there; and
//! anywhere among the workspace's newest tickets, ranked by `ts_rank` with search's weights.

use postgres::types::Type;

use jility_core::similarity::COMPARED_CHARS;
use jility_core::store::{Probe, RECENT, RelatedTx, StoreResult, TicketRow};

use super::Tx;
use super::find::{Binds, conditions};
use super::rows::{TICKET_COLUMNS, ticket_row};

/// Title matches ranked again with their titles' trigram similarity: the best this many by
/// their words.
const RERANKED: usize = 200;

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
                "SELECT to_regprocedure('similarity(text,text)') IS NOT NULL",
                &[],
            )?
            .first()
            .is_some_and(|row| row.get::<_, bool>(0));
        let mut binds = Binds::new(self.ws);
        let exclude = binds.bind(Box::new(probe.exclude.unwrap_or(0)), Type::INT8);
        let limit_mark = binds.bind(Box::new(limit as i64), Type::INT8);
        // Both tables hold live tickets only: the ticket's own row is read only for a filter,
        // and then only for the matches (a probe of each by its id).
        let kept = (!probe.filter.is_empty()).then(|| conditions(probe.filter, "o", &mut binds));
        let only = |id: &str| match &kept {
            None => String::new(),
            Some(kept) => format!(
                " AND EXISTS (SELECT 1 FROM tickets o WHERE o.workspace_id = $1 AND o.id = {id} \
                   AND {kept} OFFSET 0)"
            ),
        };
        let mut branches = Vec::new();
        // `q`: the tsquery made once (`OFFSET 0` keeps the planner from inlining it into
        // every row's rank).
        let made =
            |query: &str| format!("(SELECT to_tsquery('jility', {query}) AS query OFFSET 0) q");
        if let Some(pairs) = any_pair(probe.title_words, "") {
            let query = binds.bind(Box::new(pairs), Type::TEXT);
            // The words' rank of every match; with pg_trgm, the best RERANKED of them again
            // with the titles' similarity beside it (a similarity costs ~8 µs: not for all).
            let (alike, cut) = if trigrams {
                let title = binds.bind(Box::new(probe.title.to_string()), Type::TEXT);
                (
                    format!(" + similarity(r.title, {title})"),
                    format!(" LIMIT {RERANKED}"),
                )
            } else {
                (String::new(), String::new())
            };
            branches.push(format!(
                "(SELECT r.id, 0 AS branch, r.rank{alike} AS score FROM \
                   (SELECT s.ticket_id AS id, s.title, ts_rank(s.words, q.query, 1) AS rank \
                    FROM ticket_titles s, {} \
                    WHERE s.workspace_id = $1 AND s.words @@ q.query \
                      AND s.ticket_id <> {exclude}{} \
                    ORDER BY 3 DESC, s.ticket_id DESC{cut}) r \
                 ORDER BY 3 DESC, r.id DESC LIMIT {limit_mark})",
                made(&query),
                only("s.ticket_id")
            ));
        }
        if let Some(pairs) = any_pair(probe.words, "") {
            let query = binds.bind(Box::new(pairs), Type::TEXT);
            branches.push(format!(
                "(SELECT s.ticket_id AS id, 1 AS branch, \
                   ts_rank({RANK_WEIGHTS}, s.search, q.query, 1) AS score \
                 FROM (SELECT ticket_id, search FROM ticket_search WHERE workspace_id = $1 \
                       ORDER BY ticket_id DESC LIMIT {RECENT}) s, {} \
                 WHERE s.search @@ q.query AND s.ticket_id <> {exclude}{} \
                 ORDER BY 3 DESC, s.ticket_id DESC LIMIT {limit_mark})",
                made(&query),
                only("s.ticket_id")
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
