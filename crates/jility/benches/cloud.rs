//! Benchmark of jility's cloud mode: `jility serve` (the REST API on PostgreSQL) and the
//! caching MCP bridge (`JILITY_MODE=cloud jility --mcp-server`), on the same 100,000-ticket
//! database as `benches/stdio.rs`, with local mode measured beside it in the same run.
//!
//! The database is built once through the product: the release `jility serve` on a fresh
//! PostgreSQL database `jility_bench_v<CLOUD_DB_VERSION>_template`, a workspace made with
//! `jility admin create-workspace`, and a bridge to it that is sent the same calls as the
//! stdio benchmark's builder (`support::build`: batches and single creates, then 20,000
//! comments). When the build is complete the database's comment says so; a database without
//! that comment (a build that was cut short) is dropped and built again. Each run copies it
//! (`CREATE DATABASE jility_bench_run_<pid> TEMPLATE …`), mints its own tokens on the copy
//! with the library (the database keeps only their hashes), and drops the copy at the end,
//! also when the run fails.
//!
//! Building needs statistics: without them PostgreSQL reads a ticket's labels through the
//! wrong index and each write gets slower as the database grows. A server that runs
//! autovacuum gathers them as it goes; on one that does not (the test server), the build runs
//! `ANALYZE` every 30 s as autoanalyze would, and every build ends with `VACUUM (ANALYZE)`.
//!
//! Measures, in one run, in this order:
//! 1. **Latency through one bridge** (rmcp client over stdio, `mcp-testkit`), each call
//!    preceded by an MCP `ping` (the baseline): `jility_get_ticket` of the same ticket (the
//!    bridge's cache answers once it follows the API's event stream: it gets a second to
//!    start), of a different random ticket each call (the API answers),
//!    `jility_search_tickets` with a different 1–2 word query each call (so the cache cannot
//!    answer), and `jility_create_ticket`.
//! 2. **REST, one request at a time** on a keep-alive connection: random reads, and the same
//!    search queries (`GET /search?q=`), with the search latency by number of matches (the
//!    queries include common words with more than 20,000 matches, [`COMMON_QUERIES`]).
//! 3. **REST throughput**: first the baseline, `pgbench -S -c 32 -j 2 -T 10 -n` (select-only,
//!    one indexed read per transaction) in a scratch database of its own
//!    (`cloud_parts/pgbench.rs`), alone; then `GET /api/v1/tickets/{KEY-N}` for a random N,
//!    from 32 concurrent clients (async reqwest, keep-alive, `TCP_NODELAY`, each its own
//!    connection and token), 10 s after a 2 s warm-up; requests per second, latency
//!    percentiles, and where the CPUs went (`jility serve`, PostgreSQL, the load generator,
//!    the rest). Every answer must be 200 and name the ticket asked for; one in
//!    [`PARSE_EVERY`] is decoded and checked. Then, as a diagnostic, the same with all 32
//!    clients on one token. Then **two processes, one database** (`cloud_parts/shared.rs`):
//!    the 32 clients split 16/16 between the server and a second `jility serve` on the same
//!    database; and the rate limit shared by two processes started with `--rate-limit 60`:
//!    one fresh token sends 100 requests alternately to each, then another fresh token the
//!    same from 4 senders at once; exactly 60 must be allowed each time.
//! 4. **Concurrent writers**: first the baseline, `pgbench -N -c 4 -j 2 -T 10 -n` (the
//!    built-in simple-update script), alone; then 4 bridges (each with its own token), all
//!    started before the clock starts, each sent 1,000 `jility_create_ticket` calls at once
//!    with the others; tickets per second, then a check through another bridge that none is
//!    lost (paging through every ticket with `jility_list_tickets`, 200 a page: the count, the
//!    numbers unique and contiguous, each writer's tickets under its assignee). Then 4 REST
//!    writers (`cloud_parts/writes.rs`), 10 s after a 2 s warm-up each: `POST /tickets`
//!    creates, then `POST /tickets/{KEY-N}/comments` on random tickets.
//! 5. **Cases (b) and (c) of issue 41**, each on a database of its own with a `jility serve`
//!    of its own, beside the same `pgbench -S -c 32`:
//!    - **(b) fresh import** (`cloud_parts/fresh.rs`): a new database, the server, a workspace
//!      made with `jility admin create-workspace`, autovacuum off on its tables, a few GETs
//!      while it is empty, then 10,000 tickets imported through `POST /tickets/batch`
//!      (epics, parents, dependencies; `cloud_parts/import.rs`) and, at once, the 32 readers
//!      of random tickets; then list, search, the board and single reads one at a time
//!      (`cloud_parts/browse.rs`). No `ANALYZE` or `VACUUM` anywhere, checked afterwards in
//!      `pg_stat_user_tables`.
//!    - **(c) skewed tenants** (`cloud_parts/skew.rs`): a copy of a cached, analysed database
//!      of one workspace of 200,000 tickets beside 1,000 of 20 (built once through the
//!      server's batch API, `jility_bench_skew_v<N>_template`); one request at a time on the
//!      big workspace and on a small one, then the 32 readers, each request half the time a
//!      random ticket of the big workspace and half the time one of a random small one,
//!      with each population's p50 and p99.
//! 6. **Local mode beside it**: the same cases on a copy of the stdio benchmark's cached
//!    SQLite database (built now if missing) with `jility --mcp-server`, with its own pings,
//!    and the same 4 × 1,000 concurrent writers, checked the same way.
//!
//! Whatever `jility serve` and the MCP servers report on stderr that looks like a problem (a
//! warning, an error, a panic, a failed exit on SIGTERM) is quoted at the end of the report.
//!
//! Prints a Markdown report and writes it to `target/jility-cloud-bench.md`. The issue's
//! targets are ratios to baselines measured in the same run on the same machine; the report
//! opens with them, one line each with its target and PASS or FAIL
//! (`cloud_parts/ratios.rs`): the REST GET throughput as a share of `pgbench -S` with as
//! many clients (≥ 50%) and its p99 against its own p50 (≤ 4×); search's first page, the
//! p50 of queries with more than 20,000 matches over that of queries with at most 1,000
//! (≤ 2×); two processes' throughput against one's; the shared rate limit (60 allowed, with
//! the tolerance printed); and writes per second (REST creates, REST comments, MCP creates
//! through the bridges) as a share of `pgbench -N` with as many clients; and cases (b) and (c)
//! as the first: their GET throughput a share of `pgbench -S` (≥ 50%), p99 ≤ 4× p50
//! (case (c) also each population's figures). `pgbench` is
//! `JILITY_BENCH_PGBENCH`, else the one on `PATH`, else `/usr/lib/postgresql/*/bin/pgbench`;
//! its scratch database `jility_bench_pgbench_<pid>` is dropped at the end, also when the
//! run fails.
//!
//! Run (PostgreSQL at the admin URL, default `postgres://postgres@127.0.0.1:5432/test`):
//! `JILITY_BENCH_DATABASE_URL=postgres://… cargo bench -p jility --bench cloud`. One run at a
//! time per cluster (an advisory lock: a second stops at once, [`hold_the_cluster`]).
//!
//! `JILITY_BENCH_JILITY=/path/to/jility` runs that `jility` (`serve`, `admin
//! create-workspace` and the bridges) instead of this tree's release build, so that a
//! before/after comparison on one machine is one command each, e.g. with the `main` build
//! copied aside: `JILITY_BENCH_JILITY=/tmp/jility-main JILITY_BENCH_ONLY=fresh cargo bench -p
//! jility --bench cloud`. The harness itself (the tokens, sessions and accounts it makes with
//! the library, the cached databases' names) stays this tree's: the binary must accept a
//! database of this tree's schema (a jility refuses one migrated by a newer jility), and the
//! cached templates are built once, by whichever binary ran first (each run's copy is
//! migrated by the server under test).
//!
//! While tuning the server, `JILITY_BENCH_ONLY` measures one part and prints it as it comes,
//! without the report, then its ratio lines:
//! - `operate`: what operators wait for (issue 44): backup and restore of a fresh import
//!   beside `pg_dump -Fc` / `pg_restore`, starts until `/readyz` (migrated database, new
//!   database, eight at once), the probes and a scrape beside `/healthz`; no template needed.
//! - `query`: the query language (issue 43): search with three qualifiers beside plain search.
//! - `bulk`: bulk edits of 1,000 and 5,000 tickets in both modes (issue 43).
//! - `related`: related tickets beside plain search, and the labelled set's recall@3 and
//!   duplicate flag in both modes (issue 43).
//! - `rest`: the REST parts (2 and 3): reads and searches one at a time, `pgbench -S`, the 32
//!   readers, the two processes, the shared rate limit (the diagnostic with one token is
//!   left out);
//! - `writes`: part 4 on the cloud side: `pgbench -N`, the 4 bridges' creates and the check
//!   that none is lost, the REST creates and comments;
//! - `oauth`: the OAuth consent page and token exchange (`cloud_parts/oauth.rs`);
//! - `web`: the web app's pages beside the API's read (`cloud_parts/web.rs`), then the rows
//!   cases (b) and (c) measure one request at a time (the list's filters among them), on the
//!   template, to compare with;
//! - `planning`: epics and sprints (`cloud_parts/planning.rs`, issue 42): the copy planned
//!   through the API (500 epics, 200 sprints, an active one of 300 tickets with 10,000
//!   changes), then sprint stats, the epic list, the planner and the planning pages beside the
//!   API's read, at once and after `VACUUM (ANALYZE)`;
//! - `fresh`: case (b), with its own `pgbench -S` (the template is neither built nor copied);
//! - `skew`: case (c), likewise (its own cached database is built if missing).

// The benchmark reports to the terminal and aborts on any setup failure.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::print_stderr
)]

mod support;

use std::{
    collections::HashSet,
    fmt::Write as _,
    io::{BufRead as _, BufReader},
    path::{Path, PathBuf},
    process::{Child, Command, Output, Stdio},
    sync::{Arc, Mutex, mpsc},
    time::{Duration, Instant},
};

use jility_cloud::auth::{NewToken, ScopeSet, Tokens};
use jility_cloud::store::PgDatabase;
use mcp_testkit::{
    McpProcess,
    bench::{self, Rng, machine, met, mib, ms, ms_scaled, percentile},
};
use serde_json::{Value, json};
use tokio::task::JoinSet;

