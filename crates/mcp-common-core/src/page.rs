//! Paging: one `limit`, one opaque `cursor`, one `page` object for every list tool.
//!
//! A cursor is a position (whatever the server needs to resume: an offset, the sort key of
//! the last item, a remote API's page token) sealed with a keyed hash and bound to the query
//! that made it. A cursor that was altered, made by another server (or by this one before a
//! restart, where its key is per process), or passed with other arguments is refused as
//! `invalid_params`, never answered with a wrong page.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize, de::DeserializeOwned};

use crate::error::ToolError;

/// Length of the keyed hash kept in a cursor, in bytes.
const MAC_LEN: usize = 16;
/// Length of the query fingerprint kept in a cursor, in bytes.
const QUERY_LEN: usize = 8;
const VERSION: u8 = 1;
/// Longest cursor accepted, in characters: the longest message the protocol edge takes
/// ([`crate::MAX_MESSAGE_BYTES`]). A position may hold the sort values of one item (e.g. two
/// 500-character titles, escaped), so a cursor may well pass a few KiB; a smaller limit
/// here refused the server's own cursors as forged (found by fuzzing, see
/// `docs/reliability.md`). Longer input never reaches a tool: the edge refuses it first.
pub const MAX_CURSOR_LEN: usize = crate::MAX_MESSAGE_BYTES;

/// One page of a list: the data (usually an array) and where it stands in the whole list.
#[derive(Debug, Clone, PartialEq)]
pub struct Paged<T> {
    pub data: T,
    pub page: Page,
}

/// Where a page of a list stands in the whole list; sent beside `data` in the envelope.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Page {
    /// Pass as `cursor`, with the same other arguments, for the next page; absent on the
    /// last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// How many items the whole list has (a lower bound when `total_exact` is false).
    pub total: u64,
    /// `false` when `total` is a lower bound (counting stopped early); absent when exact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_exact: Option<bool>,
}

impl Page {
    /// A page of a list of `total` items; `next_cursor` when more follow.
    pub fn new(total: u64, next_cursor: Option<String>) -> Self {
        Self {
            next_cursor,
            total,
            total_exact: None,
        }
    }

    /// A page whose `total` is only a lower bound.
    pub fn at_least(total: u64, next_cursor: Option<String>) -> Self {
        Self {
            next_cursor,
            total,
            total_exact: Some(false),
        }
    }
}

/// Why a cursor was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CursorError {
    /// Not made by this server: malformed, altered, or from an earlier run.
    Forged,
    /// Made by this server for other arguments.
    OtherQuery,
}

impl CursorError {
    /// The `invalid_params` error for this refusal; `tool` names the list tool.
    pub fn into_tool_error(self, tool: &str) -> ToolError {
        match self {
            Self::Forged => ToolError::invalid_params(format!(
                "the cursor is not one this server issued for {tool} (it is malformed, was altered, or the server restarted since)"
            ))
            .with_hint(
                "Pass the next_cursor of the previous answer unchanged, or omit cursor to start from the first page.",
            ),
            Self::OtherQuery => ToolError::invalid_params(format!(
                "the cursor belongs to a different {tool} query"
            ))
            .with_hint(
                "Pass the same arguments as the call that returned the cursor (only limit may change), or omit cursor to start over.",
            ),
        }
    }
}

/// The secret that seals a server's cursors.
#[derive(Clone)]
pub struct CursorKey([u8; 32]);

impl std::fmt::Debug for CursorKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CursorKey(..)")
    }
}

impl CursorKey {
    /// A fresh key for this process: cursors do not outlive it.
    pub fn random() -> Self {
        let mut hasher = blake3::Hasher::new();
        hasher.update(uuid::Uuid::new_v4().as_bytes());
        hasher.update(uuid::Uuid::new_v4().as_bytes());
        Self(*hasher.finalize().as_bytes())
    }

    /// A key derived from material that outlives the process (e.g. a repository's identity),
    /// so that cursors survive restarts and are shared by every process serving it.
    pub fn derive(context: &str, material: &[u8]) -> Self {
        Self(blake3::derive_key(context, material))
    }

