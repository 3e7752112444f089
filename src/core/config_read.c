/*
 * The readers of config.yaml's values (a text, a number, a duration, a
 * size, a list, ...), the walk of a mapping and the problems they report
 * as "<path>:<line>:<col>: <what>; <what to do>" (core/config.c).
 */
#include "core/config_int.h"
#include "core/fs.h"
#include "core/similar.h"
#include "core/time.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void config__problem(struct ctx *c, const yaml_node_t *n, const char *fmt, ...)
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

void config__oom(struct ctx *c)
{
	config__problem(c, NULL, "out of memory");
}

const char *config__scalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

int config__is_null(const yaml_node_t *n)
{
	const char *s = config__scalar(n);

	return s && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
	       (!*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") ||
	        !strcmp(s, "NULL"));
}

int config__get_str(struct ctx *c, const yaml_node_t *n, char **out, const char *key)
{
	const char *s = config__scalar(n);

	if (!s || config__is_null(n)) {
		config__problem(c, n, "'%s' must be a text value", key);
		return -1;
	}
	free(*out);
	if (!(*out = strdup(s))) {
		config__oom(c);
		return -1;
	}
	return 0;
}

int config__get_int(struct ctx *c, const yaml_node_t *n, int *out, int min, int max,
		    const char *key)
{
	const char *s = config__scalar(n);
	char *end;
	long v;

	errno = 0;
	if (!s || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE || !*s ||
	    (v = strtol(s, &end, 10), errno || *end) || v < min || v > max) {
		config__problem(c, n, "'%s' must be a whole number from %d to %d, not '%s'", key, min, max,
		        s ? s : "(a list or mapping)");
		return -1;
	}
	*out = (int)v;
	return 0;
}

int config__get_bool(struct ctx *c, const yaml_node_t *n, int *out, const char *key)
{
	static const char *const yes[] = {"true", "True", "TRUE", "yes", "Yes", "on", "On", NULL};
	static const char *const no[] = {"false", "False", "FALSE", "no", "No", "off", "Off", NULL};
	const char *s = config__scalar(n);
	int i;

	for (i = 0; s && yes[i]; i++)
		if (!strcmp(s, yes[i]))
			return *out = 1, 0;
	for (i = 0; s && no[i]; i++)
		if (!strcmp(s, no[i]))
			return *out = 0, 0;
	config__problem(c, n, "'%s' must be true or false (or on/off), not '%s'", key,
	        s ? s : "(a list or mapping)");
	return -1;
}

int config__get_duration(struct ctx *c, const yaml_node_t *n, int64_t *out, const char *key)
{
	struct sl_err e = SL_ERR_INIT;
	const char *s = config__scalar(n);

	if (!s || sl_duration_parse(out, s, &e) != 0) {
		config__problem(c, n, "'%s': %s", key,
		        s ? e.msg : "must be a duration such as 90s, 30m or 2h");
		return -1;
	}
	return 0;
}

/*
 * An amount: plain digits with at most one point (40, 2.50), at most 1e9;
 * or none, no limit (-1). -1 when it is neither.
 */
int config__amount_parse(const char *s, double *out)
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
int config__get_amount(struct ctx *c, const yaml_node_t *n, double *out, const char *key,
		      const char *what)
{
	const char *s = config__scalar(n);

	if (!s || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE || config__amount_parse(s, out) != 0) {
		config__problem(c, n, "'%s' must be %s (at most 1000000000) or none, not '%s'", key, what,
		        s ? s : "(a list or mapping)");
		return -1;
	}
	return 0;
}

/* A size in bytes: 1048576, 512KiB, 10MiB, 1GiB. */
int config__get_size(struct ctx *c, const yaml_node_t *n, size_t *out, const char *key)
{
	const char *s = config__scalar(n);
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
	config__problem(c, n, "'%s' must be a size such as 1048576, 512KiB or 10MiB, not '%s'", key,
	        s ? s : "(a list or mapping)");
	return -1;
}

/* The index of s in row->words ("a|b|c"), or -1 (a problem: row->msg). */
int config__word_index(struct ctx *c, const struct setting *row, yaml_node_t *v, const char *s)
{
	const char *w = row->words;
	size_t len;

	for (int i = 0; s && *w; i++, w += len + (w[len] == '|')) {
		len = strcspn(w, "|");
		if (strlen(s) == len && !strncmp(s, w, len))
			return i;
	}
	config__problem(c, v, row->msg, s ? s : "(a list or mapping)");
	return -1;
}

