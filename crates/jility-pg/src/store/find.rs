//! The query language's filters ([`Filter`]) and orders ([`Sort`]) in PostgreSQL: the
//! conditions of a filter on a ticket row (full-text search uses them too, [`super::search`])
//! and one page of tickets in an order.
//!
//! Statements are sent unprepared, planned with their values: a query's shape varies with
//! what it asks, and a generic plan made for the average workspace can read every ticket of
//! a big one (see [`super::search`]).

use jility_core::model::Status;
use jility_core::store::Sort;
use jility_core::store::{
    COUNT_CAP, Filter, FoundPage, Position, SortField, SortValue, StoreResult, Test, TicketRow,
    TimeRange,
};
use postgres::types::{ToSql, Type};

use super::{Param, SUMMARY_COLUMNS, TICKET_COLUMNS, Tx, count, summary_row, ticket_row};

/// Text search configuration made by the first migration.
const TS_CONFIG: &str = "jility";

/// Parameters of a statement being written, typed (an unprepared statement names its
/// parameters' types): `$1` is always the workspace.
pub(super) struct Binds(pub(super) Vec<(Param, Type)>);

impl Binds {
    pub(super) fn new(ws: i64) -> Self {
        Self(vec![(Box::new(ws), Type::INT8)])
    }

    pub(super) fn bind(&mut self, value: Param, ty: Type) -> String {
        self.0.push((value, ty));
        format!("${}", self.0.len())
    }

    fn text(&mut self, value: &str) -> String {
        self.bind(Box::new(value.to_string()), Type::TEXT)
    }

    fn texts(&mut self, values: impl IntoIterator<Item = String>) -> String {
        let values: Vec<String> = values.into_iter().collect();
        self.bind(Box::new(values), Type::TEXT_ARRAY)
    }

    fn id(&mut self, value: i64) -> String {
        self.bind(Box::new(value), Type::INT8)
    }

    /// The values as the driver takes them.
    pub(super) fn typed(&self) -> Vec<(&(dyn ToSql + Sync), Type)> {
        self.0
            .iter()
            .map(|(value, ty)| (value.as_ref() as &(dyn ToSql + Sync), ty.clone()))
            .collect()
    }
}

/// The SQL of `filter` on the ticket row `t` of workspace `$1`: every clause, `AND`ed;
/// `true` when there is none. A negated test holds where the test does not (a ticket
/// without points is outside `points:3..5`, so inside `-points:3..5`). Each probe of a
/// ticket's labels, assignees or dependencies is a correlated subquery (`OFFSET 0` keeps
/// its key whole in the index condition, as the listings' do).
pub(super) fn conditions(filter: &Filter, t: &str, binds: &mut Binds) -> String {
    let parts: Vec<String> = filter
        .clauses
        .iter()
        .map(|clause| {
            let test = test(&clause.test, t, binds);
            if clause.negated {
                format!("NOT coalesce(({test}), false)")
            } else {
                format!("({test})")
            }
        })
        .collect();
    if parts.is_empty() {
        "true".to_string()
    } else {
        parts.join(" AND ")
    }
}

