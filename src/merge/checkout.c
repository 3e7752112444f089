/*
 * The target checked out in a work tree (docs/design.md, The merge): bring that work
 * tree along like git's receive.denyCurrentBranch=updateInstead, from the
 * old tip's tree to the merged tree, keeping the user's staged, unstaged
 * and untracked changes as `git read-tree -m -u OLD NEW` does, or refuse
 * with nothing touched.
 *
 * Order: the states in which git itself would not move the branch (an
 * operation in progress, a rebase or bisect of the branch with HEAD
 * detached, a work tree that cannot be reached, conflicts, a lock); then,
 * holding the index lock (O_EXCL as git takes it, recorded in the merge
 * journal so that only that file is ever freed after a crash), every check
 * (the index against the old tree, links and files in the way); only then
 * libgit2 writes the files (safe checkout limited to the merge's paths)
 * and sluice writes the index through its lock. git writes them instead
 * (`read-tree -m -u`) when libgit2 cannot: a split or sparse index, sparse
 * checkout, or a path with a filter driver or a working-tree-encoding.
 *
 * A work tree "has the target checked out" when its HEAD is a symbolic ref
 * naming the target. A detached HEAD checks out no branch, so moving the
 * target leaves that work tree alone and the ref is simply moved (unless a
 * rebase or bisect of the target is going on there).
 */
#include "merge/merge_int.h"
#include "core/fs.h"
#include "core/fault.h"
#include "core/tree_paths.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHECKOUT_STRATEGY (GIT_CHECKOUT_SAFE | GIT_CHECKOUT_DONT_OVERWRITE_IGNORED)

/* 1 when `wrepo`'s HEAD is a symbolic ref to `refname`. */
static int head_names(git_repository *wrepo, const char *refname)
{
	git_reference *head = NULL;
	int yes = 0;

	if (!git_reference_lookup(&head, wrepo, "HEAD") &&
	    git_reference_type(head) == GIT_REFERENCE_SYMBOLIC)
		yes = !strcmp(git_reference_symbolic_target(head), refname);
	git_reference_free(head);
	return yes;
}

static int defer(struct merge_commit_result *res, struct sl_err *err, const char *fmt,
		 const char *path, const char *detail)
{
	int len;

	res->status = MERGE_DEFERRED;
	len = snprintf(res->reason, sizeof(res->reason), fmt, path, detail);
	if (len < 0 || (size_t)len >= sizeof(res->reason)) /* a long path: cut, and said so */
		memcpy(res->reason + sizeof(res->reason) - 4, "...", 4);
	return sl_err_set(err, SL_ETRANSIENT, "%s", res->reason);
}

/* 1 when the file `dir`/`name` holds `want` (one line; "ref: " prefix dropped). */
static int file_names(const char *dir, const char *name, const char *want)
{
	struct sl_buf data = SL_BUF_INIT;
	struct sl_err ignored = SL_ERR_INIT;
	char *path = sl_path_join(dir, name);
	const char *s;
	size_t len;
	int yes = 0;

	if (path && sl_read_file(&data, path, 4096, &ignored) == 0) {
		s = sl_buf_cstr(&data);
		if (!strncmp(s, "ref: ", 5))
			s += 5;
		len = strcspn(s, "\r\n");
		yes = len == strlen(want) && !strncmp(s, want, len);
	}
	sl_buf_release(&data);
	free(path);
	return yes;
}

/* 1 when a line of the file `dir`/`name` is `want` (rebase-merge/update-refs: a ref name, then two ids). */
static int file_has_line(const char *dir, const char *name, const char *want)
{
	struct sl_buf data = SL_BUF_INIT;
	struct sl_err ignored = SL_ERR_INIT;
	char *path = sl_path_join(dir, name);
	const char *s, *e;
	size_t len = strlen(want);
	int yes = 0;

	if (path && sl_read_file(&data, path, 1 << 20, &ignored) == 0)
		for (s = sl_buf_cstr(&data); !yes && *s; s = *e ? e + 1 : e) {
			e = s + strcspn(s, "\n");
			yes = (size_t)(e - s) == len && !strncmp(s, want, len);
		}
	sl_buf_release(&data);
	free(path);
	return yes;
}

/*
 * git's own refusals to move a branch a work tree uses (worktree.c
 * is_worktree_being_rebased / _bisected, find_shared_symref): a rebase or
 * a bisect of `refname` in progress in the work tree whose git dir is
 * `gitdir`, though its HEAD is detached meanwhile. Deferred, naming it.
 */
static int check_busy(const char *gitdir, const char *where, const char *refname,
		      struct merge_commit_result *res, struct sl_err *err)
{
	const char *branch = strncmp(refname, "refs/heads/", 11) ? refname : refname + 11;

	if (file_names(gitdir, "rebase-merge/head-name", refname) ||
	    file_names(gitdir, "rebase-apply/head-name", refname))
		return defer(res, err, "the checkout '%s' is in the middle of a rebase of '%s'; "
			     "finish or abort it (git rebase --continue or --abort), the merge is "
			     "retried next tick", where, branch);
	if (file_has_line(gitdir, "rebase-merge/update-refs", refname))
		return defer(res, err, "the checkout '%s' is in the middle of a rebase that will "
			     "update '%s' (--update-refs); finish or abort it (git rebase --continue "
			     "or --abort), the merge is retried next tick", where, branch);
	if (file_names(gitdir, "BISECT_START", branch))
		return defer(res, err, "the checkout '%s' is in the middle of a bisect of '%s'; "
			     "end it (git bisect reset), the merge is retried next tick", where, branch);
	return 0;
}

/* The work tree folder of the linked work tree whose git dir is `gitdir` (from its gitdir file). */
static char *linked_path(const char *gitdir)
{
	struct sl_buf data = SL_BUF_INIT;
	struct sl_err ignored = SL_ERR_INIT;
	char *path = sl_path_join(gitdir, "gitdir"), *out = NULL, *slash;

	if (path && sl_read_file(&data, path, 8192, &ignored) == 0 &&
	    (out = strdup(sl_buf_cstr(&data))) != NULL) {
		out[strcspn(out, "\r\n")] = '\0';
		slash = strrchr(out, '/');
		if (slash && !strcmp(slash, "/.git"))
			*slash = '\0';
	}
	sl_buf_release(&data);
	free(path);
	return out;
}

/*
 * The linked work tree `name`: *out opened when it has `refname` checked
 * out; deferred when it has (its HEAD names it) but cannot be opened (its
 * folder is missing: an unmounted disk, a locked work tree), or is busy
 * with the branch. git refuses to move such a branch too.
 */
