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

struct train {
	struct store_car *cars;
	size_t n;
	char tip[41];
};

/* Where the run's car stands in the line (cars red or in conflict are out of it). */
struct where {
	struct store_car *me;
	const struct store_car *ahead; /* the car right ahead in the line, or NULL */
	int pos;                       /* 1-based place in the line; 0: out of it */
	int total;                     /* cars in the line */
	int live_ahead;                /* a live process carries a car ahead of it */
};

static const char *wo_of(struct step *s, const char *run_id, char *buf, size_t n);

static void train_release(struct train *t)
{
	store_cars_free(t->cars, t->n);
	memset(t, 0, sizeof(*t));
}

/* The car is in the line (train/train.h, train_in_line()). */
static int in_line(const struct train *t, const struct store_car *c)
{
	return train_in_line(t->cars, t->n, t->tip, c);
}

static int set_str(char **dst, const char *src)
{
	char *n = src ? strdup(src) : NULL;

	if (src && !n)
		return -1;
	free(*dst);
	*dst = n;
	return 0;
}

static int train_load(struct step *s, struct train *t, struct sl_err *err)
{
	int error;

	memset(t, 0, sizeof(*t));
	if ((error = step__target_tip(s, t->tip, err)) != 0)
		return error;
	return store_train_list(s->ctx->st, s->ctx->target_ref, &t->cars, &t->n, err);
}

/* Back to waiting: no commit, no result (beyond merge.train_depth, or to be built on the tip). */
static int park(struct step *s, struct store_car *c, struct sl_err *err)
{
	int error;

	c->status = TRAIN_WAITING;
	set_str(&c->base, NULL);
	set_str(&c->commit, NULL);
	set_str(&c->tree, NULL);
	set_str(&c->ahead, NULL);
	set_str(&c->tester, NULL);
	set_str(&c->gates_json, NULL);
	c->started_ms = c->tested_ms = 0;
	if ((error = store_train_put(s->ctx->st, c, err)) != 0)
		return error;
	return train_car_ref(s->ctx, c->run_id, NULL, err);
}

/*
 * A car built again (the target moved, a car ahead left or changed): its
 * run's reason says so, as an event, whichever worker planned it. Best
 * effort: the car's own worker says what it does next anyway.
 */
static void say_rebuilt(struct step *s, const struct store_car *c)
{
	struct sl_err err = SL_ERR_INIT;
	char why[512], wo[128];

	if (c->ahead)
		snprintf(why, sizeof(why), "in the train: rebuilt on top of %s",
			 wo_of(s, c->ahead, wo, sizeof(wo)));
	else
		snprintf(why, sizeof(why), "in the train: rebuilt on the new tip of %s",
			 s->ctx->cfg->target);
	if (store_run_transition(s->ctx->st, c->run_id, RUN_APPROVED, RUN_APPROVED, why, 0,
				 &err) != 0)
		sl_log(SL_LOG_INFO, "run %s: %s (%s)", c->run_id, why, err.msg);
	if (!strcmp(c->run_id, s->run.id))
		step__reload(s, &err);
}

/* Record the merge result of car c on `onto`: pending with its commit, or in conflict. */
static int record_build(struct step *s, struct store_car *c, const char *onto, const char *ahead,
			const struct merge_commit_result *mr, int conflict, struct sl_err *err)
{
	char commit[41], tree[41];
	int error, rebuilt = c->commit != NULL;

	git_oid_tostr(commit, sizeof(commit), &mr->commit);
	git_oid_tostr(tree, sizeof(tree), &mr->tree);
	c->status = conflict ? TRAIN_CONFLICT : TRAIN_PENDING;
	if (set_str(&c->base, onto) || set_str(&c->ahead, ahead) ||
	    set_str(&c->commit, conflict ? NULL : commit) ||
	    set_str(&c->tree, conflict ? NULL : tree) || set_str(&c->tester, NULL) ||
	    set_str(&c->gates_json, NULL))
		return sl_err_set(err, SL_ERROR, "out of memory");
	c->started_ms = c->tested_ms = 0;
	if ((error = store_train_put(s->ctx->st, c, err)) != 0 ||
	    (error = train_car_ref(s->ctx, c->run_id, c->commit, err)) != 0)
		return error;
	if (rebuilt && !conflict)
		say_rebuilt(s, c);
	sl_fault(conflict ? NULL : "train.after_car");
	return 0;
}

/*
 * Make car c's merge commit on `onto` (the car ahead's commit or the tip);
 * r is the car's run. 0 built (or in conflict), 1 its head is in `onto`
 * already (it landed; its worker records that), or an error.
 */
