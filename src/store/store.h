#ifndef SL_STORE_H
#define SL_STORE_H
/*
 * The state database: one SQLite file (.system/sluice.db) in WAL mode.
 * store_open() applies the migrations of schema/db/ in order. Every write
 * runs inside store_begin() (BEGIN IMMEDIATE, so two sluice processes never
 * deadlock half-way through a transaction) and store_commit().
 *
 * Work orders: store/workorders.c. Runs, attempts, events: store/runs.c.
 * The states of runs and work orders, and the other names the database
 * checks: store/state.c (enum run_state and its table, below).
 */
#include <sqlite3.h>
#include <stdint.h>
#include "core/err.h"

#define STORE_APPLICATION_ID 1397506885 /* 'SLCE' */

/*
 * The states and other named values the database holds, as enums with one
 * table each (store/state.c): the names are the ones schema/db/001 checks,
 * and nothing outside that table spells them. docs/design.md, Runs and their states.
 */

/* A run's state. */
enum run_state {
	RUN_QUEUED,
	RUN_PREPARING,
	RUN_BUILDING,
	RUN_GATING,
	RUN_REVIEWING,
	RUN_AWAITING_REVIEW,
	RUN_APPROVED,
	RUN_MERGING,
	RUN_MERGED,
	RUN_RESOLVING,
	RUN_MERGE_CONFLICT,
	RUN_REJECTED,
	RUN_FAILED,
	RUN_ABANDONED,
	RUN_INTERRUPTED,
	RUN_REPORTED, /* a read-only or no-worktree run's report was approved: no merge */
	RUN_STATE_COUNT
};

/*
 * What the runner does with a run in a state: runner/advance.c maps each
 * step to its function. RUN_STEP_NONE: nothing (final, or a person decides).
 */
enum run_step {
	RUN_STEP_NONE,
	RUN_STEP_START,   /* queued: take the run, go preparing */
	RUN_STEP_PREPARE, /* the worktree */
	RUN_STEP_BUILD,   /* the builder, the snapshot */
	RUN_STEP_GATE,
	RUN_STEP_REVIEW,
	RUN_STEP_LAND,    /* approved: go merging */
	RUN_STEP_MERGE,
	RUN_STEP_RESOLVE, /* set up the conflict for the builder */
	RUN_STEP_COUNT
};

/* A set of run states: bit (1u << state) for each. */
typedef unsigned run_state_set;
#define RUN_SET(s) (1u << (s))
#define RUN_STATES_ALL ((1u << RUN_STATE_COUNT) - 1)

struct run_state_info {
	const char *name;
	unsigned final : 1;        /* finished: the machine never moves it (a person's retry may) */
	unsigned active : 1;       /* a live sluice process must be working on it */
	unsigned runnable : 1;     /* a tick picks it up and moves it on */
	unsigned needs_person : 1; /* only a person moves it on */
	unsigned waits : 1;        /* on a person or a later tick (the reviewer, a deferred merge) */
	enum run_step step;
	run_state_set next; /* where it may move, besides itself (a new reason) */
};

/* The row of `s` (borrowed, static); NULL when `s` is out of range. */
const struct run_state_info *run_state_info(enum run_state s);
/* Its name as the database and every --json output spell it; "?" when out of range. */
const char *run_state_name(enum run_state s);
/* The state named `name`: 0, or -1 when it is no run state (NULL, or a newer database's). */
int run_state_parse(const char *name, enum run_state *out);
/* 1 when `name` is the name of `s` (name may be NULL). */
int run_state_is(const char *name, enum run_state s);
int run_state_is_final(enum run_state s);
int run_state_is_active(enum run_state s);
int run_state_is_runnable(enum run_state s);
int run_state_needs_person(enum run_state s);
int run_state_waits(enum run_state s);
enum run_step run_state_step(enum run_state s);
/* 1 when a run may move from `from` to `to` (staying, with a new reason, always may). */
int run_state_can_move(enum run_state from, enum run_state to);
/* The states for which pred() is 1, e.g. run_states_where(run_state_is_runnable). */
run_state_set run_states_where(int (*pred)(enum run_state));

/* A run's mode: building the work order, or resolving a merge conflict. */
enum run_mode { RUN_MODE_BUILD, RUN_MODE_RESOLVE, RUN_MODE_COUNT };
const char *run_mode_name(enum run_mode m);
int run_mode_parse(const char *name, enum run_mode *out);

/* A run's merge_status column (SQL NULL: not approved yet). */
enum run_merge_status {
	RUN_MERGE_STATUS_PENDING,
	RUN_MERGE_STATUS_MERGED,
	RUN_MERGE_STATUS_CONFLICT,
	RUN_MERGE_STATUS_COUNT
};
const char *run_merge_status_name(enum run_merge_status m);

/* A car's status in its target's merge train (table train_cars). */
enum train_status {
	TRAIN_WAITING, /* beyond merge.train_depth: no merge commit yet */
	TRAIN_PENDING, /* its merge commit is made, the merge gates have not run on it */
	TRAIN_TESTING, /* the merge gates run on it (tester: the process) */
	TRAIN_GREEN,   /* they passed on exactly its commit */
	TRAIN_RED,     /* they failed: out of the line, waits to be resolved */
	TRAIN_CONFLICT, /* its merge with the car ahead conflicts: out of the line */
	TRAIN_STATUS_COUNT
};
const char *train_status_name(enum train_status t);
int train_status_parse(const char *name, enum train_status *out);

/* A conflict's kind (table run_conflicts). */
enum conflict_kind { CONFLICT_TEXTUAL, CONFLICT_SEMANTIC, CONFLICT_KIND_COUNT };
const char *conflict_kind_name(enum conflict_kind k);
int conflict_kind_parse(const char *name, enum conflict_kind *out);

