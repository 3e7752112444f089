/* The bearer token: where it comes from, and keeping it out of everything we write. */
#include "reviewer/reviewer.h"
#include "reviewer/reviewer_int.h"
#include "core/proc.h"

#include <stdlib.h>
#include <string.h>

/* The token taken out of the environment by reviewer_token_capture(), or handed over. */
static char *captured_name, *captured_token;

void reviewer_token_capture(const struct sl_config *cfg)
{
	const char *name = cfg->reviewer.token_env;
	char *v;

	if (!name || !*name)
		return;
	/*
	 * Nothing this process starts (git, builders, gates, hooks) inherits it,
	 * and its bytes leave /proc/<pid>/environ (core/proc.h).
	 */
	v = sl_env_take(name);
	if (captured_name) { /* handed over by the parent tick, or taken before */
		sl_secret_free(v);
		return;
	}
	captured_name = strdup(name);
	captured_token = v;
	if (v)
		sl_proc_protect();
}

int reviewer_token_handoff(int *fd, struct sl_err *err)
{
	size_t n, v;
	char *s;
	int error;

	*fd = -1;
	if (!captured_name || !captured_token)
		return 0;
	n = strlen(captured_name);
	v = strlen(captured_token);
	if (!(s = malloc(n + v + 2)))
		return sl_err_set(err, SL_ERROR, "out of memory");
	memcpy(s, captured_name, n);
	s[n] = '=';
	memcpy(s + n + 1, captured_token, v + 1);
	error = sl_secret_pipe(s, n + v + 1, fd, err);
	sl_secret_free(s);
	if (error == SL_EINVALID) { /* too long: say which, and that it is the token */
		sl_err_clear(err);
		error = sl_err_set(err, SL_EINVALID, "the reviewer token in '%s' "
				   "(reviewer.token_env) is %zu bytes, too long to hand to a "
				   "worker; check the variable", captured_name, v);
	}
	return error;
}

int reviewer_token_receive(int fd, struct sl_err *err)
{
	char *s = NULL, *eq;
	int error;

	if ((error = sl_secret_read(fd, &s, err)) < 0)
		return error;
	if (!(eq = strchr(s, '=')) || eq == s || captured_name) {
		sl_secret_free(s);
		return eq && eq != s ? 0 : sl_err_set(err, SL_EINVALID, "no token handed over");
	}
	*eq = '\0';
	captured_name = strdup(s);
	captured_token = strdup(eq + 1);
	sl_secret_free(s);
	sl_proc_protect();
	return captured_name && captured_token ? 0 : sl_err_set(err, SL_ERROR, "out of memory");
}

static const char *token_value(const char *name)
{
	if (captured_name && !strcmp(captured_name, name))
		return captured_token;
	return getenv(name);
}

