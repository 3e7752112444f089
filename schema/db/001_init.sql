-- sluice state database, migration 1: the first schema.
-- Applied in one transaction by store_open(); PRAGMA user_version records
-- the last migration applied, PRAGMA application_id marks the file as ours
-- ('SLCE' = 0x534c4345).

PRAGMA application_id = 1397506885;

-- One row per work order id seen in the inbox. The file is the source of
-- truth; this is what sluice made of its latest revision.
CREATE TABLE work_orders (
	id            TEXT PRIMARY KEY,          -- the front matter's id
	path          TEXT NOT NULL,             -- relative to the repository root
	content_hash  TEXT NOT NULL,             -- SHA-256 of the file's bytes
	content       BLOB,                      -- the bytes of that revision
	fields_json   TEXT NOT NULL DEFAULT '{}',-- parsed front matter (unknown keys kept)
	body          TEXT NOT NULL DEFAULT '',  -- the Markdown after the front matter
	title         TEXT NOT NULL DEFAULT '',
	priority      INTEGER NOT NULL DEFAULT 3,
	created_at    TEXT NOT NULL DEFAULT '',
	status        TEXT NOT NULL DEFAULT 'ready', -- the author's status field
	state         TEXT NOT NULL DEFAULT 'ready'
		CHECK (state IN ('invalid','waiting','ready','running','done','failed','blocked','skipped')),
	reason        TEXT NOT NULL DEFAULT '',  -- why it is in that state, for people
	present       INTEGER NOT NULL DEFAULT 1,-- 0 once the file is gone from the inbox
	first_seen_ms INTEGER NOT NULL,
	updated_ms    INTEGER NOT NULL
);
CREATE INDEX work_orders_state ON work_orders(state);

-- Problems found in the inbox that have no usable id (a file that does not
-- parse): one row per file, replaced on every scan.
CREATE TABLE inbox_errors (
	path     TEXT PRIMARY KEY,
	message  TEXT NOT NULL,
	seen_ms  INTEGER NOT NULL
);

-- A run carries one revision of a work order towards the target branch.
CREATE TABLE runs (
	id                   TEXT PRIMARY KEY,   -- time-sortable, see core/id.h
	work_order_id        TEXT NOT NULL,
	wo_content_hash      TEXT NOT NULL,      -- the revision that was run
	state                TEXT NOT NULL DEFAULT 'queued'
		CHECK (state IN ('queued','preparing','building','gating','reviewing',
			'awaiting_review','approved','merging','merged','resolving',
			'merge_conflict','rejected','failed','abandoned','interrupted')),
	reason               TEXT NOT NULL DEFAULT '',
	target               TEXT NOT NULL,      -- e.g. refs/heads/main
	branch_name          TEXT,               -- run/<WO-ID>-<short>
	base_commit          TEXT,               -- the target tip recorded at start
	head_commit          TEXT,               -- the run branch tip after the last snapshot
	approved_tree        TEXT,               -- the tree id the reviewer approved
	merge_commit         TEXT,
	merge_status         TEXT CHECK (merge_status IS NULL OR
		merge_status IN ('pending','merged','conflict')),
	conflict_with_run_id TEXT,
	reviewer             TEXT,               -- who approved, for Reviewed-by:
	mode                 TEXT NOT NULL DEFAULT 'build' CHECK (mode IN ('build','resolve')),
	attempt              INTEGER NOT NULL DEFAULT 0,
	resolve_attempts     INTEGER NOT NULL DEFAULT 0,
	review_tries         INTEGER NOT NULL DEFAULT 0,
	owner_pid            INTEGER,            -- the sluice process working on it
	owner_start          TEXT,               -- that process's start time (pid reuse)
	created_ms           INTEGER NOT NULL,
	updated_ms           INTEGER NOT NULL,
	finished_ms          INTEGER
);
CREATE INDEX runs_state ON runs(state);
CREATE INDEX runs_work_order ON runs(work_order_id);

-- One row per builder attempt of a run (build or resolve).
CREATE TABLE attempts (
	run_id       TEXT NOT NULL REFERENCES runs(id),
	n            INTEGER NOT NULL,           -- 1, 2, ...
	mode         TEXT NOT NULL DEFAULT 'build',
	started_ms   INTEGER NOT NULL,
	finished_ms  INTEGER,
	builder_exit INTEGER,
	outcome      TEXT NOT NULL DEFAULT '',   -- 'ok', 'gate test failed', ...
	head_commit  TEXT,
	PRIMARY KEY (run_id, n)
);

-- What each run changed, for finding the rival of a conflict.
CREATE TABLE files_changed (
	run_id  TEXT NOT NULL REFERENCES runs(id),
	path    TEXT NOT NULL,
	status  TEXT NOT NULL,                   -- A, M, D, R, C, T
	PRIMARY KEY (run_id, path)
);
CREATE INDEX files_changed_path ON files_changed(path);

-- The event stream: append-only. Every state change of a run or a work
-- order adds one row in the same transaction.
CREATE TABLE events (
	seq           INTEGER PRIMARY KEY AUTOINCREMENT,
	at_ms         INTEGER NOT NULL,
	run_id        TEXT,
	work_order_id TEXT,
	from_state    TEXT,
	to_state      TEXT,
	reason        TEXT NOT NULL DEFAULT ''
);
CREATE INDEX events_run ON events(run_id);

CREATE TRIGGER events_no_update BEFORE UPDATE ON events
BEGIN
	SELECT RAISE(ABORT, 'the events table is append-only');
END;
CREATE TRIGGER events_no_delete BEFORE DELETE ON events
BEGIN
	SELECT RAISE(ABORT, 'the events table is append-only');
END;
