/*
 * The rival of a conflict: who last changed the lines that clash on the
 * target. The clashing lines of the target's side come from the two sides'
 * hunks against the merge base (merge_clashing_lines); `git blame
 * --first-parent <base>..<tip>` names, for each, the commit of the target's
 * first-parent history that brought it: a run's merge commit, or a commit
 * made on the target itself (docs/builders.md, "The rival").
 */
#include "merge/merge_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLAME_RANGES_MAX 256
#define BLAME_OUT_MAX ((size_t)32 << 20)

/* A hunk's base lines as [*a, *b) (0-based); an insertion is the empty [p, p). */
static void base_span(const struct merge_hunk *h, size_t *a, size_t *b)
{
	*a = h->old_count ? h->old_start - 1 : h->old_start;
	*b = *a + h->old_count;
}

/* xdiff's test (xdl_do_merge): two changes conflict when their base lines overlap or touch. */
static int clash(const struct merge_hunk *o, const struct merge_hunk *t)
{
	size_t oa, ob, ta, tb;

	base_span(o, &oa, &ob);
	base_span(t, &ta, &tb);
	return ob >= ta && tb >= oa;
}

static int lines_cmp(const void *a, const void *b)
{
	const struct merge_lines *x = a, *y = b;

	return x->first < y->first ? -1 : x->first > y->first;
}

/* Our lines of hunk `o`: its new lines, or those on either side of a removal. */
static int our_lines(const struct merge_hunk *o, size_t total, struct merge_lines *l)
{
	size_t first = o->new_start, last = o->new_start + o->new_count - 1;

	if (!o->new_count) {
		first = o->new_start ? o->new_start : 1;
		last = o->new_start + 1;
	}
	if (last > total)
		last = total;
	if (first < 1 || first > last)
		return 0;
	l->first = first;
	l->count = last - first + 1;
	return 1;
}

/* Sort and merge overlapping or adjacent ranges in place; the new count. */
static size_t coalesce(struct merge_lines *v, size_t n)
{
	size_t i, k = 0;

	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), lines_cmp);
	for (i = 1; i < n; i++) {
		size_t end = v[k].first + v[k].count;
		if (v[i].first <= end) {
			if (v[i].first + v[i].count > end)
				v[k].count = v[i].first + v[i].count - v[k].first;
		} else {
			v[++k] = v[i];
		}
	}
	return k + 1;
}

int merge_clashing_lines(const struct merge_hunk *ours, size_t nours,
			 const struct merge_hunk *theirs, size_t ntheirs, size_t our_total,
			 struct merge_lines **out, size_t *nout)
{
	struct merge_lines *v = NULL;
	size_t i, j, n = 0;

	*out = NULL;
	*nout = 0;
	if (nours && !(v = calloc(nours, sizeof(*v))))
		return -1;
	for (i = 0; i < nours; i++)
		for (j = 0; j < ntheirs; j++)
			if (clash(&ours[i], &theirs[j])) {
				n += (size_t)our_lines(&ours[i], our_total, &v[n]);
				break;
			}
	*nout = coalesce(v, n);
	if (!*nout) {
		free(v);
		v = NULL;
	}
	*out = v;
	return 0;
}

/* ---- git blame --porcelain ------------------------------------------------ */

struct blamed {
	char commit[GIT_OID_HEXSZ + 1];
	int boundary;
	char *author, *mail, *subject;
	size_t line, lines;
};

struct blamed_set {
	struct blamed *v;
	size_t n;
};

static void blamed_release(struct blamed_set *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].author);
		free(s->v[i].mail);
		free(s->v[i].subject);
	}
	free(s->v);
}

/* The entry of commit `hex` (a new one at line `line`); NULL out of memory. */
static struct blamed *blamed_get(struct blamed_set *s, const char *hex, size_t line)
{
	struct blamed *nv;
	size_t i;

	for (i = 0; i < s->n; i++)
		if (!strcmp(s->v[i].commit, hex))
			return &s->v[i];
	if (!(nv = realloc(s->v, (s->n + 1) * sizeof(*nv))))
		return NULL;
	s->v = nv;
	memset(&nv[s->n], 0, sizeof(*nv));
	memcpy(nv[s->n].commit, hex, GIT_OID_HEXSZ);
	nv[s->n].line = line;
	return &nv[s->n++];
}

/* "<40 hex> <orig> <final>[ <count>]": the commit and the final line, or 0. */
static int header_line(const char *l, size_t len, char *hex, size_t *final)
{
	unsigned long o, f;

	if (len < GIT_OID_HEXSZ + 4 || l[GIT_OID_HEXSZ] != ' ' ||
	    strspn(l, "0123456789abcdef") != GIT_OID_HEXSZ ||
	    sscanf(l + GIT_OID_HEXSZ, " %lu %lu", &o, &f) != 2)
		return 0;
	memcpy(hex, l, GIT_OID_HEXSZ);
	hex[GIT_OID_HEXSZ] = '\0';
	*final = f;
	return 1;
}

