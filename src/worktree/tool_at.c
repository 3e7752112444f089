/*
 * Smithers' worktree options (seeds/004, `sluice worktree create --path P
 * [--branch B] [--base REF]`): a worktree at a path the user chooses, on a
 * branch (an existing one checked out, a missing one made at the base) or
 * detached at the base; idempotent when that worktree is there already.
 * The worktree is made by `git worktree add` (core/git.h: hooks off, the
 * branch name checked and never an option, every path absolute after `--`).
 * Removal with the seed's message for a dirty worktree: tool.c's cleanup.
 */
#include "worktree/worktree_int.h"
#include "core/fs.h"
#include "core/git.h"
#include "core/lock.h"

#include <git2.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SUGGEST_PATH "use a path outside the repository's .git and .system/ folders, " \
		     "such as ./worktrees/NAME"

void worktree_tool_at_release(struct worktree_tool_at *a)
{
	free(a->path);
	free(a->branch);
	a->path = a->branch = NULL;
	a->base[0] = '\0';
	a->created = 0;
}

int worktree_tool_repo_check(const char *dir, const char **suggestion, struct sl_err *err)
{
	git_buf found = { 0 };
	git_repository *repo = NULL, *main = NULL;
	int error = 0;

	if (git_repository_discover(&found, dir ? dir : ".", 0, NULL) < 0 ||
	    git_repository_open(&repo, found.ptr) < 0) {
		*suggestion = "run it inside a git repository, or pass -C DIR";
		error = sl_err_set(err, SL_ENOTFOUND,
				   "cannot create worktree - not in a git repository");
	} else if (git_repository_is_bare(repo) ||
		   (git_repository_is_worktree(repo) &&
		    git_repository_open(&main, git_repository_commondir(repo)) == 0 &&
		    git_repository_is_bare(main))) {
		*suggestion = "run it in a clone that has a work tree (git clone REPO DIR)";
		error = sl_err_set(err, SL_EINVALID,
				   "cannot create worktree - '%s' is a bare repository", found.ptr);
	}
	git_repository_free(main);
	git_repository_free(repo);
	git_buf_dispose(&found);
	return error;
}

/* Append the components of `rest` (no '.' or '..' among them) to `base`: a new string. */
static int join_rest(const char *base, const char *rest, const char *arg, char **out,
		     const char **hint, struct sl_err *err)
{
	struct sl_buf b = SL_BUF_INIT;
	const char *p = rest, *end;
	size_t n;
	int error = 0, full = 0;

	sl_buf_init(&b, PATH_MAX);
	full |= sl_buf_puts(&b, strcmp(base, "/") ? base : "") < 0;
	while (*p && !error) {
		end = p + strcspn(p, "/");
		n = (size_t)(end - p);
		if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.')) {
			*hint = "give the path without them, such as ./worktrees/NAME";
			error = sl_err_set(err, SL_EINVALID,
					   "path '%s' has '.' or '..' after a folder that does not "
					   "exist", arg);
		} else if (n)
			full |= sl_buf_add(&b, "/", 1) < 0 || sl_buf_add(&b, p, n) < 0;
		p = *end ? end + 1 : end;
	}
	if (!error && full)
		error = sl_err_set(err, SL_EINVALID, "path '%s' is too long", arg);
	if (!error && !(*out = strdup(b.len ? sl_buf_cstr(&b) : "/")))
		error = sl_err_set(err, SL_ERROR, "out of memory");
	sl_buf_release(&b);
	return error;
}

/*
 * `arg` made absolute (relative to the current directory): the longest part
 * that exists with its links resolved, then the rest. *is_link: `arg`
 * itself is a symbolic link. *out is the caller's, free().
 */
static int tool_abs(const char *arg, char **out, int *is_link, const char **hint,
		    struct sl_err *err)
{
	char cwd[PATH_MAX], res[PATH_MAX], *full = NULL, *head = NULL, *slash;
	struct stat st;
	size_t n;
	int error = 0;

