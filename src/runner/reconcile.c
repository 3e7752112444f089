/*
 * Reconciliation at the start of every tick (docs/design.md, Locks and crash recovery): runs
 * left in an active state by a process that died are requeued, the
 * service's own stale lock files of those runs and the temporary files of
 * atomic writes a killed sluice left are removed, and worktrees
 * and run/ branches that no run owns are reported. The user's
 * .git/index.lock is never touched.
 */
#include "runner/runner_int.h"
#include "train/train.h"
#include "system/system.h"
#include "artifact/artifact.h"
#include "builder/builder.h"
#include "worktree/worktree.h"
#include "merge/merge.h"
#include "core/fs.h"
#include "core/fault.h"
#include "core/log.h"
#include "core/time.h"

#include <git2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/*
 * Where an interrupted run starts again. A build restarts from queued (the
 * worktree is reused, the attempt counts); a merge goes back to approved (a
 * merge that did land is found and recorded, never made twice); a
 * resolution restarts at resolving, from the run's own head.
 */
static enum run_state restart_state(const struct store_run *run)
{
	if (run->state == RUN_MERGING)
		return RUN_APPROVED;
	if (run->state == RUN_RESOLVING ||
	    (run->mode == RUN_MODE_RESOLVE &&
	     (run->state == RUN_BUILDING || run->state == RUN_GATING)))
		return RUN_RESOLVING;
	return RUN_QUEUED;
}

int runner__end_leftovers(struct sl_ctx *ctx, const struct store_run *run)
{
	char *owner;
	int ended = 0;

	/* a builder or gate of the dead process may still run: end its group first */
	if ((owner = sl_repo_run_path(&ctx->repo, run->id, BUILD_CHILD_OWNER_FILE)) != NULL &&
	    sl_owner_kill_group(owner)) {
		sl_log(SL_LOG_WARN, "ended the builder or gate left running by run %s", run->id);
		ended = 1;
	}
	free(owner);
	worktree_remove_stale_locks(ctx->repo.gitdir, run->id, run->branch_name);
	return ended;
}

/*
 * When the builder of an interrupted attempt was last seen at work: now when
 * it still ran (`alive`: its group was just ended), else the last write to
 * its log (a tick killed at night and found the next morning did not run all
 * that while).
 */
