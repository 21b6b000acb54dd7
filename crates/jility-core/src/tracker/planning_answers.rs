//! What the planning operations answer: epics with their progress, sprints, their
//! statistics and the planner's proposal.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::model::{Status, Ticket, TicketRef, TicketSummary};

/// An epic's tickets in one status.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StatusCount {
    pub status: Status,
    pub tickets: u64,
    pub points: u64,
}

/// How far an epic is: its live tickets counted by status, points done of all, the share
/// done by points and by count (whole percent, rounded down), the blocked ones (status
/// `blocked`, or waiting on a prerequisite not done) and the last change to any of them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EpicProgress {
    pub tickets: u64,
    pub tickets_done: u64,
    pub points_total: u64,
    pub points_done: u64,
    pub percent_done_points: u8,
    pub percent_done_count: u8,
    pub blocked: u64,
    /// By status, active work first; statuses with no ticket are left out.
    pub by_status: Vec<StatusCount>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_activity: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct EpicSummary {
    pub number: String,
    pub title: String,
    pub status: Status,
    pub progress: EpicProgress,
}

/// One page of epics, newest first.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct EpicList {
    pub epics: Vec<EpicSummary>,
}

/// A ticket on a critical path, with the prerequisites not done that hold it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct PathStep {
    pub number: String,
    pub title: String,
    pub status: Status,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub story_points: Option<u8>,
    /// Its prerequisites that are not done (on the path or not, in the epic or not).
    pub blocked_by: Vec<TicketRef>,
}

/// The chain of dependencies among an epic's unfinished tickets with the most remaining
/// points (ties: the longer chain, then the lower numbers), first prerequisite first.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct CriticalPath {
    pub points: u64,
    pub steps: Vec<PathStep>,
}

/// An epic whole: itself, its progress, one page of its tickets (by status, active work
/// first) and its critical path.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct EpicDetail {
    pub epic: Ticket,
    pub progress: EpicProgress,
    pub tickets: Vec<TicketSummary>,
    pub critical_path: CriticalPath,
}

/// A sprint with its scope now.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Sprint {
    /// Its number in the project.
    pub number: i64,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goal: Option<String>,
    /// `planned`, `active` or `completed`.
    pub state: String,
    pub starts_on: String,
    pub ends_on: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity_points: Option<i64>,
    /// Its live tickets now, their points, and the points of those done.
    pub tickets: u64,
    pub points: u64,
    pub points_done: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub committed_points: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_points: Option<i64>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SprintCreated {
    pub sprint: Sprint,
}

/// A ticket a sprint change moved: where it came from, when it was in another sprint.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SprintTicket {
    pub number: String,
    pub title: String,
    pub status: Status,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub story_points: Option<u8>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moved_from: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct AddedToSprint {
    pub sprint: Sprint,
    pub added: Vec<SprintTicket>,
    /// Named tickets that were in the sprint already.
    pub already_in: Vec<String>,
    /// Whether the sprint's points now exceed its capacity.
    pub over_capacity: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RemovedFromSprint {
    pub sprint: Sprint,
    pub removed: Vec<SprintTicket>,
    /// Named tickets that were not in the sprint.
    pub not_in: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SprintStarted {
    pub sprint: Sprint,
    /// The scope it committed to: its tickets at the start.
    pub committed: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SprintCompleted {
    pub sprint: Sprint,
    /// Tickets done in it.
    pub completed: Vec<String>,
    /// Unfinished tickets and where they went: the sprint `carried_to`, or the backlog.
    pub carried_over: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub carried_to: Option<String>,
    pub carried_points: u64,
}

/// One page of a project's sprints, by number.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SprintList {
    pub sprints: Vec<Sprint>,
}

/// Remaining points at the end of a day, beside the ideal line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct BurndownDay {
    /// `YYYY-MM-DD`.
    pub date: String,
    pub remaining: u64,
    /// The ideal remaining points, one decimal.
    pub ideal: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SprintVelocity {
    pub name: String,
    pub completed_points: i64,
}

/// The points completed by the project's last three completed sprints, newest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Velocity {
    pub sprints: Vec<SprintVelocity>,
    /// Their mean, one decimal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean: Option<f64>,
}

/// When the remaining points run out at the pace so far (points done a day since the
/// start), for an active sprint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Forecast {
    /// Points done a day, one decimal.
    pub pace: f64,
    /// The day the work would be done (none while the pace is 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ends_on: Option<String>,
    pub on_track: bool,
}

/// A sprint's figures, replayed from its tickets' change logs.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SprintStats {
    pub sprint: Sprint,
    /// Points in it when it started.
    pub committed_points: u64,
    /// Points of its tickets done (at its completion, for a completed sprint).
    pub completed_points: u64,
    /// Points added, and removed, after its start.
    pub added_points: u64,
    pub removed_points: u64,
    /// Points not done (carried over, for a completed sprint).
    pub remaining_points: u64,
    /// Days from today to its last day (0 once it is over).
    pub days_left: i64,
    /// From its first day to today or its last day.
    pub burndown: Vec<BurndownDay>,
    pub velocity: Velocity,
    /// Unfinished tickets (those carried over, for a completed sprint) and their points.
    pub carry_over: Vec<String>,
    pub carry_over_points: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forecast: Option<Forecast>,
}

/// A ticket the planner proposes, and why.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Proposed {
    pub number: String,
    pub title: String,
    pub status: Status,
    pub story_points: u8,
    pub reason: String,
}

/// A ticket the planner left out, and why.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct LeftOut {
    pub number: String,
    pub title: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub story_points: Option<u8>,
    pub reason: String,
}

/// The planner's proposal for a sprint: apply it with jility_add_to_sprint and `tickets`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SprintPlan {
    pub sprint: Sprint,
    /// The capacity planned to, and where it comes from (`sprint` or `velocity`).
    pub capacity_points: u64,
    pub capacity_source: String,
    /// Points in the sprint already.
    pub planned_points: u64,
    pub proposed_points: u64,
    pub proposed: Vec<Proposed>,
    /// The proposal's numbers, in order: the `tickets` of jility_add_to_sprint.
    pub tickets: Vec<String>,
    /// The first 50 tickets left out, with why; `left_out_total` counts those left out
    /// among the candidates considered.
    pub left_out: Vec<LeftOut>,
    pub left_out_total: u64,
    /// Candidates considered: live backlog and todo tickets in no open sprint, todo first,
    /// then oldest first, read until the sprint is full and 50 left out are named (at most
    /// 10,000).
    pub candidates: u64,
    /// Whether every candidate was considered; when false, more backlog and todo tickets
    /// wait beyond `candidates` (the sprint was full, or 10,000 were considered).
    pub candidates_exact: bool,
}

impl SprintPlan {
    /// What the left-out list does not show, for people (`… and 45 more`), if anything.
    pub fn left_out_rest(&self) -> Option<String> {
        let rest = self
            .left_out_total
            .saturating_sub(self.left_out.len() as u64);
        let beyond = "more backlog and todo tickets beyond those considered";
        match (rest, self.candidates_exact) {
            (0, true) => None,
            (0, false) => Some(format!("… and {beyond}")),
            (n, true) => Some(format!("… and {n} more")),
            (n, false) => Some(format!("… and {n} more, and {beyond}")),
        }
    }

    /// How many were left out, for people: `73`, or `73+` when more candidates wait beyond
    /// those considered.
    pub fn left_out_label(&self) -> String {
        if self.candidates_exact {
            self.left_out_total.to_string()
        } else {
            format!("{}+", self.left_out_total)
        }
    }
}
