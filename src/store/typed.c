/*
 * Typed data past the store: a work order's fields and a run's gate
 * results are stored as JSON text; this file is the one place that reads
 * them back (docs/ARCHITECTURE.md, The store). Bad stored text is an error
 * that names the work order or the run, logged here, never an empty value
 * in silence.
 */
#include "store/store.h"
#include "core/log.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The strings of the array `key` of obj (borrowed), NULL-terminated; NULL when out of memory. */
static const char **strings_of(json_t *obj, const char *key)
{
	json_t *list = json_object_get(obj, key), *v;
	size_t i, k = 0, n = json_is_array(list) ? json_array_size(list) : 0;
	const char **out = calloc(n + 1, sizeof(*out));

	if (out)
		json_array_foreach(list, i, v)
			if (json_is_string(v))
				out[k++] = json_string_value(v);
	return out;
}

static int bad(struct sl_err *err, const char *what, const char *id, const char *why)
{
	int error = sl_err_set(err, SL_EINVALID, "the stored %s of '%s' are not valid: %s", what,
			       id ? id : "?", why);

	sl_log(SL_LOG_WARN, "%s", err->msg);
	return error;
}

static json_t *load(const char *json, char why[JSON_ERROR_TEXT_LENGTH + 32])
{
	json_error_t jerr;
	json_t *j = json_loads(json, 0, &jerr);

	if (!j)
		snprintf(why, JSON_ERROR_TEXT_LENGTH + 32, "%s (line %d)", jerr.text, jerr.line);
	return j;
}

int store_wo_fields_parse(const char *wo_id, const char *json, struct store_wo_fields *out,
			  struct sl_err *err)
{
	char why[JSON_ERROR_TEXT_LENGTH + 32] = "not a JSON object";
	json_t *all = json ? load(json, why) : json_object();
	int error = 0;

	memset(out, 0, sizeof(*out));
	if (all && !json_is_object(all)) {
		json_decref(all);
		all = NULL;
	}
	if (!all)
		error = bad(err, "fields of work order", wo_id, why);
	out->all = all;
	out->worktree = json_string_value(json_object_get(all, "worktree"));
	out->criteria = strings_of(all, "acceptance_criteria");
	out->depends_on = strings_of(all, "depends_on");
	/* revert: {commit, run, gate} (docs/watch.md); the queue checked its shape */
	out->revert_commit = json_string_value(json_object_get(json_object_get(all, "revert"),
							       "commit"));
	out->revert_gate = json_string_value(json_object_get(json_object_get(all, "revert"),
							     "gate"));
	if (!error && (!out->criteria || !out->depends_on))
		error = sl_err_set(err, SL_ERROR, "out of memory");
	return error;
}

void store_wo_fields_release(struct store_wo_fields *f)
{
	json_decref(f->all);
	free(f->criteria);
	free(f->depends_on);
	memset(f, 0, sizeof(*f));
}

static void gate_of(struct store_gate *g, json_t *j)
{
	json_t *ex = json_object_get(j, "exit_code");

	g->json = j;
	g->name = json_string_value(json_object_get(j, "name"));
	g->passed = json_is_true(json_object_get(j, "passed"));
	g->has_exit_code = json_is_integer(ex);
	g->exit_code = (int)json_integer_value(ex);
	g->duration_ms = (int64_t)json_integer_value(json_object_get(j, "duration_ms"));
	g->log = json_string_value(json_object_get(j, "log"));
	g->output = json_string_value(json_object_get(j, "output"));
}

int store_gates_parse(const char *run_id, const char *json, struct store_gates *out,
		      struct sl_err *err)
{
	char why[JSON_ERROR_TEXT_LENGTH + 32] = "not a JSON array of objects";
	json_t *all, *j;
	size_t i = 0;

	memset(out, 0, sizeof(*out));
	if (!json)
		return 0;
	if ((all = load(json, why)) != NULL && json_is_array(all))
		json_array_foreach(all, i, j)
			if (!json_is_object(j))
				break;
	if (!all || !json_is_array(all) || i < json_array_size(all)) {
		json_decref(all);
		return bad(err, "gate results of run", run_id, why);
	}
	if (json_array_size(all) &&
	    !(out->v = calloc(json_array_size(all), sizeof(*out->v)))) {
		json_decref(all);
		return sl_err_set(err, SL_ERROR, "out of memory");
	}
	out->all = all;
	json_array_foreach(all, i, j)
		gate_of(&out->v[out->n++], j);
	return 0;
}

void store_gates_release(struct store_gates *g)
{
	json_decref(g->all);
	free(g->v);
	memset(g, 0, sizeof(*g));
}
