/*
 * The field rules of a work order (docs/work-orders.md, Fields). The first problem
 * is reported, at the line and column of the key or list item concerned.
 */
#include "queue/queue.h"
#include "queue/queue_int.h"
#include "store/store.h"
#include "core/fs.h"
#include "core/utf8.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const list_fields[] = {
        "context", "acceptance_criteria", "non_goals", "stop_conditions",
        "tags",    "depends_on",          NULL};
static const char *const text_fields[] = {"title",      "goal",       "status",
                                          "created_at", "updated_at", NULL};

char *queue__strdup_printf(const char *fmt, ...)
{
	va_list ap;
	char *out;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&out, fmt, ap);
	va_end(ap);
	return n < 0 ? NULL : out;
}

void queue__where(const struct queue_wo *wo, const char *key, int idx, int *line, int *col)
{
	const struct queue_mark *m = queue_wo_mark(wo, key, idx);

	if (!m && idx >= 0)
		m = queue_wo_mark(wo, key, -1);
	*line = m ? m->line : wo->line;
	*col = m ? m->col : 1;
}

static int fail_at(const struct queue_wo *wo, struct sl_err *err, const char *key, int idx,
                   const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static int fail_at(const struct queue_wo *wo, struct sl_err *err, const char *key, int idx,
                   const char *fmt, ...)
{
	char msg[SL_ERR_MSG_MAX];
	int line, col;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	queue__where(wo, key, idx, &line, &col);
	return queue__fail(err, SL_EINVALID, wo->path, line, col, "%s", msg);
}

/*
 * The code point of the UTF-8 sequence at s (the file was checked to be
 * UTF-8 when parsed); *len gets its length in bytes. A stray byte is
 * returned as itself with *len 1.
 */
static unsigned long utf8_at(const unsigned char *s, size_t *len)
{
	unsigned long cp;

	if (!(*len = sl_utf8_seq(s, 4, &cp))) {
		*len = 1;
		return s[0];
	}
	return cp;
}

/* Why id is not valid, or NULL when it is. */
static const char *id_problem(const char *id, char *buf, size_t n)
{
	size_t len = strlen(id), i;

	if (!len)
		return "is empty";
	if (len > QUEUE_ID_MAX) {
		snprintf(buf, n, "is %zu characters long, over the limit of %d; shorten it", len,
		         QUEUE_ID_MAX);
		return buf;
	}
	if (!isalnum((unsigned char)id[0])) {
		snprintf(buf, n, "starts with '%c'; start it with a letter or a digit", id[0]);
		return buf;
	}
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)id[i];
		if (isalnum(c) || c == '.' || c == '_' || c == '-')
			continue;
		if (c == '/')
			return "contains '/'; an id names a branch and a folder, so use only "
			       "letters, "
			       "digits, '.', '_' and '-'";
		if (isspace(c))
			return "contains a space; use only letters, digits, '.', '_' and '-'";
		if (c < 0x80 && isprint(c)) {
			snprintf(buf, n, "contains '%c'; use only letters, digits, '.', '_' and '-'",
			         c);
		} else {
			size_t l;
			unsigned long cp = utf8_at((const unsigned char *)id + i, &l);
			if (l == 1 && c >= 0x80)
				snprintf(buf, n, "contains the byte 0x%02X; ids are [A-Za-z0-9._-]", c);
			else if (sl_utf8_hidden(cp))
				snprintf(buf, n, "contains a control character (U+%04lX); ids are "
				                 "[A-Za-z0-9._-]", cp);
			else
				snprintf(buf, n, "contains '%.*s' (U+%04lX); ids are [A-Za-z0-9._-]",
				         (int)l, id + i, cp);
		}
		return buf;
	}
	if (strstr(id, ".."))
		return "contains '..'; it names a branch and a folder, so use single dots";
	if (id[len - 1] == '.')
		return "ends with '.'; git refuses such branch names";
	if (len >= 5 && !strcmp(id + len - 5, ".lock"))
		return "ends with '.lock'; git refuses such branch names";
	return NULL;
}

int queue_id_valid(const char *id)
{
	char buf[128];

	return id && !id_problem(id, buf, sizeof(buf));
}

char *queue_context_path(const char *entry)
{
	size_t n = strlen(entry);
	const char *open;

	if (n && entry[n - 1] == ')' && (open = strstr(entry, " (")) != NULL) {
		while (open > entry && open[-1] == ' ')
			open--;
		n = (size_t)(open - entry);
	}
	while (n > 1 && entry[n - 1] == '/')
		n--;
	return strndup(entry, n);
}

static int check_id(const struct queue_wo *wo, struct sl_err *err)
{
	json_t *v = json_object_get(wo->fields, "id");
	const char *why;
	char buf[160];

	if (!v || json_is_null(v))
		return fail_at(wo, err, "id", -1,
		               "missing 'id'; add a line such as 'id: WO-2026-001' (letters, "
		               "digits, '.', '_', '-')");
	if (!wo->id)
		return fail_at(wo, err, "id", -1, "'id' must be text such as WO-2026-001");
	if ((why = id_problem(wo->id, buf, sizeof(buf))) != NULL)
		return fail_at(wo, err, "id", -1, "id '%.80s' %s", wo->id, why);
	return 0;
}

