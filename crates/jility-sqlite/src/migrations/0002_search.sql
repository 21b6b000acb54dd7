-- Jility schema, version 2: full-text search over titles, descriptions and comments.
-- The index is kept by triggers, so every writer (any version of the CLI or server that
-- has this schema) keeps it current inside its own transaction.

CREATE VIRTUAL TABLE ticket_search USING fts5(
    title,
    description,
    comments,
    tokenize = 'porter unicode61 remove_diacritics 2'
);

INSERT INTO ticket_search(rowid, title, description, comments)
SELECT t.id, t.title, t.description,
       coalesce((SELECT group_concat(c.content, char(10)) FROM comments c WHERE c.ticket_id = t.id), '')
FROM tickets t
WHERE t.deleted_at IS NULL;

CREATE TRIGGER ticket_search_insert AFTER INSERT ON tickets
WHEN new.deleted_at IS NULL
BEGIN
    INSERT INTO ticket_search(rowid, title, description, comments)
    VALUES (new.id, new.title, new.description, '');
END;

CREATE TRIGGER ticket_search_update AFTER UPDATE OF title, description ON tickets
WHEN new.deleted_at IS NULL
BEGIN
    UPDATE ticket_search SET title = new.title, description = new.description
    WHERE rowid = new.id;
END;

CREATE TRIGGER ticket_search_delete AFTER UPDATE OF deleted_at ON tickets
WHEN new.deleted_at IS NOT NULL
BEGIN
    DELETE FROM ticket_search WHERE rowid = new.id;
END;

CREATE TRIGGER ticket_search_comment AFTER INSERT ON comments
BEGIN
    UPDATE ticket_search
    SET comments = CASE WHEN comments = '' THEN new.content ELSE comments || char(10) || new.content END
    WHERE rowid = new.ticket_id;
END;
