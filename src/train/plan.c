/*
 * The merge train's plan (docs/ARCHITECTURE.md, The merge train): any
 * worker brings every car in the line onto its place under the repository
 * lock. Car 1's merge commit is made on the target's tip, each car behind on
 * the car ahead, kept under refs/sluice/train/<run-id>; a car beyond
 * merge.train_depth waits without a commit. A car built again tells its run
 * so, and every car in the line is told its place.
 */
#include "train/train.h"
#include "train/train_int.h"
#include "core/ctx.h"
#include "merge/merge.h"
#include "store/store.h"
#include "core/config.h"
#include "core/fault.h"
#include "core/lock.h"
#include "core/log.h"
#include "core/time.h"

#include <git2.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int train__set_str(char **dst, const char *src)
{
	char *n = src ? strdup(src) : NULL;

	if (src && !n)
		return -1;
	free(*dst);
	*dst = n;
	return 0;
}

void train_release(struct train *t)
{
	store_cars_free(t->cars, t->n);
	memset(t, 0, sizeof(*t));
}

int train_load(struct sl_ctx *ctx, const char *tip, struct train *t, struct sl_err *err)
{
	memset(t, 0, sizeof(*t));
	snprintf(t->tip, sizeof(t->tip), "%s", tip);
	return store_train_list(ctx->st, ctx->target_ref, &t->cars, &t->n, err);
}

/* The work order of run_id into buf: 0, or -1 when its row cannot be read ("run <id>"). */
static int wo_read(struct sl_ctx *ctx, const char *run_id, char *buf, size_t n)
{
	struct store_run r;
	struct sl_err err = SL_ERR_INIT;

	if (store_run_get(ctx->st, run_id, &r, &err) != 0) {
		snprintf(buf, n, "run %.12s", run_id);
		return -1;
	}
	snprintf(buf, n, "%s", r.work_order_id);
	store_run_release(&r);
	return 0;
}

const char *train_wo_of(struct sl_ctx *ctx, const char *run_id, char *buf, size_t n)
{
	if (!run_id)
		snprintf(buf, n, "%s", ctx->cfg->target);
	else
		wo_read(ctx, run_id, buf, n);
	return buf;
}

const char *train_name_of(struct train_names *c, const char *run_id)
{
	size_t i, k, max = sizeof(c->e) / sizeof(c->e[0]);

	if (!run_id)
		return train_wo_of(c->ctx, NULL, c->target, sizeof(c->target));
	for (i = 0; i < max; i++)
		if (c->e[i].run[0] && !strcmp(c->e[i].run, run_id))
			return c->e[i].wo;
	k = c->next++ % max;
	c->e[k].run[0] = '\0';
	/* kept only when the row was read: a failed read is tried again on the next look */
	if (wo_read(c->ctx, run_id, c->e[k].wo, sizeof(c->e[k].wo)) == 0 &&
	    strlen(run_id) < sizeof(c->e[k].run))
		snprintf(c->e[k].run, sizeof(c->e[k].run), "%s", run_id);
	return c->e[k].wo;
}

int train_tester_alive(const struct store_car *c)
{
	return c->tester && sl_owner_alive(c->tester);
}

int *train_testers_alive(const struct train *t, size_t upto)
{
	int *alive = calloc(t->n ? t->n : 1, sizeof(*alive));
	size_t i;

	for (i = 0; alive && i < t->n && i <= upto; i++)
		alive[i] = train_tester_alive(&t->cars[i]);
	return alive;
}

int train_park(struct sl_ctx *ctx, struct store_car *c, struct sl_err *err)
{
	int error;

	c->status = TRAIN_WAITING;
	train__set_str(&c->base, NULL);
	train__set_str(&c->commit, NULL);
	train__set_str(&c->tree, NULL);
	train__set_str(&c->ahead, NULL);
	train__set_str(&c->tester, NULL);
	train__set_str(&c->gates_json, NULL);
	train__set_str(&c->covered_by, NULL);
	train__set_str(&c->covered_commit, NULL);
	train__set_str(&c->lane_commit, NULL);
	c->started_ms = c->tested_ms = 0;
	if ((error = store_train_put(ctx->st, c, err)) != 0)
		return error;
	return train_car_ref(ctx, c->run_id, NULL, err);
}

