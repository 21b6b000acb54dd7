-- Webhooks (`jility-hooks`): a workspace's subscriptions, the outbox every ticket change
-- of a subscribed workspace is written to in the transaction that makes it, and the
-- deliveries made from it.
--
-- The outbox is filled by a trigger on ticket_changes, so whichever path writes a change
-- (one ticket, a batch, a bulk edit) writes its event in the same transaction: a change
-- that commits has its event, one rolled back has none. A workspace without a live
-- subscription writes nothing more (one probe of `webhooks_live` per statement).

CREATE TABLE webhooks (
    id              BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    workspace_id    BIGINT NOT NULL REFERENCES workspaces(id),
    url             TEXT NOT NULL,
    -- Event types (`ticket.created`…); empty: every type.
    events          TEXT[] NOT NULL DEFAULT '{}',
    -- A query in the tracker's language a ticket must match (NULL: every ticket).
    filter          TEXT,
    description     TEXT NOT NULL DEFAULT '',
    -- `whsec_…`: the key deliveries are signed with (HMAC needs it whole, so it is kept,
    -- never shown again after creation or rotation, never logged).
    secret          TEXT NOT NULL,
    -- The secret before the last rotation, still signed with until `previous_until`.
    previous_secret TEXT,
    previous_until  TIMESTAMPTZ,
    enabled         BOOLEAN NOT NULL DEFAULT TRUE,
    disabled_reason TEXT,
    -- Since when every delivery failed (NULL: the last one succeeded, or none was made).
    failing_since   TIMESTAMPTZ,
    created_by      TEXT NOT NULL,
    created_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
    UNIQUE (workspace_id, id)
);
CREATE INDEX webhooks_live ON webhooks (workspace_id) WHERE enabled;

CREATE TABLE webhook_outbox (
    id           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    workspace_id BIGINT NOT NULL,
    ticket_id    BIGINT NOT NULL,
    change_id    BIGINT NOT NULL
);

CREATE TABLE webhook_deliveries (
    id               BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    workspace_id     BIGINT NOT NULL,
    webhook_id       BIGINT NOT NULL,
    -- `webhook-id`: the same on every attempt and redelivery.
    message_id       TEXT NOT NULL,
    event_type       TEXT NOT NULL,
    -- Deliveries of one ticket to one subscription go in order (NULL: a test event).
    ticket_id        BIGINT,
    ticket           TEXT,
    body             TEXT NOT NULL,
    state            TEXT NOT NULL DEFAULT 'pending'
                     CHECK (state IN ('pending', 'delivered', 'failed')),
    attempts         INT NOT NULL DEFAULT 0,
    next_attempt_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    leased_until     TIMESTAMPTZ,
    first_attempt_at TIMESTAMPTZ,
    last_attempt_at  TIMESTAMPTZ,
    response_status  INT,
    response_excerpt TEXT,
    error            TEXT,
    duration_ms      INT,
    delivered_at     TIMESTAMPTZ,
    created_at       TIMESTAMPTZ NOT NULL DEFAULT now(),
    FOREIGN KEY (workspace_id, webhook_id) REFERENCES webhooks (workspace_id, id) ON DELETE CASCADE
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at, id)
    WHERE state = 'pending';
CREATE INDEX webhook_deliveries_order ON webhook_deliveries (webhook_id, ticket_id, id)
    WHERE state = 'pending';
CREATE INDEX webhook_deliveries_log ON webhook_deliveries (webhook_id, id);

CREATE FUNCTION jility_webhook_outbox() RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
    INSERT INTO webhook_outbox (workspace_id, ticket_id, change_id)
    SELECT c.workspace_id, c.ticket_id, c.id
    FROM new_changes c
    WHERE c.workspace_id IN (
        SELECT w.workspace_id FROM webhooks w
        WHERE w.enabled AND w.workspace_id IN (SELECT DISTINCT workspace_id FROM new_changes)
    )
    ORDER BY c.id;
    RETURN NULL;
END
$$;
CREATE TRIGGER ticket_changes_webhooks AFTER INSERT ON ticket_changes
REFERENCING NEW TABLE AS new_changes
FOR EACH STATEMENT EXECUTE FUNCTION jility_webhook_outbox();
