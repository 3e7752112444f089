/*
 * The approved state: the merge train (docs/design.md, The merge train). An approved
 * run is a car of its target's train: its merge commit is made on top of
 * the car ahead (car 1: on the target's tip), kept under
 * refs/sluice/train/<run-id>, checked out detached in the run's worktree,
 * and merge.gates run there, up to merge.train_depth cars at once. Only
 * the front car lands, only when it is green and the target is still the
 * base it was tested on; it lands as exactly the tested commit
 * (step_merge, opts.commit). Any worker plans the whole train under the
 * repository lock; each car is tested by its own run's worker.
 *
 * A car that fails (red) or conflicts with the car ahead leaves the line;
 * the cars behind are rebuilt on the last good car. Once no car ahead of it
 * is left in the line, a failure on the target's real tip goes through
 * resolution (semantic or textual); a failure on a speculation that did not
 * land as tested is simply built and tested again on the tip.
 */
#include "runner/runner_int.h"
#include "store/store.h"
#include "worktree/worktree.h"
#include "builder/builder.h"
#include "artifact/artifact.h"
#include "merge/merge.h"
#include "train/train.h"
#include "core/fs.h"
#include "core/fault.h"
#include "core/lock.h"
#include "core/log.h"
#include "core/time.h"

#include <git2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TRAIN_POLL_MS 100
#define TRAIN_WAIT_MAX_MS ((int64_t)30 * 60 * 1000)

/* Where the run's car stands in the line (cars red or in conflict are out of it). */
struct where {
	struct store_car *me;
	const struct store_car *ahead; /* the car right ahead in the line, or NULL */
	int pos;                       /* 1-based place in the line; 0: out of it */
	int total;                     /* cars in the line */
	int live_ahead;                /* a live process carries a car ahead of it */
};

/* The work order of run `run_id` (into buf), for a reason a person reads. */
static const char *wo_of(struct step *s, const char *run_id, char *buf, size_t n)
{
	return train_wo_of(s->ctx, run_id, buf, n);
}

static void locate(struct train *t, const char *run_id, struct where *w)
{
	struct train_where tw;
	int *alive = train_testers_alive(t);

	train_locate(t->cars, t->n, alive, t->tip, run_id, &tw);
	free(alive);
	memset(w, 0, sizeof(*w));
	w->me = tw.me < t->n ? &t->cars[tw.me] : NULL;
	w->ahead = tw.ahead < t->n ? &t->cars[tw.ahead] : NULL;
	w->pos = tw.pos;
	w->total = tw.total;
	w->live_ahead = tw.live_ahead;
}

/* Under the repository lock: the train, planned, and where the run's car is in it. */
static int train_read(struct step *s, struct train *t, struct where *w, struct sl_err *err)
{
	struct sl_lock lock = SL_LOCK_INIT;
	struct train_ops ops;
	struct train_run tr;
	int error;

	memset(t, 0, sizeof(*t));
	step__train_ops(s, &ops, &tr);
	if ((error = runner__lock_repo(s->ctx, &lock, err)) != 0)
		return error;
	if ((error = step__train_load(s, t, err)) == 0 && (error = train_plan(&tr, &ops, t, err)) == 0) {
		train_release(t); /* read again: the plan removed, parked and rebuilt cars */
		if ((error = step__train_load(s, t, err)) == 0)
			train_retell(&tr, &ops, t, NULL);
	}
	sl_lock_release(&lock);
	if (error)
		return error;
	locate(t, s->run.id, w);
	if (!w->me)
		return sl_err_set(err, SL_ENOTFOUND, "run '%s' left the merge train", s->run.id);
	return 0;
}

