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
const RERANKED: usize = 100;

/// Weights of `ts_rank` as search's: comments 0.1, descriptions 0.4, titles 1.0.
const RANK_WEIGHTS: &str = "'{0, 0.1, 0.4, 1.0}'::float4[]";

/// A word of the domain's (letters and digits only, so nothing in it is query syntax) as a
/// `to_tsquery` operand, quoted all the same.
fn quoted(word: &str) -> String {
    format!("'{}'", word.replace('\'', "''").replace('\\', ""))
}

/// The `to_tsquery` texts of `words`' pairs (each pair's two words, `&`), or of the one word.
fn pairs(words: &[String]) -> Vec<String> {
    Probe::pairs(words)
        .into_iter()
        .map(|pair| pair.into_iter().map(quoted).collect::<Vec<_>>().join(" & "))
        .collect()
}

/// The `to_tsquery` text of any of `words` (`|`): what a match is ranked by, cheaper to rank
/// with than the pairs it was found by.
fn any(words: &[String]) -> String {
    words
        .iter()
        .map(|w| quoted(w))
        .collect::<Vec<_>>()
        .join(" | ")
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
        // Titles: one condition per pair, each its own GIN lookup (an intersection of two
        // words' entries), OR'ed; the tsqueries made once in `q` (`OFFSET 0` keeps the
        // planner from inlining them into every row).
        let title_pairs = pairs(probe.title_words);
        if !title_pairs.is_empty() {
            let mut made = Vec::with_capacity(title_pairs.len() + 1);
            let mut matched = Vec::with_capacity(title_pairs.len());
            for (k, pair) in title_pairs.into_iter().enumerate() {
                let mark = binds.bind(Box::new(pair), Type::TEXT);
                made.push(format!("to_tsquery('jility', {mark}) AS p{k}"));
                matched.push(format!("s.words @@ q.p{k}"));
            }
            let rank = binds.bind(Box::new(any(probe.title_words)), Type::TEXT);
            made.push(format!("to_tsquery('jility', {rank}) AS r"));
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
                   (SELECT s.ticket_id AS id, s.title, ts_rank(s.words, q.r, 1) AS rank \
                    FROM ticket_titles s, (SELECT {} OFFSET 0) q \
                    WHERE s.workspace_id = $1 AND ({}) \
                      AND s.ticket_id <> {exclude}{} \
                    ORDER BY 3 DESC, s.ticket_id DESC{cut}) r \
                 ORDER BY 3 DESC, r.id DESC LIMIT {limit_mark})",
                made.join(", "),
                matched.join(" OR "),
                only("s.ticket_id")
            ));
        }
        // The newest tickets: each one's words tested against the pairs at once.
        let word_pairs = pairs(probe.words);
        if !word_pairs.is_empty() {
            let matching = binds.bind(
                Box::new(
                    word_pairs
                        .iter()
                        .map(|p| format!("({p})"))
                        .collect::<Vec<_>>()
                        .join(" | "),
                ),
                Type::TEXT,
            );
            let rank = binds.bind(Box::new(any(probe.words)), Type::TEXT);
            branches.push(format!(
                "(SELECT s.ticket_id AS id, 1 AS branch, \
                   ts_rank({RANK_WEIGHTS}, s.search, q.r, 1) AS score \
                 FROM (SELECT ticket_id, search FROM ticket_search WHERE workspace_id = $1 \
                       ORDER BY ticket_id DESC LIMIT {RECENT}) s, \
                      (SELECT to_tsquery('jility', {matching}) AS query, \
                              to_tsquery('jility', {rank}) AS r OFFSET 0) q \
                 WHERE s.search @@ q.query AND s.ticket_id <> {exclude}{} \
                 ORDER BY 3 DESC, s.ticket_id DESC LIMIT {limit_mark})",
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
