/*
 * The cron tick: reconcile, ingest, claim, and advance runs in worker
 * processes (one per run, up to `jobs` at once). The parent only claims,
 * starts workers (core/proc.h), waits for every one of them and reports the
 * events they append.
 */
#include "runner/runner.h"
#include "runner/runner_int.h"
#include "budget/budget.h"
#include "notify/notify.h"
#include "store/store.h"
#include "reviewer/reviewer.h"
#include "core/fs.h"
#include "core/id.h"
#include "core/fault.h"
#include "core/lock.h"
#include "core/log.h"
#include "core/proc.h"
#include "core/time.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct worklist {
	char **ids;
	size_t n, cap;
};

static int worklist_add(struct worklist *w, const char *id)
{
	size_t i;
	char **nv;

	for (i = 0; i < w->n; i++)
		if (!strcmp(w->ids[i], id))
			return 0;
	if (w->n == w->cap) {
		w->cap = w->cap ? w->cap * 2 : 16;
		if (!(nv = realloc(w->ids, w->cap * sizeof(*nv))))
			return SL_ERROR;
		w->ids = nv;
	}
	if (!(w->ids[w->n] = strdup(id)))
		return SL_ERROR;
	w->n++;
	return 0;
}

static void worklist_release(struct worklist *w)
{
	size_t i;

	for (i = 0; i < w->n; i++)
		free(w->ids[i]);
	free(w->ids);
	memset(w, 0, sizeof(*w));
}

static int collect_runnable(struct sl_ctx *ctx, const char *only_wo, struct worklist *w,
			    struct sl_err *err)
{
	struct store_run *runs = NULL;
	size_t n = 0, i;
	int error;

	/* runs that a tick may move on: not final, not active, not waiting for a person */
	if ((error = store_runs_list(ctx->st, run_states_where(run_state_is_runnable), only_wo,
				     &runs, &n, err)) != 0)
		return error;
	/* oldest first, so that earlier work merges first */
	for (i = n; i-- > 0 && !error;)
		error = worklist_add(w, runs[i].id);
	store_runs_free(runs, n);
	return error ? sl_err_set(err, error, "out of memory") : 0;
}

static int claim_one(struct sl_ctx *ctx, const struct runner_ready *ready, char *run_id_out,
		     struct sl_err *err)
{
	const char *wo_id = ready->id, *wo_hash = ready->hash;
	struct store_run run;
	char branch[256], why[1024];
	int error;

	memset(&run, 0, sizeof(run));
	if ((error = sl_id_new(run_id_out)) != 0)
		return sl_err_set(err, SL_ERROR, "cannot make a run id (getrandom failed)");
	if (sl_fmt_fixed(branch, sizeof(branch), "run/%s-%s", wo_id, sl_id_short(run_id_out)))
		return sl_err_set(err, SL_EINVALID, "work order id '%s' is too long for a branch name",
				  wo_id);
	run.id = run_id_out;
	run.work_order_id = (char *)wo_id;
	run.wo_content_hash = (char *)wo_hash;
	run.target = ctx->target_ref;
	run.branch_name = branch;
	/* a new revision of a done work order says so before its agent starts */
	snprintf(why, sizeof(why), "claimed by sluice tick%s%s", ready->why ? ": " : "",
		 ready->why ? ready->why : "");
	run.reason = why;
	return store_run_claim(ctx->st, &run, err);
}

static int count_building(struct sl_ctx *ctx, struct sl_err *err);

static int claim_new(struct sl_ctx *ctx, const struct runner_tick_opts *o, int jobs,
		     struct worklist *w, int *started, char *budget, size_t nbudget,
		     struct sl_err *err)
{
	struct runner_ready *ready = NULL;
	struct sl_lock lock = SL_LOCK_INIT;
	size_t n = 0, i;
	char run_id[SL_ID_LEN + 1];
	int error, slots;

