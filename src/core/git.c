/*
 * Every git process sluice starts (git.h): the overrides, the environment,
 * the timeout, and sl_git_run().
 */
#include "core/git.h"
#include "core/proc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GIT_ERR_MAX ((size_t)16 << 10) /* git's stderr kept for a message */
#define GIT_ENV_MAX 32
#define GIT_DROP_MAX 48

static size_t strv_len(const char *const *v)
{
	size_t n = 0;

	while (v && v[n])
		n++;
	return n;
}

const char *sl_git_program(void)
{
	const char *g = getenv("SLUICE_GIT");

	return g && *g ? g : "git";
}

/* What no git sluice starts may run or write, whatever .git/config says (git.h). */
static const char *const git_safe_config[] = {
	"core.hooksPath=/dev/null",      /* hooks */
	"core.fsmonitor=false",          /* a program run on every index refresh */
	"core.pager=cat",
	"gc.auto=0",                     /* no `gc --auto` after commits and merges */
	"maintenance.auto=false",
	"credential.helper=",            /* an empty value clears the list */
	"commit.gpgSign=false",          /* gpg.program is not run */
	"tag.gpgSign=false",
	"merge.verifySignatures=false",
	"log.showSignature=false",
	"submodule.recurse=false",       /* no git run in a submodule */
	"protocol.allow=never",          /* no fetch: no lazy fetch of a partial clone */
	"core.sshCommand=false",
	"core.splitIndex=false",         /* an index libgit2 1.5 reads (no 'link' extension) */
	NULL
};

const char *const sl_git_env_drop[] = {
	/* where the repository is: a hook or alias sluice runs from sets them */
	"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
	"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_COMMON_DIR", "GIT_NAMESPACE", "GIT_PREFIX",
	/* a pre-receive hook's: no ref update in quarantine, the pushed shallow list */
	"GIT_QUARANTINE_PATH", "GIT_SHALLOW_FILE",
	/* configuration: only the files (libgit2 1.5 reads these same ones) */
	"GIT_CONFIG", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_NOSYSTEM",
	"GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_CONFIG_KEY_*", "GIT_CONFIG_VALUE_*",
	/* programs git would run or talk through */
	"GIT_EXTERNAL_DIFF", "GIT_DIFF_OPTS", "GIT_PAGER", "PAGER",
	"GIT_SSH", "GIT_SSH_COMMAND", "GIT_ASKPASS", "SSH_ASKPASS",
	/* what git would read in place of the repository's attributes and objects */
	"GIT_ATTR_SOURCE", "GIT_REPLACE_REF_BASE", NULL
};

const char *const sl_git_env_add[] = {
	"GIT_ALLOW_PROTOCOL=none", /* beats protocol.<name>.allow in any config */
	"GIT_TERMINAL_PROMPT=0",
	NULL
};

size_t sl_git_env(const char **env, size_t cap, const char *ceiling)
{
	size_t n = 0;

	if (ceiling && n + 1 < cap)
		env[n++] = ceiling;
	for (const char *const *e = sl_git_env_add; *e && n + 1 < cap; e++)
		env[n++] = *e;
	env[n] = NULL;
	return n;
}

