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
	json_t *f = json_loads(fields_json, 0, NULL), *d, *v;
	size_t i;

	d = json_object_get(f, "depends_on");
	if (json_is_array(d) && (w->deps = calloc(json_array_size(d), sizeof(char *))))
		json_array_foreach(d, i, v)
			if (json_is_string(v))
				w->deps[w->ndeps++] = strdup(json_string_value(v));
	json_decref(f);
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

/*
 * Text from outside (an invalid work order's title is stored as written)
 * as the CLI shows it (cli_esc): control characters, line breaks, C1 codes,
 * line separators and bidirectional overrides as \n, \x1b, \u202e; bytes
 * that are not UTF-8 as \xff. Returns 1 when it wrote the escape of the
 * character at *s (advanced past it), 0 when *s is plain text for the caller.
 */
static int visible(struct sl_buf *b, const char **s, int *error)
{
	const unsigned char *p = (const unsigned char *)*s;
	unsigned long cp;
	size_t l = sl_utf8_seq(p, 4, &cp); /* NUL-terminated: the terminator ends a sequence */

	if (!l) {
		*error = sl_buf_addf(b, "\\x%02x", *p);
		l = 1;
	} else if (cp == '\n' || cp == '\t' || cp == '\r')
		*error = sl_buf_puts(b, cp == '\n' ? "\\n" : cp == '\t' ? "\\t" : "\\r");
	else if (sl_utf8_hidden(cp) && cp < 0x80)
		*error = sl_buf_addf(b, "\\x%02lx", cp);
	else if (sl_utf8_hidden(cp))
		*error = sl_buf_addf(b, "\\u%04lx", cp);
	else if (l > 1)
		*error = sl_buf_add(b, p, l);
	else
		return 0;
	*s += l;
	return 1;
}

/* Escapes for HTML text and attributes. */
static int esc(struct sl_buf *b, const char *s)
{
	int error = 0;

	while (s && *s && !error) {
		if (visible(b, &s, &error))
			continue;
		switch (*s) {
		case '&': error = sl_buf_puts(b, "&amp;"); break;
		case '<': error = sl_buf_puts(b, "&lt;"); break;
		case '>': error = sl_buf_puts(b, "&gt;"); break;
		case '"': error = sl_buf_puts(b, "&quot;"); break;
		case '\'': error = sl_buf_puts(b, "&#39;"); break;
		default: error = sl_buf_add(b, s, 1);
		}
		s++;
	}
	return error;
}

