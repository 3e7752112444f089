/*
 * The builder's resolution inside the run's worktree: start the merge of
 * the target with the git CLI (markers land in the files), check that a
 * resolution is complete, and commit it.
 */
#include "merge/merge_int.h"
#include "core/fs.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define LS_FILES_MAX ((size_t)16 << 20)
#define RESOLVED_FILE_MAX ((size_t)64 << 20)

static int is_full_hex(const char *s)
{
	size_t i;

	for (i = 0; s && s[i]; i++)
		if (!isxdigit((unsigned char)s[i]))
			return 0;
	return s && i == GIT_OID_HEXSZ;
}

/* The unmerged paths of the index of `wt` (git ls-files -u -z). */
static int unmerged_paths(const char *wt, struct merge_paths *out, struct sl_err *err)
{
	const char *args[] = { "ls-files", "-u", "-z", NULL };
	struct sl_buf buf;
	size_t pos = 0;
	int error, code;

	sl_buf_init(&buf, LS_FILES_MAX);
	error = merge__run_git(wt, args, &buf, 0, &code, err);
	while (!error && pos < buf.len) {
		const char *rec = buf.ptr + pos, *tab = strchr(rec, '\t');

		pos += strlen(rec) + 1;
		if (tab && merge_paths_add(out, tab + 1))
			error = sl_err_set(err, SL_ERROR, "out of memory");
	}
	sl_buf_release(&buf);
	return error;
}

/*
 * The names of the merge.<name>.driver entries the `git merge` in `wt_path`
 * would read: asked of git itself, so that every file it reads counts (the
 * shared config, its include.path/includeIf files, a worktree's own
 * config.worktree, the global one).
 */
static int planted_drivers(const char *wt_path, struct merge_paths *names, struct sl_err *err)
{
	const char *args[] = { "config", "-z", "--get-regexp", "^merge\\..*\\.driver$", NULL };
	struct sl_buf out;
	size_t pos = 0;
	int error, code = 0;

	sl_buf_init(&out, (size_t)1 << 20);
	if ((error = merge__run_git(wt_path, args, &out, 1, &code, err)) != 0)
		goto out;
	while (pos < out.len) { /* "merge.<name>.driver\n<value>\0" */
		const char *rec = out.ptr + pos;
		size_t klen = strcspn(rec, "\n"), rlen = strlen(rec);
		char *name;

		pos += rlen + 1;
		if (klen < 6 + 1 + 7 || strncmp(rec, "merge.", 6) ||
		    strncmp(rec + klen - 7, ".driver", 7))
			continue;
		if (!(name = strndup(rec + 6, klen - 6 - 7))) {
			error = sl_err_set(err, SL_ERROR, "out of memory");
			goto out;
		}
		if (strchr(name, '=')) {
			error = sl_err_set(err, SL_EINVALID, "the git config of '%s' names a merge "
					   "driver with '=' in its name ('%s'); remove it", wt_path,
					   name);
			free(name);
			goto out;
		}
		error = merge_paths_add(names, name);
		free(name);
		if (error) {
			error = sl_err_set(err, SL_ERROR, "out of memory");
			goto out;
		}
	}
out:
	sl_buf_release(&out);
	return error;
}

/*
 * A merge driver in the shared config (a builder can plant one, chosen by
 * .git/info/attributes or merge.default) must not run here, with the
 * repository lock held: each one configured is replaced by git's own
 * text merge (`git merge-file`, markers and exit status as git's), as the
 * merge's private git directory (merge/crosscheck.c) does. *overrides: the values of
 * `git -c` that do it, "merge.<name>.driver=...".
 */
static int driver_overrides(const char *wt_path, const char *target_oid,
			    struct merge_paths *overrides, struct sl_err *err)
{
	struct merge_paths drivers = MERGE_PATHS_INIT;
	struct sl_buf q = SL_BUF_INIT;
	size_t i;
	int error;