    /// A key for another purpose (`context`) derived from this one: whoever holds this key's
    /// secret gets the same subkey, and the subkey reveals nothing of the key.
    pub fn subkey(&self, context: &str) -> [u8; 32] {
        blake3::derive_key(context, &self.0)
    }

    /// A key from the secret stored in the file `path` (32 random bytes, made with mode 0600
    /// when missing or damaged), so that cursors survive restarts and are shared by every
    /// process that reads the same file, yet cannot be forged by anyone who cannot read it.
    /// When the secret can be neither read nor stored, a random key for this process.
    pub fn stored(context: &str, path: &std::path::Path) -> Self {
        match stored_secret(path) {
            Ok(secret) => Self::derive(context, &secret),
            Err(err) => {
                tracing::warn!(%err, path = %path.display(), "cursor secret not stored; cursors last as long as this process");
                Self::random()
            }
        }
    }

    /// Bind cursors to the query of `tool` described by `shape`: every argument that changes
    /// which items are listed or their order (not `limit`, not `cursor`).
    pub fn bind(&self, tool: &str, shape: &impl Serialize) -> Cursors {
        let shape = serde_json::to_vec(shape).unwrap_or_default();
        let mut hasher = blake3::Hasher::new_keyed(&self.0);
        hasher.update(b"query\0");
        hasher.update(&(tool.len() as u64).to_le_bytes());
        hasher.update(tool.as_bytes());
        hasher.update(&shape);
        let mut query = [0u8; QUERY_LEN];
        query.copy_from_slice(&hasher.finalize().as_bytes()[..QUERY_LEN]);
        Cursors {
            key: self.clone(),
            tool: tool.to_string(),
            query,
        }
    }
}

/// The 32 bytes of the secret file at `path`, made when missing or damaged. Several
/// processes may race to make it: a hard link publishes a complete file only if none exists,
/// and every process then reads the one that won.
fn stored_secret(path: &std::path::Path) -> std::io::Result<[u8; 32]> {
    if let Some(secret) = read_secret(path) {
        return Ok(secret);
    }
    let dir = path.parent().unwrap_or(std::path::Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut fresh = [0u8; 32];
    fresh[..16].copy_from_slice(uuid::Uuid::new_v4().as_bytes());
    fresh[16..].copy_from_slice(uuid::Uuid::new_v4().as_bytes());
    let tmp = dir.join(format!(".cursor-secret.{}", uuid::Uuid::new_v4().simple()));
    let damaged = path.exists();
    let stored = write_private(&tmp, &fresh).and_then(|()| {
        if damaged {
            // A secret of the wrong size is replaced whole.
            std::fs::rename(&tmp, path)
        } else {
            match std::fs::hard_link(&tmp, path) {
                Err(err) if err.kind() != std::io::ErrorKind::AlreadyExists => Err(err),
                _ => Ok(()),
            }
        }
    });
    let _ = std::fs::remove_file(&tmp);
    stored?;
    read_secret(path).ok_or_else(|| std::io::Error::other("the cursor secret cannot be read back"))
}

fn read_secret(path: &std::path::Path) -> Option<[u8; 32]> {
    std::fs::read(path).ok()?.try_into().ok()
}

/// Write `bytes` to a new file readable by its owner only.
fn write_private(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write as _;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o600);
    }
    let mut file = options.open(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

/// Cursors of one query: encode positions into cursors and decode them back.
#[derive(Debug, Clone)]
pub struct Cursors {
    key: CursorKey,
    tool: String,
    query: [u8; QUERY_LEN],
}

impl Cursors {
    /// Seal `position` into an opaque cursor.
    pub fn encode<P: Serialize>(&self, position: &P) -> String {
        // Serialising plain data cannot fail; an empty position only makes a cursor that
        // is refused later, never a wrong page.
        let body = serde_json::to_vec(position).unwrap_or_default();
        let mut bytes = Vec::with_capacity(1 + QUERY_LEN + body.len() + MAC_LEN);
        bytes.push(VERSION);
        bytes.extend_from_slice(&self.query);
        bytes.extend_from_slice(&body);
        let mac = blake3::keyed_hash(&self.key.0, &bytes);
        bytes.extend_from_slice(&mac.as_bytes()[..MAC_LEN]);
        URL_SAFE_NO_PAD.encode(bytes)
    }

    /// The position sealed in `cursor`, if this server made it for this query.
    pub fn decode<P: DeserializeOwned>(&self, cursor: &str) -> Result<P, CursorError> {
        if cursor.len() > MAX_CURSOR_LEN {
            return Err(CursorError::Forged);
        }
        let bytes = URL_SAFE_NO_PAD
            .decode(cursor.trim())
            .map_err(|_| CursorError::Forged)?;
        if bytes.len() < 1 + QUERY_LEN + MAC_LEN {
            return Err(CursorError::Forged);
        }
        let (sealed, mac) = bytes.split_at(bytes.len() - MAC_LEN);
        let expected = blake3::keyed_hash(&self.key.0, sealed);
        // Constant-time comparison of the truncated hash.
        let diff = expected.as_bytes()[..MAC_LEN]
            .iter()
            .zip(mac)
            .fold(0u8, |acc, (a, b)| acc | (a ^ b));
        if diff != 0 || sealed[0] != VERSION {
            return Err(CursorError::Forged);
        }
        if sealed[1..1 + QUERY_LEN] != self.query {
            return Err(CursorError::OtherQuery);
        }
        serde_json::from_slice(&sealed[1 + QUERY_LEN..]).map_err(|_| CursorError::Forged)
    }

    /// [`Self::decode`] of an optional cursor, refusals as `invalid_params`.
    pub fn start<P: DeserializeOwned>(&self, cursor: Option<&str>) -> Result<Option<P>, ToolError> {
        cursor
            .map(|c| self.decode(c).map_err(|e| e.into_tool_error(&self.tool)))
            .transpose()
    }
}

/// The page size a list tool accepts: a default and a maximum.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit {
    pub default: usize,
    pub max: usize,
}

