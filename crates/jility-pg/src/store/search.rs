//! Full-text search of a workspace's tickets (see the store's module docs, **Search**).
//!
//! The order of the hits, one statement for a page:
//!
//! - When at most [`RANKED`] tickets match, all of them are ranked by `ts_rank` (best
//!   first, ties by id) and counted exactly, as always.
//! - When more match, the [`RANKED`] newest matches (highest ticket ids) come first,
//!   ranked the same way, then every older match, newest first. The total is then a lower
//!   bound above [`RANKED`] (see [`search`]). Paging with an offset walks that same order,
//!   so pages neither repeat nor skip a hit while the tickets stay as they are.
//!
//! How the matches are found depends on how common the query is among the newest
//! tickets, never the order above. When at least [`DENSE`] of the workspace's [`SAMPLE`]
//! newest tickets match (a common word), its tickets are read newest first until
//! [`RANKED`] + 1 match — a few thousand rows, whatever the number of matches — and no
//! further: nothing is ranked but those, nothing counted past them. Otherwise, or when
//! [`BUDGET`] tickets did not hold [`RANKED`] + 1 matches, the GIN index finds every
//! match, each is ranked and all are counted, as before, which costs little while they
//! are few. Pages past the ranked matches read on through older tickets, newest first,
//! only as far as the page.
//!
//! With a filter (the query language's qualifiers: a probe of each match's ticket) the same
//! holds with [`FILTERED_RANKED`] in place of [`RANKED`], and the GIN index's matches are
//! probed newest first only until that many + 1 are kept.
//!
//! Measured on 100,000 tickets (issue 29; a first page of 20 through the domain, p50, on
//! a busy 2-core machine): queries matching 21,500–65,000 tickets took 31–67 ms (every
//! match ranked and counted), now 3.2–4.0 ms; queries matching at most 1,000 took
//! 2.2–3.4 ms, now 0.4 ms more (a bigger statement to plan).

use jility_core::store::{Filter, SearchHit, SearchPage, SearchTerms, StoreResult};
use postgres::types::Type;

use super::find::{Binds, conditions};
use super::{SUMMARY_COLUMNS, Tx, count, summary_row};

/// Text search configuration made by the first migration.
const TS_CONFIG: &str = "jility";

/// Weights of `ts_rank`, in the order D, C, B, A: comments 0.1, descriptions 0.4,
/// titles 1.0 (local mode's bm25 weights 1 / 4 / 10).
const RANK_WEIGHTS: &str = "'{0, 0.1, 0.4, 1.0}'::float4[]";

/// `ts_headline` options: at most 16 words around the best match, `**` around hits (local
/// mode's `snippet(…, '**', '**', '…', 16)`).
const HEADLINE_OPTIONS: &str = "StartSel=\"**\", StopSel=\"**\", MaxWords=16, MinWords=6, \
     ShortWord=0, MaxFragments=1, FragmentDelimiter=\" … \"";

/// Up to this many matches are ranked (and counted) exactly; past it, the newest this
/// many are ranked and the older ones follow newest first.
pub(super) const RANKED: usize = 1_000;

/// The same for a search with a filter (qualifiers of the query language).
pub(super) const FILTERED_RANKED: usize = 500;

/// The newest tickets looked at to tell whether the query is common among them.
const SAMPLE: usize = 200;

/// Matches among the [`SAMPLE`] newest tickets (10%) from which the newest matches are
/// looked for by reading tickets newest first rather than through the GIN index (which
/// would find, rank and count every match).
const DENSE: usize = 20;

/// Most tickets read newest first looking for [`RANKED`] + 1 matches: twice what a
/// query in 10% of them needs. A query common only among the very newest tickets stops
/// here and goes through the GIN index.
const BUDGET: usize = 20_000;

/// The tsquery of the terms, `$2…`: each term a phrase (`phraseto_tsquery`: its words in
/// order, adjacent; one word is just that word), all of them required (`&&`). The words go
/// in as parameters, through the same parser and dictionaries as the documents, so nothing
/// the user typed is ever read as query syntax.
fn ts_query(terms: &SearchTerms) -> (String, Vec<String>) {
    let mut parts = Vec::with_capacity(terms.0.len());
    let mut values = Vec::with_capacity(terms.0.len());
    for phrase in &terms.0 {
        values.push(phrase.join(" "));
        parts.push(format!(
            "phraseto_tsquery('{TS_CONFIG}', ${})",
            values.len() + 1
        ));
    }
    if parts.is_empty() {
        parts.push("''::tsquery".to_string());
    }
    (format!("({})", parts.join(" && ")), values)
}

