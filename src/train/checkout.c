/*
 * The checkout the merge gates judge a car in (docs/config.md, "The merge
 * train"): a worktree of its own, detached at the car's merge commit, at
 * <run folder>/worktree-train. It holds the merge commit's files and
 * nothing the builder left in the run's worktree (a generated header,
 * build/, node_modules/ would make a red merge look green), but for what
 * the config names: worktree.share and worktree.copy from the main
 * checkout, as every worktree gets them, and merge.keep_ignored copied from
 * the run's worktree. The run's worktree is left as it is (a resolution
 * builds there again). Made fresh for each test, removed after it, and a
 * killed sluice's is removed by the next test.
 */
#include "train/train.h"
#include "core/ctx.h"
#include "core/repo.h"
#include "worktree/worktree.h"
#include "core/fs.h"
#include "core/git.h"
#include "core/lock.h"
#include "core/log.h"
#include "core/time.h"
#include "store/store.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define CHECKOUT_NAME "worktree-train" /* "worktree*": not an artifact (kernel.c) */

void train_checkout_drop(struct sl_ctx *ctx, const char *run_id)
{
	char *path = sl_repo_run_path(&ctx->repo, run_id, CHECKOUT_NAME);
	struct sl_err err = SL_ERR_INIT;

	if (!path || !sl_path_exists(path)) {
		free(path);
		return;
	}
	/* git's entry and the folder; a folder git does not know (cut short) alone */
	if (worktree_remove(ctx->repo.root, path, NULL, 1, 0, NULL, &err) != 0) {
		sl_err_clear(&err);
		if (sl_rm_rf(path, &err) != 0)
			sl_log(SL_LOG_WARN, "run %s: cannot remove the merge gates' checkout "
			       "'%s': %s", run_id, path, err.msg);
	}
	free(path);
}

/*
 * 1 when git's entry `name` (.git/worktrees/worktree-train*) is a merge
 * gates' checkout that a kill left half made or half removed: its gitdir
 * names a <run>/worktree-train that is gone, or it has no gitdir and no
 * "locked" (git writes "locked" right after making the entry, while it
 * adds, and gitdir next) but other files (a removal cut short), or none
 * and has not changed for AGE_MS (a folder git has just made is empty),
 * or none while no tester of the train is alive (only a tester adds, and it
 * is named in the store under the repository's lock before it does: a
 * whole tick killed between git's mkdir and its "locked" leaves an empty
 * entry that the very next tick must not wait out); or git's own "locked"
 * still says "initializing" after ADD_MS, or while no tester is alive: a
 * `git worktree add` killed before it finished (git writes commondir and HEAD
 * after that lock and removes it last). Such an entry makes every later
 * `git worktree add` die ("failed to read .../commondir"), and git's prune
 * never removes a locked entry.
 */
#define AGE_MS 1000
#define ADD_MS 10000

static int dir_empty(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *de;
	int empty = 1;

	while (d && empty && (de = readdir(d)) != NULL)
		empty = !strcmp(de->d_name, ".") || !strcmp(de->d_name, "..");
	if (d)
		closedir(d);
	return empty;
}

static int64_t mtime_ms(const struct stat *st)
{
	return (int64_t)st->st_mtim.tv_sec * 1000 + st->st_mtim.tv_nsec / 1000000;
}

/* Does gitdir (if any) name a <run>/worktree-train/.git under `runs`? */
static int names_train_checkout(const char *gitdir, const char *runs)
{
	static const char tail[] = "/" CHECKOUT_NAME "/.git";
	struct sl_buf b = SL_BUF_INIT;
	struct sl_err err = SL_ERR_INIT;
	int ours = 0;
	char *p;

	if (sl_read_file(&b, gitdir, 4096, &err) != 0)
		return err.code == SL_ENOTFOUND;
	if ((p = strndup(sl_buf_cstr(&b), strcspn(sl_buf_cstr(&b), "\n")))) {
		size_t n = strlen(p);
		ours = !strncmp(p, runs, strlen(runs)) && n > sizeof(tail) - 1 &&
		       !strcmp(p + n - (sizeof(tail) - 1), tail);
	}
	free(p);
	sl_buf_release(&b);
	return ours;
}

