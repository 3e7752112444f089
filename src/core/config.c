/*
 * .system/config.yaml: load with libyaml's document API, check every key,
 * report problems as "<path>:<line>:<col>: <what>; <what to do>".
 *
 * One walk does both jobs: sl_config_check() collects every problem,
 * sl_config_load() keeps the first one as its error.
 */
#include "core/config.h"
#include "core/buf.h"
#include "core/fs.h"
#include "core/repo.h"
#include "core/similar.h"
#include "core/template.h"
#include "core/time.h"
#include "core/url.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#define CONFIG_MAX_BYTES ((size_t)1 << 20)

/* ---- the walk ---------------------------------------------------------- */

struct ctx {
	const char *path;
	yaml_document_t *doc;
	struct sl_buf *problems;
	int count;
	struct sl_config *cfg;
	yaml_node_t *root;        /* for problems of the whole file */
	yaml_node_t *retry_node;  /* walked after the gates, which it names */
	struct sl_gate *gate;     /* the gate being read */
	struct sl_retry_rule *rule; /* the retry entry being read */
	int conditions;           /* the conditions it has */
	yaml_node_t *merge_gates; /* merge.gates, checked after the gates */
	yaml_node_t *executor;    /* executor.kind or .remote, for executor_check */
	struct sl_builder *bld;   /* the entry of builders: being read, or NULL (builder:) */
	char bkey[128];           /* builder_key()'s answer */
	yaml_node_t *builder_agent; /* builder.agent, checked after builders: */
	const struct section *sec; /* the section table_pair() reads */
	int watch_gate;           /* the gate being read is one of watch.gates */
};

/*
 * The settings: one row per key, read by one walker (walk_section()).
 * A row's value lives at `off` in the config, the builder, the gate or the
 * retry entry being read; `read` replaces the reader of its type where the
 * shape or the message is the key's own, `check` runs after a good read.
 * A setting of a few words says them (.words) and its problem (.msg).
 */
enum set_type { T_SECTION, T_STR, T_WORD, T_INT, T_BOOL, T_DUR, T_SIZE, T_USD, T_MIN, T_ARGV,
                T_PATHS, T_STRV, T_ENUM, T_HOOK };
enum set_base { B_CONFIG, B_BUILDER, B_GATE, B_RETRY };
#define F_TOP_ONLY 1 /* builder: only, not an entry of builders: */
#define F_TEXT 2     /* T_ENUM: "must be a text value" first */
#define F_NOTE 4     /* remember() the node before reading it */
#define F_COND 8     /* a retry entry's condition: its kind is .cond */

struct setting;
typedef void (*pair_fn)(struct ctx *c, const char *key, yaml_node_t *k, yaml_node_t *v);
typedef void (*hook_fn)(struct ctx *c, const struct setting *s, yaml_node_t *v, void *at);

struct setting {
	const char *key;  /* dotted: "merge.train_depth", "gates.<name>.timeout" */
	enum set_type type;
	enum set_base base;
	size_t off;
	const char *def;  /* the default as config.yaml would write it, or NULL */
	int min, max;     /* T_INT; .words: min is the first word's value */
	const char *hint; /* T_STRV: what the list holds, for its message */
	const char *words; /* T_ENUM: "a|b|c", word i stored as min + i; T_STR: the words it takes */
	const char *msg;  /* .words: the problem, %s the value */
	int cond;         /* F_COND: the enum sl_retry_kind */
	hook_fn read;     /* the whole read, or NULL: the type's */
	pair_fn pair;     /* each pair of a mapping (each_pair(), the key's name), or NULL */
	hook_fn check;    /* after a good read, or NULL */
	int flags;
};

/* A mapping walked by the table: its rows are those under `name`. */
struct section {
	const char *name;  /* "", "queue", "gates.<name>" */
	const char *what;  /* for "'X' must be a mapping of keys" */
	const char *label; /* for "unknown key 'k' in X", NULL at the top */
	int named;         /* an entry of builders: (F_TOP_ONLY rows left out) */
};

static void walk_section(struct ctx *c, yaml_node_t *v, const struct section *sec);
static void apply_defaults(struct ctx *c, enum set_base base);