	if (o->only_wo && w->n)
		return 0; /* `sluice run` carries on the run under way */
	if (o->max_runs && *started >= o->max_runs)
		return 0; /* `sluice run` after its run merged: not "cannot start now: done" */
	/*
	 * Plan and claim under the repository lock: two ticks must not both
	 * start work orders whose context overlaps, each from a plan made
	 * before the other's claim.
	 */
	if ((error = runner__lock_repo(ctx, &lock, err)) != 0)
		return error;
	if ((error = runner__ready(ctx, o->only_wo, &ready, &n, err)) != 0) {
		sl_lock_release(&lock);
		return error;
	}
	/* a spent budget starts nothing new (docs/budgets.md); runs under way go on */
	if (n && (error = budget_hold(ctx->cfg, ctx->st, ctx->target_ref, budget, nbudget,
				      err)) != 0) {
		runner__ready_free(ready, n);
		sl_lock_release(&lock);
		if (error < 0)
			return error;
		sl_log(SL_LOG_INFO, "%s", budget);
		return o->only_wo ? sl_err_set(err, SL_ECONFLICT, "work order '%s' cannot start now: %s",
					       o->only_wo, budget) : 0;
	}
	slots = jobs - count_building(ctx, err);
	for (i = 0; i < n && slots > 0; i++) {
		struct sl_err cerr = SL_ERR_INIT;
		if (o->max_runs && *started >= o->max_runs)
			break;
		if (claim_one(ctx, &ready[i], run_id, &cerr) != 0) {
			sl_log(SL_LOG_INFO, "%s", cerr.msg); /* another tick took it */
			continue;
		}
		if ((error = worklist_add(w, run_id)) != 0) {
			sl_err_set(err, error, "out of memory");
			break;
		}
		sl_fault("claim.after_claim");
		(*started)++;
		slots--;
	}
	runner__ready_free(ready, n);
	sl_lock_release(&lock);
	return error;
}

static void report_events(struct sl_ctx *ctx, const struct runner_progress *p, int64_t *seq,
			  struct runner_tick_result *res)
{
	struct store_event *ev = NULL;
	struct sl_err err = SL_ERR_INIT;
	size_t n = 0, i;

	if (store_events_list(ctx->st, NULL, *seq, &ev, &n, &err) != 0)
		return;
	for (i = 0; i < n; i++) {
		*seq = ev[i].seq;
		if (!ev[i].run_id)
			continue;
		if (run_state_is(ev[i].to_state, RUN_MERGED))
			res->merged++;
		if (run_state_is(ev[i].to_state, RUN_REPORTED))
			res->reported++;
		if (run_state_is(ev[i].to_state, RUN_FAILED) ||
		    run_state_is(ev[i].to_state, RUN_REJECTED))
			res->failed++;
		if (p && p->event)
			p->event(ev[i].run_id, ev[i].work_order_id, ev[i].from_state,
				 ev[i].to_state, ev[i].reason, p->data);
	}
	store_events_free(ev, n);
}

/*
 * The workers: one new sluice process per run (`sluice advance-run`, the
 * internal command of cmd_advance_run.c), started through the process
 * module (core/proc.h). A new process, exec'd, not just forked: the
 * parent's SQLite connection must not live on in the child (SQLite forbids
 * using or even inheriting a connection across fork). Every worker started
 * is waited for before the tick goes on, whatever happens.
 */
struct workers {
	char self[4096];   /* this binary, by its real name */
	int *pids;         /* `jobs` slots, -1 when free */
	const char **runs; /* the run of each slot (borrowed from the worklist) */
	size_t *item;      /* the worklist's index of each slot's run */
	enum runner_stage *stage; /* the stage each slot's worker carries its run through */
	int jobs, active;
	int limit[3], busy[3]; /* by stage: how many workers may, and do, carry one */
	char killed[SL_ERR_MSG_MAX]; /* how the first worker ended by a signal, or "" */
	int nkilled;
	struct runner_tick_result *res; /* killed_by: each killed worker's run and signal */
};

static int workers_init(struct workers *ws, int jobs, struct sl_err *err)
{
	int error;

	memset(ws, 0, sizeof(*ws));
	ws->jobs = jobs;
	if ((error = sl_proc_self(ws->self, sizeof(ws->self), err)) != 0)
		return error;
	ws->pids = malloc((size_t)jobs * sizeof(*ws->pids));
	ws->runs = calloc((size_t)jobs, sizeof(*ws->runs));
	ws->item = calloc((size_t)jobs, sizeof(*ws->item));
	ws->stage = calloc((size_t)jobs, sizeof(*ws->stage));
	if (!ws->pids || !ws->runs || !ws->item || !ws->stage)
		return sl_err_set(err, SL_ERROR, "out of memory");
	for (int i = 0; i < jobs; i++)
		ws->pids[i] = -1;
	return 0;
}

static void workers_release(struct workers *ws)
{
	free(ws->pids);
	free(ws->runs);
	free(ws->item);
	free(ws->stage);
	ws->pids = NULL;
	ws->runs = NULL;
	ws->item = NULL;
	ws->stage = NULL;
}

/*
 * Start the worker of the worklist's run `item` (`run_id`) for `stage` in a
 * free slot; the token goes through a pipe, never argv or environ.
 */
