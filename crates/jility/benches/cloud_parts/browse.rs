//! One request at a time on a keep-alive connection, as part 2 measures the template: a
//! random ticket (`GET /tickets/{KEY-N}`), a page of the list (`GET /tickets`, each of
//! [`LISTS`] on its own line), a search (`GET /search?q=`, the template's queries,
//! [`queries`]), the same with three qualifiers of the query language, related tickets of a
//! random ticket (`GET /tickets/related?ticket_id=`) and the web board
//! (`/w/{workspace}/board`, signed in), each after
//! [`WARM_UPS`] requests that are not counted. Used by the fresh-import and skewed-tenant
//! cases on their own databases.
//!
//! These databases are where a statement may take its worst plan, so an answer other than 200
//! does not stop the run: it is counted (with its error code) and its latency kept, and a kind
//! whose requests have taken [`BUDGET`] in all stops there (the statement timeout is 30 s;
//! with no measured request left, the p50 of the warm-up is shown, marked so). A 200 that
//! answers something else than what was asked still fails the run.

use std::collections::BTreeMap;

use super::*;

/// The list queries, each a kind of its own.
const LISTS: &[&str] = &[
    "",
    "?label=backend",
    "?assignee=alice",
    "?label=bug&label=frontend",
    "?unassigned=true&limit=20",
    "?status=backlog&limit=200",
];
/// Requests of each kind measured, for `iters` random reads (part 2's proportions: 500 reads,
/// 300 searches, 200 boards, and 200 lists, here 40 of each query).
const LIST_ITERS: usize = 40;
const BOARD_ITERS: usize = 200;
/// Requests of each kind sent first and not counted.
const WARM_UPS: usize = 10;
/// The most time one kind of request may take, warm-up included.
const BUDGET: Duration = Duration::from_secs(45);

/// One kind of request: its latencies, and what went wrong.
pub struct Browsed {
    pub what: String,
    pub samples: Vec<Duration>,
    /// The warm-up's latencies.
    pub warm_up: Vec<Duration>,
    /// Answers other than 200 (warm-up included), by status and error code.
    pub failed: BTreeMap<String, usize>,
    /// Requests asked for (warm-up included) and sent before the budget ran out.
    pub asked: usize,
    pub sent: usize,
}

