/* Run worktrees: create (idempotent, undone on failure), remove, prune, list. */
#include "worktree/worktree_int.h"
#include "core/fs.h"
#include "core/fault.h"
#include "core/git.h"
#include "core/proc.h"

#include <git2.h>
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int worktree_name_valid(const char *name)
{
	size_t n = name ? strlen(name) : 0, i;

	if (n == 0 || n > WORKTREE_NAME_MAX || !((name[0] >= 'a' && name[0] <= 'z') ||
				   (name[0] >= 'A' && name[0] <= 'Z') ||
				   (name[0] >= '0' && name[0] <= '9')))
		return 0;
	for (i = 0; i < n; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-",
			    name[i]))
			return 0;
	if (strstr(name, "..") || name[n - 1] == '.' ||
	    (n >= 5 && !strcmp(name + n - 5, ".lock")))
		return 0;
	return 1;
}

char *worktree_entry_path(const char *gitdir, const char *name, const char *file)
{
	return sl_path_fmt("%s/worktrees/%s%s%s", gitdir, name, file ? "/" : "", file ? file : "");
}

int worktree_discard(const char *repo_root, const char *gitdir, const char *run_id,
		     struct sl_err *err)
{
	char *wt = sl_path_fmt("%s/.system/runs/%s/worktree", repo_root, run_id);
	char *entry = worktree_entry_path(gitdir, run_id, NULL);
	int error;

	if (!wt || !entry)
		error = sl_err_set(err, SL_ERROR, "out of memory");
	else if ((error = sl_rm_rf(wt, err)) == 0)
		error = sl_rm_rf(entry, err);
	free(wt);
	free(entry);
	return error;
}

char *worktree__read_line(const char *path)
{
	struct sl_buf b = SL_BUF_INIT;
	struct sl_err e = SL_ERR_INIT;
	char *line = NULL;

	sl_buf_init(&b, 4096);
	if (sl_read_file(&b, path, 4096, &e) == 0)
		line = strndup(b.ptr ? b.ptr : "", strcspn(b.ptr ? b.ptr : "", "\r\n"));
	sl_buf_release(&b);
	return line;
}

/* 1 when the HEAD file `head` is "ref: <refname>". */
static int head_is(const char *head, const char *refname)
{
	char *line = head ? worktree__read_line(head) : NULL;
	int is = line && !strncmp(line, "ref: ", 5) && !strcmp(line + 5, refname);

	free(line);
	return is;
}

/* Entry `name` of `gitdir`/worktrees: its HEAD is `refname` and its folder is there. */
static int entry_checks_out(const char *gitdir, const char *name, const char *refname)
{
	char *head = worktree_entry_path(gitdir, name, "HEAD");
	char *back = worktree_entry_path(gitdir, name, "gitdir");
	char *dotgit = back && head_is(head, refname) ? worktree__read_line(back) : NULL;
	char *slash = dotgit ? strrchr(dotgit, '/') : NULL;
	int is = 0;

	if (slash && slash != dotgit) {
		*slash = '\0'; /* gitdir names <folder>/.git */
		is = sl_path_exists(dotgit);
	}
	free(head);
	free(back);
	free(dotgit);
	return is;
}

int worktree_branch_checked_out(const char *gitdir, const char *refname)
{
	char *head = sl_path_fmt("%s/HEAD", gitdir), *dir = sl_path_fmt("%s/worktrees", gitdir);
	DIR *d = dir ? opendir(dir) : NULL;
	struct dirent *e;
	int is = head_is(head, refname);

	while (!is && d && (e = readdir(d)))
		if (e->d_name[0] != '.')
			is = entry_checks_out(gitdir, e->d_name, refname);
	if (d)
		closedir(d);
	free(head);
	free(dir);
	return is;
}

int worktree_branch_name_valid(const char *branch)
{
	char ref[512];
	int valid = 0;

	if (!branch || !branch[0] || branch[0] == '-' || strlen(branch) > 400)
		return 0;
	snprintf(ref, sizeof(ref), "refs/heads/%s", branch);
	return git_reference_name_is_valid(&valid, ref) == 0 && valid;
}

int worktree__open_repo(git_repository **out, const char *root, struct sl_err *err)
{
	int rc = git_repository_open_ext(out, root, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL);

	if (rc < 0)
		return sl_err_git(err, rc, "cannot open the repository '%s'", root);
	return 0;
}

int worktree__same_path(const char *a, const char *b)
{
	char ra[PATH_MAX], rb[PATH_MAX];

	if (!realpath(a, ra) || !realpath(b, rb))
		return !strcmp(a, b);
	return !strcmp(ra, rb);
}

