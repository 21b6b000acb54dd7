//! Tickets: the project (`init`), creating, reading, listing and searching tickets,
//! assigning, comments, commit links and deleting.

use mcp_common_core::{Page, Paged, ToolError};
use serde::Serialize;

use super::change_log::{Entry, change, record};
use super::checks::{
    check_epic_link, check_key, check_names, check_points, check_size, check_title, invalid, live,
    lookup, page_size, parse_status, resolve, resolve_opt, ticket_ref,
};
use super::{
    Assigned, CommentAdded, CommitLinked, Created, Deleted, Initialized, LIST_LIMIT, LIST_TOOL,
    MAX_COMMENT_BYTES, MAX_DESCRIPTION_BYTES, TicketDetail, TicketPage, Tracker, now,
};
use crate::errors::clip;
use crate::model::{Change, Kind, Status, Ticket};
use crate::params::{AddComment, AssignTicket, CreateTicket, LinkCommit, ListTickets};
use crate::store::{
    ListFilter, NewTicket, Store, StoreTx, TicketRow, TicketSet, TicketUpdate, WholeTicket,
};

/// Longest value a change shows inline in `recent_changes`; longer ones are cut.
const CHANGE_VALUE_CHARS: usize = 200;

impl<S: Store> Tracker<S> {
    /// `jility init`: create the first project, unless there is one. `explicit_key`: the
    /// user asked for this key, so an existing project that never had a ticket takes it,
    /// and one that has had tickets refuses (its tickets are named by the old key).
    pub fn init(
        &mut self,
        key: &str,
        name: &str,
        explicit_key: bool,
    ) -> Result<(Initialized, bool), ToolError> {
        let key = check_key(key)?;
        self.store.write(|tx| {
            if let Some(existing) = tx.projects()?.into_iter().next() {
                let mut project_key = existing.key;
                if explicit_key && project_key != key {
                    if !tx.rekey_project(existing.id, &key)? {
                        return Err(invalid(
                            format!(
                                "This database's project already has tickets named {project_key}-N; its key cannot change to {key}"
                            ),
                            "Keep the key, or start another database with `jility --db OTHER.db init --key KEY`.",
                        ));
                    }
                    project_key = key.clone();
                }
                return Ok((
                    Initialized {
                        key: project_key,
                        name: existing.name,
                    },
                    false,
                ));
            }
            let project = tx.create_project(&key, name, &now())?;
            Ok((
                Initialized {
                    key: project.key,
                    name: project.name,
                },
                true,
            ))
        })
    }

    pub fn create_ticket(&mut self, actor: &str, p: CreateTicket) -> Result<Created, ToolError> {
        let title = check_title(&p.title)?;
        check_size(
            p.description.as_deref().unwrap_or_default(),
            "The description",
            MAX_DESCRIPTION_BYTES,
        )?;
        let story_points = check_points(p.story_points)?;
        let status = match &p.status {
            Some(s) => parse_status(s)?,
            None => Status::Backlog,
        };
        let assignees = check_names(&p.assignees, "Assignees")?;
        let labels = check_names(&p.labels, "Labels")?;
        let kind = p.kind.unwrap_or_default();
        let at = now();
        let (mut created, row) = self.store.write(|tx| {
            let epic_id = resolve_opt(tx, p.epic_id.as_deref())?;
            let parent_id = resolve_opt(tx, p.parent_id.as_deref())?;
            check_epic_link(tx, None, kind, epic_id, parent_id)?;
            let draft = Draft {
                title,
                description: p.description.unwrap_or_default(),
                status,
                story_points,
                assignees,
                labels,
                parent_id,
                epic_id,
                kind,
            };
            let row = insert(tx, &draft, actor, &at)?;
            let created = Created {
                ticket: full_ticket(tx, &row)?,
                template: None,
                likely_duplicates: Vec::new(),
            };
            Ok((created, row))
        })?;
        // After the commit, and only for a caller who may read other tickets: a lookup that
        // fails leaves the answer without them, never the ticket unmade.
        if self.may_read {
            match self
                .store
                .read(|tx| super::related::duplicates_of_new(tx, &row))
            {
                Ok(found) => created.likely_duplicates = found,
                Err(err) => tracing::warn!(
                    code = %err.code,
                    "the likely duplicates of a new ticket could not be looked up"
                ),
            }
        }
        Ok(created)
    }

    /// The ticket `reference` names, whole ([`Self::ticket_detail`], waited for).
    pub fn get_ticket(&mut self, reference: &str) -> Result<TicketDetail, ToolError> {
        crate::store::wait(self.ticket_detail(reference))
    }