	*out = NULL;
	if (!arg[0])
		return sl_err_set(err, SL_EINVALID, "--path is empty; give a folder");
	if (arg[0] != '/' && !getcwd(cwd, sizeof(cwd)))
		return sl_err_sys(err, errno, "cannot read the current directory");
	full = arg[0] == '/' ? strdup(arg) : sl_path_fmt("%s/%s", cwd, arg);
	if (!full || !(head = strdup(full))) {
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	for (n = strlen(full); n > 1 && full[n - 1] == '/'; n--)
		full[n - 1] = head[n - 1] = '\0';
	*is_link = lstat(full, &st) == 0 && S_ISLNK(st.st_mode);
	while (!realpath(head, res)) {
		if (errno != ENOENT) {
			error = sl_err_sys(err, errno, "cannot resolve path '%s'", arg);
			goto out;
		}
		slash = strrchr(head, '/');
		slash[slash == head ? 1 : 0] = '\0';
	}
	error = join_rest(res, full + strlen(head), arg, out, hint, err);
out:
	free(full);
	free(head);
	return error;
}

/* 1 when `path` is `dir` or lies under it (both absolute, resolved). */
static int within(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return dir[0] && !strncmp(path, dir, n) && (path[n] == '\0' || path[n] == '/');
}

/* Refuse the repository root, .git (the common git dir, or a folder named .git), .system/. */
static int refuse_place(git_repository *repo, const char *root, const char *abs,
			const char *arg, struct worktree_tool_at *out, struct sl_err *err)
{
	char r[PATH_MAX], g[PATH_MAX], *sys = NULL;
	const char *base = strrchr(abs, '/') + 1;
	int error = 0;

	if (!realpath(root, r) || !realpath(git_repository_commondir(repo), g))
		return sl_err_sys(err, errno, "cannot resolve the repository '%s'", root);
	if (!(sys = sl_path_fmt("%s/.system", r)))
		return sl_err_set(err, SL_ERROR, "out of memory");
	out->suggestion = SUGGEST_PATH;
	if (!strcmp(abs, r))
		error = sl_err_set(err, SL_EINVALID, "path '%s' is the repository itself; a "
				   "worktree needs a folder of its own", arg);
	else if (within(abs, g) || !strcasecmp(base, ".git"))
		error = sl_err_set(err, SL_EINVALID, "path '%s' is inside the git directory '%s'",
				   arg, g);
	else if (within(abs, sys))
		error = sl_err_set(err, SL_EINVALID,
				   "path '%s' is inside .system/, sluice's own folder", arg);
	else
		out->suggestion = NULL;
	free(sys);
	return error;
}

/* The linked worktree of `repo` whose path is `abs` (links resolved): *out, or NULL. */
static void lookup_at(git_repository *repo, const char *abs, git_worktree **out)
{
	git_strarray names = { 0 };
	git_worktree *wt;
	size_t i;

	*out = NULL;
	if (git_worktree_list(&names, repo) < 0)
		return;
	for (i = 0; i < names.count && !*out; i++) {
		wt = NULL;
		if (git_worktree_lookup(&wt, repo, names.strings[i]) < 0)
			continue;
		if (worktree__same_path(git_worktree_path(wt), abs))
			*out = wt;
		else
			git_worktree_free(wt);
	}
	git_strarray_dispose(&names);
}

/* The commit HEAD of the work tree at `path` is at, into hex. */
static int head_of(const char *path, char hex[41], struct sl_err *err)
{
	git_repository *r = NULL;
	git_oid oid;
	int rc;

	if ((rc = git_repository_open_ext(&r, path, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL)) < 0 ||
	    (rc = git_reference_name_to_id(&oid, r, "HEAD")) < 0)
		rc = sl_err_git(err, rc, "cannot read HEAD of the worktree '%s'", path);
	else
		git_oid_tostr(hex, 41, &oid);
	git_repository_free(r);
	return rc < 0 ? rc : 0;
}

/*
 * A worktree of this repository at abs already: 1 when it is the one asked
 * for (created stays 0), an error when it is on something else; 0 when
 * there is none (a stale entry of that path, folder gone, is pruned).
 */
static int existing(git_repository *repo, const char *abs, const char *arg, const char *branch,
		    struct worktree_tool_at *out, struct sl_err *err)
{
	git_worktree *wt = NULL;
	git_worktree_prune_options po = GIT_WORKTREE_PRUNE_OPTIONS_INIT;
	char *head = NULL;
	int rc, error = 0;

