/* The merge train's cars (table train_cars) and store_meta: docs/design.md, The merge train. */
#include "store/store_int.h"
#include "core/time.h"

#include <stdlib.h>
#include <string.h>

#define CAR_COLUMNS                                                                                \
	"run_id, target, seq, status, base, head, commit_id, tree, ahead, tester, gates_json, "   \
	"joined_ms, started_ms, tested_ms, updated_ms, covered_by, covered_commit, lanes, "      \
	"lane_commit"

void store_car_release(struct store_car *c)
{
	if (!c)
		return;
	free(c->run_id);
	free(c->target);
	free(c->base);
	free(c->head);
	free(c->commit);
	free(c->tree);
	free(c->ahead);
	free(c->tester);
	free(c->gates_json);
	free(c->covered_by);
	free(c->covered_commit);
	free(c->lane_commit);
	memset(c, 0, sizeof(*c));
}

void store_cars_free(struct store_car *v, size_t n)
{
	size_t i;

	for (i = 0; v && i < n; i++)
		store_car_release(&v[i]);
	free(v);
}

/* A text column that may be NULL: 0, or -1 when out of memory. */
static int col_opt(sqlite3_stmt *s, int i, char **out)
{
	*out = NULL;
	if (sqlite3_column_type(s, i) == SQLITE_NULL)
		return 0;
	return (*out = store__col_dup(s, i)) ? 0 : -1;
}

static int read_car(sqlite3_stmt *s, struct store_car *c, struct sl_err *err)
{
	char **text[] = { &c->run_id, &c->target, NULL,	    NULL,      &c->base,
			  &c->head,   &c->commit, &c->tree, &c->ahead, &c->tester,
			  &c->gates_json };
	int i;

	memset(c, 0, sizeof(*c));
	for (i = 0; i < (int)(sizeof(text) / sizeof(text[0])); i++)
		if (text[i] && col_opt(s, i, text[i]) != 0) {
			store_car_release(c);
			return sl_err_set(err, SL_ERROR, "out of memory");
		}
	c->seq = sqlite3_column_int64(s, 2);
	if (train_status_parse((const char *)sqlite3_column_text(s, 3), &c->status) != 0)
		c->status = TRAIN_WAITING;
	c->joined_ms = sqlite3_column_int64(s, 11);
	c->started_ms = sqlite3_column_int64(s, 12);
	c->tested_ms = sqlite3_column_int64(s, 13);
	c->updated_ms = sqlite3_column_int64(s, 14);
	c->lanes = sqlite3_column_int64(s, 17) & 0xffff; /* the key above: lanes_key */
	c->lanes_key = sqlite3_column_int64(s, 17) >> 16;
	if (col_opt(s, 15, &c->covered_by) != 0 || col_opt(s, 16, &c->covered_commit) != 0 ||
	    col_opt(s, 18, &c->lane_commit) != 0) {
		store_car_release(c);
		return sl_err_set(err, SL_ERROR, "out of memory");
	}
	return 0;
}

int store_train_get(struct store *st, const char *run_id, struct store_car *out,
		    struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	int rc, error;

	memset(out, 0, sizeof(*out));
	if ((error = store__prepare(st, &s, "SELECT " CAR_COLUMNS " FROM train_cars WHERE run_id = ?",
				    err)) != 0)
		return error;
	store__bind_text(s, 1, run_id);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		error = read_car(s, out, err);
	else if (rc == SQLITE_DONE)
		error = sl_err_set(err, SL_ENOTFOUND, "run '%s' is in no merge train", run_id);
	else
		error = store__fail(st, err, "cannot read the merge train");
	sqlite3_finalize(s);
	return error;
}

int store_train_list(struct store *st, const char *target, struct store_car **out, size_t *n,
		     struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	struct store_car *v = NULL, *nv;
	size_t cnt = 0;
	int rc, error;

	*out = NULL;
	*n = 0;
	if ((error = store__prepare(st, &s,
				    "SELECT " CAR_COLUMNS " FROM train_cars c WHERE target = ? ORDER BY "
				    "(SELECT w.priority FROM runs r JOIN work_orders w ON "
				    "w.id = r.work_order_id WHERE r.id = c.run_id), seq, run_id",
				    err)) != 0)
		return error;
	store__bind_text(s, 1, target);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (!(nv = realloc(v, (cnt + 1) * sizeof(*v)))) {
			error = sl_err_set(err, SL_ERROR, "out of memory");
			goto out;
		}
		v = nv;
		if ((error = read_car(s, &v[cnt], err)) != 0)
			goto out;
		cnt++;
	}
	if (rc != SQLITE_DONE)
		error = store__fail(st, err, "cannot read the merge train");
