-- sluice state database, migration 19: the reverts the watch made
-- (docs/watch.md). When a watch gate's bisection names a run's landing,
-- `sluice watch` writes two work orders into the inbox: <WO>-revert (the
-- inverse of that landing, through review and the train) and <WO>-fix (the
-- work again, after the revert, with what went wrong). One row per landing
-- reverted, written before the files: a landing is never reverted twice, and
-- a watch killed between the row and the files writes them at its next start.
CREATE TABLE watch_reverts (
	culprit     TEXT PRIMARY KEY,         -- the landing's commit (hex)
	target      TEXT NOT NULL,            -- e.g. refs/heads/main
	gate        TEXT NOT NULL,            -- the watch gate it broke
	culprit_run TEXT NOT NULL,            -- the run that landed it
	culprit_wo  TEXT NOT NULL,            -- that run's work order
	revert_wo   TEXT NOT NULL UNIQUE,     -- <WO>-revert
	fix_wo      TEXT NOT NULL UNIQUE,     -- <WO>-fix
	tip         TEXT NOT NULL,            -- the red tip the watch bisected from
	created_ms  INTEGER NOT NULL
);
