//! Input checks shared by the operations: ticket references and finding tickets, titles,
//! sizes, points, names, statuses, page sizes, search terms.

use std::collections::HashSet;

use mcp_common_core::{Limit, ToolError};

use crate::errors::{self, clip};
use crate::model::{Kind, MAX_STORY_POINTS, Status, TicketRef};
use crate::params::StatusName;
use crate::store::{StoreTx, TicketLookup, TicketRow};

const MAX_TITLE_CHARS: usize = 500;

/// Most labels, and most assignees, of one ticket.
const MAX_NAMES: usize = 100;

pub(super) fn invalid(message: impl Into<String>, hint: impl Into<String>) -> ToolError {
    ToolError::new(errors::INVALID_INPUT, message).with_hint(hint)
}

// ---------------------------------------------------------------------------------------
// Finding tickets

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
pub(super) fn batch_position(reference: &str) -> Option<usize> {
    reference
        .strip_prefix('#')
        .filter(|n| all_digits(n))
        .and_then(|n| n.parse::<usize>().ok())
}

/// A ticket reference: `KEY-N`, a bare `N` (default project), either with a leading `#`, or
/// a UUID. Blanks around the whole reference are ignored, blanks inside it are not.
fn parse_key(text: &str) -> Option<TicketLookup> {
    let text = text.trim();
    if let Ok(uuid) = uuid::Uuid::parse_str(text) {
        return Some(TicketLookup::Uuid(uuid.hyphenated().to_string()));
    }
    let text = text.strip_prefix('#').unwrap_or(text);
    if all_digits(text) {
        return parse_number(text).map(|number| TicketLookup::Number { key: None, number });
    }
    let (key, number) = text.rsplit_once('-')?;
    let number = parse_number(number)?;
    (!key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')).then(|| {
        TicketLookup::Number {
            key: Some(key.to_ascii_uppercase()),
            number,
        }
    })
}

/// Whether `text` is a ticket reference (`KEY-N`, a number, a UUID), found or not.
pub fn is_reference(text: &str) -> bool {
    parse_key(text).is_some()
}

fn not_found(reference: &str) -> ToolError {
    ToolError::not_found(format!("Ticket {reference} not found")).with_hint(
        "Use jility_list_tickets or jility_search_tickets (CLI: `jility ticket list`) to see available tickets.",
    )
}

/// How `reference` names a ticket; an error when it names none.
pub(super) fn lookup(reference: &str) -> Result<TicketLookup, ToolError> {
    parse_key(reference).ok_or_else(|| {
        invalid(
            format!("'{}' is not a ticket reference", clip(reference)),
            "Refer to tickets as KEY-N (e.g. TASK-42) or by UUID.",
        )
    })
}

/// The live ticket `reference` found as `row`: an error when it found none, or a deleted one.
pub(super) fn live<T>(
    found: Option<T>,
    row: impl Fn(&T) -> &TicketRow,
    reference: &str,
) -> Result<T, ToolError> {
    match found {
        Some(found) if row(&found).deleted_at.is_none() => Ok(found),
        Some(found) => Err(ToolError::not_found(format!(
            "Ticket {} was deleted",
            row(&found).display_number()
        ))
        .with_hint("Deleted tickets are kept in the database but can no longer be changed.")),
        None => Err(not_found(reference.trim())),
    }
}

/// Find a live ticket by `KEY-N`, bare number (default project) or UUID.
pub(super) fn resolve(tx: &mut dyn StoreTx, reference: &str) -> Result<TicketRow, ToolError> {
    let row = match lookup(reference)? {
        TicketLookup::Uuid(uuid) => tx.ticket_by_uuid(&uuid)?,
        TicketLookup::Number { key, number } => {
            let key = match key {
                Some(key) => key,
                None => tx.default_project()?.key,
            };
            tx.ticket_by_number(&key, number)?
        }
    };
    live(row, |row| row, reference)
}

pub(super) fn resolve_opt(
    tx: &mut dyn StoreTx,
    reference: Option<&str>,
) -> Result<Option<i64>, ToolError> {
    match reference.map(str::trim).filter(|r| !r.is_empty()) {
        Some(r) => Ok(Some(resolve(tx, r)?.id)),
        None => Ok(None),
    }
}

