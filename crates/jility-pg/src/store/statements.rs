//! The domain's statements ([`StoreTx`] for [`Tx`]): every one names its workspace.

use super::*;

impl StoreTx for Tx<'_> {
    fn default_project(&mut self) -> StoreResult<Project> {
        let ws = self.ws;
        match self.query_opt(
            "SELECT id, key, name FROM projects WHERE workspace_id = $1 ORDER BY id LIMIT 1",
            &[&ws],
        )? {
            Some(row) => project_row(&row),
            None => Err(StoreError::NoProject),
        }
    }

    fn projects(&mut self) -> StoreResult<Vec<Project>> {
        let ws = self.ws;
        self.query(
            "SELECT id, key, name FROM projects WHERE workspace_id = $1 ORDER BY id",
            &[&ws],
        )?
        .iter()
        .map(project_row)
        .collect()
    }

    fn create_project(&mut self, key: &str, name: &str, at: &str) -> StoreResult<Project> {
        let ws = self.ws;
        let row = self.query_one(
            "INSERT INTO projects (workspace_id, key, name, created_at) VALUES ($1, $2, $3, $4) \
             RETURNING id",
            &[&ws, &key, &name, &at],
        )?;
        Ok(Project {
            id: row.try_get(0).map_err(crate::store::db)?,
            key: key.to_string(),
            name: name.to_string(),
        })
    }

    fn rekey_project(&mut self, project_id: i64, key: &str) -> StoreResult<bool> {
        let ws = self.ws;
        let changed = self.execute(
            "UPDATE projects SET key = $3 WHERE workspace_id = $1 AND id = $2 AND next_number = 1",
            &[&ws, &project_id, &key],
        )?;
        Ok(changed > 0)
    }

    fn allocate_number(&mut self, project_id: i64) -> StoreResult<i64> {
        // The row lock this UPDATE takes is held to the end of the transaction: a
        // concurrent writer (any process) waits for it, then reads the committed counter.
        let ws = self.ws;
        match self.query_opt(
            "UPDATE projects SET next_number = next_number + 1 \
             WHERE workspace_id = $1 AND id = $2 RETURNING next_number - 1",
            &[&ws, &project_id],
        )? {
            Some(row) => Ok(row.try_get(0).map_err(crate::store::db)?),
            None => {
                self.failed = true;
                Err(StoreError::Database(format!(
                    "there is no project {project_id} in this workspace"
                )))
            }
        }
    }

    fn insert_ticket(&mut self, t: &NewTicket<'_>) -> StoreResult<i64> {
        let ws = self.ws;
        let points = t.story_points.map(i16::from);
        let row = self.query_one(
            "INSERT INTO tickets (workspace_id, uuid, project_id, number, title, description, \
             status, story_points, parent_id, epic_id, created_by, created_at, updated_by, \
             updated_at, kind) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $11, $12, $13) \
             RETURNING id",
            &[
                &ws,
                &t.uuid,
                &t.project_id,
                &t.number,
                &t.title,
                &t.description,
                &t.status.as_str(),
                &points,
                &t.parent_id,
                &t.epic_id,
                &t.actor,
                &t.at,
                &t.kind.as_str(),
            ],
        )?;
        let id = row.try_get(0).map_err(crate::store::db)?;
        self.touched.push(id);
        self.created.push(id);
        Ok(id)
    }

    fn ticket_by_number(
        &mut self,
        project_key: &str,
        number: i64,
    ) -> StoreResult<Option<TicketRow>> {
        self.ticket(&TICKET_BY_NUMBER_SQL, &[&project_key, &number])
    }

    fn ticket_by_uuid(&mut self, uuid: &str) -> StoreResult<Option<TicketRow>> {
        self.ticket(&TICKET_BY_UUID_SQL, &[&uuid])
    }

    fn ticket_by_id(&mut self, id: i64) -> StoreResult<Option<TicketRow>> {
        self.ticket(&TICKET_BY_ID_SQL, &[&id])
    }

    fn ticket_refs(&mut self, ids: &[i64]) -> StoreResult<Vec<Option<TicketRef>>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let ws = self.ws;
        let mut found = HashMap::with_capacity(ids.len());
        for row in self.query(
            "SELECT t.id, p.key || '-' || t.number, t.title, t.status \
             FROM (SELECT DISTINCT u.id FROM unnest($2::bigint[]) u(id)) u \
             CROSS JOIN LATERAL (SELECT * FROM tickets t \
                WHERE t.workspace_id = $1 AND t.id = u.id OFFSET 0) t \
             JOIN projects p ON p.workspace_id = t.workspace_id AND p.id = t.project_id",
            &[&ws, &ids],
        )? {
            let status: String = row.try_get(3).map_err(crate::store::db)?;
            found.insert(
                row.try_get::<_, i64>(0).map_err(crate::store::db)?,
                TicketRef {
                    number: row.try_get(1).map_err(crate::store::db)?,
                    title: row.try_get(2).map_err(crate::store::db)?,
                    status: status_of(&status)?,
                },
            );
        }
        Ok(ids.iter().map(|id| found.get(id).cloned()).collect())
    }

    fn update_ticket(
        &mut self,
        id: i64,
        u: &TicketUpdate,
        actor: &str,
        at: &str,
    ) -> StoreResult<()> {
        let mut values: Vec<Param> = vec![
            Box::new(self.ws),
            Box::new(id),
            Box::new(actor.to_string()),
            Box::new(at.to_string()),
        ];
        let mut sets = vec!["updated_by = $3".to_string(), "updated_at = $4".to_string()];
        let mut push = |column: &str, value: Param| {
            values.push(value);
            sets.push(format!("{column} = ${}", values.len()));
        };
        if let Some(title) = &u.title {
            push("title", Box::new(title.clone()));
        }
        if let Some(description) = &u.description {
            push("description", Box::new(description.clone()));
        }
        if let Some(status) = u.status {
            push("status", Box::new(status.as_str()));
        }
        if let Some(points) = u.story_points {
            push("story_points", Box::new(points.map(i16::from)));
        }
        if let Some(parent) = u.parent_id {
            push("parent_id", Box::new(parent));
        }
        if let Some(epic) = u.epic_id {
            push("epic_id", Box::new(epic));
        }
        if let Some(kind) = u.kind {
            push("kind", Box::new(kind.as_str()));
        }
        if let Some(sprint) = u.sprint_id {
            push("sprint_id", Box::new(sprint));
        }
        if u.deleted {
            push("deleted_by", Box::new(actor.to_string()));
            push("deleted_at", Box::new(at.to_string()));
        }
        let sql = format!(
            "UPDATE tickets SET {} WHERE workspace_id = $1 AND id = $2",
            sets.join(", ")
        );
        let changed = self.execute(&sql, &refs(&values))?;
        self.expect_ticket(changed, id)
    }

    fn assignees(&mut self, id: i64) -> StoreResult<Vec<String>> {
        self.strings(ASSIGNEES_SQL, id)
    }

    fn set_assignees(
        &mut self,
        id: i64,
        assignees: &[String],
        actor: &str,
        at: &str,
    ) -> StoreResult<()> {
        let ws = self.ws;
        self.touched.push(id);
        let current = self.assignees(id)?;
        for gone in current.iter().filter(|a| !assignees.contains(a)) {
            self.execute(
                "DELETE FROM ticket_assignees \
                 WHERE workspace_id = $1 AND ticket_id = $2 AND assignee = $3",
                &[&ws, &id, gone],
            )?;
        }
        for new in assignees.iter().filter(|a| !current.contains(a)) {
            // The composite foreign key refuses a ticket of another workspace.
            self.execute(
                "INSERT INTO ticket_assignees \
                 (workspace_id, ticket_id, assignee, assigned_by, assigned_at) \
                 VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
                &[&ws, &id, new, &actor, &at],
            )?;
        }
        Ok(())
    }

    fn labels(&mut self, id: i64) -> StoreResult<Vec<String>> {
        self.strings(LABELS_SQL, id)
    }

    fn set_labels(&mut self, id: i64, labels: &[String]) -> StoreResult<()> {
        let ws = self.ws;
        self.touched.push(id);
        self.execute(
            "DELETE FROM ticket_labels WHERE workspace_id = $1 AND ticket_id = $2",
            &[&ws, &id],
        )?;
        for label in labels {
            self.execute(
                "INSERT INTO ticket_labels (workspace_id, ticket_id, label) VALUES ($1, $2, $3) \
                 ON CONFLICT DO NOTHING",
                &[&ws, &id, label],
            )?;
        }
        Ok(())
    }

    fn insert_comment(
        &mut self,
        id: i64,
        author: &str,
        content: &str,
        at: &str,
    ) -> StoreResult<Comment> {
        let ws = self.ws;
        self.touched.push(id);
        let uuid = uuid::Uuid::new_v4().to_string();
        self.execute(
            "INSERT INTO comments (workspace_id, uuid, ticket_id, author, content, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6)",
            &[&ws, &uuid, &id, &author, &content, &at],
        )?;
        Ok(Comment {
            id: uuid,
            author: author.to_string(),
            content: content.to_string(),
            created_at: at.to_string(),
        })
    }

    fn comments(&mut self, id: i64, limit: usize) -> StoreResult<(Vec<Comment>, usize)> {
        let ws = self.ws;
        let total: i64 = self
            .query_one(COMMENT_COUNT_SQL, &[&ws, &id])?
            .try_get(0)
            .map_err(crate::store::db)?;
        let limit = limit as i64;
        let mut comments = self
            .query(
                "SELECT uuid, author, content, created_at FROM comments \
                 WHERE workspace_id = $1 AND ticket_id = $2 ORDER BY id DESC LIMIT $3",
                &[&ws, &id, &limit],
            )?
            .iter()
            .map(|r| {
                Ok(Comment {
                    id: r.try_get(0).map_err(crate::store::db)?,
                    author: r.try_get(1).map_err(crate::store::db)?,
                    content: r.try_get(2).map_err(crate::store::db)?,
                    created_at: r.try_get(3).map_err(crate::store::db)?,
                })
            })
            .collect::<StoreResult<Vec<_>>>()?;
        comments.reverse();
        Ok((comments, count(total)))
    }

    fn add_dependency(&mut self, id: i64, on: i64, actor: &str, at: &str) -> StoreResult<bool> {
        let ws = self.ws;
        self.touched.extend([id, on]);
        // Both ends are checked against the workspace by the composite foreign keys.
        let inserted = self.execute(
            "INSERT INTO dependencies (workspace_id, ticket_id, depends_on_id, created_by, \
             created_at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
            &[&ws, &id, &on, &actor, &at],
        )?;
        Ok(inserted > 0)
    }

    fn remove_dependency(&mut self, id: i64, on: i64) -> StoreResult<bool> {
        let ws = self.ws;
        self.touched.extend([id, on]);
        let removed = self.execute(
            "DELETE FROM dependencies \
             WHERE workspace_id = $1 AND ticket_id = $2 AND depends_on_id = $3",
            &[&ws, &id, &on],
        )?;
        Ok(removed > 0)
    }

    fn dependency_ids(&mut self, id: i64) -> StoreResult<Vec<i64>> {
        self.ids(DEPENDENCY_IDS_SQL, id)
    }

    fn dependent_ids(&mut self, id: i64) -> StoreResult<Vec<i64>> {
        self.ids(DEPENDENT_IDS_SQL, id)
    }

    fn link_commit(
        &mut self,
        id: i64,
        hash: &str,
        message: Option<&str>,
        actor: &str,
        at: &str,
    ) -> StoreResult<bool> {
        let ws = self.ws;
        self.touched.push(id);
        let inserted = self.execute(
            "INSERT INTO commit_links (workspace_id, ticket_id, commit_hash, commit_message, \
             linked_by, linked_at) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING",
            &[&ws, &id, &hash, &message, &actor, &at],
        )?;
        Ok(inserted > 0)
    }

    fn commits(&mut self, id: i64) -> StoreResult<Vec<CommitLink>> {
        let ws = self.ws;
        self.query(
            "SELECT commit_hash, commit_message, linked_at, linked_by FROM commit_links \
             WHERE workspace_id = $1 AND ticket_id = $2 ORDER BY id",
            &[&ws, &id],
        )?
        .iter()
        .map(|r| {
            Ok(CommitLink {
                hash: r.try_get(0).map_err(crate::store::db)?,
                message: r.try_get(1).map_err(crate::store::db)?,
                linked_at: r.try_get(2).map_err(crate::store::db)?,
                linked_by: r.try_get(3).map_err(crate::store::db)?,
            })
        })
        .collect()
    }

    fn record_change(&mut self, id: i64, c: &NewChange<'_>) -> StoreResult<()> {
        let ws = self.ws;
        self.touched.push(id);
        self.execute(
            "INSERT INTO ticket_changes (workspace_id, ticket_id, change_type, old_value, \
             new_value, detail, message, changed_by, changed_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
            &[
                &ws,
                &id,
                &c.change_type,
                &c.old_value,
                &c.new_value,
                &c.detail,
                &c.message,
                &c.actor,
                &c.at,
            ],
        )?;
        Ok(())
    }

    fn changes(&mut self, id: i64, limit: usize) -> StoreResult<Vec<Change>> {
        let ws = self.ws;
        let limit = limit as i64;
        let sql = format!(
            "SELECT {CHANGE_COLUMNS} FROM ticket_changes \
             WHERE workspace_id = $1 AND ticket_id = $2 ORDER BY id DESC LIMIT $3"
        );
        self.query(&sql, &[&ws, &id, &limit])?
            .iter()
            .map(change_row)
            .collect()
    }

    fn description_versions(&mut self, id: i64) -> StoreResult<Vec<Change>> {
        let ws = self.ws;
        let sql = format!(
            "SELECT {CHANGE_COLUMNS} FROM ticket_changes \
             WHERE workspace_id = $1 AND ticket_id = $2 AND change_type = 'description_changed' \
             ORDER BY id"
        );
        self.query(&sql, &[&ws, &id])?
            .iter()
            .map(change_row)
            .collect()
    }

    fn list(
        &mut self,
        filter: &ListFilter,
        after: Option<i64>,
        limit: usize,
    ) -> StoreResult<ListPage> {
        let mut values: Vec<Param> = vec![Box::new(self.ws)];
        let mut bind = |value: Param| {
            values.push(value);
            format!("${}", values.len())
        };
        let mut conditions = vec![
            "t.workspace_id = $1".to_string(),
            "t.deleted_at IS NULL".to_string(),
        ];
        // Each filter on a ticket's labels or assignees is a probe of that ticket's rows
        // (`OFFSET 0` keeps the subquery correlated, its key whole in the index condition):
        // as a join, with no statistics yet, it was planned as a scan of every row of the
        // label for each ticket.
        for label in &filter.labels {
            let mark = bind(Box::new(label.clone()));
            conditions.push(format!(
                "EXISTS (SELECT 1 FROM ticket_labels l WHERE l.workspace_id = $1 \
                 AND l.ticket_id = t.id AND l.label = {mark} OFFSET 0)"
            ));
        }
        if let Some(assignee) = &filter.assignee {
            let mark = bind(Box::new(assignee.clone()));
            conditions.push(format!(
                "EXISTS (SELECT 1 FROM ticket_assignees a WHERE a.workspace_id = $1 \
                 AND a.ticket_id = t.id AND a.assignee = {mark} OFFSET 0)"
            ));
        }
        for (column, value) in [
            ("parent_id", filter.parent_id),
            ("epic_id", filter.epic_id),
            ("sprint_id", filter.sprint.flatten()),
        ] {
            let Some(value) = value else { continue };
            let mark = bind(Box::new(value));
            conditions.push(format!("t.{column} = {mark}"));
        }
        if filter.sprint == Some(None) {
            // The backlog: in no open sprint, and not done in a completed one (the sprint
            // probed by its key).
            conditions.push(
                "NOT EXISTS (SELECT 1 FROM sprints s WHERE s.workspace_id = $1 \
                 AND s.id = t.sprint_id AND (s.state <> 'completed' OR t.status = 'done') \
                 OFFSET 0)"
                    .to_string(),
            );
        }
        if filter.unassigned {
            conditions.push(
                "NOT EXISTS (SELECT 1 FROM ticket_assignees a WHERE a.workspace_id = $1 \
                 AND a.ticket_id = t.id OFFSET 0)"
                    .to_string(),
            );
        }
        let statuses: Vec<Status> = if filter.statuses.is_empty() {
            Status::ALL.to_vec()
        } else {
            filter.statuses.clone()
        };
        let status_marks: Vec<String> = statuses
            .iter()
            .map(|s| bind(Box::new(s.as_str())))
            .collect();
        let filter_sql = conditions.join(" AND ");
        let all_statuses = status_marks.join(", ");

        let count_cap = bind(Box::new((COUNT_CAP + 1) as i64));
        let total: i64 = {
            let sql = format!(
                "SELECT count(*) FROM (SELECT 1 FROM tickets t WHERE {filter_sql} \
                 AND t.status IN ({all_statuses}) LIMIT {count_cap}) c"
            );
            self.query_one(&sql, &refs(&values))?
                .try_get(0)
                .map_err(crate::store::db)?
        };
        // The count's cap is not a parameter of the page query.
        values.pop();
        let mut bind = |value: Param| {
            values.push(value);
            format!("${}", values.len())
        };
        let after_sql = after
            .map(|after| format!(" AND t.id < {}", bind(Box::new(after))))
            .unwrap_or_default();
        let page_limit = bind(Box::new((limit + 1) as i64));
        // Newest first. One index range per status (workspace, status, id), each read in
        // ticket order and cut at the page size, then merged: no sort of every match.
        let branches: Vec<String> = status_marks
            .iter()
            .map(|mark| {
                format!(
                    "(SELECT t.id FROM tickets t WHERE {filter_sql} AND t.status = {mark}\
                     {after_sql} ORDER BY t.id DESC LIMIT {page_limit})"
                )
            })
            .collect();
        let sql = format!(
            "SELECT t.id, {SUMMARY_COLUMNS} FROM \
             (SELECT id FROM ({}) ids ORDER BY id DESC LIMIT {page_limit}) page \
             CROSS JOIN LATERAL (SELECT * FROM tickets t \
                WHERE t.workspace_id = $1 AND t.id = page.id OFFSET 0) t \
             JOIN projects p ON p.workspace_id = t.workspace_id AND p.id = t.project_id \
             ORDER BY t.id DESC",
            branches.join(" UNION ALL ")
        );
        let mut rows = self
            .query(&sql, &refs(&values))?
            .iter()
            .map(|r| {
                Ok((
                    r.try_get::<_, i64>(0).map_err(crate::store::db)?,
                    summary_row(r, 1)?,
                ))
            })
            .collect::<StoreResult<Vec<_>>>()?;
        let next_after = if rows.len() > limit {
            rows.truncate(limit);
            rows.last().map(|(id, _)| *id)
        } else {
            None
        };
        let total = count(total);
        Ok(ListPage {
            items: rows.into_iter().map(|(_, s)| s).collect(),
            total: total.min(COUNT_CAP),
            total_exact: total <= COUNT_CAP,
            next_after,
        })
    }

    fn search(
        &mut self,
        terms: &SearchTerms,
        filter: &Filter,
        offset: usize,
        limit: usize,
    ) -> StoreResult<SearchPage> {
        search::search(self, terms, filter, offset, limit)
    }

    fn find(
        &mut self,
        filter: &Filter,
        sort: Sort,
        after: Option<&Position>,
        limit: usize,
    ) -> StoreResult<FoundPage> {
        find::find(self, filter, sort, after, limit)
    }

    fn find_rows(&mut self, filter: &Filter, limit: usize) -> StoreResult<Vec<TicketRow>> {
        find::find_rows(self, filter, limit)
    }

    fn names_of(&mut self, ids: &[i64]) -> StoreResult<Vec<(Vec<String>, Vec<String>)>> {
        many::names_of(self, ids)
    }

    fn update_tickets(
        &mut self,
        ids: &[i64],
        update: &TicketUpdate,
        actor: &str,
        at: &str,
    ) -> StoreResult<()> {
        many::update_tickets(self, ids, update, actor, at)
    }

    fn set_labels_of(&mut self, labels: &[(i64, Vec<String>)]) -> StoreResult<()> {
        many::set_labels_of(self, labels)
    }

    fn set_assignees_of(
        &mut self,
        assignees: &[(i64, Vec<String>)],
        actor: &str,
        at: &str,
    ) -> StoreResult<()> {
        many::set_assignees_of(self, assignees, actor, at)
    }

    fn record_changes(&mut self, changes: &[(i64, NewChange<'_>)]) -> StoreResult<()> {
        many::record_changes(self, changes)
    }
}
