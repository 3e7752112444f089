-- sluice state database, migration 9: jobs on an engine (docs/scale-out.md, What stays on the
-- sluice host, what goes to a job, src/build/exec.h). A builder or gate job
-- submitted to Slurm or Kubernetes is recorded here (its handle) before
-- sluice waits for it, so that a tick killed meanwhile leaves a trace the
-- next tick follows: it asks the engine about the job and takes its result,
-- or cancels it when the run was abandoned. ended_at NULL: still the run's
-- (not collected, not cancelled).
CREATE TABLE jobs (
	id           INTEGER PRIMARY KEY,
	run_id       TEXT NOT NULL REFERENCES runs(id),
	attempt      INTEGER NOT NULL,
	purpose      TEXT NOT NULL CHECK (purpose IN ('build', 'gates', 'train')),
	handle       TEXT NOT NULL,       -- "slurm:1234", "kubernetes:ns/name"
	refs         TEXT NOT NULL,       -- where its refs are on executor.remote
	submitted_at INTEGER NOT NULL,    -- ms since the epoch
	ended_at     INTEGER,
	outcome      TEXT                 -- "exit 0", "lost: NODE_FAIL (NodeDown)", "cancelled"
);
CREATE INDEX jobs_run ON jobs(run_id, ended_at);
