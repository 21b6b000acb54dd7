//! The domain: every operation of the tracker, written against [`Store`] so that any
//! database serves it. Validation, the workflow, description editing, cycle detection and
//! the change log live here; storage only stores.

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::PathBuf;

use mcp_common_core::{CursorKey, Limit, Page, Paged, ToolError, page::page_by_offset};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::description::{self, DiffStats, Edit};
use crate::errors::{self, clip};
use crate::model::{
    Change, Comment, CommitLink, MAX_STORY_POINTS, Status, Ticket, TicketRef, TicketSummary,
};
use crate::params::{
    AddComment, AssignTicket, BatchItem, ClaimTicket, CreateBatch, CreateTicket, Dependency,
    EditTicket, FromTemplate, LinkCommit, ListTemplates, ListTickets, RevertDescription,
    SearchTickets, StatusName, UpdateDescription, UpdateStatus,
};
use crate::store::{
    ListFilter, NewChange, NewTicket, SearchTerms, Store, StoreTx, TicketRow, TicketUpdate,
};
use crate::templates::{self, Template, TemplateProblem};

const MAX_TITLE_CHARS: usize = 500;
/// Largest description, and largest comment, in bytes: far beyond any real ticket, small
/// enough that no answer or history explodes.
const MAX_DESCRIPTION_BYTES: usize = 1 << 20;
const MAX_COMMENT_BYTES: usize = 256 << 10;
const COMMENTS_SHOWN: usize = 50;
const CHANGES_SHOWN: usize = 20;
/// Longest value a change shows inline in `recent_changes`; longer ones are cut.
const CHANGE_VALUE_CHARS: usize = 200;
/// Most tickets a dependency graph walks in each direction.
const GRAPH_LIMIT: usize = 500;
/// Page sizes of jility_list_tickets, jility_search_tickets and jility_list_templates.
pub const LIST_LIMIT: Limit = Limit::new(50, 200);
pub const SEARCH_LIMIT: Limit = Limit::new(20, 100);
pub const TEMPLATES_LIMIT: Limit = Limit::new(50, 200);

/// The tool names cursors are bound to (the CLI's list commands use the same, so a cursor
/// from one works in the other).
pub const LIST_TOOL: &str = "jility_list_tickets";
pub const SEARCH_TOOL: &str = "jility_search_tickets";
pub const TEMPLATES_TOOL: &str = "jility_list_templates";

fn invalid(message: impl Into<String>, hint: impl Into<String>) -> ToolError {
    ToolError::new(errors::INVALID_INPUT, message).with_hint(hint)
}

fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// The tracker: every operation, on a store. Cheap to clone when the store is (a
/// [`crate::store::sqlite::SqlitePool`] is a handle), which is how async code runs it on
/// blocking threads ([`crate::service`]).
#[derive(Clone)]
pub struct Tracker<S> {
    store: S,
    /// Seals the cursors of the list operations.
    cursor_key: CursorKey,
    /// `.jility/templates`, where the project's own templates live.
    templates_dir: PathBuf,
    /// The project root, to show template paths relative to it.
    root: PathBuf,
}

// ---------------------------------------------------------------------------------------
// Outputs

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Created {
    pub ticket: Ticket,
    /// The template it was made from, for jility_create_from_template.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<String>,
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

// ---------------------------------------------------------------------------------------
// Input checks shared by the operations

/// How a caller names a ticket.
#[derive(Debug, Clone, PartialEq, Eq)]
enum TicketKey {
    Number { key: Option<String>, number: i64 },
    Uuid(String),
}

/// Whether `text` is a ticket number as written: ASCII digits only — no sign, no blanks —
/// and not empty (`str::parse` alone would take `+1`).
fn all_digits(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit())
}

/// The number of a ticket reference: ASCII digits only, above 0, within `i64`. Leading zeros
/// are accepted and name the same ticket (`TASK-01` is `TASK-1`): the number is still
/// unambiguous, and every answer names the ticket in its canonical form `TASK-1`.
fn parse_number(text: &str) -> Option<i64> {
    all_digits(text)
        .then(|| text.parse::<i64>().ok())
        .flatten()
        .filter(|n| *n > 0)
}

/// An item of a batch named by its position, `#N` (1-based; digits only).
fn batch_position(reference: &str) -> Option<usize> {
    reference
        .strip_prefix('#')
        .filter(|n| all_digits(n))
        .and_then(|n| n.parse::<usize>().ok())
}

/// A ticket reference: `KEY-N`, a bare `N` (default project), either with a leading `#`, or
/// a UUID. Blanks around the whole reference are ignored, blanks inside it are not.
fn parse_key(text: &str) -> Option<TicketKey> {
    let text = text.trim();
    if let Ok(uuid) = uuid::Uuid::parse_str(text) {
        return Some(TicketKey::Uuid(uuid.hyphenated().to_string()));
    }
    let text = text.strip_prefix('#').unwrap_or(text);
    if all_digits(text) {
        return parse_number(text).map(|number| TicketKey::Number { key: None, number });
    }
    let (key, number) = text.rsplit_once('-')?;
    let number = parse_number(number)?;
    (!key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')).then(|| {
        TicketKey::Number {
            key: Some(key.to_ascii_uppercase()),
            number,
        }
    })
}

fn not_found(reference: &str) -> ToolError {
    ToolError::not_found(format!("Ticket {reference} not found")).with_hint(
        "Use jility_list_tickets or jility_search_tickets (CLI: `jility ticket list`) to see available tickets.",
    )
}

/// Find a live ticket by `KEY-N`, bare number (default project) or UUID.
fn resolve(tx: &mut dyn StoreTx, reference: &str) -> Result<TicketRow, ToolError> {
    let key = parse_key(reference).ok_or_else(|| {
        invalid(
            format!("'{}' is not a ticket reference", clip(reference)),
            "Refer to tickets as KEY-N (e.g. TASK-42) or by UUID.",
        )
    })?;
    let row = match key {
        TicketKey::Uuid(uuid) => tx.ticket_by_uuid(&uuid)?,
        TicketKey::Number { key, number } => {
            let key = match key {
                Some(key) => key,
                None => tx.default_project()?.key,
            };
            tx.ticket_by_number(&key, number)?
        }
    };
    match row {
        Some(row) if row.deleted_at.is_none() => Ok(row),
        Some(row) => Err(ToolError::not_found(format!(
            "Ticket {} was deleted",
            row.display_number()
        ))
        .with_hint("Deleted tickets are kept in the database but can no longer be changed.")),
        None => Err(not_found(reference.trim())),
    }
}

