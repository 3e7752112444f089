#include "core/repo.h"
#include "core/ctx.h"
#include "core/fs.h"
#include "core/lock.h"

#include <git2.h>
#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int sl_repo_find(struct sl_repo *out, const char *dir, struct sl_err *err)
{
	git_repository *repo = NULL, *main = NULL;
	git_buf found = { 0 };
	char abs[PATH_MAX];
	const char *start = dir ? dir : ".";
	int error = 0, rc;

	memset(out, 0, sizeof(*out));
	if (!realpath(start, abs)) {
		error = sl_err_sys(err, errno, "cannot use directory '%s'", start);
		goto out;
	}
	if ((rc = git_repository_discover(&found, abs, 0, NULL)) < 0 ||
	    (rc = git_repository_open(&repo, found.ptr)) < 0) {
		error = sl_err_set(err, SL_ENOTFOUND,
				   "'%s' is not inside a git repository; run sluice in your "
				   "repository or pass -C DIR",
				   abs);
		goto out;
	}
	if (git_repository_is_worktree(repo)) {
		{
			/* open the main work tree through the common dir */
			const char *common = git_repository_commondir(repo);
			if ((rc = git_repository_open(&main, common)) < 0) {
				error = sl_err_git(err, rc, "cannot open the main repository of '%s'", abs);
				goto out;
			}
		}
		git_repository_free(repo);
		repo = main;
		main = NULL;
	}
	if (git_repository_is_bare(repo) || !git_repository_workdir(repo)) {
		error = sl_err_set(err, SL_ENOTFOUND,
				   "'%s' is a bare repository; sluice needs a work tree", abs);
		goto out;
	}
	out->root = sl_path_strip_slash(git_repository_workdir(repo));
	out->gitdir = sl_path_strip_slash(git_repository_commondir(repo));
	out->sysdir = sl_path_join(out->root, ".system");
	out->config_path = sl_path_join(out->sysdir, "config.yaml");
	out->db_path = sl_path_join(out->sysdir, "sluice.db");
	out->lock_path = sl_path_join(out->sysdir, "lock");
	out->runs_dir = sl_path_join(out->sysdir, "runs");
	if (!out->root || !out->gitdir || !out->sysdir || !out->config_path || !out->db_path ||
	    !out->lock_path || !out->runs_dir || sl_fs_guard(out->sysdir) < 0)
		error = sl_err_set(err, SL_ERROR, "out of memory");
out:
	git_buf_dispose(&found);
	git_repository_free(repo);
	git_repository_free(main);
	if (error)
		sl_repo_release(out);
	return error;
}

int sl_repo_require_init(const struct sl_repo *repo, struct sl_err *err)
{
	if (!sl_path_exists(repo->config_path))
		return sl_err_set(err, SL_ENOTFOUND,
				  "'%s' is not set up for sluice (no .system/config.yaml); run "
				  "'sluice init' first",
				  repo->root);
	return 0;
}

char *sl_repo_run_path(const struct sl_repo *repo, const char *run_id, const char *name)
{
	char *out;

	if (asprintf(&out, "%s/%s%s%s", repo->runs_dir, run_id, name ? "/" : "", name ? name : "") < 0)
		return NULL;
	return out;
}

int sl_repo_lock(const struct sl_repo *repo, struct sl_lock *lock, struct sl_err *err)
{
	return sl_lock_acquire(lock, repo->lock_path, 10 * 60 * 1000, err);
}

int sl_repo_lock_run(const struct sl_repo *repo, const char *run_id, int64_t timeout_ms,
		     struct sl_lock *lock, struct sl_err *err)
{
	char *dir = sl_repo_run_path(repo, run_id, NULL);
	char *path = sl_repo_run_path(repo, run_id, "lock");
	int error;

	if (!dir || !path)
		error = sl_err_set(err, SL_ERROR, "out of memory");
	else if ((error = sl_mkdir_p(dir, err)) == 0)
		error = sl_lock_acquire(lock, path, timeout_ms, err);
	free(dir);
	free(path);
	return error;
}

void sl_repo_release(struct sl_repo *repo)
{
	free(repo->root);
	free(repo->gitdir);
	free(repo->sysdir);
	free(repo->config_path);
	free(repo->db_path);
	free(repo->lock_path);
	free(repo->runs_dir);
	memset(repo, 0, sizeof(*repo));
}

int sl_identity_valid(const char *s)
{
	return s && *s && strlen(s) < SL_IDENTITY_MAX && !strpbrk(s, "<>\r\n");
}

/* git's `key` (user.name, user.email) into out (SL_IDENTITY_MAX bytes); 0 when not set. */
static int git_identity(char *out, git_config *cfg, const char *key)
{
	git_buf v = { 0 };
	int ok = cfg && git_config_get_string_buf(&v, cfg, key) == 0 && sl_identity_valid(v.ptr);

	if (ok)
		snprintf(out, SL_IDENTITY_MAX, "%s", v.ptr);
	git_buf_dispose(&v);
	return ok;
}

void sl_repo_identity(struct sl_identity *out, const char *root, const char *name,
		      const char *email)
{
	git_repository *repo = NULL;
	git_config *cfg = NULL;
	int need = !sl_identity_valid(name) || !sl_identity_valid(email);

	if (need && root && git_repository_open(&repo, root) == 0)
		git_repository_config_snapshot(&cfg, repo);
	if (sl_identity_valid(name))
		snprintf(out->name, sizeof(out->name), "%s", name);
	else if (!git_identity(out->name, cfg, "user.name"))
		snprintf(out->name, sizeof(out->name), "%s", SL_IDENTITY_NAME);
	if (sl_identity_valid(email))
		snprintf(out->email, sizeof(out->email), "%s", email);
	else if (!git_identity(out->email, cfg, "user.email"))
		snprintf(out->email, sizeof(out->email), "%s", SL_IDENTITY_EMAIL);
	git_config_free(cfg);
	git_repository_free(repo);
}

const char *sl_ctx_who(const struct sl_ctx *ctx)
{
	const char *u = getenv("USER");
	struct passwd *pw;

	if (ctx->actor)
		return ctx->actor;
	if (u && *u)
		return u;
	pw = getpwuid(getuid());
	return pw ? pw->pw_name : "person";
}
