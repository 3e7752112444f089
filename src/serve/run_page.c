/* sluice serve: a run's page (its dossier), its diff, its conflict, its artifacts. */
#include "serve/serve_int.h"
#include "store/store.h"
#include "core/fs.h"

#include <fcntl.h>
#include <git2.h>
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
 * under the guard of .system (never through a link), at most `max` bytes.
 * NULL when it is not there or cannot be read.
 */
static char *run_file(struct req *r, const char *run, const char *name, size_t max)
{
	struct sl_buf b = SL_BUF_INIT;
	struct sl_err err = SL_ERR_INIT;
	char *path = sl_path_fmt("%s/%s/%s", r->sv->ctx->repo.runs_dir, run, name);
	struct stat st;
	int fd = -1;

	if (!path || !sl_path_is_safe_relative(name) ||
	    sl_open_file(path, O_RDONLY | O_NONBLOCK, 0, &fd, &err) != 0 || fstat(fd, &st) != 0 ||
	    !S_ISREG(st.st_mode) || sl_read_fd(&b, fd, path, max, &err) != 0) {
		sl_buf_release(&b);
		b.ptr = NULL;
	}
	if (fd >= 0)
		close(fd);
	free(path);
	return b.ptr ? sl_buf_detach(&b) : NULL;
}

static void pre(struct artifact_page *p, const char *cls, const char *text)
{
	artifact_putf(p, "<pre class=\"%s\">", cls);
	artifact_put_esc_lines(p, text);
	artifact_put(p, "</pre>\n");
}

static void run_head(struct artifact_page *p, json_t *d)
{
	json_t *run = json_object_get(d, "run"), *wo = json_object_get(d, "work_order");

	artifact_put(p, "<h2>Run <code>");
	artifact_put_esc(p, js(run, "id"));
	artifact_put(p, "</code> ");
	artifact_badge(p, js(run, "state"));
	artifact_put(p, "</h2>\n<p id=\"reason\">");
	artifact_put_esc(p, js(run, "reason"));
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
	artifact_put(p, "</code></td></tr>\n<tr><th>merge</th><td><code>");
	artifact_put_esc(p, js(run, "merge_commit"));
	artifact_put(p, "</code> ");
	artifact_put_esc(p, js(run, "reviewer"));
	artifact_putf(p, "</td></tr>\n<tr><th>attempt</th><td>%lld (%s)</td></tr></table>\n",
		      (long long)json_integer_value(json_object_get(run, "attempt")), js(run, "mode"));
}

/* The person's buttons for the run's state: the same calls as the CLI's commands. */
static void actions(struct req *r, struct artifact_page *p, json_t *d)
{
	json_t *run = json_object_get(d, "run");
	enum run_state s;

	if (r->sv->read_only || run_state_parse(js(run, "state"), &s) != 0)
		return;
	artifact_put(p, "<div class=\"actions\">");
	if (s == RUN_AWAITING_REVIEW) {
		serve__action_form(r, p, run, "approve", "Approve", 1);
		serve__action_form(r, p, run, "reject", "Reject", 2);
	}
	if (s == RUN_MERGE_CONFLICT || s == RUN_FAILED || s == RUN_REJECTED ||
	    s == RUN_REVIEWING || s == RUN_APPROVED)
		serve__action_form(r, p, run, "retry", "Retry", 0);
	if (!run_state_is_final(s) || s == RUN_FAILED || s == RUN_REJECTED)
		serve__action_form(r, p, run, "abandon", "Abandon", 0);
	artifact_put(p, "</div>\n");
}

static void links(struct artifact_page *p, json_t *d)
{
	const char *id = js(json_object_get(d, "run"), "id");

	artifact_put(p, "<p class=\"links\"><a id=\"diff-link\" href=\"/runs/");
	artifact_put_esc(p, id);
	artifact_put(p, "/diff\">diff</a>");
	if (json_is_object(json_object_get(d, "conflict"))) {
		artifact_put(p, " &middot; <a id=\"conflict-link\" href=\"/runs/");
		artifact_put_esc(p, id);
		artifact_put(p, "/conflict\">the conflict</a>");
	}
	artifact_put(p, "</p>\n");
	if (*js(d, "next")) {
		artifact_put(p, "<h3>What to do next</h3>\n");
		pre(p, "next", js(d, "next"));
	}
}

