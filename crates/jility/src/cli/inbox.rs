//! `jility inbox …`: what needs you — mentions, assignments, handoffs, done blockers and
//! changes to what you watch — and marking it read, watching and unwatching tickets; in
//! local and cloud mode alike (you are JILITY_ACTOR locally, the token's name in the cloud).

use clap::Subcommand;
use jility_core::ops;
use jility_core::params::{ListNotifications, MarkNotificationsRead, WatchTicket};
use jility_core::tracker::{NotificationPage, NotificationsMarked, Watched};
use mcp_common::{Page, ToolError};

use super::Out;
use super::human::{AnsiColor, Painter};
use super::target::Target;

#[derive(Debug, Subcommand)]
pub enum InboxCommand {
    /// Your inbox, newest first.
    List {
        /// Only what you have not read.
        #[arg(long)]
        unread: bool,
        /// Entries per page (1 to 100; default 20).
        #[arg(long, value_name = "N")]
        limit: Option<i64>,
        /// The next page: the cursor the previous page printed.
        #[arg(long)]
        cursor: Option<String>,
    },
    /// Mark entries read: by their ids, or all of them.
    Read {
        /// The entries' ids (as `jility inbox list` shows them).
        ids: Vec<i64>,
        /// Every entry of your inbox.
        #[arg(long, conflicts_with = "ids")]
        all: bool,
    },
    /// Watch a ticket: its changes reach your inbox.
    Watch {
        /// The ticket (KEY-N or UUID).
        ticket: String,
    },
    /// Stop watching a ticket (also one you created, are assigned to or commented on).
    Unwatch {
        /// The ticket (KEY-N or UUID).
        ticket: String,
    },
}

pub fn inbox(out: &Out, t: &mut Target, command: InboxCommand) -> Result<(), ToolError> {
    match command {
        InboxCommand::List {
            unread,
            limit,
            cursor,
        } => out.show_page(
            t.exec::<ops::ListNotifications>(ListNotifications {
                unread_only: unread,
                limit,
                cursor,
            })?,
            move |p, page, paging| listed(p, page, paging, unread),
        ),
        InboxCommand::Read { ids, all } => out.show(
            t.exec::<ops::MarkNotificationsRead>(MarkNotificationsRead { ids, all })?,
            marked,
        ),
        InboxCommand::Watch { ticket } => out.show(
            t.exec::<ops::WatchTicket>(WatchTicket {
                ticket_id: ticket,
                watching: true,
            })?,
            watched,
        ),
        InboxCommand::Unwatch { ticket } => out.show(
            t.exec::<ops::WatchTicket>(WatchTicket {
                ticket_id: ticket,
                watching: false,
            })?,
            watched,
        ),
    }
}

fn listed(p: &Painter, page: &NotificationPage, paging: &Page, unread: bool) -> String {
    if page.notifications.is_empty() {
        let what = if unread { "Nothing unread" } else { "Nothing" };
        return format!("{what} in {}'s inbox.", p.person(&page.recipient));
    }
    let mut lines = vec![format!(
        "{}'s inbox: {} unread",
        p.person(&page.recipient),
        p.bold(&page.unread.to_string())
    )];
    for n in &page.notifications {
        let mark = if n.read {
            " ".to_string()
        } else {
            p.fg(AnsiColor::Cyan, "●")
        };
        let about = match (&n.ticket, &n.title) {
            (Some(ticket), Some(title)) => format!("{} {}", p.bold(ticket), title),
            (Some(ticket), None) => p.bold(ticket),
            _ => String::new(),
        };
        lines.push(format!(
            "{mark} {:>5}  {}  {}  {}",
            n.id,
            p.dim(&p.when(&n.created_at)),
            about,
            p.dim(&format!("— {}", n.summary)),
        ));
    }
    if let Some(next) = &paging.next_cursor {
        lines.push(p.hint(&format!("Older: jility inbox list --cursor {next}")));
    }
    if page.unread > 0 {
        lines.push(p.hint("Mark them read: jility inbox read --all (or by id)"));
    }
    lines.join("\n")
}

fn marked(_: &Painter, m: &NotificationsMarked) -> String {
    format!("Marked {} read; {} unread left.", m.marked, m.unread)
}

fn watched(p: &Painter, w: &Watched) -> String {
    let state = if w.watching {
        "Watching"
    } else {
        "Not watching"
    };
    format!(
        "{state} {}. {}",
        p.bold(&w.number),
        p.dim(&format!("Watchers: {}", w.watchers.join(", ")))
    )
}