static int check_linked(git_repository **out, git_repository *main, const char *name,
			const char *refname, struct merge_commit_result *res, struct sl_err *err)
{
	git_worktree *wt = NULL;
	git_repository *wrepo = NULL;
	char *gitdir = NULL, *where = NULL, *sub = NULL;
	int error = 0;

	if (strchr(name, '/') || name[0] == '.' ||
	    (sub = sl_path_join("worktrees", name)) == NULL ||
	    (gitdir = sl_path_join(git_repository_commondir(main), sub)) == NULL)
		goto out;
	where = linked_path(gitdir);
	if ((error = check_busy(gitdir, where ? where : name, refname, res, err)) != 0)
		goto out;
	if (!file_names(gitdir, "HEAD", refname))
		goto out;
	if (git_worktree_lookup(&wt, main, name) || git_worktree_validate(wt) ||
	    git_repository_open_from_worktree(&wrepo, wt) || !head_names(wrepo, refname)) {
		git_repository_free(wrepo);
		wrepo = NULL;
		error = defer(res, err, "'%s' is checked out in the work tree '%s', which cannot be "
			      "opened (its folder is missing or locked away); bring it back, or remove "
			      "it with 'git worktree prune', the merge is retried next tick",
			      strncmp(refname, "refs/heads/", 11) ? refname : refname + 11,
			      where ? where : name);
	}
	*out = wrepo;
out:
	git_worktree_free(wt);
	free(where);
	free(gitdir);
	free(sub);
	return error;
}

/* The repository of the work tree with `refname` checked out, or NULL. */
static int find_checkout(git_repository **out, git_repository *repo, const char *refname,
			 struct merge_commit_result *res, struct sl_err *err)
{
	git_repository *main = NULL;
	git_strarray names = { NULL, 0 };
	size_t i;
	int error;

	*out = NULL;
	error = git_repository_open(&main, git_repository_commondir(repo));
	if (error)
		return sl_err_git(err, error, "cannot open the repository '%s'",
				  git_repository_commondir(repo));
	if (!git_repository_is_bare(main) &&
	    (error = check_busy(git_repository_path(main), git_repository_workdir(main), refname,
				res, err)) != 0)
		goto out;
	if (!git_repository_is_bare(main) && head_names(main, refname)) {
		*out = main;
		main = NULL;
	}
	if ((error = git_worktree_list(&names, main ? main : *out)) != 0) {
		error = sl_err_git(err, error, "cannot list the worktrees");
		goto out;
	}
	for (i = 0; !error && i < names.count; i++) {
		git_repository *w = NULL;

		error = check_linked(&w, main ? main : *out, names.strings[i], refname, res, err);
		if (w && *out) /* git worktree add -f: git refuses to move such a branch too */
			error = defer(res, err, "the target is checked out in more than one work tree "
				      "('%s' and '%s'); git would not move it either: check it out in "
				      "one only, the merge is retried next tick",
				      git_repository_workdir(*out), git_repository_workdir(w));
		if (w && !*out)
			*out = w;
		else
			git_repository_free(w);
	}
out:
	if (error) {
		git_repository_free(*out);
		*out = NULL;
	}
	git_strarray_dispose(&names);
	git_repository_free(main);
	return error;
}

/* The repository of the work tree with `refname` checked out, or NULL. */
int merge__find_checkout(git_repository **out, git_repository *repo, const char *refname,
			 struct sl_err *err)
{
	struct merge_commit_result res = MERGE_COMMIT_RESULT_INIT;
	int error = find_checkout(out, repo, refname, &res, err); /* busy: SL_ETRANSIENT */

	merge_commit_result_release(&res);
	return error;
}

static int collect_conflict(git_checkout_notify_t why, const char *path,
			    const git_diff_file *baseline, const git_diff_file *target,
			    const git_diff_file *workdir, void *payload)
{
	struct merge_commit_result *res = payload;

	if (why == GIT_CHECKOUT_NOTIFY_CONFLICT && path)
		merge_paths_add(&res->paths, path);
	return 0;
}

/* "a.txt, b.txt and 3 more" */
static void describe_paths(char *out, size_t n, const struct merge_paths *p)
{
	size_t i, len = 0;

	out[0] = '\0';
	for (i = 0; i < p->n && i < 5 && len < n; i++)
		len += (size_t)snprintf(out + len, n - len, "%s%s", i ? ", " : "", p->v[i]);
	if (p->n > 5 && len < n)
		snprintf(out + len, n - len, " and %zu more", p->n - 5);
}

struct changed_walk {
	const struct merge_paths *skip;
	struct merge_paths *out;
};

static int add_changed(const char *path, void *payload)
{
	struct changed_walk *cw = payload;

	/* sl_tree_paths() gives each path once */
	return merge_paths_has(cw->skip, path) ? 0 : merge_paths_add(cw->out, path);
}

/* The paths that differ between two trees, but those in `skip`. */
int merge__changed_paths(git_repository *w, const git_oid *from, const git_oid *to,
			 const struct merge_paths *skip, struct merge_paths *out)
{
	struct changed_walk cw = { skip, out };
	git_tree *a = NULL, *b = NULL;
	int error;

	if ((error = git_tree_lookup(&a, w, from)) == 0 && (error = git_tree_lookup(&b, w, to)) == 0)
		error = sl_tree_paths(w, a, b, add_changed, &cw);
	git_tree_free(a);
	git_tree_free(b);
	return error;
}

/* An operation of git's in progress in w, as git's status names it (wt-status.c), or NULL. */
static const char *in_progress(git_repository *w)
{
	char *seq;
	int yes;

	switch (git_repository_state(w)) {
	case GIT_REPOSITORY_STATE_NONE:
		break;
	case GIT_REPOSITORY_STATE_MERGE:
		return "a merge";
	case GIT_REPOSITORY_STATE_REVERT:
	case GIT_REPOSITORY_STATE_REVERT_SEQUENCE:
		return "a revert";
	case GIT_REPOSITORY_STATE_CHERRYPICK:
	case GIT_REPOSITORY_STATE_CHERRYPICK_SEQUENCE:
		return "a cherry-pick";
	case GIT_REPOSITORY_STATE_BISECT:
		return "a bisect";
	case GIT_REPOSITORY_STATE_REBASE:
	case GIT_REPOSITORY_STATE_REBASE_INTERACTIVE:
	case GIT_REPOSITORY_STATE_REBASE_MERGE:
		return "a rebase";
	case GIT_REPOSITORY_STATE_APPLY_MAILBOX:
		return "'git am'";
	case GIT_REPOSITORY_STATE_APPLY_MAILBOX_OR_REBASE:
		return "a rebase or 'git am'";
	default:
		return "an operation of git's";
	}
	/* a stopped multi-commit cherry-pick or revert whose current pick is committed */
	seq = sl_path_join(git_repository_path(w), "sequencer");
	yes = !seq || sl_path_exists(seq);
	free(seq);
	return yes ? "a cherry-pick or revert (.git/sequencer)" : NULL;
}

