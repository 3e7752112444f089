-- sluice state database, migration 5: notifications (docs/config.md,
-- "notify"). The outbox: when a run moves into merged, merge_conflict,
-- rejected or failed, store_run_transition() adds a row here in the same
-- transaction as the move, so that no event is lost to a process killed
-- right after it. The tick delivers the pending rows at its end to
-- notify.command and notify.url (runner/notify.c), and marks them.
-- What the event says is kept as it was at the move: a later retry of the
-- run changes nothing here.
CREATE TABLE notify_outbox (
	seq           INTEGER PRIMARY KEY,    -- the events row of the move (events.seq)
	event         TEXT NOT NULL
		CHECK (event IN ('merged','merge_conflict','rejected','failed')),
	run_id        TEXT NOT NULL REFERENCES runs(id),
	work_order_id TEXT NOT NULL,
	title         TEXT NOT NULL DEFAULT '', -- the work order's title then
	from_state    TEXT NOT NULL,
	reason        TEXT NOT NULL DEFAULT '',
	target        TEXT NOT NULL,          -- e.g. refs/heads/main
	commit_id     TEXT,                   -- merged: the merge commit; else NULL
	at_ms         INTEGER NOT NULL,       -- when the run moved
	sent          INTEGER NOT NULL DEFAULT 0, -- delivered to: 1 the command, 2 the URL
	tries         INTEGER NOT NULL DEFAULT 0, -- deliveries that failed
	last_error    TEXT NOT NULL DEFAULT '',
	done_ms       INTEGER,                -- NULL: pending
	outcome       TEXT CHECK (outcome IS NULL OR
		outcome IN ('delivered','given_up','no_notifier'))
);
CREATE INDEX notify_outbox_pending ON notify_outbox(done_ms);
