/*
 * A run as JSON: the one encoder behind `runs --json`, `status --json` and
 * the run of `show --json` (schema/run.schema.json, schema/show.schema.json).
 */
#include "store/store.h"
#include "core/time.h"

#include <jansson.h>

/*
 * The keys `show --json` named otherwise in 0.1: each alias carries the
 * value of its key. Deprecated in 0.2, removed in 0.3 (CHANGELOG.md).
 */
static const struct {
	const char *alias, *key;
} show_aliases[] = {
	{ "branch", "branch_name" },
	{ "base", "base_commit" },
	{ "head", "head_commit" },
	{ "conflict_with_run", "conflict_with_run_id" },
};

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

/* A time as ISO 8601 UTC with milliseconds; null for none (0). */
static json_t *iso_or_null(int64_t ms)
{
	char when[40];

	if (ms <= 0)
		return json_null();
	sl_time_iso(when, sizeof(when), ms);
	return json_string(when);
}

static void add_aliases(json_t *j, const struct store_run *r)
{
	size_t i;

	for (i = 0; i < sizeof(show_aliases) / sizeof(show_aliases[0]); i++)
		json_object_set(j, show_aliases[i].alias, json_object_get(j, show_aliases[i].key));
	json_object_set_new(j, "created_at", iso_or_null(r->created_ms));
	json_object_set_new(j, "finished_at", iso_or_null(r->finished_ms));
}

json_t *store_run_json(const struct store_run *r, unsigned flags)
{
	const char *state = run_state_name(r->state); /* from the state table */
	json_t *j = json_object();

	if (!j)
		return NULL;
#define S(k, v) json_object_set_new(j, k, str_or_null(v))
#define I(k, v) json_object_set_new(j, k, json_integer(v))
	S("id", r->id);
	S("work_order", r->work_order_id);
	S("state", state);
	/* never NULL in the store (NOT NULL DEFAULT); the defaults keep the schema's types */
	S("reason", r->reason ? r->reason : "");
	S("target", r->target);
	S("branch_name", r->branch_name);
	S("base_commit", r->base_commit);
	S("head_commit", r->head_commit);
	S("approved_tree", r->approved_tree);
	S("merge_commit", r->merge_commit);
	S("merge_status", r->merge_status);
	S("conflict_with_run_id", r->conflict_with_run_id);
	S("reviewer", r->reviewer);
	S("mode", run_mode_name(r->mode));
	I("attempt", r->attempt);
	I("resolve_attempts", r->resolve_attempts);
	I("review_tries", r->review_tries);
	I("created_ms", r->created_ms);
	I("updated_ms", r->updated_ms);
	json_object_set_new(j, "finished_ms",
			    r->finished_ms ? json_integer(r->finished_ms) : json_null());
#undef S
#undef I
	if (flags & STORE_RUN_JSON_ALIASES)
		add_aliases(j, r);
	return j;
}