/* A work order's state (what sluice made of it). */
enum wo_state {
	WO_INVALID,
	WO_WAITING,
	WO_READY,
	WO_RUNNING,
	WO_DONE,
	WO_FAILED,
	WO_BLOCKED,
	WO_SKIPPED,
	WO_STATE_COUNT
};
const char *wo_state_name(enum wo_state s);
int wo_state_parse(const char *name, enum wo_state *out);
/* 1 when `name` is the name of `s` (name may be NULL). */
int wo_state_is(const char *name, enum wo_state s);

/* A work order's status field (what its author says). */
enum wo_status {
	WO_STATUS_READY,
	WO_STATUS_DRAFT,
	WO_STATUS_BACKLOG,
	WO_STATUS_HOLD,
	WO_STATUS_DONE,
	WO_STATUS_COUNT
};
const char *wo_status_name(enum wo_status s);
int wo_status_parse(const char *name, enum wo_status *out);
/* 1 when `name` is the name of `s` (name may be NULL). */
int wo_status_is(const char *name, enum wo_status s);

struct store;

/* Open (creating if needed) and migrate. *out is the caller's: store_free(). */
int store_open(struct store **out, const char *path, struct sl_err *err);
/*
 * 0 when SQLite can open a database at path; SL_EINVALID, saying so and what
 * to do, when path is longer than SQLite takes (504 bytes with its unix VFS:
 * 512 for path + "-journal").
 * store_open() checks it; `sluice init` too, before it creates anything.
 */
int store_path_check(const char *path, struct sl_err *err);
void store_free(struct store *st);

/* The schema version (PRAGMA user_version) of an open store. */
int store_version(struct store *st);

/* The underlying handle, borrowed, for the store's own modules and tests. */
sqlite3 *store_db(struct store *st);

/* BEGIN IMMEDIATE (waits up to the busy timeout for another writer). */
int store_begin(struct store *st, struct sl_err *err);
int store_commit(struct store *st, struct sl_err *err);
/* Roll back if a transaction is open; safe to call when none is. */
void store_rollback(struct store *st);

/*
 * Append an event (inside a transaction). Any of run_id, wo_id, from, to
 * may be NULL.
 */
int store_event_add(struct store *st, const char *run_id, const char *wo_id, const char *from,
		    const char *to, const char *reason, struct sl_err *err);

/*
 * Runs, attempts, files changed (schema/db/001_init.sql). Every state
 * change is one transaction that also appends an event (docs/design.md, Runs and their
 * states): store_run_transition() is the only way a run's state moves.
 */

struct store_run {
	char *id;
	char *work_order_id;
	char *wo_content_hash;
	enum run_state state;
	char *reason;
	char *target;
	char *branch_name;
	char *base_commit;
	char *head_commit;
	char *approved_tree;
	char *merge_commit;
	char *merge_status;
	char *conflict_with_run_id;
	char *reviewer;
	enum run_mode mode;
	int attempt;
	int resolve_attempts;
	int review_tries;
	int64_t owner_pid;
	char *owner_start;
	int64_t created_ms;
	int64_t updated_ms;
	int64_t finished_ms;
};

/*
 * Insert a new run, queued (inside the caller's transaction), in run->mode.
 * Sets created/updated times; appends the creation event.
 */
int store_run_insert(struct store *st, const struct store_run *run, struct sl_err *err);

/*
 * Look a run up by any name a person uses for it (store_run_resolve()).
 * SL_ENOTFOUND, SL_EAMBIGUOUS (the message lists the matches); SL_ERROR for
 * a state or mode this sluice does not know. *out is the caller's:
 * store_run_release().
 */
int store_run_get(struct store *st, const char *name, struct store_run *out,
		  struct sl_err *err);

/*
 * The full id of the run `name` names, into id[n]: its full id; a work-order
 * id (that work order's latest run); else the one run whose id it begins,
 * whose random part it is (the suffix of the branch name, run/W1-vb5n92jk:
 * vb5n92jk) or whose branch it names (with or without "run/").
 * SL_ENOTFOUND; SL_EAMBIGUOUS when it names several (the message lists up
 * to six, with their work orders and states); SL_EINVALID for "".
 */
int store_run_resolve(struct store *st, const char *name, char *id, size_t n,
		      struct sl_err *err);

/*
 * Move a run from `from` to `to` with a reason, in its own transaction (or
 * the caller's when one is open: pass in_tx=1), with an event (the states'
 * names). SL_ECONFLICT if the run is no longer in `from`; SL_EINVALID for a
 * move the state table does not allow (run_state_can_move). A final state
 * also sets finished_ms.
 */
int store_run_transition(struct store *st, const char *run_id, enum run_state from,
			 enum run_state to, const char *reason, int in_tx, struct sl_err *err);

/* Set the reason of the current state without moving (with an event when it changes). */
int store_run_set_reason(struct store *st, const char *run_id, const char *reason,
			 struct sl_err *err);

/*
 * Update columns of a run: `fields` is a NULL-terminated list of
 * name, value pairs (value NULL sets SQL NULL). Only the text columns
 * branch_name, base_commit, head_commit, approved_tree, merge_commit,
 * merge_status, conflict_with_run_id, reviewer, mode, owner_start and the
 * integer columns attempt, resolve_attempts, review_tries, owner_pid
 * (decimal text) are accepted; others are SL_EINVALID. Runs in its own
 * transaction unless in_tx.
 */
int store_run_update(struct store *st, const char *run_id, const char *const *fields, int in_tx,
		     struct sl_err *err);

/*
 * Runs in one of `states` (RUN_STATES_ALL: any; a tick asks for a few, so
 * as not to load every finished run), of work order wo_id (NULL: any),
 * newest first. *out is the caller's: store_runs_free(*out, *n).
 */
int store_runs_list(struct store *st, run_state_set states, const char *wo_id,
		    struct store_run **out, size_t *n, struct sl_err *err);

