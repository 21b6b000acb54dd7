//! Cloud search past 1,000 matches (issue 29): the 1,000 newest matches are ranked and come
//! first, older ones follow newest first, the total is a lower bound; up to 1,000 matches
//! everything is ranked and counted exactly, as before. Both ways of finding the newest
//! matches are exercised: reading the workspace newest first (a query common among the
//! newest tickets) and the GIN index (a query found only in old tickets).
//!
//! The tickets are inserted with one SQL statement (the trigger fills `ticket_search`), in
//! a database of the test's own, dropped when done.

use std::collections::BTreeSet;

use jility_core::params::SearchTickets;
use jility_core::store::{Filter, SearchTerms, Store};
use jility_core::tracker::Tracker;
use jility_pg::store::{PgDatabase, PgStore};
use mcp_common_core::{CursorKey, ToolError};

use crate::pg::TestDb;

/// Up to this many matches are ranked and counted exactly (the store's `RANKED`), and with
/// a filter up to this many kept ones (`FILTERED_RANKED`).
const RANKED: usize = 1_000;
const FILTERED_RANKED: usize = 500;

/// Tickets inserted by SQL, numbered 1..=TICKETS in id order.
const TICKETS: i64 = 3_000;

fn is_alpha(n: i64) -> bool {
    n % 3 != 0
}
fn alpha_in_title(n: i64) -> bool {
    is_alpha(n) && n % 10 == 1
}
fn is_legacy(n: i64) -> bool {
    n <= 1_500
}
fn legacy_in_title(n: i64) -> bool {
    is_legacy(n) && n % 10 == 5
}
fn is_gamma(n: i64) -> bool {
    n % 3 == 0
}

/// A tracker on a new workspace with `TICKETS` tickets: "alpha" in 2,000 of them spread
/// over all (the newest tickets are full of it), "legacy" in the 1,500 oldest only (none
/// of the newest), "gamma" in exactly 1,000. Every ticket has five words (title "x item",
/// description "x notes x"), so matches tie on rank within title hits and within
/// description hits.
fn workspace(test_db: &TestDb, root: &std::path::Path) -> Tracker<PgStore> {
    let db = PgDatabase::connect(&test_db.url).unwrap();
    let ws = db.create_workspace("big").unwrap();
    let store = PgStore::open(&db, ws.id).unwrap();
    let mut tracker = Tracker::new(store, root.to_path_buf(), CursorKey::random());
    tracker.init("TASK", "Demo", false).unwrap();
    let mut client = test_db.client();
    client
        .execute(
            "INSERT INTO tickets (workspace_id, uuid, project_id, number, title, description,
                 status, created_by, created_at, updated_by, updated_at)
             SELECT p.workspace_id, gen_random_uuid()::text, p.id, n,
                 CASE WHEN n % 3 <> 0 AND n % 10 = 1 THEN 'Alpha'
                      WHEN n <= 1500 AND n % 10 = 5 THEN 'Legacy'
                      ELSE 'Plain' END || ' item',
                 CASE WHEN n % 3 <> 0 AND n % 10 <> 1 THEN 'alpha'
                      WHEN n % 3 = 0 THEN 'gamma'
                      ELSE 'plain' END
                 || ' notes '
                 || CASE WHEN n <= 1500 AND n % 10 <> 5 THEN 'legacy' ELSE 'here' END,
                 'todo', 'alice', '2024-01-01T00:00:00Z', 'alice', '2024-01-01T00:00:00Z'
             FROM projects p, generate_series(1::bigint, $2::bigint) n
             WHERE p.workspace_id = $1
             ORDER BY n",
            &[&ws.id, &TICKETS],
        )
        .unwrap();
    client
        .execute(
            "UPDATE projects SET next_number = $2::bigint + 1 WHERE workspace_id = $1",
            &[&ws.id, &TICKETS],
        )
        .unwrap();
    client.batch_execute("ANALYZE ticket_search").unwrap();
    tracker
}

fn number(n: i64) -> String {
    format!("TASK-{n}")
}

/// The order promised for a query matching more than `RANKED` tickets, `matching` in
/// ascending number (= id) order, where every title hit outranks every description hit
/// and hits of a kind tie: the newest `RANKED` ranked (title hits, then description hits,
/// each oldest first, as ties go by id), then the older ones newest first.
fn big_order(matching: &[i64], in_title: impl Fn(i64) -> bool) -> Vec<String> {
    order_past(RANKED, matching, in_title)
}

/// [`big_order`] with `ranked` in place of `RANKED`.
fn order_past(ranked: usize, matching: &[i64], in_title: impl Fn(i64) -> bool) -> Vec<String> {
    let split = matching.len().saturating_sub(ranked);
    let (older, newest) = matching.split_at(split);
    let titles = newest.iter().copied().filter(|&n| in_title(n));
    let descriptions = newest.iter().copied().filter(|&n| !in_title(n));
    titles
        .chain(descriptions)
        .chain(older.iter().rev().copied())
        .map(number)
        .collect()
}

