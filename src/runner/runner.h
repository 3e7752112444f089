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
};

/*
 * One cron pass: reconcile, ingest the inbox, claim ready work orders
 * (respecting dependencies and the overlap rule) and advance every run
 * that can move, in parallel up to `jobs` worker processes.
 */
int runner_tick(struct sl_ctx *ctx, const struct runner_tick_opts *opts,
		struct runner_tick_result *res, struct sl_err *err);

/*
 * Advance one run as far as it can go now, in this process (the worker
 * side of a tick). Takes the run lock; SL_ELOCKED if another process
 * holds it.
 */
int runner_advance(struct sl_ctx *ctx, const char *run_id, struct sl_err *err);

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
#include <stddef.h>
#include <stdint.h>

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
	size_t pool_slots;         /* worktrees in the pool (worktree.pool): gc empties it */
	int64_t pool_bytes;        /* their size */
	size_t pool_removed;       /* runner_gc_apply: how many went */
	size_t pool_locked;        /* left: locked with git worktree lock */
	char *pool_error;          /* why the pool could not be emptied, or NULL */
};

#define RUNNER_GC_PLAN_INIT { NULL, 0, 0, 0, 0, 0, 0, 0, NULL }

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

/* The most entries runner_disk_usage() looks at (a bound on its time). */
#define RUNNER_DISK_MAX_ENTRIES 500000

struct runner_disk {
	int64_t bytes;          /* what .system/ takes on disk (allocated blocks, as du) */
	int64_t worktree_bytes; /* of which runs' worktrees (runs/<id>/worktree*) and the pool */
	size_t entries;         /* files, links and folders seen */
	int complete;           /* 0: stopped at RUNNER_DISK_MAX_ENTRIES; the sizes are at least */
};

/*
 * What .system/ takes on disk, for `sluice status`: one walk (nftw) that
 * follows no link and stays on .system/'s file system, shares a hard-linked
 * file's blocks among its links, and stops after RUNNER_DISK_MAX_ENTRIES
 * entries. Never fails: what cannot be read counts as nothing.
 */
void runner_disk_usage(const struct sl_ctx *ctx, struct runner_disk *out);

/*
 * Moves of the target branch that sluice did not make (docs/audit.md).
 *
 * sluice records the tip of the target it last observed or landed on. A
 * later tip is classified by the commits it brings (reachable from it, not
 * from the last observed tip):
 *  - a sluice landing (a merged run's merge commit, or the merge commit of
 *    an approved run whose landing a crash cut short), and the run commits
 *    it merges: sluice's own;
 *  - a commit recorded as the user's (observed earlier or accepted);
 *  - a commit from a run: reachable from a run's recorded head, an attempt's
 *    head, a run/ branch, an entry of a run branch's or run worktree's
 *    reflog, or a refs/sluice/ ref, and not from any run's base: an
 *    unreviewed landing. Landing stops until the target no longer carries
 *    it (a person reset the target) or a person accepts it;
 *  - anything else (a person's commit, a pull, a reset backwards): the
 *    user's, recorded as such.
 */
#include <git2.h>

struct runner_target_alert {
	char commit[GIT_OID_HEXSZ + 1]; /* the newest unreviewed commit on the target */
	char run[64];                   /* the run it came from ("" when unknown) */
	size_t count;                   /* unreviewed commits on the target in all */
};

/*
 * Observe the target: classify the commits the tip brings (`tip`; NULL:
 * the target's tip now). record: write what was found (the new tip, the
 * user's commits, an alert with its event): hold the repository lock. Not
 * recording only reads. Returns 0 when the target carries nothing
 * unreviewed, 1 when it does (*alert filled), or a negative error.
 */
int runner_target_watch(struct sl_ctx *ctx, const git_oid *tip, int record,
			struct runner_target_alert *alert, struct sl_err *err);

/*
 * sluice accept-target COMMIT: record every commit reachable from COMMIT
 * (on the target) and not from the last observed tip as the user's, then
 * observe again. *n: how many were recorded. SL_ENOTFOUND: no such
 * commit; SL_ECONFLICT: it is not on the target.
 */
int runner_target_accept(struct sl_ctx *ctx, const char *commit, size_t *n,
			 struct runner_target_alert *alert, struct sl_err *err);

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
struct runner_init_opts {
	const char *inbox;  /* relative to the root; NULL: work_orders */
	const char *target; /* NULL: the branch HEAD names */
	void (*note)(const char *line, void *data);
	void *data;
};

#define RUNNER_INIT_OPTS_INIT { NULL, NULL, NULL, NULL }

struct runner_init_result {
	int changed;  /* something was created or put back */
	char *target; /* the target chosen for a new config.yaml, NULL when it existed */
};

/* *res is the caller's: runner_init_result_release(), also on failure. */
int runner_init(const struct sl_repo *repo, const struct runner_init_opts *o,
		struct runner_init_result *res, struct sl_err *err);
void runner_init_result_release(struct runner_init_result *res);

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
int runner_check(const struct sl_repo *repo, struct sl_buf *problems, size_t *nwo,
		 struct sl_err *err);

#endif
