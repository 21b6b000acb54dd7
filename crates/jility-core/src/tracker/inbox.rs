//! The inbox: who a change concerns, told in the transaction that makes it. A mention
//! (`@name` in a comment or a description, of someone the workspace knows), being assigned,
//! a ticket one watches changing, a handoff (a ticket moved to review by someone else) and
//! a blocker of one's ticket being done each put an entry in the inbox of whom it
//! concerns — never the one who made the change. One entry per person, ticket and
//! operation: the most specific kind wins.
//!
//! A person watches the tickets they created, are assigned to or commented on, and those
//! they chose to watch; choosing not to watch wins over all of these.

use mcp_common_core::ToolError;

use crate::store::{NewNotification, StoreTx};

const MENTIONED: (&str, i32) = ("mentioned", 50);
const ASSIGNED: (&str, i32) = ("assigned", 40);
const HANDOFF: (&str, i32) = ("handoff", 30);
const BLOCKER_DONE: (&str, i32) = ("blocker_done", 30);
const WATCHING: (&str, i32) = ("watching", 10);

/// Most mentions of one text that are looked up.
const MAX_MENTIONS: usize = 20;

/// The `@name`s of `text` (names of letters, digits and `._-+@`, an email too; a trailing
/// `.` is punctuation), each once, in order. An `@` inside a word (an email address
/// written out) mentions no one.
pub fn mentions(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let starts =
            chars[i] == '@' && (i == 0 || !(chars[i - 1].is_alphanumeric() || chars[i - 1] == '`'));
        if starts {
            let mut j = i + 1;
            while j < chars.len() && (chars[j].is_alphanumeric() || "._-+@".contains(chars[j])) {
                j += 1;
            }
            let name: String = chars[i + 1..j].iter().collect();
            let name = name.trim_end_matches(['.', '-', '@']).to_string();
            if !name.is_empty()
                && name.len() <= 254
                && !out.iter().any(|n| n.eq_ignore_ascii_case(&name))
            {
                out.push(name);
            }
            i = j;
        } else {
            i += 1;
        }
    }
    out.truncate(MAX_MENTIONS);
    out
}

fn names(list: Option<&str>) -> Vec<String> {
    list.unwrap_or("")
        .split(", ")
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .map(str::to_string)
        .collect()
}

/// Who of `text`'s mentions the workspace knows, as it knows them.
fn mentioned(tx: &mut dyn StoreTx, text: &str) -> Result<Vec<String>, ToolError> {
    let asked = mentions(text);
    if asked.is_empty() {
        return Ok(Vec::new());
    }
    Ok(tx.known_names(&asked)?)
}

/// A change as the inbox reads it: its kind and values (the change log's entry).
pub(super) struct Told<'a> {
    pub(super) kind: &'a str,
    pub(super) old: Option<&'a str>,
    pub(super) new: Option<&'a str>,
    pub(super) detail: Option<&'a str>,
}

