#ifndef SL_CORE_GIT_H
#define SL_CORE_GIT_H
/*
 * Every git process sluice starts (git's CLI, through core/proc.h): one
 * argv prefix of safe overrides, one list of environment variables dropped,
 * one timeout, and one function that runs git and turns its failure into a
 * message: sl_git_run().
 */
#include <stddef.h>
#include <stdint.h>
#include "core/buf.h"
#include "core/err.h"

/* The git CLI sluice runs: $SLUICE_GIT when set, else "git" from PATH. */
const char *sl_git_program(void);

/*
 * Every git process sluice starts is built here, from ONE list: a builder
 * can write the shared .git/config, and git would run what it names. The
 * argv is `git --no-pager -c core.hooksPath=/dev/null -c core.fsmonitor=false
 * ...` (hooks, fsmonitor, pager, gc/maintenance --auto, credential helpers,
 * gpg signing and verifying, submodule recursion, every transport off), then
 * `args`. A new array of borrowed strings, the caller's to free(); NULL when
 * out of memory.
 *
 * What this cannot switch off by name are drivers chosen by attributes
 * (merge=<name>, filter=<name>, diff=<name>): commands that must not run
 * them run in a git directory of sluice's own (merge/crosscheck.c); filters
 * (smudge/clean, LFS) are the user's and run where git itself would run
 * them: checkouts and the snapshot's `git add` (docs/builders.md).
 */
const char **sl_git_argv(const char *const *args);

/* Added to every git's environment: no transport, whatever the config allows; no prompt. */
extern const char *const sl_git_env_add[];

/*
 * env (cap entries, NULL-terminated, strings borrowed) = `ceiling` (from
 * sl_git_ceiling(), or NULL) and sl_git_env_add. Returns the count.
 */
size_t sl_git_env(const char **env, size_t cap, const char *ceiling);

/*
 * THE list of variables dropped from the environment of every git sluice
 * starts (sl_proc_opts.env_drop; a name ending in '*' drops every variable
 * it begins): where the repository is (GIT_DIR & co.), every GIT_CONFIG_*
 * (configuration from the environment: sluice's git reads the files
 * libgit2 1.5 reads, which knows none of these variables, and nothing from
 * a `git -c` or an alias sluice was started from), the programs git would
 * run or talk through (pager, external diff, ssh, askpass), and what git
 * would read in place of the repository's own data. Not
 * GIT_CEILING_DIRECTORIES: callers set it (sl_git_ceiling()), and an entry
 * of env_drop also drops an env_add of that name (see sl_git_env_drop_but).
 * The builder's and the gates' environment is this list too, less the names
 * build/builder.c keeps for them on purpose.
 */
extern const char *const sl_git_env_drop[];

/*
 * out (cap entries, NULL-terminated, strings borrowed) = sl_git_env_drop
 * without the names in `keep` (exact entries of the list, "GIT_SSH" or
 * "GIT_CONFIG_KEY_*") and without every entry that matches a name `add`
 * sets ("K=V"): a dropped name would drop the caller's own entry too.
 * Returns the count.
 */
size_t sl_git_env_drop_but(const char **out, size_t cap, const char *const *keep,
			   const char *const *add);

/*
 * The timeout of every git sluice runs: $SLUICE_GIT_TIMEOUT_MS (for tests)
 * or SL_GIT_TIMEOUT_MS. A git stuck in a program it runs (a filter that
 * hangs) is ended with its process group.
 */
#define SL_GIT_TIMEOUT_MS ((int64_t)10 * 60 * 1000)
int64_t sl_git_timeout_ms(void);

/*
 * "GIT_CEILING_DIRECTORIES=<parent of dir>" into out: git run in `dir`
 * then never looks above it for a repository. For every git sluice runs in
 * a run's worktree: if a builder deleted its .git, git must fail there,
 * not find the main checkout above and act on the user's files. -1 (and
 * out empty) when it does not fit: a cut path would name another folder.
 */
int sl_git_ceiling(char *out, size_t n, const char *dir);

/* How one git is run by sl_git_run(). */
struct sl_git_opts {
	const char *cwd;             /* where git runs; required */
	int ceiling;                 /* 1: never a repository above cwd (sl_git_ceiling()) */
	const char *const *env;      /* more "K=V" entries (an identity, GIT_DIR=...):
	                                never dropped, whatever sl_git_env_drop says */
	const void *stdin_data;      /* NULL: /dev/null */
	size_t stdin_len;
	struct sl_buf *out;          /* stdout captured, bounded by its max: more is SL_ETOOBIG */
	int out_cut_ok;              /* 1: more is dropped, not an error (res->out_bytes) */
	int out_fd;                  /* > 0: stdout written whole to this fd instead */
	int ok_max;                  /* exit codes 0..ok_max are success (1 for `git merge`) */
	int fail_code;               /* the error of an exit above ok_max; 0: SL_ERROR */
	const char *what;            /* the command in messages; NULL: "git <args[0]>" */
	int caller_checks;           /* 1: an exit above ok_max or a timeout is no error
	                                here; the caller words it from *res */
};

#define SL_GIT_OPTS_INIT { 0 }

/* How it ended. */
struct sl_git_result {
	int exit_code;               /* the exit status, or 128+signal */
	int timed_out;               /* 1: ended for the timeout (sl_git_timeout_ms()) */
	size_t out_bytes;            /* every byte git wrote to stdout */
	char how[64];                /* "exit 3", "timed out after 10m" (sl_proc_describe) */
	char errtail[512];           /* the last line of git's stderr, or "no message" */
};

/*
 * Run `git <sl_git_argv() overrides> args` in o->cwd with the environment
 * above (sl_git_env_drop dropped, sl_git_env_add and o->env added), the
 * git timeout, stderr kept (16 KiB) for the message. res may be NULL.
 * Errors: git could not be started (SL_ENOTFOUND when not found); its
 * output did not fit o->out (SL_ETOOBIG); writing to o->out_fd failed; and,
 * unless o->caller_checks, a timeout ("'git add' in '/wt' timed out after
 * 10m: a filter or another program git ran did not end; see the
 * repository's git config") or an exit above ok_max ("'git reset' in '/wt'
 * failed (exit 128): fatal: ...", SL_ELOCKED when a git lock file was in
 * the way, else o->fail_code).
 */
int sl_git_run(const struct sl_git_opts *o, const char *const *args, struct sl_git_result *res,
	       struct sl_err *err);

#endif
