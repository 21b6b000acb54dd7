//! `Idempotency-Key` on the API's writes (IETF draft `httpapi-idempotency-key-header`): a
//! client that sends a write with a key of its choosing and loses the answer (a reset
//! connection, a timeout, the server killed after its commit) sends it again with the same
//! key and gets the first answer, with `Idempotent-Replayed: true`, instead of writing twice.
//!
//! - **Which requests.** Every write of the operations table (`POST` and `DELETE`: creates,
//!   batches, comments, commits, template tickets, and the edits that append, such as a
//!   description `append` or an assignment's handoff comment). Elsewhere the header is
//!   ignored.
//! - **The key.** 1 to [`MAX_KEY_CHARS`] printable ASCII characters, as a bare value or a
//!   structured-field string (`"…"`, as the draft writes it); anything else is `400
//!   invalid_input`. A key belongs to one token of one workspace: the same key sent by two
//!   tokens, or in two workspaces, is two keys (a client is a token; one agent's keys never
//!   collide with, or replay, another's answers).
//! - **The request.** Its fingerprint is the BLAKE3 hash of the method, the path, the query
//!   and the body as canonical JSON (members sorted, no spaces): the same key with another
//!   request is `409 idempotency_key_reused`, not retryable.
//! - **Exactly once.** The key's row (fingerprint, status and answer) is inserted in the
//!   write's own transaction, whose commit the store holds until the answer is encoded
//!   ([`crate::store::PgStore::hold_next_write`]): both are committed or neither. A write
//!   that fails is not recorded (nothing was written: sending it again runs it again).
//! - **In flight.** A second request with a key whose first is still running waits for it:
//!   the writers of a workspace take turns (the store's writer lock), so it finds the key
//!   recorded when its own write would commit, rolls its write back and answers the first
//!   answer (or `409` when its request differs).
//! - **Kept** [`KEEP_HOURS`] hours (the database's clock), then pruned by the workspace's
//!   next keyed write; an older key is unknown.
//! - **MCP.** Tool calls at `/mcp` take no key: MCP has no per-call idempotency, and the
//!   client that retries writes is the bridge, which talks to the REST API and sends a key
//!   with every write (`jility_bridge::bridge`). Replays are neither audited nor published
//!   as changes (nothing was written).

use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use mcp_common::ToolError;
use mcp_common::{ErrorClass, ErrorCode};
use postgres::Client;
use serde_json::Value;

use jility_core::errors;
use jility_core::store::StoreResult;

/// The request header.
pub const KEY_HEADER: &str = "idempotency-key";
/// The answer's header on a replay.
pub const REPLAYED_HEADER: &str = "idempotent-replayed";
/// Longest key.
pub const MAX_KEY_CHARS: usize = 255;
/// How long a key is kept.
pub const KEEP_HOURS: u32 = 24;

/// The key was used before with another request.
pub const KEY_REUSED: ErrorCode = ErrorCode::new("idempotency_key_reused", ErrorClass::Conflict);

/// A request's key, and what identifies the request.
#[derive(Debug, Clone)]
pub struct Keyed {
    pub key: String,
    pub token_id: i64,
    pub fingerprint: [u8; 32],
}

/// The first answer to a key.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub status: u16,
    pub body: String,
}

impl Recorded {
    /// The first answer, again, marked as a replay.
    pub fn replay(self) -> Response {
        let status = StatusCode::from_u16(self.status).unwrap_or(StatusCode::OK);
        let mut response = (
            status,
            [(axum::http::header::CONTENT_TYPE, "application/json")],
            self.body,
        )
            .into_response();
        response
            .headers_mut()
            .insert(REPLAYED_HEADER, HeaderValue::from_static("true"));
        response
    }
}

fn bad_key(message: impl Into<String>) -> ToolError {
    ToolError::new(errors::INVALID_INPUT, message).with_hint(format!(
        "Send one `Idempotency-Key` header of 1 to {MAX_KEY_CHARS} printable ASCII characters (a UUID is a good key), or none."
    ))
}

