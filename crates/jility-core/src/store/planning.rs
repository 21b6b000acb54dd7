//! Storage for planning: sprints, who is in them, and the reads epics, sprints and the
//! planner need in one statement each (roll-ups by epic, the rows of a set of tickets, the
//! dependencies among them, the changes that move a burndown). The domain computes every
//! figure from these ([`crate::tracker`]); a store only reads and writes rows.

use crate::model::{Change, Status};

use super::{StoreResult, TicketRow};

/// Where a sprint stands: planned (filling up), active (one per project), completed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SprintState {
    Planned,
    Active,
    Completed,
}

impl SprintState {
    pub const ALL: [SprintState; 3] = [Self::Planned, Self::Active, Self::Completed];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Planned => "planned",
            Self::Active => "active",
            Self::Completed => "completed",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == text)
    }

    /// Planned and active sprints are open: a ticket is in at most one of them.
    pub fn is_open(self) -> bool {
        self != Self::Completed
    }
}

/// A sprint as stored. Dates are `YYYY-MM-DD`, times RFC 3339 (UTC).
#[derive(Debug, Clone, PartialEq)]
pub struct SprintRow {
    pub id: i64,
    pub project_id: i64,
    /// Its number in the project, from 1.
    pub number: i64,
    pub name: String,
    pub goal: Option<String>,
    pub starts_on: String,
    pub ends_on: String,
    pub capacity_points: Option<i64>,
    pub state: SprintState,
    /// Set by its start: when, and the scope it committed to.
    pub started_at: Option<String>,
    pub committed_points: Option<i64>,
    pub committed_tickets: Option<i64>,
    /// Set by its completion: when, the points done, the tickets carried over and where.
    pub completed_at: Option<String>,
    pub completed_points: Option<i64>,
    pub carried_over: Option<i64>,
    pub created_by: String,
    pub created_at: String,
}

pub struct NewSprint<'a> {
    pub project_id: i64,
    pub name: &'a str,
    pub goal: Option<&'a str>,
    pub starts_on: &'a str,
    pub ends_on: &'a str,
    pub capacity_points: Option<i64>,
    pub actor: &'a str,
    pub at: &'a str,
}

/// A sprint's start or completion.
#[derive(Debug, Clone, Default)]
pub struct SprintUpdate {
    pub state: Option<SprintState>,
    pub started_at: Option<String>,
    pub committed_points: Option<i64>,
    pub committed_tickets: Option<i64>,
    pub completed_at: Option<String>,
    pub completed_points: Option<i64>,
    pub carried_over: Option<i64>,
}

/// The live tickets of one epic in one status: how many, their points, how many of them
/// are blocked (status `blocked`, or waiting on a live prerequisite not done), and the
/// newest `updated_at` among them.
#[derive(Debug, Clone, PartialEq)]
pub struct EpicRollup {
    pub epic_id: i64,
    pub status: Status,
    pub tickets: u64,
    pub points: u64,
    pub blocked: u64,
    pub last_activity: Option<String>,
}

/// A sprint's live tickets now ([`PlanningTx::sprint_rollups`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SprintRollup {
    pub sprint_id: i64,
    pub tickets: u64,
    pub points: u64,
    pub points_done: u64,
}

/// A dependency of `ticket_id` on the live ticket `on_id` (its number, title and status).
#[derive(Debug, Clone, PartialEq)]
pub struct DependencyEdge {
    pub ticket_id: i64,
    pub on_id: i64,
    pub on_number: String,
    pub on_title: String,
    pub on_status: Status,
    /// Whether `on_id` is itself a sprint candidate of `ticket_id`'s project (see
    /// [`TicketSet::Candidates`]), so that the planner knows it without reading it.
    pub on_candidate: bool,
}

/// A place in the planner's order of candidates: `todo` before `backlog`, then oldest
/// (lowest id) first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CandidateRank {
    pub backlog: bool,
    pub id: i64,
}

impl CandidateRank {
    /// What is left to read after `after`, in order: each status (`todo`, then `backlog`)
    /// with the id after which its candidates follow.
    pub fn ranges(after: Option<CandidateRank>) -> Vec<(&'static str, i64)> {
        match after {
            None => vec![("todo", 0), ("backlog", 0)],
            Some(a) if a.backlog => vec![("backlog", a.id)],
            Some(a) => vec![("todo", a.id), ("backlog", 0)],
        }
    }
}

