/*
 * queue.overlap: fatal, the train's side (docs/ARCHITECTURE.md, The merge
 * train): the run that changed a file a joining run changed first, landed
 * on the target since the run last met it or a car already in the train;
 * and the runs a target's first-parent line landed between two commits (a
 * semantic conflict's rivals), read through merge_landings_between().
 */
#include "train/train.h"
#include "merge/merge.h"
#include "store/store.h"
#include "core/buf.h"
#include "core/config.h"
#include "core/ctx.h"
#include "core/git.h"
#include "core/lock.h"

#include <git2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RIVALS_MAX 64

/*
 * 1 when run `other` changed one of the files this run changed: *paths
 * (the caller's) are the files both changed. 0 when not, or an error.
 */
static int shares_files(struct sl_ctx *ctx, const char *me, const char *other, sl_strv *paths,
			struct sl_err *err)
{
	int error;

	if (!strcmp(other, me))
		return 0;
	if ((error = store_files_common(ctx->st, me, other, paths, err)) != 0)
		return error;
	if (**paths)
		return 1;
	sl_strv_free(*paths);
	*paths = NULL;
	return 0;
}

/*
 * Where the run last met the target: the merge base of the tip and the
 * run's head (its base, or a later tip a person merged into its branch).
 */
static int met_target(struct sl_ctx *ctx, const struct store_run *run, const char *tip,
		      char out[41], struct sl_err *err)
{
	git_repository *repo = NULL;
	git_oid t, h, mb;
	int rc;

	if ((rc = git_oid_fromstr(&t, tip)) || !run->head_commit ||
	    (rc = git_oid_fromstr(&h, run->head_commit)) ||
	    (rc = git_repository_open(&repo, ctx->repo.root)) ||
	    (rc = git_merge_base(&mb, repo, &t, &h))) {
		git_repository_free(repo);
		if (!run->head_commit || rc == GIT_ENOTFOUND) {
			sl_err_clear(err);
			snprintf(out, 41, "%s", run->base_commit ? run->base_commit : tip);
			return 0;
		}
		return sl_err_git(err, rc, "cannot find where run %s met %s", run->id, tip);
	}
	git_repository_free(repo);
	git_oid_tostr(out, 41, &mb);
	return 0;
}

/*
 * queue.overlap: fatal. The run that changed a file this run changed first
 * (*rival, the caller's), with the files (*paths): one that landed on the
 * target since this run last met it (met_target), or a car already in the
 * train. *landed says which. 0 with *rival NULL when there is none.
 */
int train_first_overlap(struct sl_ctx *ctx, const struct store_run *run, const char *tip,
			char **rival, sl_strv *paths, int *landed, struct sl_err *err)
{
	struct store_car *cars = NULL;
	char since[41], **ids = NULL;
	size_t n = 0, i;
	int error, rc = 0;

	*rival = NULL;
	if ((error = met_target(ctx, run, tip, since, err)) != 0 ||
	    (error = train_rivals_between(ctx, run->id, tip, since, &ids, err)) != 0)
		return error;
	for (i = 0; ids[i] && rc == 0; i++)
		if ((rc = shares_files(ctx, run->id, ids[i], paths, err)) == 1)
			*rival = strdup(ids[i]);
	*landed = rc == 1;
	if (rc == 0 && (rc = store_train_list(ctx->st, ctx->target_ref, &cars, &n, err)) == 0)
		for (i = 0; i < n && rc == 0; i++)
			if (train_car_holds(ctx, &cars[i]) &&
			    (rc = shares_files(ctx, run->id, cars[i].run_id, paths, err)) == 1)
				*rival = strdup(cars[i].run_id);
	for (i = 0; i < n; i++)
		store_car_release(&cars[i]);
	free(cars);
	sl_strv_free(ids);
	if (rc == 1 && !*rival)
		return sl_err_set(err, SL_ERROR, "out of memory");
	return rc < 0 ? rc : 0;
}

/* "a.txt, b.txt, c.txt and 4 more" */
void train_some_paths(const char *const *paths, char *buf, size_t n)
{
	struct sl_buf b = SL_BUF_INIT;
	size_t i, total = sl_strv_len((sl_strv)paths);

	for (i = 0; i < total && i < 5; i++)
		sl_buf_addf(&b, "%s'%s'", i ? ", " : "", paths[i]);
	if (total > i)
		sl_buf_addf(&b, " and %zu more", total - i);
	snprintf(buf, n, "%s", b.len ? b.ptr : "");
	sl_buf_release(&b);
}