/* The run's reason (as an event) changed: the worker's own run is read again. */
static void told(const struct train_run *tr, const struct train_ops *ops, const char *run_id)
{
	if (!strcmp(run_id, tr->run->id) && ops->reload)
		ops->reload(ops->arg);
}

/*
 * A car built again (the target moved, a car ahead left or changed): its
 * run's reason says so, as an event, whichever worker planned it. Best
 * effort: the car's own worker says what it does next anyway.
 */
static void say_rebuilt(const struct train_run *tr, const struct train_ops *ops,
			const struct store_car *c, int carry)
{
	struct sl_err err = SL_ERR_INIT;
	char why[512], wo[128], lanes[128];

	train_lane_words(tr->ctx->cfg, c->lanes, lanes, sizeof(lanes));
	snprintf(why, sizeof(why), "in the train: rebuilt on %s%s%s%s%s", c->ahead ? "top of " :
		 "the new tip of ", c->ahead ? train_wo_of(tr->ctx, c->ahead, wo, sizeof(wo)) :
		 tr->ctx->cfg->target, carry ? "; its test stands (lane " : "", carry ? lanes : "",
		 carry ? ": its paths are the same there)" : "");
	if (store_run_transition(tr->ctx->st, c->run_id, RUN_APPROVED, RUN_APPROVED, why, 0,
				 &err) != 0)
		sl_log(SL_LOG_INFO, "run %s: %s (%s)", c->run_id, why, err.msg);
	told(tr, ops, c->run_id);
}

/*
 * merge.lanes: car c (green, or under test), built again with tree `tree`,
 * keeps its test when its lanes' paths are the same there as in the commit
 * its gates ran on (lane_commit, or its commit until now).
 */
static int lane_carries(struct sl_ctx *ctx, const struct store_car *c, const char *tree)
{
	return c->lanes && ctx->cfg->merge.nlanes &&
	       (c->status == TRAIN_GREEN || c->status == TRAIN_TESTING) &&
	       train_lanes_same(ctx->repo.root, ctx->cfg, c->lanes,
				c->lane_commit ? c->lane_commit : c->commit, tree);
}

/* Record the merge result of car c on `onto`: pending with its commit, or in conflict. */
static int record_build(const struct train_run *tr, const struct train_ops *ops,
			struct store_car *c, const char *onto, const char *ahead,
			const struct merge_commit_result *mr, int conflict, struct sl_err *err)
{
	char commit[41], tree[41];
	int error, rebuilt = c->commit != NULL, carry;

	git_oid_tostr(commit, sizeof(commit), &mr->commit);
	git_oid_tostr(tree, sizeof(tree), &mr->tree);
	carry = !conflict && rebuilt && lane_carries(tr->ctx, c, tree);
	if (carry) { /* the test stands: keep the commit it ran on (docs/config.md, "Lanes") */
		if (!c->lane_commit && train__set_str(&c->lane_commit, c->commit))
			return sl_err_set(err, SL_ERROR, "out of memory");
	} else {
		c->status = conflict ? TRAIN_CONFLICT : TRAIN_PENDING;
		if (train__set_str(&c->tester, NULL) || train__set_str(&c->gates_json, NULL) ||
		    train__set_str(&c->lane_commit, NULL))
			return sl_err_set(err, SL_ERROR, "out of memory");
		c->started_ms = c->tested_ms = 0;
	}
	if (train__set_str(&c->base, onto) || train__set_str(&c->ahead, ahead) ||
	    train__set_str(&c->commit, conflict ? NULL : commit) ||
	    train__set_str(&c->tree, conflict ? NULL : tree) ||
	    train__set_str(&c->covered_by, NULL) || train__set_str(&c->covered_commit, NULL))
		return sl_err_set(err, SL_ERROR, "out of memory");
	if ((error = store_train_put(tr->ctx->st, c, err)) != 0 ||
	    (error = train_car_ref(tr->ctx, c->run_id, c->commit, err)) != 0)
		return error;
	if (rebuilt && !conflict)
		say_rebuilt(tr, ops, c, carry);
	sl_fault(conflict ? NULL : "train.after_car");
	return 0;
}

