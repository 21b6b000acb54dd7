//! The domain model: milestones and issues as their event histories make them.

use std::collections::BTreeSet;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// What an entity is; also the middle segment of its ref, `refs/git-mile/<kind>/<id>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Milestone,
    Issue,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Milestone => "milestone",
            Self::Issue => "issue",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Open,
    Closed,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Open => "open",
            Self::Closed => "closed",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Comment {
    pub id: String,
    pub author: String,
    pub body: String,
    pub ts: DateTime<Utc>,
}

/// A milestone or an issue, folded from its events.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entity {
    pub kind: Kind,
    /// UUID.
    pub id: String,
    pub title: String,
    pub description: String,
    pub status: Status,
    pub labels: BTreeSet<String>,
    /// For an issue: the id of the milestone it is attached to.
    pub milestone: Option<String>,
    /// Who created it (git identity name).
    pub author: String,
    pub created: DateTime<Utc>,
    /// Time of the latest event.
    pub updated: DateTime<Utc>,
    pub comments: Vec<Comment>,
}
