-- Jility schema, version 6: a started sprint's figures, kept as its tickets change, so that
-- its statistics need not replay the change log (they equal the replay's; tests prove it).
-- A sprint started before this version has none and is replayed.

-- Points moved into and out of the sprint after its start.
CREATE TABLE sprint_kept (
    sprint_id      INTEGER PRIMARY KEY REFERENCES sprints(id),
    added_points   INTEGER NOT NULL DEFAULT 0,
    removed_points INTEGER NOT NULL DEFAULT 0
);

-- Remaining points at the end of each day that had a change (`YYYY-MM-DD`, UTC).
CREATE TABLE sprint_days (
    sprint_id INTEGER NOT NULL REFERENCES sprints(id),
    day       TEXT NOT NULL,
    remaining INTEGER NOT NULL,
    PRIMARY KEY (sprint_id, day)
);
