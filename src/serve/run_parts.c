/*
 * sluice serve: what a run's page shows above its actions, so that a person
 * decides there (docs/serve.md "A run"): the work order's goal and
 * acceptance criteria as the run ran it, the gates with a failing gate's
 * output, the reviewer's verdict per criterion, the diff, the builder's log.
 */
#include "serve/serve_int.h"
#include "queue/queue.h"
#include "store/store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GATE_TAIL (8 * 1024) /* bytes of a failing gate's output shown */
#define LOG_TAIL (16 * 1024) /* bytes of the builder's log shown */

static const char *js(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? s : "";
}

/* The work order as the run ran it (its copy in the run folder): goal, criteria, non-goals. */
void serve__run_work_order(struct req *r, struct artifact_page *p, json_t *d)
{
	const char *id = js(json_object_get(d, "run"), "id");
	char *text = serve__run_file(r, id, "work_order.md", QUEUE_WO_MAX_BYTES, 0);
	struct sl_err err = SL_ERR_INIT;
	struct queue_wo *wo = NULL;
	sl_strv c;

	if (!text || queue_parse(&wo, "work_order.md", text, strlen(text), &err) != 0)
		goto out;
	artifact_put(p, "<section id=\"work-order\"><h3>What was asked</h3>\n<p id=\"goal\">");
	artifact_put_esc(p, wo->goal && *wo->goal ? wo->goal : "(no goal: see the work order's text)");
	artifact_put(p, "</p>\n");
	if (wo->acceptance_criteria && *wo->acceptance_criteria) {
		artifact_put(p, "<h4>Acceptance criteria</h4>\n<ol id=\"criteria\">");
		for (c = wo->acceptance_criteria; *c; c++) {
			artifact_put(p, "<li>");
			artifact_put_esc(p, *c);
			artifact_put(p, "</li>");
		}
		artifact_put(p, "</ol>\n");
	}
	if (wo->non_goals && *wo->non_goals) {
		artifact_put(p, "<h4>Not to do</h4>\n<ul id=\"non-goals\">");
		for (c = wo->non_goals; *c; c++) {
			artifact_put(p, "<li>");
			artifact_put_esc(p, *c);
			artifact_put(p, "</li>");
		}
		artifact_put(p, "</ul>\n");
	}
	artifact_put(p, "</section>\n");
out:
	queue_wo_free(wo);
	free(text);
}

/* The newest attempt that has a key (gates, review); NULL when none. */
static json_t *newest_with(json_t *d, const char *key, json_int_t *n)
{
	json_t *a = json_object_get(d, "attempts"), *e;
	size_t i = json_array_size(a);

	while (i-- > 0) {
		e = json_array_get(a, i);
		if (json_is_array(json_object_get(e, key)) || json_is_object(json_object_get(e, key))) {
			*n = json_integer_value(json_object_get(e, "n"));
			return json_object_get(e, key);
		}
	}
	return NULL;
}

/*
 * The log a gate's entry names, if it is one sluice writes: gates/<name>.log
 * or attempts/<n>/gates/<name>.log of that gate. gates.json lies in the run
 * folder, where a builder could rewrite it to name another file (its
 * worktree's): that is not shown.
 */