static void problem(struct ctx *c, const yaml_node_t *n, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

static void problem(struct ctx *c, const yaml_node_t *n, const char *fmt, ...)
{
	va_list ap;

	c->count++;
	if (!c->problems)
		return;
	sl_buf_addf(c->problems, "%s:%zu:%zu: ", c->path, n ? n->start_mark.line + 1 : 1,
	            n ? n->start_mark.column + 1 : 1);
	va_start(ap, fmt);
	sl_buf_vaddf(c->problems, fmt, ap);
	va_end(ap);
	sl_buf_puts(c->problems, "\n");
}

/*
 * The port of an http(s) URL, if it has one, is a number from 1 to 65535:
 * "http://host:80a/" was taken, and every delivery failed later.
 */
static int url_port_ok(const char *url)
{
	const char *p = strstr(url, "://"), *end, *at, *colon;
	long port;
	char *stop;

	if (!p)
		return 1;
	p += 3;
	end = p + strcspn(p, "/?#");
	for (at = p; at < end; at++) /* skip user:password@ */
		if (*at == '@')
			p = at + 1;
	if (*p == '[' && !(p = memchr(p, ']', (size_t)(end - p)))) /* IPv6: the port after ']' */
		return 0;
	if (!(colon = memchr(p, ':', (size_t)(end - p))))
		return 1;
	if (colon + 1 == end || colon[1] == '+' || colon[1] == '-')
		return 0;
	port = strtol(colon + 1, &stop, 10);
	return stop == end && port >= 1 && port <= 65535;
}

static void oom(struct ctx *c)
{
	problem(c, NULL, "out of memory");
}

static const char *scalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static int is_null(const yaml_node_t *n)
{
	const char *s = scalar(n);

	return s && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
	       (!*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") ||
	        !strcmp(s, "NULL"));
}

static int get_str(struct ctx *c, const yaml_node_t *n, char **out, const char *key)
{
	const char *s = scalar(n);

	if (!s || is_null(n)) {
		problem(c, n, "'%s' must be a text value", key);
		return -1;
	}
	free(*out);
	if (!(*out = strdup(s))) {
		oom(c);
		return -1;
	}
	return 0;
}

static int get_int(struct ctx *c, const yaml_node_t *n, int *out, int min, int max, const char *key)
{
	const char *s = scalar(n);
	char *end;
	long v;

	errno = 0;
	if (!s || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE || !*s ||
	    (v = strtol(s, &end, 10), errno || *end) || v < min || v > max) {
		problem(c, n, "'%s' must be a whole number from %d to %d, not '%s'", key, min, max,
		        s ? s : "(a list or mapping)");
		return -1;
	}
	*out = (int)v;
	return 0;
}

static int get_bool(struct ctx *c, const yaml_node_t *n, int *out, const char *key)
{
	static const char *const yes[] = {"true", "True", "TRUE", "yes", "Yes", "on", "On", NULL};
	static const char *const no[] = {"false", "False", "FALSE", "no", "No", "off", "Off", NULL};
	const char *s = scalar(n);
	int i;

	for (i = 0; s && yes[i]; i++)
		if (!strcmp(s, yes[i]))
			return *out = 1, 0;
	for (i = 0; s && no[i]; i++)
		if (!strcmp(s, no[i]))
			return *out = 0, 0;
	problem(c, n, "'%s' must be true or false (or on/off), not '%s'", key,
	        s ? s : "(a list or mapping)");
	return -1;
}

static int get_duration(struct ctx *c, const yaml_node_t *n, int64_t *out, const char *key)
{
	struct sl_err e = SL_ERR_INIT;
	const char *s = scalar(n);

	if (!s || sl_duration_parse(out, s, &e) != 0) {
		problem(c, n, "'%s': %s", key,
		        s ? e.msg : "must be a duration such as 90s, 30m or 2h");
		return -1;
	}
	return 0;
}

/*
 * An amount: plain digits with at most one point (40, 2.50), at most 1e9;
 * or none, no limit (-1). -1 when it is neither.
 */
static int amount_parse(const char *s, double *out)
{
	const char *p = s;
	int digits = 0, point = 0;

	if (!strcmp(s, "none"))
		return *out = -1, 0;
	for (; *p; p++)
		if (isdigit((unsigned char)*p))
			digits++;
		else if (*p == '.' && !point && digits)
			point = 1;
		else
			break;
	if (!digits || *p || p[-1] == '.' || (*out = strtod(s, NULL)) > 1e9)
		return -1;
	return 0;
}

/*
 * An amount of `what` (budget.*; docs/budgets.md): US dollars for T_USD,
 * minutes for T_MIN.
 */
static int get_amount(struct ctx *c, const yaml_node_t *n, double *out, const char *key,
		      const char *what)
{
	const char *s = scalar(n);

	if (!s || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE || amount_parse(s, out) != 0) {
		problem(c, n, "'%s' must be %s (at most 1000000000) or none, not '%s'", key, what,
		        s ? s : "(a list or mapping)");
		return -1;
	}
	return 0;
}

/* A size in bytes: 1048576, 512KiB, 10MiB, 1GiB. */
static int get_size(struct ctx *c, const yaml_node_t *n, size_t *out, const char *key)
{
	const char *s = scalar(n);
	unsigned long long v;
	char *end;

	errno = 0;
	if (!s || !isdigit((unsigned char)*s) || (v = strtoull(s, &end, 10), errno))
		goto bad;
	if (!strcmp(end, "KiB") || !strcmp(end, "K"))
		v <<= 10;
	else if (!strcmp(end, "MiB") || !strcmp(end, "M"))
		v <<= 20;
	else if (!strcmp(end, "GiB") || !strcmp(end, "G"))
		v <<= 30;
	else if (*end)
		goto bad;
	if (v == 0)
		goto bad;
	*out = (size_t)v;
	return 0;
bad:
	problem(c, n, "'%s' must be a size such as 1048576, 512KiB or 10MiB, not '%s'", key,
	        s ? s : "(a list or mapping)");
	return -1;
}

/* The index of s in row->words ("a|b|c"), or -1 (a problem: row->msg). */
static int word_index(struct ctx *c, const struct setting *row, yaml_node_t *v, const char *s)
{
	const char *w = row->words;
	size_t len;

	for (int i = 0; s && *w; i++, w += len + (w[len] == '|')) {
		len = strcspn(w, "|");
		if (strlen(s) == len && !strncmp(s, w, len))
			return i;
	}
	problem(c, v, row->msg, s ? s : "(a list or mapping)");
	return -1;
}

/* T_ENUM: a word of row->words, its index plus row->min stored; F_TEXT: a text value first. */
static int get_enum(struct ctx *c, const struct setting *row, yaml_node_t *v, int *out)
{
	char *text = NULL;
	int i;

	if ((row->flags & F_TEXT) && get_str(c, v, &text, row->key) != 0)
		return -1;
	free(text);
	if ((i = word_index(c, row, v, scalar(v))) < 0)
		return -1;
	*out = row->min + i;
	return 0;
}

/* A list of text items (an argv, a list of paths). */
static int get_strv(struct ctx *c, const yaml_node_t *n, sl_strv *out, const char *key,
                    const char *hint)
{
	yaml_node_item_t *it;
	sl_strv v = NULL;

	if (!n || n->type != YAML_SEQUENCE_NODE) {
		problem(c, n, "'%s' must be a list%s", key, hint ? hint : "");
		return -1;
	}
	for (it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
		yaml_node_t *item = yaml_document_get_node(c->doc, *it);
		const char *s = scalar(item);
		if (!s || is_null(item)) {
			problem(c, item, "each entry of '%s' must be a text value", key);
			sl_strv_free(v);
			return -1;
		}
		if (sl_strv_push(&v, s) < 0) {
			oom(c);
			sl_strv_free(v);
			return -1;
		}
	}
	if (!v && !(v = calloc(1, sizeof(*v)))) {
		oom(c);
		return -1;
	}
	sl_strv_free(*out);
	*out = v;
	return 0;
}

static int get_argv(struct ctx *c, const yaml_node_t *n, sl_strv *out, const char *key)
{
	if (scalar(n) && !is_null(n)) {
		problem(c, n,
		        "'%s' must be a list (an argv), e.g. [make, test]; to use a shell write "
		        "[sh, -c, '...']",
		        key);
		return -1;
	}
	if (get_strv(c, n, out, key, " (an argv), e.g. [make, test]") < 0)
		return -1;
	if (!(*out)[0]) {
		problem(c, n, "'%s' is an empty list; give the program and its arguments", key);
		return -1;
	}
	return 0;
}

/*
 * 1 when relative path p is in .git or .system (any case: a case-folding
 * file system sees .GIT as .git), after "./" and empty components.
 */
static int names_private_dir(const char *p)
{
	size_t len;

	for (;;) {
		while (*p == '/')
			p++;
		if (p[0] == '.' && (p[1] == '/' || !p[1])) {
			p++;
			continue;
		}
		break;
	}
	len = strcspn(p, "/");
	return (len == 4 && !strncasecmp(p, ".git", 4)) ||
	       (len == 7 && !strncasecmp(p, ".system", 7));
}

/* 1 when relative path p is the repository root itself (".", "./", "././"). */
static int names_root(const char *p)
{
	if (!*p)
		return 0; /* empty: not a path (sl_path_is_safe_relative says so) */
	for (; *p; p++)
		if (*p != '.' && *p != '/')
			return 0;
		else if (*p == '.' && p[1] && p[1] != '/')
			return 0;
	return 1;
}

static int get_paths(struct ctx *c, const yaml_node_t *n, sl_strv *out, const char *key)
{
	if (get_strv(c, n, out, key, " of paths relative to the repository root") < 0)
		return -1;
	for (size_t i = 0; (*out)[i]; i++) {
		const char *p = (*out)[i];
		const char *why = names_private_dir(p)
		        ? "names git's or sluice's own folder (.git, .system); share or copy files "
		          "of the project only"
		        : names_root(p) ? "is the repository itself; name a file or folder in it "
		                          "(node_modules, .venv)"
		        : !sl_path_is_safe_relative(p)
		                ? "is not a path inside the repository; use a relative path "
		                  "without '..'"
		                : NULL;
		if (why) {
			problem(c, n, "'%s' entry '%s' %s", key, p, why);
			return -1;
		}
	}
	return 0;
}

/* Iterate the pairs of a mapping; a non-mapping is reported. */

static void each_pair(struct ctx *c, yaml_node_t *n, const char *what, pair_fn fn)
{
	yaml_node_pair_t *p;

	if (!n || n->type != YAML_MAPPING_NODE) {
		if (!is_null(n))
			problem(c, n, "'%s' must be a mapping of keys", what);
		return;
	}
	for (p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(c->doc, p->key);
		yaml_node_t *v = yaml_document_get_node(c->doc, p->value);
		if (!scalar(k)) {
			problem(c, k, "keys of '%s' must be plain words", what);
			continue;
		}
		fn(c, scalar(k), k, v);
	}
}

static void unknown(struct ctx *c, yaml_node_t *k, const char *section, const char *known)
{
	char like[64];

	if (sl_similar(scalar(k), known, like, sizeof(like)))
		problem(c, k, "unknown key '%s'%s%s; did you mean '%s'? (known keys: %s)", scalar(k),
		        section ? " in " : "", section ? section : "", like, known);
	else
		problem(c, k, "unknown key '%s'%s%s; known keys: %s", scalar(k),
		        section ? " in " : "", section ? section : "", known);
}

/* ---- sections ---------------------------------------------------------- */

/* The builder being read: an entry of `builders:`, or `builder:`. */
static struct sl_builder *cur_builder(struct ctx *c)
{
	return c->bld ? c->bld : &c->cfg->builder;
}

/* "builder.<key>" or "builders.<name>.<key>", for messages. */
static const char *builder_key(struct ctx *c, const char *key)
{
	if (!c->bld)
		snprintf(c->bkey, sizeof(c->bkey), "builder.%s", key);
	else
		snprintf(c->bkey, sizeof(c->bkey), "builders.%.64s.%s", c->bld->name, key);
	return c->bkey;
}

static void env_pair(struct ctx *c, const char *key, yaml_node_t *k, yaml_node_t *v)
{
	const char *s = scalar(v);
	char *kv = NULL;
	const char *p;

	for (p = key; *p && (isalnum((unsigned char)*p) || *p == '_'); p++)
		;
	if (!*key || *p || isdigit((unsigned char)*key)) {
		problem(c, k,
		        "'%s' name '%s' is not a variable name ([A-Za-z_][A-Za-z0-9_]*)",
		        builder_key(c, "env"), key);
		return;
	}
	if (!s) {
		problem(c, v, "'%s.%s' must be a text value", builder_key(c, "env"), key);
		return;
	}
	if (asprintf(&kv, "%s=%s", key, s) < 0 || sl_strv_push(&cur_builder(c)->env, kv) < 0)
		oom(c);
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
		problem(c, k, "builder name '%.100s' must be a word of [A-Za-z0-9_.-] (at most 64)",
		        key);
		return;
	}
	if (sl_config_builder_named(c->cfg, key)) {
		problem(c, k, "builder name '%.100s' is used twice; keep one", key);
		return;
	}
	if (sl_config_preset_known(key)) {
		problem(c, k, "builder name '%s' is a preset's name; pick another (an 'agent:' "
		        "naming a preset runs the preset)", key);
		return;
	}
	if (!(b->name = strdup(key))) {
		oom(c);
		return;
	}
	b->line = (int)k->start_mark.line + 1;
	c->cfg->nbuilders++;
	if (v->type != YAML_MAPPING_NODE) {
		problem(c, v, "'builders.%s' must be a mapping such as {preset: codex} or "
		        "{command: [my-agent]}", key);
		return;
	}
	snprintf(what, sizeof(what), "builders.%s", key);
	c->bld = b;
	walk_section(c, v, &(struct section){"builder", what, "a named builder", 1});
	c->bld = NULL;
	if (!b->command == !b->preset)
		problem(c, v, "'builders.%s' needs exactly one of 'command' and 'preset'", key);
}