int reviewer__token(const char **out, const struct sl_config *cfg, struct sl_err *err)
{
	const char *name = cfg->reviewer.token_env, *v;
	const unsigned char *p;

	*out = NULL;
	if (!name || !*name)
		return 0;
	v = token_value(name);
	if (!v || !*v)
		return sl_err_set(
		        err, SL_EINVALID,
		        "reviewer token variable '%s' (reviewer.token_env) is not set; "
		        "export it in the environment of sluice or remove reviewer.token_env",
		        name);
	for (p = (const unsigned char *)v; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			return sl_err_set(err, SL_EINVALID,
			                  "reviewer token in '%s' holds a control character; fix "
			                  "the variable",
			                  name);
	*out = v;
	return 0;
}

static int redact_exact(struct sl_buf *b, const char *token);

/* The token as a JSON string would carry it: '/' may be "\/", '"' and '\\' escaped. */
static char *json_escaped(const char *token)
{
	struct sl_buf e = SL_BUF_INIT;
	const char *p;

	for (p = token; *p; p++) {
		if ((*p == '/' || *p == '"' || *p == '\\') && sl_buf_add(&e, "\\", 1))
			break;
		if (sl_buf_add(&e, p, 1))
			break;
	}
	return sl_buf_detach(&e);
}

/*
 * Redact the token and its JSON-escaped form: a reply may echo it either
 * way, and a message quoting the raw reply would otherwise carry it.
 */
int reviewer__redact_buf(struct sl_buf *b, const char *token)
{
	char *esc;
	int error;

	if ((error = redact_exact(b, token)) != 0 || !token || !*token)
		return error;
	if (!(esc = json_escaped(token)))
		return SL_ERROR;
	if (strcmp(esc, token))
		error = redact_exact(b, esc);
	free(esc);
	return error;
}

static int redact_exact(struct sl_buf *b, const char *token)
{
	struct sl_buf o;
	size_t tlen = token ? strlen(token) : 0;
	const char *p, *hit, *end;
	int error = 0;

	if (!tlen || !b->len || !memmem(b->ptr, b->len, token, tlen))
		return 0;
	sl_buf_init(&o, b->max);
	p = b->ptr;
	end = b->ptr + b->len;
	while (!error && (hit = memmem(p, (size_t)(end - p), token, tlen))) {
		error = sl_buf_add(&o, p, (size_t)(hit - p));
		if (!error)
			error = sl_buf_puts(&o, REVIEWER_REDACTED);
		p = hit + tlen;
	}
	if (!error)
		error = sl_buf_add(&o, p, (size_t)(end - p));
	if (error) {
		/* Fail closed: rather lose the text than keep the token. */
		sl_buf_release(&o);
		sl_buf_reset(b);
		return error;
	}
	sl_buf_release(b);
	*b = o;
	return 0;
}

char *reviewer__redact_str(const char *s, const char *token)
{
	struct sl_buf b;

	sl_buf_init(&b, 0);
	if (sl_buf_puts(&b, s) < 0 || reviewer__redact_buf(&b, token) < 0) {
		sl_buf_release(&b);
		return NULL;
	}
	if (!b.ptr)
		return strdup("");
	return sl_buf_detach(&b);
}

static void redact_value(json_t *parent, const char *key, size_t index, json_t *v,
                         const char *token)
{
	char *r;

	if (!strstr(json_string_value(v), token))
		return;
	r = reviewer__redact_str(json_string_value(v), token);
	if (parent && json_is_object(parent))
		json_object_set_new(parent, key, json_string(r ? r : REVIEWER_REDACTED));
	else if (parent)
		json_array_set_new(parent, index, json_string(r ? r : REVIEWER_REDACTED));
	free(r);
}

static void redact_in(json_t *parent, const char *key, size_t index, json_t *v, const char *token)
{
	const char *k;
	json_t *child;
	size_t i;

	if (json_is_string(v))
		redact_value(parent, key, index, v, token);
	else if (json_is_object(v))
		json_object_foreach(v, k, child) redact_in(v, k, 0, child, token);
	else if (json_is_array(v))
		json_array_foreach(v, i, child) redact_in(v, NULL, i, child, token);
}

void reviewer__redact_json(json_t *json, const char *token)
{
	if (json && token && *token)
		redact_in(NULL, NULL, 0, json, token);
}

void reviewer_redact_json(json_t *json, const struct sl_config *cfg)
{
	const char *name = cfg ? cfg->reviewer.token_env : NULL;

	if (name && *name)
		reviewer__redact_json(json, getenv(name));
}

void reviewer__snippet(char *out, size_t n, const char *s, size_t len)
{
	size_t i, k = 0;

	if (!n)
		return;
	while (len && (s[len - 1] == '\n' || s[len - 1] == '\r' || s[len - 1] == ' '))
		len--;
	for (i = 0; i < len && k + 1 < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '\n' || c == '\t' || c == '\r')
			c = ' ';
		out[k++] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
	}
	if (i < len && k >= 4)
		memcpy(out + k - 3, "...", 3);
	out[k] = '\0';
}
