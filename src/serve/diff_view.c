/*
 * sluice serve: a diff as a person reads it (docs/serve.md "The diff"): from
 * the repository's objects, one table per file, single-spaced, with the old
 * and new line numbers, the changed part of a changed line marked, unified
 * or side by side; small diffs open.
 */
#include "serve/serve_int.h"

#include <git2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LINE_MAX_SHOWN 4096 /* bytes of one line shown */
#define SMALL_DIFF 400      /* changed lines of a page under which every file is open */
#define SMALL_FILE 40       /* changed lines of a file under which it is open */

int serve__diff_open(struct serve_diff *v, struct sl_ctx *ctx, const char *from,
		     const char *to, struct sl_err *err)
{
	git_diff_find_options fo;
	git_commit *b = NULL, *h = NULL;
	git_tree *bt = NULL, *ht = NULL;
	git_oid bo, ho;
	int rc;

	memset(v, 0, sizeof(*v));
	git_diff_find_options_init(&fo, GIT_DIFF_FIND_OPTIONS_VERSION);
	if (!from || !to || git_oid_fromstr(&bo, from) || git_oid_fromstr(&ho, to))
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
	if (rc) {
		serve__diff_close(v);
		return sl_err_git(err, rc, "cannot compare %.12s with %.12s", from, to);
	}
	v->n = git_diff_num_deltas(v->diff);
	return 0;
}

void serve__diff_close(struct serve_diff *v)
{
	git_diff_free(v->diff);
	git_repository_free(v->repo);
	memset(v, 0, sizeof(*v));
}

/* One line of a hunk: its sign, numbers (-1: none) and text without the newline. */
struct dline {
	char sign; /* ' ', '+', '-' */
	int old, new;
	const char *s;
	size_t n;
	size_t pre, suf; /* bytes the paired line has in common at each end (marked between) */
	int paired;
};

/* Back off `k` bytes so that a UTF-8 character is not cut. */
static size_t utf8_back(const char *s, size_t k)
{
	while (k > 0 && ((unsigned char)s[k] & 0xc0) == 0x80)
		k--;
	return k;
}

/* Mark what differs between a removed line and the added one that replaces it. */
static void pair(struct dline *d, struct dline *a)
{
	size_t max = d->n < a->n ? d->n : a->n, p = 0, s = 0;

	while (p < max && d->s[p] == a->s[p])
		p++;
	if (p < max)
		p = utf8_back(d->s, p);
	while (s < max - p && d->s[d->n - 1 - s] == a->s[a->n - 1 - s])
		s++;
	while (s > 0 && (((unsigned char)d->s[d->n - s] & 0xc0) == 0x80))
		s--;
	if (p + s == 0)
		return; /* nothing in common: the whole line is the change */
	d->pre = a->pre = p;
	d->suf = a->suf = s;
	d->paired = a->paired = 1;
}

/* Pair each run of removed lines with the run of added lines right after it. */
static void pair_runs(struct dline *l, size_t n)
{
	size_t i = 0, j, k, nd, na;

	while (i < n) {
		for (j = i; j < n && l[j].sign == '-'; j++)
			;
		for (k = j; k < n && l[k].sign == '+'; k++)
			;
		nd = j - i;
		na = k - j;
		for (size_t m = 0; nd && na && m < nd && m < na; m++)
			pair(&l[i + m], &l[j + m]);
		i = k > i ? k : i + 1;
	}
}

static void put_n(struct artifact_page *p, const char *s, size_t n)
{
	char buf[LINE_MAX_SHOWN + 1];

	if (n > LINE_MAX_SHOWN)
		n = LINE_MAX_SHOWN;
	memcpy(buf, s, n);
	buf[n] = '\0';
	artifact_put_esc(p, buf);
}

/* The text of a line, its changed part in <mark>. */
static void line_text(struct artifact_page *p, const struct dline *l)
{
	if (!l->paired) {
		put_n(p, l->s, l->n);
		return;
	}
	put_n(p, l->s, l->pre);
	artifact_put(p, "<mark>");
	put_n(p, l->s + l->pre, l->n - l->pre - l->suf);
	artifact_put(p, "</mark>");
	put_n(p, l->s + l->n - l->suf, l->suf);
}

