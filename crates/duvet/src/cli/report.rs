//! `duvet report`: duvet 0.4.3's command, with its options and meaning. It reads the project
//! as `duvet mcp` does (the working directory's `.duvet/config.toml`, `--config-path`, or the
//! legacy flags), writes the reports asked for (`--json`, `--lcov`, and those the config
//! enables) and with `--ci` fails (exit 1) as 0.4.3 fails: a requirement line nobody cites,
//! a cited line nobody tests, or a snapshot that changed.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;

use super::common::{CargoFlags, fail, note};

use crate::config::{self, Flags, ProjectConfig};
use crate::execution::CoverageFormat;
use crate::model::{Model, Scope};
use crate::project::{self, FileCache};
use crate::report::executed::{Executions, Wanted};
use crate::report::{Report, Sources, ci, html, json, lcov, settings};

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The config file to read instead of .duvet/config.toml (relative to the working
    /// directory, which is the project's root).
    #[arg(long, value_name = "FILE")]
    config_path: Option<PathBuf>,

    /// Write the LCOV report into DIR (`compliance.N.lcov`, one per specification).
    #[arg(long, value_name = "DIR")]
    lcov: Option<PathBuf>,

    /// Write the JSON report (duvet 0.4.3's format) to FILE.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,

    /// Write the v2 JSON report (duvet 0.4.3's format, which `duvet merge` reads) to FILE.
    #[arg(long, value_name = "FILE")]
    json_v2: Option<PathBuf>,

    /// Write the HTML report (one self-contained page, no script) to FILE.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,

    /// Whether every line a requirement covers must be cited (default true).
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    require_citations: Option<bool>,

    /// Whether every cited line must be tested (default true).
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    require_tests: Option<bool>,

    /// Fail (exit 1) when the checks fail, or when a configured snapshot differs (default:
    /// off, or the CI environment variable when a snapshot is configured).
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    ci: Option<bool>,

    /// The link to the sources the HTML report uses (overrides [report.html] blob-link).
    #[arg(long, value_name = "URL")]
    blob_link: Option<String>,

    /// The link to issues the HTML report uses (overrides [report.html] issue-link).
    #[arg(long, value_name = "URL")]
    issue_link: Option<String>,

    /// Coverage report path(s), supports globs (relative to the working directory;
    /// repeatable): the HTML and JSON reports then say whether each requirement's
    /// implementation code ran (not duvet 0.4.3's; never read by --ci)
    #[arg(short = 'r', long, value_name = "GLOB")]
    coverage_report: Option<Vec<String>>,

    /// Coverage format: lcov or jacoco-xml (default: jacoco-xml when every
    /// --coverage-report ends with .xml, else lcov)
    #[arg(
        short = 'f',
        long,
        value_enum,
        value_name = "FORMAT",
        requires = "coverage_report"
    )]
    coverage_format: Option<CoverageFormat>,

    /// Legacy form (Duvet 0.1–0.3): source files to scan, optionally prefixed with their
    /// comment style, e.g. '(*=,*#)src/**/*.c' (repeatable).
    #[arg(long = "source-pattern", value_name = "GLOB")]
    source_patterns: Vec<String>,

    /// Legacy form: requirement TOML files (repeatable).
    #[arg(long = "spec-pattern", value_name = "GLOB")]
    spec_patterns: Vec<String>,

    /// Legacy form: the directory holding the specs/ download cache.
    #[arg(long, value_name = "DIR")]
    spec_path: Option<PathBuf>,

    #[command(flatten)]
    cargo: CargoFlags,
}

/// The specifications' text (bytes) from which the HTML page is made on a core of its own.
const PARALLEL_PAGE_TEXT: usize = 1 << 20;

/// Write `text` to `path` whole ([`crate::output`]).
fn write_file(path: &Path, text: &[u8]) -> Result<(), String> {
    crate::output::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}

