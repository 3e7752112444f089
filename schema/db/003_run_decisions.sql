-- sluice state database, migration 3: what a run's next step decides on.
-- These used to be read back from the run folder (retry.json,
-- conflict.json), which builders, gates and resolvers can write (issue 10):
-- sluice now keeps them here, and the files in the run folder are copies
-- for people that sluice never reads.

-- The retry rules' active overrides (runner/retry.h): one rule index per
-- keyword, -1 for none. No row: the rules start over (no override).
CREATE TABLE run_retry (
	run_id       TEXT PRIMARY KEY REFERENCES runs(id),
	builder_rule INTEGER NOT NULL DEFAULT -1,
	prompt_rule  INTEGER NOT NULL DEFAULT -1,
	reset_rule   INTEGER NOT NULL DEFAULT -1,
	updated_ms   INTEGER NOT NULL
);

-- The merge conflict a resolution starts from, recorded when the merge
-- conflicted: the target tip and the run head that were merged, and the
-- paths git found conflicted (the conflict-marker check covers them).
CREATE TABLE run_conflicts (
	run_id     TEXT PRIMARY KEY REFERENCES runs(id),
	target_tip TEXT NOT NULL,
	run_head   TEXT NOT NULL,
	found_ms   INTEGER NOT NULL
);
CREATE TABLE run_conflict_paths (
	run_id TEXT NOT NULL REFERENCES runs(id),
	path   TEXT NOT NULL,
	PRIMARY KEY (run_id, path)
);
