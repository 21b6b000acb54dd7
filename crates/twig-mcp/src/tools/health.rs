//! `get_stack_health`: the stack's health from git's objects ([`crate::health`]), a page of
//! branches at a time, with the GitHub and Jira facts of the page's branches where those
//! services answer. A service that cannot be asked is one error for the whole answer, never a
//! failed call.

use std::{collections::HashSet, sync::Arc, time::SystemTime};

use futures::StreamExt;
use mcp_common::{ErrorClass, Limit, Paged, ToolError, WireError, page::page_by_offset};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::{
    context::ServerContext,
    graph,
    health::{self, HealthReport, Inputs},
    include::{Include, disabled},
    state::LoadedState,
    tools::{
        github, jira,
        local::{self, TreeParams, cursor_arg},
    },
    types::{
        BranchHealth, BranchTreeResponse, Fact, PruneCandidate, SkipReason, SkippedStep,
        StackHealthResponse,
    },
};

/// Page sizes of `get_stack_health`: 100 branches by default, at most 1000.
pub const HEALTH_LIMIT: Limit = Limit::new(100, 1000);
/// The default of `stale_after_days`, as `twig git stale-branches`.
pub const STALE_AFTER_DAYS: u32 = 30;
/// The largest `stale_after_days` (100 years).
const MAX_STALE_DAYS: u32 = 36_500;
/// Requests in flight at once to one service.
const CONCURRENCY: usize = 8;

#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct HealthParams {
    /// A branch whose subtree to check (it and everything stacked on it); by default every
    /// root's stack and the orphaned branches.
    #[serde(default)]
    pub branch: Option<String>,
    /// A branch whose last commit is older than this many days is stale (default 30).
    #[serde(default)]
    pub stale_after_days: Option<u32>,
    /// How many branches to return (default 100, at most 1000).
    #[serde(default)]
    pub limit: Option<u64>,
    /// `page.next_cursor` of the previous answer, to continue after it.
    #[serde(default)]
    pub cursor: Option<String>,
}

pub async fn get_stack_health(
    ctx: &Arc<ServerContext>,
    params: HealthParams,
    include: Include,
) -> Result<Paged<StackHealthResponse>, ToolError> {
    answer(ctx, params, include, false)
        .await
        .map(|(paged, _)| paged)
}

/// The health and the badges of every branch of the repository, from one assessment (for
/// the `stack-status` prompt, which shows both).
pub async fn health_and_badges(
    ctx: &Arc<ServerContext>,
    include: Include,
) -> Result<(StackHealthResponse, graph::Badges), ToolError> {
    let (paged, badges) = answer(ctx, HealthParams::default(), include, true).await?;
    Ok((paged.data, badges.unwrap_or_default()))
}

