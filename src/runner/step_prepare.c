/*
 * step_prepare(): the run's worktree and branch at the recorded base, made
 * again when a crash left it half made; the work order written into the run folder.
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

static int write_work_order(struct step *s, struct sl_err *err)
{
	struct store_wo wo = STORE_WO_INIT;
	struct sl_buf content = SL_BUF_INIT;
	char *path = step__path(s, "work_order.md");
	int error;

	if (!path)
		return sl_err_set(err, SL_ERROR, "out of memory");
	if (sl_path_exists(path)) {
		free(path);
		return 0; /* written when the run started: keep the bytes that were run */
	}
	if ((error = store_wo_get(s->ctx->st, s->run.work_order_id, &wo, err)) == 0 &&
	    (error = store_wo_content(s->ctx->st, s->run.work_order_id, &content, err)) == 0) {
		if (strcmp(wo.content_hash, s->run.wo_content_hash))
			error = sl_err_set(err, SL_ECONFLICT,
					   "work order '%s' changed after the run was claimed",
					   s->run.work_order_id);
		else
			error = sl_write_file_atomic(path, content.ptr, content.len, err);
	}
	store_wo_release(&wo);
	sl_buf_release(&content);
	free(path);
	return error;
}

/*
 * worktree.setup, until it once succeeded in this worktree (setup.done
 * marks it): 0, or what step__fail() returned.
 */
static int setup_once(struct step *s, struct sl_err *err)
{
	char *done = NULL, *marker = NULL;

	if (!s->ctx->cfg->worktree.setup || (done = step__read(s, "setup.done", 64)) != NULL) {
		free(done);
		return 0;
	}
	if (step__run_setup(s, err) != 0)
		return step__fail(s, RUN_FAILED, err, "%s", err->msg);
	sl_fault("prepare.after_setup");
	if ((marker = step__path(s, "setup.done")) != NULL)
		sl_write_file(marker, "ok\n", 3, err);
	free(marker);
	sl_err_clear(err);
	return 0;
}

/*
 * The run's budget (docs/budgets.md) before its first attempt: 1 when it
 * is spent already (budget.usd 0, or a run replayed after its attempts),
 * the run failed saying so.
 */
static int budget_spent(struct step *s, struct sl_err *err)
{
	char why[600];
	int error;

	if ((error = step__run_budget(s, why, sizeof(why), NULL, err)) <= 0)
		return error;
	return (error = step__fail(s, RUN_FAILED, err, "%s", why)) < 0 ? error : 1;
}

/*
 * `worktree: none`: no worktree and no branch, only the base (for the
 * review's tree); the builder's folder is made for each attempt
 * (runner/report.c).
 */
static int prepare_none(struct step *s, struct sl_err *err)
{
	struct sl_lock lock = SL_LOCK_INIT;
	char n[16];
	int error;

	if ((error = runner__lock_repo(s->ctx, &lock, err)) != 0)
		return error;
	error = step__set_base(s, err);
	sl_lock_release(&lock);
	if (error == SL_EINVALID)
		return step__fail(s, RUN_FAILED, err, "cannot prepare the run: %s", err->msg);
	if (error)
		return error;
	if ((error = budget_spent(s, err)) != 0)
		return error > 0 ? STEP_STOP : error;
	snprintf(n, sizeof(n), "%d", s->run.attempt + 1);
	if ((error = step__set(s, err, "attempt", n, NULL)) != 0)
		return error;
	return step__move(s, RUN_BUILDING, err, "attempt %d: no worktree (worktree: none) at %.12s",
			  s->run.attempt, s->run.base_commit);
}

/*
 * A job of this attempt that a killed tick left on the engine: followed
 * again, in the same attempt (1, moved), never submitted twice.
 */
static int resume_job(struct step *s, struct sl_err *err)
{
	enum run_state to = RUN_BUILDING;
	int error;

	if (!step__remote(s) || s->run.attempt < 1)
		return 0;
	if ((error = step__job_resume(s, &to, err)) <= 0)
		return error;
	error = step__move(s, to, err, "attempt %d: its %s job is still the engine's; following "
			   "it again", s->run.attempt, to == RUN_GATING ? "gates" : "build");
	return error ? error : 1;
}

int step_prepare(struct step *s, struct sl_err *err)
{
	char n[16];
	int error, reused = 0;

	if ((error = write_work_order(s, err)) != 0) {
		if (error == SL_ECONFLICT)
			return step__fail(s, RUN_FAILED, err, "%s", err->msg);
		return error;
	}
	if (step__worktree_mode(s) == SL_WORKTREE_NONE)
		return prepare_none(s, err);
	/*
	 * A bad share/copy path or a missing target branch is final. Anything
	 * else (a worktree left half made by a crash that could not be set aside
	 * this time, a lock) is tried again by the next tick: the run stays,
	 * with the reason.
	 */
	if ((error = step__prepare_worktree(s, &reused, err)) == SL_EINVALID)
		return step__fail(s, RUN_FAILED, err, "cannot prepare the worktree: %s", err->msg);
	/* jobs run worktree.setup in their own clone (build/exec_script.c), not here */
	if (error || (!step__remote(s) && (error = setup_once(s, err)) != 0))
		return error;
	if ((error = resume_job(s, err)) != 0)
		return error > 0 ? 0 : error;
	if ((error = budget_spent(s, err)) != 0)
		return error > 0 ? STEP_STOP : error;
	snprintf(n, sizeof(n), "%d", s->run.attempt + 1);
	if ((error = step__set(s, err, "attempt", n, NULL)) != 0)
		return error;
	if (reused == STEP_WT_POOL && s->pool_rewritten > 0)
		return step__move(s, RUN_BUILDING, err,
				  "attempt %d: worktree from the pool at %.12s (%ld path%s rewritten)",
				  s->run.attempt, s->run.base_commit, s->pool_rewritten - 1,
				  s->pool_rewritten == 2 ? "" : "s");
	return step__move(s, RUN_BUILDING, err, "attempt %d: %s at %.12s", s->run.attempt,
			  reused == STEP_WT_POOL ? "worktree from the pool (reset in full)" :
			  reused ? "worktree reused" : "worktree ready", s->run.base_commit);
}
