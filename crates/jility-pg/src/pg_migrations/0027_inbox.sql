-- The inbox: notifications of people and agents (mentions, assignments, handoffs, done
-- blockers, changes to what they watch), one per recipient, ticket and moment; and who
-- chose to watch a ticket, or not to. Names are matched without regard to case when a
-- mention is read: indexes for that. Also a webhook disabled after a day of failures is
-- told to the workspace's owners and admins here (no ticket).

CREATE TABLE notifications (
    id           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    workspace_id BIGINT NOT NULL REFERENCES workspaces(id),
    recipient    TEXT NOT NULL,
    kind         TEXT NOT NULL,
    priority     INT NOT NULL,
    ticket_id    BIGINT,
    actor        TEXT NOT NULL,
    summary      TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    read_at      TEXT,
    FOREIGN KEY (workspace_id, ticket_id) REFERENCES tickets (workspace_id, id)
);
CREATE UNIQUE INDEX notifications_once ON notifications (workspace_id, recipient, ticket_id, created_at);
CREATE INDEX notifications_inbox ON notifications (workspace_id, recipient, id);
CREATE INDEX notifications_unread ON notifications (workspace_id, recipient, id) WHERE read_at IS NULL;

CREATE TABLE watches (
    workspace_id BIGINT NOT NULL,
    ticket_id    BIGINT NOT NULL,
    person       TEXT NOT NULL,
    watching     BOOLEAN NOT NULL,
    at           TEXT NOT NULL,
    PRIMARY KEY (ticket_id, person),
    FOREIGN KEY (workspace_id, ticket_id) REFERENCES tickets (workspace_id, id)
);

-- The name leads: an index led by workspace_id would be one more way to scan a whole
-- workspace, which the planner (sequential scans off) may take for a listing.
CREATE INDEX ticket_assignees_by_lower_name ON ticket_assignees (lower(assignee), workspace_id);
CREATE INDEX tickets_by_creator ON tickets (lower(created_by), workspace_id);
CREATE INDEX comments_by_author ON comments (lower(author), workspace_id);

-- Who a mention may name besides those who act in the workspace: its members, by email,
-- or by name when the name is one word (as `@name` is written); each stands for the email
-- that a person's writes on the web carry.
CREATE VIEW workspace_people AS
    SELECT m.workspace_id, u.email AS alias, u.email AS person
    FROM memberships m JOIN users u ON u.id = m.user_id
    UNION ALL
    SELECT m.workspace_id, lower(u.name), u.email
    FROM memberships m JOIN users u ON u.id = m.user_id
    WHERE u.name !~ '\s';
