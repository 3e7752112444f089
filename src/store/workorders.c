/* Work-order rows and inbox errors (see workorders.h). */
#include "store/store.h"
#include "store/store_int.h"
#include "core/time.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What a "no work order" message adds where the id came from the user. */
#define ID_HINT "; see 'sluice queue' for the ids"

#define WO_COLUMNS                                                                                 \
	"id, path, content_hash, fields_json, body, title, created_at, status, state, reason, "    \
	"priority, present, first_seen_ms, updated_ms"

void store_wo_release(struct store_wo *wo)
{
	if (!wo)
		return;
	free(wo->id);
	free(wo->path);
	free(wo->content_hash);
	free(wo->fields_json);
	free(wo->body);
	free(wo->title);
	free(wo->created_at);
	free(wo->status);
	free(wo->state);
	free(wo->reason);
	memset(wo, 0, sizeof(*wo));
}

void store_wo_list_free(struct store_wo *v, size_t n)
{
	size_t i;

	for (i = 0; v && i < n; i++)
		store_wo_release(&v[i]);
	free(v);
}

/* Fill *elem (a struct store_wo) from a row of WO_COLUMNS; -1 when out of memory. */
static int read_row(sqlite3_stmt *s, void *elem)
{
	struct store_wo *wo = elem;

	memset(wo, 0, sizeof(*wo));
	wo->id = store__col_dup(s, 0);
	wo->path = store__col_dup(s, 1);
	wo->content_hash = store__col_dup(s, 2);
	wo->fields_json = store__col_dup(s, 3);
	wo->body = store__col_dup(s, 4);
	wo->title = store__col_dup(s, 5);
	wo->created_at = store__col_dup(s, 6);
	wo->status = store__col_dup(s, 7);
	wo->state = store__col_dup(s, 8);
	wo->reason = store__col_dup(s, 9);
	wo->priority = sqlite3_column_int(s, 10);
	wo->present = sqlite3_column_int(s, 11);
	wo->first_seen_ms = sqlite3_column_int64(s, 12);
	wo->updated_ms = sqlite3_column_int64(s, 13);
	if (!wo->id || !wo->path || !wo->content_hash || !wo->fields_json || !wo->body ||
	    !wo->title || !wo->created_at || !wo->status || !wo->state || !wo->reason) {
		store_wo_release(wo);
		return -1;
	}
	return 0;
}

/*
 * Prepare sql (one parameter, the work order's id), bind id and step to the
 * row: 0 with *s on it, SL_ENOTFOUND ("no work order '<id>'" and hint) when
 * there is none, or another error. *s is the caller's to finalize.
 */
static int select_wo(struct store *st, sqlite3_stmt **s, const char *sql, const char *id,
                     const char *hint, struct sl_err *err)
{
	int error, rc;

	if ((error = store__prepare(st, s, sql, err)) != 0)
		return error;
	store__bind_text(*s, 1, id);
	rc = sqlite3_step(*s);
	if (rc == SQLITE_DONE)
		return sl_err_set(err, SL_ENOTFOUND, "no work order '%s'%s", id, hint);
	if (rc != SQLITE_ROW)
		return store__fail(st, err, "cannot read a work order");
	return 0;
}

/*
 * Every row of sql (with ?1 bound to p1 when it is not NULL), each read by
 * read_elem into an elem_size element (zeroed first; read_elem returns -1
 * when out of memory, -2 for a run state this sluice does not know), as a
 * new array in *v and its length in *len. On error, *v and *len hold what
 * was read so far, for the caller to free; what says what failed ("cannot
 * list ...").
 */
