/*
 * merge_conflict_info: the conflicted paths and gitConflictOutput, all from
 * git merge-tree's result: per path the conflicted hunks of the file as git
 * wrote it, with conflict markers and context (or a one-line description
 * where markers make no sense), then
 * git's CONFLICT messages; bounded at MERGE_CONFLICT_OUTPUT_MAX.
 */
#include "merge/merge_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOTE_ROOM 64
#define MARKER_LEN 8 /* "<<<<<<< " */
#define HUNK_CONTEXT 3 /* lines around a conflicted region, as git diff's default */

struct ci {
	git_repository *repo;
	struct merge_conflict_info *info;
	const char *ours, *theirs; /* labels */
	char hex[2][GIT_OID_HEXSZ + 1]; /* the ids git was given: ours, theirs */
	git_tree *merged, *side[2], *base; /* git's tree, ours, theirs, a merge base's (or NULL) */
};

/* Append unless it would pass the bound; then note the truncation once. */
static void put(struct ci *c, const char *data, size_t len)
{
	struct sl_buf *b = &c->info->output;

	if (c->info->truncated)
		return;
	if (b->len + len + NOTE_ROOM > MERGE_CONFLICT_OUTPUT_MAX ||
	    sl_buf_add(b, data, len)) {
		c->info->truncated = 1;
		sl_buf_puts(b, "[sluice: conflict output truncated]\n");
	}
}

