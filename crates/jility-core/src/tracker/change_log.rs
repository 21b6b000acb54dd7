//! The change log: every operation records what it changed, one entry per change.

use mcp_common_core::ToolError;

use crate::store::{NewChange, StoreTx};

/// One change to record: its kind (`status_changed`, …) and what it shows.
pub(super) struct Entry<'a> {
    pub(super) kind: &'a str,
    pub(super) old: Option<&'a str>,
    pub(super) new: Option<&'a str>,
    pub(super) detail: Option<&'a str>,
    pub(super) message: Option<&'a str>,
}

/// Record `c` in the change log of ticket `id`.
pub(super) fn record(
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
    let told = super::inbox::Told {
        kind: c.kind,
        old: c.old,
        new: c.new,
        detail: c.detail,
    };
    super::inbox::after_change(tx, id, actor, at, &told, false)
}

/// An entry of `kind` that shows nothing else; fill the rest with `..change(kind)`.
pub(super) fn change(kind: &str) -> Entry<'_> {
    Entry {
        kind,
        old: None,
        new: None,
        detail: None,
        message: None,
    }
}
