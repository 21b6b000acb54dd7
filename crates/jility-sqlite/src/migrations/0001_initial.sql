-- Jility schema, version 1: projects, tickets and everything that hangs off them.
-- Integer keys for joins; every ticket and comment also has a UUID that never changes.

CREATE TABLE projects (
    id          INTEGER PRIMARY KEY,
    key         TEXT NOT NULL UNIQUE,
    name        TEXT NOT NULL,
    next_number INTEGER NOT NULL DEFAULT 1,
    created_at  TEXT NOT NULL
);

CREATE TABLE tickets (
    id           INTEGER PRIMARY KEY,
    uuid         TEXT NOT NULL UNIQUE,
    project_id   INTEGER NOT NULL REFERENCES projects(id),
    number       INTEGER NOT NULL,
    title        TEXT NOT NULL,
    description  TEXT NOT NULL DEFAULT '',
    status       TEXT NOT NULL CHECK (status IN ('backlog', 'todo', 'in_progress', 'review', 'done', 'blocked')),
    story_points INTEGER CHECK (story_points BETWEEN 1 AND 13),
    parent_id    INTEGER REFERENCES tickets(id),
    epic_id      INTEGER REFERENCES tickets(id),
    created_by   TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    updated_by   TEXT NOT NULL,
    updated_at   TEXT NOT NULL,
    deleted_by   TEXT,
    deleted_at   TEXT,
    UNIQUE (project_id, number)
);
CREATE INDEX tickets_status ON tickets(status);
CREATE INDEX tickets_parent ON tickets(parent_id) WHERE parent_id IS NOT NULL;
CREATE INDEX tickets_epic ON tickets(epic_id) WHERE epic_id IS NOT NULL;

CREATE TABLE ticket_assignees (
    ticket_id   INTEGER NOT NULL REFERENCES tickets(id),
    assignee    TEXT NOT NULL,
    assigned_by TEXT NOT NULL,
    assigned_at TEXT NOT NULL,
    PRIMARY KEY (ticket_id, assignee)
) WITHOUT ROWID;
CREATE INDEX ticket_assignees_by_name ON ticket_assignees(assignee, ticket_id);

CREATE TABLE ticket_labels (
    ticket_id INTEGER NOT NULL REFERENCES tickets(id),
    label     TEXT NOT NULL,
    PRIMARY KEY (ticket_id, label)
) WITHOUT ROWID;
CREATE INDEX ticket_labels_by_label ON ticket_labels(label, ticket_id);

CREATE TABLE comments (
    id         INTEGER PRIMARY KEY,
    uuid       TEXT NOT NULL UNIQUE,
    ticket_id  INTEGER NOT NULL REFERENCES tickets(id),
    author     TEXT NOT NULL,
    content    TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX comments_by_ticket ON comments(ticket_id, id);

CREATE TABLE dependencies (
    ticket_id     INTEGER NOT NULL REFERENCES tickets(id),
    depends_on_id INTEGER NOT NULL REFERENCES tickets(id),
    created_by    TEXT NOT NULL,
    created_at    TEXT NOT NULL,
    PRIMARY KEY (ticket_id, depends_on_id),
    CHECK (ticket_id != depends_on_id)
) WITHOUT ROWID;
CREATE INDEX dependencies_reverse ON dependencies(depends_on_id, ticket_id);

CREATE TABLE commit_links (
    id             INTEGER PRIMARY KEY,
    ticket_id      INTEGER NOT NULL REFERENCES tickets(id),
    commit_hash    TEXT NOT NULL,
    commit_message TEXT,
    linked_by      TEXT NOT NULL,
    linked_at      TEXT NOT NULL,
    UNIQUE (ticket_id, commit_hash)
);

-- Every change to a ticket. Description changes keep the whole old and new text, so the
-- versions of a description are the rows of type description_changed in id order.
CREATE TABLE ticket_changes (
    id          INTEGER PRIMARY KEY,
    ticket_id   INTEGER NOT NULL REFERENCES tickets(id),
    change_type TEXT NOT NULL,
    old_value   TEXT,
    new_value   TEXT,
    detail      TEXT,
    message     TEXT,
    changed_by  TEXT NOT NULL,
    changed_at  TEXT NOT NULL
);
CREATE INDEX ticket_changes_by_ticket ON ticket_changes(ticket_id, id);
CREATE INDEX ticket_changes_versions ON ticket_changes(ticket_id, id) WHERE change_type = 'description_changed';
