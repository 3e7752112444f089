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
#include "artifact/artifact.h"
#include "builder/builder.h"
#include "worktree/worktree.h"
#include "merge/merge.h"
#include "core/fs.h"
#include "core/fault.h"
#include "core/log.h"
#include "core/time.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <git2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Remove lock files that only a dead sluice process of this run could have left. */
static void remove_lock(const char *path, const char *run_id)
{
	if (unlink(path) == 0)
		sl_log(SL_LOG_WARN, "removed the stale lock '%s' of interrupted run %s", path, run_id);
}

/*
 * Every *.lock in the run worktree's own git dir (index, HEAD, ...) and on
 * its branch: only this run's processes use them, and they are gone.
 */
static void remove_stale_locks(struct sl_ctx *ctx, const struct store_run *run)
{
	char *dir = worktree_entry_path(ctx->repo.gitdir, run->id, NULL), *path;
	struct dirent *de;
	DIR *d;

	if (dir && (d = opendir(dir)) != NULL) {
		while ((de = readdir(d)) != NULL) {
			size_t n = strlen(de->d_name);
			if (n > 5 && !strcmp(de->d_name + n - 5, ".lock") &&
			    (path = sl_path_join(dir, de->d_name))) {
				remove_lock(path, run->id);
				free(path);
			}
		}
		closedir(d);
	}
	free(dir);
	if (run->branch_name &&
	    (path = sl_path_fmt("%s/refs/heads/%s.lock", ctx->repo.gitdir, run->branch_name))) {
		remove_lock(path, run->id);
		free(path);
	}
}

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
	remove_stale_locks(ctx, run);
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

static int run_known(const struct store_run *runs, size_t n, const char *id, const char *branch)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (id && !strcmp(runs[i].id, id))
			return 1;
		if (branch && runs[i].branch_name && !strcmp(runs[i].branch_name, branch))
			return 1;
	}
	return 0;
}

static int count_orphans(struct sl_ctx *ctx, const struct store_run *runs, size_t n)
{
	git_repository *repo = NULL;
	git_branch_iterator *it = NULL;
	git_reference *ref = NULL;
	git_branch_t type;
	struct dirent *de;
	DIR *d;
	int orphans = 0;

	if ((d = opendir(ctx->repo.runs_dir)) != NULL) {
		while ((de = readdir(d)) != NULL) {
			char *wt;
			if (de->d_name[0] == '.' || run_known(runs, n, de->d_name, NULL))
				continue;
			wt = sl_repo_run_path(&ctx->repo, de->d_name, "worktree");
			if (wt && sl_path_exists(wt)) {
				sl_log(SL_LOG_WARN, "orphan worktree '%s': no run owns it; remove "
						    "it with 'git worktree remove' if unneeded", wt);
				orphans++;
			}
			free(wt);
		}
		closedir(d);
	}
	if (git_repository_open(&repo, ctx->repo.root) < 0 ||
	    git_branch_iterator_new(&it, repo, GIT_BRANCH_LOCAL) < 0)
		goto out;
	while (git_branch_next(&ref, &type, it) == 0) {
		const char *name = NULL;
		if (git_branch_name(&name, ref) == 0 && !strncmp(name, "run/", 4) &&
		    !run_known(runs, n, NULL, name)) {
			sl_log(SL_LOG_WARN, "orphan branch '%s': no run owns it", name);
			orphans++;
		}
		git_reference_free(ref);
	}
out:
	git_branch_iterator_free(it);
	git_repository_free(repo);
	return orphans;
}

static int seal_merged(struct sl_ctx *ctx, const struct store_run *runs, size_t n,
		       struct sl_err *err)
{
	struct sl_lock lock = SL_LOCK_INIT;
	int error = runner__seal(ctx, runs, n, &lock, err);

	sl_lock_release(&lock);
	return error;
}

/*
 * Ref locks of the target (and packed-refs.lock) older than STALE_LOCK_S:
 * a git or sluice killed while moving the ref. git itself never holds them
 * for long, so an old one blocks every merge and every user commit for
 * nothing. Removed with a warning; the user's index.lock is never touched.
 */
#define STALE_LOCK_S 300

static void remove_if_older(const char *path, long seconds)
{
	struct stat st;

	if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) && time(NULL) - st.st_mtime > seconds &&
	    unlink(path) == 0)
		sl_log(SL_LOG_WARN, "removed '%s', a lock older than %ld seconds", path, seconds);
}