/* core.sparseCheckout, also from the work tree's config.worktree (git sparse-checkout puts it there). */
static int sparse_on(git_repository *w)
{
	git_config *cfg = NULL;
	char *wt = sl_path_join(git_repository_path(w), "config.worktree");
	int on = 0;

	if (git_repository_config_snapshot(&cfg, w) == 0 &&
	    git_config_get_bool(&on, cfg, "core.sparseCheckout") < 0)
		on = 0;
	git_config_free(cfg);
	cfg = NULL;
	if (!on && wt && sl_path_exists(wt) && git_config_open_ondisk(&cfg, wt) == 0 &&
	    git_config_get_bool(&on, cfg, "core.sparseCheckout") < 0)
		on = 0;
	git_config_free(cfg);
	free(wt);
	return on;
}

/*
 * The state checks: nothing in progress, no lock, no conflicts. 1 when git
 * must do the checkout: libgit2 cannot read the index (sparse or split
 * index), or sparse checkout is on (git applies its patterns).
 */
static int check_state(git_repository *w, const char *where, struct merge_commit_result *res,
		       struct sl_err *err)
{
	git_index *idx = NULL;
	char *lock = sl_path_join(git_repository_path(w), "index.lock");
	const char *op = in_progress(w);
	int error = 0;

	if (op)
		error = defer(res, err, "the checkout '%s' is in the middle of %s; finish or abort "
			      "it, the merge is retried next tick", where, op);
	else if (!lock || sl_path_exists(lock))
		error = defer(res, err, "the index of '%s' is locked (%s exists; is git running "
			      "there?); the merge is retried next tick", where, lock ? lock : "");
	else if (git_repository_index(&idx, w) || git_index_read(idx, 0))
		error = 1; /* sparse or split index: git does it */
	else if (git_index_has_conflicts(idx))
		error = defer(res, err, "the index of '%s' has unresolved conflicts%s; resolve "
			      "them, the merge is retried next tick", where, "");
	else if (sparse_on(w))
		error = 1;
	git_index_free(idx);
	free(lock);
	return error;
}

/* One bringing-along of a work tree from one tree to another. */
struct co {
	git_repository *w;
	const char *where;           /* the work tree folder, ending in '/' */
	const char *journal;         /* where the index lock is recorded, or NULL */
	git_tree *from, *to;
	git_index *idx;
	struct merge_paths changed;  /* the paths that differ between the trees */
	struct merge_paths index_only; /* skip-worktree entries: the index entry only */
	struct merge_paths keep;     /* the index holds the target already: the user's, kept */
	struct merge_paths write;    /* what the checkout writes */
	struct merge_commit_result *res;
	const struct merge_paths *left; /* bringing back: what the way there left alone */
	char *lock;                  /* the index.lock held, or NULL */
	int lock_fd;
};

/* The file (blob or submodule) at `path` in `t`, or NULL (a folder is no entry of the index). */
static git_tree_entry *entry_at(git_tree *t, const char *path)
{
	git_tree_entry *e = NULL;

	if (git_tree_entry_bypath(&e, t, path) < 0)
		return NULL;
	if (git_tree_entry_type(e) == GIT_OBJECT_TREE) {
		git_tree_entry_free(e);
		return NULL;
	}
	return e;
}

/* 1 when the index entry (or its absence) is the tree entry (or its absence). */
static int same_entry(const git_index_entry *ie, const git_tree_entry *te)
{
	if (!ie || !te)
		return !ie && !te;
	return git_oid_equal(&ie->id, git_tree_entry_id(te)) &&
	       ie->mode == (uint32_t)git_tree_entry_filemode(te);
}

/*
 * `len` bytes of path into `at` (n bytes), the path a message names: one
 * too long for it ends in "..." (every path that fits is whole).
 */
static void set_at(char *at, size_t n, const char *path, size_t len)
{
	if (len < n) {
		memcpy(at, path, len);
		at[len] = '\0';
	} else {
		memcpy(at, path, n - 4);
		memcpy(at + n - 4, "...", 4);
	}
}

/* The full path of a work tree path in a static buffer (NULL when too long). */
static const char *full(const struct co *c, const char *path, char *buf, size_t n)
{
	int len = snprintf(buf, n, "%s%s", c->where, path);

	return len < 0 || (size_t)len >= n ? NULL : buf;
}

/*
 * Nothing written may pass through a link: a symbolic link (or anything
 * but a folder) at a parent folder of `path`, or a link at `path` where
 * the old tree has none, is the user's and in the way. 1 with *at set.
 */
static int link_in_way(const struct co *c, const char *path, char *at, size_t n)
{
	char buf[PATH_MAX];
	const char *p, *f;
	git_tree_entry *oe;
	struct stat st;
	int is_link;

	for (p = strchr(path, '/'); p; p = strchr(p + 1, '/')) {
		set_at(at, n, path, (size_t)(p - path));
		if (!(f = full(c, at, buf, sizeof(buf))))
			return 1;
		if (lstat(f, &st) < 0)
			return 0; /* missing: made as a folder */
		if (S_ISLNK(st.st_mode))
			return 1;
		if (!S_ISDIR(st.st_mode))
			return 0; /* a file: the checkout deletes it (tracked) or refuses */
	}
	set_at(at, n, path, strlen(path));
	if (!(f = full(c, path, buf, sizeof(buf))) || lstat(f, &st) < 0 || !S_ISLNK(st.st_mode))
		return 0;
	oe = entry_at(c->from, path);
	is_link = oe && git_tree_entry_filemode(oe) == GIT_FILEMODE_LINK;
	git_tree_entry_free(oe);
	return !is_link;
}

static int check_links(struct co *c, struct sl_err *err)
{
	char at[PATH_MAX], buf[PATH_MAX];
	const char *f;
	struct stat st;
	size_t i;

	for (i = 0; i < c->changed.n; i++) {
		if (link_in_way(c, c->changed.v[i], at, sizeof(at)))
			return defer(c->res, err, "a symbolic link of the user's in '%s' is in the way of "
				     "the merge (%s); nothing is written through a link, replace it with "
				     "the folder or commit it, the merge is retried next tick", c->where, at);
		/* a FIFO would be opened for writing (and hang the merge, the lock held) */
		if ((f = full(c, c->changed.v[i], buf, sizeof(buf))) && lstat(f, &st) == 0 &&
		    !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode) && !S_ISLNK(st.st_mode))
			return defer(c->res, err, "a FIFO, socket or device of the user's in '%s' is in "
				     "the way of the merge (%s); move it away, the merge is retried next "
				     "tick", c->where, c->changed.v[i]);
	}
	return 0;
}

