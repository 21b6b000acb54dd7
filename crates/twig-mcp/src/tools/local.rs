//! The local state tools: no network, answered from `.twig/state.json`, the registry and git.

use mcp_common::page::page_by_offset;
use mcp_common::{Limit, Page, Paged, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::{
    context::ServerContext,
    errors,
    graph::{Badges, BranchGraph},
    health,
    state::{LoadedState, load_registry, registry_path},
    types::*,
};

/// Metadata of `branch` from the state (fields without a value are omitted).
pub fn branch_metadata(state: Option<&LoadedState>, branch: &str) -> BranchMetadataResponse {
    let meta = state.and_then(|s| s.meta(branch));
    BranchMetadataResponse {
        branch: branch.to_string(),
        jira_issue: meta.and_then(|m| m.jira_issue.as_deref().map(str::to_string)),
        pr_number: meta.and_then(|m| m.github_pr),
        parent_branch: state.and_then(|s| s.primary_parent(branch).map(str::to_string)),
        parents: state
            .map(|s| {
                s.parents(branch)
                    .take(health::MAX_PARENTS)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default(),
        more_parents: state.map_or(0, |s| {
            s.parents(branch).skip(health::MAX_PARENTS).count() as u64
        }),
        created_at: meta.and_then(|m| m.created_at.as_deref().map(str::to_string)),
    }
}

/// A branch name as an error message quotes it: at most 200 characters (a request's huge
/// input is never echoed whole).
pub fn quoted(branch: &str) -> String {
    mcp_common::clip(branch, 200)
}

/// `not_found` for a branch twig does not track (no link, dependency or root names it).
pub fn not_tracked(branch: &str) -> ToolError {
    let branch = quoted(branch);
    ToolError::not_found(format!("Branch '{branch}' not found in twig state")).with_hint(
        "Use `list_branches` to see the branches twig tracks (linked, in a dependency, or a root).",
    )
}

fn require_name<'a>(value: &'a str, param: &str) -> Result<&'a str, ToolError> {
    let trimmed = value.trim();
    if trimmed.is_empty() {
        return Err(
            ToolError::invalid_params(format!("`{param}` must not be empty"))
                .with_hint(format!("Pass a branch name as `{param}`.")),
        );
    }
    Ok(trimmed)
}

pub fn get_current_branch(ctx: &ServerContext) -> Result<BranchMetadataResponse, ToolError> {
    let Some(branch) = ctx.current_branch()? else {
        return Err(
            ToolError::not_found("Not on any branch (detached HEAD state)").with_hint(
                "Check out a branch, or ask about a branch by name with `get_branch_metadata`.",
            ),
        );
    };
    // Degrades gracefully: without twig state, only the branch name is known.
    let state = ctx.try_state();
    Ok(branch_metadata(state.as_deref(), &branch))
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct BranchParams {
    /// The branch name to look up.
    pub branch: String,
}

pub fn get_branch_metadata(
    ctx: &ServerContext,
    params: BranchParams,
) -> Result<BranchMetadataResponse, ToolError> {
    let branch = require_name(&params.branch, "branch")?;
    let state = ctx.require_state()?;
    if !state.names(branch) {
        return Err(not_tracked(branch));
    }
    Ok(branch_metadata(Some(&state), branch))
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct TreeParams {
    /// Root branch of the tree (defaults to the repository's default root branch).
    #[serde(default)]
    pub branch: Option<String>,
    /// Add health badges to the text: `↑2 ↓1` (ahead/behind the parent drawn above),
    /// `merged`, `empty` (nothing of its own, not merged), `stale 40d` (see
    /// `get_stack_health`). Default false.
    #[serde(default)]
    pub health: Option<bool>,
}

/// The tree; `badges` (by branch) are added to its text when given.
pub fn get_branch_tree(
    ctx: &ServerContext,
    params: &TreeParams,
    badges: Option<&Badges>,
) -> Result<BranchTreeResponse, ToolError> {
    let repo = ctx.require_repo()?;
    let state = ctx.require_state()?;
    let local = repo.local_branches().map_err(ToolError::internal)?;
    let head = repo.current_branch();
    let graph = BranchGraph::build(&local, &state, head.as_deref());
    if graph.is_empty() {
        return Err(
            ToolError::not_found("No branches found in repository").with_hint(
                "Create a branch with at least one commit (e.g. `git commit` on main), then retry.",
            ),
        );
    }
    let root = match params.branch.as_deref() {
        Some(branch) => {
            let branch = require_name(branch, "branch")?;
            if !graph.contains(branch) {
                return Err(ToolError::not_found(format!(
                    "Branch '{}' not found in repository",
                    quoted(branch)
                ))
                .with_hint(
                    "Pass the name of a local branch, or omit `branch` to start at the default root.",
                ));
            }
            branch.to_string()
        }
        None => graph.root_candidates().first().cloned().ok_or_else(|| {
            ToolError::not_found("No root branch found in repository")
                .with_hint("Configure a root branch with `twig branch root add <branch>`.")
        })?,
    };
    Ok(graph.tree(&root, &state, params.branch.is_none(), badges))
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct StackParams {
    /// Branch to start from (defaults to the current branch).
    #[serde(default)]
    pub branch: Option<String>,
}

/// The most branches one stack shows: a longer chain is cut there and `truncated` is set
/// (as `get_branch_tree` does with its depth and size bounds). The walk stops there too.
pub const MAX_STACK: usize = 200;

pub fn get_branch_stack(
    ctx: &ServerContext,
    params: StackParams,
) -> Result<BranchStackResponse, ToolError> {
    let (start, named) = match params.branch.as_deref() {
        Some(branch) => {
            ctx.require_repo()?;
            (require_name(branch, "branch")?.to_string(), true)
        }
        None => {
            let current = ctx.current_branch()?.ok_or_else(|| {
                ToolError::not_found("Not on any branch (detached HEAD)")
                    .with_hint("Check out a branch, or pass `branch` explicitly.")
            })?;
            (current, false)
        }
    };
    let state = ctx.require_state()?;
    // A named branch must exist, as in the other tools: in twig's state or as a local branch.
    if named && !state.names(&start) {
        let repo = ctx.require_repo()?;
        let local = repo.local_branches().map_err(ToolError::internal)?;
        if local.binary_search(&start).is_err() {
            return Err(ToolError::not_found(format!(
                "Branch '{}' not found in twig state or repository",
                quoted(&start)
            ))
            .with_hint(
                "Use `list_branches` to see tracked branches, pass the name of a local branch, or omit `branch` to start at the current branch.",
            ));
        }
    }
    let (chain, truncated) = state.ancestry(&start, MAX_STACK);
    let stack = chain
        .iter()
        .map(|branch| branch_metadata(Some(&state), branch))
        .collect();
    Ok(BranchStackResponse { stack, truncated })
}

/// Page sizes of `list_branches`: 200 by default, at most 1000.
pub const BRANCH_LIMIT: Limit = Limit::new(200, 1000);
/// Page sizes of `list_repositories`: 200 by default, at most 1000.
pub const REPOSITORY_LIMIT: Limit = Limit::new(200, 1000);

/// The `cursor` argument; an empty string is no cursor (the first page), as it always was.
/// Anything else, blanks included, must be a cursor this server sealed for the query:
/// `Cursors::start` refuses the rest as `invalid_params`, never answering a made-up position.
pub(crate) fn cursor_arg(cursor: Option<&str>) -> Option<&str> {
    cursor.filter(|c| !c.is_empty())
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct ListBranchesParams {
    /// How many branches to return (default 200, at most 1000).
    #[serde(default)]
    pub limit: Option<u64>,
    /// `page.next_cursor` of the previous answer, to continue after it.
    #[serde(default)]
    pub cursor: Option<String>,
}

/// One page of tracked branches, in name order. The cursor seals the last branch name of the
/// page, so a branch added or removed between calls neither repeats nor hides another.
pub fn list_branches(
    ctx: &ServerContext,
    params: ListBranchesParams,
) -> Result<Paged<ListBranchesResponse>, ToolError> {
    let limit = BRANCH_LIMIT.resolve(params.limit)?;
    let cursors = ctx.cursors.bind("list_branches", &());
    let after: Option<String> = cursors.start(cursor_arg(params.cursor.as_deref()))?;
    let state = ctx.require_state()?;
    let mut names: Box<dyn Iterator<Item = &str>> = match after.as_deref() {
        None => Box::new(state.sorted_branches()),
        Some(after) => Box::new(state.branches_after(after)),
    };
    let page: Vec<&str> = names.by_ref().take(limit).collect();
    let next_cursor = names
        .next()
        .and(page.last())
        .map(|last| cursors.encode(&last));
    let branches = page
        .iter()
        .map(|name| branch_metadata(Some(&state), name))
        .collect();
    Ok(Paged {
        data: ListBranchesResponse { branches },
        page: Page::new(state.tracked_count() as u64, next_cursor),
    })
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct ListRepositoriesParams {
    /// How many repositories to return (default 200, at most 1000).
    #[serde(default)]
    pub limit: Option<u64>,
    /// `page.next_cursor` of the previous answer, to continue after it.
    #[serde(default)]
    pub cursor: Option<String>,
}

/// One page of the registry, in its own order (the order `twig` registered them).
pub fn list_repositories(
    ctx: &ServerContext,
    params: ListRepositoriesParams,
) -> Result<Paged<ListRepositoriesResponse>, ToolError> {
    let limit = REPOSITORY_LIMIT.resolve(params.limit)?;
    let cursors = ctx.cursors.bind("list_repositories", &());
    // Check the cursor before reading anything: a bad one is the caller's error.
    let _: Option<usize> = cursors.start(cursor_arg(params.cursor.as_deref()))?;
    let path = registry_path(
        ctx.settings.xdg_data_home.as_deref(),
        ctx.settings.home.as_deref(),
    )
    .ok_or_else(|| {
        ToolError::new(
            errors::INTERNAL,
            "Failed to load registry: neither XDG_DATA_HOME nor HOME is set",
        )
        .with_hint("Start twig-mcp with HOME (or XDG_DATA_HOME) set, as twig itself needs.")
    })?;
    let entries = load_registry(&path).map_err(|err| {
        ToolError::new(errors::INTERNAL, format!("Failed to load registry: {err}")).with_hint(
            format!(
                "Check that {} is the JSON array twig writes, or remove it to start over.",
                path.display()
            ),
        )
    })?;
    let all: Vec<RepositoryInfo> = entries
        .into_iter()
        .map(|e| RepositoryInfo {
            name: e.name,
            path: e.path,
        })
        .collect();
    let (repositories, page) =
        page_by_offset(&all, &cursors, cursor_arg(params.cursor.as_deref()), limit)?;
    Ok(Paged {
        data: ListRepositoriesResponse { repositories },
        page,
    })
}

/// Page sizes of `get_worktrees`: 200 by default, at most 1000.
pub const WORKTREE_LIMIT: Limit = Limit::new(200, 1000);

#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct WorktreesParams {
    /// How many worktrees to return (default 200, at most 1000).
    #[serde(default)]
    pub limit: Option<u64>,
    /// `page.next_cursor` of the previous answer, to continue after it.
    #[serde(default)]
    pub cursor: Option<String>,
}

/// One page of the worktrees as git has them, each compared with twig's record: the branch
/// git checked out there (not the state's word for it), and whether twig's state disagrees.
/// twig's records first (in the state's order), then git's other worktrees. Works without
/// `.twig/state.json` (every worktree is then `not_in_twig`); a state file that cannot be read
/// is still `no_twig_state`.
pub fn get_worktrees(
    ctx: &ServerContext,
    params: WorktreesParams,
) -> Result<Paged<ListWorktreesResponse>, ToolError> {
    let limit = WORKTREE_LIMIT.resolve(params.limit)?;
    let cursors = ctx.cursors.bind("get_worktrees", &());
    // Check the cursor before reading anything: a bad one is the caller's error.
    let _: Option<usize> = cursors.start(cursor_arg(params.cursor.as_deref()))?;
    let repo = ctx.require_repo()?;
    let recorded = if ctx.state_file().is_some_and(|path| !path.exists()) {
        None
    } else {
        Some(ctx.require_state()?)
    };
    let git = repo.worktrees().map_err(ToolError::internal)?;
    let mut matched = vec![false; git.len()];
    let mut worktrees = Vec::new();
    let records = recorded.iter().flat_map(|s| s.state.worktrees.iter());
    for record in records {
        let path = std::path::Path::new(&record.path);
        let canonical = std::fs::canonicalize(path).ok();
        // Two records may name one worktree (through a symbolic link and its target).
        let found = git
            .iter()
            .enumerate()
            .find(|(_, w)| Some(&w.path) == canonical.as_ref() || w.path == path);
        let Some((i, worktree)) = found else {
            worktrees.push(WorktreeInfo {
                name: record.name.clone(),
                path: record.path.clone(),
                branch: record.branch.clone(),
                twig_branch: None,
                status: WorktreeStatus::Missing,
            });
            continue;
        };
        matched[i] = true;
        let (branch, twig_branch, status) = match &worktree.branch {
            _ if !worktree.exists => (record.branch.clone(), None, WorktreeStatus::Missing),
            None => (
                String::new(),
                Some(record.branch.clone()),
                WorktreeStatus::Detached,
            ),
            Some(branch) if *branch == record.branch => (branch.clone(), None, WorktreeStatus::Ok),
            Some(branch) => (
                branch.clone(),
                Some(record.branch.clone()),
                WorktreeStatus::BranchDiffers,
            ),
        };
        worktrees.push(WorktreeInfo {
            name: record.name.clone(),
            path: record.path.clone(),
            branch,
            twig_branch,
            status,
        });
    }
    for (worktree, _) in git.iter().zip(&matched).filter(|(_, m)| !**m) {
        worktrees.push(WorktreeInfo {
            name: worktree.id.clone(),
            path: worktree.path.display().to_string(),
            branch: worktree.branch.clone().unwrap_or_default(),
            twig_branch: None,
            status: if !worktree.exists {
                WorktreeStatus::Missing
            } else if worktree.branch.is_none() {
                WorktreeStatus::Detached
            } else {
                WorktreeStatus::NotInTwig
            },
        });
    }
    let (worktrees, page) = page_by_offset(
        &worktrees,
        &cursors,
        cursor_arg(params.cursor.as_deref()),
        limit,
    )?;
    Ok(Paged {
        data: ListWorktreesResponse { worktrees },
        page,
    })
}
