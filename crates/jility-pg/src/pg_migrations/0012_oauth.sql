-- Jility on PostgreSQL, schema version 12: OAuth 2.1 for MCP clients (the MCP
-- authorization spec): registered clients, authorization codes, grants, refresh tokens.
--
-- A grant is what a person approved for a client in one workspace (its scopes, bound to
-- this server's `/mcp` as the resource). Its access tokens are rows of `api_tokens` with
-- `oauth_grant_id` set (short-lived; authenticated, rate-limited, audited and revoked as
-- every token is); its refresh tokens rotate here, one family per grant. As elsewhere, no
-- secret is kept in clear: codes and refresh tokens as their BLAKE3 hash.

-- A client: registered dynamically (RFC 7591; `client_id` minted here) or known by its
-- Client ID Metadata Document (`client_id` is the document's HTTPS URL, fetched and kept).
-- A client unused for 30 days is forgotten with what it was granted.
CREATE TABLE oauth_clients (
    id            BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    client_id     TEXT NOT NULL CHECK (length(client_id) BETWEEN 1 AND 2048),
    kind          TEXT NOT NULL CHECK (kind IN ('registered', 'metadata_document')),
    name          TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    client_uri    TEXT,
    redirect_uris TEXT[] NOT NULL CHECK (cardinality(redirect_uris) BETWEEN 1 AND 10),
    created_at    TEXT NOT NULL,
    fetched_at    TEXT,
    last_used_at  TEXT NOT NULL
);

CREATE UNIQUE INDEX oauth_clients_client_id ON oauth_clients (client_id);
CREATE INDEX oauth_clients_last_used ON oauth_clients (last_used_at);

-- What a person approved for a client in a workspace. Revoked (by the person, an admin,
-- or the reuse of a rotated refresh token or of a used code): every token of it is.
CREATE TABLE oauth_grants (
    id             BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    client_id      BIGINT NOT NULL REFERENCES oauth_clients(id) ON DELETE CASCADE,
    user_id        BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    workspace_id   BIGINT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    scopes         TEXT[] NOT NULL CHECK (
        cardinality(scopes) > 0
        AND scopes <@ ARRAY['tickets:read', 'tickets:write', 'tickets:delete',
                            'comments:write']::TEXT[]
    ),
    resource       TEXT NOT NULL,
    created_at     TEXT NOT NULL,
    last_used_at   TEXT NOT NULL,
    revoked_at     TEXT,
    revoked_reason TEXT
);

CREATE INDEX oauth_grants_workspace ON oauth_grants (workspace_id, id);
CREATE INDEX oauth_grants_user ON oauth_grants (user_id);

-- Authorization codes: single use, short-lived, bound to the client, redirect URI, PKCE
-- challenge (S256) and resource. `grant_id`: what the code's exchange issued (revoked if
-- the code is presented again).
CREATE TABLE oauth_codes (
    id             BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    code_hash      BYTEA NOT NULL CHECK (length(code_hash) = 32),
    client_id      BIGINT NOT NULL REFERENCES oauth_clients(id) ON DELETE CASCADE,
    user_id        BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    workspace_id   BIGINT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    scopes         TEXT[] NOT NULL,
    redirect_uri   TEXT NOT NULL,
    code_challenge TEXT NOT NULL,
    resource       TEXT NOT NULL,
    created_at     TEXT NOT NULL,
    expires_at     TEXT NOT NULL,
    used_at        TEXT,
    grant_id       BIGINT REFERENCES oauth_grants(id) ON DELETE CASCADE
);

CREATE UNIQUE INDEX oauth_codes_hash ON oauth_codes (code_hash);
CREATE INDEX oauth_codes_expires ON oauth_codes (expires_at);

-- Refresh tokens: each used once (rotated); a used one presented again revokes its grant.
CREATE TABLE oauth_refresh_tokens (
    id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    grant_id   BIGINT NOT NULL REFERENCES oauth_grants(id) ON DELETE CASCADE,
    token_hash BYTEA NOT NULL CHECK (length(token_hash) = 32),
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    used_at    TEXT
);

CREATE UNIQUE INDEX oauth_refresh_tokens_hash ON oauth_refresh_tokens (token_hash);
CREATE INDEX oauth_refresh_tokens_grant ON oauth_refresh_tokens (grant_id);

-- Access tokens of a grant are API tokens of its workspace, marked with it.
ALTER TABLE api_tokens ADD COLUMN oauth_grant_id BIGINT REFERENCES oauth_grants(id) ON DELETE CASCADE;
ALTER TABLE api_tokens ADD COLUMN resource TEXT;
CREATE INDEX api_tokens_grant ON api_tokens (oauth_grant_id) WHERE oauth_grant_id IS NOT NULL;

-- Dynamic registrations per client address, for their rate limit (unlogged, like the
-- other sliding windows).
CREATE UNLOGGED TABLE oauth_registrations (
    id  BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    key TEXT NOT NULL,
    at  TEXT NOT NULL
);

CREATE INDEX oauth_registrations_key ON oauth_registrations (key, at);
