//! One request at a time on a keep-alive connection, as part 2 measures the template: a
//! random ticket (`GET /tickets/{KEY-N}`), a page of the list (`GET /tickets`, no filter and
//! [`LISTS`] in turn), a search (`GET /search?q=`, the template's queries, [`queries`]) and
//! the web board (`/w/{workspace}/board`, signed in), each after [`WARMUP`] requests that are
//! not counted. Used by the fresh-import and skewed-tenant cases on their own databases.

use super::*;

/// The list queries, in turn.
const LISTS: &[&str] = &[
    "",
    "?label=backend",
    "?assignee=alice",
    "?label=bug&label=frontend",
    "?unassigned=true&limit=20",
    "?status=backlog&limit=200",
];
/// Requests of each kind measured (random reads and searches: as many as part 2's).
const LIST_ITERS: usize = 200;
const BOARD_ITERS: usize = 200;

/// One kind of request: its latencies.
pub struct Browsed {
    pub what: &'static str,
    pub p50: Duration,
    pub p99: Duration,
    pub n: usize,
}

impl Browsed {
    fn of(what: &'static str, samples: &[Duration]) -> Self {
        Self {
            what,
            p50: percentile(samples, 0.50),
            p99: percentile(samples, 0.99),
            n: samples.len(),
        }
    }
}

/// Where to browse: the API (`…/api/v1`), the workspace, its tickets `KEY-1` to
/// `KEY-tickets`, a token and a signed-in owner's cookie of it.
pub struct Workspace<'a> {
    pub api: &'a str,
    pub name: &'a str,
    pub tickets: usize,
    pub token: &'a str,
    pub cookie: &'a str,
}

/// The four kinds, one request at a time (`iters` random reads and searches, `iters * 2 / 5`
/// lists and boards: the template's 500, 300, 200 and 200 when `iters` is 500).
pub async fn browse(at: &Workspace<'_>, seed: u64, iters: usize) -> Vec<Browsed> {
    let http = http_client();
    let (api, token) = (at.api, at.token);
    let mut rng = Rng(seed);
    let numbers: Vec<usize> = (0..WARMUP + iters)
        .map(|_| rng.range(1, at.tickets))
        .collect();
    let get = sequential(
        &http,
        api,
        token,
        iters,
        |i| format!("/tickets/{KEY}-{}", numbers[i]),
        |i, v| assert_eq!(number_of(&v["ticket"]["number"]), numbers[i]),
    )
    .await;
    let lists = (iters * LIST_ITERS / ITERS).max(1);
    let list = sequential(
        &http,
        api,
        token,
        lists,
        |i| format!("/tickets{}", LISTS[i % LISTS.len()]),
        |i, v| {
            let tickets = v["tickets"].as_array();
            assert!(tickets.is_some(), "{}: {v}", LISTS[i % LISTS.len()]);
        },
    )
    .await;
    let queries = queries();
    let searches = (iters * ITERS_SEARCH / ITERS).min(queries.len() - WARMUP);
    let search = sequential(
        &http,
        api,
        token,
        searches,
        |i| format!("/search?q={}", urlencode(&queries[i])),
        |_, v| {
            let total = v["page"]["total"].as_u64().unwrap() as usize;
            assert_eq!(v["hits"].as_array().unwrap().len(), total.min(20), "{v}");
        },
    )
    .await;
    let root = api.strip_suffix("/api/v1").unwrap();
    let board_url = format!("{root}/w/{}/board", at.name);
    let (board, _) = web::pages(
        &http,
        at.cookie,
        (iters * BOARD_ITERS / ITERS).max(1),
        |_| board_url.clone(),
        |_, body| {
            assert!(body.contains("data-page=\"board\""), "not the board");
            assert_eq!(body.matches("class=\"column\"").count(), 6);
        },
    )
    .await;
    vec![
        Browsed::of("`GET /api/v1/tickets/{KEY-N}`, random", &get.samples),
        Browsed::of(
            "`GET /api/v1/tickets` (list, 6 filters in turn)",
            &list.samples,
        ),
        Browsed::of("`GET /api/v1/search?q=` (1–2 words)", &search.samples),
        Browsed::of("web board (`/w/{workspace}/board`)", &board),
    ]
}

/// A Markdown table of browsed workspaces, one column each.
pub fn table(columns: &[(&str, &[Browsed])]) -> String {
    let mut out = String::from("| one request at a time: p50 / p99 |");
    for (name, _) in columns {
        let _ = write!(out, " {name} |");
    }
    out.push_str("\n|---|");
    out.push_str(&"---:|".repeat(columns.len()));
    let Some((_, first)) = columns.first() else {
        return out;
    };
    for (row, kind) in first.iter().enumerate() {
        let _ = write!(out, "\n| {} ({} requests) |", kind.what, kind.n);
        for (_, rows) in columns {
            let _ = write!(out, " {} / {} |", ms(rows[row].p50), ms(rows[row].p99));
        }
    }
    out
}