const char **sl_git_argv(const char *const *args)
{
	size_t n = 0, nsafe = strv_len(git_safe_config), nargs = strv_len(args);
	const char **argv = calloc(2 + 2 * nsafe + nargs + 1, sizeof(*argv));

	if (!argv)
		return NULL;
	argv[n++] = sl_git_program();
	argv[n++] = "--no-pager";
	for (size_t i = 0; i < nsafe; i++) {
		argv[n++] = "-c";
		argv[n++] = git_safe_config[i];
	}
	for (size_t i = 0; i < nargs; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	return argv;
}

int64_t sl_git_timeout_ms(void)
{
	const char *s = getenv("SLUICE_GIT_TIMEOUT_MS");
	char *end;
	long long v;

	if (!s || !*s)
		return SL_GIT_TIMEOUT_MS;
	v = strtoll(s, &end, 10);
	return *end || v <= 0 ? SL_GIT_TIMEOUT_MS : (int64_t)v;
}

int sl_git_ceiling(char *out, size_t n, const char *dir)
{
	const char *slash = strrchr(dir, '/');
	size_t len = slash && slash != dir ? (size_t)(slash - dir) : 1;
	int w = snprintf(out, n, "GIT_CEILING_DIRECTORIES=%.*s", (int)len, dir);

	if (w < 0 || (size_t)w >= n) {
		if (n)
			out[0] = '\0';
		return -1;
	}
	return 0;
}

size_t sl_git_env_drop_but(const char **out, size_t cap, const char *const *keep,
			   const char *const *add)
{
	size_t n = 0;

	for (const char *const *d = sl_git_env_drop; *d && n + 1 < cap; d++) {
		int skip = 0;

		for (const char *const *k = keep; k && *k && !skip; k++)
			skip = !strcmp(*k, *d);
		for (const char *const *a = add; a && *a && !skip; a++)
			skip = sl_env_name_matches(*a, *d);
		if (!skip)
			out[n++] = *d;
	}
	out[n] = NULL;
	return n;
}

/* The git command in args ("add" in "-c x=y add -A"): after the options. */
static const char *command_of(const char *const *args)
{
	size_t i = 0;

	while (args[i] && args[i][0] == '-')
		i += !strcmp(args[i], "-c") && args[i + 1] ? 2 : 1;
	return args[i] ? args[i] : "";
}

/* The last line of git's stderr, trimmed, into out. */
static void last_line(char *out, size_t n, const struct sl_buf *b)
{
	sl_buf_last_line(b, out, n);
	if (!out[0])
		snprintf(out, n, "no message");
}

/* env (GIT_ENV_MAX) = the ceiling, sl_git_env_add, o->env. */
static int git_env(const char **env, char *ceiling, size_t clen, const struct sl_git_opts *o,
		   struct sl_err *err)
{
	size_t n = 0;

	if (o->ceiling) {
		if (sl_git_ceiling(ceiling, clen, o->cwd) < 0)
			return sl_err_set(err, SL_EINVALID, "the path '%.100s...' is too long (%zu "
					  "bytes) to run git in", o->cwd, strlen(o->cwd));
		env[n++] = ceiling;
	}
	for (const char *const *e = sl_git_env_add; *e; e++)
		env[n++] = *e;
	for (const char *const *e = o->env; e && *e; e++) {
		if (n + 1 >= GIT_ENV_MAX)
			return sl_err_set(err, SL_EINVALID, "too many environment entries for git");
		env[n++] = *e;
	}
	env[n] = NULL;
	return 0;
}

/* What sl_proc_run's result means for this git (git.h). */
static int git_check(const struct sl_git_opts *o, const char *what,
		     const struct sl_proc_result *pr, const struct sl_buf *errout,
		     const struct sl_git_result *r, struct sl_err *err)
{
	int locked;

	if (o->out && pr->out_truncated && !o->out_cut_ok)
		return sl_err_set(err, SL_ETOOBIG, "output of '%s' in '%s' is too large", what,
				  o->cwd);
	if (!o->caller_checks && pr->timed_out)
		return sl_err_set(err, SL_ERROR, "'%s' in '%s' %s (a filter or another program git "
				  "ran did not end); see the repository's git config", what, o->cwd,
				  r->how);
	if (!o->caller_checks && (pr->exit_code > o->ok_max || pr->signaled)) {
		/* a lock held by another git (or left by a killed one): try again later */
		locked = strstr(sl_buf_cstr(errout), ".lock': File exists") != NULL;
		return sl_err_set(err, locked ? SL_ELOCKED : pr->signaled || !o->fail_code ?
				  SL_ERROR : o->fail_code, "'%s' in '%s' failed (%s): %s", what,
				  o->cwd, r->how, locked ? "a git lock file exists (another git is "
				  "running there, or one was killed)" : r->errtail);
	}
	if (pr->out_fd_failed)
		return sl_err_sys(err, pr->out_fd_failed, "cannot write the output of '%s' in '%s'",
				  what, o->cwd);
	return 0;
}

int sl_git_run(const struct sl_git_opts *o, const char *const *args, struct sl_git_result *res,
	       struct sl_err *err)
{
	const char **argv = sl_git_argv(args);
	const char *env[GIT_ENV_MAX], *drop[GIT_DROP_MAX];
	char ceiling[4200], what[160];
	struct sl_proc_opts po = SL_PROC_OPTS_INIT;
	struct sl_proc_result pr;
	struct sl_git_result local, *r = res ? res : &local;
	struct sl_buf errout;
	int error;

	memset(r, 0, sizeof(*r));
	sl_buf_init(&errout, GIT_ERR_MAX);
	if (!argv) {
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	if ((error = git_env(env, ceiling, sizeof(ceiling), o, err)) < 0)
		goto out;
	sl_git_env_drop_but(drop, GIT_DROP_MAX, NULL, env);
	snprintf(what, sizeof(what), "%s%s", o->what ? "" : "git ",
		 o->what ? o->what : command_of(args));
	po.argv = argv;
	po.env_add = env;
	po.env_drop = drop;
	po.cwd = o->cwd;
	po.stdin_data = o->stdin_data;
	po.stdin_len = o->stdin_len;
	po.out = o->out;
	po.out_fd = o->out_fd;
	po.errout = &errout;
	po.timeout_ms = sl_git_timeout_ms();
	if ((error = sl_proc_run(&po, &pr, err)) < 0)
		goto out;
	r->exit_code = pr.exit_code;
	r->timed_out = pr.timed_out;
	r->out_bytes = pr.out_bytes;
	sl_proc_describe(r->how, sizeof(r->how), &pr);
	last_line(r->errtail, sizeof(r->errtail), &errout);
	error = git_check(o, what, &pr, &errout, r, err);
out:
	sl_buf_release(&errout);
	free(argv);
	return error;
}