/* The same, `limit` runs (-1: all) from the `offset`th (sluice serve's pages). */
int store_runs_page(struct store *st, run_state_set states, const char *wo_id, int64_t offset,
		    int64_t limit, struct store_run **out, size_t *n, struct sl_err *err);

/* How many runs are in one of `states` (and of work order wo_id, unless NULL); or a negative error. */
int store_runs_count(struct store *st, run_state_set states, struct sl_err *err);
int store_runs_count_of(struct store *st, run_state_set states, const char *wo_id,
			struct sl_err *err);

void store_run_release(struct store_run *run);
void store_runs_free(struct store_run *runs, size_t n);

/*
 * A run as JSON (store/run_json.c), the one encoder of `runs --json`,
 * `status --json` and the run of `show --json`: the keys of
 * schema/run.schema.json, named like the runs table's columns, times in ms
 * (finished_ms null until the run first ends). With STORE_RUN_JSON_ALIASES also the keys
 * `show --json` used in 0.1 (branch, base, head, conflict_with_run,
 * created_at, finished_at: ISO 8601), deprecated, removed in 0.3.
 * Returns a new reference (json_decref), NULL when out of memory.
 */
struct json_t;
#define STORE_RUN_JSON_ALIASES 0x1u
struct json_t *store_run_json(const struct store_run *r, unsigned flags);

/* Attempts. */
int store_attempt_start(struct store *st, const char *run_id, int n, enum run_mode mode,
			struct sl_err *err);
/*
 * The agent attempt n ran (a name of builders:, a preset, ...) and its
 * session ("new" or "keep"), recorded once it started.
 */
int store_attempt_set_agent(struct store *st, const char *run_id, int n, const char *agent,
			    const char *session, struct sl_err *err);
/* The agent attempt n ran, a new string (free()), or NULL: none recorded (or no memory). */
char *store_attempt_agent(struct store *st, const char *run_id, int n);

/*
 * Jobs on an engine (table jobs, migration 9; build/exec.h): recorded when
 * submitted, ended when collected or cancelled. A job is "open" until then.
 */
struct store_job {
	int64_t id;
	char *run_id;
	int attempt;
	char *purpose;       /* "build", "gates" or "train" */
	char *handle;        /* "slurm:1234" */
	char *refs;          /* its refs' prefix on executor.remote */
	int64_t submitted_at;
	int64_t ended_at;    /* 0: open */
	char *outcome;       /* NULL while open */
};
#define STORE_JOB_INIT { 0 }

int store_job_add(struct store *st, const char *run_id, int attempt, const char *purpose,
		  const char *handle, const char *refs, int64_t *id_out, struct sl_err *err);
/* The open job of run/attempt/purpose (attempt < 0: any): SL_ENOTFOUND when none. */
int store_job_open(struct store *st, const char *run_id, int attempt, const char *purpose,
		   struct store_job *out, struct sl_err *err);
int store_job_end(struct store *st, int64_t id, const char *outcome, struct sl_err *err);
/*
 * The engine's handle of an open job recorded before its submission (with
 * the handle exec_pending() makes: the name it is submitted under).
 */
int store_job_set_handle(struct store *st, int64_t id, const char *handle, struct sl_err *err);
/* Every job of a run, oldest first (open ones included). *out: store_jobs_free(). */
int store_jobs_of_run(struct store *st, const char *run_id, struct store_job **out, size_t *n,
		      struct sl_err *err);
void store_job_release(struct store_job *j);
void store_jobs_free(struct store_job *v, size_t n);

/* The head commit attempt n of a run recorded (hex, into head[len]); SL_ENOTFOUND when none. */
int store_attempt_head(struct store *st, const char *run_id, int n, char *head, size_t len,
		       struct sl_err *err);
/*
 * Attempt n ended without a word from its builder (the process running it
 * died): finished at end_ms (not before its start) with `outcome`, its
 * builder's exit unknown, *wall_ms its wall time. 1 when it was so ended, 0
 * when it had ended already (or there is no such attempt).
 */
int store_attempt_interrupted(struct store *st, const char *run_id, int n, int64_t end_ms,
			      const char *outcome, int64_t *wall_ms, struct sl_err *err);
int store_attempt_finish(struct store *st, const char *run_id, int n, int builder_exit,
			 const char *outcome, const char *head, struct sl_err *err);
/*
 * The wall time of a run's attempts (docs/budgets.md, budget.minutes): each
 * finished one's, and attempt `current` until now_ms while it runs. An
 * attempt a killed tick left unfinished (not current) counts nothing.
 */
int store_attempts_wall(struct store *st, const char *run_id, int current, int64_t now_ms,
			int64_t *out, struct sl_err *err);

/* Replace the files a run changed (inside its own transaction). */
struct store_file_change {
	char status;
	const char *path;
};
int store_files_changed_set(struct store *st, const char *run_id,
			    const struct store_file_change *files, size_t n, struct sl_err *err);

/*
 * Merged runs (not `run_id`) that changed any of `paths` and merged after
 * `since_ms`, newest first: their ids (a NULL-terminated array, the
 * caller's: free each and the array).
 */
int store_rivals(struct store *st, const char *run_id, const char *const *paths, size_t npaths,
		 int64_t since_ms, char ***out, struct sl_err *err);

/*
 * The merged run whose merge commit (the landing on the target) is
 * `commit` (full hex): *run_id is its id (the caller's, free()), or NULL
 * when no run landed it (a person's commit). The rival of a conflict is
 * found this way from the landings git blame names (docs/builders.md,
 * "The rival").
 */
int store_run_by_landing(struct store *st, const char *commit, char **run_id,
			 struct sl_err *err);

/*
 * The paths both runs changed (their files_changed rows), in path order:
 * *out is NULL-terminated and the caller's (sl_strv_free); an empty list
 * when they share none.
 */
int store_files_common(struct store *st, const char *a, const char *b, char ***out,
		       struct sl_err *err);