/*
 * The runs whose landings `tip` holds and `base` does not (the Sluice-Run
 * trailers on tip's first-parent line down to base), newest first: a
 * semantic conflict's rivals. *ids (NULL-terminated) is the caller's.
 */
int train_rivals_between(struct sl_ctx *ctx, const char *skip_run, const char *tip,
			 const char *base, char ***ids, struct sl_err *err)
{
	struct merge_landings_opts o = { .tip = tip, .base = base, .max_found = RIVALS_MAX,
					 .merges_only = 1, .skip_run = skip_run };
	struct merge_run_landing *v = NULL;
	char **out;
	size_t n = 0, i;
	int error;

	*ids = NULL;
	if ((error = merge_landings_between(ctx->repo.root, &o, &v, &n, err)) != 0)
		return error;
	if (!(out = calloc(n + 1, sizeof(*out)))) {
		merge_run_landings_free(v, n);
		return sl_err_set(err, SL_ERROR, "out of memory");
	}
	for (i = 0; i < n; i++)
		out[i] = v[i].run, v[i].run = NULL;
	merge_run_landings_free(v, n);
	*ids = out;
	return 0;
}

/* The lanes of tr's run (merge.lanes; train_lanes_of_run()) against the target's tip now. */
static int lanes_now(const struct train_run *tr, const struct train_ops *ops, int64_t *lanes,
		     struct sl_err *err)
{
	char tip[41];
	int error;

	*lanes = 0;
	if (!tr->ctx->cfg->merge.nlanes || !tr->run->head_commit)
		return 0;
	if ((error = ops->target_tip(ops->arg, tip, err)) != 0 ||
	    (error = train_lanes_of_run(tr->ctx, tip, tr->run->head_commit, lanes, err)) != 0)
		return error;
	if (*lanes) /* stored with the key of the lanes they were read under */
		*lanes |= train_lanes_key(tr->ctx->cfg) << 16;
	return 0;
}

/* queue.overlap: fatal, under the repository lock: the check, and the join when no rival. */
static int join_unless_overlap(const struct train_run *tr, const struct train_ops *ops,
			       int64_t lanes, char *why, size_t n, struct sl_err *err)
{
	struct sl_lock lock = SL_LOCK_INIT;
	sl_strv paths = NULL;
	char *rival = NULL, names[1024], wo[128], tip[41];
	int error, joined, landed = 0;

	if ((error = ops->lock_repo(ops->arg, &lock, err)) != 0)
		return error;
	if ((error = ops->target_tip(ops->arg, tip, err)) == 0 &&
	    (error = train_first_overlap(tr->ctx, tr->run, tip, &rival, &paths, &landed, err)) == 0 &&
	    !rival)
		error = store_train_join(tr->ctx->st, tr->run->id, tr->ctx->target_ref,
					 tr->run->head_commit, lanes, &joined, err);
	sl_lock_release(&lock);
	if (!error && rival) {
		train_some_paths((const char *const *)paths, names, sizeof(names));
		train_overlap_reason(why, n, names, train_wo_of(tr->ctx, rival, wo, sizeof(wo)),
				     rival, landed);
		error = 1;
	}
	free(rival);
	sl_strv_free(paths);
	return error;
}

int train_join(const struct train_run *tr, const struct train_ops *ops, char *why, size_t n,
	       struct sl_err *err)
{
	const struct store_run *r = tr->run;
	struct store_car c;
	int64_t lanes;
	int error, joined, same = 0;

	if ((error = store_train_get(tr->ctx->st, r->id, &c, err)) == 0) {
		same = c.head && r->head_commit && !strcmp(c.head, r->head_commit);
		store_car_release(&c);
	} else if (error != SL_ENOTFOUND) {
		return error;
	}
	sl_err_clear(err);
	if (same) /* in already with this head: kept as it is (a killed worker's car too) */
		return 0;
	if ((error = lanes_now(tr, ops, &lanes, err)) != 0)
		return error;
	if (tr->ctx->cfg->queue.overlap_fatal)
		return join_unless_overlap(tr, ops, lanes, why, n, err);
	return store_train_join(tr->ctx->st, r->id, tr->ctx->target_ref, r->head_commit, lanes,
				&joined, err);
}
