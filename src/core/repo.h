#ifndef SL_CORE_REPO_H
#define SL_CORE_REPO_H
/*
 * Where things are for one repository: its work tree root, its git dir, and
 * the service's folder .system/ inside the work tree (DESIGN.md section 3).
 */
#include "core/err.h"

struct sl_repo {
	char *root;        /* absolute path of the main work tree */
	char *gitdir;      /* absolute path of the common .git directory */
	char *sysdir;      /* <root>/.system */
	char *config_path; /* <root>/.system/config.yaml */
	char *db_path;     /* <root>/.system/sluice.db */
	char *lock_path;   /* <root>/.system/lock */
	char *runs_dir;    /* <root>/.system/runs */
};

#define SL_REPO_INIT { 0 }

/*
 * Find the repository containing `dir` (NULL: the current directory). When
 * `dir` is inside a linked worktree, the main work tree is used. A bare
 * repository or a directory outside git is SL_ENOTFOUND with what to do.
 */
int sl_repo_find(struct sl_repo *out, const char *dir, struct sl_err *err);

/* SL_ENOTFOUND ("run 'sluice init'") unless .system/config.yaml exists. */
int sl_repo_require_init(const struct sl_repo *repo, struct sl_err *err);

/* <runs_dir>/<run_id>[/<name>]: a new string, the caller's (free()). */
char *sl_repo_run_path(const struct sl_repo *repo, const char *run_id, const char *name);

void sl_repo_release(struct sl_repo *repo);

#endif