use support::{
    AREAS, BROWSERS, CAUSES, COMMENTS, CONDITIONS, Case, DEPENDENCIES, EVIDENCE, FEATURES, GOALS,
    ITERS, ITERS_SEARCH, KEY, LOAD_CREATES, LOAD_PROCESSES, Load, MODULES, PAGE, Plan, Planned,
    QUERIES, Row, SYMPTOMS, TEAMS, TICKETS, Verified, WARMUP, copy_database, ensure_database,
    measure, number_of,
};

#[path = "cloud_parts/browse.rs"]
mod browse;
#[path = "cloud_parts/bulk.rs"]
mod bulk;
#[path = "cloud_parts/fresh.rs"]
mod fresh;
#[path = "cloud_parts/hooks.rs"]
mod hooks;
#[path = "cloud_parts/import.rs"]
mod import;
#[path = "cloud_parts/mixed.rs"]
mod mixed;
#[path = "cloud_parts/oauth.rs"]
mod oauth;
#[path = "cloud_parts/operate.rs"]
mod operate;
#[path = "cloud_parts/pgbench.rs"]
mod pgbench;
#[path = "cloud_parts/planning.rs"]
mod planning;
#[path = "cloud_parts/query.rs"]
mod query;
#[path = "cloud_parts/ratios.rs"]
mod ratios;
#[path = "cloud_parts/related.rs"]
mod related;
#[path = "cloud_parts/shared.rs"]
mod shared;
#[path = "cloud_parts/skew.rs"]
mod skew;
#[path = "cloud_parts/web.rs"]
mod web;
#[path = "cloud_parts/writes.rs"]
mod writes;
#[path = "cloud_parts/wrk.rs"]
mod wrk;

use pgbench::{PgBench, PgBenchRun};
use shared::RateCheck;
use writes::{Write, Writes};

// ---- the database and the runs --------------------------------------------------------------

/// The version of the cached PostgreSQL database (its name carries it): bump it when the
/// generator or the way it is built changes. (A database from before a schema migration is
/// upgraded by the server, on each run's copy.)
const CLOUD_DB_VERSION: u32 = 2;
/// The admin connection (its database is only used to create and drop others).
const DEFAULT_ADMIN_URL: &str = "postgres://postgres@127.0.0.1:5432/test";
/// The database comment of a complete build starts with this.
const BUILT_MARK: &str = "jility benchmark database, complete:";
/// The workspace the tickets are in.
const WORKSPACE: &str = "bench";
/// Requests per minute per token: high enough never to refuse one.
const RATE_LIMIT: &str = "1000000000";

/// REST clients reading at once, and how long they do.
const CLIENTS: usize = 32;
const WARM_UP: Duration = Duration::from_secs(2);
const MEASURE: Duration = Duration::from_secs(10);
/// One answer in so many is decoded and checked in full (every answer is checked to be 200
/// and to name its ticket).
const PARSE_EVERY: usize = 64;

/// The ticket `jility_get_ticket` reads again and again (the bridge's cache answers).
const SAME_TICKET: usize = 42_424;

/// Where each kind of token is in the minted ones (`main`): `bench`, `verify`, the MCP
/// writers', the readers', the REST writers', the two of the shared rate-limit check.
const READERS_AT: usize = 2 + LOAD_PROCESSES;
const WRITERS_AT: usize = READERS_AT + CLIENTS;
const LIMITED_AT: usize = WRITERS_AT + writes::WRITERS;

/// The baselines: `pgbench` select-only with as many clients as the REST readers, and its
/// built-in simple-update script with as many as the writers.
const PGBENCH_SELECT: &str = "-S -c 32 -j 2 -T 10 -n";
const PGBENCH_UPDATE: &str = "-N -c 4 -j 2 -T 10 -n";

// ---- targets --------------------------------------------------------------------------------

const THROUGHPUT_TARGET: f64 = 2_000.0;
const THROUGHPUT_P99_TARGET_MS: f64 = 20.0;
/// Cached `jility_get_ticket` p50 at most this many times the bridge's ping p50.
const CACHED_GET_TARGET_RATIO: f64 = 3.0;
const GET_TARGET_MS: f64 = 2.0;
const CREATE_TARGET_MS: f64 = 5.0;
const SEARCH_TARGET_MS: f64 = 20.0;

// ---- PostgreSQL -----------------------------------------------------------------------------

fn admin_url() -> String {
    std::env::var("JILITY_BENCH_DATABASE_URL")
        .ok()
        .filter(|url| !url.trim().is_empty())
        .unwrap_or_else(|| DEFAULT_ADMIN_URL.to_string())
}

/// `url` with its database name replaced by `name`.
fn with_database(url: &str, name: &str) -> String {
    let (main, query) = match url.split_once('?') {
        Some((main, query)) => (main, Some(query)),
        None => (url, None),
    };
    let (server, _) = main
        .rsplit_once('/')
        .filter(|(server, _)| server.contains("//") && !server.ends_with('/'))
        .unwrap_or((main, ""));
    match query {
        Some(query) => format!("{server}/{name}?{query}"),
        None => format!("{server}/{name}"),
    }
}

fn connect_admin() -> postgres::Client {
    let url = admin_url();
    postgres::Client::connect(&url, postgres::NoTls).unwrap_or_else(|err| {
        panic!("cannot reach PostgreSQL at {url} (set JILITY_BENCH_DATABASE_URL): {err}")
    })
}

/// The run's hold on the benchmark's PostgreSQL, kept until it ends: a second run started
/// beside it would drop and rebuild a cached database under the first (whose server then
/// fails mid-build with errors of its own) and halve both runs' measures, so it stops at
/// once instead.
fn hold_the_cluster() -> postgres::Client {
    /// The advisory lock's key ("jilbench").
    const KEY: i64 = 0x6a69_6c62_656e_6368;
    let mut admin = connect_admin();
    let held: bool = admin
        .query_one("SELECT pg_try_advisory_lock($1)", &[&KEY])
        .unwrap()
        .get(0);
    assert!(
        held,
        "another cloud benchmark is running on this PostgreSQL: wait for it to end (or \
         point JILITY_BENCH_DATABASE_URL at another cluster)"
    );
    admin
}

fn template_name() -> String {
    format!("jility_bench_v{CLOUD_DB_VERSION}_template")
}

/// The comment of database `name`, if it exists.
fn database_comment(admin: &mut postgres::Client, name: &str) -> Option<Option<String>> {
    admin
        .query_opt(
            "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = $1",
            &[&name],
        )
        .unwrap()
        .map(|row| row.get(0))
}

fn database_bytes(name: &str) -> u64 {
    let bytes: i64 = connect_admin()
        .query_one(
            "SELECT pg_database_size(oid) FROM pg_database WHERE datname = $1",
            &[&name],
        )
        .unwrap()
        .get(0);
    bytes as u64
}

/// The cached template database (built now when missing or incomplete): how it was built.
fn ensure_template(bin: &Path, plan: &Plan) -> String {
    let name = template_name();
    let mut admin = connect_admin();
    if let Some(Some(comment)) = database_comment(&mut admin, &name)
        && let Some(built) = comment.strip_prefix(BUILT_MARK)
    {
        let built = built.trim().to_string();
        eprintln!("cloud database: cached as {name} ({built})");
        return built;
    }
    eprintln!(
        "cloud database: building {TICKETS} tickets and {COMMENTS} comments through `jility \
         serve` and the bridge in {name} …"
    );
    // Two statements: neither may run in a transaction block.
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
    let token = create_workspace(bin, &url);
    let home = temp_dir("jility-cloud-build-");
    // Without statistics the planner reads a ticket's labels through the wrong index (the
    // whole workspace's), and each write gets slower as the database grows. A server that
    // runs autovacuum gathers them as it goes; on one that does not (the test server), do
    // what its autoanalyze would.
    let analyzer = (!autovacuum()).then(|| Analyzer::start(&url));
    let calls = bench::runtime().block_on(async {
        let bridge = bridge(bin, server.root(), &token, home.path()).await;
        let calls = support::build(&bridge, plan).await;
        let stderr = bridge.shutdown().await;
        if let Some(last) = stderr.trim().lines().last() {
            eprintln!("  bridge stderr: {last}");
        }
        calls
    });
    let log = server.stop();
    let analyzed = analyzer.map(Analyzer::stop);
    // Every ticket's context kept, as on a server whose tickets have each been read once
    // since their last write (a read refreshes the context a write left behind): what the
    // random reads below measure is the steady state of a board or agents polling.
    let mut db = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    db.batch_execute(
        "SELECT jility_refresh_contexts(w.id, ARRAY(SELECT id FROM tickets \
         WHERE workspace_id = w.id)) FROM workspaces w",
    )
    .unwrap();
    // And as after any bulk load: fresh statistics and visibility map for the copies.
    db.batch_execute("VACUUM (ANALYZE)").unwrap();
    drop(db);
    let took = t.elapsed();
    // Every call succeeded (the builder checks each answer), so the database is complete;
    // what the server said is shown, not judged.
    for line in problems(&log) {
        eprintln!("  server: {line}");
    }
    let analyzed = analyzed.map_or(String::new(), |n| {
        format!(
            "; autovacuum is off on this server, so the benchmark ran ANALYZE every {} s \
             ({n} times) during the build",
            ANALYZE_EVERY.as_secs()
        )
    });
    let built = format!(
        "built through the cloud bridge ({calls} calls) in {:.0} s on {}, {}, then VACUUM \
         ANALYZE{analyzed}",
        took.as_secs_f64(),
        chrono::Utc::now().format("%Y-%m-%d"),
        machine()
    );
    connect_admin()
        .batch_execute(&format!(
            "COMMENT ON DATABASE {name} IS '{BUILT_MARK} {}'",
            built.replace('\'', "''")
        ))
        .unwrap();
    eprintln!("cloud database: {built}");
    built
}

/// Whether the PostgreSQL server runs autovacuum.
fn autovacuum() -> bool {
    let on: String = connect_admin()
        .query_one("SHOW autovacuum", &[])
        .unwrap()
        .get(0);
    on == "on"
}

