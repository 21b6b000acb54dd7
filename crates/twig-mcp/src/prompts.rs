//! The prompts `stack-status` and `branch-context`: the branch context gathered into a single
//! user message that asks the assistant for a summary.

use std::fmt::Write as _;

use rmcp::{
    ErrorData as McpError,
    model::{GetPromptRequestParams, GetPromptResult, Prompt, PromptArgument, PromptMessage, Role},
};

use std::sync::Arc;

use crate::{
    context::ServerContext,
    graph::{BranchGraph, annotate},
    include::Include,
    tools::{health, local::branch_metadata},
    types::StackHealthResponse,
};

pub const STACK_STATUS: &str = "stack-status";
pub const BRANCH_CONTEXT: &str = "branch-context";

pub const STACK_STATUS_ASK: &str =
    "Summarize the current state of this PR stack, including review status and CI results.";
pub const BRANCH_CONTEXT_ASK: &str = "Describe what I'm working on based on this branch context, including its Jira issue and pull request.";
pub const NO_DATA: &str = "No repository or branch data available.";
pub const NOT_ON_BRANCH: &str = "I'm not currently on a git branch. What should I work on?";

/// How many branches the details section of `stack-status` lists before it says how many
/// more there are (keeps the prompt within a model's context on huge states).
const MAX_DETAILS: usize = 200;

pub fn list() -> Vec<Prompt> {
    vec![
        Prompt::new(
            STACK_STATUS,
            Some(
                "Summarize the current state of my PR stack, including review status and CI results.",
            ),
            None,
        ),
        Prompt::new(
            BRANCH_CONTEXT,
            Some("What am I working on? Describe the current branch's Jira issue and PR."),
            Some(vec![
                PromptArgument::new("branch")
                    .with_description("Branch to describe (defaults to the current branch)")
                    .with_required(false),
            ]),
        ),
    ]
}

pub async fn get(
    ctx: &Arc<ServerContext>,
    request: &GetPromptRequestParams,
    include: Include,
) -> Result<GetPromptResult, McpError> {
    let text = match request.name.as_str() {
        STACK_STATUS => stack_status(ctx, include).await,
        BRANCH_CONTEXT => {
            let branch = request
                .arguments
                .as_ref()
                .and_then(|args| args.get("branch"))
                .and_then(|v| v.as_str())
                .map(str::trim)
                .filter(|b| !b.is_empty())
                .map(str::to_string);
            branch_context(ctx, branch)
        }
        other => {
            return Err(McpError::invalid_params(
                format!(
                    "Unknown prompt '{other}'. Available prompts: {STACK_STATUS}, {BRANCH_CONTEXT}."
                ),
                None,
            ));
        }
    };
    Ok(GetPromptResult::new(vec![PromptMessage::new_text(
        Role::User,
        text,
    )]))
}

/// The current branch, the trees with health badges, the stack's health (what
/// `twig://repo/health` holds: rebase order, prune candidates, untracked branches) and each
/// branch's links.
async fn stack_status(ctx: &Arc<ServerContext>, include: Include) -> String {
    let (Ok(repo), Ok(state)) = (ctx.require_repo(), ctx.require_state()) else {
        return NO_DATA.to_string();
    };
    // Badges for every branch of the trees, not only the health's first page.
    let (health, badges) = match health::health_and_badges(ctx, include).await {
        Ok((health, badges)) => (Some(health), Some(badges)),
        Err(_) => (None, None),
    };
    let current = repo.current_branch();
    let mut text = String::new();
    let _ = writeln!(
        text,
        "Current branch: {}",
        current.as_deref().unwrap_or("(detached HEAD)")
    );

    if let Ok(local) = repo.local_branches() {
        let graph = BranchGraph::build(&local, &state, current.as_deref());
        if !graph.is_empty() {
            text.push_str("\nBranch trees:\n");
            let roots = graph.root_candidates();
            for (i, root) in roots.iter().enumerate() {
                // The orphans once, after the last tree.
                let orphans = i + 1 == roots.len();
                text.push_str(&graph.tree(root, &state, orphans, badges.as_ref()).tree_text);
            }
        }
    }
    if let Some(health) = &health {
        write_health(&mut text, health);
    }

    let names = state.sorted_branches();
    let count = names.len();
    text.push_str("\nBranches:\n");
    if count == 0 {
        text.push_str("(no branches tracked by twig)\n");
    }
    for name in names.take(MAX_DETAILS) {
        let meta = branch_metadata(Some(&state), name);
        let _ = writeln!(
            text,
            "- {}: Jira {}, PR {}, parent {}",
            name,
            meta.jira_issue.as_deref().unwrap_or("none"),
            meta.pr_number
                .map(|n| format!("#{n}"))
                .as_deref()
                .unwrap_or("none"),
            meta.parent_branch.as_deref().unwrap_or("none"),
        );
    }
    if count > MAX_DETAILS {
        let _ = writeln!(text, "… and {} more branches", count - MAX_DETAILS);
    }
    text.push('\n');
    text.push_str(STACK_STATUS_ASK);
    text
}

