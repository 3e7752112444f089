/* A target frozen by a person (schema/db/014_freeze.sql; docs/sluice.1, sluice freeze). */
#include "store/store_int.h"
#include "core/time.h"

#include <stdlib.h>
#include <string.h>

int store_freeze_set(struct store *st, const char *target, const char *reason,
		     int64_t until_ms, int allow_urgent, struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	int error;

	if ((error = store__prepare(st, &s,
				    "INSERT OR REPLACE INTO freezes (target, reason, until_ms, "
				    "allow_urgent, at_ms) VALUES (?, ?, ?, ?, ?)", err)) != 0)
		return error;
	store__bind_text(s, 1, target);
	store__bind_text(s, 2, reason);
	if (until_ms > 0)
		sqlite3_bind_int64(s, 3, until_ms);
	else
		sqlite3_bind_null(s, 3);
	sqlite3_bind_int(s, 4, allow_urgent ? 1 : 0);
	sqlite3_bind_int64(s, 5, sl_now_ms());
	if (sqlite3_step(s) != SQLITE_DONE)
		error = store__fail(st, err, "cannot record the freeze");
	sqlite3_finalize(s);
	return error;
}

int store_freeze_get(struct store *st, const char *target, struct store_freeze *f,
		     struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	int rc, error;

	memset(f, 0, sizeof(*f));
	if ((error = store__prepare(st, &s,
				    "SELECT reason, COALESCE(until_ms, 0), allow_urgent, at_ms "
				    "FROM freezes WHERE target = ?", err)) != 0)
		return error;
	store__bind_text(s, 1, target);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		f->until_ms = sqlite3_column_int64(s, 1);
		f->allow_urgent = sqlite3_column_int(s, 2);
		f->at_ms = sqlite3_column_int64(s, 3);
		if (!(f->reason = store__col_dup(s, 0)))
			error = sl_err_set(err, SL_ERROR, "out of memory");
	} else if (rc == SQLITE_DONE) {
		error = sl_err_set(err, SL_ENOTFOUND, "'%s' is not frozen", target);
	} else {
		error = store__fail(st, err, "cannot read the freeze");
	}
	sqlite3_finalize(s);
	return error;
}

int store_freeze_clear(struct store *st, const char *target, int *had, struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	int error;

	*had = 0;
	if ((error = store__prepare(st, &s, "DELETE FROM freezes WHERE target = ?", err)) != 0)
		return error;
	store__bind_text(s, 1, target);
	if (sqlite3_step(s) != SQLITE_DONE)
		error = store__fail(st, err, "cannot remove the freeze");
	else
		*had = sqlite3_changes(sqlite3_db_handle(s)) > 0;
	sqlite3_finalize(s);
	return error;
}

void store_freeze_release(struct store_freeze *f)
{
	free(f->reason);
	memset(f, 0, sizeof(*f));
}
