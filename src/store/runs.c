#include "store/store.h"
#include "store/store_int.h"
#include "core/buf.h"
#include "core/config.h"
#include "core/id.h"
#include "core/time.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RUN_COLUMNS                                                                                \
	"id, work_order_id, wo_content_hash, state, reason, target, branch_name, base_commit, "   \
	"head_commit, approved_tree, merge_commit, merge_status, conflict_with_run_id, reviewer, " \
	"mode, attempt, resolve_attempts, review_tries, owner_pid, owner_start, created_ms, "      \
	"updated_ms, finished_ms"

static int in_list(const char *s, const char **list)
{
	for (; s && *list; list++)
		if (!strcmp(s, *list))
			return 1;
	return 0;
}

/* A state or mode this sluice does not know (a damaged or foreign database). */
static int unknown_value(sqlite3_stmt *s, struct sl_err *err)
{
	return sl_err_set(err, SL_ERROR,
			  "run '%s' has state '%s' and mode '%s', which this sluice does not know",
			  sqlite3_column_text(s, 0), sqlite3_column_text(s, 3),
			  sqlite3_column_text(s, 14));
}

/* One row of RUN_COLUMNS into *r (memset first): 0, or SL_ERROR (unknown_value). */
static int read_run(sqlite3_stmt *s, struct store_run *r, struct sl_err *err)
{
	memset(r, 0, sizeof(*r));
	if (run_state_parse((const char *)sqlite3_column_text(s, 3), &r->state) != 0 ||
	    run_mode_parse((const char *)sqlite3_column_text(s, 14), &r->mode) != 0)
		return unknown_value(s, err);
	r->id = store__col_dup(s, 0);
	r->work_order_id = store__col_dup(s, 1);
	r->wo_content_hash = store__col_dup(s, 2);
	r->reason = store__col_dup(s, 4);
	r->target = store__col_dup(s, 5);
	r->branch_name = store__col_dup(s, 6);
	r->base_commit = store__col_dup(s, 7);
	r->head_commit = store__col_dup(s, 8);
	r->approved_tree = store__col_dup(s, 9);
	r->merge_commit = store__col_dup(s, 10);
	r->merge_status = store__col_dup(s, 11);
	r->conflict_with_run_id = store__col_dup(s, 12);
	r->reviewer = store__col_dup(s, 13);
	r->attempt = sqlite3_column_int(s, 15);
	r->resolve_attempts = sqlite3_column_int(s, 16);
	r->review_tries = sqlite3_column_int(s, 17);
	r->owner_pid = sqlite3_column_int64(s, 18);
	r->owner_start = store__col_dup(s, 19);
	r->created_ms = sqlite3_column_int64(s, 20);
	r->updated_ms = sqlite3_column_int64(s, 21);
	r->finished_ms = sqlite3_column_int64(s, 22);
	return 0;
}

void store_run_release(struct store_run *r)
{
	char **fields[] = { &r->id, &r->work_order_id, &r->wo_content_hash, &r->reason,
			    &r->target, &r->branch_name, &r->base_commit, &r->head_commit,
			    &r->approved_tree, &r->merge_commit, &r->merge_status,
			    &r->conflict_with_run_id, &r->reviewer, &r->owner_start };
	size_t i;

	if (!r)
		return;
	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		free(*fields[i]);
	memset(r, 0, sizeof(*r));
}

void store_runs_free(struct store_run *runs, size_t n)
{
	size_t i;

	for (i = 0; i < n && runs; i++)
		store_run_release(&runs[i]);
	free(runs);
}

int store_run_insert(struct store *st, const struct store_run *run, struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	int64_t now = sl_now_ms();
	int error;

	if ((error = store__prepare(st, &s,
				    "INSERT INTO runs (id, work_order_id, wo_content_hash, reason, "
				    "target, branch_name, base_commit, mode, owner_pid, owner_start, "
				    "created_ms, updated_ms, state) VALUES "
				    "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
				    err)) != 0)
		goto out;
	store__bind_text(s, 1, run->id);
	store__bind_text(s, 2, run->work_order_id);
	store__bind_text(s, 3, run->wo_content_hash);
	store__bind_text(s, 4, run->reason ? run->reason : "claimed");
	store__bind_text(s, 5, run->target);
	store__bind_text(s, 6, run->branch_name);
	store__bind_text(s, 7, run->base_commit);
	store__bind_text(s, 8, run_mode_name(run->mode));
	sqlite3_bind_int64(s, 9, run->owner_pid);
	store__bind_text(s, 10, run->owner_start);
	sqlite3_bind_int64(s, 11, now);
	sqlite3_bind_int64(s, 12, now);
	store__bind_text(s, 13, run_state_name(RUN_QUEUED));
	if (sqlite3_step(s) != SQLITE_DONE) {
		error = store__fail(st, err, "cannot insert a run");
		goto out;
	}
	error = store_event_add(st, run->id, run->work_order_id, NULL, run_state_name(RUN_QUEUED),
				run->reason ? run->reason : "claimed", err);
out:
	sqlite3_finalize(s);
	return error;
}

/*
 * The ways a person names a run, after its full id: the latest run of a
 * work order of that id; else every run the name is a prefix of, whose
 * random part (the branch name's suffix) it is, or whose branch it names
 * (with or without "run/").
 */
