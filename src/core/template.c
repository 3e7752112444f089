/*
 * Prompt templates (template.h): one scanner walks the text and hands each
 * piece to a callback, either literal text or a variable name; rendering and
 * checking are two callbacks over the same scan.
 */
#include "core/template.h"

#include <stdio.h>
#include <string.h>

#define TMPL_NAME_MAX 256

/* Called for literal text (name == NULL) or a variable (text == NULL). */
typedef int (*piece_fn)(const char *text, size_t len, const char *name, void *ctx);

static int is_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '.' || c == '-';
}

/* Length of a "{name}" at s (s[0] == '{'), or 0 when it is not one. */
static size_t var_len(const char *s)
{
	size_t n = 1;

	while (is_name_char(s[n]))
		n++;
	if (n == 1 || s[n] != '}' || n - 1 >= TMPL_NAME_MAX)
		return 0;
	return n + 1;
}

static int scan(const char *t, piece_fn fn, void *ctx)
{
	const char *lit = t;
	int error;

	while (*t) {
		size_t vl;
		char name[TMPL_NAME_MAX];

		if ((t[0] == '{' && t[1] == '{') || (t[0] == '}' && t[1] == '}')) {
			if ((error = fn(lit, (size_t)(t - lit) + 1, NULL, ctx)) < 0)
				return error;
			t += 2;
			lit = t;
			continue;
		}
		if (t[0] != '{' || !(vl = var_len(t))) {
			t++;
			continue;
		}
		if ((error = fn(lit, (size_t)(t - lit), NULL, ctx)) < 0)
			return error;
		memcpy(name, t + 1, vl - 2);
		name[vl - 2] = '\0';
		if ((error = fn(NULL, 0, name, ctx)) < 0)
			return error;
		t += vl;
		lit = t;
	}
	return fn(lit, (size_t)(t - lit), NULL, ctx);
}

int sl_template_check_braces(const char *tmpl, const char *where, struct sl_err *err)
{
	const char *t = tmpl;
	size_t vl, n;

	while (*t) {
		if ((t[0] == '{' && t[1] == '{') || (t[0] == '}' && t[1] == '}')) {
			t += 2;
			continue;
		}
		if (t[0] == '{' && (vl = var_len(t)) != 0) {
			t += vl;
			continue;
		}
		if (t[0] == '{') {
			for (n = 1; is_name_char(t[n]); n++)
				;
			if (n > 1 && !t[n])
				return sl_err_set(err, SL_EINVALID,
						  "unterminated variable '%.*s' in %s; close it with '}'",
						  (int)(n > 80 ? 80 : n), t, where);
		}
		if (t[0] == '{' || t[0] == '}')
			return sl_err_set(err, SL_EINVALID,
					  "'%c' at column %zu of %s is not part of a variable such as "
					  "'{work_order.id}'; write '%c%c' for a literal brace",
					  t[0], (size_t)(t - tmpl) + 1, where, t[0], t[0]);
		t++;
	}
	return 0;
}

struct render_ctx {
	struct sl_buf *out;
	sl_template_lookup lookup;
	void *data;
	struct sl_err *err;
};

static int render_piece(const char *text, size_t len, const char *name, void *c)
{
	struct render_ctx *r = c;
	const char *val;
	int error;

	if (!name)
		val = text;
	else if (!(val = r->lookup(name, r->data)))
		return sl_err_set(r->err, SL_EINVALID, "unknown variable '{%s}' in template; use a "
				  "known variable or write '{{' for a literal brace", name);
	else
		len = strlen(val);
	if ((error = sl_buf_add(r->out, val, len)) < 0)
		return sl_err_set(r->err, error, "rendered template is too large (over %zu bytes)",
				  r->out->max ? r->out->max : SL_BUF_DEFAULT_MAX);
	return 0;
}

int sl_template_render(struct sl_buf *out, const char *tmpl, sl_template_lookup lookup, void *data,
		       struct sl_err *err)
{
	struct render_ctx r = { out, lookup, data, err };

	return scan(tmpl, render_piece, &r);
}

struct check_ctx {
	sl_template_known is_known;
	void *data;
	const char *where;
	struct sl_err *err;
};

/*
 * The known variables, found by asking is_known about sluice's own names.
 * Gate names come from data only for the prompt vocabulary, whose data is
 * the gate names by contract (sl_template_prompt_var_known).
 */
static void known_list(char *out, size_t n, const struct check_ctx *c)
{
	static const char *const probes[][2] = {
		{ "work_order.id", "{work_order.<field>}" }, { "error", "{error}" },
		{ "diff", "{diff}" }, { "attempt", "{attempt}" },
		{ "review.comments", "{review.comments}" }, { "run.id", "{run.id}" },
		{ "run.short", "{run.short}" }, { "run.branch", "{run.branch}" },
		{ "reviewer", "{reviewer}" },
	};
	const char *const *gates = c->data;
	char name[TMPL_NAME_MAX];
	size_t len = 0;

	out[0] = '\0';
	for (size_t i = 0; i < sizeof(probes) / sizeof(*probes) && len < n; i++)
		if (c->is_known(probes[i][0], c->data))
			len += (size_t)snprintf(out + len, n - len, "%s%s", len ? ", " : "",
						probes[i][1]);
	for (; c->is_known("error", c->data) && gates && *gates && len < n; gates++) {
		/* a longer name is no variable ({...} names are under TMPL_NAME_MAX) */
		if (snprintf(name, sizeof(name), "gate.%s.output", *gates) < (int)sizeof(name) &&
		    c->is_known(name, c->data))
			len += (size_t)snprintf(out + len, n - len, ", {gate.%s.output}, "
						"{gate.%s.exit}", *gates, *gates);
	}
	if (!len)
		snprintf(out, n, "none");
}

static int check_piece(const char *text, size_t len, const char *name, void *ctx)
{
	struct check_ctx *c = ctx;
	char known[512];

	if (!name || c->is_known(name, c->data))
		return 0;
	known_list(known, sizeof(known), c);
	return sl_err_set(c->err, SL_EINVALID, "unknown variable '{%s}' in %s; known variables: %s",
			  name, c->where, known);
}

int sl_template_check(const char *tmpl, sl_template_known is_known, void *data, const char *where,
		      struct sl_err *err)
{
	struct check_ctx c = { is_known, data, where ? where : "template", err };

	return scan(tmpl, check_piece, &c);
}

static int gate_known(const char *rest, const char *const *gates)
{
	const char *dot = strrchr(rest, '.');
	size_t n;

	if (!dot || (strcmp(dot, ".output") != 0 && strcmp(dot, ".exit") != 0))
		return 0;
	n = (size_t)(dot - rest);
	if (!n)
		return 0;
	if (!gates)
		return 1; /* no list given: any gate name */
	for (; *gates; gates++)
		if (strlen(*gates) == n && strncmp(*gates, rest, n) == 0)
			return 1;
	return 0;
}

int sl_template_prompt_var_known(const char *name, void *gate_names)
{
	static const char *const fixed[] = { "error", "diff", "attempt", "review.comments", NULL };

	for (const char *const *f = fixed; *f; f++)
		if (strcmp(name, *f) == 0)
			return 1;
	if (strncmp(name, "work_order.", 11) == 0)
		return name[11] != '\0';
	if (strncmp(name, "gate.", 5) == 0)
		return gate_known(name + 5, gate_names);
	return 0;
}
