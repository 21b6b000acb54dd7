//! What operators wait for (`JILITY_BENCH_ONLY=operate`, issue 44): a backup and a restore
//! of a workspace just imported, against PostgreSQL's own `pg_dump -Fc` / `pg_restore` of the
//! same database in the same run; starting `jility serve` until `/readyz` says ready, on a
//! migrated database (the baseline), on a new one (migrations), and eight at once on a new
//! one; and the probes and a scrape of `/metrics`, against `/healthz`.
//!
//! The database: [`TICKETS`] tickets imported through `POST /tickets/batch` a moment before
//! (`import::Import`: labels, assignees, descriptions), no `ANALYZE`, as a new team's is.

use super::*;

use import::{Import, Scratch};

/// Tickets imported before the backup.
const TICKETS: usize = 10_000;
const SEED: u64 = 0x0BE7_4400;
/// Each timing is the median of this many runs.
const RUNS: usize = 3;
/// Requests per probe timing.
const PROBES: usize = 200;

/// PostgreSQL's program `name`: on `PATH`, else the newest `/usr/lib/postgresql/*/bin`.
fn pg_program(name: &str) -> Option<PathBuf> {
    on_path(name).or_else(|| {
        let mut dirs: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
            .ok()?
            .filter_map(|e| e.ok().map(|e| e.path().join("bin").join(name)))
            .filter(|p| p.is_file())
            .collect();
        dirs.sort();
        dirs.pop()
    })
}

/// The median of `RUNS` timings of `f`.
fn median(mut f: impl FnMut() -> Duration) -> Duration {
    let mut all: Vec<Duration> = (0..RUNS).map(|_| f()).collect();
    all.sort();
    all[RUNS / 2]
}

