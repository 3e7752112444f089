/*
 * A run's worktree: made (from the pool or fresh, with worktree.share, .copy
 * and .setup), made again for the train's gates, its mode, and at the end
 * retired to the pool or removed.
 */
#include "runner/runner_int.h"
#include "train/train.h"
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int step__run_setup(struct step *s, struct sl_err *err)
{
	struct sl_proc_opts po = SL_PROC_OPTS_INIT;
	struct sl_proc_result res;
	char *log = step__path(s, "setup.log"), how[128];
	int error;

	po.argv = (const char *const *)s->ctx->cfg->worktree.setup;
	po.cwd = s->wt;
	po.log_path = log;
	po.log_max = s->ctx->cfg->builder.log_max;
	po.timeout_ms = s->ctx->cfg->worktree.setup_timeout_ms;
	if ((error = sl_proc_run(&po, &res, err)) == 0 && (res.exit_code || res.timed_out)) {
		sl_proc_describe(how, sizeof(how), &res);
		error = sl_err_set(err, SL_ERROR, "worktree.setup failed (%s); see %s", how, log);
	}
	free(log);
	return error;
}

/*
 * The worktree folder exists but is no worktree of this run: a creation
 * killed half way. Called with the repository lock held. Set aside
 * (worktree_set_aside()), a folder with work in it kept beside the run as
 * worktree.broken-<time> (not an artifact), and said so.
 */
static int set_aside_half_made(struct step *s, struct sl_err *err)
{
	char *kept = NULL;
	int error = worktree_set_aside(s->ctx->repo.gitdir, s->run.id, s->wt, s->run_dir, &kept,
				       err);

	if (kept)
		sl_log(SL_LOG_WARN, "run %s: a broken worktree was kept as '%s'", s->run.id, kept);
	free(kept);
	return error;
}

/*
 * Under the repository lock: a finished run's worktree from the pool
 * (worktree.pool) becomes this run's, on its branch at its base, its files
 * not reset yet (reset_pooled() does that without the lock): 1 when the run
 * got one, 0 when it makes a fresh one. A slot that cannot be reused is no
 * failure of the run: it is logged and dropped.
 */
static int from_pool(struct step *s)
{
	struct sl_err err = SL_ERR_INIT;
	char *slot = NULL;
	int error;

	if (s->ctx->cfg->worktree.pool <= 0) {
		/* no pool: only what a killed tick left half moved, should there be a pool folder */
		char *dir = sl_path_join(s->ctx->repo.sysdir, "pool");
		if (dir && sl_is_dir(dir) && worktree_pool_recover(s->ctx->repo.root, &err) != 0)
			sl_log(SL_LOG_WARN, "the worktree pool could not be checked: %s", err.msg);
		free(dir);
		return 0;
	}
	error = worktree_pool_take(s->ctx->repo.root, s->run.id, s->run.branch_name,
				   s->run.base_commit, &slot, &err);
	if (error)
		sl_log(SL_LOG_WARN, "run %s: a worktree of the pool could not be reused, a fresh "
		       "one is made: %s", s->run.id, err.msg);
	else if (slot)
		sl_log(SL_LOG_INFO, "run %s: worktree from the pool (%s)", s->run.id, slot);
	error = !error && slot;
	free(slot);
	return error;
}

/* The pooled worktree's files reset to the base: 0, or -1 when it was dropped (make a fresh one). */
static int reset_pooled(struct step *s)
{
	struct sl_err err = SL_ERR_INIT;
	int64_t t0 = sl_now_ms();
	long rewritten = -1;

	s->pool_rewritten = 0;
	if (worktree_pool_reset(s->ctx->repo.root, s->run.id, s->ctx->cfg->worktree.keep_ignored,
				&rewritten, &err) != 0) {
		sl_log(SL_LOG_WARN, "run %s: the worktree from the pool could not be reset, a fresh "
		       "one is made: %s", s->run.id, err.msg);
		return -1;
	}
	s->pool_rewritten = rewritten + 1;
	sl_log(SL_LOG_INFO, "run %s: worktree from the pool reset to %.12s in %lld ms (%s)",
	       s->run.id, s->run.base_commit, (long long)(sl_now_ms() - t0),
	       rewritten < 0 ? "in full" : "only the paths that differ from its last commit");
	return 0;
}

