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
    let wanted = coverage_wanted(&args);
    let blob_link = args.blob_link.clone().or(settings.blob_link.clone());
    let issue_link = args.issue_link.clone().or(settings.issue_link.clone());
    let mut jsons: Vec<&Path> = Vec::new();
    jsons.extend(args.json.as_deref());
    jsons.extend(settings.json.as_deref());
    let mut htmls: Vec<&Path> = Vec::new();
    htmls.extend(args.html.as_deref());
    htmls.extend(settings.html.as_deref());
    // duvet 0.4.3 first extracts the requirements of the declared specifications into
    // requirement files, which the report then reads with the project (the specifications
    // parsed once, through one cache, for both). Here the files of the patterns clear of
    // where the extraction writes are read meanwhile, and the requirement files are written
    // while the report is made (which knows what they hold); a report is written only once
    // they are.
    let cache = FileCache::single_use();
    let written = super::extract::written_dirs(&config);
    let (extraction, ahead) = crate::par::both(
        || super::extract::requirements_ahead(&config, &cache),
        || project::read_ahead(&config, &cache, &written),
    );
    let ci = match args.ci {
        Some(ci) => ci,
        None if settings.snapshot.is_some() => {
            std::env::var("CI").is_ok_and(|v| !["false", "0"].contains(&v.as_str()))
        }
        None => false,
    };
    // A snapshot is compared in CI, else written.
    let snapshot_file = settings.snapshot.as_deref().filter(|_| !ci);
    let wants = Wants {
        scope: match wanted {
            // The model the report reads: the specifications, and the annotations it cannot
            // read; with coverage, all `duvet query` reads (the requirements and their
            // citations too).
            Some(_) => Scope::Full,
            None => Scope::Specifications,
        },
        coverage: wanted.as_ref(),
        files: Files {
            jsons: &jsons,
            htmls: &htmls,
            snapshot: snapshot_file,
        },
        snapshot_path: settings.snapshot.as_deref(),
        ci,
        blob_link: blob_link.as_deref(),
        issue_link: issue_link.as_deref(),
    };
    // A failed extraction fails the report before it is made (nothing more is read or
    // downloaded), once the files it could make are written; so does one whose files a
    // reading of the project meanwhile could tell from written ones (a pattern that matches
    // them or their temporary files). Else they are written while the report is made.
    let pending: Vec<&Path> = extraction.pending().collect();
    let extraction = if extraction.failed() || ahead.sees_writes(&pending) {
        if let Err(errors) = extraction.finish() {
            return fail(&errors);
        }
        None
    } else {
        Some(extraction)
    };
    report(
        &args,
        &root,
        &config,
        &cache,
        ahead,
        &source_links,
        &wants,
        extraction,
    )
}