	lookup_at(repo, abs, &wt);
	if (!wt)
		return 0;
	if (git_worktree_validate(wt) < 0) {
		out->suggestion = "unlock it (git worktree unlock) or use another path";
		if (git_worktree_is_locked(NULL, wt) > 0)
			error = sl_err_set(err, SL_ELOCKED, "path '%s' is a locked worktree entry "
					   "whose folder is gone", arg);
		else if ((rc = git_worktree_prune(wt, &po)) < 0)
			error = sl_err_git(err, rc, "cannot prune the stale worktree entry of '%s'",
					   arg);
		else
			out->suggestion = NULL;
		goto out;
	}
	head = worktree__wt_branch(repo, git_worktree_name(wt));
	if ((branch && head && !strcmp(head, branch)) || (!branch && !head)) {
		error = head_of(abs, out->base, err) < 0 ? -1 : 1;
		goto out;
	}
	out->suggestion = "use another path, or remove that worktree first (sluice worktree "
			  "cleanup PATH)";
	error = sl_err_set(err, SL_EEXISTS, "worktree '%s' already exists %s%s%s, not %s%s%s", arg,
			   head ? "on branch '" : "with a detached HEAD", head ? head : "",
			   head ? "'" : "", branch ? "on branch '" : "detached",
			   branch ? branch : "", branch ? "'" : "");
out:
	free(head);
	git_worktree_free(wt);
	return error;
}

/* Where local branch `branch` is checked out (the main work tree or a linked one): a new string, or NULL. */
static char *checked_out_at(git_repository *repo, const char *root, const char *branch)
{
	git_strarray names = { 0 };
	git_worktree *wt = NULL;
	git_reference *head = NULL;
	char *at = NULL, *b;
	size_t i;

	if (git_repository_head(&head, repo) == 0 && git_reference_is_branch(head) &&
	    !strcmp(git_reference_shorthand(head), branch))
		at = strdup(root);
	git_reference_free(head);
	if (!at && git_worktree_list(&names, repo) == 0)
		for (i = 0; i < names.count && !at; i++) {
			b = worktree__wt_branch(repo, names.strings[i]);
			if (b && !strcmp(b, branch) &&
			    git_worktree_lookup(&wt, repo, names.strings[i]) == 0)
				at = strdup(git_worktree_path(wt));
			git_worktree_free(wt);
			wt = NULL;
			free(b);
		}
	git_strarray_dispose(&names);
	return at;
}

/* The full id of the commit `rev` names. */
static int base_commit(git_repository *repo, const char *rev, char hex[41], struct sl_err *err)
{
	git_object *obj = NULL, *commit = NULL;
	int rc, error = 0;

	if ((rc = git_revparse_single(&obj, repo, rev)) < 0 ||
	    (rc = git_object_peel(&commit, obj, GIT_OBJECT_COMMIT)) < 0)
		error = sl_err_git(err, rc, "cannot resolve base '%s' to a commit", rev);
	else
		git_oid_tostr(hex, 41, git_object_id(commit));
	git_object_free(commit);
	git_object_free(obj);
	return error;
}

/*
 * `git worktree add` of abs: the existing `branch`, a new one at the base,
 * or detached at the base (branch NULL).
 */
static int add_at(git_repository *repo, const char *root, const char *abs, const char *branch,
		  const char *base, struct worktree_tool_at *out, struct sl_err *err)
{
	const char *args[9] = { "worktree", "add", "-q" };
	struct sl_git_opts o = SL_GIT_OPTS_INIT;
	git_reference *ref = NULL;
	char *at = NULL;
	size_t n = 3;
	int error = 0;

	if (branch && git_branch_lookup(&ref, repo, branch, GIT_BRANCH_LOCAL) == 0) {
		if ((at = checked_out_at(repo, root, branch))) {
			out->suggestion = "use another branch, or remove that worktree first";
			error = sl_err_set(err, SL_EEXISTS, "branch '%s' is already checked out at "
					   "'%s'", branch, at);
			goto out;
		}
		args[n++] = "--";
		args[n++] = abs;
		args[n++] = branch;
	} else {
		if ((error = base_commit(repo, base, out->base, err)) < 0) {
			out->suggestion = "pass --base with a branch, tag or commit";
			goto out;
		}
		args[n++] = branch ? "-b" : "--detach";
		if (branch)
			args[n++] = branch;
		args[n++] = "--";
		args[n++] = abs;
		args[n++] = out->base;
	}
	args[n] = NULL;
	o.cwd = root;
	o.what = "git worktree add";
	if ((error = sl_git_run(&o, args, NULL, err)) == 0)
		error = head_of(abs, out->base, err);
out:
	free(at);
	git_reference_free(ref);
	return error;
}

/*
 * Serialize worktree creation: two `git worktree add` at once can read each
 * other's half-made .git/worktrees entry and fail ("failed to read
 * commondir"), and libgit2's adds of the runs race the same way. The
 * service lock (.system/lock) when sluice is set up here, else a lock file
 * of sluice's in the common git directory.
 */
int worktree__tool_lock(git_repository *repo, const char *root, struct sl_lock *lock,
			struct sl_err *err)
{
	char *sys = sl_path_fmt("%s/.system", root), *path = NULL;
	int error;