/// What an operation's change concerns whom: their inbox entries, in the change's
/// transaction. `bulk`: a bulk edit's change, which tells those it assigns and unblocks,
/// not each ticket's watchers.
pub(super) fn after_change(
    tx: &mut dyn StoreTx,
    id: i64,
    actor: &str,
    at: &str,
    c: &Told<'_>,
    bulk: bool,
) -> Result<(), ToolError> {
    // The entries name the ticket; their summaries say what happened to it.
    let mut told: Vec<(String, (&str, i32), String)> = Vec::new();
    let mut tell = |who: Vec<String>, kind: (&'static str, i32), summary: &str| {
        for person in who {
            if person != actor {
                told.push((person, kind, summary.to_string()));
            }
        }
    };
    match (c.kind, c.new) {
        ("created", _) => {
            let assignees = tx.assignees(id)?;
            tell(assignees, ASSIGNED, &format!("{actor} assigned it to you"));
        }
        ("assignees_changed", _) => {
            let before = names(c.old);
            let added: Vec<String> = names(c.new)
                .into_iter()
                .filter(|n| !before.contains(n))
                .collect();
            tell(added, ASSIGNED, &format!("{actor} assigned it to you"));
        }
        ("comment_added", _) => {
            let (newest, _) = tx.comments(id, 1)?;
            if let Some(comment) = newest.last().filter(|c| c.author == actor) {
                let who = mentioned(tx, &comment.content)?;
                tell(
                    who,
                    MENTIONED,
                    &format!("{actor} mentioned you in a comment"),
                );
            }
        }
        ("description_changed", new) => {
            let before = mentions(c.old.unwrap_or(""));
            let who: Vec<String> = mentioned(tx, new.unwrap_or(""))?
                .into_iter()
                .filter(|n| !before.iter().any(|b| b.eq_ignore_ascii_case(n)))
                .collect();
            tell(
                who,
                MENTIONED,
                &format!("{actor} mentioned you in the description"),
            );
        }
        ("status_changed", Some("review")) if !bulk => {
            let who = tx.watchers(id)?;
            tell(who, HANDOFF, &format!("{actor} handed it over for review"));
        }
        ("status_changed", Some("done")) => {
            let dependents = tx.dependents_of(id)?;
            if !dependents.is_empty() {
                let number = tx
                    .ticket_by_id(id)?
                    .map(|row| row.display_number())
                    .unwrap_or_default();
                // Told on the ticket that waited, not the one done.
                for waiting in dependents {
                    let Some(dependent) = tx.ticket_by_id(waiting)? else {
                        continue;
                    };
                    let mut who = vec![dependent.created_by.clone()];
                    for assignee in tx.assignees(waiting)? {
                        if !who.contains(&assignee) {
                            who.push(assignee);
                        }
                    }
                    let summary = format!("{number}, which it waited on, is done ({actor})");
                    for person in who.iter().filter(|p| *p != actor) {
                        tx.notify(&NewNotification {
                            recipient: person,
                            kind: BLOCKER_DONE.0,
                            priority: BLOCKER_DONE.1,
                            ticket_id: waiting,
                            actor,
                            summary: &summary,
                            at,
                        })?;
                    }
                }
            }
        }
        _ => {}
    }
    if !bulk
        && c.kind != "created"
        && !(c.kind == "description_changed" && c.detail == Some("created"))
    {
        let who = tx.watchers(id)?;
        tell(who, WATCHING, &format!("{actor} {}", describe(c)));
    }
    for (recipient, (kind, priority), summary) in &told {
        tx.notify(&NewNotification {
            recipient,
            kind,
            priority: *priority,
            ticket_id: id,
            actor,
            summary,
            at,
        })?;
    }
    Ok(())
}

/// What a change did, as a verb phrase after who did it.
fn describe(c: &Told<'_>) -> String {
    match c.kind {
        "status_changed" => format!("moved it to {}", c.new.unwrap_or("?").replace('_', " ")),
        "comment_added" => "commented".into(),
        "description_changed" => "edited the description".into(),
        "title_changed" => "renamed it".into(),
        "assignees_changed" => "changed who it is assigned to".into(),
        "labels_changed" => "changed its labels".into(),
        "dependency_added" | "dependency_removed" => "changed its dependencies".into(),
        "deleted" => "deleted it".into(),
        "sprint_changed" => "moved it to another sprint".into(),
        "story_points_changed" => "changed its points".into(),
        _ => "changed it".into(),
    }
}

/// The tool whose cursors the inbox's pages carry.
pub const INBOX_TOOL: &str = "jility_list_notifications";
/// Pages of the inbox: 20 by default, at most 100.
pub const INBOX_LIMIT: mcp_common_core::Limit = mcp_common_core::Limit::new(20, 100);
/// Most entries one call marks by id.
const MAX_MARKED: usize = 500;

fn entry(row: crate::store::NotificationRow) -> super::Notification {
    super::Notification {
        id: row.id,
        kind: row.kind,
        ticket: Some(row.ticket).filter(|t| !t.is_empty()),
        title: Some(row.title).filter(|t| !t.is_empty()),
        actor: row.actor,
        summary: row.summary,
        created_at: row.created_at,
        read: row.read_at.is_some(),
    }
}

