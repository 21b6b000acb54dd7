-- Jility schema, version 7: saved views — a query of the query language under a name, a
-- person's own or shared with everyone who uses the database. A name is its owner's once
-- (any case); the domain also keeps it apart from the shared views its owner sees.
CREATE TABLE views (
    id         INTEGER PRIMARY KEY,
    name       TEXT NOT NULL,
    query      TEXT NOT NULL,
    owner      TEXT NOT NULL,
    shared     INTEGER NOT NULL DEFAULT 0 CHECK (shared IN (0, 1)),
    created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX views_by_owner ON views (owner, name COLLATE NOCASE);
CREATE INDEX views_shared ON views (name COLLATE NOCASE) WHERE shared = 1;