static int list_rows(struct store *st, const char *sql, const char *p1, size_t elem_size,
                     int (*read_elem)(sqlite3_stmt *s, void *elem), void **v, size_t *len,
                     const char *what, struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	size_t cap = 0;
	void *nv, *elem;
	int error, rc;

	if ((error = store__prepare(st, &s, sql, err)) != 0)
		goto out;
	if (p1)
		store__bind_text(s, 1, p1);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (*len == cap) {
			cap = cap ? cap * 2 : 64;
			if (!(nv = realloc(*v, cap * elem_size))) {
				error = sl_err_set(err, SL_ERROR, "out of memory");
				goto out;
			}
			*v = nv;
		}
		elem = (char *)*v + *len * elem_size;
		memset(elem, 0, elem_size);
		(*len)++;
		if ((rc = read_elem(s, elem)) < 0) {
			error = sl_err_set(err, SL_ERROR, rc == -2 ? "a run has a state this sluice "
			                                             "does not know"
			                                           : "out of memory");
			goto out;
		}
	}
	if (rc != SQLITE_DONE)
		error = store__fail(st, err, what);
out:
	sqlite3_finalize(s);
	return error;
}

int store_wo_get(struct store *st, const char *id, struct store_wo *out, struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	int error;

	memset(out, 0, sizeof(*out));
	if ((error = select_wo(st, &s, "SELECT " WO_COLUMNS " FROM work_orders WHERE id = ?", id,
	                       ID_HINT, err)) == 0 &&
	    read_row(s, out) < 0)
		error = sl_err_set(err, SL_ERROR, "out of memory");
	sqlite3_finalize(s);
	return error;
}

int store_wo_list(struct store *st, struct store_wo **out, size_t *n, struct sl_err *err)
{
	void *v = NULL;
	size_t len = 0;
	int error;

	error = list_rows(st, "SELECT " WO_COLUMNS " FROM work_orders ORDER BY id", NULL,
	                  sizeof(**out), read_row, &v, &len, "cannot list work orders", err);
	if (error) {
		store_wo_list_free(v, len);
		v = NULL;
		len = 0;
	}
	*out = v;
	*n = len;
	return error;
}

int store_wo_content(struct store *st, const char *id, struct sl_buf *out, struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	int error;

	if ((error = select_wo(st, &s, "SELECT content FROM work_orders WHERE id = ?", id, "",
	                       err)) == 0 &&
	    sl_buf_add(out, sqlite3_column_blob(s, 0), (size_t)sqlite3_column_bytes(s, 0)))
		error = sl_err_set(err, SL_ETOOBIG, "work order '%s' does not fit in memory", id);
	sqlite3_finalize(s);
	return error;
}

