/* sluice serve's pages: the frame, the queue, the runs, the audit. */
#include "serve/serve_int.h"
#include "runner/runner.h"
#include "budget/budget.h"
#include "queue/queue.h"
#include "store/store.h"
#include "train/train.h"
#include "core/time.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void serve__page_begin(struct req *r, struct artifact_page *p, const char *title)
{
	struct serve *sv = r->sv;

	artifact_put(p, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
			"<meta name=\"viewport\" content=\"width=device-width\">"
			"<link rel=\"icon\" href=\"data:,\"><title>");
	artifact_put_esc(p, title);
	artifact_put(p, " - sluice</title><link rel=\"stylesheet\" href=\"/static/desk.css\">"
			"<script src=\"/static/desk.js\" defer></script></head><body>\n<nav>"
			"<b>sluice</b> <a href=\"/\">queue</a> <a href=\"/runs\">runs</a> "
			"<a href=\"/audit\">audit</a> <span class=\"muted\">");
	artifact_put_esc(p, sv->ctx->repo.root);
	artifact_put(p, " &rarr; ");
	artifact_put_esc(p, sv->ctx->cfg->target);
	artifact_putf(p, "%s</span> <span id=\"live-state\" class=\"muted\"></span></nav>\n"
			 "<main id=\"main\" data-seq=\"%lld\">\n",
		      sv->read_only ? " (read-only)" : "", (long long)store_events_last(sv->ctx->st));
}

void serve__page_end(struct req *r, struct artifact_page *p)
{
	(void)r;
	artifact_put(p, "</main>\n<aside><h3>live</h3><ol id=\"live\"></ol></aside>\n</body></html>\n");
	if (p->error)
		serve__error(r, 500, "the page is too large or out of memory");
	else
		serve__answer(r, r->status ? r->status : 200, "text/html; charset=utf-8");
}

const char *serve__ago(char *buf, size_t n, int64_t ms)
{
	int64_t s = (sl_now_ms() - ms) / 1000;

	if (ms <= 0)
		snprintf(buf, n, "-");
	else if (s < 60)
		snprintf(buf, n, "%s ago", s < 2 ? "a second" : "seconds");
	else if (s < 3600)
		snprintf(buf, n, "%lld min ago", (long long)(s / 60));
	else if (s < 48 * 3600)
		snprintf(buf, n, "%lld h ago", (long long)(s / 3600));
	else
		snprintf(buf, n, "%lld days ago", (long long)(s / 86400));
	return buf;
}

/* Where a command of the CLI starts in a reason ("'sluice approve X' or ..."), or NULL. */
static const char *cli_command(const char *s)
{
	static const char *const verbs[] = { "sluice approve", "sluice reject", "sluice retry",
					     "sluice abandon", "sluice request-changes",
					     "sluice show", NULL };
	const char *at = NULL, *f;

	for (const char *const *v = verbs; *v; v++)
		if ((f = strstr(s, *v)) && (!at || f < at))
			at = f;
	return at;
}

/* Cut the end of text[0, *end): separators, then a "then" they leave. */
static void trim_end(char *text, size_t *end)
{
	int k;

	for (k = 0; k < 2; k++) {
		while (*end > 0 && strchr(" ;,:'(", text[*end - 1]))
			text[--*end] = '\0';
		if (!k && *end >= 4 && !strcmp(text + *end - 4, "then") &&
		    (*end == 4 || strchr(" ;,:", text[*end - 5])))
			text[*end -= 4] = '\0';
	}
}

/*
 * A reason on the desk: the repository's absolute path left out (paths
 * relative to it), and from the first command of the CLI on, which the
 * page and its buttons stand for, cut, `tail` said instead ("waiting for a
 * person: 'sluice approve ..." reads "waiting for a person: see below").
 */
