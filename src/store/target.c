/* Watching the target branch: observed tips, the user's commits, unreviewed landings. */
#include "store/store_int.h"
#include "core/time.h"

#include <stdlib.h>
#include <string.h>

int store_target_get(struct store *st, const char *target, char **root, char **tip,
		     struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	int rc, error = 0;

	*root = *tip = NULL;
	if ((error = store__prepare(st, &s, "SELECT root, tip FROM target_tips WHERE target = ?",
				    err)) != 0)
		return error;
	store__bind_text(s, 1, target);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		*root = store__col_dup(s, 0);
		*tip = store__col_dup(s, 1);
		if (!*root || !*tip)
			error = sl_err_set(err, SL_ERROR, "out of memory");
	} else if (rc == SQLITE_DONE) {
		error = sl_err_set(err, SL_ENOTFOUND, "no tip of '%s' recorded yet", target);
	} else {
		error = store__fail(st, err, "cannot read the target's tip");
	}
	sqlite3_finalize(s);
	if (error) {
		free(*root);
		free(*tip);
		*root = *tip = NULL;
	}
	return error;
}

/* Run one statement with text parameters (NULL binds SQL NULL) and an optional time. */
static int exec_text(struct store *st, const char *sql, const char *const *args, size_t n,
		     const char *what, struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	size_t i;
	int error;

	if ((error = store__prepare(st, &s, sql, err)) != 0)
		return error;
	for (i = 0; i < n; i++)
		store__bind_text(s, (int)i + 1, args[i]);
	sqlite3_bind_int64(s, (int)n + 1, sl_now_ms());
	if (sqlite3_step(s) != SQLITE_DONE)
		error = store__fail(st, err, what);
	sqlite3_finalize(s);
	return error;
}

int store_target_set(struct store *st, const char *target, const char *root, const char *tip,
		     struct sl_err *err)
{
	const char *args[] = { target, root ? root : tip, tip };

	return exec_text(st,
			 "INSERT INTO target_tips (target, root, tip, updated_ms) VALUES (?, ?, ?, ?) "
			 "ON CONFLICT (target) DO UPDATE SET tip = excluded.tip, "
			 "updated_ms = excluded.updated_ms",
			 args, 3, "cannot record the target's tip", err);
}

int store_user_commit_add(struct store *st, const char *target, const char *commit,
			  const char *how, struct sl_err *err)
{
	const char *args[] = { target, commit, how };

	return exec_text(st,
			 "INSERT INTO user_commits (target, commit_id, how, at_ms) VALUES (?, ?, ?, ?) "
			 "ON CONFLICT (target, commit_id) DO UPDATE SET how = excluded.how, "
			 "at_ms = excluded.at_ms WHERE excluded.how = 'accepted'",
			 args, 3, "cannot record a commit as the user's", err);
}

int store_user_commit_has(struct store *st, const char *target, const char *commit,
			  struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	int rc, error;

	if ((error = store__prepare(st, &s, "SELECT 1 FROM user_commits WHERE target = ? AND "
				    "commit_id = ?", err)) != 0)
		return error;
	store__bind_text(s, 1, target);
	store__bind_text(s, 2, commit);
	rc = sqlite3_step(s);
	error = rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0
			       : store__fail(st, err, "cannot read the user's commits");
	sqlite3_finalize(s);
	return error;
}

int store_alert_open(struct store *st, const char *target, const char *commit,
		     const char *run_id, struct sl_err *err)
{
	const char *args[] = { target, commit, run_id };
	int error;

	if ((error = exec_text(st,
			       "INSERT INTO target_alerts (target, commit_id, run_id, found_ms) "
			       "VALUES (?, ?, ?, ?) ON CONFLICT (target, commit_id) DO UPDATE SET "
			       "run_id = excluded.run_id, found_ms = excluded.found_ms, "
			       "cleared_ms = NULL WHERE cleared_ms IS NOT NULL",
			       args, 3, "cannot record an unreviewed landing", err)) != 0)
		return error;
	return sqlite3_changes(store_db(st)) > 0;
}

int store_alert_clear(struct store *st, const char *target, const char *commit,
		      struct sl_err *err)
{
	const char *args[] = { target, commit };