pub fn run(args: ReportArgs) -> ExitCode {
    let root = match std::env::current_dir() {
        Ok(root) => root,
        Err(e) => return fail(&[format!("cannot read the working directory: {e}")]),
    };
    let flags = Flags {
        spec_patterns: args.spec_patterns.clone(),
        source_patterns: args.source_patterns.clone(),
        spec_path: args.spec_path.clone(),
        config: args.config_path.clone(),
    };
    let config = match config::load(&root, &flags) {
        Ok(config) => config,
        Err(e) => return fail(&[e.to_string()]),
    };
    let settings = match settings::load(config.config_file.as_deref(), &root) {
        Ok(settings) => settings,
        Err(e) => return fail(&[e]),
    };
    // The config's reports are written in the project only (a cloned project's config must
    // not overwrite a file elsewhere); the command line's go where they are asked to.
    for (table, path) in [
        ("html", &settings.html),
        ("json", &settings.json),
        ("snapshot", &settings.snapshot),
    ] {
        if let Some(path) = path
            && let Err(e) =
                crate::output::confine(&root, &root, path, &format!("[report.{table}] path"))
        {
            return fail(&[e]);
        }
    }
    let source_links = match settings::SourceLinks::load(&config) {
        Ok(links) => links,
        Err(e) => return fail(&[e]),
    };
    // duvet 0.4.3 first extracts the requirements of the declared specifications into
    // requirement files, which the report then reads with the project (the specifications
    // parsed once, through one cache, for both).
    let cache = FileCache::single_use();
    if let Err(errors) = super::extract::requirements(&config, &cache) {
        return fail(&errors);
    }
    let wanted = coverage_wanted(&args);
    // The model the report reads: the specifications, and the annotations it cannot read;
    // with coverage, all `duvet query` reads (the requirements and their citations too).
    let scope = match wanted {
        Some(_) => Scope::Full,
        None => Scope::Specifications,
    };
    let inputs = match super::common::inputs_downloading(&config, || {
        project::inputs_for(&config, &cache, scope)
    }) {
        Ok(inputs) => inputs,
        Err(errors) => return fail(&errors),
    };
    let sources = Sources::of(&root, &inputs);
    let model = Model::build_for(inputs, scope);
    let mut report = Report::build(&sources, &model);
    for entry in &mut report.entries {
        entry.blob_link = source_links.of(&entry.annotation).map(str::to_string);
    }
    for warning in report.warnings.iter().chain(&source_links.differences()) {
        note(&format!("warning: {warning}"));
    }
    if !report.errors.is_empty() {
        return fail(&report.errors);
    }
    // Read before any report is written: a report that cannot be read writes none.
    let executions = match executions(wanted.as_ref(), &root, &config, &sources, &model, &report) {
        Ok(executions) => executions,
        Err(e) => return fail(&[e]),
    };
    let require_citations = args.require_citations.unwrap_or(true);
    let require_tests = args.require_tests.unwrap_or(true);
    let blob_link = args.blob_link.clone().or(settings.blob_link.clone());
    let issue_link = args.issue_link.clone().or(settings.issue_link.clone());
    let ci = match args.ci {
        Some(ci) => ci,
        None if settings.snapshot.is_some() => {
            std::env::var("CI").is_ok_and(|v| !["false", "0"].contains(&v.as_str()))
        }
        None => false,
    };

    let mut jsons: Vec<&Path> = Vec::new();
    jsons.extend(args.json.as_deref());
    jsons.extend(settings.json.as_deref());
    let mut htmls: Vec<&Path> = Vec::new();
    htmls.extend(args.html.as_deref());
    htmls.extend(settings.html.as_deref());
    // The JSON reports written here while the HTML page and the snapshot are made on another
    // core (each from the same report, which nothing changes now), when the page is large
    // enough to be worth a thread: on a project of one RFC (h3), the two made in turn took
    // 5% less time than on two cores.
    let text: usize = report.targets.iter().map(|t| t.text.len()).sum();
    let parallel = !htmls.is_empty() && text >= PARALLEL_PAGE_TEXT;
    let (written, (page, expected)) = crate::par::both_if(
        parallel,
        || -> Result<(), String> {
            for path in jsons {
                let bytes = json::to_vec(
                    &report,
                    blob_link.as_deref(),
                    issue_link.as_deref(),
                    executions.as_ref(),
                );
                write_file(path, &bytes)?;
                note(&format!("Wrote {}", path.display()));
            }
            if let Some(path) = &args.json_v2 {
                let mut v2 = crate::report::json_v2::ReportV2::build(
                    &report,
                    &root,
                    blob_link.as_deref(),
                    issue_link.as_deref(),
                );
                if let Some(executions) = &executions {
                    executions.annotate_v2(&report, &mut v2);
                }
                crate::report::json_v2::write(&v2, path)?;
                note(&format!("Wrote {}", path.display()));
            }
            Ok(())
        },
        || {
            let page = (!htmls.is_empty()).then(|| {
                html::render_with(
                    &report,
                    blob_link.as_deref(),
                    issue_link.as_deref(),
                    executions.as_ref(),
                )
            });
            (
                page,
                settings.snapshot.as_ref().map(|_| ci::snapshot(&report)),
            )
        },
    );
    if let Err(e) = written {
        return fail(&[e]);
    }
    if let Some(page) = page {
        for path in htmls {
            if let Err(e) = write_file(path, page.as_bytes()) {
                return fail(&[e]);
            }
            note(&format!("Wrote {}", path.display()));
        }
    }
    if let Some(dir) = &args.lcov {
        for (name, text) in lcov::files(
            &report,
            &config.spec_cache_dir,
            require_citations,
            require_tests,
        ) {
            if let Err(e) = write_file(&dir.join(name), text.as_bytes()) {
                return fail(&[e]);
            }
        }
        note(&format!("Wrote {}", dir.display()));
    }
    if let (Some(path), Some(expected)) = (&settings.snapshot, expected) {
        if ci {
            let Ok(actual) = crate::output::read_to_string(path) else {
                return fail(&[format!(
                    "{}: Could not read report snapshot. This is required to enforce CI checks.",
                    path.display()
                )]);
            };
            if actual != expected {
                note(&format!("Differences detected in {}:", path.display()));
                note(&diff(&actual, &expected));
                return fail(&[format!(
                    "{}: Report snapshot does not match with CI mode enabled.",
                    path.display()
                )]);
            }
            note(&format!("Checked {}", path.display()));
        } else {
            if let Err(e) = write_file(path, expected.as_bytes()) {
                return fail(&[e]);
            }
            note(&format!("Wrote {}", path.display()));
        }
    } else if ci && let Some(message) = ci::check(&report, require_citations, require_tests) {
        let _ = fail(&[message.to_string()]);
        note(
            "hint: list_uncited_requirements and list_untested_citations of `duvet mcp` name \
             the lines; --require-citations false or --require-tests false relax the check",
        );
        return ExitCode::FAILURE;
    }
    std::mem::forget((report, model, sources));
    ExitCode::SUCCESS
}

