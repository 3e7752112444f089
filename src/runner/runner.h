#ifndef SL_RUNNER_H
#define SL_RUNNER_H
/*
 * The run lifecycle (docs/ARCHITECTURE.md, One run, from queued to merged): claiming work orders,
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
	int reported;      /* report runs (worktree read-only or none) whose report was approved */
	int failed;        /* runs that ended failed or rejected this tick */
	int waiting;       /* runs left waiting (review, merge deferred, conflict) */
	int reconciled;    /* interrupted runs requeued */
	int orphans;       /* worktrees or run branches no run owns (reported) */
	int killed;        /* workers killed by a signal: the tick fails after its pass */
	struct runner_killed {
		char run[64];  /* the run whose worker it was */
		int signal;    /* the signal that ended it (SIGKILL, SIGSEGV, ...) */
	} killed_by[8];    /* the first `killed` of them (at most 8) */
	char budget[320];  /* why no new work order started (budget_spent()), or "" */
};

/*
 * A run's budget (docs/budgets.md): its work order's budget.usd and
 * budget.minutes, else budget.run.usd and budget.run.minutes; -1: no
 * limit. *_from names where each came from, for the reason.
 */
struct runner_run_budget {
	double usd, minutes;
	const char *usd_from, *minutes_from;
};
/* What a run's attempts recorded: known costs, estimate 1 when one was, wall time. */
struct runner_run_spend {
	double usd;
	int estimate;
	int64_t wall_ms;
};
struct json_t;
void runner_run_budget_of(const struct sl_config *cfg, const struct json_t *wo_fields,
			  struct runner_run_budget *b);
/* 1 when sp reached a limit of b (the money first), why saying which; else 0. */
int runner_run_budget_spent(const struct runner_run_budget *b, const struct runner_run_spend *sp,
			    char *why, size_t n);
/* The wall time the next attempt may take (at least 1 ms), 0: no limit on minutes. */
int64_t runner_run_budget_left_ms(const struct runner_run_budget *b,
				  const struct runner_run_spend *sp);

/*
 * One cron pass: reconcile, ingest the inbox, claim ready work orders
 * (respecting dependencies and the overlap rule) and advance every run
 * that can move, in parallel up to `jobs` worker processes.
 */
int runner_tick(struct sl_ctx *ctx, const struct runner_tick_opts *opts,
		struct runner_tick_result *res, struct sl_err *err);

/*
 * The stages a tick's worker may carry a run through (docs/config.md, "Which
 * limit holds what"): any, or, with merge.jobs, the builders' (everything but
 * the train) apart from the train's (approved and merging runs).
 */
enum runner_stage { RUNNER_STAGE_ANY, RUNNER_STAGE_BUILD, RUNNER_STAGE_TRAIN };

/* The stage of a run in `state`: RUNNER_STAGE_TRAIN or RUNNER_STAGE_BUILD. */
enum runner_stage runner_stage_of(enum run_state state);

/*
 * Advance one run as far as it can go now, in this process (the worker
 * side of a tick), within `stage` (RUNNER_STAGE_ANY: every step): the
 * worker stops, leaving the run as it is, where it would step into another.
 * Takes the run lock; SL_ELOCKED if another process holds it.
 */
int runner_advance(struct sl_ctx *ctx, const char *run_id, enum runner_stage stage,
		   struct sl_err *err);

/*
 * Write the manifest.json of a merged run that has none (`sluice audit
 * --write-manifest`), under the repository lock like every other writer
 * of the chain, waiting for it up to wait_ms (SL_ELOCKED after; 0: not at
 * all). SL_EINVALID when the run is not merged or has its manifest.
 */
int runner_seal(struct sl_ctx *ctx, const char *run_id, int64_t wait_ms, struct sl_err *err);

/* The human commands. `run` is an id or a unique prefix. */
int runner_approve(struct sl_ctx *ctx, const char *run, const char *message,
		   struct sl_err *err);
int runner_reject(struct sl_ctx *ctx, const char *run, const char *message,
		  struct sl_err *err);
int runner_retry(struct sl_ctx *ctx, const char *run, char *next_state, size_t n,
		 struct sl_err *err);
int runner_abandon(struct sl_ctx *ctx, const char *run, int delete_branch,
		   struct sl_err *err);

/*
 * sluice run --again WO: a new run (queued, its id into run_id[n]) of the
 * failed work order `wo_id` (its last run failed, was rejected or was
 * abandoned), of the revision in the inbox, unedited; the next tick (or
 * `sluice run WO`) carries it on. Under the repository lock, after an
 * ingest. SL_ENOTFOUND for a work order not in the inbox; SL_EINVALID for
 * one that is not failed (running, done, ready, waiting, ...: the message
 * says which and what to do).
 */
int runner_run_again(struct sl_ctx *ctx, const char *wo_id, char *run_id, size_t n,
		     struct sl_err *err);

/*
 * What a person saw of a run before acting on it (a form of sluice serve,
 * `sluice approve --head`): the command is refused (SL_ECONFLICT, nothing
 * changes, the message says what the run is now) unless the run, read
 * again under its run lock, still has it (docs/serve.md "Actions"). NULL
 * (attempt < 0) is not checked; head "" is a run without a head commit.
 * `where` ends the message: "this page showed; ... reload to see it".
 */
struct runner_seen {
	const char *head;  /* the full head commit, hex */
	int attempt;
	const char *state; /* run_state_name() */
	const char *where;
};
#define RUNNER_SEEN_INIT { NULL, -1, NULL, NULL }
/* The human commands, refused when the run is no longer as `seen` (NULL: as the above). */
int runner_approve_seen(struct sl_ctx *ctx, const char *run, const char *message,
			const struct runner_seen *seen, struct sl_err *err);
int runner_reject_seen(struct sl_ctx *ctx, const char *run, const char *message,
		       const struct runner_seen *seen, struct sl_err *err);
/*
 * A person asks for changes (sluice request-changes, the desk): a run
 * awaiting_review builds again with `message` (required) as the reviewer's
 * comments in the next prompt, under the retry rules, as the reviewer's
 * request_changes verdict; the work order stays running, nothing is
 * notified. SL_EINVALID (nothing done) when the run is not awaiting review
 * or its retry rules allow no other attempt.
 */
int runner_request_changes_seen(struct sl_ctx *ctx, const char *run, const char *message,
				const struct runner_seen *seen, struct sl_err *err);
int runner_request_changes(struct sl_ctx *ctx, const char *run, const char *message,
			   struct sl_err *err);
int runner_retry_seen(struct sl_ctx *ctx, const char *run, char *next_state, size_t n,
		      const struct runner_seen *seen, struct sl_err *err);
int runner_abandon_seen(struct sl_ctx *ctx, const char *run, int delete_branch,
			const struct runner_seen *seen, struct sl_err *err);
/*
 * runner_retry_seen with flags. A failed or rejected run starts the retry
 * rules over (build_retry_restart()) on the target's tip as it is now: the
 * worktree and branch go to the tip (the run's earlier work stays in the
 * branch's reflog and the attempts). RUNNER_RETRY_SAME_BASE keeps the
 * run's base and worktree as they are (the builder goes on from there), as
 * does a worktree or branch a person changed since the run stopped (what
 * is uncommitted is committed first): a person's work is never reset.
 */
#define RUNNER_RETRY_SAME_BASE 0x1u
int runner_retry_flags(struct sl_ctx *ctx, const char *run, unsigned flags, char *next_state,
		       size_t n, const struct runner_seen *seen, struct sl_err *err);

#endif
