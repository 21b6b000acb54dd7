-- Everything a whole-ticket read shows beside the ticket's own row, kept ready: its
-- assignees and labels, how many comments it has and the newest 50, its linked commits, its
-- newest 20 changes, and the ids of the tickets it depends on and that depend on it (deleted
-- ones included: a read drops those, since deletion is on the neighbour's row). A write
-- refreshes the rows of the tickets it touched in its own transaction, under the
-- workspace's writer lock (`jility_refresh_contexts`), so a read of a ticket is one index
-- probe here instead of a dozen probes and JSON aggregates. Titles and statuses of the
-- neighbours a ticket names are read live, since any write to a neighbour changes them.

CREATE TABLE ticket_contexts (
    workspace_id   BIGINT NOT NULL,
    ticket_id      BIGINT PRIMARY KEY,
    assignees      TEXT[] NOT NULL,
    labels         TEXT[] NOT NULL,
    comment_count  BIGINT NOT NULL,
    dependency_ids BIGINT[] NOT NULL,
    dependent_ids  BIGINT[] NOT NULL,
    -- JSON arrays (NULL: none), newest first for comments and changes, in `seq` order.
    comments       TEXT,
    commits        TEXT,
    changes        TEXT,
    FOREIGN KEY (workspace_id, ticket_id) REFERENCES tickets (workspace_id, id)
);

-- The contexts of tickets `ids` of workspace `ws`, computed from their rows now (what a
-- refresh writes). A ticket without a kept row is read part by part, in a transaction.
CREATE FUNCTION jility_ticket_contexts(ws BIGINT, ids BIGINT[])
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
            ORDER BY seq DESC LIMIT 20) c)
    FROM tickets t
    WHERE t.workspace_id = ws AND t.id = ANY(ids)
$$;

-- Recompute the kept contexts of tickets `ids` of workspace `ws`: called by a write before
-- it commits, for every ticket it touched. PL/pgSQL, so that its statement is planned once
-- per connection (a SQL function's body is planned on every call: a quarter of its cost).
CREATE FUNCTION jility_refresh_contexts(ws BIGINT, ids BIGINT[])
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
        changes = EXCLUDED.changes
    WHERE ticket_contexts.workspace_id = EXCLUDED.workspace_id;
END
$$;

-- The tickets there are now.
INSERT INTO ticket_contexts
SELECT c.* FROM workspaces w,
    LATERAL jility_ticket_contexts(w.id, ARRAY(SELECT id FROM tickets WHERE workspace_id = w.id)) c;
