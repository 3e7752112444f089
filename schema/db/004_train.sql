-- sluice state database, migration 4: the merge train (docs/design.md, The merge train).
-- An approved run is a car of its target's train until it lands or leaves:
-- its merge commit on top of the car ahead (or the target's tip), kept
-- under refs/sluice/train/<run-id>, and the merge gates' result on exactly
-- that commit. A row is deleted when the run lands (the record then lives
-- in the run's train.json, sealed by its manifest) or leaves the train.
CREATE TABLE train_cars (
	run_id      TEXT PRIMARY KEY REFERENCES runs(id),
	target      TEXT NOT NULL,
	seq         INTEGER NOT NULL,
	status      TEXT NOT NULL DEFAULT 'waiting'
		CHECK (status IN ('waiting','pending','testing','green','red','conflict')),
	base        TEXT,               -- the commit the car merges into
	head        TEXT,               -- the run head it merges
	commit_id   TEXT,               -- the car's merge commit
	tree        TEXT,               -- its tree
	ahead       TEXT,               -- the run of the car it was built on; NULL: the tip
	tester      TEXT,               -- the process running its gates (pid:start)
	gates_json  TEXT,               -- the merge gates' results on commit_id
	joined_ms   INTEGER NOT NULL,
	started_ms  INTEGER,
	tested_ms   INTEGER,
	updated_ms  INTEGER NOT NULL
);
CREATE INDEX train_cars_target ON train_cars(target, seq);

-- Facts about the database itself: 'train_since_ms', when this migration
-- ran (runs merged before it landed without a gate record).
CREATE TABLE store_meta (
	key   TEXT PRIMARY KEY,
	value TEXT NOT NULL
);
INSERT INTO store_meta (key, value)
	VALUES ('train_since_ms', CAST(CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER) AS TEXT));

-- What kind of conflict a resolution starts from: 'textual' (git's merge
-- conflicts) or 'semantic' (the merge is clean but the merge gates failed
-- on it: `gates` holds their results, with each log's tail, as JSON).
ALTER TABLE run_conflicts ADD COLUMN kind TEXT NOT NULL DEFAULT 'textual'
	CHECK (kind IN ('textual','semantic'));
ALTER TABLE run_conflicts ADD COLUMN gates TEXT;