#define NAME_WO_SQL                                                                                \
	"SELECT id FROM runs WHERE work_order_id = ?1 ORDER BY created_ms DESC, id DESC LIMIT 1"
#define NAME_MATCH_SQL                                                                             \
	"SELECT id, work_order_id, state FROM runs WHERE substr(id, 1, length(?1)) = ?1 OR "      \
	"(length(?1) = ?2 AND substr(id, -length(?1)) = ?1) OR "                                  \
	"branch_name = ?1 OR branch_name = 'run/' || ?1 ORDER BY id LIMIT 7"

/* Every run `name` matches (up to 7) into *ids, one "id (wo, state)" per line. */
static int name_matches(struct store *st, const char *name, struct sl_buf *ids, char *one,
			size_t one_n, int *n, struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	int error;

	*n = 0;
	if ((error = store__prepare(st, &s, NAME_MATCH_SQL, err)) != 0)
		return error;
	store__bind_text(s, 1, name);
	sqlite3_bind_int(s, 2, SL_ID_SHORT_LEN);
	while (sqlite3_step(s) == SQLITE_ROW) {
		if (!(*n)++)
			snprintf(one, one_n, "%s", (const char *)sqlite3_column_text(s, 0));
		if (*n <= 6)
			sl_buf_addf(ids, "%s%s (%s, %s)", *n > 1 ? ", " : "",
				    sqlite3_column_text(s, 0), sqlite3_column_text(s, 1),
				    sqlite3_column_text(s, 2));
	}
	if (*n > 6)
		sl_buf_puts(ids, ", ...");
	sqlite3_finalize(s);
	return 0;
}

/* The latest run of work order `name` into one[], or "" when it has none. */
static int name_wo(struct store *st, const char *name, char *one, size_t one_n,
		   struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	int error;

	one[0] = '\0';
	if ((error = store__prepare(st, &s, NAME_WO_SQL, err)) != 0)
		return error;
	store__bind_text(s, 1, name);
	if (sqlite3_step(s) == SQLITE_ROW)
		snprintf(one, one_n, "%s", (const char *)sqlite3_column_text(s, 0));
	sqlite3_finalize(s);
	return 0;
}

int store_run_resolve(struct store *st, const char *name, char *id, size_t n,
		      struct sl_err *err)
{
	struct sl_buf ids = SL_BUF_INIT;
	int error, count = 0;

	if (!name || !*name)
		return sl_err_set(err, SL_EINVALID, "no run given; name a run by its id, a unique "
				  "prefix, its branch's suffix or its work order");
	if ((error = name_wo(st, name, id, n, err)) != 0 || id[0] ||
	    (error = name_matches(st, name, &ids, id, n, &count, err)) != 0)
		goto out;
	if (!count)
		error = sl_err_set(err, SL_ENOTFOUND,
				   "no run '%s' (by id, prefix, branch or work order); see 'sluice "
				   "runs' for the run ids", name);
	else if (count > 1)
		error = sl_err_set(err, SL_EAMBIGUOUS,
				   "run name '%s' is ambiguous: %s; give more characters or the "
				   "full id", name, sl_buf_cstr(&ids));
out:
	if (error)
		id[0] = '\0';
	sl_buf_release(&ids);
	return error;
}

int store_run_get(struct store *st, const char *id, struct store_run *out, struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	char full[128];
	int error, rc;

	memset(out, 0, sizeof(*out));
	if (!id || !*id)
		return store_run_resolve(st, id, full, sizeof(full), err);
	if ((error = store__prepare(st, &s, "SELECT " RUN_COLUMNS " FROM runs WHERE id = ?1",
				    err)) != 0)
		goto out;
	store__bind_text(s, 1, id);
	if ((rc = sqlite3_step(s)) == SQLITE_DONE) {
		/* not a full id: the names people use (store_run_resolve) */
		if ((error = store_run_resolve(st, id, full, sizeof(full), err)) != 0)
			goto out;
		sqlite3_reset(s);
		store__bind_text(s, 1, full);
		rc = sqlite3_step(s);
	}
	if (rc != SQLITE_ROW) {
		error = rc == SQLITE_DONE ? sl_err_set(err, SL_ENOTFOUND, "no run '%s'", id)
					  : store__fail(st, err, "cannot read runs");
		goto out;
	}
	error = read_run(s, out, err);
out:
	sqlite3_finalize(s);
	return error;
}

/* The run's work order (*wo, a new string) and state, in the open transaction. */
static int current_state(struct store *st, const char *run_id, char **wo, enum run_state *state,
			 struct sl_err *err)
{
	sqlite3_stmt *q = NULL;
	int error;

	*wo = NULL;
	if ((error = store__prepare(st, &q, "SELECT work_order_id, state FROM runs WHERE id = ?",
				    err)) != 0)
		return error;
	store__bind_text(q, 1, run_id);
	if (sqlite3_step(q) != SQLITE_ROW)
		error = sl_err_set(err, SL_ENOTFOUND, "no run '%s'", run_id);
	else if (run_state_parse((const char *)sqlite3_column_text(q, 1), state) != 0)
		error = sl_err_set(err, SL_ERROR,
				   "run '%s' has state '%s', which this sluice does not know",
				   run_id, sqlite3_column_text(q, 1));
	else if (!(*wo = store__col_dup(q, 0)))
		error = sl_err_set(err, SL_ERROR, "out of memory");
	sqlite3_finalize(q);
	return error;
}

