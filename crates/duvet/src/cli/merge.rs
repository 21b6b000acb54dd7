//! `duvet merge --input A --input B … --output OUT`: v2 JSON reports (`duvet report
//! --json-v2`, or earlier merges) merged into one, as duvet 0.4.3 merges them
//! ([`crate::report::json_v2_merge`]). Every input is read and checked first; an input that
//! is not a v2 report, or inputs that conflict, fail the run (exit 1, one line on stderr) and
//! nothing is written. Metadata drift between citations is a warning on stderr.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::common::{fail, note};
use crate::report::{json_v2, json_v2_merge};

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// A v2 JSON report to merge (written by `duvet report --json-v2` or an earlier merge);
    /// repeat the flag for each input.
    #[arg(long, value_name = "FILE", required = true)]
    input: Vec<PathBuf>,

    /// Where to write the merged v2 JSON report.
    #[arg(long, value_name = "FILE")]
    output: PathBuf,
}

pub fn run(args: MergeArgs) -> ExitCode {
    let mut reports = Vec::with_capacity(args.input.len());
    for path in &args.input {
        match json_v2::read(path) {
            Ok(report) => reports.push(report),
            Err(e) => return fail(&[e]),
        }
    }
    let merged = match json_v2_merge::merge(reports, &mut |warning| note(&warning)) {
        Ok(merged) => merged,
        Err(e) => return fail(&[e]),
    };
    if let Err(e) = json_v2::write(&merged, &args.output) {
        return fail(&[e]);
    }
    ExitCode::SUCCESS
}