static void putf(struct ci *c, const char *fmt, const char *a, const char *b, const char *d)
{
	char line[1024];
	int n = snprintf(line, sizeof(line), fmt, a, b, d);

	put(c, line, n < 0 ? 0 : (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
}

/* A path for a "--- path: ..." header: its line breaks as \n, so it stays one line. */
static const char *one_line_path(char *out, size_t n, const char *path)
{
	size_t o = 0;

	for (; *path && o + 3 < n; path++) {
		if (*path == '\n' || *path == '\r') {
			out[o++] = '\\';
			out[o++] = *path == '\n' ? 'n' : 'r';
		} else {
			out[o++] = *path;
		}
	}
	out[o] = '\0';
	return out;
}

/* 0 ours, 1 theirs when `s` (n bytes left) starts with the id git was given; else -1. */
static int which_id(const struct ci *c, const char *s, size_t n)
{
	int i;

	for (i = 0; i < 2; i++)
		if (n >= GIT_OID_HEXSZ && !memcmp(s, c->hex[i], GIT_OID_HEXSZ))
			return i;
	return -1;
}

/*
 * Append `data`; with `markers_only` the ids are replaced by the labels on
 * conflict marker lines only ("<<<<<<< <id>", ">>>>>>> <id>:<path>"),
 * else everywhere (git's messages).
 */
static void put_labelled(struct ci *c, const char *data, size_t len, int markers_only)
{
	size_t i = 0, from = 0, at, next;
	int side;

	while (i < len) {
		const char *nl = markers_only ? memchr(data + i, '\n', len - i) : NULL;

		next = markers_only ? (nl ? (size_t)(nl - data) + 1 : len) : i + 1;
		at = markers_only ? i + MARKER_LEN : i;
		side = -1;
		if (!markers_only || (len - i > MARKER_LEN &&
				      (!memcmp(data + i, "<<<<<<< ", MARKER_LEN) ||
				       !memcmp(data + i, ">>>>>>> ", MARKER_LEN))))
			side = which_id(c, data + at, len - at);
		if (side < 0) {
			i = next;
			continue;
		}
		put(c, data + from, at - from);
		put(c, side ? c->theirs : c->ours, strlen(side ? c->theirs : c->ours));
		from = at + GIT_OID_HEXSZ;
		i = markers_only ? next : from;
	}
	put(c, data + from, len - from);
}

static git_tree_entry *entry(git_tree *t, const char *path)
{
	git_tree_entry *e = NULL;

	if (t && git_tree_entry_bypath(&e, t, path) < 0)
		git_error_clear();
	return e;
}

static int is_file(const git_tree_entry *e)
{
	return e && (git_tree_entry_filemode(e) == GIT_FILEMODE_BLOB ||
		     git_tree_entry_filemode(e) == GIT_FILEMODE_BLOB_EXECUTABLE);
}

static const char *kind(const git_tree_entry *e)
{
	if (!e)
		return "absent";
	switch (git_tree_entry_filemode(e)) {
	case GIT_FILEMODE_LINK:
		return "a symlink";
	case GIT_FILEMODE_COMMIT:
		return "a submodule";
	case GIT_FILEMODE_TREE:
		return "a directory";
	default:
		return "a file";
	}
}

/* The lines of a file: where each starts (and one past the end), a new array or NULL. */
static size_t *line_starts(const char *data, size_t len, size_t *n)
{
	size_t i, k = 0, *v;

	*n = 0;
	for (i = 0; i < len; i++)
		*n += data[i] == '\n';
	*n += len && data[len - 1] != '\n';
	if (!(v = calloc(*n + 1, sizeof(*v))))
		return NULL;
	for (i = 0; i < len && k < *n; i++)
		if (i == 0 || data[i - 1] == '\n')
			v[k++] = i;
	v[*n] = len;
	return v;
}

/* The first line from `i` on that starts with `marker`, or n. */
static size_t next_marker(const char *data, const size_t *at, size_t n, size_t i,
			  const char *marker)
{
	for (; i < n; i++)
		if (at[i + 1] - at[i] >= MARKER_LEN && !memcmp(data + at[i], marker, MARKER_LEN))
			return i;
	return n;
}

/* The last line of the hunk whose first region opens at line `i`: regions that meet join it. */
static size_t hunk_end(const char *data, const size_t *at, size_t n, size_t i)
{
	size_t close, to, next;

	for (;;) {
		close = next_marker(data, at, n, i, ">>>>>>> ");
		to = close + HUNK_CONTEXT < n ? close + HUNK_CONTEXT : n - 1;
		next = close < n ? next_marker(data, at, n, close + 1, "<<<<<<< ") : n;
		if (next == n || next > to + 1 + HUNK_CONTEXT)
			return to;
		i = next;
	}
}

/*
 * The conflicted hunks of a file with markers, as `git diff` shows hunks:
 * each region from "<<<<<<< " to ">>>>>>> " with HUNK_CONTEXT lines
 * around it (regions that meet are one hunk), under "@@ lines A-B @@",
 * A and B the line numbers of the file as git wrote it (as in the
 * worktree after `git merge`), each line as it is there.
 */
static void put_hunks(struct ci *c, const char *data, size_t len)
{
	size_t n, i = 0, from, to, *at = line_starts(data, len, &n);
	char head[64];

	if (!at || next_marker(data, at, n, 0, "<<<<<<< ") == n) { /* no region: the file */
		put_labelled(c, data, len, 1);
		if (len && data[len - 1] != '\n')
			put(c, "\n", 1);
		free(at);
		return;
	}
	while ((i = next_marker(data, at, n, i, "<<<<<<< ")) < n) {
		from = i > HUNK_CONTEXT ? i - HUNK_CONTEXT : 0;
		to = hunk_end(data, at, n, i);
		snprintf(head, sizeof(head), "@@ lines %zu-%zu @@\n", from + 1, to + 1);
		put(c, head, strlen(head));
		for (i = from; i <= to; i++)
			put_labelled(c, data + at[i], at[i + 1] - at[i], 1);
		if (data[at[to + 1] - 1] != '\n')
			put(c, "\n", 1);
		i = to + 1;
	}
	free(at);
}

/* A text conflict: the hunks of the file git wrote into its tree, with markers. */
static int text_conflict(struct ci *c, const char *path, const git_tree_entry *m,
			 struct sl_err *err)
{
	git_blob *blob = NULL;
	char p[1024];
	size_t len;
	int error;

	if ((error = git_blob_lookup(&blob, c->repo, git_tree_entry_id(m))))
		return sl_err_git(err, error, "cannot read git's merged file '%s'", path);
	len = (size_t)git_blob_rawsize(blob);
	putf(c, "--- %s: content conflict%s%s\n", one_line_path(p, sizeof(p), path), "", "");
	put_hunks(c, git_blob_rawcontent(blob), len);
	git_blob_free(blob);
	return 0;
}

/* One line on what each side did to `path`. */
static void one_line(struct ci *c, const char *path, const char *raw)
{
	git_tree_entry *e[3] = { entry(c->base, path), entry(c->side[0], path),
				 entry(c->side[1], path) };
	char what[512], line[1024];
	size_t n;

	if (e[1] && e[2])
		snprintf(what, sizeof(what), "%s in %s, %s in %s", kind(e[1]), c->ours, kind(e[2]),
			 c->theirs);
	else if (e[1] || e[2])
		snprintf(what, sizeof(what), "%s in %s, deleted or renamed in %s",
			 e[0] ? "modified" : "added", e[1] ? c->ours : c->theirs,
			 e[1] ? c->theirs : c->ours);
	else
		snprintf(what, sizeof(what), "deleted or renamed in both %s and %s", c->ours,
			 c->theirs);
	n = strlen(what);
	if (strcmp(path, raw) && n + 40 < sizeof(what))
		snprintf(what + n, sizeof(what) - n, " (one side kept as '%s')",
			 one_line_path(line, sizeof(line), raw));
	putf(c, "--- %s: %s%s\n", one_line_path(line, sizeof(line), path), what, "");
	for (n = 0; n < 3; n++)
		git_tree_entry_free(e[n]);
}

/* Describe git's conflicted path `raw` ("<path>~<side>" possibly) shown as `path`. */
static int describe(struct ci *c, const struct merge__git_tree *gt, const char *raw,
		    const char *path, struct sl_err *err)
{
	git_tree_entry *m = entry(c->merged, raw);
	char p[1024];
	int error = 0;

	if (merge_paths_has(&gt->binary, raw))
		putf(c, "--- %s: binary file changed in %s and in %s\n",
		     one_line_path(p, sizeof(p), path), c->ours, c->theirs);
	else if (merge_paths_has(&gt->content, raw) && is_file(m))
		error = text_conflict(c, path, m, err);
	else
		one_line(c, path, raw);
	git_tree_entry_free(m);
	return error;
}

/* The trees: git's, both sides', a merge base's (none for unrelated histories). */
static int open_trees(struct ci *c, const git_commit *ours, const git_commit *theirs,
		      const git_oid *merged, struct sl_err *err)
{
	git_commit *base = NULL;
	git_oid b;
	int error;

	if ((error = git_tree_lookup(&c->merged, c->repo, merged)) ||
	    (error = git_commit_tree(&c->side[0], ours)) ||
	    (error = git_commit_tree(&c->side[1], theirs)))
		return sl_err_git(err, error, "cannot read the merged trees");
	if (!git_merge_base(&b, c->repo, git_commit_id(ours), git_commit_id(theirs)) &&
	    !git_commit_lookup(&base, c->repo, &b) && git_commit_tree(&c->base, base))
		c->base = NULL;
	git_commit_free(base);
	git_error_clear();
	return 0;
}

static int fill(struct ci *c, const git_commit *ours, const git_commit *theirs,
		const struct merge_opts *opts, struct sl_err *err)
{
	struct merge_result r = MERGE_RESULT_INIT;
	struct merge__git_tree gt = { 0 };
	size_t i;
	int error;

	if ((error = merge__preview_git(c->repo, ours, theirs, opts, &r, &gt, err)))
		goto out;
	snprintf(c->info->reason, sizeof(c->info->reason), "%s", r.reason);
	for (i = 0; i < r.conflicts.n && !error; i++)
		if (merge_paths_add(&c->info->paths, r.conflicts.v[i]))
			error = sl_err_set(err, SL_ERROR, "out of memory");
	if (error || r.clean || (error = open_trees(c, ours, theirs, &r.tree, err)))
		goto out;
	git_oid_tostr(c->hex[0], sizeof(c->hex[0]), &r.ours);
	git_oid_tostr(c->hex[1], sizeof(c->hex[1]), &r.theirs);
	for (i = 0; i < gt.paths.n && !error; i++) {
		char *path = strdup(gt.paths.v[i]);
		size_t n = path ? strlen(path) : 0;

		if (path && n > GIT_OID_HEXSZ + 1 && path[n - GIT_OID_HEXSZ - 1] == '~' &&
		    which_id(c, path + n - GIT_OID_HEXSZ, GIT_OID_HEXSZ) >= 0)
			path[n - GIT_OID_HEXSZ - 1] = '\0';
		error = path ? describe(c, &gt, gt.paths.v[i], path, err) :
			       sl_err_set(err, SL_ERROR, "out of memory");
		free(path);
	}
	if (!error && r.git_messages.len) {
		put(c, "--- git merge-tree:\n", 20);
		put_labelled(c, r.git_messages.ptr, r.git_messages.len, 0);
	}
out:
	merge__git_tree_release(&gt);
	merge_result_release(&r);
	return error;
}

int merge_conflict_info(const char *repo_path, const char *ours_rev, const char *theirs_rev,
			const char *ours_label, const char *theirs_label, const struct merge_opts *opts,
			struct merge_conflict_info *info, struct sl_err *err)
{
	struct ci c = { NULL, info, ours_label ? ours_label : ours_rev,
			theirs_label ? theirs_label : theirs_rev, { "", "" }, NULL, { NULL, NULL },
			NULL };
	git_commit *ours = NULL, *theirs = NULL;
	int error;

	sl_buf_init(&info->output, MERGE_CONFLICT_OUTPUT_MAX);
	error = git_repository_open_ext(&c.repo, repo_path, 0, NULL);
	if (error) {
		error = sl_err_git(err, error, "cannot open the repository '%s'", repo_path);
		goto out;
	}
	if ((error = merge__resolve_commit(&ours, c.repo, ours_rev, err)) ||
	    (error = merge__resolve_commit(&theirs, c.repo, theirs_rev, err)))
		goto out;
	error = fill(&c, ours, theirs, opts, err);
out:
	git_tree_free(c.merged);
	git_tree_free(c.side[0]);
	git_tree_free(c.side[1]);
	git_tree_free(c.base);
	git_commit_free(ours);
	git_commit_free(theirs);
	git_repository_free(c.repo);
	return error;
}

void merge_conflict_info_release(struct merge_conflict_info *info)
{
	merge_paths_release(&info->paths);
	sl_buf_release(&info->output);
}