/// Every page of a search, `limit` at a time, following the cursors: the numbers in
/// order and each page's total.
fn walk(t: &mut Tracker<PgStore>, query: &str, limit: i64) -> (Vec<String>, Vec<u64>) {
    let mut numbers = Vec::new();
    let mut totals = Vec::new();
    let mut cursor = None;
    loop {
        let page = t
            .search(
                "alice",
                &SearchTickets {
                    query: query.to_string(),
                    limit: Some(limit),
                    cursor: cursor.take(),
                    sprint: None,
                },
            )
            .unwrap();
        numbers.extend(page.data.hits.into_iter().map(|h| h.number));
        totals.push(page.page.total);
        match page.page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
        assert!(totals.len() < 1_000, "paging does not end");
    }
    (numbers, totals)
}

/// The store's own answer: the page's numbers and the count it gives.
fn store_search(
    store: &mut PgStore,
    word: &str,
    offset: usize,
    limit: usize,
) -> (Vec<String>, usize) {
    store
        .read(|tx| {
            let page = tx
                .search(
                    &SearchTerms(vec![vec![word.to_string()]]),
                    &Filter::default(),
                    offset,
                    limit,
                )
                .map_err(ToolError::from)?;
            assert_eq!(page.total_exact, page.total <= RANKED, "{word}: exactness");
            Ok((
                page.hits.into_iter().map(|h| h.ticket.number).collect(),
                page.total,
            ))
        })
        .unwrap()
}

/// `counted`: found through the GIN index, which counts every match (a lower bound all
/// the same); else read newest first, which stops counting past `RANKED` + 1.
fn check_big(
    t: &mut Tracker<PgStore>,
    word: &str,
    matching: &[i64],
    in_title: impl Fn(i64) -> bool,
    counted: bool,
) {
    let want = big_order(matching, in_title);
    let mut store = t.store().clone();

    // The first page: the best of the newest matches; the count says "more than RANKED",
    // and the tracker's page that it is not exact.
    let (first, total) = store_search(&mut store, word, 0, 20);
    let page = t
        .search(
            "alice",
            &SearchTickets {
                query: word.to_string(),
                limit: Some(20),
                cursor: None,
                sprint: None,
            },
        )
        .unwrap();
    assert_eq!(page.page.total_exact, Some(false), "{word}: a lower bound");
    let text = jility_core::render::search(&page.data, &page.page);
    assert!(
        text.starts_with(&format!("🔍 Found at least {total} tickets")),
        "{word}: the tool's text says so too: {text}"
    );
    assert_eq!(page.page.total as usize, total);
    assert_eq!(first, want[..20].to_vec(), "{word}: first page");
    assert!(total > RANKED, "{word}: total {total} is not past the cap");
    if counted {
        assert_eq!(total, matching.len(), "{word}: total");
    } else {
        assert_eq!(total, RANKED + 1, "{word}: counted past the cap");
    }

    // Every page in turn: the promised order, no hit twice, none missing.
    let (walked, totals) = walk(t, word, 100);
    assert_eq!(walked.len(), matching.len(), "{word}: hits walked");
    assert_eq!(
        walked.iter().collect::<BTreeSet<_>>().len(),
        walked.len(),
        "{word}: a hit came twice"
    );
    assert_eq!(walked, want, "{word}: order across pages");
    assert!(
        totals.iter().all(|&n| n as usize > RANKED),
        "{word}: {totals:?}"
    );

    // A page straddling the ranked matches and the older ones.
    let (straddle, _) = store_search(&mut store, word, RANKED - 5, 10);
    assert_eq!(
        straddle,
        want[RANKED - 5..RANKED + 5].to_vec(),
        "{word}: straddling page"
    );
}

#[test]
fn big_result_sets_rank_the_newest_matches_and_count_no_further() {
    let test_db = TestDb::new();
    let root = tempfile::tempdir().unwrap();
    let mut t = workspace(&test_db, root.path());

    // Common among the newest tickets: read newest first.
    let alpha: Vec<i64> = (1..=TICKETS).filter(|&n| is_alpha(n)).collect();
    check_big(&mut t, "alpha", &alpha, alpha_in_title, false);
    // Found only in old tickets: through the GIN index.
    let legacy: Vec<i64> = (1..=TICKETS).filter(|&n| is_legacy(n)).collect();
    check_big(&mut t, "legacy", &legacy, legacy_in_title, true);
    // Two words, both required: 1,000 of "alpha"'s tickets are old "legacy" ones.
    let both: Vec<i64> = (1..=TICKETS)
        .filter(|&n| is_alpha(n) && is_legacy(n))
        .collect();
    let (hits, total) = store_search_terms(&mut t, &["alpha", "legacy"]);
    assert_eq!(total, both.len(), "alpha legacy");
    assert_eq!(hits.len(), 20);
}

