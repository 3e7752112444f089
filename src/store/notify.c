/*
 * The notifications outbox (schema/db/005_notify.sql, 010_notify_retry.sql):
 * a row per move of a
 * run into merged, merge_conflict, rejected or failed, added in the move's
 * transaction (store_run_transition), delivered and marked by the runner
 * (notify/notify.c).
 */
#include "store/store.h"
#include "store/store_int.h"
#include "core/time.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 1 when a move into `to` is told to the notifiers. */
static int notified(enum run_state to)
{
	return to == RUN_MERGED || to == RUN_MERGE_CONFLICT || to == RUN_REJECTED ||
	       to == RUN_FAILED;
}

int store__notify_add(struct store *st, int64_t seq, const char *run_id, enum run_state from,
		      enum run_state to, const char *reason, struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	int error;

	if (from == to || !notified(to))
		return 0;
	if ((error = store__prepare(
		     st, &s,
		     "INSERT INTO notify_outbox (seq, event, run_id, work_order_id, title, "
		     "from_state, reason, target, commit_id, at_ms) "
		     "SELECT ?1, ?2, r.id, r.work_order_id, coalesce(w.title, ''), ?3, ?4, r.target, "
		     "CASE WHEN ?5 THEN r.merge_commit END, ?6 "
		     "FROM runs r LEFT JOIN work_orders w ON w.id = r.work_order_id WHERE r.id = ?7",
		     err)) != 0)
		return error;
	sqlite3_bind_int64(s, 1, seq);
	store__bind_text(s, 2, run_state_name(to));
	store__bind_text(s, 3, run_state_name(from));
	store__bind_text(s, 4, reason ? reason : "");
	sqlite3_bind_int(s, 5, to == RUN_MERGED);
	sqlite3_bind_int64(s, 6, sl_now_ms());
	store__bind_text(s, 7, run_id);
	if (sqlite3_step(s) != SQLITE_DONE)
		error = store__fail(st, err, "cannot add a notification");
	sqlite3_finalize(s);
	return error;
}

/* 1 when a notification of this revision of the file was added already. */
static int invalid_told(struct store *st, const char *path, const char *hash, struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	int rc;

	if (store__prepare(st, &s,
			   "SELECT 1 FROM notify_outbox WHERE path = ?1 AND content_hash = ?2 "
			   "AND event = 'invalid_work_order'", /* not a run state */
			   err) != 0)
		return -1;
	store__bind_text(s, 1, path);
	store__bind_text(s, 2, hash);
	rc = sqlite3_step(s);
	sqlite3_finalize(s);
	if (rc == SQLITE_ROW)
		return 1;
	return rc == SQLITE_DONE ? 0 : (store__fail(st, err, "cannot read the outbox"), -1);
}

int store_notify_invalid_tx(struct store *st, const char *path, const char *hash,
			    const char *wo_id, const char *title, const char *problem,
			    struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	char why[SL_ERR_MSG_MAX + 64];
	int error, told;

	if ((told = invalid_told(st, path, hash, err)) != 0)
		return told < 0 ? SL_ERROR : 0;
	snprintf(why, sizeof(why), "invalid work order, not run: %s", problem);
	if ((error = store_event_add(st, NULL, wo_id, NULL, wo_state_name(WO_INVALID), why, err)) != 0 ||
	    (error = store__prepare(
		     st, &s,
		     "INSERT INTO notify_outbox (seq, event, run_id, work_order_id, title, "
		     "from_state, reason, target, at_ms, path, content_hash) "
		     "VALUES (?1, 'invalid_work_order', NULL, ?2, ?3, '', ?4, '', ?5, ?6, ?7)",
		     err)) != 0)
		return error;
	sqlite3_bind_int64(s, 1, sqlite3_last_insert_rowid(store_db(st)));
	store__bind_text(s, 2, wo_id);
	store__bind_text(s, 3, title ? title : "");
	store__bind_text(s, 4, problem);
	sqlite3_bind_int64(s, 5, sl_now_ms());
	store__bind_text(s, 6, path);
	store__bind_text(s, 7, hash);
	if (sqlite3_step(s) != SQLITE_DONE)
		error = store__fail(st, err, "cannot add a notification");
	sqlite3_finalize(s);
	return error;
}

