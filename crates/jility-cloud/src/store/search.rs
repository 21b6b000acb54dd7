//! Full-text search of a workspace's tickets (see the store's module docs, **Search**).

use jility_core::store::{SearchHit, SearchTerms, StoreResult};

use super::{Param, SUMMARY_COLUMNS, Tx, count, refs, summary_row};

/// Text search configuration made by the first migration.
const TS_CONFIG: &str = "jility";

/// Weights of `ts_rank`, in the order D, C, B, A: comments 0.1, descriptions 0.4,
/// titles 1.0 (local mode's bm25 weights 1 / 4 / 10).
const RANK_WEIGHTS: &str = "'{0, 0.1, 0.4, 1.0}'::float4[]";

/// `ts_headline` options: at most 16 words around the best match, `**` around hits (local
/// mode's `snippet(…, '**', '**', '…', 16)`).
const HEADLINE_OPTIONS: &str = "StartSel=\"**\", StopSel=\"**\", MaxWords=16, MinWords=6, \
     ShortWord=0, MaxFragments=1, FragmentDelimiter=\" … \"";

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

pub(super) fn search(
    tx: &mut Tx<'_>,
    terms: &SearchTerms,
    offset: usize,
    limit: usize,
) -> StoreResult<(Vec<SearchHit>, usize)> {
    let (query, words) = ts_query(terms);
    let mut values: Vec<Param> = vec![Box::new(tx.ws)];
    values.extend(words.into_iter().map(|w| Box::new(w) as Param));
    values.push(Box::new(limit as i64));
    let limit_mark = values.len();
    values.push(Box::new(offset as i64));
    let offset_mark = values.len();
    // The snippet comes from the first field that matches the whole query on its own
    // (title, description, comments: the words of weight A, B, C), else from all of
    // them together.
    let headline =
        |text: &str| format!("ts_headline('{TS_CONFIG}', {text}, q.query, '{HEADLINE_OPTIONS}')");
    let matches = |weight: char| format!("ts_filter(s.search, '{{{weight}}}') @@ q.query");
    let comments = "coalesce((SELECT string_agg(c.content, E'\\n' ORDER BY c.id) \
         FROM comments c WHERE c.workspace_id = t.workspace_id AND c.ticket_id = t.id), '')";
    let everything = format!("concat_ws(E'\\n', t.title, t.description, {comments})");
    // One pass over the matches ranks and counts them; the page's hits then join
    // their tickets. The count's row stands alone when the page is empty.
    let sql = format!(
        "WITH q AS (SELECT {query} AS query), \
         matched AS MATERIALIZED (SELECT s.ticket_id AS id, \
                ts_rank({RANK_WEIGHTS}, s.search, q.query, 1) AS score \
            FROM ticket_search s, q WHERE s.workspace_id = $1 AND s.search @@ q.query), \
         hits AS (SELECT id, score FROM matched ORDER BY score DESC, id \
            LIMIT ${limit_mark} OFFSET ${offset_mark}) \
         SELECT total.n, page.* FROM (SELECT count(*) AS n FROM matched) total \
         LEFT JOIN LATERAL ( \
            SELECT CASE WHEN {title_matches} THEN {title_headline} \
                        WHEN {description_matches} THEN {description_headline} \
                        WHEN {comments_match} THEN {comments_headline} \
                        ELSE {all_headline} END, \
                   {SUMMARY_COLUMNS}, hits.score, hits.id \
            FROM hits CROSS JOIN q \
            JOIN ticket_search s ON s.ticket_id = hits.id \
            JOIN tickets t ON t.workspace_id = $1 AND t.id = hits.id \
            JOIN projects p ON p.workspace_id = t.workspace_id AND p.id = t.project_id \
         ) page ON true \
         ORDER BY page.score DESC, page.id",
        title_matches = matches('a'),
        title_headline = headline("t.title"),
        description_matches = matches('b'),
        description_headline = headline("t.description"),
        comments_match = matches('c'),
        comments_headline = headline(comments),
        all_headline = headline(&everything),
    );
    let rows = tx.query(&sql, &refs(&values))?;
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
    Ok((hits, count(total)))
}
