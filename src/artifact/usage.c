/*
 * What a run's attempts used, for its dossier (sluice show), and where the
 * repository's spend went, for `sluice report` and the desk
 * (docs/budgets.md, "Where they show").
 */
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

json_t *artifact_spend_json(struct sl_ctx *ctx)
{
	struct store_spend_split sp;
	struct sl_err err = SL_ERR_INIT;

	if (store_usage_split(ctx->st, &sp, &err) != 0)
		return json_null(); /* a store that cannot say: no figures shown */
	return json_pack("{s:{s:I, s:f, s:o}, s:{s:I, s:f, s:o}, s:f, s:f, s:f, s:b, s:I}",
			 run_state_name(RUN_MERGED), "work_orders", (json_int_t)sp.merged_wos, "cost_usd",
			 sp.merged_usd, "per_work_order",
			 sp.merged_wos ? json_real(sp.merged_usd / (double)sp.merged_wos)
				       : json_null(),
			 wo_state_name(WO_FAILED), "work_orders", (json_int_t)sp.failed_wos, "cost_usd",
			 sp.failed_usd, "per_work_order",
			 sp.failed_wos ? json_real(sp.failed_usd / (double)sp.failed_wos)
				       : json_null(),
			 "rejected_usd", sp.rejected_usd, "conflicts_usd", sp.conflict_usd,
			 "total_usd", sp.total_usd, "estimate", sp.estimate, "rows",
			 (json_int_t)sp.rows);
}

/* A row of the spend table: what, how many work orders ("" when it does not apply), $. */
static void spend_row(struct artifact_page *p, const char *what, const json_t *wos,
		      double usd, const json_t *per)
{
	artifact_putf(p, "<tr><td>%s</td><td>", what);
	if (wos)
		artifact_putf(p, "%lld", (long long)json_integer_value(wos));
	artifact_putf(p, "</td><td>$%.2f</td><td>", usd);
	if (json_is_number(per))
		artifact_putf(p, "$%.2f", json_number_value(per));
	artifact_put(p, "</td></tr>\n");
}

void artifact_spend_html(struct sl_ctx *ctx, struct artifact_page *p)
{
	json_t *j = artifact_spend_json(ctx);
	const char *merged = run_state_name(RUN_MERGED), *failed = wo_state_name(WO_FAILED);
	const json_t *m = json_object_get(j, merged), *f = json_object_get(j, failed);

	if (json_integer_value(json_object_get(j, "rows")) > 0) {
		artifact_put(p, "<h2>What agents cost</h2>\n<table id=\"spend\"><tr><th></th>"
			     "<th>work orders</th><th>cost</th><th>per work order</th></tr>\n");
		spend_row(p, merged, json_object_get(m, "work_orders"),
			  json_number_value(json_object_get(m, "cost_usd")),
			  json_object_get(m, "per_work_order"));
		spend_row(p, failed, json_object_get(f, "work_orders"),
			  json_number_value(json_object_get(f, "cost_usd")),
			  json_object_get(f, "per_work_order"));
		spend_row(p, "spent on rejected runs", NULL,
			  json_number_value(json_object_get(j, "rejected_usd")), NULL);
		spend_row(p, "spent resolving conflicts", NULL,
			  json_number_value(json_object_get(j, "conflicts_usd")), NULL);
		spend_row(p, "all attempts", NULL,
			  json_number_value(json_object_get(j, "total_usd")), NULL);
		artifact_putf(p, "</table>\n<p class=\"muted\">Known costs only, as the builders "
			      "reported them%s (docs/budgets.md); a work order counts when an "
			      "attempt of it recorded usage; a rejected one is a failed one.</p>\n",
			      json_is_true(json_object_get(j, "estimate")) ? ", some estimated" : "");
	}
	json_decref(j);
}