/* The run's reason, as an event when it changed (approved -> approved). */
static int say(struct step *s, struct sl_err *err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int say(struct step *s, struct sl_err *err, const char *fmt, ...)
{
	char reason[1024];
	va_list ap;
	int error;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	if (s->run.reason && !strcmp(s->run.reason, reason))
		return 0;
	error = step__move(s, s->run.state, err, "%s", reason);
	return error == STEP_NEXT ? 0 : error;
}

/* The run's worktree made again (train_run_gates()). */
static int wt_again(void *arg, struct sl_err *err)
{
	return step__worktree_again(arg, err);
}

/* Test the run's car (pending, or testing by a process that is gone). */
static int test_car(struct step *s, const struct where *w, struct sl_err *err)
{
	struct build_gate_results gr = BUILD_GATE_RESULTS_INIT;
	struct train_ops ops;
	struct train_run tr;
	char owner[64], names[256], ahead[128], *commit = strdup(w->me->commit);
	int error, gates = train_has_merge_gates(s->ctx->cfg);

	step__train_ops(s, &ops, &tr);
	sl_owner_self(owner, sizeof(owner));
	if (!commit)
		return sl_err_set(err, SL_ERROR, "out of memory");
	/*
	 * What is tested is the approved head merged: whatever someone changed
	 * in the worktree since the review is committed first, and the run goes
	 * through gates and review again with it (nothing is lost).
	 */
	if (gates && (error = step__approval_holds(s, err)) != 0) {
		free(commit);
		return error == STEP_SENT_BACK ? STEP_NEXT : error;
	}
	if ((error = train_claim_test(&tr, &ops, commit, owner, err)) != 0)
		goto out; /* 1: rebuilt meanwhile, decide again */
	if (!gates) { /* no merge gate: the train only serializes the landings */
		error = train_record_result(&tr, &ops, commit, owner, &gr, err);
		goto out;
	}
	train_gate_names(s->ctx->cfg, names, sizeof(names));
	if ((error = say(s, err, "in the train: car %d of %d, testing on top of %s (gates: %s)",
			 w->pos, w->total, w->ahead ? wo_of(s, w->ahead->run_id, ahead, sizeof(ahead))
						    : s->ctx->cfg->target, names)) != 0 ||
	    (error = train_run_gates(&tr, commit, step__remote(s), wt_again, s, &gr, err)) != 0)
		goto out;
	sl_fault("train.after_gates");
	/* the gates can write in the run folder: what sluice wrote there, from git again */
	step__sanitize_run_dir(s);
	if ((error = step__record_diff(s, s->run.head_commit, err)) == 0)
		error = train_record_result(&tr, &ops, commit, owner, &gr, err);
	if (!error)
		sl_log(SL_LOG_INFO, "run %s: merge gates %s on %.12s in %.1f s", s->run.id,
		       gr.all_passed ? "green" : "red", commit, train_gates_ms(&gr) / 1000.0);
out:
	build_gate_results_release(&gr);
	free(commit);
	return error < 0 ? error : STEP_AGAIN;
}

/*
 * Red on its own merge, with nothing new on the target: no rival's work and
 * no person's to resolve against (a merge of the target would be "already
 * up to date"), so the run's own change failed the merge gates (or a gate
 * is flaky): a failed attempt under the retry rules, its failed gates named.
 */
static int own_red(struct step *s, const struct store_car *me, struct sl_err *err)
{
	const char *failed[32] = { NULL };
	char reason[768];
	json_t *all = train_own_red(me, failed, 32, reason, sizeof(reason));
	int error = step__retry_or_fail(s, failed, 0, reason, err);

	json_decref(all);
	return error;
}

/* Out of the line on the target's real tip: the train is left for the resolution. */
static int leave_for(struct step *s, enum train_action a, const struct store_car *me,
		     struct sl_err *err)
{
	struct train_ops ops;
	struct train_run tr;
	int error;

	step__train_ops(s, &ops, &tr);
	if ((error = train_leave(&tr, &ops, err)) != 0)
		return error;
	if (a == TRAIN_DO_LEAVE_CONFLICT)
		return step__on_conflict(s, me->base, "found by the merge train", err);
	if (a == TRAIN_DO_OWN_RED)
		return own_red(s, me, err);
	return step__on_semantic(s, me->base, me->gates_json, err);
}

/*
 * What the run's car does now (train_decide(), train/train.h), applied:
 * STEP_NEXT (the run moved: merging to land, or resolving), STEP_WAIT,
 * STEP_AGAIN, STEP_STOP (a later tick goes on), or an error.
 */
static int decide(struct step *s, struct train *t, const struct where *w, struct sl_err *err)
{
	struct train_state st;
	struct train_decision d;
	struct train_ops ops;
	struct train_run tr;
	char names[2][128];

	step__train_ops(s, &ops, &tr);
	train_state_of(&tr, t, w->me, w->ahead, w->pos, &st, names);
	train_decide(&st, &d);
	free((int *)st.alive);
	switch (d.action) {
	case TRAIN_DO_LAND:
		return step__move(s, RUN_MERGING, err, "%s", d.why);
	case TRAIN_DO_TEST:
		return test_car(s, w, err);
	case TRAIN_DO_WAIT:
		return say(s, err, "%s", d.why) ?: STEP_WAIT;
	case TRAIN_DO_STOP:
		return say(s, err, "%s", d.why) ?: STEP_STOP;
	case TRAIN_DO_PARK:
		return train_park_mine(&tr, &ops, w->me, err) ?: STEP_AGAIN;
	default:
		return leave_for(s, d.action, w->me, err);
	}
}

/*
 * A worker killed while the merge gates ran left their processes, git's
 * locks in the worktree (its checkout of the car) and the worktree
 * detached at the car: the gates ended, the locks removed (the run's lock
 * is this process's: nothing else works there), back to the branch.
 */
static int restore_branch(struct step *s, struct sl_err *err)
{
	git_repository *repo = NULL;
	struct store_car c;
	struct sl_err e2 = SL_ERR_INIT;
	int detached = 0;

	if (store_train_get(s->ctx->st, s->run.id, &c, &e2) == 0) {
		if (c.status == TRAIN_TESTING && !(c.tester && sl_owner_alive(c.tester)))
			runner__end_leftovers(s->ctx, &s->run);
		store_car_release(&c);
	}
	train_checkout_drop(s->ctx, s->run.id); /* the gates' checkout of a killed sluice */
	if (!sl_path_exists(s->wt))
		return 0;
	if (git_repository_open(&repo, s->wt) == 0)
		detached = git_repository_head_detached(repo) == 1;
	git_repository_free(repo);
	return detached ? worktree_checkout(s->wt, NULL, s->run.branch_name, step__excluded(s), err)
			: 0;
}

/* What the run does when its head is on the target (landed_how's `how`); STEP_AGAIN: not there. */
static int on_landed(struct step *s, int how, const struct target_alert *a,
		     struct sl_err *err)
{
	const char *t = s->ctx->cfg->target;

	if (how == LANDED_OURS)
		return step__move(s, RUN_MERGING, err, "landed before a crash; recording it");
	if (how == LANDED_ACCEPTED)
		return step__move(s, RUN_MERGING, err, "on '%s' by a move sluice did not make, "
				  "accepted; recording it", t);
	if (how != LANDED_HELD)
		return how < 0 ? how : STEP_AGAIN;
	return say(s, err, "merge held: the target '%s' carries commit %.12s from run %s that "
		   "sluice did not land (unreviewed); reset '%s' to before it or run 'sluice "
		   "accept-target %s'", t, a->commit, a->run[0] ? a->run : "(unknown)", t,
		   a->commit) ?: STEP_STOP;
}

/* Where the run's head is, on the target's tip now: on_landed's answer. */
static int landed_before(struct step *s, struct sl_err *err)
{
	struct target_alert a;
	char tip[41];
	int error;

	if ((error = step__target_tip(s, tip, err)) != 0)
		return error;
	return on_landed(s, step__landed_how(s, tip, &a, err), &a, err);
}

/*
 * queue.overlap: fatal. A run that changed a file another run changed
 * first fails instead of joining (STEP_STOP). The check and the join hold
 * the repository lock, so that of two runs approved at once one sees the
 * other.
 */
static int join_unless_overlap(struct step *s, struct sl_err *err)
{
	struct sl_lock lock = SL_LOCK_INIT;
	sl_strv paths = NULL;
	char *rival = NULL, names[1024], wo[128], tip[41];
	int error, joined, landed = 0;

	if ((error = runner__lock_repo(s->ctx, &lock, err)) != 0)
		return error;
	if ((error = step__target_tip(s, tip, err)) == 0 &&
	    (error = train_first_overlap(s->ctx, &s->run, tip, &rival, &paths, &landed, err)) == 0 &&
	    !rival)
		error = store_train_join(s->ctx->st, s->run.id, s->ctx->target_ref,
					 s->run.head_commit, &joined, err);
	sl_lock_release(&lock);
	if (!error && rival) {
		train_some_paths((const char *const *)paths, names, sizeof(names));
		error = step__fail(s, RUN_FAILED, err, "queue.overlap is fatal: %s also changed by "
				   "%s (run %s), which %s; nothing was merged",
				   names, wo_of(s, rival, wo, sizeof(wo)), rival,
				   landed ? "landed first" : "is ahead in the merge train");
	}
	free(rival);
	sl_strv_free(paths);
	return error;
}

/* Join the train (a car of this head already there stays as it is). */
static int join_train(struct step *s, struct sl_err *err)
{
	struct store_car c;
	int error, joined, same = 0;

	if (s->ctx->cfg->queue.overlap_fatal) {
		if ((error = store_train_get(s->ctx->st, s->run.id, &c, err)) == 0) {
			same = c.head && s->run.head_commit && !strcmp(c.head, s->run.head_commit);
			store_car_release(&c);
		} else if (error != SL_ENOTFOUND) {
			return error;
		}
		sl_err_clear(err);
		if (!same)
			return join_unless_overlap(s, err);
	}
	return store_train_join(s->ctx->st, s->run.id, s->ctx->target_ref, s->run.head_commit,
				&joined, err);
}

/* approved: join the merge train, and carry the run's car as far as it goes now. */
int step_train(struct step *s, struct sl_err *err)
{
	int64_t until = sl_now_ms() + TRAIN_WAIT_MAX_MS;
	struct target_alert a;
	struct train_ops ops;
	struct train_run tr;
	struct train t;
	struct where w;
	int error;

	if ((error = restore_branch(s, err)) != 0 || (error = step__approval_holds(s, err)) != 0)
		return error == STEP_SENT_BACK ? STEP_NEXT : error;
	if ((error = landed_before(s, err)) != STEP_AGAIN)
		return error;
	if ((error = join_train(s, err)) != 0)
		return error;
	do {
		if ((error = train_read(s, &t, &w, err)) == 0 &&
		    (error = on_landed(s, step__landed_how(s, t.tip, &a, err), &a, err)) == STEP_AGAIN)
			error = decide(s, &t, &w, err);
		train_release(&t);
		if (error == STEP_WAIT && (sl_now_ms() > until || runner__let_go_asked(s->ctx, s->run.id)))
			error = STEP_STOP; /* a person's command asked for the run (human.c) */
		else if (error == STEP_WAIT)
			sl_sleep_ms(TRAIN_POLL_MS);
	} while (error == STEP_WAIT || error == STEP_AGAIN);
	if (error == STEP_STOP)
		train_let_go(&tr, step__train_ops(s, &ops, &tr));
	return error;
}

/* The runs landed on tip's first-parent line since base (train_rivals_between()). */
int step__rivals_between(struct step *s, const char *tip, const char *base, char ***ids,
			 struct sl_err *err)
{
	return train_rivals_between(s->ctx, s->run.id, tip, base, ids, err);
}