/// How often [`Analyzer`] gathers statistics: about as often as autoanalyze would on a table
/// growing as fast.
const ANALYZE_EVERY: Duration = Duration::from_secs(30);

/// `ANALYZE` of a database every [`ANALYZE_EVERY`] until stopped, on a connection of its own
/// opened each time (none is left open between runs).
struct Analyzer {
    stop: mpsc::Sender<()>,
    thread: std::thread::JoinHandle<u32>,
}

impl Analyzer {
    fn start(url: &str) -> Self {
        let (stop, stopped) = mpsc::channel::<()>();
        let url = url.to_string();
        let thread = std::thread::spawn(move || {
            let mut runs = 0;
            while let Err(mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(ANALYZE_EVERY) {
                let analyzed = postgres::Client::connect(&url, postgres::NoTls)
                    .and_then(|mut db| db.batch_execute("ANALYZE"));
                match analyzed {
                    Ok(()) => runs += 1,
                    Err(err) => eprintln!("  ANALYZE failed: {err}"),
                }
            }
            runs
        });
        Self { stop, thread }
    }

    /// Stop it; how many times it ran.
    fn stop(self) -> u32 {
        let _ = self.stop.send(());
        self.thread.join().unwrap()
    }
}

/// `jility admin create-workspace WORKSPACE --json` on `url`: the workspace's first token.
fn create_workspace(bin: &Path, url: &str) -> String {
    create_workspace_named(bin, url, WORKSPACE)
}

/// `jility admin create-workspace NAME --json` on `url`: the workspace's first token.
fn create_workspace_named(bin: &Path, url: &str, name: &str) -> String {
    let out = clean(bin)
        .args([
            "--json",
            "admin",
            "create-workspace",
            name,
            "--database-url",
            url,
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = stdout_of("jility admin create-workspace", &out);
    let created: Value = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|err| panic!("create-workspace printed no JSON ({err}): {stdout}"));
    assert_eq!(created["workspace"], name, "{created}");
    created["token"].as_str().unwrap().to_string()
}

/// This run's copy of the template, dropped (connections and all) when it goes out of scope,
/// also when the run panics.
struct RunDb {
    name: String,
    url: String,
}

impl RunDb {
    /// Copy the template; returns the copy and how long the copy took.
    fn create() -> (Self, Duration) {
        let name = format!("jility_bench_run_{}", std::process::id());
        let template = template_name();
        let mut admin = connect_admin();
        // Copies left by runs that were killed (their process is gone), and any of this pid.
        let runs = admin
            .query(
                "SELECT datname FROM pg_database WHERE datname LIKE 'jility\\_bench\\_run\\_%'",
                &[],
            )
            .unwrap();
        for row in runs {
            let stale: String = row.get(0);
            let pid = stale.trim_start_matches("jility_bench_run_");
            if stale == name || !Path::new("/proc").join(pid).exists() {
                eprintln!("dropping {stale}, left by an earlier run");
                admin
                    .batch_execute(&format!("DROP DATABASE IF EXISTS {stale} WITH (FORCE)"))
                    .unwrap();
            }
        }
        let t = Instant::now();
        let mut attempt = 0;
        // The template must have no connection; one that is closing may linger for a moment.
        while let Err(err) =
            admin.batch_execute(&format!("CREATE DATABASE {name} TEMPLATE {template}"))
        {
            attempt += 1;
            assert!(attempt < 10, "cannot copy {template}: {err}");
            eprintln!("copying {template}: {err}; retrying");
            std::thread::sleep(Duration::from_secs(1));
        }
        let took = t.elapsed();
        let url = with_database(&admin_url(), &name);
        (Self { name, url }, took)
    }
}

impl Drop for RunDb {
    fn drop(&mut self) {
        drop_database(&self.name);
    }
}

/// Drop the scratch database `name` (its sessions ended by force), saying so on stderr.
fn drop_database(name: &str) {
    let dropped = postgres::Client::connect(&admin_url(), postgres::NoTls)
        .and_then(|mut a| a.batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")));
    match dropped {
        Ok(()) => eprintln!("dropped {name}"),
        Err(err) => eprintln!("could not drop {name}: {err}"),
    }
}

/// Tokens minted on the run's copy (full access), by name: a token's name is the actor of
/// what it writes.
fn mint_tokens(url: &str, names: &[String]) -> Vec<String> {
    let db = PgDatabase::connect_with(url, 1).unwrap();
    import::mint_in(&db, WORKSPACE, names)
}

// ---- the processes --------------------------------------------------------------------------

/// What `what` printed on stdout, once it exited successfully (else the run fails with
/// both its outputs).
fn stdout_of(what: &str, out: &Output) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{what} failed ({}): {stdout} {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// The program `name` in a directory of `PATH`, if any.
fn on_path(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|paths| std::env::split_paths(&paths).collect::<Vec<_>>())
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

/// `bin` with a clean environment (only `PATH`), so that nothing of the developer's leaks in.
fn clean(bin: &Path) -> Command {
    let mut command = Command::new(bin);
    command.env_clear();
    if let Ok(path) = std::env::var("PATH") {
        command.env("PATH", path);
    }
    command
}

fn temp_dir(prefix: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(prefix)
        .tempdir_in(support::target_dir())
        .expect("create a temp dir")
}

/// A release `jility serve` on a database, killed when dropped.
struct Server {
    child: Child,
    /// `http://127.0.0.1:PORT/api/v1`.
    url: String,
    log: Arc<Mutex<Vec<String>>>,
}

impl Server {
    fn start(bin: &Path, database_url: &str) -> Self {
        // The OAuth part exchanges hundreds of codes a minute from one address: past the
        // token endpoint's limit per address (60 a minute) unless raised.
        Self::start_with(
            bin,
            database_url,
            RATE_LIMIT,
            &[("JILITY_OAUTH_TOKEN_LIMIT", "100000")],
        )
    }

    /// With `--rate-limit rate_limit` and the settings `env`.
    fn start_with(bin: &Path, database_url: &str, rate_limit: &str, env: &[(&str, &str)]) -> Self {
        let mut child = clean(bin)
            .args([
                "serve",
                "--listen",
                "127.0.0.1:0",
                "--database-url",
                database_url,
                "--rate-limit",
                rate_limit,
            ])
            .env("JILITY_MODE", "cloud")
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let log = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = mpsc::channel();
        let lines = log.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                // "jility: serving the API at URL/api/v1 and MCP at URL/mcp"
                if let Some(rest) = line.strip_prefix("jility: serving the API at ") {
                    let _ = tx.send(rest.split_whitespace().next().unwrap_or("").to_string());
                }
                lines.lock().unwrap().push(line);
            }
        });
        let Ok(url) = rx.recv_timeout(Duration::from_secs(120)) else {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "jility serve announced no address: {}",
                log.lock().unwrap().join("\n")
            );
        };
        assert!(url.ends_with("/api/v1"), "{url}");
        Self { child, url, log }
    }

