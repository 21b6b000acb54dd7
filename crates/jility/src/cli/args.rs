//! The command line's shape (clap): every command, argument and option with the help that
//! teaches it. Options that apply to a whole group of commands (`--json`, `--color`,
//! `--db`) are declared on the group and shown only there.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use mcp_common::serve::TransportArgs;

pub use super::output::{ColorChoice, OutputArgs};

const ABOUT: &str = "AI-native ticket tracker: a command line, an MCP server and a web board, on an embedded SQLite database (local mode) or a team's server (cloud mode)";

const MODES: &str = "\
Modes (JILITY_MODE):
  local (default)  tickets live in .jility/data.db, found in the working directory or the
                   nearest parent that has one (like git finds .git), or --db / JILITY_DB;
                   start with `jility init`
  cloud            the ticket commands and --mcp-server work through the API of a team's
                   `jility serve` at JILITY_API_URL, as the person of `jility auth login`
                   (or with the token in JILITY_API_TOKEN)

Examples:
  jility init --key API
  jility ticket create --title \"Add login\" --label backend
  jility ticket list --status in_progress
  jility ticket edit API-1 --section \"## Acceptance Criteria\" --content \"- [x] returns 200\"
  claude mcp add jility -- jility --mcp-server";

/// What a ticket argument is.
const TICKET: &str = "The ticket: its number KEY-N (e.g. API-42, any case) or its UUID";

#[derive(Debug, Parser)]
#[command(name = "jility", version, about = ABOUT, after_help = MODES)]
pub struct Cli {
    // Its help names `--http` only where the build has it.
    #[cfg_attr(
        feature = "http",
        arg(
            long,
            help = "Run as an MCP server, over stdio unless --http is given: on the local database (created in the working directory when none is found), or in cloud mode as a bridge to the API"
        )
    )]
    #[cfg_attr(
        not(feature = "http"),
        arg(
            long,
            help = "Run as an MCP server over stdio (creates .jility/ in the working directory when none is found)"
        )
    )]
    pub mcp_server: bool,
    /// Which tools --mcp-server offers (toolsets: tickets, planning, inbox).
    #[command(flatten)]
    pub surface: mcp_common::surface::SurfaceArgs,
    #[command(flatten)]
    pub transport: TransportArgs,
    /// The database file of --mcp-server in local mode (default: the nearest .jility/data.db).
    #[arg(long, env = "JILITY_DB", value_name = "PATH")]
    pub db: Option<PathBuf>,
    // Accepted before the command too (`jility --json ticket list`); shown on the commands.
    #[arg(long, hide = true)]
    pub json: bool,
    #[arg(long, hide = true, value_name = "WHEN")]
    pub color: Option<ColorChoice>,
    /// Log more to stderr (-v info, -vv debug, -vvv trace).
    #[arg(short, long, global = true, action = clap::ArgAction::Count, display_order = 903)]
    pub verbose: u8,
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// Where the local database is.
#[derive(Debug, Clone, Args)]
pub struct DbArgs {
    /// The database file in local mode (default: .jility/data.db in the working directory
    /// or the nearest parent that has one).
    #[arg(
        long,
        global = true,
        env = "JILITY_DB",
        value_name = "PATH",
        display_order = 902
    )]
    pub db: Option<PathBuf>,
}