/* Escapes for a DOT double-quoted string (a backslash of ours is doubled too). */
static int dot_esc(struct sl_buf *b, const char *s)
{
	struct sl_buf v = SL_BUF_INIT;
	const char *p;
	int error = 0;

	while (s && *s && !error)
		if (!visible(&v, &s, &error))
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

/* The page being written, with a sticky error. */
struct page {
	struct sl_buf *b;
	int error;
};

static void put(struct page *p, const char *s)
{
	if (!p->error)
		p->error = sl_buf_puts(p->b, s);
}

static void put_esc(struct page *p, const char *s)
{
	if (!p->error)
		p->error = esc(p->b, s);
}

static void putf(struct page *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void putf(struct page *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (!p->error)
		p->error = sl_buf_vaddf(p->b, fmt, ap);
	va_end(ap);
}

/* The colour of a run state's or a work-order state's name (NULL: the default grey). */
static const char *state_color(const char *state)
{
	static const char *const run_colors[RUN_STATE_COUNT] = {
		[RUN_MERGED] = "#2e7d32",	   [RUN_FAILED] = "#c62828",
		[RUN_REJECTED] = "#c62828",	   [RUN_ABANDONED] = "#757575",
		[RUN_MERGE_CONFLICT] = "#ef6c00",  [RUN_AWAITING_REVIEW] = "#f9a825",
		[RUN_REVIEWING] = "#f9a825",	   [RUN_APPROVED] = "#66bb6a",
		[RUN_BUILDING] = "#1565c0",	   [RUN_GATING] = "#6a1b9a",
		[RUN_PREPARING] = "#00838f",	   [RUN_MERGING] = "#558b2f",
		[RUN_RESOLVING] = "#d84315",	   [RUN_QUEUED] = "#90a4ae",
		[RUN_REPORTED] = "#2e7d32",
	};
	static const char *const wo_colors[WO_STATE_COUNT] = {
		[WO_DONE] = "#2e7d32",	  [WO_FAILED] = "#c62828",  [WO_INVALID] = "#c62828",
		[WO_BLOCKED] = "#ef6c00", [WO_RUNNING] = "#1565c0", [WO_WAITING] = "#90a4ae",
		[WO_READY] = "#42a5f5",	  [WO_SKIPPED] = "#bdbdbd",
	};
	enum run_state rs;
	enum wo_state ws;
	const char *c = NULL;

	if (run_state_parse(state, &rs) == 0)
		c = run_colors[rs];
	else if (wo_state_parse(state, &ws) == 0)
		c = wo_colors[ws];
	return c ? c : "#9e9e9e";
}

static const char page_css[] =
	"body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#212121;background:#fff}"
	"h1{font-size:22px}h2{font-size:18px;border-bottom:1px solid #ddd;margin-top:28px}"
	"h3{font-size:15px;margin:18px 0 6px}table{border-collapse:collapse;margin:6px 0}"
	"td,th{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}"
	"th{background:#f5f5f5}.st{color:#fff;border-radius:3px;padding:0 5px;font-size:12px}"
	"td:first-child,code{white-space:nowrap}code{font:12px monospace}"
	".muted{color:#757575}section{margin-bottom:18px}";

static void badge(struct page *p, const char *state)
{
	putf(p, "<span class=\"st\" style=\"background:%s\">", state_color(state));
	put_esc(p, state);
	put(p, "</span>");
}

static void html_head(struct page *p, struct report *r)
{
	char when[40];

	sl_time_iso(when, sizeof(when), sl_now_ms());
	put(p, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
	       "<title>sluice report</title><style>");
	put(p, page_css);
	put(p, "</style></head><body>\n<h1>sluice report</h1>\n<p class=\"muted\">repository <code>");
	put_esc(p, r->ctx->repo.root);
	put(p, "</code>, target <code>");
	put_esc(p, r->ctx->cfg->target);
	putf(p, "</code>, generated %s: %zu work orders, %zu runs</p>\n", when, r->nwos, r->nruns);
}

static void html_queue(struct page *p, struct report *r)
{
	size_t i, j;

	put(p, "<h2>Queue</h2>\n<table><tr><th>work order</th><th>title</th><th>state</th>"
	       "<th>reason</th><th>depends on</th></tr>\n");
	for (i = 0; i < r->nwos; i++) {
		put(p, "<tr><td><code>");
		put_esc(p, r->wos[i].id);
		put(p, "</code></td><td>");
		put_esc(p, r->wos[i].title);
		put(p, "</td><td>");
		badge(p, r->wos[i].state);
		put(p, "</td><td>");
		put_esc(p, r->wos[i].reason);
		put(p, "</td><td>");
		for (j = 0; j < r->wos[i].ndeps; j++) {
			put(p, j ? ", " : "");
			put_esc(p, r->wos[i].deps[j]);
		}
		put(p, "</td></tr>\n");
	}
	put(p, "</table>\n");
}

static void svg_edges(struct page *p, struct report *r)
{
	size_t i, j;

	for (i = 0; i < r->nwos; i++)
		for (j = 0; j < r->wos[i].ndeps; j++) {
			struct wo *d = find_wo(r, r->wos[i].deps[j]);
			if (d)
				putf(p, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#616161\" "
				     "marker-end=\"url(#arrow)\"/>\n", d->x + 80, d->y + 44,
				     r->wos[i].x + 80, r->wos[i].y);
		}
}

static void html_graph(struct page *p, struct report *r)
{
	int w = 220, h = 60;
	size_t i;

	for (i = 0; i < r->nwos; i++) {
		w = r->wos[i].x + 200 > w ? r->wos[i].x + 200 : w;
		h = r->wos[i].y + 70 > h ? r->wos[i].y + 70 : h;
	}
	put(p, "<h2>Dependency graph</h2>\n");
	putf(p, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
	     "role=\"img\" aria-label=\"work-order dependency graph\">\n<defs><marker id=\"arrow\" "
	     "viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"8\" markerHeight=\"8\" "
	     "orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#616161\"/></marker></defs>\n",
	     w, h);
	svg_edges(p, r);
	for (i = 0; i < r->nwos; i++) {
		struct wo *n = &r->wos[i];
		putf(p, "<g><rect x=\"%d\" y=\"%d\" width=\"160\" height=\"44\" rx=\"5\" fill=\"%s\"/>"
		     "<text x=\"%d\" y=\"%d\" fill=\"#fff\" font-size=\"13\" font-weight=\"bold\">",
		     n->x, n->y, state_color(n->state), n->x + 8, n->y + 18);
		put_esc(p, n->id);
		putf(p, "</text><text x=\"%d\" y=\"%d\" fill=\"#fff\" font-size=\"11\">", n->x + 8,
		     n->y + 35);
		put_esc(p, n->state);
		put(p, "</text><title>");
		put_esc(p, n->title);
		put(p, "</title></g>\n");
	}
	put(p, "</svg>\n");
}

static void html_states(struct page *p, struct report *r)
{
	/* the unfinished states first, then the final ones */
	static const enum run_state states[] = {
		RUN_QUEUED,	 RUN_PREPARING,	     RUN_BUILDING, RUN_GATING,
		RUN_REVIEWING,	 RUN_AWAITING_REVIEW, RUN_APPROVED, RUN_MERGING,
		RUN_RESOLVING,	 RUN_MERGE_CONFLICT,  RUN_INTERRUPTED, RUN_MERGED,
		RUN_REJECTED,	 RUN_FAILED,	     RUN_ABANDONED, RUN_REPORTED,
	};
	size_t i, j, n;

	put(p, "<h2>Runs by state</h2>\n<table><tr><th>state</th><th>runs</th></tr>\n");
	for (i = 0; i < sizeof(states) / sizeof(states[0]); i++) {
		for (n = 0, j = 0; j < r->nruns; j++)
			n += r->runs[j].state == states[i];
		if (!n)
			continue;
		put(p, "<tr><td>");
		badge(p, run_state_name(states[i]));
		putf(p, "</td><td>%zu</td></tr>\n", n);
	}
	put(p, "</table>\n");
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

static void html_stage_bar(struct page *p, const struct stages *s)
{
	double x = 0, w;
	size_t i;
	char d[32];

	if (!s->n || s->total <= 0)
		return;
	put(p, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"800\" height=\"26\">");
	for (i = 0; i < s->n; i++) {
		w = 800.0 * (double)s->ms[i] / (double)s->total;
		sl_duration_format(d, sizeof(d), s->ms[i]);
		putf(p, "<rect x=\"%.1f\" y=\"0\" width=\"%.1f\" height=\"26\" fill=\"%s\"><title>",
		     x, w, state_color(s->name[i]));
		put_esc(p, s->name[i]);
		putf(p, " %s</title></rect>", d);
		if (w > 70) {
			putf(p, "<text x=\"%.1f\" y=\"17\" fill=\"#fff\" font-size=\"11\">", x + 4);
			put_esc(p, s->name[i]);
			putf(p, " %s</text>", d);
		}
		x += w;
	}
	put(p, "</svg>\n<table><tr><th>stage</th><th>time</th></tr>");
	for (i = 0; i < s->n; i++) {
		sl_duration_format(d, sizeof(d), s->ms[i]);
		put(p, "<tr><td>");
		put_esc(p, s->name[i]);
		putf(p, "</td><td>%s</td></tr>", d);
	}
	put(p, "</table>\n");
}

static void html_events(struct page *p, struct report *r, const char *run_id)
{
	char when[40];
	size_t i;

	put(p, "<table><tr><th>time</th><th>from</th><th>to</th><th>reason</th></tr>\n");
	for (i = 0; i < r->nev; i++) {
		if (!r->ev[i].run_id || strcmp(r->ev[i].run_id, run_id))
			continue;
		sl_time_iso(when, sizeof(when), r->ev[i].at_ms);
		putf(p, "<tr><td>%s</td><td>", when);
		put_esc(p, r->ev[i].from_state ? r->ev[i].from_state : "new");
		put(p, "</td><td>");
		put_esc(p, r->ev[i].to_state);
		put(p, "</td><td>");
		put_esc(p, r->ev[i].reason);
		put(p, "</td></tr>\n");
	}
	put(p, "</table>\n");
}

static void html_run(struct page *p, struct report *r, const struct store_run *run)
{
	struct wo *w = find_wo(r, run->work_order_id);
	struct stages s;

	put(p, "<section id=\"run-");
	put_esc(p, run->id);
	put(p, "\"><h3><code>");
	put_esc(p, run->id);
	put(p, "</code> ");
	put_esc(p, run->work_order_id);
	put(p, ": ");
	put_esc(p, w ? w->title : "");
	put(p, " ");
	badge(p, run_state_name(run->state));
	put(p, "</h3>\n<p class=\"muted\">");
	put_esc(p, run->reason);
	put(p, "</p>\n");
	run_stages(r, run, &s);
	html_stage_bar(p, &s);
	html_events(p, r, run->id);
	put(p, "</section>\n");
}

/* A car's place and what it does: "car 2 of 3, testing on top of WO-12". */
static void car_cell(struct page *p, struct report *r, const struct artifact_car *c)
{
	char *wo = artifact_run_work_order(r->ctx, c->ahead);
	char el[32];

	if (c->position)
		putf(p, "car %zu of %zu, ", c->position, c->cars);
	else
		put(p, "out of the line, ");
	put_esc(p, c->status);
	if (!strcmp(c->status, "waiting")) {
		put(p, " for a place in the train");
	} else if (c->ahead) {
		put(p, !strcmp(c->status, "green") ? "; waits for " : " on top of ");
		put_esc(p, wo ? wo : c->ahead);
		put(p, !strcmp(c->status, "green") ? " to land" : "");
	} else {
		put(p, " on the tip");
	}
	if (c->tested_ms && c->started_ms && c->tested_ms >= c->started_ms) {
		sl_duration_format(el, sizeof(el), c->tested_ms - c->started_ms);
		putf(p, " (gates %s)", el);
	}
	free(wo);
}

/* The merge-train cell of a run: its car, or the gate time of its landing. */
static void train_cell(struct page *p, struct report *r, const struct store_run *run)
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
		putf(p, "landed %s, gates %s", json_is_true(json_object_get(t, "green")) ? "green" :
		     "NOT green", el);
	}
	json_decref(t);
	free(dir);
}

static void html_runs(struct page *p, struct report *r)
{
	char el[32];
	size_t i;

	put(p, "<h2>Runs</h2>\n<table><tr><th>run</th><th>work order</th><th>state</th>"
	       "<th>time</th><th>merge train</th><th>reason</th></tr>\n");
	for (i = 0; i < r->nruns; i++) {
		const struct store_run *run = &r->runs[i];
		sl_duration_format(el, sizeof(el), (run->finished_ms ? run->finished_ms :
						     sl_now_ms()) - run->created_ms);
		put(p, "<tr><td><a href=\"#run-");
		put_esc(p, run->id);
		put(p, "\"><code>");
		put_esc(p, run->id);
		put(p, "</code></a></td><td>");
		put_esc(p, run->work_order_id);
		put(p, "</td><td>");
		badge(p, run_state_name(run->state));
		putf(p, "</td><td>%s</td><td>", el);
		train_cell(p, r, run);
		put(p, "</td><td>");
		put_esc(p, run->reason);
		put(p, "</td></tr>\n");
	}
	put(p, "</table>\n<h2>Timelines</h2>\n");
	for (i = 0; i < r->nruns; i++)
		html_run(p, r, &r->runs[i]);
}

int artifact_report_html(struct sl_ctx *ctx, struct sl_buf *out, struct sl_err *err)
{
	struct page p = { out, 0 };
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
	html_runs(&p, &r);
	put(&p, "</body></html>\n");
	if (p.error)
		error = sl_err_set(err, p.error, "the report page is too large to write");
out:
	release(&r);
	return error;
}
