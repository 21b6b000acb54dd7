-- Planning. A ticket is a `ticket` or an `epic`; a project plans in sprints; a ticket is in
-- at most one sprint at a time (`sprint_id`), and a sprint remembers every ticket it ever
-- had (`sprint_tickets`), so its burndown can be replayed from the tickets' change logs.
-- Every row names its workspace, and every reference is a composite foreign key on it.

CREATE TABLE sprints (
    id                BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    workspace_id      BIGINT NOT NULL REFERENCES workspaces(id),
    project_id        BIGINT NOT NULL,
    number            BIGINT NOT NULL,
    name              TEXT NOT NULL,
    goal              TEXT,
    starts_on         TEXT NOT NULL,
    ends_on           TEXT NOT NULL,
    capacity_points   BIGINT CHECK (capacity_points > 0),
    state             TEXT NOT NULL DEFAULT 'planned' CHECK (state IN ('planned', 'active', 'completed')),
    started_at        TEXT,
    committed_points  BIGINT,
    committed_tickets BIGINT,
    completed_at      TEXT,
    completed_points  BIGINT,
    carried_over      BIGINT,
    created_by        TEXT NOT NULL,
    created_at        TEXT NOT NULL,
    UNIQUE (project_id, number),
    UNIQUE (project_id, name),
    UNIQUE (workspace_id, id),
    FOREIGN KEY (workspace_id, project_id) REFERENCES projects (workspace_id, id),
    CHECK (ends_on >= starts_on)
);
-- One active sprint a project.
CREATE UNIQUE INDEX sprints_one_active ON sprints (project_id) WHERE state = 'active';

CREATE TABLE sprint_tickets (
    workspace_id BIGINT NOT NULL,
    sprint_id    BIGINT NOT NULL,
    ticket_id    BIGINT NOT NULL,
    PRIMARY KEY (sprint_id, ticket_id),
    FOREIGN KEY (workspace_id, sprint_id) REFERENCES sprints (workspace_id, id),
    FOREIGN KEY (workspace_id, ticket_id) REFERENCES tickets (workspace_id, id)
);

ALTER TABLE tickets ADD COLUMN kind TEXT NOT NULL DEFAULT 'ticket' CHECK (kind IN ('ticket', 'epic'));
ALTER TABLE tickets ADD COLUMN sprint_id BIGINT;
ALTER TABLE tickets ADD FOREIGN KEY (workspace_id, sprint_id) REFERENCES sprints (workspace_id, id);
CREATE INDEX tickets_sprint ON tickets (workspace_id, sprint_id, status, id) WHERE sprint_id IS NOT NULL;
CREATE INDEX tickets_epics ON tickets (workspace_id, id) WHERE kind = 'epic' AND deleted_at IS NULL;
-- The changes of a ticket by type (a burndown reads a few types of many tickets).
CREATE INDEX ticket_changes_by_type ON ticket_changes (ticket_id, change_type, id);

-- Every ticket another ticket names as its epic is an epic.
UPDATE tickets t SET kind = 'epic'
WHERE EXISTS (SELECT 1 FROM tickets m WHERE m.workspace_id = t.workspace_id AND m.epic_id = t.id);
