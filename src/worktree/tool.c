/*
 * The worktree tool (`sluice worktree`, rp1's agent tool of seeds/001):
 * worktrees for agents outside the run pipeline, at
 * <root>/.system/worktrees/<branch>, and whether a directory is inside a
 * linked worktree. src/cli/cmd_worktree.c parses and prints; the git work
 * is here (worktree.h).
 */
#include "worktree/worktree_int.h"
#include "core/fs.h"

#include <git2.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The full id of the commit `rev` names. */
static int resolve_base(const char *root, const char *rev, char hex[41], struct sl_err *err)
{
	git_repository *repo = NULL;
	git_object *obj = NULL, *commit = NULL;
	int rc, error = 0;

	if ((rc = git_repository_open(&repo, root)) < 0 ||
	    (rc = git_revparse_single(&obj, repo, rev)) < 0 ||
	    (rc = git_object_peel(&commit, obj, GIT_OBJECT_COMMIT)) < 0)
		error = sl_err_git(err, rc, "cannot resolve base '%s' to a commit; pass --base "
				   "with a branch, tag or commit", rev);
	else
		git_oid_tostr(hex, 41, git_object_id(commit));
	git_object_free(commit);
	git_object_free(obj);
	git_repository_free(repo);
	return error;
}

static int branch_exists(const char *root, const char *branch)
{
	git_repository *repo = NULL;
	git_reference *ref = NULL;
	int exists = 0;

	if (git_repository_open(&repo, root) == 0 &&
	    git_branch_lookup(&ref, repo, branch, GIT_BRANCH_LOCAL) == 0)
		exists = 1;
	git_reference_free(ref);
	git_repository_free(repo);
	return exists;
}

/* The first free <stem>, <stem>-2, <stem>-3, ... (*out the caller's). */
static int free_branch(const char *root, const char *stem, char **out, struct sl_err *err)
{
	int i, len;

	for (i = 1; i < 1000; i++) {
		if (i == 1)
			len = asprintf(out, "%s", stem);
		else
			len = asprintf(out, "%s-%d", stem, i);
		if (len < 0) {
			*out = NULL;
			return sl_err_set(err, SL_ERROR, "out of memory");
		}
		if (!branch_exists(root, *out))
			return 0;
		free(*out);
		*out = NULL;
	}
	return sl_err_set(err, SL_EEXISTS, "branches '%s' to '%s-999' all exist; use another slug",
			  stem, stem);
}

void worktree_tool_made_release(struct worktree_tool_made *m)
{
	free(m->path);
	free(m->branch);
	m->path = m->branch = NULL;
	m->base[0] = '\0';
}

int worktree_tool_create(const char *root, const char *slug, const char *prefix,
			 const char *base, struct worktree_tool_made *out, struct sl_err *err)
{
	char *stem = NULL, *name = NULL, *p;
	int error;

	if (asprintf(&stem, "%s-%s", prefix, slug) < 0) {
		stem = NULL;
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	if (!worktree_branch_name_valid(stem)) {
		error = sl_err_set(err, SL_EINVALID, "'%s' is not a valid branch name; fix --prefix",
				   stem);
		goto out;
	}
	if ((error = resolve_base(root, base, out->base, err)) < 0 ||
	    (error = free_branch(root, stem, &out->branch, err)) < 0 ||
	    (error = worktree_exclude_system(root, err)) < 0)
		goto out;
	/* the .git/worktrees/<name> entry: the branch with '/' as '-' */
	if (!(name = strdup(out->branch)) ||
	    asprintf(&out->path, "%s/.system/worktrees/%s", root, out->branch) < 0) {
		out->path = NULL;
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	for (p = name; *p; p++)
		if (*p == '/')
			*p = '-';
	if (sl_path_exists(out->path))
		error = sl_err_set(err, SL_EEXISTS,
				   "Path already exists: '%s'; clean it up (sluice worktree cleanup "
				   "'%s') or use a different slug",
				   out->path, out->path);
	else
		error = worktree_add(root, name, out->path, out->branch, out->base, NULL, err);
out:
	free(stem);
	free(name);
	return error;
}

/* PATH made absolute (resolved when it exists); must lie inside root. */
static int cleanup_path(const char *root, const char *arg, char *abs, struct sl_err *err)
{
	char cwd[PATH_MAX], tmp[PATH_MAX * 2];
	size_t n = strlen(root);

	if (!realpath(arg, abs)) {
		if (arg[0] == '/' || !getcwd(cwd, sizeof(cwd)))
			snprintf(tmp, sizeof(tmp), "%s", arg);
		else
			snprintf(tmp, sizeof(tmp), "%s/%s", cwd, arg);
		if (strlen(tmp) >= PATH_MAX)
			return sl_err_set(err, SL_EINVALID, "path '%s' is too long", arg);
		memcpy(abs, tmp, strlen(tmp) + 1);
	}
	if (strncmp(abs, root, n) != 0 || abs[n] != '/' || strstr(abs, "/../"))
		return sl_err_set(err, SL_EINVALID,
				  "'%s' is not inside the repository '%s'; cleanup only removes "
				  "worktrees of this repository",
				  arg, root);
	return 0;
}

int worktree_tool_cleanup(const char *root, const char *path, int keep_branch, int force,
			  char **abs_out, int *branch_deleted, struct sl_err *err)
{
	char abs[PATH_MAX];
	int error;

	*abs_out = NULL;
	*branch_deleted = 0;
	if ((error = cleanup_path(root, path, abs, err)) < 0 ||
	    (error = worktree_remove(root, abs, NULL, force, !keep_branch, branch_deleted,
				     err)) < 0)
		return error;
	if (!(*abs_out = strdup(abs)))
		return sl_err_set(err, SL_ERROR, "out of memory");
	return 0;
}

void worktree_tool_status_release(struct worktree_tool_status *st)
{
	free(st->path);
	free(st->branch);
	free(st->main_path);
	memset(st, 0, sizeof(*st));
}

/* The linked worktree `repo` is: its path, branch and main repository. */
static int linked_status(git_repository *repo, struct worktree_tool_status *out,
			 struct sl_err *err)
{
	git_repository *main = NULL;
	git_reference *head = NULL;
	int rc, error = 0;

	if ((rc = git_repository_open(&main, git_repository_commondir(repo))) < 0 ||
	    !git_repository_workdir(main)) {
		error = sl_err_git(err, rc, "cannot open the main repository of this worktree");
		goto out;
	}
	out->is_worktree = 1;
	out->path = sl_path_strip_slash(git_repository_workdir(repo));
	out->main_path = sl_path_strip_slash(git_repository_workdir(main));
	if (git_repository_head(&head, repo) == 0 && git_reference_is_branch(head))
		out->branch = strdup(git_reference_shorthand(head));
	if (!out->path || !out->main_path)
		error = sl_err_set(err, SL_ERROR, "out of memory");
out:
	git_reference_free(head);
	git_repository_free(main);
	return error;
}

int worktree_tool_status(const char *dir, struct worktree_tool_status *out, struct sl_err *err)
{
	git_repository *repo = NULL;
	int error = 0;

	memset(out, 0, sizeof(*out));
	if (git_repository_open_ext(&repo, dir, 0, NULL) < 0)
		error = sl_err_set(err, SL_ENOTFOUND, "'%s' is not inside a git repository", dir);
	else if (git_repository_is_worktree(repo))
		error = linked_status(repo, out, err);
	git_repository_free(repo);
	if (error)
		worktree_tool_status_release(out);
	return error;
}
