#ifndef SL_CORE_CONFIG_INT_H
#define SL_CORE_CONFIG_INT_H
/*
 * Shared by the parts of the config's reader only (core/config.c and
 * core/config_*.c; prefix config__): the walk's state, the table's row and
 * section, and what the parts call of each other.
 */
#include "core/config.h"
#include "core/buf.h"
#include "core/template.h"

#include <stddef.h>
#include <stdint.h>
#include <yaml.h>

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
	yaml_node_t *lanes;       /* merge.lanes, whose gates are checked after the gates */
	yaml_node_t *lane_gates[SL_LANES_MAX]; /* each lane's gates: list, for its problems */
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

void config__walk_section(struct ctx *c, yaml_node_t *v, const struct section *sec);
void config__apply_defaults(struct ctx *c, enum set_base base);

void config__problem(struct ctx *c, const yaml_node_t *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* config_read.c: the readers of a value, the walk of a mapping, the problems */
int config__amount_parse(const char *s, double *out);
void config__each_pair(struct ctx *c, yaml_node_t *n, const char *what, pair_fn fn);
int config__get_amount(struct ctx *c, const yaml_node_t *n, double *out, const char *key,
		      const char *what);
int config__get_argv(struct ctx *c, const yaml_node_t *n, sl_strv *out, const char *key);
int config__get_bool(struct ctx *c, const yaml_node_t *n, int *out, const char *key);
int config__get_duration(struct ctx *c, const yaml_node_t *n, int64_t *out, const char *key);
int config__get_enum(struct ctx *c, const struct setting *row, yaml_node_t *v, int *out);
int config__get_int(struct ctx *c, const yaml_node_t *n, int *out, int min, int max,
		    const char *key);
int config__get_paths(struct ctx *c, const yaml_node_t *n, sl_strv *out, const char *key);
int config__get_size(struct ctx *c, const yaml_node_t *n, size_t *out, const char *key);
int config__get_str(struct ctx *c, const yaml_node_t *n, char **out, const char *key);
int config__get_strv(struct ctx *c, const yaml_node_t *n, sl_strv *out, const char *key,
                    const char *hint);
int config__get_word(struct ctx *c, yaml_node_t *v, char **out, const char *key);
int config__is_null(const yaml_node_t *n);
void config__oom(struct ctx *c);
const char *config__scalar(const yaml_node_t *n);
void config__unknown(struct ctx *c, yaml_node_t *k, const char *section, const char *known);
int config__word_index(struct ctx *c, const struct setting *row, yaml_node_t *v, const char *s);

/* config_builders.c: builder:, builders:, gates: and watch.gates: */
const char *config__builder_key(struct ctx *c, const char *key);
void config__check_agent(struct ctx *c, const yaml_node_t *n, const char *name, const char *what);
struct sl_builder *config__cur_builder(struct ctx *c);
void config__env_pair(struct ctx *c, const char *key, yaml_node_t *k, yaml_node_t *v);
int config__gate_known(const struct sl_config *cfg, const char *name);
int config__gate_name_ok(const char *s);
void config__gate_pair(struct ctx *c, const char *key, yaml_node_t *k, yaml_node_t *v);
void config__read_builders(struct ctx *c, const struct setting *row, yaml_node_t *v, void *at);
void config__read_gate_worktree(struct ctx *c, const struct setting *row, yaml_node_t *v, void *at);
void config__watch_gate_pair(struct ctx *c, const char *key, yaml_node_t *k, yaml_node_t *v);

/* config_retry.c: the entries of retry: */
void config__check_retry_agent(struct ctx *c, const struct setting *row, yaml_node_t *v, void *at);
void config__check_template(struct ctx *c, const yaml_node_t *n, const char *tmpl,
                           sl_template_known fn, void *data, const char *where);
void config__read_not(struct ctx *c, const struct setting *row, yaml_node_t *v, void *at);
void config__read_timeout(struct ctx *c, const struct setting *row, yaml_node_t *v, void *at);
void config__read_validate(struct ctx *c, const struct setting *row, yaml_node_t *v, void *at);
void config__read_with(struct ctx *c, const struct setting *row, yaml_node_t *v, void *at);
void config__retry_check(struct ctx *c, yaml_node_t *n);
void config__retry_list(struct ctx *c, yaml_node_t *n);

/* config_freeze.c: merge.freeze */
void config__freeze_free(struct sl_config *cfg);
void config__read_freeze(struct ctx *c, const struct setting *row, yaml_node_t *v, void *at);

/* config_lanes.c: merge.lanes */
void config__lanes_free(struct sl_config *cfg);
void config__read_lanes(struct ctx *c, const struct setting *row, yaml_node_t *v, void *at);
void config__lanes_check(struct ctx *c);

/* config_prices.c: budget.prices */
void config__price_pair(struct ctx *c, const char *model, yaml_node_t *k, yaml_node_t *v);
void config__prices_free(struct sl_config *cfg);

#endif