out:
	sqlite3_finalize(s);
	if (error) {
		store_cars_free(v, cnt);
		return error;
	}
	*out = v;
	*n = cnt;
	return 0;
}

/* The car's head, in the caller's transaction: 1 same head, 0 none or another, or an error. */
static int same_head(struct store *st, const char *run_id, const char *head, struct sl_err *err)
{
	struct store_car c;
	int error = store_train_get(st, run_id, &c, err);

	if (error == SL_ENOTFOUND) {
		sl_err_clear(err);
		return 0;
	}
	if (error)
		return error;
	error = c.head && head && !strcmp(c.head, head);
	store_car_release(&c);
	return error;
}

int store_train_join(struct store *st, const char *run_id, const char *target, const char *head,
		     int64_t lanes, int *joined, struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	int64_t now = sl_now_ms();
	int error;

	*joined = 0;
	if ((error = store_begin(st, err)) != 0)
		return error;
	if ((error = same_head(st, run_id, head, err)) != 0) {
		store_rollback(st);
		return error < 0 ? error : 0; /* in already, with this head */
	}
	/*
	 * seq: the approval's time (docs/design.md, The merge train: priority, then approval time),
	 * but behind the cars of its priority already under test or green: a
	 * run approved a moment earlier that reaches the train later does not
	 * make them test again.
	 */
	if ((error = store__prepare(st, &s,
				    "INSERT OR REPLACE INTO train_cars (run_id, target, seq, status, "
				    "head, joined_ms, updated_ms, lanes) VALUES (?1, ?2, MAX("
				    "COALESCE((SELECT MAX(at_ms) FROM events WHERE run_id = ?1 AND "
				    "to_state = ?5 AND from_state IN (?6, ?7)), ?4), "
				    "COALESCE((SELECT MAX(c.seq) + 1 FROM train_cars c JOIN runs r ON "
				    "r.id = c.run_id JOIN work_orders w ON w.id = r.work_order_id "
				    "WHERE c.target = ?2 AND c.status IN (?9, ?10) AND w.priority = "
				    "(SELECT w1.priority FROM runs r1 JOIN work_orders w1 ON "
				    "w1.id = r1.work_order_id WHERE r1.id = ?1)), 0)), ?8, ?3, ?4, ?4, ?11)",
				    err)) != 0)
		goto out;
	store__bind_text(s, 1, run_id);
	store__bind_text(s, 2, target);
	store__bind_text(s, 3, head);
	sqlite3_bind_int64(s, 4, now);
	store__bind_text(s, 5, run_state_name(RUN_APPROVED));
	store__bind_text(s, 6, run_state_name(RUN_REVIEWING));
	store__bind_text(s, 7, run_state_name(RUN_AWAITING_REVIEW));
	store__bind_text(s, 8, train_status_name(TRAIN_WAITING));
	store__bind_text(s, 9, train_status_name(TRAIN_TESTING));
	store__bind_text(s, 10, train_status_name(TRAIN_GREEN));
	sqlite3_bind_int64(s, 11, lanes);
	if (sqlite3_step(s) != SQLITE_DONE)
		error = store__fail(st, err, "cannot put the run in the merge train");
out:
	sqlite3_finalize(s);
	if (error) {
		store_rollback(st);
		return error;
	}
	*joined = 1;
	return store_commit(st, err);
}