/// A group of commands on tickets: how they print and where the database is.
#[derive(Debug, Args)]
pub struct Group<C: Subcommand> {
    #[command(flatten)]
    pub out: OutputArgs,
    #[command(flatten)]
    pub db: DbArgs,
    #[command(subcommand)]
    pub command: C,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Create .jility/data.db here with a first project (local mode).
    #[command(
        after_help = "Add .jility/ to the project's .gitignore: the database and its cursor key are yours, not the repository's."
    )]
    Init {
        /// Ticket prefix of the project: tickets are KEY-1, KEY-2, … (letters and digits,
        /// starting with a letter; default TASK). A project that has no ticket yet takes a
        /// new key.
        #[arg(long)]
        key: Option<String>,
        /// Project name (default: the directory's name).
        #[arg(long)]
        name: Option<String>,
        #[command(flatten)]
        out: OutputArgs,
        #[command(flatten)]
        db: DbArgs,
    },
    /// Create, list, show and change tickets.
    Ticket(Box<Group<TicketCommand>>),
    /// Dependencies between tickets.
    Dep(Group<DepCommand>),
    /// Ticket templates.
    Template(Group<TemplateCommand>),
    /// Epics and their progress.
    Epic(Group<super::planning::EpicCommand>),
    /// Sprints: plan, start, follow and complete them.
    Sprint(Group<super::planning::SprintCommand>),
    /// Saved views: queries under a name, yours or shared.
    View(Group<super::saved::ViewCommand>),
    /// Your inbox: mentions, assignments, handoffs, done blockers, changes to what you
    /// watch; mark them read, watch and unwatch tickets.
    Inbox(Group<super::inbox::InboxCommand>),
    /// Open the board in a browser: the web app on this project's database, on loopback
    /// only, live while agents and the CLI change tickets (local mode).
    #[cfg(feature = "web")]
    #[command(
        after_help = "Open the address it prints. The board answers only on the loopback address it listens on (no accounts: it is yours); changes you make are recorded under JILITY_ACTOR, else $USER. Stop it with Ctrl-C. In cloud mode the board is the team's server itself: open JILITY_API_URL."
    )]
    Web {
        /// The loopback address and port to listen on (port 0 picks a free one).
        #[arg(long, default_value = "127.0.0.1:7878", value_name = "ADDR:PORT")]
        listen: std::net::SocketAddr,
        #[command(flatten)]
        db: DbArgs,
    },
    #[cfg(feature = "cloud")]
    #[command(flatten)]
    Cloud(super::cloud::CloudCommand),
}

const WORKFLOW: &str = "\
Statuses: backlog, todo, in_progress, review, done, blocked.
Work flows backlog → todo → in_progress → review → done; any open ticket can be blocked and
unblocked; review can go back to in_progress; a done ticket reopens to todo or in_progress.";