/* A title is one line of plain text of at most QUEUE_TITLE_MAX characters. */
static int check_title(const struct queue_wo *wo, const char *title, struct sl_err *err)
{
	const unsigned char *p = (const unsigned char *)title;
	size_t chars = 0, l;
	unsigned long cp;

	for (; *p; p += l, chars++)
		if (sl_utf8_hidden(cp = utf8_at(p, &l)))
			return fail_at(wo, err, "title", -1,
			               "'title' contains a control character (U+%04lX); a title is "
			               "one line of plain text",
			               cp);
	if (chars > QUEUE_TITLE_MAX)
		return fail_at(wo, err, "title", -1,
		               "'title' is %zu characters long, over the limit of %d; shorten it "
		               "(it becomes the subject of the merge commit) and put the rest in "
		               "the body",
		               chars, QUEUE_TITLE_MAX);
	return 0;
}

static int check_texts(const struct queue_wo *wo, struct sl_err *err)
{
	json_t *v;
	int i, error;

	v = json_object_get(wo->fields, "title");
	if (!v || json_is_null(v) || (json_is_string(v) && !*json_string_value(v)))
		return fail_at(wo, err, "title", -1,
		               "missing 'title'; add a line 'title: <what this work order does>'");
	if (json_is_string(v) && (error = check_title(wo, json_string_value(v), err)) != 0)
		return error;
	for (i = 0; text_fields[i]; i++) {
		v = json_object_get(wo->fields, text_fields[i]);
		if (v && !json_is_null(v) && !json_is_string(v) && !json_is_number(v))
			return fail_at(wo, err, text_fields[i], -1, "'%s' must be text, not a %s",
			               text_fields[i],
			               json_is_array(v) ? "list" : "mapping or flag");
	}
	return 0;
}

static int check_list(const struct queue_wo *wo, const char *key, struct sl_err *err)
{
	json_t *v = json_object_get(wo->fields, key), *item;
	size_t i;

	if (!v || json_is_null(v))
		return 0;
	if (!json_is_array(v))
		return fail_at(wo, err, key, -1,
		               "'%s' must be a list, one entry per line starting with '- '", key);
	json_array_foreach(
	        v, i,
	        item) if (!json_is_string(item) &&
	                  !json_is_number(
	                          item)) return fail_at(wo, err, key, (int)i,
	                                                "entry %zu of '%s' must be text, not a %s",
	                                                i + 1, key,
	                                                json_is_array(item) ? "list"
	                                                : json_is_object(item)
	                                                        ? "mapping"
	                                                        : "flag or empty value");
	return 0;
}

static int check_context(const struct queue_wo *wo, struct sl_err *err)
{
	size_t i;
	int error = 0;

	for (i = 0; !error && wo->context && wo->context[i]; i++) {
		char *p = queue_context_path(wo->context[i]);
		if (!p)
			return sl_err_set(err, SL_ERROR, "out of memory");
		if (p[0] == '/')
			error = fail_at(wo, err, "context", (int)i,
			                "context path '%s' is absolute; context paths are relative "
			                "to the repository root",
			                p);
		else if (!sl_path_is_safe_relative(p))
			error = fail_at(wo, err, "context", (int)i,
			                "context path '%s' climbs out of the repository with '..' "
			                "(or is empty); use a path inside the repository",
			                p);
		free(p);
	}
	return error;
}

static int check_numbers(const struct queue_wo *wo, struct sl_err *err)
{
	json_t *v = json_object_get(wo->fields, "priority");
	char *text;
	int error = 0;

	if (v && !json_is_null(v) && !json_is_integer(v) &&
	    !(json_is_string(v) && !strcmp(json_string_value(v), "urgent"))) {
		text = queue__text(v);
		error = fail_at(
		        wo, err, "priority", -1,
		        "priority '%s' is not an integer; use a whole number, 1 is the most "
		        "urgent (default 3), or urgent (tested first, docs/work-orders.md)",
		        text ? text : "(a list or mapping)");
		free(text);
		return error;
	}
	v = json_object_get(wo->fields, "estimate_hours");
	if (v && !json_is_null(v) && (!json_is_number(v) || json_number_value(v) < 0))
		return fail_at(wo, err, "estimate_hours", -1,
		               "estimate_hours must be a number of hours (8, 1.5)");
	return 0;
}

static int check_status(const struct queue_wo *wo, struct sl_err *err)
{
	enum wo_status known;

	if (!wo->status || wo_status_parse(wo->status, &known) == 0)
		return 0;
	return fail_at(wo, err, "status", -1,
	               "unknown status '%.80s'; use ready (or leave it out), draft, backlog, hold "
	               "or done",
	               wo->status);
}

