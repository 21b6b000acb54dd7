//! The query side of `list`: the filter language, sort keys and cursors.
//!
//! Every field a filter or a sort can name is a [`Field`]; a listed entity exposes its values
//! through [`Fields`], so the language does not depend on how entities are stored.

pub mod cursor;
pub mod filter;
pub mod sort;

use std::collections::BTreeSet;

use chrono::{DateTime, Utc};

pub use filter::{Filter, FilterError};
pub use sort::{SortError, SortKey, SortSpec, SortValue};

/// A field of a listed entity, as filters and sorts name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Field {
    Id,
    Title,
    Description,
    Status,
    Labels,
    Milestone,
    Author,
    Created,
    Updated,
    CommentCount,
    OpenIssues,
    HasComments,
    HasMilestone,
    /// Tasks only: the workflow state (`""` when none).
    State,
    /// Tasks only: the state's kind (`done`, `in_progress`, …; `""` when none).
    StateKind,
    /// Tasks only: who it is assigned to.
    Assignees,
    /// Tasks only: the ids of its parent tasks.
    Parents,
    /// Tasks only: the ids of its child tasks.
    Children,
}

/// Which fields the entities of a listing have: issues and milestones share one set,
/// upstream git-mile's tasks have theirs. Filters and sorts accept, and their errors name,
/// the fields of their vocabulary only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Vocabulary {
    #[default]
    Entities,
    Tasks,
}

impl Vocabulary {
    pub fn fields(self) -> &'static [Field] {
        match self {
            Vocabulary::Entities => &Field::ALL,
            Vocabulary::Tasks => &Field::TASK,
        }
    }

    pub fn parse(self, name: &str) -> Option<Field> {
        self.fields().iter().copied().find(|f| f.name() == name)
    }

    /// The list of field names, for error messages.
    pub fn names(self) -> String {
        self.fields()
            .iter()
            .map(|f| f.name())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// What kind of values a field holds, which decides the operators and literals it accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldType {
    /// Free text: `==`, `!=`, ordering, `in`, `contains` (case-insensitive substring).
    Text,
    /// `open` or `closed`: `==`, `!=`, `in`.
    Status,
    /// A set of labels (or assignees, or task ids): `==`/`contains` (has the label), `!=`
    /// (has not), `in` (has any).
    Labels,
    /// An issue's milestone, matched by id or title; `null` when it has none.
    Milestone,
    /// A timestamp: compared with dates (`2026-01-31`) or RFC 3339 times.
    Date,
    /// A count; `null` where it does not apply (`open_issues` of an issue).
    Number,
    /// `true` or `false`.
    Bool,
}

impl Field {
    /// The fields of issues and milestones.
    pub const ALL: [Field; 13] = [
        Field::Id,
        Field::Title,
        Field::Description,
        Field::Status,
        Field::Labels,
        Field::Milestone,
        Field::Author,
        Field::Created,
        Field::Updated,
        Field::CommentCount,
        Field::OpenIssues,
        Field::HasComments,
        Field::HasMilestone,
    ];

    /// The fields of tasks (upstream git-mile's, read-only).
    pub const TASK: [Field; 15] = [
        Field::Id,
        Field::Title,
        Field::Description,
        Field::Status,
        Field::State,
        Field::StateKind,
        Field::Labels,
        Field::Assignees,
        Field::Parents,
        Field::Children,
        Field::Author,
        Field::Created,
        Field::Updated,
        Field::CommentCount,
        Field::HasComments,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Field::Id => "id",
            Field::Title => "title",
            Field::Description => "description",
            Field::Status => "status",
            Field::Labels => "labels",
            Field::Milestone => "milestone",
            Field::Author => "author",
            Field::Created => "created",
            Field::Updated => "updated",
            Field::CommentCount => "comment_count",
            Field::OpenIssues => "open_issues",
            Field::HasComments => "has_comments",
            Field::HasMilestone => "has_milestone",
            Field::State => "state",
            Field::StateKind => "state_kind",
            Field::Assignees => "assignees",
            Field::Parents => "parents",
            Field::Children => "children",
        }
    }

    /// The issue and milestone field named `name`.
    pub fn parse(name: &str) -> Option<Field> {
        Vocabulary::Entities.parse(name)
    }

    pub fn field_type(self) -> FieldType {
        match self {
            Field::Id
            | Field::Title
            | Field::Description
            | Field::Author
            | Field::State
            | Field::StateKind => FieldType::Text,
            Field::Status => FieldType::Status,
            Field::Labels | Field::Assignees | Field::Parents | Field::Children => {
                FieldType::Labels
            }
            Field::Milestone => FieldType::Milestone,
            Field::Created | Field::Updated => FieldType::Date,
            Field::CommentCount | Field::OpenIssues => FieldType::Number,
            Field::HasComments | Field::HasMilestone => FieldType::Bool,
        }
    }

    /// The list of issue and milestone field names, for error messages.
    pub fn names() -> String {
        Vocabulary::Entities.names()
    }
}

/// The value of one field of one entity.
#[derive(Debug, Clone, PartialEq)]
pub enum Value<'a> {
    /// `Text` and `Status` fields (status is `"open"` or `"closed"`).
    Text(&'a str),
    Labels(&'a BTreeSet<String>),
    /// The milestone's id and title; both `None` when the issue has none (and for milestones).
    Milestone {
        id: Option<&'a str>,
        title: Option<&'a str>,
    },
    Date(DateTime<Utc>),
    /// `None` where the count does not apply.
    Number(Option<u64>),
    Bool(bool),
}

/// An entity as filters and sorts see it.
pub trait Fields {
    fn value(&self, field: Field) -> Value<'_>;

    /// The text of `field` lowercased, when the row keeps it so (then a filter's `contains`
    /// lowercases nothing); `None` otherwise.
    fn lowercase(&self, _field: Field) -> Option<&str> {
        None
    }
}