	if ((error = planted_drivers(wt_path, &drivers, err)) < 0)
		goto out;
	/* the driver's command line goes through the shell: git's path single-quoted */
	error = sl_buf_puts(&q, "'");
	for (const char *p = merge__git(); *p && !error; p++)
		error = *p == '\'' ? sl_buf_puts(&q, "'\\''") : sl_buf_add(&q, p, 1);
	if (error || sl_buf_puts(&q, "'")) {
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	for (i = 0; i < drivers.n && !error; i++) {
		struct sl_buf o = SL_BUF_INIT;

		if (sl_buf_addf(&o, "merge.%s.driver=%s merge-file --marker-size=%%L -L HEAD "
				"-L base -L %s %%A %%O %%B", drivers.v[i], sl_buf_cstr(&q),
				target_oid) || merge_paths_add(overrides, sl_buf_cstr(&o)))
			error = sl_err_set(err, SL_ERROR, "out of memory");
		sl_buf_release(&o);
	}
out:
	sl_buf_release(&q);
	merge_paths_release(&drivers);
	return error;
}

int merge_into_worktree(const char *wt_path, const char *target_oid,
			struct merge_paths *conflicted, struct sl_err *err)
{
	const char *tail[] = { "merge", "--no-ff", "--no-commit", "--no-edit", "-q", target_oid,
			       NULL };
	struct merge_paths overrides = MERGE_PATHS_INIT;
	const char **args = NULL;
	size_t i, n = 0;
	int error, code = 0;

	if (!is_full_hex(target_oid))
		return sl_err_set(err, SL_EINVALID, "'%s' is not a full commit id",
				  target_oid ? target_oid : "");
	if ((error = driver_overrides(wt_path, target_oid, &overrides, err)) != 0)
		goto out;
	if (!(args = calloc(2 * overrides.n + sizeof(tail) / sizeof(tail[0]), sizeof(*args)))) {
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	for (i = 0; i < overrides.n; i++) {
		args[n++] = "-c";
		args[n++] = overrides.v[i];
	}
	for (i = 0; tail[i]; i++)
		args[n++] = tail[i];
	error = merge__run_git(wt_path, args, NULL, 1, &code, err);
	if (!error)
		error = unmerged_paths(wt_path, conflicted, err);
	if (!error && code && !conflicted->n)
		error = sl_err_set(err, SL_ERROR, "'git merge %s' in '%s' failed without conflicts; "
				   "run it there to see why", target_oid, wt_path);
out:
	free(args);
	merge_paths_release(&overrides);
	return error;
}

static int is_marker(const char *line, size_t len)
{
	if (len >= 8 && (!memcmp(line, "<<<<<<< ", 8) || !memcmp(line, ">>>>>>> ", 8)))
		return 1;
	if (len >= 7 && !memcmp(line, "=======", 7))
		return len == 7 || (len == 8 && line[7] == '\r');
	return 0;
}

/* The first line holding a conflict marker (1-based), or 0. */
static size_t marker_line(const char *data, size_t len)
{
	size_t pos = 0, lineno = 1;

	while (pos < len) {
		const char *nl = memchr(data + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (data + pos)) : len - pos;

		if (is_marker(data + pos, n))
			return lineno;
		pos += n + 1;
		lineno++;
	}
	return 0;
}

static int check_markers(const char *wt, const char *path, struct sl_err *err)
{
	struct sl_buf buf;
	struct stat st;
	char *full = sl_path_join(wt, path);
	size_t line;
	int error = 0;

	sl_buf_init(&buf, RESOLVED_FILE_MAX + 1);
	if (!full)
		error = sl_err_set(err, SL_ERROR, "out of memory");
	else if (lstat(full, &st) || !S_ISREG(st.st_mode))
		goto out; /* deleted, or not a file: nothing to scan */
	else if (!(error = sl_read_file(&buf, full, RESOLVED_FILE_MAX, err)) &&
		 (line = marker_line(sl_buf_cstr(&buf), buf.len)))
		error = sl_err_set(err, SL_ECONFLICT, "'%s' still has a conflict marker at line %zu; "
				   "resolve it in '%s'", path, line, wt);
out:
	sl_buf_release(&buf);
	free(full);
	return error;
}

int merge_verify_resolved(const char *wt_path, const struct merge_paths *conflicted,
			  struct sl_err *err)
{
	struct merge_paths left = MERGE_PATHS_INIT;
	size_t i;
	int error;