    /// The ticket `reference` names, whole, as a future (the store's
    /// [`Store::whole_tickets`]): an async caller awaits it on its own task, a blocking one
    /// waits for it ([`Self::get_ticket`]).
    pub fn ticket_detail(
        &mut self,
        reference: &str,
    ) -> impl Future<Output = Result<TicketDetail, ToolError>> + Send + 'static {
        let reading =
            lookup(reference).map(|lookup| self.store.whole_tickets(std::slice::from_ref(&lookup)));
        let reference = reference.to_string();
        async move {
            let found = reading?.await?.pop().flatten();
            let whole = live(found, |whole| &whole.row, &reference)?;
            Ok(detail(whole))
        }
    }

    /// `jility_list_tickets`: by its filters, newest first; with a `query`, by the query
    /// language too ([`Self::list_query`]).
    pub fn list(&mut self, actor: &str, p: &ListTickets) -> Result<Paged<TicketPage>, ToolError> {
        if let Some(query) = p.query.as_deref().filter(|q| !q.trim().is_empty()) {
            return self.list_query(actor, p, query);
        }
        let limit = page_size(LIST_LIMIT, p.limit)?;
        let mut statuses = Vec::new();
        for status in p.status.iter().map(parse_status) {
            let status = status?;
            // A status named twice is one filter, not two (each would list its tickets).
            if !statuses.contains(&status) {
                statuses.push(status);
            }
        }
        let assignee = p
            .assignee
            .as_deref()
            .map(str::trim)
            .filter(|a| !a.is_empty())
            .map(str::to_string);
        if assignee.is_some() && p.unassigned {
            return Err(invalid(
                "assignee and unassigned cannot be combined",
                "Use one of them.",
            ));
        }
        let labels = check_names(&p.labels, "Labels")?;
        let key = self.cursor_key.clone();
        self.store.read(|tx| {
            let filter = ListFilter {
                statuses: statuses.clone(),
                assignee: assignee.clone(),
                labels: labels.clone(),
                parent_id: resolve_opt(tx, p.parent_id.as_deref())?,
                epic_id: resolve_opt(tx, p.epic_id.as_deref())?,
                unassigned: p.unassigned,
                sprint: sprint_filter(tx, p.sprint.as_deref())?,
            };
            let mut shape_statuses: Vec<&'static str> =
                filter.statuses.iter().map(|s| s.as_str()).collect();
            shape_statuses.sort_unstable();
            let mut shape_labels = filter.labels.clone();
            shape_labels.sort();
            let cursors = key.bind(
                LIST_TOOL,
                &ListShape {
                    statuses: shape_statuses,
                    assignee: filter.assignee.as_deref(),
                    labels: &shape_labels,
                    parent_id: filter.parent_id,
                    epic_id: filter.epic_id,
                    unassigned: filter.unassigned,
                    sprint: filter.sprint,
                },
            );
            let after: Option<i64> = cursors.start(p.cursor.as_deref())?;
            let page = tx.list(&filter, after, limit)?;
            let total = page.total as u64;
            let next = page.next_after.map(|after| cursors.encode(&after));
            Ok(Paged {
                data: TicketPage {
                    tickets: page.items,
                    query: None,
                },
                page: if page.total_exact {
                    Page::new(total, next)
                } else {
                    Page::at_least(total, next)
                },
            })
        })
    }

    pub fn assign(&mut self, actor: &str, p: AssignTicket) -> Result<Assigned, ToolError> {
        check_size(
            p.message.as_deref().unwrap_or_default(),
            "The message",
            MAX_COMMENT_BYTES,
        )?;
        let current = check_names(&p.assignees, "Assignees")?;
        let message = p
            .message
            .as_deref()
            .map(str::trim)
            .filter(|m| !m.is_empty())
            .map(str::to_string);
        let at = now();
        self.store.write(|tx| {
            let row = resolve(tx, &p.ticket_id)?;
            let previous = tx.assignees(row.id)?;
            let mut same = previous.clone();
            same.sort();
            let mut wanted = current.clone();
            wanted.sort();
            if same != wanted {
                tx.set_assignees(row.id, &current, actor, &at)?;
                let (old, new) = (previous.join(", "), current.join(", "));
                record(
                    tx,
                    row.id,
                    actor,
                    &at,
                    Entry {
                        old: Some(&old),
                        new: Some(&new),
                        message: message.as_deref(),
                        ..change("assignees_changed")
                    },
                )?;
                tx.update_ticket(row.id, &TicketUpdate::default(), actor, &at)?;
            }
            let comment_added = if let Some(message) = &message {
                tx.insert_comment(row.id, actor, message, &at)?;
                record(tx, row.id, actor, &at, change("comment_added"))?;
                true
            } else {
                false
            };
            Ok(Assigned {
                number: row.display_number(),
                previous,
                current: tx.assignees(row.id)?,
                message,
                comment_added,
                changed_by: actor.to_string(),
            })
        })
    }

    pub fn add_comment(&mut self, actor: &str, p: AddComment) -> Result<CommentAdded, ToolError> {
        if p.content.trim().is_empty() {
            return Err(invalid(
                "Comment cannot be empty",
                "Write the comment's text in `content`.",
            ));
        }
        check_size(&p.content, "The comment", MAX_COMMENT_BYTES)?;
        let at = now();
        self.store.write(|tx| {
            let row = resolve(tx, &p.ticket_id)?;
            let comment = tx.insert_comment(row.id, actor, &p.content, &at)?;
            record(
                tx,
                row.id,
                actor,
                &at,
                Entry {
                    new: Some(&comment.id),
                    ..change("comment_added")
                },
            )?;
            tx.update_ticket(row.id, &TicketUpdate::default(), actor, &at)?;
            Ok(CommentAdded {
                number: row.display_number(),
                comment,
            })
        })
    }

    pub fn link_commit(&mut self, actor: &str, p: LinkCommit) -> Result<CommitLinked, ToolError> {
        let hash = p.commit_hash.trim().to_ascii_lowercase();
        if !(4..=64).contains(&hash.len()) || !hash.chars().all(|c| c.is_ascii_hexdigit()) {
            return Err(invalid(
                format!("'{}' is not a commit hash", clip(&p.commit_hash)),
                "Give the commit's hash: 4 to 64 hexadecimal digits (e.g. from `git rev-parse --short HEAD`).",
            ));
        }
        let message = p
            .commit_message
            .as_deref()
            .map(str::trim)
            .filter(|m| !m.is_empty());
        let at = now();
        self.store.write(|tx| {
            let row = resolve(tx, &p.ticket_id)?;
            let inserted = tx.link_commit(row.id, &hash, message, actor, &at)?;
            if inserted {
                record(
                    tx,
                    row.id,
                    actor,
                    &at,
                    Entry {
                        new: Some(&hash),
                        detail: message,
                        ..change("commit_linked")
                    },
                )?;
                tx.update_ticket(row.id, &TicketUpdate::default(), actor, &at)?;
            }
            let commit = tx
                .commits(row.id)?
                .into_iter()
                .find(|c| c.hash == hash)
                .ok_or_else(|| ToolError::internal("the linked commit vanished"))?;
            Ok(CommitLinked {
                number: row.display_number(),
                commit,
                already_linked: !inserted,
            })
        })
    }

    /// `jility ticket delete`: a soft delete; the rows stay, the ticket leaves every view.
    pub fn delete(&mut self, actor: &str, reference: &str) -> Result<Deleted, ToolError> {
        let at = now();
        self.store.write(|tx| {
            let row = resolve(tx, reference)?;
            if row.kind == Kind::Epic {
                let members = tx.ticket_rows(TicketSet::Epic(row.id))?.len();
                if members > 0 {
                    return Err(invalid(
                        format!(
                            "{} gathers {members} ticket(s): an epic is deleted once it has none",
                            row.display_number()
                        ),
                        "Move its tickets to another epic (or out of it) first: jility_get_epic lists them.",
                    ));
                }
            }
            tx.update_ticket(
                row.id,
                &TicketUpdate {
                    deleted: true,
                    ..Default::default()
                },
                actor,
                &at,
            )?;
            super::sprints::keep_ticket(tx, &row, &at)?;
            record(tx, row.id, actor, &at, change("deleted"))?;
            Ok(Deleted {
                number: row.display_number(),
                title: row.title,
            })
        })
    }
}

