-- Request counts per key (an API token's id) and one-minute window, shared by every
-- `jility serve` process on the database. Windows are aligned on the database's clock, so
-- processes on machines whose clocks differ still count in the same window.
CREATE TABLE rate_limit_windows (
    key          TEXT    NOT NULL,
    window_start BIGINT  NOT NULL, -- Unix seconds, a multiple of 60
    count        INTEGER NOT NULL,
    PRIMARY KEY (key, window_start)
);
