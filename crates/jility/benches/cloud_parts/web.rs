//! Part 4 of the cloud benchmark (`JILITY_BENCH_ONLY=web`): the web app's pages on the
//! 100,000-ticket workspace, one request at a time on a keep-alive connection, beside the
//! REST API's own `GET /api/v1/tickets/{KEY-N}` as the baseline measured in the same run:
//! the board (six columns of 25 cards, counted), a ticket's page, and the list page with a
//! search. A person signs in as the web does (an account, an owner's membership and a
//! session made with the library on the run's copy; the cookie carries the session).
//!
//! Targets (issue 24): board p50 ≤ 30 ms and ≤ 200 KB, ticket page p50 ≤ 20 ms, search
//! page p50 ≤ 30 ms.
//!
//! Then the rows that cases (b) and (c) measure on their databases (`cloud_parts/browse.rs`:
//! single reads, six list filters, search, the board), on the template, to compare with.

use super::*;

use jility_cloud::accounts::{Accounts, Actor, Role};

/// The cookie the web app reads its session from.
const SESSION_COOKIE: &str = "jility_session";
/// Requests of each page measured (after [`WARMUP`]).
const PAGES: usize = 200;

const BOARD_TARGET_MS: f64 = 30.0;
const BOARD_TARGET_BYTES: usize = 200 * 1024;
const TICKET_TARGET_MS: f64 = 20.0;
const SEARCH_TARGET_MS: f64 = 30.0;

/// A person with a session on the copy: the owner of the bench workspace (blocking: call
/// it outside the runtime). The cookie that carries the session.
pub fn sign_in(url: &str) -> String {
    sign_in_to(url, WORKSPACE, "bench@example.com")
}

/// [`sign_in`] as `email`, the owner of workspace `workspace`.
pub fn sign_in_to(url: &str, workspace: &str, email: &str) -> String {
    let db = PgDatabase::connect_with(url, 1).unwrap();
    let workspace = db.workspace_by_name(workspace).unwrap().unwrap();
    let accounts = Accounts::new(&db);
    let user = accounts.create_user(email, "Bench Person", None).unwrap();
    accounts
        .add_member(workspace.id, user.id, Role::Owner, Actor::Operator)
        .unwrap();
    let session = accounts.create_session(user).unwrap();
    format!("{SESSION_COOKIE}={}", session.secret.expose())
}

/// One page `iters` times after [`WARMUP`]: latencies and the largest body.
pub async fn pages(
    http: &reqwest::Client,
    cookie: &str,
    iters: usize,
    url: impl Fn(usize) -> String,
    check: impl Fn(usize, &str),
) -> (Vec<Duration>, usize) {
    let mut samples = Vec::with_capacity(iters);
    let mut largest = 0;
    for i in 0..WARMUP + iters {
        let url = url(i);
        let t = Instant::now();
        let response = http
            .get(&url)
            .header("Cookie", cookie)
            .send()
            .await
            .unwrap_or_else(|err| panic!("GET {url}: {err}"));
        let status = response.status().as_u16();
        let body = response.text().await.unwrap();
        let elapsed = t.elapsed();
        assert_eq!(status, 200, "GET {url}: {}", &body[..body.len().min(500)]);
        check(i, &body);
        if i >= WARMUP {
            samples.push(elapsed);
            largest = largest.max(body.len());
        }
    }
    (samples, largest)
}

/// The web part, printed as a table as it comes.
pub async fn web_only(server: &Server, cookie: &str, token: &str) {
    let http = http_client();
    let root = server.root().to_string();
    let numbers = distinct_numbers(0x0EB0_A4D5, WARMUP + PAGES);
    let api = sequential(
        &http,
        &server.url,
        token,
        PAGES,
        |i| format!("/tickets/{KEY}-{}", numbers[i]),
        |i, v| assert_eq!(v["ticket"]["number"], format!("{KEY}-{}", numbers[i])),
    )
    .await;
    let board_url = format!("{root}/w/{WORKSPACE}/board");
    let (board, board_bytes) = pages(
        &http,
        cookie,
        PAGES,
        |_| board_url.clone(),
        |_, body| {
            assert!(body.contains("data-page=\"board\""), "not the board");
            assert_eq!(body.matches("class=\"column\"").count(), 6);
        },
    )
    .await;
    let (ticket, _) = pages(
        &http,
        cookie,
        PAGES,
        |i| format!("{root}/w/{WORKSPACE}/tickets/{KEY}-{}", numbers[i]),
        |i, body| assert!(body.contains(&format!("data-ticket=\"{KEY}-{}\"", numbers[i]))),
    )
    .await;
    let queries = queries();
    let (search, _) = pages(
        &http,
        cookie,
        PAGES.min(queries.len() - WARMUP),
        |i| format!("{root}/w/{WORKSPACE}/list?q={}", urlencode(&queries[i])),
        |_, body| assert!(body.contains("data-page=\"list\"")),
    )
    .await;
    let base = percentile(&api.samples, 0.50);
    let row = |name: &str, samples: &[Duration], target: f64| {
        let p50 = percentile(samples, 0.50);
        let p99 = percentile(samples, 0.99);
        format!(
            "| {name} | {} | {} | {:.1}× | ≤ {target} ms | {} |",
            ms(p50),
            ms(p99),
            p50.as_secs_f64() / base.as_secs_f64(),
            met(p50.as_secs_f64() * 1000.0 <= target)
        )
    };
    let mut out = vec![
        "| page (one request at a time) | p50 | p99 | × API GET p50 | target | met |".to_string(),
        "|---|---:|---:|---:|---|---|".to_string(),
        format!(
            "| API `GET /api/v1/tickets/{{KEY-N}}` (baseline) | {} | {} | 1.0× | | |",
            ms(base),
            ms(percentile(&api.samples, 0.99))
        ),
        row("board (6 columns × 25 cards)", &board, BOARD_TARGET_MS),
        row("ticket page", &ticket, TICKET_TARGET_MS),
        row("search page (`/list?q=`)", &search, SEARCH_TARGET_MS),
    ];
    out.push(format!(
        "\nboard HTML: {} KB (target ≤ {} KB: {})",
        board_bytes / 1024,
        BOARD_TARGET_BYTES / 1024,
        met(board_bytes <= BOARD_TARGET_BYTES)
    ));
    println!("{}", out.join("\n"));
    // The template's figures for the rows cases (b) and (c) measure (`browse.rs`), the list's
    // filters among them: what they are compared with.
    let at = browse::Workspace {
        api: &server.url,
        name: WORKSPACE,
        tickets: TICKETS,
        token,
        cookie,
    };
    let browsed = browse::browse(&at, 0x0EB0_B000, ITERS).await;
    println!("\n{}", browse::table(&[("template (a)", &browsed)]));
}
