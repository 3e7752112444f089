/*
 * A run worktree's entry in the common git directory, as git keeps it
 * (<gitdir>/worktrees/<run>): its HEAD and MERGE_HEAD read, the lock files
 * a dead process of the run left removed.
 */
#include "worktree/worktree_int.h"
#include "core/buf.h"
#include "core/fs.h"
#include "core/git.h"
#include "core/log.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Remove lock files that only a dead sluice process of this run could have left. */
static void remove_lock(const char *path, const char *run_id)
{
	if (unlink(path) == 0)
		sl_log(SL_LOG_WARN, "removed the stale lock '%s' of interrupted run %s", path, run_id);
}

void worktree_remove_stale_locks(const char *gitdir, const char *run_id, const char *branch)
{
	char *dir = worktree_entry_path(gitdir, run_id, NULL), *path;
	struct dirent *de;
	DIR *d;

	if (dir && (d = opendir(dir)) != NULL) {
		while ((de = readdir(d)) != NULL) {
			size_t n = strlen(de->d_name);
			if (n > 5 && !strcmp(de->d_name + n - 5, ".lock") &&
			    (path = sl_path_join(dir, de->d_name))) {
				remove_lock(path, run_id);
				free(path);
			}
		}
		closedir(d);
	}
	free(dir);
	if (branch && (path = sl_path_fmt("%s/refs/heads/%s.lock", gitdir, branch))) {
		remove_lock(path, run_id);
		free(path);
	}
}

int worktree_head(const char *wt, const char *run_id, char out[41], struct sl_err *err)
{
	struct sl_git_opts o = SL_GIT_OPTS_INIT;
	struct sl_buf b = SL_BUF_INIT;
	const char *args[] = { "rev-parse", "--verify", "HEAD", NULL };
	int error;

	sl_buf_init(&b, 128);
	o.cwd = wt;
	o.ceiling = 1;
	o.out = &b;
	if ((error = sl_git_run(&o, args, NULL, err)) == 0) {
		if (strspn(sl_buf_cstr(&b), "0123456789abcdef") != 40)
			error = sl_err_set(err, SL_ERROR, "the worktree of run %s has no HEAD",
					   run_id);
		else
			snprintf(out, 41, "%.40s", sl_buf_cstr(&b));
	}
	sl_buf_release(&b);
	return error;
}

void worktree_merge_head(const char *gitdir, const char *run_id, char out[41])
{
	char *path = worktree_entry_path(gitdir, run_id, "MERGE_HEAD");
	struct sl_buf b = SL_BUF_INIT;
	struct sl_err e = SL_ERR_INIT;

	out[0] = '\0';
	if (path && sl_read_file(&b, path, 128, &e) == 0 &&
	    strspn(sl_buf_cstr(&b), "0123456789abcdef") >= 40)
		snprintf(out, 41, "%.40s", sl_buf_cstr(&b));
	sl_buf_release(&b);
	free(path);
}
