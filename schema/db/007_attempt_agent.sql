-- sluice state database, migration 7: agent escalation and sessions
-- (docs/config.md "Named builders" and "Retry rules", src/build/build.h).
-- Each attempt records the agent it ran (a name of `builders:`, a preset,
-- 'builder.command' or 'retry.builder') and whether it resumed the agent
-- CLI's own session ('keep') or started a new one ('new'); NULL for
-- attempts made before this migration.
ALTER TABLE attempts ADD COLUMN agent TEXT;
ALTER TABLE attempts ADD COLUMN session TEXT;

-- The retry rules' active `session:` override (an index into the retry
-- list, -1: none), beside builder_rule (which `agent:` shares: both say
-- what builds from then on), prompt_rule and reset_rule.
ALTER TABLE run_retry ADD COLUMN session_rule INTEGER NOT NULL DEFAULT -1;
