/*
 * Front matter: find it, check the bytes, read the YAML with libyaml's event
 * parser into JSON (aliases refused, keys unique, depth bounded), then fill
 * the typed fields leniently. Field rules are in validate.c.
 */
#include "queue/queue.h"
#include "queue/queue_int.h"
#include "core/fs.h"
#include "core/utf8.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

int queue__fail(struct sl_err *err, int code, const char *path, int line, int col, const char *fmt,
                ...)
{
	char msg[SL_ERR_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (line > 0)
		return sl_err_set(err, code, "%s:%d:%d: %s", path, line, col, msg);
	return sl_err_set(err, code, "%s: %s", path, msg);
}

/* ---- bytes -------------------------------------------------------------- */

/* NUL bytes and invalid UTF-8, with the position of the first one. */
static int check_bytes(const char *path, const unsigned char *p, size_t len, struct sl_err *err)
{
	size_t i = 0, n;
	int line = 1, col = 1;

	while (i < len) {
		if (p[i] == 0)
			return queue__fail(err, SL_EINVALID, path, line, col,
			                   "NUL byte in a work order; a work order is UTF-8 text, "
			                   "remove the NUL");
		if (!(n = sl_utf8_seq(p + i, len - i, NULL)))
			return queue__fail(err, SL_EINVALID, path, line, col,
			                   "invalid UTF-8 (byte 0x%02x); save the file as UTF-8",
			                   p[i]);
		if (p[i] == '\n')
			line++, col = 1;
		else
			col++;
		i += n;
	}
	return 0;
}

/* The end of the line at p (the '\n' or end), and whether it is a '---' line. */
static int is_fence(const char *p, const char *end)
{
	if (end - p < 3 || memcmp(p, "---", 3))
		return 0;
	for (p += 3; p < end && *p != '\n'; p++)
		if (*p != ' ' && *p != '\t' && *p != '\r')
			return 0;
	return 1;
}

static const char *line_end(const char *p, const char *end)
{
	const char *nl = memchr(p, '\n', (size_t)(end - p));

	return nl ? nl : end;
}

struct split {
	const char *fm; /* the YAML between the fences */
	size_t fm_len;
	int fm_line; /* 0-based line of its first byte */
	const char *body;
};

static int split_front_matter(struct split *sp, const char *path, const char *data, size_t len,
                              struct sl_err *err)
{
	const char *p = data, *end = data + len, *e;
	int line = 1;

	if (len >= 3 && !memcmp(p, "\xef\xbb\xbf", 3))
		p += 3;
	if (p == end || (size_t)(end - p) == strspn(p, " \t\r\n"))
		return queue__fail(err, SL_EINVALID, path, 0, 0,
		                   "empty file; a work order starts with a line '---', YAML front "
		                   "matter (id:, title:, ...), a line '---', then Markdown");
	if (!is_fence(p, end))
		return queue__fail(err, SL_EINVALID, path, 1, 1,
		                   "no front matter; a work order must start with a line '---', "
		                   "then 'id:' and 'title:' lines, then a line '---'");
	p = line_end(p, end);
	p = p < end ? p + 1 : p;
	sp->fm = p;
	sp->fm_line = 1;
	for (; p < end; p = e + 1, line++) {
		e = line_end(p, end);
		if (is_fence(p, end)) {
			sp->fm_len = (size_t)(p - sp->fm);
			sp->body = e < end ? e + 1 : e;
			return 0;
		}
		if (e == end)
			break;
	}
	return queue__fail(err, SL_EINVALID, path, 1, 1,
	                   "front matter is not closed; add a line '---' after the last key "
	                   "(before the Markdown)");
}

/* A tab in the leading whitespace of a line, 1-based line in *line. */
static int find_tab_indent(const char *fm, size_t len, int fm_line, int *line, int *col)
{
	const char *p = fm, *end = fm + len;
	int l = fm_line + 1;

	while (p < end) {
		const char *s = p;
		while (p < end && (*p == ' ' || *p == '\t')) {
			if (*p == '\t') {
				*line = l, *col = (int)(p - s) + 1;
				return 1;
			}
			p++;
		}
		p = line_end(p, end);
		if (p < end)
			p++;
		l++;
	}
	return 0;
}

/* ---- YAML events into JSON ---------------------------------------------- */

#define MAX_DEPTH 64

struct frame {
	json_t *node;
	char *key; /* a mapping's pending key */
	int key_line, key_col;
	yaml_mark_t start; /* where the list or mapping began */
};

struct builder {
	const char *path;
	int fm_line;
	struct frame stack[MAX_DEPTH];
	int depth;
	json_t *root;
	struct queue_wo *wo;
	struct sl_err *err;
	char *top_key; /* the top-level key whose value is being read */
};

static int bline(const struct builder *b, yaml_mark_t m)
{
	return (int)m.line + 1 + b->fm_line;
}

static int add_mark(struct builder *b, const char *key, int idx, int line, int col)
{
	struct queue_mark *m = realloc(b->wo->marks, (b->wo->nmarks + 1) * sizeof(*m));

	if (!m)
		return sl_err_set(b->err, SL_ERROR, "out of memory");
	b->wo->marks = m;
	m = &m[b->wo->nmarks];
	if (!(m->key = strdup(key)))
		return sl_err_set(b->err, SL_ERROR, "out of memory");
	m->idx = idx;
	m->line = line;
	m->col = col;
	b->wo->nmarks++;
	return 0;
}

static int is_int_text(const char *s)
{
	const char *p = s + (*s == '-' || *s == '+');

	if (!*p || (p[0] == '0' && p[1]) || strlen(p) > 18)
		return 0;
	return strspn(p, "0123456789") == strlen(p);
}

static int is_float_text(const char *s)
{
	char *end;

	if (!strpbrk(s, "0123456789") || strspn(s, "+-.0123456789eE") != strlen(s) ||
	    !strchr(s, '.'))
		return 0;
	errno = 0;
	strtod(s, &end);
	return !*end && !errno;
}

/* YAML 1.2 core schema for plain scalars, but 0-prefixed numbers stay text. */
static json_t *scalar_json(const yaml_event_t *ev)
{
	const char *s = (const char *)ev->data.scalar.value;
	const char *tag = (const char *)ev->data.scalar.tag;

	if (ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE || (tag && !strcmp(tag, YAML_STR_TAG)))
		return json_stringn(s, ev->data.scalar.length);
	if (!*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") ||
	    !strcmp(s, "NULL"))
		return json_null();
	if (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE"))
		return json_true();
	if (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "FALSE"))
		return json_false();
	if (is_int_text(s))
		return json_integer(strtoll(s, NULL, 10));
	if (is_float_text(s))
		return json_real(strtod(s, NULL));
	return json_stringn(s, ev->data.scalar.length);
}

/* Attach a finished value to the container on top of the stack (or the root). */
static int attach(struct builder *b, json_t *v, yaml_mark_t m)
{
	struct frame *f;

	if (!v)
		return sl_err_set(b->err, SL_ERROR, "out of memory");
	if (b->depth == 0) {
		b->root = v;
		return 0;
	}
	f = &b->stack[b->depth - 1];
	if (json_is_array(f->node)) {
		if (b->depth == 2 && b->top_key &&
		    add_mark(b, b->top_key, (int)json_array_size(f->node), bline(b, m),
		             (int)m.column + 1))
			goto fail;
		if (json_array_append_new(f->node, v))
			goto oom;
		return 0;
	}
	if (!f->key) { /* v is a key */
		char *key = queue__text(v);
		if (!key) {
			queue__fail(b->err, SL_EINVALID, b->path, bline(b, m), (int)m.column + 1,
			            "a key must be plain text; write 'key: value'");
			goto fail;
		}
		if (json_object_get(f->node, key)) {
			queue__fail(b->err, SL_EINVALID, b->path, bline(b, m), (int)m.column + 1,
			            "key '%s' appears twice; keep one", key);
			free(key);
			goto fail;
		}
		f->key = key;
		f->key_line = bline(b, m);
		f->key_col = (int)m.column + 1;
		json_decref(v);
		if (b->depth == 1) {
			free(b->top_key);
			if (!(b->top_key = strdup(f->key)) ||
			    add_mark(b, f->key, -1, f->key_line, f->key_col))
				goto oom;
		}
		return 0;
	}
	if (json_object_set_new(f->node, f->key, v)) {
		v = NULL;
		goto oom;
	}
	free(f->key);
	f->key = NULL;
	return 0;
oom:
	sl_err_set(b->err, SL_ERROR, "out of memory");
fail:
	json_decref(v);
	return b->err->code ? b->err->code : SL_ERROR;
}

static int push(struct builder *b, json_t *node, yaml_mark_t m)
{
	if (!node)
		return sl_err_set(b->err, SL_ERROR, "out of memory");
	if (b->depth > 0 && json_is_object(b->stack[b->depth - 1].node) &&
	    !b->stack[b->depth - 1].key) {
		json_decref(node);
		return queue__fail(b->err, SL_EINVALID, b->path, bline(b, m), (int)m.column + 1,
		                   "a key must be plain text, not a list or mapping; write "
		                   "'key: value'");
	}
	if (b->depth == MAX_DEPTH) {
		json_decref(node);
		return queue__fail(b->err, SL_EINVALID, b->path, bline(b, m), (int)m.column + 1,
		                   "front matter nested more than %d levels deep; flatten it",
		                   MAX_DEPTH);
	}
	memset(&b->stack[b->depth], 0, sizeof(b->stack[0]));
	b->stack[b->depth].start = m;
	b->stack[b->depth++].node = node;
	return 0;
}

static int pop(struct builder *b)
{
	struct frame *f = &b->stack[--b->depth];
	json_t *node = f->node;
	yaml_mark_t m = f->start;

	free(f->key);
	f->key = NULL;
	f->node = NULL;
	return attach(b, node, m);
}

/* Line `n` (0-based) of the front matter: *len bytes at the result, or NULL. */
static const char *fm_line_at(const char *fm, size_t fm_len, size_t n, size_t *len)
{
	const char *p = fm, *end = fm + fm_len, *nl;

	for (; n && p < end; n--)
		p = (nl = memchr(p, '\n', (size_t)(end - p))) ? nl + 1 : end;
	if (p >= end)
		return NULL;
	*len = (nl = memchr(p, '\n', (size_t)(end - p))) ? (size_t)(nl - p) : (size_t)(end - p);
	return p;
}

/*
 * What libyaml's raw message means on a line "key: value" (hint, n bytes):
 * a value that starts with a quote and goes on past the closing one, or a
 * plain value that holds ": ". 1 when there is a hint.
 */
static int line_hint(const char *s, size_t len, char *hint, size_t n)
{
	size_t k = 0, v, e, klen;
	char q;

	while (k < len && (s[k] == ' ' || s[k] == '-'))
		k++;
	for (v = k; v + 1 < len && !(s[v] == ':' && s[v + 1] == ' '); v++)
		;
	if (v + 1 >= len || v == k || s[k] == '"' || s[k] == '\'')
		return 0;
	klen = v - k;
	for (v += 2; v < len && s[v] == ' '; v++)
		;
	if (v < len && (s[v] == '"' || s[v] == '\'')) {
		for (q = s[v], e = v + 1; e < len && s[e] != q; e++)
			e += q == '"' && s[e] == '\\';
		for (e++; e < len && s[e] == ' '; e++)
			;
		if (e >= len || s[e] == '#')
			return 0;
		snprintf(hint, n, "the value of '%.*s' starts with a quote, so it ends at the "
		         "closing quote and the text after it is not allowed; quote the whole value "
		         "(%.*s: '%.*s') or start it without a quote", (int)klen, s + k,
		         (int)klen, s + k, (int)(len - v > 60 ? 60 : len - v), s + v);
		return 1;
	}
	if (v >= len || !(memmem(s + v, len - v, ": ", 2) || (s[len - 1] == ':' && len - v > 1)))
		return 0;
	snprintf(hint, n, "the value of '%.*s' holds ': ', which YAML reads as the start of another "
	         "key; put the whole value in quotes (%.*s: \"%.*s\")", (int)klen, s + k,
	         (int)klen, s + k, (int)(len - v > 60 ? 60 : len - v), s + v);
	return 1;
}

static int yaml_error(struct builder *b, yaml_parser_t *p, const char *fm, size_t fm_len)
{
	yaml_mark_t m = p->problem ? p->problem_mark : p->context_mark;
	char hint[512] = "fix the front matter";
	const char *text;
	size_t len, i;
	int line, col;

	if (find_tab_indent(fm, fm_len, b->fm_line, &line, &col))
		return queue__fail(b->err, SL_EINVALID, b->path, line, col,
		                   "tab in the indentation; YAML indents with spaces, replace "
		                   "the tab with spaces");
	for (i = 0; i < 2 && i <= m.line; i++) /* the problem's line, or the one before */
		if ((text = fm_line_at(fm, fm_len, m.line - i, &len)) &&
		    line_hint(text, len, hint, sizeof(hint))) {
			m.line -= i;
			m.column = 0;
			break;
		}
	return queue__fail(b->err, SL_EINVALID, b->path, bline(b, m), (int)m.column + 1,
	                   "YAML syntax error: %s%s%s; %s",
	                   p->problem ? p->problem : "cannot parse", p->context ? " " : "",
	                   p->context ? p->context : "", hint);
}

static int on_event(struct builder *b, yaml_event_t *ev, int *docs)
{
	yaml_mark_t m = ev->start_mark;

	switch (ev->type) {
	case YAML_ALIAS_EVENT:
		return queue__fail(b->err, SL_EINVALID, b->path, bline(b, m), (int)m.column + 1,
		                   "YAML alias '*%s' is not allowed in a work order (aliases can "
		                   "expand without bound); write the value out",
		                   (const char *)ev->data.alias.anchor);
	case YAML_DOCUMENT_START_EVENT:
		if (++*docs > 1)
			return queue__fail(b->err, SL_EINVALID, b->path, bline(b, m),
			                   (int)m.column + 1,
			                   "more than one YAML document in the front matter; keep "
			                   "one");
		return 0;
	case YAML_SCALAR_EVENT:
		return attach(b, scalar_json(ev), m);
	case YAML_SEQUENCE_START_EVENT:
		return push(b, json_array(), m);
	case YAML_MAPPING_START_EVENT:
		return push(b, json_object(), m);
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		return pop(b);
	default:
		return 0;
	}
}

static int load_yaml(struct builder *b, const char *fm, size_t len)
{
	yaml_parser_t parser;
	yaml_event_t ev;
	int error = 0, done = 0, docs = 0;

	if (!yaml_parser_initialize(&parser))
		return sl_err_set(b->err, SL_ERROR, "out of memory");
	yaml_parser_set_input_string(&parser, (const unsigned char *)fm, len);
	while (!error && !done) {
		if (!yaml_parser_parse(&parser, &ev)) {
			error = yaml_error(b, &parser, fm, len);
			break;
		}
		done = ev.type == YAML_STREAM_END_EVENT;
		error = on_event(b, &ev, &docs);
		yaml_event_delete(&ev);
	}
	while (b->depth > 0) {
		struct frame *f = &b->stack[--b->depth];
		json_decref(f->node);
		free(f->key);
	}
	yaml_parser_delete(&parser);
	return error;
}

/* ---- typed fields --------------------------------------------------------- */

/* A scalar as text: strings as they are, numbers printed; NULL otherwise. */
char *queue__text(const json_t *v)
{
	char buf[64];

	if (json_is_string(v))
		return strdup(json_string_value(v));
	if (json_is_integer(v))
		snprintf(buf, sizeof(buf), "%lld", (long long)json_integer_value(v));
	else if (json_is_real(v))
		snprintf(buf, sizeof(buf), "%g", json_real_value(v));
	else
		return NULL;
	return strdup(buf);
}

static sl_strv text_list(const json_t *v)
{
	sl_strv out;
	size_t i, n = 0;

	if (!json_is_array(v) || !(out = calloc(json_array_size(v) + 1, sizeof(*out))))
		return NULL;
	for (i = 0; i < json_array_size(v); i++) {
		char *s = queue__text(json_array_get(v, i));
		if (s)
			out[n++] = s;
	}
	return out;
}

static void fill_fields(struct queue_wo *wo)
{
	json_t *f = wo->fields, *v;

	wo->id = queue__text(json_object_get(f, "id"));
	wo->title = queue__text(json_object_get(f, "title"));
	wo->goal = queue__text(json_object_get(f, "goal"));
	wo->status = queue__text(json_object_get(f, "status"));
	wo->created_at = queue__text(json_object_get(f, "created_at"));
	wo->updated_at = queue__text(json_object_get(f, "updated_at"));
	wo->context = text_list(json_object_get(f, "context"));
	wo->acceptance_criteria = text_list(json_object_get(f, "acceptance_criteria"));
	wo->non_goals = text_list(json_object_get(f, "non_goals"));
	wo->stop_conditions = text_list(json_object_get(f, "stop_conditions"));
	wo->tags = text_list(json_object_get(f, "tags"));
	wo->depends_on = text_list(json_object_get(f, "depends_on"));
	v = json_object_get(f, "priority");
	if (json_is_string(v) && !strcmp(json_string_value(v), "urgent"))
		wo->priority = QUEUE_PRIORITY_URGENT;
	else
		wo->priority = json_is_integer(v) ? (int)json_integer_value(v) : 3;
	v = json_object_get(f, "estimate_hours");
	if (json_is_number(v)) {
		wo->estimate_hours = json_number_value(v);
		wo->has_estimate = 1;
	}
}

static int root_check(struct builder *b, const struct split *sp)
{
	const char *what;

	if (json_is_object(b->root) && json_object_size(b->root) > 0)
		return 0;
	if (!b->root || json_is_null(b->root) || json_is_object(b->root))
		return queue__fail(b->err, SL_EINVALID, b->path, sp->fm_line + 1, 1,
		                   "front matter is empty; add at least 'id:' and 'title:'");
	what = json_is_array(b->root) ? "a list" : "a single value";
	return queue__fail(b->err, SL_EINVALID, b->path, sp->fm_line + 1, 1,
	                   "front matter is %s, not a mapping; write 'key: value' lines "
	                   "(id: WO-1, title: ...)",
	                   what);
}

int queue_parse(struct queue_wo **out, const char *path, const void *data, size_t len,
                struct sl_err *err)
{
	struct queue_wo *wo = NULL;
	struct builder b;
	struct split sp = {NULL, 0, 0, NULL};
	int error = 0;

	*out = NULL;
	memset(&b, 0, sizeof(b));
	if (len > QUEUE_WO_MAX_BYTES) {
		error = queue__fail(
		        err, SL_ETOOBIG, path, 0, 0,
		        "file is %zu bytes, over the 1 MiB limit for a work order; "
		        "shorten it or move the long parts into files it lists in context",
		        len);
		goto out;
	}
	if (!(wo = calloc(1, sizeof(*wo))) || !(wo->path = strdup(path)) ||
	    !(wo->raw = malloc(len + 1))) {
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	memcpy(wo->raw, data, len); /* NUL-terminated from here on */
	wo->raw[len] = '\0';
	wo->raw_len = len;
	if ((error = check_bytes(path, (const unsigned char *)wo->raw, len, err)) != 0 ||
	    (error = split_front_matter(&sp, path, wo->raw, len, err)) != 0)
		goto out;
	if (!(wo->body = strdup(sp.body))) {
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	wo->line = sp.fm_line + 1;
	sl_sha256_hex(wo->content_hash, data, len);
	b.path = path;
	b.fm_line = sp.fm_line;
	b.wo = wo;
	b.err = err;
	if ((error = load_yaml(&b, sp.fm, sp.fm_len)) != 0 || (error = root_check(&b, &sp)) != 0)
		goto out;
	wo->fields = b.root;
	b.root = NULL;
	fill_fields(wo);
	*out = wo;
	wo = NULL;
out:
	json_decref(b.root);
	free(b.top_key);
	queue_wo_free(wo);
	return error;
}

int queue_parse_file(struct queue_wo **out, const char *root, const char *relpath,
                     struct sl_err *err)
{
	struct sl_buf data = SL_BUF_INIT;
	struct sl_err e = SL_ERR_INIT;
	char *full = sl_path_join(root, relpath);
	int error;

	*out = NULL;
	if (!full)
		return sl_err_set(err, SL_ERROR, "out of memory");
	error = sl_read_file(&data, full, QUEUE_WO_MAX_BYTES, &e);
	if (error == SL_ETOOBIG)
		error = queue__fail(err, SL_ETOOBIG, relpath, 0, 0,
		                    "file is over the 1 MiB limit for a work order; shorten it or "
		                    "move the long parts into files it lists in context");
	else if (error)
		sl_err_set(err, error, "%s", e.msg);
	else
		error = queue_parse(out, relpath, data.ptr ? data.ptr : "", data.len, err);
	sl_buf_release(&data);
	free(full);
	return error;
}

void queue_wo_free(struct queue_wo *wo)
{
	size_t i;

	if (!wo)
		return;
	free(wo->id);
	free(wo->title);
	free(wo->goal);
	free(wo->status);
	free(wo->created_at);
	free(wo->updated_at);
	free(wo->path);
	free(wo->body);
	sl_strv_free(wo->context);
	sl_strv_free(wo->acceptance_criteria);
	sl_strv_free(wo->non_goals);
	sl_strv_free(wo->stop_conditions);
	sl_strv_free(wo->tags);
	sl_strv_free(wo->depends_on);
	json_decref(wo->fields);
	free(wo->raw);
	for (i = 0; i < wo->nmarks; i++)
		free(wo->marks[i].key);
	free(wo->marks);
	free(wo);
}

const struct queue_mark *queue_wo_mark(const struct queue_wo *wo, const char *key, int idx)
{
	size_t i;

	for (i = 0; i < wo->nmarks; i++)
		if (wo->marks[i].idx == idx && !strcmp(wo->marks[i].key, key))
			return &wo->marks[i];
	return NULL;
}