/* The row's move from `from` to `to`, in the open transaction. */
static int update_state(struct store *st, const char *run_id, enum run_state from,
			enum run_state to, const char *reason, struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	int64_t now = sl_now_ms();
	int error;

	if ((error = store__prepare(st, &s,
				    "UPDATE runs SET state = ?, reason = ?, updated_ms = ?, "
				    "finished_ms = CASE WHEN ? THEN ? ELSE finished_ms END "
				    "WHERE id = ? AND state = ?",
				    err)) != 0)
		return error;
	store__bind_text(s, 1, run_state_name(to));
	store__bind_text(s, 2, reason ? reason : "");
	sqlite3_bind_int64(s, 3, now);
	sqlite3_bind_int(s, 4, run_state_is_final(to));
	sqlite3_bind_int64(s, 5, now);
	store__bind_text(s, 6, run_id);
	store__bind_text(s, 7, run_state_name(from));
	if (sqlite3_step(s) != SQLITE_DONE)
		error = store__fail(st, err, "cannot update a run");
	else if (!sqlite3_changes(store_db(st)))
		error = sl_err_set(err, SL_ECONFLICT, "run '%s' changed under us", run_id);
	sqlite3_finalize(s);
	return error;
}

int store_run_transition(struct store *st, const char *run_id, enum run_state from,
			 enum run_state to, const char *reason, int in_tx, struct sl_err *err)
{
	enum run_state old;
	char *wo = NULL;
	int error;

	if (!run_state_info(to))
		return sl_err_set(err, SL_EINVALID, "%d is not a run state", (int)to);
	if (!in_tx && (error = store_begin(st, err)) != 0)
		return error;
	if ((error = current_state(st, run_id, &wo, &old, err)) != 0)
		goto out;
	if (old != from) {
		error = sl_err_set(err, SL_ECONFLICT, "run '%s' is %s, not %s", run_id,
				   run_state_name(old), run_state_name(from));
		goto out;
	}
	if (!run_state_can_move(old, to)) {
		error = sl_err_set(err, SL_EINVALID, "run '%s' cannot move from %s to %s", run_id,
				   run_state_name(old), run_state_name(to));
		goto out;
	}
	if ((error = update_state(st, run_id, old, to, reason, err)) == 0)
		error = store_event_add(st, run_id, wo, run_state_name(old), run_state_name(to),
					reason, err);
	/* the notifiers' outbox row, in the same transaction: a crash never loses it */
	if (!error)
		error = store__notify_add(st, sqlite3_last_insert_rowid(store_db(st)), run_id, old,
					  to, reason, err);
	if (!error && !in_tx)
		error = store_commit(st, err);
out:
	if (error && !in_tx)
		store_rollback(st);
	free(wo);
	return error;
}

int store_run_set_reason(struct store *st, const char *run_id, const char *reason,
			 struct sl_err *err)
{
	struct store_run r;
	int error;

	if ((error = store_run_get(st, run_id, &r, err)) != 0)
		return error;
	if (!r.reason || strcmp(r.reason, reason))
		error = store_run_transition(st, r.id, r.state, r.state, reason, 0, err);
	store_run_release(&r);
	return error;
}

static const char *text_cols[] = { "branch_name", "base_commit", "head_commit", "approved_tree",
				   "merge_commit", "merge_status", "conflict_with_run_id",
				   "reviewer", "mode", "owner_start", NULL };
static const char *int_cols[] = { "attempt", "resolve_attempts", "review_tries", "owner_pid",
				  NULL };

int store_run_update(struct store *st, const char *run_id, const char *const *fields, int in_tx,
		     struct sl_err *err)
{
	struct sl_buf sql = SL_BUF_INIT;
	sqlite3_stmt *s = NULL;
	int error = 0, i, n = 0;

	sl_buf_puts(&sql, "UPDATE runs SET updated_ms = ?");
	for (i = 0; fields[i]; i += 2) {
		if (!in_list(fields[i], text_cols) && !in_list(fields[i], int_cols)) {
			error = sl_err_set(err, SL_EINVALID, "'%s' is not an updatable run column",
					   fields[i]);
			goto out;
		}
		/* the name comes from the whitelist above, never from input */
		sl_buf_addf(&sql, ", %s = ?", fields[i]);
		n++;
	}
	sl_buf_puts(&sql, " WHERE id = ?");
	if (!in_tx && (error = store_begin(st, err)) != 0)
		goto out;
	if ((error = store__prepare(st, &s, sl_buf_cstr(&sql), err)) != 0)
		goto out;
	sqlite3_bind_int64(s, 1, sl_now_ms());
	for (i = 0; i < n; i++) {
		const char *v = fields[2 * i + 1];
		if (v && in_list(fields[2 * i], int_cols))
			sqlite3_bind_int64(s, i + 2, strtoll(v, NULL, 10));
		else
			store__bind_text(s, i + 2, v);
	}
	store__bind_text(s, n + 2, run_id);
	if (sqlite3_step(s) != SQLITE_DONE)
		error = store__fail(st, err, "cannot update a run");
	else if (!sqlite3_changes(store_db(st)))
		error = sl_err_set(err, SL_ENOTFOUND, "no run '%s'", run_id);
	if (!in_tx)
		error = error ? error : store_commit(st, err);
out:
	if (error && !in_tx)
		store_rollback(st);
	sqlite3_finalize(s);
	sl_buf_release(&sql);
	return error;
}

