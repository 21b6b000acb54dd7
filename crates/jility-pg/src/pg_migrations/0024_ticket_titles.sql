-- Schema 24: related tickets (issue 43) look for titles sharing a probe's words in a narrow
-- table of their own: a row is the workspace, the ticket, its title and the title's words —
-- ranking thousands of title matches read each one's whole row in `ticket_search` (the
-- description's and comments' words too), about 6 µs each; here they take a fraction.
-- Only live tickets are in it, kept by a trigger as `ticket_search` is.
--
-- Their titles' trigram similarity (`pg_trgm`, a contrib extension of PostgreSQL's standard
-- packages, trusted: a database owner may create it) ranks those matches beside the words;
-- without it (a server built without contrib, or no right to create it) the words alone do
-- (the store asks whether `similarity(text, text)` exists).
DO $$
BEGIN
    BEGIN
        CREATE EXTENSION IF NOT EXISTS pg_trgm;
    EXCEPTION WHEN OTHERS THEN
        RAISE NOTICE 'pg_trgm is not available; related tickets are ranked by their words alone';
    END;
END
$$;

CREATE TABLE ticket_titles (
    workspace_id BIGINT NOT NULL,
    ticket_id    BIGINT NOT NULL PRIMARY KEY,
    title        TEXT NOT NULL,
    words        TSVECTOR NOT NULL,
    FOREIGN KEY (workspace_id, ticket_id) REFERENCES tickets (workspace_id, id)
);

INSERT INTO ticket_titles (workspace_id, ticket_id, title, words)
SELECT workspace_id, id, title, to_tsvector('jility'::regconfig, jility_search_text(title))
FROM tickets WHERE deleted_at IS NULL;

-- A word is looked up in the caller's workspace only where btree_gin is there (schema 18).
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'btree_gin') THEN
        CREATE INDEX ticket_titles_words ON ticket_titles USING gin (workspace_id, words);
    ELSE
        CREATE INDEX ticket_titles_words ON ticket_titles USING gin (words);
    END IF;
END
$$;

CREATE FUNCTION jility_sync_titles() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.deleted_at IS NOT NULL THEN
        DELETE FROM ticket_titles WHERE ticket_id = NEW.id;
    ELSE
        INSERT INTO ticket_titles (workspace_id, ticket_id, title, words)
        VALUES (NEW.workspace_id, NEW.id, NEW.title,
                to_tsvector('jility'::regconfig, jility_search_text(NEW.title)))
        ON CONFLICT (ticket_id) DO UPDATE SET title = EXCLUDED.title, words = EXCLUDED.words;
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER tickets_titles AFTER INSERT OR UPDATE OF title, deleted_at
ON tickets FOR EACH ROW EXECUTE FUNCTION jility_sync_titles();
