/*
 * Builders and gates as jobs on an engine (build/exec.h, docs/scale-out.md, Crashes and lost
 * jobs): the run's side. The job of a run is recorded before it is waited for;
 * a tick killed meanwhile leaves the run to reconciliation, which requeues
 * it, and step_prepare follows the open job again instead of starting an
 * attempt (step__job_resume). An abandoned run's open jobs are cancelled.
 */
#include "runner/runner_int.h"
#include "store/store.h"
#include "builder/builder.h"
#include "worktree/worktree.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int step__remote(struct step *s)
{
	return exec_remote(s->ctx->cfg) && step__worktree_mode(s) != SL_WORKTREE_NONE;
}

/*
 * Before a new build job: what the worktree holds uncommitted (an earlier
 * attempt's result put in by a sluice killed before it committed it, a
 * failed gate's leftovers) is committed to the run branch, so the job
 * builds on it as a builder here would; the job's result, put in with
 * read-tree --reset, would replace it otherwise. Not when the attempt's
 * job is followed again (it was given the branch as it was), nor for a
 * resolution (a merge under way) or a read-only run (a commit is a write).
 */
static int save_before_build(struct step *s, struct sl_err *err)
{
	struct store_job job = STORE_JOB_INIT;
	char head[41];
	int error, committed = 0;

	if (s->run.mode == RUN_MODE_RESOLVE || step__worktree_mode(s) != SL_WORKTREE_READ_WRITE)
		return 0;
	error = store_job_open(s->ctx->st, s->run.id, s->run.attempt, "build", &job, err);
	store_job_release(&job);
	if (error != SL_ENOTFOUND)
		return error; /* 0: an open job, followed again; or an error */
	sl_err_clear(err);
	return step__snapshot(s, "sluice: what the worktree held before the build job",
			      STEP_SNAP_LOCK | STEP_SNAP_NOTHING_OK, head, &committed, err);
}

int step__job_init(struct step *s, const char *purpose, struct exec_run *r, char base[41],
		   char theirs[41], struct sl_err *err)
{
	int error;

	memset(r, 0, sizeof(*r));
	theirs[0] = '\0';
	if (!strcmp(purpose, "build") && (error = save_before_build(s, err)) != 0)
		return error;
	if ((error = worktree_head(s->wt, s->run.id, base, err)) != 0)
		return error;
	if (!strcmp(purpose, "build") && s->run.mode == RUN_MODE_RESOLVE)
		worktree_merge_head(s->ctx->repo.gitdir, s->run.id, theirs);
	r->st = s->ctx->st;
	r->repo_root = s->ctx->repo.root;
	r->run_id = s->run.id;
	r->work_order_id = s->run.work_order_id;
	r->attempt = s->run.attempt;
	r->purpose = purpose;
	r->base = base;
	r->theirs = theirs[0] ? theirs : NULL;
	r->state_name = run_state_name(s->run.state);
	return 0;
}

int step__job_resume(struct step *s, enum run_state *to, struct sl_err *err)
{
	struct store_job job = STORE_JOB_INIT;
	int error = store_job_open(s->ctx->st, s->run.id, s->run.attempt, NULL, &job, err);

	if (error == SL_ENOTFOUND) {
		sl_err_clear(err);
		return 0;
	}
	if (error)
		return error;
	*to = !strcmp(job.purpose, "gates") ? RUN_GATING : RUN_BUILDING;
	if (!strcmp(job.purpose, "train")) {
		/* a car's gates are run again with the train: this one is cancelled */
		exec_job_cancel(s->ctx->cfg, s->ctx->st, &job, "the merge train starts again after an interruption");
		store_job_release(&job);
		return 0;
	}
	store_job_release(&job);
	return 1;
}
