#ifndef SL_RUNNER_INT_H
#define SL_RUNNER_INT_H
/* Shared inside the runner module only. */
#include "runner/runner.h"
#include "target/target.h"
#include "store/store.h"
#include "core/lock.h"

/* .system/<this>: kept while a merge brings the checked-out target along (merge.h). */
#define RUNNER_MERGE_JOURNAL "merge.journal"

/* A work order the scheduler says may start now. */
struct runner_ready {
	char *id;
	char hash[65];
	char *why; /* the queue's reason when it says more than "ready", else NULL */
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

/* Runs waiting on something: a person, the reviewer, a deferred merge (run_state_waits). */
int runner__count_waiting(struct sl_ctx *ctx);

/* The repository lock (.system/lock), waiting up to 10 minutes. */
int runner__lock_repo(struct sl_ctx *ctx, struct sl_lock *lock, struct sl_err *err);

/* A run's own lock (.system/runs/<id>/lock); 0 = do not wait. */
int runner__lock_run(struct sl_ctx *ctx, const char *run_id, int64_t timeout_ms,
		     struct sl_lock *lock, struct sl_err *err);

/*
 * A person's command asks the process holding a run's lock to let go: the
 * request (.system/runs/<id>/let-go, naming the asking process) is seen by
 * a worker waiting in the merge train at its next poll (step_train.c),
 * which stops and releases the lock. runner__lock_run_asking: the lock, at
 * once or after asking (waiting at most timeout_ms); the request is
 * withdrawn either way. runner__let_go_asked: 1 when a live process asks.
 */
int runner__lock_run_asking(struct sl_ctx *ctx, const char *run_id, int64_t timeout_ms,
			    struct sl_lock *lock, struct sl_err *err);
int runner__let_go_asked(struct sl_ctx *ctx, const char *run_id);


/* Write a JSON document as a run artifact (atomically). */
struct json_t;
int runner__write_artifact_json(struct sl_ctx *ctx, const char *run_id, const char *name,
				struct json_t *json, struct sl_err *err);

/*
 * A finished run's worktree goes: into the worktree pool (worktree.pool)
 * when there is room and it is a plain run worktree, else removed
 * (worktree_remove). `force`, `delete_branch` and *deleted as for
 * worktree_remove(): a worktree with changes is refused unless `force`.
 * Hold the repository lock.
 */
int runner__retire_worktree(struct sl_ctx *ctx, const char *run_id, const char *const *excluded,
			    int force, int delete_branch, int *deleted, struct sl_err *err);

/*
 * Delete the branch the store names for merged run `run` when its tip is in
 * the target's history (nothing lost) and no worktree has it checked out.
 * By the store's name, not the worktree's HEAD, which a builder can detach.
 * `repo` may be NULL (opened here). Hold the repository lock. (runner/land.c)
 */
void runner__delete_merged_branch(struct sl_ctx *ctx, git_repository *repo,
				  const struct store_run *run);

/*
 * Seal the newest merged run when a killed merge left it without
 * manifest.json, so that the chain stays in merge order. Hold the repository
 * lock; every merge calls it first. Failures are logged. runner__seal: the
 * same for the merged runs of `runs`, taking `lock` (when not NULL) only
 * when there is one to seal. (runner/land.c)
 */
void runner__seal_newest(struct sl_ctx *ctx);
int runner__seal(struct sl_ctx *ctx, const struct store_run *runs, size_t n,
		 struct sl_lock *lock, struct sl_err *err);

/*
 * What a killed sluice process left of a run whose lock is now held: the
 * builder or gate process group it started (ended), the *.lock files in the
 * run worktree's git dir and on its branch (removed). 1 when a process group
 * of it still ran (and was ended).
 */
int runner__end_leftovers(struct sl_ctx *ctx, const struct store_run *run);

/* The run's worktree path (new string). */
char *runner__worktree_path(struct sl_ctx *ctx, const char *run_id);


/*
 * The run state machine, inside the runner module (docs/ARCHITECTURE.md).
 * Each step handler works on a run in one state and moves it on:
 * it returns an enum step_result or a negative error (the run keeps its
 * state; the error is logged and the next tick tries again). A function
 * that returns "a step result or an error" is int; each value that is not
 * an error is named here, never a bare number.
 */
#include <jansson.h>

enum step_result {
	STEP_NEXT = 0,      /* the state changed, go on */
	STEP_STOP = 1,      /* the run waits for a later tick or a person */
	STEP_WAIT = 2,      /* the train: look again in a moment (a car ahead is carried by a live process) */
	STEP_AGAIN = 3,     /* the train: look again now (the car was tested, parked or rebuilt) */
	STEP_SENT_BACK = 4, /* a landing's check sent the run back (gating, reviewing or approved) */
};

struct step {
	struct sl_ctx *ctx;
	struct store_run run; /* the row as last read */
	char *run_dir;
	char *wt;
	long pool_rewritten; /* a worktree from the pool: paths rewritten + 1; 0 reset in full */
	struct step_diff *diff; /* the patch step__record_diff() made, for the review (runner/diff.c) */
};

/* Forget the patch step__record_diff() kept (safe when none is kept). */
void step__diff_forget(struct step *s);

/*
 * End a run: its final state and its work order's state, in one
 * transaction with both events.
 */
int step__finish(struct step *s, enum run_state state, enum wo_state wo_state,
		 const char *reason, const char *wo_reason, struct sl_err *err);

/* Move the run to `to` with a reason (printf-style), from its current state. */
int step__move(struct step *s, enum run_state to, struct sl_err *err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Re-read the run row. */
int step__reload(struct step *s, struct sl_err *err);
/* Update run columns (name, value, ..., NULL). */
int step__set(struct step *s, struct sl_err *err, ...);
/* A run artifact's path (new string). */
char *step__path(struct step *s, const char *name);
/* Read a run artifact into a new string (NULL when missing); max bytes. */
char *step__read(struct step *s, const char *name, size_t max);
/* Read a JSON artifact (NULL when missing or malformed). */
json_t *step__read_json(struct step *s, const char *name);
/*
 * Record what attempt s->run.attempt used, from attempts/<n>/usage.json
 * ($SLUICE_USAGE_FILE; runner/usage.c), with its wall time. A file that is
 * not JSON or has a wrong type is logged (the tick's log and `sluice log`)
 * and nothing is recorded; the attempt goes on either way.
 */
void step__record_usage(struct step *s, int64_t wall_ms);
/*
 * Record what the review of attempt s->run.attempt used: `usage` (the
 * verdict's, schema/usage.schema.json; the openai protocol's reply usage
 * made so), NULL when the reviewer did not say. A bad one is logged, never
 * recorded; the review goes on either way.
 */
void step__record_review_usage(struct step *s, const struct json_t *usage, int64_t wall_ms);
/*
 * While a builder runs here, each usage report it writes is read
 * (step__usage_watch, a watch() of core/proc.h with a struct step_usage_watch):
 * when its known cost, the agent's or estimated, passes the dollars left of
 * the run's budget, the builder is stopped, why naming both (docs/budgets.md).
 */
struct step_usage_watch {
	struct step *s;
	double left_usd;  /* the run's dollars left when the attempt started */
	const char *from; /* the limit's name: "the work order's budget.usd", ... */
};
int step__usage_watch(void *arg, char *why, size_t n);
/*
 * The run's own budget (runner/budget.c): 1 when its attempts reached it,
 * why saying which (nothing more may start); 0 when not; an error (< 0).
 * left (when not NULL): what the next attempt may take: ms of wall time
 * (0: no limit) and usd (< 0: no limit).
 */
struct step_budget_left {
	int64_t ms;
	double usd;
	const char *key;  /* the limit reached: "usd" or "minutes" (NULL: none) */
	const char *usd_from; /* the dollar limit's name ("the work order's budget.usd"), or NULL */
	int by_work_order; /* 1: that limit is the work order's budget:, 0: the config's */
};
int step__run_budget(struct step *s, char *why, size_t n, struct step_budget_left *left,
		     struct sl_err *err);
/* Write a JSON artifact atomically. */
int step__write_json(struct step *s, const char *name, json_t *j, struct sl_err *err);
/* The tree id of a commit, hex. */
int step__tree_of(struct step *s, const char *commit_hex, char tree_hex[41], struct sl_err *err);
/* The target branch's tip, hex. */
int step__target_tip(struct step *s, char tip_hex[41], struct sl_err *err);
/* The work order's fields (an object, {} when there are none); *title its title (new) when asked. */
json_t *step__wo_fields(struct step *s, const char *wo_id, char **title);
/* The comments of the run's review.json (new string), NULL when there are none. */
char *step__review_comments(struct step *s);

/* ---- Revert runs (runner/revert.c; docs/watch.md) ---- */
struct sl_proc_result;
struct step_revert {
	char commit[41]; /* the landing to revert */
	char parent[41]; /* its first parent, once read (step__revert_build/_exact) */
	char gate[65];   /* the watch gate its car runs too, or "" */
};
/* 1 and *r when the run's work order says `revert:`, else 0. */
int step__revert_of(struct step *s, struct step_revert *r);
/*
 * A revert run's base, once: the landing itself, when it is a commit of the
 * target with a parent (SL_EINVALID, final, when not). 0 for other runs.
 */
int step__revert_base(struct step *s, struct sl_err *err);
/* Set the worktree to the landing's first parent's tree (builder.log says so); *res as a builder's. */
int step__revert_build(struct step *s, const struct step_revert *r, struct sl_proc_result *res,
		       struct sl_err *err);
/* 1 when the watch made this work order to revert r->commit (store watch_reverts). */
int step__revert_by_watch(struct step *s, const struct step_revert *r);
/* 1 when `tree`, on the run's base, is exactly the landing undone (its first parent's tree). */
int step__revert_exact(struct step *s, const struct step_revert *r, const char *tree,
		       struct sl_err *err);
/*
 * The train's config for a revert run's car: the merge gates and the watch
 * gate its work order names (as "watch.<name>"), in out->ctx for the car's
 * test. 1 and out filled (step__revert_cfg_release), 0 for other runs, -1
 * out of memory.
 */
struct step_revert_cfg {
	struct sl_config cfg; /* a shallow copy: strings are the config's */
	struct sl_ctx ctx;    /* s->ctx with cfg */
	struct sl_gate *gates;
	char **merge_gates;
	char name[80];
};
int step__revert_train_cfg(struct step *s, struct step_revert_cfg *out);
void step__revert_cfg_release(struct step_revert_cfg *c);
/* The shared/copied paths that snapshots and cleanliness checks leave out. */
const char *const *step__excluded(struct step *s);
/*
 * 1 when the run folder is no longer a plain folder (a builder or gate put a
 * link there); err then says so. Such an error is final (runner_advance).
 */
int step__run_dir_linked(struct step *s, struct sl_err *err);

/* The run failed for good: run failed/rejected, work order failed. */
int step__fail(struct step *s, enum run_state state, struct sl_err *err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/*
 * The builder and gates can write in the run folder ($SLUICE_RUN_DIR, for
 * summary.md): remove anything there that is not a regular file or a
 * directory (symlinks, FIFOs, sockets), outside worktree/, before sluice
 * writes or reads artifacts again. Artifacts are never links.
 */
void step__sanitize_run_dir(struct step *s);

/*
 * A resolution's ConflictContext for its reviewer, rebuilt from the store
 * (the tip, run head and paths recorded when the merge conflicted, the
 * rival runs) and git (git's conflict output, both runs' diffs): never
 * conflict.json, which the resolving builder can rewrite. SL_ENOTFOUND when
 * no conflict is recorded.
 */
int step__conflict_context(struct step *s, json_t **out, struct sl_err *err);

/*
 * review-request.json for the current head (tree: its tree), from git
 * objects, the store and the config; diff.patch and files_changed.json are
 * written again from the same commits.
 */
int step__review_request(struct step *s, const char *tree, json_t **out, struct sl_err *err);

/*
 * Write diff.patch and files_changed.json for base..head, and record the
 * files. The patch is kept in s (when the reviewer's REVIEWER_DIFF_MAX_DEFAULT
 * holds it whole) for step__diff_kept().
 */
int step__record_diff(struct step *s, const char *head, struct sl_err *err);

/*
 * The patch of base..head that step__record_diff() computed in this process,
 * into out (bounded by its max) with its full size in *total: 1 when it is
 * kept, 0 when git must be asked.
 */
int step__diff_kept(struct step *s, const char *base, const char *head, struct sl_buf *out,
		    size_t *total);

/*
 * Commit what the run's worktree holds on the run branch: worktree_snapshot()
 * with the run's branch, base and excluded paths and `message`. head gets the
 * branch's tip, *committed 1 when a commit was made. flags: STEP_SNAP_LOCK
 * holds the repository lock around it (a caller that holds it passes 0);
 * STEP_SNAP_NOTHING_OK makes "nothing changed since the base" (SL_ENOTFOUND,
 * head still filled in) a success; STEP_SNAP_QUICK first asks git status,
 * and when there is nothing to commit head is the run's head, no snapshot.
 */
#define STEP_SNAP_LOCK 1u
#define STEP_SNAP_NOTHING_OK 2u
#define STEP_SNAP_QUICK 4u
int step__snapshot(struct step *s, const char *message, unsigned flags, char head[41],
		   int *committed, struct sl_err *err);

/*
 * Finish the merge in the run's resolution worktree (merge_commit_resolution()),
 * checking for markers the conflicted paths recorded in the store, never the
 * ones a builder names; message NULL: git's MERGE_MSG. head gets the commit.
 * The caller holds the repository lock.
 */
int step__commit_resolution(struct step *s, const char *message, char head[41],
			    struct sl_err *err);

/*
 * The merge commit options of the run (merge.message rendered, the
 * trailers, the journal); the strings live in *mm until
 * step__merge_msg_release().
 */
/*
 * Jobs on an engine (runner/jobs.c, build/exec.h). step__remote: 1 when the
 * run's builder and gates run as jobs (executor.kind is not local, and the
 * run has a worktree). step__job_init: the job context of the run's
 * current attempt (base: its worktree's HEAD; theirs: MERGE_HEAD of a
 * resolution), the strings in the caller's buffers. step__job_resume: 1
 * when the run's attempt has an open build or gates job a killed tick left
 * (*to: the state that follows it again).
 */
struct exec_run;
int step__remote(struct step *s);
int step__job_init(struct step *s, const char *purpose, struct exec_run *r, char base[41],
		   char theirs[41], struct sl_err *err);
int step__job_resume(struct step *s, enum run_state *to, struct sl_err *err);

struct step_merge_msg {
	struct sl_buf subject;
	char *title;
	char *journal;
	struct sl_identity who; /* the merge commit's author and committer */
};
#define STEP_MERGE_MSG_INIT { SL_BUF_INIT, NULL, NULL, { { 0 }, { 0 } } }
struct merge_commit_opts;
int step__merge_msg(struct step *s, struct step_merge_msg *mm, struct merge_commit_opts *o,
		    struct sl_err *err);
void step__merge_msg_release(struct step_merge_msg *mm);

/*
 * Before an approved run goes on: nothing changed in its worktree or on
 * its branch since the review, and its tree is the approved one. 0 when it
 * holds; STEP_SENT_BACK when the run was sent back (gating or reviewing),
 * STEP_STOP when it failed, or an error.
 */
int step__approval_holds(struct step *s, struct sl_err *err);

/*
 * The merge train (runner/landing.c). step__landing_car: 0 with the
 * run's green car that is to land now (*car the caller's:
 * store_car_release(); zeroed when the head is on the target already, a
 * landing cut short), or STEP_SENT_BACK when the run went back to approved
 * (the train decides again). step__train_landed: the run landed as mr->commit: train.json,
 * the car out of the train, its ref deleted.
 */
struct store_car;
struct merge_commit_result;
int step__landing_car(struct step *s, struct store_car *car, struct sl_err *err);
int step__train_landed(struct step *s, const struct merge_commit_result *mr, struct sl_err *err);
/*
 * The train module's view of a run's step (step__train_ops: its callbacks,
 * *tr the step's run), the train read at the target's tip now, and how the
 * run's head came onto the target `tip` (enum step_landed, or an error;
 * *a: the target's alarm when held). runner/landing.c.
 */
struct train;
struct train_ops;
struct train_run;
enum step_landed {
	LANDED_NOT,      /* it is not on the target */
	LANDED_OURS,     /* sluice's landing of its green car, cut short by a crash */
	LANDED_HELD,     /* someone else put it there: the target's alarm holds every merge */
	LANDED_ACCEPTED, /* someone else put it there, and a person accepted it */
};
const struct train_ops *step__train_ops(struct step *s, struct train_ops *ops,
					struct train_run *tr);
int step__train_load(struct step *s, struct train *t, struct sl_err *err);
int step__landed_how(struct step *s, const char *tip, struct target_alert *a,
		     struct sl_err *err);
/* The runs landed on tip's first-parent line since base, newest first (*ids NULL-terminated). */
int step__rivals_between(struct step *s, const char *tip, const char *base, char ***ids,
			 struct sl_err *err);

/*
 * The run's merge on `tip` conflicts (textual: git's paths) or its merge
 * gates failed there (semantic: gates_json, the car's results): the
 * conflict is recorded in the store and conflict.json, and the run goes
 * to resolving, or to merge_conflict when resolution is off or used up.
 */
int step__on_conflict(struct step *s, const char *tip, const char *why, struct sl_err *err);
int step__on_semantic(struct step *s, const char *tip, const char *gates_json,
		      struct sl_err *err);

/*
 * The conflict handed to a person (docs/builders.md "A person resolves"):
 * the run moves to merge_conflict (reason `why`) with its worktree clean,
 * no merge under way and nothing staged, at the run's head before the
 * merge (from_conflict: the run head the store recorded with the conflict,
 * which the run's head_commit becomes again) or at its head_commit (a
 * person's resolution stays), so that `git merge <target>` of the printed
 * steps works as printed. step__person_resolved: 1 when the run's current
 * attempt is a person's resolution (`sluice retry` of a merge_conflict run
 * records it with the agent STEP_PERSON_AGENT "(name)").
 */
#define STEP_PERSON_AGENT "person"
int step__to_person(struct step *s, int from_conflict, const char *why, struct sl_err *err);
int step__person_resolved(struct step *s);
/* 1 when commit `head` holds `tip` (is it or a descendant of it), hex ids. */
int step__holds(struct step *s, const char *head, const char *tip);

/*
 * A run's worktree (runner/worktrees.c). step__set_base: the base, the
 * target's tip, once (a target that is gone: SL_EINVALID).
 * step__prepare_worktree: under the repository lock, the base, the worktree
 * (*reused: enum step_worktree_from), worktree.share and .copy; SL_EINVALID
 * for what is final. step__run_setup: worktree.setup in it.
 */
int step__set_base(struct step *s, struct sl_err *err);
/* Where step__prepare_worktree's worktree came from (*reused). */
enum step_worktree_from { STEP_WT_FRESH = 0, STEP_WT_KEPT = 1, STEP_WT_POOL = 2 };
int step__prepare_worktree(struct step *s, int *reused, struct sl_err *err);
int step__run_setup(struct step *s, struct sl_err *err);

/*
 * The run's worktree made again on its branch (as it is: nothing moves),
 * with worktree.share, .copy and .setup, when it is gone (a person removed
 * it): for the merge train's gates. An error leaves the run as it is.
 */
int step__worktree_again(struct step *s, struct sl_err *err);

/*
 * The run's worktree mode (runner/worktrees.c) (its work order's
 * `worktree:`, else worktree.mode; read-write for a resolution).
 */
enum sl_worktree_mode step__worktree_mode(struct step *s);
/* Report runs (runner/report.c). */
struct reviewer_verdict;
struct sl_proc_result;
/*
 * Before a read-only or none builder: read-only puts the worktree back at
 * the base for an attempt after the first (*cwd NULL: the worktree); none
 * makes <run>/scratch/ afresh with prompt.md and work_order.md (*cwd, new).
 */
int step__report_before(struct step *s, enum sl_worktree_mode m, const char *prompt, char **cwd,
			struct sl_err *err);
/* After it: the no_write guard (read-only), then the reviewer or the retry rules. */
int step__report_built(struct step *s, enum sl_worktree_mode m, const struct sl_proc_result *res,
		       const char *how, struct sl_err *err);
/* A report run's verdict: report.md, then reported, rejected or the retry rules. */
int step__report_verdict(struct step *s, const struct reviewer_verdict *v, const char *tree,
			 const char *comments, struct sl_err *err);

/* The handlers, one per step of the state table (enum run_step; runner/advance.c). */
typedef int (*step_fn)(struct step *s, struct sl_err *err);
/* The handler of a run state's step; NULL for a state no step moves on. */
step_fn runner__step_for(enum run_state state);
int step_start(struct step *s, struct sl_err *err);
int step_train(struct step *s, struct sl_err *err);
int step_prepare(struct step *s, struct sl_err *err);
int step_build(struct step *s, struct sl_err *err);
int step_gate(struct step *s, struct sl_err *err);
int step_review(struct step *s, struct sl_err *err);
int step_merge(struct step *s, struct sl_err *err);
int step_resolve(struct step *s, struct sl_err *err);

/*
 * A failed attempt: apply the retry rules. failed: names of failed gates
 * and pseudo-gates ("builder", "review"). Moves the run to building (next
 * attempt) or failed; in resolve mode to resolving or merge_conflict.
 */
int step__retry_or_fail(struct step *s, const char *const *failed, int builder_exit,
			const char *why, struct sl_err *err);


/*
 * Reconcile: runs in an active state whose run lock is free were
 * interrupted: they become `interrupted` and then `queued` again. Orphan
 * worktrees and run/ branches are counted (and logged).
 */
int runner_reconcile(struct sl_ctx *ctx, int *requeued, int *orphans, struct sl_err *err);


#endif
