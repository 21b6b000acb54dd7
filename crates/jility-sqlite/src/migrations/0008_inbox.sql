-- Jility schema, version 8: the inbox. Notifications of people and agents (mentions,
-- assignments, handoffs, done blockers, changes to what they watch), one per recipient,
-- ticket and moment; and who chose to watch a ticket, or not to. Names are matched
-- without regard to case when a mention is read: indexes for that.
CREATE TABLE notifications (
    id         INTEGER PRIMARY KEY,
    recipient  TEXT NOT NULL,
    kind       TEXT NOT NULL,
    priority   INTEGER NOT NULL,
    ticket_id  INTEGER NOT NULL REFERENCES tickets(id),
    actor      TEXT NOT NULL,
    summary    TEXT NOT NULL,
    created_at TEXT NOT NULL,
    read_at    TEXT
);
CREATE UNIQUE INDEX notifications_once ON notifications (recipient, ticket_id, created_at);
CREATE INDEX notifications_inbox ON notifications (recipient, id);
CREATE INDEX notifications_unread ON notifications (recipient, id) WHERE read_at IS NULL;

CREATE TABLE watches (
    ticket_id INTEGER NOT NULL REFERENCES tickets(id),
    person    TEXT NOT NULL,
    watching  INTEGER NOT NULL CHECK (watching IN (0, 1)),
    at        TEXT NOT NULL,
    PRIMARY KEY (ticket_id, person)
);

CREATE INDEX ticket_assignees_by_name_nocase ON ticket_assignees (assignee COLLATE NOCASE);
CREATE INDEX tickets_by_creator ON tickets (created_by COLLATE NOCASE);
CREATE INDEX comments_by_author ON comments (author COLLATE NOCASE);
