//! The command line of the `duvet` binary: `duvet mcp [--http ADDR]` serves the project to
//! MCP clients over stdio (the default) or Streamable HTTP at `/mcp`; `duvet report` writes
//! and checks duvet 0.4.3's reports ([`report`]); `duvet extract` writes a specification's
//! requirement files ([`extract`]).

mod common;
mod extract;
mod init;
mod merge;
mod query;
mod report;

use std::{path::PathBuf, process::ExitCode};

use clap::{Args, Parser, Subcommand};
use mcp_common::{
    CursorKey,
    serve::{ServeOptions, TransportArgs},
};

use crate::{
    config::Flags, engine::Engine, execution::view::CoverageSettings, server::DuvetServer,
};
use mcp_common::surface::{Selection, SurfaceArgs};

/// The name the server introduces itself with on stderr.
const NAME: &str = "duvet";

#[derive(Debug, Parser)]
#[command(
    name = "duvet",
    version,
    about = "Requirements traceability for Duvet-annotated projects",
    long_about = "Requirements traceability for Duvet-annotated projects: `duvet mcp` serves a \
                  project's specifications, requirements and the citations that implement and \
                  test them to MCP clients. A project is the directory holding \
                  .duvet/config.toml (as Duvet 0.4 writes it), or one described by the legacy \
                  --spec-pattern and --source-pattern flags."
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve the project's specifications, requirements and citations over MCP (stdio, or
    /// Streamable HTTP with --http).
    Mcp(McpArgs),
    // 0.4.3's words, with which its help (printed without a check) begins.
    #[command(about = query::ABOUT)]
    Query(query::QueryArgs),
    /// Write the project's compliance reports and check them, as duvet 0.4.3's `duvet
    /// report` does (the same options, statuses and exit codes).
    Report(report::ReportArgs),
    /// Write a specification's requirement files (one per section with a requirement), as
    /// duvet 0.4.3's `duvet extract` does.
    Extract(extract::ExtractArgs),
    /// Start a project: write .duvet/config.toml (source patterns for the languages asked
    /// for or detected) and .duvet/.gitignore, as duvet 0.4.3's `duvet init` does.
    Init(init::InitArgs),
    /// Merge v2 JSON reports (`duvet report --json-v2`) into one, as duvet 0.4.3's `duvet
    /// merge` does (the same ids, conflicts and output).
    Merge(merge::MergeArgs),
}

#[derive(Debug, Args)]
struct McpArgs {
    /// More logging on stderr: -v info, -vv debug, -vvv trace (default: warnings only).
    #[arg(short, long, action = clap::ArgAction::Count)]
    verbose: u8,

    /// The project's root directory, which holds .duvet/config.toml and against which
    /// patterns and paths are resolved (default: the working directory; parents are not
    /// searched).
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,

    /// A Duvet 0.4 config file to read instead of .duvet/config.toml, relative to the root
    /// unless absolute.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,

    /// Legacy form (Duvet 0.1–0.3): requirement TOML files, a glob relative to the root,
    /// e.g. 'compliance/**/*.toml' (repeatable).
    #[arg(long, value_name = "GLOB")]
    spec_pattern: Vec<String>,

    /// Legacy form (Duvet 0.1–0.3): source files to scan for annotations, a glob relative to
    /// the root, optionally prefixed with the comment style `(META,CONTENT)` (default
    /// `(//=,//#)`), e.g. '(*=,*#)src/**/*.c' (repeatable).
    #[arg(long, value_name = "GLOB")]
    source_pattern: Vec<String>,

    /// Legacy form (Duvet 0.1–0.3): the directory holding the specs/ download cache of
    /// specification texts, relative to the root (default: the root, i.e. <root>/specs).
    #[arg(long, value_name = "DIR")]
    spec_path: Option<PathBuf>,

