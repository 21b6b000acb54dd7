//! Response types of the tools, as the design document gives them. The list tools answer one
//! page of their list as `data`; the envelope's `page` says the total and the next cursor.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// For `skip_serializing_if`: a count of zero is left out.
fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Response for `get_current_branch` and `get_branch_metadata`; also one entry of a stack or
/// branch list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BranchMetadataResponse {
    pub branch: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jira_issue: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pr_number: Option<u32>,
    /// The primary parent (twig's first declared one), as `parents[0]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_branch: Option<String>,
    /// The parents twig declares for the branch (`twig branch depend` adds one), the primary
    /// first, at most 50 (a hand-made state may declare thousands; `more_parents` counts the
    /// rest); empty for a root or a branch without dependencies.
    #[serde(default)]
    pub parents: Vec<String>,
    /// How many declared parents `parents` does not list.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub more_parents: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
}

/// Response for `get_branch_tree`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BranchTreeResponse {
    /// The branch at the root of the tree.
    pub root: String,
    /// The tree drawn with box-drawing characters, one branch per line.
    pub tree_text: String,
    /// The tree as data: the root node and its descendants.
    pub branches: Vec<BranchTreeNode>,
    /// Branches without any existing parent that are not roots, by name, listed apart (as
    /// `twig tree` does when no root is marked default). Only for the tree of the first root
    /// (no `branch` given). Empty when a default root is set: `twig tree` then draws them
    /// under it, and so does this tree (`orphan: true`, `[orphan]` in the text).
    #[serde(default)]
    pub orphans: Vec<String>,
    /// True when the tree was cut (deeper than 40 levels or more than 5,000 branches); cut
    /// branches end with ` …` in `tree_text`.
    pub truncated: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BranchTreeNode {
    pub branch: String,
    pub children: Vec<BranchTreeNode>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jira_issue: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pr_number: Option<u32>,
    /// This branch has several parents and is shown in full elsewhere in the tree (under
    /// `shown_under`); here it has no children. Text: `[repeat: in full under P]`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub repeat: bool,
    /// Where a repeated branch is shown in full.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shown_under: Option<String>,
    /// The branch's other parents, under which it is repeated, at most 10. Text:
    /// `[also under: Q]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub also_under: Vec<String>,
    /// How many other parents `also_under` does not list (the text then ends with ` …`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub also_under_more: u64,
    /// No parent declared (or none git has), not a root: drawn under the default root as
    /// `twig tree` draws it, which declares no dependency on it. Text: `[orphan]`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub orphan: bool,
}

/// Response for `get_branch_stack`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BranchStackResponse {
    /// Ordered from the queried branch (index 0) up to the root.
    pub stack: Vec<BranchMetadataResponse>,
    /// True when the chain was cut (longer than 200 branches): the last entry has ancestors
    /// that are not shown; ask again from its `parent_branch` to continue.
    pub truncated: bool,
}

/// Response for `list_branches` (one page) and the `twig://repo/branches` resource (all).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ListBranchesResponse {
    pub branches: Vec<BranchMetadataResponse>,
}

/// Response for `list_repositories`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ListRepositoriesResponse {
    pub repositories: Vec<RepositoryInfo>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RepositoryInfo {
    pub name: String,
    pub path: String,
}

/// Response for `get_worktrees` (one page).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ListWorktreesResponse {
    pub worktrees: Vec<WorktreeInfo>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct WorktreeInfo {
    pub name: String,
    pub path: String,
    /// The branch git has checked out there; twig's record when git does not have the
    /// worktree (`missing`); empty when git's HEAD there is detached.
    pub branch: String,
    /// What twig's state records there, when it differs from what git has checked out (twig
    /// 0.7 records `feature/x` where git checked out `feature-x`), or git's HEAD is detached.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub twig_branch: Option<String>,
    pub status: WorktreeStatus,
}

/// How a worktree as git has it compares with twig's record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum WorktreeStatus {
    /// Git and twig agree.
    Ok,
    /// Git has another branch checked out than twig recorded (see `twig_branch`).
    BranchDiffers,
    /// Git's HEAD there is detached.
    Detached,
    /// twig records it but git has no such worktree, or its directory is gone (moved or
    /// deleted; `git worktree prune` forgets it).
    Missing,
    /// A worktree git has that twig did not record (`git worktree add`).
    NotInTwig,
}

