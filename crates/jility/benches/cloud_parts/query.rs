//! The query language's part of the cloud benchmark (`JILITY_BENCH_ONLY=query`, issue 43):
//! on the 100,000-ticket workspace, one request at a time on a keep-alive connection, beside
//! plain full-text search measured in the same run with the same words:
//! - `GET /search?q=WORDS -status:done label:backend,bug,frontend updated:<3650d` (three
//!   qualifiers and the words, ranked) ≤ 2× plain search's p50;
//! - and, without a target, the same qualifiers sorted (`sort:updated-desc`, no ranking),
//!   and a listing by qualifiers alone (`GET /tickets?q=status:todo label:backend
//!   sort:updated-desc`) beside the filter listing `GET /tickets?status=todo&label=backend`.
//!
//! Plain search is measured before and after the queries; the ratio is to the slower of
//! the two p50s' mean, so that a drift of the machine does not make the queries look good.

use super::*;

/// The qualifiers added to each search's words.
const QUALIFIERS: &str = "-status:done label:backend,bug,frontend updated:<3650d";
/// The target: a query with three qualifiers and words, against plain search (p50).
const QUERY_TARGET: f64 = 2.0;

pub(super) async fn query_only(server: &Server, tokens: &[String]) -> Vec<String> {
    let base = server.url.as_str();
    let http = http_client();
    let queries = queries();
    let search = |query: fn(&str) -> String| {
        let (http, queries) = (&http, &queries);
        async move {
            sequential(
                http,
                base,
                &tokens[0],
                ITERS_SEARCH,
                |i| format!("/search?q={}", urlencode(&query(&queries[i]))),
                |_, v| assert!(v["hits"].is_array(), "{v}"),
            )
            .await
        }
    };
    let plain = search(|words| words.to_string()).await;
    eprintln!("query: plain search p50 {}", ms(plain.p50));
    let qualified = search(|words| format!("{words} {QUALIFIERS}")).await;
    eprintln!(
        "query: words and three qualifiers p50 {}",
        ms(qualified.p50)
    );
    let sorted = search(|words| format!("{words} {QUALIFIERS} sort:updated-desc")).await;
    eprintln!("query: the same, sorted by update p50 {}", ms(sorted.p50));
    let again = search(|words| words.to_string()).await;
    eprintln!("query: plain search again p50 {}", ms(again.p50));
    let listing = |path: &'static str| {
        let http = &http;
        async move {
            sequential(
                http,
                base,
                &tokens[0],
                ITERS,
                |_| path.to_string(),
                |_, v| assert!(v["tickets"].is_array(), "{v}"),
            )
            .await
        }
    };
    let filters = listing("/tickets?status=todo&label=backend").await;
    let by_query =
        listing("/tickets?q=status%3Atodo%20label%3Abackend%20sort%3Aupdated-desc").await;
    let by_query_newest = listing("/tickets?q=status%3Atodo%20label%3Abackend").await;

    let baseline = plain.p50.max(again.p50);
    let ratio = |d: Duration| d.as_secs_f64() / baseline.as_secs_f64();
    let verdict = |r: f64, target: f64| if r <= target { "met" } else { "NOT met" };
    let r = ratio(qualified.p50);
    vec![
        format!(
            "plain search p50 {} and {} (before and after; baseline the slower)",
            ms(plain.p50),
            ms(again.p50)
        ),
        format!(
            "words + three qualifiers (`{QUALIFIERS}`), ranked: p50 {} = {r:.2}× plain search (target ≤ {QUERY_TARGET}×: {})",
            ms(qualified.p50),
            verdict(r, QUERY_TARGET)
        ),
        format!(
            "the same with `sort:updated-desc`: p50 {} = {:.2}× plain search",
            ms(sorted.p50),
            ratio(sorted.p50)
        ),
        format!(
            "`GET /tickets?q=status:todo label:backend` (newest first): p50 {}; with `sort:updated-desc`: p50 {}; the filters `GET /tickets?status=todo&label=backend`: p50 {}",
            ms(by_query_newest.p50),
            ms(by_query.p50),
            ms(filters.p50)
        ),
    ]
}