static int set_field(char **field, const char *l, size_t len, const char *key)
{
	size_t k = strlen(key);

	if (len < k || memcmp(l, key, k) != 0 || *field)
		return 0;
	return (*field = strndup(l + k, len - k)) ? 0 : -1;
}

/* One metadata line of the current commit `b`. */
static int meta_line(struct blamed *b, const char *l, size_t len)
{
	if (len == 8 && !memcmp(l, "boundary", 8)) {
		b->boundary = 1;
		return 0;
	}
	if (set_field(&b->author, l, len, "author ") || set_field(&b->mail, l, len, "author-mail ") ||
	    set_field(&b->subject, l, len, "summary "))
		return -1;
	return 0;
}

static int parse_into(struct blamed_set *s, const char *data, size_t len)
{
	struct blamed *cur = NULL;
	const char *p = data, *end = data + len, *nl;
	char hex[GIT_OID_HEXSZ + 1];
	size_t final;

	for (; p < end; p = nl + 1) {
		if (!(nl = memchr(p, '\n', (size_t)(end - p))))
			nl = end;
		if (*p == '\t') {
			cur = NULL;
		} else if (!cur && header_line(p, (size_t)(nl - p), hex, &final)) {
			if (!(cur = blamed_get(s, hex, final)))
				return -1;
			cur->lines++;
		} else if (cur && meta_line(cur, p, (size_t)(nl - p)) != 0) {
			return -1;
		}
	}
	return 0;
}

/* Append blamed `b` (not a boundary) to the landings, or add to its count. */
static int add_landing(struct merge_landing **v, size_t *n, const struct blamed *b,
		       const char *path)
{
	struct merge_landing *nv, *l;
	size_t i;

	for (i = 0; i < *n; i++)
		if (!strcmp((*v)[i].commit, b->commit)) {
			(*v)[i].lines += b->lines;
			return 0;
		}
	if (!(nv = realloc(*v, (*n + 1) * sizeof(*nv))))
		return -1;
	*v = nv;
	l = &nv[*n];
	memset(l, 0, sizeof(*l));
	memcpy(l->commit, b->commit, sizeof(l->commit));
	l->line = b->line;
	l->lines = b->lines;
	(*n)++;
	if (asprintf(&l->author, "%s %s", b->author ? b->author : "?", b->mail ? b->mail : "<>") < 0)
		l->author = NULL;
	l->subject = strdup(b->subject ? b->subject : "");
	l->path = strdup(path);
	return l->author && l->subject && l->path ? 0 : -1;
}

int merge__parse_blame(const char *data, size_t len, const char *path,
		       struct merge_landing **v, size_t *n)
{
	struct blamed_set s = { NULL, 0 };
	size_t i;
	int error = parse_into(&s, data, len);

	for (i = 0; !error && i < s.n; i++)
		if (!s.v[i].boundary)
			error = add_landing(v, n, &s.v[i], path);
	blamed_release(&s);
	return error;
}

/* ---- the clashing lines of one path --------------------------------------- */

struct hunks {
	struct merge_hunk *v;
	size_t n;
	int oom;
};

static int hunk_cb(const git_diff_delta *d, const git_diff_hunk *h, void *payload)
{
	struct hunks *hs = payload;
	struct merge_hunk *nv;

	(void)d;
	if (!(nv = realloc(hs->v, (hs->n + 1) * sizeof(*nv)))) {
		hs->oom = 1;
		return -1;
	}
	hs->v = nv;
	nv[hs->n].old_start = (size_t)h->old_start;
	nv[hs->n].old_count = (size_t)h->old_lines;
	nv[hs->n].new_start = (size_t)h->new_start;
	nv[hs->n].new_count = (size_t)h->new_lines;
	hs->n++;
	return 0;
}

/* The hunks of base -> side (a NULL blob is an empty file), no context. */
static int side_hunks(const git_blob *base, const git_blob *side, const char *path,
		      struct hunks *out)
{
	git_diff_options o;

	git_diff_options_init(&o, GIT_DIFF_OPTIONS_VERSION);
	o.context_lines = 0;
	o.interhunk_lines = 0;
	return git_diff_blobs(base, path, side, path, &o, NULL, NULL, hunk_cb, NULL, out);
}

/* The blob at `path` of commit `c`, NULL when there is none there. */
static git_blob *blob_at(git_repository *repo, const git_commit *c, const char *path)
{
	git_tree *t = NULL;
	git_tree_entry *e = NULL;
	git_blob *b = NULL;

	if (git_commit_tree(&t, c) == 0 && git_tree_entry_bypath(&e, t, path) == 0 &&
	    git_tree_entry_type(e) == GIT_OBJECT_BLOB)
		git_blob_lookup(&b, repo, git_tree_entry_id(e));
	git_tree_entry_free(e);
	git_tree_free(t);
	git_error_clear();
	return b;
}

static size_t count_lines(const git_blob *b)
{
	const char *p = git_blob_rawcontent(b);
	size_t len = (size_t)git_blob_rawsize(b), i, n = 0;

	for (i = 0; i < len; i++)
		n += p[i] == '\n';
	return n + (len && p[len - 1] != '\n');
}

struct sides {
	const git_commit *base, *tip, *head;
};