static int gate_log_ok(const char *log, const char *name)
{
	size_t n = strlen(name), l = strlen(log);

	if (!n || strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-") != n)
		return 0;
	if (!strncmp(log, "attempts/", 9)) {
		log += 9;
		log += strspn(log, "0123456789");
		if (*log++ != '/')
			return 0;
		l = strlen(log);
	}
	return l == n + 10 && !strncmp(log, "gates/", 6) && !strncmp(log + 6, name, n) &&
	       !strcmp(log + 6 + n, ".log");
}

/* A failing gate's output: the tail of its log, escaped, in the page. */
static void gate_log(struct req *r, struct artifact_page *p, const char *run, json_t *g)
{
	const char *log = js(g, "log");
	char *text = gate_log_ok(log, js(g, "name")) ? serve__run_file(r, run, log, GATE_TAIL, 1)
						     : NULL;

	artifact_put(p, "<tr class=\"gate-out\"><td colspan=\"4\">");
	if (*js(g, "error")) {
		artifact_put(p, "<p class=\"error\">");
		artifact_put_esc(p, js(g, "error"));
		artifact_put(p, "</p>");
	}
	artifact_putf(p, "<pre class=\"gate-log\">");
	artifact_put_esc_lines(p, text ? text : "(its output is not kept)");
	artifact_putf(p, "</pre><span class=\"muted\">the last %d KiB of ", GATE_TAIL / 1024);
	artifact_put_esc(p, *log ? log : "its log");
	artifact_put(p, "</span></td></tr>\n");
	free(text);
}

void serve__run_gates(struct req *r, struct artifact_page *p, json_t *d)
{
	const char *run = js(json_object_get(d, "run"), "id");
	json_int_t n = 0;
	json_t *gates = newest_with(d, "gates", &n), *g;
	size_t i;

	if (!json_is_array(gates) || !json_array_size(gates))
		return;
	artifact_putf(p, "<section id=\"gates\"><h3>Gates of attempt %lld</h3>\n<table class=\"gates\">"
			 "<tr><th>gate</th><th>result</th><th>exit</th><th>seconds</th></tr>\n",
		      (long long)n);
	json_array_foreach(gates, i, g) {
		int ok = json_is_true(json_object_get(g, "passed"));
		artifact_putf(p, "<tr class=\"gate %s\"><td>", ok ? "passed" : "failed"); /* not a run state */
		artifact_put_esc(p, js(g, "name"));
		artifact_putf(p, "</td><td class=\"%s\">%s%s</td><td>%lld</td><td>%.1f</td></tr>\n",
			      ok ? "ok" : "error", ok ? "passed" : "failed", /* not a run state */
			      json_is_true(json_object_get(g, "timed_out")) ? " (timed out)" : "",
			      (long long)json_integer_value(json_object_get(g, "exit_code")),
			      (double)json_integer_value(json_object_get(g, "duration_ms")) / 1000.0);
		if (!ok)
			gate_log(r, p, run, g);
	}
	artifact_put(p, "</table></section>\n");
}

/* The reviewer's verdict, per criterion: the run's, else its newest attempt's. */
void serve__run_verdict(struct artifact_page *p, json_t *d)
{
	json_int_t n = 0;
	json_t *v = json_object_get(d, "verdict"), *c;
	size_t i;

	if (!json_is_object(v))
		v = newest_with(d, "review", &n);
	if (!json_is_object(v))
		return;
	artifact_put(p, "<section id=\"verdict\"><h3>The reviewer's verdict</h3>\n<p><b>");
	artifact_put_esc(p, js(v, "verdict"));
	artifact_put(p, "</b> by ");
	artifact_put_esc(p, js(v, "reviewer"));
	artifact_put(p, *js(v, "comments") ? ": " : "");
	artifact_put_esc(p, js(v, "comments"));
	artifact_put(p, "</p>\n<ul class=\"criteria\">");
	json_array_foreach(json_object_get(v, "criteria"), i, c) {
		int met = json_is_true(json_object_get(c, "met"));
		artifact_putf(p, "<li class=\"criterion %s\"><b>%s</b> ", met ? "met" : "unmet",
			      met ? "&#10003; met" : "&#10007; not met");
		artifact_put_esc(p, js(c, "criterion"));
		artifact_put(p, *js(c, "note") ? " &mdash; " : "");
		artifact_put_esc(p, js(c, "note"));
		artifact_put(p, "</li>");
	}
	artifact_put(p, "</ul></section>\n");
}

/* The diff of the run, on its page: the first SERVE_DIFF_FILES files. */
void serve__run_diff(struct req *r, struct artifact_page *p, json_t *d)
{
	json_t *run = json_object_get(d, "run");
	const char *id = js(run, "id"), *view = serve__arg(r, "view"), *ex = serve__arg(r, "expand");
	int split = view && !strcmp(view, "split"), expand = ex && !strcmp(ex, "all");
	struct sl_err err = SL_ERR_INIT;
	struct serve_diff v;
	char base[160];

	artifact_put(p, "<section id=\"diff\"><h3>The diff</h3>\n");
	if (serve__diff_open(&v, r->sv->ctx, js(run, "base_commit"), js(run, "head_commit"),
			     &err) != 0) {
		artifact_put(p, "<p class=\"muted\">");
		artifact_put_esc(p, err.msg);
		artifact_put(p, "</p></section>\n");
		return;
	}
	snprintf(base, sizeof(base), "/runs/%s", id);
	serve__diff_views(p, base, NULL, split, expand);
	serve__diff_files(p, &v, 0, SERVE_DIFF_FILES, split, expand);
	if (v.n > SERVE_DIFF_FILES) {
		artifact_putf(p, "<p>%zu more files: <a href=\"/runs/", v.n - SERVE_DIFF_FILES);
		artifact_put_esc(p, id);
		artifact_put(p, "/diff?page=2\">the whole diff</a></p>\n");
	}
	artifact_put(p, "</section>\n");
	serve__diff_close(&v);
}

/*
 * The builder's log: its tail; while the run is being built the page's
 * script fetches /runs/<id>/log again every two seconds (data-poll).
 */
void serve__run_log(struct req *r, struct artifact_page *p, json_t *d)
{
	json_t *run = json_object_get(d, "run");
	const char *id = js(run, "id");
	char *text = serve__run_file(r, id, "builder.log", LOG_TAIL, 1);
	enum run_state s;
	int live = run_state_parse(js(run, "state"), &s) == 0 && !run_state_is_final(s) &&
		   s != RUN_AWAITING_REVIEW && s != RUN_MERGE_CONFLICT;

	if (!text && !live)
		return;
	artifact_putf(p, "<details class=\"log\"%s><summary>The builder's log%s (the last %d KiB, "
			 "<a href=\"/runs/", live ? " open data-auto" : "",
		      live ? ", live" : "", LOG_TAIL / 1024);
	artifact_put_esc(p, id);
	artifact_put(p, "/log\">as text</a>)</summary><pre id=\"builder-log\"");
	if (live) {
		artifact_put(p, " data-poll=\"/runs/");
		artifact_put_esc(p, id);
		artifact_put(p, "/log\"");
	}
	artifact_put(p, ">");
	artifact_put_esc_lines(p, text ? text : "");
	artifact_put(p, "</pre></details>\n");
	free(text);
}

void serve__builder_log(struct req *r, const char *run)
{
	struct store_run sr;
	struct sl_err err = SL_ERR_INIT;
	char *text = NULL;

	memset(&sr, 0, sizeof(sr));
	if (store_run_get(r->sv->ctx->st, run, &sr, &err) != 0) {
		serve__error(r, 404, "%s", err.msg);
		return;
	}
	text = serve__run_file(r, sr.id, "builder.log", LOG_TAIL, 1);
	sl_buf_puts(&r->out, text ? text : "");
	serve__answer(r, 200, "text/plain; charset=utf-8");
	free(text);
	store_run_release(&sr);
}