/* The branch (without refs/heads/) HEAD of worktree `name` names; NULL if none. */
char *worktree__wt_branch(git_repository *repo, const char *name)
{
	char *path = NULL, *branch = NULL;
	struct sl_buf b = SL_BUF_INIT;
	struct sl_err e = SL_ERR_INIT;
	const char *p;

	if (!(path = worktree_entry_path(git_repository_commondir(repo), name, "HEAD")))
		return NULL;
	sl_buf_init(&b, 4096);
	if (sl_read_file(&b, path, 4096, &e) == 0 && !strncmp(b.ptr, "ref: refs/heads/", 16)) {
		p = b.ptr + 16;
		branch = strndup(p, strcspn(p, "\r\n"));
	}
	sl_buf_release(&b);
	free(path);
	return branch;
}

/*
 * Is entry `name` reusable? 1 yes, 0 no entry (a stale one is pruned), or
 * SL_EEXISTS when it is another worktree.
 */
static int check_existing(git_repository *repo, const char *name, const char *path,
			  const char *branch, struct sl_err *err)
{
	git_worktree *wt = NULL;
	git_worktree_prune_options po = GIT_WORKTREE_PRUNE_OPTIONS_INIT;
	char *head = NULL;
	int rc, error = 0;

	if ((rc = git_worktree_lookup(&wt, repo, name)) < 0)
		return 0;
	if (git_worktree_validate(wt) < 0) {
		if ((rc = git_worktree_prune(wt, &po)) < 0)
			error = sl_err_git(err, rc, "cannot prune the stale worktree entry '%s'", name);
		goto out;
	}
	head = worktree__wt_branch(repo, name);
	if (worktree__same_path(git_worktree_path(wt), path) && head && !strcmp(head, branch)) {
		error = 1;
		goto out;
	}
	error = sl_err_set(err, SL_EEXISTS,
			   "worktree '%s' already exists at '%s' on branch '%s'; remove it first "
			   "(sluice worktree cleanup '%s')",
			   name, git_worktree_path(wt), head ? head : "(detached)",
			   git_worktree_path(wt));
out:
	free(head);
	git_worktree_free(wt);
	return error;
}

/* The branch to check out: an existing one, or a new one at the base. */
int worktree__get_branch(git_reference **out, int *created, git_repository *repo, const char *branch,
		      const char *base_hex, struct sl_err *err)
{
	git_commit *base = NULL;
	git_oid oid;
	int rc, error = 0;

	*created = 0;
	rc = git_branch_lookup(out, repo, branch, GIT_BRANCH_LOCAL);
	if (rc == 0) {
		if (worktree_branch_checked_out(git_repository_commondir(repo), git_reference_name(*out)))
			error = sl_err_set(err, SL_EEXISTS,
					   "branch '%s' is already checked out in another worktree; "
					   "use another branch or remove that worktree",
					   branch);
		return error;
	}
	if (rc != GIT_ENOTFOUND)
		return sl_err_git(err, rc, "cannot look up branch '%s'", branch);
	if (!base_hex || strlen(base_hex) != GIT_OID_HEXSZ || git_oid_fromstr(&oid, base_hex) < 0)
		return sl_err_set(err, SL_EINVALID,
				  "base commit '%s' is not a full object id; record the base as "
				  "40 hex digits",
				  base_hex ? base_hex : "(none)");
	if ((rc = git_commit_lookup(&base, repo, &oid)) < 0) {
		error = sl_err_git(err, rc, "cannot find base commit '%s'", base_hex);
		goto out;
	}
	if ((rc = git_branch_create(out, repo, branch, base, 0)) < 0) {
		error = sl_err_git(err, rc, "cannot create branch '%s' at '%s'", branch, base_hex);
		goto out;
	}
	*created = 1;
out:
	git_commit_free(base);
	return error;
}

/* Undo a half-made worktree: the entry, the directory, a branch we created. */
static void undo_add(git_repository *repo, const char *name, const char *path,
		     git_reference *branch, int created)
{
	git_worktree *wt = NULL;
	git_worktree_prune_options po = GIT_WORKTREE_PRUNE_OPTIONS_INIT;
	struct sl_err e = SL_ERR_INIT;
	char *entry = NULL;

	po.flags = GIT_WORKTREE_PRUNE_VALID | GIT_WORKTREE_PRUNE_LOCKED |
		   GIT_WORKTREE_PRUNE_WORKING_TREE;
	if (git_worktree_lookup(&wt, repo, name) == 0)
		git_worktree_prune(wt, &po);
	git_worktree_free(wt);
	if ((entry = worktree_entry_path(git_repository_commondir(repo), name, NULL))) {
		sl_rm_rf(entry, &e);
		free(entry);
	}
	sl_rm_rf(path, &e);
	if (created && branch)
		git_reference_delete(branch);
}

/* 1 when the worktree at `path` has an empty index while HEAD has files. */
static int needs_populate(const char *path)
{
	git_repository *r = NULL;
	git_index *idx = NULL;
	int need = 0;

	if (git_repository_open_ext(&r, path, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) < 0)
		return 1;
	if (git_repository_index(&idx, r) == 0 && git_index_entrycount(idx) == 0 &&
	    !git_repository_head_unborn(r))
		need = 1;
	git_index_free(idx);
	git_repository_free(r);
	return need;
}

