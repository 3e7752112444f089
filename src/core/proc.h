#ifndef SL_CORE_PROC_H
#define SL_CORE_PROC_H
/*
 * Child processes: an argv array with an explicit environment, never
 * system() (git's run-command.h). The child runs in its own process group so
 * that a timeout can end it and every grandchild: SIGTERM to the group, then
 * SIGKILL to the group after a grace period.
 *
 * Output: the child's stdout and stderr can go to a log file bounded at
 * `log_max` bytes (past that, output is read and dropped, and a line
 * "[sluice: log truncated at N bytes]" ends the file), and/or stdout can be
 * captured into a bounded buffer. Input: nothing (/dev/null), or a buffer
 * written to the child's stdin.
 */
#include <stddef.h>
#include <stdint.h>
#include "core/buf.h"
#include "core/err.h"

struct sl_proc_opts {
	const char *const *argv;     /* argv[0] is looked up in PATH; required */
	const char *const *env_add;  /* "K=V" entries added to (or replacing in) the environment */
	const char *const *env_drop; /* names removed from the environment ("GIT_CONFIG_KEY_*":
	                                every name it begins); also drops an env_add of the name */
	int clear_env;               /* 1: start from an empty environment instead of ours */
	const char *cwd;             /* NULL: ours */
	const void *stdin_data;      /* NULL: /dev/null */
	size_t stdin_len;
	const char *log_path;        /* stdout+stderr appended here (created 0644) */
	size_t log_max;              /* 0: no bound */
	struct sl_buf *out;          /* capture stdout here (bounded by the buffer's max) */
	int out_fd;                  /* > 0: stdout also written whole to this fd (the caller's) */
	struct sl_buf *errout;       /* capture stderr here when no log_path */
	int64_t timeout_ms;          /* 0: none */
	int64_t kill_grace_ms;       /* SIGTERM -> SIGKILL; 0: 2000 */
	const char *owner_file;      /* while the child runs, "<pid>:<start>" of it (and so of
	                                its process group) is kept here (see core/lock.h), so
	                                that a later process can end the group if we die */
	/*
	 * A file the child may write while it runs (a builder's usage report):
	 * after it is closed after writing, or renamed into place (inotify on
	 * its folder), watch() is called, at most every 200 ms. When it returns
	 * nonzero, having put why into `why`, the child has the grace
	 * (kill_grace_ms) to end on its own; if it still runs then, its group is
	 * ended as at a timeout (SIGTERM, then SIGKILL after the grace) and
	 * res->stopped says so. A watch that cannot be set up (no such folder,
	 * inotify's limits) is said in res->watch_failed, and the child runs
	 * unwatched.
	 */
	const char *watch_file;
	int (*watch)(void *arg, char *why, size_t n);
	void *watch_arg;
};

#define SL_PROC_OPTS_INIT { 0 }

struct sl_proc_result {
	int exit_code;       /* the exit status, or 128+signal when signalled */
	int signaled;        /* the signal that ended it, or 0 */
	int timed_out;       /* 1 if we ended it for the timeout */
	int stopped;         /* 1 if we ended it because watch() said so */
	char stop_why[200];  /* what watch() said (also when the child then ended by itself) */
	char watch_failed[SL_ERR_MSG_MAX]; /* why watch_file is not watched, or "" */
	int out_truncated;   /* 1 if `out` hit its maximum (the rest was dropped) */
	size_t out_bytes;    /* every byte the child wrote to stdout, kept or dropped */
	int out_fd_failed;   /* errno of a failed write to out_fd, or 0 */
	int log_truncated;   /* 1 if the log hit log_max */
	int64_t duration_ms;
	int pid;             /* the child's pid (and process group id) */
};

/*
 * Run a child to completion. Returns 0 when it ran (whatever its exit code;
 * look at *res), or an error when it could not be started (SL_ENOTFOUND for
 * a program not found) or waited for.
 */
int sl_proc_run(const struct sl_proc_opts *opts, struct sl_proc_result *res, struct sl_err *err);

/*
 * 1 when the environment entry `entry` ("K=V") has the name `name` ("K", or
 * "K=V" whose name counts); a name ending in '*' ("GIT_CONFIG_KEY_*")
 * matches every name it begins. How env_drop and env_add are matched.
 */
