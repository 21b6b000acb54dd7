//! Cursors: opaque, signed positions in a listing. A cursor carries the sort values of the
//! last item of its page, so the next page resumes after that item wherever new entities
//! were inserted meanwhile. It also carries a fingerprint of the query, so it cannot be
//! replayed against another filter or order, and a keyed hash, so it cannot be forged.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};

use super::sort::SortValue;

/// Length of the keyed hash kept in a cursor, in bytes.
const MAC_LEN: usize = 16;
const VERSION: u8 = 1;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CursorError {
    #[error("the cursor is not one this server issued (it is malformed or was altered)")]
    Forged,
    #[error(
        "the cursor belongs to a different query: pass the same entity, filter, sort and includeClosed as the call that returned it, or drop the cursor to start over"
    )]
    OtherQuery,
}

#[derive(Debug, Serialize, Deserialize)]
struct Payload {
    v: u8,
    /// Fingerprint of the query.
    q: String,
    /// Sort values of the last item returned.
    k: Vec<SortValue>,
}

/// A decoded cursor: the position after which the next page starts.
#[derive(Debug, Clone, PartialEq)]
pub struct Cursor {
    pub after: Vec<SortValue>,
}

/// A short stable digest of everything that shapes a listing.
pub fn fingerprint(parts: &[&str]) -> String {
    let mut hasher = blake3::Hasher::new();
    for part in parts {
        hasher.update(&(part.len() as u64).to_le_bytes());
        hasher.update(part.as_bytes());
    }
    hasher.finalize().to_hex()[..16].to_string()
}

impl Cursor {
    pub fn encode(after: Vec<SortValue>, query: &str, key: &[u8; 32]) -> String {
        let payload = Payload {
            v: VERSION,
            q: query.to_string(),
            k: after,
        };
        // Serialising plain data cannot fail; an empty payload would only make a cursor
        // that is refused later, never a wrong page.
        let json = serde_json::to_vec(&payload).unwrap_or_default();
        let mac = blake3::keyed_hash(key, &json);
        let mut bytes = json;
        bytes.extend_from_slice(&mac.as_bytes()[..MAC_LEN]);
        URL_SAFE_NO_PAD.encode(bytes)
    }

    pub fn decode(text: &str, query: &str, key: &[u8; 32]) -> Result<Cursor, CursorError> {
        let bytes = URL_SAFE_NO_PAD
            .decode(text.trim())
            .map_err(|_| CursorError::Forged)?;
        if bytes.len() <= MAC_LEN {
            return Err(CursorError::Forged);
        }
        let (json, mac) = bytes.split_at(bytes.len() - MAC_LEN);
        let expected = blake3::keyed_hash(key, json);
        // Constant-time comparison of the truncated hash.
        let diff = expected.as_bytes()[..MAC_LEN]
            .iter()
            .zip(mac)
            .fold(0u8, |acc, (a, b)| acc | (a ^ b));
        if diff != 0 {
            return Err(CursorError::Forged);
        }
        let payload: Payload = serde_json::from_slice(json).map_err(|_| CursorError::Forged)?;
        if payload.v != VERSION {
            return Err(CursorError::Forged);
        }
        if payload.q != query {
            return Err(CursorError::OtherQuery);
        }
        Ok(Cursor { after: payload.k })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_refuses_forgeries_and_other_queries() {
        let key = [7u8; 32];
        let q = fingerprint(&[
            "issue",
            "status == \"open\"",
            "updated:desc,id:asc",
            "false",
        ]);
        let after = vec![SortValue::Number(3), SortValue::Text("abc".into())];
        let text = Cursor::encode(after.clone(), &q, &key);
        assert_eq!(Cursor::decode(&text, &q, &key).unwrap().after, after);
        let other = fingerprint(&["issue", "", "updated:desc,id:asc", "false"]);
        assert_eq!(
            Cursor::decode(&text, &other, &key),
            Err(CursorError::OtherQuery)
        );
        assert_eq!(
            Cursor::decode(&text, &q, &[8u8; 32]),
            Err(CursorError::Forged)
        );
        assert_eq!(
            Cursor::decode("not a cursor!", &q, &key),
            Err(CursorError::Forged)
        );
        assert_eq!(Cursor::decode("", &q, &key), Err(CursorError::Forged));
        // Flip one character of the payload.
        let mut chars: Vec<char> = text.chars().collect();
        chars[5] = if chars[5] == 'A' { 'B' } else { 'A' };
        let altered: String = chars.into_iter().collect();
        assert_eq!(Cursor::decode(&altered, &q, &key), Err(CursorError::Forged));
        // The fingerprint separates parts unambiguously.
        assert_ne!(fingerprint(&["ab", "c"]), fingerprint(&["a", "bc"]));
    }
}
