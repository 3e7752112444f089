#ifndef SL_WORKTREE_INT_H
#define SL_WORKTREE_INT_H
/* Shared by the files of src/worktree/ only. */
#include "worktree/worktree.h"

#include "core/tree_paths.h"

#include <git2.h>

/* 1 when `branch` is a valid local branch name that cannot become an option. */
int worktree_branch_name_valid(const char *branch);

/* `a` and `b` are one path once links and a trailing '/' are resolved (else: the same string). */
int worktree__same_path(const char *a, const char *b);

/* The branch (short name) HEAD of worktree entry `name` is on; NULL if detached or unreadable. */
char *worktree__wt_branch(git_repository *repo, const char *name);

/*
 * Delete local branch `branch` unless a worktree has it checked out: 1
 * deleted, 0 there was none, <0 an error (SL_ERROR with git's message).
 */
/* The first line of a small file, without its newline (a new string); NULL if unreadable. */
char *worktree__read_line(const char *path);

int worktree__delete_branch(git_repository *repo, const char *branch, struct sl_err *err);

/* Open the repository at `root` (no search upwards). */
int worktree__open_repo(git_repository **out, const char *root, struct sl_err *err);

/*
 * Local branch `branch` (*out, the caller's): the existing one, unless it is
 * checked out in a worktree (SL_EEXISTS), or a new one at `base_hex`
 * (*created = 1).
 */
int worktree__get_branch(git_reference **out, int *created, git_repository *repo,
			 const char *branch, const char *base_hex, struct sl_err *err);

/* chmod -R u+w under `path` (a directory, not a link), never through a link. */
int worktree__make_writable(const char *path, struct sl_err *err);

/*
 * 1 when path (relative to the worktree) is one of `excluded` (a
 * NULL-terminated list of paths, a trailing '/' ignored) or below one.
 */
int worktree__is_excluded(const char *path, const char *const *excluded);

/*
 * 1 when the index file at `path` holds nothing that makes git look away
 * from a file: no entry with the assume-valid or extended flags
 * (skip-worktree, intent-to-add) or a conflict stage, no extension but the
 * cache tree, the resolve-undo data or an offset table (no untracked
 * cache, fsmonitor or split index), no path that is absolute or has an
 * empty, ".", ".." or ".git" component, and with `no_gitlinks` no
 * submodule.
 * Read as git's index-format.txt says, for versions 2 and 3; version 4 and
 * whatever does not parse are not plain. Reading the file is ~10 ms at
 * 100,000 entries, a libgit2 index read 50-85.
 */
int worktree__index_plain(const char *path, int no_gitlinks);

/*
 * A path git itself would write in an index: relative, no empty, "." or
 * ".." component, no ".git" (any case). An index is written by whoever
 * holds the worktree, a builder too: a path that climbs out must never
 * reach a chmod or a removal.
 */
int worktree__path_sane(const char *path, size_t len);

/*
 * Each entry of the index file at `path`, when it is plain, given to fn as
 * libgit2 would give it (no extended flags; the path borrowed for the
 * call), in its order: what a libgit2 index read gives in a fifth of its
 * time. -1 when not plain or unreadable (fn not called at all); else 0 or
 * fn's first non-zero return, which stops the walk.
 */
typedef int (*worktree_index_fn)(const git_index_entry *e, void *payload);
int worktree__index_each(const char *path, int no_gitlinks, worktree_index_fn fn, void *payload);

/*
 * Above this size of the index file (256 KiB, about 3,000 entries) the
 * status and the snapshot ask git status, whose walk beats libgit2's by
 * more than a process costs (bench/RESULTS.md, issue 29); below it they
 * stay in this process. A variable for the tests, which try both ways.
 */
extern size_t worktree__git_status_above;
/* 1 when the index of `repo` (a worktree) is larger than that. */
int worktree__large(git_repository *repo);

/*
 * git in the worktree `wt` with every setting that would make it trust a
 * file without looking pinned (checkStat, trustctime, ignoreStat, sparse
 * checkout and index, untracked cache); `in` (NULL: nothing) on its
 * standard input, its standard output into `out` (NULL: dropped).
 */
int worktree__git_pinned(const char *wt, const char *const *args, const struct sl_buf *in,
			 struct sl_buf *out, struct sl_err *err);

/*
 * SL_ECONFLICT when the worktree has changes `git status` would show (but
 * `excluded`); *spotless (when not NULL) 1 when it shows none at all, the
 * excluded paths included.
 */
int worktree__refuse_dirty(const char *path, const char *const *excluded, int *spotless,
			   struct sl_err *err);

/*
 * Record in the worktree entry `entry_dir` the digest of the settings its
 * files were checked out under (info/attributes, the attributes file,
 * core.autocrlf/eol/safecrlf, filter.*): the pool gives the worktree to a
 * later run only while they are the same. -1 when it cannot.
 */
int worktree__checkout_settings_record(git_repository *repo, const char *entry_dir);

/*
 * The lock of `sluice worktree create --path` and `cleanup` (tool_at.c): the
 * repository lock (.system/lock) when sluice is set up in root, else a lock
 * file of sluice's in the common git directory. *lock is the caller's.
 */
struct sl_lock;
int worktree__tool_lock(git_repository *repo, const char *root, struct sl_lock *lock,
			struct sl_err *err);

#endif