static int build_car(struct step *s, struct store_run *r, struct store_car *c, const char *onto,
		     const char *ahead, struct sl_err *err)
{
	struct merge_commit_opts o = MERGE_COMMIT_OPTS_INIT;
	struct merge_commit_result mr = MERGE_COMMIT_RESULT_INIT;
	struct step_merge_msg mm = STEP_MERGE_MSG_INIT;
	struct step other;
	int error, rc;

	memset(&other, 0, sizeof(other));
	other.ctx = s->ctx;
	other.run = *r; /* borrowed: never released here */
	if ((error = step__merge_msg(&other, &mm, &o, err)) != 0)
		goto out;
	o.head = c->head;
	rc = merge_build(s->ctx->repo.root, &o, onto, &mr, err);
	if (rc == SL_EEXISTS) {
		sl_err_clear(err);
		error = 1;
	} else if (rc == 0 || (rc == SL_ECONFLICT && mr.status == MERGE_CONFLICT)) {
		sl_err_clear(err);
		error = record_build(s, c, onto, ahead, &mr, rc != 0, err);
	} else {
		error = rc;
	}
out:
	merge_commit_result_release(&mr);
	step__merge_msg_release(&mm);
	return error;
}

/*
 * The run row of car c (*r, the caller's), and 1 when the car belongs in
 * the train: its run is approved or landing, with the car's head. A car of
 * a run that went elsewhere (abandoned, sent back, merged) is taken out.
 */
static int car_run(struct step *s, const struct store_car *c, struct store_run *r,
		   struct sl_err *err)
{
	int error, keep;

	memset(r, 0, sizeof(*r));
	if ((error = store_run_get(s->ctx->st, c->run_id, r, err)) != 0 && error != SL_ENOTFOUND)
		return error;
	sl_err_clear(err);
	keep = !error && (r->state == RUN_APPROVED || r->state == RUN_MERGING) && r->head_commit &&
	       c->head && !strcmp(r->head_commit, c->head);
	if (keep)
		return 1;
	if ((error = store_train_leave(s->ctx->st, c->run_id, err)) != 0 ||
	    (error = train_car_ref(s->ctx, c->run_id, NULL, err)) != 0)
		return error;
	return 0;
}

/* One car of the plan: 1 when it extends the line (*onto is its commit now), 0 when not. */
static int plan_car(struct step *s, struct store_car *c, int pos, const char **onto,
		    const char **ahead, struct sl_err *err)
{
	struct store_run r;
	int error;

	if ((error = car_run(s, c, &r, err)) <= 0) {
		store_run_release(&r);
		return error < 0 ? error : 0;
	}
	error = 0;
	if (c->status == TRAIN_CONFLICT && c->base && !strcmp(c->base, *onto)) {
		store_run_release(&r); /* waits in its place for the car ahead: built again later */
		return 0;
	}
	if (pos > s->ctx->cfg->merge.train_depth)
		error = c->status == TRAIN_WAITING ? 0 : park(s, c, err);
	else if (c->status == TRAIN_WAITING || !c->commit || !c->base || strcmp(c->base, *onto))
		error = build_car(s, &r, c, *onto, *ahead, err);
	store_run_release(&r);
	if (error)
		return error < 0 ? error : 0;
	if (pos > s->ctx->cfg->merge.train_depth || c->status == TRAIN_CONFLICT)
		return pos > s->ctx->cfg->merge.train_depth; /* waits: still in the line */
	*onto = c->commit;
	*ahead = c->run_id;
	return 1;
}

/* Bring every car in the line onto its place: hold the repository lock. */
static int plan(struct step *s, struct train *t, struct sl_err *err)
{
	const char *onto = t->tip, *ahead = NULL;
	size_t i;
	int pos = 0, rc;

	for (i = 0; i < t->n; i++) {
		if (!in_line(t, &t->cars[i]))
			continue;
		if ((rc = plan_car(s, &t->cars[i], pos + 1, &onto, &ahead, err)) < 0)
			return rc;
		pos += rc;
	}
	return 0;
}

/* Whether a live process carries each car (its tester): *alive, the caller's to free. */
static int *testers_alive(const struct train *t)
{
	int *alive = calloc(t->n ? t->n : 1, sizeof(*alive));
	size_t i;

	for (i = 0; alive && i < t->n; i++)
		alive[i] = t->cars[i].tester && sl_owner_alive(t->cars[i].tester);
	return alive;
}

