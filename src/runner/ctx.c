#include "runner/runner.h"
#include "core/fs.h"
#include "reviewer/reviewer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* worktree.share and worktree.copy in one NULL-terminated list (strings borrowed). */
static char **excluded_paths(const struct sl_config *cfg)
{
	size_t ns = sl_strv_len(cfg->worktree.share), nc = sl_strv_len(cfg->worktree.copy);
	char **v = calloc(ns + nc + 1, sizeof(*v));

	if (!v)
		return NULL;
	if (ns)
		memcpy(v, cfg->worktree.share, ns * sizeof(*v));
	if (nc)
		memcpy(v + ns, cfg->worktree.copy, nc * sizeof(*v));
	return v;
}

int runner_ctx_open(struct sl_ctx *ctx, const char *dir, struct sl_err *err)
{
	int error;

	if ((error = sl_repo_find(&ctx->repo, dir, err)) != 0)
		return error;
	if ((error = sl_repo_require_init(&ctx->repo, err)) != 0)
		goto out;
	if ((error = sl_config_load(&ctx->cfg, ctx->repo.config_path, err)) != 0)
		goto out;
	reviewer_token_capture(ctx->cfg);
	if ((error = store_open(&ctx->st, ctx->repo.db_path, err)) != 0)
		goto out;
	if (sl_fmt_fixed(ctx->target_ref, sizeof(ctx->target_ref), "refs/heads/%s",
			 ctx->cfg->target ? ctx->cfg->target : "main") != 0) {
		error = sl_err_set(err, SL_EINVALID, "the target branch name '%.200s' is too long; "
				   "fix target in .system/config.yaml", ctx->cfg->target);
		goto out;
	}
	if (!(ctx->excluded = excluded_paths(ctx->cfg))) {
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	error = sl_mkdir_p(ctx->repo.runs_dir, err);
out:
	if (error)
		runner_ctx_release(ctx);
	return error;
}

void runner_ctx_release(struct sl_ctx *ctx)
{
	free(ctx->excluded); /* the strings belong to cfg */
	ctx->excluded = NULL;
	store_free(ctx->st);
	ctx->st = NULL;
	sl_config_free(ctx->cfg);
	ctx->cfg = NULL;
	sl_repo_release(&ctx->repo);
}
