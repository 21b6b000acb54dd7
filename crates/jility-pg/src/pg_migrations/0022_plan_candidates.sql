-- Schema 22: the planner reads a project's backlog and todo tickets in order (todo, then
-- backlog, oldest first) a chunk at a time and stops once the sprint is full; this index is
-- that order, so a chunk reads about what it returns whatever the statistics say.
CREATE INDEX tickets_plan_candidates ON tickets (workspace_id, project_id, status, id)
    WHERE deleted_at IS NULL AND kind = 'ticket';