/*
 * 1 (with *at, the first such path) when the folder `rel` holds anything
 * `foreign` says is not sluice's to remove, or cannot be read.
 */
static int dir_holds(const struct co *c, const char *rel,
		     int (*foreign)(const struct co *c, const char *path), char *at, size_t n,
		     int depth)
{
	char buf[PATH_MAX], child[PATH_MAX];
	const struct dirent *de;
	struct stat st;
	DIR *d;
	int bad = 0;

	if (depth > 64 || !full(c, rel, buf, sizeof(buf)) || !(d = opendir(buf))) {
		set_at(at, n, rel, strlen(rel));
		return 1;
	}
	while (!bad && (de = readdir(d)) != NULL) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (snprintf(child, sizeof(child), "%s/%s", rel, de->d_name) >= (int)sizeof(child) ||
		    !full(c, child, buf, sizeof(buf)) || lstat(buf, &st) < 0)
			bad = 1;
		else if (S_ISDIR(st.st_mode))
			bad = dir_holds(c, child, foreign, at, n, depth + 1);
		else
			bad = foreign(c, child);
		if (bad && !at[0])
			set_at(at, n, child, strlen(child));
	}
	closedir(d);
	return bad;
}

/* Not a tracked file the merge removes: an ignored or untracked file of the user's. */
static int not_removed_tracked(const struct co *c, const char *path)
{
	return !git_index_get_bypath(c->idx, path, 0) || !merge_paths_has(&c->changed, path);
}

/*
 * The folder `rel` is in the way of a file the merge writes: 1 (with *at)
 * when it holds anything but tracked files the merge removes (an ignored
 * or untracked file of the user's, a nested repository).
 */
static int dir_in_way(const struct co *c, const char *rel, char *at, size_t n)
{
	return dir_holds(c, rel, not_removed_tracked, at, n, 0);
}

/* Index entries under `prefix`/ that differ from the old tree: the user's (staged). */
static int staged_under(struct co *c, const char *prefix, struct merge_paths *out)
{
	char dir[PATH_MAX];
	size_t pos, len;
	const git_index_entry *ie;
	int error = 0;

	len = (size_t)snprintf(dir, sizeof(dir), "%s/", prefix);
	if (len >= sizeof(dir) || git_index_find_prefix(&pos, c->idx, dir) < 0)
		return 0;
	for (; !error && (ie = git_index_get_byindex(c->idx, pos)) && !strncmp(ie->path, dir, len);
	     pos++) {
		git_tree_entry *oe = entry_at(c->from, ie->path);

		if (!same_entry(ie, oe))
			error = merge_paths_add(out, ie->path);
		git_tree_entry_free(oe);
	}
	return error;
}

/*
 * Where the changed `path` goes, by its index entry `ie` against the old
 * entry `oe` and the new one `ne`: left alone by the way there (c->keep),
 * the user's staged change (*staged), a skip-worktree entry (c->index_only),
 * the target already (c->keep), or the old entry (c->write).
 */
static int sort_path(struct co *c, const char *path, const git_index_entry *ie,
		     const git_tree_entry *oe, const git_tree_entry *ne, struct merge_paths *staged)
{
	int old = same_entry(ie, oe), new = same_entry(ie, ne);

	if (c->left && merge_paths_has(c->left, path))
		return merge_paths_add(&c->keep, path);
	if (!old && !new)
		return merge_paths_add(staged, path);
	if (ie && (ie->flags_extended & GIT_INDEX_ENTRY_SKIP_WORKTREE))
		return merge_paths_add(&c->index_only, path);
	if (!old)
		return merge_paths_add(&c->keep, path);
	return merge_paths_add(&c->write, path);
}

/*
 * The folders above `path`, where the merge writes a file: one the index
 * tracks as a file other than the old tree's is the user's (*staged); an
 * untracked file there is in the way (*at, when nothing is yet).
 */
static int check_parents(struct co *c, const char *path, struct merge_paths *staged, char *at,
			 size_t n)
{
	char buf[PATH_MAX], *parent;
	const git_index_entry *pe;
	git_tree_entry *pt;
	const char *p, *f;
	struct stat st;
	int error = 0;

	for (p = strchr(path, '/'); !error && p; p = strchr(p + 1, '/')) {
		if (!(parent = strndup(path, (size_t)(p - path))))
			return SL_ERROR; /* plan_verdict(): out of memory */
		if (!(pe = git_index_get_bypath(c->idx, parent, 0))) {
			if (!at[0] && (f = full(c, parent, buf, sizeof(buf))) && lstat(f, &st) == 0 &&
			    !S_ISDIR(st.st_mode))
				set_at(at, n, parent, strlen(parent)); /* untracked */
		} else {
			pt = entry_at(c->from, parent);
			if (!same_entry(pe, pt))
				error = merge_paths_add(staged, parent);
			git_tree_entry_free(pt);
		}
		free(parent);
	}
	return error;
}

/*
 * Room for the file the merge writes at `path` (old entry `oe`): a file
 * where the old tree may have a folder, folders where it may have a file.
 * The user's staged entries under or above it go to *staged; an untracked
 * file above it, or a folder at it holding anything of the user's, sets *at
 * (when nothing is yet).
 */
static int check_room(struct co *c, const char *path, const git_tree_entry *oe,
		      struct merge_paths *staged, char *at, size_t n)
{
	char buf[PATH_MAX];
	const char *f;
	struct stat st;
	int error;

	if ((error = staged_under(c, path, staged)) == 0)
		error = check_parents(c, path, staged, at, n);
	if (!error && !at[0] && (!oe || git_tree_entry_type(oe) != GIT_OBJECT_COMMIT) &&
	    (f = full(c, path, buf, sizeof(buf))) && lstat(f, &st) == 0 && S_ISDIR(st.st_mode))
		dir_in_way(c, path, at, n);
	return error;
}

/* plan()'s verdict: out of memory (error), the user's staged paths, a path in the way (at). */
static int plan_verdict(struct co *c, int error, const struct merge_paths *staged, const char *at,
			struct sl_err *err)
{
	char paths[256];
	size_t i;

