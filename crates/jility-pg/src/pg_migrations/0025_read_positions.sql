-- Where each caller's last write ended in the WAL, for reads from standbys
-- (`jility serve --read-replica`): a caller's read goes to a standby only once it has
-- replayed this far, so that no one reads older than what they wrote. One row per token
-- (an API token, an OAuth access token, a person's web session), written after each
-- commit of theirs by whichever process served it.
CREATE TABLE read_positions (
    token_id BIGINT PRIMARY KEY,
    lsn      PG_LSN NOT NULL,
    at       TIMESTAMPTZ NOT NULL DEFAULT now()
);