/* The event stream (of one run, or all when run_id is NULL) after seq `since`, oldest first. */
struct store_event {
	int64_t seq;
	int64_t at_ms;
	char *run_id;
	char *work_order_id;
	char *from_state;
	char *to_state;
	char *reason;
};
int store_events_list(struct store *st, const char *run_id, int64_t since,
		      struct store_event **out, size_t *n, struct sl_err *err);
void store_events_free(struct store_event *ev, size_t n);

/* The newest event's seq (0 when there is none). */
int64_t store_events_last(struct store *st);

/*
 * Claim a work order for a new run, in one BEGIN IMMEDIATE transaction:
 * the work order must be ready (its content hash `wo_hash`) with no
 * unfinished run; the run is inserted as queued and the work order becomes
 * running. SL_ECONFLICT when someone else claimed it first.
 */
int store_run_claim(struct store *st, const struct store_run *run, struct sl_err *err);





/*
 * What a run's next step decides on, kept here rather than in the run
 * folder, which builders, gates and resolvers can write (schema/db/003).
 *
 * The retry rules' active overrides (build/build.h): rule indices, -1 for
 * none. A run without a row reads as all -1 (the rules start over).
 */
struct store_retry_state {
	int builder_rule;
	int prompt_rule;
	int reset_rule;
	int session_rule;
	int rules_from; /* the rules count attempts after this one (a person's retry; 0: all) */
};
int store_retry_get(struct store *st, const char *run_id, struct store_retry_state *out,
		    struct sl_err *err);
/* Replace it, in one transaction. */
int store_retry_set(struct store *st, const char *run_id, const struct store_retry_state *rs,
		    struct sl_err *err);
/* Forget it: the next attempt starts the rules over. */
int store_retry_clear(struct store *st, const char *run_id, struct sl_err *err);

/*
 * The merge conflict a resolution starts from: the target tip and the run
 * head that conflicted, and the paths git found conflicted.
 * store_conflict_set replaces what was recorded, in one transaction;
 * store_conflict_get is SL_ENOTFOUND when nothing was. *out is the
 * caller's: store_conflict_release().
 */
struct store_conflict {
	char *target_tip;
	char *run_head;
	char **paths; /* npaths entries, sorted */
	size_t npaths;
	enum conflict_kind kind;
	char *gates_json; /* semantic: the failed merge gates' results (JSON array), or NULL */
};
int store_conflict_set(struct store *st, const char *run_id, const char *target_tip,
		       const char *run_head, const char *const *paths, size_t npaths,
		       struct sl_err *err);
/* The same for a semantic conflict: no paths, the merge gates' results instead. */
int store_conflict_set_semantic(struct store *st, const char *run_id, const char *target_tip,
				const char *run_head, const char *gates_json, struct sl_err *err);
int store_conflict_get(struct store *st, const char *run_id, struct store_conflict *out,
		       struct sl_err *err);
void store_conflict_release(struct store_conflict *c);


/*
 * Work-order rows (table work_orders) and inbox errors (table inbox_errors).
 * The file in the inbox is the source of truth; a row is what sluice made of
 * its latest revision, and its state: invalid, waiting, ready, running,
 * done, failed, blocked, skipped, each with a reason for people.
 *
 * Functions named *_tx run inside the caller's transaction (store_begin);
 * the others open and commit their own. Every state change appends an event.
 */
#include <stddef.h>
#include "core/buf.h"

struct store_wo {
	char *id, *path, *content_hash, *fields_json, *body, *title, *created_at, *status;
	char *state, *reason;
	int priority;
	int present; /* 0 once the file is gone from the inbox */
	int64_t first_seen_ms, updated_ms;
};

#define STORE_WO_INIT                                                                              \
	{                                                                                          \
		0                                                                                  \
	}

/* Free the contents of one row / of an array of rows (and the array). */
void store_wo_release(struct store_wo *wo);
void store_wo_list_free(struct store_wo *v, size_t n);

/* One row (without the content). SL_ENOTFOUND if there is none. */
int store_wo_get(struct store *st, const char *id, struct store_wo *out, struct sl_err *err);

/* Every row, by id. *out is the caller's: store_wo_list_free(*out, *n). */
int store_wo_list(struct store *st, struct store_wo **out, size_t *n, struct sl_err *err);

/* The exact bytes of the revision a row holds (appended to out). */
int store_wo_content(struct store *st, const char *id, struct sl_buf *out, struct sl_err *err);

/*
 * Insert or replace a row with all its columns (first_seen_ms is kept for
 * an existing row). No event: the caller adds one for a state change.
 */
int store_wo_put_tx(struct store *st, const struct store_wo *wo, const void *content, size_t len,
                    struct sl_err *err);

/* Set present = 0 and the reason, keep the state; appends an event. */
int store_wo_mark_gone_tx(struct store *st, const char *id, const char *reason, struct sl_err *err);

/*
 * Set a work order's state and reason, appending an event (from, to,
 * reason). For the runner: running when a run starts, done when it merged,
 * failed when it failed or was abandoned. SL_ENOTFOUND for an unknown id,
 * SL_EINVALID for a state out of range.
 */
int store_wo_set_state_tx(struct store *st, const char *id, enum wo_state state,
                          const char *reason, struct sl_err *err);
int store_wo_set_state(struct store *st, const char *id, enum wo_state state, const char *reason,
                       struct sl_err *err);

/* Inbox problems of files without a usable id: one row per file. */
struct store_inbox_error {
	char *path;
	char *message;
};

/* Replace every inbox error with v[0..n). */
int store_inbox_errors_replace_tx(struct store *st, const struct store_inbox_error *v, size_t n,
                                  struct sl_err *err);
int store_inbox_errors_list(struct store *st, struct store_inbox_error **out, size_t *n,
                            struct sl_err *err);
void store_inbox_errors_free(struct store_inbox_error *v, size_t n);

/*
 * What the runs say about each work order that has runs: its unfinished
 * runs (any revision, state not final) and its latest run of each revision.
 */