void serve__put_reason_tail(struct req *r, struct artifact_page *p, const char *reason,
			    const char *tail)
{
	const char *root = r->sv->ctx->repo.root, *at;
	const char *cmd = r->sv->read_only ? NULL : cli_command(reason); /* no buttons: keep them */
	size_t rl = strlen(root), end = cmd ? (size_t)(cmd - reason) : strlen(reason);
	char *text = strndup(reason, end), *w;
	struct sl_buf b = SL_BUF_INIT;

	if (!text)
		return;
	if (cmd)
		trim_end(text, &end);
	for (w = text; rl && (at = strstr(w, root)) != NULL; w = (char *)at + rl + (at[rl] == '/'))
		sl_buf_add(&b, w, (size_t)(at - w));
	sl_buf_puts(&b, w);
	if (cmd && *tail)
		sl_buf_addf(&b, "%s%s", end ? ": " : "", tail);
	artifact_put_esc(p, sl_buf_cstr(&b));
	sl_buf_release(&b);
	free(text);
}

void serve__put_reason(struct req *r, struct artifact_page *p, const char *reason)
{
	serve__put_reason_tail(r, p, reason, "see below");
}

void serve__action_form(struct req *r, struct artifact_page *p, json_t *run,
			const char *action, const char *label, int comment)
{
	const char *id = json_string_value(json_object_get(run, "id"));
	const char *head = json_string_value(json_object_get(run, "head_commit"));
	const char *state = json_string_value(json_object_get(run, "state"));

	if (r->sv->read_only || !id || !state)
		return;
	artifact_put(p, "<form method=\"post\" class=\"action\" action=\"/runs/");
	artifact_put_esc(p, id);
	artifact_putf(p, "/%s\"><input type=\"hidden\" name=\"csrf\" value=\"%s\">", action,
		      r->sv->csrf);
	/* what this page shows: the action is refused if the run is no longer so */
	artifact_put(p, "<input type=\"hidden\" name=\"head\" value=\"");
	artifact_put_esc(p, head ? head : "");
	artifact_putf(p, "\"><input type=\"hidden\" name=\"attempt\" value=\"%lld\">",
		      (long long)json_integer_value(json_object_get(run, "attempt")));
	artifact_put(p, "<input type=\"hidden\" name=\"state\" value=\"");
	artifact_put_esc(p, state);
	artifact_put(p, "\">");
	if (comment == 3)
		artifact_put(p, "<textarea name=\"comment\" rows=\"3\" cols=\"50\" required "
				"placeholder=\"what to change (goes into the builder's next prompt)\">"
				"</textarea><br>");
	else if (comment)
		artifact_putf(p, "<input type=\"text\" name=\"comment\" placeholder=\"comment%s\" "
				 "size=\"40\">", comment > 1 ? " (required)" : "");
	artifact_putf(p, "<button type=\"submit\" class=\"%s\" name=\"do\" value=\"%s\" id=\"%s-",
		      action, action, action);
	artifact_put_esc(p, id);
	artifact_put(p, "\">");
	artifact_put_esc(p, label);
	artifact_put(p, "</button></form>");
}

/* Abandon's button: a GET of the page that asks (serve__abandon_page), no script needed. */
void serve__abandon_button(struct req *r, struct artifact_page *p, json_t *run)
{
	const char *id = json_string_value(json_object_get(run, "id"));

	if (r->sv->read_only || !id)
		return;
	artifact_put(p, "<form method=\"get\" class=\"action\" action=\"/runs/");
	artifact_put_esc(p, id);
	artifact_put(p, "/abandon\"><button type=\"submit\" class=\"abandon\" id=\"abandon-");
	artifact_put_esc(p, id);
	artifact_put(p, "\">Abandon&hellip;</button></form>");
}

/* A run's id as a link to its page. */
static void run_link(struct artifact_page *p, const char *id)
{
	artifact_put(p, "<a href=\"/runs/");
	artifact_put_esc(p, id);
	artifact_put(p, "\"><code>");
	artifact_put_esc(p, id);
	artifact_put(p, "</code></a>");
}

/* ---- the queue ----------------------------------------------------------- */

