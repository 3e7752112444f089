/* diff.patch (git's own bytes) and files_changed.json (libgit2's list). */
#include "worktree/worktree.h"
#include "core/tree_paths.h"
#include "core/utf8.h"
#include "core/fs.h"
#include "core/git.h"
#include "core/json.h"

#include <git2.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int oid_valid(const char *hex)
{
	size_t i;

	if (!hex || strlen(hex) != GIT_OID_HEXSZ)
		return 0;
	for (i = 0; i < GIT_OID_HEXSZ; i++)
		if (!strchr("0123456789abcdef", hex[i]))
			return 0;
	return 1;
}

static int check_ids(const char *base, const char *head, struct sl_err *err)
{
	if (!oid_valid(base) || !oid_valid(head))
		return sl_err_set(err, SL_EINVALID,
				  "'%s'..'%s' are not commit ids; pass 40 lower-case hex digits",
				  base ? base : "", head ? head : "");
	return 0;
}

static int utf8_valid(const char *s)
{
	size_t n = strlen(s), i = 0, k;

	while (i < n) {
		if (!(k = sl_utf8_seq((const unsigned char *)s + i, n - i, NULL)))
			return 0;
		i += k;
	}
	return 1;
}

json_t *worktree_diff_json_text(const char *s, size_t n)
{
	struct sl_buf b = SL_BUF_INIT;
	size_t i = 0, k;
	json_t *j = NULL;

	while (i < n) {
		k = s[i] ? sl_utf8_seq((const unsigned char *)s + i, n - i, NULL) : 0; /* NUL too */
		if (sl_buf_add(&b, k ? s + i : "\xef\xbf\xbd", k ? k : 3) < 0)
			goto out;
		i += k ? k : 1;
	}
	j = json_stringn(sl_buf_cstr(&b), b.len);
out:
	sl_buf_release(&b);
	return j;
}

/* A file name as JSON text: each byte that is not part of valid UTF-8 becomes U+FFFD. */
static json_t *lossy_string(const char *s)
{
	return worktree_diff_json_text(s, strlen(s));
}

/*
 * A file name quoted as git quotes it with core.quotePath=true (as in
 * diff.patch), without the surrounding quotes: \" \\ \a \b \t \n \v \f \r,
 * and \ooo for other control bytes and every byte from 0x7f up. Plain ASCII.
 */
static json_t *git_quoted(const char *s)
{
	static const char letters[] = "abtnvfr"; /* 0x07 .. 0x0d */
	struct sl_buf b = SL_BUF_INIT;
	const unsigned char *p;
	json_t *j = NULL;
	int error = 0;

	for (p = (const unsigned char *)s; *p && !error; p++) {
		if (*p == '"' || *p == '\\')
			error = sl_buf_addf(&b, "\\%c", *p);
		else if (*p >= 0x07 && *p <= 0x0d)
			error = sl_buf_addf(&b, "\\%c", letters[*p - 0x07]);
		else if (*p < 0x20 || *p >= 0x7f)
			error = sl_buf_addf(&b, "\\%03o", *p);
		else
			error = sl_buf_add(&b, p, 1);
	}
	if (!error)
		j = json_stringn(sl_buf_cstr(&b), b.len);
	sl_buf_release(&b);
	return j;
}

/*
 * git diff base head, its patch written to `out` (a path) or, with out NULL,
 * captured from stdout into `capture` (bounded by its max) with the full
 * size in *total.
 */
static int run_git_diff(const char *repo, const char *base, const char *head, int out_fd,
			struct sl_buf *capture, size_t *total, struct sl_err *err)
{
	/* the patch goes to stdout (out_fd or capture), never --output: git would follow links */
	const char *args[] = {
		"--no-replace-objects", "-c", "core.quotePath=true", "-c", "core.bigFileThreshold=512m",
		"-c", "diff.noprefix=false", "-c", "diff.mnemonicPrefix=false",
		"-c", "diff.suppressBlankEmpty=false", "-c", "diff.relative=false",
		"diff", "--binary", "--full-index", "-M", "-l1000", "--no-color", "--no-ext-diff",
		"--no-textconv", "--src-prefix=a/", "--dst-prefix=b/", "--diff-algorithm=myers",
		"--indent-heuristic", "-U3", "--inter-hunk-context=0", "-O/dev/null",
		"--ignore-submodules=none", "--submodule=short", base, head, "--", NULL
	};
	struct sl_git_opts o = SL_GIT_OPTS_INIT;
	struct sl_git_result res;
	char what[64];
	int error;

