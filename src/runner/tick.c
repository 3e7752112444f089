/*
 * The cron tick: reconcile, ingest, claim, and advance runs in worker
 * processes (one per run, up to `jobs` at once). The parent only claims,
 * forks, waits and reports the events the workers append.
 */
#include "runner/runner.h"
#include "runner/runner_int.h"
#include "store/store.h"
#include "reviewer/reviewer.h"
#include "core/id.h"
#include "core/fault.h"
#include "core/lock.h"
#include "core/log.h"
#include "core/time.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
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

static int claim_one(struct sl_ctx *ctx, const char *wo_id, const char *wo_hash,
		     char *run_id_out, struct sl_err *err)
{
	struct store_run run;
	char branch[256];
	int error;

	memset(&run, 0, sizeof(run));
	if ((error = sl_id_new(run_id_out)) != 0)
		return sl_err_set(err, SL_ERROR, "cannot make a run id (getrandom failed)");
	snprintf(branch, sizeof(branch), "run/%s-%s", wo_id, sl_id_short(run_id_out));
	run.id = run_id_out;
	run.work_order_id = (char *)wo_id;
	run.wo_content_hash = (char *)wo_hash;
	run.target = ctx->target_ref;
	run.branch_name = branch;
	run.reason = (char *)"claimed by sluice tick";
	return store_run_claim(ctx->st, &run, err);
}

static int count_building(struct sl_ctx *ctx, struct sl_err *err);

static int claim_new(struct sl_ctx *ctx, const struct runner_tick_opts *o, int jobs,
		     struct worklist *w, int *started, struct sl_err *err)
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
	slots = jobs - count_building(ctx, err);
	for (i = 0; i < n && slots > 0; i++) {
		struct sl_err cerr = SL_ERR_INIT;
		if (o->max_runs && *started >= o->max_runs)
			break;
		if (claim_one(ctx, ready[i].id, ready[i].hash, run_id, &cerr) != 0) {
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
 * The worker: a new sluice process (fork, then exec of this very binary)
 * that advances one run and exits. Exec, not just fork: the parent's SQLite
 * connection must not live on in the child (SQLite forbids using or even
 * inheriting a connection across fork).
 */
static void worker(struct sl_ctx *parent, const char *run_id, const char *self, int token_fd)
{
	char fdarg[32];
	char *const argv[] = { (char *)"sluice", (char *)"-C", parent->repo.root,
			       (char *)"advance-run", (char *)run_id, token_fd >= 0 ? fdarg : NULL,
			       NULL };

	/* the token goes through a pipe, never the environment or argv */
	snprintf(fdarg, sizeof(fdarg), "--token-fd=%d", token_fd);
	if (token_fd >= 0 && fcntl(token_fd, F_SETFD, 0) < 0)
		_exit(127);
	execv(self, argv);
	sl_log(SL_LOG_ERROR, "run %s: cannot start a worker: %s", run_id, strerror(errno));
	_exit(127);
}

static int run_workers(struct sl_ctx *ctx, struct worklist *w, int jobs,
		       const struct runner_progress *p, int64_t *seq,
		       struct runner_tick_result *res, struct sl_err *err)
{
	char self[4096];
	ssize_t len;
	size_t next = 0;
	int active = 0, status;

	/* this binary, by its real name (so that ps shows "sluice", not "exe") */
	if ((len = readlink("/proc/self/exe", self, sizeof(self) - 1)) < 0)
		return sl_err_sys(err, errno, "cannot find the sluice binary to start workers");
	self[len] = '\0';
	/* replaced by an upgrade while we run: exec the very file we are */
	if (len > 10 && !strcmp(self + len - 10, " (deleted)"))
		snprintf(self, sizeof(self), "/proc/self/exe");
	int64_t last_poll = 0;
	pid_t pid;

	while (next < w->n || active > 0) {
		while (next < w->n && active < jobs) {
			int token_fd, error;

			fflush(NULL);
			if ((error = reviewer_token_handoff(&token_fd, err)) < 0)
				return error;
			pid = fork();
			if (pid == 0)
				worker(ctx, w->ids[next], self, token_fd);
			if (token_fd >= 0)
				close(token_fd);
			if (pid < 0)
				return sl_err_sys(err, errno, "cannot start a worker process");
			next++;
			active++;
			res->advanced++;
		}
		while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
			active--;
		if (pid < 0 && errno == ECHILD)
			active = 0;
		if (sl_mono_ms() - last_poll >= 250) {
			report_events(ctx, p, seq, res);
			if (p && p->tick)
				p->tick(p->data);
			last_poll = sl_mono_ms();
		}
		if (active > 0)
			usleep(50000);
	}
	report_events(ctx, p, seq, res);
	return 0;
}

static int count_building(struct sl_ctx *ctx, struct sl_err *err)
{
	/* the active states, and queued: claimed, about to build */
	int n = store_runs_count(ctx->st, run_states_where(run_state_is_active) | RUN_SET(RUN_QUEUED),
				 err);

	return n > 0 ? n : 0;
}

/*
 * Observe the target under the repository lock: a move sluice did not make
 * is recorded (the user's commits, or an unreviewed landing that holds
 * every merge; runner/target.h). A failure here is logged, not fatal: the
 * same check runs again right before each landing.
 */
static void watch_target(struct sl_ctx *ctx)
{
	struct runner_target_alert a;
	struct sl_err err = SL_ERR_INIT;

	if (runner_target_watch_locked(ctx, &a, &err) < 0)
		sl_log(SL_LOG_WARN, "cannot observe the target '%s': %s", ctx->cfg->target, err.msg);
}

int runner_tick(struct sl_ctx *ctx, const struct runner_tick_opts *o,
		struct runner_tick_result *res, struct sl_err *err)
{
	struct worklist w = { 0 };
	int64_t seq = store_events_last(ctx->st);
	int jobs = o->jobs > 0 ? o->jobs : ctx->cfg->queue.jobs > 0 ? ctx->cfg->queue.jobs : 1;
	int round, error = 0, merged_before;

	memset(res, 0, sizeof(*res));
	watch_target(ctx);
	if ((error = runner_reconcile(ctx, &res->reconciled, &res->orphans, err)) != 0)
		goto out;
	/*
	 * Rounds: a merge can make dependents ready, so keep going while the
	 * last round merged something and there is new work (bounded).
	 */
	for (round = 0; round < 100; round++) {
		if ((error = runner__ingest(ctx, err)) != 0)
			goto out;
		if ((error = collect_runnable(ctx, o->only_wo, &w, err)) != 0)
			goto out;
		if ((error = claim_new(ctx, o, jobs, &w, &res->started, err)) != 0)
			goto out;
		if (!w.n)
			break;
		merged_before = res->merged;
		if ((error = run_workers(ctx, &w, jobs, o->progress, &seq, res, err)) != 0)
			goto out;
		worklist_release(&w);
		if (res->merged == merged_before)
			break;
	}
	error = runner__ingest(ctx, err);
	res->waiting = runner__count_waiting(ctx);
	watch_target(ctx);
out:
	worklist_release(&w);
	return error;
}