static int populate(const char *path, struct sl_err *err)
{
	const char *args[] = { "reset", "--hard", "-q", "--no-recurse-submodules", NULL };
	struct sl_git_opts o = SL_GIT_OPTS_INIT;

	o.cwd = path;
	o.ceiling = 1; /* never the main checkout above (core/git.h) */
	sl_fault("prepare.before_populate");
	return sl_git_run(&o, args, NULL, err);
}

static void record_settings(git_repository *repo, const char *name)
{
	char *ent = worktree_entry_path(git_repository_commondir(repo), name, NULL);

	if (ent)
		worktree__checkout_settings_record(repo, ent);
	free(ent);
}

static int add_new(git_repository *repo, const char *name, const char *path, const char *branch,
		   const char *base_hex, struct sl_err *err)
{
	git_worktree_add_options o;
	git_reference *ref = NULL;
	git_worktree *wt = NULL;
	char *parent = NULL, *slash;
	int created = 0, rc, error;

	if (sl_path_exists(path))
		return sl_err_set(err, SL_EEXISTS,
				  "path '%s' already exists and is not a git worktree; use a "
				  "different path or remove the existing directory",
				  path);
	if (!(parent = strdup(path)))
		return sl_err_set(err, SL_ERROR, "out of memory");
	if ((slash = strrchr(parent, '/')) && slash != parent)
		*slash = '\0';
	if ((error = sl_mkdir_p(parent, err)) < 0)
		goto out;
	if ((error = worktree__get_branch(&ref, &created, repo, branch, base_hex, err)) < 0)
		goto out;
	git_worktree_add_options_init(&o, GIT_WORKTREE_ADD_OPTIONS_VERSION);
	o.ref = ref;
	o.checkout_options.checkout_strategy = GIT_CHECKOUT_NONE;
	if ((rc = git_worktree_add(&wt, repo, name, path, &o)) < 0)
		error = sl_err_git(err, rc, "cannot add worktree '%s' at '%s'", name, path);
	else
		error = populate(path, err);
	if (error)
		undo_add(repo, name, path, ref, created);
	else
		record_settings(repo, name); /* the worktree pool reuses it only under the same */
out:
	git_worktree_free(wt);
	git_reference_free(ref);
	free(parent);
	return error;
}

int worktree_add(const char *repo_root, const char *name, const char *path,
			const char *branch, const char *base_oid_hex, int *reused,
			struct sl_err *err)
{
	git_repository *repo = NULL;
	int error;

	if (reused)
		*reused = 0;
	if (name && strlen(name) > WORKTREE_NAME_MAX)
		return sl_err_set(err, SL_EINVALID, "'%.60s...' cannot name a worktree: it is %zu "
				  "characters long, over the limit of %d; use a shorter prefix or slug",
				  name, strlen(name), WORKTREE_NAME_MAX);
	if (!worktree_name_valid(name))
		return sl_err_set(err, SL_EINVALID,
				  "'%s' cannot name a worktree; use letters, digits, '.', '_', '-'",
				  name ? name : "");
	if (!worktree_branch_name_valid(branch))
		return sl_err_set(err, SL_EINVALID, "'%s' is not a valid branch name",
				  branch ? branch : "");
	if (!path || path[0] != '/')
		return sl_err_set(err, SL_EINVALID, "worktree path '%s' is not absolute",
				  path ? path : "");
	if ((error = worktree__open_repo(&repo, repo_root, err)) < 0)
		goto out;
	if ((error = check_existing(repo, name, path, branch, err)) < 0)
		goto out;
	if (error == 1) {
		error = needs_populate(path) ? populate(path, err) : 0;
		if (!error && reused)
			*reused = 1;
		goto out;
	}
	error = add_new(repo, name, path, branch, base_oid_hex, err);
out:
	git_repository_free(repo);
	return error;
}

int worktree_create(const char *repo_root, const char *run_id, const char *branch_name,
			   const char *base_oid_hex, char **out_path, int *reused,
			   struct sl_err *err)
{
	char *path = NULL;
	int error;

	if (out_path)
		*out_path = NULL;
	if (!worktree_name_valid(run_id))
		return sl_err_set(err, SL_EINVALID, "'%s' is not a valid run id",
				  run_id ? run_id : "");
	if (asprintf(&path, "%s/.system/runs/%s/worktree", repo_root, run_id) < 0)
		return sl_err_set(err, SL_ERROR, "out of memory");
	error = worktree_add(repo_root, run_id, path, branch_name, base_oid_hex, reused,
				    err);
	if (!error && out_path) {
		*out_path = path;
		path = NULL;
	}
	free(path);
	return error;
}

/* Find a worktree by entry name or by path. */
static int find_wt(git_worktree **out, git_repository *repo, const char *name_or_path,
		   struct sl_err *err)
{
	git_strarray names = { 0 };
	size_t i;
	int found = 0;

