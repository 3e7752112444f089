/* The entries of retry: (docs/config.md, Retry; core/config.c). */
#include "core/config_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void config__check_template(struct ctx *c, const yaml_node_t *n, const char *tmpl,
                           sl_template_known fn, void *data, const char *where)
{
	struct sl_err e = SL_ERR_INIT;

	if (sl_template_check(tmpl, fn, data, where, &e) != 0)
		config__problem(c, n, "%s", e.msg);
}

/* not: gate.<name> */
void config__read_not(struct ctx *c, const struct setting *row, yaml_node_t *v, void *at)
{
	const char *s = config__scalar(v);

	if (!s || strncmp(s, "gate.", 5) || !config__gate_name_ok(s + 5)) {
		config__problem(c, v, "'not:' must name a gate as 'gate.<name>', not '%s'",
		        s ? s : "(a list or mapping)");
		return;
	}
	free(*(char **)at);
	if (!(*(char **)at = strdup(s + 5)))
		config__oom(c);
}

/* agent: <name of builders: or preset> */
void config__check_retry_agent(struct ctx *c, const struct setting *row, yaml_node_t *v, void *at)
{
	config__check_agent(c, v, *(char **)at, "agent");
}

/* ---- retry: validator conditions (validate, with, timeout) --------------- */

#define RETRY_VALIDATE_TIMEOUT_MS ((int64_t)2 * 60 * 1000)

/* One input of 'with:': "<key>=<template>", the key a word, given once. */
static void with_pair(struct ctx *c, const char *key, yaml_node_t *k, yaml_node_t *v)
{
	struct sl_retry_rule *r = c->rule;
	const char *s = config__scalar(v);
	size_t len = strlen(key);
	char *kv = NULL;

	if (!config__gate_name_ok(key)) {
		config__problem(c, k, "input name '%s' in 'with' may use only letters, digits, '_' and '-'",
		        key);
		return;
	}
	for (char **w = r->with; w && *w; w++)
		if (!strncmp(*w, key, len) && (*w)[len] == '=') {
			config__problem(c, k, "input '%s' is given twice in 'with'; keep one", key);
			return;
		}
	if (!s || config__is_null(v)) {
		config__problem(c, v, "'with.%s' must be a text value (a template such as \"{diff}\")",
		        key);
		return;
	}
	if (asprintf(&kv, "%s=%s", key, s) < 0 || sl_strv_push(&r->with, kv) < 0)
		config__oom(c);
	free(kv);
}

/* An empty argv still marks the entry as a validator's. */
void config__read_validate(struct ctx *c, const struct setting *row, yaml_node_t *v, void *at)
{
	sl_strv *argv = at;

	if (config__get_argv(c, v, argv, row->key) < 0 && !*argv && !(*argv = calloc(1, sizeof(**argv))))
		config__oom(c);
}

void config__read_with(struct ctx *c, const struct setting *row, yaml_node_t *v, void *at)
{
	if (!v || v->type != YAML_MAPPING_NODE)
		config__problem(c, v, "'with' must be a mapping of inputs to templates, e.g. "
		        "'with: {diff: \"{diff}\"}'");
	else
		config__each_pair(c, v, "with", with_pair);
	if (!*(sl_strv *)at && !(*(sl_strv *)at = calloc(1, sizeof(char *))))
		config__oom(c);
}

void config__read_timeout(struct ctx *c, const struct setting *row, yaml_node_t *v, void *at)
{
	if (config__get_duration(c, v, at, row->key) < 0)
		*(int64_t *)at = RETRY_VALIDATE_TIMEOUT_MS; /* given, though wrong */
}

/* After an entry: 'with' and 'timeout' belong to a validator; its default timeout. */
static void retry_validate_finish(struct ctx *c, yaml_node_t *n, struct sl_retry_rule *r)
{
	if (!r->validate && (r->with || r->validate_timeout_ms))
		config__problem(c, n, "'%s' in a retry entry goes with 'validate: [argv]' (the "
		        "validator it configures); add one or remove it",
		        r->with ? "with" : "timeout");
	if (r->validate && !r->validate_timeout_ms)
		r->validate_timeout_ms = RETRY_VALIDATE_TIMEOUT_MS;
}

