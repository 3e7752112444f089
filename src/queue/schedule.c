/*
 * Schedule order and the overlap rule: which ready work orders may start
 * now, and why each of the others waits.
 */
#include "queue/queue.h"
#include "queue/queue_int.h"
#include "store/store.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The order of `sluice queue`: running first, done last. */
static const enum wo_state rank_order[] = {WO_RUNNING, WO_READY,   WO_WAITING, WO_BLOCKED,
                                           WO_FAILED,  WO_INVALID, WO_SKIPPED, WO_DONE};
#define NRANKS (sizeof(rank_order) / sizeof(rank_order[0]))

static int rank(const char *state)
{
	size_t i;

	for (i = 0; i < NRANKS; i++)
		if (wo_state_is(state, rank_order[i]))
			return (int)i;
	return (int)i;
}

static int cmp_item(const void *pa, const void *pb)
{
	const struct queue_item *a = pa, *b = pb;
	const char *ca = a->created_at ? a->created_at : "",
	           *cb = b->created_at ? b->created_at : "";
	int c;

	if ((c = rank(a->state) - rank(b->state)) != 0)
		return c;
	if (a->priority != b->priority)
		return a->priority < b->priority ? -1 : 1;
	if (!*ca != !*cb) /* an empty created_at goes last */
		return *ca ? -1 : 1;
	if ((c = strcmp(ca, cb)) != 0)
		return c;
	return strcmp(a->id, b->id);
}

void queue_sort(struct queue_item *items, size_t n)
{
	if (n > 1)
		qsort(items, n, sizeof(*items), cmp_item);
}

int queue_paths_overlap(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);

	if (!strcmp(a, ".") || !strcmp(b, "."))
		return 1;
	if (la > lb) {
		const char *t = a;
		size_t lt = la;
		a = b, la = lb, b = t, lb = lt;
	}
	return !strncmp(a, b, la) && (lb == la || b[la] == '/');
}

/* The first pair of overlapping context paths of a and b, or 0. */
static int overlap(const struct queue_item *a, const struct queue_item *b, const char **path)
{
	size_t i, j;

	for (i = 0; a->context && a->context[i]; i++)
		for (j = 0; b->context && b->context[j]; j++)
			if (queue_paths_overlap(a->context[i], b->context[j])) {
				*path = strlen(a->context[i]) >= strlen(b->context[j])
				                ? a->context[i]
				                : b->context[j];
				return 1;
			}
	return 0;
}

static int explain(struct queue_item *it, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));

static int explain(struct queue_item *it, const char *fmt, ...)
{
	va_list ap;
	int n;

	free(it->explain);
	va_start(ap, fmt);
	n = vasprintf(&it->explain, fmt, ap);
	va_end(ap);
	if (n < 0) {
		it->explain = NULL;
		return -1;
	}
	return 0;
}

/* Why a ready item cannot start now (explain set, 1), or 0 when it may. */
static int blocked_by_overlap(struct queue_item *items, const size_t *active, size_t nactive,
                              struct queue_item *it)
{
	const char *path;
	size_t j;

	for (j = 0; j < nactive; j++) {
		struct queue_item *o = &items[active[j]];
		if (overlap(it, o, &path))
			return explain(it, "overlaps %s on %s (%s)", o->id, path,
			               o->may_start ? "starting now" : wo_state_name(WO_RUNNING)) < 0
			               ? -1
			               : 1;
	}
	return 0;
}

static int decide_one(struct queue_item *items, size_t i, size_t *active, size_t *nactive,
                      const struct queue_plan_opts *opts)
{
	struct queue_item *it = &items[i];
	int rc;

	if (!wo_state_is(it->state, WO_READY))
		return explain(it, "%s%s%s", it->state, *it->reason ? ": " : "", it->reason);
	if (!opts->allow_overlap && (rc = blocked_by_overlap(items, active, *nactive, it)) != 0)
		return rc < 0 ? -1 : 0;
	/* "ready: new revision of a done work order (...)" says more than "ready" */
	rc = strcmp(it->reason, wo_state_name(WO_READY)) != 0;
	if (opts->held)
		return explain(it, "%s; %s", rc ? it->reason : it->state, opts->held);
	if (opts->jobs > 0 && *nactive >= (size_t)opts->jobs)
		return explain(it, "%s; waits for a free job (queue.jobs is %d)",
		               rc ? it->reason : it->state, opts->jobs);
	it->may_start = 1;
	active[(*nactive)++] = i;
	return explain(it, "%s%sstarts now", rc ? it->reason : it->state, rc ? "; " : ": ");
}

