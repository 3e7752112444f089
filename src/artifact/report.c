/* sluice report: one self-contained HTML page of the queue and runs; the graph in DOT. */
#include "artifact/artifact_int.h"
#include "store/store.h"
#include "core/fs.h"
#include "core/time.h"
#include "core/utf8.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 64

struct wo {
	char *id, *title, *state, *reason, *path;
	char **deps;     /* depends_on ids */
	size_t ndeps;
	int depth;       /* layer in the graph */
	int x, y;        /* position in the SVG */
};

struct report {
	struct sl_ctx *ctx;
	struct wo *wos;
	size_t nwos;
	struct store_run *runs;  /* newest first */
	size_t nruns;
	struct store_event *ev;  /* oldest first */
	size_t nev;
};

static char *col(sqlite3_stmt *s, int i)
{
	const char *t = (const char *)sqlite3_column_text(s, i);

	return strdup(t ? t : "");
}

static void wo_deps(struct wo *w, const char *fields_json)
{
	struct store_wo_fields f;
	struct sl_err ignored = SL_ERR_INIT;
	size_t i, n = 0;

	store_wo_fields_parse(w->id, fields_json, &f, &ignored); /* logged there */
	while (f.depends_on && f.depends_on[n])
		n++;
	if (n && (w->deps = calloc(n, sizeof(char *))))
		for (i = 0; i < n; i++)
			w->deps[w->ndeps++] = strdup(f.depends_on[i]);
	store_wo_fields_release(&f);
}

static int load_wos(struct report *r, struct sl_err *err)
{
	sqlite3_stmt *s = NULL;
	struct wo *v;
	int rc;

	if (sqlite3_prepare_v2(store_db(r->ctx->st),
			       "SELECT id, title, state, reason, path, fields_json FROM work_orders "
			       "ORDER BY id", -1, &s, NULL) != SQLITE_OK)
		return sl_err_set(err, SL_ERROR, "cannot read work orders: %s",
				  sqlite3_errmsg(store_db(r->ctx->st)));
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (!(v = realloc(r->wos, (r->nwos + 1) * sizeof(*v))))
			break;
		r->wos = v;
		v = &r->wos[r->nwos++];
		memset(v, 0, sizeof(*v));
		v->id = col(s, 0);
		v->title = col(s, 1);
		v->state = col(s, 2);
		v->reason = col(s, 3);
		v->path = col(s, 4);
		wo_deps(v, (const char *)sqlite3_column_text(s, 5));
	}
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? 0 : sl_err_set(err, SL_ERROR, "cannot read work orders");
}

static int load(struct report *r, struct sl_err *err)
{
	int error;

	if ((error = load_wos(r, err)) != 0 ||
	    (error = store_runs_list(r->ctx->st, RUN_STATES_ALL, NULL, &r->runs, &r->nruns,
				     err)) != 0)
		return error;
	return store_events_list(r->ctx->st, NULL, 0, &r->ev, &r->nev, err);
}

static void release(struct report *r)
{
	size_t i, j;

	for (i = 0; i < r->nwos; i++) {
		struct wo *w = &r->wos[i];
		free(w->id);
		free(w->title);
		free(w->state);
		free(w->reason);
		free(w->path);
		for (j = 0; j < w->ndeps; j++)
			free(w->deps[j]);
		free(w->deps);
	}
	free(r->wos);
	store_runs_free(r->runs, r->nruns);
	store_events_free(r->ev, r->nev);
}

static struct wo *find_wo(struct report *r, const char *id)
{
	size_t i;

	for (i = 0; i < r->nwos; i++)
		if (!strcmp(r->wos[i].id, id))
			return &r->wos[i];
	return NULL;
}

/* Layers: a work order sits one below its deepest dependency (cycles capped). */
static void layout(struct report *r)
{
	size_t i, j, round;
	int changed = 1, per[MAX_DEPTH + 1] = { 0 };

	for (round = 0; changed && round <= MAX_DEPTH; round++) {
		changed = 0;
		for (i = 0; i < r->nwos; i++)
			for (j = 0; j < r->wos[i].ndeps; j++) {
				struct wo *d = find_wo(r, r->wos[i].deps[j]);
				if (d && d->depth + 1 > r->wos[i].depth && d->depth < MAX_DEPTH) {
					r->wos[i].depth = d->depth + 1;
					changed = 1;
				}
			}
	}
	for (i = 0; i < r->nwos; i++) {
		r->wos[i].x = 20 + per[r->wos[i].depth]++ * 200;
		r->wos[i].y = 20 + r->wos[i].depth * 90;
	}
}