fn run_ok(what: &str, command: &mut Command) -> Duration {
    let t = Instant::now();
    let out = command.stdin(Stdio::null()).output().unwrap();
    let took = t.elapsed();
    assert!(
        out.status.success(),
        "{what}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    took
}

/// Start `jility serve` on `url` and wait until `/readyz` answers 200 (probing every 10 ms):
/// the server, and how long it took.
fn ready_in(bin: &Path, url: &str) -> (Server, Duration) {
    let t = Instant::now();
    let server = Server::start(bin, url);
    let ready = format!("{}/readyz", server.root());
    let http = reqwest::blocking::Client::new();
    while !http
        .get(&ready)
        .send()
        .is_ok_and(|r| r.status().is_success())
    {
        assert!(t.elapsed() < Duration::from_secs(120), "never ready");
        std::thread::sleep(Duration::from_millis(10));
    }
    (server, t.elapsed())
}

/// The p50 and p99 of `PROBES` sequential GETs of `url`.
fn probe(
    http: &reqwest::blocking::Client,
    url: &str,
    token: Option<&str>,
) -> (Duration, Duration, usize) {
    let mut times = Vec::with_capacity(PROBES);
    let mut bytes = 0;
    for _ in 0..PROBES {
        let mut request = http.get(url);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        let t = Instant::now();
        let response = request.send().unwrap();
        assert!(
            response.status().is_success(),
            "{url}: {}",
            response.status()
        );
        bytes = response.bytes().unwrap().len();
        times.push(t.elapsed());
    }
    times.sort();
    (times[PROBES / 2], times[PROBES * 99 / 100], bytes)
}

pub fn operate(bin: &Path) -> Vec<String> {
    let mut lines = Vec::new();
    let plan = Import::generate(SEED, TICKETS);
    let (db, _) = Scratch::create("jility_bench_operate_", None);
    let metrics_token = "bench-metrics-token-0123456789";
    let server = Server::start_with(
        bin,
        &db.url,
        RATE_LIMIT,
        &[("JILITY_METRICS_TOKEN", metrics_token)],
    );
    let token = create_workspace(bin, &db.url);
    let base = server.url.clone();
    let imported = bench::runtime().block_on(import::import(&base, &token, &plan));
    eprintln!("operate: imported {} in {imported:.1?}", plan.summary());

    // Probes and a scrape, after the import's requests were counted.
    let http = reqwest::blocking::Client::new();
    let root = server.root().to_string();
    let (h50, h99, _) = probe(&http, &format!("{root}/healthz"), None);
    let (r50, r99, _) = probe(&http, &format!("{root}/readyz"), None);
    let (m50, m99, scrape) = probe(&http, &format!("{root}/metrics"), Some(metrics_token));
    lines.push(format!(
        "probes, {PROBES} one after another: `/healthz` p50 {} p99 {} (baseline); `/readyz` p50 {} p99 {} ({:.1}×); \
         a scrape of `/metrics` ({} KB after the import) p50 {} p99 {} ({:.1}×)",
        ms(h50),
        ms(h99),
        ms(r50),
        ms(r99),
        r50.as_secs_f64() / h50.as_secs_f64(),
        scrape / 1024,
        ms(m50),
        ms(m99),
        m50.as_secs_f64() / h50.as_secs_f64()
    ));
    drop(server);

    // Backup and restore against pg_dump / pg_restore of the same database.
    let dir = temp_dir("jility-bench-operate-");
    let ours = dir.path().join("backup.jsonl");
    let dump = dir.path().join("dump.pgc");
    let backup = median(|| {
        run_ok(
            "jility admin backup",
            clean(bin)
                .args([
                    "admin",
                    "backup",
                    "-o",
                    ours.to_str().unwrap(),
                    "--database-url",
                    &db.url,
                ])
                .env("JILITY_MODE", "cloud"),
        )
    });
    let restore = median(|| {
        let (target, _) = Scratch::create("jility_bench_restore_", None);
        run_ok(
            "jility admin restore",
            clean(bin)
                .args([
                    "admin",
                    "restore",
                    ours.to_str().unwrap(),
                    "--database-url",
                    &target.url,
                ])
                .env("JILITY_MODE", "cloud"),
        )
    });
    let ours_bytes = std::fs::metadata(&ours).map(|m| m.len()).unwrap_or(0);
    match (pg_program("pg_dump"), pg_program("pg_restore")) {
        (Some(pg_dump), Some(pg_restore)) => {
            let dumped = median(|| {
                run_ok(
                    "pg_dump",
                    Command::new(&pg_dump).args([
                        "-Fc",
                        "-f",
                        dump.to_str().unwrap(),
                        "-d",
                        &db.url,
                    ]),
                )
            });
            let restored = median(|| {
                let (target, _) = Scratch::create("jility_bench_pgrestore_", None);
                run_ok(
                    "pg_restore",
                    Command::new(&pg_restore).args(["-d", &target.url, dump.to_str().unwrap()]),
                )
            });
            let dump_bytes = std::fs::metadata(&dump).map(|m| m.len()).unwrap_or(0);
            lines.push(format!(
                "backup of the workspace ({} tickets and their changes; median of {RUNS}): `jility admin backup` {} \
                 ({} MB) vs `pg_dump -Fc` {} ({} MB, baseline): {:.2}×",
                TICKETS,
                ms(backup),
                ours_bytes / (1024 * 1024),
                ms(dumped),
                dump_bytes / (1024 * 1024),
                backup.as_secs_f64() / dumped.as_secs_f64()
            ));
            lines.push(format!(
                "restore into a new database: `jility admin restore` {} (migrations, rows, search words rebuilt by \
                 their triggers, checks) vs `pg_restore` {} (baseline): {:.2}×",
                ms(restore),
                ms(restored),
                restore.as_secs_f64() / restored.as_secs_f64()
            ));
        }
        _ => lines.push(format!(
            "backup {} ({} MB), restore {} (no pg_dump/pg_restore installed for a baseline)",
            ms(backup),
            ours_bytes / (1024 * 1024),
            ms(restore)
        )),
    }

    // Starts until ready: on this (migrated) database, on a new one, eight on a new one.
    let existing = median(|| ready_in(bin, &db.url).1);
    let new = median(|| {
        let (fresh, _) = Scratch::create("jility_bench_start_", None);
        ready_in(bin, &fresh.url).1
    });
    let eight = median(|| {
        let (fresh, _) = Scratch::create("jility_bench_start8_", None);
        let t = Instant::now();
        let starts: Vec<_> = (0..8)
            .map(|_| {
                let (bin, url) = (bin.to_path_buf(), fresh.url.clone());
                std::thread::spawn(move || ready_in(&bin, &url).0)
            })
            .collect();
        let servers: Vec<Server> = starts.into_iter().map(|s| s.join().unwrap()).collect();
        let took = t.elapsed();
        drop(servers);
        took
    });
    lines.push(format!(
        "start until `/readyz` says ready (median of {RUNS}): on a migrated database {} (baseline); \
         on a new database (25 migrations) {} ({:.1}×); eight at once on a new database, the last one ready {} ({:.1}×)",
        ms(existing),
        ms(new),
        new.as_secs_f64() / existing.as_secs_f64(),
        ms(eight),
        eight.as_secs_f64() / existing.as_secs_f64()
    ));
    drop(db);
    lines
}
