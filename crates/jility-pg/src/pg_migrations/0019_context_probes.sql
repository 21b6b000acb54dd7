-- A ticket context is computed from probes of each ticket's own rows (issue 41): the
-- tickets by their whole key, one at a time (`unnest`, never `id = ANY(…)`, which a plan
-- made without statistics left as a filter over the workspace's every ticket), and each
-- neighbour by its whole key, so that refreshing the contexts of a batch just imported reads
-- what it computes, whatever PostgreSQL's statistics say.
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
              CROSS JOIN LATERAL (SELECT o.project_id, o.number FROM tickets o
                  WHERE o.workspace_id = ws AND o.id = d.depends_on_id OFFSET 0) o
              WHERE d.workspace_id = ws AND d.ticket_id = t.id
              ORDER BY o.project_id, o.number),
        ARRAY(SELECT d.ticket_id FROM dependencies d
              CROSS JOIN LATERAL (SELECT o.project_id, o.number FROM tickets o
                  WHERE o.workspace_id = ws AND o.id = d.ticket_id OFFSET 0) o
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
    FROM (SELECT DISTINCT u.id FROM unnest(ids) u(id)) u
    CROSS JOIN LATERAL (SELECT * FROM tickets t
        WHERE t.workspace_id = ws AND t.id = u.id OFFSET 0) t
    -- Rows in one order, so that refreshes racing from two processes cannot deadlock.
    ORDER BY t.id
$$;