/// The reference (number, title, status) of the ticket in row `id`.
pub(super) fn ticket_ref(tx: &mut dyn StoreTx, id: i64) -> Result<TicketRef, ToolError> {
    refs(tx, &[id])?
        .pop()
        .ok_or_else(|| ToolError::internal(format!("ticket row {id} vanished")))
}

/// The references of the tickets in rows `ids`, in order.
pub(super) fn refs(tx: &mut dyn StoreTx, ids: &[i64]) -> Result<Vec<TicketRef>, ToolError> {
    tx.ticket_refs(ids)?
        .into_iter()
        .zip(ids)
        .map(|(found, id)| {
            found.ok_or_else(|| ToolError::internal(format!("ticket row {id} vanished")))
        })
        .collect()
}

// ---------------------------------------------------------------------------------------
// Checks

pub(super) fn not_an_epic(row: &TicketRow) -> ToolError {
    invalid(
        format!("{} is a ticket, not an epic", row.display_number()),
        "Make it an epic first (set its kind to `epic`), or name one of the epics jility_list_epics lists.",
    )
}

/// Whether a ticket of `kind` may have the parent `parent` and join the ticket `epic` as its
/// epic: only an epic gathers tickets, and an epic belongs to no epic and is no sub-task
/// (so no chain of parents and epics can loop).
pub(super) fn check_epic_link(
    tx: &mut dyn StoreTx,
    number: Option<&str>,
    kind: Kind,
    epic: Option<i64>,
    parent: Option<i64>,
) -> Result<(), ToolError> {
    if kind == Kind::Epic && parent.is_some() {
        return Err(invalid(
            format!(
                "{} is an epic: an epic is no sub-task",
                number.unwrap_or("The new ticket")
            ),
            "Leave the parent out (epics gather tickets with epic_id), or make it a plain ticket (kind: ticket).",
        ));
    }
    let Some(epic) = epic else {
        return Ok(());
    };
    let row = tx
        .ticket_by_id(epic)?
        .ok_or_else(|| ToolError::internal(format!("ticket row {epic} vanished")))?;
    if row.kind != Kind::Epic {
        return Err(not_an_epic(&row));
    }
    if kind == Kind::Epic {
        return Err(invalid(
            format!(
                "{} is an epic: an epic cannot belong to epic {}",
                number.unwrap_or("The new ticket"),
                row.display_number()
            ),
            "Leave the epic out, or make the ticket a plain ticket (kind: ticket).",
        ));
    }
    Ok(())
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

pub(super) fn check_title(title: &str) -> Result<String, ToolError> {
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

pub(super) fn check_size(text: &str, what: &str, max: usize) -> Result<(), ToolError> {
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

pub(super) fn check_points(points: Option<i64>) -> Result<Option<u8>, ToolError> {
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
pub(super) fn check_names(names: &[String], what: &str) -> Result<Vec<String>, ToolError> {
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
pub(super) fn page_size(limit: Limit, requested: Option<i64>) -> Result<usize, ToolError> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tracker::LIST_LIMIT;

    #[test]
    fn ticket_keys() {
        assert_eq!(
            parse_key("TASK-42"),
            Some(TicketLookup::Number {
                key: Some("TASK".into()),
                number: 42
            })
        );
        assert_eq!(
            parse_key(" task-7 "),
            Some(TicketLookup::Number {
                key: Some("TASK".into()),
                number: 7
            })
        );
        assert_eq!(
            parse_key("42"),
            Some(TicketLookup::Number {
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
            Some(TicketLookup::Number {
                key: Some("TASK".into()),
                number: 7
            })
        );
        assert_eq!(
            parse_key("#01"),
            Some(TicketLookup::Number {
                key: None,
                number: 1
            })
        );
        assert_eq!(parse_key("TASK-000"), None);
        assert!(matches!(
            parse_key("6F9619FF-8B86-D011-B42D-00C04FC964FF"),
            Some(TicketLookup::Uuid(u)) if u == "6f9619ff-8b86-d011-b42d-00c04fc964ff"
        ));
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
