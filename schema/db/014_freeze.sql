-- sluice state database, migration 14: a target frozen by a person
-- (`sluice freeze`, docs/sluice.1; docs/config.md, "merge.freeze" for the
-- windows in the config). While a row holds (until_ms NULL or later than
-- now) the merge train keeps testing the target's cars and lands none;
-- `sluice unfreeze` deletes the row. One freeze per target.
CREATE TABLE freezes (
	target       TEXT PRIMARY KEY,       -- e.g. refs/heads/main
	reason       TEXT NOT NULL,          -- `-m`, shown in status, the desk and the queue
	until_ms     INTEGER,                -- NULL: until `sluice unfreeze`
	allow_urgent INTEGER NOT NULL DEFAULT 0 CHECK (allow_urgent IN (0, 1)),
	at_ms        INTEGER NOT NULL        -- when it was set
);