/* Escapes for a DOT double-quoted string (a backslash of ours is doubled too). */
static int dot_esc(struct sl_buf *b, const char *s)
{
	struct sl_buf v = SL_BUF_INIT;
	const char *p;
	int error = 0;

	while (s && *s && !error)
		if (!artifact_visible(&v, &s, &error))
			error = sl_buf_add(&v, s++, 1);
	for (p = sl_buf_cstr(&v); *p && !error; p++) {
		if (*p == '"' || *p == '\\')
			error = sl_buf_add(b, "\\", 1);
		if (!error)
			error = sl_buf_add(b, p, 1);
	}
	sl_buf_release(&v);
	return error;
}

int artifact_report_dot(struct sl_ctx *ctx, struct sl_buf *out, struct sl_err *err)
{
	struct report r;
	size_t i, j;
	int error;

	memset(&r, 0, sizeof(r));
	r.ctx = ctx;
	if ((error = load_wos(&r, err)) != 0)
		goto out;
	error = sl_buf_puts(out, "digraph work_orders {\n\trankdir=TB;\n\tnode [shape=box];\n");
	for (i = 0; i < r.nwos && !error; i++) {
		error = sl_buf_puts(out, "\t\"") || dot_esc(out, r.wos[i].id) ||
			sl_buf_puts(out, "\" [label=\"") || dot_esc(out, r.wos[i].id) ||
			sl_buf_puts(out, "\\n") || dot_esc(out, r.wos[i].title) ||
			sl_buf_puts(out, "\\n(") || dot_esc(out, r.wos[i].state) ||
			sl_buf_puts(out, ")\"];\n");
		for (j = 0; j < r.wos[i].ndeps && !error; j++)
			error = sl_buf_puts(out, "\t\"") || dot_esc(out, r.wos[i].deps[j]) ||
				sl_buf_puts(out, "\" -> \"") || dot_esc(out, r.wos[i].id) ||
				sl_buf_puts(out, "\";\n");
	}
	if (!error)
		error = sl_buf_puts(out, "}\n");
	if (error)
		error = sl_err_set(err, SL_ETOOBIG, "the dependency graph is too large to write");
out:
	release(&r);
	return error;
}

static void html_head(struct artifact_page *p, struct report *r)
{
	char when[40];

	sl_time_iso(when, sizeof(when), sl_now_ms());
	artifact_put(p, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
	       "<title>sluice report</title><style>");
	artifact_put(p, artifact_page_css);
	artifact_put(p, "</style></head><body>\n<h1>sluice report</h1>\n<p class=\"muted\">repository <code>");
	artifact_put_esc(p, r->ctx->repo.root);
	artifact_put(p, "</code>, target <code>");
	artifact_put_esc(p, r->ctx->cfg->target);
	artifact_putf(p, "</code>, generated %s: %zu work orders, %zu runs</p>\n", when, r->nwos, r->nruns);
}

static void html_queue(struct artifact_page *p, struct report *r)
{
	size_t i, j;

	artifact_put(p, "<h2>Queue</h2>\n<table><tr><th>work order</th><th>title</th><th>state</th>"
	       "<th>reason</th><th>depends on</th></tr>\n");
	for (i = 0; i < r->nwos; i++) {
		artifact_put(p, "<tr><td><code>");
		artifact_put_esc(p, r->wos[i].id);
		artifact_put(p, "</code></td><td>");
		artifact_put_esc(p, r->wos[i].title);
		artifact_put(p, "</td><td>");
		artifact_badge(p, r->wos[i].state);
		artifact_put(p, "</td><td>");
		artifact_put_esc(p, r->wos[i].reason);
		artifact_put(p, "</td><td>");
		for (j = 0; j < r->wos[i].ndeps; j++) {
			artifact_put(p, j ? ", " : "");
			artifact_put_esc(p, r->wos[i].deps[j]);
		}
		artifact_put(p, "</td></tr>\n");
	}
	artifact_put(p, "</table>\n");
}

