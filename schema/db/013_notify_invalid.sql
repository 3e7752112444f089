-- sluice state database, migration 13: a notification for an invalid work
-- order (docs/config.md, "Notifications"; docs/work-orders.md, "The inbox").
-- Once per revision of the file (path and the SHA-256 of its bytes), the
-- ingestion of the inbox adds an event and a row here in the same
-- transaction: event 'invalid_work_order', no run (run_id NULL), the file's
-- path and content_hash, the problem as the reason. Delivered as every other
-- row (runner/notify.c). SQLite cannot change a CHECK or a NOT NULL in place:
-- the table is made again with every row kept.
CREATE TABLE notify_outbox_012 (
	seq           INTEGER PRIMARY KEY,    -- the events row of the move (events.seq)
	event         TEXT NOT NULL
		CHECK (event IN ('merged','merge_conflict','rejected','failed',
		                 'invalid_work_order')),
	run_id        TEXT REFERENCES runs(id), -- NULL: invalid_work_order (no run)
	work_order_id TEXT NOT NULL,          -- invalid_work_order: its id, or as it seems
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
	content_hash  TEXT                    -- invalid_work_order: its revision
);
INSERT INTO notify_outbox_012 (seq, event, run_id, work_order_id, title, from_state, reason,
	target, commit_id, at_ms, sent, tries, last_error, done_ms, outcome, next_ms)
	SELECT seq, event, run_id, work_order_id, title, from_state, reason, target, commit_id,
		at_ms, sent, tries, last_error, done_ms, outcome, next_ms FROM notify_outbox;
DROP TABLE notify_outbox;
ALTER TABLE notify_outbox_012 RENAME TO notify_outbox;
CREATE INDEX notify_outbox_pending ON notify_outbox(done_ms);
CREATE INDEX notify_outbox_revision ON notify_outbox(path, content_hash);