fn test(test: &Test, t: &str, binds: &mut Binds) -> String {
    match test {
        Test::Status(statuses) => format!(
            "{t}.status = ANY({})",
            binds.texts(statuses.iter().map(|s| s.as_str().to_string()))
        ),
        Test::Label(labels) => format!(
            "EXISTS (SELECT 1 FROM ticket_labels l WHERE l.workspace_id = $1 \
               AND l.ticket_id = {t}.id AND l.label = ANY({}) OFFSET 0)",
            binds.texts(labels.iter().cloned())
        ),
        Test::Labelled => format!(
            "EXISTS (SELECT 1 FROM ticket_labels l WHERE l.workspace_id = $1 \
               AND l.ticket_id = {t}.id OFFSET 0)"
        ),
        Test::Assignee(names) => format!(
            "EXISTS (SELECT 1 FROM ticket_assignees a WHERE a.workspace_id = $1 \
               AND a.ticket_id = {t}.id AND a.assignee = ANY({}) OFFSET 0)",
            binds.texts(names.iter().cloned())
        ),
        Test::Assigned => format!(
            "EXISTS (SELECT 1 FROM ticket_assignees a WHERE a.workspace_id = $1 \
               AND a.ticket_id = {t}.id OFFSET 0)"
        ),
        Test::Blocked => format!(
            "{t}.status = 'blocked' OR EXISTS (SELECT 1 FROM dependencies d \
               JOIN tickets o ON o.workspace_id = d.workspace_id AND o.id = d.depends_on_id \
               WHERE d.workspace_id = $1 AND d.ticket_id = {t}.id \
               AND o.deleted_at IS NULL AND o.status <> 'done' OFFSET 0)"
        ),
        Test::Kind(kind) => format!("{t}.kind = {}", binds.text(kind.as_str())),
        Test::Epic(id) => column(t, "epic_id", *id, binds),
        Test::Parent(id) => column(t, "parent_id", *id, binds),
        Test::Sprint(Some(id)) => format!("{t}.sprint_id = {}", binds.id(*id)),
        // The backlog: in no open sprint, and not done in a completed one.
        Test::Sprint(None) => format!(
            "NOT EXISTS (SELECT 1 FROM sprints sp WHERE sp.workspace_id = $1 \
               AND sp.id = {t}.sprint_id AND (sp.state <> 'completed' OR {t}.status = 'done') \
               OFFSET 0)"
        ),
        Test::DependsOn(id) => format!(
            "EXISTS (SELECT 1 FROM dependencies d WHERE d.workspace_id = $1 \
               AND d.ticket_id = {t}.id AND d.depends_on_id = {} OFFSET 0)",
            binds.id(*id)
        ),
        Test::Points(None) => format!("{t}.story_points IS NULL"),
        Test::Points(Some((min, max))) => format!(
            "{t}.story_points BETWEEN {} AND {}",
            binds.bind(Box::new(i16::from(*min)), Type::INT2),
            binds.bind(Box::new(i16::from(*max)), Type::INT2)
        ),
        Test::Created(range) => times(t, "created_at", range, binds),
        Test::Updated(range) => times(t, "updated_at", range, binds),
        Test::Numbers { key, numbers } => format!(
            "{t}.project_id = (SELECT k.id FROM projects k WHERE k.workspace_id = $1 \
               AND k.key = {}) AND {t}.number = ANY({})",
            binds.text(key),
            binds.bind(Box::new(numbers.clone()), Type::INT8_ARRAY)
        ),
        // The words go in as a parameter, through the same parser as the documents: never
        // read as query syntax.
        Test::Text(phrase) => format!(
            "{t}.id IN (SELECT s.ticket_id FROM ticket_search s WHERE s.workspace_id = $1 \
               AND s.search @@ phraseto_tsquery('{TS_CONFIG}', {}))",
            binds.text(&phrase.join(" "))
        ),
    }
}

fn column(t: &str, column: &str, id: Option<i64>, binds: &mut Binds) -> String {
    match id {
        Some(id) => format!("{t}.{column} = {}", binds.id(id)),
        None => format!("{t}.{column} IS NULL"),
    }
}

/// Times are RFC 3339 text of one format: compared byte by byte (`COLLATE "C"`), as
/// SQLite compares them.
fn times(t: &str, column: &str, range: &TimeRange, binds: &mut Binds) -> String {
    let mut parts = Vec::new();
    if let Some(from) = &range.from {
        parts.push(format!(
            "{t}.{column} COLLATE \"C\" >= {}",
            binds.text(from)
        ));
    }
    if let Some(until) = &range.until {
        parts.push(format!(
            "{t}.{column} COLLATE \"C\" < {}",
            binds.text(until)
        ));
    }
    if parts.is_empty() {
        "true".to_string()
    } else {
        parts.join(" AND ")
    }
}

/// The value a [`SortField`] orders by, on the ticket row `t`, and its type. Created: the
/// order tickets were filed in (their storage id). Text compares byte by byte, as in
/// SQLite.
fn sort_value(field: SortField, t: &str) -> (String, Type) {
    match field {
        SortField::Created => (format!("{t}.id"), Type::INT8),
        SortField::Updated => (format!("({t}.updated_at COLLATE \"C\")"), Type::TEXT),
        SortField::Points => (format!("coalesce({t}.story_points, 0)::bigint"), Type::INT8),
        SortField::Title => (format!("(lower({t}.title) COLLATE \"C\")"), Type::TEXT),
    }
}

