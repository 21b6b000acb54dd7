//! The ratio lines of the cloud benchmark: each figure beside its baseline measured in the
//! same run on the same machine, with its target and PASS or FAIL. Printed as they come
//! (`JILITY_BENCH_ONLY=rest`, `=writes`) and in the full run's report.

use super::*;

/// REST GET throughput at least this share of `pgbench -S` with as many clients.
pub const GET_VS_PGBENCH_TARGET: f64 = 0.50;
/// The REST GET throughput's p99 at most this many times its p50.
pub const GET_TAIL_TARGET: f64 = 4.0;
/// Search p50 of the queries with many matches at most this many times that of the queries
/// with few.
pub const SEARCH_SPREAD_TARGET: f64 = 2.0;
/// More matches than this: "many".
pub const MANY_MATCHES: u64 = 20_000;
/// At most this many matches: "few".
pub const FEW_MATCHES: u64 = 1_000;

fn verdict(ok: bool) -> &'static str {
    if ok { "PASS" } else { "FAIL" }
}

fn ratio(a: Duration, b: Duration) -> f64 {
    a.as_secs_f64() / b.as_secs_f64()
}

/// REST GET throughput against `pgbench -S` with as many clients, and its tail.
pub fn get_line(tp: &Throughput, pg: &PgBenchRun, generator: &str) -> String {
    get_line_of("GET /api/v1/tickets/{KEY-N}", tp, pg, generator)
}

/// [`get_line`] of a case: `what` names it.
pub fn get_line_of(what: &str, tp: &Throughput, pg: &PgBenchRun, generator: &str) -> String {
    let share = tp.per_second() / pg.tps;
    let tail = ratio(tp.p99, tp.p50);
    // A share under 10% with a decimal (the cases that fail by far).
    let shown = if share < 0.1 {
        format!("{:.1}", share * 100.0)
    } else {
        format!("{:.0}", share * 100.0)
    };
    format!(
        "{what}, {CLIENTS} clients ({generator}): {:.0} req/s = {shown}% of pgbench -S -c \
         {CLIENTS} ({:.0} tps) [target ≥ {:.0}%]: {}; p99 {} = {tail:.1}× its p50 ({}) [target \
         ≤ {GET_TAIL_TARGET:.0}×]: {}",
        tp.per_second(),
        pg.tps,
        GET_VS_PGBENCH_TARGET * 100.0,
        verdict(share >= GET_VS_PGBENCH_TARGET),
        ms(tp.p99),
        ms(tp.p50),
        verdict(tail <= GET_TAIL_TARGET),
    )
}

/// The p50 of the searches whose `total` is in `range`, and how many they are.
fn search_p50(search: &Sequential, range: impl Fn(u64) -> bool) -> Option<(Duration, usize)> {
    let samples: Vec<Duration> = search
        .totals
        .iter()
        .zip(&search.samples)
        .filter(|(t, _)| range(**t))
        .map(|(_, d)| *d)
        .collect();
    (!samples.is_empty()).then(|| (percentile(&samples, 0.50), samples.len()))
}

/// Search latency of the first page, queries with many matches against queries with few.
pub fn search_line(search: &Sequential) -> String {
    let many = search_p50(search, |t| t > MANY_MATCHES);
    let few = search_p50(search, |t| t <= FEW_MATCHES);
    let (Some((many, n_many)), Some((few, n_few))) = (many, few) else {
        return format!(
            "search p50 for > 20,000 matches / p50 for ≤ 1,000 matches: not measured, no query \
             {} [target ≤ {SEARCH_SPREAD_TARGET:.0}×]: FAIL",
            if many.is_none() {
                "with more than 20,000 matches"
            } else {
                "with at most 1,000 matches"
            }
        );
    };
    let spread = ratio(many, few);
    format!(
        "search p50 for > 20,000 matches / p50 for ≤ 1,000 matches = {spread:.1}× [target ≤ \
         {SEARCH_SPREAD_TARGET:.0}×]: {} ({n_many} queries, p50 {}; {n_few} queries, p50 {})",
        verdict(spread <= SEARCH_SPREAD_TARGET),
        ms(many),
        ms(few),
    )
}

/// Writes per second of 4 writers against `pgbench -N` with as many clients (no target).
pub fn write_line(
    what: &str,
    per_second: f64,
    p50: Duration,
    p99: Duration,
    pg: &PgBenchRun,
) -> String {
    format!(
        "writes, {} writers, {what}: {per_second:.0} writes/s = {:.1}% of pgbench -N -c {} ({:.0} \
         tps); p50 {}, p99 {}",
        writes::WRITERS,
        per_second / pg.tps * 100.0,
        writes::WRITERS,
        pg.tps,
        ms(p50),
        ms(p99),
    )
}

/// The REST writes' lines, then the MCP creates' (through the bridges) if measured.
pub fn writes_lines(pg: &PgBenchRun, rest: &[&Writes], mcp: Option<&Load>) -> Vec<String> {
    let mut lines: Vec<String> = rest
        .iter()
        .map(|w| write_line(w.write.label(), w.per_second(), w.p50, w.p99, pg))
        .collect();
    if let Some(load) = mcp {
        let per_second = (load.processes * LOAD_CREATES) as f64 / load.wall.as_secs_f64();
        lines.push(write_line(
            &format!(
                "`jility_create_ticket` through {} bridges ({LOAD_CREATES} each)",
                load.processes
            ),
            per_second,
            load.p50,
            load.p99,
            pg,
        ));
    }
    lines
}

/// Two processes on one database against one.
pub fn two_process_line(one: &Throughput, two: &Throughput) -> String {
    let half = CLIENTS / 2;
    format!(
        "GET /api/v1/tickets/{{KEY-N}}, {CLIENTS} clients on 2 `jility serve` processes ({half} + \
         {half}), one database: {:.0} req/s = {:.2}× one process's {:.0} req/s; p50 {}, p99 {} \
         (one process: p50 {}, p99 {})",
        two.per_second(),
        two.per_second() / one.per_second(),
        one.per_second(),
        ms(two.p50),
        ms(two.p99),
        ms(one.p50),
        ms(one.p99),
    )
}

/// The rate limit shared by two processes.
pub fn rate_line(check: &RateCheck) -> String {
    use shared::{LIMIT, SENDERS, SENT, TOLERANCE};
    format!(
        "rate limit {LIMIT}/min shared by 2 processes, one token each run, {SENT} requests in \
         {:.1} s: alternating between the processes one at a time, {} allowed and {} refused \
         (429); from {SENDERS} senders at once (half on each), {} allowed and {} refused \
         [target {LIMIT} to {} allowed, tolerance {TOLERANCE}]: {}",
        check.took.as_secs_f64(),
        check.alternating.0,
        check.alternating.1,
        check.concurrent.0,
        check.concurrent.1,
        LIMIT + TOLERANCE,
        verdict(check.met()),
    )
}