int queue_decide(struct queue_item *items, size_t n, const struct queue_plan_opts *opts,
                 struct sl_err *err)
{
	size_t *active = calloc(n + 1, sizeof(*active)), nactive = 0, i;
	int error = 0;

	if (!active)
		return sl_err_set(err, SL_ERROR, "out of memory");
	for (i = 0; i < n; i++) { /* the running ones hold their paths and a job each */
		items[i].may_start = 0;
		if (wo_state_is(items[i].state, WO_RUNNING))
			active[nactive++] = i;
	}
	for (i = 0; !error && i < n; i++)
		if (decide_one(items, i, active, &nactive, opts) < 0)
			error = sl_err_set(err, SL_ERROR, "out of memory");
	free(active);
	return error;
}

void queue_item_release(struct queue_item *it)
{
	free(it->id);
	free(it->path);
	free(it->title);
	free(it->state);
	free(it->reason);
	free(it->status);
	free(it->created_at);
	free(it->content_hash);
	sl_strv_free(it->context);
	sl_strv_free(it->depends_on);
	free(it->explain);
	memset(it, 0, sizeof(*it));
}

void queue_plan_release(struct queue_plan *plan)
{
	size_t i;

	for (i = 0; plan->items && i < plan->n; i++)
		queue_item_release(&plan->items[i]);
	free(plan->items);
	plan->items = NULL;
	plan->n = 0;
}

static sl_strv json_strv(const json_t *v, int context)
{
	sl_strv out;
	size_t i, n = 0;

	if (!(out = calloc(json_array_size(v) + 1, sizeof(*out))))
		return NULL;
	for (i = 0; i < json_array_size(v); i++) {
		char *s = queue__text(json_array_get(v, i)), *p;
		if (s && context) {
			p = queue_context_path(s);
			free(s);
			s = p;
		}
		if (s)
			out[n++] = s;
	}
	return out;
}

static int item_from_row(struct queue_item *it, struct store_wo *r)
{
	struct store_wo_fields f;
	struct sl_err ignored = SL_ERR_INIT;
	int error = 0;

	store_wo_fields_parse(r->id, r->fields_json, &f, &ignored); /* logged there */

	memset(it, 0, sizeof(*it));
	it->id = r->id, r->id = NULL;
	it->path = r->path, r->path = NULL;
	it->title = r->title, r->title = NULL;
	it->state = r->state, r->state = NULL;
	it->reason = r->reason, r->reason = NULL;
	it->status = r->status, r->status = NULL;
	it->created_at = r->created_at, r->created_at = NULL;
	it->content_hash = r->content_hash, r->content_hash = NULL;
	it->priority = r->priority;
	it->present = r->present;
	if (!(it->context = json_strv(json_object_get(f.all, "context"), 1)) ||
	    !(it->depends_on = json_strv(json_object_get(f.all, "depends_on"), 0)))
		error = -1;
	store_wo_fields_release(&f);
	return error;
}

int queue_plan(struct queue_plan *out, struct store *st, const struct queue_plan_opts *opts,
               struct sl_err *err)
{
	struct store_wo *rows = NULL;
	size_t nrows = 0, i;
	int error;

	memset(out, 0, sizeof(*out));
	if ((error = store_wo_list(st, &rows, &nrows, err)) != 0)
		goto out;
	if (nrows && !(out->items = calloc(nrows, sizeof(*out->items)))) {
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	for (i = 0; i < nrows; i++) {
		if (!rows[i].present && !wo_state_is(rows[i].state, WO_RUNNING))
			continue;
		if (item_from_row(&out->items[out->n++], &rows[i]) < 0) {
			error = sl_err_set(err, SL_ERROR, "out of memory");
			goto out;
		}
	}
	queue_sort(out->items, out->n);
	error = queue_decide(out->items, out->n, opts, err);
out:
	store_wo_list_free(rows, nrows);
	if (error)
		queue_plan_release(out);
	return error;
}

const char *queue_priority_word(int priority, char *buf, size_t n)
{
	if (priority == QUEUE_PRIORITY_URGENT)
		return "urgent";
	snprintf(buf, n, "%d", priority);
	return buf;
}