/* "state is one of ?1", with the states as ",a,b," (bound, never spliced into SQL) */
#define STATE_IN "(?1 IS NULL OR " STORE_STATE_IN("?1", "state") ")"

/* Bind a set of states to ?1: NULL for every state. */
static void bind_states(sqlite3_stmt *s, run_state_set states, char buf[STORE_STATE_LIST_MAX])
{
	store__bind_text(s, 1, states == RUN_STATES_ALL ? NULL : store__state_list(buf, states));
}

int store_runs_count(struct store *st, run_state_set states, struct sl_err *err)
{
	return store_runs_count_of(st, states, NULL, err);
}

int store_runs_count_of(struct store *st, run_state_set states, const char *wo_id,
			struct sl_err *err)
{
	char list[STORE_STATE_LIST_MAX];
	sqlite3_stmt *s = NULL;
	int n;

	if (store__prepare(st, &s,
			   "SELECT count(*) FROM runs WHERE " STATE_IN " AND "
			   "(?2 IS NULL OR work_order_id = ?2)",
			   err) != 0)
		return SL_ERROR;
	bind_states(s, states, list);
	store__bind_text(s, 2, wo_id);
	n = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int(s, 0)
					  : store__fail(st, err, "cannot count runs");
	sqlite3_finalize(s);
	return n;
}

int store_runs_list(struct store *st, run_state_set states, const char *wo_id,
		    struct store_run **out, size_t *n, struct sl_err *err)
{
	return store_runs_page(st, states, wo_id, 0, -1, out, n, err);
}

int store_runs_page(struct store *st, run_state_set states, const char *wo_id, int64_t offset,
		    int64_t limit, struct store_run **out, size_t *n, struct sl_err *err)
{
	char list[STORE_STATE_LIST_MAX];
	sqlite3_stmt *s = NULL;
	struct store_run *v = NULL, *nv;
	size_t cap = 0, len = 0;
	int error, rc;

	if ((error = store__prepare(st, &s,
				    "SELECT " RUN_COLUMNS " FROM runs WHERE " STATE_IN " AND "
				    "(?2 IS NULL OR work_order_id = ?2) "
				    "ORDER BY created_ms DESC, rowid DESC LIMIT ?3 OFFSET ?4",
				    err)) != 0)
		goto out;
	bind_states(s, states, list);
	store__bind_text(s, 2, wo_id);
	sqlite3_bind_int64(s, 3, limit);
	sqlite3_bind_int64(s, 4, offset);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (len == cap) {
			cap = cap ? cap * 2 : 16;
			if (!(nv = realloc(v, cap * sizeof(*v)))) {
				error = sl_err_set(err, SL_ERROR, "out of memory");
				goto out;
			}
			v = nv;
		}
		if ((error = read_run(s, &v[len], err)) != 0)
			goto out;
		len++;
	}
	if (rc != SQLITE_DONE)
		error = store__fail(st, err, "cannot list runs");
out:
	sqlite3_finalize(s);
	if (error) {
		store_runs_free(v, len);
		v = NULL;
		len = 0;
	}
	*out = v;
	*n = len;
	return error;
}

static int exec_bound(struct store *st, const char *sql, const char *a, int64_t b, const char *c,
		      int64_t d, const char *e, struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	int error;

	if ((error = store__prepare(st, &s, sql, err)) != 0)
		return error;
	store__bind_text(s, 1, a);
	sqlite3_bind_int64(s, 2, b);
	store__bind_text(s, 3, c);
	sqlite3_bind_int64(s, 4, d);
	store__bind_text(s, 5, e);
	if (sqlite3_step(s) != SQLITE_DONE)
		error = store__fail(st, err, "cannot write attempts");
	sqlite3_finalize(s);
	return error;
}

int store_attempt_start(struct store *st, const char *run_id, int n, enum run_mode mode,
			struct sl_err *err)
{
	return exec_bound(st,
			  "INSERT OR REPLACE INTO attempts (run_id, n, mode, started_ms) "
			  "VALUES (?1, ?2, ?3, ?4)",
			  run_id, n, run_mode_name(mode), sl_now_ms(), NULL, err);
}

int store_attempt_set_agent(struct store *st, const char *run_id, int n, const char *agent,
			    const char *session, struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	int error;

	if ((error = store__prepare(st, &s,
				    "UPDATE attempts SET agent = ?, session = ? WHERE run_id = ? "
				    "AND n = ?",
				    err)) != 0)
		return error;
	store__bind_text(s, 1, agent);
	store__bind_text(s, 2, session);
	store__bind_text(s, 3, run_id);
	sqlite3_bind_int(s, 4, n);
	if (sqlite3_step(s) != SQLITE_DONE)
		error = store__fail(st, err, "cannot write attempts");
	sqlite3_finalize(s);
	return error;
}