/*
 * A worktree this run took from the pool whose reset a killed process cut
 * short: 1 when it is whole and only its reset is left. A take cut short
 * before that (its intent still there: half moved, half linked) is first
 * put back into the pool by the recovery, never built in.
 */
static int taken_before(struct step *s)
{
	struct sl_err err = SL_ERR_INIT;

	if (!worktree_pool_pending(s->ctx->repo.gitdir, s->run.id))
		return 0;
	if (worktree_pool_recover(s->ctx->repo.root, &err) != 0)
		sl_log(SL_LOG_WARN, "the worktree pool could not be checked: %s", err.msg);
	return worktree_pool_pending(s->ctx->repo.gitdir, s->run.id);
}

/*
 * The worktree and branch at the recorded base, made again when a crash
 * left them half made; from the pool when `pool` and it has one (*reused is
 * then 2), or when a take was cut short before its reset.
 */
static int create_worktree(struct step *s, int *reused, int pool, struct sl_err *err)
{
	int error;

	sl_fault("prepare.before_worktree_add");
	if (taken_before(s) || (pool && from_pool(s))) {
		*reused = STEP_WT_POOL;
		return 0;
	}
	error = worktree_create(s->ctx->repo.root, s->run.id, s->run.branch_name,
				       s->run.base_commit, NULL, reused, err);
	if ((error == SL_EEXISTS || error == SL_ERROR) &&
	    worktree_half_made(s->ctx->repo.gitdir, s->run.id, s->wt)) {
		/* a creation cut off by a crash: set it aside and make it again */
		sl_err_clear(err);
		if ((error = set_aside_half_made(s, err)) == 0)
			error = worktree_create(s->ctx->repo.root, s->run.id,
						       s->run.branch_name, s->run.base_commit,
						       NULL, reused, err);
	}
	return error;
}

/* The shared and copied paths of worktree.share and worktree.copy. */
static int share_and_copy(struct step *s, struct sl_err *err)
{
	struct sl_buf notes = SL_BUF_INIT;
	int error;

	if ((error = worktree_share(s->ctx->repo.root, s->wt,
					   (const char *const *)s->ctx->cfg->worktree.share,
					   &notes, err)) != 0 ||
	    (error = worktree_copy(s->ctx->repo.root, s->wt,
					  (const char *const *)s->ctx->cfg->worktree.copy, &notes,
					  err)) != 0) {
		if (error == SL_EEXISTS) /* tracked in the worktree: so on every tick */
			error = SL_EINVALID;
		goto out;
	}
	if (notes.len)
		sl_log(SL_LOG_INFO, "run %s: %s", s->run.id, sl_buf_cstr(&notes));
	sl_fault("prepare.after_environment");
out:
	sl_buf_release(&notes);
	return error;
}

/* The base: the target's tip, once. A target that is gone stays gone: SL_EINVALID. */
int step__set_base(struct step *s, struct sl_err *err)
{
	char tip[41];
	int error;

	if (s->run.base_commit)
		return 0;
	if ((error = step__revert_base(s, err)) != 0 || s->run.base_commit)
		return error; /* a revert run starts at the landing it reverts */
	if ((error = step__target_tip(s, tip, err)) == SL_ENOTFOUND)
		error = SL_EINVALID;
	return error ? error : step__set(s, err, "base_commit", tip, NULL);
}

/*
 * Under the repository lock: the base, the worktree, its environment; but
 * the reset of a worktree from the pool, which is the run's by then, and
 * after it the environment when there is no shared or copied path. On
 * the second try the pool is not asked. SL_EINVALID for what is final (a
 * bad share/copy path, a target branch that is gone).
 */
