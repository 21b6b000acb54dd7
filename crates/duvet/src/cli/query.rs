//! `duvet query`: duvet 0.4.3's command, with its options, verdicts, words and exit codes
//! ([`crate::query`]). In the working directory's project (`.duvet/config.toml`; without one,
//! an empty project, whose checks pass as 0.4.3's do), after extracting the requirements of
//! the declared specifications as `duvet report` does, it runs the checks `--check` names and
//! prints their results on standard error (where 0.4.3 prints them): exit 0 when all pass, 1
//! when one fails or the project cannot be read. Without a check it prints its help on
//! standard output (exit 0), as 0.4.3 does; a check it does not know is a usage error
//! (exit 2). `--check coverage` and `--check executed-coverage` read the coverage reports
//! `--coverage-report` names (globs, relative to the working directory) in
//! `--coverage-format`: `jacoco-xml`, as 0.4.3, or `lcov`, which 0.4.3 does not read (it is
//! left out of the help, which is 0.4.3's); a report that cannot be read or matched stops the
//! query (exit 1), a pattern that matches no file is said and read as no report, as 0.4.3
//! reads it.

use std::io::Write;
use std::process::ExitCode;

use clap::{Args, ValueEnum};

use super::common::{fail, note};

use crate::config::{self, Flags};
use crate::execution;
use crate::model::Model;
use crate::project::{self, FileCache};
use crate::query::{self, Check, Renderer, Scope};
use crate::report::{Report, Sources};

/// What `duvet query` is, in 0.4.3's words (its help begins with them).
pub const ABOUT: &str = "Queries requirement traceability using coverage data";

#[derive(Debug, Args)]
pub struct QueryArgs {
    /// Types of checks to run (comma-separated)
    #[arg(short = 'c', long, value_delimiter = ',')]
    check: Option<Vec<CheckType>>,

    /// Specific sections to validate (comma-separated)
    #[arg(short = 's', long, value_delimiter = ',')]
    section: Option<Vec<String>>,

    /// Filter by quoted requirement text (case-insensitive substring match, repeatable)
    #[arg(short = 'q', long)]
    quote: Option<Vec<String>>,

    /// Coverage report path(s), supports globs (required for coverage checks)
    #[arg(
        short = 'r',
        long,
        required_if_eq_any([("check", "coverage"), ("check", "executed-coverage")])
    )]
    coverage_report: Option<Vec<String>>,

    /// Coverage format (required for coverage checks)
    #[arg(
        short = 'f',
        long,
        required_if_eq_any([("check", "coverage"), ("check", "executed-coverage")]),
        long_help = "Coverage format (required for coverage checks): jacoco-xml, JaCoCo's XML \
                     report. This duvet also reads lcov, an LCOV tracefile (cargo llvm-cov \
                     --lcov, grcov, cargo tarpaulin --out Lcov), which duvet 0.4.3 does not \
                     list"
    )]
    coverage_format: Option<CoverageFormat>,

    /// Enable verbose output
    #[arg(short = 'v', long)]
    verbose: bool,
}

/// The checks of `--check`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum CheckType {
    /// Every requirement of the specifications is quoted entirely by implementation,
    /// implication or exception annotations. Fails on a requirement none quotes, one quoted
    /// in part, and one a TODO annotation quotes.
    #[value(alias = "implementations")]
    Implementation,
    /// Every implementation annotation is quoted entirely by test annotations of its section.
    /// Implications, exceptions and TODOs need no test; a test without an implementation is
    /// fine; one test may cover several implementations.
    #[value(alias = "tests")]
    Test,
    /// Every test annotation ran, and ran the implementations it tests, in one same coverage
    /// report; fails on a test that did not run, an implementation that did not run with it,
    /// and a test no implementation, implication or exception covers.
    Coverage,
    /// `coverage`, for the test annotations that ran only.
    ExecutedCoverage,
    /// No annotation is quoted entirely by others of its type and section.
    Duplicates,
}

/// The formats of `--coverage-format`: 0.4.3's, and LCOV (left out of the help, which is
/// 0.4.3's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum CoverageFormat {
    JacocoXml,
    #[value(hide = true)]
    Lcov,
}

impl From<CoverageFormat> for execution::CoverageFormat {
    fn from(format: CoverageFormat) -> Self {
        match format {
            CoverageFormat::JacocoXml => Self::JacocoXml,
            CoverageFormat::Lcov => Self::Lcov,
        }
    }
}

/// 0.4.3's help of `duvet query`, as it prints it without a check.
fn help() -> clap::Command {
    QueryArgs::augment_args(clap::Command::new("query").about(ABOUT))
}