char *store_attempt_agent(struct store *st, const char *run_id, int n)
{
	struct sl_err ignored = SL_ERR_INIT;
	sqlite3_stmt *s = NULL;
	char *out = NULL;

	if (store__prepare(st, &s, "SELECT agent FROM attempts WHERE run_id = ? AND n = ?",
			   &ignored) != 0)
		return NULL;
	store__bind_text(s, 1, run_id);
	sqlite3_bind_int(s, 2, n);
	if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_type(s, 0) != SQLITE_NULL)
		out = strdup((const char *)sqlite3_column_text(s, 0));
	sqlite3_finalize(s);
	return out;
}

int store_attempt_head(struct store *st, const char *run_id, int n, char *head, size_t len,
		       struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	int error;

	head[0] = '\0';
	if ((error = store__prepare(st, &s, "SELECT head_commit FROM attempts WHERE run_id = ? "
					    "AND n = ? AND head_commit IS NOT NULL", err)) != 0)
		return error;
	store__bind_text(s, 1, run_id);
	sqlite3_bind_int(s, 2, n);
	if (sqlite3_step(s) == SQLITE_ROW)
		snprintf(head, len, "%s", (const char *)sqlite3_column_text(s, 0));
	else
		error = sl_err_set(err, SL_ENOTFOUND, "run '%s' has no attempt %d with a commit "
				   "(see 'sluice show %s')", run_id, n, run_id);
	sqlite3_finalize(s);
	return error;
}

int store_attempts_wall(struct store *st, const char *run_id, int current, int64_t now_ms,
			int64_t *out, struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	int error;

	*out = 0;
	if ((error = store__prepare(st, &s,
				    "SELECT COALESCE(SUM(MAX(COALESCE(finished_ms, ?) - started_ms, 0)), "
				    "0) FROM attempts WHERE run_id = ? AND (finished_ms IS NOT NULL "
				    "OR n = ?)", err)) != 0)
		return error;
	sqlite3_bind_int64(s, 1, now_ms);
	store__bind_text(s, 2, run_id);
	sqlite3_bind_int(s, 3, current);
	if (sqlite3_step(s) == SQLITE_ROW)
		*out = sqlite3_column_int64(s, 0);
	else
		error = store__fail(st, err, "cannot read attempts");
	sqlite3_finalize(s);
	return error;
}

int store_attempt_interrupted(struct store *st, const char *run_id, int n, int64_t end_ms,
			      const char *outcome, int64_t *wall_ms, struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	int error;

	*wall_ms = 0;
	if ((error = store__prepare(st, &s,
				    "UPDATE attempts SET finished_ms = MAX(?1, started_ms), "
				    "outcome = ?2 WHERE run_id = ?3 AND n = ?4 AND finished_ms IS NULL "
				    "RETURNING finished_ms - started_ms",
				    err)) != 0)
		return error;
	sqlite3_bind_int64(s, 1, end_ms);
	store__bind_text(s, 2, outcome);
	store__bind_text(s, 3, run_id);
	sqlite3_bind_int(s, 4, n);
	switch (sqlite3_step(s)) {
	case SQLITE_ROW:
		*wall_ms = sqlite3_column_int64(s, 0);
		error = 1;
		break;
	case SQLITE_DONE:
		break;
	default:
		error = store__fail(st, err, "cannot write attempts");
	}
	if (error == 1 && sqlite3_step(s) != SQLITE_DONE)
		error = store__fail(st, err, "cannot write attempts");
	sqlite3_finalize(s);
	return error;
}

int store_attempt_finish(struct store *st, const char *run_id, int n, int builder_exit,
			 const char *outcome, const char *head, struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	int error;

	if ((error = store__prepare(st, &s,
				    "UPDATE attempts SET finished_ms = ?, builder_exit = ?, "
				    "outcome = ?, head_commit = ? WHERE run_id = ? AND n = ?",
				    err)) != 0)
		return error;
	sqlite3_bind_int64(s, 1, sl_now_ms());
	sqlite3_bind_int(s, 2, builder_exit);
	store__bind_text(s, 3, outcome ? outcome : "");
	store__bind_text(s, 4, head);
	store__bind_text(s, 5, run_id);
	sqlite3_bind_int(s, 6, n);
	if (sqlite3_step(s) != SQLITE_DONE)
		error = store__fail(st, err, "cannot write attempts");
	sqlite3_finalize(s);
	return error;
}

int store_files_changed_set(struct store *st, const char *run_id,
			    const struct store_file_change *files, size_t n, struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	char status[2] = { 0, 0 };
	size_t i;
	int error;

	if ((error = store_begin(st, err)) != 0)
		return error;
	if ((error = exec_bound(st, "DELETE FROM files_changed WHERE run_id = ?1", run_id, 0, NULL,
				0, NULL, err)) != 0)
		goto out;
	if ((error = store__prepare(st, &s,
				    "INSERT OR REPLACE INTO files_changed (run_id, path, status) "
				    "VALUES (?, ?, ?)",
				    err)) != 0)
		goto out;
	for (i = 0; i < n; i++) {
		status[0] = files[i].status;
		sqlite3_reset(s);
		store__bind_text(s, 1, run_id);
		store__bind_text(s, 2, files[i].path);
		store__bind_text(s, 3, status);
		if (sqlite3_step(s) != SQLITE_DONE) {
			error = store__fail(st, err, "cannot record files changed");
			goto out;
		}
	}
	error = store_commit(st, err);
out:
	sqlite3_finalize(s);
	if (error)
		store_rollback(st);
	return error;
}

