-- Schema 21: a started sprint's figures, kept as its tickets change, so that its statistics
-- need not replay the change log (they equal the replay's; tests prove it). A sprint
-- started before this version has none and is replayed.

-- Points moved into and out of the sprint after its start; the row's lock is what writers
-- of one sprint take turns on.
CREATE TABLE sprint_kept (
    workspace_id   BIGINT NOT NULL,
    sprint_id      BIGINT NOT NULL PRIMARY KEY,
    added_points   BIGINT NOT NULL DEFAULT 0,
    removed_points BIGINT NOT NULL DEFAULT 0,
    FOREIGN KEY (workspace_id, sprint_id) REFERENCES sprints (workspace_id, id)
);

-- Remaining points at the end of each day that had a change (`YYYY-MM-DD`, UTC).
CREATE TABLE sprint_days (
    workspace_id BIGINT NOT NULL,
    sprint_id    BIGINT NOT NULL,
    day          TEXT NOT NULL,
    remaining    BIGINT NOT NULL,
    PRIMARY KEY (sprint_id, day),
    FOREIGN KEY (workspace_id, sprint_id) REFERENCES sprints (workspace_id, id)
);