/* The newest run of work order `wo`, in a card: its state and how long ago it moved. */
static void card_run(struct req *r, struct artifact_page *p, const char *wo)
{
	struct sl_err err = SL_ERR_INIT;
	struct store_run *runs = NULL;
	size_t n = 0;
	char ago[48];

	if (store_runs_page(r->sv->ctx->st, RUN_STATES_ALL, wo, 0, 1, &runs, &n, &err) != 0 || !n) {
		artifact_put(p, "<span class=\"muted\">no run yet</span>");
		return;
	}
	run_link(p, runs[0].id);
	artifact_put(p, " ");
	artifact_badge(p, run_state_name(runs[0].state));
	artifact_putf(p, " <span class=\"ago\">%s</span>",
		      serve__ago(ago, sizeof(ago), runs[0].updated_ms));
	store_runs_free(runs, n);
}

static void card(struct req *r, struct artifact_page *p, const struct queue_item *it, int runs)
{
	size_t j;

	artifact_put(p, "<div class=\"card\"><a href=\"/runs?wo=");
	artifact_put_esc(p, it->id);
	artifact_put(p, "\"><b>");
	artifact_put_esc(p, it->id);
	artifact_put(p, "</b></a> ");
	artifact_put_esc(p, it->title);
	if (it->priority == QUEUE_PRIORITY_URGENT)
		artifact_put(p, " <span class=\"error\">urgent</span>");
	else
		artifact_putf(p, " <span class=\"muted\">p%d</span>", it->priority);
	if (it->depends_on && it->depends_on[0]) {
		artifact_put(p, "<br><span class=\"muted\">after ");
		for (j = 0; it->depends_on[j]; j++) {
			artifact_put(p, j ? ", " : "");
			artifact_put_esc(p, it->depends_on[j]);
		}
		artifact_put(p, "</span>");
	}
	artifact_put(p, "<br><span class=\"why\">");
	artifact_put_esc(p, it->explain ? it->explain : it->reason);
	artifact_put(p, "</span><br>");
	if (runs)
		card_run(r, p, it->id);
	artifact_put(p, "</div>\n");
}

/*
 * The queue as a board: a column per work-order state, in the order a
 * person looks (what runs, what is next, what waits, what went wrong, what
 * is done), each card with its title, why (--explain), and its newest run
 * with how long ago it moved (for the first SERVE_PAGE_RUNS * 4 cards).
 */
static void queue_board(struct req *r, struct artifact_page *p, const struct queue_plan *plan)
{
	static const enum wo_state order[] = { WO_RUNNING, WO_READY,  WO_WAITING, WO_BLOCKED,
					       WO_FAILED,  WO_INVALID, WO_DONE,    WO_SKIPPED };
	size_t i, k, count, cards = 0;

	artifact_put(p, "<h2>Queue</h2>\n");
	if (!plan->n) {
		artifact_put(p, "<p class=\"muted\">no work orders in the inbox</p>\n");
		return;
	}
	artifact_put(p, "<div id=\"queue\" class=\"board\">\n");
	for (k = 0; k < sizeof(order) / sizeof(order[0]); k++) {
		for (i = count = 0; i < plan->n; i++)
			count += wo_state_is(plan->items[i].state, order[k]);
		if (!count)
			continue;
		artifact_putf(p, "<div class=\"column\"><h3>%s <span class=\"muted\">%zu</span></h3>\n",
			      wo_state_name(order[k]), count);
		for (i = 0; i < plan->n; i++)
			if (wo_state_is(plan->items[i].state, order[k]))
				card(r, p, &plan->items[i], cards++ < SERVE_PAGE_RUNS * 4);
		artifact_put(p, "</div>\n");
	}
	artifact_put(p, "</div>\n");
}

static void inbox_problems(struct artifact_page *p, const struct store_inbox_error *e, size_t n)
{
	size_t i;

	if (!n)
		return;
	artifact_put(p, "<h2>Problems in the inbox</h2>\n<ul class=\"error\">\n");
	for (i = 0; i < n; i++) {
		artifact_put(p, "<li>");
		artifact_put_esc(p, e[i].message);
		artifact_put(p, "</li>\n");
	}
	artifact_put(p, "</ul>\n<p class=\"muted\">fix them; <code>sluice check</code> says how</p>\n");
}