static void remove_target_lock_older_than(struct sl_ctx *ctx, long seconds)
{
	char path[4200];

	/* a cut path could name another branch's ref file */
	if (snprintf(path, sizeof(path), "%s/%s.lock", ctx->repo.gitdir, ctx->target_ref) <
	    (int)sizeof(path))
		remove_if_older(path, seconds);
}

static void remove_stale_ref_locks(struct sl_ctx *ctx)
{
	char *path = sl_path_join(ctx->repo.gitdir, "packed-refs.lock");

	remove_target_lock_older_than(ctx, STALE_LOCK_S);
	if (path)
		remove_if_older(path, STALE_LOCK_S);
	free(path);
}


/*
 * The merge that wrote `journal` died while it held the locks of the
 * checked-out target: the index.lock it took is removed only when the
 * journal records that very file (merge_journal_release_locks): a user's
 * index.lock is never touched (docs/design.md, Locks and crash recovery). The target's ref lock (taken
 * by libgit2, not recorded) is the merge's when it is no older than the
 * journal and older than 10 s (git holds ref locks for milliseconds).
 */
/* Returns 1 when such a lock is still there (too young to remove yet). */
static int remove_locks_of_dead_merge(struct sl_ctx *ctx, const char *journal)
{
	char path[4800];
	struct stat js, st;
	int left = 0;

	if (stat(journal, &js) < 0)
		return 0;
	if (merge_journal_release_locks(journal, &left) == 0 && left)
		return 1;
	if (snprintf(path, sizeof(path), "%s/%s.lock", ctx->repo.gitdir, ctx->target_ref) >=
	    (int)sizeof(path))
		return 0; /* a cut path could name another branch's ref file */
	if (lstat(path, &st) < 0 || !S_ISREG(st.st_mode) || st.st_mtime < js.st_mtime)
		return 0;
	if (time(NULL) - st.st_mtime > 10 && unlink(path) == 0) {
		sl_log(SL_LOG_WARN, "removed '%s', left by a merge that was killed", path);
		return 0;
	}
	return 1;
}

/* A merge that died while bringing the checked-out target along: put its files in order. */
static void recover_checkout(struct sl_ctx *ctx)
{
	struct sl_err err = SL_ERR_INIT;
	char *journal = sl_path_join(ctx->repo.sysdir, RUNNER_MERGE_JOURNAL);
	int recovered = 0;

	if (journal && sl_path_exists(journal)) {
		sl_fault("reconcile.before_recover");
		/* the recovery waits (journal kept) until the dead merge's locks are gone */
		if (merge_journal_dead(journal) && remove_locks_of_dead_merge(ctx, journal))
			sl_log(SL_LOG_INFO, "an interrupted merge left locks; recovering it later");
		else if (merge_recover_checkout(ctx->repo.root, ctx->cfg->target, journal, &recovered,
					   &err) != 0)
			sl_log(SL_LOG_WARN, "%s", err.msg);
		else if (recovered)
			sl_log(SL_LOG_WARN, "a merge was interrupted while updating the checkout of "
					    "'%s'; its files were put back in line with the branch",
			       ctx->cfg->target);
	}
	free(journal);
}

/*
 * 1 when `name` is "<file>.tmp.<pid>", the temporary file of an atomic write
 * (sl_write_file_atomic, worktree_diff_patch), and that pid is gone.
 */
static int dead_tmp(const char *name)
{
	const char *p = strstr(name, ".tmp."), *d;
	char *end;
	long pid;

	if (!p || p == name)
		return 0;
	while ((d = strstr(p + 1, ".tmp.")) != NULL)
		p = d; /* the last one */
	d = p + 5;
	if (*d < '1' || *d > '9')
		return 0;
	errno = 0;
	pid = strtol(d, &end, 10);
	return !*end && errno == 0 && pid != (long)getpid() && !sl_pid_alive(pid);
}

/*
 * Remove the temporary files of atomic writes a killed sluice left in the
 * folder `name` of the folder `at` (an fd, or AT_FDCWD): a link is never
 * followed, a folder never entered. Returns how many were removed.
 */
