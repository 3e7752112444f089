/* sluice serve: a run's page (its dossier), its diff, its conflict, its artifacts. */
#include "serve/serve_int.h"
#include "store/store.h"
#include "core/fs.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *js(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? s : "";
}

/* The dossier of `run`, or an error page (404 for an unknown run) and NULL. */
static json_t *dossier(struct req *r, const char *run)
{
	struct sl_err err = SL_ERR_INIT;
	json_t *d = NULL;
	int rc = artifact_dossier(r->sv->ctx, run, &d, &err);

	if (rc == SL_ENOTFOUND || rc == SL_EAMBIGUOUS)
		serve__error(r, 404, "%s", err.msg);
	else if (rc)
		serve__error(r, 500, "cannot read run %s: %s", run, err.msg);
	return rc ? NULL : d;
}

/*
 * A file of a run folder, for the page: `name` relative to the folder, read
 * under the guard of .system (never through a link), its first `max` bytes
 * (tail: its last), NUL-terminated. NULL when it is not there, cannot be
 * read, or (not tail) is larger than `max`.
 */
char *serve__run_file(struct req *r, const char *run, const char *name, size_t max, int tail)
{
	struct sl_buf b = SL_BUF_INIT;
	struct sl_err err = SL_ERR_INIT;
	char *path = sl_path_fmt("%s/%s/%s", r->sv->ctx->repo.runs_dir, run, name);
	struct stat st;
	ssize_t got = 1;
	char chunk[4096];
	int fd = -1, ok;

	ok = path && serve__id_ok(run) && sl_path_is_safe_relative(name) &&
	     sl_open_file(path, O_RDONLY | O_NONBLOCK, 0, &fd, &err) == 0 && fstat(fd, &st) == 0 &&
	     S_ISREG(st.st_mode) && (tail || (size_t)st.st_size <= max);
	if (ok && tail && (size_t)st.st_size > max)
		ok = lseek(fd, st.st_size - (off_t)max, SEEK_SET) >= 0;
	while (ok && got > 0 && b.len < max) {
		got = read(fd, chunk, sizeof(chunk) < max - b.len ? sizeof(chunk) : max - b.len);
		ok = got >= 0 && (got == 0 || sl_buf_add(&b, chunk, (size_t)got) == 0);
	}
	if (fd >= 0)
		close(fd);
	free(path);
	if (!ok || sl_buf_add(&b, "", 0) != 0) {
		sl_buf_release(&b);
		return NULL;
	}
	return b.ptr ? sl_buf_detach(&b) : strdup("");
}

static char *run_file(struct req *r, const char *run, const char *name, size_t max)
{
	return serve__run_file(r, run, name, max, 0);
}

static void pre(struct artifact_page *p, const char *cls, const char *text)
{
	artifact_putf(p, "<pre class=\"%s\">", cls);
	artifact_put_esc_lines(p, text);
	artifact_put(p, "</pre>\n");
}

/*
 * The merge commit once the run merged (the run's row, else merge.json's),
 * "not merged" before; the reviewer on a row of its own.
 */
static void merge_rows(struct artifact_page *p, json_t *run)
{
	const char *m = js(run, "merge_commit");

	artifact_put(p, "<tr><th>merge</th><td>");
	if (*m) {
		artifact_put(p, "<code>");
		artifact_put_esc(p, m);
		artifact_put(p, "</code>");
	} else {
		artifact_put(p, "<span class=\"muted\">not merged</span>");
	}
	if (*js(run, "merge_status")) {
		artifact_put(p, " <span class=\"muted\">");
		artifact_put_esc(p, js(run, "merge_status"));
		artifact_put(p, "</span>");
	}
	artifact_put(p, "</td></tr>\n");
	if (*js(run, "reviewer")) {
		artifact_put(p, "<tr><th>reviewer</th><td>");
		artifact_put_esc(p, js(run, "reviewer"));
		artifact_put(p, "</td></tr>\n");
	}
}

