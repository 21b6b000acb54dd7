-- Schema 23: saved views — a query of the query language under a name, a person's own or
-- shared with the workspace. A name is its owner's once in a workspace (any case); the
-- domain also keeps it apart from the shared views its owner sees.
CREATE TABLE views (
    id           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    workspace_id BIGINT NOT NULL REFERENCES workspaces(id),
    name         TEXT NOT NULL,
    query        TEXT NOT NULL,
    owner        TEXT NOT NULL,
    shared       BOOLEAN NOT NULL DEFAULT false,
    created_at   TEXT NOT NULL
);
CREATE UNIQUE INDEX views_by_owner ON views (workspace_id, owner, lower(name));
CREATE INDEX views_shared ON views (workspace_id, lower(name)) WHERE shared;