/* 1 when the budget of `period` was told already, 0 when not, -1 (err set). */
static int budget_told(struct store *st, const char *period, struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	int rc;

	if (store__prepare(st, &s, "SELECT 1 FROM notify_outbox WHERE period = ?1 AND "
				   "event = '" STORE_NOTIFY_BUDGET "'", err) != 0)
		return -1;
	store__bind_text(s, 1, period);
	rc = sqlite3_step(s);
	sqlite3_finalize(s);
	if (rc == SQLITE_ROW)
		return 1;
	return rc == SQLITE_DONE ? 0 : (store__fail(st, err, "cannot read the outbox"), -1);
}

int store_notify_budget(struct store *st, const char *period, const char *target,
			const char *reason, int64_t now_ms, struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	char why[1200];
	int error, told;

	/* most ticks of a held day: read only, no write lock taken */
	if ((told = budget_told(st, period, err)) != 0)
		return told < 0 ? SL_ERROR : 0;
	if ((error = store_begin(st, err)) != 0)
		return error;
	if ((told = budget_told(st, period, err)) != 0) { /* told meanwhile */
		store_rollback(st);
		return told < 0 ? SL_ERROR : 0;
	}
	snprintf(why, sizeof(why), "%s (%s)", reason, period);
	if ((error = store_event_add(st, NULL, NULL, NULL, STORE_NOTIFY_BUDGET, why, err)) != 0 ||
	    (error = store__prepare(
		     st, &s,
		     "INSERT INTO notify_outbox (seq, event, run_id, work_order_id, title, "
		     "from_state, reason, target, at_ms, period) "
		     "VALUES (?1, '" STORE_NOTIFY_BUDGET "', NULL, '', '', '', ?2, ?3, ?4, ?5)",
		     err)) != 0)
		goto fail;
	sqlite3_bind_int64(s, 1, sqlite3_last_insert_rowid(store_db(st)));
	store__bind_text(s, 2, reason);
	store__bind_text(s, 3, target);
	sqlite3_bind_int64(s, 4, now_ms);
	store__bind_text(s, 5, period);
	if (sqlite3_step(s) != SQLITE_DONE) {
		error = store__fail(st, err, "cannot add a notification");
		goto fail;
	}
	sqlite3_finalize(s);
	return store_commit(st, err);
fail:
	sqlite3_finalize(s);
	store_rollback(st);
	return error;
}

int store_notify_watch(struct store *st, const struct store_notify_watch *w, struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	int error, told;

	if ((error = store_begin(st, err)) != 0)
		return error;
	if ((error = store__prepare(st, &s, "SELECT 1 FROM notify_outbox WHERE event = '"
				    STORE_NOTIFY_WATCH "' AND gate = ?1 AND commit_id = ?2",
				    err)) != 0)
		goto fail;
	store__bind_text(s, 1, w->gate);
	store__bind_text(s, 2, w->tip);
	told = sqlite3_step(s);
	sqlite3_finalize(s);
	s = NULL;
	if (told == SQLITE_ROW) { /* this gate red on this tip: told already */
		store_rollback(st);
		return 0;
	}
	if ((error = store_event_add(st, w->run, w->work_order, NULL, STORE_NOTIFY_WATCH,
				     w->reason, err)) != 0 ||
	    (error = store__prepare(
		     st, &s,
		     "INSERT INTO notify_outbox (seq, event, run_id, work_order_id, title, "
		     "from_state, reason, target, commit_id, at_ms, gate) "
		     "VALUES (?1, '" STORE_NOTIFY_WATCH "', ?2, ?3, ?4, '', ?5, ?6, ?7, ?8, ?9)",
		     err)) != 0)
		goto fail;
	sqlite3_bind_int64(s, 1, sqlite3_last_insert_rowid(store_db(st)));
	store__bind_text(s, 2, w->run);
	store__bind_text(s, 3, w->work_order ? w->work_order : "");
	store__bind_text(s, 4, w->title ? w->title : "");
	store__bind_text(s, 5, w->reason);
	store__bind_text(s, 6, w->target);
	store__bind_text(s, 7, w->tip);
	sqlite3_bind_int64(s, 8, w->at_ms);
	store__bind_text(s, 9, w->gate);
	if (sqlite3_step(s) != SQLITE_DONE) {
		error = store__fail(st, err, "cannot add a notification");
		goto fail;
	}
	sqlite3_finalize(s);
	return store_commit(st, err);
fail:
	sqlite3_finalize(s);
	store_rollback(st);
	return error;
}