static void run_head(struct req *r, struct artifact_page *p, json_t *d)
{
	json_t *run = json_object_get(d, "run"), *wo = json_object_get(d, "work_order");

	artifact_put(p, "<h2>Run <code>");
	artifact_put_esc(p, js(run, "id"));
	artifact_put(p, "</code> ");
	artifact_badge(p, js(run, "state"));
	artifact_put(p, "</h2>\n<p id=\"reason\">");
	serve__put_reason(r, p, js(run, "reason"));
	artifact_put(p, "</p>\n<table class=\"facts\"><tr><th>work order</th><td><a href=\"/runs?wo=");
	artifact_put_esc(p, js(wo, "id"));
	artifact_put(p, "\">");
	artifact_put_esc(p, js(wo, "id"));
	artifact_put(p, "</a> ");
	artifact_put_esc(p, js(wo, "title"));
	artifact_put(p, "</td></tr>\n<tr><th>branch</th><td><code>");
	artifact_put_esc(p, js(run, "branch_name"));
	artifact_put(p, "</code></td></tr>\n<tr><th>base / head</th><td><code>");
	artifact_put_esc(p, js(run, "base_commit"));
	artifact_put(p, "</code> / <code>");
	artifact_put_esc(p, js(run, "head_commit"));
	artifact_put(p, "</code></td></tr>\n");
	merge_rows(p, run);
	artifact_putf(p, "<tr><th>attempt</th><td>%lld (%s)</td></tr></table>\n",
		      (long long)json_integer_value(json_object_get(run, "attempt")), js(run, "mode"));
}

/* The person's buttons for the run's state: the same calls as the CLI's commands. */
static void actions(struct req *r, struct artifact_page *p, json_t *d)
{
	json_t *run = json_object_get(d, "run");
	enum run_state s;

	if (r->sv->read_only || run_state_parse(js(run, "state"), &s) != 0)
		return;
	artifact_put(p, "<div class=\"actions\" id=\"actions\">");
	if (s == RUN_AWAITING_REVIEW) {
		serve__action_form(r, p, run, "approve", "Approve", 1);
		serve__action_form(r, p, run, "request-changes", "Request changes", 3);
		serve__action_form(r, p, run, "reject", "Reject", 2);
	}
	if (s == RUN_MERGE_CONFLICT || s == RUN_FAILED || s == RUN_REJECTED ||
	    s == RUN_REVIEWING || s == RUN_APPROVED)
		serve__action_form(r, p, run, "retry", "Retry", 0);
	if (!run_state_is_final(s)) /* the runner refuses to abandon a finished run */
		serve__abandon_button(r, p, run);
	artifact_put(p, "</div>\n");
}

/*
 * What to do next, as the desk says it: what no button does (resolving a
 * conflict in the run's worktree, named relative to the repository), never
 * the commands the buttons below stand for.
 */
static void desk_next(struct req *r, struct artifact_page *p, json_t *d)
{
	json_t *run = json_object_get(d, "run");
	enum run_state s;

	if (run_state_parse(js(run, "state"), &s) != 0)
		return;
	if (s == RUN_AWAITING_REVIEW)
		artifact_put(p, "<p class=\"next\">Read what was asked, the gates, the verdict and "
				"the diff above; then approve, request changes (the builder tries "
				"again with your comment) or reject.</p>\n");
	else if (s == RUN_MERGE_CONFLICT && *js(d, "next")) {
		artifact_put(p, "<h3>What to do next</h3>\n<p class=\"next\">In a terminal: ");
		serve__put_reason_tail(r, p, js(d, "next"), "");
		artifact_put(p, "; then Retry below. The run's worktree waits clean at its head, so "
				"the merge of the target brings the conflict back; the resolution is "
				"checked for conflict markers, goes through the run's gates and "
				"review, and a tick merges it. Or Abandon.</p>\n");
	}
}

static void links(struct req *r, struct artifact_page *p, json_t *d)
{
	const char *id = js(json_object_get(d, "run"), "id");

	artifact_put(p, "<p class=\"links\"><a id=\"diff-link\" href=\"/runs/");
	artifact_put_esc(p, id);
	artifact_put(p, "/diff\">the whole diff</a>");
	if (json_is_object(json_object_get(d, "conflict"))) {
		artifact_put(p, " &middot; <a id=\"conflict-link\" href=\"/runs/");
		artifact_put_esc(p, id);
		artifact_put(p, "/conflict\">the conflict</a>");
	}
	artifact_put(p, "</p>\n");
	desk_next(r, p, d);
}

