//! The format of cloud mode's credentials, shared by the server, the bridge and the CLI:
//! API tokens, their scopes, and who a request comes from. Storing tokens is the cloud
//! crate's (`jility_identity::auth`).
//!
//! **Tokens.** A token is `jil_live_` followed by 40 characters of `[A-Za-z0-9]` drawn from
//! the operating system's CSPRNG (about 238 bits). It is shown once, when minted. At rest
//! only its BLAKE3 hash ([`PlainToken::hash`]) and a display prefix (`jil_live_AbCd`, enough
//! to tell tokens apart in a listing) are kept. The plaintext travels in [`PlainToken`],
//! whose `Debug` shows only the prefix, so no log line or error message carries a token.
//!
//! **Scopes.** `tickets:read`, `tickets:write`, `tickets:delete`, `comments:write` and
//! `full_access`; `full_access` allows everything, the others only themselves
//! ([`ScopeSet::allows`]); a missing scope is [`errors::PERMISSION_DENIED`] naming the scope
//! ([`ScopeSet::require`]).

use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;

use chrono::{DateTime, Utc};
use mcp_common_core::ToolError;
use serde::{Serialize, Serializer};

use crate::errors;

/// Every token starts with this.
pub const TOKEN_PREFIX: &str = "jil_live_";

/// Random characters of a minted token.
pub const TOKEN_RANDOM_LEN: usize = 40;

/// Random characters a token presented for authentication may have: at least 32 (the
/// format's promise), at most a bound that keeps junk from being hashed at length.
const ACCEPTED_RANDOM_LEN: std::ops::RangeInclusive<usize> = 32..=128;

/// Random characters kept in the display prefix.
const DISPLAY_RANDOM_LEN: usize = 4;

/// The alphabet of the random part.
const ALPHABET: &[u8; 62] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/// What a token may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Scope {
    TicketsRead,
    TicketsWrite,
    TicketsDelete,
    CommentsWrite,
    FullAccess,
}

impl Scope {
    /// Every scope, in display order.
    pub const ALL: [Scope; 5] = [
        Scope::TicketsRead,
        Scope::TicketsWrite,
        Scope::TicketsDelete,
        Scope::CommentsWrite,
        Scope::FullAccess,
    ];

