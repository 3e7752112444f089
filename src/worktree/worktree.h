#ifndef SL_WORKTREE_H
#define SL_WORKTREE_H
/*
 * Run worktrees (docs/design.md, The run's worktree and the pool): a branch at the recorded base
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
#include "core/repo.h"

/* The longest worktree entry name. */
#define WORKTREE_NAME_MAX 128

/*
 * 1 when `name` may name a worktree entry (a run id): one path component of
 * [A-Za-z0-9._-], at most WORKTREE_NAME_MAX long, starting with a letter or
 * digit, no "..", not ending in ".lock" or ".".
 */
int worktree_name_valid(const char *name);

/*
 * "<gitdir>/worktrees/<name>" (file NULL) or "<gitdir>/worktrees/<name>/<file>":
 * the entry in which git keeps worktree `name`'s HEAD, index, logs and
 * MERGE_HEAD, in the common git directory `gitdir`. A new string, the
 * caller's to free(); NULL when out of memory.
 */
char *worktree_entry_path(const char *gitdir, const char *name, const char *file);

/*
 * The entry of run `run_id`'s worktree (entry.c). worktree_remove_stale_locks:
 * every *.lock in it (index, HEAD, ...) and the lock of its `branch` (NULL:
 * none) removed, each logged: only the run's processes use them, and the
 * caller knows they are gone. worktree_head: HEAD of the worktree `wt` into
 * out[41] (an error naming the run when it has none). worktree_merge_head:
 * its MERGE_HEAD (a merge under way) into out[41], or "".
 */
void worktree_remove_stale_locks(const char *gitdir, const char *run_id, const char *branch);
int worktree_head(const char *wt, const char *run_id, char out[41], struct sl_err *err);
void worktree_merge_head(const char *gitdir, const char *run_id, char out[41]);

/*
 * 1 when branch `refname` ("refs/heads/...") is the HEAD of the main
 * checkout or of a linked worktree whose folder is there, in the common git
 * directory `gitdir` (git_repository_commondir); 0 otherwise.
 * Read from the HEAD files themselves, so an entry half made or half
 * removed by another process (or junk a builder put in .git/worktrees)
 * checks out nothing: libgit2 1.5's git_branch_is_checked_out answers 1
 * for every branch while one entry cannot be opened (docs/RELIABILITY.md,
 * "The worktree pool").
 */
int worktree_branch_checked_out(const char *gitdir, const char *refname);

/*
 * Remove run `run_id`'s worktree folder (<repo_root>/.system/runs/<id>/worktree)
 * that git no longer knows as a worktree (its .git replaced or gone, its
 * entry broken), and git's entry of it in `gitdir`. Only for final runs
 * whose work is saved on their branch (merged, abandoned, or with
 * diff.patch written). Links are removed, never followed. The caller holds
 * the repository lock.
 */
int worktree_discard(const char *repo_root, const char *gitdir, const char *run_id,
		     struct sl_err *err);

/*
 * A creation of worktree `name` at `wt` killed half way (aside.c).
 * worktree_half_made: 1 when its folder or its entry is there.
 * worktree_set_aside: a folder with nothing but its .git file goes; any
 * other is kept as <aside_dir>/worktree.broken-<ms> (*kept: that path, the
 * caller's; else NULL); the entry is removed.
 */
int worktree_half_made(const char *gitdir, const char *name, const char *wt);
int worktree_set_aside(const char *gitdir, const char *name, const char *wt,
		       const char *aside_dir, char **kept, struct sl_err *err);

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
int worktree_add(const char *repo_root, const char *name, const char *path,
			const char *branch, const char *base_oid_hex, int *reused,
			struct sl_err *err);

/*
 * The run worktree: worktree_add(root, run_id,
 * "<root>/.system/runs/<run_id>/worktree", branch_name, base_oid_hex).
 * *out_path (may be NULL) is the caller's, free().
 */