int store_rivals(struct store *st, const char *run_id, const char *const *paths, size_t npaths,
		 int64_t since_ms, char ***out, struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	char **ids = NULL, **nv;
	size_t len = 0, i;
	int error;

	*out = NULL;
	if ((error = store__prepare(st, &s,
				    "SELECT r.id FROM runs r WHERE r.state = ?4 AND r.id != ?1 "
				    "AND r.finished_ms >= ?2 AND EXISTS (SELECT 1 FROM files_changed f "
				    "WHERE f.run_id = r.id AND f.path = ?3) ORDER BY r.finished_ms DESC",
				    err)) != 0)
		return error;
	for (i = 0; i < npaths; i++) {
		sqlite3_reset(s);
		store__bind_text(s, 1, run_id);
		sqlite3_bind_int64(s, 2, since_ms);
		store__bind_text(s, 3, paths[i]);
		store__bind_text(s, 4, run_state_name(RUN_MERGED));
		while (sqlite3_step(s) == SQLITE_ROW) {
			const char *id = (const char *)sqlite3_column_text(s, 0);
			size_t j;
			for (j = 0; j < len && strcmp(ids[j], id); j++)
				;
			if (j < len)
				continue;
			if (!(nv = realloc(ids, (len + 2) * sizeof(*ids)))) {
				error = sl_err_set(err, SL_ERROR, "out of memory");
				goto out;
			}
			ids = nv;
			ids[len++] = strdup(id);
			ids[len] = NULL;
		}
	}
out:
	sqlite3_finalize(s);
	if (error) {
		for (i = 0; i < len; i++)
			free(ids[i]);
		free(ids);
		ids = NULL;
	}
	*out = ids;
	return error;
}

int store_run_by_landing(struct store *st, const char *commit, char **run_id,
			 struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	int error, rc;

	*run_id = NULL;
	if ((error = store__prepare(st, &s,
				    "SELECT id FROM runs WHERE merge_commit = ?1 AND state = ?2 "
				    "ORDER BY finished_ms DESC LIMIT 1",
				    err)) != 0)
		return error;
	store__bind_text(s, 1, commit);
	store__bind_text(s, 2, run_state_name(RUN_MERGED));
	if ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (!(*run_id = store__col_dup(s, 0)))
			error = sl_err_set(err, SL_ERROR, "out of memory");
	} else if (rc != SQLITE_DONE) {
		error = store__fail(st, err, "cannot read the run that landed a commit");
	}
	sqlite3_finalize(s);
	return error;
}

int store_files_common(struct store *st, const char *a, const char *b, char ***out,
		       struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	sl_strv v = NULL;
	int error, rc;

	*out = NULL;
	if ((error = store__prepare(st, &s,
				    "SELECT f.path FROM files_changed f WHERE f.run_id = ?1 AND "
				    "EXISTS (SELECT 1 FROM files_changed g WHERE g.run_id = ?2 "
				    "AND g.path = f.path) ORDER BY f.path",
				    err)) != 0)
		return error;
	store__bind_text(s, 1, a);
	store__bind_text(s, 2, b);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW)
		if (sl_strv_push(&v, (const char *)sqlite3_column_text(s, 0)) != 0) {
			error = sl_err_set(err, SL_ERROR, "out of memory");
			break;
		}
	if (!error && rc != SQLITE_DONE)
		error = store__fail(st, err, "cannot read files_changed");
	if (!error && !v && !(v = calloc(1, sizeof(*v))))
		error = sl_err_set(err, SL_ERROR, "out of memory");
	sqlite3_finalize(s);
	if (error)
		sl_strv_free(v);
	else
		*out = v;
	return error;
}

int store_events_list(struct store *st, const char *run_id, int64_t since,
		      struct store_event **out, size_t *n, struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	struct store_event *v = NULL, *nv;
	size_t len = 0, cap = 0;
	int error;

	if ((error = store__prepare(st, &s,
				    "SELECT seq, at_ms, run_id, work_order_id, from_state, to_state, "
				    "reason FROM events WHERE (?1 IS NULL OR run_id = ?1) AND seq > ?2 "
				    "ORDER BY seq",
				    err)) != 0)
		goto out;
	store__bind_text(s, 1, run_id);
	sqlite3_bind_int64(s, 2, since);
	while (sqlite3_step(s) == SQLITE_ROW) {
		if (len == cap) {
			cap = cap ? cap * 2 : 32;
			if (!(nv = realloc(v, cap * sizeof(*v)))) {
				error = sl_err_set(err, SL_ERROR, "out of memory");
				goto out;
			}
			v = nv;
		}
		v[len].seq = sqlite3_column_int64(s, 0);
		v[len].at_ms = sqlite3_column_int64(s, 1);
		v[len].run_id = store__col_dup(s, 2);
		v[len].work_order_id = store__col_dup(s, 3);
		v[len].from_state = store__col_dup(s, 4);
		v[len].to_state = store__col_dup(s, 5);
		v[len].reason = store__col_dup(s, 6);
		len++;
	}
out:
	sqlite3_finalize(s);
	if (error) {
		store_events_free(v, len);
		v = NULL;
		len = 0;
	}
	*out = v;
	*n = len;
	return error;
}

