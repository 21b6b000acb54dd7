//! A test-only MCP server on the kit (`mcp-common`) that serves what the MCP conformance
//! suite's reference server ("everything server") serves: its tools (`test_simple_text`,
//! `test_image_content`, … and the `test_input_required_result_*` ones), prompts
//! (`test_simple_prompt`, …), resources (`test://static-text`, `test://template/{id}/data`,
//! …), completions, logging and subscriptions. With it the suite's required server scenarios
//! of both protocol generations run in full against the kit: a 2025-11-25 client in a session
//! (server-to-client sampling and elicitation on the call's stream), a 2026-07-28 client
//! stateless (input asked through `InputRequiredResult`, state sealed by [`mcp_common::ask`]).
//!
//! The formats (names, texts, schemas) are the suite's; see `clients/conformance-next`.
//!
//! - [`state`]: the handler ([`Fixture`]): what its sessions share and keep;
//! - [`server`]: what it declares, and which module answers what;
//! - [`tools`]: the tools that answer at once, or ask the client in a session;
//! - [`mrtr`]: the tools and the prompt that ask through `InputRequiredResult`;
//! - [`prompts`], [`resources`]: the prompts, resources and templates, completions;
//! - [`wire`]: the suite's constants and the JSON-to-rmcp helpers every module uses.

pub mod mrtr;
pub mod prompts;
pub mod resources;
pub mod server;
pub mod state;
pub mod tools;
pub mod wire;

pub use state::Fixture;