#[derive(Debug, Subcommand)]
pub enum TicketCommand {
    /// Create a ticket.
    Create {
        /// The title (one line).
        #[arg(long, short, allow_hyphen_values = true)]
        title: String,
        /// The description, in markdown.
        #[arg(long, short, allow_hyphen_values = true)]
        description: Option<String>,
        /// Story points, 1 to 13.
        #[arg(long, short = 'p')]
        points: Option<i64>,
        /// The first status (default backlog): one of backlog, todo, in_progress, review,
        /// done or blocked.
        #[arg(long, short)]
        status: Option<String>,
        /// A label (repeat for several).
        #[arg(long = "label", short)]
        labels: Vec<String>,
        /// An assignee, a person or an agent (repeat for several).
        #[arg(long = "assignee", short)]
        assignees: Vec<String>,
        /// The parent ticket, for a sub-task (KEY-N or UUID).
        #[arg(long, value_name = "TICKET")]
        parent: Option<String>,
        /// The epic it belongs to (KEY-N or UUID).
        #[arg(long, value_name = "TICKET")]
        epic: Option<String>,
        /// What it is: ticket (default) or epic.
        #[arg(long, value_name = "KIND", value_parser = ["ticket", "epic"])]
        kind: Option<String>,
    },
    /// List tickets, grouped by status (active work first), newest first.
    List {
        /// A status to include (repeat for several): backlog, todo, in_progress, review,
        /// done or blocked.
        #[arg(long = "status", short)]
        statuses: Vec<String>,
        /// Only tickets assigned to this person or agent.
        #[arg(long, short)]
        assignee: Option<String>,
        /// A label every listed ticket carries (repeat for several).
        #[arg(long = "label", short)]
        labels: Vec<String>,
        /// Only the sub-tasks of this ticket (KEY-N or UUID).
        #[arg(long, value_name = "TICKET")]
        parent: Option<String>,
        /// Only the tickets of this epic (KEY-N or UUID).
        #[arg(long, value_name = "TICKET")]
        epic: Option<String>,
        /// Only the tickets of a sprint: its name or number, `active`, or `none` (the
        /// backlog: in no planned or active sprint).
        #[arg(long, value_name = "SPRINT")]
        sprint: Option<String>,
        /// Only tickets nobody is assigned to.
        #[arg(long)]
        unassigned: bool,
        /// A query in the query language: words and qualifiers, e.g.
        /// 'login status:todo,review -label:wontfix updated:<7d sort:updated-desc'.
        #[arg(long, short, allow_hyphen_values = true, value_name = "QUERY")]
        query: Option<String>,
        /// Tickets per page (1 to 200; default 50).
        #[arg(long, value_name = "N")]
        limit: Option<i64>,
        /// The next page: the cursor the previous page printed (with the same filters).
        #[arg(long)]
        cursor: Option<String>,
    },
    /// Show a ticket with its description, comments, dependencies, commits and recent
    /// changes.
    Show {
        #[arg(help = TICKET)]
        ticket: String,
    },
    /// Change fields, or edit the description precisely.
    #[command(
        after_help = "Examples:\n  jility ticket edit API-1 --title \"Login with SSO\" --label auth\n  jility ticket edit API-1 --section \"## Acceptance Criteria\" --content \"- [x] returns 200\"\n  jility ticket edit API-1 --lines 3-4 --content \"new third line\"\n  jility ticket edit API-1 --append \"- [ ] handle expired tokens\""
    )]
    Edit(Box<EditArgs>),
    /// Change many tickets at once, all or none: those a query finds, or those named.
    #[command(
        after_help = "Examples:\n  jility ticket bulk --query 'label:auth status:review' --status done --dry-run\n  jility ticket bulk API-1 API-2 --sprint active --add-label q4\n  jility ticket bulk --query 'is:open no:sprint points:>8' --expected 12 --sprint none"
    )]
    Bulk(Box<super::bulk::BulkArgs>),
    /// Set the assignees of many tickets at once, all or none.
    #[command(
        after_help = "Example:\n  jility ticket bulk-assign --query 'assignee:agent-2 is:open' --to agent-3 --message \"agent-2 is off\""
    )]
    BulkAssign(Box<super::bulk::BulkAssignArgs>),
    /// Tickets like a filed one, or like one about to be filed: likely duplicates first.
    #[command(
        after_help = "Examples:\n  jility ticket related TASK-42\n  jility ticket related --title 'Login fails after password reset'"
    )]
    Related {
        #[arg(help = "A filed ticket: KEY-N, a number or a UUID", required_unless_present = "title", conflicts_with_all = ["title", "description"])]
        ticket: Option<String>,
        /// The title of a ticket not yet filed.
        #[arg(long, allow_hyphen_values = true)]
        title: Option<String>,
        /// Its description (markdown).
        #[arg(long, allow_hyphen_values = true, requires = "title")]
        description: Option<String>,
        /// How many at most (1 to 20; default 5).
        #[arg(long, value_name = "N")]
        limit: Option<i64>,
    },
    /// Estimate story points from the most alike done tickets.
    #[command(
        after_help = "Examples:\n  jility ticket estimate TASK-42\n  jility ticket estimate --title 'Export invoices as CSV'"
    )]
    Estimate {
        #[arg(help = "A filed ticket: KEY-N, a number or a UUID", required_unless_present = "title", conflicts_with_all = ["title", "description"])]
        ticket: Option<String>,
        /// The title of a ticket not yet filed.
        #[arg(long, allow_hyphen_values = true)]
        title: Option<String>,
        /// Its description (markdown).
        #[arg(long, allow_hyphen_values = true, requires = "title")]
        description: Option<String>,
    },
    /// Move a ticket to another status.
    #[command(after_help = WORKFLOW)]
    Move {
        #[arg(help = TICKET)]
        ticket: String,
        /// The new status: backlog, todo, in_progress, review, done or blocked.
        #[arg(value_name = "STATUS")]
        status: String,
        /// Why, kept in the ticket's change log.
        #[arg(long, short, allow_hyphen_values = true)]
        message: Option<String>,
    },
    /// Set a ticket's assignees (none = unassign).
    Assign {
        #[arg(help = TICKET)]
        ticket: String,
        /// The people or agents to assign, replacing the current ones (none: unassign).
        assignees: Vec<String>,
        /// Handoff message, added as a comment.
        #[arg(long, short, allow_hyphen_values = true)]
        message: Option<String>,
    },
    /// Assign a ticket to yourself (JILITY_ACTOR, else your user name; in cloud mode the
    /// signed-in person) and start it.
    Claim {
        #[arg(help = TICKET)]
        ticket: String,
        /// A comment to add, e.g. your plan.
        #[arg(long, short, allow_hyphen_values = true)]
        message: Option<String>,
    },
    /// Comment on a ticket.
    Comment {
        #[arg(help = TICKET)]
        ticket: String,
        /// The comment, in markdown (@mentions welcome); it may start with `-`.
        #[arg(allow_hyphen_values = true)]
        content: String,
    },
    /// Show every version of the description, or restore one.
    History {
        #[arg(help = TICKET)]
        ticket: String,
        /// Restore this version (1 is the original; recorded as a new version).
        #[arg(long, value_name = "VERSION")]
        revert: Option<i64>,
    },
    /// Search with the query language: words over titles, descriptions and comments, best
    /// matches first, and qualifiers (status:todo,review assignee:me -label:wontfix
    /// points:3..8 updated:<7d sort:updated-desc; see the README).
    Search {
        /// Words that must all match ("quoted phrases" exactly, -word not) and qualifiers.
        #[arg(allow_hyphen_values = true)]
        query: String,
        /// Hits per page (1 to 100; default 20).
        #[arg(long, value_name = "N")]
        limit: Option<i64>,
        /// The next page: the cursor the previous page printed (with the same query).
        #[arg(long)]
        cursor: Option<String>,
        /// Only the tickets of a sprint: its name or number, `active`, or `none` (the
        /// backlog).
        #[arg(long)]
        sprint: Option<String>,
    },
    /// Link a git commit to a ticket.
    Link {
        #[arg(help = TICKET)]
        ticket: String,
        /// The commit's hash (7 to 40 hex digits).
        commit: String,
        /// The commit's message (its first line is enough).
        #[arg(long, short, allow_hyphen_values = true)]
        message: Option<String>,
    },
    /// Delete a ticket (kept in the database, gone from every view).
    Delete {
        #[arg(help = TICKET)]
        ticket: String,
    },
}

