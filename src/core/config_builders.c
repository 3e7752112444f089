/*
 * builder:, the named builders of builders: (agent escalation), the gates
 * of gates: and watch.gates: (docs/config.md; core/config.c).
 */
#include "core/config_int.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The builder being read: an entry of `builders:`, or `builder:`. */
struct sl_builder *config__cur_builder(struct ctx *c)
{
	return c->bld ? c->bld : &c->cfg->builder;
}

/* "builder.<key>" or "builders.<name>.<key>", for messages. */
const char *config__builder_key(struct ctx *c, const char *key)
{
	if (!c->bld)
		snprintf(c->bkey, sizeof(c->bkey), "builder.%s", key);
	else
		snprintf(c->bkey, sizeof(c->bkey), "builders.%.64s.%s", c->bld->name, key);
	return c->bkey;
}

void config__env_pair(struct ctx *c, const char *key, yaml_node_t *k, yaml_node_t *v)
{
	const char *s = config__scalar(v);
	char *kv = NULL;
	const char *p;

	for (p = key; *p && (isalnum((unsigned char)*p) || *p == '_'); p++)
		;
	if (!*key || *p || isdigit((unsigned char)*key)) {
		config__problem(c, k,
		        "'%s' name '%s' is not a variable name ([A-Za-z_][A-Za-z0-9_]*)",
		        config__builder_key(c, "env"), key);
		return;
	}
	if (!s) {
		config__problem(c, v, "'%s.%s' must be a text value", config__builder_key(c, "env"), key);
		return;
	}
	if (asprintf(&kv, "%s=%s", key, s) < 0 || sl_strv_push(&config__cur_builder(c)->env, kv) < 0)
		config__oom(c);
	free(kv);
}

/* ---- builders: named builders (agent escalation) ----------------------- */

/* [A-Za-z0-9_.-]+, not "." or "..": a name that stays one word in a path or a log. */
static int builder_name_ok(const char *s)
{
	const char *p;

	for (p = s; *p && (isalnum((unsigned char)*p) || strchr("_.-", *p)); p++)
		;
	return *s && !*p && strcmp(s, ".") && strcmp(s, "..") && p - s <= 64;
}

const struct sl_builder *sl_config_builder_named(const struct sl_config *cfg, const char *name)
{
	for (size_t i = 0; name && i < cfg->nbuilders; i++)
		if (cfg->builders[i].name && !strcmp(cfg->builders[i].name, name))
			return &cfg->builders[i];
	return NULL;
}

static void named_builder(struct ctx *c, const char *key, yaml_node_t *k, yaml_node_t *v)
{
	struct sl_builder *b = &c->cfg->builders[c->cfg->nbuilders];
	char what[96];

	if (!builder_name_ok(key)) {
		config__problem(c, k, "builder name '%.100s' must be a word of [A-Za-z0-9_.-] (at most 64)",
		        key);
		return;
	}
	if (sl_config_builder_named(c->cfg, key)) {
		config__problem(c, k, "builder name '%.100s' is used twice; keep one", key);
		return;
	}
	if (sl_config_preset_known(key)) {
		config__problem(c, k, "builder name '%s' is a preset's name; pick another (an 'agent:' "
		        "naming a preset runs the preset)", key);
		return;
	}
	if (!(b->name = strdup(key))) {
		config__oom(c);
		return;
	}
	b->line = (int)k->start_mark.line + 1;
	c->cfg->nbuilders++;
	if (v->type != YAML_MAPPING_NODE) {
		config__problem(c, v, "'builders.%s' must be a mapping such as {preset: codex} or "
		        "{command: [my-agent]}", key);
		return;
	}
	snprintf(what, sizeof(what), "builders.%s", key);
	c->bld = b;
	config__walk_section(c, v, &(struct section){"builder", what, "a named builder", 1});
	c->bld = NULL;
	if (!b->command == !b->preset)
		config__problem(c, v, "'builders.%s' needs exactly one of 'command' and 'preset'", key);
}

void config__read_builders(struct ctx *c, const struct setting *row, yaml_node_t *v, void *at)
{
	size_t n;

	if (!v || v->type != YAML_MAPPING_NODE) {
		config__problem(c, v, "'builders' must be a mapping of names to builders, e.g. "
		        "'builders: {fast: {preset: codex}}'");
		return;
	}
	n = (size_t)(v->data.mapping.pairs.top - v->data.mapping.pairs.start);
	if (!n) {
		config__problem(c, v, "'builders' is empty; name at least one builder or remove it");
		return;
	}
	if (c->cfg->builders) {
		config__problem(c, v, "'builders' is given twice; keep one");
		return;
	}
	if (!(c->cfg->builders = calloc(n, sizeof(*c->cfg->builders)))) {
		config__oom(c);
		return;
	}
	config__each_pair(c, v, "builders", named_builder);
}

/* "a, b (builders) or claude-code, codex, aider, gemini (presets)": the known agents. */
static void known_agents(const struct sl_config *cfg, char *out, size_t n)
{
	size_t len = 0;

	out[0] = '\0';
	for (size_t i = 0; i < cfg->nbuilders && len < n; i++)
		len += (size_t)snprintf(out + len, n - len, "%s%s", i ? ", " : "",
		                        cfg->builders[i].name);
	if (len < n)
		snprintf(out + len, n - len, "%sclaude-code, codex, aider or gemini (presets)",
		         len ? " (builders:) or " : "");
}

