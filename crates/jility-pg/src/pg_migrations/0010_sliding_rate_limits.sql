-- Rate limits without bursts: a sliding window of 60 s per key instead of calendar minutes
-- (which let a token have twice its limit across a minute boundary), and one round trip
-- that counts a request against its token and its workspace together.
--
-- Each key (`token:ID`, `workspace:ID`) keeps how many requests it was allowed in each
-- second (Unix seconds on the database's clock, shared by every `jility serve` process) of
-- the last 61: at most 61 buckets whatever the limit. A request passes when fewer than the
-- limit were allowed in its second and the 60 before it: a span that covers at least the
-- 60 s before the request, so no 60 s span ever holds more than the limit, whatever the
-- calendar says (at worst a request waits up to a second longer than an exact log would
-- make it). Unlogged, as the windows were: after a crash every key starts afresh.
DROP TABLE rate_limit_windows;

CREATE UNLOGGED TABLE rate_limit_counts (
    key     TEXT PRIMARY KEY,
    seconds BIGINT[] NOT NULL,  -- the buckets, oldest first
    counts  INTEGER[] NOT NULL  -- requests allowed in each
);

-- Count one request of `token_key` (and of `workspace_key` unless NULL) if both are under
-- their limits in the window: both counted, or neither. Rows are locked workspace first,
-- then token, so concurrent callers never wait on each other in a cycle. Answers whether it
-- was allowed, each key's count in the window (this request included when allowed) and when
-- its oldest bucket leaves the window, and now.
CREATE FUNCTION jility_rate_take(
    token_key TEXT, token_limit INTEGER,
    workspace_key TEXT, workspace_limit INTEGER,
    span INTEGER
) RETURNS TABLE (
    allowed BOOLEAN,
    token_used INTEGER, token_frees_at DOUBLE PRECISION,
    workspace_used INTEGER, workspace_frees_at DOUBLE PRECISION,
    now_at DOUBLE PRECISION
) LANGUAGE plpgsql AS $$
DECLARE
    at DOUBLE PRECISION := extract(epoch FROM clock_timestamp());
    sec BIGINT := floor(at)::BIGINT;
    ts BIGINT[]; tc INTEGER[]; t_used INTEGER;
    ws BIGINT[]; wc INTEGER[]; w_used INTEGER := 0;
    ok BOOLEAN;
BEGIN
    IF workspace_key IS NOT NULL THEN
        INSERT INTO rate_limit_counts (key, seconds, counts) VALUES (workspace_key, '{}', '{}')
            ON CONFLICT (key) DO NOTHING;
        SELECT coalesce(array_agg(u.s ORDER BY u.s), '{}'), coalesce(array_agg(u.c ORDER BY u.s), '{}'),
               coalesce(sum(u.c), 0)
            INTO ws, wc, w_used
            FROM (SELECT l.seconds, l.counts FROM rate_limit_counts l
                  WHERE l.key = workspace_key FOR UPDATE) r,
                 unnest(r.seconds, r.counts) AS u(s, c)
            WHERE u.s >= sec - span;
    END IF;
    INSERT INTO rate_limit_counts (key, seconds, counts) VALUES (token_key, '{}', '{}')
        ON CONFLICT (key) DO NOTHING;
    SELECT coalesce(array_agg(u.s ORDER BY u.s), '{}'), coalesce(array_agg(u.c ORDER BY u.s), '{}'),
           coalesce(sum(u.c), 0)
        INTO ts, tc, t_used
        FROM (SELECT l.seconds, l.counts FROM rate_limit_counts l
              WHERE l.key = token_key FOR UPDATE) r,
             unnest(r.seconds, r.counts) AS u(s, c)
        WHERE u.s >= sec - span;
    ok := t_used < token_limit AND (workspace_key IS NULL OR w_used < workspace_limit);
    IF ok THEN
        t_used := t_used + 1;
        IF ts[cardinality(ts)] = sec THEN
            tc[cardinality(tc)] := tc[cardinality(tc)] + 1;
        ELSE
            ts := ts || sec; tc := tc || 1;
        END IF;
        IF workspace_key IS NOT NULL THEN
            w_used := w_used + 1;
            IF ws[cardinality(ws)] = sec THEN
                wc[cardinality(wc)] := wc[cardinality(wc)] + 1;
            ELSE
                ws := ws || sec; wc := wc || 1;
            END IF;
        END IF;
    END IF;
    UPDATE rate_limit_counts SET seconds = ts, counts = tc WHERE key = token_key;
    IF workspace_key IS NOT NULL THEN
        UPDATE rate_limit_counts SET seconds = ws, counts = wc WHERE key = workspace_key;
    END IF;
    RETURN QUERY SELECT ok,
        t_used, coalesce(ts[1] + span + 1, at + span)::DOUBLE PRECISION,
        w_used, coalesce(ws[1] + span + 1, at + span)::DOUBLE PRECISION,
        at;
END
$$;