static void read_builders(struct ctx *c, const struct setting *row, yaml_node_t *v, void *at)
{
	size_t n;

	if (!v || v->type != YAML_MAPPING_NODE) {
		problem(c, v, "'builders' must be a mapping of names to builders, e.g. "
		        "'builders: {fast: {preset: codex}}'");
		return;
	}
	n = (size_t)(v->data.mapping.pairs.top - v->data.mapping.pairs.start);
	if (!n) {
		problem(c, v, "'builders' is empty; name at least one builder or remove it");
		return;
	}
	if (c->cfg->builders) {
		problem(c, v, "'builders' is given twice; keep one");
		return;
	}
	if (!(c->cfg->builders = calloc(n, sizeof(*c->cfg->builders)))) {
		oom(c);
		return;
	}
	each_pair(c, v, "builders", named_builder);
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
static void check_agent(struct ctx *c, const yaml_node_t *n, const char *name, const char *what)
{
	char known[512];

	if (!name || sl_config_builder_named(c->cfg, name) || sl_config_preset_known(name))
		return;
	known_agents(c->cfg, known, sizeof(known));
	problem(c, n, "unknown %s '%.100s'; known agents: %s", what, name, known);
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

static int gate_name_ok(const char *s)
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
static int gate_known(const struct sl_config *cfg, const char *name)
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
static void read_gate_worktree(struct ctx *c, const struct setting *row, yaml_node_t *v, void *at)
{
	int read_only = 0;

	if (get_enum(c, row, v, &read_only) == 0 && read_only && c->watch_gate)
		problem(c, v, "a watch gate cannot be read-only; it runs in a checkout of its "
		        "own (docs/watch.md)");
	else if (read_only && !sl_gate_read_only(c->cfg, c->gate->name) &&
	    sl_strv_push(&c->cfg->read_only_gates, c->gate->name) < 0)
		oom(c);
}

/* A new gate named `key` at the end of *gates (*n of them), or NULL (told). */
static struct sl_gate *gate_add(struct ctx *c, const char *key, yaml_node_t *k,
                                struct sl_gate **gates, size_t *n)
{
	struct sl_gate *g;

	if (!gate_name_ok(key)) {
		problem(c, k, "gate name '%s' may use only letters, digits, '_' and '-'", key);
		return NULL;
	}
	if (gate_in(*gates, *n, key)) {
		problem(c, k, "gate '%s' is defined twice; keep one", key);
		return NULL;
	}
	if (!(g = realloc(*gates, (*n + 1) * sizeof(*g)))) {
		oom(c);
		return NULL;
	}
	*gates = g;
	g = &g[(*n)++];
	memset(g, 0, sizeof(*g));
	if (!(g->name = strdup(key))) {
		oom(c);
		return NULL;
	}
	return g;
}

/* A gate's value: argv, or the mapping of gates.<name> (`what` names it in messages). */
static void gate_read(struct ctx *c, struct sl_gate *g, yaml_node_t *v, const char *what)
{
	c->gate = g;
	apply_defaults(c, B_GATE);
	c->gate = NULL;
	if (v && v->type == YAML_MAPPING_NODE) {
		c->gate = g;
		walk_section(c, v, &(struct section){"gates.<name>", "a gate", "a gate", 0});
		c->gate = NULL;
		if (!g->argv)
			problem(c, v, "gate '%s' has no command; add 'command: [prog, args...]'",
			        g->name);
	} else {
		get_argv(c, v, &g->argv, what);
	}
}

static void gate_pair(struct ctx *c, const char *key, yaml_node_t *k, yaml_node_t *v)
{
	struct sl_gate *g = gate_add(c, key, k, &c->cfg->gates, &c->cfg->ngates);

	if (g)
		gate_read(c, g, v, "gates.<name>");
}

/* watch.gates.<name>: argv or {command, timeout}, apart from gates: (docs/watch.md). */
static void watch_gate_pair(struct ctx *c, const char *key, yaml_node_t *k, yaml_node_t *v)
{
	struct sl_config *cfg = c->cfg;
	struct sl_gate *g = gate_add(c, key, k, &cfg->watch.gates, &cfg->watch.ngates);

	if (!g)
		return;
	c->watch_gate = 1;
	gate_read(c, g, v, "watch.gates.<name>");
	c->watch_gate = 0;
}

/* ---- retry ------------------------------------------------------------- */

static void check_template(struct ctx *c, const yaml_node_t *n, const char *tmpl,
                           sl_template_known fn, void *data, const char *where)
{
	struct sl_err e = SL_ERR_INIT;

	if (sl_template_check(tmpl, fn, data, where, &e) != 0)
		problem(c, n, "%s", e.msg);
}

/* not: gate.<name> */
static void read_not(struct ctx *c, const struct setting *row, yaml_node_t *v, void *at)
{
	const char *s = scalar(v);

	if (!s || strncmp(s, "gate.", 5) || !gate_name_ok(s + 5)) {
		problem(c, v, "'not:' must name a gate as 'gate.<name>', not '%s'",
		        s ? s : "(a list or mapping)");
		return;
	}
	free(*(char **)at);
	if (!(*(char **)at = strdup(s + 5)))
		oom(c);
}

/* agent: <name of builders: or preset> */
static void check_retry_agent(struct ctx *c, const struct setting *row, yaml_node_t *v, void *at)
{
	check_agent(c, v, *(char **)at, "agent");
}

/* ---- retry: validator conditions (validate, with, timeout) --------------- */

#define RETRY_VALIDATE_TIMEOUT_MS ((int64_t)2 * 60 * 1000)

/* One input of 'with:': "<key>=<template>", the key a word, given once. */
static void with_pair(struct ctx *c, const char *key, yaml_node_t *k, yaml_node_t *v)
{
	struct sl_retry_rule *r = c->rule;
	const char *s = scalar(v);
	size_t len = strlen(key);
	char *kv = NULL;

	if (!gate_name_ok(key)) {
		problem(c, k, "input name '%s' in 'with' may use only letters, digits, '_' and '-'",
		        key);
		return;
	}
	for (char **w = r->with; w && *w; w++)
		if (!strncmp(*w, key, len) && (*w)[len] == '=') {
			problem(c, k, "input '%s' is given twice in 'with'; keep one", key);
			return;
		}
	if (!s || is_null(v)) {
		problem(c, v, "'with.%s' must be a text value (a template such as \"{diff}\")",
		        key);
		return;
	}
	if (asprintf(&kv, "%s=%s", key, s) < 0 || sl_strv_push(&r->with, kv) < 0)
		oom(c);
	free(kv);
}

/* An empty argv still marks the entry as a validator's. */
static void read_validate(struct ctx *c, const struct setting *row, yaml_node_t *v, void *at)
{
	sl_strv *argv = at;

	if (get_argv(c, v, argv, row->key) < 0 && !*argv && !(*argv = calloc(1, sizeof(**argv))))
		oom(c);
}

static void read_with(struct ctx *c, const struct setting *row, yaml_node_t *v, void *at)
{
	if (!v || v->type != YAML_MAPPING_NODE)
		problem(c, v, "'with' must be a mapping of inputs to templates, e.g. "
		        "'with: {diff: \"{diff}\"}'");
	else
		each_pair(c, v, "with", with_pair);
	if (!*(sl_strv *)at && !(*(sl_strv *)at = calloc(1, sizeof(char *))))
		oom(c);
}

static void read_timeout(struct ctx *c, const struct setting *row, yaml_node_t *v, void *at)
{
	if (get_duration(c, v, at, row->key) < 0)
		*(int64_t *)at = RETRY_VALIDATE_TIMEOUT_MS; /* given, though wrong */
}

/* After an entry: 'with' and 'timeout' belong to a validator; its default timeout. */
static void retry_validate_finish(struct ctx *c, yaml_node_t *n, struct sl_retry_rule *r)
{
	if (!r->validate && (r->with || r->validate_timeout_ms))
		problem(c, n, "'%s' in a retry entry goes with 'validate: [argv]' (the "
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
		check_template(c, n, eq + 1, sl_template_prompt_var_known, names, where);
	}
}

static void retry_entry(struct ctx *c, yaml_node_t *n, struct sl_retry_rule *r)
{
	memset(r, 0, sizeof(*r));
	r->line = (int)n->start_mark.line + 1;
	if (n->type != YAML_MAPPING_NODE) {
		problem(c, n,
		        "each retry entry must be a mapping such as '- attempt: 2' or '- exit: 4'");
		return;
	}
	c->rule = r;
	c->conditions = 0;
	walk_section(c, n, &(struct section){"retry", "a retry entry", "a retry entry", 0});
	c->rule = NULL;
	if (r->agent && r->builder)
		problem(c, n, "a retry entry has both 'agent' and 'builder'; keep one (both say "
		        "what builds from then on)");
	retry_validate_finish(c, n, r);
	if (c->conditions != 1)
		problem(c, n,
		        "a retry entry needs exactly one condition (attempt: N, not: gate.NAME, "
		        "validate: [argv] or exit: N); this one has %d",
		        c->conditions);
}

static void retry_list(struct ctx *c, yaml_node_t *n)
{
	struct sl_config *cfg = c->cfg;
	yaml_node_item_t *it;
	size_t count, i;

	if (!n || n->type != YAML_SEQUENCE_NODE) {
		if (!is_null(n))
			problem(c, n,
			        "'retry' must be a list of entries ('- attempt: 2', '- exit: 4')");
		return;
	}
	count = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
	if (!count)
		return;
	if (!(cfg->retry = calloc(count, sizeof(*cfg->retry)))) {
		oom(c);
		return;
	}
	for (it = n->data.sequence.items.start, i = 0; i < count; it++, i++) {
		retry_entry(c, yaml_document_get_node(c->doc, *it), &cfg->retry[i]);
		cfg->nretry++;
	}
}

static void retry_check(struct ctx *c, yaml_node_t *n)
{
	struct sl_config *cfg = c->cfg;
	char **names = calloc(cfg->ngates + 1, sizeof(*names));
	char where[64];
	size_t i, exits = 0;

	if (!names) {
		oom(c);
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
		    strcmp(r->gate, "job") && !gate_known(cfg, r->gate))
			problem(c, n, "retry entry at line %d: 'not: gate.%s' names no configured "
			        "gate (nor gate.builder, gate.review, gate.no_write or gate.job); "
			        "define it under 'gates' or fix the name", r->line, r->gate);
		retry_validate_check(c, n, r, names);
		if (r->prompt) {
			snprintf(where, sizeof(where), "the retry prompt at line %d", r->line);
			check_template(c, n, r->prompt, sl_template_prompt_var_known, names, where);
		}
	}
	if (cfg->nretry && !exits)
		problem(c, n, "retry has no 'exit' entry; add '- exit: N' to say when to stop");
	else if (exits > 1)
		problem(c, n, "retry has %zu 'exit' entries; keep one", exits);
	free(names);
}

/* ---- reviewer, merge, gc ----------------------------------------------- */

/*
 * The name becomes the Reviewed-by: trailer of every merge (the reviewer
 * module refuses the same in a verdict): one line of at most 200 characters.
 */
int sl_reviewer_name_check(const char *name, size_t len)
{
	size_t i, chars = 0;

	for (i = 0; i < len; i++) {
		if ((unsigned char)name[i] < 0x20 || name[i] == 0x7f)
			return SL_NAME_CONTROL;
		chars += ((unsigned char)name[i] & 0xc0) != 0x80; /* UTF-8: count lead bytes */
	}
	return chars > SL_REVIEWER_NAME_MAX ? SL_NAME_TOO_LONG : SL_NAME_OK;
}

static int merge_var_known(const char *name, void *data)
{
	return !strncmp(name, "work_order.", 11) || !strcmp(name, "run.id") ||
	       !strcmp(name, "run.short") || !strcmp(name, "run.branch") ||
	       !strcmp(name, "reviewer");
}

/* ---- executor: (docs/scale-out.md) ---------------- */

/* A value the engine's CLI or the job's shell gets as one word: no control character, no leading '-'. */
static int get_word(struct ctx *c, yaml_node_t *v, char **out, const char *key)
{
	if (get_str(c, v, out, key) != 0)
		return -1;
	for (const unsigned char *p = (const unsigned char *)*out; *p; p++)
		if (*p < 0x20 || *p == 0x7f) {
			problem(c, v, "'%s' must be one line of text without control characters", key);
			return -1;
		}
	if (!**out || **out == '-') {
		problem(c, v, "'%s' must not be empty or start with '-' (it is given to the "
		        "engine's CLI as a value)", key);
		return -1;
	}
	return 0;
}

/* A remote kind needs a remote (and kubernetes an image). */
static void executor_check(struct ctx *c)
{
	const struct sl_config *cfg = c->cfg;
	yaml_node_t *at = c->executor ? c->executor : c->root;

	if (cfg->executor.kind == SL_EXEC_LOCAL)
		return;
	if (!cfg->executor.remote)
		problem(c, at, "executor.kind is %s but executor.remote is not set; name a git "
		        "remote both this host and the workers reach (a URL, or an absolute path "
		        "on a shared file system)", cfg->executor.kind == SL_EXEC_SLURM ? "slurm"
		                                                                  : "kubernetes");
	else if (!strstr(cfg->executor.remote, "://") && cfg->executor.remote[0] != '/' &&
	         !strchr(cfg->executor.remote, ':'))
		problem(c, at, "executor.remote '%.200s' is neither a URL nor an absolute path; "
		        "the workers clone it from another folder", cfg->executor.remote);
	if (cfg->executor.workdir && cfg->executor.workdir[0] != '/')
		problem(c, at, "executor.workdir '%.200s' is not an absolute path; name a folder on "
		        "the workers, such as /scratch", cfg->executor.workdir);
	if (cfg->executor.kind == SL_EXEC_KUBERNETES && !cfg->executor.kubernetes.image)
		problem(c, at, "executor.kind is kubernetes but executor.kubernetes.image is not "
		        "set; name the container image the jobs run in (it needs sh, git and "
		        "your agent's CLI)");
}

/* git check-ref-format's rules for a branch name (no libgit2 needed). */
static int branch_name_ok(const char *s)
{
	const char *p, *comp = s;
	size_t n = strlen(s);

	if (!n || s[0] == '/' || s[n - 1] == '/' || s[n - 1] == '.' || !strcmp(s, "@") ||
	    strstr(s, "..") || strstr(s, "//") || strstr(s, "@{"))
		return 0;
	for (p = s; *p; p++) {
		if ((unsigned char)*p < 0x20 || *p == 0x7f || strchr(" ~^:?*[\\", *p))
			return 0;
		if (p == comp && *p == '.')
			return 0;
		if (*p == '/' || !p[1]) {
			const char *end = *p == '/' ? p : p + 1;
			if (end - comp >= 5 && !strncmp(end - 5, ".lock", 5))
				return 0;
			comp = p + 1;
		}
	}
	return 1;
}

const char *sl_config_target_problem(const char *t)
{
	if (!t[0])
		return "is empty; name a local branch such as main";
	if (t[0] == '-')
		return "starts with '-'; name a local branch such as main";
	if (!strncmp(t, "refs/heads/", 11))
		return "is not a branch name (name the branch without 'refs/heads/')";
	if (!strcmp(t, "HEAD") || !strncmp(t, "refs/", 5) || !strncmp(t, "heads/", 6))
		return "is not a branch; name a local branch such as main";
	if (!branch_name_ok(t))
		return "is not a valid branch name";
	if (strlen(t) > SL_CONFIG_TARGET_MAX)
		return "is over 500 bytes long; name a shorter branch";
	return NULL;
}

/* ---- the hooks of the rows whose value has its own shape or check ------ */

static void check_target(struct ctx *c, const struct setting *row, yaml_node_t *v, void *at)
{
	const char *t = *(char **)at, *why;

	if ((why = sl_config_target_problem(t)) != NULL)
		problem(c, v, "target '%.200s' %s", t, why); /* the reason, not cut */
}

static void check_inbox(struct ctx *c, const struct setting *row, yaml_node_t *v, void *at)
{
	if (!sl_path_is_safe_relative(*(char **)at))
		problem(c, v, "'queue.inbox' must be a directory relative to the repository root "
		        "without '..', not '%s'", *(char **)at);
}

static void check_preset(struct ctx *c, const struct setting *row, yaml_node_t *v, void *at)
{
	if (!sl_config_preset_known(*(char **)at))
		problem(c, v, "unknown %s '%s'; use claude-code, codex, aider or gemini, or write "
		        "builder.command", builder_key(c, "preset"), *(char **)at);
}

/* Where builder.agent, merge.gates, executor.kind/remote and retry are, for after the walk. */
static void remember(struct ctx *c, const struct setting *row, yaml_node_t *v, void *at)
{
	if (!strncmp(row->key, "executor.", 9))
		c->executor = v;
	else if (!strcmp(row->key, "retry"))
		c->retry_node = v;
	else if (!strcmp(row->key, "builder.agent"))
		c->builder_agent = v;
	else if (!strcmp(row->key, "merge.gates"))
		c->merge_gates = v;
}

/* An http(s) URL's checks, shown without what may be secret in it (core/url.h). */
static void check_url(struct ctx *c, const struct setting *row, yaml_node_t *v, void *at)
{
	const char *url = *(char **)at;
	char safe[SL_URL_SAFE_MAX];

	sl_url_safe(safe, sizeof(safe), url);
	if (strncmp(url, "http://", 7) && strncmp(url, "https://", 8))
		problem(c, v, "%s '%s' must start with http:// or https://", row->key, safe);
	else if (!url_port_ok(url))
		problem(c, v, "%s '%s' has a port that is not a number from 1 to 65535; write "
		        "http://HOST:PORT/ with digits, or leave the port out", row->key, safe);
}

static void check_name(struct ctx *c, const struct setting *row, yaml_node_t *v, void *at)
{
	switch (sl_reviewer_name_check(*(char **)at, strlen(*(char **)at))) {
	case SL_NAME_CONTROL:
		problem(c, v, "reviewer.name holds a control character (a newline, a tab, "
		        "an escape); it becomes the Reviewed-by: trailer: write one line");
		break;
	case SL_NAME_TOO_LONG:
		problem(c, v, "reviewer.name is longer than %d characters; it becomes the "
		        "Reviewed-by: trailer: shorten it", SL_REVIEWER_NAME_MAX);
		break;
	}
}

static void check_message(struct ctx *c, const struct setting *row, yaml_node_t *v, void *at)
{
	struct sl_err e = SL_ERR_INIT;
	const char *msg = *(char **)at;

	/* a commit message: every single brace must be a variable */
	if (sl_template_check_braces(msg, "merge.message", &e) != 0)
		problem(c, v, "%s", e.msg);
	else
		check_template(c, v, msg, merge_var_known, NULL, "merge.message");
}

/* commit.name, commit.email: what git would take in a signature (core/repo.h). */
static void check_identity(struct ctx *c, const struct setting *row, yaml_node_t *v, void *at)
{
	if (!sl_identity_valid(*(char **)at))
		problem(c, v, "'%s' must be one line of at most %d bytes without '<' or '>', "
		        "not '%.100s'", row->key, SL_IDENTITY_MAX - 1, *(char **)at);
}

/* ---- the table ---------------------------------------------------------- */

/* ---- merge.freeze: windows when the target lands nothing (docs/config.md) ---- */

/* "HH:MM" (to: up to "24:00") into minutes of the day; -1 when not. */
static int freeze_minute(const char *s, int upto)
{
	int h, m;
	char end;

	if (!s || strlen(s) != 5 || sscanf(s, "%2d:%2d%c", &h, &m, &end) != 2 ||
	    !isdigit((unsigned char)s[0]) || !isdigit((unsigned char)s[3]) || m > 59 ||
	    h * 60 + m > upto)
		return -1;
	return h * 60 + m;
}

/* days: [mon, tue, ...] into w->days. */
static void freeze_days(struct ctx *c, yaml_node_t *v, struct sl_freeze_window *w)
{
	static const char *const names[] = { "sun", "mon", "tue", "wed", "thu", "fri", "sat" };
	yaml_node_item_t *it;
	int d;

	if (!v || v->type != YAML_SEQUENCE_NODE) {
		problem(c, v, "'merge.freeze' days must be a list of mon, tue, wed, thu, fri, sat, sun");
		return;
	}
	if (v->data.sequence.items.start == v->data.sequence.items.top)
		problem(c, v, "'merge.freeze' days must name at least one day");
	for (it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
		yaml_node_t *item = yaml_document_get_node(c->doc, *it);
		const char *s = scalar(item);
		for (d = 0; s && d < 7 && strcmp(s, names[d]); d++)
			;
		if (!s || d == 7)
			problem(c, item, "unknown day '%s' in 'merge.freeze'; use mon, tue, wed, thu, "
			        "fri, sat or sun", s ? s : "(a list or mapping)");
		else
			w->days |= 1u << d;
	}
}

/* One key of a window. */
static void freeze_key(struct ctx *c, struct sl_freeze_window *w, yaml_node_t *k, yaml_node_t *v,
		       int *from_to)
{
	const char *key = scalar(k), *s = scalar(v);

	if (!strcmp(key, "days"))
		freeze_days(c, v, w), *from_to |= 4;
	else if (!strcmp(key, "from") || !strcmp(key, "to")) {
		int to = key[0] == 't', m = freeze_minute(s, to ? 1440 : 1439);
		if (m < 0)
			problem(c, v, "'merge.freeze' %s must be a time of day \"HH:MM\"%s, not '%s'",
			        key, to ? " up to \"24:00\"" : "", s ? s : "(a list or mapping)");
		else
			*(to ? &w->to_min : &w->from_min) = m, *from_to |= to ? 2 : 1;
	} else if (!strcmp(key, "tz")) {
		if (get_str(c, v, &w->tz, "merge.freeze tz") == 0 && !sl_tz_known(w->tz))
			problem(c, v, "unknown time zone '%.100s' in 'merge.freeze'; use a name of the "
			        "tz database such as Europe/Berlin or UTC", w->tz);
	} else if (!strcmp(key, "reason"))
		get_str(c, v, &w->reason, "merge.freeze reason");
	else if (!strcmp(key, "allow_urgent"))
		get_bool(c, v, &w->allow_urgent, "merge.freeze allow_urgent");
	else
		unknown(c, k, "merge.freeze", "days, from, to, tz, reason, allow_urgent");
}

/* One window: a mapping with days, from and to (from before to). */
static void freeze_window(struct ctx *c, yaml_node_t *v, struct sl_freeze_window *w)
{
	yaml_node_pair_t *p;
	int from_to = 0;

	if (v->type != YAML_MAPPING_NODE) {
		problem(c, v, "each entry of 'merge.freeze' must be a mapping with days, from and to");
		return;
	}
	for (p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(c->doc, p->key);
		if (scalar(k))
			freeze_key(c, w, k, yaml_document_get_node(c->doc, p->value), &from_to);
	}
	if (from_to != 7)
		problem(c, v, "each entry of 'merge.freeze' needs days, from and to, e.g. "
		        "{days: [sat, sun], from: \"00:00\", to: \"24:00\", tz: UTC}");
	else if (w->from_min >= w->to_min)
		problem(c, v, "'merge.freeze' from must be before to; write a window over midnight "
		        "as two windows");
	if ((!w->tz && !(w->tz = strdup("UTC"))) || (!w->reason && !(w->reason = strdup("merge.freeze"))))
		oom(c);
}

static void read_freeze(struct ctx *c, const struct setting *row, yaml_node_t *v, void *at)
{
	struct sl_config *cfg = c->cfg;
	yaml_node_item_t *it;

	if (is_null(v))
		return;
	if (v->type != YAML_SEQUENCE_NODE) {
		problem(c, v, "'merge.freeze' must be a list of windows, e.g. [{days: [sat, sun], "
		        "from: \"00:00\", to: \"24:00\", tz: Europe/Berlin, reason: weekend}]");
		return;
	}
	for (it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
		struct sl_freeze_window *n = realloc(cfg->merge.freeze,
						     (cfg->merge.nfreeze + 1) * sizeof(*n));
		if (!n) {
			oom(c);
			return;
		}
		cfg->merge.freeze = n;
		memset(&n[cfg->merge.nfreeze], 0, sizeof(*n));
		freeze_window(c, yaml_document_get_node(c->doc, *it), &n[cfg->merge.nfreeze++]);
	}
}

static void freeze_free(struct sl_config *cfg)
{
	for (size_t i = 0; i < cfg->merge.nfreeze; i++) {
		free(cfg->merge.freeze[i].tz);
		free(cfg->merge.freeze[i].reason);
	}
	free(cfg->merge.freeze);
}

/* One model of budget.prices: {input: 3, output: 15, cache_read: 0.3, cache_write: 3.75}. */
static void price_pair(struct ctx *c, const char *model, yaml_node_t *k, yaml_node_t *v)
{
	struct sl_config *cfg = c->cfg;
	struct sl_price *n, *pr;
	yaml_node_pair_t *p;

	if (!*model || sl_reviewer_name_check(model, strlen(model)) != SL_NAME_OK) {
		problem(c, k, "a model of 'budget.prices' must be a name of at most 200 characters "
		        "with no control character");
		return;
	}
	if (v->type != YAML_MAPPING_NODE || !v->data.mapping.pairs.top ||
	    v->data.mapping.pairs.top == v->data.mapping.pairs.start) {
		problem(c, v, "'budget.prices' of '%s' must be a mapping such as {input: 3, output: "
		        "15} (US dollars per million tokens)", model);
		return;
	}
	if (!(n = realloc(cfg->budget.prices, (cfg->budget.nprices + 1) * sizeof(*n))) ||
	    !(n[cfg->budget.nprices].model = strdup(model))) {
		if (n)
			cfg->budget.prices = n;
		oom(c);
		return;
	}
	cfg->budget.prices = n;
	pr = &n[cfg->budget.nprices++];
	pr->input = pr->output = pr->cache_read = pr->cache_write = 0;
	for (p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top; p++) {
		yaml_node_t *pk = yaml_document_get_node(c->doc, p->key);
		yaml_node_t *pv = yaml_document_get_node(c->doc, p->value);
		const char *key = scalar(pk), *val = scalar(pv);
		double *at = !key ? NULL : !strcmp(key, "input") ? &pr->input
		             : !strcmp(key, "output") ? &pr->output
		             : !strcmp(key, "cache_read") ? &pr->cache_read
		             : !strcmp(key, "cache_write") ? &pr->cache_write : NULL;

		if (!at) {
			unknown(c, pk, "budget.prices", "input, output, cache_read, cache_write");
		} else if (!val || pv->data.scalar.style != YAML_PLAIN_SCALAR_STYLE ||
		           amount_parse(val, at) != 0 || *at < 0) {
			problem(c, pv, "'budget.prices' %s of '%s' must be US dollars per million "
			        "tokens such as 3 or 0.30, not '%s'", key, model,
			        val ? val : "(a list or mapping)");
		}
	}
}

static void prices_free(struct sl_config *cfg)
{
	for (size_t i = 0; i < cfg->budget.nprices; i++)
		free(cfg->budget.prices[i].model);
	free(cfg->budget.prices);
}

#define CFG(f) .base = B_CONFIG, .off = offsetof(struct sl_config, f)
#define BLD(f) .base = B_BUILDER, .off = offsetof(struct sl_builder, f)
#define GATE(f) .base = B_GATE, .off = offsetof(struct sl_gate, f)
#define RETRY(f) .base = B_RETRY, .off = offsetof(struct sl_retry_rule, f)

/*
 * Every key of config.yaml (docs/config.md), in the order the "known keys"
 * of a message list them. A section's keys follow its row.
 */
static const struct setting rows[] = {
	{.key = "target", .type = T_STR, CFG(target), .check = check_target},
	{.key = "queue", .type = T_SECTION},
	{.key = "queue.inbox", .type = T_STR, CFG(queue.inbox), .def = "work_orders",
	 .check = check_inbox},
	{.key = "queue.jobs", .type = T_INT, CFG(queue.jobs), .def = "2", .min = 1,
	 .max = SL_JOBS_MAX},
	{.key = "queue.allow_overlap", .type = T_BOOL, CFG(queue.allow_overlap), .def = "false"},
	{.key = "queue.overlap", .type = T_ENUM, CFG(queue.overlap_fatal), .def = "resolve",
	 .words = "resolve|fatal", .flags = F_TEXT,
	 .msg = "'queue.overlap' must be 'resolve' or 'fatal', not '%s'"},
	{.key = "builder", .type = T_SECTION},
	{.key = "builder.command", .type = T_ARGV, BLD(command)},
	{.key = "builder.preset", .type = T_STR, BLD(preset), .check = check_preset},
	{.key = "builder.agent", .type = T_STR, BLD(agent), .check = remember,
	 .flags = F_TOP_ONLY},
	{.key = "builder.timeout", .type = T_DUR, BLD(timeout_ms), .def = "30m"},
	{.key = "builder.env", .type = T_STRV, BLD(env), .pair = env_pair},
	{.key = "builder.log_max", .type = T_SIZE, BLD(log_max), .def = "10MiB",
	 .flags = F_TOP_ONLY},
	{.key = "builders", .type = T_HOOK, .read = read_builders},
	{.key = "worktree", .type = T_SECTION},
	{.key = "worktree.share", .type = T_PATHS, CFG(worktree.share)},
	{.key = "worktree.copy", .type = T_PATHS, CFG(worktree.copy)},
	{.key = "worktree.setup", .type = T_ARGV, CFG(worktree.setup)},
	{.key = "worktree.setup_timeout", .type = T_DUR, CFG(worktree.setup_timeout_ms),
	 .def = "10m"},
	{.key = "worktree.hooks", .type = T_BOOL, CFG(worktree.hooks), .def = "false"},
	{.key = "worktree.pool", .type = T_INT, CFG(worktree.pool), .def = "2", .max = 64},
	{.key = "worktree.recycle", .type = T_ENUM, CFG(worktree.keep_ignored), .def = "clean",
	 .words = "clean|keep-ignored", .flags = F_TEXT,
	 .msg = "unknown worktree.recycle '%s'; use clean (the default: a reused worktree loses "
	        "its ignored files too) or keep-ignored (node_modules/, build/ and other ignored "
	        "files stay from run to run)"},
	{.key = "worktree.keep_failed", .type = T_BOOL, CFG(worktree.keep_failed), .def = "true"},
	{.key = "worktree.mode", .type = T_ENUM, CFG(worktree.mode), .def = "read-write",
	 .words = "read-write|read-only|none", .flags = F_TEXT,
	 .msg = "unknown worktree.mode '%.80s'; use " SL_WORKTREE_MODES " (read-write, the "
	        "default: the builder's changes are merged; read-only: it may change nothing and "
	        "the run ends in a report; none: it works in an empty folder)"},
	{.key = "gates", .type = T_HOOK, .pair = gate_pair},
	{.key = "gates.<name>.command", .type = T_ARGV, GATE(argv)},
	{.key = "gates.<name>.timeout", .type = T_DUR, GATE(timeout_ms), .def = "10m"},
	{.key = "gates.<name>.worktree", .type = T_ENUM, .base = B_GATE, .def = "read-write",
	 .words = "read-write|read-only", .flags = F_TEXT, .read = read_gate_worktree,
	 .msg = "unknown gates.<name>.worktree '%.80s'; use read-write (the default) or "
	        "read-only (the gate must change no file: a write fails it)"},
	{.key = "retry", .type = T_HOOK, .flags = F_NOTE}, /* walked after the gates it names */
	{.key = "reviewer", .type = T_SECTION},
	{.key = "reviewer.mode", .type = T_ENUM, CFG(reviewer.mode), .def = "manual",
	 .words = "manual|http|command", .msg = "reviewer.mode must be manual, http or command, not '%s'"},
	{.key = "reviewer.url", .type = T_STR, CFG(reviewer.url), .check = check_url},
	{.key = "reviewer.protocol", .type = T_ENUM, CFG(reviewer.protocol), .def = "sluice",
	 .words = "sluice|openai", .msg = "reviewer.protocol must be sluice or openai, not '%s'"},
	{.key = "reviewer.model", .type = T_STR, CFG(reviewer.model)},
	{.key = "reviewer.token_env", .type = T_STR, CFG(reviewer.token_env)},
	{.key = "reviewer.timeout", .type = T_DUR, CFG(reviewer.timeout_ms), .def = "120s"},
	{.key = "reviewer.connect_timeout", .type = T_DUR, CFG(reviewer.connect_timeout_ms),
	 .def = "10s"},
	{.key = "reviewer.retries", .type = T_INT, CFG(reviewer.retries), .def = "3", .max = 100},
	{.key = "reviewer.command", .type = T_ARGV, CFG(reviewer.command)},
	{.key = "reviewer.max_reply", .type = T_SIZE, CFG(reviewer.max_reply), .def = "1MiB"},
	{.key = "reviewer.name", .type = T_STR, CFG(reviewer.name), .check = check_name},
	{.key = "merge", .type = T_SECTION},
	{.key = "merge.resolver", .type = T_STR, CFG(merge.resolver), .def = "builder",
	 .words = "builder|none", .msg = "merge.resolver must be builder or none, not '%s'"},
	{.key = "merge.resolve_attempts", .type = T_INT, CFG(merge.resolve_attempts), .def = "2",
	 .max = 100},
	{.key = "merge.verify", .type = T_BOOL, CFG(merge.verify), .def = "true"},
	{.key = "merge.message", .type = T_STR, CFG(merge.message),
	 .def = "Merge {work_order.id}: {work_order.title}", .check = check_message},
	{.key = "merge.gates", .type = T_STRV, CFG(merge.gates), .hint = " of gate names, e.g. [test]",
	 .check = remember},
	{.key = "merge.train_depth", .type = T_INT, CFG(merge.train_depth), .min = 1,
	 .max = SL_JOBS_MAX}, /* default merge.jobs, else queue.jobs: fill_late_defaults() */
	{.key = "merge.jobs", .type = T_INT, CFG(merge.jobs), .min = 1, .max = SL_JOBS_MAX},
	{.key = "merge.rerun_failed", .type = T_INT, CFG(merge.rerun_failed), .def = "1",
	 .max = 10},
	{.key = "merge.reuse_green", .type = T_BOOL, CFG(merge.reuse_green), .def = "true"},
	{.key = "merge.keep_ignored", .type = T_PATHS, CFG(merge.keep_ignored)},
	{.key = "merge.freeze", .type = T_HOOK, .read = read_freeze},
	{.key = "budget", .type = T_SECTION}, /* docs/budgets.md */
	{.key = "budget.day", .type = T_SECTION},
	{.key = "budget.day.usd", .type = T_USD, CFG(budget.day_usd), .def = "none"},
	{.key = "budget.month", .type = T_SECTION},
	{.key = "budget.month.usd", .type = T_USD, CFG(budget.month_usd), .def = "none"},
	{.key = "budget.run", .type = T_SECTION},
	{.key = "budget.run.usd", .type = T_USD, CFG(budget.run_usd), .def = "none"},
	{.key = "budget.run.minutes", .type = T_MIN, CFG(budget.run_minutes), .def = "none"},
	{.key = "budget.prices", .type = T_HOOK, .pair = price_pair},
	{.key = "watch", .type = T_SECTION}, /* docs/watch.md */
	{.key = "watch.gates", .type = T_HOOK, .pair = watch_gate_pair},
	{.key = "watch.every", .type = T_INT, CFG(watch.every), .def = "0", .max = 1000},
	{.key = "watch.revert_review", .type = T_ENUM, CFG(watch.revert_auto), .def = "person",
	 .words = "person|auto", .flags = F_TEXT,
	 .msg = "unknown watch.revert_review '%.80s'; use person (the default: a person "
	        "approves each revert) or auto (an exact revert is approved by sluice)"},
	{.key = "commit", .type = T_SECTION},
	{.key = "commit.name", .type = T_STR, CFG(commit.name), .check = check_identity},
	{.key = "commit.email", .type = T_STR, CFG(commit.email), .check = check_identity},
	{.key = "gc", .type = T_SECTION},
	{.key = "gc.keep_last", .type = T_INT, CFG(gc.keep_last), .def = "20", .max = 1000000},
	{.key = "gc.keep_failed", .type = T_INT, CFG(gc.keep_failed), .def = "5", .max = 1000000},
	{.key = "gc.keep_failed_for", .type = T_DUR, CFG(gc.keep_failed_ms), .def = "7d"},
	{.key = "notify", .type = T_SECTION},
	{.key = "notify.command", .type = T_ARGV, CFG(notify.command)},
	{.key = "notify.url", .type = T_STR, CFG(notify.url), .check = check_url},
	{.key = "notify.timeout", .type = T_DUR, CFG(notify.timeout_ms), .def = "10s"},
	{.key = "notify.retry_for", .type = T_DUR, CFG(notify.retry_for_ms), .def = "24h"},
	{.key = "notify.tries", .type = T_INT, CFG(notify.tries), .min = 1,
	 .max = 100}, /* deprecated: notify.retry_for decides; 0 when not given */
	{.key = "executor", .type = T_SECTION},
	{.key = "executor.kind", .type = T_ENUM, CFG(executor.kind), .def = "local",
	 .words = "local|slurm|kubernetes", .flags = F_TEXT | F_NOTE,
	 .msg = "'executor.kind' must be local, slurm or kubernetes, not '%.100s'"},
	{.key = "executor.remote", .type = T_WORD, CFG(executor.remote), .flags = F_NOTE},
	{.key = "executor.poll", .type = T_DUR, CFG(executor.poll_ms), .def = "2s"},
	{.key = "executor.workdir", .type = T_WORD, CFG(executor.workdir)},
	{.key = "executor.git", .type = T_WORD, CFG(executor.git)},
	{.key = "executor.slurm", .type = T_SECTION},
	{.key = "executor.slurm.partition", .type = T_WORD, CFG(executor.slurm.partition)},
	{.key = "executor.slurm.account", .type = T_WORD, CFG(executor.slurm.account)},
	{.key = "executor.slurm.qos", .type = T_WORD, CFG(executor.slurm.qos)},
	{.key = "executor.slurm.cpus", .type = T_INT, CFG(executor.slurm.cpus), .min = 1,
	 .max = 4096},
	{.key = "executor.slurm.memory", .type = T_WORD, CFG(executor.slurm.memory)},
	{.key = "executor.slurm.options", .type = T_STRV, CFG(executor.slurm.options),
	 .hint = " of sbatch options, one argument each, e.g. [--constraint=gpu]"},
	{.key = "executor.kubernetes", .type = T_SECTION},
	{.key = "executor.kubernetes.namespace", .type = T_WORD,
	 CFG(executor.kubernetes.namespace_)},
	{.key = "executor.kubernetes.context", .type = T_WORD, CFG(executor.kubernetes.context)},
	{.key = "executor.kubernetes.image", .type = T_WORD, CFG(executor.kubernetes.image)},
	{.key = "executor.kubernetes.cpu", .type = T_WORD, CFG(executor.kubernetes.cpu)},
	{.key = "executor.kubernetes.memory", .type = T_WORD, CFG(executor.kubernetes.memory)},
	{.key = "executor.kubernetes.service_account", .type = T_WORD,
	 CFG(executor.kubernetes.service_account)},
	{.key = "executor.kubernetes.git_secret", .type = T_WORD,
	 CFG(executor.kubernetes.git_secret)},
	{.key = "executor.kubernetes.kubectl", .type = T_WORD, CFG(executor.kubernetes.kubectl)},
	/* an entry of the list retry: (docs/config.md, Retry); sl_config_key() stops here */
	{.key = "retry.attempt", .type = T_INT, RETRY(n), .min = 1, .max = 1000, .flags = F_COND,
	 .cond = SL_RETRY_ATTEMPT},
	{.key = "retry.not", .type = T_STR, RETRY(gate), .read = read_not, .flags = F_COND,
	 .cond = SL_RETRY_NOT_GATE},
	{.key = "retry.exit", .type = T_INT, RETRY(n), .min = 1, .max = 1000, .flags = F_COND,
	 .cond = SL_RETRY_EXIT},
	{.key = "retry.validate", .type = T_ARGV, RETRY(validate), .read = read_validate,
	 .flags = F_COND, .cond = SL_RETRY_VALIDATE},
	{.key = "retry.with", .type = T_STRV, RETRY(with), .read = read_with},
	{.key = "retry.timeout", .type = T_DUR, RETRY(validate_timeout_ms), .read = read_timeout},
	{.key = "retry.builder", .type = T_ARGV, RETRY(builder)},
	{.key = "retry.agent", .type = T_STR, RETRY(agent), .check = check_retry_agent},
	{.key = "retry.session", .type = T_ENUM, RETRY(session), .words = "new|keep",
	 .min = SL_SESSION_NEW, .msg = "'session' in a retry entry must be 'new' or 'keep', not '%.100s'"},
	{.key = "retry.prompt", .type = T_STR, RETRY(prompt)},
	{.key = "retry.worktree", .type = T_ENUM, RETRY(worktree_reset), .words = "reset", .min = 1,
	 .msg = "'worktree' in a retry entry can only be 'reset'"},
};
#define NROWS (sizeof(rows) / sizeof(rows[0]))

/* ---- the walker --------------------------------------------------------- */

static const char *leaf(const char *key)
{
	const char *dot = strrchr(key, '.');

	return dot ? dot + 1 : key;
}

/* 1 when row is a key of section sec (named `name`, or any when NULL). */
static int row_in(const struct setting *row, const struct section *sec, const char *name)
{
	size_t n = strlen(sec->name);
	const char *rest = row->key;

	if (sec->named && (row->flags & F_TOP_ONLY))
		return 0;
	if (n && (strncmp(rest, sec->name, n) || rest[n] != '.'))
		return 0;
	rest += n ? n + 1 : 0;
	return !strchr(rest, '.') && (!name || !strcmp(rest, name));
}

static void *row_at(struct ctx *c, const struct setting *row)
{
	char *base = row->base == B_BUILDER ? (char *)cur_builder(c)
	             : row->base == B_GATE  ? (char *)c->gate
	             : row->base == B_RETRY ? (char *)c->rule
	                                    : (char *)c->cfg;

	return base + row->off;
}

static int read_value(struct ctx *c, const struct setting *row, yaml_node_t *v, void *at,
                      const char *key)
{
	switch (row->type) {
	case T_STR:
		if (get_str(c, v, at, key) != 0)
			return -1;
		return row->words && word_index(c, row, v, *(char **)at) < 0 ? -1 : 0;
	case T_WORD: return get_word(c, v, at, key);
	case T_INT: return get_int(c, v, at, row->min, row->max, key);
	case T_BOOL: return get_bool(c, v, at, key);
	case T_DUR: return get_duration(c, v, at, key);
	case T_SIZE: return get_size(c, v, at, key);
	case T_USD: return get_amount(c, v, at, key, "an amount of US dollars such as 40 or 2.50");
	case T_MIN: return get_amount(c, v, at, key, "a number of minutes such as 45 or 7.5");
	case T_ARGV: return get_argv(c, v, at, key);
	case T_PATHS: return get_paths(c, v, at, key);
	case T_STRV: return get_strv(c, v, at, key, row->hint);
	case T_ENUM: return get_enum(c, row, v, at);
	default: return -1;
	}
}

static void read_setting(struct ctx *c, const struct setting *row, yaml_node_t *v)
{
	void *at = row_at(c, row);
	const char *key = row->base == B_BUILDER ? builder_key(c, leaf(row->key)) : row->key;

	if (row->flags & F_NOTE)
		remember(c, row, v, at);
	if (row->flags & F_COND)
		c->conditions++, c->rule->kind = (enum sl_retry_kind)row->cond;
	if (row->type == T_SECTION)
		walk_section(c, v, &(struct section){row->key, row->key, row->key, 0});
	else if (row->read)
		row->read(c, row, v, at);
	else if (row->pair)
		each_pair(c, v, key, row->pair);
	else if (read_value(c, row, v, at, key) == 0 && row->check)
		row->check(c, row, v, at);
}

static void table_pair(struct ctx *c, const char *key, yaml_node_t *k, yaml_node_t *v)
{
	char known[256];
	size_t len = 0;

	for (size_t i = 0; i < NROWS; i++)
		if (row_in(&rows[i], c->sec, key)) {
			read_setting(c, &rows[i], v);
			return;
		}
	known[0] = '\0';
	for (size_t i = 0; i < NROWS && len < sizeof(known); i++)
		if (row_in(&rows[i], c->sec, NULL))
			len += (size_t)snprintf(known + len, sizeof(known) - len, "%s%s",
			                        len ? ", " : "", leaf(rows[i].key));
	unknown(c, k, c->sec->label, known);
}

static void walk_section(struct ctx *c, yaml_node_t *v, const struct section *sec)
{
	const struct section *outer = c->sec;

	c->sec = sec;
	each_pair(c, v, sec->what, table_pair);
	c->sec = outer;
}

/* The defaults of the rows on `base`, read as if config.yaml said them. */
static void apply_defaults(struct ctx *c, enum set_base base)
{
	yaml_node_t n;
	char text[64];

	for (size_t i = 0; i < NROWS; i++) {
		if (rows[i].base != base || !rows[i].def)
			continue;
		snprintf(text, sizeof(text), "%s", rows[i].def);
		memset(&n, 0, sizeof(n));
		n.type = YAML_SCALAR_NODE;
		n.data.scalar.value = (yaml_char_t *)text;
		n.data.scalar.length = strlen(text);
		n.data.scalar.style = YAML_PLAIN_SCALAR_STYLE;
		read_setting(c, &rows[i], &n);
	}
}

int sl_config_key(size_t i, struct sl_config_key *out)
{
	static const char *const types[] = {"section", "text", "word", "number", "bool",
	                                    "duration", "size", "dollars", "minutes", "argv", "paths", "list",
	                                    "choice", "custom"};

	if (i >= NROWS || rows[i].base == B_RETRY)
		return -1;
	out->key = rows[i].key;
	out->type = types[rows[i].type];
	out->def = rows[i].def;
	out->min = rows[i].min;
	out->max = rows[i].max;
	return 0;
}

/* Free what the rows on `base` hold at base `p`. */
static void free_rows(void *p, enum set_base base)
{
	for (size_t i = 0; i < NROWS; i++) {
		void *at = (char *)p + rows[i].off;
		if (rows[i].base != base || rows[i].type == T_SECTION || rows[i].type == T_HOOK)
			continue;
		if (rows[i].type == T_STR || rows[i].type == T_WORD)
			free(*(char **)at);
		else if (rows[i].type == T_ARGV || rows[i].type == T_PATHS || rows[i].type == T_STRV)
			sl_strv_free(*(sl_strv *)at);
	}
}

static void free_gates(struct sl_gate *g, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(g[i].name);
		free_rows(&g[i], B_GATE);
	}
	free(g);
}

