/* budget.prices: US dollars per million tokens of each model (docs/budgets.md; core/config.c). */
#include "core/config_int.h"

#include <stdlib.h>
#include <string.h>

/* One model of budget.prices: {input: 3, output: 15, cache_read: 0.3, cache_write: 3.75}. */
void config__price_pair(struct ctx *c, const char *model, yaml_node_t *k, yaml_node_t *v)
{
	struct sl_config *cfg = c->cfg;
	struct sl_price *n, *pr;
	yaml_node_pair_t *p;

	if (!*model || sl_reviewer_name_check(model, strlen(model)) != SL_NAME_OK) {
		config__problem(c, k, "a model of 'budget.prices' must be a name of at most 200 characters "
		        "with no control character");
		return;
	}
	if (v->type != YAML_MAPPING_NODE || !v->data.mapping.pairs.top ||
	    v->data.mapping.pairs.top == v->data.mapping.pairs.start) {
		config__problem(c, v, "'budget.prices' of '%s' must be a mapping such as {input: 3, output: "
		        "15} (US dollars per million tokens)", model);
		return;
	}
	if (!(n = realloc(cfg->budget.prices, (cfg->budget.nprices + 1) * sizeof(*n))) ||
	    !(n[cfg->budget.nprices].model = strdup(model))) {
		if (n)
			cfg->budget.prices = n;
		config__oom(c);
		return;
	}
	cfg->budget.prices = n;
	pr = &n[cfg->budget.nprices++];
	pr->input = pr->output = pr->cache_read = pr->cache_write = 0;
	for (p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top; p++) {
		yaml_node_t *pk = yaml_document_get_node(c->doc, p->key);
		yaml_node_t *pv = yaml_document_get_node(c->doc, p->value);
		const char *key = config__scalar(pk), *val = config__scalar(pv);
		double *at = !key ? NULL : !strcmp(key, "input") ? &pr->input
		             : !strcmp(key, "output") ? &pr->output
		             : !strcmp(key, "cache_read") ? &pr->cache_read
		             : !strcmp(key, "cache_write") ? &pr->cache_write : NULL;

		if (!at) {
			config__unknown(c, pk, "budget.prices", "input, output, cache_read, cache_write");
		} else if (!val || pv->data.scalar.style != YAML_PLAIN_SCALAR_STYLE ||
		           config__amount_parse(val, at) != 0 || *at < 0) {
			config__problem(c, pv, "'budget.prices' %s of '%s' must be US dollars per million "
			        "tokens such as 3 or 0.30, not '%s'", key, model,
			        val ? val : "(a list or mapping)");
		}
	}
}

void config__prices_free(struct sl_config *cfg)
{
	for (size_t i = 0; i < cfg->budget.nprices; i++)
		free(cfg->budget.prices[i].model);
	free(cfg->budget.prices);
}
