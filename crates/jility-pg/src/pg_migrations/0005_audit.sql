-- Jility on PostgreSQL, schema version 5: the audit log.
--
-- One row per write through the API (tickets created, commented, deleted; tokens created,
-- revoked), whether it succeeded or was refused after authentication, and one per
-- authentication failure. An authentication failure whose token belongs to no workspace
-- (unknown, malformed, missing) has no workspace. `status` is the HTTP status answered;
-- `detail` a short note (for an authentication failure its reason). No row ever holds a
-- token. Times are RFC 3339 text in UTC with milliseconds, as in the other tables.

CREATE TABLE audit_log (
    id           BIGSERIAL PRIMARY KEY,
    workspace_id BIGINT REFERENCES workspaces(id),
    at           TEXT NOT NULL,
    token_id     BIGINT,
    actor        TEXT,
    operation    TEXT NOT NULL CHECK (length(operation) BETWEEN 1 AND 64),
    ticket       TEXT,
    status       INTEGER NOT NULL,
    detail       TEXT
);

CREATE INDEX audit_log_workspace ON audit_log (workspace_id, id);
