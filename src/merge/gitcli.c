/*
 * Running the git CLI for the merge module: sl_git_run() (core/git.h: the
 * safe overrides, the environment, a timeout) with a fixed identity.
 */
#include "merge/merge_int.h"
#include "core/git.h"

#include <stdlib.h>
#include <string.h>

const char *merge__git(void)
{
	return sl_git_program();
}

static const char *const id_env[] = {
	"GIT_AUTHOR_NAME=sluice", "GIT_AUTHOR_EMAIL=sluice@localhost",
	"GIT_COMMITTER_NAME=sluice", "GIT_COMMITTER_EMAIL=sluice@localhost",
	"GIT_EDITOR=:", "GIT_MERGE_AUTOEDIT=no", "LC_ALL=C", NULL
};

#define ENV_MAX 24

/* 1 when env (NULL-terminated, or NULL) has an entry of the name of "NAME=value" e. */
static int in_env(const char *const *env, const char *e)
{
	size_t n = strcspn(e, "=");

	for (; env && *env; env++)
		if (!strncmp(*env, e, n) && (*env)[n] == '=')
			return 1;
	return 0;
}

int merge__run_git_env(const char *cwd, const char *const *extra_env, const char *const *args,
		       struct sl_buf *out, int ok_max, int *exit_code, struct sl_err *err)
{
	struct sl_git_opts o = SL_GIT_OPTS_INIT;
	struct sl_git_result res;
	const char *env[ENV_MAX];
	size_t i = 0;
	int error;

	/* extra_env first: an identity it gives replaces the fixed one */
	for (const char *const *e = extra_env; e && *e && i + 1 < ENV_MAX; e++)
		env[i++] = *e;
	for (const char *const *e = id_env; *e && i + 1 < ENV_MAX; e++)
		if (!in_env(extra_env, *e))
			env[i++] = *e;
	env[i] = NULL;
	o.cwd = cwd;
	o.ceiling = 1; /* never a repository above cwd (core/git.h) */
	o.env = env;
	o.out = out;
	o.ok_max = ok_max;
	error = sl_git_run(&o, args, &res, err);
	*exit_code = res.exit_code;
	return error;
}

int merge__run_git(const char *cwd, const char *const *args, struct sl_buf *out, int ok_max,
		   int *exit_code, struct sl_err *err)
{
	return merge__run_git_env(cwd, NULL, args, out, ok_max, exit_code, err);
}