/// The rest of [`run`]: make the report from the project (`ahead` read already) while
/// `extraction`'s requirement files are written, then write the report's files once those
/// are.
#[expect(clippy::too_many_arguments, reason = "run's state, handed on once")]
fn report(
    args: &ReportArgs,
    root: &Path,
    config: &ProjectConfig,
    cache: &FileCache,
    ahead: project::ReadAhead,
    source_links: &settings::SourceLinks,
    wants: &Wants,
    extraction: Option<super::extract::Extraction>,
) -> ExitCode {
    // Written once, by whichever asks first: the other half of the work below, or the report
    // before it downloads (a download is not made for a report that fails) and reads the
    // project again (which then reads them from disk).
    let extraction = std::sync::Mutex::new(extraction);
    let written = std::sync::OnceLock::new();
    let write = || {
        written
            .get_or_init(|| {
                let extraction = extraction.lock().ok().and_then(|mut e| e.take());
                extraction.map_or(Ok(()), super::extract::Extraction::finish)
            })
            .is_ok()
    };
    let (made, _) = crate::par::both(
        || make(root, config, cache, ahead, source_links, wants, &write),
        write,
    );
    if let Some(Err(errors)) = written.into_inner() {
        return fail(&errors);
    }
    let Made {
        sources,
        model,
        report,
        executions,
        json,
        page,
        snapshot: expected,
        warnings,
        held,
    } = match made {
        Ok(made) => made,
        Err(Failure { warnings, errors }) => {
            for warning in &warnings {
                note(&format!("warning: {warning}"));
            }
            return fail(&errors);
        }
    };
    for warning in &warnings {
        note(&format!("warning: {warning}"));
    }
    if !report.errors.is_empty() {
        return fail(&report.errors);
    }
    let require_citations = args.require_citations.unwrap_or(true);
    let require_tests = args.require_tests.unwrap_or(true);
    // A file that held its bytes when the report was made is left alone.
    let write_file = |path: &Path, bytes: &[u8]| {
        if held.iter().any(|h| h == path) {
            Ok(())
        } else {
            write_file(path, bytes)
        }
    };
    if let Some(bytes) = json {
        for path in wants.files.jsons {
            if let Err(e) = write_file(path, &bytes) {
                return fail(&[e]);
            }
            note(&format!("Wrote {}", path.display()));
        }
    }
    if let Some(path) = &args.json_v2 {
        let mut v2 = crate::report::json_v2::ReportV2::build(
            &report,
            root,
            wants.blob_link,
            wants.issue_link,
        );
        if let Some(executions) = &executions {
            executions.annotate_v2(&report, &mut v2);
        }
        if let Err(e) = crate::report::json_v2::write(&v2, path) {
            return fail(&[e]);
        }
        note(&format!("Wrote {}", path.display()));
    }
    if let Some(page) = page {
        for path in wants.files.htmls {
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
    if let (Some(path), Some(expected)) = (wants.snapshot_path, expected) {
        if wants.ci {
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
    } else if wants.ci
        && let Some(message) = ci::check(&report, require_citations, require_tests)
    {
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

/// What the report is made with and into.
#[derive(Clone, Copy)]
struct Wants<'a> {
    scope: Scope,
    coverage: Option<&'a Wanted>,
    /// Where they go: which of them already hold their bytes is asked while the others are
    /// made.
    files: Files<'a>,
    /// The configured snapshot, checked (`--ci`) or written.
    snapshot_path: Option<&'a Path>,
    ci: bool,
    blob_link: Option<&'a str>,
    issue_link: Option<&'a str>,
}

/// The files the report writes (the snapshot only when it is written, not checked).
#[derive(Clone, Copy)]
struct Files<'a> {
    jsons: &'a [&'a Path],
    htmls: &'a [&'a Path],
    snapshot: Option<&'a Path>,
}

/// Why [`make`] made no report, with the warnings it had for the project.
struct Failure {
    warnings: Vec<String>,
    errors: Vec<String>,
}

/// The report made ([`make`]), with what it is made from and the texts to write.
struct Made {
    sources: Sources,
    model: Model,
    report: Report,
    executions: Option<Executions>,
    json: Option<Vec<u8>>,
    page: Option<String>,
    snapshot: Option<String>,
    warnings: Vec<String>,
    /// The files that already hold what they would be written.
    held: Vec<PathBuf>,
}

/// Read the project (some of its files already read: `ahead`), build the report and make
/// the texts `wants` asks for; nothing is written. The JSON is made while the HTML page and
/// the snapshot are made on another core, when one is free (each from the same report,
/// which nothing changes now). `written` writes the requirement files, or waits until they
/// are: a second reading of the project (after a download) reads them from disk.
fn make(
    root: &Path,
    config: &ProjectConfig,
    cache: &FileCache,
    ahead: project::ReadAhead,
    source_links: &settings::SourceLinks,
    wants: &Wants,
    written: &(dyn Fn() -> bool + Sync),
) -> Result<Made, Failure> {
    let ahead = std::cell::Cell::new(Some(ahead));
    let inputs = super::common::inputs_downloading(
        config,
        || project::inputs_with(config, cache, wants.scope, ahead.take()),
        written,
    )
    .map_err(|errors| Failure {
        warnings: Vec::new(),
        errors,
    })?;
    let text: usize = inputs
        .specs
        .iter()
        .filter_map(|s| s.parsed.as_ref().ok())
        .map(|p| p.text.len())
        .sum();
    if text >= crate::memory::LARGE_TEXT {
        crate::memory::huge_pages(true);
    }
    let sources = Sources::of(root, &inputs);
    let model = Model::build_for(inputs, wants.scope);
    let mut report = Report::build(&sources, &model);
    for entry in &mut report.entries {
        entry.blob_link = source_links.of(&entry.annotation).map(str::to_string);
    }
    let mut warnings = report.warnings.clone();
    warnings.extend(source_links.differences());
    // Read before any report is written: a report that cannot be read writes none.
    let executions = if report.errors.is_empty() {
        match executions(wants.coverage, root, config, &sources, &model, &report) {
            Ok(executions) => executions,
            Err(e) => {
                return Err(Failure {
                    warnings,
                    errors: vec![e],
                });
            }
        }
    } else {
        None
    };
    // A report with errors is not written.
    let writing = report.errors.is_empty();
    let held = |paths: &[&Path], bytes: &[u8]| -> Vec<PathBuf> {
        paths
            .iter()
            .filter(|path| crate::output::holds(path, bytes))
            .map(|path| path.to_path_buf())
            .collect()
    };
    let ((json, mut held_json), (page, snapshot, held_page)) = crate::par::both(
        || {
            let json = (writing && !wants.files.jsons.is_empty()).then(|| {
                json::to_vec(
                    &report,
                    wants.blob_link,
                    wants.issue_link,
                    executions.as_ref(),
                )
            });
            let held = json
                .as_ref()
                .map(|bytes| held(wants.files.jsons, bytes))
                .unwrap_or_default();
            (json, held)
        },
        || {
            let page = (writing && !wants.files.htmls.is_empty()).then(|| {
                html::render_with(
                    &report,
                    wants.blob_link,
                    wants.issue_link,
                    executions.as_ref(),
                )
            });
            let snapshot =
                (writing && wants.snapshot_path.is_some()).then(|| ci::snapshot(&report));
            let mut held_page = page
                .as_ref()
                .map(|page| held(wants.files.htmls, page.as_bytes()))
                .unwrap_or_default();
            if let (Some(path), Some(text)) = (wants.files.snapshot, &snapshot) {
                held_page.extend(held(&[path], text.as_bytes()));
            }
            (page, snapshot, held_page)
        },
    );
    held_json.extend(held_page);
    Ok(Made {
        sources,
        model,
        report,
        executions,
        json,
        page,
        snapshot,
        warnings,
        held: held_json,
    })
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
