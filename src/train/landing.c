/*
 * The merge train's landing (docs/ARCHITECTURE.md, The merge train): whether
 * a run's head is on the target, whether that is sluice's landing of its
 * green car (the store holds the intent to land exactly that commit), and
 * the record a landing leaves, always from the store's car.
 */
#include "train/train.h"
#include "merge/merge.h"
#include "store/store.h"
#include "core/ctx.h"
#include "core/log.h"

#include <git2.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

int train_reaches(const char *repo_root, const char *from, const char *to)
{
	git_repository *repo = NULL;
	git_oid f, t;
	int in = 0;

	if (!from || !to || git_oid_fromstr(&f, from) || git_oid_fromstr(&t, to))
		return 0;
	if (git_repository_open(&repo, repo_root) == 0)
		in = git_oid_equal(&f, &t) || git_graph_descendant_of(repo, &f, &t) == 1;
	git_repository_free(repo);
	return in;
}

int train_landing_ours(struct sl_ctx *ctx, const char *run_id, const char *tip)
{
	struct store_car c;
	struct sl_err e = SL_ERR_INIT;
	char *run = NULL;
	int ours = 0;

	if (store_train_get(ctx->st, run_id, &c, &e) != 0)
		return 0;
	ours = c.status == TRAIN_GREEN && c.commit && train_reaches(ctx->repo.root, tip, c.commit) &&
	       store_train_landing_run(ctx->st, c.commit, &run, &e) == 0 && !strcmp(run, run_id);
	free(run);
	store_car_release(&c);
	return ours;
}

int train_landed(struct sl_ctx *ctx, const char *run_id, const struct merge_commit_result *mr,
		 int (*write)(void *arg, json_t *j, struct sl_err *err), void *arg,
		 struct sl_err *err)
{
	struct store_car c;
	struct sl_err e2 = SL_ERR_INIT;
	json_t *j = NULL;
	int error;

	if ((error = store_train_get(ctx->st, run_id, &c, err)) == SL_ENOTFOUND) {
		sl_err_clear(err);
		memset(&c, 0, sizeof(c));
		c.status = TRAIN_WAITING;
		error = 0;
	} else if (error) {
		return error;
	}
	if (!(j = train_record_json(ctx->cfg, &c, mr)))
		error = sl_err_set(err, SL_ERROR, "cannot build train.json");
	else
		error = write(arg, j, err);
	json_decref(j);
	if (!error && c.run_id && train_car_ref(ctx, run_id, NULL, &e2) != 0)
		sl_log(SL_LOG_WARN, "run %s landed; its train ref stays: %s", run_id, e2.msg);
	store_car_release(&c);
	return error;
}