static int64_t last_sign_of_life(struct sl_ctx *ctx, const struct store_run *run, int alive)
{
	int64_t now = sl_now_ms(), at = now;
	char *log = alive ? NULL : sl_repo_run_path(&ctx->repo, run->id, "builder.log");
	struct stat st;

	if (log && lstat(log, &st) == 0 && S_ISREG(st.st_mode))
		at = (int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000;
	free(log);
	return at < now ? at : now;
}

/*
 * The attempt whose builder was running here when its process died: ended
 * now, and what its builder reported so far recorded (docs/budgets.md, once
 * per attempt), so that the run's budget counts its money and its minutes.
 * A job on an engine is followed again instead (runner/jobs.c).
 */
static void end_attempt(struct sl_ctx *ctx, const struct store_run *run, int alive)
{
	struct store_job job = STORE_JOB_INIT;
	struct sl_err e = SL_ERR_INIT;
	struct step s;
	int64_t wall = 0;
	int error;

	if (run->state != RUN_BUILDING || run->attempt < 1)
		return;
	if ((error = store_job_open(ctx->st, run->id, run->attempt, NULL, &job, &e)) == 0) {
		store_job_release(&job);
		return;
	}
	if (error != SL_ENOTFOUND ||
	    (error = store_attempt_interrupted(ctx->st, run->id, run->attempt,
					       last_sign_of_life(ctx, run, alive),
					       "interrupted: the sluice process running it is gone",
					       &wall, &e)) < 0) {
		sl_log(SL_LOG_WARN, "run %s: %s", run->id, e.msg);
		return;
	}
	if (error == 0)
		return; /* it had ended: its usage was recorded then */
	memset(&s, 0, sizeof(s));
	s.ctx = ctx;
	s.run = *run; /* borrowed, not released here */
	if ((s.run_dir = sl_repo_run_path(&ctx->repo, run->id, NULL)) != NULL)
		step__record_usage(&s, wall);
	free(s.run_dir);
}

/* Requeue an active run whose owner is gone; *done = 1 when it was requeued. */
static int requeue(struct sl_ctx *ctx, const struct store_run *listed, int *done,
		   struct sl_err *err)
{
	struct sl_lock lock = SL_LOCK_INIT;
	struct store_run run;
	char reason[512];
	enum run_state to;
	int error;

	memset(&run, 0, sizeof(run));
	/* nobody holds the run lock: its owner is gone */
	if (runner__lock_run(ctx, listed->id, 0, &lock, err) != 0) {
		sl_err_clear(err);
		return 0;
	}
	/* read it again under the lock: another tick may have moved it meanwhile */
	if ((error = store_run_get(ctx->st, listed->id, &run, err)) != 0 ||
	    !run_state_is_active(run.state))
		goto out;
	/* resolving with no owner: a person's `sluice retry` put it there, nothing was started */
	if (!run.owner_pid && run_state_is_runnable(run.state))
		goto out;
	end_attempt(ctx, &run, runner__end_leftovers(ctx, &run));
	to = restart_state(&run);
	snprintf(reason, sizeof(reason), "interrupted while %s: %s", run_state_name(run.state),
		 run.reason && *run.reason ? run.reason : "the sluice process working on it is gone");
	/* both steps in one transaction: interrupted is never left standing */
	if ((error = store_begin(ctx->st, err)) != 0)
		goto out;
	error = store_run_transition(ctx->st, run.id, run.state, RUN_INTERRUPTED, reason, 1, err);
	if (!error) {
		snprintf(reason, sizeof(reason), "%s after an interruption (attempt %d so far)",
			 to == RUN_QUEUED     ? "requeued"
			 : to == RUN_APPROVED ? "the merge is tried again"
					      : "the resolution starts again",
			 run.attempt);
		error = store_run_transition(ctx->st, run.id, RUN_INTERRUPTED, to, reason, 1, err);
	}
	if (!error)
		error = store_commit(ctx->st, err);
	else
		store_rollback(ctx->st);
	if (error == SL_ECONFLICT) { /* someone else moved it: not ours to requeue */
		sl_err_clear(err);
		error = 0;
		goto out;
	}
	*done = !error;
out:
	store_run_release(&run);
	sl_lock_release(&lock);
	return error;
}

static int seal_merged(struct sl_ctx *ctx, const struct store_run *runs, size_t n,
		       struct sl_err *err)
{
	struct sl_lock lock = SL_LOCK_INIT;
	int error = runner__seal(ctx, runs, n, &lock, err);

	sl_lock_release(&lock);
	return error;
}

struct known_runs {
	const struct store_run *runs;
	size_t n;
};

/* 1 when `id` is one of the store's runs: a worktree entry of that name may be ours. */
static int run_id_known(const char *id, void *data)
{
	const struct known_runs *k = data;
	size_t i;

	for (i = 0; i < k->n; i++)
		if (!strcmp(k->runs[i].id, id))
			return 1;
	return 0;
}

/*
 * A failed or rejected run's worktree goes (to the pool) once its work is
 * committed to its branch (the store has its head commit, and diff.patch was
 * written from it) when worktree.keep_failed is off, or when it is not among
 * the gc.keep_failed newest such runs that still have one (runs come newest
 * first; *kept counts those kept so far), or it finished longer than
 * gc.keep_failed_for ago. Only the worktree: the folder and branch stay, for
 * a look and for retry. The store says so, not a file in the run folder a
 * builder can plant.
 */
static int failed_recyclable(struct sl_ctx *ctx, const struct store_run *run, const char *wt,
			     size_t *kept)
{
	const struct sl_config *c = ctx->cfg;

	if ((run->state != RUN_FAILED && run->state != RUN_REJECTED) || !run->head_commit ||
	    !run->head_commit[0])
		return 0;
	if (!c->worktree.keep_failed)
		return 1;
	if (!wt || !sl_path_exists(wt))
		return 0;
	if (run->finished_ms > 0 && sl_now_ms() - run->finished_ms > c->gc.keep_failed_ms)
		return 1;
	if (*kept >= (size_t)c->gc.keep_failed)
		return 1;
	(*kept)++;
	return 0;
}

/* A finished run's worktree, to the pool or removed; a merged run's branch deleted. */
static void cleanup_run(struct sl_ctx *ctx, git_repository *repo, const struct store_run *run,
			size_t *kept_failed)
{
	struct sl_err err = SL_ERR_INIT;
	int merged = run->state == RUN_MERGED, deleted = 0, failed = 0, rc;
	char *wt = runner__worktree_path(ctx, run->id);

	/* a reported run's worktree is at its base (the no_write guard): done with too */
	if (!merged && run->state != RUN_ABANDONED && run->state != RUN_REPORTED &&
	    !(failed = failed_recyclable(ctx, run, wt, kept_failed)))
		goto out;
	if (wt && sl_path_exists(wt)) {
		/* a failed run's work is on its branch and in its diff.patch: forced */
		rc = runner__retire_worktree(ctx, run->id, (const char *const *)ctx->excluded,
					     failed, merged, &deleted, &err);
		if (rc == SL_ENOTFOUND)
			rc = worktree_discard(ctx->repo.root, ctx->repo.gitdir, run->id, &err);
		if (rc != 0)
			sl_log(SL_LOG_WARN, "run %s is %s but its worktree stays: %s", run->id,
			       run_state_name(run->state), err.msg);
		else
			sl_log(SL_LOG_INFO, "removed the worktree of %s run %s",
			       run_state_name(run->state), run->id);
	}
	if (merged)
		runner__delete_merged_branch(ctx, repo, run);
out:
	free(wt);
}

/*
 * Finish the cleanup a crash interrupted: a merged or abandoned run whose
 * worktree is still there (its work is on the target or saved on its
 * branch) loses the worktree; a merged run loses its branch too. A dirty
 * worktree is left alone and reported. Stale .git/worktrees entries of
 * known runs whose directory is gone are pruned after git's grace period;
 * the user's own worktree entries are never touched.
 */
static void finish_cleanups(struct sl_ctx *ctx, const struct store_run *runs, size_t n)
{
	struct known_runs known = { runs, n };
	git_repository *repo = NULL;
	struct sl_lock lock = SL_LOCK_INIT;
	struct sl_err err = SL_ERR_INIT;
	size_t i, pruned = 0, kept_failed = 0;
	char *journal;

	if (runner__lock_repo(ctx, &lock, &err) != 0) {
		sl_log(SL_LOG_WARN, "cleanup skipped: %s", err.msg);
		return;
	}
	/* one repository for all the branch look-ups: this runs every tick */
	if (git_repository_open(&repo, ctx->repo.root) < 0)
		repo = NULL;
	for (i = 0; i < n; i++)
		cleanup_run(ctx, repo, &runs[i], &kept_failed);
	worktree_pool_tidy(ctx->repo.root, ctx->cfg->worktree.pool);
	if ((journal = sl_path_join(ctx->repo.sysdir, RUNNER_MERGE_JOURNAL)) != NULL)
		merge_recover_dead(ctx->repo.root, ctx->repo.gitdir, ctx->target_ref,
				   ctx->cfg->target, journal);
	free(journal);
	train_tidy(ctx, runs, n);
	train_checkouts_prune(ctx);
	git_repository_free(repo);
	merge_remove_stale_ref_locks(ctx->repo.gitdir, ctx->target_ref);
	system_remove_dead_tmp(&ctx->repo);
	sl_err_clear(&err);
	if (worktree_prune_stale(ctx->repo.root, run_id_known, &known, &pruned, &err) == 0 &&
	    pruned)
		sl_log(SL_LOG_INFO, "pruned %zu stale worktree entr%s", pruned,
		       pruned == 1 ? "y" : "ies");
	sl_lock_release(&lock);
}

int runner_reconcile(struct sl_ctx *ctx, int *requeued, int *orphans, struct sl_err *err)
{
	struct store_run *runs = NULL;
	size_t n = 0, i;
	int error;

	*requeued = 0;
	*orphans = 0;
	if ((error = target_exists(ctx, err)) != 0)
		return error;
	if ((error = store_runs_list(ctx->st, RUN_STATES_ALL, NULL, &runs, &n, err)) != 0)
		return error;
	for (i = 0; i < n && !error; i++) {
		if (!run_state_is_active(runs[i].state) && runs[i].state != RUN_INTERRUPTED)
			continue;
		if (runs[i].state == RUN_INTERRUPTED) {
			/* only a database of an older sluice holds one: rebuild it */
			error = store_run_transition(ctx->st, runs[i].id, RUN_INTERRUPTED, RUN_QUEUED,
						     "requeued after an interruption", 0, err);
			(*requeued)++;
			continue;
		}
		int done = 0;
		error = requeue(ctx, &runs[i], &done, err);
		*requeued += done;
		sl_fault(done ? "reconcile.after_requeue" : NULL);
	}
	if (!error)
		error = seal_merged(ctx, runs, n, err);
	if (!error)
		finish_cleanups(ctx, runs, n);
	if (!error)
		*orphans = system_count_orphans(&ctx->repo, runs, n);
	store_runs_free(runs, n);
	return error;
}
