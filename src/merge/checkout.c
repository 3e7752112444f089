/*
 * The target checked out in a work tree (DESIGN.md 7.4): bring that work
 * tree along like git's receive.denyCurrentBranch=updateInstead, through a
 * safe checkout from the old tip's tree to the merged tree that keeps the
 * user's staged, unstaged and untracked changes, or refuse with nothing
 * touched.
 *
 * A work tree "has the target checked out" when its HEAD is a symbolic ref
 * naming the target. A detached HEAD checks out no branch, so moving the
 * target leaves that work tree alone and the ref is simply moved.
 */
#include "merge/merge.h"
#include "core/fs.h"
#include "core/fault.h"

#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>

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

/* The linked work tree `name`, opened, if it is valid and has refname checked out. */
static git_repository *linked_with(git_repository *main, const char *name, const char *refname)
{
	git_worktree *wt = NULL;
	git_repository *wrepo = NULL;

	if (git_worktree_lookup(&wt, main, name) || git_worktree_validate(wt) ||
	    git_repository_open_from_worktree(&wrepo, wt) || !head_names(wrepo, refname)) {
		git_repository_free(wrepo);
		wrepo = NULL;
	}
	git_worktree_free(wt);
	return wrepo;
}

/* The repository of the work tree with `refname` checked out, or NULL. */
int merge__find_checkout(git_repository **out, git_repository *repo, const char *refname,
			 struct sl_err *err)
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
	if (!git_repository_is_bare(main) && head_names(main, refname)) {
		*out = main;
		return 0;
	}
	error = git_worktree_list(&names, main);
	for (i = 0; !error && i < names.count && !*out; i++)
		*out = linked_with(main, names.strings[i], refname);
	if (error)
		error = sl_err_git(err, error, "cannot list the worktrees");
	git_strarray_dispose(&names);
	git_repository_free(main);
	return error;
}

