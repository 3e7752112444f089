/* Jobs on an engine (store.h, schema/db/009_jobs.sql). */
#include "store/store_int.h"
#include "core/time.h"

#include <stdlib.h>
#include <string.h>

#define JOB_COLS "id, run_id, attempt, purpose, handle, refs, submitted_at, ended_at, outcome"

int store_job_add(struct store *st, const char *run_id, int attempt, const char *purpose,
		  const char *handle, const char *refs, int64_t *id_out, struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	int error;

	if ((error = store__prepare(st, &s,
				    "INSERT INTO jobs (run_id, attempt, purpose, handle, refs, "
				    "submitted_at) VALUES (?, ?, ?, ?, ?, ?)",
				    err)) != 0)
		return error;
	store__bind_text(s, 1, run_id);
	sqlite3_bind_int(s, 2, attempt);
	store__bind_text(s, 3, purpose);
	store__bind_text(s, 4, handle);
	store__bind_text(s, 5, refs);
	sqlite3_bind_int64(s, 6, sl_now_ms());
	if (sqlite3_step(s) != SQLITE_DONE)
		error = store__fail(st, err, "cannot record the job");
	else if (id_out)
		*id_out = sqlite3_last_insert_rowid(store_db(st));
	sqlite3_finalize(s);
	return error;
}

static int job_row(sqlite3_stmt *s, struct store_job *j)
{
	memset(j, 0, sizeof(*j));
	j->id = sqlite3_column_int64(s, 0);
	j->run_id = store__col_dup(s, 1);
	j->attempt = sqlite3_column_int(s, 2);
	j->purpose = store__col_dup(s, 3);
	j->handle = store__col_dup(s, 4);
	j->refs = store__col_dup(s, 5);
	j->submitted_at = sqlite3_column_int64(s, 6);
	j->ended_at = sqlite3_column_int64(s, 7);
	j->outcome = store__col_dup(s, 8);
	return j->run_id && j->purpose && j->handle && j->refs ? 0 : -1;
}

int store_job_open(struct store *st, const char *run_id, int attempt, const char *purpose,
		   struct store_job *out, struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	int error, rc;

	memset(out, 0, sizeof(*out));
	if ((error = store__prepare(st, &s,
				    "SELECT " JOB_COLS " FROM jobs WHERE run_id = ? AND "
				    "ended_at IS NULL AND (? < 0 OR attempt = ?) AND "
				    "(? IS NULL OR purpose = ?) ORDER BY id DESC LIMIT 1",
				    err)) != 0)
		return error;
	store__bind_text(s, 1, run_id);
	sqlite3_bind_int(s, 2, attempt);
	sqlite3_bind_int(s, 3, attempt);
	store__bind_text(s, 4, purpose);
	store__bind_text(s, 5, purpose);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		error = job_row(s, out) ? sl_err_set(err, SL_ERROR, "out of memory") : 0;
	else if (rc == SQLITE_DONE)
		error = sl_err_set(err, SL_ENOTFOUND, "run %s has no open job", run_id);
	else
		error = store__fail(st, err, "cannot read jobs");
	sqlite3_finalize(s);
	return error;
}

int store_job_end(struct store *st, int64_t id, const char *outcome, struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	int error;

	if ((error = store__prepare(st, &s,
				    "UPDATE jobs SET ended_at = ?, outcome = ? WHERE id = ? AND "
				    "ended_at IS NULL",
				    err)) != 0)
		return error;
	sqlite3_bind_int64(s, 1, sl_now_ms());
	store__bind_text(s, 2, outcome);
	sqlite3_bind_int64(s, 3, id);
	if (sqlite3_step(s) != SQLITE_DONE)
		error = store__fail(st, err, "cannot write jobs");
	sqlite3_finalize(s);
	return error;
}

int store_job_set_handle(struct store *st, int64_t id, const char *handle, struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	int error;

	if ((error = store__prepare(st, &s, "UPDATE jobs SET handle = ? WHERE id = ? AND "
				    "ended_at IS NULL", err)) != 0)
		return error;
	store__bind_text(s, 1, handle);
	sqlite3_bind_int64(s, 2, id);
	if (sqlite3_step(s) != SQLITE_DONE)
		error = store__fail(st, err, "cannot write jobs");
	else if (sqlite3_changes(store_db(st)) != 1)
		error = sl_err_set(err, SL_ENOTFOUND, "job %lld is not open", (long long)id);
	sqlite3_finalize(s);
	return error;
}

int store_jobs_of_run(struct store *st, const char *run_id, struct store_job **out, size_t *n,
		      struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	struct store_job *v = NULL;
	size_t cap = 0;
	int error, rc;

	*out = NULL;
	*n = 0;
	if ((error = store__prepare(st, &s, "SELECT " JOB_COLS " FROM jobs WHERE run_id = ? "
				    "ORDER BY id", err)) != 0)
		return error;
	store__bind_text(s, 1, run_id);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (*n == cap) {
			struct store_job *nv = realloc(v, (cap = cap ? 2 * cap : 4) * sizeof(*v));
			if (!nv)
				break;
			v = nv;
		}
		if (job_row(s, &v[(*n)++]) != 0)
			break;
	}
	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		error = store__fail(st, err, "cannot read jobs");
	else if (rc == SQLITE_ROW)
		error = sl_err_set(err, SL_ERROR, "out of memory");
	sqlite3_finalize(s);
	if (error) {
		store_jobs_free(v, *n);
		*n = 0;
		return error;
	}
	*out = v;
	return 0;
}

void store_job_release(struct store_job *j)
{
	if (!j)
		return;
	free(j->run_id);
	free(j->purpose);
	free(j->handle);
	free(j->refs);
	free(j->outcome);
	memset(j, 0, sizeof(*j));
}

void store_jobs_free(struct store_job *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		store_job_release(&v[i]);
	free(v);
}
