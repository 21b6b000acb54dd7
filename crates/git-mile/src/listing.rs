//! Running a listing: filter, order, resume after a cursor, cut a page.

use std::cmp::Ordering;
use std::sync::Arc;

use mcp_common::page::{CursorError, CursorKey, Cursors};

use crate::catalog::{Catalog, Row, Snapshot};
use crate::model::{Kind, Status};
use crate::query::cursor::{Position, Shape, refusal_message};
use crate::query::{Field, Fields, Filter, FilterError, SortError, SortSpec, Vocabulary};
use crate::store::StoreResult;
use crate::task::{TaskRow, TaskSet};
use crate::task_write::project::Project;
use crate::views::{ListItem, ListResponse};

pub const DEFAULT_LIMIT: u64 = 20;
pub const MAX_LIMIT: u64 = 200;
/// How many unreadable entities a page names at most.
pub const MAX_UNREADABLE: usize = 20;

/// A listing as the tool and the CLI ask for it.
#[derive(Debug, Clone, Default)]
pub struct ListRequest {
    pub filter: Option<String>,
    pub sort: Vec<String>,
    /// As given: any JSON number is accepted here and validated by [`list`].
    pub limit: Option<serde_json::Number>,
    pub cursor: Option<String>,
    pub include_closed: bool,
}

/// A request that fails validation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ListError {
    #[error("{0}")]
    Filter(#[from] FilterError),
    #[error("{0}")]
    Sort(#[from] SortError),
    #[error("{}", refusal_message(*.0))]
    Cursor(CursorError),
    #[error("limit must be an integer between 1 and {MAX_LIMIT}, got {0}")]
    Limit(String),
}

/// What a listing lists: issues or milestones (the catalog's), or upstream's tasks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    Entity(Kind),
    Task,
}

impl Target {
    pub fn as_str(self) -> &'static str {
        match self {
            Target::Entity(kind) => kind.as_str(),
            Target::Task => "task",
        }
    }

    fn vocabulary(self) -> Vocabulary {
        match self {
            Target::Entity(_) => Vocabulary::Entities,
            Target::Task => Vocabulary::Tasks,
        }
    }
}

/// A page, and what it was read from (whose ids the CLI makes its short prefixes among).
pub struct Listed {
    pub page: ListResponse,
    pub snapshot: Arc<Snapshot>,
    pub tasks: TaskSet,
}

/// A validated listing, ready to run against any snapshot: its arguments are checked before
/// the repository is read, so a bad argument is reported as such wherever the server runs.
#[derive(Debug)]
pub struct Plan {
    target: Target,
    limit: usize,
    filter: Option<Filter>,
    sort: SortSpec,
    hide_closed: bool,
    /// The cursors of this query: the next page's is made with them.
    cursors: Cursors,
    after: Option<Position>,
}

impl Plan {
    /// Check `request` for `kind`; `key` seals and checks cursors.
    pub fn new(kind: Kind, request: &ListRequest, key: &CursorKey) -> Result<Self, ListError> {
        Self::of(Target::Entity(kind), request, key)
    }

    /// Check `request` for `target`; `key` seals and checks cursors.
    pub fn of(target: Target, request: &ListRequest, key: &CursorKey) -> Result<Self, ListError> {
        let vocabulary = target.vocabulary();
        let limit = match &request.limit {
            None => DEFAULT_LIMIT,
            Some(n) => whole_number(n)
                .filter(|l| (1..=MAX_LIMIT).contains(l))
                .ok_or_else(|| ListError::Limit(crate::quote::excerpt(&n.to_string())))?,
        };
        let raw_filter = request.filter.as_deref().unwrap_or("");
        let filter_text = raw_filter.trim();
        // Parsed untrimmed, so that error columns count from what the user wrote.
        let filter = if filter_text.is_empty() {
            None
        } else {
            Some(Filter::parse_in(raw_filter, vocabulary)?)
        };
        let sort = SortSpec::parse_in(&request.sort, vocabulary)?;
        // A filter that tests the status decides by itself which statuses it wants (for
        // tasks, one that tests the state or its kind, which make the status, too).
        let decides = |f: &Filter| {
            f.mentions(Field::Status)
                || (target == Target::Task
                    && (f.mentions(Field::State) || f.mentions(Field::StateKind)))
        };
        let hide_closed = !request.include_closed && !filter.as_ref().is_some_and(decides);
        // The arguments as given: a cursor is refused with any other of them, even one whose
        // change would not change the answer.
        let cursors = Shape {
            entity: target.as_str(),
            filter: filter_text,
            sort: &sort.canonical(),
            include_closed: request.include_closed,
        }
        .cursors(key);
        let after = match request.cursor.as_deref().map(str::trim) {
            Some(text) if !text.is_empty() => Some(
                cursors
                    .decode::<Position>(text)
                    .map_err(ListError::Cursor)?,
            ),
            _ => None,
        };
        Ok(Self {
            target,
            limit: limit as usize,
            filter,
            sort,
            hide_closed,
            cursors,
            after,
        })
    }

