/*
 * The watch gates' results (table watch_results, migration 18;
 * docs/watch.md): what `sluice watch` ran, on which commit, and how it ended.
 */
#include "store/store_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int store_watch_add(struct store *st, const struct store_watch_result *r, struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	int error;

	if ((error = store__prepare(st, &s,
				    "INSERT INTO watch_results (target, gate, commit_oid, purpose, "
				    "passed, exit_code, how, log, started_ms, finished_ms) "
				    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
				    err)) != 0)
		return error;
	store__bind_text(s, 1, r->target);
	store__bind_text(s, 2, r->gate);
	store__bind_text(s, 3, r->commit);
	store__bind_text(s, 4, r->purpose);
	sqlite3_bind_int(s, 5, r->passed ? 1 : 0);
	sqlite3_bind_int(s, 6, r->exit_code);
	store__bind_text(s, 7, r->how ? r->how : "");
	store__bind_text(s, 8, r->log ? r->log : "");
	sqlite3_bind_int64(s, 9, r->started_ms);
	sqlite3_bind_int64(s, 10, r->finished_ms);
	if (sqlite3_step(s) != SQLITE_DONE)
		error = store__fail(st, err, "cannot write watch_results");
	sqlite3_finalize(s);
	return error;
}

int store_watch_last_green(struct store *st, const char *target, const char *gate, char out[41],
			   struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	int error;

	out[0] = '\0';
	if ((error = store__prepare(st, &s,
				    "SELECT commit_oid FROM watch_results WHERE target = ?1 AND "
				    "gate = ?2 AND passed = 1 AND purpose != 'bisect' "
				    "ORDER BY id DESC LIMIT 1",
				    err)) != 0)
		return error;
	store__bind_text(s, 1, target);
	store__bind_text(s, 2, gate);
	switch (sqlite3_step(s)) {
	case SQLITE_ROW:
		snprintf(out, 41, "%s", (const char *)sqlite3_column_text(s, 0));
		break;
	case SQLITE_DONE:
		error = sl_err_set(err, SL_ENOTFOUND, "watch gate '%s' never passed on %s", gate,
				   target);
		break;
	default:
		error = store__fail(st, err, "cannot read watch_results");
	}
	sqlite3_finalize(s);
	return error;
}

int store_watch_culprit(struct store *st, const char *target, const char *gate,
			const char *culprit, const char *run, struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	int error;

	if ((error = store__prepare(st, &s,
				    "UPDATE watch_results SET culprit = ?1, culprit_run = ?2 WHERE id = "
				    "(SELECT MAX(id) FROM watch_results WHERE target = ?3 AND gate = ?4 "
				    "AND purpose != 'bisect')",
				    err)) != 0)
		return error;
	store__bind_text(s, 1, culprit);
	store__bind_text(s, 2, run);
	store__bind_text(s, 3, target);
	store__bind_text(s, 4, gate);
	if (sqlite3_step(s) != SQLITE_DONE)
		error = store__fail(st, err, "cannot write watch_results");
	sqlite3_finalize(s);
	return error;
}

static char *column_dup(sqlite3_stmt *s, int i)
{
	const unsigned char *t = sqlite3_column_text(s, i);

	return t ? strdup((const char *)t) : NULL;
}

int store_watch_latest(struct store *st, const char *target, const char *gate,
		       struct store_watch_row *r, struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	int error;

	memset(r, 0, sizeof(*r));
	/* the newest non-bisect row, and whether the one before it (its first run) was red */
	if ((error = store__prepare(st, &s,
				    "SELECT w.commit_oid, w.passed, w.finished_ms, w.culprit, "
				    "w.culprit_run, w.purpose = 'again' AND w.passed = 1 FROM "
				    "watch_results w WHERE w.target = ?1 AND w.gate = ?2 AND "
				    "w.purpose != 'bisect' ORDER BY w.id DESC LIMIT 1",
				    err)) != 0)
		return error;
	store__bind_text(s, 1, target);
	store__bind_text(s, 2, gate);
	switch (sqlite3_step(s)) {
	case SQLITE_ROW:
		r->commit = column_dup(s, 0);
		r->passed = sqlite3_column_int(s, 1);
		r->finished_ms = sqlite3_column_int64(s, 2);
		r->culprit = column_dup(s, 3);
		r->culprit_run = column_dup(s, 4);
		r->flaky = sqlite3_column_int(s, 5);
		break;
	case SQLITE_DONE:
		error = sl_err_set(err, SL_ENOTFOUND, "watch gate '%s' never ran on %s", gate,
				   target);
		break;
	default:
		error = store__fail(st, err, "cannot read watch_results");
	}
	sqlite3_finalize(s);
	return error;
}

void store_watch_row_release(struct store_watch_row *r)
{
	free(r->commit);
	free(r->culprit);
	free(r->culprit_run);
	memset(r, 0, sizeof(*r));
}

/* ---- The reverts the watch made (migration 19) ---- */

#define REVERT_COLUMNS                                                                             \
	"culprit, target, gate, culprit_run, culprit_wo, revert_wo, fix_wo, tip, created_ms"

