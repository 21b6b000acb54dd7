-- Rate limits leased in blocks: a server process takes up to `wanted` requests of a key's
-- window at once (counted in the current second, as single requests were) and spends them
-- without asking again, for at most one second after it asked; what it has not spent by
-- then it gives back (`jility_rate_return`). A request is spent within a second of the
-- second it is counted in, so windows are read one second wider (the caller's `span`)
-- to keep "no 60 s span holds more than the limit" exact.
--
-- `jility_rate_take` (migration 0010) stays for servers of the previous version that share
-- the database during an upgrade: both count in the same rows.

-- Count up to `wanted` requests of `token_key` (and of `workspace_key` unless NULL), as
-- many as both windows still hold: both counted alike, or neither. Rows are locked
-- workspace first, then token, as `jility_rate_take` locks them. Answers how many were
-- granted, each key's count in the window (the grant included) and when its oldest bucket
-- leaves the window, now, and the second the grant is counted in.
CREATE OR REPLACE FUNCTION jility_rate_lease(
    token_key TEXT, token_limit INTEGER,
    workspace_key TEXT, workspace_limit INTEGER,
    span INTEGER, wanted INTEGER
) RETURNS TABLE (
    granted INTEGER,
    token_used INTEGER, token_frees_at DOUBLE PRECISION,
    workspace_used INTEGER, workspace_frees_at DOUBLE PRECISION,
    now_at DOUBLE PRECISION, second BIGINT
) LANGUAGE plpgsql AS $$
DECLARE
    at DOUBLE PRECISION;
    sec BIGINT;
    ts BIGINT[]; tc INTEGER[]; t_used INTEGER;
    ws BIGINT[]; wc INTEGER[]; w_used INTEGER := 0;
    n INTEGER;
BEGIN
    -- Both rows locked first (workspace, then token), and only then the clock read: a
    -- lease that waited for a lock is counted in the second it is granted, not the one it
    -- asked in, so what it grants is spent within a second of that second.
    IF workspace_key IS NOT NULL THEN
        INSERT INTO rate_limit_counts (key, seconds, counts) VALUES (workspace_key, '{}', '{}')
            ON CONFLICT (key) DO NOTHING;
        PERFORM 1 FROM rate_limit_counts l WHERE l.key = workspace_key FOR UPDATE;
    END IF;
    INSERT INTO rate_limit_counts (key, seconds, counts) VALUES (token_key, '{}', '{}')
        ON CONFLICT (key) DO NOTHING;
    PERFORM 1 FROM rate_limit_counts l WHERE l.key = token_key FOR UPDATE;
    at := extract(epoch FROM clock_timestamp());
    sec := floor(at)::BIGINT;
    -- Buckets emptied by give-backs are dropped: they hold nothing and free nothing.
    IF workspace_key IS NOT NULL THEN
        SELECT coalesce(array_agg(u.s ORDER BY u.s), '{}'), coalesce(array_agg(u.c ORDER BY u.s), '{}'),
               coalesce(sum(u.c), 0)
            INTO ws, wc, w_used
            FROM rate_limit_counts l, unnest(l.seconds, l.counts) AS u(s, c)
            WHERE l.key = workspace_key AND u.s >= sec - span AND u.c > 0;
    END IF;
    SELECT coalesce(array_agg(u.s ORDER BY u.s), '{}'), coalesce(array_agg(u.c ORDER BY u.s), '{}'),
           coalesce(sum(u.c), 0)
        INTO ts, tc, t_used
        FROM rate_limit_counts l, unnest(l.seconds, l.counts) AS u(s, c)
        WHERE l.key = token_key AND u.s >= sec - span AND u.c > 0;
    n := greatest(0, least(wanted, token_limit - t_used));
    IF workspace_key IS NOT NULL THEN
        n := greatest(0, least(n, workspace_limit - w_used));
    END IF;
    IF n > 0 THEN
        t_used := t_used + n;
        IF ts[cardinality(ts)] = sec THEN
            tc[cardinality(tc)] := tc[cardinality(tc)] + n;
        ELSE
            ts := ts || sec; tc := tc || n;
        END IF;
        IF workspace_key IS NOT NULL THEN
            w_used := w_used + n;
            IF ws[cardinality(ws)] = sec THEN
                wc[cardinality(wc)] := wc[cardinality(wc)] + n;
            ELSE
                ws := ws || sec; wc := wc || n;
            END IF;
        END IF;
    END IF;
    UPDATE rate_limit_counts SET seconds = ts, counts = tc WHERE key = token_key;
    IF workspace_key IS NOT NULL THEN
        UPDATE rate_limit_counts SET seconds = ws, counts = wc WHERE key = workspace_key;
    END IF;
    RETURN QUERY SELECT n,
        t_used, coalesce(ts[1] + span + 1, at + span)::DOUBLE PRECISION,
        w_used, coalesce(ws[1] + span + 1, at + span)::DOUBLE PRECISION,
        at, sec;
END
$$;

-- Give back requests leased and not spent: `counts[i]` of key `keys[i]`, counted in second
-- `seconds[i]` (never below zero; a bucket already gone from the window stays gone).
CREATE OR REPLACE FUNCTION jility_rate_return(keys TEXT[], seconds BIGINT[], counts INTEGER[])
RETURNS VOID LANGUAGE plpgsql AS $$
DECLARE
    i INTEGER;
    at INTEGER;
    row_seconds BIGINT[];
    row_counts INTEGER[];
BEGIN
    -- Workspaces' rows first, as a lease locks them, then the others, each kind in order:
    -- no two callers lock the same rows in opposite orders.
    FOR i IN SELECT o FROM unnest(keys) WITH ORDINALITY AS k(key, o)
             ORDER BY k.key LIKE 'workspace:%' DESC, k.key, o LOOP
        SELECT l.seconds, l.counts INTO row_seconds, row_counts
            FROM rate_limit_counts l WHERE l.key = keys[i] FOR UPDATE;
        CONTINUE WHEN row_seconds IS NULL;
        at := array_position(row_seconds, seconds[i]);
        CONTINUE WHEN at IS NULL;
        row_counts[at] := greatest(0, row_counts[at] - counts[i]);
        UPDATE rate_limit_counts SET counts = row_counts WHERE key = keys[i];
    END LOOP;
END
$$;