static int defer(struct merge_commit_result *res, struct sl_err *err, const char *fmt,
		 const char *path, const char *detail)
{
	res->status = MERGE_DEFERRED;
	snprintf(res->reason, sizeof(res->reason), fmt, path, detail);
	return sl_err_set(err, SL_ETRANSIENT, "%s", res->reason);
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

/*
 * The state checks: nothing in progress, no conflicts, no lock. 1 when
 * libgit2 cannot read the index (sparse or split index): git must do it.
 */
static int check_state(git_repository *w, const char *where, struct merge_commit_result *res,
		       struct sl_err *err)
{
	git_index *idx = NULL;
	char *lock = sl_path_join(git_repository_path(w), "index.lock");
	int error = 0;

	if (git_repository_state(w) != GIT_REPOSITORY_STATE_NONE)
		error = defer(res, err, "a merge, rebase, cherry-pick or revert is in progress in "
			      "'%s'%s; finish or abort it, the merge is retried next tick", where, "");
	else if (git_repository_index(&idx, w) || git_index_read(idx, 0))
		error = 1; /* sparse or split index: git does it */
	else if (git_index_has_conflicts(idx))
		error = defer(res, err, "the index of '%s' has unresolved conflicts%s; resolve "
			      "them, the merge is retried next tick", where, "");
	else if (!lock || sl_path_exists(lock))
		error = defer(res, err, "the index of '%s' is locked (%s exists; is git running "
			      "there?); the merge is retried next tick", where, lock ? lock : "");
	git_index_free(idx);
	free(lock);
	return error;
}

/*
 * Checkout `to` with baseline `from` in w; collect conflicts into res when
 * given. `only` (may be NULL): just these paths.
 */
static int checkout_paths(git_repository *w, const git_oid *from, const git_oid *to, int dry,
			  struct merge_commit_result *res, const struct merge_paths *only)
{
	git_checkout_options co;
	git_tree *base = NULL, *target = NULL;
	int error;

	git_checkout_options_init(&co, GIT_CHECKOUT_OPTIONS_VERSION);
	co.checkout_strategy = CHECKOUT_STRATEGY | (dry ? GIT_CHECKOUT_DRY_RUN : 0);
	co.progress_cb = dry ? NULL : sl_fault_checkout_progress;
	if (only) {
		if (!only->n)
			return 0; /* nothing left to bring along */
		co.checkout_strategy |= GIT_CHECKOUT_DISABLE_PATHSPEC_MATCH;
		co.paths.strings = only->v;
		co.paths.count = only->n;
	}
	if (res) {
		co.notify_flags = GIT_CHECKOUT_NOTIFY_CONFLICT;
		co.notify_cb = collect_conflict;
		co.notify_payload = res;
	}
	if (!(error = git_tree_lookup(&base, w, from)) &&
	    !(error = git_tree_lookup(&target, w, to))) {
		co.baseline = base;
		error = git_checkout_tree(w, (const git_object *)target, &co);
	}
	git_tree_free(base);
	git_tree_free(target);
	return error;
}

static int checkout(git_repository *w, const git_oid *from, const git_oid *to, int dry,
		    struct merge_commit_result *res)
{
	return checkout_paths(w, from, to, dry, res, NULL);
}

/* The paths that differ between two trees, but those in `skip`. */
int merge__changed_paths(git_repository *w, const git_oid *from, const git_oid *to,
			 const struct merge_paths *skip, struct merge_paths *out)
{
	git_tree *a = NULL, *b = NULL;
	git_diff *diff = NULL;
	size_t i;
	int error;

	if ((error = git_tree_lookup(&a, w, from)) || (error = git_tree_lookup(&b, w, to)) ||
	    (error = git_diff_tree_to_tree(&diff, w, a, b, NULL)))
		goto out;
	for (i = 0; i < git_diff_num_deltas(diff) && !error; i++) {
		const git_diff_delta *d = git_diff_get_delta(diff, i);
		const char *paths[2] = { d->old_file.path, d->new_file.path };
		int k;
		for (k = 0; k < 2 && !error; k++)
			if (paths[k] && !merge_paths_has(skip, paths[k]) &&
			    !merge_paths_has(out, paths[k]))
				error = merge_paths_add(out, paths[k]);
	}
out:
	git_diff_free(diff);
	git_tree_free(a);
	git_tree_free(b);
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

/*
 * The colliding paths all hold the merged content already: check exactly
 * those out by force (nothing to lose: same bytes; it brings the index
 * along), so that the safe checkout that follows finds no collision.
 */
static int adopt_matching(git_repository *w, const git_oid *new_tree, struct merge_paths *p)
{
	git_checkout_options co;
	git_tree *target = NULL;
	git_strarray paths = { p->v, p->n };
	size_t i;
	int error;

	for (i = 0; i < p->n; i++)
		if (!holds_target(w, new_tree, p->v[i]))
			return 0;
	git_checkout_options_init(&co, GIT_CHECKOUT_OPTIONS_VERSION);
	co.checkout_strategy = GIT_CHECKOUT_FORCE | GIT_CHECKOUT_DISABLE_PATHSPEC_MATCH;
	co.paths = paths;
	if ((error = git_tree_lookup(&target, w, new_tree)) == 0)
		error = git_checkout_tree(w, (const git_object *)target, &co);
	git_tree_free(target);
	return error ? error : 1;
}

/* Dry run, then the real checkout; deferred with the colliding paths. */
static int bring_along(git_repository *w, const char *where, const git_oid *old_tree,
		       const git_oid *new_tree, struct merge_commit_result *res, struct sl_err *err)
{
	struct merge_paths rest = MERGE_PATHS_INIT, adopted = MERGE_PATHS_INIT;
	char paths[256];
	int error, dry, adopting = 0;

	for (dry = 1; dry >= 0; dry--) {
		error = checkout_paths(w, old_tree, new_tree, dry, res, adopting ? &rest : NULL);
		if (dry && !adopting && (error == GIT_ECONFLICT || (!error && res->paths.n)) &&
		    adopt_matching(w, new_tree, &res->paths) == 1) {
			/*
			 * a cut-off checkout of this very merge: those paths are ours
			 * and done; bring the others along as usual
			 */
			adopting = 1;
			adopted = res->paths;
			memset(&res->paths, 0, sizeof(res->paths));
			if ((error = merge__changed_paths(w, old_tree, new_tree, &adopted, &rest)) != 0) {
				error = sl_err_git(err, error, "cannot list the merge's paths in '%s'",
						   where);
				goto out;
			}
			dry = 2;
			continue;
		}
		if (error == GIT_ECONFLICT || (!error && res->paths.n)) {
			describe_paths(paths, sizeof(paths), &res->paths);
			error = defer(res, err, "uncommitted changes in '%s' collide with the merge "
				      "(%s); commit or stash them, the merge is retried next tick",
				      where, paths);
			goto out;
		}
		if (error == GIT_ELOCKED) {
			error = defer(res, err, "the index of '%s' is locked%s; the merge is "
				      "retried next tick", where, "");
			goto out;
		}
		if (error) {
			error = sl_err_git(err, error, "cannot update the checkout '%s'", where);
			goto out;
		}
	}
	error = 0;
out:
	merge_paths_release(&rest);
	merge_paths_release(&adopted);
	return error;
}

/*
 * The same with git, for an index libgit2 cannot read: a two-tree
 * `read-tree -m -u OLD NEW` keeps local changes and refuses, touching
 * nothing, when they collide (what push-to-checkout does).
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
			   struct merge_commit_result *res, struct sl_err *err)
{
	struct sl_err gerr = SL_ERR_INIT;

	if (!read_tree(where, old_tree, new_tree, &gerr)) {
		res->checkout_via_git = 1;
		return 0;
	}
	return defer(res, err, "uncommitted changes in '%s' collide with the merge (%.200s); commit "
		     "or stash them, the merge is retried next tick", where, gerr.msg);
}

int merge__checkout_target(git_repository *repo, const char *refname, const git_oid *old_tree,
			   const git_oid *new_tree, char **where, struct merge_commit_result *res,
			   struct sl_err *err)
{
	git_repository *w = NULL;
	int error;

	*where = NULL;
	error = merge__find_checkout(&w, repo, refname, err);
	if (error || !w)
		return error;
	*where = strdup(git_repository_workdir(w));
	if (!*where)
		error = sl_err_set(err, SL_ERROR, "out of memory");
	else if ((error = check_state(w, *where, res, err)) == 1)
		error = bring_along_git(*where, old_tree, new_tree, res, err);
	else if (!error)
		error = bring_along(w, *where, old_tree, new_tree, res, err);
	if (error) {
		free(*where);
		*where = NULL;
	}
	git_repository_free(w);
	return error;
}

int merge__checkout_revert(const char *where, int via_git, const git_oid *merged_tree,
			   const git_oid *old_tree, struct sl_err *err)
{
	git_repository *w = NULL;
	int error;

	if (via_git)
		return read_tree(where, merged_tree, old_tree, err);
	error = git_repository_open(&w, where);
	if (!error)
		error = checkout(w, merged_tree, old_tree, 0, NULL);
	if (error)
		error = sl_err_git(err, error, "the target moved while '%s' was being updated, "
				   "and its files could not be brought back; run 'git status' there",
				   where);
	git_repository_free(w);
	return error;
}