void store_events_free(struct store_event *ev, size_t n)
{
	size_t i;

	for (i = 0; i < n && ev; i++) {
		free(ev[i].run_id);
		free(ev[i].work_order_id);
		free(ev[i].from_state);
		free(ev[i].to_state);
		free(ev[i].reason);
	}
	free(ev);
}

int64_t store_events_last(struct store *st)
{
	sqlite3_stmt *s = NULL;
	int64_t v = 0;

	if (sqlite3_prepare_v2(store_db(st), "SELECT max(seq) FROM events", -1, &s, NULL) ==
		    SQLITE_OK &&
	    sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return v;
}

int store_run_claim(struct store *st, const struct store_run *run, struct sl_err *err)
{
	sqlite3_stmt *q = NULL;
	char reason[128], finals[STORE_STATE_LIST_MAX];
	int error;

	if ((error = store_begin(st, err)) != 0)
		return error;
	if ((error = store__prepare(st, &q,
				    "SELECT (SELECT state FROM work_orders WHERE id = ?1 AND "
				    "content_hash = ?2), (SELECT count(*) FROM runs WHERE "
				    "work_order_id = ?1 AND NOT " STORE_STATE_IN("?3", "state") ")",
				    err)) != 0)
		goto out;
	store__bind_text(q, 1, run->work_order_id);
	store__bind_text(q, 2, run->wo_content_hash);
	store__bind_text(q, 3, store__state_list(finals, run_states_where(run_state_is_final)));
	if (sqlite3_step(q) != SQLITE_ROW) {
		error = store__fail(st, err, "cannot read work orders");
		goto out;
	}
	if (!wo_state_is((const char *)sqlite3_column_text(q, 0), WO_READY) ||
	    sqlite3_column_int(q, 1) > 0) {
		error = sl_err_set(err, SL_ECONFLICT, "work order '%s' is no longer ready",
				   run->work_order_id);
		goto out;
	}
	if ((error = store_run_insert(st, run, err)) != 0)
		goto out;
	snprintf(reason, sizeof(reason), "run %s", run->id);
	if ((error = store_wo_set_state_tx(st, run->work_order_id, WO_RUNNING, reason, err)) != 0)
		goto out;
	error = store_commit(st, err);
out:
	sqlite3_finalize(q);
	if (error)
		store_rollback(st);
	return error;
}

int store_retry_get(struct store *st, const char *run_id, struct store_retry_state *out,
		    struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	int error, rc;

	out->builder_rule = out->prompt_rule = out->reset_rule = out->session_rule = -1;
	out->rules_from = 0;
	if ((error = store__prepare(st, &s,
				    "SELECT builder_rule, prompt_rule, reset_rule, session_rule, "
				    "rules_from FROM run_retry WHERE run_id = ?",
				    err)) != 0)
		return error;
	store__bind_text(s, 1, run_id);
	if ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		out->builder_rule = sqlite3_column_int(s, 0);
		out->prompt_rule = sqlite3_column_int(s, 1);
		out->reset_rule = sqlite3_column_int(s, 2);
		out->session_rule = sqlite3_column_int(s, 3);
		out->rules_from = sqlite3_column_int(s, 4);
	} else if (rc != SQLITE_DONE) {
		error = store__fail(st, err, "cannot read the retry state");
	}
	sqlite3_finalize(s);
	return error;
}

int store_retry_set(struct store *st, const char *run_id, const struct store_retry_state *rs,
		    struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	int error;

	if ((error = store_begin(st, err)) != 0)
		return error;
	if ((error = store__prepare(st, &s,
				    "INSERT OR REPLACE INTO run_retry (run_id, builder_rule, "
				    "prompt_rule, reset_rule, updated_ms, session_rule, rules_from) "
				    "VALUES (?, ?, ?, ?, ?, ?, ?)",
				    err)) != 0)
		goto out;
	store__bind_text(s, 1, run_id);
	sqlite3_bind_int(s, 2, rs->builder_rule);
	sqlite3_bind_int(s, 3, rs->prompt_rule);
	sqlite3_bind_int(s, 4, rs->reset_rule);
	sqlite3_bind_int64(s, 5, sl_now_ms());
	sqlite3_bind_int(s, 6, rs->session_rule);
	sqlite3_bind_int(s, 7, rs->rules_from);
	if (sqlite3_step(s) != SQLITE_DONE)
		error = store__fail(st, err, "cannot record the retry state");
	else
		error = store_commit(st, err);
out:
	sqlite3_finalize(s);
	if (error)
		store_rollback(st);
	return error;
}

int store_retry_clear(struct store *st, const char *run_id, struct sl_err *err)
{
	int error;

	if ((error = store_begin(st, err)) != 0)
		return error;
	if ((error = exec_bound(st, "DELETE FROM run_retry WHERE run_id = ?1", run_id, 0, NULL, 0,
				NULL, err)) == 0)
		error = store_commit(st, err);
	if (error)
		store_rollback(st);
	return error;
}

