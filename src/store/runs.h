#ifndef SL_STORE_RUNS_H
#define SL_STORE_RUNS_H
/*
 * Runs, attempts, files changed (schema/db/001_init.sql). Every state
 * change is one transaction that also appends an event (DESIGN.md section
 * 5): store_run_transition() is the only way a run's state moves.
 */
#include <stdint.h>
#include "store/store.h"

struct store_run {
	char *id;
	char *work_order_id;
	char *wo_content_hash;
	char *state;
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
	char *mode;
	int attempt;
	int resolve_attempts;
	int review_tries;
	int64_t owner_pid;
	char *owner_start;
	int64_t created_ms;
	int64_t updated_ms;
	int64_t finished_ms;
};

/* 1 for the states a run never leaves: merged, rejected, failed, abandoned. */
int store_run_state_is_final(const char *state);

/*
 * 1 for states in which a live sluice process must be working on the run
 * (preparing, building, gating, merging, resolving): a run found in one of
 * these with its owner gone was interrupted.
 */
int store_run_state_is_active(const char *state);

/* 1 if `state` is one of the run states of DESIGN.md section 5. */
int store_run_state_valid(const char *state);

/*
 * Insert a new run in state 'queued' (inside the caller's transaction).
 * Sets created/updated times; appends the creation event.
 */
int store_run_insert(struct store *st, const struct store_run *run, struct sl_err *err);

/*
 * Look a run up by its full id or a unique prefix. SL_ENOTFOUND,
 * SL_EAMBIGUOUS (the message lists the matches). *out is the caller's:
 * store_run_release().
 */
int store_run_get(struct store *st, const char *id_or_prefix, struct store_run *out,
		  struct sl_err *err);

/*
 * Move a run from `from` (NULL: any state) to `to` with a reason, in its
 * own transaction (or the caller's when one is open: pass in_tx=1), with
 * an event. SL_ECONFLICT if the run is no longer in `from`. A final state
 * also sets finished_ms.
 */
int store_run_transition(struct store *st, const char *run_id, const char *from, const char *to,
			 const char *reason, int in_tx, struct sl_err *err);

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
 * Runs, newest first, filtered by state and/or work order (NULL: any).
 * *out is the caller's: store_runs_free(*out, *n).
 */
int store_runs_list(struct store *st, const char *state, const char *wo_id,
		    struct store_run **out, size_t *n, struct sl_err *err);

/*
 * The same for several states at once, given as ",queued,reviewing," (NULL:
 * any): what a tick looks at, without loading every finished run.
 */
int store_runs_list_states(struct store *st, const char *states, const char *wo_id,
			   struct store_run **out, size_t *n, struct sl_err *err);

/* How many runs are in one of `states` (",a,b,"; NULL: all); or a negative error. */
int store_runs_count(struct store *st, const char *states, struct sl_err *err);

void store_run_release(struct store_run *run);
void store_runs_free(struct store_run *runs, size_t n);

/* Attempts. */
int store_attempt_start(struct store *st, const char *run_id, int n, const char *mode,
			struct sl_err *err);
int store_attempt_finish(struct store *st, const char *run_id, int n, int builder_exit,
			 const char *outcome, const char *head, struct sl_err *err);

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
 * the work order must be 'ready' (its content hash `wo_hash`) with no
 * unfinished run; the run is inserted as queued and the work order becomes
 * 'running'. SL_ECONFLICT when someone else claimed it first.
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
};
int store_conflict_set(struct store *st, const char *run_id, const char *target_tip,
		       const char *run_head, const char *const *paths, size_t npaths,
		       struct sl_err *err);
int store_conflict_get(struct store *st, const char *run_id, struct store_conflict *out,
		       struct sl_err *err);
void store_conflict_release(struct store_conflict *c);

#endif