static void ln(struct artifact_page *p, int n)
{
	if (n > 0)
		artifact_putf(p, "<td class=\"ln\">%d</td>", n);
	else
		artifact_put(p, "<td class=\"ln\"></td>");
}

static char cls(char sign)
{
	return sign == '+' ? 'a' : sign == '-' ? 'd' : 'c';
}

static void unified_rows(struct artifact_page *p, const struct dline *l, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		artifact_putf(p, "<tr class=\"%c\">", cls(l[i].sign));
		ln(p, l[i].old);
		ln(p, l[i].new);
		artifact_putf(p, "<td class=\"s\">%c</td><td class=\"code\">", l[i].sign);
		line_text(p, &l[i]);
		artifact_put(p, "</td></tr>\n");
	}
}

/* One side of a side-by-side row (NULL: nothing on that side). */
static void half(struct artifact_page *p, const struct dline *l, int old)
{
	if (!l) {
		artifact_put(p, "<td class=\"ln\"></td><td class=\"code e\"></td>");
		return;
	}
	ln(p, old ? l->old : l->new);
	artifact_putf(p, "<td class=\"code %c\">", cls(l->sign));
	line_text(p, l);
	artifact_put(p, "</td>");
}

/* Context on both sides; a run of removed lines beside the added ones after it. */
static void split_rows(struct artifact_page *p, const struct dline *l, size_t n)
{
	size_t i = 0, j, k, m;

	while (i < n) {
		if (l[i].sign == ' ' || l[i].sign == '+') {
			artifact_put(p, "<tr>");
			half(p, l[i].sign == ' ' ? &l[i] : NULL, 1);
			half(p, &l[i], 0);
			artifact_put(p, "</tr>\n");
			i++;
			continue;
		}
		for (j = i; j < n && l[j].sign == '-'; j++)
			;
		for (k = j; k < n && l[k].sign == '+'; k++)
			;
		for (m = 0; m < j - i || m < k - j; m++) {
			artifact_put(p, "<tr>");
			half(p, m < j - i ? &l[i + m] : NULL, 1);
			half(p, m < k - j ? &l[j + m] : NULL, 0);
			artifact_put(p, "</tr>\n");
		}
		i = k;
	}
}

/* A hunk's lines into l (at most cap); the bytes shown added to *shown. */
static size_t hunk_lines(git_patch *patch, size_t h, struct dline *l, size_t cap, size_t *shown)
{
	const git_diff_line *gl;
	size_t n = 0;
	int nl = git_patch_num_lines_in_hunk(patch, h);

	for (int i = 0; i < nl && n < cap; i++) {
		if (git_patch_get_line_in_hunk(&gl, patch, h, (size_t)i) != 0 ||
		    !strchr(" +-", gl->origin))
			continue;
		l[n].sign = gl->origin;
		l[n].old = gl->old_lineno;
		l[n].new = gl->new_lineno;
		l[n].s = gl->content;
		l[n].n = gl->content_len;
		while (l[n].n && (l[n].s[l[n].n - 1] == '\n' || l[n].s[l[n].n - 1] == '\r'))
			l[n].n--;
		l[n].pre = l[n].suf = 0;
		l[n].paired = 0;
		*shown += l[n].n;
		n++;
	}
	return n;
}

/* The hunks of one file's patch, as rows; cut at SERVE_FILE_MAX bytes shown. */
static void hunks(struct artifact_page *p, git_patch *patch, int split)
{
	size_t nh = git_patch_num_hunks(patch), shown = 0, n;
	const git_diff_hunk *hk;
	struct dline *l;
	size_t lines;

	for (size_t h = 0; h < nh && shown < SERVE_FILE_MAX; h++) {
		if (git_patch_get_hunk(&hk, &lines, patch, h) != 0 ||
		    !(l = calloc(lines ? lines : 1, sizeof(*l))))
			continue;
		artifact_putf(p, "<tr class=\"h\"><td colspan=\"4\">");
		put_n(p, hk->header, strcspn(hk->header, "\n"));
		artifact_put(p, "</td></tr>\n");
		n = hunk_lines(patch, h, l, lines, &shown);
		pair_runs(l, n);
		if (split)
			split_rows(p, l, n);
		else
			unified_rows(p, l, n);
		free(l);
	}
	if (shown >= SERVE_FILE_MAX)
		artifact_putf(p, "<tr class=\"h\"><td colspan=\"4\">... cut at %d KiB</td></tr>\n",
			      SERVE_FILE_MAX / 1024);
}