/*
 * Make car c's merge commit on `onto` (the car ahead's commit or the tip);
 * r is the car's run. 0 built (or in conflict), 1 its head is in `onto`
 * already (it landed; its worker records that), or an error.
 */
static int build_car(const struct train_run *tr, const struct train_ops *ops,
		     const struct store_run *r, struct store_car *c, const char *onto,
		     const char *ahead, struct sl_err *err)
{
	struct merge_commit_opts o = MERGE_COMMIT_OPTS_INIT;
	struct merge_commit_result mr = MERGE_COMMIT_RESULT_INIT;
	void *held = NULL;
	int error, rc;

	if ((error = ops->merge_opts(ops->arg, r, &o, &held, err)) != 0)
		goto out;
	o.head = c->head;
	rc = merge_build(tr->ctx->repo.root, &o, onto, &mr, err);
	if (rc == SL_EEXISTS) {
		sl_err_clear(err);
		error = 1;
	} else if (rc == 0 || (rc == SL_ECONFLICT && mr.status == MERGE_CONFLICT)) {
		sl_err_clear(err);
		error = record_build(tr, ops, c, onto, ahead, &mr, rc != 0, err);
	} else {
		error = rc;
	}
out:
	merge_commit_result_release(&mr);
	ops->merge_opts_release(held);
	return error;
}

/*
 * The run row of car c (*r, the caller's), and 1 when the car belongs in
 * the train: its run is approved or landing, with the car's head. A car of
 * a run that went elsewhere (abandoned, sent back, merged) is taken out.
 */
static int car_run(struct sl_ctx *ctx, const struct store_car *c, struct store_run *r,
		   struct sl_err *err)
{
	int error, keep;

	memset(r, 0, sizeof(*r));
	if ((error = store_run_get(ctx->st, c->run_id, r, err)) != 0 && error != SL_ENOTFOUND)
		return error;
	sl_err_clear(err);
	keep = !error && (r->state == RUN_APPROVED || r->state == RUN_MERGING) && r->head_commit &&
	       c->head && !strcmp(r->head_commit, c->head);
	if (keep)
		return 1;
	if ((error = store_train_leave(ctx->st, c->run_id, err)) != 0 ||
	    (error = train_car_ref(ctx, c->run_id, NULL, err)) != 0)
		return error;
	return 0;
}

/* One car of the plan: 1 when it extends the line (*onto is its commit now), 0 when not. */
static int plan_car(const struct train_run *tr, const struct train_ops *ops, struct store_car *c,
		    int pos, const char **onto, const char **ahead, struct sl_err *err)
{
	struct store_run r;
	int error, depth = train_depth_of(tr->ctx->cfg);

	if ((error = car_run(tr->ctx, c, &r, err)) <= 0) {
		store_run_release(&r);
		return error < 0 ? error : 0;
	}
	error = 0;
	if (c->status == TRAIN_CONFLICT && c->base && !strcmp(c->base, *onto)) {
		store_run_release(&r); /* waits in its place for the car ahead: built again later */
		return 0;
	}
	if (pos > depth)
		error = c->status == TRAIN_WAITING ? 0 : train_park(tr->ctx, c, err);
	else if (c->status == TRAIN_WAITING || !c->commit || !c->base || strcmp(c->base, *onto))
		error = build_car(tr, ops, &r, c, *onto, *ahead, err);
	store_run_release(&r);
	if (error)
		return error < 0 ? error : 0;
	if (pos > depth || c->status == TRAIN_CONFLICT)
		return pos > depth; /* waits: still in the line */
	*onto = c->commit;
	*ahead = c->run_id;
	return 1;
}

/* 1 when car `near`'s chain (it, the car it is built on, ...) holds car k. */
static int on_chain(const struct train *t, size_t near, size_t k)
{
	size_t i, steps;

	for (steps = 0; near < t->n && steps <= t->n; steps++) {
		if (near == k)
			return 1;
		for (i = 0; t->cars[near].ahead && i < t->n &&
			    strcmp(t->cars[i].run_id, t->cars[near].ahead); i++)
			;
		near = t->cars[near].ahead ? i : t->n;
	}
	return 0;
}

