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
#define RIVALS_MAX 64


/* Where the run's car stands in the line (cars red or in conflict are out of it). */
struct where {
	struct store_car *me;
	const struct store_car *ahead; /* the car right ahead in the line, or NULL */
	int pos;                       /* 1-based place in the line; 0: out of it */
	int total;                     /* cars in the line */
	int live_ahead;                /* a live process carries a car ahead of it */
};

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

static const struct train_ops *ops_of(struct step *s, struct train_ops *ops, struct train_run *tr)
{
	ops->arg = s;
	ops->lock_repo = ops_lock;
	ops->merge_opts = ops_merge_opts;
	ops->merge_opts_release = ops_merge_release;
	ops->reload = ops_reload;
	tr->ctx = s->ctx;
	tr->run = &s->run;
	tr->run_dir = s->run_dir;
	tr->wt = s->wt;
	return ops;
}

static int load(struct step *s, struct train *t, struct sl_err *err)
{
	char tip[41];
	int error;

	memset(t, 0, sizeof(*t));
	if ((error = step__target_tip(s, tip, err)) != 0)
		return error;
	return train_load(s->ctx, tip, t, err);
}

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
	ops_of(s, &ops, &tr);
	if ((error = runner__lock_repo(s->ctx, &lock, err)) != 0)
		return error;
	if ((error = load(s, t, err)) == 0 && (error = train_plan(&tr, &ops, t, err)) == 0) {
		train_release(t); /* read again: the plan removed, parked and rebuilt cars */
		if ((error = load(s, t, err)) == 0)
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

	ops_of(s, &ops, &tr);
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

/* This process no longer carries the car: the cars behind it stop waiting for it. */
static void let_go(struct step *s)
{
	struct sl_lock lock = SL_LOCK_INIT;
	struct sl_err err = SL_ERR_INIT;
	struct store_car c;
	char owner[64];

	sl_owner_self(owner, sizeof(owner));
	if (runner__lock_repo(s->ctx, &lock, &err) != 0)
		return;
	if (store_train_get(s->ctx->st, s->run.id, &c, &err) == 0) {
		if (c.tester && !strcmp(c.tester, owner) && c.status != TRAIN_TESTING) {
			free(c.tester);
			c.tester = NULL;
			store_train_put(s->ctx->st, &c, &err);
		}
		store_car_release(&c);
	}
	sl_lock_release(&lock);
}

/* 1 when commit `from` is `to` or descends from it (both hex), 0 when not or unknown. */
static int reaches(struct step *s, const char *from, const char *to)
{
	git_repository *repo = NULL;
	git_oid f, t;
	int in = 0;

	if (!from || !to || git_oid_fromstr(&f, from) || git_oid_fromstr(&t, to))
		return 0;
	if (git_repository_open(&repo, s->ctx->repo.root) == 0)
		in = git_oid_equal(&f, &t) || git_graph_descendant_of(repo, &f, &t) == 1;
	git_repository_free(repo);
	return in;
}

/* 1 when the run's head is on the target already (landed before a crash), 0 when not. */
static int head_landed(struct step *s, const char *tip)
{
	return reaches(s, tip, s->run.head_commit);
}

/* Out of the train, under the repository lock. */
static int leave(struct step *s, struct sl_err *err)
{
	struct sl_lock lock = SL_LOCK_INIT;
	int error;

	if ((error = runner__lock_repo(s->ctx, &lock, err)) != 0)
		return error;
	if ((error = store_train_leave(s->ctx->st, s->run.id, err)) == 0)
		error = train_car_ref(s->ctx, s->run.id, NULL, err);
	sl_lock_release(&lock);
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
	json_t *all = json_loads(me->gates_json ? me->gates_json : "[]", 0, NULL), *g;
	const char *failed[32] = { NULL };
	char why[512];
	size_t i, n = 0, len = 0;
	int error;

	why[0] = '\0';
	json_array_foreach(all, i, g)
		if (!json_is_true(json_object_get(g, "passed")) && n + 1 < 32 &&
		    json_string_value(json_object_get(g, "name"))) {
			failed[n++] = json_string_value(json_object_get(g, "name"));
			len += (size_t)snprintf(why + len, len < sizeof(why) ? sizeof(why) - len : 0,
						"%s'%s'", n > 1 ? ", " : "", failed[n - 1]);
		}
	if (len >= sizeof(why))
		why[sizeof(why) - 1] = '\0';
	{
		char reason[768];
		snprintf(reason, sizeof(reason), "the merge gates failed on its own merge on top of "
			 "%.12s, with nothing new there to resolve against: gate %s", me->base,
			 n ? why : "?");
		error = step__retry_or_fail(s, failed, 0, reason, err);
	}
	json_decref(all);
	return error;
}

/* Out of the line on a speculation: parked, to be built again on the tip. */
static int park_me(struct step *s, struct store_car *me, struct sl_err *err)
{
	struct sl_lock lock = SL_LOCK_INIT;
	int error;

	if ((error = runner__lock_repo(s->ctx, &lock, err)) == 0)
		error = train_park(s->ctx, me, err);
	sl_lock_release(&lock);
	return error ? error : STEP_AGAIN;
}

/* Out of the line on the target's real tip: the train is left for the resolution. */
static int leave_for(struct step *s, enum train_action a, const struct store_car *me,
		     struct sl_err *err)
{
	int error;

	if ((error = leave(s, err)) != 0)
		return error;
	if (a == TRAIN_DO_LEAVE_CONFLICT)
		return step__on_conflict(s, me->base, "found by the merge train", err);
	if (a == TRAIN_DO_OWN_RED)
		return own_red(s, me, err);
	return step__on_semantic(s, me->base, me->gates_json, err);
}

/* The train's state as train_decide() reads it (alive: the caller's to free). */
static void decide_state(struct step *s, struct train *t, const struct where *w,
			 struct train_state *st, char *mine, char *ahead, size_t n)
{
	memset(st, 0, sizeof(*st));
	st->cars = t->cars;
	st->n = t->n;
	st->alive = train_testers_alive(t);
	st->tip = t->tip;
	st->me = s->run.id;
	/* a git walk, only where the decision reads it: out of the line, nothing ahead */
	st->head_in_base = !w->pos && !w->ahead && reaches(s, s->run.head_commit, w->me->base);
	st->holds = s->run.head_commit && w->me->head && !strcmp(s->run.head_commit, w->me->head);
	st->target = s->ctx->cfg->target;
	st->train_depth = s->ctx->cfg->merge.train_depth;
	st->my_ahead_name = wo_of(s, w->me->ahead, mine, n);
	st->line_ahead_name = wo_of(s, w->ahead ? w->ahead->run_id : NULL, ahead, n);
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
	char mine[128], ahead[128];

	decide_state(s, t, w, &st, mine, ahead, sizeof(mine));
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
		return park_me(s, w->me, err);
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

/* How the run's head came onto the target (landed_how). */
enum landed {
	LANDED_NOT,      /* it is not on the target */
	LANDED_OURS,     /* sluice's landing of its green car, cut short by a crash */
	LANDED_HELD,     /* someone else put it there: the target's alarm holds every merge */
	LANDED_ACCEPTED, /* someone else put it there, and a person accepted it */
};

/* 1 when the store holds sluice's intent to land the run's green car, and `tip` has it. */
static int landing_ours(struct step *s, const char *tip)
{
	struct store_car c;
	struct sl_err e = SL_ERR_INIT;
	char *run = NULL;
	int ours = 0;

	if (store_train_get(s->ctx->st, s->run.id, &c, &e) != 0)
		return 0;
	ours = c.status == TRAIN_GREEN && c.commit && reaches(s, tip, c.commit) &&
	       store_train_landing_run(s->ctx->st, c.commit, &run, &e) == 0 &&
	       !strcmp(run, s->run.id);
	free(run);
	store_car_release(&c);
	return ours;
}

/*
 * The run's head on the target `tip` is sluice's landing only when the store
 * holds the intent to land exactly the commit the target has (written
 * before the compare-and-swap, step_merge.c): a car moved onto the target by
 * a builder, a gate or a person, red, under test or green, is a move sluice
 * did not make, and the target's alarm (runner/target.c) holds it.
 */
static int landed_how(struct step *s, const char *tip, struct runner_target_alert *a,
		      struct sl_err *err)
{
	int rc;

	memset(a, 0, sizeof(*a));
	if (!head_landed(s, tip))
		return LANDED_NOT;
	if (landing_ours(s, tip))
		return LANDED_OURS;
	if ((rc = runner_target_watch_locked(s->ctx, a, err)) < 0)
		return rc;
	return rc == 1 ? LANDED_HELD : LANDED_ACCEPTED;
}

/* What the run does when its head is on the target (landed_how's `how`); STEP_AGAIN: not there. */
static int on_landed(struct step *s, int how, const struct runner_target_alert *a,
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
	struct runner_target_alert a;
	char tip[41];
	int error;

	if ((error = step__target_tip(s, tip, err)) != 0)
		return error;
	return on_landed(s, landed_how(s, tip, &a, err), &a, err);
}

/* 1 when car c still stands for its run (approved or landing, with the car's head). */
static int car_holds(struct step *s, const struct store_car *c)
{
	struct store_run r;
	struct sl_err e = SL_ERR_INIT;
	int holds;

	if (store_run_get(s->ctx->st, c->run_id, &r, &e) != 0)
		return 0;
	holds = (r.state == RUN_APPROVED || r.state == RUN_MERGING) && r.head_commit && c->head &&
		!strcmp(r.head_commit, c->head);
	store_run_release(&r);
	return holds;
}

/*
 * 1 when run `other` changed one of the files this run changed: *paths
 * (the caller's) are the files both changed. 0 when not, or an error.
 */
static int shares_files(struct step *s, const char *other, sl_strv *paths, struct sl_err *err)
{
	int error;

	if (!strcmp(other, s->run.id))
		return 0;
	if ((error = store_files_common(s->ctx->st, s->run.id, other, paths, err)) != 0)
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
static int met_target(struct step *s, const char *tip, char out[41], struct sl_err *err)
{
	git_repository *repo = NULL;
	git_oid t, h, mb;
	int rc;

	if ((rc = git_oid_fromstr(&t, tip)) || !s->run.head_commit ||
	    (rc = git_oid_fromstr(&h, s->run.head_commit)) ||
	    (rc = git_repository_open(&repo, s->ctx->repo.root)) ||
	    (rc = git_merge_base(&mb, repo, &t, &h))) {
		git_repository_free(repo);
		if (!s->run.head_commit || rc == GIT_ENOTFOUND) {
			sl_err_clear(err);
			snprintf(out, 41, "%s", s->run.base_commit ? s->run.base_commit : tip);
			return 0;
		}
		return sl_err_git(err, rc, "cannot find where run %s met %s", s->run.id, tip);
	}
	git_repository_free(repo);
	git_oid_tostr(out, 41, &mb);
	return 0;
}

/*
 * queue.overlap: fatal. The run that changed a file this run changed first
 * (*rival, the caller's), with the files (*paths): one that landed on the
 * target since this run last met it (met_target), or a car already in the
 * train. *landed
 * says which. 0 with *rival NULL when there is none.
 */
static int first_overlap(struct step *s, char **rival, sl_strv *paths, int *landed,
			 struct sl_err *err)
{
	struct store_car *cars = NULL;
	char tip[41], since[41], **ids = NULL;
	size_t n = 0, i;
	int error, rc = 0;

	*rival = NULL;
	if ((error = step__target_tip(s, tip, err)) != 0 ||
	    (error = met_target(s, tip, since, err)) != 0 ||
	    (error = step__rivals_between(s, tip, since, &ids, err)) != 0)
		return error;
	for (i = 0; ids[i] && rc == 0; i++)
		if ((rc = shares_files(s, ids[i], paths, err)) == 1)
			*rival = strdup(ids[i]);
	*landed = rc == 1;
	if (rc == 0 && (rc = store_train_list(s->ctx->st, s->ctx->target_ref, &cars, &n, err)) == 0)
		for (i = 0; i < n && rc == 0; i++)
			if (car_holds(s, &cars[i]) &&
			    (rc = shares_files(s, cars[i].run_id, paths, err)) == 1)
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
static void some_paths(const char *const *paths, char *buf, size_t n)
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
 * queue.overlap: fatal. A run that changed a file another run changed
 * first fails instead of joining (STEP_STOP). The check and the join hold
 * the repository lock, so that of two runs approved at once one sees the
 * other.
 */
static int join_unless_overlap(struct step *s, struct sl_err *err)
{
	struct sl_lock lock = SL_LOCK_INIT;
	sl_strv paths = NULL;
	char *rival = NULL, names[1024], wo[128];
	int error, joined, landed = 0;

	if ((error = runner__lock_repo(s->ctx, &lock, err)) != 0)
		return error;
	if ((error = first_overlap(s, &rival, &paths, &landed, err)) == 0 && !rival)
		error = store_train_join(s->ctx->st, s->run.id, s->ctx->target_ref,
					 s->run.head_commit, &joined, err);
	sl_lock_release(&lock);
	if (!error && rival) {
		some_paths((const char *const *)paths, names, sizeof(names));
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
	struct runner_target_alert a;
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
		    (error = on_landed(s, landed_how(s, t.tip, &a, err), &a, err)) == STEP_AGAIN)
			error = decide(s, &t, &w, err);
		train_release(&t);
		if (error == STEP_WAIT && (sl_now_ms() > until || runner__let_go_asked(s->ctx, s->run.id)))
			error = STEP_STOP; /* a person's command asked for the run (human.c) */
		else if (error == STEP_WAIT)
			sl_sleep_ms(TRAIN_POLL_MS);
	} while (error == STEP_WAIT || error == STEP_AGAIN);
	if (error == STEP_STOP)
		let_go(s);
	return error;
}


int step__landing_car(struct step *s, struct store_car *car, struct sl_err *err)
{
	struct runner_target_alert a;
	char tip[41];
	int error, how;

	memset(car, 0, sizeof(*car));
	if ((error = step__target_tip(s, tip, err)) != 0)
		return error;
	if ((how = landed_how(s, tip, &a, err)) < 0)
		return how;
	if (how == LANDED_HELD) { /* not sluice's landing: back to the train, which holds it */
		error = step__move(s, RUN_APPROVED, err, "in the train: the target '%s' carries "
				   "this run's head, moved there by someone else", s->ctx->cfg->target);
		return error ? error : STEP_SENT_BACK;
	}
	if ((error = store_train_get(s->ctx->st, s->run.id, car, err)) == 0 &&
	    car->status == TRAIN_GREEN && car->commit && car->head && s->run.head_commit &&
	    !strcmp(car->head, s->run.head_commit))
		return 0;
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

/* The cars behind a landing told their new places (best effort). */
static void retell_landed(struct step *s)
{
	struct train t;
	struct sl_err e = SL_ERR_INIT;
	struct train_ops ops;
	struct train_run tr;

	ops_of(s, &ops, &tr);
	if (load(s, &t, &e) == 0)
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
	struct store_car c;
	struct sl_err e2 = SL_ERR_INIT;
	json_t *j = NULL;
	int error;

	if ((error = store_train_get(s->ctx->st, s->run.id, &c, err)) == SL_ENOTFOUND) {
		sl_err_clear(err);
		memset(&c, 0, sizeof(c));
		c.status = TRAIN_WAITING;
		error = 0;
	} else if (error) {
		return error;
	}
	if (!(j = train_record_json(&c, mr)))
		error = sl_err_set(err, SL_ERROR, "cannot build train.json");
	else
		error = step__write_json(s, "train.json", j, err);
	json_decref(j);
	if (!error && c.run_id && train_car_ref(s->ctx, s->run.id, NULL, &e2) != 0)
		sl_log(SL_LOG_WARN, "run %s landed; its train ref stays: %s", s->run.id, e2.msg);
	store_car_release(&c);
	if (!error)
		retell_landed(s);
	return error;
}

/*
 * The runs whose landings `tip` holds and `base` does not (the Sluice-Run
 * trailers on tip's first-parent line down to base), newest first: a
 * semantic conflict's rivals. *ids (NULL-terminated) is the caller's.
 */
int step__rivals_between(struct step *s, const char *tip, const char *base, char ***ids,
			 struct sl_err *err)
{
	struct merge_landings_opts o = { .tip = tip, .base = base, .max_found = RIVALS_MAX,
					 .merges_only = 1, .skip_run = s->run.id };
	struct merge_run_landing *v = NULL;
	char **out;
	size_t n = 0, i;
	int error;

	*ids = NULL;
	if ((error = merge_landings_between(s->ctx->repo.root, &o, &v, &n, err)) != 0)
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