static void file_summary(struct artifact_page *p, const git_diff_delta *dd, size_t add,
			 size_t del)
{
	artifact_put(p, "<summary><code>");
	artifact_put_esc(p, dd->new_file.path);
	if (dd->status == GIT_DELTA_RENAMED) {
		artifact_put(p, "</code> (renamed from <code>");
		artifact_put_esc(p, dd->old_file.path);
		artifact_put(p, "</code>)<code>");
	}
	artifact_putf(p, "</code> <span class=\"ok\">+%zu</span> <span class=\"error\">-%zu</span>"
			 "</summary>", add, del);
}

/* One file: a <details> (open when small or asked), its table. */
static void file_patch(struct artifact_page *p, git_diff *diff, size_t i, int split, int open)
{
	git_patch *patch = NULL;
	size_t add = 0, del = 0;
	const git_diff_delta *dd = git_diff_get_delta(diff, i);

	if (git_patch_from_diff(&patch, diff, i) || !patch) {
		artifact_put(p, "<details class=\"file\"><summary>(cannot show this file)</summary>"
				"</details>\n");
		return;
	}
	git_patch_line_stats(NULL, &add, &del, patch);
	artifact_putf(p, "<details class=\"file\"%s>", open || add + del <= SMALL_FILE
			 ? " open data-auto" : "");
	file_summary(p, dd, add, del);
	if (dd->flags & GIT_DIFF_FLAG_BINARY)
		artifact_put(p, "<p class=\"muted\">binary file</p>");
	else {
		artifact_putf(p, "<div class=\"diffwrap\"><table class=\"diff %s\">\n",
			      split ? "split" : "unified");
		hunks(p, patch, split);
		artifact_put(p, "</table></div>");
	}
	artifact_put(p, "</details>\n");
	git_patch_free(patch);
}

/* Changed lines of files [from, to). */
static size_t changed_lines(git_diff *diff, size_t from, size_t to)
{
	size_t total = 0, add, del;
	git_patch *patch;

	for (size_t i = from; i < to && total <= SMALL_DIFF; i++) {
		if (git_patch_from_diff(&patch, diff, i) || !patch)
			continue;
		add = del = 0;
		git_patch_line_stats(NULL, &add, &del, patch);
		total += add + del;
		git_patch_free(patch);
	}
	return total;
}

void serve__diff_files(struct artifact_page *p, struct serve_diff *v, size_t from, size_t to,
		       int split, int expand)
{
	int open;

	if (to > v->n)
		to = v->n;
	open = expand || changed_lines(v->diff, from, to) <= SMALL_DIFF;
	if (from >= to)
		artifact_put(p, "<p class=\"muted\">no change</p>\n");
	for (size_t i = from; i < to; i++)
		file_patch(p, v->diff, i, split, open);
}

/* A link to the same view with one thing changed (base: "/runs/<id>[/diff]"). */
static void view_link(struct artifact_page *p, const char *base, const char *extra,
		      int split, int expand, const char *id, const char *label)
{
	artifact_put(p, " <a id=\"");
	artifact_put(p, id);
	artifact_put(p, "\" href=\"");
	artifact_put_esc(p, base);
	artifact_putf(p, "?view=%s%s%s", split ? "split" : "unified", expand ? "&amp;expand=all" : "",
		      extra ? "&amp;" : "");
	artifact_put_esc(p, extra ? extra : "");
	/* on a run's page, back to its diff rather than to the top */
	artifact_putf(p, "%s\">%s</a>", strstr(base, "/diff") ? "" : "#diff", label);
}

void serve__diff_views(struct artifact_page *p, const char *base, const char *extra, int split,
		       int expand)
{
	artifact_put(p, "<p class=\"views\">");
	if (split)
		view_link(p, base, extra, 0, expand, "view-unified", "unified");
	else
		view_link(p, base, extra, 1, expand, "view-split", "side by side");
	if (expand)
		view_link(p, base, extra, split, 0, "collapse", "collapse large files");
	else
		view_link(p, base, extra, split, 1, "expand-all", "expand all");
	artifact_put(p, "</p>\n");
}
