-- Jility on PostgreSQL, schema version 11: people (accounts, memberships, web sessions,
-- invites, password resets, failed sign-ins).
--
-- No secret is kept in clear: passwords as Argon2id PHC strings (`$argon2id$…`), the
-- secrets of sessions, invites and resets as their BLAKE3 hash (32 bytes, uniquely
-- indexed: each is found in one indexed lookup). Emails are stored lower-cased, so their
-- uniqueness is case-insensitive. Times are RFC 3339 text in UTC with milliseconds, as in
-- the other tables (they compare and sort as text).

CREATE TABLE users (
    id            BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    email         TEXT NOT NULL CHECK (email = lower(email) AND length(email) BETWEEN 3 AND 254),
    name          TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
    -- NULL: no password yet (sign-in impossible until a reset or an invite sets one).
    password_hash TEXT CHECK (password_hash LIKE '$argon2id$%'),
    created_at    TEXT NOT NULL
);

CREATE UNIQUE INDEX users_email ON users (email);

CREATE TABLE memberships (
    workspace_id BIGINT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    user_id      BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    role         TEXT NOT NULL CHECK (role IN ('owner', 'admin', 'member', 'viewer')),
    created_at   TEXT NOT NULL,
    PRIMARY KEY (workspace_id, user_id)
);

CREATE INDEX memberships_user ON memberships (user_id);

-- Signed-in browsers. The cookie holds the secret; `last_seen_at` is written at most once
-- a minute per session.
CREATE TABLE web_sessions (
    id           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    secret_hash  BYTEA NOT NULL CHECK (length(secret_hash) = 32),
    user_id      BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at   TEXT NOT NULL,
    expires_at   TEXT NOT NULL,
    last_seen_at TEXT NOT NULL
);

CREATE UNIQUE INDEX web_sessions_secret ON web_sessions (secret_hash);
CREATE INDEX web_sessions_user ON web_sessions (user_id);

-- Links that make their holder a member (single use). `created_by` NULL: the admin
-- command line.
CREATE TABLE invites (
    id           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    workspace_id BIGINT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    role         TEXT NOT NULL CHECK (role IN ('owner', 'admin', 'member', 'viewer')),
    secret_hash  BYTEA NOT NULL CHECK (length(secret_hash) = 32),
    created_by   BIGINT REFERENCES users(id) ON DELETE SET NULL,
    created_at   TEXT NOT NULL,
    expires_at   TEXT NOT NULL,
    accepted_at  TEXT,
    accepted_by  BIGINT REFERENCES users(id) ON DELETE SET NULL,
    revoked_at   TEXT
);

CREATE UNIQUE INDEX invites_secret ON invites (secret_hash);
CREATE INDEX invites_workspace ON invites (workspace_id, id);

-- Links that set a user's password (single use; a new one voids the older ones).
-- `created_by` NULL: the admin command line.
CREATE TABLE password_resets (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id     BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    secret_hash BYTEA NOT NULL CHECK (length(secret_hash) = 32),
    created_by  BIGINT REFERENCES users(id) ON DELETE SET NULL,
    created_at  TEXT NOT NULL,
    expires_at  TEXT NOT NULL,
    used_at     TEXT,
    voided_at   TEXT
);

CREATE UNIQUE INDEX password_resets_secret ON password_resets (secret_hash);
CREATE INDEX password_resets_user ON password_resets (user_id);

-- Failed (and in-flight) sign-ins, for the sliding windows of the login limits: one row per
-- attempt and key, `email:` + the BLAKE3 hash of the lower-cased email (known or not: the
-- limit says nothing about whether an account exists) or `addr:` + the client's address
-- (an IPv6 address by its /64). Unlogged, like the request counts: after a crash every
-- key starts afresh.
CREATE UNLOGGED TABLE login_failures (
    id  BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    key TEXT NOT NULL,
    at  TEXT NOT NULL
);

CREATE INDEX login_failures_key ON login_failures (key, at);
CREATE INDEX login_failures_at ON login_failures (at);

-- Tokens show who minted them: the person, when a person did (`created_by` keeps the name).
ALTER TABLE api_tokens ADD COLUMN created_by_user BIGINT REFERENCES users(id) ON DELETE SET NULL;
