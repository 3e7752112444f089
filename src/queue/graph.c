/*
 * What each work order of a scan is: duplicate ids, unknown dependencies and
 * cycles first (the work orders concerned become invalid), then what runs
 * say, the file's status, and the dependencies in topological order.
 */
#include "queue/queue.h"
#include "queue/queue_int.h"
#include "store/store.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct graph {
	struct queue_scan *scan;
	json_t *ids;           /* id -> index of the owner entry */
	struct store_wo *rows; /* the store's rows, by id */
	size_t nrows;
	struct store_wo_run *runs;
	size_t nruns;
	json_t *run_of; /* "id" -> active run index; "id\nhash" -> last run index */
	struct sl_err *err;
};

static int oom(struct graph *g)
{
	return sl_err_set(g->err, SL_ERROR, "out of memory");
}

static struct queue_entry *owner(struct graph *g, const char *id)
{
	json_t *v = json_object_get(g->ids, id);

	return v ? &g->scan->v[json_integer_value(v)] : NULL;
}

static const struct store_wo *row(struct graph *g, const char *id)
{
	size_t lo = 0, hi = g->nrows;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(g->rows[mid].id, id);
		if (!c)
			return &g->rows[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* Set the error of an entry (the first one wins), at key/idx of its file. */
static int entry_fail(struct graph *g, struct queue_entry *e, const char *key, int idx,
                      const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static int entry_fail(struct graph *g, struct queue_entry *e, const char *key, int idx,
                      const char *fmt, ...)
{
	char msg[SL_ERR_MSG_MAX];
	int line, col;
	va_list ap;

	if (e->error)
		return 0;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	queue__where(e->wo, key, idx, &line, &col);
	if (!(e->error = queue__strdup_printf("%s:%d:%d: %s", e->path, line, col, msg)))
		return oom(g);
	return 0;
}

static int set_state(struct graph *g, struct queue_entry *e, const char *state, const char *fmt,
                     ...) __attribute__((format(printf, 4, 5)));

static int set_state(struct graph *g, struct queue_entry *e, const char *state, const char *fmt,
                     ...)
{
	va_list ap;
	int n;

	free(e->state);
	free(e->reason);
	e->reason = NULL;
	va_start(ap, fmt);
	n = vasprintf(&e->reason, fmt, ap);
	va_end(ap);
	if (n < 0 || !(e->state = strdup(state))) {
		e->reason = NULL;
		return oom(g);
	}
	return 0;
}

/* ---- ids and duplicates ---------------------------------------------------- */

static int duplicates(struct graph *g, const char *id, json_t *list)
{
	struct sl_buf files = SL_BUF_INIT;
	size_t i, k;
	int error = 0;

	for (i = 0; i < json_array_size(list); i++)
		sl_buf_addf(&files, "%s%s",
		            i ? (i + 1 == json_array_size(list) ? " and " : ", ") : "",
		            g->scan->v[json_integer_value(json_array_get(list, i))].path);
	for (i = 0; !error && i < json_array_size(list); i++) {
		struct queue_entry *e = &g->scan->v[json_integer_value(json_array_get(list, i))];
		free(e->error);
		e->error = NULL;
		error = entry_fail(g, e, "id", -1,
		                   "duplicate id '%s' in %s; give one of them another id", id,
		                   sl_buf_cstr(&files));
	}
	k = (size_t)json_integer_value(json_array_get(list, 0));
	g->scan->v[k].owner = 1;
	if (!error && json_object_set_new(g->ids, id, json_integer((json_int_t)k)))
		error = oom(g);
	sl_buf_release(&files);
	return error;
}

static int index_ids(struct graph *g)
{
	json_t *all = json_object(), *list;
	const char *id;
	size_t i;
	int error = 0;

	if (!all)
		return oom(g);
	for (i = 0; i < g->scan->n; i++) {
		struct queue_entry *e = &g->scan->v[i];
		if (!e->wo || !queue_id_valid(e->wo->id))
			continue;
		if (!(list = json_object_get(all, e->wo->id))) {
			if (json_object_set_new(all, e->wo->id, list = json_array()) || !list) {
				error = oom(g);
				goto out;
			}
		}
		if (json_array_append_new(list, json_integer((json_int_t)i))) {
			error = oom(g);
			goto out;
		}
	}
	json_object_foreach(all, id, list)
	{
		if (json_array_size(list) > 1) {
			if ((error = duplicates(g, id, list)) != 0)
				break;
		} else {
			g->scan->v[json_integer_value(json_array_get(list, 0))].owner = 1;
			if (json_object_set(g->ids, id, json_array_get(list, 0))) {
				error = oom(g);
				break;
			}
		}
	}
out:
	json_decref(all);
	return error;
}

/* ---- unknown dependencies and cycles ----------------------------------------- */

/* A work order its author wants run: status ready or none. Only those need
 * their dependencies to exist and to be free of cycles. */
static int runnable(const struct queue_entry *e)
{
	return !e->wo->status || wo_status_is(e->wo->status, WO_STATUS_READY);
}

/* The file that did not parse and seems to give id `d`, or NULL. */
static const struct queue_entry *unparsed(struct graph *g, const char *d)
{
	for (size_t i = 0; i < g->scan->n; i++)
		if (!g->scan->v[i].wo && g->scan->v[i].id_guess &&
		    !strcmp(g->scan->v[i].id_guess, d))
			return &g->scan->v[i];
	return NULL;
}

static int unknown_deps(struct graph *g)
{
	size_t i, j;
	int error = 0;

	for (i = 0; !error && i < g->scan->n; i++) {
		struct queue_entry *e = &g->scan->v[i];
		const struct store_wo *r;
		if (!e->owner || e->error || !runnable(e))
			continue;
		for (j = 0; !error && e->wo->depends_on && e->wo->depends_on[j]; j++) {
			const char *d = e->wo->depends_on[j];
			const struct queue_entry *bad;
			if (owner(g, d) || ((r = row(g, d)) && wo_state_is(r->state, WO_DONE)))
				continue;
			if ((bad = unparsed(g, d)) != NULL)
				error = entry_fail(
				        g, e, "depends_on", (int)j,
				        "work order '%s' depends on '%s', whose file %s does not "
				        "parse; fix that file (sluice check shows its problem)",
				        e->wo->id, d, bad->path);
			else
				error = entry_fail(g, e, "depends_on", (int)j,
				                   "work order '%s' depends on unknown '%s'; fix "
				                   "depends_on or add a work order with id '%s'",
				                   e->wo->id, d, d);
		}
	}
	return error;
}

/* The k-th dependency of e that is a present owner without error, or NULL. */
static struct queue_entry *edge(struct graph *g, struct queue_entry *e, size_t k)
{
	struct queue_entry *d = owner(g, e->wo->depends_on[k]);

	return d && !d->error && runnable(d) ? d : NULL;
}

static size_t ndeps(const struct queue_entry *e)
{
	return sl_strv_len(e->wo->depends_on);
}

static int report_cycle(struct graph *g, size_t *stack, size_t from, size_t top)
{
	struct sl_buf text = SL_BUF_INIT;
	size_t i, start = from, k;
	int error = 0;

	for (i = from; i < top; i++) /* start the text at the smallest id */
		if (strcmp(g->scan->v[stack[i]].wo->id, g->scan->v[stack[start]].wo->id) < 0)
			start = i;
	for (i = 0; i < top - from; i++)
		sl_buf_addf(&text, "%s -> ",
		            g->scan->v[stack[from + (start - from + i) % (top - from)]].wo->id);
	sl_buf_puts(&text, g->scan->v[stack[start]].wo->id);
	for (i = from; !error && i < top; i++) {
		struct queue_entry *e = &g->scan->v[stack[i]];
		const char *next = g->scan->v[stack[i + 1 < top ? i + 1 : from]].wo->id;
		for (k = 0; k < ndeps(e) && strcmp(e->wo->depends_on[k], next); k++)
			;
		error = entry_fail(g, e, "depends_on", (int)k,
		                   "dependency cycle %s; remove one of these depends_on entries",
		                   sl_buf_cstr(&text));
	}
	sl_buf_release(&text);
	return error;
}

/* Iterative depth-first search; color 0 new, 1 on the stack, 2 done. */
static int cycles(struct graph *g)
{
	size_t n = g->scan->n, *stack = calloc(n + 1, sizeof(*stack));
	size_t *next = calloc(n + 1, sizeof(*next)), *pos = calloc(n + 1, sizeof(*pos));
	char *color = calloc(n + 1, 1);
	size_t root, top;
	int error = 0;

	if (!stack || !next || !color || !pos) {
		error = oom(g);
		goto out;
	}
	for (root = 0; !error && root < n; root++) {
		if (color[root] || !g->scan->v[root].owner || g->scan->v[root].error ||
		    !runnable(&g->scan->v[root]))
			continue;
		top = 0;
		stack[top++] = root;
		color[root] = 1;
		pos[root] = 0;
		while (!error && top) {
			size_t u = stack[top - 1];
			struct queue_entry *e = &g->scan->v[u], *d;
			if (next[u] >= ndeps(e)) {
				color[u] = 2;
				top--;
				continue;
			}
			if (!(d = edge(g, e, next[u]++)))
				continue;
			size_t v = (size_t)(d - g->scan->v);
			if (color[v] == 1)
				error = report_cycle(g, stack, pos[v], top);
			else if (!color[v]) {
				color[v] = 1;
				pos[v] = top;
				stack[top++] = v;
			}
		}
	}
out:
	free(stack);
	free(next);
	free(pos);
	free(color);
	return error;
}

/* ---- states ------------------------------------------------------------------- */

static const struct store_wo_run *run_lookup(struct graph *g, const char *id, const char *hash)
{
	char key[QUEUE_ID_MAX + SL_SHA256_HEX_LEN + 4];
	json_t *v;

	snprintf(key, sizeof(key), "%s%s%s", id, hash ? "\n" : "", hash ? hash : "");
	v = json_object_get(g->run_of, key);
	return v ? &g->runs[json_integer_value(v)] : NULL;
}

static int index_runs(struct graph *g)
{
	char key[QUEUE_ID_MAX + SL_SHA256_HEX_LEN + 4];
	size_t i;

	for (i = 0; i < g->nruns; i++) {
		const struct store_wo_run *r = &g->runs[i];
		if (strlen(r->wo_id) > QUEUE_ID_MAX)
			continue;
		snprintf(key, sizeof(key), "%s\n%s", r->wo_id, r->content_hash);
		if (json_object_set_new(g->run_of, key, json_integer((json_int_t)i)))
			return oom(g);
		if (r->unfinished &&
		    json_object_set_new(g->run_of, r->wo_id, json_integer((json_int_t)i)))
			return oom(g);
		/* "id\tdone": a run that did a revision's work, for new_revision_of_done() */
		snprintf(key, sizeof(key), "%s\tdone", r->wo_id);
		if ((r->state == RUN_MERGED || r->state == RUN_REPORTED) &&
		    json_object_set_new(g->run_of, key, json_integer((json_int_t)i)))
			return oom(g);
	}
	return 0;
}

/*
 * The run that did the work of another revision of e's work order (merged
 * or reported), when there is one: e is then a new revision of a done work
 * order, and runs again. NULL otherwise.
 */
static const struct store_wo_run *new_revision_of_done(struct graph *g,
                                                       const struct queue_entry *e)
{
	char key[QUEUE_ID_MAX + 8];
	json_t *v;
	const struct store_wo_run *r;

	snprintf(key, sizeof(key), "%s\tdone", e->wo->id);
	if (!(v = json_object_get(g->run_of, key)))
		return NULL;
	r = &g->runs[json_integer_value(v)];
	return strcmp(r->content_hash, e->wo->content_hash) ? r : NULL;
}

/* States that do not depend on the dependencies; 1 when one was set. */
static int own_state(struct graph *g, struct queue_entry *e, int *set)
{
	const struct queue_wo *wo = e->wo;
	const struct store_wo *old = row(g, wo->id);
	const struct store_wo_run *r;
	int same = old && !strcmp(old->content_hash, wo->content_hash);

	*set = 1;
	if ((r = run_lookup(g, wo->id, NULL)) != NULL)
		return set_state(g, e, wo_state_name(WO_RUNNING), "run %s is %s%s%s", r->run_id,
		                 run_state_name(r->state), *r->reason ? ": " : "", r->reason);
	if (old && wo_state_is(old->state, WO_RUNNING))
		return set_state(g, e, wo_state_name(WO_RUNNING), "%s", old->reason);
	if (e->error)
		return set_state(g, e, wo_state_name(WO_INVALID), "%s", e->error);
	if ((r = run_lookup(g, wo->id, wo->content_hash)) != NULL) {
		if (r->state == RUN_MERGED)
			return set_state(g, e, wo_state_name(WO_DONE), "merged by run %s", r->run_id);
		if (r->state == RUN_REPORTED) /* a read-only or none run: its report is the work */
			return set_state(g, e, wo_state_name(WO_DONE), "reported by run %s",
			                 r->run_id);
		/* "run R failed", "run R was abandoned", "run R was rejected" */
		return set_state(g, e, wo_state_name(WO_FAILED), "run %s %s%s%s%s", r->run_id,
		                 r->state == RUN_FAILED ? "" : "was ",
		                 r->state == RUN_ABANDONED || r->state == RUN_REJECTED
		                         ? run_state_name(r->state)
		                         : run_state_name(RUN_FAILED),
		                 *r->reason ? ": " : "", r->reason);
	}
	if (same && (wo_state_is(old->state, WO_DONE) || wo_state_is(old->state, WO_FAILED)))
		return set_state(g, e, old->state, "%s", old->reason);
	if (wo->status && !wo_status_is(wo->status, WO_STATUS_READY))
		return set_state(g, e, wo_state_name(WO_SKIPPED),
		                 wo_status_is(wo->status, WO_STATUS_DONE)
		                         ? "status done in the file: already done"
		                         : "status %s in the file; set 'status: ready' to run it",
		                 wo->status);
	*set = 0;
	return 0;
}

static int dep_satisfied(struct graph *g, const char *id)
{
	struct queue_entry *d = owner(g, id);
	const struct store_wo *r;

	if (d)
		return wo_state_is(d->state, WO_DONE) ||
		       (wo_state_is(d->state, WO_SKIPPED) && wo_status_is(d->wo->status, WO_STATUS_DONE));
	return (r = row(g, id)) && wo_state_is(r->state, WO_DONE);
}

static int dep_state(struct graph *g, struct queue_entry *e)
{
	const struct store_wo_run *done;
	struct sl_buf waits = SL_BUF_INIT;
	size_t k;
	int error = 0;

	for (k = 0; k < ndeps(e); k++) {
		const char *id = e->wo->depends_on[k];
		struct queue_entry *d = owner(g, id);
		if (dep_satisfied(g, id))
			continue;
		if (d && (wo_state_is(d->state, WO_FAILED) || wo_state_is(d->state, WO_BLOCKED))) {
			error = set_state(g, e, wo_state_name(WO_BLOCKED),
			                  "%s %s; retry or abandon its run, or remove it from "
			                  "depends_on",
			                  id,
			                  wo_state_is(d->state, WO_FAILED) ? wo_state_name(WO_FAILED)
			                                                   : "is blocked");
			goto out;
		}
		sl_buf_addf(&waits, "%s%s (%s)", waits.len ? ", " : "", id, d ? d->state : "gone");
	}
	if (waits.len && (done = new_revision_of_done(g, e)) != NULL)
		error = set_state(g, e, wo_state_name(WO_WAITING),
		                  "waits on %s; then it runs again: new revision of a done work "
		                  "order (run %s %s the one before)",
		                  sl_buf_cstr(&waits), done->run_id, run_state_name(done->state));
	else if (waits.len)
		error = set_state(g, e, wo_state_name(WO_WAITING), "waits on %s", sl_buf_cstr(&waits));
	else if ((done = new_revision_of_done(g, e)) != NULL)
		error = set_state(g, e, wo_state_name(WO_READY),
		                  "new revision of a done work order (run %s %s the one before)",
		                  done->run_id, run_state_name(done->state));
	else
		error = set_state(g, e, wo_state_name(WO_READY), "%s", wo_state_name(WO_READY));
out:
	sl_buf_release(&waits);
	return error;
}

/*
 * The states that do not depend on the dependencies; pending[i] is 1 for an
 * entry whose state does (1 + the dependencies not decided yet, below).
 */
static int own_states(struct graph *g, size_t *pending)
{
	size_t i;
	int error = 0, set;

	for (i = 0; !error && i < g->scan->n; i++) {
		struct queue_entry *e = &g->scan->v[i];
		if (!e->owner)
			error = set_state(g, e, wo_state_name(WO_INVALID), "%s",
			                  e->error ? e->error : "unreadable");
		else if ((error = own_state(g, e, &set)) == 0 && !set)
			pending[i] = 1;
	}
	return error;
}

/*
 * The edges of the pending entries to their dependencies not decided yet:
 * dependents["<d>"] lists the entries waiting on entry d, pending[i] counts
 * them for entry i.
 */
static int link_dependents(struct graph *g, size_t *pending, json_t *dependents)
{
	size_t i, k;

	for (i = 0; i < g->scan->n; i++) {
		struct queue_entry *e = &g->scan->v[i];
		for (k = 0; pending[i] && k < ndeps(e); k++) {
			struct queue_entry *d = edge(g, e, k);
			json_t *list;
			char key[32];
			if (!d || d->state)
				continue; /* no dependency, or one already decided */
			snprintf(key, sizeof(key), "%zu", (size_t)(d - g->scan->v));
			if (!(list = json_object_get(dependents, key)) &&
			    (json_object_set_new(dependents, key, list = json_array()) || !list))
				return oom(g);
			if (json_array_append_new(list, json_integer((json_int_t)i)))
				return oom(g);
			pending[i]++;
		}
	}
	return 0;
}

/* Decide the entries whose dependencies are decided, in order, until none is left. */
static int decide_in_order(struct graph *g, size_t *pending, size_t *queue, json_t *dependents)
{
	size_t i, k, head = 0, tail = 0;
	int error = 0;

	for (i = 0; i < g->scan->n; i++)
		if (pending[i] == 1)
			queue[tail++] = i;
	while (!error && head < tail) {
		size_t u = queue[head++];
		json_t *list, *v;
		char key[32];
		pending[u] = 0;
		if ((error = dep_state(g, &g->scan->v[u])) != 0)
			break;
		snprintf(key, sizeof(key), "%zu", u);
		list = json_object_get(dependents, key);
		json_array_foreach(list, k, v)
		{
			size_t w = (size_t)json_integer_value(v);
			if (--pending[w] == 1)
				queue[tail++] = w;
		}
	}
	return error;
}

/* Kahn's algorithm over the entries whose state depends on their dependencies. */
static int states(struct graph *g)
{
	size_t n = g->scan->n, i;
	size_t *pending = calloc(n + 1, sizeof(*pending)), *queue = calloc(n + 1, sizeof(*queue));
	json_t *dependents = json_object();
	int error = 0;

	if (!pending || !queue || !dependents) {
		error = oom(g);
		goto out;
	}
	if ((error = own_states(g, pending)) != 0 ||
	    (error = link_dependents(g, pending, dependents)) != 0 ||
	    (error = decide_in_order(g, pending, queue, dependents)) != 0)
		goto out;
	for (i = 0; !error && i < n; i++) /* cannot happen: the graph has no cycle left */
		if (!g->scan->v[i].state)
			error = set_state(g, &g->scan->v[i], wo_state_name(WO_INVALID), "dependency cycle");
out:
	free(pending);
	free(queue);
	json_decref(dependents);
	return error;
}

int queue_evaluate(struct queue_scan *scan, struct store *st, struct sl_err *err)
{
	struct graph g;
	int error = 0;

	memset(&g, 0, sizeof(g));
	g.scan = scan;
	g.err = err;
	if (!(g.ids = json_object()) || !(g.run_of = json_object())) {
		error = oom(&g);
		goto out;
	}
	if (st && ((error = store_wo_list(st, &g.rows, &g.nrows, err)) != 0 ||
	           (error = store_wo_runs(st, &g.runs, &g.nruns, err)) != 0))
		goto out;
	if ((error = index_runs(&g)) || (error = index_ids(&g)) || (error = unknown_deps(&g)) ||
	    (error = cycles(&g)) || (error = states(&g)))
		goto out;
out:
	json_decref(g.ids);
	json_decref(g.run_of);
	store_wo_list_free(g.rows, g.nrows);
	store_wo_runs_free(g.runs, g.nruns);
	return error;
}
