/* diff.patch (git's own bytes) and files_changed.json (libgit2's list). */
#include "runner/diff.h"
#include "core/fs.h"
#include "core/proc.h"

#include <git2.h>
#include <errno.h>
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

static int run_git_diff(const char *repo, const char *base, const char *head, const char *out,
			struct sl_err *err)
{
	char output[4200];
	const char *args[] = {
		"--no-replace-objects", "-c", "core.quotePath=true", "-c", "core.bigFileThreshold=512m",
		"-c", "diff.noprefix=false", "-c", "diff.mnemonicPrefix=false",
		"-c", "diff.suppressBlankEmpty=false", "-c", "diff.relative=false",
		"diff", "--binary", "--full-index", "-M", "-l1000", "--no-color", "--no-ext-diff",
		"--no-textconv", "--src-prefix=a/", "--dst-prefix=b/", "--diff-algorithm=myers",
		"--indent-heuristic", "-U3", "--inter-hunk-context=0", "-O/dev/null",
		"--ignore-submodules=none", "--submodule=short", output, base, head, "--", NULL
	};
	struct sl_proc_opts o = SL_PROC_OPTS_INIT;
	struct sl_proc_result res;
	struct sl_buf errout = SL_BUF_INIT;
	const char **argv;
	char how[64];
	int error;

	if ((size_t)snprintf(output, sizeof(output), "--output=%s", out) >= sizeof(output))
		return sl_err_set(err, SL_EINVALID, "patch path '%s' is too long", out);
	if (!(argv = sl_git_argv(args)))
		return sl_err_set(err, SL_ERROR, "out of memory");
	sl_buf_init(&errout, 8192);
	o.argv = argv;
	o.cwd = repo;
	o.env_add = sl_git_env_add;
	o.env_drop = sl_git_env_drop; /* and the safe overrides and timeout of core/proc.h */
	o.errout = &errout;
	o.timeout_ms = sl_git_timeout_ms();
	if ((error = sl_proc_run(&o, &res, err)) == 0 && res.exit_code != 0) {
		sl_proc_describe(how, sizeof(how), &res);
		error = sl_err_set(err, SL_ERROR, "'git diff %.12s %.12s' in '%s' failed (%s): %s",
				   base, head, repo, how, sl_buf_cstr(&errout));
	}
	sl_buf_release(&errout);
	free(argv);
	return error;
}