static int worker_start(struct sl_ctx *ctx, struct workers *ws, const char *run_id, size_t item,
			enum runner_stage stage, struct sl_err *err)
{
	static const char *const stage_arg[] = { NULL, "--stage=build", "--stage=train" };
	struct sl_proc_spawn_opts so = SL_PROC_SPAWN_OPTS_INIT;
	struct sl_err why = SL_ERR_INIT;
	char fdarg[32];
	const char *argv[] = { "sluice", "-C", ctx->repo.root, "advance-run", run_id, NULL, NULL,
			       NULL };
	int slot, token_fd = -1, error, n = 5;

	for (slot = 0; ws->pids[slot] >= 0; slot++)
		;
	if (stage_arg[stage])
		argv[n++] = stage_arg[stage];
	if ((error = reviewer_token_handoff(&token_fd, &why)) < 0)
		goto out;
	if (token_fd >= 0) {
		snprintf(fdarg, sizeof(fdarg), "--token-fd=%d", token_fd);
		argv[n] = fdarg;
	}
	so.prog = ws->self;
	so.argv = argv;
	so.pass_fd = token_fd;
	if (sl_fault_fail("tick.spawn"))
		error = sl_err_set(&why, SL_ERROR, "fault point 'tick.spawn' (SLUICE_FAULT)");
	else
		error = sl_proc_spawn(&so, &ws->pids[slot], &why);
	if (error)
		goto out;
	ws->runs[slot] = run_id;
	ws->item[slot] = item;
	ws->stage[slot] = stage;
	ws->busy[stage]++;
	ws->active++;
out:
	if (token_fd >= 0)
		close(token_fd);
	if (error)
		error = sl_err_set(err, SL_ERROR, "cannot start the worker of run %s: %s; the next "
				   "tick tries again", run_id, why.msg);
	return error;
}

/* A worker of run_id killed by signo, for `tick --json` (the first ones, as many as fit). */
static void killed_by(struct runner_tick_result *res, const char *run_id, int signo)
{
	size_t max = sizeof(res->killed_by) / sizeof(*res->killed_by), i;

	for (i = 0; i < max && res->killed_by[i].run[0]; i++)
		;
	if (i == max)
		return;
	snprintf(res->killed_by[i].run, sizeof(res->killed_by[i].run), "%s", run_id);
	res->killed_by[i].signal = signo;
}

/*
 * Reap a worker that ended, if one did within timeout_ms; remember one killed
 * by a signal. *reaped (when not NULL): its slot, whose item and stage stay
 * readable until the slot is taken again.
 */
static int worker_reap(struct workers *ws, int64_t timeout_ms, size_t *reaped,
		       struct sl_err *err)
{
	struct sl_proc_result pr;
	char how[64];
	size_t slot;
	int rc;

	if ((rc = sl_proc_wait_any(ws->pids, (size_t)ws->jobs, timeout_ms, &slot, &pr, err)) <= 0)
		return rc;
	if (reaped)
		*reaped = slot;
	ws->busy[ws->stage[slot]]--;
	if (pr.signaled) {
		sl_proc_describe(how, sizeof(how), &pr);
		sl_log(SL_LOG_WARN, "run %s: its worker (pid %d) was %s", ws->runs[slot], pr.pid,
		       how);
		if (!ws->nkilled++)
			snprintf(ws->killed, sizeof(ws->killed), "the worker of run %s was %s",
				 ws->runs[slot], how);
		killed_by(ws->res, ws->runs[slot], pr.signaled);
	}
	ws->pids[slot] = -1;
	ws->runs[slot] = NULL;
	ws->active--;
	return 1;
}

static int workers_failed(const struct workers *ws, struct sl_err *err)
{
	if (!ws->nkilled)
		return 0;
	if (ws->nkilled == 1)
		return sl_err_set(err, SL_ERROR, "%s; the next tick reconciles the run", ws->killed);
	return sl_err_set(err, SL_ERROR, "%s, and %d more workers were killed; the next tick "
			  "reconciles their runs", ws->killed, ws->nkilled - 1);
}

static void progress(struct sl_ctx *ctx, const struct runner_progress *p, int64_t *seq,
		     struct runner_tick_result *res, int64_t *last_poll)
{
	if (sl_mono_ms() - *last_poll < 250)
		return;
	report_events(ctx, p, seq, res);
	if (p && p->tick)
		p->tick(p->data);
	*last_poll = sl_mono_ms();
}

/*
 * Wait for every worker still running. A pid that cannot be waited for
 * (never expected: they are our children) is given up, with its run left
 * to the next tick's reconciliation.
 */
