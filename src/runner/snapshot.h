#ifndef SL_RUNNER_SNAPSHOT_H
#define SL_RUNNER_SNAPSHOT_H
/*
 * The state of a run worktree after a builder (DESIGN.md section 6.3 and
 * 6.5): what it left uncommitted, the snapshot commit of it, and the reset
 * to a pre-attempt commit for `worktree: reset`.
 *
 * `excluded` lists (NULL-terminated, or NULL) are the worktree.share and
 * worktree.copy paths: they are never counted, committed or cleaned. A path
 * excludes itself and everything under it.
 *
 * libgit2 must be initialised by the caller.
 */
#include <stddef.h>
#include "core/err.h"

/* The service's identity on snapshot commits. */
#define RUNNER_SNAPSHOT_NAME "sluice"
#define RUNNER_SNAPSHOT_EMAIL "sluice@localhost"

struct runner_changes {
	size_t count;  /* staged, unstaged and untracked (not ignored) paths */
	char *first;   /* the first such path, for messages; NULL when count is 0 */
};

#define RUNNER_CHANGES_INIT { 0, NULL }

/* Count what `git status` would show in the worktree (minus `excluded`). */
int runner_worktree_changes(const char *wt_path, const char *const *excluded,
			    struct runner_changes *out, struct sl_err *err);
void runner_changes_release(struct runner_changes *ch);

/*
 * Snapshot the worktree at `wt_path` after a builder exited: commit every
 * added, modified, deleted and untracked (not ignored) path but `excluded`
 * on the run branch as `sluice <sluice@localhost>` with `message`, and
 * update the worktree's index to match. Paths with a `filter` attribute
 * are staged by `git add -A` (the user's clean filter runs; libgit2 runs
 * none), the rest by libgit2. An embedded repository (a
 * directory with its own .git that the builder made) is left out: it
 * cannot be committed as files.
 *
 * Checks first, each failing with SL_ECONFLICT and the reason: the
 * worktree's .git file is still there and opens as a linked worktree of
 * that directory; HEAD still names refs/heads/<branch_name> (not detached,
 * not another branch); the branch tip is `base_oid_hex` or descends from it.
 *
 * head_hex receives the branch tip afterwards (41 bytes); *committed (may
 * be NULL) is 1 when a snapshot commit was made. When the tip is still the
 * base (the builder changed nothing and committed nothing) the return is
 * SL_ENOTFOUND with "the builder changed nothing" and head_hex filled in:
 * a failure for a build, the expected outcome of a read-only step.
 */
int runner_snapshot(const char *wt_path, const char *branch_name, const char *base_oid_hex,
		    const char *const *excluded, const char *message, char head_hex[41],
		    int *committed, struct sl_err *err);

/*
 * `worktree: reset`: move the run branch and the worktree to `oid_hex` (git
 * reset --hard) and remove untracked, not ignored files (git clean -fd),
 * keeping `excluded` paths.
 */
int runner_worktree_reset(const char *wt_path, const char *oid_hex, const char *const *excluded,
			  struct sl_err *err);

#endif
