-- sluice state database, migration 2: watching the target branch.
-- sluice records the tips of the target it observed or moved to, the
-- commits that came onto the target from someone else (a person: the
-- user's), and the unreviewed landings it found (commits from a run that
-- no review landed). See docs/audit.md, "Moves of the target sluice did
-- not make".

-- One row per target ref.
CREATE TABLE target_tips (
	target     TEXT PRIMARY KEY,   -- refs/heads/<target>
	root       TEXT NOT NULL,      -- the first tip observed: audit looks back to here
	tip        TEXT NOT NULL,      -- the last tip observed or landed
	updated_ms INTEGER NOT NULL
);

-- Commits on the target that are the user's: seen arriving from outside
-- sluice and from no run ('observed'), or accepted by a person with
-- `sluice accept-target` ('accepted').
CREATE TABLE user_commits (
	target    TEXT NOT NULL,
	commit_id TEXT NOT NULL,
	how       TEXT NOT NULL CHECK (how IN ('observed','accepted')),
	at_ms     INTEGER NOT NULL,
	PRIMARY KEY (target, commit_id)
);

-- Unreviewed landings: a commit from a run on the target that sluice did
-- not land. While one is open (cleared_ms NULL) no run lands.
CREATE TABLE target_alerts (
	target     TEXT NOT NULL,
	commit_id  TEXT NOT NULL,
	run_id     TEXT,               -- the run it came from (NULL: unknown)
	found_ms   INTEGER NOT NULL,
	cleared_ms INTEGER,            -- when the target stopped carrying it, or it was accepted
	PRIMARY KEY (target, commit_id)
);

-- The audit and the watch look landings up by their merge commit.
CREATE INDEX runs_merge_commit ON runs(merge_commit);
