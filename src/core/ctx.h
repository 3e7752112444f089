#ifndef SL_CORE_CTX_H
#define SL_CORE_CTX_H
/*
 * An open sluice repository: its git repository paths, its config and its
 * store, as every module below the runner receives it. runner_ctx_open()
 * fills one and runner_ctx_release() releases it; the modules below only
 * borrow it.
 */
#include "core/config.h"
#include "core/repo.h"

struct store;

struct sl_ctx {
	struct sl_repo repo;
	struct sl_config *cfg;
	struct store *st;
	char target_ref[512];   /* refs/heads/<cfg->target> */
	char **excluded;        /* worktree.share + worktree.copy: never committed, never "dirty" */
	const char *actor;      /* who a person's command is recorded as (NULL: $USER) */
};

#define SL_CTX_INIT { SL_REPO_INIT, NULL, NULL, { 0 }, NULL, NULL }

/*
 * Who a person's command is recorded as: ctx->actor (sluice serve says
 * so), else the user (core/repo.c). Borrowed.
 */
const char *sl_ctx_who(const struct sl_ctx *ctx);

#endif