static void workers_drain(struct workers *ws, struct sl_ctx *ctx,
			  const struct runner_progress *p, int64_t *seq,
			  struct runner_tick_result *res)
{
	int64_t last_poll = 0;

	while (ws->active > 0) {
		struct sl_err werr = SL_ERR_INIT;

		if (worker_reap(ws, 50, NULL, &werr) < 0) {
			sl_log(SL_LOG_ERROR, "%s", werr.msg);
			for (int i = 0; i < ws->jobs; i++)
				ws->pids[i] = -1;
			ws->active = 0;
		}
		progress(ctx, p, seq, res, &last_poll);
	}
}

/*
 * The stage a worker of `run_id` takes it through now: with the train's
 * workers apart (merge.jobs), the one of the run's state; else any.
 */
static enum runner_stage stage_now(struct sl_ctx *ctx, const char *run_id, int apart)
{
	struct sl_err ignored = SL_ERR_INIT;
	struct store_run r;
	enum runner_stage stage = RUNNER_STAGE_BUILD;

	if (!apart)
		return RUNNER_STAGE_ANY;
	memset(&r, 0, sizeof(r));
	if (store_run_get(ctx->st, run_id, &r, &ignored) == 0)
		stage = runner_stage_of(r.state);
	store_run_release(&r);
	return stage;
}

/* 1 when the run a worker of `ran` left stepped into the other stage and can go on there. */
static int handed_over(struct sl_ctx *ctx, const char *run_id, enum runner_stage ran)
{
	struct sl_err ignored = SL_ERR_INIT;
	struct store_run r;
	int yes = 0;

	if (ran == RUNNER_STAGE_ANY)
		return 0;
	memset(&r, 0, sizeof(r));
	if (store_run_get(ctx->st, run_id, &r, &ignored) == 0)
		yes = run_state_is_runnable(r.state) && runner_stage_of(r.state) != ran;
	store_run_release(&r);
	return yes;
}

/* A run is carried over from one stage to the other at most this often in one pass. */
#define TICK_HANDOVERS_MAX 4

/* The rounds of a tick: this many more than the runs it claimed (runner_tick()). */
#define TICK_ROUNDS_MIN 100

/*
 * Start the worker of each run of the worklist not started yet whose stage
 * has a free worker; *left: how many still wait for one.
 */
static int start_ready(struct sl_ctx *ctx, struct workers *ws, struct worklist *w,
		       unsigned char *started, int apart, struct runner_tick_result *res,
		       size_t *left, struct sl_err *err)
{
	*left = 0;
	for (size_t i = 0; i < w->n; i++) {
		enum runner_stage st;
		int error;

		if (started[i] & 1)
			continue;
		st = stage_now(ctx, w->ids[i], apart);
		if (ws->busy[st] >= ws->limit[st]) {
			(*left)++;
			continue;
		}
		if ((error = worker_start(ctx, ws, w->ids[i], i, st, err)) != 0)
			return error;
		if (!started[i])
			res->advanced++;
		/* bit 0: running or done; the rest: how many times started */
		started[i] = (unsigned char)((started[i] + 2) | 1);
	}
	return 0;
}

/*
 * Run the worklist's workers. A worker killed by a signal does not stop the
 * tick's pass: it is counted in res->killed and told in `killed` (the first
 * such message), and the tick fails with it once its pass is done.
 */
static int run_workers(struct sl_ctx *ctx, struct worklist *w, int jobs,
		       const struct runner_progress *p, int64_t *seq,
		       struct runner_tick_result *res, struct sl_err *killed, struct sl_err *err)
{
	struct workers ws;
	int apart = ctx->cfg->merge.jobs > 0, error;
	int64_t last_poll = 0;
	unsigned char *started = calloc(w->n ? w->n : 1, 1);
	size_t left = 1, slot;

