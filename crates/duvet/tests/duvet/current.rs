//! Issue 23's protocol findings through the duvet binary ([`mcp_testkit::protocol`]): an
//! over-long message answered with its id over stdio and HTTP, input schemas in the
//! single-type form, unknown tools named with the tools, a missing resource's URI in the error.

use mcp_testkit::protocol;

const BIN: &str = env!("CARGO_BIN_EXE_duvet");
const ARGS: &[&str] = &["mcp"];

#[tokio::test]
async fn an_over_long_line_is_answered_with_its_id_over_stdio() {
    protocol::check_over_long_line_over_stdio(BIN, ARGS).await;
}

#[tokio::test]
async fn an_over_long_body_is_answered_with_its_id_over_http() {
    protocol::check_over_long_body_over_http(BIN, ARGS).await;
}

#[tokio::test]
async fn input_schemas_have_no_type_arrays_or_null_types() {
    protocol::check_portable_input_schemas(BIN, ARGS).await;
}

#[tokio::test]
async fn the_tool_listing_keeps_within_its_budget() {
    protocol::check_listing_budget(BIN, ARGS).await;
}

#[tokio::test]
async fn an_unknown_tool_is_named_with_the_tools() {
    protocol::check_unknown_tool_is_named(BIN, ARGS).await;
}

#[tokio::test]
async fn a_missing_resource_carries_its_uri() {
    protocol::check_missing_resource_carries_its_uri(BIN, ARGS, "duvet:///no/such/resource").await;
}

/// `--toolsets`, `--tools` and `--read-only`, as every server takes them (with a coverage
/// report named, so that every toolset is offered; without one the coverage toolset is not,
/// as tests/duvet/coverage.rs checks).
#[tokio::test]
async fn toolsets_tools_and_read_only_choose_the_tools() {
    let args = ["mcp", "--coverage-report", "lcov.info"];
    mcp_testkit::surface::check_surface(BIN, &args, duvet::server::TOOLS).await;
}
