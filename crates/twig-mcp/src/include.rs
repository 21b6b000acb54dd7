//! Which remote parts an answer may include (`--disable github` / `--disable jira` switch
//! them off), and what an answer says in their place.

use mcp_common::ToolError;

use crate::errors;

/// Which remote parts the branch context, the health check and the prompts may fetch.
#[derive(Debug, Clone, Copy)]
pub struct Include {
    pub github: bool,
    pub jira: bool,
}

/// Why a service's part is absent when `--disable` switched it off.
pub fn disabled(service: &str, flag: &str) -> ToolError {
    ToolError::new(
        errors::INVALID_PARAMS,
        format!("{service} integration is disabled (--disable {flag})"),
    )
    .with_hint(format!(
        "Restart twig-mcp without `--disable {flag}` to include it."
    ))
}
