/*
 * The merge train's side in the runner (docs/ARCHITECTURE.md, The merge
 * train): what the train module (src/train/) calls back (the repository
 * lock, a run's merge message, reading the run row again), how a run's head
 * came onto the target, and the landing's check and record, which
 * step_merge.c calls when the run lands and step_train.c before it plans.
 */
#include "runner/runner_int.h"
#include "store/store.h"
#include "merge/merge.h"
#include "train/train.h"
#include "core/lock.h"
#include "core/time.h"

#include <stdlib.h>
#include <string.h>

/* What the train module calls back in the runner (train/train.h, struct train_ops). */
static int ops_lock(void *arg, struct sl_lock *lock, struct sl_err *err)
{
	return runner__lock_repo(((struct step *)arg)->ctx, lock, err);
}

static int ops_merge_opts(void *arg, const struct store_run *r, struct merge_commit_opts *o,
			  void **held, struct sl_err *err)
{
	struct step_merge_msg *mm = malloc(sizeof(*mm));
	struct step other;

	*held = mm;
	if (!mm)
		return sl_err_set(err, SL_ERROR, "out of memory");
	*mm = (struct step_merge_msg)STEP_MERGE_MSG_INIT;
	memset(&other, 0, sizeof(other));
	other.ctx = ((struct step *)arg)->ctx;
	other.run = *r; /* borrowed: never released here */
	return step__merge_msg(&other, mm, o, err);
}

static void ops_merge_release(void *held)
{
	if (held)
		step__merge_msg_release(held);
	free(held);
}

static void ops_reload(void *arg)
{
	struct sl_err err = SL_ERR_INIT;

	step__reload(arg, &err);
}

static int ops_tip(void *arg, char tip[41], struct sl_err *err)
{
	return step__target_tip(arg, tip, err);
}

const struct train_ops *step__train_ops(struct step *s, struct train_ops *ops, struct train_run *tr)
{
	ops->arg = s;
	ops->lock_repo = ops_lock;
	ops->merge_opts = ops_merge_opts;
	ops->merge_opts_release = ops_merge_release;
	ops->reload = ops_reload;
	ops->target_tip = ops_tip;
	tr->ctx = s->ctx;
	tr->run = &s->run;
	tr->run_dir = s->run_dir;
	tr->wt = s->wt;
	return ops;
}

int step__train_load(struct step *s, struct train *t, struct sl_err *err)
{
	char tip[41];
	int error;

	memset(t, 0, sizeof(*t));
	if ((error = step__target_tip(s, tip, err)) != 0)
		return error;
	return train_load(s->ctx, tip, t, err);
}

/*
 * The run's head on the target `tip` is sluice's landing only when the store
 * holds the intent to land exactly the commit the target has (written
 * before the compare-and-swap, step_merge.c): a car moved onto the target by
 * a builder, a gate or a person, red, under test or green, is a move sluice
 * did not make, and the target's alarm (target/target.c) holds it.
 */
int step__landed_how(struct step *s, const char *tip, struct target_alert *a,
		     struct sl_err *err)
{
	int rc;

	memset(a, 0, sizeof(*a));
	if (!train_reaches(s->ctx->repo.root, tip, s->run.head_commit))
		return LANDED_NOT;
	if (train_landing_ours(s->ctx, s->run.id, tip))
		return LANDED_OURS;
	if ((rc = target_watch_locked(s->ctx, a, err)) < 0)
		return rc;
	return rc == 1 ? LANDED_HELD : LANDED_ACCEPTED;
}

/*
 * A landing not started yet whose target was frozen since the train's
 * decision (or a run left merging by a killed tick): back to the train,
 * which waits with the freeze's reason (docs/config.md, Freezes). 0: lands.
 */
static int still_frozen(struct step *s, struct store_car *car, struct sl_err *err)
{
	struct train_freeze f;
	int urgent, error;

	if (!train_frozen_for(s->ctx, s->run.work_order_id, sl_now_ms(), &f, &urgent))
		return 0;
	store_car_release(car);
	error = step__move(s, RUN_APPROVED, err, "in the train: frozen before the landing; "
			   "wait: frozen (%s)", f.reason);
	return error ? error : STEP_SENT_BACK;
}

int step__landing_car(struct step *s, struct store_car *car, struct sl_err *err)
{
	struct target_alert a;
	char tip[41];
	int error, how;

	memset(car, 0, sizeof(*car));
	if ((error = step__target_tip(s, tip, err)) != 0)
		return error;
	if ((how = step__landed_how(s, tip, &a, err)) < 0)
		return how;
	if (how == LANDED_HELD) { /* not sluice's landing: back to the train, which holds it */
		error = step__move(s, RUN_APPROVED, err, "in the train: the target '%s' carries "
				   "this run's head, moved there by someone else", s->ctx->cfg->target);
		return error ? error : STEP_SENT_BACK;
	}
	if ((error = store_train_get(s->ctx->st, s->run.id, car, err)) == 0 &&
	    car->status == TRAIN_GREEN && car->commit && car->head && s->run.head_commit &&
	    !strcmp(car->head, s->run.head_commit))
		return how == LANDED_NOT ? still_frozen(s, car, err) : 0;
	if (error && error != SL_ENOTFOUND)
		return error;
	sl_err_clear(err);
	store_car_release(car);
	/* no green car: only a landing on the target already is recorded; nothing merges untested */
	if (how != LANDED_NOT)
		return 0;
	error = step__move(s, RUN_APPROVED, err, "in the train: no tested car to land; the train "
			   "builds and tests it again");
	return error ? error : STEP_SENT_BACK;
}

/* train.json into the run folder (train_landed()). */
static int write_record(void *arg, json_t *j, struct sl_err *err)
{
	return step__write_json(arg, "train.json", j, err);
}

/* The cars behind a landing told their new places (best effort). */
static void retell_landed(struct step *s)
{
	struct train t;
	struct sl_err e = SL_ERR_INIT;
	struct train_ops ops;
	struct train_run tr;

	step__train_ops(s, &ops, &tr);
	if (step__train_load(s, &t, &e) == 0)
		train_retell(&tr, &ops, &t, s->run.id);
	train_release(&t);
}

/*
 * train.json of a landing (the repository lock is held: merge_locked),
 * always from the store's car, never from a file in the run folder, which a
 * builder or gate can write: a landing sluice did not test (a person merged
 * the run by hand, the target moved onto an untested car) gets a record
 * that says so, and audit fails on it. The car's row stays until the run is
 * merged (reconciliation and the next plan take it out): a landing found
 * after a crash is recorded again from it. Its ref goes now.
 */
int step__train_landed(struct step *s, const struct merge_commit_result *mr, struct sl_err *err)
{
	int error = train_landed(s->ctx, s->run.id, mr, write_record, s, err);

	if (!error)
		retell_landed(s);
	return error;
}
