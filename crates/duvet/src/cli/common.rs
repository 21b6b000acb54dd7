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

/// Print an error as duvet does (one line each) and fail. The password of a URL in a
/// message is never printed, nor a control character taken from the input ([`shown`]).
pub(super) fn fail(errors: &[String]) -> ExitCode {
    let mut err = std::io::stderr().lock();
    for e in errors {
        let _ = writeln!(err, "error: {}", shown(e));
    }
    ExitCode::FAILURE
}

pub(super) fn note(message: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{}", shown(message));
}

/// `message` as printed: passwords replaced ([`crate::download::redact`]) and control
/// characters but line feed and tab escaped (`\u{1b}`), so that a file, a server or a
/// project cannot send the terminal escape sequences through an error that quotes it.
fn shown(message: &str) -> String {
    let message = crate::download::redact(message);
    if !message
        .chars()
        .any(|c| c.is_control() && c != '\n' && c != '\t')
    {
        return message;
    }
    message
        .chars()
        .map(|c| {
            if c.is_control() && c != '\n' && c != '\t' {
                c.escape_debug().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// Download the URL specifications among `sources` whose text is not in the download cache
/// yet, as 0.4.3 does before it reads them ([`crate::download`]), saying what it fetched.
pub(super) fn download_specs<'a>(
    config: &crate::config::ProjectConfig,
    sources: impl IntoIterator<Item = &'a str>,
) -> Result<(), Vec<String>> {
    let downloads: Vec<crate::download::Download> = sources
        .into_iter()
        .map(str::trim)
        .filter(|source| source.starts_with("https://") || source.starts_with("http://"))
        .filter_map(|source| {
            let file = crate::project::spec_file(config, source).ok()?;
            let (spec, _) = crate::config::target_parts(source);
            Some(crate::download::Download {
                source: spec.clone(),
                url: crate::config::canonical_url(&spec),
                shown: crate::project::shown(config, &file),
                file,
                root: config.root.clone(),
                cache_dir: config.spec_cache_dir.clone(),
            })
        })
        .collect();
    for line in crate::download::fetch_missing(downloads)? {
        note(&line);
    }
    Ok(())
}

/// The project's inputs made by `build`, after downloading the URL specifications its
/// annotations name that are not cached yet (then made again, which a cached project never
/// pays for). Nothing is downloaded unless `ready` says the run can go on (a report's
/// requirement files written); else no inputs, and no error of its own.
pub(super) fn inputs_downloading(
    config: &crate::config::ProjectConfig,
    build: impl Fn() -> crate::model::Inputs,
    ready: impl Fn() -> bool,
) -> Result<crate::model::Inputs, Vec<String>> {
    let inputs = build();
    let missing: Vec<&str> = inputs
        .specs
        .iter()
        .filter(|s| s.parsed.is_err() && s.source.contains("://") && !s.file.exists())
        .map(|s| s.source.as_str())
        .collect();
    if missing.is_empty() {
        return Ok(inputs);
    }
    if !ready() {
        return Err(Vec::new());
    }
    download_specs(config, missing)?;
    Ok(build())
}