void store_notify_release(struct store_notify *n)
{
	if (!n)
		return;
	free(n->event);
	free(n->run_id);
	free(n->work_order_id);
	free(n->title);
	free(n->from_state);
	free(n->reason);
	free(n->target);
	free(n->commit);
	free(n->last_error);
	free(n->outcome);
	free(n->path);
	free(n->period);
	free(n->gate);
	memset(n, 0, sizeof(*n));
}

void store_notify_free(struct store_notify *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		store_notify_release(&v[i]);
	free(v);
}

static int read_row(sqlite3_stmt *s, struct store_notify *n)
{
	memset(n, 0, sizeof(*n));
	n->seq = sqlite3_column_int64(s, 0);
	n->event = store__col_dup(s, 1);
	n->run_id = store__col_dup(s, 2);
	n->work_order_id = store__col_dup(s, 3);
	n->title = store__col_dup(s, 4);
	n->from_state = store__col_dup(s, 5);
	n->reason = store__col_dup(s, 6);
	n->target = store__col_dup(s, 7);
	n->commit = store__col_dup(s, 8);
	n->at_ms = sqlite3_column_int64(s, 9);
	n->sent = (unsigned)sqlite3_column_int(s, 10);
	n->tries = sqlite3_column_int(s, 11);
	n->last_error = store__col_dup(s, 12);
	n->done = sqlite3_column_type(s, 13) != SQLITE_NULL;
	n->outcome = store__col_dup(s, 14);
	n->next_ms = sqlite3_column_int64(s, 15);
	n->path = store__col_dup(s, 16);
	n->period = store__col_dup(s, 17);
	n->gate = store__col_dup(s, 18);
	return n->event && n->run_id && n->work_order_id && n->title && n->from_state &&
			       n->reason && n->target && n->last_error
		       ? 0
		       : -1;
}

/* run_id is NULL for invalid_work_order and budget_spent (migrations 13, 17): "" here */
#define NOTIFY_COLUMNS                                                                    \
	"seq, event, coalesce(run_id, ''), work_order_id, title, from_state, reason, target, " \
	"commit_id, at_ms, sent, tries, last_error, done_ms, outcome, next_ms, path, period, gate"

/* The rows of statement s (bound), in its order, into *out and *n; finalizes s. */
static int read_rows(struct store *st, sqlite3_stmt *s, struct store_notify **out, size_t *n,
		     struct sl_err *err)
{
	struct store_notify *v = NULL, *nv;
	size_t len = 0;
	int error = 0, rc;

	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (!(nv = realloc(v, (len + 1) * sizeof(*v)))) {
			error = sl_err_set(err, SL_ERROR, "out of memory");
			goto out;
		}
		v = nv;
		if (read_row(s, &v[len++]) < 0) {
			error = sl_err_set(err, SL_ERROR, "out of memory");
			goto out;
		}
	}
	if (rc != SQLITE_DONE)
		error = store__fail(st, err, "cannot list the notifications");
