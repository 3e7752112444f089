/* A run worktree after its builder: changes, the snapshot commit, the reset. */
#include "worktree/worktree_int.h"
#include "core/buf.h"
#include "core/fs.h"
#include "core/git.h"
#include "merge/merge.h"

#include <git2.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

int worktree__is_excluded(const char *path, const char *const *excluded)
{
	size_t n;

	for (; excluded && *excluded; excluded++) {
		n = strlen(*excluded);
		while (n > 1 && (*excluded)[n - 1] == '/')
			n--;
		if (!strncmp(path, *excluded, n) && (path[n] == '\0' || path[n] == '/'))
			return 1;
	}
	return 0;
}

/* Open the worktree itself, never a repository above it. */
static int open_wt(git_repository **out, const char *wt, struct sl_err *err)
{
	char *dotgit = sl_path_join(wt, ".git");
	struct stat st;
	int rc, error = 0;

	*out = NULL;
	if (!dotgit)
		return sl_err_set(err, SL_ERROR, "out of memory");
	if (lstat(dotgit, &st) < 0 || !S_ISREG(st.st_mode)) {
		error = sl_err_set(err, SL_ECONFLICT,
				   "the worktree's .git file ('%s') was deleted; the run "
				   "cannot be snapshotted, retry it in a fresh worktree",
				   dotgit);
		goto out;
	}
	rc = git_repository_open_ext(out, wt, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL);
	if (rc < 0) {
		error = sl_err_set(err, SL_ECONFLICT,
				   "the worktree '%s' no longer opens (%s); retry the run in a "
				   "fresh worktree",
				   wt, git_error_last() ? git_error_last()->message : "?");
	} else if (!git_repository_is_worktree(*out)) {
		error = sl_err_set(err, SL_ECONFLICT,
				   "'%s' is no longer a linked worktree (its .git file was "
				   "replaced); retry the run in a fresh worktree",
				   wt);
	} else if (!git_repository_workdir(*out) ||
		   !worktree__same_path(git_repository_workdir(*out), wt)) {
		/* libgit2 takes the work tree from the entry's gitdir file, which a builder can rewrite */
		error = sl_err_set(err, SL_ECONFLICT,
				   "the git entry of worktree '%s' names another folder, '%s' (its "
				   "gitdir file was changed); nothing of it is committed; retry the "
				   "run in a fresh worktree",
				   wt, git_repository_workdir(*out) ? git_repository_workdir(*out) : "?");
	}
out:
	if (error) {
		git_repository_free(*out);
		*out = NULL;
	}
	free(dotgit);
	return error;
}

static const char *entry_path(const git_status_entry *e)
{
	const git_diff_delta *d = e->index_to_workdir ? e->index_to_workdir : e->head_to_index;

	if (!d)
		return NULL;
	return d->new_file.path ? d->new_file.path : d->old_file.path;
}

static int status_list(git_status_list **out, git_repository *repo, int workdir_only)
{
	git_status_options so;

	git_status_options_init(&so, GIT_STATUS_OPTIONS_VERSION);
	so.show = workdir_only ? GIT_STATUS_SHOW_WORKDIR_ONLY : GIT_STATUS_SHOW_INDEX_AND_WORKDIR;
	so.flags = GIT_STATUS_OPT_INCLUDE_UNTRACKED | GIT_STATUS_OPT_RECURSE_UNTRACKED_DIRS |
		   GIT_STATUS_OPT_EXCLUDE_SUBMODULES;
	return git_status_list_new(out, repo, &so);
}

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The entry at p (v2/v3, no extended flags) as libgit2 gives one; its path points into the buffer. */
static void raw_entry(git_index_entry *e, const unsigned char *p)
{
	memset(e, 0, sizeof(*e));
	e->ctime.seconds = (int32_t)be32(p);
	e->ctime.nanoseconds = be32(p + 4);
	e->mtime.seconds = (int32_t)be32(p + 8);
	e->mtime.nanoseconds = be32(p + 12);
	e->dev = be32(p + 16);
	e->ino = be32(p + 20);
	e->mode = be32(p + 24);
	e->uid = be32(p + 28);
	e->gid = be32(p + 32);
	e->file_size = be32(p + 36);
	git_oid_fromraw(&e->id, p + 40);
	e->flags = (uint16_t)((unsigned)p[60] << 8 | p[61]);
	e->path = (const char *)p + 62;
}

