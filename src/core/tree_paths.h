#ifndef SL_CORE_TREE_PATHS_H
#define SL_CORE_TREE_PATHS_H
/* The paths between two git trees, at the cost of their difference. */
#include <git2.h>

/*
 * The paths that differ between trees `a` and `b` (either may be NULL, an
 * empty tree), in git's order, each given to `fn`: equal subtrees are
 * skipped by their id, so the cost is that of the difference, not of the
 * tree (libgit2's tree-to-tree diff reads every subtree: 50-70 ms at
 * 100,000 files against well under 1 ms here for a few changed paths). A
 * name that is a file on one side and a folder on the other gives the
 * file's path and every path under the folder; a mode change alone counts.
 * A non-zero return of `fn` stops the walk and is returned; GIT_EBUFS for a
 * path past 4 KiB, a libgit2 error for a tree that cannot be read.
 */
typedef int (*sl_tree_path_fn)(const char *path, void *payload);
int sl_tree_paths(git_repository *repo, const git_tree *a, const git_tree *b, sl_tree_path_fn fn,
		  void *payload);

#endif
