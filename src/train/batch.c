/*
 * Batches in the merge train (docs/config.md, "Batches"): with merge.batch
 * N above 1, the first N cars of the line's chain are one batch. The merge
 * gates run on one car of it at a time, and only while no green car waits
 * at the front to land: the batch's last car (its commit holds every car
 * ahead); when a car of the batch is red, the car half-way between the
 * front and it (bisection). A green test covers every
 * untested car ahead of it in the chain: each is green by that test, and
 * its landing's train.json names the tested commit. A red car right behind
 * a green one is the culprit: its verdict holds, it leaves the line (the
 * decision's out_of_line()), and the cars behind are rebuilt without it.
 */
#include "train/train.h"
#include "train/train_int.h"
#include "core/config.h"
#include "core/ctx.h"
#include "core/log.h"
#include "core/time.h"
#include "store/store.h"

#include <stdlib.h>
#include <string.h>

int train_depth_of(const struct sl_config *cfg)
{
	return cfg->merge.batch > 1 ? cfg->merge.batch : cfg->merge.train_depth;
}

const char *train_depth_key(const struct sl_config *cfg)
{
	return cfg->merge.batch > 1 ? "merge.batch" : "merge.train_depth";
}

/* The chain of the batch: the indexes of the first `batch` cars in the line, conflicts left out. */
static size_t batch_chain(const struct store_car *cars, size_t n, const char *tip, int batch,
			  size_t *chain)
{
	size_t i, k = 0;

	for (i = 0; i < n && k < (size_t)batch && k < SL_TRAIN_BATCH_MAX; i++)
		if (train_in_line(cars, n, tip, &cars[i]) && cars[i].status != TRAIN_CONFLICT &&
		    cars[i].status != TRAIN_WAITING)
			chain[k++] = i;
	return k;
}

size_t train_batch_tester(const struct store_car *cars, size_t n, const char *tip, int batch,
			  int filling)
{
	size_t chain[SL_TRAIN_BATCH_MAX], k = batch_chain(cars, n, tip, batch, chain), g, r;

	for (g = 0; g < k && cars[chain[g]].status == TRAIN_GREEN; g++)
		;
	for (r = g; r < k && cars[chain[r]].status != TRAIN_RED; r++)
		;
	if (g)
		return n; /* green cars ahead land first: the next test is on what follows them */
	if (r == k) /* none red: the batch's last car, once the batch is whole */
		return filling && k < (size_t)batch ? n : chain[k - 1];
	if (r == 0)
		return n; /* red on the tip: its verdict holds, it leaves */
	return chain[(r - 1) / 2];
}

int train_batch_bisecting(const struct store_car *cars, size_t n, const char *tip, int batch)
{
	size_t chain[SL_TRAIN_BATCH_MAX], k = batch_chain(cars, n, tip, batch, chain), i;

	for (i = 0; i < k; i++)
		if (cars[chain[i]].status == TRAIN_RED)
			return 1;
	return 0;
}

/* Car `c` green by the test of `by`: its own commit, the tested one's gates. */
static int cover_one(struct sl_ctx *ctx, struct store_car *c, const struct store_car *by,
		     struct sl_err *err)
{
	c->status = TRAIN_GREEN;
	c->started_ms = by->started_ms;
	c->tested_ms = by->tested_ms;
	if (train__set_str(&c->tester, NULL) || train__set_str(&c->gates_json, by->gates_json) ||
	    train__set_str(&c->covered_by, by->run_id) ||
	    train__set_str(&c->covered_commit, by->commit))
		return sl_err_set(err, SL_ERROR, "out of memory");
	return store_train_put(ctx->st, c, err);
}

int train_car_solo(struct sl_ctx *ctx, const char *run_id)
{
	struct store_run r;
	struct store_wo wo = STORE_WO_INIT;
	struct store_wo_fields f = { 0 };
	struct sl_err err = SL_ERR_INIT;
	int solo = 0;

	memset(&r, 0, sizeof(r));
	if (store_run_get(ctx->st, run_id, &r, &err) == 0 &&
	    store_wo_get(ctx->st, r.work_order_id, &wo, &err) == 0 &&
	    store_wo_fields_parse(wo.id, wo.fields_json, &f, &err) == 0)
		solo = f.revert_commit != NULL;
	store_wo_fields_release(&f);
	store_wo_release(&wo);
	store_run_release(&r);
	return solo;
}

