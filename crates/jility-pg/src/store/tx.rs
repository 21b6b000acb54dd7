//! A transaction's statements ([`Tx`]): on a connection, or without one during a prefetched
//! read; prepared statements, the one-statement rule of a read outside a transaction, and
//! the whole-ticket read with its kept context.

use super::*;

pub(super) type Param = Box<dyn ToSql + Sync>;

pub(super) struct Tx<'a> {
    pub(super) link: Link<'a>,
    /// The workspace: `$1` of every statement.
    pub(super) ws: i64,
    pub(super) failed: bool,
    /// A read transaction (one snapshot): what it fetched cannot change under it.
    pub(super) read_only: bool,
    /// In a read transaction, the context of the ticket it looked up by number or uuid,
    /// fetched in the same statement as the ticket ([`Tx::ticket_in_context`]), so that
    /// reading a whole ticket is one round trip instead of a dozen.
    pub(super) context: Option<Context>,
    /// Outside a transaction ([`Store::read_single`]): whether its one statement ran.
    pub(super) single: Single,
    /// The tickets this write changed what a whole-ticket read shows of, or whose kept
    /// contexts this read found stale ([`Open::touched`]).
    pub(super) touched: Vec<i64>,
    /// The tickets this write created ([`Open::created`]).
    pub(super) created: Vec<i64>,
}

/// What a [`Tx`] runs its statements on.
pub(super) enum Link<'a> {
    /// A connection, and the statements prepared on it.
    Live {
        client: &'a mut Client,
        statements: &'a mut HashMap<String, Statement>,
    },
    /// None: a prefetched read's first run notes its one statement here ([`prefetch`]).
    Plan(Option<Lookup>),
    /// None: a prefetched read's second run takes its one statement's row (`Some(None)`:
    /// the statement found no ticket).
    Replay(Option<Option<Row>>),
}

/// What a statement asked of a [`Tx`] without a connection fails with (the read then runs
/// on one).
pub(super) fn offline() -> StoreError {
    StoreError::Rerun("a prefetched read asked for another statement")
}

/// A read outside a transaction may run one statement ([`Store::read_single`]).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Single {
    /// Inside a transaction: any number of statements.
    InTransaction,
    Unused,
    Used,
    /// A second statement was asked for: the read must run again in a transaction.
    Exceeded,
}

/// What a read needs beside a ticket's row to show it whole: its assignees, labels,
/// newest comments and changes, commits, dependencies and the neighbours it names.
pub(super) struct Context {
    pub(super) id: i64,
    pub(super) assignees: Vec<String>,
    pub(super) labels: Vec<String>,
    pub(super) comment_count: i64,
    pub(super) dependency_ids: Vec<i64>,
    pub(super) dependent_ids: Vec<i64>,
    /// The newest comments, newest first: at most [`PREFETCH_COMMENTS`].
    pub(super) comments: Vec<Comment>,
    pub(super) commits: Vec<CommitLink>,
    /// The newest changes, newest first: at most [`PREFETCH_CHANGES`].
    pub(super) changes: Vec<Change>,
    /// Parent, epic, dependencies and dependents by id.
    pub(super) refs: HashMap<i64, TicketRef>,
}

/// How many of a ticket's newest comments and changes a whole-ticket read fetches with it
/// (what `get_ticket` shows; the `LIMIT`s of `jility_ticket_contexts`, migration 15); a
/// read asking for more queries them.
pub(super) const PREFETCH_COMMENTS: usize = 50;
pub(super) const PREFETCH_CHANGES: usize = 20;

// The parts of a ticket's context one by one, for a write's transaction (which reads what
// it wrote, not the kept context): each as `jility_ticket_contexts` computes it.

/// A ticket's assignees, in the order `assignees` gives them.
pub(super) const ASSIGNEES_SQL: &str = "SELECT assignee FROM ticket_assignees \
     WHERE workspace_id = $1 AND ticket_id = $2 \
     ORDER BY assigned_at COLLATE \"C\", assignee COLLATE \"C\"";
