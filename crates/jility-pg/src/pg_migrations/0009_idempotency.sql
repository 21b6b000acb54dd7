-- Jility on PostgreSQL, schema version 9: idempotency keys of writes.
--
-- A write sent with an `Idempotency-Key` header leaves a row here, inserted in the same
-- transaction as the write itself (the write's commit is held until the answer is known):
-- either both are committed or neither, so a client that retries after losing the answer
-- (the server crashed after commit) is answered the first answer instead of writing again.
-- A key belongs to one token of one workspace. `fingerprint` is the BLAKE3 hash of the
-- request (method, path, query, canonical JSON body): the same key with another request is
-- refused. Rows are kept 24 hours (`created_at`, the database's clock), then pruned by the
-- workspace's next keyed write.

CREATE TABLE idempotency_keys (
    workspace_id BIGINT NOT NULL REFERENCES workspaces(id),
    token_id     BIGINT NOT NULL,
    key          TEXT NOT NULL CHECK (length(key) BETWEEN 1 AND 255),
    fingerprint  BYTEA NOT NULL CHECK (length(fingerprint) = 32),
    status       SMALLINT NOT NULL,
    body         TEXT NOT NULL,
    created_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (workspace_id, token_id, key),
    FOREIGN KEY (workspace_id, token_id) REFERENCES api_tokens (workspace_id, id)
);

CREATE INDEX idempotency_keys_age ON idempotency_keys (workspace_id, created_at);
