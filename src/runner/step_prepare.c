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

static int run_setup(struct step *s, struct sl_err *err)
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

/* <gitdir>/worktrees/<run id>: the run worktree's entry (new string). */
static char *entry_path(struct step *s)
{
	return worktree_entry_path(s->ctx->repo.gitdir, s->run.id, NULL);
}

/* 1 when a folder holds nothing, or nothing but a .git file: no work in it. */
static int only_git_file(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int empty = d != NULL;

	while (d && (de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") && strcmp(de->d_name, ".git"))
			empty = 0;
	if (d)
		closedir(d);
	return empty;
}

/*
 * The worktree folder exists but is no worktree of this run: a creation
 * killed half way (libgit2 wrote the entry and the .git file, the checkout
 * did not finish). Called with the repository lock held. A folder with
 * nothing but its .git file goes; anything else is kept beside the run as
 * worktree.broken-<time> (not an artifact), and said so: never lose a file.
 */
static int set_aside_half_made(struct step *s, struct sl_err *err)
{
	char *aside = NULL;
	int error = 0;

	char *entry = entry_path(s);

	if (sl_path_exists(s->wt)) {
		if (!(aside = sl_path_fmt("%s/worktree.broken-%lld", s->run_dir,
					  (long long)sl_now_ms()))) {
			free(entry);
			return sl_err_set(err, SL_ERROR, "out of memory");
		}
		if (rename(s->wt, aside) < 0) {
			free(entry);
			free(aside);
			return sl_err_sys(err, errno, "cannot move the broken worktree '%s' aside",
					  s->wt);
		}
		if (only_git_file(aside))
			error = sl_rm_rf(aside, err);
		else /* it may hold a builder's files: keep them, beside the run */
			sl_log(SL_LOG_WARN, "run %s: a broken worktree was kept as '%s'", s->run.id,
			       aside);
	}
	/* the .git/worktrees entry is named after this run: nobody else's */
	if (!error && entry)
		error = sl_rm_rf(entry, err);
	free(entry);
	free(aside);
	return error;
}

/* A worktree of this run that is there in part: its folder or its entry in .git/worktrees. */
static int half_made(struct step *s)
{
	char *entry = entry_path(s);
	int some = sl_path_exists(s->wt) || (entry && sl_path_exists(entry));

	free(entry);
	return some;
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

	if (worktree_pool_reset(s->ctx->repo.root, s->run.id, s->ctx->cfg->worktree.keep_ignored,
				&err) != 0) {
		sl_log(SL_LOG_WARN, "run %s: the worktree from the pool could not be reset, a fresh "
		       "one is made: %s", s->run.id, err.msg);
		return -1;
	}
	sl_log(SL_LOG_INFO, "run %s: worktree from the pool reset to %.12s in %lld ms", s->run.id,
	       s->run.base_commit, (long long)(sl_now_ms() - t0));
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
		*reused = 2;
		return 0;
	}
	error = worktree_create(s->ctx->repo.root, s->run.id, s->run.branch_name,
				       s->run.base_commit, NULL, reused, err);
	if ((error == SL_EEXISTS || error == SL_ERROR) && half_made(s)) {
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
static int set_base(struct step *s, struct sl_err *err)
{
	char tip[41];
	int error;

	if (s->run.base_commit)
		return 0;
	if ((error = step__target_tip(s, tip, err)) == SL_ENOTFOUND)
		error = SL_EINVALID;
	return error ? error : step__set(s, err, "base_commit", tip, NULL);
}

/*
 * Under the repository lock: the base, the worktree, its environment; but
 * the reset of a worktree from the pool, which is the run's by then. On
 * the second try the pool is not asked. SL_EINVALID for what is final (a
 * bad share/copy path, a target branch that is gone).
 */
static int prepare_worktree(struct step *s, int *reused, struct sl_err *err)
{
	struct sl_lock lock = SL_LOCK_INIT;
	int error, tries;

	for (tries = 0; tries < 2; tries++) {
		if ((error = runner__lock_repo(s->ctx, &lock, err)) != 0)
			return error;
		if ((error = set_base(s, err)) != 0 ||
		    (error = create_worktree(s, reused, tries == 0, err)) != 0 || *reused != 2)
			break;
		sl_lock_release(&lock);
		if (reset_pooled(s) != 0) {
			*reused = 0;
			continue; /* dropped: a fresh one */
		}
		if ((error = runner__lock_repo(s->ctx, &lock, err)) != 0)
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
	if (run_setup(s, err) != 0)
		return step__fail(s, RUN_FAILED, err, "%s", err->msg);
	sl_fault("prepare.after_setup");
	if ((marker = step__path(s, "setup.done")) != NULL)
		sl_write_file(marker, "ok\n", 3, err);
	free(marker);
	sl_err_clear(err);
	return 0;
}

int step__worktree_again(struct step *s, struct sl_err *err)
{
	char *done = step__path(s, "setup.done");
	int error, reused = 0;

	if (!done)
		return sl_err_set(err, SL_ERROR, "out of memory");
	error = sl_unlink(done, err); /* a new worktree: its setup runs again */
	if (!error && (error = prepare_worktree(s, &reused, err)) == 0 &&
	    s->ctx->cfg->worktree.setup && run_setup(s, err) != 0)
		error = err->code < 0 ? err->code : SL_ERROR;
	if (!error)
		error = sl_write_file(done, "ok\n", 3, err);
	free(done);
	return error;
}

/*
 * `worktree: none`: no worktree and no branch, only the base (for the
 * review's tree); the builder's folder is made for each attempt
 * (step_report.c).
 */
static int prepare_none(struct step *s, struct sl_err *err)
{
	struct sl_lock lock = SL_LOCK_INIT;
	char n[16];
	int error;

	if ((error = runner__lock_repo(s->ctx, &lock, err)) != 0)
		return error;
	error = set_base(s, err);
	sl_lock_release(&lock);
	if (error == SL_EINVALID)
		return step__fail(s, RUN_FAILED, err, "cannot prepare the run: %s", err->msg);
	if (error)
		return error;
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
	if ((error = prepare_worktree(s, &reused, err)) == SL_EINVALID)
		return step__fail(s, RUN_FAILED, err, "cannot prepare the worktree: %s", err->msg);
	/* jobs run worktree.setup in their own clone (build/exec_script.c), not here */
	if (error || (!step__remote(s) && (error = setup_once(s, err)) != 0))
		return error;
	if ((error = resume_job(s, err)) != 0)
		return error > 0 ? 0 : error;
	snprintf(n, sizeof(n), "%d", s->run.attempt + 1);
	if ((error = step__set(s, err, "attempt", n, NULL)) != 0)
		return error;
	return step__move(s, RUN_BUILDING, err, "attempt %d: %s at %.12s", s->run.attempt,
			  reused == 2 ? "worktree from the pool" :
			  reused ? "worktree reused" : "worktree ready", s->run.base_commit);
}
