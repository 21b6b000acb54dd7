-- Jility schema, version 5: planning. A ticket is a `ticket` or an `epic`; a project plans
-- in sprints; a ticket is in at most one sprint at a time (`sprint_id`), and a sprint
-- remembers every ticket it ever had (`sprint_tickets`), so its burndown can be replayed
-- from the tickets' change logs.

CREATE TABLE sprints (
    id                INTEGER PRIMARY KEY,
    project_id        INTEGER NOT NULL REFERENCES projects(id),
    number            INTEGER NOT NULL,
    name              TEXT NOT NULL,
    goal              TEXT,
    starts_on         TEXT NOT NULL,
    ends_on           TEXT NOT NULL,
    capacity_points   INTEGER CHECK (capacity_points > 0),
    state             TEXT NOT NULL DEFAULT 'planned' CHECK (state IN ('planned', 'active', 'completed')),
    started_at        TEXT,
    committed_points  INTEGER,
    committed_tickets INTEGER,
    completed_at      TEXT,
    completed_points  INTEGER,
    carried_over      INTEGER,
    created_by        TEXT NOT NULL,
    created_at        TEXT NOT NULL,
    UNIQUE (project_id, number),
    UNIQUE (project_id, name),
    CHECK (ends_on >= starts_on)
);
-- One active sprint a project.
CREATE UNIQUE INDEX sprints_one_active ON sprints(project_id) WHERE state = 'active';

CREATE TABLE sprint_tickets (
    sprint_id INTEGER NOT NULL REFERENCES sprints(id),
    ticket_id INTEGER NOT NULL REFERENCES tickets(id),
    PRIMARY KEY (sprint_id, ticket_id)
);

ALTER TABLE tickets ADD COLUMN kind TEXT NOT NULL DEFAULT 'ticket' CHECK (kind IN ('ticket', 'epic'));
ALTER TABLE tickets ADD COLUMN sprint_id INTEGER REFERENCES sprints(id);
CREATE INDEX tickets_sprint ON tickets(sprint_id, id) WHERE sprint_id IS NOT NULL;
CREATE INDEX tickets_epics ON tickets(id) WHERE kind = 'epic' AND deleted_at IS NULL;

-- Every ticket another ticket names as its epic is an epic.
UPDATE tickets SET kind = 'epic'
WHERE id IN (SELECT epic_id FROM tickets WHERE epic_id IS NOT NULL);