    /// `http://127.0.0.1:PORT`, as `JILITY_API_URL` takes it.
    fn root(&self) -> &str {
        self.url.strip_suffix("/api/v1").unwrap()
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Stop it as an operator would (SIGTERM; killed after 10 s); its stderr.
    fn stop(mut self) -> String {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(10);
        let status = loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                break Some(status);
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        // The reader thread ends with the pipe.
        std::thread::sleep(Duration::from_millis(50));
        let mut log = self.log.lock().unwrap().join("\n");
        match status {
            Some(status) if status.success() => {}
            Some(status) => {
                let _ = write!(
                    log,
                    "\n(failed: jility serve exited with {status} on SIGTERM)"
                );
            }
            None => log.push_str("\n(failed: jility serve did not stop within 10 s of SIGTERM)"),
        }
        log
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A bridge to the API at `root` with `token`, its config directory in `home`.
async fn bridge(bin: &Path, root: &str, token: &str, home: &Path) -> McpProcess {
    let home_text = home.to_str().unwrap();
    McpProcess::spawn_bin(
        bin,
        &["--mcp-server"],
        home,
        &[
            ("JILITY_MODE", "cloud"),
            ("JILITY_API_URL", root),
            ("JILITY_API_TOKEN", token),
            ("XDG_CONFIG_HOME", home_text),
            ("HOME", home_text),
        ],
    )
    .await
    .expect("start the bridge")
}

/// Lines of a log that tell of a problem.
fn problems(log: &str) -> Vec<String> {
    let lines: Vec<&str> = log.lines().collect();
    let flagged = |l: &str| {
        let lower = l.to_lowercase();
        ["error", "warn", "panick", "fail"]
            .iter()
            .any(|w| lower.contains(w))
    };
    // A panic: its message and the start of its backtrace, whole.
    let panic = lines.iter().position(|l| l.contains("panicked at"));
    let before = panic.unwrap_or(lines.len());
    let mut out: Vec<String> = lines[..before]
        .iter()
        .filter(|l| flagged(l))
        .map(|l| l.to_string())
        .collect();
    if let Some(at) = panic {
        let after = &lines[at..];
        out.extend(after.iter().take(16).map(|l| l.to_string()));
        out.extend(
            after
                .iter()
                .skip(16)
                .filter(|l| l.starts_with("(failed"))
                .map(|l| l.to_string()),
        );
    }
    out
}

// ---- what is asked --------------------------------------------------------------------------

/// `n` distinct ticket numbers, random over the database, none of them [`SAME_TICKET`].
fn distinct_numbers(seed: u64, n: usize) -> Vec<usize> {
    let mut rng = Rng(seed);
    let mut seen = HashSet::from([SAME_TICKET]);
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let number = rng.range(1, TICKETS);
        if seen.insert(number) {
            out.push(number);
        }
    }
    out
}

/// Queries with more than 20,000 matches in the 100,000 tickets (37,000 to 100,000 when
/// counted on the database: words of every generated description's template), measured
/// whatever the shuffle, for the search ratio (`ratios::search_line`).
const COMMON_QUERIES: &[&str] = &[
    "acceptance criteria",
    "user",
    "regression",
    "runbook",
    "dashboards",
    "latency",
    "customers",
    "feature flag",
    "error messages",
    "steps",
    "suspect",
];
/// Queries with 100 to 1,000 matches (a browser or a person named in comments, a symptom in
/// an area), likewise.
const RARE_QUERIES: &[&str] = &[
    "android",
    "edge",
    "chrome",
    "firefox",
    "alice",
    "bob",
    "carol",
    "dave",
    "erin",
    "frank",
    "grace",
    "heidi",
    "ivan",
    "judy",
    "deadlock billing",
    "timeout checkout",
    "leak login",
    "crash webhook",
    "stale permissions",
    "flaky invoice",
    "pagination export",
    "deadlock thumbnails",
    "timeout calendar",
    "encoding digest",
    "redirect onboarding",
];

/// `n` distinct search queries of 1–2 words from the generator's vocabulary (the stdio
/// benchmark's queries among them), shuffled; [`COMMON_QUERIES`] and [`RARE_QUERIES`] among
/// the measured ones (after the first [`WARMUP`]), spread evenly.
fn search_queries(n: usize) -> Vec<String> {
    const STOP: &[&str] = &[
        "when", "with", "from", "that", "this", "than", "more", "their", "after", "before", "into",
        "over", "about", "have", "used", "does", "your", "they", "them", "will", "only", "some",
        "what", "which", "where", "there", "each", "during",
    ];
    let words = |phrase: &str| -> Vec<String> {
        phrase
            .split_whitespace()
            .map(|w| w.trim_matches('`').to_lowercase())
            .filter(|w| {
                w.len() >= 4 && w.chars().all(|c| c.is_ascii_alphabetic()) && !STOP.contains(&&**w)
            })
            .collect()
    };
    let mut seen = HashSet::new();
    let mut queries: Vec<String> = Vec::new();
    let mut add = |query: String, queries: &mut Vec<String>| {
        if seen.insert(query.clone()) {
            queries.push(query);
        }
    };
    for query in QUERIES {
        add(query.to_string(), &mut queries);
    }
    let lists: &[&[&str]] = &[
        AREAS,
        SYMPTOMS,
        FEATURES,
        CONDITIONS,
        CAUSES,
        MODULES,
        DEPENDENCIES,
        GOALS,
        TEAMS,
        EVIDENCE,
        BROWSERS,
    ];
    for phrase in lists.iter().flat_map(|l| l.iter()) {
        let words = words(phrase);
        for word in &words {
            add(word.clone(), &mut queries);
        }
        for pair in words.windows(2) {
            add(pair.join(" "), &mut queries);
        }
    }
    // More pairs if need be: a symptom in an area, as titles have them.
    let mut rng = Rng(0x5EA7_C4E5);
    while queries.len() < n {
        let symptom = words(rng.pick(SYMPTOMS));
        let area = words(rng.pick(AREAS));
        if let (Some(s), Some(a)) = (symptom.first(), area.first()) {
            add(format!("{s} {a}"), &mut queries);
        }
    }
    // Shuffled (Fisher–Yates), so that single words and pairs alternate.
    for i in (1..queries.len()).rev() {
        queries.swap(i, rng.below(i + 1));
    }
    let forced: Vec<&str> = COMMON_QUERIES
        .iter()
        .zip(RARE_QUERIES)
        .flat_map(|(common, rare)| [*common, *rare])
        .chain(RARE_QUERIES.iter().skip(COMMON_QUERIES.len()).copied())
        .collect();
    assert!(
        n >= WARMUP + forced.len(),
        "too few queries for the forced ones"
    );
    queries.retain(|q| !forced.contains(&q.as_str()));
    queries.truncate(n - forced.len());
    for (j, query) in forced.iter().enumerate() {
        queries.insert(WARMUP + j * (n - WARMUP) / forced.len(), query.to_string());
    }
    queries
}

/// The latency cases, measured through the bridge and through the local server alike.
fn cases(queries: &[String]) -> Vec<Case> {
    let numbers = distinct_numbers(0x0C10_0D6E, WARMUP + ITERS);
    let numbers_check = numbers.clone();
    let queries = queries.to_vec();
    let mut create_rng = Rng(0xC10D_C4EA);
    let created: Vec<Planned> = (0..WARMUP + ITERS)
        .map(|_| Planned::generate(&mut create_rng, "todo"))
        .collect();
    let titles: Vec<String> = created.iter().map(|t| t.title.clone()).collect();
    let search_check = |_: usize, data: &Value| {
        let total = data["page"]["total"].as_u64().unwrap() as usize;
        let hits = data["hits"].as_array().unwrap();
        assert_eq!(hits.len(), total.min(20), "{data}");
    };
    vec![
        Case {
            label: format!("`jility_get_ticket`, the same ticket ({KEY}-{SAME_TICKET})"),
            tool: "jility_get_ticket",
            iters: ITERS,
            target_ms: None,
            args: Box::new(|_| json!({"ticket_id": format!("{KEY}-{SAME_TICKET}")})),
            check: Box::new(|_, data| {
                assert_eq!(number_of(&data["ticket"]["number"]), SAME_TICKET);
                assert!(data["ticket"]["description"].as_str().unwrap().len() > 100);
            }),
        },
        Case {
            label: "`jility_get_ticket`, a different random ticket each call".into(),
            tool: "jility_get_ticket",
            iters: ITERS,
            target_ms: Some(GET_TARGET_MS),
            args: Box::new(move |i| json!({"ticket_id": format!("{KEY}-{}", numbers[i])})),
            check: Box::new(move |i, data| {
                assert_eq!(number_of(&data["ticket"]["number"]), numbers_check[i]);
                assert!(data["ticket"]["description"].as_str().unwrap().len() > 100);
            }),
        },
        Case {
            label: "`jility_search_tickets`, a different 1–2 word query each call".into(),
            tool: "jility_search_tickets",
            iters: ITERS_SEARCH,
            target_ms: Some(SEARCH_TARGET_MS),
            args: Box::new(move |i| json!({"query": queries[i]})),
            check: Box::new(search_check),
        },
        Case {
            label: "`jility_create_ticket` (status todo, ~0.5 KiB description)".into(),
            tool: "jility_create_ticket",
            iters: ITERS,
            target_ms: Some(CREATE_TARGET_MS),
            args: Box::new(move |i| created[i].args(true)),
            check: Box::new(move |i, data| {
                assert_eq!(data["ticket"]["title"], titles[i].as_str());
                assert_eq!(data["ticket"]["status"], "todo");
            }),
        },
    ]
}

/// The cases' rows through one MCP server, and the pings that preceded their calls.
async fn latencies(mcp: &McpProcess, cases: &[Case], side: &str) -> (Vec<Row>, Vec<Duration>) {
    let mut pings = Vec::new();
    let mut rows = Vec::new();
    for case in cases {
        let t = Instant::now();
        rows.push(measure(mcp, case, &mut pings).await);
        eprintln!("{side}: {}: {:.1?}", case.label, t.elapsed());
    }
    (rows, pings)
}

// ---- REST -----------------------------------------------------------------------------------

fn http_client() -> reqwest::Client {
    mcp_testkit::install_crypto_provider();
    reqwest::Client::builder()
        .tcp_nodelay(true)
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap()
}

/// `GET {base}{path}` with `token`: the status and the body.
async fn get(http: &reqwest::Client, url: &str, token: &str) -> (u16, String) {
    let response = http
        .get(url)
        .bearer_auth(token)
        .send()
        .await
        .unwrap_or_else(|err| panic!("GET {url}: {err}"));
    let status = response.status().as_u16();
    let body = response
        .text()
        .await
        .unwrap_or_else(|err| panic!("GET {url}: {err}"));
    (status, body)
}

fn urlencode(text: &str) -> String {
    form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

struct Sequential {
    p50: Duration,
    p99: Duration,
    /// Per measured request, its page's `total` (searches: replaced by the true number of
    /// matches, [`match_counts`]) and its latency.
    totals: Vec<u64>,
    samples: Vec<Duration>,
}

/// One client, one request at a time: `WARMUP` then `iters` requests of `path(i)`, each
/// checked by `check`.
async fn sequential(
    http: &reqwest::Client,
    base: &str,
    token: &str,
    iters: usize,
    path: impl Fn(usize) -> String,
    check: impl Fn(usize, &Value),
) -> Sequential {
    let mut samples = Vec::with_capacity(iters);
    let mut totals = Vec::with_capacity(iters);
    for i in 0..WARMUP + iters {
        let url = format!("{base}{}", path(i));
        let t = Instant::now();
        let (status, body) = get(http, &url, token).await;
        let elapsed = t.elapsed();
        assert_eq!(status, 200, "GET {url}: {body}");
        let value: Value = serde_json::from_str(&body).unwrap();
        check(i, &value);
        if i >= WARMUP {
            samples.push(elapsed);
            totals.push(value["page"]["total"].as_u64().unwrap_or(0));
        }
    }
    Sequential {
        p50: percentile(&samples, 0.50),
        p99: percentile(&samples, 0.99),
        totals,
        samples,
    }
}

struct Throughput {
    /// Requests answered in the measured window.
    requests: usize,
    window: Duration,
    p50: Duration,
    p99: Duration,
    /// Answers decoded and checked in full, over the whole run.
    parsed: usize,
    /// Answers checked (status and number), over the whole run.
    checked: usize,
    /// Where the machine's CPUs went during the window.
    cpu: Option<CpuSplit>,
}

/// CPU time, in clock ticks: the machine's (all CPUs, busy and idle) and processes'.
#[derive(Clone, Copy)]
struct CpuTicks {
    total: u64,
    idle: u64,
    /// The `jility serve` processes' (together).
    server: u64,
    generator: u64,
    /// Every `postgres` process's (the server's backends, the run's and any other's).
    postgres: u64,
}

/// How many CPUs' worth each part used over an interval.
struct CpuSplit {
    server: f64,
    generator: f64,
    postgres: f64,
    /// Whatever else the machine runs.
    rest: f64,
    idle: f64,
}

/// `(total, idle)` ticks of all CPUs, from `/proc/stat`.
fn machine_ticks() -> Option<(u64, u64)> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let fields: Vec<u64> = stat
        .lines()
        .next()?
        .strip_prefix("cpu ")?
        .split_whitespace()
        .map(|f| f.parse().unwrap_or(0))
        .collect();
    // user nice system idle iowait irq softirq steal (guest time is inside user).
    let total = fields.iter().take(8).sum();
    let idle = fields.get(3)? + fields.get(4).copied().unwrap_or(0);
    Some((total, idle))
}

/// User and system ticks of process `pid` (`self` for this one), from `/proc/<pid>/stat`.
fn process_ticks(pid: &str) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // After the command name (in parentheses): state is field 3, utime 14, stime 15.
    let rest: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    Some(rest.get(11)?.parse::<u64>().ok()? + rest.get(12)?.parse::<u64>().ok()?)
}

/// The ticks of every process named `postgres` (a backend that exits meanwhile is lost).
fn postgres_ticks() -> u64 {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0;
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|pid| pid.bytes().all(|b| b.is_ascii_digit()))
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/comm"))
                .is_ok_and(|comm| comm.trim() == "postgres")
        })
        .filter_map(|pid| process_ticks(&pid))
        .sum()
}

