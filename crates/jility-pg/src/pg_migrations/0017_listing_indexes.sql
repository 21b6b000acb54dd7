-- A listing filtered by parent or epic reads each status's matching tickets newest first
-- (one index range per status, cut at the page), as an unfiltered listing does with
-- `tickets_live`: with only `(workspace_id, parent_id)` it read every child of the parent
-- for each status and sorted them, whatever the page's size. The new indexes serve every
-- lookup the old ones did.
DROP INDEX tickets_parent;
DROP INDEX tickets_epic;
CREATE INDEX tickets_parent ON tickets (workspace_id, parent_id, status, id)
    WHERE parent_id IS NOT NULL;
CREATE INDEX tickets_epic ON tickets (workspace_id, epic_id, status, id)
    WHERE epic_id IS NOT NULL;