static void svg_edges(struct artifact_page *p, struct report *r)
{
	size_t i, j;

	for (i = 0; i < r->nwos; i++)
		for (j = 0; j < r->wos[i].ndeps; j++) {
			struct wo *d = find_wo(r, r->wos[i].deps[j]);
			if (d)
				artifact_putf(p, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#616161\" "
				     "marker-end=\"url(#arrow)\"/>\n", d->x + 80, d->y + 44,
				     r->wos[i].x + 80, r->wos[i].y);
		}
}

static void html_graph(struct artifact_page *p, struct report *r)
{
	int w = 220, h = 60;
	size_t i;

	for (i = 0; i < r->nwos; i++) {
		w = r->wos[i].x + 200 > w ? r->wos[i].x + 200 : w;
		h = r->wos[i].y + 70 > h ? r->wos[i].y + 70 : h;
	}
	artifact_put(p, "<h2>Dependency graph</h2>\n");
	/* the viewBox lets a narrower page (the desk's) scale the graph down to fit */
	artifact_putf(p, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
	     "viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"work-order dependency graph\">\n"
	     "<defs><marker id=\"arrow\" "
	     "viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"8\" markerHeight=\"8\" "
	     "orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#616161\"/></marker></defs>\n",
	     w, h, w, h);
	svg_edges(p, r);
	for (i = 0; i < r->nwos; i++) {
		struct wo *n = &r->wos[i];
		artifact_putf(p, "<g><rect x=\"%d\" y=\"%d\" width=\"160\" height=\"44\" rx=\"5\" fill=\"%s\"/>"
		     "<text x=\"%d\" y=\"%d\" fill=\"#fff\" font-size=\"13\" font-weight=\"bold\">",
		     n->x, n->y, artifact_state_color(n->state), n->x + 8, n->y + 18);
		artifact_put_esc(p, n->id);
		artifact_putf(p, "</text><text x=\"%d\" y=\"%d\" fill=\"#fff\" font-size=\"11\">", n->x + 8,
		     n->y + 35);
		artifact_put_esc(p, n->state);
		artifact_put(p, "</text><title>");
		artifact_put_esc(p, n->title);
		artifact_put(p, "</title></g>\n");
	}
	artifact_put(p, "</svg>\n");
}

static void html_states(struct artifact_page *p, struct report *r)
{
	/* the unfinished states first, then the final ones */
	static const enum run_state states[] = {
		RUN_QUEUED,	 RUN_PREPARING,	     RUN_BUILDING, RUN_GATING,
		RUN_REVIEWING,	 RUN_AWAITING_REVIEW, RUN_APPROVED, RUN_MERGING,
		RUN_RESOLVING,	 RUN_MERGE_CONFLICT,  RUN_INTERRUPTED, RUN_MERGED,
		RUN_REJECTED,	 RUN_FAILED,	     RUN_ABANDONED, RUN_REPORTED,
	};
	size_t i, j, n;

	artifact_put(p, "<h2>Runs by state</h2>\n<table><tr><th>state</th><th>runs</th></tr>\n");
	for (i = 0; i < sizeof(states) / sizeof(states[0]); i++) {
		for (n = 0, j = 0; j < r->nruns; j++)
			n += r->runs[j].state == states[i];
		if (!n)
			continue;
		artifact_put(p, "<tr><td>");
		artifact_badge(p, run_state_name(states[i]));
		artifact_putf(p, "</td><td>%zu</td></tr>\n", n);
	}
	artifact_put(p, "</table>\n");
}

#define NSTAGES 16

struct stages {
	const char *name[NSTAGES];
	int64_t ms[NSTAGES];
	int64_t total;
	size_t n;
};

static void stage_add(struct stages *s, const char *name, int64_t ms)
{
	size_t i;

	if (!name || ms < 0)
		return;
	for (i = 0; i < s->n && strcmp(s->name[i], name); i++)
		;
	if (i == s->n && s->n < NSTAGES)
		s->name[s->n++] = name;
	if (i < s->n)
		s->ms[i] += ms;
	s->total += ms;
}

