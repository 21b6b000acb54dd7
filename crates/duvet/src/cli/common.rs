//! What the commands share: 0.4.3's ignored cargo flags, and its way of printing errors and
//! notes (on stderr; stdout stays the reports').

use std::io::Write;
use std::process::ExitCode;

use clap::Args;

/// Flags of Duvet 0.1–0.3's cargo integration: accepted and ignored, as 0.4.3 does.
#[derive(Debug, Args)]
pub(super) struct CargoFlags {
    #[arg(long, short = 'p', hide = true)]
    package: Option<String>,
    #[arg(long, hide = true)]
    features: Vec<String>,
    #[arg(long, hide = true)]
    workspace: bool,
    #[arg(long = "exclude", hide = true)]
    excludes: Vec<String>,
    #[arg(long = "all-features", hide = true)]
    all_features: bool,
    #[arg(long = "no-default-features", hide = true)]
    no_default_features: bool,
    #[arg(long = "no-cargo", hide = true)]
    no_cargo: bool,
    #[arg(long, hide = true)]
    target: Option<String>,
    #[arg(long = "target-dir", hide = true)]
    target_dir: Option<String>,
    #[arg(long = "manifest-path", hide = true)]
    manifest_path: Option<String>,
}

/// Print an error as duvet does (one line each) and fail.
pub(super) fn fail(errors: &[String]) -> ExitCode {
    let mut err = std::io::stderr().lock();
    for e in errors {
        let _ = writeln!(err, "error: {e}");
    }
    ExitCode::FAILURE
}

pub(super) fn note(message: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{message}");
}