/* train_car_solo() of run_id, read once per wait (names->solo). */
static int solo_of(struct train_names *names, const char *run_id)
{
	size_t i, max = sizeof(names->solo) / sizeof(names->solo[0]);
	int solo;

	for (i = 0; i < names->nsolo; i++)
		if (!strcmp(names->solo[i].run, run_id))
			return names->solo[i].solo;
	solo = train_car_solo(names->ctx, run_id);
	if (names->nsolo < max && strlen(run_id) < sizeof(names->solo[0].run)) {
		snprintf(names->solo[names->nsolo].run, sizeof(names->solo[0].run), "%s", run_id);
		names->solo[names->nsolo++].solo = solo;
	}
	return solo;
}

int train_batch_solo(struct train_names *names, const struct train *t)
{
	const struct sl_config *cfg = names->ctx->cfg;
	size_t chain[SL_TRAIN_BATCH_MAX], k, i;

	if (cfg->merge.batch <= 1)
		return 0;
	k = batch_chain(t->cars, t->n, t->tip, cfg->merge.batch, chain);
	for (i = 0; i < k; i++)
		if (solo_of(names, t->cars[chain[i]].run_id))
			return 1;
	return 0;
}

int train_batch_cover(struct sl_ctx *ctx, const struct store_car *green, struct sl_err *err)
{
	struct store_car *cars = NULL;
	const char *base = green->base, *ahead = green->ahead;
	size_t n = 0, i, covered = 0;
	int error;

	if (ctx->cfg->merge.batch <= 1 || green->status != TRAIN_GREEN)
		return 0;
	if ((error = store_train_list(ctx->st, ctx->target_ref, &cars, &n, err)) != 0)
		return error;
	/* back along the chain: each car ahead whose commit is the base of the one behind it */
	while (ahead && covered < (size_t)SL_TRAIN_BATCH_MAX) {
		for (i = 0; i < n && strcmp(cars[i].run_id, ahead); i++)
			;
		if (i == n || !cars[i].commit || !base || strcmp(cars[i].commit, base) ||
		    (cars[i].status != TRAIN_PENDING && cars[i].status != TRAIN_TESTING) ||
		    train_car_solo(ctx, cars[i].run_id))
			break; /* a revert runs its watch gate on its own car (docs/watch.md) */
		if ((error = cover_one(ctx, &cars[i], green, err)) != 0)
			break;
		covered++;
		base = cars[i].base;
		ahead = cars[i].ahead;
	}
	if (!error && covered)
		sl_log(SL_LOG_INFO, "run %s: green on %.12s covers %zu car%s ahead in its batch",
		       green->run_id, green->commit, covered, covered == 1 ? "" : "s");
	store_cars_free(cars, n);
	return error;
}

int train_batch_filling(struct sl_ctx *ctx, const struct train *t)
{
	struct store_run *runs = NULL;
	struct sl_err err = SL_ERR_INIT;
	size_t n = 0, i, j;
	int64_t last = 0;
	int filling = 0;

	for (i = 0; i < t->n; i++)
		last = t->cars[i].joined_ms > last ? t->cars[i].joined_ms : last;
	/* a run that stays approved and never joins holds no batch for long */
	if (ctx->cfg->merge.batch <= 1 || sl_now_ms() - last > TRAIN_BATCH_FILL_MS ||
	    store_runs_list(ctx->st, RUN_SET(RUN_APPROVED), NULL, &runs, &n, &err) != 0) {
		store_runs_free(runs, n);
		return 0;
	}
	for (i = 0; i < n && !filling; i++) {
		if (!runs[i].target || strcmp(runs[i].target, ctx->target_ref))
			continue;
		for (j = 0; j < t->n && strcmp(t->cars[j].run_id, runs[i].id); j++)
			;
		/* a head on the tip already (held, or landed) never joins */
		filling = j == t->n && runs[i].head_commit &&
			  !train_reaches(ctx->repo.root, t->tip, runs[i].head_commit);
	}
	store_runs_free(runs, n);
	return filling;
}