static void timeline(struct req *r, struct artifact_page *p, json_t *d)
{
	json_t *e;
	size_t i;

	artifact_put(p, "<h3>Timeline</h3>\n<table id=\"timeline\"><tr><th>at</th><th>from</th>"
			"<th>to</th><th>reason</th></tr>\n");
	json_array_foreach(json_object_get(d, "timeline"), i, e) {
		artifact_put(p, "<tr><td>");
		artifact_put_esc(p, js(e, "at"));
		artifact_put(p, "</td><td>");
		artifact_put_esc(p, *js(e, "from") ? js(e, "from") : "new");
		artifact_put(p, "</td><td>");
		artifact_badge(p, js(e, "to"));
		artifact_put(p, "</td><td>");
		serve__put_reason(r, p, js(e, "reason"));
		artifact_put(p, "</td></tr>\n");
	}
	artifact_put(p, "</table>\n");
}

static void gates_cell(struct artifact_page *p, json_t *gates)
{
	json_t *g;
	size_t i;

	json_array_foreach(gates, i, g) {
		int ok = json_is_true(json_object_get(g, "passed"));
		artifact_putf(p, "<span class=\"%s\">", ok ? "ok" : "error");
		artifact_put_esc(p, js(g, "name"));
		artifact_putf(p, " %s</span> ", ok ? "passed" : "failed"); /* not a run state */
	}
}

static void verdict(struct artifact_page *p, json_t *v)
{
	json_t *c;
	size_t i;

	if (!json_is_object(v))
		return;
	artifact_put(p, "<div class=\"verdict\"><b>");
	artifact_put_esc(p, js(v, "verdict"));
	artifact_put(p, "</b> ");
	artifact_put_esc(p, js(v, "reviewer"));
	artifact_put(p, ": ");
	artifact_put_esc(p, js(v, "comments"));
	artifact_put(p, "<ul>");
	json_array_foreach(json_object_get(v, "criteria"), i, c) {
		int met = json_is_true(json_object_get(c, "met"));
		artifact_putf(p, "<li class=\"%s\">[%s] ", met ? "ok" : "error", met ? "met" : "not met");
		artifact_put_esc(p, js(c, "criterion"));
		artifact_put(p, *js(c, "note") ? " &mdash; " : "");
		artifact_put_esc(p, js(c, "note"));
		artifact_put(p, "</li>");
	}
	artifact_put(p, "</ul></div>\n");
}

/* Attempt n's head against attempt n-1's: a link, when both have one. */
static void against_link(struct artifact_page *p, json_t *d, size_t i)
{
	json_t *all = json_object_get(d, "attempts");
	json_t *a = json_array_get(all, i), *b = i ? json_array_get(all, i - 1) : NULL;
	long long n = (long long)json_integer_value(json_object_get(a, "n"));

	if (!b || !*js(a, "head") || !*js(b, "head"))
		return;
	artifact_put(p, "<br><a class=\"against\" href=\"/runs/");
	artifact_put_esc(p, js(json_object_get(d, "run"), "id"));
	artifact_putf(p, "/diff?attempt=%lld\">against attempt %lld</a>", n,
		      (long long)json_integer_value(json_object_get(b, "n")));
}

static void attempts(struct artifact_page *p, json_t *d)
{
	json_t *a;
	size_t i;

	artifact_put(p, "<h3>Attempts</h3>\n<table id=\"attempts\"><tr><th>#</th><th>mode</th>"
			"<th>seconds</th><th>builder exit</th><th>outcome</th><th>gates</th>"
			"<th>review</th></tr>\n");
	json_array_foreach(json_object_get(d, "attempts"), i, a) {
		json_t *x = json_object_get(a, "builder_exit");
		artifact_putf(p, "<tr><td>%lld", (long long)json_integer_value(json_object_get(a, "n")));
		against_link(p, d, i);
		artifact_put(p, "</td><td>");
		artifact_put_esc(p, js(a, "mode"));
		artifact_putf(p, "</td><td>%.1f</td><td>",
			      (double)json_integer_value(json_object_get(a, "duration_ms")) / 1000.0);
		artifact_putf(p, json_is_integer(x) ? "%lld" : "-", (long long)json_integer_value(x));
		artifact_put(p, "</td><td>");
		artifact_put_esc(p, js(a, "outcome"));
		artifact_put(p, "</td><td>");
		gates_cell(p, json_object_get(a, "gates"));
		artifact_put(p, "</td><td>");
		verdict(p, json_object_get(a, "review"));
		artifact_put(p, "</td></tr>\n");
	}
	artifact_put(p, "</table>\n");
}

