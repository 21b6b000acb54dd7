-- Jility on PostgreSQL, schema version 1: many workspaces in one database.
--
-- Every table carries workspace_id, and every reference between rows is a composite
-- foreign key on (workspace_id, id): the database itself refuses a comment, a label, a
-- dependency or a parent that would cross from one workspace into another.
-- Times are kept as the RFC 3339 text the domain writes (as in local mode), so they read
-- back byte for byte.

CREATE TABLE workspaces (
    id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name       TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL
);

CREATE TABLE projects (
    id           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    workspace_id BIGINT NOT NULL REFERENCES workspaces(id),
    key          TEXT NOT NULL,
    name         TEXT NOT NULL,
    next_number  BIGINT NOT NULL DEFAULT 1,
    created_at   TEXT NOT NULL,
    UNIQUE (workspace_id, key),
    UNIQUE (workspace_id, id)
);

-- Full-text search: a dictionary of English stems that keeps every word (no stop words),
-- like local mode's porter tokenizer; accents are folded when the unaccent extension can
-- be had (local mode's remove_diacritics).
CREATE TEXT SEARCH DICTIONARY jility_stem (TEMPLATE = snowball, Language = english);
CREATE TEXT SEARCH CONFIGURATION jility (COPY = simple);
DO $$
BEGIN
    BEGIN
        CREATE EXTENSION IF NOT EXISTS unaccent;
    EXCEPTION WHEN OTHERS THEN
        RAISE NOTICE 'unaccent is not available; search keeps accents';
    END;
    IF EXISTS (SELECT 1 FROM pg_ts_dict WHERE dictname = 'unaccent') THEN
        ALTER TEXT SEARCH CONFIGURATION jility
            ALTER MAPPING FOR asciiword, asciihword, hword_asciipart, word, hword, hword_part
            WITH unaccent, jility_stem;
    ELSE
        ALTER TEXT SEARCH CONFIGURATION jility
            ALTER MAPPING FOR asciiword, asciihword, hword_asciipart, word, hword, hword_part
            WITH jility_stem;
    END IF;
END
$$;

-- PostgreSQL's parser reads `x.com/a`, `v1.2`, `a@b` and `self-hosted` as single tokens;
-- local mode (and the query side, which splits on punctuation) sees words. Blank those
-- joiners so both sides split alike and phrases stay adjacent.
CREATE FUNCTION jility_search_text(text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT translate($1, '-./@:\', '      ') $$;

CREATE TABLE tickets (
    id              BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    workspace_id    BIGINT NOT NULL REFERENCES workspaces(id),
    uuid            TEXT NOT NULL UNIQUE,
    project_id      BIGINT NOT NULL,
    number          BIGINT NOT NULL,
    title           TEXT NOT NULL,
    description     TEXT NOT NULL DEFAULT '',
    status          TEXT NOT NULL CHECK (status IN ('backlog', 'todo', 'in_progress', 'review', 'done', 'blocked')),
    story_points    SMALLINT CHECK (story_points BETWEEN 1 AND 13),
    parent_id       BIGINT,
    epic_id         BIGINT,
    created_by      TEXT NOT NULL,
    created_at      TEXT NOT NULL,
    updated_by      TEXT NOT NULL,
    updated_at      TEXT NOT NULL,
    deleted_by      TEXT,
    deleted_at      TEXT,
    -- The comments' words, appended by a trigger as comments arrive.
    comments_search TSVECTOR NOT NULL DEFAULT ''::tsvector,
    -- Title weighs most (A), then description (B), then comments (C).
    search          TSVECTOR GENERATED ALWAYS AS (
        setweight(to_tsvector('jility'::regconfig, jility_search_text(title)), 'A')
        || setweight(to_tsvector('jility'::regconfig, jility_search_text(description)), 'B')
        || comments_search
    ) STORED,
    UNIQUE (project_id, number),
    UNIQUE (workspace_id, id),
    FOREIGN KEY (workspace_id, project_id) REFERENCES projects (workspace_id, id),
    FOREIGN KEY (workspace_id, parent_id) REFERENCES tickets (workspace_id, id),
    FOREIGN KEY (workspace_id, epic_id) REFERENCES tickets (workspace_id, id)
);
CREATE INDEX tickets_live ON tickets (workspace_id, status, id) WHERE deleted_at IS NULL;
CREATE INDEX tickets_parent ON tickets (workspace_id, parent_id) WHERE parent_id IS NOT NULL;
CREATE INDEX tickets_epic ON tickets (workspace_id, epic_id) WHERE epic_id IS NOT NULL;
CREATE INDEX tickets_search ON tickets USING gin (search) WHERE deleted_at IS NULL;

CREATE TABLE ticket_assignees (
    workspace_id BIGINT NOT NULL,
    ticket_id    BIGINT NOT NULL,
    assignee     TEXT NOT NULL,
    assigned_by  TEXT NOT NULL,
    assigned_at  TEXT NOT NULL,
    PRIMARY KEY (ticket_id, assignee),
    FOREIGN KEY (workspace_id, ticket_id) REFERENCES tickets (workspace_id, id)
);
CREATE INDEX ticket_assignees_by_name ON ticket_assignees (workspace_id, assignee, ticket_id);

CREATE TABLE ticket_labels (
    workspace_id BIGINT NOT NULL,
    ticket_id    BIGINT NOT NULL,
    label        TEXT NOT NULL,
    PRIMARY KEY (ticket_id, label),
    FOREIGN KEY (workspace_id, ticket_id) REFERENCES tickets (workspace_id, id)
);
CREATE INDEX ticket_labels_by_label ON ticket_labels (workspace_id, label, ticket_id);

CREATE TABLE comments (
    id           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    workspace_id BIGINT NOT NULL,
    uuid         TEXT NOT NULL UNIQUE,
    ticket_id    BIGINT NOT NULL,
    author       TEXT NOT NULL,
    content      TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    FOREIGN KEY (workspace_id, ticket_id) REFERENCES tickets (workspace_id, id)
);
CREATE INDEX comments_by_ticket ON comments (ticket_id, id);

CREATE FUNCTION jility_comment_search() RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
    UPDATE tickets
    SET comments_search = comments_search
        || setweight(to_tsvector('jility'::regconfig, jility_search_text(NEW.content)), 'C')
    WHERE workspace_id = NEW.workspace_id AND id = NEW.ticket_id;
    RETURN NULL;
END
$$;
CREATE TRIGGER comments_search AFTER INSERT ON comments
FOR EACH ROW EXECUTE FUNCTION jility_comment_search();

CREATE TABLE dependencies (
    workspace_id  BIGINT NOT NULL,
    ticket_id     BIGINT NOT NULL,
    depends_on_id BIGINT NOT NULL,
    created_by    TEXT NOT NULL,
    created_at    TEXT NOT NULL,
    PRIMARY KEY (ticket_id, depends_on_id),
    CHECK (ticket_id <> depends_on_id),
    FOREIGN KEY (workspace_id, ticket_id) REFERENCES tickets (workspace_id, id),
    FOREIGN KEY (workspace_id, depends_on_id) REFERENCES tickets (workspace_id, id)
);
CREATE INDEX dependencies_reverse ON dependencies (depends_on_id, ticket_id);

CREATE TABLE commit_links (
    id             BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    workspace_id   BIGINT NOT NULL,
    ticket_id      BIGINT NOT NULL,
    commit_hash    TEXT NOT NULL,
    commit_message TEXT,
    linked_by      TEXT NOT NULL,
    linked_at      TEXT NOT NULL,
    UNIQUE (ticket_id, commit_hash),
    FOREIGN KEY (workspace_id, ticket_id) REFERENCES tickets (workspace_id, id)
);

-- Every change to a ticket; description changes keep the whole old and new text, so the
-- versions of a description are its rows of type description_changed in id order.
CREATE TABLE ticket_changes (
    id           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    workspace_id BIGINT NOT NULL,
    ticket_id    BIGINT NOT NULL,
    change_type  TEXT NOT NULL,
    old_value    TEXT,
    new_value    TEXT,
    detail       TEXT,
    message      TEXT,
    changed_by   TEXT NOT NULL,
    changed_at   TEXT NOT NULL,
    FOREIGN KEY (workspace_id, ticket_id) REFERENCES tickets (workspace_id, id)
);
CREATE INDEX ticket_changes_by_ticket ON ticket_changes (ticket_id, id);
CREATE INDEX ticket_changes_versions ON ticket_changes (ticket_id, id)
    WHERE change_type = 'description_changed';