static size_t remove_dead_tmp_in(int at, const char *name)
{
	const struct dirent *de;
	struct stat st;
	size_t removed = 0;
	int fd;
	DIR *d;

	if ((fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return 0;
	if (!(d = fdopendir(fd))) {
		close(fd);
		return 0;
	}
	while ((de = readdir(d)) != NULL)
		if (dead_tmp(de->d_name) &&
		    fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISREG(st.st_mode) && unlinkat(fd, de->d_name, 0) == 0)
			removed++;
	closedir(d);
	return removed;
}

/*
 * .system/ and every run folder: each tick, with the repository lock held.
 * A runs folder that is a link (a builder's) is not entered.
 */
static void remove_dead_tmp(struct sl_ctx *ctx)
{
	const struct dirent *de;
	size_t removed = remove_dead_tmp_in(AT_FDCWD, ctx->repo.sysdir);
	DIR *d = NULL;
	int fd;

	fd = open(ctx->repo.runs_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0 && !(d = fdopendir(fd)))
		close(fd);
	while (d && (de = readdir(d)) != NULL)
		if (de->d_name[0] != '.')
			removed += remove_dead_tmp_in(fd, de->d_name);
	if (d)
		closedir(d);
	if (removed)
		sl_log(SL_LOG_INFO, "removed %zu temporary file%s left by a killed sluice", removed,
		       removed == 1 ? "" : "s");
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

/* The pool: what a killed tick left half moved, and no more slots than worktree.pool. */
static void recover_pool(struct sl_ctx *ctx)
{
	struct sl_err err = SL_ERR_INIT;
	size_t removed = 0, locked = 0;

	if (worktree_pool_recover(ctx->repo.root, &err) != 0)
		sl_log(SL_LOG_WARN, "the worktree pool could not be checked: %s", err.msg);
	sl_err_clear(&err);
	if (worktree_pool_trim(ctx->repo.root, (size_t)ctx->cfg->worktree.pool, &removed, &locked,
			       &err) != 0)
		sl_log(SL_LOG_WARN, "the worktree pool could not be trimmed: %s", err.msg);
	else if (removed)
		sl_log(SL_LOG_INFO, "removed %zu worktree%s from the pool (worktree.pool: %d)",
		       removed, removed == 1 ? "" : "s", ctx->cfg->worktree.pool);
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

	if (runner__lock_repo(ctx, &lock, &err) != 0) {
		sl_log(SL_LOG_WARN, "cleanup skipped: %s", err.msg);
		return;
	}
	/* one repository for all the branch look-ups: this runs every tick */
	if (git_repository_open(&repo, ctx->repo.root) < 0)
		repo = NULL;
	for (i = 0; i < n; i++)
		cleanup_run(ctx, repo, &runs[i], &kept_failed);
	recover_pool(ctx);
	recover_checkout(ctx);
	train_tidy(ctx, runs, n);
	train_checkouts_prune(ctx);
	git_repository_free(repo);
	remove_stale_ref_locks(ctx);
	remove_dead_tmp(ctx);
	sl_err_clear(&err);
	if (worktree_prune_stale(ctx->repo.root, run_id_known, &known, &pruned, &err) == 0 &&
	    pruned)
		sl_log(SL_LOG_INFO, "pruned %zu stale worktree entr%s", pruned,
		       pruned == 1 ? "y" : "ies");
	sl_lock_release(&lock);
}

/*
 * A tick needs its target branch: without it every run would be claimed
 * and fail to prepare, tick after tick. SL_EINVALID says so, and nothing
 * is started (a config mistake, or the branch was deleted or renamed).
 */
static int target_exists(struct sl_ctx *ctx, struct sl_err *err)
{
	git_repository *repo = NULL;
	git_reference *ref = NULL;
	int rc, error = 0;

	if ((rc = git_repository_open(&repo, ctx->repo.root)) < 0)
		return sl_err_git(err, rc, "cannot open the repository '%s'", ctx->repo.root);
	rc = git_reference_lookup(&ref, repo, ctx->target_ref);
	if (rc == GIT_ENOTFOUND || rc == GIT_EINVALIDSPEC)
		error = sl_err_set(err, SL_EINVALID,
				   "the target branch '%s' does not exist in '%s'; create it or "
				   "fix 'target' in .system/config.yaml (nothing was started)",
				   ctx->cfg->target, ctx->repo.root);
	else if (rc < 0)
		error = sl_err_git(err, rc, "cannot read the target branch '%s'", ctx->target_ref);
	git_reference_free(ref);
	git_repository_free(repo);
	return error;
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
		*orphans = count_orphans(ctx, runs, n);
	store_runs_free(runs, n);
	return error;
}