static void train(struct artifact_page *p, json_t *d)
{
	json_t *t = json_object_get(d, "train");

	if (!json_is_object(t))
		return;
	artifact_put(p, "<h3>Merge train</h3>\n<p id=\"train\">");
	artifact_put_esc(p, js(t, "status"));
	if (json_is_integer(json_object_get(t, "position")))
		artifact_putf(p, ": car %lld of %lld",
			      (long long)json_integer_value(json_object_get(t, "position")),
			      (long long)json_integer_value(json_object_get(t, "cars")));
	if (*js(t, "ahead_work_order")) {
		artifact_put(p, ", behind ");
		artifact_put_esc(p, js(t, "ahead_work_order"));
	}
	artifact_put(p, "; tested commit <code>");
	artifact_put_esc(p, *js(t, "tested_commit") ? js(t, "tested_commit") : js(t, "commit"));
	artifact_put(p, "</code>");
	if (*js(t, "covered_by")) { /* merge.batch: docs/config.md, "Batches" */
		artifact_put(p, " (a batch: covered by the green test of ");
		artifact_put_esc(p, js(t, "covered_by_work_order"));
		artifact_put(p, "'s car, which holds this one)");
	}
	if (json_array_size(json_object_get(t, "lanes"))) { /* docs/config.md, "Lanes" */
		size_t i;
		json_t *l;
		artifact_put(p, "; lane ");
		json_array_foreach(json_object_get(t, "lanes"), i, l) {
			artifact_put(p, i ? ", " : "");
			artifact_put_esc(p, json_string_value(l) ? json_string_value(l) : "?");
		}
		if (*js(t, "tested_commit") && strcmp(js(t, "tested_commit"), js(t, "commit")))
			artifact_put(p, " (tested before the tip moved; the lane's paths are the same "
				     "in the commit that lands)");
	}
	artifact_put(p, "</p>\n");
}

/* What the watch did about the run (docs/watch.md): culprit, revert or fix-up, with links. */
static void watch(struct artifact_page *p, json_t *d)
{
	json_t *e, *w = json_object_get(d, "watch");
	char line[1024];
	size_t i;

	if (!json_array_size(w))
		return;
	artifact_put(p, "<h3>Watch</h3>\n<ul id=\"watch\">\n");
	json_array_foreach(w, i, e) {
		artifact_watch_line(e, line, sizeof(line));
		artifact_put(p, "<li>");
		artifact_put_esc(p, line);
		if (strcmp(js(e, "role"), "culprit")) {
			artifact_put(p, " <a href=\"/runs/");
			artifact_put_esc(p, js(e, "culprit_run"));
			artifact_put(p, "\">the culprit's run</a>");
		}
		artifact_put(p, "</li>\n");
	}
	artifact_put(p, "</ul>\n");
}

/* An artifact's size: the dossier's, or (manifest.json, which it leaves null) the file's. */
static long long artifact_bytes(struct req *r, const char *run, json_t *a)
{
	json_t *b = json_object_get(a, "bytes");
	char *text;
	long long n = -1;

	if (json_is_integer(b))
		return (long long)json_integer_value(b);
	if ((text = serve__run_file(r, run, js(a, "name"), SERVE_FILE_MAX, 0)) != NULL)
		n = (long long)strlen(text);
	free(text);
	return n;
}

static void artifacts(struct req *r, struct artifact_page *p, json_t *d)
{
	const char *id = js(json_object_get(d, "run"), "id");
	long long bytes;
	json_t *a;
	size_t i;

	artifact_put(p, "<h3>Artifacts</h3>\n<ul id=\"artifacts\">\n");
	json_array_foreach(json_object_get(d, "artifacts"), i, a) {
		artifact_put(p, "<li><a href=\"/runs/");
		artifact_put_esc(p, id);
		artifact_put(p, "/artifacts/");
		artifact_put_esc(p, js(a, "name"));
		artifact_put(p, "\">");
		artifact_put_esc(p, js(a, "name"));
		if ((bytes = artifact_bytes(r, id, a)) >= 0)
			artifact_putf(p, "</a> <span class=\"muted\">%lld bytes</span></li>\n", bytes);
		else
			artifact_put(p, "</a> <span class=\"muted\">(not readable here)</span></li>\n");
	}
	artifact_put(p, "</ul>\n");
}