/* T_ENUM: a word of row->words, its index plus row->min stored; F_TEXT: a text value first. */
int config__get_enum(struct ctx *c, const struct setting *row, yaml_node_t *v, int *out)
{
	char *text = NULL;
	int i;

	if ((row->flags & F_TEXT) && config__get_str(c, v, &text, row->key) != 0)
		return -1;
	free(text);
	if ((i = config__word_index(c, row, v, config__scalar(v))) < 0)
		return -1;
	*out = row->min + i;
	return 0;
}

/* A list of text items (an argv, a list of paths). */
int config__get_strv(struct ctx *c, const yaml_node_t *n, sl_strv *out, const char *key,
                    const char *hint)
{
	yaml_node_item_t *it;
	sl_strv v = NULL;

	if (!n || n->type != YAML_SEQUENCE_NODE) {
		config__problem(c, n, "'%s' must be a list%s", key, hint ? hint : "");
		return -1;
	}
	for (it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
		yaml_node_t *item = yaml_document_get_node(c->doc, *it);
		const char *s = config__scalar(item);
		if (!s || config__is_null(item)) {
			config__problem(c, item, "each entry of '%s' must be a text value", key);
			sl_strv_free(v);
			return -1;
		}
		if (sl_strv_push(&v, s) < 0) {
			config__oom(c);
			sl_strv_free(v);
			return -1;
		}
	}
	if (!v && !(v = calloc(1, sizeof(*v)))) {
		config__oom(c);
		return -1;
	}
	sl_strv_free(*out);
	*out = v;
	return 0;
}

int config__get_argv(struct ctx *c, const yaml_node_t *n, sl_strv *out, const char *key)
{
	if (config__scalar(n) && !config__is_null(n)) {
		config__problem(c, n,
		        "'%s' must be a list (an argv), e.g. [make, test]; to use a shell write "
		        "[sh, -c, '...']",
		        key);
		return -1;
	}
	if (config__get_strv(c, n, out, key, " (an argv), e.g. [make, test]") < 0)
		return -1;
	if (!(*out)[0]) {
		config__problem(c, n, "'%s' is an empty list; give the program and its arguments", key);
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

int config__get_paths(struct ctx *c, const yaml_node_t *n, sl_strv *out, const char *key)
{
	if (config__get_strv(c, n, out, key, " of paths relative to the repository root") < 0)
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
			config__problem(c, n, "'%s' entry '%s' %s", key, p, why);
			return -1;
		}
	}
	return 0;
}

/* Iterate the pairs of a mapping; a non-mapping is reported. */

void config__each_pair(struct ctx *c, yaml_node_t *n, const char *what, pair_fn fn)
{
	yaml_node_pair_t *p;

	if (!n || n->type != YAML_MAPPING_NODE) {
		if (!config__is_null(n))
			config__problem(c, n, "'%s' must be a mapping of keys", what);
		return;
	}
	for (p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(c->doc, p->key);
		yaml_node_t *v = yaml_document_get_node(c->doc, p->value);
		if (!config__scalar(k)) {
			config__problem(c, k, "keys of '%s' must be plain words", what);
			continue;
		}
		fn(c, config__scalar(k), k, v);
	}
}

void config__unknown(struct ctx *c, yaml_node_t *k, const char *section, const char *known)
{
	const char *in = section ? " in " : "", *name = config__scalar(k);
	char like[64];

	if (sl_similar(name, known, like, sizeof(like)))
		config__problem(c, k, "unknown key '%s'%s%s; did you mean '%s'? (known keys: %s)",
				name, in, section ? section : "", like, known);
	else
		config__problem(c, k, "unknown key '%s'%s%s; known keys: %s", name, in,
				section ? section : "", known);
}

/* A value the engine's CLI or the job's shell gets as one word: no control character, no leading '-'. */
int config__get_word(struct ctx *c, yaml_node_t *v, char **out, const char *key)
{
	if (config__get_str(c, v, out, key) != 0)
		return -1;
	for (const unsigned char *p = (const unsigned char *)*out; *p; p++)
		if (*p < 0x20 || *p == 0x7f) {
			config__problem(c, v, "'%s' must be one line of text without control characters", key);
			return -1;
		}
	if (!**out || **out == '-') {
		config__problem(c, v, "'%s' must not be empty or start with '-' (it is given to the "
		        "engine's CLI as a value)", key);
		return -1;
	}
	return 0;
}