int worktree__path_sane(const char *path, size_t len)
{
	const char *c = path, *end = path + len, *slash;
	size_t n;

	if (!len)
		return 0;
	for (; c < end; c = slash + 1) {
		slash = memchr(c, '/', (size_t)(end - c));
		slash = slash ? slash : end;
		n = (size_t)(slash - c);
		if (!n || (n == 1 && c[0] == '.') || (n == 2 && !memcmp(c, "..", 2)) ||
		    (n == 4 && !strncasecmp(c, ".git", 4)))
			return 0;
	}
	return 1;
}

/*
 * The entries of the index in `b` when it is plain (worktree__index_plain()):
 * with fn NULL only the check, else a second pass giving each entry to fn.
 * -1 when not plain; else 0 or fn's first non-zero return.
 */
static int index_walk(const struct sl_buf *b, int no_gitlinks, worktree_index_fn fn, void *payload)
{
	const unsigned char *start, *p, *end;
	uint32_t version, n, i;
	git_index_entry e;
	int pass, rc = 0;

	if (b->len < 12 + 20)
		return -1;
	start = (const unsigned char *)b->ptr;
	end = start + b->len - 20; /* the trailing hash */
	version = be32(start + 4);
	n = be32(start + 8);
	if (memcmp(start, "DIRC", 4) || (version != 2 && version != 3))
		return -1;
	for (pass = 0; pass < (fn ? 2 : 1) && rc == 0; pass++) {
		for (p = start + 12, i = 0; i < n && rc == 0; i++) {
			size_t fixed = 62, len;
			unsigned flags;
			if (end - p < 64)
				return -1;
			flags = (unsigned)p[60] << 8 | p[61];
			if (flags & 0xf000) /* assume-valid, extended, a stage */
				return -1;
			if (no_gitlinks && be32(p + 24) == 0160000)
				return -1;
			len = strnlen((const char *)p + fixed, (size_t)(end - p) - fixed);
			if (!worktree__path_sane((const char *)p + fixed, len))
				return -1;
			if (pass) {
				raw_entry(&e, p);
				rc = fn(&e, payload);
			}
			p += (fixed + len + 8) & ~(size_t)7;
			if (p > end)
				return -1;
		}
		while (pass == 0 && end - p >= 8) {
			uint32_t size = be32(p + 4);
			if (memcmp(p, "TREE", 4) && memcmp(p, "REUC", 4) && memcmp(p, "EOIE", 4) &&
			    memcmp(p, "IEOT", 4))
				return -1;
			if (size > (uint32_t)(end - p) - 8)
				return -1;
			p += 8 + size;
		}
		if (pass == 0 && p != end)
			return -1;
	}
	return rc;
}

int worktree__index_each(const char *path, int no_gitlinks, worktree_index_fn fn, void *payload)
{
	struct sl_buf b = SL_BUF_INIT;
	struct sl_err e = SL_ERR_INIT;
	int rc = -1;

	sl_buf_init(&b, (size_t)1 << 30);
	if (sl_read_file(&b, path, (size_t)1 << 30, &e) == 0)
		rc = index_walk(&b, no_gitlinks, fn, payload);
	sl_buf_release(&b);
	return rc;
}

int worktree__index_plain(const char *path, int no_gitlinks)
{
	return worktree__index_each(path, no_gitlinks, NULL, NULL) == 0;
}

