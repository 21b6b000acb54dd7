-- Rate limits without bursts: a sliding window of 60 s per key instead of calendar minutes
-- (which let a token have twice its limit across a minute boundary), and one round trip
-- that counts a request against its token and its workspace together.
--
-- Each key (`token:ID`, `workspace:ID`) keeps the times (Unix seconds on the database's
-- clock, shared by every `jility serve` process) of the requests it was allowed in the last
-- 60 s, oldest first: at most its limit of them, so a request passes when fewer than the
-- limit were allowed in the 60 s before it, whatever the calendar says. Unlogged, as the
-- windows were: after a crash every key starts afresh.
DROP TABLE rate_limit_windows;

CREATE UNLOGGED TABLE rate_limit_logs (
    key    TEXT PRIMARY KEY,
    stamps DOUBLE PRECISION[] NOT NULL
);

-- Count one request of `token_key` (and of `workspace_key` unless NULL) if both are under
-- their limits in the last `span` seconds: both counted, or neither. Rows are locked
-- workspace first, then token, so concurrent callers never wait on each other in a cycle.
-- Answers whether it was allowed, each key's count in the window (this request included
-- when allowed) and the time its oldest counted request leaves the window, and now.
CREATE FUNCTION jility_rate_take(
    token_key TEXT, token_limit INTEGER,
    workspace_key TEXT, workspace_limit INTEGER,
    span DOUBLE PRECISION
) RETURNS TABLE (
    allowed BOOLEAN,
    token_used INTEGER, token_frees_at DOUBLE PRECISION,
    workspace_used INTEGER, workspace_frees_at DOUBLE PRECISION,
    now_at DOUBLE PRECISION
) LANGUAGE plpgsql AS $$
DECLARE
    at DOUBLE PRECISION := extract(epoch FROM clock_timestamp());
    t DOUBLE PRECISION[];
    w DOUBLE PRECISION[];
    ok BOOLEAN;
BEGIN
    IF workspace_key IS NOT NULL THEN
        INSERT INTO rate_limit_logs (key, stamps) VALUES (workspace_key, '{}')
            ON CONFLICT (key) DO NOTHING;
        SELECT l.stamps INTO w FROM rate_limit_logs l WHERE l.key = workspace_key FOR UPDATE;
        w := ARRAY(SELECT s FROM unnest(w) s WHERE s > at - span ORDER BY s);
    END IF;
    INSERT INTO rate_limit_logs (key, stamps) VALUES (token_key, '{}')
        ON CONFLICT (key) DO NOTHING;
    SELECT l.stamps INTO t FROM rate_limit_logs l WHERE l.key = token_key FOR UPDATE;
    t := ARRAY(SELECT s FROM unnest(t) s WHERE s > at - span ORDER BY s);
    ok := cardinality(t) < token_limit
        AND (workspace_key IS NULL OR cardinality(w) < workspace_limit);
    IF ok THEN
        t := t || at;
        IF workspace_key IS NOT NULL THEN
            w := w || at;
        END IF;
    END IF;
    UPDATE rate_limit_logs SET stamps = t WHERE key = token_key;
    IF workspace_key IS NOT NULL THEN
        UPDATE rate_limit_logs SET stamps = w WHERE key = workspace_key;
    END IF;
    RETURN QUERY SELECT ok,
        cardinality(t), coalesce(t[1], at) + span,
        coalesce(cardinality(w), 0), coalesce(w[1], at) + span,
        at;
END
$$;