impl Browsed {
    /// `p50 / p99`, then what went wrong, if anything.
    fn cell(&self) -> String {
        let mut out = if self.samples.is_empty() {
            match self.warm_up.is_empty() {
                true => "—".to_string(),
                false => format!(
                    "— (warm-up's p50 {} of {})",
                    ms(percentile(&self.warm_up, 0.50)),
                    self.warm_up.len()
                ),
            }
        } else {
            format!(
                "{} / {} ({})",
                ms(percentile(&self.samples, 0.50)),
                ms(percentile(&self.samples, 0.99)),
                self.samples.len()
            )
        };
        if !self.failed.is_empty() {
            let failed: Vec<String> = self
                .failed
                .iter()
                .map(|(what, n)| format!("{n} × {what}"))
                .collect();
            let _ = write!(out, " (**failed**: {})", failed.join(", "));
        }
        if self.sent < self.asked {
            let _ = write!(
                out,
                " (**stopped** after {} s: {} of {} requests sent)",
                BUDGET.as_secs(),
                self.sent,
                self.asked
            );
        }
        out
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

/// `WARM_UPS + iters` requests of `url(i)` (with the bearer `token`, else the `cookie`), one
/// at a time; a 200's body checked by `check`.
async fn kind(
    what: String,
    http: &reqwest::Client,
    auth: (Option<&str>, &str),
    iters: usize,
    url: impl Fn(usize) -> String,
    check: impl Fn(usize, &str),
) -> Browsed {
    let started = Instant::now();
    let mut browsed = Browsed {
        what,
        samples: Vec::with_capacity(iters),
        warm_up: Vec::new(),
        failed: BTreeMap::new(),
        asked: WARM_UPS + iters,
        sent: 0,
    };
    for i in 0..WARM_UPS + iters {
        if started.elapsed() > BUDGET {
            break;
        }
        let url = url(i);
        let request = match auth {
            (Some(token), _) => http.get(&url).bearer_auth(token),
            (None, cookie) => http.get(&url).header("Cookie", cookie),
        };
        let t = Instant::now();
        let response = request.send().await;
        let answer = match response {
            Ok(response) => {
                let status = response.status().as_u16();
                response.text().await.map(|body| (status, body))
            }
            Err(err) => Err(err),
        };
        let elapsed = t.elapsed();
        browsed.sent += 1;
        match answer {
            Ok((200, body)) => check(i, &body),
            Ok((status, body)) => {
                let code = serde_json::from_str::<Value>(&body)
                    .ok()
                    .and_then(|v| v["error"]["code"].as_str().map(str::to_string))
                    .unwrap_or_default();
                let failure = format!("{status} {code}");
                *browsed
                    .failed
                    .entry(failure.trim().to_string())
                    .or_default() += 1;
            }
            Err(err) => {
                let what = if err.is_timeout() { "timeout" } else { "error" };
                *browsed.failed.entry(what.to_string()).or_default() += 1;
            }
        }
        if i >= WARM_UPS {
            browsed.samples.push(elapsed);
        } else {
            browsed.warm_up.push(elapsed);
        }
    }
    if !browsed.failed.is_empty() || browsed.sent < browsed.asked {
        eprintln!("  {}: {}", browsed.what, browsed.cell());
    }
    browsed
}

/// The four kinds, one request at a time (`iters` random reads; searches, lists and boards
/// in part 2's proportions).
pub async fn browse(at: &Workspace<'_>, seed: u64, iters: usize) -> Vec<Browsed> {
    let http = http_client();
    let api = at.api;
    let bearer = (Some(at.token), "");
    let mut rng = Rng(seed);
    let numbers: Vec<usize> = (0..WARM_UPS + iters)
        .map(|_| rng.range(1, at.tickets))
        .collect();
    let json = |body: &str| serde_json::from_str::<Value>(body).unwrap();
    let get = kind(
        "`GET /api/v1/tickets/{KEY-N}`, random".to_string(),
        &http,
        bearer,
        iters,
        |i| format!("{api}/tickets/{KEY}-{}", numbers[i]),
        |i, body| assert_eq!(number_of(&json(body)["ticket"]["number"]), numbers[i]),
    )
    .await;
    let mut lists = Vec::new();
    for query in LISTS {
        let list = kind(
            format!("`GET /api/v1/tickets{query}` (list)"),
            &http,
            bearer,
            (iters * LIST_ITERS / ITERS).max(1),
            |_| format!("{api}/tickets{query}"),
            |_, body| {
                let v = json(body);
                assert!(v["tickets"].is_array(), "{query}: {v}");
            },
        )
        .await;
        lists.push(list);
    }
    let queries = queries();
    let searches = (iters * ITERS_SEARCH / ITERS).min(queries.len() - WARM_UPS);
    let search = kind(
        "`GET /api/v1/search?q=` (1–2 words)".to_string(),
        &http,
        bearer,
        searches,
        |i| format!("{api}/search?q={}", urlencode(&queries[i])),
        |_, body| {
            let v = json(body);
            let total = v["page"]["total"].as_u64().unwrap() as usize;
            assert_eq!(v["hits"].as_array().unwrap().len(), total.min(20), "{v}");
        },
    )
    .await;
    // The query language (three qualifiers and the words) and related tickets (issue 43).
    let qualified = kind(
        "`GET /api/v1/search?q=WORDS -status:done label:backend,bug,frontend updated:<3650d`"
            .to_string(),
        &http,
        bearer,
        searches,
        |i| {
            format!(
                "{api}/search?q={}",
                urlencode(&format!(
                    "{} -status:done label:backend,bug,frontend updated:<3650d",
                    queries[i]
                ))
            )
        },
        |_, body| assert!(json(body)["hits"].is_array()),
    )
    .await;
    let related = kind(
        "`GET /api/v1/tickets/related?ticket_id=KEY-N`, random".to_string(),
        &http,
        bearer,
        searches,
        |i| format!("{api}/tickets/related?ticket_id={KEY}-{}", numbers[i]),
        |i, body| {
            let v = json(body);
            assert_eq!(number_of(&v["probe"]["ticket"]), numbers[i], "{v}");
        },
    )
    .await;
    let root = api.strip_suffix("/api/v1").unwrap();
    let board_url = format!("{root}/w/{}/board", at.name);
    let board = kind(
        "web board (`/w/{workspace}/board`)".to_string(),
        &http,
        (None, at.cookie),
        (iters * BOARD_ITERS / ITERS).max(1),
        |_| board_url.clone(),
        |_, body| {
            assert!(body.contains("data-page=\"board\""), "not the board");
            assert_eq!(body.matches("class=\"column\"").count(), 6);
        },
    )
    .await;
    let mut all = vec![get];
    all.extend(lists);
    all.extend([search, qualified, related, board]);
    all
}

/// A Markdown table of browsed workspaces, one column each.
pub fn table(columns: &[(&str, &[Browsed])]) -> String {
    let mut out = String::from("| one request at a time: p50 / p99 (requests measured) |");
    for (name, _) in columns {
        let _ = write!(out, " {name} |");
    }
    out.push_str("\n|---|");
    out.push_str(&"---:|".repeat(columns.len()));
    let Some((_, first)) = columns.first() else {
        return out;
    };
    for (row, kind) in first.iter().enumerate() {
        let _ = write!(out, "\n| {} |", kind.what);
        for (_, rows) in columns {
            let _ = write!(out, " {} |", rows[row].cell());
        }
    }
    out
}