/* The run_conflicts row, in the caller's transaction; its paths are deleted. */
static int conflict_row(struct store *st, const char *run_id, const char *target_tip,
			const char *run_head, enum conflict_kind kind, const char *gates_json,
			struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	int error;

	if (!target_tip || !run_head)
		return sl_err_set(err, SL_EINVALID, "a conflict needs the target tip and the run head");
	if ((error = exec_bound(st, "DELETE FROM run_conflict_paths WHERE run_id = ?1", run_id, 0,
				NULL, 0, NULL, err)) != 0 ||
	    (error = store__prepare(st, &s,
				    "INSERT OR REPLACE INTO run_conflicts (run_id, found_ms, "
				    "target_tip, run_head, kind, gates) VALUES (?, ?, ?, ?, ?, ?)",
				    err)) != 0)
		return error;
	store__bind_text(s, 1, run_id);
	sqlite3_bind_int64(s, 2, sl_now_ms());
	store__bind_text(s, 3, target_tip);
	store__bind_text(s, 4, run_head);
	store__bind_text(s, 5, conflict_kind_name(kind));
	store__bind_text(s, 6, gates_json);
	if (sqlite3_step(s) != SQLITE_DONE)
		error = store__fail(st, err, "cannot record the conflict");
	sqlite3_finalize(s);
	return error;
}

int store_conflict_set_semantic(struct store *st, const char *run_id, const char *target_tip,
				const char *run_head, const char *gates_json, struct sl_err *err)
{
	int error;

	if ((error = store_begin(st, err)) != 0)
		return error;
	if ((error = conflict_row(st, run_id, target_tip, run_head, CONFLICT_SEMANTIC, gates_json,
				  err)) != 0) {
		store_rollback(st);
		return error;
	}
	return store_commit(st, err);
}

int store_conflict_set(struct store *st, const char *run_id, const char *target_tip,
		       const char *run_head, const char *const *paths, size_t npaths,
		       struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	size_t i;
	int error;

	if (!target_tip || !run_head)
		return sl_err_set(err, SL_EINVALID, "a conflict needs the target tip and the run head");
	if ((error = store_begin(st, err)) != 0)
		return error;
	if ((error = conflict_row(st, run_id, target_tip, run_head, CONFLICT_TEXTUAL, NULL,
				  err)) != 0)
		goto out;
	if ((error = store__prepare(st, &s,
				    "INSERT OR IGNORE INTO run_conflict_paths (run_id, path) "
				    "VALUES (?, ?)",
				    err)) != 0)
		goto out;
	for (i = 0; i < npaths; i++) {
		sqlite3_reset(s);
		store__bind_text(s, 1, run_id);
		store__bind_text(s, 2, paths[i]);
		if (sqlite3_step(s) != SQLITE_DONE) {
			error = store__fail(st, err, "cannot record the conflicted paths");
			goto out;
		}
	}
	error = store_commit(st, err);
out:
	sqlite3_finalize(s);
	if (error)
		store_rollback(st);
	return error;
}

void store_conflict_release(struct store_conflict *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; i < c->npaths; i++)
		free(c->paths[i]);
	free(c->paths);
	free(c->target_tip);
	free(c->run_head);
	free(c->gates_json);
	memset(c, 0, sizeof(*c));
}

int store_conflict_get(struct store *st, const char *run_id, struct store_conflict *out,
		       struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	char **nv;
	int error, rc;

	memset(out, 0, sizeof(*out));
	if ((error = store__prepare(st, &s,
				    "SELECT target_tip, run_head, kind, gates FROM run_conflicts "
				    "WHERE run_id = ?",
				    err)) != 0)
		return error;
	store__bind_text(s, 1, run_id);
	if ((rc = sqlite3_step(s)) != SQLITE_ROW) {
		error = rc == SQLITE_DONE ? sl_err_set(err, SL_ENOTFOUND,
						       "no merge conflict is recorded for run '%s'",
						       run_id)
					  : store__fail(st, err, "cannot read the conflict");
		goto out;
	}
	out->target_tip = store__col_dup(s, 0);
	out->run_head = store__col_dup(s, 1);
	if (conflict_kind_parse((const char *)sqlite3_column_text(s, 2), &out->kind) != 0)
		out->kind = CONFLICT_TEXTUAL;
	if (sqlite3_column_type(s, 3) != SQLITE_NULL && !(out->gates_json = store__col_dup(s, 3))) {
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	sqlite3_finalize(s);
	s = NULL;
	if (!out->target_tip || !out->run_head) {
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	if ((error = store__prepare(st, &s,
				    "SELECT path FROM run_conflict_paths WHERE run_id = ? "
				    "ORDER BY path",
				    err)) != 0)
		goto out;
	store__bind_text(s, 1, run_id);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (!(nv = realloc(out->paths, (out->npaths + 1) * sizeof(*nv))) ||
		    !(nv[out->npaths] = store__col_dup(s, 0))) {
			if (nv)
				out->paths = nv;
			error = sl_err_set(err, SL_ERROR, "out of memory");
			goto out;
		}
		out->paths = nv;
		out->npaths++;
	}
	if (rc != SQLITE_DONE)
		error = store__fail(st, err, "cannot read the conflicted paths");
out:
	sqlite3_finalize(s);
	if (error)
		store_conflict_release(out);
	return error;
}
