//! The GitHub tools: pull requests of the repository's `origin`, with credentials from
//! `~/.netrc` or `$GITHUB_TOKEN`/`$GH_TOKEN`.

use std::sync::Arc;

use mcp_common::{Limit, Page, Paged, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::{
    context::ServerContext,
    errors,
    remote::{
        RemoteError, Service,
        github::{self, GitHubClient, GitHubRepo, PullsPosition},
        to_tool_error,
    },
    tools::local::cursor_arg,
    types::{ListPullRequestsResponse, PrFact, PrStatusResponse, PullRequestResponse},
};

/// Page sizes of `list_pull_requests`: 100 by default (what one answer held before paging),
/// at most 100 (GitHub's own largest page).
pub const LIST_LIMIT: Limit = Limit::new(100, 100);

#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct PrParams {
    /// Pull request number (defaults to the PR linked to the current branch).
    #[serde(default)]
    pub pr_number: Option<u32>,
    /// Repository as `owner/name` (defaults to the repository of the `origin` remote).
    #[serde(default)]
    pub repo: Option<String>,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct ListPrParams {
    /// `open` (default), `closed` or `all`.
    #[serde(default)]
    pub state: Option<String>,
    /// Repository as `owner/name` (defaults to the repository of the `origin` remote).
    #[serde(default)]
    pub repo: Option<String>,
    /// How many pull requests to return (default 100, at most 100).
    #[serde(default)]
    pub limit: Option<u64>,
    /// `page.next_cursor` of the previous answer, to continue after it.
    #[serde(default)]
    pub cursor: Option<String>,
}

fn api_base(ctx: &ServerContext) -> String {
    github::api_base_from_env(ctx.settings.github_api_url.as_deref())
}

/// The web host of the configured API (`github.com`, or a GitHub Enterprise host): the netrc
/// machine that hints name.
fn web_host(ctx: &ServerContext) -> String {
    url::Url::parse(&api_base(ctx))
        .ok()
        .and_then(|u| u.host_str().map(str::to_string))
        .map(|h| h.strip_prefix("api.").map(str::to_string).unwrap_or(h))
        .unwrap_or_else(|| "github.com".to_string())
}

/// Map a client error for the GitHub tools.
fn github_error(ctx: &ServerContext, what: &str, err: RemoteError) -> ToolError {
    to_tool_error(
        Service::GitHub {
            host: &web_host(ctx),
        },
        what,
        err,
    )
}

/// The GitHub client, built on first use and reused; a failure is not cached, so credentials
/// added during the session are picked up.
async fn client(ctx: &ServerContext) -> Result<Arc<GitHubClient>, ToolError> {
    ctx.github
        .get_or_try_init(|| async {
            let base = api_base(ctx);
            let missing = || {
                let host = url::Url::parse(&base)
                    .ok()
                    .and_then(|u| u.host_str().map(str::to_string))
                    .map(|h| h.strip_prefix("api.").map(str::to_string).unwrap_or(h))
                    .unwrap_or_else(|| "github.com".to_string());
                ToolError::new(errors::CREDENTIALS_MISSING, "GitHub credentials not found")
                    .with_hint(format!(
                        "Add credentials for {host} to `~/.netrc`. See `twig auth --help`."
                    ))
            };
            // Without HOME there is no netrc, but the token variables still count.
            let auth = github::credentials(
                ctx.settings.home.as_deref(),
                &base,
                ctx.settings.github_token.as_deref(),
                ctx.settings.gh_token.as_deref(),
            )
            .ok_or_else(missing)?;
            GitHubClient::new(&base, auth, ctx.settings.timeout)
                .map(Arc::new)
                .map_err(|err| github_error(ctx, "GitHub API", err))
        })
        .await
        .cloned()
}

/// A remote URL without any password it may carry (never show secrets in errors).
fn redact(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut parsed) if parsed.password().is_some() || !parsed.username().is_empty() => {
            let _ = parsed.set_password(None);
            let _ = parsed.set_username("");
            parsed.to_string()
        }
        _ => url.to_string(),
    }
}

/// The repository to ask GitHub about: the explicit `owner/name`, else `origin`.
fn resolve_repo(ctx: &ServerContext, explicit: Option<&str>) -> Result<GitHubRepo, ToolError> {
    if let Some(spec) = explicit {
        let parts: Vec<&str> = spec.trim().split('/').collect();
        return match parts.as_slice() {
            [owner, repo]
                if github::valid_name(owner)
                    && github::valid_name(repo.trim_end_matches(".git")) =>
            {
                Ok(GitHubRepo {
                    owner: owner.to_string(),
                    repo: repo.trim_end_matches(".git").to_string(),
                })
            }
            _ => Err(ToolError::invalid_params(format!(
                "`repo` must be `owner/name`, got '{spec}'"
            ))
            .with_hint("Pass the repository as `owner/name`, e.g. `octo/widgets`.")),
        };
    }
    let repo = ctx.require_repo()?;
    let url = repo
        .remote_url("origin")
        .map_err(ToolError::internal)?
        .ok_or_else(|| {
            ToolError::not_found("No remote named 'origin' in this repository")
                .with_hint("Add a GitHub remote named 'origin'.")
        })?;
    github::parse_remote(&url, &api_base(ctx)).ok_or_else(|| {
        ToolError::not_found(format!(
            "Remote 'origin' ({}) is not a GitHub repository",
            redact(&url)
        ))
        .with_hint("Ensure the 'origin' remote points to a GitHub repository.")
    })
}