/* Every name of merge.gates is a configured gate. */
static void merge_gates_check(struct ctx *c)
{
	struct sl_config *cfg = c->cfg;

	for (size_t i = 0; cfg->merge.gates && cfg->merge.gates[i]; i++)
		if (!gate_known(cfg, cfg->merge.gates[i]))
			problem(c, c->merge_gates, "merge.gates names '%.200s', which is no configured "
			        "gate; define it under 'gates' or fix the name", cfg->merge.gates[i]);
}

/* builder.agent names a known agent, and is the only way builder: says what builds. */
static void builder_agent_check(struct ctx *c)
{
	const struct sl_builder *b = &c->cfg->builder;

	if (!b->agent)
		return;
	check_agent(c, c->builder_agent, b->agent, "builder.agent");
	if (b->command || b->preset)
		problem(c, c->builder_agent, "builder has both 'agent' and '%s'; keep one",
		        b->command ? "command" : "preset");
}

static void cross_check(struct ctx *c)
{
	struct sl_config *cfg = c->cfg;

	merge_gates_check(c);
	executor_check(c);

	if (cfg->builder.command && cfg->builder.preset)
		problem(c, c->root, "builder has both 'command' and 'preset'; keep one");
	builder_agent_check(c);
	if (cfg->reviewer.mode == SL_REVIEWER_HTTP && !cfg->reviewer.url)
		problem(c, c->root,
		        "reviewer.mode is http but reviewer.url is not set; add the "
		        "reviewer's URL");
	if (cfg->reviewer.mode == SL_REVIEWER_COMMAND && !cfg->reviewer.command)
		problem(c, c->root,
		        "reviewer.mode is command but reviewer.command is not set; "
		        "add the program to run");
	if (cfg->reviewer.mode == SL_REVIEWER_HTTP &&
	    cfg->reviewer.protocol == SL_PROTOCOL_OPENAI && !cfg->reviewer.model)
		problem(c, c->root,
		        "reviewer.protocol is openai but reviewer.model is not set; "
		        "name the model to ask");
}