fn cpu_ticks(servers: &[u32]) -> Option<CpuTicks> {
    let (total, idle) = machine_ticks()?;
    let mut server = 0;
    for pid in servers {
        server += process_ticks(&pid.to_string())?;
    }
    Some(CpuTicks {
        total,
        idle,
        server,
        generator: process_ticks("self")?,
        postgres: postgres_ticks(),
    })
}

impl CpuTicks {
    fn split(self, until: CpuTicks) -> Option<CpuSplit> {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
        let total = until.total.checked_sub(self.total).filter(|t| *t > 0)? as f64;
        let share = |ticks: u64| ticks as f64 * cpus / total;
        let server = share(until.server.saturating_sub(self.server));
        let generator = share(until.generator.saturating_sub(self.generator));
        let postgres = share(until.postgres.saturating_sub(self.postgres));
        let idle = share(until.idle.saturating_sub(self.idle));
        Some(CpuSplit {
            server,
            generator,
            postgres,
            rest: (cpus - server - generator - postgres - idle).max(0.0),
            idle,
        })
    }
}

/// `CLIENTS` clients (client `c` with `tokens[c % len]`, on the server `bases[c % len]`, whose
/// processes are `servers`) each send `GET /tickets/{KEY-N}` of a random N back to back:
/// requests answered within the window after the warm-up, and their latencies
/// (`cloud_parts/mixed.rs`).
async fn read_throughput(
    bases: &[&str],
    tokens: &[String],
    seed: u64,
    servers: &[u32],
) -> Throughput {
    let count = tokens.len();
    let pick = move |c: usize, rng: &mut Rng| mixed::Pick {
        token: c % count,
        number: rng.range(1, TICKETS),
        population: 0,
        title: None,
    };
    mixed::read_mixed(bases, tokens, seed, servers, pick)
        .await
        .throughput
}

impl Throughput {
    fn per_second(&self) -> f64 {
        self.requests as f64 / self.window.as_secs_f64()
    }
}

// ---- main -----------------------------------------------------------------------------------

/// The `jility` under test: `JILITY_BENCH_JILITY`, else the release build of this tree.
fn jility_binary() -> PathBuf {
    let Some(path) = std::env::var_os("JILITY_BENCH_JILITY").filter(|p| !p.is_empty()) else {
        return support::server_binary();
    };
    let path = PathBuf::from(path);
    assert!(
        path.is_file(),
        "JILITY_BENCH_JILITY={} is not a file",
        path.display()
    );
    eprintln!(
        "jility under test: {} (JILITY_BENCH_JILITY)",
        path.display()
    );
    path
}

/// `JILITY_BENCH_ONLY=fresh` or `=skew`: that case alone, with its own `pgbench` baseline;
/// its ratio lines.
fn case_only(bin: &Path, only: &str) {
    // Built (if need be) before the baseline's database is made.
    let skew_built = (only == "skew").then(|| skew::ensure_template(bin));
    let pgbench = PgBench::init();
    let case = match skew_built {
        None => fresh::fresh(bin, &pgbench),
        Some(built) => skew::skew(bin, &pgbench, &built),
    };
    drop(pgbench);
    println!("\n{}\n\nRatios (one run, one machine):", case.details);
    for line in case.lines {
        println!("- {line}");
    }
}

fn main() {
    let started = Instant::now();
    let _held = hold_the_cluster();
    let bin = jility_binary();
    let only = std::env::var("JILITY_BENCH_ONLY").ok();
    if let Some(case @ ("fresh" | "skew")) = only.as_deref() {
        case_only(&bin, case);
        eprintln!("total time {:.1?}", started.elapsed());
        return;
    }
    if only.as_deref() == Some("webhooks") {
        let lines = hooks::webhooks(&bin);
        println!("\nWebhooks (one run, one machine, a new database):");
        for line in lines {
            println!("- {line}");
        }
        eprintln!("total time {:.1?}", started.elapsed());
        return;
    }
    if only.as_deref() == Some("operate") {
        let lines = operate::operate(&bin);
        println!("\nOperating jility serve (one run, one machine):");
        for line in lines {
            println!("- {line}");
        }
        eprintln!("total time {:.1?}", started.elapsed());
        return;
    }
    let t = Instant::now();
    let plan = Plan::generate();
    eprintln!(
        "plan: {TICKETS} tickets, {COMMENTS} comments, generated in {:.1?}",
        t.elapsed()
    );
    let cloud_built = ensure_template(&bin, &plan);
    let (local_cache, local_built) = ensure_database(&bin, &plan);
    drop(plan);
    let skew_built = only.is_none().then(|| skew::ensure_template(&bin));

    let (db, copied) = RunDb::create();
    let db_bytes = database_bytes(&db.name);
    eprintln!(
        "copied {} to {} ({}) in {copied:.1?}",
        template_name(),
        db.name,
        mib(db_bytes / 1024)
    );
    let mut names = vec!["bench".to_string(), "verify".to_string()];
    names.extend((0..LOAD_PROCESSES).map(|k| support::loader("load", k)));
    names.extend((0..CLIENTS).map(|c| format!("reader-{c}")));
    names.extend((0..writes::WRITERS).map(|k| format!("rest-writer-{k}")));
    names.extend([
        "limit-alternating".to_string(),
        "limit-concurrent".to_string(),
    ]);
    let tokens = mint_tokens(&db.url, &names);
    // The baseline's database, filled before anything is measured (dropped at the end).
    let pgbench = matches!(only.as_deref(), None | Some("rest" | "writes")).then(PgBench::init);
    let server = Server::start(&bin, &db.url);
    let (local_dir, local_bytes) = copy_database(&local_cache);

    if std::env::var("JILITY_BENCH_ONLY").as_deref() == Ok("web") {
        let cookie = web::sign_in(&db.url);
        bench::runtime().block_on(web::web_only(&server, &cookie, &tokens[0]));
        eprintln!("{}", server.stop());
        drop(db);
        return;
    }
    if std::env::var("JILITY_BENCH_ONLY").as_deref() == Ok("planning") {
        let cookie = web::sign_in(&db.url);
        bench::runtime().block_on(planning::planning_only(
            &server, &cookie, &tokens[0], &db.url,
        ));
        eprintln!("{}", server.stop());
        drop(db);
        return;
    }
    if std::env::var("JILITY_BENCH_ONLY").as_deref() == Ok("bulk") {
        let lines =
            bench::runtime().block_on(bulk::bulk_only(&server, &tokens, &bin, local_dir.path()));
        eprintln!("{}", server.stop());
        println!("\nBulk edits (one run, one machine):");
        for line in lines {
            println!("- {line}");
        }
        drop(db);
        return;
    }
    if std::env::var("JILITY_BENCH_ONLY").as_deref() == Ok("related") {
        let lines =
            bench::runtime().block_on(related::related_only(&server, &tokens, &bin, &db.url));
        eprintln!("{}", server.stop());
        println!("\nRelated tickets (one run, one machine):");
        for line in lines {
            println!("- {line}");
        }
        drop(db);
        return;
    }
    if std::env::var("JILITY_BENCH_ONLY").as_deref() == Ok("query") {
        let lines = bench::runtime().block_on(query::query_only(&server, &tokens));
        eprintln!("{}", server.stop());
        println!("\nQuery language (one run, one machine):");
        for line in lines {
            println!("- {line}");
        }
        drop(db);
        return;
    }
    if std::env::var("JILITY_BENCH_ONLY").as_deref() == Ok("oauth") {
        let cookie = web::sign_in(&db.url);
        bench::runtime().block_on(oauth::oauth_only(&server, &cookie, &tokens[0]));
        eprintln!("{}", server.stop());
        drop(db);
        return;
    }
    if let (Some("rest" | "writes"), Some(pgbench)) = (only.as_deref(), &pgbench) {
        let lines = if only.as_deref() == Some("rest") {
            bench::runtime().block_on(rest_only(&bin, &server, &db.url, &tokens, pgbench))
        } else {
            bench::runtime().block_on(writes_only(&bin, &server, &tokens, pgbench))
        };
        eprintln!("{}", server.stop());
        println!("\nRatios (one run, one machine):");
        for line in lines {
            println!("- {line}");
        }
        return;
    }
    let pgbench = pgbench.unwrap();
    let cloud = bench::runtime().block_on(cloud(&bin, &server, &db.url, &tokens, &pgbench));
    let server_memory = bench::read_memory(server.pid());
    let server_log = server.stop();
    // Cases (b) and (c), each with its own server, beside the same baseline.
    let skew_built = skew_built.unwrap();
    let cases = [
        fresh::fresh(&bin, &pgbench),
        skew::skew(&bin, &pgbench, &skew_built),
    ];
    drop(pgbench);
    let local = bench::runtime().block_on(local(&bin, local_dir.path()));
    let setup = Setup {
        cloud_built,
        local_built,
        copied,
        db_bytes,
        local_bytes,
        server_memory,
        server_log,
    };
    let report = report(&setup, &cloud, &local, &cases);
    println!("{report}");
    eprintln!("{}", bench::write_report("jility-cloud-bench.md", &report));
    drop(db);
    eprintln!("total time {:.1?}", started.elapsed());
}

