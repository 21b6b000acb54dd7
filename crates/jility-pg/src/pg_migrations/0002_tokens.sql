-- Jility on PostgreSQL, schema version 2: API tokens.
--
-- A token is `jil_live_` and 40 random characters. Only its BLAKE3 hash (32 bytes, unique:
-- authentication finds a token by it) and a short display prefix (`jil_live_AbCd`) are
-- kept, so neither a dump nor a read of this table yields a usable token.
-- Times are RFC 3339 text in UTC with milliseconds (`2025-01-02T03:04:05.678Z`), as in the
-- first migration: that form also sorts and compares as text.

CREATE TABLE api_tokens (
    id             BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    workspace_id   BIGINT NOT NULL REFERENCES workspaces(id),
    name           TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
    token_hash     BYTEA NOT NULL CHECK (length(token_hash) = 32),
    display_prefix TEXT NOT NULL,
    scopes         TEXT[] NOT NULL CHECK (
        cardinality(scopes) > 0
        AND scopes <@ ARRAY['tickets:read', 'tickets:write', 'tickets:delete',
                            'comments:write', 'full_access']::TEXT[]
    ),
    created_by     TEXT NOT NULL,
    created_at     TEXT NOT NULL,
    expires_at     TEXT,
    revoked_at     TEXT,
    last_used_at   TEXT,
    UNIQUE (workspace_id, id)
);

CREATE UNIQUE INDEX api_tokens_hash ON api_tokens (token_hash);
CREATE INDEX api_tokens_workspace ON api_tokens (workspace_id, id);
