/*
 * The merge gates' outcomes per tree (table gate_runs, migration 15;
 * docs/config.md, merge.rerun_failed): what the train's rerun counts and
 * the flake rate `sluice status`, `sluice report` and the desk show.
 */
#include "store/store_int.h"
#include "core/time.h"

#include <stdlib.h>
#include <string.h>

/* The gate's row on tree, its counts raised by greens, reds and gating (one upsert). */
static int bump(struct store *st, const char *gate, const char *command, const char *tree,
		int greens, int reds, int gating, struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	int error;

	if ((error = store__prepare(st, &s,
				    "INSERT INTO gate_runs (gate, command, tree, greens, reds, "
				    "gating_greens, updated_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) "
				    "ON CONFLICT (gate, command, tree) DO UPDATE SET "
				    "greens = greens + ?4, reds = reds + ?5, "
				    "gating_greens = gating_greens + ?6, updated_ms = ?7",
				    err)) != 0)
		return error;
	store__bind_text(s, 1, gate);
	store__bind_text(s, 2, command);
	store__bind_text(s, 3, tree);
	sqlite3_bind_int(s, 4, greens);
	sqlite3_bind_int(s, 5, reds);
	sqlite3_bind_int(s, 6, gating);
	sqlite3_bind_int64(s, 7, sl_now_ms());
	if (sqlite3_step(s) != SQLITE_DONE)
		error = store__fail(st, err, "cannot record a gate's outcome on a tree");
	sqlite3_finalize(s);
	return error;
}

int store_gate_run_add(struct store *st, const char *gate, const char *command, const char *tree,
		       int passed, struct sl_err *err)
{
	return bump(st, gate, command, tree, passed ? 1 : 0, passed ? 0 : 1, 0, err);
}

int store_gate_gating_green(struct store *st, const char *gate, const char *command,
			    const char *tree, struct sl_err *err)
{
	return bump(st, gate, command, tree, 0, 0, 1, err);
}

int store_gate_runs_on(struct store *st, const char *gate, const char *command, const char *tree,
		       int *greens, int *reds, int *gating, struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	int rc, error;

	*greens = *reds = 0;
	if (gating)
		*gating = 0;
	if ((error = store__prepare(st, &s,
				    "SELECT greens, reds, gating_greens FROM gate_runs WHERE "
				    "gate = ?1 AND command = ?2 AND tree = ?3",
				    err)) != 0)
		return error;
	store__bind_text(s, 1, gate);
	store__bind_text(s, 2, command);
	store__bind_text(s, 3, tree);
	if ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		*greens = sqlite3_column_int(s, 0);
		*reds = sqlite3_column_int(s, 1);
		if (gating)
			*gating = sqlite3_column_int(s, 2);
	} else if (rc != SQLITE_DONE)
		error = store__fail(st, err, "cannot read a merge gate's outcomes");
	sqlite3_finalize(s);
	return error;
}

void store_gate_flakes_free(struct store_gate_flake *v, size_t n)
{
	size_t i;

	for (i = 0; v && i < n; i++)
		free(v[i].gate);
	free(v);
}

int store_gate_flakes(struct store *st, struct store_gate_flake **out, size_t *n,
		      struct sl_err *err)
{
	struct store_gate_flake *v = NULL, *grown;
	sqlite3_stmt *s = NULL;
	size_t k = 0;
	int rc, error;

	*out = NULL;
	*n = 0;
	if ((error = store__prepare(st, &s,
				    "SELECT gate, COUNT(DISTINCT tree), COUNT(DISTINCT CASE WHEN "
				    "greens > 0 AND reds > 0 THEN tree END) FROM gate_runs "
				    "WHERE greens + reds > 0 GROUP BY gate ORDER BY gate",
				    err)) != 0)
		return error;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (!(grown = realloc(v, (k + 1) * sizeof(*v)))) {
			error = sl_err_set(err, SL_ERROR, "out of memory");
			break;
		}
		v = grown;
		v[k].gate = store__col_dup(s, 0);
		v[k].trees = sqlite3_column_int64(s, 1);
		v[k].flaky = sqlite3_column_int64(s, 2);
		k++;
	}
	if (!error && rc != SQLITE_DONE)
		error = store__fail(st, err, "cannot read the merge gates' flake rates");
	sqlite3_finalize(s);
	if (error) {
		store_gate_flakes_free(v, k);
		return error;
	}
	*out = v;
	*n = k;
	return 0;
}
