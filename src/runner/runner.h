#ifndef SL_RUNNER_H
#define SL_RUNNER_H
/*
 * The run lifecycle (DESIGN.md sections 5, 6, 11): claiming work orders,
 * the state machine that carries a run from queued to merged, the cron
 * tick, and the human commands (approve, reject, retry, abandon).
 *
 * Concurrency: a run is advanced only by the process holding its run lock
 * (.system/runs/<id>/lock, an flock the kernel drops when the process
 * dies); git mutations of the service take the repository lock
 * (.system/lock). Every state change is one transaction plus an event.
 */
#include "core/ctx.h"
#include "core/err.h"
#include "store/store.h"


/*
 * Find the repository containing dir, check it is initialized, load the
 * config and open the store. Release with runner_ctx_release().
 */
int runner_ctx_open(struct sl_ctx *ctx, const char *dir, struct sl_err *err);
void runner_ctx_release(struct sl_ctx *ctx);

/* Progress callback: called by the tick's parent as runs change state. */
struct runner_progress {
	void (*event)(const char *run_id, const char *wo_id, const char *from, const char *to,
		      const char *reason, void *data);
	void (*tick)(void *data); /* called about twice a second while workers run */
	void *data;
};

struct runner_tick_opts {
	int jobs;          /* 0: the config's queue.jobs */
	int max_runs;      /* new runs to start at most; 0: no limit */
	const char *only_wo; /* `sluice run WO-ID`: just this work order */
	const struct runner_progress *progress;
};

#define RUNNER_TICK_OPTS_INIT { 0, 0, NULL, NULL }

struct runner_tick_result {
	int started;       /* new runs claimed */
	int advanced;      /* runs worked on (new and old) */
	int merged;
	int failed;        /* runs that ended failed or rejected this tick */
	int waiting;       /* runs left waiting (review, merge deferred, conflict) */
	int reconciled;    /* interrupted runs requeued */
	int orphans;       /* worktrees or run branches no run owns (reported) */
};

/*
 * One cron pass: reconcile, ingest the inbox, claim ready work orders
 * (respecting dependencies and the overlap rule) and advance every run
 * that can move, in parallel up to `jobs` worker processes.
 */
int runner_tick(struct sl_ctx *ctx, const struct runner_tick_opts *opts,
		struct runner_tick_result *res, struct sl_err *err);

/*
 * Reconcile: runs in an active state whose run lock is free were
 * interrupted: they become `interrupted` and then `queued` again. Orphan
 * worktrees and run/ branches are counted (and logged).
 */
int runner_reconcile(struct sl_ctx *ctx, int *requeued, int *orphans, struct sl_err *err);

/*
 * Advance one run as far as it can go now, in this process (the worker
 * side of a tick). Takes the run lock; SL_ELOCKED if another process
 * holds it.
 */
int runner_advance(struct sl_ctx *ctx, const char *run_id, struct sl_err *err);

/* The human commands. `run` is an id or a unique prefix. */
int runner_approve(struct sl_ctx *ctx, const char *run, const char *message,
		   struct sl_err *err);
int runner_reject(struct sl_ctx *ctx, const char *run, const char *message,
		  struct sl_err *err);
int runner_retry(struct sl_ctx *ctx, const char *run, char *next_state, size_t n,
		 struct sl_err *err);
int runner_abandon(struct sl_ctx *ctx, const char *run, int delete_branch,
		   struct sl_err *err);

#endif
