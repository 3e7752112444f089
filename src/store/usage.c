/*
 * What each attempt used (table usage, migration 16; docs/budgets.md):
 * tokens, cost, model and wall time per run, attempt and role.
 */
#include "store/store_int.h"
#include "core/time.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

static void bind_count(sqlite3_stmt *s, int i, int64_t v)
{
	if (v < 0)
		sqlite3_bind_null(s, i);
	else
		sqlite3_bind_int64(s, i, v);
}

#define USAGE_INSERT                                                                  \
	"INSERT INTO usage (run_id, attempt, role, model, input_tokens, output_tokens, "  \
	"cache_read_tokens, cache_write_tokens, cost_usd, estimate, wall_ms, recorded_ms) " \
	"VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12) "

/* A figure added to the row's: unknown (NULL) plus unknown stays unknown. */
#define USAGE_SUM(col) col " = CASE WHEN excluded." col " IS NULL THEN " col \
	" ELSE coalesce(" col ", 0) + excluded." col " END"

static int usage_write(struct store *st, const struct store_usage *u, const char *sql,
		       struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	int error;

	if ((error = store__prepare(st, &s, sql, err)) != 0)
		return error;
	store__bind_text(s, 1, u->run_id);
	sqlite3_bind_int(s, 2, u->attempt);
	store__bind_text(s, 3, u->role);
	store__bind_text(s, 4, u->model);
	bind_count(s, 5, u->input_tokens);
	bind_count(s, 6, u->output_tokens);
	bind_count(s, 7, u->cache_read_tokens);
	bind_count(s, 8, u->cache_write_tokens);
	if (u->cost_usd < 0)
		sqlite3_bind_null(s, 9);
	else
		sqlite3_bind_double(s, 9, u->cost_usd);
	sqlite3_bind_int(s, 10, u->estimate ? 1 : 0);
	sqlite3_bind_int64(s, 11, u->wall_ms);
	sqlite3_bind_int64(s, 12, sl_now_ms());
	if (sqlite3_step(s) != SQLITE_DONE)
		error = store__fail(st, err, "cannot record an attempt's usage");
	sqlite3_finalize(s);
	return error;
}

int store_usage_put(struct store *st, const struct store_usage *u, struct sl_err *err)
{
	return usage_write(st, u,
			   USAGE_INSERT "ON CONFLICT (run_id, attempt, role) DO UPDATE SET "
			   "model = excluded.model, input_tokens = excluded.input_tokens, "
			   "output_tokens = excluded.output_tokens, "
			   "cache_read_tokens = excluded.cache_read_tokens, "
			   "cache_write_tokens = excluded.cache_write_tokens, "
			   "cost_usd = excluded.cost_usd, estimate = excluded.estimate, "
			   "wall_ms = excluded.wall_ms, recorded_ms = excluded.recorded_ms",
			   err);
}

int store_usage_add(struct store *st, const struct store_usage *u, struct sl_err *err)
{
	return usage_write(st, u,
			   USAGE_INSERT "ON CONFLICT (run_id, attempt, role) DO UPDATE SET "
			   "model = coalesce(excluded.model, model), "
			   USAGE_SUM("input_tokens") ", " USAGE_SUM("output_tokens") ", "
			   USAGE_SUM("cache_read_tokens") ", " USAGE_SUM("cache_write_tokens") ", "
			   USAGE_SUM("cost_usd") ", estimate = max(estimate, excluded.estimate), "
			   "wall_ms = wall_ms + excluded.wall_ms, recorded_ms = excluded.recorded_ms",
			   err);
}

static int64_t col_count(sqlite3_stmt *s, int i)
{
	return sqlite3_column_type(s, i) == SQLITE_NULL ? -1 : sqlite3_column_int64(s, i);
}

