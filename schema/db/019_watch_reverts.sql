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

-- And a notification when a watch gate is believed red on a tip
-- (docs/config.md, "Notifications"): event 'watch_red', once per gate and
-- tip, whatever how many watches see it red there. run_id and
-- work_order_id name the culprit run when its bisection named one (else NULL
-- and ''), commit_id is the red tip, gate the watch gate. SQLite cannot
-- change a CHECK in place: the table is made again with every row kept.
CREATE TABLE notify_outbox_018 (
	seq           INTEGER PRIMARY KEY,    -- the events row of the move (events.seq)
	event         TEXT NOT NULL
		CHECK (event IN ('merged','merge_conflict','rejected','failed',
		                 'invalid_work_order','budget_spent','watch_red')),
	run_id        TEXT REFERENCES runs(id), -- NULL: invalid_work_order, budget_spent,
	                                      -- watch_red without a culprit run
	work_order_id TEXT NOT NULL,          -- invalid_work_order: its id, or as it seems;
	                                      -- budget_spent, watch_red without a run: ''
	title         TEXT NOT NULL DEFAULT '', -- the work order's title then
	from_state    TEXT NOT NULL,
	reason        TEXT NOT NULL DEFAULT '',
	target        TEXT NOT NULL,          -- e.g. refs/heads/main ('' for invalid_work_order)
	commit_id     TEXT,                   -- merged: the merge commit; watch_red: the red tip
	at_ms         INTEGER NOT NULL,       -- when the run moved
	sent          INTEGER NOT NULL DEFAULT 0, -- delivered to: 1 the command, 2 the URL
	tries         INTEGER NOT NULL DEFAULT 0, -- deliveries that failed
	last_error    TEXT NOT NULL DEFAULT '',
	done_ms       INTEGER,                -- NULL: pending
	outcome       TEXT CHECK (outcome IS NULL OR
		outcome IN ('delivered','given_up','no_notifier')),
	next_ms       INTEGER NOT NULL DEFAULT 0, -- 0: due now
	path          TEXT,                   -- invalid_work_order: the file
	content_hash  TEXT,                   -- invalid_work_order: its revision
	period        TEXT,                   -- budget_spent: 'day YYYY-MM-DD' or 'month YYYY-MM'
	gate          TEXT                    -- watch_red: the watch gate
);
INSERT INTO notify_outbox_018 (seq, event, run_id, work_order_id, title, from_state, reason,
	target, commit_id, at_ms, sent, tries, last_error, done_ms, outcome, next_ms, path,
	content_hash, period)
	SELECT seq, event, run_id, work_order_id, title, from_state, reason, target, commit_id,
		at_ms, sent, tries, last_error, done_ms, outcome, next_ms, path, content_hash, period
	FROM notify_outbox;
DROP TABLE notify_outbox;
ALTER TABLE notify_outbox_018 RENAME TO notify_outbox;
CREATE INDEX notify_outbox_pending ON notify_outbox(done_ms);
CREATE INDEX notify_outbox_revision ON notify_outbox(path, content_hash);
CREATE INDEX notify_outbox_period ON notify_outbox(period);
CREATE INDEX notify_outbox_gate ON notify_outbox(gate, commit_id);
