/* Running the git CLI for the merge module: argv only, hooks off, a fixed identity. */
#include "merge/merge.h"
#include "core/proc.h"

#include <stdlib.h>
#include <string.h>

#define GIT_ERR_MAX ((size_t)16 << 10)

const char *merge__git(void)
{
	return sl_git_program();
}

/* Keep the caller's GIT_DIR & co. from pointing git somewhere else. */
static const char *const drop_env[] = {
	"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
	"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_COMMON_DIR", "GIT_NAMESPACE",
	"GIT_CEILING_DIRECTORIES", "GIT_PREFIX", NULL
};

static const char *const id_env[] = {
	"GIT_AUTHOR_NAME=sluice", "GIT_AUTHOR_EMAIL=sluice@localhost",
	"GIT_COMMITTER_NAME=sluice", "GIT_COMMITTER_EMAIL=sluice@localhost",
	"GIT_TERMINAL_PROMPT=0", "GIT_EDITOR=:", "GIT_MERGE_AUTOEDIT=no", "LC_ALL=C", NULL
};

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

int merge__run_git(const char *cwd, const char *const *args, struct sl_buf *out, int ok_max,
		   int *exit_code, struct sl_err *err)
{
	const char **argv;
	const char *env[16];
	char ceiling[4200];
	size_t i;
	struct sl_proc_opts po = SL_PROC_OPTS_INIT;
	struct sl_proc_result pr;
	struct sl_buf errout;
	size_t n = 0;
	int error;

	while (args[n])
		n++;
	if (!(argv = calloc(n + 6, sizeof(*argv))))
		return sl_err_set(err, SL_ERROR, "out of memory");
	sl_buf_init(&errout, GIT_ERR_MAX);
	n = 0;
	argv[n++] = merge__git();
	argv[n++] = "-c";
	argv[n++] = "core.hooksPath=/dev/null";
	argv[n++] = "-c"; /* a builder may have set it in the shared config: run nothing */
	argv[n++] = "core.fsmonitor=false";
	while (*args)
		argv[n++] = *args++;
	argv[n] = NULL;
	po.argv = argv;
	/* the identity, and never a repository above cwd (core/proc.h) */
	for (i = 0; id_env[i]; i++)
		env[i] = id_env[i];
	sl_git_ceiling(ceiling, sizeof(ceiling), cwd);
	env[i++] = ceiling;
	env[i] = NULL;
	po.env_add = env;
	po.env_drop = drop_env;
	po.cwd = cwd;
	po.out = out;
	po.errout = &errout;
	error = sl_proc_run(&po, &pr, err);
	if (error)
		goto out;
	if (out && pr.out_truncated) {
		error = sl_err_set(err, SL_ETOOBIG, "output of 'git %s' in '%s' is too large",
				   argv[5], cwd);
		goto out;
	}
	*exit_code = pr.exit_code;
	if (pr.exit_code > ok_max || pr.signaled) {
		/* a lock held by another git (or left by a killed one): try again later */
		int locked = strstr(sl_buf_cstr(&errout), ".lock': File exists") != NULL;
		error = sl_err_set(err, locked ? SL_ELOCKED : SL_ERROR,
				   "'git %s' in '%s' failed (exit %d): %s", argv[5], cwd,
				   pr.exit_code, locked ? "a git lock file exists (another git "
				   "is running there, or one was killed)" : last_line(&errout));
	}
out:
	sl_buf_release(&errout);
	free(argv);
	return error;
}