	if (error)
		return sl_err_set(err, SL_ERROR, "out of memory");
	if (staged->n) {
		describe_paths(paths, sizeof(paths), staged);
		for (i = 0; i < staged->n && !error; i++)
			error = merge_paths_add(&c->res->paths, staged->v[i]);
		return defer(c->res, err, "staged changes in '%s' collide with the merge (%s); commit "
			     "or unstage them, the merge is retried next tick", c->where, paths);
	}
	if (at[0]) {
		merge_paths_add(&c->res->paths, at);
		return defer(c->res, err, "untracked or ignored files in '%s' are in the way of the "
			     "merge (%s); move them away, the merge is retried next tick", c->where, at);
	}
	return 0;
}

/*
 * What `git read-tree -m -u` checks before it writes anything (two-way
 * merge): any index entry that differs from the old tree is the user's; a
 * path the merge changes whose entry is neither the old nor the new one
 * defers the merge, one that is the new one already is kept as it is. A
 * folder the merge turns into a file must hold nothing of the user's.
 */
static int plan(struct co *c, struct sl_err *err)
{
	struct merge_paths staged = MERGE_PATHS_INIT;
	char at[PATH_MAX] = "";
	size_t i;
	int error = 0;

	for (i = 0; !error && i < c->changed.n; i++) {
		const char *path = c->changed.v[i];
		const git_index_entry *ie = git_index_get_bypath(c->idx, path, 0);
		git_tree_entry *oe = entry_at(c->from, path), *ne = entry_at(c->to, path);

		error = sort_path(c, path, ie, oe, ne, &staged);
		if (!error && ne && git_tree_entry_type(ne) == GIT_OBJECT_BLOB)
			error = check_room(c, path, oe, &staged, at, sizeof(at));
		git_tree_entry_free(oe);
		git_tree_entry_free(ne);
	}
	error = plan_verdict(c, error, &staged, at, err);
	merge_paths_release(&staged);
	return error;
}

/*
 * Remove the folders below the work tree folder `full` that hold nothing at
 * any depth, `full` itself too when `self`: the user's empty folders in a
 * folder the merge turns into a file, which git read-tree -m -u removes as
 * well (libgit2 would fail on them after deleting the tracked files). Only
 * rmdir: a folder with anything in it stays. Links are not followed.
 */
static void remove_empty_dirs(const char *full, int self, int depth)
{
	char child[PATH_MAX];
	const struct dirent *de;
	struct stat st;
	DIR *d;

	if (depth > 64 || !(d = opendir(full)))
		return;
	while ((de = readdir(d)) != NULL) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    snprintf(child, sizeof(child), "%s/%s", full, de->d_name) >= (int)sizeof(child))
			continue;
		if (lstat(child, &st) == 0 && S_ISDIR(st.st_mode))
			remove_empty_dirs(child, 1, depth + 1);
	}
	closedir(d);
	if (self)
		rmdir(full);
}

/* The folders the merge turns into a file: their empty folders go first, as git does. */
static void clear_empty_dirs(const struct co *c)
{
	char buf[PATH_MAX];
	const char *f;
	struct stat st;
	size_t i;

	for (i = 0; i < c->write.n; i++)
		if ((f = full(c, c->write.v[i], buf, sizeof(buf))) && lstat(f, &st) == 0 &&
		    S_ISDIR(st.st_mode))
			remove_empty_dirs(f, 0, 0);
}

/* Check out c->write from c->from to c->to (files only: the index is written by us). */
static int checkout_write(struct co *c, int dry)
{
	git_checkout_options co;

	if (!c->write.n)
		return 0;
	git_checkout_options_init(&co, GIT_CHECKOUT_OPTIONS_VERSION);
	co.checkout_strategy = CHECKOUT_STRATEGY | GIT_CHECKOUT_DISABLE_PATHSPEC_MATCH |
			       GIT_CHECKOUT_DONT_UPDATE_INDEX | (dry ? GIT_CHECKOUT_DRY_RUN : 0);
	co.paths.strings = c->write.v;
	co.paths.count = c->write.n;
	co.progress_cb = dry ? NULL : sl_fault_checkout_progress;
	co.notify_flags = GIT_CHECKOUT_NOTIFY_CONFLICT;
	co.notify_cb = collect_conflict;
	co.notify_payload = c->res;
	co.baseline = c->from;
	return git_checkout_tree(c->w, (const git_object *)c->to, &co);
}

/*
 * `<lock>.sluice`: the file that becomes the index lock. It is made and
 * recorded in the journal first, then linked (or renamed) to index.lock, so
 * that whatever index.lock holds while sluice could be killed is a file the
 * journal names by device, inode and mtime: recovery frees exactly that one,
 * never the user's. The repository lock keeps one merge at a time here.
 */
static char *side_path(const char *lock)
{
	size_t n = strlen(lock) + sizeof(".sluice");
	char *p = malloc(n);

	if (p)
		snprintf(p, n, "%s.sluice", lock);
	return p;
}

static void unlink_side_lock(const char *side)
{
	size_t n = strlen(side) + sizeof(".lock");
	char *p = malloc(n);

	if (p) {
		snprintf(p, n, "%s.lock", side);
		unlink(p);
	}
	free(p);
}