fn store_search_terms(t: &mut Tracker<PgStore>, words: &[&str]) -> (Vec<String>, usize) {
    let mut store = t.store().clone();
    let terms = SearchTerms(words.iter().map(|w| vec![w.to_string()]).collect());
    store
        .read(|tx| {
            let page = tx
                .search(&terms, &Filter::default(), 0, 20)
                .map_err(ToolError::from)?;
            Ok((
                page.hits.into_iter().map(|h| h.ticket.number).collect(),
                page.total,
            ))
        })
        .unwrap()
}

#[test]
fn up_to_the_cap_everything_is_ranked_and_counted_exactly() {
    let test_db = TestDb::new();
    let root = tempfile::tempdir().unwrap();
    let mut t = workspace(&test_db, root.path());

    // Exactly RANKED matches, common among the newest tickets: all ranked, an exact count.
    let gamma: Vec<String> = (1..=TICKETS).filter(|&n| is_gamma(n)).map(number).collect();
    assert_eq!(gamma.len(), RANKED);
    let (walked, totals) = walk(&mut t, "gamma", 100);
    // All of them tie (description hits of equal length): by id.
    assert_eq!(walked, gamma);
    assert!(totals.iter().all(|&n| n as usize == RANKED), "{totals:?}");
    let page = t
        .search(
            "alice",
            &SearchTickets {
                query: "gamma".into(),
                limit: Some(5),
                cursor: None,
                sprint: None,
            },
        )
        .unwrap();
    assert_eq!(page.page.total as usize, RANKED);
    assert_ne!(page.page.total_exact, Some(false));

    // A small result set among many tickets: ranked title, description, comment, as
    // always, and counted exactly.
    crate::postgres_store::search_fixture(&mut t, &number(TICKETS + 3));
    let page = t
        .search(
            "alice",
            &SearchTickets {
                query: "zebra".into(),
                limit: None,
                cursor: None,
                sprint: None,
            },
        )
        .unwrap();
    let numbers: Vec<String> = page.data.hits.iter().map(|h| h.number.clone()).collect();
    assert_eq!(
        numbers,
        vec![
            number(TICKETS + 1),
            number(TICKETS + 2),
            number(TICKETS + 3)
        ]
    );
    assert_eq!(page.page.total, 3);
    assert_ne!(page.page.total_exact, Some(false));
    assert_eq!(page.data.hits[0].snippet, "**Zebra** crossing signals");
}

/// With a filter (a qualifier of the query language), past 500 kept matches (the store's
/// `FILTERED_RANKED`): the same order over the kept ones — the newest 500 ranked, older ones
/// newest first — and a total that is a lower bound, both through the GIN index ("legacy",
/// only in old tickets) and reading newest first ("alpha").
#[test]
fn filtered_big_result_sets_keep_the_order_over_what_the_filter_keeps() {
    let test_db = TestDb::new();
    let root = tempfile::tempdir().unwrap();
    let mut t = workspace(&test_db, root.path());
    // Four tickets in five go to review.
    let in_review = |n: i64| n % 5 != 0;
    test_db
        .client()
        .execute(
            "UPDATE tickets SET status = 'review' WHERE number % 5 <> 0",
            &[],
        )
        .unwrap();
    for (word, matches, in_title) in [
        (
            "legacy",
            is_legacy as fn(i64) -> bool,
            legacy_in_title as fn(i64) -> bool,
        ),
        ("alpha", is_alpha, alpha_in_title),
    ] {
        let kept: Vec<i64> = (1..=TICKETS)
            .filter(|&n| matches(n) && in_review(n))
            .collect();
        assert!(
            kept.len() > FILTERED_RANKED,
            "{word}: the filter keeps more than the cap"
        );
        let query = format!("{word} status:review");
        let (walked, totals) = walk(&mut t, &query, 100);
        assert!(
            walked == order_past(FILTERED_RANKED, &kept, in_title),
            "{query}: order across pages (first {:?})",
            &walked[..5]
        );
        assert!(
            totals.iter().all(|&n| n as usize > FILTERED_RANKED),
            "{query}: {totals:?}"
        );
        // Nothing the filter leaves out.
        let (out, _) = walk(&mut t, &format!("{word} -status:review"), 100);
        let left_out: Vec<i64> = (1..=TICKETS)
            .filter(|&n| matches(n) && !in_review(n))
            .collect();
        assert_eq!(out.len(), left_out.len(), "{word} -status:review");
    }
}
