-- Full-text search looks up a word in the searcher's workspace only: one GIN index on
-- (workspace_id, search) (btree_gin), so a word rare in a small workspace is found without
-- reading the matches of every other workspace, and without reading the whole workspace
-- to test each ticket when PostgreSQL has no statistics yet. Where btree_gin cannot be
-- installed, the index over every workspace stays.
DO $$
BEGIN
    BEGIN
        CREATE EXTENSION IF NOT EXISTS btree_gin;
    EXCEPTION WHEN OTHERS THEN
        RAISE NOTICE 'btree_gin is not available; search keeps one index for every workspace';
    END;
    IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'btree_gin') THEN
        CREATE INDEX ticket_search_by_workspace ON ticket_search
            USING gin (workspace_id, search);
        DROP INDEX ticket_search_words;
    END IF;
END
$$;
