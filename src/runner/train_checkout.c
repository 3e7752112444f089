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
#include "runner/runner_int.h"
#include "worktree/worktree.h"
#include "core/fs.h"
#include "core/git.h"
#include "core/log.h"

#include <stdlib.h>
#include <string.h>

#define CHECKOUT_NAME "worktree-train" /* "worktree*": not an artifact (step.c) */

void runner__train_checkout_drop(struct sl_ctx *ctx, const char *run_id)
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

int runner__train_checkout(struct sl_ctx *ctx, const char *run_id, const char *run_wt,
			   const char *commit, char **out, struct sl_err *err)
{
	struct sl_git_opts o = SL_GIT_OPTS_INIT;
	struct sl_git_result res;
	char *path = sl_repo_run_path(&ctx->repo, run_id, CHECKOUT_NAME);
	const char *args[] = { "worktree", "add", "--detach", "--", path, commit, NULL };
	int error;

	*out = NULL;
	if (!path)
		return sl_err_set(err, SL_ERROR, "out of memory");
	runner__train_checkout_drop(ctx, run_id);
	o.cwd = ctx->repo.root;
	o.what = "git worktree add";
	if ((error = sl_git_run(&o, args, &res, err)) == 0 &&
	    (error = keep(ctx, run_wt, path, err)) == 0) {
		*out = path;
		return 0;
	}
	runner__train_checkout_drop(ctx, run_id);
	free(path);
	return error;
}