static int testers_gone(struct sl_ctx *ctx);

/*
 * The entry `st` locked by `locked`: a `git worktree add` of ours killed
 * before it ended? Once ADD_MS passed, or at once when no tester is alive
 * (*gone, testers_gone() read once): the next tick, and the state a person
 * finds after it, do not depend on how soon it came.
 */
static int add_cut_short(struct sl_ctx *ctx, const char *locked, const struct stat *st,
			 const char *gitdir, const char *runs, int *gone)
{
	struct sl_buf b = SL_BUF_INIT;
	struct sl_err err = SL_ERR_INIT;
	struct stat ls;
	int cut;

	if (lstat(locked, &ls) != 0 || !S_ISREG(ls.st_mode) ||
	    sl_read_file(&b, locked, 256, &err) != 0)
		return 0;
	cut = !strncmp(sl_buf_cstr(&b), "initializing", 12) && names_train_checkout(gitdir, runs);
	sl_buf_release(&b);
	if (!cut ||
	    sl_now_ms() - (mtime_ms(st) > mtime_ms(&ls) ? mtime_ms(st) : mtime_ms(&ls)) > ADD_MS)
		return cut;
	if (*gone < 0)
		*gone = testers_gone(ctx);
	return *gone == 1;
}

/* 1 when no car of the train has a live tester (so none adds a checkout now); 0 when one may. */
static int testers_gone(struct sl_ctx *ctx)
{
	struct store_car *cars = NULL;
	struct sl_err err = SL_ERR_INIT;
	size_t n = 0, i;
	int gone;

	if (!ctx->st || store_train_list(ctx->st, ctx->target_ref, &cars, &n, &err) != 0) {
		sl_err_clear(&err);
		return 0;
	}
	for (i = 0, gone = 1; gone && i < n; i++)
		gone = !train_tester_alive(&cars[i]);
	store_cars_free(cars, n);
	return gone;
}

static int train_entry_stale(struct sl_ctx *ctx, const char *entry, int *gone)
{
	char *gitdir = sl_path_join(entry, "gitdir"), *locked = sl_path_join(entry, "locked");
	char *runs = sl_path_join(ctx->repo.root, ".system/runs/");
	struct sl_buf b = SL_BUF_INIT;
	struct sl_err err = SL_ERR_INIT;
	struct stat st;
	const char *tail = "/" CHECKOUT_NAME "/.git";
	int stale = 0;

	/* a link there is none of git's (a builder can write .git): never followed */
	if (!gitdir || !locked || !runs || lstat(entry, &st) != 0 || !S_ISDIR(st.st_mode))
		goto out;
	if (sl_path_exists(locked)) {
		/* git adds it now, someone locked it, or a killed add left it */
		if (!add_cut_short(ctx, locked, &st, gitdir, runs, gone))
			goto out;
		stale = 1;
		goto out;
	}
	if (sl_read_file(&b, gitdir, 4096, &err) == 0) {
		char *p = strndup(sl_buf_cstr(&b), strcspn(sl_buf_cstr(&b), "\n"));
		size_t n = p ? strlen(p) : 0;
		stale = p && !strncmp(p, runs, strlen(runs)) && n > strlen(tail) &&
			!strcmp(p + n - strlen(tail), tail) && !sl_path_exists(p);
		free(p);
	} else {
		/* files but no gitdir: half removed; empty: just made (or emptied) */
		stale = !dir_empty(entry) || sl_now_ms() - mtime_ms(&st) > AGE_MS;
		if (!stale && *gone < 0)
			*gone = testers_gone(ctx);
		stale = stale || *gone == 1;
	}
out:
	sl_buf_release(&b);
	free(gitdir);
	free(locked);
	free(runs);
	return stale;
}