struct Setup {
    cloud_built: String,
    local_built: String,
    copied: Duration,
    db_bytes: u64,
    local_bytes: u64,
    server_memory: Option<bench::Memory>,
    server_log: String,
}

/// What one side (cloud or local) measured.
struct Side {
    rows: Vec<Row>,
    pings: Vec<Duration>,
    load: Load,
    verified: Verified,
    /// Everything the MCP server processes wrote to stderr that tells of a problem.
    problems: Vec<String>,
    /// The MCP server's (the bridge's, or the local server's) memory after the latency runs.
    memory: Option<bench::Memory>,
}

struct Cloud {
    side: Side,
    rest_get: Sequential,
    rest_search: Sequential,
    throughput: Throughput,
    shared_token: Throughput,
    /// The 32 readers split between two processes on the database.
    two_processes: Throughput,
    rate: RateCheck,
    rest_creates: Writes,
    rest_comments: Writes,
    /// `pgbench` select-only and simple-update, each measured next to its counterpart.
    pg_select: PgBenchRun,
    /// What generated the load of `throughput` (and `two_processes`): `wrk` when installed.
    generator: &'static str,
    pg_update: PgBenchRun,
}

impl Cloud {
    /// The ratio lines, in the order they are measured.
    fn ratio_lines(&self) -> Vec<String> {
        let mut lines = vec![
            ratios::search_line(&self.rest_search),
            ratios::get_line(&self.throughput, &self.pg_select, self.generator),
            ratios::two_process_line(&self.throughput, &self.two_processes),
            ratios::rate_line(&self.rate),
        ];
        lines.extend(ratios::writes_lines(
            &self.pg_update,
            &[&self.rest_creates, &self.rest_comments],
            Some(&self.side.load),
        ));
        lines
    }
}

fn queries() -> Vec<String> {
    search_queries(WARMUP + ITERS_SEARCH)
}

/// How many tickets of the workspace each query matches, counted in the database as the
/// search matches them (each word a term, all required): an answer's `total` is only a lower
/// bound once many match.
fn match_counts(url: &str, queries: &[String]) -> Vec<u64> {
    // The sync PostgreSQL client runs a runtime of its own, which cannot start on a thread
    // driving the benchmark's: count on a thread of its own (the benchmark waits anyway).
    let (url, queries) = (url.to_string(), queries.to_vec());
    std::thread::spawn(move || count_matches(&url, &queries))
        .join()
        .unwrap()
}

fn count_matches(url: &str, queries: &[String]) -> Vec<u64> {
    let workspace = PgDatabase::connect_with(url, 1)
        .unwrap()
        .workspace_by_name(WORKSPACE)
        .unwrap()
        .unwrap()
        .id;
    let mut db = postgres::Client::connect(url, postgres::NoTls).unwrap();
    queries
        .iter()
        .map(|query| {
            let words: Vec<String> = query
                .split(|c: char| !c.is_alphanumeric() && c != '_')
                .filter(|w| !w.is_empty())
                .map(str::to_lowercase)
                .collect();
            let terms: Vec<String> = (0..words.len())
                .map(|i| format!("phraseto_tsquery('jility', ${})", i + 2))
                .collect();
            let sql = format!(
                "SELECT count(*) FROM ticket_search WHERE workspace_id = $1 AND search @@ ({})",
                terms.join(" && ")
            );
            let mut params: Vec<&(dyn postgres::types::ToSql + Sync)> = vec![&workspace];
            params.extend(
                words
                    .iter()
                    .map(|w| w as &(dyn postgres::types::ToSql + Sync)),
            );
            let n: i64 = db.query_one(&sql, &params).unwrap().get(0);
            n as u64
        })
        .collect()
}

async fn cloud(
    bin: &Path,
    server: &Server,
    database_url: &str,
    tokens: &[String],
    pgbench: &PgBench,
) -> Cloud {
    let home = temp_dir("jility-cloud-home-");
    let root = server.root();
    let base = server.url.as_str();
    let (main_token, verify_token) = (&tokens[0], &tokens[1]);
    let load_tokens = &tokens[2..READERS_AT];
    let reader_tokens = &tokens[READERS_AT..WRITERS_AT];
    let queries = queries();
    let cases = cases(&queries);

    // Through one bridge. It caches only once it follows the API's event stream, which it
    // does in the background without saying so: give it a moment.
    let mcp = bridge(bin, root, main_token, home.path()).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let (rows, pings) = latencies(&mcp, &cases, "cloud").await;
    let memory = mcp.pid().and_then(bench::read_memory);
    let mut problems = problems(&mcp.shutdown().await);

    // REST, one request at a time: the same reads and searches.
    let http = http_client();
    // Other tickets than the bridge read, so that none is in PostgreSQL's cache for that.
    let numbers = distinct_numbers(0x4E57_0D6E, WARMUP + ITERS);
    let t = Instant::now();
    let rest_get = sequential(
        &http,
        base,
        main_token,
        ITERS,
        |i| format!("/tickets/{KEY}-{}", numbers[i]),
        |i, v| assert_eq!(number_of(&v["ticket"]["number"]), numbers[i]),
    )
    .await;
    eprintln!("cloud: REST get: {:.1?}", t.elapsed());
    let t = Instant::now();
    let rest_search = sequential(
        &http,
        base,
        main_token,
        ITERS_SEARCH,
        |i| format!("/search?q={}", urlencode(&queries[i])),
        |_, v| {
            let total = v["page"]["total"].as_u64().unwrap() as usize;
            assert_eq!(v["hits"].as_array().unwrap().len(), total.min(20), "{v}");
        },
    )
    .await;
    eprintln!("cloud: REST search: {:.1?}", t.elapsed());
    let mut rest_search = rest_search;
    rest_search.totals = match_counts(database_url, &queries[WARMUP..]);
    eprintln!("{}", ratios::search_line(&rest_search));

    // Many readers at once, right after the baseline (never at the same time).
    let pg_select = pgbench.run(PGBENCH_SELECT);
    eprintln!("cloud: {}", pg_select.summary());
    let t = Instant::now();
    let with_wrk = wrk::read_throughput(&[base], reader_tokens, 0x7E57_0000, &[server.pid()]);
    let checked = read_throughput(&[base], reader_tokens, 0x7E57_0000, &[server.pid()]).await;
    eprintln!(
        "cloud: {CLIENTS} readers, a token each: {:.0} requests/s with reqwest ({} answers \
         checked, {} decoded whole; {:.1?})",
        checked.per_second(),
        checked.checked,
        checked.parsed,
        t.elapsed()
    );
    let (throughput, generator) = match with_wrk {
        Some(throughput) => (throughput, "wrk"),
        None => (checked, "reqwest; no wrk installed"),
    };
    eprintln!("{}", ratios::get_line(&throughput, &pg_select, generator));
    let t = Instant::now();
    let shared_token = read_throughput(
        &[base],
        std::slice::from_ref(main_token),
        0x5A4E_0000,
        &[server.pid()],
    )
    .await;
    eprintln!(
        "cloud: {CLIENTS} readers, one token: {:.0} requests/s ({:.1?})",
        shared_token.per_second(),
        t.elapsed()
    );
    let two_processes = two_processes(bin, server, database_url, reader_tokens).await;
    eprintln!("{}", ratios::two_process_line(&throughput, &two_processes));
    let rate = shared::rate_limit_shared(bin, database_url, &tokens[LIMITED_AT..]).await;
    eprintln!("{}", ratios::rate_line(&rate));

    // The writers' baseline, then the writers.
    let pg_update = pgbench.run(PGBENCH_UPDATE);
    eprintln!("cloud: {}", pg_update.summary());

    // Concurrent writers: every bridge up before the clock starts.
    let mut bridges = Vec::new();
    for token in load_tokens {
        bridges.push(bridge(bin, root, token, home.path()).await);
    }
    let t = Instant::now();
    let load = support::load_on(bridges, "load").await;
    eprintln!(
        "cloud: {LOAD_PROCESSES} bridges × {LOAD_CREATES} creates: {:.1?}",
        t.elapsed()
    );
    let expected = TICKETS + WARMUP + ITERS + LOAD_PROCESSES * LOAD_CREATES;
    let mcp = bridge(bin, root, verify_token, home.path()).await;
    let verified = support::verify_on(&mcp, expected, &[&load]).await;
    eprintln!(
        "cloud: verified {} tickets in {:.1?}",
        verified.listed, verified.took
    );
    problems.extend(self::problems(&mcp.shutdown().await));
    // REST writers, after the check (it counts the tickets).
    let writer_tokens = &tokens[WRITERS_AT..LIMITED_AT];
    let rest_creates = writes::rest_writes(base, writer_tokens, Write::Create, 0x3E57_C000).await;
    let rest_comments = writes::rest_writes(base, writer_tokens, Write::Comment, 0x3E57_C033).await;
    let cloud = Cloud {
        side: Side {
            rows,
            pings,
            load,
            verified,
            problems,
            memory,
        },
        rest_get,
        rest_search,
        throughput,
        shared_token,
        two_processes,
        rate,
        rest_creates,
        rest_comments,
        pg_select,
        generator,
        pg_update,
    };
    for line in &cloud.ratio_lines()[4..] {
        eprintln!("{line}");
    }
    cloud
}

/// The readers split between the run's server and a second process on its database (started
/// now, stopped after).
async fn two_processes(
    bin: &Path,
    server: &Server,
    database_url: &str,
    readers: &[String],
) -> Throughput {
    let second = Server::start(bin, database_url);
    let t = Instant::now();
    let bases = [server.url.as_str(), second.url.as_str()];
    let pids = [server.pid(), second.pid()];
    let throughput = match wrk::read_throughput(&bases, readers, 0x2E57_0000, &pids) {
        Some(throughput) => throughput,
        None => read_throughput(&bases, readers, 0x2E57_0000, &pids).await,
    };
    eprintln!(
        "cloud: {CLIENTS} readers on 2 processes: {:.0} requests/s ({:.1?})",
        throughput.per_second(),
        t.elapsed()
    );
    for line in problems(&second.stop()) {
        eprintln!("  second server: {line}");
    }
    throughput
}