static void locate(struct train *t, const char *run_id, struct where *w)
{
	struct train_where tw;
	int *alive = testers_alive(t);

	train_locate(t->cars, t->n, alive, t->tip, run_id, &tw);
	free(alive);
	memset(w, 0, sizeof(*w));
	w->me = tw.me < t->n ? &t->cars[tw.me] : NULL;
	w->ahead = tw.ahead < t->n ? &t->cars[tw.ahead] : NULL;
	w->pos = tw.pos;
	w->total = tw.total;
	w->live_ahead = tw.live_ahead;
}

/* car c's reason's tail (train_car_tail()), with the work order of the car it is built on */
static void car_tail(struct step *s, const struct store_car *c, int pos, char *buf, size_t n)
{
	char wo[128];

	train_car_tail(c, pos, s->ctx->cfg->merge.train_depth, wo_of(s, c->ahead, wo, sizeof(wo)),
		       buf, n);
}

/*
 * Car c's run is told its place (pos of total) again when its reason
 * names another: a worker that stopped waiting left it as it was while
 * cars joined, landed or left (best effort, as an event).
 */
static void retell_car(struct step *s, const struct store_car *c, int pos, int total)
{
	static const char head[] = "in the train: car ";
	struct store_run r;
	struct sl_err err = SL_ERR_INIT;
	char why[1024], tail[512];
	int k = 0, m = 0, at = 0;

	if (store_run_get(s->ctx->st, c->run_id, &r, &err) != 0)
		return;
	car_tail(s, c, pos, tail, sizeof(tail));
	if (r.state == RUN_APPROVED && r.reason && !strncmp(r.reason, head, sizeof(head) - 1) &&
	    sscanf(r.reason + sizeof(head) - 1, "%d of %d%n", &k, &m, &at) == 2 && at > 0) {
		snprintf(why, sizeof(why), "%s%d of %d%s", head, pos, total,
			 tail[0] ? tail : r.reason + sizeof(head) - 1 + at);
		if (strcmp(why, r.reason) &&
		    store_run_transition(s->ctx->st, c->run_id, RUN_APPROVED, RUN_APPROVED, why, 0,
					 &err) != 0)
			sl_log(SL_LOG_INFO, "run %s: %s (%s)", c->run_id, why, err.msg);
		if (!strcmp(c->run_id, s->run.id))
			step__reload(s, &err);
	}
	store_run_release(&r);
}

/* Every car in the line (but `skip`'s, landing now) told its place (retell_car). */
static void retell(struct step *s, const struct train *t, const char *skip)
{
	size_t i;
	int pos = 0, total = 0;

	for (i = 0; i < t->n; i++)
		total += in_line(t, &t->cars[i]) && (!skip || strcmp(t->cars[i].run_id, skip));
	for (i = 0; i < t->n; i++)
		if (in_line(t, &t->cars[i]) && (!skip || strcmp(t->cars[i].run_id, skip)))
			retell_car(s, &t->cars[i], ++pos, total);
}

/* Under the repository lock: the train, planned, and where the run's car is in it. */
static int train_read(struct step *s, struct train *t, struct where *w, struct sl_err *err)
{
	struct sl_lock lock = SL_LOCK_INIT;
	int error;

	memset(t, 0, sizeof(*t));
	if ((error = runner__lock_repo(s->ctx, &lock, err)) != 0)
		return error;
	if ((error = train_load(s, t, err)) == 0 && (error = plan(s, t, err)) == 0) {
		train_release(t); /* read again: the plan removed, parked and rebuilt cars */
		if ((error = train_load(s, t, err)) == 0)
			retell(s, t, NULL);
	}
	sl_lock_release(&lock);
	if (error)
		return error;
	locate(t, s->run.id, w);
	if (!w->me)
		return sl_err_set(err, SL_ENOTFOUND, "run '%s' left the merge train", s->run.id);
	return 0;
}