pub(super) const LABELS_SQL: &str = "SELECT label FROM ticket_labels \
     WHERE workspace_id = $1 AND ticket_id = $2 ORDER BY label COLLATE \"C\"";
pub(super) const COMMENT_COUNT_SQL: &str =
    "SELECT count(*) FROM comments WHERE workspace_id = $1 AND ticket_id = $2";
pub(super) const DEPENDENCY_IDS_SQL: &str = "SELECT d.depends_on_id FROM dependencies d \
     JOIN tickets o ON o.workspace_id = d.workspace_id AND o.id = d.depends_on_id \
     WHERE d.workspace_id = $1 AND d.ticket_id = $2 AND o.deleted_at IS NULL \
     ORDER BY o.project_id, o.number";
pub(super) const DEPENDENT_IDS_SQL: &str = "SELECT d.ticket_id FROM dependencies d \
     JOIN tickets o ON o.workspace_id = d.workspace_id AND o.id = d.ticket_id \
     WHERE d.workspace_id = $1 AND d.depends_on_id = $2 AND o.deleted_at IS NULL \
     ORDER BY o.project_id, o.number";

impl<'a> Tx<'a> {
    pub(super) fn new(link: Link<'a>, ws: i64, read_only: bool, single: Single) -> Self {
        Self {
            link,
            ws,
            failed: false,
            read_only,
            context: None,
            single,
            touched: Vec::new(),
            created: Vec::new(),
        }
    }

    /// Outside a transaction, let one statement run and stop a second
    /// ([`Store::read_single`]).
    pub(super) fn count_statement(&mut self) -> StoreResult<()> {
        match self.single {
            Single::InTransaction => {}
            Single::Unused => self.single = Single::Used,
            Single::Used | Single::Exceeded => {
                self.single = Single::Exceeded;
                return Err(StoreError::Rerun(
                    "a second statement outside a transaction",
                ));
            }
        }
        Ok(())
    }

    /// The connection; without one, the read must run again on one.
    pub(super) fn client(&mut self) -> StoreResult<&mut Client> {
        match &mut self.link {
            Link::Live { client, .. } => Ok(client),
            Link::Plan(_) | Link::Replay(_) => {
                self.single = Single::Exceeded;
                Err(offline())
            }
        }
    }

    /// Whether the connection was closed under the read.
    pub(super) fn closed(&self) -> bool {
        matches!(&self.link, Link::Live { client, .. } if client.is_closed())
    }

    pub(super) fn statement(&mut self, sql: &str) -> StoreResult<Statement> {
        self.count_statement()?;
        let Link::Live { client, statements } = &mut self.link else {
            self.single = Single::Exceeded;
            return Err(offline());
        };
        if let Some(statement) = statements.get(sql) {
            return Ok(statement.clone());
        }
        let statement = match client.prepare(sql) {
            Ok(statement) => statement,
            Err(err) => {
                self.failed = true;
                return Err(crate::store::db(err));
            }
        };
        if statements.len() >= MAX_STATEMENTS {
            statements.clear();
        }
        statements.insert(sql.to_string(), statement.clone());
        Ok(statement)
    }

