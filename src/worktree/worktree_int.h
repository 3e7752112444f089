#ifndef SL_WORKTREE_INT_H
#define SL_WORKTREE_INT_H
/* Shared by the files of src/worktree/ only. */
#include "worktree/worktree.h"

/* 1 when `branch` is a valid local branch name that cannot become an option. */
int worktree_branch_name_valid(const char *branch);

#endif