void serve__run_page(struct req *r, const char *run, const char *notice)
{
	struct artifact_page p = { &r->out, 0 };
	json_t *d = dossier(r, run);

	if (!d)
		return;
	serve__page_begin(r, &p, run);
	if (notice) {
		artifact_putf(&p, "<p id=\"notice\" class=\"%s\">", r->status >= 400 ? "error" : "ok");
		artifact_put_esc(&p, notice);
		artifact_put(&p, "</p>\n");
	}
	run_head(r, &p, d);
	serve__run_work_order(r, &p, d);
	if (*js(d, "summary")) {
		artifact_put(&p, "<h3>The builder's summary</h3>\n");
		pre(&p, "summary", js(d, "summary"));
	}
	serve__run_gates(r, &p, d);
	serve__run_verdict(&p, d);
	serve__run_diff(r, &p, d);
	serve__run_log(r, &p, d);
	actions(r, &p, d);
	links(r, &p, d);
	train(&p, d);
	watch(&p, d);
	attempts(&p, d);
	timeline(r, &p, d);
	artifacts(r, &p, d);
	serve__page_end(r, &p);
	json_decref(d);
}

void serve__artifact(struct req *r, const char *run, const char *name)
{
	json_t *d = dossier(r, run), *a;
	const char *id;
	char *text;
	size_t i;
	int listed = 0;

	if (!d)
		return;
	id = js(json_object_get(d, "run"), "id");
	json_array_foreach(json_object_get(d, "artifacts"), i, a)
		listed |= !strcmp(js(a, "name"), name);
	if (!listed || !(text = run_file(r, id, name, SERVE_FILE_MAX)))
		serve__error(r, 404, "run %s has no artifact '%s' that sluice serves (at most %d "
			     "bytes, never through a link)", id, name, SERVE_FILE_MAX);
	else {
		sl_buf_puts(&r->out, text);
		serve__answer(r, 200, "text/plain; charset=utf-8");
		free(text);
	}
	json_decref(d);
}

/* ---- the diff: from the repository's objects, base..head ------------------ */

static void diff_pager(struct artifact_page *p, const char *id, long page, size_t n)
{
	long pages = (long)((n + SERVE_DIFF_FILES - 1) / SERVE_DIFF_FILES);
	const char *dir[2] = { "&larr; previous", "next &rarr;" };
	int k;

	artifact_putf(p, "<p class=\"muted\">%zu file%s changed, page %ld of %ld", n,
		      n == 1 ? "" : "s", page + 1, pages ? pages : 1);
	for (k = 0; k < 2; k++) {
		long to = k ? page + 1 : page - 1;
		if (to < 0 || to >= pages)
			continue;
		artifact_put(p, " <a href=\"/runs/");
		artifact_put_esc(p, id);
		artifact_putf(p, "/diff?page=%ld\">%s</a>", to + 1, dir[k]);
	}
	artifact_put(p, "</p>\n");
}

/*
 * What the diff page compares: base..head, or with ?attempt=N the head of
 * attempt N-1 against attempt N's (did it do what was asked?). 0, or an
 * error page and -1.
 */
static int diff_ends(struct req *r, json_t *d, const char **from, const char **to, long *n)
{
	json_t *run = json_object_get(d, "run"), *all = json_object_get(d, "attempts"), *a, *b;
	const char *q = serve__arg(r, "attempt");
	size_t i;

	*n = 0;
	*from = js(run, "base_commit");
	*to = js(run, "head_commit");
	if (!q)
		return 0;
	*n = strtol(q, NULL, 10);
	for (i = 1; i < json_array_size(all); i++) {
		a = json_array_get(all, i - 1);
		b = json_array_get(all, i);
		if (json_integer_value(json_object_get(b, "n")) == *n && *js(a, "head") &&
		    *js(b, "head")) {
			*from = js(a, "head");
			*to = js(b, "head");
			return 0;
		}
	}
	serve__error(r, 404, "run %s has no attempt %ld with a head to compare with the one "
		     "before it", js(run, "id"), *n);
	return -1;
}

static void diff_title(struct artifact_page *p, json_t *rj, long n)
{
	artifact_put(p, "<h2>Diff of <a href=\"/runs/");
	artifact_put_esc(p, js(rj, "id"));
	artifact_put(p, "\"><code>");
	artifact_put_esc(p, js(rj, "id"));
	artifact_put(p, "</code></a>");
	if (n)
		artifact_putf(p, ": attempt %ld against attempt %ld</h2>\n<p class=\"muted\">the "
				 "trees of the two attempts' heads (a new base shows too)</p>\n", n, n - 1);
	else
		artifact_put(p, "</h2>\n");
}

