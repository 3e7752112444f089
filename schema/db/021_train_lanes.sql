-- sluice state database, migration 21: lanes of the merge train.
--
-- Lanes (docs/config.md, "Lanes"): a car's lanes, from the paths its run
-- changed, as a bit set of merge.lanes (bit i: lane i, bits 0-15) with the
-- key of the merge.lanes they were read under above them (a car whose key
-- is not the config's is read again and tested again); 0: every lane and
-- the paths of none (a wide car, or no lanes configured). A car of a lane
-- built again on a tip another lane moved keeps its green (or its test
-- under way) when its lanes' paths are the same in both trees:
-- lane_commit is the commit its gates ran on. NULL: its own commit.
ALTER TABLE train_cars ADD COLUMN lanes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE train_cars ADD COLUMN lane_commit TEXT;
