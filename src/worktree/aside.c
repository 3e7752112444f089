/*
 * A worktree creation killed half way (docs/RELIABILITY.md): libgit2 wrote
 * the entry and the .git file, the checkout did not finish. What it left is
 * seen and set aside, never a file lost.
 */
#include "worktree/worktree.h"
#include "core/fs.h"
#include "core/time.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 1 when a folder holds nothing, or nothing but a .git file: no work in it. */
static int only_git_file(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int empty = d != NULL;

	while (d && (de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") && strcmp(de->d_name, ".git"))
			empty = 0;
	if (d)
		closedir(d);
	return empty;
}

int worktree_half_made(const char *gitdir, const char *name, const char *wt)
{
	char *entry = worktree_entry_path(gitdir, name, NULL);
	int some = sl_path_exists(wt) || (entry && sl_path_exists(entry));

	free(entry);
	return some;
}

int worktree_set_aside(const char *gitdir, const char *name, const char *wt,
		       const char *aside_dir, char **kept, struct sl_err *err)
{
	char *entry = worktree_entry_path(gitdir, name, NULL), *aside = NULL;
	int error = 0;

	*kept = NULL;
	if (!entry)
		return sl_err_set(err, SL_ERROR, "out of memory");
	if (sl_path_exists(wt)) {
		if (!(aside = sl_path_fmt("%s/worktree.broken-%lld", aside_dir,
					  (long long)sl_now_ms())))
			error = sl_err_set(err, SL_ERROR, "out of memory");
		else if (rename(wt, aside) < 0)
			error = sl_err_sys(err, errno, "cannot move the broken worktree '%s' aside",
					   wt);
		else if (only_git_file(aside))
			error = sl_rm_rf(aside, err);
		else /* it may hold a builder's files: keep them */
			*kept = aside, aside = NULL;
	}
	/* the .git/worktrees entry is named after this worktree: nobody else's */
	if (!error)
		error = sl_rm_rf(entry, err);
	free(entry);
	free(aside);
	return error;
}