pub(super) fn full_ticket(tx: &mut dyn StoreTx, row: &TicketRow) -> Result<Ticket, ToolError> {
    let parent = match row.parent_id {
        Some(id) => Some(ticket_ref(tx, id)?.number),
        None => None,
    };
    let epic = match row.epic_id {
        Some(id) => Some(ticket_ref(tx, id)?.number),
        None => None,
    };
    Ok(Ticket {
        id: row.uuid.clone(),
        number: row.display_number(),
        title: row.title.clone(),
        description: row.description.clone(),
        status: row.status,
        story_points: row.story_points,
        assignees: tx.assignees(row.id)?,
        labels: tx.labels(row.id)?,
        parent,
        epic,
        kind: row.kind,
        sprint: row.sprint.clone(),
        created_at: row.created_at.clone(),
        created_by: row.created_by.clone(),
        updated_at: row.updated_at.clone(),
        updated_by: row.updated_by.clone(),
    })
}

/// What `jility_get_ticket` shows of `whole`.
pub(super) fn detail(whole: WholeTicket) -> TicketDetail {
    let WholeTicket {
        row,
        assignees,
        labels,
        parent,
        epic,
        comments,
        comment_count,
        dependencies,
        dependents,
        commits,
        changes,
    } = whole;
    TicketDetail {
        ticket: Ticket {
            id: row.uuid,
            number: format!("{}-{}", row.project_key, row.number),
            title: row.title,
            description: row.description,
            status: row.status,
            story_points: row.story_points,
            assignees,
            labels,
            parent: parent.map(|p| p.number),
            epic: epic.map(|e| e.number),
            kind: row.kind,
            sprint: row.sprint,
            created_at: row.created_at,
            created_by: row.created_by,
            updated_at: row.updated_at,
            updated_by: row.updated_by,
        },
        comments,
        comment_count,
        dependencies,
        dependents,
        linked_commits: commits,
        recent_changes: changes.into_iter().map(clip_change).collect(),
    }
}