/// The coverage reports `--coverage-report` and `--coverage-format` name, if any.
fn coverage_wanted(args: &ReportArgs) -> Option<Wanted> {
    let patterns = args.coverage_report.clone().filter(|p| !p.is_empty())?;
    let format = args
        .coverage_format
        .unwrap_or_else(|| CoverageFormat::for_patterns(&patterns));
    Some(Wanted { patterns, format })
}

/// The executed state of the report's requirements in the coverage reports `wanted`, read as
/// `duvet query` reads them (relative to `root`, the working directory).
fn executions(
    wanted: Option<&Wanted>,
    root: &Path,
    config: &ProjectConfig,
    sources: &Sources,
    model: &Model,
    report: &Report,
) -> Result<Option<Executions>, String> {
    let Some(wanted) = wanted else {
        return Ok(None);
    };
    let executions = Executions::load(root, config, sources, model, report, wanted)?;
    note(&format!(
        "Read {} coverage report{} ({})",
        executions.reports.len(),
        if executions.reports.len() == 1 {
            ""
        } else {
            "s"
        },
        wanted.format.name()
    ));
    Ok(Some(executions))
}

/// The lines that differ between the snapshot on disk and the project's, `-` and `+`.
fn diff(actual: &str, expected: &str) -> String {
    let old: Vec<&str> = actual.lines().collect();
    let new: Vec<&str> = expected.lines().collect();
    let mut out = Vec::new();
    let old_set: std::collections::HashSet<&str> = old.iter().copied().collect();
    let new_set: std::collections::HashSet<&str> = new.iter().copied().collect();
    out.extend(
        old.iter()
            .filter(|l| !new_set.contains(*l))
            .map(|l| format!("-{l}")),
    );
    out.extend(
        new.iter()
            .filter(|l| !old_set.contains(*l))
            .map(|l| format!("+{l}")),
    );
    out.join("\n")
}