	snprintf(what, sizeof(what), "git diff %.12s %.12s", base, head);
	o.cwd = repo; /* the main checkout: no ceiling */
	o.out = capture;
	o.out_cut_ok = 1; /* the caller reads *total */
	o.out_fd = out_fd;
	o.what = what;
	/*
	 * git refused these two commits (a file over 2 GiB: "Out of memory,
	 * malloc failed"): it will again on every try, so SL_EINVALID, and the
	 * run ends with the reason. A timeout may be load: tried again.
	 */
	o.fail_code = SL_EINVALID;
	error = sl_git_run(&o, args, &res, err);
	if (!error && total)
		*total = res.out_bytes;
	return error;
}

int worktree_diff_patch(const char *repo_path, const char *base_hex, const char *head_hex,
		      const char *patch_path, struct sl_err *err)
{
	struct sl_err ignored = SL_ERR_INIT;
	char *tmp = NULL;
	int error, fd = -1;

	if ((error = check_ids(base_hex, head_hex, err)) < 0)
		return error;
	if (asprintf(&tmp, "%s.tmp.%ld", patch_path, (long)getpid()) < 0)
		return sl_err_set(err, SL_ERROR, "out of memory");
	/*
	 * sluice opens the file (a planted link at its name goes first, a link
	 * on the way to it is refused: core/fs.h) and git writes to its stdout
	 */
	if ((error = sl_unlink(tmp, err)) < 0 ||
	    (error = sl_open_file(tmp, O_WRONLY | O_CREAT | O_EXCL, 0644, &fd, err)) < 0) {
		free(tmp);
		return error;
	}
	error = run_git_diff(repo_path, base_hex, head_hex, fd, NULL, NULL, err);
	if (!error && fsync(fd) < 0)
		error = sl_err_sys(err, errno, "cannot write '%s'", tmp);
	if (close(fd) < 0 && !error)
		error = sl_err_sys(err, errno, "cannot write '%s'", tmp);
	if (!error)
		error = sl_rename(tmp, patch_path, err);
	if (error)
		sl_unlink(tmp, &ignored);
	free(tmp);
	return error;
}

int worktree_diff_patch_mem(const char *repo_path, const char *base_hex, const char *head_hex,
			  struct sl_buf *out, size_t *total, struct sl_err *err)
{
	int error;

	*total = 0;
	sl_buf_reset(out);
	if ((error = check_ids(base_hex, head_hex, err)) < 0)
		return error;
	if ((error = run_git_diff(repo_path, base_hex, head_hex, -1, out, total, err)) < 0)
		sl_buf_reset(out);
	return error;
}

static char status_char(git_delta_t s)
{
	switch (s) {
	case GIT_DELTA_ADDED:
		return 'A';
	case GIT_DELTA_DELETED:
		return 'D';
	case GIT_DELTA_RENAMED:
		return 'R';
	case GIT_DELTA_COPIED:
		return 'C';
	case GIT_DELTA_TYPECHANGE:
		return 'T';
	default:
		return 'M';
	}
}

static int push(struct worktree_file_changes *fc, char status, const char *path, const char *old)
{
	struct worktree_file_change *v = realloc(fc->v, (fc->n + 1) * sizeof(*v));

	if (!v)
		return -1;
	fc->v = v;
	v = &fc->v[fc->n++];
	v->status = status;
	v->path = strdup(path);
	v->old_path = old ? strdup(old) : NULL;
	return v->path && (!old || v->old_path) ? 0 : -1;
}

static int add_delta(struct worktree_file_changes *fc, const git_diff_delta *d)
{
	char st = status_char(d->status);

	if (st == 'D')
		return push(fc, st, d->old_file.path, NULL);
	return push(fc, st, d->new_file.path, st == 'R' || st == 'C' ? d->old_file.path : NULL);
}

static int cmp_change(const void *a, const void *b)
{
	return strcmp(((const struct worktree_file_change *)a)->path,
		      ((const struct worktree_file_change *)b)->path);
}

static int tree_of(git_tree **out, git_repository *repo, const char *hex)
{
	git_oid oid;
	git_commit *c = NULL;
	int rc;

	if ((rc = git_oid_fromstr(&oid, hex)) < 0 || (rc = git_commit_lookup(&c, repo, &oid)) < 0)
		return rc;
	rc = git_commit_tree(out, c);
	git_commit_free(c);
	return rc;
}

struct path_list {
	char **v;
	size_t n, cap;
};

static int add_path(const char *path, void *payload)
{
	struct path_list *l = payload;
	char **v;

	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 64;
		if (!(v = realloc(l->v, l->cap * sizeof(*v))))
			return -1;
		l->v = v;
	}
	return (l->v[l->n] = strdup(path)) ? (l->n++, 0) : -1;
}

/*
 * libgit2's diff of the two trees, limited to the paths sl_tree_paths()
 * found (an exact path list, which libgit2's tree iterators follow without
 * reading the equal subtrees): the same deltas, renames found among them,
 * at the cost of what changed.
 */