/// Response for `get_pull_request`; also an entry of `list_pull_requests`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PullRequestResponse {
    pub number: u32,
    pub title: String,
    /// `open` or `closed`, as GitHub reports it.
    pub state: String,
    pub author: String,
    /// The branch the PR merges into.
    pub base: String,
    /// The branch the PR comes from.
    pub head: String,
    pub draft: bool,
    /// Whether GitHub can merge the PR cleanly; null while GitHub is still computing it (and
    /// always in PR lists, where GitHub does not report it).
    pub mergeable: Option<bool>,
    pub created_at: String,
    pub updated_at: String,
}

/// Response for `get_pr_status`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PrStatusResponse {
    pub pull_request: PullRequestResponse,
    pub reviews: Vec<ReviewInfo>,
    pub checks: Vec<CheckRunInfo>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ReviewInfo {
    pub author: String,
    /// `APPROVED`, `CHANGES_REQUESTED`, `COMMENTED`, `DISMISSED` or `PENDING`.
    pub state: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CheckRunInfo {
    pub name: String,
    /// `queued`, `in_progress` or `completed`.
    pub status: String,
    /// Set once the check completed: `success`, `failure`, `neutral`, `cancelled`, `skipped`,
    /// `timed_out` or `action_required`.
    pub conclusion: Option<String>,
}

/// Response for `list_pull_requests`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ListPullRequestsResponse {
    pub pull_requests: Vec<PullRequestResponse>,
}

/// Response for `get_jira_issue`; also an entry of `list_jira_issues`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct JiraIssueResponse {
    pub key: String,
    pub summary: String,
    /// The description as plain text (converted from Atlassian Document Format).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assignee: Option<String>,
}

/// Response for `list_jira_issues`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ListJiraIssuesResponse {
    pub issues: Vec<JiraIssueResponse>,
}

/// A fact from GitHub or Jira: its data, or why it is absent (the envelope the tools use).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Fact<T> {
    Ok { data: T },
    Error { error: mcp_common::WireError },
}

impl<T> From<Result<T, mcp_common::ToolError>> for Fact<T> {
    fn from(result: Result<T, mcp_common::ToolError>) -> Self {
        match result {
            Ok(data) => Self::Ok { data },
            Err(error) => Self::Error {
                error: (&error).into(),
            },
        }
    }
}

/// One branch's standing against one of its parents, counted from git's objects.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ParentHealth {
    pub parent: String,
    /// Commits of the branch that the parent does not have.
    pub ahead: u32,
    /// Commits of the parent that the branch does not have.
    pub behind: u32,
    /// The parent's tip is not in the branch: rebase onto (or merge) the parent.
    pub needs_rebase: bool,
    /// The branch has no commit the parent lacks, and it had commits of its own (commits
    /// the parent did not have when its reflog shows the branch at them) that the parent now
    /// has. Ahead 0 without that evidence is not merged.
    pub merged: bool,
    /// The parent has no git branch, so nothing could be counted.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub missing: bool,
    /// Why ahead/behind could not be counted (then both are 0): the tips are more than
    /// 200,000 commits apart, or a commit is missing from the repository.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uncounted: Option<String>,
}

/// What GitHub says of a branch's linked pull request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PrFact {
    pub number: u32,
    /// `open` or `closed`, as GitHub reports it.
    pub state: String,
    pub merged: bool,
}

/// What Jira says of a branch's linked issue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct JiraFact {
    pub key: String,
    pub status: String,
    /// The status is done, closed or resolved (as twig's prune plugin counts it).
    pub done: bool,
}