/// What a search costs grows with the tickets it matches: the latencies of `search` by
/// its queries' number of matches.
fn search_buckets(search: &Sequential) -> Vec<String> {
    let totals = &search.totals;
    let mut buckets = Vec::new();
    for (lo, hi) in [
        (0, 1_000),
        (1_001, 5_000),
        (5_001, 20_000),
        (20_001, u64::MAX),
    ] {
        let samples: Vec<Duration> = totals
            .iter()
            .zip(&search.samples)
            .filter(|(t, _)| (lo..=hi).contains(*t))
            .map(|(_, d)| *d)
            .collect();
        if samples.is_empty() {
            continue;
        }
        let range = if hi == u64::MAX {
            format!("more than {}", lo - 1)
        } else {
            format!("{lo}–{hi}")
        };
        buckets.push(format!(
            "{range} matches: {} queries, p50 {}, p99 {}",
            samples.len(),
            ms_scaled(percentile(&samples, 0.50)),
            ms_scaled(percentile(&samples, 0.99))
        ));
    }
    buckets
}

/// Parts 2 and 3 only, with the baseline, the two processes and the shared rate limit,
/// printed as they come (`JILITY_BENCH_ONLY=rest`): the ratio lines.
async fn rest_only(
    bin: &Path,
    server: &Server,
    database_url: &str,
    tokens: &[String],
    pgbench: &PgBench,
) -> Vec<String> {
    let base = server.url.as_str();
    let http = http_client();
    let numbers = distinct_numbers(0x4E57_0D6E, WARMUP + ITERS);
    let get = sequential(
        &http,
        base,
        &tokens[0],
        ITERS,
        |i| format!("/tickets/{KEY}-{}", numbers[i]),
        |i, v| assert_eq!(number_of(&v["ticket"]["number"]), numbers[i]),
    )
    .await;
    eprintln!("REST get, 1 client: p50 {}", ms(get.p50));
    let queries = queries();
    let mut search = sequential(
        &http,
        base,
        &tokens[0],
        ITERS_SEARCH,
        |i| format!("/search?q={}", urlencode(&queries[i])),
        |_, _| {},
    )
    .await;
    search.totals = match_counts(database_url, &queries[WARMUP..]);
    eprintln!(
        "REST search, 1 client: p50 {}; {}",
        ms(search.p50),
        search_buckets(&search).join("; ")
    );
    let mut lines = vec![ratios::search_line(&search)];
    eprintln!("{}", lines[0]);
    let pg = pgbench.run(PGBENCH_SELECT);
    eprintln!("{}", pg.summary());
    let readers = &tokens[READERS_AT..WRITERS_AT];
    let with_wrk = wrk::read_throughput(&[base], readers, 0x7E57_0000, &[server.pid()]);
    let checked = read_throughput(&[base], readers, 0x7E57_0000, &[server.pid()]).await;
    eprintln!(
        "REST get, {CLIENTS} clients (reqwest, every answer checked): {:.0}/s, p50 {} p99 {}{}",
        checked.per_second(),
        ms(checked.p50),
        ms(checked.p99),
        cpu_text(&checked)
    );
    let (t, generator) = match with_wrk {
        Some(t) => {
            eprintln!(
                "REST get, {CLIENTS} clients (wrk): {:.0}/s, p50 {} p99 {}{}",
                t.per_second(),
                ms(t.p50),
                ms(t.p99),
                cpu_text(&t)
            );
            (t, "wrk")
        }
        None => (checked, "reqwest; no wrk installed"),
    };
    lines.push(ratios::get_line(&t, &pg, generator));
    eprintln!("{}", lines[1]);
    let two = two_processes(bin, server, database_url, readers).await;
    eprintln!(
        "REST get, {CLIENTS} clients on 2 processes: p50 {} p99 {}{}",
        ms(two.p50),
        ms(two.p99),
        cpu_text(&two)
    );
    lines.push(ratios::two_process_line(&t, &two));
    eprintln!("{}", lines[2]);
    let rate = shared::rate_limit_shared(bin, database_url, &tokens[LIMITED_AT..]).await;
    lines.push(ratios::rate_line(&rate));
    eprintln!("{}", lines[3]);
    lines
}

/// `; CPUs: server …` of a throughput run, if known.
fn cpu_text(t: &Throughput) -> String {
    t.cpu.as_ref().map_or(String::new(), |c| {
        format!(
            "; CPUs: server {:.2}, postgres {:.2}, generator {:.2}, rest {:.2}, idle {:.2}",
            c.server, c.postgres, c.generator, c.rest, c.idle
        )
    })
}

/// The writers only, printed as they come (`JILITY_BENCH_ONLY=writes`): `pgbench -N`, then
/// part 4 (4 bridges × 1,000 creates, and the check that none is lost), then the REST
/// creates and comments; the ratio lines.
async fn writes_only(
    bin: &Path,
    server: &Server,
    tokens: &[String],
    pgbench: &PgBench,
) -> Vec<String> {
    let home = temp_dir("jility-cloud-home-");
    let root = server.root();
    let base = server.url.as_str();
    let pg = pgbench.run(PGBENCH_UPDATE);
    eprintln!("{}", pg.summary());
    let mut bridges = Vec::new();
    for token in &tokens[2..READERS_AT] {
        bridges.push(bridge(bin, root, token, home.path()).await);
    }
    let load = support::load_on(bridges, "load").await;
    eprintln!(
        "{LOAD_PROCESSES} bridges × {LOAD_CREATES} creates: {:.1?}, p50 {} p99 {}",
        load.wall,
        ms(load.p50),
        ms(load.p99)
    );
    let mcp = bridge(bin, root, &tokens[1], home.path()).await;
    let expected = TICKETS + LOAD_PROCESSES * LOAD_CREATES;
    let verified = support::verify_on(&mcp, expected, &[&load]).await;
    eprintln!(
        "verified {} tickets in {:.1?}: none lost",
        verified.listed, verified.took
    );
    for line in problems(&mcp.shutdown().await) {
        eprintln!("  bridge: {line}");
    }
    let writers = &tokens[WRITERS_AT..LIMITED_AT];
    let creates = writes::rest_writes(base, writers, Write::Create, 0x3E57_C000).await;
    let (lo, hi) = creates.span.unwrap();
    eprintln!(
        "REST creates: {} answered, {KEY}-{lo} to {KEY}-{hi}, contiguous",
        creates.checked
    );
    let comments = writes::rest_writes(base, writers, Write::Comment, 0x3E57_C033).await;
    eprintln!("REST comments: {} answered", comments.checked);
    let lines = ratios::writes_lines(&pg, &[&creates, &comments], Some(&load));
    for line in &lines {
        eprintln!("{line}");
    }
    lines
}

async fn local(bin: &Path, root: &Path) -> Side {
    let queries = queries();
    let cases = cases(&queries);
    let mcp = support::start(bin, root).await;
    let (rows, pings) = latencies(&mcp, &cases, "local").await;
    let memory = mcp.pid().and_then(bench::read_memory);
    let problems = problems(&mcp.shutdown().await);
    let t = Instant::now();
    let load = support::load(bin, root, LOAD_PROCESSES, "load").await;
    eprintln!(
        "local: {LOAD_PROCESSES} processes × {LOAD_CREATES} creates: {:.1?}",
        t.elapsed()
    );
    let expected = TICKETS + WARMUP + ITERS + LOAD_PROCESSES * LOAD_CREATES;
    let verified = support::verify(bin, root, expected, &[&load]).await;
    eprintln!(
        "local: verified {} tickets in {:.1?}",
        verified.listed, verified.took
    );
    Side {
        rows,
        pings,
        load,
        verified,
        problems,
        memory,
    }
}

// ---- the report -----------------------------------------------------------------------------