int worktree__git_pinned(const char *wt, const char *const *args, const struct sl_buf *in,
			 struct sl_buf *out, struct sl_err *err)
{
	static const char *const pinned[] = {
		"-c", "core.checkStat=default", "-c", "core.trustctime=true", "-c",
		"core.ignoreStat=false", "-c", "core.sparseCheckout=false", "-c",
		"core.untrackedCache=false", "-c", "index.sparse=false", NULL
	};
	const char *argv[32];
	struct sl_git_opts o = SL_GIT_OPTS_INIT;
	size_t n = 0, i;

	for (i = 0; pinned[i]; i++)
		argv[n++] = pinned[i];
	for (i = 0; args[i] && n + 1 < sizeof(argv) / sizeof(*argv); i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	o.cwd = wt;
	o.ceiling = 1;
	o.out = out;
	if (in) {
		o.stdin_data = in->ptr;
		o.stdin_len = in->len;
	}
	return sl_git_run(&o, argv, NULL, err);
}

size_t worktree__git_status_above = (size_t)256 << 10;

int worktree__large(git_repository *repo)
{
	char *index = sl_path_join(git_repository_path(repo), "index");
	struct stat st;
	int large = index && lstat(index, &st) == 0 &&
		    (size_t)st.st_size > worktree__git_status_above;

	free(index);
	return large;
}

/* One changed path: counted, and the first one not excluded kept. */
static int count_change(struct worktree_changes *out, const char *p, const char *const *excluded)
{
	out->all++;
	if (!p || worktree__is_excluded(p, excluded) || out->count++)
		return 0;
	return (out->first = strdup(p)) ? 0 : -1;
}

/*
 * git's own status on a large tree: the same entries as libgit2's (staged
 * and unstaged changes, untracked files one by one, a repository of its
 * own as "dir/", no submodule, no rename pairs) in about 60% of its time
 * at 100,000 files (bench/RESULTS.md), with git's clean filters where a
 * file has one. No optional lock: the index is not rewritten by a status.
 * Each path listed is given to fn until it returns non-zero; the result is
 * git's error or 0, the caller's payload says why fn stopped.
 */
static int status_each(const char *wt, int (*fn)(const char *path, void *arg), void *arg,
		       struct sl_err *err)
{
	static const char *const args[] = { "--no-optional-locks", "status", "--porcelain=v1",
					     "-z", "--no-renames", "--untracked-files=all",
					     "--ignore-submodules=all", NULL };
	struct sl_buf st = SL_BUF_INIT;
	const char *p, *end;
	int error;

	sl_buf_init(&st, (size_t)1 << 28);
	error = worktree__git_pinned(wt, args, NULL, &st, err);
	for (p = st.ptr, end = p ? p + st.len : NULL; !error && p && p + 3 < end;
	     p += strlen(p) + 1) {
		p += 3; /* "XY " */
		if (fn(p, arg))
			break;
	}
	sl_buf_release(&st);
	return error;
}

struct counting {
	struct worktree_changes *out;
	const char *const *excluded;
	int oom;
};

static int count_listed(const char *path, void *arg)
{
	struct counting *c = arg;

	return (c->oom = count_change(c->out, path, c->excluded) < 0);
}

static int changes_by_git(const char *wt_path, const char *const *excluded,
			  struct worktree_changes *out, struct sl_err *err)
{
	struct counting c = { out, excluded, 0 };
	int error = status_each(wt_path, count_listed, &c, err);

	return !error && c.oom ? sl_err_set(err, SL_ERROR, "out of memory") : error;
}

int worktree_changes(const char *wt_path, const char *const *excluded,
			    struct worktree_changes *out, struct sl_err *err)
{
	git_repository *repo = NULL;
	git_status_list *st = NULL;
	size_t i, n;
	int rc, error;

