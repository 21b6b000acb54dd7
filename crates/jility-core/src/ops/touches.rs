//! What a write touched: the tickets each answer names as changed.

use mcp_common_core::Paged;

use crate::tracker;

/// The tickets (by number) an operation changed, as its answer names them: every server
/// process's event stream reports them, and the bridge drops what it cached of them. A read
/// touches none. Named here for each answer, so that a new answer type must say it. The
/// order is the answer's members' (alphabetical, as the answer's JSON lists them).
pub trait Touches {
    fn touched(&self) -> Vec<String>;

    /// The ticket the write was about, for its audit entry when its arguments name none: the
    /// answer's `ticket`, else the first ticket it touched.
    fn main_ticket(&self) -> Option<String> {
        self.touched().into_iter().next()
    }

    /// Whether the write changed any ticket or what lists of them show (a preview, a saved
    /// view did not): only then is it announced to the event stream and the caches.
    fn changed_tickets(&self) -> bool {
        true
    }
}

/// The numbers of `numbers`, each once, in order.
fn each_once<'a>(numbers: impl IntoIterator<Item = &'a String>) -> Vec<String> {
    let mut all: Vec<String> = Vec::new();
    for number in numbers {
        if !all.contains(number) {
            all.push(number.clone());
        }
    }
    all
}

macro_rules! touches_nothing {
    ($($ty:ty),*) => {
        $(impl Touches for $ty {
            fn touched(&self) -> Vec<String> {
                Vec::new()
            }
        })*
    };
}
touches_nothing!(
    tracker::SprintCreated,
    tracker::SprintStats,
    tracker::SprintPlan,
    tracker::TicketDetail,
    tracker::DependencyGraph,
    tracker::History,
    tracker::ViewList,
    tracker::Related,
    tracker::Estimate,
    tracker::NotificationPage
);

/// Saved views change no ticket and no listing of tickets.
macro_rules! changes_no_ticket {
    ($($ty:ty),*) => {
        $(impl Touches for $ty {
            fn touched(&self) -> Vec<String> {
                Vec::new()
            }

            fn changed_tickets(&self) -> bool {
                false
            }
        })*
    };
}
changes_no_ticket!(
    tracker::ViewSaved,
    tracker::ViewDeleted,
    tracker::NotificationsMarked,
    tracker::Watched
);

impl Touches for tracker::BulkUpdated {
    /// Every ticket it changed when the answer names them all; else none, which means "any
    /// ticket" (caches drop everything, boards reload).
    fn touched(&self) -> Vec<String> {
        if self.changed == self.tickets.len() {
            each_once(self.tickets.iter().map(|t| &t.number))
        } else {
            Vec::new()
        }
    }

    fn changed_tickets(&self) -> bool {
        !self.dry_run && self.changed > 0
    }
}

impl<T> Touches for Paged<T> {
    fn touched(&self) -> Vec<String> {
        Vec::new()
    }
}

impl Touches for tracker::Created {
    fn touched(&self) -> Vec<String> {
        let t = &self.ticket;
        each_once(
            [t.epic.as_ref(), Some(&t.number), t.parent.as_ref()]
                .into_iter()
                .flatten(),
        )
    }

    fn main_ticket(&self) -> Option<String> {
        Some(self.ticket.number.clone())
    }
}

impl Touches for tracker::Edited {
    /// The ticket, and its parent and epic as they are now (an epic or parent left is not
    /// named by the answer).
    fn touched(&self) -> Vec<String> {
        let t = &self.ticket;
        each_once(
            [t.epic.as_ref(), Some(&t.number), t.parent.as_ref()]
                .into_iter()
                .flatten(),
        )
    }

    fn main_ticket(&self) -> Option<String> {
        Some(self.ticket.number.clone())
    }
}

impl Touches for tracker::BatchCreated {
    fn touched(&self) -> Vec<String> {
        each_once(
            self.parent.as_ref().map(|p| &p.number).into_iter().chain(
                self.tickets
                    .iter()
                    .flat_map(|t| t.depends_on.iter().chain(std::iter::once(&t.number))),
            ),
        )
    }
}

impl Touches for tracker::Claimed {
    fn touched(&self) -> Vec<String> {
        vec![self.ticket.number.clone()]
    }
}

macro_rules! touches_its_number {
    ($($ty:ty),*) => {
        $(impl Touches for $ty {
            fn touched(&self) -> Vec<String> {
                vec![self.number.clone()]
            }
        })*
    };
}
touches_its_number!(
    tracker::DescriptionUpdated,
    tracker::StatusUpdated,
    tracker::CommentAdded,
    tracker::Assigned,
    tracker::CommitLinked,
    tracker::Deleted
);

impl Touches for tracker::DependencyAdded {
    fn touched(&self) -> Vec<String> {
        each_once(
            self.chain
                .iter()
                .map(|t| &t.number)
                .chain([&self.depends_on.number, &self.ticket.number]),
        )
    }

    fn main_ticket(&self) -> Option<String> {
        Some(self.ticket.number.clone())
    }
}

impl Touches for tracker::DependencyRemoved {
    fn touched(&self) -> Vec<String> {
        each_once([&self.depends_on.number, &self.ticket.number])
    }

    fn main_ticket(&self) -> Option<String> {
        Some(self.ticket.number.clone())
    }
}

impl Touches for tracker::AddedToSprint {
    fn touched(&self) -> Vec<String> {
        self.added.iter().map(|t| t.number.clone()).collect()
    }
}

impl Touches for tracker::RemovedFromSprint {
    fn touched(&self) -> Vec<String> {
        self.removed.iter().map(|t| t.number.clone()).collect()
    }
}

impl Touches for tracker::SprintStarted {
    /// A start changes no ticket (what it shows of its sprint is the sprint's name).
    fn touched(&self) -> Vec<String> {
        Vec::new()
    }
}

impl Touches for tracker::SprintCompleted {
    /// The tickets carried over moved; the done ones stay as they were.
    fn touched(&self) -> Vec<String> {
        self.carried_over.clone()
    }
}
