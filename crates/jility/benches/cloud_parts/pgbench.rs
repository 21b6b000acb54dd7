//! The baseline of the cloud benchmark's ratios: `pgbench` on the same PostgreSQL server, in a
//! scratch database of its own (`jility_bench_pgbench_<pid>`, `pgbench -i -s 10 -q`: 1,000,000
//! accounts), dropped at the end, also when the run fails (and, like the run's copy, when a
//! killed run left it). Each run is one `pgbench` invocation, never at the same time as
//! anything measured: its transactions per second (excluding connection time, as pgbench
//! counts them) and, from a per-transaction log of a sample of them (`-l --sampling-rate`,
//! written to a temporary directory), its latency p50 and p99.

use super::*;

/// The scale of the scratch database (`pgbench -i -s`).
const SCALE: &str = "10";
/// The share of transactions logged for the percentiles (a small one: logging costs
/// pgbench a little).
const SAMPLING_RATE: &str = "0.1";
/// The prefix of the scratch databases.
const PREFIX: &str = "jility_bench_pgbench_";

/// The `pgbench` to run: `JILITY_BENCH_PGBENCH`, else the one on `PATH`, else PostgreSQL's
/// own directory's (Debian's layout), newest first.
fn binary() -> PathBuf {
    if let Some(path) = std::env::var_os("JILITY_BENCH_PGBENCH").filter(|p| !p.is_empty()) {
        return PathBuf::from(path);
    }
    if let Some(path) = on_path("pgbench") {
        return path;
    }
    let mut installed: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join("bin").join("pgbench"))
        .filter(|p| p.is_file())
        .collect();
    installed.sort_by_key(|p| {
        let version = p
            .iter()
            .rev()
            .nth(2)
            .and_then(|v| v.to_str()?.parse::<u32>().ok());
        std::cmp::Reverse(version)
    });
    installed.into_iter().next().unwrap_or_else(|| {
        panic!(
            "no pgbench (the ratios' baseline): install PostgreSQL's client tools or set \
             JILITY_BENCH_PGBENCH"
        )
    })
}

/// The scratch database, dropped (connections and all) when it goes out of scope.
pub struct PgBench {
    bin: PathBuf,
    name: String,
    url: String,
    /// What `pgbench -i` took.
    pub initialized: Duration,
}

/// One `pgbench` run.
pub struct PgBenchRun {
    /// The options, as given (`-S -c 32 -j 2 -T 10 -n`).
    pub options: String,
    pub tps: f64,
    pub transactions: u64,
    pub latency_average_ms: f64,
    /// From the sampled per-transaction log.
    pub p50: Duration,
    pub p99: Duration,
    pub sampled: usize,
}

impl PgBench {
    /// Create the scratch database and fill it (`pgbench -i -s 10 -q`).
    pub fn init() -> Self {
        let bin = binary();
        let name = format!("{PREFIX}{}", std::process::id());
        let mut admin = connect_admin();
        // Left by runs that were killed (their process is gone), and any of this pid.
        let left = admin
            .query(
                "SELECT datname FROM pg_database WHERE datname LIKE 'jility\\_bench\\_pgbench\\_%'",
                &[],
            )
            .unwrap();
        for row in left {
            let stale: String = row.get(0);
            let pid = stale.trim_start_matches(PREFIX);
            if stale == name || !Path::new("/proc").join(pid).exists() {
                eprintln!("dropping {stale}, left by an earlier run");
                admin
                    .batch_execute(&format!("DROP DATABASE IF EXISTS {stale} WITH (FORCE)"))
                    .unwrap();
            }
        }
        admin
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .unwrap();
        drop(admin);
        let url = with_database(&admin_url(), &name);
        // Dropped from here on, whatever happens.
        let mut pgbench = Self {
            bin,
            name,
            url,
            initialized: Duration::ZERO,
        };
        let t = Instant::now();
        let out = pgbench
            .command(&["-i", "-s", SCALE, "-q"])
            .output()
            .unwrap();
        stdout_of(&format!("pgbench -i -s {SCALE} -q"), &out);
        pgbench.initialized = t.elapsed();
        eprintln!(
            "pgbench: {} initialized at scale {SCALE} in {:.1?} ({})",
            pgbench.name,
            pgbench.initialized,
            pgbench.bin.display()
        );
        pgbench
    }

    /// `pgbench` with `options` on the scratch database (its URL last, as the database).
    fn command(&self, options: &[&str]) -> Command {
        let mut command = Command::new(&self.bin);
        command
            .args(options)
            .arg(&self.url)
            .stdin(Stdio::null())
            .env_remove("PGOPTIONS");
        command
    }

    /// Run `pgbench <options> -l --sampling-rate …` and read what it measured.
    pub fn run(&self, options: &str) -> PgBenchRun {
        let logs = temp_dir("jility-pgbench-");
        let prefix = logs.path().join("pgbench_log");
        let mut args: Vec<&str> = options.split_whitespace().collect();
        args.extend([
            "-l",
            "--sampling-rate",
            SAMPLING_RATE,
            "--log-prefix",
            prefix.to_str().unwrap(),
        ]);
        let out = self.command(&args).output().unwrap();
        let stdout = stdout_of(&format!("pgbench {options}"), &out);
        let field = |prefix: &str| -> f64 {
            stdout
                .lines()
                .find_map(|l| l.trim().strip_prefix(prefix))
                .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
                .unwrap_or_else(|| panic!("pgbench {options} printed no `{prefix}`: {stdout}"))
        };
        let tps = field("tps = ");
        let latency_average_ms = field("latency average = ");
        let transactions = field("number of transactions actually processed: ") as u64;
        let failed = stdout
            .lines()
            .find_map(|l| l.trim().strip_prefix("number of failed transactions: "))
            .and_then(|rest| rest.split_whitespace().next()?.parse::<u64>().ok())
            .unwrap_or(0);
        assert_eq!(
            failed, 0,
            "pgbench {options}: failed transactions: {stdout}"
        );
        // `client_id transaction_no time_us script_no time_epoch time_us …` per line, in one
        // file per thread.
        let mut samples = Vec::new();
        for entry in std::fs::read_dir(logs.path()).unwrap().flatten() {
            let text = std::fs::read_to_string(entry.path()).unwrap();
            samples.extend(text.lines().filter_map(|line| {
                let micros: u64 = line.split_whitespace().nth(2)?.parse().ok()?;
                Some(Duration::from_micros(micros))
            }));
        }
        assert!(!samples.is_empty(), "pgbench {options} logged nothing");
        PgBenchRun {
            options: options.to_string(),
            tps,
            transactions,
            latency_average_ms,
            p50: percentile(&samples, 0.50),
            p99: percentile(&samples, 0.99),
            sampled: samples.len(),
        }
    }
}

impl Drop for PgBench {
    fn drop(&mut self) {
        drop_database(&self.name);
    }
}

impl PgBenchRun {
    /// `pgbench -S -c 32 … (N tps, p50 …, p99 …)`, as the ratio lines quote it.
    pub fn summary(&self) -> String {
        format!(
            "`pgbench {}`: {:.0} tps, latency average {:.2} ms, p50 {} p99 {} ({} of {} \
             transactions sampled)",
            self.options,
            self.tps,
            self.latency_average_ms,
            ms(self.p50),
            ms(self.p99),
            self.sampled,
            self.transactions
        )
    }
}