int step__prepare_worktree(struct step *s, int *reused, struct sl_err *err)
{
	struct sl_lock lock = SL_LOCK_INIT;
	int error, tries;

	for (tries = 0; tries < 2; tries++) {
		if ((error = runner__lock_repo(s->ctx, &lock, err)) != 0)
			return error;
		if ((error = step__set_base(s, err)) != 0 ||
		    (error = create_worktree(s, reused, tries == 0, err)) != 0 || *reused != STEP_WT_POOL)
			break;
		sl_lock_release(&lock);
		if (reset_pooled(s) != 0) {
			*reused = STEP_WT_FRESH;
			continue; /* dropped: a fresh one */
		}
		/* the lock again only to read the main checkout, which a landing rewrites */
		if ((sl_strv_len(s->ctx->cfg->worktree.share) ||
		     sl_strv_len(s->ctx->cfg->worktree.copy)) &&
		    (error = runner__lock_repo(s->ctx, &lock, err)) != 0)
			return error;
		break;
	}
	if (!error && tries == 2)
		error = sl_err_set(err, SL_ERROR, "no worktree could be made; tried again next tick");
	if (error)
		goto out;
	sl_fault("prepare.after_worktree_add");
	error = share_and_copy(s, err);
out:
	sl_lock_release(&lock);
	return error;
}

int step__worktree_again(struct step *s, struct sl_err *err)
{
	char *done = step__path(s, "setup.done");
	int error, reused = 0;

	if (!done)
		return sl_err_set(err, SL_ERROR, "out of memory");
	error = sl_unlink(done, err); /* a new worktree: its setup runs again */
	if (!error && (error = step__prepare_worktree(s, &reused, err)) == 0 &&
	    s->ctx->cfg->worktree.setup && step__run_setup(s, err) != 0)
		error = err->code < 0 ? err->code : SL_ERROR;
	if (!error)
		error = sl_write_file(done, "ok\n", 3, err);
	free(done);
	return error;
}

int runner__retire_worktree(struct sl_ctx *ctx, const char *run_id, const char *const *excluded,
			    int force, int delete_branch, int *deleted, struct sl_err *err)
{
	int pooled = 0, error;

	train_checkout_drop(ctx, run_id); /* the merge gates' checkout a kill left */
	error = worktree_pool_put(ctx->repo.root, run_id, (size_t)ctx->cfg->worktree.pool,
				  excluded, force, delete_branch, &pooled, deleted, err);
	if (error == SL_ECONFLICT)
		return error; /* changes in it, not forced: worktree_remove() would refuse too */
	if (error) {
		sl_log(SL_LOG_WARN, "run %s: its worktree could not go to the pool, so it is "
		       "removed: %s", run_id, err->msg);
		sl_err_clear(err);
	}
	if (pooled) {
		sl_log(SL_LOG_INFO, "run %s: its worktree went to the pool", run_id);
		return 0;
	}
	return worktree_remove(ctx->repo.root, run_id, excluded, force, delete_branch, deleted,
			       err);
}

char *runner__worktree_path(struct sl_ctx *ctx, const char *run_id)
{
	return sl_repo_run_path(&ctx->repo, run_id, "worktree");
}

enum sl_worktree_mode step__worktree_mode(struct step *s)
{
	struct store_wo wo = STORE_WO_INIT;
	struct sl_err err = SL_ERR_INIT;
	struct store_wo_fields fields = { 0 };
	enum sl_worktree_mode m = s->ctx->cfg->worktree.mode;

	if (s->run.mode == RUN_MODE_RESOLVE)
		return SL_WORKTREE_READ_WRITE;
	if (store_wo_get(s->ctx->st, s->run.work_order_id, &wo, &err) == 0)
		store_wo_fields_parse(wo.id, wo.fields_json, &fields, &err); /* logged there */
	/* the field was checked when the work order came in: another value is the default's */
	if (sl_worktree_mode_parse(fields.worktree, &m) != 0)
		m = s->ctx->cfg->worktree.mode;
	store_wo_fields_release(&fields);
	store_wo_release(&wo);
	return m;
}
