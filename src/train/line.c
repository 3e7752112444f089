/*
 * A car's place in the line, changed by its own run's worker under the
 * repository lock (docs/ARCHITECTURE.md, The merge train): out of the train,
 * parked to be built again on the tip, or let go by a worker that stops
 * carrying it.
 */
#include "train/train.h"
#include "train/train_int.h"
#include "store/store.h"
#include "core/ctx.h"
#include "core/config.h"
#include "core/lock.h"
#include "core/time.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

int train_leave(const struct train_run *tr, const struct train_ops *ops, struct sl_err *err)
{
	struct sl_lock lock = SL_LOCK_INIT;
	int error;

	if ((error = ops->lock_repo(ops->arg, &lock, err)) != 0)
		return error;
	if ((error = store_train_leave(tr->ctx->st, tr->run->id, err)) == 0)
		error = train_car_ref(tr->ctx, tr->run->id, NULL, err);
	sl_lock_release(&lock);
	return error;
}

int train_park_mine(const struct train_run *tr, const struct train_ops *ops, struct store_car *me,
		    struct sl_err *err)
{
	struct sl_lock lock = SL_LOCK_INIT;
	int error;

	if ((error = ops->lock_repo(ops->arg, &lock, err)) == 0)
		error = train_park(tr->ctx, me, err);
	sl_lock_release(&lock);
	return error;
}

void train_let_go(const struct train_run *tr, const struct train_ops *ops)
{
	struct sl_lock lock = SL_LOCK_INIT;
	struct sl_err err = SL_ERR_INIT;
	struct store_car c;
	char owner[64];

	sl_owner_self(owner, sizeof(owner));
	if (ops->lock_repo(ops->arg, &lock, &err) != 0)
		return;
	if (store_train_get(tr->ctx->st, tr->run->id, &c, &err) == 0) {
		if (c.tester && !strcmp(c.tester, owner) && c.status != TRAIN_TESTING) {
			train__set_str(&c.tester, NULL);
			store_train_put(tr->ctx->st, &c, &err);
		}
		store_car_release(&c);
	}
	sl_lock_release(&lock);
}

int train_car_holds(struct sl_ctx *ctx, const struct store_car *c)
{
	struct store_run r;
	struct sl_err e = SL_ERR_INIT;
	int holds;

	if (store_run_get(ctx->st, c->run_id, &r, &e) != 0)
		return 0;
	holds = (r.state == RUN_APPROVED || r.state == RUN_MERGING) && r.head_commit && c->head &&
		!strcmp(r.head_commit, c->head);
	store_run_release(&r);
	return holds;
}

/* The target frozen now (train_frozen_for()), and whether the run's work order is urgent. */
static void frozen_of(const struct train_run *tr, struct train_state *st)
{
	struct train_freeze f;

	train_frozen_for(tr->ctx, tr->run->work_order_id, sl_now_ms(), &f, &st->urgent);
	if (!f.frozen)
		return;
	snprintf(st->frozen_buf, sizeof(st->frozen_buf), "%s", f.reason);
	st->frozen = st->frozen_buf;
	st->frozen_allow_urgent = f.allow_urgent;
}

/* merge.lanes: the lanes the cars ahead of a waiting car hold of its own (st->lanes_ahead). */
static void lanes_ahead(const struct sl_config *cfg, const struct train *t, size_t me,
			struct train_state *st)
{
	const struct store_car *c = &t->cars[me];
	int64_t all = ((int64_t)1 << cfg->merge.nlanes) - 1, held = 0;
	size_t i;

	if (!cfg->merge.nlanes || c->status != TRAIN_WAITING)
		return;
	for (i = 0; i < me; i++)
		if (train_in_line(t->cars, t->n, t->tip, &t->cars[i]) && train_shares(&t->cars[i], c))
			held |= t->cars[i].lanes ? t->cars[i].lanes : all;
	train_lane_words(cfg, held & (c->lanes ? c->lanes : all), st->lanes_buf,
			 sizeof(st->lanes_buf));
	st->lanes_ahead = st->lanes_buf;
}

int train_state_of(const struct train_run *tr, const struct train *t, struct train_names *names,
		   struct train_state *st, struct train_where *w)
{
	const struct store_run *r = tr->run;
	const struct store_car *me, *ahead;

	memset(st, 0, sizeof(*st));
	train_locate(t->cars, t->n, NULL, t->tip, r->id, w); /* the place; liveness below */
	if (w->me >= t->n)
		return -1;
	me = &t->cars[w->me];
	ahead = w->ahead < t->n ? &t->cars[w->ahead] : NULL;
	st->cars = t->cars;
	st->n = t->n;
	/* a batch's tester may be behind the run's car */
	st->alive = train_testers_alive(t, tr->ctx->cfg->merge.batch > 1 ? t->n : w->me);
	st->tip = t->tip;
	st->me = r->id;
	/* a git walk, only where the decision reads it: out of the line, nothing ahead */
	st->head_in_base = !w->pos && !ahead && train_reaches(tr->ctx->repo.root, r->head_commit,
							       me->base);
	st->holds = r->head_commit && me->head && !strcmp(r->head_commit, me->head);
	st->target = tr->ctx->cfg->target;
	st->train_depth = train_depth_of(tr->ctx->cfg);
	st->depth_key = train_depth_key(tr->ctx->cfg);
	st->batch = train_batch_solo(names, t) ? 1 : tr->ctx->cfg->merge.batch;
	/* only a batch not whole yet waits for runs to join: no store read for the others */
	st->filling = st->batch > 1 && w->pos && w->total < st->batch &&
		      train_batch_filling(tr->ctx, t);
	st->my_ahead_name = train_name_of(names, me->ahead);
	st->line_ahead_name = train_name_of(names, ahead ? ahead->run_id : NULL);
	frozen_of(tr, st);
	lanes_ahead(tr->ctx->cfg, t, w->me, st);
	train_locate(t->cars, t->n, st->alive, t->tip, r->id, w);
	return 0;
}

int train_tester_gone(struct sl_ctx *ctx, const char *run_id)
{
	struct store_car c;
	struct sl_err err = SL_ERR_INIT;
	int gone = 0;

	if (store_train_get(ctx->st, run_id, &c, &err) == 0) {
		gone = c.status == TRAIN_TESTING && !train_tester_alive(&c);
		store_car_release(&c);
	}
	return gone;
}

json_t *train_own_red(const struct store_car *me, const char **failed, size_t max, char *reason,
		      size_t reason_n)
{
	json_t *all = json_loads(me->gates_json ? me->gates_json : "[]", 0, NULL), *g;
	char why[512], runs[128];
	size_t i, n = 0, len = 0;

	why[0] = '\0';
	json_array_foreach(all, i, g)
		if (!json_is_true(json_object_get(g, "passed")) && n + 1 < max &&
		    json_string_value(json_object_get(g, "name"))) {
			failed[n++] = json_string_value(json_object_get(g, "name"));
			train_red_runs_words((int)json_integer_value(json_object_get(g, "red_runs")),
					     json_string_value(json_object_get(g, "tree")), runs,
					     sizeof(runs));
			len += (size_t)snprintf(why + len, len < sizeof(why) ? sizeof(why) - len : 0,
						"%s'%s'%s%s", n > 1 ? ", " : "", failed[n - 1],
						runs[0] ? ", " : "", runs);
		}
	if (len >= sizeof(why))
		why[sizeof(why) - 1] = '\0';
	snprintf(reason, reason_n, "the merge gates failed on its own merge on top of %.12s, with "
		 "nothing new there to resolve against: gate %s", me->base, n ? why : "?");
	return all;
}
