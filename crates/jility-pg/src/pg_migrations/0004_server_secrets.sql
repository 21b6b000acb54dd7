-- Secrets every `jility serve` process on the database shares, made by the first process
-- that needs them: the key that seals list cursors, so that a cursor handed out by one
-- process is honoured by another behind the same load balancer.
CREATE TABLE server_secrets (
    name   TEXT  PRIMARY KEY,
    secret BYTEA NOT NULL CHECK (octet_length(secret) = 32)
);
