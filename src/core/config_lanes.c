/* merge.lanes: lines of the merge train by paths (docs/config.md, "Lanes"; core/config.c). */
#include "core/config_int.h"
#include "core/fs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A lane's path globs: relative, inside the repository, never .git or .system. */
static void lane_paths(struct ctx *c, yaml_node_t *v, struct sl_lane *l)
{
	size_t i;

	if (config__get_strv(c, v, &l->paths, "merge.lanes paths",
			     " of path globs, e.g. [\"web/**\"]") < 0)
		return;
	if (!l->paths[0])
		config__problem(c, v, "lane '%s' needs at least one path glob, e.g. paths: [\"web/**\"]",
			l->name ? l->name : "?");
	for (i = 0; l->paths[i]; i++)
		if (!sl_path_is_safe_relative(l->paths[i]) || !strncmp(l->paths[i], ".git", 4) ||
		    !strncmp(l->paths[i], ".system", 7))
			config__problem(c, v, "lane path '%.200s' is not a path inside the repository; "
				"use a relative glob without '..', outside .git and .system", l->paths[i]);
}

/* One key of lane `at`. */
static void lane_key(struct ctx *c, struct sl_lane *l, size_t at, yaml_node_t *k, yaml_node_t *v)
{
	const char *key = config__scalar(k);

	if (!strcmp(key, "name")) {
		if (config__get_str(c, v, &l->name, "merge.lanes name") == 0 &&
		    !config__gate_name_ok(l->name))
			config__problem(c, v, "lane name '%.100s' may use only letters, digits, '_' and "
				"'-'", l->name);
	} else if (!strcmp(key, "paths"))
		lane_paths(c, v, l);
	else if (!strcmp(key, "gates")) {
		config__get_strv(c, v, &l->gates, "merge.lanes gates", " of gate names, e.g. [web-test]");
		c->lane_gates[at] = v;
	}
	else
		config__unknown(c, k, "merge.lanes", "name, paths, gates");
}

/* Lane `at` of all: a mapping with name, paths and gates, its name not taken before it. */
static void lane(struct ctx *c, yaml_node_t *v, struct sl_lane *all, size_t at)
{
	struct sl_lane *l = &all[at];
	yaml_node_pair_t *p;
	size_t i;

	if (v->type != YAML_MAPPING_NODE) {
		config__problem(c, v, "each entry of 'merge.lanes' must be a mapping with name, paths "
			"and gates");
		return;
	}
	for (p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(c->doc, p->key);
		if (config__scalar(k))
			lane_key(c, l, at, k, yaml_document_get_node(c->doc, p->value));
	}
	if (!l->name || !l->paths || !l->gates) {
		config__problem(c, v, "each entry of 'merge.lanes' needs name, paths and gates, e.g. "
			"{name: web, paths: [\"web/**\"], gates: [web-test]}");
		return;
	}
	for (i = 0; i < at; i++)
		if (all[i].name && !strcmp(all[i].name, l->name))
			config__problem(c, v, "lane '%s' is named twice in 'merge.lanes'; keep one",
				l->name);
}

void config__read_lanes(struct ctx *c, const struct setting *row, yaml_node_t *v, void *at)
{
	struct sl_config *cfg = c->cfg;
	yaml_node_item_t *it;

	(void)row;
	(void)at;
	if (config__is_null(v))
		return;
	if (v->type != YAML_SEQUENCE_NODE) {
		config__problem(c, v, "'merge.lanes' must be a list of lanes, e.g. [{name: web, paths: "
			"[\"web/**\"], gates: [web-test]}, {name: api, paths: [\"api/**\"], gates: "
			"[api-test]}]");
		return;
	}
	c->lanes = v;
	for (it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
		struct sl_lane *n;
		if (cfg->merge.nlanes == SL_LANES_MAX) {
			config__problem(c, v, "'merge.lanes' has more than %d lanes; join some",
				SL_LANES_MAX);
			return;
		}
		if (!(n = realloc(cfg->merge.lanes, (cfg->merge.nlanes + 1) * sizeof(*n)))) {
			config__oom(c);
			return;
		}
		cfg->merge.lanes = n;
		memset(&n[cfg->merge.nlanes], 0, sizeof(*n));
		lane(c, yaml_document_get_node(c->doc, *it), n, cfg->merge.nlanes);
		cfg->merge.nlanes++;
	}
}

/* After the walk: every lane gate is a configured gate; lanes and batches do not mix. */
void config__lanes_check(struct ctx *c)
{
	const struct sl_config *cfg = c->cfg;
	size_t i, k;

	for (i = 0; i < cfg->merge.nlanes; i++)
		for (k = 0; cfg->merge.lanes[i].gates && cfg->merge.lanes[i].gates[k]; k++)
			if (!config__gate_known(cfg, cfg->merge.lanes[i].gates[k]))
				config__problem(c, c->lane_gates[i] ? c->lane_gates[i] : c->lanes,
					"lane '%s' names gate '%.200s', which is no "
					"configured gate; define it under 'gates' or fix the name",
					cfg->merge.lanes[i].name, cfg->merge.lanes[i].gates[k]);
	if (cfg->merge.nlanes && cfg->merge.batch > 1)
		config__problem(c, c->lanes, "'merge.lanes' and 'merge.batch' above 1 do not go "
			"together; keep one");
}

void config__lanes_free(struct sl_config *cfg)
{
	for (size_t i = 0; i < cfg->merge.nlanes; i++) {
		free(cfg->merge.lanes[i].name);
		sl_strv_free(cfg->merge.lanes[i].paths);
		sl_strv_free(cfg->merge.lanes[i].gates);
	}
	free(cfg->merge.lanes);
}
