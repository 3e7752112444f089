-- sluice state database, migration 11: the landing intent of a merge train
-- car (docs/RELIABILITY.md, "Trust, round 3: the train"). Right before the
-- compare-and-swap that moves the target onto a green car, under the
-- repository lock, sluice writes the car's commit here. A commit found on
-- the target counts as sluice's landing cut short by a crash only when the
-- store recorded it as a run's merge, or a green car's `landing` names
-- exactly that commit; any other car on the target (red, under test,
-- green but never set out to land) was put there by someone else.
ALTER TABLE train_cars ADD COLUMN landing TEXT;