struct store_wo_run {
	char *wo_id;
	char *content_hash; /* the revision it ran */
	char *run_id;
	enum run_state state;
	char *reason;
	int unfinished; /* its state is not final (run_state_is_final) */
};

/* Every work order's latest run per revision, and every active run; by wo_id. */
int store_wo_runs(struct store *st, struct store_wo_run **out, size_t *n, struct sl_err *err);
void store_wo_runs_free(struct store_wo_run *v, size_t n);


/*
 * Watching the target branch (schema/db/002_target_watch.sql): the tips
 * sluice observed or moved the target to, the commits recorded as the
 * user's, and the unreviewed landings found (alerts). Functions marked
 * "in the caller's transaction" need store_begin() first.
 */

/* The root and last tip recorded for `target` (new strings). SL_ENOTFOUND: none yet. */
int store_target_get(struct store *st, const char *target, char **root, char **tip,
		     struct sl_err *err);

/* Record `tip` as the last tip (and `root` when the row is new). In the caller's transaction. */
int store_target_set(struct store *st, const char *target, const char *root, const char *tip,
		     struct sl_err *err);

/*
 * Record a commit as the user's; how: "observed" or "accepted" (an
 * accepted commit stays accepted). In the caller's transaction.
 */
int store_user_commit_add(struct store *st, const char *target, const char *commit,
			  const char *how, struct sl_err *err);

/* 1 if the commit is recorded as the user's, 0 if not, or a negative error. */
int store_user_commit_has(struct store *st, const char *target, const char *commit,
			  struct sl_err *err);

/*
 * Open an alert (an unreviewed landing) for `commit`: 1 when it is new (or
 * was cleared before), 0 when it is open already. In the caller's transaction.
 */
int store_alert_open(struct store *st, const char *target, const char *commit,
		     const char *run_id, struct sl_err *err);

struct store_alert {
	char *commit;
	char *run_id;   /* NULL: unknown */
	int64_t found_ms;
};

/* The open alerts of `target`, oldest first. *out: store_alerts_free(*out, *n). */
int store_alerts_list(struct store *st, const char *target, struct store_alert **out, size_t *n,
		      struct sl_err *err);
void store_alerts_free(struct store_alert *v, size_t n);

/* Clear the open alert of `commit`. In the caller's transaction. */
int store_alert_clear(struct store *st, const char *target, const char *commit,
		      struct sl_err *err);

/* The merged run whose merge commit is `commit` (new string in *run), or SL_ENOTFOUND. */
int store_landing_run(struct store *st, const char *commit, char **run, struct sl_err *err);

/*
 * What the runs recorded: one row per run (head, base, branch) and one per
 * attempt with a head (head, the run's base; branch NULL). Any may be NULL.
 */
struct store_run_commit {
	char *run_id;
	char *head;
	char *base;
	char *branch;
};

/* All of them. *out: store_run_commits_free(*out, *n). */
int store_run_commits(struct store *st, struct store_run_commit **out, size_t *n,
		      struct sl_err *err);
void store_run_commits_free(struct store_run_commit *v, size_t n);

/*
 * Typed data past the store (store/typed.c): a work order's fields
 * (store_wo.fields_json) and a run's gate results (store_conflict and
 * store_car .gates_json) are JSON text in the database, read here and only
 * here. Bad stored text is SL_EINVALID naming the work order or run, and
 * logged as a warning; *out is then as for nothing stored (fields: all is
 * NULL and the lists empty; gates: none). The strings are borrowed from
 * `all`; release with store_wo_fields_release() / store_gates_release().
 */
struct json_t;

struct store_wo_fields {
	struct json_t *all;      /* the object (prompt templates and the reviewer read all of it) */
	const char *worktree;    /* `worktree:`, or NULL */
	const char **criteria;   /* the strings of acceptance_criteria, NULL-terminated */
	const char **depends_on; /* the strings of depends_on, NULL-terminated */
	const char *revert_commit; /* `revert: {commit}`: a revert run of that landing, or NULL */
	const char *revert_gate;   /* `revert: {gate}`: the watch gate its car runs too, or NULL */
};
/* json NULL: no fields (an empty object). */
int store_wo_fields_parse(const char *wo_id, const char *json, struct store_wo_fields *out,
			  struct sl_err *err);
void store_wo_fields_release(struct store_wo_fields *f);

struct store_gate {
	const char *name;    /* or NULL */
	int passed;          /* `passed` is true */
	int has_exit_code;   /* exit_code is an integer (else exit_code is 0) */
	int exit_code;
	int64_t duration_ms; /* 0 when missing */
	const char *log;     /* "gates/<name>.log" or NULL */
	const char *output;  /* the log's tail, or NULL */
	struct json_t *json; /* the result as stored, within `all` */
};
struct store_gates {
	struct json_t *all; /* the array as stored; NULL when none was */
	struct store_gate *v;
	size_t n;
};
/* json NULL: no results (all NULL, n 0). */
int store_gates_parse(const char *run_id, const char *json, struct store_gates *out,
		      struct sl_err *err);
void store_gates_release(struct store_gates *g);

/*
 * The merge train (docs/design.md, The merge train; table train_cars): an approved run
 * is a car of its target's train until it lands or leaves. Cars are in
 * `seq` order (a run joins at the end).
 */
struct store_car {
	char *run_id;
	char *target;
	int64_t seq;
	enum train_status status;
	char *base;       /* the commit the car merges into, or NULL */
	char *head;       /* the run head it merges */
	char *commit;     /* its merge commit, or NULL */
	char *tree;
	char *ahead;      /* the run of the car it is built on; NULL: the target's tip */
	char *tester;     /* owner (core/lock.h) running its gates, or NULL */
	char *gates_json; /* the merge gates' results on `commit`, or NULL */
	int64_t joined_ms, started_ms, tested_ms, updated_ms;
	/* merge.batch: green by the test of a later car of its chain (its run, the
	 * commit tested); NULL: the car's own test, or none */
	char *covered_by, *covered_commit;
	/* merge.lanes: the car's lanes (bit i: lane i; 0: all, a wide car) and the
	 * commit its green was tested on when built again since (NULL: commit) */
	int64_t lanes;
	char *lane_commit;
	int64_t lanes_key; /* the merge.lanes the lanes were read under (train_lanes_key()) */
};