void train_checkouts_prune(struct sl_ctx *ctx)
{
	char *dir = sl_path_join(ctx->repo.gitdir, "worktrees"), *entry;
	struct sl_err err = SL_ERR_INIT;
	struct dirent *de;
	int gone = -1; /* testers_gone(), read once when needed */
	DIR *d;

	if (!dir || !(d = opendir(dir))) {
		free(dir);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, CHECKOUT_NAME, strlen(CHECKOUT_NAME)) ||
		    !(entry = sl_path_join(dir, de->d_name)))
			continue;
		if (train_entry_stale(ctx, entry, &gone) && sl_rm_rf(entry, &err) == 0)
			sl_log(SL_LOG_INFO, "removed git's entry '%s' of a merge gates' checkout "
			       "that a killed sluice left", de->d_name);
		sl_err_clear(&err);
		free(entry);
	}
	closedir(d);
	free(dir);
}

/* merge.keep_ignored's paths that the run's worktree has and the car does not (a NULL-terminated list). */
static sl_strv kept(const struct sl_config *cfg, const char *run_wt, const char *path)
{
	sl_strv v = sl_strv_copy(NULL);
	char *src, *dst, *rel;
	size_t i;

	for (i = 0; v && cfg->merge.keep_ignored && cfg->merge.keep_ignored[i]; i++) {
		rel = sl_path_strip_slash(cfg->merge.keep_ignored[i]);
		src = rel ? sl_path_join(run_wt, rel) : NULL;
		dst = rel ? sl_path_join(path, rel) : NULL;
		if (!src || !dst || (sl_path_exists(src) && !sl_path_exists(dst) &&
				     sl_strv_push(&v, rel) < 0)) {
			sl_strv_free(v);
			v = NULL;
		}
		free(rel);
		free(src);
		free(dst);
	}
	return v;
}

/* What the config keeps in the checkout: worktree.share, worktree.copy, merge.keep_ignored. */
static int keep(struct sl_ctx *ctx, const char *run_wt, const char *path, struct sl_err *err)
{
	const struct sl_config *cfg = ctx->cfg;
	struct sl_buf notes = SL_BUF_INIT;
	sl_strv v = kept(cfg, run_wt, path);
	int error;

	if (!v)
		return sl_err_set(err, SL_ERROR, "out of memory");
	if ((error = worktree_share(ctx->repo.root, path, (const char *const *)cfg->worktree.share,
				    &notes, err)) == 0 &&
	    (error = worktree_copy(ctx->repo.root, path, (const char *const *)cfg->worktree.copy,
				   &notes, err)) == 0)
		error = worktree_copy(run_wt, path, (const char *const *)v, &notes, err);
	sl_strv_free(v);
	sl_buf_release(&notes);
	return error;
}

int train_checkout(struct sl_ctx *ctx, const char *run_id, const char *run_wt,
			   const char *commit, char **out, struct sl_err *err)
{
	struct sl_git_opts o = SL_GIT_OPTS_INIT;
	struct sl_lock lock = SL_LOCK_INIT;
	struct sl_git_result res;
	char *path = sl_repo_run_path(&ctx->repo, run_id, CHECKOUT_NAME);
	const char *args[] = { "worktree", "add", "--detach", "--", path, commit, NULL };
	int error;

	*out = NULL;
	if (!path)
		return sl_err_set(err, SL_ERROR, "out of memory");
	train_checkout_drop(ctx, run_id);
	o.cwd = ctx->repo.root;
	o.what = "git worktree add";
	/*
	 * Under the repository lock, as every worktree sluice adds: git's
	 * `worktree add` reads the other entries and dies on one another
	 * tester is adding at that moment ("failed to read .../commondir").
	 */
	if ((error = sl_repo_lock(&ctx->repo, &lock, err)) == 0) {
		error = sl_git_run(&o, args, &res, err);
		sl_lock_release(&lock);
	}
	if (!error && (error = keep(ctx, run_wt, path, err)) == 0) {
		*out = path;
		return 0;
	}
	train_checkout_drop(ctx, run_id);
	free(path);
	return error;
}