	if (sys && sl_is_dir(sys))
		path = sl_path_fmt("%s/lock", sys);
	else if (sys)
		path = sl_path_fmt("%s/sluice-worktree.lock", git_repository_commondir(repo));
	if (!path)
		error = sl_err_set(err, SL_ERROR, "out of memory");
	else
		error = sl_lock_acquire(lock, path, 60000, err);
	free(sys);
	free(path);
	return error;
}

int worktree_tool_create_at(const char *root, const char *path, const char *branch,
			    const char *base, struct worktree_tool_at *out, struct sl_err *err)
{
	git_repository *repo = NULL;
	struct sl_lock lock = SL_LOCK_INIT;
	int error, is_link = 0;

	/* "HEAD" and "@" (git's other name for it) would name two things */
	if (branch && (!worktree_branch_name_valid(branch) || !strcmp(branch, "HEAD") ||
		       !strcmp(branch, "@"))) {
		out->suggestion = "use a name git accepts (git check-ref-format --branch NAME) "
				  "that does not start with '-'";
		return sl_err_set(err, SL_EINVALID, "'%s' is not a valid branch name", branch);
	}
	if ((error = tool_abs(path, &out->path, &is_link, &out->suggestion, err)) < 0)
		goto out;
	if (is_link) {
		out->suggestion = "pass the folder it points to, or another path";
		error = sl_err_set(err, SL_EINVALID, "path '%s' is a symbolic link; a worktree is "
				   "never made or reused through a link", path);
		goto out;
	}
	if ((error = worktree__open_repo(&repo, root, err)) < 0 ||
	    (error = refuse_place(repo, root, out->path, path, out, err)) < 0)
		goto out;
	if ((error = worktree__tool_lock(repo, root, &lock, err)) < 0 ||
	    (error = existing(repo, out->path, path, branch, out, err)) != 0)
		goto out;
	if (sl_path_exists(out->path) || lstat(out->path, &(struct stat){ 0 }) == 0) {
		out->suggestion = "use a different path or remove the existing directory";
		error = sl_err_set(err, SL_EEXISTS, "path '%s' already exists and is not a git "
				   "worktree", path);
		goto out;
	}
	if ((error = add_at(repo, root, out->path, branch, base ? base : "HEAD", out, err)) < 0)
		goto out;
	out->created = 1;
out:
	if (error == 1)
		error = 0;
	if (!error && branch && !(out->branch = strdup(branch)))
		error = sl_err_set(err, SL_ERROR, "out of memory");
	sl_lock_release(&lock);
	git_repository_free(repo);
	return error;
}

/* The seed's refusal of a worktree with changes (git status would show them). */
static int refuse_changes(const char *wt_path, const char *arg, const char **suggestion,
			  struct sl_err *err)
{
	struct worktree_changes ch = WORKTREE_CHANGES_INIT;
	int error;

	if ((error = worktree_changes(wt_path, NULL, &ch, err)) == 0 && ch.count) {
		*suggestion = "either commit the changes, or keep the worktree; --force removes it "
			      "and loses them";
		error = sl_err_set(err, SL_ECONFLICT, "cannot remove worktree '%s' - uncommitted "
				   "changes present", arg);
	}
	worktree_changes_release(&ch);
	return error;
}

int worktree_tool_remove(const char *root, const char *path, int keep_branch, int force,
			 char **abs_out, int *branch_deleted, const char **suggestion,
			 struct sl_err *err)
{
	struct sl_lock lock = SL_LOCK_INIT;
	git_repository *repo = NULL;
	git_worktree *wt = NULL;
	char *abs = NULL;
	int error, is_link = 0;

	*abs_out = NULL;
	*branch_deleted = 0;
	*suggestion = NULL;
	/* under create's lock: a removal half-way must not meet an add of the same path */
	if ((error = worktree__open_repo(&repo, root, err)) < 0 ||
	    (error = worktree__tool_lock(repo, root, &lock, err)) < 0)
		goto out;
	if (tool_abs(path, &abs, &is_link, suggestion, err) == 0 && !is_link)
		lookup_at(repo, abs, &wt);
	sl_err_clear(err);
	*suggestion = NULL;
	if (!wt) { /* tool.c's checks and messages: inside the repository, a worktree */
		error = worktree_tool_cleanup(root, path, keep_branch, force, abs_out,
					      branch_deleted, err);
		goto out;
	}
	if (!force && git_worktree_validate(wt) == 0 &&
	    (error = refuse_changes(git_worktree_path(wt), path, suggestion, err)) < 0)
		goto out;
	if ((error = worktree_remove(root, git_worktree_path(wt), NULL, force, !keep_branch,
				     branch_deleted, err)) < 0)
		goto out;
	if (!(*abs_out = strdup(git_worktree_path(wt))))
		error = sl_err_set(err, SL_ERROR, "out of memory");
out:
	sl_lock_release(&lock);
	free(abs);
	git_worktree_free(wt);
	git_repository_free(repo);
	return error;
}
