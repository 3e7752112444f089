/*
 * The watch gates' results (table watch_results, migration 18;
 * docs/watch.md): what `sluice watch` ran, on which commit, and how it ended.
 */
#include "store/store_int.h"

#include <stdio.h>
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