    /// The wire name, e.g. `tickets:read`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Scope::TicketsRead => "tickets:read",
            Scope::TicketsWrite => "tickets:write",
            Scope::TicketsDelete => "tickets:delete",
            Scope::CommentsWrite => "comments:write",
            Scope::FullAccess => "full_access",
        }
    }

    /// Whether holding this scope allows what `needed` guards.
    pub fn implies(self, needed: Scope) -> bool {
        self == Scope::FullAccess || self == needed
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Scope {
    type Err = ToolError;

    fn from_str(text: &str) -> Result<Self, ToolError> {
        let text = text.trim();
        Scope::ALL
            .into_iter()
            .find(|scope| scope.as_str() == text)
            .ok_or_else(|| {
                ToolError::new(errors::INVALID_INPUT, format!("'{text}' is not a scope"))
                    .with_hint(format!("The scopes are {}.", ScopeSet::all_names()))
            })
    }
}

impl Serialize for Scope {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// The scopes of a token: never empty once made by [`ScopeSet::parse`] or [`ScopeSet::new`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScopeSet(BTreeSet<Scope>);

impl ScopeSet {
    /// The set of `scopes` (duplicates collapse); an empty set is an error.
    pub fn new(scopes: impl IntoIterator<Item = Scope>) -> Result<Self, ToolError> {
        let set: BTreeSet<Scope> = scopes.into_iter().collect();
        if set.is_empty() {
            return Err(
                ToolError::new(errors::INVALID_INPUT, "A token needs at least one scope")
                    .with_hint(format!("The scopes are {}.", Self::all_names())),
            );
        }
        Ok(Self(set))
    }

    /// The set of `scopes`, at least one (checked when compiled).
    pub fn of<const N: usize>(scopes: [Scope; N]) -> Self {
        const { assert!(N > 0, "a scope set is never empty") };
        Self(scopes.into_iter().collect())
    }

    /// `full_access` alone.
    pub fn full_access() -> Self {
        Self(BTreeSet::from([Scope::FullAccess]))
    }

    /// A comma-separated list, e.g. `tickets:read,comments:write`.
    pub fn parse(text: &str) -> Result<Self, ToolError> {
        Self::new(
            text.split(',')
                .filter(|part| !part.trim().is_empty())
                .map(Scope::from_str)
                .collect::<Result<Vec<_>, _>>()?,
        )
    }

    /// Whether these scopes allow what `needed` guards: `full_access` allows everything.
    pub fn allows(&self, needed: Scope) -> bool {
        self.0.iter().any(|held| held.implies(needed))
    }

    /// [`Self::allows`], or a `permission_denied` error naming the missing scope.
    pub fn require(&self, needed: Scope) -> Result<(), ToolError> {
        if self.allows(needed) {
            return Ok(());
        }
        let or_full = if needed == Scope::FullAccess {
            ""
        } else {
            " (or `full_access`)"
        };
        Err(ToolError::new(
            errors::PERMISSION_DENIED,
            format!("This token lacks the `{needed}` scope"),
        )
        .with_hint(format!(
            "The token has {self}. Use a token with `{needed}`{or_full}; an admin can create one with `jility auth create-token --scopes {needed}`."
        )))
    }

    pub fn contains(&self, scope: Scope) -> bool {
        self.0.contains(&scope)
    }

    pub fn iter(&self) -> impl Iterator<Item = Scope> + '_ {
        self.0.iter().copied()
    }

    /// The wire names, for storage.
    pub fn names(&self) -> Vec<String> {
        self.0.iter().map(|s| s.as_str().to_string()).collect()
    }

    fn all_names() -> String {
        Scope::ALL
            .iter()
            .map(|s| format!("`{s}`"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl fmt::Display for ScopeSet {
    /// `tickets:read,comments:write`: the form [`ScopeSet::parse`] reads.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.0.iter().map(|s| s.as_str()).collect();
        f.write_str(&names.join(","))
    }
}

impl Serialize for ScopeSet {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter())
    }
}

/// A token in plaintext. Its `Debug` shows the display prefix only, so it cannot leak into
/// a log through `{:?}`; read it with [`PlainToken::expose`].
#[derive(Clone, PartialEq, Eq)]
pub struct PlainToken(String);

impl PlainToken {
    /// A new token from the OS CSPRNG.
    pub fn mint() -> Result<Self, ToolError> {
        let mut token = String::with_capacity(TOKEN_PREFIX.len() + TOKEN_RANDOM_LEN);
        token.push_str(TOKEN_PREFIX);
        let mut drawn = 0;
        let mut bytes = [0u8; 64];
        while drawn < TOKEN_RANDOM_LEN {
            getrandom::fill(&mut bytes).map_err(|e| {
                ToolError::internal(format!("The system's random generator failed: {e}"))
            })?;
            // Rejection sampling: 248 = 4 × 62, so every accepted byte maps uniformly.
            for byte in bytes {
                if drawn == TOKEN_RANDOM_LEN {
                    break;
                }
                if usize::from(byte) < 4 * ALPHABET.len() {
                    token.push(char::from(ALPHABET[usize::from(byte) % ALPHABET.len()]));
                    drawn += 1;
                }
            }
        }
        Ok(Self(token))
    }

    /// A token as given by a client (not checked: see [`is_well_formed`]).
    pub fn new(token: impl Into<String>) -> Self {
        Self(token.into().trim().to_string())
    }

    /// The token itself: to show once to whoever minted it, or to send to the API.
    pub fn expose(&self) -> &str {
        &self.0
    }

    pub fn into_string(self) -> String {
        self.0
    }

    /// `jil_live_AbCd`: the part kept at rest and shown in listings.
    pub fn display_prefix(&self) -> String {
        display_prefix(&self.0)
    }

    /// The BLAKE3 hash kept at rest.
    pub fn hash(&self) -> blake3::Hash {
        blake3::hash(self.0.as_bytes())
    }
}

impl fmt::Debug for PlainToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PlainToken({}…)", self.display_prefix())
    }
}

/// Whether `token` has the format of a token: the prefix, then 32 to 128 letters and digits.
pub fn is_well_formed(token: &str) -> bool {
    token.strip_prefix(TOKEN_PREFIX).is_some_and(|random| {
        ACCEPTED_RANDOM_LEN.contains(&random.len())
            && random.bytes().all(|b| b.is_ascii_alphanumeric())
    })
}

fn display_prefix(token: &str) -> String {
    let random = token.strip_prefix(TOKEN_PREFIX).unwrap_or("");
    let shown: String = random.chars().take(DISPLAY_RANDOM_LEN).collect();
    format!("{TOKEN_PREFIX}{shown}")
}

/// A token as stored: everything but its hash (which never leaves the database) and its
/// plaintext (which was never stored).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TokenRecord {
    pub id: i64,
    pub workspace_id: i64,
    pub name: String,
    pub scopes: ScopeSet,
    /// `jil_live_AbCd`: the first characters of the token, to tell tokens apart.
    pub display_prefix: String,
    pub created_by: String,
    /// RFC 3339, UTC.
    pub created_at: String,
    pub expires_at: Option<String>,
    pub revoked_at: Option<String>,
    pub last_used_at: Option<String>,
}

