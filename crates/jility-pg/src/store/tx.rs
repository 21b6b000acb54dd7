//! A transaction's statements ([`Tx`]): prepared statements on a connection, the parts of a
//! ticket's context one by one, and the lookups of one ticket.

use super::*;

pub(super) type Param = Box<dyn ToSql + Sync>;

pub(super) struct Tx<'a> {
    pub(super) client: &'a mut Client,
    pub(super) statements: &'a mut HashMap<String, Statement>,
    /// The workspace: `$1` of every statement.
    pub(super) ws: i64,
    pub(super) failed: bool,
    /// The tickets this write changed what a whole-ticket read shows of ([`Open::touched`]).
    pub(super) touched: Vec<i64>,
    /// The tickets this write created ([`Open::created`]).
    pub(super) created: Vec<i64>,
}

// The parts of a ticket's context one by one, for a transaction (which reads what it
// wrote, not the kept context): each as `jility_ticket_contexts` computes it.

/// A ticket's assignees, in the order `assignees` gives them.
pub(super) const ASSIGNEES_SQL: &str = "SELECT assignee FROM ticket_assignees \
     WHERE workspace_id = $1 AND ticket_id = $2 \
     ORDER BY assigned_at COLLATE \"C\", assignee COLLATE \"C\"";
pub(super) const LABELS_SQL: &str = "SELECT label FROM ticket_labels \
     WHERE workspace_id = $1 AND ticket_id = $2 ORDER BY label COLLATE \"C\"";
pub(super) const COMMENT_COUNT_SQL: &str =
    "SELECT count(*) FROM comments WHERE workspace_id = $1 AND ticket_id = $2";
/// (Each neighbour probed by its whole key: see `rows.rs`.)
pub(super) const DEPENDENCY_IDS_SQL: &str = "SELECT d.depends_on_id FROM dependencies d \
     CROSS JOIN LATERAL (SELECT o.project_id, o.number, o.deleted_at FROM tickets o \
        WHERE o.workspace_id = $1 AND o.id = d.depends_on_id OFFSET 0) o \
     WHERE d.workspace_id = $1 AND d.ticket_id = $2 AND o.deleted_at IS NULL \
     ORDER BY o.project_id, o.number";
pub(super) const DEPENDENT_IDS_SQL: &str = "SELECT d.ticket_id FROM dependencies d \
     CROSS JOIN LATERAL (SELECT o.project_id, o.number, o.deleted_at FROM tickets o \
        WHERE o.workspace_id = $1 AND o.id = d.ticket_id OFFSET 0) o \
     WHERE d.workspace_id = $1 AND d.depends_on_id = $2 AND o.deleted_at IS NULL \
     ORDER BY o.project_id, o.number";

impl<'a> Tx<'a> {
    pub(super) fn new(conn: &'a mut PgConnection, ws: i64) -> Self {
        let PgConnection { client, statements } = conn;
        Self {
            client,
            statements,
            ws,
            failed: false,
            touched: Vec::new(),
            created: Vec::new(),
        }
    }

    /// Whether the connection was closed under the statement.
    pub(super) fn closed(&self) -> bool {
        self.client.is_closed()
    }

    pub(super) fn statement(&mut self, sql: &str) -> StoreResult<Statement> {
        if let Some(statement) = self.statements.get(sql) {
            return Ok(statement.clone());
        }
        let statement = match self.client.prepare(sql) {
            Ok(statement) => statement,
            Err(err) => {
                self.failed = true;
                return Err(crate::store::db(err));
            }
        };
        if self.statements.len() >= MAX_STATEMENTS {
            self.statements.clear();
        }
        self.statements.insert(sql.to_string(), statement.clone());
        Ok(statement)
    }

    pub(super) fn query(
        &mut self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> StoreResult<Vec<Row>> {
        let statement = self.statement(sql)?;
        let _timed = crate::measure::Statement::on("pool");
        let rows = self.client.query(&statement, params);
        rows.inspect_err(|_| self.failed = true)
            .map_err(crate::store::db)
    }

    pub(super) fn query_opt(
        &mut self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> StoreResult<Option<Row>> {
        let statement = self.statement(sql)?;
        let _timed = crate::measure::Statement::on("pool");
        let row = self.client.query_opt(&statement, params);
        row.inspect_err(|_| self.failed = true)
            .map_err(crate::store::db)
    }

    pub(super) fn query_one(
        &mut self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> StoreResult<Row> {
        self.query_opt(sql, params)?
            .ok_or_else(|| StoreError::Database("the query returned no row".into()))
    }

    /// `sql` sent unprepared (an unnamed statement: parsed, planned with these values and
    /// run in one round trip), for a statement whose best plan depends on its values.
    pub(super) fn query_typed(
        &mut self,
        sql: &str,
        params: &[(&(dyn ToSql + Sync), postgres::types::Type)],
    ) -> StoreResult<Vec<Row>> {
        let _timed = crate::measure::Statement::on("pool");
        let rows = self.client.query_typed(sql, params);
        rows.inspect_err(|_| self.failed = true)
            .map_err(crate::store::db)
    }

    pub(super) fn execute(
        &mut self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> StoreResult<u64> {
        let statement = self.statement(sql)?;
        let _timed = crate::measure::Statement::on("pool");
        let changed = self.client.execute(&statement, params);
        changed
            .inspect_err(|_| self.failed = true)
            .map_err(crate::store::db)
    }

    /// The rows of the whole-ticket statement of `lookup` ([`whole_ticket_sql`]).
    pub(super) fn whole_rows(&mut self, lookup: &Lookup) -> StoreResult<Vec<Row>> {
        let ws = self.ws;
        let sql = whole_ticket_sql(lookup);
        match lookup {
            Lookup::Number { key, number } => {
                let (wss, keys, numbers): (&[i64], &[&str], &[i64]) =
                    (&[ws], &[key.as_str()], &[*number]);
                self.query(sql, &[&wss, &keys, &numbers])
            }
            Lookup::Uuid(uuid) => self.query(sql, &[&ws, uuid]),
        }
    }

    pub(super) fn ids(&mut self, sql: &str, id: i64) -> StoreResult<Vec<i64>> {
        let ws = self.ws;
        self.query(sql, &[&ws, &id])?
            .iter()
            .map(|r| r.try_get(0).map_err(crate::store::db))
            .collect()
    }

    pub(super) fn strings(&mut self, sql: &str, id: i64) -> StoreResult<Vec<String>> {
        let ws = self.ws;
        self.query(sql, &[&ws, &id])?
            .iter()
            .map(|r| r.try_get(0).map_err(crate::store::db))
            .collect()
    }

    /// The ticket `sql` finds with `values` (`$2…`, the workspace `$1`).
    pub(super) fn ticket(
        &mut self,
        sql: &str,
        values: &[&(dyn ToSql + Sync)],
    ) -> StoreResult<Option<TicketRow>> {
        let ws = self.ws;
        let mut params: Vec<&(dyn ToSql + Sync)> = vec![&ws];
        params.extend_from_slice(values);
        self.query_opt(sql, &params)?
            .map(|r| ticket_row(&r))
            .transpose()
    }

    /// A write that must touch a ticket of this workspace.
    pub(super) fn expect_ticket(&mut self, changed: u64, id: i64) -> StoreResult<()> {
        if changed == 0 {
            self.failed = true;
            return Err(StoreError::Database(format!(
                "there is no ticket {id} in this workspace"
            )));
        }
        Ok(())
    }
}