/*
 * Where car i goes (merge.lanes; docs/config.md, "Lanes"): on the nearest
 * car ahead that shares a lane with it and extends the line (*onto, *ahead;
 * else the tip); its place among the cars that share one (the return).
 * *blocked: such a car ahead waits, or they are not all on one chain (a
 * car across two lanes whose cars ahead went separate ways): it waits too.
 * Without lanes every car shares: the line of old.
 */
static int lane_place(const struct train *t, const int *counted, const int *ext, size_t i,
		      const char **onto, const char **ahead, int *blocked)
{
	size_t j, near = t->n;
	int pos = 1;

	*blocked = 0;
	for (j = 0; j < i; j++)
		if (counted[j] && train_shares(&t->cars[j], &t->cars[i])) {
			pos++;
			*blocked |= !ext[j];
			if (ext[j])
				near = j;
		}
	for (j = 0; near < t->n && j < near; j++)
		*blocked |= ext[j] && train_shares(&t->cars[j], &t->cars[i]) && !on_chain(t, near, j);
	*onto = near < t->n ? t->cars[near].commit : t->tip;
	*ahead = near < t->n ? t->cars[near].run_id : NULL;
	return pos;
}

/*
 * merge.lanes changed since car c's lanes were read (its lanes_key): they
 * are read again, and the car, built or tested under the old ones (another
 * line, other gates), waits to be built and tested again. A wide car stays
 * wide. 0, or an error.
 */
static int lanes_current(const struct train_run *tr, const struct train *t, struct store_car *c,
			 struct sl_err *err)
{
	int64_t key = train_lanes_key(tr->ctx->cfg), m = 0;
	int error;

	if (!c->lanes || c->lanes_key == key)
		return 0;
	if ((error = train_lanes_of_run(tr->ctx, t->tip, c->head, &m, err)) != 0)
		return error;
	sl_log(SL_LOG_INFO, "run %s: merge.lanes changed; its car is read, built and tested again",
	       c->run_id);
	c->lanes = m;
	c->lanes_key = m ? key : 0;
	if (c->status == TRAIN_WAITING)
		return store_train_put(tr->ctx->st, c, err);
	return train_park(tr->ctx, c, err);
}

int train_plan(const struct train_run *tr, const struct train_ops *ops, struct train *t,
	       struct sl_err *err)
{
	int *counted = calloc(t->n + 1, sizeof(int)), *ext = calloc(t->n + 1, sizeof(int));
	int pos, rc = 0, blocked;
	const char *onto, *ahead;
	size_t i;

	if (!counted || !ext)
		rc = sl_err_set(err, SL_ERROR, "out of memory");
	for (i = 0; rc >= 0 && i < t->n; i++) {
		if (!train_in_line(t->cars, t->n, t->tip, &t->cars[i]))
			continue;
		if ((rc = lanes_current(tr, t, &t->cars[i], err)) < 0)
			break;
		pos = lane_place(t, counted, ext, i, &onto, &ahead, &blocked);
		if (blocked)
			pos = INT_MAX; /* waits as a car beyond the depth does */
		if ((rc = plan_car(tr, ops, &t->cars[i], pos, &onto, &ahead, err)) < 0)
			break;
		counted[i] = rc;
		ext[i] = rc && ahead == t->cars[i].run_id;
	}
	free(counted);
	free(ext);
	return rc < 0 ? rc : 0;
}

/* The front car, green, on a frozen target: the tail says so, as train_decide() does. */
static void frozen_tail(const struct train_run *tr, const struct store_car *c, int pos,
			const char *wo, char *tail, size_t n)
{
	struct train_freeze f;
	int urgent;

	if (c->status == TRAIN_GREEN && pos == 1 &&
	    train_frozen_for(tr->ctx, wo, sl_now_ms(), &f, &urgent))
		snprintf(tail, n, ", green in %.1f s; wait: frozen (%s)",
			 (double)(c->tested_ms - c->started_ms) / 1000.0, f.reason);
}

/*
 * Car c's run is told its place (pos of total) again when its reason
 * names another: a worker that stopped waiting left it as it was while
 * cars joined, landed or left (best effort, as an event).
 */
