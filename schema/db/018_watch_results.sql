-- sluice state database, migration 18: the results of the watch gates
-- (docs/watch.md). `sluice watch` runs each gate of watch.gates on the
-- target's tip, and on the landings a bisection tests; each run of a gate
-- on a commit is one row (a red run and its run again are two).
CREATE TABLE watch_results (
	id          INTEGER PRIMARY KEY,
	target      TEXT NOT NULL,            -- e.g. refs/heads/main
	gate        TEXT NOT NULL,            -- a name of watch.gates
	commit_oid  TEXT NOT NULL,            -- the commit it ran on (hex)
	-- tip: its first run on the tip; again: the tip's run again after a red
	-- one; bisect: a bisection's runs (a red one's run again included)
	purpose     TEXT NOT NULL CHECK (purpose IN ('tip', 'again', 'bisect')),
	passed      INTEGER NOT NULL CHECK (passed IN (0, 1)),
	exit_code   INTEGER NOT NULL,         -- 128+signal when signalled; timed out: see how
	how         TEXT NOT NULL DEFAULT '', -- "exit 0", "timed out after 10m"
	log         TEXT NOT NULL DEFAULT '', -- its output, relative to .system/
	started_ms  INTEGER NOT NULL,
	finished_ms INTEGER NOT NULL,
	-- on the tip's last run of a believed red gate, once bisected: the first
	-- red commit and the run that landed it (NULL: a person's commit)
	culprit     TEXT,
	culprit_run TEXT
);
CREATE INDEX watch_results_gate ON watch_results (target, gate, id);
