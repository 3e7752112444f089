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
static int test_car(struct step *s, const struct train_state *st, const struct train_where *w,
		    struct sl_err *err)
{
	struct build_gate_results gr = BUILD_GATE_RESULTS_INIT;
	struct train_ops ops;
	struct train_run tr;
	struct step_revert_cfg rc;
	struct train_lane_cfg lc;
	char owner[64], names[256], why[1024], *commit = strdup(st->cars[w->me].commit);
	int error, gates, revert = step__revert_train_cfg(s, &rc);
	int lane = train_lane_cfg(s->ctx, st->cars[w->me].lanes, &lc);

	step__train_ops(s, &ops, &tr);
	sl_owner_self(owner, sizeof(owner));
	if (!commit || revert < 0 || lane < 0) {
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto done;
	}
	if (revert) /* a revert's car runs the watch gate it answers too (docs/watch.md) */
		tr.ctx = &rc.ctx;
	else if (lane) /* a car of lanes runs their gates (docs/config.md, "Lanes") */
		tr.ctx = &lc.ctx;
	gates = train_has_merge_gates(tr.ctx->cfg);
	/*
	 * What is tested is the approved head merged: whatever someone changed
	 * in the worktree since the review is committed first, and the run goes
	 * through gates and review again with it (nothing is lost).
	 */
	if (gates && (error = step__approval_holds(s, err)) != 0) {
		error = error == STEP_SENT_BACK ? STEP_NEXT : error;
		goto done;
	}
	if ((error = train_claim_test(&tr, &ops, commit, owner, err)) != 0)
		goto out; /* 1: rebuilt meanwhile, decide again */
	if (!gates) { /* no merge gate: the train only serializes the landings */
		error = train_record_result(&tr, &ops, commit, owner, &gr, err);
		goto out;
	}
	train_gate_names(tr.ctx->cfg, names, sizeof(names));
	if (lane && !revert) /* "web-test; lane web" */
		train_lane_words(s->ctx->cfg, st->cars[w->me].lanes, why, 128),
		snprintf(names + strlen(names), sizeof(names) - strlen(names), "; lane %.128s", why);
	train_testing_reason(why, sizeof(why), w->pos, w->total, st->line_ahead_name, names);
	if ((error = say(s, err, "%s", why)) != 0 ||
	    (error = train_run_gates(&tr, commit, st->cars[w->me].tree, step__remote(s),
					     wt_again, s, &gr, err)) != 0)
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
	error = error < 0 ? error : STEP_AGAIN;
done:
	build_gate_results_release(&gr);
	step__revert_cfg_release(&rc);
	train_lane_cfg_release(&lc);
	free(commit);
	return error;
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
static int decide(struct step *s, struct train *t, struct train_names *nm, struct sl_err *err)
{
	struct train_state st;
	struct train_decision d;
	struct train_ops ops;
	struct train_run tr;
	struct train_where w;
	int error;

	step__train_ops(s, &ops, &tr);
	if (train_state_of(&tr, t, nm, &st, &w) != 0)
		return sl_err_set(err, SL_ENOTFOUND, "run '%s' left the merge train", s->run.id);
	train_decide(&st, &d);
	if (d.action == TRAIN_DO_LAND)
		error = step__move(s, RUN_MERGING, err, "%s", d.why);
	else if (d.action == TRAIN_DO_TEST)
		error = test_car(s, &st, &w, err);
	else if (d.action == TRAIN_DO_WAIT || d.action == TRAIN_DO_STOP)
		error = say(s, err, "%s", d.why) ?: d.action == TRAIN_DO_WAIT ? STEP_WAIT : STEP_STOP;
	else if (d.action == TRAIN_DO_PARK)
		error = train_park_mine(&tr, &ops, &t->cars[w.me], err) ?: STEP_AGAIN;
	else {
		if (st.batch > 1 && t->cars[w.me].status == TRAIN_RED) /* docs/config.md, "Batches" */
			(void)say(s, err, "in the train: a red batch bisected: green up to %s, red with "
				  "this run's merge %.12s; it leaves", st.my_ahead_name,
				  t->cars[w.me].commit);
		error = leave_for(s, d.action, &t->cars[w.me], err);
	}
	free((int *)st.alive);
	return error;
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
	int detached = 0;

	if (train_tester_gone(s->ctx, s->run.id))
		runner__end_leftovers(s->ctx, &s->run);
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
	char why[1024];

	if (how == LANDED_OURS)
		return step__move(s, RUN_MERGING, err, "landed before a crash; recording it");
	if (how == LANDED_ACCEPTED)
		return step__move(s, RUN_MERGING, err, "on '%s' by a move sluice did not make, "
				  "accepted; recording it", t);
	if (how != LANDED_HELD)
		return how < 0 ? how : STEP_AGAIN;
	train_held_reason(why, sizeof(why), t, a->commit, a->run);
	return say(s, err, "%s", why) ?: STEP_STOP;
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

/* Join the train (train_join()); under queue.overlap: fatal a run that overlaps fails. */
static int join_train(struct step *s, struct sl_err *err)
{
	struct train_ops ops;
	struct train_run tr;
	char why[1024];
	int error;

	if ((error = train_join(&tr, step__train_ops(s, &ops, &tr), why, sizeof(why), err)) == 1)
		return step__fail(s, RUN_FAILED, err, "%s", why);
	return error;
}

/* approved: join the merge train, and carry the run's car as far as it goes now. */
int step_train(struct step *s, struct sl_err *err)
{
	int64_t until = sl_now_ms() + TRAIN_WAIT_MAX_MS;
	struct target_alert a;
	struct train_names names = { .ctx = s->ctx };
	struct train_ops ops;
	struct train_run tr;
	struct train t;
	int error;

	if ((error = restore_branch(s, err)) != 0 || (error = step__approval_holds(s, err)) != 0)
		return error == STEP_SENT_BACK ? STEP_NEXT : error;
	if ((error = landed_before(s, err)) != STEP_AGAIN)
		return error;
	if ((error = join_train(s, err)) != 0)
		return error;
	step__train_ops(s, &ops, &tr);
	do {
		if ((error = train_planned(&tr, &ops, &t, err)) == 0 &&
		    (error = on_landed(s, step__landed_how(s, t.tip, &a, err), &a, err)) == STEP_AGAIN)
			error = decide(s, &t, &names, err);
		train_release(&t);
		if (error == STEP_WAIT && (sl_now_ms() > until || runner__let_go_asked(s->ctx, s->run.id)))
			error = STEP_STOP; /* a person's command asked for the run (human.c) */
		else if (error == STEP_WAIT)
			sl_sleep_ms(TRAIN_POLL_MS);
	} while (error == STEP_WAIT || error == STEP_AGAIN);
	if (error == STEP_STOP)
		train_let_go(&tr, &ops);
	return error;
}

/* The runs landed on tip's first-parent line since base (train_rivals_between()). */
int step__rivals_between(struct step *s, const char *tip, const char *base, char ***ids,
			 struct sl_err *err)
{
	return train_rivals_between(s->ctx, s->run.id, tip, base, ids, err);
}