static int usage_row(sqlite3_stmt *s, struct store_usage *u)
{
	struct store_usage z = STORE_USAGE_UNKNOWN;

	*u = z;
	u->run_id = store__col_dup(s, 0);
	u->attempt = sqlite3_column_int(s, 1);
	u->role = store__col_dup(s, 2);
	u->model = store__col_dup(s, 3);
	u->input_tokens = col_count(s, 4);
	u->output_tokens = col_count(s, 5);
	u->cache_read_tokens = col_count(s, 6);
	u->cache_write_tokens = col_count(s, 7);
	if (sqlite3_column_type(s, 8) != SQLITE_NULL)
		u->cost_usd = sqlite3_column_double(s, 8);
	u->estimate = sqlite3_column_int(s, 9);
	u->wall_ms = sqlite3_column_int64(s, 10);
	u->recorded_ms = sqlite3_column_int64(s, 11);
	u->work_order_id = store__col_dup(s, 12);
	u->agent = store__col_dup(s, 13);
	return u->run_id && u->role ? 0 : -1;
}

int store_usage_list(struct store *st, const char *run_id, int64_t since_ms,
		     struct store_usage **out, size_t *n, struct sl_err *err)
{
	struct store_usage *v = NULL, *grown;
	sqlite3_stmt *s = NULL;
	size_t k = 0;
	int rc, error;

	*out = NULL;
	*n = 0;
	if ((error = store__prepare(st, &s,
				    "SELECT u.run_id, u.attempt, u.role, u.model, u.input_tokens, "
				    "u.output_tokens, u.cache_read_tokens, u.cache_write_tokens, "
				    "u.cost_usd, u.estimate, u.wall_ms, u.recorded_ms, "
				    "r.work_order_id, a.agent FROM usage u "
				    "LEFT JOIN runs r ON r.id = u.run_id "
				    "LEFT JOIN attempts a ON a.run_id = u.run_id AND a.n = u.attempt "
				    "WHERE (?1 IS NULL OR u.run_id = ?1) AND u.recorded_ms >= ?2 "
				    "ORDER BY u.recorded_ms, u.run_id, u.attempt, u.role",
				    err)) != 0)
		return error;
	store__bind_text(s, 1, run_id);
	sqlite3_bind_int64(s, 2, since_ms);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (!(grown = realloc(v, (k + 1) * sizeof(*v)))) {
			error = sl_err_set(err, SL_ERROR, "out of memory");
			break;
		}
		v = grown;
		if (usage_row(s, &v[k++]) != 0) {
			error = sl_err_set(err, SL_ERROR, "out of memory");
			break;
		}
	}
	if (!error && rc != SQLITE_DONE)
		error = store__fail(st, err, "cannot read the usage of attempts");
	sqlite3_finalize(s);
	if (error) {
		store_usage_free(v, k);
		return error;
	}
	*out = v;
	*n = k;
	return 0;
}

int store_usage_spend(struct store *st, int64_t since_ms, struct store_spend *out,
		      struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	int error;

	memset(out, 0, sizeof(*out));
	if ((error = store__prepare(st, &s,
				    "SELECT COALESCE(SUM(cost_usd), 0), "
				    "COALESCE(MAX(CASE WHEN cost_usd IS NOT NULL THEN estimate END), 0), "
				    "COUNT(*) FROM usage WHERE recorded_ms >= ?1",
				    err)) != 0)
		return error;
	sqlite3_bind_int64(s, 1, since_ms);
	if (sqlite3_step(s) == SQLITE_ROW) {
		out->usd = sqlite3_column_double(s, 0);
		out->estimate = sqlite3_column_int(s, 1) != 0;
		out->rows = sqlite3_column_int64(s, 2);
	} else {
		error = store__fail(st, err, "cannot read the spend of attempts");
	}
	sqlite3_finalize(s);
	return error;
}