/*
 * Put run_id in target's train with `head` (at the end), unless it is in
 * already with that head (kept as it is: a worker killed while testing
 * finds its car again); with another head the car starts over, at the end.
 * *joined: 1 when it joined now. lanes: the car's (merge.lanes; 0: all), with
 * the key of the lanes they were read under above bit 16.
 */
int store_train_join(struct store *st, const char *run_id, const char *target, const char *head,
		     int64_t lanes, int *joined, struct sl_err *err);
/* The newest test's time among target's cars (0: none, or unknown): a tick's round tested a car. */
int64_t store_train_tested_last(struct store *st, const char *target);
/* The cars of `target`, in order. *out: store_cars_free(*out, *n). */
int store_train_list(struct store *st, const char *target, struct store_car **out, size_t *n,
		     struct sl_err *err);
/* One car; SL_ENOTFOUND when the run is in no train. */
int store_train_get(struct store *st, const char *run_id, struct store_car *out,
		    struct sl_err *err);
/* Write the car's status, base, commit, tree, ahead, tester, gates and times. */
int store_train_put(struct store *st, const struct store_car *c, struct sl_err *err);
/*
 * The landing intent (migration 11): `commit`, the car's green commit, is
 * what sluice sets out to land now. SL_ENOTFOUND when the run's car is not
 * green with that commit.
 */
int store_train_landing_set(struct store *st, const char *run_id, const char *commit,
			    struct sl_err *err);
/*
 * The run (*run_id, the caller's) whose green car sluice set out to land
 * as exactly `commit`; SL_ENOTFOUND when none did.
 */
int store_train_landing_run(struct store *st, const char *commit, char **run_id,
			    struct sl_err *err);
/* Take the run's car out of the train (0 when it had none). */
int store_train_leave(struct store *st, const char *run_id, struct sl_err *err);
void store_car_release(struct store_car *c);
void store_cars_free(struct store_car *v, size_t n);

/*
 * The notifications outbox (schema/db/005_notify.sql, 010_notify_retry.sql;
 * notify/notify.c delivers it): one row per move of a run into merged,
 * merge_conflict, rejected or failed, added by store_run_transition() in the
 * move's own transaction. What the event says is kept as it was at the move.
 */
#define STORE_NOTIFY_COMMAND 0x1u /* `sent` bits: delivered to notify.command */
#define STORE_NOTIFY_URL 0x2u     /* delivered to notify.url */
#define STORE_NOTIFY_DELIVERED "delivered"     /* outcomes */
#define STORE_NOTIFY_GIVEN_UP "given_up"
#define STORE_NOTIFY_NO_NOTIFIER "no_notifier" /* nothing was configured to tell */

struct store_notify {
	int64_t seq;        /* the move's events row */
	char *event;        /* the state moved into */
	char *run_id, *work_order_id, *title, *from_state, *reason, *target;
	char *commit;       /* merged: the merge commit; else NULL */
	int64_t at_ms;
	unsigned sent;      /* STORE_NOTIFY_COMMAND | STORE_NOTIFY_URL */
	int tries;          /* deliveries that failed */
	char *last_error;
	int done;           /* 0: pending */
	char *outcome;      /* NULL while pending */
	int64_t next_ms;    /* pending: not tried again before this time (0: due) */
	char *path;         /* invalid_work_order: the file (run_id is ""); else NULL */
	char *period;       /* budget_spent: "day 2026-11-28", "month 2026-11"; else NULL */
	char *gate;         /* watch_red: the watch gate (commit: the red tip); else NULL */
};

#define STORE_NOTIFY_INVALID "invalid_work_order" /* the event of an invalid work order */
#define STORE_NOTIFY_BUDGET "budget_spent"        /* the event of a budget that holds */
#define STORE_NOTIFY_WATCH "watch_red"            /* a watch gate believed red on a tip */

/*
 * Tell the notifiers once per watch gate and red tip (docs/watch.md): in one
 * transaction of its own, an event (the culprit run's, or none) and an
 * outbox row 'watch_red' (migration 19). Nothing when told already.
 */
struct store_notify_watch {
	const char *gate, *tip, *target, *reason;
	const char *run, *work_order, *title; /* the culprit run's, or NULL */
	int64_t at_ms;
};
int store_notify_watch(struct store *st, const struct store_notify_watch *w, struct sl_err *err);

/*
 * Tell the notifiers once per period ("day 2026-11-28", "month 2026-11")
 * that the repository's budget holds new work (docs/budgets.md): in one
 * transaction of its own, an event (no run, no work order) and an outbox
 * row 'budget_spent' with the reason and the target ref. Nothing when
 * this period was told already (migration 17). now_ms (the instant the
 * period was judged at) stamps the notification, so its `at` is of that
 * period.
 */
int store_notify_budget(struct store *st, const char *period, const char *target,
			const char *reason, int64_t now_ms, struct sl_err *err);

/*
 * Within the caller's transaction: tell the notifiers once about this
 * revision (path, SHA-256 of its bytes) of an invalid work order: an event
 * (no run) and an outbox row 'invalid_work_order' whose reason is the
 * problem. Nothing when this revision was told already (migration 13).
 */
int store_notify_invalid_tx(struct store *st, const char *path, const char *hash,
			    const char *wo_id, const char *title, const char *problem,
			    struct sl_err *err);

/*
 * The rows (pending_only: those not done), oldest first, at most `max`.
 * *out: store_notify_free(*out, *n).
 */
