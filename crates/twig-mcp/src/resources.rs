//! Resources: `twig://repo/tree`, `twig://repo/branches`, `twig://repo/health` (all
//! subscribable) and the template
//! `twig://branch/{name}/context`. Each is a JSON document; a part that cannot be produced is
//! a structured error inside the JSON, in the same envelope the tools use.

use std::sync::Arc;

use mcp_common::{ToolError, ToolResponse};
use rmcp::{
    ErrorData as McpError,
    model::{ReadResourceResult, Resource, ResourceContents, ResourceTemplate},
};
use serde::Serialize;

use crate::{
    context::ServerContext,
    include::{Include, disabled},
    tools::{github, health, jira, local},
    types::{BranchMetadataResponse, JiraIssueResponse, ListBranchesResponse, PrStatusResponse},
};

pub const TREE_URI: &str = "twig://repo/tree";
pub const BRANCHES_URI: &str = "twig://repo/branches";
pub const HEALTH_URI: &str = "twig://repo/health";
pub const CONTEXT_TEMPLATE: &str = "twig://branch/{name}/context";
const CONTEXT_PREFIX: &str = "twig://branch/";
const CONTEXT_SUFFIX: &str = "/context";
const JSON: &str = "application/json";

pub fn list() -> Vec<Resource> {
    vec![
        Resource::new(TREE_URI, "branch-tree")
            .with_title("Branch dependency tree")
            .with_description(
                "The branch dependency tree of the repository from its default root \
                 (subscribable: updated when .twig/state.json or the checked-out branch changes)",
            )
            .with_mime_type(JSON),
        Resource::new(BRANCHES_URI, "branches")
            .with_title("Tracked branches")
            .with_description(
                "All twig-tracked branches with their metadata \
                 (subscribable: updated when .twig/state.json or the checked-out branch changes)",
            )
            .with_mime_type(JSON),
        Resource::new(HEALTH_URI, "stack-health")
            .with_title("Stack health")
            .with_description(
                "What get_stack_health answers for every stack (its first page): ahead/behind, \
                 needs rebase, merged, stale and missing branches, the rebase order and what \
                 could be pruned (subscribable: updated when branches, .twig/state.json or the \
                 checked-out branch change)",
            )
            .with_mime_type(JSON),
    ]
}

pub fn templates() -> Vec<ResourceTemplate> {
    vec![
        ResourceTemplate::new(CONTEXT_TEMPLATE, "branch-context")
            .with_title("Branch context")
            .with_description(
                "Branch metadata, its Jira issue and its PR status in one document; \
                 the branch name is percent-encoded (feat%2Fx for feat/x)",
            )
            .with_mime_type(JSON),
    ]
}

/// Only the repository-wide resources change in ways the server watches.
pub fn check_subscribable(uri: &str) -> Result<(), McpError> {
    if uri == TREE_URI || uri == BRANCHES_URI || uri == HEALTH_URI {
        Ok(())
    } else {
        Err(McpError::invalid_params(
            format!(
                "'{uri}' is not subscribable; subscribe to {TREE_URI}, {BRANCHES_URI} or {HEALTH_URI}"
            ),
            None,
        ))
    }
}

/// The combined view of `twig://branch/{name}/context`.
#[derive(Debug, Serialize)]
pub struct BranchContext {
    pub branch: String,
    pub metadata: ToolResponse<BranchMetadataResponse>,
    pub jira_issue: ToolResponse<JiraIssueResponse>,
    pub pull_request: ToolResponse<PrStatusResponse>,
}

