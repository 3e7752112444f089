/*
 * The merge gates' flake rate (docs/config.md, merge.rerun_failed): per
 * gate, the trees it ran on that it both passed and failed (the store's
 * gate_runs), for `sluice status`, `sluice report` and the desk.
 */
#include "artifact/artifact_int.h"
#include "store/store.h"

#include <jansson.h>
#include <stdio.h>

json_t *artifact_flakes_json(struct sl_ctx *ctx)
{
	struct store_gate_flake *f = NULL;
	struct sl_err err = SL_ERR_INIT;
	json_t *arr = json_array();
	size_t n = 0, i;

	if (store_gate_flakes(ctx->st, &f, &n, &err) != 0)
		n = 0; /* a store that cannot say: no rates shown */
	for (i = 0; arr && i < n; i++)
		json_array_append_new(arr, json_pack("{s:s, s:I, s:I, s:f}", "gate",
						     f[i].gate ? f[i].gate : "?", "trees",
						     (json_int_t)f[i].trees, "flaky",
						     (json_int_t)f[i].flaky, "flake_rate",
						     f[i].trees ? (double)f[i].flaky / (double)f[i].trees
								: 0.0));
	store_gate_flakes_free(f, n);
	return arr;
}

void artifact_flake_words(const json_t *g, char *buf, size_t n)
{
	json_int_t trees = json_integer_value(json_object_get(g, "trees"));
	json_int_t flaky = json_integer_value(json_object_get(g, "flaky"));

	snprintf(buf, n, "%s flaky on %lld of %lld tree%s (%.0f%%)",
		 json_string_value(json_object_get(g, "gate")) ?: "?", (long long)flaky,
		 (long long)trees, trees == 1 ? "" : "s",
		 100.0 * json_real_value(json_object_get(g, "flake_rate")));
}

void artifact_flakes_html(struct sl_ctx *ctx, struct artifact_page *p)
{
	json_t *arr = artifact_flakes_json(ctx), *g;
	size_t i;

	if (json_array_size(arr))
		artifact_put(p, "<h2>Merge gates</h2>\n<table id=\"flakes\"><tr><th>gate</th><th>trees "
			     "run</th><th>flaky trees</th><th>flake rate</th></tr>\n");
	json_array_foreach(arr, i, g) {
		artifact_put(p, "<tr><td>");
		artifact_put_esc(p, json_string_value(json_object_get(g, "gate")));
		artifact_putf(p, "</td><td>%lld</td><td>%lld</td><td>%.0f%%</td></tr>\n",
			      (long long)json_integer_value(json_object_get(g, "trees")),
			      (long long)json_integer_value(json_object_get(g, "flaky")),
			      100.0 * json_real_value(json_object_get(g, "flake_rate")));
	}
	if (json_array_size(arr))
		artifact_put(p, "</table>\n");
	json_decref(arr);
}
