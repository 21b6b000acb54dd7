//! `duvet report` on a real project against duvet 0.4.3's, paired run by run.
//!
//! Copies the project `DUVET_BENCH_PROJECT` twice (one copy for each tool, as each writes its
//! requirement files and reports there), then runs ours and 0.4.3's (`DUVET_043_BIN`) in
//! turn, `DUVET_BENCH_RUNS` pairs (default 40), the order alternating, and prints for each
//! state the median wall time of each and the median (p25–p75) of the pairs' ratios:
//!
//! * **warm**: the project as the previous run left it (requirement files extracted);
//! * **fresh**: `.duvet/requirements` removed before each run (a fresh checkout that keeps none),
//!   the removal not timed.
//!
//! A run is timed from the spawn of the process to its exit, its output thrown away; the
//! process's directory is the copy (`duvet report` reads the working directory). The
//! arguments after `report` are `DUVET_BENCH_ARGS` (split at spaces) and `--json <copy>/bench.json`;
//! the two JSON files are compared byte for byte after each state.
//!
//! Run: `DUVET_043_BIN=~/.cargo/bin/duvet DUVET_BENCH_PROJECT=../h3 cargo bench -p duvet --bench report_pairs`

// The benchmark reports to the terminal and aborts on any setup failure.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::print_stderr
)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mcp_testkit::bench::percentile;

fn main() {
    let (Some(theirs), Some(project)) = (
        std::env::var_os("DUVET_043_BIN"),
        std::env::var_os("DUVET_BENCH_PROJECT"),
    ) else {
        println!("skipped: set DUVET_043_BIN (duvet 0.4.3) and DUVET_BENCH_PROJECT (a project)");
        return;
    };
    let ours = PathBuf::from(env!("CARGO_BIN_EXE_duvet"));
    let theirs = PathBuf::from(theirs);
    let runs: usize = std::env::var("DUVET_BENCH_RUNS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(40);
    let args: Vec<String> = std::env::var("DUVET_BENCH_ARGS")
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_string)
        .collect();
    let scratch = tempfile::tempdir().unwrap();
    let copy = |name: &str| {
        let dir = scratch.path().join(name);
        let status = Command::new("cp")
            .arg("-a")
            .arg(&project)
            .arg(&dir)
            .status()
            .unwrap();
        assert!(status.success(), "cp -a {project:?}");
        dir
    };
    let (ours_dir, theirs_dir) = (copy("ours"), copy("theirs"));
    println!(
        "{} against {} on {}, {runs} pairs\n",
        ours.display(),
        theirs.display(),
        Path::new(&project).display()
    );
    println!("| state | ours p50 | 0.4.3 p50 | ours / 0.4.3 (p25–p75) |\n|---|---:|---:|---:|");
    for state in ["warm", "fresh"] {
        let run = |bin: &Path, dir: &Path| -> Duration {
            if state == "fresh" {
                let _ = std::fs::remove_dir_all(dir.join(".duvet/requirements"));
            }
            let started = Instant::now();
            let status = Command::new(bin)
                .arg("report")
                .args(&args)
                .arg("--json")
                .arg(dir.join("bench.json"))
                .current_dir(dir)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .unwrap();
            let took = started.elapsed();
            assert!(
                status.success(),
                "{} report in {}",
                bin.display(),
                dir.display()
            );
            took
        };
        // One run each first: the requirement files extracted, the files in the page cache.
        run(&ours, &ours_dir);
        run(&theirs, &theirs_dir);
        let (mut a, mut b, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
        for i in 0..runs {
            let (x, y) = if i % 2 == 0 {
                let x = run(&ours, &ours_dir);
                (x, run(&theirs, &theirs_dir))
            } else {
                let y = run(&theirs, &theirs_dir);
                (run(&ours, &ours_dir), y)
            };
            a.push(x);
            b.push(y);
            // In millionths, to sort as integers.
            ratios.push((x.as_secs_f64() / y.as_secs_f64() * 1e6) as u64);
        }
        let json = |dir: &Path| std::fs::read(dir.join("bench.json")).unwrap();
        let same = if json(&ours_dir) == json(&theirs_dir) {
            ""
        } else {
            " (the JSON reports differ)"
        };
        println!(
            "| {state} | {:.2} ms | {:.2} ms | **{:.3}** ({:.3}–{:.3}){same} |",
            percentile(&a, 0.5).as_secs_f64() * 1e3,
            percentile(&b, 0.5).as_secs_f64() * 1e3,
            percentile(&ratios, 0.5) as f64 / 1e6,
            percentile(&ratios, 0.25) as f64 / 1e6,
            percentile(&ratios, 0.75) as f64 / 1e6,
        );
    }
}