/* Time spent per state, from the run's events (the current state runs until now). */
static void run_stages(struct report *r, const struct store_run *run, struct stages *s)
{
	const struct store_event *prev = NULL;
	size_t i;

	memset(s, 0, sizeof(*s));
	for (i = 0; i < r->nev; i++) {
		if (!r->ev[i].run_id || strcmp(r->ev[i].run_id, run->id))
			continue;
		if (prev)
			stage_add(s, prev->to_state, r->ev[i].at_ms - prev->at_ms);
		prev = &r->ev[i];
	}
	if (prev && !run_state_is_final(run->state))
		stage_add(s, prev->to_state, sl_now_ms() - prev->at_ms);
}

static void html_stage_bar(struct artifact_page *p, const struct stages *s)
{
	double x = 0, w;
	size_t i;
	char d[32];

	if (!s->n || s->total <= 0)
		return;
	artifact_put(p, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"800\" height=\"26\">");
	for (i = 0; i < s->n; i++) {
		w = 800.0 * (double)s->ms[i] / (double)s->total;
		sl_duration_format(d, sizeof(d), s->ms[i]);
		artifact_putf(p, "<rect x=\"%.1f\" y=\"0\" width=\"%.1f\" height=\"26\" fill=\"%s\"><title>",
		     x, w, artifact_state_color(s->name[i]));
		artifact_put_esc(p, s->name[i]);
		artifact_putf(p, " %s</title></rect>", d);
		if (w > 70) {
			artifact_putf(p, "<text x=\"%.1f\" y=\"17\" fill=\"#fff\" font-size=\"11\">", x + 4);
			artifact_put_esc(p, s->name[i]);
			artifact_putf(p, " %s</text>", d);
		}
		x += w;
	}
	artifact_put(p, "</svg>\n<table><tr><th>stage</th><th>time</th></tr>");
	for (i = 0; i < s->n; i++) {
		sl_duration_format(d, sizeof(d), s->ms[i]);
		artifact_put(p, "<tr><td>");
		artifact_put_esc(p, s->name[i]);
		artifact_putf(p, "</td><td>%s</td></tr>", d);
	}
	artifact_put(p, "</table>\n");
}

static void html_events(struct artifact_page *p, struct report *r, const char *run_id)
{
	char when[40];
	size_t i;

	artifact_put(p, "<table><tr><th>time</th><th>from</th><th>to</th><th>reason</th></tr>\n");
	for (i = 0; i < r->nev; i++) {
		if (!r->ev[i].run_id || strcmp(r->ev[i].run_id, run_id))
			continue;
		sl_time_iso(when, sizeof(when), r->ev[i].at_ms);
		artifact_putf(p, "<tr><td>%s</td><td>", when);
		artifact_put_esc(p, r->ev[i].from_state ? r->ev[i].from_state : "new");
		artifact_put(p, "</td><td>");
		artifact_put_esc(p, r->ev[i].to_state);
		artifact_put(p, "</td><td>");
		artifact_put_esc(p, r->ev[i].reason);
		artifact_put(p, "</td></tr>\n");
	}
	artifact_put(p, "</table>\n");
}

static void html_run(struct artifact_page *p, struct report *r, const struct store_run *run)
{
	struct wo *w = find_wo(r, run->work_order_id);
	struct stages s;

	artifact_put(p, "<section id=\"run-");
	artifact_put_esc(p, run->id);
	artifact_put(p, "\"><h3><code>");
	artifact_put_esc(p, run->id);
	artifact_put(p, "</code> ");
	artifact_put_esc(p, run->work_order_id);
	artifact_put(p, ": ");
	artifact_put_esc(p, w ? w->title : "");
	artifact_put(p, " ");
	artifact_badge(p, run_state_name(run->state));
	artifact_put(p, "</h3>\n<p class=\"muted\">");
	artifact_put_esc(p, run->reason);
	artifact_put(p, "</p>\n");
	run_stages(r, run, &s);
	html_stage_bar(p, &s);
	html_events(p, r, run->id);
	artifact_put(p, "</section>\n");
}

