-- sluice state database, migration 6: the manifest chain (docs/audit.md, The manifest and the
-- chain, src/artifact/artifact.h). One row per link: a merged run's
-- manifest.json, recorded when it is written (before the file, in the
-- same lock), so that the next manifest finds its previous link with one
-- query instead of reading every earlier manifest. A gc tombstone takes
-- its run's place in the chain with the same hash and key: gc leaves the
-- row as it is. The files stay the authority: `sluice audit` verifies the
-- chain from them, and a row that disagrees with its file is a finding.
CREATE TABLE manifest_chain (
	run_id        TEXT PRIMARY KEY,       -- the run (no foreign key: a backfilled
	                                      -- tombstone may outlive its row)
	merged_at     TEXT NOT NULL,          -- the order key with run_id: merge.json's
	                                      -- merged_at (ISO 8601 UTC), '' if unknown
	sha256        TEXT NOT NULL,          -- of the manifest.json's bytes
	previous_run  TEXT,                   -- the link it names before it (NULL: first)
	recorded_ms   INTEGER NOT NULL
);
CREATE INDEX manifest_chain_order ON manifest_chain(merged_at, run_id);

-- The manifests already on disk (a database that had runs, or run folders
-- kept from an earlier database) are not in this table yet: the first
-- manifest written after this migration reads them once
-- (artifact/manifest.c) and deletes this key.
INSERT INTO store_meta (key, value) VALUES ('manifest_chain_backfill', 'pending');

-- Every merge first seals the merged run that finished last, if a killed
-- merge left it without its manifest (runner__seal_newest): found in one
-- step of this index, not by loading every run.
CREATE INDEX runs_state_finished ON runs(state, finished_ms);
