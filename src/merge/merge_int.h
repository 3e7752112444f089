#ifndef SL_MERGE_INT_H
#define SL_MERGE_INT_H
/* Helpers shared by the files of src/merge/ (merge__*), not for other modules. */
#include "merge/merge.h"


/* The repository of the work tree with `refname` checked out (*out NULL when none). */
int merge__find_checkout(git_repository **out, git_repository *repo, const char *refname,
			 struct sl_err *err);
/* The paths that differ between two trees, but those in `skip` (libgit2 error codes). */
int merge__changed_paths(git_repository *w, const git_oid *from, const git_oid *to,
			 const struct merge_paths *skip, struct merge_paths *out);

struct merge__git_tree {
	int clean;                 /* exit 0 */
	git_oid tree;
	struct merge_paths paths;  /* --name-only paths */
	struct sl_buf messages;    /* CONFLICT lines */
	struct merge_paths content; /* paths of a "CONFLICT (contents)" message */
	struct merge_paths binary;  /* paths of a "CONFLICT (binary)" message */
};

/* Run git merge-tree --write-tree -z --name-only in `gitdir`; fills *out. */
int merge__git_merge_tree(const char *gitdir, const git_oid *ours, const git_oid *theirs,
			  struct merge__git_tree *out, struct sl_err *err);
/* Parse its -z output (exposed for tests). */
int merge__parse_merge_tree(const char *data, size_t len, int clean, struct merge__git_tree *out,
			    struct sl_err *err);
void merge__git_tree_release(struct merge__git_tree *t);

/* Resolve a revision to a commit, refusing one that starts with '-'. */
int merge__resolve_commit(git_commit **out, git_repository *repo, const char *rev,
			  struct sl_err *err);

/*
 * merge_preview on open objects; the index of libgit2's merge goes to
 * *idx_out if wanted (NULL unless opts->libgit2_opinion).
 */
int merge__preview_commits(git_repository *repo, const git_commit *ours, const git_commit *theirs,
			   const struct merge_opts *opts, struct merge_result *res,
			   git_index **idx_out, struct sl_err *err);

/*
 * As merge__preview_commits, also handing git merge-tree's own result to
 * *gt (raw "<path>~<side>" names, the paths of content and binary
 * conflicts): the caller's, merge__git_tree_release().
 */
int merge__preview_git(git_repository *repo, const git_commit *ours, const git_commit *theirs,
		       const struct merge_opts *opts, struct merge_result *res,
		       struct merge__git_tree *gt, struct sl_err *err);

/* The git CLI to run ($SLUICE_GIT or "git"). */
const char *merge__git(void);

/*
 * Run git (sl_git_run() of core/git.h: hooks and the programs a config
 * names off; its timeout; GIT_DIR & co. dropped) as identity sluice, with `args`
 * (NULL-terminated, after the program name) in `cwd`; stdout into *out if
 * non-NULL. An exit code above `ok_max` is an error carrying git's last
 * stderr line; otherwise *exit_code tells.
 */
int merge__run_git(const char *cwd, const char *const *args, struct sl_buf *out, int ok_max,
		   int *exit_code, struct sl_err *err);
/* The same with `extra_env` ("K=V", NULL-terminated) added to git's environment. */
int merge__run_git_env(const char *cwd, const char *const *extra_env, const char *const *args,
		       struct sl_buf *out, int ok_max, int *exit_code, struct sl_err *err);

/*
 * Bring the work tree that has `refname` checked out (if any) from
 * `old_tree` to `new_tree`: see merge_commit(). *where gets the work tree
 * path (the caller's, free()) or NULL when none has the branch.
 * SL_ETRANSIENT with res->paths/reason when it cannot.
 */
int merge__checkout_target(git_repository *repo, const char *refname, const git_oid *old_tree,
			   const git_oid *new_tree, const char *journal, char **where,
			   struct merge_commit_result *res, struct sl_err *err);

/* Append "lock <dev> <ino> <mtime s> <mtime ns> <path>" of the lock open as `fd` to `journal`. */
int merge__journal_lock(const char *journal, const char *path, int fd, struct sl_err *err);

/*
 * Append "write" to `journal` (fsync'd) right before the checkout writes
 * its first file: a merge that died before it wrote nothing, and its
 * recovery touches nothing (a user's file is never taken for its work).
 */
int merge__journal_write_mark(const char *journal, struct sl_err *err);

/* Undo merge__checkout_target in the work tree at `where`. */
int merge__checkout_revert(const char *where, int via_git, const git_oid *merged_tree,
			   const git_oid *old_tree, const char *journal,
			   const struct merge_paths *kept, struct sl_err *err);

/*
 * Add the lines of `git blame --porcelain` output (of `path`) to the
 * landings *v (*n of them): one per commit, in the order first seen, with
 * its author, subject, first line and count of lines; boundary commits (the
 * lines older than the range) are skipped. 0, or -1 out of memory.
 */
int merge__parse_blame(const char *data, size_t len, const char *path,
		       struct merge_landing **v, size_t *n);

#endif
