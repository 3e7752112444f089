#ifndef SL_STORE_WORKORDERS_H
#define SL_STORE_WORKORDERS_H
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
#include <stdint.h>
#include "core/buf.h"
#include "store/store.h"

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

/* 1 when state is one of the eight work-order states. */
int store_wo_state_valid(const char *state);

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
 * SL_EINVALID for an unknown state.
 */
int store_wo_set_state_tx(struct store *st, const char *id, const char *state, const char *reason,
                          struct sl_err *err);
int store_wo_set_state(struct store *st, const char *id, const char *state, const char *reason,
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
 * What the runs say about each work order that has runs: its latest active
 * run (any revision), and its latest finished run for each revision is
 * looked up through store_wo_runs_find(). Active run states: queued,
 * preparing, building, gating, reviewing, awaiting_review, approved,
 * merging, resolving, merge_conflict, interrupted. Finished: merged,
 * rejected, failed, abandoned.
 */
struct store_wo_run {
	char *wo_id;
	char *content_hash; /* the revision it ran */
	char *run_id;
	char *state;
	char *reason;
	int active;
};

/* Every work order's latest run per revision, and every active run; by wo_id. */
int store_wo_runs(struct store *st, struct store_wo_run **out, size_t *n, struct sl_err *err);
void store_wo_runs_free(struct store_wo_run *v, size_t n);

/* 1 when a run state is not final. */
int store_run_state_active(const char *state);

#endif
