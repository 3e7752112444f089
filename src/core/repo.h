#ifndef SL_CORE_REPO_H
#define SL_CORE_REPO_H
/*
 * Where things are for one repository: its work tree root, its git dir, and
 * the service's folder .system/ inside the work tree (docs/design.md, The .system folder).
 */
#include "core/err.h"

#include <stdint.h>

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

/*
 * The two locks (docs/design.md, Locks and crash recovery): the
 * repository's (.system/lock, waited for up to 10 minutes) around git
 * mutations of the service, and a run's (.system/runs/<id>/lock, its folder
 * made if missing; timeout_ms 0: try once, SL_ELOCKED when held) held by
 * the one process advancing that run. flocks the kernel drops when the
 * process dies.
 */
struct sl_lock;
int sl_repo_lock(const struct sl_repo *repo, struct sl_lock *lock, struct sl_err *err);
int sl_repo_lock_run(const struct sl_repo *repo, const char *run_id, int64_t timeout_ms,
		     struct sl_lock *lock, struct sl_err *err);

void sl_repo_release(struct sl_repo *repo);

/* The identity on the commits sluice makes (merge, snapshot) when nothing else is found. */
#define SL_IDENTITY_NAME "sluice"
#define SL_IDENTITY_EMAIL "sluice@localhost"
#define SL_IDENTITY_MAX 256

struct sl_identity {
	char name[SL_IDENTITY_MAX];
	char email[SL_IDENTITY_MAX];
};

/*
 * Who sluice's commits are by (docs/config.md, commit.name/commit.email):
 * each of `name` and `email` when given (the config's), else git's
 * user.name/user.email as the repository at `root` sees them (its config,
 * the global, XDG and system files), else sluice <sluice@localhost>. A value
 * git would refuse (empty, '<', '>' or a newline in it) counts as not set.
 * libgit2 must be initialised. Never fails.
 */
void sl_repo_identity(struct sl_identity *out, const char *root, const char *name,
		      const char *email);

/* 1 when `s` can be a name or email of a commit signature (see sl_repo_identity()). */
int sl_identity_valid(const char *s);

#endif