/// The health section: counts, rebase order, prune candidates and untracked branches.
fn write_health(text: &mut String, health: &StackHealthResponse) {
    let s = &health.summary;
    let _ = writeln!(
        text,
        "\nHealth ({} branches): {} need a rebase, {} merged, {} empty (no commit of their own, not merged), {} stale (last commit over {} days ago), {} without a git branch, {} orphaned",
        s.branches,
        s.needs_rebase,
        s.merged,
        s.empty,
        s.stale,
        health.stale_after_days,
        s.missing,
        s.orphans
    );
    if !health.rebase_order.is_empty() {
        text.push_str("Rebase order (parents first):\n");
        for step in health.rebase_order.iter().take(MAX_DETAILS) {
            let _ = writeln!(text, "- {} onto {}", step.branch, step.onto.join(" and "));
        }
    }
    if !health.skipped.is_empty() {
        text.push_str("Left out of the rebase order (`twig cascade` would try them):\n");
        for step in health.skipped.iter().take(MAX_DETAILS) {
            let _ = writeln!(text, "- {}: {}", step.branch, step.detail);
        }
    }
    if !health.prune.is_empty() {
        text.push_str("Could be pruned:\n");
        for candidate in health.prune.iter().take(MAX_DETAILS) {
            let _ = writeln!(text, "- {}: {}", candidate.branch, candidate.reason);
        }
    }
    if !health.untracked.is_empty() {
        let shown: Vec<&str> = health
            .untracked
            .iter()
            .take(MAX_DETAILS)
            .map(String::as_str)
            .collect();
        let _ = writeln!(
            text,
            "Git branches twig does not track: {}",
            shown.join(", ")
        );
    }
}

fn branch_context(ctx: &ServerContext, branch: Option<String>) -> String {
    let branch = match branch {
        Some(branch) => branch,
        None => match ctx.current_branch() {
            Ok(Some(branch)) => branch,
            _ => return NOT_ON_BRANCH.to_string(),
        },
    };
    let state = ctx.try_state();
    let meta = branch_metadata(state.as_deref(), &branch);
    let mut text = String::new();
    let _ = writeln!(
        text,
        "Branch: {}",
        annotate(&meta.branch, meta.jira_issue.as_deref(), meta.pr_number)
    );
    let _ = writeln!(
        text,
        "Parent branch: {}",
        meta.parent_branch.as_deref().unwrap_or("none")
    );
    let _ = writeln!(
        text,
        "Jira issue: {}",
        meta.jira_issue.as_deref().unwrap_or("none")
    );
    let _ = writeln!(
        text,
        "Pull request: {}",
        meta.pr_number
            .map(|n| format!("#{n}"))
            .as_deref()
            .unwrap_or("none")
    );
    let _ = writeln!(
        text,
        "Created: {}",
        meta.created_at.as_deref().unwrap_or("unknown")
    );
    text.push('\n');
    text.push_str(BRANCH_CONTEXT_ASK);
    text
}
