//! git-mile's error codes, and how its failures map onto them.
//!
//! Each code has a class ([`ErrorClass`]), and the class decides how the failure reaches an
//! MCP client under git-mile's contract (`docs/reference/git-mile-mcp.md`):
//! - `InvalidArguments` and `Internal` are protocol-level errors
//!   ([`ErrorClass::is_protocol_error`]): `-32602` and `-32001`, the message as the JSON-RPC
//!   message and the error object (code, hint, …) in `data`;
//! - every other class is a tool-level failure: an `isError: true` result whose JSON text is
//!   `{"error":{"code","message","hint","retryable"}}`.
//!
//! (`-32600` for arguments that cannot be decoded and `-32601` for an unknown tool or method
//! are the server's own: they come before any of these.)

use mcp_common::page::CursorError;
use mcp_common::{ErrorClass, ErrorCode, ToolError, codes};

use crate::listing::{ListError, MAX_LIMIT};
use crate::model::Kind;
use crate::quote::{excerpt, quoting_excerpts};
use crate::store::StoreError;

/// No entity of that kind has the id.
pub const NOT_FOUND: ErrorCode = codes::NOT_FOUND;
/// The id prefix matches several entities. A `Conflict`, not `InvalidArguments`: the same
/// prefix named one entity until another with the same start was made, so the call is
/// well-formed and contradicts the repository's current state (and the contract makes it a
/// tool-level result, which `InvalidArguments`, a protocol error here, would not be).
pub const AMBIGUOUS_ID: ErrorCode = ErrorCode::new("ambiguous_id", ErrorClass::Conflict);
/// The server was started outside a git repository, without `--repo`.
pub const NO_REPOSITORY: ErrorCode = ErrorCode::new("no_repository", ErrorClass::NotFound);

/// A filter that does not parse or type-check (`-32602`).
pub const INVALID_FILTER: ErrorCode =
    ErrorCode::new("invalid_filter", ErrorClass::InvalidArguments);
/// A sort key that names no sortable field or direction (`-32602`).
pub const INVALID_SORT: ErrorCode = ErrorCode::new("invalid_sort", ErrorClass::InvalidArguments);
/// A `limit` outside 1–200 or not whole (`-32602`).
pub const INVALID_LIMIT: ErrorCode = ErrorCode::new("invalid_limit", ErrorClass::InvalidArguments);
/// A cursor that is forged, altered, foreign, or of another query (`-32602`).
pub const INVALID_CURSOR: ErrorCode =
    ErrorCode::new("invalid_cursor", ErrorClass::InvalidArguments);

/// A write that lost the directory it was writing into each time it tried, because another
/// git process (`git gc`, `git prune`, `git pack-refs`) kept removing empty directories of the
/// repository meanwhile: nothing was written, and the same call works once that process is
/// done. A tool-level failure, and retryable (the class `Unavailable`), unlike `conflict`.
pub const REPOSITORY_BUSY: ErrorCode = ErrorCode::new("repository_busy", ErrorClass::Unavailable);

/// An entity whose history cannot be read: the repository is damaged (`-32001`).
pub const UNREADABLE: ErrorCode = ErrorCode::new("unreadable", ErrorClass::Internal);
/// The repository cannot be read (`-32001`).
pub const REPOSITORY_ERROR: ErrorCode = ErrorCode::new("repository_error", ErrorClass::Internal);

const DAMAGE_HINT: &str = "The repository may be damaged: run `git fsck` in it. If it is sound, \
this is a bug; please report it with the message.";

/// No `kind` has `id`.
pub fn not_found(kind: Kind, id: &str) -> ToolError {
    not_found_named(kind.as_str(), id)
}

/// No entity of the kind named `kind` (`issue`, `milestone`, `task`) has `id`.
pub fn not_found_named(kind: &str, id: &str) -> ToolError {
    if crate::catalog::too_short(id) {
        let id = excerpt(id.trim());
        let min = crate::catalog::MIN_PREFIX;
        return ToolError::new(
            NOT_FOUND,
            format!(
                "`{id}` is too short for an id: a prefix needs at least {min} characters; give more of the {kind} id, or all of it"
            ),
        )
        .with_hint(format!(
            "Give the full id (a UUID) or a unique prefix of at least {min} characters; git_mile.list {{\"entity\":\"{kind}\"}} lists the ids."
        ));
    }
    let id = excerpt(id);
    ToolError::new(
        NOT_FOUND,
        format!("{kind} `{id}` not found; list them with git_mile.list {{\"entity\":\"{kind}\"}}"),
    )
    .with_hint(
        "Give the full id (a UUID) or a unique prefix of at least 4 characters; closed entities are listed with includeClosed: true.",
    )
}

/// `id` is the start of several `kind` ids.
pub fn ambiguous_id(kind: Kind, id: &str, candidates: &[String]) -> ToolError {
    ambiguous_named(kind.as_str(), id, candidates)
}

/// `id` is the start of several ids of the kind named `kind`.
pub fn ambiguous_named(kind: &str, id: &str, candidates: &[String]) -> ToolError {
    let id = excerpt(id);
    ToolError::new(
        AMBIGUOUS_ID,
        format!(
            "`{id}` is the start of {} {kind} ids ({}); give the full id",
            candidates.len(),
            crate::quote::some_of(candidates)
        ),
    )
    .with_hint("Call again with one of the ids the message lists, or with more of its characters.")
}