impl<S: crate::store::Store> super::Tracker<S> {
    /// `jility_list_notifications`: the caller's inbox, newest first.
    pub fn list_notifications(
        &mut self,
        actor: &str,
        p: &crate::params::ListNotifications,
    ) -> Result<mcp_common_core::Paged<super::NotificationPage>, ToolError> {
        let limit = super::checks::page_size(INBOX_LIMIT, p.limit)?;
        let cursors = self.cursor_key.bind(INBOX_TOOL, &(actor, p.unread_only));
        let before: Option<i64> = cursors.start(p.cursor.as_deref())?;
        self.store.read(|tx| {
            let mut rows = tx.notifications(actor, p.unread_only, before, limit + 1)?;
            let more = rows.len() > limit;
            rows.truncate(limit);
            let next = more
                .then(|| rows.last().map(|r| cursors.encode(&r.id)))
                .flatten();
            let total = tx.count_notifications(actor, p.unread_only)?;
            let unread = if p.unread_only {
                total
            } else {
                tx.count_notifications(actor, true)?
            };
            Ok(mcp_common_core::Paged {
                data: super::NotificationPage {
                    recipient: actor.to_string(),
                    notifications: rows.into_iter().map(entry).collect(),
                    unread,
                },
                page: mcp_common_core::Page::new(total, next),
            })
        })
    }

    /// `jility_mark_notifications_read`: entries of the caller's inbox (`ids`, or `all`).
    pub fn mark_notifications_read(
        &mut self,
        actor: &str,
        p: &crate::params::MarkNotificationsRead,
    ) -> Result<super::NotificationsMarked, ToolError> {
        let ids = match (p.all, p.ids.is_empty()) {
            (true, true) => None,
            (false, false) if p.ids.len() <= MAX_MARKED => Some(p.ids.as_slice()),
            (false, false) => {
                return Err(super::checks::invalid(
                    format!("At most {MAX_MARKED} ids at once, not {}", p.ids.len()),
                    "Mark them in several calls, or all of them with `all: true`.",
                ));
            }
            _ => {
                return Err(super::checks::invalid(
                    "Say which entries to mark read: `ids`, or `all: true` (one of the two)",
                    "Pass the `id`s jility_list_notifications gave, or `all: true` for the whole inbox.",
                ));
            }
        };
        let at = super::now();
        self.store.write(|tx| {
            let marked = tx.mark_read(actor, ids, &at)?;
            Ok(super::NotificationsMarked {
                marked,
                unread: tx.count_notifications(actor, true)?,
            })
        })
    }

    /// Who watches ticket `reference`, and whether `actor` does (a read).
    pub fn ticket_watchers(
        &mut self,
        actor: &str,
        reference: &str,
    ) -> Result<super::Watched, ToolError> {
        self.store.read(|tx| {
            let row = super::checks::resolve(tx, reference)?;
            let watchers = tx.watchers(row.id)?;
            Ok(super::Watched {
                number: row.display_number(),
                watching: watchers.iter().any(|w| w == actor),
                watchers,
            })
        })
    }

    /// `jility_watch_ticket`: the caller watches a ticket (or no longer does).
    pub fn watch_ticket(
        &mut self,
        actor: &str,
        p: &crate::params::WatchTicket,
    ) -> Result<super::Watched, ToolError> {
        let at = super::now();
        self.store.write(|tx| {
            let row = super::checks::resolve(tx, &p.ticket_id)?;
            tx.set_watch(row.id, actor, p.watching, &at)?;
            let watchers = tx.watchers(row.id)?;
            Ok(super::Watched {
                number: row.display_number(),
                watching: watchers.iter().any(|w| w == actor),
                watchers,
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mentions_are_read_as_people_write_them() {
        assert_eq!(
            mentions("@alice please look, cc @bob."),
            vec!["alice", "bob"]
        );
        assert_eq!(
            mentions("mail me at carol@example.com"),
            Vec::<String>::new()
        );
        assert_eq!(
            mentions("@dana@example.com and @Dana@example.com"),
            vec!["dana@example.com"]
        );
        assert_eq!(mentions("`@code` (@agent-1)"), vec!["agent-1"]);
        assert_eq!(mentions("@ alone @@ and @-"), Vec::<String>::new());
        assert_eq!(mentions(&"@x ".repeat(50)).len(), 1);
        let many: String = (0..40).map(|i| format!("@p{i} ")).collect();
        assert_eq!(mentions(&many).len(), MAX_MENTIONS);
    }
}