/// The health of one branch.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BranchHealth {
    pub branch: String,
    /// The declared parents, the primary first, at most 50 (`more_parents` counts the rest,
    /// which are not compared either).
    pub parents: Vec<String>,
    /// How many declared parents `parents` does not list.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub more_parents: u64,
    /// A configured root (`twig branch root add`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub root: bool,
    /// Not a root, and no parent of it has a git branch (as `twig tree` lists it apart).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub orphan: bool,
    /// twig tracks the branch but git has no branch of that name.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub missing: bool,
    /// The committer date of the branch's tip (RFC 3339, the commit's own offset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_commit_at: Option<String>,
    /// Whole days since that commit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub age_days: Option<u64>,
    /// The last commit is older than `stale_after_days` (roots are never stale).
    pub stale: bool,
    /// Ahead/behind against each parent that has a git branch, in `parents` order.
    pub against: Vec<ParentHealth>,
    /// Behind some parent (see `against`).
    pub needs_rebase: bool,
    /// Merged into its primary parent by git — it had commits of its own (its reflog shows
    /// them) that the parent now has — or its pull request is merged.
    pub merged: bool,
    /// No commit its primary parent lacks, and not merged: it never had a commit of its own
    /// (made by `twig switch -p`, fast-forwarded by `twig cascade`), or its commits are gone
    /// unmerged (reset away; squash-merged then rebased — its pull request tells). Never a
    /// prune candidate on that ground. Badge `empty`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub empty: bool,
    /// Could be deleted: merged, or its Jira issue is done (never a root or the checked-out
    /// branch).
    pub prune: bool,
    /// The linked pull request as GitHub reports it, or why that is unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pull_request: Option<Fact<PrFact>>,
    /// The linked Jira issue as Jira reports it, or why that is unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jira_issue: Option<Fact<JiraFact>>,
}

/// One step of the rebase order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RebaseStep {
    pub branch: String,
    /// The parents to rebase onto, in order (a branch with two parents onto each).
    pub onto: Vec<String>,
}

/// A branch left out of the rebase order that `twig cascade --preview` would list (its plan
/// takes every descendant; it then fails on these), and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SkippedStep {
    pub branch: String,
    pub reason: SkipReason,
    /// The reason in words: `merged into main: not rebased (prune it instead; …)`.
    pub detail: String,
}

/// Why a branch is left out of the rebase order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SkipReason {
    /// Merged (by git or its pull request): prune it rather than rebase it.
    Merged,
    /// twig tracks it but git has no such branch (`git checkout` would fail).
    Missing,
    /// None of its parents has a git branch: nothing to rebase onto.
    NoParent,
}

/// A branch that could be deleted, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PruneCandidate {
    pub branch: String,
    /// `merged into <parent>`, `pull request #N merged` or `Jira PROJ-1 done`.
    pub reason: String,
}

/// Counts over the whole scope (every page); `merged` also counts the branches of this page
/// whose pull request is merged (GitHub is asked about one page only).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct HealthSummary {
    pub branches: u64,
    pub needs_rebase: u64,
    pub merged: u64,
    /// Branches with no commit of their own that are not merged (`empty`).
    pub empty: u64,
    pub stale: u64,
    pub missing: u64,
    pub orphans: u64,
}

/// Response for `get_stack_health` (one page of branches) and `twig://repo/health`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct StackHealthResponse {
    /// The subtree asked for, or null for every root (and the orphans).
    pub scope: Option<String>,
    pub stale_after_days: u32,
    pub summary: HealthSummary,
    /// The branches of this page, parents before children.
    pub branches: Vec<BranchHealth>,
    /// The branches to rebase, in order (parents first, as `twig cascade` would): those
    /// behind a parent and everything stacked on them. At most 500 steps. Merged branches and
    /// branches git does not have are left out (see `skipped`); empty ones are kept (the
    /// rebase fast-forwards them).
    pub rebase_order: Vec<RebaseStep>,
    /// The branches `twig cascade --preview` would also list that `rebase_order` leaves out,
    /// and why: merged (prune instead), missing (no git branch: the checkout would fail), or
    /// no parent with a git branch. At most 100; `skipped_more` counts the rest.
    pub skipped: Vec<SkippedStep>,
    /// How many skipped branches `skipped` does not list.
    pub skipped_more: u64,
    /// Branches that could be deleted: merged by git anywhere in the scope, and those of this
    /// page whose pull request is merged or whose Jira issue is done. At most 500.
    pub prune: Vec<PruneCandidate>,
    /// Local git branches twig does not track (only for the whole repository). At most 500.
    pub untracked: Vec<String>,
    /// True when `rebase_order`, `prune` or `untracked` were cut at 500 entries, or a
    /// branch's parents at 50.
    pub truncated: bool,
    /// Why GitHub facts are missing from every branch (not configured, disabled, unreachable).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub github: Option<mcp_common::WireError>,
    /// Why Jira facts are missing from every branch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jira: Option<mcp_common::WireError>,
}
