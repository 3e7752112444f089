#include "store/store.h"
#include "store/store_int.h"
#include "core/time.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct store {
	sqlite3 *db;
	char *path;
};

sqlite3 *store_db(struct store *st)
{
	return st->db;
}

int store__fail(struct store *st, struct sl_err *err, const char *what)
{
	int rc = sqlite3_errcode(st->db);
	int code = (rc == SQLITE_BUSY || rc == SQLITE_LOCKED) ? SL_ELOCKED : SL_ERROR;

	return sl_err_set(err, code, "database '%s': %s: %s", st->path, what,
			  sqlite3_errmsg(st->db));
}

int store__prepare(struct store *st, sqlite3_stmt **out, const char *sql, struct sl_err *err)
{
	if (sqlite3_prepare_v2(st->db, sql, -1, out, NULL) != SQLITE_OK)
		return store__fail(st, err, "cannot prepare a statement");
	return 0;
}

int store__bind_text(sqlite3_stmt *s, int i, const char *v)
{
	if (!v)
		return sqlite3_bind_null(s, i);
	return sqlite3_bind_text(s, i, v, -1, SQLITE_TRANSIENT);
}

char *store__col_dup(sqlite3_stmt *s, int i)
{
	const unsigned char *t = sqlite3_column_text(s, i);

	return t ? strdup((const char *)t) : NULL;
}

static int exec(struct store *st, const char *sql, struct sl_err *err)
{
	char *msg = NULL;
	int error = 0;

	if (sqlite3_exec(st->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		int rc = sqlite3_errcode(st->db);
		error = sl_err_set(err, rc == SQLITE_BUSY ? SL_ELOCKED : SL_ERROR,
				   "database '%s': %s", st->path, msg ? msg : "error");
	}
	sqlite3_free(msg);
	return error;
}

static int pragma_int(struct store *st, const char *sql)
{
	sqlite3_stmt *s = NULL;
	int v = -1;

	if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_int(s, 0);
	sqlite3_finalize(s);
	return v;
}

int store_version(struct store *st)
{
	return pragma_int(st, "PRAGMA user_version");
}

static int migrate(struct store *st, struct sl_err *err)
{
	int i, version, appid, error = 0;
	char sql[64];

	/*
	 * Every process opens the store (each run's worker too): a database
	 * already at this sluice's version is read, never write-locked (BEGIN
	 * IMMEDIATE would wait for any writer, a worker's transaction included).
	 */
	if (store_version(st) == store_migrations[store_migrations_count - 1].version &&
	    pragma_int(st, "PRAGMA application_id") == STORE_APPLICATION_ID)
		return 0;
	if ((error = store_begin(st, err)) != 0)
		return error;
	version = store_version(st);
	appid = pragma_int(st, "PRAGMA application_id");
	if (appid != 0 && appid != STORE_APPLICATION_ID) {
		error = sl_err_set(err, SL_EINVALID,
				   "'%s' is not a sluice database (application_id %d); move it away",
				   st->path, appid);
		goto out;
	}
	if (version > store_migrations[store_migrations_count - 1].version) {
		error = sl_err_set(err, SL_EINVALID,
				   "database '%s' has schema version %d, newer than this sluice knows "
				   "(%d); upgrade sluice",
				   st->path, version, store_migrations[store_migrations_count - 1].version);
		goto out;
	}
	for (i = 0; i < store_migrations_count; i++) {
		const struct store_migration *m = &store_migrations[i];
		if (m->version <= version)
			continue;
		if ((error = exec(st, m->sql, err)) != 0) {
			sl_err_set(err, SL_ERROR, "migration %s failed", m->name);
			goto out;
		}
		snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", m->version);
		if ((error = exec(st, sql, err)) != 0)
			goto out;
	}
	error = store_commit(st, err);
out:
	if (error)
		store_rollback(st);
	return error;
}

int store_path_check(const char *path, struct sl_err *err)
{
	sqlite3_vfs *vfs = sqlite3_vfs_find(NULL);
	size_t len = strlen(path), room;

	/*
	 * SQLite also opens path + "-journal" and path + "-wal", each under its
	 * VFS's mxPathname. The path is not in the message: a long one would
	 * cut the message before its reason.
	 */
	if (!vfs || vfs->mxPathname < 16)
		return 0;
	room = (size_t)vfs->mxPathname - strlen("-journal");
	if (len > room)
		return sl_err_set(err, SL_EINVALID,
				  "the repository's path is too long: its database "
				  "(.system/sluice.db) would be at a path of %zu bytes, and SQLite "
				  "takes at most %zu; move the repository to a shorter path",
				  len, room);
	return 0;
}

int store_open(struct store **out, const char *path, struct sl_err *err)
{
	struct store *st;
	int error = 0;

	*out = NULL;
	if ((error = store_path_check(path, err)) != 0)
		return error;
	st = calloc(1, sizeof(*st));
	if (!st || !(st->path = strdup(path))) {
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	if (sqlite3_open_v2(path, &st->db,
			    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
			    NULL) != SQLITE_OK) {
		error = st->db ? store__fail(st, err, "cannot open")
			       : sl_err_set(err, SL_ERROR, "cannot open database '%s'", path);
		goto out;
	}
	sqlite3_busy_timeout(st->db, 30000);
	if ((error = exec(st, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; "
			      "PRAGMA foreign_keys = ON;", err)) != 0)
		goto out;
	if ((error = migrate(st, err)) != 0)
		goto out;
	*out = st;
	st = NULL;
out:
	store_free(st);
	return error;
}

void store_free(struct store *st)
{
	if (!st)
		return;
	sqlite3_close(st->db);
	free(st->path);
	free(st);
}

int store_begin(struct store *st, struct sl_err *err)
{
	return exec(st, "BEGIN IMMEDIATE", err);
}

int store_commit(struct store *st, struct sl_err *err)
{
	return exec(st, "COMMIT", err);
}

void store_rollback(struct store *st)
{
	if (!sqlite3_get_autocommit(st->db))
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
}

int store_event_add(struct store *st, const char *run_id, const char *wo_id, const char *from,
		    const char *to, const char *reason, struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	int error = 0;

	if ((error = store__prepare(st, &s,
				    "INSERT INTO events (at_ms, run_id, work_order_id, from_state, "
				    "to_state, reason) VALUES (?, ?, ?, ?, ?, ?)",
				    err)) != 0)
		goto out;
	sqlite3_bind_int64(s, 1, sl_now_ms());
	store__bind_text(s, 2, run_id);
	store__bind_text(s, 3, wo_id);
	store__bind_text(s, 4, from);
	store__bind_text(s, 5, to);
	store__bind_text(s, 6, reason ? reason : "");
	if (sqlite3_step(s) != SQLITE_DONE)
		error = store__fail(st, err, "cannot append an event");
out:
	sqlite3_finalize(s);
	return error;
}