static void timeline(struct artifact_page *p, json_t *d)
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
		artifact_put_esc(p, js(e, "reason"));
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

static void attempts(struct artifact_page *p, json_t *d)
{
	json_t *a;
	size_t i;

	artifact_put(p, "<h3>Attempts</h3>\n<table id=\"attempts\"><tr><th>#</th><th>mode</th>"
			"<th>seconds</th><th>builder exit</th><th>outcome</th><th>gates</th>"
			"<th>review</th></tr>\n");
	json_array_foreach(json_object_get(d, "attempts"), i, a) {
		json_t *x = json_object_get(a, "builder_exit");
		artifact_putf(p, "<tr><td>%lld</td><td>", (long long)json_integer_value(json_object_get(a, "n")));
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
	artifact_put_esc(p, js(t, "commit"));
	artifact_put(p, "</code></p>\n");
}

static void artifacts(struct artifact_page *p, json_t *d)
{
	const char *id = js(json_object_get(d, "run"), "id");
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
		artifact_putf(p, "</a> <span class=\"muted\">%lld bytes</span></li>\n",
			      (long long)json_integer_value(json_object_get(a, "bytes")));
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
	run_head(&p, d);
	actions(r, &p, d);
	links(&p, d);
	verdict(&p, json_object_get(d, "verdict"));
	train(&p, d);
	if (*js(d, "summary")) {
		artifact_put(&p, "<h3>The builder's summary</h3>\n");
		pre(&p, "summary", js(d, "summary"));
	}
	attempts(&p, d);
	timeline(&p, d);
	artifacts(&p, d);
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

struct diff_view {
	git_repository *repo;
	git_diff *diff;
	size_t n;
};

static int diff_open(struct diff_view *v, struct sl_ctx *ctx, json_t *run, struct sl_err *err)
{
	git_diff_find_options fo;
	git_commit *b = NULL, *h = NULL;
	git_tree *bt = NULL, *ht = NULL;
	git_oid bo, ho;
	int rc;

	memset(v, 0, sizeof(*v));
	git_diff_find_options_init(&fo, GIT_DIFF_FIND_OPTIONS_VERSION);
	if ((rc = git_oid_fromstr(&bo, js(run, "base_commit"))) ||
	    (rc = git_oid_fromstr(&ho, js(run, "head_commit"))))
		return sl_err_set(err, SL_ENOTFOUND, "the run has no commits to compare yet");
	if (!(rc = git_repository_open(&v->repo, ctx->repo.root)) &&
	    !(rc = git_commit_lookup(&b, v->repo, &bo)) && !(rc = git_commit_lookup(&h, v->repo, &ho)) &&
	    !(rc = git_commit_tree(&bt, b)) && !(rc = git_commit_tree(&ht, h)) &&
	    !(rc = git_diff_tree_to_tree(&v->diff, v->repo, bt, ht, NULL)))
		rc = git_diff_find_similar(v->diff, &fo);
	git_tree_free(bt);
	git_tree_free(ht);
	git_commit_free(b);
	git_commit_free(h);
	if (rc)
		return sl_err_git(err, rc, "cannot compare the run's base and head");
	v->n = git_diff_num_deltas(v->diff);
	return 0;
}

static void diff_close(struct diff_view *v)
{
	git_diff_free(v->diff);
	git_repository_free(v->repo);
}

/* One file's patch, each line with its class; cut at SERVE_FILE_MAX. */
static void file_patch(struct artifact_page *p, git_diff *diff, size_t i)
{
	git_patch *patch = NULL;
	git_buf buf = GIT_BUF_INIT;
	size_t add = 0, del = 0;
	const git_diff_delta *dd = git_diff_get_delta(diff, i);
	const char *s, *e;

	if (git_patch_from_diff(&patch, diff, i) || git_patch_to_buf(&buf, patch)) {
		artifact_put(p, "<details><summary>(cannot show this file)</summary></details>\n");
		goto out;
	}
	git_patch_line_stats(NULL, &add, &del, patch);
	artifact_put(p, "<details class=\"file\"><summary><code>");
	artifact_put_esc(p, dd->new_file.path);
	if (dd->status == GIT_DELTA_RENAMED) {
		artifact_put(p, "</code> (renamed from <code>");
		artifact_put_esc(p, dd->old_file.path);
		artifact_put(p, "</code>)<code>");
	}
	artifact_putf(p, "</code> <span class=\"ok\">+%zu</span> <span class=\"error\">-%zu</span>"
			 "</summary><pre class=\"diff\">", add, del);
	for (s = buf.ptr; s && *s && s - buf.ptr < SERVE_FILE_MAX; s = *e ? e + 1 : e) {
		char line[4096];
		e = strchr(s, '\n');
		e = e ? e : s + strlen(s);
		snprintf(line, sizeof(line), "%.*s", (int)(e - s), s);
		artifact_putf(p, "<span class=\"%c\">", *s == '+' ? 'a' : *s == '-' ? 'd' : *s == '@' ? 'h' : 'c');
		artifact_put_esc(p, line);
		artifact_put(p, "</span>\n");
	}
	if (buf.size > SERVE_FILE_MAX)
		artifact_putf(p, "<span class=\"muted\">... cut at %d KiB of %zu</span>\n",
			      SERVE_FILE_MAX / 1024, buf.size);
	artifact_put(p, "</pre></details>\n");
out:
	git_buf_dispose(&buf);
	git_patch_free(patch);
}

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

void serve__diff_page(struct req *r, const char *run)
{
	struct artifact_page p = { &r->out, 0 };
	struct sl_err err = SL_ERR_INIT;
	struct diff_view v;
	const char *pg = serve__arg(r, "page");
	json_t *d = dossier(r, run), *rj;
	long page = pg ? strtol(pg, NULL, 10) - 1 : 0;
	size_t i;

	if (!d)
		return;
	rj = json_object_get(d, "run");
	if (diff_open(&v, r->sv->ctx, rj, &err) != 0) {
		serve__error(r, err.code == SL_ENOTFOUND ? 404 : 500, "%s", err.msg);
		json_decref(d);
		return;
	}
	page = page < 0 || (size_t)page * SERVE_DIFF_FILES >= v.n ? 0 : page;
	serve__page_begin(r, &p, "diff");
	artifact_put(&p, "<h2>Diff of <a href=\"/runs/");
	artifact_put_esc(&p, js(rj, "id"));
	artifact_put(&p, "\"><code>");
	artifact_put_esc(&p, js(rj, "id"));
	artifact_put(&p, "</code></a></h2>\n");
	diff_pager(&p, js(rj, "id"), page, v.n);
	for (i = (size_t)page * SERVE_DIFF_FILES; i < v.n && i < (size_t)(page + 1) * SERVE_DIFF_FILES; i++)
		file_patch(&p, v.diff, i);
	serve__page_end(r, &p);
	diff_close(&v);
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
	json_t *rv = json_object_get(c, "rival"), *f;
	size_t i;

	artifact_put(p, "<h2>Conflict of <a href=\"/runs/");
	artifact_put_esc(p, js(run, "id"));
	artifact_put(p, "\"><code>");
	artifact_put_esc(p, js(run, "id"));
	artifact_put(p, "</code></a> (");
	artifact_put_esc(p, js(c, "kind"));
	artifact_put(p, ")</h2>\n<div class=\"sides\">\n");
	side(r, p, "this run", js(run, "id"), js(wo, "id"), js(wo, "title"), js(d, "summary"));
	side(r, p, "the rival", js(rv, "run"), js(rv, "work_order"), js(rv, "title"),
	     js(rv, "summary"));
	artifact_put(p, "</div>\n<h3>Conflicted files</h3>\n<ul id=\"conflicted\">\n");
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
	artifact_put(&p, "<h3>What to do next</h3>\n");
	pre(&p, "next", *js(d, "next") ? js(d, "next") : "");
	artifact_put(&p, "<p>Resolve it in the run's worktree with the steps above (its worktree "
			 "waits clean at the run's head: the merge of the target brings the "
			 "conflict back), then retry: the resolution is checked for conflict "
			 "markers, goes through the run's gates and review, and the next tick "
			 "merges it. Or abandon the run.</p>\n");
	actions(r, &p, d);
	serve__page_end(r, &p);
	json_decref(d);
}
