//! Case (c) of issue 41 (`JILITY_BENCH_ONLY=skew`): tenants of very different sizes on one
//! database, with statistics that exist and are skewed.
//!
//! The database, built once through the product and cached as
//! `jility_bench_skew_v<SKEW_DB_VERSION>_template` (complete when its comment says so; one
//! without that comment, a build cut short, is dropped and built again): the `jility serve`
//! under test on a fresh database, [`BIG`] made with `jility admin create-workspace` and
//! [`SMALL_WORKSPACES`] more (`small-0000`, …, two commands at a time); then the big
//! workspace's [`BIG_TICKETS`] tickets through `POST /api/v1/tickets/batch` (1,000 batches of
//! 200, one after another, `cloud_parts/import.rs`), each batch sent together with one small
//! workspace's [`SMALL_TICKETS`] (one batch), so their rows interleave as tenants' writes do.
//! As for the template, the build runs `ANALYZE` every 30 s on a server without autovacuum;
//! then every ticket's context is kept (`jility_refresh_contexts`, the steady state of
//! tickets read since their last write) and the database is `VACUUM (ANALYZE)`d: this case is
//! about statistics that exist but describe one tenant.
//!
//! Each run copies it (`jility_bench_skewrun_<pid>`, dropped at the end, also on failure),
//! mints tokens with the library ([`CLIENTS`] for the big workspace, one for each small one)
//! and signs in an owner of the big workspace and of `small-0000`; then, with the server
//! under test on the copy: one request at a time on each of those two
//! (`cloud_parts/browse.rs`), then the [`CLIENTS`]-client GET where each request is, at
//! random, half the time a random ticket of the big workspace (the client's token) and half
//! the time a random ticket of a random small workspace (its token): `wrk` when installed
//! (its latencies are of all requests), then the reqwest clients that check every answer's
//! number and title and give each population's p50 and p99; then `pgbench -S -c 32`, and
//! the rows of `tickets` the readers read (`pg_stat_user_tables`).

use super::*;

use import::{CaseReport, Import};

/// The version of the cached database (its name carries it): bump it when what is built
/// changes.
const SKEW_DB_VERSION: u32 = 1;
/// The big workspace (the one the template's helpers know).
const BIG: &str = WORKSPACE;
pub const BIG_TICKETS: usize = 200_000;
pub const SMALL_WORKSPACES: usize = 1_000;
pub const SMALL_TICKETS: usize = 20;
const BIG_SEED: u64 = 0x5BE6_0000;

fn small_seed(i: usize) -> u64 {
    0x5A11_0000_0000 + i as u64
}

fn small_name(i: usize) -> String {
    format!("small-{i:04}")
}

fn template_name() -> String {
    format!("jility_bench_skew_v{SKEW_DB_VERSION}_template")
}