    /// A coverage report to read for whether the cited code ran: a path or glob relative to
    /// the root (repeatable), e.g. target/tarpaulin/lcov.info. Offers the coverage toolset
    /// (list_unexecuted_requirements) and an `execution` in get_requirement_status.
    #[arg(long, value_name = "GLOB")]
    coverage_report: Vec<String>,

    /// The coverage reports' format: lcov, or jacoco-xml (default: jacoco-xml for .xml
    /// reports, lcov otherwise).
    #[arg(long, value_enum, value_name = "FORMAT")]
    coverage_format: Option<crate::execution::CoverageFormat>,

    /// Which tools to offer (toolsets: requirements, citations, and coverage with
    /// --coverage-report; all tools read).
    #[command(flatten)]
    surface: SurfaceArgs,

    #[command(flatten)]
    transport: TransportArgs,
}

/// Parse the command line and run it; the process's exit code.
pub fn main() -> ExitCode {
    // A report starts on small pages (the binary turns them off before anything is
    // allocated), the other commands on what the system gives (see crate::memory).
    let report = std::env::args_os().nth(1).is_some_and(|a| a == "report");
    crate::memory::huge_pages(!report);
    match Cli::parse().command {
        Command::Mcp(args) => mcp(args),
        Command::Query(args) => query::run(args),
        Command::Report(args) => report::run(args),
        Command::Extract(args) => extract::run(args),
        Command::Init(args) => init::run(args),
        Command::Merge(args) => merge::run(args),
    }
}

fn mcp(args: McpArgs) -> ExitCode {
    mcp_common::serve::init_tracing(args.verbose.min(3));
    let transport = match args.transport.transport() {
        Ok(transport) => transport,
        Err(err) => {
            mcp_common::serve::report_start_error(NAME, &err);
            return ExitCode::from(2);
        }
    };
    let coverage = (!args.coverage_report.is_empty()).then(|| CoverageSettings {
        format: args.coverage_format.unwrap_or_else(|| {
            crate::execution::CoverageFormat::for_patterns(&args.coverage_report)
        }),
        patterns: args.coverage_report.clone(),
    });
    let selection = match Selection::new(&args.surface, crate::server::TOOLS) {
        // Without coverage reports the coverage tools have nothing to answer from.
        Ok(selection) if coverage.is_none() => {
            selection.without_toolset("coverage", crate::server::TOOLS)
        }
        Ok(selection) => selection,
        Err(err) => {
            mcp_common::serve::report_start_error(NAME, &err);
            return ExitCode::from(2);
        }
    };
    let runtime = match mcp_common::serve::runtime(&transport) {
        Ok(runtime) => runtime,
        Err(err) => {
            mcp_common::serve::report_start_error(NAME, &format!("cannot start: {err}"));
            return ExitCode::FAILURE;
        }
    };
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let root = args.root.map(|r| cwd.join(r)).unwrap_or(cwd);
    let root = std::fs::canonicalize(&root).unwrap_or(root);
    let flags = Flags {
        spec_patterns: args.spec_pattern,
        source_patterns: args.source_pattern,
        spec_path: args.spec_path,
        config: args.config,
    };
    let result = runtime.block_on(async move {
        // One engine (one analysis, one file watcher) and one cursor key for every session;
        // each session its own resource subscriptions (`DuvetServer::session`).
        let engine = Engine::with_coverage(root, flags, coverage);
        // Analyse in the background right away, so the first answer is ready sooner.
        let warm = engine.clone();
        tokio::spawn(async move {
            if let Err(err) = warm.snapshot().await {
                tracing::warn!(%err, "no project yet: tools answer no_project until one appears");
            }
        });
        let server = DuvetServer::new(engine, CursorKey::random(), &selection);
        let options = ServeOptions::default();
        mcp_common::serve::serve(transport, NAME, options, move || server.session()).await
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            tracing::error!("{err:#}");
            mcp_common::serve::report_start_error(NAME, &format!("{err:#}"));
            ExitCode::FAILURE
        }
    }
}