/// Which tickets [`PlanningTx::ticket_rows`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TicketSet {
    /// The live tickets of an epic.
    Epic(i64),
    /// The live tickets in a sprint now.
    Sprint(i64),
    /// Every ticket that was ever in a sprint, deleted ones included.
    EverInSprint(i64),
    /// What a sprint of `project` may take: live tickets (not epics) of the project in
    /// `backlog` or `todo` and in no open sprint, in [`CandidateRank`] order (`todo` first,
    /// then oldest first), after `after`, at most `limit` of them.
    Candidates {
        project: i64,
        after: Option<CandidateRank>,
        limit: usize,
    },
}

/// Planning's storage operations, inside a transaction of [`super::StoreTx`].
pub trait PlanningTx {
    fn insert_sprint(&mut self, sprint: &NewSprint<'_>) -> StoreResult<SprintRow>;
    /// The project's sprints, by number.
    fn sprints(&mut self, project_id: i64) -> StoreResult<Vec<SprintRow>>;
    fn update_sprint(&mut self, id: i64, update: &SprintUpdate) -> StoreResult<()>;
    /// Note that the ticket was in the sprint (once; a sprint remembers every ticket it had).
    fn note_sprint_member(&mut self, sprint_id: i64, ticket_id: i64) -> StoreResult<()>;

    /// The rows of `set`, oldest first (candidates: `todo` first), without their
    /// descriptions (`description` is empty): nothing planning answers shows one, so none
    /// is read.
    fn ticket_rows(&mut self, set: TicketSet) -> StoreResult<Vec<TicketRow>>;
    /// The live epics in `statuses` (all when empty), newest first, after the epic `after`
    /// (without their descriptions, as [`Self::ticket_rows`]):
    /// at most `limit` of them, and how many there are (counted up to the store's cap).
    fn epics(
        &mut self,
        statuses: &[Status],
        after: Option<i64>,
        limit: usize,
    ) -> StoreResult<(Vec<TicketRow>, usize)>;
    /// For each sprint of `sprint_ids` that has live tickets now: how many, their points,
    /// and the points of those done.
    fn sprint_rollups(&mut self, sprint_ids: &[i64]) -> StoreResult<Vec<SprintRollup>>;
    /// The roll-ups of the live tickets of `epic_ids`, by epic and status.
    fn epic_rollups(&mut self, epic_ids: &[i64]) -> StoreResult<Vec<EpicRollup>>;
    /// The dependencies of `ids` on live tickets.
    fn dependency_edges(&mut self, ids: &[i64]) -> StoreResult<Vec<DependencyEdge>>;
    /// The changes of `ids` of the types `types`, oldest first, each with its ticket.
    fn changes_of(&mut self, ids: &[i64], types: &[&str]) -> StoreResult<Vec<(i64, Change)>>;

    /// Start keeping the figures of sprint `sprint_id`, which has just started: no points
    /// added or removed yet, and `days` (each day's remaining points so far, by date).
    fn begin_keeping(&mut self, sprint_id: i64, days: &[(String, u64)]) -> StoreResult<()>;
    /// When sprint `sprint_id` is active and its figures kept: add `added` and `removed`
    /// points to what was moved in and out since its start, and make `day`'s remaining points
    /// those of its tickets now (a store's writers take turns, so none counts without
    /// another's change). Nothing otherwise.
    fn keep_sprint(
        &mut self,
        sprint_id: i64,
        day: &str,
        added: u64,
        removed: u64,
    ) -> StoreResult<()>;
    /// The kept figures of sprint `sprint_id`, if they are kept.
    fn kept_sprint(&mut self, sprint_id: i64) -> StoreResult<Option<KeptSprint>>;
}

/// A started sprint's figures kept as its tickets change ([`PlanningTx::keep_sprint`]), so
/// that its statistics need not replay the change log: they equal the replay's (tests
/// prove it).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct KeptSprint {
    /// Points moved into and out of the sprint after its start (each at its points then).
    pub added_points: u64,
    pub removed_points: u64,
    /// Remaining points at the end of each day that has a figure, by date (`YYYY-MM-DD`),
    /// oldest first; a day without one has its previous day's.
    pub days: Vec<(String, u64)>,
}