	*out = NULL;
	if (!strchr(name_or_path, '/')) {
		if (git_worktree_lookup(out, repo, name_or_path) == 0)
			return 0;
		goto notfound;
	}
	if (git_worktree_list(&names, repo) < 0)
		goto notfound;
	for (i = 0; i < names.count && !found; i++) {
		if (git_worktree_lookup(out, repo, names.strings[i]) < 0)
			continue;
		if (worktree__same_path(git_worktree_path(*out), name_or_path))
			found = 1;
		else {
			git_worktree_free(*out);
			*out = NULL;
		}
	}
	git_strarray_dispose(&names);
	if (found)
		return 0;
notfound:
	return sl_err_set(err, SL_ENOTFOUND,
			  "no worktree '%s' in this repository; see 'git worktree list'",
			  name_or_path);
}

static int writable_one(const char *p, const struct stat *st, int type, struct FTW *ftw)
{
	/* FTW_PHYS: links are reported (FTW_SL) and never followed or changed */
	if ((type == FTW_F || type == FTW_D || type == FTW_DNR) && !(st->st_mode & S_IWUSR))
		chmod(p, (st->st_mode & 07777) | S_IWUSR | (type != FTW_F ? S_IXUSR | S_IRUSR : 0));
	return 0;
}

/*
 * chmod -R u+w, in process, never through a symlink: read-only trees (Go's
 * module cache) would make the removal fail half way. A worktree path that
 * is itself a link is refused: removing it would act on what it points to.
 */
int worktree__make_writable(const char *path, struct sl_err *err)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return sl_err_sys(err, errno, "cannot inspect worktree '%s'", path);
	if (!S_ISDIR(st.st_mode))
		return sl_err_set(err, SL_EINVALID,
				  "worktree '%s' is not a directory (a link?); remove it by hand "
				  "after checking where it points",
				  path);
	if (nftw(path, writable_one, 32, FTW_PHYS) < 0)
		return sl_err_sys(err, errno, "cannot make worktree '%s' writable", path);
	return 0;
}

int worktree__refuse_dirty(const char *path, const char *const *excluded, int *spotless,
			   struct sl_err *err)
{
	struct worktree_changes ch = WORKTREE_CHANGES_INIT;
	int error;

	if ((error = worktree_changes(path, excluded, &ch, err)) < 0)
		return error;
	if (spotless)
		*spotless = ch.all == 0;
	if (ch.count)
		error = sl_err_set(err, SL_ECONFLICT,
				   "cannot remove worktree '%s': uncommitted changes present (%zu "
				   "path(s), e.g. '%s'); commit them, or use --force to discard them",
				   path, ch.count, ch.first);
	worktree_changes_release(&ch);
	return error;
}

/*
 * git_reference_delete rather than git_branch_delete: the latter also drops
 * the branch.<name> config section (run branches have none) and leaks
 * pcre2 match data doing so in libgit2 1.5.
 */
int worktree__delete_branch(git_repository *repo, const char *branch, struct sl_err *err)
{
	git_reference *ref = NULL;
	int rc;

	if ((rc = git_branch_lookup(&ref, repo, branch, GIT_BRANCH_LOCAL)) == 0)
		rc = worktree_branch_checked_out(git_repository_commondir(repo), git_reference_name(ref))
			     ? GIT_ELOCKED
			     : git_reference_delete(ref);
	git_reference_free(ref);
	if (rc < 0 && rc != GIT_ENOTFOUND)
		return sl_err_git(err, rc, "cannot delete branch '%s'", branch);
	return rc == 0 ? 1 : 0;
}

/*
 * A run's worktree entry names its directory in its `gitdir` file, which a
 * builder can rewrite: removing "the worktree" there would delete whatever
 * it names (a person's checkout, a home directory). By name, only the run's
 * own folder <root>/.system/runs/<name>/worktree is ever removed. 0 when
 * the entry names it; else, with `force`, that folder (never what the entry
 * names) and the entry go and *done is 1; without, SL_ECONFLICT.
 */
static int redirected_entry(git_repository *repo, const char *root, const char *name,
			    const char *path, int force, int *done, struct sl_err *err)
{
	char *want = sl_path_fmt("%s/.system/runs/%s/worktree", root, name);
	char *ent = worktree_entry_path(git_repository_commondir(repo), name, NULL);
	struct sl_err e = SL_ERR_INIT;
	int error = 0;

	*done = 0;
	if (!want || !ent)
		error = sl_err_set(err, SL_ERROR, "out of memory");
	else if (worktree__same_path(path, want))
		error = 0;
	else if (!force)
		error = sl_err_set(err, SL_ECONFLICT,
				   "worktree entry '%s' names '%s', not the run's folder '%s' (its "
				   "gitdir file was changed, by a builder?); nothing removed; check "
				   "what it names, then remove '%s' by hand or use --force, which "
				   "removes the run's folder and the entry and never what it names",
				   name, path, want, ent);
	else {
		if (sl_is_dir(want) && worktree__make_writable(want, &e) == 0)
			error = sl_rm_rf(want, err);
		if (!error)
			error = sl_rm_rf(ent, err);
		*done = !error;
	}
	free(want);
	free(ent);
	return error;
}