/* A car's place and what it does: "car 2 of 3, testing on top of WO-12". */
static void car_cell(struct artifact_page *p, struct report *r, const struct artifact_car *c)
{
	char *wo = artifact_run_work_order(r->ctx, c->ahead);
	char el[32];

	if (c->position)
		artifact_putf(p, "car %zu of %zu, ", c->position, c->cars);
	else
		artifact_put(p, "out of the line, ");
	artifact_put_esc(p, train_status_name(c->status));
	if (c->status == TRAIN_WAITING) {
		artifact_put(p, " for a place in the train");
	} else if (c->ahead) {
		artifact_put(p, c->status == TRAIN_GREEN ? "; waits for " : " on top of ");
		artifact_put_esc(p, wo ? wo : c->ahead);
		artifact_put(p, c->status == TRAIN_GREEN ? " to land" : "");
	} else {
		artifact_put(p, " on the tip");
	}
	if (c->tested_ms && c->started_ms && c->tested_ms >= c->started_ms) {
		sl_duration_format(el, sizeof(el), c->tested_ms - c->started_ms);
		artifact_putf(p, " (gates %s)", el);
	}
	free(wo);
}

/* The merge-train cell of a run: its car, or the gate time of its landing. */
static void train_cell(struct artifact_page *p, struct report *r, const struct store_run *run)
{
	struct artifact_car c;
	char *dir, el[32];
	json_t *t = NULL;

	if (artifact_car_get(r->ctx, run->id, &c)) {
		car_cell(p, r, &c);
		artifact_car_release(&c);
		return;
	}
	if (run->state != RUN_MERGED || !(dir = sl_repo_run_path(&r->ctx->repo, run->id, NULL)))
		return;
	if ((t = artifact_train_record(dir))) {
		sl_duration_format(el, sizeof(el), json_integer_value(json_object_get(t, "gates_ms")));
		artifact_putf(p, "landed %s, gates %s", json_is_true(json_object_get(t, "green")) ? "green" :
		     "NOT green", el);
	}
	json_decref(t);
	free(dir);
}

static void html_runs(struct artifact_page *p, struct report *r)
{
	char el[32];
	size_t i;

	artifact_put(p, "<h2>Runs</h2>\n<table><tr><th>run</th><th>work order</th><th>state</th>"
	       "<th>time</th><th>merge train</th><th>reason</th></tr>\n");
	for (i = 0; i < r->nruns; i++) {
		const struct store_run *run = &r->runs[i];
		sl_duration_format(el, sizeof(el), (run->finished_ms ? run->finished_ms :
						     sl_now_ms()) - run->created_ms);
		artifact_put(p, "<tr><td><a href=\"#run-");
		artifact_put_esc(p, run->id);
		artifact_put(p, "\"><code>");
		artifact_put_esc(p, run->id);
		artifact_put(p, "</code></a></td><td>");
		artifact_put_esc(p, run->work_order_id);
		artifact_put(p, "</td><td>");
		artifact_badge(p, run_state_name(run->state));
		artifact_putf(p, "</td><td>%s</td><td>", el);
		train_cell(p, r, run);
		artifact_put(p, "</td><td>");
		artifact_put_esc(p, run->reason);
		artifact_put(p, "</td></tr>\n");
	}
	artifact_put(p, "</table>\n<h2>Timelines</h2>\n");
	for (i = 0; i < r->nruns; i++)
		html_run(p, r, &r->runs[i]);
}

int artifact_report_html(struct sl_ctx *ctx, struct sl_buf *out, struct sl_err *err)
{
	struct artifact_page p = { out, 0 };
	struct report r;
	int error;

	memset(&r, 0, sizeof(r));
	r.ctx = ctx;
	if ((error = load(&r, err)) != 0)
		goto out;
	layout(&r);
	html_head(&p, &r);
	html_states(&p, &r);
	html_queue(&p, &r);
	html_graph(&p, &r);
	artifact_flakes_html(ctx, &p);
	artifact_spend_html(ctx, &p);
	artifact_watch_html(ctx, &p);
	html_runs(&p, &r);
	artifact_put(&p, "</body></html>\n");
	if (p.error)
		error = sl_err_set(err, p.error, "the report page is too large to write");
out:
	release(&r);
	return error;
}

int artifact_graph_html(struct sl_ctx *ctx, struct artifact_page *p, struct sl_err *err)
{
	struct report r;
	int error;

	memset(&r, 0, sizeof(r));
	r.ctx = ctx;
	if ((error = load_wos(&r, err)) == 0) {
		layout(&r);
		html_graph(p, &r);
	}
	release(&r);
	return error;
}