/// A project key: 1 to 10 letters and digits starting with a letter, upper-cased.
pub fn check_key(key: &str) -> Result<String, ToolError> {
    let key = key.trim().to_ascii_uppercase();
    if key.is_empty()
        || key.len() > 10
        || !key.chars().all(|c| c.is_ascii_alphanumeric())
        || !key.starts_with(|c: char| c.is_ascii_alphabetic())
    {
        return Err(invalid(
            format!("'{}' is not a valid project key", clip(&key)),
            "Use 1 to 10 letters and digits starting with a letter, e.g. TASK or API.",
        ));
    }
    Ok(key)
}

fn check_title(title: &str) -> Result<String, ToolError> {
    let title = title.trim();
    if title.is_empty() {
        return Err(invalid(
            "Title cannot be empty",
            "Give the ticket a short title that says what is to be done.",
        ));
    }
    if title.chars().count() > MAX_TITLE_CHARS {
        return Err(invalid(
            format!("Title is longer than {MAX_TITLE_CHARS} characters"),
            "Keep the title short and put details in the description.",
        ));
    }
    if title.contains(['\n', '\r', '\u{2028}', '\u{2029}', '\u{85}']) {
        return Err(invalid(
            "Title cannot contain line breaks",
            "Put details in the description.",
        ));
    }
    // NUL and the other control characters (C0, DEL, C1) are refused; a tab is ordinary
    // whitespace. A title of control characters alone is refused here too (trim keeps them).
    if let Some(c) = title.chars().find(|c| c.is_control() && *c != '\t') {
        return Err(invalid(
            format!(
                "Title cannot contain control characters (found U+{:04X})",
                u32::from(c)
            ),
            "Use printable text in the title; remove NUL and other control characters.",
        ));
    }
    Ok(title.to_string())
}

fn check_size(text: &str, what: &str, max: usize) -> Result<(), ToolError> {
    if text.len() > max {
        return Err(invalid(
            format!(
                "{what} is {} KiB; at most {} KiB are allowed",
                text.len().div_ceil(1024),
                max / 1024
            ),
            "Keep tickets to what an agent needs to read; link large material (logs, specs) instead of pasting it.",
        ));
    }
    Ok(())
}

fn check_points(points: Option<i64>) -> Result<Option<u8>, ToolError> {
    match points {
        None => Ok(None),
        Some(p) if (1..=i64::from(MAX_STORY_POINTS)).contains(&p) => Ok(u8::try_from(p).ok()),
        Some(p) => Err(invalid(
            format!("Story points must be between 1 and {MAX_STORY_POINTS}, got {p}"),
            "Use a Fibonacci-style estimate: 1, 2, 3, 5, 8 or 13.",
        )),
    }
}

/// Trim, drop empties and duplicates, keep order.
/// Most labels, and most assignees, of one ticket.
const MAX_NAMES: usize = 100;

fn check_names(names: &[String], what: &str) -> Result<Vec<String>, ToolError> {
    if names.len() > MAX_NAMES {
        return Err(invalid(
            format!(
                "{} {what} given; a ticket has at most {MAX_NAMES}",
                names.len()
            ),
            format!("Give at most {MAX_NAMES} {what}."),
        ));
    }
    let mut out: Vec<String> = Vec::new();
    let mut seen: HashSet<&str> = HashSet::new();
    for name in names {
        let name = name.trim();
        if name.is_empty() {
            return Err(invalid(
                format!("{what} cannot be empty strings"),
                format!("Remove the empty entry from the {what} list."),
            ));
        }
        if name.chars().count() > 100 || name.contains(['\n', '\u{1f}', '\0']) {
            return Err(invalid(
                format!("{what} '{}' is too long or has line breaks", clip(name)),
                "Use short names.",
            ));
        }
        if seen.insert(name) {
            out.push(name.to_string());
        }
    }
    Ok(out)
}

pub fn parse_status(name: &StatusName) -> Result<Status, ToolError> {
    Status::parse(name.0.trim()).ok_or_else(|| {
        ToolError::new(
            errors::INVALID_STATUS,
            format!(
                "Invalid status '{}'. Valid statuses: {}",
                clip(&name.0),
                Status::valid_list()
            ),
        )
        .with_hint("Use one of the valid statuses, spelled exactly (snake_case).")
    })
}

/// The page size for a requested `limit`: `invalid_params` outside `1..=max`.
fn page_size(limit: Limit, requested: Option<i64>) -> Result<usize, ToolError> {
    match requested {
        Some(n) if n < 1 => Err(ToolError::invalid_params(format!(
            "limit {n} is out of range: give 1 to {}",
            limit.max
        ))
        .with_hint(format!(
            "Omit limit for pages of {}, or page with next_cursor.",
            limit.default
        ))),
        other => limit.resolve(other.map(|n| n as u64)),
    }
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
}

fn clip_value(value: Option<String>) -> Option<String> {
    value.map(|v| {
        if v.chars().count() > CHANGE_VALUE_CHARS {
            let cut: String = v.chars().take(CHANGE_VALUE_CHARS).collect();
            format!("{cut}…")
        } else {
            v
        }
    })
}

/// Split what the user typed into search terms: "quoted phrases" and single words, with
/// punctuation dropped (it is never syntax).
/// The largest search query, in words and in characters.
const MAX_QUERY_WORDS: usize = 32;
const MAX_QUERY_CHARS: usize = 1000;

fn search_terms(query: &str) -> SearchTerms {
    let mut terms = Vec::new();
    for (i, part) in query.split('"').enumerate() {
        let words: Vec<String> = part
            .split(|c: char| !c.is_alphanumeric() && c != '_')
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect();
        if i % 2 == 1 {
            if !words.is_empty() {
                terms.push(words);
            }
        } else {
            terms.extend(words.into_iter().map(|w| vec![w]));
        }
    }
    SearchTerms(terms)
}

/// Does `to` reach `from` by following "depends on" edges? Returns the path from `from`
/// through `to` back to `from` when it does.
fn cycle_path(tx: &mut dyn StoreTx, from: i64, to: i64) -> Result<Option<Vec<i64>>, ToolError> {
    if from == to {
        return Ok(Some(vec![from, from]));
    }
    let mut came_from: HashMap<i64, i64> = HashMap::new();
    let mut queue = VecDeque::from([to]);
    let mut seen = HashSet::from([to]);
    while let Some(node) = queue.pop_front() {
        for next in tx.dependency_ids(node)? {
            if !seen.insert(next) {
                continue;
            }
            came_from.insert(next, node);
            if next == from {
                // Walk back from `from` to `to`, then prepend `from`.
                let mut path = vec![from];
                let mut at = from;
                while let Some(prev) = came_from.get(&at) {
                    path.push(*prev);
                    at = *prev;
                }
                path.reverse();
                let mut cycle = vec![from];
                cycle.extend(path);
                return Ok(Some(cycle));
            }
            queue.push_back(next);
        }
    }
    Ok(None)
}