	memset(&ws, 0, sizeof(ws));
	if (!started) {
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	if ((error = workers_init(&ws, apart ? jobs + ctx->cfg->merge.jobs : jobs, err)) != 0)
		goto out;
	ws.res = res;
	ws.limit[RUNNER_STAGE_ANY] = jobs;
	ws.limit[RUNNER_STAGE_BUILD] = jobs;
	ws.limit[RUNNER_STAGE_TRAIN] = ctx->cfg->merge.jobs;
	for (int changed = 1;; changed = error == 1) {
		/* the workers already running are waited for on an error */
		if (changed && (error = start_ready(ctx, &ws, w, started, apart, res, &left, err)))
			goto out;
		if (!left && !ws.active)
			break;
		if ((error = worker_reap(&ws, 50, &slot, err)) < 0)
			goto out;
		/* approved by its builder's worker, or out of the train: the other stage's now */
		if (error == 1 && started[ws.item[slot]] / 2 < TICK_HANDOVERS_MAX &&
		    handed_over(ctx, w->ids[ws.item[slot]], ws.stage[slot]))
			started[ws.item[slot]] &= (unsigned char)~1;
		progress(ctx, p, seq, res, &last_poll);
	}
	error = 0;
out:
	free(started);
	if (ws.pids)
		workers_drain(&ws, ctx, p, seq, res);
	report_events(ctx, p, seq, res);
	res->killed += ws.nkilled;
	if (!killed->msg[0])
		workers_failed(&ws, killed);
	workers_release(&ws);
	return error;
}

static int count_building(struct sl_ctx *ctx, struct sl_err *err)
{
	/* the active states, and queued: claimed, about to build; merging is the
	 * train's when it has workers of its own (merge.jobs) */
	run_state_set set = run_states_where(run_state_is_active) | RUN_SET(RUN_QUEUED);
	int n;

	if (ctx->cfg->merge.jobs > 0)
		set &= (run_state_set)~RUN_SET(RUN_MERGING);
	n = store_runs_count(ctx->st, set, err);

	return n > 0 ? n : 0;
}

/*
 * Observe the target under the repository lock: a move sluice did not make
 * is recorded (the user's commits, or an unreviewed landing that holds
 * every merge; target/target.h). A failure here is logged, not fatal: the
 * same check runs again right before each landing.
 */
static void watch_target(struct sl_ctx *ctx)
{
	struct target_alert a;
	struct sl_err err = SL_ERR_INIT;

	if (target_watch_locked(ctx, &a, &err) < 0)
		sl_log(SL_LOG_WARN, "cannot observe the target '%s': %s", ctx->cfg->target, err.msg);
}

/* The notifiers, after the tick's work: whatever they do, the tick's result stays its own. */
static void notify(struct sl_ctx *ctx)
{
	struct sl_err err = SL_ERR_INIT;

	if (notify_deliver(ctx, &err) != 0)
		sl_log(SL_LOG_WARN, "cannot deliver the notifications: %s", err.msg);
}

int runner_tick(struct sl_ctx *ctx, const struct runner_tick_opts *o,
		struct runner_tick_result *res, struct sl_err *err)
{
	struct worklist w = { 0 };
	int64_t seq = store_events_last(ctx->st);
	int jobs = o->jobs > 0 ? o->jobs : ctx->cfg->queue.jobs > 0 ? ctx->cfg->queue.jobs : 1;
	int round, error = 0, merged_before;
	int64_t tested_before;
	struct sl_err killed = SL_ERR_INIT;

	memset(res, 0, sizeof(*res));
	watch_target(ctx);
	if ((error = runner_reconcile(ctx, &res->reconciled, &res->orphans, err)) != 0)
		goto out;
	/*
	 * Rounds: a merge can make dependents ready, so keep going while the
	 * last round merged something and there is new work. A round claims
	 * only as many new runs as there are free jobs, so the bound grows with
	 * the runs this tick claimed: a fixed 100 left the 101st work order of
	 * `--jobs 1` for the next tick (t1351), and the last cars of 200 at
	 * `--jobs 2` approved in the train (bench/RESULTS.md, issue 29).
	 */
	for (round = 0; round < TICK_ROUNDS_MIN + res->started; round++) {
		if ((error = runner__ingest(ctx, err)) != 0)
			goto out;
		if ((error = collect_runnable(ctx, o->only_wo, &w, err)) != 0)
			goto out;
		if ((error = claim_new(ctx, o, jobs, &w, &res->started, res->budget,
				       sizeof(res->budget), err)) != 0)
			goto out;
		if (!w.n)
			break;
		merged_before = res->merged;
		tested_before = store_train_tested_last(ctx->st, ctx->target_ref);
		if ((error = run_workers(ctx, &w, jobs, o->progress, &seq, res, &killed, err)) != 0)
			goto out;
		worklist_release(&w);
		/* merge.batch: a batch's test lets its cars land, or its bisection go on */
		if (res->merged == merged_before &&
		    (ctx->cfg->merge.batch <= 1 ||
		     store_train_tested_last(ctx->st, ctx->target_ref) == tested_before))
			break;
	}
	error = runner__ingest(ctx, err);
	res->waiting = runner__count_waiting(ctx);
	watch_target(ctx);
	if (!error && killed.msg[0])
		error = sl_err_set(err, killed.code, "%s", killed.msg);
out:
	worklist_release(&w);
	notify(ctx);
	return error;
}