/// One page of the health; with `with_badges`, the badges of every branch of the scope too.
async fn answer(
    ctx: &Arc<ServerContext>,
    params: HealthParams,
    include: Include,
    with_badges: bool,
) -> Result<(Paged<StackHealthResponse>, Option<graph::Badges>), ToolError> {
    let limit = HEALTH_LIMIT.resolve(params.limit)?;
    let stale_after_days = params.stale_after_days.unwrap_or(STALE_AFTER_DAYS);
    if stale_after_days > MAX_STALE_DAYS {
        return Err(ToolError::invalid_params(format!(
            "`stale_after_days` must be at most {MAX_STALE_DAYS}, got {stale_after_days}"
        ))
        .with_hint("Pass a number of days such as 30, or omit it."));
    }
    let scope = match params.branch.as_deref().map(str::trim) {
        None => None,
        Some("") => {
            return Err(ToolError::invalid_params("`branch` must not be empty")
                .with_hint("Pass a branch name, or omit `branch` to check every stack."));
        }
        Some(name) => Some(name.to_string()),
    };
    let cursors = ctx
        .cursors
        .bind("get_stack_health", &(&scope, stale_after_days));
    // Check the cursor before any work: a bad one is the caller's error.
    let _: Option<usize> = cursors.start(cursor_arg(params.cursor.as_deref()))?;
    let state = ctx.require_state()?;
    if let Some(scope) = &scope
        && !state.names(scope)
    {
        return Err(ToolError::not_found(format!(
            "Branch '{}' is not tracked by twig",
            local::quoted(scope)
        ))
        .with_hint(
            "Pass a branch twig tracks (see `list_branches`), or omit `branch` to check every stack.",
        ));
    }
    let mut report = assess(ctx, state.clone(), scope.clone(), stale_after_days).await?;
    let (mut branches, page) = page_by_offset(
        &report.branches,
        &cursors,
        cursor_arg(params.cursor.as_deref()),
        limit,
    )?;
    let badges = with_badges.then(|| graph::Badges::of(std::mem::take(&mut report.branches)));
    let head = ctx.current_branch().ok().flatten();
    let remote = add_remote_facts(ctx, &state, &mut branches, head.as_deref(), include).await;
    let mut summary = report.summary;
    summary.merged += remote.newly_merged;
    summary.empty = summary.empty.saturating_sub(remote.no_longer_empty);
    let mut prune = report.prune;
    let listed: HashSet<String> = prune.iter().map(|p| p.branch.clone()).collect();
    let mut truncated = report.truncated;
    for candidate in remote.prune {
        if !listed.contains(&candidate.branch) {
            if prune.len() < health::MAX_LIST {
                prune.push(candidate);
            } else {
                truncated = true;
            }
        }
    }
    // A branch only its merged pull request shows merged is not rebased either.
    let mut rebase_order = report.rebase_order;
    let mut skipped = report.skipped;
    let mut skipped_more = report.skipped_more;
    rebase_order.retain(|step| {
        if !remote.merged_by_pr.contains(&step.branch) {
            return true;
        }
        if skipped.len() < health::MAX_SKIPPED {
            skipped.push(SkippedStep {
                branch: step.branch.clone(),
                reason: SkipReason::Merged,
                detail: "its pull request is merged: not rebased (prune it instead; re-parent its children first)".to_string(),
            });
        } else {
            skipped_more += 1;
        }
        false
    });
    let paged = Paged {
        data: StackHealthResponse {
            scope,
            stale_after_days,
            summary,
            branches,
            rebase_order,
            skipped,
            skipped_more,
            prune,
            untracked: report.untracked,
            truncated,
            github: remote.github,
            jira: remote.jira,
        },
        page,
    };
    Ok((paged, badges))
}

/// `get_branch_tree`, with health badges in its text when `health` is true.
pub async fn get_branch_tree(
    ctx: &Arc<ServerContext>,
    params: TreeParams,
) -> Result<BranchTreeResponse, ToolError> {
    if params.health != Some(true) {
        return local::get_branch_tree(ctx, &params, None);
    }
    let badges = badges(ctx).await?;
    local::get_branch_tree(ctx, &params, Some(&badges))
}

/// The health badges of every branch of the repository (from git alone).
pub async fn badges(ctx: &Arc<ServerContext>) -> Result<graph::Badges, ToolError> {
    let state = ctx.require_state()?;
    let report = assess(ctx, state, None, STALE_AFTER_DAYS).await?;
    Ok(graph::Badges::of(report.branches))
}

