-- Jility schema, version 4: labels and assignees take their ticket's status and liveness when
-- inserted, whoever inserts them. (Version 3 copied them on update only, so a row inserted by
-- a still-running older jility kept the column defaults and fell out of filtered listings.)

CREATE TRIGGER ticket_labels_copy_status AFTER INSERT ON ticket_labels
BEGIN
    UPDATE ticket_labels
    SET status = (SELECT status FROM tickets WHERE id = new.ticket_id),
        live = (SELECT deleted_at IS NULL FROM tickets WHERE id = new.ticket_id)
    WHERE ticket_id = new.ticket_id AND label = new.label;
END;

CREATE TRIGGER ticket_assignees_copy_status AFTER INSERT ON ticket_assignees
BEGIN
    UPDATE ticket_assignees
    SET status = (SELECT status FROM tickets WHERE id = new.ticket_id),
        live = (SELECT deleted_at IS NULL FROM tickets WHERE id = new.ticket_id)
    WHERE ticket_id = new.ticket_id AND assignee = new.assignee;
END;

-- Rows an older jility inserted since version 3 are corrected once.
UPDATE ticket_labels SET status = t.status, live = (t.deleted_at IS NULL)
FROM tickets t WHERE t.id = ticket_labels.ticket_id
  AND (ticket_labels.status != t.status OR ticket_labels.live != (t.deleted_at IS NULL));
UPDATE ticket_assignees SET status = t.status, live = (t.deleted_at IS NULL)
FROM tickets t WHERE t.id = ticket_assignees.ticket_id
  AND (ticket_assignees.status != t.status OR ticket_assignees.live != (t.deleted_at IS NULL));
