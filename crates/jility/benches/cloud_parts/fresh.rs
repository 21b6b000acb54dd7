//! Case (b) of issue 41 (`JILITY_BENCH_ONLY=fresh`): a new user's workspace, read at once
//! after its import, before PostgreSQL has any statistics.
//!
//! A fresh database (`jility_bench_fresh_<pid>`, dropped at the end, also on failure), the
//! `jility serve` under test started on it (it creates the schema), a workspace made with
//! `jility admin create-workspace`, then autovacuum turned off for every table
//! (`cloud_parts/import.rs`: a server that runs autovacuum measures the same state as one
//! that does not), the workspace's tokens minted with the library and its owner signed in. A few GETs first, while the
//! tables are tiny, as a new user looks around (the list, a search, a ticket that is not
//! there yet, the board): the server's prepared statements are planned then. Then
//! [`TICKETS`] tickets imported through `POST /api/v1/tickets/batch`, 200 a request, one
//! after another (`import::Import`). At once: the [`CLIENTS`]-client GET of random tickets
//! of the workspace (`wrk` when installed, then the reqwest clients that check every answer's
//! number and title), then `pgbench -S -c 32` beside it and the rows of `tickets` the readers
//! read (`pg_stat_user_tables`), then list, search, the board and single reads one request at
//! a time (`cloud_parts/browse.rs`). No `ANALYZE` or `VACUUM` anywhere: afterwards `pg_stat_user_tables` must show none on `tickets` (else the run
//! fails), and the tables where any was done are named.

use super::*;

use import::{CaseReport, Import};

/// Tickets imported.
pub const TICKETS: usize = 10_000;
const SEED: u64 = 0xF7E5_4000;

