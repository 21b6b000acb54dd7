-- Kept ticket contexts (migration 15) are no longer refreshed inside the writes, under the
-- workspace's writer lock: a write only bumps the touched tickets' `context_version` (one
-- cheap update in the round trip of its COMMIT), and a refresh stores the version its
-- snapshot saw beside the context it computed. A read uses a kept context only when its
-- version is the ticket's current one, in the read's own snapshot: otherwise it reads the
-- parts one by one, as for a ticket without a kept context, and asks for a refresh. Every
-- write that changes what a context holds bumps the version of each ticket it touched in
-- the same transaction (a ticket it created starts at 0, which no context predates), so a
-- context whose version matches was computed from exactly the rows the read sees.

ALTER TABLE tickets ADD COLUMN context_version BIGINT NOT NULL DEFAULT 0;
-- The contexts kept so far were refreshed inside their writes: current at version 0.
ALTER TABLE ticket_contexts ADD COLUMN version BIGINT NOT NULL DEFAULT 0;

CREATE OR REPLACE FUNCTION jility_ticket_contexts(ws BIGINT, ids BIGINT[])
RETURNS SETOF ticket_contexts
LANGUAGE sql STABLE
AS $$
    SELECT t.workspace_id, t.id,
        ARRAY(SELECT assignee FROM ticket_assignees
              WHERE workspace_id = ws AND ticket_id = t.id
              ORDER BY assigned_at COLLATE "C", assignee COLLATE "C"),
        ARRAY(SELECT label FROM ticket_labels
              WHERE workspace_id = ws AND ticket_id = t.id ORDER BY label COLLATE "C"),
        (SELECT count(*) FROM comments WHERE workspace_id = ws AND ticket_id = t.id),
        ARRAY(SELECT d.depends_on_id FROM dependencies d
              JOIN tickets o ON o.workspace_id = d.workspace_id AND o.id = d.depends_on_id
              WHERE d.workspace_id = ws AND d.ticket_id = t.id
              ORDER BY o.project_id, o.number),
        ARRAY(SELECT d.ticket_id FROM dependencies d
              JOIN tickets o ON o.workspace_id = d.workspace_id AND o.id = d.ticket_id
              WHERE d.workspace_id = ws AND d.depends_on_id = t.id
              ORDER BY o.project_id, o.number),
        (SELECT json_agg(c ORDER BY c.seq DESC)::text FROM (SELECT id AS seq,
            uuid AS id, author, content, created_at
            FROM comments WHERE workspace_id = ws AND ticket_id = t.id
            ORDER BY seq DESC LIMIT 50) c),
        (SELECT json_agg(c ORDER BY c.seq)::text FROM (SELECT id AS seq,
            commit_hash AS hash, commit_message AS message, linked_at, linked_by
            FROM commit_links WHERE workspace_id = ws AND ticket_id = t.id) c),
        (SELECT json_agg(c ORDER BY c.seq DESC)::text FROM (SELECT id AS seq,
            change_type AS type, old_value, new_value, detail, message, changed_by,
            changed_at FROM ticket_changes WHERE workspace_id = ws AND ticket_id = t.id
            ORDER BY seq DESC LIMIT 20) c),
        t.context_version
    FROM tickets t
    WHERE t.workspace_id = ws AND t.id = ANY(ids)
    -- Rows in one order, so that refreshes racing from two processes cannot deadlock.
    ORDER BY t.id
$$;

-- Store the contexts of tickets `ids` of workspace `ws` as of now, each with the version it
-- was computed at; a context kept at a newer version (a refresh that ran later but
-- finished first) stays.
CREATE OR REPLACE FUNCTION jility_refresh_contexts(ws BIGINT, ids BIGINT[])
RETURNS void
LANGUAGE plpgsql
AS $$
BEGIN
    INSERT INTO ticket_contexts
    SELECT * FROM jility_ticket_contexts(ws, ids)
    ON CONFLICT (ticket_id) DO UPDATE SET
        assignees = EXCLUDED.assignees,
        labels = EXCLUDED.labels,
        comment_count = EXCLUDED.comment_count,
        dependency_ids = EXCLUDED.dependency_ids,
        dependent_ids = EXCLUDED.dependent_ids,
        comments = EXCLUDED.comments,
        commits = EXCLUDED.commits,
        changes = EXCLUDED.changes,
        version = EXCLUDED.version
    WHERE ticket_contexts.workspace_id = EXCLUDED.workspace_id
        AND ticket_contexts.version < EXCLUDED.version;
END
$$;