/* A frozen target (sluice freeze, merge.freeze), first on the queue page. */
static void frozen_banner(struct req *r, struct artifact_page *p)
{
	struct train_freeze f;
	char line[512];

	if (!train_frozen(r->sv->ctx, sl_now_ms(), &f))
		return;
	train_freeze_line(r->sv->ctx, &f, line, sizeof(line));
	artifact_put(p, "<p id=\"frozen\" class=\"error\">");
	artifact_put_esc(p, line);
	artifact_putf(p, " <span class=\"muted\">(%s%s%s)</span></p>\n",
		      f.by_person ? "sluice unfreeze ends the freeze" : "",
		      f.by_person && f.by_window ? "; " : "",
		      f.by_window ? "a window of merge.freeze in the config holds" : "");
}

/* The runs that wait on a person, first on the queue page. */
static void waiting_runs(struct req *r, struct artifact_page *p)
{
	struct sl_err err = SL_ERR_INIT;
	struct store_run *runs = NULL;
	size_t n = 0, i;
	char ago[48];

	if (store_runs_page(r->sv->ctx->st, run_states_where(run_state_needs_person), NULL, 0,
			    SERVE_PAGE_RUNS, &runs, &n, &err) != 0 || !n)
		return;
	artifact_put(p, "<h2>Waiting for you</h2>\n<table id=\"waiting\"><tr><th>run</th><th>work "
			"order</th><th>state</th><th>since</th><th>reason</th></tr>\n");
	for (i = 0; i < n; i++) {
		artifact_put(p, "<tr><td>");
		run_link(p, runs[i].id);
		artifact_put(p, "</td><td>");
		artifact_put_esc(p, runs[i].work_order_id);
		artifact_put(p, "</td><td>");
		artifact_badge(p, run_state_name(runs[i].state));
		artifact_putf(p, "</td><td class=\"ago\">%s</td><td>",
			      serve__ago(ago, sizeof(ago), runs[i].updated_ms));
		serve__put_reason(r, p, runs[i].reason);
		artifact_put(p, "</td></tr>\n");
	}
	artifact_put(p, "</table>\n");
	store_runs_free(runs, n);
}

void serve__queue_page(struct req *r)
{
	struct sl_ctx *ctx = r->sv->ctx;
	struct queue_plan_opts opts = QUEUE_PLAN_OPTS_INIT;
	struct queue_plan plan = QUEUE_PLAN_INIT;
	struct store_inbox_error *errs = NULL;
	struct artifact_page p = { &r->out, 0 };
	struct sl_err err = SL_ERR_INIT;
	char held[320];
	size_t nerrs = 0;

	opts.allow_overlap = ctx->cfg->queue.allow_overlap;
	opts.jobs = ctx->cfg->queue.jobs;
	/* a spent budget holds every ready card (docs/budgets.md); unreadable: none held */
	if (budget_spent(ctx->cfg, ctx->st, sl_now_ms(), held, sizeof(held), &err) > 0)
		opts.held = held;
	/* as `sluice queue`: the inbox as it is now, not as the last tick saw it */
	if (queue_ingest(ctx->st, ctx->repo.root, ctx->cfg->queue.inbox, NULL, &err) != 0 ||
	    queue_plan(&plan, ctx->st, &opts, &err) != 0 ||
	    store_inbox_errors_list(ctx->st, &errs, &nerrs, &err) != 0) {
		serve__error(r, 500, "cannot read the queue: %s", err.msg);
		goto out;
	}
	serve__page_begin(r, &p, "queue");
	frozen_banner(r, &p);
	waiting_runs(r, &p);
	queue_board(r, &p, &plan);
	inbox_problems(&p, errs, nerrs);
	if (artifact_graph_html(ctx, &p, &err) != 0)
		artifact_put(&p, "<p class=\"error\">the dependency graph cannot be read</p>");
	artifact_flakes_html(ctx, &p);
	artifact_spend_html(ctx, &p);
	artifact_watch_html(ctx, &p);
	serve__page_end(r, &p);
out:
	store_inbox_errors_free(errs, nerrs);
	queue_plan_release(&plan);
}