pub fn run(args: QueryArgs) -> ExitCode {
    let checks = match &args.check {
        Some(checks) if !checks.is_empty() => checks,
        _ => {
            // As 0.4.3: the help, a blank line, success.
            let mut cmd = help();
            let _ = cmd.print_help();
            let _ = writeln!(std::io::stdout().lock());
            return ExitCode::SUCCESS;
        }
    };
    let mut wanted = Vec::with_capacity(checks.len());
    for check in checks {
        wanted.push(match check {
            CheckType::Implementation => Check::Implementation,
            CheckType::Test => Check::Test,
            CheckType::Duplicates => Check::Duplicates,
            CheckType::Coverage => Check::Coverage,
            CheckType::ExecutedCoverage => Check::ExecutedCoverage,
        });
    }
    let root = match std::env::current_dir() {
        Ok(root) => root,
        Err(e) => return fail(&[format!("cannot read the working directory: {e}")]),
    };
    let config = match config::load(&root, &Flags::default()) {
        Ok(config) => Some(config),
        // As 0.4.3: without a config the project is empty, and its checks pass.
        Err(config::ConfigError::NoConfig { .. }) => None,
        Err(e) => return fail(&[e.to_string()]),
    };
    let (inputs, styles) = match &config {
        Some(config) => {
            // duvet 0.4.3 first extracts the requirements of the declared specifications.
            let cache = FileCache::default();
            if let Err(errors) = super::extract::requirements(config, &cache) {
                return fail(&errors);
            }
            let styles = config.sources.iter().map(|s| s.style.clone()).collect();
            match super::common::inputs_downloading(
                config,
                || project::inputs(config, &cache),
                || true,
            ) {
                Ok(inputs) => (inputs, styles),
                Err(errors) => return fail(&errors),
            }
        }
        None => (crate::model::Inputs::default(), Vec::new()),
    };
    let sources = Sources::of(&root, &inputs);
    let model = Model::build(inputs);
    // What 0.4.3 cannot read, it refuses before it checks anything.
    let report = Report::build(&sources, &model);
    if !report.errors.is_empty() {
        return fail(&report.errors);
    }
    let scope = Scope::new(
        args.section.as_deref().unwrap_or_default(),
        args.quote.as_deref().unwrap_or_default(),
    );
    let mut executions = Vec::new();
    if wanted
        .iter()
        .any(|c| matches!(c, Check::Coverage | Check::ExecutedCoverage))
    {
        // clap requires both with a coverage check.
        let (Some(patterns), Some(format)) = (&args.coverage_report, args.coverage_format) else {
            return fail(&[
                "the coverage checks need --coverage-report and --coverage-format".to_string(),
            ]);
        };
        // Every source file, annotated or not, is matched to the reports' entries.
        let files = config
            .as_ref()
            .map(execution::source_files)
            .unwrap_or_default();
        let measured = match query::measure(
            &root,
            patterns,
            (format.into(), execution::reports::read_as_0_4_3_query),
            &files,
            &sources.annotations,
        ) {
            Ok(measured) => measured,
            Err(e) => return fail(&[e]),
        };
        for pattern in &measured.unmatched {
            note(&format!(
                "warning: no coverage report matches '{}': read as no report, as duvet 0.4.3 \
                 reads it (the coverage checks then find no test that ran)",
                mcp_common::clip(pattern, 200)
            ));
        }
        executions = measured.executions;
    }
    let result = match query::run(
        &model,
        &sources.annotations,
        &wanted,
        &scope,
        args.verbose,
        &executions,
    ) {
        Ok(result) => result,
        Err(unmatched) => {
            let errors: Vec<String> = unmatched
                .iter()
                .map(|u| {
                    format!(
                        "{}:{}: Exactly matchable quote not found in section (duvet 0.4.3's \
                         query finds quotes exactly, once whitespace is normalized; this one \
                         matches only within one edit: correct its text)",
                        crate::model::path_text(&u.annotation.file),
                        u.annotation.line
                    )
                })
                .collect();
            return fail(&errors);
        }
    };
    let text = query::write(&result, &root, &styles, &Renderer::for_terminal());
    // A closed pipe is no failure of the query.
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
    if result.passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Parse `duvet query` arguments alone (for tests of the parser).
#[cfg(test)]
fn parse(args: &[&str]) -> Result<QueryArgs, clap::Error> {
    let matches =
        help().try_get_matches_from(std::iter::once("query").chain(args.iter().copied()))?;
    <QueryArgs as clap::FromArgMatches>::from_arg_matches(&matches)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_are_comma_separated_with_0_4_3_s_aliases() {
        let args = parse(&["-c", "implementations,tests", "--check", "duplicates"]).unwrap();
        assert_eq!(
            args.check,
            Some(vec![
                CheckType::Implementation,
                CheckType::Test,
                CheckType::Duplicates
            ])
        );
    }

    #[test]
    fn coverage_checks_need_a_report_and_its_format_as_in_0_4_3() {
        let err = parse(&["-c", "coverage"]).unwrap_err();
        assert_eq!(err.kind(), clap::error::ErrorKind::MissingRequiredArgument);
        let args = parse(&["-c", "coverage", "-r", "a.xml", "-f", "jacoco-xml"]).unwrap();
        assert_eq!(args.check, Some(vec![CheckType::Coverage]));
    }

    #[test]
    fn sections_split_and_quotes_repeat() {
        let args = parse(&["-s", "a.md#x,b.md", "-q", "MUST", "-q", "SHOULD", "-v"]).unwrap();
        assert_eq!(
            args.section,
            Some(vec!["a.md#x".to_string(), "b.md".to_string()])
        );
        assert_eq!(
            args.quote,
            Some(vec!["MUST".to_string(), "SHOULD".to_string()])
        );
        assert!(args.verbose);
    }
}
