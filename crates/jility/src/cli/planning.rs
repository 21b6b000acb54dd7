//! `jility epic …` and `jility sprint …`: planning's operations on the command line, in
//! local and cloud mode alike (each is an operation of the table run on a [`Target`]).

use clap::Subcommand;
use jility_core::ops;
use jility_core::params::{
    AddToSprint, CompleteSprint, CreateSprint, GetEpic, ListEpics, ListSprints, RemoveFromSprint,
    SprintName, StatusName,
};
use mcp_common::ToolError;

use super::Out;
use super::human::planning as views;
use super::target::Target;

const SPRINT: &str = "The sprint: its name (any case) or its number";

#[derive(Debug, Subcommand)]
pub enum EpicCommand {
    /// List epics with their progress, newest first.
    List {
        /// An epic status to include (repeat for several).
        #[arg(long = "status", short)]
        statuses: Vec<String>,
        /// Epics per page (1 to 100; default 20).
        #[arg(long, value_name = "N")]
        limit: Option<i64>,
        /// The next page: the cursor the previous page printed.
        #[arg(long)]
        cursor: Option<String>,
    },
    /// Show an epic: its progress, its critical path and its tickets by status.
    Show {
        /// The epic: KEY-N or UUID.
        epic: String,
        /// Tickets per page (1 to 200; default 50).
        #[arg(long, value_name = "N")]
        limit: Option<i64>,
        /// The next page of its tickets.
        #[arg(long)]
        cursor: Option<String>,
    },
}

#[derive(Debug, Subcommand)]
pub enum SprintCommand {
    /// Create a sprint (it starts planned).
    #[command(
        after_help = "Example:\n  jility sprint create \"Sprint 12\" --starts 2026-12-07 --ends 2026-12-18 --capacity 30 --goal \"Ship sign-in\""
    )]
    Create {
        /// Its name, unique in the project.
        name: String,
        /// Its first day, YYYY-MM-DD.
        #[arg(long, value_name = "DATE")]
        starts: String,
        /// Its last day, YYYY-MM-DD.
        #[arg(long, value_name = "DATE")]
        ends: String,
        /// Story points the team can take (without it, planning uses the velocity).
        #[arg(long, value_name = "POINTS")]
        capacity: Option<i64>,
        /// What the sprint is for.
        #[arg(long, allow_hyphen_values = true)]
        goal: Option<String>,
    },
    /// Add tickets to a sprint, all or none.
    Add {
        #[arg(help = SPRINT)]
        sprint: String,
        /// The tickets (KEY-N or UUID).
        #[arg(required = true)]
        tickets: Vec<String>,
        /// Move tickets that are in another planned or active sprint.
        #[arg(long = "move")]
        move_tickets: bool,
    },
    /// Send tickets of a sprint back to the backlog.
    Remove {
        #[arg(help = SPRINT)]
        sprint: String,
        /// The tickets (KEY-N or UUID).
        #[arg(required = true)]
        tickets: Vec<String>,
    },
    /// Start a planned sprint: its tickets now are its committed scope.
    Start {
        #[arg(help = SPRINT)]
        sprint: String,
    },
    /// Complete the active sprint; unfinished tickets go to --carry-over-to or the backlog.
    Complete {
        #[arg(help = SPRINT)]
        sprint: String,
        /// A planned sprint that takes the unfinished tickets.
        #[arg(long, value_name = "SPRINT")]
        carry_over_to: Option<String>,
    },
    /// List the project's sprints.
    List {
        /// A state to include (repeat for several): planned, active, completed.
        #[arg(long = "state", short)]
        states: Vec<String>,
        /// Sprints per page (1 to 200; default 50).
        #[arg(long, value_name = "N")]
        limit: Option<i64>,
        /// The next page: the cursor the previous page printed.
        #[arg(long)]
        cursor: Option<String>,
    },
    /// A sprint's figures: committed, completed, added, removed, the burndown, velocity and
    /// forecast.
    Show {
        #[arg(help = SPRINT)]
        sprint: String,
    },
    /// Propose backlog and todo tickets for a sprint, in dependency order, up to its
    /// capacity (changes nothing).
    Plan {
        #[arg(help = SPRINT)]
        sprint: String,
    },
}

pub fn epic(out: &Out, t: &mut Target, command: EpicCommand) -> Result<(), ToolError> {
    match command {
        EpicCommand::List {
            statuses,
            limit,
            cursor,
        } => out.show_page(
            t.exec::<ops::ListEpics>(ListEpics {
                status: statuses.into_iter().map(StatusName).collect(),
                limit,
                cursor,
            })?,
            views::epics,
        ),
        EpicCommand::Show {
            epic,
            limit,
            cursor,
        } => out.show_page(
            t.exec::<ops::GetEpic>(GetEpic {
                epic_id: epic,
                limit,
                cursor,
            })?,
            views::epic,
        ),
    }
}

pub fn sprint(out: &Out, t: &mut Target, command: SprintCommand) -> Result<(), ToolError> {
    match command {
        SprintCommand::Create {
            name,
            starts,
            ends,
            capacity,
            goal,
        } => out.show(
            t.exec::<ops::CreateSprint>(CreateSprint {
                name,
                goal,
                starts_on: starts,
                ends_on: ends,
                capacity_points: capacity,
            })?,
            views::sprint_created,
        ),
        SprintCommand::Add {
            sprint,
            tickets,
            move_tickets,
        } => out.show(
            t.exec::<ops::AddToSprint>(AddToSprint {
                sprint,
                tickets,
                move_tickets,
            })?,
            views::added,
        ),
        SprintCommand::Remove { sprint, tickets } => out.show(
            t.exec::<ops::RemoveFromSprint>(RemoveFromSprint { sprint, tickets })?,
            views::removed,
        ),
        SprintCommand::Start { sprint } => out.show(
            t.exec::<ops::StartSprint>(SprintName { sprint })?,
            views::started,
        ),
        SprintCommand::Complete {
            sprint,
            carry_over_to,
        } => out.show(
            t.exec::<ops::CompleteSprint>(CompleteSprint {
                sprint,
                carry_over_to,
            })?,
            views::completed,
        ),
        SprintCommand::List {
            states,
            limit,
            cursor,
        } => out.show_page(
            t.exec::<ops::ListSprints>(ListSprints {
                state: states,
                limit,
                cursor,
            })?,
            views::sprints,
        ),
        SprintCommand::Show { sprint } => out.show(
            t.exec::<ops::SprintStats>(SprintName { sprint })?,
            views::stats,
        ),
        SprintCommand::Plan { sprint } => out.show(
            t.exec::<ops::PlanSprint>(SprintName { sprint })?,
            views::plan,
        ),
    }
}