void serve__diff_page(struct req *r, const char *run)
{
	struct artifact_page p = { &r->out, 0 };
	struct sl_err err = SL_ERR_INIT;
	struct serve_diff v;
	const char *pg = serve__arg(r, "page"), *view = serve__arg(r, "view"), *from, *to;
	const char *ex = serve__arg(r, "expand");
	json_t *d = dossier(r, run), *rj;
	long page = pg ? strtol(pg, NULL, 10) - 1 : 0, n;
	char base[160], extra[40];

	if (!d)
		return;
	rj = json_object_get(d, "run");
	if (diff_ends(r, d, &from, &to, &n) != 0)
		goto out;
	if (serve__diff_open(&v, r->sv->ctx, from, to, &err) != 0) {
		serve__error(r, err.code == SL_ENOTFOUND ? 404 : 500, "%s", err.msg);
		goto out;
	}
	page = page < 0 || (size_t)page * SERVE_DIFF_FILES >= v.n ? 0 : page;
	serve__page_begin(r, &p, "diff");
	diff_title(&p, rj, n);
	snprintf(base, sizeof(base), "/runs/%s/diff", js(rj, "id"));
	snprintf(extra, sizeof(extra), "attempt=%ld", n);
	serve__diff_views(&p, base, n ? extra : NULL, view && !strcmp(view, "split"),
			  ex && !strcmp(ex, "all"));
	diff_pager(&p, js(rj, "id"), page, v.n);
	serve__diff_files(&p, &v, (size_t)page * SERVE_DIFF_FILES, (size_t)(page + 1) * SERVE_DIFF_FILES,
			  view && !strcmp(view, "split"), ex && !strcmp(ex, "all"));
	serve__page_end(r, &p);
	serve__diff_close(&v);
out:
	json_decref(d);
}

/* ---- the conflict: both intents side by side ------------------------------ */

/* One side: the work order as the run ran it, the builder's summary, links. */
static void side(struct req *r, struct artifact_page *p, const char *label, const char *run,
		 const char *wo, const char *title, const char *summary)
{
	char *text = *run ? run_file(r, run, "work_order.md", SERVE_FILE_MAX) : NULL;

	artifact_putf(p, "<div class=\"side\"><h3>%s: ", label);
	artifact_put_esc(p, wo);
	artifact_put(p, " ");
	artifact_put_esc(p, title);
	artifact_put(p, "</h3>\n");
	if (*run) {
		artifact_put(p, "<p><a href=\"/runs/");
		artifact_put_esc(p, run);
		artifact_put(p, "\">run</a> &middot; <a href=\"/runs/");
		artifact_put_esc(p, run);
		artifact_put(p, "/diff\">its diff</a></p>\n");
	}
	artifact_put(p, "<h4>work order</h4>\n");
	pre(p, "wo", text ? text : "(not kept)");
	artifact_put(p, "<h4>the builder's summary</h4>\n");
	pre(p, "summary", *summary ? summary : "(none)");
	artifact_put(p, "</div>\n");
	free(text);
}

/* A person's commit as a rival: who, what, where; it has no work order. */
static void person_side(struct artifact_page *p, json_t *rv)
{
	json_t *who = json_object_get(rv, "person");

	artifact_put(p, "<div class=\"side\"><h3>the rival: a person's commit <code>");
	artifact_put_esc(p, js(who, "commit"));
	artifact_put(p, "</code></h3>\n<p>by ");
	artifact_put_esc(p, js(who, "author"));
	artifact_put(p, ", not a sluice run</p>\n<h4>its subject</h4>\n");
	pre(p, "summary", js(who, "subject"));
	artifact_put(p, "</div>\n");
}

/*
 * Every rival: who last changed the conflicting lines on the target, a
 * run or a person's commit (docs/builders.md "The rival"); the store's
 * rival alone for a conflict that has no such list.
 */