pub async fn read(
    ctx: &Arc<ServerContext>,
    uri: &str,
    include: Include,
) -> Result<ReadResourceResult, McpError> {
    let text = if uri == TREE_URI {
        to_json(&ToolResponse::from(local::get_branch_tree(
            ctx,
            &local::TreeParams::default(),
            None,
        )))
    } else if uri == BRANCHES_URI {
        to_json(&ToolResponse::from(all_branches(ctx)))
    } else if uri == HEALTH_URI {
        let answer = health::get_stack_health(ctx, health::HealthParams::default(), include).await;
        to_json(&match answer {
            Ok(paged) => ToolResponse::Ok {
                data: paged.data,
                page: Some(paged.page),
            },
            Err(error) => ToolResponse::Error { error },
        })
    } else if let Some(name) = context_branch(uri) {
        let name = name?;
        to_json(&branch_context(ctx, name, include).await)
    } else {
        return Err(mcp_common::protocol::resource_not_found(
            uri,
            format!(
                "Unknown resource '{uri}'. Resources: {TREE_URI}, {BRANCHES_URI}, {HEALTH_URI}, {CONTEXT_TEMPLATE}"
            ),
        ));
    }?;
    Ok(ReadResourceResult::new(vec![
        ResourceContents::text(text, uri).with_mime_type(JSON),
    ]))
}

fn to_json<T: Serialize>(value: &T) -> Result<String, McpError> {
    serde_json::to_string(value).map_err(|err| McpError::internal_error(err.to_string(), None))
}

fn all_branches(ctx: &ServerContext) -> Result<ListBranchesResponse, ToolError> {
    let state = ctx.require_state()?;
    Ok(ListBranchesResponse {
        branches: state
            .sorted_branches()
            .map(|name| local::branch_metadata(Some(&state), name))
            .collect(),
    })
}

/// The branch named by a context URI: `None` when the URI is not a context URI.
fn context_branch(uri: &str) -> Option<Result<String, McpError>> {
    let encoded = uri
        .strip_prefix(CONTEXT_PREFIX)?
        .strip_suffix(CONTEXT_SUFFIX)?;
    let decoded = percent_decode(encoded);
    Some(match decoded {
        Some(name) if !name.trim().is_empty() => Ok(name),
        _ => Err(McpError::invalid_params(
            format!(
                "'{uri}' does not name a branch; use {CONTEXT_TEMPLATE} with a percent-encoded name"
            ),
            None,
        )),
    })
}

/// Decode `%XX` escapes (URI template values are percent-encoded; slashes may also be raw).
fn percent_decode(text: &str) -> Option<String> {
    percent_encoding::percent_decode_str(text)
        .decode_utf8()
        .ok()
        .map(|s| s.into_owned())
}

async fn branch_context(ctx: &ServerContext, branch: String, include: Include) -> BranchContext {
    let state = ctx.require_state();
    let metadata: Result<BranchMetadataResponse, ToolError> = match &state {
        Ok(state) if state.names(&branch) => Ok(local::branch_metadata(Some(state), &branch)),
        Ok(_) => Err(local::not_tracked(&branch)),
        Err(err) => Err(err.clone()),
    };
    let linked = metadata.as_ref().ok();

    let jira_issue = match (include.jira, linked.and_then(|m| m.jira_issue.clone())) {
        (false, _) => Err(disabled("Jira", "jira")),
        (true, None) => Err(no_link(&metadata, &branch, "Jira issue")),
        (true, Some(key)) => jira::fetch_issue(ctx, &key).await,
    };
    let pull_request = match (include.github, linked.and_then(|m| m.pr_number)) {
        (false, _) => Err(disabled("GitHub", "github")),
        (true, None) => Err(no_link(&metadata, &branch, "GitHub PR")),
        (true, Some(number)) => github::fetch_pr_status(ctx, number, None).await,
    };
    BranchContext {
        branch,
        metadata: metadata.clone().into(),
        jira_issue: jira_issue.into(),
        pull_request: pull_request.into(),
    }
}

/// Why a linked item is missing: the metadata's own error, or no link.
fn no_link(
    metadata: &Result<BranchMetadataResponse, ToolError>,
    branch: &str,
    what: &str,
) -> ToolError {
    match metadata {
        Err(err) => err.clone(),
        Ok(_) => ToolError::not_found(format!(
            "Branch '{}' has no linked {what}",
            local::quoted(branch)
        ))
        .with_hint("Link one with `twig` (e.g. `twig jira link` / `twig github link`)."),
    }
}