/* worktree: read-write | read-only | none (core/config.h); absent: worktree.mode decides. */
static int check_worktree(const struct queue_wo *wo, struct sl_err *err)
{
	json_t *v = json_object_get(wo->fields, "worktree");
	enum sl_worktree_mode mode;
	char *text;
	int error;

	if (!v || json_is_null(v) ||
	    (json_is_string(v) && sl_worktree_mode_parse(json_string_value(v), &mode) == 0))
		return 0;
	text = queue__text(v);
	error = fail_at(wo, err, "worktree", -1,
	                "unknown worktree '%.80s'; use " SL_WORKTREE_MODES
	                " (read-write, the default: the builder's changes are merged; read-only: "
	                "it may change nothing and the run ends in a report; none: it works in an "
	                "empty folder)",
	                text ? text : "(a list or mapping)");
	free(text);
	return error;
}

/*
 * budget: {usd: 2.50, minutes: 30} (docs/budgets.md): each a number of 0 or
 * more, at most 1e9, or none; nothing else in it.
 */
static int check_budget(const struct queue_wo *wo, struct sl_err *err)
{
	json_t *b = json_object_get(wo->fields, "budget"), *v;
	const char *key;

	if (!b || json_is_null(b))
		return 0;
	if (!json_is_object(b))
		return fail_at(wo, err, "budget", -1,
		               "budget must be a mapping such as {usd: 2.50, minutes: 30} (the run "
		               "stops once its attempts recorded that much; docs/budgets.md)");
	json_object_foreach(b, key, v) {
		if (strcmp(key, "usd") && strcmp(key, "minutes"))
			return fail_at(wo, err, "budget", -1,
			               "unknown key '%.80s' in budget; use usd (US dollars) and "
			               "minutes (wall time)", key);
		if ((json_is_number(v) && json_number_value(v) >= 0 &&
		     json_number_value(v) <= 1e9) ||
		    (json_is_string(v) && !strcmp(json_string_value(v), "none")))
			continue;
		return fail_at(wo, err, "budget", -1,
		               "budget.%s must be %s (at most 1000000000) or none", key,
		               strcmp(key, "usd") ? "a number of minutes such as 30 or 7.5"
		                                  : "an amount of US dollars such as 2.50");
	}
	return 0;
}

/* A name of a gate: [A-Za-z0-9_-]{1,64}, as config.c allows. */
static int gate_name_valid(const char *s)
{
	size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-");

	return n && n <= 64 && !s[n];
}

/*
 * revert: {commit: <40 hex>, run: RUN, gate: NAME} (docs/watch.md): a revert
 * run of that landing; the watch writes it, a person may too. The commit is
 * checked against the target when the run prepares.
 */
static int check_revert(const struct queue_wo *wo, struct sl_err *err)
{
	json_t *r = json_object_get(wo->fields, "revert"), *v;
	const char *key, *text;

	if (!r)
		return 0;
	if (!json_is_object(r) || !json_is_string(json_object_get(r, "commit")))
		return fail_at(wo, err, "revert", -1,
		               "revert must be a mapping with the full commit to revert, such as "
		               "{commit: 4f2a...(40 hex digits)} (docs/watch.md)");
	json_object_foreach(r, key, v) {
		text = json_string_value(v);
		if (strcmp(key, "commit") && strcmp(key, "run") && strcmp(key, "gate"))
			return fail_at(wo, err, "revert", -1,
			               "unknown key '%.80s' in revert; use commit, run and gate", key);
		if (!text)
			return fail_at(wo, err, "revert", -1, "revert.%s must be text", key);
		if (!strcmp(key, "commit") &&
		    (strlen(text) != 40 || strspn(text, "0123456789abcdef") != 40))
			return fail_at(wo, err, "revert", -1,
			               "revert.commit '%.80s' is not a full commit id; write its 40 "
			               "hex digits (git rev-parse COMMIT)", text);
		if (!strcmp(key, "gate") && !gate_name_valid(text))
			return fail_at(wo, err, "revert", -1,
			               "revert.gate '%.80s' is not a gate's name ([A-Za-z0-9_-])", text);
	}
	return 0;
}

static int check_depends(const struct queue_wo *wo, struct sl_err *err)
{
	size_t i;

	for (i = 0; wo->depends_on && wo->depends_on[i]; i++) {
		if (!queue_id_valid(wo->depends_on[i]))
			return fail_at(wo, err, "depends_on", (int)i,
			               "depends_on entry '%.80s' is not a valid work-order id",
			               wo->depends_on[i]);
		if (!strcmp(wo->depends_on[i], wo->id))
			return fail_at(wo, err, "depends_on", (int)i,
			               "'%s' depends on itself; remove it from depends_on", wo->id);
	}
	return 0;
}

int queue_validate(const struct queue_wo *wo, struct sl_err *err)
{
	int error, i;

	if ((error = check_id(wo, err)) || (error = check_texts(wo, err)))
		return error;
	for (i = 0; list_fields[i]; i++)
		if ((error = check_list(wo, list_fields[i], err)) != 0)
			return error;
	if ((error = check_context(wo, err)) || (error = check_numbers(wo, err)) ||
	    (error = check_status(wo, err)) || (error = check_depends(wo, err)) ||
	    (error = check_worktree(wo, err)) || (error = check_budget(wo, err)) ||
	    (error = check_revert(wo, err)))
		return error;
	return 0;
}