static int tree_diff(git_diff **out, git_repository *repo, const char *base, const char *head)
{
	struct path_list l = { NULL, 0, 0 };
	git_tree *a = NULL, *b = NULL;
	git_diff_options o;
	git_diff_find_options fo;
	size_t i;
	int rc;

	git_diff_options_init(&o, GIT_DIFF_OPTIONS_VERSION);
	o.flags |= GIT_DIFF_INCLUDE_TYPECHANGE | GIT_DIFF_DISABLE_PATHSPEC_MATCH;
	git_diff_find_options_init(&fo, GIT_DIFF_FIND_OPTIONS_VERSION);
	fo.flags = GIT_DIFF_FIND_RENAMES;
	fo.rename_limit = WORKTREE_DIFF_RENAME_LIMIT;
	if ((rc = tree_of(&a, repo, base)) == 0 && (rc = tree_of(&b, repo, head)) == 0 &&
	    (rc = sl_tree_paths(repo, a, b, add_path, &l)) == 0) {
		o.pathspec.strings = l.v;
		o.pathspec.count = l.n;
		/* no path: an empty diff (an empty path list would mean every path) */
		if ((rc = l.n ? git_diff_tree_to_tree(out, repo, a, b, &o) :
				git_diff_tree_to_tree(out, repo, NULL, NULL, &o)) == 0)
			rc = git_diff_find_similar(*out, &fo);
	}
	for (i = 0; i < l.n; i++)
		free(l.v[i]);
	free(l.v);
	git_tree_free(a);
	git_tree_free(b);
	return rc;
}

int worktree_diff_files(const char *repo_path, const char *base_hex, const char *head_hex,
		      struct worktree_file_changes *out, struct sl_err *err)
{
	git_repository *repo = NULL;
	git_diff *diff = NULL;
	size_t i, n;
	int rc, error;

	memset(out, 0, sizeof(*out));
	if ((error = check_ids(base_hex, head_hex, err)) < 0)
		return error;
	if ((rc = git_repository_open_ext(&repo, repo_path, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL)) < 0) {
		error = sl_err_git(err, rc, "cannot open the repository '%s'", repo_path);
		goto out;
	}
	if ((rc = tree_diff(&diff, repo, base_hex, head_hex)) < 0) {
		error = sl_err_git(err, rc, "cannot diff %.12s..%.12s", base_hex, head_hex);
		goto out;
	}
	n = git_diff_num_deltas(diff);
	for (i = 0; i < n && !error; i++)
		if (add_delta(out, git_diff_get_delta(diff, i)) < 0)
			error = sl_err_set(err, SL_ERROR, "out of memory");
	if (!error && out->n)
		qsort(out->v, out->n, sizeof(*out->v), cmp_change);
out:
	if (error)
		worktree_file_changes_release(out);
	git_diff_free(diff);
	git_repository_free(repo);
	return error;
}

/* Lines added and removed by one delta; a type change counts both blobs' lines, as git does. */
static int line_stats(git_repository *repo, git_patch *patch, size_t *add, size_t *del)
{
	const git_diff_delta *d = git_patch_get_delta(patch);
	git_blob *a = NULL, *b = NULL;
	git_patch *p = NULL;
	size_t ctx;
	int rc;

	if (d->status != GIT_DELTA_TYPECHANGE)
		return git_patch_line_stats(&ctx, add, del, patch);
	if ((rc = git_blob_lookup(&a, repo, &d->old_file.id)) == 0 &&
	    (rc = git_blob_lookup(&b, repo, &d->new_file.id)) == 0 &&
	    (rc = git_patch_from_blobs(&p, a, d->old_file.path, b, d->new_file.path, NULL)) == 0)
		rc = git_patch_line_stats(&ctx, add, del, p);
	git_patch_free(p);
	git_blob_free(a);
	git_blob_free(b);
	return rc;
}

static json_t *file_stat(git_repository *repo, git_patch *patch, size_t *add, size_t *del)
{
	const git_diff_delta *d = git_patch_get_delta(patch);
	const char *path = d->status == GIT_DELTA_DELETED ? d->old_file.path : d->new_file.path;
	int binary = (d->flags & GIT_DIFF_FLAG_BINARY) != 0;

	*add = *del = 0;
	if (!binary && line_stats(repo, patch, add, del) < 0)
		return NULL;
	return json_pack("{s:o, s:b, s:I, s:I}", "path", lossy_string(path), "binary", binary,
			 "insertions", (json_int_t)*add, "deletions", (json_int_t)*del);
}