int store_wo_put_tx(struct store *st, const struct store_wo *wo, const void *content, size_t len,
                    struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	int64_t now = sl_now_ms();
	enum wo_state valid;
	int error;


	if (wo_state_parse(wo->state, &valid) != 0)
		return sl_err_set(err, SL_EINVALID, "unknown work-order state '%s'",
		                  wo->state ? wo->state : "(null)");
	if ((error = store__prepare(
	             st, &s,
	             "INSERT INTO work_orders (" WO_COLUMNS ", content) VALUES "
	             "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?13, ?14) "
	             "ON CONFLICT(id) DO UPDATE SET path = ?2, content_hash = ?3, fields_json = "
	             "?4, "
	             "body = ?5, title = ?6, created_at = ?7, status = ?8, state = ?9, reason = "
	             "?10, "
	             "priority = ?11, present = ?12, updated_ms = ?13, content = ?14",
	             err)) != 0)
		goto out;
	store__bind_text(s, 1, wo->id);
	store__bind_text(s, 2, wo->path);
	store__bind_text(s, 3, wo->content_hash);
	store__bind_text(s, 4, wo->fields_json ? wo->fields_json : "{}");
	store__bind_text(s, 5, wo->body ? wo->body : "");
	store__bind_text(s, 6, wo->title ? wo->title : "");
	store__bind_text(s, 7, wo->created_at ? wo->created_at : "");
	store__bind_text(s, 8, wo->status ? wo->status : wo_status_name(WO_STATUS_READY));
	store__bind_text(s, 9, wo->state);
	store__bind_text(s, 10, wo->reason ? wo->reason : "");
	sqlite3_bind_int(s, 11, wo->priority);
	sqlite3_bind_int(s, 12, wo->present);
	sqlite3_bind_int64(s, 13, now);
	if (content)
		sqlite3_bind_blob(s, 14, content, (int)len, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(s, 14);
	if (sqlite3_step(s) != SQLITE_DONE)
		error = store__fail(st, err, "cannot save a work order");
out:
	sqlite3_finalize(s);
	return error;
}

/* Read the state of id into *state (new string). */
static int current_state(struct store *st, const char *id, char **state, struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	int error;

	*state = NULL;
	if ((error = select_wo(st, &s, "SELECT state FROM work_orders WHERE id = ?", id, ID_HINT,
	                       err)) == 0 &&
	    !(*state = store__col_dup(s, 0)))
		error = sl_err_set(err, SL_ERROR, "out of memory");
	sqlite3_finalize(s);
	return error;
}

static int update_row(struct store *st, const char *sql, const char *a, const char *b,
                      const char *id, struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	int error;

	if ((error = store__prepare(st, &s, sql, err)) != 0)
		goto out;
	sqlite3_bind_int64(s, 1, sl_now_ms());
	store__bind_text(s, 2, a);
	store__bind_text(s, 3, b);
	store__bind_text(s, 4, id);
	if (sqlite3_step(s) != SQLITE_DONE)
		error = store__fail(st, err, "cannot update a work order");
out:
	sqlite3_finalize(s);
	return error;
}

int store_wo_mark_gone_tx(struct store *st, const char *id, const char *reason, struct sl_err *err)
{
	char *state = NULL;
	int error;

	if ((error = current_state(st, id, &state, err)) != 0 ||
	    (error = update_row(st,
	                        "UPDATE work_orders SET updated_ms = ?1, present = 0, reason = ?2 "
	                        "WHERE id = ?4",
	                        reason, NULL, id, err)) != 0)
		goto out;
	error = store_event_add(st, NULL, id, state, state, reason, err);
out:
	free(state);
	return error;
}

int store_wo_set_state_tx(struct store *st, const char *id, enum wo_state to,
                          const char *reason, struct sl_err *err)
{
	const char *state = wo_state_name(to);
	char *from = NULL;
	int error;

	if ((unsigned)to >= WO_STATE_COUNT)
		return sl_err_set(err, SL_EINVALID, "%d is not a work-order state", (int)to);
	if ((error = current_state(st, id, &from, err)) != 0 ||
	    (error = update_row(st,
	                        "UPDATE work_orders SET updated_ms = ?1, state = ?2, reason = ?3 "
	                        "WHERE id = ?4",
	                        state, reason ? reason : "", id, err)) != 0)
		goto out;
	error = store_event_add(st, NULL, id, from, state, reason, err);
out:
	free(from);
	return error;
}

int store_wo_set_state(struct store *st, const char *id, enum wo_state state, const char *reason,
                       struct sl_err *err)
{
	int error;

	if ((error = store_begin(st, err)) != 0)
		return error;
	if ((error = store_wo_set_state_tx(st, id, state, reason, err)) != 0 ||
	    (error = store_commit(st, err)) != 0)
		store_rollback(st);
	return error;
}

/* ---- inbox errors --------------------------------------------------------- */

int store_inbox_errors_replace_tx(struct store *st, const struct store_inbox_error *v, size_t n,
                                  struct sl_err *err)
{
	sqlite3_stmt *del = NULL, *ins = NULL;
	int64_t now = sl_now_ms();
	size_t i;
	int error;

	if ((error = store__prepare(st, &del, "DELETE FROM inbox_errors", err)) != 0 ||
	    (error = store__prepare(st, &ins,
	                            "INSERT OR REPLACE INTO inbox_errors (path, message, seen_ms) "
	                            "VALUES (?, ?, ?)",
	                            err)) != 0)
		goto out;
	if (sqlite3_step(del) != SQLITE_DONE) {
		error = store__fail(st, err, "cannot clear the inbox errors");
		goto out;
	}
	for (i = 0; i < n; i++) {
		sqlite3_reset(ins);
		store__bind_text(ins, 1, v[i].path);
		store__bind_text(ins, 2, v[i].message);
		sqlite3_bind_int64(ins, 3, now);
		if (sqlite3_step(ins) != SQLITE_DONE) {
			error = store__fail(st, err, "cannot save an inbox error");
			goto out;
		}
	}
out:
	sqlite3_finalize(del);
	sqlite3_finalize(ins);
	return error;
}

void store_inbox_errors_free(struct store_inbox_error *v, size_t n)
{
	size_t i;

	for (i = 0; v && i < n; i++) {
		free(v[i].path);
		free(v[i].message);
	}
	free(v);
}

static int read_inbox_error(sqlite3_stmt *s, void *elem)
{
	struct store_inbox_error *e = elem;

	e->path = store__col_dup(s, 0);
	e->message = store__col_dup(s, 1);
	return 0;
}

int store_inbox_errors_list(struct store *st, struct store_inbox_error **out, size_t *n,
                            struct sl_err *err)
{
	void *v = NULL;
	size_t len = 0;
	int error;

	error = list_rows(st, "SELECT path, message FROM inbox_errors ORDER BY path", NULL,
	                  sizeof(**out), read_inbox_error, &v, &len,
	                  "cannot list the inbox errors", err);
	if (error) {
		store_inbox_errors_free(v, len);
		v = NULL;
		len = 0;
	}
	*out = v;
	*n = len;
	return error;
}

/* ---- runs, as far as work orders care ------------------------------------- */

void store_wo_runs_free(struct store_wo_run *v, size_t n)
{
	size_t i;

	for (i = 0; v && i < n; i++) {
		free(v[i].wo_id);
		free(v[i].content_hash);
		free(v[i].run_id);
		free(v[i].reason);
	}
	free(v);
}

static int read_wo_run(sqlite3_stmt *s, void *elem)
{
	struct store_wo_run *r = elem;

	r->wo_id = store__col_dup(s, 0);
	r->content_hash = store__col_dup(s, 1);
	r->run_id = store__col_dup(s, 2);
	if (run_state_parse((const char *)sqlite3_column_text(s, 3), &r->state) != 0)
		return -2;
	r->reason = store__col_dup(s, 4);
	r->unfinished = !run_state_is_final(r->state);
	return r->wo_id && r->content_hash && r->run_id && r->reason ? 0 : -1;
}

int store_wo_runs(struct store *st, struct store_wo_run **out, size_t *n, struct sl_err *err)
{
	char finals[STORE_STATE_LIST_MAX];
	void *v = NULL;
	size_t len = 0;
	int error;

	error = list_rows(st,
	                  /* one pass with a window, not a subquery per run: the cost of
	                     a correlated one grew with runs times runs per work order */
	                  "SELECT work_order_id, wo_content_hash, id, state, reason FROM "
	                  "(SELECT work_order_id, wo_content_hash, id, state, reason, created_ms, "
	                  "row_number() OVER (PARTITION BY work_order_id, wo_content_hash "
	                  "ORDER BY created_ms DESC, id DESC) AS newest FROM runs) "
	                  "WHERE NOT " STORE_STATE_IN("?1", "state") " OR newest = 1 "
	                  "ORDER BY work_order_id, created_ms, id",
	                  store__state_list(finals, run_states_where(run_state_is_final)),
	                  sizeof(**out), read_wo_run, &v, &len, "cannot read the runs", err);
	if (error) {
		store_wo_runs_free(v, len);
		v = NULL;
		len = 0;
	}
	*out = v;
	*n = len;
	return error;
}