#[derive(Debug, Args)]
pub struct EditArgs {
    #[arg(help = TICKET)]
    pub ticket: String,
    /// The new title.
    #[arg(long, short, allow_hyphen_values = true)]
    pub title: Option<String>,
    /// Replace the whole description (markdown).
    #[arg(long, short, allow_hyphen_values = true, conflicts_with_all = ["append", "prepend", "lines", "section"])]
    pub description: Option<String>,
    /// Append text to the description.
    #[arg(long, allow_hyphen_values = true, conflicts_with_all = ["prepend", "lines", "section"])]
    pub append: Option<String>,
    /// Prepend text to the description.
    #[arg(long, allow_hyphen_values = true, conflicts_with_all = ["lines", "section"])]
    pub prepend: Option<String>,
    /// Replace lines START-END (1-indexed, inclusive; or one line N) with --content.
    #[arg(
        long,
        value_name = "START-END",
        requires = "content",
        conflicts_with = "section"
    )]
    pub lines: Option<String>,
    /// Replace the body of this markdown section (e.g. "## Acceptance Criteria") with
    /// --content; the header line stays.
    #[arg(long, value_name = "HEADER", requires = "content")]
    pub section: Option<String>,
    /// The new text for --lines or --section; it may start with `-` (a checklist).
    #[arg(long, allow_hyphen_values = true)]
    pub content: Option<String>,
    /// Story points, 1 to 13.
    #[arg(long, short = 'p', conflicts_with = "clear_points")]
    pub points: Option<i64>,
    /// Remove the story points.
    #[arg(long)]
    pub clear_points: bool,
    /// Replace the labels (repeat for several).
    #[arg(long = "label", short)]
    pub labels: Vec<String>,
    /// Remove every label.
    #[arg(long, conflicts_with = "labels")]
    pub clear_labels: bool,
    /// The new parent ticket (KEY-N or UUID).
    #[arg(long, value_name = "TICKET", conflicts_with = "clear_parent")]
    pub parent: Option<String>,
    /// Make it a top-level ticket again (no parent).
    #[arg(long)]
    pub clear_parent: bool,
    /// The new epic (KEY-N or UUID).
    #[arg(long, value_name = "TICKET", conflicts_with = "clear_epic")]
    pub epic: Option<String>,
    /// Take it out of its epic.
    #[arg(long)]
    pub clear_epic: bool,
    /// Make it an epic or a plain ticket.
    #[arg(long, value_name = "KIND", value_parser = ["ticket", "epic"])]
    pub kind: Option<String>,
    /// Why, kept in the history.
    #[arg(long, short, allow_hyphen_values = true)]
    pub message: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum DepCommand {
    /// TICKET depends on DEPENDS_ON (DEPENDS_ON must be done first); cycles are refused.
    Add {
        #[arg(help = TICKET)]
        ticket: String,
        /// The ticket it waits on (KEY-N or UUID).
        depends_on: String,
    },
    /// Remove a dependency.
    Remove {
        #[arg(help = TICKET)]
        ticket: String,
        /// The ticket it no longer waits on (KEY-N or UUID).
        depends_on: String,
    },
    /// What a ticket waits on and what waits on it, transitively.
    Graph {
        #[arg(help = TICKET)]
        ticket: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum TemplateCommand {
    /// List the built-in and project templates (.jility/templates/*.md) with their
    /// variables.
    List {
        /// Templates per page (1 to 200; default 50).
        #[arg(long, value_name = "N")]
        limit: Option<i64>,
        /// The next page: the cursor the previous page printed.
        #[arg(long)]
        cursor: Option<String>,
    },
    /// Create a ticket from a template, filling its {{variables}}.
    Create {
        /// The template's name (see `jility template list`).
        template: String,
        /// A variable as NAME=VALUE (repeat for several; every variable the template uses).
        #[arg(long = "var", value_name = "NAME=VALUE", allow_hyphen_values = true)]
        variables: Vec<String>,
        /// Assign the new ticket to this person or agent.
        #[arg(long, short)]
        assignee: Option<String>,
    },
}

impl Command {
    /// How this command prints (`--json`, `--color`), when it prints.
    pub fn output(&self) -> Option<&OutputArgs> {
        match self {
            Command::Init { out, .. } => Some(out),
            Command::Ticket(group) => Some(&group.out),
            Command::Dep(group) => Some(&group.out),
            Command::Template(group) => Some(&group.out),
            Command::Epic(group) => Some(&group.out),
            Command::Sprint(group) => Some(&group.out),
            Command::View(group) => Some(&group.out),
            Command::Inbox(group) => Some(&group.out),
            #[cfg(feature = "web")]
            Command::Web { .. } => None,
            #[cfg(feature = "cloud")]
            Command::Cloud(cloud) => cloud.output(),
        }
    }

    /// The `--db` this command was given, when it works on the local database.
    pub fn db(&self) -> Option<&DbArgs> {
        match self {
            Command::Init { db, .. } => Some(db),
            Command::Ticket(group) => Some(&group.db),
            Command::Dep(group) => Some(&group.db),
            Command::Template(group) => Some(&group.db),
            Command::Epic(group) => Some(&group.db),
            Command::Sprint(group) => Some(&group.db),
            Command::View(group) => Some(&group.db),
            Command::Inbox(group) => Some(&group.db),
            #[cfg(feature = "web")]
            Command::Web { db, .. } => Some(db),
            #[cfg(feature = "cloud")]
            Command::Cloud(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn the_help_of_move_names_every_status() {
        let mut cli = Cli::command();
        let help = cli
            .find_subcommand_mut("ticket")
            .and_then(|c| c.find_subcommand_mut("move"))
            .map(|c| c.render_long_help().to_string())
            .unwrap_or_default();
        for status in jility_core::model::Status::ALL {
            assert!(help.contains(status.as_str()), "{status}: {help}");
        }
    }
}