    /// One page of the listing over `snapshot` (issues and milestones) or `tasks`; either
    /// names the refs this version does not read, which `tasks` holds.
    pub fn run(&self, snapshot: &Snapshot, tasks: &TaskSet) -> ListResponse {
        let (items, next_cursor, unreadable, note) = match self.target {
            Target::Entity(kind) => {
                let rows = snapshot
                    .rows(kind)
                    .filter(|row| !(self.hide_closed && row.entity.status == Status::Closed));
                let (items, next) = self.page(rows, |row: &Row<'_>| ListItem::from_row(row));
                let unreadable: Vec<String> = snapshot
                    .unreadable(kind)
                    .take(MAX_UNREADABLE)
                    .map(String::from)
                    .collect();
                // An empty page in a repository of tasks says so, and how to list them.
                let note = (items.is_empty() && unreadable.is_empty())
                    .then(|| crate::task::empty_page_note(tasks, kind.as_str()))
                    .flatten();
                (items, next, unreadable, note)
            }
            Target::Task => {
                let rows = tasks
                    .rows()
                    .filter(|row| !(self.hide_closed && row.task.closed()));
                let (items, next) =
                    self.page(rows, |row: &TaskRow<'_>| crate::task::view::list_item(row));
                let unreadable = tasks.unreadable().take(MAX_UNREADABLE);
                (items, next, unreadable.map(String::from).collect(), None)
            }
        };
        ListResponse {
            items,
            next_cursor,
            unreadable,
            other_refs: tasks.other_refs().to_vec(),
            tasks: note,
            states: Vec::new(),
        }
    }

    /// Read what this listing needs from `catalog` and run it: issues and milestones name the
    /// task refs and read none of them (a failure to read their names is one of the other
    /// refs, not a failure of the listing); the first page of tasks names the states (the
    /// workflow's, from `.git-mile/config.toml` as upstream reads it, and those the tasks are
    /// in) when it has no filter.
    pub fn read(&self, catalog: &Catalog) -> StoreResult<Listed> {
        let (snapshot, tasks) = match self.target {
            Target::Entity(_) => (
                catalog.snapshot()?,
                catalog
                    .task_names()
                    .unwrap_or_else(|err| crate::task::unread(&err)),
            ),
            Target::Task => (Arc::default(), catalog.tasks()?),
        };
        let mut page = self.run(&snapshot, &tasks);
        // The vocabulary is the repository's, not the query's: named once, on the first page of
        // a listing without a filter (a filtered one already knows what it asks for, and is
        // not made to carry it again).
        if self.target == Target::Task && self.after.is_none() && self.filter.is_none() {
            // A configuration upstream cannot read marks no state as the workflow's; a write
            // says why (`upstream_config`).
            let workflow = Project::load(&catalog.store().workdir())
                .ok()
                .map(|p| p.workflow.names());
            page.states = crate::task::states::states(&tasks, workflow.as_ref());
        }
        Ok(Listed {
            page,
            snapshot,
            tasks,
        })
    }

    /// Filter `rows`, order them, resume after the cursor and cut a page: its items and the
    /// next page's cursor.
    fn page<R: Fields>(
        &self,
        rows: impl Iterator<Item = R>,
        item: impl Fn(&R) -> ListItem,
    ) -> (Vec<ListItem>, Option<String>) {
        let (sort, limit) = (&self.sort, self.limit);
        let mut rows: Vec<R> = rows
            .filter(|row| self.filter.as_ref().is_none_or(|f| f.matches(row)))
            .filter(|row| match &self.after {
                // A cursor whose values do not fit the order cannot come from this query.
                Some(after) => sort.compare_to(row, after) == Some(Ordering::Greater),
                None => true,
            })
            .collect();
        if rows.len() > limit {
            // Only the first `limit + 1` need ordering.
            rows.select_nth_unstable_by(limit, |a, b| sort.compare(a, b));
            rows.truncate(limit + 1);
        }
        rows.sort_unstable_by(|a, b| sort.compare(a, b));
        let next_cursor = if rows.len() > limit {
            rows.truncate(limit);
            rows.last()
                .map(|last| self.cursors.encode(&sort.values_of(last)))
        } else {
            None
        };
        (rows.iter().map(item).collect(), next_cursor)
    }
}

/// A JSON number that is a whole number (`2` or `2.0`, as JSON Schema's `integer`).
fn whole_number(n: &serde_json::Number) -> Option<u64> {
    n.as_u64().or_else(|| {
        n.as_f64()
            .filter(|f| f.fract() == 0.0 && (0.0..=u64::MAX as f64).contains(f))
            .map(|f| f as u64)
    })
}
