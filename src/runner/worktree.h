#ifndef SL_RUNNER_WORKTREE_H
#define SL_RUNNER_WORKTREE_H
/*
 * Run worktrees (DESIGN.md section 6.1): a branch at the recorded base
 * commit and a linked worktree of it, named after the run, at
 * <root>/.system/runs/<run_id>/worktree; the environment contract (shared
 * and copied paths); removal, stale-entry pruning and a listing for the
 * tick's reconciliation.
 *
 * Creation is libgit2's git_worktree_add with an explicit branch and no
 * checkout (it names the .git/worktrees/<name> entry and runs no hook),
 * then `git reset --hard -q` inside the new worktree fills files and index
 * (git's checkout is 1.5-2x faster than libgit2's; bench/RESULTS.md).
 *
 * Locking: the caller holds the .system/lock flock around create, remove
 * and prune_stale: libgit2's worktree creation checks and then creates, so
 * two creators at once may race. Nothing here touches the main checkout,
 * its index or its HEAD.
 *
 * libgit2 must be initialised (git_libgit2_init) by the caller.
 */
#include <stddef.h>
#include "core/buf.h"
#include "core/err.h"

/*
 * 1 when `name` may name a worktree entry (a run id): one path component of
 * [A-Za-z0-9._-], starting with a letter or digit, no "..", not ending in
 * ".lock" or ".".
 */
int runner_worktree_name_valid(const char *name);

/* 1 when `branch` is a valid local branch name that cannot become an option. */
int runner_branch_name_valid(const char *branch);

/*
 * Add a worktree entry `name` at `path` (absolute; its parent is created)
 * on local branch `branch`. A missing branch is created at `base_oid_hex`
 * (40 hex digits; may be NULL only when the branch exists); an existing one
 * is used as it is. Idempotent: when entry `name` already is a valid
 * worktree at `path` on `branch`, nothing is done and *reused is 1. An
 * entry whose directory is gone is pruned first. On failure everything this
 * call made is undone (the entry, the directory, a branch it created).
 * SL_EEXISTS: `path` exists and is not that worktree, or the entry is
 * another worktree, or the branch is checked out elsewhere.
 */
int runner_worktree_add(const char *repo_root, const char *name, const char *path,
			const char *branch, const char *base_oid_hex, int *reused,
			struct sl_err *err);

/*
 * The run worktree: runner_worktree_add(root, run_id,
 * "<root>/.system/runs/<run_id>/worktree", branch_name, base_oid_hex).
 * *out_path (may be NULL) is the caller's, free().
 */
int runner_worktree_create(const char *repo_root, const char *run_id, const char *branch_name,
			   const char *base_oid_hex, char **out_path, int *reused,
			   struct sl_err *err);

/*
 * Remove a worktree named by its entry name (a run id) or by its path.
 * Refuses a worktree with uncommitted or untracked changes (the `excluded`
 * shared/copied paths, NULL-terminated or NULL, do not count) with
 * SL_ECONFLICT, and a locked one, unless `force`. Makes the tree writable
 * (chmod -R u+w), prunes the entry and deletes the directory; then, if
 * `delete_branch`, deletes the branch it had checked out (*branch_deleted,
 * may be NULL, says whether it did). Symlinks in the tree are removed, never
 * followed. SL_ENOTFOUND: no such worktree.
 */
int runner_worktree_remove(const char *repo_root, const char *name_or_path,
			   const char *const *excluded, int force, int delete_branch,
			   int *branch_deleted, struct sl_err *err);

/*
 * Prune the .git/worktrees/<name> entries sluice made whose directory is
 * gone: only entries recorded at <root>/.system/runs/<name>/worktree for
 * which known(name, data) says 1 (a run sluice knows), never a locked one,
 * and only after git's own grace period (gc.worktreePruneExpire, default
 * 3 months, measured on the entry's gitdir file as git does). The user's
 * worktrees are never touched, whatever state they are in.
 */
int runner_worktree_prune_stale(const char *repo_root, int (*known)(const char *name, void *data),
				void *data, size_t *pruned, struct sl_err *err);

struct runner_wt_entry {
	char *name;      /* the .git/worktrees/<name> entry */
	char *path;      /* the worktree directory as recorded */
	char *branch;    /* "run/WO-1-abcdefgh" (no refs/heads/), NULL if detached/unknown */
	int valid;       /* git_worktree_validate passed (directory and gitdir exist) */
	int locked;
	int under_runs;  /* path is under <root>/.system/runs/ */
};

struct runner_branch_entry {
	char *name;       /* "run/..." */
	char oid[41];
	int has_worktree; /* checked out in some worktree */
};

struct runner_wt_list {
	struct runner_wt_entry *wts;
	size_t nwts;
	struct runner_branch_entry *branches; /* every local run/... branch */
	size_t nbranches;
};

#define RUNNER_WT_LIST_INIT { NULL, 0, NULL, 0 }

/* Every linked worktree and every run/... branch; release with runner_wt_list_release(). */
int runner_worktree_list(const char *repo_root, struct runner_wt_list *out, struct sl_err *err);
void runner_wt_list_release(struct runner_wt_list *list);

/*
 * worktree.share: symlink each path (relative, NULL-terminated list) of the
 * main checkout into the worktree at the same relative path, pointing to
 * the absolute source. Refuses (SL_EINVALID) a path that is not
 * safe-relative or whose source resolves outside the repository, and
 * (SL_EEXISTS) one that exists in the worktree as something else; a missing
 * source is skipped with a line in `notes` (may be NULL). A symlink already
 * in place is kept (idempotent).
 */
int runner_worktree_share(const char *repo_root, const char *wt_path, const char *const *paths,
			  struct sl_buf *notes, struct sl_err *err);

/*
 * worktree.copy: copy each path (file or directory, `cp -R -P -p`) of the
 * main checkout into the worktree. Same checks as share; an existing
 * destination is replaced only when it is not tracked (a previous copy).
 */
int runner_worktree_copy(const char *repo_root, const char *wt_path, const char *const *paths,
			 struct sl_buf *notes, struct sl_err *err);

/* Add "/.system/" to <gitdir>/info/exclude unless a line says so already. */
int runner_worktree_exclude_system(const char *repo_root, struct sl_err *err);

/*
 * The slug of a task description (the rp1 tool's rules): lower case,
 * [a-z0-9-] only (anything else separates words), common stop words
 * dropped, words joined by '-', at most 50 characters cut at a word
 * boundary. "Fix the authentication bug in login" ->
 * "fix-authentication-bug-login". Writes at most n-1 bytes and a NUL;
 * returns the length (0: nothing usable in `text`).
 */
size_t runner_slug(const char *text, char *out, size_t n);

#define RUNNER_SLUG_MAX 50

#endif
