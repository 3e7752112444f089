-- sluice state database, migration 17: a notification when the repository's
-- budget holds (docs/budgets.md; docs/config.md, "Notifications"). Once per
-- UTC day (or month) whose spend reached budget.day.usd (budget.month.usd),
-- the tick that first holds new work adds an event and a row here in one
-- transaction: event 'budget_spent', no run (run_id NULL), no work order
-- (work_order_id ''), period 'day 2026-11-28' or 'month 2026-11', the
-- reason the tick printed. SQLite cannot change a CHECK in place: the table
-- is made again with every row kept.
CREATE TABLE notify_outbox_016 (
	seq           INTEGER PRIMARY KEY,    -- the events row of the move (events.seq)
	event         TEXT NOT NULL
		CHECK (event IN ('merged','merge_conflict','rejected','failed',
		                 'invalid_work_order','budget_spent')),
	run_id        TEXT REFERENCES runs(id), -- NULL: invalid_work_order, budget_spent
	work_order_id TEXT NOT NULL,          -- invalid_work_order: its id, or as it seems;
	                                      -- budget_spent: ''
	title         TEXT NOT NULL DEFAULT '', -- the work order's title then
	from_state    TEXT NOT NULL,
	reason        TEXT NOT NULL DEFAULT '',
	target        TEXT NOT NULL,          -- e.g. refs/heads/main ('' for invalid_work_order)
	commit_id     TEXT,                   -- merged: the merge commit; else NULL
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
	period        TEXT                    -- budget_spent: 'day YYYY-MM-DD' or 'month YYYY-MM'
);
INSERT INTO notify_outbox_016 (seq, event, run_id, work_order_id, title, from_state, reason,
	target, commit_id, at_ms, sent, tries, last_error, done_ms, outcome, next_ms, path,
	content_hash)
	SELECT seq, event, run_id, work_order_id, title, from_state, reason, target, commit_id,
		at_ms, sent, tries, last_error, done_ms, outcome, next_ms, path, content_hash
	FROM notify_outbox;
DROP TABLE notify_outbox;
ALTER TABLE notify_outbox_016 RENAME TO notify_outbox;
CREATE INDEX notify_outbox_pending ON notify_outbox(done_ms);
CREATE INDEX notify_outbox_revision ON notify_outbox(path, content_hash);
CREATE INDEX notify_outbox_period ON notify_outbox(period);