/* ---- defaults, load, check --------------------------------------------- */

static int set_defaults(struct sl_config *cfg)
{
	struct ctx c = {.path = "(defaults)", .cfg = cfg};

	memset(cfg, 0, sizeof(*cfg));
	apply_defaults(&c, B_CONFIG);
	apply_defaults(&c, B_BUILDER); /* builder:'s, c.bld being NULL */
	return c.count ? -1 : 0;
}

static int fill_late_defaults(struct sl_config *cfg)
{
	const char *name = cfg->reviewer.mode == SL_REVIEWER_HTTP      ? "sluice-http-reviewer"
	                   : cfg->reviewer.mode == SL_REVIEWER_COMMAND ? "sluice-command-reviewer"
	                                                               : NULL;

	if (!cfg->reviewer.name && name && !(cfg->reviewer.name = strdup(name)))
		return -1;
	if (!cfg->merge.train_depth)
		cfg->merge.train_depth = cfg->merge.jobs ? cfg->merge.jobs : cfg->queue.jobs;
	return 0;
}

int sl_config_default(struct sl_config **out, struct sl_err *err)
{
	struct sl_config *cfg = calloc(1, sizeof(*cfg));

	*out = NULL;
	if (!cfg || set_defaults(cfg) < 0) {
		sl_config_free(cfg);
		return sl_err_set(err, SL_ERROR, "out of memory");
	}
	*out = cfg;
	return 0;
}