out:
	sqlite3_finalize(s);
	if (error) {
		store_notify_free(v, len);
		return error;
	}
	*out = v;
	*n = len;
	return 0;
}

int store_notify_list(struct store *st, int pending_only, size_t max, struct store_notify **out,
		      size_t *n, struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	int error;

	*out = NULL;
	*n = 0;
	if ((error = store__prepare(st, &s,
				    "SELECT " NOTIFY_COLUMNS " FROM notify_outbox "
				    "WHERE NOT ?1 OR done_ms IS NULL ORDER BY seq LIMIT ?2",
				    err)) != 0)
		return error;
	sqlite3_bind_int(s, 1, pending_only);
	sqlite3_bind_int64(s, 2, (sqlite3_int64)max);
	return read_rows(st, s, out, n, err);
}

int store_notify_recent(struct store *st, size_t max, struct store_notify **out, size_t *n,
			struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	int error;

	*out = NULL;
	*n = 0;
	if ((error = store__prepare(st, &s,
				    "SELECT * FROM (SELECT " NOTIFY_COLUMNS " FROM notify_outbox "
				    "ORDER BY seq DESC LIMIT ?1) ORDER BY seq",
				    err)) != 0)
		return error;
	sqlite3_bind_int64(s, 1, (sqlite3_int64)max);
	return read_rows(st, s, out, n, err);
}

int store_notify_get(struct store *st, int64_t seq, struct store_notify *out, struct sl_err *err)
{
	struct store_notify *v = NULL;
	sqlite3_stmt *s = NULL;
	size_t n = 0;
	int error;

	memset(out, 0, sizeof(*out));
	if ((error = store__prepare(st, &s,
				    "SELECT " NOTIFY_COLUMNS " FROM notify_outbox WHERE seq = ?1",
				    err)) != 0)
		return error;
	sqlite3_bind_int64(s, 1, seq);
	if ((error = read_rows(st, s, &v, &n, err)) != 0)
		return error;
	if (!n)
		return sl_err_set(err, SL_ENOTFOUND,
				  "no notification has seq %lld; 'sluice notify' lists them",
				  (long long)seq);
	*out = v[0];
	free(v);
	return 0;
}

int store_notify_mark(struct store *st, const struct store_notify *n, const char *outcome,
		      struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	int error;

	if ((error = store__prepare(st, &s,
				    "UPDATE notify_outbox SET sent = ?1, tries = ?2, last_error = ?3, "
				    "outcome = ?4, done_ms = CASE WHEN ?4 IS NULL THEN NULL ELSE ?5 END, "
				    "next_ms = ?7 WHERE seq = ?6",
				    err)) != 0)
		return error;
	sqlite3_bind_int(s, 1, (int)n->sent);
	sqlite3_bind_int(s, 2, n->tries);
	store__bind_text(s, 3, n->last_error ? n->last_error : "");
	store__bind_text(s, 4, outcome);
	sqlite3_bind_int64(s, 5, sl_now_ms());
	sqlite3_bind_int64(s, 6, n->seq);
	sqlite3_bind_int64(s, 7, n->next_ms);
	if (sqlite3_step(s) != SQLITE_DONE)
		error = store__fail(st, err, "cannot mark a notification");
	sqlite3_finalize(s);
	return error;
}

int store_notify_settle_all(struct store *st, const char *outcome, struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	int error;

	if ((error = store__prepare(st, &s,
				    "UPDATE notify_outbox SET outcome = ?1, done_ms = ?2 "
				    "WHERE done_ms IS NULL",
				    err)) != 0)
		return error;
	store__bind_text(s, 1, outcome);
	sqlite3_bind_int64(s, 2, sl_now_ms());
	if (sqlite3_step(s) != SQLITE_DONE)
		error = store__fail(st, err, "cannot mark the notifications");
	sqlite3_finalize(s);
	return error;
}