/// The git part, on a blocking thread: it reads refs and walks commits.
async fn assess(
    ctx: &Arc<ServerContext>,
    state: Arc<LoadedState>,
    scope: Option<String>,
    stale_after_days: u32,
) -> Result<HealthReport, ToolError> {
    ctx.require_repo()?;
    let ctx = ctx.clone();
    tokio::task::spawn_blocking(move || {
        let repo = ctx.require_repo()?;
        let head = repo.current_branch();
        let now = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map(|d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
            .unwrap_or(0);
        health::assess(
            repo,
            &Inputs {
                state: &state,
                head: head.as_deref(),
                scope: scope.as_deref(),
                stale_after_days,
                now,
            },
        )
        .map_err(ToolError::internal)
    })
    .await
    .map_err(|err| ToolError::internal(format!("the health check stopped: {err}")))?
}

/// What the remote services added: why a whole service is missing, and the branches a merged
/// pull request or a done issue makes prunable.
#[derive(Default)]
struct Remote {
    github: Option<WireError>,
    jira: Option<WireError>,
    prune: Vec<PruneCandidate>,
    /// Branches of the page that only their merged pull request shows merged.
    newly_merged: u64,
    /// Of those, the branches git alone called empty.
    no_longer_empty: u64,
    /// Their names.
    merged_by_pr: HashSet<String>,
}

/// A failure that every further request to the service would meet too.
fn service_wide(error: &ToolError) -> bool {
    matches!(
        error.class(),
        ErrorClass::Unavailable
            | ErrorClass::RateLimited
            | ErrorClass::Unauthenticated
            | ErrorClass::PermissionDenied
    )
}

/// Ask one service about each item (for the branch at its index), at most [`CONCURRENCY`]
/// at a time; stop at the first failure every further request would meet too, and answer it
/// apart from the answers got.
async fn ask_each<K, T, F, Fut>(
    items: Vec<(usize, K)>,
    ask: F,
) -> (Vec<(usize, Result<T, ToolError>)>, Option<ToolError>)
where
    F: Fn(K) -> Fut,
    Fut: std::future::Future<Output = Result<T, ToolError>>,
{
    let mut answers = futures::stream::iter(items.into_iter().map(|(i, item)| {
        let asked = ask(item);
        async move { (i, asked.await) }
    }))
    .buffered(CONCURRENCY);
    let mut got = Vec::new();
    while let Some((i, answer)) = answers.next().await {
        match answer {
            Err(error) if service_wide(&error) => return (got, Some(error)),
            answer => got.push((i, answer)),
        }
    }
    (got, None)
}

/// Ask GitHub and Jira about the linked PRs and issues of `branches` (the page), at most
/// [`CONCURRENCY`] requests at a time per service; stop asking a service once it fails for
/// every request (no credentials, unreachable, rate limited).
async fn add_remote_facts(
    ctx: &ServerContext,
    state: &LoadedState,
    branches: &mut [BranchHealth],
    head: Option<&str>,
    include: Include,
) -> Remote {
    let mut remote = Remote::default();
    let meta = |h: &BranchHealth| state.meta(&h.branch);
    let prs: Vec<(usize, u32)> = branches
        .iter()
        .enumerate()
        .filter_map(|(i, h)| Some((i, meta(h)?.github_pr?)))
        .collect();
    let issues: Vec<(usize, String)> = branches
        .iter()
        .enumerate()
        .filter_map(|(i, h)| Some((i, meta(h)?.jira_issue.as_deref()?.to_string())))
        .collect();

    if !prs.is_empty() {
        let (answers, failure) = if !include.github {
            (Vec::new(), Some(disabled("GitHub", "github")))
        } else {
            match github::for_facts(ctx).await {
                Err(error) => (Vec::new(), Some(error)),
                Ok((client, repo)) => {
                    let (client, repo) = (&client, &repo);
                    ask_each(prs, |n| github::pr_fact(ctx, client, repo, n)).await
                }
            }
        };
        for (i, answer) in answers {
            branches[i].pull_request = Some(Fact::from(answer));
        }
        remote.github = failure.map(|error| (&error).into());
    }
    if !issues.is_empty() {
        let (answers, failure) = if !include.jira {
            (Vec::new(), Some(disabled("Jira", "jira")))
        } else {
            match jira::for_facts(ctx).await {
                Err(error) => (Vec::new(), Some(error)),
                Ok(client) => {
                    let client = &client;
                    ask_each(issues, |key: String| async move {
                        jira::issue_fact(client, &key).await
                    })
                    .await
                }
            }
        };
        for (i, answer) in answers {
            branches[i].jira_issue = Some(Fact::from(answer));
        }
        remote.jira = failure.map(|error| (&error).into());
    }

    // twig's prune plugin: a merged pull request, or failing that a done Jira issue.
    let mut newly = Vec::new();
    for branch in branches.iter_mut() {
        let merged_pr = match &branch.pull_request {
            Some(Fact::Ok { data }) if data.merged => Some(data.number),
            _ => None,
        };
        let done_issue = match &branch.jira_issue {
            Some(Fact::Ok { data }) if data.done => Some(data.key.clone()),
            _ => None,
        };
        if merged_pr.is_some() && !branch.merged {
            branch.merged = true;
            // Its work was merged through the pull request (squash-merged, then rebased away).
            if branch.empty {
                branch.empty = false;
                remote.no_longer_empty += 1;
            }
            remote.newly_merged += 1;
            remote.merged_by_pr.insert(branch.branch.clone());
        }
        let reason = match (merged_pr, done_issue) {
            (Some(number), _) => format!("pull request #{number} merged"),
            (None, Some(key)) => format!("Jira {key} done"),
            (None, None) => continue,
        };
        if !branch.prune && health::prunable(branch, head) {
            branch.prune = true;
            newly.push((branch.branch.clone(), reason));
        }
    }
    remote.prune = health::prune_candidates(state, newly);
    remote
}