int worktree_remove(const char *repo_root, const char *name_or_path,
			   const char *const *excluded, int force, int delete_branch,
			   int *branch_deleted, struct sl_err *err)
{
	git_repository *repo = NULL;
	git_worktree *wt = NULL;
	git_worktree_prune_options po = GIT_WORKTREE_PRUNE_OPTIONS_INIT;
	char *branch = NULL, *path = NULL;
	int rc, error, valid, done = 0;

	if (branch_deleted)
		*branch_deleted = 0;
	if ((error = worktree__open_repo(&repo, repo_root, err)) < 0 ||
	    (error = find_wt(&wt, repo, name_or_path, err)) < 0)
		goto out;
	path = strdup(git_worktree_path(wt));
	branch = worktree__wt_branch(repo, git_worktree_name(wt));
	if (!path) {
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	if (!strchr(name_or_path, '/') &&
	    (error = redirected_entry(repo, repo_root, name_or_path, path, force, &done, err)) != 0)
		goto out;
	if (done)
		goto branch;
	valid = git_worktree_validate(wt) == 0;
	if (!force && git_worktree_is_locked(NULL, wt) > 0) {
		error = sl_err_set(err, SL_ELOCKED,
				   "worktree '%s' is locked; unlock it (git worktree unlock) or "
				   "use --force",
				   path);
		goto out;
	}
	if (valid && !force && (error = worktree__refuse_dirty(path, excluded, NULL, err)) < 0)
		goto out;
	if (valid && (error = worktree__make_writable(path, err)) < 0)
		goto out;
	po.flags = GIT_WORKTREE_PRUNE_VALID | GIT_WORKTREE_PRUNE_WORKING_TREE |
		   (force ? GIT_WORKTREE_PRUNE_LOCKED : 0);
	if ((rc = git_worktree_prune(wt, &po)) < 0) {
		error = sl_err_git(err, rc, "cannot remove worktree '%s'", path);
		goto out;
	}
	sl_fault("cleanup.after_worktree_remove");
branch:
	if (delete_branch && branch) {
		if ((rc = worktree__delete_branch(repo, branch, err)) < 0)
			error = rc;
		else if (branch_deleted)
			*branch_deleted = rc;
	}
out:
	free(branch);
	free(path);
	git_worktree_free(wt);
	git_repository_free(repo);
	return error;
}

/* Seconds in `n` of `unit` ("day", "weeks", ...), or -1 for a unit git's approxidate has and we do not. */
static long long unit_seconds(const char *unit, size_t len, long long n)
{
	static const struct { const char *name; long long s; } units[] = {
		{ "second", 1 }, { "minute", 60 }, { "hour", 3600 }, { "day", 86400 },
		{ "week", 7 * 86400 }, { "month", 30 * 86400 }, { "year", 365 * 86400 },
	};
	size_t i, l;

	if (len > 1 && unit[len - 1] == 's')
		len--;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		l = strlen(units[i].name);
		if (len == l && !strncmp(unit, units[i].name, l))
			return n * units[i].s;
	}
	return -1;
}

/*
 * git's grace period for worktree entries whose folder is gone:
 * gc.worktreePruneExpire ("3.months.ago" unless set; "now" prunes at once,
 * "never"/"false" never). Entries whose gitdir file is older than *before
 * may go; *before = 0 means never. A value this parser cannot read (git's
 * approxidate knows more) means never: the user's entry is worth more.
 */
static void prune_expiry(git_repository *repo, time_t *before)
{
	git_config *cfg = NULL;
	git_buf v = GIT_BUF_INIT;
	const char *p;
	char *end;
	long long n, total = 0, s;
	time_t now = time(NULL);

	*before = now - 90 * 86400;
	if (git_repository_config_snapshot(&cfg, repo) < 0)
		return;
	if (git_config_get_string_buf(&v, cfg, "gc.worktreePruneExpire") == 0) {
		p = v.ptr;
		*before = 0;
		if (!strcmp(p, "now") || !strcmp(p, "all")) {
			*before = now + 1;
		} else if (strcmp(p, "never") && strcmp(p, "false")) {
			/* <n>.<unit>[.<n>.<unit>...].ago, dots or spaces */
			while (*p >= '0' && *p <= '9') {
				n = strtoll(p, &end, 10);
				p = end + strspn(end, ". ");
				s = unit_seconds(p, strcspn(p, ". "), n);
				if (s < 0 || n > 100000) {
					total = -1;
					break;
				}
				total += s;
				p += strcspn(p, ". ");
				p += strspn(p, ". ");
			}
			if (total > 0 && !strcmp(p, "ago"))
				*before = now - (time_t)total;
		}
	}
	git_buf_dispose(&v);
	git_config_free(cfg);
}

