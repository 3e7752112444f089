-- sluice state database, migration 20: batches in the merge train
-- (docs/config.md, "Batches"). With merge.batch above 1 the gates run on the
-- tip of a chain of cars; a car ahead in that chain, untested itself, is
-- green by the test of the later car that covers it: its run and the
-- commit the gates ran on. NULL: the car's own test (or none yet).
ALTER TABLE train_cars ADD COLUMN covered_by TEXT;
ALTER TABLE train_cars ADD COLUMN covered_commit TEXT;
