-- Jility schema, version 3: listings that stay fast on large projects.
-- Labels and assignees carry their ticket's status and liveness, so a filter on a label
-- (or an assignee) and statuses is one range of one index, in ticket order; a trigger keeps
-- the copies in step with the ticket.

ALTER TABLE ticket_labels ADD COLUMN status TEXT NOT NULL DEFAULT 'backlog';
ALTER TABLE ticket_labels ADD COLUMN live INTEGER NOT NULL DEFAULT 1;
UPDATE ticket_labels SET status = t.status, live = (t.deleted_at IS NULL)
FROM tickets t WHERE t.id = ticket_labels.ticket_id;

ALTER TABLE ticket_assignees ADD COLUMN status TEXT NOT NULL DEFAULT 'backlog';
ALTER TABLE ticket_assignees ADD COLUMN live INTEGER NOT NULL DEFAULT 1;
UPDATE ticket_assignees SET status = t.status, live = (t.deleted_at IS NULL)
FROM tickets t WHERE t.id = ticket_assignees.ticket_id;

DROP INDEX ticket_labels_by_label;
CREATE INDEX ticket_labels_live ON ticket_labels(label, status, ticket_id) WHERE live = 1;
DROP INDEX ticket_assignees_by_name;
CREATE INDEX ticket_assignees_live ON ticket_assignees(assignee, status, ticket_id) WHERE live = 1;
DROP INDEX tickets_status;
CREATE INDEX tickets_live ON tickets(status, id) WHERE deleted_at IS NULL;

CREATE TRIGGER tickets_copy_status AFTER UPDATE OF status, deleted_at ON tickets
BEGIN
    UPDATE ticket_labels SET status = new.status, live = (new.deleted_at IS NULL)
    WHERE ticket_id = new.id;
    UPDATE ticket_assignees SET status = new.status, live = (new.deleted_at IS NULL)
    WHERE ticket_id = new.id;
END;
