-- sluice state database, migration 15: the merge gates' outcomes per tree
-- (docs/config.md, merge.rerun_failed; docs/RELIABILITY.md, "Flaky merge
-- gates"). One row per gate, per command (its argv as JSON) and per tree
-- it ran on: how often it passed and how often it failed there. A red
-- merge gate runs again on the same tree before its car is blamed; a gate
-- both green and red on one tree is flaky, and its flake rate (flaky
-- trees / trees run) shows in `sluice status`, `sluice report` and the desk.
CREATE TABLE gate_runs (
	gate       TEXT NOT NULL,
	command    TEXT NOT NULL,
	tree       TEXT NOT NULL,
	greens     INTEGER NOT NULL DEFAULT 0,
	reds       INTEGER NOT NULL DEFAULT 0,
	updated_ms INTEGER NOT NULL,
	PRIMARY KEY (gate, command, tree)
);