/// The request's `Idempotency-Key`, checked: none, or a valid key (a structured-field string
/// `"…"` is unquoted); more than one header, or a bad value, is `invalid_input`.
pub fn key_of(headers: &HeaderMap) -> Result<Option<String>, ToolError> {
    let mut values = headers.get_all(KEY_HEADER).iter();
    let Some(value) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err(bad_key(
            "The request has more than one Idempotency-Key header",
        ));
    }
    let bytes = value.as_bytes();
    let bytes = match bytes {
        [b'"', inner @ .., b'"'] if !inner.contains(&b'"') && !inner.contains(&b'\\') => inner,
        _ => bytes,
    };
    if bytes.is_empty() {
        return Err(bad_key("The Idempotency-Key header is empty"));
    }
    if bytes.len() > MAX_KEY_CHARS {
        return Err(bad_key(format!(
            "The Idempotency-Key is {} characters long; at most {MAX_KEY_CHARS} are allowed",
            bytes.len()
        )));
    }
    if !bytes.iter().all(|b| (0x20..=0x7e).contains(b)) {
        return Err(bad_key(
            "The Idempotency-Key holds a character that is not printable ASCII",
        ));
    }
    Ok(Some(String::from_utf8_lossy(bytes).into_owned()))
}

/// The request's fingerprint: BLAKE3 of the method, path, query and the body as canonical
/// JSON (the raw bytes when it is not JSON: such a request fails anyway).
pub fn fingerprint(method: &str, path: &str, query: &str, body: &[u8]) -> [u8; 32] {
    let mut hasher = blake3::Hasher::new();
    for part in [method, path, query] {
        hasher.update(&(part.len() as u64).to_le_bytes());
        hasher.update(part.as_bytes());
    }
    match serde_json::from_slice::<Value>(body) {
        Ok(value) => {
            let mut text = String::new();
            canonical(&value, &mut text);
            hasher.update(b"json");
            hasher.update(text.as_bytes());
        }
        Err(_) => {
            hasher.update(b"raw");
            hasher.update(body);
        }
    }
    *hasher.finalize().as_bytes()
}

