/* What a run's attempts used, for its dossier (sluice show; docs/budgets.md). */
#include "artifact/artifact_int.h"
#include "store/store.h"

#include <stdlib.h>

static json_t *count_json(int64_t v)
{
	return v < 0 ? json_null() : json_integer(v);
}

static json_t *usage_row_json(const struct store_usage *u)
{
	return json_pack("{s:i, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:b, s:I}", "attempt",
			 u->attempt, "role", u->role, "model", artifact__str_or_null(u->model),
			 "input_tokens", count_json(u->input_tokens), "output_tokens",
			 count_json(u->output_tokens), "cache_read_tokens",
			 count_json(u->cache_read_tokens), "cache_write_tokens",
			 count_json(u->cache_write_tokens), "cost_usd",
			 u->cost_usd < 0 ? json_null() : json_real(u->cost_usd), "estimate",
			 u->estimate, "wall_ms", (json_int_t)u->wall_ms);
}

/*
 * {rows: [{attempt, role, model, tokens..., cost_usd, estimate, wall_ms}],
 * cost_usd, estimate, no_cost}: the total counts the rows with a cost.
 */
json_t *artifact__usage_json(struct sl_ctx *ctx, const char *run_id)
{
	struct store_usage *v = NULL;
	struct sl_err err = SL_ERR_INIT;
	json_t *rows = json_array();
	double usd = 0;
	int estimate = 0, no_cost = 0;
	size_t n = 0;

	if (store_usage_list(ctx->st, run_id, 0, &v, &n, &err) != 0)
		n = 0;
	for (size_t i = 0; rows && i < n; i++) {
		json_array_append_new(rows, usage_row_json(&v[i]));
		if (v[i].cost_usd < 0)
			no_cost++;
		else
			usd += v[i].cost_usd;
		estimate |= v[i].cost_usd >= 0 && v[i].estimate;
	}
	store_usage_free(v, n);
	return json_pack("{s:o, s:f, s:b, s:i}", "rows", rows ? rows : json_array(), "cost_usd",
			 usd, "estimate", estimate, "no_cost", no_cost);
}
