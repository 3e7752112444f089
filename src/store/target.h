#ifndef SL_STORE_TARGET_H
#define SL_STORE_TARGET_H
/*
 * Watching the target branch (schema/db/002_target_watch.sql): the tips
 * sluice observed or moved the target to, the commits recorded as the
 * user's, and the unreviewed landings found (alerts). Functions marked
 * "in the caller's transaction" need store_begin() first.
 */
#include <stddef.h>
#include "store/store.h"

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

#endif
