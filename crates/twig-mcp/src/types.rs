//! Response types of the tools, as the design document gives them. The list tools answer one
//! page of their list as `data`; the envelope's `page` says the total and the next cursor.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

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
    /// Every parent twig declares for the branch (`twig branch depend` adds one), the
    /// primary first; empty for a root or a branch without dependencies.
    #[serde(default)]
    pub parents: Vec<String>,
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

/// Response for `get_worktrees`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ListWorktreesResponse {
    pub worktrees: Vec<WorktreeInfo>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct WorktreeInfo {
    pub name: String,
    pub path: String,
    pub branch: String,
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
