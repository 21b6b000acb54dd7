-- Schema 24: related tickets find titles alike by their trigrams (`pg_trgm`, a contrib
-- extension of PostgreSQL's standard packages, trusted: a database owner may create it).
-- Without it (a server built without contrib, or no right to create it) the index is not
-- made and related tickets are found by their words alone (the store looks for the index).
DO $$
BEGIN
    BEGIN
        CREATE EXTENSION IF NOT EXISTS pg_trgm;
    EXCEPTION WHEN OTHERS THEN
        RAISE NOTICE 'pg_trgm is not available; related tickets are found by their words alone';
    END;
    IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm') THEN
        CREATE INDEX tickets_title_trigrams ON tickets USING gin (title gin_trgm_ops)
        WHERE deleted_at IS NULL;
    END IF;
END
$$;
