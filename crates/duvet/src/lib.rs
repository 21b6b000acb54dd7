//! duvet: requirements traceability for projects annotated for the Duvet tool, served to AI
//! assistants over MCP by `duvet mcp`.
//!
//! Modules by concern: `cli` (the command line: stdio or `--http`), `server` (the MCP
//! surface), `resources` (the resource tree), `tools` (the tools' answers), `checks` (duvet
//! 0.4.3's `query` checks and unattached citations), `filter` (spec/section/quote filters of
//! every list), `paging` (the list tools' pages), `orphans` (quote lines without a target), `errors` (duvet's
//! error codes), `engine` (the live model, rebuilt after file changes), `project` (reading
//! files), `par` (work spread over the cores), `model` (specifications, requirements, citations), `status` and `coverage` (statuses as
//! duvet 0.4.3 computes them), `matching` (quotes),
//! `spec` (IETF and Markdown parsing, requirement sentences), `annotation` (source comments
//! and requirement files), `config` (`.duvet/config.toml` and the legacy flags),
//! `subscriptions` (resource-update notifications). Only `server`, `resources` and
//! `subscriptions` speak rmcp.

pub mod annotation;
pub mod checks;
pub mod cli;
pub mod config;
pub mod coverage;
pub mod download;
pub mod engine;
pub mod errors;
pub mod executed;
pub mod execution;
pub mod extract;
pub mod filter;
pub mod matching;
pub mod memory;
pub mod model;
pub mod orphan_rule;
pub mod orphans;
pub mod output;
pub mod paging;
pub mod par;
pub mod project;
pub mod query;
pub mod report;
pub mod resources;
pub mod server;
pub mod spec;
pub mod status;
pub mod subscriptions;
pub mod tools;