int worktree_create(const char *repo_root, const char *run_id, const char *branch_name,
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
int worktree_remove(const char *repo_root, const char *name_or_path,
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
int worktree_prune_stale(const char *repo_root, int (*known)(const char *name, void *data),
				void *data, size_t *pruned, struct sl_err *err);

/*
 * The worktree pool (pool.c; docs/design.md, The run's worktree and the pool, docs/config.md
 * worktree.pool): finished runs' worktrees kept under
 * <root>/.system/pool/<slot> (entry <gitdir>/worktrees/<slot>, HEAD
 * detached) and given to new runs, which then rewrite only the files that
 * differ from their base. Every function here wants the .system/lock flock
 * held; each first finishes or undoes what a killed process left half done
 * (worktree_pool_recover()).
 */

/*
 * Put run `run`'s worktree (<root>/.system/runs/<run>/worktree, entry
 * <run>) into the pool instead of removing it: HEAD detached, its branch
 * deleted when `delete_branch` (*branch_deleted, may be NULL, says so).
 * *pooled is 0, and nothing done, when the pool holds `max` slots already
 * (0: no pool), or the worktree is not a plain, unlocked run worktree: the
 * caller then removes it with worktree_remove(). Unless `force`, a worktree
 * with changes (but `excluded`) is refused with SL_ECONFLICT, as
 * worktree_remove() refuses it.
 */
int worktree_pool_put(const char *repo_root, const char *run, size_t max,
		      const char *const *excluded, int force, int delete_branch, int *pooled,
		      int *branch_deleted, struct sl_err *err);

/*
 * Give run `run` the newest slot as its worktree (under the lock, cheap:
 * two renames and small files): at <root>/.system/runs/<run>/worktree,
 * entry <run>, HEAD on local branch `branch` (created at `base_oid_hex`
 * when missing), nothing of the earlier run's entry kept but its index,
 * and marked as not reset yet: worktree_pool_reset() must follow, and
 * worktree_pool_pending() says so until it succeeded. *slot_out (may be
 * NULL; the caller's, free()) names the slot taken, and stays NULL when the
 * pool is empty or the run has a worktree already (whole or in part): the
 * caller then calls worktree_create(). On an error the slot is put back or
 * deleted; the caller may fall back on worktree_create().
 */
int worktree_pool_take(const char *repo_root, const char *run, const char *branch,
		       const char *base_oid_hex, char **slot_out, struct sl_err *err);

/*
 * 1 when run `run`'s worktree was taken from the pool and is not reset yet;
 * `gitdir` is the repository's common git directory.
 */
int worktree_pool_pending(const char *gitdir, const char *run);

/*
 * Make run `run`'s taken worktree what worktree_create() would have made
 * (the run lock is enough: the worktree is the run's): an index of path,
 * id, mode and stat data only (no skip-worktree, assume-unchanged or
 * intent-to-add bit, no untracked cache, fsmonitor or split index), files
 * as a fresh checkout of HEAD (git reset --hard with every stat check on,
 * so only the files that differ are written), untracked files removed, and
 * ignored ones too unless `keep_ignored`. When the slot's put found it
 * clean, only the paths between its commit and HEAD are written and every
 * tracked file is checked against its entry instead (*rewritten, when not
 * NULL, is then their number; -1 after a full reset). Nothing to do when it
 * is not pending. On an error the worktree is deleted (entry and
 * directory): the caller makes a fresh one.
 */
int worktree_pool_reset(const char *repo_root, const char *run, int keep_ignored,
			long *rewritten, struct sl_err *err);

/*
 * Finish a put and undo a take that a killed process left half done (the
 * intent files <root>/.system/pool/<slot>.put/.take), delete slots that are
 * not whole (a directory or entry removed or edited by hand; locked ones
 * are left alone) and entries of slots whose directory is gone.
 */
int worktree_pool_recover(const char *repo_root, struct sl_err *err);

/*
 * Delete the oldest slots until at most `keep` are left (0: every slot),
 * but locked ones (counted in *locked_left, and in the `keep`).
 */
int worktree_pool_trim(const char *repo_root, size_t keep, size_t *removed, size_t *locked_left,
		       struct sl_err *err);

/*
 * At a tick's start: worktree_pool_recover(), then worktree_pool_trim() to
 * `pool` slots (worktree.pool); each failure, and what was removed, logged.
 */
void worktree_pool_tidy(const char *repo_root, int pool);

struct worktree_pool_slot {
	char *name;       /* "_pool-<ms>-<pid>-<n>" */
	char *path;       /* <root>/.system/pool/<name> */
	char commit[41];  /* the detached HEAD; "" if unreadable */
	long long since_ms; /* when it was pooled */
	int sound;        /* linked both ways and detached: it can be taken */
	int locked;       /* git worktree lock: never taken or deleted */
};

/* The slots, oldest first; release with worktree_pool_list_release(). */
int worktree_pool_list(const char *repo_root, struct worktree_pool_slot **out, size_t *n,
		       struct sl_err *err);
void worktree_pool_list_release(struct worktree_pool_slot *v, size_t n);

struct worktree_entry {
	char *name;      /* the .git/worktrees/<name> entry */
	char *path;      /* the worktree directory as recorded */
	char *branch;    /* "run/WO-1-abcdefgh" (no refs/heads/), NULL if detached/unknown */
	int valid;       /* git_worktree_validate passed (directory and gitdir exist) */
	int locked;
	int under_runs;  /* path is under <root>/.system/runs/ */
};

struct worktree_branch_entry {
	char *name;       /* "run/..." */
	char oid[41];
	int has_worktree; /* checked out in some worktree */
};

struct worktree_list {
	struct worktree_entry *wts;
	size_t nwts;
	struct worktree_branch_entry *branches; /* every local run/... branch */
	size_t nbranches;
};

#define WORKTREE_LIST_INIT { NULL, 0, NULL, 0 }

/* Every linked worktree and every run/... branch; release with worktree_list_release(). */
int worktree_list(const char *repo_root, struct worktree_list *out, struct sl_err *err);
void worktree_list_release(struct worktree_list *list);

/*
 * worktree.share: symlink each path (relative, NULL-terminated list) of the
 * main checkout into the worktree at the same relative path, pointing to
 * the absolute source. Refuses (SL_EINVALID) a path that is not
 * safe-relative or whose source resolves outside the repository, and
 * (SL_EEXISTS) one that exists in the worktree as something else; a missing
 * source is skipped with a line in `notes` (may be NULL). A symlink already
 * in place is kept (idempotent).
 */
int worktree_share(const char *repo_root, const char *wt_path, const char *const *paths,
			  struct sl_buf *notes, struct sl_err *err);

/*
 * worktree.copy: copy each path (file or directory, `cp -R -P -p`) of the
 * main checkout into the worktree. Same checks as share; an existing
 * destination is replaced only when it is not tracked (a previous copy).
 */
int worktree_copy(const char *repo_root, const char *wt_path, const char *const *paths,
			 struct sl_buf *notes, struct sl_err *err);

/* Add "/.system/" to <gitdir>/info/exclude unless a line says so already. */
int worktree_exclude_system(const char *repo_root, struct sl_err *err);

/*
 * The slug of a task description (the rp1 tool's rules): lower case,
 * [a-z0-9-] only (anything else separates words), common stop words
 * dropped, words joined by '-', at most 50 characters cut at a word
 * boundary. "Fix the authentication bug in login" ->
 * "fix-authentication-bug-login". Writes at most n-1 bytes and a NUL;
 * returns the length (0: nothing usable in `text`).
 */
size_t worktree_slug(const char *text, char *out, size_t n);

#define WORKTREE_SLUG_MAX 50

/*
 * The state of a run worktree after a builder (docs/design.md, The run's worktree and the
 * pool): what it left uncommitted, the snapshot commit of it, and the reset
 * to a pre-attempt commit for `worktree: reset`.
 *
 * `excluded` lists (NULL-terminated, or NULL) are the worktree.share and
 * worktree.copy paths: they are never counted, committed or cleaned. A path
 * excludes itself and everything under it.
 *
 * libgit2 must be initialised by the caller.
 */

/* The service's identity on snapshot commits when none is given. */
#define WORKTREE_SNAPSHOT_NAME SL_IDENTITY_NAME
#define WORKTREE_SNAPSHOT_EMAIL SL_IDENTITY_EMAIL

struct worktree_changes {
	size_t count;  /* staged, unstaged and untracked (not ignored) paths */
	char *first;   /* the first such path, for messages; NULL when count is 0 */
	size_t all;    /* such paths, the excluded ones too */
};

#define WORKTREE_CHANGES_INIT { 0, NULL, 0 }

/*
 * The tree of `head` (into tree, hex) when the worktree is exactly it: HEAD
 * is head and `git status --ignored -uall` shows nothing. 0, or 1 when not
 * (or unknown). No tree tested twice (train_gating_green()).
 */
int worktree_tree_if_clean(const char *wt_path, const char *head, char tree[41]);

/*
 * 1 when a snapshot of the worktree would commit nothing: HEAD is still on
 * `branch_name` at `head_hex`, git status (staged, unstaged and untracked
 * files) shows nothing but `excluded` paths, and nothing lets it look
 * past a difference (no assume-valid, skip-worktree or intent-to-add bit,
 * no submodule, core.filemode on, no autocrlf). About half of what
 * worktree_snapshot() costs on a large tree (git status against libgit2's
 * add-all and two index passes); 0 when not so or unknown, and on a small
 * tree, where the snapshot costs no more than a git process: take the
 * snapshot.
 */
int worktree_snapshot_unchanged(const char *wt_path, const char *branch_name,
				const char *head_hex, const char *const *excluded);

/* Count what `git status` would show in the worktree (minus `excluded`). */
int worktree_changes(const char *wt_path, const char *const *excluded,
			    struct worktree_changes *out, struct sl_err *err);
void worktree_changes_release(struct worktree_changes *ch);

/*
 * Snapshot the worktree at `wt_path` after a builder exited: commit every
 * added, modified, deleted and untracked (not ignored) path but `excluded`
 * on the run branch as `who` (NULL: sluice <sluice@localhost>;
 * sl_repo_identity() gives the configured one) with `message`, and
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
int worktree_snapshot(const char *wt_path, const char *branch_name, const char *base_oid_hex,
		    const char *const *excluded, const char *message,
		    const struct sl_identity *who, char head_hex[41], int *committed,
		    struct sl_err *err);

/*
 * `worktree: reset`: move the run branch and the worktree to `oid_hex` (git
 * reset --hard) and remove untracked, not ignored files (git clean -fd),
 * keeping `excluded` paths.
 */
/*
 * Check out the commit `oid_hex` detached in the worktree (the merge
 * train's car: branch NULL), or the run branch `branch` again (oid_hex
 * unused): files and index forced to that commit, untracked files that are
 * not ignored removed, `excluded` kept. No branch moves.
 */
int worktree_checkout(const char *wt_path, const char *oid_hex, const char *branch,
		      const char *const *excluded, struct sl_err *err);
/*
 * The message of the worktree's HEAD reflog entries worktree_checkout()
 * writes: the watch of the target (artifact/runset.c) leaves them out, the
 * merge train's cars (built on the target's tip, a person's commits
 * included) are not the run's own commits.
 */
#define WORKTREE_TRAIN_REFLOG "sluice-train: the merge gates on a car"

int worktree_reset(const char *wt_path, const char *oid_hex, const char *const *excluded,
			  struct sl_err *err);

/* ---- the no_write guard of a read-only run (guard.c) ---------------------- */

#define WORKTREE_GUARD_PATHS_MAX 10

struct worktree_guard_opts {
	const char *wt;            /* the run's worktree */
	const char *entry;         /* its entry, <gitdir>/worktrees/<run id> (worktree_entry_path) */
	const char *branch;        /* the run branch (short name) */
	const char *base;          /* the base commit (hex) */
	const char *const *excluded; /* worktree.share and worktree.copy: never a write */
	const char *scratch_index; /* a file of sluice's for the scratch index (removed after) */
	const char *patch_path;    /* where the changes go as a patch, or NULL */
};

struct worktree_guard {
	size_t count;   /* changed paths (staged, unstaged, untracked; committed on a moved branch) */
	char **paths;  /* the first WORKTREE_GUARD_PATHS_MAX of them (NULL-terminated) */
	char head[512]; /* what moved besides files (HEAD, the branch, the .git file), or "" */
};

/*
 * The no_write guard: 0 with out->count == 0 and out->head "" when the
 * worktree is as it was made: HEAD names the run branch, the branch is at
 * the base, the worktree's .git file names its entry, and `git status
 * --porcelain --untracked-files=all` names nothing but `excluded` (ignored
 * files do not count). Else the paths and out->head say what changed and,
 * when o->patch_path, the patch of the changed paths against the base
 * (`git diff --binary`, from a scratch index: the run branch and the
 * worktree's index are not touched) is written there. Errors: git could
 * not run. out: worktree_guard_release().
 */
int worktree_guard_no_write(const struct worktree_guard_opts *o, struct worktree_guard *out,
			    struct sl_err *err);
/* "a.txt, b.txt and 3 more; the run branch 'run/x' (moved to 1234abcd)" */
void worktree_guard_describe(const struct worktree_guard *g, char *out, size_t n);
void worktree_guard_release(struct worktree_guard *g);

/*
 * Put a read-only run's worktree back as it was made: its .git file and
 * entry linked again, HEAD on the run branch, the branch at the base,
 * then worktree_reset() (reset --hard, untracked files removed; ignored
 * files and `excluded` stay).
 */
int worktree_guard_restore(const struct worktree_guard_opts *o, struct sl_err *err);

/*
 * The guard of a run's read-only worktree, with the run's paths: its entry
 * in `gitdir`, the scratch index and the patch in the run folder
 * (attempts/<attempt>/no_write.index, no_write.patch). _check: 0 when the
 * builder wrote nothing; 1 when it wrote, why saying what; < 0: an error.
 * _restore: worktree_guard_restore() of the run's worktree.
 */
struct worktree_guard_run {
	const char *gitdir, *run_id, *wt, *branch, *base;
	const char *const *excluded;
	const char *run_dir;
	int attempt;
};
int worktree_guard_run_check(const struct worktree_guard_run *r, char *why, size_t n,
			     struct sl_err *err);
int worktree_guard_run_restore(const struct worktree_guard_run *r, struct sl_err *err);

/*
 * The worktree's state as a tree object: HEAD's tree with every change of
 * the worktree staged (`git add -A` into the scratch index `index`, which
 * is removed after; ignored files and `excluded` left out). Two calls give
 * the same id when nothing was written in between (a read-only gate).
 */
int worktree_state_tree(const char *wt, const char *const *excluded, const char *index,
			char out[41], struct sl_err *err);
/* What differs between the trees a and b, as worktree_guard_describe() words it. */
int worktree_tree_changes(const char *wt, const char *a, const char *b, char *out, size_t n,
			  struct sl_err *err);

/*
 * A run's diff artifacts (docs/audit.md, What a run folder holds): diff.patch, byte for byte
 * what `git diff --binary --full-index -M <base> <head>` prints, and
 * files_changed.json, the list of changed files.
 *
 * The patch is written by the git CLI itself (libgit2 1.5's patches differ
 * from git's: a TAB after names with spaces, headers of empty files, and
 * the zlib bytes of binary patches), with every option that configuration
 * could change pinned on the command line (prefixes, colour, external diff,
 * textconv, algorithm, context, order file, quoting, rename limit,
 * submodule format), so the bytes depend only on the two commits (and on
 * .gitattributes, as for git). The file list comes from libgit2 with the
 * same rename detection (renames only, 50% similarity, limit 1000).
 */
#include <jansson.h>

struct worktree_file_change {
	char status;    /* 'A' added, 'M' modified, 'D' deleted, 'R' renamed, 'C' copied, 'T' type changed */
	char *path;     /* the path in head (in base for 'D') */
	char *old_path; /* the path in base, for 'R' and 'C'; else NULL */
};

struct worktree_file_changes {
	struct worktree_file_change *v; /* sorted by path (strcmp) */
	size_t n;
};

#define WORKTREE_FILE_CHANGES_INIT { NULL, 0 }

/* The rename limit both the patch and the list use (git's default). */
#define WORKTREE_DIFF_RENAME_LIMIT 1000

/*
 * The files changed from base to head (commit ids, 40 hex digits) in the
 * repository at `repo_path` (a work tree or a git dir). *out is the
 * caller's: worktree_file_changes_release().
 */
int worktree_diff_files(const char *repo_path, const char *base_hex, const char *head_hex,
		      struct worktree_file_changes *out, struct sl_err *err);
void worktree_file_changes_release(struct worktree_file_changes *fc);

/*
 * files_changed.json: [{"path","status","old_path"?}]. A name that is not
 * UTF-8 (git allows any bytes but NUL) is written with each such byte as
 * U+FFFD, and beside it "path_quoted" (or "old_path_quoted"): the name as
 * git quotes it in diff.patch (core.quotePath, without the quotes), which
 * keeps every byte. worktree_file_changes_to_json(): a new reference, the
 * caller's (NULL on out-of-memory); worktree_file_changes_json(): the text
 * as files_changed.json holds it (sl_json_format), a new string, the
 * caller's (free()).
 */
/*
 * A JSON string of n bytes of text that need not be UTF-8 (file contents in
 * a diff, file names, git's messages): each byte that is not part of valid
 * UTF-8, and NUL, becomes U+FFFD. A new reference; NULL on out-of-memory.
 */
json_t *worktree_diff_json_text(const char *s, size_t n);

json_t *worktree_file_changes_to_json(const struct worktree_file_changes *fc);
char *worktree_file_changes_json(const struct worktree_file_changes *fc);

/*
 * Write the patch of base..head to `patch_path` (atomically: a temporary
 * file beside it, then rename) with `git diff` run in `repo_path`.
 */
int worktree_diff_patch(const char *repo_path, const char *base_hex, const char *head_hex,
		      const char *patch_path, struct sl_err *err);

/*
 * A `git diff --stat` of base..head from git objects, with the file list's
 * rename detection: *out is a new reference, the caller's:
 * {"files_changed", "insertions", "deletions",
 *  "files": [{"path", "binary", "insertions", "deletions"}]}.
 */
int worktree_diff_stat(const char *repo_path, const char *base_hex, const char *head_hex,
		     json_t **out, struct sl_err *err);

/*
 * The same patch as worktree_diff_patch(), from git objects only, into `out`
 * (bounded by out->max: the bytes past it are dropped) with its full size
 * in *total. What the reviewer is shown comes from here, never from a file
 * in the run folder, which builders and gates can write.
 */
int worktree_diff_patch_mem(const char *repo_path, const char *base_hex, const char *head_hex,
			  struct sl_buf *out, size_t *total, struct sl_err *err);

/*
 * Both artifacts: diff.patch at `patch_path` and files_changed.json at
 * `files_json_path` (either may be NULL to skip it). When `files` is not
 * NULL it receives the list (the caller's, worktree_file_changes_release()).
 */
int worktree_diff_write(const char *repo_path, const char *base_hex, const char *head_hex,
		      const char *patch_path, const char *files_json_path,
		      struct worktree_file_changes *files, struct sl_err *err);

/*
 * The worktree tool (`sluice worktree`; tool.c): worktrees for agents,
 * outside the run pipeline, at <root>/.system/worktrees/<branch>, or where
 * the user says with --path (tool_at.c, below).
 */
struct worktree_tool_made {
	char *path;    /* <root>/.system/worktrees/<branch> */
	char *branch;  /* <prefix>-<slug>, or with -2, -3, ... when that exists */
	char base[41]; /* the full id of the commit it starts at */
};

#define WORKTREE_TOOL_MADE_INIT { NULL, NULL, { 0 } }

void worktree_tool_made_release(struct worktree_tool_made *m);

/*
 * Create branch <prefix>-<slug> (the first free one of it, -2, -3, ... up
 * to -999) at the commit `base` (a revision) names, and a worktree of it at
 * <root>/.system/worktrees/<branch> (entry name: the branch with '/' as
 * '-'). Adds /.system/ to info/exclude. Nothing in the main checkout
 * changes. *out is the caller's: worktree_tool_made_release(), also on
 * failure. SL_EINVALID: not a valid branch name; SL_EEXISTS: the path
 * exists, or every name is taken.
 */
int worktree_tool_create(const char *root, const char *slug, const char *prefix,
			 const char *base, struct worktree_tool_made *out, struct sl_err *err);

/*
 * Remove the worktree at `path` (absolute, or relative to the current
 * directory; it must lie inside `root`), refusing one with uncommitted or
 * untracked changes unless `force`; its branch too unless `keep_branch`.
 * *abs_out (the caller's, free()) is the absolute path; *branch_deleted
 * whether the branch went.
 */
int worktree_tool_cleanup(const char *root, const char *path, int keep_branch, int force,
			  char **abs_out, int *branch_deleted, struct sl_err *err);

/*
 * Smithers' options (seeds/004; tool_at.c): `sluice worktree create --path
 * PATH [--branch B] [--base REF]`.
 */
struct worktree_tool_at {
	char *path;             /* absolute; the part that existed with links resolved */
	char *branch;           /* the branch checked out; NULL: detached HEAD */
	char base[41];          /* the commit the worktree's HEAD is at */
	int created;            /* 0: that worktree was there already, nothing changed */
	const char *suggestion; /* on failure: what to do (static), or NULL */
};

#define WORKTREE_TOOL_AT_INIT { NULL, NULL, { 0 }, 0, NULL }

void worktree_tool_at_release(struct worktree_tool_at *a);

/*
 * A worktree at `path` (absolute, or relative to the current directory):
 * on local branch `branch` (checked out when it exists, else made at the
 * commit `base` names, default HEAD), or with a detached HEAD at `base`
 * when `branch` is NULL. Idempotent: when `path` already is a linked
 * worktree of this repository on that branch (detached when `branch` is
 * NULL), nothing is done and out->created is 0. Refused (SL_EINVALID): a
 * branch name git would not take or starting with '-', the repository
 * root, a path inside the git directory or named .git, a path inside
 * .system/, a symbolic link; (SL_EEXISTS) a path that exists and is not a
 * worktree of this repository, the worktree there on another branch or
 * detached, a branch checked out in another worktree. The worktree is made
 * by `git worktree add` with hooks off (core/git.h), under a lock (the
 * service's .system/lock, or <gitdir>/sluice-worktree.lock where sluice is
 * not set up): concurrent adds read each other's half-made entries. *out is the caller's:
 * worktree_tool_at_release(), also on failure (out->suggestion says what to
 * do then).
 */
int worktree_tool_create_at(const char *root, const char *path, const char *branch,
			    const char *base, struct worktree_tool_at *out, struct sl_err *err);

/*
 * Before `worktree create`: `dir` (NULL: ".") lies inside a git repository
 * with a work tree, else the seed's "cannot create worktree - not in a git
 * repository" (SL_ENOTFOUND) or "... is a bare repository" (SL_EINVALID),
 * with *suggestion set.
 */
int worktree_tool_repo_check(const char *dir, const char **suggestion, struct sl_err *err);

/*
 * worktree_tool_cleanup() for the CLI: `path` may also lie outside the
 * repository when it is a linked worktree of it (made with --path), and a
 * worktree with changes is refused with the seed's message, "cannot remove
 * worktree '<path>' - uncommitted changes present" (SL_ECONFLICT), with
 * *suggestion (static) set as on other failures that have one.
 */
int worktree_tool_remove(const char *root, const char *path, int keep_branch, int force,
			 char **abs_out, int *branch_deleted, const char **suggestion,
			 struct sl_err *err);

struct worktree_tool_status {
	int is_worktree; /* the rest is NULL when 0 */
	char *path;      /* the linked worktree's directory */
	char *branch;    /* its branch (short name), NULL when HEAD is detached */
	char *main_path; /* the main repository's work tree */
};

/*
 * Whether `dir` (absolute) lies inside a linked worktree. SL_ENOTFOUND: not
 * inside a git repository. *out: worktree_tool_status_release().
 */
int worktree_tool_status(const char *dir, struct worktree_tool_status *out, struct sl_err *err);
void worktree_tool_status_release(struct worktree_tool_status *st);

#endif