/// The PR to look at: the explicit number, else the one linked to the current branch.
fn resolve_pr_number(ctx: &ServerContext, explicit: Option<u32>) -> Result<u32, ToolError> {
    if let Some(number) = explicit {
        if number == 0 {
            return Err(ToolError::invalid_params("`pr_number` must be at least 1")
                .with_hint("Pass the number GitHub shows as #N."));
        }
        return Ok(number);
    }
    let branch = ctx.current_branch()?.ok_or_else(|| {
        ToolError::invalid_params("No pr_number provided and could not detect current branch")
            .with_hint("Provide an explicit pr_number parameter.")
    })?;
    let state = ctx.require_state()?;
    state
        .meta(&branch)
        .and_then(|meta| meta.github_pr)
        .ok_or_else(|| {
            ToolError::not_found(format!("Branch '{branch}' has no linked GitHub PR"))
                .with_hint("Provide an explicit pr_number parameter.")
        })
}

fn pr_label(repo: &GitHubRepo, number: u32) -> String {
    format!("Pull request #{number} in {repo}")
}

pub async fn get_pull_request(
    ctx: &ServerContext,
    params: PrParams,
) -> Result<PullRequestResponse, ToolError> {
    let number = resolve_pr_number(ctx, params.pr_number)?;
    let repo = resolve_repo(ctx, params.repo.as_deref())?;
    let client = client(ctx).await?;
    client
        .get_pull_request(&repo, number)
        .await
        .map_err(|err| github_error(ctx, &pr_label(&repo, number), err))
}

pub async fn get_pr_status(
    ctx: &ServerContext,
    params: PrParams,
) -> Result<PrStatusResponse, ToolError> {
    let number = resolve_pr_number(ctx, params.pr_number)?;
    fetch_pr_status(ctx, number, params.repo.as_deref()).await
}

/// The status of PR `number` (used by the tool and by the branch context resource).
pub async fn fetch_pr_status(
    ctx: &ServerContext,
    number: u32,
    repo: Option<&str>,
) -> Result<PrStatusResponse, ToolError> {
    let repo = resolve_repo(ctx, repo)?;
    let client = client(ctx).await?;
    client
        .get_pr_status(&repo, number)
        .await
        .map_err(|err| github_error(ctx, &pr_label(&repo, number), err))
}

/// What the health check needs of GitHub: the client and the `origin` repository, or why
/// GitHub cannot be asked (credentials, remote).
pub async fn for_facts(ctx: &ServerContext) -> Result<(Arc<GitHubClient>, GitHubRepo), ToolError> {
    // Credentials first: without them nothing more is read (the remote means opening the
    // repository's configuration afresh).
    let client = client(ctx).await?;
    Ok((client, resolve_repo(ctx, None)?))
}

/// Whether PR `number` is open, closed or merged.
pub async fn pr_fact(
    ctx: &ServerContext,
    client: &GitHubClient,
    repo: &GitHubRepo,
    number: u32,
) -> Result<PrFact, ToolError> {
    client
        .pull_fact(repo, number)
        .await
        .map_err(|err| github_error(ctx, &pr_label(repo, number), err))
}

/// One page of the repository's pull requests. The cursor seals the GitHub page to resume at
/// and the offset inside it; it is bound to the resolved repository and state.
pub async fn list_pull_requests(
    ctx: &ServerContext,
    params: ListPrParams,
) -> Result<Paged<ListPullRequestsResponse>, ToolError> {
    let limit = LIST_LIMIT.resolve(params.limit)?;
    let state = params
        .state
        .as_deref()
        .map(|s| s.trim().to_ascii_lowercase())
        .unwrap_or_else(|| "open".to_string());
    if !matches!(state.as_str(), "open" | "closed" | "all") {
        return Err(ToolError::invalid_params(format!(
            "`state` must be open, closed or all, got '{state}'"
        ))
        .with_hint("Omit `state` to list open pull requests."));
    }
    let repo = resolve_repo(ctx, params.repo.as_deref())?;
    let cursors = ctx.cursors.bind(
        "list_pull_requests",
        &(api_base(ctx), repo.to_string(), &state),
    );
    let from: Option<PullsPosition> = cursors.start(cursor_arg(params.cursor.as_deref()))?;
    let client = client(ctx).await?;
    let page = client
        .list_pull_requests(&repo, &state, from.as_ref(), limit)
        .await
        .map_err(|err| github_error(ctx, &format!("Repository {repo}"), err))?;
    let next_cursor = page.next.as_ref().map(|next| cursors.encode(next));
    Ok(Paged {
        data: ListPullRequestsResponse {
            pull_requests: page.items,
        },
        page: if page.exact {
            Page::new(page.total, next_cursor)
        } else {
            Page::at_least(page.total, next_cursor)
        },
    })
}