int store_notify_list(struct store *st, int pending_only, size_t max, struct store_notify **out,
		      size_t *n, struct sl_err *err);
/* The newest `max` rows, whatever their state, oldest first. *out as above. */
int store_notify_recent(struct store *st, size_t max, struct store_notify **out, size_t *n,
			struct sl_err *err);
/* The row of `seq` into *out (store_notify_release()); SL_ENOTFOUND when there is none. */
int store_notify_get(struct store *st, int64_t seq, struct store_notify *out, struct sl_err *err);
/*
 * Record a delivery's result: n's sent, tries, last_error and next_ms;
 * outcome NULL keeps the row pending, else it is done with that outcome.
 */
int store_notify_mark(struct store *st, const struct store_notify *n, const char *outcome,
		      struct sl_err *err);
/* Mark every pending row done with `outcome`. */
int store_notify_settle_all(struct store *st, const char *outcome, struct sl_err *err);
void store_notify_release(struct store_notify *n);
void store_notify_free(struct store_notify *v, size_t n);

/* A value of table store_meta (new string), or SL_ENOTFOUND. */
int store_meta_get(struct store *st, const char *key, char **value, struct sl_err *err);

/*
 * The manifest chain's index (table manifest_chain, migration 006,
 * store/chain.c): one row per link of the chain of artifact/artifact.h,
 * recorded by artifact_manifest_write() before it writes the file. The
 * files stay the authority (`sluice audit` reads them); the rows let the
 * next manifest find its previous link with one query.
 */
struct store_chain_link {
	char *run_id;
	char *merged_at;    /* the order key with run_id ("" if unknown) */
	char *previous_run; /* NULL for the first link */
	char sha256[65];    /* of the manifest.json's bytes */
};

/* Record (or replace) a link, in its own statement. */
int store_chain_record(struct store *st, const struct store_chain_link *l, struct sl_err *err);
/*
 * The last link in merge order, by (merged_at, run_id), leaving `skip_run`
 * (may be NULL) out. SL_ENOTFOUND when there is none. *out is the caller's:
 * store_chain_link_release().
 */
int store_chain_last(struct store *st, const char *skip_run, struct store_chain_link *out,
		     struct sl_err *err);
/* The recorded link of `run_id`: SL_ENOTFOUND when none. *out as above. */
int store_chain_get(struct store *st, const char *run_id, struct store_chain_link *out,
		    struct sl_err *err);
void store_chain_link_release(struct store_chain_link *l);
/*
 * *pending: 1 when the table must first be filled from the files on disk
 * (once, after migration 006 created it), else 0.
 */
int store_chain_backfill_pending(struct store *st, int *pending, struct sl_err *err);
/*
 * The merged run that finished last, as a list of one (or none): the only
 * run a killed merge can have left without its manifest. *out:
 * store_runs_free(*out, *n).
 */
int store_chain_newest_merged(struct store *st, struct store_run **out, size_t *n,
			      struct sl_err *err);
/* Record `v` (from the files) and clear the pending mark, in one transaction. */
int store_chain_backfill(struct store *st, const struct store_chain_link *v, size_t n,
			 struct sl_err *err);

/*
 * The merge gates' outcomes per tree (schema/db/015_gate_flakes.sql): a
 * gate (`command`, its argv as JSON) ran on `tree` and passed or not. A
 * gate both green and red on one tree is flaky (docs/config.md,
 * merge.rerun_failed).
 */
int store_gate_run_add(struct store *st, const char *gate, const char *command, const char *tree,
		       int passed, struct sl_err *err);
/*
 * How often the gate passed (*greens) and failed (*reds) on tree, and how
 * often a run's own gate passed there (*gating, when not NULL; below); 0s
 * when never run.
 */
int store_gate_runs_on(struct store *st, const char *gate, const char *command, const char *tree,
		       int *greens, int *reds, int *gating, struct sl_err *err);
/*
 * A run's own gate (gating) green on `tree` in a clean worktree (migration
 * 20, gating_greens): a merge gate of that command need not run there. Not
 * a merge gate's run: flake rates leave it out.
 */
int store_gate_gating_green(struct store *st, const char *gate, const char *command,
			    const char *tree, struct sl_err *err);
/* One gate's flake rate: `flaky` of the `trees` it ran on were both green and red. */
struct store_gate_flake {
	char *gate;
	int64_t trees;
	int64_t flaky;
};
/* Every gate that ran on a tree, by name. *out: store_gate_flakes_free(*out, *n). */
int store_gate_flakes(struct store *st, struct store_gate_flake **out, size_t *n,
		      struct sl_err *err);
void store_gate_flakes_free(struct store_gate_flake *v, size_t n);

/*
 * A target frozen by a person (schema/db/014_freeze.sql, `sluice freeze`):
 * the train tests its cars and lands none while it holds.
 */
struct store_freeze {
	char *reason;
	int64_t until_ms; /* 0: until unfrozen */
	int allow_urgent; /* urgent work lands through it */
	int64_t at_ms;
};

/* Freeze `target` (a freeze already there is replaced). */
int store_freeze_set(struct store *st, const char *target, const char *reason,
		     int64_t until_ms, int allow_urgent, struct sl_err *err);
/* The freeze of `target` (f->reason the caller's: store_freeze_release). SL_ENOTFOUND: none. */
int store_freeze_get(struct store *st, const char *target, struct store_freeze *f,
		     struct sl_err *err);
/* Unfreeze `target`: *had 1 when a freeze was there. */
int store_freeze_clear(struct store *st, const char *target, int *had, struct sl_err *err);
void store_freeze_release(struct store_freeze *f);

/*
 * What an attempt used (schema/db/016_usage.sql; docs/budgets.md): one row
 * per run, attempt and role. A token count or a cost below 0 is not known
 * (NULL in the table). store_usage_put() replaces the row of the same run,
 * attempt and role: a replayed attempt is never counted twice.
 */