int store_usage_split(struct store *st, struct store_spend_split *out, struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	int error;

	memset(out, 0, sizeof(*out));
	if ((error = store__prepare(
		     st, &s,
		     "SELECT COALESCE(SUM(CASE WHEN m.wo IS NOT NULL THEN u.cost_usd END), 0), "
		     "COUNT(DISTINCT m.wo), "
		     "COALESCE(SUM(CASE WHEN w.state = ?2 THEN u.cost_usd END), 0), "
		     "COUNT(DISTINCT CASE WHEN w.state = ?2 THEN w.id END), "
		     "COALESCE(SUM(CASE WHEN r.state = ?3 THEN u.cost_usd END), 0), "
		     "COALESCE(SUM(CASE WHEN a.mode = ?4 THEN u.cost_usd END), 0), "
		     "COALESCE(SUM(u.cost_usd), 0), "
		     "COALESCE(MAX(CASE WHEN u.cost_usd IS NOT NULL THEN u.estimate END), 0), "
		     "COUNT(*) FROM usage u JOIN runs r ON r.id = u.run_id "
		     "LEFT JOIN work_orders w ON w.id = r.work_order_id "
		     "LEFT JOIN (SELECT DISTINCT work_order_id AS wo FROM runs WHERE state = ?1) m "
		     "ON m.wo = r.work_order_id "
		     "LEFT JOIN attempts a ON a.run_id = u.run_id AND a.n = u.attempt",
		     err)) != 0)
		return error;
	store__bind_text(s, 1, run_state_name(RUN_MERGED));
	store__bind_text(s, 2, wo_state_name(WO_FAILED));
	store__bind_text(s, 3, run_state_name(RUN_REJECTED));
	store__bind_text(s, 4, run_mode_name(RUN_MODE_RESOLVE));
	if (sqlite3_step(s) == SQLITE_ROW) {
		out->merged_usd = sqlite3_column_double(s, 0);
		out->merged_wos = sqlite3_column_int64(s, 1);
		out->failed_usd = sqlite3_column_double(s, 2);
		out->failed_wos = sqlite3_column_int64(s, 3);
		out->rejected_usd = sqlite3_column_double(s, 4);
		out->conflict_usd = sqlite3_column_double(s, 5);
		out->total_usd = sqlite3_column_double(s, 6);
		out->estimate = sqlite3_column_int(s, 7) != 0;
		out->rows = sqlite3_column_int64(s, 8);
	} else {
		error = store__fail(st, err, "cannot read where the spend went");
	}
	sqlite3_finalize(s);
	return error;
}

void store_usage_free(struct store_usage *v, size_t n)
{
	size_t i;

	for (i = 0; v && i < n; i++) {
		free(v[i].run_id);
		free(v[i].role);
		free(v[i].model);
		free(v[i].work_order_id);
		free(v[i].agent);
	}
	free(v);
}

static const char *const usage_counts[] = { "input_tokens", "output_tokens",
					    "cache_read_tokens", "cache_write_tokens" };

static int64_t *count_of(struct store_usage *u, size_t i)
{
	int64_t *f[] = { &u->input_tokens, &u->output_tokens, &u->cache_read_tokens,
			 &u->cache_write_tokens };
	return f[i];
}

int store_usage_from_json(const json_t *j, struct store_usage *u, struct sl_err *err)
{
	const json_t *v;
	size_t i;

	if (!json_is_object(j))
		return sl_err_set(err, SL_EINVALID, "the usage is not a JSON object");
	for (i = 0; i < sizeof(usage_counts) / sizeof(*usage_counts); i++) {
		if (!(v = json_object_get(j, usage_counts[i])) || json_is_null(v))
			continue;
		if (!json_is_integer(v) || json_integer_value(v) < 0)
			return sl_err_set(err, SL_EINVALID, "'%s' is not a whole number of 0 or "
				       "more", usage_counts[i]);
		*count_of(u, i) = (int64_t)json_integer_value(v);
	}
	if ((v = json_object_get(j, "cost_usd")) && !json_is_null(v)) {
		if (!json_is_number(v) || json_number_value(v) < 0)
			return sl_err_set(err, SL_EINVALID, "'cost_usd' is not a number of 0 or more");
		u->cost_usd = json_number_value(v);
	}
	if ((v = json_object_get(j, "model")) && !json_is_null(v)) {
		if (!json_is_string(v) || !json_string_length(v) || json_string_length(v) > 200)
			return sl_err_set(err, SL_EINVALID, "'model' is not a string of 1 to 200 "
				       "characters");
		if (!(u->model = strdup(json_string_value(v))))
			return sl_err_set(err, SL_ERROR, "out of memory");
	}
	return 0;
}

int store_usage_parse(const char *text, size_t len, struct store_usage *u, struct sl_err *err)
{
	json_error_t je;
	json_t *j = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	int error;

	if (!j)
		return sl_err_set(err, SL_EINVALID, "not JSON: %s (line %d)", je.text, je.line);
	error = store_usage_from_json(j, u, err);
	json_decref(j);
	return error;
}