/* 1 when entry `name` is a run worktree sluice made: .system/runs/<name>/worktree. */
static int is_run_entry(git_worktree *wt, const char *root, const char *name)
{
	char *want;
	int yes;

	if (!worktree_name_valid(name) ||
	    !(want = sl_path_fmt("%s/.system/runs/%s/worktree", root, name)))
		return 0;
	yes = !strcmp(git_worktree_path(wt), want);
	free(want);
	return yes;
}

/* The mtime of .git/worktrees/<name>/gitdir (git's clock for the grace period), 0 if none. */
static time_t gitdir_mtime(git_repository *repo, const char *name)
{
	char *path = worktree_entry_path(git_repository_commondir(repo), name, "gitdir");
	struct stat st;
	time_t t = path && lstat(path, &st) == 0 ? st.st_mtime : 0;

	free(path);
	return t;
}

int worktree_prune_stale(const char *repo_root, int (*known)(const char *, void *),
				void *data, size_t *pruned, struct sl_err *err)
{
	git_repository *repo = NULL;
	git_strarray names = { 0 };
	git_worktree_prune_options po = GIT_WORKTREE_PRUNE_OPTIONS_INIT;
	git_worktree *wt;
	const char *name;
	time_t before, mtime;
	size_t i;
	int rc, error;

	if (pruned)
		*pruned = 0;
	if ((error = worktree__open_repo(&repo, repo_root, err)) < 0)
		goto out;
	if ((rc = git_worktree_list(&names, repo)) < 0) {
		error = sl_err_git(err, rc, "cannot list the worktrees of '%s'", repo_root);
		goto out;
	}
	prune_expiry(repo, &before);
	for (i = 0; i < names.count && !error && before; i++) {
		name = names.strings[i];
		if (git_worktree_lookup(&wt, repo, name) < 0)
			continue;
		/* only ours, only of a run we know, never locked, only after git's grace period */
		mtime = gitdir_mtime(repo, name);
		if (is_run_entry(wt, repo_root, name) && known && known(name, data) &&
		    git_worktree_is_locked(NULL, wt) == 0 && mtime && mtime < before &&
		    git_worktree_is_prunable(wt, &po) == 1) {
			if ((rc = git_worktree_prune(wt, &po)) < 0)
				error = sl_err_git(err, rc, "cannot prune worktree entry '%s'", name);
			else if (pruned)
				(*pruned)++;
		}
		git_worktree_free(wt);
	}
out:
	git_strarray_dispose(&names);
	git_repository_free(repo);
	return error;
}

/* ---- listing for reconciliation ---- */

static int list_add_wt(struct worktree_list *l, git_repository *repo, const char *name,
		       const char *runs_prefix)
{
	git_worktree *wt = NULL;
	struct worktree_entry *e, *v;

	if (git_worktree_lookup(&wt, repo, name) < 0)
		return 0;
	if (!(v = realloc(l->wts, (l->nwts + 1) * sizeof(*v)))) {
		git_worktree_free(wt);
		return -1;
	}
	l->wts = v;
	e = &l->wts[l->nwts++];
	memset(e, 0, sizeof(*e));
	e->name = strdup(name);
	e->path = strdup(git_worktree_path(wt));
	e->branch = worktree__wt_branch(repo, name);
	e->valid = git_worktree_validate(wt) == 0;
	e->locked = git_worktree_is_locked(NULL, wt) > 0;
	e->under_runs = e->path && !strncmp(e->path, runs_prefix, strlen(runs_prefix));
	git_worktree_free(wt);
	return e->name && e->path ? 0 : -1;
}

static int list_add_branch(struct worktree_list *l, git_reference *ref)
{
	struct worktree_branch_entry *e, *v;
	const char *name = git_reference_shorthand(ref);
	const git_oid *oid = git_reference_target(ref);

	if (strncmp(name, "run/", 4) != 0)
		return 0;
	if (!(v = realloc(l->branches, (l->nbranches + 1) * sizeof(*v))))
		return -1;
	l->branches = v;
	e = &l->branches[l->nbranches++];
	memset(e, 0, sizeof(*e));
	e->name = strdup(name);
	if (oid)
		git_oid_tostr(e->oid, sizeof(e->oid), oid);
	e->has_worktree = worktree_branch_checked_out(
		git_repository_commondir(git_reference_owner(ref)), git_reference_name(ref));
	return e->name ? 0 : -1;
}

static int list_branches(struct worktree_list *l, git_repository *repo, struct sl_err *err)
{
	git_branch_iterator *it = NULL;
	git_reference *ref;
	git_branch_t type;
	int rc, error = 0;

	if ((rc = git_branch_iterator_new(&it, repo, GIT_BRANCH_LOCAL)) < 0)
		return sl_err_git(err, rc, "cannot list branches");
	while (!error && (rc = git_branch_next(&ref, &type, it)) == 0) {
		if (list_add_branch(l, ref) < 0)
			error = sl_err_set(err, SL_ERROR, "out of memory");
		git_reference_free(ref);
	}
	if (!error && rc != GIT_ITEROVER)
		error = sl_err_git(err, rc, "cannot list branches");
	git_branch_iterator_free(it);
	return error;
}