/// The cached database (built now when missing or incomplete): how it was built.
pub fn ensure_template(bin: &Path) -> String {
    let name = template_name();
    let mut admin = connect_admin();
    if let Some(Some(comment)) = database_comment(&mut admin, &name)
        && let Some(built) = comment.strip_prefix(BUILT_MARK)
    {
        let built = built.trim().to_string();
        eprintln!("skew database: cached as {name} ({built})");
        return built;
    }
    eprintln!(
        "skew database: building {BIG_TICKETS} tickets in one workspace and \
         {SMALL_WORKSPACES} × {SMALL_TICKETS} through `jility serve` in {name} …"
    );
    admin
        .batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        .unwrap();
    admin
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .unwrap();
    drop(admin);
    let t = Instant::now();
    let url = with_database(&admin_url(), &name);
    let server = Server::start(bin, &url);
    let analyzer = (!autovacuum()).then(|| Analyzer::start(&url));
    let big_token = create_workspace(bin, &url);
    let small_tokens = create_small_workspaces(bin, &url);
    let workspaces = t.elapsed();
    eprintln!(
        "  {} workspaces created in {workspaces:.1?}",
        SMALL_WORKSPACES + 1
    );
    let big = Import::generate(BIG_SEED, BIG_TICKETS);
    let base = server.url.clone();
    let imported = bench::runtime().block_on(async {
        let http = http_client();
        let t = Instant::now();
        for b in 0..big.batches.len() {
            let big_batch = import::post_batch(&http, &base, &big_token, &big, b);
            match small_tokens.get(b) {
                Some(token) => {
                    let small = Import::generate(small_seed(b), SMALL_TICKETS);
                    let small_batch = import::post_batch(&http, &base, token, &small, 0);
                    tokio::join!(big_batch, small_batch);
                }
                None => big_batch.await,
            }
            if (b + 1) % 100 == 0 {
                eprintln!("  {} batches of 200, {:.0?}", b + 1, t.elapsed());
            }
        }
        for (i, token) in small_tokens.iter().enumerate().skip(big.batches.len()) {
            let small = Import::generate(small_seed(i), SMALL_TICKETS);
            import::post_batch(&http, &base, token, &small, 0).await;
        }
        t.elapsed()
    });
    let summary = big.summary();
    drop(big);
    let log = server.stop();
    let analyzed = analyzer.map(Analyzer::stop);
    let t_after = Instant::now();
    let mut db = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    db.batch_execute(
        "SELECT jility_refresh_contexts(w.id, ARRAY(SELECT id FROM tickets \
         WHERE workspace_id = w.id)) FROM workspaces w",
    )
    .unwrap();
    db.batch_execute("VACUUM (ANALYZE)").unwrap();
    drop(db);
    let after = t_after.elapsed();
    for line in problems(&log) {
        eprintln!("  server: {line}");
    }
    let analyzed = analyzed.map_or(String::new(), |n| {
        format!(
            "; autovacuum is off on this server, so the build ran ANALYZE every {} s ({n} \
             times)",
            ANALYZE_EVERY.as_secs()
        )
    });
    let built = format!(
        "built through `jility serve` in {:.0} s on {}, {}: {} workspaces with `jility admin \
         create-workspace` in {:.0} s; the big one's tickets ({summary}) and the small ones' \
         through the batch API in {:.0} s; contexts kept and VACUUM ANALYZE in {:.0} s\
         {analyzed}",
        t.elapsed().as_secs_f64(),
        chrono::Utc::now().format("%Y-%m-%d"),
        machine(),
        SMALL_WORKSPACES + 1,
        workspaces.as_secs_f64(),
        imported.as_secs_f64(),
        after.as_secs_f64(),
    );
    connect_admin()
        .batch_execute(&format!(
            "COMMENT ON DATABASE {name} IS '{BUILT_MARK} {}'",
            built.replace('\'', "''")
        ))
        .unwrap();
    eprintln!("skew database: {built}");
    built
}

/// The small workspaces, two `create-workspace` commands at a time: their first tokens.
fn create_small_workspaces(bin: &Path, url: &str) -> Vec<String> {
    let halves: Vec<Vec<(usize, String)>> = std::thread::scope(|scope| {
        let threads: Vec<_> = (0..2)
            .map(|half| {
                scope.spawn(move || {
                    (half..SMALL_WORKSPACES)
                        .step_by(2)
                        .map(|i| (i, create_workspace_named(bin, url, &small_name(i))))
                        .collect()
                })
            })
            .collect();
        threads.into_iter().map(|t| t.join().unwrap()).collect()
    });
    let mut tokens: Vec<(usize, String)> = halves.into_iter().flatten().collect();
    tokens.sort();
    tokens.into_iter().map(|(_, token)| token).collect()
}