impl Limit {
    pub const fn new(default: usize, max: usize) -> Self {
        Self { default, max }
    }

    /// The page size for a requested `limit`; outside `1..=max` is `invalid_params`.
    pub fn resolve(self, requested: Option<u64>) -> Result<usize, ToolError> {
        match requested {
            None => Ok(self.default),
            Some(n) if n >= 1 && n <= self.max as u64 => Ok(n as usize),
            Some(n) => Err(ToolError::invalid_params(format!(
                "limit {n} is out of range: give 1 to {}",
                self.max
            ))
            .with_hint(format!(
                "Omit limit for pages of {}, or page with next_cursor.",
                self.default
            ))),
        }
    }
}

/// Page through `items` (already in list order) by offset: the usual case of a list that is
/// computed whole. Returns the page and the `page` object.
pub fn page_by_offset<T: Clone>(
    items: &[T],
    cursors: &Cursors,
    cursor: Option<&str>,
    limit: usize,
) -> Result<(Vec<T>, Page), ToolError> {
    let offset: usize = cursors.start(cursor)?.unwrap_or(0);
    let start = offset.min(items.len());
    let end = start.saturating_add(limit).min(items.len());
    let next = (end < items.len()).then(|| cursors.encode(&end));
    Ok((
        items[start..end].to_vec(),
        Page::new(items.len() as u64, next),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn cursors_round_trip_and_refuse_forgeries_and_other_queries() {
        let key = CursorKey::random();
        let open = key.bind("list", &json!({"status": "open"}));
        let cursor = open.encode(&("b", 42));
        assert_eq!(open.decode::<(String, u32)>(&cursor), Ok(("b".into(), 42)));
        let closed = key.bind("list", &json!({"status": "closed"}));
        assert_eq!(
            closed.decode::<(String, u32)>(&cursor),
            Err(CursorError::OtherQuery)
        );
        let other_tool = key.bind("search", &json!({"status": "open"}));
        assert_eq!(
            other_tool.decode::<(String, u32)>(&cursor),
            Err(CursorError::OtherQuery)
        );
        let other_key = CursorKey::random().bind("list", &json!({"status": "open"}));
        assert_eq!(
            other_key.decode::<(String, u32)>(&cursor),
            Err(CursorError::Forged)
        );
        for bad in ["", "x", "not a cursor!", &"A".repeat(5000)] {
            assert_eq!(open.decode::<u32>(bad), Err(CursorError::Forged), "{bad}");
        }
        let mut chars: Vec<char> = cursor.chars().collect();
        chars[3] = if chars[3] == 'A' { 'B' } else { 'A' };
        let altered: String = chars.into_iter().collect();
        assert_eq!(
            open.decode::<(String, u32)>(&altered),
            Err(CursorError::Forged)
        );
    }

    #[test]
    fn long_positions_round_trip_and_only_over_long_cursors_are_refused() {
        let cursors = CursorKey::random().bind("list", &());
        // Two 500-character titles of 4-byte characters: a cursor of ~5,400 characters.
        let position = ("🦀".repeat(500), "🦀".repeat(500));
        let cursor = cursors.encode(&position);
        assert!(cursor.len() > 4096, "{}", cursor.len());
        assert_eq!(cursors.decode(&cursor), Ok(position));
        let over = "A".repeat(MAX_CURSOR_LEN + 4);
        assert_eq!(cursors.decode::<u32>(&over), Err(CursorError::Forged));
    }

    #[test]
    fn derived_keys_are_stable() {
        let a = CursorKey::derive("test cursors", b"repo");
        let b = CursorKey::derive("test cursors", b"repo");
        let cursor = a.bind("t", &()).encode(&7u32);
        assert_eq!(b.bind("t", &()).decode::<u32>(&cursor), Ok(7));
        let c = CursorKey::derive("test cursors", b"other repo");
        assert_eq!(
            c.bind("t", &()).decode::<u32>(&cursor),
            Err(CursorError::Forged)
        );
    }

    #[test]
    fn stored_keys_are_private_shared_and_repaired() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub").join("cursor.key");
        let a = CursorKey::stored("test", &path);
        let cursor = a.bind("t", &()).encode(&7u32);
        let b = CursorKey::stored("test", &path);
        assert_eq!(b.bind("t", &()).decode::<u32>(&cursor), Ok(7));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        std::fs::write(&path, b"short").unwrap();
        let c = CursorKey::stored("test", &path);
        assert_eq!(
            std::fs::read(&path).unwrap().len(),
            32,
            "a damaged secret is replaced"
        );
        assert_eq!(
            c.bind("t", &()).decode::<u32>(&cursor),
            Err(CursorError::Forged)
        );
    }

    #[test]
    fn refusals_are_invalid_params_with_hints() {
        let key = CursorKey::random();
        let err = key
            .bind("list_things", &())
            .start::<u32>(Some("nope"))
            .unwrap_err();
        assert_eq!(err.code, crate::codes::INVALID_PARAMS);
        assert!(err.message.contains("list_things"), "{}", err.message);
        assert!(err.hint.unwrap().contains("next_cursor"));
    }

    #[test]
    fn offset_pages_walk_the_whole_list() {
        let key = CursorKey::random();
        let cursors = key.bind("t", &());
        let items: Vec<u32> = (0..7).collect();
        let mut seen = Vec::new();
        let mut cursor = None;
        loop {
            let (page, info) = page_by_offset(&items, &cursors, cursor.as_deref(), 3).unwrap();
            assert_eq!(info.total, 7);
            seen.extend(page);
            match info.next_cursor {
                Some(next) => cursor = Some(next),
                None => break,
            }
        }
        assert_eq!(seen, items);
        let (empty, info) = page_by_offset::<u32>(&[], &cursors, None, 3).unwrap();
        assert!(empty.is_empty());
        assert_eq!(info, Page::new(0, None));
    }

    #[test]
    fn limits_are_checked() {
        let limit = Limit::new(20, 100);
        assert_eq!(limit.resolve(None), Ok(20));
        assert_eq!(limit.resolve(Some(100)), Ok(100));
        assert!(limit.resolve(Some(0)).is_err());
        assert!(limit.resolve(Some(101)).is_err());
    }

    #[test]
    fn page_omits_what_is_implied() {
        assert_eq!(
            serde_json::to_value(Page::new(3, None)).unwrap(),
            json!({"total": 3})
        );
        assert_eq!(
            serde_json::to_value(Page::at_least(10000, Some("c".into()))).unwrap(),
            json!({"next_cursor": "c", "total": 10000, "total_exact": false})
        );
    }
}
