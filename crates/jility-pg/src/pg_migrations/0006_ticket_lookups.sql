-- A ticket's labels and assignees are looked up by (workspace_id, ticket_id); the primary
-- keys start with ticket_id alone, so without statistics (a fresh import, no autovacuum)
-- the planner scanned the workspace's whole by-name index instead. These indexes serve the
-- lookup as written.
CREATE INDEX ticket_labels_by_ticket ON ticket_labels (workspace_id, ticket_id, label);
CREATE INDEX ticket_assignees_by_ticket ON ticket_assignees (workspace_id, ticket_id, assignee);