/// The server has no repository; `why` says why (and how to give it one).
pub fn no_repository(why: &str) -> ToolError {
    ToolError::new(NO_REPOSITORY, why).with_hint(
        "Restart the server inside a git repository, or with --repo PATH; calling again will not help.",
    )
}

/// `kind` `id` exists but its history cannot be read.
pub fn unreadable(kind: Kind, id: String, why: String) -> ToolError {
    unreadable_named(kind.as_str(), id, why)
}

/// An entity of the kind named `what` exists but its history cannot be read.
pub fn unreadable_named(what: &'static str, id: String, why: String) -> ToolError {
    let message = crate::ops::OpError::Unreadable { what, id, why }.to_string();
    ToolError::new(UNREADABLE, message).with_hint(DAMAGE_HINT)
}

/// Reading the repository failed; the message holds the debug summary (as the contract says).
pub fn repository(err: &StoreError) -> ToolError {
    ToolError::new(REPOSITORY_ERROR, quoting_excerpts(&format!("{err:?}"), []))
        .with_hint(DAMAGE_HINT)
}

/// A failure of the server itself (a task that panicked, a response that did not serialize).
pub fn internal(what: impl std::fmt::Debug) -> ToolError {
    ToolError::internal(quoting_excerpts(&format!("{what:?}"), []))
}

impl From<&ListError> for ToolError {
    fn from(err: &ListError) -> Self {
        let message = err.to_string();
        match err {
            ListError::Filter(_) => ToolError::new(INVALID_FILTER, message).with_hint(
                "Fix the filter where the message points; the fields and operators are in git_mile.list's inputSchema (filter).",
            ),
            ListError::Sort(_) => ToolError::new(INVALID_SORT, message)
                .with_hint("Give sort keys as \"field\" or \"field:asc|desc\", e.g. [\"updated:desc\"]."),
            ListError::Limit(_) => ToolError::new(INVALID_LIMIT, message).with_hint(format!(
                "Give an integer from 1 to {MAX_LIMIT}, or omit limit for the default page size."
            )),
            ListError::Cursor(CursorError::Forged) => ToolError::new(INVALID_CURSOR, message)
                .with_hint(
                    "Pass the nextCursor of the previous page unchanged, or drop the cursor to start from the first page.",
                ),
            ListError::Cursor(CursorError::OtherQuery) => ToolError::new(INVALID_CURSOR, message)
                .with_hint(
                    "Only limit may change between pages; call with the cursor's own arguments, or drop the cursor.",
                ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_too_short_is_told_so_not_just_not_found() {
        let err = not_found(Kind::Issue, "65");
        assert_eq!(err.code, NOT_FOUND);
        assert!(
            err.message
                .starts_with("`65` is too short for an id: a prefix needs at least 4 characters"),
            "{}",
            err.message
        );
        assert!(!err.message.contains("not found"), "{}", err.message);
        let hint = err.hint.as_deref().unwrap_or_default();
        assert!(hint.contains("at least 4 characters"), "{hint}");
        assert!(
            hint.contains(r#"git_mile.list {"entity":"issue"}"#),
            "{hint}"
        );
        // Spaces around it do not count; four characters are a prefix, not found as such.
        assert!(
            not_found_named("task", " abc ")
                .message
                .starts_with("`abc` is too short")
        );
        let err = not_found(Kind::Milestone, "abcd");
        assert!(
            err.message.starts_with("milestone `abcd` not found"),
            "{}",
            err.message
        );
    }

    #[test]
    fn classes_follow_the_contract() {
        // Tool-level results.
        for code in [NOT_FOUND, AMBIGUOUS_ID, NO_REPOSITORY, REPOSITORY_BUSY] {
            assert!(!code.class().is_protocol_error(), "{code}");
        }
        // Only a write that git's own cleanup got in the way of is worth calling again as it is.
        assert!(REPOSITORY_BUSY.class().retryable());
        for code in [
            NOT_FOUND,
            AMBIGUOUS_ID,
            NO_REPOSITORY,
            UNREADABLE,
            REPOSITORY_ERROR,
        ] {
            assert!(!code.class().retryable(), "{code}");
        }
        // -32602.
        for code in [INVALID_FILTER, INVALID_SORT, INVALID_LIMIT, INVALID_CURSOR] {
            assert_eq!(code.class().json_rpc_code(), -32602, "{code}");
        }
        // -32001.
        for code in [UNREADABLE, REPOSITORY_ERROR, codes::INTERNAL] {
            assert_eq!(code.class().json_rpc_code(), -32001, "{code}");
        }
    }

    #[test]
    fn quotes_are_short() {
        let long = "é".repeat(1000);
        assert!(not_found(Kind::Issue, &long).message.len() < 700);
    }

    #[test]
    fn cursor_refusals_keep_their_words() {
        let err = ToolError::from(&ListError::Cursor(CursorError::OtherQuery));
        assert_eq!(err.code, INVALID_CURSOR);
        assert!(err.message.contains("different query"), "{}", err.message);
        let rpc = mcp_common::ToJsonRpc::to_json_rpc(&err);
        assert_eq!(rpc.code.0, -32602);
        assert_eq!(rpc.message, err.message);
    }
}