/// A validated new ticket, ready to insert.
pub(super) struct Draft {
    pub(super) title: String,
    pub(super) description: String,
    pub(super) status: Status,
    pub(super) story_points: Option<u8>,
    pub(super) assignees: Vec<String>,
    pub(super) labels: Vec<String>,
    pub(super) parent_id: Option<i64>,
    pub(super) epic_id: Option<i64>,
    pub(super) kind: Kind,
}

pub(super) fn insert(
    tx: &mut dyn StoreTx,
    draft: &Draft,
    actor: &str,
    at: &str,
) -> Result<TicketRow, ToolError> {
    let project = tx.default_project()?;
    let number = tx.allocate_number(project.id)?;
    let uuid = uuid::Uuid::new_v4().to_string();
    let id = tx.insert_ticket(&NewTicket {
        uuid: &uuid,
        project_id: project.id,
        number,
        title: &draft.title,
        description: &draft.description,
        status: draft.status,
        story_points: draft.story_points,
        parent_id: draft.parent_id,
        epic_id: draft.epic_id,
        kind: draft.kind,
        actor,
        at,
    })?;
    if !draft.assignees.is_empty() {
        tx.set_assignees(id, &draft.assignees, actor, at)?;
    }
    if !draft.labels.is_empty() {
        tx.set_labels(id, &draft.labels)?;
    }
    record(
        tx,
        id,
        actor,
        at,
        Entry {
            new: Some(&draft.title),
            ..change("created")
        },
    )?;
    // Version 1 of the description is the original, even when empty.
    record(
        tx,
        id,
        actor,
        at,
        Entry {
            new: Some(&draft.description),
            detail: Some("created"),
            ..change("description_changed")
        },
    )?;
    tx.ticket_by_id(id)?
        .ok_or_else(|| ToolError::internal("the new ticket vanished"))
}

/// The sprint filter `name` asks for: `none` or `backlog` (no open sprint), or a sprint's
/// name, number or `active` ([`super::sprints::find_sprint`]).
pub(super) fn sprint_filter(
    tx: &mut dyn StoreTx,
    name: Option<&str>,
) -> Result<Option<Option<i64>>, ToolError> {
    let Some(name) = name.map(str::trim).filter(|n| !n.is_empty()) else {
        return Ok(None);
    };
    let project = tx.default_project()?;
    if name.eq_ignore_ascii_case("none") || name.eq_ignore_ascii_case("backlog") {
        return Ok(Some(None));
    }
    Ok(Some(Some(
        super::sprints::find_sprint(tx, project.id, name)?.id,
    )))
}

/// What a listing's cursor is bound to: every argument that changes which tickets are
/// listed, as resolved (a parent named by number or UUID is the same parent).
#[derive(Serialize)]
struct ListShape<'a> {
    statuses: Vec<&'static str>,
    assignee: Option<&'a str>,
    labels: &'a [String],
    parent_id: Option<i64>,
    epic_id: Option<i64>,
    unassigned: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    sprint: Option<Option<i64>>,
}

fn clip_change(mut c: Change) -> Change {
    if c.change_type == "description_changed" {
        // Whole descriptions belong to the history tool, not to a summary.
        c.old_value = None;
        c.new_value = None;
    }
    c.old_value = clip_value(c.old_value);
    c.new_value = clip_value(c.new_value);
    c
}

fn clip_value(value: Option<String>) -> Option<String> {
    value.map(|v| mcp_common_core::clip(&v, CHANGE_VALUE_CHARS))
}
