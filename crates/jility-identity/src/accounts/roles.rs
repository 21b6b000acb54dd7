//! A member's role in a workspace, and what it allows: the API scopes a person acts with,
//! and whether they manage the workspace's members.

use std::fmt;
use std::str::FromStr;

use mcp_common_core::ToolError;
use serde::{Serialize, Serializer};

use jility_core::errors;
use jility_core::token::{Scope, ScopeSet};

/// A member's role, from most to least allowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Role {
    /// Everything, including making and unmaking owners. A workspace always has one.
    Owner,
    /// Everything but owners: manages members (not owners), invites, tokens.
    Admin,
    /// Reads, writes and comments on tickets.
    Member,
    /// Reads tickets.
    Viewer,
}

impl Role {
    pub const ALL: [Role; 4] = [Role::Owner, Role::Admin, Role::Member, Role::Viewer];

    pub const fn as_str(self) -> &'static str {
        match self {
            Role::Owner => "owner",
            Role::Admin => "admin",
            Role::Member => "member",
            Role::Viewer => "viewer",
        }
    }

    /// The API scopes a person with this role acts with (on the web, and at most in the
    /// tokens they mint): owner and admin `full_access`; member `tickets:read`,
    /// `tickets:write`, `comments:write`; viewer `tickets:read`.
    pub fn scopes(self) -> ScopeSet {
        match self {
            Role::Owner | Role::Admin => ScopeSet::full_access(),
            Role::Member => ScopeSet::of([
                Scope::TicketsRead,
                Scope::TicketsWrite,
                Scope::CommentsWrite,
            ]),
            Role::Viewer => ScopeSet::of([Scope::TicketsRead]),
        }
    }

    /// Whether this role manages the workspace's members and invites (owner, admin).
    pub fn manages_members(self) -> bool {
        matches!(self, Role::Owner | Role::Admin)
    }

    /// Whether this role changes tickets (all but viewer).
    pub fn can_write(self) -> bool {
        !matches!(self, Role::Viewer)
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Role {
    type Err = ToolError;

    fn from_str(text: &str) -> Result<Self, ToolError> {
        let text = text.trim();
        Role::ALL
            .into_iter()
            .find(|role| role.as_str().eq_ignore_ascii_case(text))
            .ok_or_else(|| {
                ToolError::new(
                    errors::INVALID_INPUT,
                    format!("'{}' is not a role", mcp_common_core::text::clip(text, 40)),
                )
                .with_hint("A role is one of owner, admin, member, viewer.")
            })
    }
}

impl Serialize for Role {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}