/// The hits ranked `offset..offset + limit` and how many match: exactly when at most
/// [`RANKED`] do; otherwise a lower bound above [`RANKED`] (`total_exact: false`) — at
/// least [`RANKED`] + 1, and past the page's end while hits follow it, so that paging goes
/// on.
pub(super) fn search(
    tx: &mut Tx<'_>,
    terms: &SearchTerms,
    filter: &Filter,
    offset: usize,
    limit: usize,
) -> StoreResult<SearchPage> {
    let (query, words) = ts_query(terms);
    // With a filter, the newest FILTERED_RANKED matches it keeps are ranked: each match
    // looked at is a probe of its ticket's rows, so fewer are looked at.
    let ranked = if filter.is_empty() {
        RANKED
    } else {
        FILTERED_RANKED
    };
    let mut binds = Binds::new(tx.ws);
    for word in words {
        binds.bind(Box::new(word), Type::TEXT);
    }
    // Only the tickets the filter keeps, when it keeps some: a condition on each ticket
    // the statement looks at, by its id.
    let kept = (!filter.is_empty()).then(|| conditions(filter, "o", &mut binds));
    let only = |id: &str| match &kept {
        None => String::new(),
        Some(kept) => format!(
            " AND EXISTS (SELECT 1 FROM tickets o WHERE o.workspace_id = $1 AND o.id = {id} \
               AND {kept} OFFSET 0)"
        ),
    };
    let limit_mark = binds.bind(Box::new(limit as i64), Type::INT8);
    let offset_mark = binds.bind(Box::new(offset as i64), Type::INT8);
    // The snippet comes from the first field that matches the whole query on its own
    // (title, description, comments: the words of weight A, B, C), else from all of
    // them together.
    let headline =
        |text: &str| format!("ts_headline('{TS_CONFIG}', {text}, q.query, '{HEADLINE_OPTIONS}')");
    let matches = |weight: char| format!("ts_filter(s.search, '{{{weight}}}') @@ q.query");
    let comments = "coalesce((SELECT string_agg(c.content, E'\\n' ORDER BY c.id) \
         FROM comments c WHERE c.workspace_id = t.workspace_id AND c.ticket_id = t.id), '')";
    let everything = format!("concat_ws(E'\\n', t.title, t.description, {comments})");
    let rank = |search: &str, query: &str| format!("ts_rank({RANK_WEIGHTS}, {search}, {query}, 1)");
    // `q`: the query for the GIN index and the snippets, opaque to the planner (so the
    //   GIN branch is planned as a bitmap scan whatever the words).
    // `sample`: whether the query is common among the newest tickets.
    // `scan`: if so, the RANKED + 1 newest matches, reading the workspace's tickets newest
    //   first (index on (workspace_id, ticket_id)) within BUDGET, ranked. `ts_match_vq`
    //   is `@@` that the GIN index cannot take over; its query, written out, is a
    //   constant in the plan.
    // `matched`: the scan's matches if it found RANKED + 1, else every match (GIN).
    // `cut`: the newest match past the RANKED newest, first of the older ones.
    // `older`: the matches from the cut down, newest first, as far as the page needs
    //   and one more (so the total tells whether more follow).
    // Every match through the GIN index, ranked, when the scan did not find enough. With a
    // filter, only the newest RANKED + 1 matches it keeps: each is a probe of the ticket's
    // rows, so the matches are sorted newest first (ids alone) and probed until enough are
    // kept, instead of probing them all — the total is then a lower bound, as when more
    // than RANKED match without a filter.
    let (gin_kept, gin_matched) = match &kept {
        None => (
            String::new(),
            format!(
                "SELECT s.ticket_id, {} FROM ticket_search s, q \
                 WHERE s.workspace_id = $1 AND s.search @@ q.query \
                   AND (SELECT count(*) <= {ranked} FROM scan)",
                rank("s.search", "q.query")
            ),
        ),
        Some(_) => (
            format!(
                "gin_kept AS MATERIALIZED (SELECT g.id FROM \
                    (SELECT m.id FROM (SELECT s.ticket_id AS id FROM ticket_search s, q \
                        WHERE s.workspace_id = $1 AND s.search @@ q.query \
                          AND (SELECT count(*) <= {ranked} FROM scan) OFFSET 0) m \
                     ORDER BY m.id DESC OFFSET 0) g \
                    WHERE true{} LIMIT {}), ",
                only("g.id"),
                ranked + 1
            ),
            format!(
                "SELECT k.id, {} FROM gin_kept k CROSS JOIN q \
                 CROSS JOIN LATERAL (SELECT * FROM ticket_search s \
                    WHERE s.ticket_id = k.id OFFSET 0) s",
                rank("s.search", "q.query")
            ),
        ),
    };
    let newest = "s.workspace_id = $1";
    let newest_order = "ORDER BY s.ticket_id DESC";
    // The page's tickets are probes of each hit's whole key (`OFFSET 0` keeps them per
    // hit): joined, PostgreSQL without statistics may read every ticket of the project with
    // its assignees and labels to keep 20 (found by `plans.rs` under load: 151,785 rows).
    let sql = format!(
        "WITH q AS (SELECT {query} AS query), \
         sample AS (SELECT count(*) >= {DENSE} AS dense \
            FROM (SELECT s.ticket_id AS id, s.search FROM ticket_search s \
                  WHERE {newest} {newest_order} LIMIT {SAMPLE}) w \
            WHERE ts_match_vq(w.search, {query}){only_w}), \
         scan AS MATERIALIZED (SELECT w.id, {scan_rank} AS score \
            FROM (SELECT s.ticket_id AS id, s.search \
                  FROM ticket_search s WHERE {newest} AND (SELECT dense FROM sample) \
                  {newest_order} LIMIT {BUDGET}) w \
            WHERE ts_match_vq(w.search, {query}){only_w} \
            ORDER BY w.id DESC LIMIT {probe}), \
         {gin_kept}\
         matched AS MATERIALIZED (SELECT id, score FROM scan \
              WHERE (SELECT count(*) > {ranked} FROM scan) \
            UNION ALL {gin_matched}), \
         counted AS (SELECT count(*) AS n FROM matched), \
         cut AS (SELECT id FROM matched ORDER BY id DESC OFFSET {ranked} LIMIT 1), \
         older AS MATERIALIZED (SELECT s.ticket_id AS id FROM ticket_search s \
            WHERE {newest} AND s.ticket_id <= (SELECT id FROM cut) \
              AND ts_match_vq(s.search, {query}){only_s} \
            {newest_order} \
            LIMIT greatest(0, {limit_mark}::bigint + {offset_mark}::bigint + 1 - {ranked})), \
         hits AS (SELECT id, score, grp \
            FROM (SELECT id, score, 0 AS grp FROM matched \
                  WHERE (SELECT n FROM counted) <= {ranked} OR id > (SELECT id FROM cut) \
                  UNION ALL SELECT id, 0::real, 1 FROM older \
                  WHERE (SELECT n FROM counted) > {ranked}) o \
            ORDER BY grp, score DESC, CASE WHEN grp = 0 THEN id ELSE -id END \
            LIMIT {limit_mark} OFFSET {offset_mark}) \
         SELECT CASE WHEN total.n <= {ranked} THEN total.n \
                     ELSE greatest(total.n, {ranked} + (SELECT count(*) FROM older)) END, \
                page.* \
         FROM counted total \
         LEFT JOIN LATERAL ( \
            SELECT CASE WHEN {title_matches} THEN {title_headline} \
                        WHEN {description_matches} THEN {description_headline} \
                        WHEN {comments_match} THEN {comments_headline} \
                        ELSE {all_headline} END, \
                   {SUMMARY_COLUMNS}, hits.score, hits.id, hits.grp \
            FROM hits CROSS JOIN q \
            CROSS JOIN LATERAL (SELECT * FROM ticket_search s \
               WHERE s.ticket_id = hits.id OFFSET 0) s \
            CROSS JOIN LATERAL (SELECT * FROM tickets t \
               WHERE t.workspace_id = $1 AND t.id = hits.id OFFSET 0) t \
            JOIN projects p ON p.workspace_id = t.workspace_id AND p.id = t.project_id \
         ) page ON true \
         ORDER BY page.grp, page.score DESC, \
            CASE WHEN page.grp = 0 THEN page.id ELSE -page.id END",
        probe = ranked + 1,
        gin_kept = gin_kept,
        gin_matched = gin_matched,
        only_w = only("w.id"),
        only_s = only("s.ticket_id"),
        scan_rank = rank("w.search", &query),
        title_matches = matches('a'),
        title_headline = headline("t.title"),
        description_matches = matches('b'),
        description_headline = headline("t.description"),
        comments_match = matches('c'),
        comments_headline = headline(comments),
        all_headline = headline(&everything),
    );
    // Planned for its workspace and page every time: sent unprepared (an unnamed
    // statement, planned with its values, in the same round trip), never as a prepared
    // statement, whose plan PostgreSQL may make once for every workspace (a generic plan,
    // after five runs) from the average workspace's size; for a workspace far bigger than
    // that it sorts all its tickets instead of reading the newest few thousand
    // (measured: 190 ms instead of 3 ms).
    let rows = tx.query_typed(&sql, &binds.typed())?;
    let mut total: i64 = 0;
    let mut hits = Vec::with_capacity(rows.len());
    for r in &rows {
        total = r.try_get(0).map_err(crate::store::db)?;
        // The count's row alone (no hit on this page): no snippet.
        let Some(snippet) = r
            .try_get::<_, Option<String>>(1)
            .map_err(crate::store::db)?
        else {
            continue;
        };
        hits.push(SearchHit {
            // ts_headline marks each word of a phrase alone (`**login** **form**`);
            // local mode marks the phrase once (`**login form**`).
            snippet: snippet.replace("** **", " "),
            ticket: summary_row(r, 2)?,
        });
    }
    let total = count(total);
    Ok(SearchPage {
        hits,
        total,
        total_exact: total <= ranked,
    })
}
