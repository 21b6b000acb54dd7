-- Rate-limit counters are written on every request and matter only for the current minute:
-- they are kept out of the write-ahead log. After a crash PostgreSQL empties the table
-- (every token starts a fresh window), and a standby does not have it; nothing else is lost.
ALTER TABLE rate_limit_windows SET UNLOGGED;
