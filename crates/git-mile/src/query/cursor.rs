//! Cursors of `list`: what git-mile puts in them and which key seals them. Sealing, binding
//! to the query and encoding are the service kit's ([`mcp_common::page`]); what is
//! git-mile's is
//! - the position: the sort values of the last item of a page, so the next page resumes
//!   after that item wherever new entities were inserted meanwhile ([`Position`]);
//! - the query a cursor is bound to: entity, filter, sort and `includeClosed` as given
//!   ([`Shape`]);
//! - the key: derived from a secret kept in the repository (`.git/git-mile/cursor.key`), so
//!   that cursors survive restarts and pass between the CLI and the server ([`cursor_key`]);
//! - the messages of a refusal, which name git-mile's arguments ([`refusal_message`]).

use std::path::Path;

use mcp_common::page::{CursorError, CursorKey, Cursors};
use serde::Serialize;

use super::sort::SortValue;

/// The scope cursors are bound under. The CLI and the server both use it, so a cursor
/// printed by `git mile list` works with `git_mile.list` and back.
pub const SCOPE: &str = "git_mile.list";

/// The context of [`CursorKey::derive`] (bumped when the position's format changes, which
/// refuses older cursors instead of misreading them).
const KEY_CONTEXT: &str = "git-mile list cursors v2";

/// Where the next page starts: after the item with these sort values.
pub type Position = Vec<SortValue>;

/// Everything that shapes a listing, as given: a cursor is refused with any other of them,
/// even one whose change would not change the answer.
#[derive(Debug, Clone, Serialize)]
pub struct Shape<'a> {
    pub entity: &'a str,
    /// The filter as written, trimmed (blank means none).
    pub filter: &'a str,
    /// The sort keys in canonical form (`updated:desc,id:asc`).
    pub sort: &'a str,
    #[serde(rename = "includeClosed")]
    pub include_closed: bool,
}

impl Shape<'_> {
    /// The cursors of this query under `key`.
    pub fn cursors(&self, key: &CursorKey) -> Cursors {
        key.bind(SCOPE, self)
    }
}

/// Why a cursor was refused, in git-mile's words.
pub fn refusal_message(error: CursorError) -> &'static str {
    match error {
        CursorError::Forged => {
            "the cursor is not one this server issued (it is malformed or was altered)"
        }
        CursorError::OtherQuery => {
            "the cursor belongs to a different query: pass the same entity, filter, sort and includeClosed as the call that returned it, or drop the cursor to start over"
        }
    }
}

/// The repository's cursor key, derived from a secret made on first use under
/// `.git/git-mile/cursor.key`. Cursors then survive server restarts and pass between the
/// CLI and the server. When the secret cannot be stored (a read-only repository), cursors
/// last as long as the process.
pub fn cursor_key(git_dir: &Path) -> CursorKey {
    CursorKey::stored(KEY_CONTEXT, &git_dir.join("git-mile").join("cursor.key"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape<'a>(filter: &'a str, include_closed: bool) -> Shape<'a> {
        Shape {
            entity: "issue",
            filter,
            sort: "updated:desc,id:asc",
            include_closed,
        }
    }

    #[test]
    fn positions_round_trip_and_other_queries_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let key = cursor_key(dir.path());
        let open = shape("status == \"open\"", false).cursors(&key);
        let after = vec![SortValue::Number(3), SortValue::Text("abc".into())];
        let text = open.encode(&after);
        assert_eq!(open.decode::<Position>(&text), Ok(after.clone()));
        // The same repository gives the same key (a restart, or the CLI).
        let again = shape("status == \"open\"", false).cursors(&cursor_key(dir.path()));
        assert_eq!(again.decode::<Position>(&text), Ok(after));
        for other in [shape("", false), shape("status == \"open\"", true)] {
            assert_eq!(
                other.cursors(&key).decode::<Position>(&text),
                Err(CursorError::OtherQuery)
            );
        }
        // Another repository's key.
        let elsewhere = tempfile::tempdir().unwrap();
        let foreign = shape("status == \"open\"", false).cursors(&cursor_key(elsewhere.path()));
        assert_eq!(foreign.decode::<Position>(&text), Err(CursorError::Forged));
        assert!(refusal_message(CursorError::Forged).contains("cursor"));
        assert!(refusal_message(CursorError::OtherQuery).contains("different query"));
    }

    #[test]
    fn the_secret_is_stored_in_the_repository() {
        let dir = tempfile::tempdir().unwrap();
        let _ = cursor_key(dir.path());
        let secret = std::fs::read(dir.path().join("git-mile/cursor.key")).unwrap();
        assert_eq!(secret.len(), 32);
        let _ = cursor_key(dir.path());
        assert_eq!(
            std::fs::read(dir.path().join("git-mile/cursor.key")).unwrap(),
            secret,
            "made once"
        );
    }
}
