-- sluice state database, migration 20: batches in the merge train, and the
-- greens of a run's own gates for the merge gates' reuse.
--
-- Batches (docs/config.md, "Batches"): with merge.batch above 1 the gates run on the
-- tip of a chain of cars; a car ahead in that chain, untested itself, is
-- green by the test of the later car that covers it: its run and the
-- commit the gates ran on. NULL: the car's own test (or none yet).
ALTER TABLE train_cars ADD COLUMN covered_by TEXT;
ALTER TABLE train_cars ADD COLUMN covered_commit TEXT;

-- No tree tested twice (docs/RELIABILITY.md): a run's own gates (gating)
-- green on its head's tree, in a worktree with nothing untracked or ignored
-- and nothing left by the gates, count for that tree as the merge gates'
-- greens do (a merge gate with the same command is not run again there).
-- Kept apart from greens: flake rates count the merge gates' runs only.
ALTER TABLE gate_runs ADD COLUMN gating_greens INTEGER NOT NULL DEFAULT 0;
