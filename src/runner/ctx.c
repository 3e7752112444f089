#include "runner/runner.h"
#include "core/fs.h"

#include <stdio.h>
#include <stdlib.h>

int runner_ctx_open(struct runner_ctx *ctx, const char *dir, struct sl_err *err)
{
	int error;

	if ((error = sl_repo_find(&ctx->repo, dir, err)) != 0)
		return error;
	if ((error = sl_repo_require_init(&ctx->repo, err)) != 0)
		goto out;
	if ((error = sl_config_load(&ctx->cfg, ctx->repo.config_path, err)) != 0)
		goto out;
	if ((error = store_open(&ctx->st, ctx->repo.db_path, err)) != 0)
		goto out;
	snprintf(ctx->target_ref, sizeof(ctx->target_ref), "refs/heads/%s",
		 ctx->cfg->target ? ctx->cfg->target : "main");
	error = sl_mkdir_p(ctx->repo.runs_dir, err);
out:
	if (error)
		runner_ctx_release(ctx);
	return error;
}

void runner_ctx_release(struct runner_ctx *ctx)
{
	store_free(ctx->st);
	ctx->st = NULL;
	sl_config_free(ctx->cfg);
	ctx->cfg = NULL;
	sl_repo_release(&ctx->repo);
}

char *runner_artifact(const struct runner_ctx *ctx, const char *run_id, const char *name)
{
	return sl_repo_run_path(&ctx->repo, run_id, name);
}