int runner_diff_patch(const char *repo_path, const char *base_hex, const char *head_hex,
		      const char *patch_path, struct sl_err *err)
{
	char *tmp = NULL;
	int error;

	if ((error = check_ids(base_hex, head_hex, err)) < 0)
		return error;
	if (asprintf(&tmp, "%s.tmp.%ld", patch_path, (long)getpid()) < 0)
		return sl_err_set(err, SL_ERROR, "out of memory");
	/* whatever sits at the temporary name (a planted symlink) goes first */
	if (unlink(tmp) < 0 && errno != ENOENT) {
		error = sl_err_sys(err, errno, "cannot remove '%s'", tmp);
		free(tmp);
		return error;
	}
	if ((error = run_git_diff(repo_path, base_hex, head_hex, tmp, err)) == 0 &&
	    rename(tmp, patch_path) < 0)
		error = sl_err_sys(err, errno, "cannot rename '%s' to '%s'", tmp, patch_path);
	if (error)
		unlink(tmp);
	free(tmp);
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

static int push(struct runner_file_changes *fc, char status, const char *path, const char *old)
{
	struct runner_file_change *v = realloc(fc->v, (fc->n + 1) * sizeof(*v));

	if (!v)
		return -1;
	fc->v = v;
	v = &fc->v[fc->n++];
	v->status = status;
	v->path = strdup(path);
	v->old_path = old ? strdup(old) : NULL;
	return v->path && (!old || v->old_path) ? 0 : -1;
}

static int add_delta(struct runner_file_changes *fc, const git_diff_delta *d)
{
	char st = status_char(d->status);

	if (st == 'D')
		return push(fc, st, d->old_file.path, NULL);
	return push(fc, st, d->new_file.path, st == 'R' || st == 'C' ? d->old_file.path : NULL);
}

static int cmp_change(const void *a, const void *b)
{
	return strcmp(((const struct runner_file_change *)a)->path,
		      ((const struct runner_file_change *)b)->path);
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

static int tree_diff(git_diff **out, git_repository *repo, const char *base, const char *head)
{
	git_tree *a = NULL, *b = NULL;
	git_diff_options o;
	git_diff_find_options fo;
	int rc;

	git_diff_options_init(&o, GIT_DIFF_OPTIONS_VERSION);
	o.flags |= GIT_DIFF_INCLUDE_TYPECHANGE;
	git_diff_find_options_init(&fo, GIT_DIFF_FIND_OPTIONS_VERSION);
	fo.flags = GIT_DIFF_FIND_RENAMES;
	fo.rename_limit = RUNNER_DIFF_RENAME_LIMIT;
	if ((rc = tree_of(&a, repo, base)) == 0 && (rc = tree_of(&b, repo, head)) == 0 &&
	    (rc = git_diff_tree_to_tree(out, repo, a, b, &o)) == 0)
		rc = git_diff_find_similar(*out, &fo);
	git_tree_free(a);
	git_tree_free(b);
	return rc;
}

int runner_diff_files(const char *repo_path, const char *base_hex, const char *head_hex,
		      struct runner_file_changes *out, struct sl_err *err)
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
		runner_file_changes_release(out);
	git_diff_free(diff);
	git_repository_free(repo);
	return error;
}

void runner_file_changes_release(struct runner_file_changes *fc)
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

char *runner_file_changes_json(const struct runner_file_changes *fc)
{
	json_t *arr = json_array(), *o;
	char st[2] = { 0, 0 }, *s = NULL;
	size_t i;

	if (!arr)
		return NULL;
	for (i = 0; i < fc->n; i++) {
		st[0] = fc->v[i].status;
		o = json_pack("{s:s, s:s}", "path", fc->v[i].path, "status", st);
		if (o && fc->v[i].old_path)
			json_object_set_new(o, "old_path", json_string(fc->v[i].old_path));
		if (!o || json_array_append_new(arr, o) < 0)
			goto out;
	}
	s = json_dumps(arr, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
out:
	json_decref(arr);
	return s;
}

static int write_json(const struct runner_file_changes *fc, const char *path, struct sl_err *err)
{
	char *s = runner_file_changes_json(fc);
	struct sl_buf b = SL_BUF_INIT;
	int error;

	if (!s)
		return sl_err_set(err, SL_ERROR, "out of memory");
	sl_buf_init(&b, 0);
	if ((error = sl_buf_puts(&b, s)) == 0 && (error = sl_buf_puts(&b, "\n")) == 0)
		error = sl_write_file_atomic(path, b.ptr, b.len, err);
	else
		error = sl_err_set(err, error, "cannot write '%s'", path);
	sl_buf_release(&b);
	free(s);
	return error;
}

int runner_diff_write(const char *repo_path, const char *base_hex, const char *head_hex,
		      const char *patch_path, const char *files_json_path,
		      struct runner_file_changes *files, struct sl_err *err)
{
	struct runner_file_changes fc = RUNNER_FILE_CHANGES_INIT;
	int error = 0;

	if (files)
		memset(files, 0, sizeof(*files));
	if (patch_path && (error = runner_diff_patch(repo_path, base_hex, head_hex, patch_path,
						     err)) < 0)
		goto out;
	if (!files_json_path && !files)
		goto out;
	if ((error = runner_diff_files(repo_path, base_hex, head_hex, &fc, err)) < 0)
		goto out;
	if (files_json_path && (error = write_json(&fc, files_json_path, err)) < 0)
		goto out;
	if (files) {
		*files = fc;
		memset(&fc, 0, sizeof(fc));
	}
out:
	runner_file_changes_release(&fc);
	return error;
}
