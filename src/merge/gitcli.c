/*
 * Running the git CLI for the merge module: argv only, the safe overrides of
 * core/proc.h (hooks, fsmonitor, ... off), a timeout, a fixed identity.
 */
#include "merge/merge.h"
#include "core/proc.h"

#include <stdlib.h>
#include <string.h>

#define GIT_ERR_MAX ((size_t)16 << 10)

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

/* sl_git_env_drop without the names that `add` sets (a drop would remove them too). */
static void drop_list(const char **out, const char *const *add)
{
	size_t n = 0;

	for (const char *const *d = sl_git_env_drop; *d && n + 1 < ENV_MAX * 2; d++) {
		int added = 0;
		size_t len = strlen(*d);

		for (const char *const *a = add; a && *a; a++)
			if (!strncmp(*a, *d, len) && (*a)[len] == '=')
				added = 1;
		if (!added)
			out[n++] = *d;
	}
	out[n] = NULL;
}

/* The last line of git's stderr, for a message. */
static const char *last_line(struct sl_buf *b)
{
	char *s = b->ptr;
	char *nl;

	if (!s || !b->len)
		return "no message";
	while (b->len && (s[b->len - 1] == '\n' || s[b->len - 1] == '\r'))
		s[--b->len] = '\0';
	nl = strrchr(s, '\n');
	return nl ? nl + 1 : s;
}

int merge__run_git_env(const char *cwd, const char *const *extra_env, const char *const *args,
		       struct sl_buf *out, int ok_max, int *exit_code, struct sl_err *err)
{
	const char **argv = sl_git_argv(args);
	const char *env[ENV_MAX], *drop[ENV_MAX * 2];
	char ceiling[4200], how[64];
	size_t i = 0;
	struct sl_proc_opts po = SL_PROC_OPTS_INIT;
	struct sl_proc_result pr;
	struct sl_buf errout;
	int error;

	if (!argv)
		return sl_err_set(err, SL_ERROR, "out of memory");
	sl_buf_init(&errout, GIT_ERR_MAX);
	/* the identity, and never a repository above cwd (core/proc.h) */
	for (const char *const *e = id_env; *e; e++)
		env[i++] = *e;
	for (const char *const *e = sl_git_env_add; *e; e++)
		env[i++] = *e;
	sl_git_ceiling(ceiling, sizeof(ceiling), cwd);
	env[i++] = ceiling;
	for (const char *const *e = extra_env; e && *e && i + 1 < ENV_MAX; e++)
		env[i++] = *e;
	env[i] = NULL;
	drop_list(drop, env);
	po.argv = argv;
	po.env_add = env;
	po.env_drop = drop;
	po.cwd = cwd;
	po.out = out;
	po.errout = &errout;
	po.timeout_ms = sl_git_timeout_ms();
	error = sl_proc_run(&po, &pr, err);
	if (error)
		goto out;
	if (out && pr.out_truncated) {
		error = sl_err_set(err, SL_ETOOBIG, "output of 'git %s' in '%s' is too large",
				   args[0], cwd);
		goto out;
	}
	*exit_code = pr.exit_code;
	if (pr.timed_out) {
		sl_proc_describe(how, sizeof(how), &pr);
		error = sl_err_set(err, SL_ERROR, "'git %s' in '%s' %s (a filter or another "
				   "program git ran did not end); see the repository's git config",
				   args[0], cwd, how);
	} else if (pr.exit_code > ok_max || pr.signaled) {
		/* a lock held by another git (or left by a killed one): try again later */
		int locked = strstr(sl_buf_cstr(&errout), ".lock': File exists") != NULL;
		error = sl_err_set(err, locked ? SL_ELOCKED : SL_ERROR,
				   "'git %s' in '%s' failed (exit %d): %s", args[0], cwd,
				   pr.exit_code, locked ? "a git lock file exists (another git "
				   "is running there, or one was killed)" : last_line(&errout));
	}
out:
	sl_buf_release(&errout);
	free(argv);
	return error;
}

int merge__run_git(const char *cwd, const char *const *args, struct sl_buf *out, int ok_max,
		   int *exit_code, struct sl_err *err)
{
	return merge__run_git_env(cwd, NULL, args, out, ok_max, exit_code, err);
}
