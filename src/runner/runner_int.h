#ifndef SL_RUNNER_INT_H
#define SL_RUNNER_INT_H
/* Shared inside the runner module only. */
#include "runner/runner.h"
#include "store/runs.h"
#include "core/lock.h"

/* .system/<this>: kept while a merge brings the checked-out target along (merge.h). */
#define RUNNER_MERGE_JOURNAL "merge.journal"

/* A work order the scheduler says may start now. */
struct runner_ready {
	char *id;
	char hash[65];
};

/* Ingest the inbox into the store (queue module). */
int runner__ingest(struct sl_ctx *ctx, struct sl_err *err);

/*
 * Work orders that may start now, in schedule order (dependencies merged,
 * priority, created_at, id; the overlap rule against running ones).
 * only_wo: just that one (it must be ready). *out is the caller's:
 * runner__ready_free().
 */
int runner__ready(struct sl_ctx *ctx, const char *only_wo, struct runner_ready **out,
		  size_t *n, struct sl_err *err);
void runner__ready_free(struct runner_ready *r, size_t n);

/* Runs waiting on something: awaiting_review, reviewing, approved, merge_conflict. */
int runner__count_waiting(struct sl_ctx *ctx);

/* The repository lock (.system/lock), waiting up to 10 minutes. */
int runner__lock_repo(struct sl_ctx *ctx, struct sl_lock *lock, struct sl_err *err);

/* A run's own lock (.system/runs/<id>/lock); 0 = do not wait. */
int runner__lock_run(struct sl_ctx *ctx, const char *run_id, int64_t timeout_ms,
		     struct sl_lock *lock, struct sl_err *err);

/* Write a JSON document as a run artifact (atomically). */
struct json_t;
int runner__write_artifact_json(struct sl_ctx *ctx, const char *run_id, const char *name,
				struct json_t *json, struct sl_err *err);

/*
 * Remove a final run's worktree folder that git no longer knows as a
 * worktree (its .git replaced or gone, its entry broken), and its
 * .git/worktrees entry. Only for runs whose work is saved on their branch
 * (merged, abandoned, or with diff.patch written). Links are removed, never
 * followed. Hold the repository lock.
 */
int runner__discard_worktree(struct sl_ctx *ctx, const char *run_id, struct sl_err *err);

/*
 * Seal the newest merged run when a killed merge left it without
 * manifest.json, so that the chain stays in merge order. Hold the repository
 * lock; every merge calls it first. Failures are logged.
 */
void runner__seal_newest(struct sl_ctx *ctx);

/* The run's worktree path (new string). */
char *runner__worktree_path(struct sl_ctx *ctx, const char *run_id);


#endif