	error = unmerged_paths(wt_path, &left, err);
	if (!error && left.n)
		error = sl_err_set(err, SL_ECONFLICT, "'%s' is still unmerged in '%s'%s; resolve "
				   "it and 'git add' it", left.v[0], wt_path,
				   left.n > 1 ? " (and more)" : "");
	for (i = 0; !error && conflicted && i < conflicted->n; i++)
		error = check_markers(wt_path, conflicted->v[i], err);
	merge_paths_release(&left);
	return error;
}

/* GIT_REPOSITORY_STATE_MERGE, or whether HEAD is already a merge commit (state NONE). */
static int merge_state(const char *wt, int *merging, int *head_is_merge, git_oid *head,
		       struct sl_err *err)
{
	git_repository *repo = NULL;
	git_commit *c = NULL;
	int error;

	error = git_repository_open(&repo, wt);
	if (!error)
		error = git_reference_name_to_id(head, repo, "HEAD");
	if (!error)
		error = git_commit_lookup(&c, repo, head);
	if (error) {
		error = sl_err_git(err, error, "cannot read HEAD of the worktree '%s'", wt);
		goto out;
	}
	*merging = git_repository_state(repo) == GIT_REPOSITORY_STATE_MERGE;
	*head_is_merge = git_commit_parentcount(c) == 2;
out:
	git_commit_free(c);
	git_repository_free(repo);
	return error;
}

/* `git add -A -- . :(exclude)P...`: everything but the shared and copied paths. */
static int stage_all(const char *wt_path, const char *const *excluded, struct sl_err *err)
{
	const char **args;
	char **owned;
	size_t n = 0, i;
	int error = 0, code;

	while (excluded && excluded[n])
		n++;
	args = calloc(n + 5, sizeof(*args));
	owned = calloc(n + 1, sizeof(*owned));
	if (!args || !owned) {
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	args[0] = "add";
	args[1] = "-A";
	args[2] = "--";
	args[3] = ".";
	for (i = 0; i < n; i++) {
		if (asprintf(&owned[i], ":(exclude,literal)%s", excluded[i]) < 0) {
			owned[i] = NULL;
			error = sl_err_set(err, SL_ERROR, "out of memory");
			goto out;
		}
		args[4 + i] = owned[i];
	}
	error = merge__run_git(wt_path, args, NULL, 0, &code, err);
out:
	for (i = 0; owned && i < n; i++)
		free(owned[i]);
	free(owned);
	free(args);
	return error;
}

int merge_commit_resolution(const char *wt_path, const char *message, const char *name,
			    const char *email, const struct merge_paths *conflicted,
			    const char *const *excluded, git_oid *head, struct sl_err *err)
{
	const char *commit_msg[] = { "commit", "-q", "-m", message, NULL };
	const char *commit_noedit[] = { "commit", "-q", "--no-edit", NULL };
	char an[320], ae[320], cn[320], ce[320];
	const char *who[] = { an, ae, cn, ce, NULL };
	int error, code, merging = 0, head_is_merge = 0;

	snprintf(an, sizeof(an), "GIT_AUTHOR_NAME=%s", name ? name : "sluice");
	snprintf(ae, sizeof(ae), "GIT_AUTHOR_EMAIL=%s", email ? email : "sluice@localhost");
	snprintf(cn, sizeof(cn), "GIT_COMMITTER_NAME=%s", name ? name : "sluice");
	snprintf(ce, sizeof(ce), "GIT_COMMITTER_EMAIL=%s", email ? email : "sluice@localhost");

	if ((error = merge_state(wt_path, &merging, &head_is_merge, head, err)))
		return error;
	if (!merging && head_is_merge)
		return merge_verify_resolved(wt_path, conflicted, err); /* the builder committed */
	if (!merging)
		return sl_err_set(err, SL_EINVALID, "no merge is in progress in '%s'; nothing to "
				  "commit", wt_path);
	if ((error = stage_all(wt_path, excluded, err)) ||
	    (error = merge_verify_resolved(wt_path, conflicted, err)) ||
	    (error = merge__run_git_env(wt_path, who, message ? commit_msg : commit_noedit, NULL,
					0, &code, err)))
		return error;
	return merge_state(wt_path, &merging, &head_is_merge, head, err);
}
