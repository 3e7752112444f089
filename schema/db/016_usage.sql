-- sluice state database, migration 16: what each attempt used (docs/budgets.md).
-- One row per run, attempt and role ('builder' or 'reviewer'): tokens in,
-- out and from or into the model's cache, the cost in US dollars (NULL:
-- not known), whether that cost is an estimate from budget.prices, the
-- model and the attempt's wall time. The key makes a replayed attempt (a
-- tick killed after the builder ran) or a retry of the record replace the
-- row, never add a second one.
CREATE TABLE usage (
	run_id             TEXT NOT NULL,
	attempt            INTEGER NOT NULL,
	role               TEXT NOT NULL CHECK (role IN ('builder', 'reviewer')),
	model              TEXT,
	input_tokens       INTEGER,
	output_tokens      INTEGER,
	cache_read_tokens  INTEGER,
	cache_write_tokens INTEGER,
	cost_usd           REAL,
	estimate           INTEGER NOT NULL DEFAULT 0,
	wall_ms            INTEGER NOT NULL DEFAULT 0,
	recorded_ms        INTEGER NOT NULL,
	PRIMARY KEY (run_id, attempt, role)
);
CREATE INDEX usage_recorded ON usage (recorded_ms);