fn report(setup: &Setup, cloud: &Cloud, local: &Side, cases: &[import::CaseReport]) -> String {
    let mut out = String::new();
    let c = &cloud.side;
    let cloud_ping = percentile(&c.pings, 0.50);
    let local_ping = percentile(&local.pings, 0.50);
    let ratio = |d: Duration, ping: Duration| d.as_secs_f64() / ping.as_secs_f64();
    let under = |d: Duration, max_ms: f64| met(d.as_secs_f64() * 1e3 <= max_ms);
    writeln!(
        out,
        "jility cloud benchmark: `jility serve` on PostgreSQL (rate limit {RATE_LIMIT}/min, so \
         never refused) and the caching MCP bridge, with local mode beside it; {TICKETS} \
         tickets and {COMMENTS} comments, the stdio benchmark's generator. Cloud database {} \
         ({}); each run copies it (`CREATE DATABASE … TEMPLATE`, {}). Local database {} ({}), \
         copied likewise. Server, bridges, PostgreSQL and the load generator on one machine: \
         {}.\n",
        mib(setup.db_bytes / 1024),
        setup.cloud_built,
        ms_scaled(setup.copied),
        mib(setup.local_bytes / 1024),
        setup.local_built,
        machine(),
    )
    .unwrap();
    writeln!(out, "| measure | cloud | local | target | met |").unwrap();
    writeln!(out, "|---|---:|---:|---|---|").unwrap();
    writeln!(
        out,
        "| MCP `ping` p50 (baseline; {} / {} round trips) | {} | {} | — | — |",
        c.pings.len(),
        local.pings.len(),
        ms(cloud_ping),
        ms(local_ping)
    )
    .unwrap();
    let (cached, cached_local) = (&c.rows[0], &local.rows[0]);
    writeln!(
        out,
        "| `jility_get_ticket`, same ticket (bridge cache) p50 | {} ({:.1}× ping) | {} ({:.1}× \
         ping) | ≤ {CACHED_GET_TARGET_RATIO}× ping p50 | {} |",
        ms(cached.p50),
        ratio(cached.p50, cloud_ping),
        ms(cached_local.p50),
        ratio(cached_local.p50, local_ping),
        met(ratio(cached.p50, cloud_ping) <= CACHED_GET_TARGET_RATIO)
    )
    .unwrap();
    for (row, local_row) in c.rows.iter().zip(&local.rows).skip(1) {
        let max = row.target_ms.unwrap();
        writeln!(
            out,
            "| {} p50 | {} | {} | ≤ {max} ms | {} |",
            row.label,
            ms(row.p50),
            ms(local_row.p50),
            under(row.p50, max)
        )
        .unwrap();
    }
    writeln!(
        out,
        "| REST `GET /search?q=` (same queries, 1 client) p50 | {} | — | ≤ {SEARCH_TARGET_MS} ms \
         | {} |",
        ms(cloud.rest_search.p50),
        under(cloud.rest_search.p50, SEARCH_TARGET_MS)
    )
    .unwrap();
    writeln!(
        out,
        "| REST `GET /tickets/{{KEY-N}}` (random, 1 client) p50 | {} | — | — | — |",
        ms(cloud.rest_get.p50)
    )
    .unwrap();
    let tp = &cloud.throughput;
    writeln!(
        out,
        "| REST `GET /tickets/{{KEY-N}}`, {CLIENTS} clients: requests/s | {:.0} | — | ≥ \
         {THROUGHPUT_TARGET:.0} | {} |",
        tp.per_second(),
        met(tp.per_second() >= THROUGHPUT_TARGET)
    )
    .unwrap();
    writeln!(
        out,
        "| … its latency p50 / p99 | {} / {} | — | p99 ≤ {THROUGHPUT_P99_TARGET_MS} ms | {} |",
        ms(tp.p50),
        ms(tp.p99),
        under(tp.p99, THROUGHPUT_P99_TARGET_MS)
    )
    .unwrap();
    let per_second = |l: &Load| (l.processes * LOAD_CREATES) as f64 / l.wall.as_secs_f64();
    writeln!(
        out,
        "| {LOAD_PROCESSES} writers × {LOAD_CREATES} `jility_create_ticket`: tickets/s | {:.0} | \
         {:.0} | — | — |",
        per_second(&c.load),
        per_second(&local.load)
    )
    .unwrap();
    writeln!(
        out,
        "| … create p50 / p99 under that load | {} / {} | {} / {} | — | — |",
        ms(c.load.p50),
        ms(c.load.p99),
        ms(local.load.p50),
        ms(local.load.p99)
    )
    .unwrap();
    writeln!(
        out,
        "| … none lost (every ticket listed once, pages of {PAGE}) | yes: {} in {} | yes: {} in \
         {} | none lost | yes |",
        c.verified.listed,
        ms_scaled(c.verified.took),
        local.verified.listed,
        ms_scaled(local.verified.took)
    )
    .unwrap();

    writeln!(
        out,
        "\nRatios to baselines measured in this run, on this machine:\n"
    )
    .unwrap();
    for line in cloud.ratio_lines() {
        writeln!(out, "- {line}").unwrap();
    }
    for line in cases.iter().flat_map(|case| &case.lines) {
        writeln!(out, "- {line}").unwrap();
    }

    // The details.
    writeln!(
        out,
        "\nLatency through MCP: {WARMUP} warm-up calls per case, then {ITERS} calls \
         ({ITERS_SEARCH} for search), each preceded by a `ping`; request sent to result decoded \
         by the rmcp client. Cloud: one bridge (`JILITY_MODE=cloud jility --mcp-server`, \
         stdio) to the API; local: `jility --mcp-server` on the SQLite database.\n"
    )
    .unwrap();
    writeln!(
        out,
        "| case | cloud p50 | cloud p99 | cloud p50 / ping | local p50 | local p99 | local p50 / \
         ping |\n|---|---:|---:|---:|---:|---:|---:|"
    )
    .unwrap();
    writeln!(
        out,
        "| `ping` | {} | {} | 1.0× | {} | {} | 1.0× |",
        ms(cloud_ping),
        ms(percentile(&c.pings, 0.99)),
        ms(local_ping),
        ms(percentile(&local.pings, 0.99))
    )
    .unwrap();
    for (row, local_row) in c.rows.iter().zip(&local.rows) {
        writeln!(
            out,
            "| {} | {} | {} | {:.1}× | {} | {} | {:.1}× |",
            row.label,
            ms(row.p50),
            ms(row.p99),
            ratio(row.p50, cloud_ping),
            ms(local_row.p50),
            ms(local_row.p99),
            ratio(local_row.p50, local_ping)
        )
        .unwrap();
    }
    let totals = &cloud.rest_search.totals;
    let mut sorted = totals.clone();
    sorted.sort_unstable();
    writeln!(
        out,
        "\nSearch queries: {} distinct queries of 1–2 words from the generator's vocabulary \
         (the stdio benchmark's {} among them), a different one each call, so the bridge's \
         cache never answers; matching tickets per query (measured ones): median {}, {} with \
         none, up to {} (a page holds 20). REST: the same queries, one client on a keep-alive \
         connection (p99 {}); random reads likewise p99 {}.",
        WARMUP + ITERS_SEARCH,
        QUERIES.len(),
        sorted[sorted.len() / 2],
        sorted.iter().filter(|t| **t == 0).count(),
        sorted.last().unwrap(),
        ms(cloud.rest_search.p99),
        ms(cloud.rest_get.p99),
    )
    .unwrap();
    let buckets = search_buckets(&cloud.rest_search);
    writeln!(
        out,
        "REST search latency by the number of matching tickets: {}.",
        buckets.join("; ")
    )
    .unwrap();
    let cached_vs_api = ratio(cached.p50, c.rows[1].p50);
    writeln!(
        out,
        "\nThe bridge's cache: the same ticket read again takes {:.0}% of a read the API \
         answers{}.",
        cached_vs_api * 100.0,
        if cached_vs_api > 0.5 {
            " — **the cache did not answer** (is the bridge following the event stream?)"
        } else {
            ""
        }
    )
    .unwrap();
    let shared = &cloud.shared_token;
    writeln!(
        out,
        "\nREST throughput: {CLIENTS} clients ({}; keep-alive connections, a token per \
         client or per wrk thread), each sending `GET /api/v1/tickets/{KEY}-N` for a random N \
         back to back; counted in a {:.0} s window after a {:.0} s warm-up: {} requests, all \
         answered 200. The same load from async reqwest clients, run right after, checked that \
         every answer names its ticket, and decoded one in {PARSE_EVERY} in full. Diagnostic, the same {CLIENTS} clients sharing one token (each request counts \
         against the token's rate-limit row in PostgreSQL): {:.0} requests/s, p50 {}, p99 {} \
         ({} answers checked).",
        cloud.generator,
        tp.window.as_secs_f64(),
        WARM_UP.as_secs_f64(),
        tp.requests,
        shared.per_second(),
        ms(shared.p50),
        ms(shared.p99),
        shared.checked,
    )
    .unwrap();
    if let Some(cpu) = &tp.cpu {
        writeln!(
            out,
            "\nWhere the CPUs went during that window (in CPUs, of {}): `jility serve` {:.2}, \
             PostgreSQL {:.2}, the load generator {:.2}, everything else the machine was running \
             {:.2}, idle {:.2}.",
            std::thread::available_parallelism().map_or(1, |n| n.get()),
            cpu.server,
            cpu.postgres,
            cpu.generator,
            cpu.rest,
            cpu.idle
        )
        .unwrap();
    }
    for (name, side, what, fresh) in [
        (
            "Cloud",
            c,
            "bridges (each with its own token)",
            "another bridge",
        ),
        (
            "Local",
            local,
            "`jility --mcp-server` processes on the same database",
            "another server",
        ),
    ] {
        writeln!(
            out,
            "\n{name} writers: {LOAD_PROCESSES} {what}, all started before the clock starts, \
             each sent {LOAD_CREATES} `jility_create_ticket` calls one after another, at the \
             same time as the others: {} in all; then, through {fresh}, paging through \
             every ticket with `jility_list_tickets` ({} pages of {PAGE}, {}) lists {} tickets \
             numbered {KEY}-1 to {KEY}-{} each once; the {} created at once are {KEY}-{} to \
             {KEY}-{} (contiguous), and each writer's {LOAD_CREATES} are listed under its \
             assignee.",
            ms_scaled(side.load.wall),
            side.verified.pages,
            ms_scaled(side.verified.took),
            side.verified.listed,
            side.verified.listed,
            LOAD_PROCESSES * LOAD_CREATES,
            side.verified.span.0,
            side.verified.span.1,
        )
        .unwrap();
    }
    writeln!(
        out,
        "\nBaselines: `pgbench` on the same PostgreSQL, in a scratch database of its own \
         (scale 10, initialized before the run), each run alone right before what it is \
         compared with: {}; {}. Two processes: a second `jility serve` on the run's \
         database, the {CLIENTS} readers split between the two, {:.0} requests/s \
         ({} answers checked). REST writers: {} clients, each its own token and \
         connection, one write after another with an `Idempotency-Key`, {:.0} s after a \
         {:.0} s warm-up: creates {KEY}-{} to {KEY}-{} ({} answers checked, contiguous), \
         then comments on random tickets ({} answers checked).",
        cloud.pg_select.summary(),
        cloud.pg_update.summary(),
        cloud.two_processes.per_second(),
        cloud.two_processes.checked,
        writes::WRITERS,
        MEASURE.as_secs_f64(),
        WARM_UP.as_secs_f64(),
        cloud.rest_creates.span.map_or(0, |s| s.0),
        cloud.rest_creates.span.map_or(0, |s| s.1),
        cloud.rest_creates.checked,
        cloud.rest_comments.checked,
    )
    .unwrap();
    for case in cases {
        writeln!(out, "\n{}", case.details.trim_end()).unwrap();
    }
    let memory = |m: Option<bench::Memory>| {
        m.map_or("?".to_string(), |m| {
            format!("{} (peak {})", mib(m.rss), mib(m.peak))
        })
    };
    writeln!(
        out,
        "\nMemory (VmRSS) after the runs: `jility serve` {}, the bridge {}, the local server {}.",
        memory(setup.server_memory),
        memory(c.memory),
        memory(local.memory),
    )
    .unwrap();
    let mut problems: Vec<String> = problems(&setup.server_log);
    problems.extend(c.problems.iter().cloned());
    problems.extend(local.problems.iter().cloned());
    if !problems.is_empty() {
        let shown: Vec<&str> = problems.iter().take(40).map(String::as_str).collect();
        writeln!(
            out,
            "\nProblems the processes reported on stderr ({} lines):\n```\n{}\n```",
            problems.len(),
            shown.join("\n")
        )
        .unwrap();
    }
    out
}