fn ticket_ref(tx: &mut dyn StoreTx, id: i64) -> Result<TicketRef, ToolError> {
    refs(tx, &[id])?
        .pop()
        .ok_or_else(|| ToolError::internal(format!("ticket row {id} vanished")))
}

fn refs(tx: &mut dyn StoreTx, ids: &[i64]) -> Result<Vec<TicketRef>, ToolError> {
    tx.ticket_refs(ids)?
        .into_iter()
        .zip(ids)
        .map(|(found, id)| {
            found.ok_or_else(|| ToolError::internal(format!("ticket row {id} vanished")))
        })
        .collect()
}

/// The direct dependencies (`up`) or dependents of a ticket.
fn direct(tx: &mut dyn StoreTx, id: i64, up: bool) -> Result<Vec<TicketRef>, ToolError> {
    let ids = if up {
        tx.dependency_ids(id)?
    } else {
        tx.dependent_ids(id)?
    };
    refs(tx, &ids)
}

fn is_blocked(tx: &mut dyn StoreTx, id: i64) -> Result<bool, ToolError> {
    Ok(direct(tx, id, true)?
        .iter()
        .any(|d| d.status != Status::Done))
}

fn full_ticket(tx: &mut dyn StoreTx, row: &TicketRow) -> Result<Ticket, ToolError> {
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
        created_at: row.created_at.clone(),
        created_by: row.created_by.clone(),
        updated_at: row.updated_at.clone(),
        updated_by: row.updated_by.clone(),
    })
}

struct Entry<'a> {
    kind: &'a str,
    old: Option<&'a str>,
    new: Option<&'a str>,
    detail: Option<&'a str>,
    message: Option<&'a str>,
}

fn record(
    tx: &mut dyn StoreTx,
    id: i64,
    actor: &str,
    at: &str,
    c: Entry<'_>,
) -> Result<(), ToolError> {
    tx.record_change(
        id,
        &NewChange {
            change_type: c.kind,
            old_value: c.old,
            new_value: c.new,
            detail: c.detail,
            message: c.message,
            actor,
            at,
        },
    )?;
    Ok(())
}

fn change(kind: &str) -> Entry<'_> {
    Entry {
        kind,
        old: None,
        new: None,
        detail: None,
        message: None,
    }
}

/// A description about to become the ticket's next version.
struct NewVersion<'a> {
    text: String,
    operation: &'a str,
    /// What the edit touched, recorded as the change's detail.
    summary: String,
    message: Option<String>,
}

/// Store `new` as the ticket's description and record it as the next version; an edit that
/// leaves the text as it was records nothing.
/// The line range of a `replace_lines` edit, checked.
fn description_lines(p: &UpdateDescription) -> Result<(Option<usize>, Option<usize>), ToolError> {
    let line = |n: Option<i64>, name: &str| -> Result<Option<usize>, ToolError> {
        match n {
            None => Ok(None),
            Some(n) if n >= 1 => Ok(usize::try_from(n).ok()),
            Some(n) => Err(invalid(
                format!("{name} must be 1 or more, got {n}"),
                "Lines are numbered from 1.",
            )),
        }
    };
    Ok((
        line(p.start_line, "start_line")?,
        line(p.end_line, "end_line")?,
    ))
}

/// One description edit inside a write transaction.
fn update_description_in(
    tx: &mut dyn StoreTx,
    actor: &str,
    at: &str,
    p: &UpdateDescription,
    (start_line, end_line): (Option<usize>, Option<usize>),
) -> Result<DescriptionUpdated, ToolError> {
    let row = resolve(tx, &p.ticket_id)?;
    let edit = Edit {
        operation: p.operation,
        content: &p.content,
        start_line,
        end_line,
        section_header: p.section_header.as_deref(),
    };
    let applied = description::apply(&row.description, &edit)
        .map_err(|e| invalid(format!("{}: {e}", row.display_number()), e.hint()))?;
    write_version(
        tx,
        &row,
        NewVersion {
            text: applied.text,
            operation: p.operation.as_str(),
            summary: applied.summary,
            message: p.message.clone(),
        },
        actor,
        at,
    )
}

fn write_version(
    tx: &mut dyn StoreTx,
    row: &TicketRow,
    new: NewVersion<'_>,
    actor: &str,
    at: &str,
) -> Result<DescriptionUpdated, ToolError> {
    check_size(
        &new.text,
        &format!("The new description of {}", row.display_number()),
        MAX_DESCRIPTION_BYTES,
    )?;
    let (_, stats) = description::diff(&row.description, &new.text, "before", "after");
    let changed = new.text != row.description;
    let mut version = tx.description_versions(row.id)?.len();
    if changed {
        tx.update_ticket(
            row.id,
            &TicketUpdate {
                description: Some(new.text.clone()),
                ..Default::default()
            },
            actor,
            at,
        )?;
        record(
            tx,
            row.id,
            actor,
            at,
            Entry {
                old: Some(&row.description),
                new: Some(&new.text),
                detail: Some(&new.summary),
                message: new.message.as_deref(),
                ..change("description_changed")
            },
        )?;
        version += 1;
    }
    Ok(DescriptionUpdated {
        number: row.display_number(),
        operation: new.operation.to_string(),
        summary: new.summary,
        version,
        changed_by: actor.to_string(),
        message: new.message,
        lines: description::line_count(&new.text),
        diff: stats,
        changed,
    })
}

/// A validated new ticket, ready to insert.
struct Draft {
    title: String,
    description: String,
    status: Status,
    story_points: Option<u8>,
    assignees: Vec<String>,
    labels: Vec<String>,
    parent_id: Option<i64>,
    epic_id: Option<i64>,
}