/* ---- the runs ------------------------------------------------------------- */

struct runs_filter {
	run_state_set states;
	const char *state;  /* the query's, or NULL */
	const char *wo;     /* the query's, or NULL */
	long page;          /* 0-based */
};

static void runs_form(struct artifact_page *p, const struct runs_filter *f)
{
	int s;

	artifact_put(p, "<form method=\"get\" action=\"/runs\" class=\"filter\">state <select "
			"name=\"state\"><option value=\"\">any</option>");
	for (s = 0; s < RUN_STATE_COUNT; s++)
		artifact_putf(p, "<option%s>%s</option>",
			      f->state && !strcmp(f->state, run_state_name(s)) ? " selected" : "",
			      run_state_name(s));
	artifact_put(p, "</select> work order <input type=\"text\" name=\"wo\" size=\"16\" value=\"");
	artifact_put_esc(p, f->wo ? f->wo : "");
	artifact_put(p, "\"> <button type=\"submit\">show</button></form>\n");
}

static void runs_rows(struct req *r, struct artifact_page *p, const struct store_run *runs,
		      size_t n)
{
	char when[40], ago[48];
	size_t i;

	artifact_put(p, "<table id=\"runs\"><tr><th>run</th><th>work order</th><th>state</th>"
			"<th>attempt</th><th>updated</th><th>reason</th></tr>\n");
	for (i = 0; i < n; i++) {
		sl_time_iso(when, sizeof(when), runs[i].updated_ms);
		artifact_put(p, "<tr><td>");
		run_link(p, runs[i].id);
		artifact_put(p, "</td><td>");
		artifact_put_esc(p, runs[i].work_order_id);
		artifact_put(p, "</td><td>");
		artifact_badge(p, run_state_name(runs[i].state));
		artifact_putf(p, "</td><td>%d</td><td title=\"%s\">%s</td><td>", runs[i].attempt, when,
			      serve__ago(ago, sizeof(ago), runs[i].updated_ms));
		serve__put_reason(r, p, runs[i].reason);
		artifact_put(p, "</td></tr>\n");
	}
	artifact_put(p, "</table>\n");
}

/* "?state=..&wo=..&page=N" for the pager's links. */
static void page_link(struct artifact_page *p, const struct runs_filter *f, long page,
		      const char *label)
{
	artifact_put(p, " <a href=\"/runs?state=");
	artifact_put_esc(p, f->state ? f->state : "");
	artifact_put(p, "&amp;wo=");
	artifact_put_esc(p, f->wo ? f->wo : "");
	artifact_putf(p, "&amp;page=%ld\">%s</a>", page + 1, label);
}

static int runs_filter_read(struct req *r, struct runs_filter *f)
{
	const char *pg = serve__arg(r, "page");
	enum run_state s;

	memset(f, 0, sizeof(*f));
	f->states = RUN_STATES_ALL;
	f->state = serve__arg(r, "state");
	f->wo = serve__arg(r, "wo");
	if (f->state && !*f->state)
		f->state = NULL;
	if (f->wo && !*f->wo)
		f->wo = NULL;
	if (f->state && run_state_parse(f->state, &s) != 0) {
		serve__error(r, 400, "no run state is called '%s'", f->state);
		return -1;
	}
	if (f->state)
		f->states = RUN_SET(s);
	f->page = pg ? strtol(pg, NULL, 10) - 1 : 0;
	if (f->page < 0 || f->page > 10000000)
		f->page = 0;
	return 0;
}

