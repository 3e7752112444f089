#ifndef SL_RUNNER_GC_H
#define SL_RUNNER_GC_H
/*
 * sluice gc (DESIGN.md section 10b): remove the worktrees, run/ branches
 * and artifact folders of the oldest finished runs beyond the newest
 * `keep_last` finished ones (finished: merged, rejected, failed,
 * abandoned). Merged runs go; runs that did not merge go only when the
 * caller says so. A run in any other state is never touched. Store rows
 * stay (the events table is append-only).
 *
 * A removed run leaves a tombstone, .system/runs/<id>.gc (JSON: run,
 * state, removed_at, merged_at, manifest_sha256, previous_manifest,
 * previous_run, merge_commit, bytes): `sluice show` says "artifacts
 * removed by gc", and `sluice audit` counts the run as removed and keeps
 * the manifest chain whole through it.
 */
#include <stddef.h>
#include <stdint.h>
#include "runner/runner.h"

struct runner_gc_item {
	char *run;
	char *work_order;
	char *state;
	int merged;           /* 1: merged; 0: failed, rejected or abandoned */
	int64_t bytes;        /* the run folder's size (worktree included) */
	char *folder;         /* the run folder, or NULL when gone */
	char *branch;         /* the run branch if it still exists, else NULL */
	int has_worktree;     /* a worktree entry or folder exists */
	int removed;          /* runner_gc_apply removed everything and verified it */
	char *error;          /* why it could not be removed (apply), or NULL */
};

struct runner_gc_plan {
	struct runner_gc_item *v;  /* oldest first */
	size_t n;
	size_t kept_finished;      /* the newest finished runs kept */
	size_t kept_active;        /* runs not in a final state (never touched) */
};

#define RUNNER_GC_PLAN_INIT { NULL, 0, 0, 0 }

/*
 * What gc would remove: finished runs older than the newest `keep_last`
 * finished ones that still have a folder, a worktree or a branch. Both
 * merged and unmerged ones are listed; the caller filters with
 * runner_gc_drop_unmerged(). *plan: runner_gc_plan_release().
 */
int runner_gc_plan(struct sl_ctx *ctx, int keep_last, struct runner_gc_plan *plan,
		   struct sl_err *err);

/* Leave the runs that did not merge out of the plan; returns how many. */
size_t runner_gc_drop_unmerged(struct runner_gc_plan *plan);

/*
 * Remove what the plan lists, under the repository lock: the worktree
 * (worktree_remove; forced, since the run is final and its diff was
 * saved, when diff.patch exists), the branch, then the folder, after
 * writing the tombstone. Each item is verified afterwards (folder, branch
 * and worktree entry gone): item->removed, or item->error. *freed: the
 * bytes of the items removed. Returns an error only when gc could not run
 * at all (the lock, the repository).
 */
int runner_gc_apply(struct sl_ctx *ctx, struct runner_gc_plan *plan, int64_t *freed,
		    struct sl_err *err);

void runner_gc_plan_release(struct runner_gc_plan *plan);

#endif