fn insert(
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

fn resolve_opt(tx: &mut dyn StoreTx, reference: Option<&str>) -> Result<Option<i64>, ToolError> {
    match reference.map(str::trim).filter(|r| !r.is_empty()) {
        Some(r) => Ok(Some(resolve(tx, r)?.id)),
        None => Ok(None),
    }
}

// ---------------------------------------------------------------------------------------
// Operations

impl<S: Store> Tracker<S> {
    /// A tracker on `store` for the project at `root`, sealing its cursors with
    /// `cursor_key` (see [`crate::local::cursor_key`]).
    pub fn new(store: S, root: PathBuf, cursor_key: CursorKey) -> Self {
        Self {
            templates_dir: root.join(".jility").join("templates"),
            root,
            store,
            cursor_key,
        }
    }

    /// The store this tracker runs on.
    pub fn store(&self) -> &S {
        &self.store
    }

    /// Create the first project (`jility init`), or report the existing one.
    /// Create the first project, unless there is one. `explicit_key`: the user asked for
    /// this key, so an existing project that never had a ticket takes it, and one that has
    /// had tickets refuses (its tickets are named by the old key).
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
        let at = now();
        self.store.write(|tx| {
            let draft = Draft {
                title,
                description: p.description.unwrap_or_default(),
                status,
                story_points,
                assignees,
                labels,
                parent_id: resolve_opt(tx, p.parent_id.as_deref())?,
                epic_id: resolve_opt(tx, p.epic_id.as_deref())?,
            };
            let row = insert(tx, &draft, actor, &at)?;
            Ok(Created {
                ticket: full_ticket(tx, &row)?,
                template: None,
            })
        })
    }

    pub fn create_batch(&mut self, actor: &str, p: CreateBatch) -> Result<BatchCreated, ToolError> {
        if p.tickets.is_empty() {
            return Err(invalid(
                "The batch has no tickets",
                "Give at least one ticket in `tickets`.",
            ));
        }
        if p.tickets.len() > 200 {
            return Err(invalid(
                format!(
                    "The batch has {} tickets; at most 200 are allowed",
                    p.tickets.len()
                ),
                "Split the work into several batches.",
            ));
        }
        // Validate every item before touching the database.
        let mut drafts = Vec::with_capacity(p.tickets.len());
        for (i, item) in p.tickets.iter().enumerate() {
            let at_item = |e: ToolError| ToolError {
                message: format!("Ticket #{} of the batch: {}", i + 1, e.message),
                ..e
            };
            let BatchItem {
                title,
                description,
                story_points,
                assignees,
                labels,
                ..
            } = item;
            check_size(
                description.as_deref().unwrap_or_default(),
                "The description",
                MAX_DESCRIPTION_BYTES,
            )
            .map_err(at_item)?;
            drafts.push((
                check_title(title).map_err(at_item)?,
                description.clone().unwrap_or_default(),
                check_points(*story_points).map_err(at_item)?,
                check_names(assignees, "Assignees").map_err(at_item)?,
                check_names(labels, "Labels").map_err(at_item)?,
            ));
        }
        // A dependency named by title must name one item: a title that several items of the
        // batch share is refused (it used to link the first silently), before anything is
        // written.
        for (i, item) in p.tickets.iter().enumerate() {
            for dep in &item.depends_on {
                let dep = dep.trim();
                if batch_position(dep).is_some() || parse_key(dep).is_some() {
                    continue;
                }
                let items: Vec<String> = drafts
                    .iter()
                    .enumerate()
                    .filter(|(_, draft)| draft.0 == dep)
                    .map(|(j, _)| format!("#{}", j + 1))
                    .collect();
                if items.len() > 1 {
                    return Err(invalid(
                        format!(
                            "Ticket #{} of the batch depends on '{}', a title that items {} of the batch share",
                            i + 1,
                            clip(dep),
                            items.join(", ")
                        ),
                        "Name the item by its position instead (#1 is the first item of the batch), or give the items distinct titles.",
                    ));
                }
            }
        }
        let at = now();
        self.store.write(|tx| {
            let parent = match p.parent_id.as_deref().map(str::trim).filter(|r| !r.is_empty()) {
                Some(r) => Some(resolve(tx, r)?),
                None => None,
            };
            let mut created: Vec<(TicketRow, BatchTicket)> = Vec::new();
            for (i, (item, (title, description, story_points, assignees, labels))) in
                p.tickets.iter().zip(drafts).enumerate()
            {
                let mut depends_on = Vec::new();
                for dep in &item.depends_on {
                    let dep = dep.trim();
                    let earlier = if let Some(pos) = batch_position(dep) {
                        if pos == 0 || pos > i {
                            return Err(invalid(
                                format!(
                                    "Ticket #{} of the batch depends on #{pos}, which is not an earlier item",
                                    i + 1
                                ),
                                "Items may depend only on earlier items of the batch (#1 is the first) or on existing tickets.",
                            ));
                        }
                        Some(pos - 1)
                    } else if parse_key(dep).is_some() {
                        // A ticket reference (KEY-N, number, UUID) names an existing ticket.
                        None
                    } else {
                        created.iter().position(|(row, _)| row.title == dep)
                    };
                    let target = match earlier {
                        Some(index) => created[index].0.clone(),
                        None => resolve(tx, dep).map_err(|e| ToolError {
                            message: format!("Ticket #{} of the batch: {}", i + 1, e.message),
                            ..e
                        })?,
                    };
                    if !depends_on.iter().any(|d: &TicketRow| d.id == target.id) {
                        depends_on.push(target);
                    }
                }
                let draft = Draft {
                    title,
                    description,
                    status: Status::Backlog,
                    story_points,
                    assignees,
                    labels,
                    parent_id: parent.as_ref().map(|p| p.id),
                    epic_id: None,
                };
                let row = insert(tx, &draft, actor, &at)?;
                for dep in &depends_on {
                    tx.add_dependency(row.id, dep.id, actor, &at)?;
                    let number = dep.display_number();
                    record(
                        tx,
                        row.id,
                        actor,
                        &at,
                        Entry {
                            new: Some(&number),
                            ..change("dependency_added")
                        },
                    )?;
                }
                let out = BatchTicket {
                    number: row.display_number(),
                    title: row.title.clone(),
                    story_points: row.story_points,
                    assignees: draft.assignees,
                    labels: draft.labels,
                    depends_on: depends_on.iter().map(TicketRow::display_number).collect(),
                };
                created.push((row, out));
            }
            let total_story_points = created
                .iter()
                .map(|(row, _)| u32::from(row.story_points.unwrap_or(0)))
                .sum();
            Ok(BatchCreated {
                tickets: created.into_iter().map(|(_, t)| t).collect(),
                parent: parent.map(|p| p.as_ref()),
                total_story_points,
            })
        })
    }

    pub fn get_ticket(&mut self, reference: &str) -> Result<TicketDetail, ToolError> {
        self.store.read(|tx| {
            let row = resolve(tx, reference)?;
            let ticket = full_ticket(tx, &row)?;
            let (comments, comment_count) = tx.comments(row.id, COMMENTS_SHOWN)?;
            let dependencies = direct(tx, row.id, true)?;
            let dependents = direct(tx, row.id, false)?;
            let linked_commits = tx.commits(row.id)?;
            let recent_changes = tx
                .changes(row.id, CHANGES_SHOWN)?
                .into_iter()
                .map(clip_change)
                .collect();
            Ok(TicketDetail {
                ticket,
                comments,
                comment_count,
                dependencies,
                dependents,
                linked_commits,
                recent_changes,
            })
        })
    }

    pub fn list(&mut self, p: &ListTickets) -> Result<Paged<TicketPage>, ToolError> {
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
                statuses,
                assignee,
                labels,
                parent_id: resolve_opt(tx, p.parent_id.as_deref())?,
                epic_id: resolve_opt(tx, p.epic_id.as_deref())?,
                unassigned: p.unassigned,
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
                },
            );
            let after: Option<i64> = cursors.start(p.cursor.as_deref())?;
            let page = tx.list(&filter, after, limit)?;
            let total = page.total as u64;
            let next = page.next_after.map(|after| cursors.encode(&after));
            Ok(Paged {
                data: TicketPage {
                    tickets: page.items,
                },
                page: if page.total_exact {
                    Page::new(total, next)
                } else {
                    Page::at_least(total, next)
                },
            })
        })
    }

    pub fn claim(&mut self, actor: &str, p: ClaimTicket) -> Result<Claimed, ToolError> {
        check_size(
            p.message.as_deref().unwrap_or_default(),
            "The message",
            MAX_COMMENT_BYTES,
        )?;
        let at = now();
        self.store.write(|tx| {
            let row = resolve(tx, &p.ticket_id)?;
            let number = row.display_number();
            let assignees = tx.assignees(row.id)?;
            let others: Vec<&String> = assignees.iter().filter(|a| *a != actor).collect();
            if !others.is_empty() {
                let names = others.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ");
                return Err(ToolError::new(
                    errors::ALREADY_ASSIGNED,
                    format!("{number} is already assigned to {names}"),
                )
                .with_hint(format!(
                    "Pick an unassigned ticket (jility_list_tickets with unassigned: true), or ask {names} to hand it over with jility_assign_ticket."
                )));
            }
            if row.status == Status::Done {
                return Err(ToolError::new(
                    errors::INVALID_STATUS,
                    format!("{number} is done; a done ticket cannot be claimed"),
                )
                .with_hint("Reopen it first with jility_update_status (todo or in_progress) if work remains."));
            }
            let already_claimed = !assignees.is_empty();
            let previous_status = row.status;
            if !already_claimed {
                tx.set_assignees(row.id, &[actor.to_string()], actor, &at)?;
                record(
                    tx,
                    row.id,
                    actor,
                    &at,
                    Entry {
                        old: Some(""),
                        new: Some(actor),
                        detail: Some("claimed"),
                        message: p.message.as_deref(),
                        ..change("assignees_changed")
                    },
                )?;
            }
            let mut status = row.status;
            if matches!(row.status, Status::Backlog | Status::Todo) {
                status = Status::InProgress;
                tx.update_ticket(
                    row.id,
                    &TicketUpdate {
                        status: Some(status),
                        ..Default::default()
                    },
                    actor,
                    &at,
                )?;
                record(
                    tx,
                    row.id,
                    actor,
                    &at,
                    Entry {
                        old: Some(row.status.as_str()),
                        new: Some(status.as_str()),
                        detail: Some("claimed"),
                        ..change("status_changed")
                    },
                )?;
            } else if !already_claimed {
                tx.update_ticket(row.id, &TicketUpdate::default(), actor, &at)?;
            }
            if let Some(message) = p.message.as_deref().map(str::trim).filter(|m| !m.is_empty()) {
                tx.insert_comment(row.id, actor, message, &at)?;
                record(tx, row.id, actor, &at, change("comment_added"))?;
            }
            Ok(Claimed {
                ticket: TicketRef {
                    number,
                    title: row.title,
                    status,
                },
                story_points: row.story_points,
                assignee: actor.to_string(),
                previous_status,
                already_claimed,
            })
        })
    }

    pub fn update_description(
        &mut self,
        actor: &str,
        p: UpdateDescription,
    ) -> Result<DescriptionUpdated, ToolError> {
        let lines = description_lines(&p)?;
        let at = now();
        self.store
            .write(|tx| update_description_in(tx, actor, &at, &p, lines))
    }

    pub fn update_status(
        &mut self,
        actor: &str,
        p: UpdateStatus,
    ) -> Result<StatusUpdated, ToolError> {
        let to = parse_status(&p.status)?;
        let at = now();
        self.store.write(|tx| {
            let row = resolve(tx, &p.ticket_id)?;
            let number = row.display_number();
            let changed = row.status != to;
            if changed && !row.status.can_move_to(to) {
                let allowed = row
                    .status
                    .transitions()
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", ");
                return Err(ToolError::new(
                    errors::INVALID_STATUS,
                    format!(
                        "Cannot move {number} from {} to {}",
                        row.status.label(),
                        to.label()
                    ),
                )
                .with_hint(format!(
                    "From {} a ticket can move to: {allowed}.",
                    row.status.as_str()
                )));
            }
            if changed {
                tx.update_ticket(
                    row.id,
                    &TicketUpdate {
                        status: Some(to),
                        ..Default::default()
                    },
                    actor,
                    &at,
                )?;
                record(
                    tx,
                    row.id,
                    actor,
                    &at,
                    Entry {
                        old: Some(row.status.as_str()),
                        new: Some(to.as_str()),
                        message: p.message.as_deref(),
                        ..change("status_changed")
                    },
                )?;
            }
            Ok(StatusUpdated {
                number,
                title: row.title,
                previous: row.status,
                current: to,
                changed_by: actor.to_string(),
                message: p.message.clone(),
                changed,
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

    pub fn add_dependency(
        &mut self,
        actor: &str,
        p: Dependency,
    ) -> Result<DependencyAdded, ToolError> {
        let at = now();
        self.store.write(|tx| {
            let ticket = resolve(tx, &p.ticket_id)?;
            let on = resolve(tx, &p.depends_on)?;
            if let Some(cycle) = cycle_path(tx, ticket.id, on.id)? {
                let names = cycle
                    .iter()
                    .map(|id| ticket_ref(tx, *id).map(|r| r.number))
                    .collect::<Result<Vec<_>, _>>()?;
                let message = if ticket.id == on.id {
                    format!("{} cannot depend on itself", ticket.display_number())
                } else {
                    format!(
                        "{} cannot depend on {}: that would create the cycle {}",
                        ticket.display_number(),
                        on.display_number(),
                        names.join(" → ")
                    )
                };
                return Err(ToolError::new(errors::DEPENDENCY_CYCLE, message).with_hint(
                    "Each arrow reads 'depends on'. Remove one of those dependencies first (jility_remove_dependency), or reverse this one.",
                ));
            }
            let inserted = tx.add_dependency(ticket.id, on.id, actor, &at)?;
            if inserted {
                let number = on.display_number();
                record(
                    tx,
                    ticket.id,
                    actor,
                    &at,
                    Entry {
                        new: Some(&number),
                        ..change("dependency_added")
                    },
                )?;
                tx.update_ticket(ticket.id, &TicketUpdate::default(), actor, &at)?;
            }
            let chain = longest_chain(tx, ticket.id)?;
            Ok(DependencyAdded {
                is_blocked: is_blocked(tx, ticket.id)?,
                ticket: ticket.as_ref(),
                depends_on: on.as_ref(),
                chain,
                already_existed: !inserted,
            })
        })
    }

    pub fn remove_dependency(
        &mut self,
        actor: &str,
        p: Dependency,
    ) -> Result<DependencyRemoved, ToolError> {
        let at = now();
        self.store.write(|tx| {
            let ticket = resolve(tx, &p.ticket_id)?;
            let on = resolve(tx, &p.depends_on)?;
            if !tx.remove_dependency(ticket.id, on.id)? {
                return Err(ToolError::not_found(format!(
                    "{} does not depend on {}",
                    ticket.display_number(),
                    on.display_number()
                ))
                .with_hint("See the ticket's dependencies with jility_get_dependency_graph."));
            }
            let number = on.display_number();
            record(
                tx,
                ticket.id,
                actor,
                &at,
                Entry {
                    old: Some(&number),
                    ..change("dependency_removed")
                },
            )?;
            tx.update_ticket(ticket.id, &TicketUpdate::default(), actor, &at)?;
            Ok(DependencyRemoved {
                is_blocked: is_blocked(tx, ticket.id)?,
                ticket: ticket.as_ref(),
                depends_on: on.as_ref(),
            })
        })
    }

    pub fn dependency_graph(&mut self, reference: &str) -> Result<DependencyGraph, ToolError> {
        self.store.read(|tx| {
            let row = resolve(tx, reference)?;
            let dependencies = direct(tx, row.id, true)?;
            let dependents = direct(tx, row.id, false)?;
            let (upstream, cut_up) = walk(tx, row.id, true)?;
            let (downstream, cut_down) = walk(tx, row.id, false)?;
            Ok(DependencyGraph {
                ticket: row.display_number(),
                title: row.title.clone(),
                status: row.status,
                is_blocked: dependencies.iter().any(|d| d.status != Status::Done),
                blocking_count: dependents.len(),
                dependencies,
                dependents,
                upstream,
                downstream,
                truncated: cut_up || cut_down,
            })
        })
    }

    /// Every template, and the project template files that could not be read.
    fn all_templates(&self) -> TemplateList {
        let (templates, problems) = templates::load(&self.templates_dir, &self.root);
        TemplateList {
            templates,
            problems,
        }
    }

    /// One page of the templates (the unreadable files are named on every page).
    pub fn templates(&self, p: &ListTemplates) -> Result<Paged<TemplateList>, ToolError> {
        let limit = page_size(TEMPLATES_LIMIT, p.limit)?;
        let cursors = self.cursor_key.bind(TEMPLATES_TOOL, &());
        let all = self.all_templates();
        let (templates, page) =
            page_by_offset(&all.templates, &cursors, p.cursor.as_deref(), limit)?;
        Ok(Paged {
            data: TemplateList {
                templates,
                problems: all.problems,
            },
            page,
        })
    }

    pub fn create_from_template(
        &mut self,
        actor: &str,
        p: FromTemplate,
    ) -> Result<Created, ToolError> {
        let list = self.all_templates();
        let Some(template) = list.templates.iter().find(|t| t.name == p.template.trim()) else {
            let names = list
                .templates
                .iter()
                .map(|t| t.name.as_str())
                .collect::<Vec<_>>()
                .join(", ");
            return Err(ToolError::not_found(format!(
                "Template '{}' not found",
                clip(&p.template)
            ))
            .with_hint(format!(
                "Available templates: {names}. Project templates live in .jility/templates/*.md."
            )));
        };
        let rendered = templates::render(template, &p.variables).map_err(|e| {
            let hint = match &e {
                templates::RenderError::Unfilled { missing, .. } => format!(
                    "Pass a value for each in `variables`, e.g. {{{}}}. The template uses: {}.",
                    missing
                        .iter()
                        .map(|m| format!("\"{m}\": \"…\""))
                        .collect::<Vec<_>>()
                        .join(", "),
                    template.variables.join(", ")
                ),
                _ => "Fill the variables the title uses.".to_string(),
            };
            invalid(e.to_string(), hint)
        })?;
        let created = self.create_ticket(
            actor,
            CreateTicket {
                title: rendered.title,
                description: Some(rendered.description),
                story_points: rendered.story_points.map(i64::from),
                assignees: p.assignee.into_iter().collect(),
                labels: rendered.labels,
                ..Default::default()
            },
        )?;
        Ok(Created {
            template: Some(template.name.clone()),
            ..created
        })
    }

    pub fn search(&mut self, p: &SearchTickets) -> Result<Paged<SearchResults>, ToolError> {
        let limit = page_size(SEARCH_LIMIT, p.limit)?;
        let terms = search_terms(&p.query);
        let words: usize = terms.0.iter().map(Vec::len).sum();
        if p.query.chars().count() > MAX_QUERY_CHARS || words > MAX_QUERY_WORDS {
            // The cost of a full-text query grows fast with its terms; refuse, without
            // quoting a huge query back.
            return Err(invalid(
                format!(
                    "The query is too long ({words} words, {} characters); at most {MAX_QUERY_WORDS} words and {MAX_QUERY_CHARS} characters",
                    p.query.chars().count()
                ),
                "Search for the few most distinctive words; all of them must match.",
            ));
        }
        if terms.0.is_empty() {
            return Err(invalid(
                format!("The query '{}' has no words to search for", clip(&p.query)),
                "Search for words that appear in titles, descriptions or comments.",
            ));
        }
        // Bound to the terms as searched: `JWT token` and `jwt, token` are one query.
        let cursors = self.cursor_key.bind(SEARCH_TOOL, &terms.0);
        let offset: usize = cursors.start(p.cursor.as_deref())?.unwrap_or(0);
        self.store.read(|tx| {
            let (hits, total) = tx.search(&terms, offset, limit)?;
            // The offset counts index rows, as the store's OFFSET does.
            let end = offset.saturating_add(limit);
            let next = (end < total).then(|| cursors.encode(&end));
            Ok(Paged {
                data: SearchResults {
                    query: p.query.clone(),
                    hits: hits
                        .into_iter()
                        .map(|h| SearchHitOut {
                            number: h.ticket.number,
                            title: h.ticket.title,
                            status: h.ticket.status,
                            assignees: h.ticket.assignees,
                            snippet: h.snippet,
                        })
                        .collect(),
                },
                page: Page::new(total as u64, next),
            })
        })
    }

    pub fn history(&mut self, reference: &str) -> Result<History, ToolError> {
        self.store.read(|tx| {
            let row = resolve(tx, reference)?;
            let changes = tx.description_versions(row.id)?;
            let mut previous = String::new();
            let mut versions = Vec::with_capacity(changes.len());
            for (i, c) in changes.into_iter().enumerate() {
                let text = c.new_value.unwrap_or_default();
                let (diff, stats) = description::diff(
                    &previous,
                    &text,
                    &format!("version {i}"),
                    &format!("version {}", i + 1),
                );
                versions.push(DescriptionVersion {
                    version: i + 1,
                    changed_by: c.changed_by,
                    changed_at: c.changed_at,
                    operation: c.detail,
                    message: c.message,
                    diff,
                    added: stats.added,
                    removed: stats.removed,
                    lines: description::line_count(&text),
                });
                previous = text;
            }
            Ok(History {
                number: row.display_number(),
                title: row.title,
                current_version: versions.len(),
                versions,
            })
        })
    }

    pub fn revert_description(
        &mut self,
        actor: &str,
        p: RevertDescription,
    ) -> Result<DescriptionUpdated, ToolError> {
        let at = now();
        self.store.write(|tx| {
            let row = resolve(tx, &p.ticket_id)?;
            let versions = tx.description_versions(row.id)?;
            let count = versions.len();
            let index = usize::try_from(p.version)
                .ok()
                .filter(|v| (1..=count).contains(v))
                .ok_or_else(|| {
                    invalid(
                        format!(
                            "{} has no description version {}; it has versions 1 to {count}",
                            row.display_number(),
                            p.version
                        ),
                        "See the versions with jility_get_ticket_history.",
                    )
                })?;
            write_version(
                tx,
                &row,
                NewVersion {
                    text: versions[index - 1].new_value.clone().unwrap_or_default(),
                    operation: "revert",
                    summary: format!("revert to version {index}"),
                    message: Some(format!("Reverted to version {index}")),
                },
                actor,
                &at,
            )
        })
    }

    /// `jility ticket edit`: change title, description, points, labels, parent or epic.
    pub fn edit(&mut self, actor: &str, p: EditTicket) -> Result<Edited, ToolError> {
        self.edit_with(actor, p, None).map(|(edited, _)| edited)
    }

    /// [`Self::edit`], then a description edit, in one transaction: both or neither.
    pub fn edit_with(
        &mut self,
        actor: &str,
        p: EditTicket,
        description_edit: Option<UpdateDescription>,
    ) -> Result<(Edited, Option<DescriptionUpdated>), ToolError> {
        let lines = description_edit
            .as_ref()
            .map(description_lines)
            .transpose()?;
        let title = p.title.as_deref().map(check_title).transpose()?;
        check_size(
            p.description.as_deref().unwrap_or_default(),
            "The description",
            MAX_DESCRIPTION_BYTES,
        )?;
        let story_points = match p.story_points {
            Some(points) => Some(check_points(points)?),
            None => None,
        };
        let labels = p
            .labels
            .as_deref()
            .map(|l| check_names(l, "Labels"))
            .transpose()?;
        let at = now();
        self.store.write(|tx| {
            let row = resolve(tx, &p.ticket_id)?;
            let mut update = TicketUpdate::default();
            let mut changed = Vec::new();
            let message = p.message.as_deref();
            if let Some(title) = title.filter(|t| *t != row.title) {
                record(
                    tx,
                    row.id,
                    actor,
                    &at,
                    Entry {
                        old: Some(&row.title),
                        new: Some(&title),
                        message,
                        ..change("title_changed")
                    },
                )?;
                update.title = Some(title);
                changed.push("title".to_string());
            }
            if let Some(text) = p.description.clone().filter(|d| *d != row.description) {
                record(
                    tx,
                    row.id,
                    actor,
                    &at,
                    Entry {
                        old: Some(&row.description),
                        new: Some(&text),
                        detail: Some("edit"),
                        message,
                        ..change("description_changed")
                    },
                )?;
                update.description = Some(text);
                changed.push("description".to_string());
            }
            if let Some(points) = story_points.filter(|p| *p != row.story_points) {
                let (old, new) = (
                    row.story_points.map(|p| p.to_string()),
                    points.map(|p| p.to_string()),
                );
                record(
                    tx,
                    row.id,
                    actor,
                    &at,
                    Entry {
                        old: old.as_deref(),
                        new: new.as_deref(),
                        message,
                        ..change("story_points_changed")
                    },
                )?;
                update.story_points = Some(points);
                changed.push("story_points".to_string());
            }
            if let Some(labels) = labels {
                let current = tx.labels(row.id)?;
                let mut sorted = labels.clone();
                sorted.sort();
                if sorted != current {
                    tx.set_labels(row.id, &labels)?;
                    let (old, new) = (current.join(", "), sorted.join(", "));
                    record(
                        tx,
                        row.id,
                        actor,
                        &at,
                        Entry {
                            old: Some(&old),
                            new: Some(&new),
                            message,
                            ..change("labels_changed")
                        },
                    )?;
                    changed.push("labels".to_string());
                }
            }
            for (field, wanted, current) in [
                ("parent", &p.parent_id, row.parent_id),
                ("epic", &p.epic_id, row.epic_id),
            ] {
                let Some(wanted) = wanted else { continue };
                let target = resolve_opt(tx, wanted.as_deref())?;
                if target == Some(row.id) {
                    return Err(invalid(
                        format!("{} cannot be its own {field}", row.display_number()),
                        format!("Choose another ticket as {field}."),
                    ));
                }
                if field == "parent"
                    && let Some(target) = target
                    && is_ancestor(tx, row.id, target)?
                {
                    return Err(invalid(
                        format!(
                            "{} cannot be the parent of {}: it is one of its sub-tasks",
                            ticket_ref(tx, target)?.number,
                            row.display_number()
                        ),
                        "A ticket's parent chain cannot loop; move the sub-task out first.",
                    ));
                }
                if target != current {
                    let old = current
                        .map(|id| ticket_ref(tx, id).map(|r| r.number))
                        .transpose()?;
                    let new = target
                        .map(|id| ticket_ref(tx, id).map(|r| r.number))
                        .transpose()?;
                    let kind = if field == "parent" {
                        "parent_changed"
                    } else {
                        "epic_changed"
                    };
                    record(
                        tx,
                        row.id,
                        actor,
                        &at,
                        Entry {
                            old: old.as_deref(),
                            new: new.as_deref(),
                            message,
                            ..change(kind)
                        },
                    )?;
                    if field == "parent" {
                        update.parent_id = Some(target);
                    } else {
                        update.epic_id = Some(target);
                    }
                    changed.push(field.to_string());
                }
            }
            if !changed.is_empty() {
                tx.update_ticket(row.id, &update, actor, &at)?;
            }
            let updated = match (&description_edit, lines) {
                (Some(edit), Some(lines)) => {
                    Some(update_description_in(tx, actor, &at, edit, lines)?)
                }
                _ => None,
            };
            let row = tx
                .ticket_by_id(row.id)?
                .ok_or_else(|| ToolError::internal("ticket vanished"))?;
            Ok((
                Edited {
                    ticket: full_ticket(tx, &row)?,
                    changed,
                },
                updated,
            ))
        })
    }

    /// `jility ticket delete`: a soft delete; the rows stay, the ticket leaves every view.
    pub fn delete(&mut self, actor: &str, reference: &str) -> Result<Deleted, ToolError> {
        let at = now();
        self.store.write(|tx| {
            let row = resolve(tx, reference)?;
            tx.update_ticket(
                row.id,
                &TicketUpdate {
                    deleted: true,
                    ..Default::default()
                },
                actor,
                &at,
            )?;
            record(tx, row.id, actor, &at, change("deleted"))?;
            Ok(Deleted {
                number: row.display_number(),
                title: row.title,
            })
        })
    }
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

/// Is `ancestor` on the parent chain of `id` (its parent, the parent's parent, …)?
fn is_ancestor(tx: &mut dyn StoreTx, ancestor: i64, id: i64) -> Result<bool, ToolError> {
    let mut at = id;
    let mut seen = HashSet::new();
    while seen.insert(at) {
        match tx.ticket_by_id(at)?.and_then(|row| row.parent_id) {
            Some(parent) if parent == ancestor => return Ok(true),
            Some(parent) => at = parent,
            None => return Ok(false),
        }
    }
    Ok(false)
}

/// Breadth-first walk of dependencies (`up`) or dependents, nearest first, capped.
fn walk(tx: &mut dyn StoreTx, start: i64, up: bool) -> Result<(Vec<GraphNode>, bool), ToolError> {
    let mut seen = HashSet::from([start]);
    let mut queue = VecDeque::from([(start, 0usize)]);
    let mut out = Vec::new();
    while let Some((id, depth)) = queue.pop_front() {
        let next = if up {
            tx.dependency_ids(id)?
        } else {
            tx.dependent_ids(id)?
        };
        for n in next {
            if !seen.insert(n) {
                continue;
            }
            if out.len() >= GRAPH_LIMIT {
                return Ok((out, true));
            }
            let r = ticket_ref(tx, n)?;
            out.push(GraphNode {
                number: r.number,
                title: r.title,
                status: r.status,
                depth: depth + 1,
            });
            queue.push_back((n, depth + 1));
        }
    }
    Ok((out, false))
}

/// The longest dependency chain that ends at `id` (bounded walk), first to be done first.
fn longest_chain(tx: &mut dyn StoreTx, id: i64) -> Result<Vec<TicketRef>, ToolError> {
    let mut chain = vec![id];
    let mut visited = HashSet::from([id]);
    let mut at = id;
    // Follow, at each step, the dependency with the deepest own chain; a depth-limited
    // greedy walk keeps this cheap on large graphs.
    for _ in 0..20 {
        let deps = tx.dependency_ids(at)?;
        let mut best: Option<(usize, i64)> = None;
        for d in deps {
            if visited.contains(&d) {
                continue;
            }
            let depth = depth_of(tx, d, 10, &mut HashSet::new())?;
            if best.is_none_or(|(b, _)| depth > b) {
                best = Some((depth, d));
            }
        }
        let Some((_, next)) = best else { break };
        visited.insert(next);
        chain.push(next);
        at = next;
    }
    chain.reverse();
    refs(tx, &chain)
}

fn depth_of(
    tx: &mut dyn StoreTx,
    id: i64,
    budget: usize,
    seen: &mut HashSet<i64>,
) -> Result<usize, ToolError> {
    if budget == 0 || !seen.insert(id) {
        return Ok(0);
    }
    let mut best = 0;
    for d in tx.dependency_ids(id)? {
        best = best.max(1 + depth_of(tx, d, budget - 1, seen)?);
    }
    Ok(best)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticket_keys() {
        assert_eq!(
            parse_key("TASK-42"),
            Some(TicketKey::Number {
                key: Some("TASK".into()),
                number: 42
            })
        );
        assert_eq!(
            parse_key(" task-7 "),
            Some(TicketKey::Number {
                key: Some("TASK".into()),
                number: 7
            })
        );
        assert_eq!(
            parse_key("42"),
            Some(TicketKey::Number {
                key: None,
                number: 42
            })
        );
        assert_eq!(parse_key("TASK-0"), None);
        assert_eq!(parse_key("TASK-"), None);
        assert_eq!(parse_key("-3"), None);
        assert_eq!(parse_key("a b-3"), None);
        // The number is digits only: no sign, no blanks inside.
        for bad in [
            "TASK-+1",
            "TASK--1",
            "TASK- 1",
            "TASK -1",
            "TASK-1 2",
            "TASK-\u{a0}1",
            "TASK-١",
            "+1",
            "#+1",
            " +1",
            "TASK-99999999999999999999",
        ] {
            assert_eq!(parse_key(bad), None, "{bad}");
        }
        // Leading zeros name the same ticket.
        assert_eq!(
            parse_key("TASK-007"),
            Some(TicketKey::Number {
                key: Some("TASK".into()),
                number: 7
            })
        );
        assert_eq!(
            parse_key("#01"),
            Some(TicketKey::Number {
                key: None,
                number: 1
            })
        );
        assert_eq!(parse_key("TASK-000"), None);
        assert!(matches!(
            parse_key("6F9619FF-8B86-D011-B42D-00C04FC964FF"),
            Some(TicketKey::Uuid(u)) if u == "6f9619ff-8b86-d011-b42d-00c04fc964ff"
        ));
    }

    #[test]
    fn search_terms_drop_punctuation_and_keep_phrases() {
        assert_eq!(
            search_terms(r#"JWT "token refresh" (auth)*"#).0,
            vec![
                vec!["jwt".to_string()],
                vec!["token".to_string(), "refresh".to_string()],
                vec!["auth".to_string()],
            ]
        );
        assert!(search_terms(r#"" ** - ()"#).0.is_empty());
        assert_eq!(search_terms("\"unclosed phrase").0.len(), 1);
    }

    #[test]
    fn page_sizes_outside_the_range_are_invalid_params() {
        assert_eq!(page_size(LIST_LIMIT, None), Ok(50));
        assert_eq!(page_size(LIST_LIMIT, Some(200)), Ok(200));
        for bad in [0, -5, 201] {
            let err = page_size(LIST_LIMIT, Some(bad)).unwrap_err();
            assert_eq!(err.code, errors::INVALID_PARAMS, "{bad}");
            assert!(err.message.contains(&bad.to_string()), "{}", err.message);
        }
    }
}
