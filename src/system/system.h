#ifndef SL_SYSTEM_SYSTEM_H
#define SL_SYSTEM_SYSTEM_H
/*
 * The .system folder's upkeep, below the runner: set up (`sluice init`,
 * init.c), checked (`sluice check`, check.c), kept small (`sluice gc` and
 * the disk usage of `sluice status`, gc.c).
 */
#include "core/ctx.h"
#include "core/err.h"
#include "core/repo.h"

#include <stddef.h>
#include <stdint.h>

/*
 * sluice gc (docs/design.md, Commands): remove the worktrees, run/ branches
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
struct system_gc_item {
	char *run;
	char *work_order;
	char *state;
	int merged;           /* 1: merged; 0: failed, rejected or abandoned */
	int64_t bytes;        /* the run folder's size (worktree included) */
	char *folder;         /* the run folder, or NULL when gone */
	char *branch;         /* the run branch if it still exists, else NULL */
	int has_worktree;     /* a worktree entry or folder exists */
	int removed;          /* system_gc_apply removed everything and verified it */
	char *error;          /* why it could not be removed (apply), or NULL */
};

struct system_gc_plan {
	struct system_gc_item *v;  /* oldest first */
	size_t n;
	size_t kept_finished;      /* the newest finished runs kept */
	size_t kept_active;        /* runs not in a final state (never touched) */
	size_t pool_slots;         /* worktrees in the pool (worktree.pool): gc empties it */
	int64_t pool_bytes;        /* their size */
	size_t pool_removed;       /* system_gc_apply: how many went */
	size_t pool_locked;        /* left: locked with git worktree lock */
	char *pool_error;          /* why the pool could not be emptied, or NULL */
};

#define SYSTEM_GC_PLAN_INIT { NULL, 0, 0, 0, 0, 0, 0, 0, NULL }

/*
 * What gc would remove: finished runs older than the newest `keep_last`
 * finished ones that still have a folder, a worktree or a branch. Both
 * merged and unmerged ones are listed; the caller filters with
 * system_gc_drop_unmerged(). *plan: system_gc_plan_release().
 */
int system_gc_plan(struct sl_ctx *ctx, int keep_last, struct system_gc_plan *plan,
		   struct sl_err *err);

/* Leave the runs that did not merge out of the plan; returns how many. */
size_t system_gc_drop_unmerged(struct system_gc_plan *plan);

/*
 * Remove what the plan lists, under the repository lock: the worktree
 * (worktree_remove; forced, since the run is final and its diff was
 * saved, when diff.patch exists), the branch, then the folder, after
 * writing the tombstone. Each item is verified afterwards (folder, branch
 * and worktree entry gone): item->removed, or item->error. *freed: the
 * bytes of the items removed. Returns an error only when gc could not run
 * at all (the lock, the repository).
 */
int system_gc_apply(struct sl_ctx *ctx, struct system_gc_plan *plan, int64_t *freed,
		    struct sl_err *err);

void system_gc_plan_release(struct system_gc_plan *plan);

/* The most entries system_disk_usage() looks at (a bound on its time). */
#define SYSTEM_DISK_MAX_ENTRIES 500000

struct system_disk {
	int64_t bytes;          /* what .system/ takes on disk (allocated blocks, as du) */
	int64_t worktree_bytes; /* of which runs' worktrees (runs/<id>/worktree*) and the pool */
	size_t entries;         /* files, links and folders seen */
	int complete;           /* 0: stopped at SYSTEM_DISK_MAX_ENTRIES; the sizes are at least */
};

/*
 * What .system/ takes on disk, for `sluice status`: one walk (nftw) that
 * follows no link and stays on .system/'s file system, shares a hard-linked
 * file's blocks among its links, and stops after SYSTEM_DISK_MAX_ENTRIES
 * entries. Never fails: what cannot be read counts as nothing.
 */
void system_disk_usage(const struct sl_ctx *ctx, struct system_disk *out);

/*
 * sluice init (init.c): set up .system/ in the repository `repo` (found by
 * sl_repo_find()): .system/, config.yaml for the target and inbox, runs/,
 * the lock file, the database, "/.system/" in info/exclude, the inbox.
 * What exists is kept; a missing piece is put back. Each thing done is told
 * to `note` (may be NULL) as one line ("created .system/sluice.db") as it
 * is done. A target that can never work is refused before anything is
 * created (SL_EINVALID: a detached HEAD, a branch without commits, an
 * invalid --target, an inbox outside the repository).
 */
struct system_init_opts {
	const char *inbox;  /* relative to the root; NULL: work_orders */
	const char *target; /* NULL: the branch HEAD names */
	void (*note)(const char *line, void *data);
	void *data;
};

#define SYSTEM_INIT_OPTS_INIT { NULL, NULL, NULL, NULL }

struct system_init_result {
	int changed;  /* something was created or put back */
	char *target; /* the target chosen for a new config.yaml, NULL when it existed */
};

/* *res is the caller's: system_init_result_release(), also on failure. */
int system_init(const struct sl_repo *repo, const struct system_init_opts *o,
		struct system_init_result *res, struct sl_err *err);
void system_init_result_release(struct system_init_result *res);

/*
 * sluice check (check.c): validate config.yaml and every work order of the
 * inbox without running anything, and the config against the repository
 * (the target is a branch; worktree.share/copy entries stay inside it and
 * are untracked). Each problem is appended to `problems` as one line
 * "path[:line:col]: message" (paths relative to the root); *nwo is the
 * number of work orders seen. Returns the number of problems, or a
 * negative error when the check itself could not run.
 */
struct sl_buf;
int system_check(const struct sl_repo *repo, struct sl_buf *problems, size_t *nwo,
		 struct sl_err *err);

/*
 * At a tick's start, with the repository lock held (system/leftovers.c):
 * the temporary files of atomic writes ("<file>.tmp.<pid>") whose process
 * is gone, removed from .system and every run folder (a link is never
 * followed, a folder never entered); and the count of run worktrees and
 * run/ branches that none of `runs` owns, each logged, none removed.
 */
struct store_run;
void system_remove_dead_tmp(const struct sl_repo *repo);
int system_count_orphans(const struct sl_repo *repo, const struct store_run *runs, size_t n);

#endif