pub(super) fn find(
    tx: &mut Tx<'_>,
    filter: &Filter,
    sort: Sort,
    after: Option<&Position>,
    limit: usize,
) -> StoreResult<FoundPage> {
    let mut binds = Binds::new(tx.ws);
    let conditions = conditions(filter, "t", &mut binds);
    let live = format!("t.workspace_id = $1 AND t.deleted_at IS NULL AND {conditions}");
    let cap = binds.bind(Box::new((COUNT_CAP + 1) as i64), Type::INT8);
    let total: i64 = {
        let sql =
            format!("SELECT count(*) FROM (SELECT 1 FROM tickets t WHERE {live} LIMIT {cap}) c");
        let rows = tx.query_typed(&sql, &binds.typed())?;
        match rows.first() {
            Some(row) => row.try_get(0).map_err(crate::store::db)?,
            None => 0,
        }
    };
    // The count's cap is not a parameter of the page.
    binds.0.pop();
    let (value, ty) = sort_value(sort.field, "t");
    let (way, cmp) = if sort.descending {
        ("DESC", "<")
    } else {
        ("ASC", ">")
    };
    let after_sql = match after {
        Some(position) => {
            let mark = match &position.value {
                SortValue::Number(n) => binds.bind(Box::new(*n), Type::INT8),
                SortValue::Text(s) => binds.bind(Box::new(s.clone()), Type::TEXT),
            };
            format!(
                " AND ({value}, t.id) {cmp} ({mark}, {})",
                binds.id(position.id)
            )
        }
        None => String::new(),
    };
    let page_limit = binds.bind(Box::new((limit + 1) as i64), Type::INT8);
    // The page's ids first. In the order tickets were filed: one index range per status
    // (workspace, status, id), each read in ticket order and cut at the page size, then
    // merged, as the listings do — never a sort of every match, whatever the statistics.
    // In another order every match is read and sorted (no index holds it).
    let ids = if sort.field == SortField::Created {
        let branches: Vec<String> = Status::ALL
            .iter()
            .map(|status| {
                format!(
                    "(SELECT t.id, t.id AS value FROM tickets t WHERE {live} \
                       AND t.status = {}{after_sql} ORDER BY t.id {way} LIMIT {page_limit})",
                    binds.text(status.as_str())
                )
            })
            .collect();
        format!(
            "SELECT id, value FROM ({}) b ORDER BY id {way} LIMIT {page_limit}",
            branches.join(" UNION ALL ")
        )
    } else {
        format!(
            "SELECT t.id, {value} AS value FROM tickets t WHERE {live}{after_sql} \
             ORDER BY {value} {way}, t.id {way} LIMIT {page_limit}"
        )
    };
    // Then each ticket's summary by its key (`OFFSET 0`: per id).
    let sql = format!(
        "SELECT page.id, page.value, {SUMMARY_COLUMNS} FROM \
           ({ids}) page \
         CROSS JOIN LATERAL (SELECT * FROM tickets t \
            WHERE t.workspace_id = $1 AND t.id = page.id OFFSET 0) t \
         JOIN projects p ON p.workspace_id = t.workspace_id AND p.id = t.project_id \
         ORDER BY page.value {way}, page.id {way}"
    );
    let rows = tx.query_typed(&sql, &binds.typed())?;
    let mut found = Vec::with_capacity(rows.len());
    for r in &rows {
        let value = if ty == Type::INT8 {
            SortValue::Number(r.try_get(1).map_err(crate::store::db)?)
        } else {
            SortValue::Text(r.try_get(1).map_err(crate::store::db)?)
        };
        let id: i64 = r.try_get(0).map_err(crate::store::db)?;
        found.push((Position { value, id }, summary_row(r, 2)?));
    }
    let next = if found.len() > limit {
        found.truncate(limit);
        found.last().map(|(position, _)| position.clone())
    } else {
        None
    };
    let total = count(total);
    Ok(FoundPage {
        items: found.into_iter().map(|(_, s)| s).collect(),
        total: total.min(COUNT_CAP),
        total_exact: total <= COUNT_CAP,
        next,
    })
}

pub(super) fn find_rows(
    tx: &mut Tx<'_>,
    filter: &Filter,
    limit: usize,
) -> StoreResult<Vec<TicketRow>> {
    let mut binds = Binds::new(tx.ws);
    let conditions = conditions(filter, "t", &mut binds);
    let limit = binds.bind(Box::new(limit as i64), Type::INT8);
    let columns = TICKET_COLUMNS.replacen("t.description", "''::text", 1);
    let sql = format!(
        "SELECT {columns} FROM tickets t \
         JOIN projects p ON p.workspace_id = t.workspace_id AND p.id = t.project_id \
         WHERE t.workspace_id = $1 AND t.deleted_at IS NULL AND {conditions} \
         ORDER BY t.id LIMIT {limit}"
    );
    tx.query_typed(&sql, &binds.typed())?
        .iter()
        .map(ticket_row)
        .collect()
}