    pub(super) fn query(
        &mut self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> StoreResult<Vec<Row>> {
        let statement = self.statement(sql)?;
        let rows = self.client()?.query(&statement, params);
        rows.inspect_err(|_| self.failed = true)
            .map_err(crate::store::db)
    }

    pub(super) fn query_opt(
        &mut self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> StoreResult<Option<Row>> {
        let statement = self.statement(sql)?;
        let row = self.client()?.query_opt(&statement, params);
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
        self.count_statement()?;
        let rows = self.client()?.query_typed(sql, params);
        rows.inspect_err(|_| self.failed = true)
            .map_err(crate::store::db)
    }

    pub(super) fn execute(
        &mut self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> StoreResult<u64> {
        let statement = self.statement(sql)?;
        let changed = self.client()?.execute(&statement, params);
        changed
            .inspect_err(|_| self.failed = true)
            .map_err(crate::store::db)
    }

    /// The ticket `lookup` finds; in a read with its whole [`Context`] fetched in the same
    /// statement and kept for the calls that follow. Without a connection, the statement
    /// is noted ([`Link::Plan`]) or its row taken ([`Link::Replay`]).
    pub(super) fn ticket_in_context(&mut self, lookup: Lookup) -> StoreResult<Option<TicketRow>> {
        let row = match &mut self.link {
            Link::Live { .. } => {
                let ws = self.ws;
                let params = lookup.params(&ws);
                if self.read_only {
                    self.query_opt(whole_ticket_sql(&lookup), &params)?
                } else {
                    let sql = format!(
                        "SELECT {TICKET_COLUMNS} FROM tickets t \
                         JOIN projects p ON p.workspace_id = t.workspace_id \
                         AND p.id = t.project_id WHERE t.workspace_id = $1 AND {}",
                        lookup.condition()
                    );
                    self.query_opt(&sql, &params)?
                }
            }
            Link::Plan(noted) => {
                if noted.is_none() && self.single == Single::Unused {
                    *noted = Some(lookup);
                }
                self.count_statement()?;
                return Err(offline());
            }
            Link::Replay(row) => {
                let row = row.take();
                self.count_statement()?;
                row.ok_or_else(offline)?
            }
        };
        let Some(row) = row else {
            return Ok(None);
        };
        let ticket = ticket_row(&row)?;
        if !self.read_only {
            return Ok(Some(ticket));
        }
        if row
            .try_get::<_, Option<i64>>(TICKET_COLUMN_COUNT)
            .map_err(crate::store::db)?
            .is_none()
        {
            // No kept context at the ticket's version: its parts are read one by one, and
            // a refresh asked for.
            self.touched.push(ticket.id);
            return Ok(Some(ticket));
        }
        let at = TICKET_COLUMN_COUNT + 1;
        let refs: Vec<(i64, String, String, String, bool)> = json_column(&row, at + 8)?;
        // The kept lists name deleted neighbours too: only live ones are shown.
        let live = |ids: Vec<i64>| -> Vec<i64> {
            ids.into_iter()
                .filter(|id| refs.iter().any(|r| r.0 == *id && r.4))
                .collect()
        };
        let dependency_ids = live(row.try_get(at + 3).map_err(crate::store::db)?);
        let dependent_ids = live(row.try_get(at + 4).map_err(crate::store::db)?);
        let mut context = Context {
            id: ticket.id,
            assignees: row.try_get(at).map_err(crate::store::db)?,
            labels: row.try_get(at + 1).map_err(crate::store::db)?,
            comment_count: row.try_get(at + 2).map_err(crate::store::db)?,
            dependency_ids,
            dependent_ids,
            comments: json_column(&row, at + 5)?,
            commits: json_column(&row, at + 6)?,
            changes: json_column(&row, at + 7)?,
            refs: HashMap::with_capacity(refs.len()),
        };
        for (id, number, title, status, _) in refs {
            let status = status_of(&status)?;
            context.refs.insert(
                id,
                TicketRef {
                    number,
                    title,
                    status,
                },
            );
        }
        self.context = Some(context);
        Ok(Some(ticket))
    }

    /// The fetched context of ticket `id`, if this read transaction has it.
    pub(super) fn cached(&self, id: i64) -> Option<&Context> {
        self.context
            .as_ref()
            .filter(|c| self.read_only && c.id == id)
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

    pub(super) fn ticket(
        &mut self,
        condition: &str,
        value: &(dyn ToSql + Sync),
    ) -> StoreResult<Option<TicketRow>> {
        let sql = format!(
            "SELECT {TICKET_COLUMNS} FROM tickets t \
             JOIN projects p ON p.workspace_id = t.workspace_id AND p.id = t.project_id \
             WHERE t.workspace_id = $1 AND {condition}"
        );
        let ws = self.ws;
        self.query_opt(&sql, &[&ws, value])?
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