int worktree_list(const char *repo_root, struct worktree_list *out, struct sl_err *err)
{
	git_repository *repo = NULL;
	git_strarray names = { 0 };
	char *runs = NULL;
	size_t i;
	int rc, error;

	memset(out, 0, sizeof(*out));
	if ((error = worktree__open_repo(&repo, repo_root, err)) < 0)
		goto out;
	if (asprintf(&runs, "%s/.system/runs/", repo_root) < 0) {
		runs = NULL;
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	if ((rc = git_worktree_list(&names, repo)) < 0) {
		error = sl_err_git(err, rc, "cannot list the worktrees of '%s'", repo_root);
		goto out;
	}
	for (i = 0; i < names.count && !error; i++)
		if (list_add_wt(out, repo, names.strings[i], runs) < 0)
			error = sl_err_set(err, SL_ERROR, "out of memory");
	if (!error)
		error = list_branches(out, repo, err);
out:
	if (error)
		worktree_list_release(out);
	free(runs);
	git_strarray_dispose(&names);
	git_repository_free(repo);
	return error;
}

void worktree_list_release(struct worktree_list *l)
{
	size_t i;

	for (i = 0; i < l->nwts; i++) {
		free(l->wts[i].name);
		free(l->wts[i].path);
		free(l->wts[i].branch);
	}
	for (i = 0; i < l->nbranches; i++)
		free(l->branches[i].name);
	free(l->wts);
	free(l->branches);
	memset(l, 0, sizeof(*l));
}

/* ---- the environment contract: shared and copied paths ---- */

/* 1 when realpath(p) is `dir` or under it. */
static int resolves_under(const char *p, const char *dir)
{
	char rp[PATH_MAX], rd[PATH_MAX];
	size_t n;

	if (!realpath(p, rp) || !realpath(dir, rd))
		return 0;
	n = strlen(rd);
	return !strncmp(rp, rd, n) && (rp[n] == '\0' || rp[n] == '/');
}

/*
 * Check one path and work out source and destination (the caller's, free()).
 * Returns 1 when the source is missing (noted, skip), 0 to go on, or an error.
 */
/* 1 when the deepest existing ancestor of path (or path) resolves under dir. */
static int existing_ancestor_under(const char *path, const char *dir)
{
	char *p = strdup(path), *slash;
	int ok = 0;

	while (p && !sl_path_exists(p) && (slash = strrchr(p, '/')) && slash != p)
		*slash = '\0';
	ok = p && resolves_under(p, dir);
	free(p);
	return ok;
}

static int env_path(const char *root, const char *wt, const char *rel, char **src, char **dst,
		    struct sl_buf *notes, struct sl_err *err)
{
	char *parent = NULL, *slash;
	int error = 0;

	*src = *dst = NULL;
	if (!sl_path_is_safe_relative(rel) || !strcmp(rel, ".git") || !strncmp(rel, ".git/", 5))
		return sl_err_set(err, SL_EINVALID,
				  "worktree path '%s' is not a safe relative path; fix "
				  "worktree.share / worktree.copy",
				  rel);
	if (!(*src = sl_path_join(root, rel)) || !(*dst = sl_path_join(wt, rel)) ||
	    !(parent = strdup(*dst))) {
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	if (!sl_path_exists(*src)) {
		if (notes)
			sl_buf_addf(notes, "skipped '%s': not in the main checkout\n", rel);
		error = 1;
		goto out;
	}
	if (!resolves_under(*src, root)) {
		error = sl_err_set(err, SL_EINVALID,
				   "'%s' resolves outside the repository; refusing to share or "
				   "copy it into the worktree",
				   rel);
		goto out;
	}
	if ((slash = strrchr(parent, '/')))
		*slash = '\0';
	/* check before creating anything: a committed symlink may sit on the way */
	if (!existing_ancestor_under(parent, wt)) {
		error = sl_err_set(err, SL_EINVALID,
				   "the parent of '%s' resolves outside the worktree; refusing it", rel);
		goto out;
	}
	if ((error = sl_mkdir_p(parent, err)) < 0)
		goto out;
	if (!resolves_under(parent, wt))
		error = sl_err_set(err, SL_EINVALID,
				   "the parent of '%s' resolves outside the worktree; refusing it",
				   rel);
out:
	free(parent);
	if (error) {
		free(*src);
		free(*dst);
		*src = *dst = NULL;
	}
	return error;
}

static int share_one(const char *src, const char *dst, const char *rel, struct sl_err *err)
{
	char target[PATH_MAX];
	ssize_t n;

	if (sl_path_exists(dst)) {
		n = readlink(dst, target, sizeof(target) - 1);
		if (n >= 0 && (target[n] = '\0', !strcmp(target, src)))
			return 0;
		return sl_err_set(err, SL_EEXISTS,
				  "'%s' already exists in the worktree; it cannot be shared from "
				  "the main checkout (remove it from worktree.share)",
				  rel);
	}
	if (symlink(src, dst) < 0)
		return sl_err_sys(err, errno, "cannot link '%s' into the worktree", rel);
	return 0;
}

/* 1 when `rel` is tracked in the worktree's index (or a directory of tracked files). */
static int is_tracked(const char *wt, const char *rel)
{
	git_repository *r = NULL;
	git_index *idx = NULL;
	size_t pos;
	int tracked = 0;

	if (git_repository_open_ext(&r, wt, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) < 0)
		return 1;
	if (git_repository_index(&idx, r) < 0)
		tracked = 1;
	else if (git_index_find(&pos, idx, rel) == 0)
		tracked = 1;
	else if (git_index_find_prefix(&pos, idx, rel) == 0) {
		const git_index_entry *e = git_index_get_byindex(idx, pos);
		size_t n = strlen(rel);
		tracked = e && !strncmp(e->path, rel, n) && e->path[n] == '/';
	}
	git_index_free(idx);
	git_repository_free(r);
	return tracked;
}

static int copy_one(const char *wt, const char *src, const char *dst, const char *rel,
		    struct sl_err *err)
{
	const char *argv[] = { "cp", "-R", "-P", "-p", "--", src, dst, NULL };
	struct sl_proc_opts o = SL_PROC_OPTS_INIT;
	struct sl_proc_result res;
	struct sl_buf errout = SL_BUF_INIT;
	int error;

	if (sl_path_exists(dst)) {
		if (is_tracked(wt, rel))
			return sl_err_set(err, SL_EEXISTS,
					  "'%s' is tracked in the worktree; it cannot be copied from "
					  "the main checkout (remove it from worktree.copy)",
					  rel);
		if ((error = sl_rm_rf(dst, err)) < 0)
			return error;
	}
	sl_buf_init(&errout, 4096);
	o.argv = argv;
	o.errout = &errout;
	if ((error = sl_proc_run(&o, &res, err)) == 0 && res.exit_code != 0)
		error = sl_err_set(err, SL_ERROR, "cannot copy '%s' into the worktree: %s", rel,
				   sl_buf_cstr(&errout));
	sl_buf_release(&errout);
	return error;
}

/* Share (copy 0) or copy (copy 1) each of paths into the worktree, as env_path() allows. */
static int each_env_path(const char *repo_root, const char *wt_path, const char *const *paths,
			 int copy, struct sl_buf *notes, struct sl_err *err)
{
	char *src, *dst;
	int error = 0, rc;

	for (; paths && *paths && !error; paths++) {
		if ((rc = env_path(repo_root, wt_path, *paths, &src, &dst, notes, err)) != 0) {
			error = rc < 0 ? rc : 0;
			continue;
		}
		error = copy ? copy_one(wt_path, src, dst, *paths, err) : share_one(src, dst, *paths, err);
		free(src);
		free(dst);
	}
	return error;
}

int worktree_share(const char *repo_root, const char *wt_path, const char *const *paths,
			  struct sl_buf *notes, struct sl_err *err)
{
	return each_env_path(repo_root, wt_path, paths, 0, notes, err);
}

int worktree_copy(const char *repo_root, const char *wt_path, const char *const *paths,
			 struct sl_buf *notes, struct sl_err *err)
{
	return each_env_path(repo_root, wt_path, paths, 1, notes, err);
}

int worktree_exclude_system(const char *repo_root, struct sl_err *err)
{
	git_repository *repo = NULL;
	struct sl_buf b = SL_BUF_INIT;
	char *info = NULL, *path = NULL;
	const char *p;
	int error;

	sl_buf_init(&b, 1 << 20);
	if ((error = worktree__open_repo(&repo, repo_root, err)) < 0)
		goto out;
	info = sl_path_join(git_repository_commondir(repo), "info");
	path = info ? sl_path_join(info, "exclude") : NULL;
	if (!path) {
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	if ((error = sl_mkdir_p(info, err)) < 0)
		goto out;
	if (sl_path_exists(path) && (error = sl_read_file(&b, path, 1 << 20, err)) < 0)
		goto out;
	for (p = sl_buf_cstr(&b); p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (!strncmp(p, "/.system/\n", 10) || !strcmp(p, "/.system/"))
			goto out;
	if (b.len && b.ptr[b.len - 1] != '\n')
		sl_buf_puts(&b, "\n");
	if ((error = sl_buf_puts(&b, "/.system/\n")) < 0)
		error = sl_err_set(err, error, "cannot extend '%s'", path);
	else
		error = sl_write_file_atomic(path, b.ptr, b.len, err);
out:
	sl_buf_release(&b);
	free(info);
	free(path);
	git_repository_free(repo);
	return error;
}