struct store_usage {
	char *run_id;
	int attempt;
	char *role;          /* "builder" or "reviewer" */
	char *model;         /* NULL: not said */
	int64_t input_tokens, output_tokens, cache_read_tokens, cache_write_tokens;
	double cost_usd;     /* < 0: not known */
	int estimate;        /* 1: cost_usd computed from budget.prices */
	int64_t wall_ms;
	int64_t recorded_ms; /* set by store_usage_put */
	char *work_order_id; /* the run's, filled by store_usage_list */
	char *agent;         /* the attempt's agent, filled by store_usage_list */
};
#define STORE_USAGE_UNKNOWN { NULL, 0, NULL, NULL, -1, -1, -1, -1, -1.0, 0, 0, 0, NULL, NULL }

int store_usage_put(struct store *st, const struct store_usage *u, struct sl_err *err);
/*
 * store_usage_put(), but each figure added to the row of the same run,
 * attempt and role: a reviewer asked again about the same attempt spent
 * again (an approval whose tree moved, a tick killed after the verdict).
 */
int store_usage_add(struct store *st, const struct store_usage *u, struct sl_err *err);
/*
 * The rows of one run (run_id) or of all runs (NULL), recorded at or after
 * since_ms, oldest first. *out: store_usage_free(*out, *n).
 */
int store_usage_list(struct store *st, const char *run_id, int64_t since_ms,
		     struct store_usage **out, size_t *n, struct sl_err *err);
void store_usage_free(struct store_usage *v, size_t n);
/*
 * What the attempts recorded at or after since_ms cost (docs/budgets.md):
 * *usd the sum of the known costs, *estimate 1 when one of them is an
 * estimate, *rows how many rows (a cost known or not).
 */
struct store_spend {
	double usd;
	int estimate;
	int64_t rows;
};
int store_usage_spend(struct store *st, int64_t since_ms, struct store_spend *out,
		      struct sl_err *err);
/*
 * Where the known costs went (docs/budgets.md, "Where they show"): the
 * work orders with a merged run (all their runs' costs), the failed work
 * orders, the runs a reviewer or a person rejected, and the attempts that
 * resolved conflicts (mode resolve). Each *_wos counts the work orders
 * with at least one usage row; estimate 1 when a cost was estimated.
 */
struct store_spend_split {
	double merged_usd, failed_usd, rejected_usd, conflict_usd, total_usd;
	int64_t merged_wos, failed_wos, rows;
	int estimate;
};
int store_usage_split(struct store *st, struct store_spend_split *out, struct sl_err *err);
/*
 * The figures of a usage object (schema/usage.schema.json: input_tokens,
 * output_tokens, cache_read_tokens, cache_write_tokens, cost_usd, model;
 * all optional, other keys ignored) into u, which starts as
 * STORE_USAGE_UNKNOWN. SL_EINVALID with what is wrong; u->model may then
 * be set (the caller frees it).
 */
int store_usage_from_json(const struct json_t *j, struct store_usage *u, struct sl_err *err);
int store_usage_parse(const char *text, size_t len, struct store_usage *u, struct sl_err *err);

/*
 * The watch gates' results (schema/db/018_watch_results.sql; docs/watch.md):
 * one row per run of a gate on a commit.
 */
struct store_watch_result {
	const char *target, *gate, *commit, *purpose; /* purpose: tip, again, bisect */
	int passed, exit_code;
	const char *how, *log;
	int64_t started_ms, finished_ms;
};
int store_watch_add(struct store *st, const struct store_watch_result *r, struct sl_err *err);
/*
 * The newest commit on which `gate` of `target` passed (into out[41]; tip or
 * again runs, not a bisection's), SL_ENOTFOUND when none.
 */
int store_watch_last_green(struct store *st, const char *target, const char *gate, char out[41],
			   struct sl_err *err);
/* The bisection of gate's newest tip result named `culprit` (landed by run, or NULL). */
int store_watch_culprit(struct store *st, const char *target, const char *gate,
			const char *culprit, const char *run, struct sl_err *err);
/*
 * The newest tip result of `gate` (its run again, when it had one): r's
 * strings the caller's (store_watch_row_release). SL_ENOTFOUND: none.
 */
struct store_watch_row {
	char *commit, *culprit, *culprit_run;
	int passed;      /* the last run on that commit */
	int flaky;       /* red, then green on its run again */
	int64_t finished_ms;
};
int store_watch_latest(struct store *st, const char *target, const char *gate,
		       struct store_watch_row *r, struct sl_err *err);
void store_watch_row_release(struct store_watch_row *r);
/* The newest `max` runs of the watch gates of target (a bisection's too), newest first. */
struct store_watch_run {
	char *gate, *commit, *purpose, *how, *log, *culprit, *culprit_run;
	int passed;
	int64_t finished_ms;
};
int store_watch_recent(struct store *st, const char *target, size_t max,
		       struct store_watch_run **out, size_t *n, struct sl_err *err);
void store_watch_runs_free(struct store_watch_run *v, size_t n);

/*
 * The reverts the watch made (schema/db/019_watch_reverts.sql): one row per
 * landing reverted, keyed by its commit.
 */
struct store_watch_revert {
	char *culprit, *target, *gate, *culprit_run, *culprit_wo, *revert_wo, *fix_wo, *tip;
	int64_t created_ms;
};
/* SL_EEXISTS: the landing has a row already (or one of the ids is taken). */
int store_watch_revert_add(struct store *st, const struct store_watch_revert *r,
			   struct sl_err *err);
/*
 * The rows of target, newest first; key (NULL: all) one of culprit,
 * culprit_run, culprit_wo, revert_wo, fix_wo. Free with store_watch_reverts_free().
 */
int store_watch_revert_list(struct store *st, const char *target, const char *key,
			    struct store_watch_revert **out, size_t *n, struct sl_err *err);
void store_watch_reverts_free(struct store_watch_revert *v, size_t n);

#endif