/* A name for builder.agent or a retry's agent: from builders: or a preset. */
void config__check_agent(struct ctx *c, const yaml_node_t *n, const char *name, const char *what)
{
	char known[512];

	if (!name || sl_config_builder_named(c->cfg, name) || sl_config_preset_known(name))
		return;
	known_agents(c->cfg, known, sizeof(known));
	config__problem(c, n, "unknown %s '%.100s'; known agents: %s", what, name, known);
}

static const char *const worktree_modes[] = { "read-write", "read-only", "none" };

int sl_worktree_mode_parse(const char *name, enum sl_worktree_mode *out)
{
	for (size_t i = 0; name && i < sizeof(worktree_modes) / sizeof(worktree_modes[0]); i++)
		if (!strcmp(name, worktree_modes[i])) {
			*out = (enum sl_worktree_mode)i;
			return 0;
		}
	return -1;
}

const char *sl_worktree_mode_name(enum sl_worktree_mode m)
{
	return (unsigned)m < sizeof(worktree_modes) / sizeof(worktree_modes[0]) ? worktree_modes[m]
										  : "?";
}

int config__gate_name_ok(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-')
			return 0;
	return 1;
}

/* 1 when `name` is one of the n gates at g (read so far). */
static int gate_in(const struct sl_gate *g, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(g[i].name, name))
			return 1;
	return 0;
}

/* 1 when `name` is a gate of gates: (read so far). */
int config__gate_known(const struct sl_config *cfg, const char *name)
{
	return gate_in(cfg->gates, cfg->ngates, name);
}

int sl_gate_read_only(const struct sl_config *cfg, const char *name)
{
	for (char **g = cfg ? cfg->read_only_gates : NULL; g && *g && name; g++)
		if (!strcmp(*g, name))
			return 1;
	return 0;
}

/* gates.<name>.worktree: read-only puts the gate on read_only_gates (the no_write guard after it). */
void config__read_gate_worktree(struct ctx *c, const struct setting *row, yaml_node_t *v, void *at)
{
	int read_only = 0;

	if (config__get_enum(c, row, v, &read_only) == 0 && read_only && c->watch_gate)
		config__problem(c, v, "a watch gate cannot be read-only; it runs in a checkout of its "
		        "own (docs/watch.md)");
	else if (read_only && !sl_gate_read_only(c->cfg, c->gate->name) &&
	    sl_strv_push(&c->cfg->read_only_gates, c->gate->name) < 0)
		config__oom(c);
}

/* A new gate named `key` at the end of *gates (*n of them), or NULL (told). */
static struct sl_gate *gate_add(struct ctx *c, const char *key, yaml_node_t *k,
                                struct sl_gate **gates, size_t *n)
{
	struct sl_gate *g;

	if (!config__gate_name_ok(key)) {
		config__problem(c, k, "gate name '%s' may use only letters, digits, '_' and '-'", key);
		return NULL;
	}
	if (gate_in(*gates, *n, key)) {
		config__problem(c, k, "gate '%s' is defined twice; keep one", key);
		return NULL;
	}
	if (!(g = realloc(*gates, (*n + 1) * sizeof(*g)))) {
		config__oom(c);
		return NULL;
	}
	*gates = g;
	g = &g[(*n)++];
	memset(g, 0, sizeof(*g));
	if (!(g->name = strdup(key))) {
		config__oom(c);
		return NULL;
	}
	return g;
}

/* A gate's value: argv, or the mapping of gates.<name> (`what` names it in messages). */
static void gate_read(struct ctx *c, struct sl_gate *g, yaml_node_t *v, const char *what)
{
	c->gate = g;
	config__apply_defaults(c, B_GATE);
	c->gate = NULL;
	if (v && v->type == YAML_MAPPING_NODE) {
		c->gate = g;
		config__walk_section(c, v, &(struct section){"gates.<name>", "a gate", "a gate", 0});
		c->gate = NULL;
		if (!g->argv)
			config__problem(c, v, "gate '%s' has no command; add 'command: [prog, args...]'",
			        g->name);
	} else {
		config__get_argv(c, v, &g->argv, what);
	}
}

void config__gate_pair(struct ctx *c, const char *key, yaml_node_t *k, yaml_node_t *v)
{
	struct sl_gate *g = gate_add(c, key, k, &c->cfg->gates, &c->cfg->ngates);

	if (g)
		gate_read(c, g, v, "gates.<name>");
}

/* watch.gates.<name>: argv or {command, timeout}, apart from gates: (docs/watch.md). */
void config__watch_gate_pair(struct ctx *c, const char *key, yaml_node_t *k, yaml_node_t *v)
{
	struct sl_config *cfg = c->cfg;
	struct sl_gate *g = gate_add(c, key, k, &cfg->watch.gates, &cfg->watch.ngates);

	if (!g)
		return;
	c->watch_gate = 1;
	gate_read(c, g, v, "watch.gates.<name>");
	c->watch_gate = 0;
}
