/*
 * runner_advance(): carry one run as far as it can go now. The process
 * holds the run lock throughout, so no other tick works on the same run.
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

static int dispatch(struct step *s, struct sl_err *err)
{
	const char *st = s->run.state;
	char owner[64];

	if (!strcmp(st, "queued")) {
		sl_owner_self(owner, sizeof(owner));
		if (step__set(s, err, "owner_start", owner, NULL) != 0)
			return SL_ERROR;
		return step__move(s, "preparing", err, "preparing the worktree");
	}
	if (!strcmp(st, "preparing"))
		return step_prepare(s, err);
	if (!strcmp(st, "building"))
		return step_build(s, err);
	if (!strcmp(st, "gating"))
		return step_gate(s, err);
	if (!strcmp(st, "reviewing"))
		return step_review(s, err);
	if (!strcmp(st, "approved"))
		return step__move(s, "merging", err, "merging into %s", s->ctx->cfg->target);
	if (!strcmp(st, "merging"))
		return step_merge(s, err);
	if (!strcmp(st, "resolving"))
		return step_resolve(s, err);
	return STEP_STOP; /* awaiting_review, merge_conflict, final states */
}

int runner_advance(struct sl_ctx *ctx, const char *run_id, struct sl_err *err)
{
	struct sl_lock lock = SL_LOCK_INIT;
	struct step s;
	int error, steps;

	memset(&s, 0, sizeof(s));
	s.ctx = ctx;
	if ((error = runner__lock_run(ctx, run_id, 0, &lock, err)) != 0)
		return error;
	if ((error = store_run_get(ctx->st, run_id, &s.run, err)) != 0)
		goto out;
	s.run_dir = sl_repo_run_path(&ctx->repo, s.run.id, NULL);
	s.wt = runner__worktree_path(ctx, s.run.id);
	if (!s.run_dir || !s.wt) {
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	for (steps = 0; steps < 200; steps++) {
		error = dispatch(&s, err);
		if (error)
			break;
	}
	if (error < 0 && step__run_dir_linked(&s, err))
		error = step__fail(&s, "failed", err, "%s", err->msg);
	if (error == STEP_STOP)
		error = 0;
	else if (error < 0) {
		/* the run keeps its state; say why on the run, try again next tick */
		struct sl_err e2 = SL_ERR_INIT;
		char why[SL_ERR_MSG_MAX + 64];
		snprintf(why, sizeof(why), "%s (retried next tick)", err->msg);
		store_run_set_reason(ctx->st, s.run.id, why, &e2);
	}
out:
	store_run_release(&s.run);
	free(s.run_dir);
	free(s.wt);
	sl_lock_release(&lock);
	return error;
}