	memset(out, 0, sizeof(*out));
	if ((error = open_wt(&repo, wt_path, err)) < 0)
		goto out;
	if (worktree__large(repo)) {
		error = changes_by_git(wt_path, excluded, out, err);
		goto out;
	}
	if ((rc = status_list(&st, repo, 0)) < 0) {
		error = sl_err_git(err, rc, "cannot read the status of '%s'", wt_path);
		goto out;
	}
	n = git_status_list_entrycount(st);
	for (i = 0; i < n && !error; i++)
		if (count_change(out, entry_path(git_status_byindex(st, i)), excluded) < 0)
			error = sl_err_set(err, SL_ERROR, "out of memory");
out:
	git_status_list_free(st);
	git_repository_free(repo);
	return error;
}

void worktree_changes_release(struct worktree_changes *ch)
{
	free(ch->first);
	ch->first = NULL;
	ch->count = 0;
	ch->all = 0;
}

/* HEAD must still name the run branch; *tip is its commit. */
static int check_head(git_repository *repo, const char *wt, const char *branch, git_oid *tip,
		      struct sl_err *err)
{
	git_reference *head = NULL;
	char want[512];
	const char *target;
	int error = 0;

	if (sl_fmt_fixed(want, sizeof(want), "refs/heads/%s", branch) != 0)
		return sl_err_set(err, SL_EINVALID, "the run branch name '%s' is too long", branch);
	if (git_reference_lookup(&head, repo, "HEAD") < 0)
		return sl_err_set(err, SL_ECONFLICT, "cannot read HEAD of '%s'; retry the run", wt);
	if (git_reference_type(head) != GIT_REFERENCE_SYMBOLIC) {
		error = sl_err_set(err, SL_ECONFLICT,
				   "HEAD was detached in '%s' (it should stay on '%s'); "
				   "check out '%s' there and retry the run",
				   wt, branch, branch);
		goto out;
	}
	target = git_reference_symbolic_target(head);
	if (strcmp(target, want) != 0) {
		error = sl_err_set(err, SL_ECONFLICT,
				   "the worktree '%s' was switched to '%s' (it should stay "
				   "on '%s'); check out '%s' there and retry the run",
				   wt, target, branch, branch);
		goto out;
	}
	if (git_reference_name_to_id(tip, repo, want) < 0)
		error = sl_err_set(err, SL_ECONFLICT,
				   "the run branch '%s' was deleted; retry the "
				   "run",
				   branch);
out:
	git_reference_free(head);
	return error;
}

static int check_descends(git_repository *repo, const git_oid *tip, const char *base_hex,
			  const char *branch, struct sl_err *err)
{
	git_oid base;

	if (git_oid_fromstr(&base, base_hex) < 0)
		return sl_err_set(err, SL_EINVALID, "base commit '%s' is not an object id",
				  base_hex);
	if (git_oid_equal(tip, &base) || git_graph_descendant_of(repo, tip, &base) == 1)
		return 0;
	return sl_err_set(err, SL_ECONFLICT,
			  "the run branch '%s' no longer descends from its base %.12s (the "
			  "branch was reset or rewritten); retry the run",
			  branch, base_hex);
}

/* What staging needs to know about each path libgit2 would add. */
struct stage_walk {
	const char *const *excluded;
	git_repository *repo;
	struct sl_buf filtered; /* ":(literal)<path>\0" for each path merge_path_converted() names */
	int oom;
};

/*
 * Skip excluded paths and embedded repositories (reported as "dir/"); keep
 * the paths with a filter driver for git (stage_filtered()).
 */
static int skip_excluded(const char *path, const char *matched, void *payload)
{
	struct stage_walk *w = payload;
	size_t n = strlen(path);

	(void)matched;
	if (n && path[n - 1] == '/')
		return 1;
	if (worktree__is_excluded(path, w->excluded))
		return 1;
	if (!merge_path_converted(w->repo, path)) /* git runs its filters (stage_filtered) */
		return 0;
	if (sl_buf_puts(&w->filtered, ":(literal)") < 0 || sl_buf_add(&w->filtered, path, n + 1) < 0)
		w->oom = 1;
	return 1;
}

/*
 * `git add -A` of the filtered paths in the worktree: libgit2 runs no
 * filter driver, so it would commit the smudged bytes the worktree holds
 * (an LFS file's content instead of its pointer), and a file rewritten with
 * the same bytes would change. git runs the user's clean filter, with the
 * overrides and the timeout of every git sluice starts (core/git.h).
 */
static int stage_filtered(const char *wt, const struct sl_buf *paths, struct sl_err *err)
{
	/* an index libgit2 1.5 reads back: not split, not sparse */
	const char *args[] = { "-c", "core.splitIndex=false", "-c", "index.sparse=false", "add", "-A",
			       "--pathspec-from-file=-", "--pathspec-file-nul", NULL };
	struct sl_git_opts o = SL_GIT_OPTS_INIT;
	struct sl_git_result res;
	int error;

	o.cwd = wt;
	o.ceiling = 1;
	o.stdin_data = paths->ptr;
	o.stdin_len = paths->len;
	o.caller_checks = 1;
	if ((error = sl_git_run(&o, args, &res, err)) == 0 && (res.exit_code || res.timed_out))
		error = sl_err_set(err, SL_ERROR,
				   "cannot stage the builder's changes to filtered files in '%s' "
				   "('git add' %s: %s); check the filter drivers in the git config",
				   wt, res.how, res.timed_out ? "a filter did not end" : res.errtail);
	return error;
}

static int config_can_hide(git_repository *repo);

struct staging {
	struct stage_walk *w;
	git_index *idx;
	int dirfd, rc;
};

/* One path git status listed: staged as it is now, or removed when it is gone. */
static int stage_one(const char *p, void *arg)
{
	struct staging *g = arg;
	struct stat sb;

	if (skip_excluded(p, NULL, g->w))
		return 0;
	if (fstatat(g->dirfd, p, &sb, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISDIR(sb.st_mode))
		g->rc = git_index_add_bypath(g->idx, p);
	else
		g->rc = git_index_remove_bypath(g->idx, p);
	return g->rc < 0;
}

/*
 * The paths git status lists, staged one by one (skip_excluded() as for
 * git_index_add_all()): the same index as adding all when nothing can hide
 * a difference from status (the index plain, no submodule, core.filemode
 * on, no autocrlf), in about half the time on a large tree, where
 * libgit2's add-all walks every file (worktree__large(); on a small one
 * the process costs more than the walk). 1 when this does not apply: the
 * caller adds all.
 */
static int stage_listed(struct stage_walk *w, git_index *idx, const char *wt, struct sl_err *err)
{
	struct staging g = { w, idx, -1, 0 };
	char *index = sl_path_join(git_repository_path(w->repo), "index");
	int rc = 1;

	if (!index || !worktree__large(w->repo) || config_can_hide(w->repo) ||
	    !worktree__index_plain(index, 1) ||
	    (g.dirfd = open(wt, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		goto out;
	if ((rc = status_each(wt, stage_one, &g, err)) < 0)
		goto out;
	if ((rc = g.rc) < 0) { /* a path libgit2 refuses one by one: the whole index again, as before */
		git_error_clear();
		rc = git_index_read(idx, 1) < 0 ? sl_err_set(err, SL_ERROR, "cannot read the index "
							     "of '%s'", wt) : 1;
		sl_buf_reset(&w->filtered);
	}
out:
	if (g.dirfd >= 0)
		close(g.dirfd);
	free(index);
	return rc;
}

/* Stage everything but the excluded paths; *tree is the staged tree. */
static int stage_all(git_repository *repo, git_index *idx, const char *wt,
		     const char *const *excluded, git_oid *tree, struct sl_err *err)
{
	struct stage_walk w = { excluded, repo, SL_BUF_INIT, 0 };
	int rc, error = 0;

	sl_buf_init(&w.filtered, 0);
	if ((error = stage_listed(&w, idx, wt, err)) < 0)
		goto out;
	if (error == 1 &&
	    (rc = git_index_add_all(idx, NULL, GIT_INDEX_ADD_DEFAULT, skip_excluded, &w)) < 0) {
		error = sl_err_git(err, rc, "cannot stage the builder's changes");
		goto out;
	}
	error = 0;
	if (w.oom) {
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	if (w.filtered.len) {
		if ((rc = git_index_write(idx)) < 0) {
			error = sl_err_git(err, rc, "cannot write the index of '%s'", wt);
			goto out;
		}
		if ((error = stage_filtered(wt, &w.filtered, err)) < 0)
			goto out;
		if ((rc = git_index_read(idx, 1)) < 0) {
			error = sl_err_git(err, rc, "cannot read the index of '%s'", wt);
			goto out;
		}
	}
	if ((rc = git_index_write_tree(tree, idx)) < 0)
		error = sl_err_git(err, rc, "cannot stage the builder's changes");
out:
	sl_buf_release(&w.filtered);
	return error;
}

static int commit_tree(git_repository *repo, const char *branch, const git_oid *tip,
		       const git_oid *tree_id, const char *message, const struct sl_identity *who,
		       git_oid *out, struct sl_err *err)
{
	git_signature *sig = NULL;
	git_commit *parent = NULL;
	git_tree *tree = NULL;
	char ref[512];
	int rc, error = 0;

	/* a cut name would commit on another branch */
	if (sl_fmt_fixed(ref, sizeof(ref), "refs/heads/%s", branch) != 0)
		return sl_err_set(err, SL_EINVALID, "the run branch name '%s' is too long", branch);
	if ((rc = git_signature_now(&sig, who ? who->name : WORKTREE_SNAPSHOT_NAME,
				    who ? who->email : WORKTREE_SNAPSHOT_EMAIL)) < 0 ||
	    (rc = git_commit_lookup(&parent, repo, tip)) < 0 ||
	    (rc = git_tree_lookup(&tree, repo, tree_id)) < 0) {
		error = sl_err_git(err, rc, "cannot prepare the snapshot commit");
		goto out;
	}
	if (git_oid_equal(git_commit_tree_id(parent), tree_id)) {
		git_oid_cpy(out, tip);
		error = 1;
		goto out;
	}
	rc = git_commit_create(out, repo, ref, sig, sig, NULL, message ? message : "sluice snapshot",
			       tree, 1, (const git_commit **)&parent);
	if (rc < 0)
		error = sl_err_git(err, rc, "cannot commit the snapshot on '%s'", branch);
out:
	git_tree_free(tree);
	git_commit_free(parent);
	git_signature_free(sig);
	return error;
}

int worktree_snapshot(const char *wt_path, const char *branch_name, const char *base_oid_hex,
		    const char *const *excluded, const char *message,
		    const struct sl_identity *who, char head_hex[41], int *committed,
		    struct sl_err *err)
{
	git_repository *repo = NULL;
	git_index *idx = NULL;
	git_oid tip, tree, head, base;
	int rc, error;

	if (committed)
		*committed = 0;
	head_hex[0] = '\0';
	if ((error = open_wt(&repo, wt_path, err)) < 0 ||
	    (error = check_head(repo, wt_path, branch_name, &tip, err)) < 0 ||
	    (error = check_descends(repo, &tip, base_oid_hex, branch_name, err)) < 0)
		goto out;
	if ((rc = git_repository_index(&idx, repo)) < 0) {
		error = sl_err_git(err, rc, "cannot read the index of '%s'", wt_path);
		goto out;
	}
	if ((error = stage_all(repo, idx, wt_path, excluded, &tree, err)) < 0)
		goto out;
	if ((error = commit_tree(repo, branch_name, &tip, &tree, message, who, &head, err)) < 0)
		goto out;
	if (committed)
		*committed = error == 0;
	if ((rc = git_index_write(idx)) < 0) {
		error = sl_err_git(err, rc, "cannot write the index of '%s'", wt_path);
		goto out;
	}
	git_oid_tostr(head_hex, 41, &head);
	git_oid_fromstr(&base, base_oid_hex);
	error = 0;
	if (git_oid_equal(&head, &base))
		error = sl_err_set(err, SL_ENOTFOUND,
				   "the builder changed nothing: '%s' is still at its base %.12s",
				   branch_name, base_oid_hex);
out:
	git_index_free(idx);
	git_repository_free(repo);
	return error;
}

/* Remove `path` (under wt) and then its parents while they are empty. */
static void remove_untracked(const char *wt, const char *rel)
{
	struct sl_err e = SL_ERR_INIT;
	char *p = sl_path_join(wt, rel), *slash;
	size_t root = strlen(wt);

	if (!p)
		return;
	sl_rm_rf(p, &e);
	while ((slash = strrchr(p, '/')) && (size_t)(slash - p) > root) {
		*slash = '\0';
		if (rmdir(p) < 0)
			break;
	}
	free(p);
}

static int clean_untracked(git_repository *repo, const char *wt, const char *const *excluded,
			   struct sl_err *err)
{
	git_status_list *st = NULL;
	const git_status_entry *e;
	const char *p;
	size_t i, n;
	int rc;

	if ((rc = status_list(&st, repo, 1)) < 0)
		return sl_err_git(err, rc, "cannot read the status of '%s'", wt);
	n = git_status_list_entrycount(st);
	for (i = 0; i < n; i++) {
		e = git_status_byindex(st, i);
		p = entry_path(e);
		if ((e->status & GIT_STATUS_WT_NEW) && p && !worktree__is_excluded(p, excluded))
			remove_untracked(wt, p);
	}
	git_status_list_free(st);
	return 0;
}

int worktree_reset(const char *wt_path, const char *oid_hex, const char *const *excluded,
			  struct sl_err *err)
{
	git_repository *repo = NULL;
	git_object *target = NULL;
	git_oid oid;
	int rc, error;

	if ((error = open_wt(&repo, wt_path, err)) < 0)
		goto out;
	if (!oid_hex || git_oid_fromstr(&oid, oid_hex) < 0) {
		error = sl_err_set(err, SL_EINVALID, "'%s' is not an object id",
				   oid_hex ? oid_hex : "");
		goto out;
	}
	if ((rc = git_object_lookup(&target, repo, &oid, GIT_OBJECT_COMMIT)) < 0 ||
	    (rc = git_reset(repo, target, GIT_RESET_HARD, NULL)) < 0) {
		error = sl_err_git(err, rc, "cannot reset '%s' to %.12s", wt_path, oid_hex);
		goto out;
	}
	error = clean_untracked(repo, wt_path, excluded, err);
out:
	git_object_free(target);
	git_repository_free(repo);
	return error;
}

int worktree_checkout(const char *wt_path, const char *oid_hex, const char *branch,
		      const char *const *excluded, struct sl_err *err)
{
	/* git's checkout: the user's filters run as git runs them (core/git.h) */
	const char *args[] = { "checkout", "-q", "-f", "--no-recurse-submodules", NULL, NULL, NULL };
	const char *env[] = { "GIT_REFLOG_ACTION=" WORKTREE_TRAIN_REFLOG, NULL };
	struct sl_git_opts o = SL_GIT_OPTS_INIT;
	git_repository *repo = NULL;
	git_oid oid;
	int error;

	if (branch) {
		args[4] = branch; /* a run branch "run/..." : never an option */
	} else if (!oid_hex || git_oid_fromstr(&oid, oid_hex) < 0) {
		return sl_err_set(err, SL_EINVALID, "'%s' is not an object id", oid_hex ? oid_hex : "");
	} else {
		args[4] = "--detach";
		args[5] = oid_hex;
	}
	if (branch && branch[0] == '-')
		return sl_err_set(err, SL_EINVALID, "invalid branch name '%s'", branch);
	if ((error = open_wt(&repo, wt_path, err)) < 0)
		return error;
	o.cwd = wt_path;
	o.ceiling = 1;
	o.env = env;
	if ((error = sl_git_run(&o, args, NULL, err)) == 0)
		error = clean_untracked(repo, wt_path, excluded, err);
	git_repository_free(repo);
	return error;
}

/*
 * 1 when git status could look past a difference in repo (whatever wrote
 * there: a builder can): an index entry marked skip-worktree or
 * assume-unchanged, a submodule, core.fileMode false, or core.autocrlf set.
 */
/* A setting under which git status does not see every difference: no file mode, autocrlf. */
static int config_can_hide(git_repository *repo)
{
	git_config *cfg = NULL;
	const char *crlf = NULL;
	int hide = 1, mode = 1;

	if (git_repository_config_snapshot(&cfg, repo) != 0)
		return 1;
	if (git_config_get_bool(&mode, cfg, "core.filemode") != 0)
		mode = 1;
	git_config_get_string(&crlf, cfg, "core.autocrlf");
	hide = !mode || (crlf && strcmp(crlf, "false"));
	git_config_free(cfg);
	return hide;
}

static int status_can_hide(git_repository *repo)
{
	git_index *index = NULL;
	const git_index_entry *e;
	size_t i, n;
	int hide = 1;

	if (git_repository_index(&index, repo) != 0)
		goto out;
	hide = config_can_hide(repo);
	for (i = 0, n = git_index_entrycount(index); !hide && i < n; i++) {
		e = git_index_get_byindex(index, i);
		hide = !e || (e->flags & GIT_INDEX_ENTRY_VALID) ||
		       (e->flags_extended & GIT_INDEX_ENTRY_SKIP_WORKTREE) || e->mode == GIT_FILEMODE_COMMIT;
	}
out:
	git_index_free(index);
	return hide;
}

int worktree_snapshot_unchanged(const char *wt_path, const char *branch_name,
				const char *head_hex, const char *const *excluded)
{
	struct worktree_changes ch = WORKTREE_CHANGES_INIT;
	struct sl_err e = SL_ERR_INIT;
	git_repository *repo = NULL;
	git_oid tip, want;
	char *index = NULL;
	int same = 0;

	/* a small tree: the snapshot in this process costs no more than a git status */
	if (open_wt(&repo, wt_path, &e) == 0 && worktree__large(repo) &&
	    check_head(repo, wt_path, branch_name, &tip, &e) == 0 &&
	    head_hex && git_oid_fromstr(&want, head_hex) == 0 && git_oid_equal(&tip, &want) &&
	    !config_can_hide(repo) && (index = sl_path_join(git_repository_path(repo), "index")) &&
	    worktree__index_plain(index, 1))
		same = worktree_changes(wt_path, excluded, &ch, &e) == 0 && ch.count == 0;
	sl_err_clear(&e);
	worktree_changes_release(&ch);
	free(index);
	git_repository_free(repo);
	return same;
}

/*
 * The tree of `head` (into tree, hex) when the worktree at wt_path is
 * exactly it: HEAD is head, nothing lets git status look past a difference
 * (status_can_hide()), and git status (untracked and ignored files
 * included) shows nothing. 1 when it is not so, or unknown.
 */
int worktree_tree_if_clean(const char *wt_path, const char *head, char tree[41])
{
	git_status_options o;
	git_repository *repo = NULL;
	git_status_list *list = NULL;
	git_commit *c = NULL;
	git_oid want, at;
	int clean = 0;

	git_status_options_init(&o, GIT_STATUS_OPTIONS_VERSION);
	o.flags = GIT_STATUS_OPT_INCLUDE_UNTRACKED | GIT_STATUS_OPT_INCLUDE_IGNORED;
	if (head && git_oid_fromstr(&want, head) == 0 && git_repository_open(&repo, wt_path) == 0 &&
	    git_reference_name_to_id(&at, repo, "HEAD") == 0 && git_oid_equal(&at, &want) &&
	    !status_can_hide(repo) && git_commit_lookup(&c, repo, &want) == 0 &&
	    git_status_list_new(&list, repo, &o) == 0)
		clean = git_status_list_entrycount(list) == 0;
	if (clean)
		git_oid_tostr(tree, 41, git_commit_tree_id(c));
	git_status_list_free(list);
	git_commit_free(c);
	git_repository_free(repo);
	return clean ? 0 : 1;
}