static void rival_sides(struct req *r, struct artifact_page *p, json_t *c)
{
	json_t *rv = json_object_get(c, "rival");
	size_t i;

	if (!json_array_size(json_object_get(c, "rivals"))) {
		side(r, p, "the rival", js(rv, "run"), js(rv, "work_order"), js(rv, "title"),
		     js(rv, "summary"));
		return;
	}
	json_array_foreach(json_object_get(c, "rivals"), i, rv) {
		if (json_is_object(json_object_get(rv, "person")))
			person_side(p, rv);
		else
			side(r, p, "the rival", js(rv, "run"), js(rv, "work_order"),
			     js(rv, "title"), js(rv, "summary"));
	}
}

/* Where each rival changed the conflicting lines: "run X: 3 lines from f.c:10". */
static void rival_where(struct artifact_page *p, json_t *c)
{
	json_t *rv, *l;
	json_int_t line;
	size_t i;

	if (!json_array_size(json_object_get(c, "rivals")))
		return;
	artifact_put(p, "<h3>Who last changed the conflicting lines</h3>\n<ul id=\"rivals\">\n");
	json_array_foreach(json_object_get(c, "rivals"), i, rv) {
		l = json_object_get(rv, "lines");
		line = json_integer_value(json_object_get(l, "line"));
		artifact_put(p, "<li><code>");
		artifact_put_esc(p, json_is_object(json_object_get(rv, "person")) ?
				    js(json_object_get(rv, "person"), "commit") : js(rv, "run"));
		if (line > 0)
			artifact_putf(p, "</code>: %lld line%s from <code>",
				      (long long)json_integer_value(json_object_get(l, "lines")),
				      json_integer_value(json_object_get(l, "lines")) == 1 ? "" : "s");
		else
			artifact_put(p, "</code>: changed <code>");
		artifact_put_esc(p, *js(l, "path") ? js(l, "path") : "the conflicted files");
		if (line > 0)
			artifact_putf(p, ":%lld", (long long)line);
		artifact_put(p, "</code></li>\n");
	}
	artifact_put(p, "</ul>\n");
}

static void failed_gates(struct artifact_page *p, json_t *c)
{
	json_t *g;
	size_t i;

	json_array_foreach(json_object_get(c, "failed_gates"), i, g) {
		artifact_put(p, "<h4>merge gate ");
		artifact_put_esc(p, js(g, "name"));
		artifact_put(p, " failed</h4>\n");
		pre(p, "log", js(g, "output"));
	}
}

static void conflict_body(struct req *r, struct artifact_page *p, json_t *d, json_t *c)
{
	json_t *run = json_object_get(d, "run"), *wo = json_object_get(d, "work_order");
	json_t *f;
	size_t i;

	artifact_put(p, "<h2>Conflict of <a href=\"/runs/");
	artifact_put_esc(p, js(run, "id"));
	artifact_put(p, "\"><code>");
	artifact_put_esc(p, js(run, "id"));
	artifact_put(p, "</code></a> (");
	artifact_put_esc(p, js(c, "kind"));
	artifact_put(p, ")</h2>\n<div class=\"sides\">\n");
	side(r, p, "this run", js(run, "id"), js(wo, "id"), js(wo, "title"), js(d, "summary"));
	rival_sides(r, p, c);
	artifact_put(p, "</div>\n");
	rival_where(p, c);
	artifact_put(p, "<h3>Conflicted files</h3>\n<ul id=\"conflicted\">\n");
	json_array_foreach(json_object_get(c, "files"), i, f) {
		artifact_put(p, "<li><code>");
		artifact_put_esc(p, json_is_string(f) ? json_string_value(f) : js(f, "path"));
		artifact_put(p, "</code></li>\n");
	}
	artifact_put(p, "</ul>\n");
	if (*js(c, "markers")) {
		artifact_put(p, "<h3>The conflicted hunks</h3>\n");
		pre(p, "markers", js(c, "markers"));
	}
	failed_gates(p, c);
}

void serve__conflict_page(struct req *r, const char *run)
{
	struct artifact_page p = { &r->out, 0 };
	json_t *d = dossier(r, run), *c;
	const char *id;

	if (!d)
		return;
	c = json_object_get(d, "conflict");
	id = js(json_object_get(d, "run"), "id");
	if (!json_is_object(c)) {
		serve__error(r, 404, "run %s has no merge conflict", id);
		json_decref(d);
		return;
	}
	serve__page_begin(r, &p, "conflict");
	conflict_body(r, &p, d, c);
	desk_next(r, &p, d);
	actions(r, &p, d);
	serve__page_end(r, &p);
	json_decref(d);
}