impl TokenRecord {
    /// Whether the token authenticates at `now` (neither revoked nor expired).
    pub fn is_active(&self, now: DateTime<Utc>) -> bool {
        self.revoked_at.is_none()
            && self
                .expires_at
                .as_deref()
                .and_then(parse_time)
                .is_none_or(|at| at > now)
    }
}

/// A token freshly minted: its plaintext, shown once, and its record.
#[derive(Debug, Clone)]
pub struct MintedToken {
    pub token: PlainToken,
    pub record: TokenRecord,
}

/// What to mint.
#[derive(Debug, Clone)]
pub struct NewToken {
    pub name: String,
    pub scopes: ScopeSet,
    /// When it stops working; `None` never. Must be in the future.
    pub expires_at: Option<DateTime<Utc>>,
    /// Who minted it (an actor name, or `token:ID` for a token minting another).
    pub created_by: String,
}

/// Who a request comes from: a token of a workspace, with its scopes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Principal {
    pub workspace_id: i64,
    pub workspace: String,
    pub token_id: i64,
    pub token_name: String,
    pub scopes: ScopeSet,
    /// When the token stops working (`None`: never).
    #[serde(skip)]
    pub expires_at: Option<DateTime<Utc>>,
    /// The resource an OAuth access token is bound to (RFC 8707: this server's `…/mcp`);
    /// `None` for an API token, which works wherever its scopes do.
    #[serde(skip)]
    pub resource: Option<String>,
    /// The OAuth grant an access token belongs to (its refreshed tokens share it).
    #[serde(skip)]
    pub grant_id: Option<i64>,
}

impl Principal {
    pub fn allows(&self, needed: Scope) -> bool {
        self.scopes.allows(needed)
    }

    /// A `permission_denied` error naming `needed` unless the token has it.
    pub fn require(&self, needed: Scope) -> Result<(), ToolError> {
        self.scopes.require(needed)
    }
}

/// Which token to revoke: its id, or the token itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenRef {
    Id(i64),
    Token(PlainToken),
}

impl FromStr for TokenRef {
    type Err = ToolError;

    /// A token (`jil_live_…`) or a numeric id.
    fn from_str(text: &str) -> Result<Self, ToolError> {
        let text = text.trim();
        if text.starts_with(TOKEN_PREFIX) {
            return Ok(TokenRef::Token(PlainToken::new(text)));
        }
        text.parse().map(TokenRef::Id).map_err(|_| {
            ToolError::new(
                errors::INVALID_INPUT,
                "Give a token's id (a number) or the token itself (jil_live_…)",
            )
            .with_hint("List the workspace's tokens and their ids with `jility auth list-tokens`.")
        })
    }
}

/// A stored time (RFC 3339) read back.
pub fn parse_time(text: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(text)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_parse_display_and_imply() {
        for scope in Scope::ALL {
            assert_eq!(scope.as_str().parse::<Scope>().unwrap(), scope);
            assert_eq!(scope.to_string(), scope.as_str());
        }
        assert!("tickets:admin".parse::<Scope>().is_err());
        let set = ScopeSet::parse("tickets:read, comments:write,tickets:read").unwrap();
        assert_eq!(set.to_string(), "tickets:read,comments:write");
        assert!(set.allows(Scope::CommentsWrite));
        assert!(!set.allows(Scope::TicketsWrite));
        assert!(ScopeSet::parse(" , ").is_err());
        let full = ScopeSet::full_access();
        assert!(Scope::ALL.iter().all(|s| full.allows(*s)));
        let err = set.require(Scope::TicketsDelete).unwrap_err();
        assert_eq!(err.code, errors::PERMISSION_DENIED);
        assert!(err.message.contains("tickets:delete"));
    }

    #[test]
    fn minted_tokens_are_well_formed_and_redacted_in_debug() {
        let token = PlainToken::mint().unwrap();
        assert!(is_well_formed(token.expose()));
        assert_eq!(token.expose().len(), TOKEN_PREFIX.len() + TOKEN_RANDOM_LEN);
        let debug = format!("{token:?}");
        assert!(!debug.contains(token.expose()));
        assert!(debug.contains(&token.display_prefix()));
        assert_eq!(token.display_prefix().len(), TOKEN_PREFIX.len() + 4);
        assert!(!is_well_formed("jil_live_short"));
        assert!(!is_well_formed(&format!("jil_test_{}", "a".repeat(40))));
        assert!(!is_well_formed(&format!("jil_live_{}!", "a".repeat(40))));
    }

    #[test]
    fn token_refs_parse() {
        assert_eq!("42".parse::<TokenRef>().unwrap(), TokenRef::Id(42));
        assert!(matches!(
            "jil_live_abc".parse::<TokenRef>().unwrap(),
            TokenRef::Token(_)
        ));
        assert!("bogus".parse::<TokenRef>().is_err());
    }
}
