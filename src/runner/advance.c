/*
 * runner_advance(): carry one run as far as it can go now. The process
 * holds the run lock throughout, so no other tick works on the same run.
 */
#include "runner/runner_int.h"
#include "store/store.h"
#include "worktree/worktree.h"
#include "core/fs.h"
#include "core/fault.h"
#include "core/log.h"
#include "core/proc.h"
#include "core/time.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <git2.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* queued: the run is this process's now; prepare its worktree. */
int step_start(struct step *s, struct sl_err *err)
{
	char owner[64];

	sl_owner_self(owner, sizeof(owner));
	if (step__set(s, err, "owner_start", owner, NULL) != 0)
		return SL_ERROR;
	return step__move(s, RUN_PREPARING, err, "preparing the worktree");
}

/* The function of each step of the state table (store/state.c). */
static const step_fn steps[RUN_STEP_COUNT] = {
	[RUN_STEP_NONE] = NULL,
	[RUN_STEP_START] = step_start,
	[RUN_STEP_PREPARE] = step_prepare,
	[RUN_STEP_BUILD] = step_build,
	[RUN_STEP_GATE] = step_gate,
	[RUN_STEP_REVIEW] = step_review,
	[RUN_STEP_LAND] = step_train,
	[RUN_STEP_MERGE] = step_merge,
	[RUN_STEP_RESOLVE] = step_resolve,
};

step_fn runner__step_for(enum run_state state)
{
	enum run_step step = run_state_step(state);

	return (unsigned)step < RUN_STEP_COUNT ? steps[step] : NULL;
}

static int dispatch(struct step *s, struct sl_err *err)
{
	step_fn fn = runner__step_for(s->run.state);

	/* a read-only or none run never lands, however it came to be approved */
	if ((s->run.state == RUN_APPROVED || s->run.state == RUN_MERGING) &&
	    step__worktree_mode(s) != SL_WORKTREE_READ_WRITE)
		return step__fail(s, RUN_FAILED, err, "run %s is a report run (worktree %s): it is "
				  "never merged", s->run.id,
				  sl_worktree_mode_name(step__worktree_mode(s)));

	return fn ? fn(s, err) : STEP_STOP; /* awaiting_review, merge_conflict, final states */
}

enum runner_stage runner_stage_of(enum run_state state)
{
	return state == RUN_APPROVED || state == RUN_MERGING ? RUNNER_STAGE_TRAIN
							     : RUNNER_STAGE_BUILD;
}

/* The run's steps within `stage`, until one stops (at most 200). */
static int steps_of(struct step *s, enum runner_stage stage, struct sl_err *err)
{
	int error = 0;

	for (int steps = 0; steps < 200 && !error; steps++) {
		/* the next step is another stage's: its worker takes the run on */
		if (stage != RUNNER_STAGE_ANY && runner_stage_of(s->run.state) != stage)
			return STEP_STOP;
		error = dispatch(s, err);
	}
	return error;
}

int runner_advance(struct sl_ctx *ctx, const char *run_id, enum runner_stage stage,
		   struct sl_err *err)
{
	struct sl_lock lock = SL_LOCK_INIT;
	struct step s;
	char *id = NULL;
	int error;

	memset(&s, 0, sizeof(s));
	s.ctx = ctx;
	/*
	 * The lock is the run's, by its full id: RUN may be a prefix (or no run
	 * at all), and a lock taken by the name given would be another file,
	 * held beside the real run's worker (and a folder made for nothing).
	 */
	if ((error = store_run_get(ctx->st, run_id, &s.run, err)) != 0)
		goto out;
	if (!(id = strdup(s.run.id))) {
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	if ((error = runner__lock_run(ctx, id, 0, &lock, err)) != 0)
		goto out;
	store_run_release(&s.run); /* read again under the lock: it may have moved */
	if ((error = store_run_get(ctx->st, id, &s.run, err)) != 0)
		goto out;
	/*
	 * The run's lock is this process's: a builder, gate or git a killed
	 * worker of the run left (and git's locks in the run's worktree) is a
	 * leftover, whatever state the run waits in (a tick killed in the
	 * train leaves an approved run with its worktree's index lock).
	 */
	if (runner__step_for(s.run.state))
		runner__end_leftovers(ctx, &s.run);
	s.run_dir = sl_repo_run_path(&ctx->repo, s.run.id, NULL);
	s.wt = runner__worktree_path(ctx, s.run.id);
	if (!s.run_dir || !s.wt) {
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	error = steps_of(&s, stage, err);
	if (error < 0 && step__run_dir_linked(&s, err))
		error = step__fail(&s, RUN_FAILED, err, "%s", err->msg);
	if (error == STEP_STOP)
		error = 0;
	else if (error < 0) {
		/* the run keeps its state; say why on the run, try again next tick */
		struct sl_err e2 = SL_ERR_INIT;
		char why[SL_ERR_MSG_MAX + 64];
		snprintf(why, sizeof(why), "%s (retried next tick)", err->msg);
		store_run_set_reason(ctx->st, s.run.id, why, &e2);
	}
out:
	store_run_release(&s.run);
	free(s.run_dir);
	free(s.wt);
	step__diff_forget(&s);
	free(id);
	sl_lock_release(&lock);
	return error;
}