int worktree_diff_stat(const char *repo_path, const char *base_hex, const char *head_hex,
		     json_t **out, struct sl_err *err)
{
	git_repository *repo = NULL;
	git_diff *diff = NULL;
	git_patch *patch = NULL;
	json_t *files = NULL, *f;
	size_t i, n, add, del, adds = 0, dels = 0;
	int rc, error = 0;

	*out = NULL;
	if ((error = check_ids(base_hex, head_hex, err)) < 0)
		return error;
	if ((rc = git_repository_open_ext(&repo, repo_path, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL)) < 0 ||
	    (rc = tree_diff(&diff, repo, base_hex, head_hex)) < 0) {
		error = sl_err_git(err, rc, "cannot diff %.12s..%.12s", base_hex, head_hex);
		goto out;
	}
	if (!(files = json_array())) {
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	n = git_diff_num_deltas(diff);
	for (i = 0; i < n; i++) {
		if ((rc = git_patch_from_diff(&patch, diff, i)) < 0) {
			error = sl_err_git(err, rc, "cannot diff %.12s..%.12s", base_hex, head_hex);
			goto out;
		}
		f = patch ? file_stat(repo, patch, &add, &del) : NULL;
		git_patch_free(patch);
		patch = NULL;
		if (!f || json_array_append_new(files, f) < 0) {
			error = sl_err_set(err, SL_ERROR, "out of memory");
			goto out;
		}
		adds += add;
		dels += del;
	}
	*out = json_pack("{s:I, s:I, s:I, s:O}", "files_changed", (json_int_t)n, "insertions",
			 (json_int_t)adds, "deletions", (json_int_t)dels, "files", files);
	if (!*out)
		error = sl_err_set(err, SL_ERROR, "out of memory");
out:
	json_decref(files);
	git_diff_free(diff);
	git_repository_free(repo);
	return error;
}

void worktree_file_changes_release(struct worktree_file_changes *fc)
{
	size_t i;

	for (i = 0; i < fc->n; i++) {
		free(fc->v[i].path);
		free(fc->v[i].old_path);
	}
	free(fc->v);
	fc->v = NULL;
	fc->n = 0;
}

/* key: the name (lossy when not UTF-8); key_quoted: git's quoting, only then. */
static int set_name(json_t *o, const char *key, const char *key_quoted, const char *name)
{
	if (utf8_valid(name))
		return json_object_set_new(o, key, json_string(name));
	if (json_object_set_new(o, key, lossy_string(name)) < 0)
		return -1;
	return json_object_set_new(o, key_quoted, git_quoted(name));
}

json_t *worktree_file_changes_to_json(const struct worktree_file_changes *fc)
{
	json_t *arr = json_array(), *o;
	char st[2] = { 0, 0 };
	size_t i;

	if (!arr)
		return NULL;
	for (i = 0; i < fc->n; i++) {
		st[0] = fc->v[i].status;
		if (!(o = json_object()) || json_array_append_new(arr, o) < 0 ||
		    set_name(o, "path", "path_quoted", fc->v[i].path) < 0 ||
		    json_object_set_new(o, "status", json_string(st)) < 0 ||
		    (fc->v[i].old_path &&
		     set_name(o, "old_path", "old_path_quoted", fc->v[i].old_path) < 0)) {
			json_decref(arr);
			return NULL;
		}
	}
	return arr;
}

char *worktree_file_changes_json(const struct worktree_file_changes *fc)
{
	json_t *arr = worktree_file_changes_to_json(fc);
	char *s = arr ? sl_json_format(arr) : NULL;

	json_decref(arr);
	return s;
}

static int write_json(const struct worktree_file_changes *fc, const char *path, struct sl_err *err)
{
	json_t *arr = worktree_file_changes_to_json(fc);
	int error;

	if (!arr)
		return sl_err_set(err, SL_ERROR, "out of memory");
	error = sl_json_write(path, arr, err);
	json_decref(arr);
	return error;
}

int worktree_diff_write(const char *repo_path, const char *base_hex, const char *head_hex,
		      const char *patch_path, const char *files_json_path,
		      struct worktree_file_changes *files, struct sl_err *err)
{
	struct worktree_file_changes fc = WORKTREE_FILE_CHANGES_INIT;
	int error = 0;

	if (files)
		memset(files, 0, sizeof(*files));
	if (patch_path && (error = worktree_diff_patch(repo_path, base_hex, head_hex, patch_path,
						     err)) < 0)
		goto out;
	if (!files_json_path && !files)
		goto out;
	if ((error = worktree_diff_files(repo_path, base_hex, head_hex, &fc, err)) < 0)
		goto out;
	if (files_json_path && (error = write_json(&fc, files_json_path, err)) < 0)
		goto out;
	if (files) {
		*files = fc;
		memset(&fc, 0, sizeof(fc));
	}
out:
	worktree_file_changes_release(&fc);
	return error;
}

