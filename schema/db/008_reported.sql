-- sluice state database, migration 8: the final run state 'reported'
-- (docs/design.md, Runs and their states, src/store/state.c). A read-only or no-worktree run
-- (work order field `worktree: read-only | none`) never merges: once the
-- reviewer approved its report it ends 'reported'. SQLite cannot change a
-- CHECK, so the runs table is rebuilt with the new list. The migration runs
-- inside the store's transaction, where `PRAGMA foreign_keys` cannot be
-- switched off: the foreign keys of the tables that name runs(id) are
-- deferred for this transaction instead, the rows are kept in a temporary
-- copy while the table is dropped and made again, and put back before the
-- commit, which checks every reference again. Every column, row and index
-- stays as it was.
PRAGMA defer_foreign_keys = ON;
CREATE TEMP TABLE runs_008 AS SELECT * FROM runs;
DROP TABLE runs;
CREATE TABLE runs (
	id                   TEXT PRIMARY KEY,   -- time-sortable, see core/id.h
	work_order_id        TEXT NOT NULL,
	wo_content_hash      TEXT NOT NULL,      -- the revision that was run
	state                TEXT NOT NULL DEFAULT 'queued'
		CHECK (state IN ('queued','preparing','building','gating','reviewing',
			'awaiting_review','approved','merging','merged','resolving',
			'merge_conflict','rejected','failed','abandoned','interrupted',
			'reported')),
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
INSERT INTO runs SELECT * FROM runs_008;
DROP TABLE runs_008;
CREATE INDEX runs_state ON runs(state);
CREATE INDEX runs_work_order ON runs(work_order_id);
CREATE INDEX runs_merge_commit ON runs(merge_commit);
CREATE INDEX runs_state_finished ON runs(state, finished_ms);
