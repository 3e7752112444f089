/*
 * What a killed sluice left in the .system folder, seen at the start of
 * every tick with the repository lock held: the temporary files of atomic
 * writes whose process is gone (removed), and worktrees and run/ branches
 * that no run owns (reported, never removed).
 */
#include "system/system.h"
#include "store/store.h"
#include "core/fs.h"
#include "core/log.h"
#include "core/lock.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <git2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * 1 when `name` is "<file>.tmp.<pid>", the temporary file of an atomic write
 * (sl_write_file_atomic, worktree_diff_patch), and that pid is gone.
 */
static int dead_tmp(const char *name)
{
	const char *p = strstr(name, ".tmp."), *d;
	char *end;
	long pid;

	if (!p || p == name)
		return 0;
	while ((d = strstr(p + 1, ".tmp.")) != NULL)
		p = d; /* the last one */
	d = p + 5;
	if (*d < '1' || *d > '9')
		return 0;
	errno = 0;
	pid = strtol(d, &end, 10);
	return !*end && errno == 0 && pid != (long)getpid() && !sl_pid_alive(pid);
}

/*
 * Remove the temporary files of atomic writes a killed sluice left in the
 * folder `name` of the folder `at` (an fd, or AT_FDCWD): a link is never
 * followed, a folder never entered. Returns how many were removed.
 */
static size_t remove_dead_tmp_in(int at, const char *name)
{
	const struct dirent *de;
	struct stat st;
	size_t removed = 0;
	int fd;
	DIR *d;

	if ((fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return 0;
	if (!(d = fdopendir(fd))) {
		close(fd);
		return 0;
	}
	while ((de = readdir(d)) != NULL)
		if (dead_tmp(de->d_name) &&
		    fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISREG(st.st_mode) && unlinkat(fd, de->d_name, 0) == 0)
			removed++;
	closedir(d);
	return removed;
}

void system_remove_dead_tmp(const struct sl_repo *repo)
{
	const struct dirent *de;
	size_t removed = remove_dead_tmp_in(AT_FDCWD, repo->sysdir);
	DIR *d = NULL;
	int fd;

	fd = open(repo->runs_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0 && !(d = fdopendir(fd)))
		close(fd);
	while (d && (de = readdir(d)) != NULL)
		if (de->d_name[0] != '.')
			removed += remove_dead_tmp_in(fd, de->d_name);
	if (d)
		closedir(d);
	if (removed)
		sl_log(SL_LOG_INFO, "removed %zu temporary file%s left by a killed sluice", removed,
		       removed == 1 ? "" : "s");
}

static int run_known(const struct store_run *runs, size_t n, const char *id, const char *branch)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (id && !strcmp(runs[i].id, id))
			return 1;
		if (branch && runs[i].branch_name && !strcmp(runs[i].branch_name, branch))
			return 1;
	}
	return 0;
}

/* Run folders with a worktree that no run owns, each logged. */
static int orphan_worktrees(const struct sl_repo *repo, const struct store_run *runs, size_t n)
{
	struct dirent *de;
	DIR *d;
	int orphans = 0;

	if ((d = opendir(repo->runs_dir)) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		char *wt;
		if (de->d_name[0] == '.' || run_known(runs, n, de->d_name, NULL))
			continue;
		wt = sl_repo_run_path(repo, de->d_name, "worktree");
		if (wt && sl_path_exists(wt)) {
			sl_log(SL_LOG_WARN, "orphan worktree '%s': no run owns it; remove "
					    "it with 'git worktree remove' if unneeded", wt);
			orphans++;
		}
		free(wt);
	}
	closedir(d);
	return orphans;
}

int system_count_orphans(const struct sl_repo *repo, const struct store_run *runs, size_t n)
{
	git_repository *r = NULL;
	git_branch_iterator *it = NULL;
	git_reference *ref = NULL;
	git_branch_t type;
	int orphans = orphan_worktrees(repo, runs, n);

	if (git_repository_open(&r, repo->root) < 0 ||
	    git_branch_iterator_new(&it, r, GIT_BRANCH_LOCAL) < 0)
		goto out;
	while (git_branch_next(&ref, &type, it) == 0) {
		const char *name = NULL;
		if (git_branch_name(&name, ref) == 0 && !strncmp(name, "run/", 4) &&
		    !run_known(runs, n, NULL, name)) {
			sl_log(SL_LOG_WARN, "orphan branch '%s': no run owns it", name);
			orphans++;
		}
		git_reference_free(ref);
	}
out:
	git_branch_iterator_free(it);
	git_repository_free(r);
	return orphans;
}
