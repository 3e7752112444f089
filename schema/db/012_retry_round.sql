-- sluice state database, migration 12: a person's `sluice retry` of a
-- failed or rejected run starts the retry rules over (docs/builders.md
-- "Retry rules"). The attempts keep their numbers (attempts/N/ and the
-- attempts table are never overwritten); the rules count from the attempt
-- after `rules_from`, the run's last attempt when the person retried it
-- (0: from the start).
ALTER TABLE run_retry ADD COLUMN rules_from INTEGER NOT NULL DEFAULT 0;
