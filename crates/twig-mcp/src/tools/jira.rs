//! The Jira tools: issues from the Jira site named by `$JIRA_HOST`, with credentials from
//! `~/.netrc`.

use std::sync::Arc;

use mcp_common::{Limit, Page, Paged, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::{
    context::ServerContext,
    errors,
    remote::{
        Service,
        jira::{self, JiraClient, SearchPosition},
        to_tool_error,
    },
    tools::local::cursor_arg,
    types::{JiraFact, JiraIssueResponse, ListJiraIssuesResponse},
};

/// Page sizes of `list_jira_issues`: 100 by default (what one answer held before paging),
/// at most 100.
pub const LIST_LIMIT: Limit = Limit::new(100, 100);

#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct IssueParams {
    /// Issue key such as `PROJ-123` (defaults to the issue linked to the current branch).
    #[serde(default)]
    pub issue_key: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ListIssuesParams {
    /// Project key, e.g. `PROJ`.
    pub project: String,
    /// Only issues in this status, e.g. `In Progress`.
    #[serde(default)]
    pub status: Option<String>,
    /// Only issues assigned to this user; `me` for yourself.
    #[serde(default)]
    pub assignee: Option<String>,
    /// How many issues to return (default 100, at most 100).
    #[serde(default)]
    pub limit: Option<u64>,
    /// `page.next_cursor` of the previous answer, to continue after it.
    #[serde(default)]
    pub cursor: Option<String>,
}

fn credentials_missing() -> ToolError {
    ToolError::new(errors::CREDENTIALS_MISSING, "Jira credentials not found")
        .with_hint(Service::Jira.credentials_hint())
}

/// The Jira client, built on first use from `$JIRA_HOST` and `~/.netrc`, then reused; a
/// failure is not cached.
async fn client(ctx: &ServerContext) -> Result<Arc<JiraClient>, ToolError> {
    ctx.jira
        .get_or_try_init(|| async {
            let base = ctx
                .settings
                .jira_host
                .as_deref()
                .and_then(jira::base_url_from_host)
                .ok_or_else(credentials_missing)?;
            let home = ctx
                .settings
                .home
                .as_deref()
                .ok_or_else(credentials_missing)?;
            let creds = jira::credentials(home, &base).ok_or_else(credentials_missing)?;
            JiraClient::new(base, creds, ctx.settings.timeout)
                .map(Arc::new)
                .map_err(|err| to_tool_error(Service::Jira, "Jira API", err))
        })
        .await
        .cloned()
}

/// The issue to look at: the explicit key, else the one linked to the current branch.
fn resolve_key(ctx: &ServerContext, explicit: Option<&str>) -> Result<String, ToolError> {
    if let Some(key) = explicit {
        let key = key.trim();
        if key.is_empty() {
            return Err(ToolError::invalid_params("`issue_key` must not be empty")
                .with_hint("Pass an issue key such as PROJ-123, or omit it."));
        }
        // Keys look like PROJ-123 (or a numeric id); anything else, `..` included, would
        // change the requested path.
        let well_formed = key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
            && key.chars().any(|c| c.is_ascii_digit());
        if !well_formed {
            return Err(ToolError::invalid_params(format!(
                "`issue_key` must be an issue key such as PROJ-123, got '{key}'"
            ))
            .with_hint("Pass an issue key such as PROJ-123, or omit it."));
        }
        return Ok(key.to_string());
    }
    let no_branch = || {
        ToolError::invalid_params("No issue_key provided and could not detect current branch")
            .with_hint("Provide an explicit issue_key parameter.")
    };
    // Outside a repository this is `no_repo`, as for every repository tool.
    let branch = ctx.current_branch()?.ok_or_else(no_branch)?;
    let state = ctx.require_state()?;
    state
        .meta(&branch)
        .and_then(|meta| meta.jira_issue.as_deref().map(str::to_string))
        .ok_or_else(|| {
            ToolError::not_found(format!("Branch '{branch}' has no linked Jira issue"))
                .with_hint("Provide an explicit issue_key parameter.")
        })
}

pub async fn get_jira_issue(
    ctx: &ServerContext,
    params: IssueParams,
) -> Result<JiraIssueResponse, ToolError> {
    let key = resolve_key(ctx, params.issue_key.as_deref())?;
    fetch_issue(ctx, &key).await
}

/// What the health check needs of Jira: the client, or why Jira cannot be asked.
pub async fn for_facts(ctx: &ServerContext) -> Result<Arc<JiraClient>, ToolError> {
    client(ctx).await
}

/// Issue `key`'s status, and whether twig's prune plugin counts it as done.
pub async fn issue_fact(client: &JiraClient, key: &str) -> Result<JiraFact, ToolError> {
    let issue = client
        .get_issue(key)
        .await
        .map_err(|err| to_tool_error(Service::Jira, &format!("Jira issue {key}"), err))?;
    let done = matches!(
        issue.status.to_ascii_lowercase().as_str(),
        "done" | "closed" | "resolved"
    );
    Ok(JiraFact {
        key: issue.key,
        status: issue.status,
        done,
    })
}

/// Issue `key` (used by the tool and by the branch context resource).
pub async fn fetch_issue(ctx: &ServerContext, key: &str) -> Result<JiraIssueResponse, ToolError> {
    let client = client(ctx).await?;
    client
        .get_issue(key)
        .await
        .map_err(|err| to_tool_error(Service::Jira, &format!("Jira issue {key}"), err))
}

/// One page of a project's issues. The cursor seals the search page's `nextPageToken` and the
/// offset inside that page; it is bound to the project and filters.
pub async fn list_jira_issues(
    ctx: &ServerContext,
    params: ListIssuesParams,
) -> Result<Paged<ListJiraIssuesResponse>, ToolError> {
    let limit = LIST_LIMIT.resolve(params.limit)?;
    let project = params.project.trim();
    if project.is_empty() {
        return Err(ToolError::invalid_params("`project` must not be empty")
            .with_hint("Pass a Jira project key such as PROJ."));
    }
    let nonempty = |v: &Option<String>| {
        v.as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    let status = nonempty(&params.status);
    let assignee = nonempty(&params.assignee);
    let cursors = ctx.cursors.bind(
        "list_jira_issues",
        &(
            ctx.settings.jira_host.as_deref(),
            project,
            &status,
            &assignee,
        ),
    );
    let from: Option<SearchPosition> = cursors.start(cursor_arg(params.cursor.as_deref()))?;
    let client = client(ctx).await?;
    let page = client
        .list_issues(
            project,
            status.as_deref(),
            assignee.as_deref(),
            from.as_ref(),
            limit,
        )
        .await
        .map_err(|err| to_tool_error(Service::Jira, &format!("Jira project {project}"), err))?;
    let next_cursor = page.next.as_ref().map(|next| cursors.encode(next));
    Ok(Paged {
        data: ListJiraIssuesResponse { issues: page.items },
        page: if page.exact {
            Page::new(page.total, next_cursor)
        } else {
            Page::at_least(page.total, next_cursor)
        },
    })
}