/* The templates of 'with', as the prompt's (gate names in `names`). */
static void retry_validate_check(struct ctx *c, yaml_node_t *n, const struct sl_retry_rule *r,
                                 char **names)
{
	char where[96];

	for (char **w = r->with; w && *w; w++) {
		const char *eq = strchr(*w, '=');
		snprintf(where, sizeof(where), "'with.%.*s' of the retry entry at line %d",
		         (int)(eq - *w), *w, r->line);
		config__check_template(c, n, eq + 1, sl_template_prompt_var_known, names, where);
	}
}

static void retry_entry(struct ctx *c, yaml_node_t *n, struct sl_retry_rule *r)
{
	memset(r, 0, sizeof(*r));
	r->line = (int)n->start_mark.line + 1;
	if (n->type != YAML_MAPPING_NODE) {
		config__problem(c, n,
		        "each retry entry must be a mapping such as '- attempt: 2' or '- exit: 4'");
		return;
	}
	c->rule = r;
	c->conditions = 0;
	config__walk_section(c, n, &(struct section){"retry", "a retry entry", "a retry entry", 0});
	c->rule = NULL;
	if (r->agent && r->builder)
		config__problem(c, n, "a retry entry has both 'agent' and 'builder'; keep one (both say "
		        "what builds from then on)");
	retry_validate_finish(c, n, r);
	if (c->conditions != 1)
		config__problem(c, n,
		        "a retry entry needs exactly one condition (attempt: N, not: gate.NAME, "
		        "validate: [argv] or exit: N); this one has %d",
		        c->conditions);
}

void config__retry_list(struct ctx *c, yaml_node_t *n)
{
	struct sl_config *cfg = c->cfg;
	yaml_node_item_t *it;
	size_t count, i;

	if (!n || n->type != YAML_SEQUENCE_NODE) {
		if (!config__is_null(n))
			config__problem(c, n,
			        "'retry' must be a list of entries ('- attempt: 2', '- exit: 4')");
		return;
	}
	count = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
	if (!count)
		return;
	if (!(cfg->retry = calloc(count, sizeof(*cfg->retry)))) {
		config__oom(c);
		return;
	}
	for (it = n->data.sequence.items.start, i = 0; i < count; it++, i++) {
		retry_entry(c, yaml_document_get_node(c->doc, *it), &cfg->retry[i]);
		cfg->nretry++;
	}
}

void config__retry_check(struct ctx *c, yaml_node_t *n)
{
	struct sl_config *cfg = c->cfg;
	char **names = calloc(cfg->ngates + 1, sizeof(*names));
	char where[64];
	size_t i, exits = 0;

	if (!names) {
		config__oom(c);
		return;
	}
	for (i = 0; i < cfg->ngates; i++)
		names[i] = cfg->gates[i].name;
	for (i = 0; i < cfg->nretry; i++) {
		struct sl_retry_rule *r = &cfg->retry[i];
		if (r->kind == SL_RETRY_EXIT && r->n)
			exits++;
		/* "builder", "review", "no_write", "job": the pseudo-gates of the retry rules (build/build.h) */
		if (r->kind == SL_RETRY_NOT_GATE && r->gate && strcmp(r->gate, "builder") &&
		    strcmp(r->gate, "review") && strcmp(r->gate, "no_write") &&
		    strcmp(r->gate, "job") && !config__gate_known(cfg, r->gate))
			config__problem(c, n, "retry entry at line %d: 'not: gate.%s' names no configured "
			        "gate (nor gate.builder, gate.review, gate.no_write or gate.job); "
			        "define it under 'gates' or fix the name", r->line, r->gate);
		retry_validate_check(c, n, r, names);
		if (r->prompt) {
			snprintf(where, sizeof(where), "the retry prompt at line %d", r->line);
			config__check_template(c, n, r->prompt, sl_template_prompt_var_known, names, where);
		}
	}
	if (cfg->nretry && !exits)
		config__problem(c, n, "retry has no 'exit' entry; add '- exit: N' to say when to stop");
	else if (exits > 1)
		config__problem(c, n, "retry has %zu 'exit' entries; keep one", exits);
	free(names);
}
