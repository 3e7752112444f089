/*
 * A run folder holds artifacts, which are regular files: what a builder or
 * a process it left behind put there otherwise (a link, a fifo, a folder
 * named like a file sluice writes) is removed, each logged.
 */
#include "artifact/artifact_int.h"
#include "core/fs.h"
#include "core/log.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void sanitize_dir(const char *dir, int top, const char *run_id)
{
	struct sl_err e = SL_ERR_INIT;
	struct dirent *de;
	struct stat st;
	DIR *d = NULL;
	int fd = -1;

	/* never through a link: a run folder replaced by one is not cleaned, it is refused */
	if (sl_open_file(dir, O_RDONLY | O_DIRECTORY, 0, &fd, &e) < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		char *p;
		/* worktree/ and a worktree.broken-* set aside are work trees, not artifacts */
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    (top && !strncmp(de->d_name, "worktree", 8)))
			continue;
		if (!(p = sl_path_join(dir, de->d_name)))
			continue;
		if (lstat(p, &st) == 0) {
			if (S_ISDIR(st.st_mode) && strchr(de->d_name + 1, '.')) {
				/* named like a file sluice writes (gates.json): no rename onto it would work */
				sl_log(SL_LOG_WARN, "run %s: removed the folder '%s' from the run "
						    "folder: artifacts are regular files",
				       run_id, p);
				sl_rm_rf(p, &e);
			} else if (S_ISDIR(st.st_mode)) {
				sanitize_dir(p, 0, run_id);
			} else if (!S_ISREG(st.st_mode)) {
				sl_log(SL_LOG_WARN, "run %s: removed '%s' from the run folder: "
						    "artifacts are regular files",
				       run_id, p);
				unlink(p);
			}
		}
		free(p);
	}
	closedir(d);
}

void artifact_sanitize_run_dir(const char *run_dir, const char *run_id)
{
	sanitize_dir(run_dir, 1, run_id);
}