static void yaml_problem(struct ctx *c, yaml_parser_t *p)
{
	yaml_mark_t m = p->problem ? p->problem_mark : p->context_mark;

	c->count++;
	sl_buf_addf(c->problems, "%s:%zu:%zu: YAML syntax error: %s%s%s; fix the file\n", c->path,
	            m.line + 1, m.column + 1, p->problem ? p->problem : "cannot parse",
	            p->context ? " " : "", p->context ? p->context : "");
}

/* Parse data into a fresh config, collecting problems. Returns the count or -1 (OOM). */
static int walk(struct sl_config *cfg, const char *path, const char *data, size_t len,
                struct sl_buf *problems)
{
	yaml_parser_t parser;
	yaml_document_t doc;
	struct ctx c = {.path = path, .doc = &doc, .problems = problems, .cfg = cfg};
	yaml_node_t *root;

	if (!yaml_parser_initialize(&parser))
		return -1;
	yaml_parser_set_input_string(&parser, (const unsigned char *)data, len);
	if (!yaml_parser_load(&parser, &doc)) {
		yaml_problem(&c, &parser);
		yaml_parser_delete(&parser);
		return c.count;
	}
	c.root = root = yaml_document_get_root_node(&doc);
	if (root && !is_null(root))
		walk_section(&c, root, &(struct section){"", "the configuration", NULL, 0});
	if (c.retry_node)
		retry_list(&c, c.retry_node);
	retry_check(&c, c.retry_node ? c.retry_node : root);
	cross_check(&c);
	if (fill_late_defaults(cfg) < 0)
		oom(&c);
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	return c.count;
}