int sl_env_name_matches(const char *entry, const char *name);

/*
 * Secrets in the environment (the reviewer token). unsetenv() only drops a
 * pointer: the bytes stay in the block the kernel shows in
 * /proc/<pid>/environ, readable by any process of the same user (a builder
 * reading its parent's). sl_env_take() returns a copy of `name`'s value (a
 * new string, or NULL when unset or out of memory), overwrites the value's
 * bytes in this process's original environment block in place (every entry
 * of that name), and unsetenv()s it, so that no child inherits it either.
 */
char *sl_env_take(const char *name);

/*
 * Keep this process's memory, /proc/<pid>/environ and /proc/<pid>/fd from
 * other processes of the same user (prctl PR_SET_DUMPABLE 0; no core dumps).
 * For a process that holds a secret. Root can still read them.
 */
void sl_proc_protect(void);

/* Overwrite a secret's bytes and free it (NULL is fine). */
void sl_secret_free(char *s);

/*
 * Hand a secret to a child sluice process without its environment or argv:
 * a pipe holding `data` (at most 60000 bytes), whose read end (*fd) is
 * close-on-exec. The caller clears FD_CLOEXEC in the one forked child that
 * execs the receiver, passes the fd's number, and closes *fd after the fork.
 */
int sl_secret_pipe(const char *data, size_t len, int *fd, struct sl_err *err);

/* Read a secret from such a pipe (*out a new string), and close fd; SL_EINVALID when fd is no pipe. */
int sl_secret_read(int fd, char **out, struct sl_err *err);

/*
 * Describe how a child ended: "exit 0", "exit 3", "killed by SIGKILL", "timed
 * out after 30s", "stopped: <what watch() said>".
 */
void sl_proc_describe(char *out, size_t n, const struct sl_proc_result *res);

/*
 * ---- Children that run beside the caller (a tick's workers) ----
 *
 * sl_proc_run() runs one child to completion. A tick runs several at once:
 * sl_proc_spawn() starts one and returns as soon as it runs (past exec);
 * sl_proc_wait_any() reaps whichever of them ends first. Such a child keeps
 * our environment, stdin, stdout, stderr, signal dispositions and process
 * group (a Ctrl-C or a kill of the group reaches it too); of the other
 * descriptors it keeps those without close-on-exec, and `pass_fd`.
 *
 * Every pid sl_proc_spawn() returns is the caller's to reap with
 * sl_proc_wait_any(), also when the caller gives up for another reason:
 * a caller that returns with children still running leaves them unowned.
 */
struct sl_proc_spawn_opts {
	const char *prog;        /* the file executed: a path, not looked up in PATH */
	const char *const *argv; /* argv[0] is the name ps shows; required */
	int pass_fd;             /* >= 0: a close-on-exec descriptor that the child
	                            alone keeps open across exec (a secret pipe) */
};

#define SL_PROC_SPAWN_OPTS_INIT { NULL, NULL, -1 }

/*
 * Start the child and set *pid (-1 on failure). A fork that fails, and an
 * exec that fails (the child is reaped here), are errors with errno's
 * message: nothing is left to wait for.
 */
int sl_proc_spawn(const struct sl_proc_spawn_opts *o, int *pid, struct sl_err *err);

/*
 * Wait up to timeout_ms (0: only look) for the first of pids[0..n) to end
 * and reap it; entries < 0 are skipped. Returns 1 with *which its index and
 * *res how it ended (exit_code, signaled, pid), 0 when none ended in time
 * (or n has no pid), or an error when one cannot be waited for.
 */
int sl_proc_wait_any(const int *pids, size_t n, int64_t timeout_ms, size_t *which,
		     struct sl_proc_result *res, struct sl_err *err);

/*
 * This binary, by its real name (so that ps shows "sluice", not "exe"), into
 * out (n bytes, at least 16): what a tick execs for its workers. A binary
 * replaced by an upgrade while it runs is "/proc/self/exe", the very file.
 */
int sl_proc_self(char *out, size_t n, struct sl_err *err);

#endif
