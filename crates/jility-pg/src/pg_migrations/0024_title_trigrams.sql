-- Schema 24: related tickets find titles alike by their trigrams (`pg_trgm`, a contrib
-- extension of PostgreSQL's standard packages, trusted: a database owner may create it),
-- in the caller's workspace only where btree_gin is there (schema 18). Without pg_trgm (a
-- server built without contrib, or no right to create it) the index is not made and related
-- tickets are found by their words alone (the store looks for the index).
DO $$
BEGIN
    BEGIN
        CREATE EXTENSION IF NOT EXISTS pg_trgm;
    EXCEPTION WHEN OTHERS THEN
        RAISE NOTICE 'pg_trgm is not available; related tickets are found by their words alone';
    END;
    IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm') THEN
        IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'btree_gin') THEN
            CREATE INDEX tickets_title_trigrams ON tickets
                USING gin (workspace_id, title gin_trgm_ops) WHERE deleted_at IS NULL;
        ELSE
            CREATE INDEX tickets_title_trigrams ON tickets USING gin (title gin_trgm_ops)
                WHERE deleted_at IS NULL;
        END IF;
    END IF;
END
$$;