/* The clashing lines of tip's side of `path` (*n 0: none to blame). */
static int path_lines(git_repository *repo, const struct sides *sd, const char *path,
		      struct merge_lines **out, size_t *n)
{
	git_blob *base = blob_at(repo, sd->base, path), *tip = blob_at(repo, sd->tip, path);
	git_blob *head = blob_at(repo, sd->head, path);
	struct hunks o = { NULL, 0, 0 }, t = { NULL, 0, 0 };
	int error = 0;

	*out = NULL;
	*n = 0;
	if (!tip || git_blob_is_binary(tip) || (head && git_blob_is_binary(head)))
		goto out;
	if (side_hunks(base, tip, path, &o) != 0 || side_hunks(base, head, path, &t) != 0) {
		error = o.oom || t.oom ? -1 : 0;
		git_error_clear();
		goto out;
	}
	error = merge_clashing_lines(o.v, o.n, t.v, t.n, count_lines(tip), out, n);
out:
	free(o.v);
	free(t.v);
	git_blob_free(base);
	git_blob_free(tip);
	git_blob_free(head);
	return error;
}

/* ---- blame ------------------------------------------------------------------ */

static int blame_path(const char *repo_path, const char *range, const char *path,
		      const struct merge_lines *lines, size_t nlines, struct merge_landing **v,
		      size_t *n, struct sl_err *err)
{
	const char *args[8 + 2 * BLAME_RANGES_MAX];
	char spans[BLAME_RANGES_MAX][48];
	struct sl_buf out;
	size_t i, a = 0;
	int code = 0, error;

	args[a++] = "blame";
	args[a++] = "--porcelain";
	args[a++] = "--first-parent";
	args[a++] = "--no-textconv"; /* a textconv is a program the config names: never run one */
	for (i = 0; i < nlines && i < BLAME_RANGES_MAX; i++) {
		snprintf(spans[i], sizeof(spans[i]), "%zu,%zu", lines[i].first,
			 lines[i].first + lines[i].count - 1);
		args[a++] = "-L";
		args[a++] = spans[i];
	}
	args[a++] = range;
	args[a++] = "--";
	args[a++] = path;
	args[a] = NULL;
	sl_buf_init(&out, BLAME_OUT_MAX);
	if ((error = merge__run_git(repo_path, args, &out, 0, &code, err)) == 0 &&
	    merge__parse_blame(sl_buf_cstr(&out), out.len, path, v, n) != 0)
		error = sl_err_set(err, SL_ERROR, "out of memory");
	sl_buf_release(&out);
	return error;
}

static int open_sides(git_repository *repo, const char *tip, const char *head,
		      git_commit **c, char *range, struct sl_err *err)
{
	git_oid base;
	char b[GIT_OID_HEXSZ + 1], t[GIT_OID_HEXSZ + 1];
	int error;

	if ((error = merge__resolve_commit(&c[1], repo, tip, err)) != 0 ||
	    (error = merge__resolve_commit(&c[2], repo, head, err)) != 0)
		return error;
	if ((error = git_merge_base(&base, repo, git_commit_id(c[1]), git_commit_id(c[2]))) != 0 ||
	    (error = git_commit_lookup(&c[0], repo, &base)) != 0)
		return sl_err_git(err, error, "cannot find the merge base of '%s' and '%s'", tip,
				  head);
	git_oid_tostr(b, sizeof(b), &base);
	git_oid_tostr(t, sizeof(t), git_commit_id(c[1]));
	snprintf(range, 2 * GIT_OID_HEXSZ + 3, "%s..%s", b, t);
	return 0;
}

int merge_blame_landings(const char *repo_path, const char *tip, const char *head,
			 const char *const *paths, size_t npaths, struct merge_landing **out,
			 size_t *nout, struct sl_err *err)
{
	git_repository *repo = NULL;
	git_commit *c[3] = { NULL, NULL, NULL };
	struct merge_lines *lines = NULL;
	char range[2 * GIT_OID_HEXSZ + 3];
	size_t i, nl;
	int error;

	*out = NULL;
	*nout = 0;
	if ((error = git_repository_open(&repo, repo_path)) != 0) {
		error = sl_err_git(err, error, "cannot open the repository '%s'", repo_path);
		goto out;
	}
	if ((error = open_sides(repo, tip, head, c, range, err)) != 0)
		goto out;
	for (i = 0; i < npaths && !error; i++) {
		struct sides sd = { c[0], c[1], c[2] };
		if (path_lines(repo, &sd, paths[i], &lines, &nl) != 0)
			error = sl_err_set(err, SL_ERROR, "out of memory");
		else if (nl)
			error = blame_path(repo_path, range, paths[i], lines, nl, out, nout, err);
		free(lines);
		lines = NULL;
	}
out:
	for (i = 0; i < 3; i++)
		git_commit_free(c[i]);
	git_repository_free(repo);
	if (error) {
		merge_landings_free(*out, *nout);
		*out = NULL;
		*nout = 0;
	}
	return error;
}

void merge_landings_free(struct merge_landing *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].author);
		free(v[i].subject);
		free(v[i].path);
	}
	free(v);
}