/// `value` as JSON with every object's members sorted by name and no spaces.
fn canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(members) => {
            let mut sorted: Vec<_> = members.iter().collect();
            sorted.sort_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (i, (name, member)) in sorted.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(name.clone()).to_string());
                out.push(':');
                canonical(member, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(item, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

fn reused(keyed: &Keyed) -> ToolError {
    let shown: String = keyed.key.chars().take(64).collect();
    ToolError::new(
        KEY_REUSED,
        format!("The Idempotency-Key '{shown}' was used with another request"),
    )
    .with_hint("A key names one request: send a new key with a new request, or this key with exactly the request it was first sent with.")
}

/// The live (younger than [`KEEP_HOURS`]) row of `keyed`, if any, checked against its
/// fingerprint: the first answer, or `409` when the key came with another request.
fn find(
    client: &mut Client,
    workspace_id: i64,
    keyed: &Keyed,
) -> StoreResult<Option<Result<Recorded, ToolError>>> {
    let row = client
        .query_opt(
            "SELECT fingerprint, status, body FROM idempotency_keys \
             WHERE workspace_id = $1 AND token_id = $2 AND key = $3 \
             AND created_at > now() - make_interval(hours => $4)",
            &[
                &workspace_id,
                &keyed.token_id,
                &keyed.key,
                &(KEEP_HOURS as i32),
            ],
        )
        .map_err(crate::store::db)?;
    let Some(row) = row else { return Ok(None) };
    let fingerprint: Vec<u8> = row.try_get(0).map_err(crate::store::db)?;
    if fingerprint != keyed.fingerprint {
        return Ok(Some(Err(reused(keyed))));
    }
    let status: i16 = row.try_get(1).map_err(crate::store::db)?;
    let body: String = row.try_get(2).map_err(crate::store::db)?;
    Ok(Some(Ok(Recorded {
        status: u16::try_from(status).unwrap_or(200),
        body,
    })))
}

/// Before running: the first answer to `keyed` if there is one (or its `409`).
pub fn lookup(
    client: &mut Client,
    workspace_id: i64,
    keyed: &Keyed,
) -> Result<Option<Recorded>, ToolError> {
    match find(client, workspace_id, keyed)? {
        None => Ok(None),
        Some(found) => found.map(Some),
    }
}

/// What recording a key in the write's transaction found.
pub enum Outcome {
    /// The key is recorded with this answer: commit.
    Recorded,
    /// Another request recorded the key first (it ran while this one waited for the
    /// writer lock): roll this write back and answer that one's answer, or its `409`.
    Taken(Result<Recorded, ToolError>),
}

/// In the held write's transaction: prune the workspace's expired keys, then insert
/// `keyed` with its answer; `(outcome, commit?)` for [`crate::store::PgStore::commit_held`].
pub fn record(
    client: &mut Client,
    workspace_id: i64,
    keyed: &Keyed,
    answer: &Recorded,
) -> StoreResult<(Outcome, bool)> {
    client
        .execute(
            "DELETE FROM idempotency_keys WHERE workspace_id = $1 \
             AND created_at < now() - make_interval(hours => $2)",
            &[&workspace_id, &(KEEP_HOURS as i32)],
        )
        .map_err(crate::store::db)?;
    let status = i16::try_from(answer.status).unwrap_or(200);
    let inserted = client
        .execute(
            "INSERT INTO idempotency_keys (workspace_id, token_id, key, fingerprint, status, body) \
             VALUES ($1, $2, $3, $4, $5, $6) \
             ON CONFLICT (workspace_id, token_id, key) DO NOTHING",
            &[
                &workspace_id,
                &keyed.token_id,
                &keyed.key,
                &keyed.fingerprint.as_slice(),
                &status,
                &answer.body,
            ],
        )
        .map_err(crate::store::db)?;
    if inserted == 1 {
        return Ok((Outcome::Recorded, true));
    }
    match find(client, workspace_id, keyed)? {
        Some(found) => Ok((Outcome::Taken(found), false)),
        // Only an expired row can be in the way, and it was just pruned.
        None => Err(jility_core::store::StoreError::Database(
            "the idempotency key is taken but cannot be read".into(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(values: &[&str]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for v in values {
            map.append(KEY_HEADER, HeaderValue::from_str(v).unwrap());
        }
        map
    }

    #[test]
    fn keys_are_bounded_printable_ascii() {
        assert_eq!(key_of(&headers(&[])).unwrap(), None);
        assert_eq!(key_of(&headers(&["abc"])).unwrap().as_deref(), Some("abc"));
        assert_eq!(
            key_of(&headers(&["\"8e03978e\""])).unwrap().as_deref(),
            Some("8e03978e")
        );
        assert!(key_of(&headers(&[&"k".repeat(255)])).unwrap().is_some());
        assert!(key_of(&headers(&[&"k".repeat(256)])).is_err());
        assert!(key_of(&headers(&["\"\""])).is_err());
        assert!(key_of(&headers(&["a", "b"])).is_err());
        let mut map = HeaderMap::new();
        map.insert(KEY_HEADER, HeaderValue::from_bytes(b"caf\xc3\xa9").unwrap());
        assert!(key_of(&map).is_err());
    }

    #[test]
    fn fingerprints_ignore_member_order_and_spacing_only() {
        let a = fingerprint(
            "POST",
            "/tickets",
            "",
            br#"{"title":"x","labels":["a","b"]}"#,
        );
        let b = fingerprint(
            "POST",
            "/tickets",
            "",
            br#"{ "labels": ["a", "b"], "title": "x" }"#,
        );
        assert_eq!(a, b);
        let c = fingerprint(
            "POST",
            "/tickets",
            "",
            br#"{"title":"y","labels":["a","b"]}"#,
        );
        assert_ne!(a, c);
        let d = fingerprint(
            "POST",
            "/tickets/batch",
            "",
            br#"{"title":"x","labels":["a","b"]}"#,
        );
        assert_ne!(a, d);
        let e = fingerprint(
            "POST",
            "/tickets",
            "",
            br#"{"title":"x","labels":["b","a"]}"#,
        );
        assert_ne!(a, e);
    }
}