/* Take the index lock as git does (exclusively), recorded in the journal before it exists. */
static int take_lock(struct co *c, struct sl_err *err)
{
	char *side = NULL;
	int fd = -1, e, error;

	c->lock = sl_path_join(git_repository_path(c->w), "index.lock");
	if (!c->lock || !(side = side_path(c->lock))) {
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	unlink(side); /* one a killed merge left */
	if ((fd = open(side, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666)) < 0) {
		error = sl_err_sys(err, errno, "cannot lock the index of '%s'", c->where);
		goto out;
	}
	if ((error = merge__journal_lock(c->journal, c->lock, fd, err)) != 0)
		goto out;
	if (link(side, c->lock) < 0) { /* fails when index.lock exists, as O_EXCL would */
		e = errno;
		error = e == EEXIST ? defer(c->res, err, "the index of '%s' is locked%s; the merge is "
					    "retried next tick", c->where, " (is git running there?)")
				    : sl_err_sys(err, e, "cannot lock the index of '%s'", c->where);
		goto out;
	}
	c->lock_fd = fd;
	fd = -1;
out:
	if (fd >= 0)
		close(fd);
	if (side)
		unlink(side);
	free(side);
	if (error) {
		free(c->lock);
		c->lock = NULL;
	}
	return error;
}

/* Give the lock up, removing it while it is still our file. */
static void drop_lock(struct co *c)
{
	struct stat a, b;

	if (!c->lock)
		return;
	if (fstat(c->lock_fd, &a) == 0 && lstat(c->lock, &b) == 0 && a.st_dev == b.st_dev &&
	    a.st_ino == b.st_ino)
		unlink(c->lock);
	close(c->lock_fd);
	free(c->lock);
	c->lock = NULL;
}

static void fill_stat(git_index_entry *e, const struct stat *st)
{
	e->ctime.seconds = (int32_t)st->st_ctim.tv_sec;
	e->ctime.nanoseconds = (uint32_t)st->st_ctim.tv_nsec;
	e->mtime.seconds = (int32_t)st->st_mtim.tv_sec;
	e->mtime.nanoseconds = (uint32_t)st->st_mtim.tv_nsec;
	e->dev = (uint32_t)st->st_dev;
	e->ino = (uint32_t)st->st_ino;
	e->uid = (uint32_t)st->st_uid;
	e->gid = (uint32_t)st->st_gid;
	e->file_size = (uint32_t)st->st_size;
}

/* The index entry of `path` set to the new tree's (stat from the file when `stat_file`). */
static int set_entry(struct co *c, const char *path, int stat_file)
{
	const git_index_entry *ie = git_index_get_bypath(c->idx, path, 0);
	git_tree_entry *ne = entry_at(c->to, path);
	git_index_entry e;
	char buf[PATH_MAX];
	const char *f;
	struct stat st;
	int error;

	if (!ne) {
		error = ie ? git_index_remove(c->idx, path, 0) : 0;
		return error;
	}
	if (ie && !stat_file)
		e = *ie; /* skip-worktree: keep its flags and stat */
	else
		memset(&e, 0, sizeof(e));
	e.path = path;
	e.mode = (uint32_t)git_tree_entry_filemode(ne);
	git_oid_cpy(&e.id, git_tree_entry_id(ne));
	if (stat_file && (f = full(c, path, buf, sizeof(buf))) && lstat(f, &st) == 0 &&
	    (S_ISLNK(st.st_mode) ? e.mode == GIT_FILEMODE_LINK : S_ISREG(st.st_mode)))
		fill_stat(&e, &st);
	error = git_index_add(c->idx, &e);
	git_tree_entry_free(ne);
	return error;
}

/* Every entry of `from` into `to` (stat data and flags included). */
static int copy_entries(git_index *to, git_index *from)
{
	size_t i, n = git_index_entrycount(from);
	int error = 0;

	for (i = 0; !error && i < n; i++)
		error = git_index_add(to, git_index_get_byindex(from, i));
	return error;
}

/*
 * Write the index: the new one goes to the side file, which is recorded in
 * the journal and renamed over the index.lock this holds (the lock never
 * stops existing, and never holds bytes the journal does not name), then to
 * index.
 */
static int write_index(struct co *c, struct sl_err *err)
{
	git_index *t = NULL;
	char *side = side_path(c->lock), *index = sl_path_join(git_repository_path(c->w), "index");
	int fd = -1, rc, error = 0;

	if (!side || !index) {
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	unlink(side);
	unlink_side_lock(side); /* libgit2's lock of the side file, after a kill */
	if ((rc = git_index_open(&t, side)) ||
	    (rc = git_index_set_version(t, git_index_version(c->idx))) ||
	    (rc = copy_entries(t, c->idx)) || (rc = git_index_write(t))) {
		error = sl_err_git(err, rc, "cannot write the index of '%s'", c->where);
		goto out;
	}
	if ((fd = open(side, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0 || fsync(fd) < 0) {
		error = sl_err_sys(err, errno, "cannot write the index of '%s'", c->where);
		goto out;
	}
	if ((error = merge__journal_lock(c->journal, c->lock, fd, err)) != 0)
		goto out;
	if (rename(side, c->lock) < 0) {
		error = sl_err_sys(err, errno, "cannot write the index of '%s'", c->where);
		goto out;
	}
	sl_fault("merge.index_in_lock");
	if (rename(c->lock, index) < 0) {
		error = sl_err_sys(err, errno, "cannot write the index of '%s'", c->where);
		unlink(c->lock); /* ours: the side file just renamed there */
		goto out;
	}
	close(c->lock_fd);
	c->lock_fd = -1;
	free(c->lock);
	c->lock = NULL;
out:
	if (fd >= 0)
		close(fd);
	if (side)
		unlink(side);
	git_index_free(t);
	free(side);
	free(index);
	return error;
}

/*
 * 1 when the work tree already holds, at `path`, exactly what the merged
 * tree has there (same bytes, same executable bit, or both absent). Such a
 * "collision" loses nothing when checked out: it is what a checkout cut off
 * by a crash leaves behind (files written, index and ref not yet), or the
 * user made the same change.
 */
static int holds_target(git_repository *w, const git_oid *tree_id, const char *path)
{
	git_tree *tree = NULL;
	git_tree_entry *e = NULL;
	git_blob *blob = NULL;
	struct sl_buf data = SL_BUF_INIT;
	struct sl_err ignored = SL_ERR_INIT;
	struct stat st;
	char *full = sl_path_join(git_repository_workdir(w), path);
	int same = 0, exists;

	if (!full || git_tree_lookup(&tree, w, tree_id) < 0)
		goto out;
	exists = lstat(full, &st) == 0;
	if (git_tree_entry_bypath(&e, tree, path) < 0) {
		same = !exists;
		goto out;
	}
	if (!exists || !S_ISREG(st.st_mode) || git_tree_entry_type(e) != GIT_OBJECT_BLOB ||
	    (git_tree_entry_filemode(e) != GIT_FILEMODE_BLOB &&
	     git_tree_entry_filemode(e) != GIT_FILEMODE_BLOB_EXECUTABLE) ||
	    !!(st.st_mode & S_IXUSR) != (git_tree_entry_filemode(e) == GIT_FILEMODE_BLOB_EXECUTABLE) ||
	    git_blob_lookup(&blob, w, git_tree_entry_id(e)) < 0 ||
	    (git_object_size_t)st.st_size != git_blob_rawsize(blob) ||
	    sl_read_file(&data, full, 0, &ignored) != 0)
		goto out;
	same = data.len == (size_t)git_blob_rawsize(blob) &&
	       !memcmp(data.ptr ? data.ptr : "", git_blob_rawcontent(blob), data.len);
out:
	sl_buf_release(&data);
	git_blob_free(blob);
	git_tree_entry_free(e);
	git_tree_free(tree);
	free(full);
	return same;
}

/* Paths of `all` that are not in `less`. */
static int minus(struct merge_paths *out, const struct merge_paths *all, const struct merge_paths *less)
{
	size_t i;
	int error = 0;

	for (i = 0; !error && i < all->n; i++)
		if (!merge_paths_has(less, all->v[i]))
			error = merge_paths_add(out, all->v[i]);
	return error;
}

/* Read c->w's index into c->idx; deferred when it has conflicts. */
static int open_index(struct co *c, struct sl_err *err)
{
	int error;

	/*
	 * check_state() read it before the lock; read again only when the file
	 * changed since (libgit2 compares its stamp: git writes an index by
	 * renaming a new file over it, a new inode), not 100,000 entries twice.
	 */
	if ((error = git_repository_index(&c->idx, c->w)) || (error = git_index_read(c->idx, 0)))
		return sl_err_git(err, error, "cannot read the index of '%s'", c->where);
	if (git_index_has_conflicts(c->idx))
		return defer(c->res, err, "the index of '%s' has unresolved conflicts%s; resolve "
			     "them, the merge is retried next tick", c->where, "");
	return 0;
}

/*
 * The dry run found paths in the way (c->res->paths). When every one holds
 * the merged content already (a checkout of this very merge cut off by a
 * crash, or the user made the same change), nothing is written there, only
 * their index entries: they move to *adopted, out of c->write, and *dry is
 * the result of a new dry run. Returns an error only when out of memory.
 */
static int adopt(struct co *c, struct merge_paths *adopted, int *dry, struct sl_err *err)
{
	struct merge_paths rest = MERGE_PATHS_INIT;
	size_t i;

	for (i = 0; i < c->res->paths.n; i++)
		if (!holds_target(c->w, git_tree_id(c->to), c->res->paths.v[i]))
			return 0;
	*adopted = c->res->paths;
	memset(&c->res->paths, 0, sizeof(c->res->paths));
	if (minus(&rest, &c->write, adopted)) {
		merge_paths_release(&rest);
		return sl_err_set(err, SL_ERROR, "out of memory");
	}
	merge_paths_release(&c->write);
	c->write = rest;
	*dry = checkout_write(c, 1);
	return 0;
}

/*
 * Check out c->write as a dry run: deferred, touching nothing, when the
 * user's uncommitted changes are in the way (unless they are the merged
 * content already and `revert` is 0: adopted, see adopt()).
 */
static int dry_run(struct co *c, int revert, struct merge_paths *adopted, struct sl_err *err)
{
	char paths[256];
	int error = checkout_write(c, 1), oom;

	if (!revert && (error == GIT_ECONFLICT || (!error && c->res->paths.n)) &&
	    (oom = adopt(c, adopted, &error, err)) != 0)
		return oom;
	if (error == GIT_ECONFLICT || (!error && c->res->paths.n)) {
		describe_paths(paths, sizeof(paths), &c->res->paths);
		return defer(c->res, err, "uncommitted changes in '%s' collide with the merge "
			     "(%s); commit or stash them, the merge is retried next tick",
			     c->where, paths);
	}
	if (error)
		return sl_err_git(err, error, "cannot update the checkout '%s'", c->where);
	return 0;
}

/* The index entries of what the checkout wrote, adopted, and the skip-worktree entries. */
static int set_entries(struct co *c, const struct merge_paths *adopted, struct sl_err *err)
{
	size_t i;
	int error = 0;

	for (i = 0; !error && i < c->write.n; i++)
		error = set_entry(c, c->write.v[i], 1);
	for (i = 0; !error && i < adopted->n; i++)
		error = set_entry(c, adopted->v[i], 1);
	for (i = 0; !error && i < c->index_only.n; i++)
		error = set_entry(c, c->index_only.v[i], 0);
	if (error)
		return sl_err_git(err, error, "cannot update the index of '%s'", c->where);
	return 0;
}

/*
 * Bring c->w from c->from to c->to, holding its index lock throughout:
 * check everything first (deferred with nothing touched), then write the
 * files, then the index. `revert`: undoing our own checkout, no adoption.
 */
static int bring(struct co *c, int revert, struct sl_err *err)
{
	struct merge_paths adopted = MERGE_PATHS_INIT;
	int error;

	if ((error = take_lock(c, err)) != 0 || (error = open_index(c, err)) != 0 ||
	    (error = plan(c, err)) != 0 || (error = dry_run(c, revert, &adopted, err)) != 0 ||
	    (error = merge__journal_write_mark(c->journal, err)) != 0)
		goto out;
	clear_empty_dirs(c);
	if ((error = checkout_write(c, 0)) != 0) {
		error = sl_err_git(err, error, "cannot update the checkout '%s'", c->where);
		goto out;
	}
	sl_fault("merge.after_checkout_files");
	if ((error = set_entries(c, &adopted, err)) != 0)
		goto out;
	if ((error = write_index(c, err)) == 0 && !revert) {
		merge_paths_release(&c->res->kept);
		c->res->kept = c->keep;
		memset(&c->keep, 0, sizeof(c->keep));
	}
out:
	drop_lock(c);
	merge_paths_release(&adopted);
	return error;
}

static int co_open(struct co *c, git_repository *w, const char *where, const git_oid *from,
		   const git_oid *to, const char *journal, struct merge_commit_result *res,
		   struct sl_err *err)
{
	struct merge_paths none = MERGE_PATHS_INIT;
	int error;

	memset(c, 0, sizeof(*c));
	c->w = w;
	c->where = where;
	c->journal = journal;
	c->res = res;
	c->lock_fd = -1;
	if ((error = git_tree_lookup(&c->from, w, from)) || (error = git_tree_lookup(&c->to, w, to)) ||
	    (error = merge__changed_paths(w, from, to, &none, &c->changed)))
		return sl_err_git(err, error, "cannot list the merge's paths in '%s'", where);
	return 0;
}

/*
 * 1 when git must write the files: a path of the merge has a filter driver
 * or a working-tree-encoding (libgit2 runs no driver and re-encodes
 * nothing: it would write the raw blob, the clean form of an LFS file or
 * UTF-8 bytes in a UTF-16 file), or the merge changes a .gitattributes,
 * which may add either.
 */
int merge_path_converted(git_repository *repo, const char *path)
{
	const char *names[] = { "filter", "working-tree-encoding" }, *v[2] = { NULL, NULL };
	size_t k;

	if (git_attr_get_many(v, repo, GIT_ATTR_CHECK_FILE_THEN_INDEX, path, 2, names) < 0) {
		git_error_clear();
		return 1; /* cannot tell: git does it */
	}
	for (k = 0; k < 2; k++)
		if (git_attr_value(v[k]) == GIT_ATTR_VALUE_TRUE ||
		    git_attr_value(v[k]) == GIT_ATTR_VALUE_STRING)
			return 1;
	return 0;
}

static int needs_git_filters(const struct co *c)
{
	const char *base;
	size_t i;

	for (i = 0; i < c->changed.n; i++) {
		base = strrchr(c->changed.v[i], '/');
		if (!strcmp(base ? base + 1 : c->changed.v[i], ".gitattributes") ||
		    merge_path_converted(c->w, c->changed.v[i]))
			return 1;
	}
	return 0;
}

static void co_close(struct co *c)
{
	drop_lock(c);
	git_tree_free(c->from);
	git_tree_free(c->to);
	git_index_free(c->idx);
	merge_paths_release(&c->changed);
	merge_paths_release(&c->index_only);
	merge_paths_release(&c->keep);
	merge_paths_release(&c->write);
}

/* Not a blob of the old tree. */
static int not_old_blob(const struct co *c, const char *path)
{
	git_tree_entry *oe = entry_at(c->from, path);
	int bad = !oe || git_tree_entry_type(oe) != GIT_OBJECT_BLOB;

	git_tree_entry_free(oe);
	return bad;
}

/* 1 (with *at) when the folder `rel` holds a file that is not a blob of the old tree. */
static int dir_untracked(const struct co *c, const char *rel, char *at, size_t n)
{
	return dir_holds(c, rel, not_old_blob, at, n, 0);
}

/*
 * Before git read-tree -m -u (sparse checkout, an index libgit2 cannot
 * read): git 2.39 overwrites an untracked file at a path the merge adds in
 * a sparse checkout ("will not overwrite with sparse update", and does) and
 * deletes untracked and ignored files in a folder the merge turns into a
 * file. Anything on disk in the way of the merge's paths that the old tree
 * does not have defers the merge, touching nothing.
 */
static int check_git_way(const struct co *c, struct sl_err *err)
{
	char buf[PATH_MAX], at[PATH_MAX] = "";
	const char *f;
	struct stat st;
	size_t i;

	for (i = 0; !at[0] && i < c->changed.n; i++) {
		const char *path = c->changed.v[i];
		git_tree_entry *oe = entry_at(c->from, path), *ne = entry_at(c->to, path);

		if (ne && (f = full(c, path, buf, sizeof(buf))) && lstat(f, &st) == 0) {
			if (S_ISDIR(st.st_mode)) {
				if (git_tree_entry_type(ne) != GIT_OBJECT_COMMIT)
					dir_untracked(c, path, at, sizeof(at));
			} else if (!oe) {
				set_at(at, sizeof(at), path, strlen(path));
			}
		}
		git_tree_entry_free(oe);
		git_tree_entry_free(ne);
	}
	if (!at[0])
		return 0;
	merge_paths_add(&c->res->paths, at);
	return defer(c->res, err, "untracked or ignored files in '%s' are in the way of the merge "
		     "(%s); move them away, the merge is retried next tick", c->where, at);
}

/*
 * The same with git, for an index libgit2 cannot read or a sparse
 * checkout: a two-tree `read-tree -m -u OLD NEW` keeps local changes and
 * refuses, touching nothing, when they collide (what push-to-checkout does).
 */
static int read_tree(const char *where, const git_oid *from, const git_oid *to, struct sl_err *err)
{
	char f[GIT_OID_HEXSZ + 1], t[GIT_OID_HEXSZ + 1];
	const char *args[] = { "read-tree", "-m", "-u", f, t, NULL };
	int code;

	git_oid_tostr(f, sizeof(f), from);
	git_oid_tostr(t, sizeof(t), to);
	return merge__run_git(where, args, NULL, 0, &code, err);
}

static int bring_along_git(const char *where, const git_oid *old_tree, const git_oid *new_tree,
			   const char *journal, struct merge_commit_result *res, struct sl_err *err)
{
	struct sl_err gerr = SL_ERR_INIT;
	int error;

	if ((error = merge__journal_write_mark(journal, err)) != 0)
		return error;
	if (!read_tree(where, old_tree, new_tree, &gerr)) {
		res->checkout_via_git = 1;
		return 0;
	}
	return defer(res, err, "uncommitted changes in '%s' collide with the merge (%.200s); commit "
		     "or stash them, the merge is retried next tick", where, gerr.msg);
}

int merge__checkout_target(git_repository *repo, const char *refname, const git_oid *old_tree,
			   const git_oid *new_tree, const char *journal, char **where,
			   struct merge_commit_result *res, struct sl_err *err)
{
	git_repository *w = NULL;
	struct co c;
	int error, state;

	*where = NULL;
	memset(&c, 0, sizeof(c));
	c.lock_fd = -1;
	error = find_checkout(&w, repo, refname, res, err);
	if (error || !w)
		return error;
	*where = strdup(git_repository_workdir(w));
	if (!*where) {
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	if ((state = check_state(w, *where, res, err)) < 0 || state > 1) {
		error = state;
		goto out;
	}
	if ((error = co_open(&c, w, *where, old_tree, new_tree, journal, res, err)) ||
	    (error = check_links(&c, err)))
		goto out;
	if (state == 1 || needs_git_filters(&c)) {
		if ((error = check_git_way(&c, err)) == 0)
			error = bring_along_git(*where, old_tree, new_tree, journal, res, err);
	} else
		error = bring(&c, 0, err);
out:
	co_close(&c);
	if (error) {
		free(*where);
		*where = NULL;
	}
	git_repository_free(w);
	return error;
}

int merge__checkout_revert(const char *where, int via_git, const git_oid *merged_tree,
			   const git_oid *old_tree, const char *journal,
			   const struct merge_paths *kept, struct sl_err *err)
{
	struct merge_commit_result res = MERGE_COMMIT_RESULT_INIT;
	git_repository *w = NULL;
	struct co c;
	int error;

	if (via_git)
		return read_tree(where, merged_tree, old_tree, err);
	memset(&c, 0, sizeof(c));
	c.lock_fd = -1;
	error = git_repository_open(&w, where);
	if (error)
		error = sl_err_git(err, error, "cannot open '%s'", where);
	else if (!(error = co_open(&c, w, where, merged_tree, old_tree, journal, &res, err))) {
		c.left = kept;
		error = bring(&c, 1, err);
	}
	co_close(&c);
	if (error)
		error = sl_err_set(err, SL_ERROR, "the target moved while '%s' was being updated, "
				   "and its files could not be brought back (%s); run 'git status' there",
				   where, res.reason[0] ? res.reason : err->msg);
	merge_commit_result_release(&res);
	git_repository_free(w);
	return error;
}