/// The `wrk` script of the mix: half the requests a random ticket of the big workspace (the
/// thread's token), half a random ticket of a random small workspace (its token, read from
/// the file `JILITY_BENCH_SMALL_FILE`, one a line).
const SCRIPT: &str = r#"
local tokens = {}
for t in string.gmatch(os.getenv("JILITY_BENCH_TOKENS") or "", "[^,]+") do
  tokens[#tokens + 1] = t
end
local prefix = os.getenv("JILITY_BENCH_PREFIX")
local tickets = tonumber(os.getenv("JILITY_BENCH_TICKETS"))
local seed = tonumber(os.getenv("JILITY_BENCH_SEED"))
local small_tickets = tonumber(os.getenv("JILITY_BENCH_SMALL_TICKETS"))
local small = {}
for line in io.lines(os.getenv("JILITY_BENCH_SMALL_FILE")) do
  small[#small + 1] = { ["Authorization"] = "Bearer " .. line }
end
local next_thread = 0
function setup(thread)
  thread:set("token", tokens[next_thread % #tokens + 1])
  thread:set("seed", seed + next_thread)
  next_thread = next_thread + 1
end
function init(args)
  math.randomseed(seed)
  headers = { ["Authorization"] = "Bearer " .. token }
end
function request()
  if math.random() < 0.5 then
    return wrk.format("GET", prefix .. math.random(1, tickets), headers)
  end
  return wrk.format("GET", prefix .. math.random(1, small_tickets), small[math.random(1, #small)])
end
"#;

/// The case, on a copy of the cached database ([`ensure_template`]: `built` says how it was
/// built).
pub fn skew(bin: &Path, pgbench: &PgBench, built: &str) -> CaseReport {
    let started = Instant::now();
    let (db, copied) = import::Scratch::create("jility_bench_skewrun_", Some(&template_name()));
    let t = Instant::now();
    let library = PgDatabase::connect_with(&db.url, 1).unwrap();
    let mut tokens = import::mint_in(&library, BIG, &import::reader_names());
    let main = import::mint_in(&library, BIG, &["bench".to_string()]).remove(0);
    let reader = ["reader".to_string()];
    for i in 0..SMALL_WORKSPACES {
        tokens.extend(import::mint_in(&library, &small_name(i), &reader));
    }
    drop(library);
    let small_main = tokens[CLIENTS].clone();
    let cookie = web::sign_in(&db.url);
    let small_cookie = web::sign_in_to(&db.url, &small_name(0), "small@example.com");
    eprintln!(
        "skew: copied {} to {} in {copied:.1?}; {} tokens minted and 2 owners signed in in \
         {:.1?}",
        template_name(),
        db.name,
        tokens.len() + 1,
        t.elapsed()
    );
    // The titles the answers must carry, generated again.
    let big_titles = Arc::new(Import::generate(BIG_SEED, BIG_TICKETS).titles);
    let small_titles: Arc<Vec<Vec<String>>> = Arc::new(
        (0..SMALL_WORKSPACES)
            .map(|i| Import::generate(small_seed(i), SMALL_TICKETS).titles)
            .collect(),
    );
    let server = Server::start(bin, &db.url);
    let base = server.url.clone();
    let smalls_file = temp_dir("jility-bench-skew-");
    let small_file = smalls_file.path().join("small-tokens");
    std::fs::write(&small_file, tokens[CLIENTS..].join("\n") + "\n").unwrap();
    let measured = bench::runtime().block_on(async {
        let t = Instant::now();
        let big_at = browse::Workspace {
            api: &base,
            name: BIG,
            tickets: BIG_TICKETS,
            token: &main,
            cookie: &cookie,
        };
        let big_browsed = browse::browse(&big_at, 0x5BE6_B000, ITERS).await;
        let small = small_name(0);
        let small_at = browse::Workspace {
            name: &small,
            tickets: SMALL_TICKETS,
            token: &small_main,
            cookie: &small_cookie,
            ..big_at
        };
        let small_browsed = browse::browse(&small_at, 0x5A11_B000, ITERS / 5).await;
        eprintln!("skew: one request at a time: {:.1?}", t.elapsed());
        let before = import::ticket_reads(&db.url);
        let t = Instant::now();
        let ask = wrk::Ask {
            script: SCRIPT,
            tickets: BIG_TICKETS,
            env: vec![
                ("JILITY_BENCH_SMALL_FILE", small_file.display().to_string()),
                ("JILITY_BENCH_SMALL_TICKETS", SMALL_TICKETS.to_string()),
            ],
        };
        let readers = &tokens[..CLIENTS];
        let with_wrk =
            wrk::read_throughput_asking(&ask, &[&base], readers, 0x5BE6_0000, &[server.pid()]);
        let pick = move |c: usize, rng: &mut Rng| {
            if rng.chance(0.5) {
                let number = rng.range(1, BIG_TICKETS);
                mixed::Pick {
                    token: c,
                    number,
                    population: 0,
                    title: Some(big_titles[number - 1].clone()),
                }
            } else {
                let w = rng.below(SMALL_WORKSPACES);
                let number = rng.range(1, SMALL_TICKETS);
                mixed::Pick {
                    token: CLIENTS + w,
                    number,
                    population: 1,
                    title: Some(small_titles[w][number - 1].clone()),
                }
            }
        };
        let checked =
            mixed::read_mixed(&[&base], &tokens, 0x5BE6_0000, &[server.pid()], pick).await;
        eprintln!("skew: {CLIENTS} readers: {:.1?}", t.elapsed());
        let pg = pgbench.run(PGBENCH_SELECT);
        eprintln!("skew: {}", pg.summary());
        let requests = with_wrk.as_ref().map_or(0, |t| t.checked) + checked.throughput.checked;
        let reads = import::reads_text(before, import::ticket_reads(&db.url), requests);
        eprintln!("skew: the readers and their warm-ups: {reads}");
        (big_browsed, small_browsed, pg, with_wrk, checked, reads)
    });
    let (big_browsed, small_browsed, pg, with_wrk, checked, reads) = measured;
    let log = server.stop();
    let generator = if with_wrk.is_some() {
        "wrk"
    } else {
        "reqwest; no wrk installed"
    };
    let throughput = with_wrk.as_ref().unwrap_or(&checked.throughput);
    let what = format!(
        "(c) skewed tenants (1 workspace of {BIG_TICKETS} tickets beside {SMALL_WORKSPACES} of \
         {SMALL_TICKETS}, analysed; half the requests to the big one, half to random small \
         ones): GET /api/v1/tickets/{{KEY-N}}"
    );
    let mut lines = vec![ratios::get_line_of(&what, throughput, &pg, generator)];
    lines.push(population_line(&checked));
    let table = browse::table(&[
        ("big workspace", &big_browsed),
        ("small-0000", &small_browsed),
    ]);
    let c = &checked.throughput;
    let mut details = format!(
        "Case (c), skewed tenants: database {built}; copied in {} for the run. {CLIENTS} \
         readers ({generator}): {:.0} requests/s, p50 {}, p99 {}{}; the reqwest clients right \
         after, checking every answer's number and title: {:.0}/s, p50 {}, p99 {}{}; both with \
         their warm-ups: {reads}. Right after, {}. Whole case: {}.\n\n{table}\n",
        ms_scaled(copied),
        throughput.per_second(),
        ms(throughput.p50),
        ms(throughput.p99),
        cpu_text(throughput),
        c.per_second(),
        ms(c.p50),
        ms(c.p99),
        cpu_text(c),
        pg.summary(),
        ms_scaled(started.elapsed()),
    );
    details.push_str(&import::problems_text(&log));
    for line in &lines {
        eprintln!("{line}");
    }
    eprintln!("\n{details}");
    drop(db);
    CaseReport { lines, details }
}

/// Each population's rate, p50 and p99 (from the reqwest clients).
fn population_line(mixed: &mixed::Mixed) -> String {
    let names = [
        format!("the big workspace ({BIG_TICKETS} tickets)"),
        format!("the {SMALL_WORKSPACES} small ones ({SMALL_TICKETS} each)"),
    ];
    let parts: Vec<String> = names
        .iter()
        .enumerate()
        .map(|(p, name)| match mixed.population(p) {
            Some((rate, p50, p99)) => format!(
                "{name}: {rate:.0} req/s, p50 {}, p99 {} ({:.1}× its p50)",
                ms(p50),
                ms(p99),
                p99.as_secs_f64() / p50.as_secs_f64()
            ),
            None => format!("{name}: no request"),
        })
        .collect();
    format!(
        "(c) by population (reqwest clients, every answer checked): {}",
        parts.join("; ")
    )
}