void serve__runs_page(struct req *r)
{
	struct artifact_page p = { &r->out, 0 };
	struct sl_err err = SL_ERR_INIT;
	struct store_run *runs = NULL;
	struct runs_filter f;
	size_t n = 0;
	int total;
	long pages;

	if (runs_filter_read(r, &f) != 0)
		return;
	if ((total = store_runs_count_of(r->sv->ctx->st, f.states, f.wo, &err)) < 0 ||
	    store_runs_page(r->sv->ctx->st, f.states, f.wo, (int64_t)f.page * SERVE_PAGE_RUNS,
			    SERVE_PAGE_RUNS, &runs, &n, &err) != 0) {
		serve__error(r, 500, "cannot read the runs: %s", err.msg);
		return;
	}
	pages = (total + SERVE_PAGE_RUNS - 1) / SERVE_PAGE_RUNS;
	serve__page_begin(r, &p, "runs");
	artifact_putf(&p, "<h2>Runs</h2>\n<p class=\"muted\">%d run%s, page %ld of %ld", total,
		      total == 1 ? "" : "s", f.page + 1, pages ? pages : 1);
	if (f.page > 0)
		page_link(&p, &f, f.page - 1, "&larr; newer");
	if (f.page + 1 < pages)
		page_link(&p, &f, f.page + 1, "older &rarr;");
	artifact_put(&p, "</p>\n");
	runs_form(&p, &f);
	runs_rows(r, &p, runs, n);
	serve__page_end(r, &p);
	store_runs_free(runs, n);
}

/* ---- the audit ------------------------------------------------------------ */

static void audit_findings(struct artifact_page *p, const struct artifact_audit_result *res)
{
	size_t i;

	artifact_put(p, "<table id=\"findings\"><tr><th>run</th><th>what is wrong</th><th>where"
			"</th></tr>\n");
	for (i = 0; i < res->n; i++) {
		artifact_put(p, "<tr><td>");
		run_link(p, res->v[i].run);
		artifact_put(p, "</td><td>");
		artifact_put_esc(p, res->v[i].what);
		artifact_put(p, "</td><td><code>");
		artifact_put_esc(p, res->v[i].where);
		artifact_put(p, "</code></td></tr>\n");
	}
	artifact_put(p, "</table>\n");
}

static void audit_notes(struct artifact_page *p, const struct artifact_audit_result *res)
{
	size_t i;

	if (!res->nnotes)
		return;
	artifact_put(p, "<h3>Notes</h3>\n<ul>\n");
	for (i = 0; i < res->nnotes; i++) {
		artifact_put(p, "<li>");
		artifact_put_esc(p, res->notes[i].kind);
		artifact_put(p, ": <code>");
		artifact_put_esc(p, res->notes[i].commit);
		artifact_put(p, "</code> ");
		artifact_put_esc(p, res->notes[i].what);
		artifact_put(p, "</li>\n");
	}
	artifact_put(p, "</ul>\n");
}

void serve__audit_page(struct req *r)
{
	struct artifact_audit_result res = ARTIFACT_AUDIT_RESULT_INIT;
	struct artifact_page p = { &r->out, 0 };
	struct sl_err err = SL_ERR_INIT;

	if (artifact_audit(r->sv->ctx, NULL, 0, &res, &err) != 0) {
		serve__error(r, 500, "the audit could not run: %s", err.msg);
		goto out;
	}
	serve__page_begin(r, &p, "audit");
	artifact_putf(&p, "<h2>Audit</h2>\n<p id=\"audit-verdict\" class=\"%s\">%s: %zu merged "
			  "run%s, %zu artifact files, %zu links of the manifest chain, %zu commits "
			  "of the target's line checked; %zu landings with a green gate record; "
			  "%zu problem%s</p>\n",
		      res.n ? "error" : "ok", res.n ? "FAILED" : "OK", res.runs,
		      res.runs == 1 ? "" : "s", res.artifacts, res.manifests, res.line, res.gated,
		      res.n, res.n == 1 ? "" : "s");
	if (res.n)
		audit_findings(&p, &res);
	audit_notes(&p, &res);
	artifact_put(&p, "<p class=\"muted\">the same as <code>sluice audit</code>: what was "
			 "reviewed is what was merged</p>\n");
	serve__page_end(r, &p);
out:
	artifact_audit_result_release(&res);
}