	return exec_text(st,
			 "UPDATE target_alerts SET cleared_ms = ?3 WHERE target = ?1 AND "
			 "commit_id = ?2 AND cleared_ms IS NULL",
			 args, 2, "cannot clear an unreviewed landing", err);
}

int store_alerts_list(struct store *st, const char *target, struct store_alert **out, size_t *n,
		      struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	struct store_alert *v = NULL, *nv;
	size_t cap = 0;
	int rc, error;

	*out = NULL;
	*n = 0;
	if ((error = store__prepare(st, &s, "SELECT commit_id, run_id, found_ms FROM target_alerts "
				    "WHERE target = ? AND cleared_ms IS NULL ORDER BY found_ms, "
				    "commit_id", err)) != 0)
		return error;
	store__bind_text(s, 1, target);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (*n == cap) {
			cap = cap ? cap * 2 : 4;
			if (!(nv = realloc(v, cap * sizeof(*v)))) {
				error = sl_err_set(err, SL_ERROR, "out of memory");
				goto out;
			}
			v = nv;
		}
		v[*n].commit = store__col_dup(s, 0);
		v[*n].run_id = store__col_dup(s, 1);
		v[*n].found_ms = sqlite3_column_int64(s, 2);
		(*n)++;
	}
	if (rc != SQLITE_DONE)
		error = store__fail(st, err, "cannot list unreviewed landings");
out:
	sqlite3_finalize(s);
	if (error) {
		store_alerts_free(v, *n);
		v = NULL;
		*n = 0;
	}
	*out = v;
	return error;
}

void store_alerts_free(struct store_alert *v, size_t n)
{
	size_t i;

	for (i = 0; v && i < n; i++) {
		free(v[i].commit);
		free(v[i].run_id);
	}
	free(v);
}

int store_landing_run(struct store *st, const char *commit, char **run, struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	int rc, error;

	*run = NULL;
	if ((error = store__prepare(st, &s, "SELECT id FROM runs WHERE merge_commit = ? AND "
				    "state = ? ORDER BY id LIMIT 1", err)) != 0)
		return error;
	store__bind_text(s, 1, commit);
	store__bind_text(s, 2, run_state_name(RUN_MERGED));
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		error = (*run = store__col_dup(s, 0)) ? 0 : sl_err_set(err, SL_ERROR, "out of memory");
	else if (rc == SQLITE_DONE)
		error = SL_ENOTFOUND;
	else
		error = store__fail(st, err, "cannot look up a landing");
	sqlite3_finalize(s);
	return error;
}

int store_run_commits(struct store *st, struct store_run_commit **out, size_t *n,
		      struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	struct store_run_commit *v = NULL, *nv;
	size_t cap = 0;
	int rc, error;

	*out = NULL;
	*n = 0;
	if ((error = store__prepare(st, &s,
				    "SELECT id, head_commit, base_commit, branch_name FROM runs "
				    "UNION ALL SELECT a.run_id, a.head_commit, r.base_commit, NULL "
				    "FROM attempts a JOIN runs r ON r.id = a.run_id WHERE "
				    "a.head_commit IS NOT NULL ORDER BY 1",
				    err)) != 0)
		return error;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (*n == cap) {
			cap = cap ? cap * 2 : 64;
			if (!(nv = realloc(v, cap * sizeof(*v)))) {
				error = sl_err_set(err, SL_ERROR, "out of memory");
				goto out;
			}
			v = nv;
		}
		v[*n].run_id = store__col_dup(s, 0);
		v[*n].head = store__col_dup(s, 1);
		v[*n].base = store__col_dup(s, 2);
		v[*n].branch = store__col_dup(s, 3);
		(*n)++;
		if (!v[*n - 1].run_id) {
			error = sl_err_set(err, SL_ERROR, "out of memory");
			goto out;
		}
	}
	if (rc != SQLITE_DONE)
		error = store__fail(st, err, "cannot list the runs' commits");
out:
	sqlite3_finalize(s);
	if (error) {
		store_run_commits_free(v, *n);
		v = NULL;
		*n = 0;
	}
	*out = v;
	return error;
}

void store_run_commits_free(struct store_run_commit *v, size_t n)
{
	size_t i;

	for (i = 0; v && i < n; i++) {
		free(v[i].run_id);
		free(v[i].head);
		free(v[i].base);
		free(v[i].branch);
	}
	free(v);
}
