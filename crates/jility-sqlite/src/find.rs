//! Finding tickets in SQLite: full-text search (FTS5, ranked by BM25) and the query
//! language's filters ([`Filter`]) and orders ([`Sort`]).

use rusqlite::params_from_iter;
use rusqlite::types::Value;

use jility_core::store::{
    COUNT_CAP, Filter, FoundPage, Position, SearchHit, SearchPage, SearchTerms, Sort, SortField,
    SortValue, StoreResult, Test, TicketRow,
};

use crate::rows::{SUMMARY_COLUMNS, TICKET_COLUMNS, Tx, db, summary_row, ticket_row};

/// Parameters of a statement being written: each value bound as `?N`.
#[derive(Default)]
pub(crate) struct Binds(pub(crate) Vec<Value>);

impl Binds {
    pub(crate) fn bind(&mut self, value: impl Into<Value>) -> String {
        self.0.push(value.into());
        format!("?{}", self.0.len())
    }

    fn list<T: Into<Value> + Clone>(&mut self, values: &[T]) -> String {
        values
            .iter()
            .map(|v| self.bind(v.clone()))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// FTS5 query text: every phrase double-quoted (quotes inside doubled), so punctuation and
/// operators in what the user typed are matched as text, never parsed as syntax.
fn fts_query(terms: &[Vec<String>]) -> String {
    terms
        .iter()
        .map(|phrase| format!("\"{}\"", phrase.join(" ").replace('"', "\"\"")))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The SQL of `filter` on the ticket row `t` (its id `id`): every clause, `AND`ed; `1`
/// when there is none. A negated test holds where the test does not (a ticket without
/// points is outside `points:3..5`, so inside `-points:3..5`).
pub(crate) fn conditions(filter: &Filter, t: &str, binds: &mut Binds) -> String {
    let mut parts = Vec::with_capacity(filter.clauses.len());
    for clause in &filter.clauses {
        let test = test(&clause.test, t, binds);
        parts.push(if clause.negated {
            format!("NOT coalesce(({test}), 0)")
        } else {
            format!("({test})")
        });
    }
    if parts.is_empty() {
        "1".to_string()
    } else {
        parts.join(" AND ")
    }
}

fn test(test: &Test, t: &str, binds: &mut Binds) -> String {
    let text = |v: &String| Value::Text(v.clone());
    match test {
        Test::Status(statuses) => {
            let names: Vec<Value> = statuses
                .iter()
                .map(|s| Value::Text(s.as_str().to_string()))
                .collect();
            format!("{t}.status IN ({})", binds.list(&names))
        }
        Test::Label(labels) => {
            let values: Vec<Value> = labels.iter().map(text).collect();
            format!(
                "EXISTS (SELECT 1 FROM ticket_labels l WHERE l.ticket_id = {t}.id AND l.label IN ({}))",
                binds.list(&values)
            )
        }
        Test::Labelled => {
            format!("EXISTS (SELECT 1 FROM ticket_labels l WHERE l.ticket_id = {t}.id)")
        }
        Test::Assignee(names) => {
            let values: Vec<Value> = names.iter().map(text).collect();
            format!(
                "EXISTS (SELECT 1 FROM ticket_assignees a WHERE a.ticket_id = {t}.id AND a.assignee IN ({}))",
                binds.list(&values)
            )
        }
        Test::Assigned => {
            format!("EXISTS (SELECT 1 FROM ticket_assignees a WHERE a.ticket_id = {t}.id)")
        }
        Test::Blocked => format!(
            "{t}.status = 'blocked' OR EXISTS (SELECT 1 FROM dependencies d \
               JOIN tickets o ON o.id = d.depends_on_id \
               WHERE d.ticket_id = {t}.id AND o.deleted_at IS NULL AND o.status <> 'done')"
        ),
        Test::Kind(kind) => format!("{t}.kind = {}", binds.bind(kind.as_str().to_string())),
        Test::Epic(id) => column(t, "epic_id", *id, binds),
        Test::Parent(id) => column(t, "parent_id", *id, binds),
        Test::Sprint(Some(id)) => format!("{t}.sprint_id = {}", binds.bind(*id)),
        // The backlog: in no open sprint, and not done in a completed one.
        Test::Sprint(None) => format!(
            "NOT EXISTS (SELECT 1 FROM sprints s WHERE s.id = {t}.sprint_id \
               AND (s.state <> 'completed' OR {t}.status = 'done'))"
        ),
        Test::DependsOn(id) => format!(
            "EXISTS (SELECT 1 FROM dependencies d WHERE d.ticket_id = {t}.id AND d.depends_on_id = {})",
            binds.bind(*id)
        ),
        Test::Points(None) => format!("{t}.story_points IS NULL"),
        Test::Points(Some((min, max))) => format!(
            "{t}.story_points BETWEEN {} AND {}",
            binds.bind(i64::from(*min)),
            binds.bind(i64::from(*max))
        ),
        Test::Created(range) => times(t, "created_at", range, binds),
        Test::Updated(range) => times(t, "updated_at", range, binds),
        Test::Numbers { key, numbers } => format!(
            "{t}.project_id = (SELECT id FROM projects WHERE key = {}) AND {t}.number IN ({})",
            binds.bind(key.clone()),
            binds.list(numbers)
        ),
        Test::Text(phrase) => format!(
            "{t}.id IN (SELECT rowid FROM ticket_search WHERE ticket_search MATCH {})",
            binds.bind(fts_query(std::slice::from_ref(phrase)))
        ),
    }
}

fn column(t: &str, column: &str, id: Option<i64>, binds: &mut Binds) -> String {
    match id {
        Some(id) => format!("{t}.{column} = {}", binds.bind(id)),
        None => format!("{t}.{column} IS NULL"),
    }
}

fn times(
    t: &str,
    column: &str,
    range: &jility_core::store::TimeRange,
    binds: &mut Binds,
) -> String {
    let mut parts = Vec::new();
    if let Some(from) = &range.from {
        parts.push(format!("{t}.{column} >= {}", binds.bind(from.clone())));
    }
    if let Some(until) = &range.until {
        parts.push(format!("{t}.{column} < {}", binds.bind(until.clone())));
    }
    if parts.is_empty() {
        "1".to_string()
    } else {
        parts.join(" AND ")
    }
}

/// The value a [`SortField`] orders by, on the ticket row `t`. Created: the order tickets
/// were filed in (their storage id).
fn sort_value(field: SortField, t: &str) -> String {
    match field {
        SortField::Created => format!("{t}.id"),
        SortField::Updated => format!("{t}.updated_at"),
        SortField::Points => format!("coalesce({t}.story_points, 0)"),
        SortField::Title => format!("lower({t}.title)"),
    }
}

pub(crate) fn find(
    tx: &mut Tx<'_>,
    filter: &Filter,
    sort: Sort,
    after: Option<&Position>,
    limit: usize,
) -> StoreResult<FoundPage> {
    let mut binds = Binds::default();
    let conditions = conditions(filter, "t", &mut binds);
    let live = format!("t.deleted_at IS NULL AND {conditions}");
    let count_cap = binds.bind((COUNT_CAP + 1) as i64);
    let total: i64 = tx
        .tx
        .prepare_cached(&format!(
            "SELECT count(*) FROM (SELECT 1 FROM tickets t WHERE {live} LIMIT {count_cap})"
        ))
        .map_err(db)?
        .query_row(params_from_iter(binds.0.iter()), |r| r.get(0))
        .map_err(db)?;
    // The count's cap is not a parameter of the page.
    binds.0.pop();
    let value = sort_value(sort.field, "t");
    let (way, cmp) = if sort.descending {
        ("DESC", "<")
    } else {
        ("ASC", ">")
    };
    let after_sql = match after {
        Some(position) => {
            let mark = match &position.value {
                SortValue::Number(n) => binds.bind(*n),
                SortValue::Text(s) => binds.bind(s.clone()),
            };
            format!(
                " AND ({value}, t.id) {cmp} ({mark}, {})",
                binds.bind(position.id)
            )
        }
        None => String::new(),
    };
    let page_limit = binds.bind((limit + 1) as i64);
    let sql = format!(
        "SELECT t.id, {value}, {SUMMARY_COLUMNS} FROM tickets t \
         JOIN projects p ON p.id = t.project_id \
         WHERE {live}{after_sql} ORDER BY {value} {way}, t.id {way} LIMIT {page_limit}"
    );
    let mut stmt = tx.tx.prepare_cached(&sql).map_err(db)?;
    let rows = stmt
        .query_map(params_from_iter(binds.0.iter()), |r| {
            let value = match r.get_ref(1)? {
                rusqlite::types::ValueRef::Integer(n) => SortValue::Number(n),
                other => SortValue::Text(other.as_str()?.to_string()),
            };
            Ok((
                Position {
                    value,
                    id: r.get(0)?,
                },
                summary_row(r, 2)?,
            ))
        })
        .map_err(db)?;
    let mut rows: Vec<_> = rows.collect::<Result<_, _>>().map_err(db)?;
    let next = if rows.len() > limit {
        rows.truncate(limit);
        rows.last().map(|(position, _)| position.clone())
    } else {
        None
    };
    let total = usize::try_from(total).unwrap_or(0);
    Ok(FoundPage {
        items: rows.into_iter().map(|(_, s)| s).collect(),
        total: total.min(COUNT_CAP),
        total_exact: total <= COUNT_CAP,
        next,
    })
}

pub(crate) fn search(
    tx: &mut Tx<'_>,
    terms: &SearchTerms,
    filter: &Filter,
    offset: usize,
    limit: usize,
) -> StoreResult<SearchPage> {
    let mut binds = Binds::default();
    let query = binds.bind(fts_query(&terms.0));
    // Only the tickets the filter keeps: a condition on each match, by its row.
    let only = if filter.is_empty() {
        String::new()
    } else {
        format!(
            " AND EXISTS (SELECT 1 FROM tickets x WHERE x.id = ticket_search.rowid AND {})",
            conditions(filter, "x", &mut binds)
        )
    };
    let total: i64 = tx
        .tx
        .prepare_cached(&format!(
            "SELECT count(*) FROM ticket_search WHERE ticket_search MATCH {query}{only}"
        ))
        .map_err(db)?
        .query_row(params_from_iter(binds.0.iter()), |r| r.get(0))
        .map_err(db)?;
    let limit_mark = binds.bind(limit as i64);
    let offset_mark = binds.bind(offset as i64);
    // Titles weigh most, then descriptions, then comments.
    let sql = format!(
        "SELECT (SELECT snippet(ticket_search, -1, '**', '**', '…', 16) FROM ticket_search \
                 WHERE ticket_search MATCH {query} AND rowid = hits.id), {SUMMARY_COLUMNS} \
         FROM (SELECT rowid AS id, bm25(ticket_search, 10.0, 4.0, 1.0) AS score FROM ticket_search \
               WHERE ticket_search MATCH {query}{only} \
               ORDER BY score, rowid LIMIT {limit_mark} OFFSET {offset_mark}) hits \
         JOIN tickets t ON t.id = hits.id JOIN projects p ON p.id = t.project_id \
         WHERE t.deleted_at IS NULL ORDER BY hits.score, hits.id"
    );
    let mut stmt = tx.tx.prepare_cached(&sql).map_err(db)?;
    let rows = stmt
        .query_map(params_from_iter(binds.0.iter()), |r| {
            Ok(SearchHit {
                snippet: r.get(0)?,
                ticket: summary_row(r, 1)?,
            })
        })
        .map_err(db)?;
    let hits = rows.collect::<Result<_, _>>().map_err(db)?;
    Ok(SearchPage {
        hits,
        total: usize::try_from(total).unwrap_or(0),
        total_exact: true,
    })
}

pub(crate) fn find_rows(
    tx: &mut Tx<'_>,
    filter: &Filter,
    limit: usize,
) -> StoreResult<Vec<TicketRow>> {
    let mut binds = Binds::default();
    let conditions = conditions(filter, "t", &mut binds);
    let limit = binds.bind(limit as i64);
    let columns = TICKET_COLUMNS.replacen("t.description", "''", 1);
    let sql = format!(
        "SELECT {columns} FROM tickets t JOIN projects p ON p.id = t.project_id \
         WHERE t.deleted_at IS NULL AND {conditions} ORDER BY t.id LIMIT {limit}"
    );
    let mut stmt = tx.tx.prepare_cached(&sql).map_err(db)?;
    let rows = stmt
        .query_map(params_from_iter(binds.0.iter()), ticket_row)
        .map_err(db)?;
    rows.collect::<Result<_, _>>().map_err(db)
}