int store_watch_revert_add(struct store *st, const struct store_watch_revert *r,
			   struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	int error;

	if ((error = store__prepare(st, &s,
				    "INSERT OR IGNORE INTO watch_reverts (" REVERT_COLUMNS ") VALUES "
				    "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
				    err)) != 0)
		return error;
	store__bind_text(s, 1, r->culprit);
	store__bind_text(s, 2, r->target);
	store__bind_text(s, 3, r->gate);
	store__bind_text(s, 4, r->culprit_run);
	store__bind_text(s, 5, r->culprit_wo);
	store__bind_text(s, 6, r->revert_wo);
	store__bind_text(s, 7, r->fix_wo);
	store__bind_text(s, 8, r->tip);
	sqlite3_bind_int64(s, 9, r->created_ms);
	if (sqlite3_step(s) != SQLITE_DONE)
		error = store__fail(st, err, "cannot write watch_reverts");
	else if (sqlite3_changes(store_db(st)) == 0)
		error = sl_err_set(err, SL_EEXISTS, "the landing %.12s has a revert already, or "
				   "work order '%s' or '%s' is taken", r->culprit, r->revert_wo,
				   r->fix_wo);
	sqlite3_finalize(s);
	return error;
}

static void revert_row(sqlite3_stmt *s, struct store_watch_revert *r)
{
	r->culprit = store__col_dup(s, 0);
	r->target = store__col_dup(s, 1);
	r->gate = store__col_dup(s, 2);
	r->culprit_run = store__col_dup(s, 3);
	r->culprit_wo = store__col_dup(s, 4);
	r->revert_wo = store__col_dup(s, 5);
	r->fix_wo = store__col_dup(s, 6);
	r->tip = store__col_dup(s, 7);
	r->created_ms = sqlite3_column_int64(s, 8);
}

int store_watch_revert_list(struct store *st, const char *target, const char *key,
			    struct store_watch_revert **out, size_t *n, struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	struct store_watch_revert *v = NULL, *grown;
	size_t cap = 0;
	int rc, error;

	*out = NULL;
	*n = 0;
	if ((error = store__prepare(st, &s,
				    "SELECT " REVERT_COLUMNS " FROM watch_reverts WHERE target = ?1 "
				    "AND (?2 IS NULL OR ?2 IN (culprit, culprit_run, culprit_wo, "
				    "revert_wo, fix_wo)) ORDER BY created_ms DESC, rowid DESC",
				    err)) != 0)
		return error;
	store__bind_text(s, 1, target);
	if (key)
		store__bind_text(s, 2, key);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (*n == cap) {
			cap = cap ? cap * 2 : 4;
			if (!(grown = realloc(v, cap * sizeof(*v)))) {
				error = sl_err_set(err, SL_ERROR, "out of memory");
				break;
			}
			v = grown;
		}
		memset(&v[*n], 0, sizeof(v[*n]));
		revert_row(s, &v[(*n)++]);
	}
	if (!error && rc != SQLITE_DONE)
		error = store__fail(st, err, "cannot read watch_reverts");
	sqlite3_finalize(s);
	if (error) {
		store_watch_reverts_free(v, *n);
		v = NULL;
		*n = 0;
	}
	*out = v;
	return error;
}

void store_watch_reverts_free(struct store_watch_revert *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(v[i].culprit);
		free(v[i].target);
		free(v[i].gate);
		free(v[i].culprit_run);
		free(v[i].culprit_wo);
		free(v[i].revert_wo);
		free(v[i].fix_wo);
		free(v[i].tip);
	}
	free(v);
}

int store_watch_recent(struct store *st, const char *target, size_t max,
		       struct store_watch_run **out, size_t *n, struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	struct store_watch_run *v = calloc(max ? max : 1, sizeof(*v));
	int rc, error;

	*out = NULL;
	*n = 0;
	if (!v)
		return sl_err_set(err, SL_ERROR, "out of memory");
	if ((error = store__prepare(st, &s,
				    "SELECT gate, commit_oid, purpose, passed, how, log, finished_ms, "
				    "culprit, culprit_run FROM watch_results WHERE target = ?1 "
				    "ORDER BY id DESC LIMIT ?2",
				    err)) != 0) {
		free(v);
		return error;
	}
	store__bind_text(s, 1, target);
	sqlite3_bind_int64(s, 2, (sqlite3_int64)max);
	while (*n < max && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct store_watch_run *w = &v[(*n)++];

		w->gate = store__col_dup(s, 0);
		w->commit = store__col_dup(s, 1);
		w->purpose = store__col_dup(s, 2);
		w->passed = sqlite3_column_int(s, 3);
		w->how = store__col_dup(s, 4);
		w->log = store__col_dup(s, 5);
		w->finished_ms = sqlite3_column_int64(s, 6);
		w->culprit = store__col_dup(s, 7);
		w->culprit_run = store__col_dup(s, 8);
	}
	sqlite3_finalize(s);
	*out = v;
	return 0;
}

void store_watch_runs_free(struct store_watch_run *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(v[i].gate);
		free(v[i].commit);
		free(v[i].purpose);
		free(v[i].how);
		free(v[i].log);
		free(v[i].culprit);
		free(v[i].culprit_run);
	}
	free(v);
}