static void retell_car(const struct train_run *tr, const struct train_ops *ops,
		       const struct store_car *c, int pos, int total)
{
	static const char head[] = "in the train: car ";
	struct store_run r;
	struct sl_err err = SL_ERR_INIT;
	char why[1024], tail[512], wo[128];
	int k = 0, m = 0, at = 0;

	if (store_run_get(tr->ctx->st, c->run_id, &r, &err) != 0)
		return;
	if (r.state == RUN_APPROVED && r.reason && !strncmp(r.reason, head, sizeof(head) - 1) &&
	    sscanf(r.reason + sizeof(head) - 1, "%d of %d%n", &k, &m, &at) == 2 && at > 0) {
		/* the work order ahead read only for a tail that names it (every look of a wait) */
		train_car_tail(c, pos, train_depth_of(tr->ctx->cfg), train_depth_key(tr->ctx->cfg),
			       train_car_tail_names(c, pos) ? train_wo_of(tr->ctx, c->ahead, wo, sizeof(wo))
							    : NULL,
			       tail, sizeof(tail));
		frozen_tail(tr, c, pos, r.work_order_id, tail, sizeof(tail));
		snprintf(why, sizeof(why), "%s%d of %d%s", head, pos, total,
			 tail[0] ? tail : r.reason + sizeof(head) - 1 + at);
		if (strcmp(why, r.reason) &&
		    store_run_transition(tr->ctx->st, c->run_id, RUN_APPROVED, RUN_APPROVED, why, 0,
					 &err) != 0)
			sl_log(SL_LOG_INFO, "run %s: %s (%s)", c->run_id, why, err.msg);
		told(tr, ops, c->run_id);
	}
	store_run_release(&r);
}

void train_retell(const struct train_run *tr, const struct train_ops *ops, const struct train *t,
		  const char *skip)
{
	/* in[i]: car i is in the line and is not `skip`'s (read once: each car's place reads all) */
	int *in = calloc(t->n + 1, sizeof(*in)), pos, total;
	size_t i, j;

	for (i = 0; in && i < t->n; i++)
		in[i] = train_in_line(t->cars, t->n, t->tip, &t->cars[i]) &&
			(!skip || strcmp(t->cars[i].run_id, skip));
	for (i = 0; in && i < t->n; i++) {
		if (!in[i])
			continue;
		pos = total = 0; /* its place among the cars of its lanes (merge.lanes) */
		for (j = 0; j < t->n; j++)
			if (in[j] && train_shares(&t->cars[i], &t->cars[j])) {
				total++;
				pos += j <= i;
			}
		retell_car(tr, ops, &t->cars[i], pos, total);
	}
	free(in);
}

/* The train's cars at the target's tip now (ops->target_tip()). */
static int load_now(const struct train_run *tr, const struct train_ops *ops, struct train *t,
		    struct sl_err *err)
{
	char tip[41];
	int error;

	memset(t, 0, sizeof(*t));
	if ((error = ops->target_tip(ops->arg, tip, err)) != 0)
		return error;
	return train_load(tr->ctx, tip, t, err);
}

int train_planned(const struct train_run *tr, const struct train_ops *ops, struct train *t,
		  struct sl_err *err)
{
	struct sl_lock lock = SL_LOCK_INIT;
	struct train_where w;
	int error;

	memset(t, 0, sizeof(*t));
	if ((error = ops->lock_repo(ops->arg, &lock, err)) != 0)
		return error;
	if ((error = load_now(tr, ops, t, err)) == 0 && (error = train_plan(tr, ops, t, err)) == 0) {
		train_release(t); /* read again: the plan removed, parked and rebuilt cars */
		if ((error = load_now(tr, ops, t, err)) == 0)
			train_retell(tr, ops, t, NULL);
	}
	sl_lock_release(&lock);
	if (error)
		return error;
	train_locate(t->cars, t->n, NULL, t->tip, tr->run->id, &w);
	if (w.me >= t->n)
		return sl_err_set(err, SL_ENOTFOUND, "run '%s' left the merge train", tr->run->id);
	return 0;
}