static int read_config(struct sl_buf *data, const char *path, struct sl_err *err)
{
	int error = sl_read_file(data, path, CONFIG_MAX_BYTES, err);

	if (error == SL_ETOOBIG)
		sl_err_set(err, error, "'%s' is over 1 MiB; a config is a few lines", path);
	return error;
}

int sl_config_load(struct sl_config **out, const char *path, struct sl_err *err)
{
	struct sl_buf data = SL_BUF_INIT, problems = SL_BUF_INIT;
	int error, n;

	*out = NULL;
	if ((error = read_config(&data, path, err)) == 0 &&
	    (n = sl_config_parse(out, path, data.ptr ? data.ptr : "", data.len, &problems, err)))
		error = n < 0 ? n : sl_err_set(err, SL_EINVALID, "%.*s",
		                               (int)strcspn(sl_buf_cstr(&problems), "\n"),
		                               sl_buf_cstr(&problems));
	sl_buf_release(&data);
	sl_buf_release(&problems);
	return error;
}

int sl_config_check(const char *path, struct sl_buf *problems, struct sl_err *err)
{
	struct sl_buf data = SL_BUF_INIT;
	int n = read_config(&data, path, err);

	if (n == 0)
		n = sl_config_parse(NULL, path, data.ptr ? data.ptr : "", data.len, problems, err);
	sl_buf_release(&data);
	return n;
}

