/* The manifest chain's index (table manifest_chain): the previous link in one query. */
#include "store/store_int.h"
#include "core/time.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BACKFILL_KEY "manifest_chain_backfill"
#define LINK_COLUMNS "run_id, merged_at, previous_run, sha256"

void store_chain_link_release(struct store_chain_link *l)
{
	if (!l)
		return;
	free(l->run_id);
	free(l->merged_at);
	free(l->previous_run);
	memset(l, 0, sizeof(*l));
}

static int insert(struct store *st, const struct store_chain_link *l, struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	int error;

	if ((error = store__prepare(st, &s,
				    "INSERT OR REPLACE INTO manifest_chain (run_id, merged_at, "
				    "previous_run, sha256, recorded_ms) VALUES (?, ?, ?, ?, ?)",
				    err)) != 0)
		return error;
	store__bind_text(s, 1, l->run_id);
	store__bind_text(s, 2, l->merged_at ? l->merged_at : "");
	store__bind_text(s, 3, l->previous_run);
	store__bind_text(s, 4, l->sha256);
	sqlite3_bind_int64(s, 5, sl_now_ms());
	if (sqlite3_step(s) != SQLITE_DONE)
		error = store__fail(st, err, "cannot record a link of the manifest chain");
	sqlite3_finalize(s);
	return error;
}

int store_chain_record(struct store *st, const struct store_chain_link *l, struct sl_err *err)
{
	if (!l->run_id || strlen(l->sha256) != 64)
		return sl_err_set(err, SL_EINVALID, "a link of the manifest chain needs a run "
				  "and a SHA-256");
	return insert(st, l, err);
}

/* One row of `s` (LINK_COLUMNS, the first bound already) into *out; SL_ENOTFOUND when none. */
static int fetch(struct store *st, sqlite3_stmt *s, const char *what, struct store_chain_link *out,
		 struct sl_err *err)
{
	const unsigned char *sha;
	int rc = sqlite3_step(s);

	memset(out, 0, sizeof(*out));
	if (rc == SQLITE_DONE)
		return sl_err_set(err, SL_ENOTFOUND, "no %s in the manifest chain", what);
	if (rc != SQLITE_ROW)
		return store__fail(st, err, "cannot read the manifest chain");
	out->run_id = store__col_dup(s, 0);
	out->merged_at = store__col_dup(s, 1);
	out->previous_run = store__col_dup(s, 2);
	sha = sqlite3_column_text(s, 3);
	snprintf(out->sha256, sizeof(out->sha256), "%s", sha ? (const char *)sha : "");
	if (!out->run_id || !out->merged_at ||
	    (sqlite3_column_type(s, 2) != SQLITE_NULL && !out->previous_run)) {
		store_chain_link_release(out);
		return sl_err_set(err, SL_ERROR, "out of memory");
	}
	return 0;
}

int store_chain_last(struct store *st, const char *skip_run, struct store_chain_link *out,
		     struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	int error;

	memset(out, 0, sizeof(*out));
	/* the index manifest_chain_order, read backwards: at most one row skipped */
	if ((error = store__prepare(st, &s,
				    "SELECT " LINK_COLUMNS " FROM manifest_chain WHERE run_id IS NOT ?1 "
				    "ORDER BY merged_at DESC, run_id DESC LIMIT 1",
				    err)) != 0)
		return error;
	store__bind_text(s, 1, skip_run);
	error = fetch(st, s, "link", out, err);
	sqlite3_finalize(s);
	return error;
}

int store_chain_get(struct store *st, const char *run_id, struct store_chain_link *out,
		    struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	int error;

	memset(out, 0, sizeof(*out));
	if ((error = store__prepare(st, &s,
				    "SELECT " LINK_COLUMNS " FROM manifest_chain WHERE run_id = ?",
				    err)) != 0)
		return error;
	store__bind_text(s, 1, run_id);
	error = fetch(st, s, "link of that run", out, err);
	sqlite3_finalize(s);
	return error;
}

int store_chain_backfill_pending(struct store *st, int *pending, struct sl_err *err)
{
	char *v = NULL;
	int error = store_meta_get(st, BACKFILL_KEY, &v, err);

	*pending = error == 0;
	free(v);
	if (error == SL_ENOTFOUND) {
		sl_err_clear(err);
		error = 0;
	}
	return error;
}

static int clear_pending(struct store *st, struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	int error;

	if ((error = store__prepare(st, &s, "DELETE FROM store_meta WHERE key = ?", err)) != 0)
		return error;
	store__bind_text(s, 1, BACKFILL_KEY);
	if (sqlite3_step(s) != SQLITE_DONE)
		error = store__fail(st, err, "cannot mark the manifest chain as filled");
	sqlite3_finalize(s);
	return error;
}

int store_chain_backfill(struct store *st, const struct store_chain_link *v, size_t n,
			 struct sl_err *err)
{
	size_t i;
	int error;

	if ((error = store_begin(st, err)) != 0)
		return error;
	for (i = 0; !error && i < n; i++)
		error = v[i].run_id ? insert(st, &v[i], err) : 0; /* as the files say */
	if (!error)
		error = clear_pending(st, err);
	if (!error)
		error = store_commit(st, err);
	if (error)
		store_rollback(st);
	return error;
}

int store_chain_newest_merged(struct store *st, struct store_run **out, size_t *n,
			      struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	char *id = NULL;
	int rc, error;

	*out = NULL;
	*n = 0;
	/* the index runs_state_finished (migration 006): one step, whatever the number of runs */
	if ((error = store__prepare(st, &s,
				    "SELECT id FROM runs WHERE state = ? "
				    "ORDER BY finished_ms DESC LIMIT 1",
				    err)) != 0)
		return error;
	store__bind_text(s, 1, run_state_name(RUN_MERGED));
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW && !(id = store__col_dup(s, 0)))
		error = sl_err_set(err, SL_ERROR, "out of memory");
	else if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		error = store__fail(st, err, "cannot find the newest merged run");
	sqlite3_finalize(s);
	if (error || !id)
		goto out;
	if (!(*out = calloc(1, sizeof(**out))))
		error = sl_err_set(err, SL_ERROR, "out of memory");
	else if ((error = store_run_get(st, id, *out, err)) == 0)
		*n = 1;
out:
	if (error) {
		free(*out);
		*out = NULL;
	}
	free(id);
	return error;
}