pub fn fresh(bin: &Path, pgbench: &PgBench) -> CaseReport {
    let started = Instant::now();
    let plan = Import::generate(SEED, TICKETS);
    let (db, _) = import::Scratch::create("jility_bench_fresh_", None);
    let server = Server::start(bin, &db.url);
    let token = create_workspace(bin, &db.url);
    let tables = import::autovacuum_off(&db.url);
    let readers = {
        let library = PgDatabase::connect_with(&db.url, 1).unwrap();
        import::mint_in(&library, WORKSPACE, &import::reader_names())
    };
    let cookie = web::sign_in(&db.url);
    let set_up = started.elapsed();
    eprintln!(
        "fresh: database {}, `jility serve`, workspace, autovacuum off on {tables} tables: \
         {set_up:.1?}",
        db.name
    );
    let base = server.url.clone();
    let titles = Arc::new(plan.titles.clone());
    let measured = bench::runtime().block_on(async {
        first_look(&server, &token, &cookie).await;
        let imported = import::import(&base, &token, &plan).await;
        eprintln!(
            "fresh: imported {} in {imported:.1?} ({:.0} tickets/s)",
            plan.summary(),
            TICKETS as f64 / imported.as_secs_f64()
        );
        let before = import::ticket_reads(&db.url);
        let t = Instant::now();
        let ask = wrk::Ask::random_of(TICKETS);
        let with_wrk =
            wrk::read_throughput_asking(&ask, &[&base], &readers, 0xF7E5_0000, &[server.pid()]);
        let pick = move |c: usize, rng: &mut Rng| {
            let number = rng.range(1, TICKETS);
            mixed::Pick {
                token: c,
                number,
                population: 0,
                title: Some(titles[number - 1].clone()),
            }
        };
        let checked = mixed::read_mixed(&[&base], &readers, 0xF7E5_0000, &[server.pid()], pick)
            .await
            .throughput;
        eprintln!(
            "fresh: {CLIENTS} readers right after the import: {}; checked with reqwest: {:.0}/s, \
             p50 {} p99 {} ({} answers checked; {:.1?})",
            with_wrk.as_ref().map_or("no wrk".to_string(), |t| format!(
                "wrk {:.0}/s, p50 {} p99 {}{}",
                t.per_second(),
                ms(t.p50),
                ms(t.p99),
                cpu_text(t)
            )),
            checked.per_second(),
            ms(checked.p50),
            ms(checked.p99),
            checked.checked,
            t.elapsed()
        );
        let pg = pgbench.run(PGBENCH_SELECT);
        eprintln!("fresh: {}", pg.summary());
        let requests = with_wrk.as_ref().map_or(0, |t| t.checked) + checked.checked;
        let reads = import::reads_text(before, import::ticket_reads(&db.url), requests);
        eprintln!("fresh: the readers and their warm-ups: {reads}");
        let t = Instant::now();
        let at = browse::Workspace {
            api: &base,
            name: WORKSPACE,
            tickets: TICKETS,
            token: &token,
            cookie: &cookie,
        };
        let browsed = browse::browse(&at, 0xF7E5_B000, ITERS).await;
        eprintln!("fresh: one request at a time: {:.1?}", t.elapsed());
        (imported, with_wrk, checked, pg, reads, browsed)
    });
    let (imported, with_wrk, checked, pg, reads, browsed) = measured;
    let gathered = import::gathered_statistics(&db.url);
    let log = server.stop();
    let generator = if with_wrk.is_some() {
        "wrk"
    } else {
        "reqwest; no wrk installed"
    };
    let throughput = with_wrk.as_ref().unwrap_or(&checked);
    let line = ratios::get_line_of(
        &format!(
            "(b) fresh import ({TICKETS} tickets through the batch API, no ANALYZE): \
             GET /api/v1/tickets/{{KEY-N}}"
        ),
        throughput,
        &pg,
        generator,
    );
    let table = browse::table(&[("fresh import", &browsed)]);
    let statistics = if gathered.is_empty() {
        "none on any table".to_string()
    } else {
        gathered.join(", ")
    };
    let mut details = format!(
        "Case (b), fresh import: a new database, `jility serve` on it, a workspace made with \
         `jility admin create-workspace`, autovacuum off on its {tables} tables; a few GETs \
         while it was empty; then {} imported through `POST /api/v1/tickets/batch`, one batch \
         after another, in {} ({:.0} tickets/s); at once the {CLIENTS} readers ({generator}): \
         {:.0} requests/s, p50 {}, p99 {}{}; the reqwest clients right after, checking every \
         answer's number and title: {:.0}/s, p50 {}, p99 {}; both with their warm-ups: \
         {reads}. Beside it {}. Statistics \
         gathered on the database meanwhile (`pg_stat_user_tables`): {statistics}. Whole case: \
         {}.\n\n{table}\n",
        plan.summary(),
        ms_scaled(imported),
        TICKETS as f64 / imported.as_secs_f64(),
        throughput.per_second(),
        ms(throughput.p50),
        ms(throughput.p99),
        cpu_text(throughput),
        checked.per_second(),
        ms(checked.p50),
        ms(checked.p99),
        pg.summary(),
        ms_scaled(started.elapsed()),
    );
    details.push_str(&import::problems_text(&log));
    eprintln!("{line}\n\n{details}");
    assert!(
        !gathered.iter().any(|t| t.starts_with("tickets ")),
        "statistics were gathered on tickets during the fresh-import case: {statistics}"
    );
    drop(db);
    CaseReport {
        lines: vec![line],
        details,
    }
}

/// A new user's first look, twice: the list, a search, a ticket not there yet (404), the
/// board.
async fn first_look(server: &Server, token: &str, cookie: &str) {
    let http = http_client();
    let api = &server.url;
    let missing = format!("/tickets/{KEY}-1");
    let board = format!("{}/w/{WORKSPACE}/board", server.root());
    for _ in 0..2 {
        for (path, expected) in [
            ("/tickets", 200),
            ("/search?q=login", 200),
            (&*missing, 404),
        ] {
            let (status, body) = get(&http, &format!("{api}{path}"), token).await;
            assert_eq!(status, expected, "GET {path}: {body}");
        }
        let response = http
            .get(&board)
            .header("Cookie", cookie)
            .send()
            .await
            .unwrap_or_else(|err| panic!("GET {board}: {err}"));
        let status = response.status().as_u16();
        let body = response.text().await.unwrap();
        assert_eq!(status, 200, "GET {board}: {}", &body[..body.len().min(500)]);
    }
}