int sl_config_parse(struct sl_config **out, const char *name, const char *data, size_t len,
                    struct sl_buf *problems, struct sl_err *err)
{
	struct sl_config *cfg = calloc(1, sizeof(*cfg));
	int n;

	if (out)
		*out = NULL;
	if (!cfg || set_defaults(cfg) < 0 || !(cfg->path = strdup(name))) {
		n = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	if (len > CONFIG_MAX_BYTES) {
		n = sl_err_set(err, SL_ETOOBIG, "'%s' is over 1 MiB; a config is a few lines", name);
		goto out;
	}
	if ((n = walk(cfg, name, data, len, problems)) < 0)
		n = sl_err_set(err, SL_ERROR, "out of memory");
	else if (n == 0 && out) {
		*out = cfg;
		cfg = NULL;
	}
out:
	sl_config_free(cfg);
	return n;
}

void sl_config_free(struct sl_config *cfg)
{
	size_t i;

	if (!cfg)
		return;
	free(cfg->path);
	free_rows(cfg, B_CONFIG);
	free_rows(&cfg->builder, B_BUILDER);
	for (i = 0; i < cfg->nbuilders; i++) {
		free(cfg->builders[i].name);
		free_rows(&cfg->builders[i], B_BUILDER);
	}
	free(cfg->builders);
	free_gates(cfg->gates, cfg->ngates);
	free_gates(cfg->watch.gates, cfg->watch.ngates);
	sl_strv_free(cfg->read_only_gates);
	for (i = 0; i < cfg->nretry; i++)
		free_rows(&cfg->retry[i], B_RETRY);
	free(cfg->retry);
	freeze_free(cfg);
	prices_free(cfg);
	free(cfg);
}