/* The work order of run `run_id` (into buf), for a reason a person reads. */
static const char *wo_of(struct step *s, const char *run_id, char *buf, size_t n)
{
	struct store_run r;
	struct sl_err err = SL_ERR_INIT;

	if (!run_id) {
		snprintf(buf, n, "%s", s->ctx->cfg->target);
		return buf;
	}
	if (store_run_get(s->ctx->st, run_id, &r, &err) != 0) {
		snprintf(buf, n, "run %.12s", run_id);
		return buf;
	}
	snprintf(buf, n, "%s", r.work_order_id);
	store_run_release(&r);
	return buf;
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

/* 1 when gate i runs on the merge train's cars (merge.gates; default: every gate). */
static int merge_gate(const struct sl_config *cfg, size_t i)
{
	size_t k;

	if (!cfg->merge.gates)
		return 1; /* default: every gate */
	for (k = 0; cfg->merge.gates[k]; k++)
		if (!strcmp(cfg->merge.gates[k], cfg->gates[i].name))
			return 1;
	return 0;
}

/* "a, b" of the merge gates, for reasons ("none" without one). */
static void gate_names(const struct sl_config *cfg, char *buf, size_t n)
{
	size_t i, used = 0;

	buf[0] = '\0';
	for (i = 0; i < cfg->ngates && used < n; i++)
		if (merge_gate(cfg, i))
			used += (size_t)snprintf(buf + used, n - used, "%s%s", used ? ", " : "",
						 cfg->gates[i].name);
	if (!buf[0])
		snprintf(buf, n, "none");
}

/* cfg with only the gates merge.gates names (borrowed strings): *subset is the caller's to free. */
static struct sl_config merge_gates_cfg(const struct sl_config *cfg, struct sl_gate **subset)
{
	struct sl_config c = *cfg;
	size_t i;

	*subset = calloc(cfg->ngates + 1, sizeof(**subset));
	c.gates = *subset;
	c.ngates = 0;
	for (i = 0; *subset && i < cfg->ngates; i++)
		if (merge_gate(cfg, i))
			(*subset)[c.ngates++] = cfg->gates[i];
	return c;
}

/*
 * The merge gates as a job (executor.kind slurm or kubernetes) on the car's
 * commit, pushed as refs/sluice/train/<id>/<commit>/head: a job lost or
 * cancelled is an error, and the train tries the car again next tick.
 */
static int train_gates_job(struct step *s, const struct sl_config *c, const char *commit,
			   struct build_gate_results *gr, struct sl_err *err)
{
	struct exec_run r;
	struct exec_outcome oc;
	int error;

	memset(&r, 0, sizeof(r));
	r.st = s->ctx->st;
	r.repo_root = s->ctx->repo.root;
	r.run_id = s->run.id;
	r.work_order_id = s->run.work_order_id;
	r.attempt = s->run.attempt;
	r.purpose = "train";
	r.base = commit;
	r.state_name = run_state_name(s->run.state);
	if ((error = build_gates_run_job(c, s->wt, s->run_dir, "train", s->run.branch_name, &r, &oc,
					 gr, err)) != 0)
		return error;
	if (oc.lost || oc.cancelled)
		return sl_err_set(err, SL_ETRANSIENT, "the merge gates job on %.12s did not end: %s; "
				  "the train tries again", commit, oc.cancelled ? "cancelled" : oc.why);
	return 0;
}

/*
 * The merge gates on `commit`, in a checkout of its own (train/checkout.c:
 * nothing the builder left in the run's worktree but merge.keep_ignored),
 * their output under <run>/train/; the run's worktree is not touched.
 */
static int run_merge_gates(struct step *s, const char *commit, struct build_gate_results *gr,
			   struct sl_err *err)
{
	struct sl_gate *subset = NULL;
	struct sl_config c = merge_gates_cfg(s->ctx->cfg, &subset);
	char *where = NULL;
	int error;

	if (!subset) {
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	if (!c.ngates) { /* no merge gate: the train only serializes the merges */
		error = build_gates_run_sub(&c, s->wt, s->run_dir, "train", gr, err);
		goto out;
	}
	if (step__remote(s)) { /* a job on the car's commit: no checkout here */
		error = train_gates_job(s, &c, commit, gr, err);
		goto out;
	}
	if (!sl_path_exists(s->wt) && (error = step__worktree_again(s, err)) != 0) {
		char why[SL_ERR_MSG_MAX];
		snprintf(why, sizeof(why), "%s", err->msg);
		sl_err_clear(err);
		sl_err_set(err, error, "the run's worktree is gone and cannot be made again for the "
			   "merge gates: %s", why);
		goto out;
	}
	if ((error = train_checkout(s->ctx, s->run.id, s->wt, commit, &where, err)) == 0)
		error = build_gates_run_sub(&c, where, s->run_dir, "train", gr, err);
	train_checkout_drop(s->ctx, s->run.id);
out:
	free(where);
	free(subset);
	return error;
}

/* The results as stored with the car: gates.json's array, each failed gate with its output's tail. */
static char *results_json(const struct build_gate_results *gr)
{
	json_t *arr = build_gates_json(gr);
	char *text;
	size_t i;

	for (i = 0; arr && i < gr->n; i++)
		if (!gr->v[i].passed)
			json_object_set_new(json_array_get(arr, i), "output",
					    worktree_diff_json_text(gr->v[i].output ? gr->v[i].output : "",
								    gr->v[i].output ? strlen(gr->v[i].output) : 0));
	text = arr ? json_dumps(arr, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	json_decref(arr);
	return text;
}

/* Under the lock: mark the car (still `commit`) as tested by this process. 1: it changed meanwhile. */
static int claim_test(struct step *s, const char *commit, const char *owner, struct sl_err *err)
{
	struct sl_lock lock = SL_LOCK_INIT;
	struct store_car c;
	int error;

	if ((error = runner__lock_repo(s->ctx, &lock, err)) != 0)
		return error;
	if ((error = store_train_get(s->ctx->st, s->run.id, &c, err)) == 0) {
		if (!c.commit || strcmp(c.commit, commit) ||
		    (c.status != TRAIN_PENDING && c.status != TRAIN_TESTING)) {
			error = 1;
		} else {
			c.status = TRAIN_TESTING;
			c.started_ms = sl_now_ms();
			if (set_str(&c.tester, owner))
				error = sl_err_set(err, SL_ERROR, "out of memory");
			else
				error = store_train_put(s->ctx->st, &c, err);
		}
	}
	store_car_release(&c);
	sl_lock_release(&lock);
	return error;
}

/* Under the lock: the result, when the car is still the one tested, by this process. */
static int record_result(struct step *s, const char *commit, const char *owner,
			 const struct build_gate_results *gr, struct sl_err *err)
{
	struct sl_lock lock = SL_LOCK_INIT;
	struct store_car c;
	char *results = results_json(gr);
	int error;

	if (!results)
		return sl_err_set(err, SL_ERROR, "out of memory");
	if ((error = runner__lock_repo(s->ctx, &lock, err)) == 0 &&
	    (error = store_train_get(s->ctx->st, s->run.id, &c, err)) == 0) {
		if (c.status == TRAIN_TESTING && c.commit && !strcmp(c.commit, commit) && c.tester &&
		    !strcmp(c.tester, owner)) {
			c.status = gr->all_passed ? TRAIN_GREEN : TRAIN_RED;
			c.tested_ms = sl_now_ms();
			free(c.gates_json);
			c.gates_json = results;
			results = NULL;
			error = store_train_put(s->ctx->st, &c, err);
			sl_fault(error ? NULL : "train.after_result");
		}
		store_car_release(&c);
	}
	sl_lock_release(&lock);
	free(results);
	return error;
}

static int64_t gates_ms(const struct build_gate_results *gr)
{
	int64_t ms = 0;
	size_t i;

	for (i = 0; i < gr->n; i++)
		ms += gr->v[i].duration_ms;
	return ms;
}

/* 1 when merge.gates selects at least one configured gate. */
static int has_merge_gates(const struct sl_config *cfg)
{
	size_t i;

	for (i = 0; i < cfg->ngates; i++)
		if (merge_gate(cfg, i))
			return 1;
	return 0;
}

/* Test the run's car (pending, or testing by a process that is gone). */
static int test_car(struct step *s, const struct where *w, struct sl_err *err)
{
	struct build_gate_results gr = BUILD_GATE_RESULTS_INIT;
	char owner[64], names[256], ahead[128], *commit = strdup(w->me->commit);
	int error, gates = has_merge_gates(s->ctx->cfg);

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
	if ((error = claim_test(s, commit, owner, err)) != 0)
		goto out; /* 1: rebuilt meanwhile, decide again */
	if (!gates) { /* no merge gate: the train only serializes the landings */
		error = record_result(s, commit, owner, &gr, err);
		goto out;
	}
	gate_names(s->ctx->cfg, names, sizeof(names));
	if ((error = say(s, err, "in the train: car %d of %d, testing on top of %s (gates: %s)",
			 w->pos, w->total, w->ahead ? wo_of(s, w->ahead->run_id, ahead, sizeof(ahead))
						    : s->ctx->cfg->target, names)) != 0 ||
	    (error = run_merge_gates(s, commit, &gr, err)) != 0)
		goto out;
	sl_fault("train.after_gates");
	/* the gates can write in the run folder: what sluice wrote there, from git again */
	step__sanitize_run_dir(s);
	if ((error = step__record_diff(s, s->run.head_commit, err)) == 0)
		error = record_result(s, commit, owner, &gr, err);
	if (!error)
		sl_log(SL_LOG_INFO, "run %s: merge gates %s on %.12s in %.1f s", s->run.id,
		       gr.all_passed ? "green" : "red", commit, gates_ms(&gr) / 1000.0);
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
			set_str(&c.tester, NULL);
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
		error = park(s, me, err);
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
	st->alive = testers_alive(t);
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

	if (train_load(s, &t, &e) == 0)
		retell(s, &t, s->run.id);
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

