//! What the operations answer.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::description::DiffStats;
use crate::model::{Change, Comment, CommitLink, Status, Ticket, TicketRef, TicketSummary};
use crate::templates::{Template, TemplateProblem};

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Created {
    pub ticket: Ticket,
    /// The template it was made from, for jility_create_from_template.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<String>,
    /// Filed tickets it is likely a duplicate of (see jility_suggest_related); it was
    /// created all the same.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub likely_duplicates: Vec<super::RelatedTicket>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct BatchTicket {
    pub number: String,
    pub title: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub story_points: Option<u8>,
    pub assignees: Vec<String>,
    pub labels: Vec<String>,
    /// Numbers of the tickets it depends on.
    pub depends_on: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct BatchCreated {
    pub tickets: Vec<BatchTicket>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<TicketRef>,
    pub total_story_points: u32,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct TicketDetail {
    pub ticket: Ticket,
    /// The newest comments (at most 50), oldest first.
    pub comments: Vec<Comment>,
    /// How many comments the ticket has in all.
    pub comment_count: usize,
    pub dependencies: Vec<TicketRef>,
    pub dependents: Vec<TicketRef>,
    pub linked_commits: Vec<CommitLink>,
    /// The newest 20 changes, newest first; long values are cut (see
    /// jility_get_ticket_history for whole descriptions).
    pub recent_changes: Vec<Change>,
}

/// One page of a listing; how many match in all and the next cursor are in `page`
/// (`total` counted up to 10,000, `total_exact: false` beyond).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct TicketPage {
    pub tickets: Vec<TicketSummary>,
    /// The query listed with, as asked (absent: the filters alone).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Claimed {
    pub ticket: TicketRef,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub story_points: Option<u8>,
    pub assignee: String,
    pub previous_status: Status,
    /// Whether the ticket was already claimed by the same actor (nothing changed).
    pub already_claimed: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct DescriptionUpdated {
    pub number: String,
    pub operation: String,
    /// What the edit touched, e.g. `replace_lines (lines 8-10)`.
    pub summary: String,
    /// The description's version after the edit (1 is the original).
    pub version: usize,
    pub changed_by: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    pub lines: usize,
    pub diff: DiffStats,
    /// False when the edit left the text as it was (no version recorded).
    pub changed: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct StatusUpdated {
    pub number: String,
    pub title: String,
    pub previous: Status,
    pub current: Status,
    pub changed_by: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    pub changed: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct CommentAdded {
    pub number: String,
    pub comment: Comment,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Assigned {
    pub number: String,
    pub previous: Vec<String>,
    pub current: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Whether the handoff message was added as a comment.
    pub comment_added: bool,
    pub changed_by: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct CommitLinked {
    pub number: String,
    pub commit: CommitLink,
    /// The commit was linked before; nothing changed.
    pub already_linked: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct DependencyAdded {
    pub ticket: TicketRef,
    pub depends_on: TicketRef,
    /// The longest chain of dependencies ending at the ticket, first to be done first.
    pub chain: Vec<TicketRef>,
    /// Whether the ticket now waits on an unfinished dependency.
    pub is_blocked: bool,
    /// The dependency existed already; nothing changed.
    pub already_existed: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct DependencyRemoved {
    pub ticket: TicketRef,
    pub depends_on: TicketRef,
    pub is_blocked: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct GraphNode {
    pub number: String,
    pub title: String,
    pub status: Status,
    /// 1 for direct relations, 2 for their relations, …
    pub depth: usize,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct DependencyGraph {
    pub ticket: String,
    pub title: String,
    pub status: Status,
    /// What this ticket depends on directly.
    pub dependencies: Vec<TicketRef>,
    /// What depends on this ticket directly.
    pub dependents: Vec<TicketRef>,
    /// Whether a direct dependency is not done.
    pub is_blocked: bool,
    /// How many tickets wait on this one directly.
    pub blocking_count: usize,
    /// Everything this ticket waits on, transitively, nearest first.
    pub upstream: Vec<GraphNode>,
    /// Everything that waits on this ticket, transitively, nearest first.
    pub downstream: Vec<GraphNode>,
    /// True when a walk stopped at 500 tickets.
    pub truncated: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct TemplateList {
    /// One page of the templates, built-in ones first, then the project's by name.
    pub templates: Vec<Template>,
    /// Project template files that could not be read (skipped).
    pub problems: Vec<TemplateProblem>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SearchHitOut {
    pub number: String,
    pub title: String,
    pub status: Status,
    pub assignees: Vec<String>,
    /// The best-matching passage, matches in **bold**.
    pub snippet: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
/// One page of search hits; how many match in all and the next cursor are in `page`.
pub struct SearchResults {
    pub query: String,
    /// The sprint searched within, as asked (absent: every ticket).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sprint: Option<String>,
    /// The best hits first.
    pub hits: Vec<SearchHitOut>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct DescriptionVersion {
    /// 1 is the original description.
    pub version: usize,
    pub changed_by: String,
    pub changed_at: String,
    /// How it was made: `created`, an edit operation, `revert to version N`, `edit`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operation: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Unified diff against the previous version (against empty for version 1).
    pub diff: String,
    pub added: usize,
    pub removed: usize,
    pub lines: usize,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct History {
    pub number: String,
    pub title: String,
    pub current_version: usize,
    pub versions: Vec<DescriptionVersion>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Edited {
    pub ticket: Ticket,
    /// The fields that changed.
    pub changed: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Deleted {
    pub number: String,
    pub title: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Initialized {
    pub key: String,
    pub name: String,
}

/// A saved view: a query under a name.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct View {
    pub name: String,
    pub query: String,
    /// Who saved it.
    pub owner: String,
    /// Whether the workspace shares it (else only its owner sees it).
    pub shared: bool,
    pub created_at: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ViewSaved {
    pub view: View,
}

/// The views the caller sees: their own and the shared ones, by name.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ViewList {
    pub views: Vec<View>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ViewDeleted {
    pub name: String,
}

/// What a bulk edit changed, or would change (`dry_run`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct BulkUpdated {
    /// The edit's id, named in the change log of every ticket it changed.
    pub bulk_id: String,
    /// Whether nothing was changed (a preview).
    pub dry_run: bool,
    /// How many tickets the query or the list named.
    pub matched: usize,
    /// How many of them changed (or would); the others were already as asked.
    pub changed: usize,
    /// The first tickets that changed (or would), each with what changed, at most 50.
    pub tickets: Vec<BulkTicket>,
    /// The tickets it cannot change and why (a preview names them; an edit with any is
    /// refused whole), at most 200.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refused: Vec<BulkRefusal>,
    /// How many tickets are refused in all.
    #[serde(default)]
    pub refused_total: usize,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct BulkTicket {
    pub number: String,
    pub title: String,
    /// Its status after the edit.
    pub status: Status,
    /// What changed, e.g. `status: todo → in_progress`, `labels: +auth`.
    pub changes: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct BulkRefusal {
    pub number: String,
    /// Why it cannot change, e.g. `done → backlog is not a move the workflow allows`.
    pub reason: String,
}

/// One entry of an inbox.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Notification {
    pub id: i64,
    /// `mentioned`, `assigned`, `handoff` (moved to review by someone else),
    /// `blocker_done` (a ticket it waited on is done), `watching` (a change to a ticket the
    /// caller watches) or `webhook_disabled`.
    pub kind: String,
    /// The ticket it is about (`KEY-N`; absent for a notice about no ticket).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ticket: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Who did it.
    pub actor: String,
    /// What happened, in a sentence.
    pub summary: String,
    pub created_at: String,
    pub read: bool,
}

/// One page of the caller's inbox, newest first; `unread` counts all unread entries.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct NotificationPage {
    /// Whose inbox (the caller: the token's name in cloud mode, the actor locally).
    pub recipient: String,
    pub notifications: Vec<Notification>,
    pub unread: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct NotificationsMarked {
    /// How many entries were unread and are read now.
    pub marked: u64,
    /// How many stay unread.
    pub unread: u64,
}

/// Whether the caller watches a ticket now, and who does.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Watched {
    pub number: String,
    pub watching: bool,
    pub watchers: Vec<String>,
}