int store_train_put(struct store *st, const struct store_car *c, struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	int error;

	if ((error = store__prepare(st, &s,
				    "UPDATE train_cars SET status = ?2, base = ?3, commit_id = ?4, "
				    "tree = ?5, ahead = ?6, tester = ?7, gates_json = ?8, "
				    "started_ms = ?9, tested_ms = ?10, updated_ms = ?11, seq = ?12, "
				    "covered_by = ?13, covered_commit = ?14, lanes = ?15, "
				    "lane_commit = ?16, "
				    "landing = CASE WHEN status = ?2 AND commit_id IS ?4 THEN landing "
				    "END WHERE run_id = ?1",
				    err)) != 0)
		return error;
	store__bind_text(s, 1, c->run_id);
	store__bind_text(s, 2, train_status_name(c->status));
	store__bind_text(s, 3, c->base);
	store__bind_text(s, 4, c->commit);
	store__bind_text(s, 5, c->tree);
	store__bind_text(s, 6, c->ahead);
	store__bind_text(s, 7, c->tester);
	store__bind_text(s, 8, c->gates_json);
	sqlite3_bind_int64(s, 9, c->started_ms);
	sqlite3_bind_int64(s, 10, c->tested_ms);
	sqlite3_bind_int64(s, 11, sl_now_ms());
	sqlite3_bind_int64(s, 12, c->seq);
	store__bind_text(s, 13, c->covered_by);
	store__bind_text(s, 14, c->covered_commit);
	sqlite3_bind_int64(s, 15, c->lanes ? c->lanes_key << 16 | c->lanes : 0);
	store__bind_text(s, 16, c->lane_commit);
	if (sqlite3_step(s) != SQLITE_DONE)
		error = store__fail(st, err, "cannot record the merge train's car");
	else if (sqlite3_changes(store_db(st)) != 1)
		error = sl_err_set(err, SL_ENOTFOUND, "run '%s' is in no merge train", c->run_id);
	sqlite3_finalize(s);
	return error;
}

int store_train_landing_set(struct store *st, const char *run_id, const char *commit,
			    struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	int error;

	if ((error = store__prepare(st, &s,
				    "UPDATE train_cars SET landing = ?2, updated_ms = ?4 WHERE "
				    "run_id = ?1 AND commit_id = ?2 AND status = ?3",
				    err)) != 0)
		return error;
	store__bind_text(s, 1, run_id);
	store__bind_text(s, 2, commit);
	store__bind_text(s, 3, train_status_name(TRAIN_GREEN));
	sqlite3_bind_int64(s, 4, sl_now_ms());
	if (sqlite3_step(s) != SQLITE_DONE)
		error = store__fail(st, err, "cannot record the landing of the merge train's car");
	else if (sqlite3_changes(store_db(st)) != 1)
		error = sl_err_set(err, SL_ENOTFOUND, "run '%s' has no green car %.12s to land",
				   run_id, commit);
	sqlite3_finalize(s);
	return error;
}

int store_train_landing_run(struct store *st, const char *commit, char **run_id,
			    struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	int rc, error;

	*run_id = NULL;
	if ((error = store__prepare(st, &s,
				    "SELECT run_id FROM train_cars WHERE landing = ?1 AND "
				    "commit_id = ?1 AND status = ?2",
				    err)) != 0)
		return error;
	store__bind_text(s, 1, commit);
	store__bind_text(s, 2, train_status_name(TRAIN_GREEN));
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		error = (*run_id = store__col_dup(s, 0)) ? 0 : sl_err_set(err, SL_ERROR,
									  "out of memory");
	else if (rc == SQLITE_DONE)
		error = sl_err_set(err, SL_ENOTFOUND, "no car set out to land as %.12s", commit);
	else
		error = store__fail(st, err, "cannot read the merge train");
	sqlite3_finalize(s);
	return error;
}

int store_train_leave(struct store *st, const char *run_id, struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	int error;

	if ((error = store__prepare(st, &s, "DELETE FROM train_cars WHERE run_id = ?", err)) != 0)
		return error;
	store__bind_text(s, 1, run_id);
	if (sqlite3_step(s) != SQLITE_DONE)
		error = store__fail(st, err, "cannot take the run out of the merge train");
	sqlite3_finalize(s);
	return error;
}

int store_meta_get(struct store *st, const char *key, char **value, struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	int rc, error;

	*value = NULL;
	if ((error = store__prepare(st, &s, "SELECT value FROM store_meta WHERE key = ?", err)) != 0)
		return error;
	store__bind_text(s, 1, key);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		error = (*value = store__col_dup(s, 0)) ? 0 : sl_err_set(err, SL_ERROR, "out of memory");
	else if (rc == SQLITE_DONE)
		error = sl_err_set(err, SL_ENOTFOUND, "no '%s' in the store", key);
	else
		error = store__fail(st, err, "cannot read the store's facts");
	sqlite3_finalize(s);
	return error;
}

int64_t store_train_tested_last(struct store *st, const char *target)
{
	sqlite3_stmt *s = NULL;
	struct sl_err err = SL_ERR_INIT;
	int64_t ms = 0;

	if (store__prepare(st, &s, "SELECT COALESCE(MAX(tested_ms), 0) FROM train_cars WHERE "
			   "target = ?", &err) != 0)
		return 0;
	store__bind_text(s, 1, target);
	if (sqlite3_step(s) == SQLITE_ROW)
		ms = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return ms;
}
